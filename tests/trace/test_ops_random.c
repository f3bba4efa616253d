/* weft_random_uniform, weft_random_normal and weft_dropout: Philox4x32-10
 * against the published known answers, the same bits eagerly and traced
 * on 1, 2 and 4 workers, a traced seed (new numbers without a retrace),
 * ranges, moments of large samples, the compiler's handling (CSE, DCE),
 * dropout's mask and scale, and the errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "trace/shape.h"
#include "suite_runtimes.h"

TestSuite(ops_random, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* ---- Philox ------------------------------------------------------------ */

/* Random123's kat_vectors for philox4x32 with 10 rounds. */
Test(ops_random, philox_known_answers)
{
    static const uint32_t cases[3][10] = {
        { 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
        { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
          0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
        { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
          0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
    };
    for (int c = 0; c < 3; c++) {
        uint32_t out[4];
        weft__philox4x32_10(cases[c], cases[c] + 4, out);
        for (int k = 0; k < 4; k++)
            cr_assert_eq(out[k], cases[c][6 + k], "case %d word %d: %08x", c, k, out[k]);
    }
}

/* ---- Running the ops --------------------------------------------------- */

typedef struct draw {
    bool normal;
    weft_dtype dtype;
    int rank;
    int64_t dims[4];
    double a, b;
} draw;

static int draw_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const draw *d = user;
    outs[0] = d->normal ? weft_random_normal(cx, args[0], d->dtype, d->rank, d->dims, d->a, d->b)
                        : weft_random_uniform(cx, args[0], d->dtype, d->rank, d->dims, d->a,
                                              d->b);
    return weft_ctx_status(cx);
}

static int truncated_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const draw *d = user;
    outs[0] = weft_random_truncated_normal(cx, args[0], d->dtype, d->rank, d->dims, d->a, d->b);
    return weft_ctx_status(cx);
}

/* d with the given seed tensor on runtime r, eagerly or traced: the call's
 * code, its result in *out and the function in *fp. */
static int call_draw(weft_runtime *r, const draw *d, weft_tensor *seed, bool eager,
                     weft_tensor **out, weft_function **fp)
{
    weft_function_desc desc = {
        .name = "draw", .body = draw_body, .user = (void *)d, .n_args = 1, .n_outs = 1,
        .flags = eager ? WEFT_RUN_EAGERLY : 0,
    };
    *fp = NULL;
    cr_assert_eq(weft_function_create(r, &desc, fp), 0, "%s", weft_errmsg());
    weft_arg a = weft_arg_tensor(seed);
    *out = NULL;
    return weft_function_call(*fp, &a, 1, out, 1);
}

/* call_draw that must succeed; the function is kept in *fp when fp is not
 * NULL (else destroyed). */
static weft_tensor *run_draw(weft_runtime *r, const draw *d, weft_tensor *seed, bool eager,
                             weft_function **fp)
{
    weft_function *f;
    weft_tensor *out;
    cr_assert_eq(call_draw(r, d, seed, eager, &out, &f), 0, "%s", weft_errmsg());
    if (fp)
        *fp = f;
    else
        weft_function_destroy(&f);
    return out;
}

static weft_tensor *seed_of(weft_dtype dt, int n, const double *v)
{
    return n == 0 ? test_tensor(dt, 0, NULL, v) : test_tensor(dt, 1, DIMS(n), v);
}

static bool same_bits(const weft_tensor *x, const weft_tensor *y)
{
    weft_spec sx, sy;
    weft_tensor_spec(x, &sx);
    weft_tensor_spec(y, &sy);
    int64_t n = test_numel(sx.rank, sx.dims);
    return sx.dtype == sy.dtype && sx.rank == sy.rank &&
           memcmp(sx.dims, sy.dims, sizeof(int64_t) * (size_t)sx.rank) == 0 &&
           memcmp(weft_tensor_data(x), weft_tensor_data(y),
                  (size_t)n * weft_dtype_size(sx.dtype)) == 0;
}

/* ---- The same bits everywhere ------------------------------------------ */

/* Above the split threshold, so that the draws are cut into chunks; odd
 * sizes cut blocks (4 or 2 elements each) between chunks. */
Test(ops_random, same_bits_eager_traced_and_on_any_worker_count)
{
    const draw draws[] = {
        { false, WEFT_F32, 2, { 300, 200 }, -1, 3 },
        { false, WEFT_F32, 1, { 60003 }, -1, 3 },
        { true, WEFT_F32, 1, { 50001 }, 0, 1 },
        { false, WEFT_F64, 1, { 70001 }, 0, 1 },
        { false, WEFT_I32, 2, { 200, 300 }, -5, 17 },
        { false, WEFT_I64, 1, { 60000 }, -0x1p62, 0x1p62 },
        { true, WEFT_F32, 3, { 40, 50, 30 }, 2, 0.5 },
        { true, WEFT_F64, 1, { 65536 }, 0, 1 },
    };
    weft_tensor *seed = seed_of(WEFT_I64, 2, (const double[]){ 12345, -7 });
    for (size_t i = 0; i < sizeof draws / sizeof *draws; i++) {
        weft_tensor *ref = run_draw(rt, &draws[i], seed, true, NULL);
        test_assert_shape(ref, draws[i].dtype, draws[i].rank, draws[i].dims, "draw");
        for (int k = 0; k < N_RT; k++)
            for (int eager = 0; eager < 2; eager++) {
                weft_tensor *got = run_draw(rts[k], &draws[i], seed, eager, NULL);
                cr_assert(same_bits(ref, got), "draw %zu, %u workers, %s: other bits", i,
                          rt_workers[k], eager ? "eager" : "traced");
                weft_tensor_release(got);
            }
        weft_tensor_release(ref);
    }
    weft_tensor_release(seed);
}

/* A scalar seed s is the pair [s, 0], whatever its integer dtype; another
 * seed, or another second word, gives other numbers. */
Test(ops_random, seeds)
{
    draw d = { false, WEFT_F64, 1, { 1000 }, 0, 1 };
    weft_tensor *s32 = seed_of(WEFT_I32, 0, (const double[]){ 42 });
    weft_tensor *s64 = seed_of(WEFT_I64, 0, (const double[]){ 42 });
    weft_tensor *pair = seed_of(WEFT_I32, 2, (const double[]){ 42, 0 });
    weft_tensor *other = seed_of(WEFT_I64, 0, (const double[]){ 43 });
    weft_tensor *stream = seed_of(WEFT_I64, 2, (const double[]){ 42, 1 });
    weft_tensor *a = run_draw(rt, &d, s32, false, NULL), *b = run_draw(rt, &d, s64, false, NULL);
    weft_tensor *c = run_draw(rt, &d, pair, false, NULL), *x = run_draw(rt, &d, other, false, NULL);
    weft_tensor *y = run_draw(rt, &d, stream, false, NULL);
    cr_assert(same_bits(a, b) && same_bits(a, c), "a scalar seed is the pair [s, 0]");
    int64_t equal_x = 0, equal_y = 0;
    for (int64_t i = 0; i < 1000; i++) {
        equal_x += test_element(a, i) == test_element(x, i);
        equal_y += test_element(a, i) == test_element(y, i);
    }
    cr_assert_eq(equal_x, 0, "seed 43 repeats %lld of seed 42's numbers", (long long)equal_x);
    cr_assert_eq(equal_y, 0, "[42, 1] repeats %lld of [42, 0]'s numbers", (long long)equal_y);
    weft_tensor *all[] = { s32, s64, pair, other, stream, a, b, c, x, y };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        weft_tensor_release(all[i]);
}

/* The seed is an argument: a new seed per call draws new numbers from the
 * one trace. */
Test(ops_random, traced_seed_draws_anew_without_a_retrace)
{
    draw d = { true, WEFT_F32, 1, { 16 }, 0, 1 };
    weft_tensor *s1 = seed_of(WEFT_I64, 0, (const double[]){ 1 });
    weft_tensor *s2 = seed_of(WEFT_I64, 0, (const double[]){ 2 });
    weft_function *f = NULL;
    weft_tensor *a = run_draw(rt, &d, s1, false, &f);
    weft_arg arg = weft_arg_tensor(s2);
    weft_tensor *b = NULL;
    cr_assert_eq(weft_function_call(f, &arg, 1, &b, 1), 0, "%s", weft_errmsg());
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.traces, 1, "traced %llu times", (unsigned long long)st.traces);
    cr_assert(!same_bits(a, b), "seeds 1 and 2 drew the same numbers");
    weft_function_destroy(&f);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(s1);
    weft_tensor_release(s2);
}

/* ---- Ranges and moments ------------------------------------------------ */

/* Deterministic samples (fixed seeds), so the bounds below are exact
 * facts about them, far from the sampling error (about 0.001 here). */
Test(ops_random, uniform_floats_cover_their_range)
{
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 7 });
    for (int dt = WEFT_F32; dt <= WEFT_F64; dt++) {
        draw d = { false, (weft_dtype)dt, 1, { 100000 }, -2, 6 };
        weft_tensor *t = run_draw(rt, &d, seed, false, NULL);
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        int64_t below_zero = 0;
        for (int64_t i = 0; i < 100000; i++) {
            double v = test_element(t, i);
            cr_assert(v >= -2 && v < 6, "%s element %lld is %g", weft_dtype_name(d.dtype),
                      (long long)i, v);
            sum += v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            below_zero += v < 0;
        }
        cr_assert(fabs(sum / 100000 - 2) < 0.05, "mean %g", sum / 100000);
        cr_assert(lo < -1.99 && hi > 5.99, "range [%g, %g]", lo, hi);
        cr_assert(labs((long)below_zero - 25000) < 1000, "%lld below 0", (long long)below_zero);
        weft_tensor_release(t);
    }
    /* A range too narrow for f32 to tell its ends apart still stays below
     * maxval. */
    draw narrow = { false, WEFT_F32, 1, { 1000 }, 1.0, 1.0 + 1e-9 };
    weft_tensor *t = run_draw(rt, &narrow, seed, false, NULL);
    for (int64_t i = 0; i < 1000; i++)
        cr_assert_eq(test_element(t, i), 1.0, "element %lld", (long long)i);
    weft_tensor_release(t);
    weft_tensor_release(seed);
}

Test(ops_random, uniform_integers_hit_every_value_of_their_range)
{
    weft_tensor *seed = seed_of(WEFT_I32, 2, (const double[]){ -3, 9 });
    for (int dt = WEFT_I32; dt <= WEFT_I64; dt++) {
        draw d = { false, (weft_dtype)dt, 2, { 100, 100 }, -3, 7 };
        weft_tensor *t = run_draw(rt, &d, seed, false, NULL);
        int64_t counts[10] = { 0 };
        for (int64_t i = 0; i < 10000; i++) {
            double v = test_element(t, i);
            cr_assert(v >= -3 && v < 7 && v == floor(v), "element %lld is %g", (long long)i, v);
            counts[(int)v + 3]++;
        }
        for (int k = 0; k < 10; k++)
            cr_assert(counts[k] > 850 && counts[k] < 1150, "%s: %d drawn %lld times of 10000",
                      weft_dtype_name(d.dtype), k - 3, (long long)counts[k]);
        weft_tensor_release(t);
    }
    /* The whole i32 range. */
    draw wide = { false, WEFT_I32, 1, { 1000 }, -2147483648.0, 2147483647.0 };
    weft_tensor *t = run_draw(rt, &wide, seed, false, NULL);
    int64_t negative = 0;
    for (int64_t i = 0; i < 1000; i++)
        negative += test_element(t, i) < 0;
    cr_assert(negative > 400 && negative < 600, "%lld of 1000 negative", (long long)negative);
    weft_tensor_release(t);
    weft_tensor_release(seed);
}

Test(ops_random, normal_moments)
{
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 2026 });
    for (int dt = WEFT_F32; dt <= WEFT_F64; dt++) {
        draw d = { true, (weft_dtype)dt, 1, { 200000 }, 3, 2 };
        weft_tensor *t = run_draw(rt, &d, seed, false, NULL);
        double sum = 0, sq = 0;
        int64_t within_one = 0;
        for (int64_t i = 0; i < 200000; i++) {
            double v = test_element(t, i);
            cr_assert(isfinite(v), "element %lld is %g", (long long)i, v);
            sum += v;
            sq += (v - 3) * (v - 3);
            within_one += fabs(v - 3) < 2;
        }
        double mean = sum / 200000, sd = sqrt(sq / 200000), frac = within_one / 200000.0;
        cr_assert(fabs(mean - 3) < 0.02, "%s mean %g", weft_dtype_name(d.dtype), mean);
        cr_assert(fabs(sd - 2) < 0.02, "%s stddev %g", weft_dtype_name(d.dtype), sd);
        cr_assert(fabs(frac - 0.6827) < 0.01, "%s: %g within one stddev",
                  weft_dtype_name(d.dtype), frac);
        weft_tensor_release(t);
    }
    /* stddev 0 gives the mean. */
    draw flat = { true, WEFT_F64, 1, { 10 }, -1.5, 0 };
    weft_tensor *t = run_draw(rt, &flat, seed, false, NULL);
    for (int64_t i = 0; i < 10; i++)
        cr_assert_eq(test_element(t, i), -1.5);
    weft_tensor_release(t);
    weft_tensor_release(seed);
}

/* The truncated normal is the quantile of the uniform draw of the same
 * seed, mapped between the normal's CDF at -2 and at 2: Phi(z) gives back
 * that probability to within rounding, and the moments are the truncated
 * normal's (variance 0.7737, 0.7152 of it within one). */
Test(ops_random, truncated_normal_is_the_quantile_of_the_uniform_draw)
{
    enum { N = 200000 };
    const double lo = 0.022750131948179195, hi = 0.9772498680518208;
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 31 });
    draw u = { false, WEFT_F64, 1, { N }, 0, 1 };
    weft_tensor *us = run_draw(rt, &u, seed, false, NULL);
    for (int dt = WEFT_F32; dt <= WEFT_F64; dt++) {
        draw d = { true, (weft_dtype)dt, 1, { N }, 0, 1 };
        weft_function_desc desc = { .name = "tn", .body = truncated_body, .user = &d,
                                    .n_args = 1, .n_outs = 1 };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
        weft_arg a = weft_arg_tensor(seed);
        weft_tensor *t = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &t, 1), 0, "%s", weft_errmsg());
        weft_function_destroy(&f);
        double sq = 0, sum = 0;
        int64_t within_one = 0;
        for (int64_t i = 0; i < N; i++) {
            double z = test_element(t, i);
            cr_assert(z >= -2 && z <= 2, "element %lld is %g", (long long)i, z);
            sum += z;
            sq += z * z;
            within_one += fabs(z) < 1;
            if (dt == WEFT_F64 && i < 1000) {
                double p = lo + (hi - lo) * test_element(us, i);
                double back = 0.5 * erfc(-z / sqrt(2.0));
                cr_assert(fabs(back - p) < 1e-13, "element %lld: Phi(%.17g) = %.17g, not %.17g",
                          (long long)i, z, back, p);
            }
        }
        cr_assert(fabs(sum / N) < 0.01, "mean %g", sum / N);
        cr_assert(fabs(sq / N - 0.7737) < 0.01, "variance %g", sq / N);
        cr_assert(fabs((double)within_one / N - 0.7152) < 0.01, "%g within one",
                  (double)within_one / N);
        weft_tensor_release(t);
    }
    weft_tensor_release(us);
    weft_tensor_release(seed);
}

/* ---- The compiler ------------------------------------------------------ */

/* Two draws with the same seed and attributes are one op (a stateless op is
 * a function of its inputs); an unused one goes. */
static int twice_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *a = weft_random_uniform(cx, args[0], WEFT_F32, 1, DIMS(8), 0, 1);
    weft_value *b = weft_random_uniform(cx, args[0], WEFT_F32, 1, DIMS(8), 0, 1);
    weft_value *c = weft_random_normal(cx, args[0], WEFT_F32, 1, DIMS(8), 0, 1);
    weft_random_normal(cx, args[0], WEFT_F64, 1, DIMS(4), 0, 1);   /* unused */
    outs[0] = weft_add(cx, weft_sub(cx, a, b), c);
    return weft_ctx_status(cx);
}

Test(ops_random, cse_merges_equal_draws_and_dce_drops_unused_ones)
{
    weft_function_desc desc = { .name = "twice", .body = twice_body, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 5 });
    weft_arg a = weft_arg_tensor(seed);
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    char *text = test_ops_text(f);
    cr_assert_eq(test_count(text, "random_uniform<minval=0,maxval=1>(%"), 1, "%s", text);
    cr_assert_eq(test_count(text, "random_normal<mean=0,stddev=1>(%"), 1, "%s", text);
    free(text);
    /* a - b is 0, so the result is the normal draw. */
    draw n = { true, WEFT_F32, 1, { 8 }, 0, 1 };
    weft_tensor *ref = run_draw(rt, &n, seed, true, NULL);
    cr_assert(same_bits(out, ref), "(a - b) + c is not c");
    weft_tensor_release(ref);
    weft_tensor_release(out);
    weft_tensor_release(seed);
    weft_function_destroy(&f);
}

/* ---- The _like forms --------------------------------------------------- */

typedef struct like_case {
    bool normal;
} like_case;

static int like_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const like_case *c = user;
    outs[0] = c->normal ? weft_random_normal_like(cx, args[0], args[1], WEFT_F64, 1, 2)
                        : weft_random_uniform_like(cx, args[0], args[1], WEFT_I64, -9, 9);
    return weft_ctx_status(cx);
}

/* Traced once for i32[?, 3]: two calls of other sizes give the numbers of
 * the known-dims form for each size. */
Test(ops_random, like_forms_take_the_shape_when_the_function_runs)
{
    weft_tensor *seed = seed_of(WEFT_I64, 2, (const double[]){ 8, 9 });
    weft_spec sig[2] = { { .dtype = WEFT_I64, .rank = 1, .dims = { 2 } },
                         { .dtype = WEFT_I32, .rank = 2, .dims = { WEFT_DIM_ANY, 3 } } };
    for (int normal = 0; normal < 2; normal++) {
        like_case c = { normal == 1 };
        weft_function_desc desc = { .name = "like", .body = like_body, .user = &c, .n_args = 2,
                                    .n_outs = 1, .input_signature = sig };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
        const int64_t rows[] = { 5, 11111 };
        for (int k = 0; k < 2; k++) {
            int64_t n = rows[k] * 3;
            double *zeros = calloc((size_t)n, sizeof(double));
            cr_assert_not_null(zeros);
            weft_tensor *like = test_tensor(WEFT_I32, 2, DIMS(rows[k], 3), zeros);
            free(zeros);
            weft_arg a[2] = { weft_arg_tensor(seed), weft_arg_tensor(like) };
            weft_tensor *got = NULL;
            cr_assert_eq(weft_function_call(f, a, 2, &got, 1), 0, "%s", weft_errmsg());
            draw d = { c.normal, c.normal ? WEFT_F64 : WEFT_I64, 2, { rows[k], 3 },
                       c.normal ? 1 : -9, c.normal ? 2 : 9 };
            weft_tensor *want = run_draw(rt, &d, seed, false, NULL);
            cr_assert(same_bits(got, want), "%s like [%lld,3]: other numbers",
                      c.normal ? "normal" : "uniform", (long long)rows[k]);
            weft_tensor_release(got);
            weft_tensor_release(want);
            weft_tensor_release(like);
        }
        weft_function_stats st;
        weft_function_get_stats(f, &st);
        cr_assert_eq(st.traces, 1, "traced %llu times", (unsigned long long)st.traces);
        weft_function_destroy(&f);
    }
    weft_tensor_release(seed);
}

/* ---- Dropout ----------------------------------------------------------- */

typedef struct drop {
    double rate;
    bool unknown_dims;   /* traced for f32[?] */
} drop;

static int drop_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const drop *d = user;
    outs[0] = weft_dropout(cx, args[0], d->rate, args[1]);
    return weft_ctx_status(cx);
}

static int call_drop(const drop *d, weft_tensor *x, weft_tensor *seed, bool eager,
                     weft_tensor **out)
{
    weft_spec sig[2] = { { .dtype = weft_tensor_dtype(x), .rank = 1, .dims = { WEFT_DIM_ANY } },
                         { .dtype = weft_tensor_dtype(seed), .rank = 0 } };
    weft_function_desc desc = {
        .name = "drop", .body = drop_body, .user = (void *)d, .n_args = 2, .n_outs = 1,
        .input_signature = d->unknown_dims ? sig : NULL, .flags = eager ? WEFT_RUN_EAGERLY : 0,
    };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
    weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(seed) };
    *out = NULL;
    int rc = weft_function_call(f, a, 2, out, 1);
    weft_function_destroy(&f);
    return rc;
}

/* Kept exactly where the same seed's uniform draw is >= rate, scaled by
 * 1 / (1 - rate); about rate of the elements dropped. */
Test(ops_random, dropout_keeps_where_the_draw_reaches_the_rate)
{
    enum { N = 100000 };
    double *v = malloc(sizeof(double) * N);
    cr_assert_not_null(v);
    for (int i = 0; i < N; i++)
        v[i] = 1 + i % 97;
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 99 });
    for (int dt = WEFT_F32; dt <= WEFT_F64; dt++) {
        weft_tensor *x = test_tensor((weft_dtype)dt, 1, DIMS(N), v);
        draw u = { false, (weft_dtype)dt, 1, { N }, 0, 1 };
        weft_tensor *draws = run_draw(rt, &u, seed, true, NULL);
        for (int mode = 0; mode < 3; mode++) {   /* eager, traced, traced for f32[?] */
            drop d = { 0.3, mode == 2 };
            weft_tensor *out = NULL;
            cr_assert_eq(call_drop(&d, x, seed, mode == 0, &out), 0, "%s", weft_errmsg());
            int64_t dropped = 0;
            for (int64_t i = 0; i < N; i++) {
                double got = test_element(out, i), w = test_element(draws, i);
                if (w >= (dt == WEFT_F32 ? (double)(float)0.3 : 0.3)) {
                    cr_assert(fabs(got - v[i] / 0.7) <= 1e-6 * v[i] / 0.7,
                              "%s element %lld: %g, not %g", weft_dtype_name(u.dtype),
                              (long long)i, got, v[i] / 0.7);
                } else {
                    cr_assert_eq(got, 0.0, "element %lld: %g", (long long)i, got);
                    dropped++;
                }
            }
            cr_assert(labs((long)dropped - 30000) < 1000, "%lld of %d dropped", (long long)dropped,
                      N);
            weft_tensor_release(out);
        }
        weft_tensor_release(draws);
        weft_tensor_release(x);
    }
    weft_tensor_release(seed);
    free(v);
}

Test(ops_random, dropout_errors)
{
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 1 });
    weft_tensor *xf = test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 1, 2, 3 });
    weft_tensor *xi = test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, 2, 3 });
    const struct { drop d; weft_tensor *x; int code; const char *says; } cases[] = {
        { { 1.0, false }, xf, WEFT_EINVAL, "weft_dropout: rate 1 is not in [0, 1)" },
        { { -0.1, false }, xf, WEFT_EINVAL, "weft_dropout: rate -0.1 is not in [0, 1)" },
        { { 0.5, false }, xi, WEFT_EDTYPE, "weft_dropout: x is i32[3], not f32 or f64" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_tensor *out = NULL;
        int rc = call_drop(&cases[i].d, cases[i].x, seed, false, &out);
        cr_assert_eq(rc, cases[i].code, "%s: %s", cases[i].says, weft_err_name(rc));
        cr_assert(strstr(weft_errmsg(), cases[i].says), "\"%s\" does not say \"%s\"",
                  weft_errmsg(), cases[i].says);
        cr_assert_null(out);
    }
    weft_tensor_release(seed);
    weft_tensor_release(xf);
    weft_tensor_release(xi);
}

/* ---- Errors ------------------------------------------------------------ */

static void expect_error(const draw *d, weft_tensor *seed, const char *says)
{
    for (int eager = 0; eager < 2; eager++) {
        weft_function *f;
        weft_tensor *out;
        int rc = call_draw(rt, d, seed, eager, &out, &f);
        cr_assert_eq(rc, WEFT_EINVAL, "%s: %s", says, weft_err_name(rc));
        cr_assert(strstr(weft_errmsg(), says), "\"%s\" does not say \"%s\"", weft_errmsg(), says);
        cr_assert_null(out);
        weft_function_destroy(&f);
    }
}

Test(ops_random, errors)
{
    weft_tensor *seed = seed_of(WEFT_I64, 0, (const double[]){ 1 });
    weft_tensor *fseed = seed_of(WEFT_F32, 0, (const double[]){ 1 });
    weft_tensor *seed3 = seed_of(WEFT_I64, 3, (const double[]){ 1, 2, 3 });
    const struct { draw d; weft_tensor *seed; const char *says; } cases[] = {
        { { false, WEFT_BOOL, 1, { 4 }, 0, 1 }, seed,
          "weft_random_uniform: dtype bool is not f32, f64, i32 or i64" },
        { { true, WEFT_I32, 1, { 4 }, 0, 1 }, seed, "weft_random_normal: dtype i32 is not f32 or f64" },
        { { false, WEFT_F32, 1, { -2 }, 0, 1 }, seed, "weft_random_uniform: dim 0 is negative (-2)" },
        { { false, WEFT_F32, 9, { 1 }, 0, 1 }, seed, "weft_random_uniform: rank 9 is outside 0..8" },
        { { false, WEFT_F32, 1, { 4 }, 1, 1 }, seed,
          "weft_random_uniform: minval 1 and maxval 1 are not finite with minval < maxval" },
        { { false, WEFT_F64, 1, { 4 }, 0, INFINITY }, seed,
          "weft_random_uniform: minval 0 and maxval inf are not finite" },
        { { false, WEFT_I32, 1, { 4 }, 0, 0.5 }, seed,
          "weft_random_uniform: minval 0 and maxval 0.5 are not i32 integers" },
        { { false, WEFT_I32, 1, { 4 }, 0, 3e9 }, seed,
          "weft_random_uniform: minval 0 and maxval 3e+09 are not i32 integers" },
        { { true, WEFT_F32, 1, { 4 }, 0, -1 }, seed,
          "weft_random_normal: mean 0 and stddev -1 are not finite with stddev >= 0" },
        { { true, WEFT_F32, 1, { 4 }, NAN, 1 }, seed, "weft_random_normal: mean nan and stddev 1" },
        { { false, WEFT_F32, 1, { 4 }, 0, 1 }, fseed,
          "weft_random_uniform: the seed f32[] is not i32 or i64" },
        { { true, WEFT_F32, 1, { 4 }, 0, 1 }, seed3,
          "weft_random_normal: the seed i64[3] is not a scalar or a vector of two" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_error(&cases[i].d, cases[i].seed, cases[i].says);
    /* The _like forms need like. */
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *s = weft_eager_value(cx, seed);
    cr_assert_null(weft_random_normal_like(cx, s, NULL, WEFT_F32, 0, 1));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_random_normal_like: like is NULL"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    /* An op that draws names itself for a bad seed, not the draw. */
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *x = weft_fill(cx, WEFT_F32, 1, (const int64_t[]){ 4 }, 1.0);
    cr_assert_null(weft_dropout(cx, x, 0.5, weft_eager_value(cx, seed3)));
    cr_assert(strstr(weft_errmsg(), "weft_dropout: the seed i64[3] is not a scalar or a vector "
                                    "of two"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    weft_tensor_release(seed);
    weft_tensor_release(fseed);
    weft_tensor_release(seed3);
}
