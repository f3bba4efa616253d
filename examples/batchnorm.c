/* Batch normalization over a batch of unknown size: one trace serves every
 * batch.  The TensorFlow program it ports:
 *
 *   @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32),
 *                                 tf.TensorSpec([4], tf.float32),
 *                                 tf.TensorSpec([4], tf.float32)])
 *   def batch_norm(x, gamma, beta):
 *       mean = tf.reduce_mean(x, axis=0, keepdims=True)
 *       var = tf.math.reduce_variance(x, axis=0, keepdims=True)
 *       return gamma * (x - mean) / tf.sqrt(var + 1e-5) + beta
 *
 *   for n in (2, 8, 1000):
 *       y = batch_norm(x[:n], gamma, beta)
 *   batch_norm.experimental_get_tracing_count()     # 1
 *
 * The program checks every result against a plain C loop and exits with 1
 * when one differs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft.h>

#define FEATURES 4

static int batch_norm(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0], *gamma = args[1], *beta = args[2];
    const int axis0[1] = { 0 };
    weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, x, axis0, 1, true);
    weft_value *var = weft_reduce(cx, WEFT_R_VAR, x, axis0, 1, true);
    /* 1e-5 is a weak constant, like a Python number: var stays f32. */
    weft_value *scale = weft_sqrt(cx, weft_add(cx, var, weft_const_f64(cx, 1e-5)));
    weft_value *y = weft_div(cx, weft_mul(cx, gamma, weft_sub(cx, x, mean)), scale);
    outs[0] = weft_add(cx, y, beta);
    return weft_ctx_status(cx);
}

/* The same computation as a C loop, in double precision. */
static void batch_norm_ref(const float *x, int64_t n, const float *gamma, const float *beta,
                           double *y)
{
    for (int c = 0; c < FEATURES; c++) {
        double mean = 0, var = 0;
        for (int64_t r = 0; r < n; r++)
            mean += x[r * FEATURES + c];
        mean /= (double)n;
        for (int64_t r = 0; r < n; r++)
            var += (x[r * FEATURES + c] - mean) * (x[r * FEATURES + c] - mean);
        var /= (double)n;
        for (int64_t r = 0; r < n; r++)
            y[r * FEATURES + c] = gamma[c] * (x[r * FEATURES + c] - mean) / sqrt(var + 1e-5) +
                                  beta[c];
    }
}

/* Calls f on the first n rows of x and compares with the C loop. */
static int check_batch(weft_function *f, const float *x, int64_t n, weft_tensor *gamma,
                       weft_tensor *beta)
{
    weft_tensor *xt = NULL, *yt = NULL;
    int rc = weft_tensor_create(WEFT_F32, 2, (int64_t[]){ n, FEATURES }, x, &xt);
    if (rc == 0) {
        weft_arg args[3] = { weft_arg_tensor(xt), weft_arg_tensor(gamma), weft_arg_tensor(beta) };
        rc = weft_function_call(f, args, 3, &yt, 1);
    }
    if (rc != 0) {
        fprintf(stderr, "batch of %lld: %s\n", (long long)n, weft_errmsg());
        weft_tensor_release(xt);
        return 1;
    }
    double *want = malloc(sizeof *want * (size_t)(n * FEATURES));
    const float *got = weft_tensor_data(yt);
    int bad = want == NULL;
    if (want) {
        batch_norm_ref(x, n, weft_tensor_data(gamma), weft_tensor_data(beta), want);
        for (int64_t i = 0; i < n * FEATURES && !bad; i++)
            bad = fabs(got[i] - want[i]) > 1e-4 * (1 + fabs(want[i]));
    }
    printf("batch of %4lld: y[0] = [%.4f %.4f %.4f %.4f]%s\n", (long long)n, got[0], got[1],
           got[2], got[3], bad ? "  WRONG" : "");
    free(want);
    weft_tensor_release(xt);
    weft_tensor_release(yt);
    return bad;
}

int main(void)
{
    weft_runtime *rt = NULL;
    weft_function *f = NULL;
    weft_tensor *gamma = NULL, *beta = NULL;
    float *x = malloc(sizeof *x * 1000 * FEATURES);
    int failed = 1;
    if (!x || weft_runtime_create(NULL, &rt) != 0)
        goto out;
    for (int i = 0; i < 1000 * FEATURES; i++)
        x[i] = (float)((i * 37) % 101) / 10.0f + (float)(i % FEATURES);

    weft_spec sig[3];
    weft_spec_parse("f32[?,4]", &sig[0]);
    weft_spec_parse("f32[4]", &sig[1]);
    weft_spec_parse("f32[4]", &sig[2]);
    weft_function_desc d = { .name = "batch_norm", .body = batch_norm, .n_args = 3, .n_outs = 1,
                             .input_signature = sig };
    if (weft_function_create(rt, &d, &f) != 0 ||
        weft_tensor_create(WEFT_F32, 1, (int64_t[]){ FEATURES }, (float[]){ 1, 2, 0.5f, 1 },
                           &gamma) != 0 ||
        weft_tensor_create(WEFT_F32, 1, (int64_t[]){ FEATURES }, (float[]){ 0, 0, 1, -1 },
                           &beta) != 0) {
        fprintf(stderr, "set-up: %s\n", weft_errmsg());
        goto out;
    }
    failed = 0;
    const int64_t sizes[3] = { 2, 8, 1000 };
    for (int k = 0; k < 3; k++)
        failed |= check_batch(f, x, sizes[k], gamma, beta);
    printf("traces: %llu (one for every batch size)\n",
           (unsigned long long)weft_function_tracing_count(f));
    failed |= weft_function_tracing_count(f) != 1;
out:
    weft_tensor_release(gamma);
    weft_tensor_release(beta);
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
    free(x);
    return failed;
}
