/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading libsodium on first use: dlopen of the file a program linked with -lsodium names
 * (HERD_SODIUM_SONAME, found by configure), its functions looked up once, sodium_init. */
#include "herd_config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "overlay_tcp_sodium.h"

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static overlay_tcp_sodium_t sodium_table;
static const overlay_tcp_sodium_t *sodium_loaded;
static char sodium_why[512];

/* One symbol into *slot; false (and the reason) when it is missing. */
static bool sodium_symbol(void *handle, const char *name, void *slot)
{
    void *address = dlsym(handle, name);
    if (NULL == address) {
        snprintf(sodium_why, sizeof(sodium_why), "%s has no function %s", HERD_SODIUM_SONAME, name);
        return false;
    }
    /* dlsym gives an object pointer; POSIX guarantees it converts to a function pointer */
    *(void **) slot = address;
    return true;
}

static void sodium_load(void)
{
    int (*init)(void) = NULL;
    void *handle = dlopen(HERD_SODIUM_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (NULL == handle) {
        const char *error = dlerror();
        snprintf(sodium_why, sizeof(sodium_why), "loading %s failed: %s", HERD_SODIUM_SONAME,
                 NULL != error ? error : "unknown error");
        return;
    }
    if (!sodium_symbol(handle, "sodium_init", &init) ||
        !sodium_symbol(handle, "crypto_kdf_derive_from_key", &sodium_table.kdf_derive_from_key) ||
        !sodium_symbol(handle, "crypto_auth_hmacsha512256_init", &sodium_table.hmac_init) ||
        !sodium_symbol(handle, "crypto_auth_hmacsha512256_update", &sodium_table.hmac_update) ||
        !sodium_symbol(handle, "crypto_auth_hmacsha512256_final", &sodium_table.hmac_final) ||
        !sodium_symbol(handle, "sodium_memcmp", &sodium_table.compare)) {
        dlclose(handle);
        return;
    }
    if (init() < 0) {
        snprintf(sodium_why, sizeof(sodium_why),
                 "sodium_init failed: the node has no source of random numbers (/dev/urandom or "
                 "getrandom())");
        dlclose(handle);
        return;
    }
    /* kept loaded for the life of the process */
    sodium_loaded = &sodium_table;
}

const overlay_tcp_sodium_t *overlay_tcp_sodium(const char **why)
{
    pthread_once(&sodium_once, sodium_load);
    if (NULL == sodium_loaded && NULL != why) {
        *why = sodium_why;
    }
    return sodium_loaded;
}
