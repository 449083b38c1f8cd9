/* SPDX-License-Identifier: BSD-3-Clause */
/* The ofi overlay module over a stub tcp module and a stub fabric: the fabric opened, or the
 * fallback to tcp alone with the reason at verbose 1; the callbacks users see carry the ofi
 * endpoint (tag routing); the component's reserved tag refused; the endpoint closed once, and
 * never by a forked child. The fabric path: the address exchange over tcp, a collective's
 * message over the fabric to the callback with its tag and origin, fragments and their
 * reassembly, corrupt headers dropped, a fabric error falling back to tcp without loss or
 * reordering (both ends). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "support/capture.h"

#include "orte/mca/overlay/ofi/overlay_ofi_module.c"
#include "orte/mca/overlay/ofi/overlay_ofi_path.c"
#include "orte/mca/overlay/ofi/overlay_ofi_start.c"

/* ---- what the component would give the module ---- */
overlay_ofi_settings_t overlay_ofi_settings = {.priority = 5};
static int test_stream = -1;
int overlay_ofi_output(void)
{
    return test_stream;
}

/* ---- a stub tcp module: one endpoint, callbacks kept so the test can fire them ---- */
/* what went over the stub tcp, in order */
typedef struct tcp_sent {
    orte_vpid_t dst;
    uint16_t tag;
    size_t length;
    uint8_t data[256];
} tcp_sent_t;
static tcp_sent_t tcp_log[32];

struct stub_inner {
    orte_overlay_recv_cb_t cb[8];
    void *cb_arg[8];
    uint16_t cb_tag[8];
    orte_overlay_lost_cb_t lost;
    void *lost_arg;
    int sends;
    uint16_t last_tag;
    bool finalized;
} stub_inner;

static int stub_init(const orte_overlay_config_t *config, orte_overlay_t **overlay)
{
    memset(&stub_inner, 0, sizeof(stub_inner));
    *overlay = (orte_overlay_t *) &stub_inner;
    return HERD_SUCCESS;
}
static int stub_send(orte_overlay_t *o, orte_vpid_t dst, uint16_t tag, const void *d, size_t n)
{
    if (stub_inner.sends < 32) {
        tcp_sent_t *t = &tcp_log[stub_inner.sends];
        t->dst = dst;
        t->tag = tag;
        t->length = n;
        memcpy(t->data, d, n < sizeof(t->data) ? n : sizeof(t->data));
    }
    stub_inner.sends++;
    stub_inner.last_tag = tag;
    return HERD_SUCCESS;
}
static int stub_register_recv(orte_overlay_t *o, uint16_t tag, orte_overlay_recv_cb_t cb, void *arg)
{
    for (int i = 0; i < 8; ++i) {
        if ((NULL == cb && stub_inner.cb_tag[i] == tag) ||
            (NULL != cb && NULL == stub_inner.cb[i])) {
            stub_inner.cb[i] = cb;
            stub_inner.cb_arg[i] = arg;
            stub_inner.cb_tag[i] = tag;
            return HERD_SUCCESS;
        }
    }
    return HERD_ERR_OUT_OF_RESOURCE;
}
static void stub_set_lost(orte_overlay_t *o, orte_overlay_lost_cb_t cb, void *arg)
{
    stub_inner.lost = cb;
    stub_inner.lost_arg = arg;
}
static void stub_finalize(orte_overlay_t *o)
{
    stub_inner.finalized = true;
}
static int stub_connect_parent(orte_overlay_t *o, const char *uri)
{
    return HERD_SUCCESS;
}
static int stub_listen(orte_overlay_t *o, char **uri)
{
    *uri = strdup("tcp://192.0.2.3:1");
    return HERD_SUCCESS;
}
static int stub_adopt_peer(orte_overlay_t *o, int fd, orte_vpid_t peer)
{
    return HERD_SUCCESS;
}
/* the stub tcp's callback for tag, as tcp would call it */
static void tcp_deliver(orte_vpid_t src, uint16_t tag, const void *d, size_t n)
{
    for (int i = 0; i < 8; ++i) {
        if (NULL != stub_inner.cb[i] && stub_inner.cb_tag[i] == tag) {
            stub_inner.cb[i]((orte_overlay_t *) &stub_inner, src, tag, d, n, stub_inner.cb_arg[i]);
            return;
        }
    }
    fail_msg("no tcp callback for tag %u", tag);
}
static void stub_get_stats(const orte_overlay_t *o, orte_overlay_stats_t *stats)
{
    memset(stats, 0, sizeof(*stats));
}
static const orte_overlay_module_t stub_tcp = {
    .init = stub_init,
    .get_stats = stub_get_stats,
    .connect_parent = stub_connect_parent,
    .listen = stub_listen,
    .adopt_peer = stub_adopt_peer,
    .send = stub_send,
    .register_recv = stub_register_recv,
    .set_lost_callback = stub_set_lost,
    .finalize = stub_finalize,
};
static bool tcp_available = true;
int overlay_ofi_tcp_module(const orte_overlay_module_t **tcp)
{
    if (!tcp_available) {
        return HERD_ERR_SILENT;
    }
    *tcp = &stub_tcp;
    return HERD_SUCCESS;
}

/* ---- a stub fabric provider: sends are logged, receives and completions fed by the test ---- */
struct overlay_ofi_fabric {
    int dummy;
};
static struct overlay_ofi_fabric stub_fabric;
static bool fabric_fails;
static int fabric_opens;
static int fabric_closes;
static size_t fabric_max_msg;
static int fabric_send_rc; /* what post_send returns */

typedef struct fab_sent {
    uint64_t dest;
    overlay_ofi_ctx_t *ctx;
    size_t length;
    uint8_t wire[512];
} fab_sent_t;
static fab_sent_t fab_log[64];
static int fab_sends;
static overlay_ofi_ctx_t *rx_ctx[256];
static void *rx_buf[256];
static int rx_posted;
static overlay_ofi_completion_t cq[64];
static int cq_len;
static uint64_t inserted[16];
static int inserts;

static int stub_open(const char *provider, overlay_ofi_fabric_t **fabric, char **reason)
{
    fabric_opens++;
    if (fabric_fails) {
        *reason = strdup("fi_getinfo (an RDM endpoint) failed: No data available");
        return HERD_ERR_NOT_AVAILABLE;
    }
    *fabric = &stub_fabric;
    return HERD_SUCCESS;
}
static const char *stub_provider_name(const overlay_ofi_fabric_t *f)
{
    return "stubprov";
}
static void stub_close(overlay_ofi_fabric_t *f)
{
    fabric_closes++;
}
static int stub_getname(overlay_ofi_fabric_t *f, void *addr, size_t *length)
{
    memcpy(addr, "addr-3", 6);
    *length = 6;
    return HERD_SUCCESS;
}
/* an address "addr-N" is peer N's, and becomes dest 100+N */
static int stub_insert(overlay_ofi_fabric_t *f, const void *addr, size_t length, uint64_t *dest)
{
    const char *a = addr;
    if (6 != length || 0 != memcmp(a, "addr-", 5)) {
        return HERD_ERR_BAD_PARAM;
    }
    *dest = 100 + (uint64_t) (a[5] - '0');
    inserted[inserts++ % 16] = *dest;
    return HERD_SUCCESS;
}
static size_t stub_max_msg_size(const overlay_ofi_fabric_t *f)
{
    return fabric_max_msg;
}
static int stub_post_send(overlay_ofi_fabric_t *f, uint64_t dest, const void *buf, size_t length,
                          overlay_ofi_ctx_t *ctx, int *error)
{
    if (HERD_SUCCESS != fabric_send_rc) {
        *error = 104; /* ECONNRESET */
        return fabric_send_rc;
    }
    assert_true(fab_sends < 64 && length <= sizeof(fab_log[0].wire));
    fab_log[fab_sends] = (fab_sent_t){.dest = dest, .ctx = ctx, .length = length};
    memcpy(fab_log[fab_sends].wire, buf, length);
    fab_sends++;
    return HERD_SUCCESS;
}
static int stub_post_recv(overlay_ofi_fabric_t *f, void *buf, size_t length, overlay_ofi_ctx_t *ctx)
{
    assert_true(rx_posted < 256);
    rx_ctx[rx_posted] = ctx;
    rx_buf[rx_posted] = buf;
    rx_posted++;
    return HERD_SUCCESS;
}
static int stub_poll(overlay_ofi_fabric_t *f, overlay_ofi_completion_t *out, int max)
{
    int n = cq_len < max ? cq_len : max;
    memcpy(out, cq, (size_t) n * sizeof(*out));
    memmove(cq, cq + n, (size_t) (cq_len - n) * sizeof(*cq));
    cq_len -= n;
    return n;
}
static int stub_wait_fd(overlay_ofi_fabric_t *f)
{
    return -1;
}
static bool stub_trywait(overlay_ofi_fabric_t *f)
{
    return true;
}
static const overlay_ofi_ops_t stub_ops = {
    .open = stub_open,
    .provider_name = stub_provider_name,
    .close = stub_close,
    .getname = stub_getname,
    .insert = stub_insert,
    .max_msg_size = stub_max_msg_size,
    .post_send = stub_post_send,
    .post_recv = stub_post_recv,
    .poll = stub_poll,
    .wait_fd = stub_wait_fd,
    .trywait = stub_trywait,
};
const overlay_ofi_ops_t *overlay_ofi_ops = &stub_ops;

static herd_test_capture_t capture;
static const orte_overlay_config_t config = {.vpid = 3, .num_daemons = 8, .radix = 2};

/* the endpoint goes onto the network: that is when it opens the fabric */
static void go_online(orte_overlay_t *o)
{
    char *uri = NULL;
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.listen(o, &uri));
    free(uri);
}

static int setup(void **state)
{
    fabric_fails = false;
    fabric_opens = fabric_closes = 0;
    fabric_max_msg = 1u << 20;
    fabric_send_rc = HERD_SUCCESS;
    fab_sends = rx_posted = cq_len = inserts = 0;
    tcp_available = true;
    test_stream = opal_output_open("overlay", 1);
    return 0;
}
static int teardown(void **state)
{
    opal_output_close(test_stream);
    return 0;
}

static void test_fabric_opened_and_closed_once(void **state)
{
    orte_overlay_t *o = NULL;
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    assert_int_equal(0, fabric_opens); /* not before it goes onto the network */
    go_online(o);
    go_online(o);
    char *err = herd_test_capture_stop(&capture);
    assert_non_null(strstr(err, "daemon 3 opened an RDM endpoint of provider stubprov"));
    free(err);
    assert_int_equal(1, fabric_opens);
    overlay_ofi_module.finalize(o);
    assert_int_equal(1, fabric_closes);
    assert_true(stub_inner.finalized);
}

static void test_fallback_says_why(void **state)
{
    orte_overlay_t *o = NULL;
    fabric_fails = true;
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    go_online(o);
    char *err = herd_test_capture_stop(&capture);
    assert_non_null(strstr(err, "daemon 3 falls back to tcp: fi_getinfo (an RDM endpoint) "
                                "failed: No data available"));
    free(err);
    /* tcp alone still carries messages */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 0, 7, "x", 1));
    assert_int_equal(1, stub_inner.sends);
    overlay_ofi_module.finalize(o);
    assert_int_equal(0, fabric_closes);
}

static void test_no_tcp_no_endpoint(void **state)
{
    orte_overlay_t *o = NULL;
    tcp_available = false;
    assert_int_equal(HERD_ERR_SILENT, overlay_ofi_module.init(&config, &o));
    assert_null(o);
    assert_int_equal(0, fabric_opens);
}

static orte_overlay_t *seen_overlay;
static orte_vpid_t seen_src;
static void *seen_arg;
static void on_recv(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *d, size_t n,
                    void *arg)
{
    seen_overlay = o;
    seen_src = src;
    seen_arg = arg;
}
static orte_vpid_t lost_peer;
static void on_lost(orte_overlay_t *o, orte_vpid_t peer, int status, const char *r, void *arg)
{
    seen_overlay = o;
    lost_peer = peer;
}

static void test_callbacks_see_the_ofi_endpoint(void **state)
{
    orte_overlay_t *o = NULL;
    int cookie;
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    free(herd_test_capture_stop(&capture));
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.register_recv(o, 9, on_recv, &cookie));
    assert_int_equal(HERD_ERR_EXISTS, overlay_ofi_module.register_recv(o, 9, on_recv, NULL));
    /* tcp delivers on its own endpoint; the user sees the ofi one, and its own argument */
    tcp_deliver(5, 9, "y", 1);
    assert_ptr_equal(o, seen_overlay);
    assert_int_equal(5, seen_src);
    assert_ptr_equal(&cookie, seen_arg);
    overlay_ofi_module.set_lost_callback(o, on_lost, NULL);
    seen_overlay = NULL;
    stub_inner.lost((orte_overlay_t *) &stub_inner, 1, HERD_ERR_UNREACH, "gone",
                    stub_inner.lost_arg);
    assert_ptr_equal(o, seen_overlay);
    assert_int_equal(1, lost_peer);
    /* removing the callback releases its registration */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.register_recv(o, 9, NULL, NULL));
    assert_null(stub_inner.cb[1]); /* [0]: the component's control tag */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.register_recv(o, 9, on_recv, NULL));
    overlay_ofi_module.finalize(o);
}

static void test_reserved_tag_refused(void **state)
{
    orte_overlay_t *o = NULL;
    struct iovec iov = {.iov_base = "z", .iov_len = 1};
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    free(herd_test_capture_stop(&capture));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     overlay_ofi_module.send(o, 0, ORTE_OVERLAY_TAG_COMPONENT, "z", 1));
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     overlay_ofi_module.sendv(o, 0, ORTE_OVERLAY_TAG_COMPONENT, &iov, 1));
    assert_int_equal(HERD_ERR_EXISTS, overlay_ofi_module.register_recv(
                                          o, ORTE_OVERLAY_TAG_COMPONENT, on_recv, NULL));
    assert_int_equal(0, stub_inner.sends);
    overlay_ofi_module.finalize(o);
}

static void test_forked_child_leaves_the_endpoint(void **state)
{
    orte_overlay_t *o = NULL;
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    go_online(o);
    free(herd_test_capture_stop(&capture));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        overlay_ofi_module.finalize(o);
        _exit(0 == fabric_closes ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(pid, waitpid(pid, &status, 0));
    assert_true(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    overlay_ofi_module.finalize(o);
    assert_int_equal(1, fabric_closes);
}

/* ---- the fabric path ---- */

#define COLL ORTE_GRPCOMM_TAG_BASE /* a collective's tag */

typedef struct got {
    orte_overlay_t *o;
    orte_vpid_t src;
    uint16_t tag;
    size_t length;
    uint8_t data[256];
} got_t;
static got_t got[16];
static int ngot;
static void on_coll(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *d, size_t n,
                    void *arg)
{
    assert_true(ngot < 16 && n <= sizeof(got[0].data));
    got[ngot] = (got_t){.o = o, .src = src, .tag = tag, .length = n};
    memcpy(got[ngot].data, d, n);
    ngot++;
}

static orte_overlay_t *open_endpoint(void)
{
    orte_overlay_t *o = NULL;
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    go_online(o);
    free(herd_test_capture_stop(&capture));
    assert_non_null(o->peers);
    ngot = 0;
    for (uint16_t t = COLL; t < COLL + 2; ++t) {
        assert_int_equal(HERD_SUCCESS, overlay_ofi_module.register_recv(o, t, on_coll, NULL));
    }
    return o;
}

static void hello_from(orte_vpid_t src)
{
    uint8_t m[14] = {1, OVERLAY_OFI_CTL_HELLO, 0, 6, 0, 0, 0, 0, 'a', 'd', 'd', 'r', '-'};
    m[13] = (uint8_t) ('0' + src);
    tcp_deliver(src, ORTE_OVERLAY_TAG_COMPONENT, m, sizeof(m));
}

static size_t frag(uint8_t *w, uint8_t version, uint16_t tag, uint32_t origin, uint32_t seq,
                   uint32_t total, uint32_t offset, const void *payload, size_t n)
{
    w[0] = version;
    w[1] = OVERLAY_OFI_KIND_DATA;
    put16(w + 2, tag);
    put32(w + 4, origin);
    put32(w + 8, seq);
    put32(w + 12, total);
    put32(w + 16, offset);
    memcpy(w + OVERLAY_OFI_HEADER_BYTES, payload, n);
    return OVERLAY_OFI_HEADER_BYTES + n;
}

/* a fragment lands in the oldest posted receive buffer, and its completion is queued */
static int rx_next;
static void fabric_arrives(orte_overlay_t *o, const uint8_t *wire, size_t n)
{
    assert_true(rx_next < rx_posted);
    memcpy(rx_buf[rx_next], wire, n);
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = rx_ctx[rx_next], .recv = true, .length = n};
    rx_next++;
    overlay_ofi_progress(o);
}

static void test_address_exchange(void **state)
{
    orte_overlay_t *o = open_endpoint();
    rx_next = 0;
    /* the child sends its address to its parent (1 in a binary tree) on connecting */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.connect_parent(o, "tcp://192.0.2.1:1"));
    assert_int_equal(1, stub_inner.sends);
    assert_int_equal(1, tcp_log[0].dst);
    assert_int_equal(ORTE_OVERLAY_TAG_COMPONENT, tcp_log[0].tag);
    assert_int_equal(14, tcp_log[0].length);
    assert_int_equal(OVERLAY_OFI_CTL_HELLO, tcp_log[0].data[1]);
    assert_memory_equal("addr-3", tcp_log[0].data + 8, 6);
    /* the parent's answer goes into the address vector; no second HELLO to it */
    hello_from(1);
    assert_int_equal(1, inserts);
    assert_int_equal(101, inserted[0]);
    assert_int_equal(1, stub_inner.sends);
    /* a child's HELLO is answered with ours */
    hello_from(7);
    assert_int_equal(2, inserts);
    assert_int_equal(2, stub_inner.sends);
    assert_int_equal(7, tcp_log[1].dst);
    assert_int_equal(OVERLAY_OFI_CTL_HELLO, tcp_log[1].data[1]);
    /* a HELLO that asks for an answer (its sender had no fabric when ours came) gets one */
    uint8_t again[14] = {1, OVERLAY_OFI_CTL_HELLO, 0, 6, 0, 0, 0, 1, 'a', 'd', 'd', 'r', '-', '1'};
    tcp_deliver(1, ORTE_OVERLAY_TAG_COMPONENT, again, sizeof(again));
    assert_int_equal(3, stub_inner.sends);
    assert_int_equal(1, tcp_log[2].dst);
    assert_int_equal(0, get32(tcp_log[2].data + 4)); /* it has ours: no answer asked */
    stub_inner.sends = 2;
    /* a malformed HELLO puts nothing into the address vector */
    uint8_t bad[9] = {1, OVERLAY_OFI_CTL_HELLO, 0, 6, 0, 0, 0, 0, 'a'};
    tcp_deliver(5, ORTE_OVERLAY_TAG_COMPONENT, bad, sizeof(bad));
    assert_int_equal(2, inserts);
    /* a collective goes over the fabric to a peer with an address, all else over tcp */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL, "m", 1));
    assert_int_equal(1, fab_sends);
    assert_int_equal(101, fab_log[0].dest);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, 9, "n", 1));
    assert_int_equal(3, stub_inner.sends);
    /* to a peer without one: our HELLO first, then the message, over tcp */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 5, COLL, "p", 1));
    assert_int_equal(5, stub_inner.sends);
    assert_int_equal(ORTE_OVERLAY_TAG_COMPONENT, tcp_log[3].tag);
    assert_int_equal(COLL, tcp_log[4].tag);
    assert_int_equal(1, fab_sends);
    overlay_ofi_module.finalize(o);
}

static void test_fabric_message_delivered(void **state)
{
    orte_overlay_t *o = open_endpoint();
    uint8_t w[64];
    rx_next = 0;
    hello_from(1);
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 5, 0, "hello", 5));
    assert_int_equal(1, ngot);
    assert_ptr_equal(o, got[0].o);
    assert_int_equal(1, got[0].src);
    assert_int_equal(COLL, got[0].tag);
    assert_int_equal(5, got[0].length);
    assert_memory_equal("hello", got[0].data, 5);
    /* from a peer whose HELLO has not come over tcp yet: held until it does */
    fabric_arrives(o, w, frag(w, 1, COLL + 1, 7, 0, 2, 0, "hi", 2));
    assert_int_equal(1, ngot);
    hello_from(7);
    assert_int_equal(2, ngot);
    assert_int_equal(7, got[1].src);
    assert_int_equal(COLL + 1, got[1].tag);
    /* the receive buffers went back to the provider */
    assert_int_equal(OVERLAY_OFI_RECV_BUFFERS + 2, rx_posted);
    orte_overlay_stats_t st;
    overlay_ofi_module.get_stats(o, &st);
    assert_int_equal(2, st.messages_delivered);
    overlay_ofi_module.finalize(o);
}

static void test_fragments_reassembled(void **state)
{
    uint8_t payload[200];
    fabric_max_msg = OVERLAY_OFI_HEADER_BYTES + 64;
    orte_overlay_t *o = open_endpoint();
    rx_next = 0;
    for (size_t i = 0; i < sizeof(payload); ++i) {
        payload[i] = (uint8_t) (i * 7);
    }
    hello_from(1);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL, payload, 200));
    assert_int_equal(4, fab_sends);
    for (int i = 0; i < 4; ++i) {
        const uint8_t *w = fab_log[i].wire;
        assert_int_equal(i < 3 ? 84 : 28, fab_log[i].length);
        assert_int_equal(1, w[0]);
        assert_int_equal(COLL, get16(w + 2));
        assert_int_equal(3, get32(w + 4));
        assert_int_equal(0, get32(w + 8));
        assert_int_equal(200, get32(w + 12));
        assert_int_equal(64 * i, get32(w + 16));
    }
    /* the same fragments, from daemon 1 and in reverse order, make one message */
    for (int i = 3; i >= 0; --i) {
        uint8_t w[512];
        memcpy(w, fab_log[i].wire, fab_log[i].length);
        put32(w + 4, 1);
        fabric_arrives(o, w, fab_log[i].length);
        assert_int_equal(0 == i ? 1 : 0, ngot);
    }
    assert_int_equal(200, got[0].length);
    assert_memory_equal(payload, got[0].data, 200);
    /* the send is released once every fragment completed */
    for (int i = 0; i < 4; ++i) {
        cq[cq_len++] = (overlay_ofi_completion_t){.ctx = fab_log[i].ctx};
    }
    overlay_ofi_progress(o);
    assert_null(o->peers[1].tx_head);
    assert_int_equal(0, o->pending_sends);
    overlay_ofi_module.finalize(o);
}

static void test_corrupt_headers_dropped(void **state)
{
    orte_overlay_t *o = open_endpoint();
    uint8_t w[64];
    rx_next = 0;
    hello_from(1);
    herd_test_capture_start(&capture);
    fabric_arrives(o, w, 10);                                            /* short */
    fabric_arrives(o, w, frag(w, 9, COLL, 1, 0, 1, 0, "x", 1));          /* version */
    fabric_arrives(o, w, frag(w, 1, COLL, 99, 0, 1, 0, "x", 1));         /* origin */
    fabric_arrives(o, w, frag(w, 1, COLL, 3, 0, 1, 0, "x", 1));          /* self */
    fabric_arrives(o, w, frag(w, 1, 9, 1, 0, 1, 0, "x", 1));             /* not a collective */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 0x7fffffff, 0, "x", 1)); /* huge */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 1, 2, "x", 1));          /* offset past end */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 2, 0, "xyz", 3));        /* longer than total */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 5000, 1, 0, "x", 1));       /* out of window */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 4, 0, "ab", 2));         /* a part of 4 */
    fabric_arrives(o, w, frag(w, 1, COLL + 1, 1, 0, 4, 2, "cd", 2));     /* other tag */
    char *err = herd_test_capture_stop(&capture);
    assert_non_null(strstr(err, "daemon 3 dropped a fabric message (origin 99): bad origin"));
    free(err);
    assert_int_equal(0, ngot);
    assert_int_equal(10, o->count.dropped);
    /* the endpoint goes on working */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 4, 2, "cd", 2));
    assert_int_equal(1, ngot);
    assert_memory_equal("abcd", got[0].data, 4);
    overlay_ofi_module.finalize(o);
}

static void test_send_error_falls_back_in_order(void **state)
{
    orte_overlay_t *o = open_endpoint();
    hello_from(1);
    int base = stub_inner.sends; /* our HELLO answer */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL, "a", 1));
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL, "b", 1));
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL + 1, "c", 1));
    assert_int_equal(3, fab_sends);
    assert_int_equal(base, stub_inner.sends);
    /* "a" completes, "b" fails: "b" and "c" go over tcp, after telling where the fabric stopped */
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = fab_log[0].ctx};
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = fab_log[1].ctx, .error = 104};
    herd_test_capture_start(&capture);
    overlay_ofi_progress(o);
    char *err = herd_test_capture_stop(&capture);
    assert_non_null(strstr(err, "daemon 3 sends to daemon 1 over tcp from now on (a fabric send "
                                "completed in error"));
    free(err);
    assert_int_equal(base + 3, stub_inner.sends);
    assert_int_equal(ORTE_OVERLAY_TAG_COMPONENT, tcp_log[base].tag);
    assert_int_equal(OVERLAY_OFI_CTL_FALLBACK, tcp_log[base].data[1]);
    assert_int_equal(1, get32(tcp_log[base].data + 4));
    assert_int_equal(COLL, tcp_log[base + 1].tag);
    assert_memory_equal("b", tcp_log[base + 1].data, 1);
    assert_int_equal(COLL + 1, tcp_log[base + 2].tag);
    assert_memory_equal("c", tcp_log[base + 2].data, 1);
    /* later ones over tcp too */
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL, "d", 1));
    assert_int_equal(3, fab_sends);
    assert_memory_equal("d", tcp_log[base + 3].data, 1);
    /* "c"'s completion, after the fact, is absorbed */
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = fab_log[2].ctx};
    overlay_ofi_progress(o);
    assert_int_equal(0, o->pending_sends);
    /* a post that fails at once falls back the same way */
    fabric_send_rc = HERD_ERR_UNREACH;
    hello_from(7);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 7, COLL, "e", 1));
    assert_true(o->peers[7].tx_failed);
    assert_memory_equal("e", tcp_log[stub_inner.sends - 1].data, 1);
    overlay_ofi_module.finalize(o);
}

static void test_peer_fallback_keeps_order(void **state)
{
    orte_overlay_t *o = open_endpoint();
    uint8_t w[64];
    uint8_t fb[8] = {1, OVERLAY_OFI_CTL_FALLBACK, 0, 0, 0, 0, 0, 2};
    rx_next = 0;
    hello_from(1);
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 2, 0, "f0", 2));
    assert_int_equal(1, ngot);
    /* daemon 1 re-sends from its message 2 over tcp; its message 1 is still on the fabric */
    tcp_deliver(1, ORTE_OVERLAY_TAG_COMPONENT, fb, sizeof(fb));
    tcp_deliver(1, COLL, "t2", 2);
    assert_int_equal(1, ngot);
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 1, 2, 0, "f1", 2));
    assert_int_equal(3, ngot);
    assert_memory_equal("f1", got[1].data, 2);
    assert_memory_equal("t2", got[2].data, 2);
    /* its message 2 arriving over the fabric after all is not delivered twice */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 2, 2, 0, "t2", 2));
    assert_int_equal(3, ngot);
    tcp_deliver(1, COLL, "t3", 2);
    assert_int_equal(4, ngot);
    assert_memory_equal("t3", got[3].data, 2);
    overlay_ofi_module.finalize(o);
}

/* a daemon that restarted (a new address under its vpid) starts from message 0 again */
static void test_restarted_peer_starts_over(void **state)
{
    orte_overlay_t *o = open_endpoint();
    uint8_t w[64];
    rx_next = 0;
    hello_from(1);
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 1, 0, "a", 1));
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, COLL, "m", 1));
    assert_int_equal(1, o->peers[1].tx_seq);
    int sends = stub_inner.sends;
    uint8_t m[14] = {1, OVERLAY_OFI_CTL_HELLO, 0, 6, 0, 0, 0, 0, 'a', 'd', 'd', 'r', '-', '9'};
    tcp_deliver(1, ORTE_OVERLAY_TAG_COMPONENT, m, sizeof(m));
    assert_int_equal(109, o->peers[1].dest);
    assert_int_equal(0, o->peers[1].tx_seq);
    assert_int_equal(sends + 1, stub_inner.sends); /* our HELLO to the new one */
    fabric_arrives(o, w, frag(w, 1, COLL, 1, 0, 1, 0, "b", 1));
    assert_int_equal(2, ngot);
    assert_memory_equal("b", got[1].data, 1);
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = fab_log[0].ctx}; /* the old one's send */
    overlay_ofi_progress(o);
    assert_int_equal(0, o->pending_sends);
    overlay_ofi_module.finalize(o);
}

/* finalize from inside a callback the fabric ran: released once the callback returns */
static void on_coll_finalize(orte_overlay_t *o, orte_vpid_t src, uint16_t tag, const void *d,
                             size_t n, void *arg)
{
    ngot++;
    overlay_ofi_module.finalize(o);
}
static void test_finalize_inside_callback(void **state)
{
    orte_overlay_t *o = open_endpoint();
    uint8_t w[64];
    rx_next = 0;
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.register_recv(o, COLL, NULL, NULL));
    assert_int_equal(HERD_SUCCESS,
                     overlay_ofi_module.register_recv(o, COLL, on_coll_finalize, NULL));
    hello_from(1);
    memcpy(rx_buf[rx_next], w, frag(w, 1, COLL, 1, 0, 1, 0, "a", 1));
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = rx_ctx[rx_next++], .recv = true, .length = 21};
    memcpy(rx_buf[rx_next], w, frag(w, 1, COLL, 1, 1, 1, 0, "b", 1));
    cq[cq_len++] = (overlay_ofi_completion_t){.ctx = rx_ctx[rx_next++], .recv = true, .length = 21};
    overlay_ofi_enter(o); /* as the loop's event handler does */
    overlay_ofi_progress(o);
    assert_int_equal(1, ngot); /* nothing after finalize */
    assert_int_equal(0, fabric_closes);
    assert_false(overlay_ofi_leave(o));
    assert_int_equal(1, fabric_closes);
    cq_len = 0;
}

/* a process opens at most OVERLAY_OFI_MAX_ENDPOINTS (nodes hosted together): the rest use tcp */
static void test_endpoints_per_process(void **state)
{
    orte_overlay_t *o[OVERLAY_OFI_MAX_ENDPOINTS + 1];
    for (unsigned i = 0; i < OVERLAY_OFI_MAX_ENDPOINTS; ++i) {
        herd_test_capture_start(&capture);
        assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o[i]));
        go_online(o[i]);
        free(herd_test_capture_stop(&capture));
        assert_non_null(o[i]->fabric);
    }
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o[OVERLAY_OFI_MAX_ENDPOINTS]));
    go_online(o[OVERLAY_OFI_MAX_ENDPOINTS]);
    char *err = herd_test_capture_stop(&capture);
    assert_non_null(strstr(err, "falls back to tcp: this process already has 4 RDM endpoints"));
    free(err);
    assert_null(o[OVERLAY_OFI_MAX_ENDPOINTS]->fabric);
    for (unsigned i = 0; i <= OVERLAY_OFI_MAX_ENDPOINTS; ++i) {
        overlay_ofi_module.finalize(o[i]);
    }
    /* closed ones give their place back */
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o[0]));
    go_online(o[0]);
    free(herd_test_capture_stop(&capture));
    assert_non_null(o[0]->fabric);
    overlay_ofi_module.finalize(o[0]);
}

/* an endpoint whose neighbours are socketpairs on its own host never opens the fabric */
static void test_socketpairs_only_no_fabric(void **state)
{
    orte_overlay_t *o = NULL;
    herd_test_capture_start(&capture);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&config, &o));
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.adopt_peer(o, 5, 1));
    free(herd_test_capture_stop(&capture));
    assert_int_equal(0, fabric_opens);
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.send(o, 1, ORTE_GRPCOMM_TAG_BASE, "x", 1));
    assert_int_equal(1, stub_inner.sends);
    overlay_ofi_module.finalize(o);
    /* nor one of a DVM of one daemon */
    const orte_overlay_config_t alone = {.vpid = 0, .num_daemons = 1, .radix = 2};
    assert_int_equal(HERD_SUCCESS, overlay_ofi_module.init(&alone, &o));
    go_online(o);
    assert_int_equal(0, fabric_opens);
    overlay_ofi_module.finalize(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fabric_opened_and_closed_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_tcp_no_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callbacks_see_the_ofi_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_tag_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forked_child_leaves_the_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_address_exchange, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fabric_message_delivered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fragments_reassembled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_headers_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_error_falls_back_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_fallback_keeps_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_inside_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restarted_peer_starts_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoints_per_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socketpairs_only_no_fabric, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
