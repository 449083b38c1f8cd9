/* What every libFuzzer harness here shares: the entry points it defines and the check that
 * turns a violated invariant into a crash for libFuzzer to report. */
#ifndef HERD_TEST_FUZZ_H
#define HERD_TEST_FUZZ_H

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

#endif /* HERD_TEST_FUZZ_H */
