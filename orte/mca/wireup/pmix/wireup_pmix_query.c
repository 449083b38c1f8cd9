/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: PMIx_Query_info from the job's processes. The session daemon gathers its facts
 * (the namespaces it serves, each process's place and program from the job database, its own
 * processes' pids and states, and, for PMIX_QUERY_PROC_TABLE, the other daemons' answers to a
 * PROCS request for theirs) and orte/util/pmix/pmix_query.c turns them into the answers, key by
 * key: a key herd does not answer is PMIX_ERR_NOT_SUPPORTED, a namespace it does not know
 * PMIX_ERR_NOT_FOUND; of several keys, those answered come with PMIX_SUCCESS and the others are
 * left out (pmix_query.h says why). */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "orte/mca/wireup/pmix/wireup_pmix.h"
#include "orte/util/pmix/pmix_query.h"

/* A PROCS request answers within this (the other daemon only reads its records). */
#define QUERY_TIMEOUT_MS 5000
/* The spawn attributes a session daemon honours (PMIX_QUERY_SPAWN_SUPPORT). */
#define SPAWN_ATTRIBUTES PMIX_WDIR

/* ------------------------------------------------------------------------------------------ */
/* what herd's PMIx server offers (PMIX_HOST_FUNCTIONS, PMIX_QUERY_ATTRIBUTE_SUPPORT) */

static const orte_pmix_query_attr_t lookup_attrs[] = {
    {"PMIX_WAIT", PMIX_WAIT, PMIX_INT,
     "wait until that many of the names (0: all) are published, at most PMIX_TIMEOUT seconds "
     "(else wireup_base_get_timeout)"},
    {"PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT, "seconds to wait with PMIX_WAIT"},
};
static const orte_pmix_query_attr_t get_attrs[] = {
    {"PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT,
     "seconds to wait for another node's process to commit its data"},
};
static const orte_pmix_query_attr_t log_attrs[] = {
    {"PMIX_LOG_STDERR", PMIX_LOG_STDERR, PMIX_STRING,
     "into the process's stderr, as its own output reaches herdrun"},
    {"PMIX_LOG_STDOUT", PMIX_LOG_STDOUT, PMIX_STRING,
     "into the process's stdout, as its own output reaches herdrun"},
    {"PMIX_LOG_SYSLOG", PMIX_LOG_SYSLOG, PMIX_STRING, "to the node's syslog"},
    {"PMIX_LOG_LOCAL_SYSLOG", PMIX_LOG_LOCAL_SYSLOG, PMIX_STRING, "to the node's syslog"},
    {"PMIX_LOG_GLOBAL_SYSLOG", PMIX_LOG_GLOBAL_SYSLOG, PMIX_STRING, "to the node's syslog"},
    {"PMIX_LOG_SYSLOG_PRI", PMIX_LOG_SYSLOG_PRI, PMIX_INT, "syslog priority (default LOG_ERR)"},
    {"PMIX_LOG_ONCE", PMIX_LOG_ONCE, PMIX_BOOL, "only the first channel that takes it"},
};
static const orte_pmix_query_attr_t jctrl_attrs[] = {
    {"PMIX_JOB_CTRL_KILL", PMIX_JOB_CTRL_KILL, PMIX_BOOL, "SIGKILL the targets"},
    {"PMIX_JOB_CTRL_TERMINATE", PMIX_JOB_CTRL_TERMINATE, PMIX_BOOL,
     "SIGTERM the targets, SIGKILL after the job's kill grace"},
    {"PMIX_JOB_CTRL_SIGNAL", PMIX_JOB_CTRL_SIGNAL, PMIX_INT, "send the targets this signal"},
    {"PMIX_JOB_CTRL_PAUSE", PMIX_JOB_CTRL_PAUSE, PMIX_BOOL, "SIGSTOP the targets"},
    {"PMIX_JOB_CTRL_RESUME", PMIX_JOB_CTRL_RESUME, PMIX_BOOL, "SIGCONT the targets"},
    {"PMIX_JOB_CTRL_PREEMPTIBLE", PMIX_JOB_CTRL_PREEMPTIBLE, PMIX_BOOL,
     "noted: herd never preempts a job"},
};
static const orte_pmix_query_attr_t query_attrs[] = {
    {"PMIX_QUERY_NAMESPACES", PMIX_QUERY_NAMESPACES, PMIX_STRING, "the job's namespaces"},
    {"PMIX_QUERY_JOB_STATUS", PMIX_QUERY_JOB_STATUS, PMIX_STATUS,
     "PMIX_SUCCESS while the job runs, PMIX_ERR_JOB_ABORTED once it is being aborted"},
    {"PMIX_QUERY_PROC_TABLE", PMIX_QUERY_PROC_TABLE, PMIX_DATA_ARRAY,
     "every process of a namespace, on every node"},
    {"PMIX_QUERY_LOCAL_PROC_TABLE", PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_DATA_ARRAY,
     "the processes of a namespace on this node"},
    {"PMIX_QUERY_NUM_PSETS", PMIX_QUERY_NUM_PSETS, PMIX_SIZE, "0: herd defines no process set"},
    {"PMIX_QUERY_PSET_NAMES", PMIX_QUERY_PSET_NAMES, PMIX_STRING, "none"},
    {"PMIX_QUERY_SPAWN_SUPPORT", PMIX_QUERY_SPAWN_SUPPORT, PMIX_STRING,
     "the spawn attributes herd honours"},
    {"PMIX_QUERY_ATTRIBUTE_SUPPORT", PMIX_QUERY_ATTRIBUTE_SUPPORT, PMIX_DATA_ARRAY,
     "these attributes"},
};
static const orte_pmix_query_attr_t spawn_attrs[] = {
    {"PMIX_WDIR", PMIX_WDIR, PMIX_STRING, "the new processes' working directory"},
};
#define ATTRS(a) a, sizeof(a) / sizeof(a[0])
static const orte_pmix_query_function_t functions[] = {
    {"PMIx_Get", "direct_modex", ATTRS(get_attrs)},
    {"PMIx_Lookup", "lookup", ATTRS(lookup_attrs)},
    {"PMIx_Log", "log", ATTRS(log_attrs)},
    {"PMIx_Job_control", "job_control", ATTRS(jctrl_attrs)},
    {"PMIx_Query_info", "query", ATTRS(query_attrs)},
    {"PMIx_Spawn", "spawn", ATTRS(spawn_attrs)},
};

pmix_status_t wireup_pmix_register_attributes(void)
{
    return orte_pmix_query_register(functions, sizeof(functions) / sizeof(functions[0]));
}

/* ------------------------------------------------------------------------------------------ */
/* what this daemon knows of its own processes, and what it tells another that asks */

pmix_proc_state_t wireup_pmix_local_state(const wireup_pmix_local_t *local)
{
    if (local->exited) {
        if (local->called_abort) {
            return PMIX_PROC_STATE_CALLED_ABORT;
        }
        if (local->killed) {
            return PMIX_PROC_STATE_KILLED_BY_CMD;
        }
        if (local->signo > 0) {
            return PMIX_PROC_STATE_ABORTED_BY_SIG;
        }
        if (local->connected && !local->finalized) {
            return PMIX_PROC_STATE_TERM_WO_SYNC;
        }
        return 0 == local->exit_code ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_NON_ZERO;
    }
    if (local->pid <= 0) {
        return PMIX_PROC_STATE_PREPPED;
    }
    return local->connected ? PMIX_PROC_STATE_CONNECTED : PMIX_PROC_STATE_RUNNING;
}

/* {u32 n, n x (u32 rank, i32 pid, i32 exit code, u8 state)}: this daemon's processes of nspace. */
void wireup_pmix_procs_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                               int timeout_ms, orte_wireup_ticket_t *ticket)
{
    wireup_pmix_state_t *st = ctx;
    wireup_pmix_ns_t *pns = (nspace < st->num_nss) ? st->nss[nspace] : NULL;
    if (NULL == pns) {
        orte_wireup_dmodex_reply(ticket, HERD_ERR_NOT_FOUND, NULL, 0,
                                 "the PMIx server here does not know that namespace");
        return;
    }
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc = opal_buffer_pack_uint32(&b, pns->num_local);
    for (uint32_t l = 0; HERD_SUCCESS == rc && l < pns->num_local; ++l) {
        const wireup_pmix_local_t *p = &pns->locals[l];
        if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, p->rank)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_int32(&b, (int32_t) p->pid)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_int32(&b, p->exit_code))) {
            break;
        }
        rc = opal_buffer_pack_uint8(&b, wireup_pmix_local_state(p));
    }
    orte_wireup_dmodex_reply(ticket, rc, HERD_SUCCESS == rc ? b.base : NULL,
                             HERD_SUCCESS == rc ? b.used : 0, NULL);
    opal_buffer_destruct(&b);
}

/* ------------------------------------------------------------------------------------------ */
/* gathering the facts */

/* The facts of one query call: every namespace served here, with the process tables asked. */
typedef struct gathered {
    wireup_pmix_call_t *call;
    orte_pmix_query_nspace_t *nspaces;
    orte_pmix_query_proc_t **tables; /* by entry of nspaces: owned (NULL: not asked) */
    wireup_pmix_ns_t **pnss;         /* by entry of nspaces */
    size_t num;
} gathered_t;

static void gathered_free(gathered_t *g)
{
    for (size_t i = 0; i < g->num; ++i) {
        free(g->tables[i]);
    }
    free(g->tables);
    free(g->pnss);
    free(g->nspaces);
    free(g);
}

static bool listed(char **names, const char *name)
{
    for (size_t i = 0; NULL != names && NULL != names[i]; ++i) {
        if (0 == strncmp(names[i], name, PMIX_MAX_NSLEN)) {
            return true;
        }
    }
    return false;
}

/* The process table of pns: every process (all) or this node's, from the job database, with
 * what this daemon knows of its own. */
static int fill_table(gathered_t *g, size_t i, bool all)
{
    wireup_pmix_ns_t *pns = g->pnss[i];
    const orte_wireup_nspace_t *ns = pns->ns;
    uint32_t n = all ? ns->num_procs : pns->num_local;
    orte_pmix_query_proc_t *t = calloc(n > 0 ? n : 1, sizeof(*t));
    if (NULL == t) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t rank = all ? k : pns->locals[k].rank;
        opal_jobdb_proc_view_t view;
        t[k].rank = rank;
        t[k].state = PMIX_PROC_STATE_UNDEF;
        if (HERD_SUCCESS == opal_jobdb_get_proc(ns->db, rank, &view) && view.node < ns->num_nodes) {
            t[k].hostname = ns->node_names[view.node];
            t[k].executable = (NULL != ns->app_programs && view.app < ns->num_apps)
                                  ? ns->app_programs[view.app]
                                  : NULL;
        }
        const wireup_pmix_local_t *local = wireup_pmix_find_local(pns, rank);
        if (NULL != local) {
            t[k].pid = local->pid;
            t[k].exit_code = local->exit_code;
            t[k].state = wireup_pmix_local_state(local);
        }
    }
    g->tables[i] = t;
    g->nspaces[i].procs = t;
    g->nspaces[i].num_known = n;
    return HERD_SUCCESS;
}

typedef struct procs_part {
    gathered_t *g;
    size_t index;
} procs_part_t;

static void answer_query(gathered_t *g);

/* Another daemon's answer to a PROCS request: its processes' pids and states. */
static void procs_part_done(int status, const void *value, size_t len, const char *error,
                            void *cbdata)
{
    procs_part_t *part = cbdata;
    gathered_t *g = part->g;
    orte_pmix_query_nspace_t *ns = &g->nspaces[part->index];
    opal_buffer_t b;
    uint32_t n = 0;
    opal_buffer_init(&b);
    if (HERD_SUCCESS == status && HERD_SUCCESS == opal_buffer_load(&b, value, len) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&b, &n) && n <= ns->num_procs) {
        for (uint32_t k = 0; k < n; ++k) {
            uint32_t rank;
            int32_t pid, exit_code;
            uint8_t state;
            if (HERD_SUCCESS != opal_buffer_unpack_uint32(&b, &rank) ||
                HERD_SUCCESS != opal_buffer_unpack_int32(&b, &pid) ||
                HERD_SUCCESS != opal_buffer_unpack_int32(&b, &exit_code) ||
                HERD_SUCCESS != opal_buffer_unpack_uint8(&b, &state) || rank >= ns->num_procs) {
                break; /* the rest stays unknown */
            }
            g->tables[part->index][rank].pid = pid;
            g->tables[part->index][rank].exit_code = exit_code;
            g->tables[part->index][rank].state = state;
        }
    } else if (HERD_SUCCESS != status) {
        opal_output_verbose(5, wireup_pmix_output(), "wireup pmix: a process table of %s: %s",
                            ns->name, NULL != error ? error : opal_strerror(status));
    }
    opal_buffer_destruct(&b);
    free(part);
    if (0 == --g->call->pending) {
        answer_query(g);
    }
}

/* Ask every other daemon hosting processes of entry i for theirs (one request per node, naming
 * its first rank there). */
static void ask_others(gathered_t *g, size_t i)
{
    const orte_wireup_nspace_t *ns = g->pnss[i]->ns;
    bool *seen = calloc(ns->num_nodes > 0 ? ns->num_nodes : 1, sizeof(*seen));
    for (uint32_t r = 0; NULL != seen && r < ns->num_procs; ++r) {
        opal_jobdb_proc_view_t view;
        if (HERD_SUCCESS != opal_jobdb_get_proc(ns->db, r, &view) || view.node >= ns->num_nodes ||
            view.node == ns->my_node || seen[view.node]) {
            continue;
        }
        seen[view.node] = true;
        procs_part_t *part = malloc(sizeof(*part));
        if (NULL == part) {
            break;
        }
        *part = (procs_part_t){.g = g, .index = i};
        g->call->pending++;
        if (HERD_SUCCESS != orte_wireup_dmodex(g->call->st->host->engine, ns->index, r,
                                               ORTE_WIREUP_KIND_PROCS, NULL, QUERY_TIMEOUT_MS,
                                               procs_part_done, part)) {
            g->call->pending--;
            free(part);
        }
    }
    free(seen);
}

/* The answers handed to the library, freed when it is done with them. */
typedef struct results {
    pmix_info_t *info;
    size_t n;
} results_t;

static void release_results(void *cbdata)
{
    results_t *r = cbdata;
    PMIX_INFO_FREE(r->info, r->n);
    free(r);
}

static void answer_query(gathered_t *g)
{
    wireup_pmix_call_t *c = g->call;
    wireup_pmix_state_t *st = c->st;
    orte_pmix_query_facts_t facts = {
        .nspaces = g->nspaces,
        .num_nspaces = g->num,
        .hostname = st->host->node_name,
        .requester_nspace = c->proc.nspace,
        .spawn_attributes = SPAWN_ATTRIBUTES,
        .functions = functions,
        .num_functions = sizeof(functions) / sizeof(functions[0]),
    };
    pmix_info_t *results = NULL;
    size_t n = 0;
    pmix_status_t prc = orte_pmix_query_answer(c->queries, c->nqueries, &facts, &results, &n);
    results_t *held = (n > 0) ? malloc(sizeof(*held)) : NULL;
    if (n > 0 && NULL == held) {
        PMIX_INFO_FREE(results, n);
        results = NULL;
        prc = PMIX_ERR_NOMEM;
        n = 0;
    }
    if (NULL != held) {
        *held = (results_t){.info = results, .n = n};
    }
    c->info_cb(prc, results, n, c->cbdata, NULL != held ? release_results : NULL, held);
    gathered_free(g);
    wireup_pmix_call_free(c);
}

static void run_query(wireup_pmix_call_t *c)
{
    wireup_pmix_state_t *st = c->st;
    char **global = NULL, **local = NULL;
    /* OpenPMIx 4.2 names itself, not the asking process, as the requester: a query naming no
     * namespace is about the job (its first namespace) */
    if (NULL == wireup_pmix_find_ns(st, c->proc.nspace)) {
        for (uint32_t k = 0; k < st->num_nss; ++k) {
            if (NULL != st->nss[k]) {
                PMIX_LOAD_PROCID(&c->proc, st->nss[k]->name, PMIX_RANK_WILDCARD);
                break;
            }
        }
    }
    gathered_t *g = calloc(1, sizeof(*g));
    pmix_status_t prc = (NULL == g) ? PMIX_ERR_NOMEM
                                    : orte_pmix_query_tables(c->queries, c->nqueries,
                                                             c->proc.nspace, &global, &local);
    if (PMIX_SUCCESS == prc) {
        g->call = c;
        g->nspaces = calloc(st->num_nss > 0 ? st->num_nss : 1, sizeof(*g->nspaces));
        g->tables = calloc(st->num_nss > 0 ? st->num_nss : 1, sizeof(*g->tables));
        g->pnss = calloc(st->num_nss > 0 ? st->num_nss : 1, sizeof(*g->pnss));
        prc = (NULL == g->nspaces || NULL == g->tables || NULL == g->pnss) ? PMIX_ERR_NOMEM : prc;
    }
    bool aborting = NULL != st->host->aborting && st->host->aborting(st->host->ctx);
    c->pending = 1; /* held until every request went out */
    for (uint32_t k = 0; PMIX_SUCCESS == prc && k < st->num_nss; ++k) {
        wireup_pmix_ns_t *pns = st->nss[k];
        if (NULL == pns) {
            continue;
        }
        size_t i = g->num++;
        g->pnss[i] = pns;
        g->nspaces[i] = (orte_pmix_query_nspace_t){
            .name = pns->name,
            .status = aborting ? PMIX_ERR_JOB_ABORTED : PMIX_SUCCESS,
            .num_procs = pns->ns->num_procs,
        };
        bool all = listed(global, pns->name);
        if ((all || listed(local, pns->name)) && HERD_SUCCESS != fill_table(g, i, all)) {
            prc = PMIX_ERR_NOMEM;
        } else if (all) {
            ask_others(g, i);
        }
    }
    orte_pmix_query_free_names(global);
    orte_pmix_query_free_names(local);
    if (PMIX_SUCCESS != prc) {
        c->info_cb(prc, NULL, 0, c->cbdata, NULL, NULL);
        if (NULL != g) {
            gathered_free(g);
        }
        wireup_pmix_call_free(c);
        return;
    }
    if (0 == --c->pending) {
        answer_query(g);
    }
}

static void refuse_query(wireup_pmix_call_t *c, pmix_status_t status)
{
    c->info_cb(status, NULL, 0, c->cbdata, NULL, NULL);
}

pmix_status_t wireup_pmix_up_query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (NULL == queries || 0 == nqueries) {
        return PMIX_ERR_BAD_PARAM;
    }
    wireup_pmix_call_t *c = wireup_pmix_call_new(proct, run_query, refuse_query);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->info_cb = cbfunc;
    c->cbdata = cbdata;
    PMIX_QUERY_CREATE(c->queries, nqueries);
    if (NULL == c->queries) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_NOMEM;
    }
    c->nqueries = nqueries;
    for (size_t q = 0; q < nqueries; ++q) {
        c->queries[q].keys = pmix_argv_copy(queries[q].keys);
        if ((NULL != queries[q].keys && NULL == c->queries[q].keys) ||
            !wireup_pmix_copy_info(queries[q].qualifiers, queries[q].nqual,
                                   &c->queries[q].qualifiers)) {
            wireup_pmix_call_free(c);
            return PMIX_ERR_NOMEM;
        }
        c->queries[q].nqual = NULL != c->queries[q].qualifiers ? queries[q].nqual : 0;
    }
    return wireup_pmix_call_queue(c);
}
