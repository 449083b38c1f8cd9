/* SPDX-License-Identifier: BSD-3-Clause */
/* Interface filters: names and subnets parse, bad entries are refused, matching by name and by
 * address (IPv4 and IPv6, any prefix length). */
#include "herd_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/if_filter.h"

static struct sockaddr_storage v4(const char *text)
{
    struct sockaddr_storage ss;
    struct sockaddr_in in = {.sin_family = AF_INET};
    memset(&ss, 0, sizeof(ss));
    assert_int_equal(1, inet_pton(AF_INET, text, &in.sin_addr));
    memcpy(&ss, &in, sizeof(in));
    return ss;
}

static struct sockaddr_storage v6(const char *text)
{
    struct sockaddr_storage ss;
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    memset(&ss, 0, sizeof(ss));
    assert_int_equal(1, inet_pton(AF_INET6, text, &in6.sin6_addr));
    memcpy(&ss, &in6, sizeof(in6));
    return ss;
}

static bool matches(const char *filter_text, const char *ifname, struct sockaddr_storage addr)
{
    opal_if_filter_t filter;
    assert_int_equal(HERD_SUCCESS, opal_if_filter_parse(filter_text, &filter));
    bool result = opal_if_filter_matches(&filter, ifname, (struct sockaddr *) &addr);
    opal_if_filter_release(&filter);
    return result;
}

static void test_parse(void **state)
{
    opal_if_filter_t f;
    assert_int_equal(HERD_SUCCESS, opal_if_filter_parse("eth0", &f));
    assert_string_equal("eth0", f.name);
    opal_if_filter_release(&f);
    assert_null(f.name);
    assert_int_equal(HERD_SUCCESS, opal_if_filter_parse("10.0.0.0/8", &f));
    assert_null(f.name);
    assert_int_equal(AF_INET, f.family);
    assert_int_equal(8, f.prefix);
    assert_int_equal(HERD_SUCCESS, opal_if_filter_parse("10.1.2.3", &f));
    assert_int_equal(32, f.prefix);
    assert_int_equal(HERD_SUCCESS, opal_if_filter_parse("fd00::/64", &f));
    assert_int_equal(AF_INET6, f.family);
    assert_int_equal(64, f.prefix);
    const char *bad[] = {"", "eth0/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/8x", "fd00::/129",
                         "10.0.0.0/0008", "averyveryverylonginterfacename"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        f.name = (char *) "untouched";
        assert_int_equal(HERD_ERR_BAD_PARAM, opal_if_filter_parse(bad[i], &f));
        assert_string_equal("untouched", f.name); /* output set only on success */
    }
}

static void test_match(void **state)
{
    assert_true(matches("eth0", "eth0", v4("1.2.3.4")));
    assert_false(matches("eth0", "eth1", v4("1.2.3.4")));
    assert_true(matches("10.0.0.0/8", "any", v4("10.200.1.1")));
    assert_false(matches("10.0.0.0/8", "any", v4("11.0.0.1")));
    assert_true(matches("192.168.1.0/25", "x", v4("192.168.1.127")));
    assert_false(matches("192.168.1.0/25", "x", v4("192.168.1.128")));
    assert_true(matches("0.0.0.0/0", "x", v4("8.8.8.8")));
    assert_false(matches("10.0.0.0/8", "x", v6("::ffff:10.0.0.1"))); /* another family */
    assert_true(matches("fd00::/64", "x", v6("fd00::1234")));
    assert_false(matches("fd00::/64", "x", v6("fd00:0:0:1::1")));
    assert_true(matches("10.1.2.3", "x", v4("10.1.2.3")));
    assert_false(matches("10.1.2.3", "x", v4("10.1.2.4")));
    opal_if_filter_t f;
    assert_int_equal(HERD_SUCCESS, opal_if_filter_parse("10.0.0.0/8", &f));
    assert_false(opal_if_filter_matches(&f, "x", NULL)); /* no address: a subnet cannot match */
}

static void test_list(void **state)
{
    opal_if_filter_t *filters = (opal_if_filter_t *) 1;
    size_t count = 99;
    char *bad = NULL;
    assert_int_equal(HERD_SUCCESS,
                     opal_if_filter_list_parse(" lo ,, eth0,10.0.0.0/8 ", &filters, &count, &bad));
    assert_int_equal(3, count);
    assert_string_equal("lo", filters[0].name);
    assert_string_equal("eth0", filters[1].name);
    assert_int_equal(8, filters[2].prefix);
    opal_if_filter_list_free(filters, count);
    assert_int_equal(HERD_SUCCESS, opal_if_filter_list_parse("", &filters, &count, &bad));
    assert_int_equal(0, count);
    assert_null(filters);
    count = 99;
    assert_int_equal(HERD_ERR_BAD_PARAM,
                     opal_if_filter_list_parse("lo, 10.0.0.0/99", &filters, &count, &bad));
    assert_string_equal("10.0.0.0/99", bad); /* blanks trimmed: what the user wrote */
    assert_int_equal(99, count);            /* outputs set only on success */
    free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
