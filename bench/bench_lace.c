/* The workloads of Lace's benchmark suite (bench/lace.h) with weft's typed
 * tasks, next to serial C (-O2), OpenMP tasks and oneTBB task_group:
 * queens(12) (one spawn per legal placement), a binomial unbalanced tree
 * search, cilksort of 2^21 longs and a 512x512 recursive float matmul.
 * fib has its own program (bench_fib.c).  $BENCH_LACE_ONLY picks some of
 * "queens uts cilksort matmul"; $BENCH_WEFT_ONLY leaves OpenMP and TBB out. */
#include "bench.h"
#include "contenders.h"
#include "lace.h"

#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define QMAX 16
#define QUEENS_N 12
#define SORT_N (1L << 21)
#define MATMUL_N 512

static weft_runtime *rt;

/* ------------------------------------------------------------- n-queens */

static long queens_serial(int n, int j, const char *a)
{
    if (j == n)
        return 1;
    char b[QMAX][QMAX];
    long s = 0;
    for (int i = 0; i < n; i++) {
        memcpy(b[i], a, (size_t)j);
        b[i][j] = (char)i;
        if (queens_ok(j, b[i]))
            s += queens_serial(n, j + 1, b[i]);
    }
    return s;
}

WEFT_TASK_3(long, queens, int, n, int, j, const char *, a)
{
    if (j == n)
        return 1;
    char b[QMAX][QMAX];
    int k = 0;
    for (int i = 0; i < n; i++) {
        memcpy(b[i], a, (size_t)j);
        b[i][j] = (char)i;
        if (queens_ok(j, b[i])) {
            WEFT_SPAWN(queens, n, j + 1, b[i]);
            k++;
        }
    }
    long s = 0;
    while (k-- > 0)
        s += WEFT_SYNC(queens);
    return s;
}

/* -------------------------------------------------- unbalanced tree search */

static uint64_t uts_serial(uint64_t state, int depth)
{
    int k = uts_children(state, depth);
    uint64_t s = 1;
    for (int i = 0; i < k; i++)
        s += uts_serial(uts_child(state, i), depth + 1);
    return s;
}

WEFT_TASK_2(uint64_t, uts, uint64_t, state, int, depth)
{
    int k = uts_children(state, depth);
    for (int i = 0; i < k; i++)
        WEFT_SPAWN(uts, uts_child(state, i), depth + 1);
    uint64_t s = 1;
    for (int i = 0; i < k; i++)
        s += WEFT_SYNC(uts);
    return s;
}

/* --------------------------------------------------------------- cilksort */

static void merge_serial(cilksort_elm *low1, cilksort_elm *high1, cilksort_elm *low2,
                         cilksort_elm *high2, cilksort_elm *lowdest);

/* The split of a merge (Cilk's cilkmerge): the larger range's middle
 * element goes straight to its place; false when the merge is done here
 * (an empty range, or small enough to merge serially). */
typedef struct merge_split {
    cilksort_elm *low1, *high1, *low2, *high2, *split1, *split2;
    long lowsize;
} merge_split;

static int merge_prepare(merge_split *m, cilksort_elm *low1, cilksort_elm *high1,
                         cilksort_elm *low2, cilksort_elm *high2, cilksort_elm *lowdest)
{
    if (high2 - low2 > high1 - low1) {
        cilksort_elm *t = low1; low1 = low2; low2 = t;
        t = high1; high1 = high2; high2 = t;
    }
    if (high1 < low1) {
        memcpy(lowdest, low2, sizeof *low2 * (size_t)(high2 - low2 + 1));
        return 0;
    }
    if (high2 - low2 < CILKSORT_MERGESIZE) {
        cilksort_seqmerge(low1, high1, low2, high2, lowdest);
        return 0;
    }
    m->low1 = low1, m->high1 = high1, m->low2 = low2, m->high2 = high2;
    m->split1 = (high1 - low1 + 1) / 2 + low1;
    m->split2 = cilksort_binsplit(*m->split1, low2, high2);
    m->lowsize = (m->split1 - low1) + (m->split2 - low2);
    lowdest[m->lowsize + 1] = *m->split1;
    return 1;
}

static void merge_serial(cilksort_elm *low1, cilksort_elm *high1, cilksort_elm *low2,
                         cilksort_elm *high2, cilksort_elm *lowdest)
{
    merge_split m;
    if (!merge_prepare(&m, low1, high1, low2, high2, lowdest))
        return;
    merge_serial(m.low1, m.split1 - 1, m.low2, m.split2, lowdest);
    merge_serial(m.split1 + 1, m.high1, m.split2 + 1, m.high2, lowdest + m.lowsize + 2);
}

static void sort_serial(cilksort_elm *low, cilksort_elm *tmp, long size)
{
    if (size < CILKSORT_QUICKSIZE) {
        cilksort_seqquick(low, low + size - 1);
        return;
    }
    long q = size / 4;
    cilksort_elm *a = low, *b = a + q, *c = b + q, *d = c + q;
    cilksort_elm *ta = tmp, *tb = ta + q, *tc = tb + q, *td = tc + q;
    sort_serial(a, ta, q);
    sort_serial(b, tb, q);
    sort_serial(c, tc, q);
    sort_serial(d, td, size - 3 * q);
    merge_serial(a, a + q - 1, b, b + q - 1, ta);
    merge_serial(c, c + q - 1, d, low + size - 1, tc);
    merge_serial(ta, tc - 1, tc, ta + size - 1, a);
}

WEFT_VOID_TASK_5(cilkmerge, cilksort_elm *, low1, cilksort_elm *, high1, cilksort_elm *, low2,
                 cilksort_elm *, high2, cilksort_elm *, lowdest)
{
    merge_split m;
    if (!merge_prepare(&m, low1, high1, low2, high2, lowdest))
        return;
    WEFT_SPAWN(cilkmerge, m.low1, m.split1 - 1, m.low2, m.split2, lowdest);
    WEFT_SPAWN(cilkmerge, m.split1 + 1, m.high1, m.split2 + 1, m.high2, lowdest + m.lowsize + 2);
    WEFT_SYNC(cilkmerge);
    WEFT_SYNC(cilkmerge);
}

WEFT_VOID_TASK_3(cilksort, cilksort_elm *, low, cilksort_elm *, tmp, long, size)
{
    if (size < CILKSORT_QUICKSIZE) {
        cilksort_seqquick(low, low + size - 1);
        return;
    }
    long q = size / 4;
    cilksort_elm *a = low, *b = a + q, *c = b + q, *d = c + q;
    cilksort_elm *ta = tmp, *tb = ta + q, *tc = tb + q, *td = tc + q;
    WEFT_SPAWN(cilksort, a, ta, q);
    WEFT_SPAWN(cilksort, b, tb, q);
    WEFT_SPAWN(cilksort, c, tc, q);
    WEFT_SPAWN(cilksort, d, td, size - 3 * q);
    WEFT_SYNC(cilksort);
    WEFT_SYNC(cilksort);
    WEFT_SYNC(cilksort);
    WEFT_SYNC(cilksort);
    WEFT_SPAWN(cilkmerge, a, a + q - 1, b, b + q - 1, ta);
    WEFT_SPAWN(cilkmerge, c, c + q - 1, d, low + size - 1, tc);
    WEFT_SYNC(cilkmerge);
    WEFT_SYNC(cilkmerge);
    WEFT_CALL(cilkmerge, ta, tc - 1, tc, ta + size - 1, a);
}

/* ----------------------------------------------------------------- matmul */

static void matmul_serial(const float *a, const float *b, float *c, matmul_dims d, int ld)
{
    if (d.m + d.n + d.p <= 64) {
        matmul_base(a, b, c, d, ld);
    } else if (d.m >= d.n && d.m >= d.p) {
        int m1 = d.m / 2;
        matmul_dims top = { m1, d.n, d.p, d.add }, bot = { d.m - m1, d.n, d.p, d.add };
        matmul_serial(a, b, c, top, ld);
        matmul_serial(a + (size_t)m1 * ld, b, c + (size_t)m1 * ld, bot, ld);
    } else if (d.n >= d.m && d.n >= d.p) {
        int n1 = d.n / 2;
        matmul_dims left = { d.m, n1, d.p, d.add }, right = { d.m, d.n - n1, d.p, 1 };
        matmul_serial(a, b, c, left, ld);
        matmul_serial(a + n1, b + (size_t)n1 * ld, c, right, ld);
    } else {
        int p1 = d.p / 2;
        matmul_dims left = { d.m, d.n, p1, d.add }, right = { d.m, d.n, d.p - p1, d.add };
        matmul_serial(a, b, c, left, ld);
        matmul_serial(a, b + p1, c + p1, right, ld);
    }
}

WEFT_VOID_TASK_5(matmul, const float *, a, const float *, b, float *, c, matmul_dims, d, int, ld)
{
    if (d.m + d.n + d.p <= 64) {
        matmul_base(a, b, c, d, ld);
    } else if (d.m >= d.n && d.m >= d.p) {
        int m1 = d.m / 2;
        matmul_dims top = { m1, d.n, d.p, d.add }, bot = { d.m - m1, d.n, d.p, d.add };
        WEFT_SPAWN(matmul, a, b, c, top, ld);
        WEFT_CALL(matmul, a + (size_t)m1 * ld, b, c + (size_t)m1 * ld, bot, ld);
        WEFT_SYNC(matmul);
    } else if (d.n >= d.m && d.n >= d.p) {
        int n1 = d.n / 2;
        matmul_dims left = { d.m, n1, d.p, d.add }, right = { d.m, d.n - n1, d.p, 1 };
        WEFT_CALL(matmul, a, b, c, left, ld);
        WEFT_CALL(matmul, a + n1, b + (size_t)n1 * ld, c, right, ld);
    } else {
        int p1 = d.p / 2;
        matmul_dims left = { d.m, d.n, p1, d.add }, right = { d.m, d.n, d.p - p1, d.add };
        WEFT_SPAWN(matmul, a, b, c, left, ld);
        WEFT_CALL(matmul, a, b + p1, c + p1, right, ld);
        WEFT_SYNC(matmul);
    }
}

/* ---------------------------------------------------------------- harness */

typedef struct work {
    uint64_t result;
    cilksort_elm *input, *data, *tmp;
    float *ma, *mb, *mc;
} work;

static void q_serial(void *p)
{
    char a[QMAX] = { 0 };
    ((work *)p)->result = (uint64_t)queens_serial(QUEENS_N, 0, a);
}
static void q_weft(void *p)
{
    char a[QMAX] = { 0 };
    ((work *)p)->result = (uint64_t)WEFT_RUN(rt, queens, QUEENS_N, 0, a);
}
static void q_omp(void *p) { ((work *)p)->result = (uint64_t)omp_queens(QUEENS_N); }
static void q_tbb(void *p) { ((work *)p)->result = (uint64_t)tbb_queens(QUEENS_N); }

static void u_serial(void *p) { ((work *)p)->result = uts_serial(0, 0); }
static void u_weft(void *p) { ((work *)p)->result = WEFT_RUN(rt, uts, 0, 0); }
static void u_omp(void *p) { ((work *)p)->result = omp_uts(); }
static void u_tbb(void *p) { ((work *)p)->result = tbb_uts(); }

/* Each sort starts from the same shuffled input (the copy is timed too,
 * the same for every implementation); the result is a checksum that only
 * a sorted array gives. */
static uint64_t sorted_sum(const cilksort_elm *a, long n)
{
    uint64_t s = 0;
    for (long i = 0; i < n; i++)
        s += (uint64_t)(a[i] == i) << (i & 15);
    return s;
}
static void reset_sort(work *w) { memcpy(w->data, w->input, sizeof *w->data * SORT_N); }
static void s_serial(void *p)
{
    work *w = p;
    reset_sort(w);
    sort_serial(w->data, w->tmp, SORT_N);
}
static void s_weft(void *p)
{
    work *w = p;
    reset_sort(w);
    WEFT_RUN(rt, cilksort, w->data, w->tmp, SORT_N);
}
static void s_omp(void *p)
{
    work *w = p;
    reset_sort(w);
    omp_cilksort(w->data, w->tmp, SORT_N);
}
static void s_tbb(void *p)
{
    work *w = p;
    reset_sort(w);
    tbb_cilksort(w->data, w->tmp, SORT_N);
}

/* Every implementation computes the same sums in the same order, so the
 * products agree bit for bit; the result is a hash of C's bits. */
static uint64_t matrix_hash(const float *c)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < (size_t)MATMUL_N * MATMUL_N; i++) {
        uint32_t v;
        memcpy(&v, &c[i], sizeof v);
        h = (h ^ v) * 1099511628211ull;
    }
    return h;
}
static void m_serial(void *p)
{
    work *w = p;
    matmul_dims d = { MATMUL_N, MATMUL_N, MATMUL_N, 0 };
    matmul_serial(w->ma, w->mb, w->mc, d, MATMUL_N);
}
static void m_weft(void *p)
{
    work *w = p;
    matmul_dims d = { MATMUL_N, MATMUL_N, MATMUL_N, 0 };
    WEFT_RUN(rt, matmul, w->ma, w->mb, w->mc, d, MATMUL_N);
}
static void m_omp(void *p)
{
    work *w = p;
    omp_matmul(w->ma, w->mb, w->mc, MATMUL_N);
}
static void m_tbb(void *p)
{
    work *w = p;
    tbb_matmul(w->ma, w->mb, w->mc, MATMUL_N);
}

typedef struct workload {
    const char *name, *title;
    void (*serial)(void *), (*weft)(void *), (*omp)(void *), (*tbb)(void *);
    uint64_t (*result)(work *);
} workload;

static uint64_t plain_result(work *w) { return w->result; }
static uint64_t sort_result(work *w) { return sorted_sum(w->data, SORT_N); }
static uint64_t matmul_result(work *w) { return matrix_hash(w->mc); }

static const workload workloads[] = {
    { "queens", "queens(12): one spawn per legal placement (14200 solutions)",
      q_serial, q_weft, q_omp, q_tbb, plain_result },
    { "uts", "uts: binomial tree, 2000 root children, 8 children with p = 0.1245",
      u_serial, u_weft, u_omp, u_tbb, plain_result },
    { "cilksort", "cilksort: 2^21 longs (copy of the input included)",
      s_serial, s_weft, s_omp, s_tbb, sort_result },
    { "matmul", "matmul: 512x512 floats, recursive, base case m + n + p <= 64",
      m_serial, m_weft, m_omp, m_tbb, matmul_result },
};

static void measure(const workload *wl, work *w, int nw, const unsigned *workers, int reps)
{
    char title[200];
    snprintf(title, sizeof title, "%s: median wall time", wl->title);
    bench_table t;
    bench_table_init(&t, title, "ms", 1e3, nw, workers);
    int i_ser = bench_table_impl(&t, "serial", 1, reps);
    int i_weft = bench_table_impl(&t, "weft typed tasks", 0, reps);
    int i_omp = bench_table_impl(&t, "openmp task", 1, reps);
    int i_tbb = bench_table_impl(&t, "tbb task_group", 1, reps);
    t.med[i_ser][0] = bench_time(reps, 1, wl->serial, w);
    uint64_t want = wl->result(w);
    bench_sink += want;
    for (int k = 0; k < nw; k++) {
        rt = bench_runtime(workers[k]);
        t.med[i_weft][k] = bench_time(reps, 1, wl->weft, w);
        if (wl->result(w) != want)
            bench_fail(wl->name, wl->result(w), want);
        weft_runtime_destroy(&rt);
        bench_settle(50);
        if (getenv("BENCH_WEFT_ONLY"))   /* for callgrind and perf: weft alone */
            continue;
        omp_begin(workers[k]);
        t.med[i_omp][k] = bench_time(reps, 1, wl->omp, w);
        if (wl->result(w) != want)
            bench_fail(wl->name, wl->result(w), want);
        bench_settle(50);
        tbb_begin(workers[k]);
        t.med[i_tbb][k] = bench_time(reps, 1, wl->tbb, w);
        if (wl->result(w) != want)
            bench_fail(wl->name, wl->result(w), want);
        tbb_end();
        bench_settle(50);
    }
    bench_table_print(&t);
    printf("%s result %" PRIu64 "\n", wl->name, want);
    printf("summary %s: weft %u worker(s) / serial -O2 = %.2fx\n", wl->name, workers[0],
           t.med[i_weft][0] / t.med[i_ser][0]);
    for (int k = 1; k < nw; k++)
        printf("summary %s: weft speedup %u vs %u workers = %.2fx\n", wl->name, workers[k],
               workers[0], t.med[i_weft][0] / t.med[i_weft][k]);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    work w = { 0 };
    w.input = malloc(sizeof *w.input * SORT_N);
    w.data = malloc(sizeof *w.data * SORT_N);
    w.tmp = malloc(sizeof *w.tmp * SORT_N);
    size_t mn = (size_t)MATMUL_N * MATMUL_N;
    w.ma = malloc(sizeof *w.ma * mn);
    w.mb = malloc(sizeof *w.mb * mn);
    w.mc = malloc(sizeof *w.mc * mn);
    if (!w.input || !w.data || !w.tmp || !w.ma || !w.mb || !w.mc) {
        fprintf(stderr, "bench_lace: out of memory\n");
        return 2;
    }
    cilksort_fill(w.input, SORT_N);
    for (size_t i = 0; i < mn; i++) {
        w.ma[i] = (float)((i * 7919) % 1000) / 1000.0f;
        w.mb[i] = (float)((i * 104729) % 1000) / 1000.0f;
    }
    for (size_t k = 0; k < sizeof workloads / sizeof workloads[0]; k++)
        if (bench_selected("BENCH_LACE_ONLY", workloads[k].name))
            measure(&workloads[k], &w, nw, workers, reps);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    free(w.input), free(w.data), free(w.tmp), free(w.ma), free(w.mb), free(w.mc);
    return bench_exit_status();
}
