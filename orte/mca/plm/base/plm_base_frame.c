/* SPDX-License-Identifier: BSD-3-Clause */
/* The plm framework object, the choice of launcher for an allocation, and shared helpers. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/plm/base/component-hints.h"
#include "orte/mca/plm/base/static-components.h"
#include "orte/mca/plm/plm.h"

opal_mca_framework_t orte_plm_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, plm, "Daemon launch: local fork, ssh tree spawn, Slurm step", true,
    orte_plm_static_components, NULL, orte_plm_component_hints);

/* Which launcher suits an allocation when the user did not choose one (HERD_MCA_plm). */
static const char *preferred_launcher(const orte_allocation_t *allocation)
{
    if (0 == strcmp(allocation->source, "slurm")) {
        return "slurm";
    }
    if (0 == strcmp(allocation->source, "hostfile")) {
        return "ssh";
    }
    return "local"; /* simulated nodes and the local fallback are all on this host */
}

int orte_plm_base_select(const orte_allocation_t *allocation, const orte_plm_module_t **module)
{
    opal_mca_framework_t *fw = &orte_plm_base_framework;
    int rc = opal_mca_framework_select(fw);
    if (HERD_ERR_NOT_FOUND == rc) {
        opal_show_help("help-plm-base.txt", "no-launcher", true,
                       NULL != fw->selection ? fw->selection : "(all)");
        return HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* An explicit selection wins; else the launcher made for this kind of allocation. */
    opal_mca_component_entry_t *chosen = fw->selected[0];
    if (NULL == fw->selection || '\0' == fw->selection[0] || '^' == fw->selection[0]) {
        const char *want = preferred_launcher(allocation);
        for (size_t i = 0; i < fw->num_selected; ++i) {
            if (0 == strcmp(fw->selected[i]->component->name, want)) {
                chosen = fw->selected[i];
            }
        }
    }
    opal_output_verbose(5, fw->output, "plm: launching daemons with %s",
                        chosen->component->name);
    *module = chosen->module;
    return HERD_SUCCESS;
}

void orte_plm_base_close(void)
{
    opal_mca_framework_close(&orte_plm_base_framework);
}

char *orte_plm_base_read_stderr(orte_plm_daemon_t *daemon)
{
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    if (NULL == text) {
        return NULL;
    }
    if (daemon->stderr_fd >= 0) {
        /* whatever is there now, without blocking: the process may still be running */
        int flags = fcntl(daemon->stderr_fd, F_GETFL);
        fcntl(daemon->stderr_fd, F_SETFL, flags | O_NONBLOCK);
        for (;;) {
            if (cap - len < 1024) {
                char *grown = realloc(text, cap * 2);
                if (NULL == grown) {
                    break;
                }
                text = grown;
                cap *= 2;
            }
            ssize_t n = read(daemon->stderr_fd, text + len, cap - len - 1);
            if (n > 0) {
                len += (size_t) n;
            } else if (n < 0 && EINTR == errno) {
                continue;
            } else {
                break;
            }
        }
    }
    /* trailing newlines would make an awkward message */
    while (len > 0 && ('\n' == text[len - 1] || '\r' == text[len - 1])) {
        --len;
    }
    text[len] = '\0';
    return text;
}
