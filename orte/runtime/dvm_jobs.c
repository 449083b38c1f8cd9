/* SPDX-License-Identifier: BSD-3-Clause */
/* A node daemon's jobs: the node's static session endpoints, one session daemon (herdd
 * --session) per job launch this node takes part in, handed the job through
 * orte/runtime/session_handoff.h; reaping them, and telling the root when a job cannot start
 * here. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/jobdb.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/runtime/job.h"
#include "orte/runtime/session_handoff.h"
#include "orte/runtime/session_wireup.h"

/* The node's static session endpoints: one listener per slot, on the address the daemon itself
 * listens on, so every peer learns them from the inventory. */
int dvm_jobs_bind_endpoints(orte_dvm_t *dvm)
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
    dvm_daemon_t *daemon = &dvm->daemon;
    daemon->num_session_slots = (uint32_t) dvm->vars->session_slots;
    daemon->session_fds = malloc(daemon->num_session_slots * sizeof(*daemon->session_fds));
    if (NULL == daemon->session_fds) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < daemon->num_session_slots; ++i) {
        daemon->session_fds[i] = -1;
    }
    for (uint32_t i = 0; i < daemon->num_session_slots; ++i) {
        struct sockaddr_in bound = addr;
        socklen_t len = sizeof(bound);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return HERD_ERR_IN_ERRNO;
        }
        daemon->session_fds[i] = fd;
        if (NULL != daemon->session_ports) {
            /* a hosted simulated node: the DVM's common ports, on its own address */
            int one = 1;
            bound.sin_port = htons(daemon->session_ports[i]);
            (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        }
        if (0 != bind(fd, (struct sockaddr *) &bound, sizeof(bound)) || 0 != listen(fd, 256) ||
            0 != getsockname(fd, (struct sockaddr *) &bound, &len)) {
            return HERD_ERR_IN_ERRNO;
        }
        char uri[300];
        snprintf(uri, sizeof(uri), "tcp://%s:%u", host, ntohs(bound.sin_port));
        if (HERD_SUCCESS != opal_argv_append(&daemon->mine->session_uris, uri)) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

/* Tell the root that job jobid cannot start here. */
static void job_error(orte_dvm_t *dvm, const char *jobid, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    char *message = opal_show_help_vstring(DVM_HELP_FILE, topic, false, ap);
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

/* Tell the root that job jobid no longer holds a session slot here (its session daemon ended,
 * or never started): the root gives the slot to the next job. */
static void session_end(orte_dvm_t *dvm, const char *jobid)
{
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_pack_string(&buffer, jobid)) {
        dvm->ovl->send(dvm->overlay, 0, ORTE_DVM_TAG_SESSION_END, buffer.base, buffer.used);
    }
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* starting a job's session daemon */

/* Node node_index's inventory, packed, rebuilt from the inventories by kind. */
static int dvm_jobs_kind_blob(const orte_dvm_t *dvm, uint32_t node_index, opal_buffer_t *out)
{
    orte_inventory_t *inv = NULL;
    opal_buffer_init(out);
    int rc = dvm_kinds_inventory(dvm, dvm->daemon.names, node_index + 1, &inv);
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_pack(out, inv, false);
    }
    orte_inventory_free(inv);
    return rc;
}

/* Write the session daemon's segment: what it needs to map and run the job without asking
 * anyone: the launch message as received, the candidate nodes' inventories, this node's
 * topology XML. */
static int write_launch_segment(orte_dvm_t *dvm, const char *name, const orte_job_launch_t *launch,
                                uint32_t my_candidate, const uint8_t *data, size_t len)
{
    const dvm_daemon_t *daemon = &dvm->daemon;
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
    /* hosted simulated nodes keep the inventories by kind: each candidate's packed here */
    opal_buffer_t *rebuilt = NULL != dvm->kinds
                                 ? calloc(launch->num_candidates + 1, sizeof(*rebuilt))
                                 : NULL;
    rc = (NULL != dvm->kinds && NULL == rebuilt) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    for (uint32_t c = 0; HERD_SUCCESS == rc && c < launch->num_candidates; ++c) {
        if (NULL != rebuilt) {
            rc = dvm_jobs_kind_blob(dvm, launch->node_index[c], &rebuilt[c]);
            blobs[c] = rebuilt[c].base;
            lengths[c] = rebuilt[c].used;
            continue;
        }
        blobs[c] = daemon->inventory_blobs[launch->node_index[c]];
        lengths[c] = daemon->inventory_lengths[launch->node_index[c]];
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_session_handoff_pack(&buffer, daemon->mine->node_name, my_candidate, data, len,
                                       blobs, lengths, launch->num_candidates,
                                       daemon->mine->signature,
                                       orte_inventory_xml(daemon->mine));
    }
    for (uint32_t c = 0; NULL != rebuilt && c < launch->num_candidates; ++c) {
        opal_buffer_destruct(&rebuilt[c]);
    }
    free(rebuilt);
    free(blobs);
    free(lengths);
    if (HERD_SUCCESS == rc) {
        rc = orte_session_handoff_write(name, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

/* This node's index among the job's candidates, UINT32_MAX if it runs no process of it. */
static uint32_t my_candidate(const orte_dvm_t *dvm, const orte_job_launch_t *launch)
{
    uint32_t mine = UINT32_MAX;
    for (uint32_t p = 0; p < launch->num_participants; ++p) {
        if (launch->node_index[launch->participants[p]] == dvm->vpid - 1) {
            mine = launch->participants[p];
        }
    }
    return mine;
}

/* A new entry in dvm->daemon.sessions (counted once its process runs) with the job's slot and
 * segment names, or NULL (reported to the root) when the slot is busy or names fail. */
static dvm_session_t *reserve_session(orte_dvm_t *dvm, const char *jobid, uint32_t slot)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    const char *node = daemon->mine->node_name;
    dvm_jobs_reap(dvm, false);
    if (slot >= daemon->num_session_slots) {
        job_error(dvm, jobid, "session-slot-invalid", jobid, node, slot, daemon->num_session_slots);
        return NULL;
    }
    /* the root gives a slot only once the job before it said it is free: a stale one is a bug */
    for (size_t i = 0; i < daemon->num_sessions; ++i) {
        if (daemon->sessions[i].slot == slot) {
            job_error(dvm, jobid, "session-slot-busy", jobid, node, slot,
                      daemon->sessions[i].jobid);
            return NULL;
        }
    }
    dvm_session_t *grown = realloc(daemon->sessions, (daemon->num_sessions + 1) * sizeof(*grown));
    if (NULL == grown) {
        job_error(dvm, jobid, "session-spawn-failed", jobid, node, "memory", strerror(ENOMEM));
        return NULL;
    }
    daemon->sessions = grown;
    dvm_session_t *s = &daemon->sessions[daemon->num_sessions];
    memset(s, 0, sizeof(*s));
    s->pid = -1;
    s->slot = slot;
    char launch_tag[300];
    snprintf(launch_tag, sizeof(launch_tag), "%s.launch", jobid);
    if (HERD_SUCCESS !=
            opal_jobdb_segment_name(launch_tag, node, s->launch_shm, sizeof(s->launch_shm)) ||
        HERD_SUCCESS != opal_jobdb_segment_name(jobid, node, s->jobdb_shm, sizeof(s->jobdb_shm)) ||
        NULL == (s->jobid = strdup(jobid))) {
        job_error(dvm, jobid, "session-spawn-failed", jobid, node, "segment name",
                  "the job id or node name is not usable in a segment name");
        free(s->jobid);
        return NULL;
    }
    return s;
}

/* `herdd --session` with the segment's name, its endpoint's listener and our pid. */
static int spawn_session(orte_dvm_t *dvm, dvm_session_t *s)
{
    int listen_fd = dvm->daemon.session_fds[s->slot];
    char self[PATH_MAX];
    ssize_t self_len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (self_len <= 0) {
        snprintf(self, sizeof(self), "%s", HERD_BINDIR "/herdd");
    } else {
        self[self_len] = '\0';
    }
    char seg_env[300], fd_env[64], pid_env[64];
    snprintf(seg_env, sizeof(seg_env), "%s=%s", ORTE_SESSION_ENV_SEGMENT, s->launch_shm);
    snprintf(fd_env, sizeof(fd_env), "%s=%d", ORTE_SESSION_ENV_LISTEN_FD, listen_fd);
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
    posix_spawn_file_actions_adddup2(&actions, listen_fd, listen_fd);
    pid_t pid;
    int rc = posix_spawn(&pid, self, &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    opal_argv_free(env);
    if (0 != rc) {
        job_error(dvm, s->jobid, "session-spawn-failed", s->jobid, dvm->daemon.mine->node_name,
                  self, strerror(rc));
        shm_unlink(s->launch_shm);
        return HERD_ERROR;
    }
    s->pid = pid;
    return HERD_SUCCESS;
}

void dvm_jobs_launch(orte_dvm_t *dvm, const uint8_t *data, size_t len)
{
    orte_job_launch_t *launch = NULL;
    opal_buffer_t buffer;
    opal_buffer_init(&buffer);
    int rc = opal_buffer_load(&buffer, data, len);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_launch_unpack(&buffer, dvm->size - 1, &launch);
    }
    opal_buffer_destruct(&buffer);
    if (HERD_SUCCESS != rc) {
        job_error(dvm, "?", "bad-launch", dvm->daemon.mine->node_name, opal_strerror(rc));
        return;
    }
    if (launch->spec->flags & ORTE_JOB_FLAG_DO_NOT_LAUNCH) {
        dvm_map_only_launch(dvm, launch); /* mapped in a virtual session, launched nowhere */
        return;
    }
    uint32_t candidate = my_candidate(dvm, launch);
    dvm_session_t *s = NULL;
    if (UINT32_MAX == candidate) { /* no processes here */
        orte_job_launch_free(launch);
        return;
    }
    s = reserve_session(dvm, launch->spec->jobid, launch->session_slot[candidate]);
    if (NULL == s) {
        session_end(dvm, launch->spec->jobid);
        orte_job_launch_free(launch);
        return;
    }
    rc = write_launch_segment(dvm, s->launch_shm, launch, candidate, data, len);
    orte_job_launch_free(launch);
    if (HERD_SUCCESS != rc) {
        job_error(dvm, s->jobid, "session-spawn-failed", s->jobid, dvm->daemon.mine->node_name,
                  s->launch_shm, HERD_ERR_IN_ERRNO == rc ? strerror(errno) : opal_strerror(rc));
        session_end(dvm, s->jobid);
        free(s->jobid);
        return;
    }
    if (HERD_SUCCESS != spawn_session(dvm, s)) {
        session_end(dvm, s->jobid);
        free(s->jobid);
        return;
    }
    dvm->daemon.num_sessions++;
}

/* ------------------------------------------------------------------------------------------ */
/* their end */

/* Also remove what they should have removed themselves: a session daemon killed with -9
 * cannot unlink its segments. */
void dvm_jobs_reap(orte_dvm_t *dvm, bool block)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    for (size_t i = 0; i < daemon->num_sessions; ++i) {
        dvm_session_t *s = &daemon->sessions[i];
        int wstatus = 0;
        if (s->pid <= 0 || waitpid(s->pid, &wstatus, block ? 0 : WNOHANG) <= 0) {
            continue;
        }
        pid_t reaped = s->pid;
        s->pid = -1;
        if (!block && !(WIFEXITED(wstatus) && 0 == WEXITSTATUS(wstatus)) && !dvm->stopping) {
            /* it may have died before reaching anyone of its job: say so, or nobody will */
            char how[128];
            dvm_describe_exit(wstatus, how, sizeof(how));
            job_error(dvm, s->jobid, "session-died", s->jobid, daemon->mine->node_name, how);
        }
        orte_session_wireup_reaped(reaped, wstatus);
        shm_unlink(s->launch_shm);
        shm_unlink(s->jobdb_shm);
    }
    /* forget the reaped ones */
    size_t kept = 0;
    for (size_t i = 0; i < daemon->num_sessions; ++i) {
        if (daemon->sessions[i].pid > 0) {
            daemon->sessions[kept++] = daemon->sessions[i];
        } else {
            if (!dvm->stopping) {
                session_end(dvm, daemon->sessions[i].jobid);
            }
            free(daemon->sessions[i].jobid);
        }
    }
    daemon->num_sessions = kept;
}

void dvm_jobs_kill(orte_dvm_t *dvm, const uint8_t *data, size_t len)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    opal_buffer_t buffer;
    char *jobid = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == opal_buffer_load(&buffer, data, len) &&
        HERD_SUCCESS == opal_buffer_unpack_string(&buffer, &jobid) && NULL != jobid) {
        for (size_t i = 0; i < daemon->num_sessions; ++i) {
            if (daemon->sessions[i].pid > 0 && 0 == strcmp(daemon->sessions[i].jobid, jobid)) {
                /* the reap says how it ended, to the job's herdrun */
                kill(daemon->sessions[i].pid, SIGKILL);
            }
        }
    }
    free(jobid);
    opal_buffer_destruct(&buffer);
}

void dvm_jobs_release(orte_dvm_t *dvm)
{
    dvm_daemon_t *daemon = &dvm->daemon;
    /* session daemons go with their daemon: they kill their processes on SIGTERM */
    for (size_t i = 0; i < daemon->num_sessions; ++i) {
        if (daemon->sessions[i].pid > 0) {
            kill(daemon->sessions[i].pid, SIGTERM);
        }
    }
    dvm_jobs_reap(dvm, true);
    free(daemon->sessions);
    daemon->sessions = NULL;
    for (uint32_t i = 0; NULL != daemon->session_fds && i < daemon->num_session_slots; ++i) {
        if (daemon->session_fds[i] >= 0) {
            close(daemon->session_fds[i]);
        }
    }
    free(daemon->session_fds);
    daemon->session_fds = NULL;
}
