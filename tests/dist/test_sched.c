/* The chunk schedule of weft_dist_parallel_map: for every n and runner
 * count, the chunks cover [0, n) exactly once, in order, none empty; a
 * runner's cursor that skips the chunks other runners took finds the same
 * chunks; chunks shrink to one index at the end; and a map takes few
 * claims (about runners * log2(n)). */
#include <math.h>

#include "test_util.h"
#include "dist/internal.h"

TestSuite(sched, .timeout = 60);

static const uint64_t sizes[] = { 0, 1, 2, 3, 7, 8, 100, 1000, 12345, 1000000 };
static const uint64_t runner_counts[] = { 1, 2, 3, 4, 8, 100 };

#define FOR_EACH_CASE(n, p)                                                             \
    for (size_t si_ = 0; si_ < sizeof sizes / sizeof sizes[0]; si_++)                   \
        for (size_t ri_ = 0; ri_ < sizeof runner_counts / sizeof runner_counts[0]; ri_++) \
            for (uint64_t n = sizes[si_], p = runner_counts[ri_], once_ = 1; once_; once_ = 0)

Test(sched, chunks_cover_every_index_once_in_order)
{
    FOR_EACH_CASE(n, p) {
        weft__dist_sched s;
        weft__dist_sched_init(&s, n, p);
        weft__dist_cursor c;
        weft__dist_cursor_init(&c, &s);
        uint64_t at = 0, prev_len = UINT64_MAX;
        for (uint64_t j = 0; j < s.total; j++) {
            uint64_t b, e;
            weft__dist_sched_chunk(&s, &c, j, &b, &e);
            cr_assert_eq(b, at, "n=%llu p=%llu chunk %llu begins at %llu, not %llu",
                         (unsigned long long)n, (unsigned long long)p, (unsigned long long)j,
                         (unsigned long long)b, (unsigned long long)at);
            cr_assert_gt(e, b, "chunk %llu is empty", (unsigned long long)j);
            cr_assert_leq(e, n);
            /* Shrinking: no chunk is longer than the one before it. */
            cr_assert_leq(e - b, prev_len, "n=%llu p=%llu chunk %llu grew",
                          (unsigned long long)n, (unsigned long long)p, (unsigned long long)j);
            prev_len = e - b;
            at = e;
        }
        cr_assert_eq(at, n, "n=%llu p=%llu: the chunks end at %llu", (unsigned long long)n,
                     (unsigned long long)p, (unsigned long long)at);
        if (n > 0)
            cr_assert_eq(prev_len, 1, "n=%llu p=%llu: the last chunk has %llu indices",
                         (unsigned long long)n, (unsigned long long)p,
                         (unsigned long long)prev_len);
    }
}

Test(sched, runners_skipping_chunks_see_the_same_ones)
{
    FOR_EACH_CASE(n, p) {
        weft__dist_sched s;
        weft__dist_sched_init(&s, n, p);
        weft__dist_cursor all, mine[3];
        weft__dist_cursor_init(&all, &s);
        for (int r = 0; r < 3; r++)
            weft__dist_cursor_init(&mine[r], &s);
        /* Runner r takes the chunks whose number is r mod 3, or every
         * third batch's worth at a time: rising numbers with gaps. */
        for (uint64_t j = 0; j < s.total; j++) {
            uint64_t b0, e0, b1, e1;
            weft__dist_sched_chunk(&s, &all, j, &b0, &e0);
            int r = (int)((j / (p > 1 ? p - 1 : 1)) % 3);
            weft__dist_sched_chunk(&s, &mine[r], j, &b1, &e1);
            cr_assert(b0 == b1 && e0 == e1, "n=%llu p=%llu chunk %llu: [%llu, %llu) vs [%llu, %llu)",
                      (unsigned long long)n, (unsigned long long)p, (unsigned long long)j,
                      (unsigned long long)b0, (unsigned long long)e0, (unsigned long long)b1,
                      (unsigned long long)e1);
        }
    }
}

Test(sched, few_claims_and_a_first_batch_of_half)
{
    FOR_EACH_CASE(n, p) {
        weft__dist_sched s;
        weft__dist_sched_init(&s, n, p);
        double bound = (double)p * (log2((double)n + 1) + 3);
        cr_assert_leq((double)s.total, bound, "n=%llu p=%llu: %llu chunks",
                      (unsigned long long)n, (unsigned long long)p,
                      (unsigned long long)s.total);
        if (n == 0)
            continue;
        weft__dist_cursor c;
        weft__dist_cursor_init(&c, &s);
        uint64_t b, e;
        weft__dist_sched_chunk(&s, &c, 0, &b, &e);
        uint64_t want = (n + 2 * p - 1) / (2 * p);
        cr_assert_eq(e - b, want < n ? want : n, "n=%llu p=%llu: first chunk %llu",
                     (unsigned long long)n, (unsigned long long)p, (unsigned long long)(e - b));
    }
    /* One runner, n = 1e6: about 20 halvings. */
    weft__dist_sched s;
    weft__dist_sched_init(&s, 1000000, 1);
    cr_assert_leq(s.total, 24);
    cr_assert_geq(s.total, 18);
}
