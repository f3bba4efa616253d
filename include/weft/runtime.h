/* weft runtime: workers, fork-join groups, parallel loops, statistics and
 * the timeline profiler.  Include <weft.h> rather than this file. */
#ifndef WEFT_RUNTIME_H
#define WEFT_RUNTIME_H

#include "common.h"
#include "task.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start-up settings.  Fill with weft_config_default (or zero-initialise)
 * and set the fields wanted.  The struct keeps its size across releases:
 * new settings take their place in reserved[], so a program built against
 * an older header passes zeros for them, meaning "the default".
 * weft_runtime_create refuses a configuration whose reserved[] is not all
 * zero (WEFT_EINVAL), so that no value is mistaken for a later setting. */
typedef struct weft_config {
    unsigned workers;          /* 0: $WEFT_NUM_THREADS, else online CPUs
                                  (the variable, when set and not empty,
                                  must be a decimal in 1..4096: "abc", "0",
                                  "4 " or "99999" make weft_runtime_create
                                  fail with WEFT_EINVAL) */
    unsigned inter_op_threads; /* ops of one op list run at once; 0: workers */
    unsigned intra_op_threads; /* chunks one op is split into;    0: workers */
    unsigned task_stack;       /* spawns each worker's task stack holds (see
                                  <weft/task.h>), 1..2^30; 0: 2^20
                                  (WEFT_TASK_STACK_DEFAULT) */
    uint64_t reserved[14];     /* must be zero */
} weft_config;

/* Fills cfg with the defaults (all zero: pick from the environment).  Any
 * thread. */
WEFT_API void weft_config_default(weft_config *cfg);

/* Starts a runtime with cfg (NULL: defaults).  On success *out owns the
 * runtime; the caller destroys it with weft_runtime_destroy.  Any thread. */
WEFT_API int weft_runtime_create(const weft_config *cfg, weft_runtime **out);
/* Waits for work in flight, joins the workers, frees everything, sets *rt
 * to NULL and returns 0.  NULL and *rt == NULL are fine (0).  Work in
 * flight includes the groups that outside threads spawned into and have
 * not waited for yet: destroy drops their queued children (the waits
 * return WEFT_ECANCELED) and returns once every such group was waited for.
 * Called where it cannot run, from a worker of *rt or from a callback of a
 * call on *rt (it would wait for itself), it returns WEFT_EINVAL, sets
 * weft_errmsg() and leaves *rt as it was.  Other calls on *rt must not
 * start once destroy has begun. */
WEFT_API int weft_runtime_destroy(weft_runtime **rt);
/* The number of worker threads (0 for NULL).  Any thread. */
WEFT_API unsigned weft_runtime_workers(const weft_runtime *rt);

/* Fork-join.  A group lives wherever the caller puts it (often the stack);
 * its fields are private, and reserved_ leaves room for later ones without
 * a change of size.  weft_group_init, weft_spawn and weft_group_wait
 * may be called from the runtime's workers and from any outside thread; the
 * thread that spawns into a group is the one that waits for it (the group
 * may have been set up on another thread).  A group must be waited for
 * before it goes out of scope. */
typedef void (*weft_task_fn)(void *arg);

typedef struct weft_group {
    weft_runtime *rt_;       /* private */
    int64_t pending_;        /* private: children finished by other threads (atomic) */
    int64_t spawned_;        /* private: children spawned (by the spawning thread) */
    int64_t done_;           /* private: children the spawning worker ran itself */
    int status_;             /* private: first error (atomic) */
    unsigned flags_;         /* private: set-up mark */
    void *owner_;            /* private: the spawning thread (a worker, or a token) */
    void *base_;             /* private: the spawning worker's lowest child slot */
    unsigned bits_;          /* private */
    unsigned spare_;         /* private */
    void *reserved_[4];      /* private: room for later fields, never read */
} weft_group;

WEFT_API void weft_group_init(weft_group *g, weft_runtime *rt);
/* Queues fn(arg) as a child of g.  Never allocates on a worker (the task is
 * stored inline in the worker's task stack, which typed tasks share, see
 * <weft/task.h>; on a full stack the child runs at once); an outside
 * thread's task goes through the runtime's injection queue.  If g was not set up by weft_group_init or
 * fn is NULL, the task is not run and the next weft_group_wait of g returns
 * WEFT_EINVAL.  So does a spawn into a worker's group that has children
 * from another thread (e.g. a child spawning into its parent's group).  If
 * g is NULL the task is not run either; there is no group to report it to,
 * so only weft_errmsg() says so. */
WEFT_API void weft_spawn(weft_group *g, weft_task_fn fn, void *arg);
/* Runs queued and stolen work until every child of g has finished (an
 * outside thread runs only its own children that no worker has started).
 * Returns 0, WEFT_EINVAL (bad group or spawn), or WEFT_ECANCELED when the
 * runtime is being destroyed and children were dropped. */
WEFT_API int weft_group_wait(weft_group *g);

/* The three calls above have inline fast paths (below), taken on a worker
 * of the group's runtime when nothing unusual is going on; everything
 * else goes to the functions.  Their behaviour is the functions'.  The
 * fast paths read the layouts of <weft/task.h>, so a program built
 * against one release of weft runs with that release only (as with typed
 * tasks).  Define WEFT_NO_INLINE_GROUPS before including weft to call the
 * functions always; (weft_spawn)(g, fn, arg) calls one directly. */

/* Everything with a trailing underscore is private to weft. */
#define WEFT_GROUP_MAGIC_ 0x77656674u            /* "weft": weft_group_init ran */
#define WEFT_GROUP_NO_BASE_ ((void *)UINTPTR_MAX) /* no child on a worker's stack */

/* A weft_spawn child as its slot's d_ holds it. */
typedef struct weft_spawned_ {
    weft_task_fn fn;
    void *arg;
    weft_group *g;
} weft_spawned_;

/* Slow paths of the fast paths, in libweft.  Not for direct use. */
WEFT_API void weft_group_init_slow_(weft_group *g, weft_runtime *rt);
WEFT_API void weft_spawn_slow_(weft_group *g, weft_task_fn fn, void *arg);
WEFT_API void weft_spawn_wake_(weft_task_worker *w);
WEFT_API int weft_group_wait_slow_(weft_group *g);
WEFT_API int weft_group_wait_own_(weft_group *g);
WEFT_API int weft_group_finish_(weft_group *g);

#if defined(__GNUC__) || defined(__clang__)

static inline weft_spawned_ *weft_spawned_of_(weft_task_slot *s)
{
    return (weft_spawned_ *)(void *)s->d_.bytes_;
}

/* The fields weft_group_init sets for any runtime and thread. */
static inline void weft_group_reset_(weft_group *g, weft_runtime *rt)
{
    g->rt_ = rt;
    g->pending_ = 0;
    g->spawned_ = 0;
    g->done_ = 0;
    g->status_ = 0;
    g->flags_ = WEFT_GROUP_MAGIC_;
    g->base_ = WEFT_GROUP_NO_BASE_;
}

static inline void weft_group_init_inline_(weft_group *g, weft_runtime *rt)
{
    weft_task_worker *w = weft_task_self_;
    if (WEFT_TASK_UNLIKELY_(g == NULL || rt == NULL || w == NULL || w->rt_ != rt)) {
        weft_group_init_slow_(g, rt);
        return;
    }
    weft_group_reset_(g, rt);
    g->owner_ = w;
    g->bits_ = 0;
}

static inline void weft_spawn_inline_(weft_group *g, weft_task_fn fn, void *arg)
{
    weft_task_worker *w = weft_task_self_;
    weft_task_slot *h;
    /* On g's spawning worker, no typed task or inline mode on its stack,
     * and the head below the spawn limit (not full, no thief asking). */
    if (WEFT_TASK_UNLIKELY_(w == NULL || g == NULL || fn == NULL || g->owner_ != (void *)w ||
                            w->busy_ != 0 || (h = w->head_) >= weft_task_limit_(w))) {
        weft_spawn_slow_(g, fn, arg);
        return;
    }
    /* state_ is 0 in every empty slot. */
    weft_spawned_ *t = weft_spawned_of_(h);
    h->run_ = w->generic_;
    t->fn = fn;
    t->arg = arg;
    t->g = g;
    w->head_ = h + 1;
    /* Other threads read spawned_ (a spawn into a group of another thread
     * is refused while it has children). */
    __atomic_store_n(&g->spawned_, g->spawned_ + 1, __ATOMIC_RELAXED);
    if ((void *)h < g->base_)
        g->base_ = h;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (WEFT_TASK_UNLIKELY_(__atomic_load_n(w->idle_, __ATOMIC_RELAXED) > 0))
        weft_spawn_wake_(w);
}

static inline int weft_group_wait_inline_(weft_group *g)
{
    weft_task_worker *w = weft_task_self_;
    if (WEFT_TASK_UNLIKELY_(w == NULL || g == NULL || g->owner_ != (void *)w))
        return weft_group_wait_slow_(g);
    /* g's children still queued are the newest tasks of the stack: while
     * the newest one is a private child of g (and no thief asks for
     * tasks), it is taken back and run here, without reading pending_,
     * the count that thieves bump (its line would move back and forth
     * once per stolen child). */
    while (g->spawned_ != g->done_) {
        weft_task_slot *p = w->head_ - 1;
        if (WEFT_TASK_UNLIKELY_(p < w->split_ || w->busy_ != 0 || p->run_ != w->generic_ ||
                                weft_spawned_of_(p)->g != g ||
                                weft_task_limit_(w) != w->end_))
            return weft_group_wait_own_(g);
        w->head_ = p;
        weft_task_take_(p);
        __atomic_store_n(&w->ran_, w->ran_ + 1, __ATOMIC_RELAXED);
        weft_spawned_ *t = weft_spawned_of_(p);
        t->fn(t->arg);
        g->done_++;
    }
    /* Every child ran here, so no other thread counted one in pending_,
     * and the group is a worker's, so it holds no count of the runtime
     * (weft_group.bits_): only a failed spawn's status is left. */
    g->spawned_ = 0;
    g->done_ = 0;
    g->base_ = WEFT_GROUP_NO_BASE_;
    if (WEFT_TASK_UNLIKELY_(__atomic_load_n(&g->status_, __ATOMIC_RELAXED) != 0))
        return weft_group_finish_(g);
    return 0;
}

#ifndef WEFT_NO_INLINE_GROUPS
#define weft_group_init(g, rt) weft_group_init_inline_((g), (rt))
#define weft_spawn(g, fn, arg) weft_spawn_inline_((g), (fn), (arg))
#define weft_group_wait(g) weft_group_wait_inline_((g))
#endif

#endif

/* Loops.  The first non-zero return of a callback cancels the iterations not
 * yet started and is what the loop returns.  Callable from workers (nested)
 * and from any outside thread. */
typedef int (*weft_range_fn)(size_t begin, size_t end, void *ctx);
/* fn is called on disjoint ranges covering [0, n).  grain 0 splits
 * adaptively (lazily, when other workers are idle). */
WEFT_API int weft_parallel_for(weft_runtime *rt, size_t n, size_t grain,
                               weft_range_fn fn, void *ctx);
typedef int (*weft_index_fn)(size_t i, void *ctx);
/* fn(i) for every i in [0, n), never more than parallel_iterations calls in
 * flight at once (0: no bound). */
WEFT_API int weft_parallel_map(weft_runtime *rt, size_t n, unsigned parallel_iterations,
                               weft_index_fn fn, void *ctx);

/* Statistics, summed over the workers' counters on read.  Zero when weft was
 * built with -Dstats=false.  Any thread. */
typedef struct weft_runtime_stats {
    uint64_t tasks, steals, steal_attempts, sleeps;
    uint64_t overflows;   /* spawns run at once because a task stack was full */
    uint64_t reserved[8]; /* zero, written by weft: room for later counters,
                             so the struct keeps its size across releases */
} weft_runtime_stats;
WEFT_API void weft_runtime_get_stats(const weft_runtime *rt, weft_runtime_stats *out);

/* Timeline of workers, ops, map iterations, host calls and traces, as Chrome
 * trace-event JSON (opens in Perfetto or chrome://tracing).  Recording is
 * per thread (a lane per worker and per outside thread) and bounded: a lane
 * keeps its first 65536 events; later ones, and any recorded without
 * memory, are dropped and counted in the file's otherData.dropped_events.
 * weft_profile_begin copies path and creates the file (WEFT_EIO if it
 * cannot); weft_profile_end, or weft_runtime_destroy of a runtime still
 * recording, writes it (WEFT_EIO if that fails).  One profile at a time per
 * runtime (WEFT_EINVAL for a second begin, or an end without one), and at
 * most 64 runtimes profiled at once (WEFT_EAGAIN).  Any thread. */
WEFT_API int weft_profile_begin(weft_runtime *rt, const char *path);
WEFT_API int weft_profile_end(weft_runtime *rt);
/* Records a span of the caller's own, category "user", on the calling
 * thread's lane of rt's profile: name and detail (NULL: none) are copied
 * (at most 47 and 79 bytes kept); times are CLOCK_MONOTONIC nanoseconds.
 * Records nothing when rt is not profiling.  Returns 0, or WEFT_EINVAL for
 * a NULL rt or name or a span that ends before it begins.  Any thread. */
WEFT_API int weft_profile_span(weft_runtime *rt, const char *name, const char *detail,
                               uint64_t t0_ns, uint64_t t1_ns);

#ifdef __cplusplus
}
#endif
#endif
