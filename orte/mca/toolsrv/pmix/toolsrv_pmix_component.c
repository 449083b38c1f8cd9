/* SPDX-License-Identifier: BSD-3-Clause */
/* toolsrv pmix, the host's side and the component: herdrun and the DVM root as PMIx tool servers
 * (OpenPMIx's server library with PMIX_SERVER_TOOL_SUPPORT) for pps, pattrs and pquery, which
 * find them by the rendezvous files in the server's own folder, or the DVM root as the host's
 * system server (docs/tools.md).
 *
 * The server runs in a helper process forked from the host (herdrun, herd-dvm): OpenPMIx 4.2.2
 * crashes in its own thread on some tool queries (PMIX_QUERY_ATTRIBUTE_SUPPORT for the host's
 * attributes: pattrs --host), and a tool must never take a running job down with it. The
 * helper asks the host for its facts over a socket pair (the host answers from its loop) and
 * orte/util/pmix/pmix_query.c turns them into the answers; a helper that dies only ends the
 * tool service. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "orte/util/orphans.h"
#include "orte/mca/toolsrv/pmix/toolsrv_pmix.h"
#include "orte/mca/toolsrv/toolsrv.h"

#define TOOLSRV_PMIX_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_toolsrv_pmix

static struct {
    int priority;       /* toolsrv_pmix_priority */
    bool system_server; /* toolsrv_pmix_system_server */
} toolsrv_pmix_state = {.priority = TOOLSRV_PMIX_DEFAULT_PRIORITY, .system_server = true};

/* ------------------------------------------------------------------------------------------ */
/* the host's side */

struct orte_toolsrv {
    const orte_toolsrv_host_t *host;
    int fd;
    pid_t pid; /* the helper */
    opal_event_t *event;
    uint8_t *in;
    size_t in_used, in_size;
    struct timespec started; /* the helper's start */
    int quick_deaths;        /* helpers in a row that died within a second */
};

/* A helper that dies (OpenPMIx's crash on a tool's query) is started again, unless this many in
 * a row died as soon as they started (the server cannot start here). */
#define MAX_QUICK_DEATHS 3

/* A question of the helper being answered by the host (the helper may be gone by then). */
typedef struct {
    orte_toolsrv_t *srv;
    uint32_t id;
} host_ask_t;

static orte_toolsrv_t *active; /* the helper's host side (one per process) */

static void pack_jobs(opal_buffer_t *b, const orte_toolsrv_job_t *jobs, size_t n)
{
    opal_buffer_pack_uint32(b, (uint32_t) n);
    for (size_t i = 0; i < n; ++i) {
        opal_buffer_pack_string(b, jobs[i].nspace);
        opal_buffer_pack_uint32(b, jobs[i].num_procs);
        opal_buffer_pack_bool(b, jobs[i].aborting);
        uint32_t k = NULL != jobs[i].procs ? jobs[i].num_known : 0;
        opal_buffer_pack_uint32(b, k);
        for (uint32_t p = 0; p < k; ++p) {
            const orte_toolsrv_proc_t *pr = &jobs[i].procs[p];
            opal_buffer_pack_uint32(b, pr->rank);
            opal_buffer_pack_string(b, pr->host);
            opal_buffer_pack_string(b, pr->executable);
            opal_buffer_pack_int32(b, pr->pid);
            opal_buffer_pack_uint8(b, pr->state);
            opal_buffer_pack_int32(b, pr->exit_code);
        }
    }
}

static void host_jobs_cb(int status, const orte_toolsrv_job_t *jobs, size_t n, void *cbdata)
{
    host_ask_t *ask = cbdata;
    if (ask->srv == active && NULL != active && active->fd >= 0) {
        opal_buffer_t b;
        opal_buffer_init(&b);
        opal_buffer_pack_uint32(&b, ask->id);
        opal_buffer_pack_int32(&b, status);
        if (HERD_SUCCESS == status) {
            pack_jobs(&b, jobs, n);
        }
        toolsrv_pmix_send_frame(active->fd, &b);
        opal_buffer_destruct(&b);
    }
    free(ask);
}

static int helper_start(orte_toolsrv_t *srv);

static void helper_gone(orte_toolsrv_t *srv)
{
    int wstatus = 0;
    opal_event_free(srv->event);
    srv->event = NULL;
    close(srv->fd);
    srv->fd = -1;
    srv->in_used = 0;
    /* it closed its end as it died: a moment at most */
    pid_t got = 0;
    for (int i = 0; srv->pid > 0 && i < 200 && 0 == (got = waitpid(srv->pid, &wstatus, WNOHANG));
         ++i) {
        usleep(5000);
    }
    if (got != srv->pid) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, &wstatus, 0);
    }
    orte_orphans_release(srv->pid);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    bool quick = now.tv_sec - srv->started.tv_sec < 2;
    srv->quick_deaths = quick ? srv->quick_deaths + 1 : 0;
    bool again = srv->quick_deaths < MAX_QUICK_DEATHS;
    opal_output_verbose(1, orte_toolsrv_base_framework.output,
                        "toolsrv pmix: the PMIx tool server of %s (pid %d) ended (%s %d)%s",
                        srv->host->name, (int) srv->pid, WIFSIGNALED(wstatus) ? "signal" : "status",
                        WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus),
                        again ? ": starting another" : "; no more tools");
    toolsrv_pmix_remove_server_dir();
    toolsrv_pmix_remove_system_file(srv->pid);
    srv->pid = -1;
    if (again) {
        (void) helper_start(srv);
    }
}

static void host_serve(orte_toolsrv_t *srv, opal_buffer_t *b)
{
    uint32_t id = 0;
    void *request = NULL;
    size_t len = 0;
    uint8_t type = 0;
    int32_t status = 0;
    opal_buffer_t r;
    opal_buffer_init(&r);
    if (HERD_SUCCESS != opal_buffer_unpack_uint32(b, &id)) {
        return;
    }
    if (0 == id) { /* ready */
        if (HERD_SUCCESS == opal_buffer_unpack_int32(b, &status)) {
            opal_output_verbose(PMIX_SUCCESS == status ? 5 : 1, orte_toolsrv_base_framework.output,
                                "toolsrv pmix: %s (pid %d): PMIx tool server (pid %d): %s",
                                srv->host->name, (int) getpid(), (int) srv->pid,
                                PMIx_Error_string(status));
        }
        return;
    }
    if (HERD_SUCCESS != opal_buffer_unpack_bytes(b, &request, &len) ||
        HERD_SUCCESS != opal_buffer_load(&r, request, len) ||
        HERD_SUCCESS != opal_buffer_unpack_uint8(&r, &type)) {
        free(request);
        opal_buffer_destruct(&r);
        return;
    }
    free(request);
    if (TOOLSRV_PMIX_MSG_JOBS == type) {
        bool with_procs = false;
        host_ask_t *ask = malloc(sizeof(*ask));
        if (NULL != ask && HERD_SUCCESS == opal_buffer_unpack_bool(&r, &with_procs)) {
            ask->srv = srv;
            ask->id = id;
            srv->host->jobs(with_procs, host_jobs_cb, ask, srv->host->arg);
        } else {
            free(ask);
        }
    } else if (TOOLSRV_PMIX_MSG_SIGNAL == type) {
        char *nspace = NULL;
        int32_t signo = 0;
        uint32_t uid = 0;
        int rc = HERD_ERR_BAD_PARAM;
        if (HERD_SUCCESS == opal_buffer_unpack_string(&r, &nspace) && NULL != nspace &&
            HERD_SUCCESS == opal_buffer_unpack_int32(&r, &signo) &&
            HERD_SUCCESS == opal_buffer_unpack_uint32(&r, &uid)) {
            rc = srv->host->signal_job(nspace, signo, uid, srv->host->arg);
        }
        free(nspace);
        opal_buffer_t answer;
        opal_buffer_init(&answer);
        opal_buffer_pack_uint32(&answer, id);
        opal_buffer_pack_int32(&answer, rc);
        toolsrv_pmix_send_frame(srv->fd, &answer);
        opal_buffer_destruct(&answer);
    }
    opal_buffer_destruct(&r);
}

static void host_recv_cb(int fd, short what, void *arg)
{
    orte_toolsrv_t *srv = arg;
    for (;;) {
        if (srv->in_size - srv->in_used < 4096) {
            size_t size = srv->in_size ? 2 * srv->in_size : 16384;
            uint8_t *grown = size <= TOOLSRV_PMIX_FRAME_MAX + 4 ? realloc(srv->in, size) : NULL;
            if (NULL == grown) {
                helper_gone(srv);
                return;
            }
            srv->in = grown;
            srv->in_size = size;
        }
        ssize_t n = read(fd, srv->in + srv->in_used, srv->in_size - srv->in_used);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && EAGAIN == errno) {
            break;
        }
        if (n <= 0) {
            helper_gone(srv);
            return;
        }
        srv->in_used += (size_t) n;
    }
    while (srv->in_used >= 4) {
        size_t len = ((size_t) srv->in[0] << 24) | ((size_t) srv->in[1] << 16) |
                     ((size_t) srv->in[2] << 8) | srv->in[3];
        if (len > TOOLSRV_PMIX_FRAME_MAX) {
            helper_gone(srv);
            return;
        }
        if (srv->in_used < 4 + len) {
            break;
        }
        opal_buffer_t b;
        opal_buffer_init(&b);
        if (HERD_SUCCESS == opal_buffer_load(&b, srv->in + 4, len)) {
            host_serve(srv, &b);
        }
        opal_buffer_destruct(&b);
        memmove(srv->in, srv->in + 4 + len, srv->in_used - 4 - len);
        srv->in_used -= 4 + len;
    }
}

static void toolsrv_pmix_stop(orte_toolsrv_t *srv);

/* Fork the helper (the host has no thread of its own: fork is safe) and listen to it. */
static int helper_start(orte_toolsrv_t *srv)
{
    int sv[2];
    if (0 != socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        return HERD_ERR_IN_ERRNO;
    }
    int rc = toolsrv_pmix_make_server_dir(getpid());
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    fflush(stdout);
    fflush(stderr);
    clock_gettime(CLOCK_MONOTONIC, &srv->started);
    pid_t host_pid = getpid();
    pid_t pid = fork();
    if (0 == pid) {
        close(sv[0]);
        toolsrv_pmix_helper_main(sv[1], host_pid,
                                 srv->host->system_server && toolsrv_pmix_state.system_server);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return HERD_ERR_IN_ERRNO;
    }
    srv->fd = sv[0];
    srv->pid = pid;
    orte_orphans_keep(pid); /* ours: a daemon reaping what dead peers left must not kill it */
    fcntl(srv->fd, F_SETFL, fcntl(srv->fd, F_GETFL) | O_NONBLOCK);
    rc = opal_event_fd_create(srv->host->base, srv->fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              host_recv_cb, srv, &srv->event);
    if (HERD_SUCCESS == rc) {
        opal_event_add(srv->event, NULL);
    }
    return rc;
}

static int toolsrv_pmix_start(const orte_toolsrv_host_t *host, orte_toolsrv_t **server)
{
    if (NULL != active) {
        return HERD_ERR_NOT_AVAILABLE; /* one tool server per process */
    }
    toolsrv_pmix_names_init();
    orte_toolsrv_t *srv = calloc(1, sizeof(*srv));
    if (NULL == srv) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    srv->host = host;
    srv->fd = -1;
    int rc = helper_start(srv);
    if (HERD_SUCCESS != rc) {
        toolsrv_pmix_stop(srv);
        return rc;
    }
    active = srv;
    *server = srv;
    return HERD_SUCCESS;
}

static void toolsrv_pmix_stop(orte_toolsrv_t *srv)
{
    if (NULL == srv) {
        return;
    }
    if (active == srv) {
        active = NULL;
    }
    if (NULL != srv->event) {
        opal_event_free(srv->event);
    }
    if (srv->fd >= 0) {
        close(srv->fd);
    }
    /* Killed rather than let finalize its server: that took a tenth of a second, at the end of
     * every job; what it would remove is ours to remove (its folder, its system-server file). */
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        orte_orphans_release(srv->pid);
        toolsrv_pmix_remove_system_file(srv->pid);
    }
    toolsrv_pmix_remove_server_dir();
    free(srv->in);
    free(srv);
}

static const orte_toolsrv_module_t toolsrv_pmix_module = {
    .name = "pmix",
    .start = toolsrv_pmix_start,
    .stop = toolsrv_pmix_stop,
};

static int toolsrv_pmix_register(const opal_mca_component_t *component)
{
    toolsrv_pmix_state.priority = TOOLSRV_PMIX_DEFAULT_PRIORITY;
    toolsrv_pmix_state.system_server = true;
    int index = opal_mca_var_register(component, "priority",
                                      "Priority of the pmix toolsrv component (herdrun and the DVM "
                                      "root serve PMIx tools: pps, pattrs, pquery)",
                                      OPAL_MCA_VAR_INT, &toolsrv_pmix_state.priority);
    if (index >= 0) {
        /* OpenPMIx 4.2.2's pps connects to the system server first (it ignores --pid): the
         * DVM root is it, unless another process is already */
        index = opal_mca_var_register(component, "system_server",
                                      "The DVM root (herd-dvm) is this host's PMIx system server, "
                                      "unless another process is already: PMIx tools (pps) "
                                      "connect to it first",
                                      OPAL_MCA_VAR_BOOL, &toolsrv_pmix_state.system_server);
    }
    return index < 0 ? index : HERD_SUCCESS;
}

static int toolsrv_pmix_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &toolsrv_pmix_module;
    *priority = toolsrv_pmix_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, toolsrv, pmix, .register_params = toolsrv_pmix_register,
                   .query = toolsrv_pmix_query);
