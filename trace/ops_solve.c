/* The linear-algebra ops of include/weft/ops.h: cholesky, matrix_solve,
 * triangular_solve, banded_triangular_solve, tridiagonal_solve,
 * matrix_inverse, matrix_exponential, matrix_sqrt, matrix_logarithm and
 * matrix_determinant, each a node of its own (checked by
 * trace/infer_linalg.c, computed by trace/kernel_linalg.c; the banded
 * solve by trace/kernel_banded.c), and cholesky_solve, two triangular
 * solves. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/shape.h"

static weft_value *square_op(weft_ctx *cx, weft__op op, const char *fn, weft_value *a)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    weft__node n = { .op = op };
    return weft__ops_finish(cx, &n, &a, 1);
}

weft_value *weft_cholesky(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(square_op(cx, WEFT__OP_CHOLESKY, "weft_cholesky", a));
}

weft_value *weft_matrix_inverse(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(square_op(cx, WEFT__OP_MATRIX_INVERSE, "weft_matrix_inverse", a));
}

weft_value *weft_matrix_exponential(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(square_op(cx, WEFT__OP_MATRIX_EXPONENTIAL, "weft_matrix_exponential", a));
}

weft_value *weft_matrix_sqrt(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(square_op(cx, WEFT__OP_MATRIX_SQRT, "weft_matrix_sqrt", a));
}

weft_value *weft_matrix_logarithm(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(square_op(cx, WEFT__OP_MATRIX_LOG, "weft_matrix_logarithm", a));
}

weft_value *weft_tridiagonal_solve(weft_ctx *cx, weft_value *diagonals, weft_value *rhs)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { diagonals, rhs };
    if (!weft__op_enter(cx, "weft_tridiagonal_solve", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_TRIDIAGONAL_SOLVE };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 2));
}

weft_value *weft_matrix_determinant(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(square_op(cx, WEFT__OP_MATRIX_DETERMINANT, "weft_matrix_determinant", a));
}

static weft_value *solve_op(weft_ctx *cx, weft__op op, const char *fn, weft_value *matrix,
                            weft_value *rhs, unsigned flags)
{
    weft_value *in[2] = { matrix, rhs };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    weft__node n = { .op = op, .attr.index.kind = (int)flags };
    return weft__ops_finish(cx, &n, in, 2);
}

weft_value *weft_matrix_solve(weft_ctx *cx, weft_value *matrix, weft_value *rhs, bool adjoint)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(solve_op(cx, WEFT__OP_MATRIX_SOLVE, "weft_matrix_solve", matrix, rhs,
                               adjoint ? WEFT__LINALG_ADJOINT : 0));
}

weft_value *weft_triangular_solve(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                                  bool lower, bool adjoint)
{
    WEFT__SCOPE(cx);
    unsigned flags = (lower ? WEFT__LINALG_LOWER : 0) | (adjoint ? WEFT__LINALG_ADJOINT : 0);
    return WEFT__KEEP(solve_op(cx, WEFT__OP_TRIANGULAR_SOLVE, "weft_triangular_solve", matrix, rhs,
                               flags));
}

weft_value *weft_banded_triangular_solve(weft_ctx *cx, weft_value *bands, weft_value *rhs,
                                         bool lower, bool adjoint)
{
    WEFT__SCOPE(cx);
    unsigned flags = (lower ? WEFT__LINALG_LOWER : 0) | (adjoint ? WEFT__LINALG_ADJOINT : 0);
    return WEFT__KEEP(solve_op(cx, WEFT__OP_BANDED_SOLVE, "weft_banded_triangular_solve", bands,
                               rhs, flags));
}

weft_value *weft_cholesky_solve(weft_ctx *cx, weft_value *chol, weft_value *rhs)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { chol, rhs };
    if (!weft__op_enter(cx, "weft_cholesky_solve", in, 2))
        return NULL;
    /* a = L L^T: L y = rhs, then L^T x = y. */
    weft_value *y = solve_op(cx, WEFT__OP_TRIANGULAR_SOLVE, "weft_cholesky_solve", chol, rhs,
                             WEFT__LINALG_LOWER);
    return WEFT__KEEP(y ? solve_op(cx, WEFT__OP_TRIANGULAR_SOLVE, "weft_cholesky_solve", chol, y,
                                   WEFT__LINALG_LOWER | WEFT__LINALG_ADJOINT) : NULL);
}
