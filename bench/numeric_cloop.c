/* The C loops of the numeric suite (see numeric_cloop.h), at -O3. */
#include "numeric_cloop.h"

#include <math.h>
#include <string.h>

void cloop_normalize(float *y, const float *x, size_t rows, size_t w, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * w;
        float *yr = y + r * w;
        float s = 0;
        for (size_t j = 0; j < w; j++)
            s += xr[j];
        float mean = s / (float)w;
        float v = 0;
        for (size_t j = 0; j < w; j++)
            v += (xr[j] - mean) * (xr[j] - mean);
        float inv = sqrtf(v / (float)w + eps);
        for (size_t j = 0; j < w; j++)
            yr[j] = (xr[j] - mean) / inv;
    }
}

void cloop_chain(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sqrtf(fabsf(1.5f * x[i] - 2.0f)) * x[i] + expf(-x[i] * x[i]);
}

void cloop_softmax(float *y, const float *x, size_t rows, size_t w)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * w;
        float *yr = y + r * w;
        float m = -INFINITY;
        for (size_t j = 0; j < w; j++)
            m = xr[j] > m ? xr[j] : m;
        float s = 0;
        for (size_t j = 0; j < w; j++) {
            yr[j] = expf(xr[j] - m);
            s += yr[j];
        }
        for (size_t j = 0; j < w; j++)
            yr[j] /= s;
    }
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
        for (size_t k = 0; k < n; k++) {
            float aik = a[i * n + k];
            for (size_t j = 0; j < n; j++)
                c[i * n + j] += aik * b[k * n + j];
        }
}

void cloop_fused4_numeric(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = ((x[i] * 2.0f + 1.0f) * x[i]) - 3.0f;
}
