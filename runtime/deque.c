/* The split work-stealing deque: slow paths (growth, sharing, popping a
 * shared task, stealing) and set-up.  The owner's fast push and pop are
 * inline in runtime/internal.h, which describes the protocol. */
#include <string.h>

#include "runtime/internal.h"

size_t weft__deque_array_size(unsigned log2_cap)
{
    return sizeof(weft__deque_array) + ((size_t)1 << log2_cap) * sizeof(weft__task);
}

int weft__deque_init(weft__deque *d, ck_epoch_record_t *owner_rec,
                     void *embedded, unsigned log2_cap)
{
    weft__deque_array *a = embedded;
    if (!a) {
        a = weft__aligned_alloc(weft__deque_array_size(log2_cap));
        if (!a)
            return WEFT_ENOMEM;
    }
    memset(a, 0, sizeof *a);
    a->deque = d;
    a->mask = ((int64_t)1 << log2_cap) - 1;
    a->embedded = embedded != NULL;
    __atomic_store_n(&d->top, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&d->split, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&d->hungry, 0, __ATOMIC_RELAXED);
    d->bottom = 0;
    d->osplit = 0;
    __atomic_store_n(&d->array, a, __ATOMIC_RELEASE);
    d->owner_rec = owner_rec;
    d->wake_ev = NULL;
    d->solo = false;
#ifdef WEFT__TSAN
    __atomic_store_n(&d->tsan_sync, 0, __ATOMIC_RELAXED);
#endif
    return 0;
}

void weft__deque_fini(weft__deque *d)
{
    weft__deque_array *a = d->array;
    if (a && !a->embedded)
        weft__free(a);
    d->array = NULL;
}

static void array_free_cb(ck_epoch_entry_t *e)
{
    weft__deque_array *a = (weft__deque_array *)((char *)e - offsetof(weft__deque_array, entry));
#ifdef WEFT__TSAN
    /* Pairs with the thieves' release increment inside their sections. */
    (void)__atomic_load_n(&a->deque->tsan_sync, __ATOMIC_ACQUIRE);
#endif
    weft__free(a);
}

weft__deque_array *weft__deque_grow_owner(weft__deque *d, weft__deque_array *a,
                                          int64_t t, int64_t b)
{
    int64_t cap = (a->mask + 1) * 2;
    if (cap <= 0 || (uint64_t)cap > SIZE_MAX / 2 / sizeof(weft__task))
        return NULL;
    weft__deque_array *n = weft__aligned_alloc(sizeof *n + (size_t)cap * sizeof(weft__task));
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->deque = d;
    n->mask = cap - 1;
    n->embedded = false;
    for (int64_t i = t; i < b; i++) {
        weft__task *src = &a->slots[i & a->mask];
        weft__task *dst = &n->slots[i & n->mask];
        __atomic_store_n(&dst->fn, __atomic_load_n(&src->fn, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        __atomic_store_n(&dst->arg, __atomic_load_n(&src->arg, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        __atomic_store_n(&dst->g, __atomic_load_n(&src->g, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    }
    /* Release: a thief that sees the new array sees the copied slots.  A
     * thief that sees a split moved after this point (acquire) also sees
     * the new array, so it never reads a slot that exists only there from
     * the old one (the known fix for pushing after a resize). */
    __atomic_store_n(&d->array, n, __ATOMIC_RELEASE);
    if (!a->embedded) {
        if (d->owner_rec) {
            ck_epoch_call(d->owner_rec, &a->entry, array_free_cb);
            ck_epoch_poll(d->owner_rec);
        }
        /* Without an epoch record (never in the runtime) the old array
         * is leaked rather than freed under a thief. */
    }
    return n;
}

int64_t weft__deque_share_owner(weft__deque *d, int64_t n)
{
    int64_t priv = d->bottom - d->osplit;
    if (n > priv)
        n = priv;
    /* Cleared before the new split is visible: a thief that then finds
     * the shared part empty again asks anew. */
    __atomic_store_n(&d->hungry, 0, __ATOMIC_RELAXED);
    if (n <= 0)
        return 0;
    d->osplit += n;
    /* Release: the slots (and a grown array) are visible with the split,
     * as with bottom in Chase-Lev's push. */
    __atomic_store_n(&d->split, d->osplit, __ATOMIC_RELEASE);
    return n;
}

void weft__deque_share_after_push_owner(weft__deque *d, int64_t t)
{
    if (t >= d->osplit)
        weft__deque_share_owner(d, 1);
    else
        weft__deque_share_owner(d, (d->bottom - d->osplit + 1) / 2);
}

/* Lowers split to s - k and reads top after a full fence (Chase-Lev's
 * pop with split for bottom).  Returns top.  Owner thread. */
static int64_t lower_split_owner(weft__deque *d, int64_t s)
{
#ifdef WEFT__TSAN
    /* ThreadSanitizer rejects fences: the same order from seq_cst ops. */
    (void)__atomic_exchange_n(&d->split, s, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
#else
    __atomic_store_n(&d->split, s, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&d->top, __ATOMIC_RELAXED);
#endif
}

/* Takes the newer half of the shared part back into the private part with
 * one fence, so that popping a burst of shared tasks does not pay a fence
 * (and a contended read of top) per task.  A thief that read the old split
 * can only claim index top: if top is below the new split the owner owns
 * [new split, old split) alone; otherwise split goes back up and nothing
 * moved.  Returns whether tasks were taken back.  Owner thread. */
static bool take_back_half_owner(weft__deque *d, int64_t s, int64_t t_seen)
{
    int64_t k = (s - t_seen) / 2;
    if (k < 1)
        return false;
    int64_t t = lower_split_owner(d, s - k);
    if (t >= s - k) {
        /* Release, as the share that first published [s - k, s) was: a
         * thief that reads this store must see those slots' writes (C11
         * counts a same-thread store in the release sequence; newer models
         * do not). */
        __atomic_store_n(&d->split, s, __ATOMIC_RELEASE);
        return false;
    }
    d->osplit = s - k;
    return true;
}

bool weft__deque_pop_shared_owner(weft__deque *d, weft__task *out)
{
    int64_t s = d->osplit;
    /* top only grows: a stale value at or above split is exact enough to
     * say "empty" without the fence. */
    int64_t t_seen = __atomic_load_n(&d->top, __ATOMIC_RELAXED);
    if (t_seen >= s)
        return false;
    /* The taken-back tasks are private: the ordinary pop returns one. */
    if (take_back_half_owner(d, s, t_seen))
        return weft__deque_pop_owner(d, out);
    s--;
    int64_t t = lower_split_owner(d, s);
    if (t > s) {
        /* Thieves took everything: top == split == bottom again. */
        __atomic_store_n(&d->split, s + 1, __ATOMIC_RELAXED);
        return false;
    }
    weft__deque_array *a = d->array;
    weft__task *slot = &a->slots[s & a->mask];
    out->fn = __atomic_load_n(&slot->fn, __ATOMIC_RELAXED);
    out->arg = __atomic_load_n(&slot->arg, __ATOMIC_RELAXED);
    out->g = __atomic_load_n(&slot->g, __ATOMIC_RELAXED);
    if (t == s) {
        /* The last shared task: race the thieves for it.  Either way index
         * s is consumed and top == split == bottom == s + 1. */
        bool won = __atomic_compare_exchange_n(&d->top, &t, t + 1, false,
                                               __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
        __atomic_store_n(&d->split, s + 1, __ATOMIC_RELAXED);
        return won;
    }
    /* Index s is private now (thieves see split == s). */
    d->osplit = s;
    d->bottom = s;
    return true;
}

int weft__deque_steal(weft__deque *d, weft__task *out, ck_epoch_record_t *rec)
{
#ifdef WEFT__TSAN
    /* ThreadSanitizer rejects fences: the same order from seq_cst loads. */
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_SEQ_CST);
#else
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_ACQUIRE);
#endif
    if (t >= s) {
        weft__deque_request(d);
        return WEFT__STEAL_EMPTY;
    }
    ck_epoch_begin(rec, NULL);
    weft__deque_array *a = __atomic_load_n(&d->array, __ATOMIC_ACQUIRE);
    weft__task *slot = &a->slots[t & a->mask];
    weft__task x;
    x.fn = __atomic_load_n(&slot->fn, __ATOMIC_RELAXED);
    x.arg = __atomic_load_n(&slot->arg, __ATOMIC_RELAXED);
    x.g = __atomic_load_n(&slot->g, __ATOMIC_RELAXED);
#ifdef WEFT__TSAN
    __atomic_fetch_add(&d->tsan_sync, 1, __ATOMIC_RELEASE);
#endif
    ck_epoch_end(rec, NULL);
    if (!__atomic_compare_exchange_n(&d->top, &t, t + 1, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        return WEFT__STEAL_ABORT;
    *out = x;
    return WEFT__STEAL_OK;
}
