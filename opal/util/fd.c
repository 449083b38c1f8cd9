/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole writes, and a tool's standard descriptors (opal/util/fd.h). */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/util/fd.h"

static int put_all(int fd, const void *data, size_t len, bool socket)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = socket ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            poll(&pfd, 1, -1); /* rather than spin until the reader catches up */
            continue;
        }
        if (n <= 0) {
            return HERD_ERR_IN_ERRNO;
        }
        p += n;
        len -= (size_t) n;
    }
    return HERD_SUCCESS;
}

int opal_fd_write_all(int fd, const void *data, size_t len)
{
    return put_all(fd, data, len, false);
}

int opal_fd_send_all(int fd, const void *data, size_t len)
{
    return put_all(fd, data, len, true);
}

void opal_fd_fill_stdio(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
        int wanted = STDIN_FILENO == fd ? O_RDONLY : O_WRONLY;
        int flags = fcntl(fd, F_GETFL);
        if (flags >= 0 && (O_RDWR == (flags & O_ACCMODE) || wanted == (flags & O_ACCMODE))) {
            continue;
        }
        if (flags < 0 && EBADF != errno) {
            continue;
        }
        /* closed, or open the wrong way round (a file a shell read its script from) */
        int null = open("/dev/null", wanted | O_CLOEXEC);
        if (null >= 0 && null != fd) {
            dup2(null, fd); /* without O_CLOEXEC: the processes' side of it is theirs */
            close(null);
        } else if (null == fd) {
            fcntl(fd, F_SETFD, 0);
        }
    }
}
