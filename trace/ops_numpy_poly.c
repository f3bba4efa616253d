/* NumPy's polynomial routines on coefficient vectors (highest power
 * first): polyadd, polysub, polymul, polyder, polyint, polyfit, poly and
 * polydiv, composed of gathers, elementwise ops and sums in NumPy 1.24's
 * steps and dtypes.  Lengths may be unknown while tracing, so new lengths
 * never retrace, except where the steps are unrolled by length (polyfit's
 * x, poly's roots, polydiv's u and v); the gradients come from the
 * parts. */
#include <float.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* out[k] = v[k - shift] where 0 <= k - shift < len(v), else 0, for k in
 * [0, length): shift an i64 value of any shape S (the result is S +
 * [length]), length an i64 scalar. */
static weft_value *shifted(weft_ctx *cx, weft_value *v, weft_value *shift, weft_value *length)
{
    weft_value *pos = weft_sub(cx, weft_range_to(cx, length), shift);
    weft_value *zero = weft_const_i64(cx, 0);
    weft_value *inside = weft_logical_and(cx, weft_ge(cx, pos, zero),
                                          weft_lt(cx, pos, weft__ops_dim0(cx, v)));
    /* Index 0 of the padded vector is the zero that the outside reads. */
    weft_value *padded = weft_pad(cx, v, (const int64_t[][2]){ { 1, 0 } }, 0.0);
    weft_value *at = weft_where(cx, inside, weft_add(cx, pos, weft_const_i64(cx, 1)), zero);
    return weft_gather(cx, padded, at, 0);
}

/* The vector v given the static length of the vectors it was made from
 * where all of them are known while tracing (NumPy's results have them). */
static weft_value *with_known_length(weft_ctx *cx, weft_value *v, bool known, int64_t length)
{
    return known ? weft_reshape(cx, v, 1, &length) : v;
}

/* a1 and a2 (scalars read as vectors of one), numbers, for fn. */
static bool coefficient_pair(weft_ctx *cx, const char *fn, weft_value **a1, weft_value **a2)
{
    weft_value *in[2] = { *a1, *a2 };
    return weft__op_enter(cx, fn, in, 2) && weft__ops_as_vector(cx, fn, "a1", a1) &&
           weft__ops_as_vector(cx, fn, "a2", a2) && weft__ops_number(cx, fn, "a1", *a1) &&
           weft__ops_number(cx, fn, "a2", *a2);
}

/* a1 + a2 or a1 - a2 with the shorter padded with zeros in front. */
static weft_value *add_aligned(weft_ctx *cx, const char *fn, weft_value *a1, weft_value *a2,
                               bool subtract)
{
    if (!coefficient_pair(cx, fn, &a1, &a2))
        return NULL;
    int64_t n1 = weft__value_spec(a1)->dims[0], n2 = weft__value_spec(a2)->dims[0];
    weft_value *d1 = weft__ops_dim0(cx, a1), *d2 = weft__ops_dim0(cx, a2);
    weft_value *length = weft_maximum(cx, d1, d2);
    weft_value *p1 = shifted(cx, a1, weft_sub(cx, length, d1), length);
    weft_value *p2 = shifted(cx, a2, weft_sub(cx, length, d2), length);
    weft_value *sum = subtract ? weft_sub(cx, p1, p2) : weft_add(cx, p1, p2);
    bool known = n1 != WEFT_DIM_ANY && n2 != WEFT_DIM_ANY;
    return with_known_length(cx, sum, known, n1 > n2 ? n1 : n2);
}

weft_value *weft_polyadd(weft_ctx *cx, weft_value *a1, weft_value *a2)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(add_aligned(cx, "weft_polyadd", a1, a2, false));
}

weft_value *weft_polysub(weft_ctx *cx, weft_value *a1, weft_value *a2)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(add_aligned(cx, "weft_polysub", a1, a2, true));
}

/* The i64 length of v with its leading zeros trimmed (NumPy's poly1d),
 * at least 1: an all-zero v keeps one zero. */
static weft_value *trimmed_length(weft_ctx *cx, weft_value *v)
{
    weft_value *seen = weft_cumsum(cx, weft_cast(cx, weft_ne(cx, v, weft_const_i64(cx, 0)),
                                                 WEFT_I64), 0);
    weft_value *leading = weft_sum(cx, weft_cast(cx, weft_eq(cx, seen, weft_const_i64(cx, 0)),
                                                 WEFT_I64), 0);
    return weft_maximum(cx, weft_sub(cx, weft__ops_dim0(cx, v), leading),
                        weft_const_i64(cx, 1));
}

weft_value *weft_polymul(weft_ctx *cx, weft_value *a1, weft_value *a2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_polymul";
    if (!coefficient_pair(cx, fn, &a1, &a2))
        return NULL;
    /* A zero in front changes no polynomial and gives an empty one its
     * [0] (poly1d's). */
    static const int64_t front[1][2] = { { 1, 0 } };
    a1 = weft_pad(cx, a1, front, 0.0);
    a2 = weft_pad(cx, a2, front, 0.0);
    /* The full convolution c[k] = sum over i of a1[i] a2[k - i]: row i
     * of the products is a2 shifted by i. */
    weft_value *d1 = weft__ops_dim0(cx, a1), *d2 = weft__ops_dim0(cx, a2);
    weft_value *full = weft_sub(cx, weft_add(cx, d1, d2), weft_const_i64(cx, 1));
    static const int64_t column[2] = { -1, 1 };
    weft_value *rows = shifted(cx, a2, weft_reshape(cx, weft__ops_axis0_range(cx, a1), 2, column),
                               full);
    weft_value *c = weft_sum(cx, weft_mul(cx, weft_reshape(cx, a1, 2, column), rows), 0);
    /* Leading zeros of a1 and a2 lead the product: NumPy trims them from
     * both first (poly1d), so the result starts after them. */
    weft_value *t1 = trimmed_length(cx, a1), *t2 = trimmed_length(cx, a2);
    weft_value *length = weft_sub(cx, weft_add(cx, t1, t2), weft_const_i64(cx, 1));
    weft_value *skip = weft_sub(cx, weft__ops_dim0(cx, c), length);
    return WEFT__KEEP(weft_gather(cx, c, weft_add(cx, skip, weft_range_to(cx, length)), 0));
}

/* The bound on polyder's and polyint's unrolled order where it adds ops
 * (NumPy's recursion stops near 1000 too). */
#define POLY_MAX_ORDER 1000

/* Whether m is an order fn unrolls: 0 <= m, and m <= POLY_MAX_ORDER
 * unless `bounded` (a known length that ends the steps sooner). */
static bool order_ok(weft_ctx *cx, const char *fn, int m, bool bounded)
{
    if (m >= 0 && (bounded || m <= POLY_MAX_ORDER))
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: the order m %d is not in [0, %d]", fn, m,
                   POLY_MAX_ORDER);
    return false;
}

/* n, n - 1, ..., 1 for the vector v of length n, in dt (NumPy's
 * arange(n, 0, -1)). */
static weft_value *falling(weft_ctx *cx, weft_value *v, weft_dtype dt)
{
    int64_t n = weft__value_spec(v)->dims[0];
    if (n != WEFT_DIM_ANY)
        return weft_range(cx, dt, n, 0, -1);
    weft_value *k = weft_sub(cx, weft__ops_dim0(cx, v), weft__ops_axis0_range(cx, v));
    return weft_cast(cx, k, dt);
}

weft_value *weft_polyder(weft_ctx *cx, weft_value *p, int m)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_polyder";
    if (!weft__op_enter(cx, fn, &p, 1) || !weft__ops_as_vector(cx, fn, "p", &p))
        return NULL;
    /* Past n derivatives of n coefficients the result stays empty. */
    int64_t n = weft__value_spec(p)->dims[0];
    if (!order_ok(cx, fn, m, n != WEFT_DIM_ANY))
        return NULL;
    int steps = n != WEFT_DIM_ANY && n < m ? (int)n : m;
    /* NumPy multiplies by an i64 arange: integers give i64, floats f64. */
    weft_dtype dt = weft__dtype_is_float(weft__value_spec(p)->dtype) ? WEFT_F64 : WEFT_I64;
    weft_value *v = m > 0 ? weft__ops_as_dtype(cx, p, dt) : p;
    for (int i = 0; i < steps && v; i++) {
        weft_value *head = weft__ops_axis_slice(cx, v, 0, 0, -1);
        v = weft_mul(cx, head, falling(cx, head, dt));
    }
    return WEFT__KEEP(v);
}

/* NumPy's constants for polyint: none (zeros), one for every order, or
 * one each for the first m. */
static bool constants_ok(weft_ctx *cx, const char *fn, int m, const double *k, size_t n_k)
{
    if (!order_ok(cx, fn, m, false))
        return false;
    if (!k && n_k > 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: k is NULL with n_k %zu", fn, n_k), false;
    if (n_k > 1 && n_k < (size_t)m)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu constants k for order %d: give 0, 1 or "
                              "at least m", fn, n_k, m), false;
    return true;
}

weft_value *weft_polyint(weft_ctx *cx, weft_value *p, int m, const double *k, size_t n_k)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_polyint";
    if (!weft__op_enter(cx, fn, &p, 1) || !weft__ops_as_vector(cx, fn, "p", &p) ||
        !constants_ok(cx, fn, m, k, n_k))
        return NULL;
    /* NumPy's true division by an i64 arange: f64 throughout. */
    weft_value *v = m > 0 ? weft__ops_as_dtype(cx, p, WEFT_F64) : p;
    static const int64_t one = 1;
    for (int i = 0; i < m && v; i++) {
        double constant = n_k == 0 ? 0.0 : k[n_k == 1 ? 0 : i];
        weft_value *parts[2] = { weft_div(cx, v, falling(cx, v, WEFT_F64)),
                                 weft_fill(cx, WEFT_F64, 1, &one, constant) };
        v = weft_concat(cx, parts, 2, 0);
    }
    return WEFT__KEEP(v);
}

/* polyfit's operands: x a vector of known length n >= 1, y [n] or [n, K]
 * and w NULL or [n] (lengths unknown while tracing checked when the call
 * runs); false with the context failing otherwise. */
static bool fit_operands(weft_ctx *cx, const char *fn, weft_value **x, weft_value **y,
                         weft_value **w, int deg)
{
    weft_value *in[3] = { *x, *y, *w };
    if (!weft__op_enter_optional(cx, fn, in, 2, 3))
        return false;
    if (deg < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: deg %d is negative", fn, deg), false;
    const weft_spec *sx = weft__value_spec(*x), *sy = weft__value_spec(*y);
    char s[WEFT__SPEC_STR_MAX];
    if (sx->rank != 1 || sx->dims[0] == WEFT_DIM_ANY || sx->dims[0] == 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s is not a vector of 1 or more known "
                               "while tracing", fn, weft__spec_str(sx, s, sizeof s)), false;
    if (sy->rank != 1 && sy->rank != 2)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: y %s is not [n] or [n, K]", fn,
                               weft__spec_str(sy, s, sizeof s)), false;
    if (*w && weft__value_spec(*w)->rank != 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: w %s is not a vector", fn,
                               weft__spec_str(weft__value_spec(*w), s, sizeof s)), false;
    for (int i = 0; i < 3; i++)
        if (in[i] && !weft__ops_number(cx, fn, i == 0 ? "x" : i == 1 ? "y" : "w", in[i]))
            return false;
    weft_value *n = weft__ops_dim0(cx, *x);
    *y = weft__ops_checkf(cx, *y, weft_eq(cx, weft__ops_dim0(cx, *y), n),
                          "%s: y's length is not x's", fn);
    if (*w)
        *w = weft__ops_checkf(cx, *w, weft_eq(cx, weft__ops_dim0(cx, *w), n),
                              "%s: w's length is not x's", fn);
    return *y && (!*w || *w);
}

/* NumPy's vander(x, deg + 1) for x of known length n: the columns
 * x^deg, ..., x, 1, each power multiplied up from the one below as
 * NumPy's multiply.accumulate (weft_vander's pow may differ in the last
 * bit, and its gradient is NaN at x = 0 for the power 0). */
static weft_value *vandermonde(weft_ctx *cx, weft_value *x, int64_t n, int deg)
{
    weft_value **cols = weft__malloc(sizeof *cols * ((size_t)deg + 1));
    if (!cols)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "weft_polyfit: out of memory");
    cols[deg] = weft_fill(cx, WEFT_F64, 1, &n, 1.0);
    for (int p = 1; p <= deg; p++)
        cols[deg - p] = p == 1 ? x : weft_mul(cx, cols[deg - p + 1], x);
    weft_value *v = weft_stack(cx, cols, (size_t)deg + 1, 1);
    weft__free(cols);
    return v;
}

/* NumPy's least squares fit: its scaled system lhs c_s = rhs (rhs [n, K],
 * a vector y as one column), the column scales and the coefficients c
 * (c_s / scale, y's rank). */
typedef struct poly_fit {
    weft_value *lhs, *rhs, *scale, *scaled_c, *c;
} poly_fit;

static bool fit(weft_ctx *cx, const char *fn, weft_value *x, weft_value *y, int deg,
                weft_value *w, poly_fit *f)
{
    if (!fit_operands(cx, fn, &x, &y, &w, deg))
        return false;
    /* NumPy's rcond: len(x) eps of x's float dtype (x + 0.0). */
    int64_t n = weft__value_spec(x)->dims[0];
    double eps = weft__value_spec(x)->dtype == WEFT_F32 ? FLT_EPSILON : DBL_EPSILON;
    bool matrix = weft__value_spec(y)->rank == 2;
    /* NumPy's vander promotes with int: everything is f64. */
    weft_value *lhs = vandermonde(cx, weft__ops_as_dtype(cx, x, WEFT_F64), n, deg);
    weft_value *rhs = weft__ops_as_dtype(cx, y, WEFT_F64);
    static const int64_t column[2] = { -1, 1 };
    if (!matrix)
        rhs = weft_reshape(cx, rhs, 2, column);
    if (w) {
        weft_value *wc = weft_reshape(cx, weft__ops_as_dtype(cx, w, WEFT_F64), 2, column);
        lhs = weft_mul(cx, lhs, wc);
        rhs = weft_mul(cx, rhs, wc);
    }
    /* Columns scaled to unit norm for the condition number, then the
     * minimum-norm least squares solution (NumPy's lstsq is LAPACK's
     * gelsd: an SVD as weft_pinv's, small singular values cut alike). */
    f->scale = weft_sqrt(cx, weft_sum(cx, weft_square(cx, lhs), 0));
    f->lhs = weft_div(cx, lhs, f->scale);
    f->rhs = rhs;
    f->scaled_c = weft_matmul(cx, weft_pinv(cx, f->lhs, (double)n * eps), rhs);
    f->c = weft_div(cx, f->scaled_c, weft_reshape(cx, f->scale, 2, column));
    if (!matrix) {
        static const int64_t flat = -1;
        f->c = weft_reshape(cx, f->c, 1, &flat);
    }
    return weft_ctx_status(cx) == 0;
}

weft_value *weft_polyfit(weft_ctx *cx, weft_value *x, weft_value *y, int deg, weft_value *w)
{
    WEFT__SCOPE(cx);
    poly_fit f;
    return fit(cx, "weft_polyfit", x, y, deg, w, &f) ? WEFT__KEEP(f.c) : NULL;
}

int weft_polyfit_cov(weft_ctx *cx, weft_value *x, weft_value *y, int deg, weft_value *w,
                     bool unscaled, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_polyfit_cov";
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, &x, 1, outs, &rc))
        return rc;
    poly_fit f;
    if (!fit(cx, fn, x, y, deg, w, &f))
        return weft_ctx_status(cx);
    int64_t n = weft__value_spec(x)->dims[0], order = (int64_t)deg + 1;
    if (!unscaled && n <= order)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %lld points do not exceed the order %lld, "
                              "which the scaled covariance needs", fn, (long long)n,
                              (long long)order), weft_ctx_status(cx);
    /* NumPy: inv(lhs^T lhs) / outer(scale, scale), times the residuals'
     * sum of squares over n - order unless unscaled; a matrix y's [order,
     * order, K] (K 1 unscaled, as NumPy's Vbase[:, :, newaxis]). */
    weft_value *normal = weft_matmul_ex(cx, f.lhs, f.lhs, WEFT_TRANSPOSE_A);
    weft_value *v = weft_div(cx, weft_matrix_inverse(cx, normal),
                             weft_outer(cx, f.scale, f.scale));
    bool matrix = weft__value_spec(y)->rank == 2;
    if (matrix)
        v = weft_expand_dims(cx, v, 2);
    if (!unscaled) {
        weft_value *r = weft_sub(cx, f.rhs, weft_matmul(cx, f.lhs, f.scaled_c));
        weft_value *fac = weft_div(cx, weft_sum(cx, weft_square(cx, r), 0),
                                   weft_const_f64(cx, (double)(n - order)));
        v = weft_mul(cx, v, matrix ? fac : weft_reshape(cx, fac, 0, NULL));
    }
    outs[0] = f.c;
    outs[1] = v;
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}

weft_value *weft_polyval_vector(weft_ctx *cx, weft_value *p, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_polyval_vector";
    weft_value *in[2] = { p, x };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_as_vector(cx, fn, "p", &p) ||
        !weft__ops_number(cx, fn, "p", p) || !weft__ops_number(cx, fn, "x", x))
        return NULL;
    int64_t n = weft__value_spec(p)->dims[0];
    if (n == WEFT_DIM_ANY) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: p %s has a length unknown while tracing",
                              fn, weft__spec_str(weft__value_spec(p), s, sizeof s));
    }
    /* NumPy's scalar coefficients take x's dtype when of its kind; float
     * ones over integer x give f64 (none leave zeros_like(x)). */
    weft_dtype dp = weft__value_spec(p)->dtype, dx = weft__value_spec(x)->dtype;
    bool widen = n > 0 && weft__dtype_is_float(dp) && !weft__dtype_is_float(dx);
    weft_dtype dt = widen ? WEFT_F64 : dx;
    p = weft__ops_as_dtype(cx, p, dt);
    x = weft__ops_as_dtype(cx, x, dt);
    /* NumPy: y = zeros_like(x), then y = y x + p[i] (so an infinite x
     * gives NaN, 0 inf, as NumPy's). */
    weft_value *y = weft_zeros_like(cx, x);
    for (int64_t i = 0; i < n && y; i++)
        y = weft_add(cx, weft_mul(cx, y, x), weft_gather(cx, p, weft_const_i64(cx, i), 0));
    return WEFT__KEEP(y);
}

weft_value *weft_poly(weft_ctx *cx, weft_value *roots)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_poly";
    if (!weft__op_enter(cx, fn, &roots, 1) || !weft__ops_as_vector(cx, fn, "roots", &roots) ||
        !weft__ops_number(cx, fn, "roots", roots))
        return NULL;
    int64_t n = weft__value_spec(roots)->dims[0];
    char s[WEFT__SPEC_STR_MAX];
    if (n == WEFT_DIM_ANY || n > POLY_MAX_ORDER)
        return weft__ctx_fail(cx, n < 0 ? WEFT_ESHAPE : WEFT_EINVAL, "%s: roots %s are not of a "
                              "length known while tracing, at most %d (the products are "
                              "unrolled)", fn, weft__spec_str(weft__value_spec(roots), s, sizeof s),
                              POLY_MAX_ORDER);
    if (n == 0)   /* NumPy's 1.0 */
        return WEFT__KEEP(weft_const_f64(cx, 1.0));
    /* NumPy: ones((1,)) of the roots' float dtype (f64 for integers),
     * convolved with [1, -r] for each root r in turn. */
    weft_dtype dt = weft__ops_float_dtype(&roots, 1);
    roots = weft__ops_as_dtype(cx, roots, dt);
    static const int64_t one = 1;
    weft_value *a = weft_reshape(cx, weft__ops_as_dtype(cx, weft_const_f64(cx, 1.0), dt), 1, &one);
    for (int64_t k = 0; k < n; k++) {
        weft_value *r = weft_gather(cx, roots, weft_const_i64(cx, k), 0);
        weft_value *kept = weft_pad(cx, a, (const int64_t[][2]){ { 0, 1 } }, 0.0);
        weft_value *moved = weft_pad(cx, a, (const int64_t[][2]){ { 1, 0 } }, 0.0);
        a = weft_sub(cx, kept, weft_mul(cx, r, moved));
    }
    return WEFT__KEEP(a);
}

/* np.polydiv's remainder r (a vector of n entries) without its leading
 * entries that np.allclose calls 0 (|x| <= 1e-8 in f64; NaN is not), the
 * last one always kept: a boolean mask, its length known when the call
 * runs.  In f32 the test is |x| <= f32(1e-8), the same: that is the
 * largest f32 not above 1e-8. */
static weft_value *trim_leading_zeros(weft_ctx *cx, const char *fn, weft_value *r, int64_t n)
{
    weft_value *small = weft_le(cx, weft_abs(cx, r), weft_const_f64(cx, 1e-8));
    weft_value *after = weft_gt(cx, weft_cumsum(cx, weft_logical_not(cx, small), 0),
                                weft_const_i64(cx, 0));
    int64_t *last = weft__calloc((size_t)n, sizeof *last);
    if (!last)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    last[n - 1] = 1;
    weft_value *keep = weft_logical_or(cx, after, weft__ops_constant(cx, fn, WEFT_I64, 1, &n,
                                                                     last, WEFT_BOOL));
    weft__free(last);
    return weft_boolean_mask(cx, r, keep, 0);
}

/* Positions k..k + n of a vector of len entries, as a bool constant. */
static weft_value *window_mask(weft_ctx *cx, const char *fn, int64_t len, int64_t k, int64_t n)
{
    int64_t *in = weft__calloc((size_t)len, sizeof *in);
    if (!in)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    for (int64_t i = k; i <= k + n; i++)
        in[i] = 1;
    weft_value *mask = weft__ops_constant(cx, fn, WEFT_I64, 1, &len, in, WEFT_BOOL);
    weft__free(in);
    return mask;
}

int weft_polydiv(weft_ctx *cx, weft_value *u, weft_value *v, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_polydiv";
    int rc;
    weft_value *in[2] = { u, v };
    if (!weft__ops_enter_two_outs(cx, fn, in, 2, outs, &rc))
        return rc;
    if (!weft__ops_as_vector(cx, fn, "u", &u) || !weft__ops_as_vector(cx, fn, "v", &v) ||
        !weft__ops_number(cx, fn, "u", u) || !weft__ops_number(cx, fn, "v", v))
        return weft_ctx_status(cx);
    int64_t lu = weft__value_spec(u)->dims[0], lv = weft__value_spec(v)->dims[0];
    char su[WEFT__SPEC_STR_MAX], sv[WEFT__SPEC_STR_MAX];
    if (lu == WEFT_DIM_ANY || lv == WEFT_DIM_ANY || lu < 1 || lv < 1 || lu > POLY_MAX_ORDER + 1)
        return weft__ctx_failf(cx, lu == WEFT_DIM_ANY || lv == WEFT_DIM_ANY ? WEFT_ESHAPE
                                                                           : WEFT_EINVAL,
                               "%s: u %s and v %s need lengths known while tracing, at "
                               "least 1, u's at most %d (the division is unrolled)", fn,
                               weft__spec_str(weft__value_spec(u), su, sizeof su),
                               weft__spec_str(weft__value_spec(v), sv, sizeof sv),
                               POLY_MAX_ORDER + 1);
    /* NumPy: both + 0.0 (f64 for integers), the remainder in their common
     * dtype.  scale = 1. / v[0] and each d = scale * r[k] are f64 scalars
     * (a Python float by an f32 scalar is f64); d * v is in the vectors'
     * dtype, d converted first. */
    weft_dtype dt = weft__ops_float_dtype(in, 2);
    weft_value *r = weft__ops_as_dtype(cx, u, dt), *q;
    v = weft__ops_as_dtype(cx, v, dt);
    int64_t m = lu - 1, n = lv - 1;
    if (m < n) {
        q = weft_fill(cx, dt, 1, (const int64_t[]){ 1 }, 0.0);
    } else {
        weft_value *v0 = weft_cast(cx, weft_gather(cx, v, weft_const_i64(cx, 0), 0), WEFT_F64);
        weft_value *scale = weft_div(cx, weft_const_f64(cx, 1.0), v0);
        weft_value **qs = weft__calloc((size_t)(m - n + 1), sizeof *qs);
        if (!qs)
            return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", fn);
        for (int64_t k = 0; k <= m - n; k++) {
            weft_value *rk = weft_cast(cx, weft_gather(cx, r, weft_const_i64(cx, k), 0),
                                       WEFT_F64);
            qs[k] = weft__ops_as_dtype(cx, weft_mul(cx, scale, rk), dt);
            weft_value *shifted = weft_pad(cx, v, (const int64_t[][2]){ { k, m - n - k } }, 0.0);
            weft_value *less = weft_sub(cx, r, weft_mul(cx, qs[k], shifted));
            r = weft_where(cx, window_mask(cx, fn, m + 1, k, n), less, r);
        }
        q = weft_stack(cx, qs, (size_t)(m - n + 1), 0);
        weft__free(qs);
    }
    outs[0] = q;
    outs[1] = trim_leading_zeros(cx, fn, r, m + 1);
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}
