/* SPDX-License-Identifier: BSD-3-Clause */
/* The tools' side of herd-ps and herd-cancel (orte/runtime/dvm_tool.h): a blocking connection
 * to the DVM root's tool socket, each question answered within a time limit, and the wire form
 * of the root's list of nodes and jobs. */
#include "herd_config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/dvm_rejoin.h"
#include "orte/runtime/dvm_tool_internal.h"

/* Limits the decoder enforces, so a corrupt answer cannot make it allocate without bound. */
#define PS_MAX_NODES (1u << 20)
#define PS_MAX_JOBS  (1u << 20)

int orte_dvm_ps_pack(opal_buffer_t *buffer, const orte_dvm_ps_t *ps)
{
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, ps->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint64(buffer, ps->now)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, ps->num_nodes))) {
        return rc;
    }
    for (uint32_t i = 0; i < ps->num_nodes; ++i) {
        const orte_dvm_ps_node_t *n = &ps->nodes[i];
        if (HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, n->name)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, n->slots)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_bool(buffer, n->up))) {
            return rc;
        }
    }
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, ps->num_jobs))) {
        return rc;
    }
    for (uint32_t i = 0; i < ps->num_jobs; ++i) {
        const orte_dvm_ps_job_t *j = &ps->jobs[i];
        if (HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, j->jobid)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, j->uid)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_int32(buffer, j->pid)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_uint64(buffer, j->start)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, j->command)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, j->np)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_int32(buffer, j->cancel_signo)) ||
            HERD_SUCCESS != (rc = opal_buffer_pack_uint32_array(buffer, j->nodes, j->num_nodes))) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

void orte_dvm_ps_free(orte_dvm_ps_t *ps)
{
    if (NULL == ps) {
        return;
    }
    for (uint32_t i = 0; NULL != ps->nodes && i < ps->num_nodes; ++i) {
        free(ps->nodes[i].name);
    }
    for (uint32_t i = 0; NULL != ps->jobs && i < ps->num_jobs; ++i) {
        free(ps->jobs[i].jobid);
        free(ps->jobs[i].command);
        free(ps->jobs[i].nodes);
    }
    free(ps->nodes);
    free(ps->jobs);
    free(ps->id);
    free(ps);
}

static int unpack_job(opal_buffer_t *buffer, uint32_t num_nodes, orte_dvm_ps_job_t *j)
{
    size_t n = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &j->jobid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &j->uid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(buffer, &j->pid)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint64(buffer, &j->start)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &j->command)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &j->np)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_int32(buffer, &j->cancel_signo)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32_array(buffer, &j->nodes, &n))) {
        return rc;
    }
    j->num_nodes = (uint32_t) n;
    if (NULL == j->jobid || n > num_nodes) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    for (size_t k = 0; k < n; ++k) {
        if (j->nodes[k] >= num_nodes) {
            return HERD_ERR_UNPACK_FAILURE;
        }
    }
    return HERD_SUCCESS;
}

int orte_dvm_ps_unpack(opal_buffer_t *buffer, orte_dvm_ps_t **ps_out)
{
    orte_dvm_ps_t *ps = calloc(1, sizeof(*ps));
    uint32_t n = 0;
    int rc;
    if (NULL == ps) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &ps->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint64(buffer, &ps->now)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &n))) {
        goto err;
    }
    if (NULL == ps->id || n > PS_MAX_NODES) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    ps->nodes = calloc(n + 1, sizeof(*ps->nodes));
    if (NULL == ps->nodes) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err;
    }
    for (uint32_t i = 0; i < n; ++i) {
        orte_dvm_ps_node_t *node = &ps->nodes[i];
        ps->num_nodes = i + 1;
        if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &node->name)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &node->slots)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_bool(buffer, &node->up))) {
            goto err;
        }
        if (NULL == node->name) {
            rc = HERD_ERR_UNPACK_FAILURE;
            goto err;
        }
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &n))) {
        goto err;
    }
    if (n > PS_MAX_JOBS) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    ps->jobs = calloc(n + 1, sizeof(*ps->jobs));
    if (NULL == ps->jobs) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err;
    }
    for (uint32_t i = 0; i < n; ++i) {
        ps->num_jobs = i + 1;
        if (HERD_SUCCESS != (rc = unpack_job(buffer, ps->num_nodes, &ps->jobs[i]))) {
            goto err;
        }
    }
    *ps_out = ps;
    return HERD_SUCCESS;
err:
    orte_dvm_ps_free(ps);
    return rc;
}

const orte_dvm_ps_job_t *orte_dvm_ps_find_job(const orte_dvm_ps_t *ps, const char *text)
{
    size_t idlen = strlen(ps->id);
    for (uint32_t i = 0; i < ps->num_jobs; ++i) {
        const char *jobid = ps->jobs[i].jobid;
        if (0 == strcmp(jobid, text) ||
            (0 == strncmp(jobid, ps->id, idlen) && '.' == jobid[idlen] &&
             0 == strcmp(jobid + idlen + 1, text))) {
            return &ps->jobs[i];
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* the connection */

struct orte_dvm_conn {
    int fd;
    int timeout_ms;
};

int orte_dvm_conn_open(const char *uri_file, int timeout_ms, orte_dvm_conn_t **conn_out, char *why,
                       size_t why_size)
{
    char *path = NULL;
    FILE *f = fopen(uri_file, "r");
    if (NULL == f) {
        snprintf(why, why_size, "%s", strerror(errno));
        return HERD_ERR_NOT_FOUND;
    }
    char line[PATH_MAX + 16];
    while (NULL != fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (0 == strncmp(line, "tool ", 5)) {
            free(path);
            path = strdup(line + 5);
        }
    }
    fclose(f);
    if (NULL == path) {
        snprintf(why, why_size, "it names no tool socket (no \"tool\" line)");
        return HERD_ERR_NOT_FOUND;
    }
    orte_dvm_conn_t *conn = calloc(1, sizeof(*conn));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (NULL == conn) {
        free(path);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    conn->timeout_ms = timeout_ms;
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    conn->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (conn->fd < 0 || 0 != connect(conn->fd, (struct sockaddr *) &addr, sizeof(addr))) {
        snprintf(why, why_size, "%s: %s", path, strerror(errno));
        free(path);
        orte_dvm_conn_close(conn);
        return HERD_ERR_UNREACH;
    }
    free(path);
    *conn_out = conn;
    return HERD_SUCCESS;
}

void orte_dvm_conn_close(orte_dvm_conn_t *conn)
{
    if (NULL != conn) {
        if (conn->fd >= 0) {
            close(conn->fd);
        }
        free(conn);
    }
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly len bytes before the deadline. */
static int read_all(orte_dvm_conn_t *conn, uint8_t *data, size_t len, int64_t deadline)
{
    while (len > 0) {
        int64_t left = deadline - now_ms();
        struct pollfd pfd = {.fd = conn->fd, .events = POLLIN};
        if (left <= 0) {
            return HERD_ERR_TIMEOUT;
        }
        int n = poll(&pfd, 1, (int) left);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? HERD_ERR_IN_ERRNO : HERD_ERR_TIMEOUT;
        }
        ssize_t got = read(conn->fd, data, len);
        if (got < 0 && EINTR == errno) {
            continue;
        }
        if (got <= 0) {
            return HERD_ERR_UNREACH;
        }
        data += got;
        len -= (size_t) got;
    }
    return HERD_SUCCESS;
}

/* Send request, read one frame of type expected back into answer (loaded, type consumed). */
static int exchange(orte_dvm_conn_t *conn, opal_buffer_t *request, uint32_t expected,
                    opal_buffer_t *answer)
{
    int rc = orte_dvm_tool_send_frame(conn->fd, request);
    if (HERD_SUCCESS != rc) {
        return HERD_ERR_UNREACH;
    }
    int64_t deadline = now_ms() + conn->timeout_ms;
    uint8_t header[4];
    if (HERD_SUCCESS != (rc = read_all(conn, header, sizeof(header), deadline))) {
        return rc;
    }
    size_t len = ((size_t) header[0] << 24) | ((size_t) header[1] << 16) |
                 ((size_t) header[2] << 8) | header[3];
    if (len > ORTE_DVM_TOOL_MAX_FRAME) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    uint8_t *data = malloc(len > 0 ? len : 1);
    if (NULL == data) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    rc = read_all(conn, data, len, deadline);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_load(answer, data, len);
    }
    free(data);
    uint32_t type = 0;
    if (HERD_SUCCESS == rc && HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(answer, &type)) &&
        type != expected) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    return rc;
}

int orte_dvm_conn_ps(orte_dvm_conn_t *conn, orte_dvm_ps_t **ps)
{
    opal_buffer_t request, answer;
    int rc;
    opal_buffer_init(&request);
    opal_buffer_init(&answer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_PS)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_VERSION)) &&
        HERD_SUCCESS == (rc = exchange(conn, &request, ORTE_DVM_TOOL_PS_ANSWER, &answer))) {
        rc = orte_dvm_ps_unpack(&answer, ps);
    }
    opal_buffer_destruct(&request);
    opal_buffer_destruct(&answer);
    return rc;
}

int orte_dvm_conn_job_query(orte_dvm_conn_t *conn, const char *jobid, uint32_t what, int *status,
                            opal_buffer_t *answer)
{
    opal_buffer_t request, frame;
    int32_t st = 0;
    void *data = NULL;
    size_t len = 0;
    int rc;
    opal_buffer_init(&request);
    opal_buffer_init(&frame);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_JOB_QUERY)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_VERSION)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_string(&request, jobid)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, what)) &&
        HERD_SUCCESS == (rc = exchange(conn, &request, ORTE_DVM_TOOL_JOB_ANSWER, &frame)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_int32(&frame, &st)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_bytes(&frame, &data, &len))) {
        *status = st;
        if (HERD_SUCCESS == st) {
            rc = opal_buffer_load(answer, data, len);
        }
    }
    free(data);
    opal_buffer_destruct(&request);
    opal_buffer_destruct(&frame);
    return rc;
}

int orte_dvm_conn_cancel(orte_dvm_conn_t *conn, const char *jobid, int signo, int *status,
                         uint32_t *owner)
{
    opal_buffer_t request, answer;
    int32_t st = 0;
    int rc;
    opal_buffer_init(&request);
    opal_buffer_init(&answer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_CANCEL)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_VERSION)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_string(&request, jobid)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_int32(&request, signo)) &&
        HERD_SUCCESS == (rc = exchange(conn, &request, ORTE_DVM_TOOL_CANCEL_ANSWER, &answer)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_int32(&answer, &st)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(&answer, owner))) {
        *status = st;
    }
    opal_buffer_destruct(&request);
    opal_buffer_destruct(&answer);
    return rc;
}

int orte_dvm_conn_rejoin(orte_dvm_conn_t *conn, const char *host, int *status, char **message)
{
    opal_buffer_t request, answer;
    int rc;
    opal_buffer_init(&request);
    opal_buffer_init(&answer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&request, ORTE_DVM_TOOL_REJOIN)) &&
        HERD_SUCCESS == (rc = orte_dvm_rejoin_request_pack(&request, host)) &&
        HERD_SUCCESS == (rc = exchange(conn, &request, ORTE_DVM_TOOL_REJOIN_ANSWER, &answer))) {
        rc = orte_dvm_rejoin_answer_unpack(&answer, status, message);
    }
    opal_buffer_destruct(&request);
    opal_buffer_destruct(&answer);
    return rc;
}
