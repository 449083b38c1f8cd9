/* SPDX-License-Identifier: BSD-3-Clause */
/* btl tcp's wire format, shared by the component and its unit test: every frame starts with a
 * 16-byte header, little-endian,
 *   u8 magic 'H', u8 version, u8 type, u8 flags (0), i32 tag, u64 payload length
 * A connection's first frame is the connecting side's HELLO (its rank and the job id), answered
 * by the accepting side's ACK (the same fields); then MSG frames flow from the connecting side
 * only: each direction between two processes has its own connection (docs/btl.md). */
#ifndef OMPI_BTL_TCP_H
#define OMPI_BTL_TCP_H

#include <stddef.h>
#include <stdint.h>

#define BTL_TCP_MAGIC       0x48u /* 'H' */
#define BTL_TCP_VERSION     1u
#define BTL_TCP_HEADER_SIZE 16u
#define BTL_TCP_JOBID_MAX   63u
/* HELLO and ACK: u32 rank, u16 job id length, the job id (no NUL). */
#define BTL_TCP_HELLO_MIN (4u + 2u + 1u)
#define BTL_TCP_HELLO_MAX (4u + 2u + BTL_TCP_JOBID_MAX)
#define BTL_TCP_FRAME_MAX (BTL_TCP_HEADER_SIZE + BTL_TCP_HELLO_MAX)

enum btl_tcp_type { BTL_TCP_HELLO = 1, BTL_TCP_ACK = 2, BTL_TCP_MSG = 3 };

typedef struct btl_tcp_header {
    uint8_t type;
    int32_t tag;
    uint64_t length;
} btl_tcp_header_t;

/* Write a header into out[BTL_TCP_HEADER_SIZE]. */
void btl_tcp_encode_header(uint8_t type, int32_t tag, uint64_t length, uint8_t *out);
/* Decode the header at the start of buf (avail bytes): HERD_SUCCESS, or
 * HERD_ERR_UNPACK_READ_PAST_END when fewer than 16 bytes are there yet, HERD_ERR_VERSION_MISMATCH
 * for another version, HERD_ERR_UNPACK_FAILURE for anything else malformed (magic, type, flags,
 * a negative tag, a MSG longer than max_length, a HELLO/ACK of a length no hello has). */
int btl_tcp_decode_header(const uint8_t *buf, size_t avail, uint64_t max_length,
                          btl_tcp_header_t *h);

/* A HELLO or ACK payload for rank and jobid into out (BTL_TCP_HELLO_MAX bytes): its length, or
 * 0 when jobid is empty or too long. */
size_t btl_tcp_encode_hello(uint32_t rank, const char *jobid, uint8_t *out);
/* Check a HELLO or ACK payload: a rank of this job (< job_size) and this job's id. *rank set on
 * success. HERD_ERR_UNPACK_FAILURE for a malformed payload, HERD_ERR_BAD_PARAM for a rank out of
 * range, HERD_ERR_AUTH for another job's id. */
int btl_tcp_decode_hello(const uint8_t *payload, size_t len, uint32_t job_size, const char *jobid,
                         uint32_t *rank);

#endif /* OMPI_BTL_TCP_H */
