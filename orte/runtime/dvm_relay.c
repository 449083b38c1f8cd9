/* SPDX-License-Identifier: BSD-3-Clause */
/* What the daemons this process started print on stderr, passed on to its own stderr once the
 * DVM is ready. Until then a daemon's stderr stays in its pipe: when the daemon fails to start,
 * that text is the reason said (orte_plm_base_read_stderr). After that nobody read the pipe, so
 * a node daemon's warnings and verbose output were never seen, and one that printed 64 KiB
 * (odls_base_verbose over a few hundred jobs) blocked on its next write and was taken for hung.
 *
 * Each line goes out whole, as "[herdd NODE] line" (a line already relayed by a daemon below
 * keeps its first prefix), so the root's stderr (a terminal, or a daemonized DVM's log) says
 * which node printed what. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orte/runtime/dvm_internal.h"

#define RELAY_PREFIX "[herdd "

struct dvm_relay {
    orte_dvm_t *dvm;
    orte_vpid_t vpid; /* names the node */
    int fd;           /* the daemon's stderr pipe (not closed here) */
    opal_event_t *event;
    size_t len;
    char line[4096]; /* a longer line goes out in pieces of this size */
};

static void write_all(const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return; /* our own stderr is gone: nothing better to do with the text */
        }
        text += n;
        len -= (size_t) n;
    }
}

static void emit(dvm_relay_t *r)
{
    if (0 == r->len) {
        return;
    }
    if (0 != strncmp(r->line, RELAY_PREFIX, strlen(RELAY_PREFIX))) {
        char prefix[160];
        int n = snprintf(prefix, sizeof(prefix), RELAY_PREFIX "%s] ",
                         dvm_tree_node_name(r->dvm, r->vpid));
        write_all(prefix, (size_t) n < sizeof(prefix) ? (size_t) n : sizeof(prefix) - 1);
    }
    write_all(r->line, r->len);
    if ('\n' != r->line[r->len - 1]) {
        write_all("\n", 1);
    }
    r->len = 0;
}

/* Read what the pipe has; at its end (or an error) say the rest and stop watching it. */
static void relay_read(dvm_relay_t *r)
{
    char chunk[4096];
    for (;;) {
        ssize_t n = read(r->fd, chunk, sizeof(chunk));
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            return;
        }
        if (n <= 0) {
            emit(r);
            if (NULL != r->event) {
                opal_event_free(r->event);
                r->event = NULL;
            }
            return;
        }
        for (ssize_t i = 0; i < n; ++i) {
            r->line[r->len++] = chunk[i];
            if ('\n' == chunk[i] || sizeof(r->line) == r->len) {
                emit(r);
            }
        }
    }
}

static void relay_cb(int fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    relay_read(arg);
}

/* Watch FD, daemon VPID's stderr, and say what it holds already. */
static void relay_watch(dvm_relay_t *r, orte_dvm_t *dvm, orte_vpid_t vpid, int fd)
{
    r->dvm = dvm;
    r->vpid = vpid;
    r->fd = fd;
    if (fd < 0) {
        return;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (HERD_SUCCESS == opal_event_fd_create(dvm->base, fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                                             relay_cb, r, &r->event)) {
        opal_event_add(r->event, NULL);
    }
    relay_read(r);
}

/* Say a daemon's last words when they are already there, and stop watching its pipe. */
static void relay_stop(dvm_relay_t *r)
{
    if (NULL != r->event) {
        relay_read(r);
        if (NULL != r->event) {
            opal_event_free(r->event);
            r->event = NULL;
        }
    }
}

void dvm_relay_start(orte_dvm_t *dvm)
{
    if (NULL != dvm->tree.relays || 0 == dvm->tree.num_launched) {
        return;
    }
    dvm->tree.relays = calloc(dvm->tree.num_launched, sizeof(*dvm->tree.relays));
    if (NULL == dvm->tree.relays) {
        return; /* the pipes stay as they were: read when a daemon fails */
    }
    for (size_t i = 0; i < dvm->tree.num_launched; ++i) {
        orte_plm_daemon_t *daemon = &dvm->tree.launched[i];
        relay_watch(&dvm->tree.relays[i], dvm, daemon->vpid, daemon->stderr_fd);
    }
}

void dvm_relay_drain(orte_dvm_t *dvm, orte_plm_daemon_t *daemon)
{
    size_t i = (size_t) (daemon - dvm->tree.launched);
    if (NULL != dvm->tree.relays && i < dvm->tree.num_launched &&
        NULL != dvm->tree.relays[i].event) {
        relay_read(&dvm->tree.relays[i]);
    }
}

void dvm_relay_release(orte_dvm_t *dvm)
{
    for (size_t i = 0; NULL != dvm->tree.relays && i < dvm->tree.num_launched; ++i) {
        relay_stop(&dvm->tree.relays[i]);
    }
    free(dvm->tree.relays);
    dvm->tree.relays = NULL;
}

dvm_relay_t *dvm_relay_open(orte_dvm_t *dvm, orte_vpid_t vpid, int fd)
{
    dvm_relay_t *r = calloc(1, sizeof(*r));
    if (NULL != r) {
        relay_watch(r, dvm, vpid, fd);
    }
    return r;
}

void dvm_relay_close(dvm_relay_t *r)
{
    if (NULL != r) {
        relay_stop(r);
        free(r);
    }
}
