/* The injection queue: a ring of inline tasks, under a lock, through which
 * outside threads hand their spawns to the workers. */
#include "runtime/sched.h"

int weft__inject_push(weft_runtime *rt, const weft__task *t)
{
    int r = WEFT__INJECT_QUEUED;
    pthread_mutex_lock(&rt->inject_lock);
    if (__atomic_load_n(&rt->stopping, __ATOMIC_ACQUIRE)) {
        r = WEFT__INJECT_CANCELED;
        goto out;
    }
    if (rt->ring_count == rt->ring_cap) {
        size_t cap = rt->ring_cap ? rt->ring_cap * 2 : 64;
        weft__task *n = cap <= SIZE_MAX / sizeof *n ? weft__malloc(cap * sizeof *n) : NULL;
        if (!n) {
            r = WEFT__INJECT_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < rt->ring_count; i++)
            n[i] = rt->ring[(rt->ring_head + i) & (rt->ring_cap - 1)];
        weft__free(rt->ring);
        rt->ring = n;
        rt->ring_cap = cap;
        rt->ring_head = 0;
    }
    rt->ring[(rt->ring_head + rt->ring_count) & (rt->ring_cap - 1)] = *t;
    rt->ring_count++;
    __atomic_store_n(&rt->inject_count, (int64_t)rt->ring_count, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&rt->inject_lock);
    return r;
}

bool weft__inject_pop(weft_runtime *rt, weft__task *out)
{
    if (__atomic_load_n(&rt->inject_count, __ATOMIC_ACQUIRE) == 0)
        return false;
    bool got = false;
    pthread_mutex_lock(&rt->inject_lock);
    if (rt->ring_count > 0) {
        *out = rt->ring[rt->ring_head];
        rt->ring_head = (rt->ring_head + 1) & (rt->ring_cap - 1);
        rt->ring_count--;
        __atomic_store_n(&rt->inject_count, (int64_t)rt->ring_count, __ATOMIC_RELEASE);
        got = true;
    }
    pthread_mutex_unlock(&rt->inject_lock);
    return got;
}

/* Takes back the newest queued task if it is a child of g: an outside
 * thread's own spawn that no worker has started yet.  Outside thread. */
bool weft__inject_take_back(weft_runtime *rt, const weft_group *g, weft__task *out)
{
    if (__atomic_load_n(&rt->inject_count, __ATOMIC_ACQUIRE) == 0)
        return false;
    bool got = false;
    pthread_mutex_lock(&rt->inject_lock);
    if (rt->ring_count > 0) {
        size_t last = (rt->ring_head + rt->ring_count - 1) & (rt->ring_cap - 1);
        if (rt->ring[last].g == g) {
            *out = rt->ring[last];
            rt->ring_count--;
            __atomic_store_n(&rt->inject_count, (int64_t)rt->ring_count, __ATOMIC_RELEASE);
            got = true;
        }
    }
    pthread_mutex_unlock(&rt->inject_lock);
    return got;
}

/* Called by weft_runtime_destroy once stopping is set: the queued tasks of
 * outside threads are dropped and their groups report WEFT_ECANCELED. */
void weft__inject_cancel_all(weft_runtime *rt)
{
    weft__task t;
    while (weft__inject_pop(rt, &t))
        weft__complete_remote(t.g, WEFT_ECANCELED);
}

