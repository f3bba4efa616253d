/* The OpenMP task versions of the Lace workloads (bench/lace.h): the
 * recursion and cutoffs of bench_lace.c, with `omp task` and `omp
 * taskwait`.  Each runs with the thread count of the last omp_begin. */
#include "lace.h"

#define QMAX 16

static long queens_task(int n, int j, const char *a)
{
    if (j == n)
        return 1;
    char b[QMAX][QMAX];
    long r[QMAX] = { 0 };
    for (int i = 0; i < n; i++) {
        memcpy(b[i], a, (size_t)j);
        b[i][j] = (char)i;
        if (queens_ok(j, b[i])) {
#pragma omp task shared(r, b) firstprivate(i)
            r[i] = queens_task(n, j + 1, b[i]);
        }
    }
#pragma omp taskwait
    long s = 0;
    for (int i = 0; i < n; i++)
        s += r[i];
    return s;
}

long omp_queens(int n)
{
    long r = 0;
    char a[QMAX] = { 0 };
#pragma omp parallel
#pragma omp single
    r = queens_task(n, 0, a);
    return r;
}

static uint64_t uts_task(uint64_t state, int depth)
{
    int k = uts_children(state, depth);
    if (k == 0)
        return 1;
    uint64_t *r = __builtin_alloca(sizeof *r * (size_t)k);
    for (int i = 0; i < k; i++) {
#pragma omp task firstprivate(i) shared(r)
        r[i] = uts_task(uts_child(state, i), depth + 1);
    }
#pragma omp taskwait
    uint64_t s = 1;
    for (int i = 0; i < k; i++)
        s += r[i];
    return s;
}

uint64_t omp_uts(void)
{
    uint64_t r = 0;
#pragma omp parallel
#pragma omp single
    r = uts_task(0, 0);
    return r;
}

static void merge_task(cilksort_elm *low1, cilksort_elm *high1, cilksort_elm *low2,
                       cilksort_elm *high2, cilksort_elm *lowdest)
{
    if (high2 - low2 > high1 - low1) {
        cilksort_elm *t = low1; low1 = low2; low2 = t;
        t = high1; high1 = high2; high2 = t;
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
#pragma omp task
    merge_task(low1, split1 - 1, low2, split2, lowdest);
#pragma omp task
    merge_task(split1 + 1, high1, split2 + 1, high2, lowdest + lowsize + 2);
#pragma omp taskwait
}

static void sort_task(cilksort_elm *low, cilksort_elm *tmp, long size)
{
    if (size < CILKSORT_QUICKSIZE) {
        cilksort_seqquick(low, low + size - 1);
        return;
    }
    long q = size / 4;
    cilksort_elm *a = low, *b = a + q, *c = b + q, *d = c + q;
    cilksort_elm *ta = tmp, *tb = ta + q, *tc = tb + q, *td = tc + q;
#pragma omp task
    sort_task(a, ta, q);
#pragma omp task
    sort_task(b, tb, q);
#pragma omp task
    sort_task(c, tc, q);
#pragma omp task
    sort_task(d, td, size - 3 * q);
#pragma omp taskwait
#pragma omp task
    merge_task(a, a + q - 1, b, b + q - 1, ta);
#pragma omp task
    merge_task(c, c + q - 1, d, low + size - 1, tc);
#pragma omp taskwait
    merge_task(ta, tc - 1, tc, ta + size - 1, a);
}

void omp_cilksort(cilksort_elm *a, cilksort_elm *tmp, long n)
{
#pragma omp parallel
#pragma omp single
    sort_task(a, tmp, n);
}

static void matmul_task(const float *a, const float *b, float *c, matmul_dims d, int ld)
{
    if (d.m + d.n + d.p <= 64) {
        matmul_base(a, b, c, d, ld);
    } else if (d.m >= d.n && d.m >= d.p) {
        int m1 = d.m / 2;
        matmul_dims top = { m1, d.n, d.p, d.add }, bot = { d.m - m1, d.n, d.p, d.add };
#pragma omp task
        matmul_task(a, b, c, top, ld);
        matmul_task(a + (size_t)m1 * ld, b, c + (size_t)m1 * ld, bot, ld);
#pragma omp taskwait
    } else if (d.n >= d.m && d.n >= d.p) {
        int n1 = d.n / 2;
        matmul_dims left = { d.m, n1, d.p, d.add }, right = { d.m, d.n - n1, d.p, 1 };
        matmul_task(a, b, c, left, ld);
        matmul_task(a + n1, b + (size_t)n1 * ld, c, right, ld);
    } else {
        int p1 = d.p / 2;
        matmul_dims left = { d.m, d.n, p1, d.add }, right = { d.m, d.n, d.p - p1, d.add };
#pragma omp task
        matmul_task(a, b, c, left, ld);
        matmul_task(a, b + p1, c + p1, right, ld);
#pragma omp taskwait
    }
}

void omp_matmul(const float *a, const float *b, float *c, int n)
{
    matmul_dims d = { n, n, n, 0 };
#pragma omp parallel
#pragma omp single
    matmul_task(a, b, c, d, n);
}
