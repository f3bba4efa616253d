/* Parallel maps out[i] = fn(i).  Balanced: fn is 100 dependent multiply-
 * adds, n = 1e3, 1e6, 1e7.  Unbalanced (n = 1e5): fn costs 0..99 units of
 * 10 multiply-adds, rising linearly with i, or random (fixed seed).  weft
 * parallel_for (grain 0: adaptive) and parallel_map (no bound) against
 * serial C, OpenMP static / guided / dynamic and TBB parallel_for with the
 * auto partitioner.  weft's loops are timed three ways:
 *   "in worker": the timing loop runs in one task on a worker, so exactly
 *     `workers` threads compute and the loop is called by one of them, as
 *     the contenders' loops are called by their pool's master thread;
 *   "outside->worker": each timed call goes from the main thread to a task
 *     on a worker and back, two thread hand-offs per call (the cost of
 *     entering a runtime that has a worker per CPU from outside);
 *   "from main+1": called from the main thread, which joins in, so
 *     `workers` + 1 threads compute. */
#include "bench.h"
#include "contenders.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

static weft_runtime *rt;
static int weft_errors;

typedef struct run {
    uint64_t *out;
    size_t n;
    const uint8_t *cost;   /* NULL: balanced */
} run;

static void map_serial(void *p)
{
    run *c = p;
    for (size_t i = 0; i < c->n; i++)
        c->out[i] = bench_item(i, c->cost);
}

static int range_body(size_t b, size_t e, void *p)
{
    run *c = p;
    for (size_t i = b; i < e; i++)
        c->out[i] = bench_item(i, c->cost);
    return 0;
}

static int index_body(size_t i, void *p)
{
    run *c = p;
    c->out[i] = bench_item(i, c->cost);
    return 0;
}

static void map_weft_for(void *p)
{
    run *c = p;
    if (weft_parallel_for(rt, c->n, 0, range_body, c) != 0)
        weft_errors++;
}

static void map_weft_map(void *p)
{
    run *c = p;
    if (weft_parallel_map(rt, c->n, 0, index_body, c) != 0)
        weft_errors++;
}

/* The same loops started from a task on a worker, so that exactly
 * `workers` threads compute, like OpenMP's and TBB's thread counts.  Called
 * from this outside thread, the caller joins in and n workers means n + 1
 * computing threads. */
typedef struct in_worker {
    void (*fn)(void *);
    void *ctx;
} in_worker;

static void in_worker_task(void *p)
{
    in_worker *iw = p;
    iw->fn(iw->ctx);
}

static void run_in_worker(void (*fn)(void *), void *ctx)
{
    in_worker iw = { fn, ctx };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, in_worker_task, &iw);
    if (weft_group_wait(&g) != 0)
        weft_errors++;
}

static void map_weft_for_handoff(void *p)
{
    run_in_worker(map_weft_for, p);
}

static void map_weft_map_handoff(void *p)
{
    run_in_worker(map_weft_map, p);
}

static void map_omp_static(void *p)
{
    run *c = p;
    omp_map_static(c->out, c->n, c->cost);
}

static void map_omp_guided(void *p)
{
    run *c = p;
    omp_map_guided(c->out, c->n, c->cost);
}

static void map_omp_dynamic(void *p)
{
    run *c = p;
    omp_map_dynamic(c->out, c->n, c->cost);
}

static void map_tbb(void *p)
{
    run *c = p;
    tbb_map(c->out, c->n, c->cost);
}

static uint64_t checksum(const run *c)
{
    uint64_t s = 0;
    for (size_t i = 0; i < c->n; i++)
        s += c->out[i] ^ (uint64_t)i;
    return s;
}

/* Times fn, then runs it once more on a cleared output and compares the
 * checksum with serial's, so that a skipped element cannot pass. */
static double timed_checked(const char *what, int reps, void (*fn)(void *), run *c,
                            uint64_t want)
{
    double m = bench_time(reps, 1, fn, c);
    memset(c->out, 0, c->n * sizeof *c->out);
    fn(c);
    uint64_t got = checksum(c);
    bench_sink += got;
    if (got != want)
        bench_fail(what, got, want);
    return m;
}

/* timed_checked, run in a task on a worker ("in worker" rows). */
typedef struct timed_job {
    const char *what;
    int reps;
    void (*fn)(void *);
    run *c;
    uint64_t want;
    double median;
} timed_job;

static void timed_job_task(void *p)
{
    timed_job *j = p;
    j->median = timed_checked(j->what, j->reps, j->fn, j->c, j->want);
}

static double timed_checked_in_worker(const char *what, int reps, void (*fn)(void *), run *c,
                                      uint64_t want)
{
    timed_job j = { what, reps, fn, c, want, 0 };
    run_in_worker(timed_job_task, &j);
    return j.median;
}

typedef struct impl {
    const char *name;
    void (*fn)(void *);
    int weft;       /* 1: measured on a weft runtime; 2: OpenMP; 3: TBB */
    int in_worker;  /* 1: the whole timing loop runs in a task on a worker */
} impl;

static void bench_case(const char *title, run *c, int reps, int nw, const unsigned *workers,
                       int with_dynamic)
{
    static const impl all[] = {
        { "weft for, in worker", map_weft_for, 1, 1 },
        { "weft map, in worker", map_weft_map, 1, 1 },
        { "weft for, outside->worker", map_weft_for_handoff, 1, 0 },
        { "weft map, outside->worker", map_weft_map_handoff, 1, 0 },
        { "weft for, from main+1", map_weft_for, 1, 0 },
        { "weft map, from main+1", map_weft_map, 1, 0 },
        { "openmp static", map_omp_static, 2, 0 },
        { "openmp guided", map_omp_guided, 2, 0 },
        { "openmp dynamic,64", map_omp_dynamic, 2, 0 },
        { "tbb auto", map_tbb, 3, 0 },
    };
    int n_all = (int)(sizeof all / sizeof all[0]);
    bench_table t;
    bench_table_init(&t, title, "ms", 1e3, nw, workers);
    int idx[BENCH_MAX_IMPLS];
    int i_ser = bench_table_impl(&t, "serial", 1, reps);
    for (int k = 0; k < n_all; k++) {
        idx[k] = -1;
        if (all[k].fn == map_omp_dynamic && !with_dynamic)
            continue;
        idx[k] = bench_table_impl(&t, all[k].name, all[k].weft != 1, reps);
    }

    t.med[i_ser][0] = bench_time(reps, 1, map_serial, c);
    uint64_t want = checksum(c);

    for (int w = 0; w < nw; w++) {
        rt = bench_runtime(workers[w]);
        omp_begin(workers[w]);
        for (int k = 0; k < n_all; k++) {
            if (idx[k] < 0)
                continue;
            if (all[k].weft == 3)
                tbb_begin(workers[w]);
            t.med[idx[k]][w] = (all[k].in_worker ? timed_checked_in_worker : timed_checked)(
                all[k].name, reps, all[k].fn, c, want);
            if (all[k].weft == 3)
                tbb_end();
            if (all[k].weft == 1 && (k + 1 == n_all || all[k + 1].weft != 1))
                weft_runtime_destroy(&rt);
            bench_settle(30);
        }
    }
    bench_table_print(&t);
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Whether the number n is among the numbers of the text list. */
static int listed(const char *list, size_t n)
{
    while (*list) {
        char *end;
        unsigned long long v = strtoull(list, &end, 10);
        if (end == list) {
            list++;
            continue;
        }
        if (v == n)
            return 1;
        list = end;
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    const char *only = getenv("BENCH_MAP_ONLY");   /* "balanced" or "unbalanced" */

    size_t nmax = 10000000;
    run c;
    c.out = calloc(nmax, sizeof *c.out);
    if (!c.out)
        return 2;
    c.cost = NULL;

    if (!only || strcmp(only, "balanced") == 0) {
        static const size_t sizes[] = { 1000, 1000000, 10000000 };
        /* $BENCH_MAP_SIZES: a subset of the sizes, e.g. "10000000". */
        const char *pick = getenv("BENCH_MAP_SIZES");
        for (int s = 0; s < 3; s++) {
            char title[200];
            if (pick && !listed(pick, sizes[s]))
                continue;
            c.n = sizes[s];
            /* 1e3 elements take ~100 us: more reps; 1e7 take seconds: fewer. */
            int r = s == 0 ? reps * 5 : s == 2 ? (reps + 1) / 2 : reps;
            if (r > BENCH_MAX_REPS)
                r = BENCH_MAX_REPS;
            snprintf(title, sizeof title,
                     "balanced map, n = %zu, fn = 100 dependent multiply-adds: median wall time",
                     c.n);
            bench_case(title, &c, r, nw, workers, 0);
        }
    }

    if (!only || strcmp(only, "unbalanced") == 0) {
        size_t n = 100000;
        uint8_t *cost = malloc(n);
        if (!cost)
            return 2;
        c.n = n;
        c.cost = cost;
        for (size_t i = 0; i < n; i++)
            cost[i] = (uint8_t)(i * 100 / n);
        bench_case("unbalanced map, n = 1e5, cost of i = (100 i / n) x 10 multiply-adds (linear)",
                   &c, reps, nw, workers, 1);
        uint64_t seed = 0x9E3779B97F4A7C15ull;
        for (size_t i = 0; i < n; i++)
            cost[i] = (uint8_t)(xorshift(&seed) % 100);
        bench_case("unbalanced map, n = 1e5, cost of i = random 0..99 (seed fixed) x 10 multiply-adds",
                   &c, reps, nw, workers, 1);
        free(cost);
    }
    free(c.out);
    if (weft_errors)
        bench_fail("weft loop errors", (uint64_t)weft_errors, 0);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
