/* Candidate sampling and the sampled losses: the log-uniform and uniform
 * laws' frequencies over many draws, unique draws distinct, the expected counts
 * against TensorFlow's formulas, a seed's draws the same eagerly and
 * traced; nce_loss and sampled_softmax_loss against the same logits
 * written here from the drawn classes (with and without the accidental
 * hits removed, with and without biases, f32 and f64); their gradients
 * for the weights, biases and inputs against central differences; the
 * refused calls. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad_check.h"

TestSuite(ops_sampled, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct sampler_case {
    int64_t num_true, num_sampled, range;
    bool unique, uniform;
} sampler_case;

static int sampler_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const sampler_case *c = user;
    if (c->uniform)
        return weft_uniform_candidate_sampler(cx, a[0], c->num_true, c->num_sampled, c->unique,
                                              c->range, a[1], outs);
    return weft_log_uniform_candidate_sampler(cx, a[0], c->num_true, c->num_sampled, c->unique,
                                              c->range, a[1], outs);
}

static double law(int64_t k, int64_t range)
{
    return log((k + 2.0) / (k + 1.0)) / log1p((double)range);
}

Test(ops_sampled, draws_follow_the_log_uniform_law)
{
    const double classes[4] = { 0, 3, 9, 2 }, seed = 12;
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 2 }, classes),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    sampler_case c = { 2, 20000, 10, false, false };
    weft_tensor *outs[3];
    op_results_everywhere(sampler_body, &c, args, 2, outs, 3, "sampler");
    test_assert_shape(outs[0], WEFT_I64, 1, (const int64_t[]){ 20000 }, "sampled");
    test_assert_shape(outs[1], WEFT_F32, 2, (const int64_t[]){ 2, 2 }, "true counts");
    test_assert_shape(outs[2], WEFT_F32, 1, (const int64_t[]){ 20000 }, "sampled counts");
    int count[10] = { 0 };
    for (int i = 0; i < 20000; i++) {
        double k = test_element(outs[0], i);
        cr_assert(k >= 0 && k < 10, "draw %d is %g", i, k);
        count[(int)k]++;
        cr_assert_eq(test_element(outs[2], i), (float)((float)law((int64_t)k, 10) * 20000.0f),
                     "draw %d's expected count", i);
    }
    for (int k = 0; k < 10; k++)   /* 5 standard deviations at most */
        cr_assert(fabs(count[k] / 20000.0 - law(k, 10)) < 5 * sqrt(law(k, 10) / 20000.0),
                  "class %d drawn %d times", k, count[k]);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(test_element(outs[1], i),
                     (float)((float)law((int64_t)classes[i], 10) * 20000.0f), "true %d", i);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_sampled, unique_draws_and_their_expected_counts)
{
    /* 8 distinct of 10 classes: repeats are all but certain, so each
     * count is 1 - (1 - p)^tries for one number of tries, the same for
     * every class; all 10 of 10 take every class once. */
    const double classes[3] = { 0, 5, 9 }, seed = 4;
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 2, (const int64_t[]){ 3, 1 }, classes),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    for (int64_t want = 8; want <= 10; want += 2) {
        sampler_case c = { 1, want, 10, true, false };
        weft_tensor *outs[3];
        op_results_everywhere(sampler_body, &c, args, 2, outs, 3, "sampler");
        bool seen[10] = { false };
        double tries = -1;
        for (int i = 0; i < want; i++) {
            int k = (int)test_element(outs[0], i);
            cr_assert(k >= 0 && k < 10 && !seen[k], "draw %d: class %d again", i, k);
            seen[k] = true;
            double p = (float)law(k, 10), e = test_element(outs[2], i);
            double t = log1p(-e) / log1p(-p);   /* the tries this count implies */
            if (tries < 0)
                tries = round(t);
            cr_assert(tries > (double)want && fabs(t - tries) < 1e-3 * tries,
                      "class %d's count %g implies %g tries, not %g", k, e, t, tries);
        }
        for (int i = 0; i < 3; i++) {
            double p = (float)law((int64_t)classes[i], 10);
            double want_count = -expm1(tries * log1p(-p));
            cr_assert(fabs(test_element(outs[1], i) - want_count) < 1e-6,
                      "true class %g's count %g, not %g", classes[i], test_element(outs[1], i),
                      want_count);
        }
        for (int i = 0; i < 3; i++)
            weft_tensor_release(outs[i]);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_sampled, uniform_draws_and_counts)
{
    /* 7000 draws over 7 classes: each within 5 standard deviations of
     * 1000, every expected count 1000; unique, all 7 once each and a
     * count of 1 - (6 / 7)^tries, the same for all. */
    const double classes[2] = { 6, 0 }, seed = 3;
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, (const int64_t[]){ 1, 2 }, classes),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    sampler_case plain = { 2, 7000, 7, false, true }, unique = { 2, 7, 7, true, true };
    weft_tensor *outs[3];
    op_results_everywhere(sampler_body, &plain, args, 2, outs, 3, "uniform sampler");
    int count[7] = { 0 };
    for (int i = 0; i < 7000; i++) {
        double k = test_element(outs[0], i);
        cr_assert(k >= 0 && k < 7, "draw %d is %g", i, k);
        count[(int)k]++;
        cr_assert_eq(test_element(outs[2], i), (float)((float)(1.0 / 7) * 7000.0f));
    }
    for (int k = 0; k < 7; k++)
        cr_assert(abs(count[k] - 1000) < 5 * 30, "class %d drawn %d times", k, count[k]);
    cr_assert_eq(test_element(outs[1], 1), test_element(outs[2], 0));
    for (int i = 0; i < 3; i++)
        weft_tensor_release(outs[i]);
    op_results_everywhere(sampler_body, &unique, args, 2, outs, 3, "uniform sampler");
    bool seen[7] = { false };
    for (int i = 0; i < 7; i++) {
        int k = (int)test_element(outs[0], i);
        cr_assert(!seen[k], "class %d twice", k);
        seen[k] = true;
        cr_assert_eq(test_element(outs[2], i), test_element(outs[2], 0));
    }
    double e = test_element(outs[2], 0), tries = log1p(-e) / log1p(-(double)(float)(1.0 / 7));
    cr_assert(tries > 7 && fabs(tries - round(tries)) < 1e-3 * tries, "%g tries", tries);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- The losses ---------------------------------------------------------- */

enum { LB = 3, LD = 4, LC = 12, LT = 2, LS = 5 };

typedef struct loss_case {
    bool softmax, remove_hits, biases;
} loss_case;

/* a: weights, biases, inputs, labels, seed.  outs: the loss, then the
 * sampler's results for the same seed. */
static int loss_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const loss_case *c = user;
    weft_value *b = c->biases ? a[1] : NULL;
    outs[0] = c->softmax ? weft_sampled_softmax_loss(cx, a[0], b, a[3], a[2], LS, LC, LT,
                                                     c->remove_hits, a[4])
                         : weft_nce_loss(cx, a[0], b, a[3], a[2], LS, LC, LT, c->remove_hits,
                                         a[4]);
    return weft_log_uniform_candidate_sampler(cx, a[3], LT, LS, true, LC, a[4], outs + 1);
}

static double log_sigmoid_ce(double z, double x)   /* TensorFlow's stable form */
{
    return fmax(x, 0) - x * z + log1p(exp(-fabs(x)));
}

Test(ops_sampled, losses_against_logits_written_here)
{
    double w[LC * LD], bias[LC], x[LB * LD];
    uint64_t s = 8;
    for (int i = 0; i < LC * LD; i++)
        w[i] = op_uniform(&s);
    for (int i = 0; i < LC; i++)
        bias[i] = 0.5 * op_uniform(&s);
    for (int i = 0; i < LB * LD; i++)
        x[i] = op_uniform(&s);
    /* Frequent classes as labels, so some sampled ones hit them. */
    const double labels[LB * LT] = { 0, 1, 2, 0, 1, 3 }, seed = 31;
    for (int dt = 0; dt < 2; dt++)
        for (int mode = 0; mode < 8; mode++) {
            weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
            loss_case c = { mode & 1, (mode & 2) != 0, (mode & 4) != 0 };
            weft_tensor *args[5] = { test_tensor(t, 2, (const int64_t[]){ LC, LD }, w),
                                     test_tensor(t, 1, (const int64_t[]){ LC }, bias),
                                     test_tensor(t, 2, (const int64_t[]){ LB, LD }, x),
                                     test_tensor(WEFT_I64, 2, (const int64_t[]){ LB, LT }, labels),
                                     test_tensor(WEFT_I64, 0, NULL, &seed) };
            weft_tensor *outs[4];
            op_results_everywhere(loss_body, &c, args, 5, outs, 4, "sampled loss");
            test_assert_shape(outs[0], t, 1, (const int64_t[]){ LB }, "loss");
            int hits = 0;
            for (int r = 0; r < LB; r++) {
                double logit[LT + LS], target[LT + LS];
                for (int k = 0; k < LT + LS; k++) {
                    bool is_true = k < LT;
                    int cls = is_true ? (int)labels[r * LT + k]
                                      : (int)test_element(outs[1], k - LT);
                    double v = c.biases ? (dt ? bias[cls] : (float)bias[cls]) : 0;
                    for (int d = 0; d < LD; d++)
                        v += (dt ? x[r * LD + d] : (float)x[r * LD + d]) *
                             (dt ? w[cls * LD + d] : (float)w[cls * LD + d]);
                    double count = is_true ? test_element(outs[2], r * LT + k)
                                           : test_element(outs[3], k - LT);
                    bool hit = !is_true && (cls == (int)labels[r * LT] ||
                                            cls == (int)labels[r * LT + 1]);
                    hits += hit;
                    if (hit && c.remove_hits)
                        v -= FLT_MAX;
                    logit[k] = v - log(count);
                    target[k] = is_true ? 1.0 / LT : 0;
                }
                double want = 0;
                if (c.softmax) {
                    double top = -INFINITY, sum = 0;
                    for (int k = 0; k < LT + LS; k++)
                        top = fmax(top, logit[k]);
                    for (int k = 0; k < LT + LS; k++)
                        sum += exp(logit[k] - top);
                    for (int k = 0; k < LT + LS; k++)
                        want -= target[k] * (logit[k] - top - log(sum));
                } else {
                    for (int k = 0; k < LT + LS; k++)
                        want += log_sigmoid_ce(target[k], logit[k]);
                }
                double got = test_element(outs[0], r);
                cr_assert(fabs(got - want) <= (dt ? 1e-12 : 2e-5) * (1 + fabs(want)),
                          "dtype %d mode %d row %d: %.12g, not %.12g", dt, mode, r, got, want);
            }
            cr_assert(hits > 0, "some sampled class hits a label");
            for (int i = 0; i < 4; i++)
                weft_tensor_release(outs[i]);
            for (int i = 0; i < 5; i++)
                weft_tensor_release(args[i]);
        }
}

typedef struct grad_loss {
    bool softmax;
} grad_loss;

/* a: weights, biases, inputs (the differentiated ones). */
static int grad_loss_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const grad_loss *g = user;
    weft_tensor *lt = test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 1 }, (const double[]){ 1, 4 });
    weft_value *labels = weft_const_tensor(cx, lt);
    weft_tensor_release(lt);
    weft_value *seed = weft_const_i64(cx, 77);
    outs[0] = g->softmax ? weft_sampled_softmax_loss(cx, a[0], a[1], labels, a[2], 3, 6, 1, true,
                                                     seed)
                         : weft_nce_loss(cx, a[0], a[1], labels, a[2], 3, 6, 1, false, seed);
    return weft_ctx_status(cx);
}

Test(ops_sampled, gradients_match_differences)
{
    double w[6 * 3], b[6], x[2 * 3];
    for (int i = 0; i < 18; i++)
        w[i] = 0.6 * sin(1.3 * i + 0.4);
    for (int i = 0; i < 6; i++)
        b[i] = 0.2 * cos(0.9 * i);
    for (int i = 0; i < 6; i++)
        x[i] = 0.8 * cos(0.5 * i + 1);
    const grad_arg args[3] = { { 2, { 6, 3 }, w }, { 1, { 6 }, b }, { 2, { 2, 3 }, x } };
    for (int k = 0; k < 2; k++) {
        grad_loss g = { k == 1 };
        grad_case c = { grad_loss_body, &g, 3, 3 };
        expect_gradients(&c, args, k ? "sampled softmax" : "nce");
    }
}

enum { BAD_COUNTS, TOO_MANY, FLOAT_CLASSES, CLASS_SHAPE, MIXED_DTYPES, BATCHES, INPUT_RANK };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: weights f32[4,2], inputs f32[3,2], labels i64[3,1], seed, f64[3,2]. */
    weft_value *o[3];
    int rc = 0;
    switch (*(const int *)user) {
    case BAD_COUNTS: rc = weft_log_uniform_candidate_sampler(cx, a[2], 1, 0, false, 4, a[3], o);
        break;
    case TOO_MANY: rc = weft_log_uniform_candidate_sampler(cx, a[2], 1, 5, true, 4, a[3], o);
        break;
    case FLOAT_CLASSES:
        rc = weft_log_uniform_candidate_sampler(cx, a[1], 1, 2, true, 4, a[3], o);
        break;
    case CLASS_SHAPE: rc = weft_log_uniform_candidate_sampler(cx, a[2], 2, 2, true, 4, a[3], o);
        break;
    case MIXED_DTYPES:
        o[0] = weft_nce_loss(cx, a[0], NULL, a[2], a[4], 2, 4, 1, false, a[3]);
        break;
    case BATCHES: o[0] = weft_sampled_softmax_loss(cx, a[0], NULL, a[2], a[0], 2, 4, 1, true, a[3]);
        break;
    default:
        o[0] = weft_sampled_softmax_loss(cx, a[0], NULL, a[2], weft_expand_dims(cx, a[1], 0), 2, 4,
                                         1, true, a[3]);
        break;
    }
    outs[0] = rc == 0 ? o[0] : NULL;
    return rc ? rc : weft_ctx_status(cx);
}

Test(ops_sampled, refused_calls_name_the_op)
{
    const double v[8] = { 0 }, seed = 1;
    weft_tensor *args[5] = { test_tensor(WEFT_F32, 2, (const int64_t[]){ 4, 2 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 2 }, v),
                             test_tensor(WEFT_I64, 2, (const int64_t[]){ 3, 1 }, v),
                             test_tensor(WEFT_I64, 0, NULL, &seed),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 3, 2 }, v) };
    const op_error_case cases[] = {
        { BAD_COUNTS, WEFT_EINVAL, "weft_log_uniform_candidate_sampler: num_true 1, num_sampled "
                                   "0 or range_max 4 is not 1 or more" },
        { TOO_MANY, WEFT_EINVAL, "more unique classes are asked for than there are" },
        { FLOAT_CLASSES, WEFT_EDTYPE, "weft_log_uniform_candidate_sampler: the true classes "
                                      "f32[3,2] are not i32 or i64" },
        { CLASS_SHAPE, WEFT_ESHAPE, "the true classes i64[3,1] are not [batch, 2]" },
        { MIXED_DTYPES, WEFT_EDTYPE, "weft_nce_loss: the weights f32[4,2], inputs f64[3,2] and "
                                     "biases are not all f32 or all f64" },
        { BATCHES, WEFT_ESHAPE, "weft_sampled_softmax_loss: the labels i64[3,1] and inputs "
                                "f32[4,2] disagree on the batch" },
        { INPUT_RANK, WEFT_ESHAPE, "weft_sampled_softmax_loss: the weights f32[4,2] and inputs "
                                   "f32[1,3,2] are not [classes, dim] and [batch, dim]" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 5);
    for (int i = 0; i < 5; i++)
        weft_tensor_release(args[i]);
}
