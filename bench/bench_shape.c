/* Shape-op benchmarks: weft's compiled calls against the same copies
 * written as plain serial C loops, in one process.
 *  (a) transpose of f32[2048,2048]: weft against a naive C loop and a C
 *      loop in 32 x 32 blocks;
 *  (b) concat of four f32[2048,512] along axis 1 (rows of 2048): weft
 *      against memcpy per row segment;
 *  (c) cumsum along axis 0 of f32[2048,2048] (2048 running sums in f64,
 *      as weft adds f32): weft against a C loop over rows;
 *  (d) stack of four f32[1048576] vectors on a new last axis (rows of 4,
 *      as a pixel's channels are joined): weft against a C loop that
 *      interleaves them.
 * weft is called from the main thread with each output released, so both
 * sides write a fresh result buffer every repetition (C: malloc + free). */
#include "bench.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define N 2048
#define PARTS 4

static weft_runtime *rt;

/* ---- The C contenders. -------------------------------------------------- */

typedef struct c_job {
    const float *x;          /* N x N */
    const float *parts[PARTS];
} c_job;

/* The loops, each writing its N x N result into o. */
static void ref_transpose(const c_job *j, float *o)
{
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < N; k++)
            o[i * N + k] = j->x[k * N + i];
}

static void ref_transpose_blocked(const c_job *j, float *o)
{
    for (size_t i0 = 0; i0 < N; i0 += 32)
        for (size_t k0 = 0; k0 < N; k0 += 32)
            for (size_t i = i0; i < i0 + 32; i++)
                for (size_t k = k0; k < k0 + 32; k++)
                    o[i * N + k] = j->x[k * N + i];
}

static void ref_concat(const c_job *j, float *o)
{
    size_t w = N / PARTS;
    for (size_t r = 0; r < N; r++)
        for (int k = 0; k < PARTS; k++)
            memcpy(o + r * N + (size_t)k * w, j->parts[k] + r * w, sizeof(float) * w);
}

static void ref_interleave(const c_job *j, float *o)
{
    size_t n = (size_t)N * N / PARTS;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < PARTS; k++)
            o[i * PARTS + (size_t)k] = j->parts[k][i];
}

static void ref_cumsum(const c_job *j, float *o)
{
    double *acc = calloc(N, sizeof *acc);
    for (size_t r = 0; r < N; r++)
        for (size_t c = 0; c < N; c++) {
            acc[c] += j->x[r * N + c];
            o[r * N + c] = (float)acc[c];
        }
    free(acc);
}

/* A timed C contender: a fresh result buffer, then the loop. */
typedef struct c_run {
    const c_job *j;
    void (*loop)(const c_job *, float *);
} c_run;

static void c_do(void *p)
{
    c_run *c = p;
    float *o = malloc(sizeof(float) * N * N);
    c->loop(c->j, o);
    bench_sink += (uint64_t)o[N + 1];
    free(o);
}

static double c_time(int reps, const c_job *j, void (*loop)(const c_job *, float *))
{
    c_run c = { j, loop };
    return bench_time(reps, 1, c_do, &c);
}

/* ---- weft. -------------------------------------------------------------- */

static int transpose_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_transpose(cx, args[0], NULL);
    return weft_ctx_status(cx);
}

static int concat_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_concat(cx, args, PARTS, 1);
    return weft_ctx_status(cx);
}

static int interleave_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_stack(cx, args, PARTS, 1);
    return weft_ctx_status(cx);
}

static int cumsum_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_cumsum(cx, args[0], 0);
    return weft_ctx_status(cx);
}

typedef struct w_call {
    weft_function *f;
    weft_arg args[PARTS];
    size_t n_args;
} w_call;

static void w_do(void *p)
{
    w_call *c = p;
    weft_tensor *out = NULL;
    int err = weft_function_call(c->f, c->args, c->n_args, &out, 1);
    if (err)
        bench_die("weft_function_call", err);
    bench_sink += (uint64_t)((const float *)weft_tensor_data(out))[N + 1];
    weft_tensor_release(out);
}

static weft_function *make_fn(const char *name, weft_body_fn body, size_t n_args)
{
    weft_function_desc d = { .name = name, .body = body, .n_args = n_args, .n_outs = 1 };
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

/* weft's result of c against C's, element by element. */
static void check(w_call *c, void (*ref)(const c_job *, float *), const c_job *j, const char *what)
{
    weft_tensor *out = NULL;
    int err = weft_function_call(c->f, c->args, c->n_args, &out, 1);
    if (err)
        bench_die("weft_function_call", err);
    float *want = malloc(sizeof(float) * N * N);
    ref(j, want);
    const float *got = weft_tensor_data(out);
    uint64_t bad = 0;
    for (size_t i = 0; i < (size_t)N * N; i++)
        bad += got[i] != want[i];
    if (bad)
        bench_fail(what, bad, 0);
    free(want);
    weft_tensor_release(out);
}

/* weft's median for body on args (checked against ref on the first
 * worker count). */
static double w_time(int reps, bool first, const char *name, weft_body_fn body,
                     weft_tensor *const *args, size_t n_args,
                     void (*ref)(const c_job *, float *), const c_job *j)
{
    w_call c = { .n_args = n_args };
    for (size_t k = 0; k < n_args; k++)
        c.args[k] = weft_arg_tensor(args[k]);
    c.f = make_fn(name, body, n_args);
    if (first)
        check(&c, ref, j, name);
    double t = bench_time(reps, 1, w_do, &c);
    weft_function_destroy(&c.f);
    return t;
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);

    bench_table ta, tb, tc, td;
    bench_table_init(&ta, "(a) transpose of f32[2048,2048]", "ms", 1e3, nw, workers);
    int a_naive = bench_table_impl(&ta, "serial naive", 1, reps);
    int a_block = bench_table_impl(&ta, "serial 32x32 blocks", 1, reps);
    int a_weft = bench_table_impl(&ta, "weft call", 0, reps);
    bench_table_init(&tb, "(b) concat of 4 f32[2048,512] on axis 1", "ms", 1e3, nw, workers);
    int b_ser = bench_table_impl(&tb, "serial memcpy", 1, reps);
    int b_weft = bench_table_impl(&tb, "weft call", 0, reps);
    bench_table_init(&tc, "(c) cumsum on axis 0 of f32[2048,2048]", "ms", 1e3, nw, workers);
    int c_ser = bench_table_impl(&tc, "serial", 1, reps);
    int c_weft = bench_table_impl(&tc, "weft call", 0, reps);
    bench_table_init(&td, "(d) stack of 4 f32[1048576] on a new last axis", "ms", 1e3, nw,
                     workers);
    int d_ser = bench_table_impl(&td, "serial loop", 1, reps);
    int d_weft = bench_table_impl(&td, "weft call", 0, reps);

    c_job j = { 0 };
    float *x = malloc(sizeof(float) * N * N);
    for (size_t i = 0; i < (size_t)N * N; i++)
        x[i] = (float)(i % 1009) * 0.25f;
    j.x = x;
    for (int k = 0; k < PARTS; k++)
        j.parts[k] = x + (size_t)k * N * (N / PARTS);
    ta.med[a_naive][0] = c_time(reps, &j, ref_transpose);
    ta.med[a_block][0] = c_time(reps, &j, ref_transpose_blocked);
    tb.med[b_ser][0] = c_time(reps, &j, ref_concat);
    tc.med[c_ser][0] = c_time(reps, &j, ref_cumsum);
    td.med[d_ser][0] = c_time(reps, &j, ref_interleave);

    weft_tensor *tx = NULL, *tp[PARTS] = { NULL }, *tv[PARTS] = { NULL };
    int64_t d[2] = { N, N }, dp[2] = { N, N / PARTS }, dv = (int64_t)N * N / PARTS;
    int err = weft_tensor_create(WEFT_F32, 2, d, x, &tx);
    for (int k = 0; k < PARTS && !err; k++) {
        err = weft_tensor_create(WEFT_F32, 2, dp, j.parts[k], &tp[k]);
        if (!err)
            err = weft_tensor_create(WEFT_F32, 1, &dv, j.parts[k], &tv[k]);
    }
    if (err)
        bench_die("weft_tensor_create", err);
    for (int w = 0; w < nw; w++) {
        rt = bench_runtime(workers[w]);
        ta.med[a_weft][w] = w_time(reps, w == 0, "transpose", transpose_body, &tx, 1,
                                   ref_transpose, &j);
        tb.med[b_weft][w] = w_time(reps, w == 0, "concat", concat_body, tp, PARTS, ref_concat, &j);
        tc.med[c_weft][w] = w_time(reps, w == 0, "cumsum", cumsum_body, &tx, 1, ref_cumsum, &j);
        td.med[d_weft][w] = w_time(reps, w == 0, "interleave", interleave_body, tv, PARTS,
                                   ref_interleave, &j);
        weft_runtime_destroy(&rt);
        bench_settle(50);
    }
    bench_table_print(&ta);
    bench_table_print(&tb);
    bench_table_print(&tc);
    bench_table_print(&td);
    for (int w = 0; w < nw; w++)
        printf("summary: %u workers: transpose %.2fx of blocked C speed, concat %.2fx of memcpy "
               "speed, cumsum %.2fx of C speed, interleave %.2fx of C speed\n", workers[w],
               ta.med[a_block][0] / ta.med[a_weft][w], tb.med[b_ser][0] / tb.med[b_weft][w],
               tc.med[c_ser][0] / tc.med[c_weft][w], td.med[d_ser][0] / td.med[d_weft][w]);
    weft_tensor_release(tx);
    for (int k = 0; k < PARTS; k++) {
        weft_tensor_release(tp[k]);
        weft_tensor_release(tv[k]);
    }
    free(x);
    return bench_exit_status();
}
