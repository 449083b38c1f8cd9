/* SPDX-License-Identifier: BSD-3-Clause */
/* A framework that exists only in the tests, to exercise the loader and the selection. */
#ifndef TEST_STUB_FRAMEWORK_H
#define TEST_STUB_FRAMEWORK_H

#include "opal/mca/mca.h"

#define OPAL_MCA_stub_INTERFACE_VERSION 1u

typedef struct {
    const char *name;     /* which component made it */
    bool from_static;     /* built into the test program */
} stub_module_t;

#endif
