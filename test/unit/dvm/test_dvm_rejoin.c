/* SPDX-License-Identifier: BSD-3-Clause */
/* The rejoin messages (orte/runtime/dvm_rejoin_wire.c): each round-trips, and a malformed one
 * (wrong version, truncated, a count the message cannot hold, a vpid out of range, trailing
 * bytes) is rejected with an error, never a crash or a huge allocation. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "orte/runtime/dvm_rejoin.h"

/* A buffer holding the first len bytes of src, to unpack from. */
static void load_prefix(opal_buffer_t *dst, const opal_buffer_t *src, size_t len)
{
    opal_buffer_init(dst);
    assert_int_equal(opal_buffer_load(dst, src->base, len), HERD_SUCCESS);
}

static void test_request(void **state)
{
    opal_buffer_t b, c;
    char *host = NULL;
    opal_buffer_init(&b);
    assert_int_equal(orte_dvm_rejoin_request_pack(&b, "node17"), HERD_SUCCESS);
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_request_unpack(&c, &host), HERD_SUCCESS);
    assert_string_equal(host, "node17");
    free(host);
    /* every truncation fails */
    for (size_t len = 0; len < b.used; ++len) {
        opal_buffer_destruct(&c);
        load_prefix(&c, &b, len);
        host = NULL;
        assert_int_not_equal(orte_dvm_rejoin_request_unpack(&c, &host), HERD_SUCCESS);
        assert_null(host);
    }
    opal_buffer_destruct(&c);
    opal_buffer_destruct(&b);
    /* another version, an empty name, no name */
    opal_buffer_init(&b);
    opal_buffer_pack_uint32(&b, ORTE_DVM_REJOIN_VERSION + 1);
    opal_buffer_pack_string(&b, "node17");
    assert_int_equal(orte_dvm_rejoin_request_unpack(&b, &host), HERD_ERR_VERSION_MISMATCH);
    opal_buffer_destruct(&b);
    opal_buffer_init(&b);
    opal_buffer_pack_uint32(&b, ORTE_DVM_REJOIN_VERSION);
    opal_buffer_pack_string(&b, "");
    assert_int_equal(orte_dvm_rejoin_request_unpack(&b, &host), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
    opal_buffer_init(&b);
    opal_buffer_pack_uint32(&b, ORTE_DVM_REJOIN_VERSION);
    opal_buffer_pack_string(&b, NULL);
    assert_int_equal(orte_dvm_rejoin_request_unpack(&b, &host), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
}

static void test_answer(void **state)
{
    opal_buffer_t b, c;
    int status = 1;
    char *message = NULL;
    opal_buffer_init(&b);
    assert_int_equal(orte_dvm_rejoin_answer_pack(&b, HERD_ERR_TIMEOUT, "did not join"),
                     HERD_SUCCESS);
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_answer_unpack(&c, &status, &message), HERD_SUCCESS);
    assert_int_equal(status, HERD_ERR_TIMEOUT);
    assert_string_equal(message, "did not join");
    free(message);
    opal_buffer_destruct(&c);
    load_prefix(&c, &b, b.used - 1);
    assert_int_not_equal(orte_dvm_rejoin_answer_unpack(&c, &status, &message), HERD_SUCCESS);
    opal_buffer_destruct(&c);
    opal_buffer_destruct(&b);
    /* a positive status is none of ours */
    opal_buffer_init(&b);
    assert_int_equal(orte_dvm_rejoin_answer_pack(&b, 5, "?"), HERD_SUCCESS);
    assert_int_equal(orte_dvm_rejoin_answer_unpack(&b, &status, &message), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
}

static void test_hello_and_node_up(void **state)
{
    opal_buffer_t b, c;
    void *inv = NULL;
    size_t len = 0;
    orte_vpid_t vpid = 0;
    opal_buffer_init(&b);
    assert_int_equal(orte_dvm_rejoin_hello_pack(&b, "inventory", 9), HERD_SUCCESS);
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_hello_unpack(&c, &inv, &len), HERD_SUCCESS);
    assert_int_equal(len, 9);
    assert_memory_equal(inv, "inventory", 9);
    free(inv);
    opal_buffer_destruct(&c);
    opal_buffer_destruct(&b);
    /* an empty inventory is no inventory */
    opal_buffer_init(&b);
    assert_int_equal(orte_dvm_rejoin_hello_pack(&b, NULL, 0), HERD_SUCCESS);
    assert_int_equal(orte_dvm_rejoin_hello_unpack(&b, &inv, &len), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);

    opal_buffer_init(&b);
    assert_int_equal(orte_dvm_rejoin_node_up_pack(&b, 3, "inv3", 4), HERD_SUCCESS);
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_node_up_unpack(&c, 5, &vpid, &inv, &len), HERD_SUCCESS);
    assert_int_equal(vpid, 3);
    assert_int_equal(len, 4);
    free(inv);
    opal_buffer_destruct(&c);
    /* vpid 3 is outside a DVM of 3 daemons (0..2); the root (0) never rejoins */
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_node_up_unpack(&c, 3, &vpid, &inv, &len),
                     HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&c);
    for (size_t cut = 0; cut < b.used; ++cut) {
        load_prefix(&c, &b, cut);
        assert_int_not_equal(orte_dvm_rejoin_node_up_unpack(&c, 5, &vpid, &inv, &len),
                             HERD_SUCCESS);
        opal_buffer_destruct(&c);
    }
    /* trailing bytes */
    opal_buffer_pack_uint8(&b, 0);
    assert_int_equal(orte_dvm_rejoin_node_up_unpack(&b, 5, &vpid, &inv, &len),
                     HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
}

static void pack_ack(opal_buffer_t *b)
{
    orte_vpid_t down[] = {2, 4};
    uint8_t *invs[] = {(uint8_t *) "n1", (uint8_t *) "n2", (uint8_t *) "n3", (uint8_t *) "n4"};
    size_t lengths[] = {2, 2, 2, 2};
    orte_dvm_rejoin_ack_t ack = {.next_command = 9,
                                 .num_down = 2,
                                 .down = down,
                                 .num_nodes = 4,
                                 .inventories = invs,
                                 .lengths = lengths};
    opal_buffer_init(b);
    assert_int_equal(orte_dvm_rejoin_ack_pack(b, &ack), HERD_SUCCESS);
}

static void test_ack(void **state)
{
    opal_buffer_t b, c;
    orte_dvm_rejoin_ack_t *ack = NULL;
    pack_ack(&b);
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_ack_unpack(&c, 5, &ack), HERD_SUCCESS);
    assert_int_equal(ack->next_command, 9);
    assert_int_equal(ack->num_down, 2);
    assert_int_equal(ack->down[1], 4);
    assert_int_equal(ack->num_nodes, 4);
    assert_memory_equal(ack->inventories[3], "n4", 2);
    orte_dvm_rejoin_ack_free(ack);
    opal_buffer_destruct(&c);
    /* the wrong DVM size: the node count does not match; a down vpid out of range */
    load_prefix(&c, &b, b.used);
    ack = NULL;
    assert_int_equal(orte_dvm_rejoin_ack_unpack(&c, 6, &ack), HERD_ERR_UNPACK_FAILURE);
    assert_null(ack);
    opal_buffer_destruct(&c);
    load_prefix(&c, &b, b.used);
    assert_int_equal(orte_dvm_rejoin_ack_unpack(&c, 4, &ack), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&c);
    for (size_t cut = 0; cut < b.used; ++cut) {
        load_prefix(&c, &b, cut);
        assert_int_not_equal(orte_dvm_rejoin_ack_unpack(&c, 5, &ack), HERD_SUCCESS);
        assert_null(ack);
        opal_buffer_destruct(&c);
    }
    opal_buffer_destruct(&b);
    /* a count of down daemons the message cannot hold: refused before allocating */
    opal_buffer_init(&b);
    opal_buffer_pack_uint32(&b, ORTE_DVM_REJOIN_VERSION);
    opal_buffer_pack_uint32(&b, 9);
    opal_buffer_pack_uint32(&b, 0xfffffff0u);
    assert_int_equal(orte_dvm_rejoin_ack_unpack(&b, UINT32_MAX, &ack), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
    /* a huge node count in a short message */
    opal_buffer_init(&b);
    opal_buffer_pack_uint32(&b, ORTE_DVM_REJOIN_VERSION);
    opal_buffer_pack_uint32(&b, 9);
    opal_buffer_pack_uint32(&b, 0);
    opal_buffer_pack_uint32(&b, 0x7ffffffeu);
    assert_int_equal(orte_dvm_rejoin_ack_unpack(&b, 0x7fffffffu, &ack), HERD_ERR_UNPACK_FAILURE);
    opal_buffer_destruct(&b);
    /* another version */
    opal_buffer_init(&b);
    opal_buffer_pack_uint32(&b, ORTE_DVM_REJOIN_VERSION + 1);
    assert_int_equal(orte_dvm_rejoin_ack_unpack(&b, 5, &ack), HERD_ERR_VERSION_MISMATCH);
    opal_buffer_destruct(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_answer),
        cmocka_unit_test(test_hello_and_node_up),
        cmocka_unit_test(test_ack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
