/* SPDX-License-Identifier: BSD-3-Clause */
/* NULL-terminated string vectors (argv-style): build, split, join, copy. Allocation failure
 * returns HERD_ERR_OUT_OF_RESOURCE and leaves the vector as it was. */
#ifndef OPAL_UTIL_ARGV_H
#define OPAL_UTIL_ARGV_H

#include <stddef.h>

#include "opal/status.h"

/* Append a copy of arg to *argv (which may be NULL: a new vector is made). */
OPAL_EXPORT int opal_argv_append(char ***argv, const char *arg);
/* Append unless an equal string is already there. */
OPAL_EXPORT int opal_argv_append_unique(char ***argv, const char *arg);
OPAL_EXPORT int opal_argv_prepend(char ***argv, const char *arg);
/* Insert a copy of every string of source at position index (0..count). */
OPAL_EXPORT int opal_argv_insert(char ***argv, size_t index, char *const *source);
/* Remove count entries starting at index (clamped to the end). */
OPAL_EXPORT int opal_argv_delete(char ***argv, size_t index, size_t count);
OPAL_EXPORT size_t opal_argv_count(char *const *argv);
OPAL_EXPORT void opal_argv_free(char **argv);
/* Deep copy; NULL for NULL input or on allocation failure. */
OPAL_EXPORT char **opal_argv_copy(char *const *argv);
/* Split at delimiter; empty fields are dropped ("a,,b" -> {"a","b"}); "" gives an empty vector
 * (non-NULL, count 0). NULL on allocation failure. */
OPAL_EXPORT char **opal_argv_split(const char *text, char delimiter);
/* Like opal_argv_split but keeps empty fields ("a,,b" -> {"a","","b"}, "a," -> {"a",""});
 * "" still gives an empty vector. */
OPAL_EXPORT char **opal_argv_split_with_empty(const char *text, char delimiter);
/* Join with delimiter; "" for an empty or NULL vector; NULL on allocation failure. */
OPAL_EXPORT char *opal_argv_join(char *const *argv, char delimiter);
/* Index of the first entry equal to arg, or -1. */
OPAL_EXPORT int opal_argv_find(char *const *argv, const char *arg);
/* Index of the entry of env (NAME=value strings) that sets name, or -1. name may be "NAME" or
 * a whole "NAME=value" (only the part before '=' is compared). */
OPAL_EXPORT int opal_env_find(char *const *env, const char *name);

/* Levenshtein distance between two strings (for "did you mean" suggestions). */
OPAL_EXPORT size_t opal_string_distance(const char *a, const char *b);
/* The candidate closest to word, or NULL when none is close enough to be a likely typo
 * (distance <= max(2, strlen(word)/3)). */
OPAL_EXPORT const char *opal_closest_string(const char *word, char *const *candidates);

#endif /* OPAL_UTIL_ARGV_H */
