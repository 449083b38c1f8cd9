/* SPDX-License-Identifier: BSD-3-Clause */
/* Keeping a whole map, printing it (--display-map, --report-bindings), and loading a node's
 * topology from its inventory. */
#include "herd_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/rmaps/base/base.h"

typedef struct {
    orte_rmaps_map_t *map;
    uint32_t capacity;
} collector_t;

static int collect_one(const orte_rmaps_proc_t *proc, void *cbdata)
{
    collector_t *c = cbdata;
    orte_rmaps_map_t *map = c->map;
    orte_rmaps_proc_t *copy;

    if (map->num_procs == c->capacity) {
        uint32_t capacity = c->capacity > 0 ? c->capacity * 2 : 64;
        orte_rmaps_proc_t *procs = realloc(map->procs, capacity * sizeof(*procs));
        if (NULL == procs) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        map->procs = procs;
        c->capacity = capacity;
    }
    copy = &map->procs[map->num_procs];
    *copy = *proc;
    copy->cpuset = strdup(proc->cpuset);
    copy->locality = strdup(proc->locality);
    map->num_procs++;
    if (NULL == copy->cpuset || NULL == copy->locality) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    return HERD_SUCCESS;
}

int orte_rmaps_base_map_collect(const orte_rmaps_job_t *job, orte_rmaps_map_t **map)
{
    collector_t c = {.map = calloc(1, sizeof(orte_rmaps_map_t))};
    uint32_t num_procs;
    int rc;

    if (NULL == c.map) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = orte_rmaps_base_map_job(job, collect_one, &c, &num_procs);
    if (HERD_SUCCESS != rc) {
        orte_rmaps_map_free(c.map);
        return rc;
    }
    *map = c.map;
    return HERD_SUCCESS;
}

void orte_rmaps_map_free(orte_rmaps_map_t *map)
{
    if (NULL == map) {
        return;
    }
    for (uint32_t i = 0; i < map->num_procs; ++i) {
        free((char *) map->procs[i].cpuset);
        free((char *) map->procs[i].locality);
    }
    free(map->procs);
    free(map);
}

void orte_rmaps_display_map(FILE *out, const orte_rmaps_job_t *job, const orte_rmaps_map_t *map)
{
    orte_rmaps_display_map_annotated(out, job, map, NULL, NULL);
}

void orte_rmaps_display_map_annotated(FILE *out, const orte_rmaps_job_t *job,
                                      const orte_rmaps_map_t *map,
                                      orte_rmaps_annotate_fn_t annotate, void *arg)
{
    uint32_t *per_node = calloc((size_t) job->num_nodes + 1, sizeof(*per_node));

    if (NULL == per_node) {
        return;
    }
    for (uint32_t i = 0; i < map->num_procs; ++i) {
        per_node[map->procs[i].node]++;
    }
    fprintf(out, "=== job map: %u processes on %u nodes ===\n", map->num_procs, job->num_nodes);
    /* one pass per node keeps rank order inside a node; a display is for small jobs */
    for (uint32_t n = 0; n < job->num_nodes; ++n) {
        if (0 == per_node[n]) {
            continue;
        }
        fprintf(out, "node %s: %u slots, %u processes\n", job->nodes[n].name, job->nodes[n].slots,
                per_node[n]);
        for (uint32_t i = 0; i < map->num_procs; ++i) {
            const orte_rmaps_proc_t *p = &map->procs[i];
            if (p->node != n) {
                continue;
            }
            char extra[512] = "";
            if (NULL != annotate) {
                annotate(p, extra, sizeof(extra), arg);
            }
            fprintf(out, "    rank %-6u app %-3u local %-5u cpus %-12s %s%s%s\n", p->rank, p->app,
                    p->local_rank, p->bound ? p->cpuset : "(unbound)", p->locality,
                    '\0' != extra[0] ? "  " : "", extra);
        }
    }
    fprintf(out, "=== end of job map ===\n");
    free(per_node);
}

void orte_rmaps_binding_line(const char *node_name, const orte_rmaps_proc_t *proc, char *text,
                             size_t size)
{
    if (proc->bound) {
        snprintf(text, size, "[%s] rank %u (app %u, local rank %u) bound to cpus %s (%s)",
                 node_name, proc->rank, proc->app, proc->local_rank, proc->cpuset, proc->locality);
    } else {
        snprintf(text, size, "[%s] rank %u (app %u, local rank %u) not bound (cpus %s)", node_name,
                 proc->rank, proc->app, proc->local_rank, proc->cpuset);
    }
}

/* The topologies this process loaded, by their description (XML or synthetic): a session
 * daemon forked by herdrun would parse the XML herdrun just parsed, and a spawn the one its job
 * did, where a copy costs a tenth of a parse or less. A few descriptions at most: the nodes of a
 * DVM are usually alike. */
#define TOPOLOGY_CACHE_SIZE 4

static struct {
    char kind; /* 'x' XML, 's' synthetic */
    char *text;
    hwloc_topology_t topology;
} topology_cache[TOPOLOGY_CACHE_SIZE];
static unsigned topology_cache_next;
static pthread_mutex_t topology_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool topology_cached(char kind, const char *text, hwloc_topology_t *topology)
{
    bool found = false;
    pthread_mutex_lock(&topology_cache_lock);
    for (unsigned i = 0; i < TOPOLOGY_CACHE_SIZE && !found; ++i) {
        if (NULL != topology_cache[i].text && kind == topology_cache[i].kind &&
            0 == strcmp(text, topology_cache[i].text)) {
            found = 0 == hwloc_topology_dup(topology, topology_cache[i].topology);
        }
    }
    pthread_mutex_unlock(&topology_cache_lock);
    return found;
}

static void topology_remember(char kind, const char *text, hwloc_topology_t loaded)
{
    hwloc_topology_t copy;
    char *key = strdup(text);
    if (NULL == key || 0 != hwloc_topology_dup(&copy, loaded)) {
        free(key);
        return; /* not remembered: the next load parses again */
    }
    pthread_mutex_lock(&topology_cache_lock);
    unsigned slot = topology_cache_next++ % TOPOLOGY_CACHE_SIZE;
    if (NULL != topology_cache[slot].text) {
        free(topology_cache[slot].text);
        hwloc_topology_destroy(topology_cache[slot].topology);
    }
    topology_cache[slot].kind = kind;
    topology_cache[slot].text = key;
    topology_cache[slot].topology = copy;
    pthread_mutex_unlock(&topology_cache_lock);
}

int orte_rmaps_topology_load(const orte_inventory_t *inventory, hwloc_topology_t *topology)
{
    hwloc_topology_t topo;
    int failed;

    if (NULL == inventory || (NULL == inventory->xml && NULL == inventory->synthetic)) {
        return HERD_ERR_NOT_FOUND;
    }
    char kind = NULL != inventory->xml ? 'x' : 's';
    const char *text = NULL != inventory->xml ? inventory->xml : inventory->synthetic;
    if (topology_cached(kind, text, topology)) {
        return HERD_SUCCESS;
    }
    if (0 != hwloc_topology_init(&topo)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != inventory->xml) {
        failed =
            hwloc_topology_set_xmlbuffer(topo, inventory->xml, (int) strlen(inventory->xml) + 1);
    } else {
        failed = hwloc_topology_set_synthetic(topo, inventory->synthetic);
    }
    if (0 != failed || 0 != hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return HERD_ERR_BAD_PARAM;
    }
    topology_remember(kind, text, topo);
    *topology = topo;
    return HERD_SUCCESS;
}
