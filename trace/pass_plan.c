/* Buffer planning.  A FUSED node writes its result into the buffer of a
 * value that is dead by the time it runs (in place when that value is one
 * of its own inputs), instead of allocating.  Since the executor runs ready
 * ops in any order, "dead" must hold in every order: every reader of the
 * donor must be an ancestor of the receiver.  Ancestry is kept as bitsets,
 * so graphs above PLAN_MAX_NODES get no reuse. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/program.h"
#include "trace/tensor_impl.h"

#define PLAN_MAX_NODES 4096

static bool known_bytes(const weft_spec *s, int64_t *out)
{
    if (s->rank < 0)
        return false;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0)
            return false;
    return weft__numel_checked(s->rank, s->dims, weft_dtype_size(s->dtype), out);
}

static bool can_donate(const weft__graph *g, const uint8_t *pflags, uint32_t b)
{
    weft__op_kind k = weft__op_kind_of(g->nodes[b].op);
    return !(pflags[b] & (WEFT__PN_OUTPUT | WEFT__PN_BORROWED | WEFT__PN_DONOR)) &&
           k != WEFT__KIND_MAP && k != WEFT__KIND_HOST && k != WEFT__KIND_LEAF;
}

int weft__plan_buffers(const weft__graph *g, const uint8_t *pflags, uint32_t *donor)
{
    uint32_t n = g->n_nodes;
    for (uint32_t i = 0; i < n; i++)
        donor[i] = WEFT__NO_NODE;
    bool any_fused = false;
    for (uint32_t i = 0; i < n; i++)
        any_fused |= g->nodes[i].op == WEFT__OP_FUSED;
    if (!any_fused || n > PLAN_MAX_NODES)
        return 0;

    int rc = 0;
    size_t words = ((size_t)n + 63) / 64;
    uint64_t *anc = weft__calloc((size_t)n * words, sizeof *anc);
    uint32_t *rd_off = weft__calloc((size_t)n + 2, sizeof *rd_off);
    uint32_t *rd = NULL, *fill = NULL;
    uint8_t *flags = weft__malloc((size_t)n + 1);
    if (!anc || !rd_off || !flags)
        goto nomem;
    memcpy(flags, pflags, n);
    size_t edges = 0;
    for (uint32_t i = 0; i < n; i++) {
        const weft__node *nd = &g->nodes[i];
        uint64_t *a = &anc[(size_t)i * words];
        for (uint32_t k = 0; k <= nd->n_in; k++) {
            uint32_t p = k < nd->n_in ? nd->in[k] : nd->after;
            if (p == WEFT__NO_NODE)
                continue;
            const uint64_t *pa = &anc[(size_t)p * words];
            for (size_t w = 0; w < words; w++)
                a[w] |= pa[w];
            a[p / 64] |= 1ull << (p % 64);
        }
        edges += nd->n_in;
        for (uint32_t k = 0; k < nd->n_in; k++)
            rd_off[nd->in[k] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
        rd_off[i + 1] += rd_off[i];
    rd = weft__malloc((edges + 1) * sizeof *rd);
    fill = weft__malloc(((size_t)n + 1) * sizeof *fill);
    if (!rd || !fill)
        goto nomem;
    memcpy(fill, rd_off, (size_t)n * sizeof *fill);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < g->nodes[i].n_in; k++)
            rd[fill[g->nodes[i].in[k]]++] = i;

    for (uint32_t i = 0; i < n; i++) {
        const weft__node *nd = &g->nodes[i];
        if (nd->op != WEFT__OP_FUSED)
            continue;
        const uint64_t *a = &anc[(size_t)i * words];
        int64_t need = -1, have;
        if (!known_bytes(&nd->spec, &need))
            need = -1;
        uint32_t best = WEFT__NO_NODE;
        for (uint32_t b = 0; b < i; b++) {
            if (!can_donate(g, flags, b) || g->nodes[b].spec.dtype != nd->spec.dtype)
                continue;
            if (need >= 0 && known_bytes(&g->nodes[b].spec, &have) && have < need)
                continue;
            if (rd_off[b] == rd_off[b + 1])
                continue;
            bool dead = true;
            for (uint32_t r = rd_off[b]; r < rd_off[b + 1] && dead; r++) {
                uint32_t c = rd[r];
                dead = c == i || (a[c / 64] >> (c % 64) & 1);
            }
            if (!dead)
                continue;
            bool is_input = false;
            for (uint32_t k = 0; k < nd->n_in; k++)
                is_input |= nd->in[k] == b;
            /* In place on an input is best: its bytes are in cache. */
            if (best == WEFT__NO_NODE || is_input)
                best = b;
            if (is_input)
                break;
        }
        if (best != WEFT__NO_NODE) {
            donor[i] = best;
            flags[best] |= WEFT__PN_DONOR;
        }
    }
    goto done;
nomem:
    rc = weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
done:
    weft__free(anc);
    weft__free(rd_off);
    weft__free(rd);
    weft__free(fill);
    weft__free(flags);
    return rc;
}
