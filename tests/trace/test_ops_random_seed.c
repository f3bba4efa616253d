/* weft_random_uniform_full_int, weft_random_split, weft_random_fold_in
 * and weft_random_index_shuffle: the full-range words against each other
 * (the i64 draw is the i32 draw's words, paired), TensorFlow's
 * compositions for split and fold_in, index_shuffle a permutation of every
 * range with each index's place spread evenly over the seeds, new seeds
 * and max_index without a retrace, the same bits eagerly and traced on 1,
 * 2 and 4 workers, and the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_random_seed, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static const double seed_pair[2] = { 20261206, -3 };

/* ---- Full-range integers ------------------------------------------------- */

static int full_int_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_random_uniform_full_int(cx, a[0], WEFT_I32, 2, DIMS(32, 33));
    outs[1] = weft_random_uniform_full_int(cx, a[0], WEFT_I64, 1, DIMS(528));
    return weft_ctx_status(cx);
}

/* Both draws take the words of the same Philox blocks: i32 element i is
 * word i minus 2^31, i64 element j words 2j (high) and 2j + 1 (low) minus
 * 2^63.  Each covers its whole range. */
Test(ops_random_seed, full_int_draws_take_every_word)
{
    weft_tensor *seed = test_tensor(WEFT_I64, 1, DIMS(2), seed_pair), *y[2];
    op_results_everywhere(full_int_body, NULL, &seed, 1, y, 2, "full_int");
    test_assert_shape(y[0], WEFT_I32, 2, DIMS(32, 33), "i32");
    test_assert_shape(y[1], WEFT_I64, 1, DIMS(528), "i64");
    const int32_t *w = weft_tensor_data(y[0]);
    const int64_t *v = weft_tensor_data(y[1]);
    int top32 = 0, top64 = 0, wide32 = 0, wide64 = 0;
    for (int j = 0; j < 528; j++) {
        uint64_t hi = (uint32_t)w[2 * j] ^ 0x80000000u, lo = (uint32_t)w[2 * j + 1] ^ 0x80000000u;
        cr_assert_eq((uint64_t)v[j] ^ (UINT64_C(1) << 63), hi << 32 | lo, "element %d", j);
        top64 += v[j] < 0;
        wide64 += v[j] < -(INT64_C(1) << 62) || v[j] >= INT64_C(1) << 62;
    }
    for (int i = 0; i < 1056; i++) {
        top32 += w[i] < 0;
        wide32 += w[i] < -(1 << 30) || w[i] >= 1 << 30;
    }
    /* Half of each, within seven standard deviations. */
    cr_assert(top32 > 528 - 115 && top32 < 528 + 115, "%d of 1056 negative", top32);
    cr_assert(wide32 > 528 - 115 && wide32 < 528 + 115, "%d of 1056 past 2^30", wide32);
    cr_assert(top64 > 264 - 81 && top64 < 264 + 81, "%d of 528 negative", top64);
    cr_assert(wide64 > 264 - 81 && wide64 < 264 + 81, "%d of 528 past 2^62", wide64);
    for (int o = 0; o < 2; o++)
        weft_tensor_release(y[o]);
    weft_tensor_release(seed);
}

/* ---- split and fold_in ----------------------------------------------------- */

static weft_dtype dtype_of(const weft_value *v)
{
    weft_spec s;
    cr_assert_eq(weft_value_spec(v, &s), 0);
    return s.dtype;
}

static int seeds_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_random_split(cx, a[0], 3);
    outs[1] = weft_random_uniform_full_int(cx, a[0], dtype_of(a[0]), 2, DIMS(3, 2));
    outs[2] = weft_random_fold_in(cx, a[0], a[1]);
    outs[3] = weft_random_uniform_full_int(cx, a[0], dtype_of(a[1]), 0, NULL);
    return weft_ctx_status(cx);
}

Test(ops_random_seed, split_and_fold_in_are_tensorflows_compositions)
{
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_I64 : WEFT_I32, other = d ? WEFT_I32 : WEFT_I64;
        weft_tensor *args[2] = { test_tensor(dt, 1, DIMS(2), seed_pair),
                                 test_tensor(other, 0, NULL, (const double[]){ -7 }) };
        weft_tensor *y[4];
        op_results_everywhere(seeds_body, NULL, args, 2, y, 4, "split and fold_in");
        test_assert_shape(y[0], dt, 2, DIMS(3, 2), "split");
        cr_assert(op_same_bits(y[0], y[1]), "split is the [num, 2] full-range draw");
        test_assert_shape(y[2], other, 1, DIMS(2), "fold_in");
        cr_assert_eq(test_element(y[2], 0), test_element(y[3], 0), "fold_in's first word");
        cr_assert_eq(test_element(y[2], 1), -7, "fold_in's data");
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < r; q++)
                cr_assert(test_element(y[0], 2 * r) != test_element(y[0], 2 * q) ||
                          test_element(y[0], 2 * r + 1) != test_element(y[0], 2 * q + 1),
                          "split's seeds %d and %d are equal", q, r);
        for (int o = 0; o < 4; o++)
            weft_tensor_release(y[o]);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

static int fold_in_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_random_fold_in(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* A new data per call folds in without a retrace; each gives a new seed
 * whose first word is the same draw. */
Test(ops_random_seed, fold_in_takes_new_data_without_a_retrace)
{
    weft_tensor *seed = test_tensor(WEFT_I64, 0, NULL, (const double[]){ 5 });
    weft_function *f = test_function(rt, "fold_in", fold_in_body, NULL, 2, 1, NULL, 0);
    double first = 0;
    for (int k = 0; k < 4; k++) {
        weft_tensor *data = test_tensor(WEFT_I64, 0, NULL, (const double[]){ 100 + k }), *y;
        weft_arg a[2] = { weft_arg_tensor(seed), weft_arg_tensor(data) };
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(test_element(y, 1), 100 + k);
        if (k == 0)
            first = test_element(y, 0);
        cr_assert_eq(test_element(y, 0), first, "call %d", k);
        weft_tensor_release(y);
        weft_tensor_release(data);
    }
    op_destroy_traced_once(&f);
    weft_tensor_release(seed);
}

/* ---- index_shuffle ---------------------------------------------------------- */

static int shuffle_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_random_index_shuffle(cx, a[0], a[1], a[2]);
    return weft_ctx_status(cx);
}

/* 0..n-1 as a tensor of dtype dt. */
static weft_tensor *iota(weft_dtype dt, int64_t n)
{
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i;
    weft_tensor *t = test_tensor(dt, 1, &n, v);
    free(v);
    return t;
}

/* Every range from one element to past a power of four: the places of
 * 0..max are 0..max, each once; from 6 elements up, not in order. */
Test(ops_random_seed, index_shuffle_permutes_every_range)
{
    static const int64_t maxes[] = { 0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 63, 100, 1023, 1500 };
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_I64 : WEFT_I32;
        for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
            int64_t max = maxes[m], n = max + 1;
            weft_tensor *args[3] = { iota(dt, n), test_tensor(dt, 1, DIMS(2), seed_pair),
                                     test_tensor(dt, 0, NULL, (const double[]){ (double)max }) };
            weft_tensor *y;
            op_results_everywhere(shuffle_body, NULL, args, 3, &y, 1, "index_shuffle");
            test_assert_shape(y, dt, 1, &n, "index_shuffle");
            bool *seen = calloc((size_t)n, 1);
            int64_t fixed = 0;
            for (int64_t i = 0; i < n; i++) {
                double p = test_element(y, i);
                cr_assert(p >= 0 && p <= (double)max && !seen[(int64_t)p],
                          "max %lld: index %lld at %g", (long long)max, (long long)i, p);
                seen[(int64_t)p] = true;
                fixed += p == (double)i;
            }
            if (n >= 6)
                cr_assert_lt(fixed, n, "max %lld: the identity", (long long)max);
            free(seen);
            weft_tensor_release(y);
            for (int k = 0; k < 3; k++)
                weft_tensor_release(args[k]);
        }
    }
}

/* The places of index[0..n) under max_index n - 1 over `seeds` seeds
 * into counts[i][p] (f a traced function; index holds 0..n-1 first). */
static void count_places(weft_function *f, weft_tensor *index, int n, int seeds,
                         int counts[10][10])
{
    weft_tensor *max = test_tensor(WEFT_I64, 0, NULL, (const double[]){ n - 1 });
    for (int s = 0; s < seeds; s++) {
        weft_tensor *seed = test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ s, 11 }), *y;
        weft_arg a[3] = { weft_arg_tensor(index), weft_arg_tensor(seed), weft_arg_tensor(max) };
        cr_assert_eq(weft_function_call(f, a, 3, &y, 1), 0, "%s", weft_errmsg());
        for (int i = 0; i < n; i++)
            counts[i][(int)test_element(y, i)]++;
        weft_tensor_release(y);
        weft_tensor_release(seed);
    }
    weft_tensor_release(max);
}

/* Over 10000 seeds each index of 0..4 (of 0..9) lands on each place
 * about 2000 (1000) times: one traced function, each seed and max_index a
 * new argument without a retrace.  Four Feistel rounds, not twelve, put
 * an index of 0..4 on one place 1.5 times as often as on another. */
Test(ops_random_seed, index_shuffle_spreads_each_index_over_the_places)
{
    enum { SEEDS = 10000 };
    static const double twice[10] = { 0, 1, 2, 3, 4, 0, 1, 2, 3, 4 };
    weft_function *f = test_function(rt, "shuffle", shuffle_body, NULL, 3, 1, NULL, 0);
    for (int n = 5; n <= 10; n += 5) {
        static int counts[10][10];
        memset(counts, 0, sizeof counts);
        weft_tensor *index = n == 5 ? test_tensor(WEFT_I64, 1, DIMS(10), twice)
                                    : iota(WEFT_I64, 10);
        count_places(f, index, n, SEEDS, counts);
        weft_tensor_release(index);
        /* Binomial(SEEDS, 1 / n): six standard deviations either way. */
        double want = (double)SEEDS / n, band = 6 * sqrt(want * (1 - 1.0 / n));
        for (int i = 0; i < n; i++)
            for (int p = 0; p < n; p++)
                cr_assert(fabs(counts[i][p] - want) < band, "%d of 0..%d at place %d %d times",
                          i, n - 1, p, counts[i][p]);
    }
    op_destroy_traced_once(&f);
}

/* A max_index near the dtype's end: the places stay in range and apart. */
Test(ops_random_seed, index_shuffle_takes_any_max_index)
{
    const double idx[6] = { 0, 1, 2, 3, 1e15, 4e15 };
    weft_tensor *args[3] = { test_tensor(WEFT_I64, 1, DIMS(6), idx),
                             test_tensor(WEFT_I64, 0, NULL, (const double[]){ 9 }), NULL };
    const int64_t largest = INT64_MAX;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &largest, &args[2]), 0);
    weft_tensor *y;
    op_results_everywhere(shuffle_body, NULL, args, 3, &y, 1, "max_index 2^63 - 1");
    const int64_t *p = weft_tensor_data(y);
    for (int i = 0; i < 6; i++) {
        cr_assert_geq(p[i], 0, "place %d", i);
        for (int k = 0; k < i; k++)
            cr_assert_neq(p[i], p[k], "places %d and %d", k, i);
    }
    weft_tensor_release(y);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* ---- Refusals ------------------------------------------------------------------ */

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_random_uniform_full_int(cx, a[0], WEFT_F32, 1, DIMS(2)); break;
    case 1: outs[0] = weft_random_uniform_full_int(cx, a[0], WEFT_I32, 1, DIMS(-1)); break;
    case 2: outs[0] = weft_random_uniform_full_int(cx, a[1], WEFT_I32, 0, NULL); break;
    case 3: outs[0] = weft_random_split(cx, a[0], -1); break;
    case 4: outs[0] = weft_random_split(cx, a[1], 2); break;
    case 5: outs[0] = weft_random_fold_in(cx, a[0], a[1]); break;
    case 6: outs[0] = weft_random_fold_in(cx, a[0], a[2]); break;
    case 7: outs[0] = weft_random_index_shuffle(cx, a[2], a[0], a[3]); break;
    case 8: outs[0] = weft_random_index_shuffle(cx, a[2], a[0], a[2]); break;
    case 9: outs[0] = weft_random_index_shuffle(cx, a[2], a[1], a[4]); break;
    case 10: outs[0] = weft_random_index_shuffle(cx, a[2], a[0], weft_neg(cx, a[4])); break;
    default: outs[0] = weft_random_index_shuffle(cx, a[1], a[0], a[3]); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_random_seed, refusals)
{
    weft_tensor *args[5] = { test_tensor(WEFT_I64, 0, NULL, (const double[]){ 3 }),
                             test_tensor(WEFT_F32, 1, DIMS(2), seed_pair),
                             test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 0, 1, 5 }),
                             test_tensor(WEFT_I64, 0, NULL, (const double[]){ 9 }),
                             test_tensor(WEFT_I32, 0, NULL, (const double[]){ 4 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_random_uniform_full_int: dtype f32 is not i32 or i64" },
        { 1, WEFT_EINVAL, "weft_random_uniform_full_int: dim 0 is unknown" },
        { 2, WEFT_EINVAL, "weft_random_uniform_full_int: the seed f32[2] is not i32 or i64" },
        { 3, WEFT_EINVAL, "weft_random_split: num -1 is negative" },
        { 4, WEFT_EINVAL, "weft_random_split: the seed f32[2] is not i32 or i64" },
        { 5, WEFT_EDTYPE, "weft_random_fold_in: data f32[2] is not i32 or i64" },
        { 6, WEFT_ESHAPE, "weft_random_fold_in: data i32[3] is not a scalar" },
        { 7, WEFT_EDTYPE, "weft_random_index_shuffle: the index i32[3] and max_index i64[] "
                          "are not both i32 or both i64" },
        { 8, WEFT_ESHAPE, "weft_random_index_shuffle: max_index i32[3] is not a scalar" },
        { 9, WEFT_EINVAL, "weft_random_index_shuffle: the seed f32[2] is not i32 or i64" },
        { 10, WEFT_EINVAL, "weft_random_index_shuffle: max_index -4 is negative" },
        { 11, WEFT_EDTYPE, "the index f32[2] and max_index i64[] are not both" },
    };
    op_expect_errors(rt, refused_body, cases, 12, args, 5);
    for (int k = 0; k < 5; k++)
        weft_tensor_release(args[k]);
}

static int out_of_range_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_random_index_shuffle(cx, a[0], a[1], a[2]);
    return weft_ctx_status(cx);
}

/* An index past max_index (or below 0) fails the call, naming it. */
Test(ops_random_seed, index_outside_the_range_fails_the_call)
{
    const double bad[2][3] = { { 0, 4, 5 }, { 1, -1, 2 } };
    const char *says[2] = { "weft_random_index_shuffle: index 5 (element 2) is outside 0..4",
                            "weft_random_index_shuffle: index -1 (element 1) is outside 0..4" };
    for (int c = 0; c < 2; c++) {
        weft_tensor *args[3] = { test_tensor(WEFT_I32, 1, DIMS(3), bad[c]),
                                 test_tensor(WEFT_I32, 0, NULL, (const double[]){ 1 }),
                                 test_tensor(WEFT_I32, 0, NULL, (const double[]){ 4 }) };
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y = NULL;
            cr_assert_eq(op_call(rt, out_of_range_body, NULL, args, 3, &y, 1, eager),
                         WEFT_EINVAL, "case %d", c);
            cr_assert(strstr(weft_errmsg(), says[c]), "%s", weft_errmsg());
            cr_assert_null(y);
        }
        for (int k = 0; k < 3; k++)
            weft_tensor_release(args[k]);
    }
}
