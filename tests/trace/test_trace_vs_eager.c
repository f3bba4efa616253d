/* Differential checks through the public API: a body traced and compiled
 * must compute, bit for bit, what the same body computes run eagerly
 * (WEFT_RUN_EAGERLY) on the same runtime. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#include "test_util.h"

static weft_runtime *rt;
/* Four workers, so large ops are split into several chunks. */
static void setup(void) { rt = test_runtime_of(4); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(trace_vs_eager, .init = setup, .fini = teardown, .timeout = 30);

/* Calls body traced (twice: the trace, then the cached program) and
 * eagerly on args, and checks that every output has the same dtype, shape
 * and bytes. */
static void same_as_eager(weft_body_fn body, void *user, const weft_arg *args, size_t n_args,
                          size_t n_outs)
{
    enum { MAX_OUTS = 4 };
    cr_assert(n_outs <= MAX_OUTS, "same_as_eager holds at most %d outputs", MAX_OUTS);
    weft_function *ft = NULL, *fe = NULL;
    weft_function_desc d = { .name = "traced", .body = body, .user = user, .n_args = n_args,
                             .n_outs = n_outs };
    cr_assert_eq(weft_function_create(rt, &d, &ft), 0, "%s", weft_errmsg());
    d.name = "eager";
    d.flags = WEFT_RUN_EAGERLY;
    cr_assert_eq(weft_function_create(rt, &d, &fe), 0, "%s", weft_errmsg());
    weft_tensor *oe[MAX_OUTS] = { NULL };
    cr_assert_eq(weft_function_call(fe, args, n_args, oe, n_outs), 0, "%s", weft_errmsg());
    for (int call = 0; call < 2; call++) {
        weft_tensor *ot[MAX_OUTS] = { NULL };
        cr_assert_eq(weft_function_call(ft, args, n_args, ot, n_outs), 0, "%s", weft_errmsg());
        for (size_t k = 0; k < n_outs; k++) {
            cr_assert_eq(weft_tensor_dtype(ot[k]), weft_tensor_dtype(oe[k]));
            cr_assert_eq(weft_tensor_rank(ot[k]), weft_tensor_rank(oe[k]));
            for (int r = 0; r < weft_tensor_rank(ot[k]); r++)
                cr_assert_eq(weft_tensor_dims(ot[k])[r], weft_tensor_dims(oe[k])[r]);
            size_t nb = (size_t)weft_tensor_numel(ot[k]) * weft_dtype_size(weft_tensor_dtype(ot[k]));
            cr_assert(memcmp(weft_tensor_data(ot[k]), weft_tensor_data(oe[k]), nb) == 0,
                      "call %d, output %zu: traced and eager results differ", call, k);
            weft_tensor_release(ot[k]);
        }
    }
    for (size_t k = 0; k < n_outs; k++)
        weft_tensor_release(oe[k]);
    weft_function_destroy(&ft);
    weft_function_destroy(&fe);
}

/* ---- Constant folding of large float reductions. ---- */

#define BIG 100000

static weft_tensor *big_f64(void)
{
    static double v[BIG];
    for (int i = 0; i < BIG; i++)
        v[i] = (i % 3 ? 1e10 : -1e10) / (double)(i + 1) + 0.1 * i;
    weft_tensor *t = NULL;
    int64_t n = BIG;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, v, &t), 0, "%s", weft_errmsg());
    return t;
}

static int sum_and_mean_of_const(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                                 void *user)
{
    (void)args;
    weft_value *c = weft_const_tensor(cx, user);
    outs[0] = weft_sum(cx, c, WEFT_ALL_AXES);
    outs[1] = weft_mean(cx, weft_exp(cx, weft_mul(cx, c, weft_const_f64(cx, 1e-10))), 0);
    return weft_ctx_status(cx);
}

/* A folded sum of 100000 f64 constants used to be computed serially at
 * compile time, while eager mode (and the run, for arguments) adds four
 * chunk partials: the last bits differed. */
Test(trace_vs_eager, folded_large_float_sum_matches_eager)
{
    weft_tensor *c = big_f64();
    same_as_eager(sum_and_mean_of_const, c, NULL, 0, 2);
    weft_tensor_release(c);
}

static int sum_of_arg(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, args[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

Test(trace_vs_eager, large_float_sum_of_argument_matches_eager)
{
    weft_tensor *c = big_f64();
    weft_arg a = weft_arg_tensor(c);
    same_as_eager(sum_of_arg, NULL, &a, 1, 1);
    weft_tensor_release(c);
}

/* ---- Constant folding never grows the program's constants. ---- */

static int outer_sum_of_ranges(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                               void *user)
{
    (void)user;
    weft_value *r = weft_range(cx, WEFT_F64, 0, 2048, 1);
    weft_value *outer = weft_add(cx, weft_reshape(cx, r, 2, (int64_t[]){ 2048, 1 }), r);
    outs[0] = weft_add(cx, weft_sum(cx, outer, WEFT_ALL_AXES), args[0]);
    return weft_ctx_status(cx);
}

/* The outer sum of two 2048-element ranges is a 4M-element (32 MiB)
 * broadcast of small constants.  It used to be folded at compile time into
 * a constant the cached program kept for good (the large float sum of it is
 * left to the run), though big leaves are never folded for that reason. */
Test(trace_vs_eager, folding_leaves_a_growing_broadcast_to_the_run)
{
    weft_tensor *x = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, (double[]){ 0.5 }, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    same_as_eager(outer_sum_of_ranges, NULL, &a, 1, 1);

    weft_function_desc d = { .name = "outer", .body = outer_sum_of_ranges, .n_args = 1,
                             .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
    char *text = test_ops_text(f);
    cr_expect_null(strstr(text, "const : f64[2048,2048]"), "the broadcast was folded:\n%s", text);
    free(text);
    weft_tensor_release(y);
    weft_function_destroy(&f);
    weft_tensor_release(x);
}

/* ---- Shape ops: every one of them on large arguments, chained so that
 * the buffer plan hands buffers along and writes in place. ---- */

static int shape_ops_chain(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0], *idx = args[1];   /* f32[300,200], i64[150] */
    static const int perm[2] = { 1, 0 };
    weft_value *t = weft_transpose(cx, weft_mul(cx, x, weft_const_f64(cx, 3)), perm);
    weft_value *s = weft_slice(cx, t, (int64_t[]){ WEFT_END, 1 }, (int64_t[]){ WEFT_END, -1 },
                               (int64_t[]){ -2, 3 });
    weft_value *parts[3];
    weft_split(cx, x, 3, (int64_t[]){ 100, -1, 50 }, 0, parts);
    weft_value *c = weft_concat(cx, (weft_value *[]){ parts[2], parts[0], parts[1], x }, 4, 0);
    weft_value *g = weft_gather(cx, c, idx, 0);
    weft_value *st = weft_stack(cx, (weft_value *[]){ g, weft_cumsum(cx, g, 1) }, 2, -1);
    weft_value *b = weft_broadcast_to(cx, weft_expand_dims(cx, weft_argmax(cx, x, 1), 0), 2,
                                      (int64_t[]){ 4, -1 });
    weft_value *tl = weft_tile(cx, weft_squeeze(cx, weft_argmin(cx, x, WEFT_ALL_AXES), WEFT_ALL_AXES),
                               NULL);
    outs[0] = weft_add(cx, weft_sum(cx, s, WEFT_ALL_AXES), weft_fill_like(cx, st, 0.5));
    outs[1] = weft_add(cx, b, tl);
    outs[2] = weft_shape(cx, st);
    outs[3] = weft_cumsum(cx, weft_ones_like(cx, c), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

Test(trace_vs_eager, shape_ops_on_large_arguments)
{
    int64_t n = 300 * 200;
    float *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((i * 7919) % 1009) - 500.0f;
    int64_t ix[150];
    for (int i = 0; i < 150; i++)
        ix[i] = (i * 131) % 600 - (i % 4 == 0 ? 600 : 0);
    weft_tensor *x = NULL, *idx = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, (int64_t[]){ 300, 200 }, v, &x), 0);
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, (int64_t[]){ 150 }, ix, &idx), 0);
    free(v);
    weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(idx) };
    same_as_eager(shape_ops_chain, NULL, a, 2, 4);
    weft_tensor_release(x);
    weft_tensor_release(idx);
}
