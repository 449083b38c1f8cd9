/* SPDX-License-Identifier: BSD-3-Clause */
/* plm ssh: start daemons with ssh. A tree spawn: the root starts only its own children, each
 * daemon starts its children once it has joined, so no process forks n ssh clients; the daemon
 * of the node the launcher runs on is started without ssh. The bootstrap (secret, contact
 * information) goes over ssh's stdin, never on a command line. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "orte/mca/plm/plm.h"

static int plm_ssh_launch(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd);

static const orte_plm_module_t plm_ssh_module = {
    .name = "ssh",
    .prebinds_listeners = false,
    .tree_spawn = true,
    .launch = plm_ssh_launch,
};

static struct {
    int priority;
    char *agent;         /* plm_ssh_agent */
    char *args;          /* plm_ssh_args */
    char *remote_prefix; /* plm_ssh_remote_prefix */
} plm_ssh_state;

static int plm_ssh_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &plm_ssh_state.priority,
         .help = "Priority of the ssh launcher"},
        {.name = "agent",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &plm_ssh_state.agent,
         .help = "The remote shell client to start daemons with (e.g. ssh, "
                 "or a wrapper script)"},
        {.name = "args",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &plm_ssh_state.args,
         .help = "Arguments given to the agent before the host name, split "
                 "at spaces (e.g. \"-F /path/ssh_config\")"},
        {.name = "remote_prefix",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &plm_ssh_state.remote_prefix,
         .help = "Folder holding herdd on the remote nodes, when it differs "
                 "from this node's (default: the same path as here)"},
    };

    plm_ssh_state.priority = 5;
    plm_ssh_state.agent = "ssh";
    plm_ssh_state.args = "-x -o BatchMode=yes";
    plm_ssh_state.remote_prefix = "";
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int plm_ssh_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &plm_ssh_module;
    *priority = plm_ssh_state.priority;
    return HERD_SUCCESS;
}

/* argv: agent [args...] host remote-herdd --bootstrap-stdin */
/* Whether host names the node this process runs on: its name (with or without the domain,
 * on either side) or localhost. */
static bool ssh_is_this_host(const char *host)
{
    char self[256] = "";
    if (0 == strcmp(host, "localhost") || 0 != gethostname(self, sizeof(self) - 1)) {
        return 0 == strcmp(host, "localhost");
    }
    size_t self_short = strcspn(self, ".");
    size_t host_short = strcspn(host, ".");
    if (0 == strcmp(host, self)) {
        return true;
    }
    /* "n1" and "n1.cluster": the same node when one of them is the short name */
    return self_short == host_short && 0 == strncmp(host, self, host_short) &&
           ('\0' == host[host_short] || '\0' == self[self_short]);
}

/* The daemon of the node this process runs on needs no remote shell: started directly it is up
 * while the other nodes' ssh handshakes still run (Hydra starts its local proxy so too). It gets
 * its bootstrap on stdin all the same, and this node's herdd. */
static char **local_argv(const char *herdd)
{
    char **argv = NULL;
    if (HERD_SUCCESS != opal_argv_append(&argv, herdd) ||
        HERD_SUCCESS != opal_argv_append(&argv, "--bootstrap-stdin")) {
        opal_argv_free(argv);
        return NULL;
    }
    return argv;
}

static char **ssh_argv(const char *host, const char *herdd)
{
    if (ssh_is_this_host(host)) {
        return local_argv(herdd);
    }
    char **argv = opal_argv_split(plm_ssh_state.agent, ' ');
    char **extra = opal_argv_split(NULL != plm_ssh_state.args ? plm_ssh_state.args : "", ' ');
    char remote[4096];
    if (NULL == argv || NULL == extra) {
        opal_argv_free(argv);
        opal_argv_free(extra);
        return NULL;
    }
    const char *prefix = plm_ssh_state.remote_prefix;
    if (NULL != prefix && '\0' != prefix[0]) {
        snprintf(remote, sizeof(remote), "%s/herdd", prefix);
    } else {
        snprintf(remote, sizeof(remote), "%s", herdd);
    }
    int rc = opal_argv_insert(&argv, opal_argv_count(argv), extra);
    rc = (HERD_SUCCESS == rc) ? opal_argv_append(&argv, host) : rc;
    rc = (HERD_SUCCESS == rc) ? opal_argv_append(&argv, remote) : rc;
    rc = (HERD_SUCCESS == rc) ? opal_argv_append(&argv, "--bootstrap-stdin") : rc;
    opal_argv_free(extra);
    if (HERD_SUCCESS != rc) {
        opal_argv_free(argv);
        return NULL;
    }
    return argv;
}

static int plm_ssh_launch(orte_plm_daemon_t *daemons, size_t num_daemons, const char *herdd)
{
    for (size_t i = 0; i < num_daemons; ++i) {
        orte_plm_daemon_t *d = &daemons[i];
        int in_pipe[2], err_pipe[2];
        char **argv = ssh_argv(d->node->name, herdd);
        if (NULL == argv) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        if (0 != pipe2(in_pipe, O_CLOEXEC)) {
            opal_argv_free(argv);
            return HERD_ERR_IN_ERRNO;
        }
        if (0 != pipe2(err_pipe, O_CLOEXEC)) {
            close(in_pipe[0]);
            close(in_pipe[1]);
            opal_argv_free(argv);
            return HERD_ERR_IN_ERRNO;
        }
        pid_t pid = fork();
        if (pid < 0) {
            int saved = errno;
            close(in_pipe[0]);
            close(in_pipe[1]);
            close(err_pipe[0]);
            close(err_pipe[1]);
            opal_argv_free(argv);
            errno = saved;
            return HERD_ERR_IN_ERRNO;
        }
        if (0 == pid) {
            /* the ssh client goes when its launcher goes, which ends the remote daemon's
             * session too */
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            dup2(in_pipe[0], STDIN_FILENO);
            dup2(err_pipe[1], STDERR_FILENO);
            int null_fd = open("/dev/null", O_WRONLY);
            if (null_fd >= 0) {
                dup2(null_fd, STDOUT_FILENO);
            }
            /* its own session (so its own process group): a terminal's ^C reaches herd-dvm,
             * which stops the DVM in order, rather than every ssh client at once. A session,
             * not only a group: with the kernel's autogroup scheduling (sched_autogroup_enabled)
             * a session shares the CPU as one, and n ssh handshakes left in herd-dvm's session
             * got one share together on a busy machine (8 test hosts: ~0.6 s later than Hydra's,
             * whose ssh clients each have a session of their own). BatchMode: nothing to ask on
             * a terminal. */
            if (setsid() < 0) {
                setpgid(0, 0);
            }
            execvp(argv[0], argv);
            dprintf(STDERR_FILENO, "cannot execute %s: %s\n", argv[0], strerror(errno));
            _exit(127);
        }
        opal_argv_free(argv);
        close(in_pipe[0]);
        close(err_pipe[1]);
        /* the bootstrap, then an empty line. The pipe stays open: the daemon takes its EOF to
         * mean that this launcher is gone. */
        for (size_t b = 0; NULL != d->boot && NULL != d->boot[b]; ++b) {
            dprintf(in_pipe[1], "%s\n", d->boot[b]);
        }
        dprintf(in_pipe[1], "\n");
        d->pid = pid;
        d->stderr_fd = err_pipe[0];
        d->stdin_fd = in_pipe[1];
    }
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, plm, ssh, .register_params = plm_ssh_register, .query = plm_ssh_query);
