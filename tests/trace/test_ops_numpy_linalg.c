/* np.linalg.matrix_power, multi_dot, tensorinv and tensorsolve against
 * NumPy 1.24's printed values (Debian's python3-numpy), integers and bool
 * exactly; matrix_power's products and multi_dot's order as NumPy's
 * (the bits of the same products, the traced op list); eager and traced
 * on 1, 2 and 4 workers with the same bits; one trace for every size
 * where no order depends on it; gradients against central differences;
 * the refusals. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_linalg, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* got holds want[0..n) within rel of want's largest magnitude. */
static void expect_close(const weft_tensor *got, const double *want, int64_t n, double rel,
                         const char *what)
{
    cr_assert_eq(weft_tensor_numel(got), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(got));
    double scale = 0;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(test_element(got, i) - want[i]) <= rel * scale,
                  "%s[%lld] is %.17g, not %.17g", what, (long long)i, test_element(got, i),
                  want[i]);
}

/* ---- matrix_power --------------------------------------------------------- */

static int power_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_matrix_power(cx, a[0], *(const int64_t *)user);
    return weft_ctx_status(cx);
}

/* Not dyadic, so that products in another order round otherwise. */
static const double square3[9] = { 0.1, 0.7, -0.3, 0.45, -0.2, 0.9, 0.6, 0.33, 0.15 };

/* a^n for n in 2, 3, 5, 13 by weft_matmul in the order of NumPy's
 * matrix_power (its source: a a, (a a) a, then the bits of n from the
 * lowest, result @ z), so the op's bits can be checked on any BLAS. */
static bool same_as_numpys_products(weft_tensor *a, int64_t n, const weft_tensor *got)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *x = weft_eager_value(cx, a), *a2 = weft_matmul(cx, x, x), *want;
    weft_value *a4 = weft_matmul(cx, a2, a2);
    switch (n) {
    case 2:  want = a2; break;
    case 3:  want = weft_matmul(cx, a2, x); break;
    case 5:  want = weft_matmul(cx, x, a4); break;   /* bits 101: a, then a^4 */
    default: want = weft_matmul(cx, weft_matmul(cx, x, a4), weft_matmul(cx, a4, a4)); break;
    }
    cr_assert_eq(weft_ctx_status(cx), 0, "%s", weft_errmsg());
    bool same = op_same_bits(weft_value_tensor(want), got);
    weft_eager_end(&cx);
    return same;
}

Test(ops_numpy_linalg, matrix_power_is_numpys)
{
    static const struct { int64_t n; double want[9]; } cases[] = {
        { 0, { 1, 0, 0, 0, 1, 0, 0, 0, 1 } },
        { 1, { 0.1, 0.7, -0.3, 0.45, -0.2, 0.9, 0.6, 0.33, 0.15 } },
        { 2, { 0.14500000000000002, -0.169, 0.5549999999999999, 0.495, 0.652, -0.18, 0.2985,
               0.40349999999999997, 0.13950000000000004 } },
        { 3, { 0.27144999999999997, 0.31845, -0.11235000000000003, 0.23490000000000005,
               0.15669999999999995, 0.4113, 0.295125, 0.174285, 0.29452500000000004 } },
        { 5, { 0.16345652500000002, 0.116421125, 0.07766092499999998, 0.23440004999999997,
               0.22842985, 0.15953985, 0.21697991249999998, 0.1825985325, 0.17350931249999998 } },
        { 13, { 0.04648725858548675, 0.0397341331496176, 0.02981464275840431, 0.08413941925517747,
                0.07164250669014069, 0.054706093825189435, 0.07709482635417908,
                0.06563360502623203, 0.04996330426900859 } },
        { -1, { -1.5034482758620693, -0.9379310344827587, 2.620689655172414, 2.172413793103449,
                0.8965517241379313, -1.03448275862069, 1.23448275862069, 1.7793103448275862,
                -1.5402298850574714 } },
        { -3, { -2.481395820520184, -11.018680224691463, 14.44087380011937, 5.073421624502853,
                10.992798392718031, -13.415971681222414, -0.5157434726948844, 4.536145092733063,
                -3.1361013693179847 } },
        { -6, { -57.192871709758734, -28.27852438347554, 66.7047338679279, 50.10113368908765,
                4.082411871489719, -32.14058335963716, 25.91096411389532, 41.321930051383426,
                -58.469448709806805 } },
    };
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 3), square3);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char what[32];
        snprintf(what, sizeof what, "a^%lld", (long long)cases[c].n);
        weft_tensor *y;
        op_results_everywhere(power_body, (void *)&cases[c].n, &a, 1, &y, 1, what);
        test_assert_shape(y, WEFT_F64, 2, DIMS(3, 3), what);
        expect_close(y, cases[c].want, 9, 1e-14, what);
        if (cases[c].n >= 2)
            cr_assert(same_as_numpys_products(a, cases[c].n, y), "%s: not NumPy's products", what);
        weft_tensor_release(y);
    }
    weft_tensor_release(a);
}

/* Integers wrap as NumPy's do (the Fibonacci matrix to 100, modulo 2^64),
 * bool is logical, a batch is each matrix's power, and a negative power of
 * integers is in f64. */
Test(ops_numpy_linalg, matrix_power_of_integers_bool_and_batches)
{
    weft_tensor *fib = test_tensor(WEFT_I64, 2, DIMS(2, 2), (const double[]){ 1, 1, 1, 0 }), *y;
    int64_t n = 100;
    op_results_everywhere(power_body, &n, &fib, 1, &y, 1, "fibonacci");
    uint64_t f[102] = { 0, 1 };
    for (int k = 2; k < 102; k++)
        f[k] = f[k - 1] + f[k - 2];
    const int64_t *got = weft_tensor_data(y);
    const uint64_t want[4] = { f[101], f[100], f[100], f[99] };
    for (int i = 0; i < 4; i++)
        cr_assert_eq((uint64_t)got[i], want[i], "fib[%d] is %llu", i, (unsigned long long)got[i]);
    weft_tensor_release(y);
    weft_tensor_release(fib);

    weft_tensor *b = test_tensor(WEFT_BOOL, 3, DIMS(2, 2, 2),
                                 (const double[]){ 0, 1, 0, 0, 1, 1, 0, 1 });
    n = 2;
    op_results_everywhere(power_body, &n, &b, 1, &y, 1, "bool squared");
    op_expect_values(y, WEFT_BOOL, (const double[]){ 0, 0, 0, 0, 1, 1, 0, 1 }, 8, "bool squared");
    weft_tensor_release(y);
    n = 0;
    op_results_everywhere(power_body, &n, &b, 1, &y, 1, "bool identity");
    op_expect_values(y, WEFT_BOOL, (const double[]){ 1, 0, 0, 1, 1, 0, 0, 1 }, 8, "bool identity");
    weft_tensor_release(y);
    weft_tensor_release(b);

    weft_tensor *i = test_tensor(WEFT_I32, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 });
    n = -2;
    op_results_everywhere(power_body, &n, &i, 1, &y, 1, "i32^-2");
    cr_assert_eq(weft_tensor_dtype(y), WEFT_F64);
    expect_close(y, (const double[]){ 5.499999999999997, -2.499999999999999, -3.7499999999999987,
                                      1.7499999999999996 }, 4, 1e-14, "i32^-2");
    weft_tensor_release(y);
    weft_tensor_release(i);
}

/* With the matrix's dims unknown while tracing, one trace serves every
 * size, the identity included. */
Test(ops_numpy_linalg, matrix_power_traced_once_for_every_size)
{
    for (int64_t n = 0; n <= 6; n += 3) {
        weft_spec sig;
        cr_assert_eq(weft_spec_parse("f64[?,?]", &sig), 0);
        weft_function *f = op_signature_function(rt, power_body, &n, &sig, 1);
        for (int64_t size = 1; size <= 4; size++) {
            double v[16];
            for (int k = 0; k < size * size; k++)
                v[k] = k % (int)(size + 1) == 0 ? 1.0 : 0.0;   /* the identity */
            weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(size, size), v), *y = NULL;
            weft_arg arg = weft_arg_tensor(a);
            cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
            op_expect_values(y, WEFT_F64, v, size * size, "identity's power");
            weft_tensor_release(y);
            weft_tensor_release(a);
        }
        op_destroy_traced_once(&f);
    }
}

/* ---- multi_dot ------------------------------------------------------------ */

static const double mat_a[12] = { 0.0, 1.682941969615793, 1.8185948536513632, 0.2822400161197344,
                                  -1.5136049906158568, -1.9178485493262771, -0.5588309963978518,
                                  1.3139731974375781, 1.9787164932467634, 0.8242369704835132,
                                  -1.0880422217787395, -1.9999804131014067 };
static const double mat_b[8] = { 1.0, 0.5403023058681397, -0.4161468365471424, -0.9899924966004454,
                                 -0.6536436208636119, 0.2836621854632263, 0.9601702866503661,
                                 0.7539022543433047 };
static const double mat_c[10] = { -0.5, -0.35714285714285715, -0.2142857142857143,
                                  -0.07142857142857145, 0.0714285714285714, 0.2142857142857143,
                                  0.3571428571428571, 0.5, 0.6428571428571428, 0.7857142857142858 };
static const double mat_d[15] = { -0.9999983369439447, -0.9999877116507956, -0.9999092042625951,
                                  -0.999329299739067, -0.9950547536867305, -0.9640275800758169,
                                  -0.7615941559557649, 0.0, 0.7615941559557649, 0.9640275800758169,
                                  0.9950547536867305, 0.999329299739067, 0.9999092042625951,
                                  0.9999877116507956, 0.9999983369439447 };
static const double vec3[3] = { 0.5, -1.25, 2.0 };

/* user: the number of arguments, all multiplied in order. */
static int multi_dot_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_multi_dot(cx, a, *(const size_t *)user);
    return weft_ctx_status(cx);
}

Test(ops_numpy_linalg, multi_dot_is_numpys)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 4), mat_a);
    weft_tensor *b = test_tensor(WEFT_F64, 2, DIMS(4, 2), mat_b);
    weft_tensor *c = test_tensor(WEFT_F64, 2, DIMS(2, 5), mat_c);
    weft_tensor *d = test_tensor(WEFT_F64, 2, DIMS(5, 3), mat_d);
    weft_tensor *v = test_tensor(WEFT_F64, 1, DIMS(3), vec3);
    const struct {
        weft_tensor *args[6];
        size_t n;
        int rank;
        int64_t dims[2];
        double want[15];
        const char *what;
    } cases[] = {
        { { a, b, c, d }, 4, 2, { 3, 3 },
          { -2.0797681930061582, -2.1868147559715077, -2.2742288183055996, 1.7993786140327066,
            2.4168656961898947, 3.012654956354368, -0.2725365121556136, -0.9727229336257266,
            -1.6641765698627526 }, "ABCD" },
        { { v, a, b, c, d, v }, 6, 0, { 0 }, { -10.804743475976906 }, "vABCDv" },
        { { a, b, c }, 3, 2, { 3, 5 },
          { 0.6081501522119173, 0.24307624197664932, -0.12199766825861891, -0.48707157849388694,
            -0.8521454887291552, -0.04579236098156967, 0.3576869953800737, 0.7611663517417173,
            1.1646457081033605, 1.5681250644650044, -0.5482863829321438, -0.7106758875687642,
            -0.8730653922053847, -1.035454896842005, -1.1978444014786258 }, "ABC" },
        { { v, a }, 2, 1, { 4 },
          { 5.849439224763348, 4.887255612432769, -0.5682482712344827, -5.501307314939919 }, "vA" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        weft_tensor *y;
        op_results_everywhere(multi_dot_body, (void *)&cases[k].n, cases[k].args, cases[k].n, &y, 1,
                              cases[k].what);
        test_assert_shape(y, WEFT_F64, cases[k].rank, cases[k].dims, cases[k].what);
        expect_close(y, cases[k].want, weft_tensor_numel(y), 1e-14, cases[k].what);
        weft_tensor_release(y);
    }
    /* NumPy's order: (AB)(CD) for ABCD, so no [3,5] (left to right's
     * ABC) is made; v(AB)... for vABCDv, as its split table says. */
    size_t n4 = 4;
    weft_function *f = test_function(rt, "abcd", multi_dot_body, &n4, 4, 1, NULL, 0);
    weft_tensor *y;
    weft_arg args[4] = { weft_arg_tensor(a), weft_arg_tensor(b), weft_arg_tensor(c),
                         weft_arg_tensor(d) };
    cr_assert_eq(weft_function_call(f, args, 4, &y, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(y);
    char *ops = test_ops_text(f);
    cr_expect(strstr(ops, "f64[3,2]") && strstr(ops, "f64[2,3]") && !strstr(ops, "f64[3,5]"),
              "%s", ops);
    free(ops);
    weft_function_destroy(&f);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(c);
    weft_tensor_release(d);
    weft_tensor_release(v);
}

/* Three matrices of equal costs take A(BC), as NumPy's _multi_dot_three;
 * four take A(B(CD)), the first best split of its dynamic program;
 * integers multiply exactly. */
Test(ops_numpy_linalg, multi_dot_of_three_ties_to_a_bc)
{
    /* [2,2] x [2,2] x [2,2]: both orders cost 16. */
    weft_tensor *m[4];
    for (int k = 0; k < 3; k++)
        m[k] = test_tensor(WEFT_I64, 2, DIMS(2, 2), (const double[]){ k + 1, 2, -1, k });
    size_t n3 = 3;
    weft_function *f = test_function(rt, "abc", multi_dot_body, &n3, 3, 1, NULL, 0);
    weft_arg args[3] = { weft_arg_tensor(m[0]), weft_arg_tensor(m[1]), weft_arg_tensor(m[2]) };
    weft_tensor *y;
    cr_assert_eq(weft_function_call(f, args, 3, &y, 1), 0, "%s", weft_errmsg());
    /* NumPy: [[1,2],[-1,0]] @ [[2,2],[-1,1]] @ [[3,2],[-1,2]]. */
    op_expect_values(y, WEFT_I64, (const double[]){ -4, 8, -4, -8 }, 4, "abc");
    weft_tensor_release(y);
    char *ops = test_ops_text(f);
    /* B C is the first product: its operands are the second and third
     * arguments (%1, %2 in the op list). */
    cr_expect(strstr(ops, "matmul(%1, %2)"), "%s", ops);
    free(ops);
    weft_function_destroy(&f);
    /* 5x2, 2x6, 6x1: A(BC) costs 22 multiplications, (AB)C 90. */
    weft_tensor *skew[3] = { test_tensor(WEFT_I64, 2, DIMS(5, 2), (const double[10]){ 1, 2, 3 }),
                             test_tensor(WEFT_I64, 2, DIMS(2, 6), (const double[12]){ 4, 5, 6 }),
                             test_tensor(WEFT_I64, 2, DIMS(6, 1), (const double[6]){ 7, 8, 9 }) };
    f = test_function(rt, "skew", multi_dot_body, &n3, 3, 1, NULL, 0);
    weft_arg sargs[3] = { weft_arg_tensor(skew[0]), weft_arg_tensor(skew[1]),
                          weft_arg_tensor(skew[2]) };
    cr_assert_eq(weft_function_call(f, sargs, 3, &y, 1), 0, "%s", weft_errmsg());
    /* B C = [4 7 + 5 8 + 6 9, 0] = [122, 0]; A (B C) = [122, 366, 0, 0, 0]. */
    op_expect_values(y, WEFT_I64, (const double[]){ 122, 366, 0, 0, 0 }, 5, "skew");
    weft_tensor_release(y);
    ops = test_ops_text(f);
    cr_expect(strstr(ops, "i64[2,1]") && !strstr(ops, "i64[5,6]"), "%s", ops);
    free(ops);
    weft_function_destroy(&f);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(skew[k]);
    m[3] = test_tensor(WEFT_I64, 2, DIMS(2, 2), (const double[]){ 0, 1, 1, 1 });
    size_t n4 = 4;
    f = test_function(rt, "abcd", multi_dot_body, &n4, 4, 1, NULL, 0);
    weft_arg args4[4] = { args[0], args[1], args[2], weft_arg_tensor(m[3]) };
    cr_assert_eq(weft_function_call(f, args4, 4, &y, 1), 0, "%s", weft_errmsg());
    /* NumPy: the product above times [[0,1],[1,1]]. */
    op_expect_values(y, WEFT_I64, (const double[]){ 8, 4, -8, -12 }, 4, "abcd");
    weft_tensor_release(y);
    ops = test_ops_text(f);
    cr_expect(strstr(ops, "matmul(%2, %3)"), "%s", ops);   /* C D first */
    free(ops);
    weft_function_destroy(&f);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(m[k]);
}

/* Four matrices 10x30, 30x5, 5x60, 60x2: NumPy's split table gives
 * A(B(CD)), so the products made are [5,2], [30,2] and [10,2], none of
 * left to right's [10,5] or [10,60]; the values are a plain loop's. */
Test(ops_numpy_linalg, multi_dot_of_four_takes_numpys_order)
{
    static const int64_t p[5] = { 10, 30, 5, 60, 2 };
    weft_tensor *m[4];
    int64_t ref[10 * 60] = { 0 }, rows = 10, cols = p[1];
    for (int k = 0; k < 4; k++) {
        double v[30 * 60];
        for (int64_t i = 0; i < p[k] * p[k + 1]; i++)
            v[i] = (double)((i * 7 + k) % 5 - 2);
        m[k] = test_tensor(WEFT_I64, 2, DIMS(p[k], p[k + 1]), v);
        const int64_t *mv = weft_tensor_data(m[k]);
        if (k == 0) {
            memcpy(ref, mv, sizeof(int64_t) * 10 * 30);
            continue;
        }
        int64_t next[10 * 60] = { 0 };
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < p[k + 1]; j++)
                for (int64_t q = 0; q < cols; q++)
                    next[i * p[k + 1] + j] += ref[i * cols + q] * mv[q * p[k + 1] + j];
        cols = p[k + 1];
        memcpy(ref, next, sizeof next);
    }
    size_t n4 = 4;
    weft_function *f = test_function(rt, "chain", multi_dot_body, &n4, 4, 1, NULL, 0);
    weft_arg args[4];
    for (int k = 0; k < 4; k++)
        args[k] = weft_arg_tensor(m[k]);
    weft_tensor *y;
    cr_assert_eq(weft_function_call(f, args, 4, &y, 1), 0, "%s", weft_errmsg());
    test_assert_shape(y, WEFT_I64, 2, DIMS(10, 2), "chain");
    cr_assert_eq(memcmp(weft_tensor_data(y), ref, sizeof(int64_t) * 20), 0, "chain's values");
    weft_tensor_release(y);
    char *ops = test_ops_text(f);
    cr_expect(strstr(ops, "i64[5,2]") && strstr(ops, "i64[30,2]") && !strstr(ops, "i64[10,5]") &&
              !strstr(ops, "i64[10,60]"), "%s", ops);
    free(ops);
    weft_function_destroy(&f);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(m[k]);
}

/* ---- tensorinv and tensorsolve -------------------------------------------- */

/* [6, 6] reshaped to dims: 2 I + k / 40 (a), or 3 I - (k % 5) / 10 (b). */
static weft_tensor *near_identity(int which, int rank, const int64_t *dims)
{
    double v[36];
    for (int k = 0; k < 36; k++)
        v[k] = which == 0 ? (k % 7 == 0 ? 2.0 : 0.0) + k / 40.0
                          : (k % 7 == 0 ? 3.0 : 0.0) - (k % 5) / 10.0;
    return test_tensor(WEFT_F64, rank, dims, v);
}

/* user: ind */
static int tensorinv_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_tensorinv(cx, a[0], *(const int *)user);
    return weft_ctx_status(cx);
}

Test(ops_numpy_linalg, tensorinv_is_numpys)
{
    weft_tensor *a = near_identity(0, 3, DIMS(2, 3, 6)), *y;
    weft_tensor *b = near_identity(1, 3, DIMS(6, 2, 3));
    int ind = 2;
    op_results_everywhere(tensorinv_body, &ind, &a, 1, &y, 1, "ind 2");
    test_assert_shape(y, WEFT_F64, 3, DIMS(6, 2, 3), "ind 2");
    expect_close(y, (const double[]){
        0.5116443189837685, 0.0056457304163726185, -0.0003528581510232906, -0.006351446718419194,
        -0.012350035285815103, -0.01834862385321101, -0.008468595624558926, 0.4868031051517291,
        -0.01792519407198307, -0.02265349329569514, -0.027381792519407203, -0.032110091743119275,
        -0.028581510232886378, -0.032039520112914624, 0.4645024700070572, -0.03895553987297106,
        -0.042413549752999304, -0.04587155963302752, -0.048694424841213835, -0.050882145377558224,
        -0.05306986591390261, 0.444742413549753, -0.05744530698659141, -0.059633027522935776,
        -0.06880733944954126, -0.06972477064220184, -0.07064220183486236, -0.07155963302752293,
        0.42752293577981654, -0.07339449541284404, -0.08892025405786876, -0.08856739590684545,
        -0.08821453775582218, -0.08786167960479886, -0.08750882145377557, 0.41284403669724773 },
        36, 1e-14, "ind 2");
    weft_tensor_release(y);
    ind = 1;
    op_results_everywhere(tensorinv_body, &ind, &b, 1, &y, 1, "ind 1");
    test_assert_shape(y, WEFT_F64, 3, DIMS(2, 3, 6), "ind 1");
    expect_close(y, (const double[]){
        0.3485625459835925, 0.022918499095540768, 0.03287584844914283, 0.044824667673465324,
        0.05843304512338816, 0.015229212650259167, 0.02291849909554077, 0.37194018952154945,
        0.04693230661997777, 0.05692284713809185, 0.012745407172610655, 0.02291849909554077,
        0.03287584844914283, 0.046932306619977764, 0.39607016612177837, 0.01503559752393913,
        0.02552400550973331, 0.03287584844914283, 0.044824667673465324, 0.05692284713809185,
        0.015035597523939128, 0.3647708979869559, 0.0408583235142805, 0.044824667673465324,
        0.05843304512338815, 0.012745407172610653, 0.02552400550973331, 0.040858323514280495,
        0.39165574124168145, 0.05843304512338815, 0.015229212650259165, 0.02291849909554077,
        0.03287584844914283, 0.04482466767346532, 0.05843304512338814, 0.3485625459835925 },
        36, 1e-14, "ind 1");
    weft_tensor_release(y);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

static int tensorsolve_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int *axes = user;
    outs[0] = weft_tensorsolve(cx, a[0], a[1], axes, axes ? 1 : 0);
    return weft_ctx_status(cx);
}

Test(ops_numpy_linalg, tensorsolve_is_numpys)
{
    static const double want[6] = { 0.49638320395201135, -1.0337332392378267,
                                    0.18615031757233588, 1.4060338743824983,
                                    0.0009174311926606002, -0.6541990119971771 };
    weft_tensor *args[2] = { near_identity(0, 3, DIMS(2, 3, 6)),
                             test_tensor(WEFT_F64, 2, DIMS(2, 3),
                                         (const double[]){ 1, -2, 0.5, 3, 0.25, -1 }) }, *y;
    op_results_everywhere(tensorsolve_body, NULL, args, 2, &y, 1, "no axes");
    test_assert_shape(y, WEFT_F64, 1, DIMS(6), "no axes");
    expect_close(y, want, 6, 1e-14, "no axes");
    weft_tensor_release(y);
    /* The same system with a's last axis first, moved back by axes (0),
     * and by -3, which counts from the end. */
    const double *av = weft_tensor_data(args[0]);
    double mv[36];
    for (int i = 0; i < 6; i++)   /* moved[i, r] = a[r, i] over a's first two dims r */
        for (int r = 0; r < 6; r++)
            mv[i * 6 + r] = av[r * 6 + i];
    weft_tensor *moved = test_tensor(WEFT_F64, 3, DIMS(6, 2, 3), mv);
    weft_tensor *margs[2] = { moved, args[1] };
    static const int axis0 = 0, axis_neg = -3;
    op_results_everywhere(tensorsolve_body, (void *)&axis0, margs, 2, &y, 1, "axes (0,)");
    expect_close(y, want, 6, 1e-14, "axes (0,)");
    weft_tensor_release(y);
    op_results_everywhere(tensorsolve_body, (void *)&axis_neg, margs, 2, &y, 1, "axes (-3,)");
    expect_close(y, want, 6, 1e-14, "axes (-3,)");
    weft_tensor_release(y);
    weft_tensor_release(moved);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);

    /* NumPy's common type: integers are solved in f64, f32 only with f32. */
    static const weft_dtype dts[][3] = { { WEFT_I32, WEFT_I32, WEFT_F64 },
                                         { WEFT_F32, WEFT_F32, WEFT_F32 },
                                         { WEFT_F32, WEFT_F64, WEFT_F64 },
                                         { WEFT_I64, WEFT_F32, WEFT_F64 } };
    for (int k = 0; k < 4; k++) {
        weft_tensor *small[2] = {
            test_tensor(dts[k][0], 2, DIMS(2, 2), (const double[]){ 2, 1, 1, 3 }),
            test_tensor(dts[k][1], 1, DIMS(2), (const double[]){ 1, 2 }) };
        op_results_everywhere(tensorsolve_body, NULL, small, 2, &y, 1, "dtypes");
        cr_assert_eq(weft_tensor_dtype(y), dts[k][2], "case %d", k);
        expect_close(y, (const double[]){ 0.2, 0.6 }, 2, dts[k][2] == WEFT_F32 ? 1e-6 : 1e-15,
                     "dtypes");
        weft_tensor_release(y);
        weft_tensor_release(small[0]);
        weft_tensor_release(small[1]);
    }
}

/* ---- Gradients and refusals ----------------------------------------------- */

/* user: 0 a^3, 1 a^-2, 2 multi_dot(v, a, a, v), 3 tensorsolve(a, v) */
static int grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0:  outs[0] = weft_matrix_power(cx, a[0], 3); break;
    case 1:  outs[0] = weft_matrix_power(cx, a[0], -2); break;
    case 2:
        outs[0] = weft_multi_dot(cx, (weft_value *const[]){ a[1], a[0], a[0], a[1] }, 4);
        break;
    default: outs[0] = weft_tensorsolve(cx, a[0], a[1], NULL, 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_linalg, gradients_come_from_the_parts)
{
    static const double v[3] = { 0.5, -1.25, 2.0 };
    const grad_arg in[2] = { { 2, { 3, 3 }, square3 }, { 1, { 3 }, v } };
    for (int which = 0; which < 4; which++) {
        grad_case c = { grad_fn, &which, 2, which >= 2 ? 2 : 1 };
        static const char *const what[] = { "a^3", "a^-2", "v a a v", "tensorsolve" };
        expect_gradients(&c, in, what[which]);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int twice[2] = { 0, -3 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_matrix_power(cx, a[0], 2); break;
    case 1: outs[0] = weft_multi_dot(cx, a, 1); break;
    case 2: outs[0] = weft_multi_dot(cx, (weft_value *const[]){ a[1], a[2], a[1] }, 3); break;
    case 3: outs[0] = weft_tensorinv(cx, a[1], 0); break;
    case 4: outs[0] = weft_tensorinv(cx, a[0], 1); break;
    case 5: outs[0] = weft_tensorsolve(cx, a[1], a[0], NULL, 0); break;
    case 6: outs[0] = weft_tensorsolve(cx, a[2], a[1], twice, 2); break;
    case 7: outs[0] = weft_tensorsolve(cx, a[2], a[0], NULL, 0); break;
    case 8: outs[0] = weft_multi_dot(cx, NULL, 2); break;
    case 9: outs[0] = weft_tensorsolve(cx, a[3], a[1], NULL, 0); break;
    case 10: outs[0] = weft_tensorinv(cx, a[0], 3); break;
    case 11: outs[0] = weft_tensorsolve(cx, a[2], a[1], NULL, 1); break;
    default: outs[0] = weft_tensorsolve(cx, a[1], a[1], NULL, 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_linalg, refusals_say_why)
{
    weft_tensor *args[4] = { test_tensor(WEFT_F64, 2, DIMS(2, 3),
                                         (const double[]){ 1, 2, 3, 4, 5, 6 }),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
                             test_tensor(WEFT_F64, 3, DIMS(2, 2, 2),
                                         (const double[]){ 1, 2, 3, 4, 5, 6, 7, 8 }),
                             test_tensor(WEFT_F64, 2, DIMS(6, 6), (const double[36]){ 0 }) };
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_matrix_power: a f64[2,3] is not a square matrix" },
        { 1, WEFT_EINVAL, "weft_multi_dot: 1 arrays (2 to 256)" },
        { 2, WEFT_ESHAPE, "weft_multi_dot: arrays[1] f64[2,2,2] is not a matrix" },
        { 3, WEFT_EINVAL, "weft_tensorinv: ind 0 is not in [1, 1]" },
        { 4, WEFT_ESHAPE, "weft_tensorinv: a f64[2,3] splits at ind 1 into 2 and 3 elements" },
        { 5, WEFT_ESHAPE, "weft_tensorsolve: a's rank 1 is not above b's 2" },
        { 6, WEFT_EINVAL,
          "weft_tensorsolve: axes[1] = -3 is out of range for rank 3 or given twice" },
        { 7, WEFT_ESHAPE, "need prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim]) == b.size" },
        { 8, WEFT_EINVAL, "weft_multi_dot: 0 arrays" },
        { 9, WEFT_ESHAPE, "weft_tensorsolve: a f64[6,6] (its axes moved) and b f64[2] need" },
        { 10, WEFT_EINVAL, "weft_tensorinv: ind 3 is not in [1, 2]" },
        { 11, WEFT_EINVAL, "weft_tensorsolve: axes is NULL with n_axes 1" },
        { 12, WEFT_ESHAPE, "weft_tensorsolve: a's rank 1 is not above b's 1" },
    };
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}

/* More than two arrays need their dims while tracing (the order depends
 * on them); two do not. */
Test(ops_numpy_linalg, multi_dot_order_needs_known_dims)
{
    weft_spec sig[3];
    cr_assert_eq(weft_spec_parse("f64[?,4]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f64[4,2]", &sig[1]), 0);
    cr_assert_eq(weft_spec_parse("f64[2,5]", &sig[2]), 0);
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(3, 4), mat_a),
                             test_tensor(WEFT_F64, 2, DIMS(4, 2), mat_b),
                             test_tensor(WEFT_F64, 2, DIMS(2, 5), mat_c) };
    weft_arg a[3] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]),
                      weft_arg_tensor(args[2]) };
    size_t n = 3;
    weft_function *f = op_signature_function(rt, multi_dot_body, &n, sig, 3);
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, a, 3, &y, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_multi_dot: a dim of the 3 arrays is unknown while "
                                    "tracing"), "%s", weft_errmsg());
    weft_function_destroy(&f);
    n = 2;
    f = op_signature_function(rt, multi_dot_body, &n, sig, 2);
    for (int64_t rows = 1; rows <= 3; rows++) {
        weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(rows, 4), mat_a);
        weft_arg xa[2] = { weft_arg_tensor(x), a[1] };
        cr_assert_eq(weft_function_call(f, xa, 2, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 2, DIMS(rows, 2), "two arrays");
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    op_destroy_traced_once(&f);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
