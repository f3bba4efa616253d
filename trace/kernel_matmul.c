/* Matrix products (weft__eval_matmul): NumPy's matmul over a batch of
 * matrices.  f32 and f64 products of some size go to the BLAS (trace/blas.c
 * keeps its own threads out of the way); integers, bool, small products and
 * every product of a build without a BLAS run the loops below.
 *
 * Each product's result is cut into tiles by its shape alone (never by the
 * worker count), and a tile is one BLAS call or one loop nest whose summing
 * order does not depend on the other tiles: the result is the same bit for
 * bit on any number of workers and when folded serially.  The tiles of all
 * batches are then split into weft__chunk_count chunks for the workers. */
#include <limits.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/kernels.h"

#if WEFT_HAVE_BLAS
#include "trace/blas_api.h"
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* A tile holds at most this many rows and columns of a result.  128 rows
 * keep the BLAS's repacking of the other operand per tile below 1% of the
 * work; 512 columns cut a wide product once or more. */
#define MM_TILE_ROWS 128
#define MM_TILE_COLS 512
/* Products of fewer multiply-adds are one tile: the call costs more than
 * the work another worker could take. */
#define MM_SPLIT_WORK (1u << 20)
/* Products of fewer multiply-adds skip the BLAS, whose per-call setup
 * (argument checks, buffer pool) outweighs a small loop. */
#define MM_BLAS_MIN_WORK 4096
/* Products of fewer multiply-adds run on the calling thread in OpenBLAS
 * whatever its thread count (it threads gemm above 65536 x 4 of them and
 * gemv above 2304 x 4 matrix elements), so they skip weft__blas_hold: a
 * process-wide lock that workers multiplying small matrices side by side
 * (a map's rows) would take twice a product and fight over. */
#define MM_BLAS_SERIAL_WORK 9216

typedef struct mm_job {
    weft_dtype dt;
    bool ta, tb;           /* op(A) = A^T, op(B) = B^T (stored transposed) */
    bool blas;
    const char *a, *b;
    char *c;
    size_t esize;
    /* One product: op(A) is m x k with stored row stride lda, op(B) is
     * k x n with stored row stride ldb, C is m x n with row stride n. */
    int64_t m, k, n, lda, ldb;
    /* The result's batch dims and, per dim, the elements to step in a and
     * in b (0 where that operand broadcasts). */
    int nb;
    int64_t bdims[WEFT_MAX_RANK], astep[WEFT_MAX_RANK], bstep[WEFT_MAX_RANK];
    int64_t tiles_m, tiles_n;
    uint64_t units;        /* batches x tiles_m x tiles_n */
    size_t chunks;
} mm_job;

typedef struct mm_tile {
    const char *a, *b;     /* the product's operands */
    char *c;               /* the product's result */
    int64_t r0, r1, c0, c1;
} mm_tile;

/* ---- Loops ----------------------------------------------------------- */

/* C[r0:r1, c0:c1] of one product.  Without a transposed B, rows of B are
 * contiguous: i-k-j order, an axpy over a row of B as the inner loop (it
 * vectorizes).  With one, columns of op(B) are contiguous: a dot product
 * per element.  Integers accumulate in the unsigned type (wrapping).  The
 * plain product (no transposes) gets its own copy of the loop nest, with
 * A's stride a constant 1, so that a tiny product costs what it did
 * before transposes existed. */
#define MM_ROWS(T, U, AS_I, AS_P, TB)                                                   \
    for (int64_t i = t->r0; i < t->r1; i++) {                                           \
        U *restrict crow = (U *)(void *)(C + i * n);                                    \
        const T *restrict arow = A + i * (AS_I);                                        \
        if (TB) {                                                                       \
            for (int64_t q = 0; q < w; q++) {                                           \
                const T *restrict bcol = B + q * ldb;                                   \
                U acc = 0;                                                              \
                for (int64_t p = 0; p < k; p++)                                         \
                    acc = (U)(acc + (U)arow[p * (AS_P)] * (U)bcol[p]);                  \
                crow[q] = acc;                                                          \
            }                                                                           \
            continue;                                                                   \
        }                                                                               \
        for (int64_t q = 0; q < w; q++)                                                 \
            crow[q] = 0;                                                                \
        for (int64_t p = 0; p < k; p++) {                                               \
            const U av = (U)arow[p * (AS_P)];                                           \
            const T *restrict brow = B + p * ldb;                                       \
            for (int64_t q = 0; q < w; q++)                                             \
                crow[q] = (U)(crow[q] + av * (U)brow[q]);                               \
        }                                                                               \
    }

#define MM_LOOP(NAME, T, U)                                                             \
    static void NAME(const mm_job *j, const mm_tile *t)                                 \
    {                                                                                   \
        const int64_t k = j->k, n = j->n, ldb = j->ldb, w = t->c1 - t->c0;              \
        const T *restrict A = (const T *)(const void *)t->a;                            \
        const T *restrict B = (const T *)(const void *)t->b + (j->tb ? t->c0 * ldb        \
                                                                     : t->c0);          \
        T *restrict C = (T *)(void *)t->c + t->c0;                                      \
        if (!j->ta && !j->tb) {                                                         \
            MM_ROWS(T, U, j->lda, 1, false)                                             \
            return;                                                                     \
        }                                                                               \
        const int64_t as_i = j->ta ? 1 : j->lda, as_p = j->ta ? j->lda : 1;             \
        MM_ROWS(T, U, as_i, as_p, j->tb)                                                \
    }

MM_LOOP(mm_i32, int32_t, uint32_t)
MM_LOOP(mm_i64, int64_t, uint64_t)
MM_LOOP(mm_f32, float, float)
MM_LOOP(mm_f64, double, double)

/* bool: C[i,q] = any over p of (A[i,p] and B[p,q]).  Stored bools are 0
 * or 1, so the axpy is an or of a row. */
static void mm_bool(const mm_job *j, const mm_tile *t)
{
    const int64_t k = j->k, n = j->n, ldb = j->ldb, w = t->c1 - t->c0;
    const int64_t as_i = j->ta ? 1 : j->lda, as_p = j->ta ? j->lda : 1;
    const uint8_t *restrict A = (const uint8_t *)t->a;
    const uint8_t *restrict B = (const uint8_t *)t->b + (j->tb ? t->c0 * ldb : t->c0);
    uint8_t *restrict C = (uint8_t *)t->c + t->c0;
    for (int64_t i = t->r0; i < t->r1; i++) {
        uint8_t *restrict crow = C + i * n;
        const uint8_t *restrict arow = A + i * as_i;
        if (j->tb) {
            for (int64_t q = 0; q < w; q++) {
                const uint8_t *restrict bcol = B + q * ldb;
                uint8_t any = 0;
                for (int64_t p = 0; p < k && !any; p++)
                    any = arow[p * as_p] & bcol[p];
                crow[q] = any;
            }
            continue;
        }
        for (int64_t q = 0; q < w; q++)
            crow[q] = 0;
        for (int64_t p = 0; p < k; p++) {
            if (!arow[p * as_p])
                continue;
            const uint8_t *restrict brow = B + p * ldb;
            for (int64_t q = 0; q < w; q++)
                crow[q] |= brow[q];
        }
    }
}

/* ---- BLAS ------------------------------------------------------------ */

#if WEFT_HAVE_BLAS
/* One tile as one BLAS call: gemv when the result is a row or a column
 * (gemm would pack a vector as a matrix), else gemm.  The vector operand
 * is contiguous either way (a column [k,1] or a row [1,k], transposed or
 * not).  The caller made sure that every dim and stride fits in an int. */
#define MM_BLAS(NAME, T, GEMM, GEMV)                                                    \
    static void NAME(const mm_job *j, const mm_tile *t)                                 \
    {                                                                                   \
        const T *A = (const T *)(const void *)t->a;                                     \
        const T *B = (const T *)(const void *)t->b;                                     \
        T *C = (T *)(void *)t->c;                                                       \
        const int k = (int)j->k, lda = (int)j->lda, ldb = (int)j->ldb;                  \
        const int rows = (int)(t->r1 - t->r0), cols = (int)(t->c1 - t->c0);             \
        if (j->n == 1) {                                                                \
            /* y = op(A)[r0:r1, :] x, x the column of B; y zeroed, beta 1:              \
             * a reused buffer's old bits never reach the result. */                    \
            T *y = C + t->r0;                                                           \
            memset(y, 0, sizeof(T) * (size_t)rows);                                     \
            if (j->ta)                                                                  \
                GEMV(CblasRowMajor, CblasTrans, k, rows, 1, A + t->r0, lda, B, 1, 1,    \
                     y, 1);                                                             \
            else                                                                        \
                GEMV(CblasRowMajor, CblasNoTrans, rows, k, 1, A + t->r0 * j->lda, lda,  \
                     B, 1, 1, y, 1);                                                    \
        } else if (j->m == 1) {                                                         \
            /* y^T = x^T op(B)[:, c0:c1], x the row of A. */                            \
            T *y = C + t->c0;                                                           \
            memset(y, 0, sizeof(T) * (size_t)cols);                                     \
            if (j->tb)                                                                  \
                GEMV(CblasRowMajor, CblasNoTrans, cols, k, 1, B + t->c0 * j->ldb, ldb,  \
                     A, 1, 1, y, 1);                                                    \
            else                                                                        \
                GEMV(CblasRowMajor, CblasTrans, k, cols, 1, B + t->c0, ldb, A, 1, 1,    \
                     y, 1);                                                             \
        } else {                                                                        \
            const T *a0 = j->ta ? A + t->r0 : A + t->r0 * j->lda;                       \
            const T *b0 = j->tb ? B + t->c0 * j->ldb : B + t->c0;                       \
            GEMM(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans,                      \
                 j->tb ? CblasTrans : CblasNoTrans, rows, cols, k, 1, a0, lda, b0, ldb, \
                 0, C + t->r0 * j->n + t->c0, (int)j->n);                               \
        }                                                                               \
    }

MM_BLAS(mm_blas_f32, float, cblas_sgemm, cblas_sgemv)
MM_BLAS(mm_blas_f64, double, cblas_dgemm, cblas_dgemv)
#endif

/* ---- Tiles and chunks ------------------------------------------------ */

/* The operands and the result of batch number `batch`. */
static void mm_batch(const mm_job *j, uint64_t batch, mm_tile *t)
{
    int64_t aoff = 0, boff = 0;
    uint64_t rest = batch;
    for (int d = j->nb - 1; d >= 0; d--) {
        int64_t i = (int64_t)(rest % (uint64_t)j->bdims[d]);
        rest /= (uint64_t)j->bdims[d];
        aoff += i * j->astep[d];
        boff += i * j->bstep[d];
    }
    t->a = j->a + (size_t)aoff * j->esize;
    t->b = j->b + (size_t)boff * j->esize;
    t->c = j->c + (size_t)batch * (size_t)(j->m * j->n) * j->esize;
}

static void mm_loop(const mm_job *j, const mm_tile *t)
{
    switch (j->dt) {
    case WEFT_BOOL: mm_bool(j, t); break;
    case WEFT_I32:  mm_i32(j, t); break;
    case WEFT_I64:  mm_i64(j, t); break;
    case WEFT_F32:  mm_f32(j, t); break;
    case WEFT_F64:  mm_f64(j, t); break;
    }
}

#if WEFT_HAVE_BLAS
/* Tile number `tile` of a product: its row and column block. */
static void mm_blas_tile(const mm_job *j, uint64_t tile, mm_tile *t)
{
    size_t ti = (size_t)(tile / (uint64_t)j->tiles_n), tj = (size_t)(tile % (uint64_t)j->tiles_n);
    t->r0 = (int64_t)weft__chunk_begin((uint64_t)j->m, (size_t)j->tiles_m, ti);
    t->r1 = (int64_t)weft__chunk_begin((uint64_t)j->m, (size_t)j->tiles_m, ti + 1);
    t->c0 = (int64_t)weft__chunk_begin((uint64_t)j->n, (size_t)j->tiles_n, tj);
    t->c1 = (int64_t)weft__chunk_begin((uint64_t)j->n, (size_t)j->tiles_n, tj + 1);
    if (j->dt == WEFT_F32)
        mm_blas_f32(j, t);
    else
        mm_blas_f64(j, t);
}
#endif

/* Units [u0, u1), batch by batch: BLAS tiles one call each; the loops'
 * units, which are rows, one call for a batch's run of rows. */
static void mm_units(const mm_job *j, uint64_t u0, uint64_t u1)
{
    uint64_t per = (uint64_t)(j->tiles_m * j->tiles_n);
    while (u0 < u1) {
        mm_tile t;
        uint64_t first = u0 % per, end = per - first < u1 - u0 ? per : first + (u1 - u0);
        mm_batch(j, u0 / per, &t);
#if WEFT_HAVE_BLAS
        if (j->blas) {
            for (uint64_t tile = first; tile < end; tile++)
                mm_blas_tile(j, tile, &t);
            u0 += end - first;
            continue;
        }
#endif
        t.r0 = (int64_t)first;
        t.r1 = (int64_t)end;
        t.c0 = 0;
        t.c1 = j->n;
        mm_loop(j, &t);
        u0 += end - first;
    }
}

/* Chunks [cb, ce) hold the units from the first's start to the last's end. */
static int mm_chunk(size_t cb, size_t ce, void *ctx)
{
    const mm_job *j = ctx;
    if (j->blas)
        weft__blas_thread_enter();
    mm_units(j, weft__chunk_begin(j->units, j->chunks, cb),
             weft__chunk_begin(j->units, j->chunks, ce));
    return 0;
}

/* ---- Setup ----------------------------------------------------------- */

/* m, k, n and the stored row strides from the operands' last dims (a 1-D
 * a is the row [1,k], a 1-D b the column [k,1]). */
static void mm_dims(mm_job *j, const weft_tensor *a, const weft_tensor *b)
{
    int ra = a->rank, rb = b->rank;
    int64_t a_rows = ra == 1 ? 1 : a->dims[ra - 2], a_cols = a->dims[ra - 1];
    int64_t b_rows = rb == 1 ? b->dims[0] : b->dims[rb - 2], b_cols = rb == 1 ? 1 : b->dims[rb - 1];
    j->m = j->ta ? a_cols : a_rows;
    j->k = j->ta ? a_rows : a_cols;
    j->n = j->tb ? b_rows : b_cols;
    j->lda = a_cols;
    j->ldb = b_cols;
}

/* The result's j->nb batch dims (out's dims before its matrix dims) and
 * the steps through a and b, whose batch dims align to the right. */
static void mm_batches(mm_job *j, const weft_tensor *a, const weft_tensor *b,
                       const weft_tensor *out)
{
    int anb = a->rank > 2 ? a->rank - 2 : 0, bnb = b->rank > 2 ? b->rank - 2 : 0;
    int64_t astride = a->rank > 1 ? a->dims[a->rank - 2] * a->dims[a->rank - 1] : 0;
    int64_t bstride = b->rank > 1 ? b->dims[b->rank - 2] * b->dims[b->rank - 1] : 0;
    for (int d = j->nb - 1; d >= 0; d--) {
        j->bdims[d] = out->dims[d];
        int da = d - (j->nb - anb), db = d - (j->nb - bnb);
        j->astep[d] = da >= 0 && a->dims[da] != 1 ? astride : 0;
        j->bstep[d] = db >= 0 && b->dims[db] != 1 ? bstride : 0;
        if (da >= 0)
            astride *= a->dims[da];
        if (db >= 0)
            bstride *= b->dims[db];
    }
}

static bool fits_int(int64_t v) { return v <= INT_MAX; }

/* Fills j from the node and the tensors (the batch arrays field by field:
 * zeroing them would cost more than a 2x2 product's loop) and returns the
 * multiply-adds of one product. */
static uint64_t mm_setup(mm_job *j, const weft__node *n, const weft_tensor *a,
                         const weft_tensor *b, const weft_tensor *out)
{
    j->dt = out->dtype;
    j->ta = n->attr.matmul.flags & WEFT_TRANSPOSE_A;
    j->tb = n->attr.matmul.flags & WEFT_TRANSPOSE_B;
    j->a = a->data;
    j->b = b->data;
    j->c = out->data;
    j->esize = weft_dtype_size(out->dtype);
    mm_dims(j, a, b);
    j->nb = out->rank - (a->rank > 1) - (b->rank > 1);
    if (j->nb > 0)
        mm_batches(j, a, b, out);
    uint64_t work = weft__sat_mul(weft__sat_mul((uint64_t)j->m, (uint64_t)j->n),
                                  (uint64_t)j->k);
    j->blas = weft__blas_available() && (j->dt == WEFT_F32 || j->dt == WEFT_F64) &&
              work >= MM_BLAS_MIN_WORK && fits_int(j->m) && fits_int(j->n) && fits_int(j->k) &&
              fits_int(j->lda) && fits_int(j->ldb);
    return work;
}

/* Tiles and chunks.  A loop computes each element alone, so its rows may
 * be cut anywhere; a BLAS call's tile is fixed by the shape. */
static void mm_plan(mm_job *j, weft_runtime *rt, uint64_t work, uint64_t batches)
{
    j->tiles_m = j->blas ? 1 : j->m;
    j->tiles_n = 1;
    if (j->blas && work >= MM_SPLIT_WORK) {
        j->tiles_m = (j->m + MM_TILE_ROWS - 1) / MM_TILE_ROWS;
        j->tiles_n = (j->n + MM_TILE_COLS - 1) / MM_TILE_COLS;
    }
    j->units = batches * (uint64_t)(j->tiles_m * j->tiles_n);
    j->chunks = weft__chunk_count_of(rt, weft__sat_mul(work, batches), j->units);
}

int weft__eval_matmul(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      const weft_tensor *b, weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    mm_job j;
    uint64_t work = mm_setup(&j, n, a, b, out);
    if (j.k == 0) {
        memset(j.c, 0, out->nbytes);   /* an empty sum */
        return 0;
    }
    if (!j.blas && j.nb == 0 && work <= WEFT__KERNEL_SPLIT_MIN) {
        /* One small product (the usual case in a chain of tiny ops): the
         * loop at once, without the walk over batches and chunks. */
        mm_tile t = {.a = j.a, .b = j.b, .c = j.c, .r0 = 0, .r1 = j.m, .c0 = 0, .c1 = j.n};
        mm_loop(&j, &t);
        return 0;
    }
    mm_plan(&j, rt, work, (uint64_t)out->numel / ((uint64_t)j.m * (uint64_t)j.n));
    return weft__run_chunks_blas(rt, j.chunks, mm_chunk, &j,
                                 j.blas && work >= MM_BLAS_SERIAL_WORK);
}
