/* SPDX-License-Identifier: BSD-3-Clause */
/* toolsrv pmix's files: the host's side and the component (toolsrv_pmix_component.c), the
 * helper process with the OpenPMIx server (toolsrv_pmix_helper.c), and what they share: the
 * protocol between them and where the rendezvous files go. */
#ifndef ORTE_MCA_TOOLSRV_PMIX_H
#define ORTE_MCA_TOOLSRV_PMIX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "opal/dss/buffer.h"

/* The protocol between the helper and its host: frames of {u32 length, opal buffer}
 *   helper -> host: {u32 id, bytes {u8 MSG_JOBS, bool with_procs}}
 *                   {u32 id, bytes {u8 MSG_SIGNAL, string nspace, i32 signo, u32 uid}}
 *                   {u32 0, i32 pmix status}: the server started (or not)
 *   host -> helper: {u32 id, i32 status} and, for MSG_JOBS, {u32 n, n jobs}
 *                   job: {string nspace, u32 num_procs, bool aborting, u32 k, k procs}
 *                   proc: {u32 rank, string host, string executable, i32 pid, u8 state,
 *                          i32 exit code} */
enum { TOOLSRV_PMIX_MSG_JOBS = 1, TOOLSRV_PMIX_MSG_SIGNAL = 2 };
#define TOOLSRV_PMIX_FRAME_MAX (256u << 20)

int toolsrv_pmix_send_frame(int fd, const opal_buffer_t *buffer);

/* This host's name, as the rendezvous files carry it (call once before the rest). */
void toolsrv_pmix_names_init(void);
const char *toolsrv_pmix_tmpdir(void);
/* The server's folder, <tmpdir>/herd-<uid>/pmix-<host pid>, made (before the helper is
 * forked) and removed with what is in it. */
int toolsrv_pmix_make_server_dir(pid_t host_pid);
void toolsrv_pmix_remove_server_dir(void);
/* The host's system-server file, if that helper wrote it. */
void toolsrv_pmix_remove_system_file(pid_t helper_pid);

/* The helper's life, in the forked process: start the server, serve until the host is gone
 * (fd: its end of the socket pair). */
void toolsrv_pmix_helper_main(int fd, pid_t host_pid, bool system) __attribute__((noreturn));

#endif /* ORTE_MCA_TOOLSRV_PMIX_H */
