/* A discrete Fourier transform of any length on interleaved complex
 * doubles (real part, then imaginary part), for the FFT ops
 * (trace/kernel_fft.c).
 *
 * A length that is a power of two is an iterative radix-2 transform; any
 * other length is Bluestein's: a circular convolution with a chirp, done
 * by transforms of the next power of two at least 2n - 1.  The plan holds
 * what depends on the length alone and is read-only once made, so the
 * chunks of a kernel share it. */
#ifndef WEFT_TRACE_FFT_H
#define WEFT_TRACE_FFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct weft__fft_plan {
    int64_t n;          /* the transform's length */
    int64_t core;       /* the complex transform's: n, or n / 2 (a real one of even n) */
    int64_t m;          /* the radix-2 transform's length: core, or Bluestein's */
    double *twiddle;    /* m - 1 pairs: each radix-2 pass's factors (see fft.c) */
    double *chirp;      /* Bluestein: core pairs exp(-pi i k^2 / core); NULL for a power of two */
    double *kernel;     /* Bluestein: the transform of the conjugate chirp, m pairs */
    double *split;      /* a real transform of even n: n / 2 pairs exp(-2 pi i k / n) */
} weft__fft_plan;

/* The largest length a plan takes (its Bluestein transform must fit). */
#define WEFT__FFT_MAX_LENGTH ((int64_t)1 << 40)

/* Makes the plan of length n (1..WEFT__FFT_MAX_LENGTH), for
 * weft__fft_run_real when real, else for weft__fft_run: 0, or WEFT_ENOMEM
 * with nothing held.  weft__fft_plan_free frees it (a zeroed plan too). */
int  weft__fft_plan_init(weft__fft_plan *p, int64_t n, bool real);
void weft__fft_plan_free(weft__fft_plan *p);

/* The doubles of data (x) and of scratch the runs need. */
size_t weft__fft_data_doubles(const weft__fft_plan *p);
size_t weft__fft_scratch_doubles(const weft__fft_plan *p);

/* x (n pairs) replaced by its transform: sum_j x[j] exp(-+2 pi i j k / n),
 * the sign + when inverse (unscaled). */
void weft__fft_run(const weft__fft_plan *p, double *x, bool inverse, double *scratch);
/* Real transforms, unscaled.  Forward: the n reals x[0..n) replaced by the
 * first n / 2 + 1 pairs of their transform.  Inverse: the n / 2 + 1 pairs
 * of a Hermitian spectrum replaced by the n reals of its inverse
 * transform (bin 0's and, n even, bin n / 2's imaginary parts, which have
 * no partner, are ignored). */
void weft__fft_run_real(const weft__fft_plan *p, double *x, bool inverse, double *scratch);

#endif
