/* tf.nn.fractional_max_pool and fractional_avg_pool: the pooling sequences
 * drawn here by TensorFlow's laws from weft's random streams, then one
 * FRACTIONAL_POOL node (trace/kernel_fractional_pool.c) pooling over them. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* The sequence [0, ...] of the cumulative sums of d. */
static weft_value *sums_from_zero(weft_ctx *cx, weft_value *d)
{
    weft_value *parts[2] = { weft_fill(cx, WEFT_I64, 1, (const int64_t[]){ 1 }, 0),
                             weft_cumsum(cx, d, 0) };
    return weft_concat(cx, parts, 2, 0);
}

/* TensorFlow's random sequence of in elements in out regions: in % out
 * regions of k + 1 elements and the rest of k (k = in / out), in the
 * order that sorts keys (out uniform draws, so every order is as likely). */
static weft_value *random_sequence(weft_ctx *cx, int64_t in, int64_t out, weft_value *keys)
{
    weft_value *region = weft_range(cx, WEFT_I64, 0, out, 1);
    weft_value *longer = weft_lt(cx, region, weft_const_i64(cx, in % out));
    weft_value *sizes = weft_add(cx, weft_cast(cx, longer, WEFT_I64), weft_const_i64(cx, in / out));
    return sums_from_zero(cx, weft_gather(cx, sizes, weft_argsort(cx, keys, 0, false), 0));
}

/* TensorFlow's pseudo-random sequence (Graham's a_i = ceil(alpha (i + u)),
 * alpha = in / out, less 1 to count from 0), u a draw times the bound
 * that keeps every region k or k + 1 long: u is a [1] f64 uniform. */
static weft_value *pseudo_random_sequence(weft_ctx *cx, int64_t in, int64_t out, weft_value *u)
{
    double alpha = (double)in / (double)out;
    int64_t k = in / out;
    double max_u = fmin((double)(k + 2) / alpha - 1,
                        (double)(in + 1 - k) / alpha - (double)(out - 1));
    weft_value *parts[3] = { weft_fill(cx, WEFT_I64, 1, (const int64_t[]){ 1 }, 0), NULL,
                             weft_fill(cx, WEFT_I64, 1, (const int64_t[]){ 1 }, (double)in) };
    if (out == 1)
        return weft_concat(cx, (weft_value *[]){ parts[0], parts[2] }, 2, 0);
    weft_value *i = weft_range(cx, WEFT_F64, 1, out, 1);
    weft_value *at = weft_add(cx, i, weft_mul(cx, u, weft_const_f64(cx, max_u)));
    weft_value *a = weft_cast(cx, weft_ceil(cx, weft_mul(cx, weft_const_f64(cx, alpha), at)),
                              WEFT_I64);
    parts[1] = weft_sub(cx, a, weft_const_i64(cx, 1));
    return weft_concat(cx, parts, 3, 0);
}

/* Whether the ratios are TensorFlow's: 1 for the batch and channels,
 * finite and 1 or more for the height and width, which must be at least
 * as long as their ratio; the output's height and width in out. */
static bool plan_lengths(weft_ctx *cx, const char *fn, const weft_spec *s, const double *ratio,
                         int64_t out[2])
{
    if (!ratio) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: pooling_ratio is NULL", fn);
        return false;
    }
    if (ratio[0] != 1 || ratio[3] != 1) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: pooling_ratio[0] %g and [3] %g are not 1 (only "
                       "the height and width are pooled)", fn, ratio[0], ratio[3]);
        return false;
    }
    for (int d = 1; d <= 2; d++) {
        if (!(ratio[d] >= 1 && ratio[d] < INFINITY)) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: pooling_ratio[%d] %g is not finite and 1 or "
                           "more", fn, d, ratio[d]);
            return false;
        }
        if ((double)s->dims[d] < ratio[d]) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: the value's dim %d (%lld) is less than "
                           "pooling_ratio[%d] %g", fn, d, (long long)s->dims[d], d, ratio[d]);
            return false;
        }
        out[d - 1] = (int64_t)floor((double)s->dims[d] / ratio[d]);
    }
    return true;
}

static int fractional_pool(weft_ctx *cx, const char *fn, int mode, weft_value *value,
                           const double *pooling_ratio, bool pseudo_random, bool overlapping,
                           weft_value *seed, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    if (outs)
        outs[0] = outs[1] = outs[2] = NULL;
    weft_value *in[2] = { value, seed };
    if (!weft__op_enter(cx, fn, in, 2))
        return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: outs is NULL", fn);
        return weft_ctx_status(cx);
    }
    weft__node n = { .op = WEFT__OP_FRACTIONAL_POOL };
    n.attr.resize.method = mode;
    n.attr.resize.antialias = overlapping;
    /* The node's checks of the value first, with stand-in sequences. */
    const weft_spec *vs = weft__value_spec(value);
    const weft_spec seq = { .dtype = WEFT_I64, .rank = 1, .dims = { 2 } };
    weft_spec specs[3] = { *vs, seq, seq }, out;
    int rc = weft__infer_fractional_pool(&n, specs, &out);
    if (rc == 0)
        rc = weft__check_seed(fn, weft__value_spec(seed));
    if (rc != 0) {
        weft__ctx_fail(cx, rc, "%s", weft_errmsg());
        return rc;
    }
    int64_t len[2];
    if (!plan_lengths(cx, fn, vs, pooling_ratio, len))
        return weft_ctx_status(cx);
    int64_t n_draws = pseudo_random ? 2 : len[0] + len[1];
    weft_value *draws = weft_random_uniform(cx, seed, WEFT_F64, 1, &n_draws, 0, 1);
    weft_value *row_draws = weft__ops_axis_slice(cx, draws, 0, 0, pseudo_random ? 1 : len[0]);
    weft_value *col_draws = weft__ops_axis_slice(cx, draws, 0, pseudo_random ? 1 : len[0],
                                                 WEFT_END);
    weft_value *rows, *cols;
    if (pseudo_random) {
        rows = pseudo_random_sequence(cx, vs->dims[1], len[0], row_draws);
        cols = pseudo_random_sequence(cx, vs->dims[2], len[1], col_draws);
    } else {
        rows = random_sequence(cx, vs->dims[1], len[0], row_draws);
        cols = random_sequence(cx, vs->dims[2], len[1], col_draws);
    }
    weft_value *args[3] = { value, rows, cols };
    weft_value *pooled = weft__ops_finish(cx, &n, args, 3);
    rc = weft_ctx_status(cx);
    if (rc != 0)
        return rc;
    outs[0] = pooled;
    outs[1] = rows;
    outs[2] = cols;
    return 0;
}

int weft_fractional_max_pool(weft_ctx *cx, weft_value *value, const double *pooling_ratio,
                             bool pseudo_random, bool overlapping, weft_value *seed,
                             weft_value **outs)
{
    return fractional_pool(cx, "weft_fractional_max_pool", WEFT__FRACTIONAL_MAX, value,
                           pooling_ratio, pseudo_random, overlapping, seed, outs);
}

int weft_fractional_avg_pool(weft_ctx *cx, weft_value *value, const double *pooling_ratio,
                             bool pseudo_random, bool overlapping, weft_value *seed,
                             weft_value **outs)
{
    return fractional_pool(cx, "weft_fractional_avg_pool", WEFT__FRACTIONAL_AVG, value,
                           pooling_ratio, pseudo_random, overlapping, seed, outs);
}
