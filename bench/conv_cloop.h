/* The C contenders of bench_conv (conv_cloop.c, compiled at -O3). */
#ifndef WEFT_BENCH_CONV_CLOOP_H
#define WEFT_BENCH_CONV_CLOOP_H

#include <stdint.h>

/* NHWC input [n, h, w, c]; HWIO filters [kh, kw, c, o] (a pool: window kh
 * x kw, o unused); output [n, oh, ow, o (a pool: c)]; strides sh, sw;
 * pt, pl: the padding before the first window (TensorFlow's placement).
 * A 3-D convolution adds the depth: input [n, d, h, w, c], filters [kd,
 * kh, kw, c, o], output depth od, stride sd, padding before pd (d is 0
 * for the 2-D workloads). */
typedef struct conv_shape {
    int64_t n, h, w, c, kh, kw, o, sh, sw, oh, ow, pt, pl;
    int64_t d, kd, sd, od, pd;
} conv_shape;

/* The direct loop a user would write. */
void cloop_conv_f32(const conv_shape *s, const float *restrict x, const float *restrict f,
                    float *restrict y);
/* im2col into patches ([n oh ow, kh kw c], unused for a 1x1 filter with
 * stride 1) and one cblas_sgemm, on OpenBLAS's threads as set. */
void cloop_conv_im2col_f32(const conv_shape *s, const float *restrict x,
                           const float *restrict f, float *restrict y, float *restrict patches);
/* The direct loop of a 3-D convolution (NDHWC, DHWIO). */
void cloop_conv3d_f32(const conv_shape *s, const float *restrict x, const float *restrict f,
                      float *restrict y);
/* A depthwise convolution, multiplier 1 (filters [kh, kw, c]). */
void cloop_depthwise_f32(const conv_shape *s, const float *restrict x, const float *restrict f,
                         float *restrict y);
/* max (avg 0) or avg (avg 1) pool, the window clipped to the input. */
void cloop_pool_f32(const conv_shape *s, int avg, const float *restrict x, float *restrict y);
/* A fractional max pool over given regions: output pixel (i, j) takes
 * rows rows[i] .. rows[i + 1] - 1 and columns cols[j] .. cols[j + 1] - 1
 * (oh + 1 and ow + 1 entries, from 0 to h and w). */
void cloop_fractional_max_pool_f32(const conv_shape *s, const int64_t *rows, const int64_t *cols,
                                   const float *restrict x, float *restrict y);

#endif
