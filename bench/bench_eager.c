/* Eager elementwise chains in a fresh process: ((x*2+1)*x)-3 on f32[n] as
 * four eager ops from the main thread, every intermediate and result
 * released, and weft_softsign (x / (|x| + 1), an op made of three, which
 * runs eagerly as one fused pass), against the same computation as one C
 * loop at -O2, into one output buffer and into a fresh malloc'd output per
 * call (what a function that returns a new array does).  Each cell runs in a child process of its
 * own, as a program's first eager loop would: the C library's allocator
 * adapts its thresholds to the blocks a process has freed, so a process
 * that had freed big blocks before hides the page faults a fresh one pays
 * (bench_trace's earlier tables do exactly that).  Per call: the median
 * over repetitions of CALLS calls each. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft.h>

enum { N_SIZES = 3, N_WORK = 2 };
static const int64_t sizes[N_SIZES] = { 10000, 100000, 1000000 };
static const char *const work_names[N_WORK] = { "((x*2+1)*x)-3", "softsign" };
static const char *const weft_rows[N_WORK] = { "weft eager, 4 ops", "weft eager softsign" };

typedef struct chain_run {
    int work;   /* 0 the chain, 1 softsign */
    int64_t n, calls;
    const float *x;
    float *y;
    weft_ctx *cx;
    weft_value *vx;
} chain_run;

static float chain_elem(int work, float x)
{
    return work == 0 ? ((x * 2.0f + 1.0f) * x) - 3.0f : x / (fabsf(x) + 1.0f);
}

static weft_value *eager_chain(int work, weft_ctx *cx, weft_value *x)
{
    if (work == 1)
        return weft_softsign(cx, x);
    weft_value *k[3] = { weft_const_f64(cx, 2.0), weft_const_f64(cx, 1.0),
                         weft_const_f64(cx, 3.0) };
    weft_value *a = weft_mul(cx, x, k[0]);
    weft_value *b = weft_add(cx, a, k[1]);
    weft_value *c = weft_mul(cx, b, x);
    weft_value *y = weft_sub(cx, c, k[2]);
    weft_value *dead[6] = { a, b, c, k[0], k[1], k[2] };
    for (int i = 0; i < 6; i++)
        weft_value_release(cx, dead[i]);
    return y;
}

static void run_weft(void *p)
{
    chain_run *r = p;
    for (int64_t i = 0; i < r->calls; i++) {
        weft_value *y = eager_chain(r->work, r->cx, r->vx);
        if (!y)
            bench_die("eager chain", weft_ctx_status(r->cx));
        bench_sink += (uint64_t)weft_tensor_numel(weft_value_tensor(y));
        weft_value_release(r->cx, y);
    }
}

static void run_c(void *p)
{
    chain_run *r = p;
    for (int64_t i = 0; i < r->calls; i++) {
        for (int64_t e = 0; e < r->n; e++)
            r->y[e] = chain_elem(r->work, r->x[e]);
        bench_sink += (uint64_t)r->y[i % r->n];
    }
}

static void run_c_fresh(void *p)
{
    chain_run *r = p;
    for (int64_t i = 0; i < r->calls; i++) {
        float *y = malloc(sizeof *y * (size_t)r->n);
        if (!y)
            bench_die("malloc", WEFT_ENOMEM);
        for (int64_t e = 0; e < r->n; e++)
            y[e] = chain_elem(r->work, r->x[e]);
        bench_sink += (uint64_t)y[i % r->n];
        free(y);
    }
}

/* One cell in this (child) process: impl 0 weft on `workers`, 1 the C
 * loop into one buffer, 2 the C loop into fresh buffers.  Seconds per call. */
static double cell(int work, int impl, unsigned workers, int64_t n, int reps)
{
    chain_run r = { .work = work, .n = n, .calls = 20000000 / n > 0 ? 20000000 / n : 1 };
    float *x = malloc(sizeof *x * (size_t)n), *y = malloc(sizeof *y * (size_t)n);
    if (!x || !y)
        bench_die("malloc", WEFT_ENOMEM);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(i % 1000) * 0.001f;
    r.x = x;
    r.y = y;
    double t;
    if (impl == 0) {
        weft_runtime *rt = bench_runtime(workers);
        weft_tensor *tx = NULL;
        int err = weft_eager_begin(rt, &r.cx);
        if (!err)
            err = weft_tensor_create(WEFT_F32, 1, &n, x, &tx);
        if (err)
            bench_die("eager setup", err);
        r.vx = weft_eager_value(r.cx, tx);
        weft_value *check = eager_chain(work, r.cx, r.vx);
        const float *got = check ? weft_tensor_data(weft_value_tensor(check)) : NULL;
        size_t bad = got ? 0 : (size_t)n;
        for (int64_t i = 0; got && i < n; i++)
            if (fabsf(got[i] - chain_elem(work, x[i])) > 1e-5f * (1.0f + fabsf(got[i])))
                bad++;
        if (bad)
            bench_fail("eager chain elements differing from C", bad, 0);
        weft_value_release(r.cx, check);
        t = bench_time(reps, 1, run_weft, &r);
        weft_eager_end(&r.cx);
        weft_tensor_release(tx);
        weft_runtime_destroy(&rt);
    } else {
        t = bench_time(reps, 1, impl == 1 ? run_c : run_c_fresh, &r);
    }
    free(x);
    free(y);
    return t / (double)r.calls;
}

/* cell() in a child process; the parent reads its result from a pipe. */
static double cell_in_child(int work, int impl, unsigned workers, int64_t n, int reps)
{
    int fd[2];
    if (pipe(fd) != 0)
        bench_die("pipe", WEFT_EINVAL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork", WEFT_EINVAL);
    if (pid == 0) {
        close(fd[0]);
        double t = cell(work, impl, workers, n, reps);
        int ok = bench_exit_status() == 0 && write(fd[1], &t, sizeof t) == (ssize_t)sizeof t;
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    double t = 0;
    ssize_t got = read(fd[0], &t, sizeof t);
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof t || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_fail("a child process's cell", 0, 1);
    return t;
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    bench_table t[N_WORK][N_SIZES];
    static char titles[N_WORK][N_SIZES][96];
    int rows[N_WORK][N_SIZES][3];
    for (int k = 0; k < N_WORK; k++)
        for (int s = 0; s < N_SIZES; s++) {
            bench_table *ts = &t[k][s];
            int *rs = rows[k][s];
            snprintf(titles[k][s], sizeof titles[k][s], "eager %s on f32[%lld], fresh process: "
                     "per call", work_names[k], (long long)sizes[s]);
            bench_table_init(ts, titles[k][s], "us", 1e6, nw, workers);
            rs[0] = bench_table_impl(ts, weft_rows[k], 0, reps);
            rs[1] = bench_table_impl(ts, "C loop -O2, one output", 1, reps);
            rs[2] = bench_table_impl(ts, "C loop -O2, malloc'd output", 1, reps);
            ts->serial = rs[1];
            for (int i = 1; i < 3; i++)
                ts->med[rs[i]][0] = cell_in_child(k, i, 1, sizes[s], reps);
            for (int w = 0; w < nw; w++)
                ts->med[rs[0]][w] = cell_in_child(k, 0, workers[w], sizes[s], reps);
        }
    for (int k = 0; k < N_WORK; k++)
        for (int s = 0; s < N_SIZES; s++)
            bench_table_print(&t[k][s]);
    for (int k = 0; k < N_WORK; k++)
        for (int s = 0; s < N_SIZES; s++)
            for (int w = 0; w < nw; w++) {
                const bench_table *ts = &t[k][s];
                const int *rs = rows[k][s];
                printf("summary: %s f32[%lld], %u workers: weft eager %.1f us a call, %.2fx the "
                       "C loop into one output, %.2fx the C loop into malloc'd outputs\n",
                       work_names[k], (long long)sizes[s], workers[w], ts->med[rs[0]][w] * 1e6,
                       ts->med[rs[0]][w] / ts->med[rs[1]][0],
                       ts->med[rs[0]][w] / ts->med[rs[2]][0]);
            }
    return bench_exit_status();
}
