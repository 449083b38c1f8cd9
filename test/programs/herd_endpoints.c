/* SPDX-License-Identifier: BSD-3-Clause */
/* A libherd program for the RM-assigned endpoints test: prints its own and the next rank's
 * endpoint on a fabric, checks that every rank reads the same endpoint for every rank (each
 * publishes what it reads for itself, then compares every peer's with what it reads for that
 * peer), and with --connect binds its own tcp endpoint and has rank 0 connect to rank 1's and
 * exchange a byte, proving the addresses are usable. Without an assigned endpoint it says so
 * (the line a transport would take as "use the modex") and still succeeds.
 *   herd_endpoints [--connect] [FABRIC]      (FABRIC: tcp by default) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "herd.h"

static int check(int rc, const char *what)
{
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herd_endpoints rank %u: %s: %s (%s)\n", herd_rank(), what,
                herd_strerror(rc), herd_last_error());
        exit(1);
    }
    return rc;
}

static void format(const struct sockaddr_storage *addr, char *text, size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (AF_INET == addr->ss_family) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *) addr;
        inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
        snprintf(text, size, "%s:%u", host, ntohs(in4->sin_port));
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) addr;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        snprintf(text, size, "[%s]:%u", host, ntohs(in6->sin6_port));
    }
}

/* Rank 1 listens at its endpoint and echoes a byte; rank 0 connects to it there. */
static void connect_test(const struct sockaddr_storage *mine, size_t mine_len, uint32_t rank)
{
    int fd = -1;
    if (1 == rank) {
        int one = 1;
        fd = socket(mine->ss_family, SOCK_STREAM, 0);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (fd < 0 || 0 != bind(fd, (const struct sockaddr *) mine, (socklen_t) mine_len) ||
            0 != listen(fd, 4)) {
            fprintf(stderr, "herd_endpoints rank 1: cannot listen at its endpoint: %s\n",
                    strerror(errno));
            exit(1);
        }
    }
    check(herd_barrier(), "barrier before connecting");
    if (0 == rank) {
        struct sockaddr_storage peer;
        size_t len = sizeof(peer);
        char text[96], byte = 'x';
        check(herd_peer_endpoint(1, "tcp", &peer, &len), "rank 1's endpoint");
        format(&peer, text, sizeof(text));
        fd = socket(peer.ss_family, SOCK_STREAM, 0);
        if (fd < 0 || 0 != connect(fd, (struct sockaddr *) &peer, (socklen_t) len) ||
            1 != write(fd, &byte, 1) || 1 != read(fd, &byte, 1) || 'y' != byte) {
            fprintf(stderr, "herd_endpoints rank 0: no echo from rank 1 at %s: %s\n", text,
                    strerror(errno));
            exit(1);
        }
        printf("herd_endpoints rank 0 connected to rank 1 at %s\n", text);
    } else if (1 == rank) {
        char byte = 0;
        int conn = accept(fd, NULL, NULL);
        if (conn < 0 || 1 != read(conn, &byte, 1) || 'x' != byte) {
            fprintf(stderr, "herd_endpoints rank 1: nothing from rank 0: %s\n", strerror(errno));
            exit(1);
        }
        byte = 'y';
        if (1 != write(conn, &byte, 1)) {
            exit(1);
        }
        close(conn);
    }
    if (fd >= 0) {
        close(fd);
    }
    check(herd_barrier(), "barrier after connecting");
}

int main(int argc, char **argv)
{
    int connect_peers = 0;
    const char *fabric = "tcp";
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--connect")) {
            connect_peers = 1;
        } else {
            fabric = argv[i];
        }
    }
    check(herd_init(), "herd_init");
    uint32_t me = herd_rank(), size = herd_size(), next = (me + 1) % size;
    struct sockaddr_storage mine, peer;
    size_t mine_len = sizeof(mine), len = sizeof(peer);
    char mine_text[96], peer_text[96];
    int rc = herd_peer_endpoint(me, fabric, &mine, &mine_len);
    if (HERD_ERR_NOT_FOUND == rc) {
        printf("herd_endpoints rank %u: no endpoint on %s, using the modex: %s\n", me, fabric,
               herd_last_error());
        check(herd_finalize(), "herd_finalize");
        return 0;
    }
    check(rc, "its own endpoint");
    check(herd_peer_endpoint(next, fabric, &peer, &len), "the next rank's endpoint");
    format(&mine, mine_text, sizeof(mine_text));
    format(&peer, peer_text, sizeof(peer_text));
    printf("herd_endpoints rank %u own %s %s peer %u %s\n", me, fabric, mine_text, next, peer_text);

    /* every rank's view of every endpoint must be the same */
    check(herd_put("herd_endpoints", mine_text, strlen(mine_text) + 1), "herd_put");
    check(herd_commit(), "herd_commit");
    check(herd_fence(1), "herd_fence");
    for (uint32_t r = 0; r < size; ++r) {
        void *value = NULL;
        size_t value_len = 0;
        char text[96];
        len = sizeof(peer);
        check(herd_get(r, "herd_endpoints", &value, &value_len), "herd_get");
        check(herd_peer_endpoint(r, fabric, &peer, &len), "a peer's endpoint");
        format(&peer, text, sizeof(text));
        if (0 != strcmp(text, (const char *) value)) {
            printf("herd_endpoints rank %u: MISMATCH for rank %u: %s here, %s there\n", me, r, text,
                   (const char *) value);
            return 1;
        }
        free(value);
    }
    printf("herd_endpoints rank %u agrees on %u endpoints\n", me, size);
    if (connect_peers && size >= 2) {
        connect_test(&mine, mine_len, me);
    }
    check(herd_finalize(), "herd_finalize");
    return 0;
}
