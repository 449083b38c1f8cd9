/* SPDX-License-Identifier: BSD-3-Clause */
/* The ras framework: hostfile and -H parsing, Slurm host lists and task counts, the simulator,
 * the allocation's wire format and table, the local fallback and which component wins. */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/dss/buffer.h"
#include "opal/mca/base/mca_var.h"
#include "opal/mca/mca.h"
#include "support/capture.h"
#include "orte/mca/ras/base/base.h"
#include "orte/mca/ras/ras.h"

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static herd_test_capture_t stderr_capture;
static char temp_dir[256];

static const char *const ras_test_variables[] = {
    "HERD_MCA_ras",
    "HERD_MCA_ras_base_hostfile",
    "HERD_MCA_ras_base_host",
    "HERD_MCA_ras_simulator_num_nodes",
    "HERD_MCA_ras_simulator_topology",
    "HERD_MCA_ras_simulator_slots",
    "HERD_MCA_ras_simulator_priority",
    "HERD_MCA_ras_simulator_nodes_per_process",
    "HERD_MCA_ras_hostfile_priority",
    "HERD_MCA_ras_slurm_priority",
    "SLURM_JOB_NODELIST",
    "SLURM_TASKS_PER_NODE",
    NULL,
};

static int setup(void **state)
{
    for (size_t i = 0; NULL != ras_test_variables[i]; i++) {
        unsetenv(ras_test_variables[i]);
    }
    return 0;
}

static int teardown(void **state)
{
    orte_ras_base_close();
    return setup(state);
}

static int group_setup(void **state)
{
    snprintf(temp_dir, sizeof(temp_dir), "/tmp/herd-test-ras-XXXXXX");
    assert_non_null(mkdtemp(temp_dir));
    return 0;
}

static int group_teardown(void **state)
{
    rmdir(temp_dir);
    return 0;
}

/* Writes text to a file in the test folder; returns its path (static storage, one per name). */
static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    FILE *file;

    snprintf(path, sizeof(path), "%s/%s", temp_dir, name);
    file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fwrite(text, 1, strlen(text), file), strlen(text));
    fclose(file);
    return path;
}

static void remove_file(const char *name)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", temp_dir, name);
    unlink(path);
}

static void assert_node(const orte_node_t *node, const char *name, uint32_t slots,
                        uint32_t max_slots, const char *origin)
{
    assert_string_equal(node->name, name);
    assert_int_equal(node->slots, slots);
    assert_int_equal(node->max_slots, max_slots);
    if (NULL != origin) {
        assert_non_null(node->origin);
        assert_string_equal(node->origin, origin);
    }
}

/* The node names joined with ',', for comparing whole lists at once (caller frees). */
static char *joined_names(char **names, size_t count)
{
    size_t length = 1;
    char *joined;

    for (size_t i = 0; i < count; i++) {
        length += strlen(names[i]) + 1;
    }
    joined = calloc(1, length);
    assert_non_null(joined);
    for (size_t i = 0; i < count; i++) {
        if (i > 0) {
            strcat(joined, ",");
        }
        strcat(joined, names[i]);
    }
    return joined;
}

static void free_names(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(names[i]);
    }
    free(names);
}

static char *allocation_names(const orte_allocation_t *allocation)
{
    char **names = calloc(allocation->num_nodes + 1, sizeof(*names));
    char *joined;

    assert_non_null(names);
    for (uint32_t i = 0; i < allocation->num_nodes; i++) {
        names[i] = allocation->nodes[i].name;
    }
    joined = joined_names(names, allocation->num_nodes);
    free(names);
    return joined;
}

static orte_allocation_t *parse_hosts_ok(const char *text, const char *host_list)
{
    orte_allocation_t *allocation = NULL;

    assert_int_equal(orte_ras_base_parse_hosts("hosts.txt", text, NULL != text ? strlen(text) : 0,
                                               host_list, &allocation),
                     HERD_SUCCESS);
    assert_non_null(allocation);
    assert_string_equal(allocation->source, "hostfile");
    return allocation;
}

static char sentinel_object;
#define SENTINEL ((orte_allocation_t *) (void *) &sentinel_object)

/* Parses what must fail; returns the message (caller frees). The output stays untouched. */
static char *parse_hosts_error(const char *text, size_t length, const char *host_list)
{
    orte_allocation_t *allocation = SENTINEL;
    int rc;

    herd_test_capture_start(&stderr_capture);
    rc = orte_ras_base_parse_hosts("hosts.txt", text, length, host_list, &allocation);
    char *message = herd_test_capture_stop(&stderr_capture);
    if (HERD_ERR_SILENT != rc) {
        print_error("rc %d, stderr:\n%s\n", rc, message);
    }
    assert_int_equal(rc, HERD_ERR_SILENT);
    assert_ptr_equal(allocation, SENTINEL);
    return message;
}

/* A hostfile that must be refused, with a message naming all of needles. */
static void expect_hostfile_error(const char *text, const char *needle1, const char *needle2,
                                  const char *needle3)
{
    char *message = parse_hosts_error(text, strlen(text), NULL);

    assert_contains(message, needle1);
    if (NULL != needle2) {
        assert_contains(message, needle2);
    }
    if (NULL != needle3) {
        assert_contains(message, needle3);
    }
    free(message);
}

static void expect_host_list_error(const char *text, const char *list, const char *needle1,
                                   const char *needle2)
{
    char *message = parse_hosts_error(text, NULL != text ? strlen(text) : 0, list);

    assert_contains(message, needle1);
    if (NULL != needle2) {
        assert_contains(message, needle2);
    }
    free(message);
}

/* ------------------------------------------------------------------------------------------ */
/* hostfiles */

static void test_hostfile_good(void **state)
{
    orte_allocation_t *allocation =
        parse_hosts_ok("# the cluster\n"
                       "\n"
                       "node01 slots=4 max_slots=8   # the big one\n"
                       "   \t\n"
                       "node02\n"
                       "node03\tslots = 2\r\n"
                       "node04 max-slots=3 slots=3\n"
                       "node05 slots= 6 max_slots =6\n"
                       "  # indented comment\n"
                       "10.0.0.7 slots=1\n"
                       "gpu_node.example.org slots=2#no blank before the comment",
                       NULL);

    assert_int_equal(allocation->num_nodes, 7);
    assert_node(&allocation->nodes[0], "node01", 4, 8, "hosts.txt:3");
    /* no slots= gives one slot, as Open MPI does for a hostfile */
    assert_node(&allocation->nodes[1], "node02", 1, 0, "hosts.txt:5");
    assert_node(&allocation->nodes[2], "node03", 2, 0, "hosts.txt:6");
    assert_node(&allocation->nodes[3], "node04", 3, 3, "hosts.txt:7");
    assert_node(&allocation->nodes[4], "node05", 6, 6, "hosts.txt:8");
    assert_node(&allocation->nodes[5], "10.0.0.7", 1, 0, "hosts.txt:10");
    assert_node(&allocation->nodes[6], "gpu_node.example.org", 2, 0, "hosts.txt:11");
    assert_null(allocation->nodes[0].topology);
    orte_allocation_free(allocation);
}

/* A host on several lines: slots add up, max_slots may come from any line, order is first seen. */
static void test_hostfile_duplicates_merge(void **state)
{
    orte_allocation_t *allocation = parse_hosts_ok("a slots=2\n"
                                                   "b\n"
                                                   "a slots=3 max_slots=8\n"
                                                   "a\n"
                                                   "b slots=4\n"
                                                   "a max_slots=8\n",
                                                   NULL);

    assert_int_equal(allocation->num_nodes, 2);
    assert_node(&allocation->nodes[0], "a", 7, 8, "hosts.txt:1");
    assert_node(&allocation->nodes[1], "b", 5, 0, "hosts.txt:2");
    orte_allocation_free(allocation);
}

static void test_hostfile_bad_tokens(void **state)
{
    expect_hostfile_error("good\nnode1 cpus=4\n", "hosts.txt:2", "\"cpus\"", "cpus=4");
    expect_hostfile_error("node1 slot=4\n", "hosts.txt:1", "Did you mean slots?", "slot=4");
    expect_hostfile_error("a\nb\nnode1 slots=abc\n", "hosts.txt:3", "\"slots=abc\"", "from 1 to");
    expect_hostfile_error("node1 slots=0\n", "hosts.txt:1", "\"slots=0\"", "whole number");
    expect_hostfile_error("node1 slots=-2\n", "hosts.txt:1", "\"slots=-2\"", NULL);
    expect_hostfile_error("node1 slots=4x\n", "hosts.txt:1", "\"slots=4x\"", NULL);
    expect_hostfile_error("node1 slots=\n", "hosts.txt:1", "\"slots=\"", NULL);
    expect_hostfile_error("node1 slots=99999999999999999999\n", "hosts.txt:1",
                          "99999999999999999999", NULL);
    expect_hostfile_error("node1 max_slots=0\n", "hosts.txt:1", "\"max_slots=0\"", NULL);
    expect_hostfile_error("node1 garbage\n", "hosts.txt:1", "\"garbage\"", "key=value");
    expect_hostfile_error("node1 slots:4\n", "hosts.txt:1", "\"slots:4\"", "key=value");
    expect_hostfile_error("node1 =4\n", "hosts.txt:1", "\"=4\"", NULL);
    expect_hostfile_error("node1 slots=2 slots=3\n", "hosts.txt:1", "given twice", "slots=3");
    expect_hostfile_error("\n\nno$de slots=2\n", "hosts.txt:3", "\"no$de\"", "not a host name");
    expect_hostfile_error("-node slots=2\n", "hosts.txt:1", "\"-node\"", NULL);
    expect_hostfile_error("slots=4\n", "hosts.txt:1", "\"slots=4\"", "not a host name");
    /* the -H form in a hostfile gets the hostfile form as the fix */
    expect_hostfile_error("node1:4\n", "hosts.txt:1", "\"node1:4\"", "node1 slots=4");
    /* control characters are quoted harmlessly */
    expect_hostfile_error("node1 slots=\x01\x02\n", "hosts.txt:1", "\"slots=??\"", NULL);
}

static void test_hostfile_slot_limits(void **state)
{
    expect_hostfile_error("n1 slots=4 max_slots=2\n", "hosts.txt:1", "slots=4", "max_slots=2");
    /* a conflicting max_slots names both lines */
    expect_hostfile_error("n1 slots=1 max_slots=4\nn2\nn1 max_slots=8\n", "line 1: max_slots=4",
                          "line 3: max_slots=8", "n1");
    /* lines adding up beyond max_slots */
    expect_hostfile_error("n1 slots=3 max_slots=4\nn1 slots=2\n", "hosts.txt:2", "5 slots",
                          "max_slots=4 given on line 1");
    expect_hostfile_error("n1 slots=4\nn1 max_slots=4\n", "hosts.txt:2", "5 slots", NULL);
    expect_hostfile_error("n1 slots=1000000\nn1 slots=1000000\n", "hosts.txt:2", "2000000", NULL);
}

static void test_hostfile_not_text(void **state)
{
    static const char text[] = "node1\nnode2 sl\0ts=2\n";
    char *message;

    message = parse_hosts_error(text, sizeof(text) - 1, NULL);
    assert_contains(message, "hosts.txt:2");
    assert_contains(message, "NUL");
    free(message);
    expect_hostfile_error("# nothing here\n\n   \n", "hosts.txt", "lists no host", NULL);
    expect_hostfile_error("", "hosts.txt", "lists no host", NULL);
}

static void test_hostfile_read(void **state)
{
    const char *path = write_file("hosts", "alpha slots=2\nbeta\n");
    orte_allocation_t *allocation = NULL;
    orte_allocation_t *untouched = SENTINEL;
    char expected_origin[600];
    char missing[600];
    char *message;

    assert_int_equal(orte_ras_base_read_hosts(path, NULL, &allocation), HERD_SUCCESS);
    assert_int_equal(allocation->num_nodes, 2);
    snprintf(expected_origin, sizeof(expected_origin), "%s:2", path);
    assert_node(&allocation->nodes[1], "beta", 1, 0, expected_origin);
    orte_allocation_free(allocation);
    remove_file("hosts");

    snprintf(missing, sizeof(missing), "%s/no-such-hostfile", temp_dir);
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_read_hosts(missing, NULL, &untouched), HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_ptr_equal(untouched, SENTINEL);
    assert_contains(message, missing);
    assert_contains(message, "No such file or directory");
    free(message);

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_read_hosts(temp_dir, NULL, &untouched), HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_contains(message, temp_dir);
    assert_contains(message, "Is a directory");
    free(message);

    assert_int_equal(orte_ras_base_read_hosts(NULL, NULL, &untouched), HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_ras_base_parse_hosts("x", "a", 1, NULL, NULL), HERD_ERR_BAD_PARAM);
}

/* ------------------------------------------------------------------------------------------ */
/* -H host lists */

static void test_host_list(void **state)
{
    orte_allocation_t *allocation = parse_hosts_ok(NULL, "a,b:4,c");

    assert_int_equal(allocation->num_nodes, 3);
    assert_node(&allocation->nodes[0], "a", 1, 0, "-H");
    assert_node(&allocation->nodes[1], "b", 4, 0, "-H");
    assert_node(&allocation->nodes[2], "c", 1, 0, "-H");
    orte_allocation_free(allocation);

    /* a host listed again gets the sum; blanks around entries are fine */
    allocation = parse_hosts_ok(NULL, " a , b:2,a,b ,c:3 ");
    assert_int_equal(allocation->num_nodes, 3);
    assert_node(&allocation->nodes[0], "a", 2, 0, NULL);
    assert_node(&allocation->nodes[1], "b", 3, 0, NULL);
    assert_node(&allocation->nodes[2], "c", 3, 0, NULL);
    orte_allocation_free(allocation);

    allocation = parse_hosts_ok(NULL, "single");
    assert_int_equal(allocation->num_nodes, 1);
    assert_node(&allocation->nodes[0], "single", 1, 0, NULL);
    orte_allocation_free(allocation);
}

static void test_host_list_errors(void **state)
{
    expect_host_list_error(NULL, "a,,b", "Entry 2", "a,,b");
    expect_host_list_error(NULL, ",a", "Entry 1", "is empty");
    expect_host_list_error(NULL, "a,", "Entry 2", "is empty");
    expect_host_list_error(NULL, "", "Entry 1", "is empty");
    expect_host_list_error(NULL, "a, ,b", "Entry 2", "is empty");
    expect_host_list_error(NULL, "a,b:", "Entry 2", "\"b:\"");
    expect_host_list_error(NULL, "a:0", "Entry 1", "\"a:0\"");
    expect_host_list_error(NULL, "a,b:x", "Entry 2", "\"b:x\"");
    expect_host_list_error(NULL, "a:2:3", "Entry 1", "\"a:2:3\"");
    expect_host_list_error(NULL, ":4", "Entry 1", "\":4\"");
    expect_host_list_error(NULL, "a b", "Entry 1", "\"a b\"");
    expect_host_list_error(NULL, "a,b$", "Entry 2", "not a");
    expect_host_list_error(NULL, "a:1000000,a:1000000", "2000000", NULL);
}

static void test_hostfile_and_host_list(void **state)
{
    static const char hostfile[] = "a slots=4 max_slots=8\n"
                                   "b slots=2\n"
                                   "c\n";
    orte_allocation_t *allocation;

    /* -H picks from the hostfile in its own order, keeping the hostfile's slots */
    allocation = parse_hosts_ok(hostfile, "c,a");
    assert_int_equal(allocation->num_nodes, 2);
    assert_node(&allocation->nodes[0], "c", 1, 0, "hosts.txt:3");
    assert_node(&allocation->nodes[1], "a", 4, 8, "hosts.txt:1");
    orte_allocation_free(allocation);

    /* slots given with -H override, within max_slots */
    allocation = parse_hosts_ok(hostfile, "a:6,b,b");
    assert_int_equal(allocation->num_nodes, 2);
    assert_node(&allocation->nodes[0], "a", 6, 8, "-H, hosts.txt:1");
    assert_node(&allocation->nodes[1], "b", 2, 0, "-H, hosts.txt:2");
    orte_allocation_free(allocation);

    allocation = parse_hosts_ok(hostfile, "b:16");
    assert_node(&allocation->nodes[0], "b", 16, 0, NULL);
    orte_allocation_free(allocation);

    expect_host_list_error(hostfile, "a,d", "Host d", "hosts.txt");
    /* hosts already taken from the hostfile stay findable for the lookups that follow */
    {
        char many_hosts[1024] = "";
        char many_list[1024] = "";

        for (int i = 1; i <= 40; i++) {
            char host[16];

            snprintf(host, sizeof(host), "h%d\n", i);
            strcat(many_hosts, host);
            snprintf(host, sizeof(host), "%sh%d", 1 == i ? "" : ",", 41 - i);
            strcat(many_list, host);
        }
        allocation = parse_hosts_ok(many_hosts, many_list);
        assert_int_equal(allocation->num_nodes, 40);
        assert_node(&allocation->nodes[0], "h40", 1, 0, "hosts.txt:40");
        orte_allocation_free(allocation);
        strcat(many_list, ",zz,yy,xx");
        expect_host_list_error(many_hosts, many_list, "Host zz", NULL);
    }
    /* found by fuzz_hostfile: the lookup of uquu probes the bucket of b, already taken */
    expect_host_list_error("uuuu\r\nuuu3\nb", "b:2,uquu", "Host uquu", NULL);
    expect_host_list_error(hostfile, "a:9", "a 9 slots", "max_slots=8 (line 1)");
    /* a bad hostfile is reported before the list is looked at */
    expect_host_list_error("a slots=x\n", "a", "hosts.txt:1", NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Slurm host lists and task counts */

static void expect_expansion(const char *list, const char *expected)
{
    char **names = NULL;
    size_t count = 0;
    char *joined;

    assert_int_equal(orte_ras_base_hostlist_expand("SLURM_JOB_NODELIST", list, &names, &count),
                     HERD_SUCCESS);
    joined = joined_names(names, count);
    if (0 != strcmp(joined, expected)) {
        print_error("%s expanded to %s, expected %s\n", list, joined, expected);
        fail();
    }
    free(joined);
    free_names(names, count);
}

/* position is 1-based, as the message says it. */
static void expect_expansion_error(const char *list, size_t position, const char *needle)
{
    char **names = (char **) (void *) &sentinel_object;
    size_t count = 4242;
    char where[64];
    char *message;
    int rc;

    herd_test_capture_start(&stderr_capture);
    rc = orte_ras_base_hostlist_expand("SLURM_JOB_NODELIST", list, &names, &count);
    message = herd_test_capture_stop(&stderr_capture);
    if (HERD_ERR_SILENT != rc) {
        print_error("%s: rc %d\n%s\n", list, rc, message);
    }
    assert_int_equal(rc, HERD_ERR_SILENT);
    assert_ptr_equal(names, (void *) &sentinel_object);
    assert_int_equal(count, 4242);
    assert_contains(message, "SLURM_JOB_NODELIST");
    if (0 != position) {
        snprintf(where, sizeof(where), "character %zu", position);
        assert_contains(message, where);
    }
    if (NULL != needle) {
        assert_contains(message, needle);
    }
    free(message);
}

static void test_hostlist_expand(void **state)
{
    expect_expansion("n1", "n1");
    expect_expansion("node-a.b_c", "node-a.b_c");
    expect_expansion("n[1-3]", "n1,n2,n3");
    expect_expansion("n[5]", "n5");
    expect_expansion("n[1-3,7],m5", "n1,n2,n3,n7,m5");
    expect_expansion("n[01-10]", "n01,n02,n03,n04,n05,n06,n07,n08,n09,n10");
    expect_expansion("n[8-10]", "n8,n9,n10");
    expect_expansion("n[098-101]", "n098,n099,n100,n101");
    expect_expansion("n[0-1,005]", "n0,n1,n005");
    expect_expansion("rack[1-2]-ib", "rack1-ib,rack2-ib");
    expect_expansion("rack[1-2]-ib,rack[4]-eth", "rack1-ib,rack2-ib,rack4-eth");
    expect_expansion("n[1-2],m[3-4],x", "n1,n2,m3,m4,x");
    expect_expansion("a[1-2]b[3-4]", "a1b3,a1b4,a2b3,a2b4");
    expect_expansion("a[1,3]b[7]c[0-1]d", "a1b7c0d,a1b7c1d,a3b7c0d,a3b7c1d");
    expect_expansion("[1-2]", "1,2");
    expect_expansion("n[1-1]", "n1");
    expect_expansion("n[3,1]", "n3,n1");
}

static void test_hostlist_large(void **state)
{
    char **names = NULL;
    size_t count = 0;

    assert_int_equal(
        orte_ras_base_hostlist_expand("L", "c[00001-50000],d[1-50000]", &names, &count),
        HERD_SUCCESS);
    assert_int_equal(count, 100000);
    assert_string_equal(names[0], "c00001");
    assert_string_equal(names[49999], "c50000");
    assert_string_equal(names[50000], "d1");
    assert_string_equal(names[99999], "d50000");
    free_names(names, count);
}

static void test_hostlist_errors(void **state)
{
    char long_name[400];

    expect_expansion_error("", 0, "empty");
    expect_expansion_error("n[1-3", 2, "never closed");
    expect_expansion_error("n1-3]", 5, "']' closes no '['");
    expect_expansion_error("n[3-1]", 5, "below its start");
    expect_expansion_error("n[a]", 3, "not 'a'");
    expect_expansion_error("n[]", 3, "not ']'");
    expect_expansion_error("n[1-]", 5, NULL);
    expect_expansion_error("n[[1]]", 3, "nested");
    expect_expansion_error("n[1[2]]", 4, "nested");
    expect_expansion_error("n,,m", 3, "missing");
    expect_expansion_error(",n", 1, "missing");
    expect_expansion_error("n,", 3, "missing");
    expect_expansion_error("n$1", 2, "'$'");
    expect_expansion_error("n 1", 2, "' '");
    expect_expansion_error("-n", 1, "start with '-'");
    expect_expansion_error("n[1 2]", 4, "part of a range");
    expect_expansion_error("n[1;2]", 4, NULL);
    expect_expansion_error("n[1234567890]", 3, "9 digits");
    expect_expansion_error("n[1-3]]", 7, NULL);
    expect_expansion_error("n\x01", 2, "0x01");
    expect_expansion_error("n[0-2000000]", 0, "more than");
    expect_expansion_error("a[1-1000]b[1-1000]c[1-2]", 0, "more than");
    memset(long_name, 'x', 300);
    long_name[300] = '\0';
    expect_expansion_error(long_name, 1, "longer than 255");
    expect_expansion_error("n[1-2]b[3", 8, "never closed");
}

/* The caret sits under the bad character, also in the excerpt of a long list. */
static void test_hostlist_caret(void **state)
{
    char list[300];
    char **names = NULL;
    size_t count = 0;
    char *message;
    char *excerpt;
    char *caret;

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_hostlist_expand("V", "n[1-x]", &names, &count), HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_contains(message, "  n[1-x]\n"
                             "      ^ a number was expected in the brackets, not 'x'\n");
    free(message);

    /* a long list: the message shows the part around the bad character */
    list[0] = '\0';
    for (int i = 0; i < 20; i++) {
        strcat(list, "node[1-4],");
    }
    strcat(list, "bad@name");
    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_hostlist_expand("V", list, &names, &count), HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_contains(message, "character 204");
    excerpt = strstr(message, "\n  ...");
    assert_non_null(excerpt);
    excerpt += 1;
    caret = strchr(excerpt, '\n');
    assert_non_null(caret);
    caret += 1;
    assert_true(strchr(caret, '^') - caret < caret - excerpt);
    assert_int_equal(excerpt[strchr(caret, '^') - caret], '@');
    free(message);
}

static void expect_tasks(const char *text, const uint32_t *expected, size_t expected_count)
{
    uint32_t *counts = NULL;
    size_t count = 0;

    assert_int_equal(
        orte_ras_base_tasks_per_node_expand("SLURM_TASKS_PER_NODE", text, &counts, &count),
        HERD_SUCCESS);
    assert_int_equal(count, expected_count);
    assert_memory_equal(counts, expected, count * sizeof(*counts));
    free(counts);
}

static void expect_tasks_error(const char *text, size_t position, const char *needle)
{
    uint32_t *counts = (uint32_t *) (void *) &sentinel_object;
    size_t count = 4242;
    char where[64];
    char *message;

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(
        orte_ras_base_tasks_per_node_expand("SLURM_TASKS_PER_NODE", text, &counts, &count),
        HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_ptr_equal(counts, (void *) &sentinel_object);
    assert_int_equal(count, 4242);
    assert_contains(message, "SLURM_TASKS_PER_NODE");
    if (0 != position) {
        snprintf(where, sizeof(where), "character %zu", position);
        assert_contains(message, where);
    }
    if (NULL != needle) {
        assert_contains(message, needle);
    }
    free(message);
}

static void test_tasks_per_node(void **state)
{
    static const uint32_t mixed[] = {2, 2, 2, 1};
    static const uint32_t one[] = {4};
    static const uint32_t many[] = {1, 3, 3, 16, 2, 2};

    expect_tasks("2(x3),1", mixed, 4);
    expect_tasks("4", one, 1);
    expect_tasks("4(x1)", one, 1);
    expect_tasks("1,3(x2),16,2(x2)", many, 6);

    expect_tasks_error("", 0, "empty");
    expect_tasks_error("2(x3", 5, "(xN)");
    expect_tasks_error("2(3)", 3, "(xN)");
    expect_tasks_error("0", 1, "from 1 to");
    expect_tasks_error("2(x0)", 4, "from 1 to");
    expect_tasks_error("x", 1, "not 'x'");
    expect_tasks_error("2,,1", 3, "missing");
    expect_tasks_error("2,", 3, "missing");
    expect_tasks_error("2;1", 2, "';'");
    expect_tasks_error("99999999999", 1, "from 1 to");
    expect_tasks_error("1(x2000000)", 4, NULL);
    expect_tasks_error("1(x1048576),1", 0, "more than");
}

static void test_slurm_allocation(void **state)
{
    orte_allocation_t *allocation = NULL;
    orte_allocation_t *untouched = SENTINEL;
    char *message;

    assert_int_equal(orte_ras_base_slurm_allocation("n[1-3],m1", "2(x3),1", &allocation),
                     HERD_SUCCESS);
    assert_string_equal(allocation->source, "slurm");
    assert_int_equal(allocation->num_nodes, 4);
    assert_node(&allocation->nodes[0], "n1", 2, 0, "SLURM_JOB_NODELIST");
    assert_node(&allocation->nodes[2], "n3", 2, 0, NULL);
    assert_node(&allocation->nodes[3], "m1", 1, 0, NULL);
    orte_allocation_free(allocation);

    /* without task counts each node gets one slot */
    assert_int_equal(orte_ras_base_slurm_allocation("n[1-2]", NULL, &allocation), HERD_SUCCESS);
    assert_node(&allocation->nodes[1], "n2", 1, 0, NULL);
    orte_allocation_free(allocation);
    assert_int_equal(orte_ras_base_slurm_allocation("n[1-2]", "", &allocation), HERD_SUCCESS);
    orte_allocation_free(allocation);

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_slurm_allocation("n[1-3]", "2(x2)", &untouched),
                     HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_ptr_equal(untouched, SENTINEL);
    assert_contains(message, "SLURM_TASKS_PER_NODE gives task counts for 2 nodes,\n"
                             "but SLURM_JOB_NODELIST lists 3 nodes");
    assert_contains(message, "SLURM_JOB_NODELIST=n[1-3]");
    assert_contains(message, "SLURM_TASKS_PER_NODE=2(x2)");
    free(message);

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_slurm_allocation("n[1-3],n2", NULL, &untouched),
                     HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_contains(message, "host n2 more than once");
    free(message);

    herd_test_capture_start(&stderr_capture);
    assert_int_equal(orte_ras_base_slurm_allocation("n[1-3", "1", &untouched), HERD_ERR_SILENT);
    message = herd_test_capture_stop(&stderr_capture);
    assert_contains(message, "SLURM_JOB_NODELIST");
    free(message);
    assert_ptr_equal(untouched, SENTINEL);
}

/* ------------------------------------------------------------------------------------------ */
/* allocations: helpers, table, wire format */

static orte_allocation_t *sample_allocation(void)
{
    orte_allocation_t *allocation = orte_allocation_new("hostfile");

    assert_non_null(allocation);
    assert_int_equal(orte_allocation_add_node(allocation, "node01", 4, 8, NULL, "hosts:1"),
                     HERD_SUCCESS);
    assert_int_equal(
        orte_allocation_add_node(allocation, "sim0002", 16, 0, "pack:2 core:8 pu:2", "simulator"),
        HERD_SUCCESS);
    assert_int_equal(orte_allocation_add_node(allocation, "n3", 1, 1, "", NULL), HERD_SUCCESS);
    return allocation;
}

static void test_allocation_helpers(void **state)
{
    orte_allocation_t *allocation;
    char long_name[300];

    assert_null(orte_allocation_new(NULL));
    assert_null(orte_allocation_new(""));
    allocation = orte_allocation_new("test");
    assert_non_null(allocation);
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(orte_allocation_add_node(allocation, NULL, 1, 0, NULL, NULL),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_allocation_add_node(allocation, "", 1, 0, NULL, NULL),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_allocation_add_node(allocation, long_name, 1, 0, NULL, NULL),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_allocation_add_node(allocation, "a", 0, 0, NULL, NULL),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_allocation_add_node(allocation, "a", 4, 2, NULL, NULL),
                     HERD_ERR_BAD_PARAM);
    assert_int_equal(
        orte_allocation_add_node(allocation, "a", ORTE_RAS_MAX_SLOTS + 1, 0, NULL, NULL),
        HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_allocation_add_node(NULL, "a", 1, 0, NULL, NULL), HERD_ERR_BAD_PARAM);
    assert_int_equal(allocation->num_nodes, 0);
    assert_int_equal(orte_allocation_add_node(allocation, "a", 2, 2, NULL, NULL), HERD_SUCCESS);
    assert_int_equal(allocation->num_nodes, 1);
    orte_allocation_free(allocation);
    orte_allocation_free(NULL);
}

static void test_printable(void **state)
{
    char out[8];

    orte_ras_base_printable("abc", 3, out, sizeof(out));
    assert_string_equal(out, "abc");
    orte_ras_base_printable("a\tb\x80", 4, out, sizeof(out));
    assert_string_equal(out, "a?b?");
    orte_ras_base_printable("abcdefghij", 10, out, sizeof(out));
    assert_string_equal(out, "abcd...");
    orte_ras_base_printable("abcdefg", 7, out, sizeof(out));
    assert_string_equal(out, "abcdefg");
    orte_ras_base_printable(NULL, 3, out, sizeof(out));
    assert_string_equal(out, "");
}

static void test_display(void **state)
{
    orte_allocation_t *allocation = sample_allocation();
    char path[512];
    char text[4096] = "";
    FILE *file;

    snprintf(path, sizeof(path), "%s/display", temp_dir);
    file = fopen(path, "w+");
    assert_non_null(file);
    orte_allocation_display(file, allocation);
    rewind(file);
    assert_true(fread(text, 1, sizeof(text) - 1, file) > 0);
    fclose(file);
    unlink(path);

    assert_contains(text, "source: hostfile");
    assert_contains(text, "\nNODE     SLOTS  MAX_SLOTS  TOPOLOGY            ORIGIN\n"
                          "node01       4          8  -                   hosts:1\n"
                          "sim0002     16          -  pack:2 core:8 pu:2  simulator\n"
                          "n3           1          1  -                   -\n");
    assert_contains(text, "total: 3 nodes, 21 slots, max_slots -");
    orte_allocation_free(allocation);

    allocation = orte_allocation_new("local");
    assert_int_equal(orte_allocation_add_node(allocation, "h", 2, 3, NULL, NULL), HERD_SUCCESS);
    file = fopen(path, "w+");
    orte_allocation_display(file, allocation);
    rewind(file);
    memset(text, 0, sizeof(text));
    assert_true(fread(text, 1, sizeof(text) - 1, file) > 0);
    fclose(file);
    unlink(path);
    assert_contains(text, "total: 1 node, 2 slots, max_slots 3");
    orte_allocation_free(allocation);
    orte_allocation_display(NULL, NULL);
}

static void assert_allocations_equal(const orte_allocation_t *a, const orte_allocation_t *b)
{
    assert_string_equal(a->source, b->source);
    assert_int_equal(a->num_nodes, b->num_nodes);
    for (uint32_t i = 0; i < a->num_nodes; i++) {
        const orte_node_t *x = &a->nodes[i];
        const orte_node_t *y = &b->nodes[i];

        assert_string_equal(x->name, y->name);
        assert_int_equal(x->slots, y->slots);
        assert_int_equal(x->max_slots, y->max_slots);
        assert_true((NULL == x->topology) == (NULL == y->topology));
        if (NULL != x->topology) {
            assert_string_equal(x->topology, y->topology);
        }
        assert_true((NULL == x->origin) == (NULL == y->origin));
        if (NULL != x->origin) {
            assert_string_equal(x->origin, y->origin);
        }
    }
}

static void test_pack_round_trip(void **state)
{
    orte_allocation_t *allocation = sample_allocation();
    orte_allocation_t *empty = orte_allocation_new("local");
    orte_allocation_t *copy = NULL;
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;

    assert_int_equal(orte_allocation_pack(&buffer, allocation), HERD_SUCCESS);
    assert_int_equal(orte_allocation_pack(&buffer, empty), HERD_SUCCESS);
    assert_int_equal(orte_allocation_unpack(&buffer, &copy), HERD_SUCCESS);
    assert_allocations_equal(allocation, copy);
    orte_allocation_free(copy);
    assert_int_equal(orte_allocation_unpack(&buffer, &copy), HERD_SUCCESS);
    assert_allocations_equal(empty, copy);
    orte_allocation_free(copy);
    assert_int_equal(opal_buffer_remaining(&buffer), 0);
    opal_buffer_destruct(&buffer);
    orte_allocation_free(allocation);
    orte_allocation_free(empty);

    assert_int_equal(orte_allocation_pack(NULL, empty), HERD_ERR_BAD_PARAM);
    assert_int_equal(orte_allocation_unpack(&buffer, NULL), HERD_ERR_BAD_PARAM);
}

static void test_pack_refuses_invalid(void **state)
{
    orte_allocation_t *allocation = sample_allocation();
    opal_buffer_t buffer = OPAL_BUFFER_STATIC_INIT;

    assert_int_equal(opal_buffer_pack_uint8(&buffer, 7), HERD_SUCCESS);
    allocation->nodes[1].slots = 0;
    assert_int_equal(orte_allocation_pack(&buffer, allocation), HERD_ERR_BAD_PARAM);
    allocation->nodes[1].slots = 4;
    allocation->nodes[1].max_slots = 2;
    assert_int_equal(orte_allocation_pack(&buffer, allocation), HERD_ERR_BAD_PARAM);
    allocation->nodes[1].max_slots = 0;
    free(allocation->source);
    allocation->source = NULL;
    assert_int_equal(orte_allocation_pack(&buffer, allocation), HERD_ERR_BAD_PARAM);
    /* nothing was added after the first byte */
    assert_int_equal(buffer.used, 2);
    opal_buffer_destruct(&buffer);
    orte_allocation_free(allocation);
}

static void test_unpack_truncated(void **state)
{
    orte_allocation_t *allocation = sample_allocation();
    opal_buffer_t packed = OPAL_BUFFER_STATIC_INIT;

    assert_int_equal(orte_allocation_pack(&packed, allocation), HERD_SUCCESS);
    for (size_t length = 0; length < packed.used; length++) {
        opal_buffer_t partial;
        orte_allocation_t *copy = SENTINEL;
        int rc;

        opal_buffer_init(&partial);
        assert_int_equal(opal_buffer_load(&partial, packed.base, length), HERD_SUCCESS);
        rc = orte_allocation_unpack(&partial, &copy);
        assert_true(HERD_ERR_UNPACK_READ_PAST_END == rc || HERD_ERR_UNPACK_FAILURE == rc);
        assert_ptr_equal(copy, SENTINEL);
        assert_int_equal(partial.unpack_offset, 0);
        opal_buffer_destruct(&partial);
    }
    /* every single corrupted byte is refused or decodes to something valid: never a crash */
    for (size_t i = 0; i < packed.used; i++) {
        for (unsigned flip = 1; flip < 256; flip <<= 1) {
            opal_buffer_t corrupt;
            orte_allocation_t *copy = NULL;

            opal_buffer_init(&corrupt);
            assert_int_equal(opal_buffer_load(&corrupt, packed.base, packed.used), HERD_SUCCESS);
            corrupt.base[i] ^= (uint8_t) flip;
            if (HERD_SUCCESS == orte_allocation_unpack(&corrupt, &copy)) {
                opal_buffer_t again = OPAL_BUFFER_STATIC_INIT;

                assert_int_equal(orte_allocation_pack(&again, copy), HERD_SUCCESS);
                opal_buffer_destruct(&again);
                orte_allocation_free(copy);
            }
            opal_buffer_destruct(&corrupt);
        }
    }
    opal_buffer_destruct(&packed);
    orte_allocation_free(allocation);
}

/* Hand-made packings that a peer might send. */
static void expect_unpack_failure(opal_buffer_t *buffer, int expected)
{
    orte_allocation_t *copy = SENTINEL;

    assert_int_equal(orte_allocation_unpack(buffer, &copy), expected);
    assert_ptr_equal(copy, SENTINEL);
    assert_int_equal(buffer->unpack_offset, 0);
    opal_buffer_destruct(buffer);
}

static void pack_header(opal_buffer_t *buffer, uint32_t version, const char *source, uint32_t count)
{
    opal_buffer_init(buffer);
    assert_int_equal(opal_buffer_pack_uint32(buffer, version), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(buffer, source), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, count), HERD_SUCCESS);
}

static void pack_node(opal_buffer_t *buffer, const char *name, uint32_t slots, uint32_t max_slots,
                      const char *topology, const char *origin)
{
    assert_int_equal(opal_buffer_pack_string(buffer, name), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, slots), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_uint32(buffer, max_slots), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(buffer, topology), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(buffer, origin), HERD_SUCCESS);
}

static void test_unpack_malformed(void **state)
{
    opal_buffer_t buffer;
    orte_allocation_t *copy = NULL;
    char long_name[300];

    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION + 1, "x", 0);
    expect_unpack_failure(&buffer, HERD_ERR_VERSION_MISMATCH);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, NULL, 0);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "", 0);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    /* a count far beyond what follows is refused before anything is allocated for it */
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", UINT32_MAX);
    pack_node(&buffer, "a", 1, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", ORTE_RAS_MAX_NODES + 1);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 2);
    pack_node(&buffer, "a", 1, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_READ_PAST_END);

    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, "", 1, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, NULL, 1, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, long_name, 1, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, "a", 0, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, "a", 4, 2, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, "a", ORTE_RAS_MAX_SLOTS + 1, 0, NULL, NULL);
    expect_unpack_failure(&buffer, HERD_ERR_UNPACK_FAILURE);
    /* a wrong type where a count belongs */
    opal_buffer_init(&buffer);
    assert_int_equal(opal_buffer_pack_uint32(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION),
                     HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(&buffer, "x"), HERD_SUCCESS);
    assert_int_equal(opal_buffer_pack_string(&buffer, "1"), HERD_SUCCESS);
    expect_unpack_failure(&buffer, HERD_ERR_PACK_MISMATCH);

    /* the same shape, valid, decodes */
    pack_header(&buffer, ORTE_RAS_ALLOCATION_FORMAT_VERSION, "x", 1);
    pack_node(&buffer, "a", 4, 4, NULL, NULL);
    assert_int_equal(orte_allocation_unpack(&buffer, &copy), HERD_SUCCESS);
    assert_node(&copy->nodes[0], "a", 4, 4, NULL);
    assert_null(copy->nodes[0].origin);
    orte_allocation_free(copy);
    opal_buffer_destruct(&buffer);
}

/* ------------------------------------------------------------------------------------------ */
/* the framework: components, selection, fallback */

static orte_allocation_t *allocate_ok(const char *source)
{
    orte_allocation_t *allocation = NULL;
    int rc;

    rc = orte_ras_base_allocate(&allocation);
    assert_int_equal(rc, HERD_SUCCESS);
    assert_non_null(allocation);
    assert_string_equal(allocation->source, source);
    orte_ras_base_close();
    return allocation;
}

static char *allocate_error(void)
{
    orte_allocation_t *allocation = SENTINEL;
    int rc;

    herd_test_capture_start(&stderr_capture);
    rc = orte_ras_base_allocate(&allocation);
    char *message = herd_test_capture_stop(&stderr_capture);
    if (HERD_ERR_SILENT != rc) {
        print_error("rc %d\n%s\n", rc, message);
    }
    assert_int_equal(rc, HERD_ERR_SILENT);
    assert_ptr_equal(allocation, SENTINEL);
    orte_ras_base_close();
    return message;
}

static uint32_t local_cores(void)
{
    hwloc_topology_t topology;
    int count;

    assert_int_equal(hwloc_topology_init(&topology), 0);
    assert_int_equal(hwloc_topology_load(topology), 0);
    count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    if (count <= 0) {
        count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    }
    hwloc_topology_destroy(topology);
    return count > 0 ? (uint32_t) count : 1;
}

static void test_local_fallback(void **state)
{
    orte_allocation_t *allocation = allocate_ok("local");
    char host[300];

    assert_int_equal(gethostname(host, sizeof(host)), 0);
    assert_int_equal(allocation->num_nodes, 1);
    assert_node(&allocation->nodes[0], host, local_cores(), 0, "local");
    assert_null(allocation->nodes[0].topology);
    orte_allocation_free(allocation);
    assert_int_equal(orte_ras_base_allocate(NULL), HERD_ERR_BAD_PARAM);
}

static void test_framework_variables(void **state)
{
    char *value = NULL;
    int index;

    setenv("HERD_MCA_ras_base_hostfile", "/some/hosts", 1);
    setenv("HERD_MCA_ras_base_host", "a,b:2", 1);
    assert_int_equal(orte_ras_base_open(), HERD_SUCCESS);
    assert_int_equal(orte_ras_base_open(), HERD_SUCCESS); /* harmless, needs no second close */
    index = opal_mca_var_find("ras_base_hostfile");
    assert_true(index >= 0);
    assert_int_equal(opal_mca_var_value_string(index, &value), HERD_SUCCESS);
    assert_string_equal(value, "/some/hosts");
    free(value);
    assert_true(opal_mca_var_find("ras_base_host") >= 0);
    assert_string_equal(orte_ras_base_hostfile(), "/some/hosts");
    assert_string_equal(orte_ras_base_host_list(), "a,b:2");
    /* the simulator is not asked for: left unloaded (unless the build is static), its
     * variables known once loaded */
    assert_int_equal(opal_mca_var_find("ras_simulator_num_nodes") >= 0,
                     0 == orte_ras_base_framework.num_deferred);
    assert_int_equal(opal_mca_framework_load_deferred(&orte_ras_base_framework), HERD_SUCCESS);
    assert_true(opal_mca_var_find("ras_simulator_num_nodes") >= 0);
    assert_true(opal_mca_var_find("ras_simulator_topology") >= 0);
    orte_ras_base_close();
    assert_false(orte_ras_base_framework.opened);

    /* empty is the same as unset */
    setenv("HERD_MCA_ras_base_host", "", 1);
    unsetenv("HERD_MCA_ras_base_hostfile");
    assert_int_equal(orte_ras_base_open(), HERD_SUCCESS);
    assert_null(orte_ras_base_hostfile());
    assert_null(orte_ras_base_host_list());
}

static void test_hostfile_component(void **state)
{
    const char *path = write_file("component-hosts", "x1 slots=2\nx2 slots=3\nx3\n");
    orte_allocation_t *allocation;
    char *names;

    setenv("HERD_MCA_ras_base_hostfile", path, 1);
    allocation = allocate_ok("hostfile");
    names = allocation_names(allocation);
    assert_string_equal(names, "x1,x2,x3");
    free(names);
    orte_allocation_free(allocation);

    setenv("HERD_MCA_ras_base_host", "x3:5,x1", 1);
    allocation = allocate_ok("hostfile");
    assert_int_equal(allocation->num_nodes, 2);
    assert_node(&allocation->nodes[0], "x3", 5, 0, NULL);
    assert_node(&allocation->nodes[1], "x1", 2, 0, NULL);
    orte_allocation_free(allocation);

    unsetenv("HERD_MCA_ras_base_hostfile");
    allocation = allocate_ok("hostfile");
    assert_node(&allocation->nodes[0], "x3", 5, 0, "-H");
    orte_allocation_free(allocation);
    remove_file("component-hosts");
}

/* A mistake in the hostfile stops the allocation instead of falling back to another component. */
static void test_hostfile_component_errors(void **state)
{
    char missing[600];
    const char *path;
    char *message;

    snprintf(missing, sizeof(missing), "%s/missing-hosts", temp_dir);
    setenv("HERD_MCA_ras_base_hostfile", missing, 1);
    setenv("SLURM_JOB_NODELIST", "n[1-2]", 1);
    message = allocate_error();
    assert_contains(message, missing);
    assert_contains(message, "No such file or directory");
    free(message);

    path = write_file("bad-hosts", "good\nbad slots=many\n");
    setenv("HERD_MCA_ras_base_hostfile", path, 1);
    message = allocate_error();
    assert_contains(message, ":2:");
    assert_contains(message, "\"slots=many\"");
    free(message);
    remove_file("bad-hosts");

    unsetenv("HERD_MCA_ras_base_hostfile");
    setenv("HERD_MCA_ras_base_host", "a,,b", 1);
    message = allocate_error();
    assert_contains(message, "Entry 2");
    free(message);
}

static void test_slurm_component(void **state)
{
    orte_allocation_t *allocation;
    char *message;

    setenv("SLURM_JOB_NODELIST", "cn[01-03],gpu7", 1);
    setenv("SLURM_TASKS_PER_NODE", "4(x3),2", 1);
    allocation = allocate_ok("slurm");
    assert_int_equal(allocation->num_nodes, 4);
    assert_node(&allocation->nodes[0], "cn01", 4, 0, "SLURM_JOB_NODELIST");
    assert_node(&allocation->nodes[3], "gpu7", 2, 0, NULL);
    orte_allocation_free(allocation);

    setenv("SLURM_TASKS_PER_NODE", "4(x3)", 1);
    message = allocate_error();
    assert_contains(message, "SLURM_TASKS_PER_NODE");
    assert_contains(message, "SLURM_JOB_NODELIST lists 4 nodes");
    free(message);

    unsetenv("SLURM_TASKS_PER_NODE");
    setenv("SLURM_JOB_NODELIST", "cn[01-03", 1);
    message = allocate_error();
    assert_contains(message, "SLURM_JOB_NODELIST is not a valid Slurm host list");
    assert_contains(message, "character 3");
    free(message);

    /* empty is not a Slurm job */
    setenv("SLURM_JOB_NODELIST", "", 1);
    allocation = allocate_ok("local");
    orte_allocation_free(allocation);
}

static void test_simulator_component(void **state)
{
    orte_allocation_t *allocation;

    setenv("HERD_MCA_ras_simulator_num_nodes", "3", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->num_nodes, 3);
    for (uint32_t i = 0; i < 3; i++) {
        char name[16];

        snprintf(name, sizeof(name), "sim%04u", i + 1);
        /* the default topology: 2 packages of 8 cores */
        assert_node(&allocation->nodes[i], name, 16, 0, "simulator");
        assert_string_equal(allocation->nodes[i].topology, "pack:2 core:8 pu:2");
    }
    orte_allocation_free(allocation);

    /* names are as wide as the largest number */
    setenv("HERD_MCA_ras_simulator_num_nodes", "12345", 1);
    setenv("HERD_MCA_ras_simulator_topology", "pack:1 core:2 pu:1", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->num_nodes, 12345);
    assert_string_equal(allocation->nodes[0].name, "sim00001");
    assert_string_equal(allocation->nodes[12344].name, "sim12345");
    assert_int_equal(allocation->nodes[12344].slots, 2);
    orte_allocation_free(allocation);

    /* a topology without cores: one slot per hardware thread */
    setenv("HERD_MCA_ras_simulator_num_nodes", "256", 1);
    setenv("HERD_MCA_ras_simulator_topology", "pu:6", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->num_nodes, 256);
    assert_string_equal(allocation->nodes[255].name, "sim0256");
    assert_int_equal(allocation->nodes[255].slots, 6);
    orte_allocation_free(allocation);

    /* slots override the topology's cores */
    setenv("HERD_MCA_ras_simulator_slots", "3", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->nodes[0].slots, 3);
    /* one process per node unless asked: the launcher reads nodes_per_process */
    assert_int_equal(allocation->nodes_per_process, 1);
    orte_allocation_free(allocation);

    setenv("HERD_MCA_ras_simulator_nodes_per_process", "128", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->nodes_per_process, 128);
    assert_int_equal(allocation->num_nodes, 256);
    orte_allocation_free(allocation);
}

static void test_simulator_heterogeneous(void **state)
{
    static const uint32_t expected_slots[] = {2, 8, 4, 2, 8, 4, 2};
    static const char *const expected_topology[] = {"pack:1 core:2 pu:1", "pack:2 core:4 pu:2",
                                                    "pack:2 numa:2 core:1 pu:4"};
    orte_allocation_t *allocation;

    setenv("HERD_MCA_ras_simulator_num_nodes", "7", 1);
    setenv("HERD_MCA_ras_simulator_topology",
           "pack:1 core:2 pu:1; pack:2 core:4 pu:2 ;pack:2 numa:2 core:1 pu:4", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->num_nodes, 7);
    for (uint32_t i = 0; i < 7; i++) {
        assert_int_equal(allocation->nodes[i].slots, expected_slots[i]);
        assert_string_equal(allocation->nodes[i].topology, expected_topology[i % 3]);
    }
    orte_allocation_free(allocation);

    /* a kind repeated in the list is still given in turn */
    setenv("HERD_MCA_ras_simulator_num_nodes", "4", 1);
    setenv("HERD_MCA_ras_simulator_topology", "pu:1;pu:1;pu:2", 1);
    allocation = allocate_ok("simulator");
    assert_int_equal(allocation->nodes[0].slots, 1);
    assert_int_equal(allocation->nodes[1].slots, 1);
    assert_int_equal(allocation->nodes[2].slots, 2);
    assert_int_equal(allocation->nodes[3].slots, 1);
    orte_allocation_free(allocation);
}

static void test_simulator_errors(void **state)
{
    char *message;

    setenv("HERD_MCA_ras_simulator_num_nodes", "4", 1);
    setenv("HERD_MCA_ras_simulator_topology", "pack:2 core:8 pu:2;pack:2 garbage:3", 1);
    message = allocate_error();
    assert_contains(message, "Topology 2 of ras_simulator_topology");
    assert_contains(message, "\"pack:2 garbage:3\"");
    /* hwloc's own reason (it names the bad level) */
    assert_contains(message, "hwloc");
    assert_contains(message, "garbage:3'");
    free(message);
    /* asking hwloc for its reason leaves the environment as it was */
    assert_null(getenv("HWLOC_SYNTHETIC_VERBOSE"));

    setenv("HERD_MCA_ras_simulator_topology", "pack:0 core:2 pu:1", 1);
    message = allocate_error();
    assert_contains(message, "Topology 1");
    free(message);

    setenv("HERD_MCA_ras_simulator_topology", "pu:2;;pu:4", 1);
    message = allocate_error();
    assert_contains(message, "Entry 2 of ras_simulator_topology is empty");
    free(message);

    setenv("HERD_MCA_ras_simulator_topology", "", 1);
    message = allocate_error();
    assert_contains(message, "Entry 1 of ras_simulator_topology is empty");
    free(message);

    unsetenv("HERD_MCA_ras_simulator_topology");
    setenv("HERD_MCA_ras_simulator_num_nodes", "2000000", 1);
    message = allocate_error();
    assert_contains(message, "ras_simulator_num_nodes is 2000000");
    free(message);

    setenv("HERD_MCA_ras_simulator_num_nodes", "8", 1);
    setenv("HERD_MCA_ras_simulator_nodes_per_process", "0", 1);
    message = allocate_error();
    assert_contains(message, "ras_simulator_nodes_per_process is 0, but a daemon process hosts "
                             "from 1 to 4096");
    free(message);
    setenv("HERD_MCA_ras_simulator_nodes_per_process", "4097", 1);
    message = allocate_error();
    assert_contains(message, "ras_simulator_nodes_per_process is 4097");
    free(message);
    unsetenv("HERD_MCA_ras_simulator_nodes_per_process");
}

/* simulator > hostfile > slurm > this host alone */
static void test_selection_precedence(void **state)
{
    const char *path = write_file("precedence-hosts", "hf1\n");
    orte_allocation_t *allocation;

    setenv("HERD_MCA_ras_simulator_num_nodes", "2", 1);
    setenv("HERD_MCA_ras_base_hostfile", path, 1);
    setenv("SLURM_JOB_NODELIST", "sl[1-2]", 1);
    allocation = allocate_ok("simulator");
    orte_allocation_free(allocation);

    unsetenv("HERD_MCA_ras_simulator_num_nodes");
    allocation = allocate_ok("hostfile");
    assert_string_equal(allocation->nodes[0].name, "hf1");
    orte_allocation_free(allocation);

    /* slurm steps aside for an explicit hostfile even when the hostfile component is left out */
    setenv("HERD_MCA_ras", "^hostfile", 1);
    allocation = allocate_ok("local");
    orte_allocation_free(allocation);
    unsetenv("HERD_MCA_ras");

    unsetenv("HERD_MCA_ras_base_hostfile");
    allocation = allocate_ok("slurm");
    assert_string_equal(allocation->nodes[1].name, "sl2");
    orte_allocation_free(allocation);

    /* priorities are variables */
    setenv("HERD_MCA_ras_simulator_num_nodes", "2", 1);
    setenv("HERD_MCA_ras_slurm_priority", "200", 1);
    allocation = allocate_ok("slurm");
    orte_allocation_free(allocation);
    unsetenv("HERD_MCA_ras_slurm_priority");

    /* the selection variable narrows the choice */
    setenv("HERD_MCA_ras", "slurm", 1);
    allocation = allocate_ok("slurm");
    orte_allocation_free(allocation);
    remove_file("precedence-hosts");
}

/* Naming components that cannot run is an error, not a silent run on this host alone. */
static void test_selection_none_available(void **state)
{
    char *message;

    setenv("HERD_MCA_ras", "hostfile,slurm", 1);
    message = allocate_error();
    assert_contains(message, "\"hostfile,slurm\"");
    assert_contains(message, "needs --hostfile");
    free(message);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hostfile_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_duplicates_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_bad_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_slot_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_not_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_list_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_and_host_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostlist_expand, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostlist_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostlist_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostlist_caret, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tasks_per_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_allocation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocation_helpers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_printable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_display, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pack_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pack_refuses_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpack_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpack_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_framework_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostfile_component_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simulator_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simulator_heterogeneous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simulator_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_selection_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_selection_none_available, setup, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
