/* Op semantics through the public eager API: promotion, broadcasting,
 * integer floor division, reductions, shapes, leaves and error messages,
 * each against a scalar reference computed here. */
#include <math.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static weft_ctx *cx;

static void setup(void)
{
    rt = test_runtime(2);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0, "%s", weft_errmsg());
}

static void teardown(void)
{
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

TestSuite(ops_eager, .init = setup, .fini = teardown, .timeout = 30);

static weft_value *val(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    weft_value *v = weft_eager_value(cx, t);
    weft_tensor_release(t);
    cr_assert_not_null(v, "%s", weft_errmsg());
    return v;
}

/* The tensor of v, checked for dtype and shape. */
static const void *data_of(weft_value *v, weft_dtype dt, int rank, const int64_t *dims)
{
    cr_assert_not_null(v, "op failed: %s", weft_errmsg());
    weft_tensor *t = weft_value_tensor(v);
    cr_assert_not_null(t);
    cr_assert_eq(weft_tensor_dtype(t), dt, "dtype %d, expected %d", weft_tensor_dtype(t), dt);
    cr_assert_eq(weft_tensor_rank(t), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "dim %d", d);
    return weft_tensor_data(t);
}

Test(ops_eager, promotion_and_broadcast)
{
    const int32_t a[3] = {1, -2, 3};
    const float b[4] = {0.5f, 1.5f, -2.0f, 4.0f};
    weft_value *va = val(WEFT_I32, 2, (int64_t[]){3, 1}, a), *vb = val(WEFT_F32, 1, (int64_t[]){4}, b);
    const float *s = data_of(weft_add(cx, va, vb), WEFT_F32, 2, (int64_t[]){3, 4});
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            cr_assert_eq(s[i * 4 + j], (float)a[i] + b[j]);
    /* bool + i32 -> i32; a weak f64 constant promotes an i32 tensor to f64
     * (a lower kind), a weak i64 constant takes the i32 tensor's dtype. */
    const uint8_t c[3] = {1, 0, 1};
    weft_value *vc = val(WEFT_BOOL, 2, (int64_t[]){3, 1}, c);
    const int32_t *bi = data_of(weft_add(cx, vc, va), WEFT_I32, 2, (int64_t[]){3, 1});
    for (int i = 0; i < 3; i++)
        cr_assert_eq(bi[i], c[i] + a[i]);
    const double *sc = data_of(weft_mul(cx, va, weft_const_f64(cx, 0.5)), WEFT_F64, 2,
                               (int64_t[]){3, 1});
    for (int i = 0; i < 3; i++)
        cr_assert_eq(sc[i], a[i] * 0.5);
    const int32_t *ci = data_of(weft_sub(cx, weft_const_i64(cx, 10), va), WEFT_I32, 2,
                                (int64_t[]){3, 1});
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ci[i], 10 - a[i]);
    cr_assert_eq(weft_ctx_status(cx), 0);
}

Test(ops_eager, integer_floor_div_mod_pow)
{
    const int64_t a[6] = {-7, 7, -7, 7, 0, 9};
    const int64_t b[6] = {2, -2, -2, 0, 0, 2};
    weft_value *va = val(WEFT_I64, 1, (int64_t[]){6}, a), *vb = val(WEFT_I64, 1, (int64_t[]){6}, b);
    const int64_t *q = data_of(weft_div(cx, va, vb), WEFT_I64, 1, (int64_t[]){6});
    const int64_t *r = data_of(weft_mod(cx, va, vb), WEFT_I64, 1, (int64_t[]){6});
    const int64_t *p = data_of(weft_pow(cx, va, vb), WEFT_I64, 1, (int64_t[]){6});
    const int64_t wq[6] = {-4, -4, 3, 0, 0, 4}, wr[6] = {1, -1, -1, 0, 0, 1};
    const int64_t wp[6] = {49, 0, 0, 1, 1, 81};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(q[i], wq[i], "%lld // %lld", (long long)a[i], (long long)b[i]);
        cr_assert_eq(r[i], wr[i], "%lld %% %lld", (long long)a[i], (long long)b[i]);
        cr_assert_eq(p[i], wp[i], "%lld ** %lld", (long long)a[i], (long long)b[i]);
        if (b[i] != 0)
            cr_assert_eq(q[i] * b[i] + r[i], a[i]);
    }
    /* Float operands: true division and floor modulo. */
    const double f[2] = {-7.0, 7.5};
    weft_value *vf = val(WEFT_F64, 1, (int64_t[]){2}, f);
    const double *fd = data_of(weft_div(cx, vf, weft_const_f64(cx, 2.0)), WEFT_F64, 1, (int64_t[]){2});
    const double *fm = data_of(weft_mod(cx, vf, weft_const_f64(cx, -2.0)), WEFT_F64, 1, (int64_t[]){2});
    cr_assert_eq(fd[0], -3.5);
    cr_assert_eq(fm[0], -1.0);
    cr_assert_eq(fm[1], -0.5);
    const double *fp = data_of(weft_pow(cx, vf, weft_const_f64(cx, 2.0)), WEFT_F64, 1, (int64_t[]){2});
    cr_assert_eq(fp[1], pow(7.5, 2.0));
}

Test(ops_eager, comparisons_where_unary)
{
    const float a[4] = {1, 2, 3, 4};
    const int32_t b[1] = {2};
    weft_value *va = val(WEFT_F32, 1, (int64_t[]){4}, a), *vb = val(WEFT_I32, 1, (int64_t[]){1}, b);
    weft_value *lt = weft_lt(cx, va, vb), *ge = weft_ge(cx, va, vb), *eq = weft_eq(cx, va, vb);
    const uint8_t *plt = data_of(lt, WEFT_BOOL, 1, (int64_t[]){4});
    const uint8_t *pge = data_of(ge, WEFT_BOOL, 1, (int64_t[]){4});
    const uint8_t *peq = data_of(eq, WEFT_BOOL, 1, (int64_t[]){4});
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(plt[i], a[i] < 2);
        cr_assert_eq(pge[i], a[i] >= 2);
        cr_assert_eq(peq[i], a[i] == 2);
    }
    /* where(cond [4], f32 [4], i32 scalar) promotes to f32. */
    const float *w = data_of(weft_where(cx, lt, va, weft_neg(cx, vb)), WEFT_F32, 1, (int64_t[]){4});
    for (int i = 0; i < 4; i++)
        cr_assert_eq(w[i], a[i] < 2 ? a[i] : -2.0f);
    /* sqrt of an integer computes in f64. */
    const double *sq = data_of(weft_sqrt(cx, vb), WEFT_F64, 1, (int64_t[]){1});
    cr_assert_eq(sq[0], sqrt(2.0));
    const float *ex = data_of(weft_exp(cx, va), WEFT_F32, 1, (int64_t[]){4});
    const float *lg = data_of(weft_log(cx, va), WEFT_F32, 1, (int64_t[]){4});
    const float *ab = data_of(weft_abs(cx, weft_neg(cx, va)), WEFT_F32, 1, (int64_t[]){4});
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(ex[i], expf(a[i]));
        cr_assert_eq(lg[i], logf(a[i]));
        cr_assert_eq(ab[i], a[i]);
    }
    const float *mn = data_of(weft_minimum(cx, va, vb), WEFT_F32, 1, (int64_t[]){4});
    const float *mx = data_of(weft_maximum(cx, va, vb), WEFT_F32, 1, (int64_t[]){4});
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(mn[i], fminf(a[i], 2.0f));
        cr_assert_eq(mx[i], fmaxf(a[i], 2.0f));
    }
}

Test(ops_eager, reductions)
{
    int32_t x[6] = {3, -1, 4, 1, -5, 9};
    weft_value *v = val(WEFT_I32, 2, (int64_t[]){2, 3}, x);
    const int32_t *s0 = data_of(weft_sum(cx, v, 0), WEFT_I32, 1, (int64_t[]){3});
    const int32_t *s1 = data_of(weft_sum(cx, v, -1), WEFT_I32, 1, (int64_t[]){2});
    const int32_t *sa = data_of(weft_sum(cx, v, WEFT_ALL_AXES), WEFT_I32, 0, NULL);
    const int32_t *m1 = data_of(weft_reduce_max(cx, v, 1), WEFT_I32, 1, (int64_t[]){2});
    const double *me = data_of(weft_mean(cx, v, 0), WEFT_F64, 1, (int64_t[]){3});
    const double *ma = data_of(weft_mean(cx, v, WEFT_ALL_AXES), WEFT_F64, 0, NULL);
    for (int j = 0; j < 3; j++) {
        cr_assert_eq(s0[j], x[j] + x[3 + j]);
        cr_assert_eq(me[j], (x[j] + x[3 + j]) / 2.0);
    }
    cr_assert_eq(s1[0], 6);
    cr_assert_eq(s1[1], 5);
    cr_assert_eq(sa[0], 11);
    cr_assert_eq(m1[0], 4);
    cr_assert_eq(m1[1], 9);
    cr_assert_eq(ma[0], 11.0 / 6.0);
    /* sum of bool counts in i64. */
    const int64_t *cnt = data_of(weft_sum(cx, weft_gt(cx, v, weft_const_i64(cx, 0)), WEFT_ALL_AXES),
                                 WEFT_I64, 0, NULL);
    cr_assert_eq(cnt[0], 4);
    cr_assert_null(weft_sum(cx, v, 2));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
}

/* ops.h: over an empty axis sum is 0, mean NaN, reduce_max the lowest
 * value of the dtype; sum of bool counts as i64. */
Test(ops_eager, reductions_over_an_empty_axis)
{
    int64_t zero[1] = { 0 };
    weft_value *i = val(WEFT_I32, 1, zero, NULL), *f = val(WEFT_F32, 1, zero, NULL);
    weft_value *b = val(WEFT_BOOL, 1, zero, NULL);
    cr_assert_eq(*(const int32_t *)data_of(weft_sum(cx, i, 0), WEFT_I32, 0, NULL), 0);
    cr_assert(isnan(*(const double *)data_of(weft_mean(cx, i, 0), WEFT_F64, 0, NULL)));
    cr_assert(isnan(*(const float *)data_of(weft_mean(cx, f, 0), WEFT_F32, 0, NULL)));
    cr_assert_eq(*(const int32_t *)data_of(weft_reduce_max(cx, i, 0), WEFT_I32, 0, NULL), INT32_MIN);
    cr_assert_eq(*(const float *)data_of(weft_reduce_max(cx, f, 0), WEFT_F32, 0, NULL), -INFINITY);
    cr_assert_eq(*(const uint8_t *)data_of(weft_reduce_max(cx, b, 0), WEFT_BOOL, 0, NULL), 0);
    cr_assert_eq(*(const int64_t *)data_of(weft_sum(cx, b, 0), WEFT_I64, 0, NULL), 0);
    cr_assert_eq(weft_ctx_status(cx), 0, "%s", weft_errmsg());
}

Test(ops_eager, shapes_and_leaves)
{
    weft_value *r = weft_range(cx, WEFT_I32, 0, 12, 1);
    const int32_t *pr = data_of(r, WEFT_I32, 1, (int64_t[]){12});
    for (int i = 0; i < 12; i++)
        cr_assert_eq(pr[i], i);
    weft_value *m = weft_reshape(cx, r, 2, (int64_t[]){-1, 4});
    const int32_t *pm = data_of(m, WEFT_I32, 2, (int64_t[]){3, 4});
    cr_assert_eq(pm[11], 11);
    weft_value *ones = weft_fill(cx, WEFT_F32, 2, (int64_t[]){4, 2}, 1.0);
    /* i32 [3,4] x f32 [4,2] promotes to f32. */
    const float *mm = data_of(weft_matmul(cx, m, ones), WEFT_F32, 2, (int64_t[]){3, 2});
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            cr_assert_eq(mm[i * 2 + j], (float)(4 * i * 4 + 6), "[%d,%d]", i, j);
    const double *rd = data_of(weft_range(cx, WEFT_F64, 10, 0, -3), WEFT_F64, 1, (int64_t[]){4});
    cr_assert_eq(rd[3], 1.0);
    const int64_t *ci = data_of(weft_cast(cx, weft_const_f64(cx, -3.99), WEFT_I64), WEFT_I64, 0, NULL);
    cr_assert_eq(ci[0], -3);
    const uint8_t *cb = data_of(weft_cast(cx, weft_const_f64(cx, NAN), WEFT_BOOL), WEFT_BOOL, 0, NULL);
    cr_assert_eq(cb[0], 1);
    const int32_t *cs = data_of(weft_cast(cx, weft_const_f64(cx, 1e300), WEFT_I32), WEFT_I32, 0, NULL);
    cr_assert_eq(cs[0], INT32_MAX);
}

Test(ops_eager, broadcast_error_message)
{
    weft_value *a = val(WEFT_F32, 1, (int64_t[]){3}, NULL), *b = val(WEFT_F32, 1, (int64_t[]){4}, NULL);
    cr_assert_null(weft_mul(cx, a, b));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_mul: f32[3] and f32[4] do not broadcast");
}

/* [2^40, 0] x [0, 2^40] holds no elements on either side, but its result
 * would hold 2^80: refused by the op, by name, not by the allocator. */
Test(ops_eager, matmul_result_too_big)
{
    int64_t big = (int64_t)1 << 40;
    weft_value *a = val(WEFT_F32, 2, (int64_t[]){big, 0}, NULL);
    weft_value *b = val(WEFT_F32, 2, (int64_t[]){0, big}, NULL);
    cr_assert_null(weft_matmul(cx, a, b));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    cr_assert_str_eq(weft_errmsg(),
                     "weft_matmul: the result f32[1099511627776,1099511627776] overflows the "
                     "address space");
}

Test(ops_eager, big_tensors_match_reference)
{
    /* 400 x 300 = 120 k elements: past the split threshold. */
    const int64_t rows = 400, cols = 300;
    float *x = malloc(sizeof(float) * (size_t)(rows * cols));
    float y[300];
    for (int64_t i = 0; i < rows * cols; i++)
        x[i] = (float)((i * 37) % 101) * 0.25f - 12.0f;
    for (int j = 0; j < cols; j++)
        y[j] = (float)(j % 13) - 6.0f;
    weft_value *vx = val(WEFT_F32, 2, (int64_t[]){rows, cols}, x);
    weft_value *vy = val(WEFT_F32, 1, (int64_t[]){cols}, y);
    weft_value *e = weft_add(cx, weft_mul(cx, vx, vy), weft_const(cx, WEFT_F64, 1.0));
    const double *pe = data_of(e, WEFT_F64, 2, (int64_t[]){rows, cols});
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            cr_assert_eq(pe[i * cols + j], (double)(x[i * cols + j] * y[j]) + 1.0);
    const float *col = data_of(weft_sum(cx, vx, 0), WEFT_F32, 1, (int64_t[]){cols});
    const float *mx = data_of(weft_reduce_max(cx, vx, WEFT_ALL_AXES), WEFT_F32, 0, NULL);
    float want_max = -INFINITY;
    for (int64_t j = 0; j < cols; j++) {
        double acc = 0;
        for (int64_t i = 0; i < rows; i++) {
            acc += x[i * cols + j];
            want_max = x[i * cols + j] > want_max ? x[i * cols + j] : want_max;
        }
        cr_assert(fabsf(col[j] - (float)acc) <= 1e-4f * (1.0f + fabsf((float)acc)));
    }
    cr_assert_eq(mx[0], want_max);
    free(x);
}
