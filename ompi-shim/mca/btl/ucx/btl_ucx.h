/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ucx: what the front (btl_ucx_component.c, in libherd) hands the transport DSO
 * (btl_ucx_transport.c, herd-btl-ucx.so) as services->params, and the header every message
 * carries. Both halves are built from this one header; the version field lets a DSO left over
 * from another build refuse a layout it does not know. */
#ifndef OMPI_BTL_UCX_H
#define OMPI_BTL_UCX_H

#include <stddef.h>
#include <stdint.h>

#define BTL_UCX_PARAMS_VERSION 1u

/* btl_ucx_error_handling: whether an endpoint asks UCX to report a peer that exits
 * (UCP_ERR_HANDLING_MODE_PEER). UCX 1.13's shared-memory transports cannot, so an endpoint that
 * asks never uses them: auto asks only for peers on other nodes. */
enum btl_ucx_error_handling {
    BTL_UCX_ERRORS_AUTO = 0,
    BTL_UCX_ERRORS_PEER = 1,
    BTL_UCX_ERRORS_NONE = 2,
};

typedef struct btl_ucx_params {
    uint32_t version;   /* BTL_UCX_PARAMS_VERSION */
    int priority;       /* btl_ucx_priority */
    char *tls;          /* btl_ucx_tls: UCX_TLS for this worker; NULL or "": UCX's own */
    size_t eager_limit; /* btl_ucx_eager_limit: longer messages are copied, then sent */
    int close_timeout;  /* btl_ucx_close_timeout: seconds finalize waits for its endpoints */
    int error_handling; /* btl_ucx_error_handling: enum btl_ucx_error_handling */
} btl_ucx_params_t;

/* Every message is one UCX active message with this header (host byte order: UCX itself
 * assumes peers of one endianness), 16 bytes:
 *   u8 magic 'U', u8 version, u16 flags (0), u32 source rank, i32 tag (>= 0), u32 sequence
 * The sequence numbers a sender's messages to one peer 0, 1, 2, ...: the receiver hands them up
 * in that order even when a long one (rendezvous) completes after shorter ones sent later. */
#define BTL_UCX_AM_ID       7u
#define BTL_UCX_MAGIC       0x55u /* 'U' */
#define BTL_UCX_VERSION     1u
#define BTL_UCX_HEADER_SIZE 16u
#define BTL_UCX_MODEX_KEY   "btl.ucx.addr"

#endif /* OMPI_BTL_UCX_H */
