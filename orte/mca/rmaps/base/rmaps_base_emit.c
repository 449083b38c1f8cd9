/* SPDX-License-Identifier: BSD-3-Clause */
/* Emitting a planned app in rank order: where inside its node each process goes, its binding
 * and locality, computed per process in O(1) (a few hwloc tree steps) and handed out at once. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "orte/mca/rmaps/base/base.h"

#define CPUSET_TEXT_SIZE   1024
#define LOCALITY_TEXT_SIZE 128
/* Binding texts kept per (topology, objects): a million processes on nodes of a few kinds have
 * a few hundred distinct bindings, and formatting each anew was most of a map's time. */
#define BINDING_CACHE_SIZE 512

/* One cached binding: its key and its cpuset and locality texts. */
typedef struct {
    hwloc_topology_t topo; /* NULL: empty */
    int depth;
    unsigned first;
    unsigned last;
    char *cpuset;
    char *locality;
} binding_text_t;

/* Where one process is bound: the objects first..last (logical indexes) at one depth. */
typedef struct {
    bool bound;
    int depth;
    unsigned first;
    unsigned last;
    hwloc_obj_t place; /* the mapping object it was placed in */
} placement_t;

typedef struct {
    orte_rmaps_ctx_t *ctx;
    const orte_rmaps_plan_t *plan;
    orte_rmaps_emit_fn_t emit;
    void *cbdata;
    uint32_t *next_rank;
    hwloc_bitmap_t scratch;
    char cpuset[CPUSET_TEXT_SIZE];
    char locality[LOCALITY_TEXT_SIZE];
    binding_text_t *cache; /* BINDING_CACHE_SIZE entries, direct-mapped; NULL: none */
    /* explaining: the current block of consecutive ranks on one node */
    uint32_t block_node;
    uint32_t block_first;
    uint32_t block_count;
} emitter_t;

int orte_rmaps_base_prepare_nodes(orte_rmaps_ctx_t *ctx)
{
    static const hwloc_obj_type_t types[ORTE_RMAPS_LEVEL_COUNT] = {
        HWLOC_OBJ_MACHINE, HWLOC_OBJ_PACKAGE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_CORE, HWLOC_OBJ_PU};
    const orte_rmaps_job_t *job = ctx->job;

    ctx->nodes = calloc(job->num_nodes + 1, sizeof(*ctx->nodes));
    if (NULL == ctx->nodes) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t n = 0; n < job->num_nodes; ++n) {
        orte_rmaps_node_state_t *st = &ctx->nodes[n];
        hwloc_topology_t topo = job->nodes[n].topology;
        if (NULL == topo) {
            return orte_rmaps_base_report("no-topology", job->nodes[n].name);
        }
        for (int level = 0; level < ORTE_RMAPS_LEVEL_COUNT; ++level) {
            int depth = hwloc_get_type_depth(topo, types[level]);
            st->depth[level] = depth >= 0 ? depth : -1;
        }
        st->depth[ORTE_RMAPS_LEVEL_MACHINE] = 0;
        /* a node without cores (some VMs) counts hwthreads as cores; without packages, the
         * machine is the one package */
        if (st->depth[ORTE_RMAPS_LEVEL_CORE] < 0) {
            st->depth[ORTE_RMAPS_LEVEL_CORE] = st->depth[ORTE_RMAPS_LEVEL_HWTHREAD];
        }
        if (st->depth[ORTE_RMAPS_LEVEL_PACKAGE] < 0) {
            st->depth[ORTE_RMAPS_LEVEL_PACKAGE] = 0;
        }
        for (int level = 0; level < ORTE_RMAPS_LEVEL_COUNT; ++level) {
            int num = st->depth[level] >= 0
                          ? hwloc_get_nbobjs_by_depth(topo, (unsigned) st->depth[level])
                          : 0;
            st->num[level] = num > 0 ? (uint32_t) num : 0;
        }
        if (hwloc_bitmap_list_asprintf(&st->all_cpus, hwloc_topology_get_topology_cpuset(topo)) <
            0) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    return HERD_SUCCESS;
}

void orte_rmaps_base_release_nodes(orte_rmaps_ctx_t *ctx)
{
    if (NULL != ctx->nodes) {
        for (uint32_t n = 0; n < ctx->job->num_nodes; ++n) {
            free(ctx->nodes[n].all_cpus);
        }
    }
    free(ctx->nodes);
    ctx->nodes = NULL;
    free(ctx->sorted_nodes);
    ctx->sorted_nodes = NULL;
}

/* The first or last object at depth below obj (logical indexes are contiguous inside it). */
static hwloc_obj_t descendant(hwloc_topology_t topo, hwloc_obj_t obj, int depth, bool last)
{
    hwloc_obj_t x = obj;

    while (NULL != x && x->depth < depth) {
        x = last ? x->last_child : x->first_child;
    }
    if (NULL == x || x->depth != depth) {
        /* an unusual tree (memory-side objects between levels): ask hwloc */
        int n = hwloc_get_nbobjs_inside_cpuset_by_depth(topo, obj->cpuset, (unsigned) depth);
        x = hwloc_get_obj_inside_cpuset_by_depth(topo, obj->cpuset, (unsigned) depth,
                                                 last && n > 0 ? (unsigned) n - 1 : 0);
    }
    return x;
}

static hwloc_obj_t at_depth(hwloc_topology_t topo, hwloc_obj_t obj, int depth, bool last)
{
    if (obj->depth == depth) {
        return obj;
    }
    if (obj->depth > depth) {
        return hwloc_get_ancestor_obj_by_depth(topo, (unsigned) depth, obj);
    }
    return descendant(topo, obj, depth, last);
}

static int level_depth(const orte_rmaps_node_state_t *st, orte_rmaps_binding_t binding)
{
    switch (binding) {
    case ORTE_RMAPS_BIND_PACKAGE:
        return st->depth[ORTE_RMAPS_LEVEL_PACKAGE];
    case ORTE_RMAPS_BIND_L3CACHE:
        return st->depth[ORTE_RMAPS_LEVEL_L3CACHE];
    case ORTE_RMAPS_BIND_HWTHREAD:
        return st->depth[ORTE_RMAPS_LEVEL_HWTHREAD];
    case ORTE_RMAPS_BIND_CORE:
        return st->depth[ORTE_RMAPS_LEVEL_CORE];
    default:
        return -1;
    }
}

/* The index-th process placed on node by this job's earlier processes and this app: its
 * mapping object, and where it is bound. */
static void place(const emitter_t *em, uint32_t node, uint32_t index, placement_t *out)
{
    const orte_rmaps_plan_t *plan = em->plan;
    const orte_rmaps_node_state_t *st = &em->ctx->nodes[node];
    hwloc_topology_t topo = em->ctx->job->nodes[node].topology;
    uint32_t num_objects = st->num[plan->map_level];
    uint32_t object;
    uint32_t nth; /* how many processes went to that object before this one */
    int bind_depth = level_depth(st, plan->policy.binding);

    if (plan->block > 0) {
        uint32_t per_round = plan->block * num_objects;
        object = (index % per_round) / plan->block;
        nth = (index / per_round) * plan->block + index % plan->block;
    } else {
        object = index % num_objects;
        nth = index / num_objects;
    }
    out->place = hwloc_get_obj_by_depth(topo, (unsigned) st->depth[plan->map_level], object);
    out->bound = bind_depth >= 0;
    if (plan->policy.pe > 0) {
        /* runs of PE consecutive units inside the object, wrapping when oversubscribed */
        int unit_depth = st->depth[plan->unit_level];
        hwloc_obj_t first = descendant(topo, out->place, unit_depth, false);
        hwloc_obj_t last = descendant(topo, out->place, unit_depth, true);
        uint32_t units = last->logical_index - first->logical_index + 1;
        uint32_t runs = units / plan->policy.pe;
        unsigned start = first->logical_index + (nth % runs) * plan->policy.pe;
        unsigned end = start + plan->policy.pe - 1;
        if (bind_depth >= 0 && bind_depth < unit_depth) {
            out->depth = bind_depth;
            out->first =
                at_depth(topo, hwloc_get_obj_by_depth(topo, unit_depth, start), bind_depth, false)
                    ->logical_index;
            out->last =
                at_depth(topo, hwloc_get_obj_by_depth(topo, unit_depth, end), bind_depth, true)
                    ->logical_index;
        } else {
            out->depth = unit_depth;
            out->first = start;
            out->last = end;
        }
        return;
    }
    if (bind_depth < 0) {
        return;
    }
    out->depth = bind_depth;
    if (bind_depth <= out->place->depth) {
        out->first = at_depth(topo, out->place, bind_depth, false)->logical_index;
    } else {
        /* bound finer than mapped: the processes of an object take its cores (say) in turn */
        hwloc_obj_t first = descendant(topo, out->place, bind_depth, false);
        hwloc_obj_t last = descendant(topo, out->place, bind_depth, true);
        out->first = first->logical_index + nth % (last->logical_index - first->logical_index + 1);
    }
    out->last = out->first;
}

/* "pk0:co2", "pk0-1:co3-4": the range of each level the binding covers, down to its depth. */
static void format_locality(emitter_t *em, uint32_t node, const placement_t *p)
{
    static const char *const prefixes[ORTE_RMAPS_LEVEL_COUNT] = {"", "pk", "l3c", "co", "pu"};
    const orte_rmaps_node_state_t *st = &em->ctx->nodes[node];
    hwloc_topology_t topo = em->ctx->job->nodes[node].topology;
    hwloc_obj_t first = hwloc_get_obj_by_depth(topo, (unsigned) p->depth, p->first);
    hwloc_obj_t last = hwloc_get_obj_by_depth(topo, (unsigned) p->depth, p->last);
    char *text = em->locality;
    size_t len = 0;
    int previous = 0;

    for (int level = ORTE_RMAPS_LEVEL_PACKAGE; level < ORTE_RMAPS_LEVEL_COUNT; ++level) {
        int depth = st->depth[level];
        /* levels a node lacks stand in for others (machine for package, hwthread for core):
         * print each depth once, under its innermost name */
        if (depth <= previous || depth > p->depth ||
            (level + 1 < ORTE_RMAPS_LEVEL_COUNT && st->depth[level + 1] == depth)) {
            continue;
        }
        previous = depth;
        unsigned lo = at_depth(topo, first, depth, false)->logical_index;
        unsigned hi = at_depth(topo, last, depth, true)->logical_index;
        int w = lo == hi ? snprintf(text + len, LOCALITY_TEXT_SIZE - len, "%s%s%u",
                                    0 == len ? "" : ":", prefixes[level], lo)
                         : snprintf(text + len, LOCALITY_TEXT_SIZE - len, "%s%s%u-%u",
                                    0 == len ? "" : ":", prefixes[level], lo, hi);
        if (w < 0 || (size_t) w >= LOCALITY_TEXT_SIZE - len) {
            break;
        }
        len += (size_t) w;
    }
    if (0 == len) {
        snprintf(text, LOCALITY_TEXT_SIZE, "node");
    }
}

static void flush_block(emitter_t *em)
{
    if (0 == em->block_count) {
        return;
    }
    if (1 == em->block_count) {
        orte_rmaps_base_explain(em->ctx, "app %u: rank %u -> node %s", em->plan->app,
                                em->block_first, em->ctx->job->nodes[em->block_node].name);
    } else {
        orte_rmaps_base_explain(em->ctx, "app %u: ranks %u-%u -> node %s", em->plan->app,
                                em->block_first, em->block_first + em->block_count - 1,
                                em->ctx->job->nodes[em->block_node].name);
    }
    em->block_count = 0;
}

/* The binding's texts into em->cpuset and em->locality. */
static void format_binding(emitter_t *em, uint32_t node, const placement_t *p)
{
    hwloc_topology_t topo = em->ctx->job->nodes[node].topology;
    hwloc_const_cpuset_t set = hwloc_get_obj_by_depth(topo, (unsigned) p->depth, p->first)->cpuset;
    if (p->last != p->first) {
        hwloc_bitmap_zero(em->scratch);
        for (unsigned i = p->first; i <= p->last; ++i) {
            hwloc_bitmap_or(em->scratch, em->scratch,
                            hwloc_get_obj_by_depth(topo, (unsigned) p->depth, i)->cpuset);
        }
        set = em->scratch;
    }
    hwloc_bitmap_list_snprintf(em->cpuset, sizeof(em->cpuset), set);
    format_locality(em, node, p);
}

/* The binding's texts, from the cache when this topology had it before (the texts depend only
 * on the topology and the objects: nodes of one kind share their topology). */
static void binding_texts(emitter_t *em, uint32_t node, const placement_t *p, const char **cpuset,
                          const char **locality)
{
    hwloc_topology_t topo = em->ctx->job->nodes[node].topology;
    uint64_t key = ((uint64_t) (uintptr_t) topo >> 4) ^ ((uint64_t) p->depth * 0x9e3779b1u) ^
                   ((uint64_t) p->first * 0x85ebca6bu) ^ ((uint64_t) p->last * 0xc2b2ae35u);
    binding_text_t *t = NULL != em->cache ? &em->cache[key % BINDING_CACHE_SIZE] : NULL;
    if (NULL != t && t->topo == topo && t->depth == p->depth && t->first == p->first &&
        t->last == p->last) {
        *cpuset = t->cpuset;
        *locality = t->locality;
        return;
    }
    format_binding(em, node, p);
    *cpuset = em->cpuset;
    *locality = em->locality;
    if (NULL == t) {
        return;
    }
    free(t->cpuset);
    free(t->locality);
    t->cpuset = strdup(em->cpuset);
    t->locality = strdup(em->locality);
    t->topo = (NULL != t->cpuset && NULL != t->locality) ? topo : NULL;
    t->depth = p->depth;
    t->first = p->first;
    t->last = p->last;
}

static void binding_cache_free(emitter_t *em)
{
    for (size_t i = 0; NULL != em->cache && i < BINDING_CACHE_SIZE; ++i) {
        free(em->cache[i].cpuset);
        free(em->cache[i].locality);
    }
    free(em->cache);
}

static int emit_one(emitter_t *em, uint32_t node, uint32_t index)
{
    orte_rmaps_node_state_t *st = &em->ctx->nodes[node];
    orte_rmaps_proc_t proc;
    placement_t p;

    place(em, node, index, &p);
    proc.rank = (*em->next_rank)++;
    proc.app = em->plan->app;
    proc.node = node;
    proc.local_rank = st->emitted;
    proc.node_rank = st->emitted;
    st->emitted++;
    proc.bound = p.bound;
    if (p.bound) {
        binding_texts(em, node, &p, &proc.cpuset, &proc.locality);
    } else {
        proc.cpuset = st->all_cpus;
        proc.locality = "node";
    }
    if (NULL != em->ctx->explain) {
        if (em->block_count > 0 &&
            (em->block_node != node || em->block_first + em->block_count != proc.rank)) {
            flush_block(em);
        }
        if (0 == em->block_count) {
            em->block_node = node;
            em->block_first = proc.rank;
        }
        em->block_count++;
    }
    return em->emit(&proc, em->cbdata);
}

/* The object of the ranking level a process belongs to (its key for --rank-by OBJ). */
static unsigned rank_key(const emitter_t *em, uint32_t node, uint32_t index, int rank_depth)
{
    hwloc_topology_t topo = em->ctx->job->nodes[node].topology;
    placement_t p;
    hwloc_obj_t obj;

    place(em, node, index, &p);
    obj = p.bound ? hwloc_get_obj_by_depth(topo, (unsigned) p.depth, p.first) : p.place;
    return at_depth(topo, obj, rank_depth, false)->logical_index;
}

/* --rank-by OBJ: inside each node, ranks go round robin over the objects of that level (the
 * first process of each object, then the second, ...); nodes follow each other. */
static int emit_by_object(emitter_t *em, uint32_t node, int rank_depth)
{
    const orte_rmaps_plan_t *plan = em->plan;
    uint32_t count = plan->counts[node];
    hwloc_topology_t topo = em->ctx->job->nodes[node].topology;
    int num = hwloc_get_nbobjs_by_depth(topo, (unsigned) rank_depth);
    uint32_t num_keys = num > 0 ? (uint32_t) num : 1;
    uint32_t *keys = malloc((size_t) count * sizeof(*keys));
    uint32_t *order = malloc((size_t) count * sizeof(*order));
    uint32_t *start = calloc((size_t) num_keys + 1, sizeof(*start));
    uint32_t *taken = calloc((size_t) num_keys, sizeof(*taken));
    uint32_t *active = malloc((size_t) num_keys * sizeof(*active));
    uint32_t num_active = 0;
    int rc = HERD_SUCCESS;

    if (NULL == keys || NULL == order || NULL == start || NULL == taken || NULL == active) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* counting sort by key, keeping placement order inside a key */
    for (uint32_t j = 0; j < count; ++j) {
        keys[j] = rank_key(em, node, plan->first[node] + j, rank_depth);
        keys[j] = keys[j] < num_keys ? keys[j] : num_keys - 1;
        start[keys[j] + 1]++;
    }
    for (uint32_t k = 0; k < num_keys; ++k) {
        start[k + 1] += start[k];
        if (start[k + 1] > start[k]) {
            active[num_active++] = k;
        }
    }
    for (uint32_t j = 0; j < count; ++j) {
        order[start[keys[j]] + taken[keys[j]]++] = j;
    }
    memset(taken, 0, (size_t) num_keys * sizeof(*taken));
    /* rounds over the keys that still have processes: O(count + num_keys) in all */
    while (num_active > 0 && HERD_SUCCESS == rc) {
        uint32_t kept = 0;
        for (uint32_t a = 0; a < num_active && HERD_SUCCESS == rc; ++a) {
            uint32_t k = active[a];
            uint32_t j = order[start[k] + taken[k]++];
            rc = emit_one(em, node, plan->first[node] + j);
            if (start[k] + taken[k] < start[k + 1]) {
                active[kept++] = k;
            }
        }
        num_active = kept;
    }
out:
    free(keys);
    free(order);
    free(start);
    free(taken);
    free(active);
    return rc;
}

/* --rank-by node: one process per node and round, skipping nodes that have all theirs. */
static int emit_by_node(emitter_t *em)
{
    const orte_rmaps_plan_t *plan = em->plan;
    uint32_t num_nodes = em->ctx->job->num_nodes;
    uint32_t *active = malloc((size_t) (num_nodes + 1) * sizeof(*active));
    uint32_t *done = calloc((size_t) num_nodes + 1, sizeof(*done));
    uint32_t num_active = 0;
    int rc = HERD_SUCCESS;

    if (NULL == active || NULL == done) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (uint32_t n = 0; n < num_nodes; ++n) {
        if (plan->counts[n] > 0) {
            active[num_active++] = n;
        }
    }
    while (num_active > 0 && HERD_SUCCESS == rc) {
        uint32_t kept = 0;
        for (uint32_t a = 0; a < num_active && HERD_SUCCESS == rc; ++a) {
            uint32_t n = active[a];
            rc = emit_one(em, n, plan->first[n] + done[n]++);
            if (done[n] < plan->counts[n]) {
                active[kept++] = n;
            }
        }
        num_active = kept;
    }
out:
    free(active);
    free(done);
    return rc;
}

/* seq: the host list's order. */
static int emit_in_list_order(emitter_t *em)
{
    const orte_rmaps_plan_t *plan = em->plan;
    const char *const *hosts = plan->policy.seq_hosts;
    uint32_t *done = calloc((size_t) em->ctx->job->num_nodes + 1, sizeof(*done));
    int rc = HERD_SUCCESS;

    if (NULL == done) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < plan->total && HERD_SUCCESS == rc; ++i) {
        uint32_t n = i;
        if (NULL != hosts) {
            /* the plan found every name already */
            rc = orte_rmaps_base_find_node(em->ctx, hosts[i], &n);
            if (HERD_SUCCESS != rc) {
                break;
            }
        }
        rc = emit_one(em, n, plan->first[n] + done[n]++);
    }
    free(done);
    return rc;
}

static int rank_depth_of(const orte_rmaps_node_state_t *st, orte_rmaps_ranking_t ranking)
{
    switch (ranking) {
    case ORTE_RMAPS_RANK_PACKAGE:
        return st->depth[ORTE_RMAPS_LEVEL_PACKAGE];
    case ORTE_RMAPS_RANK_L3CACHE:
        return st->depth[ORTE_RMAPS_LEVEL_L3CACHE];
    case ORTE_RMAPS_RANK_CORE:
        return st->depth[ORTE_RMAPS_LEVEL_CORE];
    default:
        return st->depth[ORTE_RMAPS_LEVEL_HWTHREAD];
    }
}

int orte_rmaps_base_emit_plan(orte_rmaps_ctx_t *ctx, const orte_rmaps_plan_t *plan,
                              uint32_t *next_rank, orte_rmaps_emit_fn_t emit, void *cbdata)
{
    emitter_t em = {
        .ctx = ctx, .plan = plan, .emit = emit, .cbdata = cbdata, .next_rank = next_rank};
    int rc = HERD_SUCCESS;

    em.scratch = hwloc_bitmap_alloc();
    if (NULL == em.scratch) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    em.cache = calloc(BINDING_CACHE_SIZE, sizeof(*em.cache)); /* none: formatted each time */
    if (ORTE_RMAPS_MAP_SEQ == plan->policy.mapping) {
        rc = emit_in_list_order(&em);
    } else if (ORTE_RMAPS_RANK_NODE == plan->policy.ranking) {
        rc = emit_by_node(&em);
    } else {
        for (uint32_t n = 0; n < ctx->job->num_nodes && HERD_SUCCESS == rc; ++n) {
            if (ORTE_RMAPS_RANK_SLOT == plan->policy.ranking) {
                for (uint32_t j = 0; j < plan->counts[n] && HERD_SUCCESS == rc; ++j) {
                    rc = emit_one(&em, n, plan->first[n] + j);
                }
            } else if (plan->counts[n] > 0) {
                rc = emit_by_object(&em, n, rank_depth_of(&ctx->nodes[n], plan->policy.ranking));
            }
        }
    }
    flush_block(&em);
    binding_cache_free(&em);
    hwloc_bitmap_free(em.scratch);
    return rc;
}
