/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: PMIx_Log. A message for stdout or stderr (PMIX_LOG_STDOUT, PMIX_LOG_STDERR) is
 * written into the asking process's own stdout or stderr, so it reaches herdrun as that process's
 * output does: tagged as its lines are (--tag-output), in --output-filename's files, in order
 * with what the process wrote before. A message for syslog (PMIX_LOG_SYSLOG, _LOCAL_SYSLOG,
 * _GLOBAL_SYSLOG) goes to this node's syslog, at PMIX_LOG_SYSLOG_PRI (default LOG_ERR). With
 * PMIX_LOG_ONCE only the first channel that takes the message gets it. Other channels (email,
 * job record, global datastore) are not offered: PMIX_ERR_NOT_SUPPORTED when none was served. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "orte/mca/wireup/pmix/wireup_pmix.h"

/* Append text (and a newline when it has none) to the process's descriptor fd, through its
 * /proc entry: the same pipe its own writes go to. Never blocks: a full pipe refuses it. */
static int write_to_process(pid_t pid, int fd, const char *text)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long) pid, fd);
    int out = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (out < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    size_t len = strlen(text);
    bool newline = 0 == len || '\n' != text[len - 1];
    char *line = malloc(len + 2);
    if (NULL == line) {
        close(out);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(line, text, len);
    if (newline) {
        line[len++] = '\n';
    }
    /* one write: a line up to PIPE_BUF is never split among the process's own */
    ssize_t n = write(out, line, len);
    int saved = errno;
    free(line);
    close(out);
    errno = saved;
    return (n == (ssize_t) len) ? HERD_SUCCESS : HERD_ERR_IN_ERRNO;
}

/* One channel of a log: PMIX_SUCCESS, PMIX_ERR_NOT_SUPPORTED (not a channel herd offers) or why
 * it failed. */
static pmix_status_t log_one(wireup_pmix_call_t *c, const pmix_info_t *entry, int priority)
{
    bool to_stderr = PMIX_CHECK_KEY(entry, PMIX_LOG_STDERR);
    bool to_stdout = PMIX_CHECK_KEY(entry, PMIX_LOG_STDOUT);
    bool to_syslog = PMIX_CHECK_KEY(entry, PMIX_LOG_SYSLOG) ||
                     PMIX_CHECK_KEY(entry, PMIX_LOG_LOCAL_SYSLOG) ||
                     PMIX_CHECK_KEY(entry, PMIX_LOG_GLOBAL_SYSLOG);
    if (!to_stderr && !to_stdout && !to_syslog) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (PMIX_STRING != entry->value.type || NULL == entry->value.data.string) {
        return PMIX_ERR_BAD_PARAM;
    }
    const char *text = entry->value.data.string;
    wireup_pmix_ns_t *pns = wireup_pmix_find_ns(c->st, c->proc.nspace);
    wireup_pmix_local_t *local = (NULL != pns) ? wireup_pmix_find_local(pns, c->proc.rank) : NULL;
    if (to_syslog) {
        /* without the trailing newline: syslog makes one record of it */
        int len = (int) strcspn(text, "\n");
        syslog(priority, "herd job %s rank %u: %.*s", NULL != pns ? pns->ns->jobid : c->proc.nspace,
               c->proc.rank, len, text);
        return PMIX_SUCCESS;
    }
    if (NULL == local || local->pid <= 0 || local->exited) {
        return PMIX_ERR_NOT_FOUND;
    }
    int rc = write_to_process(local->pid, to_stderr ? 2 : 1, text);
    if (HERD_SUCCESS != rc) {
        opal_output_verbose(1, wireup_pmix_output(),
                            "wireup pmix: cannot write %s:%u's PMIx_Log message to its %s: %s",
                            c->proc.nspace, c->proc.rank, to_stderr ? "stderr" : "stdout",
                            strerror(errno));
        return EAGAIN == errno ? PMIX_ERR_OUT_OF_RESOURCE : PMIX_ERROR;
    }
    return PMIX_SUCCESS;
}

static void run_log(wireup_pmix_call_t *c)
{
    int priority = LOG_ERR;
    bool once = false;
    for (size_t i = 0; i < c->ndirs; ++i) {
        if (PMIX_CHECK_KEY(&c->directives[i], PMIX_LOG_ONCE)) {
            once = PMIX_INFO_TRUE(&c->directives[i]);
        } else if (PMIX_CHECK_KEY(&c->directives[i], PMIX_LOG_SYSLOG_PRI) &&
                   PMIX_INT == c->directives[i].value.type) {
            priority = c->directives[i].value.data.integer;
        }
    }
    size_t served = 0, failed = 0;
    pmix_status_t first_failure = PMIX_ERR_NOT_SUPPORTED;
    for (size_t i = 0; i < c->ninfo && !(once && served > 0); ++i) {
        pmix_status_t rc = log_one(c, &c->info[i], priority);
        if (PMIX_SUCCESS == rc) {
            served++;
        } else if (PMIX_ERR_NOT_SUPPORTED != rc && 0 == failed++) {
            first_failure = rc;
        }
    }
    wireup_pmix_answer_op(c, 0 == served             ? first_failure
                             : (0 == failed || once) ? PMIX_SUCCESS
                                                     : PMIX_ERR_PARTIAL_SUCCESS);
    wireup_pmix_call_free(c);
}

void wireup_pmix_up_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                        const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                        void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(client, run_log, wireup_pmix_refuse_op);
    if (NULL == c) {
        if (NULL != cbfunc) {
            cbfunc(PMIX_ERR_UNREACH, cbdata);
        }
        return;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    c->ninfo = ndata;
    c->ndirs = ndirs;
    if (!wireup_pmix_copy_info(data, ndata, &c->info) ||
        !wireup_pmix_copy_info(directives, ndirs, &c->directives)) {
        c->ninfo = NULL != c->info ? ndata : 0;
        c->ndirs = 0;
        wireup_pmix_call_free(c);
        if (NULL != cbfunc) {
            cbfunc(PMIX_ERR_OUT_OF_RESOURCE, cbdata);
        }
        return;
    }
    /* a queue failure freed the call: answer here */
    if (PMIX_SUCCESS != wireup_pmix_call_queue(c) && NULL != cbfunc) {
        cbfunc(PMIX_ERR_OUT_OF_RESOURCE, cbdata);
    }
}
