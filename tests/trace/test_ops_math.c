/* The math ops (tanh ... clip, floordiv, truediv, truncatediv, truncatemod,
 * the logical ops, erf ...
 * cosh, atan2, is_nan, is_inf, is_finite) through the public API: each against worked examples, run eagerly
 * (WEFT_RUN_EAGERLY), traced and from the cache, the three bit for bit
 * equal; their dtype rules and bad inputs in both modes; and what the
 * compiler does with them (folding, CSE, fusion). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(ops_math, .init = setup, .fini = teardown, .timeout = 30);

typedef weft_value *(*un_fn)(weft_ctx *, weft_value *);
typedef weft_value *(*bin_fn)(weft_ctx *, weft_value *, weft_value *);

/* One op applied to the arguments: a unary or binary op, or clip. */
typedef struct op_case {
    un_fn un;
    bin_fn bin;
    bool clip;
} op_case;

static int body_op(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const op_case *c = user;
    if (c->un)
        outs[0] = c->un(cx, args[0]);
    else if (c->bin)
        outs[0] = c->bin(cx, args[0], args[1]);
    else
        outs[0] = weft_clip(cx, args[0], args[1], args[2]);
    return weft_ctx_status(cx);
}

static size_t n_args_of(const op_case *c)
{
    return c->un ? 1 : c->bin ? 2 : 3;
}

static weft_tensor *tensor(weft_dtype dt, int64_t n, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, 1, &n, data, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_function *make(const op_case *c, unsigned flags)
{
    weft_function_desc d = { .name = "op", .body = body_op, .user = (void *)c,
                             .n_args = n_args_of(c), .n_outs = 1, .flags = flags };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

/* Runs c on in eagerly, traced and cached; checks that the three agree bit
 * for bit and returns the eager result. */
static weft_tensor *run(const op_case *c, weft_tensor *const *in)
{
    size_t n = n_args_of(c);
    weft_arg args[3];
    for (size_t i = 0; i < n; i++)
        args[i] = weft_arg_tensor(in[i]);
    weft_function *fe = make(c, WEFT_RUN_EAGERLY), *ft = make(c, 0);
    weft_tensor *e = NULL;
    cr_assert_eq(weft_function_call(fe, args, n, &e, 1), 0, "eager: %s", weft_errmsg());
    for (int call = 0; call < 2; call++) {
        weft_tensor *t = NULL;
        cr_assert_eq(weft_function_call(ft, args, n, &t, 1), 0, "traced: %s", weft_errmsg());
        cr_assert_eq(weft_tensor_dtype(t), weft_tensor_dtype(e));
        cr_assert_eq(weft_tensor_numel(t), weft_tensor_numel(e));
        size_t bytes = (size_t)weft_tensor_numel(e) * weft_dtype_size(weft_tensor_dtype(e));
        cr_assert(memcmp(weft_tensor_data(t), weft_tensor_data(e), bytes) == 0,
                  "call %d: traced and eager differ", call);
        weft_tensor_release(t);
    }
    cr_assert_eq(weft_function_tracing_count(ft), 1);
    weft_function_destroy(&fe);
    weft_function_destroy(&ft);
    return e;
}

/* Runs c on in in both modes and expects code with `what` in the message. */
static void refused(const op_case *c, weft_tensor *const *in, int code, const char *what)
{
    size_t n = n_args_of(c);
    weft_arg args[3];
    for (size_t i = 0; i < n; i++)
        args[i] = weft_arg_tensor(in[i]);
    for (int mode = 0; mode < 2; mode++) {
        weft_function *f = make(c, mode ? 0 : WEFT_RUN_EAGERLY);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, args, n, &out, 1), code, "%s mode: %s",
                     mode ? "traced" : "eager", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), what), "%s mode: \"%s\" lacks \"%s\"",
                  mode ? "traced" : "eager", weft_errmsg(), what);
        cr_assert_null(out);
        weft_function_destroy(&f);
    }
}

/* Same value, NaN matching NaN and the sign of zero checked; within rel
 * (relative) for results of libm functions. */
static void expect_f64(double got, double want, double rel, const char *what, size_t i)
{
    if (isnan(want)) {
        cr_assert(isnan(got), "%s[%zu] = %.17g, expected NaN", what, i, got);
    } else if (want == 0 || isinf(want) || rel == 0) {
        cr_assert(got == want && !!signbit(got) == !!signbit(want), "%s[%zu] = %.17g, expected %.17g",
                  what, i, got, want);
    } else {
        cr_assert(fabs(got - want) <= rel * fabs(want), "%s[%zu] = %.17g, expected %.17g", what, i,
                  got, want);
    }
}

static void check(weft_tensor *t, weft_dtype dt, const double *want, size_t n, double rel,
                  const char *what)
{
    cr_assert_eq(weft_tensor_dtype(t), dt, "%s: dtype %s, expected %s", what,
                 weft_dtype_name(weft_tensor_dtype(t)), weft_dtype_name(dt));
    cr_assert_eq(weft_tensor_numel(t), (int64_t)n, "%s: numel", what);
    const void *p = weft_tensor_data(t);
    for (size_t i = 0; i < n; i++) {
        double got = 0;
        switch (dt) {
        case WEFT_BOOL: got = ((const uint8_t *)p)[i]; break;
        case WEFT_I32: got = ((const int32_t *)p)[i]; break;
        case WEFT_I64: got = (double)((const int64_t *)p)[i]; break;
        case WEFT_F32: got = ((const float *)p)[i]; break;
        case WEFT_F64: got = ((const double *)p)[i]; break;
        }
        expect_f64(got, want[i], rel, what, i);
    }
    weft_tensor_release(t);
}

#define N(a) (sizeof(a) / sizeof(a)[0])

/* Runs a unary op on an f32 and an f64 copy of x and checks both. */
static void unary_float(un_fn op, const double *x, const double *want, size_t n, const char *what)
{
    float xf[16];
    cr_assert(n <= 16);
    for (size_t i = 0; i < n; i++)
        xf[i] = (float)x[i];
    op_case c = { .un = op };
    weft_tensor *t64 = tensor(WEFT_F64, (int64_t)n, x), *t32 = tensor(WEFT_F32, (int64_t)n, xf);
    check(run(&c, &t64), WEFT_F64, want, n, 1e-15, what);
    double want32[16];
    for (size_t i = 0; i < n; i++)
        want32[i] = (float)want[i];
    check(run(&c, &t32), WEFT_F32, want32, n, 2e-7, what);
    weft_tensor_release(t64);
    weft_tensor_release(t32);
}

Test(ops_math, float_functions)
{
    const double pi = 3.14159265358979323846;
    {
        const double x[] = {0, 0.5, -1, 20, -INFINITY, NAN};
        const double w[] = {0, 0.46211715726000974, -0.76159415595576489, 1, -1, NAN};
        unary_float(weft_tanh, x, w, N(x), "tanh");
    }
    {
        const double x[] = {0, 2, -2, 800, -800, NAN};
        const double w[] = {0.5, 0.88079707797788231, 0.11920292202211755, 1, 0, NAN};
        unary_float(weft_sigmoid, x, w, N(x), "sigmoid");
    }
    {
        const double x[] = {0, pi / 6, -pi / 2, INFINITY};
        const double w[] = {0, 0.49999999999999994, -1, NAN};
        unary_float(weft_sin, x, w, N(x), "sin");
    }
    {
        const double x[] = {0, pi / 3, pi};
        const double w[] = {1, 0.50000000000000011, -1};
        unary_float(weft_cos, x, w, N(x), "cos");
    }
    {
        const double x[] = {4, 0.25, 0, -0.0, -1, INFINITY};
        const double w[] = {0.5, 2, INFINITY, -INFINITY, NAN, 0};
        unary_float(weft_rsqrt, x, w, N(x), "rsqrt");
    }
    {
        /* Exact near 0, where log(1 + x) and exp(x) - 1 lose every digit. */
        const double x[] = {0, 1e-10, -1, 1, -0.0};
        const double w[] = {0, 9.9999999995000004e-11, -INFINITY, 0.69314718055994531, -0.0};
        unary_float(weft_log1p, x, w, N(x), "log1p");
        const double we[] = {0, 1.00000000005e-10, -0.63212055882855767, 1.7182818284590453, -0.0};
        unary_float(weft_expm1, x, we, N(x), "expm1");
    }
}

Test(ops_math, rounding_sign_relu_square)
{
    const double x[] = {-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 2.4, 2.6, -INFINITY, NAN};
    const double wf[] = {-3, -2, -1, -0.0, 0, 1, 2, 2, 2, -INFINITY, NAN};
    const double wc[] = {-2, -1, -0.0, -0.0, 1, 2, 3, 3, 3, -INFINITY, NAN};
    /* Half to even, as TensorFlow's round and NumPy's around. */
    const double wr[] = {-2, -2, -0.0, -0.0, 0, 2, 2, 2, 3, -INFINITY, NAN};
    const double ws[] = {-1, -1, -1, 0, 1, 1, 1, 1, 1, -1, NAN};
    const double wl[] = {0, 0, 0, 0, 0.5, 1.5, 2.5, 2.4, 2.6, 0, NAN};
    const double wq[] = {6.25, 2.25, 0.25, 0, 0.25, 2.25, 6.25, 5.76, 6.76, INFINITY, NAN};
    unary_float(weft_floor, x, wf, N(x), "floor");
    unary_float(weft_ceil, x, wc, N(x), "ceil");
    unary_float(weft_round, x, wr, N(x), "round");
    unary_float(weft_sign, x, ws, N(x), "sign");
    unary_float(weft_relu, x, wl, N(x), "relu");
    unary_float(weft_square, x, wq, N(x), "square");

    /* Integers keep their dtype: floor/ceil/round are the identity, square
     * wraps, relu and sign as for floats. */
    const int32_t xi[] = {INT32_MIN, -7, 0, 5, 46341};
    weft_tensor *ti = tensor(WEFT_I32, 5, xi);
    const double id[] = {INT32_MIN, -7, 0, 5, 46341};
    const double wsq[] = {0, 49, 0, 25, -2147479015.0}; /* 46341^2 = 2^31 + 4633 */
    const double wsg[] = {-1, -1, 0, 1, 1}, wrl[] = {0, 0, 0, 5, 46341};
    check(run(&(op_case){ .un = weft_floor }, &ti), WEFT_I32, id, 5, 0, "floor i32");
    check(run(&(op_case){ .un = weft_ceil }, &ti), WEFT_I32, id, 5, 0, "ceil i32");
    check(run(&(op_case){ .un = weft_round }, &ti), WEFT_I32, id, 5, 0, "round i32");
    check(run(&(op_case){ .un = weft_square }, &ti), WEFT_I32, wsq, 5, 0, "square i32");
    check(run(&(op_case){ .un = weft_sign }, &ti), WEFT_I32, wsg, 5, 0, "sign i32");
    check(run(&(op_case){ .un = weft_relu }, &ti), WEFT_I32, wrl, 5, 0, "relu i32");
    weft_tensor_release(ti);
    const int64_t xl[] = {INT64_MIN, -3, 0, 8};
    weft_tensor *tl = tensor(WEFT_I64, 4, xl);
    const double wsl[] = {-1, -1, 0, 1};
    check(run(&(op_case){ .un = weft_sign }, &tl), WEFT_I64, wsl, 4, 0, "sign i64");
    weft_tensor_release(tl);
}

/* The float functions compute integers and bool in f64 (NumPy's rule). */
Test(ops_math, float_functions_of_integers_are_f64)
{
    const int32_t xi[] = {0, 1, 4};
    const uint8_t xb[] = {0, 1, 1};
    weft_tensor *ti = tensor(WEFT_I32, 3, xi), *tb = tensor(WEFT_BOOL, 3, xb);
    const double wt[] = {0, 0.76159415595576489, 0.99932929973906703};
    check(run(&(op_case){ .un = weft_tanh }, &ti), WEFT_F64, wt, 3, 1e-15, "tanh i32");
    const double wr[] = {INFINITY, 1, 0.5};
    check(run(&(op_case){ .un = weft_rsqrt }, &ti), WEFT_F64, wr, 3, 0, "rsqrt i32");
    const double wsb[] = {0.5, 0.7310585786300049, 0.7310585786300049};
    check(run(&(op_case){ .un = weft_sigmoid }, &tb), WEFT_F64, wsb, 3, 1e-15, "sigmoid bool");
    weft_tensor_release(ti);
    weft_tensor_release(tb);
}

Test(ops_math, floordiv_and_truediv)
{
    /* Python's //: 1 // 0.1 is 9.0 (floor(1 / 0.1) would be 10), and
     * a // b * b + a % b == a. */
    const double a[] = {7, -7, 7, -7, 1, 7.5, 0, -0.0, 1, -1, 0, INFINITY};
    const double b[] = {2, 2, -2, -2, 0.1, 2, 5, 5, 0, 0, 0, 2};
    const double w[] = {3, -4, -4, 3, 9, 3, 0, -0.0, INFINITY, -INFINITY, NAN, NAN};
    weft_tensor *in[2] = { tensor(WEFT_F64, N(a), a), tensor(WEFT_F64, N(b), b) };
    op_case fd = { .bin = weft_floordiv };
    check(run(&fd, in), WEFT_F64, w, N(a), 0, "floordiv f64");
    weft_tensor *q = run(&fd, in), *r = run(&(op_case){ .bin = weft_mod }, in);
    for (size_t i = 0; i < 8; i++) {
        double qi = ((const double *)weft_tensor_data(q))[i], ri = ((const double *)weft_tensor_data(r))[i];
        cr_assert_eq(qi * b[i] + ri, a[i], "%g // %g * %g + %g %% %g", a[i], b[i], b[i], a[i], b[i]);
    }
    weft_tensor_release(q);
    weft_tensor_release(r);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    float af[] = {7, -7, 1}, bf[] = {2, 2, 0.1f};
    in[0] = tensor(WEFT_F32, 3, af);
    in[1] = tensor(WEFT_F32, 3, bf);
    const double wf[] = {3, -4, 9};
    check(run(&fd, in), WEFT_F32, wf, 3, 0, "floordiv f32");
    /* f32 stays f32 under truediv. */
    const double wt[] = {3.5, -3.5, 1.0f / 0.1f};
    check(run(&(op_case){ .bin = weft_truediv }, in), WEFT_F32, wt, 3, 0, "truediv f32");
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);

    /* Integers: floordiv is div (0 for a zero divisor); truediv is f64. */
    const int32_t ai[] = {7, -7, 7, -7, 5, INT32_MIN}, bi[] = {2, 2, -2, -2, 0, -1};
    in[0] = tensor(WEFT_I32, 6, ai);
    in[1] = tensor(WEFT_I32, 6, bi);
    const double wi[] = {3, -4, -4, 3, 0, INT32_MIN};
    check(run(&fd, in), WEFT_I32, wi, 6, 0, "floordiv i32");
    check(run(&(op_case){ .bin = weft_div }, in), WEFT_I32, wi, 6, 0, "div i32");
    const double wti[] = {3.5, -3.5, -3.5, 3.5, INFINITY, 2147483648.0};
    check(run(&(op_case){ .bin = weft_truediv }, in), WEFT_F64, wti, 6, 0, "truediv i32");
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
}

/* C's / and %: the quotient rounds toward zero, the remainder keeps a's
 * sign, and q * b + r == a on integers; div's zero divisor and MIN / -1
 * rules; floats trunc(a / b) and fmod. */
Test(ops_math, truncatediv_and_truncatemod)
{
    op_case td = { .bin = weft_truncatediv }, tm = { .bin = weft_truncatemod };
    const int32_t ai[] = {7, -7, 7, -7, 6, -6, 5, INT32_MIN, INT32_MIN, INT32_MAX, 0, 3};
    const int32_t bi[] = {2, 2, -2, -2, 3, 3, 0, -1, 2, -7, 5, 4};
    weft_tensor *in[2] = { tensor(WEFT_I32, N(ai), ai), tensor(WEFT_I32, N(bi), bi) };
    const double wq[] = {3, -3, -3, 3, 2, -2, 0, INT32_MIN, -1073741824, -306783378, 0, 0};
    const double wr[] = {1, -1, 1, -1, 0, 0, 0, 0, 0, 1, 0, 3};
    check(run(&td, in), WEFT_I32, wq, N(ai), 0, "truncatediv i32");
    check(run(&tm, in), WEFT_I32, wr, N(ai), 0, "truncatemod i32");
    weft_tensor *q = run(&td, in), *r = run(&tm, in);
    for (size_t i = 0; i < N(ai); i++) {
        if (bi[i] == 0 || bi[i] == -1)
            continue;
        int32_t qi = ((const int32_t *)weft_tensor_data(q))[i];
        int32_t ri = ((const int32_t *)weft_tensor_data(r))[i];
        cr_assert_eq(qi * bi[i] + ri, ai[i], "%d / %d * %d + %d %% %d", ai[i], bi[i], bi[i],
                     ai[i], bi[i]);
    }
    weft_tensor_release(q);
    weft_tensor_release(r);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    /* i64 beyond i32's range. */
    const int64_t al[] = {-9000000000007, INT64_MIN, 9000000000007};
    const int64_t bl[] = {1000000000000, -1, -1000000000000};
    in[0] = tensor(WEFT_I64, 3, al);
    in[1] = tensor(WEFT_I64, 3, bl);
    weft_tensor *ql = run(&td, in), *rl = run(&tm, in);
    const int64_t wql[] = {-9, INT64_MIN, -9}, wrl[] = {-7, 0, 7};
    cr_assert_eq(weft_tensor_dtype(ql), WEFT_I64);
    cr_assert(memcmp(weft_tensor_data(ql), wql, sizeof wql) == 0, "truncatediv i64");
    cr_assert(memcmp(weft_tensor_data(rl), wrl, sizeof wrl) == 0, "truncatemod i64");
    weft_tensor_release(ql);
    weft_tensor_release(rl);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    /* Floats: trunc(a / b) and fmod(a, b). */
    const double af[] = {7, -7, 7.5, -7.5, 1, 5, -5, 0, INFINITY, 3};
    const double bf[] = {2, 2, -2, -2, 0.1, 0, 0, 0, 2, INFINITY};
    in[0] = tensor(WEFT_F64, N(af), af);
    in[1] = tensor(WEFT_F64, N(bf), bf);
    const double wqf[] = {3, -3, -3, 3, 10, INFINITY, -INFINITY, NAN, INFINITY, 0};
    const double wrf[] = {1, -1, 1.5, -1.5, fmod(1, 0.1), NAN, NAN, NAN, NAN, 3};
    check(run(&td, in), WEFT_F64, wqf, N(af), 0, "truncatediv f64");
    check(run(&tm, in), WEFT_F64, wrf, N(af), 0, "truncatemod f64");
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    float a32[] = {-7, 7.5f}, b32[] = {2, -2};
    in[0] = tensor(WEFT_F32, 2, a32);
    in[1] = tensor(WEFT_F32, 2, b32);
    const double wq32[] = {-3, -3}, wr32[] = {-1, 1.5};
    check(run(&td, in), WEFT_F32, wq32, 2, 0, "truncatediv f32");
    check(run(&tm, in), WEFT_F32, wr32, 2, 0, "truncatemod f32");
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
}

/* nextafter steps one ulp toward x2 (C's, in the operand's dtype); rint
 * is round, half to even. */
Test(ops_math, nextafter_and_rint)
{
    op_case na = { .bin = weft_nextafter };
    const double a[] = {1, 1, 0, 0, 2, -1, INFINITY, DBL_MAX, NAN, 1};
    const double b[] = {2, 0, 1, -1, 2, -INFINITY, 0, INFINITY, 1, NAN};
    weft_tensor *in[2] = { tensor(WEFT_F64, N(a), a), tensor(WEFT_F64, N(b), b) };
    const double w[] = {1 + DBL_EPSILON, 1 - DBL_EPSILON / 2, DBL_TRUE_MIN,
                        -DBL_TRUE_MIN, 2, -1 - DBL_EPSILON, DBL_MAX, INFINITY, NAN,
                        NAN};
    check(run(&na, in), WEFT_F64, w, N(a), 0, "nextafter f64");
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    const float af[] = {1, 1, 0}, bf[] = {2, 0, -1};
    in[0] = tensor(WEFT_F32, 3, af);
    in[1] = tensor(WEFT_F32, 3, bf);
    const double wf[] = {1 + FLT_EPSILON, 1 - FLT_EPSILON / 2, -(double)FLT_TRUE_MIN};
    check(run(&na, in), WEFT_F32, wf, 3, 0, "nextafter f32");
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    const double r[] = {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 1e300};
    const double wr[] = {0, 2, 2, -0.0, -2, 2, -3, 1e300};
    in[0] = tensor(WEFT_F64, N(r), r);
    check(run(&(op_case){ .un = weft_rint }, in), WEFT_F64, wr, N(r), 0, "rint");
    weft_tensor_release(in[0]);
}

Test(ops_math, logical_ops)
{
    const uint8_t a[] = {0, 0, 1, 1}, b[] = {0, 1, 0, 1};
    weft_tensor *in[2] = { tensor(WEFT_BOOL, 4, a), tensor(WEFT_BOOL, 4, b) };
    const double wa[] = {0, 0, 0, 1}, wo[] = {0, 1, 1, 1}, wn[] = {1, 1, 0, 0};
    check(run(&(op_case){ .bin = weft_logical_and }, in), WEFT_BOOL, wa, 4, 0, "and");
    check(run(&(op_case){ .bin = weft_logical_or }, in), WEFT_BOOL, wo, 4, 0, "or");
    check(run(&(op_case){ .un = weft_logical_not }, in), WEFT_BOOL, wn, 4, 0, "not");
    /* Broadcasting a scalar. */
    const uint8_t t[] = {1};
    weft_tensor *one = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_BOOL, 0, NULL, t, &one), 0);
    weft_tensor *in2[2] = { in[0], one };
    const double wb[] = {0, 0, 1, 1};
    check(run(&(op_case){ .bin = weft_logical_and }, in2), WEFT_BOOL, wb, 4, 0, "and scalar");
    weft_tensor_release(one);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
}

Test(ops_math, clip)
{
    const float x[] = {-2, 0.25f, 3, NAN, 1};
    const float lo[] = {0}, hi[] = {1};
    weft_tensor *in[3] = { tensor(WEFT_F32, 5, x), tensor(WEFT_F32, 1, lo), tensor(WEFT_F32, 1, hi) };
    const double w[] = {0, 0.25, 1, NAN, 1};
    check(run(&(op_case){ .clip = true }, in), WEFT_F32, w, 5, 0, "clip");
    /* lo > hi gives hi, as NumPy's clip. */
    weft_tensor *swapped[3] = { in[0], in[2], in[1] };
    const double ws[] = {0, 0, 0, NAN, 0};
    check(run(&(op_case){ .clip = true }, swapped), WEFT_F32, ws, 5, 0, "clip lo > hi");
    for (int i = 0; i < 3; i++)
        weft_tensor_release(in[i]);
}

/* Weak bounds take the tensor's dtype: an i32 clipped by constants stays
 * i32, an f32 stays f32. */
static int body_clip_consts(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_clip(cx, args[0], weft_const_i64(cx, -1), weft_const_i64(cx, 1));
    outs[1] = weft_clip(cx, args[1], weft_const_f64(cx, 0.0), weft_const_f64(cx, 0.5));
    return weft_ctx_status(cx);
}

Test(ops_math, clip_with_weak_bounds)
{
    const int32_t xi[] = {-5, 0, 5};
    const float xf[] = {-1, 0.25f, 0.75f};
    weft_tensor *ti = tensor(WEFT_I32, 3, xi), *tf = tensor(WEFT_F32, 3, xf);
    weft_arg args[2] = { weft_arg_tensor(ti), weft_arg_tensor(tf) };
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "clipc", .body = body_clip_consts, .n_args = 2,
                                 .n_outs = 2, .flags = mode ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0);
        weft_tensor *o[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, args, 2, o, 2), 0, "%s", weft_errmsg());
        const double wi[] = {-1, 0, 1}, wf[] = {0, 0.25, 0.5};
        check(o[0], WEFT_I32, wi, 3, 0, "clip i32");
        check(o[1], WEFT_F32, wf, 3, 0, "clip f32");
        weft_function_destroy(&f);
    }
    weft_tensor_release(ti);
    weft_tensor_release(tf);
}

Test(ops_math, bad_inputs_eager_and_traced)
{
    const uint8_t b[] = {0, 1, 1};
    const float f[] = {1, 2, 3}, f4[] = {1, 2, 3, 4};
    weft_tensor *tb = tensor(WEFT_BOOL, 3, b), *tf = tensor(WEFT_F32, 3, f),
                *tf4 = tensor(WEFT_F32, 4, f4);
    /* Arithmetic on bool is refused, the float functions are not. */
    weft_tensor *bb[2] = { tb, tb };
    refused(&(op_case){ .bin = weft_add }, bb, WEFT_EDTYPE, "weft_add: bool[3] and bool[3] are bool");
    refused(&(op_case){ .bin = weft_floordiv }, bb, WEFT_EDTYPE, "weft_floordiv: bool[3] and bool[3] are bool");
    refused(&(op_case){ .bin = weft_truncatediv }, bb, WEFT_EDTYPE,
            "weft_truncatediv: bool[3] and bool[3] are bool");
    refused(&(op_case){ .bin = weft_truncatemod }, bb, WEFT_EDTYPE,
            "weft_truncatemod: bool[3] and bool[3] are bool");
    refused(&(op_case){ .un = weft_neg }, bb, WEFT_EDTYPE, "weft_neg: bool[3] is bool");
    refused(&(op_case){ .un = weft_square }, bb, WEFT_EDTYPE, "weft_square: bool[3] is bool");
    refused(&(op_case){ .un = weft_round }, bb, WEFT_EDTYPE, "weft_round: bool[3] is bool");
    /* The logical ops take bool only, named as the caller passed it. */
    weft_tensor *fb[2] = { tf, tb };
    refused(&(op_case){ .bin = weft_logical_and }, fb, WEFT_EDTYPE,
            "weft_logical_and: input 0 is f32[3], not bool");
    refused(&(op_case){ .un = weft_logical_not }, fb, WEFT_EDTYPE,
            "weft_logical_not: input 0 is f32[3], not bool");
    /* Shapes. */
    weft_tensor *ff[3] = { tf, tf4, tf };
    refused(&(op_case){ .bin = weft_truediv }, ff, WEFT_ESHAPE,
            "weft_truediv: f32[3] and f32[4] do not broadcast");
    refused(&(op_case){ .bin = weft_floordiv }, ff, WEFT_ESHAPE,
            "weft_floordiv: f32[3] and f32[4] do not broadcast");
    refused(&(op_case){ .clip = true }, ff, WEFT_ESHAPE, "do not broadcast");
    weft_tensor_release(tb);
    weft_tensor_release(tf);
    weft_tensor_release(tf4);
}

static weft_value *id_value(weft_ctx *cx, weft_value *a) { (void)cx; return a; }

static int body_null_inputs(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    (void)user;
    un_fn ops[] = { weft_tanh, weft_sigmoid, weft_relu, weft_sin, weft_cos, weft_floor,
                    weft_ceil, weft_round, weft_rsqrt, weft_square, weft_sign, weft_log1p,
                    weft_expm1, weft_logical_not, weft_erf, weft_erfc, weft_tan, weft_asin,
                    weft_acos, weft_atan, weft_sinh, weft_cosh, weft_is_nan, weft_is_inf,
                    weft_is_finite };
    for (size_t i = 0; i < N(ops); i++)
        if (ops[i](cx, NULL) != NULL)
            return -1;
    if (weft_clip(cx, NULL, NULL, NULL) || weft_truediv(cx, NULL, NULL) ||
        weft_floordiv(cx, NULL, NULL) || weft_logical_or(cx, NULL, NULL) ||
        weft_atan2(cx, NULL, NULL))
        return -1;
    outs[0] = id_value(cx, args[0]);
    return weft_ctx_status(cx);
}

Test(ops_math, null_inputs_and_contexts)
{
    cr_assert_null(weft_tanh(NULL, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_tanh: NULL context"), "%s", weft_errmsg());
    cr_assert_null(weft_clip(NULL, NULL, NULL, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_clip: NULL context"), "%s", weft_errmsg());
    cr_assert_null(weft_logical_and(NULL, NULL, NULL));
    cr_assert_null(weft_atan2(NULL, NULL, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_atan2: NULL context"), "%s", weft_errmsg());
    cr_assert_null(weft_is_nan(NULL, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_is_nan: NULL context"), "%s", weft_errmsg());
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_tanh(cx, NULL));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_tanh: input 0 is NULL"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    weft_function_desc d = { .name = "nulls", .body = body_null_inputs, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    const float x[] = {1};
    weft_tensor *t = tensor(WEFT_F32, 1, x), *out = NULL;
    weft_arg a = weft_arg_tensor(t);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_tanh: input 0 is NULL"), "%s", weft_errmsg());
    weft_function_destroy(&f);
    weft_tensor_release(t);
}

/* ---- The compiler: folding, CSE and fusion of the new ops. ---- */

/* relu(tanh(x) * 2) + tanh(x) + sign(c) with c a constant tensor:
 * sign(c) folds, the two tanh merge, and the elementwise chain fuses. */
static int body_chain(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_value *x = args[0];
    weft_value *c = weft_const_tensor(cx, user);
    weft_value *a = weft_relu(cx, weft_mul(cx, weft_tanh(cx, x), weft_const_f64(cx, 2.0)));
    weft_value *b = weft_add(cx, a, weft_tanh(cx, x));
    outs[0] = weft_add(cx, b, weft_sign(cx, c));
    return weft_ctx_status(cx);
}

Test(ops_math, compiler_folds_merges_and_fuses)
{
    const float cv[] = {-3, 0, 5};
    weft_tensor *c = tensor(WEFT_F32, 3, cv);
    const float xv[] = {-1, 0.5f, 2};
    weft_tensor *x = tensor(WEFT_F32, 3, xv), *out = NULL, *oe = NULL;
    weft_arg a = weft_arg_tensor(x);
    weft_function_desc d = { .name = "chain", .body = body_chain, .user = c, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL, *fe = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    d.flags = WEFT_RUN_EAGERLY;
    cr_assert_eq(weft_function_create(rt, &d, &fe), 0);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_function_call(fe, &a, 1, &oe, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_dtype(out), WEFT_F32, "the weak 2.0 keeps f32");
    cr_assert(memcmp(weft_tensor_data(out), weft_tensor_data(oe), 3 * sizeof(float)) == 0);
    const float *o = weft_tensor_data(out), *xr = weft_tensor_data(x);
    for (int i = 0; i < 3; i++) {
        float t = tanhf(xr[i]), r = t * 2.0f > 0 ? t * 2.0f : 0.0f;
        float s = cv[i] > 0 ? 1.0f : cv[i] < 0 ? -1.0f : 0.0f;
        cr_assert_eq(o[i], r + t + s, "out[%d] = %g", i, (double)o[i]);
    }
    char *text = test_ops_text(f);
    cr_assert_eq(test_count(text, "sign"), 0, "sign of a constant folds:\n%s", text);
    cr_assert_eq(test_count(text, "fused"), 1, "one fused loop:\n%s", text);
    cr_assert_eq(test_count(text, "tanh"), 1, "the two tanh merged into one:\n%s", text);
    cr_assert_eq(test_count(text, "cast"), 0, "no conversion of the weak constant:\n%s", text);
    free(text);
    weft_tensor_release(out);
    weft_tensor_release(oe);
    weft_function_destroy(&f);
    weft_function_destroy(&fe);
    weft_tensor_release(x);
    weft_tensor_release(c);
}

/* A large input, split over the workers: traced and eager agree bit for
 * bit and match the scalar reference. */
static int body_big(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    outs[0] = weft_floordiv(cx, weft_expm1(cx, weft_sin(cx, x)), weft_const_f64(cx, 0.25));
    outs[1] = weft_round(cx, weft_mul(cx, weft_sigmoid(cx, x), weft_const_f64(cx, 10.0)));
    return weft_ctx_status(cx);
}

Test(ops_math, large_inputs_split_over_workers)
{
    enum { BIG = 100000 };
    static double xs[BIG];
    for (int i = 0; i < BIG; i++)
        xs[i] = (i - BIG / 2) * 1e-3;
    weft_tensor *x = tensor(WEFT_F64, BIG, xs);
    weft_arg a = weft_arg_tensor(x);
    weft_function_desc d = { .name = "big", .body = body_big, .n_args = 1, .n_outs = 2 };
    weft_function *f = NULL, *fe = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    d.flags = WEFT_RUN_EAGERLY;
    cr_assert_eq(weft_function_create(rt, &d, &fe), 0);
    weft_tensor *ot[2] = { NULL, NULL }, *oe[2] = { NULL, NULL };
    cr_assert_eq(weft_function_call(f, &a, 1, ot, 2), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_function_call(fe, &a, 1, oe, 2), 0, "%s", weft_errmsg());
    for (int k = 0; k < 2; k++)
        cr_assert(memcmp(weft_tensor_data(ot[k]), weft_tensor_data(oe[k]), BIG * sizeof(double)) == 0);
    const double *q = weft_tensor_data(ot[0]), *r = weft_tensor_data(ot[1]);
    for (int i = 0; i < BIG; i += 997) {
        cr_assert_eq(q[i], floor(expm1(sin(xs[i])) / 0.25), "floordiv at %d", i);
        cr_assert_eq(r[i], nearbyint(10.0 / (1.0 + exp(-xs[i]))), "round at %d", i);
    }
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(ot[k]);
        weft_tensor_release(oe[k]);
    }
    weft_function_destroy(&f);
    weft_function_destroy(&fe);
    weft_tensor_release(x);
}

/* ---- erf, erfc, tan, asin, acos, atan, sinh, cosh, atan2 ---- */

/* x hidden from the compiler, so that a reference libm call is made at
 * run time: gcc folds calls on constants with its own correctly rounded
 * arithmetic, which differs from libm's in the last bit at times. */
static double opq(double x)
{
    volatile double v = x;
    return v;
}

static float opqf(float x)
{
    volatile float v = x;
    return v;
}

/* Bit for bit the same, any NaN matching any NaN. */
static bool same_f64(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static bool same_f32(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Special values and ordinary ones for the libm functions: signed zeros,
 * the f64 and f32 denormals, domain edges, overflows, infinities, NaN. */
static const double lib_x[] = { 0, -0.0, 4.9406564584124654e-324, -2.2250738585072014e-308,
                                1.401298464324817e-45, 0.5, -0.75, 1, -1, 1.0000001, 3, 26.5,
                                -30, 100, 800, INFINITY, -INFINITY, NAN };
#define N_LIB (sizeof lib_x / sizeof lib_x[0])

typedef struct libm_case {
    un_fn op;
    double (*f64)(double);
    float (*f32)(float);
    const char *name;
} libm_case;

static const libm_case libm_cases[] = {
    { weft_erf, erf, erff, "erf" },       { weft_erfc, erfc, erfcf, "erfc" },
    { weft_tan, tan, tanf, "tan" },       { weft_asin, asin, asinf, "asin" },
    { weft_acos, acos, acosf, "acos" },   { weft_atan, atan, atanf, "atan" },
    { weft_sinh, sinh, sinhf, "sinh" },   { weft_cosh, cosh, coshf, "cosh" },
};

/* Each function gives libm's result bit for bit, f32 through the f32
 * function (erff ...), eagerly, traced and cached (run checks the three
 * agree). */
Test(ops_math, new_float_functions_are_libms)
{
    float xf[N_LIB];
    for (size_t i = 0; i < N_LIB; i++)
        xf[i] = (float)lib_x[i];
    weft_tensor *t64 = tensor(WEFT_F64, N_LIB, lib_x), *t32 = tensor(WEFT_F32, N_LIB, xf);
    for (size_t k = 0; k < N(libm_cases); k++) {
        const libm_case *lc = &libm_cases[k];
        op_case c = { .un = lc->op };
        weft_tensor *o64 = run(&c, &t64), *o32 = run(&c, &t32);
        cr_assert_eq(weft_tensor_dtype(o64), WEFT_F64, "%s f64", lc->name);
        cr_assert_eq(weft_tensor_dtype(o32), WEFT_F32, "%s f32", lc->name);
        const double *g64 = weft_tensor_data(o64);
        const float *g32 = weft_tensor_data(o32);
        for (size_t i = 0; i < N_LIB; i++) {
            cr_assert(same_f64(g64[i], lc->f64(opq(lib_x[i]))), "%s(%.17g) = %.17g, libm %.17g",
                      lc->name, lib_x[i], g64[i], lc->f64(opq(lib_x[i])));
            cr_assert(same_f32(g32[i], lc->f32(opqf(xf[i]))), "%sf(%.9g) = %.9g, libm %.9g", lc->name,
                      (double)xf[i], (double)g32[i], (double)lc->f32(opqf(xf[i])));
        }
        weft_tensor_release(o64);
        weft_tensor_release(o32);
    }
    weft_tensor_release(t64);
    weft_tensor_release(t32);
}

/* Worked values: libm is right about them, and the ops are what their
 * names say. */
Test(ops_math, new_float_functions_worked_values)
{
    const double pi = 3.14159265358979323846;
    {
        const double x[] = {0, -0.0, 1, -1, 6, INFINITY, -INFINITY, NAN};
        const double w[] = {0, -0.0, 0.84270079294971487, -0.84270079294971487, 1, 1, -1, NAN};
        unary_float(weft_erf, x, w, N(x), "erf");
        /* erfc keeps the digits 1 - erf loses: erf(6) rounds to 1. */
        const double wc[] = {1, 1, 0.15729920705028513, 1.8427007929497148, 2.1519736712498916e-17,
                             0, 2, NAN};
        unary_float(weft_erfc, x, wc, N(x), "erfc");
    }
    {
        const double x[] = {0, -0.0, pi / 4, 1, -1, 2, INFINITY, NAN};
        const double wt[] = {0, -0.0, 0.99999999999999989, 1.5574077246549023, -1.5574077246549023,
                             -2.1850398632615189, NAN, NAN};
        unary_float(weft_tan, x, wt, N(x), "tan");
        /* Outside [-1, 1] asin and acos are NaN. */
        const double ws[] = {0, -0.0, 0.90333911076651284, pi / 2, -pi / 2, NAN, NAN, NAN};
        unary_float(weft_asin, x, ws, N(x), "asin");
        const double wc[] = {pi / 2, pi / 2, 0.66745721602838377, 0, pi, NAN, NAN, NAN};
        unary_float(weft_acos, x, wc, N(x), "acos");
        const double wa[] = {0, -0.0, 0.66577375002835389, pi / 4, -pi / 4, 1.1071487177940904,
                             pi / 2, NAN};
        unary_float(weft_atan, x, wa, N(x), "atan");
    }
    {
        const double x[] = {0, -0.0, 1, -1, 1000, -1000, NAN};
        const double ws[] = {0, -0.0, 1.1752011936438014, -1.1752011936438014, INFINITY, -INFINITY, NAN};
        unary_float(weft_sinh, x, ws, N(x), "sinh");
        const double wc[] = {1, 1, 1.5430806348152437, 1.5430806348152437, INFINITY, INFINITY, NAN};
        unary_float(weft_cosh, x, wc, N(x), "cosh");
    }
}

/* atan2 of pairs (y[i], x[i]): quadrants, signed zeros, infinities, NaN,
 * bit for bit libm's in f64 and f32. */
Test(ops_math, atan2_pairs_are_libms)
{
    const double y[] = {1, 1, -1, -1, 0, -0.0, 0, -0.0, 1, INFINITY, -INFINITY, INFINITY,
                        5e-324, NAN, 1, 3};
    const double x[] = {1, -1, 1, -1, -0.0, -0.0, 0, 0, 0, 1, -INFINITY, INFINITY, -1, 1, NAN, 4};
    float yf[N(y)], xf[N(y)];
    for (size_t i = 0; i < N(y); i++) {
        yf[i] = (float)y[i];
        xf[i] = (float)x[i];
    }
    weft_tensor *in64[2] = { tensor(WEFT_F64, N(y), y), tensor(WEFT_F64, N(y), x) };
    weft_tensor *in32[2] = { tensor(WEFT_F32, N(y), yf), tensor(WEFT_F32, N(y), xf) };
    op_case c = { .bin = weft_atan2 };
    weft_tensor *o64 = run(&c, in64), *o32 = run(&c, in32);
    cr_assert_eq(weft_tensor_dtype(o64), WEFT_F64);
    cr_assert_eq(weft_tensor_dtype(o32), WEFT_F32);
    const double *g64 = weft_tensor_data(o64);
    const float *g32 = weft_tensor_data(o32);
    for (size_t i = 0; i < N(y); i++) {
        cr_assert(same_f64(g64[i], atan2(opq(y[i]), opq(x[i]))), "atan2(%g, %g) = %.17g", y[i], x[i], g64[i]);
        cr_assert(same_f32(g32[i], atan2f(opqf(yf[i]), opqf(xf[i]))), "atan2f(%g, %g) = %.9g", (double)yf[i],
                  (double)xf[i], (double)g32[i]);
    }
    /* y first: the angle of (x, y) = (-1, 1) is 3 pi / 4; +-0 against -0
     * is +-pi. */
    const double pi = 3.14159265358979323846;
    cr_assert_eq(g64[1], 3 * pi / 4);
    cr_assert_eq(g64[4], pi);
    cr_assert_eq(g64[5], -pi);
    cr_assert(g64[6] == 0 && !signbit(g64[6]) && g64[7] == 0 && signbit(g64[7]));
    cr_assert_eq(g64[15], atan(opq(0.75)));
    weft_tensor_release(o64);
    weft_tensor_release(o32);
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(in64[i]);
        weft_tensor_release(in32[i]);
    }
}

/* atan2 broadcasts like any binary op, and promotes: integers in f64, i32
 * with f32 is f32. */
Test(ops_math, atan2_broadcasts_and_promotes)
{
    const float yf[] = {1, -2, 0.5f, 0};
    const float one[] = {-1};
    weft_tensor *in[2] = { tensor(WEFT_F32, 4, yf), tensor(WEFT_F32, 1, one) };
    double w[4];
    for (int i = 0; i < 4; i++)
        w[i] = atan2f(opqf(yf[i]), opqf(-1.0f));
    check(run(&(op_case){ .bin = weft_atan2 }, in), WEFT_F32, w, 4, 0, "atan2 f32[4] by f32[1]");
    weft_tensor *swapped[2] = { in[1], in[0] };
    for (int i = 0; i < 4; i++)
        w[i] = atan2f(opqf(-1.0f), opqf(yf[i]));
    check(run(&(op_case){ .bin = weft_atan2 }, swapped), WEFT_F32, w, 4, 0, "atan2 f32[1] by f32[4]");
    const int32_t yi[] = {1, -1, 0, 7};
    weft_tensor *ti = tensor(WEFT_I32, 4, yi);
    weft_tensor *ii[2] = { ti, ti };
    for (int i = 0; i < 4; i++)
        w[i] = atan2(opq(yi[i]), opq(yi[i]));
    check(run(&(op_case){ .bin = weft_atan2 }, ii), WEFT_F64, w, 4, 0, "atan2 i32 i32 is f64");
    weft_tensor *fi[2] = { in[0], ti };
    for (int i = 0; i < 4; i++)
        w[i] = atan2f(opqf(yf[i]), opqf((float)yi[i]));
    check(run(&(op_case){ .bin = weft_atan2 }, fi), WEFT_F32, w, 4, 0, "atan2 f32 i32 is f32");
    weft_tensor_release(ti);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
}

/* The new float functions compute integers and bool in f64. */
Test(ops_math, new_float_functions_of_integers_are_f64)
{
    const int64_t xl[] = {0, 1, -2};
    const uint8_t xb[] = {0, 1, 1};
    weft_tensor *tl = tensor(WEFT_I64, 3, xl), *tb = tensor(WEFT_BOOL, 3, xb);
    for (size_t k = 0; k < N(libm_cases); k++) {
        const libm_case *lc = &libm_cases[k];
        double wl[3], wb[3];
        for (int i = 0; i < 3; i++) {
            wl[i] = lc->f64(opq((double)xl[i]));
            wb[i] = lc->f64(opq(xb[i]));
        }
        check(run(&(op_case){ .un = lc->op }, &tl), WEFT_F64, wl, 3, 0, lc->name);
        check(run(&(op_case){ .un = lc->op }, &tb), WEFT_F64, wb, 3, 0, lc->name);
    }
    weft_tensor_release(tl);
    weft_tensor_release(tb);
}

/* Weak scalars take a float tensor's dtype and stay weak among
 * themselves; against an integer tensor the op computes in f64. */
static int body_weak_new(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_atan2(cx, args[0], weft_const_f64(cx, -1.0));      /* f32 */
    outs[1] = weft_atan2(cx, weft_const_i64(cx, 2), args[0]);         /* f32 */
    outs[2] = weft_atan2(cx, args[1], weft_const_f64(cx, 2.0));       /* i32 with a weak float: f64 */
    /* erf(weak 0.5) is weak: times the f32 tensor it stays f32. */
    outs[3] = weft_mul(cx, args[0], weft_erf(cx, weft_const_f64(cx, 0.5)));
    /* The tests of a weak scalar give an ordinary bool. */
    outs[4] = weft_is_inf(cx, weft_const_f64(cx, -INFINITY));
    return weft_ctx_status(cx);
}

Test(ops_math, new_ops_with_weak_scalars)
{
    const float xf[] = {1, -0.5f};
    const int32_t xi[] = {3, -4};
    weft_tensor *tf = tensor(WEFT_F32, 2, xf), *ti = tensor(WEFT_I32, 2, xi);
    weft_arg args[2] = { weft_arg_tensor(tf), weft_arg_tensor(ti) };
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "weaknew", .body = body_weak_new, .n_args = 2,
                                 .n_outs = 5, .flags = mode ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0);
        weft_tensor *o[5] = { NULL };
        cr_assert_eq(weft_function_call(f, args, 2, o, 5), 0, "%s", weft_errmsg());
        const double w0[] = {atan2f(opqf(1), opqf(-1)), atan2f(opqf(-0.5f), opqf(-1))};
        const double w1[] = {atan2f(opqf(2), opqf(1)), atan2f(opqf(2), opqf(-0.5f))};
        const double w2[] = {atan2(opq(3), opq(2)), atan2(opq(-4), opq(2))};
        const float e = (float)erf(opq(0.5));
        const double w3[] = {1 * e, -0.5f * e};
        const double w4[] = {1};
        check(o[0], WEFT_F32, w0, 2, 0, "atan2(f32, weak f64)");
        check(o[1], WEFT_F32, w1, 2, 0, "atan2(weak i64, f32)");
        check(o[2], WEFT_F64, w2, 2, 0, "atan2(i32, weak f64)");
        check(o[3], WEFT_F32, w3, 2, 0, "f32 * erf(weak)");
        cr_assert_eq(weft_tensor_rank(o[4]), 0);
        check(o[4], WEFT_BOOL, w4, 1, 0, "is_inf(weak -inf)");
        weft_function_destroy(&f);
    }
    weft_tensor_release(tf);
    weft_tensor_release(ti);
}

/* ---- is_nan, is_inf, is_finite ---- */

Test(ops_math, tests_of_floats)
{
    const double x[] = {0, -0.0, 1.5, -3, 4.9406564584124654e-324, DBL_MAX, INFINITY, -INFINITY,
                        NAN, -NAN};
    const double wn[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1};
    const double wi[] = {0, 0, 0, 0, 0, 0, 1, 1, 0, 0};
    const double wf[] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
    float xf[N(x)];
    for (size_t i = 0; i < N(x); i++)
        xf[i] = (float)x[i];
    xf[4] = FLT_TRUE_MIN;  /* a denormal of f32 */
    xf[5] = FLT_MAX;
    weft_tensor *t[2] = { tensor(WEFT_F64, N(x), x), tensor(WEFT_F32, N(x), xf) };
    for (int k = 0; k < 2; k++) {
        check(run(&(op_case){ .un = weft_is_nan }, &t[k]), WEFT_BOOL, wn, N(x), 0, "is_nan");
        check(run(&(op_case){ .un = weft_is_inf }, &t[k]), WEFT_BOOL, wi, N(x), 0, "is_inf");
        check(run(&(op_case){ .un = weft_is_finite }, &t[k]), WEFT_BOOL, wf, N(x), 0, "is_finite");
        weft_tensor_release(t[k]);
    }
}

/* Integers are never NaN nor infinite; bool is refused. */
Test(ops_math, tests_of_integers_and_bool)
{
    const int32_t xi[] = {INT32_MIN, -1, 0, INT32_MAX};
    const int64_t xl[] = {INT64_MIN, 0, INT64_MAX, 5};
    weft_tensor *t[2] = { tensor(WEFT_I32, 4, xi), tensor(WEFT_I64, 4, xl) };
    const double no[] = {0, 0, 0, 0}, yes[] = {1, 1, 1, 1};
    for (int k = 0; k < 2; k++) {
        check(run(&(op_case){ .un = weft_is_nan }, &t[k]), WEFT_BOOL, no, 4, 0, "is_nan int");
        check(run(&(op_case){ .un = weft_is_inf }, &t[k]), WEFT_BOOL, no, 4, 0, "is_inf int");
        check(run(&(op_case){ .un = weft_is_finite }, &t[k]), WEFT_BOOL, yes, 4, 0, "is_finite int");
        weft_tensor_release(t[k]);
    }
    const uint8_t b[] = {0, 1, 1};
    weft_tensor *tb = tensor(WEFT_BOOL, 3, b);
    refused(&(op_case){ .un = weft_is_nan }, &tb, WEFT_EDTYPE, "weft_is_nan: bool[3] is bool");
    refused(&(op_case){ .un = weft_is_inf }, &tb, WEFT_EDTYPE, "weft_is_inf: bool[3] is bool");
    refused(&(op_case){ .un = weft_is_finite }, &tb, WEFT_EDTYPE, "weft_is_finite: bool[3] is bool");
    weft_tensor_release(tb);
}

Test(ops_math, new_ops_bad_shapes)
{
    const float f[] = {1, 2, 3}, f4[] = {1, 2, 3, 4};
    weft_tensor *ff[2] = { tensor(WEFT_F32, 3, f), tensor(WEFT_F32, 4, f4) };
    refused(&(op_case){ .bin = weft_atan2 }, ff, WEFT_ESHAPE,
            "weft_atan2: f32[3] and f32[4] do not broadcast");
    weft_tensor_release(ff[0]);
    weft_tensor_release(ff[1]);
}

/* is_nan of a constant tensor folds; the two erf(x) merge; erf, atan2,
 * is_finite, where and the add fuse into one loop. */
static int body_new_chain(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_value *x = args[0];
    weft_value *c = weft_const_tensor(cx, user);
    weft_value *t = weft_atan2(cx, weft_erf(cx, x), weft_sinh(cx, weft_erf(cx, x)));
    weft_value *kept = weft_where(cx, weft_is_finite(cx, t), t, weft_const_f64(cx, 0.0));
    outs[0] = weft_add(cx, kept, weft_cast(cx, weft_is_nan(cx, c), WEFT_F32));
    return weft_ctx_status(cx);
}

Test(ops_math, compiler_folds_merges_and_fuses_new_ops)
{
    const float cv[] = {NAN, 0, 5};
    weft_tensor *c = tensor(WEFT_F32, 3, cv);
    const float xv[] = {-1, 0.5f, 2};
    weft_tensor *x = tensor(WEFT_F32, 3, xv), *out = NULL, *oe = NULL;
    weft_arg a = weft_arg_tensor(x);
    weft_function_desc d = { .name = "newchain", .body = body_new_chain, .user = c, .n_args = 1,
                             .n_outs = 1 };
    weft_function *f = NULL, *fe = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    d.flags = WEFT_RUN_EAGERLY;
    cr_assert_eq(weft_function_create(rt, &d, &fe), 0);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_function_call(fe, &a, 1, &oe, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_dtype(out), WEFT_F32);
    cr_assert(memcmp(weft_tensor_data(out), weft_tensor_data(oe), 3 * sizeof(float)) == 0);
    const float *o = weft_tensor_data(out);
    for (int i = 0; i < 3; i++) {
        float e = erff(opqf(xv[i])), t = atan2f(e, sinhf(e));
        float want = (isfinite(t) ? t : 0.0f) + (isnan(cv[i]) ? 1.0f : 0.0f);
        cr_assert_eq(o[i], want, "out[%d] = %g, want %g", i, (double)o[i], (double)want);
    }
    char *text = test_ops_text(f);
    cr_assert_eq(test_count(text, "is_nan"), 0, "is_nan of a constant folds:\n%s", text);
    cr_assert_eq(test_count(text, "fused"), 1, "one fused loop:\n%s", text);
    cr_assert_eq(test_count(text, "erf"), 1, "the two erf merged into one:\n%s", text);
    cr_assert_eq(test_count(text, "atan2"), 1, "%s", text);
    cr_assert_eq(test_count(text, "is_finite"), 1, "%s", text);
    free(text);
    weft_tensor_release(out);
    weft_tensor_release(oe);
    weft_function_destroy(&f);
    weft_function_destroy(&fe);
    weft_tensor_release(x);
    weft_tensor_release(c);
}
