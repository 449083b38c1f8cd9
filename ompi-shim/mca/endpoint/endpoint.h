/* SPDX-License-Identifier: BSD-3-Clause */
/* The endpoint framework: the registry of a proc's endpoint slots (docs/endpoint.md). A
 * transport whose configure.m4 declares a tag has a compile-time slot, a plain index
 * proc->endpoint[HERD_ENDPOINT_TAG_X]; a component not known at configure time (a DSO
 * transport) registers a run-time slot by name with the dynamic component, which keeps a table
 * per proc behind the last slot, proc->endpoint[HERD_ENDPOINT_DYNAMIC_INDEX]. */
#ifndef OMPI_MCA_ENDPOINT_H
#define OMPI_MCA_ENDPOINT_H

#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"

#define OPAL_MCA_endpoint_INTERFACE_VERSION 1u

/* Longest run-time slot name (a component name fits). */
#define OMPI_ENDPOINT_MAX_NAME_LEN OPAL_MCA_MAX_NAME_LEN

/* Run-time slots are indexes 0, 1, ... into a proc's dynamic table: their own numbering, not
 * the compile-time tags' (a tag is never passed to get or set). */
struct ompi_endpoint_module {
    const char *name; /* the component's: "static", "dynamic" */
    /* A run-time slot named name (base-checked: a valid name that is no compile-time tag). The
     * same name always gets the same *slot until the framework closes. Works at any time, also
     * after procs exist. HERD_ERR_NOT_SUPPORTED when the module has no run-time slots. */
    int (*register_slot)(const char *name, int *slot);
    /* What proc holds in a run-time slot: NULL when never set, or for a slot not registered. */
    void *(*get)(const ompi_proc_t *proc, int slot);
    /* Store value in proc's run-time slot (the proc's table is allocated on the first set of a
     * non-NULL value). HERD_ERR_BAD_PARAM for a slot not registered, HERD_ERR_NOT_SUPPORTED,
     * HERD_ERR_OUT_OF_RESOURCE. */
    int (*set)(ompi_proc_t *proc, int slot, void *value);
    /* Free what the module keeps for proc (its table) and clear that slot: when the proc is
     * freed and, for every proc, when the framework closes. May be NULL. */
    void (*release)(ompi_proc_t *proc);
};
typedef struct ompi_endpoint_module ompi_endpoint_module_t;

OPAL_EXPORT extern opal_mca_framework_t ompi_endpoint_base_framework;

/* Open the framework and select one component, the available one with the highest priority
 * (dynamic when it is built; HERD_MCA_endpoint=static chooses). HERD_ERR_NOT_FOUND when none is
 * available. Opening an open framework does nothing. */
int ompi_endpoint_base_open(void);
/* Release every proc's run-time slots, then close. Procs and their compile-time slots stay. */
void ompi_endpoint_base_close(void);
/* The selected module, or NULL when the framework is not open. A transport may keep it and
 * call its get/set directly on its hot path. */
const ompi_endpoint_module_t *ompi_endpoint_base_module(void);

/* The slot of a compile-time tag by the name its configure.m4 declared (case does not matter,
 * as for the generator's uniqueness check). HERD_ERR_NOT_FOUND for no such tag. */
int ompi_endpoint_base_slot_for_tag(const char *name, int *slot);
/* The name of compile-time tag slot, and the framework-component that declared it; NULL when
 * slot is no compile-time tag. */
const char *ompi_endpoint_base_tag_name(int slot);
const char *ompi_endpoint_base_tag_owner(int slot);

/* The selected module's calls, checked: register_slot also checks the name (reported when it
 * is not a valid name or is a compile-time tag's); HERD_ERR_NOT_AVAILABLE when not open. */
int ompi_endpoint_base_register_slot(const char *name, int *slot);
void *ompi_endpoint_base_get(const ompi_proc_t *proc, int slot);
int ompi_endpoint_base_set(ompi_proc_t *proc, int slot, void *value);
/* For the proc table, when it frees proc: the module releases what it keeps for it. */
void ompi_endpoint_base_proc_release(ompi_proc_t *proc);

#if HERD_ENDPOINT_NUM_STATIC_TAGS > 0
/* A compile-time slot is a plain index, no call: these only spell it out. */
static inline void *ompi_endpoint_static_get(const ompi_proc_t *proc, enum herd_endpoint_tag tag)
{
    return proc->endpoint[tag];
}

static inline void ompi_endpoint_static_set(ompi_proc_t *proc, enum herd_endpoint_tag tag,
                                            void *endpoint)
{
    proc->endpoint[tag] = endpoint;
}
#endif

#endif /* OMPI_MCA_ENDPOINT_H */
