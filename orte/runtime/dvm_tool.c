/* SPDX-License-Identifier: BSD-3-Clause */
/* The DVM's tool interface (orte/runtime/dvm_tool.h): a Unix socket with length-prefixed,
 * versioned messages, each decoded by one function that rejects malformed input. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"
#include "opal/util/tmpdir.h"
#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/job.h"

#include "orte/runtime/dvm_tool_internal.h"

/* the message types (dvm_tool_internal.h lists them all) */
enum {
    TOOL_HELLO = ORTE_DVM_TOOL_HELLO,
    TOOL_WELCOME = ORTE_DVM_TOOL_WELCOME,
    TOOL_LAUNCH = ORTE_DVM_TOOL_LAUNCH,
    TOOL_JOB_ERROR = ORTE_DVM_TOOL_JOB_ERROR,
    /* root -> tool: {jobid, node}: the job waits for a session slot there ("": it started) */
    TOOL_JOB_QUEUE = ORTE_DVM_TOOL_JOB_QUEUE,
};

static const char *help_file = "help-dvm.txt";

/* ------------------------------------------------------------------------------------------ */
/* framing */

int orte_dvm_tool_send_frame(int fd, const opal_buffer_t *buffer)
{
    uint8_t header[4] = {(uint8_t) (buffer->used >> 24), (uint8_t) (buffer->used >> 16),
                         (uint8_t) (buffer->used >> 8), (uint8_t) buffer->used};
    int rc = opal_fd_send_all(fd, header, sizeof(header));
    return HERD_SUCCESS == rc ? opal_fd_send_all(fd, buffer->base, buffer->used) : rc;
}

/* Bytes read so far on a connection; a frame is complete once header and payload are in. */
typedef struct {
    uint8_t *data;
    size_t used;
    size_t size;
} inbuf_t;

/* Read what is there; HERD_ERR_UNREACH at EOF or on an error. */
static int inbuf_fill(int fd, inbuf_t *in)
{
    for (;;) {
        if (in->size - in->used < 4096) {
            size_t size = in->size ? 2 * in->size : 8192;
            uint8_t *grown = realloc(in->data, size);
            if (NULL == grown) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            in->data = grown;
            in->size = size;
        }
        ssize_t n = read(fd, in->data + in->used, in->size - in->used);
        if (n > 0) {
            in->used += (size_t) n;
            continue;
        }
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && EAGAIN == errno) {
            return HERD_SUCCESS;
        }
        return HERD_ERR_UNREACH;
    }
}

/* The next whole frame as a loaded buffer (consumed from in); HERD_ERR_NOT_FOUND when not all
 * of it is here yet, HERD_ERR_UNPACK_FAILURE for an oversized one. */
static int inbuf_next(inbuf_t *in, opal_buffer_t *frame)
{
    if (in->used < 4) {
        return HERD_ERR_NOT_FOUND;
    }
    size_t len = ((size_t) in->data[0] << 24) | ((size_t) in->data[1] << 16) |
                 ((size_t) in->data[2] << 8) | in->data[3];
    if (len > ORTE_DVM_TOOL_MAX_FRAME) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (in->used < 4 + len) {
        return HERD_ERR_NOT_FOUND;
    }
    int rc = opal_buffer_load(frame, in->data + 4, len);
    memmove(in->data, in->data + 4 + len, in->used - 4 - len);
    in->used -= 4 + len;
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* root side */

typedef struct tool_conn {
    int fd;
    opal_event_t *event;
    inbuf_t in;
    uint32_t seq;
    char *jobid;
    struct ucred cred; /* the peer's */
    struct tool_conn *next;
} tool_conn_t;

static struct {
    orte_dvm_t *dvm;
    int listen_fd;
    opal_event_t *listen_event;
    char *path;
    tool_conn_t *conns;
} server = {.listen_fd = -1};

static void conn_close(tool_conn_t *conn)
{
    for (tool_conn_t **p = &server.conns; NULL != *p; p = &(*p)->next) {
        if (*p == conn) {
            *p = conn->next;
            break;
        }
    }
    if (NULL != conn->jobid && NULL != server.dvm) {
        orte_dvm_root_withdraw(server.dvm, conn->jobid); /* if it still waits for a slot */
    }
    orte_dvm_tool_jobs_conn_closed(conn->fd);
    dvm_rejoin_conn_closed(server.dvm, conn->fd);
    opal_event_free(conn->event);
    close(conn->fd);
    free(conn->in.data);
    free(conn->jobid);
    free(conn);
}

static int send_welcome(tool_conn_t *conn)
{
    const orte_allocation_t *alloc = orte_dvm_allocation(server.dvm);
    opal_buffer_t buffer;
    int rc;
    opal_buffer_init(&buffer);
    conn->seq = orte_dvm_next_job_seq(server.dvm);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, TOOL_WELCOME)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_VERSION)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_string(&buffer, orte_dvm_id(server.dvm))) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, orte_dvm_radix(server.dvm))) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, conn->seq)) &&
        HERD_SUCCESS == (rc = orte_allocation_pack(&buffer, alloc))) {
        rc = opal_buffer_pack_uint32(&buffer, alloc->num_nodes);
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < alloc->num_nodes; ++i) {
        rc = orte_inventory_pack(&buffer, orte_dvm_node_inventory(server.dvm, i), true);
    }
    /* which nodes can take jobs: a node whose daemon was lost is down */
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < alloc->num_nodes; ++i) {
        rc = opal_buffer_pack_bool(&buffer, orte_dvm_node_up(server.dvm, i));
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_tool_send_frame(conn->fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

static int handle_frame(tool_conn_t *conn, opal_buffer_t *frame)
{
    uint32_t type = 0, version = 0;
    int rc = opal_buffer_unpack_uint32(frame, &type);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (TOOL_HELLO == type) {
        rc = opal_buffer_unpack_uint32(frame, &version);
        if (HERD_SUCCESS != rc || ORTE_DVM_TOOL_VERSION != version) {
            return HERD_ERR_VERSION_MISMATCH;
        }
        return send_welcome(conn);
    }
    if (TOOL_LAUNCH == type && 0 != conn->seq && NULL == conn->jobid) {
        void *message = NULL;
        size_t len = 0;
        char jobid[128];
        rc = opal_buffer_unpack_bytes(frame, &message, &len);
        if (HERD_SUCCESS == rc) {
            /* the tool may only launch the job number it was given, on this DVM's nodes */
            orte_job_launch_t *launch = NULL;
            opal_buffer_t check;
            opal_buffer_init(&check);
            snprintf(jobid, sizeof(jobid), "%s.%u", orte_dvm_id(server.dvm), conn->seq);
            rc = opal_buffer_load(&check, message, len);
            if (HERD_SUCCESS == rc) {
                rc = orte_job_launch_unpack(&check, orte_dvm_allocation(server.dvm)->num_nodes,
                                            &launch);
            }
            if (HERD_SUCCESS == rc &&
                (launch->spec->seq != conn->seq || 0 != strcmp(launch->spec->jobid, jobid))) {
                rc = HERD_ERR_BAD_PARAM;
            }
            if (HERD_SUCCESS == rc) {
                /* for herd-ps and herd-cancel */
                rc = orte_dvm_tool_jobs_add(server.dvm, conn->fd, conn->cred.uid, conn->cred.pid,
                                            launch);
            }
            opal_buffer_destruct(&check);
            if (HERD_SUCCESS == rc && NULL == (conn->jobid = strdup(jobid))) {
                rc = HERD_ERR_OUT_OF_RESOURCE;
            }
            if (HERD_SUCCESS == rc) {
                /* the root gives it session slots (or queues it) and broadcasts it */
                rc = orte_dvm_root_submit(server.dvm, launch);
                launch = NULL;
            }
            orte_job_launch_free(launch);
        }
        free(message);
        return rc;
    }
    if (ORTE_DVM_TOOL_REJOIN == type) {
        return dvm_rejoin_tool_request(server.dvm, conn->fd, frame);
    }
    if (type > TOOL_JOB_ERROR) {
        return orte_dvm_tool_jobs_frame(server.dvm, conn->fd, conn->cred.uid, type, frame);
    }
    return HERD_ERR_UNPACK_FAILURE;
}

static void conn_cb(int fd, short what, void *arg)
{
    tool_conn_t *conn = arg;
    int rc = inbuf_fill(fd, &conn->in);
    for (;;) {
        opal_buffer_t frame;
        opal_buffer_init(&frame);
        int frc = inbuf_next(&conn->in, &frame);
        if (HERD_ERR_NOT_FOUND == frc) {
            opal_buffer_destruct(&frame);
            break;
        }
        if (HERD_SUCCESS == frc) {
            frc = handle_frame(conn, &frame);
        }
        opal_buffer_destruct(&frame);
        if (HERD_SUCCESS != frc) {
            opal_output(OPAL_OUTPUT_STDERR, "herd-dvm: dropping a tool connection: %s",
                        opal_strerror(frc));
            conn_close(conn);
            return;
        }
    }
    if (HERD_SUCCESS != rc) {
        conn_close(conn); /* the tool is gone; its job's session daemons see it too */
    }
}

static void accept_cb(int fd, short what, void *arg)
{
    int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (cfd < 0) {
        return;
    }
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (0 != getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != getuid()) {
        close(cfd); /* only the DVM's own user may use it */
        return;
    }
    tool_conn_t *conn = calloc(1, sizeof(*conn));
    if (NULL == conn) {
        close(cfd);
        return;
    }
    conn->fd = cfd;
    conn->cred = cred;
    if (HERD_SUCCESS != opal_event_fd_create(orte_dvm_event_base(server.dvm), cfd,
                                             OPAL_EVENT_READ | OPAL_EVENT_PERSIST, conn_cb, conn,
                                             &conn->event)) {
        close(cfd);
        free(conn);
        return;
    }
    opal_event_add(conn->event, NULL);
    conn->next = server.conns;
    server.conns = conn;
}

static void server_job_error(const char *jobid, const char *node, const char *message, void *arg)
{
    for (tool_conn_t *conn = server.conns; NULL != conn; conn = conn->next) {
        if (NULL != conn->jobid && 0 == strcmp(conn->jobid, jobid)) {
            opal_buffer_t buffer;
            opal_buffer_init(&buffer);
            if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, TOOL_JOB_ERROR) &&
                HERD_SUCCESS == opal_buffer_pack_string(&buffer, jobid) &&
                HERD_SUCCESS == opal_buffer_pack_string(&buffer, node) &&
                HERD_SUCCESS == opal_buffer_pack_string(&buffer, message)) {
                orte_dvm_tool_send_frame(conn->fd, &buffer);
            }
            opal_buffer_destruct(&buffer);
            return;
        }
    }
    fprintf(stderr, "%s", message); /* no tool runs that job: a whole help-dvm.txt message */
}

static void server_job_queue(const char *jobid, const char *waiting_on, void *arg)
{
    for (tool_conn_t *conn = server.conns; NULL != conn; conn = conn->next) {
        if (NULL != conn->jobid && 0 == strcmp(conn->jobid, jobid)) {
            opal_buffer_t buffer;
            opal_buffer_init(&buffer);
            if (HERD_SUCCESS == opal_buffer_pack_uint32(&buffer, TOOL_JOB_QUEUE) &&
                HERD_SUCCESS == opal_buffer_pack_string(&buffer, jobid) &&
                HERD_SUCCESS ==
                    opal_buffer_pack_string(&buffer, NULL != waiting_on ? waiting_on : "")) {
                orte_dvm_tool_send_frame(conn->fd, &buffer);
            }
            opal_buffer_destruct(&buffer);
            return;
        }
    }
}

int orte_dvm_tool_server_start(orte_dvm_t *dvm, char **path_out)
{
    char dir[PATH_MAX];
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    /* a folder only we may use: a socket in someone else's could be replaced under us */
    int rc = opal_private_tmpdir(dir, sizeof(dir));
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_IN_ERRNO != rc) {
            errno = EPERM; /* herd-dvm says why with strerror(errno) */
        }
        return HERD_ERR_IN_ERRNO;
    }
    if ((size_t) snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/dvm-%s.sock", dir,
                          orte_dvm_id(dvm)) >= sizeof(addr.sun_path)) {
        errno = ENAMETOOLONG;
        return HERD_ERR_IN_ERRNO;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    unlink(addr.sun_path);
    mode_t old = umask(077);
    int failed = bind(fd, (struct sockaddr *) &addr, sizeof(addr)) || listen(fd, 64);
    umask(old);
    if (failed) {
        int saved = errno;
        close(fd);
        errno = saved;
        return HERD_ERR_IN_ERRNO;
    }
    server.dvm = dvm;
    server.listen_fd = fd;
    server.path = strdup(addr.sun_path);
    rc = opal_event_fd_create(orte_dvm_event_base(dvm), fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              accept_cb, NULL, &server.listen_event);
    if (HERD_SUCCESS != rc || NULL == server.path) {
        orte_dvm_tool_server_stop();
        return HERD_SUCCESS == rc ? HERD_ERR_OUT_OF_RESOURCE : rc;
    }
    opal_event_add(server.listen_event, NULL);
    orte_dvm_root_set_job_error_cb(dvm, server_job_error, NULL);
    orte_dvm_root_set_job_queue_cb(dvm, server_job_queue, NULL);
    orte_dvm_tool_jobs_serve(dvm); /* PMIx tools (pps, pquery), when a tool server is there */
    *path_out = strdup(server.path);
    return NULL != *path_out ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

void orte_dvm_tool_server_stop(void)
{
    while (NULL != server.conns) {
        conn_close(server.conns);
    }
    orte_dvm_tool_jobs_clear();
    if (NULL != server.listen_event) {
        opal_event_free(server.listen_event);
        server.listen_event = NULL;
    }
    if (server.listen_fd >= 0) {
        close(server.listen_fd);
        server.listen_fd = -1;
    }
    if (NULL != server.path) {
        unlink(server.path);
        free(server.path);
        server.path = NULL;
    }
    if (NULL != server.dvm) {
        orte_dvm_root_set_job_error_cb(server.dvm, NULL, NULL);
        orte_dvm_root_set_job_queue_cb(server.dvm, NULL, NULL);
        server.dvm = NULL;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* tool side */

struct orte_dvm_client {
    int fd;
    opal_event_t *event;
    inbuf_t in;
    char *id;
    uint32_t radix;
    uint32_t seq;
    orte_allocation_t *allocation;
    orte_inventory_t **inventories;
    uint32_t num_inventories;
    bool *up; /* by node index */
    orte_dvm_job_error_cb_t cb;
    void *cb_arg;
    orte_dvm_job_queue_cb_t queue_cb;
    void *queue_arg;
    orte_dvm_client_query_cb_t query_cb; /* herd-ps asks about our job */
    orte_dvm_client_signal_cb_t signal_cb; /* herd-cancel */
    void *tool_arg;
    bool lost;
    char *tool_path;
};

static int read_contact(const char *uri_file, char **tool_path)
{
    if (HERD_SUCCESS != orte_dvm_contact_check_owner(uri_file, "herdrun")) {
        return HERD_ERR_SILENT;
    }
    FILE *f = fopen(uri_file, "r");
    char line[PATH_MAX + 16];
    if (NULL == f) {
        opal_show_help(help_file, "contact-unreadable", false, uri_file, strerror(errno), uri_file);
        return HERD_ERR_SILENT;
    }
    *tool_path = NULL;
    while (NULL != fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (0 == strncmp(line, "tool ", 5)) {
            free(*tool_path);
            *tool_path = strdup(line + 5);
        }
    }
    fclose(f);
    if (NULL == *tool_path) {
        opal_show_help(help_file, "contact-without-tool", false, uri_file);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* Blocking until one frame is in (the welcome). */
static int read_frame_blocking(orte_dvm_client_t *client, opal_buffer_t *frame)
{
    for (;;) {
        int rc = inbuf_next(&client->in, frame);
        if (HERD_ERR_NOT_FOUND != rc) {
            return rc;
        }
        if (client->in.size - client->in.used < 65536) {
            size_t size = client->in.size ? 2 * client->in.size : 65536;
            uint8_t *grown = realloc(client->in.data, size);
            if (NULL == grown) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            client->in.data = grown;
            client->in.size = size;
        }
        ssize_t n =
            read(client->fd, client->in.data + client->in.used, client->in.size - client->in.used);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return HERD_ERR_UNREACH;
        }
        client->in.used += (size_t) n;
    }
}

static int unpack_welcome(orte_dvm_client_t *client, opal_buffer_t *frame)
{
    uint32_t type = 0, version = 0, n = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &type)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &version))) {
        return rc;
    }
    if (TOOL_WELCOME != type || ORTE_DVM_TOOL_VERSION != version) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(frame, &client->id)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &client->radix)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &client->seq)) ||
        HERD_SUCCESS != (rc = orte_allocation_unpack(frame, &client->allocation)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(frame, &n))) {
        return rc;
    }
    if (NULL == client->id || 0 == client->radix || n != client->allocation->num_nodes) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    client->inventories = calloc(n > 0 ? n : 1, sizeof(*client->inventories));
    if (NULL == client->inventories) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (HERD_SUCCESS != (rc = orte_inventory_unpack(frame, &client->inventories[i]))) {
            return rc;
        }
        client->num_inventories = i + 1;
    }
    client->up = calloc(n > 0 ? n : 1, sizeof(*client->up));
    if (NULL == client->up) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (HERD_SUCCESS != (rc = opal_buffer_unpack_bool(frame, &client->up[i]))) {
            return rc;
        }
    }
    return HERD_SUCCESS;
}

/* A question or a signal from the root for the job this herdrun drives (herd-ps, herd-cancel):
 * false for anything else. */
static bool client_tool_frame(orte_dvm_client_t *client, uint32_t type, opal_buffer_t *frame)
{
    if (ORTE_DVM_TOOL_JOB_QUERY == type) {
        uint32_t qid = 0, what = 0;
        if (HERD_SUCCESS == opal_buffer_unpack_uint32(frame, &qid) &&
            HERD_SUCCESS == opal_buffer_unpack_uint32(frame, &what)) {
            if (NULL != client->query_cb) {
                client->query_cb(qid, what, client->tool_arg);
            } else {
                orte_dvm_client_answer(client, qid, HERD_ERR_NOT_AVAILABLE, NULL);
            }
        }
        return true;
    }
    if (ORTE_DVM_TOOL_SIGNAL == type) {
        int32_t signo = 0, pid = 0;
        uint32_t uid = 0;
        if (HERD_SUCCESS == opal_buffer_unpack_int32(frame, &signo) &&
            HERD_SUCCESS == opal_buffer_unpack_uint32(frame, &uid) &&
            HERD_SUCCESS == opal_buffer_unpack_int32(frame, &pid) && signo > 0 && signo < 65 &&
            NULL != client->signal_cb) {
            client->signal_cb(signo, uid, pid, client->tool_arg);
        }
        return true;
    }
    return false;
}

static void client_cb(int fd, short what, void *arg)
{
    orte_dvm_client_t *client = arg;
    int rc = inbuf_fill(fd, &client->in);
    for (;;) {
        opal_buffer_t frame;
        uint32_t type = 0;
        char *jobid = NULL, *node = NULL, *message = NULL;
        opal_buffer_init(&frame);
        int frc = inbuf_next(&client->in, &frame);
        if (HERD_SUCCESS == frc && HERD_SUCCESS == opal_buffer_unpack_uint32(&frame, &type) &&
            client_tool_frame(client, type, &frame)) {
            opal_buffer_destruct(&frame);
            continue;
        }
        if (HERD_SUCCESS == frc && TOOL_JOB_ERROR == type &&
            HERD_SUCCESS == opal_buffer_unpack_string(&frame, &jobid) &&
            HERD_SUCCESS == opal_buffer_unpack_string(&frame, &node) &&
            HERD_SUCCESS == opal_buffer_unpack_string(&frame, &message) && NULL != jobid &&
            NULL != node && NULL != message && NULL != client->cb) {
            client->cb(jobid, node, message, client->cb_arg);
        } else if (HERD_SUCCESS == frc && TOOL_JOB_QUEUE == type &&
                   HERD_SUCCESS == opal_buffer_unpack_string(&frame, &jobid) &&
                   HERD_SUCCESS == opal_buffer_unpack_string(&frame, &node) && NULL != jobid &&
                   NULL != client->queue_cb) {
            client->queue_cb(jobid, (NULL == node || '\0' == node[0]) ? NULL : node,
                             client->queue_arg);
        }
        free(jobid);
        free(node);
        free(message);
        opal_buffer_destruct(&frame);
        if (HERD_SUCCESS != frc) {
            break;
        }
    }
    if (HERD_SUCCESS != rc && !client->lost) {
        client->lost = true;
        opal_event_del(client->event);
        if (NULL != client->cb) {
            client->cb("?", "the DVM's root",
                       "herdrun: the DVM (herd-dvm) went away while the job ran\n", client->cb_arg);
        }
    }
}

void orte_dvm_client_set_tool_cbs(orte_dvm_client_t *client, orte_dvm_client_query_cb_t query_cb,
                                  orte_dvm_client_signal_cb_t signal_cb, void *arg)
{
    client->query_cb = query_cb;
    client->signal_cb = signal_cb;
    client->tool_arg = arg;
}

int orte_dvm_client_answer(orte_dvm_client_t *client, uint32_t qid, int status,
                           const opal_buffer_t *answer)
{
    opal_buffer_t buffer;
    int rc;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_JOB_ANSWER)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, qid)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_int32(&buffer, status))) {
        rc = opal_buffer_pack_bytes(&buffer, NULL != answer ? answer->base : NULL,
                                    NULL != answer ? answer->used : 0);
    }
    if (HERD_SUCCESS == rc && !client->lost) {
        rc = orte_dvm_tool_send_frame(client->fd, &buffer);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

int orte_dvm_client_connect(const char *uri_file, opal_event_base_t *base,
                            orte_dvm_client_t **client_out)
{
    char *path = NULL;
    int rc = read_contact(uri_file, &path);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    orte_dvm_client_t *client = calloc(1, sizeof(*client));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (NULL == client) {
        free(path);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    client->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client->fd < 0 || 0 != connect(client->fd, (struct sockaddr *) &addr, sizeof(addr))) {
        opal_show_help(help_file, "dvm-unreachable", false, uri_file, path, strerror(errno));
        free(path);
        orte_dvm_client_close(client);
        return HERD_ERR_SILENT;
    }
    client->tool_path = path;
    opal_buffer_t buffer, frame;
    opal_buffer_init(&buffer);
    opal_buffer_init(&frame);
    rc = opal_buffer_pack_uint32(&buffer, TOOL_HELLO);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_uint32(&buffer, ORTE_DVM_TOOL_VERSION);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_dvm_tool_send_frame(client->fd, &buffer);
    }
    if (HERD_SUCCESS == rc) {
        rc = read_frame_blocking(client, &frame);
    }
    if (HERD_SUCCESS == rc) {
        rc = unpack_welcome(client, &frame);
    }
    opal_buffer_destruct(&buffer);
    opal_buffer_destruct(&frame);
    if (HERD_SUCCESS == rc) {
        fcntl(client->fd, F_SETFL, fcntl(client->fd, F_GETFL) | O_NONBLOCK);
        rc = opal_event_fd_create(base, client->fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST, client_cb,
                                  client, &client->event);
    }
    if (HERD_SUCCESS != rc) {
        opal_show_help(help_file, "dvm-bad-answer", false, uri_file, opal_strerror(rc));
        orte_dvm_client_close(client);
        return HERD_ERR_SILENT;
    }
    opal_event_add(client->event, NULL);
    *client_out = client;
    return HERD_SUCCESS;
}

void orte_dvm_client_close(orte_dvm_client_t *client)
{
    if (NULL == client) {
        return;
    }
    if (NULL != client->event) {
        opal_event_free(client->event);
    }
    if (client->fd >= 0) {
        close(client->fd);
    }
    for (uint32_t i = 0; i < client->num_inventories; ++i) {
        orte_inventory_free(client->inventories[i]);
    }
    free(client->inventories);
    free(client->up);
    orte_allocation_free(client->allocation);
    free(client->in.data);
    free(client->id);
    free(client->tool_path);
    free(client);
}

const orte_allocation_t *orte_dvm_client_allocation(const orte_dvm_client_t *client)
{
    return client->allocation;
}

const orte_inventory_t *orte_dvm_client_inventory(const orte_dvm_client_t *client,
                                                  uint32_t node_index)
{
    return node_index < client->num_inventories ? client->inventories[node_index] : NULL;
}

bool orte_dvm_client_node_up(const orte_dvm_client_t *client, uint32_t node_index)
{
    return node_index < client->num_inventories && NULL != client->up && client->up[node_index];
}

uint32_t orte_dvm_client_radix(const orte_dvm_client_t *client)
{
    return client->radix;
}

const char *orte_dvm_client_id(const orte_dvm_client_t *client)
{
    return client->id;
}

uint32_t orte_dvm_client_seq(const orte_dvm_client_t *client)
{
    return client->seq;
}

int orte_dvm_client_launch(orte_dvm_client_t *client, const void *message, size_t len,
                           orte_dvm_job_error_cb_t cb, void *arg)
{
    opal_buffer_t buffer;
    int rc;
    client->cb = cb;
    client->cb_arg = arg;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == (rc = opal_buffer_pack_uint32(&buffer, TOOL_LAUNCH)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_bytes(&buffer, message, len))) {
        /* blocking write: the launch must be out before we wait on the job */
        int flags = fcntl(client->fd, F_GETFL);
        fcntl(client->fd, F_SETFL, flags & ~O_NONBLOCK);
        rc = orte_dvm_tool_send_frame(client->fd, &buffer);
        fcntl(client->fd, F_SETFL, flags);
    }
    opal_buffer_destruct(&buffer);
    return rc;
}

void orte_dvm_client_set_queue_cb(orte_dvm_client_t *client, orte_dvm_job_queue_cb_t cb, void *arg)
{
    client->queue_cb = cb;
    client->queue_arg = arg;
}

const char *orte_dvm_client_tool_path(const orte_dvm_client_t *client)
{
    return client->tool_path;
}

int orte_dvm_contact_tool_path(const char *uri_file, char **tool_path)
{
    return read_contact(uri_file, tool_path);
}

int orte_dvm_job_iof_path(const char *tool_path, uint32_t seq, char *path, size_t size)
{
    size_t len = strlen(tool_path);
    const char *suffix = ".sock";
    size_t slen = strlen(suffix);
    if (len > slen && 0 == strcmp(tool_path + len - slen, suffix)) {
        len -= slen;
    }
    int n = snprintf(path, size, "%.*s.job-%u.iof", (int) len, tool_path, seq);
    return (n < 0 || (size_t) n >= size) ? HERD_ERR_BAD_PARAM : HERD_SUCCESS;
}
