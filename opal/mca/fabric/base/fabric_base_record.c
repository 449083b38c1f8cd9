/* SPDX-License-Identifier: BSD-3-Clause */
/* Fabric records: building, copying, freeing, the versioned wire format for the node inventory,
 * and the human-readable form herd-info prints. */
#include "herd_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/dss/buffer.h"
#include "opal/mca/fabric/base/base.h"
#include "opal/mca/fabric/fabric.h"

static bool fabric_is_word(const char *text)
{
    return NULL != text && '\0' != text[0];
}

/* Appends a copy of key=value; the array is left as it was on failure. */
static int fabric_attrs_append(opal_fabric_attr_t **attrs, uint32_t *num_attrs, const char *key,
                               const char *value)
{
    opal_fabric_attr_t *grown;
    char *key_copy;
    char *value_copy;

    if (!fabric_is_word(key) || NULL == value) {
        return HERD_ERR_BAD_PARAM;
    }
    if (*num_attrs >= OPAL_FABRIC_MAX_ATTRS) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    key_copy = strdup(key);
    value_copy = strdup(value);
    if (NULL == key_copy || NULL == value_copy) {
        goto err_copies;
    }
    grown = realloc(*attrs, ((size_t) *num_attrs + 1) * sizeof(*grown));
    if (NULL == grown) {
        goto err_copies;
    }
    grown[*num_attrs].key = key_copy;
    grown[*num_attrs].value = value_copy;
    *attrs = grown;
    (*num_attrs)++;
    return HERD_SUCCESS;

err_copies:
    free(key_copy);
    free(value_copy);
    return HERD_ERR_OUT_OF_RESOURCE;
}

static void fabric_attrs_free(opal_fabric_attr_t *attrs, uint32_t num_attrs)
{
    for (uint32_t i = 0; i < num_attrs; i++) {
        free(attrs[i].key);
        free(attrs[i].value);
    }
    free(attrs);
}

static const char *fabric_attrs_get(const opal_fabric_attr_t *attrs, uint32_t num_attrs,
                                    const char *key)
{
    if (NULL == key) {
        return NULL;
    }
    for (uint32_t i = 0; i < num_attrs; i++) {
        if (NULL != attrs[i].key && 0 == strcmp(attrs[i].key, key)) {
            return attrs[i].value;
        }
    }
    return NULL;
}

opal_fabric_record_t *opal_fabric_record_new(const char *component)
{
    opal_fabric_record_t *record;

    if (!fabric_is_word(component)) {
        return NULL;
    }
    record = calloc(1, sizeof(*record));
    if (NULL == record) {
        return NULL;
    }
    record->component = strdup(component);
    if (NULL == record->component) {
        free(record);
        return NULL;
    }
    return record;
}

/* The returned device stays valid only until the next device is added (the array may move). */
opal_fabric_device_t *opal_fabric_record_add_device(opal_fabric_record_t *record, const char *name,
                                                    const char *kind)
{
    opal_fabric_device_t *grown;
    opal_fabric_device_t *device;
    char *name_copy;
    char *kind_copy;

    if (NULL == record || !fabric_is_word(name) || !fabric_is_word(kind) ||
        record->num_devices >= OPAL_FABRIC_MAX_DEVICES) {
        return NULL;
    }
    name_copy = strdup(name);
    kind_copy = strdup(kind);
    if (NULL == name_copy || NULL == kind_copy) {
        goto err_copies;
    }
    grown = realloc(record->devices, ((size_t) record->num_devices + 1) * sizeof(*grown));
    if (NULL == grown) {
        goto err_copies;
    }
    record->devices = grown;
    device = &grown[record->num_devices];
    device->name = name_copy;
    device->kind = kind_copy;
    device->attrs = NULL;
    device->num_attrs = 0;
    record->num_devices++;
    return device;

err_copies:
    free(name_copy);
    free(kind_copy);
    return NULL;
}

int opal_fabric_device_add_attr(opal_fabric_device_t *device, const char *key, const char *value)
{
    if (NULL == device) {
        return HERD_ERR_BAD_PARAM;
    }
    return fabric_attrs_append(&device->attrs, &device->num_attrs, key, value);
}

int opal_fabric_record_add_attr(opal_fabric_record_t *record, const char *key, const char *value)
{
    if (NULL == record) {
        return HERD_ERR_BAD_PARAM;
    }
    return fabric_attrs_append(&record->attrs, &record->num_attrs, key, value);
}

const char *opal_fabric_device_get_attr(const opal_fabric_device_t *device, const char *key)
{
    if (NULL == device) {
        return NULL;
    }
    return fabric_attrs_get(device->attrs, device->num_attrs, key);
}

const char *opal_fabric_record_get_attr(const opal_fabric_record_t *record, const char *key)
{
    if (NULL == record) {
        return NULL;
    }
    return fabric_attrs_get(record->attrs, record->num_attrs, key);
}

const opal_fabric_device_t *opal_fabric_record_find_device(const opal_fabric_record_t *record,
                                                           const char *name)
{
    if (NULL == record || NULL == name) {
        return NULL;
    }
    for (uint32_t i = 0; i < record->num_devices; i++) {
        if (NULL != record->devices[i].name && 0 == strcmp(record->devices[i].name, name)) {
            return &record->devices[i];
        }
    }
    return NULL;
}

void opal_fabric_record_free(opal_fabric_record_t *record)
{
    if (NULL == record) {
        return;
    }
    for (uint32_t i = 0; i < record->num_devices; i++) {
        free(record->devices[i].name);
        free(record->devices[i].kind);
        fabric_attrs_free(record->devices[i].attrs, record->devices[i].num_attrs);
    }
    free(record->devices);
    fabric_attrs_free(record->attrs, record->num_attrs);
    free(record->component);
    free(record);
}

void opal_fabric_records_free(opal_fabric_record_t **records, size_t num_records)
{
    if (NULL == records) {
        return;
    }
    for (size_t i = 0; i < num_records; i++) {
        opal_fabric_record_free(records[i]);
    }
    free(records);
}

int opal_fabric_record_copy(const opal_fabric_record_t *source, opal_fabric_record_t **copy)
{
    opal_fabric_record_t *record;
    int rc = HERD_ERR_OUT_OF_RESOURCE;

    if (NULL == source || NULL == copy) {
        return HERD_ERR_BAD_PARAM;
    }
    record = opal_fabric_record_new(source->component);
    if (NULL == record) {
        return fabric_is_word(source->component) ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < source->num_attrs; i++) {
        rc = opal_fabric_record_add_attr(record, source->attrs[i].key, source->attrs[i].value);
        if (HERD_SUCCESS != rc) {
            goto err_record;
        }
    }
    for (uint32_t i = 0; i < source->num_devices; i++) {
        const opal_fabric_device_t *from = &source->devices[i];
        opal_fabric_device_t *to = opal_fabric_record_add_device(record, from->name, from->kind);

        if (NULL == to) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err_record;
        }
        for (uint32_t j = 0; j < from->num_attrs; j++) {
            rc = opal_fabric_device_add_attr(to, from->attrs[j].key, from->attrs[j].value);
            if (HERD_SUCCESS != rc) {
                goto err_record;
            }
        }
    }
    *copy = record;
    return HERD_SUCCESS;

err_record:
    opal_fabric_record_free(record);
    return rc;
}

/* The same rules the builders enforce, for records assembled by hand: we never pack what unpack
 * would refuse. */
static bool fabric_attrs_valid(const opal_fabric_attr_t *attrs, uint32_t num_attrs)
{
    if (num_attrs > OPAL_FABRIC_MAX_ATTRS || (num_attrs > 0 && NULL == attrs)) {
        return false;
    }
    for (uint32_t i = 0; i < num_attrs; i++) {
        if (!fabric_is_word(attrs[i].key) || NULL == attrs[i].value) {
            return false;
        }
    }
    return true;
}

static bool fabric_record_valid(const opal_fabric_record_t *record)
{
    if (!fabric_is_word(record->component) || record->num_devices > OPAL_FABRIC_MAX_DEVICES ||
        (record->num_devices > 0 && NULL == record->devices) ||
        !fabric_attrs_valid(record->attrs, record->num_attrs)) {
        return false;
    }
    for (uint32_t i = 0; i < record->num_devices; i++) {
        const opal_fabric_device_t *device = &record->devices[i];

        if (!fabric_is_word(device->name) || !fabric_is_word(device->kind) ||
            !fabric_attrs_valid(device->attrs, device->num_attrs)) {
            return false;
        }
    }
    return true;
}

static int fabric_pack_attrs(opal_buffer_t *buffer, const opal_fabric_attr_t *attrs,
                             uint32_t num_attrs)
{
    int rc = opal_buffer_pack_uint32(buffer, num_attrs);

    for (uint32_t i = 0; HERD_SUCCESS == rc && i < num_attrs; i++) {
        rc = opal_buffer_pack_string(buffer, attrs[i].key);
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_string(buffer, attrs[i].value);
        }
    }
    return rc;
}

/* Layout: uint32 format version, string component, attrs, uint32 device count, then per device
 * string name, string kind, attrs; attrs are a uint32 count and that many key/value strings. */
int opal_fabric_record_pack(opal_buffer_t *buffer, const opal_fabric_record_t *record)
{
    size_t mark;
    int rc;

    if (NULL == buffer || NULL == record) {
        return HERD_ERR_BAD_PARAM;
    }
    if (!fabric_record_valid(record)) {
        return HERD_ERR_BAD_PARAM;
    }
    mark = buffer->used;
    rc = opal_buffer_pack_uint32(buffer, OPAL_FABRIC_RECORD_FORMAT_VERSION);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_string(buffer, record->component);
    }
    if (HERD_SUCCESS == rc) {
        rc = fabric_pack_attrs(buffer, record->attrs, record->num_attrs);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(buffer, record->num_devices);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < record->num_devices; i++) {
        const opal_fabric_device_t *device = &record->devices[i];

        rc = opal_buffer_pack_string(buffer, device->name);
        if (HERD_SUCCESS == rc) {
            rc = opal_buffer_pack_string(buffer, device->kind);
        }
        if (HERD_SUCCESS == rc) {
            rc = fabric_pack_attrs(buffer, device->attrs, device->num_attrs);
        }
    }
    if (HERD_SUCCESS != rc) {
        /* a half-packed record would make every record after it unreadable */
        buffer->used = mark;
    }
    return rc;
}

/* A string that must be present (not a packed NULL) and, unless allow_empty, non-empty. */
static int fabric_unpack_text(opal_buffer_t *buffer, bool allow_empty, char **text)
{
    char *value = NULL;
    int rc = opal_buffer_unpack_string(buffer, &value);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL == value || (!allow_empty && '\0' == value[0])) {
        free(value);
        return HERD_ERR_UNPACK_FAILURE;
    }
    *text = value;
    return HERD_SUCCESS;
}

static int fabric_unpack_count(opal_buffer_t *buffer, uint32_t limit, uint32_t *count)
{
    uint32_t value;
    int rc = opal_buffer_unpack_uint32(buffer, &value);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (value > limit) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    *count = value;
    return HERD_SUCCESS;
}

static int fabric_unpack_attrs(opal_buffer_t *buffer, opal_fabric_attr_t **attrs,
                               uint32_t *num_attrs)
{
    uint32_t count;
    int rc = fabric_unpack_count(buffer, OPAL_FABRIC_MAX_ATTRS, &count);

    for (uint32_t i = 0; HERD_SUCCESS == rc && i < count; i++) {
        char *key = NULL;
        char *value = NULL;

        rc = fabric_unpack_text(buffer, false, &key);
        if (HERD_SUCCESS == rc) {
            rc = fabric_unpack_text(buffer, true, &value);
        }
        if (HERD_SUCCESS == rc) {
            rc = fabric_attrs_append(attrs, num_attrs, key, value);
        }
        free(key);
        free(value);
    }
    return rc;
}

int opal_fabric_record_unpack(opal_buffer_t *buffer, opal_fabric_record_t **record)
{
    opal_fabric_record_t *result = NULL;
    char *component = NULL;
    uint32_t version;
    uint32_t num_devices;
    size_t mark;
    int rc;

    if (NULL == buffer || NULL == record) {
        return HERD_ERR_BAD_PARAM;
    }
    mark = buffer->unpack_offset;
    rc = opal_buffer_unpack_uint32(buffer, &version);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    if (OPAL_FABRIC_RECORD_FORMAT_VERSION != version) {
        rc = HERD_ERR_VERSION_MISMATCH;
        goto err;
    }
    rc = fabric_unpack_text(buffer, false, &component);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    result = opal_fabric_record_new(component);
    free(component);
    if (NULL == result) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err;
    }
    rc = fabric_unpack_attrs(buffer, &result->attrs, &result->num_attrs);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    rc = fabric_unpack_count(buffer, OPAL_FABRIC_MAX_DEVICES, &num_devices);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    for (uint32_t i = 0; i < num_devices; i++) {
        opal_fabric_device_t *device;
        char *name = NULL;
        char *kind = NULL;

        rc = fabric_unpack_text(buffer, false, &name);
        if (HERD_SUCCESS == rc) {
            rc = fabric_unpack_text(buffer, false, &kind);
        }
        if (HERD_SUCCESS != rc) {
            free(name);
            goto err;
        }
        device = opal_fabric_record_add_device(result, name, kind);
        free(name);
        free(kind);
        if (NULL == device) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err;
        }
        rc = fabric_unpack_attrs(buffer, &device->attrs, &device->num_attrs);
        if (HERD_SUCCESS != rc) {
            goto err;
        }
    }
    *record = result;
    return HERD_SUCCESS;

err:
    /* like the buffer's own unpack calls: a failed unpack leaves the position where it was */
    buffer->unpack_offset = mark;
    opal_fabric_record_free(result);
    return rc;
}

void opal_fabric_record_print(FILE *stream, const opal_fabric_record_t *record)
{
    if (NULL == stream || NULL == record) {
        return;
    }
    fprintf(stream, "component %s (%u device%s)\n", record->component, record->num_devices,
            1 == record->num_devices ? "" : "s");
    for (uint32_t i = 0; i < record->num_attrs; i++) {
        fprintf(stream, "    %s: %s\n", record->attrs[i].key, record->attrs[i].value);
    }
    for (uint32_t i = 0; i < record->num_devices; i++) {
        const opal_fabric_device_t *device = &record->devices[i];

        fprintf(stream, "    device %s (%s)\n", device->name, device->kind);
        for (uint32_t j = 0; j < device->num_attrs; j++) {
            fprintf(stream, "        %s: %s\n", device->attrs[j].key, device->attrs[j].value);
        }
    }
}
