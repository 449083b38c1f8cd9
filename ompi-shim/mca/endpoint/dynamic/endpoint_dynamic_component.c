/* SPDX-License-Identifier: BSD-3-Clause */
/* endpoint dynamic: the compile-time slots, plus slots that components unknown at configure time
 * (DSO transports) register by name at run time. Each proc's run-time endpoints live in a table
 * behind its last slot, proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX], allocated on the first set
 * and grown when a slot registered later is set: registering never touches existing procs. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi-shim/mca/endpoint/endpoint.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/show_help.h"

#if !HERD_ENDPOINT_DYNAMIC_SLOTS
#error "endpoint dynamic needs the dynamic slot (its configure.m4 declines without it)"
#endif

#define ENDPOINT_DYNAMIC_DEFAULT_PRIORITY  20
#define ENDPOINT_DYNAMIC_DEFAULT_MAX_SLOTS 64

/* A proc's run-time slots: value[i] is slot i's endpoint; slots >= capacity read NULL. */
typedef struct endpoint_dynamic_table {
    uint32_t capacity;
    void *value[];
} endpoint_dynamic_table_t;

static struct {
    int priority;  /* endpoint_dynamic_priority */
    int max_slots; /* endpoint_dynamic_max_slots */
    int max_slots_index;
    char **names; /* registered names, slot i is names[i]; argv, NULL-terminated */
    int num_names;
} endpoint_dynamic_state = {
    .priority = ENDPOINT_DYNAMIC_DEFAULT_PRIORITY,
    .max_slots = ENDPOINT_DYNAMIC_DEFAULT_MAX_SLOTS,
};

/* Where endpoint_dynamic_max_slots came from, for the message that tells how to raise it. */
static const char *max_slots_source(void)
{
    opal_mca_var_info_t info;

    if (HERD_SUCCESS != opal_mca_var_get_info(endpoint_dynamic_state.max_slots_index, &info)) {
        return "default";
    }
    return NULL != info.source_detail ? info.source_detail : opal_mca_var_source_name(info.source);
}

static int endpoint_dynamic_register_slot(const char *name, int *slot)
{
    for (int i = 0; i < endpoint_dynamic_state.num_names; ++i) {
        if (0 == strcmp(endpoint_dynamic_state.names[i], name)) {
            *slot = i;
            return HERD_SUCCESS;
        }
    }
    if (endpoint_dynamic_state.num_names >= endpoint_dynamic_state.max_slots) {
        char *taken = opal_argv_join(endpoint_dynamic_state.names, ',');
        opal_show_help("help-endpoint-dynamic.txt", "too-many-slots", true, name,
                       endpoint_dynamic_state.num_names, endpoint_dynamic_state.max_slots,
                       max_slots_source(), NULL != taken ? taken : "(none)",
                       endpoint_dynamic_state.max_slots + 16);
        free(taken);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS != opal_argv_append(&endpoint_dynamic_state.names, name)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    *slot = endpoint_dynamic_state.num_names++;
    return HERD_SUCCESS;
}

static void *endpoint_dynamic_get(const ompi_proc_t *proc, int slot)
{
    const endpoint_dynamic_table_t *table = proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX];

    if (NULL == table || slot < 0 || (uint32_t) slot >= table->capacity) {
        return NULL;
    }
    return table->value[slot];
}

static int endpoint_dynamic_set(ompi_proc_t *proc, int slot, void *value)
{
    endpoint_dynamic_table_t *table = proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX];

    if (slot < 0 || slot >= endpoint_dynamic_state.num_names) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == table || (uint32_t) slot >= table->capacity) {
        if (NULL == value) {
            return HERD_SUCCESS; /* reads NULL already: nothing to allocate */
        }
        /* room for every slot registered so far: one allocation for a transport that sets
         * several, and none again until a slot registered later is set */
        uint32_t capacity = (uint32_t) endpoint_dynamic_state.num_names;
        uint32_t old = NULL != table ? table->capacity : 0;
        endpoint_dynamic_table_t *grown =
            realloc(table, sizeof(*table) + capacity * sizeof(table->value[0]));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(&grown->value[old], 0, (capacity - old) * sizeof(grown->value[0]));
        grown->capacity = capacity;
        table = grown;
        proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX] = table;
    }
    table->value[slot] = value;
    return HERD_SUCCESS;
}

static void endpoint_dynamic_release(ompi_proc_t *proc)
{
    free(proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]);
    proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX] = NULL;
}

static const ompi_endpoint_module_t endpoint_dynamic_module = {
    .name = "dynamic",
    .register_slot = endpoint_dynamic_register_slot,
    .get = endpoint_dynamic_get,
    .set = endpoint_dynamic_set,
    .release = endpoint_dynamic_release,
};

static int endpoint_dynamic_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &endpoint_dynamic_state.priority,
         .help = "Priority of the dynamic endpoint component (compile-time "
                 "endpoint slots, plus slots components register at run time); "
                 "the available component with the highest priority is used"},
        {.name = "max_slots",
         .type = OPAL_MCA_VAR_INT,
         .storage = &endpoint_dynamic_state.max_slots,
         .help = "Most run-time endpoint slots components may register (one per "
                 "transport not known at configure time); a proc's table of "
                 "them holds at most this many pointers",
         .level = 4, /* a tuner's knob */
         .index = &endpoint_dynamic_state.max_slots_index},
    };

    /* a component that stays loaded (always, in libherd) still holds its previous values */
    endpoint_dynamic_state.priority = ENDPOINT_DYNAMIC_DEFAULT_PRIORITY;
    endpoint_dynamic_state.max_slots = ENDPOINT_DYNAMIC_DEFAULT_MAX_SLOTS;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int endpoint_dynamic_open(const opal_mca_component_t *component)
{
    endpoint_dynamic_state.names = NULL;
    endpoint_dynamic_state.num_names = 0;
    return HERD_SUCCESS;
}

static int endpoint_dynamic_close(const opal_mca_component_t *component)
{
    /* the base released every proc's table first: slot numbers may start again at 0 */
    opal_argv_free(endpoint_dynamic_state.names);
    endpoint_dynamic_state.names = NULL;
    endpoint_dynamic_state.num_names = 0;
    return HERD_SUCCESS;
}

static int endpoint_dynamic_query(const opal_mca_component_t *component, void **module,
                                  int *priority)
{
    *module = (void *) &endpoint_dynamic_module;
    *priority = endpoint_dynamic_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(ompi, endpoint, dynamic, .register_params = endpoint_dynamic_register,
                   .open = endpoint_dynamic_open, .close = endpoint_dynamic_close,
                   .query = endpoint_dynamic_query);
