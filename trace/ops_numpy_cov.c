/* NumPy's cov and corrcoef composed of weft's reductions and matmul in
 * NumPy's steps (centre, X X^T, times 1 / (N - ddof); corrcoef divides by
 * the standard deviations and clips): the gradients come from the parts. */
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

/* m's variables as the rows of a float matrix; NULL with the context
 * failing otherwise.  *one_var: m has a single variable, known while
 * tracing (NumPy squeezes the result to a scalar then). */
static weft_value *variables(weft_ctx *cx, const char *fn, weft_value *m, bool rowvar,
                             bool *one_var)
{
    const weft_spec *s = weft__value_spec(m);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_number(cx, fn, "m", m))
        return NULL;
    if (s->rank != 1 && s->rank != 2)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: m %s is not a vector or a matrix known "
                              "while tracing", fn, weft__spec_str(s, ss, sizeof ss));
    weft_value *x = weft__ops_as_dtype(cx, m, weft__ops_float_dtype(&m, 1));
    if (s->rank == 1) {
        static const int64_t row[2] = { 1, -1 };
        *one_var = true;
        return weft_reshape(cx, x, 2, row);
    }
    if (!rowvar)
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
    weft_value *x = variables(cx, fn, m, rowvar, one_var);
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
