/* Float reductions over more than 32,768 elements give the same bits on
 * 1, 2 and 4 workers, eagerly and traced, fused or not (include/weft/ops.h
 * fixes their order: chunks of 1024 elements combined in chunk order).
 *
 * The data makes the order matter: mixed magnitudes, with pairs of huge
 * values of opposite signs that cancel exactly, so that what small values
 * a sum absorbs depends on where its partial sums start.  A check of the
 * data itself proves it: summed in 1, 2 or 4 contiguous parts (the order a
 * worker-count dependent split would give) the test's own references
 * disagree, so a kernel that split reductions by worker count would fail
 * here.  The sums of whole tensors are also checked against the
 * documented order computed by the test. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "worker_runtimes.h"
#include "test_sanitized.h"

/* The sanitized builds (CI runs each three times) use smaller sizes, still
 * above the 32,768 elements where kernels split work and with reduced
 * axes longer than one chunk. */
#define SIZE(plain, sanitized) (TEST_SANITIZED ? (sanitized) : (plain))

TestSuite(reduce_workers, .init = worker_runtimes_create, .fini = worker_runtimes_destroy, .timeout = 240);

/* The reduction order of include/weft/ops.h. */
#define CHUNK 1024

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Mixed magnitudes: mostly 10^[-2, 2] of either sign, and every few
 * thousand elements a pair +-10^15 a few thousand elements apart (across
 * chunk and worker boundaries) that cancels exactly.  10^15 squared still
 * fits an f32. */
static double *order_sensitive_data(int64_t n, uint64_t seed)
{
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        double mag = pow(10.0, (double)(next(&s) % 4001) / 1000.0 - 2.0);
        v[i] = next(&s) % 2 ? mag : -mag;
    }
    for (int64_t i = 0; i + 6000 < n; i += 1500 + (int64_t)(next(&s) % 3000)) {
        double big = (1.0 + (double)(next(&s) % 1000) / 1000.0) * 1e15;
        int64_t j = i + 1 + (int64_t)(next(&s) % 5000);
        /* Pairs never overlap: each huge value has its opposite. */
        if (fabs(v[i]) > 1e3 || fabs(v[j]) > 1e3)
            continue;
        v[i] = big;
        v[j] = -big;
    }
    return v;
}

static weft_tensor *make_tensor(weft_dtype dt, int rank, const int64_t *dims, const double *v)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    weft_tensor *t = NULL;
    if (dt == WEFT_F64) {
        cr_assert_eq(weft_tensor_create(dt, rank, dims, v, &t), 0, "%s", weft_errmsg());
        return t;
    }
    float *f = malloc(sizeof *f * (size_t)n);
    cr_assert_not_null(f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    cr_assert_eq(weft_tensor_create(dt, rank, dims, f, &t), 0, "%s", weft_errmsg());
    free(f);
    return t;
}

/* ---- The body -------------------------------------------------------
 * One case: the reductions over axes[0..n_axes) (every axis when n_axes
 * is 0), keepdims.  Outputs: sum, mean, var, sum(x * x + 1) and
 * sum(x * |x| - 1) (two fused groups; the second keeps the signs, so its
 * huge terms cancel as the input's do). */

#define N_OUTS 5

typedef struct red_case {
    int axes[3];
    int n_axes;
    bool keepdims;
} red_case;

static weft_value *reduce(weft_ctx *cx, weft_reduction r, weft_value *x, const red_case *c)
{
    /* One axis without keepdims goes through weft_sum / weft_mean, the
     * older entry points, to cover them too. */
    if (!c->keepdims && c->n_axes <= 1 && (r == WEFT_R_SUM || r == WEFT_R_MEAN)) {
        int axis = c->n_axes ? c->axes[0] : WEFT_ALL_AXES;
        return r == WEFT_R_SUM ? weft_sum(cx, x, axis) : weft_mean(cx, x, axis);
    }
    return weft_reduce(cx, r, x, c->axes, (size_t)c->n_axes, c->keepdims);
}

static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const red_case *c = user;
    weft_value *x = args[0];
    weft_value *one = weft_const_f64(cx, 1.0);
    outs[0] = reduce(cx, WEFT_R_SUM, x, c);
    outs[1] = reduce(cx, WEFT_R_MEAN, x, c);
    outs[2] = reduce(cx, WEFT_R_VAR, x, c);
    outs[3] = reduce(cx, WEFT_R_SUM, weft_add(cx, weft_mul(cx, x, x), one), c);
    outs[4] = reduce(cx, WEFT_R_SUM, weft_sub(cx, weft_mul(cx, x, weft_abs(cx, x)), one), c);
    return weft_ctx_status(cx);
}

static void call(weft_runtime *rt, const red_case *c, weft_tensor *x, bool eager, int calls,
                 weft_tensor **out)
{
    weft_function_desc d = { .name = "reduce_workers", .body = body, .user = (void *)c,
                             .n_args = 1, .n_outs = N_OUTS,
                             .flags = eager ? WEFT_RUN_EAGERLY : 0 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a = weft_arg_tensor(x);
    for (int k = 0; k < calls; k++) {
        for (int q = 0; q < N_OUTS; q++)
            weft_tensor_release(out[q]);
        memset(out, 0, sizeof *out * N_OUTS);
        cr_assert_eq(weft_function_call(f, &a, 1, out, N_OUTS), 0, "%s", weft_errmsg());
    }
    weft_function_destroy(&f);
}

static void assert_same_bits(const weft_tensor *t, const weft_tensor *ref, const char *what)
{
    cr_assert_eq(weft_tensor_dtype(t), weft_tensor_dtype(ref), "%s: dtype", what);
    cr_assert_eq(weft_tensor_rank(t), weft_tensor_rank(ref), "%s: rank", what);
    cr_assert_eq(weft_tensor_numel(t), weft_tensor_numel(ref), "%s: numel", what);
    for (int d = 0; d < weft_tensor_rank(t); d++)
        cr_assert_eq(weft_tensor_dims(t)[d], weft_tensor_dims(ref)[d], "%s: dim %d", what, d);
    size_t es = weft_dtype_size(weft_tensor_dtype(t));
    const unsigned char *a = weft_tensor_data(t), *b = weft_tensor_data(ref);
    for (int64_t i = 0; i < weft_tensor_numel(t); i++) {
        if (memcmp(a + (size_t)i * es, b + (size_t)i * es, es) == 0)
            continue;
        double x = es == 4 ? ((const float *)(const void *)a)[i] : ((const double *)(const void *)a)[i];
        double y = es == 4 ? ((const float *)(const void *)b)[i] : ((const double *)(const void *)b)[i];
        cr_assert(isnan(x) && isnan(y), "%s: element %lld is %.17g, expected %.17g", what,
                  (long long)i, x, y);
    }
}

/* Runs c on x on every runtime, eagerly, traced and from the trace cache;
 * every output must equal the eager one-worker output bit for bit.
 * Returns that output (the caller releases it). */
static void check_case(const red_case *c, weft_tensor *x, weft_tensor **ref)
{
    memset(ref, 0, sizeof *ref * N_OUTS);
    call(rts[0], c, x, true, 1, ref);
    char what[160];
    for (int k = 0; k < N_RT; k++)
        for (int mode = 0; mode < 3; mode++) {
            if (k == 0 && mode == 0)
                continue;
            weft_tensor *out[N_OUTS] = { NULL };
            /* mode 0: eager; 1: the traced first call; 2: a cached call. */
            call(rts[k], c, x, mode == 0, mode == 2 ? 2 : 1, out);
            for (int q = 0; q < N_OUTS; q++) {
                snprintf(what, sizeof what,
                         "%s[%lld elements], %d axes (first %d), keepdims %d, output %d, "
                         "%u workers, mode %d",
                         weft_dtype_name(weft_tensor_dtype(x)), (long long)weft_tensor_numel(x),
                         c->n_axes, c->n_axes ? c->axes[0] : -1, c->keepdims, q,
                         rt_workers[k], mode);
                assert_same_bits(out[q], ref[q], what);
                weft_tensor_release(out[q]);
            }
        }
}

static void release_all(weft_tensor **t)
{
    for (int q = 0; q < N_OUTS; q++)
        weft_tensor_release(t[q]);
}

/* Every case of cases on x, in f32 and f64. */
static void check_shape(int rank, const int64_t *dims, const red_case *cases, size_t n_cases,
                        uint64_t seed)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    double *v = order_sensitive_data(n, seed);
    for (int t = 0; t < 2; t++) {
        weft_tensor *x = make_tensor(t ? WEFT_F64 : WEFT_F32, rank, dims, v);
        for (size_t i = 0; i < n_cases; i++) {
            weft_tensor *ref[N_OUTS];
            check_case(&cases[i], x, ref);
            release_all(ref);
        }
        weft_tensor_release(x);
    }
    free(v);
}

/* ---- The test's references for a whole-tensor sum -------------------- */

/* The sum of x[0..n) as ops.h orders it: chunks of CHUNK elements, each
 * accumulated in order in double, combined in chunk order. */
static double fixed_order_sum(const double *x, int64_t n)
{
    double total = 0;
    for (int64_t c = 0; c * CHUNK < n; c++) {
        double part = 0;
        for (int64_t i = c * CHUNK; i < n && i < (c + 1) * CHUNK; i++)
            part += x[i];
        total = c == 0 ? part : total + part;
    }
    return total;
}

/* The sum as a split into `parts` contiguous ranges (one per worker)
 * would give it. */
static double split_sum(const double *x, int64_t n, int parts)
{
    double total = 0;
    for (int p = 0; p < parts; p++) {
        double part = 0;
        for (int64_t i = n * p / parts; i < n * (p + 1) / parts; i++)
            part += x[i];
        total += part;
    }
    return total;
}

/* The input as the tensor holds it (f32 rounds), widened to double. */
static double *as_stored(const double *v, int64_t n, weft_dtype dt)
{
    double *w = malloc(sizeof *w * (size_t)n);
    cr_assert_not_null(w);
    for (int64_t i = 0; i < n; i++)
        w[i] = dt == WEFT_F32 ? (double)(float)v[i] : v[i];
    return w;
}

/* Whole-tensor sums of n elements: the data tells the worker-count
 * dependent orders apart, and weft's sum and mean equal the documented
 * order, on every runtime. */
static void check_whole_sum(int64_t n, uint64_t seed)
{
    double *v = order_sensitive_data(n, seed);
    static const red_case all = { .n_axes = 0 };
    for (int t = 0; t < 2; t++) {
        weft_dtype dt = t ? WEFT_F64 : WEFT_F32;
        double *w = as_stored(v, n, dt);
        double s1 = split_sum(w, n, 1), s2 = split_sum(w, n, 2), s4 = split_sum(w, n, 4);
        double want = fixed_order_sum(w, n);
        /* Compared as the output dtype holds them. */
        if (dt == WEFT_F32) {
            s1 = (float)s1;
            s2 = (float)s2;
            s4 = (float)s4;
        }
        cr_assert(s1 != s2 && s2 != s4 && s1 != s4,
                  "%s[%lld]: the data does not tell the orders apart (%.17g %.17g %.17g)",
                  weft_dtype_name(dt), (long long)n, s1, s2, s4);
        weft_tensor *x = make_tensor(dt, 1, &n, v);
        weft_tensor *ref[N_OUTS];
        check_case(&all, x, ref);
        double got_sum = dt == WEFT_F32 ? *(const float *)weft_tensor_data(ref[0])
                                        : *(const double *)weft_tensor_data(ref[0]);
        double got_mean = dt == WEFT_F32 ? *(const float *)weft_tensor_data(ref[1])
                                         : *(const double *)weft_tensor_data(ref[1]);
        double want_sum = dt == WEFT_F32 ? (double)(float)want : want;
        double want_mean = dt == WEFT_F32 ? (double)(float)(want / (double)n) : want / (double)n;
        cr_assert(memcmp(&got_sum, &want_sum, sizeof got_sum) == 0,
                  "%s[%lld]: sum %.17g, the documented order gives %.17g", weft_dtype_name(dt),
                  (long long)n, got_sum, want_sum);
        cr_assert(memcmp(&got_mean, &want_mean, sizeof got_mean) == 0,
                  "%s[%lld]: mean %.17g, the documented order gives %.17g", weft_dtype_name(dt),
                  (long long)n, got_mean, want_mean);
        release_all(ref);
        weft_tensor_release(x);
        free(w);
    }
    free(v);
}

/* ---- Tests ----------------------------------------------------------- */

Test(reduce_workers, whole_vector_of_100003)
{
    check_whole_sum(100003, 1);
}

Test(reduce_workers, whole_vector_of_a_million)
{
    check_whole_sum(SIZE(1000000, 100000), 2);
}

Test(reduce_workers, vector_axis_kept)
{
    static const red_case cases[] = { { .axes = { 0 }, .n_axes = 1, .keepdims = true },
                                      { .axes = { -1 }, .n_axes = 1 } };
    int64_t dims[1] = { SIZE(100003, 40000) };
    check_shape(1, dims, cases, sizeof cases / sizeof cases[0], 3);
}

/* Long columns of short rows: axis 0 fuses x * x + 1 into an outer
 * reduction whose chunks of rows go to the workers, axis 1 into an inner
 * one. */
Test(reduce_workers, tall_matrix)
{
    static const red_case cases[] = {
        { .axes = { 0 }, .n_axes = 1 },
        { .axes = { 1 }, .n_axes = 1 },
        { .axes = { -2 }, .n_axes = 1, .keepdims = true },
        { .axes = { 0, 1 }, .n_axes = 2, .keepdims = true },
    };
    int64_t dims[2] = { SIZE(9000, 2000), SIZE(40, 20) };
    check_shape(2, dims, cases, sizeof cases / sizeof cases[0], 4);
}

/* Few outputs over long rows or columns: the chunks of one output are
 * spread over the workers. */
Test(reduce_workers, few_long_rows_and_columns)
{
    static const red_case cases[] = {
        { .axes = { 1 }, .n_axes = 1 },
        { .axes = { 0 }, .n_axes = 1, .keepdims = true },
        { .n_axes = 0, .keepdims = true },
    };
    int64_t wide[2] = { 3, SIZE(33335, 12000) }, tall[2] = { SIZE(33335, 12000), 3 };
    check_shape(2, wide, cases, sizeof cases / sizeof cases[0], 5);
    check_shape(2, tall, cases, sizeof cases / sizeof cases[0], 6);
}

/* Axes 0 and 2 of a 3-D tensor: each output gathers its elements. */
Test(reduce_workers, scattered_axes)
{
    static const red_case cases[] = {
        { .axes = { 0, 2 }, .n_axes = 2 },
        { .axes = { 2, 0 }, .n_axes = 2, .keepdims = true },
        { .axes = { 1 }, .n_axes = 1, .keepdims = true },
    };
    int64_t dims[3] = { SIZE(47, 23), 43, 50 };
    check_shape(3, dims, cases, sizeof cases / sizeof cases[0], 7);
}
