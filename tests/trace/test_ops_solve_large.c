/* LU, Cholesky and QR of matrices large enough to be factored in column
 * tiles over the workers (520 rows: eight panels and a part, the last
 * tile of each step narrower than the others), and solves whose
 * right-hand sides span two tiles: the same bits eagerly and traced on
 * 1, 2 and 4 workers, checked against factors built into the inputs (a
 * row permutation of L U with a known determinant; the Cholesky factor
 * itself; a batch of two, each matrix as the lone one), and the
 * failures of a zero pivot or a negative one found in a panel after the
 * first; on the timeline, each tile once; q r of tall and wide matrices;
 * expm, sqrtm and logm, whose products and solves run in tiles too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_solve_large, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 240);

enum { N = 520, K = 130 };   /* K: two tiles of right-hand sides, the second 2 wide */

typedef enum big_op { SOLVE, INV, SLOGDET, LU, DET, CHOL, TRI } big_op;

typedef struct big_case {
    big_op op;
    bool lower, adjoint;
} big_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const big_case *c = user;
    switch (c->op) {
    case SOLVE: outs[0] = weft_matrix_solve(cx, a[0], a[1], c->adjoint); break;
    case INV: outs[0] = weft_matrix_inverse(cx, a[0]); break;
    case SLOGDET: return weft_slogdet(cx, a[0], outs);
    case LU: return weft_lu(cx, a[0], outs);
    case DET: outs[0] = weft_matrix_determinant(cx, a[0]); break;
    case CHOL: outs[0] = weft_cholesky(cx, a[0]); break;
    case TRI: outs[0] = weft_triangular_solve(cx, a[0], a[1], c->lower, c->adjoint); break;
    }
    return weft_ctx_status(cx);
}

static size_t args_of(big_op op)
{
    return op == SOLVE || op == TRI ? 2 : 1;
}

static size_t outs_of(big_op op)
{
    return op == SLOGDET || op == LU ? 2 : 1;
}

static void results(const big_case *c, weft_tensor *const *args, weft_tensor **outs)
{
    op_results_everywhere(body, (void *)c, args, args_of(c->op), outs, outs_of(c->op),
                          "large matrix");
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double uniform(void)
{
    return op_uniform(&rng);
}

static double *doubles(size_t n)
{
    double *p = calloc(n, sizeof *p);
    cr_assert_not_null(p);
    return p;
}

static const double *data(const weft_tensor *t)
{
    cr_assert_eq(weft_tensor_dtype(t), WEFT_F64);
    return weft_tensor_data(t);
}

/* |got - want| relative to 1 + |want|, the worst so far. */
static double worst;
static void near(double got, double want)
{
    double e = fabs(got - want) / (1 + fabs(want));
    if (!(e <= worst))
        worst = isnan(e) ? INFINITY : e;
}

/* a = P L U, row-major: L unit lower and U upper with small entries off
 * their diagonals (both well conditioned), U's diagonal of magnitudes in
 * [1, 2) with random signs, P a random row permutation (partial pivoting
 * has rows to swap).  *sign and *logabs: its determinant's. */
static double *permuted_lu(double *sign, double *logabs)
{
    double *l = doubles((size_t)N * N), *u = doubles((size_t)N * N), *a = doubles((size_t)N * N);
    *sign = 1;
    *logabs = 0;
    for (int i = 0; i < N; i++) {
        l[i * N + i] = 1;
        for (int j = 0; j < i; j++)
            l[i * N + j] = uniform() / N;
        double d = 1.5 + uniform() / 2;
        u[i * N + i] = uniform() < 0 ? -d : d;
        *sign *= u[i * N + i] < 0 ? -1 : 1;
        *logabs += log(d);
        for (int j = i + 1; j < N; j++)
            u[i * N + j] = uniform() / N;
    }
    int perm[N];
    for (int i = 0; i < N; i++)
        perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)((uniform() + 1) / 2 * (i + 1));
        j = j > i ? i : j;
        if (j != i) {
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
            *sign = -*sign;
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int q = 0; q <= (i < j ? i : j); q++)
                s += l[i * N + q] * u[q * N + j];
            a[perm[i] * N + j] = s;
        }
    free(l);
    free(u);
    return a;
}

static double *random_values(size_t n)
{
    double *v = doubles(n);
    for (size_t i = 0; i < n; i++)
        v[i] = uniform();
    return v;
}

/* The worst error of op(t) x = b on every third column of x and its
 * last, t being a's full matrix or one triangle. */
enum { FULL, LOWER_PART, UPPER_PART };
static double residual(const double *a, const double *x, const double *b, int part, bool adj)
{
    worst = 0;
    for (int j = 0; j < K; j++)
        for (int i = 0; i < N && (j % 3 == 0 || j == K - 1); i++) {
            double s = 0;
            for (int q = 0; q < N; q++) {
                int r = adj ? q : i, c = adj ? i : q;
                if ((part == LOWER_PART && c > r) || (part == UPPER_PART && c < r))
                    continue;
                s += a[r * N + c] * x[q * K + j];
            }
            near(s, b[i * K + j]);
        }
    return worst;
}

Test(ops_solve_large, solve_inverse_lu_and_determinants)
{
    double sign, logabs;
    double *a = permuted_lu(&sign, &logabs), *b = random_values((size_t)N * K);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ N, N }, a),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ N, K }, b) };
    for (int adj = 0; adj < 2; adj++) {
        big_case c = { .op = SOLVE, .adjoint = adj };
        weft_tensor *x;
        results(&c, args, &x);
        cr_assert(residual(a, data(x), b, FULL, adj) <= 1e-12, "solve adjoint %d: %g", adj,
                  worst);
        weft_tensor_release(x);
    }

    big_case ic = { .op = INV };
    weft_tensor *inv;
    results(&ic, args, &inv);
    const double *v = data(inv);
    worst = 0;
    for (int j = 0; j < N; j += 13)   /* columns of both tiles of right-hand sides */
        for (int i = 0; i < N; i++) {
            double s = 0;
            for (int q = 0; q < N; q++)
                s += a[i * N + q] * v[q * N + j];
            near(s, i == j);
        }
    cr_assert(worst <= 1e-12, "A A^-1 off by %g", worst);
    weft_tensor_release(inv);

    big_case sc = { .op = SLOGDET };
    weft_tensor *sl[2];
    results(&sc, args, sl);
    cr_assert_eq(data(sl[0])[0], sign);
    cr_assert(fabs(data(sl[1])[0] - logabs) <= 1e-10 * fabs(logabs), "log|det| %.17g, want %.17g",
              data(sl[1])[0], logabs);
    weft_tensor_release(sl[0]);
    weft_tensor_release(sl[1]);

    /* p a = l u, on every seventh row of l u. */
    big_case lc = { .op = LU };
    weft_tensor *lu[2];
    results(&lc, args, lu);
    const double *f = data(lu[0]);
    const int32_t *p = weft_tensor_data(lu[1]);
    worst = 0;
    for (int i = 0; i < N; i += 7)
        for (int j = 0; j < N; j++) {
            double s = i <= j ? f[i * N + j] : 0;   /* l's unit diagonal times u */
            for (int q = 0; q < (i < j + 1 ? i : j + 1); q++)
                s += f[i * N + q] * f[q * N + j];
            near(s, a[p[i] * N + j]);
        }
    cr_assert(worst <= 1e-13, "p a = l u off by %g", worst);
    weft_tensor_release(lu[0]);
    weft_tensor_release(lu[1]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(a);
    free(b);
}

Test(ops_solve_large, cholesky_and_triangular_solves)
{
    /* a = l0 l0^T with l0 lower, its diagonal in [1, 2) and small entries
     * below: the factor is l0 itself. */
    double *l0 = doubles((size_t)N * N), *a = doubles((size_t)N * N);
    for (int i = 0; i < N; i++) {
        l0[i * N + i] = 1.5 + uniform() / 2;
        for (int j = 0; j < i; j++)
            l0[i * N + j] = uniform() / N;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int q = 0; q <= j; q++)
                s += l0[i * N + q] * l0[j * N + q];
            a[i * N + j] = a[j * N + i] = s;
        }
    double *b = random_values((size_t)N * K);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ N, N }, a),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ N, K }, b) };
    big_case cc = { .op = CHOL };
    weft_tensor *l;
    results(&cc, args, &l);
    const double *lv = data(l);
    worst = 0;
    for (size_t i = 0; i < (size_t)N * N; i++)
        near(lv[i], l0[i]);   /* l0's upper triangle is 0, and so must l's be */
    cr_assert(worst <= 1e-13, "cholesky factor off by %g", worst);

    /* A batch of two: each matrix's tiles run inside a chunk of the
     * batch (a loop over tiles within a loop over matrices), the bits of
     * the lone matrix's. */
    double *two = doubles(2 * (size_t)N * N);
    memcpy(two, a, sizeof *a * N * N);
    memcpy(two + (size_t)N * N, a, sizeof *a * N * N);
    weft_tensor *pair = test_tensor(WEFT_F64, 3, (int64_t[]){ 2, N, N }, two), *lp;
    results(&cc, &pair, &lp);
    for (int m = 0; m < 2; m++)
        cr_assert_eq(memcmp(data(lp) + (size_t)m * N * N, lv, sizeof *lv * N * N), 0,
                     "matrix %d of the batch differs from the lone one", m);
    weft_tensor_release(lp);
    weft_tensor_release(pair);
    free(two);

    for (int lower = 0; lower < 2; lower++)
        for (int adj = 0; adj < 2; adj++) {
            weft_tensor *in[2] = { lower ? l : args[0], args[1] };
            big_case tc = { .op = TRI, .lower = lower, .adjoint = adj };
            weft_tensor *x;
            results(&tc, in, &x);
            cr_assert(residual(lower ? lv : a, data(x), b, lower ? LOWER_PART : UPPER_PART,
                               adj) <= 1e-12,
                      "triangular lower %d adjoint %d: %g", lower, adj, worst);
            weft_tensor_release(x);
        }
    weft_tensor_release(l);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(l0);
    free(a);
    free(b);
}

static void expect_failure(const big_case *c, weft_tensor *const *args, const char *why)
{
    for (int eager = 0; eager < 2; eager++) {
        weft_tensor *y[2] = { NULL, NULL };
        int rc = op_call(rt, body, (void *)c, args, args_of(c->op), y, outs_of(c->op), eager);
        cr_assert_eq(rc, WEFT_EINVAL, "op %d: %s", (int)c->op, weft_err_name(rc));
        char want[96];
        snprintf(want, sizeof want, "matrix 0 of f64[%d,%d] is %s", N, N, why);
        cr_assert(strstr(weft_errmsg(), want), "%s", weft_errmsg());
        cr_assert_null(y[0]);
    }
}

Test(ops_solve_large, zero_and_negative_pivots_in_a_later_panel)
{
    /* Column 300 zero: LU meets a zero pivot in its fifth panel. */
    double sign, logabs;
    double *a = permuted_lu(&sign, &logabs);
    for (int i = 0; i < N; i++)
        a[i * N + 300] = 0;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ N, N }, a),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ N, 1 }, a) };
    expect_failure(&(big_case){ .op = SOLVE }, args, "singular");
    expect_failure(&(big_case){ .op = INV }, args, "singular");
    weft_tensor *d, *sl[2];
    results(&(big_case){ .op = DET }, args, &d);
    cr_assert_eq(data(d)[0], 0);
    results(&(big_case){ .op = SLOGDET }, args, sl);
    cr_assert_eq(data(sl[0])[0], 0);
    cr_assert(isinf(data(sl[1])[0]) && data(sl[1])[0] < 0);
    weft_tensor_release(d);
    weft_tensor_release(sl[0]);
    weft_tensor_release(sl[1]);
    weft_tensor_release(args[0]);

    /* The identity with -1 at row 400 (a later panel) or at row 10 (the
     * first) is not positive definite. */
    for (int at = 0; at < 2; at++) {
        memset(a, 0, sizeof *a * N * N);
        for (int i = 0; i < N; i++)
            a[i * N + i] = 1;
        int row = at ? 400 : 10;
        a[row * N + row] = -1;
        args[0] = test_tensor(WEFT_F64, 2, (int64_t[]){ N, N }, a);
        expect_failure(&(big_case){ .op = CHOL }, args, "not positive definite");
        weft_tensor_release(args[0]);
    }
    weft_tensor_release(args[1]);
    free(a);
}

/* Counts, per step of the timeline's spans named name, how often each
 * column was covered: cover[step / 64][col], steps of -1 (right-hand
 * sides) in row 0. */
enum { STEPS = N / 64 + 1 };
static void tile_cover(const char *path, const char *name, int (*cover)[N])
{
    char *buf = test_read_file(path), tag[64];
    snprintf(tag, sizeof tag, "\"name\":\"%s\",\"cat\":\"op\"", name);
    for (const char *p = strstr(buf, tag); p; p = strstr(p + 1, tag)) {
        const char *d = strstr(p, "\"detail\":\"");
        int step = -1, a = -1, b = -2;
        cr_assert_not_null(d);
        d += strlen("\"detail\":\"");
        if (sscanf(d, "step %d cols %d-%d", &step, &a, &b) != 3)
            cr_assert_eq(sscanf(d, "cols %d-%d", &a, &b), 2, "%.80s", d);
        cr_assert(step < N && (step == -1 || step % 64 == 0), "%.80s", d);
        cr_assert(0 <= a && a <= b && b < N, "%.80s", d);
        for (int c = a; c <= b; c++)
            cover[step < 0 ? 0 : step / 64][c]++;
    }
    free(buf);
}

/* The suite's 4-worker runtime, recording a timeline into a fresh file
 * made from the template path. */
static weft_runtime *profile_four(char *path)
{
    weft_runtime *four = NULL;
    for (int k = 0; k < N_RT; k++)
        if (rt_workers[k] == 4)
            four = rts[k];
    cr_assert_not_null(four);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(weft_profile_begin(four, path), 0, "%s", weft_errmsg());
    return four;
}

typedef struct qr_case {
    bool full;
} qr_case;

static int qr_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    return weft_qr(cx, a[0], ((const qr_case *)user)->full, outs);
}

Test(ops_solve_large, the_timeline_shows_each_tile_once)
{
    /* On 4 workers: each step's tiles cover the columns right of its
     * panel once (the last panel has none), and the solve's tiles the
     * right-hand sides' columns once, and a qr's tiles q's columns. */
#if !WEFT_HAVE_BLAS
    cr_skip_test("a build without a BLAS factors every matrix with its own loops");
#endif
    double sign, logabs;
    double *a = permuted_lu(&sign, &logabs), *b = random_values((size_t)N * K);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ N, N }, a),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ N, K }, b) };
    char path[] = "/tmp/weft_tilesXXXXXX";
    weft_runtime *four = profile_four(path);
    weft_tensor *x = NULL;
    cr_assert_eq(op_call(four, body, &(big_case){ .op = SOLVE }, args, 2, &x, 1, false), 0,
                 "%s", weft_errmsg());
    weft_tensor *qr[2] = { NULL, NULL };
    cr_assert_eq(op_call(four, qr_body, &(qr_case){ .full = false }, args, 1, qr, 2, false), 0,
                 "%s", weft_errmsg());
    cr_assert_eq(weft_profile_end(four), 0, "%s", weft_errmsg());
    static int lu[STEPS][N], rhs[STEPS][N], q[STEPS][N];
    tile_cover(path, "lu_tile", lu);
    tile_cover(path, "solve_tile", rhs);
    tile_cover(path, "qr_q_tile", q);
    remove(path);
    for (int c = 0; c < N; c++)
        cr_expect_eq(q[0][c], 1, "q's column %d in %d tiles", c, q[0][c]);
    weft_tensor_release(qr[0]);
    weft_tensor_release(qr[1]);
    for (int s = 0; s < STEPS; s++)
        for (int c = 0; c < N; c++) {
            int right = c >= s * 64 + 64;
            cr_expect_eq(lu[s][c], right, "step %d column %d covered %d times", s * 64, c,
                         lu[s][c]);
            cr_expect_eq(rhs[s][c], s == 0 && c < K, "right-hand side column %d: %d", c,
                         rhs[s][c]);
        }
    weft_tensor_release(x);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(a);
    free(b);
}

/* ---- Matrix functions ------------------------------------------------------ */

typedef enum fn_op { EXP_TIMES_EXP_NEG, SQRT_SQUARED, EXP_OF_LOG } fn_op;

static int function_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const fn_op *)user) {
    case EXP_TIMES_EXP_NEG:
        outs[0] = weft_matmul(cx, weft_matrix_exponential(cx, a[0]),
                              weft_matrix_exponential(cx, weft_neg(cx, a[0])));
        break;
    case SQRT_SQUARED: {
        weft_value *r = weft_matrix_sqrt(cx, a[0]);
        outs[0] = weft_matmul(cx, r, r);
        break;
    }
    case EXP_OF_LOG: outs[0] = weft_matrix_exponential(cx, weft_matrix_logarithm(cx, a[0])); break;
    }
    return weft_ctx_status(cx);
}

/* expm, sqrtm and logm of a matrix past the tiled size, whose products
 * and solves run in column tiles: the same bits everywhere, expm(a)
 * expm(-a) = I, sqrtm(a)^2 = a and expm(logm(a)) = a; on the timeline
 * every product covers each column once. */
Test(ops_solve_large, matrix_functions_in_tiles)
{
    double *a = random_values((size_t)N * N);
    for (size_t e = 0; e < (size_t)N * N; e++)
        a[e] *= 0.1 / sqrt((double)N);
    for (int i = 0; i < N; i++)
        a[(size_t)i * N + (size_t)i] += 1;   /* I plus a small perturbation */
    weft_tensor *arg = test_tensor(WEFT_F64, 2, (int64_t[]){ N, N }, a);
    const fn_op ops[3] = { EXP_TIMES_EXP_NEG, SQRT_SQUARED, EXP_OF_LOG };
    for (int k = 0; k < 3; k++) {
        weft_tensor *out;
        op_results_everywhere(function_body, (void *)&ops[k], &arg, 1, &out, 1,
                              "matrix function");
        const double *y = data(out);
        worst = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                near(y[(size_t)i * N + j], ops[k] == EXP_TIMES_EXP_NEG ? (i == j)
                                                                       : a[(size_t)i * N + j]);
        cr_assert(worst <= 1e-11, "function %d: error %g", k, worst);
        weft_tensor_release(out);
    }
#if WEFT_HAVE_BLAS
    char path[] = "/tmp/weft_productsXXXXXX";
    weft_runtime *four = profile_four(path);
    weft_tensor *out = NULL;
    cr_assert_eq(op_call(four, function_body, (void *)&ops[0], &arg, 1, &out, 1, false), 0, "%s",
                 weft_errmsg());
    cr_assert_eq(weft_profile_end(four), 0, "%s", weft_errmsg());
    static int cover[STEPS][N];
    tile_cover(path, "matmul_tile", cover);
    remove(path);
    cr_assert_gt(cover[0][0], 0, "no product in tiles");
    for (int c = 1; c < N; c++)
        cr_expect_eq(cover[0][c], cover[0][0], "column %d in %d products, column 0 in %d", c,
                     cover[0][c], cover[0][0]);
    weft_tensor_release(out);
#endif
    weft_tensor_release(arg);
    free(a);
}

/* ---- QR ----------------------------------------------------------------- */

/* q r of a [m, n] (tall, wide, and tall with the full q): the same bits
 * everywhere, r upper triangular, q's columns orthonormal and a = q r, on
 * every seventh row of a and every thirteenth column of q. */
Test(ops_solve_large, qr_of_tall_and_wide_matrices)
{
    const int shapes[][3] = { { 600, 520, 0 }, { 520, 600, 0 }, { 600, 520, 1 } };
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int m = shapes[c][0], n = shapes[c][1], kk = m < n ? m : n;
        qr_case qc = { .full = shapes[c][2] };
        int qcols = qc.full ? m : kk, rrows = qc.full ? m : kk;
        double *a = random_values((size_t)m * n);
        weft_tensor *t = test_tensor(WEFT_F64, 2, (int64_t[]){ m, n }, a), *qr[2];
        op_results_everywhere(qr_body, &qc, &t, 1, qr, 2, "qr");
        test_assert_shape(qr[0], WEFT_F64, 2, (int64_t[]){ m, qcols }, "q");
        test_assert_shape(qr[1], WEFT_F64, 2, (int64_t[]){ rrows, n }, "r");
        const double *q = data(qr[0]), *r = data(qr[1]);
        for (int i = 0; i < rrows; i++)
            for (int j = 0; j < i && j < n; j++)
                cr_assert_eq(r[(size_t)i * n + j], 0, "r[%d][%d] of [%d,%d]", i, j, m, n);
        worst = 0;
        for (int j = 0; j < qcols; j += 13)
            for (int i = 0; i < qcols; i++) {
                double s = 0;
                for (int p = 0; p < m; p++)
                    s += q[(size_t)p * qcols + i] * q[(size_t)p * qcols + j];
                near(s, i == j);
            }
        cr_assert(worst <= 1e-12, "q^T q of [%d,%d] full %d off by %g", m, n, qc.full, worst);
        worst = 0;
        for (int i = 0; i < m; i += 7)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int p = 0; p < rrows && p <= j; p++)
                    s += q[(size_t)i * qcols + p] * r[(size_t)p * n + j];
                near(s, a[(size_t)i * n + j]);
            }
        cr_assert(worst <= 1e-12, "q r of [%d,%d] full %d off by %g", m, n, qc.full, worst);
        weft_tensor_release(qr[0]);
        weft_tensor_release(qr[1]);
        weft_tensor_release(t);
        free(a);
    }
}
