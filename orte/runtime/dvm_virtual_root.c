/* SPDX-License-Identifier: BSD-3-Clause */
/* The root's launch of simulated nodes hosted many to a process (ras_simulator_nodes_per_process
 * above 1): each node gets a loopback address of its own and the DVM's common port, so every
 * node's URI, and so its parent's and ancestors', is known without listing them; the listeners
 * are bound here before the process hosting them starts, so a node never connects to a parent
 * that is not listening yet (processes start in vpid order, and parents have lower vpids). */
#include "herd_config.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/show_help.h"
#include "orte/runtime/dvm_internal.h"

void dvm_virtual_uri(orte_vpid_t vpid, uint16_t port, char *uri, size_t size)
{
    /* 127.1.0.0 and up: 127.0.0.1 stays the host's own */
    snprintf(uri, size, "tcp://127.%u.%u.%u:%u", 1u + (vpid >> 16), (vpid >> 8) & 255u, vpid & 255u,
             (unsigned) port);
}

bool dvm_virtual_wanted(const orte_dvm_t *dvm)
{
    const orte_plm_module_t *plm = dvm->tree.plm;
    return NULL != plm && plm->prebinds_listeners && !plm->tree_spawn && NULL != dvm->allocation &&
           dvm->allocation->nodes_per_process > 1 && dvm->size > 2;
}

static void virtual_addr(orte_vpid_t vpid, uint16_t port, struct sockaddr_in *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->sin_family = AF_INET;
    addr->sin_port = htons(port);
    addr->sin_addr.s_addr = htonl((127u << 24) | ((1u + (vpid >> 16)) << 16) | (vpid & 0xffffu));
}

/* The common ports (the overlay's, then one per session slot): each bound (not listening) on
 * 127.0.0.1 for the DVM's life, so that no other program takes it on the wildcard address
 * meanwhile. */
static int reserve_ports(orte_dvm_t *dvm, uint16_t *ports, size_t count)
{
    dvm->tree.virtual_port_fds = malloc(count * sizeof(*dvm->tree.virtual_port_fds));
    if (NULL == dvm->tree.virtual_port_fds) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < count; ++i) {
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
        socklen_t len = sizeof(addr);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return HERD_ERR_IN_ERRNO;
        }
        if (0 != bind(fd, (struct sockaddr *) &addr, sizeof(addr)) ||
            0 != getsockname(fd, (struct sockaddr *) &addr, &len)) {
            int saved = errno;
            close(fd);
            errno = saved;
            return HERD_ERR_IN_ERRNO;
        }
        dvm->tree.virtual_port_fds[dvm->tree.num_virtual_port_fds++] = fd;
        ports[i] = ntohs(addr.sin_port);
    }
    return HERD_SUCCESS;
}

static int bind_node(orte_vpid_t vpid, uint16_t port, int *fd_out)
{
    struct sockaddr_in addr;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    virtual_addr(vpid, port, &addr);
    /* a previous DVM's connections on this address may linger in TIME_WAIT */
    (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (0 != bind(fd, (struct sockaddr *) &addr, sizeof(addr)) || 0 != listen(fd, 128)) {
        int saved = errno;
        close(fd);
        errno = saved;
        return HERD_ERR_IN_ERRNO;
    }
    *fd_out = fd;
    return HERD_SUCCESS;
}

static int append_entry(char ***boot, const char *key, const char *value)
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

/* The lists a hosting process reads: its nodes' names, their distinct topologies and which
 * each node has, and each node's listener. */
static int build_lists(const orte_dvm_t *dvm, orte_plm_daemon_t *d, uint32_t count,
                       uint32_t stride, const int *fds, const uint16_t *ports)
{
    char **names = NULL, **topologies = NULL, **kinds = NULL, **fd_list = NULL;
    char number[32];
    int rc = HERD_SUCCESS;
    for (uint32_t i = 0; i < count && HERD_SUCCESS == rc; ++i) {
        const orte_node_t *node = &dvm->allocation->nodes[d->vpid - 1 + i * stride];
        const char *topology = NULL != node->topology ? node->topology : "";
        uint32_t kind = 0;
        while (NULL != topologies && NULL != topologies[kind] &&
               0 != strcmp(topologies[kind], topology)) {
            kind++;
        }
        if (NULL == topologies || NULL == topologies[kind]) {
            rc = opal_argv_append(&topologies, topology);
        }
        snprintf(number, sizeof(number), "%u", kind);
        if (HERD_SUCCESS == rc) {
            rc = opal_argv_append(&kinds, number);
        }
        snprintf(number, sizeof(number), "%d", fds[i]);
        if (HERD_SUCCESS == rc) {
            rc = opal_argv_append(&fd_list, number);
        }
        if (HERD_SUCCESS == rc) {
            rc = opal_argv_append(&names, node->name);
        }
    }
    char *joined[4] = {NULL, NULL, NULL, NULL};
    if (HERD_SUCCESS == rc) {
        joined[0] = opal_argv_join(names, ',');
        joined[1] = opal_argv_join(topologies, ';');
        joined[2] = opal_argv_join(kinds, ',');
        joined[3] = opal_argv_join(fd_list, ',');
        rc = (NULL != joined[0] && NULL != joined[1] && NULL != joined[2] && NULL != joined[3])
                 ? HERD_SUCCESS
                 : HERD_ERR_OUT_OF_RESOURCE;
    }
    snprintf(number, sizeof(number), "%u", count);
    if (HERD_SUCCESS == rc) {
        rc = append_entry(&d->boot, DVM_BOOT_VIRTUAL_COUNT, number);
    }
    snprintf(number, sizeof(number), "%u", stride);
    if (HERD_SUCCESS == rc) {
        rc = append_entry(&d->boot, DVM_BOOT_VIRTUAL_STRIDE, number);
    }
    snprintf(number, sizeof(number), "%u", (unsigned) ports[0]);
    if (HERD_SUCCESS == rc) {
        rc = append_entry(&d->boot, DVM_BOOT_VIRTUAL_PORT, number);
    }
    char session_ports[16 * 1024 + 8] = "";
    for (int s = 0; s < dvm->vars->session_slots; ++s) {
        size_t used = strlen(session_ports);
        snprintf(session_ports + used, sizeof(session_ports) - used, "%s%u", 0 == s ? "" : ",",
                 (unsigned) ports[1 + s]);
    }
    if (HERD_SUCCESS == rc) {
        rc = append_entry(&d->boot, DVM_BOOT_VIRTUAL_SESSION_PORTS, session_ports);
    }
    const char *keys[4] = {DVM_BOOT_VIRTUAL_NODES, DVM_BOOT_VIRTUAL_TOPOLOGIES,
                           DVM_BOOT_VIRTUAL_KINDS, DVM_BOOT_VIRTUAL_FDS};
    for (int k = 0; k < 4 && HERD_SUCCESS == rc; ++k) {
        rc = append_entry(&d->boot, keys[k], joined[k]);
    }
    for (int k = 0; k < 4; ++k) {
        free(joined[k]);
    }
    opal_argv_free(names);
    opal_argv_free(topologies);
    opal_argv_free(kinds);
    opal_argv_free(fd_list);
    return rc;
}

/* Every node's listener, before any process starts: a process's nodes have their parents in
 * every other process. */
static int bind_all(orte_dvm_t *dvm, uint16_t port, int *fds)
{
    for (orte_vpid_t v = 1; v < dvm->size; ++v) {
        if (HERD_SUCCESS != bind_node(v, port, &fds[v - 1])) {
            char uri[64];
            dvm_virtual_uri(v, port, uri, sizeof(uri));
            opal_show_help(DVM_HELP_FILE, "virtual-bind-failed", true, dvm_tree_node_name(dvm, v),
                           uri, strerror(errno));
            return HERD_ERR_SILENT;
        }
    }
    return HERD_SUCCESS;
}

/* One hosting process, for vpids first, first + stride, ...: start it, close our copies of its
 * nodes' listeners. */
static int launch_group(orte_dvm_t *dvm, orte_plm_daemon_t *d, uint32_t count, uint32_t stride,
                        const uint16_t *ports, int *fds, int *group_fds)
{
    for (uint32_t i = 0; i < count; ++i) {
        group_fds[i] = fds[d->vpid - 1 + i * stride];
    }
    int rc = dvm_boot_build(dvm, d, dvm->uri, "", NULL);
    if (HERD_SUCCESS == rc) {
        rc = build_lists(dvm, d, count, stride, group_fds, ports);
    }
    if (HERD_SUCCESS == rc) {
        d->inherit_fds = group_fds;
        d->num_inherit_fds = count;
        rc = dvm->tree.plm->launch(d, 1, dvm->tree.herdd);
        if (HERD_SUCCESS != rc) {
            int saved = errno;
            opal_show_help(DVM_HELP_FILE, "launch-failed", true, d->node->name, dvm->tree.plm->name,
                           dvm->tree.herdd,
                           HERD_ERR_IN_ERRNO == rc ? strerror(saved) : opal_strerror(rc));
            rc = HERD_ERR_SILENT;
        }
        d->inherit_fds = NULL;
        d->num_inherit_fds = 0;
    }
    for (uint32_t i = 0; i < count; ++i) {
        close(fds[d->vpid - 1 + i * stride]);
        fds[d->vpid - 1 + i * stride] = -1;
    }
    return rc;
}

/* Process g hosts vpids g+1, g+1+G, g+1+2G, ... (G processes): the tree's inner daemons, and
 * so the connections to their children, are spread over every process instead of crowding the
 * first one's descriptors. */
int dvm_virtual_launch(orte_dvm_t *dvm)
{
    uint32_t per = dvm->allocation->nodes_per_process;
    uint32_t nodes = dvm->size - 1;
    uint32_t groups = (nodes + per - 1) / per;
    size_t num_ports = 1 + (size_t) dvm->vars->session_slots;
    uint16_t *ports = calloc(num_ports, sizeof(*ports));
    int rc = NULL != ports ? reserve_ports(dvm, ports, num_ports) : HERD_ERR_OUT_OF_RESOURCE;
    if (HERD_ERR_IN_ERRNO == rc) {
        opal_show_help(DVM_HELP_FILE, "virtual-port-failed", true, strerror(errno));
        rc = HERD_ERR_SILENT;
    }
    int *fds = malloc(nodes * sizeof(*fds));
    int *group_fds = malloc(per * sizeof(*group_fds));
    dvm->tree.launched = calloc(groups, sizeof(*dvm->tree.launched));
    if (HERD_SUCCESS == rc && (NULL == fds || NULL == group_fds || NULL == dvm->tree.launched)) {
        rc = HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; NULL != fds && i < nodes; ++i) {
        fds[i] = -1;
    }
    if (HERD_SUCCESS == rc) {
        rc = bind_all(dvm, ports[0], fds);
    }
    for (uint32_t g = 0; g < groups && HERD_SUCCESS == rc; ++g) {
        orte_vpid_t first = 1 + g;
        uint32_t count = (nodes - g + groups - 1) / groups;
        orte_plm_daemon_t *d = &dvm->tree.launched[g];
        *d = (orte_plm_daemon_t){.vpid = first,
                                 .node = &dvm->allocation->nodes[first - 1],
                                 .listen_fd = -1,
                                 .pid = -1,
                                 .stderr_fd = -1,
                                 .stdin_fd = -1};
        dvm->tree.num_launched = g + 1; /* from here on, dvm_tree_release() cleans it up */
        rc = launch_group(dvm, d, count, groups, ports, fds, group_fds);
    }
    for (uint32_t i = 0; NULL != fds && i < nodes; ++i) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
    free(fds);
    free(group_fds);
    free(ports);
    return rc;
}
