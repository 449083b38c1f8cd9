/* SPDX-License-Identifier: BSD-3-Clause */
/* btl tcp: the connections peers opened to this process: their hello checked and answered, then
 * their frames read and delivered (a message longer than the read buffer into its own memory). */
#include "herd_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/tcp/btl_tcp_internal.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

void btl_tcp_close_conn(size_t index)
{
    btl_tcp_conn_t *c = btl_tcp.conns[index];

    close(c->fd);
    free(c->buf);
    free(c->big);
    free(c);
    btl_tcp.conns[index] = btl_tcp.conns[--btl_tcp.num_conns];
}

int btl_tcp_accept_conns(void)
{
    int events = 0;

    for (;;) {
        int fd = accept4(btl_tcp.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return events;
        }
        if (btl_tcp.num_conns == btl_tcp.cap_conns) {
            size_t cap = btl_tcp.cap_conns ? 2 * btl_tcp.cap_conns : 8;
            btl_tcp_conn_t **grown = realloc(btl_tcp.conns, cap * sizeof(*grown));
            if (NULL == grown) {
                close(fd);
                return events;
            }
            btl_tcp.conns = grown;
            btl_tcp.cap_conns = cap;
        }
        btl_tcp_conn_t *c = calloc(1, sizeof(*c));
        uint8_t *buf = malloc(BTL_TCP_READ_BUFFER);
        if (NULL == c || NULL == buf) {
            free(c);
            free(buf);
            close(fd);
            return events;
        }
        c->fd = fd;
        c->buf = buf;
        btl_tcp.conns[btl_tcp.num_conns++] = c;
        events++;
    }
}

/* The hello of a new connection: add its sender (the first we hear of it, maybe) and answer. */
static int take_hello(btl_tcp_conn_t *c, const btl_tcp_header_t *h, const uint8_t *payload)
{
    uint8_t frame[BTL_TCP_FRAME_MAX];
    ompi_proc_t *proc;
    uint32_t src;
    int rc = BTL_TCP_HELLO == h->type
                 ? btl_tcp_decode_hello(payload, (size_t) h->length, btl_tcp.rte->job_size,
                                        btl_tcp.rte->jobid, &src)
                 : HERD_ERR_UNPACK_FAILURE;

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (HERD_SUCCESS != (rc = ompi_proc_lookup(src, &proc)) || NULL == btl_tcp_endpoint_of(proc)) {
        return HERD_SUCCESS != rc ? rc : HERD_ERR_OUT_OF_RESOURCE;
    }
    size_t n =
        btl_tcp_encode_hello(btl_tcp.rte->my_rank, btl_tcp.rte->jobid, frame + BTL_TCP_HEADER_SIZE);
    btl_tcp_encode_header(BTL_TCP_ACK, 0, n, frame);
    if (send(c->fd, frame, BTL_TCP_HEADER_SIZE + n, MSG_NOSIGNAL | MSG_DONTWAIT) !=
        (ssize_t) (BTL_TCP_HEADER_SIZE + n)) {
        return HERD_ERR_UNREACH;
    }
    c->src = src;
    c->hello_done = true;
    opal_output_verbose(10, ompi_btl_base_framework.output, "rank %u: tcp: rank %u connected to us",
                        btl_tcp.rte->my_rank, src);
    return HERD_SUCCESS;
}

/* Parse the frames in c->buf; a message too long for it continues in c->big. */
static int parse_frames(btl_tcp_conn_t *c, int *events)
{
    while (NULL == c->big) {
        btl_tcp_header_t h;
        size_t avail = c->end - c->start;
        int rc = btl_tcp_decode_header(c->buf + c->start, avail, btl_tcp.max_message, &h);
        if (HERD_ERR_UNPACK_READ_PAST_END == rc) {
            break;
        }
        if (HERD_SUCCESS != rc) {
            return rc;
        }
        if (!c->hello_done && BTL_TCP_HELLO != h.type) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        if (c->hello_done && BTL_TCP_MSG != h.type) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        size_t frame = BTL_TCP_HEADER_SIZE + (size_t) h.length;
        if (frame > BTL_TCP_READ_BUFFER) {
            /* a long message: its own memory, filled by the reads that follow */
            c->big = malloc(h.length);
            if (NULL == c->big) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            c->big_len = (size_t) h.length;
            c->big_tag = h.tag;
            c->big_got = avail - BTL_TCP_HEADER_SIZE;
            memcpy(c->big, c->buf + c->start + BTL_TCP_HEADER_SIZE, c->big_got);
            c->start = c->end = 0;
            break;
        }
        if (avail < frame) {
            break;
        }
        const uint8_t *payload = c->buf + c->start + BTL_TCP_HEADER_SIZE;
        if (!c->hello_done) {
            if (HERD_SUCCESS != (rc = take_hello(c, &h, payload))) {
                return rc;
            }
        } else {
            btl_tcp.deliver(c->src, h.tag, payload, (size_t) h.length);
        }
        c->start += frame;
        (*events)++;
    }
    if (c->start == c->end) {
        c->start = c->end = 0;
    } else if (c->start > 0 && NULL == c->big) {
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    return HERD_SUCCESS;
}

/* Read what a connection has: 1 when it should be closed. */
int btl_tcp_read_conn(btl_tcp_conn_t *c, int *events)
{
    for (;;) {
        ssize_t n;
        if (NULL != c->big) {
            n = recv(c->fd, c->big + c->big_got, c->big_len - c->big_got, MSG_DONTWAIT);
        } else {
            n = recv(c->fd, c->buf + c->end, BTL_TCP_READ_BUFFER - c->end, MSG_DONTWAIT);
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
            return 0;
        }
        if (n <= 0) {
            /* the peer is done (its finalize) or gone: a frame cut short is worth a word */
            if (NULL != c->big || c->end > c->start) {
                opal_output_verbose(1, ompi_btl_base_framework.output,
                                    "rank %u: tcp: rank %u's connection ended inside a message",
                                    btl_tcp.rte->my_rank, c->src);
            }
            return 1;
        }
        if (NULL != c->big) {
            c->big_got += (size_t) n;
            if (c->big_got == c->big_len) {
                uint8_t *whole = c->big;
                c->big = NULL;
                btl_tcp.deliver(c->src, c->big_tag, whole, c->big_len);
                free(whole);
                (*events)++;
            }
            continue;
        }
        c->end += (size_t) n;
        int rc = parse_frames(c, events);
        if (HERD_SUCCESS != rc) {
            char who[64];
            snprintf(who, sizeof(who), c->hello_done ? "rank %u" : "an unknown peer", c->src);
            opal_show_help("help-btl-tcp.txt", "bad-frame", true, btl_tcp.rte->my_rank, who,
                           opal_strerror(rc), btl_tcp.rte->my_rank);
            return 1;
        }
    }
}
