/* SPDX-License-Identifier: BSD-3-Clause */
/* herdrun's command line: app contexts and job-wide options turned into the job description. */
#ifndef ORTE_TOOLS_HERDRUN_CMDLINE_H
#define ORTE_TOOLS_HERDRUN_CMDLINE_H

#include <stdbool.h>
#include <stdio.h>

#include "orte/runtime/job.h"

typedef struct herdrun_options {
    orte_job_spec_t *spec;   /* apps, hosts, flags, timeout, oversubscribe, mca; jobid/seq/sink_uri/
                                secret left empty; NULL after --help or --version */
    char *dvm_uri;           /* --dvm-uri FILE: use a running DVM */
    char *report_usage_file; /* --report-usage=FILE (NULL: print only, when the flag is set) */
    char *output_dir;        /* --output-filename DIR (without :nocopy) */
    bool output_nocopy;      /* --output-filename DIR:nocopy */
    char *attach;            /* --attach JOBID: print a running job's output (needs dvm_uri) */
    int verbose;             /* -v count */
    bool help, version;
} herdrun_options_t;

/* Parse herdrun's argv (MPMD: app contexts separated by a lone ":"), taking -x values from env
 * (NULL-terminated "NAME=value" entries; NULL: empty). Options of an app context end at its
 * first non-option (the program); everything from there to the next lone ":" is the program's
 * arguments, never parsed. Job-wide options may be given in any context and apply to every app.
 *
 * With --help or --version anywhere among the options, only help/version (and verbose) are set
 * and the apps are not checked. Otherwise every app has a program, np (0: not given), a working
 * directory (--wdir made absolute, else herdrun's cwd), and the policies.
 *
 * Returns HERD_SUCCESS, or HERD_ERR_SILENT after reporting the problem on stderr (what, which
 * option and app context, what to do); *opts is set only on success. On success, --mca values
 * are recorded with opal_mca_var_set_cli() and exported as HERD_MCA_<name>, and --host and
 * --hostfile become ras_base_host and ras_base_hostfile unless --dvm-uri is given (then they
 * name the DVM's nodes the job may use, in spec->hosts). The MCA variable system must be
 * initialized (opal_mca_var_init) before the call. */
int herdrun_cmdline_parse(int argc, char *const argv[], char *const env[], herdrun_options_t *opts);

/* Free what the options own (the spec included) and zero them. NULL does nothing. */
void herdrun_options_destruct(herdrun_options_t *opts);

/* The --help text: usage line, options table, the mapping defaults, examples. */
void herdrun_cmdline_usage(FILE *stream);

#endif /* ORTE_TOOLS_HERDRUN_CMDLINE_H */
