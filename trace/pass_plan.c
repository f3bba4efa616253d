/* Buffer planning.  Every op whose result buffer the executor provides
 * (fused, elementwise, reductions, shape ops, matmul, fill, range) writes it
 * into the buffer of a value that is dead by the time it runs (in place
 * when that value is one of its own inputs and the kernel allows it),
 * instead of allocating.  Since the executor runs ready ops in any order,
 * "dead" must hold in every order: every reader of the donor must be an
 * ancestor of the receiver.  Ancestry is kept as bitsets, so graphs above
 * PLAN_MAX_NODES get no reuse. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/program.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

#define PLAN_MAX_NODES 4096

bool weft__plan_is_planned(weft__op op)
{
    if (weft__op_shape_from_values(op))
        return false;   /* its kernel sizes the result */
    switch (weft__op_kind_of(op)) {
    case WEFT__KIND_LEAF:
        return op == WEFT__OP_FILL || op == WEFT__OP_RANGE;
    case WEFT__KIND_MAP:
    case WEFT__KIND_HOST:
    case WEFT__KIND_CONTROL:   /* results come from the functions they run */
    case WEFT__KIND_RESULT:
        return false;
    default:
        return true;
    }
}

static bool can_donate(const weft__graph *g, const uint8_t *pflags, uint32_t b)
{
    return !(pflags[b] & (WEFT__PN_OUTPUT | WEFT__PN_BORROWED | WEFT__PN_DONOR)) &&
           weft__plan_is_planned(g->nodes[b].op);
}

/* Whether node nd may write in place into its input b: elementwise loops
 * read element k before writing element k, so the input must have the
 * result's dtype and shape (unknown dims are checked again at run time);
 * reshape copies bytes; reductions and matmul read inputs after writing;
 * of the ARRAY ops, only those that read an element before writing it. */
static bool in_place_ok(const weft__node *nd, const weft__node *b)
{
    if (b->spec.dtype != nd->spec.dtype)
        return false;
    switch (weft__op_kind_of(nd->op)) {
    case WEFT__KIND_SHAPE:
        return true;
    case WEFT__KIND_ARRAY:   /* then, like elementwise ops, the same shape */
        if (!weft__shape_in_place_ok(nd))
            return false;
        /* fall through */
    case WEFT__KIND_UNARY:
    case WEFT__KIND_BINARY:
    case WEFT__KIND_TERNARY:
    case WEFT__KIND_CAST:
    case WEFT__KIND_FUSED:
        if (b->spec.rank != nd->spec.rank)
            return false;
        for (int d = 0; d < nd->spec.rank; d++)
            if (b->spec.dims[d] != nd->spec.dims[d])
                return false;
        return true;
    default:
        return false;
    }
}

static bool reads(const weft__node *nd, uint32_t b)
{
    for (uint32_t k = 0; k < nd->n_in; k++)
        if (nd->in[k] == b)
            return true;
    return false;
}

/* Whether every reader of b is node i or one of its ancestors (anc_i). */
static bool dead_at(const uint32_t *rd_off, const uint32_t *rd, uint32_t b, uint32_t i,
                    const uint64_t *anc_i)
{
    if (rd_off[b] == rd_off[b + 1])
        return false;
    for (uint32_t r = rd_off[b]; r < rd_off[b + 1]; r++) {
        uint32_t c = rd[r];
        if (c != i && !(anc_i[c / 64] >> (c % 64) & 1))
            return false;
    }
    return true;
}

int weft__plan_buffers(const weft__graph *g, const uint8_t *pflags, uint32_t *donor)
{
    uint32_t n = g->n_nodes;
    for (uint32_t i = 0; i < n; i++)
        donor[i] = WEFT__NO_NODE;
    bool any_planned = false;
    for (uint32_t i = 0; i < n; i++)
        any_planned |= weft__plan_is_planned(g->nodes[i].op);
    if (!any_planned || n > PLAN_MAX_NODES)
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

    /* Donor candidates in id order (fill[] is free again): values with
     * readers that may be given away; dropped once they are. */
    uint32_t *avail = fill, n_avail = 0;
    for (uint32_t i = 0; i < n; i++) {
        const weft__node *nd = &g->nodes[i];
        if (weft__plan_is_planned(nd->op)) {
            const uint64_t *a = &anc[(size_t)i * words];
            uint32_t best = WEFT__NO_NODE;
            /* In place on an input is best: its bytes are in cache. */
            for (uint32_t k = 0; k < nd->n_in && best == WEFT__NO_NODE; k++) {
                uint32_t b = nd->in[k];
                if (can_donate(g, flags, b) && dead_at(rd_off, rd, b, i, a) &&
                    in_place_ok(nd, &g->nodes[b]))
                    best = b;
            }
            uint32_t w = 0;
            for (uint32_t q = 0; q < n_avail; q++) {
                uint32_t b = avail[q];
                if (flags[b] & WEFT__PN_DONOR)
                    continue;
                avail[w++] = b;
                if (best == WEFT__NO_NODE && !reads(nd, b) && dead_at(rd_off, rd, b, i, a))
                    best = b;
            }
            n_avail = w;
            if (best != WEFT__NO_NODE) {
                donor[i] = best;
                flags[best] |= WEFT__PN_DONOR;
            }
        }
        if (can_donate(g, flags, i) && rd_off[i] != rd_off[i + 1])
            avail[n_avail++] = i;
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
