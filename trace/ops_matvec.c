/* tf.linalg.matvec and tf.linalg.tridiagonal_matmul, compositions of the
 * other ops: matvec is one matrix product with the vector as a column;
 * tridiagonal_matmul adds three row-shifted elementwise products, each
 * reading only the diagonals' entries TensorFlow reads (so an inf in an
 * unread corner does not become NaN). */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

weft_value *weft_matvec(weft_ctx *cx, weft_value *a, weft_value *b, bool transpose_a)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matvec";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *sa = spec_of(a), *sb = spec_of(b);
    if (sa->rank == WEFT_RANK_ANY || sa->rank < 2 || sb->rank == WEFT_RANK_ANY || sb->rank < 1) {
        char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s is not [..., m, n] or b %s is not "
                              "[..., n] (ranks known while tracing)", fn,
                              weft__spec_str(sa, s1, sizeof s1), weft__spec_str(sb, s2, sizeof s2));
    }
    weft_value *column = weft_expand_dims(cx, b, -1);
    weft_value *y = weft_matmul_ex(cx, a, column, transpose_a ? WEFT_TRANSPOSE_A : 0);
    return WEFT__KEEP(y ? weft_squeeze(cx, y, -1) : NULL);
}

/* x[..., begin:end, :] (end may count from the back). */
static weft_value *rows(weft_ctx *cx, weft_value *x, int64_t begin, int64_t end)
{
    return weft__ops_axis_slice(cx, x, spec_of(x)->rank - 2, begin, end);
}

/* x with one row of zeros before (first) or after it along axis -2. */
static weft_value *zero_row(weft_ctx *cx, weft_value *x, bool first)
{
    int rank = spec_of(x)->rank;
    int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } };
    pads[rank - 2][first ? 0 : 1] = 1;
    return weft_pad(cx, x, (const int64_t(*)[2])pads, 0.0);
}

/* Row k of the compact diagonals [..., 3, m] as a column [..., m, 1],
 * entries [begin, end) of it. */
static weft_value *diagonal(weft_ctx *cx, weft_value *diagonals, int64_t k, int64_t begin,
                            int64_t end)
{
    int rank = spec_of(diagonals)->rank;
    weft_value *row = weft__ops_axis_slice(cx, diagonals, rank - 2, k, k + 1);
    row = weft__ops_axis_slice(cx, row, rank - 1, begin, end);
    return weft_expand_dims(cx, weft_squeeze(cx, row, rank - 2), -1);
}

weft_value *weft_tridiagonal_matmul(weft_ctx *cx, weft_value *diagonals, weft_value *rhs)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_tridiagonal_matmul";
    weft_value *in[2] = { diagonals, rhs };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *sd = spec_of(diagonals), *sr = spec_of(rhs);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    weft__spec_str(sd, s1, sizeof s1);
    weft__spec_str(sr, s2, sizeof s2);
    if ((sd->dtype != WEFT_F32 && sd->dtype != WEFT_F64) || sr->dtype != sd->dtype)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the diagonals %s and rhs %s are not both f32 "
                              "or both f64", fn, s1, s2);
    bool ok = sd->rank != WEFT_RANK_ANY && sd->rank >= 2 && sr->rank == sd->rank &&
              (sd->dims[sd->rank - 2] == 3 || sd->dims[sd->rank - 2] == WEFT_DIM_ANY);
    int64_t m = ok ? sd->dims[sd->rank - 1] : 0, mr = ok ? sr->dims[sr->rank - 2] : 0;
    if (!ok || (m != WEFT_DIM_ANY && mr != WEFT_DIM_ANY && m != mr))
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the diagonals %s are not [..., 3, m] with "
                              "rhs %s [..., m, n] (ranks known while tracing)", fn, s1, s2);
    /* y_i = super_i x_(i+1) + diag_i x_i + sub_i x_(i-1). */
    weft_value *above = weft_mul(cx, diagonal(cx, diagonals, 0, 0, -1), rows(cx, rhs, 1, WEFT_END));
    weft_value *below = weft_mul(cx, diagonal(cx, diagonals, 2, 1, WEFT_END), rows(cx, rhs, 0, -1));
    weft_value *y = weft_mul(cx, diagonal(cx, diagonals, 1, 0, WEFT_END), rhs);
    y = weft_add(cx, zero_row(cx, above, false), y);
    return WEFT__KEEP(weft_add(cx, y, zero_row(cx, below, true)));
}
