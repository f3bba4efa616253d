/* fib(30) by naive fork-join recursion (no cutoff) on weft, next to the
 * serial version.  Usage: fib [n] (default 30); WEFT_NUM_THREADS picks the
 * number of workers. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, nanosleep under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <weft.h>

static weft_runtime *rt;

typedef struct fib_arg {
    int n;
    long result;
} fib_arg;

static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/* Spawns one branch, computes the other itself, then joins. */
static void fib_task(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->result = a->n;
        return;
    }
    fib_arg x = { a->n - 1, 0 }, y = { a->n - 2, 0 };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, fib_task, &x);
    fib_task(&y);
    weft_group_wait(&g);
    a->result = x.result + y.result;
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
    int rc = weft_runtime_create(NULL, &rt);
    if (rc) {
        fprintf(stderr, "fib: %s\n", weft_errmsg());
        return 1;
    }
    double t0 = now_ms();
    long s = fib_serial(n);
    double t1 = now_ms();
    /* The root runs on a worker, so that every spawn uses a deque. */
    fib_arg a = { n, 0 };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, fib_task, &a);
    rc = weft_group_wait(&g);
    double t2 = now_ms();
    printf("fib(%d) serial = %ld in %.2f ms\n", n, s, t1 - t0);
    printf("fib(%d) weft   = %ld in %.2f ms on %u workers\n", n, a.result, t2 - t1,
           weft_runtime_workers(rt));
    weft_runtime_stats st;
    weft_runtime_get_stats(rt, &st);
    printf("tasks %llu, steals %llu of %llu attempts, sleeps %llu\n",
           (unsigned long long)st.tasks, (unsigned long long)st.steals,
           (unsigned long long)st.steal_attempts, (unsigned long long)st.sleeps);
    weft_runtime_destroy(&rt);
    return (rc == 0 && a.result == s) ? 0 : 1;
}
