/* Group state: completions of children that ran on other threads, and a
 * group's first error.  The counting itself is inline in runtime/sched.h. */
#include "runtime/sched.h"

bool weft__group_done_cb(void *g) { return weft__group_done(g); }

bool weft__group_done_sc_cb(void *p)
{
    const weft_group *g = p;
    return g->spawned_ == g->done_ + __atomic_load_n(&g->pending_, __ATOMIC_SEQ_CST);
}

void weft__group_fail(weft_group *g, int code)
{
    int zero = 0;
    __atomic_compare_exchange_n(&g->status_, &zero, code, false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void weft__complete_remote_n(weft_group *g, int status, int64_t n)
{
    weft_runtime *rt = g->rt_;
    weft__event *ev = weft__group_event(rt, g);
    if (status)
        weft__group_fail(g, status);
    __atomic_fetch_add(&g->pending_, n, __ATOMIC_SEQ_CST);
    if (ev == &rt->outside_ev) {
        /* Its sleepers issue no membarrier (event_sleep, fenced). */
        if (__atomic_load_n(&ev->sleepers, __ATOMIC_SEQ_CST) > 0)
            weft__event_wake(ev, INT_MAX);
        return;
    }
    weft__event_notify(ev, INT_MAX);
}
