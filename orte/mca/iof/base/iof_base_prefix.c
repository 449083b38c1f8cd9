/* SPDX-License-Identifier: BSD-3-Clause */
/* What --tag-output and --timestamp-output put before a line, and --stdin's values. */
#include "herd_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orte/mca/iof/iof.h"

size_t orte_iof_base_prefix(char *text, size_t size, uint32_t flags, uint32_t jobseq,
                            uint32_t rank, int stream, uint64_t when_ns)
{
    size_t used = 0;
    if (0 == size) {
        return 0;
    }
    text[0] = '\0';
    if (flags & ORTE_IOF_FLAG_TIMESTAMP) {
        time_t secs = (time_t) (when_ns / 1000000000u);
        struct tm tm;
        char day[32];
        localtime_r(&secs, &tm);
        strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
        int n = snprintf(text, size, "[%s.%06u] ", day,
                         (unsigned) ((when_ns % 1000000000u) / 1000u));
        used = (n < 0) ? 0 : ((size_t) n < size ? (size_t) n : size - 1);
    }
    if ((flags & ORTE_IOF_FLAG_TAG) && used + 1 < size) {
        int n = snprintf(text + used, size - used, "[%u,%u]<%s>: ", jobseq, rank,
                         ORTE_IOF_STDERR == stream ? "stderr" : "stdout");
        size_t room = size - used;
        used += (n < 0) ? 0 : ((size_t) n < room ? (size_t) n : room - 1);
    }
    return used;
}

bool orte_iof_base_stdin_wanted(int32_t target, uint32_t rank)
{
    return ORTE_IOF_RANK_DAEMON != rank &&
           (ORTE_IOF_STDIN_ALL == target || (target >= 0 && (uint32_t) target == rank));
}

int orte_iof_base_parse_stdin(const char *text, int32_t *target)
{
    if (NULL == text || '\0' == text[0]) {
        return HERD_ERR_BAD_PARAM;
    }
    if (0 == strcmp(text, "all")) {
        *target = ORTE_IOF_STDIN_ALL;
        return HERD_SUCCESS;
    }
    if (0 == strcmp(text, "none")) {
        *target = ORTE_IOF_STDIN_NONE;
        return HERD_SUCCESS;
    }
    for (const char *c = text; '\0' != *c; ++c) {
        if (*c < '0' || *c > '9') {
            return HERD_ERR_BAD_PARAM;
        }
    }
    errno = 0;
    unsigned long value = strtoul(text, NULL, 10);
    if (0 != errno || value > INT32_MAX) {
        return HERD_ERR_BAD_PARAM;
    }
    *target = (int32_t) value;
    return HERD_SUCCESS;
}
