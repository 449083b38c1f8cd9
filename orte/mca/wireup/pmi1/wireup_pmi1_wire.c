/* SPDX-License-Identifier: BSD-3-Clause */
/* wireup pmi1: framing and decoding of PMI-1 messages, and PMI_process_mapping. Everything here
 * trusts nothing it is given: limits are checked before anything is allocated. */
#include "herd_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/status.h"
#include "orte/mca/wireup/pmi1/wireup_pmi1.h"

#define MCMD_PREFIX "mcmd="
#define ENDCMD      "endcmd\n"

long wireup_pmi1_frame(const char *buf, size_t len)
{
    if (len >= 5 && 0 == memcmp(buf, MCMD_PREFIX, 5)) {
        /* a block ends with a line "endcmd" */
        size_t line_start = 0;
        for (size_t i = 0; i < len; ++i) {
            if ('\n' != buf[i]) {
                continue;
            }
            if (i + 1 - line_start == strlen(ENDCMD) &&
                0 == memcmp(buf + line_start, ENDCMD, strlen(ENDCMD))) {
                return (long) (i + 1);
            }
            line_start = i + 1;
        }
        return len > WIREUP_PMI1_MAX_BLOCK ? (long) HERD_ERR_BAD_PARAM : 0;
    }
    const char *nl = memchr(buf, '\n', len);
    if (NULL != nl) {
        size_t n = (size_t) (nl - buf) + 1;
        return n > WIREUP_PMI1_MAX_LINE ? (long) HERD_ERR_BAD_PARAM : (long) n;
    }
    /* a partial "mcmd=" may still become a block */
    if (len < 5 && 0 == memcmp(buf, MCMD_PREFIX, len)) {
        return 0;
    }
    return len > WIREUP_PMI1_MAX_LINE ? (long) HERD_ERR_BAD_PARAM : 0;
}

static int add_pair(wireup_pmi1_msg_t *m, const char *key, size_t klen, const char *value,
                    size_t vlen)
{
    if (0 == klen || m->num_pairs >= WIREUP_PMI1_MAX_PAIRS) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    if (0 == m->num_pairs % 16) {
        wireup_pmi1_pair_t *grown = realloc(m->pairs, (m->num_pairs + 16) * sizeof(*grown));
        if (NULL == grown) {
            return HERD_ERR_OUT_OF_RESOURCE;
        }
        m->pairs = grown;
    }
    char *k = strndup(key, klen), *v = strndup(value, vlen);
    if (NULL == k || NULL == v) {
        free(k);
        free(v);
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    m->pairs[m->num_pairs].key = k;
    m->pairs[m->num_pairs].value = v;
    m->num_pairs++;
    return HERD_SUCCESS;
}

void wireup_pmi1_msg_free(wireup_pmi1_msg_t *m)
{
    if (NULL == m) {
        return;
    }
    for (size_t i = 0; i < m->num_pairs; ++i) {
        free(m->pairs[i].key);
        free(m->pairs[i].value);
    }
    free(m->pairs);
    free(m->cmd);
    memset(m, 0, sizeof(*m));
}

/* One "cmd=NAME k=v k=v" line (no newline): space-separated tokens, each key=value. */
static int parse_line(const char *s, size_t len, wireup_pmi1_msg_t *m)
{
    size_t i = 0;
    bool first = true;
    while (i < len) {
        while (i < len && ' ' == s[i]) {
            ++i;
        }
        if (i == len) {
            break;
        }
        size_t start = i;
        while (i < len && ' ' != s[i]) {
            ++i;
        }
        const char *eq = memchr(s + start, '=', i - start);
        if (NULL == eq) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        size_t klen = (size_t) (eq - (s + start));
        const char *value = eq + 1;
        size_t vlen = i - start - klen - 1;
        if (first) {
            if (3 != klen || 0 != memcmp(s + start, "cmd", 3) || 0 == vlen) {
                return HERD_ERR_UNPACK_FAILURE;
            }
            if (NULL == (m->cmd = strndup(value, vlen))) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            first = false;
            continue;
        }
        int rc = add_pair(m, s + start, klen, value, vlen);
        if (HERD_SUCCESS != rc) {
            return rc;
        }
    }
    return first ? HERD_ERR_UNPACK_FAILURE : HERD_SUCCESS;
}

/* A "mcmd=NAME" block: one key=value a line, up to "endcmd". */
static int parse_block(const char *s, size_t len, wireup_pmi1_msg_t *m)
{
    size_t i = 0;
    bool first = true;
    while (i < len) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t end = (NULL != nl) ? (size_t) (nl - s) : len;
        size_t llen = end - i;
        if (6 == llen && 0 == memcmp(s + i, "endcmd", 6)) {
            return first ? HERD_ERR_UNPACK_FAILURE : HERD_SUCCESS;
        }
        const char *eq = memchr(s + i, '=', llen);
        if (NULL == eq) {
            return HERD_ERR_UNPACK_FAILURE;
        }
        size_t klen = (size_t) (eq - (s + i));
        size_t vlen = llen - klen - 1;
        if (first) {
            if (4 != klen || 0 != memcmp(s + i, "mcmd", 4) || 0 == vlen) {
                return HERD_ERR_UNPACK_FAILURE;
            }
            if (NULL == (m->cmd = strndup(eq + 1, vlen))) {
                return HERD_ERR_OUT_OF_RESOURCE;
            }
            first = false;
        } else {
            int rc = add_pair(m, s + i, klen, eq + 1, vlen);
            if (HERD_SUCCESS != rc) {
                return rc;
            }
        }
        i = end + 1;
    }
    return HERD_ERR_UNPACK_FAILURE; /* no endcmd */
}

int wireup_pmi1_parse(const char *buf, size_t len, wireup_pmi1_msg_t *out)
{
    wireup_pmi1_msg_t m = {0};
    if (NULL == buf || 0 == len || NULL != memchr(buf, '\0', len)) {
        return HERD_ERR_UNPACK_FAILURE;
    }
    int rc;
    if (len >= 5 && 0 == memcmp(buf, MCMD_PREFIX, 5)) {
        m.multi = true;
        rc = (len <= WIREUP_PMI1_MAX_BLOCK) ? parse_block(buf, len, &m) : HERD_ERR_UNPACK_FAILURE;
    } else {
        size_t n = ('\n' == buf[len - 1]) ? len - 1 : len;
        rc = (n <= WIREUP_PMI1_MAX_LINE) ? parse_line(buf, n, &m) : HERD_ERR_UNPACK_FAILURE;
    }
    if (HERD_SUCCESS != rc) {
        wireup_pmi1_msg_free(&m);
        return rc;
    }
    *out = m;
    return HERD_SUCCESS;
}

const char *wireup_pmi1_get(const wireup_pmi1_msg_t *m, const char *key)
{
    for (size_t i = 0; i < m->num_pairs; ++i) {
        if (0 == strcmp(m->pairs[i].key, key)) {
            return m->pairs[i].value;
        }
    }
    return NULL;
}

bool wireup_pmi1_value_ok(const char *value, size_t len, size_t max)
{
    if (len > max) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        if (' ' == value[i] || '\n' == value[i] || '\0' == value[i]) {
            return false;
        }
    }
    return true;
}

int wireup_pmi1_process_mapping(const unsigned *node_of, size_t num_ranks, char *buf, size_t size)
{
    size_t used = 0;
    int n = snprintf(buf, size, "(vector");
    if (n < 0 || (size_t) n >= size) {
        return HERD_ERR_OUT_OF_RESOURCE;
    }
    used = (size_t) n;
    /* runs of ranks on one node; consecutive runs of one length on consecutive nodes merge into
     * one block (first node, nodes, ranks per node) */
    size_t r = 0;
    unsigned block_node = 0, block_nodes = 0;
    size_t block_ppn = 0;
    while (r <= num_ranks) {
        unsigned node = 0;
        size_t run = 0;
        if (r < num_ranks) {
            node = node_of[r];
            while (r + run < num_ranks && node_of[r + run] == node) {
                ++run;
            }
        }
        if (block_nodes > 0 && r < num_ranks && run == block_ppn &&
            node == block_node + block_nodes) {
            block_nodes++;
        } else {
            if (block_nodes > 0) {
                n = snprintf(buf + used, size - used, ",(%u,%u,%zu)", block_node, block_nodes,
                             block_ppn);
                if (n < 0 || (size_t) n >= size - used) {
                    return HERD_ERR_OUT_OF_RESOURCE;
                }
                used += (size_t) n;
            }
            block_node = node;
            block_nodes = 1;
            block_ppn = run;
        }
        if (r == num_ranks) {
            break;
        }
        r += run;
    }
    n = snprintf(buf + used, size - used, ")");
    return (n < 0 || (size_t) n >= size - used) ? HERD_ERR_OUT_OF_RESOURCE : HERD_SUCCESS;
}
