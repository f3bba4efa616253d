/* Typed fork-join tasks (WEFT_TASK_n, WEFT_SPAWN, WEFT_SYNC, WEFT_CALL,
 * WEFT_RUN): results against serial references with 0..6 arguments, void
 * tasks, stolen children, a full task stack, generic calls inside task
 * bodies, and runs from outside threads and from workers. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "runtime/internal.h"
#include "test_util.h"

static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

WEFT_TASK_1(long, fib, int, n)
{
    if (n < 2)
        return n;
    WEFT_SPAWN(fib, n - 1);
    long b = WEFT_CALL(fib, n - 2);
    long a = WEFT_SYNC(fib);
    return a + b;
}

Test(tasks, fib_matches_serial, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    for (int n = 0; n <= 25; n += 5)
        cr_assert_eq(WEFT_RUN(rt, fib, n), fib_serial(n), "fib(%d)", n);
    weft_runtime_destroy(&rt);
}

/* One task per arity, each summing its arguments with distinct weights, so
 * that an argument in the wrong place shows. */
WEFT_TASK_0(int, zero) { return 7; }
WEFT_TASK_2(long, two, int, a, long, b) { return a + 10 * b; }
WEFT_TASK_3(long, three, int, a, char, b, short, c) { return a + 10 * b + 100 * c; }
WEFT_TASK_4(double, four, double, a, float, b, int, c, long, d)
{
    return a + 10 * b + 100 * c + 1000 * d;
}
WEFT_TASK_5(long, five, int, a, int, b, int, c, int, d, int, e)
{
    return a + 10 * b + 100 * c + 1000 * d + 10000 * e;
}
WEFT_TASK_6(long, six, long, a, long, b, long, c, long, d, long, e, long, f)
{
    return a + 10 * b + 100 * c + 1000 * d + 10000 * e + 100000 * f;
}

typedef struct pair {
    long lo, hi;
} pair;

/* A struct result and a pointer argument. */
WEFT_TASK_2(pair, minmax, const long *, v, int, n)
{
    if (n == 1)
        return (pair){ v[0], v[0] };
    WEFT_SPAWN(minmax, v, n / 2);
    pair r = WEFT_CALL(minmax, v + n / 2, n - n / 2);
    pair l = WEFT_SYNC(minmax);
    return (pair){ l.lo < r.lo ? l.lo : r.lo, l.hi > r.hi ? l.hi : r.hi };
}

WEFT_TASK_1(long, arities, int, k)
{
    (void)k;
    WEFT_SPAWN(zero);
    WEFT_SPAWN(two, 1, 2);
    WEFT_SPAWN(three, 1, 2, 3);
    WEFT_SPAWN(four, 1.0, 2.0f, 3, 4);
    WEFT_SPAWN(five, 1, 2, 3, 4, 5);
    WEFT_SPAWN(six, 1, 2, 3, 4, 5, 6);
    long s = WEFT_SYNC(six);
    if (s != 654321)
        return -6;
    if (WEFT_SYNC(five) != 54321)
        return -5;
    if (WEFT_SYNC(four) != 4321.0)
        return -4;
    if (WEFT_SYNC(three) != 321)
        return -3;
    if (WEFT_SYNC(two) != 21)
        return -2;
    if (WEFT_SYNC(zero) != 7)
        return -1;
    return WEFT_CALL(six, 6, 5, 4, 3, 2, 1);
}

Test(tasks, every_arity_passes_its_arguments, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(WEFT_RUN(rt, arities, i), 123456, "round %d", i);
    cr_assert_eq(WEFT_RUN(rt, zero), 7);
    cr_assert_eq(WEFT_RUN(rt, five, 5, 4, 3, 2, 1), 12345);
    long v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (i * 7919) % 1009 - 500;
    pair p = WEFT_RUN(rt, minmax, v, 1000);
    long lo = v[0], hi = v[0];
    for (int i = 1; i < 1000; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    cr_assert_eq(p.lo, lo);
    cr_assert_eq(p.hi, hi);
    weft_runtime_destroy(&rt);
}

/* An argument aligned beyond a slot's bytes (32 against 16) goes into and
 * out of its slot with memcpy instead of as a struct; the sums show an
 * argument copied wrong, whether the child ran here or was stolen. */
typedef struct over_aligned {
    _Alignas(32) long depth;
    long x, y;
} over_aligned;

static long over_aligned_serial(over_aligned a)
{
    if (a.depth == 0)
        return a.x + 1000 * a.y;
    over_aligned l = { a.depth - 1, a.x + 1, a.y }, r = { a.depth - 1, a.x, a.y + 1 };
    return over_aligned_serial(l) + over_aligned_serial(r);
}

WEFT_TASK_1(long, over_aligned_sum, over_aligned, a)
{
    if (a.depth == 0)
        return a.x + 1000 * a.y;
    over_aligned l = { a.depth - 1, a.x + 1, a.y }, r = { a.depth - 1, a.x, a.y + 1 };
    WEFT_SPAWN(over_aligned_sum, l);
    long s = WEFT_CALL(over_aligned_sum, r);
    return WEFT_SYNC(over_aligned_sum) + s;
}

Test(tasks, over_aligned_arguments_pass_intact, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    over_aligned root = { 12, 3, 5 };
    long want = over_aligned_serial(root);
    for (int i = 0; i < 20; i++)
        cr_assert_eq(WEFT_RUN(rt, over_aligned_sum, root), want, "round %d", i);
    weft_runtime_destroy(&rt);
}

/* Void tasks: a tree that counts its leaves into an atomic counter. */
static long leaves;  /* (atomic) */

WEFT_VOID_TASK_1(tree, int, depth)
{
    if (depth == 0) {
        __atomic_fetch_add(&leaves, 1, __ATOMIC_SEQ_CST);
        return;
    }
    WEFT_SPAWN(tree, depth - 1);
    WEFT_SPAWN(tree, depth - 1);
    WEFT_SYNC(tree);
    WEFT_SYNC(tree);
}

Test(tasks, void_tasks_run_once_each, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    __atomic_store_n(&leaves, 0, __ATOMIC_SEQ_CST);
    WEFT_RUN(rt, tree, 14);
    cr_assert_eq(__atomic_load_n(&leaves, __ATOMIC_SEQ_CST), 1 << 14);
    weft_runtime_destroy(&rt);
}

/* Stolen children: with several workers, a wide tree spreads; every node
 * runs once and the results add up. */
WEFT_TASK_2(long, wide, int, depth, int, fan)
{
    if (depth == 0)
        return 1;
    for (int i = 0; i < fan; i++)
        WEFT_SPAWN(wide, depth - 1, fan);
    long s = 0;
    for (int i = 0; i < fan; i++)
        s += WEFT_SYNC(wide);
    return s;
}

Test(tasks, wide_trees_add_up, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    for (int r = 0; r < 5; r++)
        cr_assert_eq(WEFT_RUN(rt, wide, 6, 6), 46656);
    cr_assert_eq(WEFT_RUN(rt, fib, 24), fib_serial(24));
    weft_runtime_destroy(&rt);
}

/* A child that a thief took: it runs on the other worker, and its result
 * comes back through its slot.  The owner keeps spawning and syncing small
 * tasks (each spawn serves a thief's request) until the child has run. */
static int child_worker = -1;  /* (atomic) */
static weft_runtime *steal_rt;

WEFT_TASK_1(long, where, int, x)
{
    __atomic_store_n(&child_worker, weft__worker_index(steal_rt), __ATOMIC_SEQ_CST);
    return x * 3;
}

WEFT_TASK_1(long, owner_of_stolen, int, x)
{
    /* On an outside thread nobody could steal the child: the loop below
     * would never end. */
    if (weft__worker_index(steal_rt) < 0)
        return -1;
    WEFT_SPAWN(where, x);
    while (__atomic_load_n(&child_worker, __ATOMIC_SEQ_CST) < 0) {
        WEFT_SPAWN(zero);
        (void)WEFT_SYNC(zero);
    }
    long r = WEFT_SYNC(where);
    return r * 1000 + weft__worker_index(steal_rt);
}

Test(tasks, stolen_child_returns_its_result, .timeout = 60)
{
    steal_rt = test_runtime_of(2);
    /* Many rounds: each is a fresh WEFT_RUN from this outside thread, whose
     * root must reach a worker however busy the workers were a moment
     * before. */
    for (int round = 0; round < 200; round++) {
        __atomic_store_n(&child_worker, -1, __ATOMIC_SEQ_CST);
        long r = WEFT_RUN(steal_rt, owner_of_stolen, round);
        cr_assert_neq(r, -1, "round %d: the root ran on the outside thread", round);
        cr_assert_eq(r / 1000, round * 3, "round %d", round);
        cr_assert_neq(r % 1000, __atomic_load_n(&child_worker, __ATOMIC_SEQ_CST),
                      "round %d: not stolen", round);
    }
    weft_runtime_destroy(&steal_rt);
}

/* A WEFT_RUN from an outside thread while every worker is busy: the root
 * waits for a worker instead of running on the caller, whose stack nobody
 * steals from.  The blockers hold both workers until the root has run, or
 * for 200 ms at most (then a worker is free to take it). */
static int blockers_started;  /* (atomic) */
static int root_ran_on;  /* (atomic) */
static weft_runtime *busy_rt;

static void blocker(void *p)
{
    (void)p;
    __atomic_fetch_add(&blockers_started, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 2000 && __atomic_load_n(&root_ran_on, __ATOMIC_SEQ_CST) == -2; i++) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

WEFT_TASK_0(int, note_worker)
{
    int at = weft__worker_index(busy_rt);
    __atomic_store_n(&root_ran_on, at, __ATOMIC_SEQ_CST);
    return at;
}

Test(tasks, root_from_outside_waits_for_a_busy_worker, .timeout = 60)
{
    busy_rt = test_runtime_of(2);
    for (int round = 0; round < 3; round++) {
        __atomic_store_n(&blockers_started, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&root_ran_on, -2, __ATOMIC_SEQ_CST);
        weft_group g;
        weft_group_init(&g, busy_rt);
        weft_spawn(&g, blocker, NULL);
        weft_spawn(&g, blocker, NULL);
        while (__atomic_load_n(&blockers_started, __ATOMIC_SEQ_CST) < 2)
            sched_yield();
        int at = WEFT_RUN(busy_rt, note_worker);
        cr_assert_eq(weft_group_wait(&g), 0);
        cr_assert_geq(at, 0, "round %d: the root ran on the outside thread", round);
    }
    weft_runtime_destroy(&busy_rt);
}

/* A full stack runs children at once and keeps their results for their
 * syncs: an 8-slot stack under fib(20) (10 spawns pending at the deepest),
 * then a 256-slot one under a flat loop of 400 spawns. */
WEFT_TASK_1(long, flat, int, n)
{
    for (int i = 0; i < n; i++)
        WEFT_SPAWN(two, i, 1);
    long s = 0;
    for (int i = 0; i < n; i++)
        s += WEFT_SYNC(two);
    return s;
}

Test(tasks, full_stack_runs_children_at_once, .timeout = 60)
{
    weft_config cfg;
    weft_config_default(&cfg);
    for (unsigned workers = 1; workers <= 2; workers++) {
        cfg.workers = workers;
        cfg.task_stack = 8;
        weft_runtime *rt = NULL;
        cr_assert_eq(weft_runtime_create(&cfg, &rt), 0, "%s", weft_errmsg());
        cr_assert_eq(WEFT_RUN(rt, fib, 20), fib_serial(20));
        weft_runtime_stats st;
        weft_runtime_get_stats(rt, &st);
        cr_assert_gt(st.overflows, 0);
        weft_runtime_destroy(&rt);
        cfg.task_stack = 256;
        cr_assert_eq(weft_runtime_create(&cfg, &rt), 0, "%s", weft_errmsg());
        /* sum(i + 10) for i < 400, the last 144 (or more) run at once. */
        cr_assert_eq(WEFT_RUN(rt, flat, 400), 400 * 399 / 2 + 4000);
        weft_runtime_get_stats(rt, &st);
        cr_assert_geq(st.overflows, 144, "%llu overflows", (unsigned long long)st.overflows);
        weft_runtime_destroy(&rt);
    }
}

/* Past the stack and its overflow area (16 + 16 spawns not synced): an
 * abort with a message, never a silent overwrite. */
Test(tasks, stack_and_overflow_full_aborts, .timeout = 60, .signal = SIGABRT)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.task_stack = 16;
    cfg.workers = 1;
    weft_runtime *rt = NULL;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), 0);
    WEFT_RUN(rt, flat, 40);
}

/* A task body may use the rest of weft: a parallel_for and a group of
 * generic children between its own spawn and sync. */
typedef struct mixed {
    long sum;  /* (atomic) */
} mixed;

static int add_range(size_t b, size_t e, void *p)
{
    mixed *m = p;
    for (size_t i = b; i < e; i++)
        __atomic_fetch_add(&m->sum, (long)i, __ATOMIC_SEQ_CST);
    return 0;
}

static void add_one(void *p)
{
    __atomic_fetch_add(&((mixed *)p)->sum, 1, __ATOMIC_SEQ_CST);
}

static weft_runtime *mixed_rt;

WEFT_TASK_2(long, with_loops, mixed *, m, int, depth)
{
    if (depth == 0) {
        weft_group g;
        weft_group_init(&g, mixed_rt);
        for (int i = 0; i < 10; i++)
            weft_spawn(&g, add_one, m);
        if (weft_group_wait(&g) != 0)
            return -1000;
        return weft_parallel_for(mixed_rt, 100, 7, add_range, m) == 0 ? 1 : -1000;
    }
    WEFT_SPAWN(with_loops, m, depth - 1);
    long b = WEFT_CALL(with_loops, m, depth - 1);
    long a = WEFT_SYNC(with_loops);
    return a + b;
}

Test(tasks, bodies_call_loops_and_groups, .timeout = 60)
{
    mixed_rt = test_runtime(2);
    mixed m;
    m.sum = 0;
    cr_assert_eq(WEFT_RUN(mixed_rt, with_loops, &m, 6), 64);
    cr_assert_eq(__atomic_load_n(&m.sum, __ATOMIC_SEQ_CST), 64 * (10 + 4950));
    weft_runtime_destroy(&mixed_rt);
}

Test(tasks, bodies_call_loops_and_groups_often, .timeout = 60)
{
    for (unsigned workers = 2; workers <= 8; workers *= 2) {
        mixed_rt = test_runtime_of(workers);
        for (int round = 0; round < 40; round++) {
            mixed m;
            m.sum = 0;
            cr_assert_eq(WEFT_RUN(mixed_rt, with_loops, &m, 6), 64, "%u workers, round %d",
                         workers, round);
            cr_assert_eq(__atomic_load_n(&m.sum, __ATOMIC_SEQ_CST), 64 * (10 + 4950),
                         "%u workers, round %d",
                         workers, round);
        }
        weft_runtime_destroy(&mixed_rt);
    }
}

/* WEFT_RUN from a worker (inside a generic task and a loop body) runs the
 * task there; from several outside threads at once it queues each. */
typedef struct run_in {
    weft_runtime *rt;
    long got;
} run_in;

static void run_inside(void *p)
{
    run_in *r = p;
    r->got = WEFT_RUN(r->rt, fib, 18);
}

static int run_in_loop(size_t b, size_t e, void *p)
{
    run_in *r = p;
    for (size_t i = b; i < e; i++)
        if (WEFT_RUN(r->rt, fib, 15) != fib_serial(15))
            return -1;
    return 0;
}

static void *outside_runner(void *p)
{
    run_in *r = p;
    for (int i = 0; i < 20; i++)
        if (WEFT_RUN(r->rt, fib, 16) != fib_serial(16))
            r->got = -1;
    return NULL;
}

Test(tasks, run_from_workers_and_outside_threads, .timeout = 60)
{
    run_in r = { test_runtime(2), 0 };
    weft_group g;
    weft_group_init(&g, r.rt);
    weft_spawn(&g, run_inside, &r);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(r.got, fib_serial(18));
    cr_assert_eq(weft_parallel_for(r.rt, 16, 1, run_in_loop, &r), 0);
    pthread_t th[4];
    run_in rs[4];
    for (int i = 0; i < 4; i++) {
        rs[i] = (run_in){ r.rt, 0 };
        cr_assert_eq(pthread_create(&th[i], NULL, outside_runner, &rs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(rs[i].got, 0, "outside thread %d", i);
    }
    weft_runtime_destroy(&r.rt);
}

Test(tasks, run_on_no_runtime_returns_zero, .timeout = 60)
{
    cr_assert_eq(WEFT_RUN(NULL, fib, 10), 0);
    cr_assert(strstr(weft_errmsg(), "WEFT_RUN: rt is NULL"), "%s", weft_errmsg());
}
