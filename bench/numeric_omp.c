/* The numeric suite's C loops (numeric_cloop.c) with their outer loop
 * shared among OpenMP threads (see numeric_cloop.h), at -O3: what the
 * same plain code reaches on the suite's thread count, so that a
 * memory-bound workload's ceiling shows next to weft's figure. */
#include "numeric_cloop.h"

#include <omp.h>
#include <string.h>

#include "numeric_rows.h"

void omp_numeric_threads(unsigned threads)
{
    omp_set_num_threads((int)threads);
}

void omp_normalize(float *y, const float *x, size_t rows, size_t w, float eps)
{
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++)
        normalize_row(y + r * w, x + r * w, w, eps);
}

void omp_chain(float *y, const float *x, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = chain_elem(x[i]);
}

void omp_softmax(float *y, const float *x, size_t rows, size_t w)
{
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++)
        softmax_row(y + r * w, x + r * w, w);
}

void omp_colsum(double *y, const double *x, size_t rows, size_t cols)
{
    /* The columns are shared out (each thread sums its block of columns
     * over every row, in row order): the serial loop's sums, bit for bit. */
    memset(y, 0, cols * sizeof *y);
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t c0 = cols * t / nt, c1 = cols * (t + 1) / nt;
        for (size_t r = 0; r < rows; r++)
            for (size_t c = c0; c < c1; c++)
                y[c] += x[r * cols + c];
    }
}

void omp_matmul(float *c, const float *a, const float *b, size_t n)
{
    memset(c, 0, n * n * sizeof *c);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        matmul_row(c, a, b, n, i);
}

void omp_rgb_to_hsv(float *y, const float *x, size_t pixels)
{
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < pixels; p++)
        hsv_pixel(y + 3 * p, x + 3 * p);
}

void omp_fused4_numeric(float *y, const float *x, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = fused4_elem(x[i]);
}
