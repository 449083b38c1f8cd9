/* SPDX-License-Identifier: BSD-3-Clause */
/* Answers to PMIx queries (PMIx_Query_info) built from herd's facts about its jobs, whoever
 * asks and whoever answers: a session daemon for its job's processes, or (later) herdrun and the
 * DVM root for tools (pps, pattrs, pquery). The host gathers the facts it has; this module only
 * turns them into the pmix_info_t answers, key by key, and says which keys it cannot answer.
 *
 * Use: orte_pmix_query_tables() says which namespaces' process tables the queries need (a host
 * may have to ask other daemons for them); the host fills an orte_pmix_query_facts_t;
 * orte_pmix_query_answer() builds the results. Nothing here keeps state or blocks. */
#ifndef ORTE_UTIL_PMIX_QUERY_H
#define ORTE_UTIL_PMIX_QUERY_H

#include <pmix_common.h>
#include <pmix_server.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One process, as the host knows it. */
typedef struct orte_pmix_query_proc {
    pmix_rank_t rank;
    const char *hostname;
    const char *executable; /* the program as the job gave it (argv[0]) */
    pid_t pid;              /* 0: not started (or not known) */
    int exit_code;          /* once ended */
    pmix_proc_state_t state;
} orte_pmix_query_proc_t;

/* One namespace the host serves (a job, or processes it spawned). */
typedef struct orte_pmix_query_nspace {
    const char *name;
    pmix_status_t status;                /* PMIX_QUERY_JOB_STATUS */
    uint32_t num_procs;                  /* its size */
    const orte_pmix_query_proc_t *procs; /* what the host gathered (any order); may be NULL */
    uint32_t num_known;                  /* entries of procs */
} orte_pmix_query_nspace_t;

/* One attribute a function honours, as PMIX_QUERY_ATTRIBUTE_SUPPORT describes it. */
typedef struct orte_pmix_query_attr {
    const char *name;        /* "PMIX_TIMEOUT" */
    const char *key;         /* "pmix.timeout" */
    pmix_data_type_t type;   /* PMIX_INT */
    const char *description; /* a sentence */
} orte_pmix_query_attr_t;

/* A PMIx function the host serves and the attributes it honours there. */
typedef struct orte_pmix_query_function {
    const char *name;          /* "PMIx_Lookup" */
    const char *host_function; /* the pmix_server_module_t upcall serving it: "lookup" */
    const orte_pmix_query_attr_t *attrs;
    size_t num_attrs;
} orte_pmix_query_function_t;

typedef struct orte_pmix_query_facts {
    const orte_pmix_query_nspace_t *nspaces;
    size_t num_nspaces;
    const char *hostname;         /* PMIX_QUERY_LOCAL_PROC_TABLE: processes on this host */
    const char *requester_nspace; /* when a query names no namespace (may be NULL) */
    const char *const *psets;     /* process sets' names */
    size_t num_psets;
    const char *spawn_attributes; /* PMIX_QUERY_SPAWN_SUPPORT: comma-separated keys */
    const orte_pmix_query_function_t *functions; /* PMIX_HOST_FUNCTIONS, ATTRIBUTE_SUPPORT */
    size_t num_functions;
} orte_pmix_query_facts_t;

/* The namespaces whose process tables the queries ask for: every process's (PROC_TABLE) into
 * *global, this host's (LOCAL_PROC_TABLE) into *local; each a NULL-terminated array of names
 * (free with orte_pmix_query_free_names; NULL when none). requester_nspace stands for a query
 * that names no namespace. PMIX_SUCCESS, or PMIX_ERR_NOMEM. */
pmix_status_t orte_pmix_query_tables(const pmix_query_t queries[], size_t nqueries,
                                     const char *requester_nspace, char ***global, char ***local);
void orte_pmix_query_free_names(char **names);

/* The answers to every key of every query, in order: *results (free with PMIX_INFO_FREE) holds
 * one pmix_info_t per key answered, named after that key. Returns PMIX_SUCCESS when some key
 * was answered (those not answered are left out: OpenPMIx 4.2's clients drop every result that
 * comes with PMIX_ERR_PARTIAL_SUCCESS or PMIX_QUERY_PARTIAL_SUCCESS), else PMIX_ERR_NOT_FOUND
 * (some key is one herd answers, but not for what the query named: an unknown namespace) or
 * PMIX_ERR_NOT_SUPPORTED (no key is one herd answers); PMIX_ERR_NOMEM. */
pmix_status_t orte_pmix_query_answer(const pmix_query_t queries[], size_t nqueries,
                                     const orte_pmix_query_facts_t *facts, pmix_info_t **results,
                                     size_t *nresults);

/* Tell the PMIx server library which attributes the host honours for each of its upcalls
 * (PMIx_Register_attributes): OpenPMIx answers PMIX_QUERY_ATTRIBUTE_SUPPORT itself, and crashes
 * on one for host attributes when none were registered. Call once after PMIx_server_init. */
pmix_status_t orte_pmix_query_register(const orte_pmix_query_function_t *functions, size_t n);

/* Whether key is one orte_pmix_query_answer() answers. */
bool orte_pmix_query_key_known(const char *key);

#endif /* ORTE_UTIL_PMIX_QUERY_H */
