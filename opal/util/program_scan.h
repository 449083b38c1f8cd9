/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a program can reach a wireup: read from its ELF file, so a job of programs that cannot
 * (/bin/true, hostname, sleep) starts no PMIx server for them. */
#ifndef OPAL_UTIL_PROGRAM_SCAN_H
#define OPAL_UTIL_PROGRAM_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "opal/status.h"
#include "opal/visibility.h"

/* *leaf is true when the program at path can neither be a wireup client nor start a program
 * that could be one: a dynamically linked ELF executable of this machine's class whose needed
 * libraries are all C runtime libraries (libc, libm, libpthread, libdl, librt, libgcc_s, the
 * dynamic loader) and which imports no function that runs or loads code (exec*, posix_spawn,
 * system, popen, wordexp, dlopen, syscall). Anything else (a script, a static binary, a program
 * linked with an MPI or PMIx library, a shell, a file without section headers) is not a leaf.
 * The file alone is judged: LD_PRELOAD in the environment it runs with is the caller's to
 * weigh. When why is not NULL it gets a short reason ("needs libmpi.so.40", "imports execve",
 * ...). Returns HERD_SUCCESS, or HERD_ERR_IN_ERRNO when the file cannot be read (then *leaf is
 * untouched). */
OPAL_EXPORT int opal_program_is_leaf(const char *path, bool *leaf, char *why, size_t why_size);

#endif /* OPAL_UTIL_PROGRAM_SCAN_H */
