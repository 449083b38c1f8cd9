/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers the fabric base shares with its components and with tests (not part of the module
 * interface in fabric.h). */
#ifndef OPAL_MCA_FABRIC_BASE_H
#define OPAL_MCA_FABRIC_BASE_H

#include <stdint.h>

#include "opal/mca/fabric/fabric.h"

/* Wire format of one packed record; unpack refuses any other. */
#define OPAL_FABRIC_RECORD_FORMAT_VERSION 1u

/* Limits on one record, checked by pack and unpack alike: a corrupt count must not make a
 * daemon allocate and loop over billions of entries, and we never pack what we would refuse. */
#define OPAL_FABRIC_MAX_DEVICES 4096u
#define OPAL_FABRIC_MAX_ATTRS   1024u

/* The help file of the framework base. */
#define OPAL_FABRIC_BASE_HELP_FILE "help-fabric-base.txt"

/* Deep copy. Components cache what query() found and hand discover() callers their own copy.
 * *copy is set only on success. */
OPAL_EXPORT int opal_fabric_record_copy(const opal_fabric_record_t *source,
                                        opal_fabric_record_t **copy);

/* The value of the first attribute named key, or NULL. */
OPAL_EXPORT const char *opal_fabric_device_get_attr(const opal_fabric_device_t *device,
                                                    const char *key);
OPAL_EXPORT const char *opal_fabric_record_get_attr(const opal_fabric_record_t *record,
                                                    const char *key);
/* The first device named name, or NULL. */
OPAL_EXPORT const opal_fabric_device_t *
opal_fabric_record_find_device(const opal_fabric_record_t *record, const char *name);

/* A component's include and exclude lists (e.g. fabric_tcp_if_include / _if_exclude) cannot
 * both be set. Reports the conflict, naming both variables and where each was set, and returns
 * HERD_ERR_SILENT (already reported); HERD_SUCCESS when at most one is set. Takes variable
 * indices as returned by opal_mca_var_register(). */
OPAL_EXPORT int opal_fabric_base_check_include_exclude(int include_index, int exclude_index);

#endif /* OPAL_MCA_FABRIC_BASE_H */
