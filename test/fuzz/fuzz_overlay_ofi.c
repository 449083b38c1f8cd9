/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness for the ofi overlay's fabric path: arbitrary fabric fragments, control
 * messages (HELLO, FALLBACK) and tcp collective messages from arbitrary peers, interleaved with
 * sends and their completions (some in error), through a real ofi endpoint over a stub tcp
 * module and a stub provider. Nothing may crash or leak, every message delivered is within the
 * fabric's limit, and finalize releases everything. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/overlay/ofi/overlay_ofi_internal.h"
#include "test/fuzz/fuzz.h"

overlay_ofi_settings_t overlay_ofi_settings;
int overlay_ofi_output(void)
{
    return -1;
}

/* ---- the event loop is never used (no base): the path's calls link to these ---- */
int opal_event_fd_create(opal_event_base_t *base, int fd, short flags, opal_event_cb_t cb,
                         void *arg, opal_event_t **event)
{
    return HERD_ERR_NOT_SUPPORTED;
}
int opal_event_timer_create(opal_event_base_t *base, bool persist, opal_event_cb_t cb, void *arg,
                            opal_event_t **event)
{
    return HERD_ERR_NOT_SUPPORTED;
}
int opal_event_add(opal_event_t *event, const struct timeval *timeout)
{
    return HERD_ERR_NOT_SUPPORTED;
}
void opal_event_free(opal_event_t *event)
{
}

/* ---- a stub tcp module ---- */
#define NREGS 16
static struct {
    uint16_t tag[NREGS];
    orte_overlay_recv_cb_t cb[NREGS];
    void *arg[NREGS];
} tcp;
static int tcp_init(const orte_overlay_config_t *c, orte_overlay_t **o)
{
    memset(&tcp, 0, sizeof(tcp));
    *o = (orte_overlay_t *) &tcp;
    return HERD_SUCCESS;
}
static int tcp_send(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const void *d, size_t n)
{
    return HERD_SUCCESS;
}
static int tcp_register(orte_overlay_t *o, uint16_t tag, orte_overlay_recv_cb_t cb, void *arg)
{
    for (int i = 0; i < NREGS; ++i) {
        if ((NULL == cb && tcp.tag[i] == tag) || (NULL != cb && NULL == tcp.cb[i])) {
            tcp.tag[i] = tag;
            tcp.cb[i] = cb;
            tcp.arg[i] = arg;
            return HERD_SUCCESS;
        }
    }
    return HERD_ERR_OUT_OF_RESOURCE;
}
static void tcp_deliver(orte_vpid_t src, uint16_t tag, const void *d, size_t n)
{
    for (int i = 0; i < NREGS; ++i) {
        if (NULL != tcp.cb[i] && tcp.tag[i] == tag) {
            tcp.cb[i]((orte_overlay_t *) &tcp, src, tag, d, n, tcp.arg[i]);
            return;
        }
    }
}
static void tcp_set_lost(orte_overlay_t *o, orte_overlay_lost_cb_t cb, void *arg)
{
}
static void tcp_finalize(orte_overlay_t *o)
{
}
static int tcp_listen(orte_overlay_t *o, char **uri)
{
    *uri = NULL;
    return HERD_SUCCESS;
}
static const orte_overlay_module_t stub_tcp = {.init = tcp_init,
                                               .listen = tcp_listen,
                                               .send = tcp_send,
                                               .register_recv = tcp_register,
                                               .set_lost_callback = tcp_set_lost,
                                               .finalize = tcp_finalize};
int overlay_ofi_tcp_module(const orte_overlay_module_t **t)
{
    *t = &stub_tcp;
    return HERD_SUCCESS;
}

/* ---- a stub provider: receive buffers and send contexts kept, completions queued ---- */
struct overlay_ofi_fabric {
    int dummy;
};
static struct overlay_ofi_fabric fab;
static size_t max_msg;
#define RING 4096
static struct {
    void *buf;
    overlay_ofi_ctx_t *ctx;
} rx[RING];
static unsigned rx_head, rx_tail;
static overlay_ofi_ctx_t *tx[RING];
static unsigned tx_head, tx_tail;
static overlay_ofi_completion_t cq[64];
static int cq_len;

static int f_open(const char *p, overlay_ofi_fabric_t **f, char **reason)
{
    *f = &fab;
    return HERD_SUCCESS;
}
static const char *f_name(const overlay_ofi_fabric_t *f)
{
    return "fuzz";
}
static void f_close(overlay_ofi_fabric_t *f)
{
}
static int f_getname(overlay_ofi_fabric_t *f, void *addr, size_t *length)
{
    memcpy(addr, "me", 2);
    *length = 2;
    return HERD_SUCCESS;
}
static int f_insert(overlay_ofi_fabric_t *f, const void *addr, size_t length, uint64_t *dest)
{
    FUZZ_CHECK(length > 0 && length <= OVERLAY_OFI_MAX_ADDR);
    *dest = ((const uint8_t *) addr)[0];
    return 0 == *dest ? HERD_ERR_BAD_PARAM : HERD_SUCCESS;
}
static size_t f_max(const overlay_ofi_fabric_t *f)
{
    return max_msg;
}
static int f_send(overlay_ofi_fabric_t *f, uint64_t dest, const void *buf, size_t length,
                  overlay_ofi_ctx_t *ctx, int *error)
{
    FUZZ_CHECK(length >= OVERLAY_OFI_HEADER_BYTES && length <= max_msg);
    if (tx_tail - tx_head == RING) {
        return OVERLAY_OFI_AGAIN;
    }
    tx[tx_tail++ % RING] = ctx;
    return HERD_SUCCESS;
}
static int f_recv(overlay_ofi_fabric_t *f, void *buf, size_t length, overlay_ofi_ctx_t *ctx)
{
    FUZZ_CHECK(length == (max_msg < OVERLAY_OFI_MAX_FRAGMENT ? max_msg : OVERLAY_OFI_MAX_FRAGMENT));
    FUZZ_CHECK(rx_tail - rx_head < RING);
    rx[rx_tail % RING].buf = buf;
    rx[rx_tail++ % RING].ctx = ctx;
    return HERD_SUCCESS;
}
static int f_poll(overlay_ofi_fabric_t *f, overlay_ofi_completion_t *out, int max)
{
    int n = cq_len < max ? cq_len : max;
    memcpy(out, cq, (size_t) n * sizeof(*out));
    memmove(cq, cq + n, (size_t) (cq_len - n) * sizeof(*cq));
    cq_len -= n;
    return n;
}
static int f_wait_fd(overlay_ofi_fabric_t *f)
{
    return -1;
}
static bool f_trywait(overlay_ofi_fabric_t *f)
{
    return true;
}
static const overlay_ofi_ops_t stub_ops = {f_open, f_name, f_close, f_getname, f_insert, f_max,
                                           f_send, f_recv, f_poll,  f_wait_fd, f_trywait};
const overlay_ofi_ops_t *overlay_ofi_ops = &stub_ops;

static uint64_t delivered;
static void on_msg(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *d, size_t n,
                   void *arg)
{
    FUZZ_CHECK(src < 8 && n <= OVERLAY_OFI_MAX_MESSAGE);
    const uint8_t *b = d;
    for (size_t i = 0; i < n; ++i) {
        delivered += b[i]; /* every byte readable */
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    return 0;
}

static void step(orte_overlay_t *o, uint8_t kind, orte_vpid_t src, const uint8_t *d, size_t n)
{
    static const uint8_t hello[] = {1, OVERLAY_OFI_CTL_HELLO, 0, 1, 0, 0, 0, 0, 0};
    uint8_t h[sizeof(hello)];
    switch (kind % 6) {
    case 0: /* a fabric fragment */
        if (rx_head != rx_tail && cq_len < 64) {
            size_t room = max_msg < OVERLAY_OFI_MAX_FRAGMENT ? max_msg : OVERLAY_OFI_MAX_FRAGMENT;
            size_t len = n < room ? n : room;
            memcpy(rx[rx_head % RING].buf, d, len);
            cq[cq_len++] = (overlay_ofi_completion_t){
                .ctx = rx[rx_head++ % RING].ctx, .recv = true, .length = len};
        }
        break;
    case 1: /* a control message */
        tcp_deliver(src, ORTE_OVERLAY_TAG_COMPONENT, d, n);
        break;
    case 2: /* a collective over tcp (tcp knows its daemons: src is one) */
        tcp_deliver(src % 8, (uint16_t) (n > 0 ? 64 + d[0] % 4 : 64), d, n);
        break;
    case 3: /* a send */
        (void) overlay_ofi_module.send(o, src, (uint16_t) (n > 0 ? 32 + d[0] % 40 : 64), d, n);
        break;
    case 4: /* a send completes, in error when the byte says */
        if (tx_head != tx_tail && cq_len < 64) {
            cq[cq_len++] = (overlay_ofi_completion_t){.ctx = tx[tx_head++ % RING],
                                                      .error = n > 0 && d[0] > 200 ? 104 : 0};
        }
        break;
    default: /* a well-formed HELLO, so that fabric traffic with that peer is possible */
        memcpy(h, hello, sizeof(h));
        h[8] = (uint8_t) (src + 1);
        tcp_deliver(src, ORTE_OVERLAY_TAG_COMPONENT, h, sizeof(h));
        break;
    }
    overlay_ofi_progress(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const orte_overlay_config_t config = {.vpid = 3, .num_daemons = 8, .radix = 2};
    orte_overlay_t *o = NULL;

    if (size < 1) {
        return 0;
    }
    max_msg = OVERLAY_OFI_HEADER_BYTES + 64 + (size_t) data[0] * 4;
    rx_head = rx_tail = tx_head = tx_tail = 0;
    cq_len = 0;
    char *uri = NULL;
    FUZZ_CHECK(HERD_SUCCESS == overlay_ofi_module.init(&config, &o));
    FUZZ_CHECK(HERD_SUCCESS == overlay_ofi_module.listen(o, &uri)); /* opens the fabric */
    FUZZ_CHECK(NULL != o->fabric);
    for (uint16_t t = 32; t <= 36; ++t) {
        FUZZ_CHECK(HERD_SUCCESS == overlay_ofi_module.register_recv(o, t, on_msg, NULL));
    }
    for (uint16_t t = 64; t < 68; ++t) {
        FUZZ_CHECK(HERD_SUCCESS == overlay_ofi_module.register_recv(o, t, on_msg, NULL));
    }
    /* records: kind, source (up to 9: two that do not exist), length (2 bytes), bytes */
    size_t at = 1;
    while (at + 4 <= size) {
        size_t n = (size_t) data[at + 2] | ((size_t) data[at + 3] << 8);
        if (n > size - at - 4) {
            n = size - at - 4;
        }
        step(o, data[at], data[at + 1] % 10, data + at + 4, n);
        at += 4 + n;
    }
    overlay_ofi_module.finalize(o);
    return 0;
}
