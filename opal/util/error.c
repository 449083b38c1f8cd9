/* SPDX-License-Identifier: BSD-3-Clause */
/* Short descriptions of herd status codes, for log lines and error messages. */
#include "herd_config.h"

#include "opal/status.h"

const char *opal_strerror(int status)
{
    /* Fixed strings only: a formatted "unknown error (N)" would need a shared buffer, which is
     * not safe when several threads report errors at once. */
    switch (status) {
    case HERD_SUCCESS:
        return "success";
    case HERD_ERROR:
        return "error";
    case HERD_ERR_OUT_OF_RESOURCE:
        return "out of memory or another resource";
    case HERD_ERR_BAD_PARAM:
        return "invalid argument or value";
    case HERD_ERR_NOT_FOUND:
        return "not found";
    case HERD_ERR_NOT_AVAILABLE:
        return "not available";
    case HERD_ERR_TAKE_NEXT:
        return "declined; try the next module";
    case HERD_ERR_NOT_SUPPORTED:
        return "operation not supported";
    case HERD_ERR_VERSION_MISMATCH:
        return "version mismatch";
    case HERD_ERR_UNPACK_READ_PAST_END:
        return "buffer ended before the value being unpacked";
    case HERD_ERR_UNPACK_FAILURE:
        return "buffer holds a malformed value";
    case HERD_ERR_PACK_MISMATCH:
        return "unpacked type differs from the packed type";
    case HERD_ERR_TIMEOUT:
        return "timed out";
    case HERD_ERR_IN_ERRNO:
        return "system call failed (see errno)";
    case HERD_ERR_EXISTS:
        return "already exists";
    case HERD_ERR_UNREACH:
        return "peer unreachable";
    case HERD_ERR_AUTH:
        return "authentication failed";
    case HERD_ERR_SILENT:
        return "error already reported";
    case HERD_ERR_TRUNCATE:
        return "message truncated";
    default:
        return "unknown status code";
    }
}
