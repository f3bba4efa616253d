/* The runtime object: configuration, start-up, shutdown and statistics. */
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/internal.h"

/* More workers than this is surely a mistake (each is a thread). */
#define MAX_WORKERS 4096u

void weft__inject_cancel_all(weft_runtime *rt);

void weft_config_default(weft_config *cfg)
{
    if (!cfg) {
        weft__errorf(WEFT_EINVAL, "weft_config_default: cfg is NULL");
        return;
    }
    memset(cfg, 0, sizeof *cfg);
}

/* The worker count when cfg leaves it 0: $WEFT_NUM_THREADS if set (a
 * decimal in 1..MAX_WORKERS; anything else is refused, so that a typo does
 * not quietly give one worker per CPU), else the online CPUs. */
static int default_workers(unsigned *out)
{
    const char *env = getenv("WEFT_NUM_THREADS");
    if (env && *env) {
        unsigned long v = 0;
        const char *c = env;
        while (*c >= '0' && *c <= '9' && v <= MAX_WORKERS)
            v = v * 10 + (unsigned long)(*c++ - '0');
        if (*c != '\0' || v == 0 || v > MAX_WORKERS)
            return weft__errorf(WEFT_EINVAL, "weft_runtime_create: WEFT_NUM_THREADS=\"%.32s%s\" "
                                "is not a number of workers in 1..%u", env,
                                strlen(env) > 32 ? "..." : "", MAX_WORKERS);
        *out = (unsigned)v;
        return 0;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *out = n > 0 ? (unsigned)(n < (long)MAX_WORKERS ? n : (long)MAX_WORKERS) : 1u;
    return 0;
}

/* sysconf reads a file under /sys, so it is asked once per process. */
static long online_cpus(void)
{
    static long cached;   /* atomic: 0 until known */
    long n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (n == 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
    }
    return n;
}

/* Asymmetric fences let a push skip a fence when it checks for sleepers;
 * registering once per process is enough. */
static bool membarrier_register(void)
{
    static int state; /* 0: unknown, 1: usable, -1: not */
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s == 0) {
        long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        s = -1;
        if (cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
            s = 1;
        __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    }
    return s == 1;
}

static void free_runtime(weft_runtime *rt)
{
    if (rt->workers) {
        for (unsigned i = 0; i < rt->nworkers; i++) {
            weft__worker *w = rt->workers[i];
            if (!w)
                continue;
            weft__deque_fini(&w->dq);
            weft__free(w);
        }
        weft__free(rt->workers);
    }
    weft__free(rt->ring);
    pthread_mutex_destroy(&rt->inject_lock);
    weft__free(rt);
}

/* Stops and joins the started workers (shutdown and failed start-up). */
static void stop_workers(weft_runtime *rt)
{
    __atomic_store_n(&rt->stopping, 1, __ATOMIC_SEQ_CST);
    weft__wake_all(&rt->work_ev);
    weft__wake_all(&rt->done_ev);
    weft__wake_all(&rt->outside_ev);
    for (unsigned i = 0; i < rt->nworkers; i++) {
        weft__worker *w = rt->workers[i];
        if (w && w->started) {
            pthread_join(w->thread, NULL);
            w->started = false;
        }
    }
}

int weft_runtime_create(const weft_config *cfg, weft_runtime **out)
{
    if (!out)
        return weft__errorf(WEFT_EINVAL, "weft_runtime_create: out is NULL");
    *out = NULL;
    weft_config c = { 0 };
    if (cfg)
        c = *cfg;
    if (c.workers > MAX_WORKERS)
        return weft__errorf(WEFT_EINVAL, "weft_runtime_create: %u workers is more than %u",
                            c.workers, MAX_WORKERS);
    for (size_t i = 0; i < sizeof c.reserved / sizeof c.reserved[0]; i++)
        if (c.reserved[i] != 0)
            return weft__errorf(WEFT_EINVAL, "weft_runtime_create: cfg->reserved[%zu] is not "
                                "zero (start from weft_config_default)", i);
    if (c.task_stack > (1u << 30))
        return weft__errorf(WEFT_EINVAL, "weft_runtime_create: a task stack of %u tasks is "
                            "more than 2^30", c.task_stack);
    unsigned n = c.workers;
    if (n == 0) {
        int rc = default_workers(&n);
        if (rc)
            return rc;
    }

    weft_runtime *rt = weft__aligned_alloc(sizeof *rt);
    if (!rt)
        return weft__errorf(WEFT_ENOMEM, "weft_runtime_create: out of memory");
    memset(rt, 0, sizeof *rt);
    pthread_mutex_init(&rt->inject_lock, NULL);
    rt->nworkers = n;
    rt->inter_op = c.inter_op_threads ? c.inter_op_threads : n;
    rt->intra_op = c.intra_op_threads ? c.intra_op_threads : n;
    rt->task_stack = c.task_stack ? c.task_stack : WEFT_TASK_STACK_DEFAULT;
    rt->membarrier_ok = membarrier_register();
    /* A waiting outside thread may spin only on a core no worker needs. */
    long cpus = online_cpus();
    rt->spare_core = cpus > 0 && (long)n < cpus;
    /* With more workers than CPUs, idle workers spin in at most half as
     * many places as CPUs (as Go's scheduler bounds its spinning threads),
     * so that runnable workers keep most CPUs. */
    rt->spin_cap = cpus > 0 && (long)n > cpus ? (unsigned)(cpus > 1 ? cpus / 2 : 1) : 0;
    int rc = 0;
    rt->workers = weft__calloc(n, sizeof *rt->workers);
    if (!rt->workers)
        goto nomem;
    for (unsigned i = 0; i < n; i++) {
        weft__worker *w = weft__aligned_alloc(sizeof *w);
        if (!w)
            goto nomem;
        memset(w, 0, sizeof *w);
        rt->workers[i] = w;
        if (weft__deque_init(&w->dq, rt->task_stack) != 0) {
            rc = weft__errorf(WEFT_ENOMEM, "weft_runtime_create: could not reserve a task "
                              "stack of %zu tasks for worker %u", rt->task_stack, i);
            goto error;
        }
        w->rt = rt;
        w->index = i;
        w->rng = 0x9e3779b97f4a7c15ull * (i + 1) | 1;
        /* Only workers steal from deques: a lone worker has no thieves. */
        w->dq.solo = n == 1;
        w->dq.tw.rt_ = rt;
        if (!w->dq.solo)
            w->dq.tw.idle_ = &rt->work_ev.searching;
        w->dq.wake_ev = &rt->work_ev;
    }
    /* Every worker starts idle (weft__worker_main's `searching`). */
    __atomic_store_n(&rt->work_ev.searching, (int32_t)n, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < n; i++) {
        weft__worker *w = rt->workers[i];
        int e = pthread_create(&w->thread, NULL, weft__worker_main, w);
        if (e != 0) {
            rc = weft__errorf(WEFT_EAGAIN, "weft_runtime_create: could not start worker %u of %u",
                              i, n);
            goto error;
        }
        w->started = true;
    }
    *out = rt;
    return 0;

nomem:
    rc = weft__errorf(WEFT_ENOMEM, "weft_runtime_create: out of memory for %u workers", n);
error:
    if (rt->workers)
        stop_workers(rt);
    free_runtime(rt);
    return rc;
}

int weft_runtime_destroy(weft_runtime **p)
{
    if (!p || !*p)
        return 0;
    weft_runtime *rt = *p;
    if (weft__current_worker(rt))
        return weft__errorf(WEFT_EINVAL, "weft_runtime_destroy: called from a worker of the "
                                         "runtime");
    if (weft__inside_call(rt)) {
        /* It would wait for the call it is part of. */
        return weft__errorf(WEFT_EINVAL, "weft_runtime_destroy: called from a callback of a "
                                         "call on the runtime, which would wait for itself");
    }
    *p = NULL;
    /* Outside threads inside calls: drop their queued tasks (their waits
     * return WEFT_ECANCELED) and wait until they have left. */
    pthread_mutex_lock(&rt->inject_lock);
    __atomic_store_n(&rt->stopping, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&rt->inject_lock);
    weft__inject_cancel_all(rt);
    weft__wake_all(&rt->work_ev);
    while (__atomic_load_n(&rt->outside_active, __ATOMIC_SEQ_CST) > 0) {
        weft__wake_all(&rt->done_ev);
        weft__wake_all(&rt->outside_ev);
        sched_yield();
    }
    stop_workers(rt);
    weft__profile_runtime_gone(rt);
    free_runtime(rt);
    return 0;
}

unsigned weft_runtime_workers(const weft_runtime *rt)
{
    return rt ? rt->nworkers : 0;
}

unsigned weft__inter_op_threads(const weft_runtime *rt)
{
    return (rt && rt->inter_op) ? rt->inter_op : 1;
}

unsigned weft__intra_op_threads(const weft_runtime *rt)
{
    return (rt && rt->intra_op) ? rt->intra_op : 1;
}

void weft_runtime_get_stats(const weft_runtime *rt, weft_runtime_stats *out)
{
    if (!out) {
        weft__errorf(WEFT_EINVAL, "weft_runtime_get_stats: out is NULL");
        return;
    }
    memset(out, 0, sizeof *out);
    if (!rt) {
        weft__errorf(WEFT_EINVAL, "weft_runtime_get_stats: rt is NULL");
        return;
    }
#ifdef WEFT_STATS
    for (unsigned i = 0; i < rt->nworkers; i++) {
        const weft__worker *w = rt->workers[i];
        out->tasks += __atomic_load_n(&w->tasks, __ATOMIC_RELAXED) +
                      __atomic_load_n(&w->dq.tw.ran_, __ATOMIC_RELAXED);
        out->steals += __atomic_load_n(&w->steals, __ATOMIC_RELAXED);
        out->steal_attempts += __atomic_load_n(&w->steal_attempts, __ATOMIC_RELAXED);
        out->sleeps += __atomic_load_n(&w->sleeps, __ATOMIC_RELAXED);
        out->overflows += __atomic_load_n(&w->dq.overflows, __ATOMIC_RELAXED);
    }
    out->tasks += __atomic_load_n(&rt->outside_tasks, __ATOMIC_RELAXED);
#endif
}
