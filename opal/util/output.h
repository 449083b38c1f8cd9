/* SPDX-License-Identifier: BSD-3-Clause */
/* Output streams: stderr messages with a prefix, and per-framework verbose output
 * (HERD_MCA_<fw>_base_verbose=N shows messages of level <= N). */
#ifndef OPAL_UTIL_OUTPUT_H
#define OPAL_UTIL_OUTPUT_H

#include <stdarg.h>

#include "opal/status.h"

/* Stream 0 always exists: stderr, no prefix, verbosity 0. */
#define OPAL_OUTPUT_STDERR 0

/* Open a stream writing to stderr with "[host:pid] prefix: " before each line; messages of
 * level <= verbosity are shown. Returns the stream id (>= 1) or a negative status. */
OPAL_EXPORT int opal_output_open(const char *prefix, int verbosity);
OPAL_EXPORT void opal_output_set_verbosity(int stream, int verbosity);
OPAL_EXPORT int opal_output_get_verbosity(int stream);
OPAL_EXPORT void opal_output_close(int stream);

/* Always printed (on an unknown or closed stream: to stderr with no prefix). */
OPAL_EXPORT void opal_output(int stream, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Printed when level <= the stream's verbosity. */
OPAL_EXPORT void opal_output_verbose(int level, int stream, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
OPAL_EXPORT void opal_output_vverbose(int level, int stream, const char *format, va_list ap);

/* Release every stream (at finalize). */
OPAL_EXPORT void opal_output_finalize(void);

#endif /* OPAL_UTIL_OUTPUT_H */
