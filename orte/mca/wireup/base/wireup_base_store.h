/* SPDX-License-Identifier: BSD-3-Clause */
/* A namespace's key-value store on one node: each process's keys (committed by a local process,
 * or brought in by a fence or a direct modex), and the namespace's own keys (PMI-1 KVS). */
#ifndef ORTE_MCA_WIREUP_BASE_STORE_H
#define ORTE_MCA_WIREUP_BASE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/dss/buffer.h"

typedef struct wireup_store wireup_store_t;

/* One key's value as the store holds it; valid until the key is stored again or the store
 * freed. */
typedef struct wireup_store_value {
    const void *data;
    size_t len;
} wireup_store_value_t;

wireup_store_t *wireup_store_create(void);
void wireup_store_free(wireup_store_t *store);

/* A local owner's put: kept aside until wireup_store_commit (a key put again replaces it). */
int wireup_store_put(wireup_store_t *store, uint32_t owner, const char *key, const void *data,
                     size_t len);
/* Make owner's pending puts visible, stamped with generation gen (fences collect by it).
 * *count: how many keys were committed. */
int wireup_store_commit(wireup_store_t *store, uint32_t owner, uint64_t gen, size_t *count);
/* A committed value, or false. */
bool wireup_store_find(const wireup_store_t *store, uint32_t owner, const char *key,
                       wireup_store_value_t *value);
/* Whether owner has committed anything seen here (locally, or brought in). */
bool wireup_store_has_owner(const wireup_store_t *store, uint32_t owner);

/* Append {u32 n, n x (u32 owner, string key, bytes value)}: owner's committed keys. */
int wireup_store_pack_owner(const wireup_store_t *store, uint32_t owner, opal_buffer_t *buffer);
/* The same format: every key committed here by a local owner with a generation above since. */
int wireup_store_pack_since(const wireup_store_t *store, uint64_t since, opal_buffer_t *buffer);
/* Read that format into the store as committed remote keys (a local owner's keys are never
 * replaced by remote ones). HERD_ERR_UNPACK_FAILURE on malformed input (what was read before
 * stays), also for a key or value over max_key or max_value bytes. */
int wireup_store_unpack(wireup_store_t *store, opal_buffer_t *buffer, uint32_t max_key,
                        uint32_t max_value);
/* The same from received bytes (a fence's blob, a direct modex answer). */
int wireup_store_unpack_bytes(wireup_store_t *store, const void *data, size_t len, uint32_t max_key,
                              uint32_t max_value);

/* Keys and owners held (for the engine's statistics). */
size_t wireup_store_num_keys(const wireup_store_t *store);
size_t wireup_store_num_remote_owners(const wireup_store_t *store);

#endif /* ORTE_MCA_WIREUP_BASE_STORE_H */
