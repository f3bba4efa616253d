/* check_numerics and check: values passed through bit for bit eagerly and
 * traced on 1, 2 and 4 workers; TensorFlow's NaN / Inf / "Inf and NaN"
 * messages, with the bad element in any chunk of a tensor the kernel
 * splits; a check whose result goes unused still runs, and a host call
 * recorded after a failing check does not; long messages cut; the op
 * list names the message; the refused dtypes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_check, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static int numerics_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_check_numerics(cx, a[0], user);
    return weft_ctx_status(cx);
}

static int check_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_check(cx, a[0], a[1], user);
    return weft_ctx_status(cx);
}

/* n values i / 7 - 3, one of them (at `at`) replaced by bad. */
static weft_tensor *values(weft_dtype dt, int64_t n, int64_t at, double bad)
{
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i / 7 - 3;
    if (at >= 0)
        v[at] = bad;
    weft_tensor *t = test_tensor(dt, 1, &n, v);
    free(v);
    return t;
}

Test(ops_check, finite_values_pass_through)
{
    const weft_dtype dts[2] = { WEFT_F32, WEFT_F64 };
    for (int d = 0; d < 2; d++)
        for (int64_t n = 0; n <= 300000; n += 150000) {
            weft_tensor *x = values(dts[d], n, -1, 0), *out;
            op_results_everywhere(numerics_body, "x", &x, 1, &out, 1, "finite");
            cr_assert(op_same_bits(out, x), "%s[%lld] changed", weft_dtype_name(dts[d]),
                      (long long)n);
            weft_tensor_release(out);
            weft_tensor_release(x);
        }
}

/* Every worker count, eager and traced: the call fails with a message
 * that ends with says (eagerly: is says). */
static void fails_everywhere(weft_body_fn body, void *user, weft_tensor *const *args,
                             size_t n_args, const char *says)
{
    for (int k = 0; k < N_RT; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *out = NULL;
            int rc = op_call(rts[k], body, user, args, n_args, &out, 1, eager);
            cr_assert_eq(rc, WEFT_EINVAL, "%u workers, %s: %s", rt_workers[k],
                         eager ? "eager" : "traced", weft_err_name(rc));
            const char *msg = weft_errmsg(), *at = strstr(msg, says);
            /* Traced, the executor puts the function and node first. */
            cr_assert(at && strlen(at) == strlen(says) && (!eager || at == msg),
                      "%u workers, %s: %s", rt_workers[k],
                      eager ? "eager" : "traced", weft_errmsg());
            cr_assert_null(out);
        }
}

Test(ops_check, nan_and_inf_anywhere_like_tensorflow)
{
    enum { N = 300000 };
    const int64_t spots[3] = { 0, N / 2 + 17, N - 1 };
    for (int s = 0; s < 3; s++)
        for (int d = 0; d < 2; d++) {
            weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
            weft_tensor *x = values(dt, N, spots[s], NAN);
            fails_everywhere(numerics_body, "logits", &x, 1,
                             "weft_check_numerics: logits : Tensor had NaN values");
            weft_tensor_release(x);
            x = values(dt, N, spots[s], s == 1 ? INFINITY : -INFINITY);
            fails_everywhere(numerics_body, "loss", &x, 1,
                             "weft_check_numerics: loss : Tensor had Inf values");
            weft_tensor_release(x);
        }
    double both[4] = { 1, INFINITY, 2, NAN };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (int64_t[]){ 4 }, both);
    fails_everywhere(numerics_body, NULL, &x, 1,
                     "weft_check_numerics:  : Tensor had Inf and NaN values");
    weft_tensor_release(x);
}

Test(ops_check, check_passes_or_fails_on_its_condition)
{
    enum { N = 200001 };
    weft_tensor *x = values(WEFT_I64, 6, -1, 0);
    for (int s = -1; s < 3; s++) {
        int64_t n = N, at = s < 0 ? -1 : s == 0 ? 0 : s == 1 ? N / 3 : N - 1;
        double *c = malloc(N * sizeof *c);
        cr_assert_not_null(c);
        for (int64_t i = 0; i < N; i++)
            c[i] = i != at;
        weft_tensor *args[2] = { x, test_tensor(WEFT_BOOL, 1, &n, c) };
        free(c);
        if (s < 0) {
            weft_tensor *out;
            op_results_everywhere(check_body, "all true", args, 2, &out, 1, "holds");
            cr_assert(op_same_bits(out, x));
            weft_tensor_release(out);
        } else {
            fails_everywhere(check_body, "x is sorted", args, 2, "weft_check: x is sorted");
        }
        weft_tensor_release(args[1]);
    }
    weft_tensor_release(x);
}

typedef struct host_count {
    int calls;
} host_count;

static int count_call(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    __atomic_fetch_add(&((host_count *)user)->calls, 1, __ATOMIC_SEQ_CST);
    *out = weft_tensor_retain(in[0]);
    return 0;
}

/* The check's result is dropped: the body returns 2 x, and a host call on
 * x (not on the check) comes after it. */
static int unused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)weft_check_numerics(cx, a[0], "unused");
    weft_spec s;
    weft_value_spec(a[0], &s);
    weft_value *after = weft_host_call(cx, count_call, user, a, 1, &s, 0);
    outs[0] = weft_mul(cx, after, weft_const_f64(cx, 2));
    return weft_ctx_status(cx);
}

Test(ops_check, an_unused_check_runs_and_holds_back_later_host_calls)
{
    weft_tensor *bad = values(WEFT_F32, 5, 3, NAN), *good = values(WEFT_F32, 5, -1, 0);
    for (int k = 0; k < N_RT; k++)
        for (int eager = 0; eager < 2; eager++) {
            host_count count = { 0 };
            weft_tensor *out = NULL;
            int rc = op_call(rts[k], unused_body, &count, &bad, 1, &out, 1, eager);
            cr_assert_eq(rc, WEFT_EINVAL, "%s", weft_errmsg());
            cr_assert(strstr(weft_errmsg(), "weft_check_numerics: unused : Tensor had NaN values"),
                      "%s", weft_errmsg());
            cr_assert_eq(count.calls, 0, "the host call after the check ran");
            rc = op_call(rts[k], unused_body, &count, &good, 1, &out, 1, eager);
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            cr_assert_eq(count.calls, 1);
            cr_assert_eq(*(const float *)weft_tensor_data(out), (float)(2 * -3.0));
            weft_tensor_release(out);
        }
    weft_tensor_release(bad);
    weft_tensor_release(good);
}

Test(ops_check, long_messages_are_cut_and_listed)
{
    char message[300];
    for (int i = 0; i < 299; i++)
        message[i] = (char)('a' + i % 26);
    message[299] = 0;
    weft_tensor *x = values(WEFT_F64, 3, 1, NAN);
    char want[200];
    snprintf(want, sizeof want, "weft_check_numerics: %.111s : Tensor had NaN values", message);
    fails_everywhere(numerics_body, message, &x, 1, want);
    /* The op list shows the message kept. */
    weft_function_desc d = { .name = "op", .body = numerics_body, .user = "x is finite",
                             .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[0], &d, &f), 0);
    weft_tensor *ok = values(WEFT_F64, 3, -1, 0), *out = NULL;
    weft_arg arg = weft_arg_tensor(ok);
    cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), 0, "%s", weft_errmsg());
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert_not_null(mem);
    cr_assert_eq(weft_function_print_ops(f, 0, mem), 0);
    fclose(mem);
    cr_assert(strstr(text, "check_numerics<message=\"x is finite\">"), "%s", text);
    free(text);
    weft_tensor_release(out);
    weft_tensor_release(ok);
    weft_function_destroy(&f);
    weft_tensor_release(x);
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_check_numerics(cx, a[1], "ints"); break;
    case 1: outs[0] = weft_check(cx, a[0], a[1], "not bool"); break;
    case 2: outs[0] = weft_check(cx, a[0], NULL, "no condition"); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_check, refused_calls)
{
    weft_tensor *args[2] = { values(WEFT_F32, 3, -1, 0), values(WEFT_I32, 3, -1, 0) };
    static const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_check_numerics: x i32[3] is not f32 or f64" },
        { 1, WEFT_EDTYPE, "weft_check: the condition i32[3] is not bool" },
        { 2, WEFT_EINVAL, "weft_check" },
    };
    op_expect_errors(rts[1], refused_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
