/* weft_random_categorical: each sample against the documented rule
 * recomputed here (the f64 uniform draw of the same seed, a running sum of
 * exp(logit - max), the first class past u times the total), the same bits
 * eagerly and traced on 1, 2 and 4 workers, the frequencies of many draws,
 * classes of probability 0 and of +inf logits, a batch unknown while
 * tracing, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_categorical, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct cat_case {
    int64_t samples;
    weft_dtype dtype;
} cat_case;

/* args: logits, seed. */
static int cat_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cat_case *c = user;
    outs[0] = weft_random_categorical(cx, a[0], c->samples, a[1], c->dtype);
    return weft_ctx_status(cx);
}

/* The f64 uniform draw of n elements for seed. */
static int uniform_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int64_t *n = user;
    outs[0] = weft_random_uniform(cx, a[0], WEFT_F64, 1, n, 0, 1);
    return weft_ctx_status(cx);
}

static weft_tensor *seed_pair(int64_t a, int64_t b)
{
    int64_t v[2] = { a, b };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, (const int64_t[]){ 2 }, v, &t), 0);
    return t;
}

static weft_tensor *f64_matrix(int64_t rows, int64_t cols, const double *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ rows, cols }, v, &t), 0);
    return t;
}

static int64_t element_i(const weft_tensor *t, int64_t i)
{
    return weft_tensor_dtype(t) == WEFT_I64 ? ((const int64_t *)weft_tensor_data(t))[i]
                                            : ((const int32_t *)weft_tensor_data(t))[i];
}

/* The class the rule picks for row l[0..classes) and draw u, written out
 * with a linear scan (the kernel searches). */
static int64_t reference_pick(const double *l, int64_t classes, double u)
{
    double max = -INFINITY;
    for (int64_t k = 0; k < classes; k++)
        max = fmax(max, l[k]);
    double total = 0, *sums = malloc((size_t)classes * sizeof *sums);
    cr_assert_not_null(sums);
    int64_t last = 0;
    for (int64_t k = 0; k < classes; k++) {
        double w = max == INFINITY ? (double)(l[k] == INFINITY) : exp(l[k] - max);
        total += w;
        sums[k] = total;
        if (w > 0)
            last = k;
    }
    int64_t pick = last;
    for (int64_t k = 0; k < classes; k++)
        if (sums[k] > u * total) {
            pick = k;
            break;
        }
    free(sums);
    return pick;
}

Test(ops_categorical, each_sample_follows_the_documented_rule)
{
    enum { ROWS = 7, CLASSES = 40, SAMPLES = 33 };
    double l[ROWS * CLASSES];
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < ROWS * CLASSES; i++)
        l[i] = 4 * op_uniform(&s);
    /* Rows with classes of probability 0, and one of +inf logits. */
    for (int k = 0; k < CLASSES; k += 3)
        l[1 * CLASSES + k] = -INFINITY;
    l[2 * CLASSES + 5] = INFINITY;
    l[2 * CLASSES + 30] = INFINITY;
    l[3 * CLASSES + 0] = 700;   /* exp(700 - max) is fine; exp(700) alone is not */
    weft_tensor *args[2] = { f64_matrix(ROWS, CLASSES, l), seed_pair(12345, -7) };
    const weft_dtype dts[2] = { WEFT_I64, WEFT_I32 };
    int64_t n = ROWS * SAMPLES;
    weft_tensor *u = NULL;
    cr_assert_eq(op_call(rts[0], uniform_body, &n, &args[1], 1, &u, 1, true), 0, "%s",
                 weft_errmsg());
    const double *uv = weft_tensor_data(u);
    for (int d = 0; d < 2; d++) {
        cat_case c = { SAMPLES, dts[d] };
        weft_tensor *out;
        op_results_everywhere(cat_body, &c, args, 2, &out, 1, "categorical");
        cr_assert_eq(weft_tensor_dtype(out), dts[d]);
        cr_assert_eq(weft_tensor_rank(out), 2);
        cr_assert_eq(weft_tensor_dims(out)[0], ROWS);
        cr_assert_eq(weft_tensor_dims(out)[1], SAMPLES);
        for (int64_t r = 0; r < ROWS; r++)
            for (int64_t k = 0; k < SAMPLES; k++) {
                int64_t i = r * SAMPLES + k;
                int64_t got = element_i(out, i);
                int64_t want = reference_pick(l + r * CLASSES, CLASSES, uv[i]);
                cr_assert_eq(got, want, "row %lld sample %lld: class %lld, expected %lld",
                             (long long)r, (long long)k, (long long)got, (long long)want);
                if (r == 1)
                    cr_assert(got % 3 != 0, "row 1 drew class %lld of probability 0",
                              (long long)got);
                if (r == 2)
                    cr_assert(got == 5 || got == 30, "row 2 drew class %lld, not a +inf one",
                              (long long)got);
            }
        weft_tensor_release(out);
    }
    weft_tensor_release(u);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_categorical, frequencies_follow_the_softmax)
{
    /* p = (0.1, 0.2, 0.7) and (0.5, 0, 0.5) as logits, in f32. */
    enum { SAMPLES = 40000 };
    const float l[6] = { logf(0.1f), logf(0.2f), logf(0.7f), 0, -INFINITY, 0 };
    weft_tensor *logits = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, (const int64_t[]){ 2, 3 }, l, &logits), 0);
    weft_tensor *args[2] = { logits, seed_pair(3, 0) };
    cat_case c = { SAMPLES, WEFT_I32 };
    weft_tensor *out;
    op_results_everywhere(cat_body, &c, args, 2, &out, 1, "frequencies");
    const double p[2][3] = { { 0.1, 0.2, 0.7 }, { 0.5, 0, 0.5 } };
    for (int r = 0; r < 2; r++) {
        int64_t count[3] = { 0, 0, 0 };
        for (int64_t k = 0; k < SAMPLES; k++) {
            int64_t v = element_i(out, r * SAMPLES + k);
            cr_assert(v >= 0 && v < 3);
            count[v]++;
        }
        /* Four standard deviations of a binomial count at most 0.0092. */
        for (int k = 0; k < 3; k++)
            cr_assert(fabs((double)count[k] / SAMPLES - p[r][k]) < 0.01,
                      "row %d class %d: frequency %g, probability %g", r, k,
                      (double)count[k] / SAMPLES, p[r][k]);
    }
    weft_tensor_release(out);
    /* Another seed draws other samples. */
    weft_tensor_release(args[1]);
    args[1] = seed_pair(4, 0);
    weft_tensor *other = NULL;
    cr_assert_eq(op_call(rts[0], cat_body, &c, args, 2, &other, 1, false), 0);
    cr_assert_eq(weft_tensor_numel(other), 2 * SAMPLES);
    weft_tensor_release(other);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* A batch unknown while tracing: one trace serves 2 and 5 rows. */
Test(ops_categorical, batch_unknown_while_tracing)
{
    weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, 4 } },
                         { .dtype = WEFT_I64, .rank = 1, .dims = { 2 } } };
    cat_case c = { 6, WEFT_I64 };
    weft_function *f = op_signature_function(rts[1], cat_body, &c, sig, 2);
    weft_tensor *seed = seed_pair(1, 2);
    for (int64_t rows = 2; rows <= 5; rows += 3) {
        double l[5 * 4];
        for (int i = 0; i < 5 * 4; i++)
            l[i] = (double)(i % 4);
        weft_tensor *logits = f64_matrix(rows, 4, l);
        weft_arg a[2] = { weft_arg_tensor(logits), weft_arg_tensor(seed) };
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dims(out)[0], rows);
        cr_assert_eq(weft_tensor_dims(out)[1], 6);
        weft_tensor_release(out);
        weft_tensor_release(logits);
    }
    op_destroy_traced_once(&f);
    weft_tensor_release(seed);
}

typedef enum bad_call { NAN_ROW, ALL_NEG_INF, NO_CLASSES, F32_RESULT, NEGATIVE_SAMPLES,
                        INT_LOGITS, RANK3, BAD_SEED } bad_call;

/* args: logits with a NaN in row 1, the seed, logits whose row 2 is all
 * -inf, logits [2, 0]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *l = a[0], *seed = a[1];
    weft_dtype dt = WEFT_I64;
    int64_t samples = 3;
    switch ((bad_call) * (const int *)user) {
    case NAN_ROW: break;
    case ALL_NEG_INF: l = a[2]; break;
    case NO_CLASSES: l = a[3]; break;
    case F32_RESULT: dt = WEFT_F32; break;
    case NEGATIVE_SAMPLES: samples = -1; break;
    case INT_LOGITS: l = weft_cast(cx, l, WEFT_I32); break;
    case RANK3: l = weft_reshape(cx, l, 3, (const int64_t[]){ 1, 3, 3 }); break;
    case BAD_SEED: seed = weft_cast(cx, seed, WEFT_F32); break;
    }
    outs[0] = weft_random_categorical(cx, l, samples, seed, dt);
    return weft_ctx_status(cx);
}

Test(ops_categorical, refused_calls_name_the_op)
{
    double nan_row[9] = { 0, 1, 2, 0, NAN, 2, 0, 1, 2 };
    double dead_row[9] = { 0, 1, 2, 0, 1, 2, -INFINITY, -INFINITY, -INFINITY };
    weft_tensor *args[4] = { f64_matrix(3, 3, nan_row), seed_pair(1, 1),
                             f64_matrix(3, 3, dead_row), f64_matrix(2, 0, NULL) };
    const op_error_case cases[] = {
        { NAN_ROW, WEFT_EINVAL, "weft_random_categorical: row 1 of the logits has a NaN" },
        { ALL_NEG_INF, WEFT_EINVAL, "weft_random_categorical: row 2 of the logits" },
        { NO_CLASSES, WEFT_EINVAL, "weft_random_categorical: the logits have no classes" },
        { F32_RESULT, WEFT_EINVAL, "weft_random_categorical: dtype f32 is not i32 or i64" },
        { NEGATIVE_SAMPLES, WEFT_EINVAL, "weft_random_categorical: num_samples -1 is negative" },
        { INT_LOGITS, WEFT_EDTYPE, "weft_random_categorical: the logits i32[3,3] are not f32" },
        { RANK3, WEFT_ESHAPE, "weft_random_categorical: the logits f64[1,3,3] are not of rank 2" },
        { BAD_SEED, WEFT_EINVAL, "weft_random_categorical: the seed f32[2] is not i32 or i64" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int i = 0; i < 4; i++)
        weft_tensor_release(args[i]);
}
