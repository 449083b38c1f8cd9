/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlay framework object, its static-component table, its variables, and
 * open/select/close. */
#include "herd_config.h"

#include <stdio.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/util/show_help.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/overlay/base/component-hints.h"
#include "orte/mca/overlay/base/static-components.h"

/* A few seconds: a real daemon answers a connection within milliseconds, and every second more
 * is a second a stranger holds a descriptor (docs/overlay.md, "Strangers"). */
#define OVERLAY_BASE_DEFAULT_HANDSHAKE_TIMEOUT 5u

static int overlay_base_register(void);

opal_mca_framework_t orte_overlay_base_framework = OPAL_MCA_FRAMEWORK_INIT_HINTS(
    orte, overlay, "Daemon-to-daemon messaging along a radix tree", false,
    orte_overlay_static_components, overlay_base_register, orte_overlay_component_hints);

/* Storage of the framework variables, owned by the variable system. */
static struct {
    unsigned handshake_timeout; /* overlay_base_handshake_timeout, seconds */
    int handshake_timeout_index;
} overlay_base_vars;

static int overlay_base_register(void)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "base_handshake_timeout",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &overlay_base_vars.handshake_timeout,
         .help = "Seconds a connection to a daemon's listener has to authenticate before it is "
                 "dropped (at least 1); a daemon waits for its own parent's answer at least "
                 "dvm_heartbeat_timeout",
         .level = 4,
         .index = &overlay_base_vars.handshake_timeout_index},
    };
    int rc;

    overlay_base_vars.handshake_timeout = OVERLAY_BASE_DEFAULT_HANDSHAKE_TIMEOUT;
    rc = opal_mca_var_register_framework_table("overlay", vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* it was the tcp component's, before it applied to every component */
    rc = opal_mca_var_register_synonym(overlay_base_vars.handshake_timeout_index,
                                       "overlay_tcp_handshake_timeout");
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (0 == overlay_base_vars.handshake_timeout) {
        opal_show_help("help-overlay-base.txt", "bad-handshake-timeout", true);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

unsigned orte_overlay_base_handshake_timeout(void)
{
    return overlay_base_vars.handshake_timeout;
}

int orte_overlay_base_open(void)
{
    return opal_mca_framework_open_select(&orte_overlay_base_framework);
}

void orte_overlay_base_close(void)
{
    opal_mca_framework_close(&orte_overlay_base_framework);
}

const orte_overlay_module_t *orte_overlay_base_module(void)
{
    return opal_mca_framework_module(&orte_overlay_base_framework);
}
