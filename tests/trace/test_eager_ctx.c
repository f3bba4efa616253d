/* Eager contexts and eager calls: wrapping tensors, constants, sticky
 * errors, outputs handed back with their own references. */
#include <string.h>

#include "runtime/iface.h"
#include "test_util.h"
#include "trace/ctx.h"
#include "trace/tensor_impl.h"

static weft_tensor *f32_vec(int64_t n, const float *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, data, &t), 0, "%s", weft_errmsg());
    return t;
}

static int refs(const weft_tensor *t)
{
    return __atomic_load_n(&t->refs, __ATOMIC_RELAXED);
}

Test(eager_ctx, begin_validates, .timeout = 10)
{
    weft_ctx *cx = (weft_ctx *)(uintptr_t)1;
    cr_assert_eq(weft_eager_begin(NULL, &cx), WEFT_EINVAL);
    cr_assert_null(cx);
    weft_runtime *rt = test_runtime(2);
    cr_assert_eq(weft_eager_begin(rt, NULL), WEFT_EINVAL);
    weft_eager_end(NULL);
    cx = NULL;
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, values_hold_references_until_the_end, .timeout = 10)
{
    weft_runtime *rt = test_runtime(2);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    int64_t dims[2] = { 2, 3 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 2, dims, NULL, &t), 0);
    weft_value *v = weft_eager_value(cx, t);
    cr_assert_not_null(v);
    cr_assert_eq(weft_value_tensor(v), t);
    cr_assert_eq(refs(t), 2);
    weft_spec s;
    cr_assert_eq(weft_value_spec(v, &s), 0);
    cr_assert_eq(s.dtype, WEFT_I32);
    cr_assert_eq(s.rank, 2);
    cr_assert_eq(s.dims[1], 3);
    int64_t dummy;
    cr_assert_eq(weft_value_static_i64(v, &dummy), WEFT_EINVAL, "a wrapped tensor is no constant");
    cr_assert_eq(weft_value_spec(NULL, &s), WEFT_EINVAL);
    cr_assert_eq(weft_value_spec(v, NULL), WEFT_EINVAL);
    cr_assert_null(weft_value_tensor(NULL));
    /* Many values: the context grows past its first chunk of values. */
    for (int i = 0; i < 300; i++)
        cr_assert_not_null(weft_eager_value(cx, t));
    cr_assert_eq(refs(t), 302);
    weft_eager_end(&cx);
    cr_assert_null(cx);
    cr_assert_eq(refs(t), 1);
    weft_tensor_release(t);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, constants_are_static, .timeout = 10)
{
    weft_runtime *rt = test_runtime(2);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *c = weft_const_i64(cx, 123);
    int64_t i = 0;
    double f = 0;
    cr_assert_eq(weft_value_static_i64(c, &i), 0);
    cr_assert_eq(i, 123);
    cr_assert_eq(weft_value_static_f64(c, &f), 0);
    cr_assert_eq(f, 123.0);
    weft_tensor *ct = weft_value_tensor(c);
    cr_assert_eq(weft_tensor_dtype(ct), WEFT_I64);
    cr_assert_eq(weft_tensor_rank(ct), 0);
    weft_value *d = weft_const_f64(cx, -0.5);
    cr_assert_eq(weft_value_static_f64(d, &f), 0);
    cr_assert_eq(f, -0.5);
    cr_assert_eq(weft_value_static_i64(d, &i), WEFT_EINVAL);
    cr_assert_eq(weft_value_static_i64(NULL, &i), WEFT_EINVAL);
    cr_assert_eq(weft_value_static_i64(c, NULL), WEFT_EINVAL);
    cr_assert_eq(weft_ctx_status(cx), 0, "reading statics never poisons the context");
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, ops_compute_with_promotion, .timeout = 10)
{
    weft_runtime *rt = test_runtime(2);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    float xs[3] = { 1, 2, 3 };
    weft_tensor *x = f32_vec(3, xs);
    weft_value *v = weft_add(cx, weft_eager_value(cx, x), weft_const_i64(cx, 2));
    cr_assert_not_null(v, "%s", weft_errmsg());
    weft_tensor *r = weft_value_tensor(v);
    cr_assert_eq(weft_tensor_dtype(r), WEFT_F32);
    cr_assert_eq(weft_tensor_numel(r), 3);
    const float *d = weft_tensor_data(r);
    cr_assert_eq(d[0], 3.0f);
    cr_assert_eq(d[2], 5.0f);
    weft_tensor_release(x);
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, sticky_errors, .timeout = 10)
{
    weft_runtime *rt = test_runtime(2);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_tensor *a = f32_vec(3, NULL), *b = f32_vec(4, NULL);
    weft_value *va = weft_eager_value(cx, a), *vb = weft_eager_value(cx, b);
    cr_assert_null(weft_mul(cx, va, vb));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_mul: f32[3] and f32[4] do not broadcast");
    cr_assert_null(weft_neg(cx, NULL));
    cr_assert_null(weft_add(cx, va, va), "ops after an error return NULL");
    cr_assert_null(weft_eager_value(cx, a));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, tracing_values_have_no_tensor, .timeout = 10)
{
    weft__graph g;
    weft__graph_init(&g, 0);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft__ctx_new(NULL, &g, "t", &cx), 0);
    weft_value *c = weft_const_f64(cx, 1.0);
    cr_assert_not_null(c);
    cr_assert_null(weft_value_tensor(c));
    double f;
    cr_assert_eq(weft_value_static_f64(c, &f), 0);
    cr_assert_eq(f, 1.0);
    weft_tensor *t = f32_vec(2, NULL);
    cr_assert_null(weft_eager_value(cx, t));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    cr_assert_str_eq(weft_errmsg(), "t: %1 = weft_eager_value: a tracing context takes no tensors");
    weft_tensor_release(t);
    weft__ctx_free(cx);
    weft__graph_free(&g);
}

/* out = x * scale + k, with scale a static f64 and k a static i64. */
struct call_seen {
    int64_t k;
    double scale;
    int mode;  /* 0 ok, 1 error code, 2 NULL output, 3 sticky, 4 foreign output */
    weft_value *foreign;
};

static int body_affine(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    struct call_seen *s = user;
    if (weft_value_static_i64(args[2], &s->k) < 0 || weft_value_static_f64(args[1], &s->scale) < 0)
        return WEFT_EINVAL;
    switch (s->mode) {
    case 1: return WEFT_EIO;
    case 2: outs[0] = args[0]; return 0;
    case 3: outs[0] = weft_reshape(cx, args[0], 1, (int64_t[]){ 5 }); outs[1] = args[0]; return 0;
    case 4: outs[0] = s->foreign; outs[1] = args[0]; return 0;
    }
    outs[0] = weft_add(cx, weft_mul(cx, args[0], args[1]), args[2]);
    outs[1] = args[0];
    return 0;
}

Test(eager_ctx, eager_call_runs_the_body, .timeout = 10)
{
    weft_runtime *rt = test_runtime(2);
    float xs[3] = { 1, 2, 3 };
    weft_tensor *x = f32_vec(3, xs);
    weft_arg args[3] = { weft_arg_tensor(x), weft_arg_f64(0.5), weft_arg_i64(10) };
    weft_tensor *outs[2] = { NULL, NULL };
    struct call_seen s = { 0 };
    cr_assert_eq(weft__eager_call(rt, "affine", body_affine, &s, args, 3, outs, 2), 0, "%s",
                 weft_errmsg());
    cr_assert_eq(s.k, 10);
    cr_assert_eq(s.scale, 0.5);
    cr_assert_eq(weft_tensor_dtype(outs[0]), WEFT_F32, "static scalars are weak: f32 stays f32");
    const float *d = weft_tensor_data(outs[0]);
    cr_assert_eq(d[0], 10.5);
    cr_assert_eq(d[2], 11.5);
    cr_assert_eq(outs[1], x, "an argument returned as is");
    cr_assert_eq(refs(x), 2, "the caller got its own reference");
    cr_assert_eq(refs(outs[0]), 1, "the context's reference is gone");
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(x);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, eager_call_failures, .timeout = 10)
{
    weft_runtime *rt = test_runtime(2);
    weft_tensor *x = f32_vec(3, NULL);
    weft_arg args[3] = { weft_arg_tensor(x), weft_arg_f64(0.5), weft_arg_i64(10) };
    weft_tensor *outs[2];
    struct call_seen s = { .mode = 1 };
    cr_assert_eq(weft__eager_call(rt, "affine", body_affine, &s, args, 3, outs, 2), WEFT_EIO);
    cr_assert_null(outs[0]);
    cr_assert_not_null(strstr(weft_errmsg(), "affine"), "%s", weft_errmsg());
    s.mode = 2;
    cr_assert_eq(weft__eager_call(rt, "affine", body_affine, &s, args, 3, outs, 2), WEFT_EBODY);
    cr_assert_str_eq(weft_errmsg(), "affine: output 1 is NULL");
    cr_assert_null(outs[0]);
    cr_assert_null(outs[1]);
    s.mode = 3;
    cr_assert_eq(weft__eager_call(rt, "affine", body_affine, &s, args, 3, outs, 2), WEFT_ESHAPE);
    cr_assert_null(outs[0]);
    weft_ctx *other = NULL;
    cr_assert_eq(weft_eager_begin(rt, &other), 0);
    s.foreign = weft_const_i64(other, 1);
    s.mode = 4;
    cr_assert_eq(weft__eager_call(rt, "affine", body_affine, &s, args, 3, outs, 2), WEFT_EBODY);
    cr_assert_str_eq(weft_errmsg(), "affine: output 0 belongs to another context");
    weft_eager_end(&other);
    weft_arg nulls[3] = { weft_arg_tensor(NULL), weft_arg_f64(0.5), weft_arg_i64(10) };
    cr_assert_eq(weft__eager_call(rt, "affine", body_affine, &s, nulls, 3, outs, 2), WEFT_EINVAL);
    cr_assert_eq(refs(x), 1, "failed calls leave no references behind");
    weft_tensor_release(x);
    weft_runtime_destroy(&rt);
}

Test(eager_ctx, eager_call_out_of_memory, .timeout = 10)
{
    if (!weft__fault_fail_after(0))
        cr_skip_test("built without fault injection");
    weft_runtime *rt = test_runtime(1);
    float xs[3] = { 1, 2, 3 };
    weft_tensor *x = f32_vec(3, xs);
    weft_arg args[3] = { weft_arg_tensor(x), weft_arg_f64(0.5), weft_arg_i64(10) };
    bool succeeded = false;
    for (long k = 1; k < 200 && !succeeded; k++) {
        weft_tensor *outs[2] = { NULL, NULL };
        struct call_seen s = { 0 };
        weft__fault_fail_after(k);
        int rc = weft__eager_call(rt, "affine", body_affine, &s, args, 3, outs, 2);
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        if (hit) {
            cr_assert_eq(rc, WEFT_ENOMEM, "allocation %ld: rc %d (%s)", k, rc, weft_errmsg());
            cr_assert_null(outs[0]);
        } else if (rc == 0) {
            succeeded = true;
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
    }
    cr_assert(succeeded);
    cr_assert_eq(refs(x), 1);
    weft_tensor_release(x);
    weft_runtime_destroy(&rt);
}
