/* SPDX-License-Identifier: BSD-3-Clause */
/* The DVM's core, shared by the root and the node daemons: the variables, the runtime both
 * start (event loop, signals, overlay, grpcomm, command broadcasts) and its release; whatever
 * differs between the two sides is reached through dvm->ops (dvm_internal.h). */
#include "herd_config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/orphans.h"

/* ------------------------------------------------------------------------------------------ */
/* variables */

/* dvm_heartbeat_timeout (docs/dvm.md, "Heartbeats", says why this much), and the most it may be
 * (a day: past that, heartbeats are as good as off, which 0 says plainly). */
#define DVM_DEFAULT_HEARTBEAT_TIMEOUT 30
#define DVM_MAX_HEARTBEAT_TIMEOUT     86400

/* The variables' storage: static, because the variable system writes the defaults back into
 * it at finalize, after any orte_dvm_t is gone. */
static dvm_vars_t dvm_vars;

static int register_vars(dvm_vars_t *vars)
{
    vars->startup_timeout = 60;
    vars->radix = 32;
    vars->session_slots = 8;
    vars->fabric_inventory = "auto";
    vars->fabric_components = "all";
    vars->shutdown_grace_ms = 3000;
    vars->on_node_loss = "auto";
    vars->reattach_timeout = 10;
    vars->heartbeat_timeout = DVM_DEFAULT_HEARTBEAT_TIMEOUT;
    const opal_mca_var_def_t defs[] = {
        {.name = "startup_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars->startup_timeout,
         .help = "Seconds every daemon has to start and report its inventory before the DVM "
                 "gives up (herd-dvm --timeout sets it)"},
        {.name = "radix",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars->radix,
         .help = "Fan-out of the DVM's tree: how many daemons each daemon starts (ssh) and "
                 "routes to"},
        {.name = "session_slots",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars->session_slots,
         .help = "Static session endpoints each daemon keeps: how many jobs can run at once on "
                 "a node"},
        {.name = "fabric_inventory",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &vars->fabric_inventory,
         .help = "Which daemons report their node's fabric inventory: all, none, or auto (real "
                 "nodes of a DVM do; simulated nodes share this host's and do not, nor does "
                 "herdrun for a job it runs on this host alone without daemons)"},
        {.name = "fabric_components",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &vars->fabric_components,
         .help = "Which fabric components a daemon reporting its fabric inventory asks: all "
                 "(those the fabric framework selects), or a comma-separated list; herdrun's own "
                 "DVM asks tcp only (enough for RM-assigned tcp endpoints, and cheap: no fabric "
                 "library is loaded)"},
        {.name = "shutdown_grace_ms",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars->shutdown_grace_ms,
         .help = "Milliseconds daemons get to exit after being told to stop before they are "
                 "killed"},
        {.name = "on_node_loss",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &vars->on_node_loss,
         .help = "What a lost daemon (a dead or hung node) does to the DVM: continue (its node "
                 "is down, the tree heals around it, only jobs with processes there are "
                 "affected), stop (the whole DVM stops), or auto (continue for a persistent "
                 "herd-dvm, stop for the DVM herdrun starts for its one job)"},
        {.name = "reattach_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars->reattach_timeout,
         .help = "Seconds the daemons below a lost one have to re-attach to an ancestor before "
                 "their nodes are taken for down too"},
        {.name = "heartbeat_timeout",
         .type = OPAL_MCA_VAR_INT,
         .storage = &vars->heartbeat_timeout,
         .help = "Seconds a daemon (node or session daemon, herdrun) may stay silent before its "
                 "neighbours declare it lost (stopped answering: hung, stopped, frozen node); "
                 "a daemon with nothing to say sends a heartbeat every third of it. 0 switches "
                 "heartbeats off"},
    };
    int rc = opal_mca_var_register_framework_table("dvm", defs, OPAL_MCA_VAR_DEFS_COUNT(defs));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    vars->shutdown_grace = vars->shutdown_grace_ms / 1000.0;
    if (vars->radix < 1) {
        opal_show_help(DVM_HELP_FILE, "bad-radix", true, vars->radix);
        return HERD_ERR_BAD_PARAM;
    }
    if (vars->session_slots < 1 || vars->session_slots > 1024) {
        opal_show_help(DVM_HELP_FILE, "bad-session-slots", true, vars->session_slots);
        return HERD_ERR_BAD_PARAM;
    }
    if (vars->startup_timeout < 1) {
        opal_show_help(DVM_HELP_FILE, "bad-timeout", true, vars->startup_timeout);
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != strcmp(vars->on_node_loss, "auto") && 0 != strcmp(vars->on_node_loss, "continue") &&
        0 != strcmp(vars->on_node_loss, "stop")) {
        opal_show_help(DVM_HELP_FILE, "bad-on-node-loss", true, vars->on_node_loss);
        return HERD_ERR_BAD_PARAM;
    }
    if (vars->reattach_timeout < 1) {
        opal_show_help(DVM_HELP_FILE, "bad-reattach-timeout", true, vars->reattach_timeout);
        return HERD_ERR_BAD_PARAM;
    }
    if (vars->heartbeat_timeout < 0 || vars->heartbeat_timeout > DVM_MAX_HEARTBEAT_TIMEOUT) {
        opal_show_help(DVM_HELP_FILE, "bad-heartbeat-timeout", true, vars->heartbeat_timeout,
                       DVM_MAX_HEARTBEAT_TIMEOUT);
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != strcmp(vars->fabric_inventory, "auto") && 0 != strcmp(vars->fabric_inventory, "all") &&
        0 != strcmp(vars->fabric_inventory, "none")) {
        opal_show_help(DVM_HELP_FILE, "bad-fabric-inventory", true, vars->fabric_inventory);
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

int orte_dvm_register_params(void)
{
    return register_vars(&dvm_vars);
}

/* The variables registered and checked once per process, whoever asks first (the DVM, the
 * overlay of a job, the local inventory): a bad value is said once, not by each of them. */
static int vars_checked(void)
{
    static int status = 1; /* 1: not checked yet */
    if (1 == status) {
        status = register_vars(&dvm_vars);
    }
    return status;
}

int dvm_load_vars(orte_dvm_t *dvm)
{
    int rc = vars_checked();
    dvm->vars = &dvm_vars;
    return rc;
}

int orte_dvm_heartbeat_timeout_ms(uint32_t *ms)
{
    int rc = vars_checked();
    if (HERD_SUCCESS != rc) {
        return HERD_ERR_BAD_PARAM == rc ? HERD_ERR_SILENT : rc;
    }
    *ms = (uint32_t) dvm_vars.heartbeat_timeout * 1000u;
    return HERD_SUCCESS;
}

const char *dvm_fabric_components_of(const char *value)
{
    /* an empty list means nothing narrowed: every component */
    return (NULL == value || '\0' == value[0]) ? "all" : value;
}

const char *orte_dvm_local_fabric_components(void)
{
    /* Only when asked (all): a job on this host alone reaches its peers through shared memory,
     * and opening the fabric framework is a third of a millisecond of every such launch. */
    if (HERD_SUCCESS != vars_checked() || 0 != strcmp(dvm_vars.fabric_inventory, "all")) {
        return NULL;
    }
    return dvm_fabric_components_of(dvm_vars.fabric_components);
}

/* ------------------------------------------------------------------------------------------ */
/* outcome */

void dvm_leave_loop(orte_dvm_t *dvm)
{
    dvm->done = true;
    opal_event_base_stop(dvm->base);
}

void dvm_fail(orte_dvm_t *dvm, const char *topic, ...)
{
    va_list ap;
    if (HERD_SUCCESS != dvm->status && (dvm->done || dvm->stopping)) {
        return; /* the first failure is the one to report; the rest follow from it */
    }
    va_start(ap, topic);
    opal_show_vhelp(DVM_HELP_FILE, topic, true, ap);
    va_end(ap);
    dvm->status = HERD_ERR_SILENT;
    dvm->ops->stop(dvm);
}

void dvm_describe_exit(int wstatus, char *text, size_t size)
{
    if (WIFEXITED(wstatus)) {
        snprintf(text, size, "exited with status %d", WEXITSTATUS(wstatus));
    } else if (WIFSIGNALED(wstatus)) {
        snprintf(text, size, "was killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    } else {
        snprintf(text, size, "stopped");
    }
}

/* ------------------------------------------------------------------------------------------ */
/* signals: SIGCHLD, SIGTERM, SIGINT, SIGHUP reach the loop through a pipe */

/* The processes this one started itself (daemons below it, a node daemon's session daemons):
 * a malloc'd list, *n long (NULL when out of memory). */
static pid_t *known_children(const orte_dvm_t *dvm, size_t *n)
{
    size_t rejoins = dvm_rejoin_num_procs(dvm);
    pid_t *known =
        malloc((dvm->tree.num_launched + dvm->daemon.num_sessions + rejoins + 1) * sizeof(*known));
    *n = 0;
    if (NULL != known) {
        *n = dvm_rejoin_known_pids(dvm, known); /* the daemons the root started for rejoins */
    }
    for (size_t i = 0; NULL != known && i < dvm->tree.num_launched; ++i) {
        if (dvm->tree.launched[i].pid > 0) {
            known[(*n)++] = dvm->tree.launched[i].pid;
        }
    }
    for (size_t i = 0; NULL != known && i < dvm->daemon.num_sessions; ++i) {
        if (dvm->daemon.sessions[i].pid > 0) {
            known[(*n)++] = dvm->daemon.sessions[i].pid;
        }
    }
    return known;
}

static void orphan_grace_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    size_t n;
    pid_t *known = known_children(dvm, &n);
    (void) fd;
    (void) what;
    if (NULL != known) {
        orte_orphans_kill(known, n);
    }
    free(known);
}

/* Anything re-parented to us (we are a subreaper) whose own parent died: a session daemon's
 * processes, a daemon's session daemon. Nobody is left to watch it. It is asked to end first
 * and killed after DVM_ORPHAN_GRACE_MS: a session daemon whose node daemon died tells its
 * herdrun so on its way out, and killed at once it would leave herdrun guessing. */
static void kill_orphans(orte_dvm_t *dvm)
{
    size_t n;
    pid_t *known = known_children(dvm, &n);
    if (NULL == known) {
        return;
    }
    if (orte_orphans_term(known, n) > 0) {
        struct timeval grace = {.tv_sec = DVM_ORPHAN_GRACE_MS / 1000,
                                .tv_usec = (DVM_ORPHAN_GRACE_MS % 1000) * 1000};
        if (NULL == dvm->orphan_timer ||
            HERD_SUCCESS != opal_event_add(dvm->orphan_timer, &grace)) {
            orte_orphans_kill(known, n);
        }
    }
    free(known);
}

static void children_exited(orte_dvm_t *dvm)
{
    dvm_tree_reap(dvm);
    if (NULL != dvm->ops->reap) {
        dvm->ops->reap(dvm);
    }
    kill_orphans(dvm);
    if (dvm->stopping && dvm_tree_all_gone(dvm)) {
        dvm_leave_loop(dvm);
    }
}

static void signal_cb(int signo, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (SIGCHLD == signo) {
        children_exited(dvm);
    } else {
        dvm->ops->signal(dvm, signo);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* overlay and grpcomm */

static int grpcomm_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    orte_dvm_t *dvm = ctx;
    return dvm->ovl->send(dvm->overlay, dst, tag, data, len);
}

static void grpcomm_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm->gc->deliver(dvm->grpcomm, src, tag, data, length);
}

/* A command xcast completed: its first 4 bytes (big-endian) say which command. */
static void command_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    uint32_t command = 0;
    const uint8_t *payload = NULL;
    size_t len = 0;
    if (HERD_SUCCESS != status) {
        return; /* aborted: the loss that caused it is handled where it was seen */
    }
    dvm->next_command++;
    if (result->len >= 4) {
        const uint8_t *p = result->data;
        command = ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
        payload = p + 4;
        len = result->len - 4;
    }
    if (NULL != dvm->ops->command) {
        dvm->ops->command(dvm, command, payload, len);
    }
}

int dvm_command_xcast(orte_dvm_t *dvm, const void *data, size_t len)
{
    return dvm->gc->xcast(dvm->grpcomm, dvm->next_command, data, len, command_cb, dvm);
}

static int start_endpoint(orte_dvm_t *dvm)
{
    orte_overlay_config_t config = {
        .base = dvm->base,
        .vpid = dvm->vpid,
        .num_daemons = dvm->size,
        .radix = dvm->radix,
        .dvm_id = dvm->id,
    };
    memcpy(config.secret, dvm->secret, sizeof(config.secret));
    int rc = orte_dvm_heartbeat_timeout_ms(&config.heartbeat_timeout_ms);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = orte_overlay_base_open();
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_NOT_FOUND == rc) {
            opal_show_help(DVM_HELP_FILE, "no-overlay", true);
            rc = HERD_ERR_SILENT;
        }
        return rc;
    }
    dvm->ovl = orte_overlay_base_module();
    rc = dvm->ovl->init(&config, &dvm->overlay);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = orte_grpcomm_base_open();
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_NOT_FOUND == rc) {
            opal_show_help(DVM_HELP_FILE, "no-grpcomm", true);
            rc = HERD_ERR_SILENT;
        }
        return rc;
    }
    dvm->gc = orte_grpcomm_base_module();
    orte_grpcomm_transport_t transport = {
        .me = dvm->vpid,
        .num_daemons = dvm->size,
        .radix = dvm->radix,
        .send = grpcomm_send,
        .ctx = dvm,
    };
    rc = dvm->gc->create(&transport, &dvm->grpcomm);
    for (uint16_t t = 0; HERD_SUCCESS == rc && t < ORTE_GRPCOMM_NUM_TAGS; ++t) {
        rc = dvm->ovl->register_recv(dvm->overlay, (uint16_t) (ORTE_GRPCOMM_TAG_BASE + t),
                                     grpcomm_recv, dvm);
    }
    return rc;
}

static void flush_cb(int fd, short what, void *arg)
{
}

static void stop_endpoint(orte_dvm_t *dvm)
{
    if (NULL != dvm->grpcomm) {
        dvm->gc->destroy(dvm->grpcomm);
        dvm->grpcomm = NULL;
    }
    if (NULL != dvm->overlay && dvm->hosted) {
        /* the host flushes once for all its nodes, and closes the frameworks last */
        dvm->ovl->finalize(dvm->overlay);
        dvm->overlay = NULL;
        return;
    }
    if (NULL != dvm->overlay) {
        dvm->ovl->finalize(dvm->overlay);
        dvm->overlay = NULL;
        /* let the goodbyes go out before the loop goes away: one round, bounded by a timer
         * because a round with nothing to do would wait forever */
        opal_event_t *flush = NULL;
        struct timeval tv = {.tv_sec = 0, .tv_usec = 2000};
        if (HERD_SUCCESS == opal_event_timer_create(dvm->base, false, flush_cb, NULL, &flush)) {
            opal_event_add(flush, &tv);
            opal_event_base_loop(dvm->base, true);
            opal_event_free(flush);
        }
    }
    orte_grpcomm_base_close();
    orte_overlay_base_close();
}

/* ------------------------------------------------------------------------------------------ */
/* start and release */

int dvm_start_runtime(orte_dvm_t *dvm)
{
    static const int caught[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0};
    /* a hosted node runs on its host's loop, whose signals the host handles */
    int rc = dvm->hosted ? HERD_SUCCESS : opal_event_base_create(&dvm->base);
    if (HERD_SUCCESS == rc && !dvm->hosted) {
        rc = opal_signal_pipe_open(dvm->base, caught, signal_cb, dvm, &dvm->signals);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_event_timer_create(dvm->base, false, dvm_tree_timeout_cb, dvm, &dvm->timer);
    }
    if (HERD_SUCCESS == rc && !dvm->hosted) {
        rc = opal_event_timer_create(dvm->base, false, orphan_grace_cb, dvm, &dvm->orphan_timer);
    }
    if (HERD_SUCCESS == rc) {
        rc = start_endpoint(dvm);
    }
    if (HERD_SUCCESS == rc) {
        dvm->ovl->set_lost_callback(dvm->overlay, dvm_tree_peer_lost, dvm);
    }
    return rc;
}

/* What both sides tear down last: any launched process still there is killed and reaped, then
 * the endpoint, the events and the loop go. */
void dvm_release_runtime(orte_dvm_t *dvm)
{
    dvm_tree_release(dvm);
    if (NULL != dvm->ops->release) {
        dvm->ops->release(dvm);
    }
    if (!dvm->hosted) {
        orte_orphans_kill(NULL, 0); /* a host's orphans may be its other nodes' sessions */
    }
    if (NULL == dvm->base) {
        return;
    }
    stop_endpoint(dvm);
    if (NULL != dvm->timer) {
        opal_event_free(dvm->timer);
        dvm->timer = NULL;
    }
    if (NULL != dvm->orphan_timer) {
        opal_event_free(dvm->orphan_timer);
        dvm->orphan_timer = NULL;
    }
    if (dvm->hosted) {
        dvm->base = NULL; /* the host's */
        return;
    }
    opal_signal_pipe_close(dvm->signals);
    dvm->signals = NULL;
    opal_event_base_free(dvm->base);
    dvm->base = NULL;
}
