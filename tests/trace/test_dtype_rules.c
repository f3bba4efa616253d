/* The dtype rules of include/weft/ops.h, each run eagerly (WEFT_RUN_EAGERLY)
 * and traced: weak scalar constants and static scalars, weft_const, bool
 * arithmetic, weft_cast's conversions, and the i32 sum. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(dtype_rules, .init = setup, .fini = teardown, .timeout = 30);

static weft_tensor *vec(weft_dtype dt, int64_t n, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, 1, &n, data, &t), 0, "%s", weft_errmsg());
    return t;
}

/* Calls body in both modes (eager first) and hands each mode's outputs to
 * check; returns nothing, asserts inside. */
typedef void (*check_fn)(weft_tensor *const *outs, const char *mode);

static void both_modes(weft_body_fn body, const weft_arg *args, size_t n_args, size_t n_outs,
                       check_fn check)
{
    enum { MAX_OUTS = 13 };
    cr_assert(n_outs <= MAX_OUTS);
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "rules", .body = body, .n_args = n_args,
                                 .n_outs = n_outs, .flags = mode ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *outs[MAX_OUTS] = { NULL };
        cr_assert_eq(weft_function_call(f, args, n_args, outs, n_outs), 0, "%s: %s",
                     mode ? "traced" : "eager", weft_errmsg());
        check(outs, mode ? "traced" : "eager");
        for (size_t k = 0; k < n_outs; k++)
            weft_tensor_release(outs[k]);
        weft_function_destroy(&f);
    }
}

/* Calls body (with user) in both modes and expects code, with `what` in
 * the message. */
static void both_fail(weft_body_fn body, void *user, const weft_arg *args, size_t n_args, int code,
                      const char *what)
{
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "rules", .body = body, .user = user, .n_args = n_args,
                                 .n_outs = 1,
                                 .flags = mode ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, args, n_args, &out, 1), code, "%s: %s",
                     mode ? "traced" : "eager", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), what), "%s: \"%s\" lacks \"%s\"",
                  mode ? "traced" : "eager", weft_errmsg(), what);
        cr_assert_null(out);
        weft_function_destroy(&f);
    }
}

static void dtype_is(weft_tensor *t, weft_dtype dt, const char *what, const char *mode)
{
    cr_assert_not_null(t);
    cr_assert_eq(weft_tensor_dtype(t), dt, "%s (%s): %s, expected %s", what, mode,
                 weft_dtype_name(weft_tensor_dtype(t)), weft_dtype_name(dt));
}

/* ---- Weak scalar constants. ---- */

/* args: f32 x [3], i32 n [3], bool b [3], f64 d [3]. */
static int body_weak(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0], *n = args[1], *b = args[2], *d = args[3];
    outs[0] = weft_mul(cx, x, weft_const_f64(cx, 2.0));            /* f32 */
    outs[1] = weft_add(cx, n, weft_const_i64(cx, 1));              /* i32 */
    outs[2] = weft_mul(cx, n, weft_const_f64(cx, 0.5));            /* f64: int * weak float */
    outs[3] = weft_add(cx, b, weft_const_i64(cx, 1));              /* i64: bool + weak int */
    outs[4] = weft_mul(cx, x, weft_const_i64(cx, 3));              /* f32: float * weak int */
    /* Two weak constants: 2 + 0.5 is a weak 2.5, so x * it stays f32. */
    outs[5] = weft_mul(cx, x, weft_add(cx, weft_const_i64(cx, 2), weft_const_f64(cx, 0.5)));
    outs[6] = weft_const_f64(cx, 1.5);                             /* alone: f64 */
    /* Comparisons happen in the tensor's dtype: 0.1f == 0.1 is true. */
    outs[7] = weft_eq(cx, x, weft_const_f64(cx, 0.1));
    outs[8] = weft_where(cx, weft_gt(cx, x, weft_const_f64(cx, 0.5)), x, weft_const_f64(cx, 0.0));
    outs[9] = weft_minimum(cx, n, weft_const_i64(cx, 5));          /* i32 */
    outs[10] = weft_add(cx, d, weft_const_i64(cx, 1));             /* f64 */
    /* weft_const is strong: f32 * a f64 constant is f64. */
    outs[11] = weft_mul(cx, x, weft_const(cx, WEFT_F64, 2.0));
    /* A cast is strong, even to the weak scalar's own dtype: i32 + it is i64. */
    outs[12] = weft_add(cx, n, weft_cast(cx, weft_const_i64(cx, 1), WEFT_I64));
    return weft_ctx_status(cx);
}

static void check_weak(weft_tensor *const *o, const char *mode)
{
    static const weft_dtype want[13] = { WEFT_F32, WEFT_I32, WEFT_F64, WEFT_I64, WEFT_F32,
                                         WEFT_F32, WEFT_F64, WEFT_BOOL, WEFT_F32, WEFT_I32,
                                         WEFT_F64, WEFT_F64, WEFT_I64 };
    for (int k = 0; k < 13; k++) {
        char what[16];
        snprintf(what, sizeof what, "out %d", k);
        dtype_is(o[k], want[k], what, mode);
    }
    const float *x2 = weft_tensor_data(o[0]), *x25 = weft_tensor_data(o[5]), *w = weft_tensor_data(o[8]);
    const int32_t *n1 = weft_tensor_data(o[1]), *mn = weft_tensor_data(o[9]);
    const double *nh = weft_tensor_data(o[2]), *x2d = weft_tensor_data(o[11]);
    const int64_t *b1 = weft_tensor_data(o[3]);
    const uint8_t *eq = weft_tensor_data(o[7]);
    cr_assert_eq(x2[0], 0.2f);
    cr_assert_eq(x2[2], 6.0f);
    cr_assert_eq(n1[0], INT32_MAX - 1 + 1, "%s: i32 + 1 wraps like i32", mode);
    cr_assert_eq(n1[1], INT32_MIN, "%s: INT32_MAX + weak 1 wraps in i32", mode);
    cr_assert_eq(nh[2], -3.5);
    cr_assert_eq(b1[0], 2);
    cr_assert_eq(b1[1], 1);
    cr_assert_eq(x25[1], 1.25f);
    cr_assert_eq(*(const double *)weft_tensor_data(o[6]), 1.5);
    cr_assert_eq(eq[0], 1, "%s: 0.1f == weak 0.1 compares in f32", mode);
    cr_assert_eq(eq[1], 0);
    cr_assert_eq(w[0], 0.0f);
    cr_assert_eq(w[2], 3.0f);
    cr_assert_eq(mn[0], 5);
    cr_assert_eq(mn[2], -7);
    cr_assert_eq(x2d[0], (double)0.1f * 2.0);
    cr_assert_eq(((const int64_t *)weft_tensor_data(o[12]))[1], (int64_t)INT32_MAX + 1,
                 "%s: i32 + a cast i64 adds in i64", mode);
}

Test(dtype_rules, weak_constants_take_the_tensors_dtype)
{
    const float x[3] = { 0.1f, 0.5f, 3.0f };
    const int32_t n[3] = { INT32_MAX - 1, INT32_MAX, -7 };
    const uint8_t b[3] = { 1, 0, 1 };
    const double d[3] = { 1, 2, 3 };
    weft_tensor *t[4] = { vec(WEFT_F32, 3, x), vec(WEFT_I32, 3, n), vec(WEFT_BOOL, 3, b),
                          vec(WEFT_F64, 3, d) };
    weft_arg args[4];
    for (int i = 0; i < 4; i++)
        args[i] = weft_arg_tensor(t[i]);
    both_modes(body_weak, args, 4, 13, check_weak);
    for (int i = 0; i < 4; i++)
        weft_tensor_release(t[i]);
}

/* A weak constant of another kind than the operand keeps its own dtype,
 * and within a kind it must fit: an i32 operand refuses a weak 2^40. */
static int body_weak_too_big(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], weft_const_i64(cx, INT64_C(1) << 40));
    return weft_ctx_status(cx);
}

Test(dtype_rules, weak_integer_must_fit_i32)
{
    const int32_t n[2] = { 1, 2 };
    weft_tensor *t = vec(WEFT_I32, 2, n);
    weft_arg a = weft_arg_tensor(t);
    both_fail(body_weak_too_big, NULL, &a, 1, WEFT_EDTYPE,
              "weft_add: the constant 1099511627776 does not fit the i32 operand");
    weft_tensor_release(t);
}

/* A traced body: f32 x * a weak constant records no cast, and the
 * constant is stored as f32. */
static int body_scale(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, args[0], weft_const_f64(cx, 0.5));
    return weft_ctx_status(cx);
}

Test(dtype_rules, weak_constants_record_no_cast)
{
    weft_function_desc d = { .name = "scale", .body = body_scale, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    weft_spec s;
    cr_assert_eq(weft_spec_parse("f32[?]", &s), 0);
    weft_concrete *c = NULL;
    cr_assert_eq(weft_function_get_concrete(f, &s, 1, &c), 0, "%s", weft_errmsg());
    char *text = test_ops_text(f);
    cr_assert(strstr(text, "const 0.5 : f32[]"), "%s", text);
    cr_assert_null(strstr(text, "cast"), "%s", text);
    cr_assert(strstr(text, ": f32[?]\nreturn"), "%s", text);
    free(text);
    weft_function_destroy(&f);
}

/* Static scalars are weak, as Python numbers passed to tf.function: an f32
 * tensor times a static 2.0 stays f32.  Every new value still traces
 * again (the cache key is unchanged); with an input_signature the scalar
 * becomes a (strong) tensor of the declared spec. */
static int body_times(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

Test(dtype_rules, static_scalars_are_weak_and_still_keyed_by_value)
{
    const float x[2] = { 1.5f, -2.0f };
    weft_tensor *t = vec(WEFT_F32, 2, x);
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "times", .body = body_times, .n_args = 2, .n_outs = 1,
                                 .flags = mode ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0);
        const double ks[3] = { 2.0, 3.0, 2.0 };
        for (int i = 0; i < 3; i++) {
            weft_arg args[2] = { weft_arg_tensor(t), weft_arg_f64(ks[i]) };
            weft_tensor *y = NULL;
            cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
            dtype_is(y, WEFT_F32, "f32 * static f64", mode ? "traced" : "eager");
            cr_assert_eq(((const float *)weft_tensor_data(y))[1], -2.0f * (float)ks[i]);
            weft_tensor_release(y);
            /* An integer static scalar: f32 * static i64 is f32 too. */
            args[1] = weft_arg_i64((int64_t)ks[i]);
            cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
            dtype_is(y, WEFT_F32, "f32 * static i64", mode ? "traced" : "eager");
            weft_tensor_release(y);
        }
        if (mode)
            cr_assert_eq(weft_function_tracing_count(f), 4, "2.0, 3.0, 2, 3: four traces");
        weft_function_destroy(&f);
    }
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("f32[2]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f64[]", &sig[1]), 0);
    weft_function_desc d = { .name = "times", .body = body_times, .n_args = 2, .n_outs = 1,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    weft_arg args[2] = { weft_arg_tensor(t), weft_arg_f64(2.0) };
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    dtype_is(y, WEFT_F64, "f32 * declared f64[] tensor", "traced");
    weft_tensor_release(y);
    weft_function_destroy(&f);
    weft_tensor_release(t);
}

/* ---- weft_const. ---- */

/* A weft_const that is refused: user points at the dtype and the value. */
typedef struct bad_const {
    weft_dtype dt;
    double v;
} bad_const;

static int body_bad_const(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    const bad_const *b = user;
    outs[0] = weft_const(cx, b->dt, b->v);
    return weft_ctx_status(cx);
}

static int body_consts(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    (void)user;
    outs[0] = weft_const(cx, WEFT_BOOL, 1);
    outs[1] = weft_const(cx, WEFT_I32, -2147483648.0);
    outs[2] = weft_const(cx, WEFT_I64, -9223372036854775808.0);
    outs[3] = weft_const(cx, WEFT_F32, 1e300);
    outs[4] = weft_const(cx, WEFT_F64, 0.1);
    return weft_ctx_status(cx);
}

static void check_consts(weft_tensor *const *o, const char *mode)
{
    dtype_is(o[0], WEFT_BOOL, "bool", mode);
    dtype_is(o[1], WEFT_I32, "i32", mode);
    dtype_is(o[2], WEFT_I64, "i64", mode);
    dtype_is(o[3], WEFT_F32, "f32", mode);
    dtype_is(o[4], WEFT_F64, "f64", mode);
    cr_assert_eq(*(const uint8_t *)weft_tensor_data(o[0]), 1);
    cr_assert_eq(*(const int32_t *)weft_tensor_data(o[1]), INT32_MIN);
    cr_assert_eq(*(const int64_t *)weft_tensor_data(o[2]), INT64_MIN);
    cr_assert(isinf(*(const float *)weft_tensor_data(o[3])), "f32 1e300 is inf");
    cr_assert_eq(*(const double *)weft_tensor_data(o[4]), 0.1);
}

Test(dtype_rules, typed_constants)
{
    both_modes(body_consts, NULL, 0, 5, check_consts);
    both_fail(body_bad_const, &(bad_const){ WEFT_I32, 2.5 }, NULL, 0, WEFT_EINVAL,
              "weft_const: 2.5 is not exactly representable as i32");
    both_fail(body_bad_const, &(bad_const){ WEFT_I64, 0x1p63 }, NULL, 0, WEFT_EINVAL,
              "weft_const: 9.2233720368547758e+18 is not exactly representable as i64");
    both_fail(body_bad_const, &(bad_const){ WEFT_BOOL, 2 }, NULL, 0, WEFT_EINVAL,
              "weft_const: 2 is not exactly representable as bool");
    both_fail(body_bad_const, &(bad_const){ (weft_dtype)99, 1 }, NULL, 0, WEFT_EINVAL,
              "weft_const: unknown dtype 99");
}

/* ---- Bool arithmetic is refused; logic is not. ---- */

/* user: 0 for b - b, 1 for -b. */
static int body_bool_arith(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    outs[0] = user ? weft_neg(cx, args[0]) : weft_sub(cx, args[0], args[0]);
    return weft_ctx_status(cx);
}

static int body_bool_logic(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *b = args[0];
    outs[0] = weft_maximum(cx, b, weft_logical_not(cx, b));          /* or: all true */
    outs[1] = weft_lt(cx, b, weft_logical_not(cx, b));               /* false < true */
    outs[2] = weft_sum(cx, b, WEFT_ALL_AXES);                        /* a count, i64 */
    outs[3] = weft_add(cx, b, weft_const(cx, WEFT_I32, 1));          /* bool + i32 is i32 */
    outs[4] = weft_sqrt(cx, b);                                      /* f64 */
    return weft_ctx_status(cx);
}

static void check_bool_logic(weft_tensor *const *o, const char *mode)
{
    dtype_is(o[0], WEFT_BOOL, "max", mode);
    dtype_is(o[1], WEFT_BOOL, "lt", mode);
    dtype_is(o[2], WEFT_I64, "sum", mode);
    dtype_is(o[3], WEFT_I32, "bool + i32", mode);
    dtype_is(o[4], WEFT_F64, "sqrt", mode);
    const uint8_t *mx = weft_tensor_data(o[0]), *lt = weft_tensor_data(o[1]);
    cr_assert(mx[0] && mx[1] && mx[2]);
    cr_assert(!lt[0] && lt[1] && !lt[2]);
    cr_assert_eq(*(const int64_t *)weft_tensor_data(o[2]), 2);
    cr_assert_eq(((const int32_t *)weft_tensor_data(o[3]))[0], 2);
    cr_assert_eq(((const double *)weft_tensor_data(o[4]))[1], 0.0);
}

Test(dtype_rules, bool_takes_logic_not_arithmetic)
{
    const uint8_t b[3] = { 1, 0, 1 };
    weft_tensor *t = vec(WEFT_BOOL, 3, b);
    weft_arg a = weft_arg_tensor(t);
    both_fail(body_bool_arith, NULL, &a, 1, WEFT_EDTYPE,
              "weft_sub: bool[3] and bool[3] are bool (cast them to a number type)");
    both_fail(body_bool_arith, &a, &a, 1, WEFT_EDTYPE,
              "weft_neg: bool[3] is bool (cast it to a number type)");
    both_modes(body_bool_logic, &a, 1, 5, check_bool_logic);
    weft_tensor_release(t);
}

/* ---- weft_cast. ---- */

/* args: i64 [3], f64 [6]. */
static int body_casts(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_cast(cx, args[0], WEFT_I32);   /* wraps */
    outs[1] = weft_cast(cx, args[1], WEFT_F32);   /* 1e300 -> inf */
    outs[2] = weft_cast(cx, args[1], WEFT_I32);   /* saturates, NaN -> 0 */
    outs[3] = weft_cast(cx, args[1], WEFT_I64);
    outs[4] = weft_cast(cx, args[1], WEFT_BOOL);  /* non-zero (NaN too) is true */
    return weft_ctx_status(cx);
}

static void check_casts(weft_tensor *const *o, const char *mode)
{
    const int32_t wrap[3] = { -1294967296, 5, -1 };
    cr_assert_arr_eq(weft_tensor_data(o[0]), wrap, sizeof wrap, "%s: i64 -> i32 wraps", mode);
    const float *f = weft_tensor_data(o[1]);
    cr_assert(isinf(f[0]) && f[0] > 0, "%s: 1e300 -> f32 is inf", mode);
    cr_assert(isinf(f[1]) && f[1] < 0);
    cr_assert(isnan(f[2]));
    cr_assert_eq(f[3], -2.5f);
    const int32_t i32[6] = { INT32_MAX, INT32_MIN, 0, -2, 2, 0 };
    const int64_t i64[6] = { INT64_MAX, INT64_MIN, 0, -2, 2, 0 };
    const uint8_t b[6] = { 1, 1, 1, 1, 1, 0 };
    cr_assert_arr_eq(weft_tensor_data(o[2]), i32, sizeof i32, "%s: f64 -> i32", mode);
    cr_assert_arr_eq(weft_tensor_data(o[3]), i64, sizeof i64, "%s: f64 -> i64", mode);
    cr_assert_arr_eq(weft_tensor_data(o[4]), b, sizeof b, "%s: f64 -> bool", mode);
}

Test(dtype_rules, cast_wraps_saturates_and_overflows_as_documented)
{
    const int64_t big[3] = { 3000000000LL, (INT64_C(1) << 32) + 5, -1 };
    const double d[6] = { 1e300, -INFINITY, NAN, -2.5, 2.9, -0.0 };
    weft_tensor *t[2] = { vec(WEFT_I64, 3, big), vec(WEFT_F64, 6, d) };
    weft_arg args[2] = { weft_arg_tensor(t[0]), weft_arg_tensor(t[1]) };
    both_modes(body_casts, args, 2, 5, check_casts);
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
}

/* ---- sum keeps i32 and wraps, as TensorFlow's reduce_sum. ---- */

static int body_sum(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, args[0], WEFT_ALL_AXES);
    outs[1] = weft_sum(cx, weft_cast(cx, args[0], WEFT_I64), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static void check_sum(weft_tensor *const *o, const char *mode)
{
    dtype_is(o[0], WEFT_I32, "sum i32", mode);
    cr_assert_eq(*(const int32_t *)weft_tensor_data(o[0]), INT32_MIN, "%s: wraps", mode);
    dtype_is(o[1], WEFT_I64, "sum i64", mode);
    cr_assert_eq(*(const int64_t *)weft_tensor_data(o[1]), INT64_C(2147483648));
}

Test(dtype_rules, i32_sum_keeps_i32_and_wraps)
{
    const int32_t n[2] = { INT32_MAX, 1 };
    weft_tensor *t = vec(WEFT_I32, 2, n);
    weft_arg a = weft_arg_tensor(t);
    both_modes(body_sum, &a, 1, 2, check_sum);
    weft_tensor_release(t);
}
