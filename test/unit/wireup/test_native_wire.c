/* SPDX-License-Identifier: BSD-3-Clause */
/* The native wireup protocol (opal/util/native_wire.h): every message round-trips; every
 * truncation, a wrong magic or version, an unknown type, an oversized length, a missing or
 * overlong string and trailing bytes are refused, never a crash. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "opal/util/native_wire.h"

typedef int (*unpack_fn_t)(const void *data, size_t len, void *out);

/* Every proper prefix of a payload is refused by its decoder; the whole is accepted. */
static void check_truncations(const opal_buffer_t *payload, unpack_fn_t unpack, size_t out_size,
                              void (*release)(void *))
{
    void *out = malloc(out_size);
    assert_non_null(out);
    for (size_t cut = 0; cut < payload->used; ++cut) {
        memset(out, 0xa5, out_size);
        assert_int_not_equal(unpack(payload->base, cut, out), HERD_SUCCESS);
    }
    assert_int_equal(unpack(payload->base, payload->used, out), HERD_SUCCESS);
    if (NULL != release) {
        release(out);
    }
    /* a byte more is refused too */
    uint8_t *longer = malloc(payload->used + 1);
    memcpy(longer, payload->base, payload->used);
    longer[payload->used] = 0;
    assert_int_not_equal(unpack(longer, payload->used + 1, out), HERD_SUCCESS);
    free(longer);
    free(out);
}

static int unpack_hello(const void *d, size_t l, void *o)
{
    return opal_native_unpack_hello(d, l, o);
}
static void free_hello(void *h)
{
    opal_native_hello_free(h);
}
static int unpack_commit(const void *d, size_t l, void *o)
{
    return opal_native_unpack_commit(d, l, o);
}
static void free_commit(void *c)
{
    opal_native_commit_free(c);
}
static int unpack_get(const void *d, size_t l, void *o)
{
    return opal_native_unpack_get(d, l, o);
}
static void free_get(void *g)
{
    opal_native_get_free(g);
}
static int unpack_reply(const void *d, size_t l, void *o)
{
    return opal_native_unpack_reply(d, l, o);
}
static void free_reply(void *r)
{
    opal_native_reply_free(r);
}
static int unpack_abort(const void *d, size_t l, void *o)
{
    return opal_native_unpack_abort(d, l, o);
}
static void free_abort(void *a)
{
    opal_native_abort_free(a);
}

static void test_hello(void **state)
{
    opal_native_hello_t h = {.nspace = "herd.d.1", .rank = 7, .pid = 4242, .token = "abc"}, got;
    opal_buffer_t b;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_hello(&b, &h), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_hello(b.base, b.used, &got), HERD_SUCCESS);
    assert_string_equal(got.nspace, "herd.d.1");
    assert_int_equal(got.rank, 7);
    assert_int_equal(got.pid, 4242);
    assert_string_equal(got.token, "abc");
    opal_native_hello_free(&got);
    check_truncations(&b, unpack_hello, sizeof(got), free_hello);
    opal_buffer_destruct(&b);
    /* an empty namespace is refused by the encoder */
    h.nspace = "";
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_hello(&b, &h), HERD_ERR_BAD_PARAM);
    opal_buffer_destruct(&b);
}

static void test_commit(void **state)
{
    char big[4096];
    memset(big, 'z', sizeof(big));
    opal_native_put_t puts[] = {{.key = "a", .value = "1", .len = 1},
                                {.key = "empty", .value = NULL, .len = 0},
                                {.key = "big", .value = big, .len = sizeof(big)}};
    opal_native_commit_t c = {.puts = puts, .num_puts = 3}, got;
    opal_buffer_t b;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_commit(&b, &c), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_commit(b.base, b.used, &got), HERD_SUCCESS);
    assert_int_equal(got.num_puts, 3);
    assert_string_equal(got.puts[0].key, "a");
    assert_int_equal(got.puts[1].len, 0);
    assert_int_equal(got.puts[2].len, sizeof(big));
    assert_memory_equal(got.puts[2].value, big, sizeof(big));
    opal_native_commit_free(&got);
    check_truncations(&b, unpack_commit, sizeof(got), free_commit);
    opal_buffer_destruct(&b);
    /* no puts at all is a commit too */
    c.num_puts = 0;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_commit(&b, &c), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_commit(b.base, b.used, &got), HERD_SUCCESS);
    assert_int_equal(got.num_puts, 0);
    opal_native_commit_free(&got);
    opal_buffer_destruct(&b);
    /* a key over the limit is refused on both sides */
    char key[OPAL_NATIVE_MAX_KEY + 2];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    puts[0].key = key;
    c.num_puts = 1;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_commit(&b, &c), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_buffer_pack_uint32(&b, 1), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(&b, key), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bytes(&b, "x", 1), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_commit(b.base, b.used, &got), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
    /* a count far beyond the bytes behind it fails without allocating for it */
    opal_buffer_init(&b);
    assert_int_equal(opal_buffer_pack_uint32(&b, OPAL_NATIVE_MAX_PUTS), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_commit(b.base, b.used, &got), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
    opal_buffer_init(&b);
    assert_int_equal(opal_buffer_pack_uint32(&b, OPAL_NATIVE_MAX_PUTS + 1), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_commit(b.base, b.used, &got), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
}

static void test_fence_get_abort(void **state)
{
    opal_buffer_t b;
    bool collect = false;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_fence(&b, true), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_fence(b.base, b.used, &collect), HERD_SUCCESS);
    assert_true(collect);
    assert_int_not_equal(opal_native_unpack_fence(b.base, 0, &collect), HERD_SUCCESS);
    opal_buffer_destruct(&b);

    opal_native_get_t g = {.peer = 12, .key = "card"}, gg;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_get(&b, &g), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_get(b.base, b.used, &gg), HERD_SUCCESS);
    assert_int_equal(gg.peer, 12);
    assert_string_equal(gg.key, "card");
    opal_native_get_free(&gg);
    check_truncations(&b, unpack_get, sizeof(gg), free_get);
    opal_buffer_destruct(&b);

    opal_native_abort_t a = {.status = 9, .message = "why"}, aa;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_abort(&b, &a), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_abort(b.base, b.used, &aa), HERD_SUCCESS);
    assert_int_equal(aa.status, 9);
    assert_string_equal(aa.message, "why");
    opal_native_abort_free(&aa);
    check_truncations(&b, unpack_abort, sizeof(aa), free_abort);
    opal_buffer_destruct(&b);
}

static void test_reply(void **state)
{
    opal_native_reply_t r = {.status = HERD_SUCCESS, .error = "", .value = "v", .len = 1}, got;
    opal_buffer_t b;
    opal_buffer_init(&b);
    assert_int_equal(opal_native_pack_reply(&b, &r), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_reply(b.base, b.used, &got), HERD_SUCCESS);
    assert_int_equal(got.len, 1);
    opal_native_reply_free(&got);
    check_truncations(&b, unpack_reply, sizeof(got), free_reply);
    opal_buffer_destruct(&b);
    /* a status that is no status is refused */
    opal_buffer_init(&b);
    assert_int_equal(opal_buffer_pack_int32(&b, 5), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(&b, ""), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_bytes(&b, NULL, 0), HERD_SUCCESS);
    assert_int_equal(opal_native_unpack_reply(b.base, b.used, &got), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
}

static void test_frames(void **state)
{
    opal_buffer_t f;
    opal_native_header_t h;
    opal_buffer_init(&f);
    assert_int_equal(opal_native_encode(OPAL_NATIVE_GET, 99, "abc", 3, &f), HERD_SUCCESS);
    assert_int_equal(f.used, OPAL_NATIVE_HEADER_SIZE + 3);
    assert_int_equal(opal_native_frame(f.base, f.used, &h), (long) f.used);
    assert_int_equal(h.type, OPAL_NATIVE_GET);
    assert_int_equal(h.id, 99);
    assert_int_equal(h.length, 3);
    for (size_t cut = 0; cut < f.used; ++cut) {
        assert_int_equal(opal_native_frame(f.base, cut, &h), 0); /* more to come */
    }
    uint8_t bad[OPAL_NATIVE_HEADER_SIZE];
    memcpy(bad, f.base, sizeof(bad));
    bad[0] ^= 0xff;
    assert_true(opal_native_frame(bad, sizeof(bad), &h) < 0);
    assert_true(opal_native_frame(bad, 1, &h) < 0); /* a wrong magic is wrong at once */
    memcpy(bad, f.base, sizeof(bad));
    bad[5] = 9; /* version */
    assert_int_equal(opal_native_frame(bad, sizeof(bad), &h), HERD_ERR_VERSION_MISMATCH);
    memcpy(bad, f.base, sizeof(bad));
    bad[7] = 200; /* type */
    assert_true(opal_native_frame(bad, sizeof(bad), &h) < 0);
    memcpy(bad, f.base, sizeof(bad));
    bad[12] = 0xff; /* a length far over the limit */
    assert_true(opal_native_frame(bad, sizeof(bad), &h) < 0);
    opal_buffer_destruct(&f);
    opal_buffer_init(&f);
    assert_int_equal(opal_native_encode(OPAL_NATIVE_TYPE_END, 1, NULL, 0, &f), HERD_ERR_BAD_PARAM);
    opal_buffer_destruct(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello),   cmocka_unit_test(test_commit),
        cmocka_unit_test(test_fence_get_abort), cmocka_unit_test(test_reply),
        cmocka_unit_test(test_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
