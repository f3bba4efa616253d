/* fractional_max_pool and fractional_avg_pool: the pooling sequences (from
 * 0 to the dim, regions k or k + 1 long; random ones with in % out long
 * regions, each place long as often as the others over many seeds;
 * pseudo-random ones Graham's ceil(alpha (i + u)) - 1 for one u in
 * TensorFlow's bound);
 * the pooled values against a loop over those regions for both modes,
 * overlapping or not, in four dtypes; a ratio that divides the dims as
 * max_pool2d; NaN; the same bits eagerly and traced on 1, 2 and 4
 * workers; one trace for any batch and seed; gradients against central
 * differences (second ones for the average) and the maximum's tie rule;
 * the refused calls. */
#include <math.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_fractional_pool, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct frac_case {
    bool avg, pseudo_random, overlapping;
    double ratio[4];
} frac_case;

/* a[0] the value, a[1] the seed. */
static int frac_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const frac_case *f = user;
    return (f->avg ? weft_fractional_avg_pool : weft_fractional_max_pool)(
        cx, a[0], f->ratio, f->pseudo_random, f->overlapping, a[1], outs);
}

/* f on x with the constant seed 11, for the bodies whose only float
 * argument is the value (those that differentiate): its outputs into o. */
static int frac_seeded(weft_ctx *cx, weft_value *x, void *user, weft_value **o)
{
    weft_value *in[2] = { x, weft_const(cx, WEFT_I64, 11) };
    return frac_body(cx, in, o, user);
}

/* seq (out + 1 entries) runs from 0 to size in steps of k or k + 1, k =
 * size / out; returns how many steps are k + 1. */
static int64_t check_sequence(const weft_tensor *seq, int64_t size, int64_t out, const char *what)
{
    test_assert_shape(seq, WEFT_I64, 1, (const int64_t[]){ out + 1 }, what);
    const int64_t *s = weft_tensor_data(seq), k = size / out;
    cr_assert_eq(s[0], 0, "%s", what);
    cr_assert_eq(s[out], size, "%s", what);
    int64_t longer = 0;
    for (int64_t i = 0; i < out; i++) {
        int64_t d = s[i + 1] - s[i];
        cr_assert(d == k || d == k + 1, "%s: region %lld is %lld long, k %lld", what,
                  (long long)i, (long long)d, (long long)k);
        longer += d == k + 1;
    }
    return longer;
}

/* Whether some u in [0, max_u) gives seq[i] = ceil(alpha (i + u)) - 1 for
 * 0 < i < out: the intersection of each i's interval of u. */
static bool graham_sequence(const int64_t *seq, int64_t size, int64_t out)
{
    double alpha = (double)size / (double)out;
    int64_t k = size / out;
    double lo = 0, hi = fmin((double)(k + 2) / alpha - 1,
                             (double)(size + 1 - k) / alpha - (double)(out - 1));
    for (int64_t i = 1; i < out; i++) {
        /* seq[i] < alpha (i + u) <= seq[i] + 1 */
        lo = fmax(lo, (double)seq[i] / alpha - (double)i);
        hi = fmin(hi, (double)(seq[i] + 1) / alpha - (double)i);
    }
    return lo < hi + 1e-12;
}

/* The last element of region i, as TensorFlow cuts it. */
static int64_t region_last(const int64_t *seq, int64_t i, int64_t size, bool overlapping)
{
    int64_t end = overlapping ? seq[i + 1] : seq[i + 1] - 1;
    return end < size - 1 ? end : size - 1;
}

/* The pooled element (b, i, j, ch) of x [.., h, w, c] as TensorFlow's
 * kernels compute it in the dtype dt. */
static double reference(const frac_case *f, weft_dtype dt, const double *x, const int64_t *dims,
                        const int64_t *rows, const int64_t *cols, int64_t b, int64_t i,
                        int64_t j, int64_t ch)
{
    int64_t h = dims[1], w = dims[2], c = dims[3];
    int64_t y1 = region_last(rows, i, h, f->overlapping);
    int64_t x1 = region_last(cols, j, w, f->overlapping);
    double m = -INFINITY, sum = 0;
    float sum32 = 0;
    int64_t isum = 0, count = 0;
    bool nan = false;
    for (int64_t y = rows[i]; y <= y1; y++)
        for (int64_t xx = cols[j]; xx <= x1; xx++) {
            double v = x[((b * h + y) * w + xx) * c + ch];
            nan |= isnan(v);
            m = fmax(m, v);
            sum += v;
            sum32 += (float)v;
            isum += (int64_t)v;
            count++;
        }
    if (!f->avg)
        return nan ? NAN : m;
    switch (dt) {
    case WEFT_F32: return sum32 / (float)count;
    case WEFT_F64: return sum / (double)count;
    case WEFT_I32: return (double)(int32_t)(isum / count);
    default:       return (double)(isum / count);
    }
}

/* The three outputs of f on x against the sequences' rules and the loop. */
static void expect_pooled(const frac_case *f, weft_dtype dt, const int64_t *dims,
                          const double *x, int64_t seed, const char *what)
{
    weft_tensor *args[2] = { test_tensor(dt, 4, dims, x), NULL }, *outs[3];
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &seed, &args[1]), 0);
    op_results_everywhere(frac_body, (void *)f, args, 2, outs, 3, what);
    int64_t oh = (int64_t)floor((double)dims[1] / f->ratio[1]);
    int64_t ow = (int64_t)floor((double)dims[2] / f->ratio[2]);
    test_assert_shape(outs[0], dt, 4, (const int64_t[]){ dims[0], oh, ow, dims[3] }, what);
    int64_t long_rows = check_sequence(outs[1], dims[1], oh, what);
    int64_t long_cols = check_sequence(outs[2], dims[2], ow, what);
    const int64_t *rows = weft_tensor_data(outs[1]), *cols = weft_tensor_data(outs[2]);
    if (f->pseudo_random) {
        cr_assert(graham_sequence(rows, dims[1], oh), "%s: rows", what);
        cr_assert(graham_sequence(cols, dims[2], ow), "%s: columns", what);
    } else {
        cr_assert_eq(long_rows, dims[1] % oh, "%s", what);
        cr_assert_eq(long_cols, dims[2] % ow, "%s", what);
    }
    int64_t at = 0;
    for (int64_t b = 0; b < dims[0]; b++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t ch = 0; ch < dims[3]; ch++, at++) {
                    double want = reference(f, dt, x, dims, rows, cols, b, i, j, ch);
                    double got = test_element(outs[0], at);
                    cr_assert((got == want && signbit(got) == signbit(want)) ||
                                  (isnan(got) && isnan(want)),
                              "%s: [%lld,%lld,%lld,%lld] is %.9g, not %.9g", what, (long long)b,
                              (long long)i, (long long)j, (long long)ch, got, want);
                }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(outs[k]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

enum { XB = 2, XH = 11, XW = 9, XC = 3, XN = XB * XH * XW * XC };

Test(ops_fractional_pool, values_against_a_loop)
{
    double x[XN];
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < XN; i++)
        x[i] = round(op_uniform(&s) * 1000);   /* integers: every dtype holds them */
    const int64_t dims[4] = { XB, XH, XW, XC };
    const weft_dtype dts[4] = { WEFT_F32, WEFT_F64, WEFT_I32, WEFT_I64 };
    const double ratios[3][2] = { { 1.44, 1.73 }, { 2.5, 1.2 }, { 1, 4.5 } };
    int n = 0;
    for (int m = 0; m < 8; m++)
        for (int r = 0; r < 3; r++)
            for (int d = 0; d < 4; d++) {
                frac_case f = { m & 1, m & 2, m & 4, { 1, ratios[r][0], ratios[r][1], 1 } };
                char what[96];
                snprintf(what, sizeof what, "%s%s%s ratio %g x %g %s", f.avg ? "avg" : "max",
                         f.pseudo_random ? " pseudo-random" : "",
                         f.overlapping ? " overlapping" : "", f.ratio[1], f.ratio[2],
                         weft_dtype_name(dts[d]));
                expect_pooled(&f, dts[d], dims, x, 17 + n++, what);
            }
}

/* Sums that round: f32 in TensorFlow's order, not f64's; regions of -0.0
 * average to 0.0, the sum starting from 0. */
Test(ops_fractional_pool, averages_round_in_the_dtype)
{
    double x[XN];
    uint64_t s = 12345;
    for (int i = 0; i < XN; i++)
        x[i] = op_uniform(&s) * (i % 5 == 0 ? 1e6 : 1);
    for (int i = 0; i < XW * XC * 3; i++)   /* the first rows -0.0: TensorFlow's sum is 0.0 */
        x[i] = -0.0;
    const int64_t dims[4] = { XB, XH, XW, XC };
    for (int m = 0; m < 4; m++) {
        frac_case f = { true, m & 1, m & 2, { 1, 1.6, 1.3, 1 } };
        expect_pooled(&f, WEFT_F32, dims, x, 5 + m, "f32 averages");
        expect_pooled(&f, WEFT_F64, dims, x, 5 + m, "f64 averages");
    }
}

/* A NaN is its region's maximum and its average. */
Test(ops_fractional_pool, nan)
{
    double x[XN];
    for (int i = 0; i < XN; i++)
        x[i] = i % 7;
    x[40] = NAN;
    x[XN - 1] = NAN;
    const int64_t dims[4] = { XB, XH, XW, XC };
    for (int m = 0; m < 4; m++) {
        frac_case f = { m & 1, false, m & 2, { 1, 1.5, 1.5, 1 } };
        expect_pooled(&f, WEFT_F32, dims, x, 3, "NaN");
    }
}

/* A ratio that divides the dims pools as max_pool2d and avg_pool2d with
 * that window and stride, either law. */
static int pool2d_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const frac_case *f = user;
    const int64_t k[2] = { 2, 3 };
    weft_value *frac[3];
    if (frac_body(cx, a, frac, user) < 0)
        return weft_ctx_status(cx);
    weft_value *plain = (f->avg ? weft_avg_pool2d : weft_max_pool2d)(cx, a[0], k, k,
                                                                      WEFT_PADDING_VALID);
    const int all[4] = { 0, 1, 2, 3 };
    outs[0] = weft_reduce(cx, WEFT_R_MAX, weft_abs(cx, weft_sub(cx, frac[0], plain)), all, 4,
                          false);
    return weft_ctx_status(cx);
}

Test(ops_fractional_pool, whole_ratios_are_the_plain_pools)
{
    const int64_t dims[4] = { 2, 8, 9, 3 };
    double x[2 * 8 * 9 * 3];
    uint64_t s = 99;
    for (int i = 0; i < 2 * 8 * 9 * 3; i++)
        x[i] = op_uniform(&s);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 4, dims, x), NULL }, *out;
    int64_t seed = 4;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &seed, &args[1]), 0);
    for (int m = 0; m < 4; m++) {
        frac_case f = { m & 1, m & 2, false, { 1, 2, 3, 1 } };
        op_results_everywhere(pool2d_body, &f, args, 2, &out, 1, "whole ratios");
        cr_assert_eq(test_element(out, 0), 0, "%s %s", f.avg ? "avg" : "max",
                     f.pseudo_random ? "pseudo-random" : "random");
        weft_tensor_release(out);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* The sequences: in 7 rows (and 7 columns) cut into 5, over 400 seeds
 * and batches of 1 to 3 in one traced function.  Random ones have two
 * long regions, and each place is long about 2/5 of the time (within
 * five standard deviations); pseudo-random ones are Graham's.  Either law
 * draws new sequences for a new seed and draws the rows apart from the
 * columns.  outs[0]: the rows' sequence, then the columns'. */
static int sequences_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    if (frac_body(cx, a, o, user) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_concat(cx, &o[1], 2, 0);
    return weft_ctx_status(cx);
}

static void expect_sequences_over_seeds(bool pseudo_random)
{
    frac_case f = { false, pseudo_random, false, { 1, 1.4, 1.4, 1 } };
    const weft_spec sig[2] = { { .dtype = WEFT_F32, .rank = 4, .dims = { -1, 7, 7, 1 } },
                               { .dtype = WEFT_I64, .rank = 0 } };
    weft_function *fn = op_signature_function(rt, sequences_body, &f, sig, 2);
    int64_t counts[10] = { 0 }, first[12];
    bool changed = false, apart = false;
    for (int64_t seed = 0; seed < 400; seed++) {
        int64_t dims[4] = { 1 + seed % 3, 7, 7, 1 };
        double x[3 * 7 * 7] = { 0 };
        weft_tensor *v = test_tensor(WEFT_F32, 4, dims, x), *sd, *out = NULL;
        cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &seed, &sd), 0);
        weft_arg a[2] = { weft_arg_tensor(v), weft_arg_tensor(sd) };
        cr_assert_eq(weft_function_call(fn, a, 2, &out, 1), 0, "%s", weft_errmsg());
        const int64_t *s = weft_tensor_data(out);
        for (int d = 0; d < 2; d++) {
            const int64_t *q = s + 6 * d;
            cr_assert(pseudo_random ? graham_sequence(q, 7, 5)
                                    : q[0] == 0 && q[5] == 7);
            for (int i = 0; i < 5; i++) {
                cr_assert(q[i + 1] - q[i] == 1 || q[i + 1] - q[i] == 2, "seed %lld",
                          (long long)seed);
                counts[5 * d + i] += q[i + 1] - q[i] == 2;
            }
        }
        for (int i = 0; i < 12; i++) {
            if (seed == 0)
                first[i] = s[i];
            changed |= s[i] != first[i];
            apart |= s[i % 6] != s[6 + i % 6];
        }
        weft_tensor_release(out);
        weft_tensor_release(v);
        weft_tensor_release(sd);
    }
    cr_assert(changed, "every seed drew the first seed's sequences");
    cr_assert(apart, "the rows' sequence was the columns' for every seed");
    double sd = sqrt(400 * 0.4 * 0.6);
    for (int i = 0; pseudo_random == false && i < 10; i++)
        cr_assert(fabs((double)counts[i] - 160) <= 5 * sd, "place %d long %lld times of 400", i,
                  (long long)counts[i]);
    op_destroy_traced_once(&fn);
}

Test(ops_fractional_pool, sequences_over_seeds)
{
    expect_sequences_over_seeds(false);
    expect_sequences_over_seeds(true);
}

/* Gradients: of sum(pool(x)^2) (a different g for each output) against
 * central differences, for both modes and both laws, overlapping or not;
 * distinct values, so no ties. */
static int squared_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    if (frac_seeded(cx, a[0], user, o) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_square(cx, o[0]);
    return weft_ctx_status(cx);
}

Test(ops_fractional_pool, gradients)
{
    double x[126];
    uint64_t s = 777;
    for (int i = 0; i < 126; i++)
        x[i] = op_uniform(&s);
    grad_arg arg = { 4, { 1, 7, 6, 3 }, x };
    for (int m = 0; m < 8; m++) {
        frac_case f = { m & 1, m & 2, m & 4, { 1, 1.6, 1.4, 1 } };
        grad_case c = { squared_body, &f, 1, 1 };
        char what[64];
        snprintf(what, sizeof what, "%s%s%s", f.avg ? "avg" : "max",
                 f.pseudo_random ? " pseudo-random" : "", f.overlapping ? " overlapping" : "");
        expect_gradients(&c, &arg, what);
    }
}

/* Second derivatives of the average: the gradient of sum(G(x)^2), G the
 * gradient of sum(avg_pool(x)^2), against central differences (the
 * spread's own rule is the average pool). */
static int gradient_squared_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                 void *user)
{
    weft_value *g;
    if (weft_gradients(cx, squared_body, user, a, 1, 1, NULL, &g) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_square(cx, g);
    return weft_ctx_status(cx);
}

Test(ops_fractional_pool, second_derivatives_of_the_average)
{
    double x[126];
    uint64_t s = 4321;
    for (int i = 0; i < 126; i++)
        x[i] = op_uniform(&s);
    grad_arg arg = { 4, { 1, 7, 6, 3 }, x };
    for (int m = 0; m < 2; m++) {
        frac_case f = { true, false, m, { 1, 1.6, 1.4, 1 } };
        grad_case c = { gradient_squared_body, &f, 1, 1 };
        expect_gradients(&c, &arg, m ? "overlapping" : "apart");
    }
}

/* The average's gradient in f32 as TensorFlow's FractionalAvgPoolGrad
 * computes it: each input element the sum, in f64 and in the regions'
 * row-major order, of g / count over the regions holding it, rounded
 * once.  a[0] the value, a[1] g; outs: the gradient of sum(pool(x) g),
 * the row and the column sequences. */
static int weighted_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    if (frac_seeded(cx, a[0], user, o) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_mul(cx, o[0], a[1]);
    return weft_ctx_status(cx);
}

static int avg_grad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    if (frac_seeded(cx, a[0], user, o) < 0)
        return weft_ctx_status(cx);
    outs[1] = o[1];
    outs[2] = o[2];
    weft_value_release(cx, o[0]);
    return weft_gradients(cx, weighted_body, user, a, 2, 1, NULL, &outs[0]);
}

Test(ops_fractional_pool, average_gradient_in_tensorflow_order)
{
    enum { H = 9, W = 7, C = 3, OH = 6, OW = 4 };
    double x[2 * H * W * C], g[2 * OH * OW * C];
    uint64_t s = 8080;
    for (int i = 0; i < 2 * H * W * C; i++)
        x[i] = op_uniform(&s);
    for (int i = 0; i < 2 * OH * OW * C; i++)
        g[i] = op_uniform(&s) * 3;
    for (int m = 0; m < 2; m++) {
        frac_case f = { true, false, m, { 1, 1.5, 1.5, 1 } };
        weft_tensor *args[2] = { test_tensor(WEFT_F32, 4, (const int64_t[]){ 2, H, W, C }, x),
                                 test_tensor(WEFT_F32, 4, (const int64_t[]){ 2, OH, OW, C },
                                             g) };
        weft_tensor *outs[3];
        op_results_everywhere(avg_grad_body, &f, args, 2, outs, 3, "average's gradient");
        const int64_t *rows = weft_tensor_data(outs[1]), *cols = weft_tensor_data(outs[2]);
        for (int b = 0; b < 2; b++)
            for (int y = 0; y < H; y++)
                for (int xx = 0; xx < W; xx++)
                    for (int ch = 0; ch < C; ch++) {
                        double sum = 0;
                        for (int i = 0; i < OH; i++)
                            for (int j = 0; j < OW; j++) {
                                int64_t y1 = region_last(rows, i, H, m);
                                int64_t x1 = region_last(cols, j, W, m);
                                if (y < rows[i] || y > y1 || xx < cols[j] || xx > x1)
                                    continue;
                                double count = (double)((y1 - rows[i] + 1) * (x1 - cols[j] + 1));
                                sum += (double)(float)g[((b * OH + i) * OW + j) * C + ch] / count;
                            }
                        int at = ((b * H + y) * W + xx) * C + ch;
                        double got = test_element(outs[0], at), want = (float)sum;
                        cr_assert_eq(got, want, "%s: element %d is %.9g, not %.9g",
                                     m ? "overlapping" : "apart", at, got, want);
                    }
        for (int k = 0; k < 3; k++)
            weft_tensor_release(outs[k]);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

/* Ties: the gradient of a maximum goes to the first element of its region
 * (row-major) that holds it, as TensorFlow's FractionalMaxPoolGrad, and
 * to the first NaN of a region that holds one (its maximum).  outs: the
 * gradient of sum(pool(x)), the row and the column sequences. */
static int pooled_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    if (frac_seeded(cx, a[0], user, o) < 0)
        return weft_ctx_status(cx);
    outs[0] = o[0];
    return weft_ctx_status(cx);
}

static int tie_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    if (frac_seeded(cx, a[0], user, o) < 0)
        return weft_ctx_status(cx);
    outs[1] = o[1];
    outs[2] = o[2];
    weft_value_release(cx, o[0]);
    return weft_gradients(cx, pooled_body, user, a, 1, 1, NULL, &outs[0]);
}

Test(ops_fractional_pool, gradient_ties_go_to_the_first)
{
    enum { H = 9, W = 7, C = 2 };
    double x[H * W * C];
    for (int i = 0; i < H * W * C; i++)   /* pairs of equal values along each row */
        x[i] = (double)((i / C / 2) % 3);
    for (int y = 3; y <= 6; y++)   /* a block of NaN in channel 0: some region within it */
        for (int xx = 2; xx <= 5; xx++)
            x[(y * W + xx) * C] = NAN;
    x[7 * W * C + 6 * C + 1] = NAN;
    const int64_t dims[4] = { 1, H, W, C };
    for (int m = 0; m < 2; m++) {
        frac_case f = { false, false, m, { 1, 1.5, 1.5, 1 } };
        weft_tensor *arg = test_tensor(WEFT_F64, 4, dims, x), *outs[3];
        op_results_everywhere(tie_body, &f, &arg, 1, outs, 3, "ties");
        const int64_t *rows = weft_tensor_data(outs[1]), *cols = weft_tensor_data(outs[2]);
        int64_t oh = weft_tensor_dims(outs[1])[0] - 1, ow = weft_tensor_dims(outs[2])[0] - 1;
        double want[H * W * C] = { 0 };
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t ch = 0; ch < C; ch++) {
                    int64_t best = -1;
                    for (int64_t y = rows[i]; y <= region_last(rows, i, H, f.overlapping); y++)
                        for (int64_t xx = cols[j]; xx <= region_last(cols, j, W, f.overlapping);
                             xx++) {
                            int64_t at = (y * W + xx) * C + ch;
                            if (best < 0 || (!isnan(x[best]) && !(x[at] <= x[best])))
                                best = at;
                        }
                    want[best] += 1;
                }
        for (int i = 0; i < H * W * C; i++)
            cr_assert_eq(test_element(outs[0], i), want[i], "%s: element %d",
                         m ? "overlapping" : "apart", i);
        for (int k = 0; k < 3; k++)
            weft_tensor_release(outs[k]);
        weft_tensor_release(arg);
    }
}

/* The refused calls, eagerly and traced. */
static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    double ratio[4] = { 1, 1.5, 1.5, 1 };
    weft_value *value = a[0], *seed = a[1], *o[3];
    switch (which) {
    case 0: return weft_fractional_max_pool(cx, value, NULL, false, false, seed, o);
    case 1: ratio[0] = 2; break;
    case 2: ratio[3] = 0.5; break;
    case 3: ratio[1] = 0.9; break;
    case 4: ratio[2] = NAN; break;
    case 5: ratio[2] = INFINITY; break;
    case 6: ratio[1] = 5.5; break;   /* more than the height of 5 */
    case 7: value = weft_reshape(cx, value, 3, (const int64_t[]){ 1, 5, 12 }); break;
    case 8: value = weft_cast(cx, value, WEFT_BOOL); break;
    case 9: seed = weft_const(cx, WEFT_F32, 1); break;
    case 10: return weft_fractional_avg_pool(cx, value, ratio, false, false, seed, NULL);
    case 11: seed = NULL; break;
    }
    int rc = weft_fractional_avg_pool(cx, value, ratio, false, false, seed, o);
    if (rc == 0)
        outs[0] = o[0];
    return rc;
}

Test(ops_fractional_pool, refused_calls)
{
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_fractional_max_pool: pooling_ratio is NULL" },
        { 1, WEFT_EINVAL, "pooling_ratio[0] 2 and [3] 1 are not 1" },
        { 2, WEFT_EINVAL, "pooling_ratio[0] 1 and [3] 0.5 are not 1" },
        { 3, WEFT_EINVAL, "pooling_ratio[1] 0.9 is not finite and 1 or more" },
        { 4, WEFT_EINVAL, "pooling_ratio[2] nan is not finite" },
        { 5, WEFT_EINVAL, "pooling_ratio[2] inf is not finite" },
        { 6, WEFT_EINVAL, "dim 1 (5) is less than pooling_ratio[1] 5.5" },
        { 7, WEFT_ESHAPE, "weft_fractional_avg_pool: the value f32[1,5,12] is not [batch" },
        { 8, WEFT_EDTYPE, "the value bool[1,5,4,3] is not f32, f64, i32 or i64" },
        { 9, WEFT_EINVAL, "weft_fractional_avg_pool: the seed f32[] is not i32 or i64" },
        { 10, WEFT_EINVAL, "weft_fractional_avg_pool: outs is NULL" },
        { 11, WEFT_EINVAL, "weft_fractional_avg_pool: input 1 is NULL" },
    };
    const int64_t dims[4] = { 1, 5, 4, 3 };
    double x[60] = { 0 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 4, dims, x), NULL };
    int64_t seed = 1;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &seed, &args[1]), 0);
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* A height unknown while tracing cannot size the sequences. */
Test(ops_fractional_pool, unknown_height_is_refused)
{
    frac_case f = { false, false, false, { 1, 1.5, 1.5, 1 } };
    const weft_spec sig[2] = { { .dtype = WEFT_F32, .rank = 4, .dims = { 1, -1, 4, 1 } },
                               { .dtype = WEFT_I64, .rank = 0 } };
    weft_function *fn = op_signature_function(rt, sequences_body, &f, sig, 2);
    double x[20] = { 0 };
    int64_t seed = 1;
    weft_tensor *v = test_tensor(WEFT_F32, 4, (const int64_t[]){ 1, 5, 4, 1 }, x), *sd, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &seed, &sd), 0);
    weft_arg a[2] = { weft_arg_tensor(v), weft_arg_tensor(sd) };
    cr_assert_eq(weft_function_call(fn, a, 2, &out, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "height and width known"), "%s", weft_errmsg());
    cr_assert_null(out);
    weft_tensor_release(v);
    weft_tensor_release(sd);
    weft_function_destroy(&fn);
}
