/* The gradient rules of the segment reductions (weft_segment and
 * weft_unsorted_segment; TensorFlow's math_grad.py): a sum's rows go back
 * to the rows that made them, a mean's divided by the segment's row count,
 * a maximum's or minimum's to the rows that reached it, shared equally
 * among ties, a product's times the product of the segment's other
 * elements (the product over the element itself where that is not 0;
 * with zeros counted apart, so an element that is 0 gets the product of
 * the others and a segment of two zeros or more passes nothing back).  A
 * negative id (unsorted) dropped its row, which gets zeros. */
#include <string.h>

#include "trace/grad.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k

/* Per-segment reductions red of v (shaped like data's first dims or like
 * data) over the node's segments: the unsorted op's count of them, or the
 * sorted op's, up to the last id. */
static weft_value *segment_of(const rule_in *r, weft_reduction red, weft_value *v)
{
    if (r->n->op == WEFT__OP_SEGMENT)
        return weft_segment(r->cx, red, v, r->b);
    return weft_unsorted_segment(r->cx, red, v, r->b, r->n->attr.index.count);
}

static weft_value *segment_sums(const rule_in *r, weft_value *v)
{
    return segment_of(r, WEFT_R_SUM, v);
}

/* Each data row's entry of per-segment v (a negative id reads segment 0;
 * the rule drops those rows). */
static weft_value *per_row(const rule_in *r, weft_value *v)
{
    return weft_gather(r->cx, v, weft_maximum(r->cx, r->b, weft_const_i64(r->cx, 0)), 0);
}

/* What a selected row of v / count(selected) gets (count at least 1: a
 * segment nothing selected is read by no row, but where computes both
 * branches). */
static weft_value *shared(const rule_in *r, weft_value *g, weft_value *count)
{
    return weft_div(r->cx, g, weft_maximum(r->cx, count, k(r, 1.0)));
}

/* Each element's share of a product's g (TensorFlow's
 * _UnsortedSegmentProdGrad). */
static weft_value *product_rows(const rule_in *r, weft_dtype dt)
{
    weft_ctx *cx = r->cx;
    weft_value *is_zero = weft_eq(cx, r->a, k(r, 0.0));
    weft_value *zeros = segment_sums(r, weft_cast(cx, is_zero, dt));
    weft_value *nonzero = weft_where(cx, is_zero, k(r, 1.0), r->a);
    weft_value *others = weft_where(cx, is_zero, per_row(r, segment_of(r, WEFT_R_PROD, nonzero)),
                                    weft_div(cx, per_row(r, r->y), nonzero));
    weft_value *g = weft_where(cx, weft_gt(cx, zeros, k(r, 1.0)), k(r, 0.0), r->g);
    return weft_mul(cx, per_row(r, g), others);
}

int weft__grad_segment(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int kind = r->n->attr.index.kind;
    int ra = weft__grad_rank(r->a), ri = weft__grad_rank(r->b);
    if (ra < 0 || ri < 0)
        return weft__grad_unsupported(r, "of a rank unknown while tracing");
    weft_dtype dt = weft__value_spec(r->g)->dtype;
    weft_value *rows;
    if (kind == WEFT_R_MEAN) {
        weft_value *count = segment_sums(r, weft_cast(cx, weft_ones_like(cx, r->b), dt));
        count = weft__grad_trailing_ones(cx, count, ra - ri);
        rows = per_row(r, shared(r, r->g, count));
    } else if (kind == WEFT_R_PROD) {
        rows = product_rows(r, dt);
    } else if (kind == WEFT_R_MAX || kind == WEFT_R_MIN) {
        weft_value *picked = weft_eq(cx, r->a, per_row(r, r->y));
        weft_value *ties = segment_sums(r, weft_cast(cx, picked, dt));
        rows = weft_where(cx, picked, per_row(r, shared(r, r->g, ties)), k(r, 0.0));
    } else {
        rows = per_row(r, r->g);
    }
    if (r->n->op == WEFT__OP_SEGMENT)
        return weft__grad_give(r, 0, rows);   /* sorted ids are never negative */
    weft_value *kept = weft_ge(cx, r->b, weft_const_i64(cx, 0));
    kept = weft__grad_trailing_ones(cx, kept, ra - ri);
    return weft__grad_give(r, 0, weft_where(cx, kept, rows, k(r, 0.0)));
}

/* isotonic_regression's fit is each pool's mean of x, so x gets its
 * pool's mean of g (TensorFlow's _MeanAggregator): the pools of every
 * line numbered apart (a line's pool index plus the line's first
 * element's place), averaged by one unsorted segment mean, read back.
 * The pool indices are the node's second output, made again (the same
 * node: a traced call computes it once). */
int weft__grad_isotonic(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *as = weft__value_spec(r->a);
    int rank = as->rank, axis = r->n->attr.index.axis;
    int64_t total = 1, dims[WEFT_MAX_RANK];
    int swap[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        swap[d] = d == axis ? rank - 1 : d == rank - 1 ? axis : d;
        if ((dims[d] = as->dims[swap[d]]) == WEFT_DIM_ANY)
            return weft__grad_unsupported(r, "of an input with a dim unknown while tracing");
        total *= dims[d];
    }
    if (total == 0)
        return weft__grad_give(r, 0, weft_zeros_like(cx, r->a));
    weft__node pools = *r->n;
    pools.attr.index.kind = 1;
    weft_value *seg = weft_transpose(cx, weft__ops_finish(cx, &pools, &r->a, 1), swap);
    int64_t lines[WEFT_MAX_RANK];
    memcpy(lines, dims, sizeof lines);
    lines[rank - 1] = 1;
    weft_value *first = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, total, dims[rank - 1]), rank,
                                     lines);
    weft_value *ids = weft_reshape(cx, weft_add(cx, weft_cast(cx, seg, WEFT_I64), first), 1,
                                   &total);
    weft_value *g = weft_reshape(cx, weft_transpose(cx, r->g, swap), 1, &total);
    weft_value *means = weft_unsorted_segment(cx, WEFT_R_MEAN, g, ids, total);
    weft_value *back = weft_reshape(cx, weft_gather(cx, means, ids, 0), rank, dims);
    return weft__grad_give(r, 0, weft_transpose(cx, back, swap));
}
