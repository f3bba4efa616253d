/* The stateless random ops of include/weft/ops.h: weft_random_uniform and
 * weft_random_normal.  The entry points check the dtype, the dims and the
 * bounds; inference checks the seed (infer_shape.c); kernel_random.c
 * draws. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"
#include "trace/shape.h"

/* The result's dims as weft_fill takes them: known while tracing, not
 * negative, within the address space. */
static bool check_dims(weft_ctx *cx, const char *fn, weft_dtype dt, int rank,
                       const int64_t *dims)
{
    if (rank < 0 || rank > WEFT_MAX_RANK) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: rank %d is outside 0..%d", fn, rank, WEFT_MAX_RANK);
        return false;
    }
    if (rank > 0 && !dims) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL dims for rank %d", fn, rank);
        return false;
    }
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: dim %d is %s (%lld)", fn, i,
                           dims[i] == WEFT_DIM_ANY ? "unknown" : "negative", (long long)dims[i]);
            return false;
        }
    int64_t numel;
    if (!weft__numel_checked(rank, dims, weft_dtype_size(dt), &numel)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: the shape overflows the address space", fn);
        return false;
    }
    return true;
}

/* Whether x is an integer that dtype dt holds. */
static bool int_of(double x, weft_dtype dt)
{
    double lo = dt == WEFT_I32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = dt == WEFT_I32 ? 2147483648.0 : 9223372036854775808.0;
    return x >= lo && x < hi && x == floor(x);
}

static weft_value *random_op(weft_ctx *cx, weft__op op, const char *fn, weft_value *seed,
                             weft_dtype dt, int rank, const int64_t *dims, double a, double b)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return NULL;
    }
    if (!weft__ctx_check_inputs(cx, fn, &seed, 1))
        return NULL;
    bool is_float = dt == WEFT_F32 || dt == WEFT_F64;
    bool is_int = dt == WEFT_I32 || dt == WEFT_I64;
    if (!is_float && !(is_int && op == WEFT__OP_RANDOM_UNIFORM))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not %s", fn,
                              weft_dtype_name(dt) ? weft_dtype_name(dt) : "?",
                              op == WEFT__OP_RANDOM_UNIFORM ? "f32, f64, i32 or i64"
                                                            : "f32 or f64");
    if (!check_dims(cx, fn, dt, rank, dims))
        return NULL;
    if (op == WEFT__OP_RANDOM_UNIFORM) {
        if (!isfinite(a) || !isfinite(b) || !(a < b))
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: minval %g and maxval %g are not finite "
                                  "with minval < maxval", fn, a, b);
        if (is_int && (!int_of(a, dt) || !int_of(b, dt)))
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: minval %g and maxval %g are not %s "
                                  "integers", fn, a, b, weft_dtype_name(dt));
    } else if (!isfinite(a) || !isfinite(b) || b < 0) {
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: mean %g and stddev %g are not finite with "
                              "stddev >= 0", fn, a, b);
    }
    weft__node n = { .op = op };
    n.attr.random.dtype = dt;
    n.attr.random.rank = rank;
    for (int i = 0; i < rank; i++)
        n.attr.random.dims[i] = dims[i];
    n.attr.random.a = a;
    n.attr.random.b = b;
    n.n_in = 1;
    n.in = n.inline_in;
    weft_spec in = *weft__value_spec(seed);
    int rc = weft__infer_spec(&n, &in, &n.spec);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    return weft__ops_emit(cx, &n, &seed, 1);
}

weft_value *weft_random_uniform(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                                const int64_t *dims, double minval, double maxval)
{
    return random_op(cx, WEFT__OP_RANDOM_UNIFORM, "weft_random_uniform", seed, dtype, rank, dims,
                     minval, maxval);
}

weft_value *weft_random_normal(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                               const int64_t *dims, double mean, double stddev)
{
    return random_op(cx, WEFT__OP_RANDOM_NORMAL, "weft_random_normal", seed, dtype, rank, dims,
                     mean, stddev);
}
