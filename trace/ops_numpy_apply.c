/* np.apply_along_axis as a composition: the axis moved last, the other
 * dims flattened into rows, weft_map over the rows, and the function's
 * output dims put where the axis was. */
#include "base/base.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* dims[0..n) with at most one unknown, which becomes -1 (weft_reshape
 * infers it); false when two are unknown. */
static bool reshape_dims(const int64_t *dims, int n, int64_t *out)
{
    int unknown = 0;
    for (int d = 0; d < n; d++) {
        unknown += dims[d] == WEFT_DIM_ANY;
        out[d] = dims[d] == WEFT_DIM_ANY ? -1 : dims[d];
    }
    return unknown <= 1;
}

weft_value *weft_apply_along_axis(weft_ctx *cx, weft_function *fn, weft_value *arr, int axis,
                                  unsigned parallel_iterations)
{
    WEFT__SCOPE(cx);
    static const char fn_name[] = "weft_apply_along_axis";
    if (!weft__op_enter(cx, fn_name, &arr, 1))
        return NULL;
    if (!fn)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: fn is NULL", fn_name);
    if (!weft__ops_axis_in(cx, fn_name, "arr", arr, &axis))
        return NULL;
    const weft_spec *as = weft__value_spec(arr);
    char ss[WEFT__SPEC_STR_MAX];
    int rank = as->rank;
    /* The slices as rows [m, n]: the other dims, then the axis's. */
    int64_t lead[WEFT_MAX_RANK + 1], rows_dims[2];
    int n_lead = 0;
    for (int d = 0; d < rank; d++)
        if (d != axis)
            lead[n_lead++] = as->dims[d];
    int64_t m = 1;   /* the slices' count, when known (unknown dims are negative) */
    rows_dims[0] = weft__numel_checked(n_lead, lead, 1, &m) ? m : -1;
    rows_dims[1] = as->dims[axis] == WEFT_DIM_ANY ? -1 : as->dims[axis];
    if (rows_dims[0] < 0 && rows_dims[1] < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s has the axis and another dim "
                              "unknown while tracing", fn_name, weft__spec_str(as, ss, sizeof ss));
    weft_value *moved = weft_moveaxis(cx, arr, &axis, (const int[]){ -1 }, 1);
    weft_value *out = weft_map(cx, fn, weft_reshape(cx, moved, 2, rows_dims),
                               parallel_iterations);
    if (!out)
        return NULL;
    /* [m, out...] back to [lead..., out...], out's dims then moved to
     * where the axis was. */
    if (weft__ops_known_rank(cx, fn_name, "fn's output", out) < 0)
        return NULL;
    const weft_spec *os = weft__value_spec(out);
    int k = os->rank - 1;
    if (n_lead + k > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s without its axis and fn's output "
                              "make more than %d dims", fn_name,
                              weft__spec_str(as, ss, sizeof ss), WEFT_MAX_RANK);
    int64_t back[WEFT_MAX_RANK + 1];
    for (int d = 0; d < k; d++)
        lead[n_lead + d] = os->dims[1 + d];
    if (!reshape_dims(lead, n_lead + k, back))
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the result's dims (arr %s without axis %d, "
                              "then fn's output) have more than one unknown while tracing",
                              fn_name, weft__spec_str(as, ss, sizeof ss), axis);
    weft_value *r = weft_reshape(cx, out, n_lead + k, back);
    int src[WEFT_MAX_RANK], dst[WEFT_MAX_RANK];
    for (int d = 0; d < k; d++) {
        src[d] = n_lead + d;
        dst[d] = axis + d;
    }
    if (k > 0)
        r = weft_moveaxis(cx, r, src, dst, (size_t)k);
    return WEFT__KEEP(r);
}
