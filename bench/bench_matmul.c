/* Matrix products: weft_matmul against OpenBLAS's own gemm.
 *
 * For f32 and f64 at 256, 512 and 1024 (square), each repetition times, in
 * an order that rotates between repetitions: cblas_?gemm with OpenBLAS's
 * own threads (as many as weft has workers, set with
 * openblas_set_num_threads) and with 1 thread, and weft_matmul through a
 * traced function and eagerly, on `workers` workers (called from a task on
 * a worker, so that exactly `workers` threads compute).  Each timed call
 * follows an untimed one of the same implementation.  The ratios
 * (OpenBLAS's time / weft's, so "speed as a fraction of OpenBLAS's") are
 * taken within each repetition and their median is printed: the machine's
 * speed drifts less within one repetition than across a run.
 *
 * Also the row of the numeric suite: traced matmul f32 256x256 against a
 * naive i-k-j C loop at -O3 (weft's time / the loop's time).
 *
 * Usage: bench_matmul [workers...]  (default "1 2"; $BENCH_REPS, default 11). */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

/* The naive loop, compiled at -O3 (bench_matmul_cloop.c). */
void cloop_matmul_f32(float *restrict c, const float *restrict a, const float *restrict b,
                      size_t m, size_t k, size_t n);

static weft_runtime *rt;

typedef struct operands {
    weft_dtype dt;
    int64_t n;
    weft_tensor *a, *b;
    void *ref;              /* OpenBLAS's result, to check weft's against */
    void *scratch;          /* the C loops' and OpenBLAS's output */
    weft_function *traced;
} operands;

static int product_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matmul(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

static void blas_gemm(operands *o)
{
    int n = (int)o->n;
    if (o->dt == WEFT_F32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                    weft_tensor_data(o->a), n, weft_tensor_data(o->b), n, 0.0f, o->scratch, n);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0,
                    weft_tensor_data(o->a), n, weft_tensor_data(o->b), n, 0.0, o->scratch, n);
    bench_sink += ((const unsigned char *)o->scratch)[0];
}

/* Every element of weft's result within a relative 1e-4 (f32) or 1e-10
 * (f64) of OpenBLAS's; a mismatch is a CHECK FAILED. */
static void check(const operands *o, const weft_tensor *t, const char *what)
{
    int64_t nn = o->n * o->n;
    if (weft_tensor_numel(t) != nn || weft_tensor_dtype(t) != o->dt) {
        bench_fail(what, (uint64_t)weft_tensor_numel(t), (uint64_t)nn);
        return;
    }
    double tol = o->dt == WEFT_F32 ? 1e-4 : 1e-10;
    for (int64_t i = 0; i < nn; i++) {
        double got = o->dt == WEFT_F32 ? ((const float *)weft_tensor_data(t))[i]
                                       : ((const double *)weft_tensor_data(t))[i];
        double want = o->dt == WEFT_F32 ? ((const float *)o->ref)[i] : ((const double *)o->ref)[i];
        if (fabs(got - want) > tol * (fabs(want) + 1.0)) {
            bench_fail(what, (uint64_t)i, 0);
            return;
        }
    }
}

typedef struct job {
    operands *o;
    int eager;
    weft_tensor *out;
} job;

static void job_task(void *p)
{
    job *j = p;
    operands *o = j->o;
    if (j->eager) {
        weft_ctx *cx = NULL;
        int err = weft_eager_begin(rt, &cx);
        if (err)
            bench_die("weft_eager_begin", err);
        weft_value *v = weft_matmul(cx, weft_eager_value(cx, o->a), weft_eager_value(cx, o->b));
        if (!v)
            bench_die("weft_matmul (eager)", weft_ctx_status(cx));
        j->out = weft_tensor_retain(weft_value_tensor(v));
        weft_eager_end(&cx);
        return;
    }
    weft_arg args[2] = { weft_arg_tensor(o->a), weft_arg_tensor(o->b) };
    int err = weft_function_call(o->traced, args, 2, &j->out, 1);
    if (err)
        bench_die("weft_function_call", err);
}

/* One weft product, from a task on a worker; returns seconds. */
static double time_weft(operands *o, int eager, const char *what)
{
    job j = { o, eager, NULL };
    weft_group g;
    double t0 = bench_now();
    weft_group_init(&g, rt);
    weft_spawn(&g, job_task, &j);
    if (weft_group_wait(&g) != 0)
        bench_die("weft_group_wait", WEFT_EINVAL);
    double t = bench_now() - t0;
    if (what)
        check(o, j.out, what);
    weft_tensor_release(j.out);
    return t;
}

static double time_blas(operands *o, int threads)
{
    openblas_set_num_threads(threads);
    double t0 = bench_now();
    blas_gemm(o);
    return bench_now() - t0;
}

static double time_cloop(operands *o)
{
    size_t n = (size_t)o->n;
    double t0 = bench_now();
    cloop_matmul_f32(o->scratch, weft_tensor_data(o->a), weft_tensor_data(o->b), n, n, n);
    double t = bench_now() - t0;
    bench_sink += ((const unsigned char *)o->scratch)[0];
    return t;
}

static weft_tensor *random_matrix(weft_dtype dt, int64_t n, unsigned seed)
{
    size_t nn = (size_t)(n * n);
    void *buf = malloc(nn * weft_dtype_size(dt));
    for (size_t i = 0; i < nn; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = (double)(seed >> 8 & 0xffff) / 65536.0 - 0.5;
        if (dt == WEFT_F32)
            ((float *)buf)[i] = (float)v;
        else
            ((double *)buf)[i] = v;
    }
    weft_tensor *t = NULL;
    int64_t dims[2] = { n, n };
    int err = weft_tensor_create(dt, 2, dims, buf, &t);
    if (err)
        bench_die("weft_tensor_create", err);
    free(buf);
    return t;
}

static void operands_init(operands *o, weft_dtype dt, int64_t n)
{
    memset(o, 0, sizeof *o);
    o->dt = dt;
    o->n = n;
    o->a = random_matrix(dt, n, 1);
    o->b = random_matrix(dt, n, 2);
    size_t bytes = (size_t)(n * n) * weft_dtype_size(dt);
    o->ref = malloc(bytes);
    o->scratch = malloc(bytes);
    openblas_set_num_threads(1);
    blas_gemm(o);
    memcpy(o->ref, o->scratch, bytes);
    weft_function_desc d = { .name = "matmul", .body = product_body, .n_args = 2, .n_outs = 1 };
    int err = weft_function_create(rt, &d, &o->traced);
    if (err)
        bench_die("weft_function_create", err);
}

static void operands_free(operands *o)
{
    weft_function_destroy(&o->traced);
    weft_tensor_release(o->a);
    weft_tensor_release(o->b);
    free(o->ref);
    free(o->scratch);
}

enum { BLAS_N, BLAS_1, WEFT_TRACED, WEFT_EAGER, N_IMPL };
static const char *const impl_name[N_IMPL] = {
    "OpenBLAS, its own threads", "OpenBLAS, 1 thread", "weft_matmul traced", "weft_matmul eager",
};

/* Times implementation i once, right after an untimed call of the same,
 * so that every implementation's threads are awake when its clock starts
 * (a sleeping pool is not what a program calling it in a loop sees). */
static double time_impl(operands *o, int i, unsigned workers, int check_it)
{
    for (int timed = 0; timed < 2; timed++) {
        double t;
        switch (i) {
        case BLAS_N: t = time_blas(o, (int)workers); break;
        case BLAS_1: t = time_blas(o, 1); break;
        default:
            t = time_weft(o, i == WEFT_EAGER, timed && check_it ? impl_name[i] : NULL);
            break;
        }
        if (timed)
            return t;
    }
    return 0;
}

/* One size and dtype on `workers` workers: reps rounds of the four, in an
 * order that rotates from round to round, with a pause after OpenBLAS's
 * threaded call so that its threads stop spinning before the next one
 * runs: they spin for 2^28 cycles of the time-stamp counter (OpenBLAS's
 * THREAD_TIMEOUT), about 130 ms on a 2 GHz counter.  A pause of 100 ms
 * left them spinning into weft's products on 2 cores, which then ran at
 * one thread's speed (512: 0.53-0.65 of OpenBLAS's; with the threads made
 * to sleep at once, OPENBLAS_THREAD_TIMEOUT=4, 0.95-1.03).  Prints
 * medians and median ratios. */
static void bench_case(weft_dtype dt, int64_t n, unsigned workers, int reps)
{
    operands o;
    operands_init(&o, dt, n);
    double t[N_IMPL][BENCH_MAX_REPS], ratio[N_IMPL][BENCH_MAX_REPS];
    time_weft(&o, 0, "traced (first call, which traces)");
    for (int r = 0; r < reps; r++) {
        for (int q = 0; q < N_IMPL; q++) {
            int i = (q + r) % N_IMPL;
            t[i][r] = time_impl(&o, i, workers, r == 0);
            if (i == BLAS_N)
                bench_settle(300);
        }
        for (int i = 0; i < N_IMPL; i++)
            ratio[i][r] = t[BLAS_N][r] / t[i][r];
    }
    const char *dn = weft_dtype_name(dt);
    printf("\nmatmul %s %lldx%lld, %u worker%s / OpenBLAS threads, %d reps\n", dn, (long long)n,
           (long long)n, workers, workers == 1 ? "" : "s", reps);
    printf("  %-28s %10s %22s\n", "implementation", "median ms", "speed / OpenBLAS own");
    double med_ratio[N_IMPL];
    for (int i = 0; i < N_IMPL; i++) {
        med_ratio[i] = bench_median(ratio[i], reps);
        printf("  %-28s %10.3f %22.2f\n", impl_name[i], bench_median(t[i], reps) * 1e3,
               med_ratio[i]);
    }
    printf("summary: matmul %s %lld, %u workers: weft traced %.2f, eager %.2f of OpenBLAS's "
           "speed with %u threads (target >= 0.8 at 512 and 1024 on 2 workers)\n",
           dn, (long long)n, workers, med_ratio[WEFT_TRACED], med_ratio[WEFT_EAGER], workers);
    operands_free(&o);
}

/* The numeric suite's row: traced f32 256x256 / the naive loop. */
static void bench_cloop_row(unsigned workers, int reps)
{
    operands o;
    operands_init(&o, WEFT_F32, 256);
    double ratio[BENCH_MAX_REPS], tw[BENCH_MAX_REPS], tc[BENCH_MAX_REPS];
    time_weft(&o, 0, "traced (first call, which traces)");
    for (int r = 0; r < reps; r++) {
        time_cloop(&o);
        tc[r] = time_cloop(&o);
        time_weft(&o, 0, NULL);
        tw[r] = time_weft(&o, 0, NULL);
        ratio[r] = tw[r] / tc[r];
    }
    double rm = bench_median(ratio, reps);
    printf("\nmatmul f32 256x256, naive i-k-j C loop at -O3 (1 thread) %.3f ms, weft traced on "
           "%u worker%s %.3f ms\n", bench_median(tc, reps) * 1e3, workers, workers == 1 ? "" : "s",
           bench_median(tw, reps) * 1e3);
    printf("summary: matmul f32 256 vs naive C loop -O3, %u workers: weft time / C time %.3f\n",
           workers, rm);
    operands_free(&o);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int n_workers = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    printf("OpenBLAS: %s (parallel build %d)\n", openblas_get_config(), openblas_get_parallel());
    const int64_t sizes[] = { 256, 512, 1024 };
    for (int w = 0; w < n_workers; w++) {
        rt = bench_runtime(workers[w]);
        bench_cloop_row(workers[w], reps);
        for (int d = 0; d < 2; d++)
            for (int s = 0; s < 3; s++)
                bench_case(d ? WEFT_F64 : WEFT_F32, sizes[s], workers[w], reps);
        weft_runtime_destroy(&rt);
    }
    printf("checksum %llu\n", (unsigned long long)bench_sink);
    return bench_exit_status();
}
