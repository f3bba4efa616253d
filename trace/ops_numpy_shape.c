/* tf.experimental.numpy's array manipulation composed of weft's shape
 * ops in NumPy's rules (flip, fliplr, flipud, ravel, atleast_1d/2d/3d,
 * hstack, vstack, dstack, column_stack, block, append, diag, diagflat,
 * select):
 * values move without arithmetic, so every dtype keeps its bits, and the
 * gradients come from the parts. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* NumPy's flip: reversed along axes[0..n) (n 0: every axis), one slice
 * with step -1 there. */
weft_value *weft_flip(weft_ctx *cx, weft_value *a, const int *axes, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_flip";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    int r = weft__ops_known_rank(cx, fn, "a", a);
    if (r < 0)
        return NULL;
    if (n > 0 && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes", fn);
    int64_t step[WEFT_MAX_RANK];
    for (int d = 0; d < r; d++)
        step[d] = n == 0 ? -1 : 1;
    for (size_t k = 0; k < n; k++) {
        int ax = axes[k];
        if (!weft__ops_axis_in(cx, fn, "a", a, &ax))
            return NULL;
        if (step[ax] < 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d named twice", fn, axes[k]);
        step[ax] = -1;
    }
    return WEFT__KEEP(r == 0 ? a : weft_slice(cx, a, NULL, NULL, step));
}

/* fliplr and flipud: NumPy's flip along axis 1 (a rank of 2 or more) and
 * axis 0 (1 or more). */
static weft_value *flip_one(weft_ctx *cx, const char *fn, weft_value *a, int axis)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    int r = weft__ops_known_rank(cx, fn, "a", a);
    if (r < 0)
        return NULL;
    if (r <= axis) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s has not a rank of %d or more", fn,
                              weft__spec_str(weft__value_spec(a), s, sizeof s), axis + 1);
    }
    return weft_flip(cx, a, &axis, 1);
}

weft_value *weft_fliplr(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(flip_one(cx, "weft_fliplr", a, 1));
}

weft_value *weft_flipud(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(flip_one(cx, "weft_flipud", a, 0));
}

/* NumPy's ravel: a reshape to one dim (a copy only where weft_reshape
 * makes one). */
weft_value *weft_ravel(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_ravel", &a, 1))
        return NULL;
    static const int64_t flat = -1;
    return WEFT__KEEP(weft_reshape(cx, a, 1, &flat));
}

/* NumPy's atleast_nd: ranks below n padded with dims of 1 (a scalar to
 * [1, ..], a vector [k] to [1, k] or [1, k, 1], a matrix [m, k] to [m, k,
 * 1]); others as they are. */
static weft_value *atleast(weft_ctx *cx, const char *fn, weft_value *a, int n)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    int r = weft__ops_known_rank(cx, fn, "a", a);
    if (r < 0)
        return NULL;
    if (r >= n)
        return a;
    const int64_t *d = weft__value_spec(a)->dims;
    int64_t dims[3] = { 1, 1, 1 };
    if (r == 1)
        dims[1] = d[0];
    if (r == 2) {
        dims[0] = d[0];
        dims[1] = d[1];
    }
    /* Dims unknown while tracing: the reshape infers the one such dim. */
    for (int k = 0; k < n; k++)
        dims[k] = dims[k] < 0 ? -1 : dims[k];
    return weft_reshape(cx, a, n, dims);
}

weft_value *weft_atleast_1d(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(atleast(cx, "weft_atleast_1d", a, 1));
}

weft_value *weft_atleast_2d(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(atleast(cx, "weft_atleast_2d", a, 2));
}

weft_value *weft_atleast_3d(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(atleast(cx, "weft_atleast_3d", a, 3));
}

enum stack_kind { HSTACK, VSTACK, DSTACK, COLUMN_STACK };
enum { STACK_MAX = 256 };   /* inputs of one stack, on the C stack */

/* The four stacks: each input made at least 1-D (column_stack: a vector
 * a column), 2-D or 3-D, then joined along axis 1 (0 for vectors), 0, 2
 * or 1. */
static weft_value *numpy_stack(weft_ctx *cx, const char *fn, weft_value *const *vs, size_t n,
                               enum stack_kind kind)
{
    if (!weft__op_enter(cx, fn, NULL, 0))
        return NULL;
    if (n == 0 || n > STACK_MAX || !vs)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu inputs%s (1..%d wanted)", fn, n,
                              vs ? "" : " at NULL", STACK_MAX);
    if (!weft__op_enter(cx, fn, vs, n))
        return NULL;
    weft_value *parts[STACK_MAX];
    int axis = kind == VSTACK ? 0 : kind == DSTACK ? 2 : 1;
    for (size_t i = 0; i < n; i++) {
        int r = weft__ops_known_rank(cx, fn, "an array", vs[i]);
        if (r < 0)
            return NULL;
        if (kind == HSTACK)
            parts[i] = atleast(cx, fn, vs[i], 1);
        else if (kind == VSTACK)
            parts[i] = atleast(cx, fn, vs[i], 2);
        else if (kind == DSTACK)
            parts[i] = atleast(cx, fn, vs[i], 3);
        else
            parts[i] = r < 2 ? weft_reshape(cx, vs[i], 2, (const int64_t[]){ -1, 1 }) : vs[i];
        if (kind == HSTACK && weft__value_spec(parts[i])->rank == 1)
            axis = 0;
    }
    return weft_concat(cx, parts, n, axis);
}

weft_value *weft_hstack(weft_ctx *cx, weft_value *const *vs, size_t n)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(numpy_stack(cx, "weft_hstack", vs, n, HSTACK));
}

weft_value *weft_vstack(weft_ctx *cx, weft_value *const *vs, size_t n)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(numpy_stack(cx, "weft_vstack", vs, n, VSTACK));
}

weft_value *weft_dstack(weft_ctx *cx, weft_value *const *vs, size_t n)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(numpy_stack(cx, "weft_dstack", vs, n, DSTACK));
}

weft_value *weft_column_stack(weft_ctx *cx, weft_value *const *vs, size_t n)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(numpy_stack(cx, "weft_column_stack", vs, n, COLUMN_STACK));
}

/* np.block of a list of n_rows lists: blocks[0..counts[0]) the first
 * row's, and so on.  Every array gets dims of 1 in front up to the
 * result's rank (2, or the largest rank among them), each row is joined
 * along the last axis, the rows along the one before. */
weft_value *weft_block(weft_ctx *cx, weft_value *const *blocks, const size_t *counts,
                       size_t n_rows)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_block";
    if (!weft__op_enter(cx, fn, NULL, 0))
        return NULL;
    if (n_rows == 0 || n_rows > STACK_MAX || !counts || !blocks)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu rows%s (1..%d wanted)", fn, n_rows,
                              counts && blocks ? "" : " at NULL", STACK_MAX);
    size_t total = 0;
    for (size_t r = 0; r < n_rows; r++) {
        if (counts[r] == 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: row %zu is empty", fn, r);
        total += counts[r];
        if (total > STACK_MAX)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: more than %d blocks", fn, STACK_MAX);
    }
    if (!weft__op_enter(cx, fn, blocks, total))
        return NULL;
    int rank = 2;
    for (size_t i = 0; i < total; i++) {
        int r = weft__ops_known_rank(cx, fn, "a block", blocks[i]);
        if (r < 0)
            return NULL;
        rank = r > rank ? r : rank;
    }
    weft_value *parts[STACK_MAX], *rows[STACK_MAX];
    for (size_t i = 0; i < total; i++) {
        parts[i] = blocks[i];
        for (int r = weft__value_spec(blocks[i])->rank; r < rank; r++)
            parts[i] = weft_expand_dims(cx, parts[i], 0);
    }
    for (size_t r = 0, first = 0; r < n_rows; first += counts[r++])
        rows[r] = weft_concat(cx, parts + first, counts[r], rank - 1);
    return WEFT__KEEP(weft_concat(cx, rows, n_rows, rank - 2));
}

/* NumPy's append: both flattened and joined (axis WEFT_ALL_AXES, NumPy's
 * None), else joined along axis. */
weft_value *weft_append(weft_ctx *cx, weft_value *arr, weft_value *values, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_append";
    weft_value *in[2] = { arr, values };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (axis == WEFT_ALL_AXES) {
        in[0] = weft_ravel(cx, arr);
        in[1] = weft_ravel(cx, values);
        axis = 0;
    }
    return WEFT__KEEP(weft_concat(cx, in, 2, axis));
}

/* NumPy's diag: a vector v onto diagonal k of a square matrix of n + |k|
 * (weft_matrix_diag, then padded: below and to the left for k > 0); a
 * matrix's diagonal k (its columns from k, or rows from -k, then
 * weft_matrix_diag_part). */
weft_value *weft_diag(weft_ctx *cx, weft_value *v, int64_t k)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_diag";
    if (!weft__op_enter(cx, fn, &v, 1))
        return NULL;
    int r = weft__ops_known_rank(cx, fn, "v", v);
    if (r < 0)
        return NULL;
    if (r != 1 && r != 2) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: v %s is not a vector or a matrix", fn,
                              weft__spec_str(weft__value_spec(v), s, sizeof s));
    }
    if (k < -(INT64_C(1) << 31) || k > INT64_C(1) << 31)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: k %lld is too far from 0", fn, (long long)k);
    int64_t off = k < 0 ? -k : k;
    if (r == 1) {
        const int64_t pads[2][2] = { { k < 0 ? off : 0, k > 0 ? off : 0 },
                                     { k > 0 ? off : 0, k < 0 ? off : 0 } };
        return WEFT__KEEP(weft_pad(cx, weft_matrix_diag(cx, v), pads, 0.0));
    }
    const int64_t begin[2] = { k < 0 ? off : 0, k > 0 ? off : 0 };
    return WEFT__KEEP(weft_matrix_diag_part(cx, weft_slice(cx, v, begin, NULL, NULL)));
}

weft_value *weft_diagflat(weft_ctx *cx, weft_value *v, int64_t k)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_diagflat";
    if (!weft__op_enter(cx, fn, &v, 1))
        return NULL;
    return WEFT__KEEP(weft_diag(cx, weft_ravel(cx, v), k));
}

/* NumPy's select: the choice of the first true condition, else
 * default_value; folded from the last condition so the first wins. */
weft_value *weft_select(weft_ctx *cx, weft_value *const *conds, weft_value *const *choices,
                        size_t n, weft_value *default_value)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_select";
    if (!weft__op_enter(cx, fn, NULL, 0))
        return NULL;
    if (n == 0 || !conds || !choices)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu conditions%s (1 or more wanted)", fn, n,
                              conds && choices ? "" : " or choices at NULL");
    if (!weft__op_enter(cx, fn, &default_value, 1) || !weft__op_enter(cx, fn, conds, n) ||
        !weft__op_enter(cx, fn, choices, n))
        return NULL;
    weft_value *out = default_value;
    for (size_t i = n; i-- > 0;) {
        const weft_spec *c = weft__value_spec(conds[i]);
        if (c->dtype != WEFT_BOOL) {
            char s[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: condition %zu %s is not bool", fn, i,
                                  weft__spec_str(c, s, sizeof s));
        }
        out = weft_where(cx, conds[i], choices[i], out);
    }
    return WEFT__KEEP(out);
}
