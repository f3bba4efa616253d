/* weft_space_to_batch_nd and weft_batch_to_space_nd against
 * element-by-element references (TensorFlow's definitions written out),
 * eagerly and traced on 1, 2 and 4 workers (the same bits everywhere);
 * the round trip; an unknown batch; and their errors. */
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_space_batch, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct sb_case {
    int rank, m;
    int64_t dims[WEFT_MAX_RANK];
    int64_t block[WEFT_MAX_RANK];
    int64_t pads[WEFT_MAX_RANK][2];
} sb_case;

static const sb_case cases[] = {
    { 4, 2, { 2, 4, 6, 3 }, { 2, 3 }, { { 0, 0 }, { 0, 0 } } },
    { 4, 2, { 2, 4, 6, 3 }, { 2, 3 }, { { 1, 1 }, { 2, 1 } } },
    { 3, 1, { 3, 5, 2 }, { 2 }, { { 1, 0 } } },
    { 2, 1, { 2, 6 }, { 3 }, { { 0, 3 } } },
    { 5, 3, { 1, 2, 4, 2, 2 }, { 2, 2, 1 }, { { 0, 0 }, { 1, 1 }, { 0, 1 } } },
    { 4, 2, { 1, 3, 3, 1 }, { 1, 1 }, { { 0, 0 }, { 0, 0 } } },
};
#define N_CASES (sizeof cases / sizeof cases[0])

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    return n;
}

/* Row-major position of idx in dims. */
static int64_t offset_of(int rank, const int64_t *dims, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < rank; d++)
        o = o * dims[d] + idx[d];
    return o;
}

/* The shape of space_to_batch_nd's result. */
static void s2b_shape(const sb_case *c, int64_t *out)
{
    out[0] = c->dims[0];
    for (int i = 0; i < c->m; i++) {
        out[0] *= c->block[i];
        out[1 + i] = (c->dims[1 + i] + c->pads[i][0] + c->pads[i][1]) / c->block[i];
    }
    for (int d = 1 + c->m; d < c->rank; d++)
        out[d] = c->dims[d];
}

/* Element `at` of space_to_batch_nd(x): the padded input at (o_i s_i +
 * offset_i) where the new batch index is (offsets) B + b, or 0 in the
 * padding. */
static double s2b_ref(const sb_case *c, const double *x, const int64_t *out_dims, int64_t at)
{
    int64_t idx[WEFT_MAX_RANK], src[WEFT_MAX_RANK];
    for (int d = c->rank - 1; d >= 0; d--) {
        idx[d] = at % out_dims[d];
        at /= out_dims[d];
    }
    int64_t B = c->dims[0], q = idx[0] / B;
    src[0] = idx[0] % B;
    for (int i = c->m - 1; i >= 0; i--) {
        int64_t off = q % c->block[i];
        q /= c->block[i];
        src[1 + i] = idx[1 + i] * c->block[i] + off - c->pads[i][0];
        if (src[1 + i] < 0 || src[1 + i] >= c->dims[1 + i])
            return 0.0;
    }
    for (int d = 1 + c->m; d < c->rank; d++)
        src[d] = idx[d];
    return x[offset_of(c->rank, c->dims, src)];
}

static int s2b_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const sb_case *c = user;
    outs[0] = weft_space_to_batch_nd(cx, a[0], c->m, c->block, (const int64_t(*)[2])c->pads);
    return weft_ctx_status(cx);
}

static int b2s_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const sb_case *c = user;
    outs[0] = weft_batch_to_space_nd(cx, a[0], c->m, c->block, (const int64_t(*)[2])c->pads);
    return weft_ctx_status(cx);
}

static double *sequence(int64_t n)
{
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(i + 1);
    return v;
}

Test(ops_space_batch, space_to_batch_matches_the_definition)
{
    for (size_t q = 0; q < N_CASES; q++) {
        const sb_case *c = &cases[q];
        weft_dtype dt = q % 2 ? WEFT_I32 : WEFT_F64;
        int64_t n = numel(c->rank, c->dims), out_dims[WEFT_MAX_RANK];
        double *v = sequence(n);
        weft_tensor *x = test_tensor(dt, c->rank, c->dims, v), *y;
        op_results_everywhere(s2b_body, (void *)c, &x, 1, &y, 1, "space_to_batch_nd");
        s2b_shape(c, out_dims);
        test_assert_shape(y, dt, c->rank, out_dims, "space_to_batch_nd");
        for (int64_t i = 0; i < numel(c->rank, out_dims); i++) {
            double got = dt == WEFT_I32 ? ((const int32_t *)weft_tensor_data(y))[i]
                                        : ((const double *)weft_tensor_data(y))[i];
            cr_assert_eq(got, s2b_ref(c, v, out_dims, i), "case %zu, element %lld: %g, want %g",
                         q, (long long)i, got, s2b_ref(c, v, out_dims, i));
        }
        free(v);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* batch_to_space_nd with the same blocks and crops = paddings undoes
 * space_to_batch_nd, and on its own moves each element back to where the
 * definition above took it from. */
Test(ops_space_batch, batch_to_space_inverts_it)
{
    for (size_t q = 0; q < N_CASES; q++) {
        const sb_case *c = &cases[q];
        int64_t out_dims[WEFT_MAX_RANK];
        s2b_shape(c, out_dims);
        int64_t n = numel(c->rank, out_dims);
        /* Elements of the batched form, each the reference's value. */
        double *xv = sequence(numel(c->rank, c->dims)), *bv = malloc(sizeof *bv * (size_t)n);
        cr_assert_not_null(bv);
        for (int64_t i = 0; i < n; i++)
            bv[i] = s2b_ref(c, xv, out_dims, i);
        weft_tensor *b = test_tensor(WEFT_F32, c->rank, out_dims, bv), *y;
        op_results_everywhere(b2s_body, (void *)c, &b, 1, &y, 1, "batch_to_space_nd");
        test_assert_shape(y, WEFT_F32, c->rank, c->dims, "batch_to_space_nd");
        for (int64_t i = 0; i < numel(c->rank, c->dims); i++)
            cr_assert_eq(((const float *)weft_tensor_data(y))[i], (float)xv[i],
                         "case %zu, element %lld", q, (long long)i);
        free(xv);
        free(bv);
        weft_tensor_release(b);
        weft_tensor_release(y);
    }
}

/* space_to_batch_nd leaves the batch to the call: one trace serves every
 * batch size. */
Test(ops_space_batch, unknown_batch_traces_once)
{
    const sb_case *c = &cases[1];
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[?,4,6,3]", &sig), 0);
    weft_function *f = op_signature_function(rts[0], s2b_body, (void *)c, &sig, 1);
    for (int64_t batch = 1; batch <= 3; batch += 2) {
        sb_case cb = *c;
        cb.dims[0] = batch;
        int64_t n = numel(4, cb.dims), out_dims[WEFT_MAX_RANK];
        double *v = sequence(n);
        weft_tensor *x = test_tensor(WEFT_F64, 4, cb.dims, v), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        s2b_shape(&cb, out_dims);
        test_assert_shape(y, WEFT_F64, 4, out_dims, "space_to_batch_nd");
        for (int64_t i = 0; i < numel(4, out_dims); i++)
            cr_assert_eq(((const double *)weft_tensor_data(y))[i], s2b_ref(&cb, v, out_dims, i));
        free(v);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    op_destroy_traced_once(&f);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t b23[2] = { 2, 3 }, b03[2] = { 0, 3 }, b22[2] = { 2, 2 };
    static const int64_t p0[2][2] = { { 0, 0 }, { 0, 0 } }, p1[2][2] = { { 1, 0 }, { 0, 0 } };
    static const int64_t pn[2][2] = { { 0, -1 }, { 0, 0 } }, c9[2][2] = { { 5, 4 }, { 0, 0 } };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_space_to_batch_nd(cx, a[0], 2, b23, p1); break;
    case 1: outs[0] = weft_space_to_batch_nd(cx, a[0], 2, b03, p0); break;
    case 2: outs[0] = weft_space_to_batch_nd(cx, a[0], 2, b23, pn); break;
    case 3: outs[0] = weft_space_to_batch_nd(cx, a[0], 0, b23, p0); break;
    case 4: outs[0] = weft_space_to_batch_nd(cx, a[0], 4, b23, p0); break;
    case 5: outs[0] = weft_space_to_batch_nd(cx, a[0], 2, NULL, p0); break;
    case 6: outs[0] = weft_batch_to_space_nd(cx, a[0], 2, b22, p0); break;
    default: outs[0] = weft_batch_to_space_nd(cx, a[0], 1, b22, c9); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_space_batch, bad_calls_are_refused)
{
    const op_error_case errs[] = {
        { 0, WEFT_EINVAL, "weft_space_to_batch_nd: dim 1 of f32[2,4,6,3] padded by {1, 0} is "
                          "5, not a multiple of block_shape[0] = 2" },
        { 1, WEFT_EINVAL, "weft_space_to_batch_nd: block_shape[0] = 0 is not in 1..INT32_MAX" },
        { 2, WEFT_EINVAL, "weft_space_to_batch_nd: paddings[0] = {0, -1} is not in 0..INT32_MAX" },
        { 3, WEFT_ESHAPE, "weft_space_to_batch_nd: f32[2,4,6,3] does not have a batch and 0 "
                          "spatial dims" },
        { 4, WEFT_ESHAPE, "does not have a batch and 4 spatial dims" },
        { 5, WEFT_EINVAL, "weft_space_to_batch_nd: block_shape or paddings is NULL" },
        { 6, WEFT_EINVAL, "weft_batch_to_space_nd: the batch of f32[2,4,6,3] is not a multiple "
                          "of the block's 4 elements" },
        { 7, WEFT_EINVAL, "weft_batch_to_space_nd: crops[0] = {5, 4} remove more than the 8 "
                          "elements of dim 1" },
    };
    double v[2 * 4 * 6 * 3] = { 0 };
    weft_tensor *x = test_tensor(WEFT_F32, 4, (int64_t[]){ 2, 4, 6, 3 }, v);
    op_expect_errors(rts[0], bad_body, errs, sizeof errs / sizeof errs[0], &x, 1);
    weft_tensor_release(x);
}

/* The spatial dims must be known while tracing (the blocks cut them). */
Test(ops_space_batch, unknown_spatial_dim_is_refused)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[2,?,6,3]", &sig), 0);
    weft_function *f = op_signature_function(rts[0], s2b_body, (void *)&cases[0], &sig, 1);
    double v[2 * 4 * 6 * 3] = { 0 };
    weft_tensor *x = test_tensor(WEFT_F64, 4, (int64_t[]){ 2, 4, 6, 3 }, v), *y = NULL;
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_space_to_batch_nd: f64[2,?,6,3] does not have"),
              "%s", weft_errmsg());
    cr_assert_null(y);
    weft_function_destroy(&f);
    weft_tensor_release(x);
}
