/* Computing single nodes on concrete tensors (weft__kernel_eval):
 * broadcasting elementwise ops over weft__ew_block, reductions, reshape,
 * matmul and the leaf ops.
 *
 * Work above SPLIT_MIN elements is cut into at most intra_op_threads fixed
 * chunks run with weft_parallel_for (grain 1, one index per chunk), so chunk
 * boundaries depend only on the thread count: reductions that combine
 * per-chunk partials (in chunk order) are deterministic for a given count. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#define SPLIT_MIN WEFT__KERNEL_SPLIT_MIN /* elements (or multiply-adds) worth a parallel split */
#define CHUNK_MIN 16384     /* the least work one chunk should get */
#define COL_BLOCK 512       /* reduction columns accumulated at once */

/* How many chunks `work` units are cut into. */
static size_t chunk_count(weft_runtime *rt, uint64_t work)
{
    if (!rt || work <= SPLIT_MIN)
        return 1;
    uint64_t by_work = work / CHUNK_MIN;
    uint64_t threads = weft__intra_op_threads(rt);
    uint64_t c = by_work < threads ? by_work : threads;
    return c < 1 ? 1 : (size_t)c;
}

/* The start of chunk c of n over total items, without overflow. */
static uint64_t chunk_begin(uint64_t total, size_t n, size_t c)
{
    uint64_t q = total / n, r = total % n;
    return q * c + (c < r ? c : r);
}

static int run_chunks(weft_runtime *rt, size_t n, weft_range_fn fn, void *ctx)
{
    if (n <= 1)
        return fn(0, 1, ctx);
    return weft_parallel_for(rt, n, 1, fn, ctx);
}

/* ---- Elementwise with broadcasting ---------------------------------- */

typedef struct ew_job {
    weft__op op;
    weft_dtype in_dt, out_dt;
    uint32_t k;                        /* inputs */
    int rank;                          /* coalesced output rank, >= 1 */
    int64_t dims[WEFT_MAX_RANK];
    int64_t strides[3][WEFT_MAX_RANK]; /* per input, in elements; 0 broadcasts */
    const char *base[3];
    size_t esize[3];
    char *out;
    size_t out_esize;
    uint64_t total;
    size_t chunks;
} ew_job;

static int ew_chunk(size_t cb, size_t ce, void *ctx)
{
    const ew_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t pos = chunk_begin(j->total, j->chunks, c);
        uint64_t end = chunk_begin(j->total, j->chunks, c + 1);
        int64_t idx[WEFT_MAX_RANK];
        uint64_t rem = pos;
        for (int d = j->rank - 1; d >= 0; d--) {
            idx[d] = (int64_t)(rem % (uint64_t)j->dims[d]);
            rem /= (uint64_t)j->dims[d];
        }
        int last = j->rank - 1;
        unsigned char step[3];
        for (uint32_t i = 0; i < j->k; i++)
            step[i] = j->strides[i][last] != 0;
        while (pos < end) {
            const void *ptr[3];
            for (uint32_t i = 0; i < j->k; i++) {
                int64_t off = 0;
                for (int d = 0; d <= last; d++)
                    off += idx[d] * j->strides[i][d];
                ptr[i] = j->base[i] + (size_t)off * j->esize[i];
            }
            uint64_t run = (uint64_t)(j->dims[last] - idx[last]);
            if (run > end - pos)
                run = end - pos;
            weft__ew_block(j->op, j->in_dt, j->out_dt, ptr, step,
                           j->out + pos * j->out_esize, (size_t)run);
            pos += run;
            idx[last] += (int64_t)run;
            for (int d = last; d > 0 && idx[d] == j->dims[d]; d--) {
                idx[d] = 0;
                idx[d - 1]++;
            }
        }
    }
    return 0;
}

static int eval_elementwise(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                            weft_tensor *out)
{
    /* Small work with every input either full-size or a scalar (the
     * common case) is one block call: no stride set-up, no split. */
    if ((uint64_t)out->numel <= SPLIT_MIN) {
        const void *src[3];
        unsigned char step[3];
        bool simple = true;
        for (uint32_t i = 0; i < n->n_in && simple; i++) {
            src[i] = in[i]->data;
            step[i] = in[i]->numel == out->numel;
            simple = in[i]->numel == out->numel || in[i]->numel == 1;
        }
        if (simple) {
            if (out->numel)
                weft__ew_block(n->op, in[n->n_in - 1]->dtype, out->dtype, src, step, out->data,
                               (size_t)out->numel);
            return 0;
        }
    }
    ew_job j;
    memset(&j, 0, sizeof j);
    j.op = n->op;
    j.k = n->n_in;
    j.in_dt = in[j.k - 1]->dtype;  /* WHERE: the value inputs; else all equal */
    j.out_dt = out->dtype;
    j.out = weft__tensor_mut(out);
    j.out_esize = weft_dtype_size(out->dtype);
    j.total = (uint64_t)out->numel;
    if (j.total == 0)
        return 0;
    /* Strides of each input against the output shape, then drop the
     * output's unit dims and merge dims that are contiguous in every
     * input, so that the innermost run is as long as possible. */
    int64_t st[3][WEFT_MAX_RANK];
    for (uint32_t i = 0; i < j.k; i++) {
        j.base[i] = weft_tensor_data(in[i]);
        j.esize[i] = weft_dtype_size(in[i]->dtype);
        int64_t s = 1;
        for (int d = out->rank - 1; d >= 0; d--) {
            int id = d - (out->rank - in[i]->rank);
            int64_t dim = id >= 0 ? in[i]->dims[id] : 1;
            st[i][d] = dim == 1 ? 0 : s;
            s *= dim;
        }
    }
    int r = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1)
            continue;
        bool merge = r > 0;
        for (uint32_t i = 0; merge && i < j.k; i++)
            merge = j.strides[i][r - 1] == st[i][d] * out->dims[d];
        if (merge) {
            j.dims[r - 1] *= out->dims[d];
            for (uint32_t i = 0; i < j.k; i++)
                j.strides[i][r - 1] = st[i][d];
        } else {
            j.dims[r] = out->dims[d];
            for (uint32_t i = 0; i < j.k; i++)
                j.strides[i][r] = st[i][d];
            r++;
        }
    }
    if (r == 0) {
        j.dims[0] = 1;
        r = 1;
    }
    j.rank = r;
    j.chunks = chunk_count(rt, j.total);
    return run_chunks(rt, j.chunks, ew_chunk, &j);
}

/* ---- Reductions ------------------------------------------------------ */

/* Accumulators are 8 bytes: u64 for sums of integers (wrapping, truncated
 * at the end, which equals wrapping in the narrower type), i64 for integer
 * max, double for floats (f32 sums accumulate in double). */
typedef union acc8 {
    uint64_t u;
    int64_t i;
    double d;
} acc8;

typedef void (*red_rows_fn)(const void *src, int64_t len, int64_t stride, int64_t ncols,
                            acc8 *acc);
typedef void (*red_fin_fn)(const acc8 *acc, int64_t ncols, int64_t len, void *out);

#define ADD_STEP(a, x) ((a) + (x))
#define IMAX_STEP(a, x) ((x) > (a) ? (x) : (a))
#define FMAX_STEP(a, x) (((x) != (x) || (x) > (a)) ? (x) : (a))

#define RED_ROWS(NAME, T, A, STEP)                                                     \
    static void NAME(const void *src_, int64_t len, int64_t stride, int64_t ncols,     \
                     acc8 *acc_)                                                       \
    {                                                                                  \
        const T *restrict src = src_;                                                  \
        A *restrict acc = (A *)(void *)acc_;                                           \
        if (ncols == 1) {                                                              \
            A a = acc[0];                                                              \
            for (int64_t r = 0; r < len; r++) {                                        \
                A x = (A)src[r * stride];                                              \
                a = STEP(a, x);                                                        \
            }                                                                          \
            acc[0] = a;                                                                \
            return;                                                                    \
        }                                                                              \
        for (int64_t r = 0; r < len; r++) {                                            \
            const T *restrict row = src + r * stride;                                  \
            for (int64_t c = 0; c < ncols; c++) {                                      \
                A x = (A)row[c];                                                       \
                acc[c] = STEP(acc[c], x);                                              \
            }                                                                          \
        }                                                                              \
    }

RED_ROWS(sum_b_rows, uint8_t, uint64_t, ADD_STEP)
RED_ROWS(sum_i32_rows, int32_t, uint64_t, ADD_STEP)
RED_ROWS(sum_i64_rows, int64_t, uint64_t, ADD_STEP)
RED_ROWS(sum_f32_rows, float, double, ADD_STEP)
RED_ROWS(sum_f64_rows, double, double, ADD_STEP)
RED_ROWS(max_b_rows, uint8_t, int64_t, IMAX_STEP)
RED_ROWS(max_i32_rows, int32_t, int64_t, IMAX_STEP)
RED_ROWS(max_i64_rows, int64_t, int64_t, IMAX_STEP)
RED_ROWS(max_f32_rows, float, double, FMAX_STEP)
RED_ROWS(max_f64_rows, double, double, FMAX_STEP)

#define RED_FIN(NAME, F, TO, EXPR)                                                     \
    static void NAME(const acc8 *acc, int64_t ncols, int64_t len, void *out_)          \
    {                                                                                  \
        TO *o = out_;                                                                  \
        (void)len;                                                                     \
        for (int64_t c = 0; c < ncols; c++) {                                          \
            __typeof__(acc[0].F) a = acc[c].F;                                         \
            o[c] = (TO)(EXPR);                                                         \
        }                                                                              \
    }

RED_FIN(fin_sum_i64, u, int64_t, (int64_t)a)
RED_FIN(fin_sum_i32, u, int32_t, (int32_t)(uint32_t)a)
RED_FIN(fin_f32, d, float, a)
RED_FIN(fin_f64, d, double, a)
RED_FIN(fin_mean_f32, d, float, a / (double)len)
RED_FIN(fin_mean_f64, d, double, a / (double)len)
RED_FIN(fin_max_b, i, uint8_t, a)
RED_FIN(fin_max_i32, i, int32_t, a)
RED_FIN(fin_max_i64, i, int64_t, a)

typedef struct red_kind {
    red_rows_fn rows;
    red_fin_fn fin;
    bool is_max;
    acc8 init;
} red_kind;

static bool red_kind_of(weft__op op, weft_dtype dt, red_kind *k)
{
    memset(k, 0, sizeof *k);
    static const red_rows_fn sum_rows[5] = {sum_b_rows, sum_i32_rows, sum_i64_rows, sum_f32_rows,
                                            sum_f64_rows};
    static const red_rows_fn max_rows[5] = {max_b_rows, max_i32_rows, max_i64_rows, max_f32_rows,
                                            max_f64_rows};
    static const red_fin_fn sum_fin[5] = {fin_sum_i64, fin_sum_i32, fin_sum_i64, fin_f32, fin_f64};
    static const red_fin_fn max_fin[5] = {fin_max_b, fin_max_i32, fin_max_i64, fin_f32, fin_f64};
    if ((unsigned)dt > (unsigned)WEFT_F64)
        return false;
    switch (op) {
    case WEFT__OP_SUM:
        k->rows = sum_rows[dt];
        k->fin = sum_fin[dt];
        k->init.u = 0;
        return true;
    case WEFT__OP_MEAN:
        if (dt != WEFT_F32 && dt != WEFT_F64)
            return false;
        k->rows = sum_rows[dt];
        k->fin = dt == WEFT_F32 ? fin_mean_f32 : fin_mean_f64;
        k->init.d = 0.0;
        return true;
    case WEFT__OP_REDUCE_MAX:
        k->rows = max_rows[dt];
        k->fin = max_fin[dt];
        k->is_max = true;
        /* The identity: what the max of no elements is. */
        if (dt == WEFT_F32 || dt == WEFT_F64)
            k->init.d = -INFINITY;
        else
            k->init.i = dt == WEFT_BOOL ? 0 : dt == WEFT_I32 ? INT32_MIN : INT64_MIN;
        return true;
    default:
        return false;
    }
}

typedef struct red_job {
    red_kind kind;
    bool is_float;
    const char *src;
    size_t esize;
    char *out;
    size_t out_esize;
    int64_t outer, len, inner;
    int64_t col_blocks;   /* ceil(inner / COL_BLOCK) */
    size_t chunks;
    acc8 *partial;        /* split-axis mode: chunks x (outer * inner) */
} red_job;

static void acc_fill(acc8 *acc, int64_t n, acc8 v)
{
    for (int64_t i = 0; i < n; i++)
        acc[i] = v;
}

/* Rows [r0, r1) of output item (o, column block cb) into acc. */
static void red_item(const red_job *j, int64_t o, int64_t cb, int64_t r0, int64_t r1, acc8 *acc)
{
    int64_t c0 = cb * COL_BLOCK;
    int64_t nc = j->inner - c0 < COL_BLOCK ? j->inner - c0 : COL_BLOCK;
    const char *p = j->src + (size_t)((o * j->len + r0) * j->inner + c0) * j->esize;
    j->kind.rows(p, r1 - r0, j->inner, nc, acc);
}

/* Mode A: each chunk owns whole outputs (items of one column block). */
static int red_chunk_items(size_t cb_, size_t ce_, void *ctx)
{
    const red_job *j = ctx;
    uint64_t items = (uint64_t)j->outer * (uint64_t)j->col_blocks;
    acc8 acc[COL_BLOCK];
    for (size_t c = cb_; c < ce_; c++) {
        uint64_t b = chunk_begin(items, j->chunks, c), e = chunk_begin(items, j->chunks, c + 1);
        for (uint64_t it = b; it < e; it++) {
            int64_t o = (int64_t)(it / (uint64_t)j->col_blocks);
            int64_t blk = (int64_t)(it % (uint64_t)j->col_blocks);
            int64_t c0 = blk * COL_BLOCK;
            int64_t nc = j->inner - c0 < COL_BLOCK ? j->inner - c0 : COL_BLOCK;
            acc_fill(acc, nc, j->kind.init);
            red_item(j, o, blk, 0, j->len, acc);
            j->kind.fin(acc, nc, j->len, j->out + (size_t)(o * j->inner + c0) * j->out_esize);
        }
    }
    return 0;
}

/* Mode B: each chunk reduces a slice of the reduced axis into its own
 * partials, combined afterwards in chunk order. */
static int red_chunk_axis(size_t cb_, size_t ce_, void *ctx)
{
    const red_job *j = ctx;
    int64_t out_n = j->outer * j->inner;
    for (size_t c = cb_; c < ce_; c++) {
        int64_t r0 = (int64_t)chunk_begin((uint64_t)j->len, j->chunks, c);
        int64_t r1 = (int64_t)chunk_begin((uint64_t)j->len, j->chunks, c + 1);
        acc8 *part = j->partial + (size_t)c * (size_t)out_n;
        acc_fill(part, out_n, j->kind.init);
        for (int64_t o = 0; o < j->outer; o++)
            for (int64_t blk = 0; blk < j->col_blocks; blk++)
                red_item(j, o, blk, r0, r1, part + o * j->inner + blk * COL_BLOCK);
    }
    return 0;
}

static void acc_combine(const red_job *j, acc8 *into, const acc8 *from, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (!j->kind.is_max) {
            if (j->is_float)
                into[i].d += from[i].d;
            else
                into[i].u += from[i].u;
        } else if (j->is_float) {
            into[i].d = FMAX_STEP(into[i].d, from[i].d);
        } else {
            into[i].i = IMAX_STEP(into[i].i, from[i].i);
        }
    }
}

static int eval_reduce(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                       weft_tensor *out)
{
    red_job j;
    memset(&j, 0, sizeof j);
    if (!red_kind_of(n->op, a->dtype, &j.kind))
        return weft__errorf(WEFT_EDTYPE, "weft_%s: unsupported dtype %s", weft__op_name(n->op),
                            weft_dtype_name(a->dtype));
    j.is_float = a->dtype == WEFT_F32 || a->dtype == WEFT_F64;
    j.src = weft_tensor_data(a);
    j.esize = weft_dtype_size(a->dtype);
    j.out = weft__tensor_mut(out);
    j.out_esize = weft_dtype_size(out->dtype);
    int axis = n->attr.reduce.axis;
    if (axis == WEFT_ALL_AXES) {
        j.outer = 1;
        j.len = a->numel;
        j.inner = 1;
    } else {
        if (axis < 0)
            axis += a->rank;   /* range checked by weft__infer_spec */
        j.outer = 1;
        j.inner = 1;
        for (int d = 0; d < axis; d++)
            j.outer *= a->dims[d];
        j.len = a->dims[axis];
        for (int d = axis + 1; d < a->rank; d++)
            j.inner *= a->dims[d];
    }
    if (j.outer == 0 || j.inner == 0)
        return 0;   /* no outputs */
    j.col_blocks = (j.inner + COL_BLOCK - 1) / COL_BLOCK;
    j.chunks = chunk_count(rt, (uint64_t)a->numel);
    uint64_t items = (uint64_t)j.outer * (uint64_t)j.col_blocks;
    if (j.chunks > 1 && items < j.chunks && (uint64_t)j.len >= 2 * (uint64_t)j.chunks) {
        int64_t out_n = j.outer * j.inner;
        j.partial = weft__malloc(sizeof(acc8) * (size_t)out_n * j.chunks);
        if (!j.partial)
            return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
        int rc = run_chunks(rt, j.chunks, red_chunk_axis, &j);
        if (rc == 0) {
            for (size_t c = 1; c < j.chunks; c++)
                acc_combine(&j, j.partial, j.partial + c * (size_t)out_n, out_n);
            j.kind.fin(j.partial, out_n, j.len, j.out);
        }
        weft__free(j.partial);
        return rc;
    }
    if (items < j.chunks)
        j.chunks = (size_t)items;
    return run_chunks(rt, j.chunks, red_chunk_items, &j);
}

/* ---- Matmul ---------------------------------------------------------- */

typedef struct mm_job {
    weft_dtype dt;
    const void *a, *b;
    void *c;
    int64_t m, k, n;
    size_t chunks;
} mm_job;

/* Rows [i0, i1) of C = A B in i-k-j order (the inner loop is a vectorized
 * axpy over a row of B).  Integers accumulate in the unsigned type. */
#define MM_ROWS(NAME, T, U)                                                            \
    static void NAME(const mm_job *j, int64_t i0, int64_t i1)                          \
    {                                                                                  \
        const T *restrict A = j->a;                                                    \
        const T *restrict B = j->b;                                                    \
        T *restrict C = j->c;                                                          \
        for (int64_t i = i0; i < i1; i++) {                                            \
            U *restrict crow = (U *)(void *)(C + i * j->n);                            \
            for (int64_t q = 0; q < j->n; q++)                                         \
                crow[q] = 0;                                                           \
            for (int64_t p = 0; p < j->k; p++) {                                       \
                const U av = (U)A[i * j->k + p];                                       \
                const T *restrict brow = B + p * j->n;                                 \
                for (int64_t q = 0; q < j->n; q++)                                     \
                    crow[q] = (U)(crow[q] + av * (U)brow[q]);                          \
            }                                                                          \
        }                                                                              \
    }

MM_ROWS(mm_i32, int32_t, uint32_t)
MM_ROWS(mm_i64, int64_t, uint64_t)
MM_ROWS(mm_f32, float, float)
MM_ROWS(mm_f64, double, double)

static int mm_chunk(size_t cb, size_t ce, void *ctx)
{
    const mm_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        int64_t i0 = (int64_t)chunk_begin((uint64_t)j->m, j->chunks, c);
        int64_t i1 = (int64_t)chunk_begin((uint64_t)j->m, j->chunks, c + 1);
        switch (j->dt) {
        case WEFT_I32: mm_i32(j, i0, i1); break;
        case WEFT_I64: mm_i64(j, i0, i1); break;
        case WEFT_F32: mm_f32(j, i0, i1); break;
        case WEFT_F64: mm_f64(j, i0, i1); break;
        default: break;
        }
    }
    return 0;
}

static int eval_matmul(weft_runtime *rt, const weft_tensor *a, const weft_tensor *b,
                       weft_tensor *out)
{
    mm_job j = {.dt = a->dtype, .a = weft_tensor_data(a), .b = weft_tensor_data(b),
                .c = weft__tensor_mut(out), .m = a->dims[0], .k = a->dims[1], .n = b->dims[1]};
    if (j.m == 0 || j.n == 0)
        return 0;
    uint64_t work = (uint64_t)j.m * (uint64_t)j.n * (uint64_t)(j.k ? j.k : 1);
    j.chunks = chunk_count(rt, work);
    if (j.chunks > (uint64_t)j.m)
        j.chunks = (size_t)j.m;
    return run_chunks(rt, j.chunks, mm_chunk, &j);
}

/* ---- Leaves ---------------------------------------------------------- */

static void eval_fill(const weft__node *n, weft_tensor *out)
{
    double v = n->attr.fill.value;
    const void *src[1] = {&v};
    const unsigned char step[1] = {0};
    weft__ew_block(WEFT__OP_CAST, WEFT_F64, out->dtype, src, step, weft__tensor_mut(out),
                   (size_t)out->numel);
}

static void eval_range(const weft__node *n, weft_tensor *out)
{
    uint64_t start = (uint64_t)n->attr.range.start, delta = (uint64_t)n->attr.range.delta;
    char *dst = weft__tensor_mut(out);
    size_t esize = weft_dtype_size(out->dtype);
    int64_t buf[256];
    const void *src[1] = {buf};
    const unsigned char step[1] = {1};
    for (int64_t i0 = 0; i0 < out->numel; i0 += 256) {
        int64_t cnt = out->numel - i0 < 256 ? out->numel - i0 : 256;
        /* Every value lies between start and limit, so it fits in int64;
         * the unsigned arithmetic only avoids overflow in i * delta. */
        for (int64_t i = 0; i < cnt; i++)
            buf[i] = (int64_t)(start + (uint64_t)(i0 + i) * delta);
        weft__ew_block(WEFT__OP_CAST, WEFT_I64, out->dtype, src, step, dst + (size_t)i0 * esize,
                       (size_t)cnt);
    }
}

/* ---- Entry ----------------------------------------------------------- */

int weft__kernel_eval_into(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor *out)
{
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_LEAF:
        if (n->op == WEFT__OP_FILL)
            eval_fill(n, out);
        else if (n->op == WEFT__OP_RANGE)
            eval_range(n, out);
        else
            return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op",
                                weft__op_name(n->op));
        return 0;
    case WEFT__KIND_UNARY:
    case WEFT__KIND_BINARY:
    case WEFT__KIND_TERNARY:
    case WEFT__KIND_CAST:
        return eval_elementwise(rt, n, in, out);
    case WEFT__KIND_REDUCE:
        return eval_reduce(rt, n, in[0], out);
    case WEFT__KIND_SHAPE:
        /* In place (the executor handed the input's own buffer): nothing
         * to move. */
        if (out->nbytes && out->data != in[0]->data)
            memcpy(weft__tensor_mut(out), weft_tensor_data(in[0]), out->nbytes);
        return 0;
    case WEFT__KIND_MATMUL:
        return eval_matmul(rt, in[0], in[1], out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    }
}

int weft__kernel_eval(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor **out)
{
    if (!n || !out || (n->n_in > 0 && !in))
        return weft__errorf(WEFT_EINVAL, "weft__kernel_eval: NULL argument");
    *out = NULL;
    if ((unsigned)n->op >= (unsigned)WEFT__OP_COUNT)
        return weft__errorf(WEFT_EINVAL, "weft__kernel_eval: invalid op %d", (int)n->op);
    if (n->op == WEFT__OP_ARG)
        return weft__errorf(WEFT_EINVAL, "weft_arg: an argument has no kernel");
    if (n->n_in > 3)
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    weft_spec specs[3], os;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (!in[i])
            return weft__errorf(WEFT_EINVAL, "weft_%s: input %u is NULL", weft__op_name(n->op),
                                (unsigned)i);
        weft__tensor_spec(in[i], &specs[i]);
    }
    int rc = weft__infer_spec(n, specs, &os);
    if (rc < 0)
        return rc;
    if (n->op == WEFT__OP_CONST) {
        *out = weft_tensor_retain(n->attr.constant.value);
        return 0;
    }
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_MAP:
    case WEFT__KIND_HOST:
    case WEFT__KIND_FUSED:
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    default:
        break;
    }
    weft_tensor *t = NULL;
    rc = weft__tensor_new_spec(&os, &t);
    if (rc < 0)
        return rc;
    rc = weft__kernel_eval_into(rt, n, in, t);
    if (rc < 0) {
        weft_tensor_release(t);
        return rc;
    }
    *out = t;
    return 0;
}
