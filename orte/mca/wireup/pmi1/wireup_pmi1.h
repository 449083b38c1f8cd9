/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmi1: the PMI-1 "simple" wire protocol MPICH's processes speak over the descriptor in
 * PMI_FD: the message decoder and encoder (wireup_pmi1_wire.c), shared with the tests and the
 * fuzz harness. */
#ifndef ORTE_MCA_WIREUP_PMI1_H
#define ORTE_MCA_WIREUP_PMI1_H

#include <stdbool.h>
#include <stddef.h>

#include "opal/visibility.h"
#include "orte/mca/wireup/wireup.h"

/* Limits: a command is one line (MPICH sends values of at most vallen_max, 1024 bytes, plus its
 * key and the command), a spawn a block of lines up to "endcmd". */
#define WIREUP_PMI1_MAX_LINE    4096u
#define WIREUP_PMI1_MAX_BLOCK   (256u * 1024u)
#define WIREUP_PMI1_MAX_PAIRS   4096u
#define WIREUP_PMI1_KVSNAME_MAX 256u
#define WIREUP_PMI1_KEYLEN_MAX  64u
#define WIREUP_PMI1_VALLEN_MAX  1024u

typedef struct wireup_pmi1_pair {
    char *key;
    char *value;
} wireup_pmi1_pair_t;

/* One decoded message: "cmd=NAME k=v ..." on one line, or a "mcmd=NAME" block (one k=v a line,
 * a value being the rest of its line, spaces included). */
typedef struct wireup_pmi1_msg {
    char *cmd;
    bool multi;
    wireup_pmi1_pair_t *pairs; /* the pairs after the command's */
    size_t num_pairs;
} wireup_pmi1_msg_t;

/* Where the next complete message ends in buf (its length, the newline or "endcmd\n"
 * included), 0 when more bytes are needed, or HERD_ERR_BAD_PARAM (as a negative value) when the
 * bytes can never become one within the limits. */
OPAL_EXPORT long wireup_pmi1_frame(const char *buf, size_t len);
/* Decode one framed message. HERD_ERR_UNPACK_FAILURE for anything malformed (no cmd/mcmd first,
 * a token without '=', an empty key, a NUL byte, too many pairs); *msg set only on success. */
OPAL_EXPORT int wireup_pmi1_parse(const char *buf, size_t len, wireup_pmi1_msg_t *msg);
OPAL_EXPORT void wireup_pmi1_msg_free(wireup_pmi1_msg_t *msg);
/* The value of key (the first one), or NULL. */
OPAL_EXPORT const char *wireup_pmi1_get(const wireup_pmi1_msg_t *msg, const char *key);
/* Whether a value may go into an answer: no space, newline or NUL (a value with one would be
 * read as more tokens), at most max bytes. */
OPAL_EXPORT bool wireup_pmi1_value_ok(const char *value, size_t len, size_t max);

/* PMI_process_mapping, as MPICH reads it: "(vector,(first_node,nodes,ranks_per_node),...)" for
 * the ranks in order (node_of[r]: the node id of rank r, ids counted from 0 in the order nodes
 * first appear). Into buf; HERD_ERR_OUT_OF_RESOURCE when it does not fit in size (then MPICH
 * finds its local peers by other means). */
OPAL_EXPORT int wireup_pmi1_process_mapping(const unsigned *node_of, size_t num_ranks, char *buf,
                                            size_t size);

/* What MPICH programs are told about the node (wireup_pmi1_hints.c): the session daemon's
 * topology file for hwloc. hint_init finds the file (xml "" when disabled or there is none). */
int wireup_pmi1_hint_init(bool enabled, char *xml, size_t size);
int wireup_pmi1_hint(const char *xml, orte_wireup_child_t *child);

#endif /* ORTE_MCA_WIREUP_PMI1_H */
