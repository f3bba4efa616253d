/* The workloads of Lace's benchmark suite (trolando/lace, benchmarks/),
 * written anew for weft's benchmarks: n-queens (one spawn per legal
 * placement), an unbalanced tree search, cilksort (Cilk's parallel merge
 * sort) and recursive matrix multiplication.  The serial kernels shared by
 * every implementation are inline here; bench_lace.c has the serial and
 * weft (typed tasks) versions, lace_omp.c and lace_tbb.cpp the OpenMP task
 * and oneTBB task_group ones, each with the same recursion and cutoffs. */
#ifndef WEFT_BENCH_LACE_H
#define WEFT_BENCH_LACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- n-queens */

/* Whether queen j (at column a[j]) attacks none of a[0..j). */
static inline int queens_ok(int j, const char *a)
{
    for (int i = 0; i < j; i++) {
        int d = a[i] - a[j];
        if (d == 0 || d == j - i || d == i - j)
            return 0;
    }
    return 1;
}

/* -------------------------------------------------- unbalanced tree search */

/* A binomial tree (UTS's T3 shape): the root has UTS_ROOT children, every
 * other node UTS_M children with probability UTS_Q, else none.  A node is
 * its 64-bit state; a child's state is a hash of its parent's and its
 * index (splitmix64 instead of UTS's SHA-1), iterated UTS_GRAIN times as
 * UTS's compute granularity. */
#define UTS_ROOT 2000
#define UTS_M 8
#define UTS_Q 0.1245
#define UTS_GRAIN 8

static inline uint64_t uts_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t uts_child(uint64_t parent, int i)
{
    uint64_t s = parent ^ ((uint64_t)(i + 1) * 0xd6e8feb86659fd93ull);
    for (int k = 0; k < UTS_GRAIN; k++)
        s = uts_mix(s);
    return s;
}

static inline int uts_children(uint64_t state, int depth)
{
    if (depth == 0)
        return UTS_ROOT;
    /* The top 53 bits as a uniform double in [0, 1). */
    double u = (double)(state >> 11) * (1.0 / 9007199254740992.0);
    return u < UTS_Q ? UTS_M : 0;
}

/* --------------------------------------------------------------- cilksort */

typedef long cilksort_elm;
#define CILKSORT_MERGESIZE 2048
#define CILKSORT_QUICKSIZE 2048
#define CILKSORT_INSERTIONSIZE 20

void cilksort_seqquick(cilksort_elm *low, cilksort_elm *high);
void cilksort_seqmerge(cilksort_elm *low1, cilksort_elm *high1, cilksort_elm *low2,
                       cilksort_elm *high2, cilksort_elm *lowdest);
cilksort_elm *cilksort_binsplit(cilksort_elm val, cilksort_elm *low, cilksort_elm *high);
/* Fills a with a permutation of 0..n-1 (fixed seed). */
void cilksort_fill(cilksort_elm *a, long n);

/* ----------------------------------------------------------------- matmul */

/* C (m x p) = or += A (m x n) * B (n x p), all with leading dimension ld;
 * the base case of the recursion (m + n + p <= 64). */
typedef struct matmul_dims {
    int m, n, p, add;
} matmul_dims;

void matmul_base(const float *a, const float *b, float *c, matmul_dims d, int ld);

/* ------------------------------------------------------------ contenders */

long omp_queens(int n);
uint64_t omp_uts(void);
void omp_cilksort(cilksort_elm *a, cilksort_elm *tmp, long n);
void omp_matmul(const float *a, const float *b, float *c, int n);

long tbb_queens(int n);
uint64_t tbb_uts(void);
void tbb_cilksort(cilksort_elm *a, cilksort_elm *tmp, long n);
void tbb_matmul(const float *a, const float *b, float *c, int n);

#ifdef __cplusplus
}
#endif
#endif
