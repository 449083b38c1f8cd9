/* SPDX-License-Identifier: BSD-3-Clause */
/* The command-line parser shared by every herd tool: long options with one or two dashes, short
 * options, option arguments, and errors that name the tool and the option. */
#include "herd_config.h"

#include "opal/util/cmd_line.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"

/* The user-facing sentences, together so they can be reviewed together. They are printed here
 * rather than through show_help so a tool can still explain its own command line when its help
 * files are missing, which is when users try odd options to find out what is wrong. */
#define MSG_UNKNOWN "%s: unknown option '%.*s' (see %s --help)\n"
#define MSG_UNKNOWN_SUGGEST "%s: unknown option '%.*s'; did you mean '--%s'? (see %s --help)\n"
#define MSG_NEEDS_ARGS "%s: option '%s%s' needs %d argument%s%s%s%s\n"
#define MSG_TAKES_NO_ARG "%s: option '%s%s' does not take an argument (given '%s')\n"
#define MSG_NO_MEMORY "%s: out of memory while reading the command line\n"
#define MSG_BAD_TABLE "%s: internal error: option table entry '%s' %s\n"
#define MSG_NO_TOOL "herd: internal error: opal_cmd_line_create called without %s\n"

/* Usage text layout: the help column never starts further right than this, so long option
 * names do not squeeze every help text into a narrow strip. */
#define USAGE_WIDTH 100
#define USAGE_MAX_HELP_COLUMN 40

/* A suggestion for a one- or two-letter typo would be little better than a random option. */
#define SUGGEST_MIN_LENGTH 3

/* One use of an option, in command-line order. */
typedef struct {
    const opal_cmd_line_option_t *option;
    char **args; /* copies, NULL-terminated; empty for no argument (or an absent optional one) */
} cmd_line_occurrence_t;

/* What a parse produced; built on the side and installed only when the parse succeeds. */
typedef struct {
    cmd_line_occurrence_t *occurrences;
    size_t num_occurrences;
    size_t capacity;
    char **tail;
} cmd_line_result_t;

struct opal_cmd_line {
    char *tool_name;
    const opal_cmd_line_option_t *options;
    size_t num_options;
    char **long_names; /* pointers into options, for suggestions; the strings are not owned */
    cmd_line_result_t result;
};

/* An option token resolved against the table. */
typedef struct {
    const opal_cmd_line_option_t *option;
    bool is_short;        /* matched by its letter: messages then name it "-n" */
    const char *attached; /* a value inside the token ("--np=4", "-n4"), or NULL */
} option_token_t;

static void result_free(cmd_line_result_t *result)
{
    for (size_t i = 0; i < result->num_occurrences; i++) {
        opal_argv_free(result->occurrences[i].args);
    }
    free(result->occurrences);
    opal_argv_free(result->tail);
    memset(result, 0, sizeof(*result));
}

static const opal_cmd_line_option_t *find_long(const opal_cmd_line_t *cmd, const char *name,
                                               size_t name_length)
{
    for (size_t i = 0; i < cmd->num_options; i++) {
        const char *long_name = cmd->options[i].long_name;

        if (strlen(long_name) == name_length && 0 == strncmp(long_name, name, name_length)) {
            return &cmd->options[i];
        }
    }
    return NULL;
}

static const opal_cmd_line_option_t *find_short(const opal_cmd_line_t *cmd, char letter)
{
    for (size_t i = 0; i < cmd->num_options; i++) {
        if (0 != letter && cmd->options[i].short_name == letter) {
            return &cmd->options[i];
        }
    }
    return NULL;
}

/* Resolve a token that starts with '-' (and is neither "-" nor "--"). Long names win, with one
 * dash or two; a single-dash token that is no long name is a short option: "-n" alone, "-n4" and
 * "-n=4" when the option takes arguments, "-v=x" so that it can be refused with a clear message.
 * Returns false when the token names no option. */
static bool resolve_token(const opal_cmd_line_t *cmd, const char *token, option_token_t *found)
{
    bool two_dashes = ('-' == token[1]);
    const char *name = token + (two_dashes ? 2 : 1);
    const char *equals = strchr(name, '=');
    size_t name_length = (NULL != equals) ? (size_t) (equals - name) : strlen(name);
    const opal_cmd_line_option_t *option;

    found->option = NULL;
    found->is_short = false;
    found->attached = NULL;

    option = find_long(cmd, name, name_length);
    if (NULL != option) {
        found->option = option;
        found->attached = (NULL != equals) ? equals + 1 : NULL;
        return true;
    }
    if (two_dashes || '\0' == name[0]) {
        return false;
    }
    option = find_short(cmd, name[0]);
    if (NULL == option) {
        return false;
    }
    if ('\0' == name[1]) {
        found->attached = NULL;
    } else if ('=' == name[1]) {
        found->attached = &name[2];
    } else if (option->num_args > 0) {
        found->attached = &name[1];
    } else {
        return false;
    }
    found->option = option;
    found->is_short = true;
    return true;
}

/* "-5", "-0.25", "-1e3": numbers, never options. */
static bool is_negative_number(const char *token)
{
    char *end;

    if ('-' != token[0] || !(isdigit((unsigned char) token[1]) || '.' == token[1])) {
        return false;
    }
    (void) strtod(token, &end);
    return end != token && '\0' == *end;
}

/* Whether a token may be an option's argument: anything except "--" and a token naming a known
 * option, so "--np --host a" reports the missing N instead of swallowing --host, while values
 * that merely start with '-' (-5, --mca plm_rsh_args -q) still get through. */
static bool can_be_value(const opal_cmd_line_t *cmd, const char *token)
{
    option_token_t unused;

    if (0 == strcmp(token, "--")) {
        return false;
    }
    if ('-' != token[0] || '\0' == token[1] || is_negative_number(token)) {
        return true;
    }
    return !resolve_token(cmd, token, &unused);
}

static void report_unknown(const opal_cmd_line_t *cmd, const char *token)
{
    const char *name = token + ('-' == token[1] ? 2 : 1);
    const char *equals = strchr(name, '=');
    size_t name_length = (NULL != equals) ? (size_t) (equals - name) : strlen(name);
    /* Show what the user typed, without any "=value"; all of it if the name part is empty. */
    int shown = (0 == name_length) ? (int) strlen(token) : (int) (name - token + name_length);
    const char *suggestion = NULL;

    if (name_length >= SUGGEST_MIN_LENGTH) {
        char *word = strndup(name, name_length);

        /* Without memory there is just no suggestion. */
        if (NULL != word) {
            suggestion = opal_closest_string(word, cmd->long_names);
            free(word);
        }
    }
    if (NULL != suggestion) {
        fprintf(stderr, MSG_UNKNOWN_SUGGEST, cmd->tool_name, shown, token, suggestion,
                cmd->tool_name);
    } else {
        fprintf(stderr, MSG_UNKNOWN, cmd->tool_name, shown, token, cmd->tool_name);
    }
}

static void report_missing_args(const opal_cmd_line_t *cmd, const option_token_t *found)
{
    const opal_cmd_line_option_t *option = found->option;
    char letter[2] = {option->short_name, '\0'};
    bool named = (NULL != option->arg_names && '\0' != option->arg_names[0]);

    fprintf(stderr, MSG_NEEDS_ARGS, cmd->tool_name, found->is_short ? "-" : "--",
            found->is_short ? letter : option->long_name, option->num_args,
            1 == option->num_args ? "" : "s", named ? " (" : "", named ? option->arg_names : "",
            named ? ")" : "");
}

static int report_no_memory(const opal_cmd_line_t *cmd)
{
    fprintf(stderr, MSG_NO_MEMORY, cmd->tool_name);
    return HERD_ERR_OUT_OF_RESOURCE;
}

/* Record one use of an option, taking its arguments from the token and the following entries of
 * argv; *index is left on the last entry used. */
static int take_option(const opal_cmd_line_t *cmd, const option_token_t *found, int argc,
                       char *const argv[], int *index, cmd_line_result_t *result)
{
    const opal_cmd_line_option_t *option = found->option;
    int needed = (option->num_args > 0) ? option->num_args : 0, have = 0;
    char **args = NULL;
    int rc;

    if (NULL != found->attached) {
        if (0 == option->num_args) {
            char letter[2] = {option->short_name, '\0'};

            fprintf(stderr, MSG_TAKES_NO_ARG, cmd->tool_name, found->is_short ? "-" : "--",
                    found->is_short ? letter : option->long_name, found->attached);
            return HERD_ERR_BAD_PARAM;
        }
        /* An optional argument exists only in this form: the next word is never taken. */
        rc = opal_argv_append(&args, found->attached);
        if (HERD_SUCCESS != rc) {
            goto err_args;
        }
        have = 1;
    }
    while (have < needed) {
        const char *next = (*index + 1 < argc) ? argv[*index + 1] : NULL;

        if (NULL == next || !can_be_value(cmd, next)) {
            report_missing_args(cmd, found);
            opal_argv_free(args);
            return HERD_ERR_BAD_PARAM;
        }
        (*index)++;
        rc = opal_argv_append(&args, argv[*index]);
        if (HERD_SUCCESS != rc) {
            goto err_args;
        }
        have++;
    }
    if (NULL == args) {
        args = calloc(1, sizeof(*args));
        if (NULL == args) {
            goto err_args;
        }
    }

    if (result->num_occurrences == result->capacity) {
        size_t capacity = (0 == result->capacity) ? 8 : result->capacity * 2;
        cmd_line_occurrence_t *grown =
            realloc(result->occurrences, capacity * sizeof(*grown));

        if (NULL == grown) {
            goto err_args;
        }
        result->occurrences = grown;
        result->capacity = capacity;
    }
    result->occurrences[result->num_occurrences].option = option;
    result->occurrences[result->num_occurrences].args = args;
    result->num_occurrences++;
    return HERD_SUCCESS;

err_args:
    opal_argv_free(args);
    return report_no_memory(cmd);
}

/* Check one table entry; returns a description of what is wrong, or NULL. */
static const char *check_option(const opal_cmd_line_option_t *options, size_t index)
{
    const opal_cmd_line_option_t *option = &options[index];
    const char *name = option->long_name;
    char letter = option->short_name;

    if ('\0' == name[0] || '-' == name[0] || NULL != strpbrk(name, "= \t\n")) {
        return "has an empty name or one that starts with '-' or holds '=' or a space";
    }
    if (option->num_args < OPAL_CMD_LINE_OPTIONAL_ARG) {
        return "has a negative argument count";
    }
    if (0 != letter && (!isgraph((unsigned char) letter) || '-' == letter || '=' == letter)) {
        return "has an unusable short name";
    }
    for (size_t i = 0; i < index; i++) {
        if (0 == strcmp(options[i].long_name, name)) {
            return "repeats an earlier long name";
        }
        if (0 != letter && options[i].short_name == letter) {
            return "repeats an earlier short name";
        }
    }
    return NULL;
}

int opal_cmd_line_create(const char *tool_name, const opal_cmd_line_option_t *options,
                         opal_cmd_line_t **cmd)
{
    opal_cmd_line_t *created;
    size_t num_options = 0;

    if (NULL == tool_name || NULL == options || NULL == cmd) {
        fprintf(stderr, MSG_NO_TOOL,
                NULL == tool_name ? "a tool name"
                                  : (NULL == options ? "an option table" : "a result pointer"));
        return HERD_ERR_BAD_PARAM;
    }
    while (NULL != options[num_options].long_name) {
        const char *problem = check_option(options, num_options);

        if (NULL != problem) {
            fprintf(stderr, MSG_BAD_TABLE, tool_name, options[num_options].long_name, problem);
            return HERD_ERR_BAD_PARAM;
        }
        num_options++;
    }

    created = calloc(1, sizeof(*created));
    if (NULL == created) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    created->options = options;
    created->num_options = num_options;
    created->tool_name = strdup(tool_name);
    created->long_names = calloc(num_options + 1, sizeof(char *));
    created->result.tail = calloc(1, sizeof(char *));
    if (NULL == created->tool_name || NULL == created->long_names || NULL == created->result.tail) {
        opal_cmd_line_free(created);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < num_options; i++) {
        /* opal_closest_string only reads the names; the cast drops const for its signature. */
        created->long_names[i] = (char *) options[i].long_name;
    }
    *cmd = created;
    return HERD_SUCCESS;
}

void opal_cmd_line_free(opal_cmd_line_t *cmd)
{
    if (NULL == cmd) {
        return;
    }
    result_free(&cmd->result);
    free(cmd->long_names);
    free(cmd->tool_name);
    free(cmd);
}

int opal_cmd_line_parse(opal_cmd_line_t *cmd, int argc, char *const argv[],
                        bool stop_at_first_nonoption)
{
    cmd_line_result_t result = {NULL, 0, 0, NULL};
    int rc, i;

    if (NULL == cmd || argc < 0 || (argc > 0 && NULL == argv)) {
        return HERD_ERR_BAD_PARAM;
    }
    result.tail = calloc(1, sizeof(char *));
    if (NULL == result.tail) {
        return report_no_memory(cmd);
    }

    for (i = 1; i < argc && NULL != argv[i]; i++) {
        const char *token = argv[i];
        option_token_t found;

        if (0 == strcmp(token, "--")) {
            i++;
            break;
        }
        /* "-" alone is a word (conventionally stdin), not an option. */
        if ('-' != token[0] || '\0' == token[1]) {
            if (stop_at_first_nonoption) {
                break;
            }
            if (HERD_SUCCESS != opal_argv_append(&result.tail, token)) {
                rc = report_no_memory(cmd);
                goto err_result;
            }
            continue;
        }
        if (!resolve_token(cmd, token, &found)) {
            report_unknown(cmd, token);
            rc = HERD_ERR_BAD_PARAM;
            goto err_result;
        }
        rc = take_option(cmd, &found, argc, argv, &i, &result);
        if (HERD_SUCCESS != rc) {
            goto err_result;
        }
    }
    /* The rest (after "--", or from the program on) is passed through untouched; copied in
     * one go: appending word by word counts the list each time (seconds for 70,000 words) */
    int rest = 0;
    while (i + rest < argc && NULL != argv[i + rest]) {
        rest++;
    }
    if (rest > 0) {
        /* after the words taken before (without stop_at_first_nonoption) */
        size_t before = opal_argv_count(result.tail);
        char **tail = calloc(before + (size_t) rest + 1, sizeof(char *));
        if (NULL == tail) {
            rc = report_no_memory(cmd);
            goto err_result;
        }
        memcpy(tail, result.tail, before * sizeof(char *));
        free(result.tail); /* its words are in tail now */
        result.tail = tail;
        for (int w = 0; w < rest; ++w) {
            if (NULL == (tail[before + (size_t) w] = strdup(argv[i + w]))) {
                rc = report_no_memory(cmd);
                goto err_result;
            }
        }
    }

    result_free(&cmd->result);
    cmd->result = result;
    return HERD_SUCCESS;

err_result:
    result_free(&result);
    return rc;
}

/* The occurrence-th use of the option called long_name, or NULL. */
static const cmd_line_occurrence_t *find_occurrence(const opal_cmd_line_t *cmd,
                                                    const char *long_name, int occurrence)
{
    if (NULL == cmd || NULL == long_name || occurrence < 0) {
        return NULL;
    }
    for (size_t i = 0; i < cmd->result.num_occurrences; i++) {
        if (0 == strcmp(cmd->result.occurrences[i].option->long_name, long_name) &&
            0 == occurrence--) {
            return &cmd->result.occurrences[i];
        }
    }
    return NULL;
}

bool opal_cmd_line_is_set(const opal_cmd_line_t *cmd, const char *long_name)
{
    return NULL != find_occurrence(cmd, long_name, 0);
}

int opal_cmd_line_count(const opal_cmd_line_t *cmd, const char *long_name)
{
    int count = 0;

    while (NULL != find_occurrence(cmd, long_name, count)) {
        count++;
    }
    return count;
}

const char *opal_cmd_line_get(const opal_cmd_line_t *cmd, const char *long_name, int occurrence,
                              int arg_index)
{
    const cmd_line_occurrence_t *found = find_occurrence(cmd, long_name, occurrence);

    if (NULL == found || arg_index < 0 || (size_t) arg_index >= opal_argv_count(found->args)) {
        return NULL;
    }
    return found->args[arg_index];
}

char **opal_cmd_line_tail(const opal_cmd_line_t *cmd)
{
    return (NULL != cmd) ? cmd->result.tail : NULL;
}

int opal_cmd_line_tail_count(const opal_cmd_line_t *cmd)
{
    return (NULL != cmd) ? (int) opal_argv_count(cmd->result.tail) : 0;
}

/* "  -n, --np N", "      --display-map", "      --report-usage[=FILE]"; malloc'd, or NULL. */
static char *option_synopsis(const opal_cmd_line_option_t *option)
{
    const char *arg_names = option->arg_names;
    size_t size = strlen(option->long_name) + 32;
    char *synopsis, *end;

    if (NULL == arg_names || '\0' == arg_names[0]) {
        arg_names = NULL;
        size += (option->num_args > 0 ? (size_t) option->num_args : 1) * 4;
    } else {
        size += strlen(arg_names);
    }
    synopsis = malloc(size);
    if (NULL == synopsis) {
        return NULL;
    }
    if (0 != option->short_name) {
        end = synopsis + sprintf(synopsis, "  -%c, --%s", option->short_name, option->long_name);
    } else {
        end = synopsis + sprintf(synopsis, "      --%s", option->long_name);
    }
    if (OPAL_CMD_LINE_OPTIONAL_ARG == option->num_args) {
        sprintf(end, "[=%s]", NULL != arg_names ? arg_names : "ARG");
    } else if (NULL != arg_names && option->num_args > 0) {
        sprintf(end, " %s", arg_names);
    } else {
        for (int i = 0; i < option->num_args; i++) {
            end += sprintf(end, " ARG");
        }
    }
    return synopsis;
}

/* Print help word-wrapped into the columns from column to USAGE_WIDTH; the first line continues
 * a line on which used columns are already taken. Words too long for a line are cut. */
static void print_wrapped(FILE *stream, const char *help, size_t column, size_t used)
{
    size_t width = USAGE_WIDTH - column;

    while (' ' == *help || '\n' == *help) {
        help++;
    }
    do {
        size_t length = strcspn(help, "\n");

        if (length > width) {
            length = width;
            /* Break at the last space that fits, if any. */
            for (size_t i = width; i > 0; i--) {
                if (' ' == help[i]) {
                    length = i;
                    break;
                }
            }
        }
        fprintf(stream, "%*s%.*s\n", (int) (column - used), "", (int) length, help);
        used = 0;
        help += length;
        while (' ' == *help || '\n' == *help) {
            help++;
        }
    } while ('\0' != *help);
}

void opal_cmd_line_usage(const opal_cmd_line_t *cmd, FILE *stream)
{
    size_t column = 0;
    char **synopses;

    if (NULL == cmd || NULL == stream) {
        return;
    }
    synopses = calloc(cmd->num_options + 1, sizeof(char *));
    if (NULL == synopses) {
        fprintf(stream, MSG_NO_MEMORY, cmd->tool_name);
        return;
    }
    for (size_t i = 0; i < cmd->num_options; i++) {
        synopses[i] = option_synopsis(&cmd->options[i]);
        if (NULL == synopses[i]) {
            fprintf(stream, MSG_NO_MEMORY, cmd->tool_name);
            goto out;
        }
        if (strlen(synopses[i]) + 2 > column) {
            column = strlen(synopses[i]) + 2;
        }
    }
    if (column > USAGE_MAX_HELP_COLUMN) {
        column = USAGE_MAX_HELP_COLUMN;
    }

    for (size_t i = 0; i < cmd->num_options; i++) {
        const char *help = (NULL != cmd->options[i].help) ? cmd->options[i].help : "";
        size_t used = strlen(synopses[i]);

        fputs(synopses[i], stream);
        if ('\0' == help[strspn(help, " \n")]) {
            fputc('\n', stream);
            continue;
        }
        /* A synopsis reaching into the help column gets its help on the lines below. */
        if (used + 2 > column) {
            fputc('\n', stream);
            used = 0;
        }
        print_wrapped(stream, help, column, used);
    }

out:
    opal_argv_free(synopses);
}
