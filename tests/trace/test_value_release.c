/* weft_value_release: an eager loop that releases what it no longer needs
 * holds a bounded number of bytes (measured with the context's own count of
 * the tensor bytes its values hold), and a released value is refused the
 * same way eagerly and traced. */
#include <string.h>

#include "test_util.h"
#include "trace/ctx.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(value_release, .init = setup, .fini = teardown, .timeout = 60);

#define LEN 100000
#define BYTES ((size_t)LEN * sizeof(float))
#define SMALL ((size_t)64 << 10)

static weft_value *ones(weft_ctx *cx)
{
    weft_value *v = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ LEN }, 1.0);
    cr_assert_not_null(v, "%s", weft_errmsg());
    return v;
}

/* 1000 multiplies of an f32[100000] (400 KB each): without releases the
 * context would hold all of them (400 MB); with them it holds the input,
 * the running product and the next one. */
Test(value_release, a_long_eager_loop_stays_small)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *x = ones(cx), *scale = weft_const_f64(cx, 1.0009765625);  /* 1 + 2^-10 */
    weft_value *acc = x;
    for (int i = 0; i < 1000; i++) {
        weft_value *next = weft_mul(cx, acc, scale);
        cr_assert_not_null(next, "%s", weft_errmsg());
        if (acc != x)
            weft_value_release(cx, acc);
        acc = next;
    }
    /* The three tensors, the weak scale (8 bytes) and the f32 scalar (4)
     * it becomes in a product, which the product itself releases. */
    size_t peak = 0, held = weft__ctx_held_bytes(cx, &peak);
    cr_assert_leq(peak, 3 * BYTES + 12, "peak %zu bytes", peak);
    cr_assert_geq(peak, 2 * BYTES, "peak %zu bytes: the count sees the tensors", peak);
    cr_assert_leq(held, 2 * BYTES + 8, "held %zu bytes", held);
    /* The values are right: 1.0009765625^1000, multiplied in f32. */
    float want = 1.0f;
    for (int i = 0; i < 1000; i++)
        want *= 1.0009765625f;
    const float *p = weft_tensor_data(weft_value_tensor(acc));
    cr_assert_eq(p[0], want);
    cr_assert_eq(p[LEN - 1], want);
    weft_eager_end(&cx);
}

/* The count is honest: without releases it grows with every product. */
Test(value_release, without_releases_the_context_holds_every_product)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *acc = ones(cx);
    for (int i = 0; i < 8; i++)
        acc = weft_mul(cx, acc, weft_const_f64(cx, 2.0));
    size_t peak = 0, held = weft__ctx_held_bytes(cx, &peak);
    cr_assert_geq(held, 9 * BYTES, "held %zu bytes", held);
    cr_assert_leq(peak - held, 4, "peak %zu, held %zu: only a product's own scalar is gone",
                  peak, held);
    weft_eager_end(&cx);
}

/* The handles themselves stay bounded: a released one is used again once
 * 1024 others were released after it, and until then it is still refused. */
Test(value_release, a_long_loop_reuses_handles)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *x = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 4 }, 1.0);
    weft_value *first = NULL;
    for (int i = 0; i < 20000; i++) {
        weft_value *y = weft_mul(cx, x, weft_const_f64(cx, 2.0));
        cr_assert_not_null(y, "%s", weft_errmsg());
        weft_value_release(cx, y);
        if (i == 0) {
            first = y;
            cr_assert_null(weft_add(cx, first, x));
            cr_assert(strstr(weft_errmsg(), "was released"), "%s", weft_errmsg());
            weft_eager_end(&cx);
            cr_assert_eq(weft_eager_begin(rt, &cx), 0);
            x = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 4 }, 1.0);
        }
    }
    /* Each product lays out its weak constant, its scalar and itself; the
     * constants the loop never releases stay (20000), the rest recycle. */
    size_t slots = weft__ctx_value_slots(cx);
    cr_assert_leq(slots, 20000 + 1 + 2 * 1024 + 128, "%zu handles", slots);
    weft_eager_end(&cx);
}

/* Ops made of other ops end their intermediates when they return: an
 * eager loop of softmax (exp, sum, divide) and of moments (two results)
 * holds only what the loop keeps; a call that fails half-way keeps
 * nothing; the results are still right. */
Test(value_release, composite_ops_end_their_intermediates)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *x = weft_reshape(cx, ones(cx), 2, (int64_t[]){ 1000, 100 });
    cr_assert_not_null(x, "%s", weft_errmsg());
    size_t base = weft__ctx_held_bytes(cx, NULL);
    for (int i = 0; i < 50; i++) {
        weft_value *y = weft_softmax(cx, x, -1);
        cr_assert_not_null(y, "%s", weft_errmsg());
        cr_assert_eq(((const float *)weft_tensor_data(weft_value_tensor(y)))[i], 0.01f);
        weft_value *m[2];
        cr_assert_eq(weft_moments(cx, x, (int[]){ 0 }, 1, false, m), 0, "%s", weft_errmsg());
        cr_assert_eq(((const float *)weft_tensor_data(weft_value_tensor(m[0])))[i], 1.0f);
        cr_assert_eq(((const float *)weft_tensor_data(weft_value_tensor(m[1])))[i], 0.0f);
        size_t held = weft__ctx_held_bytes(cx, NULL);
        /* The softmax and the two moments, nothing else. */
        cr_assert_eq(held, base + BYTES + 2 * 100 * sizeof(float), "iteration %d: held %zu", i,
                     held);
        weft_value_release(cx, y);
        weft_value_release(cx, m[0]);
        weft_value_release(cx, m[1]);
    }
    size_t peak = 0, held = weft__ctx_held_bytes(cx, &peak);
    cr_assert_eq(held, base);
    cr_assert_leq(peak, base + 4 * BYTES, "peak %zu", peak);
    weft_eager_end(&cx);

    /* A composite that fails after making values: they end too. */
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_reshape(cx, ones(cx), 2, (int64_t[]){ 1000, 100 });
    base = weft__ctx_held_bytes(cx, NULL);
    weft_value *bad = weft_fill(cx, WEFT_I32, 1, (int64_t[]){ 1000 }, -1.0);
    weft_value *parts[2];
    cr_assert_eq(weft_dynamic_partition(cx, x, bad, 2, parts), WEFT_EINVAL, "%s", weft_errmsg());
    cr_assert_null(parts[0]);
    /* The range check's three bool[1000] and the partitions' copy are gone. */
    cr_assert_eq(weft__ctx_held_bytes(cx, NULL), base + 1000 * sizeof(int32_t));
    weft_eager_end(&cx);
}

/* A tensor someone else retained outlives the release. */
Test(value_release, a_retained_tensor_survives)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_add(cx, ones(cx), weft_const_f64(cx, 1.0));
    weft_tensor *kept = weft_tensor_retain(weft_value_tensor(v));
    weft_value_release(cx, v);
    weft_value_release(cx, v);       /* a second release: nothing */
    weft_value_release(cx, NULL);
    cr_assert_null(weft_value_tensor(v));
    cr_assert_eq(((const float *)weft_tensor_data(kept))[7], 2.0f);
    cr_assert_eq(weft_ctx_status(cx), 0);
    weft_eager_end(&cx);
    weft_tensor_release(kept);
}

/* Mode 0: use a released value in an op; 1: return a released value. */
static int body_use_released(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    int mode = *(const int *)user;
    weft_value *y = weft_mul(cx, args[0], args[0]);
    weft_value_release(cx, y);
    outs[0] = mode == 0 ? weft_add(cx, y, args[0]) : y;
    return weft_ctx_status(cx);
}

static int body_release_then_compute(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                                     void *user)
{
    (void)user;
    weft_value *y = weft_mul(cx, args[0], args[0]);
    weft_value *z = weft_add(cx, y, args[0]);
    weft_value_release(cx, y);
    outs[0] = z;
    return weft_ctx_status(cx);
}

Test(value_release, released_values_are_refused_in_both_modes)
{
    const float xs[3] = { 1, 2, 3 };
    weft_tensor *x = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 3 }, xs, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    for (int mode = 0; mode < 2; mode++) {
        for (int traced = 0; traced < 2; traced++) {
            weft_function_desc d = { .name = "rel", .body = body_use_released, .user = &mode,
                                     .n_args = 1, .n_outs = 1,
                                     .flags = traced ? 0 : WEFT_RUN_EAGERLY };
            weft_function *f = NULL;
            cr_assert_eq(weft_function_create(rt, &d, &f), 0);
            weft_tensor *out = NULL;
            int rc = weft_function_call(f, &a, 1, &out, 1);
            cr_assert_eq(rc, mode == 0 ? WEFT_EINVAL : WEFT_EBODY, "mode %d traced %d: %s", mode,
                         traced, weft_errmsg());
            cr_assert(strstr(weft_errmsg(), mode == 0 ? "weft_add: input 0 was released"
                                                      : "rel: output 0 was released"),
                      "%s", weft_errmsg());
            cr_assert_null(out);
            weft_function_destroy(&f);
        }
    }
    /* Releasing an intermediate after its last use changes no result. */
    for (int traced = 0; traced < 2; traced++) {
        weft_function_desc d = { .name = "ok", .body = body_release_then_compute, .n_args = 1,
                                 .n_outs = 1, .flags = traced ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(((const float *)weft_tensor_data(out))[2], 12.0f);
        weft_tensor_release(out);
        weft_function_destroy(&f);
    }
    weft_tensor_release(x);
}

Test(value_release, bad_contexts)
{
    weft_ctx *cx = NULL, *other = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_eq(weft_eager_begin(rt, &other), 0);
    weft_value *v = weft_const_f64(other, 1.0);
    weft_value_release(NULL, v);
    cr_assert(strstr(weft_errmsg(), "weft_value_release: NULL context"), "%s", weft_errmsg());
    weft_value_release(cx, v);
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_value_release: the value belongs to another context"),
              "%s", weft_errmsg());
    cr_assert_not_null(weft_value_tensor(v), "the other context's value is untouched");
    weft_eager_end(&cx);
    weft_eager_end(&other);
}
