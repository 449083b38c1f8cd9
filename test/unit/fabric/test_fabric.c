/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric framework: record helpers, the versioned wire format (round trip, truncation,
 * corruption, bad versions), and what the tcp, ofi and ucx components find on this machine. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/mca/mca.h"
#include "support/capture.h"

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static herd_test_capture_t stderr_capture;

static const char *const fabric_test_variables[] = {
    "HERD_MCA_fabric",
    "HERD_MCA_fabric_tcp_if_include",
    "HERD_MCA_fabric_tcp_if_exclude",
    "HERD_MCA_fabric_tcp_priority",
    "HERD_MCA_fabric_ofi_provider_include",
    "HERD_MCA_fabric_ofi_provider_exclude",
    NULL,
};

static int setup(void **state)
{
    for (size_t i = 0; NULL != fabric_test_variables[i]; i++) {
        unsetenv(fabric_test_variables[i]);
    }
    return 0;
}

static int teardown(void **state)
{
    opal_fabric_base_close();
    return setup(state);
}

/* A record with a bit of everything: record attrs, a device with repeated keys and an empty
 * value, a device without attributes. */
static opal_fabric_record_t *sample_record(void)
{
    opal_fabric_record_t *record = opal_fabric_record_new("sample");
    opal_fabric_device_t *device;

    assert_non_null(record);
    assert_int_equal(opal_fabric_record_add_attr(record, "version", "1.2.3"), HERD_SUCCESS);
    assert_int_equal(opal_fabric_record_add_attr(record, "note", ""), HERD_SUCCESS);
    device = opal_fabric_record_add_device(record, "eth0", "interface");
    assert_non_null(device);
    assert_int_equal(opal_fabric_device_add_attr(device, "addr", "10.0.0.1/24"), HERD_SUCCESS);
    assert_int_equal(opal_fabric_device_add_attr(device, "addr", "fd00::1/64"), HERD_SUCCESS);
    assert_int_equal(opal_fabric_device_add_attr(device, "mtu", "9000"), HERD_SUCCESS);
    device = opal_fabric_record_add_device(record, "tcp/lo", "transport");
    assert_non_null(device);
    return record;
}

static void assert_attrs_equal(const opal_fabric_attr_t *a, uint32_t num_a,
                               const opal_fabric_attr_t *b, uint32_t num_b)
{
    assert_int_equal(num_a, num_b);
    for (uint32_t i = 0; i < num_a; i++) {
        assert_string_equal(a[i].key, b[i].key);
        assert_string_equal(a[i].value, b[i].value);
    }
}

static void assert_records_equal(const opal_fabric_record_t *a, const opal_fabric_record_t *b)
{
    assert_string_equal(a->component, b->component);
    assert_attrs_equal(a->attrs, a->num_attrs, b->attrs, b->num_attrs);
    assert_int_equal(a->num_devices, b->num_devices);
    for (uint32_t i = 0; i < a->num_devices; i++) {
        assert_string_equal(a->devices[i].name, b->devices[i].name);
        assert_string_equal(a->devices[i].kind, b->devices[i].kind);
        assert_attrs_equal(a->devices[i].attrs, a->devices[i].num_attrs, b->devices[i].attrs,
                           b->devices[i].num_attrs);
    }
}

static void load_bytes(opal_buffer_t *buffer, const opal_buffer_t *from, size_t length)
{
    opal_buffer_init(buffer);
    assert_int_equal(opal_buffer_load(buffer, from->base, length), HERD_SUCCESS);
}

/* Whether the device has key=value among its attributes (keys may repeat). */
static bool device_has(const opal_fabric_device_t *device, const char *key, const char *value)
{
    for (uint32_t i = 0; i < device->num_attrs; i++) {
        if (0 == strcmp(device->attrs[i].key, key) && 0 == strcmp(device->attrs[i].value, value)) {
            return true;
        }
    }
    return false;
}

static bool component_is_built(const char *name)
{
    opal_mca_framework_t *fw = &opal_fabric_base_framework;
    bool found = false;

    assert_int_equal(opal_mca_framework_register(fw), HERD_SUCCESS);
    for (size_t i = 0; i < fw->num_components; i++) {
        found = found || 0 == strcmp(fw->components[i].component->name, name);
    }
    opal_mca_framework_close(fw);
    return found;
}

static bool component_is_selected(const char *name)
{
    const opal_mca_framework_t *fw = &opal_fabric_base_framework;

    for (size_t i = 0; i < fw->num_selected; i++) {
        if (0 == strcmp(fw->selected[i]->component->name, name)) {
            return true;
        }
    }
    return false;
}

/* Opens the framework with the given selection (NULL: all), discovers, closes; returns the one
 * record of component name, which must be there. */
static opal_fabric_record_t *discover_component(const char *selection, const char *name)
{
    opal_fabric_record_t **records = NULL;
    opal_fabric_record_t *found = NULL;
    size_t num_records = 0;

    if (NULL != selection) {
        setenv("HERD_MCA_fabric", selection, 1);
    }
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    assert_int_equal(opal_fabric_base_discover(&records, &num_records), HERD_SUCCESS);
    for (size_t i = 0; i < num_records; i++) {
        if (0 == strcmp(records[i]->component, name)) {
            assert_null(found);
            found = records[i];
            records[i] = NULL;
        }
    }
    opal_fabric_records_free(records, num_records);
    opal_fabric_base_close();
    assert_non_null(found);
    return found;
}

/* Whether provider ("tcp;ofi_rxm") has layer among its ';'-separated parts. */
static bool provider_has_layer(const char *provider, const char *layer)
{
    size_t length = strlen(layer);

    for (const char *part = provider; NULL != part; part = strchr(part, ';')) {
        if (';' == *part) {
            part++;
        }
        if (0 == strncmp(part, layer, length) && (';' == part[length] || '\0' == part[length])) {
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------------------------------ */
/* record helpers */

static void test_record_helpers(void **state)
{
    opal_fabric_record_t *record;
    opal_fabric_record_t *copy = NULL;
    opal_fabric_device_t *device;

    assert_null(opal_fabric_record_new(NULL));
    assert_null(opal_fabric_record_new(""));
    record = opal_fabric_record_new("tcp");
    assert_non_null(record);
    assert_string_equal(record->component, "tcp");
    assert_int_equal(record->num_devices, 0);
    assert_int_equal(record->num_attrs, 0);

    assert_int_equal(opal_fabric_record_add_attr(record, NULL, "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_fabric_record_add_attr(record, "", "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_fabric_record_add_attr(record, "key", NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_fabric_record_add_attr(NULL, "key", "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(record->num_attrs, 0);
    assert_int_equal(opal_fabric_record_add_attr(record, "version", "2"), HERD_SUCCESS);
    assert_string_equal(opal_fabric_record_get_attr(record, "version"), "2");
    assert_null(opal_fabric_record_get_attr(record, "missing"));

    assert_null(opal_fabric_record_add_device(record, NULL, "interface"));
    assert_null(opal_fabric_record_add_device(record, "eth0", ""));
    assert_null(opal_fabric_record_add_device(NULL, "eth0", "interface"));
    assert_int_equal(record->num_devices, 0);
    device = opal_fabric_record_add_device(record, "lo", "interface");
    assert_non_null(device);
    assert_int_equal(opal_fabric_device_add_attr(device, "addr", "127.0.0.1/8"), HERD_SUCCESS);
    assert_int_equal(opal_fabric_device_add_attr(device, "addr", "::1/128"), HERD_SUCCESS);
    assert_int_equal(opal_fabric_device_add_attr(device, "", "x"), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_fabric_device_add_attr(NULL, "k", "x"), HERD_ERR_BAD_PARAM);
    assert_non_null(opal_fabric_record_add_device(record, "eth0", "interface"));

    assert_int_equal(record->num_devices, 2);
    assert_non_null(opal_fabric_record_find_device(record, "eth0"));
    assert_null(opal_fabric_record_find_device(record, "eth1"));
    device = &record->devices[0];
    assert_string_equal(device->name, "lo");
    assert_string_equal(device->kind, "interface");
    assert_int_equal(device->num_attrs, 2);
    /* the first of repeated keys */
    assert_string_equal(opal_fabric_device_get_attr(device, "addr"), "127.0.0.1/8");

    assert_int_equal(opal_fabric_record_copy(NULL, &copy), HERD_ERR_BAD_PARAM);
    assert_null(copy);
    assert_int_equal(opal_fabric_record_copy(record, &copy), HERD_SUCCESS);
    assert_non_null(copy);
    assert_ptr_not_equal(copy->devices, record->devices);
    assert_records_equal(record, copy);

    opal_fabric_record_free(record);
    opal_fabric_record_free(copy);
    opal_fabric_record_free(NULL);
    opal_fabric_records_free(NULL, 0);
}

static void test_record_limits(void **state)
{
    opal_fabric_record_t *record = opal_fabric_record_new("many");
    opal_fabric_device_t *device;
    char name[32];

    assert_non_null(record);
    device = opal_fabric_record_add_device(record, "dev", "interface");
    assert_non_null(device);
    for (unsigned i = 0; i < OPAL_FABRIC_MAX_ATTRS; i++) {
        assert_int_equal(opal_fabric_device_add_attr(device, "k", "v"), HERD_SUCCESS);
    }
    assert_int_equal(opal_fabric_device_add_attr(device, "k", "v"), HERD_ERR_OUT_OF_RESOURCE);
    assert_int_equal(device->num_attrs, OPAL_FABRIC_MAX_ATTRS);
    for (unsigned i = 1; i < OPAL_FABRIC_MAX_DEVICES; i++) {
        snprintf(name, sizeof(name), "dev%u", i);
        assert_non_null(opal_fabric_record_add_device(record, name, "interface"));
    }
    assert_null(opal_fabric_record_add_device(record, "one-too-many", "interface"));
    assert_int_equal(record->num_devices, OPAL_FABRIC_MAX_DEVICES);
    opal_fabric_record_free(record);
}

static void test_print(void **state)
{
    opal_fabric_record_t *record = sample_record();
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);

    assert_non_null(stream);
    opal_fabric_record_print(stream, record);
    fclose(stream);
    assert_string_equal(text, "component sample (2 devices)\n"
                              "    version: 1.2.3\n"
                              "    note: \n"
                              "    device eth0 (interface)\n"
                              "        addr: 10.0.0.1/24\n"
                              "        addr: fd00::1/64\n"
                              "        mtu: 9000\n"
                              "    device tcp/lo (transport)\n");
    free(text);
    opal_fabric_record_free(record);
}

/* ------------------------------------------------------------------------------------------ */
/* wire format */

static void test_pack_unpack_round_trip(void **state)
{
    opal_fabric_record_t *record = sample_record();
    opal_fabric_record_t *second = opal_fabric_record_new("empty");
    opal_fabric_record_t *out = NULL;
    opal_buffer_t buffer;

    assert_non_null(second);
    opal_buffer_init(&buffer);
    /* records follow each other in one inventory message */
    assert_int_equal(opal_fabric_record_pack(&buffer, record), HERD_SUCCESS);
    assert_int_equal(opal_fabric_record_pack(&buffer, second), HERD_SUCCESS);

    assert_int_equal(opal_fabric_record_unpack(&buffer, &out), HERD_SUCCESS);
    assert_non_null(out);
    assert_records_equal(record, out);
    opal_fabric_record_free(out);
    out = NULL;
    assert_int_equal(opal_fabric_record_unpack(&buffer, &out), HERD_SUCCESS);
    assert_records_equal(second, out);
    opal_fabric_record_free(out);
    out = NULL;
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    assert_int_not_equal(opal_fabric_record_unpack(&buffer, &out), HERD_SUCCESS);
    assert_null(out);

    assert_int_equal(opal_fabric_record_pack(NULL, record), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_fabric_record_pack(&buffer, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(opal_fabric_record_unpack(&buffer, NULL), HERD_ERR_BAD_PARAM);
    opal_buffer_destruct(&buffer);
    opal_fabric_record_free(record);
    opal_fabric_record_free(second);
}

/* A record that breaks the rules is refused whole, and nothing of it is left in the buffer. */
static void test_pack_refuses_invalid_record(void **state)
{
    opal_fabric_record_t *record = sample_record();
    opal_buffer_t buffer;
    char *saved_key;
    uint32_t saved_count;

    opal_buffer_init(&buffer);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, 7), HERD_SUCCESS);
    size_t used = buffer.used;

    saved_key = record->devices[0].attrs[1].key;
    record->devices[0].attrs[1].key = NULL;
    assert_int_equal(opal_fabric_record_pack(&buffer, record), HERD_ERR_BAD_PARAM);
    record->devices[0].attrs[1].key = saved_key;
    assert_int_equal(buffer.used, used);

    saved_count = record->num_devices;
    record->num_devices = OPAL_FABRIC_MAX_DEVICES + 1;
    assert_int_equal(opal_fabric_record_pack(&buffer, record), HERD_ERR_BAD_PARAM);
    record->num_devices = saved_count;
    assert_int_equal(buffer.used, used);

    assert_int_equal(opal_fabric_record_pack(&buffer, record), HERD_SUCCESS);
    opal_buffer_destruct(&buffer);
    opal_fabric_record_free(record);
}

static void test_unpack_every_truncation(void **state)
{
    opal_fabric_record_t *record = sample_record();
    opal_buffer_t packed;

    opal_buffer_init(&packed);
    assert_int_equal(opal_fabric_record_pack(&packed, record), HERD_SUCCESS);
    for (size_t length = 0; length < packed.used; length++) {
        opal_fabric_record_t *out = NULL;
        opal_buffer_t cut;
        int rc;

        load_bytes(&cut, &packed, length);
        rc = opal_fabric_record_unpack(&cut, &out);
        if (HERD_SUCCESS == rc) {
            fail_msg("a record cut to %zu of %zu bytes was accepted", length, packed.used);
        }
        assert_null(out);
        /* a failed unpack leaves the position where it was */
        assert_int_equal(opal_buffer_remaining(&cut), length);
        opal_buffer_destruct(&cut);
    }
    opal_buffer_destruct(&packed);
    opal_fabric_record_free(record);
}

static void test_unpack_bad_version(void **state)
{
    const uint32_t versions[] = {0, OPAL_FABRIC_RECORD_FORMAT_VERSION + 1, UINT32_MAX};

    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        opal_fabric_record_t *out = NULL;
        opal_buffer_t buffer;

        opal_buffer_init(&buffer);
        assert_int_equal(opal_buffer_pack_uint32(&buffer, versions[i]), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_string(&buffer, "tcp"), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_uint32(&buffer, 0), HERD_SUCCESS);
        assert_int_equal(opal_buffer_pack_uint32(&buffer, 0), HERD_SUCCESS);
        assert_int_equal(opal_fabric_record_unpack(&buffer, &out), HERD_ERR_VERSION_MISMATCH);
        assert_null(out);
        opal_buffer_destruct(&buffer);
    }
}

/* Hand-made buffers: each is well-formed for the buffer layer but breaks a record rule. */
static void test_unpack_malformed(void **state)
{
    enum {
        NULL_COMPONENT,
        EMPTY_COMPONENT,
        TOO_MANY_ATTRS,
        EMPTY_KEY,
        NULL_VALUE,
        TOO_MANY_DEVICES,
        EMPTY_DEVICE_NAME,
        NULL_KIND,
        WRONG_TYPE,
        CASES
    };

    for (int which = 0; which < CASES; which++) {
        opal_fabric_record_t *out = NULL;
        opal_buffer_t buffer;
        int rc;

        opal_buffer_init(&buffer);
        assert_int_equal(opal_buffer_pack_uint32(&buffer, OPAL_FABRIC_RECORD_FORMAT_VERSION),
                         HERD_SUCCESS);
        if (WRONG_TYPE == which) {
            assert_int_equal(opal_buffer_pack_uint64(&buffer, 1), HERD_SUCCESS);
        } else {
            opal_buffer_pack_string(&buffer, NULL_COMPONENT == which    ? NULL
                                             : EMPTY_COMPONENT == which ? ""
                                                                        : "tcp");
        }
        if (TOO_MANY_ATTRS == which) {
            opal_buffer_pack_uint32(&buffer, OPAL_FABRIC_MAX_ATTRS + 1);
        } else {
            opal_buffer_pack_uint32(&buffer, 1);
        }
        opal_buffer_pack_string(&buffer, EMPTY_KEY == which ? "" : "version");
        opal_buffer_pack_string(&buffer, NULL_VALUE == which ? NULL : "1");
        opal_buffer_pack_uint32(&buffer,
                                TOO_MANY_DEVICES == which ? OPAL_FABRIC_MAX_DEVICES + 1 : 1);
        opal_buffer_pack_string(&buffer, EMPTY_DEVICE_NAME == which ? "" : "lo");
        opal_buffer_pack_string(&buffer, NULL_KIND == which ? NULL : "interface");
        opal_buffer_pack_uint32(&buffer, 0);

        rc = opal_fabric_record_unpack(&buffer, &out);
        if (HERD_SUCCESS == rc) {
            fail_msg("malformed record %d was accepted", which);
        }
        assert_null(out);
        assert_int_equal(buffer.unpack_offset, 0);
        opal_buffer_destruct(&buffer);
    }
}

/* Every byte of a packed record corrupted in a few ways: unpack may accept a record whose text
 * changed, but must never crash, over-read (valgrind) or leak. */
static void test_unpack_corrupted_bytes(void **state)
{
    const uint8_t flips[] = {0x01, 0x80, 0xff};
    opal_fabric_record_t *record = sample_record();
    opal_buffer_t packed;
    size_t accepted = 0;
    size_t refused = 0;

    opal_buffer_init(&packed);
    assert_int_equal(opal_fabric_record_pack(&packed, record), HERD_SUCCESS);
    for (size_t at = 0; at < packed.used; at++) {
        for (size_t f = 0; f < sizeof(flips); f++) {
            opal_fabric_record_t *out = NULL;
            opal_buffer_t bad;

            load_bytes(&bad, &packed, packed.used);
            bad.base[at] ^= flips[f];
            if (HERD_SUCCESS == opal_fabric_record_unpack(&bad, &out)) {
                assert_non_null(out);
                opal_fabric_record_free(out);
                accepted++;
            } else {
                assert_null(out);
                refused++;
            }
            opal_buffer_destruct(&bad);
        }
    }
    /* corrupting the version or a type tag alone must be caught */
    assert_true(refused > 0);
    assert_int_equal(accepted + refused, packed.used * sizeof(flips));
    opal_buffer_destruct(&packed);
    opal_fabric_record_free(record);
}

/* ------------------------------------------------------------------------------------------ */
/* framework and components on this machine */

static void test_discover_before_open(void **state)
{
    opal_fabric_record_t **records = NULL;
    size_t num_records = 0;

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(opal_fabric_base_discover(&records, &num_records), HERD_ERR_BAD_PARAM);
    free(herd_test_capture_stop(&stderr_capture));
    assert_null(records);
}

static void test_tcp_finds_loopback(void **state)
{
    const opal_fabric_device_t *lo;
    opal_fabric_record_t *record;
    const char *text;

    setenv("HERD_MCA_fabric", "tcp", 1);
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    assert_int_equal(opal_fabric_base_framework.num_selected, 1);
    assert_true(component_is_selected("tcp"));
    opal_fabric_base_close();

    record = discover_component("tcp", "tcp");
    lo = opal_fabric_record_find_device(record, "lo");
    assert_non_null(lo);
    assert_string_equal(lo->kind, "interface");
    assert_true(device_has(lo, "addr", "127.0.0.1/8"));
    text = opal_fabric_device_get_attr(lo, "flags");
    assert_non_null(text);
    assert_non_null(strstr(text, "up"));
    assert_non_null(strstr(text, "loopback"));
    text = opal_fabric_device_get_attr(lo, "mtu");
    assert_non_null(text);
    assert_true(atoi(text) > 0);
    text = opal_fabric_device_get_attr(lo, "index");
    assert_non_null(text);
    assert_true(atoi(text) > 0);
    for (uint32_t i = 0; i < record->num_devices; i++) {
        assert_string_equal(record->devices[i].kind, "interface");
    }
    opal_fabric_record_free(record);
}

static void test_tcp_if_include(void **state)
{
    opal_fabric_record_t *record;

    setenv("HERD_MCA_fabric_tcp_if_include", "lo", 1);
    record = discover_component("tcp", "tcp");
    assert_int_equal(record->num_devices, 1);
    assert_string_equal(record->devices[0].name, "lo");
    opal_fabric_record_free(record);

    /* a subnet selects the interfaces holding an address inside it */
    setenv("HERD_MCA_fabric_tcp_if_include", " 127.0.0.0/8 ", 1);
    record = discover_component("tcp", "tcp");
    assert_non_null(opal_fabric_record_find_device(record, "lo"));
    for (uint32_t i = 0; i < record->num_devices; i++) {
        bool inside = false;

        for (uint32_t j = 0; j < record->devices[i].num_attrs; j++) {
            const opal_fabric_attr_t *attr = &record->devices[i].attrs[j];

            inside =
                inside || (0 == strcmp(attr->key, "addr") && 0 == strncmp(attr->value, "127.", 4));
        }
        assert_true(inside);
    }
    opal_fabric_record_free(record);
}

static void test_tcp_if_exclude(void **state)
{
    opal_fabric_record_t **records = NULL;
    size_t num_records = 0;
    int rc;

    setenv("HERD_MCA_fabric", "tcp", 1);
    setenv("HERD_MCA_fabric_tcp_if_exclude", "lo,::1/128", 1);
    rc = opal_fabric_base_open();
    if (HERD_ERR_NOT_FOUND == rc) {
        /* a host whose only interface is lo has nothing left to report */
        return;
    }
    assert_int_equal(rc, HERD_SUCCESS);
    assert_int_equal(opal_fabric_base_discover(&records, &num_records), HERD_SUCCESS);
    assert_int_equal(num_records, 1);
    assert_null(opal_fabric_record_find_device(records[0], "lo"));
    assert_true(records[0]->num_devices > 0);
    opal_fabric_records_free(records, num_records);
}

/* Both lists set: an error naming both variables and where each was set; tcp is not used. */
static void test_tcp_include_and_exclude(void **state)
{
    char *text;
    int rc;

    setenv("HERD_MCA_fabric", "tcp", 1);
    setenv("HERD_MCA_fabric_tcp_if_include", "lo", 1);
    setenv("HERD_MCA_fabric_tcp_if_exclude", "eth0", 1);
    herd_test_capture_start(&stderr_capture);
    rc = opal_fabric_base_open();
    text = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_false(opal_fabric_base_framework.opened);
    assert_non_null(strstr(text, "fabric_tcp_if_include"));
    assert_non_null(strstr(text, "fabric_tcp_if_exclude"));
    assert_non_null(strstr(text, "HERD_MCA_fabric_tcp_if_exclude"));
    assert_non_null(strstr(text, "\"eth0\""));
    free(text);
}

static void test_tcp_bad_entry(void **state)
{
    const char *const bad[] = {"10.0.0.0/33", "fd00::/129", "10.0.0.0/",
                               "10.0.0.0/8x", "no/such",    "an-interface-name-far-too-long"};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *text;
        int rc;

        setenv("HERD_MCA_fabric", "tcp", 1);
        setenv("HERD_MCA_fabric_tcp_if_include", bad[i], 1);
        herd_test_capture_start(&stderr_capture);
        rc = opal_fabric_base_open();
        text = herd_test_capture_stop(&stderr_capture);
        assert_int_equal(rc, HERD_ERR_NOT_FOUND);
        if (NULL == strstr(text, bad[i]) || NULL == strstr(text, "fabric_tcp_if_include")) {
            fail_msg("entry \"%s\" was not reported: %s", bad[i], text);
        }
        free(text);
    }
}

static void test_tcp_include_matches_nothing(void **state)
{
    char *text;
    int rc;

    setenv("HERD_MCA_fabric", "tcp", 1);
    setenv("HERD_MCA_fabric_tcp_if_include", "nosuchif0,198.51.100.254/32", 1);
    herd_test_capture_start(&stderr_capture);
    rc = opal_fabric_base_open();
    text = herd_test_capture_stop(&stderr_capture);
    assert_int_equal(rc, HERD_ERR_NOT_FOUND);
    assert_non_null(strstr(text, "nosuchif0"));
    free(text);
}

static void test_ofi_finds_provider(void **state)
{
    opal_fabric_record_t *record;
    bool ip_provider = false;

    if (!component_is_built("ofi")) {
        skip(); /* configure found no libfabric */
    }
    record = discover_component("ofi", "ofi");
    assert_non_null(opal_fabric_record_get_attr(record, "version"));
    assert_true(record->num_devices > 0);
    for (uint32_t i = 0; i < record->num_devices; i++) {
        const opal_fabric_device_t *device = &record->devices[i];
        const char *provider = opal_fabric_device_get_attr(device, "provider");
        const char *ep_type = opal_fabric_device_get_attr(device, "ep_type");
        const char *assignable = opal_fabric_device_get_attr(device, "assignable");

        assert_string_equal(device->kind, "provider");
        assert_non_null(provider);
        assert_non_null(opal_fabric_device_get_attr(device, "fabric"));
        assert_non_null(opal_fabric_device_get_attr(device, "domain"));
        assert_non_null(opal_fabric_device_get_attr(device, "caps"));
        assert_non_null(opal_fabric_device_get_attr(device, "addr_format"));
        assert_non_null(ep_type);
        assert_non_null(assignable);
        if (device_has(device, "addr_format", "FI_SOCKADDR_IN") ||
            device_has(device, "addr_format", "FI_SOCKADDR_IN6")) {
            assert_string_equal(assignable, "yes");
        }
        ip_provider = ip_provider || provider_has_layer(provider, "tcp") ||
                      provider_has_layer(provider, "sockets") ||
                      provider_has_layer(provider, "udp");
        /* one device per (provider, fabric, domain, endpoint type) */
        for (uint32_t j = 0; j < i; j++) {
            assert_string_not_equal(record->devices[j].name, device->name);
        }
    }
    assert_true(ip_provider);
    opal_fabric_record_free(record);
}

static void test_ofi_provider_lists(void **state)
{
    opal_fabric_record_t *record;

    if (!component_is_built("ofi")) {
        skip();
    }
    setenv("HERD_MCA_fabric_ofi_provider_exclude", "tcp", 1);
    record = discover_component("ofi", "ofi");
    for (uint32_t i = 0; i < record->num_devices; i++) {
        assert_false(provider_has_layer(
            opal_fabric_device_get_attr(&record->devices[i], "provider"), "tcp"));
    }
    opal_fabric_record_free(record);
    unsetenv("HERD_MCA_fabric_ofi_provider_exclude");

    setenv("HERD_MCA_fabric_ofi_provider_include", "udp,tcp", 1);
    record = discover_component("ofi", "ofi");
    for (uint32_t i = 0; i < record->num_devices; i++) {
        const char *provider = opal_fabric_device_get_attr(&record->devices[i], "provider");

        assert_true(provider_has_layer(provider, "udp") || provider_has_layer(provider, "tcp"));
    }
    opal_fabric_record_free(record);
}

static void test_ucx_finds_transport(void **state)
{
    opal_fabric_record_t *record;
    const char *size;
    char name[256];

    if (!component_is_built("ucx")) {
        skip(); /* configure found no UCX */
    }
    record = discover_component("ucx", "ucx");
    assert_non_null(opal_fabric_record_get_attr(record, "version"));
    size = opal_fabric_record_get_attr(record, "worker_address_size");
    assert_non_null(size);
    assert_true(atoi(size) > 0);
    assert_true(record->num_devices > 0);
    for (uint32_t i = 0; i < record->num_devices; i++) {
        const opal_fabric_device_t *device = &record->devices[i];
        const char *transport = opal_fabric_device_get_attr(device, "transport");
        const char *dev = opal_fabric_device_get_attr(device, "device");

        assert_string_equal(device->kind, "transport");
        assert_non_null(transport);
        assert_non_null(dev);
        assert_non_null(opal_fabric_device_get_attr(device, "dev_type"));
        snprintf(name, sizeof(name), "%s/%s", transport, dev);
        assert_string_equal(device->name, name);
    }
    opal_fabric_record_free(record);
}

static void test_exclude_ucx(void **state)
{
    opal_fabric_record_t **records = NULL;
    size_t num_records = 0;

    if (!component_is_built("ucx")) {
        skip();
    }
    setenv("HERD_MCA_fabric", "^ucx", 1);
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    assert_false(component_is_selected("ucx"));
    assert_true(component_is_selected("tcp"));
    assert_int_equal(opal_fabric_base_discover(&records, &num_records), HERD_SUCCESS);
    assert_true(num_records > 0);
    for (size_t i = 0; i < num_records; i++) {
        assert_string_not_equal(records[i]->component, "ucx");
    }
    opal_fabric_records_free(records, num_records);
}

/* Every available component reports, in selection order (highest priority first). */
static void test_discover_all_in_priority_order(void **state)
{
    const opal_mca_framework_t *fw = &opal_fabric_base_framework;
    opal_fabric_record_t **records = NULL;
    size_t num_records = 0;

    setenv("HERD_MCA_fabric_tcp_priority", "99", 1);
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    /* a second open is harmless and needs no second close */
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    assert_int_equal(opal_fabric_base_discover(&records, &num_records), HERD_SUCCESS);
    assert_int_equal(num_records, fw->num_selected);
    for (size_t i = 0; i < num_records; i++) {
        assert_string_equal(records[i]->component, fw->selected[i]->component->name);
        if (i > 0) {
            assert_true(fw->selected[i - 1]->priority >= fw->selected[i]->priority);
        }
    }
    assert_string_equal(records[0]->component, "tcp");
    opal_fabric_records_free(records, num_records);
    opal_fabric_base_close();
    assert_false(fw->opened);
}

/* A priority set for one open is not the default of the next (static components and ucx stay
 * loaded between opens, keeping their storage). */
static void test_priority_does_not_stick(void **state)
{
    const opal_mca_framework_t *fw = &opal_fabric_base_framework;

    setenv("HERD_MCA_fabric", "tcp", 1);
    setenv("HERD_MCA_fabric_tcp_priority", "77", 1);
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    assert_int_equal(fw->selected[0]->priority, 77);
    opal_fabric_base_close();
    unsetenv("HERD_MCA_fabric_tcp_priority");
    assert_int_equal(opal_fabric_base_open(), HERD_SUCCESS);
    assert_int_equal(fw->selected[0]->priority, 10);
}

/* ------------------------------------------------------------------------------------------ */
/* the per-boot cache */

/* A private TMPDIR for the cache tests, so that no real cache is read or touched. */
static char cache_tmpdir[64];

static int cache_setup(void **state)
{
    snprintf(cache_tmpdir, sizeof(cache_tmpdir), "/tmp/herd-fabric-cache-test.XXXXXX");
    assert_non_null(mkdtemp(cache_tmpdir));
    setenv("TMPDIR", cache_tmpdir, 1);
    unsetenv("HERD_FABRIC_CACHE");
    unsetenv("FI_HERD_TEST");
    return setup(state);
}

static int cache_teardown(void **state)
{
    char command[128];
    snprintf(command, sizeof(command), "rm -rf '%s'", cache_tmpdir);
    assert_int_equal(0, system(command));
    unsetenv("TMPDIR");
    unsetenv("HERD_FABRIC_CACHE");
    unsetenv("FI_HERD_TEST");
    return teardown(state);
}

/* The one cache file in the test's folder, or "" when there is none. */
static void cache_file(char *path, size_t size)
{
    char command[160];
    snprintf(command, sizeof(command), "ls %s/herd-*/fabric-v*.bin 2>/dev/null", cache_tmpdir);
    FILE *ls = popen(command, "r");
    assert_non_null(ls);
    if (NULL == fgets(path, (int) size, ls)) {
        path[0] = '\0';
    }
    path[strcspn(path, "\n")] = '\0';
    pclose(ls);
}

static void test_cache_round_trip(void **state)
{
    opal_fabric_record_t *records[2] = {sample_record(), sample_record()};
    opal_fabric_record_t **got = NULL;
    size_t num = 99;

    assert_int_equal(HERD_ERR_NOT_FOUND, opal_fabric_base_cache_load("all", &got, &num));
    opal_fabric_base_cache_store("all", records, 2);
    assert_int_equal(HERD_SUCCESS, opal_fabric_base_cache_load("all", &got, &num));
    assert_int_equal(2, num);
    for (size_t i = 0; i < num; i++) {
        assert_string_equal(records[i]->component, got[i]->component);
        assert_int_equal(records[i]->num_devices, got[i]->num_devices);
        assert_string_equal("10.0.0.1/24", opal_fabric_device_get_attr(&got[i]->devices[0], "addr"));
    }
    opal_fabric_records_free(got, num);
    /* other components asked, or another libfabric setting: not this file */
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_fabric_base_cache_load("tcp", &got, &num));
    setenv("FI_HERD_TEST", "1", 1);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_fabric_base_cache_load("all", &got, &num));
    unsetenv("FI_HERD_TEST");
    /* none found is an answer too */
    opal_fabric_base_cache_store("tcp", NULL, 0);
    assert_int_equal(HERD_SUCCESS, opal_fabric_base_cache_load("tcp", &got, &num));
    assert_int_equal(0, num);
    assert_null(got);
    opal_fabric_record_free(records[0]);
    opal_fabric_record_free(records[1]);
}

static void test_cache_off_and_corrupt(void **state)
{
    opal_fabric_record_t *record = sample_record();
    opal_fabric_record_t **got = NULL;
    size_t num = 0;
    char path[512];

    setenv("HERD_FABRIC_CACHE", "0", 1);
    opal_fabric_base_cache_store("all", &record, 1);
    cache_file(path, sizeof(path));
    assert_string_equal("", path); /* nothing written */
    unsetenv("HERD_FABRIC_CACHE");
    opal_fabric_base_cache_store("all", &record, 1);
    cache_file(path, sizeof(path));
    assert_string_not_equal("", path);
    setenv("HERD_FABRIC_CACHE", "0", 1);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_fabric_base_cache_load("all", &got, &num));
    unsetenv("HERD_FABRIC_CACHE");
    /* a damaged file is no answer: discovery runs again */
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    assert_int_equal(0, fseek(f, 30, SEEK_SET));
    assert_int_equal(4, fwrite("\xff\xff\xff\xff", 1, 4, f));
    fclose(f);
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_fabric_base_cache_load("all", &got, &num));
    assert_int_equal(0, truncate(path, 10));
    assert_int_equal(HERD_ERR_NOT_FOUND, opal_fabric_base_cache_load("all", &got, &num));
    opal_fabric_record_free(record);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_record_helpers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pack_unpack_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pack_refuses_invalid_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpack_every_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpack_bad_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpack_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpack_corrupted_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discover_before_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tcp_finds_loopback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tcp_if_include, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tcp_if_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tcp_include_and_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tcp_bad_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tcp_include_matches_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofi_finds_provider, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofi_provider_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ucx_finds_transport, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclude_ucx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discover_all_in_priority_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_does_not_stick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_round_trip, cache_setup, cache_teardown),
        cmocka_unit_test_setup_teardown(test_cache_off_and_corrupt, cache_setup, cache_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
