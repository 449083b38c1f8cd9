/* SPDX-License-Identifier: BSD-3-Clause */
/* Help-message catalogs: each framework keeps its user-facing messages in one text file
 * (help-<name>.txt) of keyed sections:
 *     # comment
 *     [topic-name]
 *     Text with printf placeholders: %s, %d, ...
 * installed in $(pkgdatadir); HERD_HELP_PATH (colon-separated folders) is searched first, and the
 * first folder holding the file supplies all of its topics. A section runs to the next "[name]"
 * line; blank lines at its start and end are dropped, and a literal % is written %%. */
#ifndef OPAL_UTIL_SHOW_HELP_H
#define OPAL_UTIL_SHOW_HELP_H

#include <stdarg.h>
#include <stdbool.h>

#include "opal/status.h"

/* Print topic from file to stderr with the arguments substituted. With want_error_header,
 * the message is framed by a line of dashes above and below (as in Open MPI), so it stands out.
 * If the file or topic cannot be found, a fallback message names the file, the topic and the
 * folders searched, so the failure is never silent. The arguments cannot be shown then: their
 * types are only known from the placeholders in the missing text.
 * Returns HERD_SUCCESS, or HERD_ERR_NOT_FOUND when the fallback was printed. */
OPAL_EXPORT int opal_show_help(const char *filename, const char *topic, int want_error_header,
                               ...);
OPAL_EXPORT int opal_show_vhelp(const char *filename, const char *topic, bool want_error_header,
                                va_list ap);
/* The same text as a malloc'd string (caller frees), NULL if out of memory. */
OPAL_EXPORT char *opal_show_help_string(const char *filename, const char *topic,
                                        int want_error_header, ...);
OPAL_EXPORT char *opal_show_help_vstring(const char *filename, const char *topic,
                                         int want_error_header, va_list ap);

#endif /* OPAL_UTIL_SHOW_HELP_H */
