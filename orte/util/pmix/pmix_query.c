/* SPDX-License-Identifier: BSD-3-Clause */
/* Answers to PMIx queries from herd's facts (pmix_query.h). */
#include "herd_config.h"

#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orte/util/pmix/pmix_query.h"

/* Every key answered here, in the order PMIX_QUERY_SUPPORTED_KEYS lists them. */
static const char *const known_keys[] = {
    PMIX_QUERY_NAMESPACES,       PMIX_QUERY_JOB_STATUS,        PMIX_QUERY_PROC_TABLE,
    PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_NUM_PSETS,         PMIX_QUERY_PSET_NAMES,
    PMIX_QUERY_SPAWN_SUPPORT,    PMIX_QUERY_ATTRIBUTE_SUPPORT, PMIX_HOST_FUNCTIONS,
    PMIX_QUERY_SUPPORTED_KEYS,
};
#define NUM_KNOWN_KEYS (sizeof(known_keys) / sizeof(known_keys[0]))

bool orte_pmix_query_key_known(const char *key)
{
    for (size_t i = 0; NULL != key && i < NUM_KNOWN_KEYS; ++i) {
        if (0 == strcmp(key, known_keys[i])) {
            return true;
        }
    }
    return false;
}

/* The string value of qualifier key in q, or NULL. */
static const char *qualifier(const pmix_query_t *q, const char *key)
{
    for (size_t i = 0; i < q->nqual; ++i) {
        if (PMIX_CHECK_KEY(&q->qualifiers[i], key) && PMIX_STRING == q->qualifiers[i].value.type) {
            return q->qualifiers[i].value.data.string;
        }
    }
    return NULL;
}

/* The namespace a query is about: its PMIX_NSPACE (or PMIX_PROCID's) qualifier, else the
 * requester's. */
static const char *query_nspace(const pmix_query_t *q, const char *requester)
{
    const char *ns = qualifier(q, PMIX_NSPACE);
    for (size_t i = 0; NULL == ns && i < q->nqual; ++i) {
        if (PMIX_CHECK_KEY(&q->qualifiers[i], PMIX_PROCID) &&
            PMIX_PROC == q->qualifiers[i].value.type && NULL != q->qualifiers[i].value.data.proc) {
            ns = q->qualifiers[i].value.data.proc->nspace;
        }
    }
    return NULL != ns ? ns : requester;
}

static pmix_status_t add_name(char ***names, const char *name)
{
    size_t n = 0;
    while (NULL != *names && NULL != (*names)[n]) {
        if (0 == strcmp((*names)[n], name)) {
            return PMIX_SUCCESS;
        }
        n++;
    }
    char **grown = realloc(*names, (n + 2) * sizeof(*grown));
    if (NULL == grown) {
        return PMIX_ERR_NOMEM;
    }
    *names = grown;
    if (NULL == (grown[n] = strdup(name))) {
        return PMIX_ERR_NOMEM;
    }
    grown[n + 1] = NULL;
    return PMIX_SUCCESS;
}

void orte_pmix_query_free_names(char **names)
{
    for (size_t i = 0; NULL != names && NULL != names[i]; ++i) {
        free(names[i]);
    }
    free(names);
}

pmix_status_t orte_pmix_query_tables(const pmix_query_t queries[], size_t nqueries,
                                     const char *requester_nspace, char ***global, char ***local)
{
    *global = NULL;
    *local = NULL;
    pmix_status_t rc = PMIX_SUCCESS;
    for (size_t q = 0; PMIX_SUCCESS == rc && q < nqueries; ++q) {
        const char *ns = query_nspace(&queries[q], requester_nspace);
        for (size_t k = 0; PMIX_SUCCESS == rc && NULL != ns && NULL != queries[q].keys &&
                           NULL != queries[q].keys[k];
             ++k) {
            if (0 == strcmp(queries[q].keys[k], PMIX_QUERY_PROC_TABLE)) {
                rc = add_name(global, ns);
            } else if (0 == strcmp(queries[q].keys[k], PMIX_QUERY_LOCAL_PROC_TABLE)) {
                rc = add_name(local, ns);
            }
        }
    }
    if (PMIX_SUCCESS != rc) {
        orte_pmix_query_free_names(*global);
        orte_pmix_query_free_names(*local);
        *global = *local = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* one key's answer */

static const orte_pmix_query_nspace_t *find_nspace(const orte_pmix_query_facts_t *f,
                                                   const char *name)
{
    for (size_t i = 0; NULL != name && i < f->num_nspaces; ++i) {
        if (0 == strncmp(f->nspaces[i].name, name, PMIX_MAX_NSLEN)) {
            return &f->nspaces[i];
        }
    }
    return NULL;
}

/* A comma-separated list of n strings (got(i) gives the i-th), loaded into info as a string. */
static pmix_status_t load_list(pmix_info_t *info, const char *key, size_t n,
                               const char *(*got)(const void *ctx, size_t i), const void *ctx)
{
    size_t len = 1;
    for (size_t i = 0; i < n; ++i) {
        len += strlen(got(ctx, i)) + 1;
    }
    char *text = calloc(1, len);
    if (NULL == text) {
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) {
            strcat(text, ",");
        }
        strcat(text, got(ctx, i));
    }
    PMIX_INFO_LOAD(info, key, text, PMIX_STRING);
    free(text);
    return PMIX_SUCCESS;
}

static const char *nspace_name(const void *ctx, size_t i)
{
    return ((const orte_pmix_query_facts_t *) ctx)->nspaces[i].name;
}
static const char *pset_name(const void *ctx, size_t i)
{
    return ((const orte_pmix_query_facts_t *) ctx)->psets[i];
}
static const char *function_name(const void *ctx, size_t i)
{
    return ((const orte_pmix_query_facts_t *) ctx)->functions[i].name;
}
static const char *known_key(const void *ctx, size_t i)
{
    return known_keys[i];
}

static int by_rank(const void *a, const void *b)
{
    const orte_pmix_query_proc_t *pa = *(const orte_pmix_query_proc_t *const *) a;
    const orte_pmix_query_proc_t *pb = *(const orte_pmix_query_proc_t *const *) b;
    return pa->rank < pb->rank ? -1 : pa->rank > pb->rank ? 1 : 0;
}

/* The processes of ns (only those on hostname when it is not NULL), by rank, as an array of
 * pmix_proc_info_t in info. */
static pmix_status_t load_proc_table(pmix_info_t *info, const char *key,
                                     const orte_pmix_query_nspace_t *ns, const char *hostname)
{
    const orte_pmix_query_proc_t **sorted =
        malloc((ns->num_known > 0 ? ns->num_known : 1) * sizeof(*sorted));
    if (NULL == sorted) {
        return PMIX_ERR_NOMEM;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < ns->num_known; ++i) {
        const orte_pmix_query_proc_t *p = &ns->procs[i];
        if (NULL == hostname || (NULL != p->hostname && 0 == strcmp(p->hostname, hostname))) {
            sorted[n++] = p;
        }
    }
    qsort(sorted, n, sizeof(*sorted), by_rank);
    pmix_data_array_t *array;
    PMIX_DATA_ARRAY_CREATE(array, n, PMIX_PROC_INFO);
    if (NULL == array) {
        free(sorted);
        return PMIX_ERR_NOMEM;
    }
    pmix_proc_info_t *out = array->array;
    for (size_t i = 0; i < n; ++i) {
        PMIX_LOAD_PROCID(&out[i].proc, ns->name, sorted[i]->rank);
        out[i].hostname = strdup(NULL != sorted[i]->hostname ? sorted[i]->hostname : "");
        out[i].executable_name = strdup(NULL != sorted[i]->executable ? sorted[i]->executable : "");
        out[i].pid = sorted[i]->pid;
        out[i].exit_code = sorted[i]->exit_code;
        out[i].state = sorted[i]->state;
    }
    free(sorted);
    /* the info takes the array over */
    PMIX_LOAD_KEY(info->key, key);
    info->value.type = PMIX_DATA_ARRAY;
    info->value.data.darray = array;
    return PMIX_SUCCESS;
}

/* Whether function is named in list ("all", or comma-separated names). */
static bool function_listed(const char *list, const char *function)
{
    if (NULL == list || 0 == strcmp(list, "all")) {
        return true;
    }
    size_t len = strlen(function);
    for (const char *p = list; NULL != p && '\0' != *p;) {
        const char *comma = strchr(p, ',');
        size_t n = NULL != comma ? (size_t) (comma - p) : strlen(p);
        if (n == len && 0 == strncmp(p, function, len)) {
            return true;
        }
        p = NULL != comma ? comma + 1 : NULL;
    }
    return false;
}

/* PMIX_QUERY_ATTRIBUTE_SUPPORT: for each function the host serves (those the
 * PMIX_HOST_ATTRIBUTES qualifier names, or all), the attributes it honours. Queries only about the
 * PMIx libraries' own attributes (client, server, tool) are not the host's to answer. */
static pmix_status_t load_attributes(pmix_info_t *info, const pmix_query_t *q,
                                     const orte_pmix_query_facts_t *f)
{
    const char *host = qualifier(q, PMIX_HOST_ATTRIBUTES);
    if (NULL == host && (NULL != qualifier(q, PMIX_CLIENT_ATTRIBUTES) ||
                         NULL != qualifier(q, PMIX_SERVER_ATTRIBUTES) ||
                         NULL != qualifier(q, PMIX_TOOL_ATTRIBUTES))) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    size_t n = 0;
    for (size_t i = 0; i < f->num_functions; ++i) {
        n += function_listed(host, f->functions[i].name);
    }
    if (0 == n) {
        return PMIX_ERR_NOT_FOUND;
    }
    pmix_data_array_t *array;
    PMIX_DATA_ARRAY_CREATE(array, n, PMIX_INFO);
    if (NULL == array) {
        return PMIX_ERR_NOMEM;
    }
    pmix_info_t *per_function = array->array;
    size_t k = 0;
    for (size_t i = 0; i < f->num_functions; ++i) {
        const orte_pmix_query_function_t *fn = &f->functions[i];
        if (!function_listed(host, fn->name)) {
            continue;
        }
        pmix_data_array_t *attrs;
        PMIX_DATA_ARRAY_CREATE(attrs, fn->num_attrs, PMIX_REGATTR);
        if (NULL == attrs) {
            PMIX_DATA_ARRAY_FREE(array);
            return PMIX_ERR_NOMEM;
        }
        pmix_regattr_t *ra = attrs->array;
        for (size_t a = 0; a < fn->num_attrs; ++a) {
            /* by hand: OpenPMIx 4.2's PMIX_REGATTR_LOAD does not compile */
            ra[a].name = strdup(fn->attrs[a].name);
            PMIX_LOAD_KEY(ra[a].string, fn->attrs[a].key);
            ra[a].type = fn->attrs[a].type;
            ra[a].description = calloc(2, sizeof(char *));
            if (NULL != ra[a].description) {
                ra[a].description[0] = strdup(fn->attrs[a].description);
            }
        }
        PMIX_LOAD_KEY(per_function[k].key, fn->name);
        per_function[k].value.type = PMIX_DATA_ARRAY;
        per_function[k].value.data.darray = attrs;
        k++;
    }
    PMIX_LOAD_KEY(info->key, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    info->value.type = PMIX_DATA_ARRAY;
    info->value.data.darray = array;
    return PMIX_SUCCESS;
}

/* The answer to one key of query q into info: PMIX_SUCCESS, or why there is none. */
static pmix_status_t answer_key(const char *key, const pmix_query_t *q,
                                const orte_pmix_query_facts_t *f, pmix_info_t *info)
{
    if (0 == strcmp(key, PMIX_QUERY_NAMESPACES)) {
        return load_list(info, key, f->num_nspaces, nspace_name, f);
    }
    if (0 == strcmp(key, PMIX_QUERY_NUM_PSETS)) {
        size_t n = f->num_psets;
        PMIX_INFO_LOAD(info, key, &n, PMIX_SIZE);
        return PMIX_SUCCESS;
    }
    if (0 == strcmp(key, PMIX_QUERY_PSET_NAMES)) {
        return load_list(info, key, f->num_psets, pset_name, f);
    }
    if (0 == strcmp(key, PMIX_QUERY_SPAWN_SUPPORT)) {
        PMIX_INFO_LOAD(info, key, NULL != f->spawn_attributes ? f->spawn_attributes : "",
                       PMIX_STRING);
        return PMIX_SUCCESS;
    }
    if (0 == strcmp(key, PMIX_HOST_FUNCTIONS)) {
        return load_list(info, key, f->num_functions, function_name, f);
    }
    if (0 == strcmp(key, PMIX_QUERY_SUPPORTED_KEYS)) {
        return load_list(info, key, NUM_KNOWN_KEYS, known_key, NULL);
    }
    if (0 == strcmp(key, PMIX_QUERY_ATTRIBUTE_SUPPORT)) {
        return load_attributes(info, q, f);
    }
    const orte_pmix_query_nspace_t *ns = find_nspace(f, query_nspace(q, f->requester_nspace));
    bool global = 0 == strcmp(key, PMIX_QUERY_PROC_TABLE);
    if (0 == strcmp(key, PMIX_QUERY_JOB_STATUS)) {
        if (NULL == ns) {
            return PMIX_ERR_NOT_FOUND;
        }
        PMIX_INFO_LOAD(info, key, &ns->status, PMIX_STATUS);
        return PMIX_SUCCESS;
    }
    if (global || 0 == strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE)) {
        if (NULL == ns || (!global && NULL == f->hostname)) {
            return PMIX_ERR_NOT_FOUND;
        }
        return load_proc_table(info, key, ns, global ? NULL : f->hostname);
    }
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t orte_pmix_query_answer(const pmix_query_t queries[], size_t nqueries,
                                     const orte_pmix_query_facts_t *facts, pmix_info_t **results,
                                     size_t *nresults)
{
    size_t total = 0;
    for (size_t q = 0; q < nqueries; ++q) {
        for (size_t k = 0; NULL != queries[q].keys && NULL != queries[q].keys[k]; ++k) {
            total++;
        }
    }
    *results = NULL;
    *nresults = 0;
    if (0 == total) {
        return PMIX_ERR_BAD_PARAM;
    }
    pmix_info_t *out;
    PMIX_INFO_CREATE(out, total);
    if (NULL == out) {
        return PMIX_ERR_NOMEM;
    }
    size_t answered = 0;
    bool some_not_found = false;
    pmix_status_t rc = PMIX_SUCCESS;
    for (size_t q = 0; q < nqueries; ++q) {
        for (size_t k = 0; NULL != queries[q].keys && NULL != queries[q].keys[k]; ++k) {
            rc = answer_key(queries[q].keys[k], &queries[q], facts, &out[answered]);
            if (PMIX_SUCCESS == rc) {
                answered++;
            } else if (PMIX_ERR_NOMEM == rc) {
                PMIX_INFO_FREE(out, total);
                return rc;
            } else {
                some_not_found = some_not_found || PMIX_ERR_NOT_FOUND == rc;
            }
        }
    }
    if (0 == answered) {
        PMIX_INFO_FREE(out, total);
        return some_not_found ? PMIX_ERR_NOT_FOUND : PMIX_ERR_NOT_SUPPORTED;
    }
    *results = out;
    *nresults = answered;
    /* some of them: PMIX_SUCCESS (see pmix_query.h) */
    return PMIX_SUCCESS;
}

pmix_status_t orte_pmix_query_register(const orte_pmix_query_function_t *functions, size_t n)
{
    pmix_status_t rc = PMIX_SUCCESS;
    for (size_t i = 0; PMIX_SUCCESS == rc && i < n; ++i) {
        char **keys = calloc(functions[i].num_attrs + 1, sizeof(*keys));
        if (NULL == keys) {
            return PMIX_ERR_NOMEM;
        }
        for (size_t a = 0; a < functions[i].num_attrs; ++a) {
            keys[a] = (char *) functions[i].attrs[a].key;
        }
        rc = PMIx_Register_attributes((char *) functions[i].host_function, keys);
        free(keys);
    }
    return rc;
}
