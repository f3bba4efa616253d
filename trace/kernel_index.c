/* Kernels of the indexing ops (weft__eval_index_op): unsorted_segment,
 * gather_nd, scatter_nd_update / scatter_nd_add, roll and repeat.
 *
 * Each sees its tensors as rows of `inner` elements.  Indices are checked
 * and turned into row numbers first, in index order, so that an error
 * names the first bad index whatever the chunking.  The ops that combine
 * several rows into one (segments, scatters) never race: a chunk owns a
 * range of output rows or a range of columns, and walks every input row in
 * index order, so each output element sees its inputs in that one order on
 * any worker count.  A segment reduction into few accumulators splits the
 * input rows instead (parts of a size set by the row count alone, merged
 * in row order): the same bits on any worker count, in another order than
 * one pass. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/copy.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* The segment combines run a row's columns as a loop of unknown length,
 * which gcc 12's -O2 ("very cheap" cost model) leaves scalar: ask for the
 * full vectorizer here, as kernel_ew.c does. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* Columns per chunk below which chunks own output rows instead. */
#define COLS_PER_CHUNK_MIN 64

static const char *op_fn(const weft__node *n, char *buf, size_t size)
{
    snprintf(buf, size, "weft_%s", weft__op_name(n->op));
    return buf;
}

static int oom(const weft__node *n)
{
    return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
}

/* Scratch from the tensor buffers' cache (trace/tensor_impl.h): a
 * multi-megabyte block freshly mapped at each call pays a page fault per
 * 4 KiB, which costs more than the kernel's own pass over it. */
typedef struct scratch {
    void  *p;
    size_t cap;
} scratch;

static void *scratch_get(scratch *s, size_t bytes)
{
    s->p = weft__tensor_buf_alloc(bytes ? bytes : 1, &s->cap);
    return s->p;
}

static void scratch_put(scratch *s)
{
    if (s->p)
        weft__tensor_buf_free(s->p, s->cap);
    s->p = NULL;
}

/* ---- Index tuples to rows ---------------------------------------------- */

/* rows[i] = the row of a (row-major over its first k dims) that index
 * tuple i of idx (shape [..., k]) names; a negative entry counts from the
 * end of its dim.  An entry out of range is WEFT_EINVAL naming the tuple. */
static int tuple_rows(const weft__node *n, const weft_tensor *a, const weft_tensor *idx,
                      int64_t n_tuples, int k, int64_t *rows)
{
    for (int64_t i = 0; i < n_tuples; i++) {
        int64_t r = 0;
        for (int d = 0; d < k; d++) {
            int64_t v = weft__index_at(idx, i * k + d), dim = a->dims[d];
            int64_t w = v < 0 ? v + dim : v;
            if (w < 0 || w >= dim) {
                char fn[48], sa[WEFT__SPEC_STR_MAX];
                weft_spec s;
                weft__tensor_spec(a, &s);
                return weft__errorf(WEFT_EINVAL, "%s: index %lld (entry %d of index tuple %lld) "
                                    "is out of range for dim %d of %s",
                                    op_fn(n, fn, sizeof fn), (long long)v, d, (long long)i, d,
                                    weft__spec_str(&s, sa, sizeof sa));
            }
            r = r * dim + w;
        }
        rows[i] = r;
    }
    return 0;
}

/* The elements of a after its first k dims: one row. */
static int64_t inner_after(const weft_tensor *a, int k)
{
    int64_t inner = 1;
    for (int d = k; d < a->rank; d++)
        inner *= a->dims[d];
    return inner;
}

/* ---- Row copies: gather_nd, roll, repeat ------------------------------- */

/* Output row r (of `rows`, inner elements each) is source row src_row(r);
 * with n NULL, row r itself (a plain copy). */
typedef struct copy_job {
    const weft__node *n;
    const int64_t *table;     /* gather_nd: the source row of each output row */
    int64_t m_in, m_out;      /* roll, repeat: the axis before and after */
    const char *src;
    char *dst;
    size_t bytes;             /* of one row */
    uint64_t rows;
    size_t chunks;
} copy_job;

static int64_t src_row(const copy_job *j, uint64_t r)
{
    if (j->table)
        return j->table[r];
    int64_t o = (int64_t)(r / (uint64_t)j->m_out), i = (int64_t)(r % (uint64_t)j->m_out);
    if (j->n->op == WEFT__OP_REPEAT)
        return o * j->m_in + i / j->n->attr.index.count;
    /* roll: output i holds input i - shift (mod m), shift reduced first so
     * that no subtraction overflows. */
    int64_t s = j->n->attr.index.count % j->m_in;
    if (j->n->attr.index.kind)
        s += j->n->attr.index.kind == 1 ? j->m_in / 2 : -(j->m_in / 2);
    s = s % j->m_in;
    int64_t k = i - s;
    k = k < 0 ? k + j->m_in : k >= j->m_in ? k - j->m_in : k;
    return o * j->m_in + k;
}

static int copy_chunk(size_t cb, size_t ce, void *ctx)
{
    const copy_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t r0 = weft__chunk_begin(j->rows, j->chunks, c);
        uint64_t r1 = weft__chunk_begin(j->rows, j->chunks, c + 1);
        if (!j->n) {
            memcpy(j->dst + r0 * j->bytes, j->src + r0 * j->bytes, (r1 - r0) * j->bytes);
            continue;
        }
        for (uint64_t r = r0; r < r1; r++)
            weft__copy_bytes(j->dst + r * j->bytes, j->src + (size_t)src_row(j, r) * j->bytes,
                             j->bytes);
    }
    return 0;
}

static int run_copy(weft_runtime *rt, copy_job *j, const weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    j->chunks = weft__chunk_count_of(rt, (uint64_t)out->numel, j->rows);
    return weft__run_chunks(rt, j->chunks, copy_chunk, j);
}

/* Index tuples in idx (shape [..., k]): the product of its dims but the last. */
static int64_t tuple_count(const weft_tensor *idx)
{
    int64_t n = 1;
    for (int d = 0; d < idx->rank - 1; d++)
        n *= idx->dims[d];
    return n;
}

static int eval_gather_nd(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                          const weft_tensor *idx, weft_tensor *out)
{
    int k = (int)idx->dims[idx->rank - 1];
    int64_t n_tuples = tuple_count(idx);
    scratch rs;
    int64_t *rows = scratch_get(&rs, sizeof *rows * (size_t)n_tuples);
    if (!rows)
        return oom(n);
    int rc = tuple_rows(n, a, idx, n_tuples, k, rows);
    int64_t inner = inner_after(a, k);
    if (rc == 0 && inner > 0) {
        copy_job j = { .n = n, .table = rows, .src = weft_tensor_data(a),
                       .dst = weft__tensor_mut(out),
                       .bytes = (size_t)inner * weft_dtype_size(a->dtype),
                       .rows = (uint64_t)n_tuples };
        rc = run_copy(rt, &j, out);
    }
    scratch_put(&rs);
    return rc;
}

/* roll and repeat: [outer, m, inner] around the axis. */
static int eval_axis_copy(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                          weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    int axis = n->attr.index.axis < 0 ? n->attr.index.axis + a->rank : n->attr.index.axis;
    int64_t inner = inner_after(a, axis + 1);
    copy_job j = { .n = n, .m_in = a->dims[axis], .m_out = out->dims[axis],
                   .src = weft_tensor_data(a), .dst = weft__tensor_mut(out),
                   .bytes = (size_t)inner * weft_dtype_size(a->dtype),
                   .rows = (uint64_t)(out->numel / inner) };
    return run_copy(rt, &j, out);
}

/* ---- Combining rows: unsorted_segment, scatter_nd ---------------------- */

/* Each chunk owns output rows [r0, r1) and columns [c0, c1) of a region
 * it starts, fills from every input row in index order, and finishes. */
typedef struct comb_job {
    const weft__node *n;
    weft_dtype dt;
    const char *src;          /* input rows: data or updates */
    const int64_t *target;    /* the output row of each input row; < 0: none */
    int64_t n_in_rows, n_out_rows, inner;
    size_t esize;
    const int64_t *count;     /* unsorted_segment: input rows per segment */
    weft__acc *acc;           /* unsorted_segment: n_out_rows x inner */
    char *dst;
    bool by_cols;
    size_t chunks;
} comb_job;

/* The input rows and the accumulators one call of a comb_fn covers. */
typedef struct comb_span {
    int64_t i0, i1;           /* input rows, in index order */
    int64_t r0, r1, c0, c1;   /* output rows and columns */
    weft__acc *acc;           /* the accumulators of output row 0 */
} comb_span;

/* Combines every input row of [i0, i1) whose target is in [r0, r1), in
 * index order, into the accumulators' columns [c0, c1): acc[c] =
 * op(acc[c], x) with x of the input dtype.  One loop per op and dtype, so
 * that the row's columns are a loop the compiler can vectorize. */
typedef void (*comb_fn)(const comb_job *j, const comb_span *sp);

/* The accumulators are seen through their member M (an array of AT), not
 * as unions: gcc vectorizes no loop that accesses a union member. */
#define COMB(NAME, T, AT, M, STEP)                                                      \
    static void NAME(const comb_job *j, const comb_span *sp)                            \
    {                                                                                   \
        const T *src = (const T *)(const void *)j->src;                                 \
        int64_t r0 = sp->r0, r1 = sp->r1, c0 = sp->c0, c1 = sp->c1;                     \
        for (int64_t i = sp->i0; i < sp->i1; i++) {                                     \
            int64_t t = j->target[i];                                                   \
            if (t < r0 || t >= r1)                                                      \
                continue;                                                               \
            AT *restrict a = &sp->acc[t * j->inner].M;                                  \
            const T *restrict row = src + i * j->inner;                                 \
            for (int64_t c = c0; c < c1; c++) {                                         \
                T x = row[c];                                                           \
                STEP;                                                                   \
            }                                                                           \
        }                                                                               \
    }

/* Integers sum and multiply in uint64_t (wrapping); floats in double.
 * max / min keep a NaN once seen. */
COMB(sum_i32, int32_t, uint64_t, u, a[c] += (uint64_t)(int64_t)x)
COMB(sum_i64, int64_t, uint64_t, u, a[c] += (uint64_t)x)
COMB(sum_f32, float, double, d, a[c] += (double)x)
COMB(sum_f64, double, double, d, a[c] += x)
COMB(prod_i32, int32_t, uint64_t, u, a[c] *= (uint64_t)(int64_t)x)
COMB(prod_i64, int64_t, uint64_t, u, a[c] *= (uint64_t)x)
COMB(prod_f32, float, double, d, a[c] *= (double)x)
COMB(prod_f64, double, double, d, a[c] *= x)
COMB(max_i32, int32_t, int64_t, i, if (x > a[c]) a[c] = x)
COMB(max_i64, int64_t, int64_t, i, if (x > a[c]) a[c] = x)
COMB(max_f32, float, double, d, if (x > a[c] || x != x) a[c] = x)
COMB(max_f64, double, double, d, if (x > a[c] || x != x) a[c] = x)
COMB(min_i32, int32_t, int64_t, i, if (x < a[c]) a[c] = x)
COMB(min_i64, int64_t, int64_t, i, if (x < a[c]) a[c] = x)
COMB(min_f32, float, double, d, if (x < a[c] || x != x) a[c] = x)
COMB(min_f64, double, double, d, if (x < a[c] || x != x) a[c] = x)

/* Indexed [reduction][dtype - WEFT_I32]; bool has no segment op. */
static const comb_fn combs[5][4] = {
    [WEFT_R_SUM] = { sum_i32, sum_i64, sum_f32, sum_f64 },
    [WEFT_R_MEAN] = { sum_i32, sum_i64, sum_f32, sum_f64 },
    [WEFT_R_MAX] = { max_i32, max_i64, max_f32, max_f64 },
    [WEFT_R_MIN] = { min_i32, min_i64, min_f32, min_f64 },
    [WEFT_R_PROD] = { prod_i32, prod_i64, prod_f32, prod_f64 },
};


static void region_of(const comb_job *j, size_t c, int64_t *r0, int64_t *r1, int64_t *c0,
                      int64_t *c1)
{
    *r0 = 0;
    *r1 = j->n_out_rows;
    *c0 = 0;
    *c1 = j->inner;
    if (j->by_cols) {
        *c0 = (int64_t)weft__chunk_begin((uint64_t)j->inner, j->chunks, c);
        *c1 = (int64_t)weft__chunk_begin((uint64_t)j->inner, j->chunks, c + 1);
    } else {
        *r0 = (int64_t)weft__chunk_begin((uint64_t)j->n_out_rows, j->chunks, c);
        *r1 = (int64_t)weft__chunk_begin((uint64_t)j->n_out_rows, j->chunks, c + 1);
    }
}

static weft__acc seg_identity(int kind, weft_dtype dt)
{
    bool f = dt == WEFT_F32 || dt == WEFT_F64;
    weft__acc a = { .u = 0 };
    switch (kind) {
    case WEFT_R_PROD:
        if (f) a.d = 1.0; else a.u = 1;
        break;
    case WEFT_R_MAX:
        if (f) a.d = -(double)INFINITY; else a.i = INT64_MIN;
        break;
    case WEFT_R_MIN:
        if (f) a.d = (double)INFINITY; else a.i = INT64_MAX;
        break;
    default:
        break;
    }
    return a;
}

/* TensorFlow's value for a segment with no rows: 0 (sum, mean), 1
 * (prod), the dtype's lowest finite value (max) or highest (min); in an
 * accumulator as seg_store reads it (i for integers, d for floats). */
static weft__acc seg_empty(int kind, weft_dtype dt)
{
    bool f32 = dt == WEFT_F32, i32 = dt == WEFT_I32, f = f32 || dt == WEFT_F64;
    weft__acc a = { .u = 0 };
    switch (kind) {
    case WEFT_R_PROD:
        if (f) a.d = 1.0; else a.i = 1;
        break;
    case WEFT_R_MAX:
        if (f) a.d = f32 ? -FLT_MAX : -DBL_MAX; else a.i = i32 ? INT32_MIN : INT64_MIN;
        break;
    case WEFT_R_MIN:
        if (f) a.d = f32 ? FLT_MAX : DBL_MAX; else a.i = i32 ? INT32_MAX : INT64_MAX;
        break;
    default:
        break;
    }
    return a;
}

/* Stores segment row r's columns [c0, c1) from the accumulators: integer
 * max / min from i, sums and products from u (wrapped to the dtype),
 * floats from d. */
static void seg_store(const comb_job *j, int64_t r, int64_t c0, int64_t c1)
{
    int kind = j->n->attr.index.kind;
    int64_t cnt = j->count[r];
    bool by_i = kind == WEFT_R_MAX || kind == WEFT_R_MIN || cnt == 0;
    weft__acc e = seg_empty(kind, j->dt);
    const weft__acc *acc = j->acc + r * j->inner;
    char *o = j->dst + (size_t)(r * j->inner) * j->esize;
    for (int64_t c = c0; c < c1; c++) {
        weft__acc a = cnt == 0 ? e : acc[c];
        switch (j->dt) {
        case WEFT_I32:
            ((int32_t *)(void *)o)[c] = by_i ? (int32_t)a.i : (int32_t)(uint32_t)a.u;
            break;
        case WEFT_I64:
            ((int64_t *)(void *)o)[c] = by_i ? a.i : (int64_t)a.u;
            break;
        default: {
            double v = cnt > 0 && kind == WEFT_R_MEAN ? a.d / (double)cnt : a.d;
            if (j->dt == WEFT_F32)
                ((float *)(void *)o)[c] = (float)v;
            else
                ((double *)(void *)o)[c] = v;
            break;
        }
        }
    }
}

static int seg_chunk(size_t cb, size_t ce, void *ctx)
{
    const comb_job *j = ctx;
    comb_fn step = combs[j->n->attr.index.kind][j->dt - WEFT_I32];
    weft__acc id = seg_identity(j->n->attr.index.kind, j->dt);
    for (size_t c = cb; c < ce; c++) {
        int64_t r0, r1, c0, c1;
        region_of(j, c, &r0, &r1, &c0, &c1);
        for (int64_t r = r0; r < r1; r++)
            for (int64_t k = c0; k < c1; k++)
                j->acc[r * j->inner + k] = id;
        comb_span sp = { 0, j->n_in_rows, r0, r1, c0, c1, j->acc };
        step(j, &sp);
        for (int64_t r = r0; r < r1; r++)
            seg_store(j, r, c0, c1);
    }
    return 0;
}

/* Chunks for n_out_rows x inner outputs fed by `work` input elements:
 * over columns when each chunk gets enough of them, else over rows; fn
 * gets ctx (j itself, or a job that points to it). */
static int run_comb(weft_runtime *rt, comb_job *j, uint64_t work, weft_range_fn fn, void *ctx)
{
    j->chunks = weft__chunk_count(rt, work > (uint64_t)(j->n_out_rows * j->inner)
                                          ? work : (uint64_t)(j->n_out_rows * j->inner));
    j->by_cols = j->inner >= (int64_t)j->chunks * COLS_PER_CHUNK_MIN;
    uint64_t units = (uint64_t)(j->by_cols ? j->inner : j->n_out_rows);
    if (j->chunks > units)
        j->chunks = (size_t)units;
    return weft__run_chunks(rt, j->chunks, fn, ctx);
}

/* Turns ids [i0, i1) (flattened) into the segment of each row of data,
 * -1 for a negative id (its row is dropped), and counts each segment's
 * rows in count.  Returns the index of the first id at or above segs
 * (and stops there), or -1. */
#define SEG_TARGETS(T)                                                   \
    do {                                                                 \
        const T *id = weft_tensor_data(ids);                             \
        for (int64_t i = i0; i < i1; i++) {                              \
            int64_t s = id[i];                                           \
            if (s >= segs)                                               \
                return i;                                                \
            target[i] = s < 0 ? -1 : s;                                  \
            if (s >= 0)                                                  \
                count[s]++;                                              \
        }                                                                \
    } while (0)

static int64_t seg_targets(const weft_tensor *ids, int64_t segs, int64_t i0, int64_t i1,
                           int64_t *target, int64_t *count)
{
    if (ids->dtype == WEFT_I64)
        SEG_TARGETS(int64_t);
    else
        SEG_TARGETS(int32_t);
    return -1;
}

static int seg_bad_id(const weft__node *n, const weft_tensor *ids, int64_t i)
{
    return weft__errorf(WEFT_EINVAL, "weft_unsorted_segment: segment id %lld (at %lld) is not "
                        "below num_segments %lld", (long long)weft__index_at(ids, i), (long long)i,
                        (long long)n->attr.index.count);
}

/* Where the segments' accumulators are small next to the data, chunks own
 * input rows instead of output rows: each turns its ids into targets and
 * combines its rows, in index order, into accumulators of its own (a
 * part), and the parts are then merged in row order.  So no chunk reads
 * ids of rows it does not combine.  The rows of each part depend on the
 * row count only, never on the worker count, so the results have the
 * same bits on any number of workers. */
#define SEG_PART_ROWS_MIN 4096
#define SEG_PARTS_MAX 32

typedef struct part_job {
    comb_job *j;
    const weft_tensor *ids;
    int64_t *target;    /* j->target, written by the parts */
    size_t parts;
    weft__acc *acc;     /* parts x n_out_rows x inner */
    int64_t *count;     /* parts x n_out_rows */
    int64_t *bad;       /* each part's first id >= num_segments, or -1 */
} part_job;

static size_t seg_part_count(int64_t rows)
{
    int64_t p = rows / SEG_PART_ROWS_MIN;
    return p < 1 ? 1 : p > SEG_PARTS_MAX ? SEG_PARTS_MAX : (size_t)p;
}

static int part_chunk(size_t cb, size_t ce, void *ctx)
{
    const part_job *pj = ctx;
    comb_job *j = pj->j;
    int kind = j->n->attr.index.kind;
    comb_fn step = combs[kind][j->dt - WEFT_I32];
    weft__acc id = seg_identity(kind, j->dt);
    int64_t segs = j->n_out_rows, block = segs * j->inner;
    for (size_t p = cb; p < ce; p++) {
        int64_t i0 = (int64_t)weft__chunk_begin((uint64_t)j->n_in_rows, pj->parts, p);
        int64_t i1 = (int64_t)weft__chunk_begin((uint64_t)j->n_in_rows, pj->parts, p + 1);
        weft__acc *acc = pj->acc + (int64_t)p * block;
        int64_t *count = pj->count + (int64_t)p * segs;
        memset(count, 0, sizeof *count * (size_t)segs);
        for (int64_t k = 0; k < block; k++)
            acc[k] = id;
        pj->bad[p] = seg_targets(pj->ids, segs, i0, i1, pj->target, count);
        if (pj->bad[p] < 0) {
            comb_span sp = { i0, i1, 0, segs, 0, j->inner, acc };
            step(j, &sp);
        }
    }
    return 0;
}

/* a[k] = op(a[k], b[k]) for k < len: the accumulators of two parts, with
 * the steps of the COMB table (max / min keep a NaN once seen); one loop
 * per case, each through one member's type, so that each vectorizes (a
 * switch per element over the union took 7% of a segment sum). */
static void acc_merge(int kind, bool flt, weft__acc *restrict a, const weft__acc *restrict b,
                      int64_t len)
{
    double *restrict ad = &a->d;
    const double *restrict bd = &b->d;
    uint64_t *restrict au = &a->u;
    const uint64_t *restrict bu = &b->u;
    int64_t *restrict ai = &a->i;
    const int64_t *restrict bi = &b->i;
    switch (kind) {
    case WEFT_R_PROD:
        if (flt)
            for (int64_t k = 0; k < len; k++)
                ad[k] *= bd[k];
        else
            for (int64_t k = 0; k < len; k++)
                au[k] *= bu[k];
        return;
    case WEFT_R_MAX:
        if (flt)
            for (int64_t k = 0; k < len; k++)
                ad[k] = bd[k] > ad[k] || bd[k] != bd[k] ? bd[k] : ad[k];
        else
            for (int64_t k = 0; k < len; k++)
                ai[k] = bi[k] > ai[k] ? bi[k] : ai[k];
        return;
    case WEFT_R_MIN:
        if (flt)
            for (int64_t k = 0; k < len; k++)
                ad[k] = bd[k] < ad[k] || bd[k] != bd[k] ? bd[k] : ad[k];
        else
            for (int64_t k = 0; k < len; k++)
                ai[k] = bi[k] < ai[k] ? bi[k] : ai[k];
        return;
    default:
        if (flt)
            for (int64_t k = 0; k < len; k++)
                ad[k] += bd[k];
        else
            for (int64_t k = 0; k < len; k++)
                au[k] += bu[k];
        return;
    }
}

/* Merges every part into the first one's accumulators (j->acc), part by
 * part in row order, over the chunk's region, and stores it. */
static int merge_chunk(size_t cb, size_t ce, void *ctx)
{
    const part_job *pj = ctx;
    const comb_job *j = pj->j;
    int kind = j->n->attr.index.kind;
    bool flt = j->dt == WEFT_F32 || j->dt == WEFT_F64;
    int64_t block = j->n_out_rows * j->inner;
    for (size_t c = cb; c < ce; c++) {
        int64_t r0, r1, c0, c1;
        region_of(j, c, &r0, &r1, &c0, &c1);
        for (int64_t r = r0; r < r1; r++) {
            for (size_t p = 1; p < pj->parts; p++)
                acc_merge(kind, flt, j->acc + r * j->inner + c0,
                          j->acc + (int64_t)p * block + r * j->inner + c0, c1 - c0);
            seg_store(j, r, c0, c1);
        }
    }
    return 0;
}

static int seg_by_input_rows(weft_runtime *rt, comb_job *j, const weft_tensor *ids,
                             int64_t *target, size_t parts)
{
    int64_t segs = j->n_out_rows;
    scratch cs;
    int64_t *bad = weft__calloc(parts, sizeof *bad);
    int64_t *count = scratch_get(&cs, sizeof *count * parts * (size_t)(segs ? segs : 1));
    if (!bad || !count) {
        weft__free(bad);
        scratch_put(&cs);
        return oom(j->n);
    }
    part_job pj = { j, ids, target, parts, j->acc, count, bad };
    int rc = weft__run_chunks(rt, parts, part_chunk, &pj);
    for (size_t p = 0; rc == 0 && p < parts; p++)
        if (bad[p] >= 0)
            rc = seg_bad_id(j->n, ids, bad[p]);
    if (rc == 0) {
        /* The counts are few (segments x parts): summed here, serially. */
        for (size_t p = 1; p < parts; p++)
            for (int64_t s = 0; s < segs; s++)
                count[s] += count[(int64_t)p * segs + s];
        j->count = count;
        rc = run_comb(rt, j, (uint64_t)(parts * (size_t)(segs * j->inner)), merge_chunk, &pj);
    }
    weft__free(bad);
    scratch_put(&cs);
    return rc;
}

static int eval_unsorted_segment(weft_runtime *rt, const weft__node *n, const weft_tensor *data,
                                 const weft_tensor *ids, weft_tensor *out)
{
    int64_t segs = n->attr.index.count, inner = inner_after(data, ids->rank);
    size_t parts = seg_part_count(ids->numel);
    /* Parts pay off while their accumulators (set up and merged) are at
     * most a quarter of the data. */
    bool by_input = parts > 1 && out->numel > 0 &&
                    (uint64_t)parts * (uint64_t)out->numel <= (uint64_t)data->numel / 4;
    size_t acc_count = (size_t)out->numel * (by_input ? parts : 1);
    scratch ts, as;
    int64_t *target = scratch_get(&ts, sizeof *target * (size_t)ids->numel);
    weft__acc *acc = scratch_get(&as, sizeof *acc * acc_count);
    comb_job j = { .n = n, .dt = data->dtype, .src = weft_tensor_data(data), .target = target,
                   .n_in_rows = ids->numel, .n_out_rows = segs, .inner = inner,
                   .esize = weft_dtype_size(data->dtype), .acc = acc,
                   .dst = weft__tensor_mut(out) };
    int rc = 0;
    int64_t *count = NULL;
    if (!target || !acc) {
        rc = oom(n);
    } else if (by_input) {
        rc = seg_by_input_rows(rt, &j, ids, target, parts);
    } else {
        count = weft__calloc((size_t)(segs ? segs : 1), sizeof *count);
        int64_t bad = count ? seg_targets(ids, segs, 0, ids->numel, target, count) : -1;
        rc = !count ? oom(n) : bad >= 0 ? seg_bad_id(n, ids, bad) : 0;
        j.count = count;
        if (rc == 0 && out->numel > 0)
            rc = run_comb(rt, &j, (uint64_t)data->numel, seg_chunk, &j);
    }
    scratch_put(&ts);
    weft__free(count);
    scratch_put(&as);
    return rc;
}

/* ---- scatter_nd -------------------------------------------------------- */

/* o[c] = o[c] OP u[c] for c < len in T: integers add and subtract
 * wrapping through unsigned U; max and min propagate NaN, as
 * weft_maximum and weft_minimum. */
#define COMBINE_ROW(NAME, T, EXPR)                                              \
    static void NAME(void *o_, const void *u_, int64_t len)                     \
    {                                                                           \
        T *o = o_;                                                              \
        const T *u = u_;                                                        \
        for (int64_t c = 0; c < len; c++) {                                     \
            T x = o[c], y = u[c];                                               \
            o[c] = (EXPR);                                                      \
        }                                                                       \
    }
#define COMBINE_ROWS(S, T, U)                                                   \
    COMBINE_ROW(add_row_##S, T, (T)((U)x + (U)y))                               \
    COMBINE_ROW(sub_row_##S, T, (T)((U)x - (U)y))                               \
    COMBINE_ROW(max_row_##S, T, (x != x || x > y) ? x : y)                      \
    COMBINE_ROW(min_row_##S, T, (x != x || x < y) ? x : y)
COMBINE_ROWS(i32, int32_t, uint32_t)
COMBINE_ROWS(i64, int64_t, uint64_t)
COMBINE_ROWS(f32, float, float)
COMBINE_ROWS(f64, double, double)
#undef COMBINE_ROWS
#undef COMBINE_ROW

typedef void (*combine_row_fn)(void *o, const void *u, int64_t len);

/* The row combine of a scatter op other than update, by dtype. */
static combine_row_fn combine_row(weft__op op, weft_dtype dt)
{
    static const combine_row_fn rows[4][4] = {
        { add_row_i32, add_row_i64, add_row_f32, add_row_f64 },
        { sub_row_i32, sub_row_i64, sub_row_f32, sub_row_f64 },
        { max_row_i32, max_row_i64, max_row_f32, max_row_f64 },
        { min_row_i32, min_row_i64, min_row_f32, min_row_f64 },
    };
    int k = op == WEFT__OP_SCATTER_ND_ADD ? 0 : op == WEFT__OP_SCATTER_ND_SUB ? 1
          : op == WEFT__OP_SCATTER_ND_MAX ? 2 : 3;
    return rows[k][dt - WEFT_I32];
}

static int scatter_chunk(size_t cb, size_t ce, void *ctx)
{
    const comb_job *j = ctx;
    bool add = j->n->op != WEFT__OP_SCATTER_ND_UPDATE;
    combine_row_fn addf = add ? combine_row(j->n->op, j->dt) : NULL;
    for (size_t c = cb; c < ce; c++) {
        int64_t r0, r1, c0, c1;
        region_of(j, c, &r0, &r1, &c0, &c1);
        for (int64_t i = 0; i < j->n_in_rows; i++) {
            int64_t t = j->target[i];
            if (t < r0 || t >= r1)
                continue;
            char *o = j->dst + (size_t)(t * j->inner + c0) * j->esize;
            const char *u = j->src + (size_t)(i * j->inner + c0) * j->esize;
            if (add)
                addf(o, u, c1 - c0);
            else
                memcpy(o, u, (size_t)(c1 - c0) * j->esize);
        }
    }
    return 0;
}

static int eval_scatter_nd(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor *out)
{
    const weft_tensor *a = in[0], *idx = in[1], *upd = in[2];
    int k = (int)idx->dims[idx->rank - 1];
    int64_t n_tuples = tuple_count(idx);
    scratch rs;
    int64_t *rows = scratch_get(&rs, sizeof *rows * (size_t)n_tuples);
    if (!rows)
        return oom(n);
    int rc = tuple_rows(n, a, idx, n_tuples, k, rows);
    if (rc == 0 && out->numel > 0) {
        /* A copy of a (rows of one element), then the updates over it in
         * index order. */
        copy_job cj = { .n = NULL, .src = weft_tensor_data(a),
                        .dst = weft__tensor_mut(out), .bytes = weft_dtype_size(a->dtype),
                        .rows = (uint64_t)a->numel };
        rc = run_copy(rt, &cj, out);
        int64_t inner = inner_after(a, k);
        comb_job j = { .n = n, .dt = a->dtype, .src = weft_tensor_data(upd), .target = rows,
                       .n_in_rows = n_tuples, .n_out_rows = a->numel / (inner ? inner : 1),
                       .inner = inner, .esize = weft_dtype_size(a->dtype),
                       .dst = weft__tensor_mut(out) };
        if (rc == 0 && inner > 0 && n_tuples > 0)
            rc = run_comb(rt, &j, (uint64_t)upd->numel, scatter_chunk, &j);
    }
    scratch_put(&rs);
    return rc;
}

int weft__eval_index_op(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out)
{
    switch (n->op) {
    case WEFT__OP_UNSORTED_SEGMENT:
        return eval_unsorted_segment(rt, n, in[0], in[1], out);
    case WEFT__OP_GATHER_ND:
        return eval_gather_nd(rt, n, in[0], in[1], out);
    case WEFT__OP_SCATTER_ND_UPDATE:
    case WEFT__OP_SCATTER_ND_ADD:
    case WEFT__OP_SCATTER_ND_SUB:
    case WEFT__OP_SCATTER_ND_MAX:
    case WEFT__OP_SCATTER_ND_MIN:
        return eval_scatter_nd(rt, n, in, out);
    case WEFT__OP_ROLL:
    case WEFT__OP_REPEAT:
        return eval_axis_copy(rt, n, in[0], out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    }
}
