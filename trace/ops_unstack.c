/* Ops that hand back one value per slice or per input (include/weft/ops.h):
 * unstack (split, then squeeze), meshgrid (reshape, then broadcast_to)
 * and broadcast_arrays (a where on a common mask), TensorFlow's
 * tf.unstack, tf.meshgrid and tf.experimental.numpy's.  All check
 * their inputs first, so that an error names the public op, and leave
 * every output NULL when they fail. */
#include "base/base.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* The common start of an op with outputs outs[0..n): clears them and
 * checks the context and the array. */
static bool outs_enter(weft_ctx *cx, const char *fn, weft_value **outs, size_t n)
{
    for (size_t k = 0; outs && k < n; k++)
        outs[k] = NULL;
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return false;
    }
    if (weft_ctx_status(cx) != 0)
        return false;
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: outs is NULL", fn);
        return false;
    }
    return true;
}

/* The context's status (EINVAL without a context), every outs[k] NULL. */
static int outs_fail(weft_ctx *cx, weft_value **outs, size_t n)
{
    for (size_t k = 0; outs && k < n; k++)
        outs[k] = NULL;
    return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
}

int weft_unstack(weft_ctx *cx, weft_value *a, int axis, size_t num, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, num);
    static const char fn[] = "weft_unstack";
    if (!outs_enter(cx, fn, outs, num) || !weft__op_enter(cx, fn, &a, 1))
        return outs_fail(cx, outs, num);
    const weft_spec *s = weft__value_spec(a);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank == 0 || axis < -s->rank || axis >= s->rank) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: axis %d is not an axis of %s (its rank known "
                       "while tracing, at least 1)", fn, axis, weft__spec_str(s, ss, sizeof ss));
        return outs_fail(cx, outs, num);
    }
    int ax = axis < 0 ? axis + s->rank : axis;
    if (s->dims[ax] < 0 || (uint64_t)s->dims[ax] != num) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: num %zu is not dim %d of %s (known while tracing)",
                       fn, num, ax, weft__spec_str(s, ss, sizeof ss));
        return outs_fail(cx, outs, num);
    }
    if (num == 0)
        return 0;
    if (weft_split(cx, a, num, NULL, ax, outs) != 0)
        return outs_fail(cx, outs, num);
    for (size_t k = 0; k < num; k++)
        if (!(outs[k] = weft_squeeze(cx, outs[k], ax)))
            return outs_fail(cx, outs, num);
    return 0;
}

/* The element count of every input (all of one dtype, their shapes known
 * while tracing) into len. */
static bool grid_inputs_ok(weft_ctx *cx, const char *fn, weft_value *const *xs, size_t n,
                           int64_t *len)
{
    char ss[WEFT__SPEC_STR_MAX], s0[WEFT__SPEC_STR_MAX];
    const weft_spec *first = weft__value_spec(xs[0]);
    for (size_t k = 0; k < n; k++) {
        const weft_spec *s = weft__value_spec(xs[k]);
        if (s->dtype != first->dtype) {
            weft__ctx_fail(cx, WEFT_EDTYPE, "%s: xs[%zu] %s and xs[0] %s differ in dtype", fn, k,
                           weft__spec_str(s, ss, sizeof ss),
                           weft__spec_str(first, s0, sizeof s0));
            return false;
        }
        bool known = s->rank != WEFT_RANK_ANY;
        len[k] = 1;
        for (int d = 0; known && d < s->rank; d++) {
            known = s->dims[d] >= 0;
            len[k] *= known ? s->dims[d] : 1;
        }
        if (!known) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the element count of xs[%zu] %s is not known "
                           "while tracing", fn, k, weft__spec_str(s, ss, sizeof ss));
            return false;
        }
    }
    return true;
}

int weft_meshgrid(weft_ctx *cx, weft_value *const *xs, size_t n, weft_meshgrid_indexing indexing,
                  weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    static const char fn[] = "weft_meshgrid";
    if (!outs_enter(cx, fn, outs, n))
        return outs_fail(cx, outs, n);
    if (!xs || n == 0 || n > WEFT_MAX_RANK) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu inputs%s (1..%d)", fn, n, xs ? "" : " at NULL",
                       WEFT_MAX_RANK);
        return outs_fail(cx, outs, n);
    }
    if (indexing != WEFT_MESHGRID_XY && indexing != WEFT_MESHGRID_IJ) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: indexing %d is not WEFT_MESHGRID_XY or _IJ", fn,
                       (int)indexing);
        return outs_fail(cx, outs, n);
    }
    int64_t len[WEFT_MAX_RANK], shape[WEFT_MAX_RANK];
    if (!weft__op_enter(cx, fn, xs, n) || !grid_inputs_ok(cx, fn, xs, n, len))
        return outs_fail(cx, outs, n);
    /* Input k varies along dim k of the ij grid; xy swaps the first two. */
    bool swap = indexing == WEFT_MESHGRID_XY && n > 1;
    int rank = (int)n;
    for (int k = 0; k < rank; k++)
        shape[k] = len[swap && k < 2 ? 1 - k : k];
    for (int k = 0; k < rank; k++) {
        int64_t along[WEFT_MAX_RANK];
        int axis = swap && k < 2 ? 1 - k : k;
        for (int d = 0; d < rank; d++)
            along[d] = d == axis ? len[k] : 1;
        weft_value *line = weft_reshape(cx, xs[k], rank, along);
        if (!(outs[k] = weft_broadcast_to(cx, line, rank, shape)))
            return outs_fail(cx, outs, n);
    }
    return 0;
}

/* NumPy's broadcast_arrays: each of vs[0..n) broadcast to their common
 * shape, through a where on a true mask of that shape (the values pass
 * untouched, any dtype; dims unknown while tracing too). */
int weft_broadcast_arrays(weft_ctx *cx, weft_value *const *vs, size_t n, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    static const char fn[] = "weft_broadcast_arrays";
    if (!outs_enter(cx, fn, outs, n))
        return outs_fail(cx, outs, n);
    if (!vs || n == 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu inputs%s (1 or more)", fn, n,
                       vs ? "" : " at NULL");
        return outs_fail(cx, outs, n);
    }
    if (!weft__op_enter(cx, fn, vs, n))
        return outs_fail(cx, outs, n);
    weft_value *mask = NULL;
    for (size_t k = 0; k < n; k++) {
        weft_value *own = weft_cast(cx, weft_ones_like(cx, vs[k]), WEFT_BOOL);
        mask = mask ? weft_logical_and(cx, mask, own) : own;
    }
    for (size_t k = 0; k < n; k++)
        if (!(outs[k] = weft_where(cx, mask, vs[k], vs[k])))
            return outs_fail(cx, outs, n);
    return 0;
}
