/* SPDX-License-Identifier: BSD-3-Clause */
/* A test bed for one wireup module: an event loop, a one-daemon engine, a fake host that
 * records what modules ask of it, a real job database for one namespace whose processes are
 * all on this node, and a way to start a real child process with the module's proc_setup
 * applied (environment and inherited descriptors), as the session daemon would. */
#ifndef HERD_TEST_WIREUP_HARNESS_H
#define HERD_TEST_WIREUP_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/event/event.h"
#include "opal/util/jobdb.h"
#include "orte/mca/wireup/base/base.h"
#include "orte/mca/wireup/wireup.h"

#define WIREUP_HARNESS_MAX_RECORDS 16

typedef struct wireup_harness_abort {
    uint32_t nspace;
    uint32_t rank;
    int status;
    char *message;
} wireup_harness_abort_t;

typedef struct wireup_harness_spawn {
    uint32_t parent_nspace;
    uint32_t parent_rank;
    uint32_t num_apps;
    uint32_t np; /* of the first app */
    char *argv0; /* of the first app */
    uint32_t num_preput;
    char *cwd;          /* of the first app, or NULL */
    char *preput_key0;  /* the first preput key, or NULL */
    char *preput_val0;
} wireup_harness_spawn_t;

typedef struct wireup_harness {
    opal_event_base_t *base;
    orte_wireup_engine_t *engine;
    orte_wireup_host_t host;
    orte_wireup_nspace_t ns; /* index 0: every rank on this node */
    opal_jobdb_t *db;
    char db_name[256];
    char tmpdir[PATH_MAX];
    char jobid[64];
    char nspace_name[80];
    const char *node_names[1];
    uint32_t *local_ranks;
    /* what modules asked of the host */
    wireup_harness_abort_t aborts[WIREUP_HARNESS_MAX_RECORDS];
    int num_aborts;
    wireup_harness_spawn_t spawns[WIREUP_HARNESS_MAX_RECORDS];
    int num_spawns;
    /* what spawn answers (HERD_ERR_NOT_SUPPORTED unless a test sets it); on HERD_SUCCESS the
     * spawn completes from the loop, as namespace spawn_nspace */
    int spawn_status;
    uint32_t spawn_nspace;
    orte_wireup_spawn_fn_t spawn_cb;
    void *spawn_cbdata;
    /* children started and not yet waited for: fini kills them, so a failed test leaves none */
    pid_t children[WIREUP_HARNESS_MAX_RECORDS];
    int num_children;
    bool mca_opened; /* opal_mca_init and grpcomm's open succeeded: fini closes them */
} wireup_harness_t;

/* Everything above for num_procs ranks (opal_mca_init, grpcomm open, a private tmpdir, the
 * segment). HERD_SUCCESS or the failing step's status. */
int wireup_harness_init(wireup_harness_t *h, uint32_t num_procs);
/* Releases everything (the module must have been finalized first): no segment, folder or
 * process left; children still running are killed. Safe on a harness whose init failed
 * part-way, and on a zeroed one. */
void wireup_harness_fini(wireup_harness_t *h);

/* Start rank as a child process running argv (argv[0] a path), with the HERD_* variables odls
 * gives, the module's proc_setup applied (may be NULL: no module), and proc_started called.
 * stdout/stderr are inherited. *pid set on success. */
int wireup_harness_start(wireup_harness_t *h, const orte_wireup_module_t *module, void *state,
                         uint32_t rank, char *const argv[], pid_t *pid);
/* Run the loop until pid exits (its wait status in *status) or seconds pass (then it is killed
 * and HERD_ERR_TIMEOUT returned). Calls the module's proc_exited (if module is not NULL) and
 * reports *unfinalized (may be NULL). */
int wireup_harness_wait(wireup_harness_t *h, const orte_wireup_module_t *module, void *state,
                        uint32_t rank, pid_t pid, double seconds, int *status, bool *unfinalized);
/* Run the loop until done(arg) is true or seconds pass; returns whether done. */
bool wireup_harness_run_until(wireup_harness_t *h, bool (*done)(void *arg), void *arg,
                              double seconds);

#endif /* HERD_TEST_WIREUP_HARNESS_H */
