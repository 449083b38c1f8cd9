/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal PMIx client for the pmix wireup's tests: PMIx_Init, a put and commit, a fence that
 * collects data, the job size and local peers, every peer's key, PMIx_Finalize. Prints
 * "pmix_client rank R ok" and exits 0, or says what went wrong and exits 1. With "abort",
 * rank 1 calls PMIx_Abort(6) after the fence; with "nofinalize" the last rank leaves without
 * PMIx_Finalize ("bare-nofinalize": the same, with no put, fence or get before; "bare": no
 * put, fence or get, and every rank finalizes). With "spawn N", rank 0 spawns N copies of this
 * program in "bare" mode (PMIx_Spawn, no fence before: it does not wait for the job's other
 * processes) and prints "pmix_client spawned N" once they run. With "cleanup DIR", each rank
 * makes DIR/file.R and DIR/tree.R/sub/leaf, asks the server to remove both when it ends (as
 * Open MPI does for its shared-memory files), waits for the others to have done so, and kills
 * itself: only the server can remove them. */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pmix_proc_t me;

static void check(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "pmix_client rank %u: %s failed: %s\n", me.rank, what,
                PMIx_Error_string(rc));
        exit(1);
    }
}

/* An empty file at path. */
static void make_file(const char *path)
{
    FILE *f = fopen(path, "w");
    if (NULL == f) {
        fprintf(stderr, "pmix_client rank %u: cannot make %s\n", me.rank, path);
        exit(1);
    }
    fclose(f);
}

/* Registers the cleanup of dir's file.R (a file) and tree.R (a folder, with what is in it). */
static void register_cleanup(const char *dir)
{
    char file[4096], tree[4096], sub[4200], leaf[4300];
    snprintf(file, sizeof(file), "%s/file.%u", dir, me.rank);
    snprintf(tree, sizeof(tree), "%s/tree.%u", dir, me.rank);
    snprintf(sub, sizeof(sub), "%s/sub", tree);
    snprintf(leaf, sizeof(leaf), "%s/leaf", sub);
    if (0 != mkdir(tree, 0700) || 0 != mkdir(sub, 0700)) {
        fprintf(stderr, "pmix_client rank %u: cannot make %s\n", me.rank, sub);
        exit(1);
    }
    make_file(file);
    make_file(leaf);
    pmix_info_t info[3];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_REGISTER_CLEANUP, file, PMIX_STRING);
    check(PMIx_Job_control(&me, 1, info, 1, NULL, NULL), "PMIx_Job_control(REGISTER_CLEANUP)");
    PMIX_INFO_LOAD(&info[1], PMIX_REGISTER_CLEANUP_DIR, tree, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_CLEANUP_RECURSIVE, &yes, PMIX_BOOL);
    check(PMIx_Job_control(&me, 1, &info[1], 2, NULL, NULL),
          "PMIx_Job_control(REGISTER_CLEANUP_DIR)");
    for (size_t i = 0; i < 3; ++i) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    check(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(PMIX_JOB_SIZE)");
    uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    check(PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val), "PMIx_Get(PMIX_LOCAL_PEERS)");
    PMIX_VALUE_RELEASE(val);
    if (0 == strcmp(mode, "spawn") && argc > 2) {
        if (0 == me.rank) {
            pmix_app_t *app;
            char nspace[PMIX_MAX_NSLEN + 1];
            PMIX_APP_CREATE(app, 1);
            app->cmd = strdup(argv[0]);
            app->argv = calloc(3, sizeof(char *));
            if (NULL == app->cmd || NULL == app->argv || NULL == (app->argv[0] = strdup(argv[0])) ||
                NULL == (app->argv[1] = strdup("bare"))) {
                fprintf(stderr, "pmix_client rank %u: out of memory\n", me.rank);
                return 1;
            }
            app->maxprocs = atoi(argv[2]);
            check(PMIx_Spawn(NULL, 0, app, 1, nspace), "PMIx_Spawn");
            PMIX_APP_FREE(app, 1);
            printf("pmix_client spawned %s\n", argv[2]);
        }
        check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
        return 0;
    }
    if (0 == strcmp(mode, "bare-nofinalize") || 0 == strcmp(mode, "bare")) {
        if (0 == strcmp(mode, "bare-nofinalize") && me.rank == size - 1) {
            return 0;
        }
        check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
        printf("pmix_client rank %u ok\n", me.rank);
        return 0;
    }
    char card[64];
    snprintf(card, sizeof(card), "card-%u", me.rank);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, card, PMIX_STRING);
    check(PMIx_Put(PMIX_GLOBAL, "test.card", &v), "PMIx_Put");
    PMIX_VALUE_DESTRUCT(&v);
    check(PMIx_Commit(), "PMIx_Commit");
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    check(PMIx_Fence(&wild, 1, &collect, 1), "PMIx_Fence");
    PMIX_INFO_DESTRUCT(&collect);
    for (uint32_t p = 0; p < size; ++p) {
        pmix_proc_t peer;
        char want[64];
        PMIX_LOAD_PROCID(&peer, me.nspace, p);
        check(PMIx_Get(&peer, "test.card", NULL, 0, &val), "PMIx_Get of a peer's key");
        snprintf(want, sizeof(want), "card-%u", p);
        if (PMIX_STRING != val->type || 0 != strcmp(val->data.string, want)) {
            fprintf(stderr, "pmix_client rank %u: rank %u's key is wrong\n", me.rank, p);
            return 1;
        }
        PMIX_VALUE_RELEASE(val);
    }
    if (0 == strcmp(mode, "cleanup") && argc > 2) {
        register_cleanup(argv[2]);
        /* the first to die ends the job: every rank has registered before any does */
        check(PMIx_Fence(&wild, 1, NULL, 0), "PMIx_Fence after the cleanup");
        raise(SIGKILL);
    }
    if (0 == strcmp(mode, "abort") && 1 == me.rank) {
        PMIx_Abort(6, "pmix_client gives up on purpose", NULL, 0);
        return 6;
    }
    if (0 == strcmp(mode, "nofinalize") && me.rank == size - 1) {
        return 0;
    }
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    printf("pmix_client rank %u ok\n", me.rank);
    return 0;
}
