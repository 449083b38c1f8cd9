/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal PMI-1 client for the pmi1 wireup's tests: speaks the "simple" wire protocol over
 * PMI_FD as MPICH does (init, maxes, appnum, kvsname, put, barrier, get of every rank's key and
 * of PMI_process_mapping, finalize). Prints "pmi1_client rank R ok" and exits 0, or says what
 * went wrong and exits 1. With "nofinalize", the last rank leaves without finalize; with "abort N", rank 1
 * sends an abort with exit code N after the gets and exits N; with "spawn RC", rank 0 asks
 * (as MPICH's PMI_Spawn_multiple does) for 2 copies of /bin/echo with one argument and one
 * preput key, and expects spawn_result rc=RC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;
static int rank;

static void die(const char *what, const char *got)
{
    fprintf(stderr, "pmi1_client rank %d: %s (got '%s')\n", rank, what, got);
    exit(1);
}

static void say(const char *line)
{
    size_t len = strlen(line);
    if (write(fd, line, len) != (ssize_t) len) {
        die("cannot write to PMI_FD", line);
    }
}

/* One answer line, into buf. */
static void hear(char *buf, size_t size)
{
    size_t n = 0;
    while (n + 1 < size) {
        char c;
        if (1 != read(fd, &c, 1)) {
            buf[n] = '\0';
            die("PMI_FD closed before an answer", buf);
        }
        if ('\n' == c) {
            break;
        }
        buf[n++] = c;
    }
    buf[n] = '\0';
}

static void expect(const char *prefix, char *buf, size_t size)
{
    hear(buf, size);
    if (0 != strncmp(buf, prefix, strlen(prefix))) {
        die(prefix, buf);
    }
}

int main(int argc, char **argv)
{
    const char *fd_text = getenv("PMI_FD"), *rank_text = getenv("PMI_RANK");
    const char *size_text = getenv("PMI_SIZE");
    if (NULL == fd_text || NULL == rank_text || NULL == size_text) {
        fprintf(stderr, "pmi1_client: PMI_FD, PMI_RANK or PMI_SIZE missing\n");
        return 1;
    }
    fd = atoi(fd_text);
    rank = atoi(rank_text);
    int size = atoi(size_text);
    char buf[2048], kvs[2048], line[4200];
    say("cmd=init pmi_version=1 pmi_subversion=1\n");
    expect("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0", buf, sizeof(buf));
    say("cmd=get_maxes\n");
    expect("cmd=maxes kvsname_max=", buf, sizeof(buf));
    say("cmd=get_appnum\n");
    expect("cmd=appnum appnum=0", buf, sizeof(buf));
    say("cmd=get_my_kvsname\n");
    expect("cmd=my_kvsname kvsname=", buf, sizeof(buf));
    snprintf(kvs, sizeof(kvs), "%s", buf + strlen("cmd=my_kvsname kvsname="));
    snprintf(line, sizeof(line), "cmd=put kvsname=%s key=P%d-card value=card-%d\n", kvs, rank,
             rank);
    say(line);
    expect("cmd=put_result rc=0", buf, sizeof(buf));
    say("cmd=barrier_in\n");
    expect("cmd=barrier_out", buf, sizeof(buf));
    for (int p = 0; p < size; ++p) {
        char want[64];
        snprintf(line, sizeof(line), "cmd=get kvsname=%s key=P%d-card\n", kvs, p);
        say(line);
        hear(buf, sizeof(buf));
        snprintf(want, sizeof(want), "value=card-%d", p);
        if (NULL == strstr(buf, "rc=0") || NULL == strstr(buf, want)) {
            die("a peer's key after the barrier", buf);
        }
    }
    snprintf(line, sizeof(line), "cmd=get kvsname=%s key=PMI_process_mapping\n", kvs);
    say(line);
    expect("cmd=get_result rc=0 msg=success value=(vector,", buf, sizeof(buf));
    snprintf(line, sizeof(line), "cmd=get kvsname=%s key=never-put\n", kvs);
    say(line);
    expect("cmd=get_result rc=-1", buf, sizeof(buf));
    say("cmd=no_such_command\n");
    expect("cmd=no_such_command_result rc=-1", buf, sizeof(buf));
    if (argc > 1 && 0 == strcmp(argv[1], "abort") && 1 == rank) {
        int code = argc > 2 ? atoi(argv[2]) : 1;
        snprintf(line, sizeof(line), "cmd=abort exitcode=%d msg=pmi1_client_gives_up_on_purpose\n",
                 code);
        say(line);
        return code;
    }
    if (argc > 1 && 0 == strcmp(argv[1], "spawn") && 0 == rank) {
        say("mcmd=spawn\nnprocs=2\nexecname=/bin/echo\ntotspawns=1\nspawnssofar=1\n"
            "argcnt=1\narg1=child\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n"
            "preput_val_0=port-0\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/\nendcmd\n");
        char want[64];
        snprintf(want, sizeof(want), "cmd=spawn_result rc=%s", argc > 2 ? argv[2] : "0");
        expect(want, buf, sizeof(buf));
    }
    if (argc > 1 && 0 == strcmp(argv[1], "nofinalize") && rank == size - 1) {
        return 0;
    }
    say("cmd=finalize\n");
    expect("cmd=finalize_ack", buf, sizeof(buf));
    printf("pmi1_client rank %d ok\n", rank);
    return 0;
}
