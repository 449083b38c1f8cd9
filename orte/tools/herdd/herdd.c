/* SPDX-License-Identifier: BSD-3-Clause */
/* herdd: the daemon the DVM runs on every node. Started by a launcher (plm), never by users;
 * everything it needs comes in its environment or on stdin, never in argv. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/cmd_line.h"
#include "orte/runtime/dvm.h"
#include "orte/runtime/session.h"

/* For --help (and herdd.1): herdd's arguments are read below by hand, since each is only valid
 * alone; this table is what the usage text lists. */
static const opal_cmd_line_option_t herdd_options[] = {
    {"bootstrap-stdin", 0, 0, NULL,
     "Read the daemon's settings from stdin (how herd-dvm and herdrun start it)"},
    {"session", 0, 0, NULL, "Run as a job's session daemon (how a node's daemon starts it)"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, 0, 0, NULL, NULL},
};

/* herdd --help, --version: what a user who found herdd in bin/ may try. */
static int herdd_usage(const char *arg)
{
    opal_cmd_line_t *cmd = NULL;

    if (0 == strcmp(arg, "--version") || 0 == strcmp(arg, "-V")) {
        printf("herdd (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return 0;
    }
    if (HERD_SUCCESS != opal_cmd_line_create("herdd", herdd_options, &cmd)) {
        return 1;
    }
    printf("Usage: herdd [--bootstrap-stdin | --session]\n"
           "The daemon of a herd DVM: one per node, and one session daemon per job and node.\n"
           "herd-dvm and herdrun start it; it is not started by hand (man herdd).\n\n");
    opal_cmd_line_usage(cmd, stdout);
    opal_cmd_line_free(cmd);
    return 0;
}

int main(int argc, char *argv[])
{
    bool bootstrap_stdin = false;
    if (2 == argc && 0 == strcmp(argv[1], "--session")) {
        /* a job's session daemon, started by the node's daemon. _exit: it leaves its wireup
         * library running (no teardown at the end of a job, orte_session_wireup_end), whose
         * threads and destructors must not race an exit() */
        int status = orte_session_main();
        fflush(stdout);
        fflush(stderr);
        _exit(status);
    }
    if (2 == argc && (0 == strcmp(argv[1], "--help") || 0 == strcmp(argv[1], "-h") ||
                      0 == strcmp(argv[1], "--version") || 0 == strcmp(argv[1], "-V"))) {
        return herdd_usage(argv[1]);
    }
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--bootstrap-stdin")) {
            bootstrap_stdin = true;
        } else {
            fprintf(stderr,
                    "herdd: unknown argument '%s'. herdd is started by herd-dvm or herdrun, "
                    "not by hand.\n",
                    argv[i]);
            return 1;
        }
    }
    return orte_dvm_daemon_main(bootstrap_stdin);
}
