/* The float functions asinh, acosh, atanh and lgamma (libm's), and the
 * compositions logical_xor, selu, softsign, mish, cross,
 * clip_by_global_norm, global_norm, in_top_k, histogram_fixed_width, max_pool1d,
 * avg_pool1d, weighted_cross_entropy_with_logits, log_poisson_loss and
 * l2_loss: values
 * against libm or a reference computed here in double precision,
 * eagerly and traced on 1, 2 and 4 workers (the same bits everywhere),
 * TensorFlow's documented examples, the special values, and the errors,
 * whose messages name the op. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_compose, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef enum cp_op {
    ASINH, ACOSH, ATANH, LGAMMA, XOR, SELU, SOFTSIGN, MISH, CROSS, GLOBAL_NORM, IN_TOP_K, HISTOGRAM,
    HISTOGRAM_BINS, MAX_POOL1D, AVG_POOL1D, WEIGHTED_CE, LOG_POISSON, L2_LOSS
} cp_op;

typedef struct cp_case {
    cp_op op;
    int64_t k;
    double lo, hi, clip;
    weft_dtype dtype;
} cp_case;

static size_t n_args_of(cp_op op)
{
    return op == XOR || op == CROSS || op == GLOBAL_NORM || op == IN_TOP_K ||
                   op == WEIGHTED_CE || op == LOG_POISSON
               ? 2
               : 1;
}

static size_t n_outs_of(cp_op op)
{
    return op == GLOBAL_NORM ? 3 : 1;
}

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cp_case *c = user;
    switch (c->op) {
    case ASINH: outs[0] = weft_asinh(cx, a[0]); break;
    case ACOSH: outs[0] = weft_acosh(cx, a[0]); break;
    case ATANH: outs[0] = weft_atanh(cx, a[0]); break;
    case LGAMMA: outs[0] = weft_lgamma(cx, a[0]); break;
    case XOR: outs[0] = weft_logical_xor(cx, a[0], a[1]); break;
    case SELU: outs[0] = weft_selu(cx, a[0]); break;
    case SOFTSIGN: outs[0] = weft_softsign(cx, a[0]); break;
    case MISH: outs[0] = weft_mish(cx, a[0]); break;
    case CROSS: outs[0] = weft_cross(cx, a[0], a[1]); break;
    case GLOBAL_NORM: return weft_clip_by_global_norm(cx, a, 2, c->clip, outs);
    case IN_TOP_K: outs[0] = weft_in_top_k(cx, a[0], a[1], c->k); break;
    case HISTOGRAM:
        outs[0] = weft_histogram_fixed_width(cx, a[0], c->lo, c->hi, c->k, c->dtype);
        break;
    case HISTOGRAM_BINS:
        outs[0] = weft_histogram_fixed_width_bins(cx, a[0], c->lo, c->hi, c->k, c->dtype);
        break;
    case MAX_POOL1D:
        outs[0] = weft_max_pool1d(cx, a[0], c->k, (int64_t)c->lo,
                                  c->clip ? WEFT_PADDING_SAME : WEFT_PADDING_VALID);
        break;
    case AVG_POOL1D:
        outs[0] = weft_avg_pool1d(cx, a[0], c->k, (int64_t)c->lo,
                                  c->clip ? WEFT_PADDING_SAME : WEFT_PADDING_VALID);
        break;
    case WEIGHTED_CE: outs[0] = weft_weighted_cross_entropy_with_logits(cx, a[0], a[1], c->hi); break;
    case LOG_POISSON: outs[0] = weft_log_poisson_loss(cx, a[0], a[1], c->k != 0); break;
    case L2_LOSS: outs[0] = weft_l2_loss(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

/* c's results into outs, the same bits eagerly and traced everywhere. */
static void results(const cp_case *c, weft_tensor *const *args, weft_tensor **outs)
{
    op_results_everywhere(body, (void *)c, args, n_args_of(c->op), outs, n_outs_of(c->op),
                          "compose");
}

static double el(const weft_tensor *t, int64_t i)
{
    return test_element(t, i);
}

/* got within tol of want relative to max(1, |want|); NaN and infinities
 * exactly, and the sign of a zero. */
static void expect_near(double got, double want, double tol, const char *what, double x)
{
    if (isnan(want)) {
        cr_assert(isnan(got), "%s(%.17g) = %.17g, want NaN", what, x, got);
        return;
    }
    if (isinf(want) || want == 0) {
        cr_assert(got == want && signbit(got) == signbit(want), "%s(%.17g) = %.17g, want %.17g",
                  what, x, got, want);
        return;
    }
    cr_assert(fabs(got - want) <= tol * fmax(1, fabs(want)) &&
                  fabs(got - want) <= tol * 4 * fabs(want) + DBL_MIN,
              "%s(%.17g) = %.17g, want %.17g", what, x, got, want);
}

static const double specials[] = { -1e300, -1e12, -3, -1.5, -1e-10, -0.0, 0.0, 1e-300, 1e-8,
                                   0.5, 0.999, 1, 1.0000001, 2, 3.5, 1e9, 5e9, 1e300,
                                   INFINITY, -INFINITY, NAN };
#define N_SPECIALS ((int64_t)(sizeof specials / sizeof specials[0]))

/* x rounded to dt, as the tensor holds it. */
static double in_dtype(double x, weft_dtype dt)
{
    return dt == WEFT_F32 ? (double)(float)x : x;
}

static double lgamma_ref(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

Test(ops_compose, inverse_hyperbolics_and_lgamma_against_libm)
{
    const struct { cp_op op; double (*ref)(double); const char *name; } fns[] = {
        { ASINH, asinh, "asinh" }, { ACOSH, acosh, "acosh" }, { ATANH, atanh, "atanh" },
        { LGAMMA, lgamma_ref, "lgamma" },
    };
    for (size_t f = 0; f < 4; f++)
        for (int d = 0; d < 2; d++) {
            weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
            int64_t n = N_SPECIALS;
            weft_tensor *x = test_tensor(dt, 1, &n, specials);
            cp_case c = { .op = fns[f].op };
            weft_tensor *y;
            results(&c, &x, &y);
            for (int64_t i = 0; i < n; i++) {
                double xi = in_dtype(specials[i], dt), want = in_dtype(fns[f].ref(xi), dt);
                /* f32 computes in f32: a few roundings of 2^-24. */
                expect_near(el(y, i), want, dt == WEFT_F32 ? 4e-7 : 4e-16, fns[f].name, xi);
            }
            weft_tensor_release(y);
            weft_tensor_release(x);
        }
}

/* Integers compute in f64, as the other float functions. */
Test(ops_compose, float_functions_of_integers_are_f64)
{
    const double v[] = { -2, 0, 1, 3, 7 };
    int64_t n = 5;
    weft_tensor *x = test_tensor(WEFT_I32, 1, &n, v);
    cp_case c = { .op = ASINH }, g = { .op = LGAMMA };
    weft_tensor *y, *z;
    results(&c, &x, &y);
    results(&g, &x, &z);
    test_assert_shape(y, WEFT_F64, 1, &n, "asinh of i32");
    test_assert_shape(z, WEFT_F64, 1, &n, "lgamma of i32");
    for (int64_t i = 0; i < n; i++) {
        cr_assert_eq(el(y, i), asinh(v[i]));
        cr_assert_eq(el(z, i), lgamma_ref(v[i]), "lgamma(%g) = %g", v[i], el(z, i));
    }
    cr_assert(isinf(el(z, 0)) && isinf(el(z, 1)), "lgamma at 0 and -2 is +inf");
    weft_tensor_release(y);
    weft_tensor_release(z);
    weft_tensor_release(x);
}

Test(ops_compose, activations_against_reference)
{
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
        int64_t n = N_SPECIALS;
        weft_tensor *x = test_tensor(dt, 1, &n, specials);
        const cp_op ops[] = { SELU, SOFTSIGN, MISH };
        for (size_t o = 0; o < 3; o++) {
            cp_case c = { .op = ops[o] };
            weft_tensor *y;
            results(&c, &x, &y);
            for (int64_t i = 0; i < n; i++) {
                double xi = in_dtype(specials[i], dt), want;
                if (ops[o] == SELU)
                    want = 1.0507009873554805 * (xi > 0 ? xi : 1.6732632423543772 * expm1(xi));
                else if (ops[o] == SOFTSIGN)
                    want = isinf(xi) ? copysign(1, xi) : xi / (1 + fabs(xi));
                else   /* softplus in its stable form, as TensorFlow's */
                    want = xi * tanh(fmax(xi, 0) + log1p(exp(-fabs(xi))));
                if (ops[o] == SOFTSIGN && isinf(xi))
                    want = NAN;   /* inf / inf, in weft as in TensorFlow */
                expect_near(el(y, i), in_dtype(want, dt), dt == WEFT_F32 ? 1e-6 : 1e-15,
                            ops[o] == SELU ? "selu" : ops[o] == SOFTSIGN ? "softsign" : "mish",
                            xi);
            }
            weft_tensor_release(y);
        }
        weft_tensor_release(x);
    }
}

Test(ops_compose, logical_xor_truth_table)
{
    const double a[] = { 0, 0, 1, 1 }, b[] = { 0, 1, 0, 1 };
    int64_t n = 4;
    weft_tensor *args[2] = { test_tensor(WEFT_BOOL, 1, &n, a), test_tensor(WEFT_BOOL, 1, &n, b) };
    cp_case c = { .op = XOR };
    weft_tensor *y;
    results(&c, args, &y);
    test_assert_shape(y, WEFT_BOOL, 1, &n, "xor");
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(el(y, i), (a[i] != 0) != (b[i] != 0), "%g xor %g", a[i], b[i]);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_compose, cross_products_and_broadcasting)
{
    const double a[] = { 1, 0, 0, 0, 1, 0, 2, -3, 4.5, 1e10, 1, -2 };
    const double b[] = { 0, 1, 0 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 4, 3 }, a),
                             test_tensor(WEFT_F64, 1, (int64_t[]){ 3 }, b) };
    cp_case c = { .op = CROSS };
    weft_tensor *y;
    results(&c, args, &y);
    test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ 4, 3 }, "cross");
    for (int r = 0; r < 4; r++) {
        const double *x = a + 3 * r;
        double want[3] = { x[1] * b[2] - x[2] * b[1], x[2] * b[0] - x[0] * b[2],
                           x[0] * b[1] - x[1] * b[0] };
        for (int j = 0; j < 3; j++)
            cr_assert_eq(el(y, 3 * r + j), want[j], "row %d component %d: %g", r, j,
                         el(y, 3 * r + j));
    }
    /* e_x x e_y = e_z. */
    cr_assert(el(y, 0) == 0 && el(y, 1) == 0 && el(y, 2) == 1);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_compose, clip_by_global_norm_scales_every_tensor_alike)
{
    const double a[] = { 3, 0, 0, 4 }, b[] = { 12 };
    for (int clip_case = 0; clip_case < 2; clip_case++) {
        /* The global norm is 13: clipped to 6.5, or left alone under 20. */
        double clip = clip_case ? 20 : 6.5, scale = clip_case ? 1 : 0.5;
        weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 2 }, a),
                                 test_tensor(WEFT_F64, 1, (int64_t[]){ 1 }, b) };
        cp_case c = { .op = GLOBAL_NORM, .clip = clip };
        weft_tensor *y[3];
        results(&c, args, y);
        test_assert_shape(y[0], WEFT_F32, 2, (int64_t[]){ 2, 2 }, "clipped a");
        test_assert_shape(y[1], WEFT_F64, 1, (int64_t[]){ 1 }, "clipped b");
        test_assert_shape(y[2], WEFT_F64, 0, NULL, "global norm");
        cr_assert_eq(el(y[2], 0), 13);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(el(y[0], i), a[i] * scale, "a[%d] = %g", i, el(y[0], i));
        cr_assert_eq(el(y[1], 0), b[0] * scale);
        for (int k = 0; k < 3; k++)
            weft_tensor_release(y[k]);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

static int global_norm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *clipped[3];
    outs[0] = weft_global_norm(cx, a, 2);
    if (weft_clip_by_global_norm(cx, a, 2, 1.0, clipped) == 0)
        outs[1] = clipped[2];
    return weft_ctx_status(cx);
}

/* tf.linalg.global_norm: the norm clip_by_global_norm scales by, bit for
 * bit, over tensors of two dtypes; refused with no tensors. */
Test(ops_compose, global_norm_is_the_clips_norm)
{
    const double a[] = { 0.1, -2.5, 3.25, 4 }, b[] = { 12, 1e-3 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 2 }, a),
                             test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, b) };
    weft_tensor *y[2];
    op_results_everywhere(global_norm_body, NULL, args, 2, y, 2, "global_norm");
    test_assert_shape(y[0], WEFT_F64, 0, NULL, "global norm");
    cr_assert(op_same_bits(y[0], y[1]), "the clip's norm");
    double want = 0;
    for (int i = 0; i < 4; i++)
        want += (double)(float)a[i] * (double)(float)a[i];
    want = sqrt(want + b[0] * b[0] + b[1] * b[1]);
    cr_assert_float_eq(el(y[0], 0), want, 1e-15 * want);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(y[k]);
        weft_tensor_release(args[k]);
    }
    weft_ctx *cx = NULL;
    cr_assert_null(weft_global_norm(cx, NULL, 0));
}

Test(ops_compose, in_top_k_counts_as_tensorflow)
{
    /* Row 0: 0.9 is the largest; row 1: ties at the boundary are in; row
     * 2: target 5 is out of range; row 3: a NaN prediction. */
    const double pred[] = { 0.1, 0.9, 0.5, 0.2,
                            0.3, 0.3, 0.3, 0.1,
                            0.2, 0.4, 0.1, 0.3,
                            0.5, NAN, 0.1, 0.2 };
    const double targets[] = { 1, 2, 5, 1 };
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 1, (int64_t[]){ 4 }, targets),
                             test_tensor(WEFT_F32, 2, (int64_t[]){ 4, 4 }, pred) };
    const struct { int64_t k; bool want[4]; } ks[] = {
        { 0, { false, false, false, false } },
        { 1, { true, true, false, false } },
        { 3, { true, true, false, false } },
        { 4, { true, true, false, false } },
    };
    for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
        cp_case c = { .op = IN_TOP_K, .k = ks[s].k };
        weft_tensor *y;
        results(&c, args, &y);
        test_assert_shape(y, WEFT_BOOL, 1, (int64_t[]){ 4 }, "in_top_k");
        for (int i = 0; i < 4; i++)
            cr_assert_eq(el(y, i) != 0, ks[s].want[i], "k %lld row %d", (long long)ks[s].k, i);
        weft_tensor_release(y);
    }
    /* Row 2's target 3 (0.3, second largest) is in the top 2, not the top 1. */
    weft_tensor_release(args[0]);
    args[0] = test_tensor(WEFT_I64, 1, (int64_t[]){ 4 }, (double[]){ 1, 2, 3, 0 });
    for (int64_t k = 1; k <= 2; k++) {
        cp_case c = { .op = IN_TOP_K, .k = k };
        weft_tensor *y;
        results(&c, args, &y);
        cr_assert_eq(el(y, 2) != 0, k == 2, "k %lld", (long long)k);
        cr_assert_eq(el(y, 3) != 0, false, "a NaN in the row makes it false");
        weft_tensor_release(y);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_compose, histogram_fixed_width_as_tensorflow)
{
    /* TensorFlow's example: nbins 5 over [0, 5). */
    const double v[] = { -1.0, 0.0, 1.5, 2.0, 5.0, 15, NAN };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (int64_t[]){ 7 }, v);
    for (int d = 0; d < 2; d++) {
        cp_case c = { .op = HISTOGRAM, .lo = 0, .hi = 5, .k = 5,
                      .dtype = d ? WEFT_I64 : WEFT_I32 };
        weft_tensor *y;
        results(&c, &x, &y);
        test_assert_shape(y, c.dtype, 1, (int64_t[]){ 5 }, "histogram");
        const double want[] = { 2, 1, 1, 0, 2 };
        for (int i = 0; i < 5; i++)
            cr_assert_eq(el(y, i), want[i], "bin %d: %g", i, el(y, i));
        weft_tensor_release(y);
    }
    weft_tensor_release(x);
    /* Integers, many of them: each bin of 10 values counts 10. */
    double *iv = malloc(sizeof *iv * 100);
    cr_assert_not_null(iv);
    for (int i = 0; i < 100; i++)
        iv[i] = i;
    x = test_tensor(WEFT_I32, 1, (int64_t[]){ 100 }, iv);
    cp_case c = { .op = HISTOGRAM, .lo = 0, .hi = 100, .k = 10, .dtype = WEFT_I64 };
    weft_tensor *y;
    results(&c, &x, &y);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(el(y, i), 10, "bin %d: %g", i, el(y, i));
    weft_tensor_release(y);
    weft_tensor_release(x);
    free(iv);
}

/* The bins the histogram counts, element by element, in values' shape:
 * TensorFlow's example, the range's ends, and a NaN in no bin (-1). */
Test(ops_compose, histogram_fixed_width_bins_as_tensorflow)
{
    const double v[] = { -1.0, 0.0, 1.5, 2.0, 5.0, 15, NAN, 4.999, 0.999 };
    const double want[] = { 0, 0, 1, 2, 4, 4, -1, 4, 0 };
    weft_tensor *x = test_tensor(WEFT_F32, 2, (int64_t[]){ 3, 3 }, v);
    for (int d = 0; d < 2; d++) {
        cp_case c = { .op = HISTOGRAM_BINS, .lo = 0, .hi = 5, .k = 5,
                      .dtype = d ? WEFT_I64 : WEFT_I32 };
        weft_tensor *y;
        results(&c, &x, &y);
        test_assert_shape(y, c.dtype, 2, (int64_t[]){ 3, 3 }, "histogram bins");
        for (int i = 0; i < 9; i++)
            cr_assert_eq(el(y, i), want[i], "value %g: bin %g", v[i], el(y, i));
        weft_tensor_release(y);
    }
    weft_tensor_release(x);
}

/* pool1d: [1, 7, 2] with windows of 3 every 2 (VALID: 3 outputs; SAME:
 * 4, the end windows clipped), against loops over the definition. */
Test(ops_compose, pool1d_as_pool2d_of_one_row)
{
    double v[14];
    for (int i = 0; i < 14; i++)
        v[i] = (i * 7) % 11 - 5;
    weft_tensor *x = test_tensor(WEFT_F64, 3, (int64_t[]){ 1, 7, 2 }, v);
    for (int same = 0; same < 2; same++)
        for (int avg = 0; avg < 2; avg++) {
            cp_case c = { .op = avg ? AVG_POOL1D : MAX_POOL1D, .k = 3, .lo = 2, .clip = same };
            weft_tensor *y;
            results(&c, &x, &y);
            int64_t ow = same ? 4 : 3;
            test_assert_shape(y, WEFT_F64, 3, (int64_t[]){ 1, ow, 2 }, "pool1d");
            /* SAME pads 1 on each side for 7 -> 4 windows of 3 every 2;
             * padding is in no window. */
            for (int64_t o = 0; o < ow; o++)
                for (int ch = 0; ch < 2; ch++) {
                    double best = -INFINITY, sum = 0;
                    int n = 0;
                    for (int64_t w = o * 2 - same; w < o * 2 - same + 3; w++) {
                        if (w < 0 || w >= 7)
                            continue;
                        best = fmax(best, v[w * 2 + ch]);
                        sum += v[w * 2 + ch];
                        n++;
                    }
                    double want = avg ? sum / n : best;
                    cr_assert(fabs(el(y, o * 2 + ch) - want) <= 1e-15, "same %d avg %d [%lld][%d]: "
                              "%g, want %g", same, avg, (long long)o, ch, el(y, o * 2 + ch), want);
                }
            weft_tensor_release(y);
        }
    weft_tensor_release(x);
}

Test(ops_compose, losses_against_their_formulas)
{
    const double z[] = { 0, 1, 0.3, 2, 5, 0.5 }, x[] = { -2, 3, 0.1, -0.5, 1.2, 40 };
    int64_t n = 6;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, &n, z), test_tensor(WEFT_F64, 1, &n, x) };
    cp_case cw = { .op = WEIGHTED_CE, .hi = 2.5 };
    weft_tensor *y;
    results(&cw, args, &y);
    for (int64_t i = 0; i < n; i++) {
        double lw = 1 + (2.5 - 1) * z[i];
        double want = (1 - z[i]) * x[i] + lw * (log1p(exp(-fabs(x[i]))) + fmax(-x[i], 0));
        expect_near(el(y, i), want, 1e-15, "weighted_ce", x[i]);
    }
    weft_tensor_release(y);
    for (int full = 0; full < 2; full++) {
        cp_case cp = { .op = LOG_POISSON, .k = full };
        results(&cp, args, &y);
        for (int64_t i = 0; i < n; i++) {
            double want = exp(x[i]) - x[i] * z[i];
            if (full && z[i] > 1)
                want += z[i] * log(z[i]) - z[i] + 0.5 * log(2 * M_PI * z[i]);
            expect_near(el(y, i), want, 1e-15, full ? "log_poisson full" : "log_poisson", x[i]);
        }
        weft_tensor_release(y);
    }
    cp_case cl = { .op = L2_LOSS };
    results(&cl, &args[1], &y);
    test_assert_shape(y, WEFT_F64, 0, NULL, "l2_loss");
    double ss = 0;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    expect_near(el(y, 0), ss / 2, 1e-15, "l2_loss", 0);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- Errors --------------------------------------------------------------- */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *tmp[3];
    switch (*(const int *)user) {
    case 0: outs[0] = weft_selu(cx, weft_cast(cx, a[0], WEFT_I32)); break;
    case 1: outs[0] = weft_logical_xor(cx, a[0], a[0]); break;
    case 2: outs[0] = weft_cross(cx, a[0], a[0]); break;                            /* [2,2] */
    case 3: outs[0] = weft_in_top_k(cx, weft_cast(cx, a[1], WEFT_I32), a[0], -1); break;
    case 4: outs[0] = weft_histogram_fixed_width(cx, a[0], 1, 1, 3, WEFT_I32); break;
    case 5: return weft_clip_by_global_norm(cx, a, 1, 0, tmp);
    case 6: outs[0] = weft_mish(cx, weft_cast(cx, a[0], WEFT_I64)); break;
    case 7: outs[0] = weft_global_norm(cx, a, 0); break;
    default: tmp[0] = weft_cast(cx, a[0], WEFT_I32);
        outs[0] = weft_global_norm(cx, tmp, 1);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_compose, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_selu: a is i32[2,2], not f32 or f64" },
        { 1, WEFT_EDTYPE, "weft_logical_xor: input 0 is f64[2,2], not bool" },
        { 2, WEFT_ESHAPE, "weft_cross: a f64[2,2] does not have 3 elements in its last dim" },
        { 3, WEFT_EINVAL, "weft_in_top_k: k -1 is negative" },
        { 4, WEFT_EINVAL, "weft_histogram_fixed_width: the range [1, 1] is not finite with "
                          "lo < hi" },
        { 5, WEFT_EINVAL, "weft_clip_by_global_norm: clip_norm 0 is not finite and > 0" },
        { 6, WEFT_EDTYPE, "weft_mish: a is i64[2,2], not f32 or f64" },
        { 7, WEFT_EINVAL, "weft_global_norm: no tensors" },
        { 8, WEFT_EDTYPE, "weft_global_norm: a tensor i32[2,2] is not f32 or f64" },
    };
    double v[4] = { 1, 2, 3, 4 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 2 }, v),
                             test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
