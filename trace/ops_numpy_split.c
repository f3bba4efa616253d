/* tf.experimental.numpy's array_split, hsplit, vsplit and dsplit: NumPy's
 * sections over weft_split (the dim known while tracing for the unequal
 * sections of array_split; the others split evenly, as NumPy's split). */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

enum { SECTIONS_MAX = 1024 };   /* array_split's sizes sit on the C stack */

/* Clears outs[0..n) and enters fn with a; false when the call cannot go
 * on (the context failed, or outs is NULL). */
static bool split_enter(weft_ctx *cx, const char *fn, weft_value *a, size_t n,
                        weft_value **outs)
{
    for (size_t k = 0; outs && k < n; k++)
        outs[k] = NULL;
    if (!weft__op_enter(cx, fn, &a, 1))
        return false;
    if (!outs || n == 0 || n > SECTIONS_MAX) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu sections%s (1..%d)", fn, n,
                       outs ? "" : " into NULL", SECTIONS_MAX);
        return false;
    }
    return true;
}

static int split_status(weft_ctx *cx)
{
    return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
}

/* NumPy's array_split into n sections along axis: the first len % n of
 * len / n + 1 elements, the rest of len / n. */
int weft_array_split(weft_ctx *cx, weft_value *a, size_t n, int axis, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    static const char fn[] = "weft_array_split";
    if (!split_enter(cx, fn, a, n, outs))
        return split_status(cx);
    const weft_spec *s = weft__value_spec(a);
    char ss[WEFT__SPEC_STR_MAX];
    int r = s->rank;
    if (r == WEFT_RANK_ANY || axis < -r || axis >= r || s->dims[axis < 0 ? axis + r : axis] < 0) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: axis %d is not an axis of %s with a dim known "
                       "while tracing", fn, axis, weft__spec_str(s, ss, sizeof ss));
        return split_status(cx);
    }
    int64_t len = s->dims[axis < 0 ? axis + r : axis], sizes[SECTIONS_MAX];
    for (size_t k = 0; k < n; k++)
        sizes[k] = len / (int64_t)n + ((int64_t)k < len % (int64_t)n);
    return weft_split(cx, a, n, sizes, axis, outs);
}

/* NumPy's hsplit, vsplit, dsplit: even sections along axis 1 (0 for a
 * vector), 0 and 2, a's rank at least 1, 2 and 3. */
static int even_split(weft_ctx *cx, const char *fn, weft_value *a, size_t n, int axis,
                      int min_rank, weft_value **outs)
{
    if (!split_enter(cx, fn, a, n, outs))
        return split_status(cx);
    const weft_spec *s = weft__value_spec(a);
    if (s->rank == WEFT_RANK_ANY || s->rank < min_rank) {
        char ss[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s has not a rank of %d or more (known while "
                       "tracing)", fn, weft__spec_str(s, ss, sizeof ss), min_rank);
        return split_status(cx);
    }
    return weft_split(cx, a, n, NULL, axis == 1 && s->rank == 1 ? 0 : axis, outs);
}

int weft_hsplit(weft_ctx *cx, weft_value *a, size_t n, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    return even_split(cx, "weft_hsplit", a, n, 1, 1, outs);
}

int weft_vsplit(weft_ctx *cx, weft_value *a, size_t n, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    return even_split(cx, "weft_vsplit", a, n, 0, 2, outs);
}

int weft_dsplit(weft_ctx *cx, weft_value *a, size_t n, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    return even_split(cx, "weft_dsplit", a, n, 2, 3, outs);
}

/* NumPy's split(a, indices, axis) by a list of indices: a[:i0], a[i0:i1],
 * ..., a[in-1:] along axis, each a Python slice (negative indices from the
 * end, past the end clamped, a part from a later index than its end
 * empty), so the dim may be unknown while tracing. */
int weft_split_at(weft_ctx *cx, weft_value *a, const int64_t *indices, size_t n_indices,
                  int axis, weft_value **outs)
{
    size_t n = n_indices + 1;
    WEFT__SCOPE_OUTS(cx, outs, n);
    static const char fn[] = "weft_split_at";
    if (!split_enter(cx, fn, a, n, outs))
        return split_status(cx);
    if (n_indices > 0 && !indices) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: indices is NULL", fn);
        return split_status(cx);
    }
    if (!weft__ops_axis_in(cx, fn, "a", a, &axis))
        return split_status(cx);
    for (size_t k = 0; k < n; k++) {
        int64_t begin = k == 0 ? 0 : indices[k - 1];
        int64_t end = k == n_indices ? WEFT_END : indices[k];
        outs[k] = weft__ops_axis_slice(cx, a, axis, begin, end);
    }
    int rc = weft_ctx_status(cx);
    if (rc < 0)
        for (size_t k = 0; k < n; k++)
            outs[k] = NULL;
    return rc;
}
