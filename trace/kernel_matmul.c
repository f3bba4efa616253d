/* Matrix products (weft__eval_matmul). */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

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
        int64_t i0 = (int64_t)weft__chunk_begin((uint64_t)j->m, j->chunks, c);
        int64_t i1 = (int64_t)weft__chunk_begin((uint64_t)j->m, j->chunks, c + 1);
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

int weft__eval_matmul(weft_runtime *rt, const weft_tensor *a, const weft_tensor *b,
                       weft_tensor *out)
{
    mm_job j = {.dt = a->dtype, .a = weft_tensor_data(a), .b = weft_tensor_data(b),
                .c = weft__tensor_mut(out), .m = a->dims[0], .k = a->dims[1], .n = b->dims[1]};
    if (j.m == 0 || j.n == 0)
        return 0;
    uint64_t work = (uint64_t)j.m * (uint64_t)j.n * (uint64_t)(j.k ? j.k : 1);
    j.chunks = weft__chunk_count(rt, work);
    if (j.chunks > (uint64_t)j.m)
        j.chunks = (size_t)j.m;
    return weft__run_chunks(rt, j.chunks, mm_chunk, &j);
}

