/* bucketize and reverse_sequence: values against references computed
 * here (upper_bound over the boundaries; each batch element's prefix
 * reversed by a loop), every dtype bucketize takes with NaN, infinities
 * and values on the boundaries, f32's rounded boundaries, a traced
 * function whose first dim is unknown, the same bits eagerly and traced on
 * 1, 2 and 4 workers, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_sequence, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

/* ---- bucketize ----------------------------------------------------------- */

typedef struct bk_case {
    const double *b;
    size_t n;
} bk_case;

static int bk_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const bk_case *c = user;
    outs[0] = weft_bucketize(cx, a[0], c->b, c->n);
    return weft_ctx_status(cx);
}

static weft_tensor *bucketize(const double *b, size_t n, weft_tensor *x)
{
    bk_case c = { b, n };
    weft_tensor *out;
    op_results_everywhere(bk_body, &c, &x, 1, &out, 1, "bucketize");
    cr_assert_eq(weft_tensor_dtype(out), WEFT_I32);
    cr_assert_eq(weft_tensor_rank(out), weft_tensor_rank(x));
    for (int d = 0; d < weft_tensor_rank(x); d++)
        cr_assert_eq(weft_tensor_dims(out)[d], weft_tensor_dims(x)[d]);
    return out;
}

/* std::upper_bound's index: the first boundary above v (NaN: none). */
static int32_t upper_bound(const double *b, size_t n, double v)
{
    size_t i = 0;
    while (i < n && !(v < b[i]))
        i++;
    return (int32_t)i;
}

Test(ops_sequence, bucketize_every_dtype)
{
    static const double b[4] = { -1, 0, 2.5, 10 };
    const double v[12] = { -INFINITY, -2, -1, -0.5, 0, 0.1, 2.5, 3, 10, 11, INFINITY, NAN };
    int64_t dims[2] = { 3, 4 };
    weft_tensor *x64 = NULL, *x32 = NULL;
    float f[12];
    for (int i = 0; i < 12; i++)
        f[i] = (float)v[i];
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, dims, v, &x64), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, f, &x32), 0);
    weft_tensor *xs[2] = { x64, x32 };
    for (int k = 0; k < 2; k++) {
        weft_tensor *y = bucketize(b, 4, xs[k]);
        const int32_t *g = weft_tensor_data(y);
        for (int i = 0; i < 12; i++)
            cr_assert_eq(g[i], upper_bound(b, 4, v[i]), "%s x %g: bucket %d",
                         k ? "f32" : "f64", v[i], g[i]);
        cr_assert_eq(g[11], 4, "NaN goes past every boundary");
        weft_tensor_release(y);
        weft_tensor_release(xs[k]);
    }
    /* Integers, against boundaries between them and on them. */
    static const double bi[3] = { -1.5, 2, 2.5 };
    const int32_t vi[5] = { -2, -1, 2, 3, 2147483647 };
    const int64_t vl[5] = { -2, -1, 2, 3, INT64_MIN };
    int64_t five = 5;
    weft_tensor *xi = NULL, *xl = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &five, vi, &xi), 0);
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, &five, vl, &xl), 0);
    weft_tensor *yi = bucketize(bi, 3, xi), *yl = bucketize(bi, 3, xl);
    const int32_t want_i[5] = { 0, 1, 2, 3, 3 }, want_l[5] = { 0, 1, 2, 3, 0 };
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(((const int32_t *)weft_tensor_data(yi))[i], want_i[i], "i32 %d", i);
        cr_assert_eq(((const int32_t *)weft_tensor_data(yl))[i], want_l[i], "i64 %d", i);
    }
    weft_tensor_release(yi);
    weft_tensor_release(yl);
    /* No boundaries: every element in bucket 0. */
    weft_tensor *y0 = bucketize(NULL, 0, xi);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(((const int32_t *)weft_tensor_data(y0))[i], 0);
    weft_tensor_release(y0);
    weft_tensor_release(xi);
    weft_tensor_release(xl);
}

/* An f32 x compares with the boundaries rounded to f32: 0.1000000015
 * rounds to 0.1f, which 0.1f reaches, though in f64 it stays below. */
Test(ops_sequence, bucketize_rounds_boundaries_for_f32)
{
    static const double b[1] = { 0.1000000015 };
    cr_assert((double)0.1f < b[0] && (float)b[0] == 0.1f);
    int64_t one = 1;
    weft_tensor *x32 = NULL, *x64 = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &one, (const float[]){ 0.1f }, &x32), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &one, (const double[]){ (double)0.1f }, &x64),
                 0);
    weft_tensor *y32 = bucketize(b, 1, x32), *y64 = bucketize(b, 1, x64);
    cr_assert_eq(((const int32_t *)weft_tensor_data(y32))[0], 1);
    cr_assert_eq(((const int32_t *)weft_tensor_data(y64))[0], 0);
    weft_tensor_release(y32);
    weft_tensor_release(y64);
    weft_tensor_release(x32);
    weft_tensor_release(x64);
}

/* Traced once for f32[?, 3], called with 2 and 4 rows. */
Test(ops_sequence, bucketize_with_an_unknown_dim)
{
    static const double b[2] = { 0, 1 };
    bk_case c = { b, 2 };
    weft_spec sig = { .dtype = WEFT_F32, .rank = 2, .dims = { -1, 3 } };
    weft_function *f = op_signature_function(rts[1], bk_body, &c, &sig, 1);
    for (int64_t rows = 2; rows <= 4; rows += 2) {
        float v[12];
        for (int i = 0; i < 12; i++)
            v[i] = (float)(i % 5) * 0.5f - 0.5f;
        weft_tensor *x = NULL, *y = NULL;
        cr_assert_eq(weft_tensor_create(WEFT_F32, 2, (const int64_t[]){ rows, 3 }, v, &x), 0);
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dims(y)[0], rows);
        cr_assert_eq(weft_tensor_dims(y)[1], 3);
        for (int64_t i = 0; i < rows * 3; i++)
            cr_assert_eq(((const int32_t *)weft_tensor_data(y))[i], upper_bound(b, 2, v[i]),
                         "rows %lld, element %lld", (long long)rows, (long long)i);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
}

/* ---- reverse_sequence ---------------------------------------------------- */

typedef struct rs_case {
    int seq_axis, batch_axis;
} rs_case;

static int rs_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const rs_case *c = user;
    outs[0] = weft_reverse_sequence(cx, a[0], a[1], c->seq_axis, c->batch_axis);
    return weft_ctx_status(cx);
}

/* x of dims[0..3) i32, each element its row-major position. */
static weft_tensor *positions(const int64_t *dims)
{
    int64_t n = dims[0] * dims[1] * dims[2];
    int32_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (int32_t)i;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 3, dims, v, &t), 0);
    free(v);
    return t;
}

/* out against the reference for x of dims with positions as values. */
static void check_reversed(const weft_tensor *out, const int64_t *dims, int seq, int batch,
                           const int64_t *len)
{
    const int32_t *g = weft_tensor_data(out);
    int64_t i[3];
    for (i[0] = 0; i[0] < dims[0]; i[0]++)
        for (i[1] = 0; i[1] < dims[1]; i[1]++)
            for (i[2] = 0; i[2] < dims[2]; i[2]++) {
                int64_t src[3] = { i[0], i[1], i[2] };
                int64_t l = len[i[batch]];
                if (i[seq] < l)
                    src[seq] = l - 1 - i[seq];
                int64_t at = (i[0] * dims[1] + i[1]) * dims[2] + i[2];
                int64_t want = (src[0] * dims[1] + src[1]) * dims[2] + src[2];
                cr_assert_eq(g[at], want, "element (%lld, %lld, %lld) is %d, expected %lld",
                             (long long)i[0], (long long)i[1], (long long)i[2], g[at],
                             (long long)want);
            }
}

Test(ops_sequence, reverse_sequence_on_either_side_of_the_batch_axis)
{
    /* seq_axis 1, batch_axis 0: lengths 5 (all), 0 (none), 3. */
    int64_t d1[3] = { 3, 5, 2 };
    const int64_t l1[3] = { 5, 0, 3 };
    weft_tensor *lens = NULL;
    int64_t three = 3;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, &three, l1, &lens), 0);
    weft_tensor *args[2] = { positions(d1), lens };
    rs_case c1 = { 1, 0 };
    weft_tensor *out;
    op_results_everywhere(rs_body, &c1, args, 2, &out, 1, "reverse_sequence");
    check_reversed(out, d1, 1, 0, l1);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(lens);
    /* seq_axis 0, batch_axis -1 (2): the sequence before the batch, i32
     * lengths. */
    int64_t d2[3] = { 4, 2, 3 };
    const int32_t l2[3] = { 4, 1, 2 };
    const int64_t l2w[3] = { 4, 1, 2 };
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &three, l2, &lens), 0);
    args[0] = positions(d2);
    args[1] = lens;
    rs_case c2 = { 0, -1 };
    op_results_everywhere(rs_body, &c2, args, 2, &out, 1, "reverse_sequence");
    check_reversed(out, d2, 0, 2, l2w);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(lens);
}

/* A length above the sequence's dim fails when the function runs. */
Test(ops_sequence, reverse_sequence_refuses_a_length_past_the_end)
{
    int64_t dims[3] = { 2, 3, 1 }, two = 2;
    weft_tensor *lens = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, &two, (const int64_t[]){ 1, 4 }, &lens), 0);
    weft_tensor *args[2] = { positions(dims), lens };
    rs_case c = { 1, 0 };
    for (int eager = 0; eager < 2; eager++) {
        weft_tensor *out = NULL;
        int rc = op_call(rts[1], rs_body, &c, args, 2, &out, 1, eager);
        cr_assert_eq(rc, WEFT_EINVAL, "%s", weft_err_name(rc));
        cr_assert_null(out);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(lens);
}

/* ---- refused calls ------------------------------------------------------- */

enum {
    BK_BOOL, BK_UNSORTED, BK_NAN, RS_SAME_AXES, RS_FLOAT_LENGTHS, RS_LENGTHS_SIZE, RS_AXIS_RANGE
};

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const double unsorted[3] = { 0, 2, 1 }, nan_b[2] = { 0, NAN };
    switch (*(const int *)user) {
    case BK_BOOL: outs[0] = weft_bucketize(cx, a[2], unsorted, 1); break;
    case BK_UNSORTED: outs[0] = weft_bucketize(cx, a[0], unsorted, 3); break;
    case BK_NAN: outs[0] = weft_bucketize(cx, a[0], nan_b, 2); break;
    case RS_SAME_AXES: outs[0] = weft_reverse_sequence(cx, a[0], a[1], 1, 1); break;
    case RS_FLOAT_LENGTHS: outs[0] = weft_reverse_sequence(cx, a[0], a[3], 1, 0); break;
    case RS_LENGTHS_SIZE: outs[0] = weft_reverse_sequence(cx, a[0], a[1], 0, 1); break;
    case RS_AXIS_RANGE: outs[0] = weft_reverse_sequence(cx, a[0], a[1], 3, 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_sequence, refused_calls_name_the_op)
{
    int64_t dims[3] = { 2, 3, 1 }, two = 2;
    weft_tensor *lens = NULL, *flags = NULL, *flens = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, &two, (const int64_t[]){ 1, 2 }, &lens), 0);
    cr_assert_eq(weft_tensor_create(WEFT_BOOL, 1, &two, (const uint8_t[]){ 1, 0 }, &flags), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &two, (const float[]){ 1, 2 }, &flens), 0);
    weft_tensor *args[4] = { positions(dims), lens, flags, flens };
    const op_error_case cases[] = {
        { BK_BOOL, WEFT_EDTYPE, "weft_bucketize: x bool[2] is bool" },
        { BK_UNSORTED, WEFT_EINVAL, "weft_bucketize: boundaries are not sorted (boundary 2, 1" },
        { BK_NAN, WEFT_EINVAL, "weft_bucketize: boundary 1 is NaN" },
        { RS_SAME_AXES, WEFT_EINVAL, "weft_reverse_sequence: seq_axis 1 and batch_axis 1" },
        { RS_FLOAT_LENGTHS, WEFT_EDTYPE, "weft_reverse_sequence: seq_lengths f32[2] is not i32" },
        { RS_LENGTHS_SIZE, WEFT_ESHAPE, "weft_reverse_sequence: seq_lengths i64[2] is not a "
                                        "vector of x's batch dim" },
        { RS_AXIS_RANGE, WEFT_EINVAL, "weft_reverse_sequence: seq_axis 3 and batch_axis 0" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
