/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: PMIx_Publish, PMIx_Lookup and PMIx_Unpublish over the engine's published names
 * (kept by the job's shepherd). Each key is a published name; its value is the publisher and the
 * PMIx value, packed by the library. A lookup with PMIX_WAIT waits for the names to be
 * published: for all of them (PMIX_WAIT 0, or true), or for as many as PMIX_WAIT says, at most
 * PMIX_TIMEOUT seconds (wireup_base_get_timeout without it), and then fails with
 * PMIX_ERR_TIMEOUT; without PMIX_WAIT a name not published yet is not found now. */
#include "herd_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orte/mca/wireup/pmix/wireup_pmix.h"

static int pack_published(const pmix_proc_t *publisher, pmix_value_t *value, void **bytes,
                          size_t *len)
{
    pmix_data_buffer_t buffer;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    if (PMIX_SUCCESS != PMIx_Data_pack(NULL, &buffer, (void *) publisher, 1, PMIX_PROC) ||
        PMIX_SUCCESS != PMIx_Data_pack(NULL, &buffer, value, 1, PMIX_VALUE)) {
        PMIX_DATA_BUFFER_DESTRUCT(&buffer);
        return HERD_ERROR;
    }
    char *ptr = NULL;
    size_t sz = 0;
    PMIX_DATA_BUFFER_UNLOAD(&buffer, ptr, sz);
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    *bytes = ptr;
    *len = sz;
    return HERD_SUCCESS;
}

static int unpack_published(const void *bytes, size_t len, pmix_pdata_t *pd)
{
    pmix_data_buffer_t buffer;
    int32_t one = 1;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    char *copy = malloc(len > 0 ? len : 1);
    if (NULL == copy) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    memcpy(copy, bytes, len);
    PMIX_DATA_BUFFER_LOAD(&buffer, copy, len);
    pmix_value_t *value = NULL;
    int rc = HERD_SUCCESS;
    if (PMIX_SUCCESS != PMIx_Data_unpack(NULL, &buffer, &pd->proc, &one, PMIX_PROC)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    } else {
        PMIX_VALUE_CREATE(value, 1);
        one = 1;
        if (NULL == value ||
            PMIX_SUCCESS != PMIx_Data_unpack(NULL, &buffer, value, &one, PMIX_VALUE)) {
            rc = HERD_ERR_UNPACK_FAILURE;
        } else if (PMIX_SUCCESS != PMIx_Value_xfer(&pd->value, value)) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
        }
    }
    if (NULL != value) {
        PMIX_VALUE_RELEASE(value);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* publish, unpublish */

static void op_part_done(int status, const char *error, void *cbdata)
{
    wireup_pmix_call_t *c = cbdata;
    if (HERD_SUCCESS != status && HERD_SUCCESS == c->first_error) {
        c->first_error = status;
    }
    if (0 == --c->pending) {
        wireup_pmix_answer_op(c, wireup_pmix_status(c->first_error));
        wireup_pmix_call_free(c);
    }
}

static void publish_or_unpublish(wireup_pmix_call_t *c, bool unpublish)
{
    c->pending = c->nkeys + 1; /* held until every part started */
    for (size_t i = 0; i < c->nkeys; ++i) {
        int rc;
        if (unpublish) {
            rc = orte_wireup_unpublish(c->st->host->engine, c->keys[i], op_part_done, c);
        } else {
            void *bytes = NULL;
            size_t len = 0;
            rc = pack_published(&c->proc, &c->values[i], &bytes, &len);
            if (HERD_SUCCESS == rc) {
                rc = orte_wireup_publish(c->st->host->engine, c->keys[i], bytes, len, op_part_done,
                                         c);
            }
            free(bytes);
        }
        if (HERD_SUCCESS != rc) {
            op_part_done(rc, NULL, c);
        }
    }
    op_part_done(HERD_SUCCESS, NULL, c);
}

static void run_publish(wireup_pmix_call_t *c)
{
    publish_or_unpublish(c, false);
}

static void run_unpublish(wireup_pmix_call_t *c)
{
    publish_or_unpublish(c, true);
}

/* ------------------------------------------------------------------------------------------ */
/* lookup */

typedef struct lookup_part {
    wireup_pmix_call_t *call;
    size_t index;
} lookup_part_t;

static size_t lookup_found(const wireup_pmix_call_t *c)
{
    size_t found = 0;
    for (size_t i = 0; i < c->npdata; ++i) {
        found += PMIX_UNDEF != c->pdata[i].value.type;
    }
    return found;
}

/* Answer the library with the names found so far, in the order asked (a lookup waiting for some
 * of its names answers before the others come). */
static void lookup_answer(wireup_pmix_call_t *c, pmix_status_t status)
{
    size_t found = lookup_found(c);
    pmix_pdata_t *out = (found > 0) ? malloc(found * sizeof(*out)) : NULL;
    size_t n = 0;
    for (size_t i = 0; NULL != out && i < c->npdata; ++i) {
        if (PMIX_UNDEF != c->pdata[i].value.type) {
            out[n++] = c->pdata[i]; /* a view: the library copies what it keeps */
        }
    }
    if (found > 0 && NULL == out) {
        status = PMIX_ERR_OUT_OF_RESOURCE;
    }
    c->lookup_cb(status, PMIX_SUCCESS == status ? out : NULL, PMIX_SUCCESS == status ? n : 0,
                 c->cbdata);
    free(out);
    c->answered = true;
}

/* Every part is back: the answer, unless it was given already. */
static void lookup_finish(wireup_pmix_call_t *c)
{
    if (!c->answered) {
        size_t found = lookup_found(c);
        pmix_status_t status;
        if (0 == c->wait_for) {
            status = found > 0
                         ? PMIX_SUCCESS
                         : wireup_pmix_status(HERD_SUCCESS == c->first_error ? HERD_ERR_NOT_FOUND
                                                                             : c->first_error);
        } else if (found >= c->wait_for || found == c->nkeys) {
            status = PMIX_SUCCESS;
        } else {
            /* the names it waited for did not all come in time */
            status = (HERD_SUCCESS == c->first_error || HERD_ERR_NOT_FOUND == c->first_error)
                         ? PMIX_ERR_TIMEOUT
                         : wireup_pmix_status(c->first_error);
        }
        lookup_answer(c, status);
    }
    wireup_pmix_call_free(c);
}

static void lookup_part_done(int status, const void *value, size_t len, const char *error,
                             void *cbdata)
{
    lookup_part_t *part = cbdata;
    wireup_pmix_call_t *c = part->call;
    if (HERD_SUCCESS == status) {
        pmix_pdata_t *pd = &c->pdata[part->index];
        PMIX_LOAD_KEY(pd->key, c->keys[part->index]);
        status = unpack_published(value, len, pd);
        if (HERD_SUCCESS != status) {
            PMIX_PDATA_DESTRUCT(pd);
            PMIX_PDATA_CONSTRUCT(pd);
        }
    }
    if (HERD_SUCCESS != status && HERD_SUCCESS == c->first_error) {
        c->first_error = status;
    }
    free(part);
    if (0 == --c->pending) {
        lookup_finish(c);
    } else if (!c->answered && c->wait_for > 0 && c->wait_for < SIZE_MAX &&
               lookup_found(c) >= c->wait_for) {
        lookup_answer(c, PMIX_SUCCESS); /* as many as it waited for */
    }
}

static void run_lookup(wireup_pmix_call_t *c)
{
    PMIX_PDATA_CREATE(c->pdata, c->nkeys > 0 ? c->nkeys : 1);
    c->npdata = c->nkeys;
    if (NULL == c->pdata) {
        c->lookup_cb(PMIX_ERR_OUT_OF_RESOURCE, NULL, 0, c->cbdata);
        wireup_pmix_call_free(c);
        return;
    }
    c->pending = c->nkeys + 1;
    for (size_t i = 0; i < c->nkeys; ++i) {
        lookup_part_t *part = malloc(sizeof(*part));
        int rc = (NULL == part) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
        if (NULL != part) {
            part->call = c;
            part->index = i;
            rc = orte_wireup_lookup(c->st->host->engine, c->keys[i], c->timeout_ms,
                                    lookup_part_done, part);
        }
        if (HERD_SUCCESS != rc) {
            free(part);
            if (HERD_SUCCESS == c->first_error) {
                c->first_error = rc;
            }
            c->pending--;
        }
    }
    if (0 == --c->pending) {
        lookup_finish(c);
    }
}

static void refuse_lookup(wireup_pmix_call_t *c, pmix_status_t status)
{
    c->lookup_cb(status, NULL, 0, c->cbdata);
}

/* ------------------------------------------------------------------------------------------ */
/* the upcalls (the library's thread) */

/* Directives of publish, lookup and unpublish, not data. */
static bool is_directive(const pmix_info_t *info)
{
    return PMIX_CHECK_KEY(info, PMIX_RANGE) || PMIX_CHECK_KEY(info, PMIX_PERSISTENCE) ||
           PMIX_CHECK_KEY(info, PMIX_TIMEOUT) || PMIX_CHECK_KEY(info, PMIX_WAIT) ||
           PMIX_CHECK_KEY(info, PMIX_USERID) || PMIX_CHECK_KEY(info, PMIX_GRPID);
}

pmix_status_t wireup_pmix_up_publish(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run_publish, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_ERR_UNREACH;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    c->keys = calloc(ninfo > 0 ? ninfo : 1, sizeof(*c->keys));
    c->values = calloc(ninfo > 0 ? ninfo : 1, sizeof(*c->values));
    if (NULL == c->keys || NULL == c->values) {
        wireup_pmix_call_free(c);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < ninfo; ++i) {
        if (is_directive(&info[i])) {
            continue;
        }
        c->keys[c->nkeys] = strdup(info[i].key);
        PMIX_VALUE_CONSTRUCT(&c->values[c->nkeys]);
        if (NULL == c->keys[c->nkeys] ||
            PMIX_SUCCESS != PMIx_Value_xfer(&c->values[c->nkeys], &info[i].value)) {
            free(c->keys[c->nkeys]);
            wireup_pmix_call_free(c);
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        c->nkeys++;
    }
    return wireup_pmix_call_queue(c);
}

static wireup_pmix_call_t *keys_call(const pmix_proc_t *proc, char **keys, wireup_pmix_run_fn_t run,
                                     wireup_pmix_refuse_fn_t refuse)
{
    wireup_pmix_call_t *c = wireup_pmix_call_new(proc, run, refuse);
    if (NULL == c) {
        return NULL;
    }
    size_t n = 0;
    while (NULL != keys && NULL != keys[n]) {
        n++;
    }
    c->keys = calloc(n > 0 ? n : 1, sizeof(*c->keys));
    for (size_t i = 0; NULL != c->keys && i < n; ++i) {
        if (NULL == (c->keys[i] = strdup(keys[i]))) {
            break;
        }
        c->nkeys++;
    }
    if (NULL == c->keys || c->nkeys != n) {
        wireup_pmix_call_free(c);
        return NULL;
    }
    return c;
}

/* How many names a lookup waits for: PMIX_WAIT's count (0: all, as true; false: none). */
static size_t lookup_wait_for(const pmix_info_t info[], size_t ninfo)
{
    for (size_t i = 0; i < ninfo; ++i) {
        if (!PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
            continue;
        }
        const pmix_value_t *v = &info[i].value;
        if (PMIX_BOOL == v->type) {
            return v->data.flag ? SIZE_MAX : 0;
        }
        if (PMIX_INT == v->type && v->data.integer > 0) {
            return (size_t) v->data.integer;
        }
        if (PMIX_SIZE == v->type && v->data.size > 0) {
            return v->data.size;
        }
        return SIZE_MAX; /* 0, or a type without a count: all of them */
    }
    return 0;
}

pmix_status_t wireup_pmix_up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                    size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = keys_call(proc, keys, run_lookup, refuse_lookup);
    if (NULL == c) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    c->wait_for = lookup_wait_for(info, ninfo);
    int timeout_ms = wireup_pmix_timeout_ms(info, ninfo);
    /* without PMIX_WAIT a name not published yet is not found now */
    c->timeout_ms =
        (c->wait_for > 0) ? (timeout_ms > 0 ? timeout_ms : orte_wireup_base_get_timeout_ms()) : 0;
    c->lookup_cb = cbfunc;
    c->cbdata = cbdata;
    return wireup_pmix_call_queue(c);
}

pmix_status_t wireup_pmix_up_unpublish(const pmix_proc_t *proc, char **keys,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    wireup_pmix_call_t *c = keys_call(proc, keys, run_unpublish, wireup_pmix_refuse_op);
    if (NULL == c) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    c->op_cb = cbfunc;
    c->cbdata = cbdata;
    return wireup_pmix_call_queue(c);
}
