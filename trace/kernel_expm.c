/* The matrix exponential of one matrix, for weft_matrix_exponential
 * (tf.linalg.expm): Higham's scaling and squaring with Pade approximants
 * ("The scaling and squaring method for the matrix exponential
 * revisited", SIAM J. Matrix Anal. Appl. 26(4), 2005), the method
 * TensorFlow's expm cites.  The 1-norm picks the lowest degree of 3, 5, 7,
 * 9 and 13 whose backward error stays below the f64 unit roundoff; above
 * theta_13 the matrix is halved s times first and the result squared s
 * times after.  The kernel_linalg.c batch driver calls it on each matrix
 * of a batch, in column-major f64; from WEFT__LINALG_TILED_MIN rows the
 * products and the solve run in tiles of columns over the workers. */
#include <math.h>
#include <string.h>

#include "trace/linalg.h"

#if WEFT_HAVE_BLAS
#include "trace/blas_api.h"
#endif

/* Higham's table 2.3: the largest 1-norm for which degree m is accurate
 * to the f64 unit roundoff. */
static const double theta3 = 1.495585217958292e-2, theta5 = 2.539398330063230e-1,
                    theta7 = 9.504178996162932e-1, theta9 = 2.097847961257068e+0,
                    theta13 = 5.371920351148152e+0;

/* The coefficients b_0..b_m of the [m/m] Pade approximant of exp. */
static const double pade3[] = { 120, 60, 12, 1 };
static const double pade5[] = { 30240, 15120, 3360, 420, 30, 1 };
static const double pade7[] = { 17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1 };
static const double pade9[] = { 17643225600.0, 8821612800.0, 2075673600.0, 302702400.0,
                                30270240.0,    2162160.0,    110880.0,     3960.0,
                                90.0,          1.0 };
static const double pade13[] = { 64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                 1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                 670442572800.0,      33522128640.0,       1323241920.0,
                                 40840800.0,          960960.0,            16380.0,
                                 182.0,               1.0 };

int weft__linalg_mat_mul(weft_runtime *rt, int n, const double *x, const double *y, double *z)
{
#if WEFT_HAVE_BLAS
    if (weft__linalg_tiled(n))
        return weft__linalg_mat_mul_tiled(rt, n, x, y, z);
    if (weft__linalg_lapack(n)) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x, n, y, n, 0.0, z,
                    n);
        return 0;
    }
#endif
    (void)rt;
    size_t nn = (size_t)n * n;
    memset(z, 0, sizeof *z * nn);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++) {
            double f = y[k + (size_t)j * n];
            for (int i = 0; i < n; i++)
                z[i + (size_t)j * n] += x[i + (size_t)k * n] * f;
        }
    return 0;
}

/* dst = c0 I + sum of c[i] * pw[i] over the count given powers. */
static void combine(int n, double c0, const double *c, const double *const *pw, int count,
                    double *dst)
{
    size_t nn = (size_t)n * n;
    for (size_t e = 0; e < nn; e++) {
        double s = 0;
        for (int i = 0; i < count; i++)
            s += c[i] * pw[i][e];
        dst[e] = s;
    }
    for (int i = 0; i < n; i++)
        dst[i + (size_t)i * n] += c0;
}

double weft__linalg_one_norm(int n, const double *a)
{
    double norm = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += fabs(a[i + (size_t)j * n]);
        if (!(s <= norm))
            norm = s;
    }
    return norm;
}

/* u (the odd part, times a) and v (the even part) of the Pade approximant
 * of degree m in {3, 5, 7, 9}, from a's even powers pw[0..] = a^2, a^4,
 * ...; t is scratch.  Returns 0 or a negative weft error. */
static int pade_low(weft_runtime *rt, int n, int m, const double *a, const double *const *pw,
                    double *u, double *v, double *t)
{
    const double *b = m == 3 ? pade3 : m == 5 ? pade5 : m == 7 ? pade7 : pade9;
    int count = (m - 1) / 2;
    double odd[4], even[4];
    for (int i = 0; i < count; i++) {
        odd[i] = b[2 * i + 3];
        even[i] = b[2 * i + 2];
    }
    combine(n, b[1], odd, pw, count, t);
    int rc = weft__linalg_mat_mul(rt, n, a, t, u);
    combine(n, b[0], even, pw, count, v);
    return rc;
}

/* u and v of degree 13 from pw = a^2, a^4, a^6, with Higham's
 * evaluation scheme (three products).  Returns 0 or a negative weft
 * error. */
static int pade_13(weft_runtime *rt, int n, const double *a, const double *const *pw, double *u,
                   double *v, double *t, double *w)
{
    const double *b = pade13;
    const double *a6 = pw[2];
    combine(n, 0, (const double[]){ b[9], b[11], b[13] }, pw, 3, t);
    int rc = weft__linalg_mat_mul(rt, n, a6, t, w);
    if (rc < 0)
        return rc;
    combine(n, b[1], (const double[]){ b[3], b[5], b[7] }, pw, 3, t);
    for (size_t e = 0, nn = (size_t)n * n; e < nn; e++)
        t[e] += w[e];
    rc = weft__linalg_mat_mul(rt, n, a, t, u);
    if (rc < 0)
        return rc;
    combine(n, 0, (const double[]){ b[8], b[10], b[12] }, pw, 3, t);
    rc = weft__linalg_mat_mul(rt, n, a6, t, w);
    combine(n, b[0], (const double[]){ b[2], b[4], b[6] }, pw, 3, v);
    for (size_t e = 0, nn = (size_t)n * n; e < nn; e++)
        v[e] += w[e];
    return rc;
}

size_t weft__expm_scratch(int n)
{
    return 7 * (size_t)n * n;
}

int weft__expm_one(weft_runtime *rt, int n, double *a, double *work, int *ipiv)
{
    size_t nn = (size_t)n * n;
    double norm = weft__linalg_one_norm(n, a);
    if (!isfinite(norm)) {
        /* A NaN or inf entry reaches every entry through the products. */
        for (size_t e = 0; e < nn; e++)
            a[e] = NAN;
        return 0;
    }
    int m = norm <= theta3 ? 3 : norm <= theta5 ? 5 : norm <= theta7 ? 7 : norm <= theta9 ? 9 : 13;
    int squarings = 0;
    if (m == 13 && norm > theta13) {
        squarings = (int)ceil(log2(norm / theta13));
        for (size_t e = 0; e < nn; e++)
            a[e] = ldexp(a[e], -squarings);   /* exact: a power of two */
    }
    double *p2 = work, *p4 = p2 + nn, *p6 = p4 + nn, *u = p6 + nn, *v = u + nn, *t = v + nn,
           *w = t + nn;
    const double *pw[4] = { p2, p4, p6, w };   /* w holds a^8 for degree 9 */
    int rc = weft__linalg_mat_mul(rt, n, a, a, p2);
    if (rc == 0 && m >= 5)
        rc = weft__linalg_mat_mul(rt, n, p2, p2, p4);
    if (rc == 0 && m >= 7)
        rc = weft__linalg_mat_mul(rt, n, p2, p4, p6);
    if (rc == 0 && m == 9)
        rc = weft__linalg_mat_mul(rt, n, p4, p4, w);
    if (rc == 0)
        rc = m == 13 ? pade_13(rt, n, a, pw, u, v, t, w) : pade_low(rt, n, m, a, pw, u, v, t);
    if (rc < 0)
        return rc;
    /* (v - u) r = (v + u); v - u is well conditioned at these norms
     * (Higham's section 2), so the solve's pivots are not checked. */
    for (size_t e = 0; e < nn; e++) {
        double sum = v[e] + u[e];
        v[e] -= u[e];
        u[e] = sum;
    }
    rc = weft__linalg_lu_factor(rt, n, v, ipiv);
    if (rc < 0)
        return rc;
    rc = weft__linalg_lu_solve(rt, n, n, v, ipiv, false, u, t);
    for (int s = 0; rc == 0 && s < squarings; s++) {
        rc = weft__linalg_mat_mul(rt, n, u, u, t);
        double *swap = u;
        u = t;
        t = swap;
    }
    if (rc == 0)
        memcpy(a, u, sizeof *a * nn);
    return rc;
}
