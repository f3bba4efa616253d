/* Two compositions over sequences: bucketize (tf.raw_ops.Bucketize, as
 * one weft_searchsorted of the flattened input in the boundaries) and
 * reverse_sequence (tf.reverse_sequence, as one batched gather along the
 * sequence axis, whose indices run backwards over each batch element's
 * length).  Each checks its inputs first, so that a bad call names it. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* ---- bucketize ----------------------------------------------------------- */

/* Whether every dim of s but at most one is known while tracing (so that
 * the flattened result can be reshaped back). */
static bool dims_known_but_one(const weft_spec *s, int64_t *dims)
{
    if (s->rank < 0)
        return false;
    int unknown = 0;
    for (int d = 0; d < s->rank; d++) {
        dims[d] = s->dims[d];
        unknown += s->dims[d] < 0;
    }
    return unknown <= 1;
}

weft_value *weft_bucketize(weft_ctx *cx, weft_value *x, const double *boundaries, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_bucketize";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->dtype == WEFT_BOOL)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: x %s is bool, not a number", fn,
                              weft__spec_str(s, ss, sizeof ss));
    int64_t dims[WEFT_MAX_RANK];
    if (!dims_known_but_one(s, dims))
        return weft__ctx_fail(cx, WEFT_ESHAPE,
                              "%s: x %s needs its rank and all its dims but one known while "
                              "tracing", fn, weft__spec_str(s, ss, sizeof ss));
    if (n > 0 && !boundaries)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL boundaries", fn);
    for (size_t i = 0; i < n; i++) {
        if (isnan(boundaries[i]))
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: boundary %zu is NaN", fn, i);
        if (i > 0 && boundaries[i] < boundaries[i - 1])
            return weft__ctx_fail(cx, WEFT_EINVAL,
                                  "%s: boundaries are not sorted (boundary %zu, %g, is below "
                                  "boundary %zu, %g)", fn, i, boundaries[i], i - 1,
                                  boundaries[i - 1]);
    }
    /* Floats compare in their own dtype (f32 boundaries are rounded to
     * f32, as TensorFlow's float attribute), integers in f64. */
    weft_dtype dt = s->dtype == WEFT_F32 ? WEFT_F32 : WEFT_F64;
    int64_t n_b = (int64_t)n;
    weft_value *b = weft__ops_constant(cx, fn, WEFT_F64, 1, &n_b, boundaries, dt);
    weft_value *flat = weft_reshape(cx, s->dtype == dt ? x : weft_cast(cx, x, dt), 1,
                                    (const int64_t[]){ -1 });
    weft_value *idx = weft_searchsorted(cx, b, flat, true);
    return WEFT__KEEP(weft_reshape(cx, weft_cast(cx, idx, WEFT_I32), s->rank, dims));
}

/* ---- reverse_sequence ---------------------------------------------------- */

static const char rs_fn[] = "weft_reverse_sequence";

/* Checks reverse_sequence's arguments; *seq and *batch the axes made
 * non-negative. */
static bool reverse_sequence_checks(weft_ctx *cx, weft_value *x, weft_value *seq_lengths,
                                    int seq_axis, int batch_axis, int *seq, int *batch)
{
    const weft_spec *s = weft__value_spec(x), *ls = weft__value_spec(seq_lengths);
    char sx[WEFT__SPEC_STR_MAX], sl[WEFT__SPEC_STR_MAX];
    if (ls->dtype != WEFT_I32 && ls->dtype != WEFT_I64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: seq_lengths %s is not i32 or i64", rs_fn,
                       weft__spec_str(ls, sl, sizeof sl));
        return false;
    }
    if (s->rank < 2) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s needs a rank of 2 or more known while tracing",
                       rs_fn, weft__spec_str(s, sx, sizeof sx));
        return false;
    }
    *seq = seq_axis < 0 ? seq_axis + s->rank : seq_axis;
    *batch = batch_axis < 0 ? batch_axis + s->rank : batch_axis;
    if (*seq < 0 || *seq >= s->rank || *batch < 0 || *batch >= s->rank || *seq == *batch) {
        weft__ctx_fail(cx, WEFT_EINVAL,
                       "%s: seq_axis %d and batch_axis %d are not two different axes of x %s",
                       rs_fn, seq_axis, batch_axis, weft__spec_str(s, sx, sizeof sx));
        return false;
    }
    if (s->dims[*seq] < 0) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s needs its seq_axis dim known while tracing",
                       rs_fn, weft__spec_str(s, sx, sizeof sx));
        return false;
    }
    int64_t nb = s->dims[*batch];
    if (ls->rank != 1 || (ls->dims[0] >= 0 && nb >= 0 && ls->dims[0] != nb)) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: seq_lengths %s is not a vector of x's batch dim (%s)",
                       rs_fn, weft__spec_str(ls, sl, sizeof sl), weft__spec_str(s, sx, sizeof sx));
        return false;
    }
    return true;
}

weft_value *weft_reverse_sequence(weft_ctx *cx, weft_value *x, weft_value *seq_lengths,
                                  int seq_axis, int batch_axis)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { x, seq_lengths };
    if (!weft__op_enter(cx, rs_fn, in, 2))
        return NULL;
    int seq, batch;
    if (!reverse_sequence_checks(cx, x, seq_lengths, seq_axis, batch_axis, &seq, &batch))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    int rank = s->rank;
    int64_t len = s->dims[seq];
    /* x with the batch axis first and the sequence axis second. */
    int perm[WEFT_MAX_RANK], back[WEFT_MAX_RANK];
    perm[0] = batch;
    perm[1] = seq;
    for (int d = 0, k = 2; d < rank; d++)
        if (d != batch && d != seq)
            perm[k++] = d;
    for (int k = 0; k < rank; k++)
        back[perm[k]] = k;
    weft_value *xt = weft_transpose(cx, x, perm);
    /* Index j of batch element b: L_b - 1 - j where j < L_b, else j. */
    weft_value *j = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, len, 1), 2,
                                 (const int64_t[]){ 1, len });
    weft_value *l = weft_reshape(cx, weft_cast(cx, seq_lengths, WEFT_I64), 2,
                                 (const int64_t[]){ -1, 1 });
    weft_value *reversed = weft_sub(cx, weft_sub(cx, l, weft_const_i64(cx, 1)), j);
    weft_value *idx = weft_where(cx, weft_lt(cx, j, l), reversed, j);
    weft_value *picked = weft_gather_ex(cx, xt, idx, 1, 1);
    return WEFT__KEEP(weft_transpose(cx, picked, back));
}
