/* SPDX-License-Identifier: BSD-3-Clause */
/* The root's session slots: which job holds which slot of which node, and the queue of jobs
 * submitted by tools that wait for free slots (first come, first served on every node). */
#include "herd_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/runtime/job.h"

typedef struct queued_job {
    orte_job_launch_t *launch;
    struct queued_job *next;
} queued_job_t;

struct dvm_slots {
    uint32_t num_nodes;
    uint32_t *count; /* by node index: its session slots (its inventory's session endpoints) */
    char ***holder;  /* by node index, by slot: the job holding it, or NULL */
    bool *blocked;   /* by node index, scratch of one pass over the queue */
    queued_job_t *head, *tail;
    orte_dvm_job_queue_cb_t cb;
    void *cb_arg;
};

/* The table, made at the first use and grown when the DVM has more nodes than it knows (a
 * node added while the DVM runs): each node's slots are its inventory's session endpoints. */
static dvm_slots_t *slots_of(orte_dvm_t *dvm)
{
    dvm_slots_t *t = dvm->root.slots;
    if (NULL == t && NULL == (t = dvm->root.slots = calloc(1, sizeof(*t)))) {
        return NULL;
    }
    uint32_t n = dvm->size - 1;
    if (n <= t->num_nodes) {
        return t;
    }
    uint32_t *count = realloc(t->count, n * sizeof(*count));
    if (NULL != count) {
        t->count = count;
    }
    char ***holder = realloc(t->holder, n * sizeof(*holder));
    if (NULL != holder) {
        t->holder = holder;
    }
    bool *blocked = realloc(t->blocked, n * sizeof(*blocked));
    if (NULL != blocked) {
        t->blocked = blocked;
    }
    if (NULL == count || NULL == holder || NULL == blocked) {
        return NULL;
    }
    for (uint32_t i = t->num_nodes; i < n; ++i) {
        const orte_inventory_t *inv = orte_dvm_node_inventory(dvm, i);
        t->count[i] = (NULL != inv) ? (uint32_t) opal_argv_count(inv->session_uris) : 0;
        t->holder[i] = (t->count[i] > 0) ? calloc(t->count[i], sizeof(char *)) : NULL;
        if (NULL == t->holder[i]) {
            t->count[i] = 0; /* no slots known: a job there is refused, not crashed */
        }
        t->num_nodes = i + 1;
    }
    return t;
}

/* The first free slot of node, or UINT32_MAX. */
static uint32_t free_slot(const dvm_slots_t *t, uint32_t node)
{
    for (uint32_t s = 0; s < t->count[node]; ++s) {
        if (NULL == t->holder[node][s]) {
            return s;
        }
    }
    return UINT32_MAX;
}

static uint32_t participant_node(const orte_job_launch_t *launch, uint32_t p)
{
    return launch->node_index[launch->participants[p]];
}

/* Where the job cannot start now: a node without a free slot, or one a job before it in the
 * queue waits for (nobody overtakes on a node). UINT32_MAX: it can start. */
static uint32_t blocking_node(const dvm_slots_t *t, const orte_job_launch_t *launch)
{
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        uint32_t node = participant_node(launch, p);
        if (t->blocked[node] || UINT32_MAX == free_slot(t, node)) {
            return node;
        }
    }
    return UINT32_MAX;
}

static void tell(dvm_slots_t *t, const char *jobid, const char *waiting_on)
{
    if (NULL != t->cb) {
        t->cb(jobid, waiting_on, t->cb_arg);
    }
}

/* Give the job a free slot on each of its nodes, and broadcast it. */
static int start_job(orte_dvm_t *dvm, dvm_slots_t *t, orte_job_launch_t *launch)
{
    for (uint32_t c = 0; c < launch->num_candidates; ++c) {
        launch->session_slot[c] = 0;
    }
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        uint32_t node = participant_node(launch, p);
        uint32_t s = free_slot(t, node);
        t->holder[node][s] = strdup(launch->spec->jobid);
        if (NULL == t->holder[node][s]) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        launch->session_slot[launch->participants[p]] = s;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = orte_job_launch_pack(&buffer, launch);
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_root_command(dvm, ORTE_DVM_CMD_LAUNCH, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS == rc) {
        tell(t, launch->spec->jobid, NULL);
    }
    return rc;
}

/* Free every slot job holds on node (every node: UINT32_MAX). */
static void free_slots(dvm_slots_t *t, const char *jobid, uint32_t only)
{
    for (uint32_t n = 0; n < t->num_nodes; ++n) {
        for (uint32_t s = 0; (UINT32_MAX == only || n == only) && s < t->count[n]; ++s) {
            if (NULL != t->holder[n][s] && 0 == strcmp(t->holder[n][s], jobid)) {
                free(t->holder[n][s]);
                t->holder[n][s] = NULL;
            }
        }
    }
}

static void say_error(orte_dvm_t *dvm, const char *jobid, const char *node, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    char *message = opal_show_help_vstring(DVM_HELP_FILE, topic, false, ap);
    va_end(ap);
    const char *text = (NULL != message) ? message : topic;
    if (NULL != dvm->root.job_error_cb) {
        dvm->root.job_error_cb(jobid, node, text, dvm->root.job_error_arg);
    } else {
        fprintf(stderr, "%s", text);
    }
    free(message);
}

/* One pass over the queue, oldest first: start every job that can start; a job that cannot
 * blocks its nodes for the jobs behind it. Returns where the job named `watch` waits (its node's
 * index), UINT32_MAX if it started or is not there. */
static uint32_t run_queue(orte_dvm_t *dvm, dvm_slots_t *t, const char *watch)
{
    uint32_t watched = UINT32_MAX;
    memset(t->blocked, 0, t->num_nodes * sizeof(*t->blocked));
    queued_job_t **link = &t->head;
    t->tail = NULL;
    while (NULL != *link) {
        queued_job_t *q = *link;
        const char *jobid = q->launch->spec->jobid;
        uint32_t node = blocking_node(t, q->launch);
        /* a node lost for good refuses the job; one re-attaching below a lost daemon holds it */
        bool down = false;
        for (uint32_t p = 0; p < q->launch->num_participants && !down; ++p) {
            uint32_t n = participant_node(q->launch, p);
            down = dvm_loss_is_down(dvm, n + 1);
            if (UINT32_MAX == node && !orte_dvm_node_up(dvm, n)) {
                node = n;
            }
        }
        if (UINT32_MAX != node && !down) {
            for (uint32_t p = 0; p < q->launch->num_participants; ++p) {
                t->blocked[participant_node(q->launch, p)] = true;
            }
            if (NULL != watch && 0 == strcmp(jobid, watch)) {
                watched = node;
            }
            t->tail = q;
            link = &q->next;
            continue;
        }
        *link = q->next;
        int rc = down ? HERD_ERR_UNREACH : start_job(dvm, t, q->launch);
        if (HERD_SUCCESS != rc) {
            free_slots(t, jobid, UINT32_MAX);
            if (down) {
                say_error(dvm, jobid, "the root", "queued-node-down", jobid);
            } else {
                say_error(dvm, jobid, "the root", "queued-launch-failed", jobid, opal_strerror(rc));
            }
        }
        orte_job_launch_free(q->launch);
        free(q);
    }
    return watched;
}

int orte_dvm_root_submit(orte_dvm_t *dvm, orte_job_launch_t *launch)
{
    dvm_slots_t *t = slots_of(dvm);
    queued_job_t *q = (NULL != t) ? calloc(1, sizeof(*q)) : NULL;
    if (NULL == q) {
        orte_job_launch_free(launch);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        uint32_t node = participant_node(launch, p);
        if (node >= t->num_nodes || 0 == t->count[node]) {
            free(q);
            orte_job_launch_free(launch);
            return HERD_ERR_BAD_PARAM; /* a node without session endpoints: not a DVM node */
        }
    }
    const char *jobid = launch->spec->jobid;
    q->launch = launch;
    if (NULL == t->tail) {
        t->head = q;
    } else {
        t->tail->next = q;
    }
    t->tail = q;
    if (launch->spec->flags & ORTE_JOB_FLAG_NO_QUEUE) {
        /* --no-queue: now or never; what waits before it still goes first */
        memset(t->blocked, 0, t->num_nodes * sizeof(*t->blocked));
        for (queued_job_t *before = t->head; before != q; before = before->next) {
            for (uint32_t p = 0; p < before->launch->num_participants; ++p) {
                t->blocked[participant_node(before->launch, p)] = true;
            }
        }
        uint32_t node = blocking_node(t, launch);
        if (UINT32_MAX != node) {
            const char *name = dvm_tree_node_name(dvm, node + 1);
            say_error(dvm, jobid, name, "session-slots-busy", jobid, t->count[node], name);
            orte_dvm_root_withdraw(dvm, jobid);
            return HERD_SUCCESS;
        }
    }
    char *watch = strdup(jobid);
    uint32_t node = run_queue(dvm, t, watch);
    if (UINT32_MAX != node) {
        tell(t, watch, dvm_tree_node_name(dvm, node + 1));
    }
    free(watch);
    return HERD_SUCCESS;
}

void orte_dvm_root_withdraw(orte_dvm_t *dvm, const char *jobid)
{
    dvm_slots_t *t = dvm->root.slots;
    if (NULL == t) {
        return;
    }
    bool found = false;
    for (queued_job_t **link = &t->head; NULL != *link; link = &(*link)->next) {
        if (0 == strcmp((*link)->launch->spec->jobid, jobid)) {
            queued_job_t *q = *link;
            *link = q->next;
            orte_job_launch_free(q->launch);
            free(q);
            found = true;
            break;
        }
    }
    if (found) {
        run_queue(dvm, t, NULL); /* its nodes are no longer held back for it */
    }
}

void orte_dvm_root_set_job_queue_cb(orte_dvm_t *dvm, orte_dvm_job_queue_cb_t cb, void *arg)
{
    dvm_slots_t *t = slots_of(dvm);
    if (NULL != t) {
        t->cb = cb;
        t->cb_arg = arg;
    }
}

/* ORTE_DVM_TAG_SESSION_END: {jobid}, the job's slot on the sender's node is free. */
static void session_end_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                             const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm_slots_t *t = dvm->root.slots;
    opal_buffer_t buffer;
    char *jobid = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &jobid) && NULL != jobid) {
        if (NULL != t && src >= 1 && src - 1 < t->num_nodes) {
            free_slots(t, jobid, src - 1);
            run_queue(dvm, t, NULL);
        }
    } else {
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring a malformed session end from daemon %u",
                    src);
    }
    free(jobid);
    opal_buffer_destruct(&buffer);
}

void dvm_queue_node_down(orte_dvm_t *dvm, orte_vpid_t vpid)
{
    dvm_slots_t *t = dvm->root.slots;
    if (NULL == t || vpid < 1 || vpid - 1 >= t->num_nodes) {
        return;
    }
    for (uint32_t s = 0; s < t->count[vpid - 1]; ++s) {
        free(t->holder[vpid - 1][s]);
        t->holder[vpid - 1][s] = NULL;
    }
    run_queue(dvm, t, NULL); /* the jobs waiting for it are refused now, not at the next end */
}

int dvm_queue_open(orte_dvm_t *dvm)
{
    return dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_SESSION_END, session_end_recv, dvm);
}

void dvm_queue_release(orte_dvm_t *dvm)
{
    dvm_slots_t *t = dvm->root.slots;
    if (NULL == t) {
        return;
    }
    while (NULL != t->head) {
        queued_job_t *q = t->head;
        t->head = q->next;
        orte_job_launch_free(q->launch);
        free(q);
    }
    for (uint32_t n = 0; NULL != t->holder && n < t->num_nodes; ++n) {
        for (uint32_t s = 0; NULL != t->holder[n] && s < t->count[n]; ++s) {
            free(t->holder[n][s]);
        }
        free(t->holder[n]);
    }
    free(t->holder);
    free(t->count);
    free(t->blocked);
    free(t);
    dvm->root.slots = NULL;
}
