/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup native: the session daemon serves libherd's processes (<herd.h>) over a Unix socket in
 * the job's private folder, speaking opal/util/native_wire.h. A process proves who it is with
 * its uid (the socket's credentials), a rank of this node and the job's random token; its
 * requests are served with the wireup engine. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/fd.h"
#include "opal/util/native_wire.h"
#include "opal/util/output.h"
#include "orte/mca/wireup/wireup.h"

#define WIREUP_NATIVE_DEFAULT_PRIORITY 40
#define NATIVE_SOCKET_NAME             "native.sock"

static struct {
    int priority; /* wireup_native_priority */
} wireup_native_component_state = {
    .priority = WIREUP_NATIVE_DEFAULT_PRIORITY,
};

typedef struct native_state native_state_t;
typedef struct native_ref native_ref_t;

/* What a local process did, kept until it exits (its connection may be gone before). */
typedef struct native_proc {
    struct native_proc *next;
    uint32_t nspace;
    uint32_t rank;
    bool connected;
    bool finalized;
    bool moved; /* started here after its node was lost: not among the local ranks */
} native_proc_t;

typedef struct native_conn {
    struct native_conn *next;
    native_state_t *st;
    uint64_t id;
    int fd;
    opal_event_t *event;
    uint8_t *in;
    size_t len, cap;
    native_proc_t *proc; /* after a good HELLO */
} native_conn_t;

struct native_state {
    const orte_wireup_host_t *host;
    int listen_fd;
    opal_event_t *listen_event;
    char path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
    char uri[sizeof(((struct sockaddr_un *) 0)->sun_path) + 8];
    char token[33];
    native_conn_t *conns;
    native_proc_t *procs;
    uint64_t next_id;
    const orte_wireup_nspace_t **nss;
    uint32_t num_nss;
    native_ref_t *refs; /* requests waiting for their answer */
};

/* A request answered later (a fence, a get) finds its connection by id. The state lists them:
 * one whose answer never comes (a fence a peer left by aborting) is freed at finalize. */
struct native_ref {
    native_ref_t *prev, *next;
    native_state_t *st;
    uint64_t conn;
    uint32_t request;
};

/* ------------------------------------------------------------------------------------------ */
/* connections */

static native_conn_t *find_conn(native_state_t *st, uint64_t id)
{
    for (native_conn_t *c = st->conns; NULL != c; c = c->next) {
        if (c->id == id) {
            return c;
        }
    }
    return NULL;
}

static native_proc_t *find_proc(native_state_t *st, uint32_t nspace, uint32_t rank)
{
    for (native_proc_t *p = st->procs; NULL != p; p = p->next) {
        if (p->nspace == nspace && p->rank == rank) {
            return p;
        }
    }
    return NULL;
}

static void conn_close(native_conn_t *c)
{
    native_state_t *st = c->st;
    for (native_conn_t **p = &st->conns; NULL != *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    if (NULL != c->event) {
        opal_event_free(c->event);
    }
    close(c->fd);
    free(c->in);
    free(c);
}

static void send_reply(native_conn_t *c, uint32_t request, int status, const char *error,
                       const void *value, size_t len)
{
    opal_native_reply_t r = {.status = status,
                             .error = (char *) (NULL != error ? error : ""),
                             .value = (void *) value,
                             .len = len};
    opal_buffer_t payload, frame;
    opal_buffer_init(&payload);
    opal_buffer_init(&frame);
    int rc = opal_native_pack_reply(&payload, &r);
    if (HERD_SUCCESS == rc) {
        rc = opal_native_encode(OPAL_NATIVE_REPLY, request, payload.base, payload.used, &frame);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_fd_send_all(c->fd, frame.base, frame.used);
    }
    opal_buffer_destruct(&payload);
    opal_buffer_destruct(&frame);
    if (HERD_SUCCESS != rc) {
        opal_output_verbose(5, orte_wireup_base_framework.output,
                            "wireup native: a reply to a process was lost: %s", opal_strerror(rc));
    }
}

static native_ref_t *ref_new(native_conn_t *c, uint32_t request)
{
    native_ref_t *r = malloc(sizeof(*r));
    if (NULL != r) {
        *r = (native_ref_t){.next = c->st->refs, .st = c->st, .conn = c->id, .request = request};
        if (NULL != r->next) {
            r->next->prev = r;
        }
        c->st->refs = r;
    }
    return r;
}

static void ref_release(native_ref_t *r)
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
    free(r);
}

static void fence_done(int status, const char *error, void *cbdata)
{
    native_ref_t *r = cbdata;
    native_conn_t *c = find_conn(r->st, r->conn);
    if (NULL != c) {
        send_reply(c, r->request, status, error, NULL, 0);
    }
    ref_release(r);
}

static void get_done(int status, const void *value, size_t len, const char *error, void *cbdata)
{
    native_ref_t *r = cbdata;
    native_conn_t *c = find_conn(r->st, r->conn);
    if (NULL != c) {
        send_reply(c, r->request, status, error, value, len);
    }
    ref_release(r);
}

/* ------------------------------------------------------------------------------------------ */
/* requests */

static const orte_wireup_nspace_t *ns_by_name(native_state_t *st, const char *name)
{
    for (uint32_t i = 0; i < st->num_nss; ++i) {
        if (NULL != st->nss[i] && 0 == strcmp(st->nss[i]->name, name)) {
            return st->nss[i];
        }
    }
    return NULL;
}

static bool is_local(const orte_wireup_nspace_t *ns, uint32_t rank)
{
    uint32_t lo = 0, hi = ns->num_local;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ns->local_ranks[mid] == rank) {
            return true;
        }
        if (ns->local_ranks[mid] < rank) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

/* A process says who it is; false: refused (and told why). */
static bool hello(native_conn_t *c, uint32_t request, const opal_native_header_t *h,
                  const uint8_t *payload)
{
    native_state_t *st = c->st;
    opal_native_hello_t hi;
    char error[512];
    if (HERD_SUCCESS != opal_native_unpack_hello(payload, h->length, &hi)) {
        return false;
    }
    struct ucred cred;
    socklen_t cred_len = sizeof(cred);
    const orte_wireup_nspace_t *ns = ns_by_name(st, hi.nspace);
    native_proc_t *p = NULL != ns ? find_proc(st, ns->index, hi.rank) : NULL;
    error[0] = '\0';
    if (0 != getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) || cred.uid != getuid()) {
        snprintf(error, sizeof(error), "the session daemon serves only its own user's processes");
    } else if (NULL == ns) {
        snprintf(error, sizeof(error), "namespace %s is not served by the session daemon on %s",
                 hi.nspace, st->host->node_name);
    } else if (NULL == p || (!is_local(ns, hi.rank) && !p->moved)) {
        snprintf(error, sizeof(error), "rank %u of %s does not run on %s", hi.rank, hi.nspace,
                 st->host->node_name);
    } else if (0 != strcmp(hi.token, st->token)) {
        snprintf(error, sizeof(error), "wrong job token: this process was not started by herd");
    } else if (p->connected) {
        snprintf(error, sizeof(error), "rank %u of %s is already connected", hi.rank, hi.nspace);
    }
    opal_native_hello_free(&hi);
    if ('\0' != error[0]) {
        opal_output_verbose(1, orte_wireup_base_framework.output, "wireup native: refused: %s",
                            error);
        send_reply(c, request, HERD_ERR_AUTH, error, NULL, 0);
        return false;
    }
    p->connected = true;
    c->proc = p;
    send_reply(c, request, HERD_SUCCESS, NULL, NULL, 0);
    return true;
}

/* Serve one frame; false when the connection must be closed. */
static bool serve(native_conn_t *c, const opal_native_header_t *h, const uint8_t *payload)
{
    native_state_t *st = c->st;
    orte_wireup_engine_t *e = st->host->engine;
    if (NULL == c->proc) {
        return OPAL_NATIVE_HELLO == h->type && hello(c, h->id, h, payload);
    }
    uint32_t nspace = c->proc->nspace, rank = c->proc->rank;
    int rc;
    switch (h->type) {
    case OPAL_NATIVE_COMMIT: {
        opal_native_commit_t commit;
        if (HERD_SUCCESS != opal_native_unpack_commit(payload, h->length, &commit)) {
            return false;
        }
        rc = HERD_SUCCESS;
        for (uint32_t i = 0; HERD_SUCCESS == rc && i < commit.num_puts; ++i) {
            rc = orte_wireup_kv_put(e, nspace, rank, commit.puts[i].key, commit.puts[i].value,
                                    commit.puts[i].len);
        }
        if (HERD_SUCCESS == rc) {
            rc = orte_wireup_kv_commit(e, nspace, rank);
        }
        opal_native_commit_free(&commit);
        send_reply(c, h->id, rc,
                   HERD_SUCCESS == rc ? NULL : "the session daemon could not store it", NULL, 0);
        return true;
    }
    case OPAL_NATIVE_FENCE: {
        bool collect;
        if (HERD_SUCCESS != opal_native_unpack_fence(payload, h->length, &collect)) {
            return false;
        }
        native_ref_t *r = ref_new(c, h->id);
        rc = (NULL == r) ? HERD_ERR_OUT_OF_RESOURCE
                         : orte_wireup_kv_fence(e, nspace, ORTE_WIREUP_KIND_NATIVE, rank, collect,
                                                fence_done, r);
        if (HERD_SUCCESS != rc) {
            ref_release(r);
            send_reply(c, h->id, rc,
                       HERD_ERR_EXISTS == rc ? "this process is already in a fence"
                                             : "the session daemon could not start the fence",
                       NULL, 0);
        }
        return true;
    }
    case OPAL_NATIVE_GET: {
        opal_native_get_t get;
        if (HERD_SUCCESS != opal_native_unpack_get(payload, h->length, &get)) {
            return false;
        }
        native_ref_t *r = ref_new(c, h->id);
        rc = (NULL == r) ? HERD_ERR_OUT_OF_RESOURCE
                         : orte_wireup_kv_get(e, nspace, get.peer, get.key, -1, get_done, r);
        if (HERD_SUCCESS != rc) {
            char error[128];
            snprintf(error, sizeof(error), "rank %u is not in the job", get.peer);
            ref_release(r);
            send_reply(c, h->id, rc, HERD_ERR_BAD_PARAM == rc ? error : NULL, NULL, 0);
        }
        opal_native_get_free(&get);
        return true;
    }
    case OPAL_NATIVE_ABORT: {
        opal_native_abort_t a;
        if (HERD_SUCCESS != opal_native_unpack_abort(payload, h->length, &a)) {
            return false;
        }
        st->host->abort(st->host->ctx, nspace, rank, a.status, a.message);
        opal_native_abort_free(&a);
        send_reply(c, h->id, HERD_SUCCESS, NULL, NULL, 0);
        return true;
    }
    case OPAL_NATIVE_FINALIZE:
        if (0 != h->length) {
            return false;
        }
        c->proc->finalized = true;
        send_reply(c, h->id, HERD_SUCCESS, NULL, NULL, 0);
        return true;
    default:
        return false; /* a second HELLO, or a daemon's REPLY */
    }
}

static void conn_read_cb(int fd, short what, void *arg)
{
    native_conn_t *c = arg;
    native_state_t *st = c->st;
    uint64_t id = c->id;
    bool closed = false;
    for (;;) {
        if (c->cap - c->len < 65536) {
            size_t cap = c->cap ? 2 * c->cap : 131072;
            uint8_t *grown = realloc(c->in, cap);
            if (NULL == grown) {
                conn_close(c);
                return;
            }
            c->in = grown;
            c->cap = cap;
        }
        ssize_t n = read(c->fd, c->in + c->len, c->cap - c->len);
        if (n > 0) {
            c->len += (size_t) n;
            continue;
        }
        if (n < 0 && EINTR == errno) {
            continue;
        }
        closed = !(n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno));
        break;
    }
    while (NULL != find_conn(st, id) && c->len > 0) {
        opal_native_header_t h;
        long n = opal_native_frame(c->in, c->len, &h);
        if (0 == n) {
            break;
        }
        if (n < 0 || !serve(c, &h, c->in + OPAL_NATIVE_HEADER_SIZE)) {
            if (NULL != find_conn(st, id)) {
                opal_output(OPAL_OUTPUT_STDERR,
                            "wireup native on %s: %s sent a malformed or refused message; its "
                            "connection is closed",
                            st->host->node_name, NULL != c->proc ? "a process" : "a client");
                conn_close(c);
            }
            return;
        }
        memmove(c->in, c->in + n, c->len - (size_t) n);
        c->len -= (size_t) n;
    }
    if (closed && NULL != find_conn(st, id)) {
        conn_close(c); /* the process exited or closed it; what it did stays in its record */
    }
}

static void accept_cb(int fd, short what, void *arg)
{
    native_state_t *st = arg;
    for (;;) {
        int cfd = accept4(st->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0) {
            return;
        }
        native_conn_t *c = calloc(1, sizeof(*c));
        if (NULL == c) {
            close(cfd);
            continue;
        }
        c->st = st;
        c->id = ++st->next_id;
        c->fd = cfd;
        if (HERD_SUCCESS != opal_event_fd_create(st->host->base, cfd,
                                                 OPAL_EVENT_READ | OPAL_EVENT_PERSIST, conn_read_cb,
                                                 c, &c->event) ||
            HERD_SUCCESS != opal_event_add(c->event, NULL)) {
            if (NULL != c->event) {
                opal_event_free(c->event);
            }
            close(cfd);
            free(c);
            continue;
        }
        c->next = st->conns;
        st->conns = c;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the module */

static void native_finalize(void *state);

static int native_init(const orte_wireup_host_t *host, void **state)
{
    native_state_t *st = calloc(1, sizeof(*st));
    if (NULL == st) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    st->host = host;
    st->listen_fd = -1;
    unsigned char raw[16];
    if (sizeof(raw) != getrandom(raw, sizeof(raw), 0)) {
        free(st);
        return HERD_ERR_IN_ERRNO;
    }
    for (size_t i = 0; i < sizeof(raw); ++i) {
        snprintf(st->token + 2 * i, 3, "%02x", raw[i]);
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if ((size_t) snprintf(st->path, sizeof(st->path), "%s/%s", host->tmpdir, NATIVE_SOCKET_NAME) >=
        sizeof(st->path)) {
        opal_output_verbose(1, orte_wireup_base_framework.output,
                            "wireup native: the job's folder %s is too long for a socket path",
                            host->tmpdir);
        free(st);
        return HERD_ERR_NOT_AVAILABLE;
    }
    memcpy(addr.sun_path, st->path, strlen(st->path) + 1);
    snprintf(st->uri, sizeof(st->uri), "unix:%s", st->path);
    st->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc = HERD_SUCCESS;
    if (st->listen_fd < 0 || 0 != bind(st->listen_fd, (struct sockaddr *) &addr, sizeof(addr)) ||
        0 != chmod(st->path, 0600) || 0 != listen(st->listen_fd, 1024)) {
        opal_output(OPAL_OUTPUT_STDERR, "wireup native on %s: cannot listen on %s: %s",
                    host->node_name, st->path, strerror(errno));
        rc = HERD_ERR_IN_ERRNO;
    } else if (HERD_SUCCESS != (rc = opal_event_fd_create(host->base, st->listen_fd,
                                                          OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                                          accept_cb, st, &st->listen_event)) ||
               HERD_SUCCESS != (rc = opal_event_add(st->listen_event, NULL))) {
        /* rc says why */
    }
    if (HERD_SUCCESS != rc) {
        native_finalize(st);
        return rc;
    }
    *state = st;
    return HERD_SUCCESS;
}

static void native_finalize(void *state)
{
    native_state_t *st = state;
    while (NULL != st->refs) {
        ref_release(st->refs);
    }
    while (NULL != st->conns) {
        conn_close(st->conns);
    }
    while (NULL != st->procs) {
        native_proc_t *p = st->procs;
        st->procs = p->next;
        free(p);
    }
    if (NULL != st->listen_event) {
        opal_event_free(st->listen_event);
    }
    if (st->listen_fd >= 0) {
        close(st->listen_fd);
        unlink(st->path);
    }
    free(st->nss);
    free(st);
}

static int native_add_nspace(void *state, const orte_wireup_nspace_t *ns)
{
    native_state_t *st = state;
    if (ns->index >= st->num_nss) {
        const orte_wireup_nspace_t **grown = realloc(st->nss, (ns->index + 1) * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memset(grown + st->num_nss, 0, (ns->index + 1 - st->num_nss) * sizeof(*grown));
        st->nss = grown;
        st->num_nss = ns->index + 1;
    }
    st->nss[ns->index] = ns;
    return HERD_SUCCESS;
}

static void native_del_nspace(void *state, const orte_wireup_nspace_t *ns)
{
    native_state_t *st = state;
    if (ns->index < st->num_nss) {
        st->nss[ns->index] = NULL;
    }
}

static int native_proc_setup(void *state, const orte_wireup_proc_t *proc,
                             orte_wireup_child_t *child)
{
    native_state_t *st = state;
    native_proc_t *p = find_proc(st, proc->ns->index, proc->rank);
    if (NULL == p) {
        p = calloc(1, sizeof(*p));
        if (NULL == p) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        p->nspace = proc->ns->index;
        p->rank = proc->rank;
        p->next = st->procs;
        st->procs = p;
    }
    p->moved = p->moved || proc->moved;
    int rc;
    if (HERD_SUCCESS != (rc = orte_wireup_child_setenv(child, "HERD_WIREUP_URI", st->uri)) ||
        HERD_SUCCESS != (rc = orte_wireup_child_setenv(child, "HERD_JOBDB", proc->ns->db_name)) ||
        HERD_SUCCESS != (rc = orte_wireup_child_setenv(child, "HERD_NSPACE", proc->ns->name)) ||
        HERD_SUCCESS != (rc = orte_wireup_child_setenv(child, "HERD_WIREUP_TOKEN", st->token))) {
        return rc;
    }
    return HERD_SUCCESS;
}

static void native_proc_exited(void *state, const orte_wireup_proc_t *proc, bool *unfinalized)
{
    native_state_t *st = state;
    *unfinalized = false;
    /* what it sent last (its finalize) is read before it is judged */
    for (native_conn_t *c = st->conns; NULL != c; c = c->next) {
        if (NULL != c->proc && c->proc->nspace == proc->ns->index && c->proc->rank == proc->rank) {
            conn_read_cb(c->fd, OPAL_EVENT_READ, c);
            break;
        }
    }
    for (native_proc_t **pp = &st->procs; NULL != *pp; pp = &(*pp)->next) {
        native_proc_t *p = *pp;
        if (p->nspace == proc->ns->index && p->rank == proc->rank) {
            *unfinalized = p->connected && !p->finalized;
            for (native_conn_t *c = st->conns; NULL != c; c = c->next) {
                if (c->proc == p) {
                    c->proc = NULL; /* gone: a late message from it is refused */
                }
            }
            *pp = p->next;
            free(p);
            return;
        }
    }
}

static const orte_wireup_module_t wireup_native_module = {
    .name = "native",
    .init = native_init,
    .add_nspace = native_add_nspace,
    .proc_setup = native_proc_setup,
    .proc_exited = native_proc_exited,
    .del_nspace = native_del_nspace,
    .finalize = native_finalize,
};

static int wireup_native_register(const opal_mca_component_t *component)
{
    wireup_native_component_state.priority = WIREUP_NATIVE_DEFAULT_PRIORITY;
    int index = opal_mca_var_register(component, "priority",
                                      "Priority of the native wireup component (libherd's "
                                      "processes, over a Unix socket)",
                                      OPAL_MCA_VAR_INT, &wireup_native_component_state.priority);
    return index < 0 ? index : HERD_SUCCESS;
}

static int wireup_native_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &wireup_native_module;
    *priority = wireup_native_component_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, wireup, native, .register_params = wireup_native_register,
                   .query = wireup_native_query);
