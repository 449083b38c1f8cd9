/* SPDX-License-Identifier: BSD-3-Clause */
/* The client backend: the job runs on a persistent DVM (herd-dvm --report-uri FILE) that
 * herdrun reaches as a tool (--dvm-uri FILE); its root only broadcasts the launch, and tools can
 * attach to the job's output while it runs. */
#include "herd_config.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "opal/util/show_help.h"
#include "orte/runtime/launch_internal.h"

static int client_name_job(launch_job_t *job, char *jobid, size_t size)
{
    orte_dvm_client_t *client = job->mode.client.client;
    job->spec->seq = orte_dvm_client_seq(client);
    snprintf(jobid, size, "%s.%u", orte_dvm_client_id(client), job->spec->seq);
    return HERD_SUCCESS;
}

static const orte_inventory_t *client_inventory(const launch_job_t *job, uint32_t node_index)
{
    return orte_dvm_client_inventory(job->mode.client.client, node_index);
}

static bool client_node_up(const launch_job_t *job, uint32_t node_index)
{
    return orte_dvm_client_node_up(job->mode.client.client, node_index);
}

/* herd-ps asks about the job, through the root. */
typedef struct {
    orte_dvm_client_t *client;
    uint32_t qid;
} client_query_t;

static void client_answer_cb(launch_job_t *job, int status, const opal_buffer_t *answer,
                             void *arg)
{
    client_query_t *q = arg;
    orte_dvm_client_answer(q->client, q->qid, status, answer);
    free(q);
}

static void client_query_cb(uint32_t qid, uint32_t what, void *arg)
{
    launch_job_t *job = arg;
    client_query_t *q = malloc(sizeof(*q));
    if (NULL == q) {
        orte_dvm_client_answer(job->mode.client.client, qid, HERD_ERR_OUT_OF_RESOURCE, NULL);
        return;
    }
    q->client = job->mode.client.client;
    q->qid = qid;
    launch_tools_query(job, what, client_answer_cb, q);
}

/* herd-cancel, through the root (which checked that its user owns the job). */
static void client_signal_cb(int signo, uint32_t uid, int32_t pid, void *arg)
{
    launch_job_cancel(arg, signo);
}

/* The root says whether the job waits for session slots (said to the user once per node) or
 * got them: from then on its session daemons have herdrun_start_timeout to check in. */
static void client_queue_cb(const char *jobid, const char *waiting_on, void *arg)
{
    launch_job_t *job = arg;
    if (0 != strcmp(jobid, job->spec->jobid) || !job->state.queued) {
        return;
    }
    if (NULL != waiting_on) {
        opal_show_help("help-dvm.txt", "waiting-for-slot", false, jobid, waiting_on);
        return;
    }
    job->state.queued = false;
    struct timeval tv = {.tv_sec = launch_params_start_timeout()};
    opal_event_add(job->state.start_timer, &tv);
}

/* The DVM's root gives the job its session slots (or queues it) and broadcasts the launch; job
 * errors (and the DVM's loss) come back. */
static int client_start(launch_job_t *job, const opal_buffer_t *message)
{
    /* the start timeout counts from when the job has its slots, not while it waits */
    opal_event_del(job->state.start_timer);
    job->state.queued = true;
    orte_dvm_client_set_queue_cb(job->mode.client.client, client_queue_cb, job);
    orte_dvm_client_set_tool_cbs(job->mode.client.client, client_query_cb, client_signal_cb, job);
    int rc = orte_dvm_client_launch(job->mode.client.client, message->base, message->used,
                                    launch_job_error_cb, job);
    if (HERD_SUCCESS != rc) {
        opal_show_help(LAUNCH_HELP_FILE, "launch-send-failed", false, opal_strerror(rc));
        return HERD_ERR_SILENT;
    }
    return HERD_SUCCESS;
}

static void client_loop_ended(launch_job_t *job)
{
    orte_dvm_client_set_tool_cbs(job->mode.client.client, NULL, NULL, NULL);
}

static void client_release(launch_job_t *job)
{
    if (NULL != job->mode.client.client) {
        orte_dvm_client_close(job->mode.client.client);
        job->mode.client.client = NULL;
    }
    if (NULL != job->base) {
        opal_event_base_free(job->base);
        job->base = NULL;
    }
}

const launch_backend_t launch_backend_client = {
    .name = "client",
    .name_job = client_name_job,
    .inventory = client_inventory,
    .node_up = client_node_up,
    .start = client_start,
    .loop_ended = client_loop_ended,
    .release = client_release,
    /* the DVM checks its own */
    .checks_session_frameworks = false,
    .dvm_chooses_slots = true,
};

/* Connect to the DVM whose contact file is uri_file, on a loop of our own. */
int launch_backend_client_open(launch_job_t *job, const char *uri_file)
{
    int rc = opal_event_base_create(&job->base);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    orte_dvm_client_t *client = NULL;
    rc = orte_dvm_client_connect(uri_file, job->base, &client);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    job->mode.client.client = client;
    job->plan.alloc = orte_dvm_client_allocation(client);
    job->plan.launch.radix = orte_dvm_client_radix(client);
    job->io.tool_path = orte_dvm_client_tool_path(client);
    return HERD_SUCCESS;
}
