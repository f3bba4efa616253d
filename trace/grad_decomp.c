/* The gradient rules of the decompositions (weft_gradients; the helpers
 * are trace/grad_rules.c's): TensorFlow's, written with the public ops on
 * the packed node's factors (trace/infer_linalg.c gives the layouts; the
 * adjoint g comes in the same layout, zeros where no factor was used).
 * - eigh (SelfAdjointEigV2's rule): v (diag(ge) + f o v^T gv) v^T with
 *   f_ij = 1 / (e_j - e_i) off the diagonal, then, as the kernels read
 *   only the lower triangle, that triangle of the sum with its transpose,
 *   the diagonal halved.  Eigenvalues alone: v diag(ge) v^T.
 * - qr (QrGrad): for m >= n, q (dr + tril r^-T) + (dq - q q^T dq) r^-T
 *   with tril the lower triangle of q^T dq - dq^T q + r dr^T - dr r^T;
 *   a wide matrix [x, y] = q [u, v] reduces to the square case.
 * - svd (SvdGrad): u (diag(gs) + (f o u^T gu + its transpose) s + s (f o
 *   v^T gv + its transpose)) v^T with f_ij = 1 / (s_j^2 - s_i^2), plus
 *   for a wide matrix u s^-1 (gv^T - gv^T v v^T); a tall one through its
 *   transpose.  Singular values alone: u diag(gs) v^T.
 * - lu (LuGrad), for p a = l u with l unit lower and u upper, the packed
 *   factors' adjoint split the same way (dl strictly lower, du upper):
 *   p a gets l^-T (tril_-1(l^T dl) + triu(du u^T)) u^-T, and a's rows are
 *   those of p a put back in place.
 * The reciprocals are TensorFlow's safe ones, x / (x^2 + 1e-20), so that
 * equal values give 0 rather than infinities (the gradient there is not
 * defined).  TensorFlow's limits stay: qr with full_matrices of a tall
 * matrix and svd with full_matrices of a matrix that is not square fail
 * the call, naming it. */
#include "trace/grad.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef weft__grad_rule rule_in;

#define unsupported weft__grad_unsupported
#define give weft__grad_give

/* p[..., r0:r1, c0:c1]. */
static weft_value *block(weft_ctx *cx, weft_value *p, int64_t r0, int64_t r1, int64_t c0,
                         int64_t c1)
{
    int rank = weft__grad_rank(p);
    p = weft__ops_axis_slice(cx, p, rank - 2, r0, r1);
    return p ? weft__ops_axis_slice(cx, p, rank - 1, c0, c1) : NULL;
}

/* Row r0 of p as a vector [..., c1 - c0]. */
static weft_value *row(weft_ctx *cx, weft_value *p, int64_t r0, int64_t c0, int64_t c1)
{
    return weft_squeeze(cx, block(cx, p, r0, r0 + 1, c0, c1), -2);
}

static weft_value *t_of(weft_ctx *cx, weft_value *x)
{
    return weft_matrix_transpose(cx, x);
}

static weft_value *safe_reciprocal(weft_ctx *cx, weft_value *x)
{
    return weft_div(cx, x, weft_add(cx, weft_mul(cx, x, x), weft_const_f64(cx, 1e-20)));
}

/* f_ij = safe 1 / (w_j - w_i), 0 on the diagonal. */
static weft_value *gap_reciprocals(weft_ctx *cx, weft_value *w)
{
    weft_value *gaps = weft_sub(cx, weft_expand_dims(cx, w, -2), weft_expand_dims(cx, w, -1));
    return weft_matrix_set_diag(cx, safe_reciprocal(cx, gaps), weft_zeros_like(cx, w));
}

/* The matrix dims of the input, known while tracing, into m and n; false
 * after failing the call otherwise. */
static bool matrix_dims(const rule_in *r, int64_t *m, int64_t *n)
{
    const weft_spec *as = weft__value_spec(r->a);
    *m = as->rank >= 2 ? as->dims[as->rank - 2] : WEFT_DIM_ANY;
    *n = as->rank >= 2 ? as->dims[as->rank - 1] : WEFT_DIM_ANY;
    if (*m >= 0 && *n >= 0)
        return true;
    unsupported(r, "of a matrix whose rows and columns are unknown while tracing");
    return false;
}

static int eigh_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t m, n;
    if (!matrix_dims(r, &m, &n))
        return weft_ctx_status(cx);
    weft_value *v, *ge, *gv = NULL, *e = NULL;
    if (r->n->attr.index.kind & WEFT__LINALG_VECTORS) {
        e = row(cx, r->y, 0, 0, n);
        v = block(cx, r->y, 1, n + 1, 0, n);
        ge = row(cx, r->g, 0, 0, n);
        gv = block(cx, r->g, 1, n + 1, 0, n);
    } else {
        weft_value *ev[2];
        if (weft_eigh(cx, r->a, ev) < 0)
            return weft_ctx_status(cx);
        v = ev[1];
        ge = r->g;
    }
    weft_value *inner = weft_matrix_diag(cx, ge);
    if (gv)
        inner = weft_add(cx, inner, weft_mul(cx, gap_reciprocals(cx, e),
                                             weft_matmul_ex(cx, v, gv, WEFT_TRANSPOSE_A)));
    weft_value *ga = weft_matmul(cx, v, weft_matmul_ex(cx, inner, v, WEFT_TRANSPOSE_B));
    ga = weft_band_part(cx, weft_add(cx, ga, t_of(cx, ga)), -1, 0);
    ga = weft_matrix_set_diag(cx, ga, weft_mul(cx, weft_matrix_diag_part(cx, ga),
                                               weft_const_f64(cx, 0.5)));
    return give(r, 0, ga);
}

/* x r^-T for the upper triangular r. */
static weft_value *times_r_inv_t(weft_ctx *cx, weft_value *x, weft_value *rr)
{
    return t_of(cx, weft_triangular_solve(cx, rr, t_of(cx, x), false, false));
}

/* QrGrad's case of q [m, n], r [n, n] (m >= n). */
static weft_value *qr_square_or_tall(weft_ctx *cx, weft_value *q, weft_value *rr, weft_value *dq,
                                     weft_value *dr)
{
    weft_value *qdq = weft_matmul_ex(cx, q, dq, WEFT_TRANSPOSE_A);
    weft_value *rdr = weft_matmul_ex(cx, rr, dr, WEFT_TRANSPOSE_B);
    weft_value *tril = weft_band_part(cx, weft_add(cx, weft_sub(cx, qdq, t_of(cx, qdq)),
                                                   weft_sub(cx, rdr, t_of(cx, rdr))), -1, 0);
    weft_value *ga = weft_matmul(cx, q, weft_add(cx, dr, times_r_inv_t(cx, tril, rr)));
    weft_value *gb = times_r_inv_t(cx, weft_sub(cx, dq, weft_matmul(cx, q, qdq)), rr);
    return weft_add(cx, ga, gb);
}

static int qr_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t m, n;
    if (!matrix_dims(r, &m, &n))
        return weft_ctx_status(cx);
    bool full = r->n->attr.index.kind & WEFT__LINALG_FULL;
    if (full && m > n)
        return unsupported(r, "with full_matrices of a matrix of more rows than columns (as in "
                              "TensorFlow)");
    int64_t c = m < n ? m : n;
    weft_value *q = block(cx, r->y, 0, m, 0, c), *rr = block(cx, r->y, 0, c, c, c + n);
    weft_value *dq = block(cx, r->g, 0, m, 0, c), *dr = block(cx, r->g, 0, c, c, c + n);
    if (m >= n)
        return give(r, 0, qr_square_or_tall(cx, q, rr, dq, dr));
    /* a = [x, y], r = [u, v]: x = q u is square; y = q v. */
    int rank = weft__grad_rank(r->a);
    weft_value *y = weft__ops_axis_slice(cx, r->a, rank - 1, m, n);
    weft_value *u = weft__ops_axis_slice(cx, rr, rank - 1, 0, m);
    weft_value *du = weft__ops_axis_slice(cx, dr, rank - 1, 0, m);
    weft_value *dv = weft__ops_axis_slice(cx, dr, rank - 1, m, n);
    weft_value *dq_x = weft_add(cx, dq, weft_matmul_ex(cx, y, dv, WEFT_TRANSPOSE_B));
    weft_value *parts[2] = { qr_square_or_tall(cx, q, u, dq_x, du), weft_matmul(cx, q, dv) };
    return give(r, 0, weft_concat(cx, parts, 2, -1));
}

/* SvdGrad for u [m, m], v [n, m], m <= n. */
static weft_value *svd_wide(weft_ctx *cx, weft_value *s, weft_value *u, weft_value *v,
                            weft_value *gs, weft_value *gu, weft_value *gv, bool square)
{
    weft_value *f = gap_reciprocals(cx, weft_mul(cx, s, s));
    weft_value *f_u = weft_mul(cx, f, weft_matmul_ex(cx, u, gu, WEFT_TRANSPOSE_A));
    weft_value *f_v = weft_mul(cx, f, weft_matmul_ex(cx, v, gv, WEFT_TRANSPOSE_A));
    weft_value *core = weft_add(cx, weft_matrix_diag(cx, gs),
                                weft_mul(cx, weft_add(cx, f_u, t_of(cx, f_u)),
                                         weft_expand_dims(cx, s, -2)));
    core = weft_add(cx, core, weft_mul(cx, weft_expand_dims(cx, s, -1),
                                       weft_add(cx, f_v, t_of(cx, f_v))));
    weft_value *ga = weft_matmul(cx, u, weft_matmul_ex(cx, core, v, WEFT_TRANSPOSE_B));
    if (square)
        return ga;
    weft_value *gvt = t_of(cx, gv);
    weft_value *rest = weft_sub(cx, gvt, weft_matmul_ex(cx, weft_matmul(cx, gvt, v), v,
                                                        WEFT_TRANSPOSE_B));
    weft_value *u_s_inv = weft_mul(cx, u, weft_expand_dims(cx, safe_reciprocal(cx, s), -2));
    return weft_add(cx, ga, weft_matmul(cx, u_s_inv, rest));
}

static int svd_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t m, n;
    if (!matrix_dims(r, &m, &n))
        return weft_ctx_status(cx);
    unsigned flags = (unsigned)r->n->attr.index.kind;
    if (!(flags & WEFT__LINALG_VECTORS)) {
        weft_value *suv[3];
        if (weft_svd(cx, r->a, false, true, suv) < 0)
            return weft_ctx_status(cx);
        weft_value *scaled = weft_mul(cx, suv[1], weft_expand_dims(cx, r->g, -2));
        return give(r, 0, weft_matmul_ex(cx, scaled, suv[2], WEFT_TRANSPOSE_B));
    }
    if ((flags & WEFT__LINALG_FULL) && m != n)
        return unsupported(r, "with full_matrices of a matrix that is not square (as in "
                              "TensorFlow, for more than one row or column of difference)");
    int64_t p = m < n ? m : n;
    weft_value *s = row(cx, r->y, 0, 0, p), *gs = row(cx, r->g, 0, 0, p);
    weft_value *u = block(cx, r->y, 1, 1 + m, 0, p), *gu = block(cx, r->g, 1, 1 + m, 0, p);
    weft_value *v = block(cx, r->y, 1 + m, 1 + m + n, 0, p);
    weft_value *gv = block(cx, r->g, 1 + m, 1 + m + n, 0, p);
    if (m > n)   /* a^T = v s u^T: its gradient, transposed */
        return give(r, 0, t_of(cx, svd_wide(cx, s, v, u, gs, gv, gu, false)));
    return give(r, 0, svd_wide(cx, s, u, v, gs, gu, gv, m == n));
}

/* x's lower triangle without its diagonal. */
static weft_value *strictly_lower(weft_ctx *cx, weft_value *x)
{
    weft_value *lower = weft_band_part(cx, x, -1, 0);
    return weft_matrix_set_diag(cx, lower, weft_zeros_like(cx, weft_matrix_diag_part(cx, x)));
}

static int lu_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t m, n;
    if (!matrix_dims(r, &m, &n))
        return weft_ctx_status(cx);
    weft_value *lu = block(cx, r->y, 0, n, 0, n), *dlu = block(cx, r->g, 0, n, 0, n);
    weft_value *perm = weft_cast(cx, row(cx, r->y, n, 0, n), WEFT_I32);
    weft_value *ones = weft_ones_like(cx, weft_matrix_diag_part(cx, lu));
    weft_value *l = weft_matrix_set_diag(cx, weft_band_part(cx, lu, -1, 0), ones);
    weft_value *u = weft_band_part(cx, lu, 0, -1);
    /* l^T is upper and u^T lower, so those triangles of l^T dlu and
     * dlu u^T read only dl and du: dlu needs no split. */
    weft_value *phi_l = strictly_lower(cx, weft_matmul_ex(cx, l, dlu, WEFT_TRANSPOSE_A));
    weft_value *phi_u = weft_band_part(cx, weft_matmul_ex(cx, dlu, u, WEFT_TRANSPOSE_B), 0, -1);
    weft_value *x = weft_triangular_solve(cx, l, weft_add(cx, phi_l, phi_u), true, true);
    weft_value *g_pa = times_r_inv_t(cx, x, u);
    /* Row i of p a is row perm[i] of a: the inverse permutation puts
     * them back. */
    int rank = weft__grad_rank(r->a);
    weft_value *back = weft_argsort(cx, perm, -1, false);
    return give(r, 0, weft_gather_ex(cx, g_pa, back, rank - 2, rank - 2));
}

int weft__grad_decomp(const rule_in *r)
{
    switch (r->n->op) {
    case WEFT__OP_EIGH: return eigh_rule(r);
    case WEFT__OP_QR:   return qr_rule(r);
    case WEFT__OP_SVD:  return svd_rule(r);
    case WEFT__OP_LU:   return lu_rule(r);
    default:            return unsupported(r, NULL);
    }
}
