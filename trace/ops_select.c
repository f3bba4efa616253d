/* The selection ops of include/weft/ops.h: argwhere, boolean_mask, unique
 * and unique_with_counts, whose results the input values size.  Each
 * records nodes of its own (ARGWHERE, BOOLEAN_MASK, UNIQUE_*), checked by
 * trace/infer_select.c and computed by trace/kernel_select.c.  unique
 * hashes x once, into the indices; the first occurrences and the counts
 * are read off the indices, and the values are x gathered at the first
 * occurrences. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/shape.h"

weft_value *weft_argwhere(weft_ctx *cx, weft_value *a)
{
    if (!weft__op_enter(cx, "weft_argwhere", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_ARGWHERE };
    return weft__ops_finish(cx, &n, &a, 1);
}

weft_value *weft_boolean_mask(weft_ctx *cx, weft_value *tensor, weft_value *mask, int axis)
{
    weft_value *in[2] = { tensor, mask };
    if (!weft__op_enter(cx, "weft_boolean_mask", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_BOOLEAN_MASK, .attr.index.axis = axis };
    return weft__ops_finish(cx, &n, in, 2);
}

/* unique's parts: outs[0] the values, outs[1] the indices and, when
 * counts, outs[2] the counts. */
static int unique_parts(weft_ctx *cx, const char *fn, weft_value *x, weft_value **outs,
                        bool counts)
{
    size_t n_outs = counts ? 3 : 2;
    for (size_t k = 0; outs && k < n_outs; k++)
        outs[k] = NULL;
    if (!weft__op_enter(cx, fn, &x, 1))
        return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: outs is NULL", fn);
        return weft_ctx_status(cx);
    }
    weft__node first_n = { .op = WEFT__OP_UNIQUE_FIRST };
    weft__node idx_n = { .op = WEFT__OP_UNIQUE_IDX };
    weft__node counts_n = { .op = WEFT__OP_UNIQUE_COUNTS };
    weft_value *idx = weft__ops_finish(cx, &idx_n, &x, 1);
    weft_value *first = idx ? weft__ops_finish(cx, &first_n, &idx, 1) : NULL;
    weft_value *values = first ? weft_gather(cx, x, first, 0) : NULL;
    weft_value *count = values && counts ? weft__ops_finish(cx, &counts_n, &idx, 1) : NULL;
    if (!values || (counts && !count))
        return weft_ctx_status(cx);
    outs[0] = values;
    outs[1] = idx;
    if (counts)
        outs[2] = count;
    return 0;
}

int weft_unique(weft_ctx *cx, weft_value *x, weft_value **outs)
{
    return unique_parts(cx, "weft_unique", x, outs, false);
}

int weft_unique_with_counts(weft_ctx *cx, weft_value *x, weft_value **outs)
{
    return unique_parts(cx, "weft_unique_with_counts", x, outs, true);
}
