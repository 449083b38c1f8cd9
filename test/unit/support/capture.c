/* SPDX-License-Identifier: BSD-3-Clause */
/* Capturing stderr in unit tests: a temporary file stands in for fd 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <unistd.h>

#include "support/capture.h"

void herd_test_capture_start(herd_test_capture_t *capture)
{
    fflush(stderr);
    capture->file = tmpfile();
    assert_non_null(capture->file);
    capture->saved_fd = dup(STDERR_FILENO);
    assert_true(capture->saved_fd >= 0);
    assert_true(dup2(fileno(capture->file), STDERR_FILENO) >= 0);
}

char *herd_test_capture_stop(herd_test_capture_t *capture)
{
    fflush(stderr);
    assert_true(dup2(capture->saved_fd, STDERR_FILENO) >= 0);
    close(capture->saved_fd);
    capture->saved_fd = -1;
    fseek(capture->file, 0, SEEK_END);
    long size = ftell(capture->file);
    rewind(capture->file);
    char *text = calloc(1, (size_t) size + 1);
    assert_non_null(text);
    assert_int_equal((size_t) size, fread(text, 1, (size_t) size, capture->file));
    fclose(capture->file);
    capture->file = NULL;
    return text;
}
