/* The decompositions (qr, eigh, eigvalsh, svd, slogdet) and what is built
 * on them (logdet, pinv, lstsq), checked by what they promise (a = q r
 * with q orthonormal and r triangular, a v = v diag(e), a = u diag(s)
 * v^T, the normal equations of a least-squares solution) on matrices
 * small enough for weft's loops and large enough for LAPACK, tall, wide
 * and square, eagerly and traced on 1, 2 and 4 workers (the same bits
 * everywhere), and their errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_decomp, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef enum dc_op { QR, EIGH, EIGVALSH, SVD, SLOGDET, LOGDET, PINV, LSTSQ, LU, LU_SOLVE, LU_INV,
                     LU_RECON } dc_op;

typedef struct dc_case {
    dc_op op;
    bool full, uv, fast;
    double l2, rcond;
} dc_case;

static size_t n_outs_of(const dc_case *c)
{
    switch (c->op) {
    case QR: case EIGH: case SLOGDET: case LU: return 2;
    case SVD: return c->uv ? 3 : 1;
    default: return 1;
    }
}

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const dc_case *c = user;
    switch (c->op) {
    case QR: return weft_qr(cx, a[0], c->full, outs);
    case EIGH: return weft_eigh(cx, a[0], outs);
    case EIGVALSH: outs[0] = weft_eigvalsh(cx, a[0]); break;
    case SVD: return weft_svd(cx, a[0], c->full, c->uv, outs);
    case SLOGDET: return weft_slogdet(cx, a[0], outs);
    case LOGDET: outs[0] = weft_logdet(cx, a[0]); break;
    case PINV: outs[0] = weft_pinv(cx, a[0], c->rcond); break;
    case LSTSQ: outs[0] = weft_lstsq(cx, a[0], a[1], c->l2, c->fast); break;
    case LU: return weft_lu(cx, a[0], outs);
    case LU_SOLVE: {
        weft_value *lp[2];
        if (weft_lu(cx, a[0], lp) == 0)
            outs[0] = weft_lu_solve(cx, lp[0], lp[1], a[1]);
        break;
    }
    case LU_INV:
    case LU_RECON: {
        weft_value *lp[2];
        if (weft_lu(cx, a[0], lp) == 0)
            outs[0] = c->op == LU_INV ? weft_lu_matrix_inverse(cx, lp[0], lp[1])
                                      : weft_lu_reconstruct(cx, lp[0], lp[1]);
        break;
    }
    }
    return weft_ctx_status(cx);
}

static size_t n_args_of(const dc_case *c)
{
    return c->op == LSTSQ || c->op == LU_SOLVE ? 2 : 1;
}

/* c's results into outs, the same bits eagerly and traced everywhere. */
static void results_everywhere(const dc_case *c, weft_tensor *const *args, weft_tensor **outs)
{
    op_results_everywhere(body, (void *)c, args, n_args_of(c), outs, n_outs_of(c), "decomp");
}

static void release_all(weft_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        weft_tensor_release(t[i]);
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static double uniform(void)
{
    return op_uniform(&rng);
}

static double *random_values(size_t count)
{
    double *v = malloc(sizeof *v * (count ? count : 1));
    cr_assert_not_null(v);
    for (size_t i = 0; i < count; i++)
        v[i] = uniform();
    return v;
}

static double el(const weft_tensor *t, size_t i)
{
    return test_element(t, (int64_t)i);
}

/* Element (i, j) of matrix b of a [batch, rows, cols] tensor. */
static double mat(const weft_tensor *t, int64_t b, int rows, int cols, int i, int j)
{
    return el(t, (size_t)((b * rows + i) * cols + j));
}

static double worst;
static void near(double got, double want)
{
    double e = fabs(got - want) / (1 + fabs(want));
    if (!(e <= worst))
        worst = isnan(e) ? INFINITY : e;
}

static double tol_of(weft_dtype dt)
{
    return dt == WEFT_F32 ? 2e-5 : 1e-11;
}

/* The worst error of q^T q = I for the c orthonormal columns of q
 * [batch, rows, c], into `worst`. */
static void orthonormal(const weft_tensor *q, int64_t batch, int rows, int c)
{
    for (int64_t b = 0; b < batch; b++)
        for (int i = 0; i < c; i++)
            for (int j = 0; j < c; j++) {
                double s = 0;
                for (int r = 0; r < rows; r++)
                    s += mat(q, b, rows, c, r, i) * mat(q, b, rows, c, r, j);
                near(s, i == j);
            }
}

/* Shapes [m, n]: the loops up to 8 (svd) or 16 (qr) in the smaller dim,
 * LAPACK above; svd's loops take a tall or wide matrix through its QR
 * factors first. */
static const int shapes[][2] = { { 1, 1 }, { 5, 3 }, { 3, 5 }, { 4, 4 }, { 8, 8 }, { 40, 6 },
                                 { 24, 18 }, { 18, 24 }, { 20, 20 } };
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

Test(ops_decomp, qr_factors_are_orthonormal_and_triangular)
{
    const int64_t batch = 2;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int f = 0; f < 2; f++)
            for (int full = 0; full < 2; full++) {
                int m = shapes[s][0], n = shapes[s][1], k = full || m < n ? m : n;
                weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
                double *v = random_values((size_t)(batch * m * n));
                weft_tensor *a = test_tensor(dt, 3, (int64_t[]){ batch, m, n }, v);
                dc_case c = { .op = QR, .full = full };
                weft_tensor *qr[2];
                results_everywhere(&c, &a, qr);
                test_assert_shape(qr[0], dt, 3, (int64_t[]){ batch, m, k }, "q");
                test_assert_shape(qr[1], dt, 3, (int64_t[]){ batch, k, n }, "r");
                worst = 0;
                orthonormal(qr[0], batch, m, k);
                for (int64_t b = 0; b < batch; b++)
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            double sum = 0;
                            for (int q = 0; q < k; q++) {
                                double r = mat(qr[1], b, k, n, q, j);
                                if (q > j)
                                    cr_assert_eq(r, 0, "r[%d][%d] below the diagonal", q, j);
                                sum += mat(qr[0], b, m, k, i, q) * r;
                            }
                            near(sum, mat(a, b, m, n, i, j));
                        }
                cr_assert(worst <= tol_of(dt), "qr [%d,%d] %s full %d: off by %g", m, n,
                          weft_dtype_name(dt), full, worst);
                release_all(qr, 2);
                weft_tensor_release(a);
                free(v);
            }
}

/* batch symmetric [n, n] matrices, and a copy in *junk whose upper
 * triangle holds junk (eigh reads only the lower one). */
static double *symmetric(int64_t batch, int n, double **junk)
{
    size_t count = (size_t)(batch * n * n);
    double *v = random_values(count);
    *junk = malloc(sizeof **junk * (count ? count : 1));
    cr_assert_not_null(*junk);
    for (int64_t b = 0; b < batch; b++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                size_t at = (size_t)((b * n + i) * n + j);
                if (j > i)
                    v[at] = v[(b * n + j) * n + i];
                (*junk)[at] = j > i ? 100 + j : v[at];
            }
    return v;
}

Test(ops_decomp, eigh_gives_ascending_eigenpairs_from_the_lower_triangle)
{
    const int64_t batch = 2;
    const int sizes[] = { 1, 2, 5, 6, 7, 30 };   /* Jacobi up to 6 rows, LAPACK above */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int f = 0; f < 2; f++) {
            int n = sizes[s];
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            double *junk, *sym = symmetric(batch, n, &junk);
            weft_tensor *a = test_tensor(dt, 3, (int64_t[]){ batch, n, n }, sym);
            weft_tensor *aj = test_tensor(dt, 3, (int64_t[]){ batch, n, n }, junk);
            dc_case c = { .op = EIGH }, cv = { .op = EIGVALSH };
            weft_tensor *ev[2], *ev_junk[2], *vals;
            results_everywhere(&c, &a, ev);
            results_everywhere(&c, &aj, ev_junk);
            results_everywhere(&cv, &a, &vals);
            test_assert_shape(ev[0], dt, 2, (int64_t[]){ batch, n }, "eigenvalues");
            test_assert_shape(ev[1], dt, 3, (int64_t[]){ batch, n, n }, "eigenvectors");
            cr_assert(op_same_bits(ev[0], ev_junk[0]) && op_same_bits(ev[1], ev_junk[1]),
                      "n %d: the upper triangle was read", n);
            worst = 0;
            orthonormal(ev[1], batch, n, n);
            for (int64_t b = 0; b < batch; b++)
                for (int j = 0; j < n; j++) {
                    double e = mat(ev[0], b, 1, n, 0, j);
                    if (j > 0)
                        cr_assert(e >= mat(ev[0], b, 1, n, 0, j - 1), "n %d: not ascending", n);
                    near(mat(vals, b, 1, n, 0, j), e);
                    for (int i = 0; i < n; i++) {
                        double av = 0;
                        for (int q = 0; q < n; q++)
                            av += mat(a, b, n, n, i, q) * mat(ev[1], b, n, n, q, j);
                        near(av, e * mat(ev[1], b, n, n, i, j));
                    }
                }
            cr_assert(worst <= tol_of(dt) * 10, "eigh n %d %s: off by %g", n,
                      weft_dtype_name(dt), worst);
            release_all(ev, 2);
            release_all(ev_junk, 2);
            weft_tensor_release(vals);
            weft_tensor_release(a);
            weft_tensor_release(aj);
            free(sym);
            free(junk);
        }
}

/* Checks a = u diag(s) v^T, the orthonormal columns of u and v, and s
 * descending and >= 0, for svd results usv of a [batch, m, n]. */
static void check_svd(const weft_tensor *a, weft_tensor *const *usv, int64_t batch, int m,
                      int n, bool full, weft_dtype dt)
{
    int p = m < n ? m : n, cu = full ? m : p, cv = full ? n : p;
    test_assert_shape(usv[0], dt, 2, (int64_t[]){ batch, p }, "s");
    test_assert_shape(usv[1], dt, 3, (int64_t[]){ batch, m, cu }, "u");
    test_assert_shape(usv[2], dt, 3, (int64_t[]){ batch, n, cv }, "v");
    worst = 0;
    orthonormal(usv[1], batch, m, cu);
    orthonormal(usv[2], batch, n, cv);
    for (int64_t b = 0; b < batch; b++) {
        for (int j = 0; j < p; j++) {
            double sj = mat(usv[0], b, 1, p, 0, j);
            cr_assert(sj >= 0 && (j == 0 || sj <= mat(usv[0], b, 1, p, 0, j - 1)),
                      "[%d,%d]: s not descending and >= 0", m, n);
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int q = 0; q < p; q++)
                    sum += mat(usv[1], b, m, cu, i, q) * mat(usv[0], b, 1, p, 0, q) *
                           mat(usv[2], b, n, cv, j, q);
                near(sum, mat(a, b, m, n, i, j));
            }
    }
    cr_assert(worst <= tol_of(dt) * 10, "svd [%d,%d] %s full %d: off by %g", m, n,
              weft_dtype_name(dt), full, worst);
}

Test(ops_decomp, svd_reconstructs_the_matrix)
{
    const int64_t batch = 2;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int f = 0; f < 2; f++)
            for (int full = 0; full < 2; full++) {
                int m = shapes[s][0], n = shapes[s][1], p = m < n ? m : n;
                weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
                double *v = random_values((size_t)(batch * m * n));
                weft_tensor *a = test_tensor(dt, 3, (int64_t[]){ batch, m, n }, v);
                dc_case c = { .op = SVD, .full = full, .uv = true }, cs = { .op = SVD };
                weft_tensor *usv[3], *s_only;
                results_everywhere(&c, &a, usv);
                check_svd(a, usv, batch, m, n, full, dt);
                results_everywhere(&cs, &a, &s_only);
                test_assert_shape(s_only, dt, 2, (int64_t[]){ batch, p }, "s alone");
                worst = 0;
                for (size_t i = 0; i < (size_t)(batch * p); i++)
                    near(el(s_only, i), el(usv[0], i));
                cr_assert(worst <= tol_of(dt), "[%d,%d]: s alone off by %g", m, n, worst);
                release_all(usv, 3);
                weft_tensor_release(s_only);
                weft_tensor_release(a);
                free(v);
            }
}

/* [m, n] of rank r: the product of random [m, r] and [r, n]. */
static double *low_rank(int m, int n, int r)
{
    double *x = random_values((size_t)(m * r)), *y = random_values((size_t)(r * n));
    double *a = calloc((size_t)(m * n), sizeof *a);
    cr_assert_not_null(a);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            for (int q = 0; q < r; q++)
                a[i * n + j] += x[i * r + q] * y[q * n + j];
    free(x);
    free(y);
    return a;
}

Test(ops_decomp, rank_deficient_svd_and_pinv)
{
    const int shapes_rd[][3] = { { 6, 4, 2 }, { 4, 6, 2 }, { 30, 20, 5 }, { 5, 5, 0 } };
    for (size_t s = 0; s < sizeof shapes_rd / sizeof shapes_rd[0]; s++)
        for (int full = 0; full < 2; full++) {
            int m = shapes_rd[s][0], n = shapes_rd[s][1], r = shapes_rd[s][2];
            double *v = low_rank(m, n, r);
            weft_tensor *a = test_tensor(WEFT_F64, 3, (int64_t[]){ 1, m, n }, v);
            dc_case c = { .op = SVD, .full = full, .uv = true };
            weft_tensor *usv[3];
            results_everywhere(&c, &a, usv);
            check_svd(a, usv, 1, m, n, full, WEFT_F64);
            release_all(usv, 3);
            /* pinv: a x a = a, x a x = x, and a x, x a symmetric. */
            dc_case cp = { .op = PINV, .rcond = -1 };
            weft_tensor *x;
            results_everywhere(&cp, &a, &x);
            test_assert_shape(x, WEFT_F64, 3, (int64_t[]){ 1, n, m }, "pinv");
            double *ax = calloc((size_t)(m * m), sizeof *ax), *xa = calloc((size_t)(n * n),
                                                                             sizeof *xa);
            cr_assert(ax && xa);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++)
                    for (int q = 0; q < n; q++)
                        ax[i * m + j] += v[i * n + q] * el(x, (size_t)(q * m + j));
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    for (int q = 0; q < m; q++)
                        xa[i * n + j] += el(x, (size_t)(i * m + q)) * v[q * n + j];
            worst = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double axa = 0;
                    for (int q = 0; q < m; q++)
                        axa += ax[i * m + q] * v[q * n + j];
                    near(axa, v[i * n + j]);
                }
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++) {
                    double xax = 0;
                    for (int q = 0; q < n; q++)
                        xax += xa[i * n + q] * el(x, (size_t)(q * m + j));
                    near(xax, el(x, (size_t)(i * m + j)));
                }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++)
                    near(ax[i * m + j], ax[j * m + i]);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    near(xa[i * n + j], xa[j * n + i]);
            cr_assert(worst <= 1e-9, "pinv [%d,%d] rank %d: Penrose conditions off by %g", m, n,
                      r, worst);
            free(ax);
            free(xa);
            weft_tensor_release(x);
            weft_tensor_release(a);
            free(v);
        }
}

Test(ops_decomp, slogdet_and_logdet)
{
    const int sizes[] = { 1, 3, 16, 17, 40 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        /* Matrix 0 random, matrix 1 singular (its second row, or its only
         * one, 0: a pivot of exactly 0 however the rows are swapped),
         * matrix 2 symmetric positive definite with a determinant past
         * f64's range at 40 rows. */
        double *v = random_values((size_t)(3 * n * n));
        memset(v + n * n + (n > 1 ? n : 0), 0, sizeof *v * (size_t)n);
        double *spd = v + 2 * n * n;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                spd[i * n + j] = i == j ? 1e20 : 0;
        weft_tensor *a = test_tensor(WEFT_F64, 3, (int64_t[]){ 3, n, n }, v);
        dc_case c = { .op = SLOGDET };
        weft_tensor *sl[2];
        results_everywhere(&c, &a, sl);
        test_assert_shape(sl[0], WEFT_F64, 1, (int64_t[]){ 3 }, "sign");
        test_assert_shape(sl[1], WEFT_F64, 1, (int64_t[]){ 3 }, "log |det|");
        /* Matrix 0 against a determinant through weft_matrix_determinant's
         * sibling, the product of the LU diagonal computed here. */
        double det = 1;
        {
            double *lu = malloc(sizeof *lu * (size_t)(n * n));
            cr_assert_not_null(lu);
            memcpy(lu, v, sizeof *lu * (size_t)(n * n));
            for (int j = 0; j < n; j++) {
                int p = j;
                for (int i = j + 1; i < n; i++)
                    if (fabs(lu[i * n + j]) > fabs(lu[p * n + j]))
                        p = i;
                if (p != j) {
                    for (int q = 0; q < n; q++) {
                        double t = lu[j * n + q];
                        lu[j * n + q] = lu[p * n + q];
                        lu[p * n + q] = t;
                    }
                    det = -det;
                }
                det *= lu[j * n + j];
                for (int i = j + 1; i < n; i++) {
                    double f = lu[i * n + j] / lu[j * n + j];
                    for (int q = j; q < n; q++)
                        lu[i * n + q] -= f * lu[j * n + q];
                }
            }
            free(lu);
        }
        cr_assert_eq(el(sl[0], 0), det < 0 ? -1 : 1, "n %d: sign", n);
        cr_assert(fabs(el(sl[1], 0) - log(fabs(det))) <= 1e-9 * (1 + fabs(log(fabs(det)))),
                  "n %d: log |det| %.17g, want %.17g", n, el(sl[1], 0), log(fabs(det)));
        cr_assert_eq(el(sl[0], 1), 0, "n %d: a singular matrix's sign", n);
        cr_assert(isinf(el(sl[1], 1)) && el(sl[1], 1) < 0, "n %d: %g", n, el(sl[1], 1));
        cr_assert_eq(el(sl[0], 2), 1);
        double want = n * log(1e20);
        cr_assert(fabs(el(sl[1], 2) - want) <= 1e-12 * want, "n %d: %.17g, want %.17g", n,
                  el(sl[1], 2), want);
        release_all(sl, 2);
        weft_tensor_release(a);
        /* logdet of the positive definite one alone. */
        weft_tensor *pd = test_tensor(WEFT_F64, 2, (int64_t[]){ n, n }, spd);
        dc_case cl = { .op = LOGDET };
        weft_tensor *ld;
        results_everywhere(&cl, &pd, &ld);
        test_assert_shape(ld, WEFT_F64, 0, NULL, "logdet");
        cr_assert(fabs(el(ld, 0) - want) <= 1e-12 * want, "n %d: logdet %.17g", n, el(ld, 0));
        weft_tensor_release(ld);
        weft_tensor_release(pd);
        free(v);
    }
}

/* x [batch, n, k] against a's normal equations a^T (a x - b) = l2 x
 * (tall a) or a x = b (wide a, l2 0), into `worst`. */
static void check_lstsq(const weft_tensor *a, const weft_tensor *b, const weft_tensor *x,
                        int64_t batch, int m, int n, int k, double l2)
{
    worst = 0;
    for (int64_t bt = 0; bt < batch; bt++)
        for (int c = 0; c < k; c++) {
            double *res = malloc(sizeof *res * (size_t)m);
            cr_assert_not_null(res);
            for (int i = 0; i < m; i++) {
                double s = -mat(b, bt, m, k, i, c);
                for (int q = 0; q < n; q++)
                    s += mat(a, bt, m, n, i, q) * mat(x, bt, n, k, q, c);
                res[i] = s;
            }
            for (int q = 0; q < n && m >= n; q++) {
                double g = 0;
                for (int i = 0; i < m; i++)
                    g += mat(a, bt, m, n, i, q) * res[i];
                near(g + l2 * mat(x, bt, n, k, q, c), 0);
            }
            for (int i = 0; i < m && m < n; i++)
                near(res[i], 0);
            free(res);
        }
}

Test(ops_decomp, lstsq_solves_the_normal_equations)
{
    const int64_t batch = 2, k = 3;
    const int lshapes[][2] = { { 6, 3 }, { 3, 6 }, { 40, 20 }, { 20, 40 } };
    for (size_t s = 0; s < sizeof lshapes / sizeof lshapes[0]; s++) {
        int m = lshapes[s][0], n = lshapes[s][1];
        double *av = random_values((size_t)(batch * m * n));
        double *bv = random_values((size_t)(batch * m * k));
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (int64_t[]){ batch, m, n }, av),
                                 test_tensor(WEFT_F64, 3, (int64_t[]){ batch, m, k }, bv) };
        weft_tensor *fast, *robust, *reg;
        dc_case cf = { .op = LSTSQ, .fast = true }, cr = { .op = LSTSQ };
        dc_case cg = { .op = LSTSQ, .fast = true, .l2 = 0.5 };
        results_everywhere(&cf, args, &fast);
        results_everywhere(&cr, args, &robust);
        results_everywhere(&cg, args, &reg);
        test_assert_shape(fast, WEFT_F64, 3, (int64_t[]){ batch, n, k }, "lstsq");
        check_lstsq(args[0], args[1], fast, batch, m, n, (int)k, 0);
        cr_assert(worst <= 1e-8, "fast [%d,%d]: off by %g", m, n, worst);
        check_lstsq(args[0], args[1], robust, batch, m, n, (int)k, 0);
        cr_assert(worst <= 1e-9, "robust [%d,%d]: off by %g", m, n, worst);
        /* Full rank: one solution (minimum norm when wide) both ways. */
        worst = 0;
        for (size_t i = 0; i < (size_t)(batch * n * k); i++)
            near(el(fast, i), el(robust, i));
        cr_assert(worst <= 1e-8, "[%d,%d]: fast and robust differ by %g", m, n, worst);
        if (m >= n) {
            check_lstsq(args[0], args[1], reg, batch, m, n, (int)k, 0.5);
            cr_assert(worst <= 1e-9, "l2 [%d,%d]: off by %g", m, n, worst);
        }
        weft_tensor_release(fast);
        weft_tensor_release(robust);
        weft_tensor_release(reg);
        release_all(args, 2);
        free(av);
        free(bv);
    }
}

Test(ops_decomp, lu_factors_and_solves)
{
    const int sizes[] = { 1, 3, 16, 17, 40 };   /* loops up to 16 rows, LAPACK above */
    const int64_t batch = 2, k = 2;
    for (size_t sz = 0; sz < sizeof sizes / sizeof sizes[0]; sz++)
        for (int f = 0; f < 2; f++) {
            int n = sizes[sz];
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            double *v = random_values((size_t)(batch * n * n));
            for (int64_t b = 0; b < batch; b++)   /* well conditioned */
                for (int i = 0; i < n; i++)
                    v[(b * n + i) * n + i] += n;
            double *bv = random_values((size_t)(batch * n * k));
            weft_tensor *args[2] = { test_tensor(dt, 3, (int64_t[]){ batch, n, n }, v),
                                     test_tensor(dt, 3, (int64_t[]){ batch, n, k }, bv) };
            dc_case c = { .op = LU }, cs = { .op = LU_SOLVE };
            weft_tensor *lp[2], *x;
            results_everywhere(&c, args, lp);
            test_assert_shape(lp[0], dt, 3, (int64_t[]){ batch, n, n }, "lu");
            test_assert_shape(lp[1], WEFT_I32, 2, (int64_t[]){ batch, n }, "perm");
            worst = 0;
            for (int64_t b = 0; b < batch; b++) {
                bool seen[64] = { false };
                for (int i = 0; i < n; i++) {
                    int p = (int)mat(lp[1], b, 1, n, 0, i);
                    cr_assert(p >= 0 && p < n && !seen[p], "n %d: perm is not a permutation", n);
                    seen[p] = true;
                    /* row i of l u is row p of a. */
                    for (int j = 0; j < n; j++) {
                        double sum = 0;
                        for (int q = 0; q <= (i < j ? i : j); q++) {
                            double l = q == i ? 1 : mat(lp[0], b, n, n, i, q);
                            sum += l * mat(lp[0], b, n, n, q, j);
                        }
                        near(sum, mat(args[0], b, n, n, p, j));
                    }
                }
            }
            cr_assert(worst <= tol_of(dt) * 10, "lu n %d %s: l u off by %g", n,
                      weft_dtype_name(dt), worst);
            results_everywhere(&cs, args, &x);
            test_assert_shape(x, dt, 3, (int64_t[]){ batch, n, k }, "lu_solve");
            worst = 0;
            for (int64_t b = 0; b < batch; b++)
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < k; j++) {
                        double sum = 0;
                        for (int q = 0; q < n; q++)
                            sum += mat(args[0], b, n, n, i, q) * mat(x, b, n, (int)k, q, j);
                        near(sum, mat(args[1], b, n, (int)k, i, j));
                    }
            cr_assert(worst <= tol_of(dt) * 10, "lu_solve n %d %s: off by %g", n,
                      weft_dtype_name(dt), worst);
            /* lu_matrix_inverse: a times it is the identity; lu_reconstruct
             * gives a back. */
            dc_case ci = { .op = LU_INV }, cr = { .op = LU_RECON };
            weft_tensor *inv, *back;
            results_everywhere(&ci, args, &inv);
            results_everywhere(&cr, args, &back);
            test_assert_shape(inv, dt, 3, (int64_t[]){ batch, n, n }, "lu_matrix_inverse");
            test_assert_shape(back, dt, 3, (int64_t[]){ batch, n, n }, "lu_reconstruct");
            worst = 0;
            for (int64_t b = 0; b < batch; b++)
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++) {
                        double sum = 0;
                        for (int q = 0; q < n; q++)
                            sum += mat(args[0], b, n, n, i, q) * mat(inv, b, n, n, q, j);
                        near(sum, i == j);
                        near(mat(back, b, n, n, i, j), mat(args[0], b, n, n, i, j));
                    }
            cr_assert(worst <= tol_of(dt) * 10, "lu inverse / reconstruct n %d %s: off by %g", n,
                      weft_dtype_name(dt), worst);
            weft_tensor_release(inv);
            weft_tensor_release(back);
            release_all(lp, 2);
            weft_tensor_release(x);
            release_all(args, 2);
            free(v);
            free(bv);
        }
    /* A singular matrix factors without an error: a zero on u's diagonal. */
    double z[4] = { 1, 2, 2, 4 };
    weft_tensor *s1 = test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 2 }, z);
    dc_case c = { .op = LU };
    weft_tensor *lp[2];
    results_everywhere(&c, &s1, lp);
    cr_assert_eq(el(lp[0], 3), 0, "u[1][1] of a singular matrix");
    release_all(lp, 2);
    weft_tensor_release(s1);
    /* Pivots in a 3-cycle (perm 1, 2, 0, not its own inverse): the
     * reconstruction puts a's rows back where they were. */
    double cyc[9] = { 1, 2, 10, 10, 1, 2, 2, 10, 1 };
    weft_tensor *a3 = test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, cyc), *back;
    results_everywhere(&c, &a3, lp);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(el(lp[1], (size_t)i), (i + 1) % 3, "perm[%d]", i);
    dc_case cr = { .op = LU_RECON };
    results_everywhere(&cr, &a3, &back);
    worst = 0;
    for (int i = 0; i < 9; i++)
        near(el(back, (size_t)i), cyc[i]);
    cr_assert(worst <= 1e-15, "reconstruct after a 3-cycle: off by %g", worst);
    release_all(lp, 2);
    weft_tensor_release(back);
    weft_tensor_release(a3);
}

/* A count of samples unknown while tracing: the fast path traces once
 * (the tall form) and solves each call's normal equations; the
 * minimum-norm path needs the dims and says so. */
Test(ops_decomp, lstsq_with_rows_unknown_while_tracing)
{
    for (int fast = 1; fast >= 0; fast--) {
        dc_case c = { .op = LSTSQ, .fast = fast };
        weft_spec sig[2];
        cr_assert_eq(weft_spec_parse("f64[?,3]", &sig[0]), 0);
        cr_assert_eq(weft_spec_parse("f64[?,2]", &sig[1]), 0);
        weft_function_desc d = { .name = "lstsq", .body = body, .user = &c, .n_args = 2,
                                 .n_outs = 1, .input_signature = sig };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        for (int m = 5; m <= 9; m += 4) {
            double *av = random_values((size_t)(m * 3)), *bv = random_values((size_t)(m * 2));
            weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ m, 3 }, av),
                                     test_tensor(WEFT_F64, 2, (int64_t[]){ m, 2 }, bv) };
            weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
            weft_tensor *x = NULL;
            int rc = weft_function_call(f, a, 2, &x, 1);
            if (!fast) {
                cr_assert_eq(rc, WEFT_EINVAL);
                cr_assert(strstr(weft_errmsg(), "weft_lstsq: the rows and columns of f64[?,3] "
                                                "must be known while tracing"),
                          "%s", weft_errmsg());
            } else {
                cr_assert_eq(rc, 0, "%s", weft_errmsg());
                check_lstsq(args[0], args[1], x, 1, m, 3, 2, 0);
                cr_assert(worst <= 1e-9, "m %d: off by %g", m, worst);
                weft_tensor_release(x);
            }
            release_all(args, 2);
            free(av);
            free(bv);
        }
        if (fast)
            cr_assert_eq(weft_function_tracing_count(f), 1);
        weft_function_destroy(&f);
    }
}

/* ---- Errors --------------------------------------------------------------- */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *tmp[3];
    switch (*(const int *)user) {
    case 0: return weft_eigh(cx, a[0], tmp);                                      /* [2,3] */
    case 1: return weft_qr(cx, weft_cast(cx, a[1], WEFT_I32), false, tmp);
    case 2: outs[0] = weft_lstsq(cx, a[1], a[1], 0.5, false); break;
    case 3: outs[0] = weft_lstsq(cx, a[1], weft_cast(cx, a[1], WEFT_F32), 0, true); break;
    case 4: return weft_svd(cx, a[1], false, true, NULL);
    case 5: return weft_qr(cx, weft_reshape(cx, a[1], 1, (int64_t[]){ 9 }), false, tmp);
    case 6: outs[0] = weft_lstsq(cx, a[1], a[1], -1, true); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_decomp, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_eigh: f64[2,3] is not a square matrix (or a batch of them)" },
        { 1, WEFT_EDTYPE, "weft_qr: the matrix i32[3,3] is not f32 or f64" },
        { 2, WEFT_EINVAL, "weft_lstsq: l2_regularizer 0.5 needs fast" },
        { 3, WEFT_EDTYPE, "weft_lstsq: the matrix f64[3,3] and the right-hand sides f32[3,3] "
                          "are not f32 or f64 matrices of one dtype" },
        { 4, WEFT_EINVAL, "weft_svd: outs is NULL" },
        { 5, WEFT_ESHAPE, "weft_qr: f64[9] is not a matrix" },
        { 6, WEFT_EINVAL, "weft_lstsq: l2_regularizer -1 is negative or not finite" },
    };
    double v[9] = { 4, 1, 0, 1, 3, 1, 0, 1, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
