/* Writing a whole buffer to a file descriptor; a tool's standard descriptors. */
#ifndef OPAL_UTIL_FD_H
#define OPAL_UTIL_FD_H

#include <stddef.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* Write all len bytes, retrying after signals and, on a non-blocking descriptor, waiting until
 * it takes more. HERD_ERR_IN_ERRNO (errno set) when the descriptor refuses (a closed pipe). */
OPAL_EXPORT int opal_fd_write_all(int fd, const void *data, size_t len);

/* Open /dev/null on whichever of stdin, stdout and stderr is closed (herdrun <&- or >&-) or
 * open the wrong way (stdout read-only), at a tool's start: else the first socket or pipe it
 * opens would take that number, and the processes' input or output would be read from it or
 * written into it. */
OPAL_EXPORT void opal_fd_fill_stdio(void);

#endif /* OPAL_UTIL_FD_H */
