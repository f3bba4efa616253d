/* weft_sort, weft_argsort and weft_top_k against a reference (a stable
 * insertion sort of each row, written here on the typed elements), in
 * three modes: eager, traced with the argument's shape, and traced for a
 * signature whose dims are all unknown (so that inference with unknown
 * dims and the run-time checks run too).  Every dtype, every axis,
 * both directions, NaN, infinities and -0.0, many duplicates, empty dims,
 * rows above the split threshold on 1, 2 and 4 workers, top_k's ties and
 * k's range, the errors, and what the compiler does with the ops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "suite_runtimes.h"
#include "test_sanitized.h"

TestSuite(ops_sort, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* ---- Running a case ---------------------------------------------------- */

enum { OP_SORT, OP_ARGSORT, OP_TOP_K };
typedef struct sort_case {
    int op;
    int axis;
    bool desc;
    int64_t k;
    bool null_outs;   /* top_k with outs NULL */
} sort_case;

static int case_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const sort_case *c = user;
    switch (c->op) {
    case OP_SORT:
        outs[0] = weft_sort(cx, args[0], c->axis, c->desc);
        break;
    case OP_ARGSORT:
        outs[0] = weft_argsort(cx, args[0], c->axis, c->desc);
        break;
    default:
        return weft_top_k(cx, args[0], c->k, true, c->null_outs ? NULL : outs);
    }
    return weft_ctx_status(cx);
}

enum { EAGER, TRACED, UNKNOWN_DIMS, N_MODES };
static const char *const mode_names[N_MODES] = { "eager", "traced", "unknown dims" };

static size_t n_outs_of(const sort_case *c) { return c->op == OP_TOP_K ? 2 : 1; }

/* One call of c on x in mode m on runtime r; outs receives the results. */
static int call_mode(weft_runtime *r, const sort_case *c, int m, weft_tensor *x,
                     weft_tensor **outs)
{
    weft_spec sig = { .dtype = weft_tensor_dtype(x), .rank = weft_tensor_rank(x) };
    for (int d = 0; d < sig.rank; d++)
        sig.dims[d] = WEFT_DIM_ANY;
    weft_function_desc d = {
        .name = "sort_case", .body = case_body, .user = (void *)c, .n_args = 1,
        .n_outs = n_outs_of(c), .input_signature = m == UNKNOWN_DIMS ? &sig : NULL,
        .flags = m == EAGER ? WEFT_RUN_EAGERLY : 0,
    };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(r, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a = weft_arg_tensor(x);
    int rc = weft_function_call(f, &a, 1, outs, n_outs_of(c));
    weft_function_destroy(&f);
    return rc;
}

/* ---- Inputs ------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Values with many repeats and every special: NaN of both signs,
 * infinities, -0.0 and 0.0, the integer extremes. */
static void fill_value(weft_dtype dt, void *p, int64_t i, uint64_t *s)
{
    static const double fpool[] = { NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.5, -2.5,
                                    1e30, -1e-30, 3, 3, -1, 7 };
    static const int64_t ipool[] = { INT64_MIN, INT64_MAX, INT64_MAX - 1, INT64_MIN + 1,
                                     -1, 0, 2, 2, 5, -7 };
    uint64_t r = rng_next(s);
    switch (dt) {
    case WEFT_BOOL: ((uint8_t *)p)[i] = r & 1; break;
    case WEFT_I32: {
        int64_t v = ipool[r % 10];
        ((int32_t *)p)[i] = v > INT32_MAX ? INT32_MAX - (int32_t)(r & 1)
                            : v < INT32_MIN ? INT32_MIN + (int32_t)(r & 1) : (int32_t)v;
        break;
    }
    case WEFT_I64: ((int64_t *)p)[i] = ipool[r % 10]; break;
    case WEFT_F32: ((float *)p)[i] = (float)fpool[r % 14]; break;
    case WEFT_F64: ((double *)p)[i] = fpool[r % 14]; break;
    }
}

static weft_tensor *random_tensor(weft_dtype dt, int rank, const int64_t *dims, uint64_t seed)
{
    int64_t n = test_numel(rank, dims);
    void *buf = calloc((size_t)(n ? n : 1), 8);
    cr_assert_not_null(buf);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++)
        fill_value(dt, buf, i, &s);
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, buf, &t), 0, "%s", weft_errmsg());
    free(buf);
    return t;
}

/* ---- The reference ----------------------------------------------------- */

/* Whether element i of t goes strictly before element j in ascending
 * order: NaN after everything, NaNs equal, -0.0 equal to 0.0. */
static bool ref_before(const weft_tensor *t, int64_t i, int64_t j)
{
    const void *p = weft_tensor_data(t);
    switch (weft_tensor_dtype(t)) {
    case WEFT_BOOL: return ((const uint8_t *)p)[i] < ((const uint8_t *)p)[j];
    case WEFT_I32: return ((const int32_t *)p)[i] < ((const int32_t *)p)[j];
    case WEFT_I64: return ((const int64_t *)p)[i] < ((const int64_t *)p)[j];
    case WEFT_F32: {
        float x = ((const float *)p)[i], y = ((const float *)p)[j];
        return x < y || (isnan(y) && !isnan(x));
    }
    default: {
        double x = ((const double *)p)[i], y = ((const double *)p)[j];
        return x < y || (isnan(y) && !isnan(x));
    }
    }
}

/* qsort's view of a row: (key, position) pairs, a total order whose
 * result is the stable one. */
static struct {
    const weft_tensor *t;
    int64_t at, stride;
    bool desc;
} qs;

static int qs_cmp(const void *pa, const void *pb)
{
    int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
    int64_t ei = qs.at + i * qs.stride, ej = qs.at + j * qs.stride;
    if (qs.desc ? ref_before(qs.t, ej, ei) : ref_before(qs.t, ei, ej))
        return -1;
    if (qs.desc ? ref_before(qs.t, ei, ej) : ref_before(qs.t, ej, ei))
        return 1;
    return i < j ? -1 : i > j;
}

/* The stable order of the len elements of t at `at`, stride apart:
 * positions 0..len-1 into idx, by insertion for short rows, by qsort for
 * rows longer than 64 (insertion over the large-input test's rows of 700
 * took most of the suite's time). */
static void ref_row(const weft_tensor *t, int64_t at, int64_t stride, int64_t len, bool desc,
                    int64_t *idx)
{
    if (len > 64) {
        qs.t = t;
        qs.at = at;
        qs.stride = stride;
        qs.desc = desc;
        for (int64_t i = 0; i < len; i++)
            idx[i] = i;
        qsort(idx, (size_t)len, sizeof *idx, qs_cmp);
        return;
    }
    for (int64_t i = 0; i < len; i++) {
        int64_t x = i, j = i;
        for (; j > 0; j--) {
            int64_t ex = at + x * stride, ey = at + idx[j - 1] * stride;
            if (!(desc ? ref_before(t, ey, ex) : ref_before(t, ex, ey)))
                break;
            idx[j] = idx[j - 1];
        }
        idx[j] = x;
    }
}

static bool same_bits(const weft_tensor *a, int64_t i, const weft_tensor *b, int64_t j)
{
    size_t es = weft_dtype_size(weft_tensor_dtype(a));
    return memcmp((const char *)weft_tensor_data(a) + (size_t)i * es,
                  (const char *)weft_tensor_data(b) + (size_t)j * es, es) == 0;
}

static void expect_shape(const weft_tensor *t, weft_dtype dt, int rank, const int64_t *dims,
                         const char *what)
{
    cr_assert_not_null(t, "%s: no result", what);
    cr_assert_eq(weft_tensor_dtype(t), dt, "%s: dtype %d, expected %d", what,
                 weft_tensor_dtype(t), dt);
    cr_assert_eq(weft_tensor_rank(t), rank, "%s: rank", what);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "%s: dim %d is %lld, expected %lld", what,
                     d, (long long)weft_tensor_dims(t)[d], (long long)dims[d]);
}

/* outs (c's results on x) against the reference. */
static void check_ref(const sort_case *c, const weft_tensor *x, weft_tensor *const *outs,
                      const char *what)
{
    int rank = weft_tensor_rank(x);
    const int64_t *dims = weft_tensor_dims(x);
    int axis = c->op == OP_TOP_K ? rank - 1 : c->axis < 0 ? c->axis + rank : c->axis;
    int64_t len = dims[axis], inner = 1, outer = 1;
    for (int d = 0; d < axis; d++)
        outer *= dims[d];
    for (int d = axis + 1; d < rank; d++)
        inner *= dims[d];
    int64_t *idx = calloc((size_t)(len ? len : 1), sizeof *idx);
    cr_assert_not_null(idx);
    if (c->op == OP_TOP_K) {
        int64_t od[WEFT_MAX_RANK];
        memcpy(od, dims, sizeof(int64_t) * (size_t)rank);
        od[rank - 1] = c->k;
        expect_shape(outs[0], weft_tensor_dtype(x), rank, od, what);
        expect_shape(outs[1], WEFT_I64, rank, od, what);
    } else {
        expect_shape(outs[0], c->op == OP_ARGSORT ? WEFT_I64 : weft_tensor_dtype(x), rank, dims,
                     what);
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t ic = 0; ic < inner; ic++) {
            int64_t at = o * len * inner + ic;
            ref_row(x, at, inner, len, c->op == OP_TOP_K || c->desc, idx);
            if (c->op == OP_TOP_K) {
                const int64_t *gi = weft_tensor_data(outs[1]);
                for (int64_t r = 0; r < c->k; r++) {
                    int64_t oi = o * c->k + r;
                    cr_assert_eq(gi[oi], idx[r], "%s: row %lld, index %lld is %lld, expected "
                                 "%lld", what, (long long)o, (long long)r, (long long)gi[oi],
                                 (long long)idx[r]);
                    cr_assert(same_bits(outs[0], oi, x, at + idx[r]),
                              "%s: row %lld, value %lld is %g", what, (long long)o,
                              (long long)r, test_element(outs[0], oi));
                }
                continue;
            }
            for (int64_t r = 0; r < len; r++) {
                int64_t e = at + r * inner;
                if (c->op == OP_ARGSORT) {
                    int64_t g = ((const int64_t *)weft_tensor_data(outs[0]))[e];
                    cr_assert_eq(g, idx[r], "%s: element %lld is %lld, expected %lld", what,
                                 (long long)e, (long long)g, (long long)idx[r]);
                } else {
                    cr_assert(same_bits(outs[0], e, x, at + idx[r] * inner),
                              "%s: element %lld is %g, expected %g", what, (long long)e,
                              test_element(outs[0], e), test_element(x, at + idx[r] * inner));
                }
            }
        }
    free(idx);
}

static void release_outs(weft_tensor **outs, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        weft_tensor_release(outs[k]);
        outs[k] = NULL;
    }
}

/* c on x in every mode on runtime r, each checked against the reference. */
static void check_modes_on(weft_runtime *r, const sort_case *c, weft_tensor *x, const char *what)
{
    for (int m = 0; m < N_MODES; m++) {
        weft_tensor *outs[2] = { NULL, NULL };
        int rc = call_mode(r, c, m, x, outs);
        char w[160];
        snprintf(w, sizeof w, "%s, %s", what, mode_names[m]);
        cr_assert_eq(rc, 0, "%s: %s", w, weft_errmsg());
        check_ref(c, x, outs, w);
        release_outs(outs, n_outs_of(c));
    }
}

static void check_modes(const sort_case *c, weft_tensor *x, const char *what)
{
    check_modes_on(rt, c, x, what);
}

/* ---- Worked examples --------------------------------------------------- */

static const char *const dtype_names[5] = { "bool", "i32", "i64", "f32", "f64" };

/* Expected values written out, so that the reference's own rules are
 * checked too: NaN last ascending and first descending, -0.0 and 0.0
 * in index order. */
Test(ops_sort, worked_example_with_nan_inf_and_signed_zero)
{
    const double v[] = { 3, NAN, -INFINITY, 1, -0.0, 0.0, INFINITY };
    const int64_t asc[] = { 2, 4, 5, 3, 0, 6, 1 }, desc[] = { 1, 6, 0, 3, 4, 5, 2 };
    for (int dt = WEFT_F32; dt <= WEFT_F64; dt++) {
        weft_tensor *x = test_tensor(dt, 1, DIMS(7), v);
        for (int m = 0; m < N_MODES; m++)
            for (int dir = 0; dir < 2; dir++) {
                const int64_t *want = dir ? desc : asc;
                sort_case cs = { OP_SORT, 0, dir, 0, false }, ca = cs;
                ca.op = OP_ARGSORT;
                weft_tensor *s = NULL, *a = NULL;
                cr_assert_eq(call_mode(rt, &cs, m, x, &s), 0, "%s", weft_errmsg());
                cr_assert_eq(call_mode(rt, &ca, m, x, &a), 0, "%s", weft_errmsg());
                for (int i = 0; i < 7; i++) {
                    cr_assert_eq(((const int64_t *)weft_tensor_data(a))[i], want[i],
                                 "%s %s dir %d: index %d", dtype_names[dt], mode_names[m], dir, i);
                    double g = test_element(s, i), e = v[want[i]];
                    cr_assert(isnan(e) ? isnan(g) : g == e && signbit(g) == signbit(e),
                              "%s %s dir %d: element %d is %g, expected %g", dtype_names[dt],
                              mode_names[m], dir, i, g, e);
                }
                weft_tensor_release(s);
                weft_tensor_release(a);
            }
        weft_tensor_release(x);
    }
}

Test(ops_sort, worked_example_of_a_matrix_along_each_axis)
{
    /* [[3, 1, 2], [0, 5, 1]] */
    weft_tensor *x = test_tensor(WEFT_I32, 2, DIMS(2, 3), (const double[]){ 3, 1, 2, 0, 5, 1 });
    const struct { int op, axis; bool desc; int64_t want[6]; } cases[] = {
        { OP_SORT, 1, false, { 1, 2, 3, 0, 1, 5 } },
        { OP_SORT, -1, true, { 3, 2, 1, 5, 1, 0 } },
        { OP_SORT, 0, false, { 0, 1, 1, 3, 5, 2 } },
        { OP_ARGSORT, 0, true, { 0, 1, 0, 1, 0, 1 } },
        { OP_ARGSORT, -2, false, { 1, 0, 1, 0, 1, 0 } },
        { OP_ARGSORT, 1, false, { 1, 2, 0, 0, 2, 1 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int m = 0; m < N_MODES; m++) {
            sort_case c = { cases[i].op, cases[i].axis, cases[i].desc, 0, false };
            weft_tensor *out = NULL;
            cr_assert_eq(call_mode(rt, &c, m, x, &out), 0, "%s", weft_errmsg());
            expect_shape(out, c.op == OP_SORT ? WEFT_I32 : WEFT_I64, 2, DIMS(2, 3), "matrix");
            for (int e = 0; e < 6; e++)
                cr_assert_eq(test_element(out, e), (double)cases[i].want[e],
                             "case %zu, %s: element %d is %g", i, mode_names[m], e,
                             test_element(out, e));
            weft_tensor_release(out);
        }
    weft_tensor_release(x);
}

/* ---- Against the reference --------------------------------------------- */

Test(ops_sort, every_dtype_axis_and_direction)
{
    const int axes[] = { 0, 1, 2, -1, -3 };
    for (int dt = 0; dt < 5; dt++) {
        weft_tensor *x = random_tensor(dt, 3, DIMS(3, 5, 41), 11 + (uint64_t)dt);
        for (size_t a = 0; a < sizeof axes / sizeof *axes; a++)
            for (int dir = 0; dir < 2; dir++)
                for (int op = OP_SORT; op <= OP_ARGSORT; op++) {
                    sort_case c = { op, axes[a], dir, 0, false };
                    char what[96];
                    snprintf(what, sizeof what, "%s %s axis %d %s", dtype_names[dt],
                             op == OP_SORT ? "sort" : "argsort", axes[a],
                             dir ? "descending" : "ascending");
                    check_modes(&c, x, what);
                }
        weft_tensor_release(x);
    }
}

Test(ops_sort, stable_with_many_duplicates)
{
    /* Three keys over 1000 elements: every group keeps its index order. */
    const int64_t n = 1000;
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    uint64_t s = 5;
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(rng_next(&s) % 3);
    for (int dt = 0; dt < 5; dt++) {
        weft_tensor *x = test_tensor(dt, 1, DIMS(n), v);
        for (int dir = 0; dir < 2; dir++) {
            sort_case c = { OP_ARGSORT, 0, dir, 0, false };
            weft_tensor *out = NULL;
            cr_assert_eq(call_mode(rt, &c, TRACED, x, &out), 0, "%s", weft_errmsg());
            const int64_t *ix = weft_tensor_data(out);
            for (int64_t i = 1; i < n; i++) {
                double p = test_element(x, ix[i - 1]), q = test_element(x, ix[i]);
                cr_assert(dir ? p >= q : p <= q, "%s dir %d: out of order at %lld",
                          dtype_names[dt], dir, (long long)i);
                cr_assert(p != q || ix[i - 1] < ix[i], "%s dir %d: equal keys reordered at %lld",
                          dtype_names[dt], dir, (long long)i);
            }
            weft_tensor_release(out);
            check_modes(&c, x, dtype_names[dt]);
        }
        weft_tensor_release(x);
    }
    free(v);
}

Test(ops_sort, empty_dims)
{
    const int64_t shapes[][2] = { { 0, 4 }, { 4, 0 }, { 0, 0 } };
    for (int s = 0; s < 3; s++)
        for (int op = OP_SORT; op <= OP_ARGSORT; op++)
            for (int axis = -2; axis < 2; axis++) {
                weft_tensor *x = random_tensor(WEFT_F32, 2, shapes[s], 1);
                sort_case c = { op, axis, axis & 1, 0, false };
                check_modes(&c, x, "empty");
                weft_tensor_release(x);
            }
    /* top_k of an empty last dim (k 0 only) and of no rows. */
    weft_tensor *x = random_tensor(WEFT_I32, 2, DIMS(3, 0), 1);
    sort_case c = { OP_TOP_K, 0, false, 0, false };
    check_modes(&c, x, "top_k of [3,0]");
    weft_tensor_release(x);
    x = random_tensor(WEFT_I32, 2, DIMS(0, 5), 1);
    c.k = 3;
    check_modes(&c, x, "top_k of [0,5]");
    weft_tensor_release(x);
}

Test(ops_sort, rank_one_and_rank_four)
{
    weft_tensor *x = random_tensor(WEFT_F64, 1, DIMS(100), 3);
    sort_case c = { OP_SORT, -1, true, 0, false };
    check_modes(&c, x, "rank 1");
    weft_tensor_release(x);
    x = random_tensor(WEFT_I64, 4, DIMS(2, 3, 4, 5), 4);
    for (int axis = -4; axis < 4; axis++) {
        sort_case a = { OP_ARGSORT, axis, axis < 0, 0, false };
        check_modes(&a, x, "rank 4");
    }
    weft_tensor_release(x);
}

/* ---- Large inputs over 1, 2 and 4 workers ------------------------------ */

/* Above the split threshold (32768 elements): the rows are spread over the
 * workers; every worker count gives the reference's result, eagerly and
 * traced.  Rows of 65536 elements or more, fewer than the threads, are each cut
 * into segments sorted at once and merged: the long row on every runtime,
 * the three long rows on 4 workers (one row per chunk on 2), the two long
 * columns through the strided copy. */
Test(ops_sort, large_inputs_on_one_two_and_four_workers)
{
    weft_tensor *wide = random_tensor(WEFT_F32, 2, DIMS(96, 700), 21);   /* 67200 */
    weft_tensor *tall = random_tensor(WEFT_I32, 2, DIMS(700, 96), 22);
    weft_tensor *row = random_tensor(WEFT_F64, 1, DIMS(70000), 23);     /* one long row */
    weft_tensor *rows3 = random_tensor(WEFT_F32, 2, DIMS(3, 70000), 24);
    weft_tensor *cols2 = random_tensor(WEFT_I64, 2, DIMS(70000, 2), 25);
    const struct { weft_tensor *x; sort_case c; const char *what; } cases[] = {
        { wide, { OP_SORT, -1, false, 0, false }, "wide sort" },
        { wide, { OP_ARGSORT, 1, true, 0, false }, "wide argsort" },
        { wide, { OP_TOP_K, 0, false, 5, false }, "wide top_k 5" },
        { wide, { OP_TOP_K, 0, false, 300, false }, "wide top_k 300" },
        { tall, { OP_SORT, 0, true, 0, false }, "tall sort axis 0" },
        { tall, { OP_ARGSORT, 0, false, 0, false }, "tall argsort axis 0" },
        { row, { OP_ARGSORT, 0, false, 0, false }, "long row argsort" },
        { row, { OP_SORT, 0, true, 0, false }, "long row sort descending" },
        { rows3, { OP_SORT, 1, false, 0, false }, "three long rows sort" },
        { rows3, { OP_ARGSORT, -1, true, 0, false }, "three long rows argsort descending" },
        { cols2, { OP_ARGSORT, 0, false, 0, false }, "two long columns argsort" },
        { row, { OP_TOP_K, 0, false, 17, false }, "long row top_k 17" },
    };
    /* The sanitizers watch the runtimes with thieves; the plain runs
     * cover the single worker. */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int k = TEST_SANITIZED ? 1 : 0; k < N_RT; k++) {
            char what[96];
            snprintf(what, sizeof what, "%s on %u workers", cases[i].what, rt_workers[k]);
            check_modes_on(rts[k], &cases[i].c, cases[i].x, what);
        }
    weft_tensor_release(wide);
    weft_tensor_release(tall);
    weft_tensor_release(row);
    weft_tensor_release(rows3);
    weft_tensor_release(cols2);
}

/* ---- top_k ------------------------------------------------------------- */

Test(ops_sort, top_k_ties_take_the_lower_index)
{
    weft_tensor *x = test_tensor(WEFT_F32, 1, DIMS(6), (const double[]){ 1, 3, 3, NAN, 2, 3 });
    const struct { int64_t k; int64_t idx[6]; double v[6]; } cases[] = {
        { 0, { 0 }, { 0 } },
        { 1, { 3 }, { NAN } },
        { 3, { 3, 1, 2 }, { NAN, 3, 3 } },
        { 6, { 3, 1, 2, 5, 4, 0 }, { NAN, 3, 3, 3, 2, 1 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int m = 0; m < N_MODES; m++) {
            sort_case c = { OP_TOP_K, 0, false, cases[i].k, false };
            weft_tensor *outs[2] = { NULL, NULL };
            cr_assert_eq(call_mode(rt, &c, m, x, outs), 0, "%s", weft_errmsg());
            expect_shape(outs[0], WEFT_F32, 1, DIMS(cases[i].k), "values");
            expect_shape(outs[1], WEFT_I64, 1, DIMS(cases[i].k), "indices");
            for (int64_t r = 0; r < cases[i].k; r++) {
                double g = test_element(outs[0], r), e = cases[i].v[r];
                cr_assert(isnan(e) ? isnan(g) : g == e, "k %lld, %s: value %lld is %g",
                          (long long)cases[i].k, mode_names[m], (long long)r, g);
                cr_assert_eq(test_element(outs[1], r), (double)cases[i].idx[r],
                             "k %lld, %s: index %lld", (long long)cases[i].k, mode_names[m],
                             (long long)r);
            }
            release_outs(outs, 2);
        }
    weft_tensor_release(x);
}

Test(ops_sort, top_k_every_dtype_and_k)
{
    /* k on both sides of the small-k path's bound, and the whole row. */
    const int64_t ks[] = { 0, 1, 4, 16, 17, 40, 41 };
    for (int dt = 0; dt < 5; dt++) {
        weft_tensor *x = random_tensor(dt, 3, DIMS(2, 3, 41), 31 + (uint64_t)dt);
        for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
            sort_case c = { OP_TOP_K, 0, false, ks[i], false };
            char what[64];
            snprintf(what, sizeof what, "%s top_k %lld", dtype_names[dt], (long long)ks[i]);
            check_modes(&c, x, what);
        }
        weft_tensor_release(x);
    }
}

/* Long rows through the small-k path, which tests whole blocks against the
 * last value kept before it looks at single elements: a row whose top set
 * keeps changing late (a scattered permutation, with a NaN and a tie of
 * the eventual k-th value near the end), and an ascending row (every
 * element enters). */
Test(ops_sort, top_k_long_rows_enter_late)
{
    enum { LEN = 1000 };
    double *v = malloc(sizeof(double) * 2 * LEN);
    cr_assert_not_null(v);
    for (int dt = 0; dt < 5; dt++) {
        for (int i = 0; i < LEN; i++) {
            v[i] = dt == WEFT_BOOL ? (i == 700) : (double)((i * 7919) % LEN);
            v[LEN + i] = dt == WEFT_BOOL ? (i >= 990) : (double)i;
        }
        if (dt == WEFT_F32 || dt == WEFT_F64) {
            v[900] = NAN;
            v[950] = -0.0;
        }
        v[997] = dt == WEFT_BOOL ? 1 : LEN - 8;   /* ties the 8th largest */
        weft_tensor *x = test_tensor((weft_dtype)dt, 2, DIMS(2, LEN), v);
        const int64_t ks[] = { 1, 8, 16 };
        for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
            sort_case c = { OP_TOP_K, 0, false, ks[i], false };
            char what[64];
            snprintf(what, sizeof what, "%s long rows top_k %lld", dtype_names[dt],
                     (long long)ks[i]);
            check_modes(&c, x, what);
        }
        weft_tensor_release(x);
    }
    free(v);
}

/* ---- Errors ------------------------------------------------------------ */

static void expect_fail(const sort_case *c, weft_tensor *x, int code, const char *says)
{
    for (int m = 0; m < N_MODES; m++) {
        weft_tensor *outs[2] = { NULL, NULL };
        int rc = call_mode(rt, c, m, x, outs);
        cr_assert_eq(rc, code, "%s: %s (%s), expected %s", mode_names[m], weft_err_name(rc),
                     weft_errmsg(), weft_err_name(code));
        cr_assert(strstr(weft_errmsg(), says), "%s: \"%s\" does not say \"%s\"", mode_names[m],
                  weft_errmsg(), says);
    }
}

Test(ops_sort, errors)
{
    weft_tensor *x = random_tensor(WEFT_F32, 2, DIMS(3, 5), 1);
    weft_tensor *s = random_tensor(WEFT_F32, 0, NULL, 1);
    sort_case c = { OP_SORT, 2, false, 0, false };
    expect_fail(&c, x, WEFT_EINVAL, "weft_sort: axis 2 is out of range for f32[");
    c.axis = -3;
    expect_fail(&c, x, WEFT_EINVAL, "weft_sort: axis -3 is out of range for f32[");
    c = (sort_case){ OP_ARGSORT, 0, true, 0, false };
    expect_fail(&c, s, WEFT_EINVAL, "weft_argsort: axis 0 is out of range for f32[]");
    c = (sort_case){ OP_TOP_K, 0, false, -1, false };
    expect_fail(&c, x, WEFT_EINVAL, "weft_top_k: k (-1) is negative");
    /* With the dims unknown while tracing, k is checked when the function
     * runs, with the same message. */
    c.k = 6;
    expect_fail(&c, x, WEFT_EINVAL, "weft_top_k: k (6) is larger than the last dim of f32[");
    c.k = 1;
    expect_fail(&c, s, WEFT_EINVAL, "weft_top_k: f32[] is a scalar");
    c.null_outs = true;
    expect_fail(&c, x, WEFT_EINVAL, "weft_top_k: outs is NULL");
    weft_tensor_release(x);
    weft_tensor_release(s);
}

Test(ops_sort, null_context)
{
    cr_assert_null(weft_sort(NULL, NULL, 0, false));
    cr_assert(strstr(weft_errmsg(), "weft_sort: NULL context"), "%s", weft_errmsg());
    cr_assert_null(weft_argsort(NULL, NULL, 0, false));
    weft_value *outs[2] = { (weft_value *)1, (weft_value *)1 };
    cr_assert_eq(weft_top_k(NULL, NULL, 1, true, outs), WEFT_EINVAL);
    cr_assert(outs[0] == NULL && outs[1] == NULL);
}

/* ---- The compiler ------------------------------------------------------ */

static char *ops_of(weft_body_fn body, weft_tensor *x, size_t n_outs, const weft_spec *sig)
{
    weft_function_desc d = { .name = "ops", .body = body, .n_args = 1, .n_outs = n_outs,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a = weft_arg_tensor(x);
    weft_tensor *outs[2] = { NULL, NULL };
    cr_assert_eq(weft_function_call(f, &a, 1, outs, n_outs), 0, "%s", weft_errmsg());
    release_outs(outs, n_outs);
    char *text = test_ops_text(f);
    weft_function_destroy(&f);
    return text;
}

static int body_compiler(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = weft_mul(cx, args[0], weft_const_f64(cx, 2));
    /* Two equal sorts merge; another direction does not.  The sort of a
     * constant folds. */
    weft_value *a = weft_sort(cx, x, 1, true), *b = weft_sort(cx, x, 1, true);
    weft_value *up = weft_sort(cx, x, 1, false);
    weft_value *tk[2];
    weft_top_k(cx, x, 2, true, tk);
    weft_value *k = weft_sort(cx, weft_range(cx, WEFT_F32, 5, 0, -1), 0, false);
    weft_value *sum = weft_add(cx, weft_add(cx, a, b), up);
    sum = weft_add(cx, weft_sum(cx, sum, WEFT_ALL_AXES), weft_sum(cx, tk[0], WEFT_ALL_AXES));
    sum = weft_add(cx, sum, weft_sum(cx, weft_cast(cx, tk[1], WEFT_F32), WEFT_ALL_AXES));
    outs[0] = weft_add(cx, sum, weft_sum(cx, weft_mul(cx, k, k), WEFT_ALL_AXES));
    outs[1] = weft_argsort(cx, weft_neg(cx, x), -1, false);
    return weft_ctx_status(cx);
}

Test(ops_sort, compiler_merges_folds_and_never_fuses)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[?,?]", &sig), 0);
    weft_tensor *x = random_tensor(WEFT_F32, 2, DIMS(3, 4), 2);
    char *text = ops_of(body_compiler, x, 2, &sig);
    cr_assert_eq(test_count(text, "= sort<axis=1,descending>(%"), 1, "equal sorts stay:\n%s", text);
    cr_assert_eq(test_count(text, "= sort<axis=1>(%"), 1, "%s", text);
    cr_assert_eq(test_count(text, "= sort<axis=0>"), 0, "the sort of a constant stayed:\n%s", text);
    cr_assert_eq(test_count(text, "= top_k<k=2>(%"), 1, "%s", text);
    cr_assert_eq(test_count(text, "= top_k_values(%"), 1, "%s", text);
    cr_assert_eq(test_count(text, "= argsort<axis=-1>(%"), 1, "%s", text);
    /* Never inside a fused group: the op names a fused group lists. */
    cr_assert_eq(test_count(text, ",sort"), 0, "%s", text);
    cr_assert_eq(test_count(text, "[sort"), 0, "%s", text);
    free(text);
    weft_tensor_release(x);
}

static int body_in_place(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const sort_case *c = user;
    /* x + 0 is a fresh buffer of x's values, which the sort may take. */
    weft_value *y = weft_add(cx, args[0], weft_const_i64(cx, 0));
    outs[0] = weft_sort(cx, y, c->axis, c->desc);
    return weft_ctx_status(cx);
}

/* sort may write into its input's buffer: along the last axis it sorts
 * each row where it lies, along another it gathers a row, sorts it and
 * writes it back. */
Test(ops_sort, sort_writes_in_place)
{
    weft_tensor *x = random_tensor(WEFT_I64, 2, DIMS(30, 40), 9);
    for (int axis = -1; axis <= 0; axis++) {
        sort_case c = { OP_SORT, axis, axis == 0, 0, false };
        weft_function_desc d = { .name = "in_place", .body = body_in_place, .user = &c,
                                 .n_args = 1, .n_outs = 1 };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_arg a = weft_arg_tensor(x);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        check_ref(&c, x, &out, axis ? "in place, last axis" : "in place, axis 0");
        weft_tensor_release(out);
        char *text = test_ops_text(f);
        const char *line = strstr(text, "= sort<");
        cr_assert_not_null(line, "%s", text);
        const char *eol = strchr(line, '\n'), *re = strstr(line, "reuses");
        cr_assert(re && (!eol || re < eol), "the sort does not reuse its input:\n%s", text);
        free(text);
        weft_function_destroy(&f);
    }
    weft_tensor_release(x);
}
