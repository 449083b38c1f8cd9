/* SPDX-License-Identifier: BSD-3-Clause */
/* The wireup module test bed (harness.h). */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "opal/mca/mca.h"
#include "opal/util/argv.h"
#include "orte/mca/grpcomm/grpcomm.h"

extern char **environ;

static orte_vpid_t harness_rank_vpid(void *ctx, uint32_t rank)
{
    return 1; /* every rank is ours */
}

static int harness_send(void *ctx, orte_vpid_t dst, uint16_t tag, const struct iovec *iov,
                        int iovcnt)
{
    return HERD_ERR_UNREACH; /* one daemon: nobody to send to */
}

static void harness_abort(void *ctx, uint32_t nspace, uint32_t rank, int status,
                          const char *message)
{
    wireup_harness_t *h = ctx;
    if (h->num_aborts < WIREUP_HARNESS_MAX_RECORDS) {
        wireup_harness_abort_t *a = &h->aborts[h->num_aborts++];
        a->nspace = nspace;
        a->rank = rank;
        a->status = status;
        a->message = strdup(NULL != message ? message : "");
    }
}

static int harness_spawn(void *ctx, const orte_wireup_spawn_request_t *req,
                         orte_wireup_spawn_fn_t cb, void *cbdata)
{
    wireup_harness_t *h = ctx;
    if (h->num_spawns < WIREUP_HARNESS_MAX_RECORDS) {
        wireup_harness_spawn_t *s = &h->spawns[h->num_spawns++];
        const orte_wireup_spawn_app_t *app = req->num_apps > 0 ? &req->apps[0] : NULL;
        s->parent_nspace = req->parent_nspace;
        s->parent_rank = req->parent_rank;
        s->num_apps = req->num_apps;
        s->np = NULL != app ? app->np : 0;
        s->argv0 = strdup(NULL != app && NULL != app->argv && NULL != app->argv[0] ? app->argv[0]
                                                                                  : "");
        s->num_preput = req->num_preput;
        s->cwd = NULL != app && NULL != app->cwd ? strdup(app->cwd) : NULL;
        s->preput_key0 = req->num_preput > 0 ? strdup(req->preput_keys[0]) : NULL;
        s->preput_val0 = req->num_preput > 0 ? strdup(req->preput_values[0]) : NULL;
    }
    if (HERD_SUCCESS == h->spawn_status) {
        h->spawn_cb = cb; /* answered from the loop (pump), never inside the call */
        h->spawn_cbdata = cbdata;
    }
    return h->spawn_status;
}

static const orte_wireup_nspace_t *harness_nspace(void *ctx, uint32_t index)
{
    wireup_harness_t *h = ctx;
    return 0 == index ? &h->ns : NULL;
}

int wireup_harness_init(wireup_harness_t *h, uint32_t num_procs)
{
    int rc;
    memset(h, 0, sizeof(*h));
    h->spawn_status = HERD_ERR_NOT_SUPPORTED;
    if (HERD_SUCCESS != (rc = opal_mca_init())) {
        return rc;
    }
    if (HERD_SUCCESS != (rc = orte_grpcomm_base_open())) {
        opal_mca_finalize();
        return rc;
    }
    h->mca_opened = true;
    if (HERD_SUCCESS != (rc = opal_event_base_create(&h->base))) {
        return rc;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(h->tmpdir, sizeof(h->tmpdir), "%s/herd-wireup-test-XXXXXX",
             NULL != tmp && '\0' != *tmp ? tmp : "/tmp");
    if (NULL == mkdtemp(h->tmpdir)) {
        h->tmpdir[0] = '\0';
        return HERD_ERR_IN_ERRNO;
    }
    /* a job id of its own for every test bed, so one test's leftovers cannot fail the next */
    static unsigned serial;
    snprintf(h->jobid, sizeof(h->jobid), "wireuptest%ld-%u.1", (long) getpid(), ++serial);
    snprintf(h->nspace_name, sizeof(h->nspace_name), "herd.%s", h->jobid);
    h->node_names[0] = "testnode";
    if (HERD_SUCCESS !=
            (rc = opal_jobdb_create(h->jobid, "testnode", num_procs, 1, NULL, &h->db)) ||
        HERD_SUCCESS != (rc = opal_jobdb_set_node(h->db, 0, "testnode"))) {
        return rc;
    }
    h->local_ranks = calloc(num_procs, sizeof(*h->local_ranks));
    if (NULL == h->local_ranks) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < num_procs; ++r) {
        opal_jobdb_proc_t p = {.rank = r,
                               .app = 0,
                               .node = 0,
                               .local_rank = r,
                               .node_rank = r,
                               .bound = false,
                               .cpuset = "0",
                               .locality = "node"};
        if (HERD_SUCCESS != (rc = opal_jobdb_put_proc(h->db, &p))) {
            return rc;
        }
        h->local_ranks[r] = r;
    }
    if (HERD_SUCCESS != (rc = opal_jobdb_finish(h->db))) {
        return rc;
    }
    snprintf(h->db_name, sizeof(h->db_name), "%s", opal_jobdb_name(h->db));

    orte_wireup_engine_config_t config = {.base = h->base,
                                          .me = 1,
                                          .radix = 2,
                                          .names = 1,
                                          .get_timeout_ms = orte_wireup_base_get_timeout_ms(),
                                          .send = harness_send,
                                          .ctx = h};
    if (HERD_SUCCESS != (rc = orte_wireup_engine_create(&config, &h->engine))) {
        return rc;
    }
    orte_vpid_t me = 1;
    orte_wireup_engine_nspace_t desc = {.index = 0,
                                        .num_procs = num_procs,
                                        .daemons = &me,
                                        .num_daemons = 1,
                                        .num_local = num_procs,
                                        .rank_vpid = harness_rank_vpid,
                                        .ctx = h};
    if (HERD_SUCCESS != (rc = orte_wireup_engine_add_nspace(h->engine, &desc))) {
        return rc;
    }
    h->ns = (orte_wireup_nspace_t){.index = 0,
                                   .name = h->nspace_name,
                                   .jobid = h->jobid,
                                   .seq = 1,
                                   .num_procs = num_procs,
                                   .num_apps = 1,
                                   .universe_size = num_procs,
                                   .num_nodes = 1,
                                   .node_names = h->node_names,
                                   .my_node = 0,
                                   .local_ranks = h->local_ranks,
                                   .num_local = num_procs,
                                   .db = h->db,
                                   .db_name = h->db_name,
                                   .parent_nspace = UINT32_MAX,
                                   .parent_rank = UINT32_MAX};
    h->host = (orte_wireup_host_t){.base = h->base,
                                   .node_name = "testnode",
                                   .tmpdir = h->tmpdir,
                                   .engine = h->engine,
                                   .abort = harness_abort,
                                   .spawn = harness_spawn,
                                   .nspace = harness_nspace,
                                   .ctx = h};
    return HERD_SUCCESS;
}

void wireup_harness_fini(wireup_harness_t *h)
{
    for (int i = 0; i < h->num_children; ++i) {
        kill(h->children[i], SIGKILL);
        waitpid(h->children[i], NULL, 0);
    }
    h->num_children = 0;
    orte_wireup_engine_destroy(h->engine);
    h->engine = NULL;
    opal_jobdb_destroy(h->db);
    h->db = NULL;
    if ('\0' != h->tmpdir[0]) {
        /* what a module left here is a leak the test should see: remove only the folder */
        if (0 != rmdir(h->tmpdir)) {
            fprintf(stderr, "harness: %s is not empty after the test: %s\n", h->tmpdir,
                    strerror(errno));
            char cmd[PATH_MAX + 16];
            snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->tmpdir);
            if (0 != system(cmd)) {
                fprintf(stderr, "harness: could not remove %s\n", h->tmpdir);
            }
        }
    }
    for (int i = 0; i < h->num_aborts; ++i) {
        free(h->aborts[i].message);
    }
    for (int i = 0; i < h->num_spawns; ++i) {
        free(h->spawns[i].argv0);
        free(h->spawns[i].cwd);
        free(h->spawns[i].preput_key0);
        free(h->spawns[i].preput_val0);
    }
    free(h->local_ranks);
    if (NULL != h->base) {
        opal_event_base_free(h->base);
    }
    if (h->mca_opened) {
        orte_grpcomm_base_close();
        opal_mca_finalize();
    }
    memset(h, 0, sizeof(*h));
}

/* Our environment without the variables a test's own parent may have set for wireup. */
static char **child_environment(void)
{
    char **env = NULL;
    for (char **e = environ; NULL != e && NULL != *e; ++e) {
        if (0 == strncmp(*e, "PMIX_", 5) || 0 == strncmp(*e, "PMI_", 4) ||
            0 == strncmp(*e, "HERD_WIREUP", 11) || 0 == strncmp(*e, "HERD_RANK=", 10) ||
            0 == strncmp(*e, "OMPI_", 5)) {
            continue;
        }
        opal_argv_append(&env, *e);
    }
    return env;
}

int wireup_harness_start(wireup_harness_t *h, const orte_wireup_module_t *module, void *state,
                         uint32_t rank, char *const argv[], pid_t *pid)
{
    char **env = child_environment();
    orte_wireup_child_t child = {.env = &env};
    orte_wireup_proc_t proc = {
        .ns = &h->ns, .rank = rank, .app = 0, .local_rank = rank, .node_rank = rank};
    char value[32];
    int rc = HERD_SUCCESS;
    const struct {
        const char *name;
        uint32_t value;
    } vars[] = {{"HERD_RANK", rank},       {"HERD_SIZE", h->ns.num_procs},
                {"HERD_LOCAL_RANK", rank}, {"HERD_LOCAL_SIZE", h->ns.num_local},
                {"HERD_NODE_RANK", rank},  {"HERD_JOBID", h->ns.seq},
                {"HERD_APPNUM", 0}};
    for (size_t i = 0; HERD_SUCCESS == rc && i < sizeof(vars) / sizeof(vars[0]); ++i) {
        snprintf(value, sizeof(value), "%u", vars[i].value);
        rc = orte_wireup_child_setenv(&child, vars[i].name, value);
    }
    if (HERD_SUCCESS == rc && NULL != module) {
        rc = module->proc_setup(state, &proc, &child);
    }
    if (HERD_SUCCESS != rc) {
        opal_argv_free(env);
        for (int i = 0; i < child.num_fds; ++i) {
            close(child.fds[i]);
        }
        return rc;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t p = fork();
    if (0 == p) {
        /* move the inherited descriptors out of the way, then into place */
        int moved[ORTE_WIREUP_MAX_CHILD_FDS];
        for (int i = 0; i < child.num_fds; ++i) {
            moved[i] = fcntl(child.fds[i], F_DUPFD, 64);
        }
        for (int i = 0; i < child.num_fds; ++i) {
            if (moved[i] < 0 || dup2(moved[i], child.child_fd[i]) < 0) {
                _exit(126);
            }
        }
        execve(argv[0], argv, env);
        fprintf(stderr, "harness: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    for (int i = 0; i < child.num_fds; ++i) {
        close(child.fds[i]);
    }
    opal_argv_free(env);
    if (p < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    if (h->num_children < WIREUP_HARNESS_MAX_RECORDS) {
        h->children[h->num_children++] = p;
    }
    if (NULL != module && NULL != module->proc_started) {
        module->proc_started(state, &proc, p);
    }
    *pid = p;
    return HERD_SUCCESS;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void tick_cb(int fd, short what, void *arg)
{
}

/* One round of the loop, returning within about 10 ms even when nothing happens. */
static void pump(wireup_harness_t *h)
{
    opal_event_t *tick = NULL;
    struct timeval tv = {0, 10000};
    if (HERD_SUCCESS == opal_event_timer_create(h->base, false, tick_cb, NULL, &tick)) {
        opal_event_add(tick, &tv);
    }
    opal_event_base_loop(h->base, true);
    if (NULL != tick) {
        opal_event_free(tick);
    }
    if (NULL != h->spawn_cb) {
        orte_wireup_spawn_fn_t cb = h->spawn_cb;
        h->spawn_cb = NULL;
        cb(HERD_SUCCESS, h->spawn_nspace, NULL, h->spawn_cbdata);
    }
}

bool wireup_harness_run_until(wireup_harness_t *h, bool (*done)(void *arg), void *arg,
                              double seconds)
{
    double end = now_seconds() + seconds;
    while (!done(arg)) {
        if (now_seconds() > end) {
            return false;
        }
        pump(h);
    }
    return true;
}

int wireup_harness_wait(wireup_harness_t *h, const orte_wireup_module_t *module, void *state,
                        uint32_t rank, pid_t pid, double seconds, int *status, bool *unfinalized)
{
    double end = now_seconds() + seconds;
    int st = 0;
    int rc = HERD_SUCCESS;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            break;
        }
        if (w < 0 && EINTR != errno) {
            return HERD_ERR_IN_ERRNO;
        }
        if (now_seconds() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            rc = HERD_ERR_TIMEOUT;
            break;
        }
        pump(h);
    }
    for (int i = 0; i < h->num_children; ++i) {
        if (h->children[i] == pid) {
            h->children[i] = h->children[--h->num_children];
            break;
        }
    }
    /* what the process said last is read before it is declared gone */
    pump(h);
    bool unf = false;
    orte_wireup_proc_t proc = {.ns = &h->ns, .rank = rank, .local_rank = rank, .node_rank = rank};
    if (NULL != module && NULL != module->proc_exited) {
        module->proc_exited(state, &proc, &unf);
    }
    if (NULL != status) {
        *status = st;
    }
    if (NULL != unfinalized) {
        *unfinalized = unf;
    }
    return rc;
}
