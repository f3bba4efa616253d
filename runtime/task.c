/* Typed fork-join tasks: the slow paths of the macros of <weft/task.h>
 * (sharing for a thief that asked, a sync whose child is not private, a
 * full stack) and running a task from any thread (WEFT_RUN). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/sched.h"

_Noreturn void weft__task_misuse(const char *what)
{
    fprintf(stderr, "weft: %s\n", what);
    fflush(stderr);
    abort();
}

void weft_task_share_slow(weft_task_worker *tw, weft_task_slot *head)
{
    weft__worker *w = weft__worker_of(tw);
    weft__deque_share_after_push_owner(&w->dq, head);
    weft__notify_work(w->rt);
    weft__notify_waiters(w->rt, 1);
}

static bool slot_done(void *p)
{
    const weft_task_slot *t = p;
    return __atomic_load_n(&t->state_, __ATOMIC_ACQUIRE) == WEFT_TASK_DONE_;
}

/* Waits until the thief of t marks it done, running other workers' tasks
 * meanwhile (none of w's own: everything above t is synced, everything
 * below is older). */
static void wait_stolen(weft__worker *w, weft_task_slot *t)
{
    weft_runtime *rt = w->rt;
    weft__idle_state s = { 0, false, false, CK_BACKOFF_INITIALIZER, 0, 0 };
    while (!slot_done(t)) {
        if (weft__run_some_work(w, &s, t + 1) || weft__spin_idle(rt, &s))
            continue;
        weft__event_sleep(rt, &rt->done_ev, slot_done, t, false, 0);
    }
    weft__flush_completions(w);
    weft__set_searching(rt, &s.searching, false);
}

/* The deque of a task stack is also the first member of its worker;
 * outside threads' stacks (below) have no worker around them, and reach
 * only the overflow paths, which use the deque alone. */
static weft__deque *deque_of(weft_task_worker *tw)
{
    return (weft__deque *)(void *)tw;
}

int weft_task_sync_slow(weft_task_worker *tw, weft_task_slot *t)
{
    weft__deque *d = deque_of(tw);
    if (t >= tw->end_) {
        /* A child run at once: its result is in its overflow cell. */
        if (--tw->overflow_ == 0)
            tw->split_ = d->osplit;
        return WEFT_TASK_SYNC_RESULT_;
    }
    weft__worker *w = weft__worker_of(tw);
    if (weft__deque_pop_shared_owner(d, t) == WEFT__POP_HERE) {
        weft_task_take_(t);
        d->tw.head_ = t;
        return WEFT_TASK_SYNC_HERE_;
    }
    wait_stolen(w, t);
    weft__deque_reset_owner(d, t);
    weft__slot_release(t);
    d->tw.head_ = t;
    return WEFT_TASK_SYNC_RESULT_;
}

void weft_task_overflow_push(weft_task_worker *tw, weft_task_slot *cell, const void *result,
                             size_t size)
{
    weft__deque *d = deque_of(tw);
    if (cell >= tw->end_ + d->nslots)
        weft__task_misuse("WEFT_SPAWN: the task stack and its overflow area are full "
                          "(raise weft_config.task_stack)");
    if (size)
        memcpy(cell->d_.bytes_, result, size);
    /* While children run at once await their sync, every WEFT_SYNC takes
     * the slow path (the overflow area lies below this bound too). */
    if (tw->overflow_++ == 0)
        tw->split_ = tw->end_ + d->nslots;
    __atomic_store_n(&d->overflows, d->overflows + 1, __ATOMIC_RELAXED);
}

/* A task stack for typed tasks run on an outside thread (an outside
 * waiter runs its own queued WEFT_RUN root when every worker is busy).
 * Nobody steals from it, so its tasks run one after the other.  Made on
 * first use and unmapped when the thread exits. */
static pthread_key_t outside_key;
static pthread_once_t outside_once = PTHREAD_ONCE_INIT;
static _Thread_local weft__deque *tls_outside_dq;

static void outside_dq_free(void *p)
{
    weft__deque_fini(p);
    weft__free(p);
}

static void outside_key_make(void)
{
    (void)pthread_key_create(&outside_key, outside_dq_free);
}

static weft__deque *outside_deque(void)
{
    if (tls_outside_dq)
        return tls_outside_dq;
    pthread_once(&outside_once, outside_key_make);
    weft__deque *d = weft__aligned_alloc(sizeof *d);
    if (!d)
        return NULL;
    if (weft__deque_init(d, WEFT_TASK_STACK_DEFAULT) != 0) {
        weft__free(d);
        return NULL;
    }
    d->solo = true;
    (void)pthread_setspecific(outside_key, d);
    tls_outside_dq = d;
    return d;
}

/* Runs the root slot on the calling thread's stack. */
static void run_here(weft__deque *d, weft_task_slot *root)
{
    weft__deque_run_typed(d, root);
}

static void root_task(void *arg)
{
    weft_task_slot *root = arg;
    weft__worker *w = weft__tls_worker;
    weft__deque *d = w ? &w->dq : outside_deque();
    if (!d)
        weft__task_misuse("WEFT_RUN: no memory for a task stack on this thread");
    run_here(d, root);
}

int weft_task_run_root(weft_runtime *rt, weft_task_slot *root)
{
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "WEFT_RUN: rt is NULL");
    weft__worker *w = weft__current_worker(rt);
    if (w) {
        run_here(&w->dq, root);
        return 0;
    }
    weft_group g;
    weft_group_init(&g, rt);
    /* A worker must run the root: an outside thread's stack is solo, so a
     * root taken back by this thread while every worker was busy ran its
     * whole tree here, one task after the other. */
    g.bits_ |= WEFT__GROUP_WORKERS_ONLY;
    weft_spawn(&g, root_task, root);
    int rc = weft_group_wait(&g);
    if (rc)
        return weft__errorf(rc, "WEFT_RUN: the task did not run (%s)", weft_strerror(rc));
    return 0;
}
