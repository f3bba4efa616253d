/* The ops of include/weft/ops.h (except map and host calls).  Eager and
 * tracing mode share one path: validate the inputs, promote dtypes, infer
 * the output spec, then either record a node or compute it at once. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"

/* Common entry checks: a context, no sticky error, valid inputs. */
static bool enter(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n_in)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return false;
    }
    return weft__ctx_check_inputs(cx, fn, in, n_in);
}

static weft_dtype dtype_of(const weft_value *v)
{
    return weft__value_spec(v)->dtype;
}

static weft_dtype wider(weft_dtype a, weft_dtype b)
{
    /* The enum is declared in promotion order: bool < i32 < i64 < f32 < f64. */
    return a > b ? a : b;
}

static bool is_float(weft_dtype dt)
{
    return dt == WEFT_F32 || dt == WEFT_F64;
}

/* Records or computes n, whose spec is already known, on inputs in. */
static weft_value *emit(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in)
{
    n->n_in = n_in;
    n->in = n->inline_in;
    n->after = WEFT__NO_NODE;
    for (uint32_t i = 0; i < n_in; i++)
        n->inline_in[i] = weft__value_node(in[i]);
    if (!weft__ctx_is_eager(cx))
        return weft__ctx_record(cx, n, in, n_in);
    if (n->op == WEFT__OP_CONST)
        return weft__ctx_wrap_const(cx, n->attr.constant.value);
    weft_runtime *rt = weft__ctx_runtime(cx);
    weft_tensor *ts[3] = { NULL, NULL, NULL };
    for (uint32_t i = 0; i < n_in; i++)
        ts[i] = weft__value_tensor(in[i]);
    bool prof = rt && weft__profiling(rt);
    uint64_t t0 = prof ? weft__now_ns() : 0;
    weft_tensor *out = NULL;
    int rc = weft__kernel_eval(rt, n, ts, &out);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    if (prof)
        weft__profile_span(rt, "op", weft__op_name(n->op), t0, weft__now_ns(), NULL);
    return weft__ctx_wrap(cx, out);
}

/* Infers n's spec from the inputs as they will be after conversion to
 * dts[i], before any conversion is emitted, so that a failing op leaves
 * no stray casts behind. */
static int infer(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in,
                 const weft_dtype *dts)
{
    weft_spec specs[3];
    for (uint32_t i = 0; i < n_in; i++) {
        specs[i] = *weft__value_spec(in[i]);
        specs[i].dtype = dts[i];
    }
    n->n_in = n_in;
    n->in = n->inline_in;
    for (uint32_t i = 0; i < n_in; i++)
        n->inline_in[i] = weft__value_node(in[i]);
    int rc = weft__infer_spec(n, specs, &n->spec);
    if (rc < 0)
        weft__ctx_fail_errmsg(cx, rc);
    return rc;
}

static weft_value *convert(weft_ctx *cx, weft_value *v, weft_dtype to)
{
    if (dtype_of(v) == to)
        return v;
    weft__node n = { .op = WEFT__OP_CAST, .attr.cast.to = to };
    weft_dtype from = dtype_of(v);
    if (infer(cx, &n, &v, 1, &from) < 0)
        return NULL;
    return emit(cx, &n, &v, 1);
}

/* Infers n on inputs converted to dts, emits the conversions, then n. */
static weft_value *build(weft_ctx *cx, weft__node *n, weft_value **in, uint32_t n_in,
                         const weft_dtype *dts)
{
    if (infer(cx, n, in, n_in, dts) < 0)
        return NULL;
    for (uint32_t i = 0; i < n_in; i++) {
        in[i] = convert(cx, in[i], dts[i]);
        if (!in[i])
            return NULL;
    }
    return emit(cx, n, in, n_in);
}

static weft_value *binary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, weft_value *b)
{
    weft_value *in[2] = { a, b };
    if (!enter(cx, fn, in, 2))
        return NULL;
    weft_dtype dt = wider(dtype_of(a), dtype_of(b));
    weft_dtype dts[2] = { dt, dt };
    weft__node n = { .op = op };
    return build(cx, &n, in, 2, dts);
}

#define BINARY_OP(name, OP)                                                  \
    weft_value *weft_##name(weft_ctx *cx, weft_value *a, weft_value *b)      \
    {                                                                        \
        return binary(cx, WEFT__OP_##OP, "weft_" #name, a, b);              \
    }
BINARY_OP(add, ADD)
BINARY_OP(sub, SUB)
BINARY_OP(mul, MUL)
BINARY_OP(div, DIV)
BINARY_OP(mod, MOD)
BINARY_OP(pow, POW)
BINARY_OP(minimum, MINIMUM)
BINARY_OP(maximum, MAXIMUM)
BINARY_OP(eq, EQ)
BINARY_OP(ne, NE)
BINARY_OP(lt, LT)
BINARY_OP(le, LE)
BINARY_OP(gt, GT)
BINARY_OP(ge, GE)
BINARY_OP(matmul, MATMUL)

/* float_only: integer and bool inputs compute in f64. */
static weft_value *unary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, bool float_only)
{
    weft_value *in[1] = { a };
    if (!enter(cx, fn, in, 1))
        return NULL;
    weft_dtype dt = dtype_of(a);
    if (float_only && !is_float(dt))
        dt = WEFT_F64;
    weft__node n = { .op = op };
    return build(cx, &n, in, 1, &dt);
}

weft_value *weft_neg(weft_ctx *cx, weft_value *a) { return unary(cx, WEFT__OP_NEG, "weft_neg", a, false); }
weft_value *weft_abs(weft_ctx *cx, weft_value *a) { return unary(cx, WEFT__OP_ABS, "weft_abs", a, false); }
weft_value *weft_sqrt(weft_ctx *cx, weft_value *a) { return unary(cx, WEFT__OP_SQRT, "weft_sqrt", a, true); }
weft_value *weft_exp(weft_ctx *cx, weft_value *a) { return unary(cx, WEFT__OP_EXP, "weft_exp", a, true); }
weft_value *weft_log(weft_ctx *cx, weft_value *a) { return unary(cx, WEFT__OP_LOG, "weft_log", a, true); }

weft_value *weft_cast(weft_ctx *cx, weft_value *a, weft_dtype to)
{
    if (!enter(cx, "weft_cast", &a, 1))
        return NULL;
    if (weft_dtype_size(to) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_cast: unknown dtype %d", (int)to);
    return convert(cx, a, to);
}

weft_value *weft_where(weft_ctx *cx, weft_value *cond, weft_value *a, weft_value *b)
{
    weft_value *in[3] = { cond, a, b };
    if (!enter(cx, "weft_where", in, 3))
        return NULL;
    if (dtype_of(cond) != WEFT_BOOL) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "weft_where: the condition is %s, not bool",
                              weft__spec_str(weft__value_spec(cond), s, sizeof s));
    }
    weft_dtype dt = wider(dtype_of(a), dtype_of(b));
    weft_dtype dts[3] = { WEFT_BOOL, dt, dt };
    weft__node n = { .op = WEFT__OP_WHERE };
    return build(cx, &n, in, 3, dts);
}

/* Checks a reduction's axes against a's spec before anything is emitted,
 * and brings them into the canonical form of struct weft__reduce_axes:
 * non-negative and sorted when the rank is known, "every axis" as
 * n_axes == 0. */
static bool reduce_axes(weft_ctx *cx, const char *fn, weft_value *a, weft__node *n)
{
    struct weft__reduce_axes *r = &n->attr.reduce;
    const weft_spec *s = weft__value_spec(a);
    if (s->rank == WEFT_RANK_ANY) {
        for (unsigned k = 0; k < r->n_axes; k++) {
            if (r->axes[k] < -WEFT_MAX_RANK || r->axes[k] >= WEFT_MAX_RANK) {
                weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range", fn, r->axes[k]);
                return false;
            }
            for (unsigned j = 0; j < k; j++)
                if (r->axes[j] == r->axes[k]) {
                    weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is given twice", fn,
                                   r->axes[k]);
                    return false;
                }
        }
        return true;
    }
    unsigned mask;
    int rc = weft__reduce_mask(n, fn, s, &mask);
    if (rc < 0) {
        weft__ctx_fail_errmsg(cx, rc);
        return false;
    }
    r->n_axes = 0;
    if (mask == (s->rank > 0 ? (1u << s->rank) - 1u : 0u))
        return true;
    for (int d = 0; d < s->rank; d++)
        if (mask & (1u << d))
            r->axes[r->n_axes++] = (int8_t)d;
    return true;
}

/* A reduction node of op over ax; float_only: integer and bool inputs
 * compute in f64 (mean). */
static weft_value *reduce(weft_ctx *cx, weft__op op, const char *fn, weft_value *a,
                          const struct weft__reduce_axes *ax, bool float_only)
{
    weft_value *in[1] = { a };
    if (!enter(cx, fn, in, 1))
        return NULL;
    weft__node n = { .op = op };
    n.attr.reduce = *ax;
    if (!reduce_axes(cx, fn, a, &n))
        return NULL;
    weft_dtype dt = dtype_of(a);
    if (float_only && !is_float(dt))
        dt = WEFT_F64;
    return build(cx, &n, in, 1, &dt);
}

/* The one-axis form of weft_sum, weft_mean and weft_reduce_max. */
static weft_value *reduce_one(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, int axis,
                              bool float_only)
{
    if (axis != WEFT_ALL_AXES && (axis < -WEFT_MAX_RANK || axis >= WEFT_MAX_RANK)) {
        if (!enter(cx, fn, &a, 1))
            return NULL;
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range", fn, axis);
    }
    weft__node n = { .op = op };
    weft__reduce_set_axis(&n, axis);
    return reduce(cx, op, fn, a, &n.attr.reduce, float_only);
}

weft_value *weft_sum(weft_ctx *cx, weft_value *a, int axis)
{
    return reduce_one(cx, WEFT__OP_SUM, "weft_sum", a, axis, false);
}

weft_value *weft_mean(weft_ctx *cx, weft_value *a, int axis)
{
    return reduce_one(cx, WEFT__OP_MEAN, "weft_mean", a, axis, true);
}

weft_value *weft_reduce_max(weft_ctx *cx, weft_value *a, int axis)
{
    return reduce_one(cx, WEFT__OP_REDUCE_MAX, "weft_reduce_max", a, axis, false);
}

/* Variance as the mean of squared deviations from the mean (two passes,
 * NumPy's ddof = 0), in f64 for integer and bool inputs. */
static weft_value *variance(weft_ctx *cx, weft_value *a, const struct weft__reduce_axes *ax)
{
    if (!is_float(dtype_of(a)))
        a = convert(cx, a, WEFT_F64);
    struct weft__reduce_axes kept = *ax;
    kept.keepdims = true;
    weft_value *d = weft_sub(cx, a, reduce(cx, WEFT__OP_MEAN, "weft_reduce", a, &kept, true));
    return reduce(cx, WEFT__OP_MEAN, "weft_reduce", weft_mul(cx, d, d), ax, true);
}

weft_value *weft_reduce(weft_ctx *cx, weft_reduction r, weft_value *a, const int *axes,
                        size_t n_axes, bool keepdims)
{
    if (!enter(cx, "weft_reduce", &a, 1))
        return NULL;
    if ((unsigned)r > (unsigned)WEFT_R_STD)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reduce: unknown reduction %d", (int)r);
    if (n_axes > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reduce: %zu axes, at most %d", n_axes,
                              WEFT_MAX_RANK);
    if (n_axes && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reduce: axes is NULL but n_axes is %zu",
                              n_axes);
    weft__node n = { .op = WEFT__OP_SUM };
    n.attr.reduce.keepdims = keepdims;
    n.attr.reduce.n_axes = (uint8_t)n_axes;
    for (size_t k = 0; k < n_axes; k++) {
        if (axes[k] < -WEFT_MAX_RANK || axes[k] >= WEFT_MAX_RANK)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reduce: axis %d is out of range",
                                  axes[k]);
        n.attr.reduce.axes[k] = (int8_t)axes[k];
    }
    /* Check (and canonicalise) the axes once, up front, so that a
     * reduction built of several ops fails before emitting any. */
    if (!reduce_axes(cx, "weft_reduce", a, &n))
        return NULL;
    const struct weft__reduce_axes *ax = &n.attr.reduce;
    switch (r) {
    case WEFT_R_SUM:  return reduce(cx, WEFT__OP_SUM, "weft_reduce", a, ax, false);
    case WEFT_R_MEAN: return reduce(cx, WEFT__OP_MEAN, "weft_reduce", a, ax, true);
    case WEFT_R_MAX:  return reduce(cx, WEFT__OP_REDUCE_MAX, "weft_reduce", a, ax, false);
    case WEFT_R_MIN:  return reduce(cx, WEFT__OP_REDUCE_MIN, "weft_reduce", a, ax, false);
    case WEFT_R_PROD: return reduce(cx, WEFT__OP_PROD, "weft_reduce", a, ax, false);
    /* any and all are the max and min of the values as bool. */
    case WEFT_R_ANY:
        return reduce(cx, WEFT__OP_REDUCE_MAX, "weft_reduce", convert(cx, a, WEFT_BOOL), ax, false);
    case WEFT_R_ALL:
        return reduce(cx, WEFT__OP_REDUCE_MIN, "weft_reduce", convert(cx, a, WEFT_BOOL), ax, false);
    case WEFT_R_VAR:  return variance(cx, a, ax);
    case WEFT_R_STD:  return weft_sqrt(cx, variance(cx, a, ax));
    }
    return NULL;
}

weft_value *weft_reshape(weft_ctx *cx, weft_value *a, int rank, const int64_t *dims)
{
    if (!enter(cx, "weft_reshape", &a, 1))
        return NULL;
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reshape: rank %d is outside 0..%d", rank,
                              WEFT_MAX_RANK);
    if (rank > 0 && !dims)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reshape: NULL dims for rank %d", rank);
    weft__node n = { .op = WEFT__OP_RESHAPE, .attr.reshape.rank = rank };
    int inferred = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < -1)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reshape: dim %d is negative (%lld)", i,
                                  (long long)dims[i]);
        if (dims[i] == -1 && inferred++)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_reshape: more than one dim is -1");
        n.attr.reshape.dims[i] = dims[i];
    }
    weft_dtype dt = dtype_of(a);
    return build(cx, &n, &a, 1, &dt);
}

/* Constants: a node of their own while tracing, a constant value when
 * eager.  Takes over the reference t. */
static weft_value *constant(weft_ctx *cx, weft_tensor *t)
{
    weft__node n = { .op = WEFT__OP_CONST, .attr.constant.value = t };
    weft__tensor_spec(t, &n.spec);
    return emit(cx, &n, NULL, 0);
}

static weft_value *const_scalar(weft_ctx *cx, const char *fn, weft_dtype dt, const void *v)
{
    if (!enter(cx, fn, NULL, 0))
        return NULL;
    weft_tensor *t;
    int rc = weft_tensor_create(dt, 0, NULL, v, &t);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    return constant(cx, t);
}

weft_value *weft_const_i64(weft_ctx *cx, int64_t v)
{
    return const_scalar(cx, "weft_const_i64", WEFT_I64, &v);
}

weft_value *weft_const_f64(weft_ctx *cx, double v)
{
    return const_scalar(cx, "weft_const_f64", WEFT_F64, &v);
}

weft_value *weft_const_tensor(weft_ctx *cx, weft_tensor *t)
{
    if (!enter(cx, "weft_const_tensor", NULL, 0))
        return NULL;
    if (!t)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_const_tensor: NULL tensor");
    return constant(cx, weft_tensor_retain(t));
}

weft_value *weft_fill(weft_ctx *cx, weft_dtype dt, int rank, const int64_t *dims, double value)
{
    if (!enter(cx, "weft_fill", NULL, 0))
        return NULL;
    if (weft_dtype_size(dt) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: unknown dtype %d", (int)dt);
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: rank %d is outside 0..%d", rank,
                              WEFT_MAX_RANK);
    if (rank > 0 && !dims)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: NULL dims for rank %d", rank);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: dim %d is negative (%lld)", i,
                                  (long long)dims[i]);
    int64_t numel;
    if (!weft__numel_checked(rank, dims, weft_dtype_size(dt), &numel))
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: the shape overflows the address space");
    weft__node n = { .op = WEFT__OP_FILL, .attr.fill.value = value };
    n.spec.dtype = dt;
    n.spec.rank = rank;
    for (int i = 0; i < rank; i++)
        n.spec.dims[i] = dims[i];
    return emit(cx, &n, NULL, 0);
}

weft_value *weft_range(weft_ctx *cx, weft_dtype dt, int64_t start, int64_t limit, int64_t delta)
{
    if (!enter(cx, "weft_range", NULL, 0))
        return NULL;
    if (weft_dtype_size(dt) == 0 || dt == WEFT_BOOL)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_range: dtype %s is not numeric",
                              weft_dtype_name(dt) ? weft_dtype_name(dt) : "?");
    if (delta == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_range: delta is 0");
    /* ceil(|limit - start| / |delta|) in unsigned arithmetic, where neither
     * the difference nor the magnitude of INT64_MIN overflows. */
    uint64_t count = 0;
    if ((delta > 0 && limit > start) || (delta < 0 && limit < start)) {
        uint64_t span = delta > 0 ? (uint64_t)limit - (uint64_t)start
                                  : (uint64_t)start - (uint64_t)limit;
        uint64_t step = delta > 0 ? (uint64_t)delta : (uint64_t)(-(delta + 1)) + 1u;
        count = span / step + (span % step != 0);
    }
    if (count > (uint64_t)INT64_MAX)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_range: too many elements");
    weft__node n = { .op = WEFT__OP_RANGE };
    n.attr.range.start = start;
    n.attr.range.limit = limit;
    n.attr.range.delta = delta;
    n.spec.dtype = dt;
    n.spec.rank = 1;
    n.spec.dims[0] = (int64_t)count;
    int64_t numel;
    if (!weft__numel_checked(1, n.spec.dims, weft_dtype_size(dt), &numel))
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_range: %lld elements overflow the address space",
                              (long long)n.spec.dims[0]);
    return emit(cx, &n, NULL, 0);
}
