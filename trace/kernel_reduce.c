/* Reductions over one axis or all of them (weft__eval_reduce). */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#define COL_BLOCK 512       /* reduction columns accumulated at once */

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
        uint64_t b = weft__chunk_begin(items, j->chunks, c), e = weft__chunk_begin(items, j->chunks, c + 1);
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
        int64_t r0 = (int64_t)weft__chunk_begin((uint64_t)j->len, j->chunks, c);
        int64_t r1 = (int64_t)weft__chunk_begin((uint64_t)j->len, j->chunks, c + 1);
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

int weft__eval_reduce(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
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
    j.chunks = weft__chunk_count(rt, (uint64_t)a->numel);
    uint64_t items = (uint64_t)j.outer * (uint64_t)j.col_blocks;
    if (j.chunks > 1 && items < j.chunks && (uint64_t)j.len >= 2 * (uint64_t)j.chunks) {
        int64_t out_n = j.outer * j.inner;
        j.partial = weft__malloc(sizeof(acc8) * (size_t)out_n * j.chunks);
        if (!j.partial)
            return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
        int rc = weft__run_chunks(rt, j.chunks, red_chunk_axis, &j);
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
    return weft__run_chunks(rt, j.chunks, red_chunk_items, &j);
}

