/* SPDX-License-Identifier: BSD-3-Clause */
/* Whose DVM a contact file names: a DVM serves its own user only (its tool socket checks the
 * peer's uid, its folder is 0700), so a tool of another user is told that, not that the DVM
 * is not running. */
#include "herd_config.h"

#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/show_help.h"
#include "orte/runtime/dvm_tool.h"

int orte_dvm_contact_check_owner(const char *uri_file, const char *tool)
{
    struct stat st;
    if (0 != stat(uri_file, &st) || st.st_uid == getuid()) {
        return HERD_SUCCESS; /* a missing file is the caller's to report */
    }
    char owner[64];
    const struct passwd *pw = getpwuid(st.st_uid);
    if (NULL != pw && NULL != pw->pw_name) {
        snprintf(owner, sizeof(owner), "%s", pw->pw_name);
    } else {
        snprintf(owner, sizeof(owner), "uid %u", (unsigned) st.st_uid);
    }
    opal_show_help("help-dvm.txt", "dvm-other-user", false, tool, uri_file, owner,
                   (unsigned) st.st_uid);
    return HERD_ERR_SILENT;
}
