/* weft_fft, weft_ifft, weft_rfft, weft_irfft, weft_stft, weft_inverse_stft
 * and weft_inverse_stft_window against the discrete Fourier transform
 * written out here in long double term by term, eagerly and traced on 1, 2
 * and 4 workers (the same bits everywhere); lengths that are powers of
 * two and lengths that are not (Bluestein's path); the inverse pairs; and
 * their errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_fft, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

#define PI_L 3.141592653589793238462643383279502884L

/* ---- References ---------------------------------------------------------- */

/* y = sum_j x[j] exp(sign 2 pi i j k / n) of n pairs x, in long double,
 * the angle's j k reduced modulo n first; *mag gets sum |x[j]|, the scale
 * of the rounding error. */
static void ref_dft(const double *x, int64_t n, int sign, double *y, double *mag)
{
    *mag = 0;
    for (int64_t j = 0; j < n; j++)
        *mag += hypot(x[2 * j], x[2 * j + 1]);
    for (int64_t k = 0; k < n; k++) {
        long double re = 0, im = 0;
        for (int64_t j = 0; j < n; j++) {
            long double a = 2 * PI_L * (long double)((j * k) % n) / (long double)n;
            long double c = cosl(a), s = sign * sinl(a);
            re += x[2 * j] * c - x[2 * j + 1] * s;
            im += x[2 * j] * s + x[2 * j + 1] * c;
        }
        y[2 * k] = (double)re;
        y[2 * k + 1] = (double)im;
    }
}

/* Uniform values in [-2, 2), rounded to f32 when dt is. */
static double *random_values(uint64_t *s, int64_t n, weft_dtype dt)
{
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++) {
        v[i] = 2 * op_uniform(s);
        if (dt == WEFT_F32)
            v[i] = (double)(float)v[i];
    }
    return v;
}

/* got (count values of y from `at`) within tol of want. */
static void expect_near(const weft_tensor *y, int64_t at, const double *want, int64_t count,
                        double tol, const char *what, int64_t n)
{
    for (int64_t e = 0; e < count; e++) {
        double got = test_element(y, at + e);
        cr_assert(fabs(got - want[e]) <= tol, "%s n %lld %s: element %lld is %.17g, want %.17g "
                  "(tol %g)", what, (long long)n, weft_dtype_name(weft_tensor_dtype(y)),
                  (long long)e, got, want[e], tol);
    }
}

static double tolerance(weft_dtype dt, double mag)
{
    return (dt == WEFT_F32 ? 1e-6 : 1e-14) * (mag + 1);
}

/* ---- fft and ifft -------------------------------------------------------- */

typedef struct fft_case {
    int op;   /* 0 fft, 1 ifft, 2 rfft, 3 irfft */
    int64_t fft_length;
} fft_case;

static int fft_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const fft_case *c = user;
    switch (c->op) {
    case 0: outs[0] = weft_fft(cx, a[0]); break;
    case 1: outs[0] = weft_ifft(cx, a[0]); break;
    case 2: outs[0] = weft_rfft(cx, a[0], c->fft_length); break;
    default: outs[0] = weft_irfft(cx, a[0], c->fft_length); break;
    }
    return weft_ctx_status(cx);
}

/* fft or ifft of rows x [rows, n, 2] against ref_dft. */
static void check_complex(bool inverse, weft_dtype dt, int64_t rows, int64_t n, uint64_t *s)
{
    double *xv = random_values(s, rows * n * 2, dt), *want = malloc(sizeof *want * 2 * (size_t)n);
    cr_assert_not_null(want);
    weft_tensor *x = test_tensor(dt, 3, (int64_t[]){ rows, n, 2 }, xv), *y;
    fft_case c = { .op = inverse };
    op_results_everywhere(fft_body, &c, &x, 1, &y, 1, inverse ? "ifft" : "fft");
    test_assert_shape(y, dt, 3, (int64_t[]){ rows, n, 2 }, "fft");
    for (int64_t r = 0; r < rows; r++) {
        double mag;
        ref_dft(xv + r * n * 2, n, inverse ? 1 : -1, want, &mag);
        for (int64_t e = 0; inverse && e < 2 * n; e++)
            want[e] /= (double)n;
        expect_near(y, r * n * 2, want, 2 * n, tolerance(dt, inverse ? mag / (double)n : mag),
                    inverse ? "ifft" : "fft", n);
    }
    free(want);
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

Test(ops_fft, fft_and_ifft_match_the_definition)
{
    uint64_t s = 21;
    static const int64_t lens[] = { 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64, 100, 127, 243 };
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (int inverse = 0; inverse < 2; inverse++) {
            check_complex(inverse, WEFT_F64, 3, lens[l], &s);
            check_complex(inverse, WEFT_F32, 2, lens[l], &s);
        }
}

/* Long transforms of a pure tone: all of its weight in two bins, both
 * paths (4096 a power of two, 3000 not), to f64's precision. */
Test(ops_fft, long_transforms_of_a_tone)
{
    static const int64_t lens[] = { 4096, 3000 };
    for (size_t l = 0; l < 2; l++) {
        int64_t n = lens[l], f = 37;
        double *xv = calloc((size_t)n * 2, sizeof *xv);
        cr_assert_not_null(xv);
        for (int64_t j = 0; j < n; j++)
            xv[2 * j] = cos(2 * M_PI * (double)((f * j) % n) / (double)n);
        weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ n, 2 }, xv), *y;
        fft_case c = { .op = 0 };
        op_results_everywhere(fft_body, &c, &x, 1, &y, 1, "fft of a tone");
        for (int64_t k = 0; k < n; k++) {
            double want = k == f || k == n - f ? (double)n / 2 : 0.0;
            cr_assert(fabs(test_element(y, 2 * k) - want) < 1e-9 &&
                      fabs(test_element(y, 2 * k + 1)) < 1e-9, "n %lld bin %lld: %.17g %+.17gi",
                      (long long)n, (long long)k, test_element(y, 2 * k),
                      test_element(y, 2 * k + 1));
        }
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* ---- rfft and irfft ------------------------------------------------------ */

/* rfft of rows x [rows, len] with fft_length N (0: len) against ref_dft of
 * each row cut or zero-padded to N. */
static void check_rfft(weft_dtype dt, int64_t rows, int64_t len, int64_t N, uint64_t *s)
{
    int64_t n = N ? N : len, bins = n / 2 + 1;
    double *xv = random_values(s, rows * len, dt);
    double *row = calloc((size_t)n * 2, sizeof *row), *want = malloc(sizeof *want * 2 * (size_t)n);
    cr_assert(row && want);
    weft_tensor *x = test_tensor(dt, 2, (int64_t[]){ rows, len }, xv), *y;
    fft_case c = { .op = 2, .fft_length = N };
    op_results_everywhere(fft_body, &c, &x, 1, &y, 1, "rfft");
    test_assert_shape(y, dt, 3, (int64_t[]){ rows, bins, 2 }, "rfft");
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < n; j++)
            row[2 * j] = j < len ? xv[r * len + j] : 0.0;
        double mag;
        ref_dft(row, n, -1, want, &mag);
        expect_near(y, r * bins * 2, want, 2 * bins, tolerance(dt, mag), "rfft", n);
    }
    free(row);
    free(want);
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

Test(ops_fft, rfft_matches_the_definition)
{
    uint64_t s = 22;
    static const int64_t lens[] = { 1, 2, 3, 8, 9, 10, 33, 64, 90 };
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        check_rfft(WEFT_F64, 3, lens[l], 0, &s);
        check_rfft(WEFT_F32, 2, lens[l], 0, &s);
    }
    /* fft_length cuts the rows or pads them with zeros. */
    check_rfft(WEFT_F64, 2, 20, 12, &s);
    check_rfft(WEFT_F64, 2, 20, 32, &s);
    check_rfft(WEFT_F64, 2, 20, 27, &s);
}

/* irfft of [rows, bins, 2] against the inverse transform of the Hermitian
 * spectrum its first N / 2 + 1 bins define (imaginary parts of bin 0 and
 * of bin N / 2 for even N dropped), over N. */
static void check_irfft(weft_dtype dt, int64_t rows, int64_t bins, int64_t N, uint64_t *s)
{
    int64_t n = N ? N : 2 * (bins - 1), half = n / 2;
    double *xv = random_values(s, rows * bins * 2, dt);
    double *spec = malloc(sizeof *spec * 2 * (size_t)n), *want = malloc(sizeof *want * 2 * (size_t)n);
    double *real = malloc(sizeof *real * (size_t)n);
    cr_assert(spec && want && real);
    weft_tensor *x = test_tensor(dt, 3, (int64_t[]){ rows, bins, 2 }, xv), *y;
    fft_case c = { .op = 3, .fft_length = N };
    op_results_everywhere(fft_body, &c, &x, 1, &y, 1, "irfft");
    test_assert_shape(y, dt, 2, (int64_t[]){ rows, n }, "irfft");
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t k = 0; k <= half; k++) {
            spec[2 * k] = k < bins ? xv[(r * bins + k) * 2] : 0.0;
            spec[2 * k + 1] = k < bins ? xv[(r * bins + k) * 2 + 1] : 0.0;
        }
        spec[1] = 0;
        if (n % 2 == 0)
            spec[2 * half + 1] = 0;
        for (int64_t k = half + 1; k < n; k++) {
            spec[2 * k] = spec[2 * (n - k)];
            spec[2 * k + 1] = -spec[2 * (n - k) + 1];
        }
        double mag;
        ref_dft(spec, n, 1, want, &mag);
        for (int64_t j = 0; j < n; j++)
            real[j] = want[2 * j] / (double)n;
        expect_near(y, r * n, real, n, tolerance(dt, mag / (double)n), "irfft", n);
    }
    free(spec);
    free(want);
    free(real);
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

Test(ops_fft, irfft_matches_the_definition)
{
    uint64_t s = 23;
    static const int64_t bins[] = { 2, 3, 5, 9, 17, 33, 46 };
    for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
        check_irfft(WEFT_F64, 3, bins[b], 0, &s);
        check_irfft(WEFT_F32, 2, bins[b], 0, &s);
        check_irfft(WEFT_F64, 2, bins[b], 2 * bins[b] - 1, &s);   /* odd: no Nyquist bin */
    }
    /* Fewer bins than N / 2 + 1 read as zeros; more are not read. */
    check_irfft(WEFT_F64, 2, 4, 16, &s);
    check_irfft(WEFT_F64, 2, 12, 9, &s);
}

/* irfft(rfft(x)) is x for even and odd lengths. */
Test(ops_fft, irfft_undoes_rfft)
{
    uint64_t s = 24;
    static const int64_t lens[] = { 1, 2, 7, 16, 25, 100 };
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        int64_t n = lens[l];
        double *xv = random_values(&s, 2 * n, WEFT_F64);
        weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, n }, xv), *spec, *back;
        fft_case fwd = { .op = 2 }, inv = { .op = 3, .fft_length = n };
        op_results_everywhere(fft_body, &fwd, &x, 1, &spec, 1, "rfft");
        op_results_everywhere(fft_body, &inv, &spec, 1, &back, 1, "irfft");
        expect_near(back, 0, xv, 2 * n, 1e-14 * (double)(n + 1), "irfft(rfft)", n);
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(spec);
        weft_tensor_release(back);
    }
}

/* An unknown transform length (fft) and batch (rfft) are traced once for
 * every size. */
Test(ops_fft, unknown_dims_trace_once)
{
    uint64_t s = 25;
    fft_case c = { .op = 0 }, r = { .op = 2, .fft_length = 10 };
    weft_spec sig = { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, 2 } };
    weft_spec rsig = { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, 10 } };
    weft_function *f = op_signature_function(rt, fft_body, &c, &sig, 1);
    weft_function *g = op_signature_function(rt, fft_body, &r, &rsig, 1);
    for (int64_t n = 3; n <= 9; n += 3) {
        double *xv = random_values(&s, 2 * n * 10, WEFT_F64), want[20], mag;
        weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ n, 2 }, xv), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        ref_dft(xv, n, -1, want, &mag);
        expect_near(y, 0, want, 2 * n, tolerance(WEFT_F64, mag), "fft", n);
        weft_tensor_release(x);
        weft_tensor_release(y);
        x = test_tensor(WEFT_F64, 2, (int64_t[]){ n, 10 }, xv);
        a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(g, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 3, (int64_t[]){ n, 6, 2 }, "rfft");
        double row[20] = { 0 };
        for (int64_t j = 0; j < 10; j++)
            row[2 * j] = xv[(n - 1) * 10 + j];
        ref_dft(row, 10, -1, want, &mag);
        expect_near(y, (n - 1) * 12, want, 12, tolerance(WEFT_F64, mag), "rfft", 10);
        weft_tensor_release(x);
        weft_tensor_release(y);
        free(xv);
    }
    op_destroy_traced_once(&f);
    op_destroy_traced_once(&g);
}

/* ---- stft, inverse_stft -------------------------------------------------- */

typedef struct stft_case {
    int64_t frame_length, frame_step, fft_length;
    bool pad_end, own_window, inverse;
} stft_case;

/* A window of its own: 1 + i / L, not symmetric, not Hann. */
static weft_value *own_window(weft_ctx *cx, int64_t L, weft_dtype dt)
{
    weft_value *i = weft_cast(cx, weft_range(cx, WEFT_I64, 0, L, 1), dt);
    return weft_add(cx, weft_div(cx, i, weft_const_f64(cx, (double)L)), weft_const_f64(cx, 1));
}

static double own_window_at(int64_t i, int64_t L)
{
    return 1 + (double)i / (double)L;
}

static double hann_at(int64_t i, int64_t L)
{
    return 0.5 - 0.5 * cos(2 * M_PI * (double)i / (double)L);
}

static int stft_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const stft_case *c = user;
    weft_spec sa;
    cr_assert_eq(weft_value_spec(a[0], &sa), 0);
    weft_dtype dt = sa.dtype;
    weft_value *w = c->own_window ? own_window(cx, c->frame_length, dt) : NULL;
    weft_value *y = weft_stft(cx, a[0], c->frame_length, c->frame_step, c->fft_length, w,
                              c->pad_end);
    if (c->inverse) {
        /* Back to the signal through the dual window of stft's. */
        weft_value *fw = w ? w : weft_hann_window(cx, c->frame_length, true, dt);
        weft_value *iw = weft_inverse_stft_window(cx, c->frame_step, fw);
        y = weft_inverse_stft(cx, y, c->frame_length, c->frame_step, c->fft_length, iw);
    }
    outs[0] = y;
    return weft_ctx_status(cx);
}

/* stft of signals [rows, len]: each frame times the window, zero-padded
 * to the FFT length, against ref_dft. */
static void check_stft(const stft_case *c, weft_dtype dt, int64_t rows, int64_t len, uint64_t *s)
{
    int64_t L = c->frame_length, step = c->frame_step, N = c->fft_length;
    if (!N)
        for (N = 1; N < L; N *= 2) {
        }
    int64_t frames = c->pad_end ? (len + step - 1) / step : len < L ? 0 : 1 + (len - L) / step;
    int64_t bins = N / 2 + 1;
    double *xv = random_values(s, rows * len, dt);
    double *row = malloc(sizeof *row * 2 * (size_t)N), *want = malloc(sizeof *want * 2 * (size_t)N);
    cr_assert(row && want);
    weft_tensor *x = test_tensor(dt, 2, (int64_t[]){ rows, len }, xv), *y;
    op_results_everywhere(stft_body, (void *)c, &x, 1, &y, 1, "stft");
    test_assert_shape(y, dt, 4, (int64_t[]){ rows, frames, bins, 2 }, "stft");
    for (int64_t r = 0; r < rows; r++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t j = 0; j < N; j++) {
                int64_t at = f * step + j;
                double v = j < L && at < len ? xv[r * len + at] : 0.0;
                double w = c->own_window ? own_window_at(j, L) : hann_at(j, L);
                if (dt == WEFT_F32)
                    w = (double)(float)w;
                row[2 * j] = v * w;
                row[2 * j + 1] = 0;
            }
            double mag;
            ref_dft(row, N, -1, want, &mag);
            expect_near(y, (r * frames + f) * bins * 2, want, 2 * bins,
                        tolerance(dt, 2 * mag), "stft", N);
        }
    free(row);
    free(want);
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

Test(ops_fft, stft_is_windowed_frames_transformed)
{
    uint64_t s = 26;
    stft_case defaults = { .frame_length = 20, .frame_step = 7 };   /* fft_length 32 */
    check_stft(&defaults, WEFT_F64, 2, 100, &s);
    check_stft(&defaults, WEFT_F32, 1, 64, &s);
    stft_case padded = { .frame_length = 16, .frame_step = 5, .pad_end = true };
    check_stft(&padded, WEFT_F64, 2, 53, &s);
    stft_case own = { .frame_length = 12, .frame_step = 4, .fft_length = 15, .own_window = true };
    check_stft(&own, WEFT_F64, 3, 40, &s);
    stft_case cut = { .frame_length = 12, .frame_step = 6, .fft_length = 8 };
    check_stft(&cut, WEFT_F64, 1, 30, &s);
    /* A signal shorter than a frame: no frame, or (pad_end) frames of it
     * and zeros. */
    stft_case longer = { .frame_length = 20, .frame_step = 5 };
    check_stft(&longer, WEFT_F64, 2, 10, &s);
    longer.pad_end = true;
    check_stft(&longer, WEFT_F32, 2, 10, &s);
}

/* inverse_stft with inverse_stft_window's window gives the signal back
 * where the frames cover it fully (TensorFlow's documented round trip). */
Test(ops_fft, inverse_stft_undoes_stft)
{
    uint64_t s = 27;
    static const stft_case cases[] = {
        { .frame_length = 32, .frame_step = 8, .inverse = true },
        { .frame_length = 30, .frame_step = 10, .fft_length = 45, .inverse = true },
        { .frame_length = 24, .frame_step = 6, .own_window = true, .inverse = true },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const stft_case *c = &cases[k];
        int64_t len = 200, L = c->frame_length, step = c->frame_step;
        int64_t frames = 1 + (len - L) / step, out_len = (frames - 1) * step + L;
        double *xv = random_values(&s, 2 * len, WEFT_F64);
        weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, len }, xv), *y;
        op_results_everywhere(stft_body, (void *)c, &x, 1, &y, 1, "inverse_stft");
        test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ 2, out_len }, "inverse_stft");
        for (int64_t r = 0; r < 2; r++)
            for (int64_t i = L; i < out_len - L; i++)
                cr_assert(fabs(test_element(y, r * out_len + i) - xv[r * len + i]) < 1e-12,
                          "case %zu row %lld sample %lld: %.17g, want %.17g", k, (long long)r,
                          (long long)i, test_element(y, r * out_len + i), xv[r * len + i]);
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

static int window_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_inverse_stft_window(cx, *(const int64_t *)user, a[0]);
    return weft_ctx_status(cx);
}

/* inverse_stft_window against its definition: w[i] over the sum of
 * w[j]^2 over every j = i mod frame_step. */
Test(ops_fft, inverse_stft_window_matches_its_definition)
{
    uint64_t s = 28;
    static const int64_t steps[] = { 1, 3, 7, 10, 11 };
    int64_t L = 10;
    double *wv = random_values(&s, L, WEFT_F64);
    for (int64_t i = 0; i < L; i++)
        wv[i] += 3;   /* no zero denominators */
    weft_tensor *w = test_tensor(WEFT_F64, 1, (int64_t[]){ L }, wv), *y;
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        int64_t step = steps[k];
        op_results_everywhere(window_body, (void *)&steps[k], &w, 1, &y, 1,
                              "inverse_stft_window");
        test_assert_shape(y, WEFT_F64, 1, (int64_t[]){ L }, "inverse_stft_window");
        for (int64_t i = 0; i < L; i++) {
            double denom = 0;
            for (int64_t j = i % step; j < L; j += step)
                denom += wv[j] * wv[j];
            cr_assert(fabs(test_element(y, i) - wv[i] / denom) < 1e-15,
                      "step %lld, element %lld: %.17g, want %.17g", (long long)step,
                      (long long)i, test_element(y, i), wv[i] / denom);
        }
        weft_tensor_release(y);
    }
    weft_tensor_release(w);
    free(wv);
}

/* ---- 2-D and 3-D transforms --------------------------------------------- */

/* The d-dimensional DFT of the complex block x [n[0], ..., n[d - 1]] (pairs)
 * as 1-D ref_dft along each axis in turn; *mag gets sum |x|. */
static void ref_dft_nd(const double *x, const int64_t *n, int d, int sign, double *y, double *mag)
{
    int64_t total = 1;
    for (int a = 0; a < d; a++)
        total *= n[a];
    memcpy(y, x, sizeof *y * 2 * (size_t)total);
    *mag = 0;
    for (int64_t e = 0; e < total; e++)
        *mag += hypot(x[2 * e], x[2 * e + 1]);
    for (int a = 0; a < d; a++) {
        int64_t inner = 1;
        for (int b = a + 1; b < d; b++)
            inner *= n[b];
        double *line = malloc(sizeof *line * 2 * (size_t)n[a]);
        double *out = malloc(sizeof *out * 2 * (size_t)n[a]), m;
        cr_assert(line && out);
        for (int64_t o = 0; o < total / (n[a] * inner); o++)
            for (int64_t i = 0; i < inner; i++) {
                for (int64_t j = 0; j < n[a]; j++) {
                    line[2 * j] = y[2 * ((o * n[a] + j) * inner + i)];
                    line[2 * j + 1] = y[2 * ((o * n[a] + j) * inner + i) + 1];
                }
                ref_dft(line, n[a], sign, out, &m);
                for (int64_t j = 0; j < n[a]; j++) {
                    y[2 * ((o * n[a] + j) * inner + i)] = out[2 * j];
                    y[2 * ((o * n[a] + j) * inner + i) + 1] = out[2 * j + 1];
                }
            }
        free(line);
        free(out);
    }
}

typedef struct nd_case {
    int d;                  /* 2 or 3 */
    int op;                 /* 0 fft, 1 ifft, 2 rfft, 3 irfft, 4 irfft(rfft) */
    const int64_t *len;     /* fft_length, or NULL */
} nd_case;

static int nd_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const nd_case *c = user;
    bool three = c->d == 3;
    switch (c->op) {
    case 0: outs[0] = (three ? weft_fft3d : weft_fft2d)(cx, a[0]); break;
    case 1: outs[0] = (three ? weft_ifft3d : weft_ifft2d)(cx, a[0]); break;
    case 2: outs[0] = (three ? weft_rfft3d : weft_rfft2d)(cx, a[0], c->len); break;
    case 3: outs[0] = (three ? weft_irfft3d : weft_irfft2d)(cx, a[0], c->len); break;
    default:
        outs[0] = (three ? weft_irfft3d : weft_irfft2d)(
            cx, (three ? weft_rfft3d : weft_rfft2d)(cx, a[0], NULL), c->len);
        break;
    }
    return weft_ctx_status(cx);
}

/* fft2d, ifft2d, fft3d and ifft3d of a batch of 2 blocks against
 * ref_dft_nd. */
Test(ops_fft, fft2d_and_fft3d_match_the_definition)
{
    uint64_t s = 29;
    static const int64_t shapes[][3] = { { 3, 5 }, { 4, 8 }, { 2, 3, 6 }, { 5, 4, 3 } };
    for (size_t k = 0; k < 4; k++)
        for (int inverse = 0; inverse < 2; inverse++) {
            int d = k < 2 ? 2 : 3;
            int64_t dims[5] = { 2 }, per = 1;
            for (int a = 0; a < d; a++)
                per *= dims[1 + a] = shapes[k][a];
            dims[d + 1] = 2;
            double *xv = random_values(&s, 2 * per * 2, WEFT_F64);
            double *want = malloc(sizeof *want * 2 * (size_t)per), mag;
            cr_assert_not_null(want);
            weft_tensor *x = test_tensor(WEFT_F64, d + 2, dims, xv), *y;
            nd_case c = { .d = d, .op = inverse };
            op_results_everywhere(nd_body, &c, &x, 1, &y, 1, "fft nd");
            test_assert_shape(y, WEFT_F64, d + 2, dims, "fft nd");
            for (int64_t b = 0; b < 2; b++) {
                ref_dft_nd(xv + b * per * 2, shapes[k], d, inverse ? 1 : -1, want, &mag);
                for (int64_t e = 0; inverse && e < 2 * per; e++)
                    want[e] /= (double)per;
                expect_near(y, b * per * 2, want, 2 * per,
                            tolerance(WEFT_F64, inverse ? mag / (double)per : mag),
                            inverse ? "ifftnd" : "fftnd", per);
            }
            free(want);
            free(xv);
            weft_tensor_release(x);
            weft_tensor_release(y);
        }
}

/* rfft2d and rfft3d with their lengths from the input, cut and padded:
 * the first fb / 2 + 1 columns of the complex transform of the real block
 * cut or padded to the lengths. */
Test(ops_fft, rfft2d_and_rfft3d_match_the_definition)
{
    uint64_t s = 30;
    static const int64_t in2[2] = { 4, 6 }, cut2[2] = { 3, 5 }, pad2[2] = { 6, 8 };
    static const int64_t in3[3] = { 3, 4, 5 }, mix3[3] = { 2, 6, 4 };
    const struct { int d; const int64_t *in, *len; } cases[] = {
        { 2, in2, NULL }, { 2, in2, cut2 }, { 2, in2, pad2 }, { 3, in3, NULL }, { 3, in3, mix3 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int d = cases[k].d;
        const int64_t *in = cases[k].in, *L = cases[k].len ? cases[k].len : in;
        int64_t per_in = 1, per = 1, dims[4], odims[5];
        for (int a = 0; a < d; a++) {
            per_in *= dims[a] = in[a];
            per *= L[a];
            odims[a] = L[a];
        }
        odims[d - 1] = L[d - 1] / 2 + 1;
        odims[d] = 2;
        double *xv = random_values(&s, per_in, WEFT_F64);
        double *block = calloc((size_t)per * 2, sizeof *block);
        double *want = malloc(sizeof *want * 2 * (size_t)per), mag;
        cr_assert(block && want);
        /* The real block cut or zero-padded to L, as pairs. */
        for (int64_t e = 0; e < per; e++) {
            int64_t rest = e, src = 0, stride = 1;
            bool inside = true;
            for (int a = d - 1; a >= 0; a--) {
                int64_t i = rest % L[a];
                rest /= L[a];
                inside = inside && i < in[a];
                src += i * stride;
                stride *= in[a];
            }
            block[2 * e] = inside ? xv[src] : 0.0;
        }
        weft_tensor *x = test_tensor(WEFT_F64, d, dims, xv), *y;
        nd_case c = { .d = d, .op = 2, .len = cases[k].len };
        op_results_everywhere(nd_body, &c, &x, 1, &y, 1, "rfft nd");
        test_assert_shape(y, WEFT_F64, d + 1, odims, "rfft nd");
        ref_dft_nd(block, L, d, -1, want, &mag);
        int64_t bins = L[d - 1] / 2 + 1;
        for (int64_t e = 0; e < per / L[d - 1]; e++)
            expect_near(y, e * bins * 2, want + e * L[d - 1] * 2, 2 * bins,
                        tolerance(WEFT_F64, mag), "rfftnd", per);
        free(block);
        free(want);
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* irfft2d(rfft2d(x)) and irfft3d(rfft3d(x)) are x, for even and odd
 * innermost lengths (given, since 2 (bins - 1) is even). */
Test(ops_fft, irfft2d_and_irfft3d_undo_rfft)
{
    uint64_t s = 31;
    static const int64_t even2[2] = { 3, 6 }, odd2[2] = { 4, 7 }, odd3[3] = { 2, 3, 5 };
    const struct { int d; const int64_t *n; } cases[] = { { 2, even2 }, { 2, odd2 }, { 3, odd3 } };
    for (size_t k = 0; k < 3; k++) {
        int d = cases[k].d;
        int64_t per = 1;
        for (int a = 0; a < d; a++)
            per *= cases[k].n[a];
        double *xv = random_values(&s, per, WEFT_F64);
        weft_tensor *x = test_tensor(WEFT_F64, d, cases[k].n, xv), *y;
        nd_case c = { .d = d, .op = 4, .len = cases[k].n };
        op_results_everywhere(nd_body, &c, &x, 1, &y, 1, "irfft nd");
        test_assert_shape(y, WEFT_F64, d, cases[k].n, "irfft nd");
        expect_near(y, 0, xv, per, 1e-14 * (double)per, "irfftnd(rfftnd)", per);
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* ---- mdct, inverse_mdct -------------------------------------------------- */

typedef struct mdct_case {
    int64_t frame_length;
    bool ortho, own_window, round_trip;
} mdct_case;

static int mdct_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const mdct_case *c = user;
    /* Kaiser-Bessel-derived, a window of its own that also meets the
     * Princen-Bradley condition; NULL is Vorbis. */
    weft_value *w = c->own_window
                        ? weft_kaiser_bessel_derived_window(cx, c->frame_length, 4.0, WEFT_F64)
                        : NULL;
    weft_value *y = weft_mdct(cx, a[0], c->frame_length, w, false, c->ortho);
    outs[0] = c->round_trip ? weft_inverse_mdct(cx, y, w, c->ortho) : y;
    return weft_ctx_status(cx);
}

/* The MDCT by its definition, X[k] = sum_n x[n] w[n] cos(pi / N (n + 1/2 +
 * N/2)(k + 1/2)) over a frame of 2N, times 2 (TensorFlow's scale, that of
 * SciPy's type-4 DCT) or sqrt(2 / N) (ortho), against weft's with the
 * Vorbis window. */
Test(ops_fft, mdct_matches_the_definition)
{
    uint64_t s = 32;
    for (int ortho = 0; ortho < 2; ortho++) {
        int64_t L = 16, N = L / 2, len = 72, frames = 1 + (len - L) / N;
        double *xv = random_values(&s, 2 * len, WEFT_F64);
        weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, len }, xv), *y;
        mdct_case c = { .frame_length = L, .ortho = ortho };
        op_results_everywhere(mdct_body, &c, &x, 1, &y, 1, "mdct");
        test_assert_shape(y, WEFT_F64, 3, (int64_t[]){ 2, frames, N }, "mdct");
        for (int64_t r = 0; r < 2; r++)
            for (int64_t f = 0; f < frames; f++)
                for (int64_t k = 0; k < N; k++) {
                    long double sum = 0;
                    for (int64_t n = 0; n < L; n++) {
                        long double si = sinl(PI_L / L * ((long double)n + 0.5L));
                        long double w = sinl(PI_L / 2 * si * si);
                        sum += xv[r * len + f * N + n] * w *
                               cosl(PI_L / N * ((long double)n + 0.5L + N / 2.0L) *
                                    ((long double)k + 0.5L));
                    }
                    double want = (double)(sum * (ortho ? sqrtl(2.0L / N) : 2.0L));
                    double got = test_element(y, (r * frames + f) * N + k);
                    cr_assert(fabs(got - want) < 1e-13, "ortho %d row %lld frame %lld k %lld: "
                              "%.17g, want %.17g", ortho, (long long)r, (long long)f,
                              (long long)k, got, want);
                }
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* inverse_mdct(mdct(x)) is x where two frames overlap (time-domain
 * aliasing cancels), for Vorbis and Kaiser-Bessel-derived windows, with
 * and without ortho. */
Test(ops_fft, inverse_mdct_undoes_mdct)
{
    uint64_t s = 33;
    static const mdct_case cases[] = {
        { .frame_length = 16, .round_trip = true },
        { .frame_length = 32, .ortho = true, .round_trip = true },
        { .frame_length = 24, .own_window = true, .round_trip = true },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t L = cases[k].frame_length, N = L / 2, len = 8 * L;
        int64_t frames = 1 + (len - L) / N, out_len = (frames - 1) * N + L;
        double *xv = random_values(&s, len, WEFT_F64);
        weft_tensor *x = test_tensor(WEFT_F64, 1, &len, xv), *y;
        op_results_everywhere(mdct_body, (void *)&cases[k], &x, 1, &y, 1, "inverse_mdct");
        test_assert_shape(y, WEFT_F64, 1, &out_len, "inverse_mdct");
        for (int64_t i = N; i < out_len - N; i++)
            cr_assert(fabs(test_element(y, i) - xv[i]) < 1e-13, "case %zu sample %lld: %.17g, "
                      "want %.17g", k, (long long)i, test_element(y, i), xv[i]);
        free(xv);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* ---- Complex pairs -------------------------------------------------------- */

static int complex_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_complex(cx, weft_real(cx, a[0]), weft_imag(cx, a[0]));
    outs[1] = weft_conj(cx, a[0]);
    outs[2] = weft_angle(cx, a[0]);
    outs[3] = weft_complex_abs(cx, a[0]);
    return weft_ctx_status(cx);
}

static int complex_mul_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_complex_mul(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* complex(real(z), imag(z)) is z, conj, angle and abs element by element
 * (abs of f32 parts near f32's largest value does not overflow), and the
 * product broadcast against a [n, 2] filter. */
Test(ops_fft, complex_pairs)
{
    uint64_t s = 34;
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F32 : WEFT_F64;
        double *zv = random_values(&s, 3 * 4 * 2, dt);
        zv[0] = 2e38;   /* f32's squares would overflow */
        zv[1] = -1.5e38;
        zv[2] = zv[3] = 0;
        if (dt == WEFT_F32)
            zv[0] = (float)zv[0], zv[1] = (float)zv[1];
        weft_tensor *z = test_tensor(dt, 3, (int64_t[]){ 3, 4, 2 }, zv), *y[4];
        op_results_everywhere(complex_body, NULL, &z, 1, y, 4, "complex");
        cr_assert(op_same_bits(y[0], z), "complex(real, imag) is not z");
        test_assert_shape(y[2], dt, 2, (int64_t[]){ 3, 4 }, "angle");
        test_assert_shape(y[3], dt, 2, (int64_t[]){ 3, 4 }, "abs");
        double tol = dt == WEFT_F32 ? 1.2e-7 : 2.3e-16;
        for (int64_t e = 0; e < 12; e++) {
            double re = zv[2 * e], im = zv[2 * e + 1];
            cr_assert_eq(test_element(y[1], 2 * e), re);
            cr_assert_eq(test_element(y[1], 2 * e + 1), -im);
            double a = atan2(im, re), m = hypot(re, im);
            cr_assert(fabs(test_element(y[2], e) - a) <= 4 * tol * fabs(a), "angle %lld: %.17g, "
                      "want %.17g", (long long)e, test_element(y[2], e), a);
            cr_assert(fabs(test_element(y[3], e) - m) <= 2 * tol * m, "abs %lld: %.17g, want "
                      "%.17g", (long long)e, test_element(y[3], e), m);
        }
        for (int k = 0; k < 4; k++)
            weft_tensor_release(y[k]);
        /* z [3, 4, 2] times a filter [4, 2]. */
        double *hv = random_values(&s, 4 * 2, dt);
        weft_tensor *h = test_tensor(dt, 2, (int64_t[]){ 4, 2 }, hv), *args[2] = { z, h }, *p;
        op_results_everywhere(complex_mul_body, NULL, args, 2, &p, 1, "complex_mul");
        test_assert_shape(p, dt, 3, (int64_t[]){ 3, 4, 2 }, "complex_mul");
        for (int64_t e = 0; e < 12; e++) {
            double ar = zv[2 * e], ai = zv[2 * e + 1];
            double br = hv[2 * (e % 4)], bi = hv[2 * (e % 4) + 1];
            double wr = ar * br - ai * bi, wi = ar * bi + ai * br;
            double scale = fabs(ar * br) + fabs(ai * bi) + fabs(ar * bi) + fabs(ai * br);
            cr_assert(fabs(test_element(p, 2 * e) - wr) <= 4 * tol * scale &&
                      fabs(test_element(p, 2 * e + 1) - wi) <= 4 * tol * scale,
                      "product %lld: %.17g%+.17gi, want %.17g%+.17gi", (long long)e,
                      test_element(p, 2 * e), test_element(p, 2 * e + 1), wr, wi);
        }
        weft_tensor_release(p);
        weft_tensor_release(h);
        weft_tensor_release(z);
        free(hv);
        free(zv);
    }
}

/* ---- Errors -------------------------------------------------------------- */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *f64v = weft_cast(cx, a[0], WEFT_F64);
    switch (*(const int *)user) {
    case 0: outs[0] = weft_rfft(cx, a[0], 0); break;
    case 1: outs[0] = weft_fft(cx, f64v); break;
    case 2: outs[0] = weft_rfft(cx, f64v, -1); break;
    case 3: outs[0] = weft_irfft(cx, weft_reshape(cx, f64v, 3, (int64_t[]){ 6, 1, 2 }), 0); break;
    case 4: outs[0] = weft_stft(cx, f64v, 4, 0, 0, NULL, false); break;
    case 5: outs[0] = weft_stft(cx, f64v, 4, 1, 0, weft_fill(cx, WEFT_F64, 1,
                                (int64_t[]){ 3 }, 1.0), false); break;
    case 6: outs[0] = weft_stft(cx, f64v, 4, 1, 0, weft_fill(cx, WEFT_F32, 1,
                                (int64_t[]){ 4 }, 1.0), false); break;
    case 7: outs[0] = weft_inverse_stft(cx, f64v, 4, 1, 0, NULL); break;
    case 8: outs[0] = weft_inverse_stft_window(cx, 0, weft_fill(cx, WEFT_F64, 1,
                                               (int64_t[]){ 4 }, 1.0)); break;
    case 9: outs[0] = weft_ifft(cx, weft_reshape(cx, f64v, 2, (int64_t[]){ 4, 3 })); break;
    case 11: outs[0] = weft_fft2d(cx, weft_reshape(cx, f64v, 2, (int64_t[]){ 6, 2 })); break;
    case 12: outs[0] = weft_rfft2d(cx, f64v, (int64_t[]){ 0, 4 }); break;
    case 13: outs[0] = weft_irfft3d(cx, weft_reshape(cx, f64v, 3, (int64_t[]){ 3, 2, 2 }), NULL);
        break;
    case 14: outs[0] = weft_mdct(cx, f64v, 6, NULL, false, false); break;
    case 15: outs[0] = weft_inverse_mdct(cx, weft_reshape(cx, f64v, 2, (int64_t[]){ 4, 3 }), NULL,
                                         false);
        break;
    case 17: outs[0] = weft_complex_abs(cx, f64v); break;
    case 18: outs[0] = weft_complex(cx, f64v, weft_cast(cx, f64v, WEFT_F32)); break;
    case 19: outs[0] = weft_conj(cx, a[0]); break;
    case 16: outs[0] = weft_mdct(cx, f64v, 4, weft_fill(cx, WEFT_F64, 1, (int64_t[]){ 3 }, 1.0),
                                 false, false);
        break;
    default: outs[0] = weft_rfft(cx, weft_reshape(cx, f64v, 1, (int64_t[]){ 12 }), 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_fft, refused_calls_name_the_op)
{
    static const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_rfft: i32[3,4] is not f32 or f64" },
        { 1, WEFT_ESHAPE, "weft_fft: f64[3,4] is not [..., n, 2]" },
        { 2, WEFT_EINVAL, "weft_rfft: fft_length -1 is not 0" },
        { 3, WEFT_ESHAPE, "weft_irfft: fft_length 0 takes the length from f64[6,1,2], whose "
                          "bin count is too small" },
        { 4, WEFT_EINVAL, "weft_stft: frame_length 4 and frame_step 0" },
        { 5, WEFT_ESHAPE, "weft_stft: the window f64[3] is not f64[4]" },
        { 6, WEFT_EDTYPE, "weft_stft: the window f32[4] is not f64[4]" },
        { 7, WEFT_ESHAPE, "weft_inverse_stft: f64[3,4] has not a rank of 3" },
        { 8, WEFT_EINVAL, "weft_inverse_stft_window: frame_step 0 is below 1" },
        { 9, WEFT_ESHAPE, "weft_ifft: f64[4,3] is not [..., n, 2]" },
        { 11, WEFT_ESHAPE, "weft_fft2d: f64[6,2] has not 2 axes of numbers before" },
        { 12, WEFT_EINVAL, "weft_rfft2d: fft_length[0] 0 is not 1 to" },
        { 13, WEFT_ESHAPE, "weft_irfft3d: f64[3,2,2] has not 3 axes of numbers before" },
        { 14, WEFT_EINVAL, "weft_mdct: frame_length 6 is not a positive multiple of 4" },
        { 15, WEFT_ESHAPE, "weft_inverse_mdct: the last dim of f64[4,3] is not a positive even" },
        { 16, WEFT_ESHAPE, "weft_mdct: the window f64[3] is not f64[4]" },
        { 17, WEFT_ESHAPE, "weft_complex_abs: f64[3,4] is not [..., 2]" },
        { 18, WEFT_EDTYPE, "weft_complex: the parts f64[3,4] and f32[3,4] are not f32 or f64 of "
                           "one dtype" },
        { 19, WEFT_EDTYPE, "weft_conj: i32[3,4] is not f32 or f64" },
    };
    double v[12] = { 0 };
    weft_tensor *x = test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 4 }, v);
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], &x, 1);
    /* The last case is fine: a rank-1 signal is one row. */
    int fine = 10;
    weft_tensor *y = NULL;
    cr_assert_eq(op_call(rt, bad_body, &fine, &x, 1, &y, 1, false), 0, "%s", weft_errmsg());
    test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ 7, 2 }, "rfft of a vector");
    weft_tensor_release(y);
    weft_tensor_release(x);
}
