/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric framework: what each network stack (sockets, libfabric, UCX) finds on this node.
 * Multi-select: every available component contributes one record to the node inventory. */
#ifndef OPAL_MCA_FABRIC_H
#define OPAL_MCA_FABRIC_H

#include <stdint.h>
#include <stdio.h>

#include "opal/dss/buffer.h"
#include "opal/mca/mca.h"

#define OPAL_MCA_fabric_INTERFACE_VERSION 1u

/* One key/value fact about a device, e.g. {"addr", "10.0.0.1/24"}. */
typedef struct opal_fabric_attr {
    char *key;
    char *value;
} opal_fabric_attr_t;

/* One thing a component can reach the network through: an interface, a provider/domain pair,
 * a transport on a device. */
typedef struct opal_fabric_device {
    char *name;  /* "eth0", "tcp;ofi_rxm/eth0", "tcp/lo" */
    char *kind;  /* "interface", "provider", "transport" */
    opal_fabric_attr_t *attrs;
    uint32_t num_attrs;
} opal_fabric_device_t;

/* A component's static connection information for this node (part of the node inventory). */
typedef struct opal_fabric_record {
    char *component; /* "tcp", "ofi", "ucx" */
    opal_fabric_device_t *devices;
    uint32_t num_devices;
    opal_fabric_attr_t *attrs; /* component-wide facts: library version, address size... */
    uint32_t num_attrs;
} opal_fabric_record_t;

typedef struct opal_fabric_module {
    /* Discover this node's devices. *record is allocated by the module, freed with
     * opal_fabric_record_free(). Set only on success. */
    int (*discover)(opal_fabric_record_t **record);
} opal_fabric_module_t;

OPAL_EXPORT extern opal_mca_framework_t opal_fabric_base_framework;

/* Open and select the framework (all available components, highest priority first). */
OPAL_EXPORT int opal_fabric_base_open(void);
OPAL_EXPORT void opal_fabric_base_close(void);

/* Run every selected component's discover(); *records gets one record per component that
 * succeeded, in selection order. A component whose discovery fails is reported and skipped. */
OPAL_EXPORT int opal_fabric_base_discover(opal_fabric_record_t ***records, size_t *num_records);

/* Record helpers shared by components and by the inventory. */
OPAL_EXPORT opal_fabric_record_t *opal_fabric_record_new(const char *component);
OPAL_EXPORT opal_fabric_device_t *opal_fabric_record_add_device(opal_fabric_record_t *record,
                                                                const char *name, const char *kind);
OPAL_EXPORT int opal_fabric_device_add_attr(opal_fabric_device_t *device, const char *key,
                                            const char *value);
OPAL_EXPORT int opal_fabric_record_add_attr(opal_fabric_record_t *record, const char *key,
                                            const char *value);
OPAL_EXPORT void opal_fabric_record_free(opal_fabric_record_t *record);
OPAL_EXPORT void opal_fabric_records_free(opal_fabric_record_t **records, size_t num_records);

/* Serialization for the inventory: one versioned record per call. */
OPAL_EXPORT int opal_fabric_record_pack(opal_buffer_t *buffer, const opal_fabric_record_t *record);
OPAL_EXPORT int opal_fabric_record_unpack(opal_buffer_t *buffer, opal_fabric_record_t **record);

/* Print a record for humans (herd-info --fabric) to a stream. */
OPAL_EXPORT void opal_fabric_record_print(FILE *stream, const opal_fabric_record_t *record);

#endif /* OPAL_MCA_FABRIC_H */
