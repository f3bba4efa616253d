/* Shape and dtype inference of the linear-algebra ops: cholesky,
 * matrix_inverse, matrix_exponential, matrix_determinant, slogdet, lu and
 * eigh of square matrices, qr and svd of any matrices, and matrix_solve
 * and triangular_solve of a square matrix and right-hand sides.  A
 * decomposition's factors come out of one node packed into one tensor
 * (see packed_dims), which trace/ops_decomp.c slices apart.  Every input
 * is f32 or f64 with the matrices in the last two dims and any batch
 * dims before them; as elsewhere, the same code checks a
 * node while tracing (dims may be unknown) and again before the kernel
 * runs. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/shape.h"

#define ANY WEFT_DIM_ANY

/* The matrix (or a batch of them) of a linear-algebra op: square unless
 * the op is qr or svd. */
static int check_matrix(const weft__node *n, const weft_spec *a)
{
    char sa[WEFT__SPEC_STR_MAX];
    bool square = n->op != WEFT__OP_QR && n->op != WEFT__OP_SVD;
    if (a->dtype != WEFT_F32 && a->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: the matrix %s is not f32 or f64",
                            weft__op_name(n->op), weft__spec_str(a, sa, sizeof sa));
    if (a->rank == WEFT_RANK_ANY)
        return 0;
    if (a->rank < 2 || (square && weft__dims_clash(a->dims[a->rank - 2], a->dims[a->rank - 1])))
        return weft__errorf(WEFT_ESHAPE, "weft_%s: %s is not a %smatrix (or a batch of them)",
                            weft__op_name(n->op), weft__spec_str(a, sa, sizeof sa),
                            square ? "square " : "");
    return 0;
}

static int64_t dim_min(int64_t a, int64_t b)
{
    return a == ANY || b == ANY ? ANY : a < b ? a : b;
}

static int64_t dim_add(int64_t a, int64_t b)
{
    return a == ANY || b == ANY ? ANY : a + b;
}

/* The last dims of a decomposition's packed result for a matrix
 * [m, n] (p = min(m, n)), row-major:
 *   qr: [m, c + n], q in columns [0, c) and r in rows [0, c) of columns
 *       [c, c + n), zeros below r, where c is m with full_matrices, else p;
 *   eigh: [n + 1, n], the eigenvalues in row 0, the eigenvectors (as
 *       columns) in rows [1, n + 1); without vectors, [n] alone;
 *   eig: [n + 1, n, 2], eigh's layout of complex numbers as (real,
 *       imaginary) pairs; without vectors, [n, 2];
 *   svd: [1 + m + n, w], s in row 0, u in rows [1, 1 + m) and v in rows
 *       [1 + m, 1 + m + n), w being max(m, n) with full_matrices, else p,
 *       each in its first columns, zeros right of them; without vectors,
 *       s [p] alone;
 *   slogdet: [2], the sign and log |det|;
 *   lu: [n + 1, n], the factors (l's unit diagonal implied) in rows
 *       [0, n), the row permutation (as numbers) in row n.
 * Returns the number of dims written (1 to 3). */
static int packed_dims(const weft__node *n, int64_t m, int64_t cols, int64_t *dims)
{
    unsigned flags = (unsigned)n->attr.index.kind;
    int64_t p = dim_min(m, cols);
    switch (n->op) {
    case WEFT__OP_QR:
        dims[0] = m;
        dims[1] = dim_add(flags & WEFT__LINALG_FULL ? m : p, cols);
        return 2;
    case WEFT__OP_EIGH:
        dims[0] = cols;
        if (!(flags & WEFT__LINALG_VECTORS))
            return 1;
        dims[0] = dim_add(cols, 1);
        dims[1] = cols;
        return 2;
    case WEFT__OP_EIG:
        dims[0] = cols;
        dims[1] = 2;
        if (!(flags & WEFT__LINALG_VECTORS))
            return 2;
        dims[0] = dim_add(cols, 1);
        dims[1] = cols;
        dims[2] = 2;
        return 3;
    case WEFT__OP_SVD:
        dims[0] = p;
        if (!(flags & WEFT__LINALG_VECTORS))
            return 1;
        dims[0] = dim_add(1, dim_add(m, cols));
        dims[1] = !(flags & WEFT__LINALG_FULL) ? p
                  : m == ANY || cols == ANY   ? ANY
                  : m > cols                  ? m : cols;
        return 2;
    case WEFT__OP_LU:
        dims[0] = dim_add(cols, 1);
        dims[1] = cols;
        return 2;
    default:   /* SLOGDET */
        dims[0] = 2;
        return 1;
    }
}

static int infer_packed(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = a->dtype;
    if (a->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    int64_t tail[3];
    int k = packed_dims(n, a->dims[a->rank - 2], a->dims[a->rank - 1], tail);
    if (a->rank - 2 + k > WEFT_MAX_RANK) {
        char sa[WEFT__SPEC_STR_MAX];
        return weft__errorf(WEFT_ESHAPE, "weft_%s: %s leaves no room for the result's %d more "
                            "dims (at most %d)", weft__op_name(n->op),
                            weft__spec_str(a, sa, sizeof sa), k - 2, WEFT_MAX_RANK);
    }
    out->rank = a->rank - 2 + k;
    for (int d = 0; d < a->rank - 2; d++)
        out->dims[d] = a->dims[d];
    for (int d = 0; d < k; d++)
        out->dims[a->rank - 2 + d] = tail[d];
    return 0;
}

/* The right-hand sides b of a solve with matrix a: a's dtype, a's rank,
 * the same batch dims, as many rows as a; the result has b's shape, with
 * each dim known from either input. */
static int infer_solve(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *a = &in[0], *b = &in[1];
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    weft__spec_str(a, sa, sizeof sa);
    weft__spec_str(b, sb, sizeof sb);
    if (b->dtype != a->dtype)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: the right-hand sides %s are not of the "
                            "matrix's dtype (%s)", weft__op_name(n->op), sb, sa);
    *out = *b;
    if (a->rank == WEFT_RANK_ANY || b->rank == WEFT_RANK_ANY)
        return 0;
    if (b->rank != a->rank)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: the right-hand sides %s are not of the "
                            "matrix's rank (%s)", weft__op_name(n->op), sb, sa);
    for (int d = 0; d < a->rank - 1; d++) {
        if (weft__dims_clash(a->dims[d], b->dims[d]))
            return weft__errorf(WEFT_ESHAPE, "weft_%s: the right-hand sides %s do not match the "
                                "matrix %s in dim %d", weft__op_name(n->op), sb, sa, d);
        if (out->dims[d] == ANY)
            out->dims[d] = a->dims[d];
    }
    if (out->dims[a->rank - 2] == ANY)
        out->dims[a->rank - 2] = a->dims[a->rank - 1];
    return 0;
}

/* tridiagonal_solve: compact diagonals [..., 3, m] (f32 or f64) and
 * right-hand sides [..., m, k] or [..., m] of their dtype and batch; the
 * result has the right-hand sides' spec. */
static int infer_tridiagonal(const weft_spec *in, weft_spec *out)
{
    const weft_spec *d = &in[0], *b = &in[1];
    char sd[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    weft__spec_str(d, sd, sizeof sd);
    weft__spec_str(b, sb, sizeof sb);
    if ((d->dtype != WEFT_F32 && d->dtype != WEFT_F64) || b->dtype != d->dtype)
        return weft__errorf(WEFT_EDTYPE, "weft_tridiagonal_solve: the diagonals %s and "
                            "right-hand sides %s are not f32 or f64 of one dtype", sd, sb);
    if (d->rank == WEFT_RANK_ANY || b->rank == WEFT_RANK_ANY || d->rank < 2 ||
        weft__dims_clash(d->dims[d->rank - 2], 3))
        return weft__errorf(WEFT_ESHAPE, "weft_tridiagonal_solve: the diagonals %s are not "
                            "[..., 3, m] (compact format, ranks known while tracing)", sd);
    bool vector = b->rank == d->rank - 1, fits = vector || b->rank == d->rank;
    for (int q = 0; fits && q < d->rank - 2; q++)
        fits = !weft__dims_clash(d->dims[q], b->dims[q]);
    if (fits)
        fits = !weft__dims_clash(d->dims[d->rank - 1], b->dims[d->rank - 2]);
    if (!fits)
        return weft__errorf(WEFT_ESHAPE, "weft_tridiagonal_solve: the right-hand sides %s do "
                            "not fit the diagonals %s ([..., m, k] or [..., m])", sb, sd);
    *out = *b;
    return 0;
}

int weft__infer_linalg_op(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    if (n->op == WEFT__OP_TRIDIAGONAL_SOLVE)
        return infer_tridiagonal(in, out);
    int rc = check_matrix(n, &in[0]);
    if (rc < 0)
        return rc;
    switch (n->op) {
    case WEFT__OP_CHOLESKY:
    case WEFT__OP_MATRIX_INVERSE:
    case WEFT__OP_MATRIX_EXPONENTIAL:
    case WEFT__OP_MATRIX_SQRT:
    case WEFT__OP_MATRIX_LOG:
        *out = in[0];
        return 0;
    case WEFT__OP_MATRIX_DETERMINANT:
        memset(out, 0, sizeof *out);
        out->dtype = in[0].dtype;
        out->rank = in[0].rank == WEFT_RANK_ANY ? WEFT_RANK_ANY : in[0].rank - 2;
        for (int d = 0; d < out->rank; d++)
            out->dims[d] = in[0].dims[d];
        return 0;
    case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE:
        return infer_solve(n, in, out);
    case WEFT__OP_SLOGDET:
    case WEFT__OP_LU:
    case WEFT__OP_QR:
    case WEFT__OP_EIGH:
    case WEFT__OP_EIG:
    case WEFT__OP_SVD:
        return infer_packed(n, &in[0], out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: not a linear-algebra op",
                            weft__op_name(n->op));
    }
}
