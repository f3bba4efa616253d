/* The ops of include/weft/ops.h (except map and host calls).  Eager and
 * tracing mode share one path: validate the inputs, promote dtypes, infer
 * the output spec, then either record a node or compute it at once.
 *
 * Weak scalars (weft_const_f64/i64, static scalar arguments) follow NumPy
 * 2's rule for Python numbers: against a strong operand of their kind or
 * above (bool < integer < float) they take its dtype, else they promote as
 * their own dtype would.  An op on weak inputs only is computed at once,
 * in both modes, into a weak constant (so 2 * 3.0 stays a weak scalar, as
 * in Python). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ew_rules.h"
#include "trace/kernels.h"
#include "trace/ops_impl.h"

static weft_dtype dtype_of(const weft_value *v)
{
    return weft__value_spec(v)->dtype;
}

static weft_dtype wider(weft_dtype a, weft_dtype b)
{
    /* The enum is declared in promotion order: bool < i32 < i64 < f32 < f64. */
    return a > b ? a : b;
}

/* bool < integer < float, for weak promotion. */
static int kind_of(weft_dtype dt)
{
    return dt == WEFT_BOOL ? 0 : weft__dtype_is_float(dt) ? 2 : 1;
}

/* The dtype n operands compute in: the widest of the strong ones, which a
 * weak one widens only if it is of a higher kind; with none strong, the
 * widest. */
static weft_dtype promote_n(const weft_value *const *in, uint32_t n)
{
    bool any_strong = false;
    weft_dtype r = WEFT_BOOL;
    for (uint32_t i = 0; i < n; i++)
        if (!weft__value_is_weak(in[i])) {
            r = any_strong ? wider(r, dtype_of(in[i])) : dtype_of(in[i]);
            any_strong = true;
        }
    for (uint32_t i = 0; i < n; i++) {
        weft_dtype dt = dtype_of(in[i]);
        if (!any_strong || (weft__value_is_weak(in[i]) && kind_of(dt) > kind_of(r)))
            r = wider(r, dt);
    }
    return r;
}

static weft_dtype promote(const weft_value *a, const weft_value *b)
{
    const weft_value *in[2] = { a, b };
    return promote_n(in, 2);
}

static bool all_weak(weft_value *const *in, uint32_t n_in)
{
    for (uint32_t i = 0; i < n_in; i++)
        if (!weft__value_is_weak(in[i]))
            return false;
    return n_in > 0;
}

static weft_value *constant(weft_ctx *cx, weft_tensor *t);

/* Computes n (inputs set) now and serially on the constants behind in,
 * into a constant value: the same result in eager and tracing mode. */
static weft_value *fold_now(weft_ctx *cx, const weft__node *n, weft_value *const *in, uint32_t n_in)
{
    weft_tensor *ts[3] = { NULL, NULL, NULL };
    for (uint32_t i = 0; i < n_in; i++)
        ts[i] = (weft_tensor *)weft__value_konst(in[i]);  /* only read */
    weft_tensor *t = NULL;
    int rc = weft__kernel_eval(NULL, n, ts, &t);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    return constant(cx, t);
}

/* Eager mode: computes n on the tensors ts into a value of cx. */
static weft_value *eager_eval(weft_ctx *cx, const weft__node *n, weft_tensor *const *ts)
{
    weft_runtime *rt = weft__ctx_runtime(cx);
    bool prof = rt && weft__profiling(rt);
    uint64_t t0 = prof ? weft__now_ns() : 0;
    weft_tensor *out = NULL;
    int rc = weft__kernel_eval_known(rt, n, ts, &out);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    if (prof)
        weft__profile_span(rt, "op", weft__op_name(n->op), t0, weft__now_ns(), NULL);
    return weft__ctx_wrap(cx, out);
}

/* Records or computes n, whose spec is already known, on inputs in.  Past
 * three inputs (concat, stack) the ids live in the recorded node only. */
static weft_value *emit(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in)
{
    n->n_in = n_in;
    n->in = n->inline_in;
    n->after = WEFT__NO_NODE;
    for (uint32_t i = 0; i < n_in && i < 3; i++)
        n->inline_in[i] = weft__value_node(in[i]);
    if (all_weak(in, n_in)) {
        /* Arithmetic on weak scalars stays weak; a comparison's bool and
         * an explicit cast are strong. */
        weft_value *v = fold_now(cx, n, in, n_in);
        if (v && weft__op_is_elementwise(n->op) && n->op != WEFT__OP_CAST &&
            n->spec.dtype != WEFT_BOOL)
            weft__value_set_weak(v);
        return v;
    }
    if (!weft__ctx_is_eager(cx))
        return weft__ctx_record(cx, n, in, n_in);
    if (n->op == WEFT__OP_CONST)
        return weft__ctx_wrap_const(cx, n->attr.constant.value);
    weft_tensor *ts_s[3] = { NULL, NULL, NULL }, **ts = ts_s;
    if (n_in > 3 && !(ts = weft__malloc(sizeof *ts * n_in)))
        return weft__ctx_fail(cx, WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
    for (uint32_t i = 0; i < n_in; i++)
        ts[i] = weft__value_tensor(in[i]);
    weft_value *v = eager_eval(cx, n, ts);
    if (ts != ts_s)
        weft__free(ts);
    return v;
}

weft_value *weft__ops_emit(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(emit(cx, n, in, n_in));
}

weft_value *weft__ops_finish(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in)
{
    WEFT__SCOPE(cx);
    weft_spec specs_s[3] = { { 0 } }, *specs = specs_s;
    if (n_in > 3 && !(specs = weft__malloc(sizeof *specs * n_in)))
        return weft__ctx_fail(cx, WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
    for (uint32_t i = 0; i < n_in; i++)
        specs[i] = *weft__value_spec(in[i]);
    n->n_in = n_in;
    n->in = n->inline_in;
    int rc = weft__infer_spec(n, specs, &n->spec);
    if (specs != specs_s)
        weft__free(specs);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    return WEFT__KEEP(emit(cx, n, in, n_in));
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

/* A weak integer taking i32 must fit it (NumPy 2 refuses int32 + 2**40
 * too); a weak float taking f32 rounds, as any f64 to f32 conversion. */
static bool weak_fits(weft_ctx *cx, const char *fn, const weft_value *v, weft_dtype to)
{
    if (!weft__value_is_weak(v) || to != WEFT_I32 || dtype_of(v) != WEFT_I64)
        return true;
    int64_t x = *(const int64_t *)weft__value_konst(v)->data;
    if (x >= INT32_MIN && x <= INT32_MAX)
        return true;
    weft__ctx_fail(cx, WEFT_EDTYPE,
                   "%s: the constant %lld does not fit the i32 operand (use weft_const(cx, "
                   "WEFT_I64, v) or cast the operand)", fn, (long long)x);
    return false;
}

/* v as dtype to: a weak scalar becomes a weak constant of that dtype (no
 * cast node), anything else goes through weft_cast's conversion. */
static weft_value *coerce(weft_ctx *cx, weft_value *v, weft_dtype to)
{
    if (dtype_of(v) == to || !weft__value_is_weak(v))
        return convert(cx, v, to);
    weft__node n = { .op = WEFT__OP_CAST, .n_in = 1, .attr.cast.to = to };
    n.in = n.inline_in;
    n.inline_in[0] = weft__value_node(v);
    weft_value *c = fold_now(cx, &n, &v, 1);
    if (c)
        weft__value_set_weak(c);
    return c;
}

/* A rank-0 tensor on the caller's stack, for one element of up to 8 bytes. */
typedef struct stack_scalar {
    struct weft_tensor t;
    _Alignas(64) unsigned char data[64];
} stack_scalar;

/* Eagerly, whether n on in can skip the values of its conversions: not all
 * weak (that is folded, and stays weak), and every input already of its
 * dtype or a weak scalar, which stack_convert converts. */
static bool direct_eager(weft_ctx *cx, weft_value *const *in, uint32_t n_in,
                         const weft_dtype *dts)
{
    if (!weft__ctx_is_eager(cx) || all_weak(in, n_in))
        return false;
    for (uint32_t i = 0; i < n_in; i++)
        if (dtype_of(in[i]) != dts[i] && (!weft__value_is_weak(in[i]) ||
                                          !weft__ew_lookup(WEFT__OP_CAST, dtype_of(in[i]), dts[i])))
            return false;
    return true;
}

/* The weak scalar v as dtype `to` in s, by the cast loop a conversion
 * node runs (the same bits). */
static weft_tensor *stack_convert(const weft_value *v, weft_dtype to, stack_scalar *s)
{
    const weft_tensor *k = weft__value_konst(v);
    memset(&s->t, 0, sizeof s->t);
    s->t.refs = 1;
    s->t.dtype = to;
    s->t.numel = 1;
    s->t.nbytes = s->t.cap = weft_dtype_size(to);
    s->t.data = s->data;
    const void *src[1] = { k->data };
    int64_t stride[1] = { 0 };
    unsigned char step[1] = { 0 };
    weft__ew_lookup(WEFT__OP_CAST, k->dtype, to)(src, stride, step, s->data, 1, 1);
    return &s->t;
}

/* An op of up to three inputs whose weak scalars take their dtypes on the
 * stack: x * 2.0 eagerly made a converted constant (a tensor and a value)
 * and released it, 40% of the op. */
static weft_value *build_direct(weft_ctx *cx, weft__node *n, weft_value *const *in,
                                uint32_t n_in, const weft_dtype *dts)
{
    stack_scalar conv[3];
    weft_tensor *ts[3] = { NULL, NULL, NULL };
    n->n_in = n_in;
    n->in = n->inline_in;
    n->after = WEFT__NO_NODE;
    for (uint32_t i = 0; i < n_in; i++) {
        n->inline_in[i] = weft__value_node(in[i]);
        ts[i] = dtype_of(in[i]) == dts[i] ? weft__value_tensor(in[i])
                                          : stack_convert(in[i], dts[i], &conv[i]);
    }
    return eager_eval(cx, n, ts);
}

/* Infers n on inputs converted to dts, emits the conversions, then n. */
static weft_value *build(weft_ctx *cx, const char *fn, weft__node *n, weft_value **in,
                         uint32_t n_in, const weft_dtype *dts)
{
    if (infer(cx, n, in, n_in, dts) < 0)
        return NULL;
    for (uint32_t i = 0; i < n_in; i++)
        if (!weak_fits(cx, fn, in[i], dts[i]))
            return NULL;
    if (direct_eager(cx, in, n_in, dts))
        return build_direct(cx, n, in, n_in, dts);
    weft_value *given[3] = { NULL, NULL, NULL };
    for (uint32_t i = 0; i < n_in; i++) {
        given[i] = in[i];
        in[i] = coerce(cx, in[i], dts[i]);
        if (!in[i])
            return NULL;
    }
    weft_value *out = emit(cx, n, in, n_in);
    /* The conversions are this op's own: their handles (and eagerly their
     * tensors) end here rather than with the context. */
    for (uint32_t i = 0; i < n_in; i++)
        if (in[i] != given[i])
            weft_value_release(cx, in[i]);
    return out;
}

/* The dtype an elementwise op of class c computes in, from the promoted
 * dtype of its operands: the float functions take integers and bool as
 * f64. */
static weft_dtype class_dtype(weft__op op, weft_dtype dt)
{
    if (weft__ew_class_of(op) == WEFT__EW_FLOAT && !weft__dtype_is_float(dt))
        return WEFT_F64;
    return dt;
}

weft_dtype weft__ops_promoted_dtype(weft_value *const *in, uint32_t n)
{
    return promote_n((const weft_value *const *)in, n);
}

weft_dtype weft__ops_float_dtype(weft_value *const *in, uint32_t n)
{
    weft_dtype dt = promote_n((const weft_value *const *)in, n);
    return weft__dtype_is_float(dt) ? dt : WEFT_F64;
}

weft_value *weft__ops_checkf(weft_ctx *cx, weft_value *x, weft_value *condition,
                             const char *fmt, ...)
{
    char message[WEFT__CHECK_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return weft_check(cx, x, condition, message);
}

bool weft__ops_enter_two_outs(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n_in,
                              weft_value **outs, int *rc)
{
    if (outs)
        outs[0] = outs[1] = NULL;
    if (!weft__op_enter(cx, fn, in, n_in)) {
        *rc = cx ? weft_ctx_status(cx) : WEFT_EINVAL;
        return false;
    }
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: outs is NULL", fn);
        *rc = weft_ctx_status(cx);
        return false;
    }
    return true;
}

weft_value *weft__ops_as_dtype(weft_ctx *cx, weft_value *v, weft_dtype dt)
{
    return dtype_of(v) == dt ? v : weft_cast(cx, v, dt);
}

bool weft__ops_square_matrices(weft_ctx *cx, const char *fn, const char *name,
                               const weft_value *v)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->rank >= 2 && (s->dims[s->rank - 1] == WEFT_DIM_ANY ||
                         s->dims[s->rank - 2] == WEFT_DIM_ANY ||
                         s->dims[s->rank - 1] == s->dims[s->rank - 2]))
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s is not a square matrix [..., n, n] (rank known "
                   "while tracing)", fn, name, weft__spec_str(s, ss, sizeof ss));
    return false;
}

bool weft__ops_number(weft_ctx *cx, const char *fn, const char *name, const weft_value *v)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->dtype != WEFT_BOOL)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s is not a number", fn, name,
                   weft__spec_str(s, ss, sizeof ss));
    return false;
}

int weft__ops_known_rank(weft_ctx *cx, const char *fn, const char *name, const weft_value *v)
{
    int r = weft__value_spec(v)->rank;
    if (r == WEFT_RANK_ANY)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the rank of %s is unknown while tracing", fn, name);
    return r;
}

bool weft__ops_axis_in(weft_ctx *cx, const char *fn, const char *name, const weft_value *v,
                       int *axis)
{
    int r = weft__ops_known_rank(cx, fn, name, v);
    if (r < 0)
        return false;
    if (*axis < -r || *axis >= r) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is not in [%d, %d)", fn, *axis, -r, r);
        return false;
    }
    *axis += *axis < 0 ? r : 0;
    return true;
}

/* The logical ops take bool only; refused before any promotion, so the
 * message shows the operand as the caller passed it. */
bool weft__ops_all_bool(weft_ctx *cx, const char *fn, weft_value *const *in, uint32_t n_in)
{
    for (uint32_t i = 0; i < n_in; i++) {
        if (dtype_of(in[i]) == WEFT_BOOL)
            continue;
        char s[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: input %u is %s, not bool", fn, (unsigned)i,
                       weft__spec_str(weft__value_spec(in[i]), s, sizeof s));
        return false;
    }
    return true;
}

weft_value *weft__op_binary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (weft__ew_class_of(op) == WEFT__EW_LOGICAL && !weft__ops_all_bool(cx, fn, in, 2))
        return NULL;
    weft_dtype dt = class_dtype(op, promote(a, b));
    weft_dtype dts[2] = { dt, dt };
    weft__node n = { .op = op };
    return WEFT__KEEP(build(cx, fn, &n, in, 2, dts));
}

weft_value *weft__op_ternary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a,
                             weft_value *b, weft_value *c)
{
    WEFT__SCOPE(cx);
    weft_value *in[3] = { a, b, c };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    weft_dtype dt = class_dtype(op, promote_n((const weft_value *const *)in, 3));
    weft_dtype dts[3] = { dt, dt, dt };
    weft__node n = { .op = op };
    return WEFT__KEEP(build(cx, fn, &n, in, 3, dts));
}

static weft_value *matmul(weft_ctx *cx, const char *fn, weft_value *a, weft_value *b,
                          unsigned flags)
{
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (flags & ~(WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: unknown flags 0x%x", fn, flags);
    weft_dtype dt = promote(a, b);
    weft_dtype dts[2] = { dt, dt };
    weft__node n = { .op = WEFT__OP_MATMUL, .attr.matmul.flags = flags };
    return build(cx, fn, &n, in, 2, dts);
}

weft_value *weft_matmul_ex(weft_ctx *cx, weft_value *a, weft_value *b, unsigned flags)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(matmul(cx, "weft_matmul_ex", a, b, flags));
}

weft_value *weft_matmul(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(matmul(cx, "weft_matmul", a, b, 0));
}

weft_value *weft__op_unary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a)
{
    WEFT__SCOPE(cx);
    weft_value *in[1] = { a };
    if (!weft__op_enter(cx, fn, in, 1))
        return NULL;
    if (weft__ew_class_of(op) == WEFT__EW_LOGICAL && !weft__ops_all_bool(cx, fn, in, 1))
        return NULL;
    weft_dtype dt = class_dtype(op, dtype_of(a));
    weft__node n = { .op = op };
    return WEFT__KEEP(build(cx, fn, &n, in, 1, &dt));
}

WEFT__DEFINE_BINARY(add, ADD)
WEFT__DEFINE_BINARY(sub, SUB)
WEFT__DEFINE_BINARY(mul, MUL)
WEFT__DEFINE_BINARY(div, DIV)
WEFT__DEFINE_BINARY(mod, MOD)
WEFT__DEFINE_BINARY(pow, POW)
WEFT__DEFINE_BINARY(minimum, MINIMUM)
WEFT__DEFINE_BINARY(maximum, MAXIMUM)
WEFT__DEFINE_BINARY(eq, EQ)
WEFT__DEFINE_BINARY(ne, NE)
WEFT__DEFINE_BINARY(lt, LT)
WEFT__DEFINE_BINARY(le, LE)
WEFT__DEFINE_BINARY(gt, GT)
WEFT__DEFINE_BINARY(ge, GE)
WEFT__DEFINE_UNARY(neg, NEG)
WEFT__DEFINE_UNARY(abs, ABS)
WEFT__DEFINE_UNARY(sqrt, SQRT)
WEFT__DEFINE_UNARY(exp, EXP)
WEFT__DEFINE_UNARY(log, LOG)

weft_value *weft_cast(weft_ctx *cx, weft_value *a, weft_dtype to)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_cast", &a, 1))
        return NULL;
    if (weft_dtype_size(to) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_cast: unknown dtype %d", (int)to);
    if (dtype_of(a) == to)
        return WEFT__KEEP(weft__value_strong(cx, a));   /* a cast's result is strong */
    return WEFT__KEEP(convert(cx, a, to));
}

weft_value *weft_where(weft_ctx *cx, weft_value *cond, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    weft_value *in[3] = { cond, a, b };
    if (!weft__op_enter(cx, "weft_where", in, 3))
        return NULL;
    if (dtype_of(cond) != WEFT_BOOL) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "weft_where: the condition is %s, not bool",
                              weft__spec_str(weft__value_spec(cond), s, sizeof s));
    }
    weft_dtype dt = promote(a, b);
    weft_dtype dts[3] = { WEFT_BOOL, dt, dt };
    weft__node n = { .op = WEFT__OP_WHERE };
    return WEFT__KEEP(build(cx, "weft_where", &n, in, 3, dts));
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
    if (!weft__op_enter(cx, fn, in, 1))
        return NULL;
    weft__node n = { .op = op };
    n.attr.reduce = *ax;
    if (!reduce_axes(cx, fn, a, &n))
        return NULL;
    weft_dtype dt = dtype_of(a);
    if (float_only && !weft__dtype_is_float(dt))
        dt = WEFT_F64;
    return build(cx, fn, &n, in, 1, &dt);
}

/* The one-axis form of weft_sum, weft_mean and weft_reduce_max. */
static weft_value *reduce_one(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, int axis,
                              bool float_only)
{
    if (axis != WEFT_ALL_AXES && (axis < -WEFT_MAX_RANK || axis >= WEFT_MAX_RANK)) {
        if (!weft__op_enter(cx, fn, &a, 1))
            return NULL;
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range", fn, axis);
    }
    weft__node n = { .op = op };
    weft__reduce_set_axis(&n, axis);
    return reduce(cx, op, fn, a, &n.attr.reduce, float_only);
}

weft_value *weft_sum(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(reduce_one(cx, WEFT__OP_SUM, "weft_sum", a, axis, false));
}

weft_value *weft_mean(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(reduce_one(cx, WEFT__OP_MEAN, "weft_mean", a, axis, true));
}

weft_value *weft_reduce_max(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(reduce_one(cx, WEFT__OP_REDUCE_MAX, "weft_reduce_max", a, axis, false));
}

/* Variance as the mean of squared deviations from the mean (two passes,
 * NumPy's ddof = 0), in f64 for integer and bool inputs. */
static weft_value *variance(weft_ctx *cx, weft_value *a, const struct weft__reduce_axes *ax)
{
    if (!weft__dtype_is_float(dtype_of(a)))
        a = convert(cx, a, WEFT_F64);
    struct weft__reduce_axes kept = *ax;
    kept.keepdims = true;
    weft_value *d = weft_sub(cx, a, reduce(cx, WEFT__OP_MEAN, "weft_reduce", a, &kept, true));
    return reduce(cx, WEFT__OP_MEAN, "weft_reduce", weft_mul(cx, d, d), ax, true);
}

weft_value *weft_reduce(weft_ctx *cx, weft_reduction r, weft_value *a, const int *axes,
                        size_t n_axes, bool keepdims)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_reduce", &a, 1))
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
    case WEFT_R_SUM:  return WEFT__KEEP(reduce(cx, WEFT__OP_SUM, "weft_reduce", a, ax, false));
    case WEFT_R_MEAN: return WEFT__KEEP(reduce(cx, WEFT__OP_MEAN, "weft_reduce", a, ax, true));
    case WEFT_R_MAX:  return WEFT__KEEP(reduce(cx, WEFT__OP_REDUCE_MAX, "weft_reduce", a, ax,
                                               false));
    case WEFT_R_MIN:  return WEFT__KEEP(reduce(cx, WEFT__OP_REDUCE_MIN, "weft_reduce", a, ax,
                                               false));
    case WEFT_R_PROD: return WEFT__KEEP(reduce(cx, WEFT__OP_PROD, "weft_reduce", a, ax, false));
    /* any and all are the max and min of the values as bool. */
    case WEFT_R_ANY:
        return WEFT__KEEP(reduce(cx, WEFT__OP_REDUCE_MAX, "weft_reduce", convert(cx, a, WEFT_BOOL),
                                 ax, false));
    case WEFT_R_ALL:
        return WEFT__KEEP(reduce(cx, WEFT__OP_REDUCE_MIN, "weft_reduce", convert(cx, a, WEFT_BOOL),
                                 ax, false));
    case WEFT_R_VAR:  return WEFT__KEEP(variance(cx, a, ax));
    case WEFT_R_STD:  return WEFT__KEEP(weft_sqrt(cx, variance(cx, a, ax)));
    }
    return NULL;
}

weft_value *weft_reshape(weft_ctx *cx, weft_value *a, int rank, const int64_t *dims)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_reshape", &a, 1))
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
    return WEFT__KEEP(build(cx, "weft_reshape", &n, &a, 1, &dt));
}

/* Constants: a node of their own while tracing, a constant value when
 * eager.  Takes over the reference t. */
static weft_value *constant(weft_ctx *cx, weft_tensor *t)
{
    weft__node n = { .op = WEFT__OP_CONST, .attr.constant.value = t };
    weft__tensor_spec(t, &n.spec);
    return emit(cx, &n, NULL, 0);
}

static weft_value *const_scalar(weft_ctx *cx, weft_dtype dt, const void *v, bool weak)
{
    weft_tensor *t;
    int rc = weft_tensor_create(dt, 0, NULL, v, &t);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    weft_value *c = constant(cx, t);
    if (c && weak)
        weft__value_set_weak(c);
    return c;
}

bool weft__ops_float_rank(weft_ctx *cx, const char *fn, const weft_spec *s, int min_rank,
                          bool last_known)
{
    char ss[WEFT__SPEC_STR_MAX];
    if (s->dtype != WEFT_F32 && s->dtype != WEFT_F64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s is not f32 or f64", fn,
                       weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    if (min_rank > 0 && (s->rank == WEFT_RANK_ANY || s->rank < min_rank ||
                         (last_known && s->dims[s->rank - 1] < 0))) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has not a rank of %d or more%s known while "
                       "tracing", fn, weft__spec_str(s, ss, sizeof ss), min_rank,
                       last_known ? " and a last dim" : "");
        return false;
    }
    return true;
}

bool weft__ops_float_dtype_arg(weft_ctx *cx, const char *fn, weft_dtype dtype)
{
    if (dtype == WEFT_F32 || dtype == WEFT_F64)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not f32 or f64", fn,
                   weft_dtype_name(dtype) ? weft_dtype_name(dtype) : "?");
    return false;
}

weft_value *weft__ops_constant(weft_ctx *cx, const char *fn, weft_dtype dt, int rank,
                               const int64_t *dims, const void *data, weft_dtype cast_to)
{
    WEFT__SCOPE(cx);
    weft_tensor *t = NULL;
    int rc = weft_tensor_create(dt, rank, dims, data, &t);
    if (rc != 0)
        return weft__ctx_fail(cx, rc, "%s: %s", fn, weft_errmsg());
    weft_value *c = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    return WEFT__KEEP(dt == cast_to ? c : weft_cast(cx, c, cast_to));
}

weft_value *weft__value_strong(weft_ctx *cx, weft_value *v)
{
    WEFT__SCOPE(cx);
    if (!v || !weft__value_is_weak(v))   /* NULL: an earlier step failed */
        return WEFT__KEEP(v);
    const weft_tensor *k = weft__value_konst(v);
    return WEFT__KEEP(const_scalar(cx, k->dtype, k->data, false));
}

weft_value *weft_const_i64(weft_ctx *cx, int64_t v)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_const_i64", NULL, 0))
        return NULL;
    return WEFT__KEEP(const_scalar(cx, WEFT_I64, &v, true));
}

weft_value *weft_const_f64(weft_ctx *cx, double v)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_const_f64", NULL, 0))
        return NULL;
    return WEFT__KEEP(const_scalar(cx, WEFT_F64, &v, true));
}

weft_value *weft_const(weft_ctx *cx, weft_dtype dt, double v)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_const", NULL, 0))
        return NULL;
    union { uint8_t b; int32_t i32; int64_t i64; float f32; double f64; } u;
    bool exact = true;
    switch (dt) {
    case WEFT_BOOL:
        exact = v == 0 || v == 1;
        u.b = v != 0;
        break;
    case WEFT_I32:
        exact = v >= -2147483648.0 && v <= 2147483647.0 && v == trunc(v);
        u.i32 = exact ? (int32_t)v : 0;
        break;
    case WEFT_I64:
        exact = v >= -9223372036854775808.0 && v < 9223372036854775808.0 && v == trunc(v);
        u.i64 = exact ? (int64_t)v : 0;
        break;
    case WEFT_F32:
        u.f32 = (float)v;   /* rounds; beyond the f32 range: +-inf */
        break;
    case WEFT_F64:
        u.f64 = v;
        break;
    default:
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_const: unknown dtype %d", (int)dt);
    }
    if (!exact)
        return weft__ctx_fail(cx, WEFT_EINVAL,
                              "weft_const: %.17g is not exactly representable as %s", v,
                              weft_dtype_name(dt));
    return WEFT__KEEP(const_scalar(cx, dt, &u, false));
}

weft_value *weft_const_tensor(weft_ctx *cx, weft_tensor *t)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_const_tensor", NULL, 0))
        return NULL;
    if (!t)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_const_tensor: NULL tensor");
    return WEFT__KEEP(constant(cx, weft_tensor_retain(t)));
}

weft_value *weft_fill(weft_ctx *cx, weft_dtype dt, int rank, const int64_t *dims, double value)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_fill", NULL, 0))
        return NULL;
    if (weft_dtype_size(dt) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: unknown dtype %d", (int)dt);
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: rank %d is outside 0..%d", rank,
                              WEFT_MAX_RANK);
    if (rank > 0 && !dims)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: NULL dims for rank %d", rank);
    for (int i = 0; i < rank; i++) {
        /* A dim read from a traced value's spec: the fill-likes take it. */
        if (dims[i] == WEFT_DIM_ANY && !weft__ctx_is_eager(cx))
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: dim %d is unknown while tracing; "
                                  "weft_fill_like, weft_zeros_like or weft_ones_like of a tensor "
                                  "of that shape build it", i);
        if (dims[i] < 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: dim %d is negative (%lld)", i,
                                  (long long)dims[i]);
    }
    int64_t numel;
    if (!weft__numel_checked(rank, dims, weft_dtype_size(dt), &numel))
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_fill: the shape overflows the address space");
    weft__node n = { .op = WEFT__OP_FILL, .attr.fill.value = value };
    n.spec.dtype = dt;
    n.spec.rank = rank;
    for (int i = 0; i < rank; i++)
        n.spec.dims[i] = dims[i];
    return WEFT__KEEP(emit(cx, &n, NULL, 0));
}

weft_value *weft_range(weft_ctx *cx, weft_dtype dt, int64_t start, int64_t limit, int64_t delta)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_range", NULL, 0))
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
    return WEFT__KEEP(emit(cx, &n, NULL, 0));
}
