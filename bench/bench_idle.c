/* Idle cost and start-up cost of a runtime.  Idle: the CPU time the whole
 * process uses during 1 s of wall time while an n-worker runtime has
 * nothing to do, right after creation and right after a burst of work (so
 * that any spinning before sleep is counted), with OpenMP and TBB after the
 * same burst for reference; and the same after a burst of blocking calls on
 * many more threads than CPUs (BLOCK_THREADS threads, each call sleeping
 * 1 ms), the case of a runtime sized for blocking work.  Create + destroy:
 * the median time of weft_runtime_create + weft_runtime_destroy, and of
 * starting and joining the same number of bare pthreads as a floor. */
#include "bench.h"
#include "contenders.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft.h>

static uint64_t buf[100000];

static int body(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    for (size_t i = b; i < e; i++)
        buf[i] = bench_item(i, NULL);
    return 0;
}

/* CPU seconds used by the process over `wall` seconds of sleep. */
static double idle_cpu(double wall)
{
    double c0 = bench_process_cpu();
    bench_settle((int)(wall * 1000));
    return bench_process_cpu() - c0;
}

/* The blocking burst: BLOCK_CALLS calls that sleep 1 ms on BLOCK_THREADS
 * threads. */
#define BLOCK_THREADS 64
#define BLOCK_CALLS   256

static int nap(size_t i, void *ctx)
{
    (void)i, (void)ctx;
    bench_settle(1);
    return 0;
}

static void *nothing(void *p)
{
    return p;
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11) * 10 + 1;
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;

    printf("\n== idle: process CPU time over 1 s of wall time (ms) ==\n");
    printf("%-34s %7s %10s\n", "what", "threads", "cpu ms");
    for (int w = 0; w < nw; w++) {
        weft_runtime *rt = bench_runtime(workers[w]);
        printf("%-34s %7u %10.3f\n", "weft, just created", workers[w], 1e3 * idle_cpu(1.0));
        if (weft_parallel_for(rt, 100000, 0, body, NULL) != 0)
            bench_fail("weft_parallel_for", 1, 0);
        printf("%-34s %7u %10.3f\n", "weft, right after a parallel_for", workers[w],
               1e3 * idle_cpu(1.0));
        weft_runtime_stats st;
        weft_runtime_get_stats(rt, &st);
        printf("%-34s %7u %10" PRIu64 "\n", "  (weft stats: sleeps)", workers[w], st.sleeps);
        weft_runtime_destroy(&rt);
        fflush(stdout);
    }
    for (int w = 0; w < nw; w++) {
        omp_begin(workers[w]);
        omp_map_static(buf, 100000, NULL);
        printf("%-34s %7u %10.3f\n", "openmp, right after a parallel for", workers[w],
               1e3 * idle_cpu(1.0));
        tbb_begin(workers[w]);
        tbb_map(buf, 100000, NULL);
        printf("%-34s %7u %10.3f\n", "tbb, right after a parallel_for", workers[w],
               1e3 * idle_cpu(1.0));
        tbb_end();
        fflush(stdout);
    }

    printf("\n== idle after %d calls that sleep 1 ms on %d threads: process CPU time "
           "over the next 1 s (ms) ==\n", BLOCK_CALLS, BLOCK_THREADS);
    printf("%-34s %7s %10s\n", "what", "threads", "cpu ms");
    {
        weft_runtime *rt = bench_runtime(BLOCK_THREADS);
        bench_settle(200);
        if (weft_parallel_map(rt, BLOCK_CALLS, 0, nap, NULL) != 0)
            bench_fail("weft_parallel_map", 1, 0);
        printf("%-34s %7u %10.3f\n", "weft parallel_map", BLOCK_THREADS, 1e3 * idle_cpu(1.0));
        weft_runtime_destroy(&rt);
        omp_begin(BLOCK_THREADS);
        omp_sleep_each(BLOCK_CALLS, 1000);
        printf("%-34s %7u %10.3f\n", "openmp dynamic,1", BLOCK_THREADS, 1e3 * idle_cpu(1.0));
        tbb_begin(BLOCK_THREADS);
        tbb_sleep_each(BLOCK_CALLS, 1000);
        printf("%-34s %7u %10.3f\n", "tbb simple_partitioner", BLOCK_THREADS,
               1e3 * idle_cpu(1.0));
        tbb_end();
        fflush(stdout);
    }

    printf("\n== runtime create + destroy: median of %d (us) ==\n", reps);
    printf("%-34s %7s %10s\n", "what", "threads", "us");
    for (int w = 0; w < nw; w++) {
        double v[BENCH_MAX_REPS];
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now();
            weft_runtime *rt = bench_runtime(workers[w]);
            weft_runtime_destroy(&rt);
            v[r] = bench_now() - t0;
        }
        printf("%-34s %7u %10.1f\n", "weft create + destroy", workers[w], 1e6 * bench_median(v, reps));
        for (int r = 0; r < reps; r++) {
            pthread_t th[BENCH_MAX_WORKERS];
            double t0 = bench_now();
            for (unsigned k = 0; k < workers[w] && k < BENCH_MAX_WORKERS; k++)
                pthread_create(&th[k], NULL, nothing, NULL);
            for (unsigned k = 0; k < workers[w] && k < BENCH_MAX_WORKERS; k++)
                pthread_join(th[k], NULL);
            v[r] = bench_now() - t0;
        }
        printf("%-34s %7u %10.1f\n", "pthread create + join (floor)", workers[w],
               1e6 * bench_median(v, reps));
        fflush(stdout);
    }
    for (size_t i = 0; i < 100000; i++)
        bench_sink += buf[i];
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
