/* SPDX-License-Identifier: BSD-3-Clause */
/* The one status enum shared by every layer of herd: zero is success, errors are negative. */
#ifndef OPAL_STATUS_H
#define OPAL_STATUS_H

#include "opal/visibility.h"

/* The same codes are public in <herd.h> (libherd's API), under the same guard: whichever header
 * comes first defines them (test/unit/wireup/test_libherd.c checks the two agree). */
#ifndef HERD_STATUS_CODES_DEFINED
#define HERD_STATUS_CODES_DEFINED
typedef enum {
    HERD_SUCCESS = 0,
    HERD_ERROR = -1,                     /* generic failure, already reported */
    HERD_ERR_OUT_OF_RESOURCE = -2,       /* memory or another finite resource */
    HERD_ERR_BAD_PARAM = -3,             /* an argument or a user-supplied value is invalid */
    HERD_ERR_NOT_FOUND = -4,             /* a named thing does not exist */
    HERD_ERR_NOT_AVAILABLE = -5,         /* a component declines to run here (skipped silently) */
    HERD_ERR_TAKE_NEXT = -6,             /* a module declines this request; try the next one */
    HERD_ERR_NOT_SUPPORTED = -7,         /* the operation is not supported by this module */
    HERD_ERR_VERSION_MISMATCH = -8,      /* ABI or interface version differs */
    HERD_ERR_UNPACK_READ_PAST_END = -9,  /* a buffer ended before the value it should hold */
    HERD_ERR_UNPACK_FAILURE = -10,       /* a buffer holds a malformed value */
    HERD_ERR_PACK_MISMATCH = -11,        /* an unpack asked for a different type than was packed */
    HERD_ERR_TIMEOUT = -12,              /* something did not happen in time */
    HERD_ERR_IN_ERRNO = -13,             /* a system call failed; errno tells why */
    HERD_ERR_EXISTS = -14,               /* the thing being added already exists */
    HERD_ERR_UNREACH = -15,              /* a peer cannot be reached */
    HERD_ERR_AUTH = -16,                 /* authentication failed */
    HERD_ERR_SILENT = -17,               /* already reported: do not report again */
    HERD_ERR_TRUNCATE = -18,             /* a message is larger than the buffer given for it */
    HERD_ERR_MAX = -19                   /* one past the last error code */
} herd_status_t;
#endif /* HERD_STATUS_CODES_DEFINED */

/* A short description of a status code, e.g. "not found"; never NULL. */
OPAL_EXPORT const char *opal_strerror(int status);

#endif /* OPAL_STATUS_H */
