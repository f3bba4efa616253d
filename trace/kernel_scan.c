/* Kernels that walk an axis in order: argmax/argmin (the first index of
 * the extreme value; a NaN counts as the extreme, like NumPy), cumsum and
 * cumprod.
 *
 * Both see the input as [outer, len, inner] around the axis and work on
 * column blocks of up to COL_BLOCK lanes at once, so that each row of a
 * block is read contiguously.  Chunks take whole (outer, block) items;
 * argmax/argmin may also cut a long axis into pieces whose winners are
 * merged in order, which gives the same index.  The scans never cut the
 * axis: every element is the same in-order sum or product whatever the
 * thread count (integers wrap; f32 computes in f64 and rounds each
 * result). */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* Lanes (columns) one item keeps at once: as many as fit the stack
 * arrays, so that each row is read in long runs (a column block of 256
 * f32 read 1 KiB every 8 KiB row of a f32[2048,2048] and ran 8 times
 * slower than a C loop over whole rows), but narrower when the outer dims
 * alone would give the chunks too few items. */
#define COL_BLOCK_MIN 256
#define COL_BLOCK 2048

typedef struct axis_layout {
    int64_t outer, len, inner;
    int64_t width, col_blocks;   /* lanes per item, items per outer index */
} axis_layout;

/* The layout around axis for a kernel cut into `chunks` chunks. */
static void layout_of(const weft_tensor *a, int axis, size_t chunks, axis_layout *l)
{
    l->outer = 1;
    l->inner = 1;
    if (axis == WEFT_ALL_AXES) {
        l->len = a->numel;
    } else {
        if (axis < 0)
            axis += a->rank;   /* range checked by inference */
        for (int d = 0; d < axis; d++)
            l->outer *= a->dims[d];
        l->len = a->dims[axis];
        for (int d = axis + 1; d < a->rank; d++)
            l->inner *= a->dims[d];
    }
    /* A zero dim before axis leaves no items (the callers return before
     * reading any), but must not divide by zero here. */
    int64_t per_outer = l->outer >= (int64_t)chunks || l->outer == 0
                            ? 1 : ((int64_t)chunks + l->outer - 1) / l->outer;
    l->width = (l->inner + per_outer - 1) / per_outer;
    l->width = l->width < COL_BLOCK_MIN ? COL_BLOCK_MIN : l->width > COL_BLOCK ? COL_BLOCK : l->width;
    l->col_blocks = (l->inner + l->width - 1) / l->width;
}

/* Item it of the (outer, column block) items: its outer index, first
 * column and column count. */
static void item_at(const axis_layout *l, uint64_t it, int64_t *o, int64_t *c0, int64_t *nc)
{
    *o = (int64_t)(it / (uint64_t)l->col_blocks);
    *c0 = (int64_t)(it % (uint64_t)l->col_blocks) * l->width;
    *nc = l->inner - *c0 < l->width ? l->inner - *c0 : l->width;
}

/* ---- argmax / argmin --------------------------------------------------- */

/* Scans rows [0, len) of ncols lanes (row r at src + r * stride) into the
 * running winners best[] / at[] (at < 0: none yet); row r has index r0 + r.
 * merge folds one set of winners (from later rows) into another. */
typedef void (*arg_scan_fn)(const void *src, int64_t len, int64_t stride, int64_t ncols,
                            int64_t r0, void *best, int64_t *at);
typedef void (*arg_merge_fn)(const void *best_in, const int64_t *at_in, int64_t n, void *best,
                             int64_t *at);

#define GT(x, b) ((x) > (b))
#define LT(x, b) ((x) < (b))
/* Floats: a NaN beats anything but an earlier NaN. */
#define FGT(x, b) ((x) > (b) || ((x) != (x) && (b) == (b)))
#define FLT(x, b) ((x) < (b) || ((x) != (x) && (b) == (b)))

#define ARG_FNS(NAME, T, BETTER)                                                           \
    static void NAME##_scan(const void *src_, int64_t len, int64_t stride, int64_t ncols,  \
                            int64_t r0, void *best_, int64_t *at)                          \
    {                                                                                      \
        const T *src = src_;                                                               \
        T *best = best_;                                                                   \
        for (int64_t r = 0; r < len; r++) {                                                \
            const T *row = src + r * stride;                                               \
            for (int64_t c = 0; c < ncols; c++) {                                          \
                T x = row[c];                                                              \
                if (at[c] < 0 || BETTER(x, best[c])) {                                     \
                    best[c] = x;                                                           \
                    at[c] = r0 + r;                                                        \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void NAME##_merge(const void *best_in_, const int64_t *at_in, int64_t n,        \
                             void *best_, int64_t *at)                                     \
    {                                                                                      \
        const T *best_in = best_in_;                                                       \
        T *best = best_;                                                                   \
        for (int64_t c = 0; c < n; c++)                                                    \
            if (at_in[c] >= 0 && (at[c] < 0 || BETTER(best_in[c], best[c]))) {             \
                best[c] = best_in[c];                                                      \
                at[c] = at_in[c];                                                          \
            }                                                                              \
    }

ARG_FNS(max_b, uint8_t, GT)
ARG_FNS(max_i32, int32_t, GT)
ARG_FNS(max_i64, int64_t, GT)
ARG_FNS(max_f32, float, FGT)
ARG_FNS(max_f64, double, FGT)
ARG_FNS(min_b, uint8_t, LT)
ARG_FNS(min_i32, int32_t, LT)
ARG_FNS(min_i64, int64_t, LT)
ARG_FNS(min_f32, float, FLT)
ARG_FNS(min_f64, double, FLT)

static const arg_scan_fn arg_scans[2][5] = {
    { max_b_scan, max_i32_scan, max_i64_scan, max_f32_scan, max_f64_scan },
    { min_b_scan, min_i32_scan, min_i64_scan, min_f32_scan, min_f64_scan },
};
static const arg_merge_fn arg_merges[2][5] = {
    { max_b_merge, max_i32_merge, max_i64_merge, max_f32_merge, max_f64_merge },
    { min_b_merge, min_i32_merge, min_i64_merge, min_f32_merge, min_f64_merge },
};

typedef struct arg_job {
    arg_scan_fn scan;
    arg_merge_fn merge;
    axis_layout l;
    const char *src;
    size_t esize;
    int64_t *out;
    size_t chunks;
    char *part_best;       /* axis mode: chunks x (outer * inner) winners */
    int64_t *part_at;
} arg_job;

/* Rows [r0, r1) of item it into best/at. */
static void arg_item(const arg_job *j, uint64_t it, int64_t r0, int64_t r1, void *best,
                     int64_t *at)
{
    int64_t o, c0, nc;
    item_at(&j->l, it, &o, &c0, &nc);
    const char *p = j->src + (size_t)((o * j->l.len + r0) * j->l.inner + c0) * j->esize;
    j->scan(p, r1 - r0, j->l.inner, nc, r0, best, at);
}

/* Each chunk owns whole items. */
static int arg_chunk_items(size_t cb, size_t ce, void *ctx)
{
    const arg_job *j = ctx;
    uint64_t items = (uint64_t)j->l.outer * (uint64_t)j->l.col_blocks;
    uint64_t best[COL_BLOCK];
    int64_t at[COL_BLOCK];
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin(items, j->chunks, c);
        uint64_t e = weft__chunk_begin(items, j->chunks, c + 1);
        for (uint64_t it = b; it < e; it++) {
            int64_t o, c0, nc;
            item_at(&j->l, it, &o, &c0, &nc);
            for (int64_t k = 0; k < nc; k++)
                at[k] = -1;
            arg_item(j, it, 0, j->l.len, best, at);
            memcpy(j->out + o * j->l.inner + c0, at, sizeof(int64_t) * (size_t)nc);
        }
    }
    return 0;
}

/* Each chunk scans a piece of the axis for every item. */
static int arg_chunk_axis(size_t cb, size_t ce, void *ctx)
{
    const arg_job *j = ctx;
    int64_t n_out = j->l.outer * j->l.inner;
    for (size_t c = cb; c < ce; c++) {
        int64_t r0 = (int64_t)weft__chunk_begin((uint64_t)j->l.len, j->chunks, c);
        int64_t r1 = (int64_t)weft__chunk_begin((uint64_t)j->l.len, j->chunks, c + 1);
        char *best = j->part_best + (size_t)c * (size_t)n_out * j->esize;
        int64_t *at = j->part_at + (size_t)c * (size_t)n_out;
        for (int64_t k = 0; k < n_out; k++)
            at[k] = -1;
        uint64_t items = (uint64_t)j->l.outer * (uint64_t)j->l.col_blocks;
        for (uint64_t it = 0; it < items; it++) {
            int64_t o, c0, nc;
            item_at(&j->l, it, &o, &c0, &nc);
            int64_t off = o * j->l.inner + c0;
            arg_item(j, it, r0, r1, best + (size_t)off * j->esize, at + off);
        }
    }
    return 0;
}

int weft__eval_arg_extreme(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                           weft_tensor *out)
{
    arg_job j;
    memset(&j, 0, sizeof j);
    int dir = n->op == WEFT__OP_ARGMIN;
    j.scan = arg_scans[dir][a->dtype];
    j.merge = arg_merges[dir][a->dtype];
    j.chunks = weft__chunk_count(rt, (uint64_t)a->numel);
    layout_of(a, n->attr.axis.axis, j.chunks, &j.l);
    j.src = weft_tensor_data(a);
    j.esize = weft_dtype_size(a->dtype);
    j.out = weft__tensor_mut(out);
    if (j.l.outer == 0 || j.l.inner == 0)
        return 0;   /* no outputs (inference refused an empty axis) */
    uint64_t items = (uint64_t)j.l.outer * (uint64_t)j.l.col_blocks;
    if (j.chunks > 1 && items < j.chunks && (uint64_t)j.l.len >= 2 * (uint64_t)j.chunks) {
        size_t n_out = (size_t)(j.l.outer * j.l.inner);
        j.part_best = weft__malloc(n_out * j.chunks * j.esize);
        j.part_at = weft__malloc(n_out * j.chunks * sizeof *j.part_at);
        int rc = WEFT_ENOMEM;
        if (j.part_best && j.part_at)
            rc = weft__run_chunks(rt, j.chunks, arg_chunk_axis, &j);
        else
            weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
        if (rc == 0) {
            /* In chunk order, so a tie keeps the earlier index. */
            for (size_t c = 1; c < j.chunks; c++)
                j.merge(j.part_best + c * n_out * j.esize, j.part_at + c * n_out, (int64_t)n_out,
                        j.part_best, j.part_at);
            memcpy(j.out, j.part_at, n_out * sizeof *j.part_at);
        }
        weft__free(j.part_best);
        weft__free(j.part_at);
        return rc;
    }
    if (items < j.chunks)
        j.chunks = (size_t)items;
    return weft__run_chunks(rt, j.chunks, arg_chunk_items, &j);
}

/* ---- cumsum and cumprod ------------------------------------------------- */

/* Rows [0, len) of ncols lanes (row r at src + r * stride, and likewise in
 * dst; a reverse scan passes the last row and a negative stride),
 * combining into acc and storing each running result, or (exclusive) the
 * one before it.  Each element is read before its own result is stored,
 * so the scan may run in place. */
typedef void (*scan_fn)(const void *src, void *dst, int64_t len, int64_t stride, int64_t ncols,
                        void *acc, bool exclusive);

#define SCAN_FN(NAME, T, A, TO, STORE, COMBINE)                                             \
    static void NAME(const void *src_, void *dst_, int64_t len, int64_t stride,            \
                     int64_t ncols, void *acc_, bool exclusive)                            \
    {                                                                                      \
        const T *src = src_;                                                               \
        TO *dst = dst_;                                                                    \
        A *restrict acc = acc_;                                                            \
        for (int64_t r = 0; r < len; r++) {                                                \
            const T *row = src + r * stride;                                               \
            TO *orow = dst + r * stride;                                                   \
            for (int64_t c = 0; c < ncols; c++) {                                          \
                A before = acc[c], after = COMBINE(before, (A)row[c]);                     \
                acc[c] = after;                                                            \
                orow[c] = STORE(exclusive ? before : after);                               \
            }                                                                              \
        }                                                                                  \
    }

#define STORE_I32(a) ((int32_t)(uint32_t)(a))
#define STORE_I64(a) ((int64_t)(a))
#define STORE_F(a) (a)
#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))

/* log(exp(a) + exp(b)) without overflow: the larger plus log1p of the
 * other's exp relative to it.  Two -infs give -inf (the empty sum) and
 * two +infs +inf, where the difference of the infinities would be NaN; a
 * NaN stays NaN. */
static inline double log_add_exp(double a, double b)
{
    double hi = a > b ? a : b, lo = a > b ? b : a;
    if (isnan(a) || isnan(b))
        return a + b;
    if (isinf(hi) && hi == lo)
        return hi;
    return hi + log1p(exp(lo - hi));
}

/* Integers combine in uint64_t (wrapping); a signed input is widened first
 * so that the low bits are the wrapped result in its own type. */
SCAN_FN(cumsum_b, uint8_t, uint64_t, int64_t, STORE_I64, ADD)
SCAN_FN(cumsum_i32, int32_t, uint64_t, int32_t, STORE_I32, ADD)
SCAN_FN(cumsum_i64, int64_t, uint64_t, int64_t, STORE_I64, ADD)
SCAN_FN(cumsum_f32, float, double, float, (float)STORE_F, ADD)
SCAN_FN(cumsum_f64, double, double, double, STORE_F, ADD)
SCAN_FN(cumprod_b, uint8_t, uint64_t, int64_t, STORE_I64, MUL)
SCAN_FN(cumprod_i32, int32_t, uint64_t, int32_t, STORE_I32, MUL)
SCAN_FN(cumprod_i64, int64_t, uint64_t, int64_t, STORE_I64, MUL)
SCAN_FN(cumprod_f32, float, double, float, (float)STORE_F, MUL)
SCAN_FN(cumprod_f64, double, double, double, STORE_F, MUL)
SCAN_FN(cumlse_f32, float, double, float, (float)STORE_F, log_add_exp)
SCAN_FN(cumlse_f64, double, double, double, STORE_F, log_add_exp)

/* By op (sum, product, log-sum-exp) and dtype; log-sum-exp takes floats
 * only (its inference refuses the others). */
static const scan_fn scans[3][5] = {
    { cumsum_b, cumsum_i32, cumsum_i64, cumsum_f32, cumsum_f64 },
    { cumprod_b, cumprod_i32, cumprod_i64, cumprod_f32, cumprod_f64 },
    { NULL, NULL, NULL, cumlse_f32, cumlse_f64 },
};

typedef struct scan_job {
    scan_fn fn;
    axis_layout l;
    const char *src;
    char *dst;
    size_t esize, out_esize;
    size_t chunks;
    uint64_t init;      /* the accumulators' start: 0, or 1 in the accumulator's type */
    bool exclusive, reverse;
} scan_job;

static int scan_chunk(size_t cb, size_t ce, void *ctx)
{
    const scan_job *j = ctx;
    uint64_t items = (uint64_t)j->l.outer * (uint64_t)j->l.col_blocks;
    uint64_t acc[COL_BLOCK];
    /* A reverse scan starts at the axis's last row and steps back. */
    int64_t first_row = j->reverse ? j->l.len - 1 : 0;
    int64_t stride = j->reverse ? -j->l.inner : j->l.inner;
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin(items, j->chunks, c);
        uint64_t e = weft__chunk_begin(items, j->chunks, c + 1);
        for (uint64_t it = b; it < e; it++) {
            int64_t o, c0, nc;
            item_at(&j->l, it, &o, &c0, &nc);
            for (int64_t k = 0; k < nc; k++)
                acc[k] = j->init;
            size_t at = (size_t)((o * j->l.len + first_row) * j->l.inner + c0);
            j->fn(j->src + at * j->esize, j->dst + at * j->out_esize, j->l.len, stride, nc, acc,
                  j->exclusive);
        }
    }
    return 0;
}

int weft__eval_cumsum(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      weft_tensor *out)
{
    scan_job j;
    memset(&j, 0, sizeof j);
    int kind = n->op == WEFT__OP_CUMPROD ? 1 : n->op == WEFT__OP_CUMLOGSUMEXP ? 2 : 0;
    j.fn = scans[kind][a->dtype];
    j.exclusive = n->attr.axis.scan & WEFT_SCAN_EXCLUSIVE;
    j.reverse = n->attr.axis.scan & WEFT_SCAN_REVERSE;
    /* The combine's identity as the accumulator holds it: 1 for products
     * (a double for floats), -inf for log-sum-exp, else 0. */
    bool floats = a->dtype == WEFT_F32 || a->dtype == WEFT_F64;
    double identity = kind == 1 ? 1.0 : kind == 2 ? -INFINITY : 0.0;
    if (floats)
        memcpy(&j.init, &identity, sizeof identity);
    else
        j.init = kind == 1;
    j.chunks = weft__chunk_count(rt, (uint64_t)a->numel);
    layout_of(a, n->attr.axis.axis, j.chunks, &j.l);
    if (j.l.outer == 0 || j.l.inner == 0 || j.l.len == 0)
        return 0;
    j.src = weft_tensor_data(a);
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(a->dtype);
    j.out_esize = weft_dtype_size(out->dtype);
    uint64_t items = (uint64_t)j.l.outer * (uint64_t)j.l.col_blocks;
    if (items < j.chunks)
        j.chunks = (size_t)items;
    return weft__run_chunks(rt, j.chunks, scan_chunk, &j);
}
