/* weft_dist_parallel_map's cases (run by test_dist.c on every rank, in
 * this order): argument checks, each index run exactly once for balanced
 * and unbalanced maps, results equal to a serial loop's, a slow rank taking
 * less than a static split would give it, the per-rank
 * parallel_iterations bound, errors on one rank or at one index reported
 * alike on every rank, and maps in a row. */
#include <stdlib.h>

#include "dist_util.h"

/* ---- create, before and after MPI_Init ---- */

static void create_before_init(void)
{
    weft_dist *none = (weft_dist *)1;
    cr_assert_eq(weft_dist_create(rt, MPI_COMM_WORLD, &none), WEFT_EINVAL);
    cr_assert_null(none);
    expect_errmsg("MPI is not initialized");
    cr_assert_eq(weft_dist_create(rt, MPI_COMM_WORLD, NULL), WEFT_EINVAL);
    expect_errmsg("out is NULL");
    cr_assert_eq(weft_dist_rank(NULL), -1);
    cr_assert_eq(weft_dist_size(NULL), 0);
    weft_dist_destroy(NULL);
    weft_dist_destroy(&none);
}

static void create_checks(void)
{
    weft_dist *bad = NULL;
    cr_assert_eq(weft_dist_create(rt, MPI_COMM_NULL, &bad), WEFT_EINVAL);
    expect_errmsg("MPI_COMM_NULL");
    /* rt NULL on the last rank only: every rank fails, naming it. */
    weft_runtime *mine = world_rank == world_size - 1 ? NULL : rt;
    int rc = weft_dist_create(mine, MPI_COMM_WORLD, &bad);
    assert_same_everywhere(rc, "create with one rt NULL");
    cr_assert_eq(rc, WEFT_EINVAL);
    cr_assert_null(bad);
    char where[64];
    snprintf(where, sizeof where, "on rank %d of %d: rt is NULL", world_size - 1, world_size);
    expect_errmsg(where);
    cr_assert_eq(weft_dist_rank(d), world_rank);
    cr_assert_eq(weft_dist_size(d), world_size);
}

/* ---- each index once, results as a serial loop's ---- */

typedef struct marks {
    int *hits;  /* (atomic) */
    double *out;
    long ran;              /* atomic: calls on this rank */
    unsigned spin;         /* cost units per index (0: none) */
} marks;

/* A deterministic value whose cost rises with i when spin > 0. */
static double value(size_t i, unsigned spin)
{
    double x = (double)i;
    for (size_t k = 0; k < i * spin; k++)
        x = x * 0.999 + 1.0;
    return x;
}

static int mark(size_t i, void *ctx)
{
    marks *m = ctx;
    __atomic_fetch_add(&m->hits[i], 1, __ATOMIC_SEQ_CST);
    m->out[i] = value(i, m->spin);
    __atomic_fetch_add(&m->ran, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Maps n indices, then checks over all ranks: each index once, each value
 * the serial loop's.  Returns this rank's call count. */
static long map_and_check(size_t n, unsigned pi, unsigned spin)
{
    marks m = { calloc(n + 1, sizeof(int)), calloc(n + 1, sizeof(double)), 0, spin };
    cr_assert(m.hits && m.out);
    int rc = weft_dist_parallel_map(d, n, pi, mark, &m);
    assert_same_everywhere(rc, "map");
    cr_assert_eq(rc, 0, "weft_dist_parallel_map(n=%zu): %s", n, weft_errmsg());
    int *hits = malloc((n + 1) * sizeof(int));
    cr_assert_not_null(hits);
    for (size_t i = 0; i < n; i++)
        hits[i] = __atomic_load_n(&m.hits[i], __ATOMIC_SEQ_CST);
    MPI_Allreduce(MPI_IN_PLACE, hits, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, m.out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(hits[i], 1, "n=%zu: index %zu ran %d times", n, i, hits[i]);
        cr_assert_eq(m.out[i], value(i, spin), "n=%zu: index %zu", n, i);
    }
    cr_assert_eq(sum_over_ranks(m.ran), (long)n);
    free(hits);
    free(m.hits);
    free(m.out);
    return m.ran;
}

static void balanced_and_small(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 5, 1000, 20000 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        map_and_check(sizes[k], 0, 0);
    map_and_check(999, 3, 0);
}

static void unbalanced_matches_serial(void)
{
    /* Index i costs about i units: the last indices are the dearest. */
    map_and_check(300, 0, 40);
    map_and_check(301, 1, 40);
}

static void many_maps_in_a_row(void)
{
    for (int k = 0; k < 20; k++)
        map_and_check((size_t)(k % 7) * (size_t)world_size + 1, 0, 0);
}

/* ---- dynamic hand-out: a slow rank takes less than its static share ---- */

static int slow_on_rank0(size_t i, void *ctx)
{
    (void)i;
    if (world_rank == 0)
        sleep_us(5000);
    __atomic_fetch_add((long *)ctx, 1, __ATOMIC_RELAXED);
    return 0;
}

static void slow_rank_takes_less(void)
{
    long ran = 0;
    size_t n = 100 * (size_t)world_size;
    int rc = weft_dist_parallel_map(d, n, 0, slow_on_rank0, &ran);
    assert_same_everywhere(rc, "slow map");
    cr_assert_eq(rc, 0, "%s", weft_errmsg());
    cr_assert_eq(sum_over_ranks(ran), (long)n);
    long ran0 = ran;
    MPI_Bcast(&ran0, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    /* A static split gives rank 0 n / size = 100; the counter gives it
     * about half of that (its first chunks, 5 ms a call), the fast ranks
     * the rest meanwhile (they would have to stall for as long to fail). */
    if (world_size > 1)
        cr_assert_lt(ran0, 100, "rank 0, 5 ms a call, ran %ld of %zu", ran0, n);
}

/* ---- the per-rank bound ---- */

typedef struct flight {
    int now, peak;  /* (atomic) */
} flight;

static int in_flight(size_t i, void *ctx)
{
    (void)i;
    flight *f = ctx;
    int now = __atomic_fetch_add(&f->now, 1, __ATOMIC_SEQ_CST) + 1;
    for (int peak = __atomic_load_n(&f->peak, __ATOMIC_SEQ_CST); now > peak;)
        if (__atomic_compare_exchange_n(&f->peak, &peak, now, true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            break;
    sleep_us(200);
    __atomic_fetch_sub(&f->now, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static void bound_per_rank(void)
{
    unsigned workers = weft_runtime_workers(rt);
    static const unsigned bounds[] = { 1, 2, 0 };
    for (size_t k = 0; k < 3; k++) {
        flight f = { 0, 0 };
        int rc = weft_dist_parallel_map(d, 40 * (size_t)world_size, bounds[k], in_flight, &f);
        cr_assert_eq(rc, 0, "%s", weft_errmsg());
        unsigned bound = bounds[k] && bounds[k] < workers ? bounds[k] : workers;
        cr_assert_leq(__atomic_load_n(&f.peak, __ATOMIC_SEQ_CST), (int)bound,
                      "parallel_iterations %u, %u workers",
                      bounds[k], workers);
        cr_assert_geq(__atomic_load_n(&f.peak, __ATOMIC_SEQ_CST), 1);
    }
}

/* ---- errors ---- */

typedef struct failing {
    size_t at;             /* fails at this index (SIZE_MAX: never) */
    int code;
    int rank;              /* fails on this rank, any index (-1: none) */
    long ran;
} failing;

static int fail_some(size_t i, void *ctx)
{
    failing *f = ctx;
    __atomic_fetch_add(&f->ran, 1, __ATOMIC_RELAXED);
    if (i == f->at || world_rank == f->rank)
        return f->code;
    sleep_us(world_rank == f->rank || f->rank < 0 ? 20 : 2000);
    return 0;
}

static void error_at_one_index(void)
{
    /* Index 1 is the second call of whichever runner takes the first
     * chunk, so the failure comes early whatever the load. */
    size_t n = 400 * (size_t)world_size;
    failing f = { 1, WEFT_EHOST, -1, 0 };
    int rc = weft_dist_parallel_map(d, n, 0, fail_some, &f);
    assert_same_everywhere(rc, "map failing at index 1");
    cr_assert_eq(rc, WEFT_EHOST);
    expect_errmsg("weft_dist_parallel_map: fn(1) returned WEFT_EHOST on rank ");
    /* The others stopped taking chunks: far from every index ran. */
    long ran = sum_over_ranks(f.ran);
    cr_assert_lt(ran, (long)n, "%ld of %zu indices ran after a failure at 1", ran, n);
    /* And the next map works. */
    map_and_check(50, 0, 0);
}

static void error_on_one_rank(void)
{
    int last = world_size - 1;
    failing f = { SIZE_MAX, WEFT_ECANCELED, last, 0 };
    int rc = weft_dist_parallel_map(d, 40 * (size_t)world_size, 0, fail_some, &f);
    assert_same_everywhere(rc, "map failing on the last rank");
    /* The failing rank almost always takes a chunk (the others' calls take
     * 2 ms); when it took none, nothing failed. */
    long last_ran = f.ran;
    MPI_Bcast(&last_ran, 1, MPI_LONG, last, MPI_COMM_WORLD);
    if (last_ran == 0) {
        cr_assert_eq(rc, 0);
        return;
    }
    cr_assert_eq(rc, WEFT_ECANCELED, "%s", weft_errmsg());
    char where[64];
    snprintf(where, sizeof where, "returned WEFT_ECANCELED on rank %d of %d", last, world_size);
    expect_errmsg(where);
}

static void two_errors_one_code(void)
{
    /* Index 3 and the last rank fail with different codes: which comes
     * first is a race, but every rank reports the same one. */
    failing f = { 3, WEFT_EHOST, world_size - 1, 0 };
    f.code = world_rank == world_size - 1 ? WEFT_EBODY : WEFT_EHOST;
    int rc = weft_dist_parallel_map(d, 30 * (size_t)world_size, 0, fail_some, &f);
    assert_same_everywhere(rc, "two failures");
    cr_assert(rc == WEFT_EHOST || rc == WEFT_EBODY, "%s", weft_err_name(rc));
}

static void every_rank_fails(void)
{
    /* Each rank stops the counter once: the bias never wraps it, and the
     * next map starts from a clean counter. */
    failing f = { SIZE_MAX, WEFT_EHOST, world_rank, 0 };
    int rc = weft_dist_parallel_map(d, 50 * (size_t)world_size, 0, fail_some, &f);
    assert_same_everywhere(rc, "every rank failing");
    cr_assert_eq(rc, WEFT_EHOST);
    map_and_check(77, 0, 0);
}

static int never(size_t i, void *ctx)
{
    (void)i, (void)ctx;
    return 0;
}

static void bad_arguments_on_one_rank(void)
{
    int last = world_size - 1;
    char where[64];
    snprintf(where, sizeof where, "on rank %d of %d: fn is NULL", last, world_size);
    int rc = weft_dist_parallel_map(d, 10, 0, world_rank == last ? NULL : never, NULL);
    assert_same_everywhere(rc, "fn NULL on one rank");
    cr_assert_eq(rc, WEFT_EINVAL);
    expect_errmsg(where);

    rc = weft_dist_parallel_map(d, world_rank == last ? 11 : 10, 0, never, NULL);
    assert_same_everywhere(rc, "n differs");
    cr_assert_eq(rc, world_size > 1 ? WEFT_EINVAL : 0);
    if (world_size > 1)
        expect_errmsg("n differs across the ranks (from 10 to 11)");

    cr_assert_eq(weft_dist_parallel_map(NULL, 10, 0, never, NULL), WEFT_EINVAL);
    expect_errmsg("d is NULL");
}

static void stats(void)
{
    weft_dist_stats st;
    weft_dist_get_stats(d, &st);
    cr_assert_gt(st.maps, 20);
    cr_assert_geq(st.claims, st.chunks);
    cr_assert_gt(sum_over_ranks((long)st.chunks), 0);
    weft_dist_get_stats(NULL, &st);
    cr_assert_eq(st.maps, 0);
    weft_dist_get_stats(d, NULL);
}

void dist_map_cases_before_init(void)
{
    create_before_init();
}

void dist_map_cases(void)
{
    create_checks();
    balanced_and_small();
    unbalanced_matches_serial();
    many_maps_in_a_row();
    slow_rank_takes_less();
    bound_per_rank();
    error_at_one_index();
    error_on_one_rank();
    two_errors_one_code();
    every_rank_fails();
    bad_arguments_on_one_rank();
    stats();
}
