/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd: what a program started by herdrun uses to find its peers.
 *
 *   cc app.c $(pkg-config --cflags --libs herd)
 *
 * Job information (rank, size, local and node ranks, app, every peer's node and locality) is
 * read in place from the node's shared-memory job database: O(1), nothing copied. Data a
 * process publishes (herd_put + herd_commit) goes to its session daemon; herd_fence exchanges
 * it among the job's nodes (all of it with collect_data, else nothing: a herd_get of a peer's
 * key then fetches it from the peer's node on first use, and the node keeps it for its other
 * processes). Every call returns HERD_SUCCESS or a negative HERD_ERR_* status, and
 * herd_last_error() says what happened in a sentence; nothing blocks forever: a key never put
 * fails after the job's wireup_base_get_timeout, a session daemon gone fails at once.
 * Not thread-safe: call it from one thread at a time. */
#ifndef HERD_H
#define HERD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HERD_API __attribute__((visibility("default")))
#else
#define HERD_API
#endif

#define HERD_VERSION_MAJOR 0
#define HERD_VERSION_MINOR 1

/* Status codes (the same values as herd's runtime uses internally). */
#ifndef HERD_STATUS_CODES_DEFINED
#define HERD_STATUS_CODES_DEFINED
typedef enum {
    HERD_SUCCESS = 0,
    HERD_ERROR = -1,                    /* generic failure */
    HERD_ERR_OUT_OF_RESOURCE = -2,      /* memory or another finite resource */
    HERD_ERR_BAD_PARAM = -3,            /* an argument is invalid (a peer out of range...) */
    HERD_ERR_NOT_FOUND = -4,            /* no such key (within the timeout) */
    HERD_ERR_NOT_AVAILABLE = -5,        /* not started by herdrun, or not initialized */
    HERD_ERR_TAKE_NEXT = -6,            /* (internal) */
    HERD_ERR_NOT_SUPPORTED = -7,        /* not supported here */
    HERD_ERR_VERSION_MISMATCH = -8,     /* the session daemon speaks another version */
    HERD_ERR_UNPACK_READ_PAST_END = -9, /* a malformed message */
    HERD_ERR_UNPACK_FAILURE = -10,      /* a malformed message */
    HERD_ERR_PACK_MISMATCH = -11,       /* (internal) */
    HERD_ERR_TIMEOUT = -12,             /* something did not happen in time */
    HERD_ERR_IN_ERRNO = -13,            /* a system call failed */
    HERD_ERR_EXISTS = -14,              /* already done (a second fence in flight...) */
    HERD_ERR_UNREACH = -15,             /* the session daemon (or a peer's) is gone */
    HERD_ERR_AUTH = -16,                /* the session daemon refused us */
    HERD_ERR_SILENT = -17,              /* (internal) */
    HERD_ERR_TRUNCATE = -18,            /* a message is larger than the receive buffer */
    HERD_ERR_MAX = -19
} herd_status_t;
#endif

/* Bits of herd_peer_locality(): what a peer shares with this process. */
#define HERD_LOCALITY_NODE     0x01u
#define HERD_LOCALITY_PACKAGE  0x02u
#define HERD_LOCALITY_L3CACHE  0x04u
#define HERD_LOCALITY_CORE     0x08u
#define HERD_LOCALITY_HWTHREAD 0x10u

/* Connect to this node's session daemon and map the job database. HERD_ERR_NOT_AVAILABLE when
 * the program was not started by herdrun (or the native wireup is off). Calling it again does
 * nothing. */
HERD_API int herd_init(void);
/* Tell the daemon this process is done (a process that exits without it after herd_init is a
 * failure of the job), close everything. */
HERD_API int herd_finalize(void);
/* 1 between herd_init and herd_finalize. */
HERD_API int herd_initialized(void);

/* This process, as the job database says (0 before herd_init). */
HERD_API uint32_t herd_rank(void);
HERD_API uint32_t herd_size(void);
HERD_API uint32_t herd_local_rank(void);
HERD_API uint32_t herd_local_size(void);
HERD_API uint32_t herd_node_rank(void);
HERD_API uint32_t herd_appnum(void);
HERD_API uint32_t herd_num_nodes(void);
/* This process's node index (see herd_node_name). */
HERD_API uint32_t herd_node(void);
/* The job's id ("<dvm>.<seq>"), or "" before herd_init. */
HERD_API const char *herd_jobid(void);

/* A peer's node index. HERD_ERR_BAD_PARAM for a peer out of range. */
HERD_API int herd_peer_node(uint32_t peer, uint32_t *node);
/* A node's name, or NULL for an index out of range. */
HERD_API const char *herd_node_name(uint32_t node);
/* What the peer shares with this process: HERD_LOCALITY_NODE, then the package, L3 cache, core
 * and hardware thread both are bound within (nothing beyond the node when either is unbound). */
HERD_API int herd_peer_locality(uint32_t peer, unsigned *flags);

/* A peer's RM-assigned endpoint ("instant on"): where the session daemons decided, before the
 * job started, that peer's transport for fabric listens, so no modex is needed to reach it.
 * fabric is "tcp" (herd's sockets), or a libfabric provider as "ofi:tcp;ofi_rxm" (a plain
 * provider name such as "tcp;ofi_rxm" or "udp;ofi_rxd" is looked up with the "ofi:" prefix when
 * no fabric has that name). addr gets a struct sockaddr_in or sockaddr_in6 with the port (use a
 * struct sockaddr_storage); *len holds its room on entry and the size written on return. A peer
 * may be the process itself: bind() its own endpoint, connect() to a peer's. Read in place from
 * the job database, O(1).
 * HERD_ERR_NOT_FOUND when the job has no assigned endpoint on that fabric (UCX, a fabric no node
 * reports, a port range too small for the job: herd_last_error() says why): the transport then
 * publishes its own address with herd_put and a peer finds it with herd_get. HERD_ERR_BAD_PARAM
 * for a peer out of range or too little room. */
HERD_API int herd_peer_endpoint(uint32_t peer, const char *fabric, void *addr, size_t *len);
/* The same at another address of the peer's node (index 0 is herd_peer_endpoint's; a node with
 * several interfaces has several): HERD_ERR_NOT_FOUND past the last. Same port on each. */
HERD_API int herd_peer_endpoint_at(uint32_t peer, const char *fabric, uint32_t index, void *addr,
                                   size_t *len);

/* Keep key=value (len bytes) to publish at the next herd_commit; a key put again replaces it.
 * Keys are 1..511 bytes, values at most 64 MiB. */
HERD_API int herd_put(const char *key, const void *value, size_t len);
/* Send what was put since the last commit to the session daemon: peers can get it from now. */
HERD_API int herd_commit(void);
/* A fence of every process of the job: with collect_data, every committed key of every
 * process is on every node afterwards; without, it is a barrier. */
HERD_API int herd_fence(int collect_data);

typedef struct herd_request *herd_request_t;
/* The same, returning at once: the daemons complete it in the background. One at a time.
 * herd_test and herd_wait complete fences and messages (herd_isend, herd_irecv) alike. */
HERD_API int herd_fence_nb(int collect_data, herd_request_t *request);
/* *done = 1 once the request completed; the request is then released (its status returned). */
HERD_API int herd_test(herd_request_t *request, int *done);
/* Wait for it, release it, and return its status. */
HERD_API int herd_wait(herd_request_t *request);
/* A barrier of every process of the job (a fence without data). */
HERD_API int herd_barrier(void);

/* peer's value of key: *value (malloc'd, free it) and *len. Waits for the peer to commit it, up
 * to the job's wireup_base_get_timeout; HERD_ERR_NOT_FOUND then. */
HERD_API int herd_get(uint32_t peer, const char *key, void **value, size_t *len);

/* Messages between the processes of the job. A peer is reached by the first transport (btl)
 * that can, highest priority first: self for the process itself, sm (shared memory) on the same
 * node, then tcp; HERD_MCA_btl chooses among them ("self,sm", "^tcp"). Nothing is set up for a
 * peer before the first message to or from it, and the transports start at the first messaging
 * call (docs/btl.md). Messages from one source with one tag are received in the order sent; a
 * message may be of any length. Tags are >= 0. */
#define HERD_ANY_SOURCE UINT32_MAX /* herd_recv/herd_irecv: from any process */
#define HERD_ANY_TAG    (-1)       /* herd_recv/herd_irecv: with any tag */
/* Send len bytes of buf to peer with tag; returns when buf may be reused (the message is sent
 * or copied). HERD_ERR_UNREACH when no transport reaches the peer (herd_last_error says why). */
HERD_API int herd_send(uint32_t peer, int tag, const void *buf, size_t len);
/* Receive the first message from src (or HERD_ANY_SOURCE) with tag (or HERD_ANY_TAG) into buf,
 * which holds cap bytes; *len, *src_out and *tag_out (each may be NULL) get its length, source
 * and tag. A message longer than cap fills buf and fails with HERD_ERR_TRUNCATE (*len is the
 * whole message's length). */
HERD_API int herd_recv(uint32_t src, int tag, void *buf, size_t cap, size_t *len,
                       uint32_t *src_out, int *tag_out);
/* The same without waiting: complete them with herd_test or herd_wait (which then set *len,
 * *src_out and *tag_out of a receive, and return its status). buf must stay valid until then. */
HERD_API int herd_isend(uint32_t peer, int tag, const void *buf, size_t len,
                        herd_request_t *request);
HERD_API int herd_irecv(uint32_t src, int tag, void *buf, size_t cap, size_t *len,
                        uint32_t *src_out, int *tag_out, herd_request_t *request);
/* Move messages on without waiting (herd_test does too): the number of events handled. */
HERD_API int herd_progress(void);
/* The transport carrying messages to peer ("self", "sm", "tcp"), or NULL before the first
 * message to it. */
HERD_API const char *herd_peer_transport(uint32_t peer);

/* Abort the whole job with status, message shown by herdrun; does not return. */
HERD_API void herd_abort(int status, const char *message) __attribute__((noreturn));

/* "not found", ... for a status. */
HERD_API const char *herd_strerror(int status);
/* The sentence explaining the last failure of a call, or "". */
HERD_API const char *herd_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* HERD_H */
