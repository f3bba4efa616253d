/* weft_conjugate_gradient against TensorFlow's steps written out in NumPy
 * (tests keep its printed values): the iteration count and x, r, p and
 * gamma for a converging solve, one stopped by max_iter, one that never
 * starts, a batch with a preconditioner and a first guess, and one matrix
 * serving a batch of right-hand sides (the batch stops together); eager
 * and traced on 1, 2 and 4 workers with the same bits (eagerly the loop
 * stops, traced the unrolled iterations past the stop are selected
 * away); gradients against central differences; the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_linalg_cg, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef struct cg_case {
    double tol;
    int max_iter;
    bool preconditioner, x;   /* args[2] and args[3] (or args[2]) given */
} cg_case;

static int cg_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cg_case *c = user;
    size_t k = 2;
    weft_value *m = c->preconditioner ? a[k++] : NULL;
    weft_value *x = c->x ? a[k++] : NULL;
    return weft_conjugate_gradient(cx, a[0], a[1], m, x, c->tol, c->max_iter, outs);
}

static const double A[16] = { 4, 1, 0, 0.5, 1, 3, 0.2, 0, 0, 0.2, 2, 0.3, 0.5, 0, 0.3, 1.5 };
static const double B[4] = { 1, 2, -1, 0.5 };

/* What TensorFlow's steps give: the count and x, r, p, gamma. */
typedef struct cg_want {
    int i;
    const double *x, *r, *p, *gamma;
} cg_want;

static void expect_near_all(const weft_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert_eq(weft_tensor_numel(t), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(t));
    for (int64_t k = 0; k < n; k++) {
        double got = test_element(t, k);
        cr_assert(fabs(got - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])),
                  "%s[%lld] is %.17g, not %.17g", what, (long long)k, got, want[k]);
    }
}

static void expect_cg(cg_case c, weft_tensor *const *args, const cg_want *w, int64_t n,
                      int64_t batch, const char *what)
{
    weft_tensor *r[5];
    size_t n_args = 2 + c.preconditioner + c.x;
    op_results_everywhere(cg_body, &c, args, n_args, r, 5, what);
    test_assert_shape(r[0], WEFT_I32, 0, NULL, what);
    cr_assert_eq(test_element(r[0], 0), w->i, "%s: %g iterations, not %d", what,
                 test_element(r[0], 0), w->i);
    cr_assert_eq(weft_tensor_rank(r[1]), weft_tensor_rank(args[1]), "%s: x's rank", what);
    expect_near_all(r[1], w->x, n, what);
    expect_near_all(r[2], w->r, n, what);
    expect_near_all(r[3], w->p, n, what);
    expect_near_all(r[4], w->gamma, batch, what);
    for (int k = 0; k < 5; k++)
        weft_tensor_release(r[k]);
}

Test(ops_linalg_cg, single_systems_are_tensorflows)
{
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(4, 4), A),
                             test_tensor(WEFT_F64, 1, DIMS(4), B) };
    static const double x4[4] = { 0.017207147584381254, 0.7035076108537394, -0.6386499007279947,
                                  0.4553275976174718 };
    static const double r4[4] = { -1.700029006457271e-16, -9.367506770274758e-17,
                                  -6.938893903907228e-18, -3.2959746043559335e-17 };
    static const double p4[4] = { -1.7000290064572744e-16, -9.367506770274719e-17,
                                  -6.938893903906626e-18, -3.295974604355892e-17 };
    static const double g4[1] = { 3.881049764494091e-32 };
    cg_want converged = { 4, x4, r4, p4, g4 };
    expect_cg((cg_case){ 1e-12, 20, false, false }, args, &converged, 4, 1, "converged");
    static const double x2[4] = { 0.012670788448016945, 0.737938472756313, -0.6127523849619361,
                                  0.2782473676443781 };
    static const double r2[4] = { 0.07225468962943027, -0.10393572972456855,
                                  -0.005557134920703755, 0.2601192697980052 };
    static const double p2[4] = { 0.020815530871178302, -0.07320867357862064,
                                  -0.06662776450977966, 0.28538068826376217 };
    static const double g2[1] = { 0.08371629235559819 };
    cg_want two = { 2, x2, r2, p2, g2 };
    expect_cg((cg_case){ 1e-5, 2, false, false }, args, &two, 4, 1, "max_iter 2");
    /* tol is relative to |b| = 2.5: the residual 0.29 after two
     * iterations is below 0.15 |b| (not below 0.15). */
    expect_cg((cg_case){ 0.15, 20, false, false }, args, &two, 4, 1, "tol 0.15");
    static const double zeros[4] = { 0 }, g0[1] = { 6.25 };
    cg_want none = { 0, zeros, B, B, g0 };
    expect_cg((cg_case){ 10, 20, false, false }, args, &none, 4, 1, "tol 10");
    expect_cg((cg_case){ 1e-5, 0, false, false }, args, &none, 4, 1, "max_iter 0");
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* A batch of two systems (A and A + I) with Jacobi preconditioners and a
 * first guess; then A serving three right-hand sides, stopped by
 * max_iter 3 while one of them (1e-3 e0) had long converged: the batch
 * goes on together, as TensorFlow's loop. */
Test(ops_linalg_cg, batches_are_tensorflows)
{
    double b2[32], m2[32] = { 0 };
    for (int k = 0; k < 16; k++) {
        b2[k] = A[k];
        b2[16 + k] = A[k] + (k % 5 == 0);
    }
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < 4; d++)
            m2[s * 16 + d * 5] = 1 / b2[s * 16 + d * 5];
    weft_tensor *args[4] = {
        test_tensor(WEFT_F64, 3, DIMS(2, 4, 4), b2),
        test_tensor(WEFT_F64, 2, DIMS(2, 4), (const double[]){ 1, 2, -1, 0.5, 0.5, -1, 2, 1 }),
        test_tensor(WEFT_F64, 3, DIMS(2, 4, 4), m2),
        test_tensor(WEFT_F64, 2, DIMS(2, 4), (const double[]){ 0.1, 0.2, 0, 0, 0, 0, 0.3, -0.1 }),
    };
    static const double x[8] = { 0.017207147584381167, 0.703507610853739, -0.6386499007279948,
                                 0.4553275976174719, 0.133853104051297, -0.3163800641212475,
                                 0.6583357621684641, 0.29422908772952494 };
    static const double r[8] = { 1.1275702593849246e-17, 1.734723475976807e-18,
                                 2.6020852139652106e-18, 3.469446951953614e-18,
                                 4.119968255444917e-18, 1.8431436932253575e-18, 0, 0 };
    static const double p[8] = { 2.8189256484623108e-18, 5.782411586589375e-19,
                                 1.301042606982606e-18, 2.31296463463574e-18,
                                 8.239936510889832e-19, 4.607859233063395e-19,
                                 7.904739133334405e-34, -5.806035488995913e-34 };
    static const double g[2] = { 4.419858759091801e-35, 4.244122353643869e-36 };
    cg_want batch = { 4, x, r, p, g };
    expect_cg((cg_case){ 1e-8, 20, true, true }, args, &batch, 8, 2, "batch");
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);

    weft_tensor *shared[2] = {
        test_tensor(WEFT_F64, 2, DIMS(4, 4), A),
        test_tensor(WEFT_F64, 2, DIMS(3, 4), (const double[]){ 1, 2, -1, 0.5, 0.5, -1, 2, 1,
                                                               1e-3, 0, 0, 0 }) };
    static const double sx[12] = {
        0.02491772913356735, 0.6948657167197798, -0.6519532242300773, 0.44615278324956764,
        0.18385271080118498, -0.4542438287615744, 0.9837561078630322, 0.41996121325978053,
        0.0002868955513160502, -9.718235020178179e-05, 2.4363983011175508e-05,
        -0.00010079971012483843 };
    static const double sr[12] = {
        -0.017613024878832956, 0.02087576555310884, 0.031087470141328434, 0.013897927827888013,
        0.008852378926944137, -0.017872446089068295, -0.002651813951683686,
        -0.01699500764917293, 0.0, -2.2129731293992313e-07, 9.484170554568724e-07,
        4.425946258798598e-07 };
    static const double sp[12] = {
        -0.017139209535872595, 0.019209346714502317, 0.029570849821277174,
        0.020393930717306694, 0.009706288223148736, -0.013165344818813377,
        0.002488813544102038, -0.02230246467448916, 1.1443574146536476e-09,
        -2.192324723995961e-07, 9.550983037686276e-07, 4.293100854819766e-07 };
    static const double sg[3] = { 0.001905599430507925, 0.0006936513441026478,
                                  1.1443574146536474e-12 };
    cg_want three = { 3, sx, sr, sp, sg };
    expect_cg((cg_case){ 1e-6, 3, false, false }, shared, &three, 12, 3, "shared matrix");
    /* tol 0.05: the second residual falls below it after two iterations,
     * the others after three; the loop runs while any is above. */
    expect_cg((cg_case){ 0.05, 20, false, false }, shared, &three, 12, 3, "any above tol");
    weft_tensor_release(shared[0]);
    weft_tensor_release(shared[1]);
}

static int grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *r[5];
    int rc = weft_conjugate_gradient(cx, a[0], a[1], NULL, NULL, 0, 4, r);
    outs[0] = rc == 0 ? r[1] : NULL;
    return rc < 0 ? rc : weft_ctx_status(cx);
}

/* x after n = 4 iterations (the exact solve) for the matrix and rhs: the
 * gradients of A^-1 b, through every unrolled step. */
Test(ops_linalg_cg, gradients)
{
    const grad_arg in[2] = { { 2, { 4, 4 }, A }, { 1, { 4 }, B } };
    grad_case c = { grad_fn, NULL, 2, 2 };
    expect_gradients(&c, in, "conjugate_gradient");
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *r[5];
    int rc;
    switch (*(const int *)user) {
    case 0: rc = weft_conjugate_gradient(cx, a[0], a[1], NULL, NULL, -1, 5, r); break;
    case 1: rc = weft_conjugate_gradient(cx, a[0], a[1], NULL, NULL, 1e-5, 1001, r); break;
    case 2: rc = weft_conjugate_gradient(cx, a[1], a[1], NULL, NULL, 1e-5, 5, r); break;
    case 3: rc = weft_conjugate_gradient(cx, a[2], a[1], NULL, NULL, 1e-5, 5, r); break;
    case 4: rc = weft_conjugate_gradient(cx, a[3], a[1], NULL, NULL, 1e-5, 5, r); break;
    case 5: rc = weft_conjugate_gradient(cx, a[0], a[4], NULL, NULL, 1e-5, 5, r); break;
    case 6: rc = weft_conjugate_gradient(cx, a[0], a[1], a[2], NULL, 1e-5, 5, r); break;
    case 8: rc = weft_conjugate_gradient(cx, a[0], a[1], NULL, a[3], 1e-5, 5, r); break;
    default: rc = weft_conjugate_gradient(cx, a[0], a[1], NULL, NULL, NAN, 5, r); break;
    }
    outs[0] = rc == 0 ? r[1] : NULL;
    return rc;
}

Test(ops_linalg_cg, refusals)
{
    double z[32] = { 0 };
    weft_tensor *args[5] = {
        test_tensor(WEFT_F64, 2, DIMS(4, 4), A),
        test_tensor(WEFT_F64, 1, DIMS(4), B),
        test_tensor(WEFT_F64, 2, DIMS(4, 3), z),
        test_tensor(WEFT_F64, 3, DIMS(2, 4, 4), z),
        test_tensor(WEFT_F32, 1, DIMS(4), B),
    };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_conjugate_gradient: tol -1 is not finite and >= 0" },
        { 1, WEFT_EINVAL, "weft_conjugate_gradient: max_iter 1001 is not in [0, 1000]" },
        { 2, WEFT_ESHAPE, "weft_conjugate_gradient: operator f64[4] is not a square matrix" },
        { 3, WEFT_ESHAPE, "weft_conjugate_gradient: operator f64[4,3] is not a square matrix" },
        { 4, WEFT_ESHAPE, "weft_conjugate_gradient: rhs f64[4] has fewer batch dims than "
                          "operator f64[2,4,4]" },
        { 5, WEFT_EDTYPE, "weft_conjugate_gradient" },
        { 6, WEFT_ESHAPE, "weft_conjugate_gradient: preconditioner f64[4,3] is not a square" },
        { 7, WEFT_EINVAL, "weft_conjugate_gradient: tol nan is not finite and >= 0" },
        { 8, WEFT_ESHAPE, "weft_conjugate_gradient: x f64[2,4,4] is not of rhs's shape f64[4]" },
    };
    op_expect_errors(rt, refused_body, cases, 9, args, 5);
    for (int k = 0; k < 5; k++)
        weft_tensor_release(args[k]);
}
