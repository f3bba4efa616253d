/* Helpers of weft-dist's MPI tests.  test_dist.c holds the one Test: it
 * initializes MPI (once per process), runs the cases of map_cases.c,
 * call_cases.c and guide_cases.c on every rank in the same order, and
 * finalizes MPI; see tests/dist/meson.build. */
#ifndef WEFT_DIST_TEST_UTIL_H
#define WEFT_DIST_TEST_UTIL_H

#include <string.h>
#include <time.h>
#include <weft/dist.h>

#include "test_util.h"

/* Set by test_dist.c: this rank's runtime and its weft_dist over
 * MPI_COMM_WORLD, and the rank's place in it. */
extern weft_runtime *rt;
extern weft_dist *d;
extern int world_rank, world_size;

/* The cases, in the order test_dist.c runs them. */
void dist_map_cases_before_init(void);
void dist_map_cases(void);
void dist_call_cases(void);
void dist_guide_cases(void);

static inline long over_ranks(long v, MPI_Op op)
{
    long all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_LONG, op, MPI_COMM_WORLD);
    return all;
}

static inline long sum_over_ranks(long v)
{
    return over_ranks(v, MPI_SUM);
}

/* Every rank got the same code (and says so before any rank asserts). */
static inline void assert_same_everywhere(int rc, const char *what)
{
    long lo = over_ranks(rc, MPI_MIN), hi = over_ranks(rc, MPI_MAX);
    cr_assert_eq(lo, hi, "%s: the ranks returned codes from %ld to %ld", what, lo, hi);
}

static inline void expect_errmsg(const char *part)
{
    cr_assert(strstr(weft_errmsg(), part) != NULL, "rank %d: \"%s\" not in \"%s\"", world_rank,
              part, weft_errmsg());
}

static inline void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

#endif
