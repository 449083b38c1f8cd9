/* SPDX-License-Identifier: BSD-3-Clause */
/* overlay ofi: the tcp overlay's module, wrapped, plus one libfabric RDM endpoint per daemon.
 * What this component does today: select, open the fabric (or say at overlay_base_verbose 1
 * why it could not, and go on over tcp alone), close it cleanly. Every message still travels
 * over the tcp connections (docs/overlay.md, "The ofi component"). */
#ifndef ORTE_MCA_OVERLAY_OFI_H
#define ORTE_MCA_OVERLAY_OFI_H

#include <stdbool.h>
#include <stddef.h>

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

/* The libfabric calls the component makes, so the unit tests can stand a stub provider in. */
typedef struct overlay_ofi_ops {
    /* Open an RDM endpoint of provider (NULL: any); on failure *reason is a sentence (always
     * allocated, the caller's to free). */
    int (*open)(const char *provider, overlay_ofi_fabric_t **fabric, char **reason);
    /* The provider actually opened, for verbose output. */
    const char *(*provider_name)(const overlay_ofi_fabric_t *fabric);
    /* Close the endpoint and everything under it (shared-memory files of shm included). */
    void (*close)(overlay_ofi_fabric_t *fabric);
} overlay_ofi_ops_t;

extern const overlay_ofi_ops_t overlay_ofi_libfabric_ops;
/* The ops in use (libfabric's unless a test swapped them). */
extern const overlay_ofi_ops_t *overlay_ofi_ops;
/* The tcp overlay module the component wraps, found at its first init. */
int overlay_ofi_tcp_module(const orte_overlay_module_t **tcp);
int overlay_ofi_output(void);

#endif /* ORTE_MCA_OVERLAY_OFI_H */
