/* Common-subexpression elimination by hash-consing: two nodes with the same
 * op, attributes and (already merged) inputs compute the same value, so the
 * later one reads the earlier.  Map, host calls and control flow (cond,
 * while, map_ex, host_call_ex) are never merged; the results of one are
 * told apart by their index. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/program.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* Constants up to this many bytes are compared by content. */
#define CSE_CONST_BYTES 256

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static bool const_eq(const weft_tensor *a, const weft_tensor *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes ||
        a->nbytes > CSE_CONST_BYTES)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return memcmp(a->data, b->data, a->nbytes) == 0;
}

static uint64_t node_hash(const weft__node *n)
{
    uint64_t h = mix((uint64_t)n->op, n->flags);
    h = mix(h, (uint64_t)n->spec.dtype);
    for (uint32_t k = 0; k < n->n_in; k++)
        h = mix(h, n->in[k]);
    switch (n->op) {
    case WEFT__OP_ARG:   h = mix(h, n->attr.arg.index); break;
    case WEFT__OP_CONST: {
        const weft_tensor *t = n->attr.constant.value;
        if (t && t->nbytes <= CSE_CONST_BYTES) {
            for (size_t b = 0; b < t->nbytes; b++)
                h = mix(h, ((const unsigned char *)t->data)[b]);
        } else {
            h = mix(h, (uint64_t)(uintptr_t)t);
        }
        break;
    }
    case WEFT__OP_FILL:  h = mix(h, dbits(n->attr.fill.value)); break;
    case WEFT__OP_RANGE:
        h = mix(mix(mix(h, (uint64_t)n->attr.range.start), (uint64_t)n->attr.range.limit),
                (uint64_t)n->attr.range.delta);
        break;
    case WEFT__OP_CAST:  h = mix(h, (uint64_t)n->attr.cast.to); break;
    case WEFT__OP_RESULT: h = mix(h, n->attr.result.index); break;
    case WEFT__OP_MATMUL: h = mix(h, n->attr.matmul.flags); break;
    default:
        if (weft__is_shape_op(n->op))
            h = mix(h, weft__shape_attr_digest(n));
        if (weft__op_kind_of(n->op) == WEFT__KIND_REDUCE) {
            h = mix(h, n->attr.reduce.keepdims);
            for (unsigned k = 0; k < n->attr.reduce.n_axes && k < WEFT_MAX_RANK; k++)
                h = mix(h, (uint64_t)(int64_t)n->attr.reduce.axes[k]);
        }
        break;
    }
    return h;
}

static bool reduce_axes_eq(const struct weft__reduce_axes *a, const struct weft__reduce_axes *b)
{
    if (a->n_axes != b->n_axes || a->keepdims != b->keepdims || a->n_axes > WEFT_MAX_RANK)
        return false;
    for (unsigned k = 0; k < a->n_axes; k++)
        if (a->axes[k] != b->axes[k])
            return false;
    return true;
}

static bool node_eq(const weft__node *a, const weft__node *b)
{
    if (a->op != b->op || a->flags != b->flags || a->n_in != b->n_in || a->after != b->after ||
        !weft__spec_equal(&a->spec, &b->spec))
        return false;
    for (uint32_t k = 0; k < a->n_in; k++)
        if (a->in[k] != b->in[k])
            return false;
    switch (a->op) {
    case WEFT__OP_ARG:   return a->attr.arg.index == b->attr.arg.index;
    case WEFT__OP_CONST: return const_eq(a->attr.constant.value, b->attr.constant.value);
    case WEFT__OP_FILL:  return dbits(a->attr.fill.value) == dbits(b->attr.fill.value);
    case WEFT__OP_RANGE:
        return a->attr.range.start == b->attr.range.start &&
               a->attr.range.limit == b->attr.range.limit &&
               a->attr.range.delta == b->attr.range.delta;
    case WEFT__OP_CAST:  return a->attr.cast.to == b->attr.cast.to;
    case WEFT__OP_RESULT: return a->attr.result.index == b->attr.result.index;
    case WEFT__OP_MATMUL: return a->attr.matmul.flags == b->attr.matmul.flags;
    case WEFT__OP_RESHAPE:
        if (a->attr.reshape.rank != b->attr.reshape.rank)
            return false;
        for (int d = 0; d < a->attr.reshape.rank && d < WEFT_MAX_RANK; d++)
            if (a->attr.reshape.dims[d] != b->attr.reshape.dims[d])
                return false;
        return true;
    default:
        if (weft__op_kind_of(a->op) == WEFT__KIND_REDUCE)
            return reduce_axes_eq(&a->attr.reduce, &b->attr.reduce);
        return weft__is_shape_op(a->op) ? weft__shape_attr_eq(a, b) : true;
    }
}

static bool mergeable(const weft__node *n)
{
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_MAP: case WEFT__KIND_HOST: case WEFT__KIND_FUSED: case WEFT__KIND_CONTROL:
        return false;
    default:
        return !(n->flags & WEFT__NODE_SIDE_EFFECT);
    }
}

int weft__pass_cse(weft__graph *g)
{
    int rc = 0;
    uint32_t n = g->n_nodes, cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *table = weft__malloc((size_t)cap * sizeof *table);
    uint32_t *fwd = weft__malloc(((size_t)n + 1) * sizeof *fwd);
    bool *keep = weft__malloc(((size_t)n + 1) * sizeof *keep);
    if (!table || !fwd || !keep) {
        rc = weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
        goto done;
    }
    memset(table, 0xff, (size_t)cap * sizeof *table);
    bool merged = false;
    for (uint32_t i = 0; i < n; i++) {
        weft__node *nd = &g->nodes[i];
        fwd[i] = i;
        keep[i] = true;
        /* Read inputs through earlier merges, so chains of duplicates
         * collapse in one sweep. */
        for (uint32_t k = 0; k < nd->n_in; k++)
            nd->in[k] = fwd[nd->in[k]];
        if (nd->after != WEFT__NO_NODE)
            nd->after = fwd[nd->after];
        if (!mergeable(nd))
            continue;
        uint32_t slot = (uint32_t)node_hash(nd) & (cap - 1);
        for (;;) {
            uint32_t j = table[slot];
            if (j == WEFT__NO_NODE) {
                table[slot] = i;
                break;
            }
            if (node_eq(&g->nodes[j], nd)) {
                fwd[i] = j;
                keep[i] = false;
                merged = true;
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
    }
    if (merged)
        rc = weft__graph_rebuild(g, keep, fwd, NULL);
done:
    weft__free(table);
    weft__free(fwd);
    weft__free(keep);
    return rc;
}
