/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing --map-by, --rank-by and --bind-to, and deciding what a default means for a job. */
#include "herd_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opal/util/show_help.h"
#include "orte/mca/rmaps/base/base.h"

#define MAP_BY_VALUES                                                                              \
    "slot, node, package (or socket), l3cache, core, hwthread, ppr:N:OBJ (OBJ: package, "          \
    "l3cache, core, hwthread or node), seq; modifiers after a colon, separated by commas or "      \
    "colons: PE=n, SPAN, OVERSUBSCRIBE, NOOVERSUBSCRIBE"
#define RANK_BY_VALUES "slot, node, package (or socket), l3cache, core, hwthread"
#define BIND_TO_VALUES "none, hwthread, core, l3cache, package (or socket)"

typedef struct {
    const char *name;
    int value;
} policy_word_t;

static const policy_word_t mapping_words[] = {
    {"slot", ORTE_RMAPS_MAP_SLOT},         {"node", ORTE_RMAPS_MAP_NODE},
    {"package", ORTE_RMAPS_MAP_PACKAGE},   {"socket", ORTE_RMAPS_MAP_PACKAGE},
    {"l3cache", ORTE_RMAPS_MAP_L3CACHE},   {"core", ORTE_RMAPS_MAP_CORE},
    {"hwthread", ORTE_RMAPS_MAP_HWTHREAD}, {"ppr", ORTE_RMAPS_MAP_PPR},
    {"seq", ORTE_RMAPS_MAP_SEQ},           {NULL, 0},
};

static const policy_word_t ppr_words[] = {
    {"package", ORTE_RMAPS_MAP_PACKAGE},
    {"socket", ORTE_RMAPS_MAP_PACKAGE},
    {"l3cache", ORTE_RMAPS_MAP_L3CACHE},
    {"core", ORTE_RMAPS_MAP_CORE},
    {"hwthread", ORTE_RMAPS_MAP_HWTHREAD},
    {"node", ORTE_RMAPS_MAP_NODE},
    {NULL, 0},
};

static const policy_word_t ranking_words[] = {
    {"slot", ORTE_RMAPS_RANK_SLOT},         {"node", ORTE_RMAPS_RANK_NODE},
    {"package", ORTE_RMAPS_RANK_PACKAGE},   {"socket", ORTE_RMAPS_RANK_PACKAGE},
    {"l3cache", ORTE_RMAPS_RANK_L3CACHE},   {"core", ORTE_RMAPS_RANK_CORE},
    {"hwthread", ORTE_RMAPS_RANK_HWTHREAD}, {NULL, 0},
};

static const policy_word_t binding_words[] = {
    {"none", ORTE_RMAPS_BIND_NONE},
    {"hwthread", ORTE_RMAPS_BIND_HWTHREAD},
    {"core", ORTE_RMAPS_BIND_CORE},
    {"l3cache", ORTE_RMAPS_BIND_L3CACHE},
    {"package", ORTE_RMAPS_BIND_PACKAGE},
    {"socket", ORTE_RMAPS_BIND_PACKAGE},
    {NULL, 0},
};

static const char *name_of(const policy_word_t *words, int value)
{
    for (const policy_word_t *w = words; NULL != w->name; ++w) {
        if (w->value == value) {
            return w->name;
        }
    }
    return "default";
}

const char *orte_rmaps_mapping_name(orte_rmaps_mapping_t mapping)
{
    return name_of(mapping_words, (int) mapping);
}

const char *orte_rmaps_ranking_name(orte_rmaps_ranking_t ranking)
{
    return name_of(ranking_words, (int) ranking);
}

const char *orte_rmaps_binding_name(orte_rmaps_binding_t binding)
{
    return name_of(binding_words, (int) binding);
}

static bool lookup(const policy_word_t *words, const char *word, int *value)
{
    for (const policy_word_t *w = words; NULL != w->name; ++w) {
        if (0 == strcasecmp(w->name, word)) {
            *value = w->value;
            return true;
        }
    }
    return false;
}

static int bad_value(const char *option, const char *value, const char *problem,
                     const char *accepted)
{
    opal_show_help(ORTE_RMAPS_BASE_HELP_FILE, "bad-policy", true, value, option, problem, accepted);
    return HERD_ERR_BAD_PARAM;
}

/* A positive count (PE=n, ppr:N); false for anything else, 0 included. */
static bool parse_count(const char *text, uint32_t *count)
{
    char *end;
    unsigned long value;

    if (!isdigit((unsigned char) text[0])) {
        return false;
    }
    errno = 0;
    value = strtoul(text, &end, 10);
    if (0 != errno || '\0' != *end || 0 == value || value > UINT32_MAX / 2) {
        return false;
    }
    *count = (uint32_t) value;
    return true;
}

/* The words of value separated by ':' or ','; a copy the caller frees (NULL: out of memory). */
static char **split_words(const char *value, size_t *num_words)
{
    size_t n = 1;
    for (const char *p = value; '\0' != *p; ++p) {
        n += (':' == *p || ',' == *p);
    }
    char **words = calloc(n + 1, sizeof(*words));
    char *copy = strdup(value);
    if (NULL == words || NULL == copy) {
        free(words);
        free(copy);
        return NULL;
    }
    words[0] = copy;
    size_t i = 1;
    for (char *p = copy; '\0' != *p; ++p) {
        if (':' == *p || ',' == *p) {
            *p = '\0';
            words[i++] = p + 1;
        }
    }
    *num_words = n;
    return words;
}

static void free_words(char **words)
{
    if (NULL != words) {
        free(words[0]);
        free(words);
    }
}

static int parse_modifier(const char *map_by, const char *word, orte_rmaps_policy_t *policy)
{
    char problem[256];

    if (0 == strncasecmp(word, "PE=", 3)) {
        if (!parse_count(word + 3, &policy->pe)) {
            snprintf(problem, sizeof(problem),
                     "the modifier \"%s\" needs a positive number of cpus per process, as in "
                     "PE=2",
                     word);
            return bad_value("--map-by", map_by, problem, MAP_BY_VALUES);
        }
        return HERD_SUCCESS;
    }
    if (0 == strcasecmp(word, "SPAN")) {
        policy->span = true;
        return HERD_SUCCESS;
    }
    bool allow = 0 == strcasecmp(word, "OVERSUBSCRIBE");
    bool forbid = 0 == strcasecmp(word, "NOOVERSUBSCRIBE");
    if (allow || forbid) {
        orte_rmaps_oversubscribe_t want =
            allow ? ORTE_RMAPS_OVERSUB_ALLOW : ORTE_RMAPS_OVERSUB_FORBID;
        if (ORTE_RMAPS_OVERSUB_DEFAULT != policy->oversubscribe && want != policy->oversubscribe) {
            return bad_value("--map-by", map_by,
                             "OVERSUBSCRIBE and NOOVERSUBSCRIBE contradict each other",
                             MAP_BY_VALUES);
        }
        policy->oversubscribe = want;
        return HERD_SUCCESS;
    }
    snprintf(problem, sizeof(problem), "\"%s\" is not a modifier", word);
    return bad_value("--map-by", map_by, problem, MAP_BY_VALUES);
}

static int parse_map_by(const char *map_by, orte_rmaps_policy_t *policy)
{
    char problem[256];
    size_t num_words = 0;
    size_t next = 1;
    int value;
    int rc = HERD_SUCCESS;
    char **words = split_words(map_by, &num_words);

    if (NULL == words) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (!lookup(mapping_words, words[0], &value)) {
        snprintf(problem, sizeof(problem), "\"%s\" is not a mapping policy", words[0]);
        rc = bad_value("--map-by", map_by, problem, MAP_BY_VALUES);
        goto out;
    }
    policy->mapping = (orte_rmaps_mapping_t) value;
    if (ORTE_RMAPS_MAP_PPR == policy->mapping) {
        if (num_words < 3 || !parse_count(words[1], &policy->ppr_count)) {
            rc = bad_value("--map-by", map_by,
                           "ppr needs a positive count and an object, as in ppr:2:package",
                           MAP_BY_VALUES);
            goto out;
        }
        if (!lookup(ppr_words, words[2], &value)) {
            snprintf(problem, sizeof(problem), "\"%s\" is not an object ppr can count", words[2]);
            rc = bad_value("--map-by", map_by, problem, MAP_BY_VALUES);
            goto out;
        }
        policy->ppr_object = (orte_rmaps_mapping_t) value;
        next = 3;
    }
    for (size_t i = next; i < num_words; ++i) {
        rc = parse_modifier(map_by, words[i], policy);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
    }
out:
    free_words(words);
    return rc;
}

int orte_rmaps_policy_parse(const char *map_by, const char *rank_by, const char *bind_to,
                            orte_rmaps_policy_t *policy)
{
    orte_rmaps_policy_t parsed = {0};
    char problem[256];
    int value;
    int rc;

    if (NULL != map_by && '\0' != map_by[0]) {
        rc = parse_map_by(map_by, &parsed);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    if (NULL != rank_by && '\0' != rank_by[0]) {
        if (!lookup(ranking_words, rank_by, &value)) {
            snprintf(problem, sizeof(problem), "\"%s\" is not a ranking policy", rank_by);
            return bad_value("--rank-by", rank_by, problem, RANK_BY_VALUES);
        }
        parsed.ranking = (orte_rmaps_ranking_t) value;
    }
    if (NULL != bind_to && '\0' != bind_to[0]) {
        if (!lookup(binding_words, bind_to, &value)) {
            snprintf(problem, sizeof(problem), "\"%s\" is not a binding policy", bind_to);
            return bad_value("--bind-to", bind_to, problem, BIND_TO_VALUES);
        }
        parsed.binding = (orte_rmaps_binding_t) value;
    }
    *policy = parsed;
    return HERD_SUCCESS;
}

/* The ranking and binding that follow a mapping object by default. */
static orte_rmaps_ranking_t ranking_for(orte_rmaps_mapping_t mapping)
{
    switch (mapping) {
    case ORTE_RMAPS_MAP_NODE:
        return ORTE_RMAPS_RANK_NODE;
    case ORTE_RMAPS_MAP_PACKAGE:
        return ORTE_RMAPS_RANK_PACKAGE;
    case ORTE_RMAPS_MAP_L3CACHE:
        return ORTE_RMAPS_RANK_L3CACHE;
    case ORTE_RMAPS_MAP_CORE:
        return ORTE_RMAPS_RANK_CORE;
    case ORTE_RMAPS_MAP_HWTHREAD:
        return ORTE_RMAPS_RANK_HWTHREAD;
    default:
        return ORTE_RMAPS_RANK_SLOT;
    }
}

static orte_rmaps_binding_t binding_for(orte_rmaps_mapping_t object, uint32_t job_np)
{
    switch (object) {
    case ORTE_RMAPS_MAP_PACKAGE:
        return ORTE_RMAPS_BIND_PACKAGE;
    case ORTE_RMAPS_MAP_L3CACHE:
        return ORTE_RMAPS_BIND_L3CACHE;
    case ORTE_RMAPS_MAP_CORE:
        return ORTE_RMAPS_BIND_CORE;
    case ORTE_RMAPS_MAP_HWTHREAD:
        return ORTE_RMAPS_BIND_HWTHREAD;
    default:
        /* slot, node, seq, ppr over nodes: Open MPI 4.1's rule for small and large jobs */
        return job_np <= 2 ? ORTE_RMAPS_BIND_CORE : ORTE_RMAPS_BIND_PACKAGE;
    }
}

void orte_rmaps_policy_resolve(const orte_rmaps_policy_t *policy, uint32_t job_np,
                               orte_rmaps_policy_t *resolved)
{
    orte_rmaps_policy_t r = *policy;

    if (ORTE_RMAPS_MAP_DEFAULT == r.mapping) {
        r.mapping = job_np <= 2 ? ORTE_RMAPS_MAP_CORE : ORTE_RMAPS_MAP_PACKAGE;
    }
    if (ORTE_RMAPS_RANK_DEFAULT == r.ranking) {
        r.ranking = ranking_for(r.mapping);
    }
    if (ORTE_RMAPS_BIND_DEFAULT == r.binding) {
        if (r.pe > 0) {
            /* PE=n: bound to exactly the n cpus it was given */
            bool threads =
                ORTE_RMAPS_MAP_HWTHREAD == r.mapping ||
                (ORTE_RMAPS_MAP_PPR == r.mapping && ORTE_RMAPS_MAP_HWTHREAD == r.ppr_object);
            r.binding = threads ? ORTE_RMAPS_BIND_HWTHREAD : ORTE_RMAPS_BIND_CORE;
        } else if (ORTE_RMAPS_MAP_PPR == r.mapping) {
            r.binding = binding_for(r.ppr_object, job_np);
        } else {
            r.binding = binding_for(r.mapping, job_np);
        }
    }
    *resolved = r;
}

void orte_rmaps_policy_string(const orte_rmaps_policy_t *policy, char *text, size_t size)
{
    char map_by[128];
    size_t len;

    if (ORTE_RMAPS_MAP_PPR == policy->mapping) {
        snprintf(map_by, sizeof(map_by), "ppr:%u:%s", policy->ppr_count,
                 orte_rmaps_mapping_name(policy->ppr_object));
    } else {
        snprintf(map_by, sizeof(map_by), "%s", orte_rmaps_mapping_name(policy->mapping));
    }
    len = strlen(map_by);
    if (policy->pe > 0) {
        len += (size_t) snprintf(map_by + len, sizeof(map_by) - len, ":PE=%u", policy->pe);
    }
    if (policy->span && len < sizeof(map_by)) {
        len += (size_t) snprintf(map_by + len, sizeof(map_by) - len, ":SPAN");
    }
    if (ORTE_RMAPS_OVERSUB_DEFAULT != policy->oversubscribe && len < sizeof(map_by)) {
        snprintf(map_by + len, sizeof(map_by) - len, ":%s",
                 ORTE_RMAPS_OVERSUB_ALLOW == policy->oversubscribe ? "OVERSUBSCRIBE"
                                                                   : "NOOVERSUBSCRIBE");
    }
    snprintf(text, size, "--map-by %s --rank-by %s --bind-to %s", map_by,
             orte_rmaps_ranking_name(policy->ranking), orte_rmaps_binding_name(policy->binding));
}
