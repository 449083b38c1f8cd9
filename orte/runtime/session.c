/* SPDX-License-Identifier: BSD-3-Clause */
/* The session daemon (herdd --session): one per job and node, started by the node's daemon.
 * It maps the whole job itself, fills the node's job database, starts and watches the local
 * processes, and talks only to the job's other session daemons and herdrun. The first one (the
 * shepherd) runs the error manager and gathers exit statuses and resource usage.
 *
 * This file is its life cycle: start-up from the hand-off segment, the job's overlay, the main
 * loop and the release. session_internal.h says which file holds each of its other concerns. */
#include "herd_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/session_handoff.h"
#include "orte/runtime/session_internal.h"
#include "orte/util/radix.h"

/* ------------------------------------------------------------------------------------------ */
/* sending */

void orte_session_send_buffer(orte_session_t *s, orte_vpid_t dst, uint16_t tag,
                              opal_buffer_t *buffer)
{
    int rc = s->ovl->send(s->overlay, dst, tag, buffer->base, buffer->used);
    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_SESSION_HELP, "send-failed", false, s->node_name, dst,
                       opal_strerror(rc));
    }
}

void orte_session_send_record(orte_session_t *s, orte_vpid_t dst, uint16_t tag, bool with_action,
                              uint32_t action, const orte_proc_record_t *record)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if ((!with_action || HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, action)) &&
        HERD_SUCCESS == orte_proc_record_pack(&buffer, record)) {
        orte_session_send_buffer(s, dst, tag, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* the loop's end */

static void stop_loop(orte_session_t *s)
{
    s->stop = true;
    opal_event_base_stop(s->base);
}

static void signal_cb(int signo, void *arg)
{
    orte_session_t *s = arg;
    (void) signo;
    /* our daemon is gone or stopping (SIGTERM): the processes go with us. A node daemon that
     * died (killed, or its node failing) says nothing to herdrun, and our goodbye would be taken
     * for a stop it explains: we say it (reparented, the kernel's death signal came). */
    if (0 != s->node_daemon && getppid() != s->node_daemon && NULL != s->overlay &&
        !s->local.done_sent) {
        (void) s->ovl->send(s->overlay, 0, ORTE_SESSION_TAG_NODE_LOST, NULL, 0);
    }
    s->status = HERD_ERR_UNREACH;
    stop_loop(s);
}

static void lost_cb(orte_overlay_t *overlay, orte_vpid_t peer, int status, const char *reason,
                    void *arg)
{
    orte_session_t *s = arg;
    orte_session_wireup_lost(s->wireup.modules, peer);
    if (peer == orte_radix_parent(s->vpid, s->launch->radix)) {
        /* herdrun closed the job (or the route to it is gone): nothing left to do here. Once
         * this node's part is over (DONE and EOF sent) the job ended well, however the
         * connection closed: a goodbye can be lost to a reset when herdrun closes with our last
         * messages still arriving, and a daemon that exits 1 then is taken for a failure. */
        if (HERD_SUCCESS != status && !s->local.done_sent) {
            s->status = HERD_ERR_UNREACH;
        }
        stop_loop(s);
        return;
    }
    if (ORTE_SESSION_SHEPHERD == s->vpid) {
        orte_session_shepherd_lost(s, peer, reason);
        return;
    }
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, peer) &&
        HERD_SUCCESS == opal_buffer_pack_string(&buffer, reason)) {
        orte_session_send_buffer(s, ORTE_SESSION_SHEPHERD, ORTE_SESSION_TAG_LOST, &buffer);
    }
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* the job's overlay */

static int grpcomm_send(void *ctx, orte_vpid_t dst, uint16_t tag, const void *data, size_t len)
{
    orte_session_t *s = ctx;
    return s->ovl->send(s->overlay, dst, tag, data, len);
}

static void grpcomm_recv(orte_overlay_t *overlay, orte_vpid_t src, uint16_t tag, const void *data,
                         size_t length, void *arg)
{
    orte_session_t *s = arg;
    s->gc->deliver(s->grpcomm, src, tag, data, length);
}

/* Who handles each tag of session.h (and the iof's and the wireup engine's ranges). */
static int register_handlers(orte_session_t *s)
{
    const struct {
        uint16_t tag;
        orte_overlay_recv_cb_t cb;
    } handlers[] = {{ORTE_SESSION_TAG_FAILURE, orte_session_shepherd_recv_failure},
                    {ORTE_SESSION_TAG_ABORT, orte_session_procs_recv_abort},
                    {ORTE_SESSION_TAG_SIGNAL, orte_session_procs_recv_signal},
                    {ORTE_SESSION_TAG_DONE, orte_session_shepherd_recv_done},
                    {ORTE_SESSION_TAG_LOST, orte_session_shepherd_recv_lost},
                    {ORTE_SESSION_TAG_ABORTED, orte_session_shepherd_recv_aborted},
                    {ORTE_SESSION_TAG_REOPEN, orte_session_shepherd_recv_reopen},
                    {ORTE_SESSION_TAG_SPAWN, orte_session_spawn_recv},
                    {ORTE_SESSION_TAG_SPAWN_RESP, orte_session_spawn_recv_resp},
                    {ORTE_SESSION_TAG_PTABLE_QUERY, orte_session_ptable_recv_query},
                    {ORTE_SESSION_TAG_RELOCATE, orte_session_relocate_recv},
                    {ORTE_SESSION_TAG_MOVED, orte_session_relocate_recv_moved}};
    int rc;
    for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); ++i) {
        if (HERD_SUCCESS !=
            (rc = s->ovl->register_recv(s->overlay, handlers[i].tag, handlers[i].cb, s))) {
            return rc;
        }
    }
    for (int m = 0; m < ORTE_IOF_NUM_MSGS; ++m) {
        rc = s->ovl->register_recv(s->overlay, (uint16_t) (ORTE_SESSION_TAG_IOF + m),
                                   orte_session_io_recv, s);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    for (uint16_t t = ORTE_WIREUP_TAG_BASE; t < ORTE_WIREUP_TAG_END; ++t) {
        if (HERD_SUCCESS !=
            (rc = s->ovl->register_recv(s->overlay, t, orte_session_nspace_wireup_recv, s))) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

/* The collectives among the session daemons and herdrun (the start check). */
static int open_grpcomm(orte_session_t *s)
{
    int rc;
    if (HERD_SUCCESS != (rc = orte_grpcomm_base_open())) {
        return rc;
    }
    s->gc = orte_grpcomm_base_module();
    orte_grpcomm_transport_t transport = {.me = s->vpid,
                                          .num_daemons = s->size,
                                          .radix = s->launch->radix,
                                          .send = grpcomm_send,
                                          .ctx = s};
    rc = s->gc->create(&transport, &s->grpcomm);
    for (uint16_t t = 0; HERD_SUCCESS == rc && t < ORTE_GRPCOMM_NUM_TAGS; ++t) {
        rc = s->ovl->register_recv(s->overlay, (uint16_t) (ORTE_GRPCOMM_TAG_BASE + t), grpcomm_recv,
                                   s);
    }
    return rc;
}

/* Our parent in the job's tree: herdrun's sink (vpid 0), or the parent node's session daemon at
 * its static endpoint; or, forked by herdrun, the connection to it already made. */
static int connect_parent(orte_session_t *s)
{
    int rc;
    orte_vpid_t parent = orte_radix_parent(s->vpid, s->launch->radix);
    if (s->parent_sock >= 0 && NULL != s->ovl->adopt_peer) {
        rc = s->ovl->adopt_peer(s->overlay, s->parent_sock, parent);
        if (HERD_SUCCESS == rc) {
            s->parent_sock = -1;
        }
        return rc;
    }
    const char *parent_uri = s->spec->sink_uri;
    if (parent > 0) {
        uint32_t candidate = s->launch->participants[parent - 1];
        const orte_inventory_t *inv = s->inventories[candidate];
        uint32_t count = (uint32_t) opal_argv_count(inv->session_uris);
        uint32_t slot = s->launch->session_slot[candidate];
        if (slot >= count) {
            return HERD_ERR_NOT_FOUND;
        }
        parent_uri = inv->session_uris[slot]; /* the slot the root gave the job there */
    }
    if (NULL == parent_uri) {
        return HERD_ERR_NOT_FOUND;
    }
    return s->ovl->connect_parent(s->overlay, parent_uri);
}

/* Join the job's overlay: every handler in place before the first message can come. */
static int start_overlay(orte_session_t *s, int listen_fd)
{
    orte_overlay_config_t config = {
        .base = s->base,
        .vpid = s->vpid,
        .num_daemons = s->size,
        .radix = s->launch->radix,
        .dvm_id = s->spec->jobid,
    };
    memcpy(config.secret, s->spec->secret, sizeof(config.secret));
    int rc = orte_dvm_heartbeat_timeout_ms(&config.heartbeat_timeout_ms);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = orte_overlay_base_open();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    s->ovl = orte_overlay_base_module();
    if (HERD_SUCCESS != (rc = s->ovl->init(&config, &s->overlay))) {
        return rc;
    }
    s->ovl->set_lost_callback(s->overlay, lost_cb, s);
    if (HERD_SUCCESS != (rc = register_handlers(s)) || HERD_SUCCESS != (rc = open_grpcomm(s))) {
        return rc;
    }
    char *uri = NULL;
    if (listen_fd >= 0 &&
        HERD_SUCCESS != (rc = s->ovl->adopt_listener(s->overlay, listen_fd, &uri))) {
        return rc;
    }
    free(uri);
    return connect_parent(s);
}

/* ------------------------------------------------------------------------------------------ */
/* start-up */

/* Nothing owned yet, every descriptor closed. */
static void session_init(orte_session_t *s, int iof_sock, int stdin_fd, int parent_sock,
                         pid_t node_daemon)
{
    memset(s, 0, sizeof(*s));
    s->node_daemon = node_daemon;
    s->io.iof_sock = iof_sock;
    s->io.stdin_fd = stdin_fd;
    s->parent_sock = parent_sock;
    s->io.out_pipe[0] = s->io.out_pipe[1] = s->io.err_pipe[0] = s->io.err_pipe[1] = -1;
    s->io.orig_fd[0] = s->io.orig_fd[1] = -1;
    s->status = HERD_SUCCESS;
}

/* The job from the hand-off segment, and our place in it: vpid 1 + our index among the job's
 * participants (vpid 0 is herdrun). */
static int take_handoff(orte_session_t *s, opal_buffer_t *segment)
{
    orte_session_handoff_t handoff;
    int rc = orte_session_handoff_parse(segment, &handoff);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    s->node_name = handoff.node_name;
    s->my_candidate = handoff.my_candidate;
    s->launch = handoff.launch;
    s->spec = s->launch->spec;
    s->inventories = handoff.inventories;
    uint32_t participant = 0;
    while (participant < s->launch->num_participants &&
           s->launch->participants[participant] != s->my_candidate) {
        ++participant;
    }
    s->vpid = participant + 1;
    s->size = s->launch->num_participants + 1;
    return HERD_SUCCESS;
}

/* The job's MCA settings (herdrun's --mca) as environment variables, before any framework
 * reads its variables. */
static void apply_job_mca(const orte_job_spec_t *spec)
{
    for (char *const *m = spec->mca; NULL != m && NULL != *m; ++m) {
        const char *eq = strchr(*m, '=');
        if (NULL != eq && eq > *m) {
            char *name = strndup(*m, (size_t) (eq - *m));
            if (NULL != name) {
                setenv(name, eq + 1, 1); /* copied: the spec goes before the environment */
                free(name);
            }
        }
    }
}

/* Everything up to the start check: the loop, our output, the node table, the frameworks, the
 * job's first namespace, the shepherd's error manager, odls, iof and the overlay. Says what
 * failed. */
static int session_start(orte_session_t *s, int listen_fd)
{
    int rc;
    apply_job_mca(s->spec);
    if (HERD_SUCCESS != (rc = opal_mca_init()) ||
        HERD_SUCCESS != (rc = opal_event_base_create(&s->base)) ||
        HERD_SUCCESS != (rc = orte_session_io_redirect_output(s))) {
        opal_show_help(ORTE_SESSION_HELP, "startup-failed", false,
                       NULL != s->node_name ? s->node_name : "?", opal_strerror(rc));
        return rc;
    }
    static const int caught[] = {SIGTERM, SIGINT, SIGHUP, 0};
    if (HERD_SUCCESS != (rc = opal_signal_pipe_open(s->base, caught, signal_cb, s, &s->signals))) {
        return rc;
    }
    if (HERD_SUCCESS != (rc = orte_session_procs_build_env(s)) ||
        HERD_SUCCESS != (rc = orte_jobmap_nodes_build(
                             s->inventories, s->launch->slots, s->launch->max_slots,
                             s->launch->num_candidates, s->launch->xml_pairs, &s->nodes)) ||
        HERD_SUCCESS != (rc = orte_jobmap_apps(s->spec, &s->apps)) ||
        HERD_SUCCESS != (rc = orte_rmaps_base_open()) ||
        HERD_SUCCESS != (rc = orte_odls_base_open())) {
        opal_show_help(ORTE_SESSION_HELP, "cannot-prepare", false, s->node_name, s->spec->jobid,
                       opal_strerror(rc));
        return rc;
    }
    orte_session_nsjob_t *job = orte_session_nsjob_new(s, 0);
    s->map.used = calloc(s->nodes.num > 0 ? s->nodes.num : 1, sizeof(*s->map.used));
    if (NULL == job || NULL == s->map.used) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    job->spec = s->spec;
    job->parent_nspace = UINT32_MAX;
    job->parent_rank = UINT32_MAX;
    if (ORTE_SESSION_SHEPHERD == s->vpid && HERD_SUCCESS != (rc = orte_session_shepherd_open(s))) {
        return rc;
    }
    if (HERD_SUCCESS != (rc = orte_session_procs_open(s)) ||
        HERD_SUCCESS != (rc = orte_session_io_start(s)) ||
        HERD_SUCCESS != (rc = start_overlay(s, listen_fd))) {
        opal_show_help(ORTE_SESSION_HELP, "cannot-join", false, s->node_name, s->spec->jobid,
                       opal_strerror(rc));
        return rc;
    }
    return HERD_SUCCESS;
}

/* While the checks travel: the wireup (a PMIx server takes a few ms to start). If it cannot
 * start (a bad HERD_MCA_wireup), nothing is started here, and the job fails once the overlay
 * carries the reason to herdrun. */
static void start_wireup_or_skip(orte_session_t *s)
{
    int rc;
    if (!s->wireup.wanted) {
        s->wireup.skipped = true;
        if (s->wireup.output >= 0) {
            opal_output_verbose(1, s->wireup.output,
                                "wireup on %s: no program of job %s can use a wireup: none "
                                "started (--mca wireup_base_always true starts them)",
                                s->node_name, s->spec->jobid);
        }
    } else if (HERD_SUCCESS != (rc = orte_session_nspace_start_wireup(s))) {
        opal_show_help(ORTE_SESSION_HELP, "wireup-start-failed", false, s->node_name,
                       s->spec->jobid, opal_strerror(rc));
        s->wireup.failed = true;
    }
}

/* The start check, the wireup meanwhile, and the launch at once when the check is already
 * complete: this node alone runs the job and found nothing wrong (the allgather still brings
 * herdrun the same empty answer, ahead of any message about a process on the same connection). */
static int session_go(orte_session_t *s)
{
    bool alone_and_fine = false;
    s->wireup.wanted = orte_wireup_base_always(&s->wireup.output);
    int rc = orte_session_check_start(s, &alone_and_fine);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    start_wireup_or_skip(s);
    if (alone_and_fine) {
        s->map.launched_early = true;
        orte_session_map_job(s);
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* release, in the order the parts depend on each other */

static void leave_overlay(orte_session_t *s)
{
    if (NULL != s->grpcomm) {
        s->gc->destroy(s->grpcomm);
    }
    if (NULL != s->overlay) {
        s->ovl->finalize(s->overlay);
        s->overlay = NULL;
        /* one round so the goodbyes leave */
        opal_event_base_poll(s->base);
    }
    orte_grpcomm_base_close();
    orte_overlay_base_close();
}

static void session_release(orte_session_t *s)
{
    orte_session_procs_close(s);
    /* the process exits next (_exit, with no handlers or destructors): no wireup teardown */
    orte_session_wireup_end(s->wireup.modules, true);
    s->wireup.modules = NULL;
    orte_session_spawn_release(s);
    orte_session_io_close_source(s);
    if (s->parent_sock >= 0) {
        close(s->parent_sock); /* never adopted: herdrun sees it close */
        s->parent_sock = -1;
    }
    orte_session_map_close_db(s);
    leave_overlay(s);
    orte_rmaps_base_close();
    orte_errmgr_base_close();
    /* after the overlay's last round, which may still forward what we said */
    orte_session_io_close_output(s);
    opal_signal_pipe_close(s->signals);
    if (NULL != s->base) {
        opal_event_base_free(s->base);
    }
    orte_jobmap_nodes_destruct(&s->nodes);
    free(s->apps);
    for (uint32_t c = 0; NULL != s->inventories && c < s->launch->num_candidates; ++c) {
        orte_inventory_free(s->inventories[c]);
    }
    free(s->inventories);
    orte_session_procs_release(s);
    orte_session_shepherd_release(s);
    orte_session_map_release(s);
    orte_job_launch_free(s->launch);
    free(s->node_name);
}

/* Run the job described by segment (the session segment's bytes); listen_fd is the node's
 * static session endpoint (-1 when the job has one node: no session daemon connects here). */
static int session_run(opal_buffer_t *segment, int listen_fd, int iof_sock, int stdin_fd,
                       int parent_sock, pid_t node_daemon)
{
    orte_session_t storage, *s = &storage;
    session_init(s, iof_sock, stdin_fd, parent_sock, node_daemon);
    int rc = take_handoff(s, segment);
    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_SESSION_HELP, "cannot-read-job", false, opal_strerror(rc));
        session_release(s);
        return 1;
    }
    if (HERD_SUCCESS == (rc = session_start(s, listen_fd)) &&
        HERD_SUCCESS == (rc = session_go(s))) {
        opal_event_base_loop(s->base, false);
        rc = s->status;
    }
    /* to herdrun, or where they went before when the overlay never came up */
    orte_session_io_flush_output(s);
    session_release(s);
    return HERD_SUCCESS == rc ? 0 : 1;
}

int orte_session_main(void)
{
    opal_buffer_t segment;
    /* never outlive the node's daemon */
    const char *daemon_pid = getenv(ORTE_SESSION_ENV_DAEMON);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (NULL == daemon_pid || getppid() != (pid_t) strtol(daemon_pid, NULL, 10)) {
        /* a guard, not a message of a job: said as is, even without the help files */
        fprintf(stderr, "herdd --session is started by the node's daemon, not by hand\n");
        return 1;
    }
    const char *segment_name = getenv(ORTE_SESSION_ENV_SEGMENT);
    const char *fd_text = getenv(ORTE_SESSION_ENV_LISTEN_FD);
    int listen_fd = (NULL != fd_text) ? (int) strtol(fd_text, NULL, 10) : -1;
    opal_buffer_init(&segment);
    int rc = (NULL == segment_name || listen_fd < 0)
                 ? HERD_ERR_BAD_PARAM
                 : orte_session_handoff_read(segment_name, &segment);
    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_SESSION_HELP, "cannot-read-segment", false,
                       NULL != segment_name ? segment_name : "(no segment)", opal_strerror(rc));
        opal_buffer_destruct(&segment);
        return 1;
    }
    int status = session_run(&segment, listen_fd, -1, -1, -1, getppid());
    opal_buffer_destruct(&segment);
    return status;
}

int orte_session_run_forked(const void *segment_bytes, size_t len, pid_t parent, int iof_sock,
                            int stdin_fd, int parent_sock)
{
    opal_buffer_t segment;
    /* herdrun's signal handlers are not ours: what we catch goes to our own loop */
    opal_signal_pipe_drop_inherited();
    /* Ctrl-C at the terminal is herdrun's to forward, not ours to act on */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) {
        return 1;
    }
    opal_buffer_init(&segment);
    int status = (HERD_SUCCESS == opal_buffer_load(&segment, segment_bytes, len))
                     ? session_run(&segment, -1, iof_sock, stdin_fd, parent_sock, 0)
                     : 1;
    opal_buffer_destruct(&segment);
    return status;
}
