/* SPDX-License-Identifier: BSD-3-Clause */
/* What herdrun tells the user about the job's processes: the line for each failure, and the
 * usage report at the end (--report-usage: a table, and JSON to a file). */
#include "herd_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"

void launch_report_failure(const launch_job_t *job, uint32_t action, const orte_proc_record_t *r,
                           const char *message)
{
    char how[160], who[64];
    const char *jobid = job->spec->jobid;
    const char *node = launch_job_node_name(job, r->node);
    orte_proc_record_describe(r, how, sizeof(how));
    launch_spawn_describe_rank(job, r->rank, who, sizeof(who));
    char restarted[96];
    snprintf(restarted, sizeof(restarted), " (its %u restart%s used up: errmgr_restart_max)",
             r->restarts, 1 == r->restarts ? "" : "s");
    const char *then = (2u == action)      ? "; the job goes on without it (errmgr continue)"
                       : (r->restarts > 0) ? restarted
                                           : "";
    if (ORTE_PROC_LOST == r->state) {
        opal_show_help(LAUNCH_HELP_FILE, "session-daemon-lost", false, jobid, node, then);
    } else if (UINT32_MAX == r->rank) {
        opal_show_help(LAUNCH_HELP_FILE, "session-daemon-cannot-start", false, jobid, node);
    } else if (ORTE_PROC_ABORTED == r->state) {
        /* MPI_Abort, PMI abort, herd_abort: the process's own words, if it gave any */
        opal_show_help(LAUNCH_HELP_FILE, "proc-aborted", false, jobid, who, node, (int) r->pid, how,
                       (NULL != message && '\0' != *message) ? ": " : "",
                       NULL != message ? message : "");
    } else if (r->pid > 0) {
        opal_show_help(LAUNCH_HELP_FILE, "proc-failed", false, jobid, who, node, (int) r->pid, how,
                       then);
    } else {
        opal_show_help(LAUNCH_HELP_FILE, "proc-failed-no-pid", false, jobid, who, node, how, then);
    }
}

void launch_report_restart(const launch_job_t *job, const orte_proc_record_t *r)
{
    char how[160], who[64];
    orte_proc_record_describe(r, how, sizeof(how));
    launch_spawn_describe_rank(job, r->rank, who, sizeof(who));
    opal_show_help(LAUNCH_HELP_FILE, "proc-restarted", false, job->spec->jobid, who,
                   launch_job_node_name(job, r->node), (int) r->pid, how, r->restarts);
}

static double seconds_of(uint64_t us)
{
    return (double) us / 1e6;
}

typedef struct {
    uint32_t count;
    uint64_t user_us;
    uint64_t sys_us;
    int64_t rss_kb;
} usage_totals_t;

/* Per candidate node, in one pass over the report (free the result); NULL if out of memory. */
static usage_totals_t *node_totals(const launch_job_t *job)
{
    usage_totals_t *t = calloc(job->plan.launch.num_candidates + 1, sizeof(*t));
    for (uint32_t i = 0; NULL != t && i < job->report.num_records; ++i) {
        const orte_proc_record_t *r = &job->report.records[i];
        if (r->node < job->plan.launch.num_candidates) {
            t[r->node].count++;
            t[r->node].user_us += r->user_us;
            t[r->node].sys_us += r->sys_us;
            t[r->node].rss_kb += r->max_rss_kb;
        }
    }
    return t;
}

/* How a process ended, for the table's status column. */
static void usage_status(const orte_proc_record_t *r, char *how, size_t size)
{
    if (ORTE_PROC_ABORTED == r->state) {
        snprintf(how, size, "abort %d", r->exit_code);
    } else if (ORTE_PROC_UNFINALIZED == r->state) {
        snprintf(how, size, "exit 0 (no finalize)");
    } else if (ORTE_PROC_EXITED != r->state) {
        snprintf(how, size, "%s", ORTE_PROC_LOST == r->state ? "lost" : "not started");
    } else if (r->signaled) {
        snprintf(how, size, "signal %d%s", r->signo, r->aborted ? " (aborted)" : "");
    } else {
        snprintf(how, size, "exit %d", r->exit_code);
    }
}

static void print_usage(const launch_job_t *job, FILE *out)
{
    const orte_proc_record_t *records = job->report.records;
    uint32_t num = job->report.num_records;
    uint64_t user = 0, sys = 0;
    int64_t rss = 0;
    double wall = 0;
    fprintf(out, "Resource usage of job %s (%u processes):\n", job->spec->jobid, num);
    fprintf(out, "  %6s  %-16s %8s  %-22s %9s %9s %9s %10s\n", "rank", "node", "pid", "status",
            "wall s", "user s", "sys s", "maxrss MB");
    for (uint32_t i = 0; i < num; ++i) {
        const orte_proc_record_t *r = &records[i];
        char how[64];
        usage_status(r, how, sizeof(how));
        fprintf(out, "  %6u  %-16s %8d  %-22s %9.3f %9.3f %9.3f %10.1f\n", r->rank,
                launch_job_node_name(job, r->node), (int) r->pid, how, (double) r->wall_ns / 1e9,
                seconds_of(r->user_us), seconds_of(r->sys_us), (double) r->max_rss_kb / 1024.0);
    }
    fprintf(out, "  per node:\n");
    usage_totals_t *per_node = node_totals(job);
    for (uint32_t c = 0; NULL != per_node && c < job->plan.launch.num_candidates; ++c) {
        const usage_totals_t *t = &per_node[c];
        if (t->count > 0) {
            fprintf(out,
                    "    %-16s %6u process%s  user %9.3f s  sys %9.3f s  maxrss sum %10.1f MB\n",
                    launch_job_node_name(job, c), t->count, 1 == t->count ? "  " : "es",
                    seconds_of(t->user_us), seconds_of(t->sys_us), (double) t->rss_kb / 1024.0);
        }
    }
    free(per_node);
    for (uint32_t i = 0; i < num; ++i) {
        user += records[i].user_us;
        sys += records[i].sys_us;
        rss += records[i].max_rss_kb;
        if ((double) records[i].wall_ns / 1e9 > wall) {
            wall = (double) records[i].wall_ns / 1e9;
        }
    }
    fprintf(out,
            "  job: %u processes, longest wall %.3f s, user %.3f s, sys %.3f s, maxrss sum "
            "%.1f MB, exit status %d\n",
            num, wall, seconds_of(user), seconds_of(sys), (double) rss / 1024.0,
            job->state.exit_status);
}

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *) text; '\0' != *p; ++p) {
        if ('"' == *p || '\\' == *p) {
            fprintf(out, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

static const char *json_state(const orte_proc_record_t *r)
{
    return ORTE_PROC_EXITED == r->state        ? (r->signaled ? "signaled" : "exited")
           : ORTE_PROC_LOST == r->state        ? "lost"
           : ORTE_PROC_ABORTED == r->state     ? "aborted"
           : ORTE_PROC_UNFINALIZED == r->state ? "unfinalized"
                                               : "not_started";
}

static void json_ranks(const launch_job_t *job, FILE *out)
{
    for (uint32_t i = 0; i < job->report.num_records; ++i) {
        const orte_proc_record_t *r = &job->report.records[i];
        fprintf(out, "    {\"rank\": %u, \"node\": ", r->rank);
        json_string(out, launch_job_node_name(job, r->node));
        fprintf(out,
                ", \"pid\": %d, \"state\": \"%s\", \"exit_code\": %d, \"signal\": %d, "
                "\"wall_s\": %.6f, \"user_s\": %.6f, \"sys_s\": %.6f, \"max_rss_kb\": %" PRId64
                "}%s\n",
                (int) r->pid, json_state(r), r->signaled ? 0 : r->exit_code,
                r->signaled ? r->signo : 0, (double) r->wall_ns / 1e9, seconds_of(r->user_us),
                seconds_of(r->sys_us), r->max_rss_kb, i + 1 < job->report.num_records ? "," : "");
    }
}

/* The nodes' totals, then the job's. */
static void json_totals(const launch_job_t *job, FILE *out)
{
    bool first = true;
    uint64_t tu = 0, ts = 0;
    int64_t tr = 0;
    usage_totals_t *per_node = node_totals(job);
    for (uint32_t c = 0; NULL != per_node && c < job->plan.launch.num_candidates; ++c) {
        uint64_t nu = per_node[c].user_us, ns = per_node[c].sys_us;
        int64_t nr = per_node[c].rss_kb;
        uint32_t count = per_node[c].count;
        tu += nu;
        ts += ns;
        tr += nr;
        if (0 == count) {
            continue;
        }
        fprintf(out, "%s    {\"node\": ", first ? "" : ",\n");
        json_string(out, launch_job_node_name(job, c));
        fprintf(out,
                ", \"processes\": %u, \"user_s\": %.6f, \"sys_s\": %.6f, "
                "\"max_rss_kb_sum\": %" PRId64 "}",
                count, seconds_of(nu), seconds_of(ns), nr);
        first = false;
    }
    free(per_node);
    fprintf(out,
            "\n  ],\n  \"job\": {\"processes\": %u, \"user_s\": %.6f, \"sys_s\": %.6f, "
            "\"max_rss_kb_sum\": %" PRId64 "}\n}\n",
            job->report.num_records, seconds_of(tu), seconds_of(ts), tr);
}

static int write_usage_json(const launch_job_t *job, const char *path)
{
    FILE *out = fopen(path, "w");
    if (NULL == out) {
        opal_show_help(LAUNCH_HELP_FILE, "usage-report-write-failed", false, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    fprintf(out, "{\n  \"jobid\": ");
    json_string(out, job->spec->jobid);
    fprintf(out, ",\n  \"exit_status\": %d,\n  \"ranks\": [\n", job->state.exit_status);
    json_ranks(job, out);
    fprintf(out, "  ],\n  \"nodes\": [\n");
    json_totals(job, out);
    if (0 != fclose(out)) {
        opal_show_help(LAUNCH_HELP_FILE, "usage-report-write-failed", false, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

void launch_report_usage(launch_job_t *job)
{
    fflush(stdout);
    print_usage(job, stdout);
    fflush(stdout);
    if (NULL != job->options->report_usage_file &&
        HERD_SUCCESS != write_usage_json(job, job->options->report_usage_file) &&
        0 == job->state.exit_status) {
        job->state.exit_status = 1;
    }
}
