/* Fork-join: weft_group_init, weft_spawn and weft_group_wait on workers and
 * outside threads, the calling thread's worker, and inline mode. */
#include <sched.h>

#include "runtime/sched.h"

__thread weft_task_worker *weft_task_self_ __attribute__((tls_model("initial-exec")));
_Thread_local unsigned weft__tls_inline __attribute__((tls_model("initial-exec")));

/* Back-off rounds of a waiting outside thread (a few microseconds).  It
 * runs no tasks meanwhile, and spinning for all of an idle worker's rounds
 * would take a core from the workers. */
#define OUTSIDE_SPIN_ROUNDS 4
/* Then, for this long, it either yields the CPU in a loop (when the
 * runtime has fewer workers than CPUs: a short wait ends without a futex
 * round trip, which is slow when the waker's CPU is idle), or sleeps on
 * its event.  With a worker per CPU a thread that calls sched_yield stays
 * runnable and takes a share of a computing worker's core, which slows
 * short parallel work down several times.  Only after this long does it help with queued tasks:
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
        weft__tls_worker->dq.tw.busy_ += WEFT__BUSY_INLINE;
}

void weft__inline_leave(void)
{
    weft__tls_inline--;
    if (weft__tls_worker)
        weft__tls_worker->dq.tw.busy_ -= WEFT__BUSY_INLINE;
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

/* An outside thread's identity as a group's owner_: the address of a
 * thread-local, unique among live threads. */
static _Thread_local char tls_outside_token __attribute__((tls_model("initial-exec")));

static inline void *self_token(weft__worker *w)
{
    return w ? (void *)w : (void *)&tls_outside_token;
}

bool weft__group_owned_here(const weft_group *g)
{
    weft__worker *w = g->rt_ ? weft__current_worker_inline(g->rt_) : NULL;
    return g->owner_ == self_token(w);
}

/* weft_group_init with a NULL group or runtime. */
static __attribute__((noinline)) void group_init_invalid(weft_group *g)
{
    if (!g) {
        weft__errorf(WEFT_EINVAL, "weft_group_init: g is NULL");
        return;
    }
    weft_group_reset_(g, NULL);
    g->bits_ = 0;
    g->owner_ = NULL;
    weft__errorf(WEFT_EINVAL, "weft_group_init: rt is NULL");
    g->status_ = WEFT_EINVAL;
}

/* weft_group_init past its inline fast path: bad arguments, an outside
 * thread, or a worker of another runtime. */
void weft_group_init_slow_(weft_group *g, weft_runtime *rt)
{
    if (WEFT__UNLIKELY(g == NULL || rt == NULL)) {
        group_init_invalid(g);
        return;
    }
    weft_group_reset_(g, rt);
    weft__worker *w = weft__current_worker_inline(rt);
    g->owner_ = self_token(w);
    g->bits_ = w ? 0 : WEFT__GROUP_OUTSIDE;
}

/* The public functions are their inline fast paths (<weft/runtime.h>),
 * for callers that take the address or define WEFT_NO_INLINE_GROUPS.  The
 * names are in parentheses: the header defines macros of the same names. */
void (weft_group_init)(weft_group *g, weft_runtime *rt)
{
    weft_group_init_inline_(g, rt);
}

/* The caller may now run long work itself: all private tasks are shared. */
__attribute__((noinline)) void weft__spawn_wake(weft__worker *w)
{
    weft__deque_share_owner(&w->dq, weft__deque_head(&w->dq), INT64_MAX);
    weft__notify_work(w->rt);
    weft__notify_waiters(w->rt, 1);
}

void weft_spawn_wake_(weft_task_worker *tw)
{
    weft__spawn_wake(weft__worker_of(tw));
}

/* The rest of a spawn for a thief that asked: share (slow path), notify. */
static __attribute__((noinline)) void spawn_share(weft__worker *w, weft_task_slot *head)
{
    weft__deque_share_after_push_owner(&w->dq, head);
    weft__notify_work(w->rt);
    weft__notify_waiters(w->rt, 1);
}

/* Binds g to the calling thread if it has no children yet (whichever
 * thread set it up, the spawning thread is the one that waits).  False if
 * another thread's children are in it: its counts are that thread's alone
 * (a child spawning into its parent's group is the usual case).  spawned_
 * is read atomically here: its owner may be spawning at the same time. */
static bool group_bind(weft_group *g, weft_runtime *rt, weft__worker *w)
{
    void *self = self_token(w);
    if (g->owner_ == self)
        return true;
    if (__atomic_load_n(&g->spawned_, __ATOMIC_RELAXED) != 0)
        return false;
    g->owner_ = self;
    g->bits_ = (g->bits_ & ~WEFT__GROUP_OUTSIDE) | (w ? 0 : WEFT__GROUP_OUTSIDE);
    (void)rt;
    return true;
}

/* One more child counted in g (the spawning thread only). */
static inline void group_count_child(weft_group *g)
{
    __atomic_store_n(&g->spawned_, g->spawned_ + 1, __ATOMIC_RELAXED);
}

/* Validation failures, outside threads, inline mode and a full stack. */
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
    if (!group_bind(g, rt, w)) {
        weft__errorf(WEFT_EINVAL, "weft_spawn: the group has children spawned by another "
                                  "thread; only that thread may spawn into it");
        weft__group_fail(g, WEFT_EINVAL);
        return;
    }
    weft__task t = { fn, arg, g };
    if (!w && g->spawned_ == 0 && !(g->bits_ & WEFT__GROUP_COUNTED)) {
        /* The runtime may not go away while an outside thread's group has
         * children it has not waited for (weft_runtime_destroy waits). */
        __atomic_fetch_add(&rt->outside_active, 1, __ATOMIC_SEQ_CST);
        g->bits_ |= WEFT__GROUP_COUNTED;
    }
    group_count_child(g);
    if (WEFT__UNLIKELY(weft__tls_inline)) {
        /* The spawner runs it now; g's count of its own children counts it. */
        weft__run_task(w, &t, WEFT__TASK_OWN, false);
        return;
    }
    if (w) {
        weft__deque *d = &w->dq;
        weft_task_slot *h = weft__deque_head(d);
        if (h == d->tw.end_) {
            /* The stack is full: the child runs now. */
            __atomic_store_n(&d->overflows, d->overflows + 1, __ATOMIC_RELAXED);
            weft__run_task(w, &t, WEFT__TASK_OWN, false);
            return;
        }
        weft__slot_put_task(h, &t);
        d->tw.head_ = h + 1;
        if (h < (weft_task_slot *)g->base_)
            g->base_ = h;
        weft__spawn_notify(w);
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

/* Makes every private task of w (the calling thread's worker) stealable
 * and, if there were any, wakes up to `wake` idle workers and waiters. */
static void share_private_owner(weft__worker *w, int wake)
{
    if (weft__deque_share_owner(&w->dq, weft__deque_head(&w->dq), INT64_MAX) > 0) {
        weft__event_notify(&w->rt->work_ev, wake);
        weft__notify_waiters(w->rt, wake);
    }
}

void weft__share_all(weft_runtime *rt)
{
    weft__worker *w = weft__current_worker_inline(rt);
    if (w && !w->dq.solo)
        share_private_owner(w, INT_MAX);
}

void weft__share_asked_owner(weft__worker *w)
{
    share_private_owner(w, 1);
}

/* Puts g's child (fn, arg) in the free slot h at the head of d and counts
 * it.  Owner thread. */
static inline __attribute__((always_inline)) void spawn_push_owner(weft__deque *d,
                                                                   weft_task_slot *h,
                                                                   weft_group *g,
                                                                   weft_task_fn fn, void *arg)
{
    weft__slot_put_task_fields(h, fn, arg, g);
    d->tw.head_ = h + 1;
    group_count_child(g);
    if (h < (weft_task_slot *)g->base_)
        g->base_ = h;
}

/* weft_spawn on the caller's worker past its one-compare checks: typed
 * tasks or inline mode on this thread, or a head at the spawn limit (a
 * full stack, or a thief asked for tasks). */
static __attribute__((noinline)) void spawn_unusual(weft__worker *w, weft_group *g,
                                                    weft_task_fn fn, void *arg)
{
    weft__deque *d = &w->dq;
    weft_task_slot *h = d->tw.head_;
    /* A head that typed tasks moved, inline mode, or a full stack. */
    if (weft__inline_depth(d) || !weft__deque_head_ok(d) || h == d->tw.end_) {
        spawn_slow(g, fn, arg);
        return;
    }
    spawn_push_owner(d, h, g, fn, arg);
    if (h >= __atomic_load_n(&d->tw.limit_, __ATOMIC_RELAXED)) {
        spawn_share(w, h + 1);   /* a thief asked (limit_ lowered) */
        return;
    }
    weft__spawn_notify(w);
}

/* weft_spawn past its inline fast path. */
void weft_spawn_slow_(weft_group *g, weft_task_fn fn, void *arg)
{
    weft__worker *w = weft__tls_worker;
    if (w == NULL || g == NULL || g->owner_ != w || fn == NULL)
        spawn_slow(g, fn, arg);
    else
        spawn_unusual(w, g, fn, arg);
}

void (weft_spawn)(weft_group *g, weft_task_fn fn, void *arg)
{
    weft_spawn_inline_(g, fn, arg);
}

/* The group is done and every slot left from floor up holds a task that a
 * thief took (the owner ran the others): once each thief has copied its
 * slot out, they are empty again and the stack goes back to floor.  Owner
 * thread. */
static void reset_to_floor(weft__worker *w, weft_task_slot *floor)
{
    weft__deque *d = &w->dq;
    weft_task_slot *h = weft__deque_head(d);
    for (weft_task_slot *s = floor; s < h; s++) {
        if (!weft__slot_is_generic(s))
            weft__task_misuse("weft_group_wait: a task spawned with WEFT_SPAWN after the "
                              "group's first child was not synced before the wait");
        ck_backoff_t bo = CK_BACKOFF_INITIALIZER;
        while (__atomic_load_n(&s->state_, __ATOMIC_ACQUIRE) != WEFT_TASK_DONE_)
            ck_backoff_eb(&bo);
        weft__slot_release(s);
    }
    d->tw.head_ = floor;
    if (WEFT__TOP_POS(__atomic_load_n(&d->top, __ATOMIC_RELAXED)) > weft__deque_pos(d, floor))
        weft__deque_reset_owner(d, floor);
}

static __attribute__((noinline)) void wait_worker(weft__worker *w, weft_group *g)
{
    weft_runtime *rt = w->rt;
    weft__idle_state s = { 0, false, false, CK_BACKOFF_INITIALIZER, 0, 0 };
    weft_task_slot *floor = g->base_;
    if (floor == WEFT__GROUP_NO_BASE)
        floor = weft__deque_head(&w->dq);   /* no child on this stack: pop nothing */
    while (!weft__group_done(g)) {
        if (weft__run_some_work(w, &s, floor) || weft__spin_idle(rt, &s))
            continue;
        weft__event_sleep(rt, &rt->done_ev, weft__group_done_cb, g, false, 0);
    }
    /* Children of other groups queued above g's first child (groups waited
     * for out of order) run now, so that only stolen slots are left above
     * floor. */
    weft__run_own_tasks(w, floor);
    weft__flush_completions(w);
    weft__set_searching(rt, &s.searching, false);
    /* Stolen children leave their slots behind, whether or not this wait
     * saw one of them: a group already done when the wait began left them
     * on the stack, above the typed tasks' head (their WEFT_SYNC then
     * misread the stack, and a later pop ran such a slot a second time). */
    if (weft__deque_head(&w->dq) > floor)
        reset_to_floor(w, floor);
}

static __attribute__((noinline)) void wait_outside(weft_runtime *rt, weft_group *g)
{
    weft__outside_enter(rt);
    weft__event *ev = weft__group_event(rt, g);
    bool fenced = ev == &rt->outside_ev;
    bool (*done)(void *) = fenced ? weft__group_done_sc_cb : weft__group_done_cb;
    bool take_back = !(g->bits_ & WEFT__GROUP_WORKERS_ONLY);
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
         * behind the workers' own work).  Not in a group for workers only
         * (WEFT__GROUP_WORKERS_ONLY). */
        if (take_back && __atomic_load_n(&rt->work_ev.searching, __ATOMIC_RELAXED) == 0 &&
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
         * far longer than the wait it would be helping. */
        if (take_back && __atomic_load_n(&rt->work_ev.sleepers, __ATOMIC_RELAXED) == 0 &&
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

/* An outside thread's group gives back its hold on the runtime: the last
 * touch of rt in its wait (weft_runtime_destroy may free it right after). */
static __attribute__((noinline)) void group_release(weft_group *g)
{
    g->bits_ &= ~WEFT__GROUP_COUNTED;
    __atomic_fetch_sub(&g->rt_->outside_active, 1, __ATOMIC_SEQ_CST);
}

/* The end of a wait once every child has finished: the status, and an
 * outside thread's hold on the runtime.  The counts were reset. */
int weft_group_finish_(weft_group *g)
{
    int st = __atomic_load_n(&g->status_, __ATOMIC_RELAXED);
    if (WEFT__UNLIKELY(g->bits_ & WEFT__GROUP_COUNTED))
        group_release(g);
    return WEFT__LIKELY(st == 0) ? 0 : group_status(g, st);
}

static inline int group_finish(weft_group *g)
{
    g->spawned_ = 0;
    g->done_ = 0;
    g->base_ = WEFT__GROUP_NO_BASE;
    __atomic_store_n(&g->pending_, 0, __ATOMIC_RELAXED);
    return weft_group_finish_(g);
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
    weft__worker *w = weft__tls_worker;
    if (w != NULL && g->owner_ == w)
        wait_worker(w, g);
    else if (!weft__group_done(g))
        wait_outside(rt, g);
    return group_finish(g);
}

/* The newest task of w's stack if it is a private weft_spawn child of g,
 * else NULL: the child is stolen or shared, a child of another group is
 * newer, or typed tasks moved the head.  Owner thread. */
static inline weft_task_slot *newest_own_child(weft__worker *w, const weft_group *g)
{
    weft__deque *d = &w->dq;
    weft_task_slot *p = d->tw.head_ - 1;
    if (WEFT__UNLIKELY(p < d->tw.split_ || !weft__deque_head_ok(d) ||
                       !weft__slot_is_generic(p) || weft__slot_group(p) != g))
        return NULL;
    return p;
}

/* Takes p, found by newest_own_child, for the caller to run. */
static inline void take_own_child(weft__worker *w, weft_task_slot *p)
{
    w->dq.tw.head_ = p;
    weft_task_take_(p);
    WEFT__STAT_INC(w, tasks);
}

/* Runs p, taken by take_own_child (only g lives across the call). */
static inline void run_own_child(weft_group *g, weft_task_slot *p)
{
    weft__slot_fn(p)(weft__slot_arg(p));
    g->done_++;
}

/* The wait of g's spawning worker: its private children of g, newest
 * first, sharing half of the others for a thief that asked, then the
 * general wait for the rest. */
static __attribute__((noinline)) void wait_own(weft_group *g)
{
    weft__worker *w = weft__tls_worker;
    weft__deque *d = &w->dq;
    while (g->spawned_ != g->done_) {
        weft_task_slot *p = newest_own_child(w, g);
        if (!p) {
            wait_worker(w, g);
            return;
        }
        take_own_child(w, p);
        if (WEFT__UNLIKELY(weft__deque_hungry(d)) && p > d->osplit)
            weft__deque_share_on_pop_owner(d, p);
        run_own_child(g, p);
    }
}

/* The inline wait's way out: g's children that it could not pop. */
int weft_group_wait_own_(weft_group *g)
{
    wait_own(g);
    return group_finish(g);
}

/* weft_group_wait past its inline fast path: not g's spawning worker, or
 * not a valid group. */
int weft_group_wait_slow_(weft_group *g)
{
    return wait_slow(g);
}

int (weft_group_wait)(weft_group *g)
{
    return weft_group_wait_inline_(g);
}
