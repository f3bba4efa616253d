/* weft_dct, weft_idct, weft_mfccs_from_log_mel_spectrograms and
 * weft_linear_to_mel_weight_matrix against references written out here in
 * long double from their SciPy / TensorFlow definitions, eagerly and
 * traced on 1, 2 and 4 workers (the same bits everywhere); the inverse
 * pairs; and their errors. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_dct, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define PI_L 3.141592653589793238462643383279502884L

/* ---- References ---------------------------------------------------------- */

/* SciPy's dct of x[0..N) (norm None or "ortho"), term by term as its
 * documentation writes them; *mag gets the largest sum of |terms|, the
 * scale of the rounding error. */
static void ref_dct(int type, bool ortho, const double *x, int64_t N, double *y, double *mag)
{
    *mag = 0;
    for (int64_t k = 0; k < N; k++) {
        long double s = 0, m = 0;
        for (int64_t n = 0; n < N; n++) {
            long double t;
            switch (type) {
            case 1:
                t = n == 0 ? x[0] : n == N - 1 ? (k % 2 ? -x[n] : x[n])
                  : 2 * x[n] * cosl(PI_L * (long double)(k * n) / (long double)(N - 1));
                break;
            case 2:
                t = 2 * x[n] * cosl(PI_L * (long double)k * (2 * n + 1) / (2.0L * N));
                break;
            case 3:
                t = n == 0 ? (ortho ? x[0] / sqrtl((long double)N) : x[0])
                  : (ortho ? sqrtl(2.0L / N) : 2.0L) * x[n] *
                    cosl(PI_L * (long double)n * (2 * k + 1) / (2.0L * N));
                break;
            default:
                t = 2 * x[n] * cosl(PI_L * (long double)(2 * n + 1) * (2 * k + 1) / (4.0L * N));
                break;
            }
            s += t;
            m += fabsl(t);
        }
        if (ortho && type == 2)
            s *= sqrtl(1.0L / ((k == 0 ? 4.0L : 2.0L) * N));
        if (ortho && type == 4)
            s *= sqrtl(1.0L / (2.0L * N));
        y[k] = (double)s;
        *mag = fmax(*mag, (double)m);
    }
}

static double *random_values(uint64_t *s, int64_t n)
{
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = 4 * op_uniform(s) - 2;
    return v;
}

/* ---- dct and idct -------------------------------------------------------- */

typedef struct dct_case {
    int type;
    int64_t n;
    bool ortho, inverse;
} dct_case;

static int dct_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const dct_case *c = user;
    outs[0] = (c->inverse ? weft_idct : weft_dct)(cx, a[0], c->type, c->n, c->ortho);
    return weft_ctx_status(cx);
}

/* Each row of x [rows, len] transformed as c asks, against ref_dct of the
 * row cut or padded to the transform's length. */
static void check_dct(const dct_case *c, weft_dtype dt, int64_t rows, int64_t len, uint64_t *s)
{
    int64_t N = c->n ? c->n : len;
    double *xv = random_values(s, rows * len);
    weft_tensor *x = test_tensor(dt, 2, (int64_t[]){ rows, len }, xv), *y;
    op_results_everywhere(dct_body, (void *)c, &x, 1, &y, 1, "dct");
    test_assert_shape(y, dt, 2, (int64_t[]){ rows, N }, "dct");
    static const int inverse[5] = { 0, 1, 3, 2, 4 };
    int type = c->inverse ? inverse[c->type] : c->type;
    double *row = calloc((size_t)N, sizeof *row), *want = malloc(sizeof *want * (size_t)N);
    cr_assert(row && want);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < N; i++) {
            double v = i < len ? xv[r * len + i] : 0.0;
            row[i] = dt == WEFT_F32 ? (double)(float)v : v;
        }
        double mag;
        ref_dct(type, c->ortho, row, N, want, &mag);
        double tol = (dt == WEFT_F32 ? 4e-6 : 1e-14) * (mag + 1);
        for (int64_t k = 0; k < N; k++) {
            double got = dt == WEFT_F32 ? ((const float *)weft_tensor_data(y))[r * N + k]
                                        : ((const double *)weft_tensor_data(y))[r * N + k];
            cr_assert(fabs(got - want[k]) <= tol,
                      "%s type %d%s N %lld (len %lld) %s: row %lld, y[%lld] = %.17g, want %.17g",
                      c->inverse ? "idct" : "dct", c->type, c->ortho ? " ortho" : "",
                      (long long)N, (long long)len, weft_dtype_name(dt), (long long)r,
                      (long long)k, got, want[k]);
        }
    }
    free(row);
    free(want);
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

Test(ops_dct, every_type_matches_its_definition)
{
    uint64_t s = 11;
    static const int64_t lens[] = { 2, 5, 8, 17, 64 };
    for (int type = 1; type <= 4; type++)
        for (int ortho = 0; ortho <= (type > 1); ortho++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                for (int f = 0; f < 2; f++) {
                    dct_case c = { .type = type, .ortho = ortho };
                    check_dct(&c, f ? WEFT_F32 : WEFT_F64, 3, lens[l], &s);
                }
}

/* n cuts the axis to its first n elements or pads it with zeros; idct is
 * the DCT of the inverse type. */
Test(ops_dct, length_and_inverse_type)
{
    uint64_t s = 12;
    for (int type = 1; type <= 4; type++) {
        dct_case cut = { .type = type, .n = 6 }, pad = { .type = type, .n = 13 };
        check_dct(&cut, WEFT_F64, 2, 9, &s);
        check_dct(&pad, WEFT_F64, 2, 9, &s);
        for (int ortho = 0; ortho <= (type > 1); ortho++) {
            dct_case inv = { .type = type, .ortho = ortho, .inverse = true };
            check_dct(&inv, WEFT_F64, 2, 7, &s);
        }
    }
    /* A vector (rank 1) works as a row. */
    double v[4] = { 1, -2, 0.5, 3 }, want[4], mag;
    weft_tensor *x = test_tensor(WEFT_F64, 1, (int64_t[]){ 4 }, v), *y;
    dct_case c = { .type = 2 };
    op_results_everywhere(dct_body, &c, &x, 1, &y, 1, "dct vector");
    test_assert_shape(y, WEFT_F64, 1, (int64_t[]){ 4 }, "dct vector");
    ref_dct(2, false, v, 4, want, &mag);
    for (int k = 0; k < 4; k++)
        cr_assert(fabs(((const double *)weft_tensor_data(y))[k] - want[k]) < 1e-13);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

typedef struct round_trip {
    int type;
    bool ortho;
} round_trip;

static int round_trip_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const round_trip *c = user;
    outs[0] = weft_idct(cx, weft_dct(cx, a[0], c->type, 0, c->ortho), c->type, 0, c->ortho);
    return weft_ctx_status(cx);
}

/* idct(dct(x)) is x with ortho, and without it x times 2N (types 2 to 4)
 * or 2(N - 1) (type 1), SciPy's scaling. */
Test(ops_dct, idct_undoes_dct)
{
    uint64_t s = 13;
    const int64_t N = 10;
    double *xv = random_values(&s, 2 * N);
    weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, N }, xv);
    for (int type = 1; type <= 4; type++)
        for (int ortho = 0; ortho <= (type > 1); ortho++) {
            round_trip c = { type, ortho };
            weft_tensor *y;
            op_results_everywhere(round_trip_body, &c, &x, 1, &y, 1, "round trip");
            double scale = ortho ? 1.0 : type == 1 ? 2.0 * (double)(N - 1) : 2.0 * (double)N;
            for (int64_t i = 0; i < 2 * N; i++)
                cr_assert(fabs(((const double *)weft_tensor_data(y))[i] - scale * xv[i]) <=
                              1e-12 * scale,
                          "type %d%s: element %lld is %.17g, want %.17g", type,
                          ortho ? " ortho" : "", (long long)i,
                          ((const double *)weft_tensor_data(y))[i], scale * xv[i]);
            weft_tensor_release(y);
        }
    free(xv);
    weft_tensor_release(x);
}

/* ---- MFCCs ------------------------------------------------------------- */

static int mfcc_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mfccs_from_log_mel_spectrograms(cx, a[0]);
    return weft_ctx_status(cx);
}

/* The type-2 DCT over the mel bins times 1 / sqrt(2 bins): a flat
 * spectrum c has only coefficient 0, c sqrt(2 bins). */
Test(ops_dct, mfccs_are_the_scaled_type_2_dct)
{
    uint64_t s = 14;
    const int64_t frames = 3, bins = 40;
    double *xv = random_values(&s, frames * bins);
    for (int64_t b = 0; b < bins; b++)
        xv[b] = 1.5;   /* frame 0 flat */
    weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ frames, bins }, xv), *y;
    op_results_everywhere(mfcc_body, NULL, &x, 1, &y, 1, "mfcc");
    test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ frames, bins }, "mfcc");
    const double *yv = weft_tensor_data(y);
    cr_assert(fabs(yv[0] - 1.5 * sqrt(2.0 * bins)) < 1e-12, "flat: %.17g", yv[0]);
    for (int64_t k = 1; k < bins; k++)
        cr_assert(fabs(yv[k]) < 1e-12, "flat: coefficient %lld is %g", (long long)k, yv[k]);
    double want[40], mag;
    for (int64_t f = 1; f < frames; f++) {
        ref_dct(2, false, &xv[f * bins], bins, want, &mag);
        for (int64_t k = 0; k < bins; k++)
            cr_assert(fabs(yv[f * bins + k] - want[k] / sqrt(2.0 * bins)) < 1e-13 * (mag + 1),
                      "frame %lld, coefficient %lld", (long long)f, (long long)k);
    }
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

/* ---- The mel matrix ------------------------------------------------------ */

typedef struct mel_case {
    int64_t mels, bins;
    double rate, lo, hi;
    weft_dtype dt;
} mel_case;

static int mel_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    const mel_case *c = user;
    outs[0] = weft_linear_to_mel_weight_matrix(cx, c->mels, c->bins, c->rate, c->lo, c->hi, c->dt);
    return weft_ctx_status(cx);
}

static long double mel_of(long double hz)
{
    return 1127.0L * logl(1.0L + hz / 700.0L);
}

/* The triangle of band m at spectrogram bin b, TensorFlow's definition in
 * long double. */
static double ref_mel(const mel_case *c, int64_t b, int64_t m)
{
    if (b == 0)
        return 0.0;
    long double f = (long double)b * (c->rate / 2) / (long double)(c->bins - 1);
    long double lo = mel_of(c->lo), step = (mel_of(c->hi) - lo) / (long double)(c->mels + 1);
    long double e0 = lo + step * m, e1 = lo + step * (m + 1), e2 = lo + step * (m + 2);
    long double x = mel_of(f);
    long double up = (x - e0) / (e1 - e0), down = (e2 - x) / (e2 - e1);
    long double w = up < down ? up : down;
    return (double)(w > 0 ? w : 0);
}

Test(ops_dct, mel_matrix_has_tensorflows_triangles)
{
    const mel_case cases[] = {
        { 20, 129, 8000, 125, 3800, WEFT_F64 }, { 20, 129, 8000, 125, 3800, WEFT_F32 },
        { 64, 513, 16000, 0, 8000, WEFT_F64 },  { 3, 9, 100, 10, 50, WEFT_F32 },
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        const mel_case *c = &cases[q];
        weft_tensor *w;
        op_results_everywhere(mel_body, (void *)c, NULL, 0, &w, 1, "mel");
        test_assert_shape(w, c->dt, 2, (int64_t[]){ c->bins, c->mels }, "mel");
        double tol = c->dt == WEFT_F32 ? 2e-4 : 1e-11, peak = 0;
        for (int64_t b = 0; b < c->bins; b++)
            for (int64_t m = 0; m < c->mels; m++) {
                int64_t i = b * c->mels + m;
                double got = c->dt == WEFT_F32 ? ((const float *)weft_tensor_data(w))[i]
                                               : ((const double *)weft_tensor_data(w))[i];
                double want = ref_mel(c, b, m);
                cr_assert(fabs(got - want) <= tol && got >= 0 && got <= 1,
                          "case %zu: [%lld, %lld] = %.9g, want %.9g", q, (long long)b,
                          (long long)m, got, want);
                peak = fmax(peak, got);
            }
        cr_assert_gt(peak, 0.5, "case %zu: no band reaches half its peak", q);
        weft_tensor_release(w);
    }
}

/* ---- Errors -------------------------------------------------------------- */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    switch (which) {
    case 0: outs[0] = weft_dct(cx, a[0], 5, 0, false); break;
    case 1: outs[0] = weft_idct(cx, a[0], 0, 0, false); break;
    case 2: outs[0] = weft_dct(cx, a[0], 1, 0, true); break;
    case 3: outs[0] = weft_dct(cx, a[0], 2, -1, false); break;
    case 4: outs[0] = weft_dct(cx, weft_cast(cx, a[0], WEFT_I32), 2, 0, false); break;
    case 5: outs[0] = weft_dct(cx, a[0], 1, 1, false); break;
    case 6: outs[0] = weft_mfccs_from_log_mel_spectrograms(cx, weft_cast(cx, a[0], WEFT_I64)); break;
    case 7: outs[0] = weft_linear_to_mel_weight_matrix(cx, 0, 10, 8000, 0, 4000, WEFT_F32); break;
    case 8: outs[0] = weft_linear_to_mel_weight_matrix(cx, 4, 10, 8000, -1, 4000, WEFT_F32); break;
    case 9: outs[0] = weft_linear_to_mel_weight_matrix(cx, 4, 10, 8000, 300, 300, WEFT_F32); break;
    case 10: outs[0] = weft_linear_to_mel_weight_matrix(cx, 4, 10, 8000, 0, 4001, WEFT_F32); break;
    case 11: outs[0] = weft_linear_to_mel_weight_matrix(cx, 4, 10, 0, 0, 0, WEFT_F32); break;
    default: outs[0] = weft_linear_to_mel_weight_matrix(cx, 4, 10, 8000, 0, 4000, WEFT_I32); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_dct, bad_calls_are_refused)
{
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_dct: type 5 is not 1, 2, 3 or 4" },
        { 1, WEFT_EINVAL, "weft_idct: type 0 is not 1, 2, 3 or 4" },
        { 2, WEFT_EINVAL, "weft_dct: type 1 has no orthonormal form" },
        { 3, WEFT_EINVAL, "weft_dct: n -1 is negative" },
        { 4, WEFT_EDTYPE, "weft_dct: i32[2,3] is not f32 or f64" },
        { 5, WEFT_EINVAL, "weft_dct: a transform of length 1 (type 1 takes 2 or more" },
        { 6, WEFT_EDTYPE, "weft_mfccs_from_log_mel_spectrograms: i64[2,3] is not f32 or f64" },
        { 7, WEFT_EINVAL, "num_mel_bins and num_spectrogram_bins must be >= 1" },
        { 8, WEFT_EINVAL, "lower_edge_hertz must be >= 0" },
        { 9, WEFT_EINVAL, "lower_edge_hertz must be below upper_edge_hertz" },
        { 10, WEFT_EINVAL, "upper_edge_hertz must not be above the Nyquist frequency" },
        { 11, WEFT_EINVAL, "weft_linear_to_mel_weight_matrix: sample_rate must be positive" },
        { 12, WEFT_EINVAL, "weft_linear_to_mel_weight_matrix: dtype i32 is not f32 or f64" },
    };
    double v[6] = { 0 };
    weft_tensor *x = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v);
    op_expect_errors(rts[0], bad_body, cases, sizeof cases / sizeof cases[0], &x, 1);
    weft_tensor_release(x);
}

/* The transform's matrix needs the last dim while tracing. */
Test(ops_dct, last_dim_unknown_while_tracing_is_refused)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[2,?]", &sig), 0);
    for (int which = 0; which < 2; which++) {
        dct_case c = { .type = 2 };
        weft_function *f = op_signature_function(rts[0], which ? mfcc_body : dct_body, &c, &sig, 1);
        const double v[6] = { 0 };
        weft_tensor *x = test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 3 }, v);
        weft_arg a = weft_arg_tensor(x);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), WEFT_ESHAPE);
        cr_assert(strstr(weft_errmsg(), which ? "weft_mfccs_from_log_mel_spectrograms: f32[2,?]"
                                              : "weft_dct: the last dim of f32[2,?] is not known"),
                  "%s", weft_errmsg());
        cr_assert_null(y);
        weft_function_destroy(&f);
        weft_tensor_release(x);
    }
}
