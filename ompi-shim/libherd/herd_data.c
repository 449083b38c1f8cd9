/* SPDX-License-Identifier: BSD-3-Clause */
/* libherd: the data a process shares with its job (put, commit, get) and the fence that
 * exchanges it, as requests to the session daemon. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "herd_internal.h"
#include "opal/status.h"

void libherd_release_puts(void)
{
    for (uint32_t i = 0; i < libherd.num_puts; ++i) {
        free(libherd.puts[i].key);
        free(libherd.puts[i].value);
    }
    libherd.num_puts = 0;
}

int herd_put(const char *key, const void *value, size_t len)
{
    if (!libherd.initialized) {
        return libherd_fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (NULL == key || '\0' == *key || strlen(key) > OPAL_NATIVE_MAX_KEY ||
        len > OPAL_NATIVE_MAX_VALUE || (len > 0 && NULL == value)) {
        return libherd_fail(HERD_ERR_BAD_PARAM,
                            "herd_put: a key is 1 to %u bytes and a value at most %u bytes",
                            OPAL_NATIVE_MAX_KEY, OPAL_NATIVE_MAX_VALUE);
    }
    for (uint32_t i = 0; i < libherd.num_puts; ++i) {
        if (0 == strcmp(libherd.puts[i].key, key)) {
            void *copy = malloc(len > 0 ? len : 1);
            if (NULL == copy) {
                return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: out of memory");
            }
            memcpy(copy, value, len);
            free(libherd.puts[i].value);
            libherd.puts[i].value = copy;
            libherd.puts[i].len = len;
            return HERD_SUCCESS;
        }
    }
    if (libherd.num_puts >= OPAL_NATIVE_MAX_PUTS) {
        return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: more than %u keys before a commit",
                            OPAL_NATIVE_MAX_PUTS);
    }
    if (libherd.num_puts == libherd.cap_puts) {
        uint32_t cap = libherd.cap_puts ? 2 * libherd.cap_puts : 8;
        opal_native_put_t *grown = realloc(libherd.puts, cap * sizeof(*grown));
        if (NULL == grown) {
            return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: out of memory");
        }
        libherd.puts = grown;
        libherd.cap_puts = cap;
    }
    opal_native_put_t *p = &libherd.puts[libherd.num_puts];
    p->key = strdup(key);
    p->value = malloc(len > 0 ? len : 1);
    if (NULL == p->key || NULL == p->value) {
        free(p->key);
        free(p->value);
        return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_put: out of memory");
    }
    memcpy(p->value, value, len);
    p->len = len;
    libherd.num_puts++;
    return HERD_SUCCESS;
}

int herd_commit(void)
{
    if (!libherd.initialized) {
        return libherd_fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    opal_native_commit_t commit = {.puts = libherd.puts, .num_puts = libherd.num_puts};
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    int rc = opal_native_pack_commit(&payload, &commit);
    if (HERD_SUCCESS == rc) {
        rc = libherd_call(OPAL_NATIVE_COMMIT, &payload, NULL);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS == rc) {
        libherd_release_puts();
    }
    return rc;
}

int herd_fence_nb(int collect_data, herd_request_t *request)
{
    if (!libherd.initialized) {
        return libherd_fail(HERD_ERR_NOT_AVAILABLE, "herd_init has not been called");
    }
    if (NULL != libherd.fence) {
        return libherd_fail(HERD_ERR_EXISTS, "a fence is already in flight: wait for it first");
    }
    if (NULL == request) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "herd_fence_nb: no request to fill");
    }
    struct herd_request *req = calloc(1, sizeof(*req));
    if (NULL == req) {
        return libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_fence_nb: out of memory");
    }
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    int rc = opal_native_pack_fence(&payload, 0 != collect_data);
    if (HERD_SUCCESS == rc) {
        rc = libherd_send_request(OPAL_NATIVE_FENCE, &payload, &req->id);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS != rc) {
        free(req);
        return rc;
    }
    libherd.fence = req;
    *request = req;
    return HERD_SUCCESS;
}
int herd_fence(int collect_data)
{
    herd_request_t req;
    int rc = herd_fence_nb(collect_data, &req);
    return HERD_SUCCESS == rc ? herd_wait(&req) : rc;
}

int herd_barrier(void)
{
    return herd_fence(0);
}

int herd_get(uint32_t peer, const char *key, void **value, size_t *len)
{
    opal_jobdb_proc_view_t view;
    int rc = libherd_peer_view(peer, &view);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL == key || '\0' == *key || strlen(key) > OPAL_NATIVE_MAX_KEY || NULL == value ||
        NULL == len) {
        return libherd_fail(HERD_ERR_BAD_PARAM, "herd_get: a key is 1 to %u bytes",
                            OPAL_NATIVE_MAX_KEY);
    }
    opal_native_get_t get = {.peer = peer, .key = (char *) key};
    opal_native_reply_t r = {0};
    opal_buffer_t payload;
    opal_buffer_init(&payload);
    rc = opal_native_pack_get(&payload, &get);
    if (HERD_SUCCESS == rc) {
        rc = libherd_call(OPAL_NATIVE_GET, &payload, &r);
    }
    opal_buffer_destruct(&payload);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* a value is at least one byte of storage, so *value is never NULL on success */
    *value = (NULL != r.value) ? r.value : malloc(1);
    *len = r.len;
    r.value = NULL;
    opal_native_reply_free(&r);
    return NULL != *value ? HERD_SUCCESS
                          : libherd_fail(HERD_ERR_OUT_OF_RESOURCE, "herd_get: out of memory");
}
