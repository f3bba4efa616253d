/* Tests whose outcome depends on how the machine schedules threads: CPU
 * used by idle workers, and work spreading over threads.  They run in the
 * "timing" suite, one test program at a time (meson's is_parallel: false),
 * and each retries or takes the least of several rounds, since load from
 * other processes only adds CPU time and delays a thread's start. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/internal.h"
#include "test_util.h"
#include "test_sanitized.h"

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Online CPUs, at least 1 (the count weft_runtime_create sizes by). */
static unsigned cpus_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int sum_range(size_t b, size_t e, void *ctx)
{
    uint64_t s = 0;
    for (size_t i = b; i < e; i++)
        s += i;
    __atomic_fetch_add((uint64_t *)ctx, s, __ATOMIC_RELAXED);
    return 0;
}

Test(timing, idle_runtime_uses_little_cpu, .timeout = 120)
{
    weft_runtime *rt = test_runtime(4);
    uint64_t s = 0;
    cr_assert_eq(weft_parallel_for(rt, 1000000, 0, sum_range, &s), 0);
    /* Let the workers finish spinning and fall asleep. */
    sleep_us(200000);
    double t0 = cpu_seconds();
    sleep_us(1000000);
    double used = cpu_seconds() - t0;
    /* Under 2% of a core (20 ms over 1 s); sanitizers' own threads get
     * more room. */
    double limit = TEST_SANITIZED ? 0.05 : 0.02;
    cr_assert_lt(used, limit, "an idle runtime used %.1f ms of CPU in 1 s", used * 1e3);
    weft_runtime_destroy(&rt);
}

/* A burst of sleeping calls on many more workers than CPUs.  When it ends
 * the workers run out of work together: only spin_cap of them may spin
 * before sleeping, the others sleep at once.  If all of them spun, the
 * spin-down of 64 workers on a few CPUs would cost several times the
 * limit below. */
static int nap(size_t i, void *ctx)
{
    (void)i, (void)ctx;
    sleep_us(1000);
    return 0;
}

Test(timing, many_workers_spin_down_cheaply, .timeout = 120)
{
    unsigned cpus = cpus_online();
    unsigned workers = cpus <= 8 ? 64 : cpus * 8;
    weft_runtime *rt = test_runtime_of(workers);
    cr_assert_eq(rt->spin_cap, cpus > 1 ? cpus / 2 : 1);
    /* The least of three bursts: noise only adds. */
    double least = 1e9;
    for (int round = 0; round < 3; round++) {
        cr_assert_eq(weft_parallel_map(rt, 4 * (size_t)workers, 0, nap, NULL), 0);
        double t0 = cpu_seconds();
        sleep_us(200000);
        double used = cpu_seconds() - t0;
        if (used < least)
            least = used;
        cr_log_info("burst %d: %.2f ms of CPU in the 200 ms after it", round, used * 1e3);
        int32_t spinners = __atomic_load_n(&rt->work_ev.spinners, __ATOMIC_RELAXED);
        cr_assert(spinners >= 0 && spinners <= (int32_t)rt->spin_cap, "%d spinners", spinners);
    }
    /* The limit leaves room for a loaded machine and sanitizers' threads,
     * and is still far below what every worker spinning down costs. */
    double limit = (TEST_SANITIZED ? 0.010 : 0.006) + 0.002 * rt->spin_cap;
    cr_assert_lt(least, limit, "%.1f ms of CPU in the 200 ms after a burst (limit %.1f)",
                 least * 1e3, limit * 1e3);
    weft_runtime_destroy(&rt);
}

/* Unbalanced iterations: only the last few are slow (they sleep).  With
 * several workers, lazy splitting must hand them to more than one. */
typedef struct skew {
    size_t n;
    uint64_t sum;          /* atomic */
    unsigned long workers; /* atomic bitmask of workers that ran a slow one */
    weft_runtime *rt;
} skew;

static int skew_range(size_t b, size_t e, void *ctx)
{
    skew *s = ctx;
    for (size_t i = b; i < e; i++) {
        if (i + 8 >= s->n) {
            sleep_us(5000);
            int w = weft__worker_index(s->rt);
            unsigned long bit = w >= 0 ? 1ul << (w % 63) : 1ul << 63;
            __atomic_fetch_or(&s->workers, bit, __ATOMIC_RELAXED);
        }
        __atomic_fetch_add(&s->sum, (uint64_t)i, __ATOMIC_RELAXED);
    }
    return 0;
}

/* Which threads run the slow tail depends on when each gets a CPU: on a
 * loaded machine one thread may run a whole loop before the other is
 * scheduled.  A round that spreads is the proof; up to 20 rounds. */
static bool tail_spreads(weft_runtime *rt, size_t grain, unsigned threads)
{
    for (int round = 0; round < 20; round++) {
        skew s = { 2000, 0, 0, rt };
        cr_assert_eq(weft_parallel_for(rt, s.n, grain, skew_range, &s), 0);
        cr_assert_eq(s.sum, (uint64_t)s.n * (s.n - 1) / 2);
        if ((unsigned)__builtin_popcountl(s.workers) >= threads)
            return true;
    }
    return false;
}

Test(timing, unbalanced_iterations_spread, .timeout = 120)
{
    weft_runtime *rt = test_runtime(4);
    if (weft_runtime_workers(rt) >= 2)
        cr_assert(tail_spreads(rt, 1, 2), "the slow tail ran on one thread in 20 rounds");
    weft_runtime_destroy(&rt);
}

/* One worker and this (outside) thread: the worker's deque is solo, so
 * the two must still share the slow tail, not leave it to whichever got
 * the upper half. */
Test(timing, outside_caller_and_one_worker_share_the_slow_tail, .timeout = 120)
{
    weft_runtime *rt = test_runtime_of(1);
    cr_assert(tail_spreads(rt, 0, 2), "the slow tail ran on one thread in 20 rounds");
    weft_runtime_destroy(&rt);
}

/* A group set up on a worker, then spawned into and waited for by this
 * outside thread: a child of ~2 ms must not leave its waiter asleep until
 * the sleep's bound (1 s): a wait near that long is a lost wake-up. */
static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

typedef struct slow_fib {
    int n;
    long result;
} slow_fib;

static void slow_fib_task(void *p)
{
    slow_fib *a = p;
    sleep_us(2000);
    a->result = fib_serial(a->n);
}

static weft_runtime *g_rt;

static void init_group_task(void *p)
{
    weft_group_init(p, g_rt);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(timing, outside_wait_is_woken, .timeout = 120)
{
    static const unsigned counts[] = { 1, 2 };
    for (int c = 0; c < 2; c++) {
        g_rt = test_runtime_of(counts[c]);
        /* The least of 3 rounds: load only adds. */
        double least = 1e9;
        for (int round = 0; round < 3; round++) {
            weft_group g, outer;
            weft_group_init(&outer, g_rt);
            weft_spawn(&outer, init_group_task, &g);
            cr_assert_eq(weft_group_wait(&outer), 0);
            slow_fib a = { 12, 0 };
            double t0 = now_s();
            weft_spawn(&g, slow_fib_task, &a);
            cr_assert_eq(weft_group_wait(&g), 0, "%s", weft_errmsg());
            double waited = now_s() - t0;
            cr_assert_eq(a.result, fib_serial(a.n));
            least = waited < least ? waited : least;
        }
        cr_assert_lt(least, 0.9, "workers %u: the wait took %.3f s", counts[c], least);
        weft_runtime_destroy(&g_rt);
    }
}
