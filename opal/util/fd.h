/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing a whole buffer to a file descriptor; a tool's standard descriptors. */
#ifndef OPAL_UTIL_FD_H
#define OPAL_UTIL_FD_H

#include <stddef.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* Write all len bytes, retrying after signals and, on a non-blocking descriptor, waiting until
 * it takes more. HERD_ERR_IN_ERRNO (errno set) when the descriptor refuses (a closed pipe). */
OPAL_EXPORT int opal_fd_write_all(int fd, const void *data, size_t len);

/* The same for a socket, with MSG_NOSIGNAL: a peer that is gone (a process that died, a daemon
 * killed) is HERD_ERR_IN_ERRNO with errno EPIPE, never a SIGPIPE that kills the writer. Every
 * socket a library or daemon writes to goes through this, not opal_fd_write_all: the process
 * may not ignore SIGPIPE (an application linking libherd, a unit test). ENOTSOCK for anything
 * else. */
OPAL_EXPORT int opal_fd_send_all(int fd, const void *data, size_t len);

/* Open /dev/null on whichever of stdin, stdout and stderr is closed (herdrun <&- or >&-) or
 * open the wrong way (stdout read-only), at a tool's start: else the first socket or pipe it
 * opens would take that number, and the processes' input or output would be read from it or
 * written into it. */
OPAL_EXPORT void opal_fd_fill_stdio(void);

#endif /* OPAL_UTIL_FD_H */
