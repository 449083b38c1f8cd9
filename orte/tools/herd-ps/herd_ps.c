/* SPDX-License-Identifier: BSD-3-Clause */
/* herd-ps: what runs on a persistent DVM (herd-dvm --report-uri FILE): its jobs, one job's
 * processes (--procs JOB) or its nodes (--nodes), as a table, as key:value lines (--parsable) or
 * as JSON (--json). The root lists the jobs; each job's herdrun says how its processes are. */
#include "herd_config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/util/cmd_line.h"
#include "opal/util/fd.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/job_status.h"

static const char *help_file = "help-herd-ps.txt";

static const opal_cmd_line_option_t options[] = {
    {"dvm-uri", 0, 1, "FILE", "The contact file of the DVM (as herd-dvm --report-uri wrote it)"},
    {"procs", 0, 1, "JOB", "List the processes of job JOB (its id or number)"},
    {"nodes", 0, 0, NULL, "List the DVM's nodes: state, slots, slots in use, jobs"},
    {"parsable", 'p', 0, NULL, "One record per line of key:value fields separated by |"},
    {"json", 0, 0, NULL, "Print JSON"},
    {"timeout", 0, 1, "SECONDS", "How long to wait for each answer (default 10)"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, 0, 0, NULL, NULL},
};

typedef enum { FORMAT_TABLE, FORMAT_PARSABLE, FORMAT_JSON } format_t;

/* What each job's herdrun said (NULL when it did not answer). */
typedef struct {
    orte_dvm_ps_t *ps;
    orte_job_status_t **status;
} view_t;

static const char *user_name(uint32_t uid, char *buf, size_t size)
{
    struct passwd *pw = getpwuid((uid_t) uid);
    if (NULL != pw) {
        snprintf(buf, size, "%s", pw->pw_name);
    } else {
        snprintf(buf, size, "%u", uid);
    }
    return buf;
}

static void elapsed_text(uint64_t seconds, char *buf, size_t size)
{
    unsigned long long s = (unsigned long long) seconds;
    if (s >= 86400) {
        snprintf(buf, size, "%llu-%02llu:%02llu:%02llu", s / 86400, s % 86400 / 3600, s % 3600 / 60,
                 s % 60);
    } else {
        snprintf(buf, size, "%llu:%02llu:%02llu", s / 3600, s % 3600 / 60, s % 60);
    }
}

/* A JSON string literal. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *) (NULL != s ? s : ""); *p; ++p) {
        if ('"' == *p || '\\' == *p) {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

static const char *job_state(const view_t *v, uint32_t j)
{
    if (NULL != v->status[j]) {
        return v->status[j]->state;
    }
    return v->ps->jobs[j].cancel_signo > 0 ? "cancelled" : "unknown";
}

static uint32_t job_procs(const view_t *v, uint32_t j)
{
    return NULL != v->status[j] ? v->status[j]->num_procs : v->ps->jobs[j].np;
}

/* The names of the job's nodes, joined with ','. */
static char *job_nodes(const view_t *v, uint32_t j)
{
    const orte_dvm_ps_job_t *job = &v->ps->jobs[j];
    size_t len = 1;
    for (uint32_t k = 0; k < job->num_nodes; ++k) {
        len += strlen(v->ps->nodes[job->nodes[k]].name) + 1;
    }
    char *text = calloc(len, 1);
    for (uint32_t k = 0; NULL != text && k < job->num_nodes; ++k) {
        if (k > 0) {
            strcat(text, ",");
        }
        strcat(text, v->ps->nodes[job->nodes[k]].name);
    }
    return text;
}

static void print_jobs(const view_t *v, format_t format)
{
    const orte_dvm_ps_t *ps = v->ps;
    char user[64], elapsed[32];
    if (FORMAT_TABLE == format) {
        printf("%-24s %-10s %-10s %7s %6s %11s  %s\n", "JOBID", "USER", "STATE", "PROCS", "NODES",
               "ELAPSED", "COMMAND");
    } else if (FORMAT_JSON == format) {
        printf("{\"dvm\": ");
        json_string(stdout, ps->id);
        printf(", \"jobs\": [");
    }
    for (uint32_t j = 0; j < ps->num_jobs; ++j) {
        const orte_dvm_ps_job_t *job = &ps->jobs[j];
        uint64_t secs = ps->now > job->start ? ps->now - job->start : 0;
        char *nodes = job_nodes(v, j);
        user_name(job->uid, user, sizeof(user));
        elapsed_text(secs, elapsed, sizeof(elapsed));
        if (FORMAT_TABLE == format) {
            printf("%-24s %-10s %-10s %7u %6u %11s  %s\n", job->jobid, user, job_state(v, j),
                   job_procs(v, j), job->num_nodes, elapsed,
                   NULL != job->command ? job->command : "");
        } else if (FORMAT_PARSABLE == format) {
            printf("jobid:%s|user:%s|uid:%u|state:%s|procs:%u|nodes:%u|nodelist:%s|elapsed:%llu|"
                   "herdrun_pid:%d|command:%s\n",
                   job->jobid, user, job->uid, job_state(v, j), job_procs(v, j), job->num_nodes,
                   NULL != nodes ? nodes : "", (unsigned long long) secs, job->pid,
                   NULL != job->command ? job->command : "");
        } else {
            printf("%s{\"jobid\": ", 0 == j ? "" : ", ");
            json_string(stdout, job->jobid);
            printf(", \"user\": ");
            json_string(stdout, user);
            printf(", \"uid\": %u, \"state\": ", job->uid);
            json_string(stdout, job_state(v, j));
            printf(", \"procs\": %u, \"nodes\": [", job_procs(v, j));
            for (uint32_t k = 0; k < job->num_nodes; ++k) {
                printf("%s", 0 == k ? "" : ", ");
                json_string(stdout, ps->nodes[job->nodes[k]].name);
            }
            printf("], \"elapsed\": %llu, \"herdrun_pid\": %d, \"command\": ",
                   (unsigned long long) secs, job->pid);
            json_string(stdout, job->command);
            printf("}");
        }
        free(nodes);
    }
    if (FORMAT_JSON == format) {
        printf("]}\n");
    }
}

/* Slots in use on node n: the processes every job has there. */
static uint32_t node_in_use(const view_t *v, uint32_t n, uint32_t *jobs)
{
    uint32_t used = 0;
    *jobs = 0;
    for (uint32_t j = 0; j < v->ps->num_jobs; ++j) {
        const orte_job_status_t *st = v->status[j];
        bool here = false;
        for (uint32_t k = 0; k < v->ps->jobs[j].num_nodes; ++k) {
            here = here || v->ps->jobs[j].nodes[k] == n;
        }
        for (uint32_t k = 0; NULL != st && k < st->num_nodes; ++k) {
            if (st->nodes[k] == n) {
                used += st->node_procs[k];
            }
        }
        *jobs += here ? 1 : 0;
    }
    return used;
}

static void print_nodes(const view_t *v, format_t format)
{
    const orte_dvm_ps_t *ps = v->ps;
    if (FORMAT_TABLE == format) {
        printf("%-24s %-6s %7s %7s %6s\n", "NODE", "STATE", "SLOTS", "INUSE", "JOBS");
    } else if (FORMAT_JSON == format) {
        printf("{\"dvm\": ");
        json_string(stdout, ps->id);
        printf(", \"nodes\": [");
    }
    for (uint32_t n = 0; n < ps->num_nodes; ++n) {
        uint32_t jobs = 0, used = node_in_use(v, n, &jobs);
        const char *state = ps->nodes[n].up ? "up" : "down";
        if (FORMAT_TABLE == format) {
            printf("%-24s %-6s %7u %7u %6u\n", ps->nodes[n].name, state, ps->nodes[n].slots, used,
                   jobs);
        } else if (FORMAT_PARSABLE == format) {
            printf("node:%s|state:%s|slots:%u|inuse:%u|jobs:%u\n", ps->nodes[n].name, state,
                   ps->nodes[n].slots, used, jobs);
        } else {
            printf("%s{\"node\": ", 0 == n ? "" : ", ");
            json_string(stdout, ps->nodes[n].name);
            printf(", \"state\": \"%s\", \"slots\": %u, \"inuse\": %u, \"jobs\": %u}", state,
                   ps->nodes[n].slots, used, jobs);
        }
    }
    if (FORMAT_JSON == format) {
        printf("]}\n");
    }
}

static void print_procs(const orte_dvm_ps_t *ps, const orte_dvm_ps_job_t *job,
                        const orte_job_status_t *st, format_t format)
{
    if (FORMAT_TABLE == format) {
        printf("%-8s %-24s %8s %-16s %6s  %s\n", "RANK", "NODE", "PID", "STATE", "EXIT", "PROGRAM");
    } else if (FORMAT_JSON == format) {
        printf("{\"jobid\": ");
        json_string(stdout, job->jobid);
        printf(", \"state\": ");
        json_string(stdout, st->state);
        printf(", \"procs\": [");
    }
    for (uint32_t i = 0; i < st->num_table; ++i) {
        const orte_job_proc_status_t *p = &st->procs[i];
        const char *node = p->node < ps->num_nodes ? ps->nodes[p->node].name : "?";
        const char *state = orte_job_proc_state_name(p->state);
        const char *program =
            p->app < st->num_apps && NULL != st->programs[p->app] ? st->programs[p->app] : "?";
        char exit_text[16] = "-";
        if (ORTE_JOB_PROC_EXITED == p->state) {
            snprintf(exit_text, sizeof(exit_text), "%d", p->status);
        }
        if (FORMAT_TABLE == format) {
            printf("%-8u %-24s %8d %-16s %6s  %s\n", p->rank, node, p->pid, state, exit_text,
                   program);
        } else if (FORMAT_PARSABLE == format) {
            printf("rank:%u|node:%s|pid:%d|state:%s|exit:%s|program:%s\n", p->rank, node, p->pid,
                   state, exit_text, program);
        } else {
            printf("%s{\"rank\": %u, \"node\": ", 0 == i ? "" : ", ", p->rank);
            json_string(stdout, node);
            printf(", \"pid\": %d, \"state\": \"%s\", \"exit\": ", p->pid, state);
            if (ORTE_JOB_PROC_EXITED == p->state) {
                printf("%d", p->status);
            } else {
                printf("null");
            }
            printf(", \"program\": ");
            json_string(stdout, program);
            printf("}");
        }
    }
    if (FORMAT_JSON == format) {
        printf("]}\n");
    }
}

/* Ask a job's herdrun; NULL when it did not answer (gone, or too slow). */
static orte_job_status_t *ask_job(orte_dvm_conn_t *conn, const char *jobid, uint32_t what,
                                  int *status)
{
    opal_buffer_t answer;
    orte_job_status_t *st = NULL;
    opal_buffer_init(&answer);
    *status = HERD_ERR_TIMEOUT;
    int rc = orte_dvm_conn_job_query(conn, jobid, what, status, &answer);
    if (HERD_SUCCESS != rc) {
        *status = rc;
    } else if (HERD_SUCCESS == *status) {
        *status = orte_job_status_unpack(&answer, &st);
    }
    opal_buffer_destruct(&answer);
    return st;
}

static int run(const char *uri, const char *procs_job, bool nodes, format_t format, int timeout_ms)
{
    orte_dvm_conn_t *conn = NULL;
    char why[512];
    int rc = orte_dvm_conn_open(uri, timeout_ms, &conn, why, sizeof(why));
    if (HERD_ERR_NOT_FOUND == rc) {
        opal_show_help(help_file, "contact-unreadable", true, uri, why);
        return 1;
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "dvm-unreachable", true, uri, why);
        return 1;
    }
    view_t v = {0};
    int status = 1;
    rc = orte_dvm_conn_ps(conn, &v.ps);
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "dvm-no-answer", true, uri, opal_strerror(rc));
        goto out;
    }
    if (NULL != procs_job) {
        const orte_dvm_ps_job_t *job = orte_dvm_ps_find_job(v.ps, procs_job);
        if (NULL == job) {
            opal_show_help(help_file, "no-such-job", true, procs_job, uri);
            goto out;
        }
        int st_rc = HERD_SUCCESS;
        orte_job_status_t *st = ask_job(conn, job->jobid, ORTE_DVM_JOB_QUERY_PROCS, &st_rc);
        if (NULL == st) {
            opal_show_help(help_file, HERD_ERR_NOT_FOUND == st_rc ? "job-ended" : "job-no-answer",
                           true, job->jobid, opal_strerror(st_rc));
            goto out;
        }
        print_procs(v.ps, job, st, format);
        orte_job_status_free(st);
        status = 0;
        goto out;
    }
    v.status = calloc(v.ps->num_jobs + 1, sizeof(*v.status));
    if (NULL == v.status) {
        goto out;
    }
    for (uint32_t j = 0; j < v.ps->num_jobs; ++j) {
        int st_rc = HERD_SUCCESS;
        v.status[j] = ask_job(conn, v.ps->jobs[j].jobid, ORTE_DVM_JOB_QUERY_SUMMARY, &st_rc);
        if (HERD_ERR_TIMEOUT == st_rc || HERD_ERR_UNREACH == st_rc) {
            break; /* the connection is out of step now: the rest are "unknown" */
        }
    }
    if (nodes) {
        print_nodes(&v, format);
    } else {
        print_jobs(&v, format);
    }
    status = 0;
out:
    for (uint32_t j = 0; NULL != v.status && j < v.ps->num_jobs; ++j) {
        orte_job_status_free(v.status[j]);
    }
    free(v.status);
    orte_dvm_ps_free(v.ps);
    orte_dvm_conn_close(conn);
    return status;
}

int main(int argc, char *argv[])
{
    opal_cmd_line_t *cmd = NULL;
    int status = 1;

    opal_fd_fill_stdio();
    if (HERD_SUCCESS != opal_cmd_line_create("herd-ps", options, &cmd)) {
        return 1;
    }
    if (HERD_SUCCESS != opal_cmd_line_parse(cmd, argc, argv, false)) {
        goto out;
    }
    if (opal_cmd_line_is_set(cmd, "help")) {
        printf("Usage: herd-ps --dvm-uri FILE [--procs JOB | --nodes] [--parsable | --json]\n"
               "List the jobs of a persistent DVM (herd-dvm), a job's processes, or its "
               "nodes.\n\n");
        opal_cmd_line_usage(cmd, stdout);
        status = 0;
        goto out;
    }
    if (opal_cmd_line_is_set(cmd, "version")) {
        printf("herd-ps (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        status = 0;
        goto out;
    }
    if (opal_cmd_line_tail_count(cmd) > 0) {
        opal_show_help(help_file, "unexpected-argument", true, opal_cmd_line_tail(cmd)[0]);
        goto out;
    }
    const char *uri = opal_cmd_line_get(cmd, "dvm-uri", 0, 0);
    if (NULL == uri) {
        opal_show_help(help_file, "needs-uri", true);
        goto out;
    }
    const char *procs_job = opal_cmd_line_get(cmd, "procs", 0, 0);
    bool nodes = opal_cmd_line_is_set(cmd, "nodes");
    if (NULL != procs_job && nodes) {
        opal_show_help(help_file, "procs-and-nodes", true);
        goto out;
    }
    if (opal_cmd_line_is_set(cmd, "parsable") && opal_cmd_line_is_set(cmd, "json")) {
        opal_show_help(help_file, "parsable-and-json", true);
        goto out;
    }
    format_t format = opal_cmd_line_is_set(cmd, "json")       ? FORMAT_JSON
                      : opal_cmd_line_is_set(cmd, "parsable") ? FORMAT_PARSABLE
                                                              : FORMAT_TABLE;
    int timeout_s = 10;
    const char *timeout_text = opal_cmd_line_get(cmd, "timeout", 0, 0);
    if (NULL != timeout_text) {
        char *end = NULL;
        long t = strtol(timeout_text, &end, 10);
        if (end == timeout_text || '\0' != *end || t < 1 || t > 3600) {
            opal_show_help(help_file, "bad-timeout", true, timeout_text);
            goto out;
        }
        timeout_s = (int) t;
    }
    status = run(uri, procs_job, nodes, format, timeout_s * 1000);
out:
    opal_cmd_line_free(cmd);
    return status;
}
