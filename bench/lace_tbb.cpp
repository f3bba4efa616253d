// The oneTBB task_group versions of the Lace workloads (bench/lace.h): the
// recursion and cutoffs of bench_lace.c, one task_group per spawning call.
// They run in the arena of the last tbb_begin (bench_tbb.cpp).
#include "contenders.h"
#include "lace.h"

#include <tbb/task_group.h>
#include <vector>

namespace {
const int QMAX = 16;

long queens_rec(int n, int j, const char *a)
{
    if (j == n)
        return 1;
    char b[QMAX][QMAX];
    long r[QMAX] = {};
    tbb::task_group g;
    for (int i = 0; i < n; i++) {
        memcpy(b[i], a, (size_t)j);
        b[i][j] = (char)i;
        if (queens_ok(j, b[i]))
            g.run([&, i] { r[i] = queens_rec(n, j + 1, b[i]); });
    }
    g.wait();
    long s = 0;
    for (int i = 0; i < n; i++)
        s += r[i];
    return s;
}

uint64_t uts_rec(uint64_t state, int depth)
{
    int k = uts_children(state, depth);
    if (k == 0)
        return 1;
    std::vector<uint64_t> r((size_t)k);
    tbb::task_group g;
    for (int i = 0; i < k; i++)
        g.run([&, i] { r[(size_t)i] = uts_rec(uts_child(state, i), depth + 1); });
    g.wait();
    uint64_t s = 1;
    for (uint64_t x : r)
        s += x;
    return s;
}

void merge_rec(cilksort_elm *low1, cilksort_elm *high1, cilksort_elm *low2, cilksort_elm *high2,
               cilksort_elm *lowdest)
{
    if (high2 - low2 > high1 - low1) {
        std::swap(low1, low2);
        std::swap(high1, high2);
    }
    if (high1 < low1) {
        memcpy(lowdest, low2, sizeof *low2 * (size_t)(high2 - low2 + 1));
        return;
    }
    if (high2 - low2 < CILKSORT_MERGESIZE) {
        cilksort_seqmerge(low1, high1, low2, high2, lowdest);
        return;
    }
    cilksort_elm *split1 = (high1 - low1 + 1) / 2 + low1;
    cilksort_elm *split2 = cilksort_binsplit(*split1, low2, high2);
    long lowsize = (split1 - low1) + (split2 - low2);
    lowdest[lowsize + 1] = *split1;
    tbb::task_group g;
    g.run([=] { merge_rec(low1, split1 - 1, low2, split2, lowdest); });
    g.run([=] { merge_rec(split1 + 1, high1, split2 + 1, high2, lowdest + lowsize + 2); });
    g.wait();
}

void sort_rec(cilksort_elm *low, cilksort_elm *tmp, long size)
{
    if (size < CILKSORT_QUICKSIZE) {
        cilksort_seqquick(low, low + size - 1);
        return;
    }
    long q = size / 4;
    cilksort_elm *a = low, *b = a + q, *c = b + q, *d = c + q;
    cilksort_elm *ta = tmp, *tb = ta + q, *tc = tb + q, *td = tc + q;
    tbb::task_group g;
    g.run([=] { sort_rec(a, ta, q); });
    g.run([=] { sort_rec(b, tb, q); });
    g.run([=] { sort_rec(c, tc, q); });
    g.run([=] { sort_rec(d, td, size - 3 * q); });
    g.wait();
    g.run([=] { merge_rec(a, a + q - 1, b, b + q - 1, ta); });
    g.run([=] { merge_rec(c, c + q - 1, d, low + size - 1, tc); });
    g.wait();
    merge_rec(ta, tc - 1, tc, ta + size - 1, a);
}

void matmul_rec(const float *a, const float *b, float *c, matmul_dims d, int ld)
{
    if (d.m + d.n + d.p <= 64) {
        matmul_base(a, b, c, d, ld);
    } else if (d.m >= d.n && d.m >= d.p) {
        int m1 = d.m / 2;
        matmul_dims top = { m1, d.n, d.p, d.add }, bot = { d.m - m1, d.n, d.p, d.add };
        tbb::task_group g;
        g.run([=] { matmul_rec(a, b, c, top, ld); });
        matmul_rec(a + (size_t)m1 * ld, b, c + (size_t)m1 * ld, bot, ld);
        g.wait();
    } else if (d.n >= d.m && d.n >= d.p) {
        int n1 = d.n / 2;
        matmul_dims left = { d.m, n1, d.p, d.add }, right = { d.m, d.n - n1, d.p, 1 };
        matmul_rec(a, b, c, left, ld);
        matmul_rec(a + n1, b + (size_t)n1 * ld, c, right, ld);
    } else {
        int p1 = d.p / 2;
        matmul_dims left = { d.m, d.n, p1, d.add }, right = { d.m, d.n, d.p - p1, d.add };
        tbb::task_group g;
        g.run([=] { matmul_rec(a, b, c, left, ld); });
        matmul_rec(a, b + p1, c + p1, right, ld);
        g.wait();
    }
}

// Runs f in the arena of the last tbb_begin.
template <class F> void in_arena(F f)
{
    tbb_in_arena([](void *p) { (*static_cast<F *>(p))(); }, &f);
}
} // namespace

extern "C" {

long tbb_queens(int n)
{
    long r = 0;
    in_arena([&] {
        char a[QMAX] = {};
        r = queens_rec(n, 0, a);
    });
    return r;
}

uint64_t tbb_uts(void)
{
    uint64_t r = 0;
    in_arena([&] { r = uts_rec(0, 0); });
    return r;
}

void tbb_cilksort(cilksort_elm *a, cilksort_elm *tmp, long n)
{
    in_arena([&] { sort_rec(a, tmp, n); });
}

void tbb_matmul(const float *a, const float *b, float *c, int n)
{
    in_arena([&] {
        matmul_dims d = { n, n, n, 0 };
        matmul_rec(a, b, c, d, n);
    });
}
}
