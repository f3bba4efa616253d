/* The C contenders of bench_conv, compiled at -O3: a convolution as a
 * user would write it in C (NHWC, HWIO, the inner loop over output
 * channels, which gcc vectorizes), the same through im2col and one
 * cblas_sgemm (what a user who knows the trick writes), and the two
 * pools as plain loops.  All take TensorFlow's SAME or VALID placement
 * through the pads the caller computed. */
#include "conv_cloop.h"

#include <cblas.h>
#include <string.h>

static inline int64_t clamp_lo(int64_t v) { return v < 0 ? 0 : v; }

void cloop_conv_f32(const conv_shape *s, const float *restrict x, const float *restrict f,
                    float *restrict y)
{
    for (int64_t b = 0; b < s->n; b++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++) {
                float *restrict acc = y + ((b * s->oh + oy) * s->ow + ox) * s->o;
                for (int64_t q = 0; q < s->o; q++)
                    acc[q] = 0;
                for (int64_t ky = 0; ky < s->kh; ky++) {
                    int64_t iy = oy * s->sh - s->pt + ky;
                    if (iy < 0 || iy >= s->h)
                        continue;
                    for (int64_t kx = 0; kx < s->kw; kx++) {
                        int64_t ix = ox * s->sw - s->pl + kx;
                        if (ix < 0 || ix >= s->w)
                            continue;
                        const float *xp = x + ((b * s->h + iy) * s->w + ix) * s->c;
                        const float *fp = f + (ky * s->kw + kx) * s->c * s->o;
                        for (int64_t ci = 0; ci < s->c; ci++) {
                            const float xv = xp[ci];
                            const float *restrict frow = fp + ci * s->o;
                            for (int64_t q = 0; q < s->o; q++)
                                acc[q] += xv * frow[q];
                        }
                    }
                }
            }
}

void cloop_conv_im2col_f32(const conv_shape *s, const float *restrict x,
                           const float *restrict f, float *restrict y, float *restrict patches)
{
    int64_t kdim = s->kh * s->kw * s->c, rows = s->n * s->oh * s->ow;
    const float *p = x;
    if (s->kh != 1 || s->kw != 1 || s->sh != 1 || s->sw != 1) {
        for (int64_t r = 0; r < rows; r++) {
            int64_t ox = r % s->ow, oy = (r / s->ow) % s->oh, b = r / (s->ow * s->oh);
            float *dst = patches + r * kdim;
            for (int64_t ky = 0; ky < s->kh; ky++)
                for (int64_t kx = 0; kx < s->kw; kx++) {
                    int64_t iy = oy * s->sh - s->pt + ky, ix = ox * s->sw - s->pl + kx;
                    float *d = dst + (ky * s->kw + kx) * s->c;
                    if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                        memset(d, 0, sizeof(float) * (size_t)s->c);
                    else
                        memcpy(d, x + ((b * s->h + iy) * s->w + ix) * s->c,
                               sizeof(float) * (size_t)s->c);
                }
        }
        p = patches;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)s->o, (int)kdim, 1.0f,
                p, (int)kdim, f, (int)s->o, 0.0f, y, (int)s->o);
}

void cloop_depthwise_f32(const conv_shape *s, const float *restrict x, const float *restrict f,
                         float *restrict y)
{
    for (int64_t b = 0; b < s->n; b++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++) {
                float *restrict acc = y + ((b * s->oh + oy) * s->ow + ox) * s->c;
                for (int64_t q = 0; q < s->c; q++)
                    acc[q] = 0;
                for (int64_t ky = 0; ky < s->kh; ky++) {
                    int64_t iy = oy * s->sh - s->pt + ky;
                    if (iy < 0 || iy >= s->h)
                        continue;
                    for (int64_t kx = 0; kx < s->kw; kx++) {
                        int64_t ix = ox * s->sw - s->pl + kx;
                        if (ix < 0 || ix >= s->w)
                            continue;
                        const float *restrict xp = x + ((b * s->h + iy) * s->w + ix) * s->c;
                        const float *restrict fp = f + (ky * s->kw + kx) * s->c;
                        for (int64_t q = 0; q < s->c; q++)
                            acc[q] += xp[q] * fp[q];
                    }
                }
            }
}

void cloop_pool_f32(const conv_shape *s, int avg, const float *restrict x, float *restrict y)
{
    for (int64_t b = 0; b < s->n; b++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++) {
                float *restrict out = y + ((b * s->oh + oy) * s->ow + ox) * s->c;
                int64_t y0 = clamp_lo(oy * s->sh - s->pt), x0 = clamp_lo(ox * s->sw - s->pl);
                int64_t y1 = oy * s->sh - s->pt + s->kh, x1 = ox * s->sw - s->pl + s->kw;
                y1 = y1 > s->h ? s->h : y1;
                x1 = x1 > s->w ? s->w : x1;
                for (int64_t q = 0; q < s->c; q++)
                    out[q] = avg ? 0.0f : x[((b * s->h + y0) * s->w + x0) * s->c + q];
                for (int64_t iy = y0; iy < y1; iy++)
                    for (int64_t ix = x0; ix < x1; ix++) {
                        const float *restrict v = x + ((b * s->h + iy) * s->w + ix) * s->c;
                        for (int64_t q = 0; q < s->c; q++)
                            out[q] = avg ? out[q] + v[q] : (v[q] > out[q] ? v[q] : out[q]);
                    }
                if (avg) {
                    float inv = 1.0f / (float)((y1 - y0) * (x1 - x0));
                    for (int64_t q = 0; q < s->c; q++)
                        out[q] *= inv;
                }
            }
}

void cloop_fractional_max_pool_f32(const conv_shape *s, const int64_t *rows, const int64_t *cols,
                                   const float *restrict x, float *restrict y)
{
    for (int64_t b = 0; b < s->n; b++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++) {
                float *restrict out = y + ((b * s->oh + oy) * s->ow + ox) * s->c;
                const float *first = x + ((b * s->h + rows[oy]) * s->w + cols[ox]) * s->c;
                for (int64_t q = 0; q < s->c; q++)
                    out[q] = first[q];
                for (int64_t iy = rows[oy]; iy < rows[oy + 1]; iy++)
                    for (int64_t ix = cols[ox]; ix < cols[ox + 1]; ix++) {
                        const float *restrict v = x + ((b * s->h + iy) * s->w + ix) * s->c;
                        for (int64_t q = 0; q < s->c; q++)
                            out[q] = v[q] > out[q] ? v[q] : out[q];
                    }
            }
}

void cloop_conv3d_f32(const conv_shape *s, const float *restrict x, const float *restrict f,
                      float *restrict y)
{
    for (int64_t b = 0; b < s->n; b++)
        for (int64_t oz = 0; oz < s->od; oz++)
            for (int64_t oy = 0; oy < s->oh; oy++)
                for (int64_t ox = 0; ox < s->ow; ox++) {
                    float *restrict acc = y + (((b * s->od + oz) * s->oh + oy) * s->ow + ox) * s->o;
                    for (int64_t q = 0; q < s->o; q++)
                        acc[q] = 0;
                    for (int64_t kz = 0; kz < s->kd; kz++) {
                        int64_t iz = oz * s->sd - s->pd + kz;
                        if (iz < 0 || iz >= s->d)
                            continue;
                        for (int64_t ky = 0; ky < s->kh; ky++) {
                            int64_t iy = oy * s->sh - s->pt + ky;
                            if (iy < 0 || iy >= s->h)
                                continue;
                            for (int64_t kx = 0; kx < s->kw; kx++) {
                                int64_t ix = ox * s->sw - s->pl + kx;
                                if (ix < 0 || ix >= s->w)
                                    continue;
                                const float *xp =
                                    x + (((b * s->d + iz) * s->h + iy) * s->w + ix) * s->c;
                                const float *fp =
                                    f + ((kz * s->kh + ky) * s->kw + kx) * s->c * s->o;
                                for (int64_t ci = 0; ci < s->c; ci++) {
                                    const float xv = xp[ci];
                                    const float *restrict frow = fp + ci * s->o;
                                    for (int64_t q = 0; q < s->o; q++)
                                        acc[q] += xv * frow[q];
                                }
                            }
                        }
                    }
                }
}
