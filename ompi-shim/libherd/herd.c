/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd (<herd.h>): the job database read in place, and the native wireup protocol
 * (opal/util/native_wire.h) to this node's session daemon for everything else; herd_init also
 * starts the proc table and the endpoint framework its transports will use. */
#include "herd_config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "herd.h"
#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/proc/proc.h"
#include "opal/status.h"
#include "opal/util/fd.h"
#include "opal/util/jobdb.h"
#include "opal/util/native_wire.h"

/* A fence, or a message (herd_isend is complete when it returns; herd_irecv's receive sits in
 * the btl base's matching engine until a message matches it). */
enum herd_request_kind { HERD_REQUEST_FENCE, HERD_REQUEST_SEND, HERD_REQUEST_RECV };

struct herd_request {
    enum herd_request_kind kind;
    uint32_t id;
    bool done;
    int status;
    ompi_btl_recv_t recv;
    size_t *len_out;
    uint32_t *src_out;
    int *tag_out;
};

/* The process's one connection to its session daemon. */
static struct {
    bool initialized;
    int fd;
    opal_jobdb_t *db;
    opal_jobdb_proc_view_t me;
    uint32_t rank;
    uint32_t size;
    uint32_t local_size;
    uint32_t next_id;
    opal_native_put_t *puts; /* since the last commit */
    uint32_t num_puts;
    uint32_t cap_puts;
    struct herd_request *fence; /* the fence in flight, if any */
    uint8_t *in;                /* bytes read, not yet a whole reply */
    size_t in_len;
    size_t in_cap;
    char error[1024];
} herd = {.fd = -1};

static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(herd.error, sizeof(herd.error), fmt, ap);
    va_end(ap);
    return status;
}

const char *herd_strerror(int status)
{
    return opal_strerror(status);
}

const char *herd_last_error(void)
{
    return herd.error;
}

/* ------------------------------------------------------------------------------------------ */
/* talking to the daemon */

static int send_request(opal_native_type_t type, const opal_buffer_t *payload, uint32_t *id)
{
    opal_buffer_t frame;
    opal_buffer_init(&frame);
    uint32_t this_id = ++herd.next_id;
    int rc = opal_native_encode(type, this_id, NULL != payload ? payload->base : NULL,
                                NULL != payload ? payload->used : 0, &frame);
    if (HERD_SUCCESS == rc) {
        rc = opal_fd_send_all(herd.fd, frame.base, frame.used);
        if (HERD_SUCCESS != rc) {
            rc = fail(HERD_ERR_UNREACH, "the session daemon is gone (writing to it: %s)",
                      strerror(errno));
        }
    }
    opal_buffer_destruct(&frame);
    if (HERD_SUCCESS == rc && NULL != id) {
        *id = this_id;
    }
    return rc;
}

/* Read what the socket has (all of it without blocking, or at least something with). */
static int read_some(bool block)
{
    for (;;) {
        if (herd.in_cap - herd.in_len < 65536) {
            size_t cap = herd.in_cap ? 2 * herd.in_cap : 131072;
            uint8_t *grown = realloc(herd.in, cap);
            if (NULL == grown) {
                return fail(HERD_ERR_OUT_OF_RESOURCE, "out of memory reading a reply");
            }
            herd.in = grown;
            herd.in_cap = cap;
        }
        ssize_t n = recv(herd.fd, herd.in + herd.in_len, herd.in_cap - herd.in_len,
                         block ? 0 : MSG_DONTWAIT);
        if (n > 0) {
            herd.in_len += (size_t) n;
            return HERD_SUCCESS;
        }
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && !block && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            return HERD_ERR_TIMEOUT; /* nothing now */
        }
        return fail(HERD_ERR_UNREACH, "the session daemon is gone (%s)",
                    0 == n ? "it closed the connection" : strerror(errno));
    }
}

/* The next whole reply in what was read: HERD_SUCCESS with *reply and *id, HERD_ERR_TIMEOUT
 * when none is whole yet, or an error for a malformed one. */
static int next_reply(uint32_t *id, opal_native_reply_t *reply)
{
    opal_native_header_t h;
    long n = opal_native_frame(herd.in, herd.in_len, &h);
    if (0 == n) {
        return HERD_ERR_TIMEOUT;
    }
    if (n < 0 || OPAL_NATIVE_REPLY != h.type) {
        return fail(n < 0 ? (int) n : HERD_ERR_UNPACK_FAILURE,
                    "the session daemon sent a malformed reply");
    }
    int rc = opal_native_unpack_reply(herd.in + OPAL_NATIVE_HEADER_SIZE, h.length, reply);
    memmove(herd.in, herd.in + n, herd.in_len - (size_t) n);
    herd.in_len -= (size_t) n;
    if (HERD_SUCCESS != rc) {
        return fail(rc, "the session daemon sent a malformed reply");
    }
    *id = h.id;
    return HERD_SUCCESS;
}

/* A reply for the fence in flight: record it. */
static bool take_fence(uint32_t id, const opal_native_reply_t *r)
{
    if (NULL == herd.fence || herd.fence->id != id) {
        return false;
    }
    herd.fence->done = true;
    herd.fence->status = r->status;
    if (HERD_SUCCESS != r->status) {
        fail(r->status, "%s", '\0' != r->error[0] ? r->error : "the fence failed");
    }
    herd.fence = NULL;
    return true;
}

/* Wait for the reply to request id (the fence's may come first). */
static int await(uint32_t id, opal_native_reply_t *out)
{
    for (;;) {
        uint32_t got;
        opal_native_reply_t r;
        int rc = next_reply(&got, &r);
        if (HERD_SUCCESS == rc) {
            if (got == id) {
                if (HERD_SUCCESS != r.status) {
                    fail(r.status, "%s", '\0' != r.error[0] ? r.error : opal_strerror(r.status));
                }
                *out = r;
                return HERD_SUCCESS;
            }
            take_fence(got, &r);
            opal_native_reply_free(&r);
            continue;
        }
        if (HERD_ERR_TIMEOUT != rc) {
            return rc;
        }
        if (HERD_SUCCESS != (rc = read_some(true))) {
            return rc;
        }
    }
}

/* One request and its reply's status (and value, for a get). */
static int call(opal_native_type_t type, const opal_buffer_t *payload, opal_native_reply_t *out)
{
    uint32_t id;
    opal_native_reply_t r;
    if (!herd.initialized) {
        return fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    int rc = send_request(type, payload, &id);
    if (HERD_SUCCESS == rc) {
        rc = await(id, &r);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = r.status;
    if (NULL != out && HERD_SUCCESS == rc) {
        *out = r;
    } else {
        opal_native_reply_free(&r);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* start and end */

static uint32_t env_u32(const char *name, bool *ok)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n = (NULL != v) ? strtoul(v, &end, 10) : 0;
    if (NULL == v || '\0' == *v || '\0' != *end || n > UINT32_MAX) {
        *ok = false;
        return 0;
    }
    return (uint32_t) n;
}

int herd_init(void)
{
    if (herd.initialized) {
        return HERD_SUCCESS;
    }
    const char *uri = getenv("HERD_WIREUP_URI"), *dbname = getenv("HERD_JOBDB");
    const char *nspace = getenv("HERD_NSPACE"), *token = getenv("HERD_WIREUP_TOKEN");
    bool ok = true;
    uint32_t rank = env_u32("HERD_RANK", &ok);
    if (NULL == uri || NULL == dbname || NULL == nspace || !ok || 0 != strncmp(uri, "unix:", 5)) {
        return fail(HERD_ERR_NOT_AVAILABLE,
                    "this program was not started by herdrun with the native wireup "
                    "(HERD_WIREUP_URI, HERD_JOBDB, HERD_NSPACE or HERD_RANK is missing): run it "
                    "with herdrun, and do not exclude the native wireup (HERD_MCA_wireup)");
    }
    /* the endpoint slots of procs (docs/endpoint.md); its messages name the variables to fix */
    int rc = ompi_endpoint_base_open();
    if (HERD_SUCCESS != rc) {
        return fail(rc,
                    "cannot open the endpoint framework (%s): check HERD_MCA_endpoint and the "
                    "endpoint_* variables (herd-info --param endpoint all lists them)",
                    opal_strerror(rc));
    }
    rc = opal_jobdb_attach(dbname, &herd.db);
    if (HERD_SUCCESS != rc) {
        rc = fail(rc, "cannot map the job database %s: %s", dbname, opal_strerror(rc));
        goto err_endpoint;
    }
    if (HERD_SUCCESS != (rc = opal_jobdb_get_proc(herd.db, rank, &herd.me))) {
        rc = fail(rc, "the job database has no record of rank %u", rank);
        goto err_db;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(uri + 5) >= sizeof(addr.sun_path)) {
        rc = fail(HERD_ERR_BAD_PARAM, "the session daemon's socket path is too long: %s", uri);
        goto err_db;
    }
    strcpy(addr.sun_path, uri + 5);
    herd.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (herd.fd < 0 || 0 != connect(herd.fd, (struct sockaddr *) &addr, sizeof(addr))) {
        rc = fail(HERD_ERR_UNREACH, "cannot reach the session daemon at %s: %s", addr.sun_path,
                  strerror(errno));
        goto err_socket;
    }
    herd.rank = rank;
    herd.size = opal_jobdb_num_procs(herd.db);
    herd.local_size = 0;
    /* procs are created on first lookup: a job's size costs a pointer per 256 ranks */
    if (HERD_SUCCESS != (rc = ompi_proc_init(herd.size))) {
        rc = fail(rc, "cannot start the proc table for a job of %u processes", herd.size);
        goto err_socket;
    }
    /* the daemon knows us by namespace, rank, pid and the job's token */
    herd.initialized = true;
    opal_native_hello_t hello = {.nspace = (char *) nspace,
                                 .rank = rank,
                                 .pid = (int32_t) getpid(),
                                 .token = (char *) (NULL != token ? token : "")};
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    rc = opal_native_pack_hello(&payload, &hello);
    if (HERD_SUCCESS == rc) {
        rc = call(OPAL_NATIVE_HELLO, &payload, NULL);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS != rc) {
        herd.initialized = false;
        goto err_procs;
    }
    const char *ls = getenv("HERD_LOCAL_SIZE");
    herd.local_size = (NULL != ls) ? (uint32_t) strtoul(ls, NULL, 10) : 1;
    herd.error[0] = '\0';
    return HERD_SUCCESS;

err_procs:
    ompi_proc_finalize();
err_socket:
    if (herd.fd >= 0) {
        close(herd.fd);
    }
    herd.fd = -1;
err_db:
    opal_jobdb_detach(herd.db);
    herd.db = NULL;
err_endpoint:
    ompi_endpoint_base_close();
    return rc;
}

static void release_puts(void)
{
    for (uint32_t i = 0; i < herd.num_puts; ++i) {
        free(herd.puts[i].key);
        free(herd.puts[i].value);
    }
    herd.num_puts = 0;
}

int herd_finalize(void)
{
    if (!herd.initialized) {
        return HERD_SUCCESS;
    }
    if (NULL != herd.fence) {
        herd_wait(&herd.fence);
    }
    /* while still in the job: the transports push out what they queued, then drop their peers */
    ompi_btl_base_close();
    int rc = call(OPAL_NATIVE_FINALIZE, NULL, NULL);
    herd.initialized = false;
    close(herd.fd);
    herd.fd = -1;
    opal_jobdb_detach(herd.db);
    herd.db = NULL;
    /* procs first: the endpoint framework frees what it keeps for each */
    ompi_proc_finalize();
    ompi_endpoint_base_close();
    release_puts();
    free(herd.puts);
    herd.puts = NULL;
    herd.cap_puts = 0;
    free(herd.in);
    herd.in = NULL;
    herd.in_len = herd.in_cap = 0;
    return rc;
}

int herd_initialized(void)
{
    return herd.initialized ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the job, in place */

uint32_t herd_rank(void)
{
    return herd.initialized ? herd.rank : 0;
}

uint32_t herd_size(void)
{
    return herd.initialized ? herd.size : 0;
}

uint32_t herd_local_rank(void)
{
    return herd.initialized ? herd.me.local_rank : 0;
}

uint32_t herd_local_size(void)
{
    return herd.initialized ? herd.local_size : 0;
}

uint32_t herd_node_rank(void)
{
    return herd.initialized ? herd.me.node_rank : 0;
}

uint32_t herd_appnum(void)
{
    return herd.initialized ? herd.me.app : 0;
}

uint32_t herd_num_nodes(void)
{
    return herd.initialized ? opal_jobdb_num_nodes(herd.db) : 0;
}

uint32_t herd_node(void)
{
    return herd.initialized ? herd.me.node : 0;
}

const char *herd_jobid(void)
{
    return herd.initialized ? opal_jobdb_jobid(herd.db) : "";
}

static int peer_view(uint32_t peer, opal_jobdb_proc_view_t *view)
{
    if (!herd.initialized) {
        return fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (peer >= herd.size) {
        return fail(HERD_ERR_BAD_PARAM, "rank %u is not in the job (size %u)", peer, herd.size);
    }
    int rc = opal_jobdb_get_proc(herd.db, peer, view);
    return HERD_SUCCESS == rc ? rc : fail(rc, "the job database has no record of rank %u", peer);
}

int herd_peer_node(uint32_t peer, uint32_t *node)
{
    opal_jobdb_proc_view_t view;
    int rc = peer_view(peer, &view);
    if (HERD_SUCCESS == rc) {
        *node = view.node;
    }
    return rc;
}

const char *herd_node_name(uint32_t node)
{
    return herd.initialized ? opal_jobdb_node_name(herd.db, node) : NULL;
}

/* The fabric table's index of fabric: its own name, else "ofi:" + name (a provider). */
static int fabric_index(const char *fabric, uint32_t *index)
{
    char prefixed[OPAL_JOBDB_FABRIC_NAME_MAX + 8];
    if (NULL == fabric || '\0' == fabric[0]) {
        return fail(HERD_ERR_BAD_PARAM, "no fabric named (\"tcp\", \"ofi:tcp;ofi_rxm\", ...)");
    }
    if (HERD_SUCCESS == opal_jobdb_find_fabric(herd.db, fabric, index)) {
        return HERD_SUCCESS;
    }
    snprintf(prefixed, sizeof(prefixed), "ofi:%s", fabric);
    if (0 != strncmp(fabric, "ofi:", 4) &&
        HERD_SUCCESS == opal_jobdb_find_fabric(herd.db, prefixed, index)) {
        return HERD_SUCCESS;
    }
    return fail(HERD_ERR_NOT_FOUND,
                "no endpoint is assigned on fabric %s in this job (no node of the job reports it, "
                "or it is not one whose endpoints can be assigned): use herd_put/herd_get",
                fabric);
}

int herd_peer_endpoint_at(uint32_t peer, const char *fabric, uint32_t index, void *addr,
                          size_t *len)
{
    opal_jobdb_proc_view_t view;
    uint32_t f;
    if (NULL == addr || NULL == len) {
        return fail(HERD_ERR_BAD_PARAM, "herd_peer_endpoint needs an address and its length");
    }
    int rc = peer_view(peer, &view);
    if (HERD_SUCCESS != rc || HERD_SUCCESS != (rc = fabric_index(fabric, &f))) {
        return rc;
    }
    size_t room = *len;
    rc = opal_jobdb_get_endpoint(herd.db, peer, f, index, addr, &room);
    if (HERD_SUCCESS == rc) {
        *len = room;
        return rc;
    }
    opal_jobdb_fabric_view_t fview;
    if (HERD_ERR_NOT_FOUND == rc && HERD_SUCCESS == opal_jobdb_get_fabric(herd.db, f, &fview) &&
        !fview.assigned) {
        return fail(rc, "fabric %s uses the modex in this job: %s", fview.name, fview.reason);
    }
    if (HERD_ERR_NOT_FOUND == rc) {
        return fail(rc, "the node of rank %u has no address %u on fabric %s", peer, index, fabric);
    }
    if (HERD_ERR_BAD_PARAM == rc) {
        return fail(rc, "%zu bytes are too few for an endpoint: pass a struct sockaddr_storage",
                    *len);
    }
    return fail(rc, "the job database's endpoint of rank %u on %s cannot be read", peer, fabric);
}

int herd_peer_endpoint(uint32_t peer, const char *fabric, void *addr, size_t *len)
{
    return herd_peer_endpoint_at(peer, fabric, 0, addr, len);
}

/* The range of indexes a locality string gives a level ("co2" or "co2-5"); false without it. */
static bool level_range(const char *loc, const char *prefix, unsigned long *lo, unsigned long *hi)
{
    size_t plen = strlen(prefix);
    for (const char *p = loc; NULL != p && '\0' != *p;) {
        if (0 == strncmp(p, prefix, plen) && p[plen] >= '0' && p[plen] <= '9') {
            char *end;
            *lo = strtoul(p + plen, &end, 10);
            *hi = ('-' == *end) ? strtoul(end + 1, &end, 10) : *lo;
            return true;
        }
        p = strchr(p, ':');
        p = (NULL != p) ? p + 1 : NULL;
    }
    return false;
}

int herd_peer_locality(uint32_t peer, unsigned *flags)
{
    opal_jobdb_proc_view_t view;
    int rc = peer_view(peer, &view);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    static const struct {
        const char *prefix;
        unsigned flag;
    } levels[] = {{"pk", HERD_LOCALITY_PACKAGE},
                  {"l3c", HERD_LOCALITY_L3CACHE},
                  {"co", HERD_LOCALITY_CORE},
                  {"pu", HERD_LOCALITY_HWTHREAD}};
    unsigned f = 0;
    if (view.node == herd.me.node) {
        f |= HERD_LOCALITY_NODE;
        for (size_t i = 0; view.bound && herd.me.bound && i < sizeof(levels) / sizeof(levels[0]);
             ++i) {
            unsigned long a_lo, a_hi, b_lo, b_hi;
            if (level_range(herd.me.locality, levels[i].prefix, &a_lo, &a_hi) &&
                level_range(view.locality, levels[i].prefix, &b_lo, &b_hi) && a_lo <= b_hi &&
                b_lo <= a_hi) {
                f |= levels[i].flag;
            }
        }
    }
    *flags = f;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* data */

int herd_put(const char *key, const void *value, size_t len)
{
    if (!herd.initialized) {
        return fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (NULL == key || '\0' == *key || strlen(key) > OPAL_NATIVE_MAX_KEY ||
        len > OPAL_NATIVE_MAX_VALUE || (len > 0 && NULL == value)) {
        return fail(HERD_ERR_BAD_PARAM,
                    "herd_put: a key is 1 to %u bytes and a value at most %u bytes",
                    OPAL_NATIVE_MAX_KEY, OPAL_NATIVE_MAX_VALUE);
    }
    for (uint32_t i = 0; i < herd.num_puts; ++i) {
        if (0 == strcmp(herd.puts[i].key, key)) {
            void *copy = malloc(len > 0 ? len : 1);
            if (NULL == copy) {
                return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: out of memory");
            }
            memcpy(copy, value, len);
            free(herd.puts[i].value);
            herd.puts[i].value = copy;
            herd.puts[i].len = len;
            return HERD_SUCCESS;
        }
    }
    if (herd.num_puts >= OPAL_NATIVE_MAX_PUTS) {
        return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: more than %u keys before a commit",
                    OPAL_NATIVE_MAX_PUTS);
    }
    if (herd.num_puts == herd.cap_puts) {
        uint32_t cap = herd.cap_puts ? 2 * herd.cap_puts : 8;
        opal_native_put_t *grown = realloc(herd.puts, cap * sizeof(*grown));
        if (NULL == grown) {
            return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: out of memory");
        }
        herd.puts = grown;
        herd.cap_puts = cap;
    }
    opal_native_put_t *p = &herd.puts[herd.num_puts];
    p->key = strdup(key);
    p->value = malloc(len > 0 ? len : 1);
    if (NULL == p->key || NULL == p->value) {
        free(p->key);
        free(p->value);
        return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: out of memory");
    }
    memcpy(p->value, value, len);
    p->len = len;
    herd.num_puts++;
    return HERD_SUCCESS;
}

int herd_commit(void)
{
    if (!herd.initialized) {
        return fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    opal_native_commit_t commit = {.puts = herd.puts, .num_puts = herd.num_puts};
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    int rc = opal_native_pack_commit(&payload, &commit);
    if (HERD_SUCCESS == rc) {
        rc = call(OPAL_NATIVE_COMMIT, &payload, NULL);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS == rc) {
        release_puts();
    }
    return rc;
}

int herd_fence_nb(int collect_data, herd_request_t *request)
{
    if (!herd.initialized) {
        return fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (NULL != herd.fence) {
        return fail(HERD_ERR_EXISTS, "a fence is already in flight: wait for it first");
    }
    if (NULL == request) {
        return fail(HERD_ERR_BAD_PARAM, "herd_fence_nb: no request to fill");
    }
    struct herd_request *req = calloc(1, sizeof(*req));
    if (NULL == req) {
        return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_fence_nb: out of memory");
    }
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    int rc = opal_native_pack_fence(&payload, 0 != collect_data);
    if (HERD_SUCCESS == rc) {
        rc = send_request(OPAL_NATIVE_FENCE, &payload, &req->id);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS != rc) {
        free(req);
        return rc;
    }
    herd.fence = req;
    *request = req;
    return HERD_SUCCESS;
}

/* Take every reply there is now (or, blocking, at least one) for the fence in flight. */
static int progress(bool block)
{
    for (;;) {
        uint32_t id;
        opal_native_reply_t r;
        int rc = next_reply(&id, &r);
        if (HERD_SUCCESS == rc) {
            take_fence(id, &r);
            opal_native_reply_free(&r);
            if (block && NULL == herd.fence) {
                return HERD_SUCCESS;
            }
            continue;
        }
        if (HERD_ERR_TIMEOUT != rc) {
            return rc;
        }
        rc = read_some(block);
        if (HERD_ERR_TIMEOUT == rc) {
            return HERD_SUCCESS; /* nothing more now */
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
}

/* A receive that completed: its results to the caller's variables, and its status explained. */
static int finish_recv(struct herd_request *req)
{
    const ompi_btl_recv_t *r = &req->recv;
    if (NULL != req->len_out) {
        *req->len_out = r->len;
    }
    if (NULL != req->src_out) {
        *req->src_out = r->src;
    }
    if (NULL != req->tag_out) {
        *req->tag_out = r->tag;
    }
    if (HERD_ERR_TRUNCATE == r->status) {
        return fail(r->status,
                    "the message from rank %u with tag %d is %zu bytes, more than the %zu-byte "
                    "receive buffer: only the first %zu bytes were received (post a buffer of "
                    "at least %zu bytes)",
                    r->src, r->tag, r->len, r->cap, r->cap, r->len);
    }
    return r->status;
}

/* One round of progress for req, without blocking. */
static void request_progress(struct herd_request *req)
{
    if (HERD_REQUEST_FENCE == req->kind) {
        int rc = herd.initialized ? progress(false) : HERD_ERR_NOT_AVAILABLE;
        if (HERD_SUCCESS != rc) {
            req->done = true;
            req->status = rc;
            herd.fence = NULL;
        }
        return;
    }
    if (HERD_REQUEST_RECV == req->kind && !req->recv.done) {
        /* yields after a while of finding nothing (btl_base_yield_polls) */
        int rc =
            ompi_btl_base_is_open() ? ompi_btl_base_progress_waiting() : HERD_ERR_NOT_AVAILABLE;
        if (rc < 0) {
            ompi_btl_base_cancel_recv(&req->recv);
            req->recv.done = true;
            req->recv.status = rc;
            fail(rc, "waiting for a message from %s: %s",
                 OMPI_BTL_ANY_SOURCE == req->recv.want_src ? "any rank" : "the rank",
                 '\0' != herd.error[0] ? herd.error : opal_strerror(rc));
        }
    }
    if (HERD_REQUEST_FENCE != req->kind && (HERD_REQUEST_SEND == req->kind || req->recv.done)) {
        req->done = true;
        req->status = HERD_REQUEST_RECV == req->kind ? finish_recv(req) : req->status;
    }
}

int herd_test(herd_request_t *request, int *done)
{
    if (NULL == request || NULL == *request || NULL == done) {
        return fail(HERD_ERR_BAD_PARAM, "herd_test: no request");
    }
    struct herd_request *req = *request;
    if (!req->done) {
        request_progress(req);
    }
    *done = req->done ? 1 : 0;
    if (!req->done) {
        return HERD_SUCCESS;
    }
    int status = req->status;
    free(req);
    *request = NULL;
    return status;
}

/* Complete req (not freed). */
static int wait_request(struct herd_request *req)
{
    while (!req->done) {
        if (HERD_REQUEST_FENCE == req->kind) {
            int rc = herd.initialized ? progress(true) : HERD_ERR_NOT_AVAILABLE;
            if (HERD_SUCCESS != rc) {
                req->done = true;
                req->status = rc;
                herd.fence = NULL;
            }
        } else {
            request_progress(req);
        }
    }
    return req->status;
}

int herd_wait(herd_request_t *request)
{
    if (NULL == request || NULL == *request) {
        return fail(HERD_ERR_BAD_PARAM, "herd_wait: no request");
    }
    int status = wait_request(*request);
    free(*request);
    *request = NULL;
    return status;
}

int herd_fence(int collect_data)
{
    herd_request_t req;
    int rc = herd_fence_nb(collect_data, &req);
    return HERD_SUCCESS == rc ? herd_wait(&req) : rc;
}

int herd_barrier(void)
{
    return herd_fence(0);
}

int herd_get(uint32_t peer, const char *key, void **value, size_t *len)
{
    opal_jobdb_proc_view_t view;
    int rc = peer_view(peer, &view);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL == key || '\0' == *key || strlen(key) > OPAL_NATIVE_MAX_KEY || NULL == value ||
        NULL == len) {
        return fail(HERD_ERR_BAD_PARAM, "herd_get: a key is 1 to %u bytes", OPAL_NATIVE_MAX_KEY);
    }
    opal_native_get_t get = {.peer = peer, .key = (char *) key};
    opal_native_reply_t r = {0};
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    rc = opal_native_pack_get(&payload, &get);
    if (HERD_SUCCESS == rc) {
        rc = call(OPAL_NATIVE_GET, &payload, &r);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* a value is at least one byte of storage, so *value is never NULL on success */
    *value = (NULL != r.value) ? r.value : malloc(1);
    *len = r.len;
    r.value = NULL;
    opal_native_reply_free(&r);
    return NULL != *value ? HERD_SUCCESS
                          : fail(HERD_ERR_OUT_OF_RESOURCE, "herd_get: out of memory");
}

/* ------------------------------------------------------------------------------------------ */
/* messages (the btl framework, docs/btl.md) */

static const char *node_name_of_me(void)
{
    const char *name = herd_node_name(herd.me.node);
    return NULL != name ? name : "node";
}

/* The transports start at the first messaging call, not at herd_init: a program that never
 * sends binds no socket and maps no segment. */
static int btl_ready(void)
{
    if (!herd.initialized) {
        return fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (ompi_btl_base_is_open()) {
        return HERD_SUCCESS;
    }
    ompi_btl_rte_t rte = {
        .my_rank = herd.rank,
        .job_size = herd.size,
        .my_node = herd.me.node,
        .local_size = herd.local_size,
        .jobid = herd_jobid(),
        .node_name = node_name_of_me(),
        .peer_node = herd_peer_node,
        .peer_endpoint = herd_peer_endpoint,
        .put = herd_put,
        .commit = herd_commit,
        .get = herd_get,
        .last_error = herd_last_error,
    };
    int rc = ompi_btl_base_open(&rte);
    if (HERD_SUCCESS != rc) {
        return fail(rc,
                    "rank %u cannot start any message transport (%s): check HERD_MCA_btl and "
                    "the btl_* variables (herd-info --param btl all lists them)",
                    herd.rank, opal_strerror(rc));
    }
    return HERD_SUCCESS;
}

static int send_checked(uint32_t peer, int tag, const void *buf, size_t len)
{
    int rc = btl_ready();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (peer >= herd.size || tag < 0 || (len > 0 && NULL == buf)) {
        return fail(HERD_ERR_BAD_PARAM,
                    "herd_send: rank %u is not in the job (size %u), or tag %d is negative, or "
                    "the buffer is NULL",
                    peer, herd.size, tag);
    }
    herd.error[0] = '\0';
    rc = ompi_btl_base_send(peer, tag, buf, len);
    if (HERD_ERR_UNREACH == rc && '\0' == herd.error[0]) {
        return fail(rc,
                    "rank %u cannot reach rank %u with any of its transports: allow one that "
                    "can (HERD_MCA_btl, e.g. self,sm,tcp), and see why with "
                    "HERD_MCA_btl_base_verbose=10",
                    herd.rank, peer);
    }
    if (HERD_SUCCESS != rc && '\0' == herd.error[0]) {
        return fail(rc,
                    "rank %u cannot send to rank %u: %s (HERD_MCA_btl_base_verbose=10 says "
                    "more)",
                    herd.rank, peer, opal_strerror(rc));
    }
    return rc;
}

int herd_send(uint32_t peer, int tag, const void *buf, size_t len)
{
    return send_checked(peer, tag, buf, len);
}

int herd_isend(uint32_t peer, int tag, const void *buf, size_t len, herd_request_t *request)
{
    if (NULL == request) {
        return fail(HERD_ERR_BAD_PARAM, "herd_isend: no request to fill");
    }
    struct herd_request *req = calloc(1, sizeof(*req));
    if (NULL == req) {
        return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_isend: out of memory");
    }
    /* the transports copy what they cannot send at once, so the send is complete here */
    int rc = send_checked(peer, tag, buf, len);
    if (HERD_SUCCESS != rc) {
        free(req);
        return rc;
    }
    req->kind = HERD_REQUEST_SEND;
    req->done = true;
    req->status = HERD_SUCCESS;
    *request = req;
    return HERD_SUCCESS;
}

/* Check a receive's arguments and post it in req. */
static int post_recv(uint32_t src, int tag, void *buf, size_t cap, size_t *len, uint32_t *src_out,
                     int *tag_out, struct herd_request *req)
{
    int rc = btl_ready();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if ((HERD_ANY_SOURCE != src && src >= herd.size) || (tag < 0 && HERD_ANY_TAG != tag) ||
        (cap > 0 && NULL == buf)) {
        return fail(HERD_ERR_BAD_PARAM,
                    "herd_recv: rank %u is not in the job (size %u, or HERD_ANY_SOURCE), or tag "
                    "%d is negative (or HERD_ANY_TAG), or the buffer is NULL",
                    src, herd.size, tag);
    }
    memset(req, 0, sizeof(*req));
    req->kind = HERD_REQUEST_RECV;
    req->recv.want_src = src;
    req->recv.want_tag = tag;
    req->recv.buf = buf;
    req->recv.cap = cap;
    req->len_out = len;
    req->src_out = src_out;
    req->tag_out = tag_out;
    rc = ompi_btl_base_post_recv(&req->recv);
    if (HERD_SUCCESS != rc) {
        return fail(rc, "herd_recv: cannot post the receive (%s)", opal_strerror(rc));
    }
    if (req->recv.done) {
        /* matched a message that was waiting */
        req->done = true;
        req->status = finish_recv(req);
    }
    return HERD_SUCCESS;
}

int herd_irecv(uint32_t src, int tag, void *buf, size_t cap, size_t *len, uint32_t *src_out,
               int *tag_out, herd_request_t *request)
{
    if (NULL == request) {
        return fail(HERD_ERR_BAD_PARAM, "herd_irecv: no request to fill");
    }
    struct herd_request *req = malloc(sizeof(*req));
    if (NULL == req) {
        return fail(HERD_ERR_OUT_OF_RESOURCE, "herd_irecv: out of memory");
    }
    int rc = post_recv(src, tag, buf, cap, len, src_out, tag_out, req);
    if (HERD_SUCCESS != rc) {
        free(req);
        return rc;
    }
    *request = req;
    return HERD_SUCCESS;
}

int herd_recv(uint32_t src, int tag, void *buf, size_t cap, size_t *len, uint32_t *src_out,
              int *tag_out)
{
    /* on the stack: a blocking receive allocates nothing */
    struct herd_request req;
    int rc = post_recv(src, tag, buf, cap, len, src_out, tag_out, &req);
    return HERD_SUCCESS == rc ? wait_request(&req) : rc;
}

int herd_progress(void)
{
    int rc = btl_ready();
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = ompi_btl_base_progress();
    return rc >= 0 ? rc : fail(rc, "message progress failed: %s", opal_strerror(rc));
}

const char *herd_peer_transport(uint32_t peer)
{
    const ompi_btl_module_t *module = herd.initialized ? ompi_btl_base_peer_module(peer) : NULL;
    return NULL != module ? module->name : NULL;
}

void herd_abort(int status, const char *message)
{
    if (herd.initialized) {
        opal_native_abort_t a = {.status = status, .message = (char *) message};
        opal_buffer_t payload;
        opal_buffer_init(&payload);
        if (HERD_SUCCESS == opal_native_pack_abort(&payload, &a)) {
            call(OPAL_NATIVE_ABORT, &payload, NULL);
        }
        opal_buffer_destruct(&payload);
    } else if (NULL != message) {
        fprintf(stderr, "herd_abort(%d): %s\n", status, message);
    }
    _exit(0 != status ? status : 1);
}
