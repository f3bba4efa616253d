/* The gradient rules of the linear-algebra nodes (weft_gradients; the
 * helpers are trace/grad_rules.c's): TensorFlow's, written with the
 * public ops.  With y = inv(a): ga = -y^T g y^T.  With x = a \ b: gb =
 * a^T \ g and ga = -gb x^T (the transposes swapped for an adjoint solve;
 * a triangular solve keeps ga on its triangle, a banded one its bands).
 * det: g det inv(a)^T; log |det|: g inv(a)^T.
 * cholesky: TensorFlow's CholeskyGrad (Murray 2016), symmetrized. */
#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k
#define unsupported weft__grad_unsupported
#define give weft__grad_give
#define wants weft__grad_wants

static weft_value *neg_product(weft_ctx *cx, weft_value *p, weft_value *q, unsigned flags)
{
    return weft_neg(cx, weft_matmul_ex(cx, p, q, flags));
}

static int inverse_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    weft_value *ty = weft_matmul_ex(cx, r->y, r->g, WEFT_TRANSPOSE_A);
    return give(r, 0, neg_product(cx, ty, r->y, WEFT_TRANSPOSE_B));
}

/* v [..., m, k] shifted by d along its rows (up: row i + d to row i),
 * zero rows coming in (all zeros for d >= m). */
static weft_value *shift_rows(weft_ctx *cx, weft_value *v, int64_t d, bool up)
{
    if (d == 0)
        return v;
    int rank = weft__grad_rank(v);
    int64_t pads[WEFT_MAX_RANK][2] = { { 0 } };
    pads[rank - 2][up ? 1 : 0] = d;
    weft_value *padded = weft_pad(cx, v, (const int64_t(*)[2])pads, 0.0);
    return up ? weft__ops_axis_slice(cx, padded, rank - 2, d, WEFT_END)
              : weft__ops_axis_slice(cx, padded, rank - 2, 0, -d);
}

/* A banded solve's a gradient, -p q^T (p = gb and q = x, swapped for an
 * adjoint solve), read at the band entries: band k's row i is a[i][i - k]
 * (lower) or a[i][i + K - 1 - k] (upper), so each band is the row sums of
 * p times q shifted by the band's distance from the diagonal, zeros where
 * the band is padding.  NULL when the band count is unknown while
 * tracing (the context failed). */
static weft_value *band_gradient(const rule_in *r, weft_value *gb)
{
    weft_ctx *cx = r->cx;
    int rank = weft__grad_rank(r->a);
    int64_t kb = rank >= 2 ? weft__value_spec(r->a)->dims[rank - 2] : WEFT_DIM_ANY;
    if (kb == WEFT_DIM_ANY) {
        unsupported(r, "of bands whose count is unknown while tracing");
        return NULL;
    }
    unsigned flags = (unsigned)r->n->attr.index.kind;
    bool lower = flags & WEFT__LINALG_LOWER, adjoint = flags & WEFT__LINALG_ADJOINT;
    weft_value *p = adjoint ? r->y : gb, *q = adjoint ? gb : r->y;
    weft_value **rows = weft__malloc(sizeof *rows * (size_t)kb);
    if (!rows)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "weft_gradients: out of memory");
    for (int64_t band = 0; band < kb; band++) {
        int64_t d = lower ? band : kb - 1 - band;
        weft_value *shifted = shift_rows(cx, q, d, !lower);
        rows[band] = weft_neg(cx, weft_sum(cx, weft_mul(cx, p, shifted), -1));
    }
    weft_value *ga = weft_stack(cx, rows, (size_t)kb, -2);
    weft__free(rows);
    return ga;
}

static int solve_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    unsigned flags = (unsigned)r->n->attr.index.kind;
    bool adjoint = flags & WEFT__LINALG_ADJOINT;
    bool triangular = r->n->op == WEFT__OP_TRIANGULAR_SOLVE;
    /* gb solves the other system: the same node with adjoint flipped. */
    weft__node other = { .op = r->n->op, .attr.index.kind = (int)(flags ^ WEFT__LINALG_ADJOINT) };
    weft_value *in[2] = { r->a, r->g };
    weft_value *gb = weft__ops_finish(cx, &other, in, 2);
    int rc = give(r, 1, gb);
    if (rc < 0 || !wants(r, 0))
        return rc;
    if (r->n->op == WEFT__OP_BANDED_SOLVE) {
        weft_value *ga = band_gradient(r, gb);
        return ga ? give(r, 0, ga) : weft_ctx_status(cx);
    }
    weft_value *ga = adjoint ? neg_product(cx, r->y, gb, WEFT_TRANSPOSE_B)
                             : neg_product(cx, gb, r->y, WEFT_TRANSPOSE_B);
    if (triangular && ga)
        ga = (flags & WEFT__LINALG_LOWER) ? weft_band_part(cx, ga, -1, 0)
                                          : weft_band_part(cx, ga, 0, -1);
    return give(r, 0, ga);
}

/* a's adjoint scale inv(a)^T, scale one number per matrix (det's and
 * log |det|'s rules). */
static int times_inverse_t(const rule_in *r, weft_value *scale)
{
    weft_ctx *cx = r->cx;
    scale = weft_expand_dims(cx, weft_expand_dims(cx, scale, -1), -1);
    weft_value *inv_t = weft_matrix_transpose(cx, weft_matrix_inverse(cx, r->a));
    return give(r, 0, weft_mul(cx, scale, inv_t));
}

static int determinant_rule(const rule_in *r)
{
    return times_inverse_t(r, weft_mul(r->cx, r->g, r->y));
}

/* slogdet's node packs [..., 2] (the sign, log |det|): the sign passes
 * nothing back, log |det| passes g inv(a)^T. */
static int slogdet_rule(const rule_in *r)
{
    return times_inverse_t(r, weft_gather(r->cx, r->g, weft_const_i64(r->cx, 1), -1));
}

/* phi(l^T g) between l^-T and l^-1, where phi keeps the lower triangle
 * and halves the diagonal; then the symmetric part. */
static int cholesky_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *ls = weft__value_spec(r->y);
    int64_t n = ls->rank >= 2 ? ls->dims[ls->rank - 1] : WEFT_DIM_ANY;
    if (n == WEFT_DIM_ANY)
        return unsupported(r, "of a matrix whose size is unknown while tracing");
    weft_value *eye = weft_eye(cx, n, n, ls->dtype);
    weft_value *l_inv = weft_triangular_solve(cx, r->y, eye, true, false);
    weft_value *middle = weft_matmul_ex(cx, r->y, r->g, WEFT_TRANSPOSE_A);
    middle = weft_matrix_set_diag(cx, middle,
                                  weft_mul(cx, k(r, 0.5), weft_matrix_diag_part(cx, middle)));
    middle = weft_band_part(cx, middle, -1, 0);
    weft_value *ga = weft_matmul(cx, weft_matmul_ex(cx, l_inv, middle, WEFT_TRANSPOSE_A), l_inv);
    ga = weft_add(cx, ga, weft_matrix_transpose(cx, ga));
    return give(r, 0, weft_mul(cx, ga, k(r, 0.5)));
}

/* expm (TensorFlow's rule) and logm: the upper right block of
 * f([[a^T, g], [0, a^T]]), the derivative's adjoint applied to g (a
 * primary matrix function with real coefficients, f(a)'s Frechet
 * derivative's adjoint is f(a^T)'s). */
static int block_rule(const rule_in *r, weft_value *(*f)(weft_ctx *, weft_value *))
{
    weft_ctx *cx = r->cx;
    const weft_spec *as = weft__value_spec(r->a);
    int64_t n = as->rank >= 2 ? as->dims[as->rank - 1] : WEFT_DIM_ANY;
    if (n == WEFT_DIM_ANY)
        return unsupported(r, "of a matrix whose size is unknown while tracing");
    weft_value *at = weft_matrix_transpose(cx, r->a);
    weft_value *top[2] = { at, r->g }, *bottom[2] = { weft_zeros_like(cx, at), at };
    weft_value *rows[2] = { weft_concat(cx, top, 2, -1), weft_concat(cx, bottom, 2, -1) };
    weft_value *big = f(cx, weft_concat(cx, rows, 2, -2));
    int rank = as->rank;
    return give(r, 0, weft__ops_axis_slice(cx, weft__ops_axis_slice(cx, big, rank - 2, 0, n),
                                           rank - 1, n, 2 * n));
}

/* The Kronecker product of p and q [..., n, n]: [..., n n, n n], element
 * [i n + k, j n + l] = p[i, j] q[k, l]. */
static weft_value *kron(weft_ctx *cx, weft_value *p, weft_value *q, int rank,
                        const int64_t *dims)
{
    weft_value *pp = weft_expand_dims(cx, weft_expand_dims(cx, p, -1), -3);
    weft_value *qq = weft_expand_dims(cx, weft_expand_dims(cx, q, -2), -4);
    return weft_reshape(cx, weft_mul(cx, pp, qq), rank, dims);
}

/* sqrtm: s = sqrtm(a) moves by ds with s ds + ds s = da, so a's adjoint
 * is the x of the transposed Sylvester equation s^T x + x s^T = g, solved
 * as one system of n^2 unknowns (TensorFlow's way, for the small
 * matrices it suits): (s^T (x) I + I (x) s) rows(x) = rows(g). */
static int sqrtm_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *as = weft__value_spec(r->a);
    int rank = as->rank, unknown = 0;
    int64_t n = rank >= 2 ? as->dims[rank - 1] : WEFT_DIM_ANY;
    for (int d = 0; d < rank - 2; d++)
        unknown += as->dims[d] == WEFT_DIM_ANY;
    if (n == WEFT_DIM_ANY || unknown > 1)
        return unsupported(r, "of a matrix whose size (or more than one batch dim) is unknown "
                              "while tracing");
    int64_t dims[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        dims[d] = as->dims[d] == WEFT_DIM_ANY ? -1 : as->dims[d];
    dims[rank - 2] = dims[rank - 1] = n * n;
    weft_value *eye = weft_eye(cx, n, n, as->dtype);
    weft_value *k2 = weft_add(cx, kron(cx, weft_matrix_transpose(cx, r->y), eye, rank, dims),
                              kron(cx, eye, r->y, rank, dims));
    dims[rank - 1] = 1;
    weft_value *x = weft_matrix_solve(cx, k2, weft_reshape(cx, r->g, rank, dims), false);
    dims[rank - 2] = dims[rank - 1] = n;
    return give(r, 0, weft_reshape(cx, x, rank, dims));
}

/* tridiagonal_solve (TensorFlow's rule): grhs solves the transposed
 * system (superdiagonal and subdiagonal swapped, each shifted into the
 * compact format's place); the diagonals get -(grhs x^T)'s three
 * diagonals, each a row sum of grhs times x (shifted for the off
 * diagonals). */
static int tridiagonal_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int rank = weft__grad_rank(r->a);
    if (rank < 2 || weft__grad_rank(r->b) < 0)
        return unsupported(r, "of inputs whose rank is unknown while tracing");
    bool vector = weft__grad_rank(r->b) == rank - 1;
    weft_value *g = vector ? weft_expand_dims(cx, r->g, -1) : r->g;
    weft_value *x = vector ? weft_expand_dims(cx, r->y, -1) : r->y;
    weft_value *rows[3];
    for (int d = 0; d < 3; d++)
        rows[d] = weft_squeeze(cx, weft__ops_axis_slice(cx, r->a, rank - 2, d, d + 1),
                               rank - 2);
    /* As columns [..., m, 1], shifted like rows of a matrix. */
    weft_value *sub_col = weft_expand_dims(cx, rows[2], -1);
    weft_value *super_col = weft_expand_dims(cx, rows[0], -1);
    weft_value *t_diags[3] = { weft_squeeze(cx, shift_rows(cx, sub_col, 1, true), -1), rows[1],
                               weft_squeeze(cx, shift_rows(cx, super_col, 1, false), -1) };
    weft_value *in[2] = { weft_stack(cx, t_diags, 3, -2), g };
    weft__node solve = { .op = WEFT__OP_TRIDIAGONAL_SOLVE };
    weft_value *grhs = weft__ops_finish(cx, &solve, in, 2);
    int rc = give(r, 1, vector ? weft_squeeze(cx, grhs, -1) : grhs);
    if (rc < 0 || !wants(r, 0))
        return rc;
    weft_value *bands[3] = { shift_rows(cx, x, 1, true), x, shift_rows(cx, x, 1, false) };
    for (int d = 0; d < 3; d++)
        bands[d] = weft_neg(cx, weft_sum(cx, weft_mul(cx, grhs, bands[d]), -1));
    return give(r, 0, weft_stack(cx, bands, 3, -2));
}

int weft__grad_linalg(const rule_in *r)
{
    switch (r->n->op) {
    case WEFT__OP_MATRIX_INVERSE:     return inverse_rule(r);
    case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE:
    case WEFT__OP_BANDED_SOLVE:       return solve_rule(r);
    case WEFT__OP_MATRIX_DETERMINANT: return determinant_rule(r);
    case WEFT__OP_SLOGDET:            return slogdet_rule(r);
    case WEFT__OP_CHOLESKY:           return cholesky_rule(r);
    case WEFT__OP_MATRIX_EXPONENTIAL: return block_rule(r, weft_matrix_exponential);
    case WEFT__OP_MATRIX_LOG:         return block_rule(r, weft_matrix_logarithm);
    case WEFT__OP_MATRIX_SQRT:        return sqrtm_rule(r);
    case WEFT__OP_TRIDIAGONAL_SOLVE:  return tridiagonal_rule(r);
    default:                          return unsupported(r, NULL);
    }
}
