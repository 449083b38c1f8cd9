/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun --do-not-launch --mca herdrun_map_everywhere 1: the job's launch goes to every node
 * daemon of herdrun's DVM, each maps the job as its session daemon would (in a virtual session,
 * dvm_map_only.c) and reports its share; herdrun checks every report against its own map of the
 * job (counts, rank ranges, checksums) and prints a summary, or names the nodes that disagree
 * or never report. */
#include "herd_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/util/show_help.h"
#include "orte/runtime/dvm_map.h"
#include "orte/runtime/launch_internal.h"

#define MAP_NAMED_MAX 8 /* nodes named in a message; the rest counted */

typedef struct map_state {
    launch_job_t *job;
    orte_dvm_t *dvm;
    uint32_t num_nodes;         /* the DVM's */
    uint32_t expected_nodes;    /* those up */
    uint32_t *candidate_of;     /* per node: its candidate index, UINT32_MAX if none */
    dvm_map_report_t *expected; /* per candidate: herdrun's own map */
    dvm_map_report_t *got;      /* per node */
    bool *heard;                /* per node */
    bool *bad;                  /* per node: disagreed, failed or reported twice */
    uint32_t num_heard;
    uint32_t num_bad;
    uint64_t procs;    /* reported in all */
    uint64_t rank_sum; /* of the reports */
    double own_map_ms; /* herdrun's own full map */
    opal_event_t *timer;
    struct timespec start;
    double last_s;             /* since start, the last report */
    orte_dvm_traffic_t before; /* the root's endpoint at the broadcast, and at the last report */
    orte_dvm_traffic_t after;
    size_t message_bytes; /* the launch message */
    bool interrupted;
    bool timed_out;
    bool complete;
} map_state_t;

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - t0->tv_sec) + (double) (now.tv_nsec - t0->tv_nsec) / 1e9;
}

static const char *node_name(const map_state_t *st, uint32_t node)
{
    const orte_allocation_t *alloc = st->job->plan.alloc;
    return NULL != alloc && node < alloc->num_nodes ? alloc->nodes[node].name : "?";
}

/* ------------------------------------------------------------------------------------------ */
/* herdrun's own map: what each node must report */

static int expect_emit(const orte_rmaps_proc_t *proc, void *cbdata)
{
    map_state_t *st = cbdata;
    dvm_map_report_add(&st->expected[proc->node], proc);
    return HERD_SUCCESS;
}

static int map_expected(map_state_t *st)
{
    launch_job_t *job = st->job;
    orte_rmaps_job_t mjob = {.nodes = job->plan.nodes.nodes,
                             .num_nodes = job->plan.nodes.num,
                             .apps = job->plan.apps,
                             .num_apps = job->spec->num_apps};
    uint32_t num_procs = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = orte_rmaps_base_map_job(&mjob, expect_emit, st, &num_procs);
    st->own_map_ms = seconds_since(&t0) * 1e3;
    return rc;
}

static int state_init(map_state_t *st, launch_job_t *job)
{
    memset(st, 0, sizeof(*st));
    st->job = job;
    st->dvm = job->mode.dvm.dvm;
    st->num_nodes = NULL != job->plan.alloc ? job->plan.alloc->num_nodes : 0;
    const orte_job_launch_t *launch = &job->plan.launch;
    st->candidate_of = malloc((st->num_nodes + 1) * sizeof(*st->candidate_of));
    st->expected = calloc(launch->num_candidates + 1, sizeof(*st->expected));
    st->got = calloc(st->num_nodes + 1, sizeof(*st->got));
    st->heard = calloc(st->num_nodes + 1, sizeof(*st->heard));
    st->bad = calloc(st->num_nodes + 1, sizeof(*st->bad));
    if (NULL == st->candidate_of || NULL == st->expected || NULL == st->got || NULL == st->heard ||
        NULL == st->bad) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t n = 0; n < st->num_nodes; ++n) {
        st->candidate_of[n] = UINT32_MAX;
        st->expected_nodes += orte_dvm_node_up(st->dvm, n) ? 1 : 0;
    }
    for (uint32_t c = 0; c < launch->num_candidates; ++c) {
        if (launch->node_index[c] < st->num_nodes) {
            st->candidate_of[launch->node_index[c]] = c;
        }
    }
    return map_expected(st);
}

static void state_free(map_state_t *st)
{
    opal_event_free(st->timer);
    free(st->candidate_of);
    free(st->expected);
    free(st->got);
    free(st->heard);
    free(st->bad);
}

/* ------------------------------------------------------------------------------------------ */
/* the reports */

static void node_problem(map_state_t *st, uint32_t node, const char *topic, ...)
{
    if (!st->bad[node]) {
        st->bad[node] = true;
        st->num_bad++;
    }
    if (st->num_bad > MAP_NAMED_MAX) {
        return; /* counted in the summary */
    }
    va_list ap;
    va_start(ap, topic);
    char *text = opal_show_help_vstring(LAUNCH_HELP_FILE, topic, false, ap);
    va_end(ap);
    size_t len = NULL != text ? strlen(text) : 0;
    while (len > 0 && '\n' == text[len - 1]) {
        text[--len] = '\0'; /* one line with the node's name */
    }
    opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-node", false, node_name(st, node), node + 1,
                   NULL != text ? text : topic);
    free(text);
}

/* Whether the report is the node's share of herdrun's map (a problem said when not). */
static void check_report(map_state_t *st, uint32_t node, const dvm_map_report_t *r)
{
    uint32_t c = st->candidate_of[node];
    dvm_map_report_t none = {0};
    const dvm_map_report_t *want = UINT32_MAX != c ? &st->expected[c] : &none;
    switch (dvm_map_report_compare(r, want, st->job->spec->seq)) {
    case DVM_MAP_OTHER_JOB:
        node_problem(st, node, "map-everywhere-other-job", r->job_seq, st->job->spec->seq);
        break;
    case DVM_MAP_FAILED:
        node_problem(st, node, "map-everywhere-node-failed", opal_strerror(r->status));
        break;
    case DVM_MAP_OTHER_RANKS:
        node_problem(st, node, "map-everywhere-other-ranks", r->num_procs, r->first, r->last,
                     want->num_procs, want->first, want->last);
        break;
    case DVM_MAP_OTHER_BINDING:
        node_problem(st, node, "map-everywhere-other-binding", r->num_procs);
        break;
    case DVM_MAP_AGREES:
        break;
    }
}

static void mapped_cb(uint32_t node, const dvm_map_report_t *r, const char *malformed, void *arg)
{
    map_state_t *st = arg;
    if (node >= st->num_nodes || st->complete) {
        return;
    }
    st->last_s = seconds_since(&st->start);
    orte_dvm_root_traffic(st->dvm, &st->after);
    if (NULL == r) {
        /* its subtree's reports are lost with it: they are named when the wait ends */
        node_problem(st, node, "map-everywhere-malformed", malformed);
        return;
    }
    if (st->heard[node]) {
        node_problem(st, node, "map-everywhere-twice");
        return;
    }
    st->heard[node] = true;
    st->num_heard++;
    st->got[node] = *r;
    st->procs += r->num_procs;
    st->rank_sum += r->rank_sum;
    check_report(st, node, r);
    if (st->num_heard >= st->expected_nodes) {
        st->complete = true;
        opal_event_base_stop(st->job->base);
    }
}

static void timeout_cb(int fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    map_state_t *st = arg;
    st->timed_out = true;
    opal_event_base_stop(st->job->base);
}

static void signal_cb(int signo, void *arg)
{
    (void) signo;
    map_state_t *st = arg;
    st->interrupted = true;
    opal_event_base_stop(st->job->base);
}

static void job_error_cb(const char *jobid, const char *node, const char *message, void *arg)
{
    (void) jobid;
    (void) node;
    (void) arg;
    fprintf(stderr, "%s\n", message); /* a whole sentence from help-dvm.txt, naming the node */
}

/* ------------------------------------------------------------------------------------------ */
/* the summary */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

/* Min, median and max (ms) of the nodes' map or total times, over the nodes with processes. */
static void node_times(const map_state_t *st, bool total, double out[3])
{
    uint64_t *v = malloc((st->num_nodes + 1) * sizeof(*v));
    size_t n = 0;
    for (uint32_t i = 0; NULL != v && i < st->num_nodes; ++i) {
        if (st->heard[i] && !st->bad[i] && st->got[i].num_procs > 0) {
            v[n++] = total ? st->got[i].total_ns : st->got[i].map_ns;
        }
    }
    out[0] = out[1] = out[2] = 0;
    if (n > 0) {
        qsort(v, n, sizeof(*v), cmp_u64);
        out[0] = (double) v[0] / 1e6;
        out[1] = (double) v[n / 2] / 1e6;
        out[2] = (double) v[n - 1] / 1e6;
    }
    free(v);
}

static void name_missing(const map_state_t *st, char *text, size_t size)
{
    size_t used = 0;
    uint32_t named = 0, missing = 0;
    text[0] = '\0';
    for (uint32_t n = 0; n < st->num_nodes; ++n) {
        if (st->heard[n] || !orte_dvm_node_up(st->dvm, n)) {
            continue;
        }
        if (named++ < MAP_NAMED_MAX && used < size) {
            int w =
                snprintf(text + used, size - used, "%s%s", 0 == used ? "" : ", ", node_name(st, n));
            used += w > 0 ? (size_t) w : 0;
        }
        missing++;
    }
    if (missing > MAP_NAMED_MAX && used < size) {
        snprintf(text + used, size - used, " and %u more", missing - MAP_NAMED_MAX);
    }
}

static int summarize(const map_state_t *st, double wall_s)
{
    const char *jobid = st->job->spec->jobid;
    uint32_t num_procs = st->job->plan.num_procs;
    uint64_t want_sum = 0;
    for (uint32_t r = 0; r < num_procs; ++r) {
        want_sum += dvm_map_mix(r);
    }
    if (st->interrupted) {
        opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-interrupted", false, jobid, st->num_heard,
                       st->expected_nodes);
        return 1;
    }
    if (!st->complete) {
        char missing[512];
        name_missing(st, missing, sizeof(missing));
        if (st->timed_out) {
            opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-missing", false, jobid,
                           st->expected_nodes - st->num_heard, st->expected_nodes,
                           (int) st->job->spec->timeout, missing);
        }
        return 1; /* else the DVM failed, and said why */
    }
    if (st->num_bad > 0) {
        opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-disagree", false, jobid, st->num_bad,
                       st->expected_nodes);
        return 1;
    }
    if (st->procs != num_procs || st->rank_sum != want_sum) {
        opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-totals", false, jobid,
                       (unsigned long long) st->procs, num_procs);
        return 1;
    }
    double map_ms[3], total_ms[3];
    node_times(st, false, map_ms);
    node_times(st, true, total_ms);
    char *text = opal_show_help_string(
        LAUNCH_HELP_FILE, "map-everywhere-done", false, jobid, st->num_heard, st->expected_nodes,
        num_procs, st->job->plan.launch.num_participants, map_ms[0], map_ms[1], map_ms[2],
        total_ms[0], total_ms[1], total_ms[2], st->own_map_ms, wall_s);
    if (NULL != text) {
        fputs(text, stdout);
        free(text);
    }
    text = opal_show_help_string(
        LAUNCH_HELP_FILE, "map-everywhere-traffic", false, st->num_nodes, st->before.ready_seconds,
        st->message_bytes, orte_dvm_tree_rounds(st->dvm),
        (unsigned long long) (st->after.messages_delivered - st->before.messages_delivered),
        (unsigned long long) (st->after.bytes_received - st->before.bytes_received),
        (unsigned long long) (st->after.bytes_sent - st->before.bytes_sent));
    if (NULL != text) {
        fputs(text, stdout);
        free(text);
    }
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */

int launch_map_everywhere_check(const launch_job_t *job)
{
    if (!launch_params_map_everywhere()) {
        return HERD_SUCCESS;
    }
    if (0 == (job->spec->flags & ORTE_JOB_FLAG_DO_NOT_LAUNCH)) {
        opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-needs-do-not-launch", false);
        return HERD_ERR_SILENT;
    }
    if (&launch_backend_dvm != job->backend) {
        opal_show_help(LAUNCH_HELP_FILE, "map-everywhere-needs-own-dvm", false,
                       &launch_backend_client == job->backend
                           ? "a running DVM (--dvm-uri) maps only what it launches"
                           : "this job's allocation is this host alone, which herdrun runs "
                             "without a node daemon (set --mca herdrun_direct 0 to start one)");
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

int launch_map_everywhere(launch_job_t *job, const opal_buffer_t *message, int *exit_status)
{
    map_state_t st;
    *exit_status = 1;
    int rc = state_init(&st, job);
    if (HERD_SUCCESS == rc) {
        rc = opal_event_timer_create(job->base, false, timeout_cb, &st, &st.timer);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_root_set_mapped_cb(st.dvm, mapped_cb, &st);
    }
    if (HERD_SUCCESS != rc) {
        state_free(&st);
        return rc;
    }
    orte_dvm_root_set_signal_cb(st.dvm, signal_cb, &st);
    orte_dvm_root_set_job_error_cb(st.dvm, job_error_cb, &st);
    clock_gettime(CLOCK_MONOTONIC, &st.start);
    orte_dvm_root_traffic(st.dvm, &st.before);
    st.after = st.before;
    st.message_bytes = message->used;
    /* Reports come a subtree at a time, the last ones when the slowest subtree is done (minutes
     * for a million processes on 16,384 nodes of one host), so no silence means anything: a
     * node lost or hung stops herdrun's DVM (heartbeats), and --timeout bounds the whole. */
    if (job->spec->timeout > 0) {
        struct timeval tv = {.tv_sec = (time_t) job->spec->timeout, .tv_usec = 0};
        (void) opal_event_add(st.timer, &tv);
    }
    rc = orte_dvm_root_command(st.dvm, ORTE_DVM_CMD_LAUNCH, message->base, message->used);
    if (HERD_SUCCESS == rc) {
        opal_event_base_loop(job->base, false);
        *exit_status = summarize(&st, st.last_s);
    } else {
        opal_show_help(LAUNCH_HELP_FILE, "launch-send-failed", false, opal_strerror(rc));
        rc = HERD_ERR_SILENT;
    }
    (void) orte_dvm_root_set_mapped_cb(st.dvm, NULL, NULL);
    orte_dvm_root_set_signal_cb(st.dvm, NULL, NULL);
    orte_dvm_root_set_job_error_cb(st.dvm, NULL, NULL);
    state_free(&st);
    return rc;
}
