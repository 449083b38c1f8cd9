/* SPDX-License-Identifier: BSD-3-Clause */
/* The endpoint framework object, its one selected module, the names of the compile-time tags,
 * and the checked entry points to the module. */
#include "herd_config.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "ompi-shim/mca/endpoint/endpoint.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/mca.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "ompi-shim/mca/endpoint/base/static-components.h"

static const char *help_file = "help-endpoint-base.txt";

opal_mca_framework_t ompi_endpoint_base_framework = OPAL_MCA_FRAMEWORK_INIT(
    ompi, endpoint,
    "Endpoint slots of a proc: compile-time tags of the transports, and run-time registered "
    "slots for components configure did not know",
    false, ompi_endpoint_static_components);

/* The compile-time tags in slot order, from the generated header. */
static const struct {
    const char *name;
    const char *owner;
} tags[] = {
#define OMPI_ENDPOINT_TAG_ENTRY(tag_, name_, owner_) {name_, owner_},
    HERD_ENDPOINT_TAG_FOREACH(OMPI_ENDPOINT_TAG_ENTRY)
#undef OMPI_ENDPOINT_TAG_ENTRY
    {NULL, NULL},
};

int ompi_endpoint_base_open(void)
{
    return opal_mca_framework_open_select(&ompi_endpoint_base_framework);
}

static void release_one(ompi_proc_t *proc, void *data)
{
    const ompi_endpoint_module_t *module = data;
    module->release(proc);
}

void ompi_endpoint_base_close(void)
{
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();

    /* the tables belong to the module: freed while it is still there, so procs outliving the
     * framework (or a framework opened again with another component) hold no stale table */
    if (NULL != module && NULL != module->release) {
        ompi_proc_foreach(release_one, (void *) module);
    }
    opal_mca_framework_close(&ompi_endpoint_base_framework);
}

const ompi_endpoint_module_t *ompi_endpoint_base_module(void)
{
    const opal_mca_framework_t *fw = &ompi_endpoint_base_framework;

    return fw->opened ? opal_mca_framework_module(fw) : NULL;
}

int ompi_endpoint_base_slot_for_tag(const char *name, int *slot)
{
    for (int i = 0; NULL != name && NULL != tags[i].name; ++i) {
        if (0 == strcasecmp(tags[i].name, name)) {
            *slot = i;
            return HERD_SUCCESS;
        }
    }
    return HERD_ERR_NOT_FOUND;
}

const char *ompi_endpoint_base_tag_name(int slot)
{
    return (slot >= 0 && slot < HERD_ENDPOINT_STATIC_COUNT) ? tags[slot].name : NULL;
}

const char *ompi_endpoint_base_tag_owner(int slot)
{
    return (slot >= 0 && slot < HERD_ENDPOINT_STATIC_COUNT) ? tags[slot].owner : NULL;
}

/* A run-time slot name is what a component name may be: letters, digits and '_'. */
static bool valid_slot_name(const char *name)
{
    size_t len = strlen(name);

    if (0 == len || len > OMPI_ENDPOINT_MAX_NAME_LEN) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              '_' == c)) {
            return false;
        }
    }
    return true;
}

int ompi_endpoint_base_register_slot(const char *name, int *slot)
{
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();
    int tag;
    int rc;

    if (NULL == module) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    if (NULL == name || !valid_slot_name(name)) {
        opal_show_help(help_file, "bad-slot-name", true, NULL != name ? name : "(null)",
                       OMPI_ENDPOINT_MAX_NAME_LEN);
        return HERD_ERR_BAD_PARAM;
    }
    if (HERD_SUCCESS == ompi_endpoint_base_slot_for_tag(name, &tag)) {
        opal_show_help(help_file, "slot-name-is-tag", true, name, tags[tag].name, tag,
                       tags[tag].owner);
        return HERD_ERR_BAD_PARAM;
    }
    rc = module->register_slot(name, slot);
    if (HERD_SUCCESS == rc) {
        opal_output_verbose(10, ompi_endpoint_base_framework.output,
                            "endpoint %s: run-time slot %d is \"%s\"", module->name, *slot, name);
    } else if (HERD_ERR_NOT_SUPPORTED == rc) {
        /* the component asking may well do without (a DSO transport that then stays off), so
         * this is no error message of its own */
        opal_output_verbose(1, ompi_endpoint_base_framework.output,
                            "\"%s\" asked for a run-time endpoint slot, but the endpoint "
                            "component %s has compile-time slots only (herd was configured with "
                            "--disable-dynamic-endpoint-slots, or HERD_MCA_endpoint chose it)",
                            name, module->name);
    }
    return rc;
}

void *ompi_endpoint_base_get(const ompi_proc_t *proc, int slot)
{
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();

    return (NULL != module && NULL != proc) ? module->get(proc, slot) : NULL;
}

int ompi_endpoint_base_set(ompi_proc_t *proc, int slot, void *value)
{
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();

    if (NULL == module) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    return NULL != proc ? module->set(proc, slot, value) : HERD_ERR_BAD_PARAM;
}

void ompi_endpoint_base_proc_release(ompi_proc_t *proc)
{
    const ompi_endpoint_module_t *module = ompi_endpoint_base_module();

    if (NULL != module && NULL != module->release && NULL != proc) {
        module->release(proc);
    }
}
