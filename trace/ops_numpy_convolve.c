/* NumPy's convolve and correlate of two vectors through weft_conv1d: the
 * full correlation is a VALID convolution of one vector, padded with
 * zeros, by the other as the filter (whose length must be known while
 * tracing), and the modes slice it.  The gradients are conv1d's. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

bool weft__ops_as_vector(weft_ctx *cx, const char *fn, const char *what, weft_value **v)
{
    const weft_spec *s = weft__value_spec(*v);
    if (s->rank == 0) {
        static const int64_t one = 1;
        *v = weft_reshape(cx, *v, 1, &one);
        return *v != NULL;
    }
    if (s->rank == 1)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s is not a vector (rank 1, known while tracing)",
                   fn, what, weft__spec_str(s, ss, sizeof ss));
    return false;
}

/* The full correlation of a with the filter v of known length m: element
 * k is the sum over j of a[k - (m - 1) + j] v[j], n + m - 1 of them. */
static weft_value *full_by_filter(weft_ctx *cx, weft_value *a, weft_value *v, int64_t m)
{
    weft_value *padded = weft_pad(cx, a, (const int64_t[][2]){ { m - 1, m - 1 } }, 0.0);
    static const int64_t row[3] = { 1, -1, 1 };
    const int64_t filter[3] = { m, 1, 1 };
    weft_value *c = weft_conv1d(cx, weft_reshape(cx, padded, 3, row),
                                weft_reshape(cx, v, 3, filter), 1, WEFT_PADDING_VALID, 1);
    static const int64_t flat = -1;
    return weft_reshape(cx, c, 1, &flat);
}

/* The full correlation of a and v, of lengths n and m (WEFT_DIM_ANY where
 * known only when the call runs): by v as the filter, or by a as the
 * filter reversed (the correlation of v with a read backwards is a's with
 * v), whichever is shorter of those known while tracing. */
static weft_value *full_correlation(weft_ctx *cx, weft_value *a, weft_value *v, int64_t n,
                                    int64_t m)
{
    if (m != WEFT_DIM_ANY && (n == WEFT_DIM_ANY || m <= n))
        return full_by_filter(cx, a, v, m);
    return weft_flip(cx, full_by_filter(cx, v, a, n), (const int[]){ 0 }, 1);
}

/* The part of the full result c that mode keeps, n and m the lengths of
 * a and v as full_correlation's: from (min - 1) / 2 (SAME) or min - 1
 * (VALID), max or max - min + 1 elements. */
static weft_value *mode_part(weft_ctx *cx, weft_value *c, weft_value *a, weft_value *v,
                             int64_t n, int64_t m, weft_convolve_mode mode)
{
    if (mode == WEFT_CONVOLVE_FULL)
        return c;
    if (n != WEFT_DIM_ANY && m != WEFT_DIM_ANY) {
        int64_t lo = n < m ? n : m, hi = n < m ? m : n;
        int64_t begin = mode == WEFT_CONVOLVE_SAME ? (lo - 1) / 2 : lo - 1;
        int64_t len = mode == WEFT_CONVOLVE_SAME ? hi : hi - lo + 1;
        return weft__ops_axis_slice(cx, c, 0, begin, begin + len);
    }
    weft_value *dn = weft__ops_dim0(cx, a), *dm = weft__ops_dim0(cx, v);
    weft_value *lo = weft_minimum(cx, dn, dm), *hi = weft_maximum(cx, dn, dm);
    weft_value *one = weft_const_i64(cx, 1);
    weft_value *begin = weft_sub(cx, lo, one), *len = hi;
    if (mode == WEFT_CONVOLVE_SAME)
        begin = weft_floordiv(cx, begin, weft_const_i64(cx, 2));
    else
        len = weft_add(cx, weft_sub(cx, hi, lo), one);
    return weft_gather(cx, c, weft_add(cx, begin, weft_range_to(cx, len)), 0);
}

/* The correlation of a and v in mode, after the checks fn makes. */
static weft_value *correlation(weft_ctx *cx, const char *fn, weft_value *a, weft_value *v,
                               weft_convolve_mode mode, bool reverse_v)
{
    weft_value *in[2] = { a, v };
    const char *names[2] = { "a", "v" };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, in, names, 2) ||
        !weft__ops_as_vector(cx, fn, "a", &a) || !weft__ops_as_vector(cx, fn, "v", &v))
        return NULL;
    if ((unsigned)mode > WEFT_CONVOLVE_VALID)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: mode %d is not a weft_convolve_mode", fn,
                              (int)mode);
    int64_t n = weft__value_spec(a)->dims[0], m = weft__value_spec(v)->dims[0];
    if (n == WEFT_DIM_ANY && m == WEFT_DIM_ANY)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the lengths of a and v are both unknown "
                              "while tracing; one of them must be known", fn);
    if (n == 0 || m == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s is empty", fn, n == 0 ? "a" : "v");
    /* A length known only when the call runs is checked before use. */
    const char *empty = reverse_v ? "weft_convolve: a or v is empty"
                                  : "weft_correlate: a or v is empty";
    weft_value *zero = weft_const_i64(cx, 0);
    if (n == WEFT_DIM_ANY)
        a = weft_check(cx, a, weft_gt(cx, weft__ops_dim0(cx, a), zero), empty);
    if (m == WEFT_DIM_ANY)
        v = weft_check(cx, v, weft_gt(cx, weft__ops_dim0(cx, v), zero), empty);
    if (reverse_v)
        v = weft_flip(cx, v, (const int[]){ 0 }, 1);
    return mode_part(cx, full_correlation(cx, a, v, n, m), a, v, n, m, mode);
}

weft_value *weft_convolve(weft_ctx *cx, weft_value *a, weft_value *v, weft_convolve_mode mode)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(correlation(cx, "weft_convolve", a, v, mode, true));
}

weft_value *weft_correlate(weft_ctx *cx, weft_value *a, weft_value *v, weft_convolve_mode mode)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(correlation(cx, "weft_correlate", a, v, mode, false));
}
