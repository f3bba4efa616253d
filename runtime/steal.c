/* Stealing and idling: a worker's search for work (the injection queue,
 * then random victims), its back-off and sleep, and the workers' loop. */
#include <sched.h>

#include "runtime/sched.h"

/* Failed search rounds before an idle worker goes to sleep: a few hundred
 * microseconds of spinning, each round ending in a sched_yield once the
 * back-off reaches its ceiling. */
#define SPIN_ROUNDS 200
/* An idle worker in its loop spins at least this long after its last task
 * before sleeping.  A program that alternates serial code with parallel
 * calls a millisecond or two apart (a kernel per statement) then finds the
 * workers awake at the next call instead of paying each worker's futex
 * wake-up there; an idle runtime still sleeps after it, within the idle
 * target (docs/BENCHMARKS.md, "Runtime: idle and start-up"). */
#define IDLE_HOLD_NS 2000000u

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

/* One search round: the injection queue (a task copied to *t), then every
 * other worker once, starting at a random victim (a slot, *slot, which is
 * the caller's until it marks it done).  Returns false, or true with
 * *more_left telling whether the victim still has tasks to steal.  What it
 * finds was spawned by another thread (WEFT__TASK_REMOTE). */
static bool find_work(weft__worker *w, weft__task *t, weft_task_slot **slot, bool *more_left)
{
    weft_runtime *rt = w->rt;
    *slot = NULL;
    if (weft__inject_pop(rt, t))
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
        if (weft__deque_steal(&victim->dq, slot) == WEFT__STEAL_OK) {
            WEFT__STAT_INC(w, steals);
            if (weft__profiling(rt))
                weft__profile_instant(rt, "steal", "steal");
            *more_left = weft__deque_size(&victim->dq) > 0;
            return true;
        }
    }
    return false;
}

/* Runs a stolen slot.  A weft_spawn child is copied out and the slot
 * handed back at once; a typed task runs on this worker's stack, writes
 * its result into the slot and marks it done, and its owner, which may be
 * asleep in its WEFT_SYNC, is woken. */
static void run_stolen(weft__worker *w, weft_task_slot *s)
{
    weft_task_steal_fn_ run = s->run_;
    if (run == weft__generic_slot) {
        weft__task t = weft__slot_task(s);
        weft_task_done_(s);
        weft__run_task(w, &t, WEFT__TASK_REMOTE, true);
        return;
    }
    weft__flush_completions(w);
    (void)run;
    weft__deque_run_typed(&w->dq, s);
    weft__event_notify(&w->rt->done_ev, INT_MAX);
    WEFT__STAT_INC(w, tasks);
}

/* Pops w's own newest task if it lies at or above floor and is not stolen
 * (then *t holds it). */
static bool pop_own(weft__worker *w, weft_task_slot *floor, weft__task *t)
{
    weft__deque *d = &w->dq;
    weft_task_slot *h = weft__deque_head(d);
    if (h <= floor)
        return false;
    weft_task_slot *p = h - 1;
    if (p < d->osplit && weft__deque_pop_shared_owner(d, p) == WEFT__POP_STOLEN)
        return false;
    if (!weft__slot_is_generic(p))
        weft__task_misuse("weft_group_wait: a task spawned with WEFT_SPAWN after the "
                          "group's first child was not synced before the wait");
    *t = weft__slot_task(p);
    d->tw.head_ = p;
    weft_task_take_(p);
    /* A thief asked: share half of what stays private (not slot p). */
    if (WEFT__UNLIKELY(p > d->osplit && weft__deque_hungry(d)))
        weft__deque_share_on_pop_owner(d, p);
    return true;
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

bool weft__hungry(const weft_runtime *rt, weft__worker *w)
{
    if (w)
        return weft__deque_count_owner(&w->dq, weft__deque_head(&w->dq)) <= 0;
    return __atomic_load_n(&rt->inject_count, __ATOMIC_RELAXED) == 0;
}

/* The back-off of an idle worker: once the steps reach their ceiling it
 * also yields the CPU (a cheap syscall when nothing else is runnable).
 * A thread woken meanwhile, such as an outside thread whose loop just
 * ended, would otherwise wait for the spinning worker's time slice to end,
 * since no core is free while every worker spins. */
static inline void idle_backoff(ck_backoff_t *bo)
{
    ck_backoff_eb(bo);
    if (*bo >= CK_BACKOFF_CEILING)
        sched_yield();
}

/* Takes a spinning place for an idle worker in its loop, if it needs one
 * and one is free.  More spinners than CPUs would only take turns on them,
 * and after a burst of sleeping calls every worker would burn CPU spinning
 * down.  Waiting workers (wait_worker) spin without a place:
 * each remote completion would otherwise wake every sleeping waiter. */
static inline bool spin_place_take(weft_runtime *rt, weft__idle_state *s)
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

static inline void spin_place_drop(weft_runtime *rt, weft__idle_state *s)
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

/* After a pop of w's own task: if private tasks are left, share them and
 * wake as a spawn does (when other workers are idle). */
static inline void pop_notify(weft__worker *w)
{
    if (w->dq.tw.head_ > w->dq.osplit)
        weft__spawn_notify(w);
}

void weft__run_own_tasks(weft__worker *w, weft_task_slot *floor)
{
    weft__task t;
    while (pop_own(w, floor, &t)) {
        pop_notify(w);
        weft__run_task(w, &t, WEFT__TASK_OWN, true);
    }
}

bool weft__run_some_work(weft__worker *w, weft__idle_state *s, weft_task_slot *floor)
{
    weft__task t;
    weft_task_slot *slot = NULL;
    weft__task_origin origin = WEFT__TASK_OWN;
    bool more_left = false;
    if (!pop_own(w, floor, &t)) {
        if (!find_work(w, &t, &slot, &more_left)) {
            weft__flush_completions(w);
            return false;
        }
        origin = WEFT__TASK_REMOTE;
    }
    weft__set_searching(w->rt, &s->searching, false);
    spin_place_drop(w->rt, s);
    /* A pop of the owner's own task may have taken shared tasks back into
     * the private part (weft__deque_pop_shared_owner takes the newer half
     * back), or left private ones behind: while other workers are idle they
     * must stay stealable, or they wait until this task ends (a waiter that
     * runs a long child hid half of its other children from idle workers). */
    if (origin == WEFT__TASK_OWN)
        pop_notify(w);
    /* More left at the victim: let another sleeper come and help.  Not
     * gated as notify_work is: steals are rare next to spawns, and each
     * one that leaves tasks behind passes the wake-up on, so that a burst
     * of tasks (the runners of a parallel_map of blocking calls) reaches
     * the sleeping workers. */
    if (more_left)
        weft__event_notify(&w->rt->work_ev, 1);
    if (slot)
        run_stolen(w, slot);
    else
        weft__run_task(w, &t, origin, true);
    s->rounds = 0;
    s->bo = CK_BACKOFF_INITIALIZER;
    return true;
}

/* From the second failed round on the worker counts as idle: one that
 * misses once (its request is served at the victim's next push or pop) does
 * not touch the shared count. */
bool weft__spin_idle(weft_runtime *rt, weft__idle_state *s)
{
    if (s->hold_ns && s->rounds == 0)
        s->since_ns = weft__now_ns();
    if (s->rounds >= SPIN_ROUNDS &&
        (!s->hold_ns || weft__now_ns() - s->since_ns >= s->hold_ns))
        return false;
    if (s->rounds > 0)
        weft__set_searching(rt, &s->searching, true);
    s->rounds++;
    idle_backoff(&s->bo);
    return true;
}

void *weft__worker_main(void *arg)
{
    weft__worker *w = arg;
    weft_runtime *rt = w->rt;
    weft_task_self_ = &w->dq.tw;
    __atomic_fetch_add(&rt->started, 1, __ATOMIC_RELAXED);
    /* Counted idle from weft_runtime_create on: spawns before this thread
     * got here share their tasks for it. */
    weft__idle_state s = { 0, true, false, CK_BACKOFF_INITIALIZER, IDLE_HOLD_NS, 0 };
    for (;;) {
        if (weft__run_some_work(w, &s, w->dq.base))
            continue;
        if (__atomic_load_n(&rt->stopping, __ATOMIC_ACQUIRE))
            break;
        if (spin_place_take(rt, &s) && weft__spin_idle(rt, &s))
            continue;
        /* Without a spinning place it sleeps at once; woken, it searches
         * once and sleeps again unless it finds work. */
        s.rounds = SPIN_ROUNDS;
        /* Still counted while asleep: a spawn must not see neither count
         * between here and event_sleep's announcement, or it would keep
         * its tasks private from this worker.  The place is given up
         * before the announcement (notify_work reads both). */
        weft__set_searching(rt, &s.searching, true);
        spin_place_drop(rt, &s);
        WEFT__STAT_INC(w, sleeps);
        /* A pending wake-up is answered before the announcement too: a
         * spawn that then sees none pending may wake this worker, and one
         * that saw it pending published its task before, so the check in
         * event_sleep finds it. */
        wake_answer(rt);
        weft__event_sleep(rt, &rt->work_ev, work_visible, rt, false, 0);
        wake_answer(rt);
    }
    weft__flush_completions(w);
    weft__set_searching(rt, &s.searching, false);
    spin_place_drop(rt, &s);
    weft_task_self_ = NULL;
    return NULL;
}

