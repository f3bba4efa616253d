/* NumPy's set routines: isin, unique_all, intersect1d, union1d and
 * setxor1d against NumPy 1.24's printed values (NaN, -0.0, promotion,
 * assume_unique's repeats), eagerly and traced on 1, 2 and 4 workers
 * with the same bits; unique_all against a loop on random integers; one
 * trace for every length; a vector sequence serving every row of
 * weft_searchsorted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_sets, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef enum set_op { ISIN, ISIN_INVERT, INTERSECT, INTERSECT_UNIQUE, UNION, SETXOR,
                      SETXOR_UNIQUE } set_op;

static int set_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const set_op *)user) {
    case ISIN: outs[0] = weft_isin(cx, a[0], a[1], false); break;
    case ISIN_INVERT: outs[0] = weft_isin(cx, a[0], a[1], true); break;
    case INTERSECT: outs[0] = weft_intersect1d(cx, a[0], a[1], false); break;
    case INTERSECT_UNIQUE: outs[0] = weft_intersect1d(cx, a[0], a[1], true); break;
    case UNION: outs[0] = weft_union1d(cx, a[0], a[1]); break;
    case SETXOR: outs[0] = weft_setxor1d(cx, a[0], a[1], false); break;
    default: outs[0] = weft_setxor1d(cx, a[0], a[1], true); break;
    }
    return weft_ctx_status(cx);
}

/* op(x, y) everywhere; its result's dtype, length and elements (NaN
 * where want is, and the sign of zeros). */
static void expect_set(set_op op, weft_tensor *x, weft_tensor *y, weft_dtype dt,
                       const double *want, int64_t n, const char *what)
{
    weft_tensor *args[2] = { x, y }, *r;
    op_results_everywhere(set_body, &op, args, 2, &r, 1, what);
    test_assert_shape(r, dt, 1, &n, what);
    for (int64_t i = 0; i < n; i++) {
        double got = test_element(r, i);
        if (isnan(want[i]))
            cr_assert(isnan(got), "%s[%lld] is %g, not NaN", what, (long long)i, got);
        else
            cr_assert(got == want[i] && signbit(got) == signbit(want[i]),
                      "%s[%lld] is %g, NumPy's %g", what, (long long)i, got, want[i]);
    }
    weft_tensor_release(r);
}

/* np.isin(e, t) and invert=True for e with NaN and -0.0, t with 0.0 and
 * NaN: NaN is in nothing, -0.0 finds 0.0. */
Test(ops_numpy_sets, isin_is_numpys)
{
    weft_tensor *e = test_tensor(WEFT_F64, 2, DIMS(2, 3),
                                 (const double[]){ 1.5, NAN, -0.0, 7, 2.5, 3 });
    weft_tensor *t = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0.0, NAN, 2.5, 7 });
    static const double in[6] = { 0, 0, 1, 1, 1, 0 };
    for (int inv = 0; inv < 2; inv++) {
        set_op op = inv ? ISIN_INVERT : ISIN;
        weft_tensor *args[2] = { e, t }, *r;
        op_results_everywhere(set_body, &op, args, 2, &r, 1, "isin");
        test_assert_shape(r, WEFT_BOOL, 2, DIMS(2, 3), "isin");
        for (int i = 0; i < 6; i++)
            cr_assert_eq(test_element(r, i), inv ? 1 - in[i] : in[i], "invert %d [%d]", inv, i);
        weft_tensor_release(r);
    }
    /* A scalar element; i32 against f64 (promoted); bool with bool; a 0
     * past every test element (not the search's padding). */
    weft_tensor *s = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 2.5 });
    weft_tensor *i3 = test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, 2, 3 });
    weft_tensor *f2 = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 2.0, 3.5 });
    weft_tensor *b2 = test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 });
    weft_tensor *b1 = test_tensor(WEFT_BOOL, 1, DIMS(1), (const double[]){ 1 });
    weft_tensor *z2 = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0, -1 });
    weft_tensor *n2 = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ -1, -2 });
    weft_tensor *pairs[4][2] = { { s, t }, { i3, f2 }, { b2, b1 }, { z2, n2 } };
    static const double want[4][3] = { { 1 }, { 0, 1, 0 }, { 1, 0 }, { 0, 1 } };
    static const int rank[4] = { 0, 1, 1, 1 };
    static const int64_t len[4] = { 1, 3, 2, 2 };
    for (int k = 0; k < 4; k++) {
        set_op op = ISIN;
        weft_tensor *r;
        op_results_everywhere(set_body, &op, pairs[k], 2, &r, 1, "isin pairs");
        test_assert_shape(r, WEFT_BOOL, rank[k], &len[k], "isin pairs");
        for (int i = 0; i < len[k]; i++)
            cr_assert_eq(test_element(r, i), want[k][i], "pair %d [%d]", k, i);
        weft_tensor_release(r);
    }
    weft_tensor *all[9] = { e, t, s, i3, f2, b2, b1, z2, n2 };
    for (int k = 0; k < 9; k++)
        weft_tensor_release(all[k]);
}

static int unique_all_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_unique_all(cx, a[0], outs);
}

/* The four results of unique_all for ar, against want[4] (values, index,
 * inverse, counts) of u distinct values. */
static void expect_unique_all(weft_tensor *ar, const double *const want[4], int64_t u,
                              const char *what)
{
    weft_tensor *r[4];
    op_results_everywhere(unique_all_body, NULL, &ar, 1, r, 4, what);
    int64_t numel = weft_tensor_numel(ar);
    test_assert_shape(r[0], weft_tensor_dtype(ar), 1, &u, what);
    test_assert_shape(r[1], WEFT_I64, 1, &u, what);
    test_assert_shape(r[2], WEFT_I64, weft_tensor_rank(ar), weft_tensor_dims(ar), what);
    test_assert_shape(r[3], WEFT_I64, 1, &u, what);
    for (int k = 0; k < 4; k++)
        for (int64_t i = 0; i < (k == 2 ? numel : u); i++) {
            double got = test_element(r[k], i), w = want[k][i];
            cr_assert(isnan(w) ? isnan(got) : got == w && signbit(got) == signbit(w),
                      "%s: output %d [%lld] is %g, NumPy's %g", what, k, (long long)i, got, w);
        }
    for (int k = 0; k < 4; k++)
        weft_tensor_release(r[k]);
}

/* np.unique(ar, return_index, return_inverse, return_counts): every NaN
 * one value (NumPy 1.24's equal_nan), -0.0 first in ar stands for 0.0. */
Test(ops_numpy_sets, unique_all_is_numpys)
{
    weft_tensor *ar = test_tensor(WEFT_F64, 2, DIMS(2, 4),
                                  (const double[]){ 3, NAN, 1, -0.0, 1, 0.0, NAN, 3 });
    const double *want[4] = { (const double[]){ -0.0, 1, 3, NAN },
                              (const double[]){ 3, 2, 0, 1 },
                              (const double[]){ 2, 3, 1, 0, 1, 0, 3, 2 },
                              (const double[]){ 2, 2, 2, 2 } };
    expect_unique_all(ar, want, 4, "unique f64");
    weft_tensor_release(ar);
    ar = test_tensor(WEFT_I32, 1, DIMS(6), (const double[]){ 5, -2, 5, 7, -2, -2 });
    const double *wi[4] = { (const double[]){ -2, 5, 7 }, (const double[]){ 1, 0, 3 },
                            (const double[]){ 1, 0, 1, 2, 0, 0 }, (const double[]){ 3, 2, 1 } };
    expect_unique_all(ar, wi, 3, "unique i32");
    weft_tensor_release(ar);
    ar = test_tensor(WEFT_BOOL, 0, NULL, (const double[]){ 1 });
    const double *wb[4] = { (const double[]){ 1 }, (const double[]){ 0 }, (const double[]){ 0 },
                            (const double[]){ 1 } };
    expect_unique_all(ar, wb, 1, "unique bool scalar");
    weft_tensor_release(ar);
    ar = test_tensor(WEFT_F32, 1, DIMS(0), NULL);
    const double *none[4] = { NULL, NULL, NULL, NULL };
    expect_unique_all(ar, none, 0, "unique empty");
    weft_tensor_release(ar);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* 3000 integers from 200 values: the values are qsort's distinct ones,
 * each first index holds its value with none before it, the inverse
 * gathers ar back and the counts are the occurrences. */
Test(ops_numpy_sets, unique_all_against_a_loop)
{
    enum { N = 3000 };
    double v[N];
    int32_t sorted[N];
    uint64_t seed = 41;
    for (int i = 0; i < N; i++) {
        v[i] = (double)((int)(op_uniform(&seed) * 200) - 100);
        sorted[i] = (int32_t)v[i];
    }
    qsort(sorted, N, sizeof sorted[0], cmp_i32);
    weft_tensor *ar = test_tensor(WEFT_I32, 2, DIMS(60, 50), v), *r[4];
    op_results_everywhere(unique_all_body, NULL, &ar, 1, r, 4, "unique random");
    int64_t u = 0;
    for (int i = 0; i < N; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            cr_assert_eq(test_element(r[0], u++), sorted[i], "value %lld", (long long)u);
    cr_assert_eq(weft_tensor_numel(r[0]), u);
    for (int64_t k = 0; k < u; k++) {
        int64_t first = (int64_t)test_element(r[1], k), count = 0;
        cr_assert_eq(v[first], test_element(r[0], k), "index of value %lld", (long long)k);
        for (int64_t i = 0; i < N; i++) {
            count += v[i] == test_element(r[0], k);
            cr_assert(i >= first || v[i] != v[first], "value %lld before its index",
                      (long long)k);
        }
        cr_assert_eq(test_element(r[3], k), count, "count of value %lld", (long long)k);
    }
    for (int64_t i = 0; i < N; i++)
        cr_assert_eq(test_element(r[0], (int64_t)test_element(r[2], i)), v[i], "inverse %lld",
                     (long long)i);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(r[k]);
    weft_tensor_release(ar);
}

/* intersect1d, union1d and setxor1d of a1 = [3, nan, 1, 2, 2, -0.0] and
 * a2 = [[2, nan], [0.0, 5]]: NaN never in the intersection, one NaN in
 * the union, one from each input in the symmetric difference. */
Test(ops_numpy_sets, set_ops_are_numpys)
{
    weft_tensor *a1 = test_tensor(WEFT_F64, 1, DIMS(6), (const double[]){ 3, NAN, 1, 2, 2, -0.0 });
    weft_tensor *a2 = test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 2, NAN, 0.0, 5 });
    expect_set(INTERSECT, a1, a2, WEFT_F64, (const double[]){ -0.0, 2 }, 2, "intersect1d");
    expect_set(UNION, a1, a2, WEFT_F64, (const double[]){ -0.0, 1, 2, 3, 5, NAN }, 6, "union1d");
    expect_set(SETXOR, a1, a2, WEFT_F64, (const double[]){ 1, 3, 5, NAN, NAN }, 5, "setxor1d");
    weft_tensor_release(a1);
    weft_tensor_release(a2);
    /* i32 with i64 promotes to i64; assume_unique keeps NumPy's answer
     * for repeats. */
    weft_tensor *b1 = test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 4, 1, 9 });
    weft_tensor *b2 = test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 9, 4, 6, 6 });
    expect_set(INTERSECT_UNIQUE, b1, b2, WEFT_I64, (const double[]){ 4, 6, 9 }, 3,
               "intersect1d assume_unique");
    expect_set(SETXOR, b1, b2, WEFT_I64, (const double[]){ 1, 6 }, 2, "setxor1d i64");
    expect_set(UNION, b1, b2, WEFT_I64, (const double[]){ 1, 4, 6, 9 }, 4, "union1d i64");
    weft_tensor_release(b1);
    weft_tensor_release(b2);
    weft_tensor *c1 = test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, 1, 2 });
    weft_tensor *c2 = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 1, 3 });
    weft_tensor *c3 = test_tensor(WEFT_I32, 1, DIMS(1), (const double[]){ 3 });
    expect_set(INTERSECT_UNIQUE, c1, c2, WEFT_I32, (const double[]){ 1, 1 }, 2,
               "intersect1d repeats");
    expect_set(SETXOR_UNIQUE, c1, c3, WEFT_I32, (const double[]){ 2, 3 }, 2, "setxor1d repeats");
    expect_set(INTERSECT, c1, c2, WEFT_I32, (const double[]){ 1 }, 1, "intersect1d distinct");
    weft_tensor_release(c1);
    weft_tensor_release(c2);
    weft_tensor_release(c3);
    weft_tensor *t1 = test_tensor(WEFT_BOOL, 1, DIMS(1), (const double[]){ 1 });
    weft_tensor *t2 = test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 0, 1 });
    expect_set(UNION, t1, t2, WEFT_BOOL, (const double[]){ 0, 1 }, 2, "union1d bool");
    expect_set(SETXOR, t1, t2, WEFT_BOOL, (const double[]){ 0 }, 1, "setxor1d bool");
    weft_tensor_release(t1);
    weft_tensor_release(t2);
}

/* Lengths unknown while tracing: one trace serves inputs of 5 and 2, then
 * 1 and 0 elements. */
Test(ops_numpy_sets, one_trace_for_every_length)
{
    const weft_spec sig[2] = { { WEFT_I64, 1, { WEFT_DIM_ANY } },
                               { WEFT_I64, 1, { WEFT_DIM_ANY } } };
    static const set_op ops[3] = { UNION, SETXOR, ISIN };
    for (int o = 0; o < 3; o++) {
        weft_function *f = op_signature_function(rt, set_body, (void *)&ops[o], sig, 2);
        static const double x[5] = { 4, 2, 4, 8, 1 }, y[2] = { 8, 3 };
        static const double want[3][2][5] = { { { 1, 2, 3, 4, 8 }, { 7 } },
                                              { { 1, 2, 3, 4 }, { 7 } },
                                              { { 0, 0, 0, 1, 0 }, { 0 } } };
        static const int64_t len[3][2] = { { 5, 1 }, { 4, 1 }, { 5, 1 } };
        for (int call = 0; call < 2; call++) {
            weft_tensor *a = call ? test_tensor(WEFT_I64, 1, DIMS(1), (const double[]){ 7 })
                                  : test_tensor(WEFT_I64, 1, DIMS(5), x);
            weft_tensor *b = call ? test_tensor(WEFT_I64, 1, DIMS(0), NULL)
                                  : test_tensor(WEFT_I64, 1, DIMS(2), y);
            weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(b) };
            weft_tensor *r = NULL;
            cr_assert_eq(weft_function_call(f, args, 2, &r, 1), 0, "%s", weft_errmsg());
            cr_assert_eq(weft_tensor_numel(r), len[o][call], "op %d call %d", o, call);
            for (int64_t i = 0; i < len[o][call]; i++)
                cr_assert_eq(test_element(r, i), want[o][call][i], "op %d call %d [%lld]", o,
                             call, (long long)i);
            weft_tensor_release(r);
            weft_tensor_release(a);
            weft_tensor_release(b);
        }
        op_destroy_traced_once(&f);
    }
}

static int search_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_searchsorted(cx, a[0], a[1], *(const bool *)user);
    return weft_ctx_status(cx);
}

/* A vector sequence serves every row of values [2, 2, 3] (NumPy's
 * searchsorted of any shape), left and right. */
Test(ops_numpy_sets, searchsorted_vector_serves_every_row)
{
    weft_tensor *seq = test_tensor(WEFT_F32, 1, DIMS(4), (const double[]){ 1, 2, 2, 5 });
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = (i * 7) % 13 * 0.5;
    weft_tensor *vals = test_tensor(WEFT_F32, 3, DIMS(2, 2, 3), v);
    static const double s[4] = { 1, 2, 2, 5 };
    for (int right = 0; right < 2; right++) {
        bool r_flag = right;
        weft_tensor *args[2] = { seq, vals }, *r;
        op_results_everywhere(search_body, &r_flag, args, 2, &r, 1, "searchsorted rows");
        test_assert_shape(r, WEFT_I64, 3, DIMS(2, 2, 3), "searchsorted rows");
        for (int i = 0; i < 12; i++) {
            int64_t want = 0;
            while (want < 4 && (right ? s[want] <= v[i] : s[want] < v[i]))
                want++;
            cr_assert_eq(test_element(r, i), want, "right %d value %g", right, v[i]);
        }
        weft_tensor_release(r);
    }
    weft_tensor_release(seq);
    weft_tensor_release(vals);
}

static int lexsort_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int *c = user;   /* { number of keys, axis } */
    outs[0] = weft_lexsort(cx, a, (size_t)c[0], c[1]);
    return weft_ctx_status(cx);
}

/* np.lexsort((k1, k2)) (k2 the primary key, with a NaN: last), the keys
 * the other way round, one key, and along axis 0 of two matrices. */
Test(ops_numpy_sets, lexsort_is_numpys)
{
    weft_tensor *k1 = test_tensor(WEFT_I32, 1, DIMS(6), (const double[]){ 3, 1, 3, 2, 1, 3 });
    weft_tensor *k2 = test_tensor(WEFT_F64, 1, DIMS(6),
                                  (const double[]){ 0.5, 0.5, -1, 0.5, NAN, -1 });
    struct {
        weft_tensor *keys[2];
        int c[2];
        double want[6];
    } cases[3] = { { { k1, k2 }, { 2, 0 }, { 2, 5, 1, 3, 0, 4 } },
                   { { k2, k1 }, { 2, -1 }, { 1, 4, 3, 2, 5, 0 } },
                   { { k1, NULL }, { 1, 0 }, { 1, 4, 3, 0, 2, 5 } } };
    for (int k = 0; k < 3; k++) {
        weft_tensor *r;
        op_results_everywhere(lexsort_body, cases[k].c, cases[k].keys, (size_t)cases[k].c[0], &r,
                              1, "lexsort");
        test_assert_shape(r, WEFT_I64, 1, DIMS(6), "lexsort");
        for (int i = 0; i < 6; i++)
            cr_assert_eq(test_element(r, i), cases[k].want[i], "case %d [%d]", k, i);
        weft_tensor_release(r);
    }
    /* Columns of [[2, 1, 2], [5, 5, 4]] (secondary) by [[1, 1, 0], [0, 1,
     * 0]] (primary) along axis 0: np.lexsort((s, p), axis=0). */
    weft_tensor *m[2] = { test_tensor(WEFT_I64, 2, DIMS(2, 3),
                                      (const double[]){ 2, 1, 2, 5, 5, 4 }),
                          test_tensor(WEFT_I64, 2, DIMS(2, 3),
                                      (const double[]){ 1, 1, 0, 0, 1, 0 }) };
    int c[2] = { 2, 0 };
    weft_tensor *r;
    op_results_everywhere(lexsort_body, c, m, 2, &r, 1, "lexsort axis 0");
    static const double want[6] = { 1, 0, 0, 0, 1, 1 };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(test_element(r, i), want[i], "axis 0 [%d]", i);
    weft_tensor_release(r);
    weft_tensor *all[4] = { k1, k2, m[0], m[1] };
    for (int k = 0; k < 4; k++)
        weft_tensor_release(all[k]);
}

static int null_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_isin(cx, a[0], NULL, false); break;
    case 1: outs[0] = weft_union1d(cx, NULL, a[0]); break;
    case 3: outs[0] = weft_lexsort(cx, a, 0, 0); break;
    case 4: outs[0] = weft_lexsort(cx, (weft_value *[]){ a[0], a[1] }, 2, 0); break;
    default: {
        int rc = weft_unique_all(cx, a[0], NULL);
        cr_assert_eq(rc, WEFT_EINVAL);
        outs[0] = NULL;
        break;
    }
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_sets, refusals)
{
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 });
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_isin: input 1 is NULL" },
        { 1, WEFT_EINVAL, "weft_union1d: input 0 is NULL" },
        { 2, WEFT_EINVAL, "weft_unique_all: outs is NULL" },
        { 3, WEFT_EINVAL, "weft_lexsort: 0 keys" },
        { 4, WEFT_ESHAPE, "weft_lexsort: keys[1] f64[] and keys[0] f64[2] differ in rank" },
    };
    weft_tensor *args[2] = { x, test_tensor(WEFT_F64, 0, NULL, (const double[]){ 1 }) };
    op_expect_errors(rt, null_body, cases, 5, args, 2);
    weft_tensor_release(x);
    weft_tensor_release(args[1]);
}
