/* SPDX-License-Identifier: BSD-3-Clause */
/* The grpcomm engine shared by every algorithm: instances, collectives by id, messages held
 * until their collective can use them, completion and failure callbacks, and the xcast of user
 * data down the broadcast tree the algorithm chose. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "orte/mca/grpcomm/base/base.h"

/* ------------------------------------------------------------------------------------------ */
/* collectives and messages */

static void engine_msg_free(orte_grpcomm_msg_t *msg)
{
    if (NULL != msg) {
        orte_grpcomm_base_msg_clear(msg);
        free(msg);
    }
}

static void engine_free_held(orte_grpcomm_coll_t *coll)
{
    while (NULL != coll->held) {
        orte_grpcomm_msg_t *msg = coll->held;

        coll->held = msg->next;
        engine_msg_free(msg);
    }
}

static void engine_coll_free(const orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    engine_free_held(coll);
    if (NULL != coll->blobs) {
        for (uint32_t v = 0; v < g->num_daemons; v++) {
            free(coll->blobs[v].data);
        }
        free(coll->blobs);
    }
    free(coll->present);
    free(coll->heard);
    free(coll->payload_owned);
    free(coll);
}

static orte_grpcomm_coll_t *engine_coll_find(const orte_grpcomm_t *g, uint32_t id)
{
    for (orte_grpcomm_coll_t *coll = g->colls; NULL != coll; coll = coll->next) {
        if (coll->id == id) {
            return coll;
        }
    }
    return NULL;
}

static orte_grpcomm_coll_t *engine_coll_new(orte_grpcomm_t *g, uint32_t id, orte_grpcomm_op_t op)
{
    orte_grpcomm_coll_t *coll = calloc(1, sizeof(*coll));

    if (NULL == coll) {
        return NULL;
    }
    coll->id = id;
    coll->op = op;
    coll->status = HERD_SUCCESS;
    coll->next = g->colls;
    g->colls = coll;
    return coll;
}

static void engine_coll_unlink(orte_grpcomm_t *g, const orte_grpcomm_coll_t *coll)
{
    for (orte_grpcomm_coll_t **link = &g->colls; NULL != *link; link = &(*link)->next) {
        if (*link == coll) {
            *link = coll->next;
            return;
        }
    }
}

void orte_grpcomm_base_finish(orte_grpcomm_coll_t *coll, int status)
{
    /* the first outcome stands: a late send error must not turn a failure into another */
    if (!coll->finished) {
        coll->finished = true;
        coll->status = status;
    }
}

/* Runs the callback of a collective that is no longer linked, then frees it. */
static void engine_notify_and_free(const orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    orte_grpcomm_result_t result = {.id = coll->id, .op = coll->op};
    orte_grpcomm_blob_t *blobs = NULL;
    int status = coll->status;

    if (NULL != coll->held) {
        opal_output_verbose(5, orte_grpcomm_base_framework.output,
                            "grpcomm: daemon %u drops messages left over by collective %u", g->me,
                            coll->id);
    }
    if (HERD_SUCCESS == status && ORTE_GRPCOMM_OP_XCAST == coll->op) {
        result.data = coll->payload;
        result.len = coll->payload_len;
    } else if (HERD_SUCCESS == status && ORTE_GRPCOMM_OP_ALLGATHER == coll->op) {
        blobs = calloc(g->num_daemons, sizeof(*blobs));
        if (NULL == blobs) {
            status = HERD_ERR_OUT_OF_RESOURCE;
        } else {
            for (uint32_t v = 0; v < g->num_daemons; v++) {
                blobs[v].data = coll->blobs[v].data;
                blobs[v].len = coll->blobs[v].len;
            }
            result.blobs = blobs;
            result.num_blobs = g->num_daemons;
        }
    }
    opal_output_verbose(10, orte_grpcomm_base_framework.output, "grpcomm: daemon %u: %s %u %s",
                        g->me, orte_grpcomm_op_name(coll->op), coll->id,
                        HERD_SUCCESS == status ? "complete" : opal_strerror(status));
    coll->cb(status, &result, coll->cbdata);
    free(blobs);
    engine_coll_free(g, coll);
}

/* ------------------------------------------------------------------------------------------ */
/* reporting */

static void engine_log_rejected(const orte_grpcomm_t *g, orte_vpid_t src, uint16_t tag, uint32_t id,
                                const char *reason)
{
    opal_show_help(ORTE_GRPCOMM_BASE_HELP_FILE, "rejected-message", true, g->me,
                   orte_grpcomm_base_tag_name(tag), src, id, reason, g->me, g->algorithm->name);
}

static void engine_log_unreadable(const orte_grpcomm_t *g, orte_vpid_t src, uint16_t tag,
                                  size_t len, const char *reason)
{
    opal_show_help(ORTE_GRPCOMM_BASE_HELP_FILE, "unreadable-message", true, g->me, (unsigned) tag,
                   src, len, reason, src);
}

/* ------------------------------------------------------------------------------------------ */
/* sending */

static int engine_send(orte_grpcomm_t *g, orte_vpid_t dst, uint16_t tag, const void *data,
                       size_t len)
{
    int rc = g->send(g->ctx, dst, tag, data, len);

    if (HERD_SUCCESS != rc) {
        opal_show_help(ORTE_GRPCOMM_BASE_HELP_FILE, "send-failed", true, g->me,
                       orte_grpcomm_base_tag_name(tag), dst, opal_strerror(rc), g->me, dst);
    }
    return rc;
}

int orte_grpcomm_base_send(orte_grpcomm_t *g, orte_vpid_t dst, uint16_t tag,
                           const opal_buffer_t *buffer)
{
    return engine_send(g, dst, tag, buffer->base, buffer->used);
}

int orte_grpcomm_base_forward(orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg)
{
    for (uint32_t i = 0; i < g->num_xcast_children; i++) {
        int rc = engine_send(g, g->xcast_children[i], msg->tag, msg->raw, msg->raw_len);

        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* progress */

/* The xcast of user data is the same for every algorithm: down the broadcast tree. */
static int engine_xcast_consume(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll,
                                orte_grpcomm_msg_t *msg)
{
    /* forward first: the subtree should not wait for our callback */
    int rc = orte_grpcomm_base_forward(g, msg);

    if (HERD_SUCCESS != rc) {
        orte_grpcomm_base_finish(coll, rc);
        return HERD_SUCCESS;
    }
    coll->payload_owned = msg->payload;
    coll->payload = msg->payload;
    coll->payload_len = msg->payload_len;
    msg->payload = NULL;
    orte_grpcomm_base_finish(coll, HERD_SUCCESS);
    return HERD_SUCCESS;
}

/* Feeds held messages to a started collective until none is usable, then runs the callback if
 * it finished. Returns the status of the first message it had to reject. */
static int engine_progress(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll)
{
    char reason[ORTE_GRPCOMM_REASON_SIZE];
    int first_error = HERD_SUCCESS;
    bool consumed = true;

    /* a message may become usable only after a later-arrived one (Bruck rounds), so sweep
     * again whenever one was used */
    while (consumed && !coll->finished) {
        orte_grpcomm_msg_t **link = &coll->held;

        consumed = false;
        while (NULL != *link && !coll->finished) {
            orte_grpcomm_msg_t *msg = *link;
            int rc;

            reason[0] = '\0';
            if (ORTE_GRPCOMM_TAG_XCAST == msg->tag && ORTE_GRPCOMM_OP_XCAST == coll->op) {
                rc = engine_xcast_consume(g, coll, msg);
            } else {
                rc = g->algorithm->consume(g, coll, msg, reason, sizeof(reason));
            }
            if (HERD_ERR_TAKE_NEXT == rc) {
                link = &msg->next;
                continue;
            }
            *link = msg->next;
            if (HERD_SUCCESS != rc) {
                engine_log_rejected(g, msg->src, msg->tag, coll->id, reason);
                orte_grpcomm_base_finish(coll, rc);
                if (HERD_SUCCESS == first_error) {
                    first_error = rc;
                }
            }
            engine_msg_free(msg);
            consumed = true;
        }
    }
    if (coll->finished) {
        engine_coll_unlink(g, coll);
        engine_notify_and_free(g, coll);
    }
    return first_error;
}

/* A message made collective id fail: a started collective ends now; one not started here yet
 * fails as soon as it is, and its held messages go. */
static void engine_fail_id(orte_grpcomm_t *g, const orte_grpcomm_header_t *header, int status)
{
    orte_grpcomm_coll_t *coll = engine_coll_find(g, header->id);

    if (NULL == coll) {
        if (g->num_unstarted >= ORTE_GRPCOMM_MAX_UNSTARTED) {
            return;
        }
        coll = engine_coll_new(g, header->id, (orte_grpcomm_op_t) header->op);
        if (NULL == coll) {
            return;
        }
        g->num_unstarted++;
        coll->status = status;
        return;
    }
    if (coll->started) {
        orte_grpcomm_base_finish(coll, status);
        engine_coll_unlink(g, coll);
        engine_notify_and_free(g, coll);
        return;
    }
    engine_free_held(coll);
    if (HERD_SUCCESS == coll->status) {
        coll->status = status;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* delivery */

/* Which daemons may send this daemon a broadcast: its parent in the broadcast tree only. */
static int engine_check_xcast(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg, char *reason,
                              size_t size)
{
    if (ORTE_VPID_INVALID == g->xcast_parent) {
        snprintf(reason, size,
                 "daemon %u is the root of the broadcast tree and receives no "
                 "broadcast",
                 g->me);
        return HERD_ERR_BAD_PARAM;
    }
    /* after a loss, whichever ancestor learned of it first may be the one that sends */
    if (msg->src != g->xcast_parent && !orte_grpcomm_base_is_ancestor(g, msg->src)) {
        snprintf(reason, size,
                 "daemon %u is not the parent of daemon %u in the broadcast tree "
                 "of the %s component (daemon %u is)",
                 msg->src, g->me, g->algorithm->name, g->xcast_parent);
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != msg->header.round) {
        snprintf(reason, size, "it names round %u of a broadcast, which has none",
                 msg->header.round);
        return HERD_ERR_BAD_PARAM;
    }
    if (ORTE_GRPCOMM_OP_ALLGATHER == msg->header.op && msg->count != g->num_daemons) {
        snprintf(reason, size, "it releases %u blobs, not one for each of the %u daemons",
                 msg->count, g->num_daemons);
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

static int engine_decode_body(const orte_grpcomm_t *g, opal_buffer_t *buffer,
                              orte_grpcomm_msg_t *msg, char *reason, size_t size)
{
    switch (msg->tag) {
    case ORTE_GRPCOMM_TAG_XCAST:
        return orte_grpcomm_base_decode_xcast(buffer, g->num_daemons, msg, reason, size);
    case ORTE_GRPCOMM_TAG_GATHER:
        return orte_grpcomm_base_decode_gather(buffer, g->num_daemons, msg, reason, size);
    case ORTE_GRPCOMM_TAG_ALLGATHER_ROUND:
        return orte_grpcomm_base_decode_allgather_round(buffer, g->num_daemons, msg, reason, size);
    default:
        return orte_grpcomm_base_decode_barrier_round(buffer, g->num_daemons, msg, reason, size);
    }
}

/* The header must come from a daemon of the same DVM running the same algorithm, or nothing
 * else in the message can be trusted to mean what this daemon thinks. */
static int engine_check_header(const orte_grpcomm_t *g, const orte_grpcomm_header_t *header,
                               char *reason, size_t size)
{
    if (g->algorithm->wire_id != header->algorithm) {
        snprintf(reason, size,
                 "it comes from a daemon running another grpcomm component "
                 "(algorithm %u)",
                 header->algorithm);
        return HERD_ERR_BAD_PARAM;
    }
    if (header->num_daemons != g->num_daemons) {
        snprintf(reason, size, "its sender counts %u daemons in the DVM, this daemon %u",
                 header->num_daemons, g->num_daemons);
        return HERD_ERR_BAD_PARAM;
    }
    return HERD_SUCCESS;
}

/* Everything else that can be known about a message without the local state of its
 * collective: who may send it, in which round, with how many blobs. */
static int engine_check(const orte_grpcomm_t *g, const orte_grpcomm_msg_t *msg, char *reason,
                        size_t size)
{
    int rc;

    if (ORTE_GRPCOMM_TAG_XCAST == msg->tag) {
        rc = engine_check_xcast(g, msg, reason, size);
        if (HERD_SUCCESS != rc || ORTE_GRPCOMM_OP_XCAST == msg->header.op) {
            return rc;
        }
    }
    return g->algorithm->check(g, msg, reason, size);
}

/* Whether a message repeats one still held (same sender, type and round). */
static bool engine_is_duplicate(const orte_grpcomm_coll_t *coll, const orte_grpcomm_msg_t *msg)
{
    for (const orte_grpcomm_msg_t *held = coll->held; NULL != held; held = held->next) {
        if (held->src == msg->src && held->tag == msg->tag &&
            held->header.round == msg->header.round) {
            return true;
        }
    }
    return false;
}

static void engine_hold(orte_grpcomm_coll_t *coll, orte_grpcomm_msg_t *msg)
{
    orte_grpcomm_msg_t **link = &coll->held;

    while (NULL != *link) {
        link = &(*link)->next;
    }
    msg->next = NULL;
    *link = msg;
}

int orte_grpcomm_base_deliver(orte_grpcomm_t *g, orte_vpid_t src, uint16_t tag, const void *data,
                              size_t len)
{
    char reason[ORTE_GRPCOMM_REASON_SIZE];
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_grpcomm_coll_t *coll;
    orte_grpcomm_msg_t *msg;
    int rc;

    if (NULL == g || (NULL == data && len > 0)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (src >= g->num_daemons || src == g->me) {
        snprintf(reason, sizeof(reason), "daemon %u is not another daemon of this DVM of %u", src,
                 g->num_daemons);
        engine_log_unreadable(g, src, tag, len, reason);
        return HERD_ERR_BAD_PARAM;
    }
    if (tag < ORTE_GRPCOMM_TAG_BASE || tag >= ORTE_GRPCOMM_TAG_BASE + ORTE_GRPCOMM_NUM_TAGS) {
        snprintf(reason, sizeof(reason), "tag %u is not one of grpcomm's (%u to %u)",
                 (unsigned) tag, ORTE_GRPCOMM_TAG_BASE,
                 ORTE_GRPCOMM_TAG_BASE + ORTE_GRPCOMM_NUM_TAGS - 1);
        engine_log_unreadable(g, src, tag, len, reason);
        return HERD_ERR_BAD_PARAM;
    }
    msg = calloc(1, sizeof(*msg));
    if (NULL == msg) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    msg->src = src;
    msg->tag = tag;
    rc = opal_buffer_load(&buffer, data, len);
    if (HERD_SUCCESS != rc) {
        free(msg);
        return rc;
    }
    rc = orte_grpcomm_base_decode_header(&buffer, &msg->header, reason, sizeof(reason));
    if (HERD_SUCCESS != rc) {
        /* without a header there is no collective to fail */
        engine_log_unreadable(g, src, tag, len, reason);
        goto err_message;
    }
    rc = engine_check_header(g, &msg->header, reason, sizeof(reason));
    if (HERD_SUCCESS == rc) {
        rc = engine_decode_body(g, &buffer, msg, reason, sizeof(reason));
    }
    if (HERD_SUCCESS == rc) {
        rc = engine_check(g, msg, reason, sizeof(reason));
    }
    if (HERD_SUCCESS != rc) {
        goto err_reject;
    }
    coll = engine_coll_find(g, msg->header.id);
    if (NULL != coll && !coll->started && HERD_SUCCESS != coll->status) {
        /* stragglers of a collective that already failed here */
        opal_output_verbose(5, orte_grpcomm_base_framework.output,
                            "grpcomm: daemon %u drops a %s message from daemon %u for failed "
                            "collective %u",
                            g->me, orte_grpcomm_base_tag_name(tag), src, msg->header.id);
        rc = HERD_SUCCESS;
        goto err_message;
    }
    if (NULL != coll && coll->op != msg->header.op) {
        snprintf(reason, sizeof(reason),
                 "this daemon runs collective %u as operation %s, the "
                 "message is for operation %s",
                 coll->id, orte_grpcomm_op_name(coll->op),
                 orte_grpcomm_op_name((orte_grpcomm_op_t) msg->header.op));
        rc = HERD_ERR_BAD_PARAM;
        goto err_reject;
    }
    if (NULL != coll && engine_is_duplicate(coll, msg)) {
        snprintf(reason, sizeof(reason), "it repeats a message this daemon already has");
        rc = HERD_ERR_BAD_PARAM;
        goto err_reject;
    }
    if (NULL == coll) {
        if (g->num_unstarted >= ORTE_GRPCOMM_MAX_UNSTARTED) {
            snprintf(reason, sizeof(reason),
                     "%u collectives not yet started here are held "
                     "already",
                     g->num_unstarted);
            engine_log_rejected(g, src, tag, msg->header.id, reason);
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err_message;
        }
        coll = engine_coll_new(g, msg->header.id, (orte_grpcomm_op_t) msg->header.op);
        if (NULL == coll) {
            rc = HERD_ERR_OUT_OF_RESOURCE;
            goto err_message;
        }
        g->num_unstarted++;
    }
    if (ORTE_GRPCOMM_TAG_XCAST == tag) {
        /* kept to be forwarded unchanged down the broadcast tree */
        msg->raw = buffer.base;
        msg->raw_len = buffer.used;
        opal_buffer_init(&buffer);
    }
    opal_buffer_destruct(&buffer);
    engine_hold(coll, msg);
    return coll->started ? engine_progress(g, coll) : HERD_SUCCESS;

err_reject:
    engine_log_rejected(g, src, tag, msg->header.id, reason);
    engine_fail_id(g, &msg->header, rc);
err_message:
    opal_buffer_destruct(&buffer);
    engine_msg_free(msg);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* starting collectives */

/* What a collective needs before it starts: done before it is marked started, so running out
 * of memory leaves everything as it was. */
static int engine_prepare(const orte_grpcomm_t *g, orte_grpcomm_coll_t *coll, const void *data,
                          size_t len)
{
    if (ORTE_GRPCOMM_OP_XCAST == coll->op) {
        return HERD_SUCCESS;
    }
    coll->heard = calloc(g->num_daemons, sizeof(*coll->heard));
    if (NULL == coll->heard) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (ORTE_GRPCOMM_OP_ALLGATHER == coll->op) {
        coll->blobs = calloc(g->num_daemons, sizeof(*coll->blobs));
        coll->present = calloc(g->num_daemons, sizeof(*coll->present));
        if (NULL == coll->blobs || NULL == coll->present) {
            goto err_alloc;
        }
        if (len > 0) {
            coll->blobs[g->me].data = malloc(len);
            if (NULL == coll->blobs[g->me].data) {
                goto err_alloc;
            }
            memcpy(coll->blobs[g->me].data, data, len);
        }
        coll->blobs[g->me].vpid = g->me;
        coll->blobs[g->me].len = len;
        coll->present[g->me] = true;
    }
    return HERD_SUCCESS;

err_alloc:
    free(coll->heard);
    free(coll->blobs);
    free(coll->present);
    coll->heard = NULL;
    coll->blobs = NULL;
    coll->present = NULL;
    return HERD_ERR_OUT_OF_RESOURCE;
}

/* The root sends its data to its broadcast children and is done; the others wait. */
static int engine_xcast_start(orte_grpcomm_t *g, orte_grpcomm_coll_t *coll, const void *data,
                              size_t len)
{
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;
    orte_grpcomm_header_t header;
    int rc;

    if (0 != g->me) {
        return HERD_SUCCESS;
    }
    orte_grpcomm_base_header(g, coll, 0, &header);
    rc = orte_grpcomm_base_pack_header(&buffer, &header);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_bytes(&buffer, data, len);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < g->num_xcast_children; i++) {
        rc = orte_grpcomm_base_send(g, g->xcast_children[i], ORTE_GRPCOMM_TAG_XCAST, &buffer);
    }
    opal_buffer_destruct(&buffer);
    /* the callback runs before xcast() returns, so the caller's data is still there */
    coll->payload = data;
    coll->payload_len = len;
    orte_grpcomm_base_finish(coll, rc);
    return HERD_SUCCESS;
}

static int engine_start(orte_grpcomm_t *g, uint32_t id, orte_grpcomm_op_t op, const void *data,
                        size_t len, orte_grpcomm_cbfunc_t cb, void *cbdata)
{
    orte_grpcomm_coll_t *coll;
    bool created = false;
    int rc;

    if (NULL == g || NULL == cb || (NULL == data && len > 0)) {
        return HERD_ERR_BAD_PARAM;
    }
    coll = engine_coll_find(g, id);
    if (NULL != coll && coll->started) {
        return HERD_ERR_EXISTS;
    }
    if (NULL == coll) {
        coll = engine_coll_new(g, id, op);
        if (NULL == coll) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        created = true;
    }
    if (HERD_SUCCESS == coll->status && coll->op == op) {
        rc = engine_prepare(g, coll, data, len);
        if (HERD_SUCCESS != rc) {
            if (created) {
                engine_coll_unlink(g, coll);
                engine_coll_free(g, coll);
            }
            return rc;
        }
    }
    if (!created) {
        g->num_unstarted--;
    }
    coll->started = true;
    coll->cb = cb;
    coll->cbdata = cbdata;
    if (HERD_SUCCESS != coll->status) {
        /* failed before it started here: a rejected message or abort_all() */
        orte_grpcomm_base_finish(coll, coll->status);
    } else if (coll->op != op) {
        char reason[ORTE_GRPCOMM_REASON_SIZE];

        snprintf(reason, sizeof(reason),
                 "it was held for operation %s, but this daemon started "
                 "collective %u with operation %s",
                 orte_grpcomm_op_name(coll->op), id, orte_grpcomm_op_name(op));
        if (NULL != coll->held) {
            engine_log_rejected(g, coll->held->src, coll->held->tag, id, reason);
        }
        coll->op = op; /* the callback reports what the caller started */
        orte_grpcomm_base_finish(coll, HERD_ERR_BAD_PARAM);
    } else if (ORTE_GRPCOMM_OP_XCAST != op && NULL != g->down) {
        /* a barrier or an allgather counts every daemon in: not after a loss */
        orte_grpcomm_base_finish(coll, HERD_ERR_UNREACH);
    } else {
        if (ORTE_GRPCOMM_OP_XCAST == op) {
            rc = engine_xcast_start(g, coll, data, len);
        } else {
            rc = g->algorithm->start(g, coll);
        }
        if (HERD_SUCCESS != rc) {
            orte_grpcomm_base_finish(coll, rc);
        }
    }
    /* a failure from here on reaches the caller through the callback */
    (void) engine_progress(g, coll);
    return HERD_SUCCESS;
}

int orte_grpcomm_base_xcast(orte_grpcomm_t *g, uint32_t id, const void *data, size_t len,
                            orte_grpcomm_cbfunc_t cb, void *cbdata)
{
    /* only the root's data is sent: the others' is ignored, as documented */
    if (NULL != g && 0 != g->me) {
        data = NULL;
        len = 0;
    }
    return engine_start(g, id, ORTE_GRPCOMM_OP_XCAST, data, len, cb, cbdata);
}

int orte_grpcomm_base_barrier(orte_grpcomm_t *g, uint32_t id, orte_grpcomm_cbfunc_t cb,
                              void *cbdata)
{
    return engine_start(g, id, ORTE_GRPCOMM_OP_BARRIER, NULL, 0, cb, cbdata);
}

int orte_grpcomm_base_allgather(orte_grpcomm_t *g, uint32_t id, const void *data, size_t len,
                                orte_grpcomm_cbfunc_t cb, void *cbdata)
{
    return engine_start(g, id, ORTE_GRPCOMM_OP_ALLGATHER, data, len, cb, cbdata);
}

int orte_grpcomm_base_abort_all(orte_grpcomm_t *g, int status)
{
    orte_grpcomm_coll_t *failing = NULL;
    orte_grpcomm_coll_t **link;

    if (NULL == g || status >= 0) {
        return HERD_ERR_BAD_PARAM;
    }
    /* unlink every started collective first: the callbacks may start new ones */
    link = &g->colls;
    while (NULL != *link) {
        orte_grpcomm_coll_t *coll = *link;

        if (coll->started) {
            *link = coll->next;
            coll->next = failing;
            failing = coll;
            continue;
        }
        engine_free_held(coll);
        if (HERD_SUCCESS == coll->status) {
            coll->status = status;
        }
        link = &coll->next;
    }
    while (NULL != failing) {
        orte_grpcomm_coll_t *coll = failing;

        failing = coll->next;
        orte_grpcomm_base_finish(coll, status);
        engine_notify_and_free(g, coll);
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* instances */

int orte_grpcomm_base_create(const orte_grpcomm_module_t *module,
                             const orte_grpcomm_algorithm_t *algorithm,
                             const orte_grpcomm_transport_t *transport, orte_grpcomm_t **instance)
{
    orte_grpcomm_t *g;
    int rc;

    if (NULL == module || NULL == algorithm || NULL == transport || NULL == instance ||
        NULL == transport->send || 0 == transport->num_daemons ||
        transport->me >= transport->num_daemons) {
        return HERD_ERR_BAD_PARAM;
    }
    g = calloc(1, sizeof(*g));
    if (NULL == g) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    g->module = module;
    g->algorithm = algorithm;
    g->me = transport->me;
    g->num_daemons = transport->num_daemons;
    g->radix = transport->radix;
    g->send = transport->send;
    g->ctx = transport->ctx;
    g->xcast_parent = ORTE_VPID_INVALID;
    rc = algorithm->init(g);
    if (HERD_SUCCESS != rc) {
        free(g->xcast_children);
        free(g);
        return rc;
    }
    *instance = g;
    return HERD_SUCCESS;
}

void orte_grpcomm_base_destroy(orte_grpcomm_t *g)
{
    if (NULL == g) {
        return;
    }
    while (NULL != g->colls) {
        orte_grpcomm_coll_t *coll = g->colls;

        g->colls = coll->next;
        engine_coll_free(g, coll);
    }
    free(g->xcast_children);
    free(g->down);
    free(g->back);
    free(g);
}
