/* SPDX-License-Identifier: BSD-3-Clause */
/* A namespace's key-value store on one node (wireup_base_store.h): one hash table of keys by
 * (owner, key), and one of owners with each owner's keys in a list, so a process's whole data
 * can be sent to a daemon that asks for it. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/status.h"
#include "opal/util/hash.h"
#include "orte/mca/wireup/base/wireup_base_store.h"

typedef struct store_entry {
    struct store_entry *hash_next;  /* in its bucket */
    struct store_entry *owner_next; /* in its owner's list */
    uint32_t owner;
    bool committed;
    bool local;   /* put by a local owner, not brought in */
    uint64_t gen; /* when committed */
    uint8_t *data;
    size_t len;
    char key[]; /* NUL-terminated */
} store_entry_t;

typedef struct store_owner {
    struct store_owner *hash_next;
    uint32_t owner;
    bool committed; /* something of it is visible */
    bool remote;    /* its keys came from another daemon */
    store_entry_t *entries;
} store_owner_t;

struct wireup_store {
    store_entry_t **buckets;
    size_t num_buckets; /* a power of two */
    size_t num_entries;
    store_owner_t **owner_buckets;
    size_t num_owner_buckets;
    size_t num_owners;
    size_t num_remote_owners;
};

#define STORE_INITIAL_BUCKETS 64u

static uint64_t hash_key(uint32_t owner, const char *key)
{
    /* the owner's bytes (least significant first), then the key's */
    const uint8_t bytes[4] = {(uint8_t) owner, (uint8_t) (owner >> 8), (uint8_t) (owner >> 16),
                              (uint8_t) (owner >> 24)};
    return opal_hash_fnv1a_string(opal_hash_fnv1a(OPAL_HASH_FNV1A_INIT, bytes, sizeof(bytes)), key);
}

static uint64_t hash_owner(uint32_t owner)
{
    uint64_t h = owner;
    h ^= h >> 16;
    h *= 0x45d9f3bu;
    h ^= h >> 16;
    return h;
}

wireup_store_t *wireup_store_create(void)
{
    wireup_store_t *s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return NULL;
    }
    s->num_buckets = STORE_INITIAL_BUCKETS;
    s->num_owner_buckets = STORE_INITIAL_BUCKETS;
    s->buckets = calloc(s->num_buckets, sizeof(*s->buckets));
    s->owner_buckets = calloc(s->num_owner_buckets, sizeof(*s->owner_buckets));
    if (NULL == s->buckets || NULL == s->owner_buckets) {
        wireup_store_free(s);
        return NULL;
    }
    return s;
}

void wireup_store_free(wireup_store_t *s)
{
    if (NULL == s) {
        return;
    }
    for (size_t b = 0; NULL != s->buckets && b < s->num_buckets; ++b) {
        store_entry_t *e = s->buckets[b];
        while (NULL != e) {
            store_entry_t *next = e->hash_next;
            free(e->data);
            free(e);
            e = next;
        }
    }
    for (size_t b = 0; NULL != s->owner_buckets && b < s->num_owner_buckets; ++b) {
        store_owner_t *o = s->owner_buckets[b];
        while (NULL != o) {
            store_owner_t *next = o->hash_next;
            free(o);
            o = next;
        }
    }
    free(s->buckets);
    free(s->owner_buckets);
    free(s);
}

/* Double a chained table when it holds more items than buckets. */
static void grow_entries(wireup_store_t *s)
{
    size_t n = 2 * s->num_buckets;
    store_entry_t **grown = calloc(n, sizeof(*grown));
    if (NULL == grown) {
        return; /* longer chains, still correct */
    }
    for (size_t b = 0; b < s->num_buckets; ++b) {
        store_entry_t *e = s->buckets[b];
        while (NULL != e) {
            store_entry_t *next = e->hash_next;
            size_t nb = hash_key(e->owner, e->key) & (n - 1);
            e->hash_next = grown[nb];
            grown[nb] = e;
            e = next;
        }
    }
    free(s->buckets);
    s->buckets = grown;
    s->num_buckets = n;
}

static void grow_owners(wireup_store_t *s)
{
    size_t n = 2 * s->num_owner_buckets;
    store_owner_t **grown = calloc(n, sizeof(*grown));
    if (NULL == grown) {
        return;
    }
    for (size_t b = 0; b < s->num_owner_buckets; ++b) {
        store_owner_t *o = s->owner_buckets[b];
        while (NULL != o) {
            store_owner_t *next = o->hash_next;
            size_t nb = hash_owner(o->owner) & (n - 1);
            o->hash_next = grown[nb];
            grown[nb] = o;
            o = next;
        }
    }
    free(s->owner_buckets);
    s->owner_buckets = grown;
    s->num_owner_buckets = n;
}

static store_owner_t *find_owner(const wireup_store_t *s, uint32_t owner)
{
    store_owner_t *o = s->owner_buckets[hash_owner(owner) & (s->num_owner_buckets - 1)];
    while (NULL != o && o->owner != owner) {
        o = o->hash_next;
    }
    return o;
}

static store_owner_t *get_owner(wireup_store_t *s, uint32_t owner)
{
    store_owner_t *o = find_owner(s, owner);
    if (NULL != o) {
        return o;
    }
    o = calloc(1, sizeof(*o));
    if (NULL == o) {
        return NULL;
    }
    o->owner = owner;
    size_t b = hash_owner(owner) & (s->num_owner_buckets - 1);
    o->hash_next = s->owner_buckets[b];
    s->owner_buckets[b] = o;
    if (++s->num_owners > s->num_owner_buckets) {
        grow_owners(s);
    }
    return o;
}

static store_entry_t *find_entry(const wireup_store_t *s, uint32_t owner, const char *key)
{
    store_entry_t *e = s->buckets[hash_key(owner, key) & (s->num_buckets - 1)];
    while (NULL != e && (e->owner != owner || 0 != strcmp(e->key, key))) {
        e = e->hash_next;
    }
    return e;
}

/* Set owner's key to a copy of data: the entry is replaced in place, or added. */
static int set_entry(wireup_store_t *s, store_owner_t *o, const char *key, const void *data,
                     size_t len, store_entry_t **out)
{
    uint8_t *copy = NULL;
    if (len > 0) {
        copy = malloc(len);
        if (NULL == copy) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memcpy(copy, data, len);
    }
    store_entry_t *e = find_entry(s, o->owner, key);
    if (NULL == e) {
        size_t key_len = strlen(key);
        e = calloc(1, sizeof(*e) + key_len + 1);
        if (NULL == e) {
            free(copy);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memcpy(e->key, key, key_len + 1);
        e->owner = o->owner;
        size_t b = hash_key(o->owner, key) & (s->num_buckets - 1);
        e->hash_next = s->buckets[b];
        s->buckets[b] = e;
        e->owner_next = o->entries;
        o->entries = e;
        if (++s->num_entries > s->num_buckets) {
            grow_entries(s);
        }
    }
    free(e->data);
    e->data = copy;
    e->len = len;
    *out = e;
    return HERD_SUCCESS;
}

int wireup_store_put(wireup_store_t *s, uint32_t owner, const char *key, const void *data,
                     size_t len)
{
    store_owner_t *o = get_owner(s, owner);
    store_entry_t *e;
    if (NULL == o) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    int rc = set_entry(s, o, key, data, len, &e);
    if (HERD_SUCCESS == rc) {
        e->committed = false;
        e->local = true;
    }
    return rc;
}

int wireup_store_commit(wireup_store_t *s, uint32_t owner, uint64_t gen, size_t *count)
{
    store_owner_t *o = get_owner(s, owner);
    size_t n = 0;
    if (NULL == o) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (store_entry_t *e = o->entries; NULL != e; e = e->owner_next) {
        if (!e->committed) {
            e->committed = true;
            e->gen = gen;
            ++n;
        }
    }
    o->committed = true;
    *count = n;
    return HERD_SUCCESS;
}

bool wireup_store_find(const wireup_store_t *s, uint32_t owner, const char *key,
                       wireup_store_value_t *value)
{
    const store_entry_t *e = find_entry(s, owner, key);
    if (NULL == e || !e->committed) {
        return false;
    }
    value->data = e->data;
    value->len = e->len;
    return true;
}

bool wireup_store_has_owner(const wireup_store_t *s, uint32_t owner)
{
    const store_owner_t *o = find_owner(s, owner);
    return NULL != o && o->committed;
}

static int pack_entry(opal_buffer_t *b, const store_entry_t *e)
{
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(b, e->owner)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(b, e->key)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(b, e->data, e->len))) {
        return rc;
    }
    return HERD_SUCCESS;
}

int wireup_store_pack_owner(const wireup_store_t *s, uint32_t owner, opal_buffer_t *b)
{
    const store_owner_t *o = find_owner(s, owner);
    uint32_t n = 0;
    for (const store_entry_t *e = (NULL != o) ? o->entries : NULL; NULL != e; e = e->owner_next) {
        n += e->committed ? 1 : 0;
    }
    int rc = opal_buffer_pack_uint32(b, n);
    for (const store_entry_t *e = (NULL != o) ? o->entries : NULL; HERD_SUCCESS == rc && NULL != e;
         e = e->owner_next) {
        if (e->committed) {
            rc = pack_entry(b, e);
        }
    }
    return rc;
}

static bool collected(const store_entry_t *e, uint64_t since)
{
    return e->committed && e->local && e->gen > since;
}

int wireup_store_pack_since(const wireup_store_t *s, uint64_t since, opal_buffer_t *b)
{
    uint32_t n = 0;
    for (size_t bk = 0; bk < s->num_buckets; ++bk) {
        for (const store_entry_t *e = s->buckets[bk]; NULL != e; e = e->hash_next) {
            n += collected(e, since) ? 1 : 0;
        }
    }
    int rc = opal_buffer_pack_uint32(b, n);
    for (size_t bk = 0; HERD_SUCCESS == rc && bk < s->num_buckets; ++bk) {
        for (const store_entry_t *e = s->buckets[bk]; HERD_SUCCESS == rc && NULL != e;
             e = e->hash_next) {
            if (collected(e, since)) {
                rc = pack_entry(b, e);
            }
        }
    }
    return rc;
}

int wireup_store_unpack(wireup_store_t *s, opal_buffer_t *b, uint32_t max_key, uint32_t max_value)
{
    uint32_t n = 0;
    int rc = opal_buffer_unpack_uint32(b, &n);
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < n; ++i) {
        uint32_t owner = 0;
        char *key = NULL;
        void *data = NULL;
        size_t len = 0;
        if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &owner)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_string(b, &key)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &data, &len))) {
            free(key);
            break;
        }
        if (NULL == key || '\0' == *key || strlen(key) > max_key || len > max_value) {
            rc = HERD_ERR_UNPACK_FAILURE;
        } else {
            store_owner_t *o = get_owner(s, owner);
            store_entry_t *existing = find_entry(s, owner, key);
            store_entry_t *e;
            if (NULL == o) {
                rc = HERD_ERR_OUT_OF_RESOURCE;
            } else if (NULL != existing && existing->local) {
                /* our own process's key: ours is the truth */
            } else if (HERD_SUCCESS == (rc = set_entry(s, o, key, data, len, &e))) {
                e->committed = true;
                e->local = false;
                e->gen = 0;
                o->committed = true;
                if (!o->remote) {
                    o->remote = true;
                    s->num_remote_owners++;
                }
            }
        }
        free(key);
        free(data);
    }
    return rc;
}

int wireup_store_unpack_bytes(wireup_store_t *s, const void *data, size_t len, uint32_t max_key,
                              uint32_t max_value)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    int rc = opal_buffer_load(&b, data, len);
    if (HERD_SUCCESS == rc) {
        rc = wireup_store_unpack(s, &b, max_key, max_value);
    }
    opal_buffer_destruct(&b);
    return rc;
}

size_t wireup_store_num_keys(const wireup_store_t *s)
{
    return s->num_entries;
}

size_t wireup_store_num_remote_owners(const wireup_store_t *s)
{
    return s->num_remote_owners;
}
