/* Whole writes (opal/util/fd.h). */
#include "herd_config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#include "opal/util/fd.h"

int opal_fd_write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
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
