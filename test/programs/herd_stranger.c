/* SPDX-License-Identifier: BSD-3-Clause */
/* A stranger at a daemon's listener, for the tests: opens COUNT connections to HOST:PORT, sends
 * each the bytes of KIND, and holds them for up to SECONDS, noting which the daemon closes.
 *   herd_stranger HOST:PORT KIND COUNT SECONDS
 * KIND: idle (nothing), garbage (an HTTP request), len4g (a 4 GiB length prefix), data (a DATA
 * frame before any handshake), hello (a well-formed HELLO of another DVM), version (a whole
 * header of protocol version 1), partial (the magic and version 9, then nothing).
 * Prints "KIND HOST:PORT: connected C of COUNT" once every connect() has finished (or waited
 * 5 s), and at the end "KIND HOST:PORT: closed by the daemon D of C". Ends early once the daemon
 * closed them all; SIGTERM ends it at once, with the last line. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { CONNECTING, OPEN, CLOSED, FAILED };

static volatile sig_atomic_t stop;

static void on_term(int signo)
{
    (void) signo;
    stop = 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void put_u32(unsigned char *p, unsigned long v)
{
    p[0] = (unsigned char) (v >> 24);
    p[1] = (unsigned char) (v >> 16);
    p[2] = (unsigned char) (v >> 8);
    p[3] = (unsigned char) v;
}

/* A 24-byte overlay frame header (see docs/overlay.md). */
static size_t header(unsigned char *out, int version, int type, int tag, unsigned long src,
                     unsigned long length)
{
    memcpy(out, "HRDO", 4);
    out[4] = (unsigned char) version;
    out[5] = (unsigned char) type;
    out[6] = out[7] = 0;
    out[8] = (unsigned char) (tag >> 8);
    out[9] = (unsigned char) tag;
    out[10] = out[11] = 0;
    put_u32(out + 12, src);
    put_u32(out + 16, 0);
    put_u32(out + 20, length);
    return 24;
}

/* The bytes KIND sends; -1 for an unknown KIND. */
static int payload(const char *kind, unsigned char *out, size_t *length)
{
    size_t n = 0;

    if (0 == strcmp(kind, "idle")) {
        n = 0;
    } else if (0 == strcmp(kind, "garbage")) {
        n = (size_t) sprintf((char *) out, "GET / HTTP/1.1\r\nHost: herd\r\n\r\n");
    } else if (0 == strcmp(kind, "len4g")) {
        memset(out, 0xff, 4);
        memset(out + 4, 'x', 16);
        n = 20;
    } else if (0 == strcmp(kind, "data")) {
        n = header(out, 2, 4, 1, 1, 5);
        memcpy(out + n, "hello", 5);
        n += 5;
    } else if (0 == strcmp(kind, "hello")) {
        /* nonce[32] n radix heartbeat, DVM id "forged", no URI */
        static const char id[] = "forged";
        unsigned char *p = out + 24;
        memset(p, 0x42, 32);
        put_u32(p + 32, 2);
        put_u32(p + 36, 2);
        put_u32(p + 40, 30000);
        p[44] = 0;
        p[45] = (unsigned char) (sizeof(id) - 1);
        memcpy(p + 46, id, sizeof(id) - 1);
        p[46 + sizeof(id) - 1] = 0;
        p[47 + sizeof(id) - 1] = 0;
        n = 48 + sizeof(id) - 1;
        header(out, 2, 1, 0, 1, (unsigned long) n);
        n += 24;
    } else if (0 == strcmp(kind, "version")) {
        n = header(out, 1, 1, 0, 1, 0);
    } else if (0 == strcmp(kind, "partial")) {
        memcpy(out, "HRDO\x09", 5);
        n = 5;
    } else {
        return -1;
    }
    *length = n;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned char bytes[256];
    size_t length = 0;
    struct sockaddr_in address = {.sin_family = AF_INET};
    struct rlimit limit;
    char host[64];
    char *colon;
    int count;
    double seconds;

    if (5 != argc || NULL == (colon = strrchr(argv[1], ':')) ||
        (size_t) (colon - argv[1]) >= sizeof(host) || payload(argv[2], bytes, &length) < 0 ||
        (count = atoi(argv[3])) < 1 || (seconds = atof(argv[4])) <= 0) {
        fprintf(stderr, "usage: herd_stranger HOST:PORT "
                        "idle|garbage|len4g|data|hello|version|partial COUNT SECONDS\n");
        return 2;
    }
    memcpy(host, argv[1], (size_t) (colon - argv[1]));
    host[colon - argv[1]] = '\0';
    address.sin_port = htons((unsigned short) atoi(colon + 1));
    if (1 != inet_pton(AF_INET, host, &address.sin_addr)) {
        fprintf(stderr, "herd_stranger: %s is not an IPv4 address\n", host);
        return 2;
    }
    /* room for every connection */
    if (0 == getrlimit(RLIMIT_NOFILE, &limit) && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &limit);
    }
    signal(SIGTERM, on_term);
    signal(SIGPIPE, SIG_IGN);

    struct pollfd *fds = calloc((size_t) count, sizeof(*fds));
    int *state = calloc((size_t) count, sizeof(*state));
    if (NULL == fds || NULL == state) {
        return 1;
    }
    for (int i = 0; i < count; i++) {
        fds[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        fds[i].events = POLLOUT;
        state[i] = FAILED;
        if (fds[i].fd >= 0 &&
            (0 == connect(fds[i].fd, (struct sockaddr *) &address, sizeof(address)) ||
             EINPROGRESS == errno)) {
            state[i] = CONNECTING;
        }
    }
    double start = now();
    int connected = 0;
    int closed = 0;
    int connecting = 1;
    int said = 0;
    while (!stop && now() - start < seconds) {
        connecting = 0;
        for (int i = 0; i < count; i++) {
            connecting += CONNECTING == state[i];
        }
        if (!said && (0 == connecting || now() - start > 5.0)) {
            printf("%s %s: connected %d of %d\n", argv[2], argv[1], connected, count);
            fflush(stdout);
            said = 1;
        }
        if (said && connected > 0 && closed == connected) {
            break;
        }
        if (poll(fds, (nfds_t) count, 50) < 0 && EINTR != errno) {
            break;
        }
        for (int i = 0; i < count; i++) {
            if (0 == fds[i].revents) {
                continue;
            }
            if (CONNECTING == state[i]) {
                int err = 0;
                socklen_t size = sizeof(err);
                getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &size);
                if (0 != err) {
                    state[i] = FAILED;
                    close(fds[i].fd);
                    fds[i].fd = -1; /* poll() leaves it alone */
                    continue;
                }
                state[i] = OPEN;
                connected++;
                fds[i].events = POLLIN;
                if (length > 0) {
                    (void) send(fds[i].fd, bytes, length, MSG_NOSIGNAL);
                }
            } else if (OPEN == state[i]) {
                unsigned char junk[256];
                ssize_t n = recv(fds[i].fd, junk, sizeof(junk), MSG_DONTWAIT);
                if (0 == n || (n < 0 && EAGAIN != errno && EWOULDBLOCK != errno)) {
                    state[i] = CLOSED;
                    closed++;
                    close(fds[i].fd);
                    fds[i].fd = -1;
                }
            }
        }
    }
    if (!said) {
        printf("%s %s: connected %d of %d\n", argv[2], argv[1], connected, count);
    }
    printf("%s %s: closed by the daemon %d of %d\n", argv[2], argv[1], closed, connected);
    fflush(stdout);
    for (int i = 0; i < count; i++) {
        if (fds[i].fd >= 0) {
            close(fds[i].fd);
        }
    }
    free(fds);
    free(state);
    return 0;
}
