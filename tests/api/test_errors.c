/* The error table of docs/ERRORS.md, walked in the same order: each case
 * feeds one public entry point one kind of bad input and returns the code it
 * got.  The walker checks the code, that weft_errmsg() is a non-empty
 * sentence naming the entry point, and that good calls still work after it
 * (so a failure changed nothing it should not have).
 *
 * With WEFT_ERRORS_DOC=<path> in the environment, the walker also writes the
 * table rows with the messages it observed, which is how docs/ERRORS.md was
 * produced. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* ---- The fixture every case may use. ---------------------------------- */

typedef struct fixture {
    weft_runtime *rt;
    weft_function *twice;   /* x * 2 for one f32 argument */
    weft_function *sig;     /* x * 2 with input_signature f32[?] */
    weft_tensor *x3;        /* f32[3] {1, 2, 3} */
    weft_tensor *x4;        /* f32[4] {1, 2, 3, 4} */
    weft_tensor *i3;        /* i32[3] {1, 2, 3} */
} fixture;

static fixture fx;

static int body_twice(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], args[0]);
    return weft_ctx_status(cx);
}

static weft_tensor *f32_tensor(int64_t n, float start)
{
    float buf[16];
    for (int64_t i = 0; i < n; i++)
        buf[i] = start + (float)i;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, buf, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_function *make_fn(weft_body_fn body, void *user, size_t n_args, size_t n_outs,
                              const weft_spec *sig, unsigned flags, const char *name)
{
    weft_function_desc d = {
        .name = name, .body = body, .user = user, .n_args = n_args, .n_outs = n_outs,
        .input_signature = sig, .flags = flags, .max_cached = 4,
    };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(fx.rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static void fixture_setup(void)
{
    fx.rt = test_runtime(2);
    fx.x3 = f32_tensor(3, 1.0f);
    fx.x4 = f32_tensor(4, 1.0f);
    int32_t iv[3] = { 1, 2, 3 };
    int64_t n3 = 3;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &n3, iv, &fx.i3), 0);
    fx.twice = make_fn(body_twice, NULL, 1, 1, NULL, 0, "twice");
    weft_spec s;
    cr_assert_eq(weft_spec_parse("f32[?]", &s), 0);
    fx.sig = make_fn(body_twice, NULL, 1, 1, &s, 0, "sig");
}

static void fixture_teardown(void)
{
    weft_function_destroy(&fx.twice);
    weft_function_destroy(&fx.sig);
    weft_tensor_release(fx.x3);
    weft_tensor_release(fx.x4);
    weft_tensor_release(fx.i3);
    weft_runtime_destroy(&fx.rt);
}

/* The good calls that must work after every failure: a traced call (hit or
 * miss), an eager op and a tensor creation.  Returns "" or what broke. */
static const char *good_calls(void)
{
    static char why[256];
    weft_tensor *out = NULL;
    weft_arg a = weft_arg_tensor(fx.x3);
    int rc = weft_function_call(fx.twice, &a, 1, &out, 1);
    if (rc != 0) {
        snprintf(why, sizeof why, "weft_function_call: %s (%s)", weft_err_name(rc), weft_errmsg());
        return why;
    }
    const float *p = weft_tensor_data(out);
    int ok = weft_tensor_numel(out) == 3 && p[0] == 2.0f && p[1] == 4.0f && p[2] == 6.0f;
    weft_tensor_release(out);
    if (!ok)
        return "weft_function_call gave a wrong result";

    weft_ctx *cx = NULL;
    if (weft_eager_begin(fx.rt, &cx) != 0)
        return "weft_eager_begin failed";
    weft_value *v = weft_add(cx, weft_eager_value(cx, fx.x4), weft_eager_value(cx, fx.x4));
    weft_tensor *t = weft_value_tensor(v);
    ok = t && weft_tensor_numel(t) == 4 && ((const float *)weft_tensor_data(t))[3] == 8.0f;
    weft_eager_end(&cx);
    if (!ok)
        return "eager weft_add gave a wrong result";

    int64_t d[2] = { 2, 2 };
    weft_tensor *z = NULL;
    if (weft_tensor_create(WEFT_I64, 2, d, NULL, &z) != 0)
        return "weft_tensor_create failed";
    weft_tensor_release(z);
    return "";
}

/* ---- Helpers for the op cases. ---------------------------------------- */

/* Runs op_case on a fresh eager context and returns its status; checks that
 * a failing op returned NULL. */
typedef weft_value *(*op_fn)(weft_ctx *cx);

static int eager_op(op_fn op)
{
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(fx.rt, &cx);
    if (rc != 0)
        return rc;
    weft_value *v = op(cx);
    rc = weft_ctx_status(cx);
    if (rc != 0 && v != NULL)
        rc = 1;  /* an op that failed must return NULL: reported as a wrong code */
    weft_eager_end(&cx);
    return rc;
}

static weft_value *ev(weft_ctx *cx, weft_tensor *t)
{
    return weft_eager_value(cx, t);
}

/* A function whose body is the op under test, traced on first call. */
typedef struct body_case {
    op_fn op;
} body_case;

static int body_op(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    const body_case *bc = user;
    outs[0] = bc->op(cx);
    return weft_ctx_status(cx);
}

/* Calls a fresh function (flags: 0 traced, WEFT_RUN_EAGERLY eager) whose
 * body is given; one f32 argument (x3), one output. */
static int call_body(weft_body_fn body, void *user, unsigned flags)
{
    weft_function *f = make_fn(body, user, 1, 1, NULL, flags, "badbody");
    weft_tensor *out = NULL;
    weft_arg a = weft_arg_tensor(fx.x3);
    int rc = weft_function_call(f, &a, 1, &out, 1);
    if (rc != 0 && out != NULL)
        rc = 1;
    weft_tensor_release(out);
    weft_function_destroy(&f);
    return rc;
}

/* ---- Runtime. ---------------------------------------------------------- */

static int c_rt_create_null_out(void)
{
    return weft_runtime_create(NULL, NULL);
}

static int c_rt_create_too_many(void)
{
    weft_config c = { .workers = 1u << 20 };
    weft_runtime *rt = (weft_runtime *)&c;  /* must be set to NULL */
    int rc = weft_runtime_create(&c, &rt);
    return rt == NULL ? rc : 1;
}

/* Each malformed $WEFT_NUM_THREADS fails; the last message is kept. */
static int c_rt_create_bad_env(void)
{
    const char *bad[] = { "abc", "0", "-1", "4 ", " 4", "+3", "4abc", "0x4", "99999", "2.5",
                          "184467440737095516170" };
    const char *old = getenv("WEFT_NUM_THREADS");
    char saved[32] = "";
    if (old)
        snprintf(saved, sizeof saved, "%s", old);
    int rc = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("WEFT_NUM_THREADS", bad[i], 1);
        weft_runtime *rt = (weft_runtime *)bad;  /* must be set to NULL */
        int r = weft_runtime_create(NULL, &rt);
        if (rt != NULL || r != WEFT_EINVAL || !strstr(weft_errmsg(), bad[i])) {
            rc = 1;
            break;
        }
        rc = r;
    }
    if (old)
        setenv("WEFT_NUM_THREADS", saved, 1);
    else
        unsetenv("WEFT_NUM_THREADS");
    return rc;
}

static int c_group_wait_null(void)
{
    return weft_group_wait(NULL);
}

static int c_spawn_null_fn(void)
{
    weft_group g;
    weft_group_init(&g, fx.rt);
    weft_spawn(&g, NULL, NULL);
    return weft_group_wait(&g);
}

static int c_spawn_null_rt(void)
{
    weft_group g;
    weft_group_init(&g, NULL);
    weft_spawn(&g, (weft_task_fn)free, NULL);
    return weft_group_wait(&g);
}

static int range_ok(size_t b, size_t e, void *ctx)
{
    (void)b; (void)e; (void)ctx;
    return 0;
}

static int index_ok(size_t i, void *ctx)
{
    (void)i; (void)ctx;
    return 0;
}

static int c_pfor_null_rt(void)
{
    return weft_parallel_for(NULL, 10, 0, range_ok, NULL);
}

static int c_pfor_null_fn(void)
{
    return weft_parallel_for(fx.rt, 10, 0, NULL, NULL);
}

static int range_fail(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    return (b <= 500 && 500 < e) ? WEFT_EHOST : 0;
}

static int c_pfor_callback_fails(void)
{
    return weft_parallel_for(fx.rt, 1000, 1, range_fail, NULL);
}

static int c_pmap_null_rt(void)
{
    return weft_parallel_map(NULL, 10, 0, index_ok, NULL);
}

static int c_pmap_null_fn(void)
{
    return weft_parallel_map(fx.rt, 10, 2, NULL, NULL);
}

static int index_fail(size_t i, void *ctx)
{
    (void)ctx;
    return i == 77 ? WEFT_ECANCELED : 0;
}

static int c_pmap_callback_fails(void)
{
    return weft_parallel_map(fx.rt, 1000, 4, index_fail, NULL);
}

static int c_profile_begin_null_rt(void)
{
    return weft_profile_begin(NULL, "/tmp/x.json");
}

static int c_profile_begin_null_path(void)
{
    return weft_profile_begin(fx.rt, NULL);
}

static int c_profile_begin_bad_path(void)
{
    return weft_profile_begin(fx.rt, "/nonexistent-dir/weft/profile.json");
}

static int c_profile_end_not_started(void)
{
    return weft_profile_end(fx.rt);
}

/* ---- Tensors and specs. ------------------------------------------------ */

static int c_tensor_null_out(void)
{
    int64_t d = 3;
    return weft_tensor_create(WEFT_F32, 1, &d, NULL, NULL);
}

static int tensor_try(weft_dtype dt, int rank, const int64_t *dims)
{
    weft_tensor *t = (weft_tensor *)&t;  /* must be set to NULL on failure */
    int rc = weft_tensor_create(dt, rank, dims, NULL, &t);
    if (rc != 0 && t != NULL)
        return 1;
    weft_tensor_release(t);
    return rc;
}

static int c_tensor_bad_dtype(void)
{
    int64_t d = 3;
    return tensor_try((weft_dtype)99, 1, &d);
}

static int c_tensor_neg_dtype(void)
{
    int64_t d = 3;
    return tensor_try((weft_dtype)-1, 1, &d);
}

static int c_tensor_rank9(void)
{
    int64_t d[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    return tensor_try(WEFT_F32, 9, d);
}

static int c_tensor_rank_neg(void)
{
    int64_t d = 3;
    return tensor_try(WEFT_F32, -1, &d);
}

static int c_tensor_null_dims(void)
{
    return tensor_try(WEFT_F32, 2, NULL);
}

static int c_tensor_neg_dim(void)
{
    int64_t d[2] = { 3, -5 };
    return tensor_try(WEFT_F32, 2, d);
}

static int c_tensor_dim_any(void)
{
    int64_t d[2] = { 3, WEFT_DIM_ANY };
    return tensor_try(WEFT_F32, 2, d);
}

static int c_tensor_numel_overflow(void)
{
    /* 2^40 * 2^40 elements: numel overflows int64, caught before allocating. */
    int64_t d[2] = { INT64_C(1) << 40, INT64_C(1) << 40 };
    return tensor_try(WEFT_F32, 2, d);
}

static int c_tensor_bytes_overflow(void)
{
    /* 2^61 f64 elements: numel fits int64, the byte count does not. */
    int64_t d[2] = { INT64_C(1) << 31, INT64_C(1) << 30 };
    return tensor_try(WEFT_F64, 2, d);
}

static int c_tensor_max_dims(void)
{
    int64_t d[3] = { INT64_MAX, INT64_MAX, 0 };
    /* numel is 0, but a product taken left to right overflows first. */
    return tensor_try(WEFT_F32, 3, d);
}

static int c_spec_parse_null_text(void)
{
    weft_spec s;
    return weft_spec_parse(NULL, &s);
}

static int c_spec_parse_null_out(void)
{
    return weft_spec_parse("f32[3]", NULL);
}

/* Every malformed text must fail with WEFT_EINVAL; returns the first other
 * code (or 1 for an accepted text). */
static int c_spec_parse_malformed(void)
{
    static const char *bad[] = {
        "", "f32", "f32[", "f32]", "f33[1]", "F32[1]", "f32[1,]", "f32[,1]", "f32[-1]",
        "f32[1,2,3,4,5,6,7,8,9]", "f32[99999999999999999999]", "f32[9223372036854775808]",
        "f32[1]x", " f32[1]", "f32[?,*]", "f32[**]", "f32[1 2]", "f32[0x10]", "f32[+1]",
        "i32[?", "bool[[1]]", "f64[*,1]",
    };
    int last = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        weft_spec s;
        int rc = weft_spec_parse(bad[i], &s);
        if (rc != WEFT_EINVAL) {
            fprintf(stderr, "weft_spec_parse(\"%s\") returned %d\n", bad[i], rc);
            return rc == 0 ? 1 : rc;
        }
        last = rc;
    }
    return last;
}

static int c_spec_format_null(void)
{
    char buf[32];
    return weft_spec_format(NULL, buf, sizeof buf);
}

static int c_spec_format_bad_dtype(void)
{
    weft_spec s = { .dtype = (weft_dtype)99, .rank = 1, .dims = { 3 } };
    char buf[32];
    return weft_spec_format(&s, buf, sizeof buf);
}

static int c_spec_format_rank9(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 9 };
    char buf[64];
    return weft_spec_format(&s, buf, sizeof buf);
}

static int c_spec_format_null_buf(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return weft_spec_format(&s, NULL, 16);
}

/* ---- Functions. -------------------------------------------------------- */

static int fn_create(const weft_function_desc *d)
{
    weft_function *f = (weft_function *)&f;
    int rc = weft_function_create(fx.rt, d, &f);
    if (rc == 0)
        weft_function_destroy(&f);
    else if (f != NULL)
        return 1;
    return rc;
}

static int c_fn_create_null_out(void)
{
    weft_function_desc d = { .body = body_twice, .n_args = 1, .n_outs = 1 };
    return weft_function_create(fx.rt, &d, NULL);
}

static int c_fn_create_null_rt(void)
{
    weft_function_desc d = { .body = body_twice, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    return weft_function_create(NULL, &d, &f);
}

static int c_fn_create_null_desc(void)
{
    return fn_create(NULL);
}

static int c_fn_create_null_body(void)
{
    weft_function_desc d = { .n_args = 1, .n_outs = 1 };
    return fn_create(&d);
}

static int c_fn_create_bad_flags(void)
{
    weft_function_desc d = { .body = body_twice, .n_args = 1, .n_outs = 1, .flags = 0x80 };
    return fn_create(&d);
}

static int c_fn_create_huge_counts(void)
{
    weft_function_desc d = { .body = body_twice, .n_args = SIZE_MAX, .n_outs = 1 };
    return fn_create(&d);
}

static int c_fn_create_sig_bad_dtype(void)
{
    weft_spec s = { .dtype = (weft_dtype)99, .rank = 1, .dims = { 3 } };
    weft_function_desc d = { .body = body_twice, .n_args = 1, .n_outs = 1, .input_signature = &s };
    return fn_create(&d);
}

static int c_fn_create_sig_rank9(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 9 };
    weft_function_desc d = { .body = body_twice, .n_args = 1, .n_outs = 1, .input_signature = &s };
    return fn_create(&d);
}

static int c_fn_create_sig_neg_dim(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 2, .dims = { 3, -7 } };
    weft_function_desc d = { .body = body_twice, .n_args = 1, .n_outs = 1, .input_signature = &s };
    return fn_create(&d);
}

static int call_twice(weft_function *f, const weft_arg *args, size_t n_args, weft_tensor **outs,
                      size_t n_outs)
{
    weft_tensor *o[2] = { (weft_tensor *)&o, (weft_tensor *)&o };
    if (!outs)
        return weft_function_call(f, args, n_args, NULL, n_outs);
    int rc = weft_function_call(f, args, n_args, o, n_outs);
    (void)outs;
    if (rc == 0) {
        for (size_t i = 0; i < n_outs && i < 2; i++)
            weft_tensor_release(o[i]);
        return 0;
    }
    return rc;
}

static int c_call_null_f(void)
{
    weft_arg a = weft_arg_tensor(fx.x3);
    weft_tensor *o;
    return call_twice(NULL, &a, 1, &o, 1);
}

static int c_call_null_args(void)
{
    weft_tensor *o;
    return call_twice(fx.twice, NULL, 1, &o, 1);
}

static int c_call_wrong_n_args(void)
{
    weft_arg a[2] = { weft_arg_tensor(fx.x3), weft_arg_tensor(fx.x3) };
    weft_tensor *o;
    return call_twice(fx.twice, a, 2, &o, 1);
}

static int c_call_wrong_n_outs(void)
{
    weft_arg a = weft_arg_tensor(fx.x3);
    weft_tensor *o;
    return call_twice(fx.twice, &a, 1, &o, 2);
}

static int c_call_null_outs(void)
{
    weft_arg a = weft_arg_tensor(fx.x3);
    return call_twice(fx.twice, &a, 1, NULL, 1);
}

static int c_call_bad_kind(void)
{
    weft_arg a = { .kind = (weft_arg_kind)99 };
    weft_tensor *o;
    return call_twice(fx.twice, &a, 1, &o, 1);
}

static int c_call_null_tensor(void)
{
    weft_arg a = weft_arg_tensor(NULL);
    weft_tensor *o;
    return call_twice(fx.twice, &a, 1, &o, 1);
}

static int c_call_sig_dtype(void)
{
    weft_arg a = weft_arg_tensor(fx.i3);
    weft_tensor *o;
    return call_twice(fx.sig, &a, 1, &o, 1);
}

static int c_call_sig_rank(void)
{
    int64_t d[2] = { 2, 2 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, d, NULL, &t), 0);
    weft_arg a = weft_arg_tensor(t);
    weft_tensor *o;
    int rc = call_twice(fx.sig, &a, 1, &o, 1);
    weft_tensor_release(t);
    return rc;
}

static int body_returns_eshape(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)cx; (void)args; (void)outs; (void)u;
    return WEFT_ESHAPE;
}

static int c_call_body_error(void)
{
    return call_body(body_returns_eshape, NULL, 0);
}

static int c_call_body_error_eager(void)
{
    return call_body(body_returns_eshape, NULL, WEFT_RUN_EAGERLY);
}

static int body_no_output(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)cx; (void)args; (void)outs; (void)u;
    return 0;
}

static int c_call_body_no_output(void)
{
    return call_body(body_no_output, NULL, 0);
}

static int c_call_body_no_output_eager(void)
{
    return call_body(body_no_output, NULL, WEFT_RUN_EAGERLY);
}

/* A body that returns a value of another (eager) context as its output. */
static int body_foreign_output(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)cx; (void)args;
    weft_ctx **other = u;
    outs[0] = weft_eager_value(*other, fx.x3);
    return 0;
}

static int foreign_output(unsigned flags)
{
    weft_ctx *other = NULL;
    cr_assert_eq(weft_eager_begin(fx.rt, &other), 0);
    int rc = call_body(body_foreign_output, &other, flags);
    weft_eager_end(&other);
    return rc;
}

static int c_call_body_foreign_output(void)
{
    return foreign_output(0);
}

static int c_call_body_foreign_output_eager(void)
{
    return foreign_output(WEFT_RUN_EAGERLY);
}

/* A body whose op gets a value of another context as input. */
static int body_foreign_input(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    weft_ctx **other = u;
    outs[0] = weft_add(cx, args[0], weft_eager_value(*other, fx.x3));
    return weft_ctx_status(cx);
}

static int c_call_body_foreign_input(void)
{
    weft_ctx *other = NULL;
    cr_assert_eq(weft_eager_begin(fx.rt, &other), 0);
    int rc = call_body(body_foreign_input, &other, 0);
    weft_eager_end(&other);
    return rc;
}

static weft_value *op_no_broadcast_traced(weft_ctx *cx)
{
    weft_value *a = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 3 }, 1.0);
    weft_value *b = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 4 }, 1.0);
    return weft_mul(cx, a, b);
}

static int c_call_body_op_fails(void)
{
    body_case bc = { op_no_broadcast_traced };
    return call_body(body_op, &bc, 0);
}

static int c_call_body_op_fails_eager(void)
{
    body_case bc = { op_no_broadcast_traced };
    return call_body(body_op, &bc, WEFT_RUN_EAGERLY);
}

/* Host callbacks: fail, store nothing, store the wrong shape or dtype. */
static int host_fails(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)in; (void)n; (void)out; (void)u;
    return -42;
}

static int host_stores_nothing(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)in; (void)n; (void)out; (void)u;
    return 0;
}

static int host_wrong_shape(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)in; (void)n; (void)u;
    int64_t d = 5;
    return weft_tensor_create(WEFT_F32, 1, &d, NULL, out);
}

static int host_wrong_dtype(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)in; (void)n; (void)u;
    int64_t d = 3;
    return weft_tensor_create(WEFT_I64, 1, &d, NULL, out);
}

typedef struct host_box {
    weft_host_fn fn;
} host_box;

static int body_host(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    const host_box *hb = u;
    outs[0] = weft_host_call(cx, hb->fn, NULL, args, 1, &s, 0);
    return weft_ctx_status(cx);
}

static int host_case(weft_host_fn fn, unsigned flags)
{
    /* Twice: the first call traces, the second runs the cached program. */
    host_box hb = { fn };
    weft_function *f = make_fn(body_host, &hb, 1, 1, NULL, flags, "host");
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        weft_tensor *out = NULL;
        weft_arg a = weft_arg_tensor(fx.x3);
        int r = weft_function_call(f, &a, 1, &out, 1);
        if (r != 0 && out)
            r = 1;
        weft_tensor_release(out);
        if (k > 0 && r != rc) {
            fprintf(stderr, "host case: first call %d, second %d\n", rc, r);
            r = 1;
        }
        rc = r;
    }
    weft_function_destroy(&f);
    return rc;
}

static int c_host_fails(void) { return host_case(host_fails, 0); }
static int c_host_fails_eager(void) { return host_case(host_fails, WEFT_RUN_EAGERLY); }
static int c_host_no_output(void) { return host_case(host_stores_nothing, 0); }
static int c_host_wrong_shape(void) { return host_case(host_wrong_shape, 0); }
static int c_host_wrong_dtype(void) { return host_case(host_wrong_dtype, 0); }
static int c_host_wrong_shape_eager(void) { return host_case(host_wrong_shape, WEFT_RUN_EAGERLY); }

static int get_concrete(weft_function *f, const weft_spec *s, size_t n)
{
    weft_concrete *c = (weft_concrete *)&c;
    int rc = weft_function_get_concrete(f, s, n, &c);
    if (rc != 0 && c != NULL && c != (weft_concrete *)&c)
        return 1;
    return rc;
}

static int c_concrete_null_out(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return weft_function_get_concrete(fx.twice, &s, 1, NULL);
}

static int c_concrete_null_f(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return get_concrete(NULL, &s, 1);
}

static int c_concrete_null_specs(void)
{
    return get_concrete(fx.twice, NULL, 1);
}

static int c_concrete_wrong_n(void)
{
    weft_spec s[2] = { { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } } };
    s[1] = s[0];
    return get_concrete(fx.twice, s, 2);
}

static int c_concrete_bad_dtype(void)
{
    weft_spec s = { .dtype = (weft_dtype)99, .rank = 1, .dims = { 3 } };
    return get_concrete(fx.twice, &s, 1);
}

static int c_concrete_rank9(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 9 };
    return get_concrete(fx.twice, &s, 1);
}

static int c_concrete_neg_dim(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { -3 } };
    return get_concrete(fx.twice, &s, 1);
}

static int c_concrete_sig_mismatch(void)
{
    weft_spec s = { .dtype = WEFT_I64, .rank = 1, .dims = { 3 } };
    return get_concrete(fx.sig, &s, 1);
}

static weft_concrete *concrete_f32_3(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    weft_concrete *c = NULL;
    cr_assert_eq(weft_function_get_concrete(fx.twice, &s, 1, &c), 0, "%s", weft_errmsg());
    return c;
}

static int concrete_call(weft_concrete *c, weft_tensor *const *args, size_t n, size_t n_outs)
{
    weft_tensor *o[2] = { NULL, NULL };
    int rc = weft_concrete_call(c, args, n, o, n_outs);
    if (rc == 0)
        for (size_t i = 0; i < n_outs && i < 2; i++)
            weft_tensor_release(o[i]);
    return rc;
}

static int c_ccall_null_c(void)
{
    return concrete_call(NULL, &fx.x3, 1, 1);
}

static int c_ccall_null_args(void)
{
    return concrete_call(concrete_f32_3(), NULL, 1, 1);
}

static int c_ccall_wrong_n(void)
{
    weft_tensor *a[2] = { fx.x3, fx.x3 };
    return concrete_call(concrete_f32_3(), a, 2, 1);
}

static int c_ccall_null_tensor(void)
{
    weft_tensor *a[1] = { NULL };
    return concrete_call(concrete_f32_3(), a, 1, 1);
}

static int c_ccall_mismatch(void)
{
    return concrete_call(concrete_f32_3(), &fx.x4, 1, 1);
}

static int c_ccall_wrong_n_outs(void)
{
    return concrete_call(concrete_f32_3(), &fx.x3, 1, 2);
}

static int c_ccall_null_outs(void)
{
    return weft_concrete_call(concrete_f32_3(), &fx.x3, 1, NULL, 1);
}

static int c_print_sigs_null_f(void)
{
    return weft_function_print_signatures(NULL, stderr);
}

static int c_print_sigs_null_out(void)
{
    return weft_function_print_signatures(fx.twice, NULL);
}

static int c_print_ops_bad_index(void)
{
    FILE *f = fopen("/dev/null", "w");
    int rc = weft_function_print_ops(fx.twice, 1000, f);
    fclose(f);
    return rc;
}

static int c_print_ops_null_out(void)
{
    return weft_function_print_ops(fx.twice, 0, NULL);
}

static int c_last_retrace_null_f(void)
{
    weft_retrace r;
    return weft_function_last_retrace(NULL, &r);
}

static int c_last_retrace_null_out(void)
{
    return weft_function_last_retrace(fx.twice, NULL);
}

/* ---- Eager contexts and ops. ------------------------------------------ */

static int c_eager_begin_null_out(void)
{
    return weft_eager_begin(fx.rt, NULL);
}

static int c_eager_begin_null_rt(void)
{
    weft_ctx *cx = (weft_ctx *)&cx;
    int rc = weft_eager_begin(NULL, &cx);
    return cx == NULL || cx == (weft_ctx *)&cx ? rc : 1;
}

static int c_ctx_status_null(void)
{
    return weft_ctx_status(NULL);
}

static weft_value *op_eager_value_null(weft_ctx *cx) { return weft_eager_value(cx, NULL); }
static int c_eager_value_null(void) { return eager_op(op_eager_value_null); }

static int c_op_null_ctx(void)
{
    /* No context to record in: the op returns NULL and sets weft_errmsg. */
    return weft_add(NULL, NULL, NULL) == NULL ? WEFT_EINVAL : 1;
}

static weft_value *op_null_input(weft_ctx *cx) { return weft_add(cx, ev(cx, fx.x3), NULL); }
static int c_op_null_input(void) { return eager_op(op_null_input); }

static weft_ctx *g_other;
static weft_value *op_foreign(weft_ctx *cx) { return weft_add(cx, ev(cx, fx.x3), ev(g_other, fx.x3)); }
static int c_op_foreign(void)
{
    cr_assert_eq(weft_eager_begin(fx.rt, &g_other), 0);
    int rc = eager_op(op_foreign);
    weft_eager_end(&g_other);
    return rc;
}

static weft_value *op_no_broadcast(weft_ctx *cx) { return weft_mul(cx, ev(cx, fx.x3), ev(cx, fx.x4)); }
static int c_op_no_broadcast(void) { return eager_op(op_no_broadcast); }

static weft_value *op_sticky(weft_ctx *cx)
{
    weft_mul(cx, ev(cx, fx.x3), ev(cx, fx.x4));
    /* A good op after the failure still returns NULL: the error is sticky. */
    return weft_add(cx, ev(cx, fx.x3), ev(cx, fx.x3));
}
static int c_op_sticky(void) { return eager_op(op_sticky); }

static weft_value *op_cast_bad(weft_ctx *cx) { return weft_cast(cx, ev(cx, fx.x3), (weft_dtype)99); }
static int c_op_cast_bad(void) { return eager_op(op_cast_bad); }

static weft_value *op_where_not_bool(weft_ctx *cx)
{
    return weft_where(cx, ev(cx, fx.x3), ev(cx, fx.x3), ev(cx, fx.x3));
}
static int c_op_where_not_bool(void) { return eager_op(op_where_not_bool); }

static weft_value *op_sum_axis(weft_ctx *cx) { return weft_sum(cx, ev(cx, fx.x3), 5); }
static int c_op_sum_axis(void) { return eager_op(op_sum_axis); }

static weft_value *op_mean_axis(weft_ctx *cx) { return weft_mean(cx, ev(cx, fx.x3), -2); }
static int c_op_mean_axis(void) { return eager_op(op_mean_axis); }

static weft_value *op_reduce_twice(weft_ctx *cx)
{
    const int axes[2] = { 0, -1 };
    return weft_reduce(cx, WEFT_R_SUM, ev(cx, fx.x3), axes, 2, false);
}
static int c_op_reduce_twice(void) { return eager_op(op_reduce_twice); }

static weft_value *op_reduce_range(weft_ctx *cx)
{
    const int axes[1] = { 1 };
    return weft_reduce(cx, WEFT_R_VAR, ev(cx, fx.x3), axes, 1, true);
}
static int c_op_reduce_range(void) { return eager_op(op_reduce_range); }

static weft_value *op_reduce_kind(weft_ctx *cx)
{
    return weft_reduce(cx, (weft_reduction)99, ev(cx, fx.x3), NULL, 0, false);
}
static int c_op_reduce_kind(void) { return eager_op(op_reduce_kind); }

static weft_value *op_reduce_null_axes(weft_ctx *cx)
{
    return weft_reduce(cx, WEFT_R_MAX, ev(cx, fx.x3), NULL, 1, false);
}
static int c_op_reduce_null_axes(void) { return eager_op(op_reduce_null_axes); }

static weft_value *op_reshape_rank9(weft_ctx *cx)
{
    int64_t d[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 3 };
    return weft_reshape(cx, ev(cx, fx.x3), 9, d);
}
static int c_op_reshape_rank9(void) { return eager_op(op_reshape_rank9); }

static weft_value *op_reshape_count(weft_ctx *cx)
{
    int64_t d[2] = { 2, 2 };
    return weft_reshape(cx, ev(cx, fx.x3), 2, d);
}
static int c_op_reshape_count(void) { return eager_op(op_reshape_count); }

static weft_value *op_reshape_two_infer(weft_ctx *cx)
{
    int64_t d[2] = { -1, -1 };
    return weft_reshape(cx, ev(cx, fx.x3), 2, d);
}
static int c_op_reshape_two_infer(void) { return eager_op(op_reshape_two_infer); }

static weft_value *op_reshape_overflow(weft_ctx *cx)
{
    int64_t d[3] = { INT64_C(1) << 40, INT64_C(1) << 40, 0 };
    return weft_reshape(cx, ev(cx, fx.x3), 3, d);
}
static int c_op_reshape_overflow(void) { return eager_op(op_reshape_overflow); }

static weft_value *op_matmul_mismatch(weft_ctx *cx)
{
    int64_t a[2] = { 2, 3 }, b[2] = { 2, 3 };
    return weft_matmul(cx, weft_fill(cx, WEFT_F32, 2, a, 1), weft_fill(cx, WEFT_F32, 2, b, 1));
}
static int c_op_matmul_mismatch(void) { return eager_op(op_matmul_mismatch); }

static weft_value *op_matmul_scalar(weft_ctx *cx)
{
    return weft_matmul(cx, weft_const_f64(cx, 2.0), ev(cx, fx.x3));
}
static int c_op_matmul_scalar(void) { return eager_op(op_matmul_scalar); }

static weft_value *op_matmul_overflow(weft_ctx *cx)
{
    int64_t a[2] = { INT64_C(1) << 40, 0 }, b[2] = { 0, INT64_C(1) << 40 };
    return weft_matmul(cx, weft_fill(cx, WEFT_F32, 2, a, 1), weft_fill(cx, WEFT_F32, 2, b, 1));
}
static int c_op_matmul_overflow(void) { return eager_op(op_matmul_overflow); }

static weft_value *op_matmul_ex_flags(weft_ctx *cx)
{
    int64_t d[2] = { 2, 2 };
    weft_value *m = weft_fill(cx, WEFT_F32, 2, d, 1);
    return weft_matmul_ex(cx, m, m, 4u);
}
static int c_op_matmul_ex_flags(void) { return eager_op(op_matmul_ex_flags); }

static weft_value *op_matmul_ex_vector_t(weft_ctx *cx)
{
    int64_t d[2] = { 3, 2 };
    return weft_matmul_ex(cx, ev(cx, fx.x3), weft_fill(cx, WEFT_F32, 2, d, 1), WEFT_TRANSPOSE_A);
}
static int c_op_matmul_ex_vector_t(void) { return eager_op(op_matmul_ex_vector_t); }

static weft_value *op_matmul_ex_inner_t(weft_ctx *cx)
{
    int64_t a[2] = { 2, 3 };
    weft_value *m = weft_fill(cx, WEFT_F32, 2, a, 1);
    return weft_matmul_ex(cx, m, m, WEFT_TRANSPOSE_B | WEFT_TRANSPOSE_A);
}
static int c_op_matmul_ex_inner_t(void) { return eager_op(op_matmul_ex_inner_t); }

static weft_value *op_matmul_ex_batch(weft_ctx *cx)
{
    int64_t a[3] = { 2, 2, 3 }, b[3] = { 3, 3, 2 };
    return weft_matmul_ex(cx, weft_fill(cx, WEFT_F32, 3, a, 1), weft_fill(cx, WEFT_F32, 3, b, 1), 0);
}
static int c_op_matmul_ex_batch(void) { return eager_op(op_matmul_ex_batch); }

static weft_value *op_fill_bad_dtype(weft_ctx *cx)
{
    return weft_fill(cx, (weft_dtype)99, 1, (int64_t[]){ 3 }, 0);
}
static int c_op_fill_bad_dtype(void) { return eager_op(op_fill_bad_dtype); }

static weft_value *op_fill_rank9(weft_ctx *cx)
{
    int64_t d[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    return weft_fill(cx, WEFT_F32, 9, d, 0);
}
static int c_op_fill_rank9(void) { return eager_op(op_fill_rank9); }

static weft_value *op_fill_neg_dim(weft_ctx *cx)
{
    return weft_fill(cx, WEFT_F32, 2, (int64_t[]){ 2, -2 }, 0);
}
static int c_op_fill_neg_dim(void) { return eager_op(op_fill_neg_dim); }

static weft_value *op_fill_overflow(weft_ctx *cx)
{
    return weft_fill(cx, WEFT_F32, 2, (int64_t[]){ INT64_C(1) << 40, INT64_C(1) << 40 }, 0);
}
static int c_op_fill_overflow(void) { return eager_op(op_fill_overflow); }

static weft_value *op_fill_null_dims(weft_ctx *cx) { return weft_fill(cx, WEFT_F32, 2, NULL, 0); }
static int c_op_fill_null_dims(void) { return eager_op(op_fill_null_dims); }

static weft_value *op_range_delta0(weft_ctx *cx) { return weft_range(cx, WEFT_I64, 0, 10, 0); }
static int c_op_range_delta0(void) { return eager_op(op_range_delta0); }

static weft_value *op_range_bool(weft_ctx *cx) { return weft_range(cx, WEFT_BOOL, 0, 2, 1); }
static int c_op_range_bool(void) { return eager_op(op_range_bool); }

static weft_value *op_range_huge(weft_ctx *cx) { return weft_range(cx, WEFT_I64, INT64_MIN, INT64_MAX, 1); }
static int c_op_range_huge(void) { return eager_op(op_range_huge); }

static weft_value *op_const_tensor_null(weft_ctx *cx) { return weft_const_tensor(cx, NULL); }
static int c_op_const_tensor_null(void) { return eager_op(op_const_tensor_null); }

static weft_value *op_sqrt_null(weft_ctx *cx) { return weft_sqrt(cx, NULL); }
static int c_op_unary_null(void) { return eager_op(op_sqrt_null); }

/* ---- The dtype rules and the math ops. ---- */

static weft_value *op_const_bad_dtype(weft_ctx *cx) { return weft_const(cx, (weft_dtype)99, 1); }
static int c_op_const_bad_dtype(void) { return eager_op(op_const_bad_dtype); }

static weft_value *op_const_inexact(weft_ctx *cx) { return weft_const(cx, WEFT_I32, 2.5); }
static int c_op_const_inexact(void) { return eager_op(op_const_inexact); }

static weft_value *op_weak_too_big(weft_ctx *cx)
{
    weft_value *n = weft_cast(cx, ev(cx, fx.i3), WEFT_I32);
    return weft_add(cx, n, weft_const_i64(cx, INT64_C(1) << 40));
}
static int c_op_weak_too_big(void) { return eager_op(op_weak_too_big); }

static weft_value *bool3(weft_ctx *cx) { return weft_cast(cx, ev(cx, fx.x3), WEFT_BOOL); }

static weft_value *op_bool_add(weft_ctx *cx)
{
    weft_value *b = bool3(cx);
    return weft_add(cx, b, b);
}
static int c_op_bool_add(void) { return eager_op(op_bool_add); }

static weft_value *op_bool_neg(weft_ctx *cx)
{
    return weft_neg(cx, bool3(cx));
}
static int c_op_bool_neg(void) { return eager_op(op_bool_neg); }

static weft_value *op_logical_f32(weft_ctx *cx)
{
    return weft_logical_and(cx, ev(cx, fx.x3), bool3(cx));
}
static int c_op_logical_f32(void) { return eager_op(op_logical_f32); }

static weft_value *op_tanh_null(weft_ctx *cx) { return weft_tanh(cx, NULL); }
static int c_op_tanh_null(void) { return eager_op(op_tanh_null); }

static weft_value *op_truediv_mismatch(weft_ctx *cx)
{
    return weft_truediv(cx, ev(cx, fx.x3), ev(cx, fx.x4));
}
static int c_op_truediv_mismatch(void) { return eager_op(op_truediv_mismatch); }

static weft_value *op_floordiv_bool(weft_ctx *cx)
{
    weft_value *b = bool3(cx);
    return weft_floordiv(cx, b, b);
}
static int c_op_floordiv_bool(void) { return eager_op(op_floordiv_bool); }

static weft_value *op_clip_mismatch(weft_ctx *cx)
{
    return weft_clip(cx, ev(cx, fx.x3), ev(cx, fx.x4), weft_const_f64(cx, 1.0));
}
static int c_op_clip_mismatch(void) { return eager_op(op_clip_mismatch); }

static int c_value_release_foreign(void)
{
    weft_ctx *cx = NULL, *other = NULL;
    cr_assert_eq(weft_eager_begin(fx.rt, &cx), 0);
    cr_assert_eq(weft_eager_begin(fx.rt, &other), 0);
    weft_value_release(cx, ev(other, fx.x3));
    int rc = weft_ctx_status(cx);
    weft_eager_end(&cx);
    weft_eager_end(&other);
    return rc;
}

static weft_value *op_use_released(weft_ctx *cx)
{
    weft_value *v = ev(cx, fx.x3);
    weft_value_release(cx, v);
    return weft_add(cx, v, v);
}
static int c_op_use_released(void) { return eager_op(op_use_released); }

static int body_returns_released(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                                 void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, args[0], args[0]);
    weft_value_release(cx, outs[0]);
    return weft_ctx_status(cx);
}
static int c_call_returns_released(void) { return call_body(body_returns_released, NULL, 0); }
static int c_call_returns_released_eager(void)
{
    return call_body(body_returns_released, NULL, WEFT_RUN_EAGERLY);
}

static int c_value_spec_null(void)
{
    weft_spec s;
    return weft_value_spec(NULL, &s);
}

static int value_static(int which)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(fx.rt, &cx), 0);
    int64_t i;
    double d;
    int rc = which == 0 ? weft_value_static_i64(ev(cx, fx.x3), &i)
           : which == 1 ? weft_value_static_f64(ev(cx, fx.x3), &d)
                        : weft_value_spec(ev(cx, fx.x3), NULL);
    weft_eager_end(&cx);
    return rc;
}

static int c_value_spec_null_out(void) { return value_static(2); }
static int c_value_static_i64_tensor(void) { return value_static(0); }
static int c_value_static_f64_tensor(void) { return value_static(1); }

/* map */
static weft_value *op_map_null_fn(weft_ctx *cx) { return weft_map(cx, NULL, ev(cx, fx.x3), 0); }
static int c_map_null_fn(void) { return eager_op(op_map_null_fn); }

static weft_value *op_map_scalar(weft_ctx *cx) { return weft_map(cx, fx.twice, weft_const_f64(cx, 1), 0); }
static int c_map_scalar(void) { return eager_op(op_map_scalar); }

static int host_fail_on_3(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)n; (void)u;
    float v = *(const float *)weft_tensor_data(in[0]);
    if (v == 3.0f)
        return -1;
    return weft_tensor_create(WEFT_F32, 0, NULL, &v, out);
}

static int body_slice_host(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_spec s = { .dtype = WEFT_F32, .rank = 0 };
    outs[0] = weft_host_call(cx, host_fail_on_3, NULL, args, 1, &s, 0);
    return weft_ctx_status(cx);
}

static weft_function *g_mapfn;
static weft_value *op_map_iter_fails(weft_ctx *cx) { return weft_map(cx, g_mapfn, ev(cx, fx.x4), 2); }
static int c_map_iteration_fails(void)
{
    g_mapfn = make_fn(body_slice_host, NULL, 1, 1, NULL, 0, "slice");
    int rc = eager_op(op_map_iter_fails);
    weft_function_destroy(&g_mapfn);
    return rc;
}

/* host_call argument checks (eager context). */
static weft_value *op_host_null_fn(weft_ctx *cx)
{
    weft_value *in = ev(cx, fx.x3);
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return weft_host_call(cx, NULL, NULL, &in, 1, &s, 0);
}
static int c_host_null_fn(void) { return eager_op(op_host_null_fn); }

static weft_value *op_host_null_spec(weft_ctx *cx)
{
    weft_value *in = ev(cx, fx.x3);
    return weft_host_call(cx, host_fails, NULL, &in, 1, NULL, 0);
}
static int c_host_null_spec(void) { return eager_op(op_host_null_spec); }

static weft_value *op_host_bad_spec(weft_ctx *cx)
{
    weft_value *in = ev(cx, fx.x3);
    weft_spec s = { .dtype = WEFT_F32, .rank = 9 };
    return weft_host_call(cx, host_fails, NULL, &in, 1, &s, 0);
}
static int c_host_bad_spec(void) { return eager_op(op_host_bad_spec); }

static weft_value *op_host_bad_flags(weft_ctx *cx)
{
    weft_value *in = ev(cx, fx.x3);
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return weft_host_call(cx, host_fails, NULL, &in, 1, &s, 0x80);
}
static int c_host_bad_flags(void) { return eager_op(op_host_bad_flags); }

static weft_value *op_host_null_in(weft_ctx *cx)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return weft_host_call(cx, host_fails, NULL, NULL, 2, &s, 0);
}
static int c_host_null_in(void) { return eager_op(op_host_null_in); }

static weft_value *op_host_eager_fails(weft_ctx *cx)
{
    weft_value *in = ev(cx, fx.x3);
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 3 } };
    return weft_host_call(cx, host_fails, NULL, &in, 1, &s, 0);
}
static int c_host_eager_ctx_fails(void) { return eager_op(op_host_eager_fails); }

/* ---- Environment knobs of functions. ------------------------------------ */

/* weft_function_create with $name set to value; the variable is restored. */
static int create_with_env(const char *name, const char *value)
{
    const char *old = getenv(name);
    char saved[64] = "";
    if (old)
        snprintf(saved, sizeof saved, "%s", old);
    setenv(name, value, 1);
    weft_function_desc d = { .name = "f", .body = body_twice, .n_args = 1, .n_outs = 1 };
    weft_function *f = (weft_function *)&d;  /* must be set to NULL */
    int rc = weft_function_create(fx.rt, &d, &f);
    if (old)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    if (f != NULL) {
        if (rc == 0)
            weft_function_destroy(&f);
        return 1;
    }
    return rc;
}

static int c_fn_create_bad_eager_env(void) { return create_with_env("WEFT_RUN_EAGERLY", "maybe"); }
static int c_fn_create_bad_log_env(void) { return create_with_env("WEFT_LOG", "retrace,retrase"); }

/* ---- Composition and control flow. ------------------------------------- */

/* Runs an int-returning op on a fresh eager context: its code, which the
 * context must hold as well, and outs set to NULL. */
typedef int (*int_op_fn)(weft_ctx *cx, weft_value **outs);

static int eager_int_op(int_op_fn op)
{
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(fx.rt, &cx);
    if (rc != 0)
        return rc;
    weft_value *outs[2] = { (weft_value *)cx, (weft_value *)cx };
    rc = op(cx, outs);
    if (rc != weft_ctx_status(cx) || outs[0] != NULL)
        rc = 1;  /* reported as a wrong code */
    weft_eager_end(&cx);
    return rc;
}

static int body_add_pair(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

static int body_sum(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, args[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int body_reshape31(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_reshape(cx, args[0], 2, (const int64_t[]){ 3, 1 });
    return weft_ctx_status(cx);
}

static int body_true(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    (void)user;
    outs[0] = weft_eq(cx, weft_const_i64(cx, 1), weft_const_i64(cx, 1));
    return weft_ctx_status(cx);
}

static int op_call_null_g(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_call(cx, NULL, &x, 1, outs, 1);
}

static int op_call_wrong_n(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_call(cx, fx.twice, (weft_value *[]){ x, x }, 2, outs, 1);
}

static int op_call_sig_mismatch(weft_ctx *cx, weft_value **outs)
{
    weft_spec s3;
    weft_spec_parse("f32[3]", &s3);
    weft_function *g = make_fn(body_twice, NULL, 1, 1, &s3, 0, "g");
    weft_value *x = ev(cx, fx.x4);
    int rc = weft_call(cx, g, &x, 1, outs, 1);
    weft_function_destroy(&g);
    return rc;
}

/* A traced caller of add2 on f32[3] and f32[4]: the callee's error. */
static int body_calls_add2(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_value *in[2] = { args[0], weft_fill(cx, WEFT_F32, 1, (const int64_t[]){ 4 }, 1.0) };
    return weft_call(cx, user, in, 2, outs, 1);
}

static int c_call_callee_fails(void)
{
    weft_function *add2 = make_fn(body_add_pair, NULL, 2, 1, NULL, 0, "add2");
    int rc = call_body(body_calls_add2, add2, 0);
    weft_function_destroy(&add2);
    return rc;
}

/* f(x, n) calls f(x, n + 1): 65 levels are refused. */
static int body_recurse(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    return weft_call(cx, *(weft_function **)user, args, 1, outs, 1);
}

static int op_call_too_deep(weft_ctx *cx, weft_value **outs)
{
    weft_function *self = NULL;
    self = make_fn(body_recurse, &self, 1, 1, NULL, 0, "forever");
    weft_value *x = ev(cx, fx.x3);
    int rc = weft_call(cx, self, &x, 1, outs, 1);
    weft_function_destroy(&self);
    return rc;
}

static int op_cond_pred_f32(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_cond(cx, weft_sum(cx, x, WEFT_ALL_AXES), fx.twice, fx.twice, &x, 1, outs, 1);
}

static int op_cond_pred_vector(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_cond(cx, weft_gt(cx, x, x), fx.twice, fx.twice, &x, 1, outs, 1);
}

static int op_cond_null_else(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_cond(cx, weft_eq(cx, x, x), fx.twice, NULL, &x, 1, outs, 1);
}

static int op_cond_wrong_n_outs(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    weft_value *p = weft_eq(cx, weft_sum(cx, x, WEFT_ALL_AXES), weft_sum(cx, x, WEFT_ALL_AXES));
    return weft_cond(cx, p, fx.twice, fx.twice, &x, 1, outs, 2);
}

/* Traced: cond(x > 0 summed, twice, total) on f32[3]: f32[3] vs f32[]. */
static int body_cond_mismatch(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_value *p = weft_gt(cx, weft_sum(cx, args[0], WEFT_ALL_AXES), weft_const_f64(cx, 0));
    return weft_cond(cx, p, fx.twice, user, args, 1, outs, 1);
}

static int c_cond_branch_mismatch(void)
{
    weft_function *total = make_fn(body_sum, NULL, 1, 1, NULL, 0, "total");
    int rc = call_body(body_cond_mismatch, total, 0);
    weft_function_destroy(&total);
    return rc;
}

static int op_while_no_vars(weft_ctx *cx, weft_value **outs)
{
    outs[0] = NULL;   /* no variables: no outputs to clear */
    return weft_while_loop(cx, fx.twice, fx.twice, NULL, 0, outs);
}

static int op_while_cond_not_bool(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_while_loop(cx, fx.twice, fx.twice, &x, 1, outs);
}

/* while(true) x = reshape(x, [3, 1]): the body changes the variable. */
static int body_while_reshape(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_function **fns = user;
    return weft_while_loop(cx, fns[0], fns[1], args, 1, outs);
}

static int while_reshape(unsigned flags)
{
    weft_function *fns[2] = { make_fn(body_true, NULL, 1, 1, NULL, 0, "always"),
                              make_fn(body_reshape31, NULL, 1, 1, NULL, 0, "to_column") };
    int rc = call_body(body_while_reshape, fns, flags);
    weft_function_destroy(&fns[0]);
    weft_function_destroy(&fns[1]);
    return rc;
}

static int c_while_body_changes_spec(void) { return while_reshape(0); }
static int c_while_body_changes_spec_eager(void) { return while_reshape(WEFT_RUN_EAGERLY); }

static int op_map_ex_no_elems(weft_ctx *cx, weft_value **outs)
{
    return weft_map_ex(cx, fx.twice, NULL, 0, NULL, 0, outs, 1, 0);
}

static int op_map_ex_rows_differ(weft_ctx *cx, weft_value **outs)
{
    weft_function *add2 = make_fn(body_add_pair, NULL, 2, 1, NULL, 0, "add2");
    weft_value *e[2] = { ev(cx, fx.x3), ev(cx, fx.x4) };
    int rc = weft_map_ex(cx, add2, e, 2, NULL, 0, outs, 1, 0);
    weft_function_destroy(&add2);
    return rc;
}

static int op_map_ex_null_captures(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    return weft_map_ex(cx, fx.twice, &x, 1, NULL, 1, outs, 1, 0);
}

static int host_keep_input(weft_tensor *const *in, size_t n_in, weft_tensor **out, size_t n_out,
                           void *user)
{
    (void)n_in;
    (void)user;
    for (size_t k = 0; k < n_out; k++)
        out[k] = weft_tensor_retain(in[0]);
    return 0;
}

static int op_host_ex_bad_spec(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    weft_spec s[2];
    weft_spec_parse("f32[3]", &s[0]);
    s[1] = s[0];
    s[1].rank = 9;
    return weft_host_call_ex(cx, host_keep_input, NULL, &x, 1, s, 2, outs, 0);
}

static int op_host_ex_wrong_output(weft_ctx *cx, weft_value **outs)
{
    weft_value *x = ev(cx, fx.x3);
    weft_spec s;
    weft_spec_parse("f32[]", &s);
    return weft_host_call_ex(cx, host_keep_input, NULL, &x, 1, &s, 1, outs, 0);
}

static int c_call_null_g(void) { return eager_int_op(op_call_null_g); }
static int c_call_wrong_n(void) { return eager_int_op(op_call_wrong_n); }
static int c_call_sig_mismatch(void) { return eager_int_op(op_call_sig_mismatch); }
static int c_call_too_deep(void) { return eager_int_op(op_call_too_deep); }
static int c_cond_pred_f32(void) { return eager_int_op(op_cond_pred_f32); }
static int c_cond_pred_vector(void) { return eager_int_op(op_cond_pred_vector); }
static int c_cond_null_else(void) { return eager_int_op(op_cond_null_else); }
static int c_cond_wrong_n_outs(void) { return eager_int_op(op_cond_wrong_n_outs); }
static int c_while_no_vars(void) { return eager_int_op(op_while_no_vars); }
static int c_while_cond_not_bool(void) { return eager_int_op(op_while_cond_not_bool); }
static int c_map_ex_no_elems(void) { return eager_int_op(op_map_ex_no_elems); }
static int c_map_ex_rows_differ(void) { return eager_int_op(op_map_ex_rows_differ); }
static int c_map_ex_null_captures(void) { return eager_int_op(op_map_ex_null_captures); }
static int c_host_ex_bad_spec(void) { return eager_int_op(op_host_ex_bad_spec); }
static int c_host_ex_wrong_output(void) { return eager_int_op(op_host_ex_wrong_output); }

static int c_tensor_print_null(void) { return weft_tensor_print(NULL, stdout); }

static int c_tensor_spec_null_out(void) { return weft_tensor_spec(fx.x3, NULL); }

/* ---- The table. -------------------------------------------------------- */

typedef struct err_case {
    const char *entry;    /* the public entry point */
    const char *bad;      /* the bad input, as in docs/ERRORS.md */
    int code;             /* the documented code */
    int (*run)(void);
    /* What weft_errmsg() must contain; NULL: the entry point.  "" : no check
     * (a callback's own code passes through).  Body failures name the
     * function ("badbody"), the culprit, rather than weft_function_call. */
    const char *mention;
} err_case;

#define C(entry, bad, code, fn) { entry, bad, code, fn, NULL }
#define CM(entry, bad, code, fn, m) { entry, bad, code, fn, m }

/* The tests is_nan ... refuse bool like arithmetic; the float activations
 * refuse integers; relu6 refuses bool. */
static weft_value *op_is_nan_bool(weft_ctx *cx)
{
    return weft_is_nan(cx, bool3(cx));
}
static int c_op_is_nan_bool(void) { return eager_op(op_is_nan_bool); }

static weft_value *op_softplus_i32(weft_ctx *cx)
{
    return weft_softplus(cx, ev(cx, fx.i3));
}
static int c_op_softplus_i32(void) { return eager_op(op_softplus_i32); }

static weft_value *op_relu6_bool(weft_ctx *cx)
{
    return weft_relu6(cx, bool3(cx));
}
static int c_op_relu6_bool(void) { return eager_op(op_relu6_bool); }

static const err_case cases[] = {
    /* Runtime */
    C("weft_runtime_create", "out is NULL", WEFT_EINVAL, c_rt_create_null_out),
    C("weft_runtime_create", "workers = 2^20 (above 4096)", WEFT_EINVAL, c_rt_create_too_many),
    C("weft_runtime_create", "workers 0 and WEFT_NUM_THREADS \"abc\", \"0\", \"4 \", \"0x4\", \"99999\", ... (11 texts)", WEFT_EINVAL, c_rt_create_bad_env),
    C("weft_group_wait", "g is NULL", WEFT_EINVAL, c_group_wait_null),
    CM("weft_group_wait", "a weft_spawn with fn NULL", WEFT_EINVAL, c_spawn_null_fn, "weft_spawn"),
    CM("weft_group_wait", "weft_group_init with rt NULL, then a spawn", WEFT_EINVAL, c_spawn_null_rt,
       "weft_group_wait"),
    C("weft_parallel_for", "rt is NULL", WEFT_EINVAL, c_pfor_null_rt),
    C("weft_parallel_for", "fn is NULL", WEFT_EINVAL, c_pfor_null_fn),
    CM("weft_parallel_for", "a callback returns WEFT_EHOST", WEFT_EHOST, c_pfor_callback_fails, ""),
    C("weft_parallel_map", "rt is NULL", WEFT_EINVAL, c_pmap_null_rt),
    C("weft_parallel_map", "fn is NULL", WEFT_EINVAL, c_pmap_null_fn),
    CM("weft_parallel_map", "a callback returns WEFT_ECANCELED", WEFT_ECANCELED, c_pmap_callback_fails, ""),
    C("weft_profile_begin", "rt is NULL", WEFT_EINVAL, c_profile_begin_null_rt),
    C("weft_profile_begin", "path is NULL", WEFT_EINVAL, c_profile_begin_null_path),
    C("weft_profile_begin", "path in a missing directory", WEFT_EIO, c_profile_begin_bad_path),
    C("weft_profile_end", "no profile recording", WEFT_EINVAL, c_profile_end_not_started),
    /* Tensors and specs */
    C("weft_tensor_create", "out is NULL", WEFT_EINVAL, c_tensor_null_out),
    C("weft_tensor_create", "dtype (weft_dtype)99", WEFT_EINVAL, c_tensor_bad_dtype),
    C("weft_tensor_create", "dtype (weft_dtype)-1", WEFT_EINVAL, c_tensor_neg_dtype),
    C("weft_tensor_create", "rank 9", WEFT_EINVAL, c_tensor_rank9),
    C("weft_tensor_create", "rank -1", WEFT_EINVAL, c_tensor_rank_neg),
    C("weft_tensor_create", "dims NULL for rank 2", WEFT_EINVAL, c_tensor_null_dims),
    C("weft_tensor_create", "dims {3, -5}", WEFT_EINVAL, c_tensor_neg_dim),
    C("weft_tensor_create", "dims {3, WEFT_DIM_ANY}", WEFT_EINVAL, c_tensor_dim_any),
    C("weft_tensor_create", "dims {2^40, 2^40} (numel overflows)", WEFT_EINVAL, c_tensor_numel_overflow),
    C("weft_tensor_create", "f64 dims {2^31, 2^30} (bytes overflow)", WEFT_EINVAL, c_tensor_bytes_overflow),
    C("weft_tensor_create", "dims {INT64_MAX, INT64_MAX, 0}", WEFT_EINVAL, c_tensor_max_dims),
    C("weft_spec_parse", "text is NULL", WEFT_EINVAL, c_spec_parse_null_text),
    C("weft_spec_parse", "out is NULL", WEFT_EINVAL, c_spec_parse_null_out),
    C("weft_spec_parse", "22 malformed texts (\"\", \"f32[\", \"f33[1]\", \"f32[1,]\", \"f32[-1]\", rank 9, "
                         "20-digit dim, trailing text, \"f32[?,*]\", ...)", WEFT_EINVAL, c_spec_parse_malformed),
    C("weft_spec_format", "s is NULL", WEFT_EINVAL, c_spec_format_null),
    C("weft_spec_format", "dtype (weft_dtype)99", WEFT_EINVAL, c_spec_format_bad_dtype),
    C("weft_spec_format", "rank 9", WEFT_EINVAL, c_spec_format_rank9),
    C("weft_spec_format", "buf NULL with size 16", WEFT_EINVAL, c_spec_format_null_buf),
    /* Functions */
    C("weft_function_create", "out is NULL", WEFT_EINVAL, c_fn_create_null_out),
    C("weft_function_create", "rt is NULL", WEFT_EINVAL, c_fn_create_null_rt),
    C("weft_function_create", "desc is NULL", WEFT_EINVAL, c_fn_create_null_desc),
    C("weft_function_create", "desc->body is NULL", WEFT_EINVAL, c_fn_create_null_body),
    C("weft_function_create", "unknown flags 0x80", WEFT_EINVAL, c_fn_create_bad_flags),
    C("weft_function_create", "n_args = SIZE_MAX", WEFT_EINVAL, c_fn_create_huge_counts),
    C("weft_function_create", "input_signature dtype 99", WEFT_EINVAL, c_fn_create_sig_bad_dtype),
    C("weft_function_create", "input_signature rank 9", WEFT_EINVAL, c_fn_create_sig_rank9),
    C("weft_function_create", "input_signature dim -7", WEFT_EINVAL, c_fn_create_sig_neg_dim),
    CM("weft_function_create", "WEFT_RUN_EAGERLY \"maybe\"", WEFT_EINVAL, c_fn_create_bad_eager_env,
       "WEFT_RUN_EAGERLY"),
    CM("weft_function_create", "WEFT_LOG \"retrace,retrase\"", WEFT_EINVAL, c_fn_create_bad_log_env,
       "retrase"),
    C("weft_function_call", "f is NULL", WEFT_EINVAL, c_call_null_f),
    C("weft_function_call", "args NULL, n_args 1", WEFT_EINVAL, c_call_null_args),
    C("weft_function_call", "n_args 2 for 1 declared", WEFT_EINVAL, c_call_wrong_n_args),
    C("weft_function_call", "n_outs 2 for 1 declared", WEFT_EINVAL, c_call_wrong_n_outs),
    C("weft_function_call", "outs is NULL", WEFT_EINVAL, c_call_null_outs),
    C("weft_function_call", "arg kind 99", WEFT_EINVAL, c_call_bad_kind),
    C("weft_function_call", "a NULL tensor argument", WEFT_EINVAL, c_call_null_tensor),
    C("weft_function_call", "i32[3] for input_signature f32[?]", WEFT_ESIGNATURE, c_call_sig_dtype),
    C("weft_function_call", "f32[2,2] for input_signature f32[?]", WEFT_ESIGNATURE, c_call_sig_rank),
    CM("weft_function_call", "the body returns WEFT_ESHAPE (traced)", WEFT_ESHAPE, c_call_body_error,
           "badbody"),
    CM("weft_function_call", "the body returns WEFT_ESHAPE (WEFT_RUN_EAGERLY)", WEFT_ESHAPE,
      c_call_body_error_eager, "badbody"),
    CM("weft_function_call", "the body returns 0, outs[0] unset (traced)", WEFT_EBODY, c_call_body_no_output,
       "badbody"),
    CM("weft_function_call", "the body returns 0, outs[0] unset (WEFT_RUN_EAGERLY)", WEFT_EBODY,
      c_call_body_no_output_eager, "badbody"),
    CM("weft_function_call", "outs[0] from another context (traced)", WEFT_EBODY,
       c_call_body_foreign_output, "badbody"),
    CM("weft_function_call", "outs[0] from another context (WEFT_RUN_EAGERLY)", WEFT_EBODY,
      c_call_body_foreign_output_eager, "badbody"),
    CM("weft_function_call", "an op in the body gets a value of another context", WEFT_EINVAL,
       c_call_body_foreign_input, "another context"),
    CM("weft_function_call", "weft_mul of f32[3] and f32[4] in the body (traced)", WEFT_ESHAPE,
       c_call_body_op_fails, "weft_mul"),
    CM("weft_function_call", "weft_mul of f32[3] and f32[4] in the body (WEFT_RUN_EAGERLY)", WEFT_ESHAPE,
       c_call_body_op_fails_eager, "weft_mul"),
    CM("weft_function_call", "a host callback returns -42 (traced, twice)", WEFT_EHOST, c_host_fails,
       "weft_host_call"),
    CM("weft_function_call", "a host callback returns -42 (WEFT_RUN_EAGERLY, twice)", WEFT_EHOST,
       c_host_fails_eager, "weft_host_call"),
    CM("weft_function_call", "a host callback returns 0 and stores nothing", WEFT_EHOST, c_host_no_output,
       "weft_host_call"),
    CM("weft_function_call", "a host callback stores f32[5] for f32[3]", WEFT_ESHAPE, c_host_wrong_shape,
       "weft_host_call"),
    CM("weft_function_call", "a host callback stores i64[3] for f32[3]", WEFT_EDTYPE, c_host_wrong_dtype,
       "weft_host_call"),
    CM("weft_function_call", "a host callback stores f32[5] (WEFT_RUN_EAGERLY)", WEFT_ESHAPE,
       c_host_wrong_shape_eager, "weft_host_call"),
    C("weft_function_get_concrete", "out is NULL", WEFT_EINVAL, c_concrete_null_out),
    C("weft_function_get_concrete", "f is NULL", WEFT_EINVAL, c_concrete_null_f),
    C("weft_function_get_concrete", "specs is NULL", WEFT_EINVAL, c_concrete_null_specs),
    C("weft_function_get_concrete", "n 2 for 1 declared", WEFT_EINVAL, c_concrete_wrong_n),
    C("weft_function_get_concrete", "a spec of dtype 99", WEFT_EINVAL, c_concrete_bad_dtype),
    C("weft_function_get_concrete", "a spec of rank 9", WEFT_EINVAL, c_concrete_rank9),
    C("weft_function_get_concrete", "a spec with dim -3", WEFT_EINVAL, c_concrete_neg_dim),
    C("weft_function_get_concrete", "i64[3] for input_signature f32[?]", WEFT_ESIGNATURE,
      c_concrete_sig_mismatch),
    C("weft_concrete_call", "c is NULL", WEFT_EINVAL, c_ccall_null_c),
    C("weft_concrete_call", "args NULL, n_args 1", WEFT_EINVAL, c_ccall_null_args),
    C("weft_concrete_call", "n_args 2 for 1", WEFT_EINVAL, c_ccall_wrong_n),
    C("weft_concrete_call", "a NULL tensor", WEFT_EINVAL, c_ccall_null_tensor),
    C("weft_concrete_call", "f32[4] for a f32[3] concrete function", WEFT_ESIGNATURE, c_ccall_mismatch),
    C("weft_concrete_call", "n_outs 2 for 1", WEFT_EINVAL, c_ccall_wrong_n_outs),
    C("weft_concrete_call", "outs is NULL", WEFT_EINVAL, c_ccall_null_outs),
    C("weft_function_print_signatures", "f is NULL", WEFT_EINVAL, c_print_sigs_null_f),
    C("weft_function_print_signatures", "out is NULL", WEFT_EINVAL, c_print_sigs_null_out),
    C("weft_function_print_ops", "index 1000 (not cached)", WEFT_EINVAL, c_print_ops_bad_index),
    C("weft_function_print_ops", "out is NULL", WEFT_EINVAL, c_print_ops_null_out),
    C("weft_function_last_retrace", "f is NULL", WEFT_EINVAL, c_last_retrace_null_f),
    C("weft_function_last_retrace", "out is NULL", WEFT_EINVAL, c_last_retrace_null_out),
    /* Eager contexts and ops */
    C("weft_eager_begin", "out is NULL", WEFT_EINVAL, c_eager_begin_null_out),
    C("weft_eager_begin", "rt is NULL", WEFT_EINVAL, c_eager_begin_null_rt),
    C("weft_ctx_status", "cx is NULL", WEFT_EINVAL, c_ctx_status_null),
    C("weft_eager_value", "t is NULL", WEFT_EINVAL, c_eager_value_null),
    CM("weft_add", "cx is NULL (returns NULL)", WEFT_EINVAL, c_op_null_ctx, "weft_add"),
    CM("weft_add", "an input is NULL", WEFT_EINVAL, c_op_null_input, "weft_add"),
    CM("weft_add", "an input from another context", WEFT_EINVAL, c_op_foreign, "weft_add"),
    C("weft_mul", "f32[3] * f32[4] (no broadcast)", WEFT_ESHAPE, c_op_no_broadcast),
    CM("weft_add", "a good op after a failed one (sticky)", WEFT_ESHAPE, c_op_sticky, "weft_mul"),
    C("weft_cast", "to (weft_dtype)99", WEFT_EINVAL, c_op_cast_bad),
    C("weft_where", "cond f32[3]", WEFT_EDTYPE, c_op_where_not_bool),
    C("weft_sum", "axis 5 of f32[3]", WEFT_EINVAL, c_op_sum_axis),
    C("weft_mean", "axis -2 of f32[3]", WEFT_EINVAL, c_op_mean_axis),
    C("weft_reshape", "rank 9", WEFT_EINVAL, c_op_reshape_rank9),
    C("weft_reshape", "f32[3] to {2, 2}", WEFT_ESHAPE, c_op_reshape_count),
    C("weft_reshape", "dims {-1, -1}", WEFT_EINVAL, c_op_reshape_two_infer),
    C("weft_reshape", "dims {2^40, 2^40, 0}", WEFT_ESHAPE, c_op_reshape_overflow),
    C("weft_matmul", "f32[2,3] x f32[2,3]", WEFT_ESHAPE, c_op_matmul_mismatch),
    C("weft_matmul", "f64[] x f32[3] (a scalar)", WEFT_ESHAPE, c_op_matmul_scalar),
    C("weft_matmul", "f32[2^40,0] x f32[0,2^40] (result numel overflows)", WEFT_EINVAL, c_op_matmul_overflow),
    C("weft_fill", "dtype 99", WEFT_EINVAL, c_op_fill_bad_dtype),
    C("weft_fill", "rank 9", WEFT_EINVAL, c_op_fill_rank9),
    C("weft_fill", "dims {2, -2}", WEFT_EINVAL, c_op_fill_neg_dim),
    C("weft_fill", "dims {2^40, 2^40}", WEFT_EINVAL, c_op_fill_overflow),
    C("weft_fill", "dims NULL for rank 2", WEFT_EINVAL, c_op_fill_null_dims),
    C("weft_range", "delta 0", WEFT_EINVAL, c_op_range_delta0),
    C("weft_range", "dtype bool", WEFT_EINVAL, c_op_range_bool),
    C("weft_range", "INT64_MIN to INT64_MAX", WEFT_EINVAL, c_op_range_huge),
    C("weft_const_tensor", "t is NULL", WEFT_EINVAL, c_op_const_tensor_null),
    C("weft_sqrt", "a is NULL", WEFT_EINVAL, c_op_unary_null),
    C("weft_const", "dtype 99", WEFT_EINVAL, c_op_const_bad_dtype),
    C("weft_const", "2.5 as i32 (not exactly representable)", WEFT_EINVAL, c_op_const_inexact),
    C("weft_add", "i32[3] + weft_const_i64(2^40) (a weak integer that does not fit i32)", WEFT_EDTYPE,
      c_op_weak_too_big),
    C("weft_add", "bool[3] + bool[3] (arithmetic on bool)", WEFT_EDTYPE, c_op_bool_add),
    C("weft_neg", "bool[3]", WEFT_EDTYPE, c_op_bool_neg),
    C("weft_floordiv", "bool[3] // bool[3]", WEFT_EDTYPE, c_op_floordiv_bool),
    C("weft_logical_and", "f32[3] and bool[3]", WEFT_EDTYPE, c_op_logical_f32),
    C("weft_tanh", "a is NULL (any math op)", WEFT_EINVAL, c_op_tanh_null),
    C("weft_truediv", "f32[3] / f32[4]", WEFT_ESHAPE, c_op_truediv_mismatch),
    CM("weft_clip", "f32[3] clipped to f32[4] (the message names its maximum step)", WEFT_ESHAPE,
       c_op_clip_mismatch, "weft_maximum"),
    C("weft_value_release", "a value of another context", WEFT_EINVAL, c_value_release_foreign),
    CM("weft_value_release", "the value is used after its release", WEFT_EINVAL, c_op_use_released,
       "was released"),
    CM("weft_value_release", "a body returns a released value (traced)", WEFT_EBODY,
       c_call_returns_released, "output 0 was released"),
    CM("weft_value_release", "a body returns a released value (WEFT_RUN_EAGERLY)", WEFT_EBODY,
       c_call_returns_released_eager, "output 0 was released"),
    C("weft_value_spec", "v is NULL", WEFT_EINVAL, c_value_spec_null),
    C("weft_value_spec", "out is NULL", WEFT_EINVAL, c_value_spec_null_out),
    C("weft_value_static_i64", "a tensor value", WEFT_EINVAL, c_value_static_i64_tensor),
    C("weft_value_static_f64", "a tensor value", WEFT_EINVAL, c_value_static_f64_tensor),
    C("weft_map", "fn is NULL", WEFT_EINVAL, c_map_null_fn),
    C("weft_map", "elems is a scalar", WEFT_ESHAPE, c_map_scalar),
    CM("weft_map", "iteration 2 of 4 fails (host callback returns -1)", WEFT_EHOST, c_map_iteration_fails,
       "weft_map"),
    C("weft_host_call", "fn is NULL", WEFT_EINVAL, c_host_null_fn),
    C("weft_host_call", "out_spec is NULL", WEFT_EINVAL, c_host_null_spec),
    C("weft_host_call", "out_spec rank 9", WEFT_EINVAL, c_host_bad_spec),
    C("weft_host_call", "unknown flags 0x80", WEFT_EINVAL, c_host_bad_flags),
    C("weft_host_call", "in NULL, n_in 2", WEFT_EINVAL, c_host_null_in),
    C("weft_host_call", "the callback returns -42 (eager context)", WEFT_EHOST, c_host_eager_ctx_fails),
    /* Composition and control flow */
    C("weft_call", "g is NULL", WEFT_EINVAL, c_call_null_g),
    CM("weft_call", "2 args for a function of 1", WEFT_EINVAL, c_call_wrong_n, "'twice' takes 1 args"),
    C("weft_call", "f32[4] for input_signature f32[3]", WEFT_ESIGNATURE, c_call_sig_mismatch),
    CM("weft_call", "the callee adds f32[3] and f32[4] (traced)", WEFT_ESHAPE, c_call_callee_fails,
       "badbody/add2: %"),
    CM("weft_call", "a function calling itself for ever", WEFT_EINVAL, c_call_too_deep,
       "nested more than 64 deep"),
    C("weft_cond", "pred f32[]", WEFT_EDTYPE, c_cond_pred_f32),
    C("weft_cond", "pred bool[3]", WEFT_ESHAPE, c_cond_pred_vector),
    C("weft_cond", "else_fn is NULL", WEFT_EINVAL, c_cond_null_else),
    CM("weft_cond", "n_outs 2 for branches of 1", WEFT_EINVAL, c_cond_wrong_n_outs, "must return 2"),
    C("weft_cond", "branches return f32[3] and f32[] (traced)", WEFT_ESHAPE, c_cond_branch_mismatch),
    C("weft_while_loop", "no loop variables", WEFT_EINVAL, c_while_no_vars),
    C("weft_while_loop", "cond_fn returns f32[3]", WEFT_EDTYPE, c_while_cond_not_bool),
    CM("weft_while_loop", "body_fn turns f32[3] into f32[3,1] (traced)", WEFT_ESHAPE,
       c_while_body_changes_spec, "loop variable 0"),
    CM("weft_while_loop", "body_fn turns f32[3] into f32[3,1] (eager)", WEFT_ESHAPE,
       c_while_body_changes_spec_eager, "iteration 0"),
    C("weft_map_ex", "n_elems 0", WEFT_EINVAL, c_map_ex_no_elems),
    C("weft_map_ex", "elems of 3 and 4 rows", WEFT_ESHAPE, c_map_ex_rows_differ),
    C("weft_map_ex", "captures NULL, n_captures 1", WEFT_EINVAL, c_map_ex_null_captures),
    C("weft_host_call_ex", "out_specs[1] rank 9", WEFT_EINVAL, c_host_ex_bad_spec),
    C("weft_host_call_ex", "the callback stores f32[3] for output 0, f32[]", WEFT_ESHAPE,
      c_host_ex_wrong_output),
    /* Tensors */
    C("weft_tensor_print", "t is NULL", WEFT_EINVAL, c_tensor_print_null),
    C("weft_tensor_spec", "out is NULL", WEFT_EINVAL, c_tensor_spec_null_out),
    C("weft_matmul_ex", "flags 0x4 (unknown)", WEFT_EINVAL, c_op_matmul_ex_flags),
    CM("weft_matmul_ex", "WEFT_TRANSPOSE_A on the vector f32[3]", WEFT_ESHAPE, c_op_matmul_ex_vector_t,
       "weft_matmul"),
    CM("weft_matmul_ex", "f32[2,3] x f32[2,3], both transposed", WEFT_ESHAPE, c_op_matmul_ex_inner_t,
       "weft_matmul"),
    CM("weft_matmul_ex", "f32[2,2,3] x f32[3,3,2] (batch dims 2 and 3)", WEFT_ESHAPE, c_op_matmul_ex_batch,
       "weft_matmul"),
    C("weft_reduce", "axes {0, -1} of f32[3]", WEFT_EINVAL, c_op_reduce_twice),
    C("weft_reduce", "axis 1 of f32[3]", WEFT_EINVAL, c_op_reduce_range),
    C("weft_reduce", "reduction (weft_reduction)99", WEFT_EINVAL, c_op_reduce_kind),
    C("weft_reduce", "axes NULL, n_axes 1", WEFT_EINVAL, c_op_reduce_null_axes),
    C("weft_is_nan", "bool[3] (also is_inf, is_finite)", WEFT_EDTYPE, c_op_is_nan_bool),
    C("weft_softplus", "i32[3] (also log_sigmoid, silu, gelu_exact)", WEFT_EDTYPE, c_op_softplus_i32),
    C("weft_relu6", "bool[3]", WEFT_EDTYPE, c_op_relu6_bool),
};

#define N_CASES (sizeof cases / sizeof *cases)

static void md_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

TestSuite(errors, .init = fixture_setup, .fini = fixture_teardown, .timeout = 60);

Test(errors, table)
{
    cr_assert(good_calls()[0] == '\0', "before the table: %s", good_calls());
    const char *doc_path = getenv("WEFT_ERRORS_DOC");
    FILE *doc = doc_path ? fopen(doc_path, "w") : NULL;
    int failed = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const err_case *c = &cases[i];
        /* Leave a known message so that a case that sets none is caught. */
        weft_spec junk;
        weft_spec_parse("(errors walker sentinel)", &junk);
        int rc = c->run();
        const char *msg = weft_errmsg();
        const char *want = c->mention ? c->mention : c->entry;
        bool bad_code = rc != c->code;
        bool bad_msg = want[0] && (!msg[0] || !strstr(msg, want));
        bool bad_sentinel = want[0] && strstr(msg, "errors walker sentinel") != NULL;
        const char *after = good_calls();
        if (bad_code || bad_msg || bad_sentinel || after[0]) {
            failed++;
            cr_log_error("case %zu %s / %s: code %s (%d), want %s; errmsg \"%s\" (must mention \"%s\")%s%s",
                         i, c->entry, c->bad, weft_err_name(rc), rc, weft_err_name(c->code), msg, want,
                         after[0] ? "; afterwards " : "", after);
        }
        if (doc) {
            fprintf(doc, "| %zu | `%s` | ", i + 1, c->entry);
            md_escape(doc, c->bad);
            fprintf(doc, " | `%s` | ", weft_err_name(c->code));
            if (want[0]) {
                fputc('"', doc);
                md_escape(doc, msg);
                fputc('"', doc);
            } else {
                fputs("(the callback's code is returned as is; weft_errmsg() untouched)", doc);
            }
            fputs(" |\n", doc);
        }
    }
    if (doc)
        fclose(doc);
    cr_assert_eq(failed, 0, "%d of %zu error cases failed (see the log above)", failed, N_CASES);
}

/* Accessors and destroy functions that return no code: NULL is harmless. */
Test(errors, null_accessors_and_destroys)
{
    cr_expect_eq(weft_tensor_rank(NULL), -1);
    cr_expect_null(weft_tensor_dims(NULL));
    cr_expect_eq(weft_tensor_numel(NULL), -1);
    cr_expect_null(weft_tensor_data(NULL));
    cr_expect_null(weft_tensor_retain(NULL));
    weft_tensor_release(NULL);
    cr_expect_null(weft_dtype_name((weft_dtype)99));
    cr_expect_eq(weft_dtype_size((weft_dtype)99), 0);
    cr_expect_null(weft_dtype_name((weft_dtype)-1));
    cr_expect_str_eq(weft_err_name(-9999), "WEFT_UNKNOWN");
    cr_expect_str_eq(weft_strerror(-9999), "unknown error");
    cr_expect_eq(weft_runtime_workers(NULL), 0);
    weft_runtime_destroy(NULL);
    weft_runtime *rt = NULL;
    weft_runtime_destroy(&rt);
    weft_function_destroy(NULL);
    weft_function *f = NULL;
    weft_function_destroy(&f);
    weft_eager_end(NULL);
    weft_ctx *cx = NULL;
    weft_eager_end(&cx);
    weft_config_default(NULL);
    weft_runtime_get_stats(NULL, NULL);
    weft_runtime_stats rs;
    weft_runtime_get_stats(NULL, &rs);
    weft_function_get_stats(NULL, NULL);
    cr_expect_str_eq(weft_errmsg(), "weft_function_get_stats: out is NULL");
    weft_function_stats fs;
    memset(&fs, 0xff, sizeof fs);
    weft_function_get_stats(NULL, &fs);
    cr_expect_str_eq(weft_errmsg(), "weft_function_get_stats: f is NULL");
    cr_expect_eq(fs.calls, 0);
    cr_expect_eq(weft_function_tracing_count(NULL), 0);
    cr_expect_null(weft_value_tensor(NULL));
    cr_assert(good_calls()[0] == '\0', "%s", good_calls());
}

/* A body that ends the context it was given: weft still owns it, so
 * nothing is freed (it was a use after free) and the message says why. */
static int body_ends_its_context(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                                 void *user)
{
    (void)user;
    weft_ctx *c = cx;
    weft_eager_end(&c);
    if (c != cx || !strstr(weft_errmsg(), "weft_eager_end: the context was given to a body"))
        return WEFT_EBODY;
    outs[0] = weft_neg(cx, args[0]);
    return 0;
}

Test(errors, a_body_cannot_end_its_context, .timeout = 60)
{
    for (unsigned flags = 0; flags <= WEFT_RUN_EAGERLY; flags += WEFT_RUN_EAGERLY)
        cr_expect_eq(call_body(body_ends_its_context, NULL, flags), 0, "flags %u: %s", flags,
                     weft_errmsg());
}

/* A body that returns an error code without a message of its own must not
 * get a stale sentence from an earlier, unrelated failure on this thread.
 * (It used to append whatever weft_errmsg() held, e.g. "badbody: the body
 * failed with WEFT_ESHAPE: weft_spec_parse: malformed spec ...".) */
Test(errors, body_error_message_not_stale, .timeout = 60)
{
    for (unsigned flags = 0; flags <= WEFT_RUN_EAGERLY; flags += WEFT_RUN_EAGERLY) {
        weft_spec junk;
        weft_spec_parse("stale-text", &junk);
        cr_expect_eq(call_body(body_returns_eshape, NULL, flags), WEFT_ESHAPE);
        cr_expect_null(strstr(weft_errmsg(), "stale-text"), "flags %u: errmsg \"%s\"", flags,
                       weft_errmsg());
    }
}

/* Calls f (one tensor argument, one output) on fx.x3 and drops the output. */
static int call_on_x3(weft_function *f)
{
    weft_tensor *o = NULL;
    weft_arg a = weft_arg_tensor(fx.x3);
    int rc = weft_function_call(f, &a, 1, &o, 1);
    weft_tensor_release(o);
    return rc;
}

/* A body that calls its own function with the signature being traced.
 * Expected: the nested call fails at once (WEFT_EINVAL, naming the
 * function) instead of waiting for a trace that can never finish.
 * (It used to block forever in cache/table.c, waiting on the pending entry
 * that this very thread traces.) */
static weft_function *g_rec;

static int body_recursive(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    int *nested_rc = u;
    weft_tensor *o = NULL;
    weft_arg a = weft_arg_tensor(fx.x3);
    *nested_rc = weft_function_call(g_rec, &a, 1, &o, 1);
    weft_tensor_release(o);
    outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}

Test(errors, recursive_trace_same_signature, .timeout = 60)
{
    int nested_rc = 0;
    g_rec = make_fn(body_recursive, &nested_rc, 1, 1, NULL, 0, "rec");
    int rc = call_on_x3(g_rec);
    cr_expect_neq(nested_rc, 0, "the recursive call must fail");
    cr_expect(rc == 0 || rc == nested_rc, "outer call: %s", weft_err_name(rc));
    weft_function_destroy(&g_rec);
    cr_assert(good_calls()[0] == '\0', "%s", good_calls());
}

/* The same recursion through weft_function_get_concrete, with a new
 * signature: the message names the entry point that was called, not
 * weft_function_call. */
typedef struct rec_concrete {
    int rc;
    char msg[256];
} rec_concrete;

static weft_function *g_rec_concrete;

static int body_recursive_concrete(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                                   void *u)
{
    rec_concrete *r = u;
    weft_spec s;
    cr_assert_eq(weft_spec_parse("f64[7]", &s), 0);
    weft_concrete *c = NULL;
    r->rc = weft_function_get_concrete(g_rec_concrete, &s, 1, &c);
    snprintf(r->msg, sizeof r->msg, "%s", weft_errmsg());
    outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}

Test(errors, recursive_get_concrete_names_itself, .timeout = 60)
{
    rec_concrete r = { 0 };
    g_rec_concrete = make_fn(body_recursive_concrete, &r, 1, 1, NULL, 0, "recc");
    cr_expect_eq(call_on_x3(g_rec_concrete), 0, "%s", weft_errmsg());
    cr_expect_eq(r.rc, WEFT_EINVAL, "nested get_concrete: %s", weft_err_name(r.rc));
    cr_expect(strncmp(r.msg, "weft_function_get_concrete(recc): ", 34) == 0, "message: %s", r.msg);
    weft_function_destroy(&g_rec_concrete);
    cr_assert(good_calls()[0] == '\0', "%s", good_calls());
}

/* The same recursion through parallel work: the body's weft_parallel_map
 * calls its own function (a new signature per index) from the loop.  The
 * iterations run on the tracing thread (it holds the trace lock), so each
 * nested call is reported as recursion; a worker taking an iteration would
 * wait for the trace lock while the tracing thread waited for that
 * iteration. */
typedef struct rec_loop {
    int failed, ok;  /* (atomic) */
} rec_loop;

static weft_function *g_rec_loop;

static int rec_index(size_t i, void *ctx)
{
    rec_loop *r = ctx;
    int64_t n = (int64_t)i + 10;
    weft_tensor *x = NULL, *o = NULL;
    int rc = weft_tensor_create(WEFT_F64, 1, &n, NULL, &x);
    weft_arg a = weft_arg_tensor(x);
    if (rc == 0)
        rc = weft_function_call(g_rec_loop, &a, 1, &o, 1);
    weft_tensor_release(o);
    weft_tensor_release(x);
    __atomic_fetch_add(rc == WEFT_EINVAL ? &r->failed : &r->ok, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int body_recursive_loop(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    weft_spec s;
    weft_value_spec(args[0], &s);
    if (s.dims[0] == 3 && weft_parallel_map(fx.rt, 16, 0, rec_index, u) != 0)
        return WEFT_EBODY;
    outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}

Test(errors, recursive_trace_from_parallel_work, .timeout = 60)
{
    rec_loop r = { 0 };
    g_rec_loop = make_fn(body_recursive_loop, &r, 1, 1, NULL, 0, "recloop");
    cr_expect_eq(call_on_x3(g_rec_loop), 0, "%s", weft_errmsg());
    cr_expect_eq(__atomic_load_n(&r.failed, __ATOMIC_SEQ_CST), 16,
                 "%d of 16 nested calls failed, %d ran",
                 __atomic_load_n(&r.failed, __ATOMIC_SEQ_CST),
                 __atomic_load_n(&r.ok, __ATOMIC_SEQ_CST));
    weft_function_destroy(&g_rec_loop);
    cr_assert(good_calls()[0] == '\0', "%s", good_calls());
}
