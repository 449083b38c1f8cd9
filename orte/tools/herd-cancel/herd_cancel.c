/* SPDX-License-Identifier: BSD-3-Clause */
/* herd-cancel: end jobs of a persistent DVM (herd-dvm), or send their processes a signal. The
 * root checks that the asking user owns each job and passes the signal to the job's herdrun,
 * which ends the job as its error manager ends one (SIGTERM, then SIGKILL after the grace),
 * says so, and exits with 128 + the signal. */
#include "herd_config.h"

#include <ctype.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "opal/util/cmd_line.h"
#include "opal/util/fd.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_tool.h"

static const char *help_file = "help-herd-cancel.txt";

static const opal_cmd_line_option_t options[] = {
    {"dvm-uri", 0, 1, "FILE", "The contact file of the DVM (as herd-dvm --report-uri wrote it)"},
    {"signal", 's', 1, "SIG",
     "Send SIG (a name such as TERM, KILL, USR1, or a number) instead of ending the job with "
     "TERM; TERM, INT, HUP and KILL end it, others only reach its processes"},
    {"verbose", 'v', 0, NULL, "Say which jobs were sent the signal"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, 0, 0, NULL, NULL},
};

static const struct {
    const char *name;
    int signo;
} signals[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
               {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
               {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"ALRM", SIGALRM}, {"ABRT", SIGABRT}};

/* "TERM", "SIGTERM", "term" or "15"; 0 when it is none. */
static int parse_signal(const char *text)
{
    char *end = NULL;
    if (isdigit((unsigned char) text[0])) {
        long n = strtol(text, &end, 10);
        return ('\0' == *end && n > 0 && n < 65) ? (int) n : 0;
    }
    if (0 == strncasecmp(text, "SIG", 3)) {
        text += 3;
    }
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); ++i) {
        if (0 == strcasecmp(text, signals[i].name)) {
            return signals[i].signo;
        }
    }
    return 0;
}

static int cancel_all(const char *uri, char **jobs, int signo, bool verbose)
{
    orte_dvm_conn_t *conn = NULL;
    orte_dvm_ps_t *ps = NULL;
    char why[512];
    int rc = orte_dvm_conn_open(uri, 10000, &conn, why, sizeof(why));
    if (HERD_ERR_NOT_FOUND == rc) {
        opal_show_help(help_file, "contact-unreadable", true, uri, why);
        return 1;
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "dvm-unreachable", true, uri, why);
        return 1;
    }
    int status = 0;
    if (HERD_SUCCESS != (rc = orte_dvm_conn_ps(conn, &ps))) {
        opal_show_help(help_file, "dvm-no-answer", true, uri, opal_strerror(rc));
        orte_dvm_conn_close(conn);
        return 1;
    }
    for (int i = 0; NULL != jobs[i]; ++i) {
        const orte_dvm_ps_job_t *job = orte_dvm_ps_find_job(ps, jobs[i]);
        int answer = HERD_ERR_NOT_FOUND;
        uint32_t owner = 0;
        if (NULL != job) {
            rc = orte_dvm_conn_cancel(conn, job->jobid, signo, &answer, &owner);
            if (HERD_SUCCESS != rc) {
                opal_show_help(help_file, "dvm-no-answer", true, uri, opal_strerror(rc));
                status = 1;
                break;
            }
        }
        if (HERD_SUCCESS == answer) {
            if (verbose) {
                printf("herd-cancel: job %s: sent %s\n", job->jobid, strsignal(signo));
            }
            continue;
        }
        status = 1;
        if (HERD_ERR_AUTH == answer) {
            struct passwd *pw = getpwuid((uid_t) owner);
            char uid_text[16];
            snprintf(uid_text, sizeof(uid_text), "%u", owner);
            opal_show_help(help_file, "not-owner", true, job->jobid,
                           NULL != pw ? pw->pw_name : uid_text);
        } else {
            opal_show_help(help_file, "no-such-job", true, jobs[i], uri);
        }
    }
    orte_dvm_ps_free(ps);
    orte_dvm_conn_close(conn);
    return status;
}

int main(int argc, char *argv[])
{
    opal_cmd_line_t *cmd = NULL;
    int status = 1;

    opal_fd_fill_stdio();
    if (HERD_SUCCESS != opal_cmd_line_create("herd-cancel", options, &cmd)) {
        return 1;
    }
    if (HERD_SUCCESS != opal_cmd_line_parse(cmd, argc, argv, false)) {
        goto out;
    }
    if (opal_cmd_line_is_set(cmd, "help")) {
        printf("Usage: herd-cancel --dvm-uri FILE [--signal SIG] JOB...\n"
               "End jobs of a persistent DVM (herd-dvm), or send their processes a signal.\n"
               "JOB is a job id as herd-ps lists it, or its number.\n\n");
        opal_cmd_line_usage(cmd, stdout);
        status = 0;
        goto out;
    }
    if (opal_cmd_line_is_set(cmd, "version")) {
        printf("herd-cancel (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        status = 0;
        goto out;
    }
    const char *uri = opal_cmd_line_get(cmd, "dvm-uri", 0, 0);
    if (NULL == uri) {
        opal_show_help(help_file, "needs-uri", true);
        goto out;
    }
    if (0 == opal_cmd_line_tail_count(cmd)) {
        opal_show_help(help_file, "needs-job", true);
        goto out;
    }
    int signo = SIGTERM;
    const char *sig_text = opal_cmd_line_get(cmd, "signal", 0, 0);
    if (NULL != sig_text && 0 == (signo = parse_signal(sig_text))) {
        opal_show_help(help_file, "bad-signal", true, sig_text);
        goto out;
    }
    status = cancel_all(uri, opal_cmd_line_tail(cmd), signo, opal_cmd_line_is_set(cmd, "verbose"));
out:
    opal_cmd_line_free(cmd);
    return status;
}
