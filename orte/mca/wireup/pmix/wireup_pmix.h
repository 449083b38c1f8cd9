/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmix: what the component's files share. The session daemon is a PMIx server through
 * OpenPMIx's server library: namespaces are registered with every process's place, each local
 * process gets the server's environment, and the library's upcalls (which run on its own
 * thread) are carried into the session daemon's loop and served with the wireup engine. */
#ifndef ORTE_MCA_WIREUP_PMIX_H
#define ORTE_MCA_WIREUP_PMIX_H

#include <pmix.h>
#include <pmix_server.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "orte/mca/wireup/wireup.h"

/* One local process of a namespace. */
typedef struct wireup_pmix_local {
    uint32_t rank;
    bool registered; /* PMIx_server_register_client done */
    bool connected;
    bool finalized;
} wireup_pmix_local_t;

/* A namespace as the PMIx server knows it. */
typedef struct wireup_pmix_ns {
    const orte_wireup_nspace_t *ns; /* the session daemon's, valid until del_nspace */
    pmix_nspace_t name;
    wireup_pmix_local_t *locals; /* in the order of ns->local_ranks (ascending ranks) */
    uint32_t num_local;
    bool registered;
} wireup_pmix_ns_t;

typedef struct wireup_pmix_state {
    const orte_wireup_host_t *host;
    wireup_pmix_ns_t **nss; /* by namespace index */
    uint32_t num_nss;
    /* Upcalls queued for the loop hold a reference: the state goes with the last of them. */
    _Atomic int refs;
    _Atomic bool finalizing;
    bool server_up;
    pmix_topology_t topology;
    void *hwloc_topology; /* ours, handed to the server (hwloc_topology_t) */
    /* hints for Open MPI programs (wireup_pmix_ompi_hints) */
    char pml_hint[256]; /* OMPI_MCA_pml to skip cm ("": nothing to say) */
    uint32_t num_pus;   /* hardware threads herd may use here (0: unknown) */
} wireup_pmix_state_t;

/* The module's upcalls (wireup_pmix_upcalls.c). */
extern pmix_server_module_t wireup_pmix_server_module;

/* The running state, for the upcalls (one PMIx server per process). */
wireup_pmix_state_t *wireup_pmix_active(void);
void wireup_pmix_release(wireup_pmix_state_t *state);

/* The namespace of a PMIx name, or NULL. */
wireup_pmix_ns_t *wireup_pmix_find_ns(wireup_pmix_state_t *state, const char *name);
/* A local process of it, or NULL. */
wireup_pmix_local_t *wireup_pmix_find_local(wireup_pmix_ns_t *pns, uint32_t rank);

/* Answers other daemons' direct-modex requests (registered with the engine). */
void wireup_pmix_dmodex_handler(void *ctx, uint32_t nspace, uint32_t rank, const char *key,
                                int timeout_ms, orte_wireup_ticket_t *ticket);

/* wireup_base_verbose stream */
int wireup_pmix_output(void);

#endif /* ORTE_MCA_WIREUP_PMIX_H */
