/* Kernels that order elements along an axis: sort, argsort, top_k.
 *
 * Every row (the elements along the axis at one position of the other
 * dims) is sorted on its own by a stable merge sort (insertion-sorted runs,
 * then bottom-up merges), so equal keys keep their index order in both
 * directions and the result never depends on how rows are cut into chunks
 * over the threads.  Order is a total one: for floats every NaN follows
 * +inf in ascending order (NaNs compare equal among themselves), and -0.0
 * equals 0.0; descending order is the same relation reversed.  A row along
 * the last axis is sorted where it lies (sort: in the output itself); one
 * along another axis is gathered into scratch and written back.  Scratch is
 * allocated before the chunks start, one slice per chunk, so that no worker
 * can fail.  A long row, when the rows are fewer than the threads, is
 * sorted in segments and merged over the workers (split_sort_row). */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

#define RUN 32         /* elements sorted by insertion before merging */
#define TOP_K_SMALL 16 /* k up to which top_k keeps a sorted buffer of k */

/* "x goes before y", strictly: equal keys are never reordered. */
#define I_ASC(x, y) ((x) < (y))
#define I_DESC(x, y) ((y) < (x))
#define F_ASC(x, y) ((x) < (y) || ((y) != (y) && (x) == (x)))
#define F_DESC(x, y) F_ASC(y, x)

/* Sorts v[0..n) by BEFORE, carrying ix[0..n) along when ix is not NULL;
 * tmp and tix (when ix is) hold n elements of scratch. */
typedef void (*sort_fn)(void *v, int64_t *ix, void *tmp, int64_t *tix, int64_t n);
/* How many of the sorted a[0..na) are among the first k elements of its
 * stable merge with the sorted b[0..nb) (a's first on ties). */
typedef int64_t (*corank_fn)(const void *a, int64_t na, const void *b, int64_t nb, int64_t k);
/* That merge into d (and ia, ib into id when ia is not NULL). */
typedef void (*merge_fn)(const void *a, const int64_t *ia, int64_t na, const void *b,
                         const int64_t *ib, int64_t nb, void *d, int64_t *id);
/* The k (1 <= k <= n) first of v[0..n) in descending order into bv and bi
 * (values and indices), ties in index order. */
typedef void (*top_fn)(const void *v, int64_t n, int64_t k, void *bv, int64_t *bi);

#define SORT_FNS(NAME, T, BEFORE)                                                           \
    static void NAME##_insert(T *v, int64_t *ix, int64_t n)                                 \
    {                                                                                       \
        for (int64_t i = 1; i < n; i++) {                                                   \
            T x = v[i];                                                                     \
            int64_t xi = ix ? ix[i] : 0, j = i;                                             \
            for (; j > 0 && BEFORE(x, v[j - 1]); j--) {                                     \
                v[j] = v[j - 1];                                                            \
                if (ix)                                                                     \
                    ix[j] = ix[j - 1];                                                      \
            }                                                                               \
            v[j] = x;                                                                       \
            if (ix)                                                                         \
                ix[j] = xi;                                                                 \
        }                                                                                   \
    }                                                                                       \
    static void NAME##_merge(const T *s, const int64_t *is, T *d, int64_t *id, int64_t lo,  \
                             int64_t mid, int64_t hi)                                       \
    {                                                                                       \
        int64_t i = lo, j = mid, o = lo;                                                    \
        if (mid < hi && BEFORE(s[mid], s[mid - 1])) {                                       \
            while (i < mid && j < hi) {                                                     \
                int64_t from = BEFORE(s[j], s[i]) ? j++ : i++;                              \
                d[o] = s[from];                                                             \
                if (is)                                                                     \
                    id[o] = is[from];                                                       \
                o++;                                                                        \
            }                                                                               \
        }                                                                                   \
        /* The rest of either run (all of both when already in order). */                  \
        memcpy(d + o, s + i, sizeof(T) * (size_t)(mid - i));                                \
        memcpy(d + o + (mid - i), s + j, sizeof(T) * (size_t)(hi - j));                     \
        if (is) {                                                                           \
            memcpy(id + o, is + i, sizeof(int64_t) * (size_t)(mid - i));                    \
            memcpy(id + o + (mid - i), is + j, sizeof(int64_t) * (size_t)(hi - j));         \
        }                                                                                   \
    }                                                                                       \
    static void NAME(void *v_, int64_t *ix, void *tmp_, int64_t *tix, int64_t n)            \
    {                                                                                       \
        T *v = v_, *src = v, *dst = tmp_;                                                   \
        int64_t *isrc = ix, *idst = tix;                                                    \
        for (int64_t lo = 0; lo < n; lo += RUN)                                             \
            NAME##_insert(v + lo, ix ? ix + lo : NULL, n - lo < RUN ? n - lo : RUN);        \
        for (int64_t w = RUN; w < n; w *= 2) {                                              \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                                     \
                int64_t mid = n - lo > w ? lo + w : n;                                      \
                int64_t hi = n - mid > w ? mid + w : n;                                     \
                NAME##_merge(src, isrc, dst, idst, lo, mid, hi);                            \
            }                                                                               \
            T *t = src;                                                                     \
            src = dst;                                                                      \
            dst = t;                                                                        \
            int64_t *it = isrc;                                                             \
            isrc = idst;                                                                    \
            idst = it;                                                                      \
        }                                                                                   \
        if (src != v) {                                                                     \
            memcpy(v, src, sizeof(T) * (size_t)n);                                          \
            if (ix)                                                                         \
                memcpy(ix, isrc, sizeof(int64_t) * (size_t)n);                              \
        }                                                                                   \
    }                                                                                       \
    /* a[0..na) and b[0..nb) merged into d, a's first on ties. */                           \
    static void NAME##_merge_into(const void *a_, const int64_t *ia, int64_t na,            \
                                  const void *b_, const int64_t *ib, int64_t nb, void *d_,  \
                                  int64_t *id)                                              \
    {                                                                                       \
        const T *a = a_, *b = b_;                                                           \
        T *d = d_;                                                                          \
        int64_t i = 0, j = 0, o = 0;                                                        \
        while (i < na && j < nb) {                                                          \
            bool from_b = BEFORE(b[j], a[i]);                                               \
            d[o] = from_b ? b[j] : a[i];                                                    \
            if (id)                                                                         \
                id[o] = from_b ? ib[j] : ia[i];                                             \
            j += from_b;                                                                    \
            i += !from_b;                                                                   \
            o++;                                                                            \
        }                                                                                   \
        memcpy(d + o, a + i, sizeof(T) * (size_t)(na - i));                                 \
        memcpy(d + o + (na - i), b + j, sizeof(T) * (size_t)(nb - j));                     \
        if (id) {                                                                           \
            memcpy(id + o, ia + i, sizeof(int64_t) * (size_t)(na - i));                     \
            memcpy(id + o + (na - i), ib + j, sizeof(int64_t) * (size_t)(nb - j));          \
        }                                                                                   \
    }                                                                                       \
    /* The elements of a[0..na) among the first k of the merge of a and b. */              \
    static int64_t NAME##_corank(const void *a_, int64_t na, const void *b_, int64_t nb,    \
                                 int64_t k)                                                 \
    {                                                                                       \
        const T *a = a_, *b = b_;                                                           \
        int64_t lo = k - nb > 0 ? k - nb : 0, hi = k < na ? k : na;                         \
        while (lo < hi) {                                                                   \
            int64_t i = lo + (hi - lo) / 2;                                                 \
            if (BEFORE(b[k - i - 1], a[i]))                                                 \
                hi = i;                                                                     \
            else                                                                            \
                lo = i + 1;                                                                 \
        }                                                                                   \
        return lo;                                                                          \
    }

/* top_k for small k: a buffer of the best k so far, in order; an element
 * enters only when it goes strictly before the last one kept, so an equal
 * later element never displaces an earlier one.  Once the buffer is full
 * few elements enter (about k ln(n / k) of n random ones), so blocks of two
 * vectors are first tested at once against the last kept: MAY_ENTER is
 * BEFORE or looser (descending: a NaN always may), and a block where any
 * element may enter is walked one element at a time with the exact test.
 * The same buffer keeps the smallest k in ascending order (TOP_K not
 * descending). */
#define TOP_VEC 16                 /* bytes: SSE2's vectors, the x86-64 baseline */
#define TOP_BLOCK (2 * TOP_VEC)    /* bytes of elements tested at once */

/* Whether any lane of a vector comparison's result (0 or -1 a lane) is
 * set. */
static inline bool top_block_any(const void *mask)
{
    uint64_t w[2];
    memcpy(w, mask, TOP_VEC);
    return (w[0] | w[1]) != 0;
}

#define TOP_FN(NAME, T, BEFORE, NUMBER_BEFORE, MAY_ENTER)                                   \
    static inline void NAME##_insert(T x, int64_t i, int64_t *m, int64_t k, T *bv,          \
                                     int64_t *bi)                                           \
    {                                                                                       \
        int64_t j = *m < k ? (*m)++ : *m - 1;                                               \
        /* A number's test is simpler than BEFORE's (descending: it goes     \
         * before exactly the values below it). */                           \
        if (x == x) {                                                                       \
            for (; j > 0 && NUMBER_BEFORE(x, bv[j - 1]); j--) {                             \
                bv[j] = bv[j - 1];                                                          \
                bi[j] = bi[j - 1];                                                          \
            }                                                                               \
        } else {                                                                            \
            for (; j > 0 && BEFORE(x, bv[j - 1]); j--) {                                    \
                bv[j] = bv[j - 1];                                                          \
                bi[j] = bi[j - 1];                                                          \
            }                                                                               \
        }                                                                                   \
        bv[j] = x;                                                                          \
        bi[j] = i;                                                                          \
    }                                                                                       \
    static void NAME(const void *v_, int64_t n, int64_t k, void *bv_, int64_t *bi)          \
    {                                                                                       \
        const T *v = v_;                                                                    \
        T *bv = bv_;                                                                        \
        int64_t m = 0, i = 0;                                                               \
        for (; i < n && m < k; i++)                                                         \
            NAME##_insert(v[i], i, &m, k, bv, bi);                                          \
        const int64_t lanes = TOP_BLOCK / (int64_t)sizeof(T);                               \
        while (i < n) {                                                                     \
            int64_t end = n - i < lanes ? n : i + lanes;                                    \
            if (end - i == lanes) {                                                         \
                typedef T vec_t __attribute__((vector_size(TOP_VEC)));                      \
                vec_t x0, x1, last = (vec_t){ 0 } + bv[k - 1];                              \
                memcpy(&x0, v + i, sizeof x0);                                              \
                memcpy(&x1, v + i + lanes / 2, sizeof x1);                                  \
                __typeof__(MAY_ENTER(x0, last)) may =                                       \
                    MAY_ENTER(x0, last) | MAY_ENTER(x1, last);                              \
                if (!top_block_any(&may)) {                                                 \
                    i = end;                                                                \
                    continue;                                                               \
                }                                                                           \
            }                                                                               \
            T last = bv[k - 1];                                                             \
            for (; i < end; i++)                                                            \
                if (MAY_ENTER(v[i], last) && BEFORE(v[i], last)) {                          \
                    NAME##_insert(v[i], i, &m, k, bv, bi);                                  \
                    last = bv[k - 1];                                                       \
                }                                                                           \
        }                                                                                   \
    }

#define I_MAY_ENTER(x, last) ((last) < (x))
#define F_MAY_ENTER(x, last) (((last) < (x)) | ((x) != (x)))
/* Ascending (the smallest k): a NaN never enters unless a NaN is last. */
#define I_MAY_ENTER_ASC(x, last) ((x) < (last))
#define F_MAY_ENTER_ASC(x, last) (((x) < (last)) | ((last) != (last)))

SORT_FNS(asc_b, uint8_t, I_ASC)
SORT_FNS(asc_i32, int32_t, I_ASC)
SORT_FNS(asc_i64, int64_t, I_ASC)
SORT_FNS(asc_f32, float, F_ASC)
SORT_FNS(asc_f64, double, F_ASC)
SORT_FNS(desc_b, uint8_t, I_DESC)
SORT_FNS(desc_i32, int32_t, I_DESC)
SORT_FNS(desc_i64, int64_t, I_DESC)
SORT_FNS(desc_f32, float, F_DESC)
SORT_FNS(desc_f64, double, F_DESC)
TOP_FN(top_b, uint8_t, I_DESC, I_DESC, I_MAY_ENTER)
TOP_FN(top_i32, int32_t, I_DESC, I_DESC, I_MAY_ENTER)
TOP_FN(top_i64, int64_t, I_DESC, I_DESC, I_MAY_ENTER)
TOP_FN(top_f32, float, F_DESC, I_DESC, F_MAY_ENTER)
TOP_FN(top_f64, double, F_DESC, I_DESC, F_MAY_ENTER)
TOP_FN(bottom_b, uint8_t, I_ASC, I_ASC, I_MAY_ENTER_ASC)
TOP_FN(bottom_i32, int32_t, I_ASC, I_ASC, I_MAY_ENTER_ASC)
TOP_FN(bottom_i64, int64_t, I_ASC, I_ASC, I_MAY_ENTER_ASC)
TOP_FN(bottom_f32, float, F_ASC, F_ASC, F_MAY_ENTER_ASC)
TOP_FN(bottom_f64, double, F_ASC, F_ASC, F_MAY_ENTER_ASC)

/* By direction (descending 1) and dtype, in weft_dtype order. */
static const sort_fn sorts[2][5] = {
    { asc_b, asc_i32, asc_i64, asc_f32, asc_f64 },
    { desc_b, desc_i32, desc_i64, desc_f32, desc_f64 },
};
static const corank_fn coranks[2][5] = {
    { asc_b_corank, asc_i32_corank, asc_i64_corank, asc_f32_corank, asc_f64_corank },
    { desc_b_corank, desc_i32_corank, desc_i64_corank, desc_f32_corank, desc_f64_corank },
};
static const merge_fn merges[2][5] = {
    { asc_b_merge_into, asc_i32_merge_into, asc_i64_merge_into, asc_f32_merge_into,
      asc_f64_merge_into },
    { desc_b_merge_into, desc_i32_merge_into, desc_i64_merge_into, desc_f32_merge_into,
      desc_f64_merge_into },
};
static const top_fn tops[2][5] = {
    { bottom_b, bottom_i32, bottom_i64, bottom_f32, bottom_f64 },
    { top_b, top_i32, top_i64, top_f32, top_f64 },
};

/* n elements of esize bytes from src (every sstride-th) to dst (every
 * dstride-th). */
static void copy_strided(const char *src, int64_t sstride, char *dst, int64_t dstride, int64_t n,
                         size_t esize)
{
    if (sstride == 1 && dstride == 1) {
        memmove(dst, src, (size_t)n * esize);
        return;
    }
#define COPY_STRIDED(T)                                                                     \
    for (int64_t i = 0; i < n; i++)                                                         \
        memcpy(dst + (size_t)(i * dstride) * sizeof(T),                                     \
               src + (size_t)(i * sstride) * sizeof(T), sizeof(T))
    /* A constant size per dtype, so that each copy is one load and store. */
    if (esize == 1)
        COPY_STRIDED(uint8_t);
    else if (esize == 4)
        COPY_STRIDED(uint32_t);
    else
        COPY_STRIDED(uint64_t);
#undef COPY_STRIDED
}

static void iota(int64_t *ix, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        ix[i] = i;
}

/* ---- sort and argsort -------------------------------------------------- */

typedef struct sort_job {
    weft_runtime *rt;
    sort_fn sort;
    corank_fn corank;
    merge_fn merge;
    bool argsort;
    size_t segments;            /* > 1: each row sorted in that many parts at once */
    const char *src;
    char *dst;
    size_t esize;
    int64_t len, inner, rows;   /* rows: the outer dims times inner */
    char *scratch;              /* per chunk: ix, tix (len i64 each), keys, tmp */
    size_t scratch_per_chunk;
    size_t chunks;
} sort_job;

/* ---- One long row over the workers ------------------------------------
 *
 * A row of at least SPLIT_MIN elements, when there are fewer rows than
 * threads, is cut into a power of two of segments sorted at once, which
 * are then merged pairwise, level by level, each level's merges at once.
 * A stable sort's result is unique, so the cut changes no bit. */
#define SPLIT_MIN ((int64_t)1 << 16)
#define SEGMENT_MIN ((int64_t)1 << 13)

typedef struct split_sort {
    const sort_job *j;
    char *v, *tmp;              /* the row and its scratch, len elements each */
    int64_t *ix, *tix;          /* argsort's indices and their scratch; else NULL */
    int64_t len;
    size_t width;               /* merges: segments per run */
    bool to_tmp;                /* merges: from v into tmp, or back */
} split_sort;

static int64_t segment_begin(const split_sort *s, size_t g)
{
    return (int64_t)weft__chunk_begin((uint64_t)s->len, s->j->segments, g);
}

static int sort_segments(size_t begin, size_t end, void *ctx)
{
    const split_sort *s = ctx;
    size_t es = s->j->esize;
    for (size_t g = begin; g < end; g++) {
        int64_t lo = segment_begin(s, g), n = segment_begin(s, g + 1) - lo;
        s->j->sort(s->v + (size_t)lo * es, s->ix ? s->ix + lo : NULL, s->tmp + (size_t)lo * es,
                   s->tix ? s->tix + lo : NULL, n);
    }
    return 0;
}

/* Part p of a level's merges: every merge is cut into 2 * width parts of
 * its output (as many parts as segments in all), each finding where its
 * part starts and ends in both runs by their coranks, so that the last
 * merges run on every thread too. */
static int merge_runs(size_t begin, size_t end, void *ctx)
{
    const split_sort *s = ctx;
    const char *src = s->to_tmp ? s->v : s->tmp;
    char *dst = s->to_tmp ? s->tmp : s->v;
    const int64_t *isrc = s->to_tmp ? s->ix : s->tix;
    int64_t *idst = s->to_tmp ? s->tix : s->ix;
    size_t es = s->j->esize, parts = 2 * s->width;
    for (size_t p = begin; p < end; p++) {
        size_t g = p / parts * parts;   /* the merge's first segment */
        int64_t lo = segment_begin(s, g), mid = segment_begin(s, g + s->width);
        int64_t hi = segment_begin(s, g + parts), na = mid - lo, nb = hi - mid;
        int64_t k0 = (int64_t)weft__chunk_begin((uint64_t)(hi - lo), parts, p % parts);
        int64_t k1 = (int64_t)weft__chunk_begin((uint64_t)(hi - lo), parts, p % parts + 1);
        const char *a = src + (size_t)lo * es, *b = src + (size_t)mid * es;
        int64_t i0 = s->j->corank(a, na, b, nb, k0), i1 = s->j->corank(a, na, b, nb, k1);
        int64_t j0 = k0 - i0, j1 = k1 - i1;
        s->j->merge(a + (size_t)i0 * es, isrc ? isrc + lo + i0 : NULL, i1 - i0,
                    b + (size_t)j0 * es, isrc ? isrc + mid + j0 : NULL, j1 - j0,
                    dst + (size_t)(lo + k0) * es, idst ? idst + lo + k0 : NULL);
    }
    return 0;
}

/* Sorts one row as j->sort does, its segments and merges over the
 * workers; the result back in v. */
static int split_sort_row(const sort_job *j, char *v, int64_t *ix, char *tmp, int64_t *tix,
                          int64_t len)
{
    split_sort s = { .j = j, .v = v, .tmp = tmp, .ix = ix, .tix = ix ? tix : NULL, .len = len };
    int rc = weft_parallel_for(j->rt, j->segments, 1, sort_segments, &s);
    for (s.width = 1; rc == 0 && s.width < j->segments; s.width *= 2) {
        s.to_tmp = !s.to_tmp;   /* the segments' sorts left v; each level flips */
        rc = weft_parallel_for(j->rt, j->segments, 1, merge_runs, &s);
    }
    if (rc == 0 && s.to_tmp) {   /* the last level wrote tmp */
        memcpy(v, tmp, (size_t)len * j->esize);
        if (ix)
            memcpy(ix, tix, sizeof *ix * (size_t)len);
    }
    return rc;
}

/* The segments of each row: a power of two up to twice the threads, each
 * of at least SEGMENT_MIN elements; 1 (no split) for rows shorter than
 * SPLIT_MIN or at least as many as the threads. */
static size_t split_segments(weft_runtime *rt, int64_t rows, int64_t len)
{
    unsigned threads = rt ? weft__intra_op_threads(rt) : 1;
    if (threads <= 1 || rows >= (int64_t)threads || len < SPLIT_MIN)
        return 1;
    size_t segs = 1;
    while (segs < 2 * (size_t)threads && len / (int64_t)(2 * segs) >= SEGMENT_MIN)
        segs *= 2;
    return segs;
}

static int row_sort(const sort_job *j, char *v, int64_t *ix, char *tmp, int64_t *tix,
                    int64_t len)
{
    if (j->segments > 1)
        return split_sort_row(j, v, ix, tmp, tix, len);
    j->sort(v, ix, tmp, tix, len);
    return 0;
}

/* Row r: len elements from element (r / inner) * len * inner + r % inner,
 * inner apart. */
static int sort_row(const sort_job *j, int64_t r, char *scratch)
{
    int64_t len = j->len, inner = j->inner;
    int64_t at = (r / inner) * len * inner + r % inner;
    int64_t *ix = (int64_t *)(void *)scratch, *tix = ix + len;
    char *keys = (char *)(tix + len), *tmp = keys + (size_t)len * j->esize;
    const char *src = j->src + (size_t)at * j->esize;
    if (!j->argsort && inner == 1) {   /* sorted in the output itself */
        char *row = j->dst + (size_t)at * j->esize;
        if (row != src)
            memcpy(row, src, (size_t)len * j->esize);
        return row_sort(j, row, NULL, tmp, NULL, len);
    }
    copy_strided(src, inner, keys, 1, len, j->esize);
    if (!j->argsort) {
        int rc = row_sort(j, keys, NULL, tmp, NULL, len);
        copy_strided(keys, 1, j->dst + (size_t)at * j->esize, inner, len, j->esize);
        return rc;
    }
    iota(ix, len);
    int rc = row_sort(j, keys, ix, tmp, tix, len);
    copy_strided((const char *)ix, 1, j->dst + (size_t)at * sizeof(int64_t), inner, len,
                 sizeof(int64_t));
    return rc;
}

static int sort_chunk(size_t cb, size_t ce, void *ctx)
{
    const sort_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        char *scratch = j->scratch + c * j->scratch_per_chunk;
        uint64_t b = weft__chunk_begin((uint64_t)j->rows, j->chunks, c);
        uint64_t e = weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1);
        for (uint64_t r = b; r < e; r++) {
            int rc = sort_row(j, (int64_t)r, scratch);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Scratch of len elements of esize plus two of i64, per chunk, rounded up
 * to 8 bytes so that every chunk's i64 arrays are aligned. */
static int alloc_scratch(const weft__node *n, int64_t len, size_t esize, size_t chunks,
                         char **scratch, size_t *per_chunk)
{
    *per_chunk = ((size_t)len * (2 * esize + 2 * sizeof(int64_t)) + 7) & ~(size_t)7;
    *scratch = weft__malloc(*per_chunk * chunks);
    if (!*scratch)
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory for %lld elements of scratch",
                            weft__op_name(n->op), (long long)len);
    return 0;
}

int weft__eval_sort(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                    weft_tensor *out)
{
    sort_job j;
    memset(&j, 0, sizeof j);
    int axis = n->attr.sort.axis < 0 ? n->attr.sort.axis + a->rank : n->attr.sort.axis;
    j.len = a->dims[axis];
    j.inner = 1;
    for (int d = axis + 1; d < a->rank; d++)
        j.inner *= a->dims[d];
    if (a->numel == 0)
        return 0;
    j.rows = a->numel / j.len;
    j.rt = rt;
    j.sort = sorts[n->attr.sort.descending ? 1 : 0][a->dtype];
    j.corank = coranks[n->attr.sort.descending ? 1 : 0][a->dtype];
    j.merge = merges[n->attr.sort.descending ? 1 : 0][a->dtype];
    j.argsort = n->op == WEFT__OP_ARGSORT;
    j.src = weft_tensor_data(a);
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(a->dtype);
    j.chunks = weft__chunk_count(rt, (uint64_t)a->numel);
    if (j.chunks > (uint64_t)j.rows)
        j.chunks = (size_t)j.rows;
    j.segments = split_segments(rt, j.rows, j.len);
    if (j.segments > 1)
        j.chunks = 1;   /* the rows one after another, each over the workers */
    int rc = alloc_scratch(n, j.len, j.esize, j.chunks, &j.scratch, &j.scratch_per_chunk);
    if (rc == 0)
        rc = weft__run_chunks(rt, j.chunks, sort_chunk, &j);
    weft__free(j.scratch);
    return rc;
}

/* ---- top_k ------------------------------------------------------------- */

typedef struct top_job {
    sort_fn sort;      /* in the node's direction, for k above TOP_K_SMALL */
    top_fn top;
    const char *src;
    int64_t *dst;
    size_t esize;
    int64_t len, k, rows;
    char *scratch;
    size_t scratch_per_chunk;
    size_t chunks;
} top_job;

static void top_row(const top_job *j, int64_t r, char *scratch)
{
    int64_t len = j->len, k = j->k;
    const char *src = j->src + (size_t)(r * len) * j->esize;
    int64_t *out = j->dst + r * k;
    int64_t *ix = (int64_t *)(void *)scratch, *tix = ix + len;
    char *keys = (char *)(tix + len), *tmp = keys + (size_t)len * j->esize;
    if (k <= TOP_K_SMALL) {
        j->top(src, len, k, keys, out);
        return;
    }
    memcpy(keys, src, (size_t)len * j->esize);
    iota(ix, len);
    j->sort(keys, ix, tmp, tix, len);
    memcpy(out, ix, sizeof(int64_t) * (size_t)k);
}

static int top_chunk(size_t cb, size_t ce, void *ctx)
{
    const top_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        char *scratch = j->scratch + c * j->scratch_per_chunk;
        uint64_t b = weft__chunk_begin((uint64_t)j->rows, j->chunks, c);
        uint64_t e = weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1);
        for (uint64_t r = b; r < e; r++)
            top_row(j, (int64_t)r, scratch);
    }
    return 0;
}

int weft__eval_top_k(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                     weft_tensor *out)
{
    top_job j;
    memset(&j, 0, sizeof j);
    j.len = a->dims[a->rank - 1];
    j.k = n->attr.sort.k;
    if (out->numel == 0)
        return 0;   /* k == 0 or no rows */
    j.rows = out->numel / j.k;
    j.sort = sorts[n->attr.sort.descending ? 1 : 0][a->dtype];
    j.top = tops[n->attr.sort.descending ? 1 : 0][a->dtype];
    j.src = weft_tensor_data(a);
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(a->dtype);
    j.chunks = weft__chunk_count(rt, (uint64_t)a->numel);
    if (j.chunks > (uint64_t)j.rows)
        j.chunks = (size_t)j.rows;
    int rc = alloc_scratch(n, j.len, j.esize, j.chunks, &j.scratch, &j.scratch_per_chunk);
    if (rc == 0)
        rc = weft__run_chunks(rt, j.chunks, top_chunk, &j);
    weft__free(j.scratch);
    return rc;
}

/* ---- top_k's values ---------------------------------------------------- */

typedef struct pick_job {
    const char *src;
    const int64_t *idx;
    char *dst;
    size_t esize;
    int64_t len, k, total;
    size_t chunks;
} pick_job;

static int pick_chunk(size_t cb, size_t ce, void *ctx)
{
    const pick_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin((uint64_t)j->total, j->chunks, c);
        uint64_t e = weft__chunk_begin((uint64_t)j->total, j->chunks, c + 1);
        for (uint64_t i = b; i < e; i++) {
            int64_t row = (int64_t)i / j->k;
            size_t from = (size_t)(row * j->len + j->idx[i]);
            memcpy(j->dst + i * j->esize, j->src + from * j->esize, j->esize);
        }
    }
    return 0;
}

int weft__eval_top_k_values(weft_runtime *rt, const weft_tensor *a, const weft_tensor *idx,
                            weft_tensor *out)
{
    pick_job j;
    memset(&j, 0, sizeof j);
    if (out->numel == 0)
        return 0;
    j.src = weft_tensor_data(a);
    j.idx = weft_tensor_data(idx);
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(a->dtype);
    j.len = a->dims[a->rank - 1];
    j.k = idx->dims[idx->rank - 1];
    j.total = out->numel;
    j.chunks = weft__chunk_count(rt, (uint64_t)j.total);
    return weft__run_chunks(rt, j.chunks, pick_chunk, &j);
}

/* ---- searchsorted ------------------------------------------------------ */

/* For each value, the first index of its row of the sorted sequence at
 * which it could be inserted keeping the order: before the first element
 * not before it (left) or before the first element it is before (right),
 * in the ascending order of weft_sort (NaN last). */
#define SEARCH_FN(NAME, T, BEFORE)                                                        \
    static void NAME(const void *seq_, int64_t n, const void *val_, int64_t m, bool right, \
                     int64_t *out)                                                        \
    {                                                                                     \
        const T *seq = seq_, *val = val_;                                                 \
        for (int64_t i = 0; i < m; i++) {                                                 \
            T x = val[i];                                                                 \
            int64_t lo = 0, hi = n;                                                       \
            while (lo < hi) {                                                             \
                int64_t mid = lo + (hi - lo) / 2;                                         \
                bool go_right = right ? !BEFORE(x, seq[mid]) : BEFORE(seq[mid], x);       \
                if (go_right)                                                             \
                    lo = mid + 1;                                                         \
                else                                                                      \
                    hi = mid;                                                             \
            }                                                                             \
            out[i] = lo;                                                                  \
        }                                                                                 \
    }
SEARCH_FN(search_i32, int32_t, I_ASC)
SEARCH_FN(search_i64, int64_t, I_ASC)
SEARCH_FN(search_f32, float, F_ASC)
SEARCH_FN(search_f64, double, F_ASC)

typedef void (*search_fn)(const void *seq, int64_t n, const void *val, int64_t m, bool right,
                          int64_t *out);

typedef struct search_job {
    search_fn search;
    const char *seq, *val;
    int64_t *out;
    int64_t n, m, rows;   /* row length of seq and of the values, rows */
    int64_t seq_stride;   /* elements from one row of seq to the next: 0 for a vector */
    size_t esize, chunks;
    bool right;
} search_job;

/* Chunks own whole value rows. */
static int search_chunk(size_t cb, size_t ce, void *ctx)
{
    const search_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin((uint64_t)j->rows, j->chunks, c);
        uint64_t e = weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1);
        for (uint64_t r = b; r < e; r++)
            j->search(j->seq + r * (uint64_t)j->seq_stride * j->esize, j->n,
                      j->val + r * (uint64_t)j->m * j->esize, j->m, j->right,
                      j->out + r * (uint64_t)j->m);
    }
    return 0;
}

int weft__eval_searchsorted(weft_runtime *rt, const weft__node *n, const weft_tensor *seq,
                            const weft_tensor *val, weft_tensor *out)
{
    search_job j = { .seq = weft_tensor_data(seq), .val = weft_tensor_data(val),
                     .out = weft__tensor_mut(out), .esize = weft_dtype_size(seq->dtype),
                     .right = n->attr.index.kind != 0 };
    j.n = seq->dims[seq->rank - 1];
    j.m = val->rank == 0 ? 1 : val->dims[val->rank - 1];   /* a scalar is a row of one */
    j.seq_stride = seq->rank == 1 ? 0 : j.n;
    if (out->numel == 0)
        return 0;
    j.rows = val->numel / j.m;
    switch (seq->dtype) {
    case WEFT_I32: j.search = search_i32; break;
    case WEFT_I64: j.search = search_i64; break;
    case WEFT_F32: j.search = search_f32; break;
    default:       j.search = search_f64; break;
    }
    /* About log2(n) comparisons a value. */
    uint64_t depth = 1;
    while (depth < 64 && ((uint64_t)1 << depth) < (uint64_t)j.n)
        depth++;
    j.chunks = weft__chunk_count_of(rt, weft__sat_mul((uint64_t)out->numel, depth),
                                    (uint64_t)j.rows);
    return weft__run_chunks(rt, j.chunks, search_chunk, &j);
}
