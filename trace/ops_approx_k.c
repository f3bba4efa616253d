/* tf.math.approx_max_k and approx_min_k, answered exactly: the TOP_K node
 * (trace/kernel_sort.c) in either direction along the reduction dim, moved
 * last and back. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* perm moves axis to the end of rank dims; back is its inverse. */
static void axis_last(int rank, int axis, int *perm, int *back)
{
    for (int d = 0, at = 0; d < rank; d++)
        if (d != axis)
            perm[at++] = d;
    perm[rank - 1] = axis;
    for (int d = 0; d < rank; d++)
        back[perm[d]] = d;
}

static int approx_k(weft_ctx *cx, const char *fn, bool largest, weft_value *operand, int64_t k,
                    int reduction_dimension, double recall_target, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, &operand, 1, outs, &rc))
        return rc;
    const weft_spec *s = weft__value_spec(operand);
    if (!weft__ops_float_rank(cx, fn, s, 1, false))
        return weft_ctx_status(cx);
    int rank = s->rank, axis = reduction_dimension < 0 ? reduction_dimension + rank
                                                      : reduction_dimension;
    if (axis < 0 || axis >= rank) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: reduction_dimension %d is outside a rank of %d",
                       fn, reduction_dimension, rank);
        return weft_ctx_status(cx);
    }
    if (!(recall_target > 0 && recall_target <= 1)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: recall_target %g is not in (0, 1]", fn,
                       recall_target);
        return weft_ctx_status(cx);
    }
    int64_t n = s->dims[axis];
    if (k < 0 || (n != WEFT_DIM_ANY && k > n)) {
        char ss[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: k (%lld) is negative or more than the reduction "
                       "dim of %s", fn, (long long)k, weft__spec_str(s, ss, sizeof ss));
        return weft_ctx_status(cx);
    }
    int perm[WEFT_MAX_RANK], back[WEFT_MAX_RANK];
    axis_last(rank, axis, perm, back);
    bool moved = axis != rank - 1;
    weft_value *x = moved ? weft_transpose(cx, operand, perm) : operand, *top[2];
    if (!x || weft__ops_top_k(cx, x, k, largest, top) != 0)
        return weft_ctx_status(cx);
    weft_value *vals = top[0], *idx = weft_cast(cx, top[1], WEFT_I32);
    if (moved) {
        vals = weft_transpose(cx, vals, back);
        idx = weft_transpose(cx, idx, back);
    }
    rc = weft_ctx_status(cx);
    if (rc != 0)
        return rc;
    outs[0] = vals;
    outs[1] = idx;
    return 0;
}

int weft_approx_max_k(weft_ctx *cx, weft_value *operand, int64_t k, int reduction_dimension,
                      double recall_target, weft_value **outs)
{
    return approx_k(cx, "weft_approx_max_k", true, operand, k, reduction_dimension,
                    recall_target, outs);
}

int weft_approx_min_k(weft_ctx *cx, weft_value *operand, int64_t k, int reduction_dimension,
                      double recall_target, weft_value **outs)
{
    return approx_k(cx, "weft_approx_min_k", false, operand, k, reduction_dimension,
                    recall_target, outs);
}
