/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the tcp overlay's module, wrapped, plus one libfabric RDM endpoint per daemon.
 * The grpcomm collectives' messages (start-up allgathers, fences, broadcasts) go over the
 * fabric to peers whose fabric address came over an authenticated tcp connection; everything
 * else, and everything when the fabric cannot be used, goes over tcp (docs/overlay.md, "The ofi
 * component"). */
#ifndef ORTE_MCA_OVERLAY_OFI_H
#define ORTE_MCA_OVERLAY_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orte/mca/overlay/overlay.h"

#define OVERLAY_OFI_HELP_FILE "help-overlay-ofi.txt"
/* Overlay tag reserved for the component's own control messages. */
#define ORTE_OVERLAY_TAG_COMPONENT 0xff00u

typedef struct overlay_ofi_settings {
    int priority;
    char *provider; /* overlay_ofi_provider: one provider name, or NULL for libfabric's choice */
} overlay_ofi_settings_t;

extern overlay_ofi_settings_t overlay_ofi_settings;
extern const orte_overlay_module_t overlay_ofi_module;

/* The fabric resources of one endpoint, opened by overlay_ofi_fabric_open. */
typedef struct overlay_ofi_fabric overlay_ofi_fabric_t;

/* Room for libfabric's per-operation context (FI_CONTEXT mode): the first member of every send
 * fragment and receive buffer, so that a completion leads back to it. */
typedef struct overlay_ofi_ctx {
    void *opaque[8];
} overlay_ofi_ctx_t;

/* One completion read from the endpoint's completion queue. */
typedef struct overlay_ofi_completion {
    overlay_ofi_ctx_t *ctx; /* of the operation */
    bool recv;              /* a receive (else a send) */
    size_t length;          /* bytes received */
    int error;              /* 0, or the operation failed (a libfabric errno, positive) */
} overlay_ofi_completion_t;

/* post_send/post_recv: the provider has no room now; post again after reading completions. */
#define OVERLAY_OFI_AGAIN 1
/* Longest fabric address a HELLO may carry. */
#define OVERLAY_OFI_MAX_ADDR 256u

/* The libfabric calls the component makes, so the unit tests can stand a stub provider in. */
typedef struct overlay_ofi_ops {
    /* Open an RDM endpoint of provider (NULL: any); on failure *reason is a sentence (always
     * allocated, the caller's to free). */
    int (*open)(const char *provider, overlay_ofi_fabric_t **fabric, char **reason);
    /* The provider actually opened, for verbose output. */
    const char *(*provider_name)(const overlay_ofi_fabric_t *fabric);
    /* Close the endpoint and everything under it (shared-memory files of shm included). */
    void (*close)(overlay_ofi_fabric_t *fabric);
    /* The endpoint's address; *length is the room in addr on entry, its length on return. */
    int (*getname)(overlay_ofi_fabric_t *fabric, void *addr, size_t *length);
    /* Put a peer's address into the address vector; *dest is what post_send takes. */
    int (*insert)(overlay_ofi_fabric_t *fabric, const void *addr, size_t length, uint64_t *dest);
    /* Largest message one post_send may carry. */
    size_t (*max_msg_size)(const overlay_ofi_fabric_t *fabric);
    /* HERD_SUCCESS, OVERLAY_OFI_AGAIN, or a failure (*error: the libfabric errno). */
    int (*post_send)(overlay_ofi_fabric_t *fabric, uint64_t dest, const void *buf, size_t length,
                     overlay_ofi_ctx_t *ctx, int *error);
    int (*post_recv)(overlay_ofi_fabric_t *fabric, void *buf, size_t length,
                     overlay_ofi_ctx_t *ctx);
    /* Read up to max completions (errors included); the count, or < 0 when the queue failed. */
    int (*poll)(overlay_ofi_fabric_t *fabric, overlay_ofi_completion_t *out, int max);
    /* A descriptor readable when completions may be waiting, or -1: then poll on a timer. */
    int (*wait_fd)(overlay_ofi_fabric_t *fabric);
    /* Whether the loop may sleep on wait_fd now (nothing already waiting to be read). */
    bool (*trywait)(overlay_ofi_fabric_t *fabric);
} overlay_ofi_ops_t;

extern const overlay_ofi_ops_t overlay_ofi_libfabric_ops;
/* The ops in use (libfabric's unless a test swapped them). */
extern const overlay_ofi_ops_t *overlay_ofi_ops;
/* The tcp overlay module the component wraps, found at its first init. */
int overlay_ofi_tcp_module(const orte_overlay_module_t **tcp);
int overlay_ofi_output(void);

#endif /* ORTE_MCA_OVERLAY_OFI_H */
