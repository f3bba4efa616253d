/* weft typed fork-join tasks: Lace-style tasks with hidden parameters on a
 * fixed task stack per worker.  Include <weft.h> rather than this file.
 *
 *     WEFT_TASK_1(long, fib, int, n)            a task of one argument
 *     {
 *         if (n < 2)
 *             return n;
 *         WEFT_SPAWN(fib, n - 1);               queue fib(n - 1) for thieves
 *         long b = WEFT_CALL(fib, n - 2);       a plain call
 *         long a = WEFT_SYNC(fib);              join the newest spawn: run it
 *         return a + b;                         here unless it was stolen
 *     }
 *     long r = WEFT_RUN(rt, fib, 35);           from any thread
 *
 * WEFT_TASK_n(RTYPE, NAME, T1, A1, ..., Tn, An) defines a task of n
 * arguments (n = 0..6) returning RTYPE; WEFT_VOID_TASK_n(NAME, T1, A1, ...)
 * one returning nothing.  The body follows the macro as a function body.
 * For a task used in several files, WEFT_TASK_DECL_n(RTYPE, NAME, T1, ...,
 * Tn) (or WEFT_VOID_TASK_DECL_n(NAME, T1, ...)) declares it in a header,
 * followed by a semicolon, and WEFT_TASK_IMPL_n / WEFT_VOID_TASK_IMPL_n,
 * with the arguments of WEFT_TASK_n, defines it in one file (WEFT_TASK_n is
 * DECL and IMPL together).  The arguments (and the result) of a task take
 * at most WEFT_TASK_ARG_BYTES bytes; more is a compile error, and so is a
 * WEFT_SPAWN whose arguments do not convert to the parameter types as in a
 * call of a prototyped function.
 *
 * Rules, as in Lace and Cilk:
 * - WEFT_SPAWN, WEFT_SYNC and WEFT_CALL appear only inside a task body
 *   (they use its hidden worker and stack position).  WEFT_SYNC(NAME)
 *   joins the newest spawn not yet joined, which must be a NAME task; a
 *   body joins every spawn it made before it returns.
 * - A body may call the rest of weft (loops, groups, traced functions).
 *   Typed and generic children share the worker's stack, so they nest: a
 *   body that spawns into a weft_group waits for it before its next
 *   WEFT_SPAWN or WEFT_SYNC (weft_parallel_for and the like wait before
 *   they return).  Where weft notices a broken nesting (a group's wait
 *   that meets a typed child) it aborts with a message; other breaks
 *   corrupt the stack.
 * - WEFT_RUN(rt, NAME, args...) runs a task on rt and waits for it, from
 *   any thread (a worker of rt runs it itself; for an outside thread one
 *   of rt's workers runs it, so that its children can be stolen).  On a NULL runtime or one
 *   being destroyed it runs nothing, returns a zero RTYPE and sets
 *   weft_errmsg().
 * - A worker's task stack holds weft_config.task_stack spawns (default
 *   WEFT_TASK_STACK_DEFAULT).  When it is full, a spawn runs its child at
 *   once (counted in weft_runtime_stats.overflows) and keeps the result
 *   for its WEFT_SYNC in an overflow area of the same size beyond the
 *   stack; with that one full too, weft aborts with a message. */
#ifndef WEFT_TASK_H
#define WEFT_TASK_H

#include <stdint.h>
#include <string.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tasks per worker's stack when weft_config.task_stack is 0.  The stack is
 * reserved address space; the kernel commits pages as spawns reach them. */
#define WEFT_TASK_STACK_DEFAULT (1u << 20)
/* Room for a task's arguments, and separately for its result. */
#define WEFT_TASK_ARG_BYTES 48

#if defined(__GNUC__) || defined(__clang__)
#define WEFT_TASK_LIKELY_(x) __builtin_expect(!!(x), 1)
#define WEFT_TASK_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#define WEFT_TASK_UNUSED_ __attribute__((unused))
#define WEFT_TASK_NOINLINE_ __attribute__((noinline))
#define WEFT_TASK_COLD_ __attribute__((noinline, cold))
#define WEFT_TASK_MAY_ALIAS_ __attribute__((may_alias))
#define WEFT_TASK_DIRECT_(T) (__alignof__(T) <= __alignof__(long double))
#else
#define WEFT_TASK_LIKELY_(x) (x)
#define WEFT_TASK_UNLIKELY_(x) (x)
#define WEFT_TASK_UNUSED_
#define WEFT_TASK_NOINLINE_
#define WEFT_TASK_COLD_
#define WEFT_TASK_MAY_ALIAS_
#define WEFT_TASK_DIRECT_(T) 0
#endif

/* Everything below with a trailing underscore is private to weft: the
 * macros' fast path, inlined into the caller.  The layouts may change in
 * any release. */
typedef struct weft_task_slot weft_task_slot;
typedef struct weft_task_worker weft_task_worker;
/* How a thief (or a worker that runs a WEFT_RUN) runs a queued task: with
 * its own worker and stack position, writing the result into the slot and
 * then marking it done. */
typedef void (*weft_task_steal_fn_)(weft_task_worker *w, weft_task_slot *head,
                                    weft_task_slot *self);

/* One entry of a task stack (64 bytes). */
struct weft_task_slot {
    weft_task_steal_fn_ run_;   /* NULL: an empty slot (the used part of a
                                   stack is exactly its slots with a run_,
                                   so that weft finds the top of a stack it
                                   did not see move) */
    uintptr_t state_;           /* atomic: WEFT_TASK_DONE_ once a thief is done */
    union {
        unsigned char bytes_[WEFT_TASK_ARG_BYTES];
        long double align_;
    } d_;                       /* the arguments, then the result */
};

/* A slot's state: 0, or done (a thief wrote the result, or copied the
 * task out, and will not touch the slot again). */
enum { WEFT_TASK_DONE_ = 2 };
/* What weft_task_sync_slow found: the child is the caller's to run, or
 * its result is in its slot (it was stolen, or run at once). */
enum { WEFT_TASK_SYNC_HERE_ = 0, WEFT_TASK_SYNC_RESULT_ = 1 };

/* The part of a worker that the macros and the inline fast paths of
 * weft_group_init, weft_spawn and weft_group_wait (<weft/runtime.h>) read:
 * its first three cache lines. */
struct weft_task_worker {
    /* Owner only. */
    weft_task_slot *split_;   /* slots at or above it are private (not stealable) */
    weft_task_slot *end_;     /* one past the last slot: the overflow area */
    uintptr_t overflow_;      /* children run at once whose WEFT_SYNC is pending */
    /* The generic calls' copy of the stack's top (typed tasks pass theirs
     * down instead and do not update this one). */
    weft_task_slot *head_;
    /* Non-zero while the generic fast paths may not be taken: typed tasks
     * run on this stack (low 32 bits: head_ may be stale) or the thread
     * runs spawns at once (high 32 bits: inline mode). */
    uint64_t busy_;
    /* Workers looking for work or asleep (atomic; a constant zero when no
     * other worker exists): a spawn then shares its task and wakes one. */
    const int32_t *idle_;
    weft_runtime *rt_;        /* the worker's runtime */
    weft_task_steal_fn_ generic_;   /* the run_ of a weft_spawn child's slot */
    uint64_t ran_;            /* statistics: weft_spawn children run by the
                                 inline wait (relaxed atomic) */
    char pad_[128 - 6 * sizeof(void *) - sizeof(uintptr_t) - 2 * sizeof(uint64_t)];
    /* Where a spawn leaves its fast path (atomic): end_, or the stack's
     * base once a thief found nothing to steal and asks the owner to
     * share, so that one compare serves both checks. */
    weft_task_slot *limit_;
};

#if defined(__GNUC__) || defined(__clang__)
/* The calling thread's worker, NULL on other threads (set by weft). */
WEFT_API extern __thread weft_task_worker *weft_task_self_
    __attribute__((tls_model("initial-exec")));
#endif

/* Slow paths of the macros, in libweft.  Not for direct use. */
WEFT_API void weft_task_share_slow(weft_task_worker *w, weft_task_slot *head);
WEFT_API int weft_task_sync_slow(weft_task_worker *w, weft_task_slot *t);
WEFT_API void weft_task_overflow_push(weft_task_worker *w, weft_task_slot *cell,
                                      const void *result, size_t size);
WEFT_API int weft_task_run_root(weft_runtime *rt, weft_task_slot *root);

static inline weft_task_slot *weft_task_limit_(weft_task_worker *w)
{
    return __atomic_load_n(&w->limit_, __ATOMIC_RELAXED);
}

/* Takes the slot at t back for the owner's own run. */
static inline void weft_task_take_(weft_task_slot *t)
{
    t->run_ = NULL;
}

/* A thief's run is over: the owner may read the result and reuse t. */
static inline void weft_task_done_(weft_task_slot *t)
{
    __atomic_store_n(&t->state_, (uintptr_t)WEFT_TASK_DONE_, __ATOMIC_RELEASE);
}

static inline void weft_task_root_(weft_task_slot *s, weft_task_steal_fn_ run)
{
    s->run_ = run;
    s->state_ = 0;
}

/* Argument-list helpers.  A spawn passes its arguments and a trailing 0, so
 * that the macros need no empty variadic argument (which C before C23
 * does not allow). */
#define WEFT_TASK_CAT_(a, b) WEFT_TASK_CAT2_(a, b)
#define WEFT_TASK_CAT2_(a, b) a##b
#define WEFT_TASK_FIRST_(a, ...) a
#define WEFT_TASK_REST_(a, ...) __VA_ARGS__

/* Inside a task body: queue a child, join the newest one, call directly. */
#define WEFT_SPAWN(...)                                                        \
    ((void)(weft_head_ = WEFT_TASK_CAT_(WEFT_TASK_FIRST_(__VA_ARGS__, ~),      \
                                        _weft_spawn)(weft_w_, weft_head_,      \
                                                     WEFT_TASK_REST_(__VA_ARGS__, 0))))
#define WEFT_SYNC(NAME) (NAME##_weft_sync(weft_w_, --weft_head_))
#define WEFT_CALL(...)                                                         \
    (WEFT_TASK_CAT_(WEFT_TASK_FIRST_(__VA_ARGS__, ~), _weft_invoke)(           \
        weft_w_, weft_head_, WEFT_TASK_REST_(__VA_ARGS__, 0)))
/* From any thread: run a task on rt and wait for it. */
#define WEFT_RUN(rt, ...)                                                      \
    (WEFT_TASK_CAT_(WEFT_TASK_FIRST_(__VA_ARGS__, ~), _weft_run)(              \
        (rt), WEFT_TASK_REST_(__VA_ARGS__, 0)))

/* ------------------------------------------------------------ the macros */

/* What differs between a task with a result (R_) and one without (V_). */
#define WEFT_TASK_RES_R_(RTYPE) RTYPE r_;
#define WEFT_TASK_RES_V_(RTYPE)
#define WEFT_TASK_SET_R_(x) r_ = (x)
#define WEFT_TASK_SET_V_(x) (x)
#define WEFT_TASK_RET_R_ return r_
#define WEFT_TASK_RET_V_ return
#define WEFT_TASK_PUT_R_(dst) memcpy((dst), &r_, sizeof r_)
#define WEFT_TASK_PUT_V_(dst) (void)(dst)
#define WEFT_TASK_GET_R_(src) memcpy(&r_, (src), sizeof r_)
#define WEFT_TASK_GET_V_(src) (void)(src)
#define WEFT_TASK_PTR_R_ &r_, sizeof r_
#define WEFT_TASK_PTR_V_ NULL, 0
#define WEFT_TASK_FITS_R_(RTYPE, NAME) \
    typedef char NAME##_weft_result_fits[sizeof(RTYPE) <= WEFT_TASK_ARG_BYTES ? 1 : -1];
#define WEFT_TASK_FITS_V_(RTYPE, NAME)
#define WEFT_TASK_UNPAREN_(...) __VA_ARGS__

/* The declaration of a task, in terms of lists that each arity spells out
 * (in parentheses, each item with a leading comma where it continues a
 * list): K is R_ or V_; FIELDS the arguments' struct members, TYPES the
 * parameter types, PARAMS the parameters, ARGS the arguments, UNPACK the
 * arguments read back from a struct a_, PACK the stores into a_.
 *   NAME_weft_args    the arguments as stored in a slot
 *   NAME_weft_put     stores the arguments into a slot
 *   NAME_weft_get     reads them back
 *   NAME_weft_call    the body (WEFT_CALL; defined by WEFT_TASK_IMPL_n)
 *   NAME_weft_steal   how a thief runs a queued NAME (WEFT_TASK_IMPL_n)
 *   NAME_weft_spawn   WEFT_SPAWN: queue the child
 *   NAME_weft_spawn_edge  WEFT_SPAWN at the spawn limit: queue and share
 *                     for a thief that asked, or run at once on a full stack
 *   NAME_weft_sync    WEFT_SYNC: run here, or take the thief's result
 *   NAME_weft_run     WEFT_RUN from any thread
 * The arguments move between a slot and registers as NAME_weft_args
 * (may_alias, as the bytes they live in), one load or store each: a
 * memcpy of the whole struct would make the compiler pack neighbouring
 * small arguments into one register first and unpack them after.  Only
 * arguments aligned beyond the slot's bytes take the memcpy.  The spawn
 * limit's rare paths (NAME_weft_spawn_edge) are out of line and cold, so
 * that a body inlines only the compare and the stores; the edge returns
 * nothing, so that the compiler still knows the new head is h + 1. */
#define WEFT_TASK_DECL_(K, RTYPE, NAME, FIELDS, TYPES, PARAMS, ARGS, UNPACK, PACK)          \
    typedef struct NAME##_weft_args {                                                      \
        WEFT_TASK_UNPAREN_ FIELDS                                                          \
    } WEFT_TASK_MAY_ALIAS_ NAME##_weft_args;                                               \
    typedef char NAME##_weft_args_fits[sizeof(NAME##_weft_args) <= WEFT_TASK_ARG_BYTES    \
                                           ? 1 : -1];                                      \
    WEFT_TASK_FITS_##K(RTYPE, NAME)                                                        \
    void NAME##_weft_steal(weft_task_worker *, weft_task_slot *, weft_task_slot *);        \
    RTYPE NAME##_weft_call(weft_task_worker *, weft_task_slot * WEFT_TASK_UNPAREN_ TYPES); \
    static inline WEFT_TASK_UNUSED_ void NAME##_weft_put(                                  \
        weft_task_slot *h WEFT_TASK_UNPAREN_ PARAMS)                                       \
    {                                                                                      \
        NAME##_weft_args a_;                                                               \
        WEFT_TASK_UNPAREN_ PACK                                                            \
        if (WEFT_TASK_DIRECT_(NAME##_weft_args))                                           \
            *(NAME##_weft_args *)(void *)h->d_.bytes_ = a_;                                \
        else                                                                               \
            memcpy(h->d_.bytes_, &a_, sizeof a_);                                          \
    }                                                                                      \
    static inline WEFT_TASK_UNUSED_ NAME##_weft_args NAME##_weft_get(                      \
        const weft_task_slot *t)                                                           \
    {                                                                                      \
        NAME##_weft_args a_;                                                               \
        if (WEFT_TASK_DIRECT_(NAME##_weft_args))                                           \
            a_ = *(const NAME##_weft_args *)(const void *)t->d_.bytes_;                    \
        else                                                                               \
            memcpy(&a_, t->d_.bytes_, sizeof a_);                                          \
        return a_;                                                                         \
    }                                                                                      \
    static WEFT_TASK_COLD_ WEFT_TASK_UNUSED_ void NAME##_weft_spawn_edge(                  \
        weft_task_worker *w, weft_task_slot *h WEFT_TASK_UNPAREN_ PARAMS)                  \
    {                                                                                      \
        if (h >= w->end_) {                                                                \
            WEFT_TASK_RES_##K(RTYPE)                                                       \
            WEFT_TASK_SET_##K(NAME##_weft_call(w, h + 1 WEFT_TASK_UNPAREN_ ARGS));         \
            weft_task_overflow_push(w, h, WEFT_TASK_PTR_##K);                              \
            return;                                                                        \
        }                                                                                  \
        NAME##_weft_put(h WEFT_TASK_UNPAREN_ ARGS);                                        \
        h->run_ = NAME##_weft_steal;                                                       \
        weft_task_share_slow(w, h + 1);                                                    \
    }                                                                                      \
    static inline WEFT_TASK_UNUSED_ weft_task_slot *NAME##_weft_spawn(                     \
        weft_task_worker *w, weft_task_slot *h WEFT_TASK_UNPAREN_ PARAMS, int unused_)     \
    {                                                                                      \
        (void)unused_;                                                                     \
        if (WEFT_TASK_UNLIKELY_(h >= weft_task_limit_(w))) {                               \
            NAME##_weft_spawn_edge(w, h WEFT_TASK_UNPAREN_ ARGS);                          \
            return h + 1;                                                                  \
        }                                                                                  \
        NAME##_weft_put(h WEFT_TASK_UNPAREN_ ARGS);                                        \
        h->run_ = NAME##_weft_steal;                                                       \
        return h + 1;                                                                      \
    }                                                                                      \
    static WEFT_TASK_NOINLINE_ WEFT_TASK_UNUSED_ RTYPE NAME##_weft_sync_slow(              \
        weft_task_worker *w, weft_task_slot *t)                                            \
    {                                                                                      \
        WEFT_TASK_RES_##K(RTYPE)                                                           \
        if (weft_task_sync_slow(w, t) == WEFT_TASK_SYNC_HERE_) {                           \
            NAME##_weft_args a_ = NAME##_weft_get(t);                                      \
            (void)a_;                                                                      \
            WEFT_TASK_SET_##K(NAME##_weft_call(w, t WEFT_TASK_UNPAREN_ UNPACK));           \
            WEFT_TASK_RET_##K;                                                             \
        }                                                                                  \
        WEFT_TASK_GET_##K(t->d_.bytes_);                                                   \
        WEFT_TASK_RET_##K;                                                                 \
    }                                                                                      \
    static inline WEFT_TASK_UNUSED_ RTYPE NAME##_weft_sync(weft_task_worker *w,            \
                                                           weft_task_slot *t)              \
    {                                                                                      \
        WEFT_TASK_RES_##K(RTYPE)                                                           \
        if (WEFT_TASK_LIKELY_(t >= w->split_)) {                                           \
            NAME##_weft_args a_ = NAME##_weft_get(t);                                      \
            (void)a_;                                                                      \
            weft_task_take_(t);                                                            \
            WEFT_TASK_SET_##K(NAME##_weft_call(w, t WEFT_TASK_UNPAREN_ UNPACK));           \
            WEFT_TASK_RET_##K;                                                             \
        }                                                                                  \
        WEFT_TASK_SET_##K(NAME##_weft_sync_slow(w, t));                                    \
        WEFT_TASK_RET_##K;                                                                 \
    }                                                                                      \
    static inline WEFT_TASK_UNUSED_ RTYPE NAME##_weft_invoke(                              \
        weft_task_worker *w, weft_task_slot *h WEFT_TASK_UNPAREN_ PARAMS, int unused_)     \
    {                                                                                      \
        WEFT_TASK_RES_##K(RTYPE)                                                           \
        (void)unused_;                                                                     \
        WEFT_TASK_SET_##K(NAME##_weft_call(w, h WEFT_TASK_UNPAREN_ ARGS));                 \
        WEFT_TASK_RET_##K;                                                                 \
    }                                                                                      \
    static inline WEFT_TASK_UNUSED_ RTYPE NAME##_weft_run(                                 \
        weft_runtime *rt WEFT_TASK_UNPAREN_ PARAMS, int unused_)                           \
    {                                                                                      \
        WEFT_TASK_RES_##K(RTYPE)                                                           \
        weft_task_slot s_;                                                                 \
        (void)unused_;                                                                     \
        memset(&s_, 0, sizeof s_);                                                         \
        NAME##_weft_put(&s_ WEFT_TASK_UNPAREN_ ARGS);                                      \
        weft_task_root_(&s_, NAME##_weft_steal);                                           \
        if (weft_task_run_root(rt, &s_) != 0)                                              \
            memset(s_.d_.bytes_, 0, sizeof s_.d_.bytes_);                                  \
        WEFT_TASK_GET_##K(s_.d_.bytes_);                                                   \
        WEFT_TASK_RET_##K;                                                                 \
    }                                                                                      \
    RTYPE NAME##_weft_call(weft_task_worker *, weft_task_slot * WEFT_TASK_UNPAREN_ TYPES)

/* The definition: the thief's entry, then the head of the body, which the
 * user's braces follow.  BPARAMS: the body's named parameters. */
#define WEFT_TASK_IMPL_(K, RTYPE, NAME, UNPACK, BPARAMS)                                    \
    void NAME##_weft_steal(weft_task_worker *w, weft_task_slot *h, weft_task_slot *t)      \
    {                                                                                      \
        WEFT_TASK_RES_##K(RTYPE)                                                           \
        NAME##_weft_args a_ = NAME##_weft_get(t);                                          \
        (void)a_;                                                                          \
        WEFT_TASK_SET_##K(NAME##_weft_call(w, h WEFT_TASK_UNPAREN_ UNPACK));               \
        WEFT_TASK_PUT_##K(t->d_.bytes_);                                                   \
        weft_task_done_(t);                                                                \
    }                                                                                      \
    RTYPE NAME##_weft_call(weft_task_worker *weft_w_ WEFT_TASK_UNUSED_,                    \
                           weft_task_slot *weft_head_ WEFT_TASK_UNUSED_                    \
                               WEFT_TASK_UNPAREN_ BPARAMS)

/* 0 arguments */
#define WEFT_TASK_DECL_0(RTYPE, NAME) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (char none_;), (), (), (), (), (a_.none_ = 0;))
#define WEFT_VOID_TASK_DECL_0(NAME) \
    WEFT_TASK_DECL_(V_, void, NAME, (char none_;), (), (), (), (), (a_.none_ = 0;))
#define WEFT_TASK_IMPL_0(RTYPE, NAME) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (), ())
#define WEFT_VOID_TASK_IMPL_0(NAME) \
    WEFT_TASK_IMPL_(V_, void, NAME, (), ())
#define WEFT_TASK_0(RTYPE, NAME) \
    WEFT_TASK_DECL_0(RTYPE, NAME); WEFT_TASK_IMPL_0(RTYPE, NAME)
#define WEFT_VOID_TASK_0(NAME) \
    WEFT_VOID_TASK_DECL_0(NAME); WEFT_VOID_TASK_IMPL_0(NAME)

/* 1 argument */
#define WEFT_TASK_DECL_1(RTYPE, NAME, T1) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (T1 a1;), (, T1), (, T1 a1), (, a1), (, a_.a1), (a_.a1 = a1;))
#define WEFT_VOID_TASK_DECL_1(NAME, T1) \
    WEFT_TASK_DECL_(V_, void, NAME, (T1 a1;), (, T1), (, T1 a1), (, a1), (, a_.a1), (a_.a1 = a1;))
#define WEFT_TASK_IMPL_1(RTYPE, NAME, T1, A1) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (, a_.a1), (, T1 A1))
#define WEFT_VOID_TASK_IMPL_1(NAME, T1, A1) \
    WEFT_TASK_IMPL_(V_, void, NAME, (, a_.a1), (, T1 A1))
#define WEFT_TASK_1(RTYPE, NAME, T1, A1) \
    WEFT_TASK_DECL_1(RTYPE, NAME, T1); WEFT_TASK_IMPL_1(RTYPE, NAME, T1, A1)
#define WEFT_VOID_TASK_1(NAME, T1, A1) \
    WEFT_VOID_TASK_DECL_1(NAME, T1); WEFT_VOID_TASK_IMPL_1(NAME, T1, A1)

/* 2 arguments */
#define WEFT_TASK_DECL_2(RTYPE, NAME, T1, T2) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (T1 a1; T2 a2;), (, T1, T2), (, T1 a1, T2 a2), (, a1, a2), (, a_.a1, a_.a2), (a_.a1 = a1; a_.a2 = a2;))
#define WEFT_VOID_TASK_DECL_2(NAME, T1, T2) \
    WEFT_TASK_DECL_(V_, void, NAME, (T1 a1; T2 a2;), (, T1, T2), (, T1 a1, T2 a2), (, a1, a2), (, a_.a1, a_.a2), (a_.a1 = a1; a_.a2 = a2;))
#define WEFT_TASK_IMPL_2(RTYPE, NAME, T1, A1, T2, A2) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (, a_.a1, a_.a2), (, T1 A1, T2 A2))
#define WEFT_VOID_TASK_IMPL_2(NAME, T1, A1, T2, A2) \
    WEFT_TASK_IMPL_(V_, void, NAME, (, a_.a1, a_.a2), (, T1 A1, T2 A2))
#define WEFT_TASK_2(RTYPE, NAME, T1, A1, T2, A2) \
    WEFT_TASK_DECL_2(RTYPE, NAME, T1, T2); WEFT_TASK_IMPL_2(RTYPE, NAME, T1, A1, T2, A2)
#define WEFT_VOID_TASK_2(NAME, T1, A1, T2, A2) \
    WEFT_VOID_TASK_DECL_2(NAME, T1, T2); WEFT_VOID_TASK_IMPL_2(NAME, T1, A1, T2, A2)

/* 3 arguments */
#define WEFT_TASK_DECL_3(RTYPE, NAME, T1, T2, T3) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (T1 a1; T2 a2; T3 a3;), (, T1, T2, T3), (, T1 a1, T2 a2, T3 a3), (, a1, a2, a3), (, a_.a1, a_.a2, a_.a3), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3;))
#define WEFT_VOID_TASK_DECL_3(NAME, T1, T2, T3) \
    WEFT_TASK_DECL_(V_, void, NAME, (T1 a1; T2 a2; T3 a3;), (, T1, T2, T3), (, T1 a1, T2 a2, T3 a3), (, a1, a2, a3), (, a_.a1, a_.a2, a_.a3), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3;))
#define WEFT_TASK_IMPL_3(RTYPE, NAME, T1, A1, T2, A2, T3, A3) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (, a_.a1, a_.a2, a_.a3), (, T1 A1, T2 A2, T3 A3))
#define WEFT_VOID_TASK_IMPL_3(NAME, T1, A1, T2, A2, T3, A3) \
    WEFT_TASK_IMPL_(V_, void, NAME, (, a_.a1, a_.a2, a_.a3), (, T1 A1, T2 A2, T3 A3))
#define WEFT_TASK_3(RTYPE, NAME, T1, A1, T2, A2, T3, A3) \
    WEFT_TASK_DECL_3(RTYPE, NAME, T1, T2, T3); WEFT_TASK_IMPL_3(RTYPE, NAME, T1, A1, T2, A2, T3, A3)
#define WEFT_VOID_TASK_3(NAME, T1, A1, T2, A2, T3, A3) \
    WEFT_VOID_TASK_DECL_3(NAME, T1, T2, T3); WEFT_VOID_TASK_IMPL_3(NAME, T1, A1, T2, A2, T3, A3)

/* 4 arguments */
#define WEFT_TASK_DECL_4(RTYPE, NAME, T1, T2, T3, T4) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (T1 a1; T2 a2; T3 a3; T4 a4;), (, T1, T2, T3, T4), (, T1 a1, T2 a2, T3 a3, T4 a4), (, a1, a2, a3, a4), (, a_.a1, a_.a2, a_.a3, a_.a4), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3; a_.a4 = a4;))
#define WEFT_VOID_TASK_DECL_4(NAME, T1, T2, T3, T4) \
    WEFT_TASK_DECL_(V_, void, NAME, (T1 a1; T2 a2; T3 a3; T4 a4;), (, T1, T2, T3, T4), (, T1 a1, T2 a2, T3 a3, T4 a4), (, a1, a2, a3, a4), (, a_.a1, a_.a2, a_.a3, a_.a4), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3; a_.a4 = a4;))
#define WEFT_TASK_IMPL_4(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (, a_.a1, a_.a2, a_.a3, a_.a4), (, T1 A1, T2 A2, T3 A3, T4 A4))
#define WEFT_VOID_TASK_IMPL_4(NAME, T1, A1, T2, A2, T3, A3, T4, A4) \
    WEFT_TASK_IMPL_(V_, void, NAME, (, a_.a1, a_.a2, a_.a3, a_.a4), (, T1 A1, T2 A2, T3 A3, T4 A4))
#define WEFT_TASK_4(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4) \
    WEFT_TASK_DECL_4(RTYPE, NAME, T1, T2, T3, T4); WEFT_TASK_IMPL_4(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4)
#define WEFT_VOID_TASK_4(NAME, T1, A1, T2, A2, T3, A3, T4, A4) \
    WEFT_VOID_TASK_DECL_4(NAME, T1, T2, T3, T4); WEFT_VOID_TASK_IMPL_4(NAME, T1, A1, T2, A2, T3, A3, T4, A4)

/* 5 arguments */
#define WEFT_TASK_DECL_5(RTYPE, NAME, T1, T2, T3, T4, T5) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (T1 a1; T2 a2; T3 a3; T4 a4; T5 a5;), (, T1, T2, T3, T4, T5), (, T1 a1, T2 a2, T3 a3, T4 a4, T5 a5), (, a1, a2, a3, a4, a5), (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3; a_.a4 = a4; a_.a5 = a5;))
#define WEFT_VOID_TASK_DECL_5(NAME, T1, T2, T3, T4, T5) \
    WEFT_TASK_DECL_(V_, void, NAME, (T1 a1; T2 a2; T3 a3; T4 a4; T5 a5;), (, T1, T2, T3, T4, T5), (, T1 a1, T2 a2, T3 a3, T4 a4, T5 a5), (, a1, a2, a3, a4, a5), (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3; a_.a4 = a4; a_.a5 = a5;))
#define WEFT_TASK_IMPL_5(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5), (, T1 A1, T2 A2, T3 A3, T4 A4, T5 A5))
#define WEFT_VOID_TASK_IMPL_5(NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5) \
    WEFT_TASK_IMPL_(V_, void, NAME, (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5), (, T1 A1, T2 A2, T3 A3, T4 A4, T5 A5))
#define WEFT_TASK_5(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5) \
    WEFT_TASK_DECL_5(RTYPE, NAME, T1, T2, T3, T4, T5); WEFT_TASK_IMPL_5(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5)
#define WEFT_VOID_TASK_5(NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5) \
    WEFT_VOID_TASK_DECL_5(NAME, T1, T2, T3, T4, T5); WEFT_VOID_TASK_IMPL_5(NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5)

/* 6 arguments */
#define WEFT_TASK_DECL_6(RTYPE, NAME, T1, T2, T3, T4, T5, T6) \
    WEFT_TASK_DECL_(R_, RTYPE, NAME, (T1 a1; T2 a2; T3 a3; T4 a4; T5 a5; T6 a6;), (, T1, T2, T3, T4, T5, T6), (, T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6), (, a1, a2, a3, a4, a5, a6), (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5, a_.a6), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3; a_.a4 = a4; a_.a5 = a5; a_.a6 = a6;))
#define WEFT_VOID_TASK_DECL_6(NAME, T1, T2, T3, T4, T5, T6) \
    WEFT_TASK_DECL_(V_, void, NAME, (T1 a1; T2 a2; T3 a3; T4 a4; T5 a5; T6 a6;), (, T1, T2, T3, T4, T5, T6), (, T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6), (, a1, a2, a3, a4, a5, a6), (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5, a_.a6), (a_.a1 = a1; a_.a2 = a2; a_.a3 = a3; a_.a4 = a4; a_.a5 = a5; a_.a6 = a6;))
#define WEFT_TASK_IMPL_6(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5, T6, A6) \
    WEFT_TASK_IMPL_(R_, RTYPE, NAME, (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5, a_.a6), (, T1 A1, T2 A2, T3 A3, T4 A4, T5 A5, T6 A6))
#define WEFT_VOID_TASK_IMPL_6(NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5, T6, A6) \
    WEFT_TASK_IMPL_(V_, void, NAME, (, a_.a1, a_.a2, a_.a3, a_.a4, a_.a5, a_.a6), (, T1 A1, T2 A2, T3 A3, T4 A4, T5 A5, T6 A6))
#define WEFT_TASK_6(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5, T6, A6) \
    WEFT_TASK_DECL_6(RTYPE, NAME, T1, T2, T3, T4, T5, T6); WEFT_TASK_IMPL_6(RTYPE, NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5, T6, A6)
#define WEFT_VOID_TASK_6(NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5, T6, A6) \
    WEFT_VOID_TASK_DECL_6(NAME, T1, T2, T3, T4, T5, T6); WEFT_VOID_TASK_IMPL_6(NAME, T1, A1, T2, A2, T3, A3, T4, A4, T5, A5, T6, A6)

#ifdef __cplusplus
}
#endif
#endif
