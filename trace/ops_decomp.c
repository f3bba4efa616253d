/* The decompositions of include/weft/ops.h and what is built on them.
 * qr, eigh (and eigvalsh), eig (and eigvals), svd, lu and slogdet are each one node (inferred by
 * trace/infer_linalg.c, computed by trace/kernel_decomp.c and
 * trace/kernel_linalg.c) whose factors come packed into one tensor; the
 * ops here slice them apart, so a traced function decomposes each matrix
 * once however many factors it uses.  logdet, lu_solve, pinv, matrix_rank
 * and lstsq are compositions, as TensorFlow writes them. */
#include <float.h>
#include <math.h>

#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* a's rank, or -1 (the context failed) when it is not known while
 * tracing; with dims, the matrix dims must be known too. */
static int known_rank(weft_ctx *cx, const char *fn, weft_value *a, bool dims)
{
    const weft_spec *s = weft__value_spec(a);
    char sa[WEFT__SPEC_STR_MAX];
    weft__spec_str(s, sa, sizeof sa);
    if (s->rank != WEFT_RANK_ANY && s->rank < 2) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not a matrix (or a batch of them)", fn, sa);
        return -1;
    }
    if (s->rank == WEFT_RANK_ANY ||
        (dims && (s->dims[s->rank - 2] == WEFT_DIM_ANY || s->dims[s->rank - 1] == WEFT_DIM_ANY))) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: the %s of %s must be known while tracing", fn,
                       dims ? "rows and columns" : "rank", sa);
        return -1;
    }
    return s->rank;
}

/* Clears outs[0..n) and checks the op's arguments (the int ops' common
 * entry); false when the context failed. */
static bool enter_outs(weft_ctx *cx, const char *fn, weft_value *a, weft_value **outs, size_t n)
{
    return weft__ctx_enter_int(cx, fn, &a, 1, outs, n) == 0;
}

static int ctx_code(weft_ctx *cx)
{
    return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
}

/* The node op (flags in attr.index.kind) of a. */
static weft_value *packed(weft_ctx *cx, weft__op op, unsigned flags, weft_value *a)
{
    weft__node n = { .op = op, .attr.index.kind = (int)flags };
    return weft__ops_finish(cx, &n, &a, 1);
}

/* p[..., r0:r1, c0:c1] of a packed result of rank rank. */
static weft_value *block(weft_ctx *cx, weft_value *p, int rank, int64_t r0, int64_t r1,
                         int64_t c0, int64_t c1)
{
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        end[d] = WEFT_END;
    begin[rank - 2] = r0;
    end[rank - 2] = r1;
    begin[rank - 1] = c0;
    end[rank - 1] = c1;
    return p ? weft_slice(cx, p, begin, end, NULL) : NULL;
}

/* Row r of a packed result as a vector [..., c1 - c0]. */
static weft_value *row_of(weft_ctx *cx, weft_value *p, int rank, int64_t r, int64_t c0,
                          int64_t c1)
{
    weft_value *b = block(cx, p, rank, r, r + 1, c0, c1);
    return b ? weft_squeeze(cx, b, -2) : NULL;
}

int weft_qr(weft_ctx *cx, weft_value *a, bool full_matrices, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    const char *fn = "weft_qr";
    if (!enter_outs(cx, fn, a, outs, 2))
        return ctx_code(cx);
    int rank = known_rank(cx, fn, a, true);
    if (rank < 0)
        return ctx_code(cx);
    const weft_spec *s = weft__value_spec(a);
    int64_t m = s->dims[rank - 2], n = s->dims[rank - 1], c = full_matrices || m < n ? m : n;
    weft_value *p = packed(cx, WEFT__OP_QR, full_matrices ? WEFT__LINALG_FULL : 0, a);
    weft_value *q = block(cx, p, rank, 0, m, 0, c);
    weft_value *r = q ? block(cx, p, rank, 0, c, c, c + n) : NULL;
    if (!r)
        return ctx_code(cx);
    outs[0] = q;
    outs[1] = r;
    return 0;
}

int weft_eigh(weft_ctx *cx, weft_value *a, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    const char *fn = "weft_eigh";
    if (!enter_outs(cx, fn, a, outs, 2))
        return ctx_code(cx);
    int rank = known_rank(cx, fn, a, false);
    if (rank < 0)
        return ctx_code(cx);
    weft_value *p = packed(cx, WEFT__OP_EIGH, WEFT__LINALG_VECTORS, a);
    weft_value *e = row_of(cx, p, rank, 0, 0, WEFT_END);
    weft_value *v = e ? block(cx, p, rank, 1, WEFT_END, 0, WEFT_END) : NULL;
    if (!v)
        return ctx_code(cx);
    outs[0] = e;
    outs[1] = v;
    return 0;
}

weft_value *weft_eigvalsh(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_eigvalsh", &a, 1))
        return NULL;
    return WEFT__KEEP(packed(cx, WEFT__OP_EIGH, 0, a));
}

/* weft_eig and weft_eigvals need LAPACK's dgeev: false (the context
 * failed) in a build without it, or where its library did not load. */
static bool have_lapack(weft_ctx *cx, const char *fn)
{
    if (weft__blas_available())
        return true;
    if (!*weft__blas_library())
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: this weft was built without OpenBLAS, whose "
                       "LAPACK it needs", fn);
    else
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: OpenBLAS, whose LAPACK it needs, did not load "
                       "(%s)", fn, weft__blas_library());
    return false;
}

int weft_eig(weft_ctx *cx, weft_value *a, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    const char *fn = "weft_eig";
    if (!enter_outs(cx, fn, a, outs, 2) || !have_lapack(cx, fn))
        return ctx_code(cx);
    int rank = known_rank(cx, fn, a, false);
    if (rank < 0)
        return ctx_code(cx);
    /* [..., n + 1, n, 2]: the eigenvalues in row 0, then the vectors'
     * rows; the rows are dim rank - 2. */
    weft_value *p = packed(cx, WEFT__OP_EIG, WEFT__LINALG_VECTORS, a);
    if (!p)   /* among the reasons, no room for rank + 1 dims */
        return ctx_code(cx);
    weft_value *e = weft_squeeze(cx, weft__ops_axis_slice(cx, p, rank - 2, 0, 1), rank - 2);
    weft_value *v = e ? weft__ops_axis_slice(cx, p, rank - 2, 1, WEFT_END) : NULL;
    if (!v)
        return ctx_code(cx);
    outs[0] = e;
    outs[1] = v;
    return 0;
}

weft_value *weft_eigvals(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_eigvals", &a, 1) || !have_lapack(cx, "weft_eigvals"))
        return NULL;
    return WEFT__KEEP(packed(cx, WEFT__OP_EIG, 0, a));
}

int weft_svd(weft_ctx *cx, weft_value *a, bool full_matrices, bool compute_uv,
             weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, compute_uv ? 3 : 1);
    const char *fn = "weft_svd";
    if (!enter_outs(cx, fn, a, outs, compute_uv ? 3 : 1))
        return ctx_code(cx);
    if (!compute_uv) {
        outs[0] = packed(cx, WEFT__OP_SVD, 0, a);
        return outs[0] ? 0 : ctx_code(cx);
    }
    int rank = known_rank(cx, fn, a, true);
    if (rank < 0)
        return ctx_code(cx);
    const weft_spec *sp = weft__value_spec(a);
    int64_t m = sp->dims[rank - 2], n = sp->dims[rank - 1], k = m < n ? m : n;
    unsigned flags = WEFT__LINALG_VECTORS | (full_matrices ? WEFT__LINALG_FULL : 0);
    weft_value *p = packed(cx, WEFT__OP_SVD, flags, a);
    weft_value *s = row_of(cx, p, rank, 0, 0, k);
    weft_value *u = s ? block(cx, p, rank, 1, 1 + m, 0, full_matrices ? m : k) : NULL;
    weft_value *v = u ? block(cx, p, rank, 1 + m, 1 + m + n, 0, full_matrices ? n : k) : NULL;
    if (!v)
        return ctx_code(cx);
    outs[0] = s;
    outs[1] = u;
    outs[2] = v;
    return 0;
}

int weft_slogdet(weft_ctx *cx, weft_value *a, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    const char *fn = "weft_slogdet";
    if (!enter_outs(cx, fn, a, outs, 2))
        return ctx_code(cx);
    int rank = known_rank(cx, fn, a, false);
    if (rank < 0)
        return ctx_code(cx);
    /* [..., 2] seen as [..., 1, 2]: the sign, then log |det|. */
    weft_value *p = packed(cx, WEFT__OP_SLOGDET, 0, a);
    weft_value *row = p ? weft_expand_dims(cx, p, -2) : NULL;
    weft_value *sign = row_of(cx, row, rank, 0, 0, 1);
    weft_value *logabs = sign ? row_of(cx, row, rank, 0, 1, 2) : NULL;
    sign = logabs ? weft_squeeze(cx, sign, -1) : NULL;
    logabs = sign ? weft_squeeze(cx, logabs, -1) : NULL;
    if (!logabs)
        return ctx_code(cx);
    outs[0] = sign;
    outs[1] = logabs;
    return 0;
}

int weft_lu(weft_ctx *cx, weft_value *a, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    const char *fn = "weft_lu";
    if (!enter_outs(cx, fn, a, outs, 2))
        return ctx_code(cx);
    int rank = known_rank(cx, fn, a, false);
    if (rank < 0)
        return ctx_code(cx);
    weft_value *p = packed(cx, WEFT__OP_LU, 0, a);
    weft_value *lu = block(cx, p, rank, 0, -1, 0, WEFT_END);
    weft_value *last = lu ? block(cx, p, rank, -1, WEFT_END, 0, WEFT_END) : NULL;
    weft_value *perm = last ? weft_squeeze(cx, last, -2) : NULL;
    perm = perm ? weft_cast(cx, perm, WEFT_I32) : NULL;
    if (!perm)
        return ctx_code(cx);
    outs[0] = lu;
    outs[1] = perm;
    return 0;
}

weft_value *weft_lu_solve(weft_ctx *cx, weft_value *lower_upper, weft_value *perm,
                          weft_value *rhs)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_lu_solve";
    weft_value *in[3] = { lower_upper, perm, rhs };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    int rank = known_rank(cx, fn, lower_upper, true);
    if (rank < 0)
        return NULL;
    const weft_spec *ls = weft__value_spec(lower_upper), *ps = weft__value_spec(perm);
    const weft_spec *bs = weft__value_spec(rhs);
    char sl[WEFT__SPEC_STR_MAX], sp[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    if ((ps->dtype != WEFT_I32 && ps->dtype != WEFT_I64) || ps->rank != rank - 1 ||
        bs->rank != rank)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: perm %s and rhs %s do not go with the "
                              "factors %s (i32 or i64 [..., n] and [..., n, k])", fn,
                              weft__spec_str(ps, sp, sizeof sp), weft__spec_str(bs, sb, sizeof sb),
                              weft__spec_str(ls, sl, sizeof sl));
    /* p a = l u: x = u^-1 l^-1 (rhs's rows in p's order); l is the unit
     * lower triangle (the diagonal set to 1; triangular_solve reads only
     * the lower part), u the upper one with the diagonal. */
    int64_t n = ls->dims[rank - 1];
    weft_value *pb = weft_gather_ex(cx, rhs, perm, rank - 2, rank - 2);
    weft_value *eye = weft_eye(cx, n, n, ls->dtype);
    weft_value *off = weft_sub(cx, weft_const_f64(cx, 1.0), eye);
    weft_value *l = weft_add(cx, weft_mul(cx, lower_upper, off), eye);
    weft_value *y = weft_triangular_solve(cx, l, pb, true, false);
    return WEFT__KEEP(weft_triangular_solve(cx, lower_upper, y, false, false));
}

/* Whether perm is i32 or i64 [..., n] for factors of the given rank. */
static bool perm_ok(weft_ctx *cx, const char *fn, weft_value *lower_upper, weft_value *perm,
                    int rank)
{
    const weft_spec *ls = weft__value_spec(lower_upper), *ps = weft__value_spec(perm);
    if ((ps->dtype == WEFT_I32 || ps->dtype == WEFT_I64) && ps->rank == rank - 1)
        return true;
    char sl[WEFT__SPEC_STR_MAX], sp[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: perm %s does not go with the factors %s (i32 or i64 "
                   "[..., n])", fn, weft__spec_str(ps, sp, sizeof sp),
                   weft__spec_str(ls, sl, sizeof sl));
    return false;
}

weft_value *weft_lu_matrix_inverse(weft_ctx *cx, weft_value *lower_upper, weft_value *perm)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { lower_upper, perm };
    if (!weft__op_enter(cx, "weft_lu_matrix_inverse", in, 2))
        return NULL;
    int rank = known_rank(cx, "weft_lu_matrix_inverse", lower_upper, true);
    if (rank < 0 || !perm_ok(cx, "weft_lu_matrix_inverse", lower_upper, perm, rank))
        return NULL;
    /* lu_solve of the identity, one per matrix of the batch. */
    const weft_spec *ls = weft__value_spec(lower_upper);
    int64_t n = ls->dims[rank - 1];
    weft_value *eye = weft_add(cx, weft_zeros_like(cx, lower_upper), weft_eye(cx, n, n, ls->dtype));
    return WEFT__KEEP(weft_lu_solve(cx, lower_upper, perm, eye));
}

weft_value *weft_lu_reconstruct(weft_ctx *cx, weft_value *lower_upper, weft_value *perm)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_lu_reconstruct";
    weft_value *in[2] = { lower_upper, perm };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    int rank = known_rank(cx, fn, lower_upper, true);
    if (rank < 0 || !perm_ok(cx, fn, lower_upper, perm, rank))
        return NULL;
    const weft_spec *ls = weft__value_spec(lower_upper);
    /* l u holds a's rows in perm's order (row i is row perm[i] of a), so
     * a's row r is row inverse(perm)[r] of l u. */
    int64_t n = ls->dims[rank - 1];
    weft_value *eye = weft_eye(cx, n, n, ls->dtype);
    weft_value *l = weft_add(cx, weft_band_part(cx, lower_upper, -1, 0),
                             weft_sub(cx, eye, weft_mul(cx, lower_upper, eye)));
    weft_value *lu = weft_matmul(cx, l, weft_band_part(cx, lower_upper, 0, -1));
    weft_value *inverse = weft_argsort(cx, perm, -1, false);
    return WEFT__KEEP(weft_gather_ex(cx, lu, inverse, rank - 2, rank - 2));
}

weft_value *weft_logdet(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_logdet", &a, 1))
        return NULL;
    /* log det = 2 sum(log(diag(cholesky(a)))). */
    weft_value *diag = weft_matrix_diag_part(cx, weft_cholesky(cx, a));
    return WEFT__KEEP(weft_mul(cx, weft_const_f64(cx, 2.0), weft_sum(cx, weft_log(cx, diag), -1)));
}

/* factor max(m, n) eps of a's dtype: TensorFlow's relative cutoffs of
 * small singular values (matrix_rank's factor 1, pinv's default rcond
 * 10). */
static double dims_eps(const weft_spec *s, double factor)
{
    int64_t m = s->dims[s->rank - 2], n = s->dims[s->rank - 1];
    return factor * (double)(m > n ? m : n) * (s->dtype == WEFT_F32 ? FLT_EPSILON : DBL_EPSILON);
}

/* pinv(a) = v diag(1 / s) u^T, singular values at or below rcond times
 * the largest taken as 0. */
static weft_value *pinv_of(weft_ctx *cx, const char *fn, weft_value *a, double rcond)
{
    if (!isfinite(rcond))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: rcond %g is not finite", fn, rcond);
    if (known_rank(cx, fn, a, true) < 0)
        return NULL;
    if (rcond < 0)
        rcond = dims_eps(weft__value_spec(a), 10.0);
    weft_value *usv[3];
    if (weft_svd(cx, a, false, true, usv) != 0)
        return NULL;
    int last = -1;
    weft_value *cutoff = weft_mul(cx, weft_const_f64(cx, rcond),
                                  weft_reduce(cx, WEFT_R_MAX, usv[0], &last, 1, true));
    weft_value *inv = weft_where(cx, weft_gt(cx, usv[0], cutoff),
                                 weft_truediv(cx, weft_const_f64(cx, 1.0), usv[0]),
                                 weft_const_f64(cx, 0.0));
    weft_value *scaled = weft_mul(cx, usv[2], weft_expand_dims(cx, inv, -2));
    return weft_matmul_ex(cx, scaled, usv[1], WEFT_TRANSPOSE_B);
}

weft_value *weft_pinv(weft_ctx *cx, weft_value *a, double rcond)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_pinv", &a, 1))
        return NULL;
    return WEFT__KEEP(pinv_of(cx, "weft_pinv", a, rcond));
}

/* The singular values above tol (< 0: TensorFlow's default, the largest
 * times max(m, n) eps), counted as i32 as TensorFlow's. */
weft_value *weft_matrix_rank(weft_ctx *cx, weft_value *a, double tol)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matrix_rank";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (!isfinite(tol))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: tol %g is not finite", fn, tol);
    if (known_rank(cx, fn, a, true) < 0)
        return NULL;
    weft_value *s;
    if (weft_svd(cx, a, false, false, &s) != 0)
        return NULL;
    weft_value *cutoff = weft_const_f64(cx, tol);
    if (tol < 0) {
        int last = -1;
        cutoff = weft_mul(cx, weft_const_f64(cx, dims_eps(weft__value_spec(a), 1.0)),
                          weft_reduce(cx, WEFT_R_MAX, s, &last, 1, true));
    }
    return WEFT__KEEP(weft_sum(cx, weft_cast(cx, weft_gt(cx, s, cutoff), WEFT_I32), -1));
}

weft_value *weft_lstsq(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                       double l2_regularizer, bool fast)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_lstsq";
    weft_value *in[2] = { matrix, rhs };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (!(l2_regularizer >= 0) || !isfinite(l2_regularizer))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: l2_regularizer %g is negative or not "
                              "finite", fn, l2_regularizer);
    if (!fast && l2_regularizer != 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: l2_regularizer %g needs fast (the "
                              "minimum-norm path has no regularizer, as in TensorFlow)", fn,
                              l2_regularizer);
    /* The minimum-norm path slices an svd, whose dims it needs; the
     * normal equations need the columns only. */
    int rank = known_rank(cx, fn, matrix, !fast);
    if (rank < 0)
        return NULL;
    const weft_spec *as = weft__value_spec(matrix), *bs = weft__value_spec(rhs);
    if (as->dims[rank - 1] == WEFT_DIM_ANY) {
        char sm[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the columns of %s must be known while "
                              "tracing", fn, weft__spec_str(as, sm, sizeof sm));
    }
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    if ((as->dtype != WEFT_F32 && as->dtype != WEFT_F64) || bs->dtype != as->dtype ||
        bs->rank != rank || (bs->dims[rank - 2] != as->dims[rank - 2] &&
                             bs->dims[rank - 2] != WEFT_DIM_ANY))
        return weft__ctx_fail(cx, bs->dtype != as->dtype || (as->dtype != WEFT_F32 &&
                                                             as->dtype != WEFT_F64)
                                      ? WEFT_EDTYPE : WEFT_ESHAPE,
                              "%s: the matrix %s and the right-hand sides %s are not f32 or "
                              "f64 matrices of one dtype, rank and row count", fn,
                              weft__spec_str(as, sa, sizeof sa), weft__spec_str(bs, sb, sizeof sb));
    if (!fast)
        return WEFT__KEEP(weft_matmul(cx, pinv_of(cx, fn, matrix, -1), rhs));
    /* The normal equations through Cholesky: (a^T a + l2 I)^-1 a^T b for
     * a tall a, a^T (a a^T + l2 I)^-1 b for a wide one; rows unknown
     * while tracing (a count of samples, typically) take the tall form. */
    int64_t m = as->dims[rank - 2], n = as->dims[rank - 1];
    bool tall = m == WEFT_DIM_ANY || m >= n;
    weft_value *gram = weft_matmul_ex(cx, matrix, matrix,
                                      tall ? WEFT_TRANSPOSE_A : WEFT_TRANSPOSE_B);
    if (l2_regularizer > 0) {
        int64_t k = tall ? n : m;
        gram = weft_add(cx, gram, weft_mul(cx, weft_eye(cx, k, k, as->dtype),
                                           weft_const_f64(cx, l2_regularizer)));
    }
    weft_value *chol = weft_cholesky(cx, gram);
    if (tall)
        return WEFT__KEEP(weft_cholesky_solve(cx, chol,
                                              weft_matmul_ex(cx, matrix, rhs, WEFT_TRANSPOSE_A)));
    return WEFT__KEEP(weft_matmul_ex(cx, matrix, weft_cholesky_solve(cx, chol, rhs),
                                     WEFT_TRANSPOSE_A));
}
