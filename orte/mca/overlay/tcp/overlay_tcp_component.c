/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay tcp: TCP connections on libevent, authenticated with the DVM's secret (libsodium).
 * This file holds the component: its variables, their checks, and the offer of the module. */
#include "herd_config.h"

#include <stdint.h>
#include <stdio.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/overlay/overlay.h"
#include "orte/mca/overlay/tcp/overlay_tcp.h"

#define OVERLAY_TCP_DEFAULT_PRIORITY          10
#define OVERLAY_TCP_DEFAULT_MAX_MESSAGE_SIZE  ((size_t) 64 * 1024 * 1024)

overlay_tcp_settings_t overlay_tcp_settings = {
    .priority = OVERLAY_TCP_DEFAULT_PRIORITY,
    .max_message_size = OVERLAY_TCP_DEFAULT_MAX_MESSAGE_SIZE,
    .if_include_index = -1,
    .if_exclude_index = -1,
};

static int overlay_tcp_register(const opal_mca_component_t *component)
{
    overlay_tcp_settings_t *s = &overlay_tcp_settings;
    /* the tuning knobs are shown to tuners (herd-info --level 4), not to every user */
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &overlay_tcp_settings.priority,
         .help = "Priority of the tcp overlay component (the highest available "
                 "overlay component is used)"},
        {.name = "max_message_size",
         .type = OPAL_MCA_VAR_SIZE,
         .storage = &overlay_tcp_settings.max_message_size,
         .help = "Largest message payload a daemon sends or accepts, in bytes "
                 "(k/m/g suffixes allowed). A neighbour that sends a larger one "
                 "is disconnected: set the same value on every node",
         .level = 4},
        {.name = "if_include",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &overlay_tcp_settings.if_include,
         .help = "Comma-separated interfaces the daemons may listen on and "
                 "advertise, by name (eth0) or subnet (10.0.0.0/8, fd00::/64). "
                 "Cannot be combined with overlay_tcp_if_exclude",
         .index = &overlay_tcp_settings.if_include_index},
        {.name = "if_exclude",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &overlay_tcp_settings.if_exclude,
         .help = "Comma-separated interfaces the daemons must not use, by name "
                 "(docker0) or subnet (172.17.0.0/16). Cannot be combined with "
                 "overlay_tcp_if_include",
         .index = &overlay_tcp_settings.if_exclude_index},
    };

    /* storage holds the default on entry; a component that stays loaded (static build) still
     * holds the values of its previous registration */
    s->priority = OVERLAY_TCP_DEFAULT_PRIORITY;
    s->max_message_size = OVERLAY_TCP_DEFAULT_MAX_MESSAGE_SIZE;
    s->if_include = NULL;
    s->if_exclude = NULL;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int overlay_tcp_open(const opal_mca_component_t *component)
{
    overlay_tcp_settings_t *s = &overlay_tcp_settings;
    overlay_tcp_if_list_t list;
    int rc;

    if (s->max_message_size < OVERLAY_TCP_MIN_MESSAGE_SIZE ||
        s->max_message_size > OVERLAY_TCP_MAX_MESSAGE_SIZE) {
        char value[32];
        char low[32];
        char high[32];

        snprintf(value, sizeof(value), "%zu", s->max_message_size);
        snprintf(low, sizeof(low), "%u", OVERLAY_TCP_MIN_MESSAGE_SIZE);
        snprintf(high, sizeof(high), "%zu", OVERLAY_TCP_MAX_MESSAGE_SIZE);
        opal_show_help(OVERLAY_TCP_HELP_FILE, "bad-value", true, "overlay_tcp_max_message_size",
                       "overlay_tcp_max_message_size", value, low, high,
                       "overlay_tcp_max_message_size");
        return HERD_ERR_SILENT;
    }
    /* the same check and message as the fabric framework's lists */
    rc = opal_fabric_base_check_include_exclude(s->if_include_index, s->if_exclude_index);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* parsed here only to report a bad entry once, at open; init() parses its own copy */
    if (NULL != s->if_include && '\0' != s->if_include[0]) {
        rc = overlay_tcp_if_list_parse("overlay_tcp_if_include", s->if_include, false, &list);
    } else {
        rc = overlay_tcp_if_list_parse("overlay_tcp_if_exclude", s->if_exclude, true, &list);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    overlay_tcp_if_list_free(&list);
    return HERD_SUCCESS;
}

static int overlay_tcp_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &overlay_tcp_module;
    *priority = overlay_tcp_settings.priority;
    return HERD_SUCCESS;
}

int overlay_tcp_output(void)
{
    return orte_overlay_base_framework.output;
}

OPAL_MCA_COMPONENT(orte, overlay, tcp, .register_params = overlay_tcp_register,
                   .open = overlay_tcp_open, .query = overlay_tcp_query);
