/* SPDX-License-Identifier: BSD-3-Clause */
/* A failure in words, for the messages that tell a user why their job ended. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>

#include "orte/mca/errmgr/errmgr.h"

char *orte_errmgr_failure_describe(const orte_errmgr_failure_t *f, char *text, size_t size)
{
    if (NULL == text || 0 == size) {
        return text;
    }
    if (NULL == f) {
        text[0] = '\0';
        return text;
    }
    switch (f->event) {
    case ORTE_ERRMGR_PROC_FAILED:
        if (f->signaled) {
            snprintf(text, size, "was killed by signal %d (%s)", f->signo, strsignal(f->signo));
        } else {
            snprintf(text, size, "exited with status %d", f->exit_code);
        }
        return text;
    case ORTE_ERRMGR_PROC_START_FAILED:
        /* odls already reported which step failed and why, naming the program and node */
        snprintf(text, size, "could not be started");
        return text;
    case ORTE_ERRMGR_DAEMON_LOST:
        snprintf(text, size, "was lost");
        return text;
    case ORTE_ERRMGR_PROC_LOST:
        snprintf(text, size, "was lost with its node");
        return text;
    }
    /* an event added after this was written still gets a sentence, and its number for a bug
     * report */
    snprintf(text, size, "failed (errmgr event %d)", (int) f->event);
    return text;
}
