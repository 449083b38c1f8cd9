/* SPDX-License-Identifier: BSD-3-Clause */
/* What every libFuzzer harness here shares: the entry points it defines, the check that turns a
 * violated invariant into a crash for libFuzzer to report, and the fill byte that shows whether a
 * failed decoder left its output alone. */
#ifndef HERD_TEST_FUZZ_H
#define HERD_TEST_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Outputs are filled with FUZZ_BYTE before a decode; one that fails must leave them so. */
#define FUZZ_BYTE 0xa5

static inline bool fuzz_all_bytes(const void *object, size_t size)
{
    const uint8_t *p = object;
    for (size_t i = 0; i < size; ++i) {
        if (FUZZ_BYTE != p[i]) {
            return false;
        }
    }
    return true;
}

#endif /* HERD_TEST_FUZZ_H */
