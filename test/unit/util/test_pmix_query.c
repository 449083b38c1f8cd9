/* SPDX-License-Identifier: BSD-3-Clause */
/* The answers to PMIx queries from herd's facts (orte/util/pmix/pmix_query.c): each key's value
 * and type, the status of a query whose keys herd does not answer or whose namespace it does
 * not know, process tables sorted and filtered by host, attributes by function, and the tables a
 * query needs gathered first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pmix.h>

#include "orte/util/pmix/pmix_query.h"

/* Two namespaces; the job's processes out of order, on two hosts. */
static const orte_pmix_query_proc_t job_procs[] = {
    {.rank = 2, .hostname = "n1", .executable = "./app", .pid = 102, .state = 6},
    {.rank = 0, .hostname = "n0", .executable = "./app", .pid = 100, .state = 6},
    {.rank = 1,
     .hostname = "n1",
     .executable = "./app",
     .pid = 101,
     .exit_code = 3,
     .state = PMIX_PROC_STATE_TERM_NON_ZERO},
};
static const orte_pmix_query_nspace_t nspaces[] = {
    {.name = "herd.a.1",
     .status = PMIX_SUCCESS,
     .num_procs = 3,
     .procs = job_procs,
     .num_known = 3},
    {.name = "herd.a.1.1", .status = PMIX_ERR_JOB_ABORTED, .num_procs = 2},
};
static const orte_pmix_query_attr_t log_attrs[] = {
    {"PMIX_LOG_STDERR", PMIX_LOG_STDERR, PMIX_STRING, "to stderr"},
};
static const orte_pmix_query_attr_t lookup_attrs[] = {
    {"PMIX_WAIT", PMIX_WAIT, PMIX_INT, "wait"},
    {"PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT, "at most"},
};
static const orte_pmix_query_function_t functions[] = {
    {"PMIx_Log", "log", log_attrs, 1},
    {"PMIx_Lookup", "lookup", lookup_attrs, 2},
};
static const orte_pmix_query_facts_t facts = {
    .nspaces = nspaces,
    .num_nspaces = 2,
    .hostname = "n1",
    .requester_nspace = "herd.a.1",
    .spawn_attributes = PMIX_WDIR,
    .functions = functions,
    .num_functions = 2,
};

/* One query of key (and key2), with a qualifier qkey=qvalue when qkey is not NULL. */
static pmix_status_t ask(const char *key, const char *key2, const char *qkey, const char *qvalue,
                         pmix_info_t **out, size_t *n)
{
    pmix_query_t q;
    pmix_status_t rc;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, key);
    if (NULL != key2) {
        PMIX_ARGV_APPEND(rc, q.keys, key2);
    }
    if (NULL != qkey) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], qkey, qvalue, PMIX_STRING);
    }
    rc = orte_pmix_query_answer(&q, 1, &facts, out, n);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

static void test_plain_keys(void **state)
{
    pmix_info_t *r;
    size_t n;
    (void) state;
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_NAMESPACES, NULL, NULL, NULL, &r, &n));
    assert_int_equal(1, n);
    assert_true(PMIX_CHECK_KEY(&r[0], PMIX_QUERY_NAMESPACES));
    assert_string_equal("herd.a.1,herd.a.1.1", r[0].value.data.string);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_SUCCESS,
                     ask(PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL, NULL, &r, &n));
    assert_int_equal(2, n);
    assert_int_equal(PMIX_SIZE, r[0].value.type);
    assert_int_equal(0, r[0].value.data.size);
    assert_string_equal("", r[1].value.data.string);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_SPAWN_SUPPORT, NULL, NULL, NULL, &r, &n));
    assert_string_equal(PMIX_WDIR, r[0].value.data.string);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_HOST_FUNCTIONS, NULL, NULL, NULL, &r, &n));
    assert_string_equal("PMIx_Log,PMIx_Lookup", r[0].value.data.string);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_SUPPORTED_KEYS, NULL, NULL, NULL, &r, &n));
    assert_non_null(strstr(r[0].value.data.string, PMIX_QUERY_PROC_TABLE));
    PMIX_INFO_FREE(r, n);
}

static void test_job_status(void **state)
{
    pmix_info_t *r;
    size_t n;
    (void) state;
    /* no namespace named: the requester's */
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_JOB_STATUS, NULL, NULL, NULL, &r, &n));
    assert_int_equal(PMIX_STATUS, r[0].value.type);
    assert_int_equal(PMIX_SUCCESS, r[0].value.data.status);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_SUCCESS,
                     ask(PMIX_QUERY_JOB_STATUS, NULL, PMIX_NSPACE, "herd.a.1.1", &r, &n));
    assert_int_equal(PMIX_ERR_JOB_ABORTED, r[0].value.data.status);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_ERR_NOT_FOUND,
                     ask(PMIX_QUERY_JOB_STATUS, NULL, PMIX_NSPACE, "nope", &r, &n));
    assert_null(r);
    assert_int_equal(0, n);
}

static void test_unanswered_keys(void **state)
{
    pmix_info_t *r;
    size_t n;
    (void) state;
    assert_int_equal(PMIX_ERR_NOT_SUPPORTED,
                     ask(PMIX_QUERY_DEBUG_SUPPORT, NULL, NULL, NULL, &r, &n));
    assert_int_equal(PMIX_ERR_NOT_SUPPORTED, ask("no.such.key", NULL, NULL, NULL, &r, &n));
    /* one answered, one not: the answer comes, the other is left out */
    assert_int_equal(PMIX_SUCCESS,
                     ask(PMIX_QUERY_DEBUG_SUPPORT, PMIX_QUERY_NUM_PSETS, NULL, NULL, &r, &n));
    assert_int_equal(1, n);
    assert_true(PMIX_CHECK_KEY(&r[0], PMIX_QUERY_NUM_PSETS));
    PMIX_INFO_FREE(r, n);
    /* not supported and not found together: not found */
    assert_int_equal(PMIX_ERR_NOT_FOUND, ask(PMIX_QUERY_DEBUG_SUPPORT, PMIX_QUERY_PROC_TABLE,
                                             PMIX_NSPACE, "nope", &r, &n));
    assert_true(orte_pmix_query_key_known(PMIX_QUERY_LOCAL_PROC_TABLE));
    assert_false(orte_pmix_query_key_known(PMIX_QUERY_DEBUG_SUPPORT));
}

static void test_proc_tables(void **state)
{
    pmix_info_t *r;
    size_t n;
    (void) state;
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_PROC_TABLE, NULL, NULL, NULL, &r, &n));
    assert_int_equal(PMIX_DATA_ARRAY, r[0].value.type);
    pmix_data_array_t *a = r[0].value.data.darray;
    assert_int_equal(PMIX_PROC_INFO, a->type);
    assert_int_equal(3, a->size);
    pmix_proc_info_t *p = a->array;
    for (uint32_t i = 0; i < 3; ++i) {
        assert_int_equal(i, p[i].proc.rank); /* by rank */
        assert_string_equal("herd.a.1", p[i].proc.nspace);
        assert_int_equal(100 + i, p[i].pid);
    }
    assert_string_equal("n1", p[1].hostname);
    assert_int_equal(3, p[1].exit_code);
    assert_int_equal(PMIX_PROC_STATE_TERM_NON_ZERO, p[1].state);
    PMIX_INFO_FREE(r, n);
    /* this host's (n1) */
    assert_int_equal(PMIX_SUCCESS,
                     ask(PMIX_QUERY_LOCAL_PROC_TABLE, NULL, PMIX_NSPACE, "herd.a.1", &r, &n));
    a = r[0].value.data.darray;
    assert_int_equal(2, a->size);
    p = a->array;
    assert_int_equal(1, p[0].proc.rank);
    assert_int_equal(2, p[1].proc.rank);
    PMIX_INFO_FREE(r, n);
    /* a namespace whose processes the host did not gather: an empty table */
    assert_int_equal(PMIX_SUCCESS,
                     ask(PMIX_QUERY_PROC_TABLE, NULL, PMIX_NSPACE, "herd.a.1.1", &r, &n));
    assert_int_equal(0, r[0].value.data.darray->size);
    PMIX_INFO_FREE(r, n);
}

static void test_attributes(void **state)
{
    pmix_info_t *r;
    size_t n;
    (void) state;
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL, NULL, NULL, &r, &n));
    pmix_data_array_t *a = r[0].value.data.darray;
    assert_int_equal(2, a->size);
    pmix_info_t *fn = a->array;
    assert_true(PMIX_CHECK_KEY(&fn[1], "PMIx_Lookup"));
    pmix_regattr_t *attrs = fn[1].value.data.darray->array;
    assert_int_equal(2, fn[1].value.data.darray->size);
    assert_string_equal("PMIX_WAIT", attrs[0].name);
    assert_string_equal(PMIX_WAIT, attrs[0].string);
    assert_int_equal(PMIX_INT, attrs[0].type);
    assert_string_equal("wait", attrs[0].description[0]);
    PMIX_INFO_FREE(r, n);
    assert_int_equal(PMIX_SUCCESS, ask(PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL, PMIX_HOST_ATTRIBUTES,
                                       "PMIx_Log", &r, &n));
    assert_int_equal(1, r[0].value.data.darray->size);
    PMIX_INFO_FREE(r, n);
    /* the libraries' own attributes are not the host's */
    assert_int_equal(PMIX_ERR_NOT_SUPPORTED, ask(PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL,
                                                 PMIX_CLIENT_ATTRIBUTES, "all", &r, &n));
    assert_int_equal(PMIX_ERR_NOT_FOUND, ask(PMIX_QUERY_ATTRIBUTE_SUPPORT, NULL,
                                             PMIX_HOST_ATTRIBUTES, "PMIx_Spawn", &r, &n));
}

static void test_tables_needed(void **state)
{
    pmix_query_t q[2];
    pmix_status_t rc;
    char **global = NULL, **local = NULL;
    (void) state;
    PMIX_QUERY_CONSTRUCT(&q[0]);
    PMIX_QUERY_CONSTRUCT(&q[1]);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_LOCAL_PROC_TABLE);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[1], 1);
    PMIX_INFO_LOAD(&q[1].qualifiers[0], PMIX_NSPACE, "herd.a.1.1", PMIX_STRING);
    assert_int_equal(PMIX_SUCCESS, orte_pmix_query_tables(q, 2, "herd.a.1", &global, &local));
    assert_string_equal("herd.a.1", global[0]);
    assert_string_equal("herd.a.1.1", global[1]);
    assert_null(global[2]);
    assert_string_equal("herd.a.1", local[0]);
    assert_null(local[1]);
    orte_pmix_query_free_names(global);
    orte_pmix_query_free_names(local);
    PMIX_QUERY_DESTRUCT(&q[0]);
    PMIX_QUERY_DESTRUCT(&q[1]);
    (void) rc; /* what PMIX_ARGV_APPEND says */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_keys),      cmocka_unit_test(test_job_status),
        cmocka_unit_test(test_unanswered_keys), cmocka_unit_test(test_proc_tables),
        cmocka_unit_test(test_attributes),      cmocka_unit_test(test_tables_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
