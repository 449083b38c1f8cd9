/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup engine's direct fence: an allgather among the daemons hosting any list of
 * processes (orte_wireup_allgather; a whole namespace goes to its own collective instead,
 * wireup_base_coll.c). The list's signature names the fence on every daemon taking part. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/base/wireup_base_engine_internal.h"

#define ENGINE_MAX_SIG_PROCS (1u << 20)

/* A contribution to a direct fence, received before or after the local call. */
typedef struct dcontrib {
    orte_vpid_t vpid;
    struct iovec data;
} dcontrib_t;

typedef struct wireup_dfence {
    struct wireup_dfence *next;
    uint8_t kind;
    uint32_t seq;
    uint8_t *sig;
    size_t sig_len;
    bool started;
    orte_vpid_t *parts; /* ascending, once started */
    uint32_t num_parts;
    dcontrib_t *contribs;
    uint32_t num_contribs;
    uint32_t cap_contribs;
    orte_wireup_blobs_fn_t cb;
    void *cbdata;
} dfence_t;

/* How many direct fences with a given signature were started here. */
typedef struct wireup_dsig {
    struct wireup_dsig *next;
    uint8_t kind;
    uint8_t *sig;
    size_t sig_len;
    uint32_t count;
} dsig_t;

/* ------------------------------------------------------------------------------------------ */
/* signatures: which daemons take part in a direct fence */

typedef struct procid_pair {
    uint32_t nspace;
    uint32_t rank;
} procid_pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const procid_pair_t *x = a, *y = b;
    if (x->nspace != y->nspace) {
        return x->nspace < y->nspace ? -1 : 1;
    }
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

/* The signature of a process list: sorted, without repeats, as big-endian pairs. */
static int make_sig(const orte_wireup_procid_t *procs, size_t n, uint8_t **sig, size_t *len)
{
    procid_pair_t *pairs = malloc((n > 0 ? n : 1) * sizeof(*pairs));
    if (NULL == pairs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n; ++i) {
        pairs[i].nspace = procs[i].nspace;
        pairs[i].rank = procs[i].rank;
    }
    qsort(pairs, n, sizeof(*pairs), cmp_pair);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (0 == m || 0 != cmp_pair(&pairs[m - 1], &pairs[i])) {
            pairs[m++] = pairs[i];
        }
    }
    uint8_t *out = malloc(m > 0 ? 8 * m : 1);
    if (NULL == out) {
        free(pairs);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < m; ++i) {
        for (int k = 0; k < 4; ++k) {
            out[8 * i + k] = (uint8_t) (pairs[i].nspace >> (24 - 8 * k));
            out[8 * i + 4 + k] = (uint8_t) (pairs[i].rank >> (24 - 8 * k));
        }
    }
    free(pairs);
    *sig = out;
    *len = 8 * m;
    return HERD_SUCCESS;
}

static uint32_t sig_word(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* The daemons hosting the processes of a signature, ascending. HERD_ERR_NOT_FOUND when a
 * namespace is not known here (yet); HERD_ERR_BAD_PARAM for a rank out of range. */
static int sig_daemons(orte_wireup_engine_t *e, const uint8_t *sig, size_t len, orte_vpid_t **out,
                       uint32_t *count)
{
    size_t n = len / 8, cap = 16, m = 0;
    orte_vpid_t *v = malloc(cap * sizeof(*v));
    if (NULL == v) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n; ++i) {
        wireup_ns_t *ns = wireup_engine_find_ns(e, sig_word(sig + 8 * i));
        uint32_t rank = sig_word(sig + 8 * i + 4);
        if (NULL == ns) {
            free(v);
            return HERD_ERR_NOT_FOUND;
        }
        if (ORTE_WIREUP_RANK_WILDCARD != rank && rank >= ns->num_procs) {
            free(v);
            return HERD_ERR_BAD_PARAM;
        }
        size_t add = (ORTE_WIREUP_RANK_WILDCARD == rank) ? ns->num_daemons : 1;
        if (m + add > cap) {
            while (m + add > cap) {
                cap *= 2;
            }
            orte_vpid_t *grown = realloc(v, cap * sizeof(*v));
            if (NULL == grown) {
                free(v);
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            v = grown;
        }
        if (ORTE_WIREUP_RANK_WILDCARD == rank) {
            memcpy(v + m, ns->daemons, ns->num_daemons * sizeof(*v));
            m += ns->num_daemons;
        } else {
            v[m++] = ns->rank_vpid(ns->ctx, rank);
        }
    }
    qsort(v, m, sizeof(*v), wireup_engine_cmp_vpid);
    size_t u = 0;
    for (size_t i = 0; i < m; ++i) {
        if (ORTE_VPID_INVALID != v[i] && (0 == u || v[u - 1] != v[i])) {
            v[u++] = v[i];
        }
    }
    *out = v;
    *count = (uint32_t) u;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* direct fences among the daemons of a signature */

static dfence_t *find_dfence(orte_wireup_engine_t *e, uint8_t kind, uint32_t seq,
                             const uint8_t *sig, size_t len)
{
    for (dfence_t *f = e->dfences; NULL != f; f = f->next) {
        if (f->kind == kind && f->seq == seq && f->sig_len == len &&
            0 == memcmp(f->sig, sig, len)) {
            return f;
        }
    }
    return NULL;
}

static dfence_t *get_dfence(orte_wireup_engine_t *e, uint8_t kind, uint32_t seq, const uint8_t *sig,
                            size_t len)
{
    dfence_t *f = find_dfence(e, kind, seq, sig, len);
    if (NULL != f) {
        return f;
    }
    f = calloc(1, sizeof(*f));
    if (NULL == f || NULL == (f->sig = malloc(len > 0 ? len : 1))) {
        free(f);
        return NULL;
    }
    memcpy(f->sig, sig, len);
    f->sig_len = len;
    f->kind = kind;
    f->seq = seq;
    f->next = e->dfences;
    e->dfences = f;
    return f;
}

static void dfence_free(orte_wireup_engine_t *e, dfence_t *f)
{
    for (dfence_t **p = &e->dfences; NULL != *p; p = &(*p)->next) {
        if (*p == f) {
            *p = f->next;
            break;
        }
    }
    for (uint32_t i = 0; i < f->num_contribs; ++i) {
        free(f->contribs[i].data.iov_base);
    }
    free(f->contribs);
    free(f->parts);
    free(f->sig);
    free(f);
}

static int dfence_add(dfence_t *f, orte_vpid_t vpid, const void *data, size_t len)
{
    for (uint32_t i = 0; i < f->num_contribs; ++i) {
        if (f->contribs[i].vpid == vpid) {
            return HERD_ERR_EXISTS;
        }
    }
    if (f->num_contribs == f->cap_contribs) {
        uint32_t cap = f->cap_contribs ? 2 * f->cap_contribs : 4;
        dcontrib_t *grown = realloc(f->contribs, cap * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        f->contribs = grown;
        f->cap_contribs = cap;
    }
    void *copy = NULL;
    if (len > 0 && NULL == (copy = malloc(len))) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (len > 0) {
        memcpy(copy, data, len);
    }
    f->contribs[f->num_contribs].vpid = vpid;
    f->contribs[f->num_contribs].data.iov_base = copy;
    f->contribs[f->num_contribs].data.iov_len = len;
    f->num_contribs++;
    return HERD_SUCCESS;
}

/* Complete a started direct fence once every participant's contribution is in. */
static void dfence_check(orte_wireup_engine_t *e, dfence_t *f)
{
    if (!f->started || f->num_contribs < f->num_parts) {
        return;
    }
    struct iovec *iov = calloc(f->num_parts, sizeof(*iov));
    bool ok = NULL != iov;
    for (uint32_t p = 0; ok && p < f->num_parts; ++p) {
        ok = false;
        for (uint32_t i = 0; i < f->num_contribs; ++i) {
            if (f->contribs[i].vpid == f->parts[p]) {
                iov[p] = f->contribs[i].data;
                ok = true;
                break;
            }
        }
    }
    if (ok) {
        e->stats.fences++;
        wireup_engine_complete_blobs(e, f->cb, f->cbdata, HERD_SUCCESS, iov, f->num_parts, NULL);
    } else {
        wireup_engine_complete_blobs(
            e, f->cb, f->cbdata, NULL == iov ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_BAD_PARAM, NULL,
            0, "a fence received a contribution from a daemon not taking part");
    }
    free(iov);
    dfence_free(e, f);
}

static int dfence_start(orte_wireup_engine_t *e, uint8_t kind, uint8_t *sig, size_t sig_len,
                        orte_vpid_t *parts, uint32_t num_parts, const void *data, size_t len,
                        orte_wireup_blobs_fn_t cb, void *cbdata)
{
    dsig_t *s = e->dsigs;
    while (NULL != s &&
           !(s->kind == kind && s->sig_len == sig_len && 0 == memcmp(s->sig, sig, sig_len))) {
        s = s->next;
    }
    if (NULL == s) {
        s = calloc(1, sizeof(*s));
        if (NULL == s || NULL == (s->sig = malloc(sig_len > 0 ? sig_len : 1))) {
            free(s);
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        memcpy(s->sig, sig, sig_len);
        s->sig_len = sig_len;
        s->kind = kind;
        s->next = e->dsigs;
        e->dsigs = s;
    }
    uint32_t seq = ++s->count;
    dfence_t *f = get_dfence(e, kind, seq, sig, sig_len);
    if (NULL == f || f->started) {
        return NULL == f ? HERD_ERR_OUT_OF_RESOURCE : HERD_ERR_EXISTS;
    }
    int rc = dfence_add(f, e->config.me, data, len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    f->started = true;
    f->parts = parts;
    f->num_parts = num_parts;
    f->cb = cb;
    f->cbdata = cbdata;
    opal_buffer_t b;
    opal_buffer_init(&b);
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, ORTE_WIREUP_WIRE_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint8(&b, kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(&b, seq)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(&b, sig, sig_len)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(&b, data, len))) {
        opal_buffer_destruct(&b);
        f->parts = NULL; /* the caller frees them */
        dfence_free(e, f);
        return rc;
    }
    for (uint32_t p = 0; p < num_parts; ++p) {
        if (parts[p] != e->config.me) {
            int src = wireup_engine_send_buffer(e, parts[p], ORTE_WIREUP_TAG_DFENCE, &b);
            if (HERD_SUCCESS != src) {
                rc = src; /* the lost callback fails it; keep the others informed */
            }
        }
    }
    opal_buffer_destruct(&b);
    dfence_check(e, f);
    (void) rc;
    return HERD_SUCCESS;
}

int orte_wireup_allgather(orte_wireup_engine_t *e, const orte_wireup_procid_t *procs,
                          size_t num_procs, orte_wireup_kind_t kind, const void *data, size_t len,
                          orte_wireup_blobs_fn_t cb, void *cbdata)
{
    if (NULL == e || NULL == procs || 0 == num_procs || num_procs > ENGINE_MAX_SIG_PROCS ||
        !wireup_engine_kind_valid(kind) || NULL == cb || (len > 0 && NULL == data)) {
        return HERD_ERR_BAD_PARAM;
    }
    uint8_t *sig;
    size_t sig_len;
    int rc = make_sig(procs, num_procs, &sig, &sig_len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    /* a whole namespace: its own collective */
    if (8 == sig_len && ORTE_WIREUP_RANK_WILDCARD == sig_word(sig + 4)) {
        wireup_ns_t *ns = wireup_engine_find_ns(e, sig_word(sig));
        free(sig);
        if (NULL == ns || ns->my_pos < 0) {
            return HERD_ERR_BAD_PARAM;
        }
        return wireup_engine_ns_allgather(e, ns, (uint8_t) kind, false, data, len, cb, cbdata);
    }
    orte_vpid_t *parts;
    uint32_t num_parts;
    rc = sig_daemons(e, sig, sig_len, &parts, &num_parts);
    if (HERD_SUCCESS != rc) {
        free(sig);
        return HERD_ERR_NOT_FOUND == rc ? HERD_ERR_BAD_PARAM : rc;
    }
    bool mine = false;
    for (uint32_t p = 0; p < num_parts; ++p) {
        mine = mine || parts[p] == e->config.me;
    }
    if (!mine) {
        free(sig);
        free(parts);
        return HERD_ERR_BAD_PARAM; /* none of the processes is hosted here */
    }
    rc = dfence_start(e, (uint8_t) kind, sig, sig_len, parts, num_parts, data, len, cb, cbdata);
    free(sig);
    if (HERD_SUCCESS != rc) {
        free(parts);
    }
    return rc;
}

int wireup_engine_recv_dfence(orte_wireup_engine_t *e, orte_vpid_t src, opal_buffer_t *b,
                              const void *data, size_t len)
{
    uint8_t kind;
    uint32_t seq;
    void *sig = NULL, *contribution = NULL;
    size_t sig_len = 0, clen = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &kind)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &seq)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &sig, &sig_len)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_bytes(b, &contribution, &clen))) {
        free(sig);
        return rc;
    }
    if (!wireup_engine_kind_valid(kind) || 0 == sig_len || 0 != sig_len % 8 ||
        sig_len / 8 > ENGINE_MAX_SIG_PROCS || 0 == seq) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto out;
    }
    /* its processes' namespaces must be known here to tell who takes part */
    orte_vpid_t *parts = NULL;
    uint32_t num_parts = 0;
    rc = sig_daemons(e, sig, sig_len, &parts, &num_parts);
    if (HERD_ERR_NOT_FOUND == rc) {
        uint32_t first_unknown = 0;
        for (size_t i = 0; i < sig_len / 8; ++i) {
            if (NULL == wireup_engine_find_ns(e, sig_word((uint8_t *) sig + 8 * i))) {
                first_unknown = sig_word((uint8_t *) sig + 8 * i);
                break;
            }
        }
        /* held under the first namespace missing (again, when another was just added) */
        rc = wireup_engine_hold(e, src, ORTE_WIREUP_TAG_DFENCE, first_unknown, data, len);
        goto out;
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    bool member =
        NULL != bsearch(&src, parts, num_parts, sizeof(src), wireup_engine_cmp_vpid) &&
        NULL != bsearch(&e->config.me, parts, num_parts, sizeof(src), wireup_engine_cmp_vpid);
    free(parts);
    if (!member) {
        rc = HERD_ERR_BAD_PARAM;
        goto out;
    }
    dfence_t *f = get_dfence(e, kind, seq, sig, sig_len);
    if (NULL == f) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = dfence_add(f, src, contribution, clen);
    if (HERD_SUCCESS == rc) {
        dfence_check(e, f);
    }
out:
    free(sig);
    free(contribution);
    return rc;
}

void wireup_engine_dfences_free(orte_wireup_engine_t *e)
{
    while (NULL != e->dfences) {
        dfence_free(e, e->dfences);
    }
    while (NULL != e->dsigs) {
        dsig_t *s = e->dsigs;
        e->dsigs = s->next;
        free(s->sig);
        free(s);
    }
}

void wireup_engine_dfences_lost(orte_wireup_engine_t *e, orte_vpid_t vpid)
{
    dfence_t *f = e->dfences;
    while (NULL != f) {
        dfence_t *next = f->next;
        if (f->started &&
            NULL != bsearch(&vpid, f->parts, f->num_parts, sizeof(vpid), wireup_engine_cmp_vpid)) {
            wireup_engine_complete_blobs(e, f->cb, f->cbdata, HERD_ERR_UNREACH, NULL, 0,
                                         "a session daemon taking part in the fence is gone");
            dfence_free(e, f);
        }
        f = next;
    }
}
