/* Fork-join: weft_group_init, weft_spawn and weft_group_wait on workers and
 * outside threads, the calling thread's worker, and inline mode. */
#include <sched.h>

#include "runtime/sched.h"

_Thread_local weft__worker *weft__tls_worker __attribute__((tls_model("initial-exec")));
_Thread_local unsigned weft__tls_inline __attribute__((tls_model("initial-exec")));

/* Back-off rounds of a waiting outside thread (~6k barrier iterations, a
 * couple of us).  It runs no tasks meanwhile: spinning for all of an idle
 * worker's rounds took a core from the workers (~10% of fib(32)'s samples on two cores). */
#define OUTSIDE_SPIN_ROUNDS 4
/* Then, for this long, it either yields the CPU in a loop (when the
 * runtime has fewer workers than CPUs: a short wait ends without a futex
 * round trip, which costs tens of us when the waker's CPU is idle), or
 * sleeps on its event.  With a worker per CPU a thread that calls
 * sched_yield stays runnable and kept taking a share of a computing
 * worker's core: a parallel map of ~0.1 ms of work started in a worker
 * took 3-6x longer.  Only after this long does it help with queued tasks:
 * a task left to a worker gets a deque for its children, while every spawn
 * of an outside thread goes through the injection queue's lock. */
#define OUTSIDE_HELP_NS 500000u

weft__worker *weft__current_worker(const weft_runtime *rt)
{
    return weft__current_worker_inline(rt);
}

void weft__inline_enter(void)
{
    weft__tls_inline++;
    if (weft__tls_worker)
        weft__tls_worker->inline_depth++;
}

void weft__inline_leave(void)
{
    weft__tls_inline--;
    if (weft__tls_worker)
        weft__tls_worker->inline_depth--;
}

bool weft__inline_now(void)
{
    return weft__tls_inline != 0;
}

int weft__worker_index(const weft_runtime *rt)
{
    weft__worker *w = weft__current_worker(rt);
    return w ? (int)w->index : -1;
}

/* The runtimes whose calls this outside thread is inside, innermost last
 * (the first OUTSIDE_NEST_MAX of them): weft_runtime_destroy from a
 * callback of such a call would wait for the call, that is for itself. */
#define OUTSIDE_NEST_MAX 8
static _Thread_local const weft_runtime *tls_outside[OUTSIDE_NEST_MAX];
static _Thread_local unsigned tls_outside_depth;

void weft__outside_enter(weft_runtime *rt)
{
    if (tls_outside_depth < OUTSIDE_NEST_MAX)
        tls_outside[tls_outside_depth] = rt;
    tls_outside_depth++;
    __atomic_fetch_add(&rt->outside_active, 1, __ATOMIC_SEQ_CST);
}

void weft__outside_leave(weft_runtime *rt)
{
    tls_outside_depth--;
    /* The last touch of rt: weft_runtime_destroy polls this count, and
     * may free rt as soon as it reaches zero. */
    __atomic_fetch_sub(&rt->outside_active, 1, __ATOMIC_SEQ_CST);
}

bool weft__inside_call(const weft_runtime *rt)
{
    unsigned n = tls_outside_depth < OUTSIDE_NEST_MAX ? tls_outside_depth : OUTSIDE_NEST_MAX;
    for (unsigned i = 0; i < n; i++)
        if (tls_outside[i] == rt)
            return true;
    return false;
}

void weft_group_init(weft_group *g, weft_runtime *rt)
{
    if (!g) {
        weft__errorf(WEFT_EINVAL, "weft_group_init: g is NULL");
        return;
    }
    *g = (weft_group){ .rt_ = rt, .flags_ = WEFT__GROUP_MAGIC };
    if (!rt) {
        weft__errorf(WEFT_EINVAL, "weft_group_init: rt is NULL");
        g->status_ = WEFT_EINVAL;
        return;
    }
    g->owner_ = weft__current_worker_inline(rt);
}

/* The caller may now run long work itself: all private tasks are shared. */
__attribute__((noinline)) void weft__spawn_wake(weft__worker *w)
{
    weft__deque_share_owner(&w->dq, INT64_MAX);
    weft__notify_work(w->rt);
    weft__notify_waiters(w->rt, 1);
}

/* The rest of a spawn after the push: share (slow path), then notify. */
static __attribute__((noinline)) void spawn_share(weft__worker *w, int64_t t)
{
    weft__deque_share_after_push_owner(&w->dq, t);
    weft__spawn_notify(w);
}

/* Validation failures, outside threads, and a full deque array. */
static __attribute__((noinline)) void spawn_slow(weft_group *g, weft_task_fn fn, void *arg)
{
    if (!g) {
        weft__errorf(WEFT_EINVAL, "weft_spawn: g is NULL");
        return;
    }
    if (g->flags_ != WEFT__GROUP_MAGIC) {
        /* weft_group_wait reports it too (the magic is missing). */
        weft__errorf(WEFT_EINVAL, "weft_spawn: the group was not set up with weft_group_init");
        return;
    }
    weft_runtime *rt = g->rt_;
    if (!rt) {
        weft__errorf(WEFT_EINVAL, "weft_spawn: the group has no runtime (weft_group_init got NULL)");
        weft__group_fail(g, WEFT_EINVAL);
        return;
    }
    if (!fn) {
        weft__errorf(WEFT_EINVAL, "weft_spawn: fn is NULL");
        weft__group_fail(g, WEFT_EINVAL);
        return;
    }
    weft__worker *w = weft__current_worker(rt);
    /* The spawning thread is the one that waits, whichever thread ran
     * weft_group_init: a group with no children yet is bound to it here.
     * Nobody else reads owner_ before it has children. */
    if (g->owner_ != w && g->spawned_ == 0)
        g->owner_ = w;
    else if (WEFT__UNLIKELY(g->owner_ != w && g->owner_ != NULL)) {
        /* Another worker's group, with children: its counts are that
         * worker's alone (a child spawning into its parent's group is the
         * usual case). */
        weft__errorf(WEFT_EINVAL, "weft_spawn: the group has children spawned by another "
                                  "thread; only that thread may spawn into it");
        weft__group_fail(g, WEFT_EINVAL);
        return;
    }
    weft__task t = { fn, arg, g };
    g->spawned_++;
    if (WEFT__UNLIKELY(weft__tls_inline)) {
        /* The spawner runs it now; g's count of its own children counts it. */
        weft__run_task(w, &t, WEFT__TASK_OWN, false);
        return;
    }
    if (w && g->owner_ == w) {
        if (weft__deque_push_owner(&w->dq, fn, arg, g)) {
            weft__spawn_notify(w);
            return;
        }
        /* The deque could not grow: run the child now. */
        weft__run_task(w, &t, WEFT__TASK_OWN, false);
        return;
    }
    switch (weft__inject_push(rt, &t)) {
    case WEFT__INJECT_QUEUED:
        weft__event_notify(&rt->work_ev, 1);
        weft__notify_waiters(rt, 1);
        break;
    case WEFT__INJECT_CANCELED:
        weft__complete_remote(g, WEFT_ECANCELED);
        break;
    default:
        weft__run_task(w, &t, WEFT__TASK_REMOTE, false);
        break;
    }
}

void weft__share_all(weft_runtime *rt)
{
    weft__worker *w = weft__current_worker_inline(rt);
    if (w && !w->dq.solo && weft__deque_share_owner(&w->dq, INT64_MAX) > 0) {
        weft__event_notify(&rt->work_ev, INT_MAX);
        weft__notify_waiters(rt, INT_MAX);
    }
}

void weft_spawn(weft_group *g, weft_task_fn fn, void *arg)
{
    weft__worker *w = weft__tls_worker;
    if (WEFT__UNLIKELY(w == NULL || g == NULL || g->owner_ != w || fn == NULL ||
                       w->inline_depth)) {
        spawn_slow(g, fn, arg);
        return;
    }
    weft__deque *d = &w->dq;
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    if (WEFT__UNLIKELY(!weft__deque_put_owner(d, t, fn, arg, g))) {
        spawn_slow(g, fn, arg);   /* grows the array */
        return;
    }
    g->spawned_++;
    /* Tail calls only: the fast path saves no registers. */
    if (WEFT__UNLIKELY(weft__deque_should_share_owner(d, t))) {
        spawn_share(w, t);
        return;
    }
    weft__spawn_notify(w);
}

static __attribute__((noinline)) void wait_worker(weft__worker *w, weft_group *g)
{
    weft_runtime *rt = w->rt;
    weft__idle_state s = { 0, false, false, CK_BACKOFF_INITIALIZER };
    while (!weft__group_done(g)) {
        if (weft__run_some_work(w, &s) || weft__spin_idle(rt, &s))
            continue;
        weft__event_sleep(rt, &rt->done_ev, weft__group_done_cb, g, false, 0);
    }
    weft__flush_completions(w);
    weft__set_searching(rt, &s.searching, false);
}

static __attribute__((noinline)) void wait_outside(weft_runtime *rt, weft_group *g)
{
    weft__outside_enter(rt);
    weft__event *ev = weft__group_event(rt, g);
    bool fenced = ev == &rt->outside_ev;
    bool (*done)(void *) = fenced ? weft__group_done_sc_cb : weft__group_done_cb;
    unsigned idle = 0;
    ck_backoff_t bo = CK_BACKOFF_INITIALIZER;
    weft__task t;
    uint64_t since = 0;
    while (!weft__group_done(g)) {
        /* Queued tasks are left to the workers (where their children get
         * deques) while this thread spins, then yields or sleeps for up to
         * OUTSIDE_HELP_NS; it helps only with its own children still
         * queued after that while no worker sleeps (all are busy, or one
         * was woken for the task and will take it). */
        if (idle < OUTSIDE_SPIN_ROUNDS) {
            idle++;
            weft__backoff(&bo);
            continue;
        }
        /* Every worker is busy (none looks for work or sleeps): nobody
         * will start this thread's newest queued child soon, so it runs
         * that child itself rather than sleep (a parallel_for called
         * from here would otherwise leave its last split half queued
         * behind the workers' own work). */
        if (__atomic_load_n(&rt->work_ev.searching, __ATOMIC_RELAXED) == 0 &&
            weft__inject_take_back(rt, g, &t)) {
            weft__run_task(NULL, &t, WEFT__TASK_REMOTE, false);
            continue;
        }
        if (idle == OUTSIDE_SPIN_ROUNDS) {
            idle++;
            since = weft__now_ns();
        }
        uint64_t waited = weft__now_ns() - since;
        if (waited < OUTSIDE_HELP_NS && rt->spare_core) {
            sched_yield();
            continue;
        }
        if (waited < OUTSIDE_HELP_NS) {
            weft__event_sleep(rt, ev, done, g, fenced, (long)(OUTSIDE_HELP_NS - waited));
            continue;
        }
        /* Only its own children: another thread's queued task could take
         * far longer than this wait (a 10 ms wait took 1 s that way). */
        if (__atomic_load_n(&rt->work_ev.sleepers, __ATOMIC_RELAXED) == 0 &&
            __atomic_load_n(&rt->started, __ATOMIC_RELAXED) == rt->nworkers &&
            weft__inject_take_back(rt, g, &t)) {
            weft__run_task(NULL, &t, WEFT__TASK_REMOTE, false);
            continue;
        }
        weft__event_sleep(rt, ev, done, g, fenced, 0);
    }
    weft__outside_leave(rt);
}

/* Reports and clears the group's status once every child has finished
 * (the group is reusable afterwards). */
static __attribute__((noinline)) int group_status(weft_group *g, int st)
{
    __atomic_store_n(&g->status_, 0, __ATOMIC_RELAXED);
    if (st == WEFT_ECANCELED)
        return weft__errorf(st, "weft_group_wait: the runtime is being destroyed; "
                                "children not yet started were dropped");
    return weft__errorf(st, "weft_group_wait: a weft_spawn into this group was invalid "
                            "(NULL fn or group)");
}

static inline int group_finish(weft_group *g)
{
    g->spawned_ = 0;
    g->done_ = 0;
    __atomic_store_n(&g->pending_, 0, __ATOMIC_RELAXED);
    int st = __atomic_load_n(&g->status_, __ATOMIC_RELAXED);
    return WEFT__LIKELY(st == 0) ? 0 : group_status(g, st);
}

static __attribute__((noinline)) int wait_slow(weft_group *g)
{
    if (!g)
        return weft__errorf(WEFT_EINVAL, "weft_group_wait: g is NULL");
    if (g->flags_ != WEFT__GROUP_MAGIC)
        return weft__errorf(WEFT_EINVAL,
                            "weft_group_wait: the group was not set up with weft_group_init");
    weft_runtime *rt = g->rt_;
    if (!rt)
        return weft__errorf(WEFT_EINVAL,
                            "weft_group_wait: the group has no runtime (weft_group_init got NULL)");
    if (!weft__group_done(g)) {
        weft__worker *w = weft__tls_worker;
        if (w != NULL && g->owner_ == w)
            wait_worker(w, g);
        else
            wait_outside(rt, g);
    }
    return group_finish(g);
}

int weft_group_wait(weft_group *g)
{
    weft__worker *w = weft__tls_worker;
    /* Fast path: the spawning worker pops its own children back.  Its
     * unfinished children that are still queued are the newest tasks of
     * its deque, so while the bottom task is a private child of g it is
     * popped and run without reading pending_, the count other workers
     * bump (its line would move back and forth once per stolen child). */
    if (WEFT__LIKELY(w != NULL && g != NULL && g->owner_ == w)) {
        while (g->spawned_ != g->done_) {
            const weft__task *t = weft__deque_peek_private_owner(&w->dq);
            if (WEFT__UNLIKELY(t == NULL || __atomic_load_n(&t->g, __ATOMIC_RELAXED) != g)) {
                /* Stolen, shared or finished elsewhere: the general wait. */
                if (!weft__group_done(g))
                    wait_worker(w, g);
                break;
            }
            weft__task tmp;
            weft__run_task(w, weft__deque_take_owner(&w->dq, &tmp), WEFT__TASK_OWN, false);
        }
        return group_finish(g);
    }
    return wait_slow(g);
}
