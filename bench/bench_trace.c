/* Tracing benchmarks:
 *  (a) the seed's fn, `for _ in range(100): i ** 2` thrown away, return x,
 *      on a 1e6-element tensor: traced (the compiled list drops the 100
 *      dead ops) against eager (WEFT_RUN_EAGERLY: every op runs);
 *  (b) a fused chain of 4 elementwise ops, ((x * 2 + 1) * x) - 3 over 1e7
 *      f32, against the same hand-written single C loop (serial, and
 *      OpenMP / TBB with the same thread counts); weft is called from a
 *      task on a worker (exactly `workers` threads compute) and from the
 *      main thread (which joins in: `workers` + 1 threads);
 *  (c) op dispatch cost of a compiled list on tiny tensors: a chain of 100
 *      dependent 2x2 matmuls (no fusion, no folding), ns per op, with the
 *      cost of an empty call subtracted;
 *  (d) eager ops in one long-lived eager context, 1000 calls a repetition,
 *      each result released: an add and a multiply by a weak scalar of
 *      f32[4], softmax (max, subtract, exp, sum, divide) of f32[32,10] and
 *      gelu (tanh's form, nine ops) of f32[4096], against the C loops of
 *      the same softmax and gelu; then 100 000 softmax calls in a row, with
 *      the growth of the process's resident memory over them. */
#include "bench.h"
#include "contenders.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

static weft_runtime *rt;

/* ---- (a) the seed's fn ---- */

static int seed_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *two = weft_const_i64(cx, 2);
    for (int k = 0; k < 100; k++)
        (void)weft_pow(cx, args[0], two);
    outs[0] = args[0];
    return weft_ctx_status(cx);
}

typedef struct call {
    weft_function *f;
    weft_concrete *c;
    weft_arg args[2];
    weft_tensor *targs[2];
    size_t n_args;
    weft_tensor *out;
} call;

static void do_call(void *p)
{
    call *c = p;
    int err = weft_function_call(c->f, c->args, c->n_args, &c->out, 1);
    if (err)
        bench_die("weft_function_call", err);
    bench_sink += (uint64_t)weft_tensor_numel(c->out);
    weft_tensor_release(c->out);
    c->out = NULL;
}

/* do_call from a task on a worker, so that exactly `workers` threads
 * compute (called from this outside thread, the caller joins in). */
static void do_call_task(void *p)
{
    do_call(p);
}

static void do_call_in_worker(void *p)
{
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, do_call_task, p);
    if (weft_group_wait(&g) != 0)
        bench_die("weft_group_wait", WEFT_EINVAL);
}

static weft_function *make_fn(const char *name, weft_body_fn body, size_t n_args, unsigned flags)
{
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.body = body;
    d.n_args = n_args;
    d.n_outs = 1;
    d.flags = flags;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

static void bench_seed(bench_table *t, int w, int i_traced, int i_eager, int reps, int first)
{
    int64_t n = 1000000;
    int64_t *data = malloc((size_t)n * sizeof *data);
    for (int64_t i = 0; i < n; i++)
        data[i] = i + 1;
    weft_tensor *x = NULL;
    int err = weft_tensor_create(WEFT_I64, 1, &n, data, &x);
    if (err)
        bench_die("weft_tensor_create", err);

    call c = { 0 };
    c.n_args = 1;
    c.args[0] = weft_arg_tensor(x);
    c.f = make_fn("seed_traced", seed_body, 1, 0);
    do_call(&c);   /* traces */
    if (first) {
        printf("seed fn, traced: compiled op list (the 100 pow ops should be gone):\n");
        weft_function_print_signatures(c.f, stdout);
        weft_function_print_ops(c.f, 0, stdout);
    }
    t->med[i_traced][w] = bench_time(reps, 1, do_call, &c);
    /* The result must be x itself. */
    err = weft_function_call(c.f, c.args, 1, &c.out, 1);
    if (err)
        bench_die("weft_function_call", err);
    if (weft_tensor_numel(c.out) != n ||
        memcmp(weft_tensor_data(c.out), data, (size_t)n * sizeof *data) != 0)
        bench_fail("seed traced output equals input", 0, 1);
    weft_tensor_release(c.out);
    weft_function_destroy(&c.f);

    c.f = make_fn("seed_eager", seed_body, 1, WEFT_RUN_EAGERLY);
    t->med[i_eager][w] = bench_time(reps < 5 ? reps : 5, 1, do_call, &c);
    weft_function_destroy(&c.f);
    weft_tensor_release(x);
    free(data);
}

/* ---- (b) a fused chain of 4 elementwise ops ---- */

static int fused_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *y = weft_mul(cx, x, bench_f32_scalar(cx, 2.0f));
    y = weft_add(cx, y, bench_f32_scalar(cx, 1.0f));
    y = weft_mul(cx, y, x);
    outs[0] = weft_sub(cx, y, bench_f32_scalar(cx, 3.0f));
    return weft_ctx_status(cx);
}

typedef struct loop {
    float *out;
    const float *x;
    size_t n;
} loop;

static void c_loop(void *p)
{
    loop *l = p;
    for (size_t i = 0; i < l->n; i++)
        l->out[i] = bench_fused4_elem(l->x[i]);
}

static void c_loop_o3(void *p)
{
    loop *l = p;
    cloop_fused4(l->out, l->x, l->n);
}

/* The C loop into a fresh output each time, as a call that returns a new
 * tensor must do. */
static void c_loop_alloc(void *p)
{
    loop *l = p;
    float *out = aligned_alloc(64, l->n * sizeof *out);
    loop m = { out, l->x, l->n };
    c_loop_o3(&m);
    bench_sink += (uint64_t)out[l->n / 2];
    free(out);
}

static void omp_loop(void *p)
{
    loop *l = p;
    omp_fused4(l->out, l->x, l->n);
}

static void tbb_loop(void *p)
{
    loop *l = p;
    tbb_fused4(l->out, l->x, l->n);
}

/* ---- (c) dispatch: 100 dependent 2x2 matmuls ---- */

static int chain_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    for (int k = 0; k < 100; k++)
        x = weft_matmul(cx, x, args[1]);
    outs[0] = x;
    return weft_ctx_status(cx);
}

static int empty_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = args[0];
    return weft_ctx_status(cx);
}

static void do_concrete(void *p)
{
    call *c = p;
    for (int k = 0; k < 100; k++) {
        int err = weft_concrete_call(c->c, c->targs, c->n_args, &c->out, 1);
        if (err)
            bench_die("weft_concrete_call", err);
        bench_sink += (uint64_t)weft_tensor_numel(c->out);
        weft_tensor_release(c->out);
    }
    c->out = NULL;
}

/* ---- (d) eager ops ---- */

enum { EAGER_CALLS = 1000, SM_ROWS = 32, SM_COLS = 10, GELU_N = 4096 };

typedef struct eager_run {
    weft_ctx *cx;
    weft_value *small, *logits, *wide;
    int which;   /* 0 add, 1 times a weak 2.0, 2 softmax, 3 gelu */
} eager_run;

static void do_eager(void *p)
{
    eager_run *e = p;
    for (int i = 0; i < EAGER_CALLS; i++) {
        weft_value *k = NULL, *y;
        switch (e->which) {
        case 0: y = weft_add(e->cx, e->small, e->small); break;
        case 1: y = weft_mul(e->cx, e->small, k = weft_const_f64(e->cx, 2.0)); break;
        case 2: y = weft_softmax(e->cx, e->logits, -1); break;
        default: y = weft_gelu(e->cx, e->wide); break;
        }
        if (!y)
            bench_die("eager op", weft_ctx_status(e->cx));
        bench_sink += (uint64_t)weft_tensor_numel(weft_value_tensor(y));
        weft_value_release(e->cx, y);
        weft_value_release(e->cx, k);
    }
}

typedef struct softmax_loop {
    const float *x;
    float *y;
} softmax_loop;

static void c_softmax(void *p)
{
    softmax_loop *s = p;
    for (int i = 0; i < EAGER_CALLS; i++) {
        for (int r = 0; r < SM_ROWS; r++) {
            const float *x = s->x + r * SM_COLS;
            float *y = s->y + r * SM_COLS, m = x[0], sum = 0;
            for (int c = 1; c < SM_COLS; c++)
                m = x[c] > m ? x[c] : m;
            for (int c = 0; c < SM_COLS; c++)
                sum += y[c] = expf(x[c] - m);
            for (int c = 0; c < SM_COLS; c++)
                y[c] /= sum;
        }
        bench_sink += (uint64_t)(s->y[i % (SM_ROWS * SM_COLS)] * 1000);
    }
}

/* weft_gelu's formula in its order: (x * 0.5) * (tanh((x + x^2 x *
 * 0.044715) * sqrt(2 / pi)) + 1). */
static void c_gelu(void *p)
{
    softmax_loop *s = p;
    for (int i = 0; i < EAGER_CALLS; i++) {
        for (int j = 0; j < GELU_N; j++) {
            float x = s->x[j];
            float t = tanhf((x + x * x * x * 0.044715f) * 0.7978845608f);
            s->y[j] = x * 0.5f * (t + 1.0f);
        }
        bench_sink += (uint64_t)(s->y[i % GELU_N] * 1000);
    }
}

/* The process's resident memory now (Linux's /proc/self/statm), in KiB. */
static long resident_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * 4;
}

static void bench_eager(bench_table *t, int w, const int *rows, int reps)
{
    static float logits[GELU_N];
    for (int i = 0; i < GELU_N; i++)
        logits[i] = (float)(i % 7) * 0.5f - 1.5f;
    eager_run e = { 0 };
    int err = weft_eager_begin(rt, &e.cx);
    if (err)
        bench_die("weft_eager_begin", err);
    weft_tensor *ts = NULL, *tl = NULL, *tw = NULL;
    int64_t d4 = 4, dl[2] = { SM_ROWS, SM_COLS }, dw = GELU_N;
    if (weft_tensor_create(WEFT_F32, 1, &d4, logits, &ts) ||
        weft_tensor_create(WEFT_F32, 2, dl, logits, &tl) ||
        weft_tensor_create(WEFT_F32, 1, &dw, logits, &tw))
        bench_die("weft_tensor_create", WEFT_ENOMEM);
    e.small = weft_eager_value(e.cx, ts);
    e.logits = weft_eager_value(e.cx, tl);
    e.wide = weft_eager_value(e.cx, tw);
    for (e.which = 0; e.which < 4; e.which++)
        t->med[rows[e.which < 3 ? e.which : 4]][w] = bench_time(reps, 1, do_eager, &e);
    /* A long loop: what it costs per call and whether memory stays put. */
    long before = resident_kib();
    e.which = 2;
    double t0 = bench_now();
    for (int k = 0; k < 100; k++)
        do_eager(&e);
    double secs = bench_now() - t0;
    long after = resident_kib();
    printf("(d) %u workers: 100000 eager softmax calls, released: %.0f ns a call, resident "
           "memory grew %ld KiB\n", weft_runtime_workers(rt), secs * 1e9 / 1e5,
           after - before);
    weft_eager_end(&e.cx);
    weft_tensor_release(ts);
    weft_tensor_release(tl);
    weft_tensor_release(tw);
    if (w == 0) {
        static float out[GELU_N];
        softmax_loop s = { logits, out };
        t->med[rows[3]][0] = bench_time(reps, 1, c_softmax, &s);
        t->med[rows[5]][0] = bench_time(reps, 1, c_gelu, &s);
    }
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);

    bench_table ta, tb, tc;
    bench_table_init(&ta, "(a) seed fn (100 dead x ** 2, return x) on i64[1e6]: one call",
                     "us", 1e6, nw, workers);
    int a_traced = bench_table_impl(&ta, "weft traced (cached)", 0, reps);
    int a_eager = bench_table_impl(&ta, "weft eager", 1, reps < 5 ? reps : 5);

    bench_table_init(&tb, "(b) fused ((x*2+1)*x)-3 over f32[1e7]", "ms", 1e3, nw, workers);
    int b_ser = bench_table_impl(&tb, "serial", 1, reps);
    int b_ser3 = bench_table_impl(&tb, "serial -O3 (vectorized)", 1, reps);
    int b_ser_alloc = bench_table_impl(&tb, "serial -O3 + fresh out", 1, reps);
    int b_weft = bench_table_impl(&tb, "weft call, in worker", 0, reps);
    int b_weft_main = bench_table_impl(&tb, "weft call, from main+1", 0, reps);
    int b_omp = bench_table_impl(&tb, "openmp static simd", 1, reps);
    int b_tbb = bench_table_impl(&tb, "tbb auto simd", 1, reps);

    bench_table_init(&tc, "(c) compiled list of 100 dependent matmuls on f32[2,2]: per op, empty call subtracted",
                     "ns/op", 1e9 / 100.0 / 100.0, nw, workers);
    int c_chain = bench_table_impl(&tc, "weft concrete_call", 0, reps);
    int c_raw = bench_table_impl(&tc, "  (incl. call overhead)", 0, reps);
    double empty_call[BENCH_MAX_WORKERS];

    bench_table td;
    bench_table_init(&td, "(d) eager ops in a long-lived context, result released: per call",
                     "ns", 1e9 / EAGER_CALLS, nw, workers);
    int d_rows[6];
    d_rows[0] = bench_table_impl(&td, "weft eager add f32[4]", 0, reps);
    d_rows[1] = bench_table_impl(&td, "weft eager x * 2.0 f32[4]", 0, reps);
    d_rows[2] = bench_table_impl(&td, "weft eager softmax f32[32,10]", 0, reps);
    d_rows[3] = bench_table_impl(&td, "C softmax loop f32[32,10]", 1, reps);
    d_rows[4] = bench_table_impl(&td, "weft eager gelu f32[4096]", 0, reps);
    d_rows[5] = bench_table_impl(&td, "C gelu loop f32[4096]", 1, reps);

    size_t n = 10000000;
    float *xs = aligned_alloc(64, n * sizeof *xs), *ys = aligned_alloc(64, n * sizeof *ys);
    for (size_t i = 0; i < n; i++)
        xs[i] = (float)(i % 1000) * 0.001f;
    loop l = { ys, xs, n };
    tb.med[b_ser][0] = bench_time(reps, 1, c_loop, &l);
    tb.med[b_ser3][0] = bench_time(reps, 1, c_loop_o3, &l);
    tb.med[b_ser_alloc][0] = bench_time(reps, 1, c_loop_alloc, &l);

    for (int w = 0; w < nw; w++) {
        rt = bench_runtime(workers[w]);

        bench_seed(&ta, w, a_traced, a_eager, reps, w == 0);

        /* (b) */
        int64_t dn = (int64_t)n;
        weft_tensor *x = NULL;
        int err = weft_tensor_create(WEFT_F32, 1, &dn, xs, &x);
        if (err)
            bench_die("weft_tensor_create", err);
        call c = { 0 };
        c.n_args = 1;
        c.args[0] = weft_arg_tensor(x);
        c.f = make_fn("fused4", fused_body, 1, 0);
        do_call(&c);
        if (w == 0) {
            printf("fused chain: compiled op list:\n");
            weft_function_print_ops(c.f, 0, stdout);
        }
        tb.med[b_weft][w] = bench_time(reps, 1, do_call_in_worker, &c);
        tb.med[b_weft_main][w] = bench_time(reps, 1, do_call, &c);
        err = weft_function_call(c.f, c.args, 1, &c.out, 1);
        if (err)
            bench_die("weft_function_call", err);
        c_loop(&l);
        const float *got = weft_tensor_data(c.out);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            if (fabsf(got[i] - ys[i]) > 1e-5f * (1.0f + fabsf(ys[i])))
                bad++;
        if (bad)
            bench_fail("fused output elements differing from C", bad, 0);
        weft_tensor_release(c.out);
        weft_function_destroy(&c.f);
        weft_tensor_release(x);

        /* (c) */
        int64_t d2[2] = { 2, 2 };
        float m[4] = { 0.5f, 0.25f, 0.25f, 0.5f }, v[4] = { 1, 2, 3, 4 };
        weft_tensor *tx = NULL, *tw = NULL;
        if (weft_tensor_create(WEFT_F32, 2, d2, v, &tx) || weft_tensor_create(WEFT_F32, 2, d2, m, &tw))
            bench_die("weft_tensor_create", WEFT_ENOMEM);
        weft_spec specs[2];
        weft_spec_parse("f32[2,2]", &specs[0]);
        specs[1] = specs[0];
        c.targs[0] = tx;
        c.targs[1] = tw;
        c.n_args = 1;
        c.f = make_fn("empty", empty_body, 1, 0);
        err = weft_function_get_concrete(c.f, specs, 1, &c.c);
        if (err)
            bench_die("weft_function_get_concrete", err);
        empty_call[w] = bench_time(reps, 1, do_concrete, &c);
        weft_function_destroy(&c.f);
        c.n_args = 2;
        c.f = make_fn("chain", chain_body, 2, 0);
        err = weft_function_get_concrete(c.f, specs, 2, &c.c);
        if (err)
            bench_die("weft_function_get_concrete", err);
        if (w == 0) {
            printf("matmul chain: compiled op list has this many lines:\n");
            weft_function_print_signatures(c.f, stdout);
        }
        double t = bench_time(reps, 1, do_concrete, &c);
        tc.med[c_raw][w] = t;
        tc.med[c_chain][w] = t - empty_call[w];
        weft_function_destroy(&c.f);
        weft_tensor_release(tx);
        weft_tensor_release(tw);

        bench_eager(&td, w, d_rows, reps);

        weft_runtime_destroy(&rt);
        bench_settle(50);

        omp_begin(workers[w]);
        tb.med[b_omp][w] = bench_time(reps, 1, omp_loop, &l);
        bench_settle(50);
        tbb_begin(workers[w]);
        tb.med[b_tbb][w] = bench_time(reps, 1, tbb_loop, &l);
        tbb_end();
        bench_settle(50);
    }
    bench_table_print(&ta);
    for (int w = 0; w < nw; w++)
        printf("summary (a): %u workers: eager / traced = %.1fx\n", workers[w],
               ta.med[a_eager][w] / ta.med[a_traced][w]);
    bench_table_print(&tb);
    printf("summary (b): weft %u worker(s) vs C loop: %.2fx of C -O2 speed, %.2fx of C -O3 speed, "
           "%.2fx of C -O3 into a fresh output (target >= 0.8x)\n",
           workers[0], tb.med[b_ser][0] / tb.med[b_weft][0], tb.med[b_ser3][0] / tb.med[b_weft][0],
           tb.med[b_ser_alloc][0] / tb.med[b_weft][0]);
    for (int w = 1; w < nw; w++)
        printf("summary (b): weft speedup %u vs %u workers = %.2fx (target >= 1.8x for 2)\n",
               workers[w], workers[0], tb.med[b_weft][0] / tb.med[b_weft][w]);
    bench_table_print(&tc);
    for (int w = 0; w < nw; w++)
        printf("summary (c): %u workers: empty concrete_call %.0f ns; %.1f ns per matmul op (target < 50)\n",
               workers[w], empty_call[w] * 1e9 / 100, tc.med[c_chain][w] * 1e9 / 1e4);
    bench_table_print(&td);
    for (int w = 0; w < nw; w++)
        printf("summary (d): %u workers: eager add %.0f ns, x * 2.0 %.0f ns, softmax %.0f ns "
               "(%.2fx the C loop), gelu %.0f ns (%.2fx the C loop)\n", workers[w],
               td.med[d_rows[0]][w] * 1e9 / EAGER_CALLS, td.med[d_rows[1]][w] * 1e9 / EAGER_CALLS,
               td.med[d_rows[2]][w] * 1e9 / EAGER_CALLS, td.med[d_rows[2]][w] / td.med[d_rows[3]][0],
               td.med[d_rows[4]][w] * 1e9 / EAGER_CALLS, td.med[d_rows[4]][w] / td.med[d_rows[5]][0]);
    free(xs);
    free(ys);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
