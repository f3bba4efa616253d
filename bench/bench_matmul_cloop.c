/* The naive matrix product that weft_matmul is compared with in
 * bench_matmul.c: i-k-j order (the inner loop is an axpy over a row of b,
 * which vectorizes), compiled at -O3 like bench_cloop.c. */
#include <stddef.h>

void cloop_matmul_f32(float *restrict c, const float *restrict a, const float *restrict b,
                      size_t m, size_t k, size_t n);

void cloop_matmul_f32(float *restrict c, const float *restrict a, const float *restrict b,
                      size_t m, size_t k, size_t n)
{
    for (size_t i = 0; i < m; i++) {
        float *restrict crow = c + i * n;
        for (size_t j = 0; j < n; j++)
            crow[j] = 0.0f;
        for (size_t p = 0; p < k; p++) {
            const float av = a[i * k + p];
            const float *restrict brow = b + p * n;
            for (size_t j = 0; j < n; j++)
                crow[j] += av * brow[j];
        }
    }
}
