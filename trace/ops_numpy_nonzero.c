/* tf.experimental.numpy's nonzero, flatnonzero, diagonal, diag_indices
 * and ix_, composed of argwhere, reshapes, transposes and ranges. */
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

int weft_nonzero(weft_ctx *cx, weft_value *a, weft_value **outs, size_t n_outs)
{
    static const char fn[] = "weft_nonzero";
    int rc = weft__ctx_enter_int(cx, fn, &a, 1, outs, n_outs);
    if (rc < 0)
        return rc;
    WEFT__SCOPE_OUTS(cx, outs, n_outs);
    int r = weft__ops_known_rank(cx, fn, "a", a);
    if (r < 0)
        return weft_ctx_status(cx);
    char s[WEFT__SPEC_STR_MAX];
    if (r == 0)
        return weft__ctx_failf(cx, WEFT_ESHAPE, "%s: a %s is a scalar (NumPy's is deprecated; "
                               "use weft_atleast_1d)", fn,
                               weft__spec_str(weft__value_spec(a), s, sizeof s));
    if (n_outs != (size_t)r)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: n_outs %zu is not a's rank %d", fn, n_outs,
                               r);
    weft_value *coords = weft_argwhere(cx, a);
    for (int d = 0; d < r; d++)
        outs[d] = weft__ops_column(cx, coords, d);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        for (int d = 0; d < r; d++)
            outs[d] = NULL;
    return rc;
}

weft_value *weft_flatnonzero(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_flatnonzero", &a, 1))
        return NULL;
    return WEFT__KEEP(weft__ops_column(cx, weft_argwhere(cx, weft_ravel(cx, a)), 0));
}

weft_value *weft_diagonal(weft_ctx *cx, weft_value *a, int64_t offset, int axis1, int axis2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_diagonal";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    int r = weft__ops_known_rank(cx, fn, "a", a);
    if (r < 0)
        return NULL;
    char s[WEFT__SPEC_STR_MAX];
    if (r < 2)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s has fewer than 2 dims", fn,
                              weft__spec_str(weft__value_spec(a), s, sizeof s));
    if (!weft__ops_axis_in(cx, fn, "a", a, &axis1) || !weft__ops_axis_in(cx, fn, "a", a, &axis2))
        return NULL;
    if (axis1 == axis2)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis1 and axis2 are both %d", fn, axis1);
    if (offset < -(INT64_C(1) << 31) || offset > INT64_C(1) << 31)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: offset %lld is too far from 0", fn,
                              (long long)offset);
    /* NumPy's layout: the other dims in order, the diagonal last. */
    int perm[WEFT_MAX_RANK], k = 0;
    for (int d = 0; d < r; d++)
        if (d != axis1 && d != axis2)
            perm[k++] = d;
    perm[k++] = axis1;
    perm[k] = axis2;
    weft_value *m = weft_transpose(cx, a, perm);
    int64_t begin[WEFT_MAX_RANK] = { 0 };
    begin[r - 2] = offset < 0 ? -offset : 0;
    begin[r - 1] = offset > 0 ? offset : 0;
    return WEFT__KEEP(weft_matrix_diag_part(cx, weft_slice(cx, m, begin, NULL, NULL)));
}

int weft_diag_indices(weft_ctx *cx, int64_t n, int ndim, weft_value **outs)
{
    static const char fn[] = "weft_diag_indices";
    size_t n_outs = ndim > 0 && ndim <= WEFT_MAX_RANK ? (size_t)ndim : 0;
    int rc = weft__ctx_enter_int(cx, fn, NULL, 0, outs, n_outs);
    if (rc < 0)
        return rc;
    if (n_outs == 0 || n < 0)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: n %lld and ndim %d (n >= 0, ndim in [1, %d])",
                               fn, (long long)n, ndim, WEFT_MAX_RANK);
    WEFT__SCOPE_OUTS(cx, outs, n_outs);
    /* A value of its own each, so that each can be released on its own. */
    for (size_t d = 0; d < n_outs; d++)
        outs[d] = weft_range(cx, WEFT_I64, 0, n, 1);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        for (size_t d = 0; d < n_outs; d++)
            outs[d] = NULL;
    return rc;
}

int weft_ix(weft_ctx *cx, weft_value *const *seqs, size_t n, weft_value **outs)
{
    static const char fn[] = "weft_ix";
    int rc = weft__ctx_enter_int(cx, fn, seqs, seqs ? n : 0, outs, n);
    if (rc < 0)
        return rc;
    if (!seqs || n < 1 || n > WEFT_MAX_RANK)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %zu sequences (1 to %d)", fn, n,
                               WEFT_MAX_RANK);
    WEFT__SCOPE_OUTS(cx, outs, n);
    for (size_t k = 0; k < n; k++) {
        const weft_spec *sk = weft__value_spec(seqs[k]);
        if (sk->rank != 1) {
            char s[WEFT__SPEC_STR_MAX];
            weft__ctx_failf(cx, WEFT_ESHAPE, "%s: seqs[%zu] %s is not a vector (rank 1, known "
                            "while tracing)", fn, k, weft__spec_str(sk, s, sizeof s));
            break;
        }
        /* NumPy's ix_ reads a bool sequence as the indices of its trues. */
        weft_value *v = sk->dtype == WEFT_BOOL ? weft__ops_column(cx, weft_argwhere(cx, seqs[k]), 0)
                                               : seqs[k];
        int64_t dims[WEFT_MAX_RANK];
        for (size_t d = 0; d < n; d++)
            dims[d] = d == k ? -1 : 1;
        outs[k] = weft_reshape(cx, v, (int)n, dims);
    }
    rc = weft_ctx_status(cx);
    if (rc < 0)
        for (size_t k = 0; k < n; k++)
            outs[k] = NULL;
    return rc;
}
