/* runtime/ internals: the work-stealing deque, the worker block and the runtime
 * object.  Only the files of runtime/ and the runtime tests include this file. */
#ifndef WEFT_RUNTIME_INTERNAL_H
#define WEFT_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <ck_epoch.h>
#include <ck_md.h>

#include "runtime/iface.h"

#if defined(__SANITIZE_THREAD__)
#define WEFT__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT__TSAN 1
#endif
#endif

#define WEFT__LINE CK_MD_CACHELINE
#define WEFT__LIKELY(x) __builtin_expect(!!(x), 1)
#define WEFT__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* A task is stored inline wherever it waits (deque slot, injection ring):
 * spawning never allocates. */
typedef struct weft__task {
    weft_task_fn fn;
    void *arg;
    weft_group *g;
} weft__task;

/* ------------------------------------------------------------------ deque */

/* The circular array of a deque.  A grown-out array is freed only after a
 * ck_epoch grace period, because thieves may still be reading it. */
typedef struct weft__deque_array {
    ck_epoch_entry_t entry;
    struct weft__deque *deque;   /* the owner (TSan synchronisation) */
    int64_t mask;                /* capacity - 1; capacity a power of two */
    bool embedded;               /* lives inside another block: never freed */
    weft__task slots[];          /* every field accessed with __atomic */
} weft__deque_array;

/* A split work-stealing deque (after Lace, van Dijk and van de Pol 2014)
 * built on the Chase-Lev protocol with the C11 memory orders of Lê et al.
 * (PPoPP 2013).  Indices only grow; top <= split <= bottom.
 *   [top, split)     shared: thieves steal at top (CAS), as in Chase-Lev
 *                    with split in the role of bottom;
 *   [split, bottom)  private: only the owner touches it, so its push and
 *                    pop there need no fence and no atomic read-modify-write.
 * The owner moves split up ("shares") when the shared part is empty at a
 * push, or when a thief found it empty and set `hungry`; it takes the last
 * shared task back with the Chase-Lev pop (one seq_cst fence) only when the
 * private part is empty.  Thieves never read bottom.  The scheduler also
 * shares everything at a spawn while any worker is idle (weft_spawn) and
 * before parallel_map's caller runs a runner itself.  The cost: a worker
 * that turns idle after a spawner's last push, while the spawner runs long
 * work, gets only the oldest task until the spawner's next push or pop. */
typedef struct weft__deque {
    _Alignas(WEFT__LINE) int64_t top;      /* CAS by thieves and owner */
    /* Read by thieves; written by the owner only (split, array). */
    _Alignas(WEFT__LINE) int64_t split;
    weft__deque_array *array;
    int hungry;                            /* set by thieves, cleared by the owner */
    /* Owner-only part. */
    _Alignas(WEFT__LINE) int64_t bottom;
    int64_t osplit;                        /* the owner's copy of split */
    ck_epoch_record_t *owner_rec;
    /* Woken when a pop shares tasks a thief asked for (NULL: none). */
    struct weft__event *wake_ev;
    /* No thread ever steals from this deque (a runtime of one worker):
     * push never shares. */
    bool solo;
#ifdef WEFT__TSAN
    /* ck_epoch lives in uninstrumented libck: thieves bump this (release)
     * before leaving their section and the reclaimer reads it (acquire), so
     * that ThreadSanitizer sees the grace period. */
    uint64_t tsan_sync;
#endif
} weft__deque;

/* Size in bytes of an array of 2^log2_cap slots (to embed one). */
size_t weft__deque_array_size(unsigned log2_cap);
/* Initialises d.  owner_rec is the owner's registered epoch record (used to
 * defer freeing grown arrays).  embedded (may be NULL) is memory of
 * weft__deque_array_size(log2_cap) bytes used as the first array; with NULL
 * the first array is allocated.  Returns 0 or WEFT_ENOMEM.  Owner thread. */
int weft__deque_init(weft__deque *d, ck_epoch_record_t *owner_rec,
                     void *embedded, unsigned log2_cap);
/* Frees the arrays.  Only once no thread uses d; epoch callbacks already
 * queued for d's old arrays must be dispatched by the caller
 * (ck_epoch_reclaim on owner_rec). */
void weft__deque_fini(weft__deque *d);
/* Grows the array (slow path of push).  NULL when out of memory. */
weft__deque_array *weft__deque_grow_owner(weft__deque *d, weft__deque_array *a,
                                          int64_t t, int64_t b);
/* Moves up to n private tasks (the oldest) to the shared part and clears
 * `hungry`.  Returns how many were shared.  Owner thread. */
int64_t weft__deque_share_owner(weft__deque *d, int64_t n);
/* Slow path of pop: the private part is empty; takes the newest shared
 * task back (Chase-Lev pop on split).  Owner thread. */
bool weft__deque_pop_shared_owner(weft__deque *d, weft__task *out);

enum { WEFT__STEAL_EMPTY = 0, WEFT__STEAL_OK = 1, WEFT__STEAL_ABORT = -1 };
/* Takes the top task into *out.  rec is the calling thief's registered
 * epoch record.  Returns WEFT__STEAL_OK, _EMPTY (then the owner is asked to
 * share), or _ABORT (lost a race: retry later).  Any thread but the owner. */
int weft__deque_steal(weft__deque *d, weft__task *out, ck_epoch_record_t *rec);

/* Asks the owner to share private tasks (a thief found nothing).  Writes
 * only when the flag is clear, so idle thieves do not bounce the line.
 * Any thread but the owner. */
static inline void weft__deque_request(weft__deque *d)
{
    if (__atomic_load_n(&d->hungry, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(&d->hungry, 1, __ATOMIC_RELAXED);
}

/* In a pop, for a thief that asked: shares half of the private part and
 * wakes sleepers on d->wake_ev.  Owner thread. */
void weft__deque_share_on_pop_owner(weft__deque *d);

/* After a push: whether the owner should share (not solo, and the shared
 * part was empty at the push's read t of top, or a thief asked).  t may be
 * stale (low): then the share waits for the next push or request. */
static inline bool weft__deque_should_share_owner(const weft__deque *d, int64_t t)
{
    return !d->solo && (t >= d->osplit || __atomic_load_n(&d->hungry, __ATOMIC_RELAXED));
}
/* The share after a push (slow path): the oldest task when the shared part
 * was empty (it keeps one for thieves while the owner pops the newest ones
 * without a fence), else half of the private part for a thief that asked.
 * Owner thread. */
void weft__deque_share_after_push_owner(weft__deque *d, int64_t t);

/* Writes a task at the bottom (private) if the array has room, by the
 * push's read t of top.  False when full (nothing written).  Owner thread. */
static inline bool weft__deque_put_owner(weft__deque *d, int64_t t, weft_task_fn fn,
                                         void *arg, weft_group *g)
{
    int64_t b = d->bottom;
    weft__deque_array *a = d->array;
    if (WEFT__UNLIKELY(b - t > a->mask))
        return false;
    weft__task *s = &a->slots[b & a->mask];
    __atomic_store_n(&s->fn, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&s->arg, arg, __ATOMIC_RELAXED);
    __atomic_store_n(&s->g, g, __ATOMIC_RELAXED);
    d->bottom = b + 1;
    return true;
}

/* Pushes a task at the bottom, growing the array if needed, then shares
 * as weft__deque_should_share_owner says.  False when the array could not
 * grow (out of memory): the task is not queued.  Owner thread. */
static inline bool weft__deque_push_owner(weft__deque *d, weft_task_fn fn, void *arg,
                                          weft_group *g)
{
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    if (WEFT__UNLIKELY(!weft__deque_put_owner(d, t, fn, arg, g))) {
        if (!weft__deque_grow_owner(d, d->array, t, d->bottom))
            return false;
        weft__deque_put_owner(d, t, fn, arg, g);
    }
    if (WEFT__UNLIKELY(weft__deque_should_share_owner(d, t)))
        weft__deque_share_after_push_owner(d, t);
    return true;
}

/* Pops the bottom task.  Returns it, or NULL when empty.  A private task is
 * returned in place (read it before the owner's next push); one taken back
 * from the shared part is copied to *tmp.  Owner thread. */
static inline const weft__task *weft__deque_take_owner(weft__deque *d, weft__task *tmp)
{
    int64_t b = d->bottom;
    if (WEFT__UNLIKELY(b <= d->osplit))
        return weft__deque_pop_shared_owner(d, tmp) ? tmp : NULL;
    b--;
    d->bottom = b;
    weft__deque_array *a = d->array;
    /* A thief asked: share half of what stays private (not slot b). */
    if (WEFT__UNLIKELY(b > d->osplit && __atomic_load_n(&d->hungry, __ATOMIC_RELAXED)))
        weft__deque_share_on_pop_owner(d);
    return &a->slots[b & a->mask];
}

/* The bottom task if it is private (the next one a pop returns without a
 * fence), else NULL.  Owner thread. */
static inline const weft__task *weft__deque_peek_private_owner(const weft__deque *d)
{
    int64_t b = d->bottom;
    if (b <= d->osplit)
        return NULL;
    const weft__deque_array *a = d->array;
    return &a->slots[(b - 1) & a->mask];
}

/* Pops the bottom task into *out.  False when empty.  Owner thread. */
static inline bool weft__deque_pop_owner(weft__deque *d, weft__task *out)
{
    const weft__task *s = weft__deque_take_owner(d, out);
    if (!s)
        return false;
    if (s != out) {
        out->fn = __atomic_load_n(&s->fn, __ATOMIC_RELAXED);
        out->arg = __atomic_load_n(&s->arg, __ATOMIC_RELAXED);
        out->g = __atomic_load_n(&s->g, __ATOMIC_RELAXED);
    }
    return true;
}

/* Tasks thieves can take, as a snapshot (may be stale).  Any thread. */
static inline int64_t weft__deque_size(const weft__deque *d)
{
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_ACQUIRE);
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    return s - t;
}

/* All tasks queued, private ones included.  Owner thread. */
static inline int64_t weft__deque_count_owner(const weft__deque *d)
{
    return d->bottom - __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
}

/* ----------------------------------------------------------------- worker */

#ifdef WEFT_STATS
#define WEFT__STAT_INC(w, field) \
    __atomic_store_n(&(w)->field, (w)->field + 1, __ATOMIC_RELAXED)
#else
#define WEFT__STAT_INC(w, field) ((void)(w))
#endif

#define WEFT__DEQUE_LOG2_CAP 8

/* One block per worker (Lace style): the deque's shared lines first, then
 * the owner-only part, then the first deque array. */
typedef struct weft__worker {
    weft__deque dq;
    _Alignas(WEFT__LINE) weft_runtime *rt;
    /* weft__inline_enter depth of this worker's thread (owner only): on
     * the line weft_spawn reads anyway, cheaper there than a thread-local. */
    unsigned inline_depth;
    unsigned index;
    uint64_t rng;
    /* Statistics: written by the owner only (relaxed atomic stores), read
     * by weft_runtime_get_stats. */
    uint64_t tasks, steals, steal_attempts, sleeps;
    /* Completions of stolen tasks not yet added to their group's pending_:
     * consecutive stolen tasks of one group publish once (a burst of tiny
     * stolen tasks would otherwise move the group's line back and forth
     * with its owner once per task).  Flushed before the worker runs a
     * task of another group, finds no work, or leaves a wait. */
    weft_group *defer_g;
    int64_t defer_n;
    pthread_t thread;
    bool started;
    _Alignas(WEFT__LINE) ck_epoch_record_t rec;
} weft__worker;

/* An event count for sleeping threads: waiters announce themselves in
 * `sleepers`, wakers bump `seq` (a futex word) only when there are any. */
typedef struct weft__event {
    _Alignas(WEFT__LINE) uint32_t seq;
    _Alignas(WEFT__LINE) int32_t sleepers;
    /* work_ev only: idle workers, looking for work or asleep (atomic).
     * A spawn reads it; wakers read sleepers on the same line. */
    int32_t searching;
    /* work_ev only, with more workers than CPUs (weft_runtime.spin_cap):
     * idle workers holding a spinning place, and whether a wake-up sent
     * to one sleeper has not been answered yet (atomic). */
    int32_t spinners;
    int32_t wake_pending;
} weft__event;

struct weft_runtime {
    unsigned nworkers, inter_op, intra_op;
    weft__worker **workers;
    bool membarrier_ok;
    /* Fewer workers than online CPUs: a waiting outside thread can yield-
     * spin on the spare core; otherwise it would take a worker's core. */
    bool spare_core;
    /* More workers than online CPUs: idle workers spin only in one of
     * spin_cap places (half the CPUs, at least one) and the others sleep
     * at once; a spawn wakes a sleeper only while none spins and no
     * wake-up is pending.  0: every idle worker spins (workers <= CPUs). */
    unsigned spin_cap;
    ck_epoch_t epoch;

    weft__event work_ev;   /* idle workers: new tasks (wake one) */
    weft__event done_ev;   /* waiters on workers' groups: completions (wake all) */
    /* Waiters on groups made on outside threads (owner_ NULL): a separate
     * event, so that a thread asleep until its root task ends is not woken
     * (a futex wake and a membarrier each) by every remote completion of
     * the workers' own groups. */
    weft__event outside_ev;

    _Alignas(WEFT__LINE) int stopping;   /* atomic: weft_runtime_destroy began */
    int outside_active;                  /* atomic: outside threads inside calls */
    uint64_t outside_tasks;              /* atomic: tasks run by outside threads */
    unsigned started;                    /* atomic: workers that reached their loop */

    /* Injection queue of outside threads: a ring of inline tasks. */
    _Alignas(WEFT__LINE) int64_t inject_count;   /* atomic snapshot of count */
    pthread_mutex_t inject_lock;
    weft__task *ring;
    size_t ring_cap, ring_head, ring_count;
};

/* The scheduler (events.c, group.c, inject.c, steal.c, forkjoin.c; their
 * shared inline helpers are in runtime/sched.h). */
weft__worker *weft__current_worker(const weft_runtime *rt);
void *weft__worker_main(void *arg);
void weft__wake_all(weft_runtime *rt, weft__event *ev);
void weft__outside_enter(weft_runtime *rt);
void weft__outside_leave(weft_runtime *rt);
/* Whether this outside thread is inside a call on rt (its callbacks run
 * here, as part of that call). */
bool weft__inside_call(const weft_runtime *rt);
/* Whether the thread running a loop on rt should split its range now:
 * its deque is empty (thieves would find nothing). */
bool weft__hungry(const weft_runtime *rt, const weft__worker *w);
/* Makes every private task of the calling worker (if it is one of rt's)
 * stealable and wakes sleepers: for callers that spawned children and now
 * run long work themselves. */
void weft__share_all(weft_runtime *rt);

#define WEFT__GROUP_MAGIC 0x77656674u   /* "weft": weft_group_init ran */

#endif
