/* fixed_unigram_candidate_sampler and all_candidate_sampler: the unigram
 * law's frequencies over many draws (reserved and weightless classes
 * never drawn, distortion applied), unique draws distinct with expected
 * counts that imply one number of tries, the expected counts against
 * TensorFlow's formulas (0 outside the range), a seed's draws the same
 * eagerly and traced on 1, 2 and 4 workers; every class once from the
 * all sampler; the refused calls. */
#include <math.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_unigram_sampler, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct unigram_case {
    int64_t num_true, num_sampled, range, reserved, n;
    bool unique;
    double distortion;
    const double *unigrams;
} unigram_case;

static int unigram_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const unigram_case *c = user;
    return weft_fixed_unigram_candidate_sampler(cx, a[0], c->num_true, c->num_sampled,
                                                c->unique, c->range, c->distortion, c->reserved,
                                                c->unigrams, c->n, a[1], outs);
}

/* Class k's probability as TensorFlow's sampler gives it (f32), 0 outside
 * the range and for the reserved classes. */
static double probability(const unigram_case *c, double k)
{
    if (k < (double)c->reserved || k >= (double)c->range)
        return 0;
    double total = 0;
    for (int64_t i = 0; i < c->n; i++)
        total += powf((float)c->unigrams[i], (float)c->distortion);
    return (float)(powf((float)c->unigrams[(int64_t)k - c->reserved], (float)c->distortion) /
                   total);
}

/* 30000 draws (not unique): each class within five standard deviations
 * of its probability, a class without weight never, and each expected
 * count p num_sampled in f32, for the sampled and the true classes. */
static void expect_law(const unigram_case *c, const char *what)
{
    const double classes[6] = { 3, 6, 100, -1, 0, 2 }, seed = 9;
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, (const int64_t[]){ 3, 2 }, classes),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    weft_tensor *outs[3];
    op_results_everywhere(unigram_body, (void *)c, args, 2, outs, 3, what);
    test_assert_shape(outs[0], WEFT_I64, 1, &c->num_sampled, what);
    test_assert_shape(outs[1], WEFT_F32, 2, (const int64_t[]){ 3, 2 }, what);
    test_assert_shape(outs[2], WEFT_F32, 1, &c->num_sampled, what);
    int64_t count[16] = { 0 };
    float ns = (float)c->num_sampled;
    for (int64_t i = 0; i < c->num_sampled; i++) {
        double k = test_element(outs[0], i);
        cr_assert(k >= 0 && k < (double)c->range, "%s: draw %lld is %g", what, (long long)i, k);
        count[(int64_t)k]++;
        cr_assert_eq(test_element(outs[2], i), (float)((float)probability(c, k) * ns),
                     "%s: draw %lld's expected count", what, (long long)i);
    }
    for (int64_t k = 0; k < c->range; k++) {
        double p = probability(c, (double)k), n = (double)c->num_sampled;
        cr_assert(fabs((double)count[k] - p * n) <= 5 * sqrt(n * p * (1 - p)) + (p == 0 ? 0 : 1),
                  "%s: class %lld drawn %lld times, p %g", what, (long long)k,
                  (long long)count[k], p);
    }
    for (int i = 0; i < 6; i++)
        cr_assert_eq(test_element(outs[1], i), (float)((float)probability(c, classes[i]) * ns),
                     "%s: true class %g", what, classes[i]);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_unigram_sampler, draws_follow_the_weights)
{
    const double unigrams[5] = { 1, 2, 0, 3.5, 4 };
    unigram_case plain = { 2, 30000, 7, 2, 5, false, 1.0, unigrams };
    expect_law(&plain, "reserved 2");
    const double squares[6] = { 1, 4, 9, 16, 0, 25 };
    unigram_case root = { 2, 30000, 6, 0, 6, false, 0.5, squares };
    expect_law(&root, "distortion 0.5");
    const double thirds[7] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7 };
    unigram_case cubed = { 2, 30000, 7, 0, 7, false, 3, thirds };
    expect_law(&cubed, "distortion 3");
}

/* Unique: all five classes of weight from six, once each, the weightless
 * never; each count 1 - (1 - p)^tries for one number of tries. */
Test(ops_unigram_sampler, unique_draws_and_their_counts)
{
    const double squares[6] = { 1, 4, 9, 16, 0, 25 }, classes[2] = { 5, 4 }, seed = 77;
    unigram_case c = { 1, 5, 6, 0, 6, true, 0.5, squares };
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 1 }, classes),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    weft_tensor *outs[3];
    op_results_everywhere(unigram_body, &c, args, 2, outs, 3, "unique");
    bool seen[6] = { false };
    double tries = -1;
    for (int i = 0; i < 5; i++) {
        int k = (int)test_element(outs[0], i);
        cr_assert(k >= 0 && k < 6 && k != 4 && !seen[k], "draw %d: class %d", i, k);
        seen[k] = true;
        double p = probability(&c, k), e = test_element(outs[2], i);
        double t = log1p(-e) / log1p(-p);
        if (tries < 0)
            tries = round(t);
        cr_assert(tries >= 5 && fabs(t - tries) < 1e-3 * tries,
                  "class %d's count %g implies %g tries, not %g", k, e, t, tries);
    }
    double want = -expm1(tries * log1p(-probability(&c, 5)));
    cr_assert(fabs(test_element(outs[1], 0) - want) < 1e-6, "true class 5: %g, not %g",
              test_element(outs[1], 0), want);
    cr_assert_eq(test_element(outs[1], 1), 0, "class 4 has no weight");
    for (int i = 0; i < 3; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int all_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int64_t *num_sampled = user;
    return weft_all_candidate_sampler(cx, a[0], 3, *num_sampled, false, outs);
}

Test(ops_unigram_sampler, all_sampler_gives_every_class_once)
{
    const double classes[6] = { 1, 2, 3, 7, 8, 9 };
    weft_tensor *arg = test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 3 }, classes), *outs[3];
    int64_t n = 5;
    op_results_everywhere(all_body, &n, &arg, 1, outs, 3, "all");
    test_assert_shape(outs[0], WEFT_I64, 1, &n, "sampled");
    test_assert_shape(outs[1], WEFT_F32, 2, (const int64_t[]){ 2, 3 }, "true counts");
    test_assert_shape(outs[2], WEFT_F32, 1, &n, "sampled counts");
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(test_element(outs[0], i), i);
        cr_assert_eq(test_element(outs[2], i), 1);
    }
    for (int i = 0; i < 6; i++)
        cr_assert_eq(test_element(outs[1], i), 1);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(arg);
}

/* The refused calls, eagerly and traced. */
static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    double w[4] = { 1, 2, 3, 4 };
    unigram_case c = { 2, 3, 4, 0, 4, false, 1.0, w };
    weft_value *o[3];
    switch (which) {
    case 0: c.n = 3; break;
    case 1: c.unigrams = NULL; break;
    case 2: w[2] = -1; break;
    case 3: w[1] = NAN; break;
    case 4: c.distortion = INFINITY; break;
    case 5: w[0] = w[1] = w[2] = w[3] = 0; break;
    case 6: w[0] = w[1] = 0; c.unique = true; break;   /* 2 of weight, 3 asked */
    case 7: w[3] = 0; c.distortion = -1; break;        /* 0^-1 is inf */
    case 8: c.reserved = 5; break;
    case 9: return weft_all_candidate_sampler(cx, a[0], 2, 0, false, o);
    case 10: return weft_all_candidate_sampler(cx, a[0], 2, 3, false, NULL);
    }
    int rc = weft_fixed_unigram_candidate_sampler(cx, a[0], c.num_true, c.num_sampled, c.unique,
                                                  c.range, c.distortion, c.reserved, c.unigrams,
                                                  c.n, a[1], o);
    if (rc == 0)
        outs[0] = o[0];
    return rc;
}

Test(ops_unigram_sampler, refused_calls)
{
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_fixed_unigram_candidate_sampler: num_reserved_ids 0 and 3 "
                          "unigrams" },
        { 1, WEFT_EINVAL, "do not make range_max 4 classes" },
        { 2, WEFT_EINVAL, "class 2's weight (unigram -1 to the power 1) is not finite and 0" },
        { 3, WEFT_EINVAL, "class 1's weight (unigram nan to the power 1)" },
        { 4, WEFT_EINVAL, "distortion inf is not finite" },
        { 5, WEFT_EINVAL, "0 classes have a weight, fewer than one" },
        { 6, WEFT_EINVAL, "2 classes have a weight, fewer than the unique classes asked for" },
        { 7, WEFT_EINVAL, "class 3's weight (unigram 0 to the power -1) is not finite" },
        { 8, WEFT_EINVAL, "num_reserved_ids 5 and 4 unigrams" },
        { 9, WEFT_EINVAL, "weft_all_candidate_sampler: num_true 2, num_sampled 0" },
        { 10, WEFT_EINVAL, "weft_all_candidate_sampler: outs is NULL" },
    };
    const double v[4] = { 0 }, seed = 1;
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 2 }, v),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
