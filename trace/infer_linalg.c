/* Shape and dtype inference of the linear-algebra ops: cholesky,
 * matrix_inverse and matrix_determinant of square matrices, and
 * matrix_solve and triangular_solve of a square matrix and right-hand
 * sides.  Every input is f32 or f64 with the matrices in the last two dims
 * and any batch dims before them; as elsewhere, the same code checks a
 * node while tracing (dims may be unknown) and again before the kernel
 * runs. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/shape.h"

#define ANY WEFT_DIM_ANY

static bool dims_clash(int64_t a, int64_t b)
{
    return a != ANY && b != ANY && a != b;
}

/* The matrix (or a batch of them) of a square-matrix op. */
static int check_square(const weft__node *n, const weft_spec *a)
{
    char sa[WEFT__SPEC_STR_MAX];
    if (a->dtype != WEFT_F32 && a->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: the matrix %s is not f32 or f64",
                            weft__op_name(n->op), weft__spec_str(a, sa, sizeof sa));
    if (a->rank == WEFT_RANK_ANY)
        return 0;
    if (a->rank < 2 || dims_clash(a->dims[a->rank - 2], a->dims[a->rank - 1]))
        return weft__errorf(WEFT_ESHAPE, "weft_%s: %s is not a square matrix (or a batch of "
                            "them)", weft__op_name(n->op), weft__spec_str(a, sa, sizeof sa));
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
        if (dims_clash(a->dims[d], b->dims[d]))
            return weft__errorf(WEFT_ESHAPE, "weft_%s: the right-hand sides %s do not match the "
                                "matrix %s in dim %d", weft__op_name(n->op), sb, sa, d);
        if (out->dims[d] == ANY)
            out->dims[d] = a->dims[d];
    }
    if (out->dims[a->rank - 2] == ANY)
        out->dims[a->rank - 2] = a->dims[a->rank - 1];
    return 0;
}

int weft__infer_linalg_op(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int rc = check_square(n, &in[0]);
    if (rc < 0)
        return rc;
    switch (n->op) {
    case WEFT__OP_CHOLESKY:
    case WEFT__OP_MATRIX_INVERSE:
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
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: not a linear-algebra op",
                            weft__op_name(n->op));
    }
}
