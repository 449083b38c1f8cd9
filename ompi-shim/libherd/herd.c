/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd (<herd.h>): start and end, errors, and the job read in place from its database;
 * herd_init also starts the proc table and the endpoint framework its transports will use. The
 * rest is beside this file (herd_internal.h says which file does what). */
#include "herd_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "herd_internal.h"
#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/proc/proc.h"
#include "opal/status.h"

libherd_state_t libherd = {.fd = -1};

int libherd_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(libherd.error, sizeof(libherd.error), fmt, ap);
    va_end(ap);
    return status;
}

const char *herd_strerror(int status)
{
    return opal_strerror(status);
}

const char *herd_last_error(void)
{
    return libherd.error;
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
    if (libherd.initialized) {
        return HERD_SUCCESS;
    }
    const char *uri = getenv("HERD_WIREUP_URI"), *dbname = getenv("HERD_JOBDB");
    const char *nspace = getenv("HERD_NSPACE"), *token = getenv("HERD_WIREUP_TOKEN");
    bool ok = true;
    uint32_t rank = env_u32("HERD_RANK", &ok);
    if (NULL == uri || NULL == dbname || NULL == nspace || !ok || 0 != strncmp(uri, "unix:", 5)) {
        return libherd_fail(
            HERD_ERR_NOT_AVAILABLE,
            "this program was not started by herdrun with the native wireup "
            "(HERD_WIREUP_URI, HERD_JOBDB, HERD_NSPACE or HERD_RANK is missing): run it "
            "with herdrun, and do not exclude the native wireup (HERD_MCA_wireup)");
    }
    /* the endpoint slots of procs (docs/endpoint.md); its messages name the variables to fix */
    int rc = ompi_endpoint_base_open();
    if (HERD_SUCCESS != rc) {
        return libherd_fail(
            rc,
            "cannot open the endpoint framework (%s): check HERD_MCA_endpoint and the "
            "endpoint_* variables (herd-info --param endpoint all lists them)",
            opal_strerror(rc));
    }
    rc = opal_jobdb_attach(dbname, &libherd.db);
    if (HERD_SUCCESS != rc) {
        rc = libherd_fail(rc, "cannot map the job database %s: %s", dbname, opal_strerror(rc));
        goto err_endpoint;
    }
    if (HERD_SUCCESS != (rc = opal_jobdb_get_proc(libherd.db, rank, &libherd.me))) {
        rc = libherd_fail(rc, "the job database has no record of rank %u", rank);
        goto err_db;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(uri + 5) >= sizeof(addr.sun_path)) {
        rc = libherd_fail(HERD_ERR_BAD_PARAM, "the session daemon's socket path is too long: %s",
                          uri);
        goto err_db;
    }
    strcpy(addr.sun_path, uri + 5);
    libherd.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (libherd.fd < 0 || 0 != connect(libherd.fd, (struct sockaddr *) &addr, sizeof(addr))) {
        rc = libherd_fail(HERD_ERR_UNREACH, "cannot reach the session daemon at %s: %s",
                          addr.sun_path, strerror(errno));
        goto err_socket;
    }
    libherd.rank = rank;
    libherd.size = opal_jobdb_num_procs(libherd.db);
    libherd.local_size = 0;
    /* procs are created on first lookup: a job's size costs a pointer per 256 ranks */
    if (HERD_SUCCESS != (rc = ompi_proc_init(libherd.size))) {
        rc =
            libherd_fail(rc, "cannot start the proc table for a job of %u processes", libherd.size);
        goto err_socket;
    }
    /* the daemon knows us by namespace, rank, pid and the job's token */
    libherd.initialized = true;
    opal_native_hello_t hello = {.nspace = (char *) nspace,
                                 .rank = rank,
                                 .pid = (int32_t) getpid(),
                                 .token = (char *) (NULL != token ? token : "")};
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    rc = opal_native_pack_hello(&payload, &hello);
    if (HERD_SUCCESS == rc) {
        rc = libherd_call(OPAL_NATIVE_HELLO, &payload, NULL);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS != rc) {
        libherd.initialized = false;
        goto err_procs;
    }
    const char *ls = getenv("HERD_LOCAL_SIZE");
    libherd.local_size = (NULL != ls) ? (uint32_t) strtoul(ls, NULL, 10) : 1;
    libherd.error[0] = '\0';
    return HERD_SUCCESS;

err_procs:
    ompi_proc_finalize();
err_socket:
    if (libherd.fd >= 0) {
        close(libherd.fd);
    }
    libherd.fd = -1;
err_db:
    opal_jobdb_detach(libherd.db);
    libherd.db = NULL;
err_endpoint:
    ompi_endpoint_base_close();
    return rc;
}

int herd_finalize(void)
{
    if (!libherd.initialized) {
        return HERD_SUCCESS;
    }
    if (NULL != libherd.fence) {
        herd_wait(&libherd.fence);
    }
    /* while still in the job: the transports push out what they queued, then drop their peers */
    ompi_btl_base_close();
    int rc = libherd_call(OPAL_NATIVE_FINALIZE, NULL, NULL);
    libherd.initialized = false;
    close(libherd.fd);
    libherd.fd = -1;
    opal_jobdb_detach(libherd.db);
    libherd.db = NULL;
    /* procs first: the endpoint framework frees what it keeps for each */
    ompi_proc_finalize();
    ompi_endpoint_base_close();
    libherd_release_puts();
    free(libherd.puts);
    libherd.puts = NULL;
    libherd.cap_puts = 0;
    free(libherd.in);
    libherd.in = NULL;
    libherd.in_len = libherd.in_cap = 0;
    return rc;
}

int herd_initialized(void)
{
    return libherd.initialized ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the job, in place */

uint32_t herd_rank(void)
{
    return libherd.initialized ? libherd.rank : 0;
}

uint32_t herd_size(void)
{
    return libherd.initialized ? libherd.size : 0;
}

uint32_t herd_local_rank(void)
{
    return libherd.initialized ? libherd.me.local_rank : 0;
}

uint32_t herd_local_size(void)
{
    return libherd.initialized ? libherd.local_size : 0;
}

uint32_t herd_node_rank(void)
{
    return libherd.initialized ? libherd.me.node_rank : 0;
}

uint32_t herd_appnum(void)
{
    return libherd.initialized ? libherd.me.app : 0;
}

uint32_t herd_num_nodes(void)
{
    return libherd.initialized ? opal_jobdb_num_nodes(libherd.db) : 0;
}

uint32_t herd_node(void)
{
    return libherd.initialized ? libherd.me.node : 0;
}

const char *herd_jobid(void)
{
    return libherd.initialized ? opal_jobdb_jobid(libherd.db) : "";
}

int libherd_peer_view(uint32_t peer, opal_jobdb_proc_view_t *view)
{
    if (!libherd.initialized) {
        return libherd_fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (peer >= libherd.size) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "rank %u is not in the job (size %u)", peer,
                            libherd.size);
    }
    int rc = opal_jobdb_get_proc(libherd.db, peer, view);
    return HERD_SUCCESS == rc ? rc
                              : libherd_fail(rc, "the job database has no record of rank %u", peer);
}

int herd_peer_node(uint32_t peer, uint32_t *node)
{
    opal_jobdb_proc_view_t view;
    int rc = libherd_peer_view(peer, &view);
    if (HERD_SUCCESS == rc) {
        *node = view.node;
    }
    return rc;
}

const char *herd_node_name(uint32_t node)
{
    return libherd.initialized ? opal_jobdb_node_name(libherd.db, node) : NULL;
}

/* The fabric table's index of fabric: its own name, else "ofi:" + name (a provider). */
static int fabric_index(const char *fabric, uint32_t *index)
{
    char prefixed[OPAL_JOBDB_FABRIC_NAME_MAX + 8];
    if (NULL == fabric || '\0' == fabric[0]) {
        return libherd_fail(HERD_ERR_BAD_PARAM,
                            "no fabric named (\"tcp\", \"ofi:tcp;ofi_rxm\", ...)");
    }
    if (HERD_SUCCESS == opal_jobdb_find_fabric(libherd.db, fabric, index)) {
        return HERD_SUCCESS;
    }
    snprintf(prefixed, sizeof(prefixed), "ofi:%s", fabric);
    if (0 != strncmp(fabric, "ofi:", 4) &&
        HERD_SUCCESS == opal_jobdb_find_fabric(libherd.db, prefixed, index)) {
        return HERD_SUCCESS;
    }
    return libherd_fail(
        HERD_ERR_NOT_FOUND,
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
        return libherd_fail(HERD_ERR_BAD_PARAM,
                            "herd_peer_endpoint needs an address and its length");
    }
    int rc = libherd_peer_view(peer, &view);
    if (HERD_SUCCESS != rc || HERD_SUCCESS != (rc = fabric_index(fabric, &f))) {
        return rc;
    }
    size_t room = *len;
    rc = opal_jobdb_get_endpoint(libherd.db, peer, f, index, addr, &room);
    if (HERD_SUCCESS == rc) {
        *len = room;
        return rc;
    }
    opal_jobdb_fabric_view_t fview;
    if (HERD_ERR_NOT_FOUND == rc && HERD_SUCCESS == opal_jobdb_get_fabric(libherd.db, f, &fview) &&
        !fview.assigned) {
        return libherd_fail(rc, "fabric %s uses the modex in this job: %s", fview.name,
                            fview.reason);
    }
    if (HERD_ERR_NOT_FOUND == rc) {
        return libherd_fail(rc, "the node of rank %u has no address %u on fabric %s", peer, index,
                            fabric);
    }
    if (HERD_ERR_BAD_PARAM == rc) {
        return libherd_fail(
            rc, "%zu bytes are too few for an endpoint: pass a struct sockaddr_storage", *len);
    }
    return libherd_fail(rc, "the job database's endpoint of rank %u on %s cannot be read", peer,
                        fabric);
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
    int rc = libherd_peer_view(peer, &view);
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
    if (view.node == libherd.me.node) {
        f |= HERD_LOCALITY_NODE;
        for (size_t i = 0; view.bound && libherd.me.bound && i < sizeof(levels) / sizeof(levels[0]);
             ++i) {
            unsigned long a_lo, a_hi, b_lo, b_hi;
            if (level_range(libherd.me.locality, levels[i].prefix, &a_lo, &a_hi) &&
                level_range(view.locality, levels[i].prefix, &b_lo, &b_hi) && a_lo <= b_hi &&
                b_lo <= a_hi) {
                f |= levels[i].flag;
            }
        }
    }
    *flags = f;
    return HERD_SUCCESS;
}

void herd_abort(int status, const char *message)
{
    if (libherd.initialized) {
        opal_native_abort_t a = {.status = status, .message = (char *) message};
        opal_buffer_t payload;
        opal_buffer_init(&payload);
        if (HERD_SUCCESS == opal_native_pack_abort(&payload, &a)) {
            libherd_call(OPAL_NATIVE_ABORT, &payload, NULL);
        }
        opal_buffer_destruct(&payload);
    } else if (NULL != message) {
        fprintf(stderr, "herd_abort(%d): %s\n", status, message);
    }
    _exit(0 != status ? status : 1);
}
