/* SPDX-License-Identifier: BSD-3-Clause */
/* alltoall: every rank sends a block to every rank, itself included, and receives one from each:
 * the densest pattern, in which every process ends up with state for every peer.
 *
 *   herdrun -n 4 ./alltoall [COUNT]
 *
 * The block rank s sends to rank d holds COUNT 64-bit words, word k = (s << 40) | (d << 20) | k,
 * so a block that went to the wrong rank, or came back cut, is seen. Each rank prints how many
 * of its peers each transport carried. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <herd.h>

#define TAG_BLOCK      7
#define MAX_TRANSPORTS 8

static void check(int rc, const char *call)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "rank %u: %s failed: %s\n", herd_rank(), call, herd_last_error());
        herd_abort(1, "alltoall: a messaging call failed");
    }
}

static uint64_t word(uint32_t src, uint32_t dst, size_t k)
{
    return ((uint64_t) src << 40) | ((uint64_t) dst << 20) | (uint64_t) k;
}

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? (size_t) strtoul(argv[1], NULL, 10) : 1000;
    if (HERD_SUCCESS != herd_init()) {
        fprintf(stderr, "alltoall: herd_init: %s (run it with herdrun)\n", herd_last_error());
        return 1;
    }
    uint32_t me = herd_rank(), size = herd_size();
    size_t bytes = count * sizeof(uint64_t);
    uint64_t *send = malloc(bytes * size + 1), *recv = malloc(bytes * size + 1);
    size_t *len = calloc(size, sizeof(*len));
    herd_request_t *request = calloc(size, sizeof(*request));
    if (NULL == send || NULL == recv || NULL == len || NULL == request) {
        herd_abort(1, "alltoall: out of memory");
    }
    for (uint32_t d = 0; d < size; ++d) {
        for (size_t k = 0; k < count; ++k) {
            send[d * count + k] = word(me, d, k);
        }
    }

    /* post every receive, then send, starting with the next rank so that not everyone sends to
     * rank 0 first */
    for (uint32_t s = 0; s < size; ++s) {
        check(herd_irecv(s, TAG_BLOCK, recv + s * count, bytes, &len[s], NULL, NULL, &request[s]),
              "herd_irecv");
    }
    for (uint32_t i = 0; i < size; ++i) {
        uint32_t d = (me + i) % size;
        check(herd_send(d, TAG_BLOCK, send + d * count, bytes), "herd_send");
    }
    size_t wrong = 0;
    for (uint32_t s = 0; s < size; ++s) {
        check(herd_wait(&request[s]), "herd_wait");
        for (size_t k = 0; k < count && 0 == wrong; ++k) {
            if (len[s] != bytes || recv[s * count + k] != word(s, me, k)) {
                fprintf(stderr, "rank %u: the block from rank %u is wrong at word %zu\n", me, s, k);
                wrong++;
            }
        }
    }

    /* how many peers each transport carried: "self 1, sm 3, tcp 4" */
    const char *name[MAX_TRANSPORTS];
    uint32_t peers[MAX_TRANSPORTS], kinds = 0;
    for (uint32_t d = 0; d < size; ++d) {
        const char *via = herd_peer_transport(d);
        uint32_t t = 0;
        via = NULL != via ? via : "(none)";
        while (t < kinds && 0 != strcmp(name[t], via)) {
            t++;
        }
        if (t == kinds && kinds < MAX_TRANSPORTS) {
            name[kinds] = via;
            peers[kinds++] = 0;
        }
        if (t < kinds) {
            peers[t]++;
        }
    }
    for (uint32_t t = 1; t < kinds; ++t) { /* by name, so every rank prints them alike */
        for (uint32_t u = t; u > 0 && strcmp(name[u - 1], name[u]) > 0; --u) {
            const char *n = name[u];
            uint32_t p = peers[u];
            name[u] = name[u - 1], peers[u] = peers[u - 1];
            name[u - 1] = n, peers[u - 1] = p;
        }
    }
    printf("rank %u: %u blocks of %zu bytes, peers via", me, size, bytes);
    for (uint32_t t = 0; t < kinds; ++t) {
        printf("%s %s %u", 0 == t ? "" : ",", name[t], peers[t]);
    }
    printf(", %s\n", 0 == wrong ? "every block ok" : "WRONG");
    free(send);
    free(recv);
    free(len);
    free(request);
    if (0 != wrong) {
        herd_abort(1, "alltoall: a block is wrong");
    }
    return HERD_SUCCESS == herd_finalize() ? 0 : 1;
}
