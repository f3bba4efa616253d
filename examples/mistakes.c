/* The mistakes a TensorFlow user makes in a first weft port, and what weft
 * does about each.  Every step checks what it prints; the program exits
 * with 1 if one of them does not hold.
 *
 *  1. `x * 2.0` on an f32 tensor: the constant is weak, like a Python
 *     number, so the result stays f32.
 *  2. `7 / 2` on integers: weft_div divides in the operands' dtype (3, as
 *     `//`); weft_truediv is TensorFlow's `/` (3.5).
 *  3. A learning rate passed as a plain scalar that changes every call:
 *     each new value traces again, and the retracing warning says what to
 *     do; declared f64[] in the input_signature, it is one trace.
 *  4. Adding f32[3] and f32[4] in a traced body: the error names the
 *     function and the node.
 *  5. zeros of the shape of an input whose batch size is unknown while
 *     tracing: weft_zeros_like. */
#include <stdio.h>
#include <string.h>
#include <weft.h>

static int failed;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok:   " : "WRONG:", what);
    failed |= !ok;
}

static int twice(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, args[0], weft_const_f64(cx, 2.0));
    return weft_ctx_status(cx);
}

static int step(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;   /* w - lr * w */
    outs[0] = weft_sub(cx, args[0], weft_mul(cx, args[1], args[0]));
    return weft_ctx_status(cx);
}

static int add2(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

static int zeros(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_zeros_like(cx, args[0]);
    return weft_ctx_status(cx);
}

static int warnings;
static void on_log(int level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    if (warnings++ == 0)
        printf("       log: %s\n", msg);
}

static weft_function *make(weft_runtime *rt, const char *name, weft_body_fn body, size_t n_args,
                           const weft_spec *sig)
{
    weft_function_desc d = { .name = name, .body = body, .n_args = n_args, .n_outs = 1,
                             .input_signature = sig };
    weft_function *f = NULL;
    if (weft_function_create(rt, &d, &f) != 0)
        fprintf(stderr, "%s: %s\n", name, weft_errmsg());
    return f;
}

int main(void)
{
    weft_runtime *rt = NULL;
    if (weft_runtime_create(NULL, &rt) != 0)
        return 1;
    weft_tensor *x3, *x4, *y = NULL;
    weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 3 }, (float[]){ 1, 2, 3 }, &x3);
    weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 4 }, (float[]){ 1, 2, 3, 4 }, &x4);

    /* 1. */
    weft_function *f = make(rt, "twice", twice, 1, NULL);
    weft_arg a = weft_arg_tensor(x3);
    check(weft_function_call(f, &a, 1, &y, 1) == 0 && weft_tensor_dtype(y) == WEFT_F32,
          "f32 x * weft_const_f64(2.0) is f32");
    weft_tensor_release(y);
    weft_function_destroy(&f);

    /* 2. */
    weft_ctx *cx;
    weft_eager_begin(rt, &cx);
    weft_value *seven = weft_const(cx, WEFT_I32, 7), *two = weft_const(cx, WEFT_I32, 2);
    int32_t q = *(const int32_t *)weft_tensor_data(weft_value_tensor(weft_div(cx, seven, two)));
    double t = *(const double *)weft_tensor_data(weft_value_tensor(weft_truediv(cx, seven, two)));
    check(q == 3 && t == 3.5, "i32 7 / 2: weft_div gives 3, weft_truediv 3.5");
    weft_eager_end(&cx);

    /* 3. */
    weft_set_log(on_log, NULL);
    f = make(rt, "step", step, 2, NULL);
    for (int i = 0; i < 10; i++) {
        weft_arg args[2] = { weft_arg_tensor(x3), weft_arg_f64(0.01 * (i + 1)) };
        weft_function_call(f, args, 2, &y, 1);
        weft_tensor_release(y);
    }
    check(weft_function_tracing_count(f) == 10 && warnings > 0,
          "a changing scalar argument traces on every call, and a warning says so");
    weft_function_destroy(&f);
    weft_spec sig[2];
    weft_spec_parse("f32[?]", &sig[0]);
    weft_spec_parse("f64[]", &sig[1]);
    f = make(rt, "step", step, 2, sig);
    for (int i = 0; i < 10; i++) {
        weft_arg args[2] = { weft_arg_tensor(x3), weft_arg_f64(0.01 * (i + 1)) };
        weft_function_call(f, args, 2, &y, 1);
        weft_tensor_release(y);
    }
    check(weft_function_tracing_count(f) == 1, "declared f64[] in the input_signature: one trace");
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);

    /* 4. */
    f = make(rt, "add2", add2, 2, NULL);
    weft_arg args[2] = { weft_arg_tensor(x3), weft_arg_tensor(x4) };
    int rc = weft_function_call(f, args, 2, &y, 1);
    printf("       error: %s\n", weft_errmsg());
    check(rc == WEFT_ESHAPE && strstr(weft_errmsg(), "add2: %2 = weft_add:") != NULL,
          "the error names the function and the node");
    weft_function_destroy(&f);

    /* 5. */
    weft_spec_parse("f32[?]", &sig[0]);
    f = make(rt, "zeros", zeros, 1, sig);
    a = weft_arg_tensor(x4);
    check(weft_function_call(f, &a, 1, &y, 1) == 0 && weft_tensor_numel(y) == 4,
          "weft_zeros_like of an f32[?] argument");
    weft_tensor_release(y);
    weft_function_destroy(&f);

    weft_tensor_release(x3);
    weft_tensor_release(x4);
    weft_runtime_destroy(&rt);
    return failed;
}
