/* Runtime lifecycle: creation, configuration, idle cost, statistics,
 * shutdown with work in flight, bad input. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/iface.h"
#include "runtime/internal.h"
#include "test_util.h"
#include "test_sanitized.h"

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

static void add_one(void *p) { __atomic_fetch_add((int *)p, 1, __ATOMIC_RELAXED); }

Test(lifecycle, create_destroy_and_config, .timeout = 60)
{
    weft_config cfg;
    memset(&cfg, 0xff, sizeof cfg);
    weft_config_default(&cfg);
    cr_assert_eq(cfg.workers, 0);
    cr_assert_eq(cfg.inter_op_threads, 0);
    cr_assert_eq(cfg.intra_op_threads, 0);

    cfg.workers = 3;
    cfg.intra_op_threads = 5;
    weft_runtime *rt = NULL;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), 0);
    cr_assert_eq(weft_runtime_workers(rt), 3);
    cr_assert_eq(weft__inter_op_threads(rt), 3);
    cr_assert_eq(weft__intra_op_threads(rt), 5);
    cr_assert_eq(weft__worker_index(rt), -1, "this thread is not a worker");
    weft_runtime_destroy(&rt);
    cr_assert_null(rt);
    weft_runtime_destroy(&rt);   /* *rt == NULL is fine */
    weft_runtime_destroy(NULL);

    /* Defaults: at least one worker. */
    cr_assert_eq(weft_runtime_create(NULL, &rt), 0);
    cr_assert_geq(weft_runtime_workers(rt), 1);
    weft_runtime_destroy(&rt);

    /* Start-up and shutdown are cheap enough to do many times. */
    for (int i = 0; i < 50; i++) {
        cfg = (weft_config){ .workers = 2 };
        cr_assert_eq(weft_runtime_create(&cfg, &rt), 0);
        weft_runtime_destroy(&rt);
    }
}

/* Each worker reports its own index; outside threads -1. */
typedef struct index_probe {
    weft_runtime *rt;
    int index;
} index_probe;

static void probe_task(void *p)
{
    index_probe *ip = p;
    ip->index = weft__worker_index(ip->rt);
}

static int noop_range(size_t b, size_t e, void *ctx)
{
    (void)b, (void)e, (void)ctx;
    return 0;
}

Test(lifecycle, many_more_workers_than_cores, .timeout = 60)
{
    weft_config cfg = { .workers = TEST_SANITIZED ? 32 : 64 };
    weft_runtime *rt = NULL;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), 0);
    index_probe probes[100];
    weft_group g;
    weft_group_init(&g, rt);
    for (int i = 0; i < 100; i++) {
        probes[i] = (index_probe){ rt, -2 };
        weft_spawn(&g, probe_task, &probes[i]);
    }
    cr_assert_eq(weft_group_wait(&g), 0);
    for (int i = 0; i < 100; i++)
        cr_assert(probes[i].index >= -1 && probes[i].index < (int)cfg.workers,
                  "index %d", probes[i].index);
    cr_assert_eq(weft_parallel_for(rt, 100000, 0, noop_range, NULL), 0);
    weft_runtime_destroy(&rt);
}

/* Online CPUs, at least 1 (the count weft_runtime_create sizes by). */
static unsigned cpus_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

Test(lifecycle, spin_cap_only_when_oversubscribed, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(cpus_online());
    cr_assert_eq(rt->spin_cap, 0);
    weft_runtime_destroy(&rt);
}

/* A tree whose leaves sleep: idle workers have to steal to help.  With two
 * or more workers, the first thread to run a leaf holds it (up to 5 s,
 * far beyond any scheduling delay) until a leaf has run on another thread,
 * so the other leaves can only progress by being stolen: the test does not
 * depend on how fast the machine schedules the idle worker. */
typedef struct sleepy {
    weft_runtime *rt;
    int depth;
    int *leaves;
    pthread_t *first;   /* the first thread that ran a leaf */
    int *first_set;     /* atomic: 0 none, 1 being set, 2 set */
    int *elsewhere;     /* atomic: a leaf ran on another thread */
} sleepy;

static void sleepy_leaf(sleepy *s)
{
    int none = 0;
    if (__atomic_compare_exchange_n(s->first_set, &none, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        *s->first = pthread_self();
        __atomic_store_n(s->first_set, 2, __ATOMIC_RELEASE);
        for (int i = 0; i < 5000 && weft_runtime_workers(s->rt) >= 2 &&
                        !__atomic_load_n(s->elsewhere, __ATOMIC_ACQUIRE); i++)
            sleep_us(1000);
    } else {
        while (__atomic_load_n(s->first_set, __ATOMIC_ACQUIRE) != 2)
            ;
        if (!pthread_equal(*s->first, pthread_self()))
            __atomic_store_n(s->elsewhere, 1, __ATOMIC_RELEASE);
    }
    sleep_us(1000);
    __atomic_fetch_add(s->leaves, 1, __ATOMIC_RELAXED);
}

static void sleepy_task(void *p)
{
    sleepy *s = p;
    if (s->depth == 0) {
        sleepy_leaf(s);
        return;
    }
    sleepy kids[4];
    weft_group g;
    weft_group_init(&g, s->rt);
    for (int i = 0; i < 4; i++) {
        kids[i] = *s;
        kids[i].depth = s->depth - 1;
        weft_spawn(&g, sleepy_task, &kids[i]);
    }
    weft_group_wait(&g);
}

Test(lifecycle, stats_count_work, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    int leaves = 0, first_set = 0, elsewhere = 0;
    pthread_t first;
    sleepy root = { rt, 3, &leaves, &first, &first_set, &elsewhere };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, sleepy_task, &root);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(leaves, 64);
    /* Idle, the workers go to sleep.  How soon depends on the scheduler (a
     * worker under ThreadSanitizer on a loaded machine may take well over
     * 100 ms), so the counters are read until the last task is counted and
     * a sleep is seen, for up to 10 s; the assertions below stay exact. */
    weft_runtime_stats st;
    for (int waited_ms = 0;; waited_ms++) {
        memset(&st, 0xff, sizeof st);
        weft_runtime_get_stats(rt, &st);
#ifdef WEFT_STATS
        if ((st.tasks >= 85 && st.sleeps > 0) || waited_ms >= 10000)
            break;
        sleep_us(1000);
#else
        break;
#endif
    }
#ifdef WEFT_STATS
    /* 1 + 4 + 16 + 64 tasks. */
    cr_assert_eq(st.tasks, 85, "tasks %llu", (unsigned long long)st.tasks);
    cr_assert_gt(st.sleeps, 0);
    cr_assert_geq(st.steal_attempts, st.steals);
    if (weft_runtime_workers(rt) >= 2)
        cr_assert_gt(st.steals, 0, "tasks %llu steals %llu attempts %llu sleeps %llu",
                     (unsigned long long)st.tasks, (unsigned long long)st.steals,
                     (unsigned long long)st.steal_attempts, (unsigned long long)st.sleeps);
#else
    cr_assert_eq(st.tasks, 0);
#endif
    weft_runtime_destroy(&rt);
}

/* Shutdown while an outside thread is inside a long parallel_map: the
 * iterations not started are dropped and the call returns ECANCELED. */
typedef struct inflight_map {
    weft_runtime *rt;
    int started;   /* atomic */
    uint64_t ran;  /* atomic */
    int rc;
} inflight_map;

static int slow_index(size_t i, void *ctx)
{
    (void)i;
    inflight_map *m = ctx;
    __atomic_store_n(&m->started, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&m->ran, 1, __ATOMIC_RELAXED);
    sleep_us(1000);
    return 0;
}

static void *map_thread(void *p)
{
    inflight_map *m = p;
    m->rc = weft_parallel_map(m->rt, 100000, 2, slow_index, m);
    return NULL;
}

/* The same loops in inline mode (a WEFT_HOST_SERIAL callback's work runs
 * on its own thread): destroy waits for them too, and they stop early. */
static void *inline_map_thread(void *p)
{
    inflight_map *m = p;
    weft__inline_enter();
    m->rc = weft_parallel_map(m->rt, 100000, 2, slow_index, m);
    weft__inline_leave();
    return NULL;
}

static int slow_range(size_t b, size_t e, void *ctx)
{
    (void)e;
    return slow_index(b, ctx);
}

static void *inline_for_thread(void *p)
{
    inflight_map *m = p;
    weft__inline_enter();
    m->rc = weft_parallel_for(m->rt, 100000, 1, slow_range, m);
    weft__inline_leave();
    return NULL;
}

Test(lifecycle, destroy_with_inline_loops_in_flight, .timeout = 60)
{
    void *(*threads[2])(void *) = { inline_map_thread, inline_for_thread };
    for (int k = 0; k < 2; k++) {
        inflight_map m = { test_runtime(2), 0, 0, 1 };
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, threads[k], &m), 0);
        while (!__atomic_load_n(&m.started, __ATOMIC_ACQUIRE))
            sleep_us(100);
        sleep_us(10000);
        weft_runtime_destroy(&m.rt);
        pthread_join(th, NULL);
        cr_assert_eq(m.rc, WEFT_ECANCELED, "loop %d: %s", k, weft_err_name(m.rc));
        cr_assert_lt(m.ran, 100000);
    }
}

Test(lifecycle, destroy_with_work_in_flight, .timeout = 60)
{
    inflight_map m = { test_runtime(2), 0, 0, 1 };
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, map_thread, &m), 0);
    while (!__atomic_load_n(&m.started, __ATOMIC_ACQUIRE))
        sleep_us(100);
    sleep_us(10000);
    weft_runtime_destroy(&m.rt);
    pthread_join(th, NULL);
    cr_assert_eq(m.rc, WEFT_ECANCELED);
    cr_assert_lt(m.ran, 100000);

    /* Worker tasks in flight (a tree of sleeping leaves) at destroy time,
     * waited for by an outside thread that returns before destroy. */
    weft_runtime *rt = test_runtime(2);
    int leaves = 0, first_set = 0, elsewhere = 0;
    pthread_t first;
    sleepy root = { rt, 2, &leaves, &first, &first_set, &elsewhere };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, sleepy_task, &root);
    cr_assert_eq(weft_group_wait(&g), 0);
    cr_assert_eq(leaves, 16);
    weft_runtime_destroy(&rt);
}

/* weft_runtime_destroy from a callback, on a worker or on the outside
 * thread that made the call (n = 1: the caller runs the only index
 * itself), is refused instead of waiting for itself. */
typedef struct destroy_in_cb {
    weft_runtime *rt;
    int refused, on_worker;   /* atomic */
} destroy_in_cb;

static int destroy_index(size_t i, void *ctx)
{
    (void)i;
    destroy_in_cb *d = ctx;
    weft_runtime *copy = d->rt;
    int rc = weft_runtime_destroy(&copy);
    if (rc == WEFT_EINVAL && copy == d->rt && strstr(weft_errmsg(), "weft_runtime_destroy"))
        __atomic_fetch_add(&d->refused, 1, __ATOMIC_RELAXED);
    if (weft__current_worker(d->rt))
        __atomic_fetch_add(&d->on_worker, 1, __ATOMIC_RELAXED);
    return 0;
}

Test(lifecycle, destroy_from_a_callback_is_refused, .timeout = 60)
{
    destroy_in_cb d = { test_runtime(2), 0, 0 };
    cr_assert_eq(weft_parallel_map(d.rt, 1, 0, destroy_index, &d), 0, "%s", weft_errmsg());
    cr_assert_eq(d.on_worker, 0, "n = 1 runs on the calling thread");
    cr_assert_eq(weft_parallel_map(d.rt, 64, 0, destroy_index, &d), 0, "%s", weft_errmsg());
    cr_assert_eq(d.refused, 65, "%d of 65 destroys refused", d.refused);
    /* After the calls, destroy works. */
    cr_assert_eq(weft_runtime_destroy(&d.rt), 0);
    cr_assert_null(d.rt);
    cr_assert_eq(weft_runtime_destroy(&d.rt), 0, "NULL is fine");
    cr_assert_eq(weft_runtime_destroy(NULL), 0);
}

/* An outside thread's group holds the runtime from its first spawn to the
 * end of its wait: a destroy that starts in between (the child is still
 * running, the wait not yet called) returns only after that wait was
 * called and let go of the runtime. (The waiter once entered the runtime
 * after destroy had checked for waiters, and used it after it was freed.)
 * The test sees the call's start, not its return: destroy may return as
 * soon as the wait's last touch of the runtime, before weft_group_wait
 * returns to its caller, so a flag set after the return would race. */
typedef struct late_waiter {
    weft_runtime *rt;
    int spawned;       /* atomic */
    int wait_rc;
    int waiting;       /* atomic: the wait is about to be called */
} late_waiter;

static void long_child(void *p)
{
    (void)p;
    sleep_us(20000);
}

static void *late_waiter_main(void *p)
{
    late_waiter *lw = p;
    weft_group g;
    weft_group_init(&g, lw->rt);
    weft_spawn(&g, long_child, NULL);
    __atomic_store_n(&lw->spawned, 1, __ATOMIC_RELEASE);
    sleep_us(50000);   /* destroy starts meanwhile */
    __atomic_store_n(&lw->waiting, 1, __ATOMIC_RELEASE);
    lw->wait_rc = weft_group_wait(&g);
    return NULL;
}

Test(lifecycle, destroy_waits_for_outside_groups, .timeout = 60)
{
    for (int round = 0; round < 3; round++) {
        late_waiter lw = { test_runtime(2), 0, -1, 0 };
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, late_waiter_main, &lw), 0);
        while (!__atomic_load_n(&lw.spawned, __ATOMIC_ACQUIRE))
            sleep_us(100);
        cr_assert_eq(weft_runtime_destroy(&lw.rt), 0);
        cr_assert(__atomic_load_n(&lw.waiting, __ATOMIC_ACQUIRE),
                  "round %d: destroy returned before the outside wait was called", round);
        pthread_join(th, NULL);
        /* The child either ran (0) or was dropped unstarted (canceled). */
        cr_assert(lw.wait_rc == 0 || lw.wait_rc == WEFT_ECANCELED, "rc %d", lw.wait_rc);
    }
}

/* weft_config's reserved space must be zero: a value there is refused,
 * not read as some later setting. */
Test(lifecycle, config_reserved_must_be_zero, .timeout = 60)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    cfg.reserved[3] = 1;
    weft_runtime *rt = (weft_runtime *)&cfg;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), WEFT_EINVAL);
    cr_assert_null(rt);
    cr_assert(strstr(weft_errmsg(), "reserved[3]"), "%s", weft_errmsg());
    cfg.reserved[3] = 0;
    cfg.task_stack = (1u << 30) + 1;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "task stack"), "%s", weft_errmsg());
    cfg.task_stack = 1;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_runtime_destroy(&rt), 0);
}

Test(lifecycle, bad_input_returns_einval, .timeout = 60)
{
    cr_assert_eq(weft_runtime_create(NULL, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_runtime_create: out") != NULL, "%s", weft_errmsg());
    weft_config cfg = { .workers = 1u << 30 };
    weft_runtime *rt = (weft_runtime *)&cfg;
    cr_assert_eq(weft_runtime_create(&cfg, &rt), WEFT_EINVAL);
    cr_assert_null(rt);
    cr_assert(strstr(weft_errmsg(), "workers") != NULL);
    cr_assert_eq(weft_runtime_workers(NULL), 0);
    weft_runtime_stats st;
    memset(&st, 0xff, sizeof st);
    weft_runtime_get_stats(NULL, &st);
    cr_assert_eq(st.tasks, 0);
    cr_assert(strstr(weft_errmsg(), "weft_runtime_get_stats: rt") != NULL);
    rt = test_runtime(1);
    weft_runtime_get_stats(rt, NULL);
    cr_assert(strstr(weft_errmsg(), "weft_runtime_get_stats: out") != NULL);
    weft_config_default(NULL);
    cr_assert(strstr(weft_errmsg(), "weft_config_default") != NULL);
    weft_runtime_destroy(&rt);
}

Test(lifecycle, create_survives_allocation_failures, .timeout = 60)
{
    int failures = 0;
    for (long k = 1; k < 40; k++) {
        weft_config cfg = { .workers = 3 };
        weft_runtime *rt = NULL;
        weft__fault_fail_after(k);
        int rc = weft_runtime_create(&cfg, &rt);
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        if (rc == 0) {
            int count = 0;
            weft_group g;
            weft_group_init(&g, rt);
            for (int i = 0; i < 10; i++)
                weft_spawn(&g, add_one, &count);
            cr_assert_eq(weft_group_wait(&g), 0);
            cr_assert_eq(count, 10);
            weft_runtime_destroy(&rt);
        } else {
            cr_assert_eq(rc, WEFT_ENOMEM);
            cr_assert(hit);
            cr_assert_null(rt);
            failures++;
        }
    }
#ifdef WEFT_FAULT_INJECTION
    cr_assert_gt(failures, 0);
#endif
}
