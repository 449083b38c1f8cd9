/* SPDX-License-Identifier: BSD-3-Clause */
/* iofwriter MIB: write MIB mebibytes of 64-byte newline-terminated lines to stdout, 64 KiB per
 * write(2), as a busy program's output looks to a launcher (contrib/bench/iof.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static char block[65536];
    char *end = NULL;
    unsigned long long mib = (argc == 2) ? strtoull(argv[1], &end, 10) : 0;
    if (argc != 2 || NULL == end || '\0' != *end || 0 == mib) {
        fprintf(stderr, "usage: iofwriter MIB\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof(block); ++i) {
        block[i] = (63 == i % 64) ? '\n' : (char) ('a' + i % 26);
    }
    unsigned long long left = mib << 20;
    while (left > 0) {
        size_t n = left < sizeof(block) ? (size_t) left : sizeof(block);
        ssize_t w = write(STDOUT_FILENO, block, n);
        if (w < 0 && EINTR == errno) {
            continue;
        }
        if (w <= 0) {
            fprintf(stderr, "iofwriter: write: %s\n", strerror(errno));
            return 1;
        }
        left -= (unsigned long long) w;
    }
    return 0;
}
