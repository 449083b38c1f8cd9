/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun's command line: splits the MPMD app contexts, parses each with the shared option
 * parser, checks every value, and builds the job description the runtime launches. */
#include "herd_config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/util/argv.h"
#include "opal/util/cmd_line.h"
#include "opal/util/path.h"
#include "opal/util/show_help.h"
#include "orte/mca/iof/iof.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"
#include "orte/mca/rmaps/rmaps.h"
#include "orte/tools/herdrun/herdrun_cmdline.h"

#define HERDRUN_HELP_FILE "help-herdrun.txt"
#define HERDRUN_TOOL_NAME "herdrun"

/* The largest -n, --npernode and --timeout: what ppr:N accepts, and what an int holds. */
#define HERDRUN_MAX_COUNT INT32_MAX

/* How much of an app context the note after an error quotes. */
#define HERDRUN_QUOTE_SIZE 80

static const opal_cmd_line_option_t herdrun_option_table[] = {
    /* per app context */
    {"np", 'n', 1, "N", "Start N processes of this app context (default: one per free slot)"},
    {"x", 0, 1, "VAR[=VALUE]",
     "Set VAR in the processes' environment, to VALUE or to its value here (repeatable)"},
    {"wdir", 0, 1, "DIR", "Start this app context's processes in DIR (default: the current one)"},
    {"npernode", 0, 1, "N",
     "Start N processes on every node (--map-by ppr:N:node for this app context)"},
    /* the whole job */
    {"host", 'H', 1, "HOSTS", "Nodes to use: a comma-separated list, host:slots (e.g. a,b:4,c)"},
    {"hostfile", 0, 1, "FILE", "Nodes to use, from a hostfile (host slots=N max_slots=M lines)"},
    {"oversubscribe", 0, 0, NULL, "Allow more processes on a node than it has slots"},
    {"nooversubscribe", 0, 0, NULL, "Refuse more processes on a node than it has slots (default)"},
    {"map-by", 0, 1, "POLICY",
     "Where processes go: slot, node, package, l3cache, core, hwthread, ppr:N:OBJ or seq, "
     "with modifiers PE=n, SPAN, OVERSUBSCRIBE, NOOVERSUBSCRIBE after a colon"},
    {"rank-by", 0, 1, "POLICY", "Rank order: slot, node, package, l3cache, core or hwthread"},
    {"bind-to", 0, 1, "POLICY", "Bind each process to: none, hwthread, core, l3cache or package"},
    {"display-map", 0, 0, NULL, "Print where every process goes before starting them"},
    {"report-bindings", 0, 0, NULL, "Print the cpus each process is bound to"},
    {"explain", 0, 0, NULL, "Print how the mapper decided where processes go"},
    {"do-not-launch", 0, 0, NULL, "Map the job (and display it) but start nothing"},
    {"report-usage", 0, OPAL_CMD_LINE_OPTIONAL_ARG, "FILE",
     "Report the CPU time, memory and wall time of every process when the job ends; with =FILE, "
     "write the report to FILE"},
    {"timeout", 0, 1, "SECONDS",
     "Abort the job if it has not ended after SECONDS (without it: MPIEXEC_TIMEOUT, when set)"},
    {"tag-output", 0, 0, NULL,
     "Start every line of the processes' output with [jobid,rank]<stdout>: (or <stderr>:)"},
    {"timestamp-output", 0, 0, NULL,
     "Start every line of the processes' output with the time it was read"},
    {"output-filename", 0, 1, "DIR[:nocopy]",
     "Also write each rank's stdout and stderr to DIR/rank.N/stdout and stderr; with :nocopy, "
     "only there"},
    {"merge-stderr-to-stdout", 0, 0, NULL, "Send the processes' stderr to stdout"},
    {"stop-on-exec", 0, 0, NULL,
     "Stop every process before main until a debugger attaches to herdrun (MPIR: set "
     "MPIR_being_debugged, break in MPIR_Breakpoint); also HERD_MPIR_STOP=1"},
    {"stdin", 0, 1, "RANK|all|none",
     "Which processes get herdrun's stdin (default 0: rank 0; the others read /dev/null)"},
    {"attach", 0, 1, "JOBID",
     "Print the output of the running job JOBID of the DVM given by --dvm-uri, from now on, "
     "until it ends (Ctrl-C detaches)"},
    {"mca", 0, 2, "NAME VALUE",
     "Set the MCA variable NAME to VALUE, for herdrun, its daemons and the processes"},
    {"dvm-uri", 0, 1, "FILE",
     "Run the job on the running DVM whose contact file is FILE (herd-dvm --report-uri FILE)"},
    {"no-queue", 0, 0, NULL,
     "With --dvm-uri: refuse the job when a node it needs has no free session slot, instead of "
     "waiting for one"},
    {"verbose", 'v', 0, NULL, "Say more about what herdrun does (repeat for more)"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, 0, 0, NULL, NULL},
};

/* Job-wide flags, each set by an option without argument. */
static const struct {
    const char *option;
    uint32_t flag;
} herdrun_flag_options[] = {
    {"display-map", ORTE_JOB_FLAG_DISPLAY_MAP},
    {"report-bindings", ORTE_JOB_FLAG_REPORT_BINDINGS},
    {"report-usage", ORTE_JOB_FLAG_REPORT_USAGE},
    {"explain", ORTE_JOB_FLAG_EXPLAIN},
    {"do-not-launch", ORTE_JOB_FLAG_DO_NOT_LAUNCH},
    {"merge-stderr-to-stdout", ORTE_JOB_FLAG_MERGE_STDERR},
    {"tag-output", ORTE_JOB_FLAG_TAG_OUTPUT},
    {"timestamp-output", ORTE_JOB_FLAG_TIMESTAMP_OUTPUT},
    {"no-queue", ORTE_JOB_FLAG_NO_QUEUE},
    {"stop-on-exec", ORTE_JOB_FLAG_STOP_ON_EXEC},
};

/* One app context: its words in argv (between two lone ":") and its parsed options. */
typedef struct {
    int first;     /* index in argv of its first word */
    int num_words; /* 0 for an empty context */
    opal_cmd_line_t *cmd;
} herdrun_context_t;

/* Job-wide options gathered from every app context (each single value given once, or the same
 * each time it is repeated), checked once all contexts are read. */
typedef struct {
    char *host;
    char *hostfile;
    char *timeout;
    char *map_by;
    char *rank_by;
    char *bind_to;
    char *dvm_uri;
    char *report_usage_file;
    char *output_filename;
    char *stdin_target;
    char *attach;
    char **mca_names; /* --mca, in order, each name once */
    char **mca_values;
    uint32_t flags;
    bool oversubscribe;
    bool nooversubscribe;
} herdrun_job_options_t;

/* Everything one parse builds; freed as a whole on failure. */
typedef struct {
    char *const *argv;
    herdrun_context_t *contexts;
    int num_contexts;
    herdrun_job_options_t job;
    orte_job_app_t *apps; /* one per context */
    char *cwd;            /* herdrun's, looked up when first needed */
    herdrun_options_t result;
} herdrun_parse_t;

/* ------------------------------------------------------------------------------------------ */
/* freeing */

void herdrun_options_destruct(herdrun_options_t *opts)
{
    if (NULL == opts) {
        return;
    }
    orte_job_spec_free(opts->spec);
    free(opts->dvm_uri);
    free(opts->report_usage_file);
    free(opts->output_dir);
    free(opts->attach);
    memset(opts, 0, sizeof(*opts));
}

static void herdrun_parse_destruct(herdrun_parse_t *parse)
{
    herdrun_job_options_t *job = &parse->job;

    for (int i = 0; NULL != parse->contexts && i < parse->num_contexts; i++) {
        opal_cmd_line_free(parse->contexts[i].cmd);
    }
    free(parse->contexts);
    for (int i = 0; NULL != parse->apps && i < parse->num_contexts; i++) {
        orte_job_app_destruct(&parse->apps[i]);
    }
    free(parse->apps);
    free(job->host);
    free(job->hostfile);
    free(job->timeout);
    free(job->map_by);
    free(job->rank_by);
    free(job->bind_to);
    free(job->dvm_uri);
    free(job->report_usage_file);
    free(job->output_filename);
    free(job->stdin_target);
    free(job->attach);
    opal_argv_free(job->mca_names);
    opal_argv_free(job->mca_values);
    free(parse->cwd);
    herdrun_options_destruct(&parse->result);
    memset(parse, 0, sizeof(*parse));
}

/* ------------------------------------------------------------------------------------------ */
/* messages */

static int herdrun_no_memory(void)
{
    opal_show_help(HERDRUN_HELP_FILE, "out-of-memory", false);
    return HERD_ERR_SILENT;
}

/* After a message about one app context of several, say which: its number and its words. */
static void herdrun_note_context(const herdrun_parse_t *parse, int index)
{
    const herdrun_context_t *context = &parse->contexts[index];
    char quoted[HERDRUN_QUOTE_SIZE] = "";
    size_t used = 0;

    if (parse->num_contexts < 2) {
        return;
    }
    for (int i = 0; i < context->num_words; i++) {
        const char *word = parse->argv[context->first + i];
        int wrote = snprintf(quoted + used, sizeof(quoted) - used, "%s%s", 0 == i ? "" : " ", word);

        if (wrote < 0 || (size_t) wrote >= sizeof(quoted) - used) {
            /* cut, and say so */
            memcpy(quoted + sizeof(quoted) - 4, "...", 4);
            break;
        }
        used += (size_t) wrote;
    }
    opal_show_help(HERDRUN_HELP_FILE, "in-app-context", false, index + 1, parse->num_contexts,
                   quoted);
}

/* ------------------------------------------------------------------------------------------ */
/* values */

/* A count from 1 to HERDRUN_MAX_COUNT in plain decimal digits (no sign, no blanks). */
static bool herdrun_parse_count(const char *text, uint32_t *count)
{
    uint64_t value = 0;

    if ('\0' == text[0]) {
        return false;
    }
    for (const char *c = text; '\0' != *c; c++) {
        if (*c < '0' || *c > '9') {
            return false;
        }
        value = value * 10u + (uint64_t) (*c - '0');
        if (value > HERDRUN_MAX_COUNT) {
            return false;
        }
    }
    if (0 == value) {
        return false;
    }
    *count = (uint32_t) value;
    return true;
}

/* The value of a per-app option given at most once in the context (repeating the same value is
 * harmless); *value NULL when not given. */
static int herdrun_app_value(const herdrun_parse_t *parse, int index, const char *option,
                             const char *shown, const char **value)
{
    const opal_cmd_line_t *cmd = parse->contexts[index].cmd;
    const char *first = opal_cmd_line_get(cmd, option, 0, 0);

    for (int i = 1; i < opal_cmd_line_count(cmd, option); i++) {
        const char *other = opal_cmd_line_get(cmd, option, i, 0);

        if (0 != strcmp(first, other)) {
            opal_show_help(HERDRUN_HELP_FILE, "app-option-repeated", false, shown, first, other);
            return HERD_ERR_SILENT;
        }
    }
    *value = first;
    return HERD_SUCCESS;
}

/* Record one job-wide value: the first time it is given, or check it agrees with that. */
static int herdrun_job_value(const char *option, const char *value, char **slot)
{
    if (NULL == *slot) {
        *slot = strdup(value);
        return NULL != *slot ? HERD_SUCCESS : herdrun_no_memory();
    }
    if (0 != strcmp(*slot, value)) {
        opal_show_help(HERDRUN_HELP_FILE, "job-option-repeated", false, option, *slot, value);
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* The usage report is written when the job ends: a place it cannot be written to is said now,
 * before anything starts, rather than after a long job. */
static int herdrun_check_report_file(const char *path)
{
    const char *why = NULL;
    if (opal_path_writable(path, &why)) {
        return HERD_SUCCESS;
    }
    opal_show_help(HERDRUN_HELP_FILE, "report-usage-unwritable", false, path, why);
    return HERD_ERR_SILENT;
}

static int herdrun_cwd(herdrun_parse_t *parse, const char **cwd)
{
    if (NULL == parse->cwd) {
        parse->cwd = getcwd(NULL, 0);
        if (NULL == parse->cwd) {
            if (ENOMEM == errno) {
                return herdrun_no_memory();
            }
            opal_show_help(HERDRUN_HELP_FILE, "no-cwd", false, strerror(errno));
            return HERD_ERR_SILENT;
        }
    }
    *cwd = parse->cwd;
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* app contexts */

/* Split argv at every lone ":"; an empty context is an error when there are several. */
static int herdrun_split_contexts(int argc, char *const argv[], herdrun_parse_t *parse)
{
    int num_contexts = 1;
    int index = 0;

    for (int i = 1; i < argc; i++) {
        num_contexts += (0 == strcmp(argv[i], ":"));
    }
    parse->contexts = calloc((size_t) num_contexts, sizeof(*parse->contexts));
    parse->apps = calloc((size_t) num_contexts, sizeof(*parse->apps));
    if (NULL == parse->contexts || NULL == parse->apps) {
        return herdrun_no_memory();
    }
    parse->num_contexts = num_contexts;
    parse->contexts[0].first = 1;
    for (int i = 1; i < argc; i++) {
        if (0 == strcmp(argv[i], ":")) {
            parse->contexts[++index].first = i + 1;
        } else {
            parse->contexts[index].num_words++;
        }
    }
    for (int i = 0; num_contexts > 1 && i < num_contexts; i++) {
        if (0 == parse->contexts[i].num_words) {
            const char *topic = (0 == i)                  ? "empty-context-first"
                                : (num_contexts - 1 == i) ? "empty-context-last"
                                                          : "empty-context-between";

            opal_show_help(HERDRUN_HELP_FILE, topic, false, i + 1, num_contexts);
            return HERD_ERR_SILENT;
        }
    }
    return HERD_SUCCESS;
}

/* Parse the options of every context; the parser reports unknown options and missing
 * arguments itself. */
static int herdrun_parse_contexts(int argc, char *const argv[], herdrun_parse_t *parse)
{
    char **words = calloc((size_t) argc + 1, sizeof(*words));
    int rc = HERD_SUCCESS;

    if (NULL == words) {
        return herdrun_no_memory();
    }
    for (int i = 0; i < parse->num_contexts && HERD_SUCCESS == rc; i++) {
        herdrun_context_t *context = &parse->contexts[i];

        rc = opal_cmd_line_create(HERDRUN_TOOL_NAME, herdrun_option_table, &context->cmd);
        if (HERD_SUCCESS != rc) {
            rc = herdrun_no_memory();
            break;
        }
        /* The parser wants a program name first; the context's words are borrowed from argv. */
        words[0] = argv[0];
        memcpy(&words[1], &argv[context->first], (size_t) context->num_words * sizeof(*words));
        words[context->num_words + 1] = NULL;
        rc = opal_cmd_line_parse(context->cmd, context->num_words + 1, words, true);
        if (HERD_SUCCESS != rc) {
            herdrun_note_context(parse, i);
            rc = HERD_ERR_SILENT;
        }
    }
    free(words);
    return rc;
}

/* -x NAME=VALUE or -x NAME (its value from env) into *app_env, replacing an earlier NAME. */
static int herdrun_add_env(const char *given, char *const env[], char ***app_env)
{
    const char *equals = strchr(given, '=');
    size_t name_length = (NULL != equals) ? (size_t) (equals - given) : strlen(given);
    const char *entry = given;
    size_t count = opal_argv_count(*app_env);

    if (0 == name_length) {
        opal_show_help(HERDRUN_HELP_FILE, "x-no-name", false, given);
        return HERD_ERR_SILENT;
    }
    if (NULL == equals) {
        entry = NULL;
        for (size_t i = 0; NULL != env && NULL != env[i]; i++) {
            if (0 == strncmp(env[i], given, name_length) && '=' == env[i][name_length]) {
                entry = env[i];
                break;
            }
        }
        if (NULL == entry) {
            opal_show_help(HERDRUN_HELP_FILE, "x-unset", false, given, given, given);
            return HERD_ERR_SILENT;
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (0 == strncmp((*app_env)[i], entry, name_length + 1)) {
            char *copy = strdup(entry);

            if (NULL == copy) {
                return herdrun_no_memory();
            }
            free((*app_env)[i]);
            (*app_env)[i] = copy;
            return HERD_SUCCESS;
        }
    }
    return HERD_SUCCESS == opal_argv_append(app_env, entry) ? HERD_SUCCESS : herdrun_no_memory();
}

/* The app's working directory: --wdir (relative to herdrun's, since the processes may start on
 * other nodes), else herdrun's own. */
static int herdrun_app_cwd(herdrun_parse_t *parse, const char *wdir, char **app_cwd)
{
    const char *cwd = NULL;
    int rc;

    if (NULL != wdir && '\0' == wdir[0]) {
        opal_show_help(HERDRUN_HELP_FILE, "wdir-empty", false);
        return HERD_ERR_SILENT;
    }
    if (NULL != wdir && '/' == wdir[0]) {
        *app_cwd = strdup(wdir);
        return NULL != *app_cwd ? HERD_SUCCESS : herdrun_no_memory();
    }
    rc = herdrun_cwd(parse, &cwd);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL == wdir) {
        *app_cwd = strdup(cwd);
    } else {
        size_t size = strlen(cwd) + strlen(wdir) + 2;

        *app_cwd = malloc(size);
        if (NULL != *app_cwd) {
            snprintf(*app_cwd, size, "%s%s%s", cwd, '/' == cwd[strlen(cwd) - 1] ? "" : "/", wdir);
        }
    }
    return NULL != *app_cwd ? HERD_SUCCESS : herdrun_no_memory();
}

/* The per-app options and the program of context index. */
static int herdrun_read_app(herdrun_parse_t *parse, int index, char *const env[])
{
    const opal_cmd_line_t *cmd = parse->contexts[index].cmd;
    orte_job_app_t *app = &parse->apps[index];
    const char *np = NULL, *npernode = NULL, *wdir = NULL;
    uint32_t per_node = 0;
    int rc;

    if (0 == opal_cmd_line_tail_count(cmd)) {
        opal_show_help(HERDRUN_HELP_FILE, "no-program", false);
        return HERD_ERR_SILENT;
    }
    if ((uint64_t) opal_cmd_line_tail_count(cmd) > ORTE_JOB_MAX_ARGS) {
        opal_show_help(HERDRUN_HELP_FILE, "too-many-args", false, opal_cmd_line_tail_count(cmd),
                       ORTE_JOB_MAX_ARGS);
        return HERD_ERR_SILENT;
    }
    app->argv = opal_argv_copy(opal_cmd_line_tail(cmd));
    if (NULL == app->argv) {
        return herdrun_no_memory();
    }
    rc = herdrun_app_value(parse, index, "np", "-n/--np", &np);
    if (HERD_SUCCESS == rc) {
        rc = herdrun_app_value(parse, index, "npernode", "--npernode", &npernode);
    }
    if (HERD_SUCCESS == rc) {
        rc = herdrun_app_value(parse, index, "wdir", "--wdir", &wdir);
    }
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (NULL != np && !herdrun_parse_count(np, &app->np)) {
        opal_show_help(HERDRUN_HELP_FILE, "bad-np", false, np, HERDRUN_MAX_COUNT);
        return HERD_ERR_SILENT;
    }
    if (NULL != npernode) {
        char map_by[32];

        if (!herdrun_parse_count(npernode, &per_node)) {
            opal_show_help(HERDRUN_HELP_FILE, "bad-npernode", false, npernode, HERDRUN_MAX_COUNT);
            return HERD_ERR_SILENT;
        }
        snprintf(map_by, sizeof(map_by), "ppr:%u:node", per_node);
        app->map_by = strdup(map_by);
        if (NULL == app->map_by) {
            return herdrun_no_memory();
        }
    }
    for (int i = 0; i < opal_cmd_line_count(cmd, "x"); i++) {
        rc = herdrun_add_env(opal_cmd_line_get(cmd, "x", i, 0), env, &app->env);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return herdrun_app_cwd(parse, wdir, &app->cwd);
}

/* ------------------------------------------------------------------------------------------ */
/* job-wide options */

/* --mca NAME VALUE: each name once (or with the same value again). */
static int herdrun_job_mca(herdrun_job_options_t *job, const char *name, const char *value)
{
    int found = opal_argv_find(job->mca_names, name);

    if (found >= 0) {
        if (0 != strcmp(job->mca_values[found], value)) {
            opal_show_help(HERDRUN_HELP_FILE, "mca-repeated", false, name, job->mca_values[found],
                           value);
            return HERD_ERR_SILENT;
        }
        return HERD_SUCCESS;
    }
    if (HERD_SUCCESS != opal_argv_append(&job->mca_names, name)) {
        return herdrun_no_memory();
    }
    if (HERD_SUCCESS != opal_argv_append(&job->mca_values, value)) {
        /* keep the two lists the same length */
        opal_argv_delete(&job->mca_names, opal_argv_count(job->mca_names) - 1, 1);
        return herdrun_no_memory();
    }
    return HERD_SUCCESS;
}

/* Gather the job-wide options given in context index. */
static int herdrun_read_job_options(herdrun_parse_t *parse, int index)
{
    const opal_cmd_line_t *cmd = parse->contexts[index].cmd;
    herdrun_job_options_t *job = &parse->job;
    const struct {
        const char *option;
        char **slot;
    } values[] = {
        {"host", &job->host},       {"hostfile", &job->hostfile}, {"timeout", &job->timeout},
        {"map-by", &job->map_by},   {"rank-by", &job->rank_by},   {"bind-to", &job->bind_to},
        {"dvm-uri", &job->dvm_uri}, {"output-filename", &job->output_filename},
        {"stdin", &job->stdin_target}, {"attach", &job->attach},
    };
    int rc;

    for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
        for (int i = 0; i < opal_cmd_line_count(cmd, values[v].option); i++) {
            const char *value = opal_cmd_line_get(cmd, values[v].option, i, 0);
            /* -H "" (an unset shell variable) would silently run the job on this host alone */
            if (values[v].slot == &job->host || values[v].slot == &job->hostfile) {
                if (NULL != value && '\0' == value[strspn(value, " \t")]) {
                    opal_show_help(HERDRUN_HELP_FILE, "host-empty", false, values[v].option);
                    return HERD_ERR_SILENT;
                }
            }
            rc = herdrun_job_value(values[v].option, value, values[v].slot);
            if (HERD_SUCCESS != rc) {
                return rc;
            }
        }
    }
    for (int i = 0; i < opal_cmd_line_count(cmd, "report-usage"); i++) {
        const char *file = opal_cmd_line_get(cmd, "report-usage", i, 0);

        if (NULL == file) {
            continue;
        }
        if ('\0' == file[0]) {
            opal_show_help(HERDRUN_HELP_FILE, "report-usage-empty", false);
            return HERD_ERR_SILENT;
        }
        rc = herdrun_job_value("report-usage", file, &job->report_usage_file);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (NULL != job->report_usage_file &&
        HERD_SUCCESS != (rc = herdrun_check_report_file(job->report_usage_file))) {
        return rc;
    }
    for (int i = 0; i < opal_cmd_line_count(cmd, "mca"); i++) {
        rc = herdrun_job_mca(job, opal_cmd_line_get(cmd, "mca", i, 0),
                             opal_cmd_line_get(cmd, "mca", i, 1));
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    for (size_t f = 0; f < sizeof(herdrun_flag_options) / sizeof(herdrun_flag_options[0]); f++) {
        if (opal_cmd_line_is_set(cmd, herdrun_flag_options[f].option)) {
            job->flags |= herdrun_flag_options[f].flag;
        }
    }
    job->oversubscribe |= opal_cmd_line_is_set(cmd, "oversubscribe");
    job->nooversubscribe |= opal_cmd_line_is_set(cmd, "nooversubscribe");
    return HERD_SUCCESS;
}

/* The host names of the hostfile's lines, in order, one per line (a host on several lines is
 * listed each time): --map-by seq places rank i on the i-th. The ras parser checks the file
 * first and reports any mistake at its file:line, so only the first word of each line is
 * needed here. */
static int herdrun_read_seq_hosts(const char *hostfile, char ***hosts)
{
    orte_allocation_t *allocation = NULL;
    char **names = NULL;
    char *line = NULL;
    size_t capacity = 0;
    FILE *file;
    int rc;

    rc = orte_ras_base_read_hosts(hostfile, NULL, &allocation);
    if (HERD_SUCCESS != rc) {
        return HERD_ERR_OUT_OF_RESOURCE == rc ? herdrun_no_memory() : HERD_ERR_SILENT;
    }
    orte_allocation_free(allocation);
    file = fopen(hostfile, "r");
    if (NULL == file) {
        opal_show_help(ORTE_RAS_BASE_HELP_FILE, "hostfile-unreadable", true, hostfile,
                       strerror(errno));
        return HERD_ERR_SILENT;
    }
    while (getline(&line, &capacity, file) >= 0) {
        const char *blanks = " \t\r\v\f\n";
        char *comment = strchr(line, '#');
        char *host;

        if (NULL != comment) {
            *comment = '\0';
        }
        host = line + strspn(line, blanks);
        if ('\0' == *host) {
            continue;
        }
        host[strcspn(host, blanks)] = '\0';
        if (HERD_SUCCESS != opal_argv_append(&names, host)) {
            rc = herdrun_no_memory();
            break;
        }
    }
    free(line);
    fclose(file);
    if (HERD_SUCCESS != rc) {
        opal_argv_free(names);
        return rc;
    }
    *hosts = names;
    return HERD_SUCCESS;
}

/* With --dvm-uri: the names of the DVM's nodes the job may use, from -H and --hostfile (which
 * only select nodes: their slots are the DVM's). */
static int herdrun_dvm_hosts(const herdrun_job_options_t *job, char ***hosts)
{
    orte_allocation_t *allocation = NULL;
    char **names = NULL;
    int rc;

    if (NULL == job->host && NULL == job->hostfile) {
        return HERD_SUCCESS;
    }
    if (NULL != job->host && NULL != strchr(job->host, ':')) {
        opal_show_help(HERDRUN_HELP_FILE, "dvm-host-slots", false, job->host);
        return HERD_ERR_SILENT;
    }
    rc = orte_ras_base_read_hosts(job->hostfile, job->host, &allocation);
    if (HERD_SUCCESS != rc) {
        return HERD_ERR_OUT_OF_RESOURCE == rc ? herdrun_no_memory() : HERD_ERR_SILENT;
    }
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        if (HERD_SUCCESS != opal_argv_append(&names, allocation->nodes[i].name)) {
            opal_argv_free(names);
            orte_allocation_free(allocation);
            return herdrun_no_memory();
        }
    }
    orte_allocation_free(allocation);
    *hosts = names;
    return HERD_SUCCESS;
}

/* Check the job-wide options and give every app its policies. */
static int herdrun_apply_job_options(herdrun_parse_t *parse)
{
    herdrun_job_options_t *job = &parse->job;
    orte_rmaps_policy_t policy;
    uint32_t timeout = 0;
    char **seq_hosts = NULL;
    int rc;

    if (job->oversubscribe && job->nooversubscribe) {
        opal_show_help(HERDRUN_HELP_FILE, "oversubscribe-conflict", false);
        return HERD_ERR_SILENT;
    }
    if (NULL != job->timeout && !herdrun_parse_count(job->timeout, &timeout)) {
        opal_show_help(HERDRUN_HELP_FILE, "bad-timeout", false, job->timeout, HERDRUN_MAX_COUNT);
        return HERD_ERR_SILENT;
    }
    /* What mpirun and Hydra honour, and test suites set so a hung test ends; the option wins.
     * Empty or 0 is no limit, as for them. */
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (NULL == job->timeout && NULL != env_timeout && '\0' != env_timeout[0] &&
        0 != strcmp(env_timeout, "0") && !herdrun_parse_count(env_timeout, &timeout)) {
        opal_show_help(HERDRUN_HELP_FILE, "bad-env-timeout", false, env_timeout, HERDRUN_MAX_COUNT);
        return HERD_ERR_SILENT;
    }
    /* Once for the whole job, so a bad value fails now rather than on every daemon. */
    rc = orte_rmaps_policy_parse(job->map_by, job->rank_by, job->bind_to, &policy);
    if (HERD_SUCCESS != rc) {
        return HERD_ERR_SILENT;
    }
    if (ORTE_RMAPS_MAP_SEQ == policy.mapping && NULL != job->hostfile) {
        rc = herdrun_read_seq_hosts(job->hostfile, &seq_hosts);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    for (int i = 0; i < parse->num_contexts && HERD_SUCCESS == rc; i++) {
        orte_job_app_t *app = &parse->apps[i];
        const struct {
            const char *value;
            char **slot;
        } copies[] = {
            {NULL == app->map_by ? job->map_by : NULL, &app->map_by},
            {job->rank_by, &app->rank_by},
            {job->bind_to, &app->bind_to},
        };
        bool seq = (NULL == app->map_by && NULL != seq_hosts);

        for (size_t c = 0; c < sizeof(copies) / sizeof(copies[0]); c++) {
            if (NULL != copies[c].value && NULL == (*copies[c].slot = strdup(copies[c].value))) {
                rc = herdrun_no_memory();
            }
        }
        if (HERD_SUCCESS == rc && seq && NULL == (app->seq_hosts = opal_argv_copy(seq_hosts))) {
            rc = herdrun_no_memory();
        }
    }
    opal_argv_free(seq_hosts);
    parse->result.spec->timeout = timeout;
    if (HERD_SUCCESS == rc && NULL != job->stdin_target &&
        HERD_SUCCESS != orte_iof_base_parse_stdin(job->stdin_target,
                                                  &parse->result.spec->stdin_target)) {
        opal_show_help(HERDRUN_HELP_FILE, "bad-stdin", false, job->stdin_target);
        rc = HERD_ERR_SILENT;
    }
    if (HERD_SUCCESS == rc && NULL != job->output_filename) {
        /* DIR or DIR:nocopy; the folder is made when the job starts */
        char *colon = strrchr(job->output_filename, ':');
        if (NULL != colon && 0 == strcmp(colon, ":nocopy")) {
            *colon = '\0';
            parse->result.output_nocopy = true;
        }
        if ('\0' == job->output_filename[0]) {
            opal_show_help(HERDRUN_HELP_FILE, "bad-output-filename", false);
            rc = HERD_ERR_SILENT;
        }
    }
    if (HERD_SUCCESS == rc && NULL != job->attach) {
        if (NULL == job->dvm_uri) {
            opal_show_help(HERDRUN_HELP_FILE, "attach-needs-dvm", false, job->attach);
            rc = HERD_ERR_SILENT;
        } else {
            const char *seq = strrchr(job->attach, '.');
            seq = (NULL != seq) ? seq + 1 : job->attach;
            uint32_t n = 0;
            if (!herdrun_parse_count(seq, &n) || 0 == n) {
                opal_show_help(HERDRUN_HELP_FILE, "bad-attach", false, job->attach);
                rc = HERD_ERR_SILENT;
            }
        }
    }
    return rc;
}

/* Build the spec from the apps and the job-wide options. */
static int herdrun_build_spec(herdrun_parse_t *parse)
{
    herdrun_job_options_t *job = &parse->job;
    orte_job_spec_t *spec = calloc(1, sizeof(*spec));

    if (NULL == spec) {
        return herdrun_no_memory();
    }
    parse->result.spec = spec;
    spec->kill_grace_ms = -1; /* odls_base_kill_grace_ms */
    spec->stdin_target = 0;   /* rank 0, as mpirun */
    spec->flags = job->flags;
    spec->oversubscribe = job->oversubscribe;
    spec->nooversubscribe = job->nooversubscribe;
    for (size_t i = 0; NULL != job->mca_names && NULL != job->mca_names[i]; i++) {
        size_t size =
            strlen("HERD_MCA_") + strlen(job->mca_names[i]) + strlen(job->mca_values[i]) + 2;
        char *entry = malloc(size);

        if (NULL == entry) {
            return herdrun_no_memory();
        }
        snprintf(entry, size, "HERD_MCA_%s=%s", job->mca_names[i], job->mca_values[i]);
        if (HERD_SUCCESS != opal_argv_append(&spec->mca, entry)) {
            free(entry);
            return herdrun_no_memory();
        }
        free(entry);
    }
    return HERD_SUCCESS;
}

/* The side effects, last, once everything else has been checked: --mca for herdrun itself (and
 * in the environment, which the daemons' bootstrap carries), and the allocation's hosts. */
static int herdrun_export(const herdrun_job_options_t *job)
{
    for (size_t i = 0; NULL != job->mca_names && NULL != job->mca_names[i]; i++) {
        char env_name[256];

        /* reports a bad name, or a bad value for a known variable */
        if (HERD_SUCCESS != opal_mca_var_set_cli(job->mca_names[i], job->mca_values[i])) {
            return HERD_ERR_SILENT;
        }
        snprintf(env_name, sizeof(env_name), "HERD_MCA_%s", job->mca_names[i]);
        if (0 != setenv(env_name, job->mca_values[i], 1)) {
            return herdrun_no_memory();
        }
    }
    if (NULL != job->dvm_uri) {
        return HERD_SUCCESS;
    }
    if (NULL != job->host && HERD_SUCCESS != opal_mca_var_set_cli("ras_base_host", job->host)) {
        return HERD_ERR_SILENT;
    }
    if (NULL != job->hostfile &&
        HERD_SUCCESS != opal_mca_var_set_cli("ras_base_hostfile", job->hostfile)) {
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

/* Move the apps into the spec, and the file names into the result. */
static void herdrun_hand_over(herdrun_parse_t *parse)
{
    orte_job_spec_t *spec = parse->result.spec;

    spec->apps = parse->apps;
    spec->num_apps = (uint32_t) parse->num_contexts;
    parse->apps = NULL;
    parse->result.dvm_uri = parse->job.dvm_uri;
    parse->job.dvm_uri = NULL;
    parse->result.report_usage_file = parse->job.report_usage_file;
    parse->job.report_usage_file = NULL;
    parse->result.output_dir = parse->job.output_filename;
    parse->job.output_filename = NULL;
    parse->result.attach = parse->job.attach;
    parse->job.attach = NULL;
}

int herdrun_cmdline_parse(int argc, char *const argv[], char *const env[], herdrun_options_t *opts)
{
    herdrun_parse_t parse = {.argv = argv};
    int rc;

    if (NULL == opts || argc < 1 || NULL == argv) {
        return HERD_ERR_BAD_PARAM;
    }
    rc = herdrun_split_contexts(argc, argv, &parse);
    if (HERD_SUCCESS == rc) {
        rc = herdrun_parse_contexts(argc, argv, &parse);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    for (int i = 0; i < parse.num_contexts; i++) {
        const opal_cmd_line_t *cmd = parse.contexts[i].cmd;

        parse.result.help |= opal_cmd_line_is_set(cmd, "help");
        parse.result.version |= opal_cmd_line_is_set(cmd, "version");
        parse.result.verbose += opal_cmd_line_count(cmd, "verbose");
    }
    /* Asking for help must work whatever else is on the line. */
    if (parse.result.help || parse.result.version) {
        goto done;
    }

    /* --attach starts nothing: it prints a running job's output */
    bool attaching = false;
    for (int i = 0; i < parse.num_contexts; i++) {
        attaching |= opal_cmd_line_is_set(parse.contexts[i].cmd, "attach");
    }
    for (int i = 0; i < parse.num_contexts && HERD_SUCCESS == rc; i++) {
        rc = herdrun_read_job_options(&parse, i);
        if (HERD_SUCCESS == rc && !attaching) {
            rc = herdrun_read_app(&parse, i, env);
        } else if (HERD_SUCCESS == rc && opal_cmd_line_tail_count(parse.contexts[i].cmd) > 0) {
            opal_show_help(HERDRUN_HELP_FILE, "attach-program", false,
                           opal_cmd_line_tail(parse.contexts[i].cmd)[0]);
            rc = HERD_ERR_SILENT;
        }
        if (HERD_SUCCESS != rc) {
            herdrun_note_context(&parse, i);
        }
    }
    if (parse.result.verbose > 0) {
        parse.job.flags |= ORTE_JOB_FLAG_VERBOSE;
    }
    if (HERD_SUCCESS == rc) {
        rc = herdrun_build_spec(&parse);
    }
    if (HERD_SUCCESS == rc) {
        rc = herdrun_apply_job_options(&parse);
    }
    if (HERD_SUCCESS == rc && NULL != parse.job.dvm_uri && !attaching) {
        rc = herdrun_dvm_hosts(&parse.job, &parse.result.spec->hosts);
    }
    if (HERD_SUCCESS == rc) {
        rc = herdrun_export(&parse.job);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    herdrun_hand_over(&parse);

done:
    *opts = parse.result;
    memset(&parse.result, 0, sizeof(parse.result));
out:
    herdrun_parse_destruct(&parse);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* --help */

void herdrun_cmdline_usage(FILE *stream)
{
    opal_cmd_line_t *cmd = NULL;

    fputs("Usage: herdrun [OPTION]... PROGRAM [ARG]... [: [OPTION]... PROGRAM [ARG]...]...\n"
          "Run PROGRAM as a parallel job on the nodes of the allocation, or on a running DVM\n"
          "(--dvm-uri). App contexts separated by a lone ':' run different programs in one job\n"
          "(MPMD), each with its own -n, -x, --wdir and --npernode; the other options apply to\n"
          "the whole job and may be given in any app context. Options end at the program:\n"
          "what follows it are the program's arguments.\n\n"
          "Options:\n",
          stream);
    if (HERD_SUCCESS == opal_cmd_line_create(HERDRUN_TOOL_NAME, herdrun_option_table, &cmd)) {
        opal_cmd_line_usage(cmd, stream);
        opal_cmd_line_free(cmd);
    }
    fputs("\nMapping and binding defaults (as Open MPI 4.1), for the job's total -n:\n"
          "  at most 2 processes  --map-by core --rank-by core --bind-to core\n"
          "  more than 2          --map-by package --rank-by package --bind-to package\n"
          "  --map-by core, hwthread, package or l3cache rank and bind by that object;\n"
          "  slot, node and seq bind as above; ppr:N:OBJ binds to OBJ; PE=n binds each process\n"
          "  to its n cores. Processes on simulated nodes are not bound.\n\n"
          "Examples:\n"
          "  herdrun -n 4 ./a.out arg\n"
          "  herdrun -H n1:8,n2:8 --map-by ppr:2:package:PE=2 ./a.out\n"
          "  herdrun -n 1 ./manager : -n 8 -x OMP_NUM_THREADS=2 --wdir /scratch ./worker\n"
          "  herdrun --hostfile hosts --map-by seq ./a.out   (rank i on the host of line i)\n"
          "  herdrun --report-usage=usage.json -n 4 ./a.out\n"
          "  herd-dvm --hostfile hosts --report-uri dvm.uri --daemonize\n"
          "  herdrun --dvm-uri dvm.uri -n 16 ./a.out\n"
          "  herdrun --dvm-uri dvm.uri --attach 3      (job 3's output, from now on)\n"
          "  herdrun --tag-output --output-filename out -n 4 ./a.out\n"
          "  seq 100 | herdrun --stdin all -n 4 ./filter\n\n"
          "See herdrun(1) for more.\n",
          stream);
}
