/* SPDX-License-Identifier: BSD-3-Clause */
/* delta, linked into the test program; declines unless its priority variable is set >= 0. */
#define STUB_NAME delta
#define STUB_PRIORITY (-1)
#define STUB_STATIC 1
#include "stub_component.c"
