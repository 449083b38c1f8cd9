/* SPDX-License-Identifier: BSD-3-Clause */
/* Node inventory: what a daemon finds on its node, and its wire format. */
#include "herd_config.h"

#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "opal/mca/fabric/base/base.h"
#include "opal/util/argv.h"
#include "opal/util/hash.h"
#include "opal/util/output.h"
#include "opal/util/topology.h"
#include "orte/util/inventory.h"

#define INVENTORY_FORMAT_VERSION 3u
#define INVENTORY_MAX_FABRIC 64u
#define INVENTORY_MAX_SESSION_URIS 1024u

/* A signature must not depend on anything but the topology's shape: the XML of a real machine
 * carries its host name, so hash the synthetic description when there is one, else the XML
 * with the HostName info left out. FNV-1a: fast, and collisions only cost a duplicate XML. */
static void signature_of(const char *text, char *out, size_t size)
{
    const char *skip = strstr(text, "name=\"HostName\"");
    const char *skip_end = (NULL != skip) ? strchr(skip, '/') : NULL;
    uint64_t hash = OPAL_HASH_FNV1A_INIT;
    if (NULL != skip_end) {
        hash = opal_hash_fnv1a_string(opal_hash_fnv1a(hash, text, (size_t) (skip - text)),
                                      skip_end);
    } else {
        hash = opal_hash_fnv1a_string(hash, text);
    }
    snprintf(out, size, "%016llx", (unsigned long long) hash);
}

static int load_topology(const char *synthetic, hwloc_topology_t *topology)
{
    if (NULL == synthetic) {
        return opal_topology_load_local(topology);
    }
    hwloc_topology_t topo;
    if (0 != hwloc_topology_init(&topo)) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != synthetic && 0 != hwloc_topology_set_synthetic(topo, synthetic)) {
        hwloc_topology_destroy(topo);
        return HERD_ERR_BAD_PARAM;
    }
    if (0 != hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return HERD_ERROR;
    }
    *topology = topo;
    return HERD_SUCCESS;
}

static int export_xml(hwloc_topology_t topology, char **xml_out)
{
    char *xml = NULL;
    int xml_len = 0;
    if (0 != hwloc_topology_export_xmlbuffer(topology, &xml, &xml_len, 0)) {
        return HERD_ERROR;
    }
    *xml_out = strdup(xml);
    hwloc_free_xmlbuffer(topology, xml);
    return NULL != *xml_out ? HERD_SUCCESS : HERD_ERR_OUT_OF_RESOURCE;
}

const char *orte_inventory_xml(orte_inventory_t *inv)
{
    hwloc_topology_t topology;
    if (NULL != inv->xml || NULL == inv->synthetic) {
        return inv->xml;
    }
    if (HERD_SUCCESS == load_topology(inv->synthetic, &topology)) {
        if (HERD_SUCCESS != export_xml(topology, &inv->xml)) {
            inv->xml = NULL;
        }
        hwloc_topology_destroy(topology);
    }
    return inv->xml;
}

static uint32_t count_type(hwloc_topology_t topology, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topology, type);
    return n > 0 ? (uint32_t) n : 0;
}

/* Open the fabric framework with only the components asked for: loading the others' libraries
 * (libfabric, UCX) is most of a fabric inventory's cost. A selection the user made wins. */
static int open_fabric(const char *components)
{
    if (0 != strcmp(components, "all") && !opal_fabric_base_framework.registered) {
        opal_fabric_base_framework.default_selection = components;
        /* the components left out are not even loaded: that is the saving */
        opal_fabric_base_framework.load_selected_only = true;
    }
    return opal_fabric_base_open();
}

/* The node's fabric records: from this boot's cache when nothing discovery sees changed (the
 * libraries' own start-up, libfabric's above all, is most of a DVM daemon's start on a real
 * node), else discovered and cached. */
static int collect_fabric(const char *components, orte_inventory_t *inv)
{
    if (HERD_SUCCESS == opal_fabric_base_cache_load(components, &inv->fabric, &inv->num_fabric)) {
        return HERD_SUCCESS;
    }
    int rc = open_fabric(components);
    if (HERD_SUCCESS == rc) {
        rc = opal_fabric_base_discover(&inv->fabric, &inv->num_fabric);
        opal_fabric_base_close();
        if (HERD_SUCCESS == rc) {
            opal_fabric_base_cache_store(components, inv->fabric, inv->num_fabric);
        }
    }
    /* no fabric component here: an inventory without fabric */
    return HERD_ERR_NOT_FOUND == rc ? HERD_SUCCESS : rc;
}

int orte_inventory_collect(const char *node_name, const char *synthetic,
                           const char *fabric_components, orte_inventory_t **inventory)
{
    hwloc_topology_t topology;
    char synth[1024];
    char sig[17];
    int rc = load_topology(synthetic, &topology);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    orte_inventory_t *inv = calloc(1, sizeof(*inv));
    if (NULL == inv) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto out_topology;
    }
    inv->num_packages = count_type(topology, HWLOC_OBJ_PACKAGE);
    inv->num_cores = count_type(topology, HWLOC_OBJ_CORE);
    inv->num_pus = count_type(topology, HWLOC_OBJ_PU);
    inv->slots = inv->num_cores > 0 ? inv->num_cores : inv->num_pus;
    inv->node_name = strdup(node_name);
    /* only a simulated node is described by its synthetic description (so nobody binds on
     * it); a real node's topology travels as XML */
    if (NULL != synthetic &&
        hwloc_topology_export_synthetic(topology, synth, sizeof(synth), 0) > 0) {
        inv->synthetic = strdup(synth);
    }
    /* a simulated node's XML is made when asked for (orte_inventory_xml): the root wants one
     * per distinct topology, and exporting it cost each of a thousand daemons a third of a ms */
    if (NULL == inv->synthetic) {
        rc = export_xml(topology, &inv->xml);
        if (HERD_SUCCESS != rc) {
            goto err_inventory;
        }
    }
    if (NULL == inv->node_name) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err_inventory;
    }
    signature_of(NULL != inv->synthetic ? inv->synthetic : inv->xml, sig, sizeof(sig));
    inv->signature = strdup(sig);
    if (NULL == inv->signature) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err_inventory;
    }
    if (NULL != fabric_components) {
        rc = collect_fabric(fabric_components, inv);
        if (HERD_SUCCESS != rc) {
            goto err_inventory;
        }
    }
    *inventory = inv;
    goto out_topology;

err_inventory:
    orte_inventory_free(inv);
out_topology:
    hwloc_topology_destroy(topology);
    return rc;
}

void orte_inventory_free(orte_inventory_t *inventory)
{
    if (NULL == inventory) {
        return;
    }
    free(inventory->node_name);
    free(inventory->signature);
    free(inventory->synthetic);
    free(inventory->xml);
    opal_fabric_records_free(inventory->fabric, inventory->num_fabric);
    opal_argv_free(inventory->session_uris);
    free(inventory);
}

/* The session URIs differ only in their ports ("tcp://10.0.0.1:40123", ...), and every daemon
 * receives every node's inventory: their common prefix once, then the rest of each, NUL-ended,
 * as one byte string (8 URIs: 66 bytes instead of 213; a simulated node's inventory 40% less). */
static int pack_session_uris(opal_buffer_t *buffer, char *const *uris)
{
    size_t count = opal_argv_count(uris);
    size_t prefix = (count > 0) ? strlen(uris[0]) : 0;
    size_t total = 0;
    for (size_t i = 1; i < count; ++i) {
        size_t same = 0;
        while (same < prefix && uris[i][same] == uris[0][same]) {
            ++same;
        }
        prefix = same;
    }
    for (size_t i = 0; i < count; ++i) {
        total += strlen(uris[i]) - prefix + 1;
    }
    char *rest = malloc(total + 1);
    char *head = strndup(count > 0 ? uris[0] : "", prefix);
    int rc = (NULL == rest || NULL == head) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    for (size_t i = 0, at = 0; HERD_SUCCESS == rc && i < count; ++i) {
        size_t len = strlen(uris[i]) - prefix + 1;
        memcpy(rest + at, uris[i] + prefix, len);
        at += len;
    }
    if (HERD_SUCCESS == rc &&
        HERD_SUCCESS == (rc = opal_buffer_pack_uint32(buffer, (uint32_t) count)) &&
        HERD_SUCCESS == (rc = opal_buffer_pack_string(buffer, head))) {
        rc = opal_buffer_pack_bytes(buffer, rest, total);
    }
    free(rest);
    free(head);
    return rc;
}

/* Whether head and the rests are what pack_session_uris writes: head the longest common prefix
 * (empty when there is no URI; the whole URI when there is one), so that the rests do not all
 * begin with the same byte. rest holds count NUL-ended strings, len bytes in all. */
static bool session_uris_canonical(const char *head, const char *rest, size_t len, uint32_t count)
{
    if (NULL == head) {
        return false;
    }
    if (count < 2) {
        return 0 == count ? '\0' == head[0] : 1 == len;
    }
    for (size_t at = 0; at < len; at += strlen(rest + at) + 1) {
        if ('\0' == rest[at] || rest[at] != rest[0]) {
            return true;
        }
    }
    return false;
}

/* The other side of pack_session_uris: exactly count NUL-ended rests, or a malformed message. */
static int unpack_session_uris(opal_buffer_t *buffer, char ***uris)
{
    uint32_t count = 0;
    char *head = NULL;
    char *rest = NULL;
    size_t len = 0;
    int rc = opal_buffer_unpack_uint32(buffer, &count);
    if (HERD_SUCCESS == rc && count > INVENTORY_MAX_SESSION_URIS) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_string(buffer, &head);
    }
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_unpack_bytes(buffer, (void **) &rest, &len);
    }
    if (HERD_SUCCESS == rc && (0 == count) != (0 == len)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    size_t at = 0;
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < count; ++i) {
        const char *end = (at < len) ? memchr(rest + at, '\0', len - at) : NULL;
        char uri[1024];
        if (NULL == end || (size_t) snprintf(uri, sizeof(uri), "%s%s", NULL != head ? head : "",
                                             rest + at) >= sizeof(uri)) {
            rc = HERD_ERR_UNPACK_FAILURE;
            break;
        }
        rc = opal_argv_append(uris, uri);
        at = (size_t) (end - rest) + 1;
    }
    if (HERD_SUCCESS == rc && at != len) {
        rc = HERD_ERR_UNPACK_FAILURE; /* more rests than URIs */
    }
    if (HERD_SUCCESS == rc && !session_uris_canonical(head, rest, len, count)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    free(head);
    free(rest);
    return rc;
}

int orte_inventory_pack(opal_buffer_t *buffer, const orte_inventory_t *inv, bool with_xml)
{
    int rc;
    /* stops at the first failure, whose status is then in rc */
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, INVENTORY_FORMAT_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, inv->node_name)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, inv->slots)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, inv->num_packages)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, inv->num_cores)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, inv->num_pus)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, inv->signature)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, inv->synthetic)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, with_xml ? inv->xml : NULL)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, (uint32_t) inv->num_fabric))) {
        return rc;
    }
    for (size_t i = 0; i < inv->num_fabric; ++i) {
        rc = opal_fabric_record_pack(buffer, inv->fabric[i]);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return pack_session_uris(buffer, inv->session_uris);
}

int orte_inventory_unpack(opal_buffer_t *buffer, orte_inventory_t **inventory)
{
    uint32_t version = 0, num_fabric = 0;
    int rc = opal_buffer_unpack_uint32(buffer, &version);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if (INVENTORY_FORMAT_VERSION != version) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    orte_inventory_t *inv = calloc(1, sizeof(*inv));
    if (NULL == inv) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (HERD_SUCCESS == (rc = opal_buffer_unpack_string(buffer, &inv->node_name)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(buffer, &inv->slots)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(buffer, &inv->num_packages)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(buffer, &inv->num_cores)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_uint32(buffer, &inv->num_pus)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_string(buffer, &inv->signature)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_string(buffer, &inv->synthetic)) &&
        HERD_SUCCESS == (rc = opal_buffer_unpack_string(buffer, &inv->xml))) {
        rc = opal_buffer_unpack_uint32(buffer, &num_fabric);
    }
    if (HERD_SUCCESS == rc && (NULL == inv->node_name || NULL == inv->signature ||
                               num_fabric > INVENTORY_MAX_FABRIC)) {
        rc = HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS == rc && num_fabric > 0) {
        inv->fabric = calloc(num_fabric, sizeof(*inv->fabric));
        rc = (NULL == inv->fabric) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
    }
    for (uint32_t i = 0; HERD_SUCCESS == rc && i < num_fabric; ++i) {
        rc = opal_fabric_record_unpack(buffer, &inv->fabric[i]);
        if (HERD_SUCCESS == rc) {
            inv->num_fabric++;
        }
    }
    if (HERD_SUCCESS == rc) {
        rc = unpack_session_uris(buffer, &inv->session_uris);
    }
    if (HERD_SUCCESS != rc) {
        orte_inventory_free(inv);
        return rc;
    }
    *inventory = inv;
    return HERD_SUCCESS;
}

void orte_inventory_summary(const orte_inventory_t *inv, char *text, size_t size)
{
    snprintf(text, size, "%u package%s, %u cores, %u hwthreads", inv->num_packages,
             1 == inv->num_packages ? "" : "s", inv->num_cores, inv->num_pus);
}
