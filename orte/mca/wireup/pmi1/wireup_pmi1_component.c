/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmi1: the component and its module. Each local process gets one end of a socket pair
 * as PMI_FD (with PMI_RANK and PMI_SIZE); its commands are served from the session daemon's
 * loop with the wireup engine: the KVS is the namespace's own keys, barrier_in a fence that
 * collects them, spawn a new namespace. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/fd.h"
#include "opal/util/jobdb.h"
#include "opal/util/output.h"
#include "orte/mca/wireup/pmi1/wireup_pmi1.h"
#include "orte/mca/wireup/wireup.h"

#define WIREUP_PMI1_DEFAULT_PRIORITY 20
#define PROCESS_MAPPING_KEY          "PMI_process_mapping"

static struct {
    int priority;       /* wireup_pmi1_priority */
    bool topology_hint; /* wireup_pmi1_topology_hint */
} wireup_pmi1_component_state = {
    .priority = WIREUP_PMI1_DEFAULT_PRIORITY,
    .topology_hint = true,
};

typedef struct pmi1_state pmi1_state_t;

/* One local process's connection. */
typedef struct pmi1_conn {
    struct pmi1_conn *next;
    pmi1_state_t *st;
    uint64_t id; /* for callbacks that may outlive it */
    uint32_t nspace;
    uint32_t rank;
    int fd;
    opal_event_t *event;
    char *buf;
    size_t len, cap;
    bool inited;
    bool finalized;
    bool busy; /* a command is being served: the next waits (PMI-1 is one at a time) */
    /* a spawn of several apps arrives as several blocks */
    orte_wireup_spawn_app_t *spawn_apps;
    uint32_t spawn_num_apps;
    char **spawn_keys;
    char **spawn_values;
    uint32_t spawn_num_preput;
} pmi1_conn_t;

/* A namespace: its process mapping, made at the first request. */
typedef struct pmi1_ns {
    const orte_wireup_nspace_t *ns;
    char *mapping; /* NULL: not made yet; "": too long for a PMI value */
} pmi1_ns_t;

struct pmi1_ref;

struct pmi1_state {
    const orte_wireup_host_t *host;
    pmi1_conn_t *conns;
    uint64_t next_id;
    pmi1_ns_t *nss;
    uint32_t num_nss;
    struct pmi1_ref *refs; /* requests waiting for their answer */
    char topology_xml[4096]; /* for hwloc in MPICH programs ("": nothing to say) */
};

/* A callback's way back to its connection. The state lists them: one whose answer never
 * comes (a barrier a peer left by aborting) is freed at finalize. */
typedef struct pmi1_ref {
    struct pmi1_ref *prev, *next;
    pmi1_state_t *st;
    uint64_t id;
    char *key;
} pmi1_ref_t;

static pmi1_conn_t *find_conn_id(pmi1_state_t *st, uint64_t id)
{
    for (pmi1_conn_t *c = st->conns; NULL != c; c = c->next) {
        if (c->id == id) {
            return c;
        }
    }
    return NULL;
}

static pmi1_conn_t *find_conn(pmi1_state_t *st, uint32_t nspace, uint32_t rank)
{
    for (pmi1_conn_t *c = st->conns; NULL != c; c = c->next) {
        if (c->nspace == nspace && c->rank == rank) {
            return c;
        }
    }
    return NULL;
}

static void spawn_clear(pmi1_conn_t *c)
{
    for (uint32_t a = 0; a < c->spawn_num_apps; ++a) {
        for (char **p = c->spawn_apps[a].argv; NULL != p && NULL != *p; ++p) {
            free(*p);
        }
        free(c->spawn_apps[a].argv);
        for (char **p = c->spawn_apps[a].env; NULL != p && NULL != *p; ++p) {
            free(*p);
        }
        free(c->spawn_apps[a].env);
        free((char *) c->spawn_apps[a].cwd);
    }
    free(c->spawn_apps);
    c->spawn_apps = NULL;
    c->spawn_num_apps = 0;
    for (uint32_t i = 0; i < c->spawn_num_preput; ++i) {
        free(c->spawn_keys[i]);
        free(c->spawn_values[i]);
    }
    free(c->spawn_keys);
    free(c->spawn_values);
    c->spawn_keys = c->spawn_values = NULL;
    c->spawn_num_preput = 0;
}

static void conn_close(pmi1_conn_t *c)
{
    pmi1_state_t *st = c->st;
    for (pmi1_conn_t **p = &st->conns; NULL != *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    if (NULL != c->event) {
        opal_event_free(c->event);
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    spawn_clear(c);
    free(c->buf);
    free(c);
}

static void reply(pmi1_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(pmi1_conn_t *c, const char *fmt, ...)
{
    char line[WIREUP_PMI1_MAX_LINE + 64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= sizeof(line)) {
        n = snprintf(line, sizeof(line), "cmd=error rc=-1 msg=answer_too_long\n");
    }
    /* a process that stopped reading is its own problem: its socket is large, answers small */
    if (HERD_SUCCESS != opal_fd_send_all(c->fd, line, (size_t) n)) {
        opal_output_verbose(5, orte_wireup_base_framework.output,
                            "wireup pmi1: rank %u no longer reads its PMI socket", c->rank);
    }
}

static void serve_next(pmi1_conn_t *c);

/* A command answered later (a get, a barrier, a lookup, a spawn): the next may be served. */
static void done_later(pmi1_conn_t *c)
{
    c->busy = false;
    serve_next(c);
}

static pmi1_ref_t *ref_new(pmi1_conn_t *c, const char *key)
{
    pmi1_ref_t *r = calloc(1, sizeof(*r));
    if (NULL != r) {
        r->st = c->st;
        r->id = c->id;
        if (NULL != key && NULL == (r->key = strdup(key))) {
            free(r);
            return NULL;
        }
        r->next = c->st->refs;
        if (NULL != r->next) {
            r->next->prev = r;
        }
        c->st->refs = r;
    }
    return r;
}

/* Unlinks r and frees it, and its key unless keep_key. */
static void ref_release(pmi1_ref_t *r, bool keep_key)
{
    if (NULL == r) {
        return;
    }
    if (NULL != r->prev) {
        r->prev->next = r->next;
    } else {
        r->st->refs = r->next;
    }
    if (NULL != r->next) {
        r->next->prev = r->prev;
    }
    if (!keep_key) {
        free(r->key);
    }
    free(r);
}

/* The connection a callback is for, freeing the reference; NULL when it is gone. */
static pmi1_conn_t *ref_take(pmi1_ref_t *r, char **key)
{
    pmi1_conn_t *c = find_conn_id(r->st, r->id);
    if (NULL != key) {
        *key = r->key;
    }
    ref_release(r, NULL != key);
    return c;
}

/* ------------------------------------------------------------------------------------------ */
/* process mapping */

static const char *process_mapping(pmi1_state_t *st, const orte_wireup_nspace_t *ns)
{
    if (ns->index >= st->num_nss || NULL == st->nss[ns->index].ns) {
        return NULL;
    }
    pmi1_ns_t *pns = &st->nss[ns->index];
    if (NULL != pns->mapping) {
        return '\0' != pns->mapping[0] ? pns->mapping : NULL;
    }
    unsigned *node_of = malloc((ns->num_procs > 0 ? ns->num_procs : 1) * sizeof(*node_of));
    unsigned *ids = malloc((ns->num_nodes > 0 ? ns->num_nodes : 1) * sizeof(*ids));
    char *text = malloc(WIREUP_PMI1_VALLEN_MAX + 1);
    bool ok = NULL != node_of && NULL != ids && NULL != text;
    unsigned next = 0;
    for (uint32_t n = 0; ok && n < ns->num_nodes; ++n) {
        ids[n] = UINT32_MAX;
    }
    /* node ids in the order nodes first hold a rank */
    for (uint32_t r = 0; ok && r < ns->num_procs; ++r) {
        opal_jobdb_proc_view_t view;
        ok = HERD_SUCCESS == opal_jobdb_get_proc(ns->db, r, &view) && view.node < ns->num_nodes;
        if (ok) {
            if (UINT32_MAX == ids[view.node]) {
                ids[view.node] = next++;
            }
            node_of[r] = ids[view.node];
        }
    }
    if (ok && HERD_SUCCESS != wireup_pmi1_process_mapping(node_of, ns->num_procs, text,
                                                          WIREUP_PMI1_VALLEN_MAX + 1)) {
        text[0] = '\0'; /* too long: MPICH finds its peers through the KVS instead */
    }
    free(node_of);
    free(ids);
    if (!ok) {
        free(text);
        return NULL;
    }
    pns->mapping = text;
    return '\0' != text[0] ? text : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* commands answered later */

static void get_done(int status, const void *value, size_t len, const char *error, void *cbdata)
{
    char *key = NULL;
    pmi1_conn_t *c = ref_take(cbdata, &key);
    if (NULL != c) {
        if (HERD_SUCCESS == status && wireup_pmi1_value_ok(value, len, WIREUP_PMI1_VALLEN_MAX)) {
            reply(c, "cmd=get_result rc=0 msg=success value=%.*s\n", (int) len,
                  (const char *) value);
        } else {
            reply(c, "cmd=get_result rc=-1 msg=key_%s_not_found value=unknown\n", key);
        }
        done_later(c);
    }
    free(key);
}

static void barrier_done(int status, const char *error, void *cbdata)
{
    pmi1_conn_t *c = ref_take(cbdata, NULL);
    if (NULL == c) {
        return;
    }
    if (HERD_SUCCESS == status) {
        reply(c, "cmd=barrier_out\n");
    } else {
        /* PMI-1 has no failed barrier: the process learns it from its closed socket */
        opal_output(OPAL_OUTPUT_STDERR, "wireup pmi1: the barrier of rank %u failed: %s", c->rank,
                    NULL != error ? error : opal_strerror(status));
        conn_close(c);
        return;
    }
    done_later(c);
}

static void publish_done(int status, const char *error, void *cbdata)
{
    char *what = NULL;
    pmi1_conn_t *c = ref_take(cbdata, &what);
    if (NULL != c) {
        reply(c, "cmd=%s_result rc=%d info=%s\n", what, HERD_SUCCESS == status ? 0 : -1,
              HERD_SUCCESS == status ? "ok" : "failed");
        done_later(c);
    }
    free(what);
}

static void lookup_done(int status, const void *value, size_t len, const char *error, void *cbdata)
{
    pmi1_conn_t *c = ref_take(cbdata, NULL);
    if (NULL == c) {
        return;
    }
    if (HERD_SUCCESS == status && wireup_pmi1_value_ok(value, len, WIREUP_PMI1_VALLEN_MAX)) {
        reply(c, "cmd=lookup_result rc=0 info=ok port=%.*s\n", (int) len, (const char *) value);
    } else {
        reply(c, "cmd=lookup_result rc=-1 info=unknown_service\n");
    }
    done_later(c);
}

static void spawn_done(int status, uint32_t nspace, const char *error, void *cbdata)
{
    pmi1_conn_t *c = ref_take(cbdata, NULL);
    if (NULL == c) {
        return;
    }
    if (HERD_SUCCESS != status) {
        opal_output(OPAL_OUTPUT_STDERR, "wireup pmi1: the spawn asked by rank %u failed: %s",
                    c->rank, NULL != error ? error : opal_strerror(status));
    }
    reply(c, "cmd=spawn_result rc=%d\n", HERD_SUCCESS == status ? 0 : -1);
    done_later(c);
}

/* ------------------------------------------------------------------------------------------ */
/* serving one command */

static const orte_wireup_nspace_t *conn_ns(pmi1_conn_t *c)
{
    return c->st->host->nspace(c->st->host->ctx, c->nspace);
}

/* One spawn block (one app). The request goes once the last block ("spawnssofar" ==
 * "totspawns") is in. */
static int spawn_block(pmi1_conn_t *c, const wireup_pmi1_msg_t *m, bool *complete)
{
    const char *nprocs = wireup_pmi1_get(m, "nprocs"), *exe = wireup_pmi1_get(m, "execname");
    const char *argcnt = wireup_pmi1_get(m, "argcnt"), *tot = wireup_pmi1_get(m, "totspawns");
    const char *sofar = wireup_pmi1_get(m, "spawnssofar");
    const char *prenum = wireup_pmi1_get(m, "preput_num"),
               *infonum = wireup_pmi1_get(m, "info_num");
    long np = NULL != nprocs ? strtol(nprocs, NULL, 10) : 0;
    long nargs = NULL != argcnt ? strtol(argcnt, NULL, 10) : 0;
    long total = NULL != tot ? strtol(tot, NULL, 10) : 1;
    long done = NULL != sofar ? strtol(sofar, NULL, 10) : 1;
    long npre = NULL != prenum ? strtol(prenum, NULL, 10) : 0;
    long ninfo = NULL != infonum ? strtol(infonum, NULL, 10) : 0;
    if (NULL == exe || '\0' == *exe || np <= 0 || np > (1 << 24) || nargs < 0 ||
        nargs > (long) WIREUP_PMI1_MAX_PAIRS || total <= 0 || total > 4096 || done <= 0 ||
        done > total || npre < 0 || npre > (long) WIREUP_PMI1_MAX_PAIRS || ninfo < 0 ||
        ninfo > (long) WIREUP_PMI1_MAX_PAIRS || (uint32_t) done != c->spawn_num_apps + 1) {
        return HERD_ERR_BAD_PARAM;
    }
    orte_wireup_spawn_app_t *apps = realloc(c->spawn_apps, (c->spawn_num_apps + 1) * sizeof(*apps));
    if (NULL == apps) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    c->spawn_apps = apps;
    orte_wireup_spawn_app_t *app = &apps[c->spawn_num_apps];
    memset(app, 0, sizeof(*app));
    c->spawn_num_apps++;
    app->np = (uint32_t) np;
    app->argv = calloc((size_t) nargs + 2, sizeof(char *));
    if (NULL == app->argv || NULL == (app->argv[0] = strdup(exe))) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (long i = 1; i <= nargs; ++i) {
        char key[32];
        snprintf(key, sizeof(key), "arg%ld", i);
        const char *arg = wireup_pmi1_get(m, key);
        if (NULL == arg) {
            return HERD_ERR_BAD_PARAM;
        }
        if (NULL == (app->argv[i] = strdup(arg))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    for (long i = 0; i < ninfo; ++i) {
        char kk[32], vk[32];
        snprintf(kk, sizeof(kk), "info_key_%ld", i);
        snprintf(vk, sizeof(vk), "info_val_%ld", i);
        const char *k = wireup_pmi1_get(m, kk), *v = wireup_pmi1_get(m, vk);
        if (NULL == k || NULL == v) {
            return HERD_ERR_BAD_PARAM;
        }
        if (0 == strcmp(k, "wdir") && NULL == app->cwd && NULL == (app->cwd = strdup(v))) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    /* the preput keys come with the first block */
    if (1 == done && npre > 0) {
        c->spawn_keys = calloc((size_t) npre, sizeof(char *));
        c->spawn_values = calloc((size_t) npre, sizeof(char *));
        if (NULL == c->spawn_keys || NULL == c->spawn_values) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        for (long i = 0; i < npre; ++i) {
            char kk[32], vk[32];
            snprintf(kk, sizeof(kk), "preput_key_%ld", i);
            snprintf(vk, sizeof(vk), "preput_val_%ld", i);
            const char *k = wireup_pmi1_get(m, kk), *v = wireup_pmi1_get(m, vk);
            if (NULL == k || NULL == v) {
                return HERD_ERR_BAD_PARAM;
            }
            c->spawn_keys[i] = strdup(k);
            c->spawn_values[i] = strdup(v);
            c->spawn_num_preput = (uint32_t) i + 1;
            if (NULL == c->spawn_keys[i] || NULL == c->spawn_values[i]) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
        }
    }
    *complete = done == total;
    return HERD_SUCCESS;
}

/* Serve one decoded command; false when the connection must be closed. */
static bool serve(pmi1_conn_t *c, const wireup_pmi1_msg_t *m)
{
    pmi1_state_t *st = c->st;
    const orte_wireup_nspace_t *ns = conn_ns(c);
    const char *cmd = m->cmd;
    if (NULL == ns) {
        return false;
    }
    if (m->multi) {
        if (0 != strcmp(cmd, "spawn")) {
            reply(c, "cmd=%s_result rc=-1 msg=unknown_command\n", cmd);
            return true;
        }
        bool complete = false;
        int rc = spawn_block(c, m, &complete);
        if (HERD_SUCCESS != rc) {
            spawn_clear(c);
            reply(c, "cmd=spawn_result rc=-1\n");
            return true;
        }
        if (!complete) {
            return true; /* the next block follows, unanswered */
        }
        orte_wireup_spawn_request_t req = {.parent_nspace = c->nspace,
                                           .parent_rank = c->rank,
                                           .apps = c->spawn_apps,
                                           .num_apps = c->spawn_num_apps,
                                           .preput_keys = (const char *const *) c->spawn_keys,
                                           .preput_values = (const char *const *) c->spawn_values,
                                           .num_preput = c->spawn_num_preput};
        pmi1_ref_t *ref = ref_new(c, NULL);
        rc = (NULL == ref) ? HERD_ERR_OUT_OF_RESOURCE
                           : st->host->spawn(st->host->ctx, &req, spawn_done, ref);
        spawn_clear(c);
        if (HERD_SUCCESS != rc) {
            ref_release(ref, false);
            reply(c, "cmd=spawn_result rc=-1\n");
            return true;
        }
        c->busy = true;
        return true;
    }
    if (0 == strcmp(cmd, "init")) {
        const char *v = wireup_pmi1_get(m, "pmi_version");
        bool ok = NULL != v && 1 == strtol(v, NULL, 10);
        reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=%d\n", ok ? 0 : -1);
        c->inited = c->inited || ok;
    } else if (0 == strcmp(cmd, "get_maxes")) {
        reply(c, "cmd=maxes kvsname_max=%u keylen_max=%u vallen_max=%u\n", WIREUP_PMI1_KVSNAME_MAX,
              WIREUP_PMI1_KEYLEN_MAX, WIREUP_PMI1_VALLEN_MAX);
    } else if (0 == strcmp(cmd, "get_appnum")) {
        opal_jobdb_proc_view_t view = {0};
        opal_jobdb_get_proc(ns->db, c->rank, &view);
        reply(c, "cmd=appnum appnum=%u\n", view.app);
    } else if (0 == strcmp(cmd, "get_my_kvsname")) {
        reply(c, "cmd=my_kvsname kvsname=%s\n", ns->name);
    } else if (0 == strcmp(cmd, "get_universe_size")) {
        reply(c, "cmd=universe_size size=%u\n",
              ns->universe_size > 0 ? ns->universe_size : ns->num_procs);
    } else if (0 == strcmp(cmd, "put")) {
        const char *kvs = wireup_pmi1_get(m, "kvsname"), *key = wireup_pmi1_get(m, "key");
        const char *value = wireup_pmi1_get(m, "value");
        int rc = (NULL == kvs || NULL == key || NULL == value || 0 != strcmp(kvs, ns->name) ||
                  strlen(key) > WIREUP_PMI1_KEYLEN_MAX || strlen(value) > WIREUP_PMI1_VALLEN_MAX)
                     ? HERD_ERR_BAD_PARAM
                     : orte_wireup_kv_put(st->host->engine, c->nspace, ORTE_WIREUP_OWNER_NSPACE,
                                          key, value, strlen(value));
        if (HERD_SUCCESS == rc) {
            rc = orte_wireup_kv_commit(st->host->engine, c->nspace, ORTE_WIREUP_OWNER_NSPACE);
        }
        reply(c, "cmd=put_result rc=%d msg=%s\n", HERD_SUCCESS == rc ? 0 : -1,
              HERD_SUCCESS == rc ? "success" : "bad_kvsname_key_or_value");
    } else if (0 == strcmp(cmd, "get")) {
        const char *kvs = wireup_pmi1_get(m, "kvsname"), *key = wireup_pmi1_get(m, "key");
        if (NULL == kvs || NULL == key || 0 != strcmp(kvs, ns->name) ||
            strlen(key) > WIREUP_PMI1_KEYLEN_MAX) {
            reply(c, "cmd=get_result rc=-1 msg=bad_kvsname_or_key value=unknown\n");
        } else if (0 == strcmp(key, PROCESS_MAPPING_KEY)) {
            const char *mapping = process_mapping(st, ns);
            if (NULL != mapping) {
                reply(c, "cmd=get_result rc=0 msg=success value=%s\n", mapping);
            } else {
                reply(c, "cmd=get_result rc=-1 msg=key_%s_not_found value=unknown\n", key);
            }
        } else {
            /* after a barrier every key is here: a key not here now is not put (PMI-1) */
            pmi1_ref_t *ref = ref_new(c, key);
            int rc = (NULL == ref)
                         ? HERD_ERR_OUT_OF_RESOURCE
                         : orte_wireup_kv_get(st->host->engine, c->nspace, ORTE_WIREUP_OWNER_NSPACE,
                                              key, 0, get_done, ref);
            if (HERD_SUCCESS != rc) {
                ref_release(ref, false);
                reply(c, "cmd=get_result rc=-1 msg=key_%s_not_found value=unknown\n", key);
            } else {
                c->busy = true;
            }
        }
    } else if (0 == strcmp(cmd, "barrier_in")) {
        pmi1_ref_t *ref = ref_new(c, NULL);
        int rc = (NULL == ref)
                     ? HERD_ERR_OUT_OF_RESOURCE
                     : orte_wireup_kv_fence(st->host->engine, c->nspace, ORTE_WIREUP_KIND_PMI1,
                                            c->rank, true, barrier_done, ref);
        if (HERD_SUCCESS != rc) {
            ref_release(ref, false);
            opal_output(OPAL_OUTPUT_STDERR, "wireup pmi1: rank %u cannot enter a barrier: %s",
                        c->rank, opal_strerror(rc));
            return false;
        }
        c->busy = true;
    } else if (0 == strcmp(cmd, "finalize")) {
        c->finalized = true;
        reply(c, "cmd=finalize_ack\n");
    } else if (0 == strcmp(cmd, "abort")) {
        const char *code = wireup_pmi1_get(m, "exitcode");
        const char *msg = wireup_pmi1_get(m, "msg");
        st->host->abort(st->host->ctx, c->nspace, c->rank,
                        NULL != code ? (int) strtol(code, NULL, 10) : 1,
                        NULL != msg ? msg : "PMI_Abort");
    } else if (0 == strcmp(cmd, "publish_name") || 0 == strcmp(cmd, "unpublish_name")) {
        bool publish = 'p' == cmd[0];
        const char *service = wireup_pmi1_get(m, "service"), *port = wireup_pmi1_get(m, "port");
        pmi1_ref_t *ref = ref_new(c, publish ? "publish" : "unpublish");
        int rc = (NULL == ref || NULL == service || (publish && NULL == port)) ? HERD_ERR_BAD_PARAM
                 : publish ? orte_wireup_publish(st->host->engine, service, port, strlen(port),
                                                 publish_done, ref)
                           : orte_wireup_unpublish(st->host->engine, service, publish_done, ref);
        if (HERD_SUCCESS != rc) {
            ref_release(ref, false);
            reply(c, "cmd=%s_result rc=-1 info=failed\n", publish ? "publish" : "unpublish");
        } else {
            c->busy = true;
        }
    } else if (0 == strcmp(cmd, "lookup_name")) {
        const char *service = wireup_pmi1_get(m, "service");
        pmi1_ref_t *ref = ref_new(c, NULL);
        int rc = (NULL == ref || NULL == service)
                     ? HERD_ERR_BAD_PARAM
                     : orte_wireup_lookup(st->host->engine, service, 0, lookup_done, ref);
        if (HERD_SUCCESS != rc) {
            ref_release(ref, false);
            reply(c, "cmd=lookup_result rc=-1 info=unknown_service\n");
        } else {
            c->busy = true;
        }
    } else {
        opal_output_verbose(1, orte_wireup_base_framework.output,
                            "wireup pmi1: rank %u sent an unknown command '%s'", c->rank, cmd);
        reply(c, "cmd=%s_result rc=-1 msg=unknown_command\n", cmd);
    }
    return true;
}

/* Serve what is buffered, one command at a time. */
static void serve_next(pmi1_conn_t *c)
{
    while (!c->busy && c->len > 0) {
        long n = wireup_pmi1_frame(c->buf, c->len);
        if (0 == n) {
            return;
        }
        wireup_pmi1_msg_t m;
        if (n < 0 || HERD_SUCCESS != wireup_pmi1_parse(c->buf, (size_t) n, &m)) {
            opal_output(OPAL_OUTPUT_STDERR,
                        "wireup pmi1: rank %u sent a malformed PMI-1 message; its PMI "
                        "connection is closed",
                        c->rank);
            conn_close(c);
            return;
        }
        memmove(c->buf, c->buf + n, c->len - (size_t) n);
        c->len -= (size_t) n;
        uint64_t id = c->id;
        pmi1_state_t *st = c->st;
        bool keep = serve(c, &m);
        wireup_pmi1_msg_free(&m);
        if (!keep) {
            if (NULL != find_conn_id(st, id)) {
                conn_close(c);
            }
            return;
        }
    }
}

static void conn_read_cb(int fd, short what, void *arg)
{
    pmi1_conn_t *c = arg;
    for (;;) {
        if (c->cap - c->len < 4096) {
            size_t cap = c->cap ? 2 * c->cap : 8192;
            if (cap > WIREUP_PMI1_MAX_BLOCK + 8192) {
                cap = WIREUP_PMI1_MAX_BLOCK + 8192;
            }
            if (cap <= c->cap) {
                opal_output(OPAL_OUTPUT_STDERR,
                            "wireup pmi1: rank %u sent a PMI-1 message over %u bytes; its PMI "
                            "connection is closed",
                            c->rank, WIREUP_PMI1_MAX_BLOCK);
                conn_close(c);
                return;
            }
            char *grown = realloc(c->buf, cap);
            if (NULL == grown) {
                conn_close(c);
                return;
            }
            c->buf = grown;
            c->cap = cap;
        }
        ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (n > 0) {
            c->len += (size_t) n;
            continue;
        }
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            break;
        }
        /* closed (the process exited or closed PMI_FD): what it sent is still served */
        opal_event_del(c->event);
        break;
    }
    serve_next(c);
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

static int pmi1_init(const orte_wireup_host_t *host, void **state)
{
    pmi1_state_t *st = calloc(1, sizeof(*st));
    if (NULL == st) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    st->host = host;
    wireup_pmi1_hint_init(wireup_pmi1_component_state.topology_hint, st->topology_xml,
                          sizeof(st->topology_xml));
    *state = st;
    return HERD_SUCCESS;
}

static int pmi1_add_nspace(void *state, const orte_wireup_nspace_t *ns)
{
    pmi1_state_t *st = state;
    if (ns->index >= st->num_nss) {
        pmi1_ns_t *grown = realloc(st->nss, (ns->index + 1) * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(grown + st->num_nss, 0, (ns->index + 1 - st->num_nss) * sizeof(*grown));
        st->nss = grown;
        st->num_nss = ns->index + 1;
    }
    st->nss[ns->index].ns = ns;
    return HERD_SUCCESS;
}

static int pmi1_proc_setup(void *state, const orte_wireup_proc_t *proc, orte_wireup_child_t *child)
{
    pmi1_state_t *st = state;
    int sv[2];
    if (0 != socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        return HERD_ERR_IN_ERRNO;
    }
    pmi1_conn_t *c = calloc(1, sizeof(*c));
    int child_fd = -1;
    int rc =
        (NULL == c) ? HERD_ERR_OUT_OF_RESOURCE : orte_wireup_child_add_fd(child, sv[1], &child_fd);
    if (HERD_SUCCESS != rc) {
        free(c);
        close(sv[0]);
        close(sv[1]);
        return rc;
    }
    /* sv[1] is the child's now (the session daemon closes its copy after the start) */
    c->st = st;
    c->id = ++st->next_id;
    c->nspace = proc->ns->index;
    c->rank = proc->rank;
    c->fd = sv[0];
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    char value[32];
    snprintf(value, sizeof(value), "%d", child_fd);
    rc = orte_wireup_child_setenv(child, "PMI_FD", value);
    snprintf(value, sizeof(value), "%u", proc->rank);
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_child_setenv(child, "PMI_RANK", value);
    }
    snprintf(value, sizeof(value), "%u", proc->ns->num_procs);
    if (HERD_SUCCESS == rc) {
        rc = orte_wireup_child_setenv(child, "PMI_SIZE", value);
    }
    if (HERD_SUCCESS == rc && UINT32_MAX != proc->ns->parent_nspace) {
        rc = orte_wireup_child_setenv(child, "PMI_SPAWNED", "1");
    }
    if (HERD_SUCCESS == rc) {
        rc = wireup_pmi1_hint(st->topology_xml, child);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_event_fd_create(st->host->base, c->fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                  conn_read_cb, c, &c->event);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_event_add(c->event, NULL);
    }
    /* a process of the same rank before it (a failed start) is replaced */
    pmi1_conn_t *old = find_conn(st, c->nspace, c->rank);
    if (NULL != old) {
        conn_close(old);
    }
    c->next = st->conns;
    st->conns = c;
    if (HERD_SUCCESS != rc) {
        conn_close(c);
    }
    return rc;
}

static void pmi1_proc_started(void *state, const orte_wireup_proc_t *proc, pid_t pid)
{
    pmi1_conn_t *c = find_conn(state, proc->ns->index, proc->rank);
    if (0 == pid && NULL != c) {
        conn_close(c); /* never ran */
    }
}

static void pmi1_proc_exited(void *state, const orte_wireup_proc_t *proc, bool *unfinalized)
{
    pmi1_conn_t *c = find_conn(state, proc->ns->index, proc->rank);
    *unfinalized = false;
    if (NULL != c) {
        /* what it wrote before exiting counts (a finalize just before exit) */
        conn_read_cb(c->fd, OPAL_EVENT_READ, c);
        c = find_conn(state, proc->ns->index, proc->rank);
    }
    if (NULL != c) {
        *unfinalized = c->inited && !c->finalized;
        conn_close(c);
    }
}

static void pmi1_del_nspace(void *state, const orte_wireup_nspace_t *ns)
{
    pmi1_state_t *st = state;
    if (ns->index < st->num_nss) {
        free(st->nss[ns->index].mapping);
        st->nss[ns->index].mapping = NULL;
        st->nss[ns->index].ns = NULL;
    }
}

static void pmi1_finalize(void *state)
{
    pmi1_state_t *st = state;
    while (NULL != st->refs) {
        ref_release(st->refs, false);
    }
    while (NULL != st->conns) {
        conn_close(st->conns);
    }
    for (uint32_t i = 0; i < st->num_nss; ++i) {
        free(st->nss[i].mapping);
    }
    free(st->nss);
    free(st);
}

static const orte_wireup_module_t wireup_pmi1_module = {
    .name = "pmi1",
    .init = pmi1_init,
    .add_nspace = pmi1_add_nspace,
    .proc_setup = pmi1_proc_setup,
    .proc_started = pmi1_proc_started,
    .proc_exited = pmi1_proc_exited,
    .del_nspace = pmi1_del_nspace,
    .finalize = pmi1_finalize,
};

static int wireup_pmi1_register(const opal_mca_component_t *component)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "priority",
         .type = OPAL_MCA_VAR_INT,
         .storage = &wireup_pmi1_component_state.priority,
         .help = "Priority of the pmi1 wireup component (PMI-1 over PMI_FD, for MPICH programs)"},
        {.name = "topology_hint",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &wireup_pmi1_component_state.topology_hint,
         .help = "Give the processes the node's topology as herd has it (HWLOC_XMLFILE, "
                 "HWLOC_THISSYSTEM=1, hwloc's discovery plugins left out), so that hwloc in MPICH's "
                 "MPI_Init reads it instead of discovering it again in every process; never when "
                 "the user set any HWLOC_ variable"},
    };

    wireup_pmi1_component_state.priority = WIREUP_PMI1_DEFAULT_PRIORITY;
    wireup_pmi1_component_state.topology_hint = true;
    return opal_mca_var_register_table(component, vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

static int wireup_pmi1_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &wireup_pmi1_module;
    *priority = wireup_pmi1_component_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, wireup, pmi1, .register_params = wireup_pmi1_register,
                   .query = wireup_pmi1_query);
