/* runtime/ internals: the Chase-Lev deque, the worker block and the runtime
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

/* Chase-Lev deque with the C11 memory orders of Lê et al. (PPoPP 2013).
 * One owner pushes and pops at the bottom; any thread steals at the top. */
typedef struct weft__deque {
    _Alignas(WEFT__LINE) int64_t top;      /* CAS by thieves and owner */
    _Alignas(WEFT__LINE) int64_t bottom;   /* written by the owner only */
    weft__deque_array *array;              /* written by the owner only */
    /* Owner-only part. */
    _Alignas(WEFT__LINE) ck_epoch_record_t *owner_rec;
    /* No thread ever steals from this deque (a runtime of one worker):
     * pop needs neither the fence nor the CAS. */
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

enum { WEFT__STEAL_EMPTY = 0, WEFT__STEAL_OK = 1, WEFT__STEAL_ABORT = -1 };
/* Takes the top task into *out.  rec is the calling thief's registered
 * epoch record.  Returns WEFT__STEAL_OK, _EMPTY, or _ABORT (lost a race:
 * retry later).  Any thread but the owner. */
int weft__deque_steal(weft__deque *d, weft__task *out, ck_epoch_record_t *rec);

/* Pushes a task at the bottom.  False when the array could not grow (out
 * of memory): the task is not queued.  Owner thread. */
static inline bool weft__deque_push_owner(weft__deque *d, weft_task_fn fn, void *arg,
                                          weft_group *g)
{
    int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_RELAXED);
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    weft__deque_array *a = d->array;
    if (WEFT__UNLIKELY(b - t > a->mask)) {
        a = weft__deque_grow_owner(d, a, t, b);
        if (!a)
            return false;
    }
    weft__task *s = &a->slots[b & a->mask];
    __atomic_store_n(&s->fn, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&s->arg, arg, __ATOMIC_RELAXED);
    __atomic_store_n(&s->g, g, __ATOMIC_RELAXED);
    /* A release store (Lê et al. use a release fence and a relaxed store;
     * the same instruction on x86, and visible to ThreadSanitizer). */
    __atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELEASE);
    return true;
}

/* Pops the bottom task into *out.  False when empty.  Owner thread. */
static inline bool weft__deque_pop_owner(weft__deque *d, weft__task *out)
{
    int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_RELAXED) - 1;
    weft__deque_array *a = d->array;
    if (d->solo) {
        if (b < __atomic_load_n(&d->top, __ATOMIC_RELAXED))
            return false;
        weft__task *s = &a->slots[b & a->mask];
        out->fn = __atomic_load_n(&s->fn, __ATOMIC_RELAXED);
        out->arg = __atomic_load_n(&s->arg, __ATOMIC_RELAXED);
        out->g = __atomic_load_n(&s->g, __ATOMIC_RELAXED);
        __atomic_store_n(&d->bottom, b, __ATOMIC_RELAXED);
        return true;
    }
#ifdef WEFT__TSAN
    /* ThreadSanitizer rejects fences: the same order from seq_cst ops. */
    (void)__atomic_exchange_n(&d->bottom, b, __ATOMIC_SEQ_CST);
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
#else
    __atomic_store_n(&d->bottom, b, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_RELAXED);
#endif
    if (t > b) {
        __atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELAXED);
        return false;
    }
    weft__task *s = &a->slots[b & a->mask];
    out->fn = __atomic_load_n(&s->fn, __ATOMIC_RELAXED);
    out->arg = __atomic_load_n(&s->arg, __ATOMIC_RELAXED);
    out->g = __atomic_load_n(&s->g, __ATOMIC_RELAXED);
    if (t == b) {
        /* The last task: race the thieves for it. */
        bool won = __atomic_compare_exchange_n(&d->top, &t, t + 1, false,
                                               __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
        __atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELAXED);
        return won;
    }
    return true;
}

/* Tasks queued, as a snapshot (may be stale).  Any thread. */
static inline int64_t weft__deque_size(const weft__deque *d)
{
    int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_ACQUIRE);
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    return b - t;
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
    unsigned index;
    uint64_t rng;
    /* Statistics: written by the owner only (relaxed atomic stores), read
     * by weft_runtime_get_stats. */
    uint64_t tasks, steals, steal_attempts, sleeps;
    pthread_t thread;
    bool started;
    _Alignas(WEFT__LINE) ck_epoch_record_t rec;
} weft__worker;

/* An event count for sleeping threads: waiters announce themselves in
 * `sleepers`, wakers bump `seq` (a futex word) only when there are any. */
typedef struct weft__event {
    _Alignas(WEFT__LINE) uint32_t seq;
    _Alignas(WEFT__LINE) int32_t sleepers;
} weft__event;

struct weft_runtime {
    unsigned nworkers, inter_op, intra_op;
    weft__worker **workers;
    bool membarrier_ok;
    ck_epoch_t epoch;

    weft__event work_ev;   /* idle workers: new tasks (wake one) */
    weft__event done_ev;   /* group waiters and destroy: completions (wake all) */

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

/* sched.c */
weft__worker *weft__current_worker(const weft_runtime *rt);
void *weft__worker_main(void *arg);
void weft__wake_all(weft_runtime *rt, weft__event *ev);
void weft__outside_enter(weft_runtime *rt);
void weft__outside_leave(weft_runtime *rt);
/* Whether the thread running a loop on rt should split its range now:
 * its deque is empty (thieves would find nothing). */
bool weft__hungry(const weft_runtime *rt, const weft__worker *w);

#define WEFT__GROUP_MAGIC 0x77656674u   /* "weft": weft_group_init ran */

#endif
