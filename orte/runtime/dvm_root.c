/* SPDX-License-Identifier: BSD-3-Clause */
/* The root of the DVM (herd-dvm, and herdrun when it starts its own): start every daemon, gather
 * their inventories (one topology XML per distinct signature), report, write the contact file,
 * serve until asked to stop, forward job errors, and shut the whole DVM down in order. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/orphans.h"
#include "orte/util/radix.h"

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ------------------------------------------------------------------------------------------ */
/* shutdown */

static void put_command(uint8_t header[4], uint32_t command)
{
    header[0] = (uint8_t) (command >> 24);
    header[1] = (uint8_t) (command >> 16);
    header[2] = (uint8_t) (command >> 8);
    header[3] = (uint8_t) command;
}

static void root_begin_shutdown(orte_dvm_t *dvm)
{
    if (dvm->stopping) {
        return;
    }
    dvm->stopping = true;
    dvm->done = false;
    if (!dvm->root.ready ||
        (HERD_SUCCESS != dvm->status && dvm->tree.num_launched + 1 == dvm->size)) {
        /* daemons still starting wait for no command: stop the processes we started, and
         * those they started see their parent go. After a failure, daemons we started
         * ourselves are stopped the same way: the broadcast could not pass the lost one. */
        dvm_tree_terminate(dvm);
    } else if (NULL != dvm->grpcomm && dvm->size > 1) {
        uint8_t command[4];
        put_command(command, ORTE_DVM_CMD_SHUTDOWN);
        dvm_command_xcast(dvm, command, sizeof(command));
    }
    if (dvm_tree_all_gone(dvm)) {
        dvm_leave_loop(dvm);
        return;
    }
    if (NULL != dvm->timer) {
        dvm_tree_arm_timer(dvm, dvm->vars->shutdown_grace);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* what the shared code asks of the root (dvm->ops) */

static void root_signal(orte_dvm_t *dvm, int signo)
{
    if (dvm->stopping) {
        return;
    }
    if (NULL != dvm->root.signal_cb) {
        dvm->root.signal_cb(signo, dvm->root.signal_arg);
        return;
    }
    opal_output_verbose(1, OPAL_OUTPUT_STDERR, "herd-dvm: stopping on signal %d", signo);
    dvm->status = HERD_SUCCESS;
    root_begin_shutdown(dvm);
}

/* A daemon is lost, seen by the root itself or reported from above it (whatever the status:
 * at the root, a connection closing before the shutdown is a loss). */
static void root_below_lost(orte_dvm_t *dvm, orte_vpid_t vpid, int status, const char *reason)
{
    if (dvm->stopping || dvm_loss_is_down(dvm, vpid)) {
        return;
    }
    if (dvm->survive_loss && dvm->root.ready) {
        dvm_loss_root_node_down(dvm, vpid, reason);
        dvm_queue_node_down(dvm, vpid);
        return;
    }
    char where[128];
    dvm_tree_position(dvm, vpid, where, sizeof(where));
    dvm_fail(dvm, "daemon-lost", dvm_tree_node_name(dvm, vpid), where, reason);
}

static void root_below_exited(orte_dvm_t *dvm, orte_plm_daemon_t *d, const char *how)
{
    char where[128];
    dvm_relay_drain(dvm, d);
    dvm_tree_position(dvm, d->vpid, where, sizeof(where));
    if (!dvm->root.ready) {
        /* it never joined: what it printed says why (ssh refused, no such binary...) */
        char *err = orte_plm_base_read_stderr(d);
        dvm_fail(dvm, "daemon-exited", dvm_tree_node_name(dvm, d->vpid), where, how,
                 (NULL != err && '\0' != err[0]) ? err : "(nothing on stderr)");
        free(err);
    } else if (dvm->survive_loss) {
        char reason[160];
        snprintf(reason, sizeof(reason), "its daemon %s", how);
        dvm_loss_root_node_down(dvm, d->vpid, reason);
        dvm_queue_node_down(dvm, d->vpid);
    } else {
        dvm_fail(dvm, "daemon-died", dvm_tree_node_name(dvm, d->vpid), where, how);
    }
}

static const dvm_side_ops_t root_ops = {
    .signal = root_signal,
    .stop = root_begin_shutdown,
    .command = NULL, /* the root's own broadcasts: only the command id advances */
    .parent_lost = NULL,
    .below_lost = root_below_lost,
    .below_exited = root_below_exited,
    .reap = dvm_rejoin_reap, /* the daemons started for rejoins */
    .release = NULL,
};

/* ------------------------------------------------------------------------------------------ */
/* messages from the daemons */

/* A daemon reports that one below it is gone: {vpid, reason}. */
static void root_lost_report(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                             const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    opal_buffer_t buffer;
    uint32_t peer = ORTE_VPID_INVALID;
    char *reason = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS != opal_buffer_load(&buffer, data, length) ||
        HERD_SUCCESS != opal_buffer_unpack_uint32(&buffer, &peer) ||
        HERD_SUCCESS != opal_buffer_unpack_string(&buffer, &reason) || peer >= dvm->size) {
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring a malformed loss report from daemon %u",
                    src);
    } else {
        root_below_lost(dvm, peer, HERD_ERR_UNREACH, NULL != reason ? reason : "");
    }
    free(reason);
    opal_buffer_destruct(&buffer);
}

/* A daemon could not start its part of a job: {jobid, message}. */
static void root_job_error(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    opal_buffer_t buffer;
    char *jobid = NULL, *message = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &jobid) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &message) && NULL != jobid &&
        NULL != message) {
        if (NULL != dvm->root.job_error_cb) {
            dvm->root.job_error_cb(jobid, dvm_tree_node_name(dvm, src), message,
                                   dvm->root.job_error_arg);
        } else {
            fprintf(stderr, "%s", message); /* already a whole help-dvm.txt message */
        }
    } else {
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring a malformed job error from daemon %u",
                    src);
    }
    free(jobid);
    free(message);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* start-up: inventories and the ready barrier */

static void root_check_ready(orte_dvm_t *dvm)
{
    if (dvm->done || dvm->stopping || 0 != dvm->root.xml_pending || !dvm->root.barrier_done) {
        return;
    }
    for (uint32_t v = 1; v < dvm->size; ++v) {
        if (NULL == dvm->root.inventory[v]) {
            return;
        }
    }
    dvm->root.ready_seconds = seconds_since(&dvm->root.started);
    dvm->ovl->get_stats(dvm->overlay, &dvm->root.at_ready);
    dvm->root.ready = true;
    dvm->status = HERD_SUCCESS;
    dvm_relay_start(dvm);
    dvm_leave_loop(dvm);
}

static void root_xml_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                          size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (src == 0 || src >= dvm->size || NULL == dvm->root.inventory[src] ||
        NULL != dvm->root.inventory[src]->xml || 0 == dvm->root.xml_pending) {
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring an unexpected topology from daemon %u",
                    src);
        return;
    }
    char *xml = strndup(data, length);
    if (NULL == xml) {
        dvm_fail(dvm, "out-of-memory");
        return;
    }
    dvm->root.inventory[src]->xml = xml;
    dvm->root.xml_pending--;
    root_check_ready(dvm);
}

static void root_barrier_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(status));
        return;
    }
    dvm->root.barrier_done = true;
    root_check_ready(dvm);
}

/* Ask the first daemon of each distinct topology signature for its full XML. */
static int root_request_xml(orte_dvm_t *dvm)
{
    for (uint32_t v = 1; v < dvm->size; ++v) {
        bool first = true;
        for (uint32_t u = 1; u < v && first; ++u) {
            first =
                0 != strcmp(dvm->root.inventory[u]->signature, dvm->root.inventory[v]->signature);
        }
        if (first) {
            int rc = dvm->ovl->send(dvm->overlay, v, ORTE_DVM_TAG_XML_REQ, NULL, 0);
            if (HERD_SUCCESS != rc) {
                dvm_fail(dvm, "send-failed", dvm_tree_node_name(dvm, v), opal_strerror(rc));
                return rc;
            }
            dvm->root.xml_pending++;
        }
    }
    return HERD_SUCCESS;
}

/* The inventory allgather completed: keep every daemon's inventory; ask for the XMLs; enter the
 * ready barrier. */
static void root_inventory_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(status));
        return;
    }
    dvm->root.inventory_seconds = seconds_since(&dvm->root.started);
    dvm->ovl->get_stats(dvm->overlay, &dvm->root.at_inventory);
    for (uint32_t v = 1; v < result->num_blobs && v < dvm->size; ++v) {
        dvm->root.inventory_bytes += result->blobs[v].len;
    }
    for (uint32_t v = 1; v < result->num_blobs && v < dvm->size; ++v) {
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        int rc = opal_buffer_load(&buffer, result->blobs[v].data, result->blobs[v].len);
        if (HERD_SUCCESS == rc) {
            rc = orte_inventory_unpack(&buffer, &dvm->root.inventory[v]);
        }
        opal_buffer_destruct(&buffer);
        if (HERD_SUCCESS != rc) {
            char where[128];
            dvm_tree_position(dvm, v, where, sizeof(where));
            dvm_fail(dvm, "bad-inventory", dvm_tree_node_name(dvm, v), where, opal_strerror(rc));
            return;
        }
    }
    if (HERD_SUCCESS != root_request_xml(dvm)) {
        return;
    }
    int rc = dvm->gc->barrier(dvm->grpcomm, DVM_COLL_READY, root_barrier_cb, dvm);
    if (HERD_SUCCESS != rc) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(rc));
    }
}

/* Hosted simulated nodes: the inventories came by kind (dvm_kinds.c); each node's is rebuilt
 * here, where the root keeps one per node. */
static void root_kinds_done(orte_dvm_t *dvm, int status)
{
    if (HERD_SUCCESS != status) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(status));
        return;
    }
    dvm->root.inventory_seconds = seconds_since(&dvm->root.started);
    dvm->ovl->get_stats(dvm->overlay, &dvm->root.at_inventory);
    dvm->root.inventory_bytes = dvm_kinds_table_bytes(dvm);
    for (uint32_t v = 1; v < dvm->size; ++v) {
        int rc = dvm_kinds_inventory(dvm, dvm->allocation, v, &dvm->root.inventory[v]);
        if (HERD_SUCCESS != rc) {
            char where[128];
            dvm_tree_position(dvm, v, where, sizeof(where));
            dvm_fail(dvm, "bad-inventory", dvm_tree_node_name(dvm, v), where, opal_strerror(rc));
            return;
        }
    }
    if (HERD_SUCCESS != dvm_kinds_request_xml(dvm)) {
        return;
    }
    int rc = dvm->gc->barrier(dvm->grpcomm, DVM_COLL_READY, root_barrier_cb, dvm);
    if (HERD_SUCCESS != rc) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(rc));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* start-up */

/* The daemon binary: HERD_DVM_HERDD, else herdd beside the running tool, else in PATH. */
static char *find_herdd(void)
{
    const char *env = getenv("HERD_DVM_HERDD");
    if (NULL != env && '\0' != env[0]) {
        return strdup(env);
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len > 0) {
        self[len] = '\0';
        char *slash = strrchr(self, '/');
        if (NULL != slash) {
            /* installed: bin/herdd; build tree: orte/tools/herd-dvm/.libs -> orte/tools/herdd */
            const char *candidates[] = {"/herdd", "/../../herdd/herdd"};
            *slash = '\0';
            for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); ++i) {
                char path[PATH_MAX + 32];
                snprintf(path, sizeof(path), "%s%s", self, candidates[i]);
                if (0 == access(path, X_OK)) {
                    return strdup(path);
                }
            }
        }
    }
    return strdup(HERD_BINDIR "/herdd");
}

/* What the DVM is: the allocation, the tree's shape, the launcher, a fresh id and secret. */
static int root_plan(orte_dvm_t *dvm)
{
    int rc = orte_ras_base_allocate(&dvm->allocation);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (dvm->root.options.display_allocation) {
        orte_allocation_display(stdout, dvm->allocation);
        fflush(stdout);
    }
    dvm->size = dvm->allocation->num_nodes + 1;
    dvm->radix = (uint32_t) dvm->vars->radix;
    rc = orte_plm_base_select(dvm->allocation, &dvm->tree.plm);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (dvm->tree.plm->flat_wireup && dvm->size > 2) {
        dvm->radix = dvm->size - 1; /* every daemon's parent is the root */
    }
    dvm->tree.joined = calloc(dvm->size, sizeof(*dvm->tree.joined));
    dvm->tree.uris = calloc(dvm->size, sizeof(*dvm->tree.uris));
    dvm->root.inventory = calloc(dvm->size, sizeof(*dvm->root.inventory));
    if (NULL == dvm->tree.joined || NULL == dvm->tree.uris || NULL == dvm->root.inventory) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    /* A fresh id and secret per DVM: several DVMs on one host never accept each other. */
    uint8_t id_bytes[8];
    char id_hex[17];
    if (sizeof(id_bytes) != getrandom(id_bytes, sizeof(id_bytes), 0) ||
        sizeof(dvm->secret) != getrandom(dvm->secret, sizeof(dvm->secret), 0)) {
        return HERD_ERR_IN_ERRNO;
    }
    dvm_hex_encode(id_bytes, sizeof(id_bytes), id_hex);
    dvm->id = strdup(id_hex);
    return HERD_SUCCESS;
}

/* The runtime, the root's message handlers, its listener, and its (empty) part of the
 * inventory allgather. */
static int root_open(orte_dvm_t *dvm)
{
    int rc = dvm_start_runtime(dvm);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (HERD_SUCCESS !=
            (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_XML, root_xml_recv, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_LOST,
                                                      root_lost_report, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_JOINED,
                                                      dvm_tree_joined, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_JOB_ERROR,
                                                      root_job_error, dvm)) ||
        HERD_SUCCESS != (rc = dvm_loss_root_open(dvm)) ||
        HERD_SUCCESS != (rc = dvm_queue_open(dvm)) ||
        HERD_SUCCESS != (rc = dvm_rejoin_root_open(dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->listen(dvm->overlay, &dvm->uri))) {
        return rc;
    }
    if (dvm_kinds_wanted(dvm)) {
        return dvm_kinds_start(dvm, root_kinds_done);
    }
    /* the root contributes nothing to the inventory; it has no node of its own */
    return dvm->gc->allgather(dvm->grpcomm, DVM_COLL_INVENTORY, NULL, 0, root_inventory_cb, dvm);
}

int orte_dvm_root_start(const orte_dvm_options_t *options, orte_dvm_t **dvm_out)
{
    int rc;
    orte_dvm_t *dvm = calloc(1, sizeof(*dvm));
    if (NULL == dvm) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    dvm->ops = &root_ops;
    dvm->root.options = *options;
    dvm->root.options.herdd = NULL; /* the resolved path is dvm->tree.herdd */
    orte_orphans_adopt();
    dvm->next_command = DVM_COLL_FIRST_COMMAND;
    dvm->status = HERD_ERROR;
    clock_gettime(CLOCK_MONOTONIC, &dvm->root.started);
    dvm->tree.herdd = (NULL != options->herdd) ? strdup(options->herdd) : find_herdd();

    rc = dvm_load_vars(dvm);
    if (HERD_SUCCESS != rc || HERD_SUCCESS != (rc = root_plan(dvm))) {
        goto err;
    }
    if (NULL == dvm->id) {
        goto err; /* out of memory; rc is HERD_SUCCESS, so it is reported as HERD_ERROR */
    }
    rc = root_open(dvm);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    rc = dvm_tree_launch(dvm);
    if (HERD_SUCCESS != rc) {
        dvm->status = rc;
        root_begin_shutdown(dvm);
        opal_event_base_loop(dvm->base, false);
        goto err;
    }
    dvm->root.launched_seconds = seconds_since(&dvm->root.started);
    dvm_tree_arm_timer(dvm, dvm->vars->startup_timeout);
    opal_event_base_loop(dvm->base, false);
    opal_event_del(dvm->timer);
    if (HERD_SUCCESS != dvm->status || dvm->stopping) {
        /* a failure was reported and the shutdown it began has finished */
        rc = HERD_SUCCESS != dvm->status ? dvm->status : HERD_ERR_SILENT;
        goto err;
    }
    *dvm_out = dvm;
    return HERD_SUCCESS;

err:
    orte_dvm_root_stop(dvm);
    return HERD_SUCCESS == rc ? HERD_ERROR : (HERD_ERR_SILENT == rc ? rc : HERD_ERR_SILENT);
}

/* ------------------------------------------------------------------------------------------ */
/* report and contact file */

static void report_topologies(const orte_dvm_t *dvm, FILE *stream)
{
    fprintf(stream, "Topologies (%u nodes):\n", dvm->allocation->num_nodes);
    for (uint32_t v = 1; v < dvm->size; ++v) {
        const orte_inventory_t *inv = dvm->root.inventory[v];
        if (NULL == inv->xml) {
            continue; /* not the first with this signature */
        }
        uint32_t count = 0;
        for (uint32_t u = 1; u < dvm->size; ++u) {
            count += 0 == strcmp(dvm->root.inventory[u]->signature, inv->signature);
        }
        char summary[128];
        orte_inventory_summary(inv, summary, sizeof(summary));
        fprintf(stream, "  signature %s: %s%s%s%s, %u node%s (first: %s), XML %zu bytes\n",
                inv->signature, summary, NULL != inv->synthetic ? " [" : "",
                NULL != inv->synthetic ? inv->synthetic : "", NULL != inv->synthetic ? "]" : "",
                count, 1 == count ? "" : "s", inv->node_name, strlen(inv->xml));
    }
    fprintf(stream, "Fabric inventory:\n");
    for (uint32_t v = 1; v < dvm->size; ++v) {
        const orte_inventory_t *inv = dvm->root.inventory[v];
        if (0 == inv->num_fabric) {
            fprintf(stream, "  %s: not collected\n", inv->node_name);
            continue;
        }
        fprintf(stream, "  %s:", inv->node_name);
        for (size_t f = 0; f < inv->num_fabric; ++f) {
            fprintf(stream, " %s (%u device%s)%s", inv->fabric[f]->component,
                    inv->fabric[f]->num_devices, 1 == inv->fabric[f]->num_devices ? "" : "s",
                    f + 1 < inv->num_fabric ? "," : "");
        }
        fprintf(stream, "\n");
    }
}

/* What the root's own endpoint carried per start-up phase: it is the busiest daemon (the whole
 * gather comes up to it). */
static void report_root_traffic(const orte_dvm_t *dvm, FILE *stream)
{
    const orte_overlay_stats_t *a = &dvm->root.at_inventory, *b = &dvm->root.at_ready;
    fprintf(stream,
            "DVM root traffic: to the inventory %llu messages, %llu bytes in, %llu bytes out; "
            "to ready %llu messages, %llu bytes in, %llu bytes out\n",
            (unsigned long long) (a->messages_delivered + a->messages_forwarded),
            (unsigned long long) a->bytes_received, (unsigned long long) a->bytes_sent,
            (unsigned long long) (b->messages_delivered + b->messages_forwarded -
                                  a->messages_delivered - a->messages_forwarded),
            (unsigned long long) (b->bytes_received - a->bytes_received),
            (unsigned long long) (b->bytes_sent - a->bytes_sent));
}

void orte_dvm_root_report(orte_dvm_t *dvm, FILE *stream)
{
    uint64_t slots = 0;
    for (uint32_t i = 0; i < dvm->allocation->num_nodes; ++i) {
        slots += dvm->allocation->nodes[i].slots;
    }
    fprintf(stream, "DVM ready: %u node%s, %llu slots, %.2f s\n", dvm->allocation->num_nodes,
            1 == dvm->allocation->num_nodes ? "" : "s", (unsigned long long) slots,
            dvm->root.ready_seconds);
    if (dvm->root.options.display_allocation) {
        uint32_t gather_rounds = 0;
        dvm->gc->rounds(ORTE_GRPCOMM_OP_ALLGATHER, dvm->size, dvm->radix, &gather_rounds);
        fprintf(stream,
                "DVM tree: %u daemons, radix %u, depth %u, broadcast rounds %u, "
                "allgather rounds %u (grpcomm %s, launcher %s)\n",
                dvm->size, dvm->radix, orte_radix_depth(dvm->size, dvm->radix),
                orte_dvm_tree_rounds(dvm), gather_rounds, dvm->gc->name, dvm->tree.plm->name);
        char kinds[64] = "";
        if (NULL != dvm->kinds) {
            snprintf(kinds, sizeof(kinds), " sent as %u kind%s", dvm_kinds_count(dvm),
                     1 == dvm_kinds_count(dvm) ? "" : "s");
        }
        fprintf(stream, "DVM inventory: %u inventories%s, %llu bytes to every daemon\n",
                dvm->size - 1, kinds, (unsigned long long) dvm->root.inventory_bytes);
        fprintf(stream,
                "DVM phases: daemons started %.2f s, inventories gathered %.2f s, ready %.2f s\n",
                dvm->root.launched_seconds, dvm->root.inventory_seconds,
                dvm->root.ready_seconds);
        report_root_traffic(dvm, stream);
    }
    if (dvm->root.options.display_topology) {
        report_topologies(dvm, stream);
    }
    fflush(stream);
}

int orte_dvm_root_write_uri(orte_dvm_t *dvm, const char *path)
{
    char secret_hex[2 * ORTE_DVM_SECRET_LEN + 1];
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int) getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        opal_show_help(DVM_HELP_FILE, "uri-write-failed", true, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    dvm_hex_encode(dvm->secret, sizeof(dvm->secret), secret_hex);
    dprintf(fd, "herd-dvm-uri 1\nid %s\npid %d\nuri %s\nnodes %u\nsecret %s\n", dvm->id,
            (int) getpid(), dvm->uri, dvm->allocation->num_nodes, secret_hex);
    if (NULL != dvm->root.tool_path) {
        dprintf(fd, "tool %s\n", dvm->root.tool_path);
    }
    close(fd);
    if (0 != rename(tmp, path)) {
        opal_show_help(DVM_HELP_FILE, "uri-write-failed", true, path, strerror(errno));
        unlink(tmp);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* serve and stop */

int orte_dvm_root_serve(orte_dvm_t *dvm)
{
    if (dvm->stopping) {
        return dvm->status;
    }
    dvm->done = false;
    dvm->status = HERD_SUCCESS;
    opal_event_base_loop(dvm->base, false);
    return dvm->status;
}

void orte_dvm_root_request_stop(orte_dvm_t *dvm, int status)
{
    dvm->status = status;
    root_begin_shutdown(dvm);
    dvm->status = status;
}

void orte_dvm_root_stop(orte_dvm_t *dvm)
{
    if (NULL == dvm) {
        return;
    }
    if (NULL != dvm->base && dvm->tree.num_launched > 0 && !dvm_tree_all_gone(dvm)) {
        int status = dvm->status;
        dvm->stopping = false;
        root_begin_shutdown(dvm);
        if (!dvm->done) {
            opal_event_base_loop(dvm->base, false);
        }
        dvm->status = status;
    }
    dvm_loss_root_release(dvm);
    dvm_queue_release(dvm);
    dvm_rejoin_root_release(dvm);
    dvm_release_runtime(dvm);
    dvm_kinds_release(dvm);
    for (uint32_t v = 0; NULL != dvm->root.inventory && v < dvm->size; ++v) {
        orte_inventory_free(dvm->root.inventory[v]);
    }
    free(dvm->root.inventory);
    free(dvm->tree.joined);
    for (uint32_t v = 0; NULL != dvm->tree.uris && v < dvm->size; ++v) {
        free(dvm->tree.uris[v]);
    }
    free(dvm->tree.uris);
    orte_allocation_free(dvm->allocation);
    orte_ras_base_close();
    orte_plm_base_close();
    free(dvm->uri);
    free(dvm->id);
    free(dvm->root.tool_path);
    free(dvm->tree.herdd);
    free(dvm);
}

/* ------------------------------------------------------------------------------------------ */
/* for launchers and tools */

opal_event_base_t *orte_dvm_event_base(orte_dvm_t *dvm)
{
    return dvm->base;
}

const orte_allocation_t *orte_dvm_allocation(const orte_dvm_t *dvm)
{
    return dvm->allocation;
}

const orte_inventory_t *orte_dvm_node_inventory(const orte_dvm_t *dvm, uint32_t node_index)
{
    if (NULL == dvm->root.inventory || node_index + 1 >= dvm->size) {
        return NULL;
    }
    return dvm->root.inventory[node_index + 1];
}

uint32_t orte_dvm_radix(const orte_dvm_t *dvm)
{
    return dvm->radix;
}

const char *orte_dvm_id(const orte_dvm_t *dvm)
{
    return dvm->id;
}

uint32_t orte_dvm_tree_rounds(const orte_dvm_t *dvm)
{
    uint32_t rounds = 0;
    if (NULL != dvm->gc &&
        HERD_SUCCESS == dvm->gc->rounds(ORTE_GRPCOMM_OP_XCAST, dvm->size, dvm->radix, &rounds)) {
        return rounds;
    }
    return orte_radix_depth(dvm->size, dvm->radix);
}

uint32_t orte_dvm_next_job_seq(orte_dvm_t *dvm)
{
    return ++dvm->root.next_job_seq;
}

int orte_dvm_root_command(orte_dvm_t *dvm, uint32_t command, const void *data, size_t len)
{
    uint8_t *message = malloc(len + 4);
    if (NULL == message) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    put_command(message, command);
    if (len > 0) {
        memcpy(message + 4, data, len);
    }
    int rc = dvm_command_xcast(dvm, message, len + 4);
    free(message);
    return rc;
}

void orte_dvm_root_set_job_error_cb(orte_dvm_t *dvm, orte_dvm_job_error_cb_t cb, void *arg)
{
    dvm->root.job_error_cb = cb;
    dvm->root.job_error_arg = arg;
}

void orte_dvm_root_set_signal_cb(orte_dvm_t *dvm, orte_dvm_signal_cb_t cb, void *arg)
{
    dvm->root.signal_cb = cb;
    dvm->root.signal_arg = arg;
}

void orte_dvm_root_set_tool_path(orte_dvm_t *dvm, const char *path)
{
    free(dvm->root.tool_path);
    dvm->root.tool_path = (NULL != path) ? strdup(path) : NULL;
}
