/* The DVM's root and daemon sides: start-up (allocation, launch, inventory allgather, one XML
 * per distinct topology), serving commands, failure detection and an orderly shutdown in which
 * nothing is left behind. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/event/signal_pipe.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/grpcomm/grpcomm.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/plm/plm.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/job.h"
#include "orte/runtime/session_wireup.h"
#include "opal/util/jobdb.h"
#include "orte/runtime/session_handoff.h"
#include "orte/util/orphans.h"
#include "orte/util/radix.h"

static const char *help_file = "help-dvm.txt";

/* Collective ids: the inventory allgather; a barrier after which every daemon holds every
 * inventory (what distributed mapping needs); then one xcast per command. */
#define DVM_COLL_INVENTORY 1u
#define DVM_COLL_READY 2u
#define DVM_COLL_FIRST_COMMAND 3u

#define DVM_CMD_SHUTDOWN 1u

/* The DVM's variables (registered by the root and the daemons alike). */
/* A session daemon this daemon started for a job. */
typedef struct dvm_session {
    pid_t pid; /* -1 once reaped */
    uint32_t slot;
    char *jobid;
    char launch_shm[256]; /* the segments it owns, removed here too if it dies without doing so */
    char jobdb_shm[256];
} dvm_session_t;

typedef struct {
    int radix;
    int session_slots;      /* static session endpoints per node */
    int startup_timeout;    /* seconds */
    char *fabric_inventory; /* "auto", "all", "none" */
    char *fabric_components; /* "all" or a list of fabric components to ask */
    int shutdown_grace_ms;  /* before stragglers are killed */
    double shutdown_grace;  /* the same in seconds */
} dvm_vars_t;

struct orte_dvm {
    bool is_root;
    char *id;
    uint8_t secret[ORTE_DVM_SECRET_LEN];
    orte_vpid_t vpid;
    uint32_t size;
    uint32_t radix;
    opal_event_base_t *base;
    const orte_overlay_module_t *ovl;
    orte_overlay_t *overlay;
    const orte_grpcomm_module_t *gc;
    orte_grpcomm_t *grpcomm;
    char *uri;
    const dvm_vars_t *vars; /* the DVM's MCA variables (dvm_vars below) */
    uint32_t next_command; /* id of the next command xcast */
    /* outcome of the event loop */
    bool done;
    int status;
    /* signals arrive through this pipe so they are handled in the loop */
    opal_signal_pipe_t *signals;
    opal_event_t *timer;

    /* root */
    orte_dvm_options_t options;
    const orte_plm_module_t *plm; /* how the daemons are started */
    orte_allocation_t *allocation;
    orte_plm_daemon_t *daemons; /* daemons[i] is vpid i + 1 */
    size_t num_launched;
    bool *joined;                 /* by vpid: said it is connected (ORTE_DVM_TAG_JOINED) */
    orte_inventory_t **inventory; /* by vpid; [0] unused */
    uint32_t xml_pending;
    struct timespec started;
    double ready_seconds;
    bool barrier_done; /* the ready barrier completed */
    bool ready;        /* every daemon reported, every XML arrived, the barrier completed */
    bool stopping; /* shutdown begun */

    uint32_t next_job_seq;                  /* root: number of the next job */
    orte_dvm_job_error_cb_t job_error_cb;   /* root: a daemon could not start a job's part */
    void *job_error_arg;
    char *tool_path;                        /* root: the tool socket, for the contact file */
    orte_dvm_signal_cb_t signal_cb;         /* root: SIGINT/SIGTERM/SIGHUP go here when set */
    void *signal_arg;

    /* daemon */
    orte_inventory_t *mine;
    opal_event_t *stdin_event; /* EOF: the ssh session that started us is gone */
    /* every node's inventory as gathered (packed; a session daemon unpacks what it needs) */
    uint8_t **inventory_blobs; /* by node index (vpid - 1) */
    size_t *inventory_lengths;
    int *session_fds; /* the static session endpoints' listeners, by slot */
    uint32_t num_session_slots;
    dvm_session_t *sessions; /* session daemons started here, running or not yet reaped */
    size_t num_sessions;
};

static int dvm_register_vars(dvm_vars_t *vars);

/* ------------------------------------------------------------------------------------------ */
/* small helpers */

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

static void hex_encode(const uint8_t *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * len] = '\0';
}

static int hex_decode(const char *text, uint8_t *bytes, size_t len)
{
    if (NULL == text || strlen(text) != 2 * len) {
        return HERD_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < len; ++i) {
        unsigned int value;
        if (1 != sscanf(text + 2 * i, "%2x", &value)) {
            return HERD_ERR_BAD_PARAM;
        }
        bytes[i] = (uint8_t) value;
    }
    return HERD_SUCCESS;
}

/* The variables' storage: static, because the variable system writes the defaults back into
 * it at finalize, after any orte_dvm_t is gone. */
static dvm_vars_t dvm_vars;

int orte_dvm_register_params(void)
{
    return dvm_register_vars(&dvm_vars);
}

static int dvm_register_vars(dvm_vars_t *vars)
{
    vars->startup_timeout = 60;
    int rc = opal_mca_var_register_framework(
        "dvm", "startup_timeout",
        "Seconds every daemon has to start and report its inventory before the DVM gives up "
        "(herd-dvm --timeout sets it)",
        OPAL_MCA_VAR_INT, &vars->startup_timeout);
    if (rc < 0) {
        return rc;
    }
    vars->radix = 32;
    rc = opal_mca_var_register_framework(
        "dvm", "radix",
        "Fan-out of the DVM's tree: how many daemons each daemon starts (ssh) and routes to",
        OPAL_MCA_VAR_INT, &vars->radix);
    if (rc < 0) {
        return rc;
    }
    vars->session_slots = 8;
    rc = opal_mca_var_register_framework(
        "dvm", "session_slots",
        "Static session endpoints each daemon keeps: how many jobs can run at once on a node",
        OPAL_MCA_VAR_INT, &vars->session_slots);
    if (rc < 0) {
        return rc;
    }
    vars->fabric_inventory = "auto";
    rc = opal_mca_var_register_framework(
        "dvm", "fabric_inventory",
        "Which daemons report their node's fabric inventory: all, none, or auto (real nodes "
        "of a DVM do; simulated nodes share this host's and do not, nor does herdrun for a job "
        "it runs on this host alone without daemons)",
        OPAL_MCA_VAR_STRING, &vars->fabric_inventory);
    if (rc < 0) {
        return rc;
    }
    vars->fabric_components = "all";
    rc = opal_mca_var_register_framework(
        "dvm", "fabric_components",
        "Which fabric components a daemon reporting its fabric inventory asks: all (those the "
        "fabric framework selects), or a comma-separated list; herdrun's own DVM asks tcp only "
        "(enough for RM-assigned tcp endpoints, and cheap: no fabric library is loaded)",
        OPAL_MCA_VAR_STRING, &vars->fabric_components);
    if (rc < 0) {
        return rc;
    }
    vars->shutdown_grace_ms = 3000;
    rc = opal_mca_var_register_framework(
        "dvm", "shutdown_grace_ms",
        "Milliseconds daemons get to exit after being told to stop before they are killed",
        OPAL_MCA_VAR_INT, &vars->shutdown_grace_ms);
    if (rc < 0) {
        return rc;
    }
    vars->shutdown_grace = vars->shutdown_grace_ms / 1000.0;
    if (vars->radix < 1) {
        opal_show_help(help_file, "bad-radix", true, vars->radix);
        return HERD_ERR_BAD_PARAM;
    }
    if (vars->session_slots < 1 || vars->session_slots > 1024) {
        opal_show_help(help_file, "bad-session-slots", true, vars->session_slots);
        return HERD_ERR_BAD_PARAM;
    }
    if (vars->startup_timeout < 1) {
        opal_show_help(help_file, "bad-timeout", true, vars->startup_timeout);
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != strcmp(vars->fabric_inventory, "auto") && 0 != strcmp(vars->fabric_inventory, "all") &&
        0 != strcmp(vars->fabric_inventory, "none")) {
        opal_show_help(help_file, "bad-fabric-inventory", true, vars->fabric_inventory);
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* signals: SIGCHLD, SIGTERM, SIGINT, SIGHUP reach the loop through a pipe */

static void handle_child_exits(orte_dvm_t *dvm);
static void dvm_fail(orte_dvm_t *dvm, const char *topic, ...);
static void root_begin_shutdown(orte_dvm_t *dvm);

static void signal_cb(int signo, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (SIGCHLD == signo) {
        handle_child_exits(dvm);
    } else if (dvm->is_root && NULL != dvm->signal_cb && !dvm->stopping) {
        dvm->signal_cb(signo, dvm->signal_arg);
    } else if (dvm->is_root) {
        if (dvm->stopping) {
            return;
        }
        opal_output_verbose(1, OPAL_OUTPUT_STDERR, "herd-dvm: stopping on signal %d", signo);
        dvm->status = HERD_SUCCESS;
        root_begin_shutdown(dvm);
    } else {
        dvm->status = HERD_SUCCESS;
        dvm->done = true;
        opal_event_base_stop(dvm->base);
    }
}

static int install_signals(orte_dvm_t *dvm)
{
    static const int caught[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0};
    return opal_signal_pipe_open(dvm->base, caught, signal_cb, dvm, &dvm->signals);
}

static void remove_signals(orte_dvm_t *dvm)
{
    opal_signal_pipe_close(dvm->signals);
    dvm->signals = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* failure reporting */

static const char *node_of(const orte_dvm_t *dvm, orte_vpid_t vpid)
{
    if (0 == vpid) {
        return "the root";
    }
    if (NULL != dvm->allocation && vpid - 1 < dvm->allocation->num_nodes) {
        return dvm->allocation->nodes[vpid - 1].name;
    }
    return "an unknown node";
}

/* "daemon 5, child of 1, depth 2 of 3": where a daemon sits, for failure messages. */
static void tree_position(const orte_dvm_t *dvm, orte_vpid_t vpid, char *text, size_t size)
{
    uint32_t depth = 0;
    for (orte_vpid_t v = vpid; v > 0; v = orte_radix_parent(v, dvm->radix)) {
        ++depth;
    }
    snprintf(text, size, "daemon %u, child of %u, depth %u of %u", vpid,
             orte_radix_parent(vpid, dvm->radix), depth, orte_radix_depth(dvm->size, dvm->radix));
}

static void dvm_fail(orte_dvm_t *dvm, const char *topic, ...)
{
    va_list ap;
    if (HERD_SUCCESS != dvm->status && (dvm->done || dvm->stopping)) {
        return; /* the first failure is the one to report; the rest follow from it */
    }
    va_start(ap, topic);
    opal_show_vhelp(help_file, topic, true, ap);
    va_end(ap);
    dvm->status = HERD_ERR_SILENT;
    if (dvm->is_root) {
        root_begin_shutdown(dvm);
    } else {
        dvm->done = true;
        opal_event_base_stop(dvm->base);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* overlay and grpcomm plumbing, shared by both sides */

static int grpcomm_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    orte_dvm_t *dvm = ctx;
    return dvm->ovl->send(dvm->overlay, dst, tag, data, len);
}

static void grpcomm_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                         const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm->gc->deliver(dvm->grpcomm, src, tag, data, length);
}

static void command_cb(int status, const orte_grpcomm_result_t *result, void *cbdata);
static void daemon_launch(orte_dvm_t *dvm, const uint8_t *data, size_t len);
static void reap_sessions(orte_dvm_t *dvm, bool block);
static void describe_exit(int wstatus, char *text, size_t size);
static void daemon_job_error(orte_dvm_t *dvm, const char *jobid, const char *topic, ...);
static void root_job_error(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                           const void *data, size_t length, void *arg);

/* Daemons wait for the next command from the root as a started xcast. */
static int await_command(orte_dvm_t *dvm)
{
    return dvm->gc->xcast(dvm->grpcomm, dvm->next_command, NULL, 0, command_cb, dvm);
}

static void command_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    uint32_t command = 0;
    if (HERD_SUCCESS != status) {
        return; /* aborted: the loss that caused it is handled where it was seen */
    }
    dvm->next_command++;
    if (result->len >= 4) {
        const uint8_t *p = result->data;
        command = ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) |
                  p[3];
    }
    if (ORTE_DVM_CMD_LAUNCH == command && !dvm->is_root) {
        daemon_launch(dvm, (const uint8_t *) result->data + 4, result->len - 4);
    }
    if (DVM_CMD_SHUTDOWN == command) {
        if (!dvm->is_root) {
            dvm->status = HERD_SUCCESS;
            dvm->done = true;
            opal_event_base_stop(dvm->base);
        }
        return;
    }
    if (!dvm->is_root) {
        await_command(dvm);
    }
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
    int rc = orte_overlay_base_open();
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_NOT_FOUND == rc) {
            opal_show_help(help_file, "no-overlay", true);
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
            opal_show_help(help_file, "no-grpcomm", true);
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

/* What both sides tear down last: any launched process still there is killed and reaped, then
 * the endpoint, the events and the loop go. */
static void release_runtime(orte_dvm_t *dvm)
{
    for (size_t i = 0; i < dvm->num_launched; ++i) {
        orte_plm_daemon_t *d = &dvm->daemons[i];
        if (d->pid > 0) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
        }
        if (d->stderr_fd >= 0) {
            close(d->stderr_fd);
        }
        if (d->stdin_fd >= 0) {
            close(d->stdin_fd);
        }
        opal_argv_free(d->boot);
    }
    free(dvm->daemons);
    dvm->daemons = NULL;
    dvm->num_launched = 0;
    /* session daemons go with their daemon: they kill their processes on SIGTERM */
    for (size_t i = 0; i < dvm->num_sessions; ++i) {
        if (dvm->sessions[i].pid > 0) {
            kill(dvm->sessions[i].pid, SIGTERM);
        }
    }
    reap_sessions(dvm, true);
    free(dvm->sessions);
    dvm->sessions = NULL;
    orte_orphans_kill(NULL, 0);
    for (uint32_t i = 0; NULL != dvm->session_fds && i < dvm->num_session_slots; ++i) {
        if (dvm->session_fds[i] >= 0) {
            close(dvm->session_fds[i]);
        }
    }
    free(dvm->session_fds);
    dvm->session_fds = NULL;
    for (uint32_t i = 0; NULL != dvm->inventory_blobs && i + 1 < dvm->size; ++i) {
        free(dvm->inventory_blobs[i]);
    }
    free(dvm->inventory_blobs);
    free(dvm->inventory_lengths);
    dvm->inventory_blobs = NULL;
    if (NULL == dvm->base) {
        return;
    }
    if (NULL != dvm->stdin_event) {
        opal_event_free(dvm->stdin_event);
    }
    stop_endpoint(dvm);
    if (NULL != dvm->timer) {
        opal_event_free(dvm->timer);
    }
    remove_signals(dvm);
    opal_event_base_free(dvm->base);
    dvm->base = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* root side */

static void root_check_ready(orte_dvm_t *dvm)
{
    if (dvm->done || dvm->stopping || 0 != dvm->xml_pending || !dvm->barrier_done) {
        return;
    }
    for (uint32_t v = 1; v < dvm->size; ++v) {
        if (NULL == dvm->inventory[v]) {
            return;
        }
    }
    dvm->ready_seconds = seconds_since(&dvm->started);
    dvm->ready = true;
    dvm->status = HERD_SUCCESS;
    dvm->done = true;
    opal_event_base_stop(dvm->base);
}

static void root_xml_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                          const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (src == 0 || src >= dvm->size || NULL == dvm->inventory[src] ||
        NULL != dvm->inventory[src]->xml || 0 == dvm->xml_pending) {
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring an unexpected topology from daemon %u",
                    src);
        return;
    }
    char *xml = strndup(data, length);
    if (NULL == xml) {
        dvm_fail(dvm, "out-of-memory");
        return;
    }
    dvm->inventory[src]->xml = xml;
    dvm->xml_pending--;
    root_check_ready(dvm);
}

static void root_barrier_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(status));
        return;
    }
    dvm->barrier_done = true;
    root_check_ready(dvm);
}

/* The inventory allgather completed: keep every daemon's inventory; ask one daemon per
 * distinct topology signature for the full XML; enter the ready barrier. */
static void root_inventory_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(status));
        return;
    }
    for (uint32_t v = 1; v < result->num_blobs && v < dvm->size; ++v) {
        opal_buffer_t buffer;
        opal_buffer_init(&buffer);
        int rc = opal_buffer_load(&buffer, result->blobs[v].data, result->blobs[v].len);
        if (HERD_SUCCESS == rc) {
            rc = orte_inventory_unpack(&buffer, &dvm->inventory[v]);
        }
        opal_buffer_destruct(&buffer);
        if (HERD_SUCCESS != rc) {
            char where[128];
            tree_position(dvm, v, where, sizeof(where));
            dvm_fail(dvm, "bad-inventory", node_of(dvm, v), where, opal_strerror(rc));
            return;
        }
    }
    for (uint32_t v = 1; v < dvm->size; ++v) {
        bool first = true;
        for (uint32_t u = 1; u < v && first; ++u) {
            first = 0 != strcmp(dvm->inventory[u]->signature, dvm->inventory[v]->signature);
        }
        if (first) {
            int rc = dvm->ovl->send(dvm->overlay, v, ORTE_DVM_TAG_XML_REQ, NULL, 0);
            if (HERD_SUCCESS != rc) {
                dvm_fail(dvm, "send-failed", node_of(dvm, v), opal_strerror(rc));
                return;
            }
            dvm->xml_pending++;
        }
    }
    int rc = dvm->gc->barrier(dvm->grpcomm, DVM_COLL_READY, root_barrier_cb, dvm);
    if (HERD_SUCCESS != rc) {
        dvm_fail(dvm, "inventory-failed", opal_strerror(rc));
    }
}

static void root_lost(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                      void *arg)
{
    orte_dvm_t *dvm = arg;
    if (dvm->stopping) {
        return;
    }
    char where[128];
    tree_position(dvm, peer, where, sizeof(where));
    dvm_fail(dvm, "daemon-lost", node_of(dvm, peer), where, reason);
}

/* A daemon reports that one of its children is gone: {vpid, reason}. */
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
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring a malformed loss report from "
                                        "daemon %u", src);
    } else if (!dvm->stopping) {
        char where[128];
        tree_position(dvm, peer, where, sizeof(where));
        dvm_fail(dvm, "daemon-lost", node_of(dvm, peer), where, NULL != reason ? reason : "");
    }
    free(reason);
    opal_buffer_destruct(&buffer);
}

static void root_joined(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                        size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (src > 0 && src < dvm->size) {
        dvm->joined[src] = true;
    }
}

static void describe_exit(int wstatus, char *text, size_t size)
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

static bool all_launched_gone(const orte_dvm_t *dvm)
{
    for (size_t i = 0; i < dvm->num_launched; ++i) {
        if (dvm->daemons[i].pid > 0) {
            return false;
        }
    }
    return true;
}

static void daemon_report_child(orte_dvm_t *dvm, orte_plm_daemon_t *d, const char *how);

/* Reap the session daemons that exited (all of them, waiting, when block) and remove what they
 * should have removed themselves: a session daemon killed with -9 cannot unlink its segments. */
static void reap_sessions(orte_dvm_t *dvm, bool block)
{
    for (size_t i = 0; i < dvm->num_sessions; ++i) {
        dvm_session_t *s = &dvm->sessions[i];
        int wstatus = 0;
        if (s->pid <= 0 || waitpid(s->pid, &wstatus, block ? 0 : WNOHANG) <= 0) {
            continue;
        }
        pid_t reaped = s->pid;
        s->pid = -1;
        if (!block && !dvm->is_root && !(WIFEXITED(wstatus) && 0 == WEXITSTATUS(wstatus)) &&
            !dvm->stopping) {
            /* it may have died before reaching anyone of its job: say so, or nobody will */
            char how[128];
            describe_exit(wstatus, how, sizeof(how));
            daemon_job_error(dvm, s->jobid, "session-died", s->jobid, dvm->mine->node_name, how);
        }
        orte_session_wireup_reaped(reaped, wstatus);
        shm_unlink(s->launch_shm);
        shm_unlink(s->jobdb_shm);
    }
    /* forget the reaped ones */
    size_t kept = 0;
    for (size_t i = 0; i < dvm->num_sessions; ++i) {
        if (dvm->sessions[i].pid > 0) {
            dvm->sessions[kept++] = dvm->sessions[i];
        } else {
            free(dvm->sessions[i].jobid);
        }
    }
    dvm->num_sessions = kept;
}

/* Anything re-parented to us (we are a subreaper) whose own parent died: a session daemon's
 * processes, a daemon's session daemon. Nobody is left to watch it. */
static void kill_orphans(orte_dvm_t *dvm)
{
    size_t n = 0;
    pid_t *known = malloc((dvm->num_launched + dvm->num_sessions + 1) * sizeof(*known));
    if (NULL == known) {
        return;
    }
    for (size_t i = 0; i < dvm->num_launched; ++i) {
        if (dvm->daemons[i].pid > 0) {
            known[n++] = dvm->daemons[i].pid;
        }
    }
    for (size_t i = 0; i < dvm->num_sessions; ++i) {
        if (dvm->sessions[i].pid > 0) {
            known[n++] = dvm->sessions[i].pid;
        }
    }
    orte_orphans_kill(known, n);
    free(known);
}

static void handle_child_exits(orte_dvm_t *dvm)
{
    /* only the processes this DVM launched: waitpid(-1) would take exits meant for others
     * in the same process (odls's children in a session daemon) */
    for (size_t i = 0; i < dvm->num_launched; ++i) {
        orte_plm_daemon_t *d = &dvm->daemons[i];
        int wstatus;
        if (d->pid <= 0 || waitpid(d->pid, &wstatus, WNOHANG) <= 0) {
            continue;
        }
        if (!dvm->stopping) {
            char how[128], where[128];
            describe_exit(wstatus, how, sizeof(how));
            tree_position(dvm, d->vpid, where, sizeof(where));
            if (!dvm->is_root) {
                daemon_report_child(dvm, d, how);
            } else if (!dvm->ready) {
                /* it never joined: what it printed says why (ssh refused, no such binary...) */
                char *err = orte_plm_base_read_stderr(d);
                dvm_fail(dvm, "daemon-exited", node_of(dvm, d->vpid), where, how,
                         (NULL != err && '\0' != err[0]) ? err : "(nothing on stderr)");
                free(err);
            } else {
                dvm_fail(dvm, "daemon-died", node_of(dvm, d->vpid), where, how);
            }
        }
        d->pid = -1;
    }
    reap_sessions(dvm, false);
    kill_orphans(dvm);
    if (dvm->stopping && all_launched_gone(dvm)) {
        dvm->done = true;
        opal_event_base_stop(dvm->base);
    }
}

static void timeout_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    if (dvm->stopping) {
        /* stragglers: they had their grace period */
        for (size_t i = 0; i < dvm->num_launched; ++i) {
            if (dvm->daemons[i].pid > 0) {
                kill(dvm->daemons[i].pid, SIGKILL);
            }
        }
        return;
    }
    /* start-up took too long: say who never connected, or that the exchange stalled */
    char **missing = NULL;
    size_t num_missing = 0;
    for (uint32_t v = 1; v < dvm->size; ++v) {
        if (!dvm->joined[v] && num_missing++ < 10) {
            opal_argv_append(&missing, node_of(dvm, v));
        }
    }
    if (num_missing > 10) {
        opal_argv_append(&missing, "...");
    }
    char *list = opal_argv_join(missing, ',');
    char seconds[32], count[32];
    snprintf(seconds, sizeof(seconds), "%d", dvm->vars->startup_timeout);
    snprintf(count, sizeof(count), "%zu", num_missing);
    if (num_missing > 0) {
        dvm_fail(dvm, "startup-timeout", seconds, count, NULL != list ? list : "");
    } else {
        dvm_fail(dvm, "startup-stalled", seconds);
    }
    free(list);
    opal_argv_free(missing);
}

static void arm_timer(orte_dvm_t *dvm, double seconds)
{
    struct timeval tv = {.tv_sec = (time_t) seconds,
                         .tv_usec = (suseconds_t) ((seconds - (double) (time_t) seconds) * 1e6)};
    opal_event_del(dvm->timer);
    opal_event_add(dvm->timer, &tv);
}

static void root_begin_shutdown(orte_dvm_t *dvm)
{
    if (dvm->stopping) {
        return;
    }
    dvm->stopping = true;
    dvm->done = false;
    if (!dvm->ready || (HERD_SUCCESS != dvm->status && dvm->num_launched + 1 == dvm->size)) {
        /* daemons still starting wait for no command: stop the processes we started, and
         * those they started see their parent go. After a failure, daemons we started
         * ourselves are stopped the same way: the broadcast could not pass the lost one. */
        for (size_t i = 0; i < dvm->num_launched; ++i) {
            if (dvm->daemons[i].pid > 0) {
                kill(dvm->daemons[i].pid, SIGTERM);
            }
        }
    } else if (NULL != dvm->grpcomm && dvm->size > 1) {
        uint8_t command[4] = {0, 0, 0, DVM_CMD_SHUTDOWN};
        dvm->gc->xcast(dvm->grpcomm, dvm->next_command, command, sizeof(command), command_cb,
                       dvm);
    }
    if (all_launched_gone(dvm)) {
        dvm->done = true;
        opal_event_base_stop(dvm->base);
        return;
    }
    if (NULL != dvm->timer) {
        arm_timer(dvm, dvm->vars->shutdown_grace);
    }
}

/* Listeners for daemons on this host, bound before any daemon starts so every daemon's URI
 * (and so its parent's) is known up front. */
static int prebind(orte_dvm_t *dvm, orte_plm_daemon_t *d, char **uri)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    if (0 != bind(fd, (struct sockaddr *) &addr, sizeof(addr)) || 0 != listen(fd, 128) ||
        0 != getsockname(fd, (struct sockaddr *) &addr, &len)) {
        close(fd);
        return HERD_ERR_IN_ERRNO;
    }
    char text[64];
    snprintf(text, sizeof(text), "tcp://127.0.0.1:%u", ntohs(addr.sin_port));
    *uri = strdup(text);
    d->listen_fd = fd;
    return NULL != *uri ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

static const char *fabric_components_of(const char *value)
{
    /* an empty list means nothing narrowed: every component */
    return (NULL == value || '\0' == value[0]) ? "all" : value;
}

const char *orte_dvm_local_fabric_components(void)
{
    /* Only when asked (all): a job on this host alone reaches its peers through shared memory,
     * and opening the fabric framework is a third of a millisecond of every such launch. */
    if (HERD_SUCCESS != dvm_register_vars(&dvm_vars) ||
        0 != strcmp(dvm_vars.fabric_inventory, "all")) {
        return NULL;
    }
    return fabric_components_of(dvm_vars.fabric_components);
}

static bool want_fabric(const orte_dvm_t *dvm, const orte_node_t *node)
{
    if (0 == strcmp(dvm->vars->fabric_inventory, "all")) {
        return true;
    }
    if (0 == strcmp(dvm->vars->fabric_inventory, "none")) {
        return false;
    }
    return NULL == node->topology; /* auto: real nodes report theirs */
}

static int boot_set(char ***boot, const char *key, const char *value)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *entry = malloc(len);
    if (NULL == entry) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    snprintf(entry, len, "%s=%s", key, value);
    int rc = opal_argv_append(boot, entry);
    free(entry);
    return rc;
}

/* The bootstrap of daemon d, whose parent listens at parent_uri. For a tree spawn the daemon
 * also gets the launcher's name, the allocation and the daemon path, to start its own
 * children. */
static int build_boot(const orte_dvm_t *dvm, orte_plm_daemon_t *d, const char *parent_uri,
                      const orte_plm_module_t *plm, const char *allocation_hex)
{
    char secret_hex[2 * ORTE_DVM_SECRET_LEN + 1];
    char number[32];
    char ***boot = &d->boot;
    int rc;
    hex_encode(dvm->secret, sizeof(dvm->secret), secret_hex);
    if (HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_DVM_ID, dvm->id)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_SECRET, secret_hex)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_NODE, d->node->name)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_PARENT_URI, parent_uri)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_FABRIC,
                                       want_fabric(dvm, d->node)
                                           ? fabric_components_of(dvm->vars->fabric_components)
                                           : "0"))) {
        return rc;
    }
    const struct {
        const char *key;
        uint32_t value;
    } numbers[] = {{ORTE_BOOT_VPID, d->vpid}, {ORTE_BOOT_SIZE, dvm->size},
                   {ORTE_BOOT_RADIX, dvm->radix}};
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); ++i) {
        snprintf(number, sizeof(number), "%u", numbers[i].value);
        if (HERD_SUCCESS != (rc = boot_set(boot, numbers[i].key, number))) {
            return rc;
        }
    }
    if (NULL != d->node->topology &&
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_TOPOLOGY, d->node->topology))) {
        return rc;
    }
    if (d->listen_fd >= 0) {
        snprintf(number, sizeof(number), "%d", d->listen_fd);
        if (HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_LISTEN_FD, number))) {
            return rc;
        }
    }
    /* the user's MCA settings apply to every daemon; ssh does not carry the environment */
    extern char **environ;
    for (char **e = environ; NULL != *e; ++e) {
        if ((0 == strncmp(*e, "HERD_MCA_", 9) || 0 == strncmp(*e, "HERD_HELP_PATH=", 15)) &&
            HERD_SUCCESS != (rc = opal_argv_append(boot, *e))) {
            return rc;
        }
    }
    if (plm->tree_spawn && (HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_PLM, plm->name)) ||
                            HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_ALLOCATION,
                                                           allocation_hex)) ||
                            HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_HERDD,
                                                           dvm->options.herdd)))) {
        return rc;
    }
    return HERD_SUCCESS;
}

/* The allocation as one hex string, for a tree spawn's bootstrap. */
static char *allocation_to_hex(const orte_allocation_t *allocation)
{
    opal_buffer_t buffer;
    char *hex = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == orte_allocation_pack(&buffer, allocation)) {
        hex = malloc(2 * buffer.used + 1);
        if (NULL != hex) {
            hex_encode(buffer.base, buffer.used, hex);
        }
    }
    opal_buffer_destruct(&buffer);
    return hex;
}

static int allocation_from_hex(const char *hex, orte_allocation_t **allocation)
{
    size_t len = (NULL != hex) ? strlen(hex) / 2 : 0;
    uint8_t *bytes = malloc(len + 1);
    opal_buffer_t buffer;
    int rc = (NULL == bytes) ? HERD_ERR_OUT_OF_RESOURCE : hex_decode(hex, bytes, len);
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_load(&buffer, bytes, len);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_allocation_unpack(&buffer, allocation);
    }
    opal_buffer_destruct(&buffer);
    free(bytes);
    return rc;
}

/* Start the daemons this process is responsible for: every daemon when the launcher pre-binds
 * (all on this host), else this process's children in the tree (a tree spawn starts the rest
 * from below). */
static int launch_children(orte_dvm_t *dvm, const orte_plm_module_t *plm)
{
    char **uris = NULL; /* parent URIs, by index into dvm->daemons */
    char *allocation_hex = NULL;
    orte_vpid_t children[1024];
    uint32_t count;
    int rc = HERD_SUCCESS;

    if (plm->tree_spawn) {
        count = orte_radix_children(dvm->vpid, dvm->size, dvm->radix < 1024 ? dvm->radix : 1024,
                                    children);
        allocation_hex = allocation_to_hex(dvm->allocation);
        if (NULL == allocation_hex) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    } else {
        count = dvm->size - 1; /* vpids 1..n-1, all from here */
    }
    if (0 == count) {
        free(allocation_hex);
        return HERD_SUCCESS;
    }
    dvm->daemons = calloc(count, sizeof(*dvm->daemons));
    uris = calloc(count, sizeof(*uris));
    if (NULL == dvm->daemons || NULL == uris) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t i = 0; i < count; ++i) {
        orte_vpid_t vpid = plm->tree_spawn ? children[i] : i + 1;
        dvm->daemons[i] = (orte_plm_daemon_t){.vpid = vpid,
                                              .node = &dvm->allocation->nodes[vpid - 1],
                                              .listen_fd = -1, .pid = -1, .stderr_fd = -1,
                                              .stdin_fd = -1};
        dvm->num_launched = i + 1; /* from here on, release_runtime() cleans it up */
        if (plm->prebinds_listeners) {
            rc = prebind(dvm, &dvm->daemons[i], &uris[i]);
            if (HERD_SUCCESS != rc) {
                opal_show_help(help_file, "prebind-failed", true, vpid, strerror(errno));
                rc = HERD_ERR_SILENT;
                goto out;
            }
        }
    }
    for (uint32_t i = 0; i < count && HERD_SUCCESS == rc; ++i) {
        orte_plm_daemon_t *d = &dvm->daemons[i];
        orte_vpid_t parent = orte_radix_parent(d->vpid, dvm->radix);
        /* pre-bound: every URI is known; else the parent is this process */
        const char *parent_uri = (parent == dvm->vpid) ? dvm->uri : uris[parent - 1];
        rc = build_boot(dvm, d, parent_uri, plm, allocation_hex);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    rc = plm->launch(dvm->daemons, count, dvm->options.herdd);
    if (HERD_SUCCESS != rc) {
        int saved = errno;
        const char *node = "?";
        for (uint32_t i = 0; i < count; ++i) {
            if (dvm->daemons[i].pid < 0) {
                node = dvm->daemons[i].node->name;
                break;
            }
        }
        opal_show_help(help_file, "launch-failed", true, node, plm->name, dvm->options.herdd,
                       HERD_ERR_IN_ERRNO == rc ? strerror(saved) : opal_strerror(rc));
        rc = HERD_ERR_SILENT;
    }

out:
    /* the daemons have their listeners now; this process must not keep them open */
    for (uint32_t i = 0; NULL != dvm->daemons && i < count; ++i) {
        if (dvm->daemons[i].listen_fd >= 0) {
            close(dvm->daemons[i].listen_fd);
            dvm->daemons[i].listen_fd = -1;
        }
        free(NULL != uris ? uris[i] : NULL);
    }
    free(uris);
    free(allocation_hex);
    return rc;
}

static int root_launch(orte_dvm_t *dvm)
{
    return launch_children(dvm, dvm->plm);
}

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

int orte_dvm_root_start(const orte_dvm_options_t *options, orte_dvm_t **dvm_out)
{
    int rc;
    orte_dvm_t *dvm = calloc(1, sizeof(*dvm));
    if (NULL == dvm) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    dvm->is_root = true;
    dvm->options = *options;
    orte_orphans_adopt();
    dvm->next_command = DVM_COLL_FIRST_COMMAND;
    dvm->status = HERD_ERROR;
    clock_gettime(CLOCK_MONOTONIC, &dvm->started);
    char *herdd = (NULL != options->herdd) ? strdup(options->herdd) : find_herdd();
    dvm->options.herdd = herdd;

    rc = dvm_register_vars(&dvm_vars);
    dvm->vars = &dvm_vars;
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    rc = orte_ras_base_allocate(&dvm->allocation);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    if (dvm->options.display_allocation) {
        orte_allocation_display(stdout, dvm->allocation);
        fflush(stdout);
    }
    dvm->size = dvm->allocation->num_nodes + 1;
    dvm->radix = (uint32_t) dvm->vars->radix;
    rc = orte_plm_base_select(dvm->allocation, &dvm->plm);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    if (dvm->plm->flat_wireup && dvm->size > 2) {
        dvm->radix = dvm->size - 1; /* every daemon's parent is the root */
    }
    dvm->joined = calloc(dvm->size, sizeof(*dvm->joined));
    dvm->inventory = calloc(dvm->size, sizeof(*dvm->inventory));
    if (NULL == dvm->joined || NULL == dvm->inventory) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err;
    }
    /* A fresh id and secret per DVM: several DVMs on one host never accept each other. */
    uint8_t id_bytes[8];
    char id_hex[17];
    if (sizeof(id_bytes) != getrandom(id_bytes, sizeof(id_bytes), 0) ||
        sizeof(dvm->secret) != getrandom(dvm->secret, sizeof(dvm->secret), 0)) {
        rc = HERD_ERR_IN_ERRNO;
        goto err;
    }
    hex_encode(id_bytes, sizeof(id_bytes), id_hex);
    dvm->id = strdup(id_hex);
    rc = opal_event_base_create(&dvm->base);
    if (HERD_SUCCESS != rc || NULL == dvm->id) {
        goto err;
    }
    rc = install_signals(dvm);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    rc = opal_event_timer_create(dvm->base, false, timeout_cb, dvm, &dvm->timer);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    rc = start_endpoint(dvm);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    dvm->ovl->set_lost_callback(dvm->overlay, root_lost, dvm);
    if (HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_XML,
                                                      root_xml_recv, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_LOST,
                                                      root_lost_report, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_JOINED,
                                                      root_joined, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_JOB_ERROR,
                                                      root_job_error, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->listen(dvm->overlay, &dvm->uri))) {
        goto err;
    }
    /* the root contributes nothing to the inventory; it has no node of its own */
    rc = dvm->gc->allgather(dvm->grpcomm, DVM_COLL_INVENTORY, NULL, 0, root_inventory_cb, dvm);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    rc = root_launch(dvm);
    if (HERD_SUCCESS != rc) {
        dvm->status = rc;
        root_begin_shutdown(dvm);
        opal_event_base_loop(dvm->base, false);
        goto err;
    }
    arm_timer(dvm, dvm->vars->startup_timeout);
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

void orte_dvm_root_report(orte_dvm_t *dvm, FILE *stream)
{
    uint64_t slots = 0;
    for (uint32_t i = 0; i < dvm->allocation->num_nodes; ++i) {
        slots += dvm->allocation->nodes[i].slots;
    }
    fprintf(stream, "DVM ready: %u node%s, %llu slots, %.2f s\n", dvm->allocation->num_nodes,
            1 == dvm->allocation->num_nodes ? "" : "s", (unsigned long long) slots,
            dvm->ready_seconds);
    if (dvm->options.display_allocation) {
        uint32_t gather_rounds = 0;
        dvm->gc->rounds(ORTE_GRPCOMM_OP_ALLGATHER, dvm->size, dvm->radix, &gather_rounds);
        fprintf(stream, "DVM tree: %u daemons, radix %u, depth %u, broadcast rounds %u, "
                        "allgather rounds %u (grpcomm %s, launcher %s)\n",
                dvm->size, dvm->radix, orte_radix_depth(dvm->size, dvm->radix),
                orte_dvm_tree_rounds(dvm), gather_rounds, dvm->gc->name, dvm->plm->name);
    }
    if (dvm->options.display_topology) {
        fprintf(stream, "Topologies (%u nodes):\n", dvm->allocation->num_nodes);
        for (uint32_t v = 1; v < dvm->size; ++v) {
            const orte_inventory_t *inv = dvm->inventory[v];
            if (NULL == inv->xml) {
                continue; /* not the first with this signature */
            }
            uint32_t count = 0;
            for (uint32_t u = 1; u < dvm->size; ++u) {
                count += 0 == strcmp(dvm->inventory[u]->signature, inv->signature);
            }
            char summary[128];
            orte_inventory_summary(inv, summary, sizeof(summary));
            fprintf(stream, "  signature %s: %s%s%s%s, %u node%s (first: %s), XML %zu bytes\n",
                    inv->signature, summary, NULL != inv->synthetic ? " [" : "",
                    NULL != inv->synthetic ? inv->synthetic : "",
                    NULL != inv->synthetic ? "]" : "", count, 1 == count ? "" : "s",
                    inv->node_name, strlen(inv->xml));
        }
        fprintf(stream, "Fabric inventory:\n");
        for (uint32_t v = 1; v < dvm->size; ++v) {
            const orte_inventory_t *inv = dvm->inventory[v];
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
    fflush(stream);
}

int orte_dvm_root_write_uri(orte_dvm_t *dvm, const char *path)
{
    char secret_hex[2 * ORTE_DVM_SECRET_LEN + 1];
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int) getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        opal_show_help(help_file, "uri-write-failed", true, path, strerror(errno));
        return HERD_ERR_SILENT;
    }
    hex_encode(dvm->secret, sizeof(dvm->secret), secret_hex);
    dprintf(fd, "herd-dvm-uri 1\nid %s\npid %d\nuri %s\nnodes %u\nsecret %s\n", dvm->id,
            (int) getpid(), dvm->uri, dvm->allocation->num_nodes, secret_hex);
    if (NULL != dvm->tool_path) {
        dprintf(fd, "tool %s\n", dvm->tool_path);
    }
    close(fd);
    if (0 != rename(tmp, path)) {
        opal_show_help(help_file, "uri-write-failed", true, path, strerror(errno));
        unlink(tmp);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

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

void orte_dvm_root_stop(orte_dvm_t *dvm)
{
    if (NULL == dvm) {
        return;
    }
    if (NULL != dvm->base && dvm->num_launched > 0 && !all_launched_gone(dvm)) {
        int status = dvm->status;
        dvm->stopping = false;
        root_begin_shutdown(dvm);
        if (!dvm->done) {
            opal_event_base_loop(dvm->base, false);
        }
        dvm->status = status;
    }
    release_runtime(dvm);
    for (uint32_t v = 0; NULL != dvm->inventory && v < dvm->size; ++v) {
        orte_inventory_free(dvm->inventory[v]);
    }
    free(dvm->inventory);
    free(dvm->joined);
    orte_allocation_free(dvm->allocation);
    orte_ras_base_close();
    orte_plm_base_close();
    free(dvm->uri);
    free(dvm->id);
    free(dvm->tool_path);
    free((char *) dvm->options.herdd);
    free(dvm);
}

uint32_t orte_dvm_tree_rounds(const orte_dvm_t *dvm)
{
    uint32_t rounds = 0;
    if (NULL != dvm->gc && HERD_SUCCESS == dvm->gc->rounds(ORTE_GRPCOMM_OP_XCAST, dvm->size,
                                                           dvm->radix, &rounds)) {
        return rounds;
    }
    return orte_radix_depth(dvm->size, dvm->radix);
}

/* ------------------------------------------------------------------------------------------ */
/* daemon side */

/* `herdd --bootstrap-stdin`: KEY=VALUE lines up to an empty line or EOF become environment
 * variables (ssh cannot be trusted to pass the environment, and argv is public). */
static int read_bootstrap_stdin(void)
{
    char line[8192];
    while (NULL != fgets(line, sizeof(line), stdin)) {
        size_t len = strlen(line);
        while (len > 0 && ('\n' == line[len - 1] || '\r' == line[len - 1])) {
            line[--len] = '\0';
        }
        if (0 == len) {
            return HERD_SUCCESS;
        }
        char *eq = strchr(line, '=');
        if (NULL == eq || eq == line) {
            fprintf(stderr, "herdd: malformed bootstrap line (expected KEY=VALUE)\n");
            return HERD_ERR_BAD_PARAM;
        }
        *eq = '\0';
        setenv(line, eq + 1, 1);
    }
    return HERD_SUCCESS;
}

static int boot_uint(const char *key, uint32_t *value)
{
    const char *text = getenv(key);
    char *end = NULL;
    unsigned long v = (NULL != text) ? strtoul(text, &end, 10) : 0;
    if (NULL == text || '\0' == text[0] || NULL == end || '\0' != *end || v > UINT32_MAX) {
        fprintf(stderr, "herdd: %s is missing or not a number; herdd is started by herd-dvm or "
                        "herdrun, not by hand\n", key);
        return HERD_ERR_BAD_PARAM;
    }
    *value = (uint32_t) v;
    return HERD_SUCCESS;
}

/* A process this daemon launched (a child's ssh client) exited while the DVM runs: tell the
 * root, with what it printed, so the user learns which node failed and why. */
static void daemon_report_child(orte_dvm_t *dvm, orte_plm_daemon_t *d, const char *how)
{
    char reason[4096];
    char *err = orte_plm_base_read_stderr(d);
    snprintf(reason, sizeof(reason), "its launch command %s%s%s", how,
             (NULL != err && '\0' != err[0]) ? "; it printed: " : "",
             (NULL != err) ? err : "");
    free(err);
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, d->vpid) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, reason)) {
        dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_LOST, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

/* The launcher's end of stdin (ssh) closed: whoever started us is gone. */
static void daemon_stdin_cb(int fd, short what, void *arg)
{
    orte_dvm_t *dvm = arg;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (0 == n || (n < 0 && EAGAIN != errno && EINTR != errno)) {
        opal_event_del(dvm->stdin_event);
        if (!dvm->done) {
            dvm->status = HERD_ERR_UNREACH;
            dvm->done = true;
            opal_event_base_stop(dvm->base);
        }
    }
}

static void daemon_xml_req(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                           const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    const char *xml = (NULL != dvm->mine && NULL != dvm->mine->xml) ? dvm->mine->xml : "";
    dvm->ovl->send(dvm->overlay, src, ORTE_DVM_TAG_XML, xml, strlen(xml));
}

/* Forward loss reports from below to the root unchanged. */
static void daemon_lost_report(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                               const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_LOST, data, length);
}

static void daemon_lost(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                        void *arg)
{
    orte_dvm_t *dvm = arg;
    if (peer == orte_radix_parent(dvm->vpid, dvm->radix)) {
        /* the DVM above us is gone (or shut down in order): nothing left to serve */
        dvm->status = (HERD_SUCCESS == status) ? HERD_SUCCESS : HERD_ERR_UNREACH;
        if (HERD_SUCCESS != status) {
            opal_show_help(help_file, "parent-lost", false, dvm->vpid, reason);
        }
        dvm->done = true;
        opal_event_base_stop(dvm->base);
        return;
    }
    if (HERD_SUCCESS == status) {
        return;
    }
    /* a child: tell the root, which decides */
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, peer) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, reason)) {
        dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_LOST, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

static void daemon_stop(orte_dvm_t *dvm, const char *what, int status)
{
    opal_show_help(help_file, "daemon-step-failed", false, dvm->vpid, what,
                   opal_strerror(status));
    dvm->status = status;
    dvm->done = true;
    opal_event_base_stop(dvm->base);
}

static void daemon_ready_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the ready barrier", status);
        return;
    }
    status = await_command(dvm);
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "waiting for commands", status);
    }
}

static void daemon_inventory_cb(int status, const orte_grpcomm_result_t *result, void *cbdata)
{
    orte_dvm_t *dvm = cbdata;
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the inventory exchange", status);
        return;
    }
    /* every daemon now holds every inventory: kept, packed, for the session daemons' mappers */
    dvm->inventory_blobs = calloc(dvm->size, sizeof(*dvm->inventory_blobs));
    dvm->inventory_lengths = calloc(dvm->size, sizeof(*dvm->inventory_lengths));
    if (NULL == dvm->inventory_blobs || NULL == dvm->inventory_lengths) {
        daemon_stop(dvm, "keeping the inventory", HERD_ERR_OUT_OF_RESOURCE);
        return;
    }
    for (uint32_t v = 1; v < result->num_blobs && v < dvm->size; ++v) {
        dvm->inventory_blobs[v - 1] = malloc(result->blobs[v].len + 1);
        if (NULL == dvm->inventory_blobs[v - 1]) {
            daemon_stop(dvm, "keeping the inventory", HERD_ERR_OUT_OF_RESOURCE);
            return;
        }
        if (result->blobs[v].len > 0) {
            memcpy(dvm->inventory_blobs[v - 1], result->blobs[v].data, result->blobs[v].len);
        }
        dvm->inventory_lengths[v - 1] = result->blobs[v].len;
    }
    status = dvm->gc->barrier(dvm->grpcomm, DVM_COLL_READY, daemon_ready_cb, dvm);
    if (HERD_SUCCESS != status) {
        daemon_stop(dvm, "the ready barrier", status);
    }
}

/* The node's static session endpoints: one listener per slot, on the address the daemon itself
 * listens on, so every peer learns them from the inventory. */
static int bind_session_endpoints(orte_dvm_t *dvm)
{
    char host[256];
    const char *start = (NULL != dvm->uri) ? strstr(dvm->uri, "://") : NULL;
    const char *colon = (NULL != start) ? strrchr(start + 3, ':') : NULL;
    if (NULL == colon || (size_t) (colon - start - 3) >= sizeof(host)) {
        errno = EINVAL;
        return HERD_ERR_BAD_PARAM;
    }
    memcpy(host, start + 3, (size_t) (colon - start - 3));
    host[colon - start - 3] = '\0';
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    if (1 != inet_pton(AF_INET, host, &addr.sin_addr)) {
        errno = EAFNOSUPPORT;
        return HERD_ERR_NOT_SUPPORTED;
    }
    dvm->num_session_slots = (uint32_t) dvm->vars->session_slots;
    dvm->session_fds = malloc(dvm->num_session_slots * sizeof(*dvm->session_fds));
    if (NULL == dvm->session_fds) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < dvm->num_session_slots; ++i) {
        dvm->session_fds[i] = -1;
    }
    for (uint32_t i = 0; i < dvm->num_session_slots; ++i) {
        struct sockaddr_in bound = addr;
        socklen_t len = sizeof(bound);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return HERD_ERR_IN_ERRNO;
        }
        dvm->session_fds[i] = fd;
        if (0 != bind(fd, (struct sockaddr *) &bound, sizeof(bound)) || 0 != listen(fd, 256) ||
            0 != getsockname(fd, (struct sockaddr *) &bound, &len)) {
            return HERD_ERR_IN_ERRNO;
        }
        char uri[300];
        snprintf(uri, sizeof(uri), "tcp://%s:%u", host, ntohs(bound.sin_port));
        if (HERD_SUCCESS != opal_argv_append(&dvm->mine->session_uris, uri)) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

/* Tell the root that job jobid cannot start here. */
static void daemon_job_error(orte_dvm_t *dvm, const char *jobid, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    char *message = opal_show_help_vstring(help_file, topic, false, ap);
    va_end(ap);
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_string(&buffer, jobid) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, NULL != message ? message : topic)) {
        dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_JOB_ERROR, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
    free(message);
}

/* Write the session daemon's segment: what it needs to map and run the job without asking
 * anyone: the launch message as received, the candidate nodes' inventories, this node's
 * topology XML. */
static int write_launch_segment(orte_dvm_t *dvm, const char *name, const orte_job_launch_t *launch,
                                uint32_t my_candidate, const uint8_t *data, size_t len)
{
    opal_buffer_t buffer;
    int rc;
    opal_buffer_init(&buffer);
    const uint8_t **blobs = malloc(launch->num_candidates * sizeof(*blobs) + 1);
    size_t *lengths = malloc(launch->num_candidates * sizeof(*lengths) + 1);
    if (NULL == blobs || NULL == lengths) {
        free(blobs);
        free(lengths);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t c = 0; c < launch->num_candidates; ++c) {
        blobs[c] = dvm->inventory_blobs[launch->node_index[c]];
        lengths[c] = dvm->inventory_lengths[launch->node_index[c]];
    }
    rc = orte_session_handoff_pack(&buffer, dvm->mine->node_name, my_candidate, data, len, blobs,
                                   lengths, launch->num_candidates, dvm->mine->signature,
                                   dvm->mine->xml);
    free(blobs);
    free(lengths);
    if (HERD_SUCCESS == rc) {
        rc = orte_session_handoff_write(name, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

/* LAUNCH: if this node takes part, hand the job to a new session daemon. */
static void daemon_launch(orte_dvm_t *dvm, const uint8_t *data, size_t len)
{
    orte_job_launch_t *launch = NULL;
    opal_buffer_t buffer;
    const char *node = dvm->mine->node_name;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, len);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_launch_unpack(&buffer, dvm->size - 1, &launch);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        daemon_job_error(dvm, "?", "bad-launch", node, opal_strerror(rc));
        return;
    }
    const char *jobid = launch->spec->jobid;
    uint32_t my_candidate = UINT32_MAX;
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        if (launch->node_index[launch->participants[p]] == dvm->vpid - 1) {
            my_candidate = launch->participants[p];
        }
    }
    if (UINT32_MAX == my_candidate) {
        orte_job_launch_free(launch);
        return; /* no processes here */
    }
    reap_sessions(dvm, false);
    uint32_t slot = launch->spec->seq % dvm->num_session_slots;
    for (size_t i = 0; i < dvm->num_sessions; ++i) {
        if (dvm->sessions[i].slot == slot) {
            daemon_job_error(dvm, jobid, "session-slot-busy", jobid, node, dvm->num_session_slots,
                             slot, dvm->sessions[i].jobid);
            orte_job_launch_free(launch);
            return;
        }
    }
    dvm_session_t *grown = realloc(dvm->sessions, (dvm->num_sessions + 1) * sizeof(*grown));
    if (NULL == grown) {
        daemon_job_error(dvm, jobid, "session-spawn-failed", jobid, node, "memory",
                         strerror(ENOMEM));
        orte_job_launch_free(launch);
        return;
    }
    dvm->sessions = grown;
    dvm_session_t *s = &dvm->sessions[dvm->num_sessions];
    memset(s, 0, sizeof(*s));
    s->pid = -1;
    s->slot = slot;
    char launch_tag[300];
    snprintf(launch_tag, sizeof(launch_tag), "%s.launch", jobid);
    if (HERD_SUCCESS != opal_jobdb_segment_name(launch_tag, node, s->launch_shm,
                                                sizeof(s->launch_shm)) ||
        HERD_SUCCESS != opal_jobdb_segment_name(jobid, node, s->jobdb_shm,
                                                sizeof(s->jobdb_shm)) ||
        NULL == (s->jobid = strdup(jobid))) {
        daemon_job_error(dvm, jobid, "session-spawn-failed", jobid, node, "segment name",
                         "the job id or node name is not usable in a segment name");
        free(s->jobid);
        orte_job_launch_free(launch);
        return;
    }
    rc = write_launch_segment(dvm, s->launch_shm, launch, my_candidate, data, len);
    orte_job_launch_free(launch);
    if (HERD_SUCCESS != rc) {
        daemon_job_error(dvm, jobid, "session-spawn-failed", jobid, node, s->launch_shm,
                         HERD_ERR_IN_ERRNO == rc ? strerror(errno) : opal_strerror(rc));
        free(s->jobid);
        return;
    }
    char self[PATH_MAX];
    ssize_t self_len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (self_len <= 0) {
        snprintf(self, sizeof(self), "%s", HERD_BINDIR "/herdd");
    } else {
        self[self_len] = '\0';
    }
    char seg_env[300], fd_env[64], pid_env[64];
    snprintf(seg_env, sizeof(seg_env), "%s=%s", ORTE_SESSION_ENV_SEGMENT, s->launch_shm);
    snprintf(fd_env, sizeof(fd_env), "%s=%d", ORTE_SESSION_ENV_LISTEN_FD,
             dvm->session_fds[slot]);
    snprintf(pid_env, sizeof(pid_env), "%s=%d", ORTE_SESSION_ENV_DAEMON, (int) getpid());
    extern char **environ;
    char **env = opal_argv_copy(environ);
    opal_argv_append(&env, seg_env);
    opal_argv_append(&env, fd_env);
    opal_argv_append(&env, pid_env);
    char *argv[] = {"herdd", "--session", NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    /* dup2 onto itself clears close-on-exec: the session daemon inherits its endpoint */
    posix_spawn_file_actions_adddup2(&actions, dvm->session_fds[slot], dvm->session_fds[slot]);
    pid_t pid;
    rc = posix_spawn(&pid, self, &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    opal_argv_free(env);
    if (0 != rc) {
        daemon_job_error(dvm, jobid, "session-spawn-failed", jobid, node, self, strerror(rc));
        shm_unlink(s->launch_shm);
        free(s->jobid);
        return;
    }
    s->pid = pid;
    dvm->num_sessions++;
}

/* ------------------------------------------------------------------------------------------ */
/* root side, for launchers */

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
    if (NULL == dvm->inventory || node_index + 1 >= dvm->size) {
        return NULL;
    }
    return dvm->inventory[node_index + 1];
}

uint32_t orte_dvm_radix(const orte_dvm_t *dvm)
{
    return dvm->radix;
}

const char *orte_dvm_id(const orte_dvm_t *dvm)
{
    return dvm->id;
}

uint32_t orte_dvm_next_job_seq(orte_dvm_t *dvm)
{
    return ++dvm->next_job_seq;
}

int orte_dvm_root_command(orte_dvm_t *dvm, uint32_t command, const void *data, size_t len)
{
    uint8_t *message = malloc(len + 4);
    if (NULL == message) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    message[0] = (uint8_t) (command >> 24);
    message[1] = (uint8_t) (command >> 16);
    message[2] = (uint8_t) (command >> 8);
    message[3] = (uint8_t) command;
    if (len > 0) {
        memcpy(message + 4, data, len);
    }
    int rc = dvm->gc->xcast(dvm->grpcomm, dvm->next_command, message, len + 4, command_cb, dvm);
    free(message);
    return rc;
}

void orte_dvm_root_set_job_error_cb(orte_dvm_t *dvm, orte_dvm_job_error_cb_t cb, void *arg)
{
    dvm->job_error_cb = cb;
    dvm->job_error_arg = arg;
}

void orte_dvm_root_set_signal_cb(orte_dvm_t *dvm, orte_dvm_signal_cb_t cb, void *arg)
{
    dvm->signal_cb = cb;
    dvm->signal_arg = arg;
}

void orte_dvm_root_set_tool_path(orte_dvm_t *dvm, const char *path)
{
    free(dvm->tool_path);
    dvm->tool_path = (NULL != path) ? strdup(path) : NULL;
}

void orte_dvm_root_request_stop(orte_dvm_t *dvm, int status)
{
    dvm->status = status;
    root_begin_shutdown(dvm);
    dvm->status = status;
}

static void root_job_error(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag,
                           const void *data, size_t length, void *arg)
{
    orte_dvm_t *dvm = arg;
    opal_buffer_t buffer;
    char *jobid = NULL, *message = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, length) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &jobid) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &message) && NULL != jobid &&
        NULL != message) {
        if (NULL != dvm->job_error_cb) {
            dvm->job_error_cb(jobid, node_of(dvm, src), message, dvm->job_error_arg);
        } else {
            fprintf(stderr, "%s", message);
        }
    } else {
        opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: ignoring a malformed job error from daemon %u",
                    src);
    }
    free(jobid);
    free(message);
    opal_buffer_destruct(&buffer);
}

int orte_dvm_daemon_main(bool bootstrap_stdin)
{
    orte_dvm_t dvm_storage;
    orte_dvm_t *dvm = &dvm_storage;
    uint32_t listen_fd = UINT32_MAX;
    int rc;
    memset(dvm, 0, sizeof(*dvm));
    dvm->vars = &dvm_vars;
    dvm->next_command = DVM_COLL_FIRST_COMMAND;
    dvm->status = HERD_ERROR;

    if (bootstrap_stdin && HERD_SUCCESS != read_bootstrap_stdin()) {
        return 1;
    }
    /* started by srun: one bootstrap for all, rank and node from Slurm */
    const char *boot_vpid = getenv(ORTE_BOOT_VPID);
    if (NULL != boot_vpid && 0 == strcmp(boot_vpid, "slurm")) {
        const char *procid = getenv("SLURM_PROCID");
        char vpid_text[32];
        snprintf(vpid_text, sizeof(vpid_text), "%lu",
                 (NULL != procid) ? strtoul(procid, NULL, 10) + 1 : 0ul);
        setenv(ORTE_BOOT_VPID, vpid_text, 1);
    }
    const char *boot_node = getenv(ORTE_BOOT_NODE);
    if (NULL != boot_node && 0 == strcmp(boot_node, "slurm")) {
        const char *slurm_node = getenv("SLURMD_NODENAME");
        char host[256] = "";
        if (NULL == slurm_node && 0 == gethostname(host, sizeof(host) - 1)) {
            slurm_node = host;
        }
        setenv(ORTE_BOOT_NODE, NULL != slurm_node ? slurm_node : "unknown", 1);
    }
    const char *node = getenv(ORTE_BOOT_NODE);
    const char *parent_uri = getenv(ORTE_BOOT_PARENT_URI);
    const char *fabric = getenv(ORTE_BOOT_FABRIC);
    dvm->id = getenv(ORTE_BOOT_DVM_ID);
    if (HERD_SUCCESS != boot_uint(ORTE_BOOT_VPID, &dvm->vpid) ||
        HERD_SUCCESS != boot_uint(ORTE_BOOT_SIZE, &dvm->size) ||
        HERD_SUCCESS != boot_uint(ORTE_BOOT_RADIX, &dvm->radix)) {
        return 1;
    }
    if (NULL == dvm->id || NULL == node || NULL == parent_uri || 0 == dvm->vpid ||
        dvm->vpid >= dvm->size || 0 == dvm->radix ||
        HERD_SUCCESS != hex_decode(getenv(ORTE_BOOT_SECRET), dvm->secret, sizeof(dvm->secret))) {
        fprintf(stderr, "herdd: incomplete bootstrap (DVM id, node, parent, vpid or secret); "
                        "herdd is started by herd-dvm or herdrun, not by hand\n");
        return 1;
    }
    if (NULL != getenv(ORTE_BOOT_LISTEN_FD) &&
        HERD_SUCCESS != boot_uint(ORTE_BOOT_LISTEN_FD, &listen_fd)) {
        return 1;
    }
    /* the secret has done its job in the environment; children must not inherit it */
    unsetenv(ORTE_BOOT_SECRET);
    /* started by a local launcher: never outlive it, even if it is killed with -9 */
    const char *launcher = getenv("HERD_DVM_LAUNCHER_PID");
    if (NULL != launcher) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != (pid_t) strtol(launcher, NULL, 10)) {
            return 1; /* it is already gone */
        }
    }
    orte_orphans_adopt();
    const char *plm_name = getenv(ORTE_BOOT_PLM);
    if (NULL != plm_name) {
        /* a tree spawn: start the children with the same launcher */
        setenv("HERD_MCA_plm", plm_name, 1);
        if (HERD_SUCCESS != allocation_from_hex(getenv(ORTE_BOOT_ALLOCATION), &dvm->allocation) ||
            dvm->allocation->num_nodes + 1 != dvm->size || NULL == getenv(ORTE_BOOT_HERDD)) {
            opal_show_help(help_file, "boot-allocation-malformed", false, dvm->vpid);
            return 1;
        }
        dvm->options.herdd = strdup(getenv(ORTE_BOOT_HERDD));
    }

    if (NULL != getenv(ORTE_BOOT_TOPOLOGY)) {
        /* A simulated node's topology is synthetic: hwloc's discovery plugins (OpenCL, ...)
         * would only cost every daemon the time to load them and their libraries. */
        setenv("HWLOC_PLUGINS_PATH", "/dev/null", 1);
    }
    rc = opal_mca_init();
    if (HERD_SUCCESS != rc) {
        return 1;
    }
    /* "0": no fabric inventory; "1" (an older root): every component; else which ones */
    const char *components = (NULL == fabric || 0 == strcmp(fabric, "0")) ? NULL
                             : (0 == strcmp(fabric, "1"))                  ? "all"
                                                                           : fabric;
    rc = orte_inventory_collect(node, getenv(ORTE_BOOT_TOPOLOGY), components, &dvm->mine);
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "no-node-topology", false, dvm->vpid, node, opal_strerror(rc));
        goto out_mca;
    }
    if (HERD_SUCCESS != (rc = dvm_register_vars(&dvm_vars)) ||
        HERD_SUCCESS != (rc = opal_event_base_create(&dvm->base)) ||
        HERD_SUCCESS != (rc = install_signals(dvm)) ||
        HERD_SUCCESS != (rc = opal_event_timer_create(dvm->base, false, timeout_cb, dvm,
                                                      &dvm->timer)) ||
        HERD_SUCCESS != (rc = start_endpoint(dvm))) {
        goto out_base;
    }
    if (bootstrap_stdin) {
        fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
        if (HERD_SUCCESS == opal_event_fd_create(dvm->base, STDIN_FILENO,
                                                 OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                                 daemon_stdin_cb, dvm, &dvm->stdin_event)) {
            opal_event_add(dvm->stdin_event, NULL);
        }
    }
    dvm->ovl->set_lost_callback(dvm->overlay, daemon_lost, dvm);
    if (HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_XML_REQ,
                                                      daemon_xml_req, dvm)) ||
        HERD_SUCCESS != (rc = dvm->ovl->register_recv(dvm->overlay, ORTE_DVM_TAG_LOST,
                                                      daemon_lost_report, dvm))) {
        goto out_base;
    }
    if (UINT32_MAX != listen_fd) {
        rc = dvm->ovl->adopt_listener(dvm->overlay, (int) listen_fd, &dvm->uri);
    } else {
        rc = dvm->ovl->listen(dvm->overlay, &dvm->uri);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "cannot-listen", false, dvm->vpid, node, opal_strerror(rc));
        goto out_base;
    }
    rc = bind_session_endpoints(dvm);
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "no-session-endpoints", false, dvm->vpid, node,
                       strerror(errno));
        goto out_base;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    rc = orte_inventory_pack(&buffer, dvm->mine, false);
    if (HERD_SUCCESS == rc) {
        rc = dvm->gc->allgather(dvm->grpcomm, DVM_COLL_INVENTORY, buffer.base, buffer.used,
                                daemon_inventory_cb, dvm);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = dvm->ovl->connect_parent(dvm->overlay, parent_uri);
    }
    if (HERD_SUCCESS == rc) {
        /* queued until the parent connection is up; tells the root this daemon made it */
        rc = dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_JOINED, NULL, 0);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "cannot-join", false, dvm->vpid, node, parent_uri,
                       opal_strerror(rc));
        goto out_base;
    }
    if (NULL != plm_name) {
        const orte_plm_module_t *plm = NULL;
        rc = orte_plm_base_select(dvm->allocation, &plm);
        if (HERD_SUCCESS == rc) {
            rc = launch_children(dvm, plm);
        }
        if (HERD_SUCCESS != rc) {
            opal_show_help(help_file, "cannot-start-below", false, dvm->vpid, node,
                           opal_strerror(rc));
            goto out_base;
        }
    }
    opal_event_base_loop(dvm->base, false);
    rc = dvm->status;
    /* the daemons this one started go with it: wait for their launchers, then kill */
    dvm->stopping = true;
    if (!all_launched_gone(dvm)) {
        dvm->done = false;
        arm_timer(dvm, dvm->vars->shutdown_grace);
        opal_event_base_loop(dvm->base, false);
    }

out_base:
    release_runtime(dvm);
    orte_plm_base_close();
    orte_allocation_free(dvm->allocation);
    free((char *) dvm->options.herdd);
    free(dvm->uri);
    orte_inventory_free(dvm->mine);
out_mca:
    opal_mca_finalize();
    return HERD_SUCCESS == rc ? 0 : 1;
}
