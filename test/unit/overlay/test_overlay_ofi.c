/* SPDX-License-Identifier: BSD-3-Clause */
/* The ofi overlay module over a stub tcp module and a stub fabric: the fabric opened, or the
 * fallback to tcp alone with the reason at verbose 1; the callbacks users see carry the ofi
 * endpoint (tag routing); the component's reserved tag refused; the endpoint closed once, and
 * never by a forked child. */
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

/* ---- what the component would give the module ---- */
overlay_ofi_settings_t overlay_ofi_settings = {.priority = 5};
static int test_stream = -1;
int overlay_ofi_output(void)
{
    return test_stream;
}

/* ---- a stub tcp module: one endpoint, callbacks kept so the test can fire them ---- */
struct stub_inner {
    orte_overlay_recv_cb_t cb[4];
    void *cb_arg[4];
    uint16_t cb_tag[4];
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
    stub_inner.sends++;
    stub_inner.last_tag = tag;
    return HERD_SUCCESS;
}
static int stub_register_recv(orte_overlay_t *o, uint16_t tag, orte_overlay_recv_cb_t cb, void *arg)
{
    for (int i = 0; i < 4; ++i) {
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
static const orte_overlay_module_t stub_tcp = {
    .init = stub_init,
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

/* ---- a stub fabric provider ---- */
struct overlay_ofi_fabric {
    int dummy;
};
static struct overlay_ofi_fabric stub_fabric;
static bool fabric_fails;
static int fabric_opens;
static int fabric_closes;

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
static const overlay_ofi_ops_t stub_ops = {stub_open, stub_provider_name, stub_close};
const overlay_ofi_ops_t *overlay_ofi_ops = &stub_ops;

static herd_test_capture_t capture;
static const orte_overlay_config_t config = {.vpid = 3, .num_daemons = 8, .radix = 2};

static int setup(void **state)
{
    fabric_fails = false;
    fabric_opens = fabric_closes = 0;
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
    stub_inner.cb[0]((orte_overlay_t *) &stub_inner, 5, 9, "y", 1, stub_inner.cb_arg[0]);
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
    assert_null(stub_inner.cb[0]);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fabric_opened_and_closed_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_tcp_no_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callbacks_see_the_ofi_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_tag_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forked_child_leaves_the_endpoint, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
