/* herdd: the daemon the DVM runs on every node. Started by a launcher (plm), never by users;
 * everything it needs comes in its environment or on stdin, never in argv. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "orte/runtime/dvm.h"
#include "orte/runtime/session.h"

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
