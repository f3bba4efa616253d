/* What the scheduler's files share: events.c (futexes and sleeping),
 * group.c (group state and running a task), inject.c (the outside threads'
 * injection queue), steal.c (stealing, idling and the workers' loop) and
 * forkjoin.c (spawn and wait).  The hot helpers are inline here so that
 * the split costs the spawn path nothing.  Only runtime/ includes it. */
#ifndef WEFT_RUNTIME_SCHED_H
#define WEFT_RUNTIME_SCHED_H

#include <limits.h>

/* Caps one back-off step at 2k compiler-barrier iterations (under 1 us):
 * an idle worker looks for work that often, so a task queued for it
 * starts within about a microsecond. */
#define CK_BACKOFF_CEILING (1u << 11)
#include <ck_backoff.h>

#include "runtime/internal.h"

/* The worker running on this thread, NULL on outside threads.  The
 * initial-exec model makes it one %fs-relative load, even in libweft.so
 * (no __tls_get_addr call on the spawn path). */
/* The calling thread's worker (weft_task_self_ of <weft/task.h>, which the
 * inline fast paths read), or NULL. */
#define weft__tls_worker weft__worker_of(weft_task_self_)
/* The depth of weft__inline_enter on this thread (0: work is queued). */
extern _Thread_local unsigned weft__tls_inline __attribute__((tls_model("initial-exec")));

static inline weft__worker *weft__current_worker_inline(const weft_runtime *rt)
{
    weft__worker *w = weft__tls_worker;
    return (w && w->rt == rt) ? w : NULL;
}

/* ----------------------------------------------------------------- events */

void weft__event_wake(weft__event *ev, int n);
void weft__event_sleep(weft_runtime *rt, weft__event *ev, bool (*ready)(void *), void *ctx,
                       bool fenced, long timeout_ns);

/* Wakes sleepers of ev, if any: one relaxed load on the fast path.  The
 * caller has just published work with a store; a sleeper issues a
 * membarrier after announcing itself, which orders that store before its
 * final check (an asymmetric Dekker handshake, so the publisher needs no
 * fence). */
static inline void weft__event_notify(weft__event *ev, int n)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (WEFT__UNLIKELY(__atomic_load_n(&ev->sleepers, __ATOMIC_RELAXED) > 0))
        weft__event_wake(ev, n);
}

/* Wakes a sleeping idle worker for work just made visible.  On a runtime
 * with more workers than CPUs (spin_cap) only while no worker spins (a
 * spinner finds the work, and wakes a sleeper if it leaves more behind)
 * and no earlier wake-up is unanswered: a futex call per spawn would
 * otherwise make oversubscribed fork-join several times slower.  A
 * wake-up skipped on a stale read loses no work: the task stays visible
 * to the next search, and its owner runs it if nobody steals it. */
static inline void weft__notify_work(weft_runtime *rt)
{
    weft__event *ev = &rt->work_ev;
    if (!rt->spin_cap) {
        weft__event_notify(ev, 1);
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
        weft__event_wake(ev, 1);
}

/* Workers waiting in weft_group_wait sleep on done_ev (their groups'
 * completions wake them), yet they run stolen work while they wait: when
 * no idle worker sleeps on work_ev to take new work, wake n waiters for
 * it.  Without this, a waiter slept through its stolen child's later
 * loops, which then ran on one worker. */
static inline void weft__notify_waiters(weft_runtime *rt, int n)
{
    if (WEFT__UNLIKELY(__atomic_load_n(&rt->done_ev.sleepers, __ATOMIC_RELAXED) > 0 &&
                       __atomic_load_n(&rt->work_ev.sleepers, __ATOMIC_RELAXED) == 0))
        weft__event_wake(&rt->done_ev, n);
}

/* A worker becomes idle (looking for work, or asleep after looking) or
 * busy again.  While any is idle, spawns share their tasks at once. */
static inline void weft__set_searching(weft_runtime *rt, bool *searching, bool on)
{
    if (*searching != on) {
        __atomic_fetch_add(&rt->work_ev.searching, on ? 1 : -1, __ATOMIC_RELAXED);
        *searching = on;
    }
}

/* ------------------------------------------------------------ group state */

static inline bool weft__group_done(const weft_group *g)
{
    return g->spawned_ == g->done_ + __atomic_load_n(&g->pending_, __ATOMIC_ACQUIRE);
}

bool weft__group_done_cb(void *g);
/* weft__group_done for a sleeper on outside_ev: pending_ read seq_cst. */
bool weft__group_done_sc_cb(void *g);
void weft__group_fail(weft_group *g, int code);

/* The event a group's waiter sleeps on: outside_ev for groups made on
 * outside threads, done_ev for workers' groups (whose waits also run
 * tasks, and are woken by any completion). */
static inline weft__event *weft__group_event(weft_runtime *rt, const weft_group *g)
{
    return (g->bits_ & WEFT__GROUP_OUTSIDE) ? &rt->outside_ev : &rt->done_ev;
}

/* n children finished on a thread other than their spawning worker.  g may
 * be gone as soon as pending_ is incremented. */
void weft__complete_remote_n(weft_group *g, int status, int64_t n);

static inline void weft__complete_remote(weft_group *g, int status)
{
    weft__complete_remote_n(g, status, 1);
}

/* Publishes w's deferred completions (weft__worker.defer_g). */
static inline void weft__flush_completions(weft__worker *w)
{
    if (w->defer_n > 0) {
        weft__complete_remote_n(w->defer_g, 0, w->defer_n);
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
typedef enum weft__task_origin { WEFT__TASK_OWN, WEFT__TASK_REMOTE } weft__task_origin;

/* Runs t, which may be a deque slot: its fields are read before the call
 * (the task's own pushes may reuse the slot).  defer (w not NULL): a
 * remote completion waits in w for the next task of its group; the caller
 * flushes before anything that may take long. */
static inline void weft__run_task(weft__worker *w, const weft__task *t,
                                  weft__task_origin origin, bool defer)
{
    weft_task_fn fn = __atomic_load_n(&t->fn, __ATOMIC_RELAXED);
    void *arg = __atomic_load_n(&t->arg, __ATOMIC_RELAXED);
    weft_group *g = __atomic_load_n(&t->g, __ATOMIC_RELAXED);
    bool own = origin == WEFT__TASK_OWN;
    /* Outside threads count their tasks in rt (read before g may end). */
    weft_runtime *rt = w ? NULL : g->rt_;
    if (defer && w->defer_g != g)
        weft__flush_completions(w);
    fn(arg);
    if (own) {
        g->done_++;
    } else if (defer) {
        w->defer_g = g;
        w->defer_n++;
    } else {
        weft__complete_remote(g, 0);
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

enum { WEFT__INJECT_QUEUED, WEFT__INJECT_CANCELED, WEFT__INJECT_NOMEM };

/* Queues an outside thread's task: WEFT__INJECT_QUEUED, _CANCELED (the
 * runtime is stopping) or _NOMEM. */
int weft__inject_push(weft_runtime *rt, const weft__task *t);
bool weft__inject_pop(weft_runtime *rt, weft__task *out);
/* Takes back the newest queued task if it is a child of g: an outside
 * thread's own spawn that no worker has started yet.  Outside thread. */
bool weft__inject_take_back(weft_runtime *rt, const weft_group *g, weft__task *out);

/* --------------------------------------------------------------- stealing */

static inline void weft__backoff(ck_backoff_t *bo)
{
    ck_backoff_eb(bo);
}

/* A worker's idle search: failed rounds so far, its back-off, whether it
 * is counted as idle (rt->work_ev.searching) and whether it holds one of
 * the spinning places of an oversubscribed runtime (rt->spin_cap). */
typedef struct weft__idle_state {
    unsigned rounds;
    bool searching;
    bool spinner;
    ck_backoff_t bo;
    /* The least time to spin after the last task before sleeping (0: the
     * rounds alone bound the spin), and when the spin began. */
    uint64_t hold_ns, since_ns;
} weft__idle_state;

/* Runs one task: w's own newest one if it lies at or above floor (older
 * ones belong to frames further out), else a victim's.  False if none was
 * found. */
bool weft__run_some_work(weft__worker *w, weft__idle_state *s, weft_task_slot *floor);
/* Runs w's own queued tasks at or above floor, newest first, until none is
 * left there or the newest one was stolen. */
void weft__run_own_tasks(weft__worker *w, weft_task_slot *floor);
/* After a failed search: backs off, and says whether spin rounds (or,
 * with s->hold_ns, spin time) are left (false: time to sleep). */
bool weft__spin_idle(weft_runtime *rt, weft__idle_state *s);

/* -------------------------------------------------------------- fork-join */

/* Other workers look for work or sleep while w holds private tasks: share
 * them all and wake a sleeper, if any. */
void weft__spawn_wake(weft__worker *w);

/* After a push: share and wake if other workers are idle (one relaxed
 * load; every worker sleeping on work_ev counts as idle).  A lone worker
 * has nobody to wake (outside threads never sleep on work_ev): its
 * tw.idle_ points to weft__nobody_idle. */
static inline void weft__spawn_notify(weft__worker *w)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (WEFT__UNLIKELY(__atomic_load_n(w->dq.tw.idle_, __ATOMIC_RELAXED) > 0))
        weft__spawn_wake(w);
}

#endif
