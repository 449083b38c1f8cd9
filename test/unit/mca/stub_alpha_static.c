/* SPDX-License-Identifier: BSD-3-Clause */
/* alpha, linked into the test program (priority 5), beside a DSO of the same name. */
#define STUB_NAME alpha
#define STUB_PRIORITY 5
#define STUB_STATIC 1
#include "stub_component.c"
