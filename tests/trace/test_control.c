/* Composition and control flow: weft_call, weft_cond, weft_switch_case,
 * weft_while_loop, weft_map_ex and weft_host_call_ex, each eager and traced, against worked
 * examples; nesting; their errors; what the compiler keeps; trace counts. */
#include <pthread.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;

static void setup(void)
{
    rt = test_runtime(2);
}

static void teardown(void)
{
    weft_runtime_destroy(&rt);
}

TestSuite(control, .init = setup, .fini = teardown, .timeout = 60);

static weft_spec spec_of(const char *text)
{
    weft_spec s;
    cr_assert_eq(weft_spec_parse(text, &s), 0, "%s", text);
    return s;
}

static weft_function *fn_new(const char *name, weft_body_fn body, void *user, size_t n_args,
                             size_t n_outs, const weft_spec *sig, unsigned flags)
{
    return test_function(rt, name, body, user, n_args, n_outs, sig, flags);
}

static weft_tensor *f32s(int rank, const int64_t *dims, const float *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, rank, dims, v, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_tensor *vec(int64_t n, const float *v)
{
    return f32s(1, &n, v);
}

static weft_tensor *boolean(bool b)
{
    unsigned char v = b;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_BOOL, 0, NULL, &v, &t), 0);
    return t;
}

static weft_tensor *i64_scalar(int64_t v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &v, &t), 0);
    return t;
}

static void expect_f32(const weft_tensor *t, int64_t n, const float *want)
{
    cr_assert_not_null(t);
    cr_assert_eq(weft_tensor_dtype(t), WEFT_F32);
    cr_assert_eq(weft_tensor_numel(t), n);
    const float *got = weft_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        cr_expect_float_eq(got[i], want[i], 1e-6, "element %lld: %g, want %g", (long long)i,
                           (double)got[i], (double)want[i]);
}

/* Both modes of a test: a traced function and its WEFT_RUN_EAGERLY twin. */
static const unsigned modes[2] = { 0, WEFT_RUN_EAGERLY };

/* ---- weft_call ---- */

/* g(x, y) = x * y + 1 */
static int body_g(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, weft_mul(cx, a[0], a[1]), weft_cast(cx, weft_const_f64(cx, 1.0), WEFT_F32));
    return 0;
}

/* f(x) = g(x, x) - 1, through weft_call */
static int body_f_calls_g(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    weft_value *args[2] = { a[0], a[0] }, *r = NULL;
    int rc = weft_call(cx, u, args, 2, &r, 1);
    if (rc < 0)
        return rc;
    o[0] = weft_sub(cx, r, weft_cast(cx, weft_const_f64(cx, 1.0), WEFT_F32));
    return 0;
}

Test(control, call_values_eager_and_traced)
{
    const float x[3] = { 1, 2, -3 }, want[3] = { 1, 4, 9 };
    for (int m = 0; m < 2; m++) {
        weft_function *g = fn_new("g", body_g, NULL, 2, 1, NULL, 0);
        weft_function *f = fn_new("f", body_f_calls_g, g, 1, 1, NULL, modes[m]);
        weft_tensor *xt = vec(3, x);
        weft_arg arg = weft_arg_tensor(xt);
        for (int call = 0; call < 3; call++) {
            weft_tensor *y = NULL;
            cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
            expect_f32(y, 3, want);
            weft_tensor_release(y);
        }
        /* g's body went into f: g's cache never saw a call or a trace. */
        weft_function_stats gs;
        weft_function_get_stats(g, &gs);
        cr_expect_eq(gs.calls, 0);
        cr_expect_eq(gs.traces, 0);
        cr_expect_eq(weft_function_tracing_count(f), m == 0 ? 1 : 0);
        weft_tensor_release(xt);
        weft_function_destroy(&f);
        weft_function_destroy(&g);
    }
}

Test(control, call_is_traced_into_the_caller)
{
    weft_function *g = fn_new("g", body_g, NULL, 2, 1, NULL, 0);
    weft_function *f = fn_new("f", body_f_calls_g, g, 1, 1, NULL, 0);
    weft_tensor *xt = vec(3, (const float[]){ 1, 2, 3 }), *y = NULL;
    weft_arg arg = weft_arg_tensor(xt);
    cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
    char buf[2048] = "";
    FILE *mf = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_eq(weft_function_print_ops(f, 0, mf), 0);
    fclose(mf);
    /* One fused loop: the callee's mul and add and the caller's sub (the
     * +1 and -1 fold into constants the loop reads). */
    cr_expect(strstr(buf, "fused[") != NULL, "%s", buf);
    cr_expect(strstr(buf, "mul") != NULL, "%s", buf);
    cr_expect(strstr(buf, "sub") != NULL, "%s", buf);
    cr_expect(strstr(buf, "cond") == NULL && strstr(buf, "map") == NULL, "%s", buf);
    weft_tensor_release(y);
    weft_tensor_release(xt);
    weft_function_destroy(&f);
    weft_function_destroy(&g);
}

/* The callee's error names both functions and the node. */
static int body_bad_add(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], a[1]);
    return 0;
}

static int body_calls_bad(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    weft_value *r = NULL;
    int rc = weft_call(cx, u, a, 2, &r, 1);
    o[0] = r;
    return rc;
}

Test(control, call_errors)
{
    for (int m = 0; m < 2; m++) {
        weft_function *bad = fn_new("add2", body_bad_add, NULL, 2, 1, NULL, 0);
        weft_function *f = fn_new("outer", body_calls_bad, bad, 2, 1, NULL, modes[m]);
        weft_tensor *a = vec(3, (const float[]){ 1, 2, 3 }), *b = vec(4, (const float[]){ 1, 2, 3, 4 });
        weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(b) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, args, 2, &y, 1), WEFT_ESHAPE);
        cr_assert_null(y);
        const char *want = m == 0 ? "outer/add2: %2 = weft_add: f32[3] and f32[4] do not broadcast"
                                  : "weft_add: f32[3] and f32[4] do not broadcast";
        cr_expect_str_eq(weft_errmsg(), want);
        weft_tensor_release(a);
        weft_tensor_release(b);
        weft_function_destroy(&f);
        weft_function_destroy(&bad);
    }
}

Test(control, call_bad_input)
{
    weft_ctx *cx = NULL;
    weft_spec sig = spec_of("f32[3]");
    weft_function *g = fn_new("g", body_g, NULL, 2, 1, NULL, 0);
    weft_function *h = fn_new("h", body_g, NULL, 2, 1, (const weft_spec[]){ sig, sig }, 0);
    weft_tensor *x = vec(4, (const float[]){ 1, 2, 3, 4 });
    weft_value *r = (weft_value *)&r;
    cr_assert_eq(weft_call(NULL, g, NULL, 0, &r, 1), WEFT_EINVAL);

    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_eager_value(cx, x), *args[2] = { v, v };
    cr_assert_eq(weft_call(cx, g, args, 1, &r, 1), WEFT_EINVAL);
    cr_expect_null(r);
    cr_expect(strstr(weft_errmsg(), "'g' takes 2 args and returns 1 outputs") != NULL, "%s",
              weft_errmsg());
    weft_eager_end(&cx);

    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    v = weft_eager_value(cx, x);
    args[0] = args[1] = v;
    cr_assert_eq(weft_call(cx, h, args, 2, &r, 1), WEFT_ESIGNATURE);
    cr_expect_str_eq(weft_errmsg(), "weft_call(h): arg 0: expected f32[3], got f32[4]");
    /* Sticky: the next op of the context fails too. */
    cr_expect_null(weft_neg(cx, v));
    cr_expect_eq(weft_ctx_status(cx), WEFT_ESIGNATURE);
    weft_eager_end(&cx);

    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_eq(weft_call(cx, NULL, NULL, 0, NULL, 0), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_call: g is NULL");
    weft_eager_end(&cx);
    weft_tensor_release(x);
    weft_function_destroy(&g);
    weft_function_destroy(&h);
}

/* Recursion on a static value ends at trace time: pow2(x, n) = 2 * pow2(x, n - 1). */
static int body_pow2(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    int64_t n;
    int rc = weft_value_static_i64(a[1], &n);
    if (rc < 0)
        return rc;
    if (n == 0) {
        o[0] = a[0];
        return 0;
    }
    weft_value *args[2] = { weft_mul(cx, a[0], weft_const_f64(cx, 2.0)), weft_const_i64(cx, n - 1) };
    return weft_call(cx, *(weft_function **)u, args, 2, o, 1);
}

Test(control, call_recursion_on_a_static_value)
{
    weft_function *self = NULL;
    weft_function *f = fn_new("pow2", body_pow2, &self, 2, 1, NULL, 0);
    self = f;
    weft_tensor *x = vec(2, (const float[]){ 1, 3 }), *y = NULL;
    weft_arg args[2] = { weft_arg_tensor(x), weft_arg_i64(5) };
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    /* The constant 2.0 is weak: an f32 x stays f32. */
    cr_expect_eq(weft_tensor_dtype(y), WEFT_F32);
    const float *d = weft_tensor_data(y);
    cr_expect_eq(d[0], 32.0f);
    cr_expect_eq(d[1], 96.0f);
    weft_tensor_release(y);
    /* 100 levels: refused, not a stack overflow. */
    args[1] = weft_arg_i64(100);
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "nested more than 64 deep") != NULL, "%s", weft_errmsg());
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

/* ---- weft_cond ---- */

static int body_double(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], a[0]);
    return 0;
}

static int body_negate(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_neg(cx, a[0]);
    return 0;
}

typedef struct branches { weft_function *then_fn, *else_fn; } branches;

/* f(p, x) = cond(p, then, else, x) */
static int body_cond(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    branches *b = u;
    return weft_cond(cx, a[0], b->then_fn, b->else_fn, a + 1, 1, o, 1);
}

Test(control, cond_values_eager_and_traced)
{
    const float x[3] = { 1, -2, 3 }, dbl[3] = { 2, -4, 6 }, neg[3] = { -1, 2, -3 };
    for (int m = 0; m < 2; m++) {
        branches b = { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                       fn_new("negate", body_negate, NULL, 1, 1, NULL, 0) };
        weft_function *f = fn_new("pick", body_cond, &b, 2, 1, NULL, modes[m]);
        weft_tensor *xt = vec(3, x), *p[2] = { boolean(true), boolean(false) };
        for (int call = 0; call < 4; call++) {
            weft_arg args[2] = { weft_arg_tensor(p[call % 2]), weft_arg_tensor(xt) };
            weft_tensor *y = NULL;
            cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
            expect_f32(y, 3, call % 2 == 0 ? dbl : neg);
            weft_tensor_release(y);
        }
        if (m == 0) {
            /* One trace of the caller; each branch traced once, through
             * its cache, when the cond was recorded; runs look nothing up. */
            cr_expect_eq(weft_function_tracing_count(f), 1);
            weft_function_stats s;
            weft_function_get_stats(b.then_fn, &s);
            cr_expect_eq(s.traces, 1);
            cr_expect_eq(s.calls, 0);
            char buf[2048] = "";
            FILE *mf = fmemopen(buf, sizeof buf - 1, "w");
            cr_assert_eq(weft_function_print_ops(f, 0, mf), 0);
            fclose(mf);
            cr_expect(strstr(buf, "= cond<double,negate>(%0, %1) : (f32[3])") != NULL, "%s", buf);
            cr_expect(strstr(buf, "= result<0>(") != NULL, "%s", buf);
        }
        weft_tensor_release(xt);
        weft_tensor_release(p[0]);
        weft_tensor_release(p[1]);
        weft_function_destroy(&f);
        weft_function_destroy(&b.then_fn);
        weft_function_destroy(&b.else_fn);
    }
}

/* f(p, n) = minimum(cond(p, double, negate, 2), n) with n an i32 tensor
 * and 2 a weak scalar.  The predicate is computed, so the traced cond runs
 * branches traced for an i64[] (no weakness): its result is a strong i64
 * and the minimum is i64.  Eagerly the branch must see the same strong
 * i64, or the minimum would take n's i32. */
static int body_cond_weak_arg(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    branches *b = u;
    weft_value *two = weft_const_i64(cx, 2), *r = NULL;
    if (weft_cond(cx, a[0], b->then_fn, b->else_fn, &two, 1, &r, 1) < 0)
        return weft_ctx_status(cx);
    o[0] = weft_minimum(cx, r, a[1]);
    return weft_ctx_status(cx);
}

Test(control, cond_on_a_computed_predicate_makes_weak_arguments_strong)
{
    for (int m = 0; m < 2; m++) {
        branches b = { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                       fn_new("negate", body_negate, NULL, 1, 1, NULL, 0) };
        weft_function *f = fn_new("pick_weak", body_cond_weak_arg, &b, 2, 1, NULL, modes[m]);
        int32_t nv = 3;
        weft_tensor *n = NULL, *p[2] = { boolean(true), boolean(false) };
        cr_assert_eq(weft_tensor_create(WEFT_I32, 0, NULL, &nv, &n), 0);
        for (int call = 0; call < 2; call++) {
            weft_arg args[2] = { weft_arg_tensor(p[call]), weft_arg_tensor(n) };
            weft_tensor *y = NULL;
            cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
            cr_expect_eq(weft_tensor_dtype(y), WEFT_I64, "mode %d call %d: dtype %d", m, call,
                         (int)weft_tensor_dtype(y));
            cr_expect_eq(*(const int64_t *)weft_tensor_data(y), call == 0 ? 3 : -2);
            weft_tensor_release(y);
        }
        weft_tensor_release(n);
        weft_tensor_release(p[0]);
        weft_tensor_release(p[1]);
        weft_function_destroy(&f);
        weft_function_destroy(&b.then_fn);
        weft_function_destroy(&b.else_fn);
    }
}

/* A static predicate (weft_arg_i64) picks the branch at trace time. */
static int body_cond_static(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    branches *b = u;
    return weft_cond(cx, a[1], b->then_fn, b->else_fn, a, 1, o, 1);
}

static int body_sum_all(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_sum(cx, a[0], WEFT_ALL_AXES);
    return 0;
}

Test(control, cond_static_predicate_traces_one_branch)
{
    /* The branches differ in spec: only one is ever traced, so no error. */
    branches b = { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                   fn_new("total", body_sum_all, NULL, 1, 1, NULL, 0) };
    weft_function *f = fn_new("pick", body_cond_static, &b, 2, 1, NULL, 0);
    weft_tensor *xt = vec(3, (const float[]){ 1, 2, 3 }), *y = NULL;
    weft_arg args[2] = { weft_arg_tensor(xt), weft_arg_i64(0) };
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    expect_f32(y, 1, (const float[]){ 6 });
    weft_tensor_release(y);
    args[1] = weft_arg_i64(1);
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    expect_f32(y, 3, (const float[]){ 2, 4, 6 });
    weft_tensor_release(y);
    /* Each static value traced the caller once; neither branch's cache ran. */
    cr_expect_eq(weft_function_tracing_count(f), 2);
    cr_expect_eq(weft_function_tracing_count(b.then_fn), 0);
    cr_expect_eq(weft_function_tracing_count(b.else_fn), 0);
    weft_tensor_release(xt);
    weft_function_destroy(&f);
    weft_function_destroy(&b.then_fn);
    weft_function_destroy(&b.else_fn);
}

Test(control, cond_branch_spec_mismatch)
{
    branches b = { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                   fn_new("total", body_sum_all, NULL, 1, 1, NULL, 0) };
    for (int m = 0; m < 2; m++) {
        weft_function *f = fn_new("pick", body_cond, &b, 2, 1, NULL, modes[m]);
        weft_tensor *xt = vec(3, (const float[]){ 1, 2, 3 }), *p = boolean(true), *y = NULL;
        weft_arg args[2] = { weft_arg_tensor(p), weft_arg_tensor(xt) };
        int rc = weft_function_call(f, args, 2, &y, 1);
        if (m == 0) {
            /* Traced: both branches are traced and must agree. */
            cr_assert_eq(rc, WEFT_ESHAPE);
            cr_expect_str_eq(weft_errmsg(), "pick: %2 = weft_cond: output 0: then_fn 'double' "
                                            "returns f32[3], else_fn 'total' returns f32[]");
        } else {
            /* Eagerly only the chosen branch runs: plain C control flow. */
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            expect_f32(y, 3, (const float[]){ 2, 4, 6 });
            weft_tensor_release(y);
        }
        weft_tensor_release(xt);
        weft_tensor_release(p);
        weft_function_destroy(&f);
    }
    weft_function_destroy(&b.then_fn);
    weft_function_destroy(&b.else_fn);
}

static int body_cond_wrong(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    branches *b = u;
    /* x as the predicate (f32[3]), then 2 outputs for branches of 1. */
    int rc = weft_cond(cx, a[1], b->then_fn, b->else_fn, a + 1, 1, o, 1);
    if (rc != WEFT_EDTYPE)
        return WEFT_EIO;
    weft_value *two[2];
    return weft_cond(cx, a[0], b->then_fn, b->else_fn, a + 1, 1, two, 2);
}

Test(control, cond_bad_input)
{
    branches b = { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                   fn_new("negate", body_negate, NULL, 1, 1, NULL, 0) };
    for (int m = 0; m < 2; m++) {
        weft_function *f = fn_new("bad", body_cond_wrong, &b, 2, 1, NULL, modes[m]);
        weft_tensor *xt = vec(3, (const float[]){ 1, 2, 3 }), *p = boolean(true), *y = NULL;
        weft_arg args[2] = { weft_arg_tensor(p), weft_arg_tensor(xt) };
        /* The first error is sticky: pred f32[3] is not a bool[]. */
        cr_assert_eq(weft_function_call(f, args, 2, &y, 1), WEFT_EDTYPE);
        cr_expect(strstr(weft_errmsg(), "weft_cond: pred is f32[3], not bool[]") != NULL, "%s",
                  weft_errmsg());
        weft_tensor_release(xt);
        weft_tensor_release(p);
        weft_function_destroy(&f);
    }
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_tensor *pt = boolean(false);
    weft_value *p = weft_eager_value(cx, pt), *out[2];
    cr_assert_eq(weft_cond(cx, p, b.then_fn, b.else_fn, &p, 1, out, 2), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "'negate' takes 1 args and returns 1 outputs; it is given 1 "
                                    "and must return 2") != NULL, "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    p = weft_eager_value(cx, pt);
    cr_assert_eq(weft_cond(cx, p, NULL, b.else_fn, &p, 1, out, 1), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_cond: then_fn is NULL");
    weft_eager_end(&cx);
    weft_tensor_release(pt);
    weft_function_destroy(&b.then_fn);
    weft_function_destroy(&b.else_fn);
}

/* ---- weft_switch_case ---- */

static int body_plus_one(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], weft_cast(cx, weft_const_f64(cx, 1.0), WEFT_F32));
    return 0;
}

typedef struct cases3 { weft_function *fns[3]; } cases3;

/* f(i, x) = switch_case(i, fns, x) */
static int body_switch(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    cases3 *c = u;
    return weft_switch_case(cx, a[0], c->fns, 3, a + 1, 1, o, 1);
}

static weft_tensor *i32_scalar(int32_t v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 0, NULL, &v, &t), 0);
    return t;
}

Test(control, switch_case_values_eager_and_traced)
{
    const float x[3] = { 1, -2, 3 }, dbl[3] = { 2, -4, 6 }, neg[3] = { -1, 2, -3 };
    const float inc[3] = { 2, -1, 4 };
    /* Out of range, either side, is the last branch. */
    const int32_t index[5] = { 0, 1, 2, 7, -1 };
    const float *want[5] = { dbl, neg, inc, inc, inc };
    for (int m = 0; m < 2; m++) {
        cases3 c = { { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                       fn_new("negate", body_negate, NULL, 1, 1, NULL, 0),
                       fn_new("plus_one", body_plus_one, NULL, 1, 1, NULL, 0) } };
        weft_function *f = fn_new("pick", body_switch, &c, 2, 1, NULL, modes[m]);
        weft_tensor *xt = vec(3, x);
        for (int call = 0; call < 5; call++) {
            weft_tensor *it = i32_scalar(index[call]), *y = NULL;
            weft_arg args[2] = { weft_arg_tensor(it), weft_arg_tensor(xt) };
            cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
            expect_f32(y, 3, want[call]);
            weft_tensor_release(y);
            weft_tensor_release(it);
        }
        if (m == 0) {
            /* One trace of the caller, each branch traced once when the
             * node was recorded. */
            cr_expect_eq(weft_function_tracing_count(f), 1);
            for (int k = 0; k < 3; k++)
                cr_expect_eq(weft_function_tracing_count(c.fns[k]), 1);
            char *text = test_ops_text(f);
            cr_expect(strstr(text, "= switch_case<double,negate,plus_one>(%0, %1) : (f32[3])"),
                      "%s", text);
            free(text);
        }
        weft_tensor_release(xt);
        weft_function_destroy(&f);
        for (int k = 0; k < 3; k++)
            weft_function_destroy(&c.fns[k]);
    }
}

/* A static index (weft_arg_i64) picks the branch at trace time. */
static int body_switch_static(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    cases3 *c = u;
    return weft_switch_case(cx, a[1], c->fns, 3, a, 1, o, 1);
}

Test(control, switch_case_static_index_and_spec_mismatch)
{
    cases3 c = { { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                   fn_new("negate", body_negate, NULL, 1, 1, NULL, 0),
                   fn_new("total", body_sum_all, NULL, 1, 1, NULL, 0) } };
    weft_tensor *xt = vec(3, (const float[]){ 1, 2, 3 }), *y = NULL;
    /* Static: the branches may differ, only the chosen one is traced. */
    weft_function *f = fn_new("pick", body_switch_static, &c, 2, 1, NULL, 0);
    weft_arg args[2] = { weft_arg_tensor(xt), weft_arg_i64(2) };
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    expect_f32(y, 1, (const float[]){ 6 });
    weft_tensor_release(y);
    args[1] = weft_arg_i64(0);
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    expect_f32(y, 3, (const float[]){ 2, 4, 6 });
    weft_tensor_release(y);
    for (int k = 0; k < 3; k++)
        cr_expect_eq(weft_function_tracing_count(c.fns[k]), 0);
    weft_function_destroy(&f);
    /* Computed: every branch is traced, and they must agree. */
    for (int m = 0; m < 2; m++) {
        weft_function *g = fn_new("pick", body_switch, &c, 2, 1, NULL, modes[m]);
        weft_tensor *it = i32_scalar(0);
        weft_arg a2[2] = { weft_arg_tensor(it), weft_arg_tensor(xt) };
        int rc = weft_function_call(g, a2, 2, &y, 1);
        if (m == 0) {
            cr_assert_eq(rc, WEFT_ESHAPE);
            cr_expect_str_eq(weft_errmsg(), "pick: %2 = weft_switch_case: output 0: "
                             "branch_fns[0] 'double' returns f32[3], branch_fns[2] 'total' "
                             "returns f32[]");
        } else {
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            expect_f32(y, 3, (const float[]){ 2, 4, 6 });
            weft_tensor_release(y);
        }
        weft_tensor_release(it);
        weft_function_destroy(&g);
    }
    weft_tensor_release(xt);
    for (int k = 0; k < 3; k++)
        weft_function_destroy(&c.fns[k]);
}

/* x where it is positive: a length unknown while tracing. */
static int body_positive(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_boolean_mask(cx, a[0], weft_gt(cx, a[0], weft_const_f64(cx, 0.0)), 0);
    return 0;
}

/* Branch 1 returns f32[?] and fits branch 0's f32[3] (the result is
 * f32[?]); branch 2's f32[] does not, and the message shows branch 0's
 * own spec, not the merged one. */
Test(control, switch_case_merges_unknown_dims_and_names_branch_zero)
{
    cases3 c = { { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                   fn_new("positive", body_positive, NULL, 1, 1, NULL, 0),
                   fn_new("double_again", body_double, NULL, 1, 1, NULL, 0) } };
    weft_function *f = fn_new("pick", body_switch, &c, 2, 1, NULL, 0);
    weft_tensor *xt = vec(3, (const float[]){ 1, -2, 3 }), *it = i32_scalar(1), *y = NULL;
    weft_arg args[2] = { weft_arg_tensor(it), weft_arg_tensor(xt) };
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    expect_f32(y, 2, (const float[]){ 1, 3 });
    weft_tensor_release(y);
    char *text = test_ops_text(f);
    cr_expect(strstr(text, ": (f32[?])"), "%s", text);
    free(text);
    weft_function_destroy(&f);
    weft_function_destroy(&c.fns[2]);
    c.fns[2] = fn_new("total", body_sum_all, NULL, 1, 1, NULL, 0);
    f = fn_new("pick", body_switch, &c, 2, 1, NULL, 0);
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), WEFT_ESHAPE);
    cr_expect_str_eq(weft_errmsg(), "pick: %2 = weft_switch_case: output 0: branch_fns[0] "
                     "'double' returns f32[3], branch_fns[2] 'total' returns f32[]");
    weft_function_destroy(&f);
    weft_tensor_release(xt);
    weft_tensor_release(it);
    for (int k = 0; k < 3; k++)
        weft_function_destroy(&c.fns[k]);
}

Test(control, switch_case_bad_input)
{
    weft_function *fns[2] = { fn_new("double", body_double, NULL, 1, 1, NULL, 0), NULL };
    weft_tensor *xt = vec(2, (const float[]){ 1, 2 }), *it = i32_scalar(0);
    weft_tensor *two = f32s(1, (const int64_t[]){ 2 }, NULL);
    struct { int code; const char *says; } want[] = {
        { WEFT_EDTYPE, "weft_switch_case: branch_index is f32[2], not an i32[] or i64[]" },
        { WEFT_EINVAL, "weft_switch_case: branch_fns is NULL" },
        { WEFT_EINVAL, "weft_switch_case: no branches (n_branches is 0)" },
        { WEFT_EINVAL, "weft_switch_case: branch_fns[1] is NULL" },
        { WEFT_EINVAL, "weft_switch_case: branch_index is NULL" },
    };
    for (int k = 0; k < 5; k++) {
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rt, &cx), 0);
        weft_value *x = weft_eager_value(cx, xt), *i = weft_eager_value(cx, it);
        weft_value *bad = weft_eager_value(cx, two), *out = NULL;
        int rc;
        switch (k) {
        case 0: rc = weft_switch_case(cx, bad, fns, 1, &x, 1, &out, 1); break;
        case 1: rc = weft_switch_case(cx, i, NULL, 1, &x, 1, &out, 1); break;
        case 2: rc = weft_switch_case(cx, i, fns, 0, &x, 1, &out, 1); break;
        case 3: rc = weft_switch_case(cx, i, fns, 2, &x, 1, &out, 1); break;
        default: rc = weft_switch_case(cx, NULL, fns, 1, &x, 1, &out, 1); break;
        }
        cr_expect_eq(rc, want[k].code, "case %d: %d", k, rc);
        cr_expect_str_eq(weft_errmsg(), want[k].says, "case %d", k);
        cr_expect_null(out);
        weft_eager_end(&cx);
    }
    weft_tensor_release(xt);
    weft_tensor_release(it);
    weft_tensor_release(two);
    weft_function_destroy(&fns[0]);
}

/* Host calls inside a branch: they run when the branch is taken only, and
 * a cond whose result is unused is not dead code when a branch has some. */
static int host_runs;  /* (atomic) */

static int count_host(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    (void)user;
    __atomic_fetch_add(&host_runs, 1, __ATOMIC_SEQ_CST);
    *out = weft_tensor_retain(in[0]);
    return 0;
}

static int body_counts(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    weft_spec s;
    weft_value_spec(a[0], &s);
    o[0] = weft_host_call(cx, count_host, NULL, a, 1, &s, 0);
    return 0;
}

/* Returns x itself: the cond's result is dead. */
static int body_cond_for_effect(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    branches *b = u;
    weft_value *unused = NULL;
    int rc = weft_cond(cx, a[0], b->then_fn, b->else_fn, a + 1, 1, &unused, 1);
    o[0] = weft_neg(cx, a[1]);
    return rc;
}

Test(control, cond_runs_only_the_taken_branch_side_effects)
{
    branches b = { fn_new("counts", body_counts, NULL, 1, 1, NULL, 0),
                   fn_new("negate", body_negate, NULL, 1, 1, NULL, 0) };
    for (int m = 0; m < 2; m++) {
        weft_function *f = fn_new("effect", body_cond_for_effect, &b, 2, 1, NULL, modes[m]);
        weft_tensor *xt = vec(2, (const float[]){ 1, 2 }), *p[2] = { boolean(true), boolean(false) };
        __atomic_store_n(&host_runs, 0, __ATOMIC_SEQ_CST);
        for (int call = 0; call < 6; call++) {
            weft_arg args[2] = { weft_arg_tensor(p[call % 3 == 0 ? 0 : 1]), weft_arg_tensor(xt) };
            weft_tensor *y = NULL;
            cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
            expect_f32(y, 2, (const float[]){ -1, -2 });
            weft_tensor_release(y);
        }
        cr_expect_eq(__atomic_load_n(&host_runs, __ATOMIC_SEQ_CST), 2, "mode %d: %d host calls", m,
                     __atomic_load_n(&host_runs, __ATOMIC_SEQ_CST));
        weft_tensor_release(xt);
        weft_tensor_release(p[0]);
        weft_tensor_release(p[1]);
        weft_function_destroy(&f);
    }
    weft_function_destroy(&b.then_fn);
    weft_function_destroy(&b.else_fn);
}

/* ---- weft_while_loop ---- */

/* cond(i, acc) = i < 5 */
static int body_below5(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_lt(cx, a[0], weft_const_i64(cx, 5));
    return 0;
}

/* body(i, acc) = (i + 1, acc * 2) */
static int body_step(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], weft_const_i64(cx, 1));
    o[1] = weft_add(cx, a[1], a[1]);
    return 0;
}

typedef struct loop_fns { weft_function *cond_fn, *body_fn; } loop_fns;

static int body_loop(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    loop_fns *l = u;
    return weft_while_loop(cx, l->cond_fn, l->body_fn, a, 2, o);
}

Test(control, while_values_eager_and_traced)
{
    for (int m = 0; m < 2; m++) {
        loop_fns l = { fn_new("below5", body_below5, NULL, 2, 1, NULL, 0),
                       fn_new("step", body_step, NULL, 2, 2, NULL, 0) };
        weft_function *f = fn_new("loop", body_loop, &l, 2, 2, NULL, modes[m]);
        weft_tensor *acc = vec(3, (const float[]){ 1, -1, 0.5f });
        for (int64_t start = 0; start <= 7; start += 7) {
            weft_tensor *i0 = i64_scalar(start), *outs[2] = { NULL, NULL };
            weft_arg args[2] = { weft_arg_tensor(i0), weft_arg_tensor(acc) };
            cr_assert_eq(weft_function_call(f, args, 2, outs, 2), 0, "%s", weft_errmsg());
            /* From 0: five iterations; from 7: none. */
            cr_expect_eq(*(const int64_t *)weft_tensor_data(outs[0]), start ? 7 : 5);
            if (start == 0)
                expect_f32(outs[1], 3, (const float[]){ 32, -32, 16 });
            else
                expect_f32(outs[1], 3, (const float[]){ 1, -1, 0.5f });
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
            weft_tensor_release(i0);
        }
        if (m == 0) {
            cr_expect_eq(weft_function_tracing_count(f), 1);
            cr_expect_eq(weft_function_tracing_count(l.cond_fn), 1);
            cr_expect_eq(weft_function_tracing_count(l.body_fn), 1);
        }
        weft_tensor_release(acc);
        weft_function_destroy(&f);
        weft_function_destroy(&l.cond_fn);
        weft_function_destroy(&l.body_fn);
    }
}

/* body(i, acc) = (i + 1, acc reshaped to [3, 1]): changes variable 1. */
static int body_reshapes(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], weft_const_i64(cx, 1));
    o[1] = weft_reshape(cx, a[1], 2, (const int64_t[]){ 3, 1 });
    return 0;
}

/* cond(i, acc) = acc: not a bool[]. */
static int body_not_bool(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    (void)cx;
    o[0] = a[1];
    return 0;
}

Test(control, while_body_changing_a_spec)
{
    loop_fns l = { fn_new("below5", body_below5, NULL, 2, 1, NULL, 0),
                   fn_new("reshapes", body_reshapes, NULL, 2, 2, NULL, 0) };
    loop_fns nb = { fn_new("not_bool", body_not_bool, NULL, 2, 1, NULL, 0), l.body_fn };
    for (int m = 0; m < 2; m++) {
        weft_function *f = fn_new("loop", body_loop, &l, 2, 2, NULL, modes[m]);
        weft_function *g = fn_new("loop2", body_loop, &nb, 2, 2, NULL, modes[m]);
        weft_tensor *acc = vec(3, (const float[]){ 1, 2, 3 }), *i0 = i64_scalar(0);
        weft_tensor *outs[2] = { NULL, NULL };
        weft_arg args[2] = { weft_arg_tensor(i0), weft_arg_tensor(acc) };
        cr_assert_eq(weft_function_call(f, args, 2, outs, 2), WEFT_ESHAPE);
        cr_expect(strstr(weft_errmsg(), "weft_while_loop: body_fn 'reshapes' changes loop variable "
                                        "1 from f32[3] to f32[3,1]") != NULL, "%s", weft_errmsg());
        if (m == 1)
            cr_expect(strstr(weft_errmsg(), "(iteration 0)") != NULL, "%s", weft_errmsg());
        cr_assert_null(outs[0]);
        cr_assert_eq(weft_function_call(g, args, 2, outs, 2), WEFT_EDTYPE);
        cr_expect(strstr(weft_errmsg(), "weft_while_loop: cond_fn 'not_bool' returns f32[3], "
                                        "not bool[]") != NULL, "%s", weft_errmsg());
        weft_tensor_release(acc);
        weft_tensor_release(i0);
        weft_function_destroy(&f);
        weft_function_destroy(&g);
    }
    weft_function_destroy(&l.cond_fn);
    weft_function_destroy(&l.body_fn);
    weft_function_destroy(&nb.cond_fn);
}

Test(control, while_bad_input)
{
    loop_fns l = { fn_new("below5", body_below5, NULL, 2, 1, NULL, 0),
                   fn_new("step", body_step, NULL, 2, 2, NULL, 0) };
    weft_ctx *cx = NULL;
    weft_tensor *i0 = i64_scalar(0);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_eager_value(cx, i0), *out[2];
    /* One variable for functions of two. */
    cr_assert_eq(weft_while_loop(cx, l.cond_fn, l.body_fn, &v, 1, out), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "'below5' takes 2 args") != NULL, "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    v = weft_eager_value(cx, i0);
    cr_assert_eq(weft_while_loop(cx, l.cond_fn, NULL, &v, 1, out), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_while_loop: body_fn is NULL");
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_eq(weft_while_loop(cx, l.cond_fn, l.body_fn, NULL, 0, out), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_while_loop: no loop variables");
    weft_eager_end(&cx);
    weft_tensor_release(i0);
    weft_function_destroy(&l.cond_fn);
    weft_function_destroy(&l.body_fn);
}

/* ---- nesting: a cond inside a while inside a map ---- */

typedef struct nest {
    weft_function *pos, *flip;       /* the branches */
    weft_function *pick, *below3;    /* cond_fn and body_fn of the loop */
    weft_function *row;              /* the mapped function */
} nest;

/* pick(i, r) = (i + 1, cond(sum(r) > 0, double, negate, r)) */
static int body_pick(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    nest *n = u;
    weft_value *p = weft_gt(cx, weft_sum(cx, a[1], WEFT_ALL_AXES), weft_const_f64(cx, 0.0));
    o[0] = weft_add(cx, a[0], weft_const_i64(cx, 1));
    return weft_cond(cx, p, n->pos, n->flip, a + 1, 1, o + 1, 1);
}

static int body_below3(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_lt(cx, a[0], weft_const_i64(cx, 3));
    return 0;
}

/* row(r) = the r of while(i < 3) pick(i, r), from i = 0 */
static int body_row(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    nest *n = u;
    weft_value *vars[2] = { weft_const_i64(cx, 0), a[0] }, *res[2];
    int rc = weft_while_loop(cx, n->below3, n->pick, vars, 2, res);
    o[0] = res[1];
    return rc;
}

static int body_map_rows(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    nest *n = u;
    o[0] = weft_map(cx, n->row, a[0], 2);
    return 0;
}

/* The same in C: three times, double the row if its sum is positive,
 * else negate it. */
static void nest_ref(float *r, int cols)
{
    for (int it = 0; it < 3; it++) {
        float s = 0;
        for (int j = 0; j < cols; j++)
            s += r[j];
        for (int j = 0; j < cols; j++)
            r[j] = s > 0 ? 2 * r[j] : -r[j];
    }
}

Test(control, cond_inside_while_inside_map)
{
    const float x[4][3] = { { 1, 2, 3 }, { -1, -2, 1 }, { 0, 0, 0 }, { -5, 1, 1 } };
    float want[4][3];
    memcpy(want, x, sizeof want);
    for (int i = 0; i < 4; i++)
        nest_ref(want[i], 3);
    for (int m = 0; m < 2; m++) {
        nest n;
        n.pos = fn_new("double", body_double, NULL, 1, 1, NULL, modes[m]);
        n.flip = fn_new("negate", body_negate, NULL, 1, 1, NULL, modes[m]);
        n.pick = fn_new("pick", body_pick, &n, 2, 2, NULL, modes[m]);
        n.below3 = fn_new("below3", body_below3, NULL, 2, 1, NULL, modes[m]);
        n.row = fn_new("row", body_row, &n, 1, 1, NULL, modes[m]);
        weft_function *f = fn_new("rows", body_map_rows, &n, 1, 1, NULL, modes[m]);
        weft_tensor *xt = f32s(2, (const int64_t[]){ 4, 3 }, &x[0][0]), *y = NULL;
        weft_arg arg = weft_arg_tensor(xt);
        for (int call = 0; call < 2; call++) {
            cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
            expect_f32(y, 12, &want[0][0]);
            weft_tensor_release(y);
        }
        weft_tensor_release(xt);
        weft_function_destroy(&f);
        weft_function_destroy(&n.row);
        weft_function_destroy(&n.below3);
        weft_function_destroy(&n.pick);
        weft_function_destroy(&n.flip);
        weft_function_destroy(&n.pos);
    }
}

/* ---- weft_map_ex ---- */

/* fn(a_row, b_i, c) = (a_row * b_i + c, sum(a_row)) */
static int body_axpc(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, weft_mul(cx, a[0], a[1]), a[2]);
    o[1] = weft_sum(cx, a[0], WEFT_ALL_AXES);
    return 0;
}

typedef struct mapper { weft_function *fn; unsigned pi; } mapper;

static int body_map_ex(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    mapper *mp = u;
    return weft_map_ex(cx, mp->fn, a, 2, a + 2, 1, o, 2, mp->pi);
}

Test(control, map_ex_values_eager_and_traced)
{
    const float av[4][2] = { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }, bv[4] = { 1, 0, -1, 2 };
    const float cv[2] = { 10, 20 };
    float want0[4][2], want1[4];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 2; j++)
            want0[i][j] = av[i][j] * bv[i] + cv[j];
        want1[i] = av[i][0] + av[i][1];
    }
    for (int m = 0; m < 2; m++) {
        mapper mp = { fn_new("axpc", body_axpc, NULL, 3, 2, NULL, 0), 2 };
        weft_function *f = fn_new("rows", body_map_ex, &mp, 3, 2, NULL, modes[m]);
        weft_tensor *a = f32s(2, (const int64_t[]){ 4, 2 }, &av[0][0]), *b = vec(4, bv), *c = vec(2, cv);
        weft_arg args[3] = { weft_arg_tensor(a), weft_arg_tensor(b), weft_arg_tensor(c) };
        for (int call = 0; call < 2; call++) {
            weft_tensor *outs[2] = { NULL, NULL };
            cr_assert_eq(weft_function_call(f, args, 3, outs, 2), 0, "%s", weft_errmsg());
            cr_expect_eq(weft_tensor_rank(outs[0]), 2);
            expect_f32(outs[0], 8, &want0[0][0]);
            expect_f32(outs[1], 4, want1);
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
        /* Traced once for the slices and the capture, as a whole map. */
        cr_expect_eq(weft_function_tracing_count(mp.fn), 1);
        weft_tensor_release(a);
        weft_tensor_release(b);
        weft_tensor_release(c);
        weft_function_destroy(&f);
        weft_function_destroy(&mp.fn);
    }
}

Test(control, map_ex_rows_must_agree)
{
    for (int m = 0; m < 2; m++) {
        mapper mp = { fn_new("axpc", body_axpc, NULL, 3, 2, NULL, 0), 0 };
        /* Traced for unknown rows, so that the run finds the mismatch. */
        weft_spec sig[3] = { spec_of("f32[?,2]"), spec_of("f32[?]"), spec_of("f32[2]") };
        weft_function *f = fn_new("rows", body_map_ex, &mp, 3, 2, sig, modes[m]);
        weft_function *g = fn_new("rows_known", body_map_ex, &mp, 3, 2, NULL, modes[m]);
        weft_tensor *a = f32s(2, (const int64_t[]){ 3, 2 }, NULL), *b = vec(4, NULL), *c = vec(2, NULL);
        weft_arg args[3] = { weft_arg_tensor(a), weft_arg_tensor(b), weft_arg_tensor(c) };
        weft_tensor *outs[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, args, 3, outs, 2), WEFT_ESHAPE);
        cr_expect(strstr(weft_errmsg(), "weft_map_ex: elems 1 has 4 rows, elems 0 has 3") != NULL,
                  "%s", weft_errmsg());
        cr_assert_eq(weft_function_call(g, args, 3, outs, 2), WEFT_ESHAPE);
        cr_expect(strstr(weft_errmsg(), "weft_map_ex: elems 1 has 4 rows, elems 0 has 3") != NULL,
                  "%s", weft_errmsg());
        cr_assert_null(outs[0]);
        weft_tensor_release(a);
        weft_tensor_release(b);
        weft_tensor_release(c);
        weft_function_destroy(&f);
        weft_function_destroy(&g);
        weft_function_destroy(&mp.fn);
    }
}

/* map over elems of unknown rank: traced as eager, the rank decided by the
 * run. */
static int body_square(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_mul(cx, a[0], a[0]);
    return 0;
}

static int body_map1(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    o[0] = weft_map(cx, u, a[0], 0);
    return 0;
}

Test(control, map_over_unknown_rank)
{
    weft_spec any = spec_of("f32[*]");
    for (int m = 0; m < 2; m++) {
        weft_function *sq = fn_new("square", body_square, NULL, 1, 1, NULL, 0);
        weft_function *f = fn_new("squares", body_map1, sq, 1, 1, &any, modes[m]);
        weft_tensor *v = vec(3, (const float[]){ 1, 2, 3 });
        weft_tensor *g = f32s(2, (const int64_t[]){ 2, 2 }, (const float[]){ 1, -2, 3, -4 });
        weft_tensor *y = NULL;
        weft_arg arg = weft_arg_tensor(v);
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
        expect_f32(y, 3, (const float[]){ 1, 4, 9 });
        cr_expect_eq(weft_tensor_rank(y), 1);
        weft_tensor_release(y);
        arg = weft_arg_tensor(g);
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
        expect_f32(y, 4, (const float[]){ 1, 4, 9, 16 });
        cr_expect_eq(weft_tensor_rank(y), 2);
        weft_tensor_release(y);
        if (m == 0)
            cr_expect_eq(weft_function_tracing_count(f), 1);
        /* A scalar has no rows: the same error in both modes. */
        weft_tensor *s = f32s(0, NULL, (const float[]){ 1 });
        arg = weft_arg_tensor(s);
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), WEFT_ESHAPE);
        cr_expect(strstr(weft_errmsg(), "weft_map: elems must have rank >= 1") != NULL, "%s",
                  weft_errmsg());
        weft_tensor_release(s);
        weft_tensor_release(v);
        weft_tensor_release(g);
        weft_function_destroy(&f);
        weft_function_destroy(&sq);
    }
}

/* The mapped function has an input signature that a slice of unknown rank
 * may match: traced for the signature, each row checked when it runs. */
Test(control, map_over_unknown_rank_into_a_signature)
{
    weft_spec any = spec_of("f32[*]"), row = spec_of("f32[?]");
    for (int m = 0; m < 2; m++) {
        weft_function *sq = fn_new("square", body_square, NULL, 1, 1, &row, 0);
        weft_function *f = fn_new("squares", body_map1, sq, 1, 1, &any, modes[m]);
        weft_tensor *g = f32s(2, (const int64_t[]){ 2, 2 }, (const float[]){ 1, -2, 3, -4 });
        weft_tensor *c = f32s(3, (const int64_t[]){ 1, 1, 2 }, (const float[]){ 1, 2 });
        weft_tensor *y = NULL;
        weft_arg arg = weft_arg_tensor(g);
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
        expect_f32(y, 4, (const float[]){ 1, 4, 9, 16 });
        weft_tensor_release(y);
        /* Rows f32[1,2] do not match f32[?], in either mode. */
        arg = weft_arg_tensor(c);
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), WEFT_ESIGNATURE);
        cr_expect(strstr(weft_errmsg(), "expected f32[?], got f32[1,2]") != NULL, "%s",
                  weft_errmsg());
        weft_tensor_release(c);
        weft_tensor_release(g);
        weft_function_destroy(&f);
        weft_function_destroy(&sq);
    }
}

/* ---- weft_host_call_ex ---- */

static int sum_and_max(weft_tensor *const *in, size_t n_in, weft_tensor **out, size_t n_out,
                       void *user)
{
    (void)n_in;
    (void)user;
    cr_assert_eq(n_out, 2);
    const float *x = weft_tensor_data(in[0]);
    float s = 0, mx = x[0];
    for (int64_t i = 0; i < weft_tensor_numel(in[0]); i++) {
        s += x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    weft_tensor_create(WEFT_F32, 0, NULL, &s, &out[0]);
    weft_tensor_create(WEFT_F32, 0, NULL, &mx, &out[1]);
    return 0;
}

static int only_one(weft_tensor *const *in, size_t n_in, weft_tensor **out, size_t n_out,
                    void *user)
{
    (void)n_in;
    (void)n_out;
    (void)user;
    out[0] = weft_tensor_retain(in[0]);
    return 0;
}

static int counts_ex(weft_tensor *const *in, size_t n_in, weft_tensor **out, size_t n_out,
                     void *user)
{
    (void)in;
    (void)n_in;
    (void)out;
    (void)n_out;
    (void)user;
    __atomic_fetch_add(&host_runs, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int body_host_ex(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    weft_spec s[2] = { spec_of("f32[]"), spec_of("f32[]") };
    int rc = weft_host_call_ex(cx, u ? only_one : sum_and_max, NULL, a, 1, s, 2, o, 0);
    if (rc < 0)
        return rc;
    /* One for its side effect only: no outputs, and not dead code. */
    return weft_host_call_ex(cx, counts_ex, NULL, a, 1, NULL, 0, NULL, WEFT_HOST_SERIAL);
}

Test(control, host_call_ex_values_and_errors)
{
    for (int m = 0; m < 2; m++) {
        weft_function *f = fn_new("stats", body_host_ex, NULL, 1, 2, NULL, modes[m]);
        weft_function *bad = fn_new("bad", body_host_ex, (void *)1, 1, 2, NULL, modes[m]);
        weft_tensor *x = vec(4, (const float[]){ 3, -1, 7, 2 }), *outs[2] = { NULL, NULL };
        weft_arg arg = weft_arg_tensor(x);
        __atomic_store_n(&host_runs, 0, __ATOMIC_SEQ_CST);
        for (int call = 0; call < 3; call++) {
            cr_assert_eq(weft_function_call(f, &arg, 1, outs, 2), 0, "%s", weft_errmsg());
            expect_f32(outs[0], 1, (const float[]){ 11 });
            expect_f32(outs[1], 1, (const float[]){ 7 });
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
        cr_expect_eq(__atomic_load_n(&host_runs, __ATOMIC_SEQ_CST), 3);
        /* Output 0 is f32[4] for f32[]; output 1 is missing. */
        cr_assert_eq(weft_function_call(bad, &arg, 1, outs, 2), WEFT_ESHAPE);
        cr_expect(strstr(weft_errmsg(), "weft_host_call_ex: callback returned f32[4] for output 0, "
                                        "expected f32[]") != NULL, "%s", weft_errmsg());
        cr_assert_null(outs[0]);
        weft_tensor_release(x);
        weft_function_destroy(&f);
        weft_function_destroy(&bad);
    }
}

Test(control, host_call_ex_bad_input)
{
    weft_ctx *cx = NULL;
    weft_tensor *x = vec(2, NULL);
    weft_spec s = spec_of("f32[2]"), bad = s;
    bad.rank = 9;
    weft_value *o[2];
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_eager_value(cx, x);
    cr_assert_eq(weft_host_call_ex(cx, NULL, NULL, &v, 1, &s, 1, o, 0), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_host_call_ex: fn is NULL");
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    v = weft_eager_value(cx, x);
    cr_assert_eq(weft_host_call_ex(cx, only_one, NULL, &v, 1, &bad, 1, o, 0), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "out_specs[0] is invalid") != NULL, "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    v = weft_eager_value(cx, x);
    cr_assert_eq(weft_host_call_ex(cx, only_one, NULL, &v, 1, &s, 1, NULL, 0), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_host_call_ex: outs is NULL but n_outs is 1");
    weft_eager_end(&cx);
    weft_tensor_release(x);
}

/* ---- what the compiler keeps ---- */

/* Two loops over the same inputs, one of whose results is unused: the
 * results of one loop are told apart (CSE), the unused loop without side
 * effects is dead code, and the output is the right one. */
static int body_two_loops(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    loop_fns *l = u;
    weft_value *r1[2], *r2[2];
    int rc = weft_while_loop(cx, l->cond_fn, l->body_fn, a, 2, r1);
    if (rc == 0)
        rc = weft_while_loop(cx, l->cond_fn, l->body_fn, a, 2, r2);
    o[0] = r1[1];
    o[1] = r1[0];
    return rc;
}

Test(control, compiler_around_control_nodes)
{
    loop_fns l = { fn_new("below5", body_below5, NULL, 2, 1, NULL, 0),
                   fn_new("step", body_step, NULL, 2, 2, NULL, 0) };
    weft_function *f = fn_new("two", body_two_loops, &l, 2, 2, NULL, 0);
    weft_tensor *i0 = i64_scalar(2), *acc = vec(1, (const float[]){ 3 }), *outs[2];
    weft_arg args[2] = { weft_arg_tensor(i0), weft_arg_tensor(acc) };
    cr_assert_eq(weft_function_call(f, args, 2, outs, 2), 0, "%s", weft_errmsg());
    expect_f32(outs[0], 1, (const float[]){ 24 });
    cr_expect_eq(*(const int64_t *)weft_tensor_data(outs[1]), 5);
    char buf[2048] = "";
    FILE *mf = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_eq(weft_function_print_ops(f, 0, mf), 0);
    fclose(mf);
    int loops = 0;
    for (const char *p = buf; (p = strstr(p, "= while_loop<below5,step>")); p++)
        loops++;
    cr_expect_eq(loops, 1, "the unused loop is dead code:\n%s", buf);
    cr_expect(strstr(buf, "result<0>") && strstr(buf, "result<1>"), "%s", buf);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(i0);
    weft_tensor_release(acc);
    weft_function_destroy(&f);
    weft_function_destroy(&l.cond_fn);
    weft_function_destroy(&l.body_fn);
}

/* ---- the parallel executor, several callers at once ---- */

/* body(i, v) = (i + 1, v + v); then cond(sum(v) > 0, double, negate) of
 * the loop's v and, independently, of the input: two control nodes that
 * may run at once, on inputs large enough for the parallel executor. */
typedef struct wide { loop_fns l; branches b; } wide;

static int body_wide(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    wide *w = u;
    weft_value *res[2], *c1, *c2;
    int rc = weft_while_loop(cx, w->l.cond_fn, w->l.body_fn, a, 2, res);
    if (rc < 0)
        return rc;
    weft_value *p = weft_gt(cx, weft_sum(cx, res[1], WEFT_ALL_AXES), weft_const_f64(cx, 0.0));
    weft_value *q = weft_lt(cx, weft_sum(cx, a[1], WEFT_ALL_AXES), weft_const_f64(cx, 0.0));
    if ((rc = weft_cond(cx, p, w->b.then_fn, w->b.else_fn, &res[1], 1, &c1, 1)) < 0 ||
        (rc = weft_cond(cx, q, w->b.then_fn, w->b.else_fn, &a[1], 1, &c2, 1)) < 0)
        return rc;
    o[0] = weft_add(cx, c1, c2);
    return 0;
}

typedef struct wide_call { weft_function *f; weft_tensor *i0, *x; float want0; int bad; } wide_call;

#define WIDE_N 20000

static void *wide_thread(void *arg)
{
    wide_call *c = arg;
    for (int k = 0; k < 8; k++) {
        weft_arg args[2] = { weft_arg_tensor(c->i0), weft_arg_tensor(c->x) };
        weft_tensor *y = NULL;
        if (weft_function_call(c->f, args, 2, &y, 1) != 0) {
            c->bad++;
            continue;
        }
        const float *d = weft_tensor_data(y);
        if (weft_tensor_numel(y) != WIDE_N || d[0] != c->want0 || d[WIDE_N - 1] != c->want0)
            c->bad++;
        weft_tensor_release(y);
    }
    return NULL;
}

Test(control, parallel_runs_from_several_threads)
{
    wide w = { { fn_new("below5", body_below5, NULL, 2, 1, NULL, 0),
                 fn_new("step", body_step, NULL, 2, 2, NULL, 0) },
               { fn_new("double", body_double, NULL, 1, 1, NULL, 0),
                 fn_new("negate", body_negate, NULL, 1, 1, NULL, 0) } };
    weft_function *f = fn_new("wide", body_wide, &w, 2, 1, NULL, 0);
    static float ones[WIDE_N];
    for (int k = 0; k < WIDE_N; k++)
        ones[k] = 1;
    /* v = 1 doubled 5 times is 32, then doubled: 64; the input's sum is
     * positive, so it is negated: -1.  64 - 1 = 63. */
    wide_call c = { f, i64_scalar(0), vec(WIDE_N, ones), 63, 0 };
    wide_call cs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        cs[t] = c;
        pthread_create(&th[t], NULL, wide_thread, &cs[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        cr_expect_eq(cs[t].bad, 0, "thread %d: %d bad calls", t, cs[t].bad);
    }
    cr_expect_eq(weft_function_tracing_count(f), 1);
    weft_tensor_release(c.i0);
    weft_tensor_release(c.x);
    weft_function_destroy(&f);
    weft_function_destroy(&w.l.cond_fn);
    weft_function_destroy(&w.l.body_fn);
    weft_function_destroy(&w.b.then_fn);
    weft_function_destroy(&w.b.else_fn);
}

/* A successful call leaves the thread's last message as it was, whatever
 * the callee's body did meanwhile. */
static int body_probes(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    int64_t v;
    /* Fails (a tensor is not a static scalar) and sets a message; the body
     * goes on. */
    if (weft_value_static_i64(a[0], &v) == 0)
        return WEFT_EIO;
    o[0] = weft_neg(cx, a[0]);
    return 0;
}

typedef struct probe { weft_function *g; weft_tensor *x; char before[256], after[256]; int rc; } probe;

static void *probe_call(void *arg)
{
    probe *p = arg;
    snprintf(p->before, sizeof p->before, "%s", weft_errmsg());
    weft_ctx *cx = NULL;
    weft_eager_begin(rt, &cx);
    weft_value *v = weft_eager_value(cx, p->x), *r = NULL;
    p->rc = weft_call(cx, p->g, &v, 1, &r, 1);
    snprintf(p->after, sizeof p->after, "%s", weft_errmsg());
    weft_eager_end(&cx);
    return NULL;
}

Test(control, call_keeps_the_last_message)
{
    probe p = { .g = fn_new("probes", body_probes, NULL, 1, 1, NULL, 0),
                .x = vec(2, (const float[]){ 1, 2 }) };
    /* After an earlier failure's message ... */
    weft_spec s;
    weft_tensor_spec(NULL, &s);
    probe_call(&p);
    cr_assert_eq(p.rc, 0, "%s", p.after);
    cr_expect_str_eq(p.before, "weft_tensor_spec: NULL tensor");
    cr_expect_str_eq(p.after, p.before);
    /* ... and on a thread that has none yet. */
    pthread_t th;
    pthread_create(&th, NULL, probe_call, &p);
    pthread_join(th, NULL);
    cr_assert_eq(p.rc, 0, "%s", p.after);
    cr_expect_str_eq(p.before, "");
    cr_expect_str_eq(p.after, "");
    weft_tensor_release(p.x);
    weft_function_destroy(&p.g);
}
