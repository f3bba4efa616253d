/* The indexing ops (unsorted_segment, gather_nd, scatter_nd_update,
 * scatter_nd_add, _sub, _max, _min, scatter_nd, roll, fftshift, ifftshift, repeat,
 * unravel_index)
 * through the public API: values against
 * plain reference loops written here, for every dtype each op takes, run
 * eagerly (WEFT_RUN_EAGERLY) and traced twice (the second call from the
 * cache), the three bit for bit equal; with input signatures holding
 * unknown dims; empty segments, dropped ids, duplicate index tuples; sizes
 * above the kernels' split threshold on 1, 2 and 4 workers (the same bits
 * on each, and the reference's: every sum here is the reference's own
 * left-to-right order); the compiler folding and merging them; and bad
 * inputs, whose messages name the op, in both modes. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "worker_runtimes.h"

static void setup(void) { worker_runtimes_create(); }
static void teardown(void) { worker_runtimes_destroy(); }

TestSuite(ops_index, .init = setup, .fini = teardown, .timeout = 60);

#define MAX_ARGS 3

typedef enum ix_op { SEGMENT, GATHER_ND, SCATTER_UPDATE, SCATTER_ADD, ROLL, REPEAT, ROLL_AXES,
                     REPEAT_COUNTS, GATHER_ND_EX, SCATTER_SUB, SCATTER_MAX, SCATTER_MIN,
                     FFTSHIFT, IFFTSHIFT, UNRAVEL, SQRT_N, SCATTER_NEW } ix_op;

/* One op with its static arguments; sig[k], when set, is argument k's
 * input signature (weft_spec_parse text; all or none). */
typedef struct ix_case {
    ix_op op;
    weft_reduction r;
    int64_t count;     /* num_segments, shift or repeats */
    int axis;
    bool weak_update;  /* scatter: updates is weft_const_f64(value) */
    double value;
    const char *sig[MAX_ARGS];
    const int64_t *shifts;   /* roll_axes; repeat_counts: the counts */
    const int *axes;
    size_t n_axes;           /* entries of shifts (and axes) */
} ix_case;

static int n_args_of(const ix_case *c)
{
    switch (c->op) {
    case SEGMENT: case GATHER_ND: case GATHER_ND_EX: case SQRT_N: case SCATTER_NEW: return 2;
    case SCATTER_UPDATE: case SCATTER_ADD: case SCATTER_SUB: case SCATTER_MAX: case SCATTER_MIN:
        return c->weak_update ? 2 : 3;
    default: return 1;
    }
}

static int body_op(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const ix_case *c = user;
    weft_value *u = c->weak_update ? weft_const_f64(cx, c->value) : args[n_args_of(c) - 1];
    switch (c->op) {
    case SEGMENT: outs[0] = weft_unsorted_segment(cx, c->r, args[0], args[1], c->count); break;
    case GATHER_ND: outs[0] = weft_gather_nd(cx, args[0], args[1]); break;
    case GATHER_ND_EX: outs[0] = weft_gather_nd_ex(cx, args[0], args[1], c->axis); break;
    case SCATTER_UPDATE: outs[0] = weft_scatter_nd_update(cx, args[0], args[1], u); break;
    case SCATTER_ADD: outs[0] = weft_scatter_nd_add(cx, args[0], args[1], u); break;
    case SCATTER_SUB: outs[0] = weft_scatter_nd_sub(cx, args[0], args[1], u); break;
    case SCATTER_MAX: outs[0] = weft_scatter_nd_max(cx, args[0], args[1], u); break;
    case SCATTER_MIN: outs[0] = weft_scatter_nd_min(cx, args[0], args[1], u); break;
    case ROLL: outs[0] = weft_roll(cx, args[0], c->count, c->axis); break;
    case REPEAT: outs[0] = weft_repeat(cx, args[0], c->count, c->axis); break;
    case ROLL_AXES:
        outs[0] = weft_roll_axes(cx, args[0], c->shifts, c->axes, c->n_axes);
        break;
    case REPEAT_COUNTS:
        outs[0] = weft_repeat_counts(cx, args[0], c->shifts, c->n_axes, c->axis);
        break;
    case FFTSHIFT: outs[0] = weft_fftshift(cx, args[0], c->axes, c->n_axes); break;
    case UNRAVEL: outs[0] = weft_unravel_index(cx, args[0], c->shifts, c->n_axes); break;
    case SQRT_N:
        outs[0] = weft_unsorted_segment_sqrt_n(cx, args[0], args[1], c->count);
        break;
    case IFFTSHIFT: outs[0] = weft_ifftshift(cx, args[0], c->axes, c->n_axes); break;
    case SCATTER_NEW:
        outs[0] = weft_scatter_nd(cx, args[0], args[1], (int)c->n_axes, c->shifts);
        break;
    }
    return weft_ctx_status(cx);
}

static weft_function *make(weft_runtime *rt, const ix_case *c, unsigned flags)
{
    weft_spec sig[MAX_ARGS];
    int n = n_args_of(c);
    for (int k = 0; c->sig[0] && k < n; k++)
        cr_assert_eq(weft_spec_parse(c->sig[k], &sig[k]), 0, "%s", weft_errmsg());
    weft_function_desc d = { .name = "ix", .body = body_op, .user = (void *)c, .n_args = (size_t)n,
                             .n_outs = 1, .flags = flags,
                             .input_signature = c->sig[0] ? sig : NULL };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static bool same_bits(const weft_tensor *a, const weft_tensor *b)
{
    if (weft_tensor_dtype(a) != weft_tensor_dtype(b) || weft_tensor_rank(a) != weft_tensor_rank(b))
        return false;
    for (int d = 0; d < weft_tensor_rank(a); d++)
        if (weft_tensor_dims(a)[d] != weft_tensor_dims(b)[d])
            return false;
    size_t bytes = (size_t)weft_tensor_numel(a) * weft_dtype_size(weft_tensor_dtype(a));
    return memcmp(weft_tensor_data(a), weft_tensor_data(b), bytes) == 0;
}

/* Runs c on in[] on rt eagerly, then traced twice; the traced results must
 * equal the eager one bit for bit.  Returns the eager result. */
static weft_tensor *run_on(weft_runtime *rt, const ix_case *c, weft_tensor *const *in)
{
    int n = n_args_of(c);
    weft_arg args[MAX_ARGS];
    for (int k = 0; k < n; k++)
        args[k] = weft_arg_tensor(in[k]);
    weft_function *fe = make(rt, c, WEFT_RUN_EAGERLY), *ft = make(rt, c, 0);
    weft_tensor *e = NULL;
    cr_assert_eq(weft_function_call(fe, args, (size_t)n, &e, 1), 0, "eager: %s", weft_errmsg());
    for (int call = 0; call < 2; call++) {
        weft_tensor *t = NULL;
        cr_assert_eq(weft_function_call(ft, args, (size_t)n, &t, 1), 0, "traced: %s",
                     weft_errmsg());
        cr_assert(same_bits(t, e), "call %d: traced and eager differ", call);
        weft_tensor_release(t);
    }
    cr_assert_eq(weft_function_tracing_count(ft), 1);
    weft_function_destroy(&fe);
    weft_function_destroy(&ft);
    return e;
}

static weft_tensor *run(const ix_case *c, weft_tensor *const *in)
{
    return run_on(rts[1], c, in);
}

/* Runs c in both modes and expects code with `what` in the message. */
static void refused(const ix_case *c, weft_tensor *const *in, int code, const char *what)
{
    int n = n_args_of(c);
    weft_arg args[MAX_ARGS];
    for (int k = 0; k < n; k++)
        args[k] = weft_arg_tensor(in[k]);
    for (int mode = 0; mode < 2; mode++) {
        weft_function *f = make(rts[1], c, mode ? 0 : WEFT_RUN_EAGERLY);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, args, (size_t)n, &out, 1), code, "%s mode: %s",
                     mode ? "traced" : "eager", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), what), "%s mode: \"%s\" lacks \"%s\"",
                  mode ? "traced" : "eager", weft_errmsg(), what);
        cr_assert_null(out);
        weft_function_destroy(&f);
    }
}

static void release_all(weft_tensor **t, int n)
{
    for (int k = 0; k < n; k++)
        weft_tensor_release(t[k]);
}

/* t has dtype dt, shape dims[0..rank) and exactly the values want;
 * releases t. */
static void check(weft_tensor *t, weft_dtype dt, int rank, const int64_t *dims,
                  const double *want, const char *what)
{
    test_assert_shape(t, dt, rank, dims, what);
    for (int64_t i = 0; i < weft_tensor_numel(t); i++) {
        double got = test_element(t, i), w = want[i];
        cr_assert(got == w || (isnan(got) && isnan(w)), "%s[%lld] = %.17g, expected %.17g", what,
                  (long long)i, got, w);
    }
    weft_tensor_release(t);
}

static const weft_dtype num_dtypes[4] = { WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
static const weft_dtype all_dtypes[5] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };

/* ---- unsorted_segment: the reference ------------------------------------ */

/* The value of an empty segment and the combination step, in double (every
 * value in these tests is exact in each dtype, sums and products too). */
static double ref_empty(weft_reduction r, weft_dtype dt)
{
    switch (r) {
    case WEFT_R_PROD: return 1;
    case WEFT_R_MAX:
        return dt == WEFT_F32 ? -FLT_MAX : dt == WEFT_F64 ? -DBL_MAX : dt == WEFT_I32
                   ? INT32_MIN : (double)INT64_MIN;
    case WEFT_R_MIN:
        return dt == WEFT_F32 ? FLT_MAX : dt == WEFT_F64 ? DBL_MAX : dt == WEFT_I32
                   ? INT32_MAX : (double)INT64_MAX;
    default: return 0;
    }
}

/* out[s * inner + c] over rows (inner elements each) of x with ids. */
static void ref_segment(weft_reduction r, weft_dtype dt, const double *x, const double *ids,
                        int64_t rows, int64_t inner, int64_t segs, double *out)
{
    for (int64_t s = 0; s < segs; s++) {
        for (int64_t c = 0; c < inner; c++) {
            double acc = r == WEFT_R_PROD ? 1 : r == WEFT_R_MAX ? -INFINITY
                         : r == WEFT_R_MIN ? INFINITY : 0;
            int64_t n = 0;
            for (int64_t i = 0; i < rows; i++) {
                if ((int64_t)ids[i] != s)
                    continue;
                double v = x[i * inner + c];
                n++;
                switch (r) {
                case WEFT_R_PROD: acc *= v; break;
                case WEFT_R_MAX: acc = v > acc ? v : acc; break;
                case WEFT_R_MIN: acc = v < acc ? v : acc; break;
                default: acc += v; break;
                }
            }
            out[s * inner + c] = n == 0 ? ref_empty(r, dt) : r == WEFT_R_MEAN ? acc / (double)n : acc;
        }
    }
}

static const weft_reduction seg_reductions[5] = { WEFT_R_SUM, WEFT_R_MEAN, WEFT_R_MAX,
                                                  WEFT_R_MIN, WEFT_R_PROD };

/* ---- unsorted_segment ---------------------------------------------------- */

/* data [6, 3]; ids with a dropped -1, segments 1 and 3 empty. */
static const double seg_x[18] = { 1, -2, 3, 4, 5, -6, 7, 8, 9, -1, 2, 0.5,
                                  3, -3, 1, 2, 2, -4 };
static const double seg_ids[6] = { 2, 0, -1, 2, 4, 0 };

Test(ops_index, segment_every_reduction_dtype_and_id_dtype)
{
    for (int ri = 0; ri < 5; ri++) {
        for (int di = 0; di < 4; di++) {
            for (int ii = 0; ii < 2; ii++) {
                weft_reduction r = seg_reductions[ri];
                weft_dtype dt = num_dtypes[di];
                double x[18], want[15];
                for (int i = 0; i < 18; i++)   /* 0.5 only where floats hold it */
                    x[i] = dt == WEFT_I32 || dt == WEFT_I64 ? trunc(seg_x[i]) : seg_x[i];
                weft_dtype rdt = r == WEFT_R_MEAN && (dt == WEFT_I32 || dt == WEFT_I64) ? WEFT_F64 : dt;
                ref_segment(r, rdt, x, seg_ids, 6, 3, 5, want);
                if (rdt == WEFT_F32)
                    for (int i = 0; i < 15; i++)
                        want[i] = (float)want[i];
                weft_dtype idt = ii ? WEFT_I64 : WEFT_I32;
                weft_tensor *in[2] = { test_tensor(dt, 2, (int64_t[]){ 6, 3 }, x),
                                       test_tensor(idt, 1, (int64_t[]){ 6 }, seg_ids) };
                ix_case c = { .op = SEGMENT, .r = r, .count = 5 };
                char what[64];
                snprintf(what, sizeof what, "segment r%d %s ids %s", (int)r, weft_dtype_name(dt),
                         ii ? "i64" : "i32");
                check(run(&c, in), rdt, 2, (int64_t[]){ 5, 3 }, want, what);
                release_all(in, 2);
            }
        }
    }
}

/* ids of rank 2 over data's first two dims; the result is [segs, 2]. */
Test(ops_index, segment_ids_over_two_leading_dims)
{
    double x[12], ids[6] = { 1, 0, 1, -5, 2, 1 }, want[8];
    for (int i = 0; i < 12; i++)
        x[i] = i + 1;
    ref_segment(WEFT_R_SUM, WEFT_F64, x, ids, 6, 2, 4, want);
    weft_tensor *in[2] = { test_tensor(WEFT_F64, 3, (int64_t[]){ 2, 3, 2 }, x),
                           test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 3 }, ids) };
    ix_case c = { .op = SEGMENT, .r = WEFT_R_SUM, .count = 4 };
    check(run(&c, in), WEFT_F64, 2, (int64_t[]){ 4, 2 }, want, "rank-2 ids");
    release_all(in, 2);
}

/* NaN wins max and min; an empty data or num_segments 0 works. */
Test(ops_index, segment_nan_and_empty_inputs)
{
    double x[4] = { 1, NAN, 3, -2 }, ids[4] = { 0, 0, 1, 1 };
    weft_tensor *in[2] = { test_tensor(WEFT_F32, 1, (int64_t[]){ 4 }, x),
                           test_tensor(WEFT_I64, 1, (int64_t[]){ 4 }, ids) };
    ix_case c = { .op = SEGMENT, .r = WEFT_R_MAX, .count = 3 };
    check(run(&c, in), WEFT_F32, 1, (int64_t[]){ 3 }, (double[]){ NAN, 3, -FLT_MAX }, "max nan");
    c.r = WEFT_R_MIN;
    check(run(&c, in), WEFT_F32, 1, (int64_t[]){ 3 }, (double[]){ NAN, -2, FLT_MAX }, "min nan");
    release_all(in, 2);

    weft_tensor *e[2] = { test_tensor(WEFT_I32, 2, (int64_t[]){ 0, 2 }, x),
                          test_tensor(WEFT_I32, 1, (int64_t[]){ 0 }, ids) };
    c = (ix_case){ .op = SEGMENT, .r = WEFT_R_PROD, .count = 2 };
    check(run(&c, e), WEFT_I32, 2, (int64_t[]){ 2, 2 }, (double[]){ 1, 1, 1, 1 }, "empty data");
    c = (ix_case){ .op = SEGMENT, .r = WEFT_R_SUM, .count = 0 };
    check(run(&c, e), WEFT_I32, 2, (int64_t[]){ 0, 2 }, NULL, "no segments");
    release_all(e, 2);
}

/* Integers wrap, like weft_sum. */
Test(ops_index, segment_integer_sums_wrap)
{
    double x[2] = { INT32_MAX, 1 }, ids[2] = { 0, 0 };
    weft_tensor *in[2] = { test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, x),
                           test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, ids) };
    ix_case c = { .op = SEGMENT, .r = WEFT_R_SUM, .count = 1 };
    check(run(&c, in), WEFT_I32, 1, (int64_t[]){ 1 }, (double[]){ INT32_MIN }, "wrap");
    release_all(in, 2);
}

Test(ops_index, segment_unknown_dims_traced)
{
    double want[15];
    ref_segment(WEFT_R_SUM, WEFT_F32, seg_x, seg_ids, 6, 3, 5, want);
    for (int i = 0; i < 15; i++)
        want[i] = (float)want[i];
    const char *sigs[3][2] = { { "f32[?,3]", "i32[?]" }, { "f32[?,?]", "i32[*]" },
                               { "f32[*]", "i32[6]" } };
    for (int k = 0; k < 3; k++) {
        weft_tensor *in[2] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 6, 3 }, seg_x),
                               test_tensor(WEFT_I32, 1, (int64_t[]){ 6 }, seg_ids) };
        ix_case c = { .op = SEGMENT, .r = WEFT_R_SUM, .count = 5,
                      .sig = { sigs[k][0], sigs[k][1] } };
        check(run(&c, in), WEFT_F32, 2, (int64_t[]){ 5, 3 }, want, sigs[k][0]);
        release_all(in, 2);
    }
}

Test(ops_index, segment_errors)
{
    double x[6] = { 1, 2, 3, 4, 5, 6 }, ids[3] = { 0, 5, 1 }, ok_ids[3] = { 0, 1, 0 };
    weft_tensor *in[2] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 3, 2 }, x),
                           test_tensor(WEFT_I32, 1, (int64_t[]){ 3 }, ids) };
    ix_case c = { .op = SEGMENT, .r = WEFT_R_SUM, .count = 3 };
    refused(&c, in, WEFT_EINVAL, "weft_unsorted_segment: segment id 5 (at 1) is not below "
            "num_segments 3");
    c.sig[0] = "f32[?,2]";
    c.sig[1] = "i32[?]";
    refused(&c, in, WEFT_EINVAL, "segment id 5");
    release_all(in, 2);

    weft_tensor *b[2] = { test_tensor(WEFT_BOOL, 2, (int64_t[]){ 3, 2 }, x),
                          test_tensor(WEFT_I32, 1, (int64_t[]){ 3 }, ok_ids) };
    c = (ix_case){ .op = SEGMENT, .r = WEFT_R_MAX, .count = 3 };
    refused(&c, b, WEFT_EDTYPE, "weft_unsorted_segment: data bool[3,2] is not a number");
    weft_tensor_release(b[0]);
    b[0] = test_tensor(WEFT_F32, 2, (int64_t[]){ 3, 2 }, x);
    c.r = WEFT_R_ANY;
    refused(&c, b, WEFT_EINVAL, "reduction 5 is not SUM");
    c = (ix_case){ .op = SEGMENT, .r = WEFT_R_SUM, .count = -1 };
    refused(&c, b, WEFT_EINVAL, "num_segments -1 is negative");
    release_all(b, 2);

    weft_tensor *s[2] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 3, 2 }, x),
                          test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, ok_ids) };
    c = (ix_case){ .op = SEGMENT, .r = WEFT_R_SUM, .count = 2 };
    refused(&c, s, WEFT_ESHAPE, "are not a prefix of the shape of data f32[3,2]");
    weft_tensor_release(s[1]);
    s[1] = test_tensor(WEFT_F32, 1, (int64_t[]){ 3 }, ok_ids);
    refused(&c, s, WEFT_EDTYPE, "the segment ids are f32[3], not i32 or i64");
    weft_tensor_release(s[1]);
    s[1] = test_tensor(WEFT_I64, 0, NULL, ok_ids);
    refused(&c, s, WEFT_ESHAPE, "are a scalar");
    release_all(s, 2);
}

/* Enough rows that parts of the rows combine on their own (4096 rows and
 * more each) and merge afterwards: the first bad id is the one reported
 * whichever part meets it; a NaN in the first part stays in max and min
 * past larger and smaller values in later parts; integer sums wrap across
 * parts as within one. */
Test(ops_index, segment_parts_merge_like_one_pass)
{
    enum { ROWS = 40000 };
    double *x = malloc(sizeof *x * ROWS), *ids = malloc(sizeof *ids * ROWS);
    for (int64_t i = 0; i < ROWS; i++) {
        x[i] = (double)(i % 7);
        ids[i] = (double)(i % 3);
    }
    ids[30001] = 3;
    ids[35000] = 5;
    weft_tensor *in[2] = { test_tensor(WEFT_F32, 1, (int64_t[]){ ROWS }, x),
                           test_tensor(WEFT_I32, 1, (int64_t[]){ ROWS }, ids) };
    ix_case c = { .op = SEGMENT, .r = WEFT_R_SUM, .count = 3 };
    refused(&c, in, WEFT_EINVAL, "weft_unsorted_segment: segment id 3 (at 30001) is not below "
            "num_segments 3");
    release_all(in, 2);

    ids[30001] = 0;
    ids[35000] = 0;
    x[1] = NAN;        /* segment 1, first part */
    x[39997] = 1e30;   /* segment 1, last part */
    x[39994] = -1e30;
    in[0] = test_tensor(WEFT_F32, 1, (int64_t[]){ ROWS }, x);
    in[1] = test_tensor(WEFT_I64, 1, (int64_t[]){ ROWS }, ids);
    for (int w = 0; w < N_RT; w++) {
        c.r = WEFT_R_MAX;
        weft_tensor *t = run_on(rts[w], &c, in);
        cr_assert(isnan(((const float *)weft_tensor_data(t))[1]), "%u workers: max", rt_workers[w]);
        cr_assert_eq(((const float *)weft_tensor_data(t))[0], 6.0f);
        weft_tensor_release(t);
        c.r = WEFT_R_MIN;
        t = run_on(rts[w], &c, in);
        cr_assert(isnan(((const float *)weft_tensor_data(t))[1]), "%u workers: min", rt_workers[w]);
        weft_tensor_release(t);
    }
    release_all(in, 2);

    for (int64_t i = 0; i < ROWS; i++) {
        x[i] = INT32_MAX;
        ids[i] = 0;
    }
    in[0] = test_tensor(WEFT_I32, 1, (int64_t[]){ ROWS }, x);
    in[1] = test_tensor(WEFT_I32, 1, (int64_t[]){ ROWS }, ids);
    c = (ix_case){ .op = SEGMENT, .r = WEFT_R_SUM, .count = 1 };
    /* 40000 * (2^31 - 1) mod 2^32, as int32: -40000. */
    for (int w = 0; w < N_RT; w++)
        check(run_on(rts[w], &c, in), WEFT_I32, 1, (int64_t[]){ 1 }, (double[]){ -40000 },
              "wrap across parts");
    release_all(in, 2);
    free(x);
    free(ids);
}

/* Large enough to split: f32 over rows (inner 1, ids in [-1, 97)) and f64
 * over columns (inner 300); the same bits on 1, 2 and 4 workers as the
 * reference's in-order double sum. */
Test(ops_index, segment_large_same_on_every_worker_count)
{
    const int64_t rows[2] = { 70000, 200 }, inner[2] = { 1, 300 }, segs = 97;
    for (int k = 0; k < 2; k++) {
        int64_t n = rows[k] * inner[k];
        double *x = malloc(sizeof *x * (size_t)n), *ids = malloc(sizeof *ids * (size_t)rows[k]);
        double *want = malloc(sizeof *want * (size_t)(segs * inner[k]));
        uint64_t s = 12345;
        for (int64_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = (double)(float)((double)(s >> 40) / 16777216.0 - 0.5);
        }
        for (int64_t i = 0; i < rows[k]; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            ids[i] = (double)((s >> 33) % (uint64_t)(segs + 1)) - 1;
        }
        weft_dtype dt = k == 0 ? WEFT_F32 : WEFT_F64;
        for (int ri = 0; ri < 5; ri++) {
            weft_reduction r = seg_reductions[ri];
            if (r == WEFT_R_PROD)
                continue;   /* products of thousands of values underflow to 0 */
            ref_segment(r, dt, x, ids, rows[k], inner[k], segs, want);
            if (dt == WEFT_F32)
                for (int64_t i = 0; i < segs * inner[k]; i++)
                    want[i] = (float)want[i];
            weft_tensor *in[2] = { test_tensor(dt, 2, (int64_t[]){ rows[k], inner[k] }, x),
                                   test_tensor(WEFT_I64, 1, &rows[k], ids) };
            ix_case c = { .op = SEGMENT, .r = r, .count = segs };
            for (int w = 0; w < N_RT; w++) {
                char what[64];
                snprintf(what, sizeof what, "%u workers, r%d, inner %lld", rt_workers[w], (int)r,
                         (long long)inner[k]);
                check(run_on(rts[w], &c, in), dt, 2, (int64_t[]){ segs, inner[k] }, want, what);
            }
            release_all(in, 2);
        }
        free(x);
        free(ids);
        free(want);
    }
}

/* ---- gather_nd ----------------------------------------------------------- */

/* params [3, 4] = 0..11; tuples of 2 (one negative), of 1, of 0. */
Test(ops_index, gather_nd_every_dtype_and_tuple_length)
{
    double p[12];
    for (int i = 0; i < 12; i++)
        p[i] = i;
    const double idx2[6] = { 1, 2, 0, -1, 2, 0 }, idx1[2] = { 2, 0 };
    for (int di = 0; di < 5; di++) {
        weft_dtype dt = all_dtypes[di];
        double want2[3] = { 6, 3, 8 }, want1[8] = { 8, 9, 10, 11, 0, 1, 2, 3 };
        for (int i = 0; dt == WEFT_BOOL && i < 8; i++) {
            want1[i] = want1[i] != 0;
            if (i < 3)
                want2[i] = want2[i] != 0;
        }
        double want0[24];
        for (int i = 0; i < 24; i++)
            want0[i] = dt == WEFT_BOOL ? p[i % 12] != 0 : p[i % 12];
        weft_tensor *a = test_tensor(dt, 2, (int64_t[]){ 3, 4 }, p);
        weft_tensor *in2[2] = { a, test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 2 }, idx2) };
        weft_tensor *in1[2] = { a, test_tensor(WEFT_I64, 2, (int64_t[]){ 2, 1 }, idx1) };
        weft_tensor *in0[2] = { a, test_tensor(WEFT_I64, 2, (int64_t[]){ 2, 0 }, idx1) };
        ix_case c = { .op = GATHER_ND };
        check(run(&c, in2), dt, 1, (int64_t[]){ 3 }, want2, "tuples of 2");
        check(run(&c, in1), dt, 2, (int64_t[]){ 2, 4 }, want1, "tuples of 1");
        check(run(&c, in0), dt, 3, (int64_t[]){ 2, 3, 4 }, want0, "tuples of 0");
        weft_tensor_release(in2[1]);
        weft_tensor_release(in1[1]);
        weft_tensor_release(in0[1]);
        weft_tensor_release(a);
    }
}

Test(ops_index, gather_nd_unknown_dims_traced)
{
    double p[12], idx[4] = { 2, 3, 0, 1 };
    for (int i = 0; i < 12; i++)
        p[i] = i * 0.5;
    const char *sigs[3][2] = { { "f64[?,4]", "i32[?,2]" }, { "f64[*]", "i32[2,?]" },
                               { "f64[?,?]", "i32[*]" } };
    for (int k = 0; k < 3; k++) {
        weft_tensor *in[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 4 }, p),
                               test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 2 }, idx) };
        ix_case c = { .op = GATHER_ND, .sig = { sigs[k][0], sigs[k][1] } };
        check(run(&c, in), WEFT_F64, 1, (int64_t[]){ 2 }, (double[]){ 5.5, 0.5 }, sigs[k][1]);
        release_all(in, 2);
    }
}

Test(ops_index, gather_nd_errors)
{
    double p[6] = { 0 }, bad[4] = { 0, 1, 1, 3 };
    weft_tensor *in[2] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 3 }, p),
                           test_tensor(WEFT_I64, 2, (int64_t[]){ 2, 2 }, bad) };
    ix_case c = { .op = GATHER_ND };
    refused(&c, in, WEFT_EINVAL, "weft_gather_nd: index 3 (entry 1 of index tuple 1) is out of "
            "range for dim 1 of f32[2,3]");
    c.sig[0] = "f32[?,?]";
    c.sig[1] = "i64[?,2]";
    refused(&c, in, WEFT_EINVAL, "index 3 (entry 1 of index tuple 1)");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_I64, 2, (int64_t[]){ 1, 3 }, bad);
    c = (ix_case){ .op = GATHER_ND };
    refused(&c, in, WEFT_ESHAPE, "index tuples of 3 entries");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 2 }, bad);
    refused(&c, in, WEFT_EDTYPE, "weft_gather_nd: the indices are f64[2,2], not i32 or i64");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_I32, 0, NULL, bad);
    refused(&c, in, WEFT_ESHAPE, "are a scalar");
    release_all(in, 2);
}

/* batch_dims b: params [2, 3, 4] = 0..23; each tuple picks within its
 * own batch element, against loops over the definition. */
Test(ops_index, gather_nd_with_batch_dims)
{
    double p[24];
    for (int i = 0; i < 24; i++)
        p[i] = i;
    /* b 1, tuples of 1: indices [2, 3, 1] -> [2, 3, 4]. */
    const double i1[6] = { 2, 0, -1, 1, 1, 0 };
    double w1[24];
    for (int b = 0; b < 2; b++)
        for (int n = 0; n < 3; n++) {
            int r = (int)i1[b * 3 + n] < 0 ? 3 + (int)i1[b * 3 + n] : (int)i1[b * 3 + n];
            for (int c = 0; c < 4; c++)
                w1[(b * 3 + n) * 4 + c] = p[(b * 3 + r) * 4 + c];
        }
    /* b 1, tuples of 2: indices [2, 2] -> [2]; b 2, tuples of 1:
     * indices [2, 3, 1] -> [2, 3]. */
    const double i2[4] = { 2, 3, 0, 1 }, i3[6] = { 3, 2, 1, 0, 0, 3 };
    double w2[2] = { p[0 * 12 + 2 * 4 + 3], p[1 * 12 + 0 * 4 + 1] }, w3[6];
    for (int b = 0; b < 2; b++)
        for (int r = 0; r < 3; r++)
            w3[b * 3 + r] = p[(b * 3 + r) * 4 + (int)i3[b * 3 + r]];
    weft_tensor *a = test_tensor(WEFT_F32, 3, (int64_t[]){ 2, 3, 4 }, p);
    weft_tensor *in1[2] = { a, test_tensor(WEFT_I32, 3, (int64_t[]){ 2, 3, 1 }, i1) };
    weft_tensor *in2[2] = { a, test_tensor(WEFT_I64, 2, (int64_t[]){ 2, 2 }, i2) };
    weft_tensor *in3[2] = { a, test_tensor(WEFT_I64, 3, (int64_t[]){ 2, 3, 1 }, i3) };
    ix_case c = { .op = GATHER_ND_EX, .axis = 1 };
    check(run(&c, in1), WEFT_F32, 3, (int64_t[]){ 2, 3, 4 }, w1, "batch 1, tuples of 1");
    check(run(&c, in2), WEFT_F32, 1, (int64_t[]){ 2 }, w2, "batch 1, tuples of 2");
    c.axis = 2;
    check(run(&c, in3), WEFT_F32, 2, (int64_t[]){ 2, 3 }, w3, "batch 2, tuples of 1");
    /* Unknown non-batch dims while tracing; batch_dims 0 is gather_nd. */
    c = (ix_case){ .op = GATHER_ND_EX, .axis = 1, .sig = { "f32[2,3,4]", "i32[2,?,1]" } };
    check(run(&c, in1), WEFT_F32, 3, (int64_t[]){ 2, 3, 4 }, w1, "unknown tuple count");
    c = (ix_case){ .op = GATHER_ND_EX, .axis = 3 };
    refused(&c, in3, WEFT_EINVAL, "weft_gather_nd_ex: batch_dims 3 is not within 0..2");
    c.axis = 1;
    weft_tensor *bad[2] = { a, test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 1 }, i1) };
    refused(&c, bad, WEFT_ESHAPE, "differ in batch dim 0");
    release_all(&in1[1], 1);
    release_all(&in2[1], 1);
    release_all(&in3[1], 1);
    release_all(&bad[1], 1);
    weft_tensor_release(a);
}

/* ---- scatter_nd ---------------------------------------------------------- */

/* tensor [3, 2]; rows 2, 0, 2 (-1), so row 2 twice: update keeps the last,
 * add sums both in order. */
Test(ops_index, scatter_nd_every_dtype_with_duplicates)
{
    const double t[6] = { 1, 2, 3, 4, 5, 6 }, idx[3] = { 2, 0, -1 },
                 u[6] = { 10, 20, 30, 40, 50, 60 };
    for (int di = 0; di < 5; di++) {
        weft_dtype dt = all_dtypes[di];
        weft_tensor *in[3] = { test_tensor(dt, 2, (int64_t[]){ 3, 2 }, t),
                               test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 1 }, idx),
                               test_tensor(dt, 2, (int64_t[]){ 3, 2 }, u) };
        double want_u[6] = { 30, 40, 3, 4, 50, 60 }, want_a[6] = { 31, 42, 3, 4, 65, 86 };
        for (int i = 0; dt == WEFT_BOOL && i < 6; i++)
            want_u[i] = 1;
        ix_case c = { .op = SCATTER_UPDATE };
        check(run(&c, in), dt, 2, (int64_t[]){ 3, 2 }, want_u, "update");
        if (dt != WEFT_BOOL) {
            c.op = SCATTER_ADD;
            check(run(&c, in), dt, 2, (int64_t[]){ 3, 2 }, want_a, "add");
        }
        /* the inputs are left as they were */
        cr_assert_eq(test_element(in[0], 4), dt == WEFT_BOOL ? 1 : 5);
        release_all(in, 3);
    }
}

/* tensor [3, 2]; rows 2, 0, 2 (-1) combined with updates some larger and
 * some smaller than what they meet, in index order: row 2 meets (9, -2)
 * then (2, 7), row 0 (7, 1); NaN wins max and min. */
Test(ops_index, scatter_nd_sub_max_min_in_index_order)
{
    const double t[6] = { 1, 8, 3, 4, 5, 6 }, idx[3] = { 2, 0, -1 },
                 u[6] = { 9, -2, 7, 1, 2, 7 };
    const ix_op ops[3] = { SCATTER_SUB, SCATTER_MAX, SCATTER_MIN };
    const double want[3][6] = { { -6, 7, 3, 4, -6, 1 }, { 7, 8, 3, 4, 9, 7 },
                                { 1, 1, 3, 4, 2, -2 } };
    for (int di = 0; di < 4; di++)
        for (int o = 0; o < 3; o++) {
            weft_dtype dt = num_dtypes[di];
            weft_tensor *in[3] = { test_tensor(dt, 2, (int64_t[]){ 3, 2 }, t),
                                   test_tensor(WEFT_I64, 2, (int64_t[]){ 3, 1 }, idx),
                                   test_tensor(dt, 2, (int64_t[]){ 3, 2 }, u) };
            ix_case c = { .op = ops[o] };
            check(run(&c, in), dt, 2, (int64_t[]){ 3, 2 }, want[o], weft_dtype_name(dt));
            release_all(in, 3);
        }
    const double tn[2] = { NAN, 1 }, un[2] = { 5, NAN }, in_idx[2] = { 0, 1 };
    for (int o = 1; o < 3; o++) {
        weft_tensor *in[3] = { test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, tn),
                               test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 1 }, in_idx),
                               test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, un) };
        ix_case c = { .op = ops[o] };
        check(run(&c, in), WEFT_F64, 1, (int64_t[]){ 2 }, (double[]){ NAN, NAN }, "nan");
        release_all(in, 3);
    }
    /* Integers wrap: INT32_MIN - 1. */
    weft_tensor *w[3] = { test_tensor(WEFT_I32, 1, (int64_t[]){ 1 }, (double[]){ INT32_MIN }),
                          test_tensor(WEFT_I32, 2, (int64_t[]){ 1, 1 }, (double[]){ 0 }),
                          test_tensor(WEFT_I32, 1, (int64_t[]){ 1 }, (double[]){ 1 }) };
    ix_case c = { .op = SCATTER_SUB };
    check(run(&c, w), WEFT_I32, 1, (int64_t[]){ 1 }, (double[]){ INT32_MAX }, "wrap");
    release_all(w, 3);
}

/* A whole index tuple picks an element; a weak scalar update takes the
 * tensor's dtype; unknown dims traced. */
Test(ops_index, scatter_nd_elements_weak_and_unknown_dims)
{
    const double t[6] = { 1, 2, 3, 4, 5, 6 }, idx[2] = { 1, 2 };
    weft_tensor *in[2] = { test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 3 }, t),
                           test_tensor(WEFT_I64, 1, (int64_t[]){ 2 }, idx) };
    ix_case c = { .op = SCATTER_ADD, .weak_update = true, .value = 7 };
    check(run(&c, in), WEFT_I32, 2, (int64_t[]){ 2, 3 }, (double[]){ 1, 2, 3, 4, 5, 13 }, "weak");
    c.sig[0] = "i32[?,?]";
    c.sig[1] = "i64[?]";
    c.op = SCATTER_UPDATE;
    check(run(&c, in), WEFT_I32, 2, (int64_t[]){ 2, 3 }, (double[]){ 1, 2, 3, 4, 5, 7 }, "traced");
    release_all(in, 2);

    const double idx2[2] = { 0, 1 }, u[4] = { -1, -2, -3, -4 };
    weft_tensor *in3[3] = { test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 3 }, t),
                            test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 1 }, idx2),
                            test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 2 }, u) };
    c = (ix_case){ .op = SCATTER_UPDATE };
    refused(&c, in3, WEFT_ESHAPE, "weft_scatter_nd_update: the updates f32[2,2] do not have the "
            "shape");
    c.sig[0] = "f32[*]";
    c.sig[1] = "i32[?,?]";
    c.sig[2] = "f32[?,?]";
    refused(&c, in3, WEFT_ESHAPE, "the updates f32[2,2]");
    release_all(in3, 3);
}

/* tf.scatter_nd's documented examples: elements into a vector, and whole
 * [4, 4] slices into a [4, 4, 4]; duplicates sum. */
Test(ops_index, scatter_nd_into_zeros_like_tensorflow)
{
    const double idx[4] = { 4, 3, 1, 7 }, u[4] = { 9, 10, 11, 12 };
    for (int di = 0; di < 4; di++) {
        weft_dtype dt = num_dtypes[di];
        weft_tensor *in[2] = { test_tensor(WEFT_I32, 2, (int64_t[]){ 4, 1 }, idx),
                               test_tensor(dt, 1, (int64_t[]){ 4 }, u) };
        ix_case c = { .op = SCATTER_NEW, .shifts = (const int64_t[]){ 8 }, .n_axes = 1 };
        check(run(&c, in), dt, 1, (int64_t[]){ 8 }, (double[]){ 0, 11, 0, 10, 9, 0, 0, 12 },
              weft_dtype_name(dt));
        release_all(in, 2);
    }
    double slices[32];
    for (int i = 0; i < 32; i++)
        slices[i] = i < 16 ? 5 + i / 4 % 4 : 1 + i / 4 % 4;
    weft_tensor *in[2] = { test_tensor(WEFT_I64, 2, (int64_t[]){ 2, 1 }, (double[]){ 0, 2 }),
                           test_tensor(WEFT_F32, 3, (int64_t[]){ 2, 4, 4 }, slices) };
    ix_case c = { .op = SCATTER_NEW, .shifts = (const int64_t[]){ 4, 4, 4 }, .n_axes = 3 };
    double want[64] = { 0 };
    for (int i = 0; i < 16; i++) {
        want[i] = slices[i];
        want[32 + i] = slices[16 + i];
    }
    check(run(&c, in), WEFT_F32, 3, (int64_t[]){ 4, 4, 4 }, want, "slices");
    release_all(in, 2);
    weft_tensor *dup[2] = { test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 1 }, (double[]){ 1, 1, 0 }),
                            test_tensor(WEFT_I64, 1, (int64_t[]){ 3 }, (double[]){ 1, 2, 4 }) };
    c = (ix_case){ .op = SCATTER_NEW, .shifts = (const int64_t[]){ 3 }, .n_axes = 1 };
    check(run(&c, dup), WEFT_I64, 1, (int64_t[]){ 3 }, (double[]){ 4, 3, 0 }, "duplicates");
    c.shifts = (const int64_t[]){ -1 };
    refused(&c, dup, WEFT_EINVAL, "weft_scatter_nd: dims[0] is -1");
    c.n_axes = 9;
    refused(&c, dup, WEFT_EINVAL, "weft_scatter_nd: rank 9");
    release_all(dup, 2);
}

Test(ops_index, scatter_nd_errors)
{
    const double t[4] = { 0 }, idx[2] = { 1, 2 };
    weft_tensor *in[3] = { test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, t),
                           test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 1 }, idx),
                           test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, t) };
    ix_case c = { .op = SCATTER_ADD };
    refused(&c, in, WEFT_EINVAL, "weft_scatter_nd_add: index 2 (entry 0 of index tuple 1) is out "
            "of range for dim 0 of f64[2]");
    c.sig[0] = "f64[?]";
    c.sig[1] = "i32[?,1]";
    c.sig[2] = "f64[?]";
    refused(&c, in, WEFT_EINVAL, "index 2 (entry 0 of index tuple 1)");
    weft_tensor_release(in[2]);
    in[2] = test_tensor(WEFT_F32, 1, (int64_t[]){ 2 }, t);
    c = (ix_case){ .op = SCATTER_UPDATE };
    refused(&c, in, WEFT_EDTYPE, "the updates f32[2] are not of the dtype of the tensor f64[2]");
    release_all(in, 3);
    weft_tensor *b[3] = { test_tensor(WEFT_BOOL, 1, (int64_t[]){ 2 }, t),
                          test_tensor(WEFT_I32, 2, (int64_t[]){ 1, 1 }, idx),
                          test_tensor(WEFT_BOOL, 1, (int64_t[]){ 1 }, t) };
    c.op = SCATTER_ADD;
    refused(&c, b, WEFT_EDTYPE, "weft_scatter_nd_add: the tensor bool[2] is bool");
    c.op = SCATTER_MAX;
    refused(&c, b, WEFT_EDTYPE, "weft_scatter_nd_max: the tensor bool[2] is bool");
    c.op = SCATTER_SUB;
    refused(&c, b, WEFT_EDTYPE, "weft_scatter_nd_sub: the tensor bool[2] is bool");
    release_all(b, 3);
}

/* Sums of duplicate elements (inner 1: chunks own rows) and of duplicate
 * rows (inner 256: chunks own columns), in index order on any worker
 * count: the reference adds in f32 in the same order. */
Test(ops_index, scatter_nd_add_and_max_large_same_on_every_worker_count)
{
    const int64_t rows[2] = { 50000, 160 }, inner[2] = { 1, 256 }, n_idx[2] = { 60000, 400 };
    for (int k = 0; k < 2; k++) {
        int64_t n = rows[k] * inner[k], nu = n_idx[k] * inner[k];
        double *t = malloc(sizeof *t * (size_t)n), *u = malloc(sizeof *u * (size_t)nu);
        double *idx = malloc(sizeof *idx * (size_t)n_idx[k]);
        float *ref = malloc(sizeof *ref * (size_t)n);
        uint64_t s = 777;
        for (int64_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            t[i] = (double)(float)((double)(s >> 40) / 16777216.0);
            ref[i] = (float)t[i];
        }
        for (int64_t i = 0; i < nu; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            u[i] = (double)(float)((double)(s >> 40) / 16777216.0 - 0.5);
        }
        for (int64_t i = 0; i < n_idx[k]; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            idx[i] = (double)((s >> 33) % (uint64_t)rows[k]);
            for (int64_t c = 0; c < inner[k]; c++)
                ref[(int64_t)idx[i] * inner[k] + c] += (float)u[i * inner[k] + c];
        }
        double *want = malloc(sizeof *want * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            want[i] = ref[i];
        weft_tensor *in[3] = { test_tensor(WEFT_F32, 2, (int64_t[]){ rows[k], inner[k] }, t),
                               test_tensor(WEFT_I64, 2, (int64_t[]){ n_idx[k], 1 }, idx),
                               test_tensor(WEFT_F32, 2, (int64_t[]){ n_idx[k], inner[k] }, u) };
        ix_case c = { .op = SCATTER_ADD };
        for (int w = 0; w < N_RT; w++) {
            char what[64];
            snprintf(what, sizeof what, "%u workers, inner %lld", rt_workers[w],
                     (long long)inner[k]);
            check(run_on(rts[w], &c, in), WEFT_F32, 2, (int64_t[]){ rows[k], inner[k] }, want,
                  what);
        }
        /* The same updates by maximum: each element the largest it met. */
        for (int64_t i = 0; i < n; i++)
            want[i] = t[i];
        for (int64_t i = 0; i < n_idx[k]; i++)
            for (int64_t c2 = 0; c2 < inner[k]; c2++) {
                double *o = &want[(int64_t)idx[i] * inner[k] + c2];
                *o = fmax(*o, u[i * inner[k] + c2]);
            }
        c.op = SCATTER_MAX;
        for (int w = 0; w < N_RT; w++)
            check(run_on(rts[w], &c, in), WEFT_F32, 2, (int64_t[]){ rows[k], inner[k] }, want,
                  "max");
        release_all(in, 3);
        free(t);
        free(u);
        free(idx);
        free(ref);
        free(want);
    }
}

/* ---- roll and repeat ----------------------------------------------------- */

/* [2, 5]: roll along each axis by several shifts, against (i - shift) mod n. */
Test(ops_index, roll_every_dtype_and_shift)
{
    double x[10];
    for (int i = 0; i < 10; i++)
        x[i] = i + 1;
    const int64_t shifts[6] = { 0, 1, -1, 7, -13, INT64_MIN };
    for (int di = 0; di < 5; di++) {
        weft_dtype dt = all_dtypes[di];
        weft_tensor *in = test_tensor(dt, 2, (int64_t[]){ 2, 5 }, x);
        for (int si = 0; si < 6; si++) {
            for (int axis = -1; axis < 2; axis++) {
                int ax = axis < 0 ? 1 : axis, m = ax ? 5 : 2;
                double want[10];
                for (int r = 0; r < 2; r++)
                    for (int col = 0; col < 5; col++) {
                        int i = ax ? col : r;
                        int64_t src = ((int64_t)i - shifts[si] % m) % m;
                        src = src < 0 ? src + m : src;
                        int sr = ax ? r : (int)src, sc = ax ? (int)src : col;
                        want[r * 5 + col] = dt == WEFT_BOOL ? 1 : x[sr * 5 + sc];
                    }
                ix_case c = { .op = ROLL, .count = shifts[si], .axis = axis };
                char what[64];
                snprintf(what, sizeof what, "roll %s by %lld on %d", weft_dtype_name(dt),
                         (long long)shifts[si], axis);
                check(run(&c, &in), dt, 2, (int64_t[]){ 2, 5 }, want, what);
            }
        }
        weft_tensor_release(in);
    }
}

/* fftshift and ifftshift of [3, 4] (an odd and an even dim) over every
 * axis, one axis and an axis named twice, against numpy's definition
 * (out[i] = x[(i -+ floor(m / 2)) mod m]), with dims known and unknown
 * while tracing; ifftshift undoes fftshift; the refused calls. */
Test(ops_index, fftshift_and_ifftshift_like_numpy)
{
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = i + 1;
    weft_tensor *in = test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 4 }, x);
    const int both[2] = { 0, 1 }, last[1] = { -1 }, twice[2] = { 0, 0 };
    struct { const int *axes; size_t n; int steps[2]; } forms[4] = {
        { NULL, 0, { 1, 1 } }, { both, 2, { 1, 1 } }, { last, 1, { 0, 1 } }, { twice, 2, { 2, 0 } },
    };
    for (int inverse = 0; inverse < 2; inverse++)
        for (int fi = 0; fi < 4; fi++)
            for (int known = 0; known < 2; known++) {
                double want[12];
                for (int r = 0; r < 3; r++)
                    for (int col = 0; col < 4; col++) {
                        int sr = r, sc = col, sign = inverse ? 1 : -1;
                        for (int k = 0; k < forms[fi].steps[0]; k++)
                            sr = (sr + sign * (3 / 2) + 3) % 3;
                        for (int k = 0; k < forms[fi].steps[1]; k++)
                            sc = (sc + sign * (4 / 2) + 4) % 4;
                        want[r * 4 + col] = x[sr * 4 + sc];
                    }
                ix_case c = { .op = inverse ? IFFTSHIFT : FFTSHIFT, .axes = forms[fi].axes,
                              .n_axes = forms[fi].n, .sig = { known ? "i32[3,4]" : "i32[?,?]" } };
                char what[64];
                snprintf(what, sizeof what, "%s form %d, dims %s", inverse ? "ifftshift" :
                         "fftshift", fi, known ? "known" : "unknown");
                check(run(&c, &in), WEFT_I32, 2, (int64_t[]){ 3, 4 }, want, what);
            }
    /* numpy: fftshift([0 1 2 3 4]) is [3 4 0 1 2], ifftshift [2 3 4 0 1]. */
    weft_tensor *five = test_tensor(WEFT_F64, 1, (int64_t[]){ 5 }, (double[]){ 0, 1, 2, 3, 4 });
    ix_case c = { .op = FFTSHIFT };
    check(run(&c, &five), WEFT_F64, 1, (int64_t[]){ 5 }, (double[]){ 3, 4, 0, 1, 2 }, "numpy");
    c.op = IFFTSHIFT;
    check(run(&c, &five), WEFT_F64, 1, (int64_t[]){ 5 }, (double[]){ 2, 3, 4, 0, 1 }, "numpy");
    c = (ix_case){ .op = FFTSHIFT, .axes = (int[]){ 1, 2 }, .n_axes = 2 };
    refused(&c, &in, WEFT_EINVAL, "weft_fftshift: axis 2 (entry 1) is out of range for i32[3,4]");
    c = (ix_case){ .op = IFFTSHIFT, .axes = NULL, .n_axes = 1 };
    refused(&c, &in, WEFT_EINVAL, "weft_ifftshift: axes is NULL with n 1");
    c = (ix_case){ .op = FFTSHIFT, .sig = { "i32[*]" } };
    weft_function *f = make(rts[1], &c, 0);
    weft_arg arg = weft_arg_tensor(in);
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_fftshift: every axis of i32[*] (n 0) needs the rank "
                     "known while tracing"), "%s", weft_errmsg());
    weft_function_destroy(&f);
    weft_tensor_release(five);
    weft_tensor_release(in);
}

/* unsorted_segment_sqrt_n: TensorFlow's sum / sqrt(max(count, 1)) per
 * segment, an id of -1 dropped, empty segments 0; f32 and f64, ids of
 * rank 2 on data of rank 3; refused integers. */
Test(ops_index, unsorted_segment_sqrt_n_like_tensorflow)
{
    const double x[6 * 2] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    const double ids[6] = { 0, 2, 0, -1, 2, 0 };
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
        weft_tensor *in[2] = { test_tensor(dt, 3, (int64_t[]){ 3, 2, 2 }, x),
                               test_tensor(WEFT_I32, 2, (int64_t[]){ 3, 2 }, ids) };
        double want[4 * 2] = { 0 };
        for (int seg = 0; seg < 4; seg++) {
            int n = 0;
            for (int i = 0; i < 6; i++)
                n += ids[i] == seg;
            for (int j = 0; j < 2; j++) {
                double sum = 0;
                for (int i = 0; i < 6; i++)
                    sum += ids[i] == seg ? x[i * 2 + j] : 0;
                want[seg * 2 + j] = sum / sqrt(n > 1 ? n : 1);
                if (dt == WEFT_F32)
                    want[seg * 2 + j] = (float)((float)sum / sqrtf((float)(n > 1 ? n : 1)));
            }
        }
        ix_case c = { .op = SQRT_N, .count = 4 };
        check(run(&c, in), dt, 2, (int64_t[]){ 4, 2 }, want, "sqrt_n");
        release_all(in, 2);
    }
    weft_tensor *ints[2] = { test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, (double[]){ 1, 2 }),
                             test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, (double[]){ 0, 0 }) };
    ix_case c = { .op = SQRT_N, .count = 1 };
    refused(&c, ints, WEFT_EDTYPE, "weft_unsorted_segment_sqrt_n: data i32[2] is not f32 or f64");
    release_all(ints, 2);
}

/* unravel_index of a vector, a scalar and a matrix of indices against
 * numpy's row-major coordinates; i32 indices in dims whose product or
 * strides pass INT32_MAX; unknown dims; indices out of range fail when the
 * function runs; the refused calls. */
Test(ops_index, unravel_index_like_numpy)
{
    weft_tensor *v = test_tensor(WEFT_I64, 1, (int64_t[]){ 5 }, (double[]){ 0, 5, 11, 23, 17 });
    ix_case c = { .op = UNRAVEL, .shifts = (int64_t[]){ 2, 3, 4 }, .n_axes = 3 };
    const double want_v[15] = { 0, 0, 0, 1, 1, /* / 12 */ 0, 1, 2, 2, 1, /* / 4 % 3 */
                                0, 1, 3, 3, 1 /* % 4 */ };
    check(run(&c, &v), WEFT_I64, 2, (int64_t[]){ 3, 5 }, want_v, "vector");
    c.sig[0] = "i64[?]";
    check(run(&c, &v), WEFT_I64, 2, (int64_t[]){ 3, 5 }, want_v, "vector, dims unknown");
    weft_tensor *sc = test_tensor(WEFT_I32, 0, NULL, (double[]){ 7 });
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 3, 4 }, .n_axes = 2 };
    check(run(&c, &sc), WEFT_I32, 1, (int64_t[]){ 2 }, (double[]){ 1, 3 }, "scalar");
    weft_tensor *m = test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 2 }, (double[]){ 0, 6, 13, 19 });
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 4, 5 }, .n_axes = 2 };
    check(run(&c, &m), WEFT_I32, 3, (int64_t[]){ 2, 2, 2 }, (double[]){ 0, 1, 2, 3, 0, 1, 3, 4 },
          "matrix");
    /* i32 indices: a product past INT32_MAX has no upper bound to check,
     * a stride past it gives 0 and a dim past it no modulo. */
    weft_tensor *big = test_tensor(WEFT_I32, 1, (int64_t[]){ 2 },
                                   (double[]){ 3 * 1048576 + 5, INT32_MAX });
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 1 << 20, 1 << 20 }, .n_axes = 2 };
    check(run(&c, &big), WEFT_I32, 2, (int64_t[]){ 2, 2 },
          (double[]){ 3, 2047, 5, 1048575 }, "i32 in 2^40 elements");
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 3, 1LL << 40, 2 }, .n_axes = 3 };
    check(run(&c, &big), WEFT_I32, 2, (int64_t[]){ 3, 2 },
          (double[]){ 0, 0, (3 * 1048576 + 5) / 2, INT32_MAX / 2, 1, 1 }, "a dim past i32");
    weft_tensor *out_of_range[2] = {
        test_tensor(WEFT_I64, 1, (int64_t[]){ 3 }, (double[]){ 0, 24, 1 }),
        test_tensor(WEFT_I64, 1, (int64_t[]){ 3 }, (double[]){ 0, 1, -1 }),
    };
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 2, 3, 4 }, .n_axes = 3 };
    for (int k = 0; k < 2; k++)
        refused(&c, &out_of_range[k], WEFT_EINVAL,
                "weft_unravel_index: an index is out of range for dims [2,3,4]");
    c.n_axes = 0;
    refused(&c, &v, WEFT_EINVAL, "weft_unravel_index: no dims (n is 0)");
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 2, 0 }, .n_axes = 2 };
    refused(&c, &v, WEFT_EINVAL, "weft_unravel_index: dims[1] is 0, not positive");
    weft_tensor *f = test_tensor(WEFT_F32, 1, (int64_t[]){ 1 }, (double[]){ 1 });
    c = (ix_case){ .op = UNRAVEL, .shifts = (int64_t[]){ 2 }, .n_axes = 1 };
    refused(&c, &f, WEFT_EDTYPE, "weft_unravel_index: indices f32[1] are not i32 or i64");
    weft_tensor *all[7] = { v, sc, m, big, out_of_range[0], out_of_range[1], f };
    release_all(all, 7);
}

Test(ops_index, repeat_every_dtype_and_axis)
{
    double x[6] = { 1, 2, 3, 4, 5, 6 };
    for (int di = 0; di < 5; di++) {
        weft_dtype dt = all_dtypes[di];
        weft_tensor *in = test_tensor(dt, 2, (int64_t[]){ 2, 3 }, x);
        double w0[12] = { 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6 };
        double w1[12] = { 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6 };
        for (int i = 0; dt == WEFT_BOOL && i < 12; i++)
            w0[i] = w1[i] = 1;
        ix_case c = { .op = REPEAT, .count = 2, .axis = 0 };
        check(run(&c, &in), dt, 2, (int64_t[]){ 4, 3 }, w0, "repeat axis 0");
        c.axis = -1;
        check(run(&c, &in), dt, 2, (int64_t[]){ 2, 6 }, w1, "repeat axis -1");
        c.count = 0;
        check(run(&c, &in), dt, 2, (int64_t[]){ 2, 0 }, NULL, "repeat 0 times");
        weft_tensor_release(in);
    }
}

Test(ops_index, roll_repeat_unknown_dims_and_errors)
{
    double x[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *in = test_tensor(WEFT_I64, 2, (int64_t[]){ 2, 3 }, x);
    ix_case c = { .op = ROLL, .count = 1, .axis = 1, .sig = { "i64[*]" } };
    check(run(&c, &in), WEFT_I64, 2, (int64_t[]){ 2, 3 }, (double[]){ 3, 1, 2, 6, 4, 5 }, "roll");
    c = (ix_case){ .op = REPEAT, .count = 3, .axis = 0, .sig = { "i64[?,3]" } };
    double want[18];
    for (int i = 0; i < 18; i++)
        want[i] = x[(i / 9) * 3 + i % 3];
    check(run(&c, &in), WEFT_I64, 2, (int64_t[]){ 6, 3 }, want, "repeat");
    c = (ix_case){ .op = REPEAT, .count = -1 };
    refused(&c, &in, WEFT_EINVAL, "weft_repeat: repeats -1 is negative");
    c = (ix_case){ .op = ROLL, .count = 1, .axis = 2 };
    refused(&c, &in, WEFT_EINVAL, "weft_roll: axis 2 is out of range for i64[2,3]");
    c.sig[0] = "i64[*]";
    refused(&c, &in, WEFT_EINVAL, "weft_roll: axis 2 is out of range for i64[2,3]");
    weft_tensor_release(in);
}

/* [2, 5] rolled on both axes at once, an axis named twice (the shifts
 * add), and the checks: no axis, NULL arrays, an axis out of range named
 * by its entry. */
Test(ops_index, roll_axes_like_tf_roll_with_lists)
{
    double x[10];
    for (int i = 0; i < 10; i++)
        x[i] = i;
    weft_tensor *in = test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 5 }, x);
    /* out[r][c] = x[(r - 1) mod 2][(c + 2) mod 5]. */
    double want[10];
    for (int r = 0; r < 2; r++)
        for (int col = 0; col < 5; col++)
            want[r * 5 + col] = x[((r + 1) % 2) * 5 + (col + 2) % 5];
    ix_case c = { .op = ROLL_AXES, .shifts = (int64_t[]){ 1, -2 }, .axes = (int[]){ 0, -1 },
                  .n_axes = 2 };
    check(run(&c, &in), WEFT_F32, 2, (int64_t[]){ 2, 5 }, want, "two axes");
    c.sig[0] = "f32[?,?]";
    check(run(&c, &in), WEFT_F32, 2, (int64_t[]){ 2, 5 }, want, "two axes, unknown dims");
    c = (ix_case){ .op = ROLL_AXES, .shifts = (int64_t[]){ 2, 3 }, .axes = (int[]){ 1, 1 },
                   .n_axes = 2 };
    check(run(&c, &in), WEFT_F32, 2, (int64_t[]){ 2, 5 }, x, "one axis twice: 5, a full turn");
    c.n_axes = 0;
    refused(&c, &in, WEFT_EINVAL, "weft_roll_axes: no axis to roll (n is 0)");
    c = (ix_case){ .op = ROLL_AXES, .shifts = NULL, .axes = (int[]){ 1 }, .n_axes = 1 };
    refused(&c, &in, WEFT_EINVAL, "weft_roll_axes: shifts or axes is NULL");
    c = (ix_case){ .op = ROLL_AXES, .shifts = (int64_t[]){ 1, 1 }, .axes = (int[]){ 0, 2 },
                   .n_axes = 2 };
    refused(&c, &in, WEFT_EINVAL, "weft_roll_axes: axis 2 (entry 1) is out of range for f32[2,5]");
    /* Traced with the rank unknown, weft_roll's own check fails the call
     * (eagerly the rank is known, and the message the one above). */
    c.sig[0] = "f32[*]";
    refused(&c, &in, WEFT_EINVAL, "is out of range for f32[2,5]");
    weft_tensor_release(in);
}

/* [2, 3] with a count per element on either axis, one count for every
 * element, all counts 0, known dims under unknown ones, and the checks. */
Test(ops_index, repeat_counts_like_tf_repeat_with_a_list)
{
    double x[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *in = test_tensor(WEFT_I32, 2, (int64_t[]){ 2, 3 }, x);
    ix_case c = { .op = REPEAT_COUNTS, .shifts = (int64_t[]){ 1, 0, 2 }, .n_axes = 3,
                  .axis = -1 };
    double w1[6] = { 1, 3, 3, 4, 6, 6 };
    check(run(&c, &in), WEFT_I32, 2, (int64_t[]){ 2, 3 }, w1, "axis -1");
    c.sig[0] = "i32[?,3]";
    check(run(&c, &in), WEFT_I32, 2, (int64_t[]){ 2, 3 }, w1, "axis -1, dim 0 unknown");
    c = (ix_case){ .op = REPEAT_COUNTS, .shifts = (int64_t[]){ 2, 1 }, .n_axes = 2, .axis = 0 };
    double w0[9] = { 1, 2, 3, 1, 2, 3, 4, 5, 6 };
    check(run(&c, &in), WEFT_I32, 2, (int64_t[]){ 3, 3 }, w0, "axis 0");
    c = (ix_case){ .op = REPEAT_COUNTS, .shifts = (int64_t[]){ 2 }, .n_axes = 1, .axis = 1,
                   .sig = { "i32[*]" } };
    double w2[12] = { 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6 };
    check(run(&c, &in), WEFT_I32, 2, (int64_t[]){ 2, 6 }, w2, "one count for all");
    c = (ix_case){ .op = REPEAT_COUNTS, .shifts = (int64_t[]){ 0, 0 }, .n_axes = 2, .axis = 0 };
    check(run(&c, &in), WEFT_I32, 2, (int64_t[]){ 0, 3 }, NULL, "all counts 0");

    c = (ix_case){ .op = REPEAT_COUNTS, .shifts = (int64_t[]){ 1, -1, 1 }, .n_axes = 3, .axis = 1 };
    refused(&c, &in, WEFT_EINVAL, "weft_repeat_counts: counts[1] is -1, negative");
    c.n_axes = 2;
    c.shifts = (int64_t[]){ 1, 1 };
    refused(&c, &in, WEFT_EINVAL, "weft_repeat_counts: 2 counts for axis 1 of i32[2,3] (3 elements)");
    c.n_axes = 0;
    refused(&c, &in, WEFT_EINVAL, "weft_repeat_counts: no counts (n is 0)");
    c = (ix_case){ .op = REPEAT_COUNTS, .shifts = (int64_t[]){ 1, 1, 1 }, .n_axes = 3, .axis = 2 };
    refused(&c, &in, WEFT_EINVAL, "weft_repeat_counts: axis 2 is out of range for i32[2,3]");
    /* Traced only: eagerly every dim is known. */
    c.axis = 1;
    const char *sigs[2] = { "i32[2,?]", "i32[*]" };
    const char *msgs[2] = { "weft_repeat_counts: axis 1 of i32[2,?] is unknown while tracing",
                            "weft_repeat_counts: the rank of i32[*] is unknown while tracing" };
    for (int k = 0; k < 2; k++) {
        c.sig[0] = sigs[k];
        weft_function *f = make(rts[1], &c, 0);
        weft_arg arg = weft_arg_tensor(in);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), WEFT_EINVAL, "%s", sigs[k]);
        cr_assert(strstr(weft_errmsg(), msgs[k]), "\"%s\" lacks \"%s\"", weft_errmsg(), msgs[k]);
        weft_function_destroy(&f);
    }
    weft_tensor_release(in);
}

/* Large rolls and repeats split over workers give the same bits. */
Test(ops_index, roll_repeat_large_same_on_every_worker_count)
{
    int64_t n = 90001;
    double *x = malloc(sizeof *x * (size_t)n), *wr = malloc(sizeof *wr * (size_t)n);
    double *wp = malloc(sizeof *wp * (size_t)(2 * n));
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)i;
    for (int64_t i = 0; i < n; i++) {
        wr[(i + 12345) % n] = x[i];
        wp[2 * i] = wp[2 * i + 1] = x[i];
    }
    weft_tensor *in = test_tensor(WEFT_I32, 1, &n, x);
    for (int w = 0; w < N_RT; w++) {
        ix_case c = { .op = ROLL, .count = 12345 };
        check(run_on(rts[w], &c, &in), WEFT_I32, 1, &n, wr, "roll");
        c = (ix_case){ .op = REPEAT, .count = 2 };
        check(run_on(rts[w], &c, &in), WEFT_I32, 1, (int64_t[]){ 2 * n }, wp, "repeat");
    }
    weft_tensor_release(in);
    free(x);
    free(wr);
    free(wp);
}

/* ---- The compiler ------------------------------------------------------- */

/* Two equal segment sums merge into one node; a different num_segments
 * does not; the gather_nd of two constants folds into a constant. */
static int body_compiler(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *ids = weft_range(cx, WEFT_I32, 0, 4, 1);
    weft_value *a = weft_unsorted_segment(cx, WEFT_R_SUM, args[0], ids, 4);
    weft_value *b = weft_unsorted_segment(cx, WEFT_R_SUM, args[0], ids, 4);
    weft_value *c = weft_unsorted_segment(cx, WEFT_R_SUM, args[0], ids, 5);
    weft_value *idx = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, 2, 1), 2, (int64_t[]){ 2, 1 });
    weft_value *g = weft_gather_nd(cx, weft_range(cx, WEFT_F32, 10, 14, 1), idx);
    weft_value *s = weft_add(cx, weft_sum(cx, weft_add(cx, a, b), WEFT_ALL_AXES),
                             weft_sum(cx, c, WEFT_ALL_AXES));
    outs[0] = weft_add(cx, s, weft_sum(cx, g, WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

Test(ops_index, compiler_merges_and_folds)
{
    weft_function_desc d = { .name = "ops", .body = body_compiler, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    double x[4] = { 1, 2, 3, 4 };
    weft_tensor *in = test_tensor(WEFT_F32, 1, (int64_t[]){ 4 }, x), *out = NULL;
    weft_arg a = weft_arg_tensor(in);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    /* 2 * 10 + 10 + (10 + 11) */
    check(out, WEFT_F32, 0, NULL, (double[]){ 51 }, "result");
    char *text = test_ops_text(f);
    cr_assert_eq(test_count(text, "unsorted_segment<sum,num_segments=4>"), 1, "%s", text);
    cr_assert_eq(test_count(text, "unsorted_segment<sum,num_segments=5>"), 1, "%s", text);
    cr_assert_eq(test_count(text, "gather_nd"), 0, "%s", text);
    free(text);
    weft_tensor_release(in);
    weft_function_destroy(&f);
}
