/* SPDX-License-Identifier: BSD-3-Clause */
/* A PMIx client for the tests of what herd's PMIx server answers (test_pmix_server.sh), one call
 * per mode (argv[1]); each rank prints what it saw, "pmix_calls rank R ...", and exits 0 unless
 * something was not as it should be (then it says what and exits 1).
 *   lookup-wait         rank 0 publishes "herd.key" after a second; the others look it up with
 *                       PMIX_WAIT (0: every key) and no timeout, before it is there
 *   lookup-timeout S    nobody publishes; the others look up with PMIX_WAIT and PMIX_TIMEOUT S
 *   lookup-nowait       nobody publishes; the others look up without PMIX_WAIT
 *   log [syslog TEXT]   each rank logs a line to its stdout and one to its stderr through
 *                       PMIx_Log; with syslog, rank 0 logs TEXT to syslog too
 *   kill-job | terminate-job  rank 0 asks (PMIx_Job_control, no target) to kill / terminate its
 *                       whole job; every rank then waits to be ended
 *   kill-rank R         rank 0 kills rank R (named); R waits to be killed, the others finish
 *   signal-rank R       rank 0 sends SIGUSR1 to rank R, which says it got it and finishes
 *   checkpoint          rank 0 asks for a checkpoint (not offered: refused)
 *   query               rank 0 asks every query key herd answers, and some it does not */
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static uint32_t job_size;

static void die(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "pmix_calls rank %u: %s: %s\n", me.rank, what, PMIx_Error_string(rc));
    exit(1);
}

static void check(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        die(what, rc);
    }
}

static void fence(void)
{
    check(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------------------------------ */
/* publish and lookup */

static int lookup(const char *mode, int timeout_s)
{
    bool wait = 0 != strcmp(mode, "lookup-nowait");
    if (0 == me.rank && 0 == strcmp(mode, "lookup-wait")) {
        /* after the others have asked */
        sleep(1);
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, "herd.key", "published by rank 0", PMIX_STRING);
        check(PMIx_Publish(&info, 1), "PMIx_Publish");
        PMIX_INFO_DESTRUCT(&info);
        printf("pmix_calls rank 0 published herd.key\n");
    } else if (0 != me.rank) {
        pmix_pdata_t pdata;
        pmix_info_t dirs[2];
        size_t ndirs = 0;
        int zero = 0;
        PMIX_PDATA_CONSTRUCT(&pdata);
        PMIX_LOAD_KEY(pdata.key, "herd.key");
        if (wait) {
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_WAIT, &zero, PMIX_INT);
        }
        if (timeout_s > 0) {
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
        }
        double start = now();
        pmix_status_t rc = PMIx_Lookup(&pdata, 1, dirs, ndirs);
        double waited = now() - start;
        if (PMIX_SUCCESS == rc) {
            if (PMIX_STRING != pdata.value.type || 0 != pdata.proc.rank ||
                0 != strcmp(pdata.proc.nspace, me.nspace)) {
                fprintf(stderr, "pmix_calls rank %u: the lookup's value or publisher is wrong\n",
                        me.rank);
                return 1;
            }
            printf("pmix_calls rank %u looked up '%s' after %s\n", me.rank, pdata.value.data.string,
                   waited >= 0.5 ? "waiting" : "no wait");
        } else {
            printf("pmix_calls rank %u lookup: %s after %s\n", me.rank, PMIx_Error_string(rc),
                   waited >= 0.5 ? "waiting" : "no wait");
        }
        PMIX_PDATA_DESTRUCT(&pdata);
    }
    fence();
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* log */

static int do_log(int argc, char **argv)
{
    char text[256];
    pmix_info_t info;
    snprintf(text, sizeof(text), "log to stdout from rank %u", me.rank);
    PMIX_INFO_LOAD(&info, PMIX_LOG_STDOUT, text, PMIX_STRING);
    check(PMIx_Log(&info, 1, NULL, 0), "PMIx_Log(PMIX_LOG_STDOUT)");
    PMIX_INFO_DESTRUCT(&info);
    snprintf(text, sizeof(text), "log to stderr from rank %u\n", me.rank);
    PMIX_INFO_LOAD(&info, PMIX_LOG_STDERR, text, PMIX_STRING);
    check(PMIx_Log(&info, 1, NULL, 0), "PMIx_Log(PMIX_LOG_STDERR)");
    PMIX_INFO_DESTRUCT(&info);
    if (0 == me.rank && argc > 3 && 0 == strcmp(argv[2], "syslog")) {
        PMIX_INFO_LOAD(&info, PMIX_LOG_SYSLOG, argv[3], PMIX_STRING);
        check(PMIx_Log(&info, 1, NULL, 0), "PMIx_Log(PMIX_LOG_SYSLOG)");
        PMIX_INFO_DESTRUCT(&info);
    }
    /* a channel herd does not offer */
    if (0 == me.rank) {
        bool yes = true;
        PMIX_INFO_LOAD(&info, PMIX_LOG_JOB_RECORD, &yes, PMIX_BOOL);
        printf("pmix_calls rank 0 log to the job record: %s\n",
               PMIx_Error_string(PMIx_Log(&info, 1, NULL, 0)));
        PMIX_INFO_DESTRUCT(&info);
    }
    fence();
    printf("pmix_calls rank %u logged\n", me.rank);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* job control */

static volatile sig_atomic_t got_usr1;

static void on_usr1(int signo)
{
    got_usr1 = signo;
}

/* Wait to be ended by a job control; a rank still here after that long was not. */
static int wait_to_be_ended(void)
{
    for (int i = 0; i < 300; ++i) {
        usleep(100000);
    }
    fprintf(stderr, "pmix_calls rank %u: still running 30 s after the job control\n", me.rank);
    return 1;
}

static pmix_status_t job_control(const pmix_proc_t *targets, size_t ntargets, const char *key,
                                 const void *value, pmix_data_type_t type)
{
    pmix_info_t dir;
    PMIX_INFO_LOAD(&dir, key, value, type);
    pmix_status_t rc = PMIx_Job_control(targets, ntargets, &dir, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&dir);
    return rc;
}

static int jctrl(const char *mode, int argc, char **argv)
{
    bool yes = true;
    uint32_t target = argc > 2 ? (uint32_t) atoi(argv[2]) : 1;
    pmix_proc_t who;
    PMIX_LOAD_PROCID(&who, me.nspace, target);
    signal(SIGUSR1, on_usr1);
    fence(); /* every rank is ready for what comes */
    if (0 == strcmp(mode, "kill-job") || 0 == strcmp(mode, "terminate-job")) {
        if (0 == me.rank) {
            printf("pmix_calls rank 0 asks to %s its job\n", mode);
            fflush(stdout);
            pmix_status_t rc =
                job_control(NULL, 0, 'k' == mode[0] ? PMIX_JOB_CTRL_KILL : PMIX_JOB_CTRL_TERMINATE,
                            &yes, PMIX_BOOL);
            fprintf(stderr, "pmix_calls rank 0: the job control returned %s\n",
                    PMIx_Error_string(rc));
        }
        return wait_to_be_ended();
    }
    if (0 == strcmp(mode, "checkpoint")) {
        if (0 == me.rank) {
            printf("pmix_calls rank 0 checkpoint: %s\n",
                   PMIx_Error_string(
                       job_control(NULL, 0, PMIX_JOB_CTRL_CHECKPOINT, "ckpt-1", PMIX_STRING)));
        }
    } else if (0 == me.rank) {
        int signo = SIGUSR1;
        pmix_status_t rc = ('k' == mode[0])
                               ? job_control(&who, 1, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL)
                               : job_control(&who, 1, PMIX_JOB_CTRL_SIGNAL, &signo, PMIX_INT);
        printf("pmix_calls rank 0 %s rank %u: %s\n", mode, target, PMIx_Error_string(rc));
    } else if (me.rank == target && 'k' == mode[0]) {
        return wait_to_be_ended();
    } else if (me.rank == target) {
        for (int i = 0; i < 300 && !got_usr1; ++i) {
            usleep(100000);
        }
        printf("pmix_calls rank %u %s SIGUSR1\n", me.rank, got_usr1 ? "got" : "never got");
    }
    if ('k' != mode[0]) {
        fence(); /* a killed rank never comes to a fence */
    }
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    printf("pmix_calls rank %u done\n", me.rank);
    exit(0);
}

/* ------------------------------------------------------------------------------------------ */
/* queries */

/* One query of key (qualified by nspace when it is not NULL): its status, and its results. */
static pmix_status_t query(const char *key, const char *nspace, const char *key2,
                           pmix_info_t **results, size_t *n)
{
    pmix_query_t q;
    pmix_status_t rc;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, key);
    if (NULL != key2) {
        PMIX_ARGV_APPEND(rc, q.keys, key2);
    }
    if (NULL != nspace) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    }
    *results = NULL;
    *n = 0;
    rc = PMIx_Query_info(&q, 1, results, n);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

/* The process table in r: every rank once, this rank with our pid, each with its host. */
static int check_table(const pmix_info_t *r, const char *what, uint32_t expect)
{
    if (PMIX_DATA_ARRAY != r->value.type || PMIX_PROC_INFO != r->value.data.darray->type) {
        fprintf(stderr, "pmix_calls: the %s is not an array of pmix_proc_info_t\n", what);
        return 1;
    }
    const pmix_proc_info_t *p = r->value.data.darray->array;
    size_t n = r->value.data.darray->size;
    int bad = n != expect;
    for (size_t i = 0; i < n; ++i) {
        pmix_value_t *host = NULL;
        pmix_status_t rc = PMIx_Get(&p[i].proc, PMIX_HOSTNAME, NULL, 0, &host);
        bad |= p[i].pid <= 0 || PMIX_SUCCESS != rc || 0 != strcmp(host->data.string, p[i].hostname);
        bad |= p[i].proc.rank == me.rank && p[i].pid != getpid();
        if (PMIX_SUCCESS == rc) {
            PMIX_VALUE_RELEASE(host);
        }
        printf("pmix_calls %s: rank %u on %s pid %s state %s exe %s\n", what, p[i].proc.rank,
               p[i].hostname, p[i].pid > 0 ? "known" : "unknown",
               PMIx_Proc_state_string(p[i].state), p[i].executable_name);
    }
    if (bad) {
        fprintf(stderr, "pmix_calls: the %s is wrong (%zu entries, %u expected)\n", what, n,
                expect);
    }
    return bad;
}

static int queries(void)
{
    int bad = 0;
    if (0 == me.rank) {
        static const char *const plain[] = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_NUM_PSETS,
                                            PMIX_QUERY_PSET_NAMES, PMIX_QUERY_SPAWN_SUPPORT,
                                            PMIX_QUERY_JOB_STATUS, PMIX_QUERY_DEBUG_SUPPORT};
        pmix_info_t *r;
        size_t n;
        for (size_t k = 0; k < sizeof(plain) / sizeof(plain[0]); ++k) {
            pmix_status_t rc = query(plain[k], NULL, NULL, &r, &n);
            char *text = (n > 0) ? PMIx_Value_string(&r[0].value) : NULL;
            printf("pmix_calls query %s: %s: %s\n", plain[k], PMIx_Error_string(rc),
                   NULL != text ? text : "(nothing)");
            free(text);
            PMIX_INFO_FREE(r, n);
        }
        pmix_status_t rc = query(PMIX_QUERY_JOB_STATUS, "no-such-namespace", NULL, &r, &n);
        printf("pmix_calls query %s of an unknown namespace: %s\n", PMIX_QUERY_JOB_STATUS,
               PMIx_Error_string(rc));
        rc = query(PMIX_QUERY_NUM_PSETS, NULL, PMIX_QUERY_DEBUG_SUPPORT, &r, &n);
        printf("pmix_calls query %s and %s: %s, %zu answer(s)\n", PMIX_QUERY_NUM_PSETS,
               PMIX_QUERY_DEBUG_SUPPORT, PMIx_Error_string(rc), n);
        PMIX_INFO_FREE(r, n);
        check(query(PMIX_QUERY_PROC_TABLE, me.nspace, NULL, &r, &n), "the process table query");
        bad |= check_table(&r[0], "proc table", job_size);
        PMIX_INFO_FREE(r, n);
        pmix_value_t *local = NULL;
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        check(PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &local), "PMIx_Get(PMIX_LOCAL_SIZE)");
        check(query(PMIX_QUERY_LOCAL_PROC_TABLE, me.nspace, NULL, &r, &n),
              "the local process table query");
        bad |= check_table(&r[0], "local proc table", local->data.uint32);
        PMIX_VALUE_RELEASE(local);
        PMIX_INFO_FREE(r, n);
    }
    fence();
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    check(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(PMIX_JOB_SIZE)");
    job_size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    int rc;
    if (0 == strncmp(mode, "lookup-", 7)) {
        rc = lookup(mode, argc > 2 ? atoi(argv[2]) : 0);
    } else if (0 == strcmp(mode, "log")) {
        rc = do_log(argc, argv);
    } else if (0 == strcmp(mode, "query")) {
        rc = queries();
    } else if (0 == strcmp(mode, "kill-job") || 0 == strcmp(mode, "terminate-job") ||
               0 == strcmp(mode, "kill-rank") || 0 == strcmp(mode, "signal-rank") ||
               0 == strcmp(mode, "checkpoint")) {
        rc = jctrl(mode, argc, argv);
    } else {
        fprintf(stderr, "pmix_calls: unknown mode '%s'\n", mode);
        rc = 2;
    }
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return rc;
}
