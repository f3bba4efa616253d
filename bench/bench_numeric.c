/* The numeric suite: traced weft functions against the same computation
 * written as a plain C loop at -O3 (numeric_cloop.c), one workload at a
 * time, on each worker count:
 *
 *   normalize  each row of f32[1e6,8]: (x - mean) / sqrt(var + 1e-5)
 *   chain      sqrt(abs(1.5x - 2)) * x + exp(-x * x) over f32[4e6]
 *   softmax    each row of f32[1e5,64]
 *   colsum     column sums of f64[2e4,256]
 *   matmul     f32 256x256 (the C loop is the naive i-k-j loop)
 *   fused4     ((x * 2 + 1) * x) - 3 over f32[1e7]
 *   hsv        weft_rgb_to_hsv of f32[1e6,3] (a composition of about 30
 *              elementwise ops on the split channels, joined by concat)
 *              against TensorFlow's per-pixel helper as a C loop
 *
 * Every workload is a weft_function with an input_signature, called with
 * weft_function_call from the program's main thread, as a user would: the
 * caller runs the ops, and a kernel cuts its work into at most `workers`
 * chunks (so with one worker exactly one thread computes; the C loop is
 * one thread).  Two measurements, each a median
 * over repetitions of the ratio weft time / C time, the two timed back to
 * back in the same repetition:
 *   first call   a fresh function's first call: tracing, compiling and the
 *                first run (on the interpreter, tier 0);
 *   tier 0       a call of a function already traced, after a warm-up, on
 *                the interpreter (WEFT_FUNCTION_NO_JIT);
 *   steady       the same once the function's fused groups run native code
 *                (tier 1; the interpreter where a group was not compiled
 *                or in a build without LLVM);
 * and "build ms", the tracing and compiling part of a first call (the
 * function's trace_ns + compile_ns), "jit ms", the background compile of
 * its native code (native_compile_ns; the median over as many fresh
 * functions as repetitions, each compiled while nothing else runs), and
 * "native", its native groups;
 * the compiler's one-time start in the process (native_start_ns) is
 * printed apart, under the table.
 * Last, the peer: "omp ms" and "omp/C", the same C loops with their outer
 * loop shared among as many OpenMP threads as weft has workers
 * (numeric_omp.c), against the one-thread C loop, timed back to back like
 * the others: what plain code reaches on that many threads at all (a
 * memory-bound workload cannot go below what the memory allows).
 * Targets (docs/BENCHMARKS.md, "numeric suite"): steady <= 1.0x on one
 * worker and <= 0.6x on two; tier 0 <= 2x on one worker; a compile
 * < 30 ms.  BENCH_NUMERIC_ONLY="normalize softmax" runs a
 * subset; BENCH_REPS sets the repetitions (default 11);
 * BENCH_NUMERIC_SCALE=10 divides every workload's rows by 10 (matmul
 * excepted), for instruction counts under callgrind, where the timed
 * steady calls are the functions steady_call and steady_cloop, each run
 * BENCH_REPS times (one workload at a time):
 *
 *   BENCH_NUMERIC_ONLY=normalize BENCH_NUMERIC_SCALE=10 BENCH_REPS=3 \
 *       valgrind --tool=callgrind --toggle-collect=steady_call \
 *       --toggle-collect=steady_cloop build/bench/bench/bench_numeric 1
 *   callgrind_annotate --inclusive=yes callgrind.out.<pid> */
#include "bench.h"
#include "numeric_cloop.h"

#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft.h>

static weft_runtime *rt;

/* ---- The bodies, as a user writes them ---- */

static const int axis1[1] = { 1 };

static int normalize_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, x, axis1, 1, true);
    weft_value *d = weft_sub(cx, x, mean);
    weft_value *var = weft_reduce(cx, WEFT_R_MEAN, weft_mul(cx, d, d), axis1, 1, true);
    outs[0] = weft_div(cx, d, weft_sqrt(cx, weft_add(cx, var, bench_f32_scalar(cx, 1e-5f))));
    return weft_ctx_status(cx);
}

static int chain_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *lin = weft_sub(cx, weft_mul(cx, x, bench_f32_scalar(cx, 1.5f)),
                               bench_f32_scalar(cx, 2.0f));
    weft_value *a = weft_sqrt(cx, weft_abs(cx, lin));
    weft_value *b = weft_exp(cx, weft_neg(cx, weft_mul(cx, x, x)));
    outs[0] = weft_add(cx, weft_mul(cx, a, x), b);
    return weft_ctx_status(cx);
}

static int softmax_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *m = weft_reduce(cx, WEFT_R_MAX, x, axis1, 1, true);
    weft_value *e = weft_exp(cx, weft_sub(cx, x, m));
    outs[0] = weft_div(cx, e, weft_reduce(cx, WEFT_R_SUM, e, axis1, 1, true));
    return weft_ctx_status(cx);
}

static int colsum_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, args[0], 0);
    return weft_ctx_status(cx);
}

static int matmul_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matmul(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

static int fused4_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *y = weft_add(cx, weft_mul(cx, x, bench_f32_scalar(cx, 2.0f)),
                             bench_f32_scalar(cx, 1.0f));
    outs[0] = weft_sub(cx, weft_mul(cx, y, x), bench_f32_scalar(cx, 3.0f));
    return weft_ctx_status(cx);
}

static int hsv_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_rgb_to_hsv(cx, args[0]);
    return weft_ctx_status(cx);
}

/* ---- Workloads ---- */

typedef struct workload {
    const char *name, *title;
    weft_body_fn body;
    const char *sig[2];           /* filled in by setup from rows and cols */
    char sig_buf[64];
    size_t n_args;
    int64_t rows, cols;           /* of the first argument (cols 0: 1-D) */
    weft_dtype dt;
    double tol;                   /* relative tolerance against the C loop */
    /* Filled in by setup. */
    void *in[2];
    void *c_out;
    size_t out_numel;
    weft_tensor *targs[2];
    weft_arg args[2];
    weft_function *f;
    weft_tensor *out;
} workload;

static workload workloads[] = {
    { .name = "normalize", .title = "normalize rows of f32[1e6,8]", .body = normalize_body,
      .n_args = 1, .rows = 1000000, .cols = 8, .dt = WEFT_F32,
      .tol = 1e-4 },
    { .name = "chain", .title = "sqrt(abs(1.5x-2))*x + exp(-x*x), f32[4e6]", .body = chain_body,
      .n_args = 1, .rows = 4000000, .cols = 0, .dt = WEFT_F32,
      .tol = 1e-5 },
    { .name = "softmax", .title = "row softmax of f32[1e5,64]", .body = softmax_body,
      .n_args = 1, .rows = 100000, .cols = 64, .dt = WEFT_F32,
      .tol = 1e-5 },
    { .name = "colsum", .title = "column sums of f64[2e4,256]", .body = colsum_body,
      .n_args = 1, .rows = 20000, .cols = 256, .dt = WEFT_F64,
      .tol = 1e-12 },
    { .name = "matmul", .title = "matmul f32 256x256", .body = matmul_body,
      .n_args = 2, .rows = 256, .cols = 256,
      .dt = WEFT_F32, .tol = 1e-4 },
    { .name = "fused4", .title = "((x*2+1)*x)-3, f32[1e7]", .body = fused4_body,
      .n_args = 1, .rows = 10000000, .cols = 0, .dt = WEFT_F32,
      .tol = 1e-6 },
    { .name = "hsv", .title = "rgb_to_hsv of f32[1e6,3]", .body = hsv_body,
      .n_args = 1, .rows = 1000000, .cols = 3, .dt = WEFT_F32,
      .tol = 1e-5 },
};
#define N_WORK (sizeof workloads / sizeof workloads[0])

/* The plain C loops of one implementation: serial, or OpenMP's. */
typedef struct c_impl {
    void (*normalize)(float *, const float *, size_t, size_t, float);
    void (*chain)(float *, const float *, size_t);
    void (*softmax)(float *, const float *, size_t, size_t);
    void (*colsum)(double *, const double *, size_t, size_t);
    void (*matmul)(float *, const float *, const float *, size_t);
    void (*fused4)(float *, const float *, size_t);
    void (*hsv)(float *, const float *, size_t);
} c_impl;

static const c_impl serial_c = { cloop_normalize, cloop_chain, cloop_softmax, cloop_colsum,
                                 cloop_matmul, cloop_fused4_numeric, cloop_rgb_to_hsv };
/* The peer: on the threads of the last omp_numeric_threads. */
static const c_impl omp_c = { omp_normalize, omp_chain, omp_softmax, omp_colsum, omp_matmul,
                              omp_fused4_numeric, omp_rgb_to_hsv };

static void run_c(const c_impl *im, const workload *w)
{
    size_t r = (size_t)w->rows, c = (size_t)w->cols;
    if (strcmp(w->name, "normalize") == 0)
        im->normalize(w->c_out, w->in[0], r, c, 1e-5f);
    else if (strcmp(w->name, "chain") == 0)
        im->chain(w->c_out, w->in[0], r);
    else if (strcmp(w->name, "softmax") == 0)
        im->softmax(w->c_out, w->in[0], r, c);
    else if (strcmp(w->name, "colsum") == 0)
        im->colsum(w->c_out, w->in[0], r, c);
    else if (strcmp(w->name, "matmul") == 0)
        im->matmul(w->c_out, w->in[0], w->in[1], r);
    else if (strcmp(w->name, "hsv") == 0)
        im->hsv(w->c_out, w->in[0], r);
    else
        im->fused4(w->c_out, w->in[0], r);
}

static void run_omp(const workload *w)
{
    run_c(&omp_c, w);
}

static void run_cloop(const workload *w)
{
    run_c(&serial_c, w);
}

/* Deterministic inputs in [-2, 2), varied along both dims. */
static void fill(void *p, weft_dtype dt, size_t n, unsigned seed)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) * (4.0 / 9007199254740992.0) - 2.0;
        if (dt == WEFT_F32)
            ((float *)p)[i] = (float)v;
        else
            ((double *)p)[i] = v;
    }
}

static void setup(workload *w)
{
    const char *dt = w->dt == WEFT_F32 ? "f32" : "f64";
    if (w->cols)
        snprintf(w->sig_buf, sizeof w->sig_buf, "%s[%lld,%lld]", dt, (long long)w->rows,
                 (long long)w->cols);
    else
        snprintf(w->sig_buf, sizeof w->sig_buf, "%s[%lld]", dt, (long long)w->rows);
    w->sig[0] = w->sig_buf;
    w->sig[1] = w->sig_buf;
    size_t es = weft_dtype_size(w->dt);
    size_t n = (size_t)w->rows * (size_t)(w->cols ? w->cols : 1);
    for (size_t k = 0; k < w->n_args; k++) {
        w->in[k] = aligned_alloc(64, n * es);
        fill(w->in[k], w->dt, n, (unsigned)k);
        int64_t dims[2] = { w->rows, w->cols };
        int err = weft_tensor_create(w->dt, w->cols ? 2 : 1, dims, w->in[k], &w->targs[k]);
        if (err)
            bench_die("weft_tensor_create", err);
        w->args[k] = weft_arg_tensor(w->targs[k]);
    }
    w->out_numel = strcmp(w->name, "colsum") == 0 ? (size_t)w->cols : n;
    w->c_out = aligned_alloc(64, w->out_numel * es);
    memset(w->c_out, 0, w->out_numel * es);
}

static void teardown(workload *w)
{
    for (size_t k = 0; k < w->n_args; k++) {
        weft_tensor_release(w->targs[k]);
        free(w->in[k]);
    }
    free(w->c_out);
}

static weft_function *make_fn(const workload *w, unsigned flags)
{
    weft_spec sig[2];
    for (size_t k = 0; k < w->n_args; k++)
        if (weft_spec_parse(w->sig[k], &sig[k]) != 0)
            bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = w->name;
    d.body = w->body;
    d.n_args = w->n_args;
    d.n_outs = 1;
    d.input_signature = sig;
    d.flags = flags;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

/* One call of w->f into w->out (released first, so that its buffer can
 * serve the call, as in a loop that drops each result). */
static void call(workload *w)
{
    weft_tensor_release(w->out);
    w->out = NULL;
    int err = weft_function_call(w->f, w->args, w->n_args, &w->out, 1);
    if (err)
        bench_die("weft_function_call", err);
}

/* The timed steady-state call and C loop, apart for callgrind's
 * --toggle-collect (each runs exactly BENCH_REPS times). */
__attribute__((noinline)) static void steady_call(workload *w)
{
    call(w);
}

__attribute__((noinline)) static void steady_cloop(workload *w)
{
    run_cloop(w);
}

static void check(workload *w, unsigned workers)
{
    size_t bad = 0;
    if (!w->out || (size_t)weft_tensor_numel(w->out) != w->out_numel) {
        bench_fail("output element count", w->out ? (uint64_t)weft_tensor_numel(w->out) : 0,
                   w->out_numel);
        return;
    }
    const void *got = weft_tensor_data(w->out);
    for (size_t i = 0; i < w->out_numel; i++) {
        double a = w->dt == WEFT_F32 ? ((const float *)got)[i] : ((const double *)got)[i];
        double b = w->dt == WEFT_F32 ? ((const float *)w->c_out)[i] : ((const double *)w->c_out)[i];
        if (!(fabs(a - b) <= w->tol * (1.0 + fabs(b))))
            bad++;
    }
    if (bad) {
        char what[128];
        snprintf(what, sizeof what, "%s on %u workers: elements differing from C", w->name,
                 workers);
        bench_fail(what, bad, 0);
    }
    bench_sink += (uint64_t)w->out_numel;
}

typedef struct result {
    double c, first, tier0, steady;       /* median seconds */
    double build;                         /* median trace + compile seconds of a first call */
    double jit;                           /* median background compile seconds */
    uint64_t native;                      /* groups running native code */
    double omp;                           /* the OpenMP peer, median seconds */
    double first_ratio, tier0_ratio, steady_ratio, omp_ratio;  /* medians of per-repetition ratios */
} result;

/* Waits (at most 5 s) until the compile thread has been through w->f's
 * groups: its compile time shows in the stats once a compile is done.  A
 * function with no group to compile never shows any. */
/* The compiler's one-time start in this process (in no function's jit ms). */
static double jit_start;

static void wait_native(workload *w, result *res)
{
    weft_function_stats st;
    double t0 = bench_now();
    /* Polls every millisecond: a spinning poll would take a CPU from the
     * compile thread and the workers. */
    for (;;) {
        weft_function_get_stats(w->f, &st);
        if (st.native_compile_ns != 0 || bench_now() - t0 >= 5.0)
            break;
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    }
    res->jit = (double)st.native_compile_ns * 1e-9;
    res->native = st.native_groups;
    jit_start = (double)st.native_start_ns * 1e-9;
}

/* The median compile time of reps fresh functions, each compiled with
 * nothing else running (one sample is at the mercy of the host). */
static void compile_median(workload *w, int reps, result *res)
{
    double tj[BENCH_MAX_REPS];
    weft_function *steady_fn = w->f;
    result one;
    for (int r = 0; r < reps; r++) {
        w->f = make_fn(w, 0);
        call(w);
        wait_native(w, &one);
        tj[r] = one.jit;
        weft_function_destroy(&w->f);
    }
    w->f = steady_fn;
    res->jit = bench_median(tj, reps);
}

/* Median time and ratio to C of steady calls of w->f, after a warm-up. */
static void steady(workload *w, int reps, double *t, double *ratio)
{
    double tc[BENCH_MAX_REPS], tw[BENCH_MAX_REPS], rr[BENCH_MAX_REPS];
    double t0 = bench_now();
    do {
        call(w);
        run_cloop(w);
    } while (bench_now() - t0 < BENCH_WARMUP_NS * 1e-9);
    for (int r = 0; r < reps; r++) {
        double t1 = bench_now();
        steady_cloop(w);
        tc[r] = bench_now() - t1;
        t1 = bench_now();
        steady_call(w);
        tw[r] = bench_now() - t1;
        rr[r] = tw[r] / tc[r];
    }
    *t = bench_median(tw, reps);
    *ratio = bench_median(rr, reps);
}

/* Median time and ratio to the C loop of the OpenMP peer, after a
 * warm-up (which starts its threads).  Its threads spin a while after
 * each parallel region; the pause at the end lets them sleep before the
 * next measurement. */
static void omp_peer(workload *w, int reps, result *res)
{
    double tc[BENCH_MAX_REPS], to[BENCH_MAX_REPS], rr[BENCH_MAX_REPS];
    double t0 = bench_now();
    do {
        run_omp(w);
        run_cloop(w);
    } while (bench_now() - t0 < BENCH_WARMUP_NS * 1e-9);
    for (int r = 0; r < reps; r++) {
        double t1 = bench_now();
        run_cloop(w);
        tc[r] = bench_now() - t1;
        t1 = bench_now();
        run_omp(w);
        to[r] = bench_now() - t1;
        rr[r] = to[r] / tc[r];
    }
    res->omp = bench_median(to, reps);
    res->omp_ratio = bench_median(rr, reps);
    bench_settle(50);
}

static void measure(workload *w, int reps, result *res)
{
    double tc[BENCH_MAX_REPS], tw[BENCH_MAX_REPS], ratio[BENCH_MAX_REPS], tb[BENCH_MAX_REPS];
    /* First calls: a fresh function each time. */
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        run_cloop(w);
        tc[r] = bench_now() - t0;
        w->f = make_fn(w, 0);
        t0 = bench_now();
        call(w);
        tw[r] = bench_now() - t0;
        weft_function_stats st;
        weft_function_get_stats(w->f, &st);
        tb[r] = (double)(st.trace_ns + st.compile_ns) * 1e-9;
        weft_function_destroy(&w->f);
        ratio[r] = tw[r] / tc[r];
    }
    res->first = bench_median(tw, reps);
    res->first_ratio = bench_median(ratio, reps);
    res->build = bench_median(tb, reps);
    /* The C loop alone. */
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        run_cloop(w);
        tc[r] = bench_now() - t0;
    }
    res->c = bench_median(tc, reps);
    /* Steady state on the interpreter. */
    w->f = make_fn(w, WEFT_FUNCTION_NO_JIT);
    steady(w, reps, &res->tier0, &res->tier0_ratio);
    weft_tensor_release(w->out);
    w->out = NULL;
    weft_function_destroy(&w->f);
    /* Steady state once the native code is in (the function the caller
     * checks and destroys). */
    w->f = make_fn(w, 0);
    call(w);
    wait_native(w, res);
    steady(w, reps, &res->steady, &res->steady_ratio);
    compile_median(w, reps, res);
    omp_peer(w, reps, res);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    static result res[N_WORK][BENCH_MAX_WORKERS];
    const char *scale = getenv("BENCH_NUMERIC_SCALE");
    for (size_t i = 0; scale && atoi(scale) > 1 && i < N_WORK; i++)
        if (strcmp(workloads[i].name, "matmul") != 0)
            workloads[i].rows /= atoi(scale);

    printf("numeric suite: weft traced call / plain C loop at -O3 (1 thread), "
           "medians of per-repetition ratios, %d repetitions\n", reps);
    for (int k = 0; k < nw; k++) {
        rt = bench_runtime(workers[k]);
        omp_numeric_threads(workers[k]);
        for (size_t i = 0; i < N_WORK; i++) {
            workload *w = &workloads[i];
            if (!bench_selected("BENCH_NUMERIC_ONLY", w->name))
                continue;
            setup(w);
            measure(w, reps, &res[i][k]);
            run_cloop(w);
            check(w, workers[k]);
            if (k == 0 && getenv("BENCH_NUMERIC_OPS")) {
                printf("%s: compiled op list:\n", w->name);
                weft_function_print_ops(w->f, 0, stdout);
            }
            weft_tensor_release(w->out);
            w->out = NULL;
            weft_function_destroy(&w->f);
            teardown(w);
        }
        weft_runtime_destroy(&rt);
        bench_settle(50);
    }

    printf("\n%-10s %-44s %7s %9s %9s %8s %9s %8s %9s %8s %9s %8s %6s %9s %8s\n", "workload",
           "", "workers", "C ms", "first ms", "first/C", "tier0 ms", "tier0/C", "steady ms",
           "steady/C", "build ms", "jit ms", "native", "omp ms", "omp/C");
    for (size_t i = 0; i < N_WORK; i++) {
        if (!bench_selected("BENCH_NUMERIC_ONLY", workloads[i].name))
            continue;
        for (int k = 0; k < nw; k++) {
            const result *r = &res[i][k];
            printf("%-10s %-44s %7u %9.3f %9.3f %7.2fx %9.3f %7.2fx %9.3f %7.2fx %9.3f %8.1f %6" PRIu64
                   " %9.3f %7.2fx\n", workloads[i].name, k == 0 ? workloads[i].title : "",
                   workers[k], r->c * 1e3, r->first * 1e3, r->first_ratio, r->tier0 * 1e3,
                   r->tier0_ratio, r->steady * 1e3, r->steady_ratio, r->build * 1e3, r->jit * 1e3,
                   r->native, r->omp * 1e3, r->omp_ratio);
        }
    }
    /* The targets, per workload: tier 0 (every call runs the interpreter
     * today) within 2x on one worker; steady <= 1.0x on one worker and
     * <= 0.6x on two. */
    for (size_t i = 0; i < N_WORK; i++) {
        if (!bench_selected("BENCH_NUMERIC_ONLY", workloads[i].name))
            continue;
        for (int k = 0; k < nw; k++) {
            const result *r = &res[i][k];
            if (workers[k] == 1)
                printf("summary %s: 1 worker: first %.2fx, tier 0 %.2fx, steady %.2fx, "
                       "compile %.1f ms (tier 0 <= 2x: %s; steady <= 1.0x: %s; compile < 30 ms: "
                       "%s)\n", workloads[i].name, r->first_ratio, r->tier0_ratio,
                       r->steady_ratio, r->jit * 1e3, r->tier0_ratio <= 2.0 ? "met" : "missed",
                       r->steady_ratio <= 1.0 ? "met" : "missed",
                       r->jit < 0.030 ? "met" : "missed");
            else if (workers[k] == 2)
                printf("summary %s: 2 workers: first %.2fx, tier 0 %.2fx, steady %.2fx "
                       "(<= 0.6x: %s)\n", workloads[i].name, r->first_ratio, r->tier0_ratio,
                       r->steady_ratio, r->steady_ratio <= 0.6 ? "met" : "missed");
        }
    }
    printf("jit start %.1f ms (once per process, before the first compile; in no "
           "function's jit ms)\n", jit_start * 1e3);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
