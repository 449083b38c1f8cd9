/* SPDX-License-Identifier: BSD-3-Clause */
/* libsodium, loaded when the overlay first authenticates a connection rather than with the
 * component: a herdrun that runs its job on this node alone never does, and loading and
 * initialising libsodium is a measurable part of its start (docs/bench.md). */
#ifndef OVERLAY_TCP_SODIUM_H
#define OVERLAY_TCP_SODIUM_H

#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

typedef struct {
    int (*kdf_derive_from_key)(unsigned char *subkey, size_t subkey_len, uint64_t subkey_id,
                               const char ctx[crypto_kdf_CONTEXTBYTES],
                               const unsigned char key[crypto_kdf_KEYBYTES]);
    int (*hmac_init)(crypto_auth_hmacsha512256_state *state, const unsigned char *key,
                     size_t keylen);
    int (*hmac_update)(crypto_auth_hmacsha512256_state *state, const unsigned char *in,
                       unsigned long long inlen);
    int (*hmac_final)(crypto_auth_hmacsha512256_state *state, unsigned char *out);
    int (*compare)(const void *a, const void *b, size_t len); /* sodium_memcmp */
} overlay_tcp_sodium_t;

/* The functions, loaded and libsodium initialised on the first call (thread-safe); NULL when
 * that failed, and then *why (static text) says what happened. */
const overlay_tcp_sodium_t *overlay_tcp_sodium(const char **why);

#endif
