/* SPDX-License-Identifier: BSD-3-Clause */
/* The long-option command-line parser shared by every herd tool. Options are declared in a
 * table; both --name and -name work for long names (mpirun style: -np 4), --name=value too. */
#ifndef OPAL_UTIL_CMD_LINE_H
#define OPAL_UTIL_CMD_LINE_H

#include <stdbool.h>
#include <stdio.h>

#include "opal/status.h"

/* num_args value for an option whose argument may only be attached with '='
 * (--report-usage or --report-usage=FILE). */
#define OPAL_CMD_LINE_OPTIONAL_ARG (-1)

typedef struct opal_cmd_line_option {
    const char *long_name; /* "np", "display-map"; NULL ends the table */
    char short_name;       /* 'n', or 0 for none */
    int num_args;          /* 0, 1, 2 (e.g. --mca NAME VALUE) or OPAL_CMD_LINE_OPTIONAL_ARG */
    const char *arg_names; /* for the usage text: "N", "NAME VALUE", "FILE" */
    const char *help;      /* one sentence */
} opal_cmd_line_option_t;

typedef struct opal_cmd_line opal_cmd_line_t;

/* options must stay valid for the life of the parser. */
OPAL_EXPORT int opal_cmd_line_create(const char *tool_name, const opal_cmd_line_option_t *options,
                                     opal_cmd_line_t **cmd);
OPAL_EXPORT void opal_cmd_line_free(opal_cmd_line_t *cmd);

/* Parse argv[1..argc-1]. With stop_at_first_nonoption, parsing ends at the first argument that
 * is not an option (the program to launch); otherwise non-options are collected anywhere.
 * "--" always ends option parsing. An unknown option (with the closest known one suggested), a
 * missing argument, or an argument given to an option that takes none is reported on stderr
 * naming the tool and the option, and HERD_ERR_BAD_PARAM returned. */
OPAL_EXPORT int opal_cmd_line_parse(opal_cmd_line_t *cmd, int argc, char *const argv[],
                                    bool stop_at_first_nonoption);

OPAL_EXPORT bool opal_cmd_line_is_set(const opal_cmd_line_t *cmd, const char *long_name);
/* How many times the option was given. */
OPAL_EXPORT int opal_cmd_line_count(const opal_cmd_line_t *cmd, const char *long_name);
/* Argument arg_index (0-based) of the occurrence-th use of the option, or NULL. For an
 * OPAL_CMD_LINE_OPTIONAL_ARG option given without '=', NULL. */
OPAL_EXPORT const char *opal_cmd_line_get(const opal_cmd_line_t *cmd, const char *long_name,
                                          int occurrence, int arg_index);
/* The non-option arguments (and everything after "--" or after the first non-option when
 * stopping there), NULL-terminated; never NULL after a successful parse. */
OPAL_EXPORT char **opal_cmd_line_tail(const opal_cmd_line_t *cmd);
OPAL_EXPORT int opal_cmd_line_tail_count(const opal_cmd_line_t *cmd);

/* Print the option table, aligned and wrapped to 100 columns. */
OPAL_EXPORT void opal_cmd_line_usage(const opal_cmd_line_t *cmd, FILE *stream);

#endif /* OPAL_UTIL_CMD_LINE_H */
