/* Capturing stderr in unit tests, to check the messages users would see. */
#ifndef HERD_TEST_CAPTURE_H
#define HERD_TEST_CAPTURE_H

#include <stdio.h>

typedef struct {
    FILE *file;   /* where stderr goes meanwhile */
    int saved_fd; /* the real stderr */
} herd_test_capture_t;

/* Send stderr to a temporary file until herd_test_capture_stop(). Make assertions only after
 * stopping, so a failure message is never swallowed. */
void herd_test_capture_start(herd_test_capture_t *capture);
/* Restore stderr; returns what was written meanwhile (caller frees). */
char *herd_test_capture_stop(herd_test_capture_t *capture);

#endif
