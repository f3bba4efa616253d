/* The gradient rules of the segment reductions (weft_segment and
 * weft_unsorted_segment; TensorFlow's math_grad.py): a sum's rows go back
 * to the rows that made them, a mean's divided by the segment's row count,
 * a maximum's or minimum's to the rows that reached it, shared equally
 * among ties.  A negative id (unsorted) dropped its row, which gets
 * zeros.  Products have no rule. */
#include "trace/grad.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k

/* Per-segment sums of v (shaped like data's first dims or like data) over
 * the node's segments: the unsorted op's count of them, or the sorted
 * op's, up to the last id. */
static weft_value *segment_sums(const rule_in *r, weft_value *v)
{
    if (r->n->op == WEFT__OP_SEGMENT)
        return weft_segment(r->cx, WEFT_R_SUM, v, r->b);
    return weft_unsorted_segment(r->cx, WEFT_R_SUM, v, r->b, r->n->attr.index.count);
}

/* Each data row's entry of per-segment v (a negative id reads segment 0;
 * the rule drops those rows). */
static weft_value *per_row(const rule_in *r, weft_value *v)
{
    return weft_gather(r->cx, v, weft_maximum(r->cx, r->b, weft_const_i64(r->cx, 0)), 0);
}

/* v with `n` dims of 1 appended. */
static weft_value *trailing_ones(weft_ctx *cx, weft_value *v, int n)
{
    for (int d = 0; d < n && v; d++)
        v = weft_expand_dims(cx, v, -1);
    return v;
}

/* What a selected row of v / count(selected) gets (count at least 1: a
 * segment nothing selected is read by no row, but where computes both
 * branches). */
static weft_value *shared(const rule_in *r, weft_value *g, weft_value *count)
{
    return weft_div(r->cx, g, weft_maximum(r->cx, count, k(r, 1.0)));
}

int weft__grad_segment(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int kind = r->n->attr.index.kind;
    int ra = weft__grad_rank(r->a), ri = weft__grad_rank(r->b);
    if (kind == WEFT_R_PROD)
        return weft__grad_unsupported(r, "of a product");
    if (ra < 0 || ri < 0)
        return weft__grad_unsupported(r, "of a rank unknown while tracing");
    weft_dtype dt = weft__value_spec(r->g)->dtype;
    weft_value *rows;
    if (kind == WEFT_R_MEAN) {
        weft_value *count = segment_sums(r, weft_cast(cx, weft_ones_like(cx, r->b), dt));
        rows = per_row(r, shared(r, r->g, trailing_ones(cx, count, ra - ri)));
    } else if (kind == WEFT_R_MAX || kind == WEFT_R_MIN) {
        weft_value *picked = weft_eq(cx, r->a, per_row(r, r->y));
        weft_value *ties = segment_sums(r, weft_cast(cx, picked, dt));
        rows = weft_where(cx, picked, per_row(r, shared(r, r->g, ties)), k(r, 0.0));
    } else {
        rows = per_row(r, r->g);
    }
    if (r->n->op == WEFT__OP_SEGMENT)
        return weft__grad_give(r, 0, rows);   /* sorted ids are never negative */
    weft_value *kept = trailing_ones(cx, weft_ge(cx, r->b, weft_const_i64(cx, 0)), ra - ri);
    return weft__grad_give(r, 0, weft_where(cx, kept, rows, k(r, 0.0)));
}
