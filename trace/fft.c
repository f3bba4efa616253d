/* The transforms of trace/fft.h.  Every angle is computed from an exact
 * integer ratio (k / m, or k^2 mod 2n over n), never by a recurrence, so
 * the twiddles carry one rounding each and long transforms lose no
 * digits to them. */
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "trace/fft.h"
#include "weft/common.h"

static bool is_power_of_two(int64_t n)
{
    return (n & (n - 1)) == 0;
}

/* Pairs i and j of x swapped for every i and its bit reversal j over
 * log2(m) bits: the input order of the iterative radix-2 transform. */
static void bit_reverse(double *x, int64_t m)
{
    for (int64_t i = 1, j = 0; i < m; i++) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double r = x[2 * i], im = x[2 * i + 1];
            x[2 * i] = x[2 * j];
            x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = r;
            x[2 * j + 1] = im;
        }
    }
}

/* The forward in-place radix-2 transform of x (m pairs, m a power of
 * two).  twiddle holds each pass's factors contiguously: the pass of
 * butterflies `half` apart reads exp(-2 pi i j / (2 half)) for j < half at
 * pair half - 1, so that its inner loop walks data and factors in step.
 * The first two passes multiply by 1 and -i only and are done without
 * factors. */
static void radix2(const double *twiddle, int64_t m, double *x)
{
    bit_reverse(x, m);
    for (int64_t i = 0; i + 1 < m; i += 2) {
        double *a = x + 2 * i, *b = a + 2;
        double br = b[0], bi = b[1];
        b[0] = a[0] - br;
        b[1] = a[1] - bi;
        a[0] += br;
        a[1] += bi;
    }
    for (int64_t i = 0; i + 3 < m; i += 4) {
        double *a = x + 2 * i;
        for (int q = 0; q < 2; q++) {
            double *u = a + 2 * q, *v = a + 2 * q + 4;
            /* v times 1 (q 0) or -i (q 1). */
            double vr = q ? v[1] : v[0], vi = q ? -v[0] : v[1];
            v[0] = u[0] - vr;
            v[1] = u[1] - vi;
            u[0] += vr;
            u[1] += vi;
        }
    }
    for (int64_t half = 4; half < m; half <<= 1) {
        const double *w = twiddle + 2 * (half - 1);
        for (int64_t i = 0; i < m; i += 2 * half) {
            double *a = x + 2 * i, *b = a + 2 * half;
            for (int64_t j = 0; j < half; j++) {
                double wr = w[2 * j], wi = w[2 * j + 1];
                double vr = b[2 * j] * wr - b[2 * j + 1] * wi;
                double vi = b[2 * j] * wi + b[2 * j + 1] * wr;
                b[2 * j] = a[2 * j] - vr;
                b[2 * j + 1] = a[2 * j + 1] - vi;
                a[2 * j] += vr;
                a[2 * j + 1] += vi;
            }
        }
    }
}

static void conjugate(double *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        x[2 * k + 1] = -x[2 * k + 1];
}

/* radix2 of either sign: the inverse is the conjugate of the forward
 * transform of the conjugate. */
static void radix2_signed(const double *twiddle, int64_t m, double *x, bool inverse)
{
    if (inverse)
        conjugate(x, m);
    radix2(twiddle, m, x);
    if (inverse)
        conjugate(x, m);
}

void weft__fft_plan_free(weft__fft_plan *p)
{
    weft__free(p->twiddle);
    weft__free(p->chirp);
    weft__free(p->kernel);
    weft__free(p->split);
    memset(p, 0, sizeof *p);
}

static double *pairs_alloc(int64_t count)
{
    return weft__malloc(sizeof(double) * 2 * (size_t)(count > 0 ? count : 1));
}

/* The chirp exp(-pi i k^2 / n) for k < n (the core length), with k^2
 * kept modulo 2n (the period) in integers, and the transform of its
 * conjugate wrapped around length m: Bluestein's convolution kernel. */
static void make_chirp(weft__fft_plan *p)
{
    int64_t n = p->core, m = p->m, sq = 0;
    for (int64_t k = 0; k < n; k++) {
        double angle = M_PI * (double)sq / (double)n;
        p->chirp[2 * k] = cos(angle);
        p->chirp[2 * k + 1] = -sin(angle);
        sq = (sq + 2 * k + 1) % (2 * n);
    }
    memset(p->kernel, 0, sizeof(double) * 2 * (size_t)m);
    for (int64_t k = 0; k < n; k++) {
        p->kernel[2 * k] = p->chirp[2 * k];
        p->kernel[2 * k + 1] = -p->chirp[2 * k + 1];
        if (k > 0) {
            p->kernel[2 * (m - k)] = p->chirp[2 * k];
            p->kernel[2 * (m - k) + 1] = -p->chirp[2 * k + 1];
        }
    }
    radix2(p->twiddle, m, p->kernel);
}

/* exp(-2 pi i k / n) for k < count into w (pairs). */
static void fill_twiddles(double *w, int64_t count, int64_t n)
{
    for (int64_t k = 0; k < count; k++) {
        double angle = 2.0 * M_PI * (double)k / (double)n;
        w[2 * k] = cos(angle);
        w[2 * k + 1] = -sin(angle);
    }
}

int weft__fft_plan_init(weft__fft_plan *p, int64_t n, bool real)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    /* A real transform of even n is a complex one of n / 2 (the even
     * samples as real parts, the odd as imaginary ones) and a split. */
    p->core = real && n % 2 == 0 ? n / 2 : n;
    p->m = p->core;
    bool bluestein = !is_power_of_two(p->core);
    if (bluestein)
        for (p->m = 1; p->m < 2 * p->core - 1; p->m <<= 1) {
        }
    p->twiddle = pairs_alloc(p->m - 1);
    bool ok = p->twiddle != NULL;
    if (ok && bluestein) {
        p->chirp = pairs_alloc(p->core);
        p->kernel = pairs_alloc(p->m);
        ok = p->chirp && p->kernel;
    }
    if (ok && p->core != n) {
        p->split = pairs_alloc(p->core);
        ok = p->split != NULL;
    }
    if (!ok) {
        weft__fft_plan_free(p);
        return WEFT_ENOMEM;
    }
    for (int64_t half = 1; half < p->m; half <<= 1)
        fill_twiddles(p->twiddle + 2 * (half - 1), half, 2 * half);
    if (p->split)
        fill_twiddles(p->split, p->core, n);
    if (bluestein)
        make_chirp(p);
    return 0;
}

size_t weft__fft_data_doubles(const weft__fft_plan *p)
{
    return 2 * (size_t)p->n + 2;
}

size_t weft__fft_scratch_doubles(const weft__fft_plan *p)
{
    return p->chirp ? 2 * (size_t)p->m : 0;
}

/* Bluestein's forward transform: x times the chirp, convolved with the
 * conjugate chirp by transforms of length m, times the chirp again. */
static void bluestein(const weft__fft_plan *p, double *x, double *a)
{
    int64_t n = p->core, m = p->m;
    const double *c = p->chirp, *b = p->kernel;
    for (int64_t k = 0; k < n; k++) {
        a[2 * k] = x[2 * k] * c[2 * k] - x[2 * k + 1] * c[2 * k + 1];
        a[2 * k + 1] = x[2 * k] * c[2 * k + 1] + x[2 * k + 1] * c[2 * k];
    }
    memset(a + 2 * n, 0, sizeof(double) * 2 * (size_t)(m - n));
    radix2(p->twiddle, m, a);
    for (int64_t k = 0; k < m; k++) {
        double r = a[2 * k] * b[2 * k] - a[2 * k + 1] * b[2 * k + 1];
        a[2 * k + 1] = a[2 * k] * b[2 * k + 1] + a[2 * k + 1] * b[2 * k];
        a[2 * k] = r;
    }
    radix2_signed(p->twiddle, m, a, true);
    double scale = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        double r = a[2 * k] * scale, im = a[2 * k + 1] * scale;
        x[2 * k] = r * c[2 * k] - im * c[2 * k + 1];
        x[2 * k + 1] = r * c[2 * k + 1] + im * c[2 * k];
    }
}

/* The complex transform of the plan's core length. */
static void run_core(const weft__fft_plan *p, double *x, bool inverse, double *scratch)
{
    if (inverse)
        conjugate(x, p->core);
    if (p->chirp)
        bluestein(p, x, scratch);
    else
        radix2(p->twiddle, p->m, x);
    if (inverse)
        conjugate(x, p->core);
}

void weft__fft_run(const weft__fft_plan *p, double *x, bool inverse, double *scratch)
{
    run_core(p, x, inverse, scratch);
}

/* Even n = 2h, forward: Z = the transform of z[j] = x[2j] + i x[2j + 1]
 * (x read as h pairs), then X[k] = E + W^k O with E = (Z[k] +
 * conj Z[h - k]) / 2, O = -i (Z[k] - conj Z[h - k]) / 2, W = exp(-2 pi i
 * / n); X[h - k] = conj(E - W^k O) comes from the same pair. */
static void split_forward(const weft__fft_plan *p, double *x)
{
    int64_t h = p->core;
    double z0r = x[0], z0i = x[1];
    x[0] = z0r + z0i;
    x[1] = 0.0;
    x[2 * h] = z0r - z0i;
    x[2 * h + 1] = 0.0;
    for (int64_t k = 1; 2 * k <= h; k++) {
        double *a = x + 2 * k, *b = x + 2 * (h - k);
        double er = 0.5 * (a[0] + b[0]), ei = 0.5 * (a[1] - b[1]);
        double or_ = 0.5 * (a[1] + b[1]), oi = -0.5 * (a[0] - b[0]);
        double wr = p->split[2 * k], wi = p->split[2 * k + 1];
        double tr = wr * or_ - wi * oi, ti = wr * oi + wi * or_;
        a[0] = er + tr;
        a[1] = ei + ti;
        b[0] = er - tr;
        b[1] = -(ei - ti);
    }
}

/* Even n = 2h, inverse: the h pairs Z[k] = E + i O with E = X[k] +
 * conj X[h - k] and O = (X[k] - conj X[h - k]) conj(W^k) (twice the
 * half-spectra, so that the unscaled inverse of length h gives n times
 * the signal, as the length-n inverse would); Z[h - k] = conj E + i
 * conj O.  Bin 0's and bin h's imaginary parts are not read. */
static void split_inverse(const weft__fft_plan *p, double *x)
{
    int64_t h = p->core;
    double x0 = x[0], xh = x[2 * h];
    x[0] = x0 + xh;
    x[1] = x0 - xh;
    for (int64_t k = 1; 2 * k <= h; k++) {
        double *a = x + 2 * k, *b = x + 2 * (h - k);
        double er = a[0] + b[0], ei = a[1] - b[1];
        double dr = a[0] - b[0], di = a[1] + b[1];
        double wr = p->split[2 * k], wi = -p->split[2 * k + 1];
        double or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
        a[0] = er - oi;
        a[1] = ei + or_;
        b[0] = er + oi;
        b[1] = -ei + or_;
    }
}

void weft__fft_run_real(const weft__fft_plan *p, double *x, bool inverse, double *scratch)
{
    int64_t n = p->n, h = n / 2;
    if (p->split) {
        if (!inverse) {
            run_core(p, x, false, scratch);
            split_forward(p, x);
        } else {
            split_inverse(p, x);
            run_core(p, x, true, scratch);
        }
        return;
    }
    /* Odd n: the complex transform of length n. */
    if (!inverse) {
        for (int64_t j = n - 1; j >= 0; j--) {
            x[2 * j] = x[j];
            x[2 * j + 1] = 0.0;
        }
        run_core(p, x, false, scratch);
        return;
    }
    /* The rest of the spectrum as the conjugates; bin 0's imaginary part
     * adds only to the imaginary parts, which are dropped. */
    for (int64_t k = h + 1; k < n; k++) {
        x[2 * k] = x[2 * (n - k)];
        x[2 * k + 1] = -x[2 * (n - k) + 1];
    }
    run_core(p, x, true, scratch);
    for (int64_t j = 0; j < n; j++)
        x[j] = x[2 * j];
}
