/* SPDX-License-Identifier: BSD-3-Clause */
/* FNV-1a, the one hash herd uses for names, keys and topology signatures: fast, good enough for
 * hash tables, and stable across hosts (signatures are compared between nodes). Not for
 * anything an adversary chooses to collide. */
#ifndef OPAL_UTIL_HASH_H
#define OPAL_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define OPAL_HASH_FNV1A_INIT UINT64_C(0xcbf29ce484222325)

/* Continue hash over len bytes (start with OPAL_HASH_FNV1A_INIT). */
static inline uint64_t opal_hash_fnv1a(uint64_t hash, const void *data, size_t len)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < len; ++i) {
        hash ^= bytes[i];
        hash *= UINT64_C(0x100000001b3);
    }
    return hash;
}

/* Continue hash over a string's bytes, without its terminating NUL. */
static inline uint64_t opal_hash_fnv1a_string(uint64_t hash, const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; '\0' != *p; ++p) {
        hash ^= *p;
        hash *= UINT64_C(0x100000001b3);
    }
    return hash;
}

#endif /* OPAL_UTIL_HASH_H */
