/* SPDX-License-Identifier: BSD-3-Clause */
/* toolsrv pmix: herdrun and the DVM root as PMIx tool servers (OpenPMIx's server library with
 * PMIX_SERVER_TOOL_SUPPORT): pps, pattrs and pquery connect by the host's pid (the rendezvous
 * file pmix.<host>.tool.<pid> in the tmpdir), by the server's URI, or, to the DVM root, as the
 * system server.
 *
 * The server runs in a helper process forked from the host (herdrun, herd-dvm): OpenPMIx 4.2.2
 * crashes in its own thread on some tool queries (PMIX_QUERY_ATTRIBUTE_SUPPORT for the host's
 * attributes: pattrs --host), and a tool must never take a running job down with it. The
 * helper asks the host for its facts over a socket pair (the host answers from its loop) and
 * orte/util/pmix/pmix_query.c turns them into the answers; a helper that dies only ends the
 * tool service. */
#include "herd_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/mca/base/mca_var.h"
#include "opal/util/fd.h"
#include "opal/util/output.h"
#include "opal/util/tmpdir.h"
#include "orte/mca/toolsrv/toolsrv.h"
#include "orte/runtime/job_status.h"
#include "orte/util/pmix/pmix_query.h"

#define TOOLSRV_PMIX_DEFAULT_PRIORITY HERD_MCA_PRIORITY_orte_toolsrv_pmix

static struct {
    int priority;       /* toolsrv_pmix_priority */
    bool system_server; /* toolsrv_pmix_system_server */
} toolsrv_pmix_state = {.priority = TOOLSRV_PMIX_DEFAULT_PRIORITY, .system_server = true};

/* ------------------------------------------------------------------------------------------ */
/* what the tool server offers (PMIX_QUERY_ATTRIBUTE_SUPPORT, pattrs) */

static const orte_pmix_query_attr_t query_attrs[] = {
    {"PMIX_QUERY_NAMESPACES", PMIX_QUERY_NAMESPACES, PMIX_STRING, "the running jobs"},
    {"PMIX_QUERY_JOB_STATUS", PMIX_QUERY_JOB_STATUS, PMIX_STATUS,
     "PMIX_SUCCESS while a job runs, PMIX_ERR_JOB_ABORTED once it is being aborted"},
    {"PMIX_QUERY_PROC_TABLE", PMIX_QUERY_PROC_TABLE, PMIX_DATA_ARRAY,
     "every process of a job: host, program, pid, state, exit code"},
    {"PMIX_QUERY_LOCAL_PROC_TABLE", PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_DATA_ARRAY,
     "the processes of a job on this host"},
    {"PMIX_QUERY_NUM_PSETS", PMIX_QUERY_NUM_PSETS, PMIX_SIZE, "0: herd defines no process set"},
    {"PMIX_QUERY_PSET_NAMES", PMIX_QUERY_PSET_NAMES, PMIX_STRING, "none"},
    {"PMIX_QUERY_ATTRIBUTE_SUPPORT", PMIX_QUERY_ATTRIBUTE_SUPPORT, PMIX_DATA_ARRAY,
     "these attributes"},
};
static const orte_pmix_query_attr_t jctrl_attrs[] = {
    {"PMIX_JOB_CTRL_KILL", PMIX_JOB_CTRL_KILL, PMIX_BOOL, "end the job at once (SIGKILL)"},
    {"PMIX_JOB_CTRL_TERMINATE", PMIX_JOB_CTRL_TERMINATE, PMIX_BOOL,
     "end the job: SIGTERM, SIGKILL after the kill grace (as herd-cancel)"},
    {"PMIX_JOB_CTRL_SIGNAL", PMIX_JOB_CTRL_SIGNAL, PMIX_INT, "send the job's processes a signal"},
};
#define ATTRS(a) a, sizeof(a) / sizeof(a[0])
static const orte_pmix_query_function_t functions[] = {
    {"PMIx_Query_info", "query", ATTRS(query_attrs)},
    {"PMIx_Job_control", "job_control", ATTRS(jctrl_attrs)},
};
#define NUM_FUNCTIONS (sizeof(functions) / sizeof(functions[0]))

/* ------------------------------------------------------------------------------------------ */
/* the protocol between the helper and its host: frames of {u32 length, opal buffer}
 *   helper -> host: {u32 id, u8 MSG_JOBS, bool with_procs}
 *                   {u32 id, u8 MSG_SIGNAL, string nspace, i32 signo, u32 uid}
 *                   {u32 0, u8 MSG_READY, i32 pmix status}: the server started (or not)
 *   host -> helper: {u32 id, i32 status} and, for MSG_JOBS, {u32 n, n jobs}
 *                   job: {string nspace, u32 num_procs, bool aborting, u32 k, k procs}
 *                   proc: {u32 rank, string host, string executable, i32 pid, u8 state,
 *                          i32 exit code} */

enum { MSG_JOBS = 1, MSG_SIGNAL = 2, MSG_READY = 3 };
#define FRAME_MAX (256u << 20)

static int send_frame(int fd, const opal_buffer_t *b)
{
    uint8_t header[4] = {(uint8_t) (b->used >> 24), (uint8_t) (b->used >> 16),
                         (uint8_t) (b->used >> 8), (uint8_t) b->used};
    int rc = opal_fd_send_all(fd, header, sizeof(header));
    return HERD_SUCCESS == rc ? opal_fd_send_all(fd, b->base, b->used) : rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the helper: the PMIx server */

typedef enum { REQ_QUERY, REQ_JOB_CONTROL } req_type_t;

/* An upcall waiting for the host's answer. */
typedef struct req {
    uint32_t id;
    req_type_t type;
    pmix_query_t *queries; /* REQ_QUERY: our copy */
    size_t nqueries;
    int pending; /* REQ_JOB_CONTROL: answers still to come (one per target) */
    pmix_status_t status;
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    struct req *next;
} req_t;

static struct {
    int fd; /* to the host */
    pthread_mutex_t lock;
    req_t *pending;
    uint32_t next_id;
    atomic_uint next_tool;
    char hostname[256];
} helper = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static void req_free(req_t *r)
{
    if (NULL != r->queries) {
        PMIX_QUERY_FREE(r->queries, r->nqueries);
    }
    free(r);
}

/* From the library's thread: remember r, then ask the host (request: all but the id). */
static pmix_status_t ask_host(req_t *r, const opal_buffer_t *request, bool first)
{
    opal_buffer_t b;
    opal_buffer_init(&b);
    pthread_mutex_lock(&helper.lock);
    if (first) {
        r->id = ++helper.next_id;
        r->next = helper.pending;
        helper.pending = r;
    }
    int rc = opal_buffer_pack_uint32(&b, r->id);
    if (HERD_SUCCESS == rc) {
        rc = opal_buffer_pack_bytes(&b, request->base, request->used);
    }
    if (HERD_SUCCESS == rc) {
        rc = send_frame(helper.fd, &b);
    }
    pthread_mutex_unlock(&helper.lock);
    opal_buffer_destruct(&b);
    return HERD_SUCCESS == rc ? PMIX_SUCCESS : PMIX_ERR_UNREACH;
}

static void tool_connected(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                           void *cbdata)
{
    pmix_proc_t proc;
    char nspace[PMIX_MAX_NSLEN + 1];
    snprintf(nspace, sizeof(nspace), "herd-tool-%d-%u", (int) getppid(),
             atomic_fetch_add(&helper.next_tool, 1u));
    PMIX_LOAD_PROCID(&proc, nspace, 0);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, &proc, cbdata);
    }
}

static pmix_status_t query_upcall(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    req_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return PMIX_ERR_NOMEM;
    }
    r->type = REQ_QUERY;
    r->cbfunc = cbfunc;
    r->cbdata = cbdata;
    if (nqueries > 0) {
        PMIX_QUERY_CREATE(r->queries, nqueries);
        r->nqueries = nqueries;
    }
    for (size_t i = 0; i < nqueries; ++i) {
        PMIX_ARGV_COPY(r->queries[i].keys, queries[i].keys);
        if (queries[i].nqual > 0) {
            PMIX_INFO_CREATE(r->queries[i].qualifiers, queries[i].nqual);
            r->queries[i].nqual = queries[i].nqual;
            for (size_t j = 0; j < queries[i].nqual; ++j) {
                PMIx_Info_xfer(&r->queries[i].qualifiers[j], &queries[i].qualifiers[j]);
            }
        }
    }
    /* process tables only when a key needs them: the host may have to ask its session daemons */
    char **global = NULL, **local = NULL;
    pmix_status_t prc = orte_pmix_query_tables(r->queries, r->nqueries, NULL, &global, &local);
    bool with_procs = PMIX_SUCCESS == prc && (NULL != global || NULL != local);
    orte_pmix_query_free_names(global);
    orte_pmix_query_free_names(local);
    opal_buffer_t request;
    opal_buffer_init(&request);
    opal_buffer_pack_uint8(&request, MSG_JOBS);
    opal_buffer_pack_bool(&request, with_procs);
    prc = ask_host(r, &request, true);
    opal_buffer_destruct(&request);
    return prc;
}

/* What a job-control request asks for: a signal, or 0 for nothing herd does. */
static int directives_signal(const pmix_info_t directives[], size_t ndirs)
{
    for (size_t i = 0; i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_JOB_CTRL_KILL) && PMIX_INFO_TRUE(&directives[i])) {
            return SIGKILL;
        }
        if (PMIX_CHECK_KEY(&directives[i], PMIX_JOB_CTRL_TERMINATE) &&
            PMIX_INFO_TRUE(&directives[i])) {
            return SIGTERM;
        }
        if (PMIX_CHECK_KEY(&directives[i], PMIX_JOB_CTRL_SIGNAL) &&
            PMIX_INT == directives[i].value.type) {
            return directives[i].value.data.integer;
        }
    }
    return 0;
}

static pmix_status_t job_control_upcall(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                        size_t ntargets, const pmix_info_t directives[],
                                        size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    int signo = directives_signal(directives, ndirs);
    if (signo <= 0 || signo >= 65 || 0 == ntargets) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    req_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        return PMIX_ERR_NOMEM;
    }
    r->type = REQ_JOB_CONTROL;
    r->cbfunc = cbfunc;
    r->cbdata = cbdata;
    r->pending = (int) ntargets;
    r->status = PMIX_SUCCESS;
    pmix_status_t prc = PMIX_SUCCESS;
    for (size_t i = 0; PMIX_SUCCESS == prc && i < ntargets; ++i) {
        opal_buffer_t request;
        opal_buffer_init(&request);
        opal_buffer_pack_uint8(&request, MSG_SIGNAL);
        opal_buffer_pack_string(&request, targets[i].nspace);
        opal_buffer_pack_int32(&request, signo);
        /* the library lets only our own user connect (its rendezvous files are ours) */
        opal_buffer_pack_uint32(&request, (uint32_t) getuid());
        prc = ask_host(r, &request, 0 == i);
        opal_buffer_destruct(&request);
    }
    return prc;
}

static pmix_server_module_t toolsrv_pmix_module_upcalls = {
    .query = query_upcall,
    .tool_connected = tool_connected,
    .job_control = job_control_upcall,
};

static void release_results(void *cbdata)
{
    pmix_info_t *results = ((void **) cbdata)[0];
    size_t n = (size_t) (uintptr_t) ((void **) cbdata)[1];
    PMIX_INFO_FREE(results, n);
    free(cbdata);
}

static pmix_proc_state_t pmix_state(uint8_t state, int exit_code)
{
    switch (state) {
    case ORTE_JOB_PROC_STARTING:
        return PMIX_PROC_STATE_LAUNCH_UNDERWAY;
    case ORTE_JOB_PROC_RUNNING:
        return PMIX_PROC_STATE_RUNNING;
    case ORTE_JOB_PROC_EXITED:
        return 0 == exit_code ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_NON_ZERO;
    case ORTE_JOB_PROC_START_FAILED:
        return PMIX_PROC_STATE_FAILED_TO_START;
    default:
        return PMIX_PROC_STATE_UNDEF;
    }
}

/* The host's jobs, as its answer carries them (strings point into the arrays kept). */
typedef struct {
    orte_pmix_query_nspace_t *nss;
    orte_pmix_query_proc_t **procs;
    char **strings;
    size_t num_strings;
    uint32_t n;
} jobs_t;

static void jobs_release(jobs_t *j)
{
    for (uint32_t i = 0; NULL != j->procs && i < j->n; ++i) {
        free(j->procs[i]);
    }
    for (size_t i = 0; i < j->num_strings; ++i) {
        free(j->strings[i]);
    }
    free(j->strings);
    free(j->procs);
    free(j->nss);
}

/* Unpack a string and keep it for jobs_release. */
static int keep_string(opal_buffer_t *b, jobs_t *j, const char **out)
{
    char *s = NULL;
    int rc = opal_buffer_unpack_string(b, &s);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    char **grown = realloc(j->strings, (j->num_strings + 1) * sizeof(char *));
    if (NULL == grown) {
        free(s);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    j->strings = grown;
    j->strings[j->num_strings++] = s;
    *out = NULL != s ? s : "";
    return HERD_SUCCESS;
}

static int unpack_jobs(opal_buffer_t *b, jobs_t *j)
{
    int rc = opal_buffer_unpack_uint32(b, &j->n);
    if (HERD_SUCCESS != rc || j->n > (1u << 20)) {
        return HERD_SUCCESS != rc ? rc : HERD_ERR_UNPACK_FAILURE;
    }
    j->nss = calloc(j->n + 1, sizeof(*j->nss));
    j->procs = calloc(j->n + 1, sizeof(*j->procs));
    if (NULL == j->nss || NULL == j->procs) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < j->n; ++i) {
        orte_pmix_query_nspace_t *ns = &j->nss[i];
        bool aborting = false;
        uint32_t k = 0;
        if (HERD_SUCCESS != (rc = keep_string(b, j, &ns->name)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &ns->num_procs)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_bool(b, &aborting)) ||
            HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &k))) {
            return rc;
        }
        ns->status = aborting ? PMIX_ERR_JOB_ABORTED : PMIX_SUCCESS;
        if (k > opal_buffer_remaining(b)) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        j->procs[i] = calloc(k + 1, sizeof(**j->procs));
        if (NULL == j->procs[i]) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        for (uint32_t p = 0; p < k; ++p) {
            orte_pmix_query_proc_t *pr = &j->procs[i][p];
            int32_t pid = 0, exit_code = 0;
            uint8_t state = 0;
            if (HERD_SUCCESS != (rc = opal_buffer_unpack_uint32(b, &pr->rank)) ||
                HERD_SUCCESS != (rc = keep_string(b, j, &pr->hostname)) ||
                HERD_SUCCESS != (rc = keep_string(b, j, &pr->executable)) ||
                HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &pid)) ||
                HERD_SUCCESS != (rc = opal_buffer_unpack_uint8(b, &state)) ||
                HERD_SUCCESS != (rc = opal_buffer_unpack_int32(b, &exit_code))) {
                return rc;
            }
            pr->pid = (pid_t) pid;
            pr->exit_code = exit_code;
            pr->state = pmix_state(state, exit_code);
        }
        ns->procs = j->procs[i];
        ns->num_known = k;
    }
    return HERD_SUCCESS;
}

/* The host answered a query: the answers, key by key. */
static void answer_query(req_t *r, int status, opal_buffer_t *b)
{
    jobs_t j = {0};
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t prc = PMIX_ERR_NOMEM;
    if (HERD_SUCCESS == status && HERD_SUCCESS == unpack_jobs(b, &j)) {
        orte_pmix_query_facts_t facts = {.nspaces = j.nss,
                                         .num_nspaces = j.n,
                                         .hostname = helper.hostname,
                                         .functions = functions,
                                         .num_functions = NUM_FUNCTIONS};
        prc = orte_pmix_query_answer(r->queries, r->nqueries, &facts, &results, &nresults);
    }
    jobs_release(&j);
    void **release = (PMIX_SUCCESS == prc) ? calloc(2, sizeof(void *)) : NULL;
    if (NULL != release) {
        release[0] = results;
        release[1] = (void *) (uintptr_t) nresults;
        r->cbfunc(prc, results, nresults, r->cbdata, release_results, release);
        return;
    }
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    r->cbfunc(PMIX_SUCCESS == prc ? PMIX_ERR_NOMEM : prc, NULL, 0, r->cbdata, NULL, NULL);
}

/* Exactly len bytes (blocking); false at EOF or on an error. */
static bool read_all(int fd, uint8_t *data, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, data, len);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        data += n;
        len -= (size_t) n;
    }
    return true;
}

/* One answer from the host; false once it is gone. */
static bool helper_read_answer(void)
{
    uint8_t header[4];
    if (!read_all(helper.fd, header, sizeof(header))) {
        return false;
    }
    size_t len = ((size_t) header[0] << 24) | ((size_t) header[1] << 16) |
                 ((size_t) header[2] << 8) | header[3];
    uint8_t *data = len <= FRAME_MAX ? malloc(len > 0 ? len : 1) : NULL;
    if (NULL == data || !read_all(helper.fd, data, len)) {
        free(data);
        return false;
    }
    opal_buffer_t b;
    uint32_t id = 0;
    int32_t status = 0;
    opal_buffer_init(&b);
    if (HERD_SUCCESS == opal_buffer_load(&b, data, len) &&
        HERD_SUCCESS == opal_buffer_unpack_uint32(&b, &id) &&
        HERD_SUCCESS == opal_buffer_unpack_int32(&b, &status)) {
        req_t *r = NULL;
        pthread_mutex_lock(&helper.lock);
        for (req_t **p = &helper.pending; NULL != *p; p = &(*p)->next) {
            if ((*p)->id == id) {
                r = *p;
                if (REQ_QUERY == r->type || 0 == --r->pending) {
                    *p = r->next; /* complete: ours now */
                } else {
                    if (HERD_SUCCESS != status) {
                        r->status =
                            HERD_ERR_AUTH == status ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERR_NOT_FOUND;
                    }
                    r = NULL; /* more answers to come */
                }
                break;
            }
        }
        pthread_mutex_unlock(&helper.lock);
        if (NULL != r && REQ_QUERY == r->type) {
            answer_query(r, status, &b);
            req_free(r);
        } else if (NULL != r) {
            if (HERD_SUCCESS != status) {
                r->status = HERD_ERR_AUTH == status ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERR_NOT_FOUND;
            }
            r->cbfunc(r->status, NULL, 0, r->cbdata, NULL, NULL);
            req_free(r);
        }
    }
    opal_buffer_destruct(&b);
    free(data);
    return true;
}

static const char *tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    return (NULL != dir && '\0' != dir[0]) ? dir : "/tmp";
}

/* Where the server's rendezvous files go: a folder of its own, <tmpdir>/herd-<uid>/pmix-<host
 * pid>. OpenPMIx 4.2.2's pps ignores --pid, --uri and --namespace and connects to the system
 * server, else to the one server it finds under $TMPDIR: TMPDIR=<this folder> pps picks ours.
 * Set in the host before the helper is forked (the helper and the host both use it). */
static char server_dir[PATH_MAX / 2];

static int make_server_dir(pid_t host_pid)
{
    char base[PATH_MAX];
    int rc = opal_private_tmpdir(base, sizeof(base));
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    if ((size_t) snprintf(server_dir, sizeof(server_dir), "%s/pmix-%d", base, (int) host_pid) >=
        sizeof(server_dir)) {
        return HERD_ERR_BAD_PARAM;
    }
    return (0 == mkdir(server_dir, 0700) || EEXIST == errno) ? HERD_SUCCESS : HERD_ERR_IN_ERRNO;
}

/* The folder and what the server left in it (files, and its store folders' files). */
static void remove_server_dir(void)
{
    DIR *dir = opendir(server_dir);
    struct dirent *e;
    while (NULL != dir && NULL != (e = readdir(dir))) {
        char path[PATH_MAX * 2];
        if ('.' == e->d_name[0]) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", server_dir, e->d_name);
        if (0 != unlink(path) && (EISDIR == errno || EPERM == errno)) {
            DIR *sub = opendir(path);
            struct dirent *f;
            while (NULL != sub && NULL != (f = readdir(sub))) {
                char inner[PATH_MAX * 3];
                if ('.' != f->d_name[0]) {
                    snprintf(inner, sizeof(inner), "%s/%s", path, f->d_name);
                    unlink(inner);
                }
            }
            if (NULL != sub) {
                closedir(sub);
            }
            rmdir(path);
        }
    }
    if (NULL != dir) {
        closedir(dir);
    }
    rmdir(server_dir);
}

/* The server's namespace names one of its rendezvous files: unique per host process. */
static void server_nspace(pid_t host_pid, char *nspace, size_t size)
{
    snprintf(nspace, size, "herd-toolsrv-%d", (int) host_pid);
}

/* Whether a live process is this host's PMIx system server already (its rendezvous file names
 * its pid on the third line). */
static bool other_system_server(void)
{
    char path[PATH_MAX], line[64];
    snprintf(path, sizeof(path), "%s/pmix.sys.%s", tmpdir(), helper.hostname);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return false;
    }
    long pid = 0;
    for (int i = 0; i < 3 && NULL != fgets(line, sizeof(line), f); ++i) {
        pid = strtol(line, NULL, 10);
    }
    fclose(f);
    return pid > 0 && (0 == kill((pid_t) pid, 0) || EPERM == errno);
}

static pmix_status_t server_init(pid_t host_pid, bool system)
{
    pmix_info_t info[5];
    size_t n = 0;
    bool yes = true;
    char nspace[64];
    server_nspace(host_pid, nspace, sizeof(nspace));
    PMIX_INFO_LOAD(&info[n], PMIX_SERVER_NSPACE, nspace, PMIX_STRING);
    n++;
    PMIX_INFO_LOAD(&info[n], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    n++;
    PMIX_INFO_LOAD(&info[n], PMIX_SERVER_TMPDIR, server_dir, PMIX_STRING);
    n++;
    PMIX_INFO_LOAD(&info[n], PMIX_SYSTEM_TMPDIR, tmpdir(), PMIX_STRING);
    n++;
    if (system) {
        PMIX_INFO_LOAD(&info[n], PMIX_SERVER_SYSTEM_SUPPORT, &yes, PMIX_BOOL);
        n++;
    }
    pmix_status_t prc = PMIx_server_init(&toolsrv_pmix_module_upcalls, info, n);
    for (size_t i = 0; i < n; ++i) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    return prc;
}

/* The rendezvous file of a server with this pid (or namespace): what a tool's --pid reads. */
static void rendezvous_name(pid_t pid, char *path, size_t size)
{
    int n = snprintf(path, size, "%s/pmix.%s.tool.%d", server_dir, helper.hostname, (int) pid);
    if (n < 0 || (size_t) n >= size) {
        path[0] = '\0'; /* too long to be a file we made */
    }
}

/* A tool's --pid PID reads pmix.<host>.tool.PID and checks the pid written inside: users know
 * the host's pid (herdrun's, the DVM root's in its contact file), so the helper writes a copy of
 * its own file naming the host's pid, that tools reach it by. */
static int write_host_rendezvous(pid_t host_pid)
{
    char ours[PATH_MAX], theirs[PATH_MAX], tmp[PATH_MAX + 8];
    char uri[1024] = "", version[64] = "";
    rendezvous_name(getpid(), ours, sizeof(ours));
    rendezvous_name(host_pid, theirs, sizeof(theirs));
    FILE *in = fopen(ours, "r");
    if (NULL == in) {
        return HERD_ERR_IN_ERRNO;
    }
    bool ok = NULL != fgets(uri, sizeof(uri), in) && NULL != fgets(version, sizeof(version), in);
    fclose(in);
    if (!ok) {
        return HERD_ERR_NOT_FOUND;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", theirs);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    dprintf(fd, "%s%s%d\n", uri, version, (int) host_pid);
    close(fd);
    return 0 == rename(tmp, theirs) ? HERD_SUCCESS : HERD_ERR_IN_ERRNO;
}

/* The host's system-server file, if that helper wrote it. */
static void remove_system_file(pid_t helper_pid)
{
    char path[PATH_MAX], line[64];
    snprintf(path, sizeof(path), "%s/pmix.sys.%s", tmpdir(), helper.hostname);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return;
    }
    long pid = 0;
    for (int i = 0; i < 3 && NULL != fgets(line, sizeof(line), f); ++i) {
        pid = strtol(line, NULL, 10);
    }
    fclose(f);
    if (pid == (long) helper_pid) {
        unlink(path);
    }
}

/* What a helper that died left: its rendezvous files and its store folders (the folder is made
 * again for the next one). */
static void remove_helper_files(void)
{
    remove_server_dir();
}

/* The helper's life: start the server, tell the host, serve until the host is gone. */
static void __attribute__((noreturn)) helper_main(int fd, pid_t host_pid, bool system)
{
    /* nothing of the host's: its signal handlers and descriptors are not ours */
    for (int sig = 1; sig < NSIG; ++sig) {
        if (SIGKILL != sig && SIGSTOP != sig) {
            signal(sig, SIGPIPE == sig ? SIG_IGN : SIG_DFL);
        }
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* no PR_SET_PDEATHSIG: a host that dies (even of SIGKILL) closes its end of the socket,
     * and the helper then cleans up (its rendezvous files) before it goes */
    if (getppid() != host_pid) {
        _exit(0);
    }
    if (fd != 3) {
        dup2(fd, 3);
        fd = 3;
    }
    for (int other = 4; other < 1024; ++other) {
        close(other);
    }
    helper.fd = fd;
    gethostname(helper.hostname, sizeof(helper.hostname) - 1);
    /* a herdrun started under another launcher's PMIx must not become that one's client */
    extern char **environ;
    for (size_t i = 0; NULL != environ[i];) {
        if (0 == strncmp(environ[i], "PMIX_", 5) && 0 != strncmp(environ[i], "PMIX_MCA_", 9)) {
            char name[256];
            size_t len = strcspn(environ[i], "=");
            snprintf(name, sizeof(name), "%.*s", (int) (len < 255 ? len : 255), environ[i]);
            unsetenv(name);
        } else {
            ++i;
        }
    }
    pmix_status_t prc = server_init(host_pid, system && !other_system_server());
    if (PMIX_SUCCESS != prc && system) {
        /* another system server runs here: by pid or URI only */
        prc = server_init(host_pid, false);
    }
    if (PMIX_SUCCESS == prc) {
        (void) orte_pmix_query_register(functions, NUM_FUNCTIONS);
        if (HERD_SUCCESS != write_host_rendezvous(host_pid)) {
            prc = PMIX_ERR_NOT_AVAILABLE;
        }
    }
    opal_buffer_t ready;
    opal_buffer_init(&ready);
    opal_buffer_pack_uint32(&ready, 0);
    opal_buffer_pack_int32(&ready, (int32_t) prc);
    pthread_mutex_lock(&helper.lock);
    send_frame(fd, &ready);
    pthread_mutex_unlock(&helper.lock);
    opal_buffer_destruct(&ready);
    while (PMIX_SUCCESS == prc && helper_read_answer()) {
    }
    char host_file[PATH_MAX];
    rendezvous_name(host_pid, host_file, sizeof(host_file));
    unlink(host_file);
    if (PMIX_SUCCESS == prc) {
        PMIx_server_finalize();
    }
    if (getppid() != host_pid) {
        remove_server_dir(); /* the host died: nobody else will */
    }
    _exit(0);
}

/* ------------------------------------------------------------------------------------------ */
/* the host's side */

struct orte_toolsrv {
    const orte_toolsrv_host_t *host;
    int fd;
    pid_t pid; /* the helper */
    opal_event_t *event;
    uint8_t *in;
    size_t in_used, in_size;
    struct timespec started; /* the helper's start */
    int quick_deaths;        /* helpers in a row that died within a second */
};

/* A helper that dies (OpenPMIx's crash on a tool's query) is started again, unless this many in
 * a row died as soon as they started (the server cannot start here). */
#define MAX_QUICK_DEATHS 3

/* A question of the helper being answered by the host (the helper may be gone by then). */
typedef struct {
    orte_toolsrv_t *srv;
    uint32_t id;
} host_ask_t;

static orte_toolsrv_t *active; /* the helper's host side (one per process) */

static void pack_jobs(opal_buffer_t *b, const orte_toolsrv_job_t *jobs, size_t n)
{
    opal_buffer_pack_uint32(b, (uint32_t) n);
    for (size_t i = 0; i < n; ++i) {
        opal_buffer_pack_string(b, jobs[i].nspace);
        opal_buffer_pack_uint32(b, jobs[i].num_procs);
        opal_buffer_pack_bool(b, jobs[i].aborting);
        uint32_t k = NULL != jobs[i].procs ? jobs[i].num_known : 0;
        opal_buffer_pack_uint32(b, k);
        for (uint32_t p = 0; p < k; ++p) {
            const orte_toolsrv_proc_t *pr = &jobs[i].procs[p];
            opal_buffer_pack_uint32(b, pr->rank);
            opal_buffer_pack_string(b, pr->host);
            opal_buffer_pack_string(b, pr->executable);
            opal_buffer_pack_int32(b, pr->pid);
            opal_buffer_pack_uint8(b, pr->state);
            opal_buffer_pack_int32(b, pr->exit_code);
        }
    }
}

static void host_jobs_cb(int status, const orte_toolsrv_job_t *jobs, size_t n, void *cbdata)
{
    host_ask_t *ask = cbdata;
    if (ask->srv == active && NULL != active && active->fd >= 0) {
        opal_buffer_t b;
        opal_buffer_init(&b);
        opal_buffer_pack_uint32(&b, ask->id);
        opal_buffer_pack_int32(&b, status);
        if (HERD_SUCCESS == status) {
            pack_jobs(&b, jobs, n);
        }
        send_frame(active->fd, &b);
        opal_buffer_destruct(&b);
    }
    free(ask);
}

static int helper_start(orte_toolsrv_t *srv);

static void helper_gone(orte_toolsrv_t *srv)
{
    int wstatus = 0;
    opal_event_free(srv->event);
    srv->event = NULL;
    close(srv->fd);
    srv->fd = -1;
    srv->in_used = 0;
    /* it closed its end as it died: a moment at most */
    pid_t got = 0;
    for (int i = 0; srv->pid > 0 && i < 200 && 0 == (got = waitpid(srv->pid, &wstatus, WNOHANG));
         ++i) {
        usleep(5000);
    }
    if (got != srv->pid) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, &wstatus, 0);
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    bool quick = now.tv_sec - srv->started.tv_sec < 2;
    srv->quick_deaths = quick ? srv->quick_deaths + 1 : 0;
    bool again = srv->quick_deaths < MAX_QUICK_DEATHS;
    opal_output_verbose(1, orte_toolsrv_base_framework.output,
                        "toolsrv pmix: the PMIx tool server of %s (pid %d) ended (%s %d)%s",
                        srv->host->name, (int) srv->pid, WIFSIGNALED(wstatus) ? "signal" : "status",
                        WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus),
                        again ? ": starting another" : "; no more tools");
    remove_helper_files();
    remove_system_file(srv->pid);
    srv->pid = -1;
    if (again) {
        (void) helper_start(srv);
    }
}

static void host_serve(orte_toolsrv_t *srv, opal_buffer_t *b)
{
    uint32_t id = 0;
    void *request = NULL;
    size_t len = 0;
    uint8_t type = 0;
    int32_t status = 0;
    opal_buffer_t r;
    opal_buffer_init(&r);
    if (HERD_SUCCESS != opal_buffer_unpack_uint32(b, &id)) {
        return;
    }
    if (0 == id) { /* ready */
        if (HERD_SUCCESS == opal_buffer_unpack_int32(b, &status)) {
            opal_output_verbose(PMIX_SUCCESS == status ? 5 : 1, orte_toolsrv_base_framework.output,
                                "toolsrv pmix: %s (pid %d): PMIx tool server (pid %d): %s",
                                srv->host->name, (int) getpid(), (int) srv->pid,
                                PMIx_Error_string(status));
        }
        return;
    }
    if (HERD_SUCCESS != opal_buffer_unpack_bytes(b, &request, &len) ||
        HERD_SUCCESS != opal_buffer_load(&r, request, len) ||
        HERD_SUCCESS != opal_buffer_unpack_uint8(&r, &type)) {
        free(request);
        opal_buffer_destruct(&r);
        return;
    }
    free(request);
    if (MSG_JOBS == type) {
        bool with_procs = false;
        host_ask_t *ask = malloc(sizeof(*ask));
        if (NULL != ask && HERD_SUCCESS == opal_buffer_unpack_bool(&r, &with_procs)) {
            ask->srv = srv;
            ask->id = id;
            srv->host->jobs(with_procs, host_jobs_cb, ask, srv->host->arg);
        } else {
            free(ask);
        }
    } else if (MSG_SIGNAL == type) {
        char *nspace = NULL;
        int32_t signo = 0;
        uint32_t uid = 0;
        int rc = HERD_ERR_BAD_PARAM;
        if (HERD_SUCCESS == opal_buffer_unpack_string(&r, &nspace) && NULL != nspace &&
            HERD_SUCCESS == opal_buffer_unpack_int32(&r, &signo) &&
            HERD_SUCCESS == opal_buffer_unpack_uint32(&r, &uid)) {
            rc = srv->host->signal_job(nspace, signo, uid, srv->host->arg);
        }
        free(nspace);
        opal_buffer_t answer;
        opal_buffer_init(&answer);
        opal_buffer_pack_uint32(&answer, id);
        opal_buffer_pack_int32(&answer, rc);
        send_frame(srv->fd, &answer);
        opal_buffer_destruct(&answer);
    }
    opal_buffer_destruct(&r);
}

static void host_recv_cb(int fd, short what, void *arg)
{
    orte_toolsrv_t *srv = arg;
    for (;;) {
        if (srv->in_size - srv->in_used < 4096) {
            size_t size = srv->in_size ? 2 * srv->in_size : 16384;
            uint8_t *grown = size <= FRAME_MAX + 4 ? realloc(srv->in, size) : NULL;
            if (NULL == grown) {
                helper_gone(srv);
                return;
            }
            srv->in = grown;
            srv->in_size = size;
        }
        ssize_t n = read(fd, srv->in + srv->in_used, srv->in_size - srv->in_used);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && EAGAIN == errno) {
            break;
        }
        if (n <= 0) {
            helper_gone(srv);
            return;
        }
        srv->in_used += (size_t) n;
    }
    while (srv->in_used >= 4) {
        size_t len = ((size_t) srv->in[0] << 24) | ((size_t) srv->in[1] << 16) |
                     ((size_t) srv->in[2] << 8) | srv->in[3];
        if (len > FRAME_MAX) {
            helper_gone(srv);
            return;
        }
        if (srv->in_used < 4 + len) {
            break;
        }
        opal_buffer_t b;
        opal_buffer_init(&b);
        if (HERD_SUCCESS == opal_buffer_load(&b, srv->in + 4, len)) {
            host_serve(srv, &b);
        }
        opal_buffer_destruct(&b);
        memmove(srv->in, srv->in + 4 + len, srv->in_used - 4 - len);
        srv->in_used -= 4 + len;
    }
}

static void toolsrv_pmix_stop(orte_toolsrv_t *srv);

/* Fork the helper (the host has no thread of its own: fork is safe) and listen to it. */
static int helper_start(orte_toolsrv_t *srv)
{
    int sv[2];
    if (0 != socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        return HERD_ERR_IN_ERRNO;
    }
    int rc = make_server_dir(getpid());
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    fflush(stdout);
    fflush(stderr);
    clock_gettime(CLOCK_MONOTONIC, &srv->started);
    pid_t host_pid = getpid();
    pid_t pid = fork();
    if (0 == pid) {
        close(sv[0]);
        helper_main(sv[1], host_pid, srv->host->system_server && toolsrv_pmix_state.system_server);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return HERD_ERR_IN_ERRNO;
    }
    srv->fd = sv[0];
    srv->pid = pid;
    fcntl(srv->fd, F_SETFL, fcntl(srv->fd, F_GETFL) | O_NONBLOCK);
    rc = opal_event_fd_create(srv->host->base, srv->fd, OPAL_EVENT_READ | OPAL_EVENT_PERSIST,
                              host_recv_cb, srv, &srv->event);
    if (HERD_SUCCESS == rc) {
        opal_event_add(srv->event, NULL);
    }
    return rc;
}

static int toolsrv_pmix_start(const orte_toolsrv_host_t *host, orte_toolsrv_t **server)
{
    if (NULL != active) {
        return HERD_ERR_NOT_AVAILABLE; /* one tool server per process */
    }
    gethostname(helper.hostname, sizeof(helper.hostname) - 1);
    orte_toolsrv_t *srv = calloc(1, sizeof(*srv));
    if (NULL == srv) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    srv->host = host;
    srv->fd = -1;
    int rc = helper_start(srv);
    if (HERD_SUCCESS != rc) {
        toolsrv_pmix_stop(srv);
        return rc;
    }
    active = srv;
    *server = srv;
    return HERD_SUCCESS;
}

static void toolsrv_pmix_stop(orte_toolsrv_t *srv)
{
    if (NULL == srv) {
        return;
    }
    if (active == srv) {
        active = NULL;
    }
    if (NULL != srv->event) {
        opal_event_free(srv->event);
    }
    if (srv->fd >= 0) {
        close(srv->fd);
    }
    /* Killed rather than let finalize its server: that took a tenth of a second, at the end of
     * every job; what it would remove is ours to remove (its folder, its system-server file). */
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        remove_system_file(srv->pid);
    }
    remove_server_dir();
    free(srv->in);
    free(srv);
}

static const orte_toolsrv_module_t toolsrv_pmix_module = {
    .name = "pmix",
    .start = toolsrv_pmix_start,
    .stop = toolsrv_pmix_stop,
};

static int toolsrv_pmix_register(const opal_mca_component_t *component)
{
    toolsrv_pmix_state.priority = TOOLSRV_PMIX_DEFAULT_PRIORITY;
    toolsrv_pmix_state.system_server = true;
    int index = opal_mca_var_register(component, "priority",
                                      "Priority of the pmix toolsrv component (herdrun and the DVM "
                                      "root serve PMIx tools: pps, pattrs, pquery)",
                                      OPAL_MCA_VAR_INT, &toolsrv_pmix_state.priority);
    if (index >= 0) {
        /* OpenPMIx 4.2.2's pps connects to the system server first (it ignores --pid): the
         * DVM root is it, unless another process is already */
        index = opal_mca_var_register(component, "system_server",
                                      "The DVM root (herd-dvm) is this host's PMIx system server, "
                                      "unless another process is already: PMIx tools (pps) "
                                      "connect to it first",
                                      OPAL_MCA_VAR_BOOL, &toolsrv_pmix_state.system_server);
    }
    return index < 0 ? index : HERD_SUCCESS;
}

static int toolsrv_pmix_query(const opal_mca_component_t *component, void **module, int *priority)
{
    *module = (void *) &toolsrv_pmix_module;
    *priority = toolsrv_pmix_state.priority;
    return HERD_SUCCESS;
}

OPAL_MCA_COMPONENT(orte, toolsrv, pmix, .register_params = toolsrv_pmix_register,
                   .query = toolsrv_pmix_query);
