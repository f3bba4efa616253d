/* weft_parallel_for and weft_parallel_map: coverage, nesting, balance,
 * the in-flight bound and cancellation. */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/internal.h"
#include "test_util.h"

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* --------------------------------------------------------- parallel_for */

typedef struct cover {
    size_t n;
    unsigned char *hits;   /* atomic */
    size_t grain;
    int bad;               /* atomic: a range broke the grain rule */
} cover;

static int cover_range(size_t b, size_t e, void *ctx)
{
    cover *c = ctx;
    if (b >= e || e > c->n || (c->grain && b % c->grain != 0))
        __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
    for (size_t i = b; i < e && i < c->n; i++)
        __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
    return 0;
}

static void check_cover(weft_runtime *rt, size_t n, size_t grain)
{
    cover c = { n, calloc(n ? n : 1, 1), grain, 0 };
    cr_assert_not_null(c.hits);
    cr_assert_eq(weft_parallel_for(rt, n, grain, cover_range, &c), 0);
    cr_assert_eq(c.bad, 0, "n=%zu grain=%zu: bad range", n, grain);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(c.hits[i], 1, "n=%zu grain=%zu: index %zu run %d times", n, grain, i,
                     c.hits[i]);
    free(c.hits);
}

Test(parallel_for, covers_every_index_once, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    size_t sizes[] = { 0, 1, 2, 7, 100, 1000, 100003 };
    size_t grains[] = { 0, 1, 7, 64 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof grains / sizeof *grains; j++)
            check_cover(rt, sizes[i], grains[j]);
    weft_runtime_destroy(&rt);
}

/* Nested loops: each outer range runs an inner parallel_for. */
typedef struct nested {
    weft_runtime *rt;
    uint64_t total;   /* atomic */
    int rc;           /* atomic */
} nested;

static int inner_range(size_t b, size_t e, void *ctx)
{
    uint64_t s = 0;
    for (size_t i = b; i < e; i++)
        s += i;
    __atomic_fetch_add((uint64_t *)ctx, s, __ATOMIC_RELAXED);
    return 0;
}

static int outer_range(size_t b, size_t e, void *ctx)
{
    nested *nd = ctx;
    for (size_t i = b; i < e; i++) {
        uint64_t s = 0;
        int rc = weft_parallel_for(nd->rt, 1000 + i, 0, inner_range, &s);
        if (rc)
            __atomic_store_n(&nd->rc, rc, __ATOMIC_RELAXED);
        __atomic_fetch_add(&nd->total, s, __ATOMIC_RELAXED);
    }
    return 0;
}

Test(parallel_for, nested_inside_parallel_for, .timeout = 60)
{
    nested nd = { test_runtime(4), 0, 0 };
    cr_assert_eq(weft_parallel_for(nd.rt, 64, 1, outer_range, &nd), 0);
    uint64_t want = 0;
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t m = 1000 + i;
        want += m * (m - 1) / 2;
    }
    cr_assert_eq(nd.rc, 0);
    cr_assert_eq(nd.total, want);
    weft_runtime_destroy(&nd.rt);
}

/* The first failure is returned; ranges not yet started are skipped.
 * Ranges may legitimately run before the failing one (a worker can run a
 * stolen half while the caller has not yet reached iteration 0), so the
 * test counts the callbacks that start after the failing callback raised
 * its flag.  Between that flag and the loop recording the status lies a
 * window the loop cannot close: the failing thread still has to return.
 * Under ThreadSanitizer that return path can last several quick callbacks
 * of another thread, and a preemption of the failing thread can stretch it to a time slice.  So a
 * callback that starts after the flag sleeps 1 ms (the first 64 of them:
 * a broken cancellation still ends fast), which hands the CPU back to the
 * failing thread and lets a thread start at most one callback per ms of
 * the window.  A correct loop then sees at most one such callback per
 * thread (the one whose check ran before the status became visible); the
 * bound allows 8 ms more of a starved failing thread.  With no
 * cancellation, all 199999 later callbacks start after the flag. */
#define FAIL_SLOW_CALLBACKS 64

typedef struct failing {
    size_t fail_at;
    int failed;       /* atomic: fail_at has raised its flag */
    uint64_t after;   /* atomic: callbacks started after that */
} failing;

static int fail_range(size_t b, size_t e, void *ctx)
{
    failing *f = ctx;
    if (__atomic_load_n(&f->failed, __ATOMIC_ACQUIRE) &&
        __atomic_add_fetch(&f->after, 1, __ATOMIC_RELAXED) <= FAIL_SLOW_CALLBACKS)
        sleep_us(1000);
    for (size_t i = b; i < e; i++) {
        if (i == f->fail_at) {
            __atomic_store_n(&f->failed, 1, __ATOMIC_RELEASE);
            return 42;
        }
    }
    return 0;
}

Test(parallel_for, error_cancels_the_rest, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    size_t n = 200000;
    failing f = { 0, 0, 0 };
    cr_assert_eq(weft_parallel_for(rt, n, 1, fail_range, &f), 42);
    /* Every thread that calls fn: the workers and this one. */
    uint64_t threads = weft_runtime_workers(rt) + 1;
    uint64_t bound = threads + 8;
    cr_assert_leq(f.after, bound, "%llu callbacks started after the failure (at most %llu)",
                  (unsigned long long)f.after, (unsigned long long)bound);
    failing f2 = { n - 1, 0, 0 };
    cr_assert_eq(weft_parallel_for(rt, n, 0, fail_range, &f2), 42);
    weft_runtime_destroy(&rt);
}

/* An outside caller on a runtime with a worker per CPU competes with the
 * workers for CPUs, so where the kernel puts the threads must not decide
 * who runs what: a worker that got iterations and then lost its CPU must
 * not keep the caller idle.  Here each worker's first callback blocks
 * until the caller has run more than half of the loop (or 10 s passed):
 * the caller can get there only by taking iterations beyond its first
 * share, which binary splitting from the caller never gave it (it kept
 * at most the lower half and handed the rest to the workers). */
typedef struct caller_share {
    size_t n;
    uint64_t by_caller;   /* atomic */
    uint64_t released;    /* atomic: 0 while workers wait */
} caller_share;

static _Thread_local bool tl_is_caller;
static _Thread_local bool tl_blocked_once;

static int share_range(size_t b, size_t e, void *ctx)
{
    caller_share *cs = ctx;
    if (tl_is_caller) {
        uint64_t got = __atomic_add_fetch(&cs->by_caller, e - b, __ATOMIC_RELAXED);
        if (got > cs->n / 2)
            __atomic_store_n(&cs->released, 1, __ATOMIC_RELEASE);
        return 0;
    }
    if (!tl_blocked_once) {
        tl_blocked_once = true;
        for (int ms = 0; ms < 10000 && !__atomic_load_n(&cs->released, __ATOMIC_ACQUIRE); ms++)
            sleep_us(1000);
    }
    return 0;
}

Test(parallel_for, outside_caller_takes_what_a_stalled_worker_left, .timeout = 60)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    weft_runtime *rt = test_runtime_of(cpus > 1 ? (unsigned)cpus : 1);
    caller_share cs = { 1024, 0, 0 };
    tl_is_caller = true;
    cr_assert_eq(weft_parallel_for(rt, cs.n, 1, share_range, &cs), 0);
    tl_is_caller = false;
    cr_assert_gt(cs.by_caller, cs.n / 2, "the caller ran %llu of %zu iterations",
                 (unsigned long long)cs.by_caller, cs.n);
    weft_runtime_destroy(&rt);
}

/* Once an outside caller has claimed every block itself, the runners it
 * spawned for the workers have nothing left to claim: the loop must return
 * without waiting for a worker to start them.  Here both workers are held
 * in tasks until the loop returns (or 10 s pass), and the runtime is made
 * to look as if they were idle and asleep, so that the caller's general
 * wait would neither take its queued tasks back (it does so only while no
 * worker looks for work or sleeps) nor end before the workers came back. */
typedef struct hold {
    uint64_t started;    /* atomic: holding tasks running */
    uint64_t released;   /* atomic: 1 once the loop returned */
    uint64_t timed_out;  /* atomic: a holder gave up waiting */
} hold;

static void hold_worker(void *arg)
{
    hold *h = arg;
    __atomic_add_fetch(&h->started, 1, __ATOMIC_ACQ_REL);
    int ms = 0;
    while (ms < 10000 && !__atomic_load_n(&h->released, __ATOMIC_ACQUIRE)) {
        sleep_us(1000);
        ms++;
    }
    if (ms == 10000)
        __atomic_store_n(&h->timed_out, 1, __ATOMIC_RELEASE);
}

Test(parallel_for, outside_caller_ends_runners_no_worker_started, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(2);
    /* The caller claims with the workers whatever the machine's CPUs. */
    rt->spare_core = false;
    hold h = { 0, 0, 0 };
    weft_group held;
    weft_group_init(&held, rt);
    for (int i = 0; i < 2; i++)
        weft_spawn(&held, hold_worker, &h);
    while (__atomic_load_n(&h.started, __ATOMIC_ACQUIRE) < 2)
        sleep_us(100);
    __atomic_add_fetch(&rt->work_ev.searching, 2, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&rt->work_ev.sleepers, 2, __ATOMIC_SEQ_CST);
    weft_runtime_stats st0, st1;
    weft_runtime_get_stats(rt, &st0);
    check_cover(rt, 64, 1);
    weft_runtime_get_stats(rt, &st1);
    __atomic_store_n(&h.released, 1, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&rt->work_ev.sleepers, 2, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&rt->work_ev.searching, 2, __ATOMIC_SEQ_CST);
    cr_assert_eq(weft_group_wait(&held), 0);
    cr_assert_eq(h.timed_out, 0, "the loop waited for the held workers");
    /* Its two runners ran on the caller, as outside tasks. */
    cr_assert_eq(st1.tasks - st0.tasks, 2, "tasks run during the loop: %llu",
                 (unsigned long long)(st1.tasks - st0.tasks));
    weft_runtime_destroy(&rt);
}

/* A loop on a worker pushes the upper half of its range while the other
 * worker is busy, so the half stays private; when that worker then goes
 * idle and asks for tasks, the loop must hand the half over between its
 * callbacks (it spawns nothing more while the half is queued).  Here the
 * loop's callbacks wait (100 ms each at most) until an iteration has run
 * on another thread: without the hand-over the other worker got its first
 * iteration only after the loop's thread had run its whole lower half. */
#define HALF_N 256

typedef struct private_half {
    weft_runtime *rt;
    pthread_t loop_thread;
    uint64_t blocker_started;   /* atomic */
    uint64_t released;          /* atomic: the blocking task may end */
    uint64_t loop_calls;        /* atomic: callbacks run on the loop's thread */
    uint64_t calls_before_other;   /* atomic: loop_calls when another thread
                                      started an iteration (UINT64_MAX: none) */
    unsigned char hits[HALF_N];    /* atomic */
} private_half;

static void busy_until_released(void *arg)
{
    private_half *ph = arg;
    __atomic_store_n(&ph->blocker_started, 1, __ATOMIC_RELEASE);
    for (int ms = 0; ms < 10000 && !__atomic_load_n(&ph->released, __ATOMIC_ACQUIRE); ms++)
        sleep_us(1000);
}

static int half_range(size_t b, size_t e, void *ctx)
{
    private_half *ph = ctx;
    for (size_t i = b; i < e; i++)
        __atomic_fetch_add(&ph->hits[i], 1, __ATOMIC_RELAXED);
    if (!pthread_equal(pthread_self(), ph->loop_thread)) {
        uint64_t none = UINT64_MAX;
        __atomic_compare_exchange_n(&ph->calls_before_other, &none,
                                    __atomic_load_n(&ph->loop_calls, __ATOMIC_ACQUIRE), false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        return 0;
    }
    __atomic_add_fetch(&ph->loop_calls, 1, __ATOMIC_ACQ_REL);
    if (!__atomic_load_n(&ph->released, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&ph->released, 1, __ATOMIC_RELEASE);
        return 0;
    }
    for (int ms = 0; ms < 100 && __atomic_load_n(&ph->calls_before_other, __ATOMIC_ACQUIRE) ==
                                     UINT64_MAX;
         ms++)
        sleep_us(1000);
    return 0;
}

static void loop_after_blocker(void *arg)
{
    private_half *ph = arg;
    for (int ms = 0; ms < 10000 && !__atomic_load_n(&ph->blocker_started, __ATOMIC_ACQUIRE);
         ms++)
        sleep_us(1000);
    ph->loop_thread = pthread_self();
    if (weft_parallel_for(ph->rt, HALF_N, 1, half_range, ph) != 0)
        __atomic_store_n(&ph->hits[0], 9, __ATOMIC_RELAXED);
}

Test(parallel_for, worker_loop_hands_its_private_half_to_a_thief, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(2);
    private_half ph = { .rt = rt, .calls_before_other = UINT64_MAX };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, busy_until_released, &ph);
    weft_spawn(&g, loop_after_blocker, &ph);
    cr_assert_eq(weft_group_wait(&g), 0);
    for (size_t i = 0; i < HALF_N; i++)
        cr_assert_eq(ph.hits[i], 1, "index %zu run %d times", i, ph.hits[i]);
    cr_assert_lt(ph.calls_before_other, HALF_N / 2,
                 "the other worker started after %llu of the loop thread's callbacks",
                 (unsigned long long)ph.calls_before_other);
    weft_runtime_destroy(&rt);
}

/* --------------------------------------------------------- parallel_map */

typedef struct mapcount {
    size_t n;
    unsigned char *hits;   /* atomic */
} mapcount;

static int count_index(size_t i, void *ctx)
{
    mapcount *m = ctx;
    if (i < m->n)
        __atomic_fetch_add(&m->hits[i], 1, __ATOMIC_RELAXED);
    return 0;
}

Test(parallel_map, covers_every_index_once, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    size_t sizes[] = { 0, 1, 3, 1000, 54321 };
    unsigned bounds[] = { 0, 1, 2, 5, 100 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof bounds / sizeof *bounds; j++) {
            mapcount m = { sizes[i], calloc(sizes[i] ? sizes[i] : 1, 1) };
            cr_assert_eq(weft_parallel_map(rt, m.n, bounds[j], count_index, &m), 0);
            for (size_t k = 0; k < m.n; k++)
                cr_assert_eq(m.hits[k], 1, "n=%zu bound=%u index %zu", m.n, bounds[j], k);
            free(m.hits);
        }
    weft_runtime_destroy(&rt);
}

typedef struct inflight {
    int now;    /* atomic */
    int peak;   /* atomic */
    long us;
    int want;   /* 0, or a peak each iteration waits for (up to 5 s) before its sleep */
} inflight;

static int track_index(size_t i, void *ctx)
{
    (void)i;
    inflight *f = ctx;
    int now = __atomic_add_fetch(&f->now, 1, __ATOMIC_SEQ_CST);
    int peak = __atomic_load_n(&f->peak, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&f->peak, &peak, now, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
    /* Reaching the bound must not depend on how soon a loaded machine
     * (ThreadSanitizer, parallel tests) runs the other runners: an
     * iteration waits for the peak it expects, far longer than any
     * scheduling delay, so that only a runtime that never runs `want` at
     * once misses it. */
    for (int waited_ms = 0; waited_ms < 5000 &&
                            __atomic_load_n(&f->peak, __ATOMIC_RELAXED) < f->want;
         waited_ms++)
        sleep_us(1000);
    sleep_us(f->us);
    __atomic_sub_fetch(&f->now, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int map_peak(weft_runtime *rt, size_t n, unsigned bound, long us, int want)
{
    inflight f = { 0, 0, us, want };
    cr_assert_eq(weft_parallel_map(rt, n, bound, track_index, &f), 0);
    cr_assert_eq(f.now, 0);
    return f.peak;
}

/* Eight workers on purpose: the bound, not the worker count, must be the
 * limit, and it must be reached. */
Test(parallel_map, inflight_peak_equals_bound, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(8);
    unsigned bounds[] = { 1, 2, 4, 8 };
    for (size_t j = 0; j < sizeof bounds / sizeof *bounds; j++) {
        int peak = map_peak(rt, 6 * bounds[j], bounds[j], 3000, (int)bounds[j]);
        cr_assert_eq(peak, (int)bounds[j], "bound %u: peak %d", bounds[j], peak);
    }
    /* More in flight than workers is allowed (the caller runs one too),
     * never more than the bound. */
    int peak = map_peak(rt, 40, 16, 3000, 0);
    cr_assert_leq(peak, 16);
    cr_assert_geq(peak, 2);
    weft_runtime_destroy(&rt);
}

/* Blocking iterations from a worker (nested map): still spread out. */
typedef struct nested_map {
    weft_runtime *rt;
    int peak;
} nested_map;

static void nested_map_task(void *p)
{
    nested_map *nm = p;
    inflight f = { 0, 0, 3000, 4 };
    if (weft_parallel_map(nm->rt, 12, 4, track_index, &f) == 0)
        nm->peak = f.peak;
}

Test(parallel_map, bound_reached_from_a_worker, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(8);
    nested_map nm = { rt, -1 };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, nested_map_task, &nm);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(nm.peak, 4);
    weft_runtime_destroy(&rt);
}

typedef struct map_fail {
    size_t fail_at;
    uint64_t ran;   /* atomic */
} map_fail;

static int fail_index(size_t i, void *ctx)
{
    map_fail *f = ctx;
    __atomic_fetch_add(&f->ran, 1, __ATOMIC_RELAXED);
    /* The failing call returns at once: a call that slept first had to be
     * woken, and on a busy machine (criterion runs tests in parallel) that
     * wake-up could lag by a scheduler tick while the other runner went
     * on starting calls. */
    if (i == f->fail_at)
        return -7;
    sleep_us(200);
    return 0;
}

Test(parallel_map, error_cancels_the_rest, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    map_fail f = { 5, 0 };
    cr_assert_eq(weft_parallel_map(rt, 1000, 2, fail_index, &f), -7);
    /* Indices are claimed in order, two runners: a handful past index 5. */
    cr_assert_leq(f.ran, 10, "%llu iterations ran", (unsigned long long)f.ran);
    map_fail u = { 0, 0 };
    cr_assert_eq(weft_parallel_map(rt, 100000, 0, fail_index, &u), -7);
    cr_assert_lt(u.ran, 100000);
    weft_runtime_destroy(&rt);
}

Test(loops, bad_input_returns_einval, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    cr_assert_eq(weft_parallel_for(NULL, 10, 0, inner_range, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_parallel_for: rt") != NULL, "%s", weft_errmsg());
    cr_assert_eq(weft_parallel_for(rt, 10, 0, NULL, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "fn") != NULL);
    cr_assert_eq(weft_parallel_map(NULL, 10, 0, count_index, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_parallel_map: rt") != NULL);
    cr_assert_eq(weft_parallel_map(rt, 10, 1, NULL, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_parallel_map: fn") != NULL);
    weft_runtime_destroy(&rt);
}

/* n up to SIZE_MAX is a valid count: a map whose first call fails returns
 * that call's code, and the claims never overflow (they used to be refused
 * with WEFT_EINVAL above SIZE_MAX / 4). */
static int fail_at_once(size_t i, void *ctx)
{
    (void)i;
    (void)ctx;
    return -7;
}

static int fail_range_at_once(size_t b, size_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
    return -7;
}

Test(loops, huge_n_returns_the_callback_code, .timeout = 60)
{
    unsigned workers[] = { 1, 2 };
    size_t ns[] = { SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 4 + 1 };
    unsigned bounds[] = { 0, 1, 2 };
    for (size_t w = 0; w < 2; w++) {
        weft_runtime *rt = test_runtime_of(workers[w]);
        for (size_t i = 0; i < 3; i++) {
            for (size_t b = 0; b < 3; b++) {
                int rc = weft_parallel_map(rt, ns[i], bounds[b], fail_at_once, NULL);
                cr_assert_eq(rc, -7, "%u workers, n=%zu, bound %u: %d (%s)", workers[w], ns[i],
                             bounds[b], rc, weft_errmsg());
            }
            cr_assert_eq(weft_parallel_for(rt, ns[i], 0, fail_range_at_once, NULL), -7);
            cr_assert_eq(weft_parallel_for(rt, ns[i], ns[i] / 3, fail_range_at_once, NULL), -7);
        }
        weft_runtime_destroy(&rt);
    }
}

/* A bound far above the worker count spawns no more runners than there are
 * threads to run them, so a map with a bound of UINT_MAX whose first call
 * fails returns at once instead of spawning a runner per index. */
Test(parallel_map, huge_bound_returns_at_once, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    uint64_t t0 = weft__now_ns();
    cr_assert_eq(weft_parallel_map(rt, (size_t)1 << 40, UINT_MAX, fail_at_once, NULL), -7);
    cr_assert_lt(weft__now_ns() - t0, 5000000000u, "took %.1f s",
                 (double)(weft__now_ns() - t0) / 1e9);
    weft_runtime_destroy(&rt);
}
