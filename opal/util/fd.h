/* Writing a whole buffer to a file descriptor. */
#ifndef OPAL_UTIL_FD_H
#define OPAL_UTIL_FD_H

#include <stddef.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* Write all len bytes, retrying after signals and, on a non-blocking descriptor, waiting until
 * it takes more. HERD_ERR_IN_ERRNO (errno set) when the descriptor refuses (a closed pipe). */
OPAL_EXPORT int opal_fd_write_all(int fd, const void *data, size_t len);

#endif /* OPAL_UTIL_FD_H */
