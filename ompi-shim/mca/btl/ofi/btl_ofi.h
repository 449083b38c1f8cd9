/* SPDX-License-Identifier: BSD-3-Clause */
/* btl ofi: what its two halves share (docs/btl.md, "ofi"). The front in libherd fills
 * btl_ofi_params_t from its variables and hands it to the transport DSO (services->params);
 * the wire format below is the DSO's, declared here so the unit tests can feed its decoders.
 *
 * Every frame is one libfabric message (fi_send into a receive buffer the peer posted), starting
 * with a 24-byte header, little-endian:
 *   u8 magic 'O', u8 version, u8 type, u8 flags (0), u32 src rank, i32 tag, u32 dst rank,
 *   u64 length
 * MSG: the first (or only) fragment of a message: length is the whole message's, the frame
 * carries its first bytes. FRAG: the following fragments of the message in progress from src,
 * with the same tag and length (the endpoint keeps per-source send order, FI_ORDER_SAS).
 * HELLO and ACK (only towards an RM-assigned endpoint, which may not be the peer's): length is
 * the payload's, dst the rank the hello was meant for; the payload is u16 job id length, the job
 * id, and for a HELLO u16 address length and the sender's own libfabric address. */
#ifndef OMPI_BTL_OFI_H
#define OMPI_BTL_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The layout of btl_ofi_params_t: the DSO refuses a front whose params it does not know. */
#define BTL_OFI_PARAMS_VERSION 2u

typedef struct btl_ofi_params {
    uint32_t version;      /* BTL_OFI_PARAMS_VERSION */
    int priority;          /* btl_ofi_priority */
    const char *providers; /* btl_ofi_provider: "tcp;ofi_rxm,sockets", tried in order */
    size_t frag_size;      /* btl_ofi_frag_size: payload bytes per frame */
    int recv_buffers;      /* btl_ofi_recv_buffers: receive buffers kept posted */
    int timeout;           /* btl_ofi_timeout: seconds a peer may leave our frames unanswered */
    bool use_rm;           /* btl_ofi_use_rm_endpoint */
    size_t max_message;    /* btl_ofi_max_message: longest message accepted from a peer */
    int close_linger_ms;   /* btl_ofi_close_linger_ms: a datagram provider's last progress */
} btl_ofi_params_t;

#define BTL_OFI_MAGIC       0x4fu /* 'O' */
#define BTL_OFI_VERSION     1u
#define BTL_OFI_HEADER_SIZE 24u
#define BTL_OFI_JOBID_MAX   63u
#define BTL_OFI_ADDR_MAX    128u
/* HELLO: u16 job id length, the job id, u16 address length, the address; ACK: the first two */
#define BTL_OFI_HELLO_MAX (2u + BTL_OFI_JOBID_MAX + 2u + BTL_OFI_ADDR_MAX)
#define BTL_OFI_MODEX_KEY "btl.ofi.addr"

enum btl_ofi_type { BTL_OFI_HELLO = 1, BTL_OFI_ACK = 2, BTL_OFI_MSG = 3, BTL_OFI_FRAG = 4 };

typedef struct btl_ofi_header {
    uint8_t type;
    uint32_t src;
    int32_t tag;
    uint32_t dst;
    uint64_t length;
} btl_ofi_header_t;

/* Write h into out[BTL_OFI_HEADER_SIZE]. */
void btl_ofi_encode_header(const btl_ofi_header_t *h, uint8_t *out);
/* Decode the frame of len bytes at buf (a whole received message): HERD_SUCCESS, or
 * HERD_ERR_VERSION_MISMATCH for another version, HERD_ERR_UNPACK_FAILURE for anything else
 * malformed: shorter than a header, magic, type, flags, a src of no rank of the job, a negative
 * tag, a MSG longer than max_message or shorter than its own frame, a FRAG with no bytes, a
 * HELLO/ACK whose length is not its payload's. */
int btl_ofi_decode_header(const uint8_t *buf, size_t len, uint32_t job_size, uint64_t max_message,
                          btl_ofi_header_t *h);

/* A HELLO (addr != NULL) or ACK (addr NULL) payload into out (BTL_OFI_HELLO_MAX bytes): its
 * length, or 0 when jobid is empty or too long, or the address too long. */
size_t btl_ofi_encode_hello(const char *jobid, const void *addr, size_t addr_len, uint8_t *out);
/* Decode a HELLO (want_addr) or ACK payload: HERD_SUCCESS with *same_job telling whether its job
 * id is jobid, and for a HELLO *addr / *addr_len pointing into payload; HERD_ERR_UNPACK_FAILURE
 * when malformed. */
int btl_ofi_decode_hello(const uint8_t *payload, size_t len, const char *jobid, bool want_addr,
                         bool *same_job, const uint8_t **addr, size_t *addr_len);

/* The modex value: u8 provider name length, the provider name, the address. */
size_t btl_ofi_encode_modex(const char *provider, const void *addr, size_t addr_len, uint8_t *out,
                            size_t room);
/* HERD_SUCCESS with the provider name (NUL-terminated into name, name_room bytes) and the
 * address inside value; HERD_ERR_UNPACK_FAILURE when malformed. */
int btl_ofi_decode_modex(const uint8_t *value, size_t len, char *name, size_t name_room,
                         const uint8_t **addr, size_t *addr_len);

#endif /* OMPI_BTL_OFI_H */
