/* SPDX-License-Identifier: BSD-3-Clause */
/* herd-dvm: start a distributed virtual machine (a daemon on every node of the allocation),
 * report it, and keep it (--daemonize) or take it down again (--exit-when-ready); or stop a
 * running one (--shutdown), or bring a node it marked down back into it (--add-host). */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/cmd_line.h"
#include "opal/util/fd.h"
#include "opal/util/path.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/launch.h"

static const char *help_file = "help-herd-dvm.txt";

static const opal_cmd_line_option_t options[] = {
    {"host", 'H', 1, "HOSTS", "Nodes to use: a comma-separated list, host:slots (e.g. a,b:4,c)"},
    {"hostfile", 0, 1, "FILE", "Nodes to use, from a hostfile (host slots=N max_slots=M lines)"},
    {"mca", 0, 2, "NAME VALUE", "Set the MCA variable NAME to VALUE"},
    {"display-allocation", 0, 0, NULL, "Print the nodes and slots of the allocation"},
    {"display-topology", 0, 0, NULL,
     "Print each distinct node topology (summary and signature) and each node's fabric"},
    {"exit-when-ready", 0, 0, NULL,
     "Bring the DVM up, print the ready line and the displays, and take it down again"},
    {"daemonize", 'd', 0, NULL, "Go to the background once the DVM is ready"},
    {"report-uri", 0, 1, "FILE", "Write the DVM's contact information to FILE (mode 0600)"},
    {"shutdown", 0, 0, NULL, "Stop the DVM named by --dvm-uri and every daemon it started"},
    {"dvm-uri", 0, 1, "FILE", "The contact file of a running DVM (as written by --report-uri)"},
    {"add-host", 0, 1, "HOST",
     "Start a daemon again on HOST, a node the DVM named by --dvm-uri marked down, and wait "
     "until it rejoined"},
    {"timeout", 0, 1, "SECONDS",
     "How long daemons may take to start and report (default 60; MCA dvm_startup_timeout)"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, 0, 0, NULL, NULL},
};

/* How long --add-host waits for the root's answer: the root always answers within the DVM's
 * dvm_startup_timeout (unknown here: set when the DVM started); this only guards against a root
 * that hangs. */
#define ADD_HOST_WAIT_MS (15 * 60 * 1000)

/* --add-host: the root starts a daemon on host and answers once it joined (or could not). */
static int add_host(const char *uri_file, const char *host)
{
    if (HERD_SUCCESS != orte_dvm_contact_check_owner(uri_file, "herd-dvm")) {
        return 1;
    }
    orte_dvm_conn_t *conn = NULL;
    char why[512];
    int rc = orte_dvm_conn_open(uri_file, ADD_HOST_WAIT_MS, &conn, why, sizeof(why));
    if (HERD_ERR_NOT_FOUND == rc) {
        opal_show_help(help_file, "add-host-contact", true, uri_file, why);
        return 1;
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "add-host-unreachable", true, uri_file, why);
        return 1;
    }
    int status = HERD_ERROR;
    char *message = NULL;
    rc = orte_dvm_conn_rejoin(conn, host, &status, &message);
    orte_dvm_conn_close(conn);
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "add-host-no-answer", true, host, uri_file, opal_strerror(rc));
        return 1;
    }
    /* the root's sentence (help-dvm.txt): on stdout when the node joined, else on stderr */
    fputs(message, HERD_SUCCESS == status ? stdout : stderr);
    free(message);
    return HERD_SUCCESS == status ? 0 : 1;
}

/* Whether PID still runs: a zombie does not (kill(pid, 0) still finds one). */
static bool process_runs(pid_t pid)
{
    char path[64], stat[512];
    if (0 != kill(pid, 0)) {
        return false;
    }
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return false;
    }
    size_t n = fread(stat, 1, sizeof(stat) - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *state = strrchr(stat, ')'); /* "pid (comm) S ...": comm may hold ')' */
    return NULL == state || (' ' != state[1] || ('Z' != state[2] && 'X' != state[2]));
}

/* Wait up to TIMEOUT_MS for PIDFD's process (or, without a pidfd, PID) to end; true when it did.
 * A pidfd is readable the moment its process ends, zombie or not: a daemonized root's parent is
 * init, which may reap it a second later. Kernels before 5.3 have no pidfd: look every 50 ms. */
static bool wait_ended(int pidfd, pid_t pid, int timeout_ms)
{
    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n;
        do {
            n = poll(&p, 1, timeout_ms);
        } while (n < 0 && EINTR == errno);
        return n > 0;
    }
    for (int waited = 0; waited < timeout_ms; waited += 50) {
        if (!process_runs(pid)) {
            return true;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return !process_runs(pid);
}

/* --shutdown: the contact file names the root's pid; SIGTERM makes it stop every daemon. */
static int shutdown_dvm(const char *uri_file)
{
    /* root may stop any user's DVM (a site admin cleaning up) */
    if (0 != getuid() && HERD_SUCCESS != orte_dvm_contact_check_owner(uri_file, "herd-dvm")) {
        return 1;
    }
    FILE *f = fopen(uri_file, "r");
    if (NULL == f) {
        opal_show_help(help_file, "uri-unreadable", true, uri_file, strerror(errno));
        return 1;
    }
    char line[512];
    long pid = 0;
    while (NULL != fgets(line, sizeof(line), f)) {
        if (0 == strncmp(line, "pid ", 4)) {
            pid = strtol(line + 4, NULL, 10);
        }
    }
    fclose(f);
    if (pid <= 1 || pid > INT32_MAX) {
        opal_show_help(help_file, "uri-malformed", true, uri_file);
        return 1;
    }
    /* the pidfd first: it then names this process even if the pid is reused after its end */
    int pidfd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0);
    if (0 != kill((pid_t) pid, SIGTERM)) {
        opal_show_help(help_file, "dvm-gone", true, uri_file, pid, strerror(errno));
        if (pidfd >= 0) {
            close(pidfd);
        }
        return 1;
    }
    /* wait (bounded) until it is gone, so the caller can rely on nothing being left */
    bool ended = wait_ended(pidfd, (pid_t) pid, 30 * 1000);
    if (pidfd >= 0) {
        close(pidfd);
    }
    if (!ended) {
        opal_show_help(help_file, "shutdown-timeout", true, pid);
        return 1;
    }
    unlink(uri_file);
    return 0;
}

/* --daemonize: fork before anything starts (the daemons must be children of the process that
 * stays), keep the terminal until the DVM is ready, then let the foreground process exit with
 * the start-up's status. Returns the write end of the pipe the background process reports on. */
static int daemonize(int *report_fd)
{
    int report[2];
    if (0 != pipe2(report, O_CLOEXEC)) {
        return HERD_ERR_IN_ERRNO;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    if (pid > 0) {
        /* foreground: wait for the verdict; EOF without one means the start-up failed */
        close(report[1]);
        char verdict = 0;
        ssize_t n;
        do {
            n = read(report[0], &verdict, 1);
        } while (n < 0 && EINTR == errno);
        _exit((1 == n && 'R' == verdict) ? 0 : 1);
    }
    close(report[0]);
    setsid();
    *report_fd = report[1];
    return HERD_SUCCESS;
}

/* The background DVM is ready: tell the foreground process, and let go of the terminal. */
static void detach(int report_fd)
{
    fflush(stdout);
    ssize_t ignored = write(report_fd, "R", 1);
    (void) ignored;
    close(report_fd);
    FILE *null_in = freopen("/dev/null", "r", stdin);
    FILE *null_out = freopen("/dev/null", "w", stdout);
    (void) null_in;
    (void) null_out;
}

int main(int argc, char *argv[])
{
    opal_cmd_line_t *cmd = NULL;
    orte_dvm_t *dvm = NULL;
    orte_dvm_options_t dvm_options = {0};
    int status = 1;

    opal_fd_fill_stdio();
    if (HERD_SUCCESS != opal_cmd_line_create("herd-dvm", options, &cmd)) {
        return 1;
    }
    if (HERD_SUCCESS != opal_cmd_line_parse(cmd, argc, argv, false)) {
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "help")) {
        printf("Usage: herd-dvm [OPTION]...\n"
               "Start a daemon on every node of the allocation (a DVM) for herdrun to use.\n\n");
        opal_cmd_line_usage(cmd, stdout);
        status = 0;
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "version")) {
        printf("herd-dvm (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        status = 0;
        goto out_cmd;
    }
    if (opal_cmd_line_tail_count(cmd) > 0) {
        opal_show_help(help_file, "unexpected-argument", true, opal_cmd_line_tail(cmd)[0]);
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "add-host")) {
        const char *uri = opal_cmd_line_get(cmd, "dvm-uri", 0, 0);
        if (NULL == uri) {
            opal_show_help(help_file, "add-host-needs-uri", true);
            goto out_cmd;
        }
        status = add_host(uri, opal_cmd_line_get(cmd, "add-host", 0, 0));
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "shutdown")) {
        const char *uri = opal_cmd_line_get(cmd, "dvm-uri", 0, 0);
        if (NULL == uri) {
            opal_show_help(help_file, "shutdown-needs-uri", true);
            goto out_cmd;
        }
        status = shutdown_dvm(uri);
        goto out_cmd;
    }
    /* written once the DVM is up: a place it cannot go is said before any daemon starts */
    const char *uri_file = opal_cmd_line_get(cmd, "report-uri", 0, 0);
    const char *why = NULL;
    if (NULL != uri_file && !opal_path_writable(uri_file, &why)) {
        opal_show_help(help_file, "uri-unwritable", false, uri_file, why);
        goto out_cmd;
    }
    dvm_options.display_allocation = opal_cmd_line_is_set(cmd, "display-allocation");
    dvm_options.display_topology = opal_cmd_line_is_set(cmd, "display-topology");
    dvm_options.persistent = !opal_cmd_line_is_set(cmd, "exit-when-ready");

    if (HERD_SUCCESS != opal_mca_init()) {
        goto out_cmd;
    }
    for (int i = 0; i < opal_cmd_line_count(cmd, "mca"); ++i) {
        const char *name = opal_cmd_line_get(cmd, "mca", i, 0);
        const char *value = opal_cmd_line_get(cmd, "mca", i, 1);
        char env_name[256];
        if (HERD_SUCCESS != opal_mca_var_set_cli(name, value)) {
            goto out_mca;
        }
        /* also in the environment, which the daemons' bootstrap carries to every node */
        snprintf(env_name, sizeof(env_name), "HERD_MCA_%s", name);
        setenv(env_name, value, 1);
    }
    /* -H and --hostfile are the ras variables, given on the command line */
    if (opal_cmd_line_is_set(cmd, "host")) {
        opal_mca_var_set_cli("ras_base_host", opal_cmd_line_get(cmd, "host", 0, 0));
    }
    if (opal_cmd_line_is_set(cmd, "hostfile")) {
        opal_mca_var_set_cli("ras_base_hostfile", opal_cmd_line_get(cmd, "hostfile", 0, 0));
    }
    if (opal_cmd_line_is_set(cmd, "timeout")) {
        opal_mca_var_set_cli("dvm_startup_timeout", opal_cmd_line_get(cmd, "timeout", 0, 0));
    }

    int report_fd = -1;
    if (opal_cmd_line_is_set(cmd, "daemonize") && !opal_cmd_line_is_set(cmd, "exit-when-ready") &&
        HERD_SUCCESS != daemonize(&report_fd)) {
        goto out_mca;
    }
    if (HERD_SUCCESS != orte_dvm_root_start(&dvm_options, &dvm)) {
        goto out_mca;
    }
    orte_launch_check_settings();
    orte_dvm_root_report(dvm, stdout);
    if (!opal_cmd_line_is_set(cmd, "exit-when-ready")) {
        /* herdrun --dvm-uri runs jobs through it */
        char *tool_path = NULL;
        if (HERD_SUCCESS != orte_dvm_tool_server_start(dvm, &tool_path)) {
            fprintf(stderr, "herd-dvm: cannot open the tool socket: %s\n", strerror(errno));
            goto out_dvm;
        }
        orte_dvm_root_set_tool_path(dvm, tool_path);
        free(tool_path);
    }
    if (NULL != uri_file && HERD_SUCCESS != orte_dvm_root_write_uri(dvm, uri_file)) {
        goto out_dvm;
    }
    if (opal_cmd_line_is_set(cmd, "exit-when-ready")) {
        status = 0;
        goto out_dvm;
    }
    if (report_fd >= 0) {
        detach(report_fd);
    }
    status = (HERD_SUCCESS == orte_dvm_root_serve(dvm)) ? 0 : 1;

out_dvm:
    orte_dvm_tool_server_stop();
    orte_dvm_root_stop(dvm);
out_mca:
    opal_mca_finalize();
out_cmd:
    opal_cmd_line_free(cmd);
    return status;
}
