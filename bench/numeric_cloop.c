/* The C loops of the numeric suite (see numeric_cloop.h), at -O3. */
#include "numeric_cloop.h"

#include <string.h>

#include "numeric_rows.h"

void cloop_normalize(float *y, const float *x, size_t rows, size_t w, float eps)
{
    for (size_t r = 0; r < rows; r++)
        normalize_row(y + r * w, x + r * w, w, eps);
}

void cloop_chain(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = chain_elem(x[i]);
}

void cloop_softmax(float *y, const float *x, size_t rows, size_t w)
{
    for (size_t r = 0; r < rows; r++)
        softmax_row(y + r * w, x + r * w, w);
}

void cloop_colsum(double *y, const double *x, size_t rows, size_t cols)
{
    memset(y, 0, cols * sizeof *y);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            y[c] += x[r * cols + c];
}

void cloop_matmul(float *c, const float *a, const float *b, size_t n)
{
    memset(c, 0, n * n * sizeof *c);
    for (size_t i = 0; i < n; i++)
        matmul_row(c, a, b, n, i);
}

void cloop_rgb_to_hsv(float *y, const float *x, size_t pixels)
{
    for (size_t p = 0; p < pixels; p++)
        hsv_pixel(y + 3 * p, x + 3 * p);
}

void cloop_fused4_numeric(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = fused4_elem(x[i]);
}
