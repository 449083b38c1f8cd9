/* SPDX-License-Identifier: BSD-3-Clause */
/* The btl framework object, the started modules in priority order, the per-peer choice of a
 * module on the first message, and the progress loop over the modules. */
#include "herd_config.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/base/base.h"
#include "ompi-shim/mca/btl/btl.h"
#include "ompi-shim/proc/proc.h"
#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "ompi-shim/mca/btl/base/static-components.h"

/* Idle polls before a waiting process yields when its node runs more of the job's processes
 * than it has CPUs (each yield lets a peer on the same core run), and when it does not (a yield
 * is then only a system call, which a message arriving meanwhile waits for). */
#define BTL_BASE_YIELD_POLLS_OVERSUBSCRIBED 64u
#define BTL_BASE_YIELD_POLLS_DEDICATED      16384u
#define BTL_BASE_KERNEL_POLL_INTERVAL       16u

static int btl_base_register(void);

opal_mca_framework_t ompi_btl_base_framework = OPAL_MCA_FRAMEWORK_INIT_REGISTER(
    ompi, btl,
    "Byte transfer between the processes of a job (herd_send/herd_recv): every available "
    "transport is used, the first that reaches a peer (by priority) carries its messages",
    true, ompi_btl_static_components, btl_base_register);

/* The framework's one piece of state: the modules that started, highest priority first (a
 * proc's btl_choice indexes it), what the runtime gave them, and the progress loop's lists. */
static struct {
    bool open;
    ompi_btl_rte_t rte;
    const ompi_btl_module_t *modules[OMPI_BTL_BASE_MAX_MODULES];
    size_t num_modules;
    /* progress: memory polls every round, kernel polls every kernel_poll_interval-th round
     * while they find nothing (a busy one is polled every round until it is idle again) */
    int (*poll_memory[OMPI_BTL_BASE_MAX_MODULES])(void);
    size_t num_poll_memory;
    int (*poll_kernel[OMPI_BTL_BASE_MAX_MODULES])(void);
    size_t num_poll_kernel;
    unsigned rounds_to_kernel; /* rounds left before the kernel polls run again */
    unsigned idle_rounds;      /* waiting rounds in a row that moved nothing */
    unsigned yield_after;      /* the idle rounds that make a waiting process yield */
    /* variables */
    unsigned yield_polls;          /* btl_base_yield_polls, 0: automatic */
    unsigned kernel_poll_interval; /* btl_base_kernel_poll_interval */
    bool add_all;                  /* btl_base_add_all */
} btl_base;

/* btl_base_dso_path (base.h) */
char *ompi_btl_base_dso_path = NULL;

static int choose_module(uint32_t peer, ompi_proc_t **out);

static int btl_base_register(void)
{
    static const opal_mca_var_def_t vars[] = {
        {.name = "base_yield_polls",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &btl_base.yield_polls,
         .help = "Rounds of message progress in a row that find nothing before a waiting process "
                 "yields its core (sched_yield). 0: automatic, 64 when this node runs more of the "
                 "job's processes than it has CPUs, else 16384 (a yield delays a message arriving "
                 "meanwhile)"},
        {.name = "base_kernel_poll_interval",
         .type = OPAL_MCA_VAR_UNSIGNED,
         .storage = &btl_base.kernel_poll_interval,
         .help = "While a transport whose progress is a system call (tcp's poll) finds nothing, "
                 "it is polled once every this many rounds of progress (1: every round); "
                 "shared-memory transports are polled every round"},
        {.name = "base_add_all",
         .type = OPAL_MCA_VAR_BOOL,
         .storage = &btl_base.add_all,
         .help = "Add every process of the job to its transport when messaging starts, instead "
                 "of each peer on its first message (the lazy add, the default). For comparison "
                 "only: it costs memory, segments mapped and connections for every peer "
                 "(contrib/bench/endpoints.sh)"},
        {.name = "base_dso_path",
         .type = OPAL_MCA_VAR_STRING,
         .storage = &ompi_btl_base_dso_path,
         .help = "Folders (separated by ':') searched for the libraries of transports loaded "
                 "from their own DSO (herd-btl-ofi.so, herd-btl-ucx.so); empty: the folders of "
                 "the MCA component path"},
    };

    btl_base.yield_polls = 0;
    btl_base.kernel_poll_interval = BTL_BASE_KERNEL_POLL_INTERVAL;
    btl_base.add_all = false;
    ompi_btl_base_dso_path = NULL;
    return opal_mca_var_register_framework_table("btl", vars, OPAL_MCA_VAR_DEFS_COUNT(vars));
}

/* How long a waiting process spins before yielding, decided once at open. */
static unsigned yield_after(const ompi_btl_rte_t *rte)
{
    if (0 != btl_base.yield_polls) {
        return btl_base.yield_polls;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return (cpus > 0 && rte->local_size > (unsigned long) cpus)
               ? BTL_BASE_YIELD_POLLS_OVERSUBSCRIBED
               : BTL_BASE_YIELD_POLLS_DEDICATED;
}

/* btl_base_add_all: what an MPI library that adds every peer at init holds, the baseline the
 * lazy add is measured against. A peer nothing reaches is left for its first send to report. */
static void add_every_peer(void)
{
    size_t added = 0;

    for (uint32_t peer = 0; peer < btl_base.rte.job_size; ++peer) {
        ompi_proc_t *proc = ompi_proc_find(peer);

        if (NULL != proc && 0 != proc->btl_choice) {
            continue;
        }
        if (HERD_SUCCESS == choose_module(peer, &proc)) {
            added++;
        } else {
            opal_output_verbose(1, ompi_btl_base_framework.output,
                                "rank %u: btl_base_add_all: no transport reaches rank %u; a "
                                "message to it will fail",
                                btl_base.rte.my_rank, peer);
        }
    }
    opal_output_verbose(5, ompi_btl_base_framework.output,
                        "rank %u: btl_base_add_all: %zu of %u processes added at start",
                        btl_base.rte.my_rank, added, btl_base.rte.job_size);
}

bool ompi_btl_base_started(const char *name)
{
    for (size_t i = 0; i < btl_base.num_modules; ++i) {
        if (0 == strcmp(btl_base.modules[i]->name, name)) {
            return true;
        }
    }
    return false;
}

bool ompi_btl_base_is_open(void)
{
    return btl_base.open;
}

int ompi_btl_base_open(const ompi_btl_rte_t *rte)
{
    opal_mca_framework_t *fw = &ompi_btl_base_framework;
    int rc;

    if (btl_base.open) {
        return HERD_SUCCESS;
    }
    rc = opal_mca_framework_open_select(fw);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    btl_base.rte = *rte;
    btl_base.num_modules = btl_base.num_poll_memory = btl_base.num_poll_kernel = 0;
    btl_base.rounds_to_kernel = btl_base.idle_rounds = 0;
    btl_base.yield_after = yield_after(rte);
    for (size_t i = 0; i < fw->num_selected && btl_base.num_modules < OMPI_BTL_BASE_MAX_MODULES;
         ++i) {
        const ompi_btl_module_t *module = fw->selected[i]->module;

        rc = module->init(&btl_base.rte, ompi_btl_base_deliver);
        if (HERD_SUCCESS != rc) {
            /* the others may still reach every peer: say it where someone looking will see */
            opal_output_verbose(1, fw->output,
                                "rank %u: the %s transport could not start (%s) and is "
                                "not used",
                                rte->my_rank, module->name, opal_strerror(rc));
            continue;
        }
        opal_output_verbose(10, fw->output, "rank %u: %s started (priority %d)", rte->my_rank,
                            module->name, fw->selected[i]->priority);
        btl_base.modules[btl_base.num_modules++] = module;
        if (NULL == module->progress) {
            continue;
        }
        if (module->progress_enters_kernel) {
            btl_base.poll_kernel[btl_base.num_poll_kernel++] = module->progress;
        } else {
            btl_base.poll_memory[btl_base.num_poll_memory++] = module->progress;
        }
    }
    if (0 == btl_base.num_modules) {
        opal_show_help("help-btl-base.txt", "no-transport", true, rte->my_rank,
                       NULL != fw->selection ? fw->selection : "");
        opal_mca_framework_close(fw);
        return HERD_ERR_NOT_FOUND;
    }
    btl_base.open = true;
    if (btl_base.add_all) {
        add_every_peer();
    }
    return HERD_SUCCESS;
}

static void count_procs(ompi_proc_t *proc, void *data)
{
    size_t *count = data;
    (void) proc;
    (*count)++;
}

/* a framework opened again may start other modules: no proc keeps an index into this list */
static void forget_choice(ompi_proc_t *proc, void *data)
{
    (void) data;
    proc->btl_choice = 0;
}

void ompi_btl_base_close(void)
{
    opal_mca_framework_t *fw = &ompi_btl_base_framework;

    if (!btl_base.open) {
        ompi_btl_base_match_release(); /* what was delivered without the framework (tests) */
        return;
    }
    if (opal_output_get_verbosity(fw->output) >= 5) {
        /* what the lazy add cost: a ring process shows 2 peers, not the job's size */
        char line[512];
        size_t used = 0;
        size_t procs = 0;

        ompi_proc_foreach(count_procs, &procs);
        for (size_t i = 0; i < btl_base.num_modules && used < sizeof(line); ++i) {
            int n = snprintf(line + used, sizeof(line) - used, "%s%s %zu", 0 == i ? "" : ", ",
                             btl_base.modules[i]->name, btl_base.modules[i]->num_peers());
            used += n > 0 ? (size_t) n : 0;
        }
        opal_output(fw->output,
                    "rank %u at finalize: %zu procs in the proc table; peers per btl: %s; "
                    "%zu unexpected messages",
                    btl_base.rte.my_rank, procs, line, ompi_btl_base_num_unexpected());
    }
    /* herd_send returned for what is still queued: it must reach its peers before we go (a
     * peer gone makes its module drop its queue, so this ends) */
    for (;;) {
        size_t pending = 0;
        for (size_t i = 0; i < btl_base.num_modules; ++i) {
            pending += btl_base.modules[i]->pending();
        }
        btl_base.rounds_to_kernel = 0; /* flushing: every transport, every round */
        if (0 == pending || ompi_btl_base_progress() < 0) {
            break;
        }
        sched_yield();
    }
    for (size_t i = btl_base.num_modules; i > 0; --i) {
        btl_base.modules[i - 1]->finalize();
    }
    ompi_proc_foreach(forget_choice, NULL);
    ompi_btl_base_match_release();
    btl_base.num_modules = btl_base.num_poll_memory = btl_base.num_poll_kernel = 0;
    btl_base.open = false;
    opal_mca_framework_close(fw);
}

/* The first message to peer: the first started module (priority order) that reaches it and can
 * add it; the choice stays in the proc. */
static int choose_module(uint32_t peer, ompi_proc_t **out)
{
    ompi_proc_t *proc;
    int rc = ompi_proc_lookup(peer, &proc);

    if (HERD_SUCCESS != rc) {
        return rc;
    }
    for (size_t i = 0; i < btl_base.num_modules; ++i) {
        const ompi_btl_module_t *module = btl_base.modules[i];

        if (!module->reachable(peer)) {
            continue;
        }
        rc = module->add_peer(proc);
        if (HERD_SUCCESS != rc) {
            opal_output_verbose(1, ompi_btl_base_framework.output,
                                "rank %u: %s cannot add rank %u (%s), trying the next "
                                "transport",
                                btl_base.rte.my_rank, module->name, peer, opal_strerror(rc));
            continue;
        }
        proc->btl_choice = (uint8_t) (i + 1);
        opal_output_verbose(10, ompi_btl_base_framework.output, "rank %u -> rank %u: %s",
                            btl_base.rte.my_rank, peer, module->name);
        *out = proc;
        return HERD_SUCCESS;
    }
    return HERD_ERR_UNREACH;
}

int ompi_btl_base_send(uint32_t peer, int tag, const void *buf, size_t len)
{
    /* the hot path: the proc by index, its module by index, one call */
    ompi_proc_t *proc = ompi_proc_find(peer);
    int rc;

    if (NULL != proc && 0 != proc->btl_choice) {
        return btl_base.modules[proc->btl_choice - 1]->send(proc, tag, buf, len);
    }
    if (!btl_base.open) {
        return HERD_ERR_NOT_AVAILABLE;
    }
    if (peer >= btl_base.rte.job_size) {
        return HERD_ERR_BAD_PARAM;
    }
    rc = choose_module(peer, &proc);
    if (HERD_SUCCESS != rc) {
        return rc;
    }
    return btl_base.modules[proc->btl_choice - 1]->send(proc, tag, buf, len);
}

int ompi_btl_base_progress(void)
{
    int events = 0;

    for (size_t i = 0; i < btl_base.num_poll_memory; ++i) {
        int rc = btl_base.poll_memory[i]();
        if (rc < 0) {
            return rc;
        }
        events += rc;
    }
    if (btl_base.num_poll_kernel > 0 && 0 == btl_base.rounds_to_kernel--) {
        int kernel_events = 0;
        for (size_t i = 0; i < btl_base.num_poll_kernel; ++i) {
            int rc = btl_base.poll_kernel[i]();
            if (rc < 0) {
                return rc;
            }
            kernel_events += rc;
        }
        /* busy: poll again next round (a connection's frames come in bursts) */
        btl_base.rounds_to_kernel = kernel_events > 0 || 0 == btl_base.kernel_poll_interval
                                        ? 0
                                        : btl_base.kernel_poll_interval - 1;
        events += kernel_events;
    }
    return events;
}

int ompi_btl_base_progress_waiting(void)
{
    int rc = ompi_btl_base_progress();

    if (0 != rc) {
        btl_base.idle_rounds = 0;
    } else if (++btl_base.idle_rounds >= btl_base.yield_after) {
        btl_base.idle_rounds = 0;
        sched_yield();
    }
    return rc;
}

const ompi_btl_module_t *ompi_btl_base_peer_module(uint32_t peer)
{
    ompi_proc_t *proc = ompi_proc_find(peer);

    if (!btl_base.open || NULL == proc || 0 == proc->btl_choice) {
        return NULL;
    }
    return btl_base.modules[proc->btl_choice - 1];
}
