/* weft_dist_parallel_map: chunks of one schedule, claimed across the ranks
 * with a fetch-and-add on a counter on rank 0, by runners that the rank's
 * runtime runs on its workers.
 *
 * The counter counts claimed chunks.  A runner whose fn fails adds STOP to
 * it, so that every later claim, on any rank, finds no chunk left; the
 * runner whose addition found the counter still below STOP holds the job's
 * first error.  The map ends with an agreement on that runner's rank, which
 * also guarantees that every rank has stopped claiming before rank 0 resets
 * the counter for the next map. */
#include <stdio.h>

#include "dist/internal.h"

/* Far above any schedule (a map takes about runners * log2(n) chunks),
 * yet each rank adds it at most once per map, so that even 2^23 failing
 * ranks cannot wrap the counter back below it. */
#define STOP (UINT64_C(1) << 40)

typedef struct dmap {
    weft_dist *d;
    weft_index_fn fn;
    void *ctx;
    weft__dist_sched sched;
    int failed;                /* a runner of this rank failed (atomic) */
    /* Set by the one runner (of all ranks) that stopped the counter first. */
    bool first;
    int first_code;
    uint64_t first_index;
} dmap;

/* Adds add to the counter; returns its value before. */
static uint64_t counter_add(weft_dist *d, uint64_t add)
{
    uint64_t old = 0;
    MPI_Fetch_and_op(&add, &old, MPI_UINT64_T, 0, WEFT__DIST_COUNTER_DISP, MPI_SUM, d->win);
    MPI_Win_flush(0, d->win);
    return old;
}

static void fail(dmap *m, int rc, uint64_t i)
{
    int none = 0;
    if (!__atomic_compare_exchange_n(&m->failed, &none, 1, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return;   /* this rank already stopped the counter */
    if (counter_add(m->d, STOP) < STOP) {
        m->first = true;
        m->first_code = rc;
        m->first_index = i;
    }
}

/* A runner: one fn call at a time, chunk after chunk, until the counter
 * runs past the schedule or a failure stops it. */
static int runner(size_t r, void *arg)
{
    (void)r;
    dmap *m = arg;
    weft_dist *d = m->d;
    weft__dist_cursor cur;
    weft__dist_cursor_init(&cur, &m->sched);
    while (!__atomic_load_n(&m->failed, __ATOMIC_RELAXED)) {
        uint64_t t0 = weft__dist_now_ns();
        uint64_t j = counter_add(d, 1);
        uint64_t t1 = weft__dist_now_ns();
        __atomic_fetch_add(&d->claims, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&d->claim_ns, t1 - t0, __ATOMIC_RELAXED);
        if (j >= m->sched.total)
            return 0;
        __atomic_fetch_add(&d->chunks, 1, __ATOMIC_RELAXED);
        uint64_t begin, end;
        weft__dist_sched_chunk(&m->sched, &cur, j, &begin, &end);
        for (uint64_t i = begin; i < end; i++) {
            if (i > begin && __atomic_load_n(&m->failed, __ATOMIC_RELAXED))
                break;
            int rc = m->fn((size_t)i, m->ctx);
            if (rc) {
                fail(m, rc, i);
                break;
            }
        }
        weft__dist_span(d, "chunk", t1);
    }
    return 0;
}

/* Sets the counter to value (rank 0 only), with the same atomics as the
 * claims, so that no claim can see a torn or stale reset. */
static void counter_reset(weft_dist *d)
{
    uint64_t zero = 0, old;
    MPI_Fetch_and_op(&zero, &old, MPI_UINT64_T, 0, WEFT__DIST_COUNTER_DISP, MPI_REPLACE, d->win);
    MPI_Win_flush(0, d->win);
}

/* What every rank must agree on before any claim: the arguments, and that
 * n is the same everywhere.  Sums the runners of all ranks. */
static int start(dmap *m, size_t n, uint64_t runners, uint64_t *all_runners)
{
    weft_dist *d = m->d;
    int rc = 0;
    if (!m->fn)
        rc = weft_errorf(WEFT_EINVAL, "weft_dist_parallel_map: fn is NULL");
    /* Rank 0 resets the counter before the gather, which no rank leaves
     * before rank 0 entered it. */
    if (d->rank == 0)
        counter_reset(d);
    int64_t mine[3] = { rc, (int64_t)n, (int64_t)runners }, *all = d->map_gather;
    MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, d->comm);
    int failed = -1;
    int64_t lo = all[1], hi = all[1];
    uint64_t sum = 0;
    for (int k = 0; k < d->size; k++) {
        if (all[3 * k] && failed < 0)
            failed = k;
        lo = all[3 * k + 1] < lo ? all[3 * k + 1] : lo;
        hi = all[3 * k + 1] > hi ? all[3 * k + 1] : hi;
        sum += (uint64_t)all[3 * k + 2];
    }
    if (failed >= 0)
        return weft__dist_report(d, "weft_dist_parallel_map", failed, rc);
    if (lo != hi)
        return weft_errorf(WEFT_EINVAL, "weft_dist_parallel_map: n differs across the ranks "
                           "(from %lld to %lld)", (long long)lo, (long long)hi);
    *all_runners = sum;
    return 0;
}

/* The job's first error on every rank, named by its rank and index. */
static int finish(dmap *m)
{
    weft_dist *d = m->d;
    struct { int missing, rank; } mine = { !m->first, d->rank }, first;
    MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, d->comm);
    if (first.missing)
        return 0;
    struct { int code; uint64_t index; } what = { m->first_code, m->first_index };
    MPI_Bcast(&what, (int)sizeof what, MPI_BYTE, first.rank, d->comm);
    return weft_errorf(what.code, "weft_dist_parallel_map: fn(%llu) returned %s on rank %d of %d",
                       (unsigned long long)what.index, weft_err_name(what.code), first.rank,
                       d->size);
}

int weft_dist_parallel_map(weft_dist *d, size_t n, unsigned parallel_iterations,
                           weft_index_fn fn, void *ctx)
{
    if (!d)
        return weft_errorf(WEFT_EINVAL, "weft_dist_parallel_map: d is NULL");
    dmap m = { .d = d, .fn = fn, .ctx = ctx };
    /* A runner makes one call at a time: a rank's bound is its runners. */
    unsigned workers = weft_runtime_workers(d->rt);
    unsigned mine = parallel_iterations && parallel_iterations < workers ? parallel_iterations
                                                                         : workers;
    uint64_t runners = 0;
    int rc = start(&m, n, mine, &runners);
    if (rc)
        return rc;
    __atomic_fetch_add(&d->maps, 1, __ATOMIC_RELAXED);
    weft__dist_sched_init(&m.sched, n, runners);
    if (m.sched.total) {
        /* The runners never fail (fn's failures travel through the
         * counter): the local map fails only for the runtime's reasons. */
        rc = weft_parallel_map(d->rt, mine, mine, runner, &m);
        if (rc)
            fail(&m, rc, 0);
    }
    return finish(&m);
}
