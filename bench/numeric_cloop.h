/* The plain C loops the numeric suite (bench_numeric.c) compares weft
 * with, one per workload, built at -O3 in their own static library
 * (numeric_cloop.c), as libweft's kernels are.  Each is the loop a C
 * programmer would write: row-major, serial, no intrinsics. */
#ifndef WEFT_BENCH_NUMERIC_CLOOP_H
#define WEFT_BENCH_NUMERIC_CLOOP_H

#include <stddef.h>

/* y[r,:] = (x[r,:] - mean) / sqrt(var + eps) over rows of w elements. */
void cloop_normalize(float *y, const float *x, size_t rows, size_t w, float eps);
/* y = sqrt(abs(1.5x - 2)) * x + exp(-x * x). */
void cloop_chain(float *y, const float *x, size_t n);
/* y[r,:] = exp(x[r,:] - max) / sum(exp(x[r,:] - max)). */
void cloop_softmax(float *y, const float *x, size_t rows, size_t w);
/* y[c] = sum over r of x[r,c]. */
void cloop_colsum(double *y, const double *x, size_t rows, size_t cols);
/* c = a b for n x n matrices, the naive i-k-j loop. */
void cloop_matmul(float *c, const float *a, const float *b, size_t n);
/* y = ((x * 2 + 1) * x) - 3. */
void cloop_fused4_numeric(float *y, const float *x, size_t n);
/* Each pixel's [r, g, b] to [h, s, v], TensorFlow's formulas. */
void cloop_rgb_to_hsv(float *y, const float *x, size_t pixels);

/* The same loops with their outer loop shared among OpenMP threads
 * (numeric_omp.c, built with -fopenmp), as many as the last
 * omp_numeric_threads said; colsum shares out its columns instead. */
void omp_numeric_threads(unsigned threads);
void omp_normalize(float *y, const float *x, size_t rows, size_t w, float eps);
void omp_chain(float *y, const float *x, size_t n);
void omp_softmax(float *y, const float *x, size_t rows, size_t w);
void omp_colsum(double *y, const double *x, size_t rows, size_t cols);
void omp_matmul(float *c, const float *a, const float *b, size_t n);
void omp_fused4_numeric(float *y, const float *x, size_t n);
void omp_rgb_to_hsv(float *y, const float *x, size_t pixels);

#endif
