/* SPDX-License-Identifier: BSD-3-Clause */
/* A job mapped on every node and launched on none (herdrun --do-not-launch --mca
 * herdrun_map_everywhere 1): each node daemon, hosted simulated ones too, maps the job in a
 * virtual session (session_virtual.c: the session daemon's map, in this process, no fork) and
 * sends its parent one message (ORTE_DVM_TAG_MAPPED, dvm_map.h) with its own report and its
 * children's subtrees', once it has them all: the root gets one message per child. A process
 * maps one node's share per turn of its loop, so that a process hosting a thousand nodes still
 * forwards broadcasts and heartbeats between them; the root passes each report to herdrun. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/mca/rmaps/rmaps.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/runtime/dvm_map.h"
#include "orte/runtime/job.h"
#include "orte/runtime/session_virtual.h"
#include "orte/util/radix.h"

typedef struct dvm_map_item {
    orte_dvm_t *dvm;
    orte_job_launch_t *launch;
    struct dvm_map_item *next;
} dvm_map_item_t;

/* A daemon's gathering of its subtree's reports for one job. */
struct dvm_map_gather {
    uint32_t job_seq;
    bool own_done; /* its own report is in entries */
    bool sent;
    uint32_t first_child;
    uint32_t num_children;
    uint32_t waiting; /* children not heard from (the down ones never are: not waited for) */
    bool *heard;      /* by child index */
    dvm_map_entry_t *entries;
    uint32_t count;
    uint32_t capacity;
};

struct dvm_map_queue {
    opal_event_t *timer; /* armed (timeout 0) while items wait: one map per turn of the loop */
    dvm_map_item_t *head;
    dvm_map_item_t *tail;
    bool rmaps_open;
};

/* ------------------------------------------------------------------------------------------ */
/* the candidates' inventories, as the session daemon would have them */

typedef struct candidate_table {
    orte_inventory_t **ptrs;  /* per candidate */
    orte_inventory_t *views;  /* hosted nodes: per candidate, its kind's inventory, its name */
    orte_inventory_t **owned; /* freed with the table */
    uint32_t num_owned;
} candidate_table_t;

static void candidate_table_free(candidate_table_t *t)
{
    for (uint32_t i = 0; NULL != t->owned && i < t->num_owned; ++i) {
        orte_inventory_free(t->owned[i]);
    }
    free(t->owned);
    free(t->views);
    free(t->ptrs);
    memset(t, 0, sizeof(*t));
}

/* A node daemon that gathered every inventory: each candidate's unpacked, as the session daemon
 * unpacks its hand-off. */
static int unpack_candidates(const orte_dvm_t *dvm, const orte_job_launch_t *launch,
                             candidate_table_t *t)
{
    const dvm_daemon_t *daemon = &dvm->daemon;
    int rc = HERD_SUCCESS;
    for (uint32_t c = 0; HERD_SUCCESS == rc && c < launch->num_candidates; ++c) {
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        uint32_t n = launch->node_index[c];
        rc = opal_buffer_load(&buffer, daemon->inventory_blobs[n], daemon->inventory_lengths[n]);
        if (HERD_SUCCESS == rc) {
            rc = orte_inventory_unpack(&buffer, &t->owned[c]);
        }
        opal_buffer_destruct(&buffer);
        if (HERD_SUCCESS == rc) {
            t->num_owned = c + 1;
            t->ptrs[c] = t->owned[c];
        }
    }
    return rc;
}

/* Hosted simulated nodes keep the inventories by kind: one inventory per kind rebuilt, and each
 * candidate a copy of its kind's under its own name (the mapper reads the name, slots and
 * topology; the session endpoints, which differ, are not used by a map). */
static int kind_candidates(const orte_dvm_t *dvm, const orte_job_launch_t *launch,
                           candidate_table_t *t)
{
    const dvm_kinds_t *kinds = dvm->kinds;
    const orte_allocation_t *names = dvm->daemon.names;
    uint32_t *kind_of = calloc(dvm->size, sizeof(*kind_of));
    t->views = calloc(launch->num_candidates + 1, sizeof(*t->views));
    if (NULL == kind_of || NULL == t->views || NULL == names) {
        free(kind_of);
        return NULL == names ? HERD_ERR_NOT_FOUND : HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t k = 0; k < kinds->num_kinds; ++k) {
        for (uint32_t r = 0; r < kinds->kinds[k].num_ranges; ++r) {
            const dvm_kinds_range_t *range = &kinds->kinds[k].ranges[r];
            for (uint32_t v = range->first; v < range->first + range->count && v < dvm->size; ++v) {
                kind_of[v] = k + 1;
            }
        }
    }
    int rc = HERD_SUCCESS;
    for (uint32_t c = 0; HERD_SUCCESS == rc && c < launch->num_candidates; ++c) {
        uint32_t vpid = launch->node_index[c] + 1;
        uint32_t k = vpid < dvm->size ? kind_of[vpid] : 0;
        if (0 == k || vpid - 1 >= names->num_nodes) {
            rc = HERD_ERR_NOT_FOUND;
            break;
        }
        if (NULL == t->owned[k - 1]) {
            rc = dvm_kinds_inventory(dvm, names, vpid, &t->owned[k - 1]);
            if (HERD_SUCCESS != rc) {
                break;
            }
        }
        t->views[c] = *t->owned[k - 1];
        t->views[c].node_name = names->nodes[vpid - 1].name;
        t->ptrs[c] = &t->views[c];
    }
    free(kind_of);
    return rc;
}

static int candidate_table_build(const orte_dvm_t *dvm, const orte_job_launch_t *launch,
                                 candidate_table_t *t)
{
    memset(t, 0, sizeof(*t));
    uint32_t owned = NULL != dvm->kinds ? dvm->kinds->num_kinds : launch->num_candidates;
    t->ptrs = calloc(launch->num_candidates + 1, sizeof(*t->ptrs));
    t->owned = calloc(owned + 1, sizeof(*t->owned));
    if (NULL == t->ptrs || NULL == t->owned) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != dvm->kinds) {
        t->num_owned = owned;
        return kind_candidates(dvm, launch, t);
    }
    if (NULL == dvm->daemon.inventory_blobs) {
        return HERD_ERR_NOT_FOUND;
    }
    return unpack_candidates(dvm, launch, t);
}

/* ------------------------------------------------------------------------------------------ */
/* the subtree's reports, gathered and sent up in one message */

static void gather_free(dvm_map_gather_t *g)
{
    if (NULL != g) {
        free(g->heard);
        free(g->entries);
        free(g);
    }
}

static int gather_append(dvm_map_gather_t *g, const dvm_map_entry_t *entries, uint32_t count)
{
    if (g->count + count > g->capacity) {
        uint32_t capacity = 2 * (g->count + count);
        dvm_map_entry_t *grown = realloc(g->entries, capacity * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        g->entries = grown;
        g->capacity = capacity;
    }
    memcpy(&g->entries[g->count], entries, count * sizeof(*entries));
    g->count += count;
    return HERD_SUCCESS;
}

/* Its own report and every child's subtree are in: one message up. */
static void gather_try_send(orte_dvm_t *dvm)
{
    dvm_map_gather_t *g = dvm->daemon.map_gather;
    if (NULL == g || g->sent || !g->own_done || g->waiting > 0) {
        return;
    }
    size_t len = dvm_map_message_bytes(g->count);
    uint8_t *bytes = malloc(len);
    if (NULL != bytes) {
        dvm_map_encode(g->entries, g->count, bytes);
        (void) dvm->ovl->send(dvm->overlay, orte_radix_parent(dvm->vpid, dvm->radix),
                              ORTE_DVM_TAG_MAPPED, bytes, len);
    }
    free(bytes);
    g->sent = true;
    free(g->entries);
    g->entries = NULL;
    g->count = g->capacity = 0;
}

static void gather_own(orte_dvm_t *dvm, const dvm_map_report_t *report)
{
    dvm_map_gather_t *g = dvm->daemon.map_gather;
    dvm_map_entry_t mine = {.vpid = dvm->vpid, .report = *report};
    if (NULL == g || g->job_seq != report->job_seq) {
        return; /* a newer job's gathering replaced it */
    }
    /* no room for it: herdrun names this node as one that never reported */
    (void) gather_append(g, &mine, 1);
    g->own_done = true;
    gather_try_send(dvm);
}

/* ORTE_DVM_TAG_MAPPED from a child: its subtree's reports. */
static void gather_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    (void) overlay;
    (void) tag;
    orte_dvm_t *dvm = arg;
    dvm_map_gather_t *g = dvm->daemon.map_gather;
    uint32_t child = NULL != g ? src - g->first_child : 0;
    if (NULL == g || g->sent || src < g->first_child || child >= g->num_children ||
        g->heard[child]) {
        return; /* not a child we wait for */
    }
    dvm_map_entry_t *entries = NULL;
    uint32_t count = 0;
    char reason[128];
    if (HERD_SUCCESS ==
        dvm_map_decode(data, length, dvm->size, &entries, &count, reason, sizeof(reason))) {
        (void) gather_append(g, entries, count);
    }
    /* a malformed subtree is left out: herdrun names its nodes as never reported */
    free(entries);
    g->heard[child] = true;
    g->waiting--;
    gather_try_send(dvm);
}

/* A new gathering for the job: the children below (those not down) to wait for. */
static int gather_start(orte_dvm_t *dvm, uint32_t job_seq)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    if (!daemon->map_recv_registered) {
        int rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_MAPPED, gather_recv, dvm);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        daemon->map_recv_registered = true;
    }
    gather_free(daemon->map_gather);
    dvm_map_gather_t *g = calloc(1, sizeof(*g));
    daemon->map_gather = g;
    if (NULL == g) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    g->job_seq = job_seq;
    /* children radix*v+1 .. radix*v+radix, those below size */
    uint64_t first = (uint64_t) dvm->radix * dvm->vpid + 1;
    uint64_t last = first + dvm->radix;
    if (last > dvm->size) {
        last = dvm->size;
    }
    g->first_child = (uint32_t) first;
    g->num_children = first < last ? (uint32_t) (last - first) : 0;
    g->heard = calloc(g->num_children + 1, sizeof(*g->heard));
    if (NULL == g->heard) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t c = 0; c < g->num_children; ++c) {
        g->heard[c] = dvm_loss_is_down(dvm, g->first_child + c);
        g->waiting += g->heard[c] ? 0 : 1;
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* one node's map */

/* This node's index among the job's candidates if it runs processes of it, else UINT32_MAX. */
static uint32_t participant_candidate(const orte_dvm_t *dvm, const orte_job_launch_t *launch)
{
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        if (launch->node_index[launch->participants[p]] == dvm->vpid - 1) {
            return launch->participants[p];
        }
    }
    return UINT32_MAX;
}

/* A real node's topology travels as XML once per signature, to the root: as a node daemon
 * hands its own XML to its session daemon, this node's goes with the launch's pairs. A simulated
 * node's is made from its synthetic description (no XML needed). */
static int add_own_xml(orte_dvm_t *dvm, orte_job_launch_t *launch)
{
    orte_inventory_t *mine = dvm->daemon.mine;
    if (NULL == mine || NULL != mine->synthetic || NULL == mine->signature) {
        return HERD_SUCCESS;
    }
    const char *xml = orte_inventory_xml(mine);
    if (NULL == xml) {
        return HERD_ERR_NOT_FOUND;
    }
    int rc = opal_argv_append(&launch->xml_pairs, mine->signature);
    return HERD_SUCCESS == rc ? opal_argv_append(&launch->xml_pairs, xml) : rc;
}

static void map_item(dvm_map_item_t *item)
{
    orte_dvm_t *dvm = item->dvm;
    orte_job_launch_t *launch = item->launch;
    dvm_map_report_t report = {.job_seq = launch->spec->seq};
    uint32_t mine = participant_candidate(dvm, launch);
    int rc = HERD_SUCCESS;
    if (UINT32_MAX != mine) {
        candidate_table_t table;
        rc = add_own_xml(dvm, launch);
        if (HERD_SUCCESS == rc) {
            rc = candidate_table_build(dvm, launch, &table);
        } else {
            memset(&table, 0, sizeof(table));
        }
        if (HERD_SUCCESS == rc) {
            rc = orte_session_virtual_map(launch, table.ptrs, mine, &report);
        }
        candidate_table_free(&table);
    }
    if (HERD_SUCCESS != rc) {
        report = (dvm_map_report_t){.job_seq = launch->spec->seq, .status = rc};
    }
    gather_own(dvm, &report);
}

static void queue_arm(dvm_map_queue_t *queue)
{
    static const struct timeval now = {0, 0};
    if (NULL != queue->head) {
        (void) opal_event_add(queue->timer, &now);
    }
}

static void queue_turn(int fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    dvm_map_queue_t *queue = arg;
    dvm_map_item_t *item = queue->head;
    if (NULL == item) {
        return;
    }
    queue->head = item->next;
    if (NULL == queue->head) {
        queue->tail = NULL;
    }
    map_item(item);
    orte_job_launch_free(item->launch);
    free(item);
    queue_arm(queue); /* the next one after the loop polled the sockets */
}

int dvm_map_queue_new(opal_event_base_t *base, dvm_map_queue_t **out)
{
    dvm_map_queue_t *queue = calloc(1, sizeof(*queue));
    if (NULL == queue) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_event_timer_create(base, false, queue_turn, queue, &queue->timer);
    if (HERD_SUCCESS != rc) {
        free(queue);
        return rc;
    }
    *out = queue;
    return HERD_SUCCESS;
}

void dvm_map_queue_free(dvm_map_queue_t *queue)
{
    if (NULL == queue) {
        return;
    }
    while (NULL != queue->head) {
        dvm_map_item_t *item = queue->head;
        queue->head = item->next;
        orte_job_launch_free(item->launch);
        free(item);
    }
    opal_event_free(queue->timer);
    if (queue->rmaps_open) {
        orte_rmaps_base_close();
    }
    free(queue);
}

void dvm_map_only_launch(orte_dvm_t *dvm, orte_job_launch_t *launch)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    int rc = HERD_SUCCESS;
    if (NULL == daemon->map_queue) {
        rc = dvm_map_queue_new(dvm->base, &daemon->map_queue);
        daemon->owns_map_queue = HERD_SUCCESS == rc;
    }
    if (HERD_SUCCESS == rc) {
        rc = gather_start(dvm, launch->spec->seq);
    }
    dvm_map_queue_t *queue = daemon->map_queue;
    if (HERD_SUCCESS == rc && !queue->rmaps_open) {
        rc = orte_rmaps_base_open();
        queue->rmaps_open = HERD_SUCCESS == rc;
    }
    dvm_map_item_t *item = HERD_SUCCESS == rc ? calloc(1, sizeof(*item)) : NULL;
    if (NULL == item) {
        dvm_map_report_t report = {.job_seq = launch->spec->seq,
                                   .status = HERD_SUCCESS != rc ? rc : HERD_ERR_OUT_OF_RESOURCE};
        gather_own(dvm, &report);
        orte_job_launch_free(launch);
        return;
    }
    item->dvm = dvm;
    item->launch = launch;
    if (NULL == queue->tail) {
        queue->head = item;
    } else {
        queue->tail->next = item;
    }
    queue->tail = item;
    queue_arm(queue);
}

void dvm_map_only_release(orte_dvm_t *dvm)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    gather_free(daemon->map_gather);
    daemon->map_gather = NULL;
    dvm_map_queue_t *queue = daemon->map_queue;
    if (NULL == queue) {
        return;
    }
    if (daemon->owns_map_queue) {
        dvm_map_queue_free(queue);
    } else {
        /* a hosted node goes before its host: its maps still queued go with it */
        dvm_map_item_t **link = &queue->head;
        queue->tail = NULL;
        while (NULL != *link) {
            dvm_map_item_t *item = *link;
            if (item->dvm == dvm) {
                *link = item->next;
                orte_job_launch_free(item->launch);
                free(item);
                continue;
            }
            queue->tail = item;
            link = &item->next;
        }
    }
    daemon->map_queue = NULL;
    daemon->owns_map_queue = false;
}

/* ------------------------------------------------------------------------------------------ */
/* the root: reports go to herdrun */

/* A child's subtree of reports: each to herdrun (a malformed message: its sender, and why). */
static void mapped_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    (void) overlay;
    (void) tag;
    const orte_dvm_t *dvm = arg;
    dvm_map_entry_t *entries = NULL;
    uint32_t count = 0;
    char reason[128];
    if (0 == src || NULL == dvm->root.mapped_cb) {
        return;
    }
    if (HERD_SUCCESS !=
        dvm_map_decode(data, length, dvm->size, &entries, &count, reason, sizeof(reason))) {
        dvm->root.mapped_cb(src - 1, NULL, reason, dvm->root.mapped_arg);
        return;
    }
    for (uint32_t i = 0; i < count; ++i) {
        dvm->root.mapped_cb(entries[i].vpid - 1, &entries[i].report, NULL, dvm->root.mapped_arg);
    }
    free(entries);
}

void orte_dvm_root_traffic(const orte_dvm_t *dvm, orte_dvm_traffic_t *traffic)
{
    orte_overlay_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    dvm->ovl->get_stats(dvm->overlay, &stats);
    traffic->ready_seconds = dvm->root.ready_seconds;
    traffic->messages_delivered = stats.messages_delivered;
    traffic->bytes_sent = stats.bytes_sent;
    traffic->bytes_received = stats.bytes_received;
}

int orte_dvm_root_set_mapped_cb(orte_dvm_t *dvm, orte_dvm_mapped_cb_t cb, void *arg)
{
    dvm->root.mapped_cb = cb;
    dvm->root.mapped_arg = arg;
    return dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_MAPPED,
                                   NULL != cb ? mapped_recv : NULL, dvm);
}
