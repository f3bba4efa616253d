/* Waits between tracing threads.  A trace holds its function's trace lock
 * while the body runs, and other threads wait for a PENDING entry to
 * settle; a body may call other functions.  Two threads tracing functions
 * whose bodies call each other would then wait for each other for ever.
 * Each thread that waits here records what it waits for, and each trace
 * lock and PENDING entry records the thread that holds it, all under one
 * mutex: a wait that would close a cycle is refused instead.  The thread
 * that adds the last edge of a cycle sees all the others, so every cycle
 * is found. */
#include "cache/internal.h"

struct weft__tracer {
    const weft_function *lock_wanted;   /* waits for this trace lock */
    const weft__entry *entry_wanted;    /* or for this entry to settle */
};

static pthread_mutex_t graph_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lock_freed = PTHREAD_COND_INITIALIZER;
static _Thread_local weft__tracer me;
/* Waits this thread refused (weft__cache_refusals). */
static _Thread_local unsigned long refusals;

/* Whether waiting for something held by owner would wait for this thread
 * (graph_mu held).  A chain has at most one edge per waiting thread. */
static bool closes_cycle_locked(const weft__tracer *owner)
{
    for (const weft__tracer *t = owner; t;) {
        if (t == &me)
            return true;
        if (t->lock_wanted)
            t = t->lock_wanted->trace_owner;
        else if (t->entry_wanted)
            t = t->entry_wanted->tracer;
        else
            return false;
    }
    return false;
}

bool weft__cache_trace_lock(weft_function *f)
{
    pthread_mutex_lock(&graph_mu);
    while (f->trace_owner) {
        if (closes_cycle_locked(f->trace_owner)) {
            pthread_mutex_unlock(&graph_mu);
            refusals++;
            return false;
        }
        me.lock_wanted = f;
        pthread_cond_wait(&lock_freed, &graph_mu);
        me.lock_wanted = NULL;
    }
    f->trace_owner = &me;
    pthread_mutex_unlock(&graph_mu);
    return true;
}

void weft__cache_trace_unlock(weft_function *f)
{
    pthread_mutex_lock(&graph_mu);
    f->trace_owner = NULL;
    pthread_cond_broadcast(&lock_freed);
    pthread_mutex_unlock(&graph_mu);
}

void weft__cache_entry_claim(weft__entry *e, bool mine)
{
    pthread_mutex_lock(&graph_mu);
    e->tracer = mine ? &me : NULL;
    pthread_mutex_unlock(&graph_mu);
}

bool weft__cache_wait_begin(const weft__entry *e, bool *mine)
{
    pthread_mutex_lock(&graph_mu);
    *mine = e->tracer == &me;
    bool ok = !closes_cycle_locked(e->tracer);
    if (ok)
        me.entry_wanted = e;
    else
        refusals++;
    pthread_mutex_unlock(&graph_mu);
    return ok;
}

unsigned long weft__cache_refusals(void)
{
    return refusals;
}

void weft__cache_wait_end(void)
{
    pthread_mutex_lock(&graph_mu);
    me.entry_wanted = NULL;
    pthread_mutex_unlock(&graph_mu);
}
