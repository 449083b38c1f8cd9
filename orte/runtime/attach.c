/* SPDX-License-Identifier: BSD-3-Clause */
/* Attaching to a running job's output (herdrun --attach JOBID --dvm-uri FILE): the herdrun
 * driving a job on a persistent DVM listens beside the DVM's tool socket; an attached tool gets
 * every fragment of output from then on, framed {u32 rank, u8 stream, u32 length, bytes}, and
 * prints it. The job's own herdrun never waits for a tool (one that falls behind is dropped), so
 * attaching and detaching change nothing for the job or its other readers. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/fd.h"
#include "opal/util/show_help.h"
#include "orte/mca/iof/iof.h"
#include "orte/runtime/dvm_tool.h"
#include "orte/runtime/launch.h"

/* Its messages are herdrun's, in the launch catalog. */
#define ATTACH_HELP_FILE "help-launch.txt"

/* Read exactly len bytes; false at EOF or on an error. */
static bool read_full(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= (size_t) n;
    }
    return true;
}

static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* One fragment (whole lines) to stdout or stderr, each line prefixed as the flags ask. */
static void print_fragment(uint32_t flags, uint32_t seq, uint32_t rank, int stream,
                           const uint8_t *data, size_t len)
{
    int fd = (ORTE_IOF_STDERR == stream) ? STDERR_FILENO : STDOUT_FILENO;
    if (0 == (flags & (ORTE_IOF_FLAG_TAG | ORTE_IOF_FLAG_TIMESTAMP)) ||
        ORTE_IOF_RANK_DAEMON == rank) {
        opal_fd_write_all(fd, data, len);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char prefix[128];
    size_t plen = orte_iof_base_prefix(prefix, sizeof(prefix), flags, seq, rank, stream,
                                       (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec);
    while (len > 0) {
        const uint8_t *nl = memchr(data, '\n', len);
        size_t take = (NULL != nl) ? (size_t) (nl - data) + 1 : len;
        opal_fd_write_all(fd, prefix, plen);
        opal_fd_write_all(fd, data, take);
        if (NULL == nl) {
            opal_fd_write_all(fd, "\n", 1);
        }
        data += take;
        len -= take;
    }
}

int orte_launch_attach(const char *uri_file, const char *job, uint32_t flags, int *exit_status)
{
    char *tool_path = NULL;
    char path[PATH_MAX];
    const char *dot = strrchr(job, '.');
    uint32_t seq = (uint32_t) strtoul(NULL != dot ? dot + 1 : job, NULL, 10);
    int rc = orte_dvm_contact_tool_path(uri_file, &tool_path);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    rc = orte_dvm_job_iof_path(tool_path, seq, path, sizeof(path));
    free(tool_path);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (HERD_SUCCESS != rc || strlen(path) >= sizeof(addr.sun_path)) {
        opal_show_help(ATTACH_HELP_FILE, "attach-path-too-long", false, job, path);
        return HERD_ERR_SILENT;
    }
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || 0 != connect(fd, (struct sockaddr *) &addr, sizeof(addr))) {
        opal_show_help(ATTACH_HELP_FILE, "attach-not-running", false, job, uri_file, path,
                       strerror(errno), uri_file);
        if (fd >= 0) {
            close(fd);
        }
        return HERD_ERR_SILENT;
    }
    uint8_t *data = NULL;
    size_t cap = 0;
    uint8_t header[9];
    while (read_full(fd, header, sizeof(header))) {
        uint32_t rank = get_u32(header);
        int stream = header[4];
        uint32_t len = get_u32(header + 5);
        if ((ORTE_IOF_STDOUT != stream && ORTE_IOF_STDERR != stream) || len > (1u << 30)) {
            opal_show_help(ATTACH_HELP_FILE, "attach-malformed-frame", false, job);
            break;
        }
        if (len > cap) {
            uint8_t *grown = realloc(data, len);
            if (NULL == grown) {
                break;
            }
            data = grown;
            cap = len;
        }
        if (!read_full(fd, data, len)) {
            break;
        }
        print_fragment(flags, seq, rank, stream, data, len);
    }
    free(data);
    close(fd);
    *exit_status = 0; /* the job ended (or dropped us): the job's own status is its herdrun's */
    return HERD_SUCCESS;
}
