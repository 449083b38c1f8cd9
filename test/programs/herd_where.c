/* SPDX-License-Identifier: BSD-3-Clause */
/* A libherd program for the node-loss restart tests (test_restart_node.sh): prints where this
 * rank runs and where it sees one peer, as its job database says:
 *   herd_where PEER    "rank R on NODE sees rank PEER on NODE"
 * Exits 1 (saying why) when libherd fails. */
#include <herd.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    uint32_t peer = argc > 1 ? (uint32_t) strtoul(argv[1], NULL, 10) : 0;
    uint32_t node = 0;
    if (HERD_SUCCESS != herd_init() || HERD_SUCCESS != herd_peer_node(peer, &node)) {
        fprintf(stderr, "herd_where: %s\n", herd_last_error());
        return 1;
    }
    const char *mine = herd_node_name(herd_node());
    const char *theirs = herd_node_name(node);
    printf("rank %u on %s sees rank %u on %s\n", herd_rank(), NULL != mine ? mine : "?", peer,
           NULL != theirs ? theirs : "?");
    herd_finalize();
    return 0;
}
