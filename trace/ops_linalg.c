/* Matrix helpers and small math ops of include/weft/ops.h: band_part,
 * matrix_diag, matrix_set_diag, matrix_diag_part, matrix_transpose,
 * tensor_diag, tensor_diag_part, trace, cross, norm, clip_by_norm, clip_by_global_norm,
 * global_norm, divide_no_nan, squared_difference, reciprocal, reciprocal_no_nan, xlogy,
 * xlog1py, xdivy and multiply_no_nan.  Each is a
 * composition of other ops (as ops_nn.c's), checks its inputs first so
 * that an error names the public op, and builds its elementwise steps
 * through weft__op_unary / weft__op_binary with the public name. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* ---- Checks ------------------------------------------------------------ */

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

static bool need_float(weft_ctx *cx, const char *fn, const weft_value *a, const char *name)
{
    if (weft__dtype_is_float(spec_of(a)->dtype))
        return true;
    char s[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s is not f32 or f64 (weft_cast it first)", fn, name,
                   weft__spec_str(spec_of(a), s, sizeof s));
    return false;
}

/* a is a batch of matrices whose last two dims are known while tracing:
 * *m rows, *n columns. */
static bool known_matrix(weft_ctx *cx, const char *fn, const weft_value *a, int64_t *m,
                         int64_t *n)
{
    const weft_spec *s = spec_of(a);
    if (s->rank != WEFT_RANK_ANY && s->rank >= 2 && s->dims[s->rank - 2] >= 0 &&
        s->dims[s->rank - 1] >= 0) {
        *m = s->dims[s->rank - 2];
        *n = s->dims[s->rank - 1];
        return true;
    }
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not a matrix (or a batch of them) whose last two "
                   "dims are known while tracing", fn, weft__spec_str(s, ss, sizeof ss));
    return false;
}

/* [m, n] booleans: row index - column index compared with k by op (the
 * band and diagonal masks). */
static weft_value *offset_mask(weft_ctx *cx, const char *fn, int64_t m, int64_t n, weft__op op,
                               int64_t k)
{
    weft_value *rows = weft_expand_dims(cx, weft_range(cx, WEFT_I64, 0, m, 1), -1);
    weft_value *cols = weft_range(cx, WEFT_I64, 0, n, 1);
    weft_value *diff = weft__op_binary(cx, WEFT__OP_SUB, fn, rows, cols);
    return weft__op_binary(cx, op, fn, diff, weft_const_i64(cx, k));
}

/* ---- Matrices ----------------------------------------------------------- */

weft_value *weft_band_part(weft_ctx *cx, weft_value *a, int64_t num_lower, int64_t num_upper)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_band_part";
    int64_t m, n;
    if (!weft__op_enter(cx, fn, &a, 1) || !known_matrix(cx, fn, a, &m, &n))
        return NULL;
    /* Kept: i - j <= num_lower (below the diagonal) and j - i <= num_upper,
     * a negative bound keeping that whole triangle. */
    weft_value *keep = NULL;
    if (num_lower >= 0)
        keep = offset_mask(cx, fn, m, n, WEFT__OP_LE, num_lower);
    if (num_upper >= 0) {
        weft_value *upper = offset_mask(cx, fn, m, n, WEFT__OP_GE, -num_upper);
        keep = keep ? weft_logical_and(cx, keep, upper) : upper;
    }
    if (!keep)
        return WEFT__KEEP(weft__value_strong(cx, a));
    return WEFT__KEEP(weft_where(cx, keep, a, weft_zeros_like(cx, a)));
}

weft_value *weft_matrix_diag(weft_ctx *cx, weft_value *v)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matrix_diag";
    if (!weft__op_enter(cx, fn, &v, 1))
        return NULL;
    const weft_spec *s = spec_of(v);
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || s->dims[s->rank - 1] < 0) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has no last dim known while tracing", fn,
                              weft__spec_str(s, ss, sizeof ss));
    }
    int64_t k = s->dims[s->rank - 1];
    /* Row i of [..., k, k] is v where the column is i, else 0. */
    weft_value *on = offset_mask(cx, fn, k, k, WEFT__OP_EQ, 0);
    weft_value *rows = weft_expand_dims(cx, v, -2);
    return WEFT__KEEP(weft_where(cx, on, rows, weft_zeros_like(cx, rows)));
}

/* The dims of a tensor_diag's diagonal (all of a, or the first half of
 * tensor_diag_part's input), known while tracing, and their product. */
static bool known_dims(weft_ctx *cx, const char *fn, const weft_spec *s, int rank, int64_t *n)
{
    char ss[WEFT__SPEC_STR_MAX];
    *n = 1;
    for (int d = 0; d < rank; d++) {
        const char *why = s->dims[d] < 0 ? "has a dim unknown while tracing"
                          : __builtin_mul_overflow(*n, s->dims[d], n) ? "has too many elements"
                                                                      : NULL;
        if (why) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s", fn, weft__spec_str(s, ss, sizeof ss), why);
            return false;
        }
    }
    return true;
}

weft_value *weft_tensor_diag(weft_ctx *cx, weft_value *diagonal)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_tensor_diag";
    if (!weft__op_enter(cx, fn, &diagonal, 1))
        return NULL;
    const weft_spec *s = spec_of(diagonal);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || 2 * s->rank > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the diagonal %s must have a rank of 1 to %d "
                              "known while tracing", fn, weft__spec_str(s, ss, sizeof ss),
                              WEFT_MAX_RANK / 2);
    int64_t n, dims[WEFT_MAX_RANK];
    if (!known_dims(cx, fn, s, s->rank, &n))
        return NULL;
    for (int d = 0; d < s->rank; d++)
        dims[d] = dims[s->rank + d] = s->dims[d];
    /* The diagonal of an [n, n] matrix, its dims then split in two. */
    weft_value *square = weft_matrix_diag(cx, weft_reshape(cx, diagonal, 1, &n));
    return WEFT__KEEP(weft_reshape(cx, square, 2 * s->rank, dims));
}

weft_value *weft_tensor_diag_part(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_tensor_diag_part";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    const weft_spec *s = spec_of(a);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 2 || s->rank % 2)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s must have an even rank of 2 or more, "
                              "known while tracing", fn, weft__spec_str(s, ss, sizeof ss));
    int k = s->rank / 2;
    int64_t n;
    if (!known_dims(cx, fn, s, s->rank, &n))
        return NULL;
    for (int d = 0; d < k; d++)
        if (s->dims[d] != s->dims[k + d])
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s: dim %d (%lld) differs from dim %d "
                                  "(%lld)", fn, weft__spec_str(s, ss, sizeof ss), d,
                                  (long long)s->dims[d], k + d, (long long)s->dims[k + d]);
    known_dims(cx, fn, s, k, &n);
    /* Element (i..., i...) is at i (n + 1) of the flattened tensor. */
    int64_t all = n * n, begin = 0, end = n ? (n - 1) * (n + 1) + 1 : 0, step = n + 1;
    weft_value *flat = weft_reshape(cx, a, 1, &all);
    return WEFT__KEEP(weft_reshape(cx, weft_slice(cx, flat, &begin, &end, &step), k, s->dims));
}

weft_value *weft_matrix_transpose(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matrix_transpose";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    const weft_spec *s = spec_of(a);
    if (s->rank == WEFT_RANK_ANY || s->rank < 2) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not a matrix (or a batch of them) "
                              "of a rank known while tracing", fn,
                              weft__spec_str(s, ss, sizeof ss));
    }
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < s->rank; d++)
        perm[d] = d;
    perm[s->rank - 2] = s->rank - 1;
    perm[s->rank - 1] = s->rank - 2;
    return WEFT__KEEP(weft_transpose(cx, a, perm));
}

/* tf.linalg.set_diag: a where the row equals the column, diagonal there
 * (broadcast along the longer side of the matrix). */
weft_value *weft_matrix_set_diag(weft_ctx *cx, weft_value *a, weft_value *diagonal)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matrix_set_diag";
    weft_value *in[2] = { a, diagonal };
    int64_t m, n;
    if (!weft__op_enter(cx, fn, in, 2) || !known_matrix(cx, fn, a, &m, &n))
        return NULL;
    const weft_spec *sa = spec_of(a), *sd = spec_of(diagonal);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    weft__spec_str(sa, s1, sizeof s1);
    weft__spec_str(sd, s2, sizeof s2);
    if (sd->dtype != sa->dtype)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the diagonal %s is not of the matrix's dtype "
                              "(%s)", fn, s2, s1);
    int64_t k = m < n ? m : n;
    bool fits = sd->rank == sa->rank - 1 && (sd->dims[sd->rank - 1] == k || sd->dims[sd->rank - 1] < 0);
    for (int d = 0; fits && d < sd->rank - 1; d++)
        fits = sd->dims[d] < 0 || sa->dims[d] < 0 || sd->dims[d] == sa->dims[d];
    if (!fits)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the diagonal %s does not fit the matrix %s "
                              "([..., min(m, n)] for [..., m, n])", fn, s2, s1);
    weft_value *on = offset_mask(cx, fn, m, n, WEFT__OP_EQ, 0);
    return WEFT__KEEP(weft_where(cx, on, weft_expand_dims(cx, diagonal, m <= n ? -1 : -2), a));
}

weft_value *weft_matrix_diag_part(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matrix_diag_part";
    int64_t m, n;
    if (!weft__op_enter(cx, fn, &a, 1) || !known_matrix(cx, fn, a, &m, &n))
        return NULL;
    /* Element (i, i) is at i (n + 1) of the flattened matrix: a strided
     * slice of [..., m n], exact for any dtype. */
    const weft_spec *s = spec_of(a);
    int rank = s->rank - 1, unknown = 0;
    int64_t dims[WEFT_MAX_RANK];
    for (int d = 0; d < rank - 1; d++) {
        dims[d] = s->dims[d] >= 0 ? s->dims[d] : -1;
        unknown += s->dims[d] < 0;
    }
    if (unknown > 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: more than one batch dim is unknown while "
                              "tracing", fn);
    int64_t k = m < n ? m : n;
    dims[rank - 1] = m * n;
    weft_value *flat = weft_reshape(cx, a, rank, dims);
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK], step[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        end[d] = WEFT_END;
        step[d] = 1;
    }
    end[rank - 1] = k == 0 ? 0 : (k - 1) * (n + 1) + 1;
    step[rank - 1] = n + 1;
    return WEFT__KEEP(weft_slice(cx, flat, begin, end, step));
}

weft_value *weft_trace(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_trace";
    int64_t m, n;
    if (!weft__op_enter(cx, fn, &a, 1) || !known_matrix(cx, fn, a, &m, &n))
        return NULL;
    return WEFT__KEEP(weft_sum(cx, weft_matrix_diag_part(cx, a), -1));
}

/* a x b over the last dim (3 elements, known while tracing): the three
 * components from the split halves of each, joined again. */
weft_value *weft_cross(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_cross";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    for (int i = 0; i < 2; i++) {
        const weft_spec *sp = spec_of(in[i]);
        if (sp->rank == WEFT_RANK_ANY || sp->rank < 1 || sp->dims[sp->rank - 1] != 3) {
            char ss[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s does not have 3 elements in its "
                                  "last dim (known while tracing)", fn, i ? "b" : "a",
                                  weft__spec_str(sp, ss, sizeof ss));
        }
    }
    weft_value *x[3], *y[3];
    if (weft_split(cx, a, 3, NULL, -1, x) != 0 || weft_split(cx, b, 3, NULL, -1, y) != 0)
        return NULL;
    weft_value *c[3];
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, k = (i + 2) % 3;
        c[i] = weft__op_binary(cx, WEFT__OP_SUB, fn, weft__op_binary(cx, WEFT__OP_MUL, fn, x[j], y[k]),
                               weft__op_binary(cx, WEFT__OP_MUL, fn, x[k], y[j]));
        if (!c[i])
            return NULL;
    }
    return WEFT__KEEP(weft_concat(cx, c, 3, -1));
}

/* ---- Norms -------------------------------------------------------------- */

weft_value *weft_norm(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                      bool keepdims)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_norm";
    if (!weft__op_enter(cx, fn, &a, 1) || !need_float(cx, fn, a, "a"))
        return NULL;
    if (n_axes > 0 && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes for %zu axes", fn, n_axes);
    weft_value *sq = weft__op_unary(cx, WEFT__OP_SQUARE, fn, a);
    return WEFT__KEEP(weft__op_unary(cx, WEFT__OP_SQRT, fn,
                                     weft_reduce(cx, WEFT_R_SUM, sq, axes, n_axes, keepdims)));
}

int weft_normalize(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_normalize";
    int rc = weft__ctx_enter_int(cx, fn, &a, 1, outs, 2);
    if (rc != 0)
        return rc;
    if (!need_float(cx, fn, a, "a"))
        return weft_ctx_status(cx);
    /* TensorFlow's steps: the norm kept as 1s, then a / norm. */
    weft_value *norm = weft_norm(cx, a, axes, n_axes, true);
    weft_value *normalized = weft__op_binary(cx, WEFT__OP_DIV, fn, a, norm);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = normalized;
        outs[1] = norm;
    }
    return weft_ctx_status(cx);
}

weft_value *weft_clip_by_norm(weft_ctx *cx, weft_value *t, double clip_norm, const int *axes,
                              size_t n_axes)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_clip_by_norm";
    if (!weft__op_enter(cx, fn, &t, 1) || !need_float(cx, fn, t, "t"))
        return NULL;
    if (!(clip_norm > 0) || !isfinite(clip_norm))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: clip_norm %g is not finite and > 0", fn,
                              clip_norm);
    if (n_axes > 0 && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes for %zu axes", fn, n_axes);
    /* TensorFlow's order: t * clip_norm / max(l2norm, clip_norm). */
    weft_value *l2 = weft_norm(cx, t, axes, n_axes, true);
    weft_value *scaled = weft__op_binary(cx, WEFT__OP_MUL, fn, t, weft_const_f64(cx, clip_norm));
    weft_value *den = weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, l2, weft_const_f64(cx, clip_norm));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_DIV, fn, scaled, den));
}

/* sqrt of the sum of every tensor's squares, in f64 (ts checked). */
static weft_value *global_norm_of(weft_ctx *cx, const char *fn, weft_value *const *ts, size_t n)
{
    weft_value *total = weft_const_f64(cx, 0.0);
    for (size_t i = 0; i < n; i++) {
        weft_value *sq = weft__op_unary(cx, WEFT__OP_SQUARE, fn, weft_cast(cx, ts[i], WEFT_F64));
        total = weft__op_binary(cx, WEFT__OP_ADD, fn, total,
                                weft_reduce(cx, WEFT_R_SUM, sq, NULL, 0, false));
    }
    return weft__op_unary(cx, WEFT__OP_SQRT, fn, total);
}

/* Whether ts[0..n) are n >= 1 entered float tensors; else the context
 * fails naming fn. */
static bool float_list(weft_ctx *cx, const char *fn, weft_value *const *ts, size_t n)
{
    if (!ts || n == 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn, n == 0 ? "no tensors" : "ts is NULL");
        return false;
    }
    if (!weft__op_enter(cx, fn, ts, n))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!need_float(cx, fn, ts[i], "a tensor"))
            return false;
    return true;
}

weft_value *weft_global_norm(weft_ctx *cx, weft_value *const *ts, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_global_norm";
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return NULL;
    }
    if (!float_list(cx, fn, ts, n))
        return NULL;
    return WEFT__KEEP(global_norm_of(cx, fn, ts, n));
}

int weft_clip_by_global_norm(weft_ctx *cx, weft_value *const *ts, size_t n, double clip_norm,
                             weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n + 1);
    static const char fn[] = "weft_clip_by_global_norm";
    for (size_t i = 0; outs && i <= n; i++)
        outs[i] = NULL;
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return WEFT_EINVAL;
    }
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: outs is NULL", fn);
        return weft_ctx_status(cx);
    }
    if (!float_list(cx, fn, ts, n))
        return weft_ctx_status(cx);
    if (!(clip_norm > 0) || !isfinite(clip_norm)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: clip_norm %g is not finite and > 0", fn, clip_norm);
        return weft_ctx_status(cx);
    }
    /* The global norm in f64, then TensorFlow's t * clip_norm /
     * max(global_norm, clip_norm), the scale in each tensor's dtype. */
    weft_value *norm = global_norm_of(cx, fn, ts, n);
    weft_value *scale = weft__op_binary(
        cx, WEFT__OP_DIV, fn, weft_const_f64(cx, clip_norm),
        weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, norm, weft_const_f64(cx, clip_norm)));
    for (size_t i = 0; i < n; i++)
        outs[i] = weft__op_binary(cx, WEFT__OP_MUL, fn, ts[i],
                                  weft_cast(cx, scale, spec_of(ts[i])->dtype));
    if (weft_ctx_status(cx) != 0) {
        for (size_t i = 0; i < n; i++)
            outs[i] = NULL;
        return weft_ctx_status(cx);
    }
    outs[n] = norm;
    return 0;
}

/* ---- Elementwise -------------------------------------------------------- */

weft_value *weft_squared_difference(weft_ctx *cx, weft_value *x, weft_value *y)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_squared_difference";
    weft_value *in[2] = { x, y };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    return WEFT__KEEP(weft__op_unary(cx, WEFT__OP_SQUARE, fn,
                                     weft__op_binary(cx, WEFT__OP_SUB, fn, x, y)));
}

weft_value *weft_reciprocal(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_reciprocal";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_TRUEDIV, fn, weft_const_f64(cx, 1.0), x));
}

/* op(x, y), and 0 where `guard` (x for xlogy, xlog1py and xdivy, y for
 * multiply_no_nan) is 0, whatever the other operand is. */
static weft_value *zero_where_zero(weft_ctx *cx, const char *fn, weft_value *x, weft_value *y,
                                   bool guard_y, weft_value *(*op)(weft_ctx *, const char *,
                                                                   weft_value *, weft_value *))
{
    weft_value *in[2] = { x, y };
    if (!weft__op_enter(cx, fn, in, 2) || !need_float(cx, fn, x, "x") ||
        !need_float(cx, fn, y, "y"))
        return NULL;
    weft_value *zero =
        weft__op_binary(cx, WEFT__OP_EQ, fn, guard_y ? y : x, weft_const_f64(cx, 0.0));
    weft_value *p = op(cx, fn, x, y);
    return weft_where(cx, zero, weft_zeros_like(cx, p), p);
}

static weft_value *x_log_y(weft_ctx *cx, const char *fn, weft_value *x, weft_value *y)
{
    return weft__op_binary(cx, WEFT__OP_MUL, fn, x, weft__op_unary(cx, WEFT__OP_LOG, fn, y));
}

static weft_value *x_log1p_y(weft_ctx *cx, const char *fn, weft_value *x, weft_value *y)
{
    return weft__op_binary(cx, WEFT__OP_MUL, fn, x, weft__op_unary(cx, WEFT__OP_LOG1P, fn, y));
}

static weft_value *x_div_y(weft_ctx *cx, const char *fn, weft_value *x, weft_value *y)
{
    return weft__op_binary(cx, WEFT__OP_DIV, fn, x, y);
}

static weft_value *x_mul_y(weft_ctx *cx, const char *fn, weft_value *x, weft_value *y)
{
    return weft__op_binary(cx, WEFT__OP_MUL, fn, x, y);
}

weft_value *weft_xlogy(weft_ctx *cx, weft_value *x, weft_value *y)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(zero_where_zero(cx, "weft_xlogy", x, y, false, x_log_y));
}

weft_value *weft_xlog1py(weft_ctx *cx, weft_value *x, weft_value *y)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(zero_where_zero(cx, "weft_xlog1py", x, y, false, x_log1p_y));
}

weft_value *weft_xdivy(weft_ctx *cx, weft_value *x, weft_value *y)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(zero_where_zero(cx, "weft_xdivy", x, y, false, x_div_y));
}

weft_value *weft_divide_no_nan(weft_ctx *cx, weft_value *x, weft_value *y)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(zero_where_zero(cx, "weft_divide_no_nan", x, y, true, x_div_y));
}

weft_value *weft_reciprocal_no_nan(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_reciprocal_no_nan";
    if (!weft__op_enter(cx, fn, &x, 1) || !need_float(cx, fn, x, "x"))
        return NULL;
    return WEFT__KEEP(zero_where_zero(cx, fn, weft_const_f64(cx, 1.0), x, true, x_div_y));
}

weft_value *weft_multiply_no_nan(weft_ctx *cx, weft_value *x, weft_value *y)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(zero_where_zero(cx, "weft_multiply_no_nan", x, y, true, x_mul_y));
}
