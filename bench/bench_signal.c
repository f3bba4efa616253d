/* Fourier-transform benchmarks: weft's traced calls against the C a
 * programmer writes without an FFT library, in one process.
 *  (a) rfft of f32[2048,1024], each row: a textbook iterative radix-2
 *      complex FFT in f32 (twiddles tabled once, the imaginary parts 0);
 *  (b) stft of f32[16,16000] (a batch of one-second clips at 16 kHz),
 *      frames of 400 every 160 (25 and 10 ms), fft_length 512, the
 *      periodic Hann window: the frames windowed, zero-padded and
 *      transformed by the same radix-2 loop;
 *  (c) fft of f64[64,1000,2], a length that is no power of two: the
 *      direct DFT with its cos and sin tabled once (O(n^2), what one
 *      writes without Bluestein's algorithm).
 * Both sides allocate their result every repetition; weft's output is
 * released.  Results are compared before timing. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

static weft_runtime *rt;

/* ---- The C contenders. -------------------------------------------------- */

/* The in-place radix-2 FFT of n (a power of two) interleaved f32 pairs,
 * tw holding exp(-2 pi i k / n) for k < n / 2. */
static void c_radix2(float *x, size_t n, const float *tw)
{
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            float r = x[2 * i], im = x[2 * i + 1];
            x[2 * i] = x[2 * j];
            x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = r;
            x[2 * j + 1] = im;
        }
    }
    for (size_t len = 2; len <= n; len <<= 1)
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < len / 2; k++) {
                float wr = tw[2 * k * (n / len)], wi = tw[2 * k * (n / len) + 1];
                float *a = x + 2 * (i + k), *b = a + len;
                float vr = b[0] * wr - b[1] * wi, vi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - vr;
                b[1] = a[1] - vi;
                a[0] += vr;
                a[1] += vi;
            }
}

static float *c_twiddles(size_t n)
{
    float *tw = malloc(sizeof *tw * n);
    for (size_t k = 0; k < n / 2; k++) {
        tw[2 * k] = (float)cos(2 * M_PI * (double)k / (double)n);
        tw[2 * k + 1] = (float)-sin(2 * M_PI * (double)k / (double)n);
    }
    return tw;
}

#define A_ROWS 2048
#define A_LEN 1024
#define B_CLIPS 16
#define B_LEN 16000
#define B_FRAME 400
#define B_STEP 160
#define B_FFT 512
#define B_FRAMES (1 + (B_LEN - B_FRAME) / B_STEP)
#define C_ROWS 64
#define C_LEN 1000

typedef struct c_job {
    const float *a;     /* A_ROWS x A_LEN */
    const float *b;     /* B_CLIPS x B_LEN */
    const double *c;    /* C_ROWS x C_LEN pairs */
    float *tw_a, *tw_b, *window;
    double *cs;         /* C_LEN pairs cos, -sin of 2 pi k / C_LEN */
} c_job;

/* A row of n reals transformed into its n / 2 + 1 bins at out. */
static void c_real_row(const float *x, size_t len, size_t n, const float *tw, const float *w,
                       float *scratch, float *out)
{
    for (size_t j = 0; j < n; j++) {
        scratch[2 * j] = j < len ? (w ? x[j] * w[j] : x[j]) : 0.0f;
        scratch[2 * j + 1] = 0.0f;
    }
    c_radix2(scratch, n, tw);
    memcpy(out, scratch, sizeof(float) * 2 * (n / 2 + 1));
}

static void *c_rfft(const c_job *j)
{
    float *out = malloc(sizeof(float) * A_ROWS * (A_LEN / 2 + 1) * 2);
    float *scratch = malloc(sizeof(float) * 2 * A_LEN);
    for (size_t r = 0; r < A_ROWS; r++)
        c_real_row(j->a + r * A_LEN, A_LEN, A_LEN, j->tw_a, NULL, scratch,
                   out + r * (A_LEN / 2 + 1) * 2);
    free(scratch);
    return out;
}

static void *c_stft(const c_job *j)
{
    size_t bins = B_FFT / 2 + 1;
    float *out = malloc(sizeof(float) * B_CLIPS * B_FRAMES * bins * 2);
    float *scratch = malloc(sizeof(float) * 2 * B_FFT);
    for (size_t r = 0; r < B_CLIPS; r++)
        for (size_t f = 0; f < B_FRAMES; f++)
            c_real_row(j->b + r * B_LEN + f * B_STEP, B_FRAME, B_FFT, j->tw_b, j->window,
                       scratch, out + (r * B_FRAMES + f) * bins * 2);
    free(scratch);
    return out;
}

static void *c_dft(const c_job *j)
{
    double *out = malloc(sizeof(double) * C_ROWS * C_LEN * 2);
    for (size_t r = 0; r < C_ROWS; r++) {
        const double *x = j->c + r * C_LEN * 2;
        for (size_t k = 0; k < C_LEN; k++) {
            double re = 0, im = 0;
            for (size_t t = 0, q = 0; t < C_LEN; t++, q = q + k < C_LEN ? q + k : q + k - C_LEN) {
                double c = j->cs[2 * q], s = j->cs[2 * q + 1];
                re += x[2 * t] * c - x[2 * t + 1] * s;
                im += x[2 * t] * s + x[2 * t + 1] * c;
            }
            out[(r * C_LEN + k) * 2] = re;
            out[(r * C_LEN + k) * 2 + 1] = im;
        }
    }
    return out;
}

typedef struct c_run {
    const c_job *j;
    void *(*loop)(const c_job *);
} c_run;

static void c_do(void *p)
{
    c_run *c = p;
    void *o = c->loop(c->j);
    bench_sink += *(const unsigned char *)o;
    free(o);
}

static double c_time(int reps, const c_job *j, void *(*loop)(const c_job *))
{
    c_run c = { j, loop };
    return bench_time(reps, 1, c_do, &c);
}

/* ---- weft. -------------------------------------------------------------- */

static int rfft_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_rfft(cx, args[0], 0);
    return weft_ctx_status(cx);
}

static int stft_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_stft(cx, args[0], B_FRAME, B_STEP, B_FFT, NULL, false);
    return weft_ctx_status(cx);
}

static int fft_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_fft(cx, args[0]);
    return weft_ctx_status(cx);
}

typedef struct w_call {
    weft_function *f;
    weft_arg arg;
} w_call;

static void w_do(void *p)
{
    w_call *c = p;
    weft_tensor *out = NULL;
    int err = weft_function_call(c->f, &c->arg, 1, &out, 1);
    if (err)
        bench_die("weft_function_call", err);
    bench_sink += *(const unsigned char *)weft_tensor_data(out);
    weft_tensor_release(out);
}

/* weft's result against C's: every element within tol times the row's
 * largest magnitude (the two sum in different orders and precisions). */
static void check(w_call *c, void *(*ref)(const c_job *), const c_job *j, size_t rows,
                  size_t per_row, bool f64, double tol, const char *what)
{
    weft_tensor *out = NULL;
    int err = weft_function_call(c->f, &c->arg, 1, &out, 1);
    if (err)
        bench_die("weft_function_call", err);
    void *want = ref(j);
    uint64_t bad = 0;
    for (size_t r = 0; r < rows; r++) {
        double scale = 1;
        for (size_t e = 0; e < per_row; e++) {
            size_t i = r * per_row + e;
            scale = fmax(scale, fabs(f64 ? ((double *)want)[i] : ((float *)want)[i]));
        }
        for (size_t e = 0; e < per_row; e++) {
            size_t i = r * per_row + e;
            double g = f64 ? ((const double *)weft_tensor_data(out))[i]
                           : ((const float *)weft_tensor_data(out))[i];
            double w = f64 ? ((double *)want)[i] : ((float *)want)[i];
            bad += !(fabs(g - w) <= tol * scale);
        }
    }
    if (bad)
        bench_fail(what, bad, 0);
    free(want);
    weft_tensor_release(out);
}

static double w_time(int reps, bool first, const char *name, weft_body_fn body,
                     weft_tensor *arg, void *(*ref)(const c_job *), const c_job *j,
                     size_t rows, size_t per_row, bool f64, double tol)
{
    weft_function_desc d = { .name = name, .body = body, .n_args = 1, .n_outs = 1 };
    w_call c = { .arg = weft_arg_tensor(arg) };
    int err = weft_function_create(rt, &d, &c.f);
    if (err)
        bench_die("weft_function_create", err);
    if (first)
        check(&c, ref, j, rows, per_row, f64, tol, name);
    double t = bench_time(reps, 1, w_do, &c);
    weft_function_destroy(&c.f);
    return t;
}

static weft_tensor *tensor(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    int err = weft_tensor_create(dt, rank, dims, data, &t);
    if (err)
        bench_die("weft_tensor_create", err);
    return t;
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);

    bench_table ta, tb, tc;
    bench_table_init(&ta, "(a) rfft of f32[2048,1024]", "ms", 1e3, nw, workers);
    int a_ser = bench_table_impl(&ta, "serial radix-2", 1, reps);
    int a_weft = bench_table_impl(&ta, "weft call", 0, reps);
    bench_table_init(&tb, "(b) stft of f32[16,16000], frames 400 / 160, fft 512", "ms", 1e3, nw,
                     workers);
    int b_ser = bench_table_impl(&tb, "serial radix-2", 1, reps);
    int b_weft = bench_table_impl(&tb, "weft call", 0, reps);
    bench_table_init(&tc, "(c) fft of f64[64,1000,2]", "ms", 1e3, nw, workers);
    int c_ser = bench_table_impl(&tc, "serial DFT", 1, reps);
    int c_weft = bench_table_impl(&tc, "weft call", 0, reps);

    c_job j = { 0 };
    float *a = malloc(sizeof *a * A_ROWS * A_LEN), *b = malloc(sizeof *b * B_CLIPS * B_LEN);
    double *c = malloc(sizeof *c * C_ROWS * C_LEN * 2);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < (size_t)A_ROWS * A_LEN; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        a[i] = (float)(s % 2001) / 1000.0f - 1.0f;
    }
    for (size_t i = 0; i < (size_t)B_CLIPS * B_LEN; i++)
        b[i] = sinf((float)i * 0.05f) + 0.25f * a[i % ((size_t)A_ROWS * A_LEN)];
    for (size_t i = 0; i < (size_t)C_ROWS * C_LEN * 2; i++)
        c[i] = a[i] * 0.5;
    j.a = a;
    j.b = b;
    j.c = c;
    j.tw_a = c_twiddles(A_LEN);
    j.tw_b = c_twiddles(B_FFT);
    j.window = malloc(sizeof(float) * B_FRAME);
    for (size_t i = 0; i < B_FRAME; i++)
        j.window[i] = (float)(0.5 - 0.5 * cos(2 * M_PI * (double)i / B_FRAME));
    j.cs = malloc(sizeof(double) * 2 * C_LEN);
    for (size_t k = 0; k < C_LEN; k++) {
        j.cs[2 * k] = cos(2 * M_PI * (double)k / C_LEN);
        j.cs[2 * k + 1] = -sin(2 * M_PI * (double)k / C_LEN);
    }
    ta.med[a_ser][0] = c_time(reps, &j, c_rfft);
    tb.med[b_ser][0] = c_time(reps, &j, c_stft);
    tc.med[c_ser][0] = c_time(reps < 5 ? reps : 5, &j, c_dft);

    weft_tensor *xa = tensor(WEFT_F32, 2, (int64_t[]){ A_ROWS, A_LEN }, a);
    weft_tensor *xb = tensor(WEFT_F32, 2, (int64_t[]){ B_CLIPS, B_LEN }, b);
    weft_tensor *xc = tensor(WEFT_F64, 3, (int64_t[]){ C_ROWS, C_LEN, 2 }, c);
    for (int w = 0; w < nw; w++) {
        rt = bench_runtime(workers[w]);
        ta.med[a_weft][w] = w_time(reps, w == 0, "rfft", rfft_body, xa, c_rfft, &j, A_ROWS,
                                   (A_LEN / 2 + 1) * 2, false, 1e-5);
        tb.med[b_weft][w] = w_time(reps, w == 0, "stft", stft_body, xb, c_stft, &j,
                                   (size_t)B_CLIPS * B_FRAMES, (B_FFT / 2 + 1) * 2, false, 1e-5);
        tc.med[c_weft][w] = w_time(reps, w == 0, "fft", fft_body, xc, c_dft, &j, C_ROWS,
                                   C_LEN * 2, true, 1e-12);
        weft_runtime_destroy(&rt);
        bench_settle(50);
    }
    bench_table_print(&ta);
    bench_table_print(&tb);
    bench_table_print(&tc);
    for (int w = 0; w < nw; w++)
        printf("summary: %u workers: rfft %.2fx of radix-2 C's time, stft %.2fx, fft of 1000 "
               "%.3fx of the DFT's\n", workers[w], ta.med[a_weft][w] / ta.med[a_ser][0],
               tb.med[b_weft][w] / tb.med[b_ser][0], tc.med[c_weft][w] / tc.med[c_ser][0]);
    weft_tensor_release(xa);
    weft_tensor_release(xb);
    weft_tensor_release(xc);
    free(a);
    free(b);
    free(c);
    free(j.tw_a);
    free(j.tw_b);
    free(j.window);
    free(j.cs);
    return bench_exit_status();
}
