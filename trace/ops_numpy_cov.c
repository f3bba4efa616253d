/* NumPy's cov and corrcoef composed of weft's reductions and matmul in
 * NumPy's steps (centre, X X^T, times 1 / (N - ddof); corrcoef divides by
 * the standard deviations and clips): the gradients come from the parts. */
#include <stdio.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* NumPy's cov, the variables along rows of X ([vars, N]), as a matrix. */
static weft_value *cov_matrix(weft_ctx *cx, weft_value *x, int ddof)
{
    static const int obs = 1;
    weft_value *n = weft__ops_dim(cx, x, obs);
    weft_value *centred = weft_sub(cx, x, weft_reduce(cx, WEFT_R_MEAN, x, &obs, 1, true));
    weft_value *prod = weft_matmul(cx, centred, weft_matrix_transpose(cx, centred));
    if (!prod)
        return NULL;
    /* NumPy: fact = max(N - ddof, 0), then c *= 1 / fact (inf past it). */
    weft_value *fact = weft_maximum(cx, weft_sub(cx, n, weft_const_i64(cx, ddof)),
                                    weft_const_i64(cx, 0));
    weft_value *scale = weft_truediv(cx, weft_const_f64(cx, 1), weft_cast(cx, fact, WEFT_F64));
    return weft_mul(cx, prod, weft_cast(cx, scale, weft__value_spec(prod)->dtype));
}

/* Whether two lengths may be equal as far as known while tracing (the
 * ops after a check see the spec's lengths, so differing known ones must
 * fail here, as the check would when the call runs). */
static bool same_known_length(int64_t a, int64_t b)
{
    return a == WEFT_DIM_ANY || b == WEFT_DIM_ANY || a == b;
}

/* One of cov_ex's weight vectors w (named name; fweights when whole) in
 * x's dtype, checked when the call runs as NumPy checks it: as long as
 * x's rows are (x [vars, N]), not negative (NaN fails too), whole numbers
 * where whole. */
static weft_value *observation_weight(weft_ctx *cx, const char *fn, const char *name,
                                      weft_value *w, weft_value *x, bool whole)
{
    const weft_spec *s = weft__value_spec(w);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_number(cx, fn, name, w))
        return NULL;
    if (s->rank != 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s is not a vector", fn, name,
                              weft__spec_str(s, ss, sizeof ss));
    char message[128];
    snprintf(message, sizeof message, "%s: %s are not %s, one per observation", fn, name,
             whole ? "whole numbers >= 0" : "numbers >= 0");
    if (!same_known_length(s->dims[0], weft__value_spec(x)->dims[1]))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s", message);
    weft_value *v = weft__ops_as_dtype(cx, w, weft__value_spec(x)->dtype);
    weft_value *ok = weft_logical_and(cx, weft_eq(cx, weft__ops_dim0(cx, v),
                                                  weft__ops_dim(cx, x, 1)),
                                      weft_reduce(cx, WEFT_R_ALL,
                                                  weft_ge(cx, v, weft_const_i64(cx, 0)),
                                                  NULL, 0, false));
    if (whole)
        ok = weft_logical_and(cx, ok, weft_reduce(cx, WEFT_R_ALL, weft_eq(cx, v,
                                                  weft_round(cx, v)), NULL, 0, false));
    return weft_check(cx, v, ok, message);
}

/* NumPy's weighted cov of the rows of x: each variable centred on its
 * weighted mean, X (X w)^T times 1 / fact, fact from the weights' sum as
 * NumPy's (aw the aweights, NULL for none). */
static weft_value *weighted_cov_matrix(weft_ctx *cx, weft_value *x, weft_value *w,
                                       weft_value *aw, int ddof)
{
    static const int obs = 1;
    static const int64_t row[2] = { 1, -1 };
    weft_value *wr = weft_reshape(cx, w, 2, row);
    weft_value *w_sum = weft_sum(cx, w, 0);
    weft_value *mean = weft_truediv(cx, weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, x, wr), &obs, 1,
                                                    true), w_sum);
    weft_value *centred = weft_sub(cx, x, mean);
    weft_value *prod = weft_matmul(cx, centred,
                                   weft_matrix_transpose(cx, weft_mul(cx, centred, wr)));
    weft_value *fact = w_sum;
    if (ddof != 0) {
        weft_value *d = weft_const_i64(cx, ddof);
        fact = aw ? weft_sub(cx, w_sum, weft_truediv(cx, weft_mul(cx, d, weft_sum(cx,
                                                     weft_mul(cx, w, aw), 0)), w_sum))
                  : weft_sub(cx, w_sum, d);
    }
    fact = weft_maximum(cx, fact, weft_const_i64(cx, 0));
    return weft_mul(cx, prod, weft_truediv(cx, weft_const_f64(cx, 1), fact));
}

/* m's variables as the rows of a float matrix; NULL with the context
 * failing otherwise.  *one_var: m has a single variable, known while
 * tracing (NumPy squeezes the result to a scalar then). */
static weft_value *variables(weft_ctx *cx, const char *fn, const char *name, weft_value *m,
                             bool rowvar, bool *one_var)
{
    const weft_spec *s = weft__value_spec(m);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_number(cx, fn, name, m))
        return NULL;
    if (s->rank != 1 && s->rank != 2)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s is not a vector or a matrix known "
                              "while tracing", fn, name, weft__spec_str(s, ss, sizeof ss));
    weft_value *x = weft__ops_as_dtype(cx, m, weft__ops_float_dtype(&m, 1));
    if (s->rank == 1) {
        static const int64_t row[2] = { 1, -1 };
        *one_var = true;
        return weft_reshape(cx, x, 2, row);
    }
    /* NumPy transposes for rowvar false unless m has a single row (a
     * [1, N] matrix stays one variable, as a vector does). */
    if (!rowvar && s->dims[0] != 1)
        x = weft_matrix_transpose(cx, x);
    *one_var = x && weft__value_spec(x)->dims[0] == 1;
    return x;
}

static weft_value *cov(weft_ctx *cx, const char *fn, weft_value *m, bool rowvar, int ddof,
                       bool *one_var)
{
    if (!weft__op_enter(cx, fn, &m, 1))
        return NULL;
    if (ddof < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: ddof %d is negative", fn, ddof);
    weft_value *x = variables(cx, fn, "m", m, rowvar, one_var);
    return x ? cov_matrix(cx, x, ddof) : NULL;
}

/* A single variable's 1 x 1 matrix as NumPy's scalar. */
static weft_value *scalar_of(weft_ctx *cx, weft_value *c)
{
    return weft_reshape(cx, c, 0, NULL);
}

weft_value *weft_cov(weft_ctx *cx, weft_value *m, bool rowvar, int ddof)
{
    WEFT__SCOPE(cx);
    bool one_var = false;
    weft_value *c = cov(cx, "weft_cov", m, rowvar, ddof, &one_var);
    return WEFT__KEEP(c && one_var ? scalar_of(cx, c) : c);
}

/* NumPy's corrcoef: c / (d d^T) with d the diagonal's square roots,
 * divided by the column then the row factor, clipped to [-1, 1]. */
weft_value *weft_corrcoef(weft_ctx *cx, weft_value *x, bool rowvar)
{
    WEFT__SCOPE(cx);
    bool one_var = false;
    weft_value *c = cov(cx, "weft_corrcoef", x, rowvar, 1, &one_var);
    if (!c)
        return NULL;
    if (one_var)   /* NumPy: c / c */
        return WEFT__KEEP(scalar_of(cx, weft_truediv(cx, c, c)));
    weft_value *d = weft_sqrt(cx, weft_matrix_diag_part(cx, c));
    c = weft_truediv(cx, c, weft_expand_dims(cx, d, 1));
    c = weft_truediv(cx, c, weft_expand_dims(cx, d, 0));
    return WEFT__KEEP(weft_clip(cx, c, weft_const_f64(cx, -1), weft_const_f64(cx, 1)));
}

weft_value *weft_cov_ex(weft_ctx *cx, weft_value *m, weft_value *y, bool rowvar, int ddof,
                        weft_value *fweights, weft_value *aweights)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_cov_ex";
    weft_value *in[4] = { m, y, fweights, aweights };
    if (!weft__op_enter_optional(cx, fn, in, 1, 4))
        return NULL;
    if (ddof < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: ddof %d is negative", fn, ddof);
    bool one_var = false, y_one = false;
    weft_dtype dt = weft__ops_float_dtype(in, y ? 2 : 1);
    weft_value *x = variables(cx, fn, "m", m, rowvar, &one_var);
    if (x && y) {
        weft_value *rows[2] = { x, variables(cx, fn, "y", y, rowvar, &y_one) };
        if (!rows[1])
            return NULL;
        static const char other[] = "weft_cov_ex: y's observations are not m's";
        if (!same_known_length(weft__value_spec(rows[1])->dims[1], weft__value_spec(x)->dims[1]))
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s", other);
        rows[1] = weft_check(cx, rows[1], weft_eq(cx, weft__ops_dim(cx, rows[1], 1),
                                                  weft__ops_dim(cx, x, 1)), other);
        rows[0] = weft__ops_as_dtype(cx, x, dt);
        rows[1] = weft__ops_as_dtype(cx, rows[1], dt);
        x = weft_concat(cx, rows, 2, 0);
        one_var = false;
    }
    if (!x)
        return NULL;
    weft_value *fw = NULL, *aw = NULL;
    if (fweights && !(fw = observation_weight(cx, fn, "fweights", fweights, x, true)))
        return NULL;
    if (aweights && !(aw = observation_weight(cx, fn, "aweights", aweights, x, false)))
        return NULL;
    weft_value *w = fw && aw ? weft_mul(cx, fw, aw) : fw ? fw : aw;
    weft_value *c = w ? weighted_cov_matrix(cx, x, w, aw, ddof) : cov_matrix(cx, x, ddof);
    return WEFT__KEEP(c && one_var ? scalar_of(cx, c) : c);
}
