/* SPDX-License-Identifier: BSD-3-Clause */
/* A process's pipes, and handing the daemon's ends of them to another process. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "orte/mca/iof/iof.h"

/* Pipe memory this process has asked for beyond the default: a user's pipes share a limit
 * (/proc/sys/fs/pipe-user-pages-soft, 64 MiB by default), past which every new pipe of theirs
 * gets one page. */
#define IOF_PIPE_BUDGET ((size_t) 16 * 1024 * 1024)
static size_t pipe_bytes_granted;

/* A stdout pipe larger than the default lets a process write on while its output is
 * forwarded, instead of waiting for every 64 KiB to be read (several times the throughput of
 * a busy writer). */
static void enlarge(int fd)
{
    size_t want = orte_iof_base_pipe_size();
    if (0 == want || pipe_bytes_granted + want > IOF_PIPE_BUDGET) {
        return;
    }
    int got = fcntl(fd, F_SETPIPE_SZ, (int) want);
    if (got > 0) {
        pipe_bytes_granted += (size_t) got;
    }
}

static void close_all(int fds[], int n)
{
    for (int i = 0; i < n; ++i) {
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
}

int orte_iof_base_make_pipes(bool want_stdin, bool merge_stderr, int child[3], int parent[3])
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    if ((want_stdin && 0 != pipe2(in, O_CLOEXEC)) || 0 != pipe2(out, O_CLOEXEC) ||
        (!merge_stderr && 0 != pipe2(err, O_CLOEXEC))) {
        int saved = errno;
        close_all(in, 2);
        close_all(out, 2);
        close_all(err, 2);
        errno = saved;
        return HERD_ERR_IN_ERRNO;
    }
    /* the daemon's ends never block it; the process's ends stay as a program expects */
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    enlarge(out[0]);
    if (in[1] >= 0) {
        enlarge(in[1]); /* a target reading a large input waits less on herdrun */
    }
    if (err[0] >= 0) {
        fcntl(err[0], F_SETFL, O_NONBLOCK);
    }
    if (in[1] >= 0) {
        fcntl(in[1], F_SETFL, O_NONBLOCK);
    }
    child[0] = in[0];
    child[1] = out[1];
    child[2] = merge_stderr ? out[1] : err[1];
    parent[0] = in[1];
    parent[1] = out[0];
    parent[2] = err[0];
    return HERD_SUCCESS;
}

void orte_iof_base_close_child(int child[3])
{
    if (child[2] == child[1]) {
        child[2] = -1;
    }
    close_all(child, 3);
}

/* The message: the rank, then which of the three ends are present (one byte each). */
typedef struct {
    uint32_t rank;
    uint8_t present[3];
} fds_header_t;

int orte_iof_base_send_fds(int sock, uint32_t rank, const int fds[3])
{
    fds_header_t header;
    int passed[3], n = 0;
    memset(&header, 0, sizeof(header));
    header.rank = rank;
    for (int i = 0; i < 3; ++i) {
        if (fds[i] >= 0) {
            header.present[i] = 1;
            passed[n++] = fds[i];
        }
    }
    union {
        char buf[CMSG_SPACE(sizeof(passed))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct iovec iov = {.iov_base = &header, .iov_len = sizeof(header)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (n > 0) {
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t) n);
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * (size_t) n);
        memcpy(CMSG_DATA(cmsg), passed, sizeof(int) * (size_t) n);
    }
    ssize_t sent;
    do {
        sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
    } while (sent < 0 && EINTR == errno);
    if (sent != (ssize_t) sizeof(header)) {
        return sent < 0 ? HERD_ERR_IN_ERRNO : HERD_ERR_UNREACH;
    }
    return HERD_SUCCESS;
}

int orte_iof_base_recv_fds(int sock, uint32_t *rank, int fds[3])
{
    fds_header_t header;
    int got[3] = {-1, -1, -1};
    union {
        char buf[CMSG_SPACE(sizeof(got))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct iovec iov = {.iov_base = &header, .iov_len = sizeof(header)};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
        .msg_controllen = sizeof(control.buf)};
    ssize_t n;
    do {
        n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (n < 0 && EINTR == errno);
    if (n < 0) {
        return (EAGAIN == errno || EWOULDBLOCK == errno) ? HERD_ERR_NOT_FOUND : HERD_ERR_IN_ERRNO;
    }
    if (0 == n) {
        return HERD_ERR_UNREACH;
    }
    int count = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); NULL != c; c = CMSG_NXTHDR(&msg, c)) {
        if (SOL_SOCKET == c->cmsg_level && SCM_RIGHTS == c->cmsg_type) {
            size_t bytes = c->cmsg_len - CMSG_LEN(0);
            count = (int) (bytes / sizeof(int));
            if (count > 3) {
                count = 3;
            }
            memcpy(got, CMSG_DATA(c), sizeof(int) * (size_t) count);
        }
    }
    int expected = 0;
    for (int i = 0; i < 3; ++i) {
        expected += header.present[i] ? 1 : 0;
    }
    if (n != (ssize_t) sizeof(header) || (msg.msg_flags & MSG_CTRUNC) || count != expected) {
        close_all(got, 3);
        return HERD_ERR_UNPACK_FAILURE;
    }
    int next = 0;
    for (int i = 0; i < 3; ++i) {
        fds[i] = header.present[i] ? got[next++] : -1;
        if (fds[i] >= 0) {
            fcntl(fds[i], F_SETFL, O_NONBLOCK);
        }
    }
    *rank = header.rank;
    return HERD_SUCCESS;
}
