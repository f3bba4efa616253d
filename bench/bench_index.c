/* Sorting and indexing ops: weft's compiled calls against the plain serial
 * C a user would otherwise write, in one process, on each worker count:
 *
 *  (d) sort      weft_sort of f32[1024,4096] along the last axis, against
 *                qsort of each row (NaN last, as weft orders);
 *      argsort_row  weft_argsort of one row of 2^22 (its segments and
 *                merges over the workers) against qsort of the row's
 *                (key, index) pairs;
 *      argsort   weft_argsort of the same, against qsort of each row's
 *                (key, index) pairs (which makes it stable, as weft is);
 *  (e) top_k     weft_top_k k=8 of f32[4096,1024], against a loop keeping
 *                each row's 8 largest in an insertion-sorted array;
 *  (f) segsum    weft_unsorted_segment(WEFT_R_SUM) of f32[1e6,16] by i32
 *                ids in [0,1000), against out[id[i]][j] += x[i][j] with out
 *                in f64, rounded to f32 once at the end (the sum weft
 *                documents for f32 data, so both give the same bits);
 *  (g) gather_nd weft_gather_nd of f32[1e5,64] by i64 indices [5e5,1],
 *                against a memcpy per row;
 *  (h) random    weft_random_uniform of f32[1e7] in [0, 1) from an i64[2]
 *                seed argument, against a loop drawing the same numbers
 *                with a Philox4x32-10 of its own (Random123's algorithm,
 *                four floats of 24 bits per block, as weft documents);
 *  (i) mask      weft_boolean_mask of f32[1e6,16] by a bool[1e6] half
 *                true, against a memcpy per kept row;
 *      argwhere  weft_argwhere of a bool[4096,1024] 30% true, against a
 *                double loop writing each true element's (row, column);
 *      unique    weft_unique of i32[1e6] drawn from 1e5 values, against an
 *                open-addressing table filled in one pass (values and
 *                i64 indices).
 *
 * Every workload is a weft_function with an input_signature, called with
 * weft_function_call from the main thread, its outputs released every
 * repetition; the C side mallocs and frees its result every repetition.
 * Each repetition times the C loop and then the weft call back to back;
 * the table gives the medians of both and the median of the per-repetition
 * ratios weft / C (below 1: weft is faster).  Before timing, weft's result
 * on each worker count is compared with C's element by element, exactly
 * (bench_fail on any difference).  BENCH_INDEX_ONLY="sort top_k" runs a
 * subset of: sort argsort argsort_row top_k segsum gather_nd random mask argwhere
 * unique; BENCH_REPS sets the repetitions (default 11). */
#include "bench.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define MAX_ARGS 2
#define MAX_OUTS 2

typedef struct workload workload;
struct workload {
    const char *name;
    const char *title;
    weft_body_fn body;
    void (*setup)(workload *w);
    /* Writes the result(s) into outs (out_bytes[k] bytes each). */
    void (*cloop)(const workload *w, void **outs);
    size_t n_args, n_outs;
    char sig[MAX_ARGS][64];
    void *in[MAX_ARGS];
    weft_tensor *targs[MAX_ARGS];
    weft_arg args[MAX_ARGS];
    size_t out_bytes[MAX_OUTS];
    size_t out_elem[MAX_OUTS];     /* element size of each output */
    int64_t rows, cols;            /* of the first argument */
};

static weft_runtime *rt;

/* ---- Inputs. ------------------------------------------------------------ */

static uint64_t lcg_state = 0x9e3779b97f4a7c15u;

static uint32_t lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(lcg_state >> 33);
}

/* An f32[rows,cols] of multiples of 0.25 drawn from `distinct` values
 * around 0 (never -0.0, never NaN), with ties when distinct is small. */
static float *make_f32(int64_t rows, int64_t cols, uint32_t distinct)
{
    size_t n = (size_t)rows * (size_t)cols;
    float *x = malloc(sizeof *x * n);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(lcg() % distinct) * 0.25f - (float)(distinct / 8);
    return x;
}

/* Wraps w->in[k] (rank 1 or 2) as argument k, with its signature. */
static void add_arg(workload *w, size_t k, weft_dtype dt, int rank, const int64_t *dims)
{
    if (rank == 2)
        snprintf(w->sig[k], sizeof w->sig[k], "%s[%lld,%lld]", weft_dtype_name(dt),
                 (long long)dims[0], (long long)dims[1]);
    else
        snprintf(w->sig[k], sizeof w->sig[k], "%s[%lld]", weft_dtype_name(dt),
                 (long long)dims[0]);
    int err = weft_tensor_create(dt, rank, dims, w->in[k], &w->targs[k]);
    if (err)
        bench_die("weft_tensor_create", err);
    w->args[k] = weft_arg_tensor(w->targs[k]);
}

/* ---- (d) sort and argsort. ---------------------------------------------- */

#define SORT_ROWS 1024
#define SORT_COLS 4096

/* weft's ascending order: NaN after everything, every NaN equal. */
static int cmp_f32(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    int nx = x != x, ny = y != y;
    if (nx || ny)
        return nx - ny;
    return (x > y) - (x < y);
}

typedef struct keyed {
    float key;
    int64_t index;
} keyed;

/* The same order on keys, then index order (a stable sort). */
static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = cmp_f32(&x->key, &y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

#define SORT_ROW_LEN (1 << 22)

static void sort_input(workload *w, int64_t rows, int64_t cols)
{
    w->rows = rows;
    w->cols = cols;
    w->in[0] = make_f32(w->rows, w->cols, 65536);
    add_arg(w, 0, WEFT_F32, 2, (int64_t[]){ w->rows, w->cols });
    w->n_args = 1;
    w->n_outs = 1;
}

static void setup_sort_values(workload *w)
{
    sort_input(w, SORT_ROWS, SORT_COLS);
    w->out_elem[0] = sizeof(float);
    w->out_bytes[0] = sizeof(float) * SORT_ROWS * SORT_COLS;
}

static void setup_argsort_of(workload *w, int64_t rows, int64_t cols)
{
    sort_input(w, rows, cols);
    w->out_elem[0] = sizeof(int64_t);
    w->out_bytes[0] = sizeof(int64_t) * (size_t)(rows * cols);
}

static void setup_argsort(workload *w)
{
    setup_argsort_of(w, SORT_ROWS, SORT_COLS);
}

static void setup_argsort_row(workload *w)
{
    setup_argsort_of(w, 1, SORT_ROW_LEN);
}

static void c_sort(const workload *w, void **outs)
{
    float *o = outs[0];
    memcpy(o, w->in[0], w->out_bytes[0]);
    for (size_t r = 0; r < (size_t)w->rows; r++)
        qsort(o + r * (size_t)w->cols, (size_t)w->cols, sizeof(float), cmp_f32);
}

static void c_argsort(const workload *w, void **outs)
{
    const float *x = w->in[0];
    int64_t *o = outs[0];
    size_t cols = (size_t)w->cols;
    keyed *row = malloc(sizeof *row * cols);
    for (size_t r = 0; r < (size_t)w->rows; r++) {
        for (size_t c = 0; c < cols; c++)
            row[c] = (keyed){ x[r * cols + c], (int64_t)c };
        qsort(row, cols, sizeof *row, cmp_keyed);
        for (size_t c = 0; c < cols; c++)
            o[r * cols + c] = row[c].index;
    }
    free(row);
}

static int sort_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_sort(cx, args[0], -1, false);
    return weft_ctx_status(cx);
}

static int argsort_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_argsort(cx, args[0], -1, false);
    return weft_ctx_status(cx);
}

/* ---- (e) top_k. ---------------------------------------------------------- */

#define TOPK_ROWS 4096
#define TOPK_COLS 1024
#define TOPK_K    8

static void setup_top_k(workload *w)
{
    w->rows = TOPK_ROWS;
    w->cols = TOPK_COLS;
    /* 4096 values for 1024 per row: the top 8 often tie. */
    w->in[0] = make_f32(w->rows, w->cols, 4096);
    add_arg(w, 0, WEFT_F32, 2, (int64_t[]){ w->rows, w->cols });
    w->n_args = 1;
    w->n_outs = 2;
    w->out_elem[0] = sizeof(float);
    w->out_elem[1] = sizeof(int64_t);
    w->out_bytes[0] = sizeof(float) * TOPK_ROWS * TOPK_K;
    w->out_bytes[1] = sizeof(int64_t) * TOPK_ROWS * TOPK_K;
}

/* Each row's 8 largest, descending, the lower index first among ties: an
 * element goes in only when strictly larger than the 8th, and after the
 * ones equal to it. */
static void c_top_k(const workload *w, void **outs)
{
    const float *x = w->in[0];
    float *ov = outs[0];
    int64_t *oi = outs[1];
    for (size_t r = 0; r < TOPK_ROWS; r++) {
        float v[TOPK_K];
        int64_t ix[TOPK_K];
        int n = 0;
        const float *row = x + r * TOPK_COLS;
        for (int64_t c = 0; c < TOPK_COLS; c++) {
            float e = row[c];
            if (n == TOPK_K && !(e > v[TOPK_K - 1]))
                continue;
            int p = n < TOPK_K ? n++ : TOPK_K - 1;
            for (; p > 0 && e > v[p - 1]; p--) {
                v[p] = v[p - 1];
                ix[p] = ix[p - 1];
            }
            v[p] = e;
            ix[p] = c;
        }
        memcpy(ov + r * TOPK_K, v, sizeof v);
        memcpy(oi + r * TOPK_K, ix, sizeof ix);
    }
}

static int top_k_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    return weft_top_k(cx, args[0], TOPK_K, true, outs);
}

/* ---- (f) unsorted segment sum. ------------------------------------------ */

#define SEG_ROWS 1000000
#define SEG_COLS 16
#define SEG_NUM  1000

static void setup_segsum(workload *w)
{
    w->rows = SEG_ROWS;
    w->cols = SEG_COLS;
    w->in[0] = make_f32(w->rows, w->cols, 1 << 20);
    int32_t *ids = malloc(sizeof *ids * SEG_ROWS);
    for (size_t i = 0; i < SEG_ROWS; i++)
        ids[i] = (int32_t)(lcg() % SEG_NUM);
    w->in[1] = ids;
    add_arg(w, 0, WEFT_F32, 2, (int64_t[]){ w->rows, w->cols });
    add_arg(w, 1, WEFT_I32, 1, (int64_t[]){ w->rows });
    w->n_args = 2;
    w->n_outs = 1;
    w->out_elem[0] = sizeof(float);
    w->out_bytes[0] = sizeof(float) * SEG_NUM * SEG_COLS;
}

static void c_segsum(const workload *w, void **outs)
{
    const float *x = w->in[0];
    const int32_t *id = w->in[1];
    double *acc = calloc(SEG_NUM * SEG_COLS, sizeof *acc);
    for (size_t i = 0; i < SEG_ROWS; i++)
        for (size_t j = 0; j < SEG_COLS; j++)
            acc[(size_t)id[i] * SEG_COLS + j] += x[i * SEG_COLS + j];
    float *o = outs[0];
    for (size_t k = 0; k < SEG_NUM * SEG_COLS; k++)
        o[k] = (float)acc[k];
    free(acc);
}

static int segsum_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_unsorted_segment(cx, WEFT_R_SUM, args[0], args[1], SEG_NUM);
    return weft_ctx_status(cx);
}

/* ---- (g) gather_nd. ------------------------------------------------------ */

#define GATHER_ROWS 100000
#define GATHER_COLS 64
#define GATHER_N    500000

static void setup_gather_nd(workload *w)
{
    w->rows = GATHER_ROWS;
    w->cols = GATHER_COLS;
    w->in[0] = make_f32(w->rows, w->cols, 1 << 20);
    int64_t *idx = malloc(sizeof *idx * GATHER_N);
    for (size_t i = 0; i < GATHER_N; i++)
        idx[i] = lcg() % GATHER_ROWS;
    w->in[1] = idx;
    add_arg(w, 0, WEFT_F32, 2, (int64_t[]){ w->rows, w->cols });
    add_arg(w, 1, WEFT_I64, 2, (int64_t[]){ GATHER_N, 1 });
    w->n_args = 2;
    w->n_outs = 1;
    w->out_elem[0] = sizeof(float);
    w->out_bytes[0] = sizeof(float) * GATHER_N * GATHER_COLS;
}

static void c_gather_nd(const workload *w, void **outs)
{
    const float *p = w->in[0];
    const int64_t *idx = w->in[1];
    float *o = outs[0];
    for (size_t i = 0; i < GATHER_N; i++)
        memcpy(o + i * GATHER_COLS, p + (size_t)idx[i] * GATHER_COLS,
               sizeof(float) * GATHER_COLS);
}

static int gather_nd_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_gather_nd(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

/* ---- (h) random_uniform. ------------------------------------------------ */

#define RANDOM_N 10000000

static void setup_random(workload *w)
{
    int64_t *seed = malloc(sizeof *seed * 2);
    seed[0] = 20261203;
    seed[1] = 7;
    w->in[0] = seed;
    add_arg(w, 0, WEFT_I64, 1, (int64_t[]){ 2 });
    w->n_args = 1;
    w->n_outs = 1;
    w->out_elem[0] = sizeof(float);
    w->out_bytes[0] = sizeof(float) * RANDOM_N;
}

static void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

static void c_random(const workload *w, void **outs)
{
    const int64_t *seed = w->in[0];
    uint32_t key[2] = { (uint32_t)seed[0], (uint32_t)((uint64_t)seed[0] >> 32) };
    float *o = outs[0];
    for (uint64_t blk = 0; blk < RANDOM_N / 4; blk++) {
        uint32_t ctr[4] = { (uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)seed[1],
                            (uint32_t)((uint64_t)seed[1] >> 32) };
        uint32_t r[4];
        philox4x32_10(ctr, key, r);
        for (int t = 0; t < 4; t++)
            o[blk * 4 + t] = (float)(r[t] >> 8) * 0x1p-24f;
    }
}

static int random_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_random_uniform(cx, args[0], WEFT_F32, 1, (int64_t[]){ RANDOM_N }, 0, 1);
    return weft_ctx_status(cx);
}

/* ---- (i) boolean_mask, argwhere and unique. ------------------------------ */

#define MASK_ROWS 1000000
#define MASK_COLS 16
#define WHERE_ROWS 4096
#define WHERE_COLS 1024
#define UNIQUE_N 1000000
#define UNIQUE_DISTINCT 100000

/* n bytes, each true with probability percent / 100; how many are true. */
static uint8_t *make_mask(size_t n, unsigned percent, size_t *count)
{
    uint8_t *m = malloc(n);
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        m[i] = lcg() % 100 < percent;
        *count += m[i];
    }
    return m;
}

static void setup_mask(workload *w)
{
    size_t count;
    w->rows = MASK_ROWS;
    w->cols = MASK_COLS;
    w->in[0] = make_f32(w->rows, w->cols, 65536);
    w->in[1] = make_mask(MASK_ROWS, 50, &count);
    add_arg(w, 0, WEFT_F32, 2, (int64_t[]){ w->rows, w->cols });
    add_arg(w, 1, WEFT_BOOL, 1, (int64_t[]){ MASK_ROWS });
    w->n_args = 2;
    w->n_outs = 1;
    w->out_elem[0] = sizeof(float);
    w->out_bytes[0] = sizeof(float) * count * MASK_COLS;
}

static void c_mask(const workload *w, void **outs)
{
    const float *x = w->in[0];
    const uint8_t *m = w->in[1];
    float *o = outs[0];
    for (size_t i = 0; i < MASK_ROWS; i++)
        if (m[i]) {
            memcpy(o, x + i * MASK_COLS, sizeof(float) * MASK_COLS);
            o += MASK_COLS;
        }
}

static int mask_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_boolean_mask(cx, args[0], args[1], 0);
    return weft_ctx_status(cx);
}

static void setup_argwhere(workload *w)
{
    size_t count;
    w->rows = WHERE_ROWS;
    w->cols = WHERE_COLS;
    w->in[0] = make_mask((size_t)WHERE_ROWS * WHERE_COLS, 30, &count);
    add_arg(w, 0, WEFT_BOOL, 2, (int64_t[]){ w->rows, w->cols });
    w->n_args = 1;
    w->n_outs = 1;
    w->out_elem[0] = sizeof(int64_t);
    w->out_bytes[0] = sizeof(int64_t) * 2 * count;
}

static void c_argwhere(const workload *w, void **outs)
{
    const uint8_t *m = w->in[0];
    int64_t *o = outs[0];
    for (int64_t r = 0; r < WHERE_ROWS; r++)
        for (int64_t c = 0; c < WHERE_COLS; c++)
            if (m[r * WHERE_COLS + c]) {
                *o++ = r;
                *o++ = c;
            }
}

static int argwhere_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_argwhere(cx, args[0]);
    return weft_ctx_status(cx);
}

/* The C a user would write for tf.unique: an open-addressing table from a
 * value to its index among the distinct values (a multiplicative hash,
 * linear probing), filled in one pass. */
static size_t c_unique_into(const int32_t *x, size_t n, int32_t *values, int64_t *idx)
{
    size_t slots = 1;
    while (slots < 2 * n)
        slots *= 2;
    int64_t *table = calloc(slots, sizeof *table);   /* index + 1; 0: empty */
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        size_t s = (size_t)(((uint64_t)(uint32_t)x[i] * 0x9E3779B97F4A7C15u) >> 32) & (slots - 1);
        while (table[s] && values[table[s] - 1] != x[i])
            s = (s + 1) & (slots - 1);
        if (!table[s]) {
            values[u] = x[i];
            table[s] = (int64_t)++u;
        }
        idx[i] = table[s] - 1;
    }
    free(table);
    return u;
}

static void setup_unique(workload *w)
{
    int32_t *x = malloc(sizeof *x * UNIQUE_N);
    for (size_t i = 0; i < UNIQUE_N; i++)
        x[i] = (int32_t)(lcg() % UNIQUE_DISTINCT) * 7 - 300000;
    w->in[0] = x;
    w->rows = UNIQUE_N;
    w->cols = 1;
    add_arg(w, 0, WEFT_I32, 1, (int64_t[]){ UNIQUE_N });
    w->n_args = 1;
    w->n_outs = 2;
    int32_t *values = malloc(sizeof *values * UNIQUE_N);
    int64_t *idx = malloc(sizeof *idx * UNIQUE_N);
    size_t u = c_unique_into(x, UNIQUE_N, values, idx);
    free(values);
    free(idx);
    w->out_elem[0] = sizeof(int32_t);
    w->out_bytes[0] = sizeof(int32_t) * u;
    w->out_elem[1] = sizeof(int64_t);
    w->out_bytes[1] = sizeof(int64_t) * UNIQUE_N;
}

static void c_unique(const workload *w, void **outs)
{
    /* The values' buffer of the right size is allocated by c_run; the
     * table writes at most that many. */
    c_unique_into(w->in[0], UNIQUE_N, outs[0], outs[1]);
}

static int unique_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    return weft_unique(cx, args[0], outs);
}

/* ---- Timing and checking. ----------------------------------------------- */

static workload workloads[] = {
    { .name = "sort", .title = "(d) sort of f32[1024,4096] along the last axis",
      .body = sort_body, .setup = setup_sort_values, .cloop = c_sort },
    { .name = "argsort", .title = "(d) argsort of f32[1024,4096] along the last axis",
      .body = argsort_body, .setup = setup_argsort, .cloop = c_argsort },
    { .name = "argsort_row", .title = "(d) argsort of one row f32[1,4194304]",
      .body = argsort_body, .setup = setup_argsort_row, .cloop = c_argsort },
    { .name = "top_k", .title = "(e) top_k k=8 of f32[4096,1024]",
      .body = top_k_body, .setup = setup_top_k, .cloop = c_top_k },
    { .name = "segsum", .title = "(f) unsorted_segment sum of f32[1e6,16], 1000 segments",
      .body = segsum_body, .setup = setup_segsum, .cloop = c_segsum },
    { .name = "gather_nd", .title = "(g) gather_nd of f32[1e5,64] by i64[5e5,1]",
      .body = gather_nd_body, .setup = setup_gather_nd, .cloop = c_gather_nd },
    { .name = "random", .title = "(h) random_uniform of f32[1e7]",
      .body = random_body, .setup = setup_random, .cloop = c_random },
    { .name = "mask", .title = "(i) boolean_mask of f32[1e6,16] by bool[1e6], half true",
      .body = mask_body, .setup = setup_mask, .cloop = c_mask },
    { .name = "argwhere", .title = "(i) argwhere of bool[4096,1024], 30% true",
      .body = argwhere_body, .setup = setup_argwhere, .cloop = c_argwhere },
    { .name = "unique", .title = "(i) unique of i32[1e6], 1e5 distinct values",
      .body = unique_body, .setup = setup_unique, .cloop = c_unique },
};
#define N_WORK (sizeof workloads / sizeof workloads[0])

static void teardown(workload *w)
{
    for (size_t k = 0; k < w->n_args; k++) {
        weft_tensor_release(w->targs[k]);
        free(w->in[k]);
    }
}

/* One C run into fresh buffers, freed again (as a caller dropping the
 * result would). */
static void c_run(const workload *w)
{
    void *outs[MAX_OUTS];
    for (size_t k = 0; k < w->n_outs; k++)
        outs[k] = malloc(w->out_bytes[k]);
    w->cloop(w, outs);
    for (size_t k = 0; k < w->n_outs; k++) {
        bench_sink += ((const unsigned char *)outs[k])[w->out_bytes[k] / 2];
        free(outs[k]);
    }
}

static void w_call(const workload *w, weft_function *f, weft_tensor **outs)
{
    int err = weft_function_call(f, w->args, w->n_args, outs, w->n_outs);
    if (err)
        bench_die("weft_function_call", err);
}

static void w_run(const workload *w, weft_function *f)
{
    weft_tensor *outs[MAX_OUTS] = { NULL };
    w_call(w, f, outs);
    for (size_t k = 0; k < w->n_outs; k++) {
        bench_sink += ((const unsigned char *)weft_tensor_data(outs[k]))[w->out_bytes[k] / 2];
        weft_tensor_release(outs[k]);
    }
}

static weft_function *make_fn(const workload *w)
{
    weft_spec sig[MAX_ARGS];
    for (size_t k = 0; k < w->n_args; k++)
        if (weft_spec_parse(w->sig[k], &sig[k]) != 0)
            bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = w->name;
    d.body = w->body;
    d.n_args = w->n_args;
    d.n_outs = w->n_outs;
    d.input_signature = sig;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

/* weft's outputs against C's, element by element, bit for bit. */
static void check(const workload *w, weft_function *f, unsigned workers)
{
    weft_tensor *outs[MAX_OUTS] = { NULL };
    w_call(w, f, outs);
    void *want[MAX_OUTS];
    for (size_t k = 0; k < w->n_outs; k++)
        want[k] = malloc(w->out_bytes[k]);
    w->cloop(w, want);
    for (size_t k = 0; k < w->n_outs; k++) {
        size_t es = w->out_elem[k], n = w->out_bytes[k] / es;
        char what[160];
        snprintf(what, sizeof what, "%s output %zu on %u workers: element count", w->name, k,
                 workers);
        if ((size_t)weft_tensor_numel(outs[k]) != n) {
            bench_fail(what, (uint64_t)weft_tensor_numel(outs[k]), n);
        } else {
            const unsigned char *got = weft_tensor_data(outs[k]), *exp = want[k];
            uint64_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += memcmp(got + i * es, exp + i * es, es) != 0;
            snprintf(what, sizeof what, "%s output %zu on %u workers: elements differing from C",
                     w->name, k, workers);
            if (bad)
                bench_fail(what, bad, 0);
        }
        free(want[k]);
        weft_tensor_release(outs[k]);
    }
}

typedef struct result {
    double c, weft, ratio;   /* medians: seconds, seconds, weft / C */
} result;

/* Checks, warms up, then times C and weft back to back reps times. */
static void measure(const workload *w, int reps, unsigned workers, result *res)
{
    weft_function *f = make_fn(w);
    check(w, f, workers);
    double t0 = bench_now();
    do {
        c_run(w);
        w_run(w, f);
    } while (bench_now() - t0 < BENCH_WARMUP_NS * 1e-9);
    double tc[BENCH_MAX_REPS], tw[BENCH_MAX_REPS], rr[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double t1 = bench_now();
        c_run(w);
        tc[r] = bench_now() - t1;
        t1 = bench_now();
        w_run(w, f);
        tw[r] = bench_now() - t1;
        rr[r] = tw[r] / tc[r];
    }
    res->c = bench_median(tc, reps);
    res->weft = bench_median(tw, reps);
    res->ratio = bench_median(rr, reps);
    weft_function_destroy(&f);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    static result res[N_WORK][BENCH_MAX_WORKERS];
    bool ran[N_WORK] = { false };

    printf("sorting and indexing ops: weft call against serial C, medians over %d repetitions "
           "(weft/C: median of per-repetition ratios, below 1 is weft faster)\n", reps);
    for (size_t i = 0; i < N_WORK; i++) {
        workload *w = &workloads[i];
        if (!bench_selected("BENCH_INDEX_ONLY", w->name))
            continue;
        ran[i] = true;
        w->setup(w);
        for (int k = 0; k < nw; k++) {
            rt = bench_runtime(workers[k]);
            measure(w, reps, workers[k], &res[i][k]);
            weft_runtime_destroy(&rt);
            bench_settle(50);
        }
        teardown(w);
        printf("\n%s\n  %-8s %10s %10s %8s\n", w->title, "workers", "C ms", "weft ms", "weft/C");
        for (int k = 0; k < nw; k++)
            printf("  %-8u %10.2f %10.2f %7.2fx\n", workers[k], res[i][k].c * 1e3,
                   res[i][k].weft * 1e3, res[i][k].ratio);
        fflush(stdout);
    }
    printf("\n");
    for (int k = 0; k < nw; k++) {
        printf("summary: %u workers: weft/C time", workers[k]);
        for (size_t i = 0; i < N_WORK; i++)
            if (ran[i])
                printf(" %s %.2fx", workloads[i].name, res[i][k].ratio);
        printf("\n");
    }
    return bench_exit_status();
}
