/* Reductions over any set of axes (weft__eval_reduce), and the
 * accumulation loops that fused groups share with them (weft__reducer_of).
 *
 * The order of a float reduction is fixed (include/weft/ops.h): each output
 * element combines its reduced elements in row-major order of the reduced
 * axes, in chunks of WEFT__REDUCE_CHUNK consecutive elements; a chunk
 * accumulates sequentially from the identity, and the chunks' partials are
 * combined in chunk order (total = p0, then total = total (op) p_c).  Every
 * path below computes exactly that, whatever it splits over the workers,
 * so results depend neither on the worker count nor on the path.
 *
 * After the reduced mask is applied, size-1 dims are dropped and adjacent
 * dims of the same kind merged.  Most reductions then read as
 * [outer, len, inner] with len reduced: rows (inner == 1), whose rows
 * accumulate eight at a time so that independent chains overlap, and
 * columns (inner > 1), which accumulate whole rows into a block of
 * accumulators (vectorized across the columns).  Any other pattern (axes
 * 0 and 2 of a 3-D tensor, say) gathers each output's elements in order. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#define COL_BLOCK 512       /* reduction columns accumulated at once */
#define ROW_BATCH 256       /* rows a row reduction finalizes at once */
/* Bytes of chunk partials kept at once (weft__reduce_chunks). */
#define PARTIAL_BYTES ((size_t)1 << 20)
/* Partials (accumulators) kept on the stack rather than allocated. */
#define STACK_PARTIALS 256

/* ---- Accumulation loops ---------------------------------------------- */

/* Accumulators are 8 bytes (weft__acc): u64 for sums and products of
 * integers (wrapping, truncated at the end, which equals wrapping in the
 * narrower type), i64 for integer max and min, double for floats (f32
 * accumulates in double). */
#define ADD_STEP(a, x) ((a) + (x))
#define MUL_STEP(a, x) ((a) * (x))
#define IMAX_STEP(a, x) ((x) > (a) ? (x) : (a))
#define IMIN_STEP(a, x) ((x) < (a) ? (x) : (a))
#define FMAX_STEP(a, x) (((x) != (x) || (x) > (a)) ? (x) : (a))
#define FMIN_STEP(a, x) (((x) != (x) || (x) < (a)) ? (x) : (a))

/* acc[t] = STEP over row t, for rows of len contiguous elements.  Eight
 * rows at a time: eight independent chains (enough to keep two adders
 * busy), each still in element order. */
#define RED_ROWS(NAME, T, A, STEP)                                                     \
    WEFT__SIMD_CLONES                                                                  \
    static void NAME(const void *src_, int64_t rows, int64_t len, weft__acc *acc_)     \
    {                                                                                  \
        const T *restrict src = src_;                                                  \
        A *restrict acc = (A *)(void *)acc_;                                           \
        int64_t t = 0;                                                                 \
        for (; t + 8 <= rows; t += 8) {                                                \
            const T *restrict p = src + t * len;                                       \
            A a[8];                                                                    \
            for (int u = 0; u < 8; u++)                                                \
                a[u] = acc[t + u];                                                     \
            for (int64_t j = 0; j < len; j++)                                          \
                for (int u = 0; u < 8; u++)                                            \
                    a[u] = STEP(a[u], (A)p[u * len + j]);                              \
            for (int u = 0; u < 8; u++)                                                \
                acc[t + u] = a[u];                                                     \
        }                                                                              \
        for (; t < rows; t++) {                                                        \
            const T *restrict p = src + t * len;                                       \
            A a = acc[t];                                                              \
            for (int64_t j = 0; j < len; j++)                                          \
                a = STEP(a, (A)p[j]);                                                  \
            acc[t] = a;                                                                \
        }                                                                              \
    }

/* acc[c] = STEP(acc[c], row r's element c), rows at stride apart. */
#define RED_COLS(NAME, T, A, STEP)                                                     \
    WEFT__SIMD_CLONES                                                                  \
    static void NAME(const void *src_, int64_t rows, int64_t stride, int64_t cols,     \
                     weft__acc *acc_)                                                  \
    {                                                                                  \
        const T *restrict src = src_;                                                  \
        A *restrict acc = (A *)(void *)acc_;                                           \
        for (int64_t r = 0; r < rows; r++) {                                           \
            const T *restrict row = src + r * stride;                                  \
            for (int64_t c = 0; c < cols; c++)                                         \
                acc[c] = STEP(acc[c], (A)row[c]);                                      \
        }                                                                              \
    }

#define RED_COMBINE(NAME, A, STEP)                                                     \
    static void NAME(weft__acc *into_, const weft__acc *from_, int64_t n)              \
    {                                                                                  \
        A *restrict into = (A *)(void *)into_;                                         \
        const A *restrict from = (const A *)(const void *)from_;                       \
        for (int64_t i = 0; i < n; i++)                                                \
            into[i] = STEP(into[i], from[i]);                                          \
    }

/* One row of loops per (step, accumulator) over the five dtypes. */
#define RED_FAMILY(S, IA, FA, ISTEP, FSTEP)                                            \
    RED_ROWS(S##_b_rows, uint8_t, IA, ISTEP)                                           \
    RED_ROWS(S##_i32_rows, int32_t, IA, ISTEP)                                         \
    RED_ROWS(S##_i64_rows, int64_t, IA, ISTEP)                                         \
    RED_ROWS(S##_f32_rows, float, FA, FSTEP)                                           \
    RED_ROWS(S##_f64_rows, double, FA, FSTEP)                                          \
    RED_COLS(S##_b_cols, uint8_t, IA, ISTEP)                                           \
    RED_COLS(S##_i32_cols, int32_t, IA, ISTEP)                                         \
    RED_COLS(S##_i64_cols, int64_t, IA, ISTEP)                                         \
    RED_COLS(S##_f32_cols, float, FA, FSTEP)                                           \
    RED_COLS(S##_f64_cols, double, FA, FSTEP)                                          \
    RED_COMBINE(S##_int_combine, IA, ISTEP)                                            \
    RED_COMBINE(S##_flt_combine, FA, FSTEP)

RED_FAMILY(sum, uint64_t, double, ADD_STEP, ADD_STEP)
RED_FAMILY(prod, uint64_t, double, MUL_STEP, MUL_STEP)
RED_FAMILY(max, int64_t, double, IMAX_STEP, FMAX_STEP)
RED_FAMILY(min, int64_t, double, IMIN_STEP, FMIN_STEP)

#define RED_FIN(NAME, F, TO, EXPR)                                                     \
    static void NAME(const weft__acc *acc, int64_t n, int64_t len, void *out_)         \
    {                                                                                  \
        TO *o = out_;                                                                  \
        (void)len;                                                                     \
        for (int64_t c = 0; c < n; c++) {                                              \
            __typeof__(acc[0].F) a = acc[c].F;                                         \
            o[c] = (TO)(EXPR);                                                         \
        }                                                                              \
    }

RED_FIN(fin_u_i64, u, int64_t, (int64_t)a)
RED_FIN(fin_u_i32, u, int32_t, (int32_t)(uint32_t)a)
RED_FIN(fin_d_f32, d, float, a)
RED_FIN(fin_d_f64, d, double, a)
RED_FIN(fin_mean_f32, d, float, a / (double)len)
RED_FIN(fin_mean_f64, d, double, a / (double)len)
RED_FIN(fin_i_b, i, uint8_t, a)
RED_FIN(fin_i_i32, i, int32_t, a)
RED_FIN(fin_i_i64, i, int64_t, a)

#define DT5(S, K) {S##_b_##K, S##_i32_##K, S##_i64_##K, S##_f32_##K, S##_f64_##K}

bool weft__reducer_of(weft__op op, weft_dtype dt, weft__reducer *r)
{
    static const weft__red_rows_fn rows[4][5] = {DT5(sum, rows), DT5(prod, rows), DT5(max, rows),
                                                 DT5(min, rows)};
    static const weft__red_cols_fn cols[4][5] = {DT5(sum, cols), DT5(prod, cols), DT5(max, cols),
                                                 DT5(min, cols)};
    static const weft__red_combine_fn comb[4][2] = {
        {sum_int_combine, sum_flt_combine}, {prod_int_combine, prod_flt_combine},
        {max_int_combine, max_flt_combine}, {min_int_combine, min_flt_combine}};
    static const weft__red_fin_fn sum_fin[5] = {fin_u_i64, fin_u_i32, fin_u_i64, fin_d_f32,
                                                fin_d_f64};
    static const weft__red_fin_fn ext_fin[5] = {fin_i_b, fin_i_i32, fin_i_i64, fin_d_f32,
                                                fin_d_f64};
    memset(r, 0, sizeof *r);
    if ((unsigned)dt > (unsigned)WEFT_F64)
        return false;
    bool flt = dt == WEFT_F32 || dt == WEFT_F64;
    int fam;
    switch (op) {
    case WEFT__OP_SUM:
        fam = 0;
        r->fin = sum_fin[dt];
        if (flt)
            r->init.d = 0.0;
        break;
    case WEFT__OP_MEAN:
        if (!flt)
            return false;
        fam = 0;
        r->fin = dt == WEFT_F32 ? fin_mean_f32 : fin_mean_f64;
        r->init.d = 0.0;
        break;
    case WEFT__OP_PROD:
        fam = 1;
        r->fin = sum_fin[dt];
        if (flt)
            r->init.d = 1.0;
        else
            r->init.u = 1;
        break;
    case WEFT__OP_REDUCE_MAX:
        fam = 2;
        r->fin = ext_fin[dt];
        /* The identity: what the max of no elements is. */
        if (flt)
            r->init.d = -INFINITY;
        else
            r->init.i = dt == WEFT_BOOL ? 0 : dt == WEFT_I32 ? INT32_MIN : INT64_MIN;
        break;
    case WEFT__OP_REDUCE_MIN:
        fam = 3;
        r->fin = ext_fin[dt];
        if (flt)
            r->init.d = INFINITY;
        else
            r->init.i = dt == WEFT_BOOL ? 1 : dt == WEFT_I32 ? INT32_MAX : INT64_MAX;
        break;
    default:
        return false;
    }
    r->rows = rows[fam][dt];
    r->cols = cols[fam][dt];
    r->combine = comb[fam][flt];
    return true;
}

/* ---- The kernel ------------------------------------------------------ */

typedef struct red_job {
    weft__reducer red;
    const char *src;
    size_t esize;
    char *out;
    size_t out_esize;
    /* [outer, len, inner] mode: */
    int64_t outer, len, inner;
    int64_t col_blocks;   /* ceil(inner / COL_BLOCK) */
    int64_t n_chunks;     /* ceil(len / WEFT__REDUCE_CHUNK) */
    size_t tasks;         /* item mode: tasks over the items */
    int64_t items;
    /* general mode: kept and reduced dims (outermost first) with the
     * input's strides in elements */
    int n_kept, n_red;
    int64_t kept_dim[WEFT_MAX_RANK], kept_stride[WEFT_MAX_RANK];
    int64_t red_dim[WEFT_MAX_RANK], red_stride[WEFT_MAX_RANK];
} red_job;

static void acc_fill(weft__acc *acc, int64_t n, weft__acc v)
{
    for (int64_t i = 0; i < n; i++)
        acc[i] = v;
}

static int64_t chunk_len(const red_job *j, int64_t c)
{
    int64_t b = c * WEFT__REDUCE_CHUNK;
    return j->len - b < WEFT__REDUCE_CHUNK ? j->len - b : WEFT__REDUCE_CHUNK;
}

/* Chunk c of rows [o0, o0 + n) (row mode) into acc[0..n), from the identity. */
static void rows_chunk(const red_job *j, int64_t o0, int64_t n, int64_t c, weft__acc *acc)
{
    acc_fill(acc, n, j->red.init);
    int64_t cl = chunk_len(j, c);
    const char *p = j->src + (size_t)(o0 * j->len + c * WEFT__REDUCE_CHUNK) * j->esize;
    if (cl == j->len) {
        j->red.rows(p, n, cl, acc);
        return;
    }
    for (int64_t t = 0; t < n; t++)
        j->red.rows(p + (size_t)(t * j->len) * j->esize, 1, cl, acc + t);
}

/* Chunk c of output o's columns [c0, c0 + nc) (column mode), from the
 * identity. */
static void cols_chunk(const red_job *j, int64_t o, int64_t c0, int64_t nc, int64_t c,
                       weft__acc *acc)
{
    acc_fill(acc, nc, j->red.init);
    const char *p = j->src +
                    (size_t)((o * j->len + c * WEFT__REDUCE_CHUNK) * j->inner + c0) * j->esize;
    j->red.cols(p, chunk_len(j, c), j->inner, nc, acc);
}

/* One item of the rows: a batch of up to ROW_BATCH whole rows, its chunks
 * combined in order. */
static void red_row_item(const red_job *j, uint64_t it, weft__acc *total, weft__acc *part)
{
    int64_t o0 = (int64_t)it * ROW_BATCH;
    int64_t n = j->outer - o0 < ROW_BATCH ? j->outer - o0 : ROW_BATCH;
    rows_chunk(j, o0, n, 0, total);
    for (int64_t c = 1; c < j->n_chunks; c++) {
        rows_chunk(j, o0, n, c, part);
        j->red.combine(total, part, n);
    }
    j->red.fin(total, n, j->len, j->out + (size_t)o0 * j->out_esize);
}

/* One item of the columns: an output row's block of columns. */
static void red_col_item(const red_job *j, uint64_t it, weft__acc *total, weft__acc *part)
{
    int64_t o = (int64_t)(it / (uint64_t)j->col_blocks);
    int64_t c0 = (int64_t)(it % (uint64_t)j->col_blocks) * COL_BLOCK;
    int64_t nc = j->inner - c0 < COL_BLOCK ? j->inner - c0 : COL_BLOCK;
    cols_chunk(j, o, c0, nc, 0, total);
    for (int64_t c = 1; c < j->n_chunks; c++) {
        cols_chunk(j, o, c0, nc, c, part);
        j->red.combine(total, part, nc);
    }
    j->red.fin(total, nc, j->len, j->out + (size_t)(o * j->inner + c0) * j->out_esize);
}

/* Item mode: each task owns a range of items, each item whole outputs. */
static int red_items(size_t tb, size_t te, void *ctx)
{
    const red_job *j = ctx;
    weft__acc total[ROW_BATCH > COL_BLOCK ? ROW_BATCH : COL_BLOCK];
    weft__acc part[ROW_BATCH > COL_BLOCK ? ROW_BATCH : COL_BLOCK];
    for (size_t task = tb; task < te; task++) {
        uint64_t b = weft__chunk_begin((uint64_t)j->items, j->tasks, task);
        uint64_t e = weft__chunk_begin((uint64_t)j->items, j->tasks, task + 1);
        for (uint64_t it = b; it < e; it++) {
            if (j->inner == 1)
                red_row_item(j, it, total, part);
            else
                red_col_item(j, it, total, part);
        }
    }
    return 0;
}

/* Chunk mode: chunk c of every output into part[0..outer * inner). */
static void red_chunk_partial(void *ctx, int64_t c, weft__acc *part)
{
    const red_job *j = ctx;
    if (j->inner == 1) {
        for (int64_t o0 = 0; o0 < j->outer; o0 += ROW_BATCH) {
            int64_t n = j->outer - o0 < ROW_BATCH ? j->outer - o0 : ROW_BATCH;
            rows_chunk(j, o0, n, c, part + o0);
        }
        return;
    }
    for (int64_t o = 0; o < j->outer; o++)
        for (int64_t c0 = 0; c0 < j->inner; c0 += COL_BLOCK) {
            int64_t nc = j->inner - c0 < COL_BLOCK ? j->inner - c0 : COL_BLOCK;
            cols_chunk(j, o, c0, nc, c, part + o * j->inner + c0);
        }
}

typedef struct chunk_round {
    weft__chunk_partial_fn chunk;
    void *ctx;
    int64_t c0, width;
    weft__acc *rows;
} chunk_round;

static int chunk_round_run(size_t kb, size_t ke, void *arg)
{
    const chunk_round *cr = arg;
    for (size_t k = kb; k < ke; k++)
        cr->chunk(cr->ctx, cr->c0 + (int64_t)k, cr->rows + k * (size_t)cr->width);
    return 0;
}

int weft__reduce_chunks(weft_runtime *rt, size_t threads, const weft__reducer *red,
                        int64_t n_chunks, int64_t width, int64_t len,
                        weft__chunk_partial_fn chunk, void *ctx, void *out)
{
    size_t w = (size_t)(width ? width : 1);
    int64_t per_round = (int64_t)(PARTIAL_BYTES / (sizeof(weft__acc) * w));
    if (per_round < 2 * (int64_t)threads)
        per_round = 2 * (int64_t)threads;
    if (per_round > n_chunks)
        per_round = n_chunks;
    /* Row 0 is the running total; a round fills rows 1..  Small partials
     * (a scalar sum, a few columns) stay on the stack: a run of a small
     * program then allocates nothing beyond its tensors. */
    weft__acc stack_buf[STACK_PARTIALS];
    size_t n_acc = w * (size_t)(per_round + 1);
    weft__acc *buf = n_acc <= STACK_PARTIALS ? stack_buf : weft__malloc(sizeof *buf * n_acc);
    if (!buf)
        return weft__errorf(WEFT_ENOMEM, "weft reduction: out of memory for %lld partials",
                            (long long)(width * per_round));
    chunk_round cr = { .chunk = chunk, .ctx = ctx, .width = width, .rows = buf + w };
    int rc = 0;
    for (int64_t c0 = 0; c0 < n_chunks && rc == 0; c0 += per_round) {
        int64_t n = n_chunks - c0 < per_round ? n_chunks - c0 : per_round;
        cr.c0 = c0;
        if (threads > 1 && n > 1)
            rc = weft_parallel_for(rt, (size_t)n, 1, chunk_round_run, &cr);
        else
            rc = chunk_round_run(0, (size_t)n, &cr);
        for (int64_t k = 0; k < n && rc == 0; k++) {
            if (c0 + k == 0)
                memcpy(buf, cr.rows, sizeof(weft__acc) * w);
            else
                red->combine(buf, cr.rows + (size_t)k * w, width);
        }
    }
    if (rc == 0)
        red->fin(buf, width, len, out);
    if (buf != stack_buf)
        weft__free(buf);
    return rc;
}

/* General mode: each output gathers its elements in order, a chunk at a
 * time, into a local buffer for the rows loop. */
static int red_general(size_t tb, size_t te, void *ctx)
{
    const red_job *j = ctx;
    _Alignas(64) unsigned char buf[WEFT__REDUCE_CHUNK * 8];
    for (size_t task = tb; task < te; task++) {
        uint64_t b = weft__chunk_begin((uint64_t)j->items, j->tasks, task);
        uint64_t e = weft__chunk_begin((uint64_t)j->items, j->tasks, task + 1);
        for (uint64_t o = b; o < e; o++) {
            int64_t base = 0;
            uint64_t rem = o;
            for (int d = j->n_kept - 1; d >= 0; d--) {
                base += (int64_t)(rem % (uint64_t)j->kept_dim[d]) * j->kept_stride[d];
                rem /= (uint64_t)j->kept_dim[d];
            }
            int64_t idx[WEFT_MAX_RANK] = {0};
            weft__acc total = j->red.init, part;
            for (int64_t c = 0; c < j->n_chunks; c++) {
                int64_t cl = chunk_len(j, c);
                for (int64_t k = 0; k < cl; k++) {
                    int64_t off = base;
                    for (int d = 0; d < j->n_red; d++)
                        off += idx[d] * j->red_stride[d];
                    memcpy(buf + (size_t)k * j->esize, j->src + (size_t)off * j->esize, j->esize);
                    for (int d = j->n_red - 1; d >= 0 && ++idx[d] == j->red_dim[d]; d--)
                        idx[d] = 0;
                }
                part = j->red.init;
                j->red.rows(buf, 1, cl, &part);
                if (c == 0)
                    total = part;
                else
                    j->red.combine(&total, &part, 1);
            }
            j->red.fin(&total, 1, j->len, j->out + (size_t)o * j->out_esize);
        }
    }
    return 0;
}

/* Splits a's dims into runs of kept and reduced dims (size-1 dims
 * dropped, neighbours of one kind merged); returns the run count. */
static int coalesce(const weft_tensor *a, unsigned mask, int64_t *size, bool *reduced,
                    int64_t *stride)
{
    int64_t st[WEFT_MAX_RANK], s = 1;
    for (int d = a->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= a->dims[d];
    }
    int n = 0;
    for (int d = 0; d < a->rank; d++) {
        if (a->dims[d] == 1)
            continue;
        bool r = (mask >> d) & 1u;
        if (n > 0 && reduced[n - 1] == r) {
            size[n - 1] *= a->dims[d];
            stride[n - 1] = st[d];
            continue;
        }
        size[n] = a->dims[d];
        reduced[n] = r;
        stride[n] = st[d];
        n++;
    }
    return n;
}

int weft__eval_reduce(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      weft_tensor *out)
{
    red_job j;
    memset(&j, 0, sizeof j);
    if (!weft__reducer_of(n->op, a->dtype, &j.red))
        return weft__errorf(WEFT_EDTYPE, "weft_%s: unsupported dtype %s", weft__op_name(n->op),
                            weft_dtype_name(a->dtype));
    weft_spec as;
    weft__tensor_spec(a, &as);
    unsigned mask;
    int rc = weft__reduce_mask(n, NULL, &as, &mask);
    if (rc < 0)
        return rc;
    j.src = weft_tensor_data(a);
    j.esize = weft_dtype_size(a->dtype);
    j.out = weft__tensor_mut(out);
    j.out_esize = weft_dtype_size(out->dtype);
    j.len = 1;
    for (int d = 0; d < a->rank; d++)
        if ((mask >> d) & 1u)
            j.len *= a->dims[d];
    if (out->numel == 0)
        return 0;
    if (a->numel == 0) {
        /* Every output reduces nothing: the identity, finalized. */
        for (int64_t o = 0; o < out->numel; o++)
            j.red.fin(&j.red.init, 1, 0, j.out + (size_t)o * j.out_esize);
        return 0;
    }
    int64_t size[WEFT_MAX_RANK], stride[WEFT_MAX_RANK];
    bool reduced[WEFT_MAX_RANK];
    int runs = coalesce(a, mask, size, reduced, stride);
    /* Read the runs as [outer, len, inner] when they allow it. */
    int at = 0;
    j.outer = 1;
    j.inner = 1;
    if (at < runs && !reduced[at])
        j.outer = size[at++];
    if (at < runs && reduced[at])
        at++;   /* its size is j.len */
    if (at < runs && !reduced[at])
        j.inner = size[at++];
    bool general = at < runs;
    j.n_chunks = (j.len + WEFT__REDUCE_CHUNK - 1) / WEFT__REDUCE_CHUNK;
    size_t threads = weft__chunk_count(rt, (uint64_t)a->numel);
    if (general) {
        for (int r = 0; r < runs; r++) {
            if (reduced[r]) {
                j.red_dim[j.n_red] = size[r];
                j.red_stride[j.n_red++] = stride[r];
            } else {
                j.kept_dim[j.n_kept] = size[r];
                j.kept_stride[j.n_kept++] = stride[r];
            }
        }
        j.items = out->numel;
        j.tasks = threads < (size_t)j.items ? threads : (size_t)j.items;
        return weft__run_chunks(rt, j.tasks, red_general, &j);
    }
    if (j.inner == 1) {
        j.items = (j.outer + ROW_BATCH - 1) / ROW_BATCH;
    } else {
        j.col_blocks = (j.inner + COL_BLOCK - 1) / COL_BLOCK;
        j.items = j.outer * j.col_blocks;
    }
    /* Few outputs but many chunks: the chunks go to the workers. */
    if (threads > 1 && (uint64_t)j.items < threads && (uint64_t)j.n_chunks >= 2 * threads)
        return weft__reduce_chunks(rt, threads, &j.red, j.n_chunks, j.outer * j.inner, j.len,
                                   red_chunk_partial, &j, j.out);
    /* Each item is reduced by one task, so the cut does not change it. */
    j.tasks = weft__task_count(threads, (uint64_t)j.items);
    return weft__run_chunks(rt, j.tasks, red_items, &j);
}
