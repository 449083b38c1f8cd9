/* SPDX-License-Identifier: BSD-3-Clause */
/* A daemon's bootstrap: the KEY=VALUE settings (orte/mca/plm/plm.h's ORTE_BOOT_*) its parent
 * builds for it, and how the daemon reads them back from its environment or from stdin lines;
 * binary values (the secret, a tree spawn's allocation) travel as hex. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"
#include "orte/util/radix.h"

/* ------------------------------------------------------------------------------------------ */
/* hex */

void dvm_hex_encode(const uint8_t *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * len] = '\0';
}

static int hex_decode(const char *text, uint8_t *bytes, size_t len)
{
    if (NULL == text || strlen(text) != 2 * len) {
        return HERD_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < len; ++i) {
        unsigned int value;
        if (1 != sscanf(text + 2 * i, "%2x", &value)) {
            return HERD_ERR_BAD_PARAM;
        }
        bytes[i] = (uint8_t) value;
    }
    return HERD_SUCCESS;
}

char *dvm_boot_allocation_hex(const orte_allocation_t *allocation)
{
    opal_buffer_t buffer;
    char *hex = NULL;
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == orte_allocation_pack(&buffer, allocation)) {
        hex = malloc(2 * buffer.used + 1);
        if (NULL != hex) {
            dvm_hex_encode(buffer.base, buffer.used, hex);
        }
    }
    opal_buffer_destruct(&buffer);
    return hex;
}

static int allocation_from_hex(const char *hex, orte_allocation_t **allocation)
{
    size_t len = (NULL != hex) ? strlen(hex) / 2 : 0;
    uint8_t *bytes = malloc(len + 1);
    opal_buffer_t buffer;
    int rc = (NULL == bytes) ? HERD_ERR_OUT_OF_RESOURCE : hex_decode(hex, bytes, len);
    opal_buffer_init(&buffer);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_load(&buffer, bytes, len);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_allocation_unpack(&buffer, allocation);
    }
    opal_buffer_destruct(&buffer);
    free(bytes);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the parent's side: building it */

static bool want_fabric(const orte_dvm_t *dvm, const orte_node_t *node)
{
    if (0 == strcmp(dvm->vars->fabric_inventory, "all")) {
        return true;
    }
    if (0 == strcmp(dvm->vars->fabric_inventory, "none")) {
        return false;
    }
    return NULL == node->topology; /* auto: real nodes report theirs */
}

static int boot_set(char ***boot, const char *key, const char *value)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *entry = malloc(len);
    if (NULL == entry) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    snprintf(entry, len, "%s=%s", key, value);
    int rc = opal_argv_append(boot, entry);
    free(entry);
    return rc;
}

/* For a tree spawn the daemon also gets the launcher's name, the allocation and the daemon
 * path, to start its own children. */
char *dvm_boot_ancestors(const orte_dvm_t *dvm, orte_vpid_t vpid,
                         const char *(*uri_of)(const orte_dvm_t *dvm, orte_vpid_t v, void *arg),
                         void *arg)
{
    char **entries = NULL;
    int rc = HERD_SUCCESS;
    orte_vpid_t parent = orte_radix_parent(vpid, dvm->radix);
    for (orte_vpid_t a = orte_radix_parent(parent, dvm->radix);
         ORTE_VPID_INVALID != a && HERD_SUCCESS == rc; a = orte_radix_parent(a, dvm->radix)) {
        const char *uri = uri_of(dvm, a, arg);
        char entry[320]; /* a vpid, "=" and a URI (at most 255 bytes) */
        snprintf(entry, sizeof(entry), "%u=%s", a, NULL != uri ? uri : "");
        rc = opal_argv_append(&entries, entry);
    }
    if (HERD_SUCCESS != rc) {
        opal_argv_free(entries);
        return NULL;
    }
    char *joined = (NULL != entries) ? opal_argv_join(entries, ' ') : strdup("");
    opal_argv_free(entries);
    return joined;
}

int dvm_boot_build(const orte_dvm_t *dvm, orte_plm_daemon_t *d, const char *parent_uri,
                   const char *ancestors, const char *allocation_hex)
{
    const orte_plm_module_t *plm = dvm->tree.plm;
    char secret_hex[2 * ORTE_DVM_SECRET_LEN + 1];
    char number[32];
    char ***boot = &d->boot;
    int rc;
    dvm_hex_encode(dvm->secret, sizeof(dvm->secret), secret_hex);
    if (HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_DVM_ID, dvm->id)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_SECRET, secret_hex)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_NODE, d->node->name)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_PARENT_URI, parent_uri)) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_ANCESTORS, ancestors)) ||
        HERD_SUCCESS !=
            (rc = boot_set(boot, ORTE_BOOT_ON_LOSS, dvm->survive_loss ? "continue" : "stop")) ||
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_FABRIC,
                                       want_fabric(dvm, d->node)
                                           ? dvm_fabric_components_of(dvm->vars->fabric_components)
                                           : "0"))) {
        return rc;
    }
    const struct {
        const char *key;
        uint32_t value;
    } numbers[] = {
        {ORTE_BOOT_VPID, d->vpid}, {ORTE_BOOT_SIZE, dvm->size}, {ORTE_BOOT_RADIX, dvm->radix}};
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); ++i) {
        snprintf(number, sizeof(number), "%u", numbers[i].value);
        if (HERD_SUCCESS != (rc = boot_set(boot, numbers[i].key, number))) {
            return rc;
        }
    }
    if (NULL != d->node->topology &&
        HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_TOPOLOGY, d->node->topology))) {
        return rc;
    }
    if (d->listen_fd >= 0) {
        snprintf(number, sizeof(number), "%d", d->listen_fd);
        if (HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_LISTEN_FD, number))) {
            return rc;
        }
    }
    /* the user's MCA settings (and where herd is installed) apply to every daemon; ssh does
     * not carry the environment */
    extern char **environ;
    for (char **e = environ; NULL != *e; ++e) {
        if ((0 == strncmp(*e, "HERD_MCA_", 9) || 0 == strncmp(*e, "HERD_HELP_PATH=", 15) ||
             0 == strncmp(*e, "HERD_PREFIX=", 12)) &&
            HERD_SUCCESS != (rc = opal_argv_append(boot, *e))) {
            return rc;
        }
    }
    if (plm->tree_spawn &&
        (HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_PLM, plm->name)) ||
         HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_ALLOCATION, allocation_hex)) ||
         HERD_SUCCESS != (rc = boot_set(boot, ORTE_BOOT_HERDD, dvm->tree.herdd)))) {
        return rc;
    }
    return HERD_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* the daemon's side: reading it. These messages stay raw: they only appear when herdd is
 * started by hand, and may come before HERD_HELP_PATH is read from stdin. */

/* `herdd --bootstrap-stdin`: KEY=VALUE lines up to an empty line or EOF become environment
 * variables (ssh cannot be trusted to pass the environment, and argv is public). */
static int read_stdin_lines(void)
{
    char line[8192];
    while (NULL != fgets(line, sizeof(line), stdin)) {
        size_t len = strlen(line);
        while (len > 0 && ('\n' == line[len - 1] || '\r' == line[len - 1])) {
            line[--len] = '\0';
        }
        if (0 == len) {
            return HERD_SUCCESS;
        }
        char *eq = strchr(line, '=');
        if (NULL == eq || eq == line) {
            fprintf(stderr, "herdd: malformed bootstrap line (expected KEY=VALUE)\n");
            return HERD_ERR_BAD_PARAM;
        }
        *eq = '\0';
        setenv(line, eq + 1, 1);
    }
    return HERD_SUCCESS;
}

static int boot_uint(const char *key, uint32_t *value)
{
    const char *text = getenv(key);
    char *end = NULL;
    unsigned long v = (NULL != text) ? strtoul(text, &end, 10) : 0;
    if (NULL == text || '\0' == text[0] || NULL == end || '\0' != *end || v > UINT32_MAX) {
        fprintf(stderr,
                "herdd: %s is missing or not a number; herdd is started by herd-dvm or "
                "herdrun, not by hand\n",
                key);
        return HERD_ERR_BAD_PARAM;
    }
    *value = (uint32_t) v;
    return HERD_SUCCESS;
}

/* Started by srun: one bootstrap for all, the rank and the node come from Slurm. */
static void resolve_slurm_placeholders(void)
{
    const char *boot_vpid = getenv(ORTE_BOOT_VPID);
    if (NULL != boot_vpid && 0 == strcmp(boot_vpid, "slurm")) {
        const char *procid = getenv("SLURM_PROCID");
        char vpid_text[32];
        snprintf(vpid_text, sizeof(vpid_text), "%lu",
                 (NULL != procid) ? strtoul(procid, NULL, 10) + 1 : 0ul);
        setenv(ORTE_BOOT_VPID, vpid_text, 1);
    }
    const char *boot_node = getenv(ORTE_BOOT_NODE);
    if (NULL != boot_node && 0 == strcmp(boot_node, "slurm")) {
        const char *slurm_node = getenv("SLURMD_NODENAME");
        char host[256] = "";
        if (NULL == slurm_node && 0 == gethostname(host, sizeof(host) - 1)) {
            slurm_node = host;
        }
        setenv(ORTE_BOOT_NODE, NULL != slurm_node ? slurm_node : "unknown", 1);
    }
}

int dvm_boot_read(orte_dvm_t *dvm, bool bootstrap_stdin, dvm_boot_t *boot)
{
    if (bootstrap_stdin && HERD_SUCCESS != read_stdin_lines()) {
        return HERD_ERR_BAD_PARAM;
    }
    resolve_slurm_placeholders();
    boot->node = getenv(ORTE_BOOT_NODE);
    boot->parent_uri = getenv(ORTE_BOOT_PARENT_URI);
    boot->listen_fd = UINT32_MAX;
    const char *fabric = getenv(ORTE_BOOT_FABRIC);
    dvm->id = getenv(ORTE_BOOT_DVM_ID);
    if (HERD_SUCCESS != boot_uint(ORTE_BOOT_VPID, &dvm->vpid) ||
        HERD_SUCCESS != boot_uint(ORTE_BOOT_SIZE, &dvm->size) ||
        HERD_SUCCESS != boot_uint(ORTE_BOOT_RADIX, &dvm->radix)) {
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL == dvm->id || NULL == boot->node || NULL == boot->parent_uri || 0 == dvm->vpid ||
        dvm->vpid >= dvm->size || 0 == dvm->radix ||
        HERD_SUCCESS != hex_decode(getenv(ORTE_BOOT_SECRET), dvm->secret, sizeof(dvm->secret))) {
        fprintf(stderr, "herdd: incomplete bootstrap (DVM id, node, parent, vpid or secret); "
                        "herdd is started by herd-dvm or herdrun, not by hand\n");
        return HERD_ERR_BAD_PARAM;
    }
    if (NULL != getenv(ORTE_BOOT_LISTEN_FD) &&
        HERD_SUCCESS != boot_uint(ORTE_BOOT_LISTEN_FD, &boot->listen_fd)) {
        return HERD_ERR_BAD_PARAM;
    }
    /* the secret has done its job in the environment: children must not inherit it, and
     * other users must not read it in /proc/PID/environ (the environment block as exec made
     * it, which unsetenv leaves as it was): wipe the bytes there too */
    char *secret = getenv(ORTE_BOOT_SECRET);
    unsetenv(ORTE_BOOT_SECRET);
    if (NULL != secret) {
        char *entry = secret - strlen(ORTE_BOOT_SECRET "=");
        memset(entry, 0, strlen(entry));
    }
    /* "0": no fabric inventory; "1" (an older root): every component; else which ones */
    boot->fabric_components = (NULL == fabric || 0 == strcmp(fabric, "0")) ? NULL
                              : (0 == strcmp(fabric, "1"))                 ? "all"
                                                                           : fabric;
    boot->topology = getenv(ORTE_BOOT_TOPOLOGY);
    boot->plm_name = getenv(ORTE_BOOT_PLM);
    boot->ancestors = getenv(ORTE_BOOT_ANCESTORS);
    boot->on_loss = getenv(ORTE_BOOT_ON_LOSS);
    dvm->survive_loss = NULL != boot->on_loss && 0 == strcmp(boot->on_loss, "continue");
    return HERD_SUCCESS;
}

int dvm_boot_read_tree_spawn(orte_dvm_t *dvm, const dvm_boot_t *boot)
{
    /* start the children with the same launcher */
    setenv("HERD_MCA_plm", boot->plm_name, 1);
    if (HERD_SUCCESS != allocation_from_hex(getenv(ORTE_BOOT_ALLOCATION), &dvm->allocation) ||
        dvm->allocation->num_nodes + 1 != dvm->size || NULL == getenv(ORTE_BOOT_HERDD)) {
        opal_show_help(DVM_HELP_FILE, "boot-allocation-malformed", false, dvm->vpid);
        return HERD_ERR_BAD_PARAM;
    }
    dvm->tree.herdd = strdup(getenv(ORTE_BOOT_HERDD));
    return HERD_SUCCESS;
}
