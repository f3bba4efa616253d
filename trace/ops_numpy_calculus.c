/* NumPy's trapz, gradient, unwrap and ediff1d, composed of slices,
 * differences and elementwise ops in NumPy 1.24's formulas and dtypes, so
 * eager and traced runs give NumPy's bits (sums aside) and the gradients
 * come from the parts.  Lengths unknown while tracing are checked when
 * the call runs (weft_check). */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* The float dtype v computes in: its own, f64 for integers and bool. */
static weft_dtype float_of(const weft_value *v)
{
    weft_dtype dt = weft__value_spec(v)->dtype;
    return weft__dtype_is_float(dt) ? dt : WEFT_F64;
}

/* v along axis from begin to end (Python's slice rules). */
static weft_value *part(weft_ctx *cx, weft_value *v, int axis, int64_t begin, int64_t end)
{
    return weft__ops_axis_slice(cx, v, axis, begin, end);
}

/* x gated on the i64 scalars n and want being equal: the call fails with
 * message when it runs otherwise. */
static weft_value *same_length(weft_ctx *cx, weft_value *x, weft_value *n, weft_value *want,
                               const char *message)
{
    return weft_check(cx, x, weft_eq(cx, n, want), message);
}

weft_value *weft_trapezoid(weft_ctx *cx, weft_value *y, weft_value *x, double dx, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_trapezoid";
    weft_value *in[2] = { y, x };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    int rank = weft__ops_known_rank(cx, fn, "y", y);
    if (rank < 0 || !weft__ops_axis_in(cx, fn, "y", y, &axis))
        return NULL;
    weft_value *yf = weft__ops_as_dtype(cx, y, float_of(y));
    /* NumPy's d * (y[1:] + y[:-1]) / 2.0, the pair summed in y's dtype. */
    weft_value *pair = weft_add(cx, part(cx, yf, axis, 1, WEFT_END), part(cx, yf, axis, 0, -1));
    weft_value *d;
    if (!x) {
        d = weft_const(cx, float_of(y), dx);
    } else if (weft__value_spec(x)->rank == 1) {
        x = same_length(cx, x, weft__ops_dim0(cx, x), weft__ops_dim(cx, y, axis),
                        "weft_trapezoid: x's length is not y's dim along axis");
        if (!x)   /* eagerly the check fails at once */
            return NULL;
        weft_value *xf = weft__ops_as_dtype(cx, x, float_of(x));
        d = weft__ops_along_axis(cx, weft_diff(cx, xf, 1, 0), rank, axis);
    } else {
        d = weft_diff(cx, weft__ops_as_dtype(cx, x, float_of(x)), 1, axis);
    }
    weft_value *area = weft_div(cx, weft_mul(cx, d, pair), weft_const_f64(cx, 2.0));
    return WEFT__KEEP(weft_sum(cx, area, axis));
}

/* ---- gradient ---- */

/* The first and last elements of f along axis from one-sided differences
 * of order edge_order, and the central differences between, joined. */
static weft_value *joined(weft_ctx *cx, weft_value *first, weft_value *inside, weft_value *last,
                          int axis)
{
    weft_value *parts[3] = { first, inside, last };
    return weft_concat(cx, parts, 3, axis);
}

/* a * f0 + b * f1 + c * f2, NumPy's order, each coefficient (f64 or the
 * coordinates' dtype) converted to f's dtype first (NumPy's scalars take
 * the array's dtype). */
static weft_value *three_terms(weft_ctx *cx, weft_value *const coef[3], weft_value *const f[3])
{
    weft_dtype dt = weft__value_spec(f[0])->dtype;
    weft_value *sum = NULL;
    for (int i = 0; i < 3; i++) {
        weft_value *term = weft_mul(cx, weft__ops_as_dtype(cx, coef[i], dt), f[i]);
        sum = sum ? weft_add(cx, sum, term) : term;
    }
    return sum;
}

/* f's elements 0, 1, 2 (front) or n-3, n-2, n-1 along axis. */
static void edge_three(weft_ctx *cx, weft_value *f, int axis, bool front, weft_value *out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = front ? part(cx, f, axis, i, i + 1)
                       : part(cx, f, axis, i - 3, i == 2 ? WEFT_END : i - 2);
}

/* c / h in f64 for the f64 scalar h. */
static weft_value *over(weft_ctx *cx, double c, weft_value *h)
{
    return weft_div(cx, weft_const_f64(cx, c), h);
}

/* The gradient for the step h (an f64 scalar). */
static weft_value *uniform(weft_ctx *cx, weft_value *f, weft_value *h, int axis, int edge_order)
{
    weft_dtype dt = weft__value_spec(f)->dtype;
    weft_value *two_h = weft__ops_as_dtype(cx, weft_mul(cx, weft_const_f64(cx, 2.0), h), dt);
    weft_value *inside = weft_div(
        cx, weft_sub(cx, part(cx, f, axis, 2, WEFT_END), part(cx, f, axis, 0, -2)), two_h);
    if (edge_order == 1) {
        weft_value *step = weft__ops_as_dtype(cx, h, dt);
        weft_value *first = weft_div(
            cx, weft_sub(cx, part(cx, f, axis, 1, 2), part(cx, f, axis, 0, 1)), step);
        weft_value *last = weft_div(
            cx, weft_sub(cx, part(cx, f, axis, -1, WEFT_END), part(cx, f, axis, -2, -1)), step);
        return joined(cx, first, inside, last, axis);
    }
    weft_value *fs[3];
    edge_three(cx, f, axis, true, fs);
    weft_value *front[3] = { over(cx, -1.5, h), over(cx, 2.0, h), over(cx, -0.5, h) };
    weft_value *first = three_terms(cx, front, fs);
    edge_three(cx, f, axis, false, fs);
    weft_value *back[3] = { over(cx, 0.5, h), over(cx, -2.0, h), over(cx, 1.5, h) };
    return joined(cx, first, inside, three_terms(cx, back, fs), axis);
}

/* 2 * a + b in f64 (NumPy's 2. * dx1 + dx2 on scalars of any float). */
static weft_value *twice_plus(weft_ctx *cx, weft_value *a, weft_value *b)
{
    weft_value *a64 = weft__ops_as_dtype(cx, a, WEFT_F64);
    return weft_add(cx, weft_mul(cx, weft_const_f64(cx, 2.0), a64),
                    weft__ops_as_dtype(cx, b, WEFT_F64));
}

/* num / den with den (the coordinates' dtype) widened to f64. */
static weft_value *div64(weft_ctx *cx, weft_value *num, weft_value *den)
{
    return weft_div(cx, num, weft__ops_as_dtype(cx, den, WEFT_F64));
}

/* The second-order edges for uneven steps: NumPy's coefficients from the
 * two steps at each end, in their dtype but where NumPy's 2. widens. */
static void uneven_edges(weft_ctx *cx, weft_value *f, weft_value *steps, int axis,
                         weft_value **first, weft_value **last)
{
    weft_value *fs[3];
    weft_value *d1 = part(cx, steps, 0, 0, 1), *d2 = part(cx, steps, 0, 1, 2);
    weft_value *sum = weft_add(cx, d1, d2);
    weft_value *front[3] = {
        weft_neg(cx, div64(cx, twice_plus(cx, d1, d2), weft_mul(cx, d1, sum))),
        weft_div(cx, sum, weft_mul(cx, d1, d2)),
        weft_div(cx, weft_neg(cx, d1), weft_mul(cx, d2, sum)),
    };
    edge_three(cx, f, axis, true, fs);
    *first = three_terms(cx, front, fs);
    d1 = part(cx, steps, 0, -2, -1);
    d2 = part(cx, steps, 0, -1, WEFT_END);
    sum = weft_add(cx, d1, d2);
    weft_value *back[3] = {
        weft_div(cx, d2, weft_mul(cx, d1, sum)),
        weft_neg(cx, weft_div(cx, weft_add(cx, d2, d1), weft_mul(cx, d1, d2))),
        div64(cx, twice_plus(cx, d2, d1), weft_mul(cx, d2, sum)),
    };
    edge_three(cx, f, axis, false, fs);
    *last = three_terms(cx, back, fs);
}

/* The gradient for uneven steps (a vector of the coordinates' float
 * dtype): the inside in that dtype promoted with f's, then f's dtype. */
static weft_value *uneven(weft_ctx *cx, weft_value *f, weft_value *steps, int rank, int axis,
                          int edge_order)
{
    weft_dtype dt = weft__value_spec(f)->dtype;
    weft_value *d1 = part(cx, steps, 0, 0, -1), *d2 = part(cx, steps, 0, 1, WEFT_END);
    weft_value *sum = weft_add(cx, d1, d2);
    /* NumPy's coefficients, laid along the axis. */
    weft_value *a = weft_div(cx, weft_neg(cx, d2), weft_mul(cx, d1, sum));
    weft_value *b = weft_div(cx, weft_sub(cx, d2, d1), weft_mul(cx, d1, d2));
    weft_value *c = weft_div(cx, d1, weft_mul(cx, d2, sum));
    a = weft__ops_along_axis(cx, a, rank, axis);
    b = weft__ops_along_axis(cx, b, rank, axis);
    c = weft__ops_along_axis(cx, c, rank, axis);
    weft_value *inside = weft_add(
        cx,
        weft_add(cx, weft_mul(cx, a, part(cx, f, axis, 0, -2)),
                 weft_mul(cx, b, part(cx, f, axis, 1, -1))),
        weft_mul(cx, c, part(cx, f, axis, 2, WEFT_END)));
    inside = weft__ops_as_dtype(cx, inside, dt);
    weft_value *first, *last;
    if (edge_order == 1) {
        first = weft_div(cx, weft_sub(cx, part(cx, f, axis, 1, 2), part(cx, f, axis, 0, 1)),
                         weft__ops_as_dtype(cx, part(cx, steps, 0, 0, 1), dt));
        last = weft_div(cx,
                        weft_sub(cx, part(cx, f, axis, -1, WEFT_END), part(cx, f, axis, -2, -1)),
                        weft__ops_as_dtype(cx, part(cx, steps, 0, -1, WEFT_END), dt));
    } else {
        uneven_edges(cx, f, steps, axis, &first, &last);
    }
    return joined(cx, first, inside, last, axis);
}

/* The gradient for coordinates x along axis: NumPy takes the scalar path
 * where every step equals the first. */
static weft_value *by_coordinates(weft_ctx *cx, weft_value *f, weft_value *x, int rank, int axis,
                                  int edge_order)
{
    weft_value *steps = weft_diff(cx, weft__ops_as_dtype(cx, x, float_of(x)), 1, 0);
    weft_value *step0 = part(cx, steps, 0, 0, 1);
    weft_value *even = weft_reduce(cx, WEFT_R_ALL, weft_eq(cx, steps, step0), NULL, 0, false);
    weft_value *h = weft_reshape(cx, weft__ops_as_dtype(cx, step0, WEFT_F64), 0, NULL);
    return weft_where(cx, even, uniform(cx, f, h, axis, edge_order),
                      uneven(cx, f, steps, rank, axis, edge_order));
}

/* Whether spacing is NULL, a scalar or a vector of numbers. */
static bool spacing_ok(weft_ctx *cx, const char *fn, const weft_value *spacing)
{
    if (!spacing)
        return true;
    if (!weft__ops_number(cx, fn, "spacing", spacing))
        return false;
    int r = weft__value_spec(spacing)->rank;
    if (r == 0 || r == 1)
        return true;
    char s[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: spacing %s is not a scalar or a vector", fn,
                   weft__spec_str(weft__value_spec(spacing), s, sizeof s));
    return false;
}

weft_value *weft_gradient(weft_ctx *cx, weft_value *f, weft_value *spacing, int axis,
                          int edge_order)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_gradient";
    weft_value *in[2] = { f, spacing };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    if (edge_order != 1 && edge_order != 2)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: edge_order %d is not 1 or 2", fn, edge_order);
    int rank = weft__ops_known_rank(cx, fn, "f", f);
    if (rank < 0 || !weft__ops_axis_in(cx, fn, "f", f, &axis) ||
        !weft__ops_number(cx, fn, "f", f) || !spacing_ok(cx, fn, spacing))
        return NULL;
    int64_t n = weft__value_spec(f)->dims[axis];
    if (n != WEFT_DIM_ANY && n < edge_order + 1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: f's dim %lld along axis %d is below "
                              "edge_order + 1 = %d", fn, (long long)n, axis, edge_order + 1);
    /* The lengths are checked before any step can meet them. */
    weft_value *n_along = weft__ops_dim(cx, f, axis);
    weft_value *enough = weft_ge(cx, n_along, weft_const_i64(cx, edge_order + 1));
    weft_value *ff = weft_check(cx, weft__ops_as_dtype(cx, f, float_of(f)), enough,
                                "weft_gradient: f's dim along axis is below edge_order + 1");
    weft_value *g;
    if (spacing && weft__value_spec(spacing)->rank == 1) {
        spacing = same_length(cx, spacing, weft__ops_dim0(cx, spacing), n_along,
                              "weft_gradient: the coordinates' length is not f's dim along axis");
        if (!spacing)   /* eagerly the check fails at once */
            return NULL;
        g = by_coordinates(cx, ff, spacing, rank, axis, edge_order);
    } else {
        weft_value *h = spacing ? weft__ops_as_dtype(cx, spacing, WEFT_F64)
                                : weft_const(cx, WEFT_F64, 1.0);
        g = uniform(cx, ff, h, axis, edge_order);
    }
    return WEFT__KEEP(g);
}

/* ---- unwrap ---- */

weft_value *weft_unwrap(weft_ctx *cx, weft_value *p, double discont, int axis, double period)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_unwrap";
    if (!weft__op_enter(cx, fn, &p, 1))
        return NULL;
    if (!(isfinite(period) && period > 0))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: period %g is not finite and > 0", fn, period);
    if (weft__ops_known_rank(cx, fn, "p", p) < 0 || !weft__ops_axis_in(cx, fn, "p", p, &axis) ||
        !weft__ops_number(cx, fn, "p", p))
        return NULL;
    if (isnan(discont))
        discont = period / 2;
    weft_value *pf = weft__ops_as_dtype(cx, p, float_of(p));
    weft_value *dd = weft_diff(cx, pf, 1, axis);
    /* NumPy's mod(dd - low, period) + low with low = -period / 2, then a
     * step of half a period that came out negative made positive again. */
    weft_value *low = weft_const_f64(cx, -period / 2);
    weft_value *wrapped = weft_mod(cx, weft_sub(cx, dd, low), weft_const_f64(cx, period));
    weft_value *ddmod = weft_add(cx, wrapped, low);
    weft_value *flipped = weft_logical_and(cx, weft_eq(cx, ddmod, low),
                                           weft_gt(cx, dd, weft_const_f64(cx, 0.0)));
    ddmod = weft_where(cx, flipped, weft_fill_like(cx, ddmod, period / 2), ddmod);
    weft_value *correct = weft_sub(cx, ddmod, dd);
    weft_value *small = weft_lt(cx, weft_abs(cx, dd), weft_const_f64(cx, discont));
    correct = weft_where(cx, small, weft_zeros_like(cx, correct), correct);
    weft_value *moved = weft_add(cx, part(cx, pf, axis, 1, WEFT_END),
                                 weft_cumsum(cx, correct, axis));
    weft_value *parts[2] = { part(cx, pf, axis, 0, 1), moved };
    return WEFT__KEEP(weft_concat(cx, parts, 2, axis));
}

/* ---- ediff1d ---- */

/* v (NULL for none) flattened as dtype dt, for ediff1d's ends. */
static weft_value *end_part(weft_ctx *cx, weft_value *v, weft_dtype dt)
{
    return v ? weft__ops_as_dtype(cx, weft_ravel(cx, v), dt) : NULL;
}

weft_value *weft_ediff1d(weft_ctx *cx, weft_value *ary, weft_value *to_end, weft_value *to_begin)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ediff1d";
    weft_value *in[3] = { ary, to_end ? to_end : ary, to_begin ? to_begin : ary };
    if (!weft__op_enter(cx, fn, in, 3) || !weft__ops_number(cx, fn, "ary", ary))
        return NULL;
    weft_dtype dt = weft__value_spec(ary)->dtype;
    for (int k = 1; k < 3; k++) {
        /* NumPy's same_kind rule: a float end does not go into integers. */
        weft_dtype ek = weft__value_spec(in[k])->dtype;
        if (!weft__dtype_is_float(dt) && weft__dtype_is_float(ek)) {
            char s[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s does not cast to ary's %s", fn,
                                  k == 1 ? "to_end" : "to_begin",
                                  weft__spec_str(weft__value_spec(in[k]), s, sizeof s),
                                  weft_dtype_name(dt));
        }
    }
    weft_value *parts[3];
    size_t n = 0;
    if (to_begin)
        parts[n++] = end_part(cx, to_begin, dt);
    parts[n++] = weft_diff(cx, weft_ravel(cx, ary), 1, 0);
    if (to_end)
        parts[n++] = end_part(cx, to_end, dt);
    return WEFT__KEEP(n == 1 ? parts[0] : weft_concat(cx, parts, n, 0));
}
