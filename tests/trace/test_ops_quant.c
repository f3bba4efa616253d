/* fake_quant_with_min_max_args and _vars (scalar and per-channel ranges)
 * against TensorFlow's CPU functors written out here in floats: bit for
 * bit, over inputs spread across and past each range, ranges with and
 * without 0 inside, 2, 8 and 16 bits, narrow and full grids; the same
 * bits eagerly and traced on 1, 2 and 4 workers; dims unknown while
 * tracing; min == max == 0; the refused calls. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_quant, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct tf_nudged {
    float min, max, scale, inv_scale, quant_zero;
} tf_nudged;

/* TensorFlow's Nudge and quant_zero (fake_quant_ops_functor.h). */
static tf_nudged tf_nudge(float min, float max, int num_bits, bool narrow)
{
    float qmin = narrow ? 1.0f : 0.0f, qmax = (float)((1 << num_bits) - 1);
    tf_nudged n;
    n.scale = (max - min) / (qmax - qmin);
    n.inv_scale = (qmax - qmin) / (max - min);
    float zero_from_min = qmin - min / n.scale;
    float zero = zero_from_min < qmin ? qmin : zero_from_min > qmax ? qmax : roundf(zero_from_min);
    n.min = (qmin - zero) * n.scale;
    n.max = (qmax - zero) * n.scale;
    n.quant_zero = floorf(-n.min * n.inv_scale + 0.5f);
    return n;
}

/* One element as the functors compute it; divide: the scalar vars form's
 * division by the scale. */
static float tf_fake_quant(float x, float min, float max, int num_bits, bool narrow, bool divide)
{
    if (divide && min == 0.0f && max == 0.0f)
        return 0.0f;
    tf_nudged n = tf_nudge(min, max, num_bits, narrow);
    float clamped = fmaxf(fminf(x, n.max), n.min);
    float shifted = clamped - n.min;
    float levels = divide ? shifted / n.scale : shifted * n.inv_scale;
    return floorf(levels - n.quant_zero + 0.5f) * n.scale;
}

typedef struct quant_case {
    bool vars;
    double min, max;
    int num_bits;
    bool narrow;
} quant_case;

static int quant_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const quant_case *c = user;
    outs[0] = c->vars ? weft_fake_quant_with_min_max_vars(cx, a[0], a[1], a[2], c->num_bits,
                                                          c->narrow)
                      : weft_fake_quant_with_min_max_args(cx, a[0], c->min, c->max, c->num_bits,
                                                          c->narrow);
    return weft_ctx_status(cx);
}

/* n inputs spread over [lo - 1, hi + 1] of the range, with its ends, 0
 * and the midpoints between levels among them. */
static float *inputs(int n, float lo, float hi, int num_bits, uint64_t seed)
{
    float *x = malloc((size_t)n * sizeof *x);
    cr_assert_not_null(x);
    uint64_t s = seed * 7919 + 11;
    float step = (hi - lo) / (float)((1 << num_bits) - 1);
    for (int i = 0; i < n; i++) {
        double u = (op_uniform(&s) + 1) / 2;
        x[i] = (float)(lo - 1 + u * (hi - lo + 2));
        if (i % 5 == 1)   /* near a midpoint between two levels */
            x[i] = lo + step * ((float)(i % 7) + 0.5f);
    }
    x[0] = lo;
    x[1] = hi;
    x[2] = 0;
    x[3] = -0.0f;
    return x;
}

static const quant_case ranges[] = {
    { false, -6, 6, 8, false },      { false, -6, 6, 8, true },
    { false, 0.1, 0.9, 8, false },   /* 0 below the range: nudged to min 0 */
    { false, -2.5, -0.5, 4, false }, /* 0 above it */
    { false, -1, 3.7, 2, false },    { false, -0.3, 11.9, 16, false },
    { false, -127.0 / 128, 1, 8, true },
};

Test(ops_quant, args_and_scalar_vars_like_tensorflow)
{
    enum { N = 997 };
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
        for (int vars = 0; vars < 2; vars++) {
            quant_case c = ranges[r];
            c.vars = vars;
            float *x = inputs(N, (float)c.min, (float)c.max, c.num_bits, r + 1);
            int64_t d[2] = { 1, N };
            double xd[N];
            for (int i = 0; i < N; i++)
                xd[i] = x[i];
            float lo = (float)c.min, hi = (float)c.max;
            weft_tensor *args[3] = { test_tensor(WEFT_F32, 2, d, xd),
                                     test_tensor(WEFT_F32, 0, NULL, (double[]){ lo }),
                                     test_tensor(WEFT_F32, 0, NULL, (double[]){ hi }) };
            weft_tensor *out;
            char what[64];
            snprintf(what, sizeof what, "range %zu, %s", r, vars ? "vars" : "args");
            op_results_everywhere(quant_body, &c, args, vars ? 3 : 1, &out, 1, what);
            test_assert_shape(out, WEFT_F32, 2, d, what);
            const float *y = weft_tensor_data(out);
            for (int i = 0; i < N; i++) {
                float want = tf_fake_quant(x[i], lo, hi, c.num_bits, c.narrow, vars);
                cr_assert(y[i] == want && signbit(y[i]) == signbit(want),
                          "%s: x %.9g gives %.9g, TensorFlow %.9g", what, x[i], y[i], want);
            }
            weft_tensor_release(out);
            for (int k = 0; k < 3; k++)
                weft_tensor_release(args[k]);
            free(x);
        }
}

Test(ops_quant, per_channel_ranges_and_zero_ranges)
{
    enum { B = 50, C = 4 };
    const float lo[C] = { -6, 0.25f, -3, 0 }, hi[C] = { 6, 0.75f, -1, 0 };
    float *x = inputs(B * C, -6, 6, 8, 9);
    double xd[B * C], ld[C], hd[C];
    for (int i = 0; i < B * C; i++)
        xd[i] = x[i];
    for (int k = 0; k < C; k++) {
        ld[k] = lo[k];
        hd[k] = hi[k];
    }
    weft_tensor *args[3] = { test_tensor(WEFT_F32, 2, (int64_t[]){ B, C }, xd),
                             test_tensor(WEFT_F32, 1, (int64_t[]){ C }, ld),
                             test_tensor(WEFT_F32, 1, (int64_t[]){ C }, hd) };
    for (int narrow = 0; narrow < 2; narrow++) {
        quant_case c = { .vars = true, .num_bits = 5, .narrow = narrow };
        weft_tensor *out;
        op_results_everywhere(quant_body, &c, args, 3, &out, 1, "per channel");
        const float *y = weft_tensor_data(out);
        for (int i = 0; i < B * C; i++) {
            int k = i % C;
            /* The per-channel functor multiplies and has the zero rule too. */
            float want = lo[k] == 0 && hi[k] == 0
                             ? 0.0f : tf_fake_quant(x[i], lo[k], hi[k], 5, narrow, false);
            cr_assert(y[i] == want, "channel %d: x %.9g gives %.9g, TensorFlow %.9g", k, x[i],
                      y[i], want);
        }
        weft_tensor_release(out);
    }
    /* Dims unknown while tracing: one trace for two batch sizes. */
    weft_spec sig[3];
    cr_assert_eq(weft_spec_parse("f32[?,?]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f32[?]", &sig[1]), 0);
    sig[2] = sig[1];
    quant_case c = { .vars = true, .num_bits = 8 };
    weft_function *f = op_signature_function(rts[1], quant_body, &c, sig, 3);
    for (int64_t rows = 1; rows <= B; rows += B - 1) {
        weft_tensor *part;
        cr_assert_eq(weft_tensor_create(WEFT_F32, 2, (int64_t[]){ rows, C }, x, &part), 0);
        weft_arg a[3] = { weft_arg_tensor(part), weft_arg_tensor(args[1]),
                          weft_arg_tensor(args[2]) };
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, a, 3, &out, 1), 0, "%s", weft_errmsg());
        const float *y = weft_tensor_data(out);
        for (int64_t i = 0; i < rows * C; i++) {
            int k = (int)(i % C);
            float want = k == 3 ? 0.0f : tf_fake_quant(x[i], lo[k], hi[k], 8, false, false);
            cr_assert(y[i] == want, "rows %lld, element %lld", (long long)rows, (long long)i);
        }
        weft_tensor_release(out);
        weft_tensor_release(part);
    }
    op_destroy_traced_once(&f);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
    free(x);
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_fake_quant_with_min_max_args(cx, a[0], -6, 6, 1, false); break;
    case 1: outs[0] = weft_fake_quant_with_min_max_args(cx, a[0], -6, 6, 17, false); break;
    case 2: outs[0] = weft_fake_quant_with_min_max_args(cx, a[0], 1, 1, 8, false); break;
    case 3: outs[0] = weft_fake_quant_with_min_max_args(cx, a[1], -6, 6, 8, false); break;
    case 4: outs[0] = weft_fake_quant_with_min_max_vars(cx, a[0], a[2], a[3], 8, false); break;
    case 5: outs[0] = weft_fake_quant_with_min_max_vars(cx, a[0], a[2], a[2], 8, false); break;
    case 6: outs[0] = weft_fake_quant_with_min_max_vars(cx, a[0], a[1], a[1], 8, false); break;
    case 7:
        outs[0] = weft_fake_quant_with_min_max_vars(cx, a[0], weft_const_f64(cx, -1),
                                                    weft_const_f64(cx, 1), 0, false);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_quant, refused_calls)
{
    static const double zeros[6];
    weft_tensor *args[4] = {
        test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 3 }, zeros),
        test_tensor(WEFT_F64, 0, NULL, (double[]){ 1 }),
        test_tensor(WEFT_F32, 1, (int64_t[]){ 2 }, zeros),
        test_tensor(WEFT_F32, 0, NULL, (double[]){ 1 }),
    };
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_fake_quant_with_min_max_args: num_bits 1 is not between 2 and 16" },
        { 1, WEFT_EINVAL, "num_bits 17 is not between 2 and 16" },
        { 2, WEFT_EINVAL, "weft_fake_quant_with_min_max_args: min 1 is not smaller than max 1" },
        { 3, WEFT_EDTYPE, "weft_fake_quant_with_min_max_args: x f64[] is not f32" },
        { 4, WEFT_ESHAPE, "weft_fake_quant_with_min_max_vars: min f32[2] and max f32[] are not "
                          "both scalars, or both [d] for x f32[2,3] [..., d]" },
        { 5, WEFT_ESHAPE, "min f32[2] and max f32[2] are not both scalars" },
        { 6, WEFT_EDTYPE, "weft_fake_quant_with_min_max_vars: min f64[] is not f32" },
        { 7, WEFT_EINVAL, "weft_fake_quant_with_min_max_vars: num_bits 0 is not between 2" },
    };
    op_expect_errors(rts[1], refused_body, cases, sizeof cases / sizeof cases[0], args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
