/* tf.experimental.numpy's compress, isposinf, isneginf and array_equal,
 * and NumPy's triu_indices and tril_indices, composed of weft's ops (the
 * index pairs are built on the host: their count is known from n, k and
 * m alone). */
#include "base/base.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#include <math.h>

weft_value *weft_compress(weft_ctx *cx, weft_value *condition, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_compress";
    weft_value *in[2] = { condition, a };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *cs = weft__value_spec(condition);
    if (cs->rank != 1) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: condition %s is not a vector (rank 1, known "
                              "while tracing)", fn, weft__spec_str(cs, s, sizeof s));
    }
    if (axis == WEFT_ALL_AXES) {
        a = weft_ravel(cx, a);
        axis = 0;
    } else if (!weft__ops_axis_in(cx, fn, "a", a, &axis)) {
        return NULL;
    }
    weft_value *keep = cs->dtype == WEFT_BOOL
                           ? condition
                           : weft_ne(cx, condition, weft_zeros_like(cx, condition));
    /* keep[i] for each i of a's dim, false past the condition's end (read
     * from one false appended); a true past a's dim fails the call. */
    weft_value *len = weft__ops_dim0(cx, keep), *n = weft__ops_dim(cx, a, axis);
    weft_value *past = weft_ge(cx, weft__ops_axis0_range(cx, keep), n);
    weft_value *stray = weft_reduce(cx, WEFT_R_ANY, weft_logical_and(cx, keep, past), NULL, 0,
                                    false);
    keep = weft_check(cx, keep, weft_logical_not(cx, stray),
                      "weft_compress: condition is true past the end of a's axis");
    weft_value *padded = weft_pad(cx, keep, (const int64_t[][2]){ { 0, 1 } }, 0.0);
    weft_value *i = weft_range_to(cx, n);
    weft_value *mask = weft_gather(cx, padded, weft_minimum(cx, i, len), 0);
    return WEFT__KEEP(weft_boolean_mask(cx, a, mask, axis));
}

/* Row i's columns [*lo, *hi) with j - i >= k (upper) or j - i <= k
 * (lower) in a matrix of m columns. */
static void row_span(int64_t i, int64_t k, int64_t m, bool upper, int64_t *lo, int64_t *hi)
{
    int64_t b = upper ? i + k : 0, e = upper ? m : i + k + 1;
    *lo = b < 0 ? 0 : b > m ? m : b;
    *hi = e < 0 ? 0 : e > m ? m : e;
}

/* The rows and columns of an n x m matrix's elements with j - i >= k
 * (upper) or j - i <= k (lower), row-major, as two i64 tensors. */
static int tri_indices(weft_ctx *cx, const char *fn, int64_t n, int64_t k, int64_t m, bool upper,
                       weft_value **outs)
{
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, NULL, 0, outs, &rc))
        return rc;
    if (n < 0 || m < 0 || n > INT32_MAX || m > INT32_MAX)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: n %lld and m %lld are not both in [0, 2^31)",
                               fn, (long long)n, (long long)m);
    /* A diagonal past either corner selects all or nothing: clamped, so
     * that i + k cannot overflow. */
    k = k < -n - 1 ? -n - 1 : k > m + 1 ? m + 1 : k;
    int64_t count = 0, lo, hi;
    for (int64_t i = 0; i < n; i++) {
        row_span(i, k, m, upper, &lo, &hi);
        count += hi - lo;
    }
    if (count > INT64_C(1) << 32)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %lld indices, over 2^32", fn,
                               (long long)count);
    int64_t *rows = weft__malloc(sizeof *rows * (size_t)(count ? 2 * count : 1));
    if (!rows)
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    int64_t *cols = rows + count, at = 0;
    for (int64_t i = 0; i < n; i++) {
        row_span(i, k, m, upper, &lo, &hi);
        for (int64_t j = lo; j < hi; j++, at++) {
            rows[at] = i;
            cols[at] = j;
        }
    }
    weft_tensor *t[2] = { NULL, NULL };
    rc = weft_tensor_create(WEFT_I64, 1, &count, rows, &t[0]);
    if (rc == 0)
        rc = weft_tensor_create(WEFT_I64, 1, &count, cols, &t[1]);
    weft__free(rows);
    if (rc != 0) {
        weft_tensor_release(t[0]);
        weft__ctx_fail_errmsg(cx, rc);
        return weft_ctx_status(cx);
    }
    outs[0] = weft_const_tensor(cx, t[0]);
    outs[1] = weft_const_tensor(cx, t[1]);
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        outs[0] = outs[1] = NULL;
    return rc;
}

int weft_triu_indices(weft_ctx *cx, int64_t n, int64_t k, int64_t m, weft_value **outs)
{
    return tri_indices(cx, "weft_triu_indices", n, k, m, true, outs);
}

int weft_tril_indices(weft_ctx *cx, int64_t n, int64_t k, int64_t m, weft_value **outs)
{
    return tri_indices(cx, "weft_tril_indices", n, k, m, false, outs);
}

/* Whether each element of x is the infinity of sign (+1 or -1). */
static weft_value *is_signed_inf(weft_ctx *cx, const char *fn, weft_value *x, double sign)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, fn, &x, 1) || !weft__ops_number(cx, fn, "x", x))
        return NULL;
    if (!weft__dtype_is_float(weft__value_spec(x)->dtype))
        return WEFT__KEEP(weft_cast(cx, weft_zeros_like(cx, x), WEFT_BOOL));
    return WEFT__KEEP(weft_eq(cx, x, weft_const_f64(cx, sign * INFINITY)));
}

weft_value *weft_isposinf(weft_ctx *cx, weft_value *x)
{
    return is_signed_inf(cx, "weft_isposinf", x, 1.0);
}

weft_value *weft_isneginf(weft_ctx *cx, weft_value *x)
{
    return is_signed_inf(cx, "weft_isneginf", x, -1.0);
}

/* Whether a1 and a2 (of one known rank) have one shape, as a bool scalar
 * known when the call runs. */
static weft_value *same_shape(weft_ctx *cx, weft_value *a1, weft_value *a2)
{
    return weft_reduce(cx, WEFT_R_ALL, weft_eq(cx, weft_shape(cx, a1), weft_shape(cx, a2)), NULL,
                       0, false);
}

weft_value *weft_array_equal(weft_ctx *cx, weft_value *a1, weft_value *a2, bool equal_nan)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_array_equal";
    weft_value *in[2] = { a1, a2 };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    int r1 = weft__ops_known_rank(cx, fn, "a1", a1);
    int r2 = r1 < 0 ? -1 : weft__ops_known_rank(cx, fn, "a2", a2);
    if (r2 < 0)
        return NULL;
    if (r1 != r2)
        return WEFT__KEEP(weft_const(cx, WEFT_BOOL, 0));
    /* The first min(size) elements of each, flattened: both whole where
     * the shapes are equal, which is all that is asked then. */
    weft_value *f1 = weft_ravel(cx, a1), *f2 = weft_ravel(cx, a2);
    weft_value *i = weft_range_to(cx, weft_minimum(cx, weft__ops_dim0(cx, f1),
                                                   weft__ops_dim0(cx, f2)));
    f1 = weft_gather(cx, f1, i, 0);
    f2 = weft_gather(cx, f2, i, 0);
    weft_value *eq = weft_eq(cx, f1, f2);
    if (equal_nan && weft__dtype_is_float(weft__ops_promoted_dtype(in, 2)))
        eq = weft_logical_or(cx, eq, weft_logical_and(cx, weft_is_nan(cx, f1),
                                                      weft_is_nan(cx, f2)));
    weft_value *all = weft_reduce(cx, WEFT_R_ALL, eq, NULL, 0, false);
    return WEFT__KEEP(weft_logical_and(cx, same_shape(cx, a1, a2), all));
}
