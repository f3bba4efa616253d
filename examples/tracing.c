/* When does a weft function trace?  A TensorFlow session, replayed in C.
 *
 * The body prints "Tracing" (a C side effect, so it happens at trace time
 * only, like Python's print in a tf.function) and doubles its argument
 * through a host call (a side effect that runs on every call, like
 * tf.py_function).  The program replays this TensorFlow session and
 * prints "Tracing" where TensorFlow printed it:
 *
 *   op_tf(1) without tf.function            Tracing on every call
 *   @tf.function op_tf(1), (2), (3), (3)    three traces: a new Python
 *                                           scalar is a new signature
 *   input_signature=[TensorSpec([], int32)] one trace for every value
 *   get_concrete_function()                 one trace, then none
 *
 * Usage: tracing (no arguments). */
#include <stdio.h>
#include <weft.h>

/* op: 2 * x, run by the host on every call (the TensorFlow op also slept
 * 100 ms; examples/sleep_map times that). */
static int op(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    (void)user;
    int32_t x = *(const int32_t *)weft_tensor_data(in[0]);
    int32_t y = 2 * x;
    return weft_tensor_create(WEFT_I32, 0, NULL, &y, out);
}

/* op_tf: print("Tracing"); return tf.py_function(op, [x], Tout=tf.int32).
 * A static argument arrives as an i64 constant, so it is cast first. */
static int op_tf(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    printf("Tracing\n");
    weft_spec i32;
    weft_spec_parse("i32[]", &i32);
    weft_value *x = weft_cast(cx, args[0], WEFT_I32);
    outs[0] = weft_host_call(cx, op, NULL, &x, 1, &i32, 0);
    return weft_ctx_status(cx);
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "tracing: %s: %s: %s\n", what, weft_err_name(rc), weft_errmsg());
    return 1;
}

/* Calls f with the static scalar v, as op_tf(v) does, and prints the
 * result the way IPython shows it. */
static int call_static(weft_function *f, int64_t v)
{
    printf(">>> op_tf(%lld)\n", (long long)v);
    weft_arg a = weft_arg_i64(v);
    weft_tensor *y = NULL;
    int rc = weft_function_call(f, &a, 1, &y, 1);
    if (rc)
        return fail("weft_function_call", rc);
    printf("<tensor i32[] = %d>\n", *(const int32_t *)weft_tensor_data(y));
    weft_tensor_release(y);
    return 0;
}

/* Prints the trace count and the reason of the last trace. */
static void explain(const weft_function *f)
{
    weft_retrace why;
    weft_function_last_retrace(f, &why);
    printf("  traces: %llu; last trace: %s (arg %d, dim %d)\n",
           (unsigned long long)weft_function_tracing_count(f), why.reason, why.arg, why.dim);
}

int main(void)
{
    weft_runtime *rt = NULL;
    weft_function *f = NULL;
    int status = 1;
    int rc = weft_runtime_create(NULL, &rt);
    if (rc)
        return fail("weft_runtime_create", rc);

    /* 1. Without tf.function: every call runs the body, so every call
     *    prints "Tracing" (although nothing is traced). */
    printf("== 1. no tf.function (WEFT_RUN_EAGERLY): the body runs on every call\n");
    weft_function_desc d = { .name = "op_tf", .body = op_tf, .n_args = 1, .n_outs = 1,
                             .flags = WEFT_RUN_EAGERLY };
    if ((rc = weft_function_create(rt, &d, &f)))
        goto error_rc;
    if (call_static(f, 1) || call_static(f, 1))
        goto error;
    printf("  traces: %llu\n", (unsigned long long)weft_function_tracing_count(f));
    weft_function_destroy(&f);

    /* 2. @tf.function: a static scalar is part of the signature, so each
     *    new value traces again; op_tf(3) a second time hits the cache. */
    printf("\n== 2. @tf.function: a new static value is a new signature\n");
    d.flags = 0;
    if ((rc = weft_function_create(rt, &d, &f)))
        goto error_rc;
    int64_t values[] = { 1, 2, 3, 3 };
    for (int i = 0; i < 4; i++) {
        if (call_static(f, values[i]))
            goto error;
        explain(f);
    }
    printf("signatures:\n");
    weft_function_print_signatures(f, stdout);
    weft_function_destroy(&f);

    /* 3. input_signature=[tf.TensorSpec(shape=[], dtype=tf.int32)]: the
     *    static scalars become i32[] tensors, one trace serves them all. */
    printf("\n== 3. input_signature i32[]: one trace for every value\n");
    weft_spec sig;
    weft_spec_parse("i32[]", &sig);
    d.input_signature = &sig;
    if ((rc = weft_function_create(rt, &d, &f)))
        goto error_rc;
    for (int64_t v = 1; v <= 3; v++)
        if (call_static(f, v))
            goto error;
    explain(f);
    printf("signatures:\n");
    weft_function_print_signatures(f, stdout);

    /* A tensor of another dtype does not match the signature. */
    weft_tensor *bad = NULL;
    if ((rc = weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 2 }, NULL, &bad)))
        goto error_rc;
    weft_arg a = weft_arg_tensor(bad);
    weft_tensor *y = NULL;
    rc = weft_function_call(f, &a, 1, &y, 1);
    weft_tensor_release(bad);
    weft_tensor_release(y);
    printf(">>> op_tf(tf.zeros([2]))\n%s: %s\n", weft_err_name(rc), weft_errmsg());
    if (rc != WEFT_ESIGNATURE)
        goto error;
    weft_function_destroy(&f);

    /* 4. op_tf.get_concrete_function(): traces now, without running; the
     *    concrete function is then called without hashing or tracing. */
    printf("\n== 4. get_concrete_function: one trace, then none\n");
    if ((rc = weft_function_create(rt, &d, &f)))
        goto error_rc;
    printf(">>> op_tf = op_tf.get_concrete_function()\n");
    weft_concrete *c = NULL;
    if ((rc = weft_function_get_concrete(f, &sig, 1, &c)))
        goto error_rc;
    for (int32_t v = 1; v <= 2; v++) {
        printf(">>> op_tf(%d)\n", v);
        weft_tensor *x = NULL;
        if ((rc = weft_tensor_create(WEFT_I32, 0, NULL, &v, &x)))
            goto error_rc;
        rc = weft_concrete_call(c, &x, 1, &y, 1);
        weft_tensor_release(x);
        if (rc)
            goto error_rc;
        printf("<tensor i32[] = %d>\n", *(const int32_t *)weft_tensor_data(y));
        weft_tensor_release(y);
    }
    explain(f);
    printf("signatures:\n");
    weft_function_print_signatures(f, stdout);
    printf("ops of concrete function 0:\n");
    weft_function_print_ops(f, 0, stdout);
    status = 0;
    goto error;

error_rc:
    fail("weft", rc);
error:
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
    return status;
}
