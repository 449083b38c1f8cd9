/* SPDX-License-Identifier: BSD-3-Clause */
/* Help-message catalogs: find a help-*.txt file, take one [topic] section, fill in its
 * placeholders and print it to stderr. */
#include "herd_config.h"

#include "opal/util/show_help.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/argv.h"
#include "opal/util/install_dirs.h"
#include "opal/util/output.h"

/* 74 dashes, the width Open MPI users know from its error messages. */
static const char dash_line[] =
    "--------------------------------------------------------------------------\n";

/* A growable string; every append either fully succeeds or leaves it unchanged. */
typedef struct {
    char *text;
    size_t length;
    size_t capacity;
} text_buffer_t;

static int text_append(text_buffer_t *buf, const char *data, size_t length)
{
    if (buf->length + length + 1 > buf->capacity) {
        size_t capacity = (0 == buf->capacity) ? 256 : buf->capacity;
        char *grown;

        while (buf->length + length + 1 > capacity) {
            capacity *= 2;
        }
        grown = realloc(buf->text, capacity);
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        buf->text = grown;
        buf->capacity = capacity;
    }
    memcpy(&buf->text[buf->length], data, length);
    buf->length += length;
    buf->text[buf->length] = '\0';
    return HERD_SUCCESS;
}

static int text_append_string(text_buffer_t *buf, const char *string)
{
    return text_append(buf, string, strlen(string));
}

/* printf into a new malloc'd string; NULL if out of memory or the format is invalid. */
static char *format_vstring(const char *format, va_list ap)
{
    va_list copy;
    char *result;
    int chars;

    va_copy(copy, ap);
    chars = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (chars < 0) {
        return NULL;
    }
    result = malloc((size_t) chars + 1);
    if (NULL == result) {
        return NULL;
    }
    va_copy(copy, ap);
    vsnprintf(result, (size_t) chars + 1, format, copy);
    va_end(copy);
    return result;
}

/* A section header is a whole line "[name]" with no spaces or brackets inside, so that text
 * lines which merely start with '[' (such as "[host:pid] ...") stay text. Sets *name and
 * *name_length to the name inside the brackets. */
static bool is_section_header(const char *line, const char **name, size_t *name_length)
{
    size_t length = strlen(line);

    if (length < 3 || '[' != line[0] || ']' != line[length - 1]) {
        return false;
    }
    for (size_t i = 1; i < length - 1; i++) {
        if (' ' == line[i] || '\t' == line[i] || '[' == line[i] || ']' == line[i]) {
            return false;
        }
    }
    *name = &line[1];
    *name_length = length - 2;
    return true;
}

static bool is_blank(const char *line)
{
    return '\0' == line[strspn(line, " \t")];
}

/* Read the text of [topic] from an open help file, without comment lines and without blank lines
 * at its start and end. Returns HERD_SUCCESS with *text set (malloc'd; at least "\n" for an
 * empty section), HERD_ERR_NOT_FOUND when the file has no such section, or
 * HERD_ERR_OUT_OF_RESOURCE. */
static int read_section(FILE *file, const char *topic, char **text)
{
    text_buffer_t buf = {NULL, 0, 0};
    size_t topic_length = strlen(topic), line_capacity = 0, keep_length = 0;
    bool in_topic = false, found = false;
    char *line = NULL;
    ssize_t line_length;
    int rc = HERD_SUCCESS;

    while ((line_length = getline(&line, &line_capacity, file)) >= 0) {
        const char *name;
        size_t name_length;

        /* Also drop the '\r' of files written on Windows. */
        while (line_length > 0 &&
               ('\n' == line[line_length - 1] || '\r' == line[line_length - 1])) {
            line[--line_length] = '\0';
        }
        if ('#' == line[0]) {
            continue;
        }
        if (is_section_header(line, &name, &name_length)) {
            if (in_topic) {
                break;
            }
            if (name_length == topic_length && 0 == strncmp(name, topic, topic_length)) {
                in_topic = found = true;
            }
            continue;
        }
        if (!in_topic || (0 == buf.length && is_blank(line))) {
            continue;
        }
        rc = text_append(&buf, line, (size_t) line_length);
        if (HERD_SUCCESS == rc) {
            rc = text_append(&buf, "\n", 1);
        }
        if (HERD_SUCCESS != rc) {
            goto out;
        }
        if (!is_blank(line)) {
            keep_length = buf.length;
        }
    }

    if (!found) {
        rc = HERD_ERR_NOT_FOUND;
        goto out;
    }
    /* Drop the blank lines that separate this section from the next one. */
    if (0 == keep_length) {
        rc = text_append(&buf, "\n", 1);
        if (HERD_SUCCESS != rc) {
            goto out;
        }
        keep_length = buf.length;
    }
    buf.text[keep_length] = '\0';
    *text = buf.text;
    buf.text = NULL;

out:
    free(buf.text);
    free(line);
    return rc;
}

/* The folders to search, in order: HERD_HELP_PATH, then the install folder (moved with the tree). NULL if out of
 * memory. */
static char **help_folders(void)
{
    char **folders = opal_argv_split(getenv("HERD_HELP_PATH"), ':');

    if (NULL == folders) {
        return NULL;
    }
    if (HERD_SUCCESS != opal_argv_append_unique(&folders, opal_install_dir(OPAL_INSTALL_PKGDATADIR))) {
        opal_argv_free(folders);
        return NULL;
    }
    return folders;
}

/* Find [topic] in the first folder that has filename: a folder early in HERD_HELP_PATH overrides
 * a whole catalog, not single topics, so a message never mixes two versions of a file. Returns
 * HERD_SUCCESS with *text set, HERD_ERR_NOT_FOUND with *file_used set to the file that lacks the
 * topic (malloc'd) or left NULL when no folder has the file, or HERD_ERR_OUT_OF_RESOURCE. */
static int find_topic(char **folders, const char *filename, const char *topic, char **text,
                      char **file_used)
{
    for (size_t i = 0; NULL != folders[i]; i++) {
        size_t path_length = strlen(folders[i]) + 1 + strlen(filename) + 1;
        char *path = malloc(path_length);
        FILE *file;
        int rc;

        if (NULL == path) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        snprintf(path, path_length, "%s/%s", folders[i], filename);
        file = fopen(path, "r");
        if (NULL == file) {
            free(path);
            continue;
        }
        rc = read_section(file, topic, text);
        fclose(file);
        if (HERD_ERR_NOT_FOUND == rc) {
            *file_used = path;
        } else {
            free(path);
        }
        return rc;
    }
    return HERD_ERR_NOT_FOUND;
}

/* The message shown in place of one that cannot be found. The caller's arguments cannot be
 * printed: their types are only known from the format in the missing text. */
static int append_fallback(text_buffer_t *buf, const char *filename, const char *topic,
                           char **folders, const char *file_used)
{
    char *searched = opal_argv_join(folders, ':');
    int rc;

    if (NULL == searched) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == file_used) {
        rc = text_append_string(buf, "herd could not show a message because its help file is "
                                     "missing.\n  help file: ");
        if (HERD_SUCCESS == rc) {
            rc = text_append_string(buf, filename);
        }
    } else {
        rc = text_append_string(buf, "herd could not show a message because its help file has no "
                                     "section for it.\n  help file: ");
        if (HERD_SUCCESS == rc) {
            rc = text_append_string(buf, file_used);
        }
    }
    const char *pieces[] = {
        "\n  topic:     ", topic, "\n  searched:  ", searched,
        "\nThe details of the message are lost. Check that herd is installed completely, or set\n"
        "HERD_HELP_PATH (folders separated by ':') to the folder holding an up-to-date ",
        filename, ".\n",
    };
    for (size_t i = 0; HERD_SUCCESS == rc && i < sizeof(pieces) / sizeof(pieces[0]); i++) {
        rc = text_append_string(buf, pieces[i]);
    }
    free(searched);
    return rc;
}

/* Build the complete message. Returns HERD_SUCCESS or HERD_ERR_NOT_FOUND (fallback built) with
 * *message set, or HERD_ERR_OUT_OF_RESOURCE. */
static int build_message(const char *filename, const char *topic, bool want_error_header,
                         va_list ap, char **message)
{
    text_buffer_t buf = {NULL, 0, 0};
    char *section = NULL, *file_used = NULL, *filled = NULL;
    char **folders;
    int rc, found_rc;

    if (NULL == filename) {
        filename = "(no file given)";
    }
    if (NULL == topic) {
        topic = "(no topic given)";
    }
    folders = help_folders();
    if (NULL == folders) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    found_rc = find_topic(folders, filename, topic, &section, &file_used);
    if (HERD_ERR_OUT_OF_RESOURCE == found_rc) {
        rc = found_rc;
        goto out;
    }

    rc = want_error_header ? text_append_string(&buf, dash_line) : HERD_SUCCESS;
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    if (HERD_SUCCESS == found_rc) {
        /* The section is the format: placeholders come from the help file, and a literal '%'
         * there is written "%%". */
        filled = format_vstring(section, ap);
        rc = (NULL != filled) ? text_append_string(&buf, filled) : HERD_ERR_OUT_OF_RESOURCE;
    } else {
        rc = append_fallback(&buf, filename, topic, folders, file_used);
    }
    if (HERD_SUCCESS == rc && want_error_header) {
        rc = text_append_string(&buf, dash_line);
    }
    if (HERD_SUCCESS != rc) {
        goto out;
    }
    *message = buf.text;
    buf.text = NULL;
    rc = found_rc;

out:
    free(buf.text);
    free(filled);
    free(section);
    free(file_used);
    opal_argv_free(folders);
    return rc;
}

int opal_show_vhelp(const char *filename, const char *topic, bool want_error_header, va_list ap)
{
    char *message = NULL;
    int rc = build_message(filename, topic, want_error_header, ap, &message);

    if (HERD_ERR_OUT_OF_RESOURCE == rc) {
        /* No memory to build anything: at least say which message was lost. */
        opal_output(OPAL_OUTPUT_STDERR, "herd: out of memory while showing topic [%s] of %s",
                    NULL != topic ? topic : "(none)", NULL != filename ? filename : "(none)");
        return rc;
    }
    /* One opal_output call writes the whole message at once, so other threads' output does not
     * land inside it. */
    opal_output(OPAL_OUTPUT_STDERR, "%s", message);
    free(message);
    return rc;
}

int opal_show_help(const char *filename, const char *topic, int want_error_header, ...)
{
    va_list ap;
    int rc;

    va_start(ap, want_error_header);
    rc = opal_show_vhelp(filename, topic, want_error_header, ap);
    va_end(ap);
    return rc;
}

char *opal_show_help_vstring(const char *filename, const char *topic, int want_error_header,
                             va_list ap)
{
    char *message = NULL;
    build_message(filename, topic, want_error_header, ap, &message);
    return message;
}

char *opal_show_help_string(const char *filename, const char *topic, int want_error_header, ...)
{
    char *message = NULL;
    va_list ap;

    va_start(ap, want_error_header);
    build_message(filename, topic, want_error_header, ap, &message);
    va_end(ap);
    return message;
}
