/* Ten host calls that each sleep 100 ms, mapped with parallel_iterations
 * 1 and 10, eagerly and traced: the C version of this TensorFlow timing,
 *
 *   def op(x):
 *       time.sleep(0.1)
 *       return 2 * x.numpy()
 *
 *   @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.int32)])
 *   def op_tf(x):
 *       return tf.py_function(op, [x], Tout=tf.int32)
 *
 *   %timeit tf.map_fn(op_tf, x, parallel_iterations=1)    1.02 s
 *   %timeit tf.map_fn(op_tf, x, parallel_iterations=10)   1.03 s
 *
 * TensorFlow ran the ten sleeps one after the other whatever
 * parallel_iterations said.  weft runs at most parallel_iterations host
 * calls at once, so 10 gives ~100 ms instead of ~1000 ms, provided there are
 * threads to block: a sleeping callback holds its worker, so the runtime is
 * created with 10 workers (TensorFlow's inter_op threads play that part).
 *
 * Usage: sleep_map [--profile PATH.json]
 *   With --profile, each of the four timed runs writes its own timeline:
 *   PATH.json names PATH-eager-pi1.json, PATH-eager-pi10.json,
 *   PATH-traced-pi1.json and PATH-traced-pi10.json (Chrome trace-event
 *   JSON: open it in Perfetto, or render it with tools/weft-timeline-svg). */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, nanosleep under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft.h>

#define N_ELEMS 10
#define SLEEP_MS 100

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* op(x): sleeps 100 ms (holding its worker, as a blocking call does) and
 * returns 2 * x.  Counts its calls, to show that every execution runs it. */
static int op(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    __atomic_fetch_add((long *)user, 1, __ATOMIC_SEQ_CST);
    struct timespec ts = { 0, SLEEP_MS * 1000L * 1000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
    int32_t y = 2 * *(const int32_t *)weft_tensor_data(in[0]);
    return weft_tensor_create(WEFT_I32, 0, NULL, &y, out);
}

/* op_tf(x) = py_function(op, [x], Tout=int32), with an i32[] signature. */
static int op_tf(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_spec i32;
    weft_spec_parse("i32[]", &i32);
    outs[0] = weft_host_call(cx, op, user, args, 1, &i32, 0);
    return weft_ctx_status(cx);
}

/* my_map(x, parallel_iterations) = map_fn(op_tf, x, parallel_iterations).
 * parallel_iterations is a static argument: each value traces once. */
static int my_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    int64_t pi = 0;
    if (weft_value_static_i64(args[1], &pi) != 0 || pi < 0)
        return WEFT_EINVAL;
    outs[0] = weft_map(cx, (weft_function *)user, args[0], (unsigned)pi);
    return weft_ctx_status(cx);
}

typedef struct setup {
    weft_runtime *rt;
    weft_function *op_tf, *my_map;
    weft_tensor *x;
    const char *profile;  /* NULL: no timelines */
} setup;

/* Runs one configuration; returns its output tensor (new reference). */
static int run_once(setup *s, int traced, unsigned pi, weft_tensor **out)
{
    if (traced) {
        weft_arg a[2] = { weft_arg_tensor(s->x), weft_arg_i64(pi) };
        return weft_function_call(s->my_map, a, 2, out, 1);
    }
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(s->rt, &cx);
    if (rc)
        return rc;
    weft_value *y = weft_map(cx, s->op_tf, weft_eager_value(cx, s->x), pi);
    rc = weft_ctx_status(cx);
    if (rc == 0)
        *out = weft_tensor_retain(weft_value_tensor(y));
    weft_eager_end(&cx);
    return rc;
}

/* PATH.json -> PATH-<mode>-pi<pi>.json */
static void profile_path(const char *base, const char *mode, unsigned pi, char *buf, size_t size)
{
    size_t len = strlen(base);
    if (len >= 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    snprintf(buf, size, "%.*s-%s-pi%u.json", (int)len, base, mode, pi);
}

/* Warms up (the traced mode traces here, so the timing shows execution
 * only), then times one run, profiled if asked.  Checks the result. */
static int timed(setup *s, int traced, unsigned pi, long *calls, double *ms)
{
    const char *mode = traced ? "traced" : "eager";
    weft_tensor *y = NULL;
    int rc = run_once(s, traced, pi, &y);
    weft_tensor_release(y);
    y = NULL;
    if (rc)
        goto error;
    char path[4096];
    if (s->profile) {
        profile_path(s->profile, mode, pi, path, sizeof path);
        if ((rc = weft_profile_begin(s->rt, path)))
            goto error;
    }
    long calls0 = __atomic_load_n(calls, __ATOMIC_SEQ_CST);
    double t0 = now_ms();
    rc = run_once(s, traced, pi, &y);
    *ms = now_ms() - t0;
    long ran = __atomic_load_n(calls, __ATOMIC_SEQ_CST) - calls0;
    if (s->profile) {
        int rc2 = weft_profile_end(s->rt);
        if (rc == 0 && rc2 == 0)
            printf("  (timeline of %s pi=%u written to %s)\n", mode, pi, path);
        if (rc == 0)
            rc = rc2;
    }
    if (rc)
        goto error;
    const int32_t *v = weft_tensor_data(y);
    for (int i = 0; i < N_ELEMS; i++)
        if (v[i] != 2 * (i + 1)) {
            fprintf(stderr, "sleep_map: %s pi=%u: y[%d] = %d, expected %d\n", mode, pi, i,
                    v[i], 2 * (i + 1));
            weft_tensor_release(y);
            return 1;
        }
    if (ran != N_ELEMS) {
        fprintf(stderr, "sleep_map: %s pi=%u: %ld host calls, expected %d\n", mode, pi, ran,
                N_ELEMS);
        weft_tensor_release(y);
        return 1;
    }
    weft_tensor_release(y);
    return 0;
error:
    fprintf(stderr, "sleep_map: %s pi=%u: %s: %s\n", mode, pi, weft_err_name(rc), weft_errmsg());
    weft_tensor_release(y);
    return 1;
}

int main(int argc, char **argv)
{
    setup s = { 0 };
    if (argc == 3 && strcmp(argv[1], "--profile") == 0) {
        s.profile = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: sleep_map [--profile PATH.json]\n");
        return 2;
    }
    int status = 1, rc;
    long calls = 0;  /* (atomic) */
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 10;  /* a blocked callback holds a thread: give ten */
    if ((rc = weft_runtime_create(&cfg, &s.rt)))
        goto error;
    weft_spec sig;
    weft_spec_parse("i32[]", &sig);
    weft_function_desc d = { .name = "op_tf", .body = op_tf, .user = &calls, .n_args = 1,
                             .n_outs = 1, .input_signature = &sig };
    if ((rc = weft_function_create(s.rt, &d, &s.op_tf)))
        goto error;
    weft_function_desc dm = { .name = "my_map", .body = my_map, .user = s.op_tf,
                              .n_args = 2, .n_outs = 1 };
    if ((rc = weft_function_create(s.rt, &dm, &s.my_map)))
        goto error;
    int32_t xs[N_ELEMS];
    for (int i = 0; i < N_ELEMS; i++)
        xs[i] = i + 1;
    if ((rc = weft_tensor_create(WEFT_I32, 1, (int64_t[]){ N_ELEMS }, xs, &s.x)))
        goto error;

    printf("map_fn(op_tf, x, parallel_iterations) over %d elements, each a %d ms host call,\n"
           "on %u workers (one timed run after a warm-up run)\n", N_ELEMS, SLEEP_MS,
           weft_runtime_workers(s.rt));
    unsigned pis[2] = { 1, 10 };
    double ms[2][2];
    for (int traced = 0; traced < 2; traced++)
        for (int p = 0; p < 2; p++)
            if (timed(&s, traced, pis[p], &calls, &ms[traced][p]))
                goto out;

    printf("\n%-22s %12s %12s\n", "", "pi=1", "pi=10");
    printf("%-22s %10.0f ms %10.0f ms\n", "weft eager map", ms[0][0], ms[0][1]);
    printf("%-22s %10.0f ms %10.0f ms\n", "weft traced my_map", ms[1][0], ms[1][1]);
    printf("%-22s %10.0f ms %10.0f ms\n", "TensorFlow 2.3 (seed)", 1020.0, 1030.0);
    printf("\nhost calls: %ld (every execution runs op: 4 configurations x 2 runs x %d)\n",
           __atomic_load_n(&calls, __ATOMIC_SEQ_CST), N_ELEMS);
    printf("traces: op_tf %llu (its input signature), my_map %llu (one per static pi)\n",
           (unsigned long long)weft_function_tracing_count(s.op_tf),
           (unsigned long long)weft_function_tracing_count(s.my_map));
    weft_function_print_signatures(s.my_map, stdout);
    status = 0;
    goto out;

error:
    fprintf(stderr, "sleep_map: %s: %s\n", weft_err_name(rc), weft_errmsg());
out:
    weft_tensor_release(s.x);
    weft_function_destroy(&s.my_map);
    weft_function_destroy(&s.op_tf);
    weft_runtime_destroy(&s.rt);
    return status;
}
