/* SPDX-License-Identifier: BSD-3-Clause */
/* herd-info: what this herd installation is made of: frameworks, components (DSO or static,
 * from which file), every MCA variable with its value and where the value came from, and the
 * node's fabric inventory. */
#include "herd_config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_var.h"
#include "opal/mca/fabric/fabric.h"
#include "opal/mca/mca.h"
#include "opal/mca/opal_frameworks.h"
#include "opal/util/argv.h"
#include "opal/util/cmd_line.h"
#include "opal/util/install_dirs.h"
#include "opal/util/show_help.h"
#include "orte/mca/orte_frameworks.h"
/* herd-info describes the whole installation, so it links every layer's frameworks, also
 * ompi-shim's (which libherd carries inside, hidden) */
#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/mca/ompi_frameworks.h"
#include "orte/runtime/dvm.h"
#include "opal/util/jobdb.h"
#include "orte/runtime/launch.h"

static const char *help_file = "help-herd-info.txt";

static const opal_cmd_line_option_t options[] = {
    {"all", 'a', 0, NULL, "Show everything: all components and every variable at every level"},
    {"param", 0, 2, "FRAMEWORK COMPONENT",
     "Show the variables of one component (COMPONENT may be 'all', or 'base' for the "
     "framework's own variables)"},
    {"level", 'l', 1, "N", "Show variables of level 1..N (1-3 users, 4-6 tuners, 7-9 developers; "
                           "default 1, 9 with --all)"},
    {"parsable", 0, 0, NULL, "Print stable key:value lines for scripts"},
    {"parseable", 0, 0, NULL, "Same as --parsable"},
    {"fabric", 0, 0, NULL, "Discover and print this node's fabric inventory"},
    {"job", 0, 1, "JOBID",
     "Print the job database of a running job on this node (every process's record)"},
    {"mca", 0, 2, "NAME VALUE", "Set the MCA variable NAME to VALUE"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, 0, 0, NULL, NULL},
};

/* Groups of variables that belong to the runtime rather than to a framework. */
static const char *const runtime_groups[] = {"dvm", "herdrun", NULL};

static opal_mca_framework_t *frameworks[] = {
    HERD_MCA_opal_FRAMEWORKS HERD_MCA_orte_FRAMEWORKS HERD_MCA_ompi_FRAMEWORKS NULL,
};

/* What to print, from the command line. */
typedef struct {
    bool parsable;
    bool all;
    int level;
    const char *param_framework; /* NULL: every framework */
    const char *param_component; /* NULL or "all": every component */
} info_options_t;

static const char *level_name(int level)
{
    static const char *names[] = {"user/basic",  "user/detail", "user/all",
                                  "tuner/basic", "tuner/detail", "tuner/all",
                                  "dev/basic",   "dev/detail",  "dev/all"};
    return (level >= 1 && level <= 9) ? names[level - 1] : "unknown";
}

/* A variable's group: framework "" is the MCA core ("mca"); component "" is the base. */
static const char *var_framework(const opal_mca_var_info_t *info)
{
    return (NULL == info->framework || '\0' == info->framework[0]) ? "mca" : info->framework;
}

static const char *var_component(const opal_mca_var_info_t *info)
{
    return (NULL == info->component || '\0' == info->component[0]) ? "base" : info->component;
}

static bool var_belongs(const opal_mca_var_info_t *info, const char *framework,
                        const char *component)
{
    const char *fw = var_framework(info);
    /* the core's own variables (mca_base_*, component_path) are listed with framework mca */
    if (0 == strcmp(fw, "mca_base")) {
        fw = "mca";
    }
    return 0 == strcmp(fw, framework) && 0 == strcmp(var_component(info), component);
}

static char *enum_names(const opal_mca_var_enum_value_t *values)
{
    char **names = NULL;
    for (size_t i = 0; NULL != values && NULL != values[i].name; ++i) {
        opal_argv_append(&names, values[i].name);
    }
    char *joined = opal_argv_join(names, ',');
    opal_argv_free(names);
    return joined;
}

/* Print text wrapped at 100 columns, each line indented by indent spaces. */
static void print_wrapped(const char *text, int indent)
{
    const int width = 100 - indent;
    while ('\0' != *text) {
        int len = (int) strlen(text);
        int cut = len;
        if (len > width) {
            cut = width;
            while (cut > 0 && ' ' != text[cut]) {
                --cut;
            }
            if (0 == cut) {
                cut = width; /* one word longer than the line: break it */
            }
        }
        printf("%*s%.*s\n", indent, "", cut, text);
        text += cut;
        while (' ' == *text) {
            ++text;
        }
    }
}

static void print_variable(const info_options_t *opt, int index, const char *framework,
                           const char *component)
{
    opal_mca_var_info_t info;
    char *value = NULL;
    char *defval = NULL;

    if (HERD_SUCCESS != opal_mca_var_get_info(index, &info) || info.level > opt->level ||
        NULL != info.deprecated_by) {
        return;
    }
    if (HERD_SUCCESS != opal_mca_var_value_string(index, &value) ||
        HERD_SUCCESS != opal_mca_var_default_string(index, &defval)) {
        goto out;
    }
    const char *source = opal_mca_var_source_name(info.source);
    const char *detail = NULL != info.source_detail ? info.source_detail : "";
    char *valid = (OPAL_MCA_VAR_ENUM == info.type) ? enum_names(info.enum_values) : NULL;
    if (opt->parsable) {
        const char *prefix_fmt = "mca:%s:%s:param:%s:";
        printf(prefix_fmt, framework, component, info.full_name);
        printf("value:%s\n", value);
        printf(prefix_fmt, framework, component, info.full_name);
        printf("source:%s%s%s\n", source, '\0' != detail[0] ? ":" : "", detail);
        printf(prefix_fmt, framework, component, info.full_name);
        printf("type:%s\n", opal_mca_var_type_name(info.type));
        printf(prefix_fmt, framework, component, info.full_name);
        printf("default:%s\n", defval);
        printf(prefix_fmt, framework, component, info.full_name);
        printf("level:%d\n", info.level);
        if (NULL != valid) {
            printf(prefix_fmt, framework, component, info.full_name);
            printf("enumerator:%s\n", valid);
        }
        printf(prefix_fmt, framework, component, info.full_name);
        printf("help:%s\n", NULL != info.help ? info.help : "");
        printf(prefix_fmt, framework, component, info.full_name);
        printf("env:HERD_MCA_%s\n", info.full_name);
    } else {
        printf("%20s %s: variable \"%s\" = \"%s\"\n", "MCA", framework, info.full_name, value);
        printf("%22s(type %s, default \"%s\", source %s%s%s, level %d %s)\n", "",
               opal_mca_var_type_name(info.type), defval, source, '\0' != detail[0] ? " " : "",
               detail, info.level, level_name(info.level));
        if (NULL != valid) {
            printf("%22sValid values: %s\n", "", valid);
        }
        if (NULL != info.help) {
            print_wrapped(info.help, 22);
        }
    }
    free(valid);
out:
    free(value);
    free(defval);
}

static void print_variables_of(const info_options_t *opt, const char *framework,
                               const char *component)
{
    int count = opal_mca_var_count();
    for (int i = 0; i < count; ++i) {
        opal_mca_var_info_t info;
        if (HERD_SUCCESS == opal_mca_var_get_info(i, &info) &&
            var_belongs(&info, framework, component)) {
            print_variable(opt, i, framework, component);
        }
    }
}

static bool component_excluded(const opal_mca_framework_t *fw, const char *name)
{
    bool exclude = false;
    char **names = NULL;
    if (HERD_SUCCESS != opal_mca_parse_selection(fw, fw->selection, &exclude, &names) ||
        NULL == names) {
        return false;
    }
    bool listed = opal_argv_find(names, name) >= 0;
    opal_argv_free(names);
    return listed == exclude;
}

/* Where a static component of fw lives, for --parsable: its layer's library. */
static const char *static_library(const opal_mca_framework_t *fw)
{
    if (0 == strcmp(fw->layer, "orte")) {
        return "(linked into libherd-orte)";
    }
    return 0 == strcmp(fw->layer, "ompi") ? "(linked into libherd)" : "(linked into libherd-opal)";
}

static void print_component(const info_options_t *opt, const opal_mca_framework_t *fw,
                            const opal_mca_component_entry_t *entry)
{
    const opal_mca_component_t *c = entry->component;
    bool excluded = component_excluded(fw, c->name);
    if (opt->parsable) {
        printf("mca:%s:%s:version:%s\n", fw->name, c->name, c->version);
        printf("mca:%s:%s:build:%s\n", fw->name, c->name, entry->is_static ? "static" : "dso");
        printf("mca:%s:%s:file:%s\n", fw->name, c->name,
               entry->is_static ? static_library(fw) : entry->filename);
        printf("mca:%s:%s:selected:%s\n", fw->name, c->name, excluded ? "excluded" : "allowed");
    } else {
        printf("%20s %s: %s (v%s, %s%s%s)%s\n", "MCA", fw->name, c->name, c->version,
               entry->is_static ? "static" : "DSO", entry->is_static ? "" : " ",
               entry->is_static ? "" : entry->filename,
               excluded ? " [excluded by selection]" : "");
    }
}

static bool show_variables(const info_options_t *opt)
{
    return opt->all || NULL != opt->param_framework;
}

/* The endpoint framework's slots, fixed at configure time: the transports' compile-time tags and
 * whether procs have the run-time slot table. */
static void print_endpoint_slots(const info_options_t *opt)
{
    if (opt->parsable) {
        for (int slot = 0; NULL != ompi_endpoint_base_tag_name(slot); ++slot) {
            printf("mca:endpoint:base:tag:%d:%s:%s\n", slot, ompi_endpoint_base_tag_name(slot),
                   ompi_endpoint_base_tag_owner(slot));
        }
        printf("mca:endpoint:base:dynamic_slot:%s\n", HERD_ENDPOINT_DYNAMIC_SLOTS ? "yes" : "no");
        printf("mca:endpoint:base:proc_size:%zu\n", sizeof(ompi_proc_t));
        return;
    }
    printf("%20s endpoint: compile-time tags:", "MCA");
    if (NULL == ompi_endpoint_base_tag_name(0)) {
        printf(" (none)");
    }
    for (int slot = 0; NULL != ompi_endpoint_base_tag_name(slot); ++slot) {
        printf("%s %s (slot %d, %s)", 0 == slot ? "" : ",", ompi_endpoint_base_tag_name(slot),
               slot, ompi_endpoint_base_tag_owner(slot));
    }
#if HERD_ENDPOINT_DYNAMIC_SLOTS
    printf("; run-time slots: in a table behind slot %d", (int) HERD_ENDPOINT_DYNAMIC_INDEX);
#else
    printf("; run-time slots: none (--disable-dynamic-endpoint-slots)");
#endif
    printf("; %zu bytes per proc\n", sizeof(ompi_proc_t));
}

static void print_framework(const info_options_t *opt, const opal_mca_framework_t *fw)
{
    const char *want = opt->param_component;
    bool every = (NULL == want || 0 == strcmp(want, "all"));
    if (opt->parsable) {
        printf("mca:%s:base:description:%s\n", fw->name, fw->description);
        printf("mca:%s:base:layer:%s\n", fw->name, fw->layer);
        printf("mca:%s:base:select:%s\n", fw->name, fw->multi_select ? "all" : "one");
    }
    if (show_variables(opt) && (every || 0 == strcmp(want, "base"))) {
        print_variables_of(opt, fw->name, "base");
    }
    if (fw == &ompi_endpoint_base_framework && every) {
        print_endpoint_slots(opt);
    }
    if (0 == fw->num_components && !opt->parsable && !show_variables(opt)) {
        printf("%20s %s: no components\n", "MCA", fw->name);
    }
    for (size_t i = 0; i < fw->num_components; ++i) {
        const opal_mca_component_entry_t *entry = &fw->components[i];
        if (!every && 0 != strcmp(want, entry->component->name)) {
            continue;
        }
        print_component(opt, fw, entry);
        if (show_variables(opt)) {
            print_variables_of(opt, fw->name, entry->component->name);
        }
    }
}

static void print_header(const info_options_t *opt)
{
    const char *path = opal_mca_component_path();
    if (opt->parsable) {
        printf("package:%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        printf("path:prefix:%s\n", opal_install_dir(OPAL_INSTALL_PREFIX));
        printf("path:pkglibdir:%s\n", opal_install_dir(OPAL_INSTALL_PKGLIBDIR));
        printf("path:component_search:%s\n", path);
        return;
    }
    printf("%20s: %s %s\n", "Package", PACKAGE_NAME, PACKAGE_VERSION);
    printf("%20s: %s\n", "Prefix", opal_install_dir(OPAL_INSTALL_PREFIX));
    printf("%20s: %s\n", "Components in", opal_install_dir(OPAL_INSTALL_PKGLIBDIR));
    printf("%20s: %s\n", "Search path", path);
}

static opal_mca_framework_t *find_framework(const char *name)
{
    for (size_t i = 0; NULL != frameworks[i]; ++i) {
        if (0 == strcmp(frameworks[i]->name, name)) {
            return frameworks[i];
        }
    }
    return NULL;
}

static char *framework_names(void)
{
    char **names = NULL;
    opal_argv_append(&names, "mca");
    for (size_t i = 0; NULL != frameworks[i]; ++i) {
        opal_argv_append(&names, frameworks[i]->name);
    }
    for (size_t g = 0; NULL != runtime_groups[g]; ++g) {
        opal_argv_append(&names, runtime_groups[g]);
    }
    char *joined = opal_argv_join(names, ',');
    opal_argv_free(names);
    return joined;
}

/* --param FW COMP must name things that exist; say what does. */
static int check_param_names(const info_options_t *opt)
{
    const char *fw_name = opt->param_framework;
    const char *comp = opt->param_component;
    if (NULL == fw_name || 0 == strcmp(fw_name, "all")) {
        return HERD_SUCCESS;
    }
    if (0 == strcmp(fw_name, "mca") || opal_argv_find((char **) runtime_groups, fw_name) >= 0) {
        if (0 != strcmp(comp, "all") && 0 != strcmp(comp, "base")) {
            opal_show_help(help_file, "unknown-component", true, comp, fw_name, "base");
            return HERD_ERR_NOT_FOUND;
        }
        return HERD_SUCCESS;
    }
    opal_mca_framework_t *fw = find_framework(fw_name);
    if (NULL == fw) {
        char *names = framework_names();
        opal_show_help(help_file, "unknown-framework", true, fw_name, names ? names : "");
        free(names);
        return HERD_ERR_NOT_FOUND;
    }
    if (0 == strcmp(comp, "all") || 0 == strcmp(comp, "base")) {
        return HERD_SUCCESS;
    }
    char **names = NULL;
    opal_argv_append(&names, "base");
    for (size_t i = 0; i < fw->num_components; ++i) {
        if (0 == strcmp(fw->components[i].component->name, comp)) {
            opal_argv_free(names);
            return HERD_SUCCESS;
        }
        opal_argv_append(&names, fw->components[i].component->name);
    }
    char *joined = opal_argv_join(names, ',');
    opal_show_help(help_file, "unknown-component", true, comp, fw_name, joined ? joined : "");
    free(joined);
    opal_argv_free(names);
    return HERD_ERR_NOT_FOUND;
}

static void print_fabric_parsable(const opal_fabric_record_t *r)
{
    for (uint32_t a = 0; a < r->num_attrs; ++a) {
        printf("fabric:%s:%s:%s\n", r->component, r->attrs[a].key, r->attrs[a].value);
    }
    for (uint32_t d = 0; d < r->num_devices; ++d) {
        const opal_fabric_device_t *dev = &r->devices[d];
        printf("fabric:%s:device:%s:kind:%s\n", r->component, dev->name, dev->kind);
        for (uint32_t a = 0; a < dev->num_attrs; ++a) {
            printf("fabric:%s:device:%s:%s:%s\n", r->component, dev->name, dev->attrs[a].key,
                   dev->attrs[a].value);
        }
    }
}

static int print_fabric(const info_options_t *opt)
{
    opal_fabric_record_t **records = NULL;
    size_t num = 0;
    int rc = opal_fabric_base_open();
    if (HERD_SUCCESS != rc) {
        if (HERD_ERR_NOT_FOUND == rc) {
            opal_show_help(help_file, "no-fabric", true);
        }
        return rc;
    }
    rc = opal_fabric_base_discover(&records, &num);
    if (HERD_SUCCESS == rc) {
        for (size_t i = 0; i < num; ++i) {
            if (opt->parsable) {
                print_fabric_parsable(records[i]);
            } else {
                opal_fabric_record_print(stdout, records[i]);
            }
        }
        opal_fabric_records_free(records, num);
    }
    opal_fabric_base_close();
    return rc;
}

static int parse_level(const char *text, int *level)
{
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (NULL == end || '\0' != *end || value < 1 || value > 9) {
        opal_show_help(help_file, "bad-level", true, text);
        return HERD_ERR_BAD_PARAM;
    }
    *level = (int) value;
    return HERD_SUCCESS;
}

/* --job: every job database segment of jobid on this host (one per node: simulated nodes
 * share the host). */
static int print_job(const char *jobid)
{
    char prefix[300];
    char **others = NULL;
    int found = 0;
    snprintf(prefix, sizeof(prefix), "herd-%u-%s-", (unsigned) getuid(), jobid);
    DIR *dir = opendir("/dev/shm");
    if (NULL == dir) {
        fprintf(stderr, "herd-info: cannot read /dev/shm: %s\n", strerror(errno));
        return HERD_ERR_SILENT;
    }
    struct dirent *entry;
    char own[64];
    snprintf(own, sizeof(own), "herd-%u-", (unsigned) getuid());
    while (NULL != (entry = readdir(dir))) {
        if (0 == strncmp(entry->d_name, prefix, strlen(prefix))) {
            char name[512];
            opal_jobdb_t *db = NULL;
            snprintf(name, sizeof(name), "/%s", entry->d_name);
            if (HERD_SUCCESS == opal_jobdb_attach(name, &db)) {
                opal_jobdb_dump(stdout, db);
                opal_jobdb_detach(db);
                found++;
            }
        } else if (0 == strncmp(entry->d_name, own, strlen(own)) &&
                   NULL == strstr(entry->d_name, ".launch-") &&
                   NULL == strstr(entry->d_name, ".sm")) {
            /* (a job's launch segments and btl sm rings are no job ids to offer) */
            /* "herd-<uid>-<jobid>-<node>": offer the job ids that do exist */
            const char *id = entry->d_name + strlen(own);
            const char *dash = strchr(id, '-');
            if (NULL != dash) {
                char *copy = strndup(id, (size_t) (dash - id));
                if (NULL != copy) {
                    opal_argv_append_unique(&others, copy);
                    free(copy);
                }
            }
        }
    }
    closedir(dir);
    if (0 == found) {
        /* opal_argv_join gives "" for no job at all */
        char *list = NULL != others ? opal_argv_join(others, ' ') : NULL;
        fprintf(stderr, "herd-info: no job database of job %s on this node. %s%s\n", jobid,
                NULL != list ? "Jobs with a database here: " : "No job runs here now.",
                NULL != list ? list : "");
        free(list);
        opal_argv_free(others);
        return HERD_ERR_SILENT;
    }
    opal_argv_free(others);
    return HERD_SUCCESS;
}

int main(int argc, char *argv[])
{
    opal_cmd_line_t *cmd = NULL;
    info_options_t opt = {.level = 1};
    int exit_status = 1;
    int rc;

    rc = opal_cmd_line_create("herd-info", options, &cmd);
    if (HERD_SUCCESS != rc) {
        fprintf(stderr, "herd-info: %s\n", opal_strerror(rc));
        return 1;
    }
    if (HERD_SUCCESS != opal_cmd_line_parse(cmd, argc, argv, false)) {
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "help")) {
        printf("Usage: herd-info [OPTION]...\n"
               "Show herd's frameworks, components, MCA variables and fabric inventory.\n\n");
        opal_cmd_line_usage(cmd, stdout);
        exit_status = 0;
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "version")) {
        printf("herd-info (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        exit_status = 0;
        goto out_cmd;
    }
    if (opal_cmd_line_tail_count(cmd) > 0) {
        opal_show_help(help_file, "unexpected-argument", true, opal_cmd_line_tail(cmd)[0]);
        goto out_cmd;
    }
    opt.parsable = opal_cmd_line_is_set(cmd, "parsable") || opal_cmd_line_is_set(cmd, "parseable");
    opt.all = opal_cmd_line_is_set(cmd, "all");
    if (opt.all) {
        opt.level = 9;
    }
    if (opal_cmd_line_is_set(cmd, "level") &&
        HERD_SUCCESS != parse_level(opal_cmd_line_get(cmd, "level", 0, 0), &opt.level)) {
        goto out_cmd;
    }
    if (opal_cmd_line_is_set(cmd, "param")) {
        opt.param_framework = opal_cmd_line_get(cmd, "param", 0, 0);
        opt.param_component = opal_cmd_line_get(cmd, "param", 0, 1);
    }

    /* herd-info shows every component, also those a framework would leave unloaded */
    opal_mca_set_defer(false);
    rc = opal_mca_init();
    if (HERD_SUCCESS != rc) {
        goto out_cmd;
    }
    for (int i = 0; i < opal_cmd_line_count(cmd, "mca"); ++i) {
        rc = opal_mca_var_set_cli(opal_cmd_line_get(cmd, "mca", i, 0),
                                  opal_cmd_line_get(cmd, "mca", i, 1));
        if (HERD_SUCCESS != rc) {
            goto out_mca;
        }
    }
    for (size_t i = 0; NULL != frameworks[i]; ++i) {
        rc = opal_mca_framework_register(frameworks[i]);
        if (HERD_SUCCESS != rc) {
            goto out_frameworks;
        }
    }
    if (HERD_SUCCESS != orte_dvm_register_params() ||
        HERD_SUCCESS != orte_launch_register_params()) {
        goto out_frameworks;
    }
    opal_mca_var_check_unknown(NULL);
    if (HERD_SUCCESS != check_param_names(&opt)) {
        goto out_frameworks;
    }

    if (opal_cmd_line_is_set(cmd, "job")) {
        rc = print_job(opal_cmd_line_get(cmd, "job", 0, 0));
        exit_status = (HERD_SUCCESS == rc) ? 0 : 1;
        goto out_frameworks;
    }
    if (opal_cmd_line_is_set(cmd, "fabric")) {
        rc = print_fabric(&opt);
        exit_status = (HERD_SUCCESS == rc) ? 0 : 1;
        goto out_frameworks;
    }
    const char *only = opt.param_framework;
    bool every_fw = (NULL == only || 0 == strcmp(only, "all"));
    if (every_fw) {
        print_header(&opt);
    }
    if (show_variables(&opt) && (every_fw || 0 == strcmp(only, "mca"))) {
        print_variables_of(&opt, "mca", "base");
    }
    for (size_t i = 0; NULL != frameworks[i]; ++i) {
        if (every_fw || 0 == strcmp(only, frameworks[i]->name)) {
            print_framework(&opt, frameworks[i]);
        }
    }
    /* variables of the runtime itself, which belong to no framework (dvm_radix, ...) */
    for (size_t g = 0; NULL != runtime_groups[g]; ++g) {
        if (show_variables(&opt) && (every_fw || 0 == strcmp(only, runtime_groups[g]))) {
            print_variables_of(&opt, runtime_groups[g], "base");
        }
    }
    exit_status = 0;

out_frameworks:
    for (size_t i = 0; NULL != frameworks[i]; ++i) {
        opal_mca_framework_close(frameworks[i]);
    }
out_mca:
    opal_mca_finalize();
out_cmd:
    opal_cmd_line_free(cmd);
    return exit_status;
}
