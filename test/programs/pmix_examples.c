/* SPDX-License-Identifier: BSD-3-Clause */
/* What the example clients shipped with OpenPMIx 4.2 do (examples/hello.c, client.c, dmodex.c,
 * pub.c, pubi.c, log.c, jctrl.c, fault.c, bad_exit.c, dynamic.c, nodeinfo.c), written anew for
 * herd's tests (Debian ships their sources without their helper header, and no binaries): one
 * program, the example named by argv[1]. Each rank says what it saw, one line each, starting
 * "EXAMPLE rank R: "; a call that fails where it should not is said ("... failed: STATUS") and the
 * rank exits 1 after finalizing, as the originals report and go on. test_pmix_server.sh runs them
 * under herdrun and checks they behave as under mpirun. */
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static const char *example = "";
static int failures;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* one write per line: ranks' lines never mix */
    printf("%s rank %u: %s\n", example, me.rank, line);
    fflush(stdout);
}

/* Says a failed call; true when it succeeded. */
static bool ok(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        say("%s failed: %s", what, PMIx_Error_string(rc));
        failures++;
        return false;
    }
    return true;
}

static pmix_proc_t job(void)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    return wild;
}

static uint32_t get_u32(const pmix_proc_t *who, const char *key)
{
    pmix_value_t *v = NULL;
    uint32_t value = 0;
    if (ok(PMIx_Get(who, key, NULL, 0, &v), key)) {
        value = (PMIX_UINT16 == v->type) ? v->data.uint16 : v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    return value;
}

/* ------------------------------------------------------------------------------------------ */
/* waiting for the library's callbacks */

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
    size_t ninfo;
} waiter_t;

#define WAITER_INIT                                                                                \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, PMIX_SUCCESS, 0                \
    }

static void wake(waiter_t *w, pmix_status_t status)
{
    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static pmix_status_t wait_for(waiter_t *w)
{
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return w->status;
}

static void registered(pmix_status_t status, size_t ref, void *cbdata)
{
    wake(cbdata, status);
}

static void info_answered(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                          pmix_release_cbfunc_t release, void *release_data)
{
    waiter_t *w = cbdata;
    w->ninfo = ninfo;
    if (NULL != release) {
        release(release_data);
    }
    wake(w, status);
}

static void any_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void default_handler(void)
{
    waiter_t w = WAITER_INIT;
    PMIx_Register_event_handler(NULL, 0, NULL, 0, any_event, registered, &w);
    ok(wait_for(&w), "PMIx_Register_event_handler");
}

/* NUM_PSETS and PSET_NAMES, as hello and bad_exit ask. */
static void query_psets(void)
{
    pmix_query_t q;
    pmix_status_t rc;
    waiter_t w = WAITER_INIT;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NUM_PSETS);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PSET_NAMES);
    if (ok(PMIx_Query_info_nb(&q, 1, info_answered, &w), "PMIx_Query_info_nb")) {
        rc = wait_for(&w);
        say("query of process sets: %s, %zu values", PMIx_Error_string(rc), w.ninfo);
    }
    PMIX_QUERY_DESTRUCT(&q);
}

/* ------------------------------------------------------------------------------------------ */
/* the examples */

static void hello(void)
{
    char host[256] = "";
    gethostname(host, sizeof(host));
    say("running on %s, local rank %u", host, get_u32(&me, PMIX_LOCAL_RANK));
    query_psets();
}

/* Its keys: internal (never shared), local (for the node's peers), remote (for the others). */
static void put_keys(bool ghex)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t v;
    snprintf(key, sizeof(key), "%s-%u-internal", me.nspace, me.rank);
    v.type = PMIX_UINT32;
    v.data.uint32 = 1234;
    ok(PMIx_Store_internal(&me, key, &v), "PMIx_Store_internal");
    snprintf(key, sizeof(key), "%s-%u-local", me.nspace, me.rank);
    v.type = PMIX_UINT64;
    v.data.uint64 = 1234;
    ok(PMIx_Put(PMIX_LOCAL, key, &v), "PMIx_Put(local)");
    snprintf(key, sizeof(key), "%s-%u-remote", me.nspace, me.rank);
    PMIX_VALUE_LOAD(&v, "1234", PMIX_STRING);
    ok(PMIx_Put(ghex ? PMIX_GLOBAL : PMIX_REMOTE, key, &v), "PMIx_Put(remote)");
    PMIX_VALUE_DESTRUCT(&v);
    if (ghex) {
        char bytes[128];
        for (int i = 0; i < 128; ++i) {
            bytes[i] = (char) i;
        }
        pmix_byte_object_t bo = {.bytes = bytes, .size = sizeof(bytes)};
        PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT);
        ok(PMIx_Put(PMIX_GLOBAL, "ghex", &v), "PMIx_Put(ghex)");
        PMIX_VALUE_DESTRUCT(&v);
    }
    ok(PMIx_Commit(), "PMIx_Commit");
}

/* Whether rank is on this node (PMIX_LOCAL_PEERS). */
static bool is_local(uint32_t rank)
{
    pmix_proc_t wild = job();
    pmix_value_t *v = NULL;
    bool local = rank == me.rank;
    if (ok(PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v), "PMIx_Get(PMIX_LOCAL_PEERS)")) {
        char *copy = strdup(v->data.string), *save = NULL;
        for (char *p = strtok_r(copy, ",", &save); NULL != p; p = strtok_r(NULL, ",", &save)) {
            local = local || (uint32_t) atoi(p) == rank;
        }
        free(copy);
        PMIX_VALUE_RELEASE(v);
    }
    return local;
}

/* Every peer's local or remote key (and ghex), as client and dmodex check them. */
static void check_keys(bool ghex, int timeout)
{
    uint32_t size = get_u32((pmix_proc_t[]){job()}, PMIX_JOB_SIZE), checked = 0;
    pmix_info_t tmo;
    PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &timeout, PMIX_INT);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;
        char key[PMIX_MAX_KEYLEN + 1];
        bool local = is_local(r);
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        snprintf(key, sizeof(key), "%s-%u-%s", me.nspace, r, local ? "local" : "remote");
        if (!ok(PMIx_Get(&peer, key, timeout > 0 ? &tmo : NULL, timeout > 0 ? 1 : 0, &v), key)) {
            continue;
        }
        bool right = local ? (PMIX_UINT64 == v->type && 1234 == v->data.uint64)
                           : (PMIX_STRING == v->type && 0 == strcmp(v->data.string, "1234"));
        PMIX_VALUE_RELEASE(v);
        if (right && ghex && r != me.rank &&
            ok(PMIx_Get(&peer, "ghex", &tmo, 1, &v), "PMIx_Get(ghex)")) {
            right = PMIX_BYTE_OBJECT == v->type && 128 == v->data.bo.size;
            PMIX_VALUE_RELEASE(v);
        }
        if (!right) {
            say("rank %u's key %s is wrong", r, key);
            failures++;
            continue;
        }
        checked++;
    }
    PMIX_INFO_DESTRUCT(&tmo);
    say("checked the keys of %u of %u ranks", checked, size);
}

static void client(void)
{
    default_handler();
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    ok(PMIx_Load_topology(&topo), "PMIx_Load_topology");
    pmix_proc_t wild = job();
    say("universe size %u, job size %u%s", get_u32(&wild, PMIX_UNIV_SIZE),
        get_u32(&wild, PMIX_JOB_SIZE), NULL != getenv("PMIX_ENV_VALUE") ? ", spawned" : "");
    put_keys(false);
    if (0 == me.rank) {
        sleep(1); /* the others wait for it at the fence */
    }
    bool yes = true;
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    ok(PMIx_Fence(&wild, 1, &collect, 1), "PMIx_Fence");
    PMIX_INFO_DESTRUCT(&collect);
    check_keys(false, 0);
}

static void dmodex(void)
{
    put_keys(true);
    check_keys(true, 10); /* without a fence: each key fetched from its owner's node */
    ok(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
}

/* pub (fences between publish, lookup and unpublish) and pubi (PMIX_WAIT instead). */
static void publish(bool wait)
{
    pmix_proc_t wild = job();
    if (!wait) {
        ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    }
    if (0 == me.rank) {
        pmix_info_t info[2];
        uint8_t one = 1;
        size_t panda = 123456;
        if (wait) {
            sleep(1); /* the others are waiting already */
        }
        PMIX_INFO_LOAD(&info[0], "FOOBAR", &one, PMIX_UINT8);
        PMIX_INFO_LOAD(&info[1], "PANDA", &panda, PMIX_SIZE);
        if (ok(PMIx_Publish(info, 2), "PMIx_Publish")) {
            say("published FOOBAR and PANDA");
        }
    }
    if (!wait) {
        ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    }
    if (0 != me.rank) {
        pmix_pdata_t pd[2];
        pmix_info_t dir;
        int all = 0;
        PMIX_PDATA_CONSTRUCT(&pd[0]);
        PMIX_PDATA_CONSTRUCT(&pd[1]);
        PMIX_LOAD_KEY(pd[0].key, "FOOBAR");
        PMIX_LOAD_KEY(pd[1].key, "PANDA");
        PMIX_INFO_LOAD(&dir, PMIX_WAIT, &all, PMIX_INT);
        if (ok(PMIx_Lookup(pd, wait ? 2 : 1, wait ? &dir : NULL, wait ? 1 : 0), "PMIx_Lookup")) {
            bool right =
                0 == strcmp(pd[0].proc.nspace, me.nspace) && 0 == pd[0].proc.rank &&
                PMIX_UINT8 == pd[0].value.type && 1 == pd[0].value.data.uint8 &&
                (!wait || (PMIX_SIZE == pd[1].value.type && 123456 == pd[1].value.data.size));
            say("looked up %s: %s", wait ? "FOOBAR and PANDA" : "FOOBAR",
                right ? "right values from rank 0" : "WRONG");
            failures += !right;
        }
        PMIX_PDATA_DESTRUCT(&pd[0]);
        PMIX_PDATA_DESTRUCT(&pd[1]);
        PMIX_INFO_DESTRUCT(&dir);
    }
    ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    if (0 == me.rank) {
        char *keys[] = {"FOOBAR", "PANDA", NULL};
        if (ok(PMIx_Unpublish(keys, NULL, 0), "PMIx_Unpublish")) {
            say("unpublished");
        }
    }
    ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
}

static void log_example(int argc, char **argv)
{
    if (0 == me.rank) {
        pmix_info_t data, dir;
        bool yes = true;
        PMIX_INFO_LOAD(&data, PMIX_LOG_STDERR, "stderr log message\n", PMIX_STRING);
        PMIX_INFO_LOAD(&dir, PMIX_LOG_GENERATE_TIMESTAMP, &yes, PMIX_BOOL);
        ok(PMIx_Log(&data, 1, &dir, 1), "PMIx_Log(stderr)");
        PMIX_INFO_DESTRUCT(&data);
        PMIX_INFO_DESTRUCT(&dir);
        const char *where = argc > 2 ? argv[2] : "";
        if (0 == strcmp(where, "--syslog") || 0 == strcmp(where, "--global-syslog")) {
            bool global = 0 == strcmp(where, "--global-syslog");
            PMIX_INFO_LOAD(&data, global ? PMIX_LOG_GLOBAL_SYSLOG : PMIX_LOG_LOCAL_SYSLOG,
                           global ? "GLOBAL SYSLOG message\n" : "SYSLOG message\n", PMIX_STRING);
            ok(PMIx_Log(&data, 1, NULL, 0), "PMIx_Log(syslog)");
            PMIX_INFO_DESTRUCT(&data);
        }
    }
    bool no = false;
    pmix_info_t collect;
    pmix_proc_t wild = job();
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &no, PMIX_BOOL);
    ok(PMIx_Fence(&wild, 1, &collect, 1), "PMIx_Fence");
    PMIX_INFO_DESTRUCT(&collect);
    say("logged");
}

static void jctrl(void)
{
    default_handler();
    pmix_proc_t wild = job();
    say("universe size %u", get_u32(&wild, PMIX_UNIV_SIZE));
    /* only information: preemptible, and how it would be told to checkpoint */
    pmix_info_t info[2];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    pmix_data_array_t *how;
    PMIX_DATA_ARRAY_CREATE(how, 2, PMIX_INFO);
    int signo = SIGUSR2;
    pmix_status_t event = PMIX_JCTRL_CHECKPOINT;
    PMIX_INFO_LOAD(&((pmix_info_t *) how->array)[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &signo,
                   PMIX_INT);
    PMIX_INFO_LOAD(&((pmix_info_t *) how->array)[1], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &event,
                   PMIX_STATUS);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, how, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(how);
    waiter_t w = WAITER_INIT;
    if (ok(PMIx_Job_control_nb(NULL, 0, info, 2, info_answered, &w), "PMIx_Job_control_nb")) {
        ok(wait_for(&w), "PMIx_Job_control_nb's answer");
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    /* heartbeats every 5 s, two may be missed */
    pmix_info_t monitor, dirs[3];
    uint32_t every = 5, drops = 2;
    PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_ID, "MONITOR1", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_TIME, &every, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[2], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    waiter_t m = WAITER_INIT;
    if (ok(PMIx_Process_monitor_nb(&monitor, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 3, info_answered,
                                   &m),
           "PMIx_Process_monitor_nb")) {
        ok(wait_for(&m), "PMIx_Process_monitor_nb's answer");
    }
    PMIx_Heartbeat();
    ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    say("job control and monitoring done");
}

/* Told when a process of its job aborts or the job ends; rank 0 leaves with status 1. */
static volatile bool told;

static void fault_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                        pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    told = true;
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void fault(void)
{
    pmix_status_t codes[2] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_JOB_TERMINATED};
    pmix_info_t only;
    waiter_t w = WAITER_INIT;
    PMIX_INFO_LOAD(&only, PMIX_NSPACE, me.nspace, PMIX_STRING);
    PMIx_Register_event_handler(codes, 2, &only, 1, fault_event, registered, &w);
    ok(wait_for(&w), "PMIx_Register_event_handler");
    PMIX_INFO_DESTRUCT(&only);
    pmix_proc_t wild = job();
    ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    if (0 == me.rank) {
        sleep(1);
        say("exiting with status 1");
        exit(1);
    }
    while (!told) {
        usleep(10000); /* until told, or killed with the job */
    }
    say("told of the failure");
}

static void bad_exit(void)
{
    hello();
    if (0 == me.rank) {
        exit(1); /* without finalizing */
    }
    sleep(2);
}

static void dynamic(const char *self)
{
    pmix_proc_t wild = job();
    say("job size %u", get_u32(&wild, PMIX_JOB_SIZE));
    ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
    if (0 == me.rank) {
        pmix_app_t *app;
        char nspace[PMIX_MAX_NSLEN + 1];
        PMIX_APP_CREATE(app, 1);
        app->cmd = strdup(self);
        app->argv = calloc(3, sizeof(char *));
        app->argv[0] = strdup(self);
        app->argv[1] = strdup("client");
        app->env = calloc(2, sizeof(char *));
        app->env[0] = strdup("PMIX_ENV_VALUE=3");
        app->maxprocs = 2;
        if (ok(PMIx_Spawn(NULL, 0, app, 1, nspace), "PMIx_Spawn")) {
            pmix_proc_t child;
            PMIX_LOAD_PROCID(&child, nspace, PMIX_RANK_WILDCARD);
            uint32_t size = get_u32(&child, PMIX_JOB_SIZE);
            child.rank = 1;
            say("spawned a job of size %u, its rank 1 has local rank %u", size,
                get_u32(&child, PMIX_LOCAL_RANK));
        }
        PMIX_APP_FREE(app, 1);
    }
    ok(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence");
}

static void nodeinfo(void)
{
    pmix_proc_t wild = job();
    uint32_t size = get_u32(&wild, PMIX_JOB_SIZE);
    pmix_value_t *v = NULL;
    if (ok(PMIx_Get(&wild, PMIX_NODE_LIST, NULL, 0, &v), "PMIx_Get(PMIX_NODE_LIST)")) {
        if (0 == me.rank) {
            say("nodes %s", v->data.string);
        }
        PMIX_VALUE_RELEASE(v);
    }
    if (size > 1) {
        pmix_proc_t next;
        PMIX_LOAD_PROCID(&next, me.nspace, (me.rank + 1) % size);
        if (ok(PMIx_Get(&next, PMIX_HOSTNAME, NULL, 0, &v), "PMIx_Get(PMIX_HOSTNAME)")) {
            say("rank %u is on %s", next.rank, v->data.string);
            /* no fabric coordinates (mpirun has none either) */
            pmix_value_t *c = NULL;
            pmix_status_t rc = PMIx_Get(&next, PMIX_FABRIC_COORDINATES, NULL, 0, &c);
            say("its fabric coordinates: %s", PMIx_Error_string(rc));
            if (PMIX_SUCCESS == rc) {
                PMIX_VALUE_RELEASE(c);
            }
            PMIX_VALUE_RELEASE(v);
        }
    }
}

int main(int argc, char **argv)
{
    example = argc > 1 ? argv[1] : "";
    signal(SIGPIPE, SIG_IGN);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "%s: PMIx_Init failed: %s\n", example, PMIx_Error_string(rc));
        return 0; /* as the originals */
    }
    if (0 == strcmp(example, "hello")) {
        hello();
    } else if (0 == strcmp(example, "client")) {
        client();
    } else if (0 == strcmp(example, "dmodex")) {
        dmodex();
    } else if (0 == strcmp(example, "pub") || 0 == strcmp(example, "pubi")) {
        publish(0 == strcmp(example, "pubi"));
    } else if (0 == strcmp(example, "log")) {
        log_example(argc, argv);
    } else if (0 == strcmp(example, "jctrl")) {
        jctrl();
    } else if (0 == strcmp(example, "fault")) {
        fault();
    } else if (0 == strcmp(example, "bad_exit")) {
        bad_exit();
    } else if (0 == strcmp(example, "dynamic")) {
        dynamic(argv[0]);
    } else if (0 == strcmp(example, "nodeinfo")) {
        nodeinfo();
    } else {
        say("no such example");
        failures++;
    }
    if (ok(PMIx_Finalize(NULL, 0), "PMIx_Finalize")) {
        say("finalized");
    }
    return failures > 0 ? 1 : 0;
}
