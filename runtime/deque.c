/* The task stack's deque: set-up, sharing, the owner's pop of a shared
 * task, the reset after a stolen child, and stealing.  The owner's fast
 * paths are inline in include/weft/task.h (typed tasks) and
 * runtime/forkjoin.c (weft_spawn); runtime/internal.h describes the
 * protocol. */
#include <sys/mman.h>

#include "runtime/internal.h"

int weft__deque_init(weft__deque *d, size_t nslots)
{
    memset(d, 0, sizeof *d);
    /* A sentinel slot below the base (never empty), the slots, and as
     * many overflow cells.  MAP_NORESERVE: untouched pages cost nothing. */
    if (nslots == 0 || nslots > UINT32_MAX / 2 ||
        nslots > (SIZE_MAX / sizeof(weft_task_slot) - 1) / 2)
        return WEFT_ENOMEM;
    size_t size = (1 + 2 * nslots) * sizeof(weft_task_slot);
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return WEFT_ENOMEM;
    d->map = map;
    d->map_size = size;
    d->base = (weft_task_slot *)map + 1;
    d->base[-1].run_ = weft__generic_slot;   /* the sentinel: never empty */
    d->tw.generic_ = weft__generic_slot;
    d->tw.idle_ = &weft__nobody_idle;
    d->nslots = nslots;
    d->cells = d->base + nslots;
    d->tw.head_ = d->base;
    d->osplit = d->base;
    d->tw.split_ = d->base;
    d->tw.end_ = d->base + nslots;
    __atomic_store_n(&d->tw.limit_, d->tw.end_, __ATOMIC_RELAXED);
    __atomic_store_n(&d->split, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&d->top, 0, __ATOMIC_RELAXED);
    return 0;
}

const int32_t weft__nobody_idle = 0;

void weft__generic_slot(weft_task_worker *w, weft_task_slot *head, weft_task_slot *self)
{
    (void)w, (void)head, (void)self;
    weft__task_misuse("a weft_spawn child's slot was run as a typed task");
}

void weft__deque_fini(weft__deque *d)
{
    if (d->map)
        munmap(d->map, d->map_size);
    d->map = NULL;
}

weft_task_slot *weft__deque_find_head_owner(weft__deque *d)
{
    /* The used slots (with a run_) are a prefix: gallop from the cached head towards
     * the boundary, then bisect. */
    weft_task_slot *lo, *hi, *h = d->tw.head_;
    int64_t step = 1;
    if (h->run_ != NULL) {
        /* The head is above h: lo is used, find an empty hi. */
        lo = h;
        for (;;) {
            hi = d->tw.end_ - lo > step ? lo + step : d->tw.end_;
            if (hi == d->tw.end_ || hi->run_ == NULL)
                break;
            lo = hi;
            step *= 2;
        }
    } else {
        /* The head is at or below h: hi is empty, find a used lo. */
        hi = h;
        for (;;) {
            lo = hi - d->base > step ? hi - step : d->base - 1;
            if (lo->run_ != NULL)
                break;
            hi = lo;
            step *= 2;
        }
    }
    /* lo is used, hi is empty (or the end): the head is in (lo, hi]. */
    while (hi - lo > 1) {
        weft_task_slot *mid = lo + (hi - lo) / 2;
        if (mid->run_ != NULL)
            lo = mid;
        else
            hi = mid;
    }
    d->tw.head_ = hi;
    return hi;
}

int64_t weft__deque_share_owner(weft__deque *d, weft_task_slot *head, int64_t n)
{
    int64_t priv = head - d->osplit;
    if (n > priv)
        n = priv;
    /* Cleared before the new split is visible: a thief that then finds
     * the shared part empty again asks anew. */
    __atomic_store_n(&d->tw.limit_, d->tw.end_, __ATOMIC_RELAXED);
    if (n <= 0)
        return 0;
    weft__deque_set_osplit_owner(d, d->osplit + n);
    /* Release: the slots are visible with the split, as with bottom in
     * Chase-Lev's push. */
    __atomic_store_n(&d->split, weft__deque_pos(d, d->osplit), __ATOMIC_RELEASE);
    return n;
}

void weft__deque_share_after_push_owner(weft__deque *d, weft_task_slot *head)
{
    weft__deque_share_owner(d, head, (head - d->osplit + 1) / 2);
}

/* Lowers split to s and reads top after a full fence (Chase-Lev's pop with
 * split for bottom).  Returns top.  Owner thread. */
static uint64_t lower_split_owner(weft__deque *d, int64_t s)
{
#ifdef WEFT__TSAN
    /* ThreadSanitizer does not model fences, so under it the same order
     * comes from seq_cst operations: a TSan build checks this variant,
     * and the plain build's stress tests (tests/runtime/test_deque.c) run
     * the fenced one. */
    (void)__atomic_exchange_n(&d->split, s, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
#else
    __atomic_store_n(&d->split, s, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&d->top, __ATOMIC_RELAXED);
#endif
}

/* Takes the newer half of the shared part [t_seen, s) back into the
 * private part with one fence, so that popping a burst of shared tasks
 * does not pay a fence (and a contended read of top) per task.  A thief
 * that read the old split can only claim index top: if top is below the
 * new split the owner owns [new split, s) alone; otherwise split goes back
 * up and nothing moved.  Returns whether tasks were taken back. */
static bool take_back_half_owner(weft__deque *d, int64_t s, int64_t t_seen)
{
    int64_t k = (s - t_seen) / 2;
    if (k < 1)
        return false;
    int64_t t = WEFT__TOP_POS(lower_split_owner(d, s - k));
    if (t >= s - k) {
        /* Release, as the share that first published [s - k, s) was. */
        __atomic_store_n(&d->split, s, __ATOMIC_RELEASE);
        return false;
    }
    weft__deque_set_osplit_owner(d, d->base + (s - k));
    return true;
}

int weft__deque_pop_shared_owner(weft__deque *d, weft_task_slot *p)
{
    /* p is the newest slot and not private, so the private part is empty:
     * osplit == p + 1. */
    int64_t s = weft__deque_pos(d, p) + 1;
    /* top only grows between the owner's resets: a stale value above p is
     * exact enough to say "stolen" without the fence. */
    int64_t t_seen = WEFT__TOP_POS(__atomic_load_n(&d->top, __ATOMIC_RELAXED));
    if (t_seen >= s)
        return WEFT__POP_STOLEN;
    if (take_back_half_owner(d, s, t_seen))
        return WEFT__POP_HERE;
    uint64_t top = lower_split_owner(d, s - 1);
    int64_t t = WEFT__TOP_POS(top);
    if (t < s - 1) {
        weft__deque_set_osplit_owner(d, p);
        return WEFT__POP_HERE;
    }
    if (t > s - 1)
        return WEFT__POP_STOLEN;   /* split stays at p: thieves find nothing */
    /* The last shared task: race the thieves for it.  The owner's CAS keeps
     * top at p and bumps the tag, so that top == split == p afterwards. */
    if (__atomic_compare_exchange_n(&d->top, &top, WEFT__TOP_NEXT_TAG(top, t), false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
        weft__deque_set_osplit_owner(d, p);
        return WEFT__POP_HERE;
    }
    return WEFT__POP_STOLEN;
}

void weft__deque_reset_owner(weft__deque *d, weft_task_slot *p)
{
    int64_t pos = weft__deque_pos(d, p);
    /* Everything from p up is consumed, so top >= split: thieves find
     * nothing.  split goes down first, then top (release): a thief that
     * reads the new top also reads the new split. */
    __atomic_store_n(&d->split, pos, __ATOMIC_RELAXED);
    uint64_t top = __atomic_load_n(&d->top, __ATOMIC_RELAXED);
    __atomic_store_n(&d->top, WEFT__TOP_NEXT_TAG(top, pos), __ATOMIC_RELEASE);
    weft__deque_set_osplit_owner(d, p);
}

int weft__deque_steal(weft__deque *d, weft_task_slot **out)
{
#ifdef WEFT__TSAN
    /* See lower_split_owner: seq_cst loads instead of the fence. */
    uint64_t top = __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_SEQ_CST);
#else
    uint64_t top = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_ACQUIRE);
#endif
    int64_t t = WEFT__TOP_POS(top);
    if (t >= s) {
        weft__deque_request(d);
        return WEFT__STEAL_EMPTY;
    }
    /* The slot is read only after the CAS: from then on it is the
     * thief's, and the owner leaves it alone until the thief marks it
     * done.  A CAS on a stale top fails: the tag changed, or the
     * position did. */
    if (!__atomic_compare_exchange_n(&d->top, &top, top + 1, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        return WEFT__STEAL_ABORT;
    /* It took the last shared task: ask for more now, so that the owner's
     * next spawn shares (a task it spawns before running a long leaf
     * would otherwise stay private until the leaf ends). */
    if (t + 1 >= s)
        weft__deque_request(d);
    *out = d->base + t;
    return WEFT__STEAL_OK;
}
