#include <stdio.h>
#include <weft.h>

/* A loop body: fills out[i]. */
static int square(size_t i, void *ctx)
{
    ((long *)ctx)[i] = (long)(i * i);
    return 0;
}

/* A function body: ordinary C over weft_value handles. */
static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    printf("Tracing\n");                        /* runs at trace time only */
    outs[0] = weft_mul(cx, args[0], weft_const_f64(cx, 2.0));
    return weft_ctx_status(cx);
}

int main(void)
{
    weft_runtime *rt;
    int err = weft_runtime_create(NULL, &rt);   /* $WEFT_NUM_THREADS or all CPUs */
    if (err < 0) {
        fprintf(stderr, "%s: %s\n", weft_err_name(err), weft_errmsg());
        return 1;
    }

    static long out[1000];
    weft_parallel_map(rt, 1000, 8, square, out); /* never more than 8 in flight */

    weft_spec sig[1];
    weft_spec_parse("f64[?]", &sig[0]);         /* one trace for every length */
    weft_function_desc d = { .name = "double_it", .body = body,
                             .n_args = 1, .n_outs = 1, .input_signature = sig };
    weft_function *f;
    weft_function_create(rt, &d, &f);

    for (int64_t n = 1; n <= 3; n++) {          /* traces once, then hits */
        weft_tensor *x, *y;
        weft_tensor_create(WEFT_F64, 1, &n, (double[]){1, 2, 3}, &x);
        weft_arg a = weft_arg_tensor(x);
        if (weft_function_call(f, &a, 1, &y, 1) == 0) {
            const double *v = weft_tensor_data(y);
            printf("n=%lld: y[0]=%g\n", (long long)n, v[0]);
            weft_tensor_release(y);
        }
        weft_tensor_release(x);
    }

    weft_function_stats st;
    weft_function_get_stats(f, &st);
    printf("calls=%llu traces=%llu hits=%llu out[999]=%ld\n",
           (unsigned long long)st.calls, (unsigned long long)st.traces,
           (unsigned long long)st.hits, out[999]);
    weft_function_print_signatures(f, stdout);

    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
    return 0;
}
