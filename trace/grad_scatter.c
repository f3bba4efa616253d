/* The gradient rules of the tensor scatters (weft_gradients; TensorFlow's
 * array_grad.py, where they agree with what weft's kernels compute):
 * - add / sub: the tensor passes g through; each update gets (or,
 *   subtracted, loses) the slice of g its tuple names.
 * - update: the replaced slices pass nothing back to the tensor; an
 *   update gets its slice of g only if it is the one that landed (with
 *   duplicate tuples the last one in row-major order: the kernel's rule),
 *   found by scattering the updates' positions the same way and reading
 *   them back.  TensorFlow gives every duplicate the slice's gradient,
 *   which is not the derivative of what it computes.
 * - max / min: g shared equally among the values that reached each
 *   element, the tensor's own and the updates' (TensorFlow's rule). */
#include "trace/grad.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k
#define wants weft__grad_wants
#define give weft__grad_give

/* The number of dims of updates beyond the tuples' (the slice's rank). */
static int slice_rank(const rule_in *r, weft_value *updates)
{
    return weft__grad_rank(updates) - (weft__grad_rank(r->b) - 1);
}

/* i64 ids of the updates, shaped like indices without its last dim, in
 * row-major order; NULL when that shape is of rank above 1 and not known
 * while tracing. */
static weft_value *update_ids(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *is = weft__value_spec(r->b);
    int lead = is->rank - 1;
    if (lead == 1) {
        weft_value *first = weft_slice(cx, r->b, NULL, (const int64_t[]){ WEFT_END, 1 }, NULL);
        weft_value *ones = weft_cast(cx, weft_ones_like(cx, weft_squeeze(cx, first, -1)),
                                     WEFT_I64);
        return weft_sub(cx, weft_cumsum(cx, ones, 0), weft_const_i64(cx, 1));
    }
    int64_t count = 1;
    for (int d = 0; d < lead; d++) {
        if (is->dims[d] == WEFT_DIM_ANY)
            return NULL;
        count *= is->dims[d];
    }
    return weft_reshape(cx, weft_range(cx, WEFT_I64, 0, count, 1), lead, is->dims);
}

/* i64 zeros of the tensor's first q dims (those the tuples index). */
static weft_value *tuple_space(const rule_in *r, int64_t q)
{
    weft_ctx *cx = r->cx;
    int rank = weft__grad_rank(r->a);
    int64_t end[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        end[d] = d < q ? WEFT_END : 1;
    weft_value *v = weft_slice(cx, r->a, NULL, end, NULL);
    for (int d = (int)q; d < rank; d++)
        v = weft_squeeze(cx, v, -1);
    return weft_cast(cx, weft_zeros_like(cx, v), WEFT_I64);
}

/* bool, shaped like indices without its last dim: whether each update is
 * the one its slice ends with (its id scattered the same way reads back);
 * NULL (no error recorded) when update_ids has none. */
static weft_value *landed(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *is = weft__value_spec(r->b);
    weft_value *ids = update_ids(r);
    if (!ids)
        return NULL;
    weft_value *space = tuple_space(r, is->dims[is->rank - 1]);
    weft_value *won = weft_gather_nd(cx, weft_scatter_nd_update(cx, space, r->b, ids), r->b);
    return weft_eq(cx, won, ids);
}

static int update_rule(const rule_in *r, weft_value *updates)
{
    weft_ctx *cx = r->cx;
    int rc = give(r, 0, weft_scatter_nd_update(cx, r->g, r->b, weft_zeros_like(cx, updates)));
    if (rc < 0 || !wants(r, 2))
        return rc;
    weft_value *mask = landed(r);
    if (!mask && weft_ctx_status(cx) == 0)
        return weft__grad_unsupported(r, "for its updates when the indices have more than one "
                                         "dim before the tuples and one is unknown while "
                                         "tracing");
    mask = weft__grad_trailing_ones(cx, mask, slice_rank(r, updates));
    return give(r, 2, weft_where(cx, mask, weft_gather_nd(cx, r->g, r->b), k(r, 0.0)));
}

static int extreme_rule(const rule_in *r, weft_value *updates)
{
    weft_ctx *cx = r->cx;
    weft_dtype dt = weft__value_spec(r->g)->dtype;
    weft_value *x_won = weft_cast(cx, weft_eq(cx, r->a, r->y), dt);
    weft_value *u_won = weft_cast(cx, weft_eq(cx, updates, weft_gather_nd(cx, r->y, r->b)), dt);
    weft_value *winners = weft_add(cx, x_won, weft_scatter_nd_add(cx, weft_zeros_like(cx, r->a),
                                                                  r->b, u_won));
    /* At least 1 where a NaN reached the element (no value equals it). */
    weft_value *share = weft_div(cx, r->g, weft_maximum(cx, winners, k(r, 1.0)));
    int rc = give(r, 0, weft_mul(cx, share, x_won));
    if (rc < 0 || !wants(r, 2))
        return rc;
    return give(r, 2, weft_mul(cx, weft_gather_nd(cx, share, r->b), u_won));
}

int weft__grad_scatter(const rule_in *r)
{
    weft_value *updates = r->t->val[r->n->in[2]];
    switch (r->n->op) {
    case WEFT__OP_SCATTER_ND_UPDATE:
        return update_rule(r, updates);
    case WEFT__OP_SCATTER_ND_MAX: case WEFT__OP_SCATTER_ND_MIN:
        return extreme_rule(r, updates);
    default: {
        int rc = give(r, 0, r->g);
        if (rc < 0 || !wants(r, 2))
            return rc;
        weft_value *slices = weft_gather_nd(r->cx, r->g, r->b);
        return give(r, 2, r->n->op == WEFT__OP_SCATTER_ND_ADD ? slices
                                                             : weft_neg(r->cx, slices));
    }
    }
}
