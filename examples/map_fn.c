/* tf.map_fn(fn, stuff, parallel_iterations=8) over stuff = 1..n, in C,
 * eagerly and traced, where fn is this Python function:
 *
 *   def fn(i):
 *       for _ in range(100):
 *           i ** 2          # junk work whose result is thrown away
 *       return i
 *
 * Eagerly, every iteration runs the body and so the 100 squarings.  Traced,
 * fn is traced once for the slice spec (i64[]) and the compiler removes the
 * 100 dead squarings; the op counts before and after compilation are
 * printed by weft_function_print_signatures ("ops=101->0" style).  In both
 * modes at most parallel_iterations iterations are in flight and the
 * workers steal them: unlike TensorFlow's eager map_fn, eager mode is
 * parallel too.
 *
 * Usage: map_fn [n] [parallel_iterations] (defaults 1000 and 8). */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, nanosleep under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <weft.h>

#define SQUARINGS 100

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* fn(i): 100 squarings whose results are unused, then i. */
static int fn_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    for (int k = 0; k < SQUARINGS; k++)
        (void)weft_mul(cx, x, x);
    outs[0] = x;
    return weft_ctx_status(cx);
}

typedef struct map_args {
    weft_function *fn;
    unsigned parallel_iterations;
} map_args;

/* my_map(stuff) = tf.reduce_sum(tf.map_fn(fn, stuff, parallel_iterations)),
 * the body of the traced mode. */
static int my_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const map_args *m = user;
    weft_value *res = weft_map(cx, m->fn, args[0], m->parallel_iterations);
    outs[0] = weft_sum(cx, res, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "map_fn: %s: %s: %s\n", what, weft_err_name(rc), weft_errmsg());
    return rc ? rc : WEFT_EINVAL;
}

/* Eager mode: ops run at once in an eager context; fn (created with
 * WEFT_RUN_EAGERLY) runs its body, 100 squarings included, per iteration. */
static int run_eager(weft_runtime *rt, weft_function *fn, weft_tensor *stuff, unsigned pi,
                     int64_t *sum)
{
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(rt, &cx);
    if (rc)
        return fail("weft_eager_begin", rc);
    weft_value *res = weft_map(cx, fn, weft_eager_value(cx, stuff), pi);
    weft_value *total = weft_sum(cx, res, WEFT_ALL_AXES);
    rc = weft_ctx_status(cx);
    if (rc == 0)
        *sum = *(const int64_t *)weft_tensor_data(weft_value_tensor(total));
    else
        fail("eager map", rc);
    weft_eager_end(&cx);
    return rc;
}

/* Traced mode: my_map is traced once (with fn inside it), then runs as a
 * compiled op list. */
static int run_traced(weft_function *my, weft_tensor *stuff, int64_t *sum)
{
    weft_arg a = weft_arg_tensor(stuff);
    weft_tensor *total = NULL;
    int rc = weft_function_call(my, &a, 1, &total, 1);
    if (rc)
        return fail("traced map", rc);
    *sum = *(const int64_t *)weft_tensor_data(total);
    weft_tensor_release(total);
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    long pi = argc > 2 ? strtol(argv[2], NULL, 10) : 8;
    if (n < 1 || n > 10000000 || pi < 0 || pi > 1000000) {
        fprintf(stderr, "usage: map_fn [n in 1..1e7] [parallel_iterations >= 0]\n");
        return 2;
    }
    weft_runtime *rt = NULL;
    weft_function *fn_eager = NULL, *fn = NULL, *my = NULL;
    weft_tensor *stuff = NULL;
    int64_t *data = NULL;
    int status = 1, rc;

    if ((rc = weft_runtime_create(NULL, &rt))) {
        fail("weft_runtime_create", rc);
        goto out;
    }
    /* stuff = np.arange(1, n + 1) */
    data = malloc((size_t)n * sizeof *data);
    if (!data)
        goto out;
    for (long i = 0; i < n; i++)
        data[i] = i + 1;
    if ((rc = weft_tensor_create(WEFT_I64, 1, (int64_t[]){ n }, data, &stuff))) {
        fail("weft_tensor_create", rc);
        goto out;
    }

    weft_function_desc d = { .name = "fn", .body = fn_body, .n_args = 1, .n_outs = 1,
                             .flags = WEFT_RUN_EAGERLY };
    if ((rc = weft_function_create(rt, &d, &fn_eager))) {
        fail("weft_function_create", rc);
        goto out;
    }
    d.flags = 0;
    if ((rc = weft_function_create(rt, &d, &fn))) {
        fail("weft_function_create", rc);
        goto out;
    }
    map_args m = { fn, (unsigned)pi };
    weft_spec sig;
    weft_spec_parse("i64[?]", &sig);
    weft_function_desc dm = { .name = "my_map", .body = my_map, .user = &m, .n_args = 1,
                              .n_outs = 1, .input_signature = &sig };
    if ((rc = weft_function_create(rt, &dm, &my))) {
        fail("weft_function_create", rc);
        goto out;
    }

    const int64_t expect = (int64_t)n * (n + 1) / 2;
    printf("map_fn over 1..%ld, parallel_iterations=%ld, %u workers\n", n, pi,
           weft_runtime_workers(rt));
    int64_t sum = 0;
    double t0, t1;
    /* Eager mode honours parallel_iterations too: 1 runs one iteration at
     * a time, for comparison with the parallel run. */
    unsigned eager_pis[2] = { (unsigned)pi, 1 };
    for (int k = 0; k < 2; k++) {
        t0 = now_ms();
        if (run_eager(rt, fn_eager, stuff, eager_pis[k], &sum))
            goto out;
        t1 = now_ms();
        printf("%lld\n(eager=True, parallel_iterations=%u) Took %.1fms\n", (long long)sum,
               eager_pis[k], t1 - t0);
        if (sum != expect)
            goto wrong;
    }

    /* The first traced call traces my_map and fn; the second only runs. */
    for (int call = 1; call <= 2; call++) {
        t0 = now_ms();
        if (run_traced(my, stuff, &sum))
            goto out;
        t1 = now_ms();
        printf("%lld\n(eager=False, parallel_iterations=%ld, %s) Took %.1fms\n",
               (long long)sum, pi, call == 1 ? "first call: traces" : "second call", t1 - t0);
        if (sum != expect)
            goto wrong;
    }

    /* The eager fn is traced once too, only to learn its output spec; its
     * body still runs on every iteration. */
    printf("traces: fn %llu, my_map %llu, eager fn %llu (for its output spec)\n",
           (unsigned long long)weft_function_tracing_count(fn),
           (unsigned long long)weft_function_tracing_count(my),
           (unsigned long long)weft_function_tracing_count(fn_eager));
    printf("fn's concrete functions (ops traced->compiled: the %d squarings are dead):\n",
           SQUARINGS);
    weft_function_print_signatures(fn, stdout);
    printf("my_map's concrete functions:\n");
    weft_function_print_signatures(my, stdout);
    printf("my_map's compiled op list:\n");
    weft_function_print_ops(my, 0, stdout);
    status = 0;
    goto out;

wrong:
    fprintf(stderr, "map_fn: wrong sum %lld, expected %lld\n", (long long)sum, (long long)expect);
out:
    weft_function_destroy(&my);
    weft_function_destroy(&fn);
    weft_function_destroy(&fn_eager);
    weft_tensor_release(stuff);
    free(data);
    weft_runtime_destroy(&rt);
    return status;
}
