/* SPDX-License-Identifier: BSD-3-Clause */
/* toolsrv pmix, the helper process: the OpenPMIx server with PMIX_SERVER_TOOL_SUPPORT (and
 * system-server support for the DVM root), its upcalls (tool connections, queries, job
 * control) turned into questions for the host over the socket pair, the answers built by
 * orte/util/pmix/pmix_query.c; and the rendezvous files, in a folder of their own. Why a helper
 * process, and the host's side: toolsrv_pmix_component.c. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/util/fd.h"
#include "opal/util/tmpdir.h"
#include "orte/mca/toolsrv/pmix/toolsrv_pmix.h"
#include "orte/runtime/job_status.h"
#include "orte/util/pmix/pmix_query.h"

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

int toolsrv_pmix_send_frame(int fd, const opal_buffer_t *b)
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
        rc = toolsrv_pmix_send_frame(helper.fd, &b);
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
    opal_buffer_pack_uint8(&request, TOOLSRV_PMIX_MSG_JOBS);
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
        opal_buffer_pack_uint8(&request, TOOLSRV_PMIX_MSG_SIGNAL);
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
    uint8_t *data = len <= TOOLSRV_PMIX_FRAME_MAX ? malloc(len > 0 ? len : 1) : NULL;
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

const char *toolsrv_pmix_tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    return (NULL != dir && '\0' != dir[0]) ? dir : "/tmp";
}

/* Where the server's rendezvous files go: a folder of its own, <tmpdir>/herd-<uid>/pmix-<host
 * pid>. OpenPMIx 4.2.2's pps ignores --pid, --uri and --namespace and connects to the system
 * server, else to the one server it finds under $TMPDIR: TMPDIR=<this folder> pps picks ours.
 * Set in the host before the helper is forked (the helper and the host both use it). */
static char server_dir[PATH_MAX / 2];

int toolsrv_pmix_make_server_dir(pid_t host_pid)
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
void toolsrv_pmix_remove_server_dir(void)
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
    snprintf(path, sizeof(path), "%s/pmix.sys.%s", toolsrv_pmix_tmpdir(), helper.hostname);
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
    PMIX_INFO_LOAD(&info[n], PMIX_SYSTEM_TMPDIR, toolsrv_pmix_tmpdir(), PMIX_STRING);
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
static void toolsrv_pmix_rendezvous_name(pid_t pid, char *path, size_t size)
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
    toolsrv_pmix_rendezvous_name(getpid(), ours, sizeof(ours));
    toolsrv_pmix_rendezvous_name(host_pid, theirs, sizeof(theirs));
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
void toolsrv_pmix_remove_system_file(pid_t helper_pid)
{
    char path[PATH_MAX], line[64];
    snprintf(path, sizeof(path), "%s/pmix.sys.%s", toolsrv_pmix_tmpdir(), helper.hostname);
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

/* The helper's life: start the server, tell the host, serve until the host is gone. */
void toolsrv_pmix_helper_main(int fd, pid_t host_pid, bool system)
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
    toolsrv_pmix_send_frame(fd, &ready);
    pthread_mutex_unlock(&helper.lock);
    opal_buffer_destruct(&ready);
    while (PMIX_SUCCESS == prc && helper_read_answer()) {
    }
    char host_file[PATH_MAX];
    toolsrv_pmix_rendezvous_name(host_pid, host_file, sizeof(host_file));
    unlink(host_file);
    if (PMIX_SUCCESS == prc) {
        PMIx_server_finalize();
    }
    if (getppid() != host_pid) {
        toolsrv_pmix_remove_server_dir(); /* the host died: nobody else will */
    }
    _exit(0);
}

void toolsrv_pmix_names_init(void)
{
    gethostname(helper.hostname, sizeof(helper.hostname) - 1);
}
