/* weft-dist's map across MPI ranks against one rank and OpenMP, and the
 * cost of its chunk counter.  Run on 2 ranks of this machine:
 *
 *     mpirun -np 2 --bind-to none build/bench/bench/bench_dist
 *
 * The map is bench_map's unbalanced one: n = 1e5 (or $BENCH_DIST_N)
 * iterations, iteration i costing (100 i / n) x 10 dependent multiply-adds,
 * so the last iterations are the dearest.  Implementations, 2 threads in
 * all for each but serial:
 *   dist 2 ranks x 1 worker   weft_dist_parallel_map over both ranks;
 *   dist 1 rank x 2 workers   weft_dist_parallel_map on rank 0 alone;
 *   weft map 1 rank x 2       weft_parallel_map on rank 0, called from a
 *                             task on a worker (so exactly 2 threads);
 *   openmp dynamic,64/guided  2 threads on rank 0;
 *   static 2 ranks x 1        each rank its contiguous half, serially;
 *   serial                    rank 0, one thread.
 * While rank 0 runs alone, rank 1 waits without spinning.  Each round
 * runs every implementation once, in turn; the table shows each one's
 * median time and the median over the rounds of its time divided by the
 * same round's dist 2 x 1 time.  Every implementation's results are
 * checked against serial's.
 *
 * The counter: MPI_Fetch_and_op(MPI_SUM) + MPI_Win_flush on a uint64 in a
 * window on rank 0, the claim of weft-dist, timed from rank 0 (the owner)
 * and from rank 1, alone and both at once; and the time per claim that
 * weft-dist itself measured during the dist 2 x 1 maps. */
#include "bench.h"
#include "contenders.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft/dist.h>

enum { DIST_2X1, DIST_1X2, WEFT_1X2, OMP_DYNAMIC, OMP_GUIDED, STATIC_2X1, SERIAL, N_IMPL };

static const char *const impl_name[N_IMPL] = {
    "dist 2 ranks x 1 worker", "dist 1 rank x 2 workers", "weft map 1 rank x 2 workers",
    "openmp dynamic,64, 2 threads", "openmp guided, 2 threads", "static split 2 ranks x 1",
    "serial, 1 thread",
};
/* Whether both ranks compute (else rank 0 alone). */
static const int both_ranks[N_IMPL] = { 1, 0, 0, 0, 0, 1, 0 };

typedef struct job {
    uint64_t *out;
    const uint8_t *cost;
    size_t n;
} job;

static int rank, size;
static job J;
static weft_runtime *rt1, *rt2;      /* 1 worker (every rank), 2 workers (rank 0) */
static weft_dist *d_world, *d_self;  /* over both ranks; over rank 0 alone */
static int failures;

static int item(size_t i, void *ctx)
{
    job *j = ctx;
    j->out[i] = bench_item(i, j->cost);
    return 0;
}

static void check(int err, const char *what)
{
    if (err) {
        fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, what, weft_err_name(err), weft_errmsg());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Rank 1 while rank 0 runs alone: asleep, checking every 200 us whether
 * rank 0 has reached the same barrier. */
static void idle_barrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
}

static void weft_map_task(void *arg)
{
    int *err = arg;
    *err = weft_parallel_map(rt2, J.n, 0, item, &J);
}

/* Runs implementation k (this rank's part) and returns rank 0's wall time. */
static double run(int k)
{
    memset(J.out, 0, J.n * sizeof *J.out);
    if (!both_ranks[k] && rank != 0) {
        idle_barrier();
        return 0;
    }
    if (both_ranks[k])
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    int err = 0;
    switch (k) {
    case DIST_2X1:
        err = weft_dist_parallel_map(d_world, J.n, 0, item, &J);
        break;
    case DIST_1X2:
        err = weft_dist_parallel_map(d_self, J.n, 0, item, &J);
        break;
    case WEFT_1X2: {
        weft_group g;
        weft_group_init(&g, rt2);
        weft_spawn(&g, weft_map_task, &err);
        check(weft_group_wait(&g), "weft_group_wait");
        break;
    }
    case OMP_DYNAMIC:
        omp_map_dynamic(J.out, J.n, J.cost);
        break;
    case OMP_GUIDED:
        omp_map_guided(J.out, J.n, J.cost);
        break;
    case STATIC_2X1: {
        size_t b = J.n * (size_t)rank / (size_t)size, e = J.n * (size_t)(rank + 1) / (size_t)size;
        for (size_t i = b; i < e; i++)
            J.out[i] = bench_item(i, J.cost);
        /* Done when the slower half is: every rank waits for the others. */
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
    case SERIAL:
        for (size_t i = 0; i < J.n; i++)
            J.out[i] = bench_item(i, J.cost);
        break;
    }
    double t = bench_now() - t0;
    check(err, impl_name[k]);
    if (!both_ranks[k])
        idle_barrier();
    return t;
}

static uint64_t checksum(void)
{
    uint64_t s = 0;
    for (size_t i = 0; i < J.n; i++)
        s += J.out[i] ^ (uint64_t)i;
    return s;
}

/* The results of implementation k, gathered on rank 0 (each index was
 * written on one rank; the others left 0), against want. */
static void verify(int k, uint64_t want)
{
    if (both_ranks[k])
        MPI_Reduce(rank == 0 ? MPI_IN_PLACE : J.out, J.out, (int)J.n, MPI_UINT64_T, MPI_SUM, 0,
                   MPI_COMM_WORLD);
    if (rank == 0 && checksum() != want) {
        bench_fail(impl_name[k], checksum(), want);
        failures++;
    }
}

/* ---- the counter ---- */

/* Median ns per fetch-and-add over 5 batches of k, by the ranks in who
 * (bit r: rank r takes part) at once; the others wait asleep. */
static double claim_ns(MPI_Win win, int who, int k)
{
    double per[5];
    for (int b = 0; b < 5; b++) {
        if (who & (1 << rank)) {
            MPI_Barrier(MPI_COMM_WORLD);
            uint64_t one = 1, old;
            double t0 = bench_now();
            for (int i = 0; i < k; i++) {
                MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, 0, 0, MPI_SUM, win);
                MPI_Win_flush(0, win);
            }
            per[b] = (bench_now() - t0) * 1e9 / k;
            bench_sink += old;
        } else {
            /* A rank that does not claim still joins the barrier. */
            MPI_Barrier(MPI_COMM_WORLD);
            per[b] = 0;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double m = bench_median(per, 5);
    double all[2] = { 0, 0 };
    MPI_Gather(&m, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* Rank 0 reports the mean over the ranks that took part. */
    double sum = 0;
    int parts = 0;
    for (int r = 0; r < size && r < 2; r++)
        if (who & (1 << r)) {
            sum += all[r];
            parts++;
        }
    return parts ? sum / parts : 0;
}

static void counter_table(void)
{
    MPI_Win win;
    uint64_t *base;
    MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(uint64_t) : 0, sizeof(uint64_t),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    const int k = 20000;
    double owner = claim_ns(win, 1, k), remote = claim_ns(win, 2, k), both = claim_ns(win, 3, k);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);

    /* What weft-dist measured itself during the dist 2 x 1 maps. */
    weft_dist_stats st;
    weft_dist_get_stats(d_world, &st);
    double mine[4] = { (double)st.claims, (double)st.claim_ns, (double)st.chunks,
                       (double)st.maps };
    double all[8] = { 0 };
    MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    printf("\nthe chunk counter: MPI_Fetch_and_op + MPI_Win_flush on rank 0's window, "
           "median of 5 x %d\n", k);
    printf("  from rank 0 (the owner), alone   %8.0f ns per claim\n", owner);
    printf("  from rank 1, alone               %8.0f ns per claim\n", remote);
    printf("  from both ranks at once          %8.0f ns per claim (mean of the two)\n", both);
    for (int r = 0; r < size && r < 2; r++)
        printf("  weft-dist's own, rank %d, in the dist 2x1 maps: %.0f claims, %.0f ns per claim, "
               "%.1f chunks per map\n", r, all[4 * r],
               all[4 * r] > 0 ? all[4 * r + 1] / all[4 * r] : 0,
               all[4 * r + 3] > 0 ? all[4 * r + 2] / all[4 * r + 3] : 0);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "bench_dist: run it on 2 ranks (mpirun -np 2 --bind-to none)\n");
        MPI_Finalize();
        return 2;
    }
    int rounds = bench_reps(11);
    const char *n_env = getenv("BENCH_DIST_N");
    J.n = n_env ? strtoul(n_env, NULL, 10) : 100000;
    J.out = calloc(J.n ? J.n : 1, sizeof *J.out);
    uint8_t *cost = malloc(J.n ? J.n : 1);
    if (!J.out || !cost || J.n == 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (size_t i = 0; i < J.n; i++)
        cost[i] = (uint8_t)(i * 100 / J.n);
    J.cost = cost;

    rt1 = bench_runtime(1);
    check(weft_dist_create(rt1, MPI_COMM_WORLD, &d_world), "weft_dist_create");
    if (rank == 0) {
        rt2 = bench_runtime(2);
        check(weft_dist_create(rt2, MPI_COMM_SELF, &d_self), "weft_dist_create");
        omp_begin(2);
    }

    /* The reference, then one untimed round that checks every result. */
    uint64_t want = 0;
    if (rank == 0) {
        run(SERIAL);
        want = checksum();
    } else {
        run(SERIAL);
    }
    for (int k = 0; k < N_IMPL; k++) {
        run(k);
        verify(k, want);
        bench_settle(30);
    }

    double t[N_IMPL][BENCH_MAX_REPS], ratio[N_IMPL][BENCH_MAX_REPS];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < N_IMPL; k++) {
            t[k][r] = run(k);
            /* Idle threads of the previous implementation go to sleep. */
            bench_settle(30);
        }
        for (int k = 0; k < N_IMPL; k++)
            ratio[k][r] = t[DIST_2X1][r] > 0 ? t[k][r] / t[DIST_2X1][r] : 0;
    }

    if (rank == 0) {
        printf("unbalanced map over MPI ranks, n = %zu, cost of i = (100 i / n) x 10 "
               "multiply-adds; %d rounds on 2 ranks (mpirun --bind-to none)\n", J.n, rounds);
        printf("%-30s %10s %20s\n", "implementation", "median ms", "time / dist 2x1");
        double med_t[N_IMPL], med_ratio[N_IMPL];
        for (int k = 0; k < N_IMPL; k++) {
            med_t[k] = bench_median(t[k], rounds) * 1e3;
            med_ratio[k] = bench_median(ratio[k], rounds);
            printf("%-30s %10.2f %20.3f\n", impl_name[k], med_t[k], med_ratio[k]);
        }
        /* dist 2 x 1 within 10% of the others: its time over theirs. */
        const int peers[] = { DIST_1X2, WEFT_1X2, OMP_DYNAMIC, OMP_GUIDED };
        for (size_t p = 0; p < sizeof peers / sizeof peers[0]; p++) {
            double over = 1.0 / med_ratio[peers[p]];
            printf("dist 2x1 / %-28s %.3f  (%s the 10%% target)\n", impl_name[peers[p]], over,
                   over <= 1.10 ? "meets" : "misses");
        }
        printf("static split / dist 2x1: %.3f (what the dynamic hand-out buys)\n",
               med_ratio[STATIC_2X1]);
    }
    counter_table();

    weft_dist_destroy(&d_world);
    weft_dist_destroy(&d_self);
    weft_runtime_destroy(&rt1);
    weft_runtime_destroy(&rt2);
    free(J.out);
    free(cost);
    if (rank == 0)
        printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    MPI_Finalize();
    return failures || bench_exit_status();
}
