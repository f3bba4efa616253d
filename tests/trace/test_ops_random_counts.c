/* random_gamma, random_poisson and random_binomial.  The draws follow
 * their laws (binomial: Pearson's chi-square on both of TensorFlow's
 * methods, and draws above p = 1/2 mirror those below); for fixed seeds,
 * Gamma(alpha) (and divided by beta) passes a Kolmogorov-Smirnov
 * test against the gamma CDF (weft_igamma) at the 0.1% level with its mean
 * within 4 standard errors; Poisson(lam) on both sides of the method
 * switch at lam = 10 passes Pearson's chi-square over the counts of 5 or
 * more expected (within 5 of its standard deviations of its mean), and its
 * mean is within 4 standard errors.  The
 * same bits eagerly and traced on 1, 2 and 4 workers with parameters
 * broadcast; f32 the f64 draw rounded once; another seed, other draws;
 * the domain's edges and the integer dtypes' saturation; the refused
 * calls.  The seeds are fixed, so these checks cannot flake. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_random_counts, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct draw_case {
    bool poisson;
    weft_dtype dtype;
    int rank;
    int64_t dims[2];
    bool beta;   /* gamma: a[2] is beta */
} draw_case;

/* a[0] the seed, a[1] alpha or lam, a[2] beta. */
static int draw_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const draw_case *c = user;
    outs[0] = c->poisson ? weft_random_poisson(cx, a[0], c->dtype, c->rank, c->dims, a[1])
                         : weft_random_gamma(cx, a[0], c->dtype, c->rank, c->dims, a[1],
                                             c->beta ? a[2] : NULL);
    return weft_ctx_status(cx);
}

static weft_tensor *seed_of(int64_t s)
{
    return test_tensor(WEFT_I64, 0, NULL, (const double[]){ (double)s });
}

/* n draws of one parameter p (and beta b for gamma, 0: none), f64,
 * eagerly on rts[1]; the caller frees the result. */
static double *draws(bool poisson, double p, double b, int64_t n, int64_t seed)
{
    draw_case c = { poisson, WEFT_F64, 1, { n, 0 }, b != 0 };
    weft_tensor *args[3] = { seed_of(seed), test_tensor(WEFT_F64, 0, NULL, &p),
                             test_tensor(WEFT_F64, 0, NULL, &b) };
    weft_tensor *out = NULL;
    cr_assert_eq(op_call(rts[1], draw_body, &c, args, 3, &out, 1, true), 0, "%s", weft_errmsg());
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    memcpy(v, weft_tensor_data(out), (size_t)n * sizeof *v);
    weft_tensor_release(out);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
    return v;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double mean_of(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

#define N_GAMMA 100000

Test(ops_random_counts, gamma_follows_its_law)
{
    const double alphas[] = { 0.3, 1, 2.5, 40 }, betas[] = { 0, 0, 2, 0.5 };
    for (size_t k = 0; k < 4; k++) {
        double a = alphas[k], b = betas[k], scale = b ? b : 1;
        double *v = draws(false, a, b, N_GAMMA, 7 + (int64_t)k);
        double m = mean_of(v, N_GAMMA);
        cr_assert(fabs(m - a / scale) <= 4 * sqrt(a / N_GAMMA) / scale, "alpha %g beta %g: mean %g",
                  a, b, m);
        /* The CDF at each sorted draw: P(alpha, beta x). */
        qsort(v, N_GAMMA, sizeof *v, cmp_double);
        double *bx = malloc(N_GAMMA * sizeof *bx), *cdf = malloc(N_GAMMA * sizeof *cdf);
        cr_assert(bx && cdf);
        for (int64_t i = 0; i < N_GAMMA; i++)
            bx[i] = v[i] * scale;
        op_binary_values(weft_igamma, WEFT_F64, &a, 1, bx, N_GAMMA, cdf);
        double d = 0;
        for (int64_t i = 0; i < N_GAMMA; i++) {
            double lo = cdf[i] - (double)i / N_GAMMA, hi = (double)(i + 1) / N_GAMMA - cdf[i];
            d = fmax(d, fmax(lo, hi));
        }
        cr_assert(d < 1.95 / sqrt(N_GAMMA), "alpha %g beta %g: KS distance %g", a, b, d);
        free(v);
        free(bx);
        free(cdf);
    }
}

#define N_POISSON 100000

Test(ops_random_counts, poisson_follows_its_law)
{
    const double lams[] = { 0.5, 4, 9.99, 10, 30, 250 };
    for (size_t k = 0; k < 6; k++) {
        double lam = lams[k];
        double *v = draws(true, lam, 0, N_POISSON, 21 + (int64_t)k);
        double m = mean_of(v, N_POISSON);
        cr_assert(fabs(m - lam) <= 4 * sqrt(lam / N_POISSON), "lam %g: mean %g", lam, m);
        int64_t top = (int64_t)(lam + 12 * sqrt(lam) + 12);
        int64_t *count = calloc((size_t)top + 1, sizeof *count);
        cr_assert_not_null(count);
        for (int64_t i = 0; i < N_POISSON; i++) {
            cr_assert(v[i] >= 0 && v[i] == floor(v[i]), "lam %g: draw %g", lam, v[i]);
            if (v[i] <= (double)top)
                count[(int64_t)v[i]]++;
        }
        /* Pearson's chi-square over the counts of 5 or more expected,
         * against its mean (the bins) plus 5 of its standard deviations. */
        double chi2 = 0;
        int bins = 0;
        for (int64_t c = 0; c <= top; c++) {
            int sign;
            double p = exp(c * log(lam) - lam - lgamma_r((double)c + 1, &sign));
            double want = N_POISSON * p;
            if (want < 5)
                continue;
            chi2 += ((double)count[c] - want) * ((double)count[c] - want) / want;
            bins++;
        }
        cr_assert(chi2 <= bins + 5 * sqrt(2.0 * bins), "lam %g: chi-square %g over %d counts",
                  lam, chi2, bins);
        free(count);
        free(v);
    }
}

Test(ops_random_counts, the_same_bits_everywhere_and_f32_rounds_f64)
{
    const double alpha[3] = { 0.5, 3, 17 }, beta[3] = { 1, 2, 0.25 };
    weft_tensor *args[3] = { seed_of(5), test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, alpha),
                             test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, beta) };
    const draw_case cases[] = {
        { false, WEFT_F64, 2, { 5, 3 }, true }, { true, WEFT_I64, 2, { 5, 3 }, false },
        { true, WEFT_F32, 2, { 4, 3 }, false },
    };
    for (size_t k = 0; k < 3; k++) {
        weft_tensor *out;
        op_results_everywhere(draw_body, (void *)&cases[k], args, 3, &out, 1, "draw");
        test_assert_shape(out, cases[k].dtype, 2, cases[k].dims, "draw");
        weft_tensor_release(out);
    }
    /* f32 gamma draws are the f64 ones rounded, for parameters that f32
     * holds; Poisson counts are the same numbers in every dtype. */
    draw_case g64 = { false, WEFT_F64, 2, { 50, 3 }, false }, g32 = g64, p64 = g64, p32 = g64;
    g32.dtype = WEFT_F32;
    p64.poisson = p32.poisson = true;
    p32.dtype = WEFT_I32;
    weft_tensor *y[4];
    const draw_case *cs[4] = { &g64, &g32, &p64, &p32 };
    for (int k = 0; k < 4; k++)
        cr_assert_eq(op_call(rts[0], draw_body, (void *)cs[k], args, 3, &y[k], 1, false), 0, "%s",
                     weft_errmsg());
    for (int64_t i = 0; i < 150; i++) {
        cr_assert_eq(test_element(y[1], i), (double)(float)test_element(y[0], i), "gamma %lld",
                     (long long)i);
        cr_assert_eq(test_element(y[3], i), test_element(y[2], i), "poisson %lld", (long long)i);
    }
    /* Another seed, other draws. */
    weft_tensor *other_args[3] = { seed_of(6), args[1], args[2] }, *other;
    cr_assert_eq(op_call(rts[0], draw_body, &g64, other_args, 3, &other, 1, false), 0);
    int same = 0;
    for (int64_t i = 0; i < 150; i++)
        same += test_element(other, i) == test_element(y[0], i);
    cr_assert_eq(same, 0, "%d of 150 draws repeat under another seed", same);
    weft_tensor_release(other);
    weft_tensor_release(other_args[0]);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(y[k]);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

Test(ops_random_counts, edges_and_saturation)
{
    const double alpha[6] = { 0, -1, NAN, INFINITY, 1e-3, 1e-300 };
    weft_tensor *args[3] = { seed_of(9), test_tensor(WEFT_F64, 1, (const int64_t[]){ 6 }, alpha),
                             NULL };
    draw_case g = { false, WEFT_F64, 1, { 6, 0 }, false };
    weft_tensor *out;
    op_results_everywhere(draw_body, &g, args, 2, &out, 1, "gamma edges");
    for (int i = 0; i < 4; i++)
        cr_assert(isnan(test_element(out, i)), "alpha %g: %g", alpha[i], test_element(out, i));
    cr_assert(test_element(out, 5) == DBL_MIN, "alpha 1e-300 draws the smallest normal: %g",
              test_element(out, 5));
    cr_assert(test_element(out, 4) >= DBL_MIN && isfinite(test_element(out, 4)));
    weft_tensor_release(out);
    weft_tensor_release(args[1]);
    const double lam[5] = { 0, -1, NAN, INFINITY, 1e12 };
    args[1] = test_tensor(WEFT_F64, 1, (const int64_t[]){ 5 }, lam);
    draw_case pf = { true, WEFT_F64, 1, { 5, 0 }, false }, pi = pf;
    pi.dtype = WEFT_I32;
    op_results_everywhere(draw_body, &pf, args, 2, &out, 1, "poisson edges");
    cr_assert(test_element(out, 0) == 0 && isnan(test_element(out, 1)) &&
              isnan(test_element(out, 2)) && isinf(test_element(out, 3)));
    cr_assert(fabs(test_element(out, 4) - 1e12) <= 6 * 1e6, "lam 1e12: %g", test_element(out, 4));
    weft_tensor_release(out);
    op_results_everywhere(draw_body, &pi, args, 2, &out, 1, "poisson edges, i32");
    const double want[5] = { 0, -1, -1, INT32_MAX, INT32_MAX };
    for (int i = 0; i < 5; i++)
        cr_assert_eq(test_element(out, i), want[i], "lam %g: %g", lam[i], test_element(out, i));
    weft_tensor_release(out);
    weft_tensor_release(args[1]);
    weft_tensor_release(args[0]);
}

enum { GAMMA_INT, POISSON_BOOL, ALPHA_SHAPE, ALPHA_BOOL, BAD_SEED, UNKNOWN_DIM };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: an i64 seed, alpha f64[4], a bool scalar, an f32 scalar. */
    const int64_t d3[1] = { 3 }, d_any[1] = { -1 };
    switch (*(const int *)user) {
    case GAMMA_INT: outs[0] = weft_random_gamma(cx, a[0], WEFT_I32, 1, d3, a[3], NULL); break;
    case POISSON_BOOL: outs[0] = weft_random_poisson(cx, a[0], WEFT_BOOL, 1, d3, a[3]); break;
    case ALPHA_SHAPE: outs[0] = weft_random_gamma(cx, a[0], WEFT_F64, 1, d3, a[1], NULL); break;
    case ALPHA_BOOL: outs[0] = weft_random_poisson(cx, a[0], WEFT_I64, 1, d3, a[2]); break;
    case BAD_SEED: outs[0] = weft_random_gamma(cx, a[3], WEFT_F32, 1, d3, a[3], NULL); break;
    default: outs[0] = weft_random_poisson(cx, a[0], WEFT_I64, 1, d_any, a[3]); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_random_counts, refused_calls_name_the_op)
{
    const double four[4] = { 1, 2, 3, 4 }, one = 1;
    weft_tensor *args[4] = { seed_of(1), test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, four),
                             test_tensor(WEFT_BOOL, 0, NULL, &one),
                             test_tensor(WEFT_F32, 0, NULL, &one) };
    const op_error_case cases[] = {
        { GAMMA_INT, WEFT_EINVAL, "weft_random_gamma: dtype i32 is not f32 or f64" },
        { POISSON_BOOL, WEFT_EINVAL, "weft_random_poisson: dtype bool is not i32, i64, f32 or f64" },
        { ALPHA_SHAPE, WEFT_ESHAPE, "weft_random_gamma: alpha f64[4] does not broadcast to the "
                                    "shape of the draw" },
        { ALPHA_BOOL, WEFT_EDTYPE, "weft_random_poisson: lam bool[] is bool, not a number" },
        { BAD_SEED, WEFT_EINVAL, "weft_random_gamma: the seed f32[] is not i32 or i64" },
        { UNKNOWN_DIM, WEFT_EINVAL, "weft_random_poisson: dim 0 is unknown" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}

/* ---- random_binomial ---- */

/* a[0] the seed, a[1] the counts, a[2] the probabilities. */
static int binomial_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const draw_case *c = user;
    outs[0] = weft_random_binomial(cx, a[0], c->dtype, c->rank, c->dims, a[1], a[2]);
    return weft_ctx_status(cx);
}

#define N_BINOMIAL 100000

/* Both methods (n p below and above 10), each also through p > 1/2:
 * Pearson's chi-square over the outcomes of 5 or more expected, and the
 * mean within 4 standard errors. */
Test(ops_random_counts, binomial_follows_its_law)
{
    const double cases[][2] = { { 10, 0.3 }, { 50, 0.15 }, { 100, 0.2 }, { 1000, 0.7 },
                                { 30, 0.9 }, { 5, 0.5 } };
    for (size_t k = 0; k < 6; k++) {
        double n = cases[k][0], p = cases[k][1];
        draw_case c = { false, WEFT_F64, 1, { N_BINOMIAL, 0 }, false };
        weft_tensor *args[3] = { seed_of(40 + (int64_t)k), test_tensor(WEFT_F64, 0, NULL, &n),
                                 test_tensor(WEFT_F64, 0, NULL, &p) }, *out = NULL;
        cr_assert_eq(op_call(rts[1], binomial_body, &c, args, 3, &out, 1, true), 0, "%s",
                     weft_errmsg());
        const double *v = weft_tensor_data(out);
        double m = mean_of(v, N_BINOMIAL);
        cr_assert(fabs(m - n * p) <= 4 * sqrt(n * p * (1 - p) / N_BINOMIAL), "n %g p %g: mean %g",
                  n, p, m);
        int64_t *count = calloc((size_t)n + 1, sizeof *count);
        cr_assert_not_null(count);
        for (int64_t i = 0; i < N_BINOMIAL; i++) {
            cr_assert(v[i] >= 0 && v[i] <= n && v[i] == floor(v[i]), "n %g p %g: draw %g", n, p,
                      v[i]);
            count[(int64_t)v[i]]++;
        }
        double chi2 = 0;
        int bins = 0;
        for (int64_t j = 0; j <= (int64_t)n; j++) {
            int sign;
            double lp = lgamma_r(n + 1, &sign) - lgamma_r((double)j + 1, &sign) -
                        lgamma_r(n - (double)j + 1, &sign) + (double)j * log(p) +
                        (n - (double)j) * log1p(-p);
            double want = N_BINOMIAL * exp(lp);
            if (want < 5)
                continue;
            chi2 += ((double)count[j] - want) * ((double)count[j] - want) / want;
            bins++;
        }
        cr_assert(chi2 <= bins + 5 * sqrt(2.0 * bins), "n %g p %g: chi-square %g over %d "
                  "outcomes", n, p, chi2, bins);
        free(count);
        weft_tensor_release(out);
        for (int a = 0; a < 3; a++)
            weft_tensor_release(args[a]);
    }
}

/* Counts [3] and probabilities [2, 1] broadcast to [2, 3]; the edges of
 * the domain; the same bits everywhere. */
Test(ops_random_counts, binomial_edges_and_the_same_bits_everywhere)
{
    const double counts[3] = { 0, 40, 7 }, probs[2] = { 0.25, 0.8 };
    weft_tensor *args[3] = { seed_of(9), test_tensor(WEFT_I32, 1, (const int64_t[]){ 3 }, counts),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 1 }, probs) };
    draw_case c = { false, WEFT_I64, 2, { 2, 3 }, false };
    weft_tensor *y;
    op_results_everywhere(binomial_body, &c, args, 3, &y, 1, "binomial");
    test_assert_shape(y, WEFT_I64, 2, (const int64_t[]){ 2, 3 }, "binomial");
    for (int i = 0; i < 6; i++) {
        double v = test_element(y, i), n = counts[i % 3];
        cr_expect(v >= 0 && v <= n, "element %d: %g of %g", i, v, n);
    }
    cr_expect_eq(test_element(y, 0), 0, "no trials, no successes");
    weft_tensor_release(y);
    for (int a = 0; a < 3; a++)
        weft_tensor_release(args[a]);

    const double n5[5] = { 12, 12, 12, -3, 12 }, p5[5] = { 0, 1, NAN, 0.5, 1.5 };
    weft_tensor *edge[3] = { seed_of(3), test_tensor(WEFT_F64, 1, (const int64_t[]){ 5 }, n5),
                             test_tensor(WEFT_F64, 1, (const int64_t[]){ 5 }, p5) };
    draw_case e = { false, WEFT_I32, 1, { 5, 0 }, false };
    op_results_everywhere(binomial_body, &e, edge, 3, &y, 1, "binomial edges");
    const double want[5] = { 0, 12, -1, 0, 12 };
    for (int i = 0; i < 5; i++)
        cr_expect_eq(test_element(y, i), want[i], "edge %d: %g", i, test_element(y, i));
    weft_tensor_release(y);
    for (int a = 0; a < 3; a++)
        weft_tensor_release(edge[a]);
}

/* Above p = 1/2 an element is n minus its own draw at 1 - p, as in
 * TensorFlow's kernel: the same seed gives mirrored counts, for both
 * methods (n (1 - p) below and above 10). */
Test(ops_random_counts, binomial_mirrors_above_one_half)
{
    const double ns[2] = { 20, 400 };
    for (int k = 0; k < 2; k++) {
        weft_tensor *y[2];
        for (int m = 0; m < 2; m++) {
            double p = m ? 0.8 : 0.2;
            draw_case c = { false, WEFT_F64, 1, { 1000, 0 }, false };
            weft_tensor *args[3] = { seed_of(77), test_tensor(WEFT_F64, 0, NULL, &ns[k]),
                                     test_tensor(WEFT_F64, 0, NULL, &p) };
            cr_assert_eq(op_call(rts[1], binomial_body, &c, args, 3, &y[m], 1, false), 0, "%s",
                         weft_errmsg());
            for (int a = 0; a < 3; a++)
                weft_tensor_release(args[a]);
        }
        for (int64_t i = 0; i < 1000; i++)
            cr_assert_eq(test_element(y[1], i), ns[k] - test_element(y[0], i), "n %g: draw %lld",
                         ns[k], (long long)i);
        weft_tensor_release(y[0]);
        weft_tensor_release(y[1]);
    }
}

static int bad_binomial(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int k = *(const int *)user;
    outs[0] = weft_random_binomial(cx, a[0], k == 0 ? WEFT_BOOL : WEFT_I32, 1,
                                   (const int64_t[]){ 4 }, a[1], a[2]);
    return weft_ctx_status(cx);
}

Test(ops_random_counts, binomial_refused_calls)
{
    weft_tensor *args[3] = { seed_of(1), test_tensor(WEFT_F64, 0, NULL, (const double[]){ 3 }),
                             test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 },
                                         (const double[]){ 0.1, 0.2, 0.3 }) };
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_random_binomial: dtype bool is not i32, i64, f32 or f64" },
        { 1, WEFT_ESHAPE, "weft_random_binomial: probs f64[3] does not broadcast" },
    };
    op_expect_errors(rt, bad_binomial, cases, 2, args, 3);
    for (int a = 0; a < 3; a++)
        weft_tensor_release(args[a]);
}
