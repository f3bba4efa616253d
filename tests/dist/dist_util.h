/* Helpers of weft-dist's MPI tests.  Each test file holds one Test that
 * initializes MPI (once per process), runs its cases on every rank in the
 * same order, and finalizes MPI; see tests/dist/meson.build. */
#ifndef WEFT_DIST_TEST_UTIL_H
#define WEFT_DIST_TEST_UTIL_H

#include <string.h>
#include <time.h>
#include <weft/dist.h>

#include "test_util.h"

static int world_rank, world_size;

static void mpi_begin(void)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    cr_assert_eq(provided, MPI_THREAD_MULTIPLE, "MPI grants thread level %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
}

/* A runtime and its weft_dist over MPI_COMM_WORLD. */
static weft_dist *dist_of(weft_runtime *rt)
{
    weft_dist *d = NULL;
    int rc = weft_dist_create(rt, MPI_COMM_WORLD, &d);
    cr_assert_eq(rc, 0, "weft_dist_create: %s", weft_errmsg());
    return d;
}

static long sum_over_ranks(long v)
{
    long all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static long max_over_ranks(long v)
{
    long all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static long min_over_ranks(long v)
{
    long all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* Every rank got the same code (and says so before any rank asserts). */
static void assert_same_everywhere(int rc, const char *what)
{
    long lo = min_over_ranks(rc), hi = max_over_ranks(rc);
    cr_assert_eq(lo, hi, "%s: the ranks returned codes from %ld to %ld", what, lo, hi);
}

static void expect_errmsg(const char *part)
{
    cr_assert(strstr(weft_errmsg(), part) != NULL, "rank %d: \"%s\" not in \"%s\"", world_rank,
              part, weft_errmsg());
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

#endif
