/* The image transform's gradient: the adjoint for whole-pixel translations
 * with a constant fill (against central differences, both
 * interpolations), TensorFlow's rule for a rotation and scale per image
 * (g transformed by the inverse transforms computed here, fill 0), none
 * for the transforms, and a height unknown while tracing refused. */
#include <math.h>

#include "grad_check.h"
#include "suite_runtimes.h"

TestSuite(grad_transform, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct shift_case {
    double dx, dy;
    weft_resize_method interpolation;
    weft_fill_mode mode;
} shift_case;

/* sum(translate(x)^2) for one shift. */
static int shifted_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const shift_case *c = user;
    weft_value *d[2] = { weft_const(cx, WEFT_F32, c->dx), weft_const(cx, WEFT_F32, c->dy) };
    weft_value *y = weft_translate(cx, a[0], weft_stack(cx, d, 2, 0), c->interpolation, c->mode,
                                   0.7);   /* the gradient's own fill is 0 */
    outs[0] = weft_square(cx, y);
    return weft_ctx_status(cx);
}

Test(grad_transform, translations_are_exact)
{
    double x[2 * 5 * 6 * 2];
    uint64_t s = 2024;
    for (int i = 0; i < 120; i++)
        x[i] = op_uniform(&s);
    grad_arg arg = { 4, { 2, 5, 6, 2 }, x };
    const double shifts[3][2] = { { 1, -2 }, { -3, 0 }, { 0, 4 } };
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 2; m++) {
            shift_case c = { shifts[k][0], shifts[k][1],
                             m ? WEFT_RESIZE_NEAREST : WEFT_RESIZE_BILINEAR,
                             WEFT_FILL_CONSTANT };
            grad_case g = { shifted_body, &c, 1, 1 };
            char what[64];
            snprintf(what, sizeof what, "shift %g, %g %s", c.dx, c.dy,
                     m ? "nearest" : "bilinear");
            expect_gradients(&g, &arg, what);
        }
}

enum { TB = 2, TH = 7, TW = 9, TC = 2 };

/* The transforms of a rotation and scale about a point, per image. */
static void rotations(float t[TB][8])
{
    for (int b = 0; b < TB; b++) {
        double a = 0.3 + 0.5 * b, z = 1.1 - 0.2 * b, cx = 4, cy = 3;
        double c = cos(a) * z, s = sin(a) * z;
        const double v[8] = { c, -s, cx - c * cx + s * cy, s, c, cy - s * cx - c * cy,
                              0.01 * b, -0.02 };
        for (int i = 0; i < 8; i++)
            t[b][i] = (float)v[i];
    }
}

/* a[0] images, a[1] transforms, a[2] weights: outs[0] the gradient of
 * sum(transform(images) weights) (g = the weights), outs[1] the
 * transforms' gradient. */
static int transform_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const weft_resize_method *m = user;
    outs[0] = weft_mul(cx, weft_image_projective_transform(cx, a[0], a[1], NULL, *m,
                                                           WEFT_FILL_REFLECT, 0.5),
                       a[2]);
    return weft_ctx_status(cx);
}

static int weighted_grad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    return weft_gradients(cx, transform_body, user, a, 3, 2, NULL, outs);
}

/* TensorFlow's rule written out: the inverse of [a0 a1 a2; b0 b1 b2; c0
 * c1 1] scaled to a last entry of 1, in f64 and rounded to f32. */
static void inverse_transforms(float t[TB][8], float inv[TB][8])
{
    for (int b = 0; b < TB; b++) {
        const double m[9] = { t[b][0], t[b][1], t[b][2], t[b][3], t[b][4], t[b][5],
                              t[b][6], t[b][7], 1 };
        double c[9] = { m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8],
                        m[1] * m[5] - m[2] * m[4], m[5] * m[6] - m[3] * m[8],
                        m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
                        m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7],
                        m[0] * m[4] - m[1] * m[3] };
        for (int i = 0; i < 8; i++)
            inv[b][i] = (float)(c[i] / c[8]);   /* the determinant cancels */
    }
}

static int rule_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const weft_resize_method *m = user;
    const int64_t hw[2] = { TH, TW };
    outs[0] = weft_image_projective_transform(cx, a[0], a[1], hw, *m, WEFT_FILL_REFLECT, 0);
    return weft_ctx_status(cx);
}

Test(grad_transform, tensorflow_rule_for_rotations)
{
    double x[TB * TH * TW * TC], w[TB * TH * TW * TC];
    uint64_t s = 99;
    for (int i = 0; i < TB * TH * TW * TC; i++) {
        x[i] = op_uniform(&s);
        w[i] = op_uniform(&s);
    }
    float t[TB][8], inv[TB][8];
    rotations(t);
    inverse_transforms(t, inv);
    double tv[TB * 8], iv[TB * 8];
    for (int i = 0; i < TB * 8; i++) {
        tv[i] = t[i / 8][i % 8];
        iv[i] = inv[i / 8][i % 8];
    }
    const int64_t dims[4] = { TB, TH, TW, TC }, tdims[2] = { TB, 8 };
    for (int k = 0; k < 2; k++) {
        weft_resize_method m = k ? WEFT_RESIZE_NEAREST : WEFT_RESIZE_BILINEAR;
        weft_tensor *args[3] = { test_tensor(WEFT_F64, 4, dims, x),
                                 test_tensor(WEFT_F32, 2, tdims, tv),
                                 test_tensor(WEFT_F64, 4, dims, w) };
        weft_tensor *grads[2], *want;
        op_results_everywhere(weighted_grad_body, &m, args, 3, grads, 2, "rotation");
        weft_tensor *rule_args[2] = { args[2], test_tensor(WEFT_F32, 2, tdims, iv) };
        op_results_everywhere(rule_body, &m, rule_args, 2, &want, 1, "TensorFlow's rule");
        test_assert_shape(grads[0], WEFT_F64, 4, dims, "images' gradient");
        for (int i = 0; i < TB * TH * TW * TC; i++)
            cr_assert(fabs(test_element(grads[0], i) - test_element(want, i)) < 1e-5,
                      "%s: element %d is %g, the rule gives %g", k ? "nearest" : "bilinear", i,
                      test_element(grads[0], i), test_element(want, i));
        test_assert_shape(grads[1], WEFT_F32, 2, tdims, "transforms' gradient");
        for (int i = 0; i < TB * 8; i++)
            cr_assert_eq(test_element(grads[1], i), 0, "the transforms get none");
        for (int i = 0; i < 3; i++)
            weft_tensor_release(args[i]);
        weft_tensor_release(rule_args[1]);
        weft_tensor_release(grads[0]);
        weft_tensor_release(grads[1]);
        weft_tensor_release(want);
    }
}

/* A height unknown while tracing: the rule cannot size its result. */
Test(grad_transform, unknown_height_is_refused)
{
    weft_resize_method m = WEFT_RESIZE_BILINEAR;
    const weft_spec sig[3] = { { .dtype = WEFT_F64, .rank = 4, .dims = { 1, -1, 3, 1 } },
                               { .dtype = WEFT_F32, .rank = 2, .dims = { 1, 8 } },
                               { .dtype = WEFT_F64, .rank = 4, .dims = { 1, -1, 3, 1 } } };
    weft_function_desc d = { .name = "grad", .body = weighted_grad_body, .user = &m,
                             .n_args = 3, .n_outs = 2, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    double x[6] = { 0 }, t[8] = { 1, 0, 0, 0, 1, 0, 0, 0 };
    weft_tensor *a[3] = { test_tensor(WEFT_F64, 4, (const int64_t[]){ 1, 2, 3, 1 }, x),
                          test_tensor(WEFT_F32, 2, (const int64_t[]){ 1, 8 }, t),
                          test_tensor(WEFT_F64, 4, (const int64_t[]){ 1, 2, 3, 1 }, x) };
    weft_arg args[3] = { weft_arg_tensor(a[0]), weft_arg_tensor(a[1]), weft_arg_tensor(a[2]) };
    weft_tensor *o[2] = { NULL, NULL };
    cr_assert_eq(weft_function_call(f, args, 3, o, 2), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "height or width is unknown while tracing"), "%s",
              weft_errmsg());
    for (int i = 0; i < 3; i++)
        weft_tensor_release(a[i]);
    weft_function_destroy(&f);
}
