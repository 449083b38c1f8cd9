/* SPDX-License-Identifier: BSD-3-Clause */
/* A node daemon of the DVM (herdd): read the bootstrap, join the DVM (overlay, inventory
 * allgather, ready barrier), start the daemons below it in a tree spawn, serve the root's
 * commands until told to stop or the parent is gone, and report the losses it sees below. Its
 * jobs' session daemons are dvm_jobs.c's. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/orphans.h"

static void daemon_stop(orte_dvm_t *dvm, const char *what, int status)
{
    opal_show_help(DVM_HELP_FILE, "daemon-step-failed", false, dvm->vpid, what,
                   opal_strerror(status));
    dvm->status = status;
    dvm_leave_loop(dvm);
}

/* The next command from the root, as a started xcast. */
static int daemon_await_command(orte_dvm_t *dvm)
{
    return dvm_command_xcast(dvm, NULL, 0);
}

/* A daemon below is gone: tell the root ({vpid, reason}), which decides. */
static void daemon_report_loss(orte_dvm_t *dvm, orte_vpid_t vpid, const char *reason)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, vpid) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, reason)) {
        dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_LOST, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* what the shared code asks of a node daemon (dvm->ops) */

static void daemon_signal(orte_dvm_t *dvm, int signo)
{
    dvm->status = HERD_SUCCESS;
    dvm_leave_loop(dvm);
}

static void daemon_command(orte_dvm_t *dvm, uint32_t command, const uint8_t *payload, size_t len)
{
    if (ORTE_DVM_CMD_LAUNCH == command) {
        dvm_jobs_launch(dvm, payload, len);
    }
    if (ORTE_DVM_CMD_NODE_DOWN == command) {
        dvm_loss_daemon_node_down(dvm, payload, len);
    }
    if (ORTE_DVM_CMD_KILL_JOB == command) {
        dvm_jobs_kill(dvm, payload, len);
    }
    if (ORTE_DVM_CMD_NODE_UP == command) {
        dvm_rejoin_daemon_node_up(dvm, payload, len);
    }
    if (ORTE_DVM_CMD_SHUTDOWN == command) {
        dvm->status = HERD_SUCCESS;
        dvm_leave_loop(dvm);
        return;
    }
    daemon_await_command(dvm);
}

static void daemon_parent_lost(orte_dvm_t *dvm, int status, const char *reason)
{
    /* a DVM that survives a lost daemon: re-attach to an ancestor */
    if (dvm_loss_daemon_reattach(dvm, status, reason)) {
        return;
    }
    /* the DVM above us is gone (or shut down in order): nothing left to serve */
    dvm->status = (HERD_SUCCESS == status) ? HERD_SUCCESS : HERD_ERR_UNREACH;
    if (HERD_SUCCESS != status) {
        opal_show_help(DVM_HELP_FILE, "parent-lost", false, dvm->vpid, reason);
    }
    dvm_leave_loop(dvm);
}

static void daemon_below_lost(orte_dvm_t *dvm, orte_vpid_t vpid, int status, const char *reason)
{
    if (HERD_SUCCESS != status) { /* an orderly close is no loss */
        if (dvm->survive_loss) {
            dvm_loss_route_around(dvm, vpid); /* its children come to us */
        }
        daemon_report_loss(dvm, vpid, reason);
    }
}

/* A process this daemon launched (a child's ssh client) exited while the DVM runs: tell the
 * root, with what it printed, so the user learns which node failed and why. */
static void daemon_below_exited(orte_dvm_t *dvm, orte_plm_daemon_t *d, const char *how)
{
    char reason[4096];
    dvm_relay_drain(dvm, d); /* what it printed goes up on our stderr; the rest comes here */
    char *err = orte_plm_base_read_stderr(d);
    snprintf(reason, sizeof(reason), "its launch command %s%s%s", how,
             (NULL != err && '\0' != err[0]) ? "; it printed: " : "", (NULL != err) ? err : "");
    free(err);
    daemon_report_loss(dvm, d->vpid, reason);
}

static void daemon_reap(orte_dvm_t *dvm)
{
    dvm_jobs_reap(dvm, false);
}

static void daemon_release(orte_dvm_t *dvm)
{
    dvm_jobs_release(dvm);
    dvm_map_only_release(dvm);
    dvm_kinds_release(dvm);
    dvm_loss_daemon_release(dvm);
    dvm_rejoin_daemon_release(dvm);
    free(dvm->daemon.inventory_block);
    dvm->daemon.inventory_block = NULL;
    free(dvm->daemon.inventory_blobs);
    free(dvm->daemon.inventory_lengths);
    dvm->daemon.inventory_blobs = NULL;
    if (NULL != dvm->daemon.stdin_event) {
        opal_event_free(dvm->daemon.stdin_event);
        dvm->daemon.stdin_event = NULL;
    }
}

static const dvm_side_ops_t daemon_ops = {
    .signal = daemon_signal,
    .stop = dvm_leave_loop,
    .command = daemon_command,
    .parent_lost = daemon_parent_lost,
    .below_lost = daemon_below_lost,
    .below_exited = daemon_below_exited,
    .reap = daemon_reap,
    .release = daemon_release,
};

/* ------------------------------------------------------------------------------------------ */
/* events */

/* The launcher's end of stdin (ssh) closed: whoever started us is gone. */
static void daemon_stdin_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (0 == n || (n < 0 && EAGAIN != errno && EINTR != errno)) {
        opal_event_del(dvm->daemon.stdin_event);
        /* a DVM that survives a lost daemon: our launcher was on the lost daemon's node; the
         * overlay says whether the DVM is still there */
        /* a daemon started to rejoin that has not joined yet: the root gave up on it */
        bool joining = dvm_rejoin_daemon_wanted() && NULL == dvm->daemon.inventory_blobs;
        if (!dvm->done && (!dvm->survive_loss || joining)) {
            dvm->status = HERD_ERR_UNREACH;
            dvm_leave_loop(dvm);
        }
    }
}

static void daemon_xml_req(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                           size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    const char *xml = (NULL != dvm->daemon.mine) ? orte_inventory_xml(dvm->daemon.mine) : NULL;
    if (NULL == xml) {
        xml = "";
    }
    dvm->ovl->send(dvm->overlay, src, ORTE_DVM_TAG_XML, xml, strlen(xml));
}

/* Forward loss reports from below to the root unchanged. */
static void daemon_lost_report(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                               const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_LOST, data, length);
}

static void daemon_ready_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the ready barrier", status);
        return;
    }
    dvm_relay_start(dvm);
    status = daemon_await_command(dvm);
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "waiting for commands", status);
    }
}

static void daemon_inventory_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    dvm_daemon_t *daemon = &dvm->daemon;
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the inventory exchange", status);
        return;
    }
    /* every daemon now holds every inventory: kept, packed, for the session daemons' mappers,
     * in one block (a thousand nodes' inventories were a thousand allocations per daemon) */
    size_t total = 0;
    for (uint32_t v = 1; v < result->num_blobs && v < dvm->size; ++v) {
        total += result->blobs[v].len;
    }
    daemon->inventory_blobs = calloc(dvm->size, sizeof(*daemon->inventory_blobs));
    daemon->inventory_lengths = calloc(dvm->size, sizeof(*daemon->inventory_lengths));
    daemon->inventory_block = malloc(total + 1);
    if (NULL == daemon->inventory_blobs || NULL == daemon->inventory_lengths ||
        NULL == daemon->inventory_block) {
        daemon_stop(dvm, "keeping the inventory", HERD_ERR_OUT_OF_RESOURCE);
        return;
    }
    size_t at = 0;
    for (uint32_t v = 1; v < result->num_blobs && v < dvm->size; ++v) {
        daemon->inventory_blobs[v - 1] = daemon->inventory_block + at;
        if (result->blobs[v].len > 0) {
            memcpy(daemon->inventory_block + at, result->blobs[v].data, result->blobs[v].len);
        }
        daemon->inventory_lengths[v - 1] = result->blobs[v].len;
        at += result->blobs[v].len;
    }
    status = dvm->gc->barrier(dvm->grpcomm, DVM_COLL_READY, daemon_ready_cb, dvm);
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the ready barrier", status);
    }
}

/* Hosted simulated nodes: the inventories by kind are in (dvm_kinds.c), in place of the
 * allgather's blobs. */
static void daemon_kinds_done(orte_dvm_t *dvm, int status)
{
    if (HERD_SUCCESS == status) {
        status = dvm->gc->barrier(dvm->grpcomm, DVM_COLL_READY, daemon_ready_cb, dvm);
    }
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the inventory exchange", status);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the daemon's life, step by step */

/* The bootstrap; a daemon started by a local launcher never outlives it. */
static int daemon_read_boot(orte_dvm_t *dvm, bool bootstrap_stdin, dvm_boot_t *boot)
{
    int rc = dvm_boot_read(dvm, bootstrap_stdin, boot);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* even if it is killed with -9 */
    const char *launcher = getenv("HERD_DVM_LAUNCHER_PID");
    if (NULL != launcher) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != (pid_t) strtol(launcher, NULL, 10)) {
            return HERD_ERR_UNREACH; /* it is already gone */
        }
    }
    orte_orphans_adopt();
    return (NULL != boot->plm_name) ? dvm_boot_read_tree_spawn(dvm, boot) : HERD_SUCCESS;
}

/* The runtime, the stdin watch, the message handlers, the listener and the node's session
 * endpoints. */
int dvm_daemon_open(orte_dvm_t *dvm, const dvm_boot_t *boot, bool bootstrap_stdin)
{
    int rc;
    if (HERD_SUCCESS != (rc = dvm_load_vars(dvm)) ||
        HERD_SUCCESS != (rc = dvm_start_runtime(dvm))) {
        return rc;
    }
    if (bootstrap_stdin) {
        fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
        if (HERD_SUCCESS == opal_event_fd_create(dvm->base, STDIN_FILENO,
                                                 OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                                 daemon_stdin_cb, dvm, &dvm->daemon.stdin_event)) {
            opal_event_add(dvm->daemon.stdin_event, NULL);
        }
    }
    if (HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_XML_REQ,
                                                      daemon_xml_req, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_LOST,
                                                      daemon_lost_report, dvm)) ||
        HERD_SUCCESS != (rc = dvm_loss_daemon_open(dvm, boot->parent_uri, boot->ancestors))) {
        return rc;
    }
    if (UINT32_MAX != boot->listen_fd) {
        rc = dvm->ovl->adopt_listener(dvm->overlay, (int) boot->listen_fd, &dvm->uri);
    } else {
        rc = dvm->ovl->listen(dvm->overlay, &dvm->uri);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "cannot-listen", false, dvm->vpid, boot->node,
                       opal_strerror(rc));
        return rc;
    }
    rc = dvm_jobs_bind_endpoints(dvm);
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "no-session-endpoints", false, dvm->vpid, boot->node,
                       strerror(errno));
    }
    return rc;
}

/* Offer the inventory to the allgather, connect to the parent and tell the root. */
int dvm_daemon_join(orte_dvm_t *dvm, const dvm_boot_t *boot)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    bool by_kind = dvm_kinds_wanted(dvm);
    int rc = by_kind ? HERD_SUCCESS : orte_inventory_pack(&buffer, dvm->daemon.mine, false);
    if (HERD_SUCCESS == rc && !by_kind) {
        rc = dvm->gc->allgather(dvm->grpcomm, DVM_COLL_INVENTORY, buffer.base, buffer.used,
                                daemon_inventory_cb, dvm);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = dvm->ovl->connect_parent(dvm->overlay, boot->parent_uri);
    }
    if (HERD_SUCCESS == rc && by_kind) {
        rc = dvm_kinds_start(dvm, daemon_kinds_done);
    }
    if (HERD_SUCCESS == rc) {
        /* queued until the parent connection is up; tells the root this daemon made it */
        rc = dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_JOINED, dvm->uri, strlen(dvm->uri));
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "cannot-join", false, dvm->vpid, boot->node, boot->parent_uri,
                       opal_strerror(rc));
    }
    return rc;
}

/* A tree spawn: start this daemon's children with the launcher that started it. */
static int daemon_start_below(orte_dvm_t *dvm, const dvm_boot_t *boot)
{
    int rc = orte_plm_base_select(dvm->allocation, &dvm->tree.plm);
    if (HERD_SUCCESS == rc) {
        rc = dvm_tree_launch(dvm);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "cannot-start-below", false, dvm->vpid, boot->node,
                       opal_strerror(rc));
    }
    return rc;
}

/* Serve until told to stop or the parent is gone; returns how it ended. */
static int daemon_serve(orte_dvm_t *dvm)
{
    opal_event_base_loop(dvm->base, false);
    int rc = dvm->status;
    /* the daemons this one started go with it: wait for their launchers, then kill */
    dvm->stopping = true;
    if (!dvm_tree_all_gone(dvm)) {
        dvm->done = false;
        dvm_tree_arm_timer(dvm, dvm->vars->shutdown_grace);
        opal_event_base_loop(dvm->base, false);
    }
    return rc;
}

static int daemon_run(orte_dvm_t *dvm, const dvm_boot_t *boot, bool bootstrap_stdin)
{
    /* a daemon restarted to rejoin a running DVM attaches as a leaf: it starts nobody */
    bool rejoin = dvm_rejoin_daemon_wanted();
    int rc = dvm_daemon_open(dvm, boot, bootstrap_stdin);
    if (HERD_SUCCESS == rc) {
        rc = rejoin ? dvm_rejoin_daemon_join(dvm, boot) : dvm_daemon_join(dvm, boot);
    }
    if (HERD_SUCCESS == rc && NULL != boot->plm_name && !rejoin) {
        rc = daemon_start_below(dvm, boot);
    }
    if (HERD_SUCCESS == rc) {
        rc = daemon_serve(dvm);
    }
    return rc;
}

void dvm_daemon_init(orte_dvm_t *dvm)
{
    memset(dvm, 0, sizeof(*dvm));
    dvm->ops = &daemon_ops;
    dvm->next_command = DVM_COLL_FIRST_COMMAND;
    dvm->status = HERD_ERROR;
}

void dvm_daemon_free(orte_dvm_t *dvm)
{
    orte_allocation_free(dvm->allocation);
    dvm->allocation = NULL;
    free(dvm->tree.herdd);
    dvm->tree.herdd = NULL;
    free(dvm->uri);
    dvm->uri = NULL;
    orte_inventory_free(dvm->daemon.mine);
    dvm->daemon.mine = NULL;
}

int orte_dvm_daemon_main(bool bootstrap_stdin)
{
    orte_dvm_t dvm_storage;
    orte_dvm_t *dvm = &dvm_storage;
    dvm_boot_t boot;
    if (!bootstrap_stdin && NULL != getenv(DVM_BOOT_VIRTUAL_COUNT)) {
        return dvm_virtual_host_main(); /* many simulated nodes in this one process */
    }
    dvm_daemon_init(dvm);

    if (HERD_SUCCESS != daemon_read_boot(dvm, bootstrap_stdin, &boot)) {
        return 1;
    }
    if (NULL != boot.topology) {
        /* A simulated node's topology is synthetic: hwloc's discovery plugins (OpenCL, ...)
         * would only cost every daemon the time to load them and their libraries. */
        setenv("HWLOC_PLUGINS_PATH", "/dev/null", 1);
    }
    if (HERD_SUCCESS != opal_mca_init()) {
        return 1;
    }
    int rc =
        orte_inventory_collect(boot.node, boot.topology, boot.fabric_components, &dvm->daemon.mine);
    if (HERD_SUCCESS != rc) {
        opal_show_help(DVM_HELP_FILE, "no-node-topology", false, dvm->vpid, boot.node,
                       opal_strerror(rc));
    } else {
        rc = daemon_run(dvm, &boot, bootstrap_stdin);
        dvm_release_runtime(dvm);
        orte_plm_base_close();
        dvm_daemon_free(dvm);
    }
    opal_mca_finalize();
    return HERD_SUCCESS == rc ? 0 : 1;
}
