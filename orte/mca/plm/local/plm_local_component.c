/* SPDX-License-Identifier: BSD-3-Clause */
/* plm local: start every daemon on this host with fork/exec. Used for simulated nodes (many
 * virtual nodes on one machine) and for allocations that are only this host. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <stdbool.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "orte/mca/plm/plm.h"

static int plm_local_launch(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd);

static const orte_plm_module_t plm_local_module = {
    .name = "local",
    .prebinds_listeners = true,
    .launch = plm_local_launch,
};

static struct {
    int priority;
} plm_local_state;

static int plm_local_register(const opal_mca_component_t *component)
{
    plm_local_state.priority = 10;
    int rc = opal_mca_var_register(component, "priority",
                                   "Priority of the local launcher (daemons forked on this host)",
                                   OPAL_MCA_VAR_INT, &plm_local_state.priority);
    return rc < 0 ? rc : HERD_SUCCESS;
}

static int plm_local_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &plm_local_module;
    *priority = plm_local_state.priority;
    return HERD_SUCCESS;
}

extern char **environ;

/* The daemon's environment: ours plus its bootstrap (which wins). */
static char **daemon_environment(const orte_plm_daemon_t *daemon, char *launcher_pid)
{
    size_t ours = 0, boot = 0;
    while (NULL != environ[ours]) {
        ++ours;
    }
    while (NULL != daemon->boot && NULL != daemon->boot[boot]) {
        ++boot;
    }
    char **env = calloc(ours + boot + 2, sizeof(*env));
    if (NULL == env) {
        return NULL;
    }
    size_t n = 0;
    for (size_t b = 0; b < boot; ++b) {
        env[n++] = daemon->boot[b];
    }
    env[n++] = launcher_pid;
    for (size_t i = 0; i < ours; ++i) {
        /* a bootstrap key already given keeps its bootstrap value */
        const char *eq = strchr(environ[i], '=');
        size_t key_len = (NULL != eq) ? (size_t) (eq - environ[i]) + 1 : strlen(environ[i]);
        bool shadowed = false;
        for (size_t b = 0; b < boot && !shadowed; ++b) {
            shadowed = 0 == strncmp(daemon->boot[b], environ[i], key_len);
        }
        if (!shadowed) {
            env[n++] = environ[i];
        }
    }
    env[n] = NULL;
    return env;
}

/* posix_spawn (a vfork underneath) rather than fork: starting hundreds of simulated nodes, the
 * launcher must not copy its page tables for each. The daemon sets its own parent-death
 * signal (HERD_DVM_LAUNCHER_PID tells it whose death to watch). */
static int plm_local_launch(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd)
{
    char *argv[] = {(char *) "herdd", NULL};
    char launcher_pid[64];
    /* Say at once when the binary is not there, whatever posix_spawn reports for it. */
    if (0 != access(herdd, X_OK)) {
        return HERD_ERR_IN_ERRNO;
    }
    snprintf(launcher_pid, sizeof(launcher_pid), "HERD_DVM_LAUNCHER_PID=%d", (int) getpid());
    for (size_t i = 0; i < num_daemons; ++i) {
        orte_plm_daemon_t *d = &daemons[i];
        posix_spawn_file_actions_t actions;
        int err_pipe[2];
        int rc;
        char **env = daemon_environment(d, launcher_pid);
        if (NULL == env) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        if (0 != pipe2(err_pipe, O_CLOEXEC)) {
            free(env);
            return HERD_ERR_IN_ERRNO;
        }
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
        if (d->listen_fd >= 0) {
            /* dup2 onto itself clears close-on-exec: the one listener this daemon inherits */
            posix_spawn_file_actions_adddup2(&actions, d->listen_fd, d->listen_fd);
        }
        for (size_t f = 0; f < d->num_inherit_fds; ++f) {
            posix_spawn_file_actions_adddup2(&actions, d->inherit_fds[f], d->inherit_fds[f]);
        }
        /* a process group of its own: Ctrl-C at the terminal reaches the launcher alone, which
         * decides what the job does with it (a daemon would otherwise die on it) */
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        pid_t pid;
        rc = posix_spawn(&pid, herdd, &actions, &attr, argv, env);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&actions);
        free(env);
        close(err_pipe[1]);
        if (0 != rc) {
            /* the caller names the node (the first daemon without a pid) and errno */
            close(err_pipe[0]);
            errno = rc;
            return HERD_ERR_IN_ERRNO;
        }
        d->pid = pid;
        d->stderr_fd = err_pipe[0];
    }
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, plm, local, .register_params = plm_local_register,
                   .query = plm_local_query);
