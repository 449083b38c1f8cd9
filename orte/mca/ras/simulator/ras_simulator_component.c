/* SPDX-License-Identifier: BSD-3-Clause */
/* ras simulator: N virtual nodes on this host (sim0001, sim0002, ...), each with an hwloc
 * synthetic topology, so that mapping and launch at scale can be tried without a cluster. */
#include "herd_config.h"

#include <errno.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

#define RAS_SIMULATOR_HELP_FILE          "help-ras-simulator.txt"
#define RAS_SIMULATOR_DEFAULT_PRIORITY   HERD_MCA_PRIORITY_orte_ras_simulator
#define RAS_SIMULATOR_DEFAULT_TOPOLOGY   "pack:2 core:8 pu:2"
#define RAS_SIMULATOR_MIN_NAME_DIGITS    4
#define RAS_SIMULATOR_TOPOLOGY_SEPARATOR ';'
/* One process hosting more virtual nodes than this would run out of descriptors (each node
 * holds its overlay listener, its connections and its session endpoints). */
#define RAS_SIMULATOR_MAX_NODES_PER_PROCESS 4096u

typedef struct {
    int priority;
    unsigned int num_nodes; /* ras_simulator_num_nodes: 0 leaves the simulator out */
    char *topology;         /* ras_simulator_topology, owned by the variable system */
    unsigned int slots;     /* ras_simulator_slots: 0 for the topology's cores */
    unsigned int nodes_per_process; /* ras_simulator_nodes_per_process: 1, one process each */
} ras_simulator_state_t;

static ras_simulator_state_t ras_simulator_state = {
    .priority = RAS_SIMULATOR_DEFAULT_PRIORITY,
};

/* One entry of ras_simulator_topology. */
typedef struct {
    char *text;
    uint32_t slots;
} ras_simulator_topology_t;

static int ras_simulator_allocate(orte_allocation_t **allocation);

static const orte_ras_module_t ras_simulator_module = {
    .allocate = ras_simulator_allocate,
};

static int ras_simulator_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &ras_simulator_state.priority,
         .help = "Priority of the simulator ras component, used when "
                 "ras_simulator_num_nodes is above 0; the highest available "
                 "component wins"},
        {.name = "num_nodes",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &ras_simulator_state.num_nodes,
         .help = "Number of virtual nodes to simulate on this host (sim0001, "
                 "sim0002, ...); 0 does not simulate"},
        {.name = "topology",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &ras_simulator_state.topology,
         .help = "hwloc synthetic topology of each simulated node, e.g. "
                 "\"pack:2 numa:2 core:4 pu:2\"; several separated by ';' are "
                 "given to the nodes in turn, for a mix of node kinds"},
        {.name = "slots",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &ras_simulator_state.slots,
         .help = "Slots of each simulated node; 0 gives each node as many slots "
                 "as its topology has cores"},
        {.name = "nodes_per_process",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &ras_simulator_state.nodes_per_process,
         .help = "Simulated nodes one daemon process hosts, each with its own overlay endpoint "
                 "and state, all driven by the process's one event loop (docs/dvm.md, "
                 "\"Virtual nodes\"); 1 starts one herdd per node. Above 1, a DVM of many "
                 "thousand nodes fits on one host"},
    };

    /* storage holds the default on entry; a component that stays loaded (static build) still
     * holds the values of its previous registration */
    ras_simulator_state.priority = RAS_SIMULATOR_DEFAULT_PRIORITY;
    ras_simulator_state.num_nodes = 0;
    ras_simulator_state.topology = (char *) RAS_SIMULATOR_DEFAULT_TOPOLOGY;
    ras_simulator_state.slots = 0;
    ras_simulator_state.nodes_per_process = 1;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int ras_simulator_query(const opal_mca_component_t *component, void **module, int *priority)
{
    if (0 == ras_simulator_state.num_nodes) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    /* topologies are checked by allocate(): a bad one must stop the run, not make the
     * framework quietly pick another component */
    *module = (void *) &ras_simulator_module;
    *priority = ras_simulator_state.priority;
    return HERD_SUCCESS;
}

/* hwloc explains a refused synthetic description only on stderr, and only when
 * HWLOC_SYNTHETIC_VERBOSE is set: ask it again that way with stderr sent to a temporary file,
 * and keep its first line. Only runs on the way to an error message. */
static void ras_simulator_hwloc_reason(const char *text, int error, char *reason, size_t size)
{
    const char *previous = getenv("HWLOC_SYNTHETIC_VERBOSE");
    char *saved_value = NULL != previous ? strdup(previous) : NULL;
    hwloc_topology_t topology;
    FILE *capture = tmpfile();
    int saved_stderr = -1;
    char line[512];

    snprintf(reason, size, "hwloc refused it (%s)", strerror(error));
    if (NULL == capture || (NULL != previous && NULL == saved_value)) {
        goto out;
    }
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    if (saved_stderr < 0 || dup2(fileno(capture), STDERR_FILENO) < 0) {
        goto out;
    }
    setenv("HWLOC_SYNTHETIC_VERBOSE", "1", 1);
    if (0 == hwloc_topology_init(&topology)) {
        if (0 == hwloc_topology_set_synthetic(topology, text)) {
            (void) hwloc_topology_load(topology);
        }
        hwloc_topology_destroy(topology);
    }
    if (NULL != saved_value) {
        setenv("HWLOC_SYNTHETIC_VERBOSE", saved_value, 1);
    } else {
        unsetenv("HWLOC_SYNTHETIC_VERBOSE");
    }
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    rewind(capture);
    if (NULL != fgets(line, sizeof(line), capture)) {
        size_t length = strcspn(line, "\r\n");

        if (length > 0) {
            line[length] = '\0';
            snprintf(reason, size, "hwloc: %s", line);
        }
    }

out:
    if (saved_stderr >= 0) {
        close(saved_stderr);
    }
    if (NULL != capture) {
        fclose(capture);
    }
    free(saved_value);
}

/* Loads the synthetic topology once: whether hwloc accepts it, and its cores (hardware threads
 * when it has no core level). */
static int ras_simulator_check(const char *text, int entry, uint32_t *slots)
{
    hwloc_topology_t topology;
    char reason[600];
    int count;

    if (0 != hwloc_topology_init(&topology)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    errno = 0;
    if (0 != hwloc_topology_set_synthetic(topology, text) || 0 != hwloc_topology_load(topology)) {
        int error = 0 != errno ? errno : EINVAL;

        hwloc_topology_destroy(topology);
        ras_simulator_hwloc_reason(text, error, reason, sizeof(reason));
        opal_show_help(RAS_SIMULATOR_HELP_FILE, "bad-topology", true, entry, text, reason);
        return HERD_ERR_SILENT;
    }
    count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    if (count <= 0) {
        count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    }
    hwloc_topology_destroy(topology);
    if (count <= 0 || count > (int) ORTE_RAS_MAX_SLOTS) {
        opal_show_help(RAS_SIMULATOR_HELP_FILE, "topology-slots", true, entry, text, count,
                       ORTE_RAS_MAX_SLOTS);
        return HERD_ERR_SILENT;
    }
    *slots = (uint32_t) count;
    return HERD_SUCCESS;
}

static void ras_simulator_topologies_free(ras_simulator_topology_t *topologies, size_t count)
{
    for (size_t i = 0; NULL != topologies && i < count; i++) {
        free(topologies[i].text);
    }
    free(topologies);
}

/* The ';'-separated entries of ras_simulator_topology, each checked with hwloc; an entry given
 * again reuses the first one's check, so a long list of few kinds stays fast. */
static int ras_simulator_topologies(ras_simulator_topology_t **topologies, size_t *count)
{
    const char *value = NULL != ras_simulator_state.topology ? ras_simulator_state.topology : "";
    ras_simulator_topology_t *list;
    size_t entries = 1;
    size_t used = 0;
    const char *start = value;
    int rc = HERD_SUCCESS;

    for (const char *c = value; '\0' != *c; c++) {
        entries += RAS_SIMULATOR_TOPOLOGY_SEPARATOR == *c;
    }
    list = calloc(entries, sizeof(*list));
    if (NULL == list) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    while (used < entries) {
        const char *end = strchr(start, RAS_SIMULATOR_TOPOLOGY_SEPARATOR);
        const char *stop = NULL != end ? end : start + strlen(start);
        ras_simulator_topology_t *topology = &list[used];

        while (start < stop && (' ' == *start || '\t' == *start)) {
            start++;
        }
        while (stop > start && (' ' == stop[-1] || '\t' == stop[-1])) {
            stop--;
        }
        if (start == stop) {
            opal_show_help(RAS_SIMULATOR_HELP_FILE, "empty-topology", true, (int) used + 1, value);
            rc = HERD_ERR_SILENT;
            break;
        }
        topology->text = strndup(start, (size_t) (stop - start));
        if (NULL == topology->text) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            break;
        }
        used++;
        for (size_t i = 0; i + 1 < used; i++) {
            if (0 == strcmp(list[i].text, topology->text)) {
                topology->slots = list[i].slots;
                break;
            }
        }
        if (0 == topology->slots) {
            rc = ras_simulator_check(topology->text, (int) used, &topology->slots);
            if (HERD_SUCCESS != rc) {
                break;
            }
        }
        if (NULL == end) {
            break;
        }
        start = end + 1;
    }
    if (HERD_SUCCESS != rc) {
        ras_simulator_topologies_free(list, used);
        return rc;
    }
    *topologies = list;
    *count = used;
    return HERD_SUCCESS;
}

static int ras_simulator_allocate(orte_allocation_t **allocation)
{
    uint32_t num_nodes = ras_simulator_state.num_nodes;
    ras_simulator_topology_t *topologies = NULL;
    orte_allocation_t *result = NULL;
    size_t num_topologies = 0;
    char name[32];
    int digits = 1;
    int rc;

    if (num_nodes > ORTE_RAS_MAX_NODES) {
        opal_show_help(RAS_SIMULATOR_HELP_FILE, "too-many-nodes", true, num_nodes,
                       ORTE_RAS_MAX_NODES);
        return HERD_ERR_SILENT;
    }
    if (ras_simulator_state.slots > ORTE_RAS_MAX_SLOTS) {
        opal_show_help(RAS_SIMULATOR_HELP_FILE, "too-many-slots", true, ras_simulator_state.slots,
                       ORTE_RAS_MAX_SLOTS);
        return HERD_ERR_SILENT;
    }
    if (0 == ras_simulator_state.nodes_per_process ||
        ras_simulator_state.nodes_per_process > RAS_SIMULATOR_MAX_NODES_PER_PROCESS) {
        opal_show_help(RAS_SIMULATOR_HELP_FILE, "bad-nodes-per-process", true,
                       ras_simulator_state.nodes_per_process, RAS_SIMULATOR_MAX_NODES_PER_PROCESS);
        return HERD_ERR_SILENT;
    }
    rc = ras_simulator_topologies(&topologies, &num_topologies);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    for (uint32_t n = num_nodes; n >= 10u; n /= 10u) {
        digits++;
    }
    if (digits < RAS_SIMULATOR_MIN_NAME_DIGITS) {
        digits = RAS_SIMULATOR_MIN_NAME_DIGITS;
    }
    if (digits > 10) {
        digits = 10; /* cannot happen for a uint32_t; tells the compiler the name fits */
    }
    result = orte_allocation_new("simulator");
    if (NULL == result) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    result->nodes_per_process = ras_simulator_state.nodes_per_process;
    /* sized once: adding a quarter of a million nodes one by one would copy the array as often */
    result->nodes = calloc(num_nodes, sizeof(*result->nodes));
    if (NULL == result->nodes) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t i = 0; i < num_nodes; i++) {
        const ras_simulator_topology_t *topology = &topologies[i % num_topologies];
        orte_node_t *node = &result->nodes[i];

        snprintf(name, sizeof(name), "sim%0*u", digits, (unsigned) i + 1u);
        node->name = strdup(name);
        node->topology = strdup(topology->text);
        node->origin = strdup("simulator");
        node->slots = 0 != ras_simulator_state.slots ? ras_simulator_state.slots : topology->slots;
        result->num_nodes++;
        if (NULL == node->name || NULL == node->topology || NULL == node->origin) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto out;
        }
    }
    opal_output_verbose(10, orte_ras_base_framework.output,
                        "ras simulator: %u node(s) with %zu topolog%s", num_nodes, num_topologies,
                        1 == num_topologies ? "y" : "ies");
    *allocation = result;
    result = NULL;

out:
    orte_allocation_free(result);
    ras_simulator_topologies_free(topologies, num_topologies);
    return rc;
}

OPAL_MCA_COMPONENT(orte, ras, simulator, .register_params = ras_simulator_register,
                   .query = ras_simulator_query);
