/* Retrace reasons and the frequent-retracing warning as a user reads them
 * (every differing argument, shortest floats, advice that follows from the
 * reasons), and the environment knobs WEFT_RUN_EAGERLY and WEFT_LOG. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;

static void setup(void)
{
    unsetenv("WEFT_RUN_EAGERLY");
    unsetenv("WEFT_LOG");
    rt = test_runtime(1);
}

static void teardown(void)
{
    weft_set_log(NULL, NULL);
    unsetenv("WEFT_RUN_EAGERLY");
    unsetenv("WEFT_LOG");
    weft_runtime_destroy(&rt);
}

TestSuite(retrace, .init = setup, .fini = teardown, .timeout = 30);

static int body_runs;  /* (atomic) */

/* out = x * s, for a tensor x and a scalar s (static or not). */
static int body_scale(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    __atomic_fetch_add(&body_runs, 1, __ATOMIC_SEQ_CST);
    o[0] = weft_mul(cx, a[0], a[1]);
    return 0;
}

static weft_function *make(unsigned flags)
{
    weft_function_desc d = { .name = "scale", .body = body_scale, .n_args = 2, .n_outs = 1,
                             .flags = flags };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static void call(weft_function *f, int64_t n, weft_arg s)
{
    weft_tensor *x = NULL, *y = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, NULL, &x), 0);
    weft_arg args[2] = { weft_arg_tensor(x), s };
    cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(y);
    weft_tensor_release(x);
}

typedef struct log_seen { int warns, infos; char last[4096]; } log_seen;

static void log_cb(int level, const char *msg, void *user)
{
    log_seen *s = user;
    if (level == WEFT_LOG_WARN)
        s->warns++;
    else
        s->infos++;
    snprintf(s->last, sizeof s->last, "%s", msg);
}

Test(retrace, every_differing_argument_in_the_reason)
{
    weft_function *f = make(0);
    weft_retrace why;
    call(f, 3, weft_arg_f64(0.1));
    call(f, 4, weft_arg_f64(0.09));
    cr_assert_eq(weft_function_last_retrace(f, &why), 0);
    cr_expect_str_eq(why.reason, "arg 0: shape f64[4] does not match cached f64[3] (dim 0: 4 vs 3) "
                                 "and arg 1: static value f64=0.09 does not match cached f64=0.1");
    cr_expect_eq(why.arg, -1);
    cr_expect_eq(why.dim, -1);
    /* One argument: it and its dim. */
    call(f, 5, weft_arg_f64(0.09));
    cr_assert_eq(weft_function_last_retrace(f, &why), 0);
    cr_expect_str_eq(why.reason, "arg 0: shape f64[5] does not match cached f64[4] (dim 0: 5 vs 4)");
    cr_expect_eq(why.arg, 0);
    cr_expect_eq(why.dim, 0);
    weft_function_destroy(&f);
}

Test(retrace, static_scalar_advice)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    weft_function *f = make(0);
    for (int i = 1; i <= 5; i++)
        call(f, 3, weft_arg_f64(i / 100.0));
    cr_assert_eq(seen.warns, 1);
    cr_expect(strstr(seen.last, "traced 5 times in its last 5 calls, which is costly: arg 1 keeps "
                                "changing as a static scalar: pass it as a tensor, or declare it "
                                "f64[] in the input_signature.  Reasons: first trace; arg 1: static "
                                "value f64=0.02 does not match cached f64=0.01;") != NULL,
              "%s", seen.last);
    cr_expect(strstr(seen.last, "WEFT_REDUCE_RETRACING") == NULL, "%s", seen.last);
    weft_function_destroy(&f);
    /* Integers: i64[]. */
    seen.warns = 0;
    f = make(0);
    for (int i = 1; i <= 5; i++)
        call(f, 3, weft_arg_i64(i));
    cr_assert_eq(seen.warns, 1);
    cr_expect(strstr(seen.last, "declare it i64[] in the input_signature") != NULL, "%s", seen.last);
    weft_function_destroy(&f);
}

Test(retrace, shape_advice_never_suggests_a_flag_already_set)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    weft_function *f = make(0);
    for (int i = 1; i <= 5; i++)
        call(f, i, weft_arg_f64(2));
    cr_assert_eq(seen.warns, 1);
    cr_expect(strstr(seen.last, "arg 0 keeps changing shape: pass WEFT_REDUCE_RETRACING, or declare "
                                "the dims that change as ? in the input_signature") != NULL,
              "%s", seen.last);
    weft_function_destroy(&f);

    /* With the flag, shapes relax, and only a changing rank or static value
     * still traces: the advice names those, and never the flag. */
    seen.warns = 0;
    f = make(WEFT_REDUCE_RETRACING);
    for (int i = 1; i <= 8 && !seen.warns; i++)
        call(f, i, weft_arg_f64(i));
    cr_assert_eq(seen.warns, 1);
    cr_expect(strstr(seen.last, "declare the dims that change as ? in the input_signature") != NULL,
              "%s", seen.last);
    cr_expect(strstr(seen.last, "pass WEFT_REDUCE_RETRACING") == NULL, "%s", seen.last);
    weft_function_destroy(&f);
}

Test(retrace, run_eagerly_spellings)
{
    static const char *const on[] = { "1", "true", "TRUE", "yes", "On" };
    static const char *const off[] = { "", "0", "false", "No", "OFF" };
    for (int k = 0; k < 5; k++) {
        for (int side = 0; side < 2; side++) {
            setenv("WEFT_RUN_EAGERLY", side ? on[k] : off[k], 1);
            weft_function *f = make(0);
            __atomic_store_n(&body_runs, 0, __ATOMIC_SEQ_CST);
            call(f, 2, weft_arg_f64(1));
            call(f, 2, weft_arg_f64(1));
            /* Eager: the body runs on every call; traced: once. */
            cr_expect_eq(__atomic_load_n(&body_runs, __ATOMIC_SEQ_CST), side ? 2 : 1,
                         "WEFT_RUN_EAGERLY=%s",
                         side ? on[k] : off[k]);
            weft_function_destroy(&f);
        }
    }
    setenv("WEFT_RUN_EAGERLY", "maybe", 1);
    weft_function_desc d = { .name = "scale", .body = body_scale, .n_args = 2, .n_outs = 1 };
    weft_function *f = (weft_function *)&d;
    cr_assert_eq(weft_function_create(rt, &d, &f), WEFT_EINVAL);
    cr_expect_null(f);
    cr_expect_str_eq(weft_errmsg(), "weft_function_create: WEFT_RUN_EAGERLY=\"maybe\" is not one "
                                    "of 1, true, yes, on, 0, false, no, off");
}

Test(retrace, log_spellings)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    static const char *const on[] = { "retrace", "RETRACE", "1", "on,retrace", ",retrace," };
    static const char *const off[] = { "", "0", "off", "no", "," };
    for (int k = 0; k < 5; k++) {
        for (int side = 0; side < 2; side++) {
            setenv("WEFT_LOG", side ? on[k] : off[k], 1);
            weft_function *f = make(0);
            seen.infos = 0;
            call(f, 2, weft_arg_f64(1));
            cr_expect_eq(seen.infos, side, "WEFT_LOG=%s", side ? on[k] : off[k]);
            weft_function_destroy(&f);
        }
    }
    setenv("WEFT_LOG", "retrace,retrase", 1);
    weft_function_desc d = { .name = "scale", .body = body_scale, .n_args = 2, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_function_create: WEFT_LOG=\"retrace,retrase\": \"retrase\" "
                                    "is not one of retrace, 1, true, yes, on, 0, false, no, off");
}
