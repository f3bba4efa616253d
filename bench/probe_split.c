/* A probe of how a kernel's parallel_for spreads over the threads: the
 * numeric suite's colsum (20 chunks of 1024 rows of f64[2e4,256], as
 * weft__reduce_chunks cuts it), chain (f32[4e6] in 16 chunks per worker,
 * as fused groups and elementwise kernels cut it; chain1: one chunk per
 * worker, weft__chunk_count's cut alone) or fused4 (((x*2+1)*x)-3 over
 * f32[1e7], 16 chunks per worker, plain stores) run with weft_parallel_for from
 * the main thread, each repetition right after the same work as a C loop,
 * as bench_numeric times them.  For every repetition it prints the time
 * ratio, which thread ran how many chunks on which CPU, and each thread's
 * voluntary and involuntary context switches during the call, so that a
 * slow repetition can be told apart from a fast one by counts a loaded
 * machine cannot fake (where threads ran, who ran what).
 *
 * With a fourth argument `timeline`, each repetition prints instead
 * where the call's time went, measured from the call's start: when the
 * first worker began a chunk (the workers' wake-up), when the caller ended
 * its last chunk, when the last chunk ended, and when the call returned
 * (the caller's wait for the workers), with the caller's CPU time in the
 * call, the chunks each thread ran, how often the workers went to sleep
 * since the previous call (runtime stats), and the median chunk's time
 * over its share of the C loop (above 1: chunks run slower side by side,
 * as memory-bound ones do when two CPUs share the memory bandwidth).
 *
 *   probe_split colsum|chain|chain1|fused4 WORKERS REPS [timeline] */
#define _GNU_SOURCE
#include "bench.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#define ROWS 20000
#define COLS 256
#define CHAIN_N 4000000
#define FUSED4_N 10000000
#define MAX_CHUNKS 256
#define MAX_THREADS 8

typedef struct rec {
    int thread;   /* 0: main, 1..: others in order of first sight */
    int cpu;
    double t0, t1;
} rec;

static weft_runtime *rt;
static double *xd, *part, *yd;
static float *xf, *yf;
static size_t n_chunks;
static rec recs[MAX_CHUNKS];
static pid_t tids[MAX_THREADS];
static int n_tids;
static long csw[MAX_THREADS][2];   /* voluntary, involuntary at the chunk */

static int thread_slot(void)
{
    pid_t me = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < __atomic_load_n(&n_tids, __ATOMIC_ACQUIRE); i++)
        if (tids[i] == me)
            return i;
    int i = __atomic_fetch_add(&n_tids, 1, __ATOMIC_ACQ_REL);
    tids[i] = me;
    return i;
}

static void thread_csw(long out[2])
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    out[0] = ru.ru_nvcsw;
    out[1] = ru.ru_nivcsw;
}

static void colsum_chunk(size_t k)
{
    double *p = part + k * COLS;
    memset(p, 0, COLS * sizeof *p);
    for (size_t r = k * 1024; r < (k + 1) * 1024 && r < ROWS; r++)
        for (size_t c = 0; c < COLS; c++)
            p[c] += xd[r * COLS + c];
}

static void chain_chunk(size_t k)
{
    size_t b = CHAIN_N / n_chunks * k, e = k + 1 == n_chunks ? CHAIN_N : CHAIN_N / n_chunks * (k + 1);
    for (size_t i = b; i < e; i++)
        yf[i] = sqrtf(fabsf(1.5f * xf[i] - 2.0f)) * xf[i] + expf(-xf[i] * xf[i]);
}

static void fused4_range(size_t b, size_t e)
{
    for (size_t i = b; i < e; i++)
        yf[i] = (xf[i] * 2.0f + 1.0f) * xf[i] - 3.0f;
}

static void fused4_chunk(size_t k)
{
    fused4_range(FUSED4_N / n_chunks * k, k + 1 == n_chunks ? FUSED4_N : FUSED4_N / n_chunks * (k + 1));
}

static bool is_colsum, is_fused4;
static void cloop(void);

static int run_range(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    for (size_t k = b; k < e; k++) {
        int s = thread_slot();
        recs[k].thread = s;
        recs[k].cpu = sched_getcpu();
        recs[k].t0 = bench_now();
        if (is_colsum)
            colsum_chunk(k);
        else if (is_fused4)
            fused4_chunk(k);
        else
            chain_chunk(k);
        recs[k].t1 = bench_now();
        if (s < MAX_THREADS)
            thread_csw(csw[s]);
    }
    return 0;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One timed call (after the C loop, as bench_numeric runs them), printed
 * as a timeline in microseconds from the call's start. */
static double timeline_ratio;   /* the last timeline_rep's weft / C */

static void timeline_rep(int r, double *wake, double *wait, double *sleeps_out, double *slow)
{
    weft_runtime_stats s0, s1;
    weft_runtime_get_stats(rt, &s0);
    double t = bench_now();
    cloop();
    double tc = bench_now() - t;
    weft_runtime_get_stats(rt, &s1);
    double cpu0 = thread_cpu();
    t = bench_now();
    weft_parallel_for(rt, n_chunks, 1, run_range, NULL);
    double tw = bench_now() - t;
    double cpu = thread_cpu() - cpu0;
    double first_worker = -1, caller_end = 0, last_end = 0;
    int count[MAX_THREADS] = { 0 };
    for (size_t k = 0; k < n_chunks; k++) {
        count[recs[k].thread]++;
        if (recs[k].thread != 0 && (first_worker < 0 || recs[k].t0 < first_worker))
            first_worker = recs[k].t0;
        if (recs[k].thread == 0 && recs[k].t1 > caller_end)
            caller_end = recs[k].t1;
        if (recs[k].t1 > last_end)
            last_end = recs[k].t1;
    }
    timeline_ratio = tw / tc;
    double durs[MAX_CHUNKS];
    for (size_t k = 0; k < n_chunks; k++)
        durs[k] = recs[k].t1 - recs[k].t0;
    slow[r] = bench_median(durs, (int)n_chunks) / (tc / (double)n_chunks);
    wake[r] = first_worker < 0 ? tw * 1e6 : (first_worker - t) * 1e6;
    wait[r] = (t + tw - last_end) * 1e6;
    sleeps_out[r] = (double)(s1.sleeps - s0.sleeps);
    printf("rep %2d C %.0f us weft %.0f us ratio %.2f | first worker chunk %+.0f caller done %+.0f "
           "last chunk %+.0f return %+.0f | caller cpu %.0f us | sleeps in C loop %llu | "
           "chunk/C-share %.2f |",
           r, tc * 1e6, tw * 1e6, tw / tc, first_worker < 0 ? -1.0 : (first_worker - t) * 1e6,
           caller_end > 0 ? (caller_end - t) * 1e6 : -1.0, (last_end - t) * 1e6, tw * 1e6,
           cpu * 1e6, (unsigned long long)(s1.sleeps - s0.sleeps), slow[r]);
    for (int i = 0; i < n_tids && i < MAX_THREADS; i++)
        printf(" t%d:%d", i, count[i]);
    printf("\n");
}

static void cloop(void)
{
    if (is_colsum) {
        memset(yd, 0, COLS * sizeof *yd);
        for (size_t r = 0; r < ROWS; r++)
            for (size_t c = 0; c < COLS; c++)
                yd[c] += xd[r * COLS + c];
    } else if (is_fused4) {
        fused4_range(0, FUSED4_N);
    } else {
        for (size_t i = 0; i < CHAIN_N; i++)
            yf[i] = sqrtf(fabsf(1.5f * xf[i] - 2.0f)) * xf[i] + expf(-xf[i] * xf[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "timeline") == 0)) {
        fprintf(stderr, "usage: probe_split colsum|chain|chain1|fused4 WORKERS REPS [timeline]\n");
        return 2;
    }
    is_colsum = strcmp(argv[1], "colsum") == 0;
    is_fused4 = strcmp(argv[1], "fused4") == 0;
    unsigned workers = (unsigned)atoi(argv[2]);
    int reps = atoi(argv[3]);
    n_chunks = is_colsum ? (ROWS + 1023) / 1024
               : strcmp(argv[1], "chain1") == 0 ? workers : 16 * (size_t)workers;
    if (n_chunks > MAX_CHUNKS) {
        fprintf(stderr, "probe_split: at most %d chunks\n", MAX_CHUNKS);
        return 2;
    }
    xd = malloc(sizeof *xd * ROWS * COLS);
    part = malloc(sizeof *part * MAX_CHUNKS * COLS);
    yd = malloc(sizeof *yd * COLS);
    xf = malloc(sizeof *xf * FUSED4_N);
    yf = malloc(sizeof *yf * FUSED4_N);
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        xd[i] = (double)(i % 97) * 0.25;
    for (size_t i = 0; i < FUSED4_N; i++)
        xf[i] = (float)(i % 101) * 0.02f - 1.0f;
    rt = bench_runtime(workers);
    thread_slot();   /* the main thread is thread 0 */
    for (int w = 0; w < 50; w++) {
        cloop();
        weft_parallel_for(rt, n_chunks, 1, run_range, NULL);
    }
    if (argc == 5) {
        static double wake[1024], wait[1024], sleeps[1024], slow[1024], ratio[1024];
        int n = reps < 1024 ? reps : 1024;
        for (int r = 0; r < n; r++) {
            timeline_rep(r, wake, wait, sleeps, slow);
            ratio[r] = timeline_ratio;
        }
        printf("medians: ratio %.2f; first worker chunk %.0f us after the call's start, return "
               "%.0f us after the last chunk; workers' sleeps per C loop %.0f; a chunk's time "
               "over its share of the C loop %.2f\n",
               bench_median(ratio, n), bench_median(wake, n), bench_median(wait, n),
               bench_median(sleeps, n), bench_median(slow, n));
        goto out;
    }
    weft_runtime_stats st0, st1;
    weft_runtime_get_stats(rt, &st0);
    double ratios[1024], busiest[1024], mains[1024];
    for (int r = 0; r < reps && r < 1024; r++) {
        double t = bench_now();
        cloop();
        double tc = bench_now() - t;
        long before[MAX_THREADS][2];
        memcpy(before, csw, sizeof csw);
        thread_csw(before[0]);
        int main_cpu0 = sched_getcpu();
        t = bench_now();
        weft_parallel_for(rt, n_chunks, 1, run_range, NULL);
        double tw = bench_now() - t;
        thread_csw(csw[0]);
        ratios[r] = tw / tc;
        int count[MAX_THREADS] = { 0 };
        int cpu[MAX_THREADS];
        for (int i = 0; i < MAX_THREADS; i++)
            cpu[i] = -1;
        double last_end = 0;
        int per_cpu[64] = { 0 };
        for (size_t k = 0; k < n_chunks; k++) {
            if (recs[k].cpu >= 0 && recs[k].cpu < 64)
                per_cpu[recs[k].cpu]++;
            count[recs[k].thread]++;
            if (cpu[recs[k].thread] == -1)
                cpu[recs[k].thread] = recs[k].cpu;
            else if (cpu[recs[k].thread] != recs[k].cpu)
                cpu[recs[k].thread] = 99;   /* moved during the call */
            if (recs[k].t1 > last_end)
                last_end = recs[k].t1;
        }
        int most = 0;
        for (int c = 0; c < 64; c++)
            most = per_cpu[c] > most ? per_cpu[c] : most;
        busiest[r] = most;
        mains[r] = count[0];
        printf("rep %2d C %.3f ms weft %.3f ms ratio %.2f main-cpu %d tail %.0f us |", r,
               tc * 1e3, tw * 1e3, ratios[r], main_cpu0, (t + tw - last_end) * 1e6);
        for (int i = 0; i < n_tids && i < MAX_THREADS; i++)
            printf(" t%d:%dch@cpu%d csw+%ld/%ld", i, count[i], cpu[i],
                   csw[i][0] - before[i][0], csw[i][1] - before[i][1]);
        printf("\n");
    }
    weft_runtime_get_stats(rt, &st1);
    printf("median chunks on the busiest CPU %.0f of %zu, run by the caller %.0f; ",
           bench_median(busiest, reps), n_chunks, bench_median(mains, reps));
    printf("median ratio %.2f; runtime stats over the reps: tasks %llu steals %llu sleeps %llu\n",
           bench_median(ratios, reps), (unsigned long long)(st1.tasks - st0.tasks),
           (unsigned long long)(st1.steals - st0.steals),
           (unsigned long long)(st1.sleeps - st0.sleeps));
out:
    weft_runtime_destroy(&rt);
    free(xd);
    free(part);
    free(yd);
    free(xf);
    free(yf);
    return 0;
}
