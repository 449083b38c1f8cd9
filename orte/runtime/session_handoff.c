/* SPDX-License-Identifier: BSD-3-Clause */
/* The segment a node's daemon gives a job's session daemon (orte/runtime/session_handoff.h):
 * packed and written on one side, read and parsed on the other. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/fd.h"
#include "orte/runtime/session_handoff.h"

int orte_session_handoff_pack(opal_buffer_t *buffer, const char *node_name, uint32_t my_candidate,
                              const void *launch, size_t launch_len,
                              const uint8_t *const *inventories, const size_t *lengths,
                              uint32_t num_candidates, const char *signature, const char *xml)
{
    char *pair[3] = {(char *) signature, (char *) (NULL != xml ? xml : ""), NULL};
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, ORTE_SESSION_SEGMENT_VERSION)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_string(buffer, node_name)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, my_candidate)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_bytes(buffer, launch, launch_len)) ||
        HERD_SUCCESS != (rc = opal_buffer_pack_uint32(buffer, num_candidates))) {
        return rc;
    }
    for (uint32_t c = 0; c < num_candidates; ++c) {
        if (HERD_SUCCESS != (rc = opal_buffer_pack_bytes(buffer, inventories[c], lengths[c]))) {
            return rc;
        }
    }
    return opal_buffer_pack_string_array(buffer, pair, 2);
}

int orte_session_handoff_write(const char *name, const opal_buffer_t *segment)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    int rc = opal_fd_write_all(fd, segment->base, segment->used);
    if (HERD_SUCCESS != rc) {
        int saved = errno;
        close(fd);
        shm_unlink(name);
        errno = saved;
        return rc;
    }
    close(fd);
    return HERD_SUCCESS;
}

int orte_session_handoff_read(const char *name, opal_buffer_t *buffer)
{
    int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    /* ours from now on: gone even if we are killed the next moment */
    shm_unlink(name);
    struct stat st;
    int rc = HERD_ERR_IN_ERRNO;
    if (0 == fstat(fd, &st) && st.st_size > 0) {
        void *map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (MAP_FAILED != map) {
            rc = opal_buffer_load(buffer, map, (size_t) st.st_size);
            munmap(map, (size_t) st.st_size);
        }
    }
    close(fd);
    return rc;
}

/* The launch message the segment carries, as bytes in it. */
static int parse_launch(opal_buffer_t *buffer, orte_job_launch_t **launch)
{
    void *bytes = NULL;
    size_t len = 0;
    opal_buffer_t launch_buffer;
    int rc = opal_buffer_unpack_bytes(buffer, &bytes, &len);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    opal_buffer_init(&launch_buffer);
    rc = opal_buffer_load(&launch_buffer, bytes, len);
    if (HERD_SUCCESS == rc) {
        rc = orte_job_launch_unpack(&launch_buffer, UINT32_MAX, launch);
    }
    opal_buffer_destruct(&launch_buffer);
    free(bytes);
    return rc;
}

static int parse_inventory(opal_buffer_t *buffer, orte_inventory_t **inventory)
{
    void *blob = NULL;
    size_t len = 0;
    opal_buffer_t inv;
    int rc = opal_buffer_unpack_bytes(buffer, &blob, &len);
    opal_buffer_init(&inv);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_load(&inv, blob, len);
    }
    if (HERD_SUCCESS == rc) {
        rc = orte_inventory_unpack(&inv, inventory);
    }
    opal_buffer_destruct(&inv);
    free(blob);
    return rc;
}

int orte_session_handoff_parse(opal_buffer_t *buffer, orte_session_handoff_t *out)
{
    orte_session_handoff_t h = {0};
    uint32_t version = 0, num_candidates = 0;
    char **own_xml = NULL;
    size_t num_own = 0;
    int rc;
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &version))) {
        return rc;
    }
    if (ORTE_SESSION_SEGMENT_VERSION != version) {
        return HERD_ERR_VERSION_MISMATCH;
    }
    if (HERD_SUCCESS != (rc = opal_buffer_unpack_string(buffer, &h.node_name)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &h.my_candidate)) ||
        HERD_SUCCESS != (rc = parse_launch(buffer, &h.launch)) ||
        HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(buffer, &num_candidates))) {
        goto err;
    }
    if (NULL == h.node_name || num_candidates != h.launch->num_candidates ||
        h.my_candidate >= num_candidates) {
        rc = HERD_ERR_UNPACK_FAILURE;
        goto err;
    }
    h.inventories = calloc(num_candidates, sizeof(*h.inventories));
    if (NULL == h.inventories) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
        goto err;
    }
    for (uint32_t c = 0; c < num_candidates; ++c) {
        if (HERD_SUCCESS != (rc = parse_inventory(buffer, &h.inventories[c]))) {
            goto err;
        }
    }
    /* this node's own topology: the mapper finds it among the pairs it already searches */
    rc = opal_buffer_unpack_string_array(buffer, &own_xml, &num_own);
    if (HERD_SUCCESS == rc && 2 == num_own && NULL != own_xml[0] && NULL != own_xml[1]) {
        opal_argv_append(&h.launch->xml_pairs, own_xml[0]);
        opal_argv_append(&h.launch->xml_pairs, own_xml[1]);
    }
    for (size_t i = 0; i < num_own; ++i) {
        free(own_xml[i]);
    }
    free(own_xml);
    if (HERD_SUCCESS != rc) {
        goto err;
    }
    *out = h;
    return HERD_SUCCESS;
err:
    orte_session_handoff_destruct(&h);
    return rc;
}

void orte_session_handoff_destruct(orte_session_handoff_t *h)
{
    for (uint32_t c = 0; NULL != h->inventories && c < h->launch->num_candidates; ++c) {
        orte_inventory_free(h->inventories[c]);
    }
    free(h->inventories);
    orte_job_launch_free(h->launch);
    free(h->node_name);
    memset(h, 0, sizeof(*h));
}
