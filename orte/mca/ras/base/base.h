/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers the ras base shares with its components, tests and fuzzers (not part of the module
 * interface in ras.h): allocation building, the hostfile / -H parser and the Slurm host-list
 * parsers. The parsers live here because other frameworks need them too (a per-job hostfile
 * for the mapper, Slurm node lists for the launcher). */
#ifndef ORTE_MCA_RAS_BASE_H
#define ORTE_MCA_RAS_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "orte/mca/ras/ras.h"

/* Wire format of one packed allocation; unpack refuses any other. */
#define ORTE_RAS_ALLOCATION_FORMAT_VERSION 1u

/* Limits, checked by every parser and by pack and unpack alike: a typo such as n[1-1000000000]
 * or a corrupt count must be an error, not a daemon allocating gigabytes. The fuzzers build with
 * a smaller node limit, to reach it often without spending seconds per input. */
#ifndef ORTE_RAS_MAX_NODES
#define ORTE_RAS_MAX_NODES (1u << 20) /* nodes in one allocation */
#endif
#define ORTE_RAS_MAX_SLOTS    (1u << 20) /* slots (and max_slots) of one node */
#define ORTE_RAS_MAX_NAME_LEN 255u       /* a host name, as in DNS */
#define ORTE_RAS_MAX_TEXT_LEN 8192u      /* topology, origin, source */

/* The largest hostfile read: a longer one is almost certainly not a hostfile (/dev/zero). */
#define ORTE_RAS_MAX_HOSTFILE_SIZE (64u * 1024u * 1024u)

#define ORTE_RAS_BASE_HELP_FILE "help-ras-base.txt"

/* Register ras_base_hostfile and ras_base_host. Called by orte_ras_base_open() and by each
 * component's register_params, so that herd-info lists them with the framework. */
OPAL_EXPORT int orte_ras_base_register(void);

/* The values of ras_base_hostfile and ras_base_host, or NULL when unset or empty. Valid until
 * the framework closes. */
OPAL_EXPORT const char *orte_ras_base_hostfile(void);
OPAL_EXPORT const char *orte_ras_base_host_list(void);

/* An empty allocation made by source ("hostfile"); NULL if out of memory or source is empty. */
OPAL_EXPORT orte_allocation_t *orte_allocation_new(const char *source);

/* Append a copy of a node; topology and origin may be NULL. HERD_ERR_BAD_PARAM for a node that
 * breaks the limits above (empty or long name, slots 0, max_slots below slots), and
 * HERD_ERR_OUT_OF_RESOURCE when the allocation is full; it is left as it was on failure. */
OPAL_EXPORT int orte_allocation_add_node(orte_allocation_t *allocation, const char *name,
                                         uint32_t slots, uint32_t max_slots, const char *topology,
                                         const char *origin);

/* This host alone: gethostname(), one slot per core hwloc finds (per hardware thread when it
 * finds no core), source "local". */
OPAL_EXPORT int orte_ras_base_local_allocation(orte_allocation_t **allocation);

/* Hostfiles and -H host lists.
 *
 * A hostfile has one host per line: "host [slots=N] [max_slots=M]" (also "max-slots", and
 * blanks around '=' as in "slots = 4"). '#' starts a comment, to the end of the line; blank
 * lines are skipped. A line without slots= gives the host one slot, as Open MPI does for a
 * hostfile. A host on several lines gets the sum of their slots; max_slots may be given on any
 * of them but must agree, and is a hard limit that slots may not exceed.
 *
 * A host list (-H) is "a,b:4,c": hosts separated by commas, each with an optional slot count
 * (default one). A host listed more than once gets the sum of its counts.
 *
 * With both, the host list picks hosts from the hostfile, in its own order: each host must be
 * in the hostfile, and keeps the hostfile's slots unless the list gives a count (":N", or the
 * host listed more than once), which may not exceed the hostfile's max_slots.
 *
 * Host names are letters, digits, '.', '-' and '_', starting with a letter or digit, at most
 * ORTE_RAS_MAX_NAME_LEN characters. Every error is reported (file:line or list entry, the bad
 * token quoted, what is accepted) and HERD_ERR_SILENT returned. */

/* Read the hostfile at hostfile (NULL: none) and apply the host list (NULL: none); at least one
 * must be given. The allocation's source is "hostfile". */
OPAL_EXPORT int orte_ras_base_read_hosts(const char *hostfile, const char *host_list,
                                         orte_allocation_t **allocation);

/* The same with the hostfile's contents in memory (text of length bytes, which may hold
 * anything); filename is only used in messages. text NULL means no hostfile. */
OPAL_EXPORT int orte_ras_base_parse_hosts(const char *filename, const char *text, size_t length,
                                          const char *host_list, orte_allocation_t **allocation);

/* Slurm's compressed lists.
 *
 * A host list is entries separated by commas; an entry is a host name in which bracketed
 * ranges stand for numbers: "n[1-3,7]" is n1 n2 n3 n7, "n[01-10]" keeps the width of the
 * first bound (n01 .. n10), "rack[1-2]-ib" has a suffix, and "a[1-2]b[3-4]" (several ranges in
 * one name) is every combination, the last range varying fastest: a1b3 a1b4 a2b3 a2b4.
 * Ranges do not nest.
 *
 * Tasks per node is counts separated by commas, "(xN)" repeating a count for N nodes:
 * "2(x3),1" is 2 2 2 1.
 *
 * variable names where the text came from ("SLURM_JOB_NODELIST"), for messages. A malformed
 * list is reported with the variable, the reason and the position of the bad character, and
 * HERD_ERR_SILENT returned. */

/* *names gets *num_names malloc'd host names (free each, then the array). */
OPAL_EXPORT int orte_ras_base_hostlist_expand(const char *variable, const char *list, char ***names,
                                              size_t *num_names);
/* *counts gets *num_counts task counts (free the array). */
OPAL_EXPORT int orte_ras_base_tasks_per_node_expand(const char *variable, const char *text,
                                                    uint32_t **counts, size_t *num_counts);

/* The allocation of a Slurm job from the values of SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE
 * (NULL or empty: one slot per node, since Slurm sets it only for jobs that asked for tasks).
 * The two must describe the same number of nodes, and a node may be listed only once. The
 * allocation's source is "slurm". */
OPAL_EXPORT int orte_ras_base_slurm_allocation(const char *nodelist, const char *tasks_per_node,
                                               orte_allocation_t **allocation);

/* Writes text into out (size bytes) for quoting in a message: control and non-ASCII bytes
 * become '?', and text too long to fit is cut with "...". */
OPAL_EXPORT void orte_ras_base_printable(const char *text, size_t length, char *out, size_t size);

#endif /* ORTE_MCA_RAS_BASE_H */
