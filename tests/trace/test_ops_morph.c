/* weft_dilation2d and weft_erosion2d against direct loops over the
 * filter's taps (padding skipped), with strides, dilations and both
 * paddings, eagerly and traced on 1, 2 and 4 workers (the same bits
 * everywhere); a worked example (a zero filter makes them max and min
 * pools); NaN; and their errors. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_morph, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct morph_case {
    bool erosion;
    int64_t s[2], r[2];
    weft_padding padding;
} morph_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const morph_case *c = user;
    outs[0] = c->erosion ? weft_erosion2d(cx, a[0], a[1], c->s, c->padding, c->r)
                         : weft_dilation2d(cx, a[0], a[1], c->s, c->padding, c->r);
    return weft_ctx_status(cx);
}

static uint64_t rng = 0x510e527fade682d1ULL;

enum { B = 2, H = 7, W = 6, C = 3, FH = 3, FW = 2 };

/* The reference: dilation's max of x + f over the taps inside the input;
 * erosion's min of x - f with the filter reflected (TensorFlow's dual). */
static double reference(const morph_case *c, const double *x, const double *f, int64_t b,
                        int64_t oy, int64_t ox, int64_t ch, int64_t top, int64_t left)
{
    double best = c->erosion ? INFINITY : -INFINITY;
    for (int64_t dy = 0; dy < FH; dy++)
        for (int64_t dx = 0; dx < FW; dx++) {
            int64_t iy = oy * c->s[0] + dy * c->r[0] - top, ix = ox * c->s[1] + dx * c->r[1] - left;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                continue;
            double v = x[((b * H + iy) * W + ix) * C + ch];
            if (c->erosion) {
                v -= f[(((FH - 1 - dy) * FW) + (FW - 1 - dx)) * C + ch];
                best = v < best ? v : best;
            } else {
                v += f[(dy * FW + dx) * C + ch];
                best = v > best ? v : best;
            }
        }
    return best;
}

Test(ops_morph, dilation_and_erosion_match_the_loops)
{
    double x[B * H * W * C], f[FH * FW * C];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = op_uniform(&rng);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        f[i] = op_uniform(&rng) / 2;
    const morph_case cases[] = {
        { false, { 1, 1 }, { 1, 1 }, WEFT_PADDING_SAME },
        { false, { 2, 1 }, { 1, 2 }, WEFT_PADDING_VALID },
        { false, { 2, 3 }, { 2, 1 }, WEFT_PADDING_SAME },
        { true, { 1, 1 }, { 1, 1 }, WEFT_PADDING_SAME },
        { true, { 1, 2 }, { 2, 2 }, WEFT_PADDING_VALID },
        { true, { 3, 2 }, { 1, 2 }, WEFT_PADDING_SAME },
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++)
        for (int fl = 0; fl < 2; fl++) {
            const morph_case *c = &cases[q];
            weft_dtype dt = fl ? WEFT_F64 : WEFT_F32;
            weft_tensor *in[2] = { test_tensor(dt, 4, (int64_t[]){ B, H, W, C }, x),
                                   test_tensor(dt, 3, (int64_t[]){ FH, FW, C }, f) };
            int64_t out[2], pad[2];
            const int64_t dims[2] = { H, W }, ks[2] = { FH, FW };
            for (int d = 0; d < 2; d++) {
                int64_t span = (ks[d] - 1) * c->r[d] + 1;
                if (c->padding == WEFT_PADDING_VALID) {
                    out[d] = (dims[d] - span) / c->s[d] + 1;
                    pad[d] = 0;
                } else {
                    out[d] = (dims[d] + c->s[d] - 1) / c->s[d];
                    int64_t total = (out[d] - 1) * c->s[d] + span - dims[d];
                    pad[d] = total > 0 ? total / 2 : 0;
                }
            }
            weft_tensor *y;
            op_results_everywhere(body, (void *)c, in, 2, &y, 1, "morphology");
            test_assert_shape(y, dt, 4, (int64_t[]){ B, out[0], out[1], C }, "morphology");
            /* f32 inputs: the reference on the rounded values, in f32 sums. */
            double xr[B * H * W * C], fr[FH * FW * C];
            for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
                xr[i] = fl ? x[i] : (float)x[i];
            for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
                fr[i] = fl ? f[i] : (float)f[i];
            for (int64_t b = 0; b < B; b++)
                for (int64_t oy = 0; oy < out[0]; oy++)
                    for (int64_t ox = 0; ox < out[1]; ox++)
                        for (int64_t ch = 0; ch < C; ch++) {
                            double want = reference(c, xr, fr, b, oy, ox, ch, pad[0], pad[1]);
                            int64_t at = ((b * out[0] + oy) * out[1] + ox) * C + ch;
                            double got = test_element(y, at);
                            cr_assert(fabs(got - want) <= (fl ? 0 : 1e-7), "case %zu %s "
                                      "(%lld,%lld,%lld,%lld): %.17g, want %.17g", q,
                                      weft_dtype_name(dt), (long long)b, (long long)oy,
                                      (long long)ox, (long long)ch, got, want);
                        }
            weft_tensor_release(y);
            weft_tensor_release(in[0]);
            weft_tensor_release(in[1]);
        }
}

/* A zero 2 x 2 filter, VALID: the 2 x 2 maxima and minima of a 3 x 3
 * image; a NaN pixel reaches every window over it. */
Test(ops_morph, worked_example_and_nan)
{
    const double img[9] = { 1, 5, 2, 7, 3, 8, 4, 9, 6 }, zero[4] = { 0, 0, 0, 0 };
    weft_tensor *in[2] = { test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 3, 3, 1 }, img),
                           test_tensor(WEFT_F64, 3, (int64_t[]){ 2, 2, 1 }, zero) };
    const double want_max[4] = { 7, 8, 9, 9 }, want_min[4] = { 1, 2, 3, 3 };
    for (int e = 0; e < 2; e++) {
        morph_case c = { e == 1, { 1, 1 }, { 1, 1 }, WEFT_PADDING_VALID };
        weft_tensor *y;
        op_results_everywhere(body, &c, in, 2, &y, 1, "worked");
        for (int i = 0; i < 4; i++)
            cr_assert_eq(test_element(y, i), e ? want_min[i] : want_max[i], "%s %d",
                         e ? "erosion" : "dilation", i);
        weft_tensor_release(y);
    }
    weft_tensor_release(in[0]);
    const double with_nan[9] = { 1, 5, 2, 7, NAN, 8, 4, 9, 6 };
    in[0] = test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 3, 3, 1 }, with_nan);
    morph_case c = { false, { 1, 1 }, { 1, 1 }, WEFT_PADDING_VALID };
    weft_tensor *y;
    op_results_everywhere(body, &c, in, 2, &y, 1, "nan");
    for (int i = 0; i < 4; i++)
        cr_assert(isnan(test_element(y, i)), "window %d", i);
    weft_tensor_release(y);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_dilation2d(cx, a[0], a[0], NULL, WEFT_PADDING_SAME, NULL); break;
    case 1: outs[0] = weft_erosion2d(cx, a[0], weft_cast(cx, a[1], WEFT_F32), NULL,
                                     WEFT_PADDING_SAME, NULL); break;
    case 2: outs[0] = weft_dilation2d(cx, a[0], a[1], NULL, (weft_padding)5, NULL); break;
    case 3: outs[0] = weft_dilation2d(cx, a[0], a[1], (const int64_t[]){ 1, 0 },
                                      WEFT_PADDING_SAME, NULL); break;
    case 4: outs[0] = weft_dilation2d(cx, a[0], a[1], NULL, WEFT_PADDING_VALID,
                                      (const int64_t[]){ 3, 1 }); break;
    case 5: outs[0] = weft_erosion2d(cx, a[0], a[1], NULL, (weft_padding)5, NULL); break;
    case 6: outs[0] = weft_erosion2d(cx, a[0], a[1], NULL, WEFT_PADDING_VALID,
                                     (const int64_t[]){ 3, 1 }); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_morph, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_dilation2d: the input f64[1,2,2,1] and filters f64[1,2,2,1] are "
                          "not [b, h, w, c] and [fh, fw, c]" },
        { 1, WEFT_EDTYPE, "weft_erosion2d: the input f64[1,2,2,1] and filters f32[2,2,1] are "
                          "not both f32 or both f64" },
        { 2, WEFT_EINVAL, "weft_dilation2d: padding 5 is not WEFT_PADDING_VALID" },
        { 3, WEFT_EINVAL, "weft_dilation2d: strides[1] is 0, not within 1.." },
        { 4, WEFT_ESHAPE, "weft_dilation2d: an input dim of 2 is smaller than the filter's span "
                          "of 4" },
        /* An erosion's padding and geometry errors name it, not the
         * dilation it is made of. */
        { 5, WEFT_EINVAL, "weft_erosion2d: padding 5 is not WEFT_PADDING_VALID" },
        { 6, WEFT_ESHAPE, "weft_erosion2d: an input dim of 2 is smaller than the filter's span "
                          "of 4" },
    };
    double v[4] = { 1, 2, 3, 4 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 2, 2, 1 }, v),
                             test_tensor(WEFT_F64, 3, (int64_t[]){ 2, 2, 1 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
