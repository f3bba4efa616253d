/* The bodies of the numeric suite's C loops, one row or element each,
 * shared by the serial loops (numeric_cloop.c) and their OpenMP
 * versions (numeric_omp.c), so that both run the same code.  Static
 * inline: each file compiles them into its own loops at -O3. */
#ifndef WEFT_BENCH_NUMERIC_ROWS_H
#define WEFT_BENCH_NUMERIC_ROWS_H

#include <math.h>
#include <stddef.h>

static inline void normalize_row(float *yr, const float *xr, size_t w, float eps)
{
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

static inline float chain_elem(float x)
{
    return sqrtf(fabsf(1.5f * x - 2.0f)) * x + expf(-x * x);
}

static inline void softmax_row(float *yr, const float *xr, size_t w)
{
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

/* Row i of c = a b (n x n), the naive k-j loop; c's row starts at zero. */
static inline void matmul_row(float *c, const float *a, const float *b, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++) {
        float aik = a[i * n + k];
        for (size_t j = 0; j < n; j++)
            c[i * n + j] += aik * b[k * n + j];
    }
}

/* One pixel's h, s, v from its r, g, b: TensorFlow's scalar helper. */
static inline void hsv_pixel(float *y, const float *x)
{
    float r = x[0], g = x[1], b = x[2];
    float v = fmaxf(r, fmaxf(g, b)), range = v - fminf(r, fminf(g, b));
    float norm = 1.0f / (6.0f * range), h;
    if (r == v)
        h = norm * (g - b);
    else if (g == v)
        h = norm * (b - r) + 2.0f / 6.0f;
    else
        h = norm * (r - g) + 4.0f / 6.0f;
    if (range <= 0)
        h = 0;
    if (h < 0)
        h += 1;
    y[0] = h;
    y[1] = v > 0 ? range / v : 0;
    y[2] = v;
}

static inline float fused4_elem(float x)
{
    return ((x * 2.0f + 1.0f) * x) - 3.0f;
}

#endif
