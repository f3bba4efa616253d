/* runtime/ internals: the work-stealing deque, the worker block and the runtime
 * object.  Only the files of runtime/ and the runtime tests include this file. */
#ifndef WEFT_RUNTIME_INTERNAL_H
#define WEFT_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/sanitizer.h"
#include "runtime/iface.h"

#define WEFT__LIKELY(x) __builtin_expect(!!(x), 1)
#define WEFT__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* A task is stored inline wherever it waits (deque slot, injection ring):
 * spawning never allocates. */
typedef weft_spawned_ weft__task;

/* ------------------------------------------------------------------ deque */

/* A worker's task stack: a fixed array of slots (include/weft/task.h),
 * reserved with mmap at start-up and committed by the kernel as spawns
 * reach it; it never grows and never moves, so a slot stays where it is
 * while a thief runs it and writes its result back.  Both kinds of task
 * live in it: typed tasks (a steal function and their arguments) and
 * weft_spawn children (run_ NULL, then fn, arg and group as a weft__task).
 *
 * It is a split deque (after Lace, van Dijk and van de Pol 2014) built on
 * the Chase-Lev protocol with the C11 memory orders of Le et al. (PPoPP
 * 2013).  Positions count slots from the base; top <= split <= head.
 *   [top, split)    shared: thieves steal at top (CAS), as in Chase-Lev
 *                   with split in the role of bottom;
 *   [split, head)   private: only the owner touches it, so its spawn and
 *                   sync there need no fence and no read-modify-write.
 * head is not shared: typed tasks pass it down as a hidden parameter, and
 * generic calls keep a copy (tw.head_) that they check against the
 * slots before use (weft__deque_head: the used slots are those with a
 * run_).  The owner shares (moves split up) when a thief found the shared
 * part empty (or took its last task) and lowered tw.limit_,
 * and takes the newest shared task back with the Chase-Lev pop (one
 * seq_cst fence) only when the private part is empty.  Thieves never read
 * head.  weft_spawn also shares everything while any worker is idle.
 *
 * A stolen slot stays in place: a typed one until its WEFT_SYNC has read
 * the result (the thief marks it done), a weft_spawn child until the thief
 * has copied it out (it marks it done at once).  When the owner comes back
 * below top (it waited for a stolen child), everything above is consumed:
 * it lowers split and then resets top to its head.  top carries a tag in
 * its upper 32 bits, bumped by every reset and by the owner's own CAS, so
 * that a thief's stale CAS cannot succeed after top came back to the same
 * position (ABA).
 *
 * ThreadSanitizer does not model fences: under it the owner's and the
 * thieves' fences become seq_cst operations (deque.c), so a TSan build
 * checks that variant; the stress tests of tests/runtime/test_deque.c run
 * the fenced protocol on the plain build. */
#define WEFT__TOP_POS(t) ((int64_t)(uint32_t)(t))
#define WEFT__TOP_NEXT_TAG(t, pos) ((((t) >> 32) + 1) << 32 | (uint64_t)(uint32_t)(pos))

typedef struct weft__deque {
    /* The public part (<weft/task.h>): the owner's lines (split_, end_,
     * the generic calls' head_, busy_ and so on), then a line with
     * tw.limit_ (lowered by thieves that ask for tasks) and split. */
    _Alignas(WEFT__CACHE_LINE) weft_task_worker tw;
    int64_t split;                        /* written by the owner, read by thieves */
    _Alignas(WEFT__CACHE_LINE) uint64_t top;    /* CAS by thieves and the owner */
    /* Owner only (the cached head of generic calls is tw.head_). */
    _Alignas(WEFT__CACHE_LINE) weft_task_slot *osplit;     /* the owner's split; tw.split_ is the same
                                   unless children run at once wait for their
                                   sync (tw.overflow_), when it is tw.end_ */
    weft_task_slot *base;       /* position 0; base[-1] is a sentinel, never empty */
    weft_task_slot *cells;      /* results of children run at once */
    size_t nslots;
    void *map;
    size_t map_size;
    /* Woken when a pop shares tasks a thief asked for (NULL: none). */
    struct weft__event *wake_ev;
    /* No thread ever steals from this deque (a runtime of one worker):
     * weft_spawn never shares. */
    bool solo;
    uint64_t overflows;         /* children run at once (statistics; relaxed atomic) */
} weft__deque;

/* Reserves a stack of nslots slots (and as many overflow cells).  Returns 0
 * or WEFT_ENOMEM.  Owner thread, before any other thread sees d. */
int weft__deque_init(weft__deque *d, size_t nslots);
/* Unmaps the stack.  Only once no thread uses d. */
void weft__deque_fini(weft__deque *d);

/* tw.busy_: typed tasks running on the stack's owner count in its low 32
 * bits (the cached head may be stale), the owner thread's inline-mode depth
 * in its high ones (spawns run at once), so that the generic fast paths
 * test both with one compare. */
#define WEFT__BUSY_TYPED 1ull
#define WEFT__BUSY_INLINE (1ull << 32)

static inline uint32_t weft__typed_frames(const weft__deque *d)
{
    return (uint32_t)d->tw.busy_;
}

static inline uint32_t weft__inline_depth(const weft__deque *d)
{
    return (uint32_t)(d->tw.busy_ >> 32);
}

static inline int64_t weft__deque_pos(const weft__deque *d, const weft_task_slot *s)
{
    return s - d->base;
}

/* The owner's split moves to s. */
static inline void weft__deque_set_osplit_owner(weft__deque *d, weft_task_slot *s)
{
    d->osplit = s;
    if (WEFT__LIKELY(d->tw.overflow_ == 0))
        d->tw.split_ = s;
}

/* Finds the top of the stack from the slots (the used part is exactly the
 * slots with a run_), starting near d->tw.head_, and stores it there.  Owner
 * thread. */
weft_task_slot *weft__deque_find_head_owner(weft__deque *d);

/* Whether the cached head d->tw.head_ is the top of the stack: always while
 * no typed task runs on this stack (weft__typed_frames(d) == 0: generic calls
 * keep the cache exact, and a typed run that ends puts it back, see
 * weft__deque_run_typed), else when the slots agree (typed tasks move the
 * head without updating the cache).  Owner thread. */
static inline bool weft__deque_head_ok(const weft__deque *d)
{
    const weft_task_slot *h = d->tw.head_;
    return WEFT__LIKELY(weft__typed_frames(d) == 0) || (h->run_ == NULL && h[-1].run_ != NULL);
}

/* The top of the stack, for a generic call.  Owner thread. */
static inline weft_task_slot *weft__deque_head(weft__deque *d)
{
    if (WEFT__LIKELY(weft__deque_head_ok(d)))
        return d->tw.head_;
    return weft__deque_find_head_owner(d);
}

/* Runs the typed task of slot s on this stack (a stolen one, or a
 * WEFT_RUN root), counted in tw.busy_.  The stack's top is where it
 * was once the task returns (it synced all it spawned), unless it left
 * weft_spawn children behind: the cache is checked against the slots.
 * Owner thread. */
static inline void weft__deque_run_typed(weft__deque *d, weft_task_slot *s)
{
    weft_task_slot *h = weft__deque_head(d);
    d->tw.busy_ += WEFT__BUSY_TYPED;
    s->run_(&d->tw, h, s);
    d->tw.head_ = h;
    if (WEFT__UNLIKELY(h->run_ != NULL))
        weft__deque_find_head_owner(d);
    d->tw.busy_ -= WEFT__BUSY_TYPED;
}

/* Moves up to n private tasks (the oldest of [osplit, head)) to the shared
 * part and clears the thieves' request.  Returns how many were shared.  Owner thread. */
int64_t weft__deque_share_owner(weft__deque *d, weft_task_slot *head, int64_t n);
/* The share after a push for a thief that asked: half of the private
 * part, at least one task.  Owner thread. */
void weft__deque_share_after_push_owner(weft__deque *d, weft_task_slot *head);

enum { WEFT__POP_HERE = 0, WEFT__POP_STOLEN = 1 };
/* Takes p, the newest task (p == head - 1), back for the owner when it is
 * shared (p < osplit): WEFT__POP_HERE (it is private now) or
 * WEFT__POP_STOLEN (a thief has it, and every slot below).  Owner thread. */
int weft__deque_pop_shared_owner(weft__deque *d, weft_task_slot *p);
/* The owner is back at p below top, every slot at and above p consumed:
 * lowers split and resets top to p.  Owner thread. */
void weft__deque_reset_owner(weft__deque *d, weft_task_slot *p);

enum { WEFT__STEAL_EMPTY = 0, WEFT__STEAL_OK = 1, WEFT__STEAL_ABORT = -1 };
/* Claims the top slot: *out then belongs to the caller until it marks it
 * done.  Returns WEFT__STEAL_OK, _EMPTY (then the owner is asked to share),
 * or _ABORT (lost a race: retry later).  Any thread but the owner. */
int weft__deque_steal(weft__deque *d, weft_task_slot **out);

/* Asks the owner to share private tasks (a thief found nothing).  Writes
 * only when the flag is clear, so idle thieves do not bounce the line.
 * Any thread but the owner. */
static inline void weft__deque_request(weft__deque *d)
{
    if (__atomic_load_n(&d->tw.limit_, __ATOMIC_RELAXED) != d->base)
        __atomic_store_n(&d->tw.limit_, d->base, __ATOMIC_RELAXED);
}

/* Whether a thief asked the owner to share (tw.limit_ lowered to the
 * base).  Owner thread. */
static inline bool weft__deque_hungry(const weft__deque *d)
{
    return __atomic_load_n(&d->tw.limit_, __ATOMIC_RELAXED) != d->tw.end_;
}

/* In a generic pop, for a thief that asked: shares half of the private part
 * below head and wakes sleepers on d->wake_ev.  Owner thread. */
void weft__deque_share_on_pop_owner(weft__deque *d, weft_task_slot *head);

/* What tw.idle_ points to where no other worker exists: always zero. */
extern const int32_t weft__nobody_idle;

/* The run_ of a weft_spawn child's slot (never called: such a slot is run
 * by the scheduler, which copies fn, arg and the group out of d_). */
void weft__generic_slot(weft_task_worker *w, weft_task_slot *head, weft_task_slot *self);

/* The owner empties a slot a thief has marked done, for reuse. */
static inline void weft__slot_release(weft_task_slot *s)
{
    __atomic_store_n(&s->state_, 0, __ATOMIC_RELAXED);
    s->run_ = NULL;
}

static inline bool weft__slot_is_generic(const weft_task_slot *s)
{
    return s->run_ == weft__generic_slot;
}

/* A weft_spawn child's fields, stored in its slot's d_ as a weft__task.
 * The stacks are mmap'd memory (no declared type), so the slot's bytes
 * take the type they are written with, and these fields are read with the
 * same type they were written with (after run_ said so). */
static inline weft__task *weft__slot_fields(const weft_task_slot *s)
{
    return (weft__task *)(void *)s->d_.bytes_;
}

static inline void weft__slot_put_task_fields(weft_task_slot *s, weft_task_fn fn, void *arg,
                                              weft_group *g)
{
    weft__task *t = weft__slot_fields(s);
    /* state_ is 0 already in every empty slot (the map starts zeroed and
     * weft__slot_release clears a stolen one), as typed spawns rely on. */
    s->run_ = weft__generic_slot;
    t->fn = fn;
    t->arg = arg;
    t->g = g;
}

static inline void weft__slot_put_task(weft_task_slot *s, const weft__task *t)
{
    weft__slot_put_task_fields(s, t->fn, t->arg, t->g);
}

static inline weft__task weft__slot_task(const weft_task_slot *s)
{
    return *weft__slot_fields(s);
}

static inline weft_task_fn weft__slot_fn(const weft_task_slot *s) { return weft__slot_fields(s)->fn; }
static inline void *weft__slot_arg(const weft_task_slot *s) { return weft__slot_fields(s)->arg; }
static inline weft_group *weft__slot_group(const weft_task_slot *s) { return weft__slot_fields(s)->g; }

/* Tasks thieves can take, as a snapshot (may be stale).  Any thread. */
static inline int64_t weft__deque_size(const weft__deque *d)
{
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_ACQUIRE);
    int64_t t = WEFT__TOP_POS(__atomic_load_n(&d->top, __ATOMIC_ACQUIRE));
    return s - t;
}

/* All tasks queued below head, private ones included.  Owner thread. */
static inline int64_t weft__deque_count_owner(const weft__deque *d, const weft_task_slot *head)
{
    return weft__deque_pos(d, head) - WEFT__TOP_POS(__atomic_load_n(&d->top, __ATOMIC_ACQUIRE));
}

/* ----------------------------------------------------------------- worker */

#ifdef WEFT_STATS
#define WEFT__STAT_INC(w, field) \
    __atomic_store_n(&(w)->field, (w)->field + 1, __ATOMIC_RELAXED)
#else
#define WEFT__STAT_INC(w, field) ((void)(w))
#endif

/* One block per worker (Lace style): the deque's lines first (its first
 * member, the macros' weft_task_worker, is where a task body's hidden
 * worker points), then the scheduler's owner-only part. */
typedef struct weft__worker {
    weft__deque dq;
    _Alignas(WEFT__CACHE_LINE) weft_runtime *rt;
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
} weft__worker;

/* The worker of a task body's hidden parameter. */
static inline weft__worker *weft__worker_of(weft_task_worker *tw)
{
    return (weft__worker *)(void *)tw;
}

/* An event count for sleeping threads: waiters announce themselves in
 * `sleepers`, wakers bump `seq` (a futex word) only when there are any. */
typedef struct weft__event {
    _Alignas(WEFT__CACHE_LINE) uint32_t seq;
    _Alignas(WEFT__CACHE_LINE) int32_t sleepers;
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
    size_t task_stack;     /* slots per worker's task stack */

    weft__event work_ev;   /* idle workers: new tasks (wake one) */
    weft__event done_ev;   /* waiters on workers' groups: completions (wake all) */
    /* Waiters on groups made on outside threads (owner_ NULL): a separate
     * event, so that a thread asleep until its root task ends is not woken
     * (a futex wake and a membarrier each) by every remote completion of
     * the workers' own groups. */
    weft__event outside_ev;

    _Alignas(WEFT__CACHE_LINE) int stopping;   /* atomic: weft_runtime_destroy began */
    int outside_active;                  /* atomic: outside threads inside calls */
    uint64_t outside_tasks;              /* atomic: tasks run by outside threads */
    unsigned started;                    /* atomic: workers that reached their loop */

    /* Injection queue of outside threads: a ring of inline tasks. */
    _Alignas(WEFT__CACHE_LINE) int64_t inject_count;   /* atomic snapshot of count */
    pthread_mutex_t inject_lock;
    weft__task *ring;
    size_t ring_cap, ring_head, ring_count;
};

/* The scheduler (events.c, group.c, inject.c, steal.c, forkjoin.c; their
 * shared inline helpers are in runtime/sched.h). */
weft__worker *weft__current_worker(const weft_runtime *rt);
void *weft__worker_main(void *arg);
void weft__wake_all(weft__event *ev);
void weft__outside_enter(weft_runtime *rt);
void weft__outside_leave(weft_runtime *rt);
/* Whether this outside thread is inside a call on rt (its callbacks run
 * here, as part of that call). */
bool weft__inside_call(const weft_runtime *rt);
/* Whether the thread running a loop on rt should split its range now:
 * its deque is empty (thieves would find nothing). */
bool weft__hungry(const weft_runtime *rt, weft__worker *w);
/* Makes every private task of the calling worker (if it is one of rt's)
 * stealable and wakes sleepers: for callers that spawned children and now
 * run long work themselves. */
void weft__share_all(weft_runtime *rt);
/* Shares the private tasks of w, the calling thread's worker, with the
 * thief that asked for them (weft__deque_hungry): for loops that run long
 * callbacks between spawns, whose tasks a thief would otherwise wait for
 * until the next spawn. */
void weft__share_asked_owner(weft__worker *w);
/* Whether the calling thread is g's spawning thread (tests). */
bool weft__group_owned_here(const weft_group *g);

#define WEFT__GROUP_MAGIC WEFT_GROUP_MAGIC_   /* "weft": weft_group_init ran */
/* weft_group.base_ of a group with no child on a worker's stack. */
#define WEFT__GROUP_NO_BASE WEFT_GROUP_NO_BASE_
/* weft_group.bits_: owner_ is an outside thread's token; the group holds
 * one of rt->outside_active (an outside thread's children not yet waited
 * for keep weft_runtime_destroy waiting). */
#define WEFT__GROUP_OUTSIDE 1u
#define WEFT__GROUP_COUNTED 2u
/* weft_group.bits_: the group's children run on workers only, never on
 * the outside thread that waits for them (a WEFT_RUN root: on an outside
 * thread's stack nobody could steal its typed children). */
#define WEFT__GROUP_WORKERS_ONLY 4u

/* A misuse that leaves a worker's stack unusable (a typed task not synced
 * where the rules say): prints what and aborts. */
_Noreturn void weft__task_misuse(const char *what);

#endif
