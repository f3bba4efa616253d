/* Fork-join groups: results of recursive task trees, nesting, outside
 * threads, group reuse. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/internal.h"
#include "test_util.h"

/* ------------------------------------------------------------------- fib */

typedef struct fib_arg {
    int n;
    long result;
} fib_arg;

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static weft_runtime *g_rt;

/* How a fib node forks and joins: through the header's inline fast paths,
 * or through the functions (their addresses, and the names in
 * parentheses, which the header's macros leave alone). */
typedef enum fork_way { INLINE_PATHS, FUNCTIONS, INLINE_WAIT_CALLED } fork_way;

static void (*const spawn_call)(weft_group *, weft_task_fn, void *) = weft_spawn;
static int (*const wait_call)(weft_group *) = weft_group_wait;

static void fib_node(fib_arg *a, weft_task_fn self, fork_way way)
{
    if (a->n < 2) {
        a->result = a->n;
        return;
    }
    fib_arg x = { a->n - 1, 0 }, y = { a->n - 2, 0 };
    weft_group g;
    int rc;
    if (way == FUNCTIONS) {
        (weft_group_init)(&g, g_rt);
        spawn_call(&g, self, &x);
        self(&y);
        rc = wait_call(&g);
    } else {
        weft_group_init(&g, g_rt);
        weft_spawn(&g, self, &x);
        self(&y);
        rc = way == INLINE_PATHS ? weft_group_wait(&g) : (weft_group_wait)(&g);
    }
    a->result = rc ? -1000000 : x.result + y.result;
}

static void fib_task(void *p)
{
    fib_node(p, fib_task, INLINE_PATHS);
}

/* Both kinds meet on one stack, a group set up by one kind and waited for
 * by the other: the functions at odd n, the inline paths at even n (the
 * wait called at multiples of 4). */
static void fib_mixed_task(void *p)
{
    int n = ((fib_arg *)p)->n;
    fib_node(p, fib_mixed_task, n % 2 ? FUNCTIONS : n % 4 ? INLINE_PATHS : INLINE_WAIT_CALLED);
}

Test(forkjoin, fib_matches_serial, .timeout = 60)
{
    g_rt = test_runtime(4);
#if defined(__SANITIZE_THREAD__)
    int n = 16;
#else
    int n = 22;
#endif
    /* From an outside thread (this one) and from inside a worker. */
    fib_arg a = { n, 0 };
    fib_task(&a);
    cr_assert_eq(a.result, fib_serial(n));
    fib_arg b = { n, 0 };
    weft_group g;
    weft_group_init(&g, g_rt);
    weft_spawn(&g, fib_task, &b);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(b.result, fib_serial(n));
    weft_runtime_destroy(&g_rt);
    cr_assert_null(g_rt);
}

Test(forkjoin, functions_and_inline_paths_mix, .timeout = 60)
{
    g_rt = test_runtime(4);
#if defined(__SANITIZE_THREAD__)
    int n = 16;
#else
    int n = 21;
#endif
    fib_arg a = { n, 0 };
    weft_group g;
    weft_group_init(&g, g_rt);
    spawn_call(&g, fib_mixed_task, &a);
    cr_assert_eq(wait_call(&g), 0);
    cr_assert_eq(a.result, fib_serial(n));
    weft_runtime_destroy(&g_rt);
}

/* A worker of one runtime that sets up a group of another is an outside
 * thread to it: the inline set-up leaves it to the function, and the
 * children run on the other runtime's workers (or on the waiter). */
typedef struct cross_arg {
    weft_runtime *other;
    int ran;
    int rc;
    bool outside;
} cross_arg;

static void count_child(void *p)
{
    __atomic_fetch_add((int *)p, 1, __ATOMIC_RELAXED);
}

static void cross_task(void *p)
{
    cross_arg *c = p;
    weft_group g;
    weft_group_init(&g, c->other);
    c->outside = (g.bits_ & WEFT__GROUP_OUTSIDE) != 0 && g.owner_ != (void *)weft_task_self_;
    for (int i = 0; i < 8; i++)
        weft_spawn(&g, count_child, &c->ran);
    c->rc = weft_group_wait(&g);
}

Test(forkjoin, group_of_another_runtime_from_a_worker, .timeout = 60)
{
    weft_runtime *a = test_runtime(2), *b = test_runtime(2);
    cross_arg c = { b, 0, -1, false };
    weft_group g;
    weft_group_init(&g, a);
    weft_spawn(&g, cross_task, &c);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert(c.outside, "the group on the other runtime was set up as a worker's");
    cr_assert_eq(c.rc, 0);
    cr_assert_eq(c.ran, 8);
    weft_runtime_destroy(&b);
    weft_runtime_destroy(&a);
}

/* ------------------------------------------------------- random task tree */

/* A tree whose shape comes from a hash of the node id: 0-5 children. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

typedef struct tree_arg {
    uint64_t id;
    unsigned depth;
    uint64_t sum;
} tree_arg;

static unsigned tree_children(uint64_t id, unsigned depth)
{
    return depth == 0 ? 0 : (unsigned)(mix(id) % 6);
}

static uint64_t tree_serial(uint64_t id, unsigned depth)
{
    uint64_t s = mix(id ^ 0x1234) & 0xffff;
    unsigned k = tree_children(id, depth);
    for (unsigned i = 0; i < k; i++)
        s += tree_serial(id * 7 + i + 1, depth - 1);
    return s;
}

static void tree_task(void *p)
{
    tree_arg *a = p;
    a->sum = mix(a->id ^ 0x1234) & 0xffff;
    unsigned k = tree_children(a->id, a->depth);
    tree_arg kids[6];
    weft_group g;
    weft_group_init(&g, g_rt);
    for (unsigned i = 0; i < k; i++) {
        kids[i] = (tree_arg){ a->id * 7 + i + 1, a->depth - 1, 0 };
        weft_spawn(&g, tree_task, &kids[i]);
    }
    if (weft_group_wait(&g) != 0)
        return; /* a wrong sum fails the test */
    for (unsigned i = 0; i < k; i++)
        a->sum += kids[i].sum;
}

Test(forkjoin, random_tree_matches_serial, .timeout = 60)
{
    g_rt = test_runtime(4);
    for (uint64_t root = 1; root <= 4; root++) {
        tree_arg a = { root, 9, 0 };
        weft_group g;
        weft_group_init(&g, g_rt);
        weft_spawn(&g, tree_task, &a);
        cr_assert_eq(weft_group_wait(&g), 0);
        cr_assert_eq(a.sum, tree_serial(root, 9), "tree %llu", (unsigned long long)root);
    }
    weft_runtime_destroy(&g_rt);
}

/* ----------------------------------------------------------- group reuse */

static void add_one(void *p) { __atomic_fetch_add((int *)p, 1, __ATOMIC_RELAXED); }

Test(forkjoin, group_reuse_and_many_children, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    int count = 0;
    weft_group g;
    weft_group_init(&g, rt);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 1000; i++)
            weft_spawn(&g, add_one, &count);
        cr_assert_eq(weft_group_wait(&g), 0);
        cr_assert_eq(__atomic_load_n(&count, __ATOMIC_RELAXED), 1000 * (round + 1));
    }
    /* Waiting on a group with no children returns at once. */
    cr_assert_eq(weft_group_wait(&g), 0);
    weft_runtime_destroy(&rt);
}

/* Children spawned by a worker past the deque's first array (256 slots),
 * including when the array cannot grow: those run inline. */
typedef struct burst {
    weft_runtime *rt;
    int count;
    bool fail_growth;
    int rc;
} burst;

static void burst_task(void *p)
{
    burst *b = p;
    weft_group g;
    weft_group_init(&g, b->rt);
    if (b->fail_growth)
        weft__fault_fail_after(1);
    for (int i = 0; i < 5000; i++)
        weft_spawn(&g, add_one, &b->count);
    weft__fault_fail_after(0);
    b->rc = weft_group_wait(&g);
}

Test(forkjoin, worker_spawns_past_first_array, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    for (int fail = 0; fail < 2; fail++) {
        burst b = { rt, 0, fail == 1, -1 };
        weft_group g;
        weft_group_init(&g, rt);
        weft_spawn(&g, burst_task, &b);
        cr_assert_eq(weft_group_wait(&g), 0);
        cr_assert_eq(b.rc, 0);
        cr_assert_eq(__atomic_load_n(&b.count, __ATOMIC_RELAXED), 5000);
    }
    weft_runtime_destroy(&rt);
}

/* ------------------------------------------------- eight outside threads */

typedef struct outside_arg {
    weft_runtime *rt;
    unsigned id;
    int ok;
} outside_arg;

static int sum_range(size_t b, size_t e, void *ctx)
{
    uint64_t s = 0;
    for (size_t i = b; i < e; i++)
        s += i;
    __atomic_fetch_add((uint64_t *)ctx, s, __ATOMIC_RELAXED);
    return 0;
}

static int sum_index(size_t i, void *ctx)
{
    __atomic_fetch_add((uint64_t *)ctx, (uint64_t)i, __ATOMIC_RELAXED);
    return 0;
}

static void *outside_main(void *p)
{
    outside_arg *a = p;
    a->ok = 1;
    for (int round = 0; round < 5; round++) {
        size_t n = 5000 + a->id * 100;
        uint64_t want = (uint64_t)n * (n - 1) / 2;
        uint64_t s1 = 0, s2 = 0;
        if (weft_parallel_for(a->rt, n, 0, sum_range, &s1) != 0 || s1 != want)
            a->ok = 0;
        if (weft_parallel_map(a->rt, n, a->id % 3, sum_index, &s2) != 0 || s2 != want)
            a->ok = 0;
        int count = 0;
        weft_group g;
        weft_group_init(&g, a->rt);
        for (int i = 0; i < 100; i++)
            weft_spawn(&g, add_one, &count);
        if (weft_group_wait(&g) != 0 || count != 100)
            a->ok = 0;
        fib_arg f = { 12, 0 };
        weft_group_init(&g, a->rt);
        weft_spawn(&g, fib_task, &f);
        if (weft_group_wait(&g) != 0 || f.result != fib_serial(12))
            a->ok = 0;
    }
    return NULL;
}

Test(forkjoin, eight_outside_threads_at_once, .timeout = 60)
{
    g_rt = test_runtime(2);
    pthread_t th[8];
    outside_arg args[8];
    for (unsigned i = 0; i < 8; i++) {
        args[i] = (outside_arg){ g_rt, i, 0 };
        cr_assert_eq(pthread_create(&th[i], NULL, outside_main, &args[i]), 0);
    }
    for (unsigned i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].ok, 1, "outside thread %u got a wrong result", i);
    }
    weft_runtime_destroy(&g_rt);
}

/* ------------------------------------------------- private tasks reach idle workers */

/* A worker spawns children and then runs long work itself (no further
 * spawn or pop): the children must still reach the idle workers, which
 * hold no private tasks of their own.  Every participant arrives and waits
 * (at most 0.5 s) for all the others: the peak counts how many were inside
 * at once, which stays below 4 if any child had to wait for the spawner. */
typedef struct rendezvous {
    weft_runtime *rt;
    unsigned want;
    int arrived;    /* atomic: participants inside meet() now */
    int peak;       /* atomic: the most arrivals any participant saw */
    int rc;         /* the inner weft_group_wait */
} rendezvous;

static void meet(rendezvous *r)
{
    int now = __atomic_add_fetch(&r->arrived, 1, __ATOMIC_ACQ_REL);
    for (int i = 0; i < 5000 && now < (int)r->want; i++) {
        usleep(100);
        now = __atomic_load_n(&r->arrived, __ATOMIC_ACQUIRE);
    }
    int peak = __atomic_load_n(&r->peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&r->peak, &peak, now, false,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    /* Leaving: a participant that comes later does not count these. */
    __atomic_sub_fetch(&r->arrived, 1, __ATOMIC_ACQ_REL);
}

static void meet_task(void *p) { meet(p); }

static void spawn_then_work(void *p)
{
    rendezvous *r = p;
    weft_group g;
    weft_group_init(&g, r->rt);
    for (unsigned i = 1; i < r->want; i++)
        weft_spawn(&g, meet_task, r);
    meet(r);
    r->rc = weft_group_wait(&g);
}

/* Each count of workers: 4, and 16, far more than CPUs (on up to 8 CPUs),
 * where idle workers sleep at once unless they hold one of the few
 * spinning places, and a spawn wakes one sleeper at most: the wake-up has
 * to pass from thief to thief. */
static void children_reach_idle_workers(unsigned workers)
{
    weft_runtime *rt = test_runtime_of(workers);
    for (int round = 0; round < 3; round++) {
        rendezvous r = { rt, workers, 0, 0, -1 };
        weft_group g;
        weft_group_init(&g, rt);
        weft_spawn(&g, spawn_then_work, &r);
        cr_assert_eq(weft_group_wait(&g), 0);
        cr_assert_eq(r.rc, 0);
        cr_assert_eq(r.peak, (int)workers, "%u workers, round %d: only %d tasks ran at once",
                     workers, round, r.peak);
        /* Let the workers go to sleep: the next round starts from there. */
        usleep(round == 0 ? 1000 : 50000);
    }
    weft_runtime_destroy(&rt);
}

Test(forkjoin, spawned_children_reach_idle_workers, .timeout = 60)
{
    children_reach_idle_workers(4);
    children_reach_idle_workers(16);
}

/* ------------------------------------- deferred completions of thieves */

/* A thief publishes completions of consecutive stolen tasks of one group
 * at once.  It must publish them before it runs a task of another group:
 * here that task (`blocker`, queued by the main thread while a worker's
 * group of small tasks is being stolen from) waits until that group's
 * wait has returned, which would never happen if the completions it holds
 * were still unpublished.  The root's own worker may also take the
 * blocker from the injection queue while it waits (its deque empty, every
 * other worker busy or not yet woken): then the blocker must not wait for
 * the wait it runs inside, and that round checks nothing. */
typedef struct steal_burst {
    weft_runtime *rt;
    int spawning;          /* atomic: the burst root is spawning */
    int burst_done;        /* atomic: the burst's wait returned */
    int blocker_timed_out; /* atomic */
    int rc;
    int root_worker;       /* the worker running burst_root */
    int inside_root_wait;  /* the blocker ran inside the root's wait */
} steal_burst;

static void small_task(void *p)
{
    (void)p;
    for (volatile int i = 0; i < 2000; i++) {
    }
}

static void burst_root(void *p)
{
    steal_burst *b = p;
    b->root_worker = weft__worker_index(b->rt);
    weft_group g;
    weft_group_init(&g, b->rt);
    __atomic_store_n(&b->spawning, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 20000; i++)
        weft_spawn(&g, small_task, NULL);
    b->rc = weft_group_wait(&g);
    __atomic_store_n(&b->burst_done, 1, __ATOMIC_RELEASE);
}

static void blocker(void *p)
{
    steal_burst *b = p;
    if (weft__worker_index(b->rt) == b->root_worker &&
        !__atomic_load_n(&b->burst_done, __ATOMIC_ACQUIRE)) {
        b->inside_root_wait = 1;
        return;
    }
    /* At most ~5 s, so that a deadlock fails the test instead of hanging. */
    for (int i = 0; i < 50000 && !__atomic_load_n(&b->burst_done, __ATOMIC_ACQUIRE); i++)
        usleep(100);
    if (!__atomic_load_n(&b->burst_done, __ATOMIC_ACQUIRE))
        __atomic_store_n(&b->blocker_timed_out, 1, __ATOMIC_RELAXED);
}

Test(forkjoin, thief_publishes_before_running_another_group, .timeout = 60)
{
    /* With one worker nobody steals: the test then only checks that the
     * two groups finish. */
    weft_runtime *rt = test_runtime(2);
    for (int round = 0; round < 5; round++) {
        steal_burst b = { rt, 0, 0, 0, -1, -1, 0 };
        /* Two groups: this thread, waiting for the root's group, never
         * takes the blocker back to run it itself. */
        weft_group g_root, g_block;
        weft_group_init(&g_root, rt);
        weft_group_init(&g_block, rt);
        weft_spawn(&g_root, burst_root, &b);
        while (!__atomic_load_n(&b.spawning, __ATOMIC_ACQUIRE))
            usleep(10);
        usleep(200);
        weft_spawn(&g_block, blocker, &b);
        cr_assert_eq(weft_group_wait(&g_root), 0);
        cr_assert_eq(weft_group_wait(&g_block), 0);
        cr_assert_eq(b.rc, 0);
        cr_assert_eq(b.blocker_timed_out, 0,
                     "round %d: the steal_burst's wait did not return while another group's task ran", round);
        if (b.inside_root_wait)
            cr_log_info("round %d: the root's worker ran the blocker in its wait", round);
    }
    weft_runtime_destroy(&rt);
}

/* ------------------------------------------------ long outside waits */

/* Sleeps past an outside waiter's help window (500 us), then runs a fib
 * tree whose stolen children complete remotely on done_ev. */
static void slow_fib_task(void *p)
{
    usleep(2000);
    fib_task(p);
}

/* An outside thread sleeps on outside_ev (or yields, when the runtime
 * leaves a CPU spare) while workers' own groups signal done_ev; its wait
 * must still end with every child done, and no sleeper left behind.  One
 * worker usually leaves a CPU spare, four usually do not: both paths. */
Test(forkjoin, outside_wait_outlasts_help_window, .timeout = 60)
{
    static const unsigned counts[] = { 1, 4 };
    for (int c = 0; c < 2; c++) {
        g_rt = test_runtime_of(counts[c]);
        for (int round = 0; round < 3; round++) {
            fib_arg a[3] = { { 12, 0 }, { 13, 0 }, { 14, 0 } };
            weft_group g;
            weft_group_init(&g, g_rt);
            for (int i = 0; i < 3; i++)
                weft_spawn(&g, slow_fib_task, &a[i]);
            cr_assert_eq(weft_group_wait(&g), 0);
            for (int i = 0; i < 3; i++)
                cr_assert_eq(a[i].result, fib_serial(a[i].n), "workers %u round %d child %d",
                             counts[c], round, i);
            cr_assert_eq(__atomic_load_n(&g_rt->outside_ev.sleepers, __ATOMIC_SEQ_CST), 0);
        }
        weft_runtime_destroy(&g_rt);
    }
}

/* ------------------------------------- a group set up on another thread */

/* weft_group_init may run on another thread than the one that spawns and
 * waits.  Set up on a worker, then used from this outside thread: the
 * children go through the injection queue, and the worker that runs one
 * must count it as a remote completion (once it bumped the group's
 * private count instead: a race with the waiter, and no wake-up, so each
 * wait slept for its full 1 s bound). */
static void init_group_task(void *p)
{
    weft_group_init(p, g_rt);
}

Test(forkjoin, group_set_up_on_a_worker_used_outside, .timeout = 60)
{
    /* With one worker, the one that set the group up runs every child. */
    static const unsigned counts[] = { 1, 2 };
    for (int c = 0; c < 2; c++) {
        g_rt = test_runtime_of(counts[c]);
        for (int round = 0; round < 3; round++) {
            weft_group g;
            weft_group outer;
            weft_group_init(&outer, g_rt);
            weft_spawn(&outer, init_group_task, &g);
            cr_assert_eq(weft_group_wait(&outer), 0);
            /* One child: this thread cannot take it back and run it
             * itself, since a spinning worker starts it at once. */
            fib_arg a = { 12, 0 };
            weft_spawn(&g, slow_fib_task, &a);
            cr_assert_eq(weft_group_wait(&g), 0, "%s", weft_errmsg());
            cr_assert_eq(a.result, fib_serial(a.n), "workers %u round %d", counts[c], round);
        }
        weft_runtime_destroy(&g_rt);
    }
}

/* The other way round: set up on this outside thread, then spawned into
 * and waited for by a task on a worker, which the group is bound to at
 * its first spawn (its children then go to that worker's deque). */
typedef struct bind_job {
    weft_group *g;
    fib_arg a[3];
    int rc;
    int bound;
} bind_job;

static void spawn_into_given_group(void *p)
{
    bind_job *j = p;
    for (int i = 0; i < 3; i++)
        weft_spawn(j->g, fib_task, &j->a[i]);
    j->bound = weft__group_owned_here(j->g);
    j->rc = weft_group_wait(j->g);
}

Test(forkjoin, group_set_up_outside_used_on_a_worker, .timeout = 60)
{
    g_rt = test_runtime(2);
    for (int round = 0; round < 5; round++) {
        weft_group g;
        weft_group_init(&g, g_rt);
        bind_job j = { &g, { { 15, 0 }, { 16, 0 }, { 17, 0 } }, -1, 0 };
        weft_group outer;
        weft_group_init(&outer, g_rt);
        weft_spawn(&outer, spawn_into_given_group, &j);
        cr_assert_eq(weft_group_wait(&outer), 0);
        cr_assert_eq(j.rc, 0, "round %d", round);
        cr_assert(j.bound, "round %d: the group was not bound to the spawning worker", round);
        for (int i = 0; i < 3; i++)
            cr_assert_eq(j.a[i].result, fib_serial(j.a[i].n), "round %d child %d", round, i);
    }
    weft_runtime_destroy(&g_rt);
}

/* ------------------------------- a sleeping waiter helps with new work */

/* A worker waiting in weft_group_wait for a stolen child spins, then
 * sleeps until its group's next completion.  Work its child starts later
 * must still wake it, since a waiter runs stolen work while it waits: the
 * child here first sleeps 50 ms (its parent's worker falls asleep), then
 * runs a loop of 8 blocking 20 ms pieces, some of which the waiter must
 * run instead of sleeping through the whole loop. */
typedef struct late_work {
    weft_runtime *rt;
    int on_waiter;   /* pieces run by the parent's worker (atomic) */
    int parent_worker;
} late_work;

static int late_piece(size_t b, size_t e, void *p)
{
    late_work *lw = p;
    for (size_t i = b; i < e; i++) {
        if (weft__worker_index(lw->rt) == lw->parent_worker)
            __atomic_fetch_add(&lw->on_waiter, 1, __ATOMIC_SEQ_CST);
        usleep(20000);
    }
    return 0;
}

static void late_child(void *p)
{
    late_work *lw = p;
    usleep(50000);
    weft_parallel_for(lw->rt, 8, 1, late_piece, lw);
}

static void late_parent(void *p)
{
    late_work *lw = p;
    lw->parent_worker = weft__worker_index(lw->rt);
    weft_group g;
    weft_group_init(&g, lw->rt);
    weft_spawn(&g, late_child, lw);
    usleep(5000);   /* the other worker steals the child meanwhile */
    weft_group_wait(&g);
}

Test(forkjoin, sleeping_waiter_wakes_for_new_work, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(2);
    int helped = 0;
    for (int round = 0; round < 3; round++) {
        late_work lw = { .rt = rt };
        weft_group g;
        weft_group_init(&g, rt);
        weft_spawn(&g, late_parent, &lw);
        cr_assert_eq(weft_group_wait(&g), 0);
        cr_log_info("round %d: %d of 8 pieces on the waiting worker", round,
                    __atomic_load_n(&lw.on_waiter, __ATOMIC_SEQ_CST));
        helped += __atomic_load_n(&lw.on_waiter, __ATOMIC_SEQ_CST) > 0;
    }
    cr_assert_gt(helped, 0, "the waiting worker never helped with its child's loop");
    weft_runtime_destroy(&rt);
}

/* ----------------------------------------------------------- bad input */

Test(forkjoin, bad_groups_return_einval, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, NULL, NULL);
    cr_assert_eq(weft_group_wait(&g), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_group_wait") != NULL, "%s", weft_errmsg());
    /* The group is usable again after reporting. */
    int count = 0;
    weft_spawn(&g, add_one, &count);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(count, 1);

    weft_spawn(NULL, add_one, &count);
    cr_assert(strstr(weft_errmsg(), "weft_spawn") != NULL);
    cr_assert_eq(weft_group_wait(NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "NULL") != NULL);

    weft_group zero;
    memset(&zero, 0, sizeof zero);
    weft_spawn(&zero, add_one, &count);
    cr_assert_eq(weft_group_wait(&zero), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_group_init") != NULL);

    weft_group_init(&g, NULL);
    weft_spawn(&g, add_one, &count);
    cr_assert_eq(weft_group_wait(&g), WEFT_EINVAL);
    cr_assert_eq(count, 1, "a task of an invalid group must not run");
    weft_group_init(NULL, rt);
    cr_assert(strstr(weft_errmsg(), "weft_group_init") != NULL);
    weft_runtime_destroy(&rt);
}

/* ------------------------------- a waiter keeps its children stealable */

/* A task spawns one blocking child per worker and waits: every other
 * worker is idle, so all children must run at once.  The waiter's first
 * pop once took the newer half of its shared children back into its
 * private part and then ran one of them for its whole length: the rest
 * waited for it while idle workers slept (peak 3 of 4, 5 of 8). */
typedef struct waited_children {
    weft_runtime *rt;
    int n;
    int in, peak;  /* (atomic) */
} waited_children;

static void blocking_child(void *p)
{
    waited_children *wc = p;
    int now = __atomic_fetch_add(&wc->in, 1, __ATOMIC_SEQ_CST) + 1;
    int pk = __atomic_load_n(&wc->peak, __ATOMIC_SEQ_CST);
    while (now > pk && !__atomic_compare_exchange_n(&wc->peak, &pk, now, true, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_SEQ_CST)) {
    }
    /* Until every child is in (10 s at most): a fixed sleep failed when a
     * loaded machine woke a worker later than it lasted. */
    for (int ms = 0; ms < 10000 && __atomic_load_n(&wc->peak, __ATOMIC_SEQ_CST) < wc->n; ms++)
        usleep(1000);
    __atomic_fetch_sub(&wc->in, 1, __ATOMIC_SEQ_CST);
}

static void spawn_children_then_wait(void *p)
{
    waited_children *wc = p;
    weft_group g;
    weft_group_init(&g, wc->rt);
    for (int i = 0; i < wc->n; i++)
        weft_spawn(&g, blocking_child, wc);
    weft_group_wait(&g);
}

Test(forkjoin, waiter_leaves_children_to_idle_workers, .timeout = 60)
{
    static const unsigned counts[] = { 2, 4, 8 };
    for (int c = 0; c < 3; c++) {
        weft_runtime *rt = test_runtime_of(counts[c]);
        for (int round = 0; round < 3; round++) {
            usleep(20000);   /* the idle workers fall asleep */
            waited_children wc = { .rt = rt, .n = (int)counts[c] };
            weft_group g;
            weft_group_init(&g, rt);
            weft_spawn(&g, spawn_children_then_wait, &wc);
            cr_assert_eq(weft_group_wait(&g), 0);
            cr_assert_eq(__atomic_load_n(&wc.peak, __ATOMIC_SEQ_CST), wc.n,
                         "%u workers, round %d: only %d of %d children ran at once",
                         counts[c], round, __atomic_load_n(&wc.peak, __ATOMIC_SEQ_CST), wc.n);
        }
        weft_runtime_destroy(&rt);
    }
}

/* ------------------------- an outside waiter helps only with its own work */

/* The main thread waits for a short child while another outside thread's
 * long tasks are queued behind busy workers.  It used to help by running
 * one of those (its wait then lasted as long as that task); it may only
 * take back its own children. */
static pthread_t g_waiter;
static int g_foreign_on_waiter;  /* (atomic) */

static void short_child(void *p)
{
    (void)p;
    usleep(10000);
}

static void long_foreign(void *p)
{
    (void)p;
    if (pthread_equal(pthread_self(), g_waiter))
        __atomic_fetch_add(&g_foreign_on_waiter, 1, __ATOMIC_SEQ_CST);
    usleep(300000);
}

static void *foreign_spawner(void *p)
{
    weft_runtime *rt = p;
    weft_group g;
    weft_group_init(&g, rt);
    for (int i = 0; i < 4; i++)   /* two run, two stay queued */
        weft_spawn(&g, long_foreign, NULL);
    weft_group_wait(&g);
    return NULL;
}

Test(forkjoin, outside_waiter_runs_no_foreign_task, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(2);
    g_waiter = pthread_self();
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, short_child, NULL);
    usleep(1000);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, foreign_spawner, rt), 0);
    usleep(2000);
    cr_assert_eq(weft_group_wait(&g), 0);
    pthread_join(th, NULL);
    cr_assert_eq(__atomic_load_n(&g_foreign_on_waiter, __ATOMIC_SEQ_CST), 0,
                 "the waiter ran another thread's queued task");
    weft_runtime_destroy(&rt);
}

/* ------------------------------ spawning into another thread's group */

/* A worker's group with a child running: another thread's spawn into it
 * is refused (the counts are the spawning worker's alone) and reported by
 * the group's wait, instead of racing on them. */
typedef struct foreign_spawn {
    weft_runtime *rt;
    weft_group *g;  /* (atomic) */
    int release, ran;  /* (atomic) */
    int wait_rc;
} foreign_spawn;

static void held_child(void *p)
{
    foreign_spawn *fs = p;
    while (!__atomic_load_n(&fs->release, __ATOMIC_SEQ_CST))
        usleep(100);
}

static void counted(void *p)
{
    __atomic_fetch_add(&((foreign_spawn *)p)->ran, 1, __ATOMIC_SEQ_CST);
}

static void owner_task(void *p)
{
    foreign_spawn *fs = p;
    weft_group g;
    weft_group_init(&g, fs->rt);
    weft_spawn(&g, held_child, fs);
    __atomic_store_n(&fs->g, &g, __ATOMIC_SEQ_CST);
    fs->wait_rc = weft_group_wait(&g);
}

Test(forkjoin, spawn_into_another_threads_group_is_refused, .timeout = 60)
{
    foreign_spawn fs = { .rt = test_runtime(2) };
    weft_group h;
    weft_group_init(&h, fs.rt);
    weft_spawn(&h, owner_task, &fs);
    weft_group *g;
    while (!(g = __atomic_load_n(&fs.g, __ATOMIC_SEQ_CST)))
        usleep(100);
    weft_spawn(g, counted, &fs);
    cr_assert(strstr(weft_errmsg(), "another thread"), "%s", weft_errmsg());
    __atomic_store_n(&fs.release, 1, __ATOMIC_SEQ_CST);
    cr_assert_eq(weft_group_wait(&h), 0);
    cr_assert_eq(fs.wait_rc, WEFT_EINVAL);
    cr_assert_eq(__atomic_load_n(&fs.ran, __ATOMIC_SEQ_CST), 0);
    weft_runtime_destroy(&fs.rt);
}

/* The same refusal when the group's owner is an outside thread: its child,
 * running on a worker, may not spawn into it (the counts are the outside
 * thread's; under ThreadSanitizer such a spawn was a data race).  A
 * waiting outside thread may run its queued child itself when no worker
 * looks for work (a loaded machine); then the spawn is the owner's own and
 * allowed, so the test tries again until the child runs on a worker. */
typedef struct outside_parent {
    weft_group *g;
    int refused;
    int ran;   /* atomic */
    pthread_t owner;
    bool on_owner;
} outside_parent;

static void counted_op(void *p)
{
    __atomic_fetch_add(&((outside_parent *)p)->ran, 1, __ATOMIC_RELAXED);
}

static void spawn_into_parent(void *p)
{
    outside_parent *op = p;
    op->on_owner = pthread_equal(pthread_self(), op->owner);
    weft_spawn(op->g, counted_op, op);
    op->refused = strstr(weft_errmsg(), "another thread") != NULL;
}

Test(forkjoin, outside_parents_group_is_refused_to_children, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_group g;
    weft_group_init(&g, rt);
    outside_parent op = { &g, 0, 0, pthread_self(), false };
    bool on_worker = false;
    for (int attempt = 0; attempt < 100 && !on_worker; attempt++) {
        op.refused = 0;
        op.ran = 0;
        weft_spawn(&g, spawn_into_parent, &op);
        int rc = weft_group_wait(&g);
        if (op.on_owner) {
            /* The owner ran its child: its spawn is its own. */
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            cr_assert_eq(op.ran, 1);
            continue;
        }
        on_worker = true;
        cr_assert_eq(rc, WEFT_EINVAL);
        cr_assert(op.refused, "%s", weft_errmsg());
        cr_assert_eq(op.ran, 0);
    }
    cr_assert(on_worker, "the child never ran on a worker in 100 tries");
    /* The group is reusable after the wait. */
    op.ran = 0;
    weft_spawn(&g, counted_op, &op);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(op.ran, 1);
    weft_runtime_destroy(&rt);
}

/* A wait that begins after thieves ran every child gives their slots back:
 * the worker's stack is where it was before the spawns.  The parent shares
 * its children and does not pop them until the other worker has run all
 * four, so the group is done before its wait starts. */
typedef struct all_stolen {
    weft_runtime *rt;
    int ran;  /* (atomic) */
    bool on_worker;
    ptrdiff_t left;   /* slots still in use after the wait */
} all_stolen;

static void stolen_leaf(void *p)
{
    __atomic_fetch_add(&((all_stolen *)p)->ran, 1, __ATOMIC_SEQ_CST);
}

static void spawn_and_let_thieves_run(all_stolen *a)
{
    weft__worker *w = weft__current_worker(a->rt);
    a->on_worker = w != NULL;
    if (!w)
        return;
    weft_task_slot *before = weft__deque_head(&w->dq);
    weft_group g;
    weft_group_init(&g, a->rt);
    for (int i = 0; i < 4; i++)
        weft_spawn(&g, stolen_leaf, a);
    weft__share_all(a->rt);
    while (__atomic_load_n(&a->ran, __ATOMIC_SEQ_CST) < 4)
        sched_yield();
    (void)weft_group_wait(&g);
    a->left = weft__deque_head(&w->dq) - before;
}

/* A typed root always runs on a worker (a generic child of an outside
 * thread's group may run on that thread). */
WEFT_VOID_TASK_1(stolen_root, all_stolen *, a)
{
    spawn_and_let_thieves_run(a);
}

Test(forkjoin, wait_after_every_child_was_stolen_frees_their_slots, .timeout = 60)
{
    all_stolen a = { .rt = test_runtime_of(2) };
    a.ran = 0;
    for (int round = 0; round < 20; round++) {
        __atomic_store_n(&a.ran, 0, __ATOMIC_SEQ_CST);
        WEFT_RUN(a.rt, stolen_root, &a);
        cr_assert(a.on_worker);
        cr_assert_eq(__atomic_load_n(&a.ran, __ATOMIC_SEQ_CST), 4);
        cr_assert_eq(a.left, 0, "round %d: %td slots left in use", round, a.left);
    }
    weft_runtime_destroy(&a.rt);
}

/* Two groups waited for out of order: the first one's child was stolen
 * and finished before its wait, the second one's child is still queued
 * above it (the only other worker is held by a third group's child).  The
 * first wait must neither spin on the queued child's slot nor leave the
 * stolen slots behind; every child runs once. */
typedef struct two_groups {
    weft_runtime *rt;
    int ran_a, ran_b, hold_started, release;  /* (atomic) */
    bool on_worker;
    int rc1, rc2, rc3;
    ptrdiff_t left;
} two_groups;

static void child_a(void *p) { __atomic_fetch_add(&((two_groups *)p)->ran_a, 1, __ATOMIC_SEQ_CST); }
static void child_b(void *p) { __atomic_fetch_add(&((two_groups *)p)->ran_b, 1, __ATOMIC_SEQ_CST); }

static void child_hold(void *p)
{
    two_groups *t = p;
    __atomic_store_n(&t->hold_started, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&t->release, __ATOMIC_SEQ_CST))
        sched_yield();
}

WEFT_VOID_TASK_1(out_of_order_root, two_groups *, t)
{
    weft__worker *w = weft__current_worker(t->rt);
    t->on_worker = w != NULL;
    if (!w)
        return;
    weft_task_slot *before = weft__deque_head(&w->dq);
    weft_group g1, g2, g3;
    weft_group_init(&g1, t->rt);
    weft_group_init(&g2, t->rt);
    weft_group_init(&g3, t->rt);
    weft_spawn(&g1, child_a, t);
    weft__share_all(t->rt);
    /* Until the thief has reported the child's end to g1 (it may defer
     * that until it finds no more work). */
    while (__atomic_load_n(&g1.pending_, __ATOMIC_ACQUIRE) < 1)
        sched_yield();
    weft_spawn(&g3, child_hold, t);
    weft__share_all(t->rt);
    while (!__atomic_load_n(&t->hold_started, __ATOMIC_SEQ_CST))
        sched_yield();
    weft_spawn(&g2, child_b, t);
    t->rc1 = weft_group_wait(&g1);
    __atomic_store_n(&t->release, 1, __ATOMIC_SEQ_CST);
    t->rc3 = weft_group_wait(&g3);
    t->rc2 = weft_group_wait(&g2);
    t->left = weft__deque_head(&w->dq) - before;
}

Test(forkjoin, groups_waited_out_of_order_after_a_steal, .timeout = 60)
{
    two_groups t = { .rt = test_runtime_of(2) };
    for (int round = 0; round < 20; round++) {
        t.ran_a = 0;
        t.ran_b = 0;
        t.hold_started = 0;
        t.release = 0;
        WEFT_RUN(t.rt, out_of_order_root, &t);
        cr_assert(t.on_worker);
        cr_assert_eq(t.rc1, 0);
        cr_assert_eq(t.rc2, 0);
        cr_assert_eq(t.rc3, 0);
        cr_assert_eq(__atomic_load_n(&t.ran_a, __ATOMIC_SEQ_CST), 1, "round %d", round);
        cr_assert_eq(__atomic_load_n(&t.ran_b, __ATOMIC_SEQ_CST), 1, "round %d", round);
        cr_assert_eq(t.left, 0, "round %d: %td slots left in use", round, t.left);
    }
    weft_runtime_destroy(&t.rt);
}
