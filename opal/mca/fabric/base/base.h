/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers the fabric base shares with its components and with tests (not part of the module
 * interface in fabric.h). */
#ifndef OPAL_MCA_FABRIC_BASE_H
#define OPAL_MCA_FABRIC_BASE_H

#include <stddef.h>
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

/* The per-boot cache of discovery's records (fabric_base_cache.c): opening libfabric alone costs
 * a daemon about a tenth of a second of CPU at every DVM start. The file (in the user's private
 * temporary folder) is keyed by the boot, this host's name, interfaces and network and RDMA
 * devices, the FI_* and UCX_* environment, the components asked for (components: "all" or a
 * list) and herd's version; a fabric variable set anywhere, or HERD_FABRIC_CACHE=0, bypasses it.
 * load: HERD_SUCCESS with the records (possibly none), else HERD_ERR_NOT_FOUND (discover, then
 * store what was found). */
OPAL_EXPORT int opal_fabric_base_cache_load(const char *components, opal_fabric_record_t ***records,
                                            size_t *num_records);
OPAL_EXPORT void opal_fabric_base_cache_store(const char *components,
                                              opal_fabric_record_t *const *records,
                                              size_t num_records);

#endif /* OPAL_MCA_FABRIC_BASE_H */
