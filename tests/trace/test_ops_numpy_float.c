/* np.fmax, np.fmin, np.modf and np.spacing against NumPy 1.24's printed
 * values, bit for bit (zeros' signs included), f64 and f32; integers
 * and bool; eager and traced on 1, 2 and 4 workers with the same bits;
 * gradients against central differences; the refusal. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_float, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* r (dtype dt) holds want[0..n) bit for bit, zeros' signs included. */
static void expect_bits(const weft_tensor *r, weft_dtype dt, const double *want, int64_t n,
                        const char *what)
{
    op_expect_numbers(r, dt, want, n, true, what);
}

/* user: 0 fmax, 1 fmin; 2 fmax of a weak 0.5 and a[0], 3 fmin of a[0]
 * and a weak 0.5 */
static int pick_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0:  outs[0] = weft_fmax(cx, a[0], a[1]); break;
    case 1:  outs[0] = weft_fmin(cx, a[0], a[1]); break;
    case 2:  outs[0] = weft_fmax(cx, weft_const_f64(cx, 0.5), a[0]); break;
    default: outs[0] = weft_fmin(cx, a[0], weft_const_f64(cx, 0.5)); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_float, fmax_and_fmin_are_numpys)
{
    static const double x1[10] = { 0.0, -0.0, NAN, 1.0, NAN, -INFINITY, 2.0, 3.0, -1.5, INFINITY };
    static const double x2[10] = { -0.0, 0.0, 1.0, NAN, NAN, NAN, 3.0, 2.0, -1.5, -INFINITY };
    static const double want[2][10] = {
        { -0.0, 0.0, 1.0, 1.0, NAN, -INFINITY, 3.0, 3.0, -1.5, INFINITY },
        { -0.0, 0.0, 1.0, 1.0, NAN, -INFINITY, 2.0, 2.0, -1.5, -INFINITY },
    };
    for (int d = 0; d < 2; d++)
        for (int which = 0; which < 2; which++) {
            weft_dtype dt = d ? WEFT_F32 : WEFT_F64;
            weft_tensor *args[2] = { test_tensor(dt, 1, DIMS(10), x1),
                                     test_tensor(dt, 1, DIMS(10), x2) }, *y;
            const char *what = which ? "fmin" : "fmax";
            op_results_everywhere(pick_body, &which, args, 2, &y, 1, what);
            expect_bits(y, dt, want[which], 10, what);
            weft_tensor_release(y);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
        }
    /* Integers promote (i32 with i64 is i64), bool stays bool, and a
     * scalar broadcasts. */
    weft_tensor *ints[2] = { test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, -5, 7 }),
                             test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 3, -2, 7 }) }, *y;
    int which = 0;
    op_results_everywhere(pick_body, &which, ints, 2, &y, 1, "integers");
    op_expect_values(y, WEFT_I64, (const double[]){ 3, -2, 7 }, 3, "integers");
    weft_tensor_release(y);
    weft_tensor *bools[2] = { test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }),
                              test_tensor(WEFT_BOOL, 0, NULL, (const double[]){ 0 }) };
    which = 1;
    op_results_everywhere(pick_body, &which, bools, 2, &y, 1, "bool");
    op_expect_values(y, WEFT_BOOL, (const double[]){ 0, 0 }, 2, "bool");
    weft_tensor_release(y);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(ints[k]);
        weft_tensor_release(bools[k]);
    }
    /* A weak scalar takes the tensor's dtype, on either side. */
    weft_tensor *f = test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 0.25, NAN, 0.75 });
    for (which = 2; which < 4; which++) {
        op_results_everywhere(pick_body, &which, &f, 1, &y, 1, "weak scalar");
        expect_bits(y, WEFT_F32, which == 2 ? (const double[]){ 0.5, 0.5, 0.75 }
                                            : (const double[]){ 0.25, 0.5, 0.5 }, 3, "weak scalar");
        weft_tensor_release(y);
    }
    weft_tensor_release(f);
    /* A bool operand among floats is a number. */
    weft_tensor *mixed[2] = { test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ NAN, 0.5 }),
                              test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }) };
    which = 0;
    op_results_everywhere(pick_body, &which, mixed, 2, &y, 1, "bool among floats");
    expect_bits(y, WEFT_F64, (const double[]){ 1.0, 0.5 }, 2, "bool among floats");
    weft_tensor_release(y);
    weft_tensor_release(mixed[0]);
    weft_tensor_release(mixed[1]);
}

static int modf_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_modf(cx, a[0], outs);
}

Test(ops_numpy_float, modf_is_numpys)
{
    static const double x[12] = { 2.5, -2.5, -0.0, 0.0, INFINITY, -INFINITY, NAN, -3.0, 1e300,
                                  5e-324, -0.75, 0.1 };
    static const double frac[2][12] = {
        { 0.5, -0.5, -0.0, 0.0, 0.0, -0.0, NAN, -0.0, 0.0, 5e-324, -0.75, 0.1 },
        { 0.5, -0.5, -0.0, 0.0, 0.0, -0.0, NAN, -0.0, 0.0, 0.0, -0.75, 0.10000000149011612 },
    };
    static const double whole[2][12] = {
        { 2.0, -2.0, -0.0, 0.0, INFINITY, -INFINITY, NAN, -3.0, 1e300, 0.0, -0.0, 0.0 },
        { 2.0, -2.0, -0.0, 0.0, INFINITY, -INFINITY, NAN, -3.0, INFINITY, 0.0, -0.0, 0.0 },
    };
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F32 : WEFT_F64;
        weft_tensor *a = test_tensor(dt, 1, DIMS(12), x), *y[2];
        op_results_everywhere(modf_body, NULL, &a, 1, y, 2, "modf");
        expect_bits(y[0], dt, frac[d], 12, "fractional part");
        expect_bits(y[1], dt, whole[d], 12, "integral part");
        weft_tensor_release(y[0]);
        weft_tensor_release(y[1]);
        weft_tensor_release(a);
    }
    weft_tensor *ints = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 3, -2 }), *y[2];
    op_results_everywhere(modf_body, NULL, &ints, 1, y, 2, "integers");
    expect_bits(y[0], WEFT_F64, (const double[]){ 0.0, -0.0 }, 2, "integers' fractions");
    expect_bits(y[1], WEFT_F64, (const double[]){ 3.0, -2.0 }, 2, "integers' wholes");
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    weft_tensor_release(ints);
}

static int spacing_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_spacing(cx, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_numpy_float, spacing_is_numpys)
{
    static const double x[2][12] = {
        { 1.0, -1.0, 0.0, -0.0, INFINITY, -INFINITY, NAN, 1.7976931348623157e308, 5e-324, -2.0,
          0x1p-1022, -1e300 },
        { 1.0, -1.0, 0.0, -0.0, INFINITY, -INFINITY, NAN, 3.4028234663852886e38, 0x1p-149, -2.0,
          0x1p-126, -1e30 },
    };
    static const double want[2][12] = {
        { 2.220446049250313e-16, -2.220446049250313e-16, 5e-324, 5e-324, NAN, NAN, NAN,
          INFINITY, 5e-324, -4.440892098500626e-16, 5e-324, -1.487016908477783e+284 },
        { 1.1920928955078125e-07, -1.1920928955078125e-07, 0x1p-149, 0x1p-149, NAN, NAN, NAN,
          INFINITY, 0x1p-149, -2.384185791015625e-07, 0x1p-149, -7.555786372591432e+22 },
    };
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F32 : WEFT_F64;
        weft_tensor *a = test_tensor(dt, 1, DIMS(12), x[d]), *y;
        op_results_everywhere(spacing_body, NULL, &a, 1, &y, 1, "spacing");
        expect_bits(y, dt, want[d], 12, "spacing");
        weft_tensor_release(y);
        weft_tensor_release(a);
    }
    weft_tensor *ints = test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 1, -2 }), *y;
    op_results_everywhere(spacing_body, NULL, &ints, 1, &y, 1, "integers");
    expect_bits(y, WEFT_F64, (const double[]){ 2.220446049250313e-16, -4.440892098500626e-16 }, 2,
                "integers");
    weft_tensor_release(y);
    weft_tensor_release(ints);
}

/* user: 0 fmax, 1 fmin, 2 modf's fractional part */
static int grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    if (which < 2)
        return pick_body(cx, a, outs, user);
    weft_value *parts[2];
    if (weft_modf(cx, weft_mul(cx, a[0], a[1]), parts) == 0)
        outs[0] = parts[0];
    return weft_ctx_status(cx);
}

Test(ops_numpy_float, gradients_reach_the_chosen_operand)
{
    static const double x1[5] = { 0.3, -1.2, 2.5, 0.75, -0.4 };
    static const double x2[5] = { 0.1, -0.2, 3.5, -0.75, 1.6 };
    const grad_arg in[2] = { { 1, { 5 }, x1 }, { 1, { 5 }, x2 } };
    for (int which = 0; which < 3; which++) {
        grad_case c = { grad_fn, &which, 2, 2 };
        static const char *const what[] = { "fmax", "fmin", "modf" };
        expect_gradients(&c, in, what[which]);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    int rc = weft_modf(cx, a[0], NULL);
    outs[0] = NULL;
    return rc;
}

Test(ops_numpy_float, modf_needs_outs)
{
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 });
    const op_error_case c = { 0, WEFT_EINVAL, "weft_modf: outs is NULL" };
    op_expect_errors(rt, refused_body, &c, 1, &x, 1);
    weft_tensor_release(x);
}
