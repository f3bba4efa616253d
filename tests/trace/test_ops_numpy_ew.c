/* tf.experimental.numpy's signbit, fix, float_power, nan_to_num, around,
 * deg2rad, rad2deg and divmod: against C written here in NumPy's formulas, eagerly and traced
 * on 1, 2 and 4 workers with the same bits; signed zeros, NaN and
 * infinities, dtypes, gradients against central differences, and the
 * refusals. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_ew, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static const double specials[12] = { 0.0, -0.0, 2.5, -2.5, 0.5, -0.5, INFINITY, -INFINITY,
                                     NAN, -NAN, 1e300, -7.0 };

/* y is want, NaN for NaN, with the same sign bit. */
static void expect_same(double y, double want, const char *what, int i)
{
    cr_assert(signbit(y) == signbit(want) && ((isnan(y) && isnan(want)) || y == want),
              "%s element %d: %g, want %g", what, i, y, want);
}

/* f of the 12 specials in dtype dt (f32: each rounded first) into y. */
static void specials_of(op_unary_fn f, weft_dtype dt, double *x, weft_tensor **y)
{
    for (int i = 0; i < 12; i++)
        x[i] = dt == WEFT_F32 ? (double)(float)specials[i] : specials[i];
    weft_tensor *t = test_tensor(dt, 1, DIMS(12), x);
    op_results_everywhere(op_unary_body, &f, &t, 1, y, 1, "specials");
    weft_tensor_release(t);
}

Test(ops_numpy_ew, signbit_reads_the_bit)
{
    for (int d = 0; d < 2; d++) {
        double x[12];
        weft_tensor *y;
        specials_of(weft_signbit, d ? WEFT_F64 : WEFT_F32, x, &y);
        test_assert_shape(y, WEFT_BOOL, 1, DIMS(12), "signbit");
        for (int i = 0; i < 12; i++)
            cr_assert_eq(test_element(y, i) != 0, signbit(x[i]) != 0, "signbit(%g) at %d", x[i],
                         i);
        weft_tensor_release(y);
    }
    weft_tensor *t = test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ -3, 0, 4 }), *y;
    op_results_everywhere(op_unary_body, &(op_unary_fn){ weft_signbit }, &t, 1, &y, 1, "ints");
    cr_assert(test_element(y, 0) && !test_element(y, 1) && !test_element(y, 2), "x < 0");
    weft_tensor_release(y);
    weft_tensor_release(t);
}

Test(ops_numpy_ew, fix_rounds_toward_zero)
{
    for (int d = 0; d < 2; d++) {
        double x[12];
        weft_tensor *y;
        specials_of(weft_fix, d ? WEFT_F64 : WEFT_F32, x, &y);
        for (int i = 0; i < 12; i++)
            expect_same(test_element(y, i), x[i] >= 0 ? floor(x[i]) : ceil(x[i]), "fix", i);
        weft_tensor_release(y);
    }
    weft_tensor *t = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ -3, 4 }), *y;
    op_results_everywhere(op_unary_body, &(op_unary_fn){ weft_fix }, &t, 1, &y, 1, "ints");
    test_assert_shape(y, WEFT_F64, 1, DIMS(2), "fix of integers");
    cr_assert(test_element(y, 0) == -3 && test_element(y, 1) == 4);
    weft_tensor_release(y);
    weft_tensor_release(t);
}

/* f32 operands are widened: the f64 pow of the rounded values. */
Test(ops_numpy_ew, float_power_is_pow_in_f64)
{
    const double a[5] = { 1.1, -2, 0, 10, 0.3 }, b[5] = { 2.5, 3, -1, 0.5, 30 };
    const double e[5] = { 2, 3, -1, 0, 3 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 1, DIMS(5), a),
                             test_tensor(WEFT_I32, 1, DIMS(5), e) };
    weft_tensor *y;
    op_results_everywhere(op_binary_body, &(op_binary_fn){ weft_float_power }, args, 2, &y, 1,
                          "float_power");
    test_assert_shape(y, WEFT_F64, 1, DIMS(5), "float_power");
    for (int i = 0; i < 5; i++)
        expect_same(test_element(y, i), pow((double)(float)a[i], e[i]), "float_power", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    const grad_arg xy[2] = { { 1, { 5 }, (const double[]){ 1.1, 2, 0.7, 10, 0.3 } },
                             { 1, { 5 }, b } };
    grad_case c = { op_binary_body, &(op_binary_fn){ weft_float_power }, 2, 2 };
    expect_gradients(&c, xy, "float_power");
}

typedef struct to_num {
    double nan, posinf, neginf;
} to_num;

static int to_num_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const to_num *c = user;
    outs[0] = weft_nan_to_num(cx, a[0], c->nan, c->posinf, c->neginf);
    return weft_ctx_status(cx);
}

Test(ops_numpy_ew, nan_to_num_is_numpys)
{
    const to_num cases[4] = { { 0, INFINITY, -INFINITY }, { -1, 5e38, -2 }, { NAN, 7, -7 },
                              { 0, -INFINITY, INFINITY } };   /* the infinities swapped */
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 4; k++) {
            weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
            double x[12];
            for (int i = 0; i < 12; i++)
                x[i] = d ? specials[i] : (double)(float)specials[i];
            weft_tensor *t = test_tensor(dt, 1, DIMS(12), x), *y;
            op_results_everywhere(to_num_body, (void *)&cases[k], &t, 1, &y, 1, "nan_to_num");
            double big = d ? DBL_MAX : FLT_MAX;
            for (int i = 0; i < 12; i++) {
                double up = cases[k].posinf == INFINITY ? big : cases[k].posinf;
                double down = cases[k].neginf == -INFINITY ? -big : cases[k].neginf;
                double want = isnan(x[i]) ? cases[k].nan
                            : x[i] == INFINITY ? up : x[i] == -INFINITY ? down : x[i];
                if (!d)
                    want = (double)(float)want;   /* 5e38 is inf in f32 */
                expect_same(test_element(y, i), want, "nan_to_num", i);
            }
            weft_tensor_release(y);
            weft_tensor_release(t);
        }
    /* Integers come back unchanged. */
    weft_tensor *t = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ -3, 4 }), *y;
    op_results_everywhere(to_num_body, (void *)&cases[1], &t, 1, &y, 1, "ints");
    cr_assert(op_same_bits(y, t), "integers unchanged");
    weft_tensor_release(y);
    weft_tensor_release(t);
}

static int around_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_around(cx, a[0], *(const int *)user);
    return weft_ctx_status(cx);
}

/* NumPy's around of x in f32 or f64: multiply, round half to even, divide
 * (divide, round, multiply for d < 0), each step in the dtype. */
static double numpy_around(double x, int d, bool f32)
{
    double f = pow(10.0, d < 0 ? -d : d);
    if (f32) {
        float ff = (float)f, v = (float)x;
        v = d >= 0 ? v * ff : v / ff;
        v = rintf(v);
        return (double)(d >= 0 ? v / ff : v * ff);
    }
    double v = d >= 0 ? x * f : x / f;
    v = rint(v);
    return d >= 0 ? v / f : v * f;
}

Test(ops_numpy_ew, around_is_numpys)
{
    const double v[10] = { 1.005, -2.675, 0.125, 0.135, 12345.678, -0.0, 2.5, -1e-7, NAN,
                           INFINITY };
    const int decimals[5] = { 0, 1, 2, -1, -3 };
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 5; k++) {
            double x[10];
            for (int i = 0; i < 10; i++)
                x[i] = d ? v[i] : (double)(float)v[i];
            weft_tensor *t = test_tensor(d ? WEFT_F64 : WEFT_F32, 1, DIMS(10), x), *y;
            op_results_everywhere(around_body, (void *)&decimals[k], &t, 1, &y, 1, "around");
            for (int i = 0; i < 10; i++)
                expect_same(test_element(y, i), numpy_around(x[i], decimals[k], !d), "around", i);
            weft_tensor_release(y);
            weft_tensor_release(t);
        }
    /* Integers: unchanged for d >= 0; for d < 0 rounded half to even in f64. */
    weft_tensor *t = test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 1250, 1350, -1251, 7 });
    const double hundreds[4] = { 1200, 1400, -1300, 0 };
    const int two[2] = { 2, -2 };
    for (int k = 0; k < 2; k++) {
        weft_tensor *y;
        op_results_everywhere(around_body, (void *)&two[k], &t, 1, &y, 1, "ints");
        test_assert_shape(y, WEFT_I64, 1, DIMS(4), "around of integers");
        for (int i = 0; i < 4; i++)
            cr_assert_eq(test_element(y, i), k ? hundreds[i] : test_element(t, i),
                         "decimals %d element %d", two[k], i);
        weft_tensor_release(y);
    }
    weft_tensor_release(t);
    /* Past 2^53 an i64 would not survive f64: decimals 0 leaves it. */
    const int64_t wide[2] = { (INT64_C(1) << 60) + 1, -(INT64_C(1) << 62) - 3 };
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, DIMS(2), wide, &t), 0);
    weft_tensor *y;
    op_results_everywhere(around_body, (void *)&decimals[0], &t, 1, &y, 1, "wide ints");
    cr_assert(op_same_bits(y, t), "wide integers unchanged");
    weft_tensor_release(y);
    weft_tensor_release(t);
}

/* NumPy's constants: in f32 both computed in float (npy_deg2radf,
 * npy_rad2degf), in f64 in double. */
Test(ops_numpy_ew, deg2rad_and_rad2deg_are_numpys)
{
    const double v[6] = { 0, 90, -45.5, 1e30, NAN, 3 };
    const float pi = 3.14159265358979323846f;
    for (int d = 0; d < 2; d++) {
        double y[6], z[6], x[6];
        for (int i = 0; i < 6; i++)
            x[i] = d ? v[i] : (double)(float)v[i];
        op_unary_values(weft_deg2rad, d ? WEFT_F64 : WEFT_F32, x, 6, y);
        op_unary_values(weft_rad2deg, d ? WEFT_F64 : WEFT_F32, x, 6, z);
        for (int i = 0; i < 6; i++) {
            double to_rad = d ? x[i] * (M_PI / 180.0) : (double)((float)x[i] * (pi / 180.0f));
            double to_deg = d ? x[i] * (180.0 / M_PI) : (double)((float)x[i] * (180.0f / pi));
            expect_same(y[i], to_rad, "deg2rad", i);
            expect_same(z[i], to_deg, "rad2deg", i);
        }
    }
}

static int divmod_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_divmod(cx, a[0], a[1], outs);
}

/* Python's pair: q = floor(x1 / x2), r = x1 - q x2 with x2's sign. */
Test(ops_numpy_ew, divmod_is_pythons)
{
    const double a[6] = { 7, -7, 7, -7, 1, 9 }, b[6] = { 2, 2, -2, -2, 3, 3 };
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F64 : WEFT_I32;
        weft_tensor *args[2] = { test_tensor(dt, 1, DIMS(6), a), test_tensor(dt, 1, DIMS(6), b) };
        weft_tensor *y[2];
        op_results_everywhere(divmod_body, NULL, args, 2, y, 2, "divmod");
        for (int i = 0; i < 6; i++) {
            double q = floor(a[i] / b[i]), r = a[i] - q * b[i];
            cr_assert_eq(test_element(y[0], i), q, "%g // %g", a[i], b[i]);
            cr_assert_eq(test_element(y[1], i), r, "%g %% %g", a[i], b[i]);
        }
        for (int k = 0; k < 2; k++) {
            weft_tensor_release(y[k]);
            weft_tensor_release(args[k]);
        }
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_signbit(cx, a[0]); break;
    case 1: outs[0] = weft_around(cx, a[0], 1); break;
    default: outs[0] = weft_around(cx, a[1], 400); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_ew, refusals)
{
    weft_tensor *args[2] = { test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 0 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_signbit: x bool[2] is not a number" },
        { 1, WEFT_EDTYPE, "weft_around: x bool[2] is not a number" },
        { 2, WEFT_EINVAL, "weft_around: decimals 400 is outside -308..308" },
    };
    op_expect_errors(rt, refused_body, cases, 3, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
