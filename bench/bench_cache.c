/* Trace cache benchmarks: the cost of a cache hit.
 *  - weft_function_call (hash the signature, find the concrete function)
 *    against weft_concrete_call (no hashing) of the same function, for 1, 4
 *    and 16 tensor arguments; the body returns its first argument, so that
 *    nearly all of the time is call overhead;
 *  - T threads calling one function at once (hits take no lock), each with
 *    its own argument tensors: ns per call per thread, and the throughput
 *    scaling over one thread (ideal: T). */
#include "bench.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define CALLS 1000

static weft_runtime *rt;

static int first_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = args[0];
    return weft_ctx_status(cx);
}

typedef struct call {
    weft_function *f;
    weft_concrete *c;
    weft_arg args[16];
    weft_tensor *targs[16];
    size_t n;
} call;

static void fn_calls(void *p)
{
    call *c = p;
    for (int k = 0; k < CALLS; k++) {
        weft_tensor *out;
        int err = weft_function_call(c->f, c->args, c->n, &out, 1);
        if (err)
            bench_die("weft_function_call", err);
        bench_sink += (uint64_t)weft_tensor_numel(out);
        weft_tensor_release(out);
    }
}

static void concrete_calls(void *p)
{
    call *c = p;
    for (int k = 0; k < CALLS; k++) {
        weft_tensor *out;
        int err = weft_concrete_call(c->c, c->targs, c->n, &out, 1);
        if (err)
            bench_die("weft_concrete_call", err);
        bench_sink += (uint64_t)weft_tensor_numel(out);
        weft_tensor_release(out);
    }
}

static weft_function *make_fn(size_t n_args)
{
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = "first";
    d.body = first_body;
    d.n_args = n_args;
    d.n_outs = 1;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

typedef struct hitter {
    pthread_t th;
    call *c;
    int calls;
    pthread_barrier_t *start;
    double secs;
} hitter;

/* Each thread passes its own tensors (same signature), so that what the
 * threads share is the function and its cache, not a tensor's refcount. */
static void *hit_loop(void *p)
{
    hitter *h = p;
    weft_arg args[16];
    weft_tensor *own[16];
    for (size_t k = 0; k < h->c->n; k++) {
        const weft_tensor *t = h->c->targs[k];
        int err = weft_tensor_create(weft_tensor_dtype(t), weft_tensor_rank(t),
                                     weft_tensor_dims(t), weft_tensor_data(t), &own[k]);
        if (err)
            bench_die("weft_tensor_create", err);
        args[k] = weft_arg_tensor(own[k]);
    }
    pthread_barrier_wait(h->start);
    double t0 = bench_now();
    for (int k = 0; k < h->calls; k++) {
        weft_tensor *out;
        int err = weft_function_call(h->c->f, args, h->c->n, &out, 1);
        if (err)
            bench_die("weft_function_call", err);
        weft_tensor_release(out);
    }
    h->secs = bench_now() - t0;
    for (size_t k = 0; k < h->c->n; k++)
        weft_tensor_release(own[k]);
    return NULL;
}

/* Wall time for `threads` threads each making `calls` hits at once. */
static double hit_together(call *c, unsigned threads, int calls)
{
    hitter h[BENCH_MAX_WORKERS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, threads + 1);
    for (unsigned k = 0; k < threads; k++) {
        h[k].c = c;
        h[k].calls = calls;
        h[k].start = &start;
        pthread_create(&h[k].th, NULL, hit_loop, &h[k]);
    }
    pthread_barrier_wait(&start);
    double t = 0;
    for (unsigned k = 0; k < threads; k++) {
        pthread_join(h[k].th, NULL);
        if (h[k].secs > t)
            t = h[k].secs;   /* the slowest thread's loop */
    }
    pthread_barrier_destroy(&start);
    return t;
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    static const size_t arity[] = { 1, 4, 16 };

    bench_table t;
    bench_table_init(&t, "cache hit: one call returning its first f32[4] argument", "ns/call",
                     1e9 / CALLS, nw, workers);
    int i_fn[3], i_cc[3];
    char names[6][40];
    for (int a = 0; a < 3; a++) {
        snprintf(names[2 * a], sizeof names[0], "function_call, %zu args", arity[a]);
        snprintf(names[2 * a + 1], sizeof names[0], "concrete_call, %zu args", arity[a]);
        i_fn[a] = bench_table_impl(&t, names[2 * a], 0, reps);
        i_cc[a] = bench_table_impl(&t, names[2 * a + 1], 0, reps);
    }

    int64_t four = 4;
    float v[4] = { 1, 2, 3, 4 };
    weft_tensor *ts[16];
    for (int k = 0; k < 16; k++)
        if (weft_tensor_create(WEFT_F32, 1, &four, v, &ts[k]) != 0)
            bench_die("weft_tensor_create", WEFT_ENOMEM);
    weft_spec specs[16];
    for (int k = 0; k < 16; k++)
        weft_spec_parse("f32[4]", &specs[k]);

    double scale[BENCH_MAX_WORKERS];
    for (int w = 0; w < nw; w++) {
        rt = bench_runtime(workers[w]);
        for (int a = 0; a < 3; a++) {
            call c;
            memset(&c, 0, sizeof c);
            c.n = arity[a];
            for (size_t k = 0; k < c.n; k++) {
                c.args[k] = weft_arg_tensor(ts[k]);
                c.targs[k] = ts[k];
            }
            c.f = make_fn(c.n);
            int err = weft_function_get_concrete(c.f, specs, c.n, &c.c);
            if (err)
                bench_die("weft_function_get_concrete", err);
            t.med[i_fn[a]][w] = bench_time(reps, 1, fn_calls, &c);
            t.med[i_cc[a]][w] = bench_time(reps, 1, concrete_calls, &c);
            weft_function_stats st;
            weft_function_get_stats(c.f, &st);
            if (st.traces != 1)
                bench_fail("traces of the hit benchmark", st.traces, 1);
            if (a == 0) {
                /* T threads hitting at once, T = this worker count. */
                int calls = 200000;
                double v1[BENCH_MAX_REPS], vt[BENCH_MAX_REPS];
                int r5 = reps < 5 ? reps : 5;
                for (int r = 0; r < r5; r++) {
                    v1[r] = hit_together(&c, 1, calls);
                    vt[r] = hit_together(&c, workers[w], calls);
                }
                double t1 = bench_median(v1, r5), tt = bench_median(vt, r5);
                scale[w] = (double)workers[w] * t1 / tt;
                printf("hits at once: %u thread(s) x %d calls: %.1f ns/call per thread "
                       "(1 thread alone: %.1f), throughput scaling %.2fx of ideal %ux\n",
                       workers[w], calls, 1e9 * tt / calls, 1e9 * t1 / calls, scale[w], workers[w]);
            }
            weft_function_destroy(&c.f);
        }
        weft_runtime_destroy(&rt);
    }
    bench_table_print(&t);
    for (int w = 0; w < nw; w++)
        for (int a = 0; a < 3; a++)
            printf("summary: %u workers, %2zu args: function_call overhead over concrete_call = %.1f ns\n",
                   workers[w], arity[a], (t.med[i_fn[a]][w] - t.med[i_cc[a]][w]) * 1e9 / CALLS);
    for (int k = 0; k < 16; k++)
        weft_tensor_release(ts[k]);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
