/* Scheduling: fork-join groups, the workers' loop, stealing, the injection
 * queue of outside threads and sleeping. */
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Caps one back-off step at 2k compiler-barrier iterations (under 1 us):
 * an idle worker looks for work that often, so a task queued for it
 * starts within about a microsecond (with 16k steps it took ~7 us, a tenth
 * of a small parallel map). */
#define CK_BACKOFF_CEILING (1u << 11)
#include <ck_backoff.h>
#include <ck_pr.h>

#include "runtime/internal.h"

/* The worker running on this thread, NULL on outside threads.  The
 * initial-exec model makes it one %fs-relative load, even in libweft.so
 * (no __tls_get_addr call on the spawn path). */
static _Thread_local weft__worker *tls_worker __attribute__((tls_model("initial-exec")));
/* The depth of weft__inline_enter on this thread (0: work is queued). */
static _Thread_local unsigned tls_inline __attribute__((tls_model("initial-exec")));

/* Failed search rounds before an idle worker goes to sleep: a few hundred
 * microseconds of spinning, each round ending in a sched_yield once the
 * back-off reaches its ceiling. */
#define SPIN_ROUNDS 200
/* Back-off rounds of a waiting outside thread (~6k barrier iterations, a
 * couple of us).  It runs no tasks meanwhile: spinning for all of SPIN_ROUNDS
 * took a core from the workers (~10% of fib(32)'s samples on two cores). */
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

static inline weft__worker *current_worker(const weft_runtime *rt)
{
    weft__worker *w = tls_worker;
    return (w && w->rt == rt) ? w : NULL;
}

weft__worker *weft__current_worker(const weft_runtime *rt)
{
    return current_worker(rt);
}

void weft__inline_enter(void)
{
    tls_inline++;
    if (tls_worker)
        tls_worker->inline_depth++;
}

void weft__inline_leave(void)
{
    tls_inline--;
    if (tls_worker)
        tls_worker->inline_depth--;
}

bool weft__inline_now(void)
{
    return tls_inline != 0;
}

int weft__worker_index(const weft_runtime *rt)
{
    weft__worker *w = weft__current_worker(rt);
    return w ? (int)w->index : -1;
}

/* ----------------------------------------------------------------- events */

static void futex_wait(uint32_t *addr, uint32_t val, long timeout_ns)
{
    struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, timeout_ns > 0 ? &ts : NULL, NULL, 0);
}

static void event_wake(weft__event *ev, int n)
{
    __atomic_fetch_add(&ev->seq, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &ev->seq, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Wakes sleepers of ev, if any: one relaxed load on the fast path.  The
 * caller has just published work with a store; a sleeper issues a
 * membarrier after announcing itself, which orders that store before its
 * final check (an asymmetric Dekker handshake, so the publisher needs no
 * fence). */
static inline void event_notify(weft__event *ev, int n)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (WEFT__UNLIKELY(__atomic_load_n(&ev->sleepers, __ATOMIC_RELAXED) > 0))
        event_wake(ev, n);
}

/* Wakes a sleeping idle worker for work just made visible.  On a runtime
 * with more workers than CPUs (spin_cap) only while no worker spins (a
 * spinner finds the work, and wakes a sleeper if it leaves more behind)
 * and no earlier wake-up is unanswered: a futex call per spawn would
 * otherwise make oversubscribed fork-join several times slower.  A
 * wake-up skipped on a stale read loses no work: the task stays visible
 * to the next search, and its owner runs it if nobody steals it. */
static inline void notify_work(weft_runtime *rt)
{
    weft__event *ev = &rt->work_ev;
    if (!rt->spin_cap) {
        event_notify(ev, 1);
        return;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ev->sleepers, __ATOMIC_RELAXED) == 0 ||
        __atomic_load_n(&ev->spinners, __ATOMIC_RELAXED) > 0 ||
        __atomic_load_n(&ev->wake_pending, __ATOMIC_RELAXED))
        return;
    int32_t zero = 0;
    if (__atomic_compare_exchange_n(&ev->wake_pending, &zero, 1, false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        event_wake(ev, 1);
}

/* Workers waiting in weft_group_wait sleep on done_ev (their groups'
 * completions wake them), yet they run stolen work while they wait: when
 * no idle worker sleeps on work_ev to take new work, wake n waiters for
 * it.  Without this, a waiter slept through its stolen child's later
 * loops, which then ran on one worker. */
static inline void notify_waiters(weft_runtime *rt, int n)
{
    if (WEFT__UNLIKELY(__atomic_load_n(&rt->done_ev.sleepers, __ATOMIC_RELAXED) > 0 &&
                       __atomic_load_n(&rt->work_ev.sleepers, __ATOMIC_RELAXED) == 0))
        event_wake(&rt->done_ev, n);
}

void weft__deque_share_on_pop_owner(weft__deque *d)
{
    int64_t n = weft__deque_share_owner(d, (d->bottom - d->osplit + 1) / 2);
    if (n > 0 && d->wake_ev)
        event_notify(d->wake_ev, n < INT_MAX ? (int)n : INT_MAX);
}

/* A worker becomes idle (looking for work, or asleep after looking) or
 * busy again.  While any is idle, spawns share their tasks at once. */
static inline void set_searching(weft_runtime *rt, bool *searching, bool on)
{
    if (*searching != on) {
        __atomic_fetch_add(&rt->work_ev.searching, on ? 1 : -1, __ATOMIC_RELAXED);
        *searching = on;
    }
}

void weft__wake_all(weft_runtime *rt, weft__event *ev)
{
    (void)rt;
    event_wake(ev, INT_MAX);
}

/* Sleeps on ev unless ready(ctx) holds after announcing.  Without
 * membarrier a wake-up may be missed, so the sleep is then bounded.
 * fenced: the wakers of ev publish with a seq_cst read-modify-write and
 * then read sleepers seq_cst (outside_ev), and ready() reads seq_cst: all
 * four accesses are in one total order, so either the waker sees this
 * sleeper or ready() sees the work, and the membarrier (an IPI to every
 * CPU running a worker) is not needed.
 * timeout_ns > 0 bounds the sleep (0: the default bound). */
static void event_sleep(weft_runtime *rt, weft__event *ev, bool (*ready)(void *), void *ctx,
                        bool fenced, long timeout_ns)
{
    __atomic_fetch_add(&ev->sleepers, 1, __ATOMIC_SEQ_CST);
    if (!fenced && rt->membarrier_ok)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    uint32_t seq = __atomic_load_n(&ev->seq, __ATOMIC_ACQUIRE);
    if (!ready(ctx))
        futex_wait(&ev->seq, seq, timeout_ns > 0 ? timeout_ns
                                  : fenced || rt->membarrier_ok ? 1000000000L : 10000000L);
    __atomic_fetch_sub(&ev->sleepers, 1, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------ group state */

static inline bool group_done(const weft_group *g)
{
    return g->spawned_ == g->done_ + __atomic_load_n(&g->pending_, __ATOMIC_ACQUIRE);
}

static bool group_done_cb(void *g) { return group_done(g); }

/* group_done for a sleeper on outside_ev: pending_ read seq_cst. */
static bool group_done_sc_cb(void *p)
{
    const weft_group *g = p;
    return g->spawned_ == g->done_ + __atomic_load_n(&g->pending_, __ATOMIC_SEQ_CST);
}

static void group_fail(weft_group *g, int code)
{
    int zero = 0;
    __atomic_compare_exchange_n(&g->status_, &zero, code, false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* The event a group's waiter sleeps on: outside_ev for groups made on
 * outside threads, done_ev for workers' groups (whose waits also run
 * tasks, and are woken by any completion). */
static inline weft__event *group_event(weft_runtime *rt, const weft_group *g)
{
    return g->owner_ ? &rt->done_ev : &rt->outside_ev;
}

/* n children finished on a thread other than their spawning worker.  g may
 * be gone as soon as pending_ is incremented. */
static __attribute__((noinline)) void complete_remote_n(weft_group *g, int status, int64_t n)
{
    weft_runtime *rt = g->rt_;
    weft__event *ev = group_event(rt, g);
    if (status)
        group_fail(g, status);
    __atomic_fetch_add(&g->pending_, n, __ATOMIC_SEQ_CST);
    if (ev == &rt->outside_ev) {
        /* Its sleepers issue no membarrier (event_sleep, fenced). */
        if (__atomic_load_n(&ev->sleepers, __ATOMIC_SEQ_CST) > 0)
            event_wake(ev, INT_MAX);
        return;
    }
    event_notify(ev, INT_MAX);
}

static inline void complete_remote(weft_group *g, int status)
{
    complete_remote_n(g, status, 1);
}

/* Publishes w's deferred completions (weft__worker.defer_g). */
static inline void flush_completions(weft__worker *w)
{
    if (w->defer_n > 0) {
        complete_remote_n(w->defer_g, 0, w->defer_n);
        w->defer_g = NULL;
        w->defer_n = 0;
    }
}

/* Where a task to run came from: popped from the running worker's own
 * deque (a child of one of its groups, spawned by this thread), or stolen
 * or injected (spawned by another thread, which waits for it).  The origin
 * decides how the completion is counted, so the group's line, which its
 * owner writes at every spawn, is never read for it (a thief reading it
 * per task made each of the owner's next spawns miss the cache). */
typedef enum task_origin { TASK_OWN, TASK_REMOTE } task_origin;

/* Runs t, which may be a deque slot: its fields are read before the call
 * (the task's own pushes may reuse the slot).  defer (w not NULL): a
 * remote completion waits in w for the next task of its group; the caller
 * flushes before anything that may take long. */
static inline void run_task(weft__worker *w, const weft__task *t, task_origin origin,
                            bool defer)
{
    weft_task_fn fn = __atomic_load_n(&t->fn, __ATOMIC_RELAXED);
    void *arg = __atomic_load_n(&t->arg, __ATOMIC_RELAXED);
    weft_group *g = __atomic_load_n(&t->g, __ATOMIC_RELAXED);
    bool own = origin == TASK_OWN;
    /* Outside threads count their tasks in rt (read before g may end). */
    weft_runtime *rt = w ? NULL : g->rt_;
    if (defer && w->defer_g != g)
        flush_completions(w);
    fn(arg);
    if (own) {
        g->done_++;
    } else if (defer) {
        w->defer_g = g;
        w->defer_n++;
    } else {
        complete_remote(g, 0);
    }
#ifdef WEFT_STATS
    if (w)
        WEFT__STAT_INC(w, tasks);
    else
        __atomic_fetch_add(&rt->outside_tasks, 1, __ATOMIC_RELAXED);
#else
    (void)rt;
#endif
}

/* --------------------------------------------------------- injection queue */

enum { INJECT_QUEUED, INJECT_CANCELED, INJECT_NOMEM };

static int inject_push(weft_runtime *rt, const weft__task *t)
{
    int r = INJECT_QUEUED;
    pthread_mutex_lock(&rt->inject_lock);
    if (__atomic_load_n(&rt->stopping, __ATOMIC_ACQUIRE)) {
        r = INJECT_CANCELED;
        goto out;
    }
    if (rt->ring_count == rt->ring_cap) {
        size_t cap = rt->ring_cap ? rt->ring_cap * 2 : 64;
        weft__task *n = cap <= SIZE_MAX / sizeof *n ? weft__malloc(cap * sizeof *n) : NULL;
        if (!n) {
            r = INJECT_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < rt->ring_count; i++)
            n[i] = rt->ring[(rt->ring_head + i) & (rt->ring_cap - 1)];
        weft__free(rt->ring);
        rt->ring = n;
        rt->ring_cap = cap;
        rt->ring_head = 0;
    }
    rt->ring[(rt->ring_head + rt->ring_count) & (rt->ring_cap - 1)] = *t;
    rt->ring_count++;
    __atomic_store_n(&rt->inject_count, (int64_t)rt->ring_count, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&rt->inject_lock);
    return r;
}

static bool inject_pop(weft_runtime *rt, weft__task *out)
{
    if (__atomic_load_n(&rt->inject_count, __ATOMIC_ACQUIRE) == 0)
        return false;
    bool got = false;
    pthread_mutex_lock(&rt->inject_lock);
    if (rt->ring_count > 0) {
        *out = rt->ring[rt->ring_head];
        rt->ring_head = (rt->ring_head + 1) & (rt->ring_cap - 1);
        rt->ring_count--;
        __atomic_store_n(&rt->inject_count, (int64_t)rt->ring_count, __ATOMIC_RELEASE);
        got = true;
    }
    pthread_mutex_unlock(&rt->inject_lock);
    return got;
}

/* Takes back the newest queued task if it is a child of g: an outside
 * thread's own spawn that no worker has started yet.  Outside thread. */
static bool inject_take_back(weft_runtime *rt, const weft_group *g, weft__task *out)
{
    if (__atomic_load_n(&rt->inject_count, __ATOMIC_ACQUIRE) == 0)
        return false;
    bool got = false;
    pthread_mutex_lock(&rt->inject_lock);
    if (rt->ring_count > 0) {
        size_t last = (rt->ring_head + rt->ring_count - 1) & (rt->ring_cap - 1);
        if (rt->ring[last].g == g) {
            *out = rt->ring[last];
            rt->ring_count--;
            __atomic_store_n(&rt->inject_count, (int64_t)rt->ring_count, __ATOMIC_RELEASE);
            got = true;
        }
    }
    pthread_mutex_unlock(&rt->inject_lock);
    return got;
}

/* Called by weft_runtime_destroy once stopping is set: the queued tasks of
 * outside threads are dropped and their groups report WEFT_ECANCELED. */
void weft__inject_cancel_all(weft_runtime *rt)
{
    weft__task t;
    while (inject_pop(rt, &t))
        complete_remote(t.g, WEFT_ECANCELED);
}

/* --------------------------------------------------------------- stealing */

static inline uint64_t rng_next(weft__worker *w)
{
    /* xorshift64 */
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->rng = x;
    return x;
}

/* One search round: the injection queue, then every other worker once,
 * starting at a random victim.  Returns false, or true with *more_left
 * telling whether the victim still has tasks to steal.  What it finds was
 * spawned by another thread (TASK_REMOTE). */
static bool find_work(weft__worker *w, weft__task *out, bool *more_left)
{
    weft_runtime *rt = w->rt;
    if (inject_pop(rt, out))
        return true;
    unsigned n = rt->nworkers;
    if (n < 2)
        return false;
    unsigned v = (unsigned)(rng_next(w) % n);
    for (unsigned k = 0; k < n; k++, v = (v + 1 == n) ? 0 : v + 1) {
        if (v == w->index)
            continue;
        weft__worker *victim = rt->workers[v];
        if (weft__deque_size(&victim->dq) <= 0) {
            /* Its owner may hold private tasks: ask it to share. */
            weft__deque_request(&victim->dq);
            continue;
        }
        WEFT__STAT_INC(w, steal_attempts);
        if (weft__deque_steal(&victim->dq, out, &w->rec) == WEFT__STEAL_OK) {
            WEFT__STAT_INC(w, steals);
            if (weft__profiling(rt))
                weft__profile_instant(rt, "steal", "steal");
            *more_left = weft__deque_size(&victim->dq) > 0;
            return true;
        }
    }
    return false;
}

static bool work_visible(void *arg)
{
    weft_runtime *rt = arg;
    if (__atomic_load_n(&rt->stopping, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&rt->inject_count, __ATOMIC_ACQUIRE) > 0)
        return true;
    for (unsigned i = 0; i < rt->nworkers; i++)
        if (weft__deque_size(&rt->workers[i]->dq) > 0)
            return true;
    return false;
}

bool weft__hungry(const weft_runtime *rt, const weft__worker *w)
{
    if (w)
        return weft__deque_count_owner(&w->dq) <= 0;
    return __atomic_load_n(&rt->inject_count, __ATOMIC_RELAXED) == 0;
}

static inline void backoff(ck_backoff_t *bo)
{
    ck_backoff_eb(bo);
}

/* The back-off of an idle worker: once the steps reach their ceiling it
 * also yields the CPU (a syscall of ~1 us when nothing else is runnable).
 * A thread woken meanwhile, such as an outside thread whose loop just
 * ended, would otherwise wait for the spinning worker's time slice to end
 * (no core is free while every worker spins): 0.2-1 ms per call. */
static inline void idle_backoff(ck_backoff_t *bo)
{
    ck_backoff_eb(bo);
    if (*bo >= CK_BACKOFF_CEILING)
        sched_yield();
}

/* A worker's idle search: failed rounds so far, its back-off, whether it
 * is counted as idle (rt->work_ev.searching) and whether it holds one of
 * the spinning places of an oversubscribed runtime (rt->spin_cap). */
typedef struct idle_state {
    unsigned rounds;
    bool searching;
    bool spinner;
    ck_backoff_t bo;
} idle_state;

/* Takes a spinning place for an idle worker in its loop, if it needs one
 * and one is free.  More spinners than CPUs would only take turns on them:
 * after a burst of sleeping calls, 64 workers on 2 CPUs used ~30 ms of CPU
 * spinning down.  Waiting workers (wait_worker) spin without a place:
 * each remote completion would otherwise wake every sleeping waiter. */
static inline bool spin_place_take(weft_runtime *rt, idle_state *s)
{
    if (s->spinner || !rt->spin_cap)
        return true;
    int32_t n = __atomic_load_n(&rt->work_ev.spinners, __ATOMIC_RELAXED);
    while (n < (int32_t)rt->spin_cap) {
        if (__atomic_compare_exchange_n(&rt->work_ev.spinners, &n, n + 1, true,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            s->spinner = true;
            return true;
        }
    }
    return false;
}

static inline void spin_place_drop(weft_runtime *rt, idle_state *s)
{
    if (s->spinner) {
        __atomic_fetch_sub(&rt->work_ev.spinners, 1, __ATOMIC_RELAXED);
        s->spinner = false;
    }
}

/* A worker about to sleep or just woken clears work_ev.wake_pending
 * (notify_work), so that the next spawn may wake a sleeper again. */
static inline void wake_answer(weft_runtime *rt)
{
    if (rt->spin_cap && __atomic_load_n(&rt->work_ev.wake_pending, __ATOMIC_RELAXED))
        __atomic_store_n(&rt->work_ev.wake_pending, 0, __ATOMIC_RELAXED);
}

static inline void spawn_notify(weft__worker *w);

/* After a pop of w's own task: if private tasks are left, share them and
 * wake as a spawn does (when other workers are idle). */
static inline void pop_notify(weft__worker *w)
{
    if (w->dq.bottom > w->dq.osplit)
        spawn_notify(w);
}

/* Runs one task from w's own deque or a victim's; false if none was found. */
static inline bool run_some_work(weft__worker *w, idle_state *s)
{
    weft__task t;
    task_origin origin = TASK_OWN;
    bool more_left = false;
    const weft__task *p = weft__deque_take_owner(&w->dq, &t);
    if (!p) {
        if (!find_work(w, &t, &more_left)) {
            flush_completions(w);
            return false;
        }
        p = &t;
        origin = TASK_REMOTE;
    }
    set_searching(w->rt, &s->searching, false);
    spin_place_drop(w->rt, s);
    /* A pop of the owner's own task may have taken shared tasks back into
     * the private part (weft__deque_pop_shared_owner takes the newer half
     * back), or left private ones behind: while other workers are idle they
     * must stay stealable, or they wait until this task ends (a waiter that
     * runs a long child hid half of its other children from idle workers). */
    if (origin == TASK_OWN)
        pop_notify(w);
    /* More left at the victim: let another sleeper come and help.  Not
     * gated as notify_work is: steals are rare next to spawns, and each
     * one that leaves tasks behind passes the wake-up on, so that a burst
     * of tasks (the runners of a parallel_map of blocking calls) reaches
     * the sleeping workers. */
    if (more_left)
        event_notify(&w->rt->work_ev, 1);
    run_task(w, p, origin, true);
    s->rounds = 0;
    s->bo = CK_BACKOFF_INITIALIZER;
    return true;
}

/* After a failed search: backs off, and says whether spin rounds are left
 * (false: time to sleep).  From the second failed round on the worker
 * counts as idle: one that misses once (its request is served at the
 * victim's next push or pop) does not touch the shared count. */
static inline bool spin_idle(weft_runtime *rt, idle_state *s)
{
    if (s->rounds >= SPIN_ROUNDS)
        return false;
    if (s->rounds > 0)
        set_searching(rt, &s->searching, true);
    s->rounds++;
    idle_backoff(&s->bo);
    return true;
}

void *weft__worker_main(void *arg)
{
    weft__worker *w = arg;
    weft_runtime *rt = w->rt;
    tls_worker = w;
    __atomic_fetch_add(&rt->started, 1, __ATOMIC_RELAXED);
    /* Counted idle from weft_runtime_create on: spawns before this thread
     * got here share their tasks for it. */
    idle_state s = { 0, true, false, CK_BACKOFF_INITIALIZER };
    for (;;) {
        if (run_some_work(w, &s))
            continue;
        if (__atomic_load_n(&rt->stopping, __ATOMIC_ACQUIRE))
            break;
        if (spin_place_take(rt, &s) && spin_idle(rt, &s))
            continue;
        /* Without a spinning place it sleeps at once; woken, it searches
         * once and sleeps again unless it finds work. */
        s.rounds = SPIN_ROUNDS;
        /* Still counted while asleep: a spawn must not see neither count
         * between here and event_sleep's announcement, or it would keep
         * its tasks private from this worker.  The place is given up
         * before the announcement (notify_work reads both). */
        set_searching(rt, &s.searching, true);
        spin_place_drop(rt, &s);
        ck_epoch_poll(&w->rec);
        WEFT__STAT_INC(w, sleeps);
        /* A pending wake-up is answered before the announcement too: a
         * spawn that then sees none pending may wake this worker, and one
         * that saw it pending published its task before, so the check in
         * event_sleep finds it. */
        wake_answer(rt);
        event_sleep(rt, &rt->work_ev, work_visible, rt, false, 0);
        wake_answer(rt);
    }
    flush_completions(w);
    set_searching(rt, &s.searching, false);
    spin_place_drop(rt, &s);
    tls_worker = NULL;
    return NULL;
}

/* -------------------------------------------------------------- fork-join */

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
    g->owner_ = current_worker(rt);
}

/* Other workers look for work or sleep while this one holds private
 * tasks: share them all (the caller may now run long work itself) and
 * wake a sleeper, if any. */
static __attribute__((noinline)) void spawn_wake(weft__worker *w)
{
    weft__deque_share_owner(&w->dq, INT64_MAX);
    notify_work(w->rt);
    notify_waiters(w->rt, 1);
}

/* After a push: share and wake if other workers are idle (one relaxed
 * load; every worker sleeping on work_ev counts as idle).  A lone worker
 * has nobody to wake (outside threads never sleep on work_ev). */
static inline void spawn_notify(weft__worker *w)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (WEFT__UNLIKELY(!w->dq.solo &&
                       __atomic_load_n(&w->rt->work_ev.searching, __ATOMIC_RELAXED) > 0))
        spawn_wake(w);
}

/* The rest of a spawn after the push: share (slow path), then notify. */
static __attribute__((noinline)) void spawn_share(weft__worker *w, int64_t t)
{
    weft__deque_share_after_push_owner(&w->dq, t);
    spawn_notify(w);
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
        group_fail(g, WEFT_EINVAL);
        return;
    }
    if (!fn) {
        weft__errorf(WEFT_EINVAL, "weft_spawn: fn is NULL");
        group_fail(g, WEFT_EINVAL);
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
        group_fail(g, WEFT_EINVAL);
        return;
    }
    weft__task t = { fn, arg, g };
    g->spawned_++;
    if (WEFT__UNLIKELY(tls_inline)) {
        /* The spawner runs it now; g's count of its own children counts it. */
        run_task(w, &t, TASK_OWN, false);
        return;
    }
    if (w && g->owner_ == w) {
        if (weft__deque_push_owner(&w->dq, fn, arg, g)) {
            spawn_notify(w);
            return;
        }
        /* The deque could not grow: run the child now. */
        run_task(w, &t, TASK_OWN, false);
        return;
    }
    switch (inject_push(rt, &t)) {
    case INJECT_QUEUED:
        event_notify(&rt->work_ev, 1);
        notify_waiters(rt, 1);
        break;
    case INJECT_CANCELED:
        complete_remote(g, WEFT_ECANCELED);
        break;
    default:
        run_task(w, &t, TASK_REMOTE, false);
        break;
    }
}

void weft__share_all(weft_runtime *rt)
{
    weft__worker *w = current_worker(rt);
    if (w && !w->dq.solo && weft__deque_share_owner(&w->dq, INT64_MAX) > 0) {
        event_notify(&rt->work_ev, INT_MAX);
        notify_waiters(rt, INT_MAX);
    }
}

void weft_spawn(weft_group *g, weft_task_fn fn, void *arg)
{
    weft__worker *w = tls_worker;
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
    spawn_notify(w);
}

static __attribute__((noinline)) void wait_worker(weft__worker *w, weft_group *g)
{
    weft_runtime *rt = w->rt;
    idle_state s = { 0, false, false, CK_BACKOFF_INITIALIZER };
    while (!group_done(g)) {
        if (run_some_work(w, &s) || spin_idle(rt, &s))
            continue;
        event_sleep(rt, &rt->done_ev, group_done_cb, g, false, 0);
    }
    flush_completions(w);
    set_searching(rt, &s.searching, false);
}

static __attribute__((noinline)) void wait_outside(weft_runtime *rt, weft_group *g)
{
    weft__outside_enter(rt);
    weft__event *ev = group_event(rt, g);
    bool fenced = ev == &rt->outside_ev;
    bool (*done)(void *) = fenced ? group_done_sc_cb : group_done_cb;
    unsigned idle = 0;
    ck_backoff_t bo = CK_BACKOFF_INITIALIZER;
    weft__task t;
    uint64_t since = 0;
    while (!group_done(g)) {
        /* Queued tasks are left to the workers (where their children get
         * deques) while this thread spins, then yields or sleeps for up to
         * OUTSIDE_HELP_NS; it helps only with its own children still
         * queued after that while no worker sleeps (all are busy, or one
         * was woken for the task and will take it). */
        if (idle < OUTSIDE_SPIN_ROUNDS) {
            idle++;
            backoff(&bo);
            continue;
        }
        /* Every worker is busy (none looks for work or sleeps): nobody
         * will start this thread's newest queued child soon, so it runs
         * that child itself rather than sleep (a parallel_for called
         * from here would otherwise leave its last split half queued
         * behind the workers' own work). */
        if (__atomic_load_n(&rt->work_ev.searching, __ATOMIC_RELAXED) == 0 &&
            inject_take_back(rt, g, &t)) {
            run_task(NULL, &t, TASK_REMOTE, false);
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
            event_sleep(rt, ev, done, g, fenced, (long)(OUTSIDE_HELP_NS - waited));
            continue;
        }
        /* Only its own children: another thread's queued task could take
         * far longer than this wait (a 10 ms wait took 1 s that way). */
        if (__atomic_load_n(&rt->work_ev.sleepers, __ATOMIC_RELAXED) == 0 &&
            __atomic_load_n(&rt->started, __ATOMIC_RELAXED) == rt->nworkers &&
            inject_take_back(rt, g, &t)) {
            run_task(NULL, &t, TASK_REMOTE, false);
            continue;
        }
        event_sleep(rt, ev, done, g, fenced, 0);
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
    if (!group_done(g)) {
        weft__worker *w = tls_worker;
        if (w != NULL && g->owner_ == w)
            wait_worker(w, g);
        else
            wait_outside(rt, g);
    }
    return group_finish(g);
}

int weft_group_wait(weft_group *g)
{
    weft__worker *w = tls_worker;
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
                if (!group_done(g))
                    wait_worker(w, g);
                break;
            }
            weft__task tmp;
            run_task(w, weft__deque_take_owner(&w->dq, &tmp), TASK_OWN, false);
        }
        return group_finish(g);
    }
    return wait_slow(g);
}
