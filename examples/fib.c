/* fib(n) by naive fork-join recursion (no cutoff) with weft's typed tasks,
 * next to the serial version.  Usage: fib [n] (default 30);
 * WEFT_NUM_THREADS picks the number of workers.  Each best of 5 runs. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <weft.h>

static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/* A task: WEFT_SPAWN queues one branch for idle workers to steal, the
 * worker computes the other itself, and WEFT_SYNC joins the spawned one,
 * running it here unless it was stolen. */
WEFT_TASK_1(long, fib, int, n)
{
    if (n < 2)
        return n;
    WEFT_SPAWN(fib, n - 1);
    long b = WEFT_CALL(fib, n - 2);
    long a = WEFT_SYNC(fib);
    return a + b;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 30;
    if (n < 0 || n > 45) {
        fprintf(stderr, "fib: n must be in [0, 45]\n");
        return 1;
    }
    weft_runtime *rt;
    if (weft_runtime_create(NULL, &rt) != 0) {
        fprintf(stderr, "fib: %s\n", weft_errmsg());
        return 1;
    }
    long s = 0, w = 0;
    double best_serial = 1e30, best_weft = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ms();
        s = fib_serial(n);
        double t1 = now_ms();
        w = WEFT_RUN(rt, fib, n);   /* from this thread: runs on a worker */
        double t2 = now_ms();
        best_serial = t1 - t0 < best_serial ? t1 - t0 : best_serial;
        best_weft = t2 - t1 < best_weft ? t2 - t1 : best_weft;
    }
    printf("fib(%d) serial = %ld in %.2f ms\n", n, s, best_serial);
    printf("fib(%d) weft   = %ld in %.2f ms on %u workers\n", n, w, best_weft,
           weft_runtime_workers(rt));
    weft_runtime_stats st;
    weft_runtime_get_stats(rt, &st);
    printf("steals %llu of %llu attempts, sleeps %llu\n", (unsigned long long)st.steals,
           (unsigned long long)st.steal_attempts, (unsigned long long)st.sleeps);
    weft_runtime_destroy(&rt);
    return w == s ? 0 : 1;
}
