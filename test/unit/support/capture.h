/* SPDX-License-Identifier: BSD-3-Clause */
/* Capturing stderr in unit tests, to check the messages users would see. */
#ifndef HERD_TEST_CAPTURE_H
#define HERD_TEST_CAPTURE_H

#include <stdio.h>
#include <string.h>

typedef struct {
    FILE *file;   /* where stderr goes meanwhile */
    int saved_fd; /* the real stderr */
} herd_test_capture_t;

/* Send stderr to a temporary file until herd_test_capture_stop(). Make assertions only after
 * stopping, so a failure message is never swallowed. */
void herd_test_capture_start(herd_test_capture_t *capture);
/* Restore stderr; returns what was written meanwhile (caller frees). */
char *herd_test_capture_stop(herd_test_capture_t *capture);

/* Fails the test, showing both, when text does not contain needle. */
#define assert_contains(text, needle)                                                              \
    do {                                                                                           \
        if (NULL == strstr((text), (needle))) {                                                    \
            fail_msg("expected \"%s\" in:\n%s", (needle), (text));                                 \
        }                                                                                          \
    } while (0)

#endif
