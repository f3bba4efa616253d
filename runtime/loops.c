/* Parallel loops on top of fork-join: weft_parallel_for (lazy binary
 * splitting) and weft_parallel_map (bounded runners). */
#include "runtime/sched.h"

/* The first failure wins; later iterations see it and are skipped. */
static void set_status(int *status, int rc)
{
    int zero = 0;
    __atomic_compare_exchange_n(status, &zero, rc, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static bool stopping(weft_runtime *rt)
{
    return __atomic_load_n(&rt->stopping, __ATOMIC_RELAXED);
}

static bool should_stop(weft_runtime *rt, int *status)
{
    if (WEFT__UNLIKELY(stopping(rt))) {
        set_status(status, WEFT_ECANCELED);
        return true;
    }
    return __atomic_load_n(status, __ATOMIC_RELAXED) != 0;
}

/* Claims the next block of [0, n) from the shared counter *next: the
 * guided share of what is left (left / divisor, rounded down to a multiple
 * of unit), at least `least` and at most `most` iterations.  least and the
 * claims before it are multiples of unit, so blocks start on multiples of
 * unit.  The claim is a compare-and-swap that never moves *next past n, so
 * no n, up to SIZE_MAX, can overflow it.  False when nothing is left. */
static bool claim_block(size_t *next, size_t n, size_t divisor, size_t unit, size_t least,
                        size_t most, size_t *b, size_t *e)
{
    size_t seen = __atomic_load_n(next, __ATOMIC_RELAXED);
    size_t take;
    do {
        if (seen >= n)
            return false;
        size_t left = n - seen;
        take = left / divisor / unit * unit;
        if (take < least)
            take = least;
        if (take > most)
            take = most;
        if (take > left)
            take = left;
    } while (!__atomic_compare_exchange_n(next, &seen, seen + take, true, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    *b = seen;
    *e = seen + take;
    return true;
}

/* ------------------------------------------------------------ parallel_for */

typedef struct pfor {
    weft_runtime *rt;
    weft_range_fn fn;
    void *ctx;
    size_t grain;   /* split points are multiples of grain from 0 */
    size_t chunk;   /* iterations per callback between split checks */
    /* The smallest callback of a range's tail: chunk for a fixed grain;
     * for grain 0 a sixteenth of it, so that a worker left idle near the
     * end waits at most a fraction of the rest for its share.  (Splitting
     * ranges down to it as well cost a tenth more on a 1000-iteration
     * loop, for no gain on the unbalanced ones.) */
    size_t least;
    int status;     /* atomic */
} pfor;

typedef struct prange {
    pfor *pf;
    size_t b, e;
} prange;

static void pfor_run(pfor *pf, size_t b, size_t e);

static void pfor_task(void *arg)
{
    prange *r = arg;
    pfor_run(r->pf, r->b, r->e);
}

/* Runs [b, e) chunk by chunk.  Whenever this thread's deque is empty (a
 * thief would find nothing), the rest is halved and the upper half pushed:
 * splitting happens only when someone may take it.  The halves live in
 * this frame, which waits for them before returning. */
static void pfor_run(pfor *pf, size_t b, size_t e)
{
    weft_runtime *rt = pf->rt;
    weft__worker *w = weft__current_worker(rt);
    prange halves[64];
    unsigned nh = 0;
    weft_group g;
    weft_group_init(&g, rt);
    while (b < e) {
        if (should_stop(rt, &pf->status))
            break;
        /* A half pushed while the other workers were busy is private: a
         * thief that went idle since then has asked for it, and only this
         * loop can hand it over before the range ends. */
        if (w && WEFT__UNLIKELY(weft__deque_hungry(&w->dq)))
            weft__share_asked_owner(w);
        size_t left = e - b;
        if (left > pf->chunk && nh < 64 && (rt->nworkers > 1 || !w) && weft__hungry(rt, w)) {
            size_t units = left / pf->grain + (left % pf->grain != 0);
            size_t mid = b + (units / 2) * pf->grain;
            if (mid > b && mid < e) {
                halves[nh] = (prange){ pf, mid, e };
                weft_spawn(&g, pfor_task, &halves[nh]);
                nh++;
                e = mid;
                continue;
            }
        }
        /* Callbacks of a quarter of what is left, down to least: on a loop
         * whose cost rises with the index the last chunks of a range were
         * its costliest, and a thief that went idle waited for the owner
         * to finish one before it could take half of the rest. */
        size_t c = left / 4 > pf->least ? left / 4 : pf->least;
        if (c > pf->chunk)
            c = pf->chunk;
        if (c > left)
            c = left;
        int rc = pf->fn(b, b + c, pf->ctx);
        if (rc)
            set_status(&pf->status, rc);
        b += c;
    }
    int rc = weft_group_wait(&g);
    if (rc)
        set_status(&pf->status, rc);
}

/* An outside thread's loop where it competes with the workers for CPUs:
 * a runtime of one worker, or one with a worker per CPU.  Outside threads
 * do not steal from deques, so after binary splitting handed the workers
 * halves the caller could never take work back: on a loop whose cost rises
 * with the index the caller idled while a worker ran the expensive half,
 * and with a worker per CPU the caller is a thread more than there are
 * CPUs, so that where the kernel put the threads decided the time (with
 * both workers on one CPU, that CPU ran three quarters of the loop while
 * the caller's ran its quarter and idled).  Here the caller and a runner
 * per worker claim blocks from a shared counter instead, guided: a share
 * of what is left at a time (left / divisor), at least `least` iterations
 * (a multiple of grain), so that whichever threads get a CPU do the work. */
typedef struct pfor_claims {
    pfor *pf;
    size_t n;
    size_t least;
    size_t divisor;
    size_t next;   /* atomic: the first iteration not yet claimed */
} pfor_claims;

static void pfor_claim_runner(void *arg)
{
    pfor_claims *cl = arg;
    pfor *pf = cl->pf;
    for (;;) {
        if (should_stop(pf->rt, &pf->status))
            return;
        size_t b, e;
        if (!claim_block(&cl->next, cl->n, cl->divisor, pf->grain, cl->least, SIZE_MAX, &b, &e))
            return;
        size_t start = b;
        while (b < e) {
            if (b > start && should_stop(pf->rt, &pf->status))
                return;
            size_t c = e - b < pf->chunk ? e - b : pf->chunk;
            int rc = pf->fn(b, b + c, pf->ctx);
            if (rc) {
                set_status(&pf->status, rc);
                return;
            }
            b += c;
        }
    }
}

/* Once the caller's claims find nothing left, a runner that no worker has
 * started would claim nothing either: the caller takes it back from the
 * injection queue and ends it itself.  Otherwise the wait would last until
 * a worker woke up (a futex round trip when it slept) or got a CPU (on a
 * busy machine, a time slice of another process) only to end the runner;
 * runners already started are waited for as before. */
static void pfor_claim_take_back(weft_runtime *rt, weft_group *g)
{
    weft__task t;
    while (weft__inject_take_back(rt, g, &t))
        weft__run_task(NULL, &t, WEFT__TASK_REMOTE, false);
}

static void pfor_claim(pfor *pf, size_t n)
{
    /* Blocks of at least 1/256 of the loop: the last one costs at most
     * that much imbalance, and claims stay few. */
    size_t least = pf->grain > 1 ? pf->grain : n / 256;
    if (least == 0)
        least = 1;
    /* A runner per worker, but no more than there are blocks beyond the
     * caller's first: a loop of two chunks wakes one worker, not all. */
    size_t blocks = n / least + (n % least != 0);
    size_t runners = pf->rt->nworkers;
    if (runners > blocks - 1)
        runners = blocks - 1;
    /* Twice as many shares as claimers: the first claims leave enough for
     * the late ones, and the last claims are small. */
    pfor_claims cl = { pf, n, least, 2 * (runners + 1), 0 };
    weft_group g;
    weft_group_init(&g, pf->rt);
    for (size_t r = 0; r < runners; r++)
        weft_spawn(&g, pfor_claim_runner, &cl);
    pfor_claim_runner(&cl);
    pfor_claim_take_back(pf->rt, &g);
    int rc = weft_group_wait(&g);
    if (rc)
        set_status(&pf->status, rc);
}

/* Inline mode (see runtime/iface.h): this thread alone, grain by grain. */
static void pfor_inline(pfor *pf, size_t n, size_t grain)
{
    size_t step = grain ? grain : n;
    for (size_t b = 0, e; b < n && !should_stop(pf->rt, &pf->status); b = e) {
        e = n - b <= step ? n : b + step;   /* never past n: no wrap-around */
        int rc = pf->fn(b, e, pf->ctx);
        if (rc)
            set_status(&pf->status, rc);
    }
}

int weft_parallel_for(weft_runtime *rt, size_t n, size_t grain, weft_range_fn fn, void *ctx)
{
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "weft_parallel_for: rt is NULL");
    if (!fn)
        return weft__errorf(WEFT_EINVAL, "weft_parallel_for: fn is NULL");
    if (n == 0)
        return 0;
    pfor pf = { .rt = rt, .fn = fn, .ctx = ctx, .status = 0 };
    if (grain) {
        pf.grain = grain;
        pf.chunk = grain;
        pf.least = grain;
    } else {
        /* Adaptive: about 16 chunks per worker between split checks, so
         * that uneven iterations can still be rebalanced. */
        size_t per = n / ((size_t)rt->nworkers * 16);
        pf.grain = 1;
        pf.chunk = per ? per : 1;
        pf.least = pf.chunk / 16 ? pf.chunk / 16 : 1;
    }
    bool outside = weft__current_worker(rt) == NULL;
    if (outside)
        weft__outside_enter(rt);
    if (WEFT__UNLIKELY(weft__inline_now()))
        pfor_inline(&pf, n, grain);
    else if (outside && (rt->nworkers == 1 || !rt->spare_core) && n > pf.chunk &&
             pf.grain <= n)
        pfor_claim(&pf, n);
    else
        pfor_run(&pf, 0, n);
    if (outside)
        weft__outside_leave(rt);
    int st = pf.status;
    if (st == WEFT_ECANCELED)
        return weft__errorf(st, "weft_parallel_for: the runtime is being destroyed");
    return st;
}

/* ------------------------------------------------------------ parallel_map */

typedef struct pmap {
    weft_runtime *rt;
    weft_index_fn fn;
    void *ctx;
    size_t n;
    size_t next;      /* atomic: the next index to claim */
    size_t divisor;   /* claim at most remaining / divisor at a time */
    bool adaptive;    /* bounded: grow claims only while calls are short */
    int status;       /* atomic */
} pmap;

/* A bounded map's runner claims one index at a time while its calls take
 * long (host calls that sleep balance best that way), and doubles its
 * claim while a claim's calls end within this long: short calls then stop
 * moving the claim counter's line between CPUs on every call. */
#define PMAP_SHORT_CLAIM_NS 20000u

/* A runner claims indices until none are left: with k runners at most k
 * calls are in flight, whichever workers they land on (a runner makes one
 * call at a time, however many indices it claimed). */
static void pmap_runner(void *arg)
{
    pmap *pm = arg;
    size_t adaptive_take = 1;
    for (;;) {
        if (should_stop(pm->rt, &pm->status))
            return;
        size_t i, end;
        if (!claim_block(&pm->next, pm->n, pm->divisor, 1, 1,
                         pm->adaptive ? adaptive_take : SIZE_MAX, &i, &end))
            return;
        size_t start = i;
        uint64_t t0 = pm->adaptive ? weft__now_ns() : 0;
        for (; i < end; i++) {
            if (i > start && should_stop(pm->rt, &pm->status))
                return;
            int rc = pm->fn(i, pm->ctx);
            if (rc) {
                set_status(&pm->status, rc);
                return;
            }
        }
        if (pm->adaptive)
            adaptive_take = weft__now_ns() - t0 < PMAP_SHORT_CLAIM_NS ? (end - start) * 2 : 1;
    }
}

int weft_parallel_map(weft_runtime *rt, size_t n, unsigned parallel_iterations,
                      weft_index_fn fn, void *ctx)
{
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "weft_parallel_map: rt is NULL");
    if (!fn)
        return weft__errorf(WEFT_EINVAL, "weft_parallel_map: fn is NULL");
    if (n == 0)
        return 0;
    pmap pm = { .rt = rt, .fn = fn, .ctx = ctx, .n = n, .next = 0, .status = 0 };
    bool outside = weft__current_worker(rt) == NULL;
    /* A runner per worker, plus one for an outside caller, which joins in
     * (from a worker, an extra runner only added claims).  A bound above
     * that adds only runners with no thread to run them, yet each costs a
     * spawn: parallel_iterations = UINT_MAX spawned billions. */
    size_t k = (size_t)rt->nworkers + outside;
    if (parallel_iterations) {
        if (parallel_iterations < k)
            k = parallel_iterations;
        pm.adaptive = true;
    }
    if (k > n)
        k = n;
    pm.divisor = 2 * k;
    if (outside)
        weft__outside_enter(rt);
    if (WEFT__UNLIKELY(weft__inline_now())) {
        /* Inline mode: one call in flight, on this thread, which claims
         * every index at once. */
        pm.divisor = 1;
        pm.adaptive = false;
        pmap_runner(&pm);
        goto out;
    }
    weft_group g;
    weft_group_init(&g, rt);
    for (size_t r = 1; r < k; r++)
        weft_spawn(&g, pmap_runner, &pm);
    /* This thread now runs a runner for long: the others must be
     * stealable at once, not only when a thief asks. */
    weft__share_all(rt);
    /* The calling thread is one of the k runners. */
    pmap_runner(&pm);
    int rc = weft_group_wait(&g);
    if (rc)
        set_status(&pm.status, rc);
out:
    if (outside)
        weft__outside_leave(rt);
    int st = pm.status;
    if (st == WEFT_ECANCELED)
        return weft__errorf(st, "weft_parallel_map: the runtime is being destroyed");
    return st;
}
