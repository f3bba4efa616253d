/* The principal square root of one matrix, for weft_matrix_sqrt
 * (tf.linalg.sqrtm): the product form of the Denman-Beavers iteration
 * with determinant scaling (Higham, "Functions of Matrices", SIAM 2008,
 * eq. 6.29 and section 6.5):
 *
 *     mu = |det M|^(-1/(2n));  Y <- mu Y (I + mu^-2 M^-1) / 2;
 *     M <- (I + (mu^2 M + mu^-2 M^-1) / 2) / 2,   from M = Y = A,
 *
 * so that Y -> A^(1/2) and M -> I quadratically; the scaling is dropped
 * once M is within 1e-2 of I.  The root exists and is real for the
 * matrices TensorFlow's sqrtm takes: invertible, no real negative
 * eigenvalue.  A singular M (a zero pivot), an iteration that does not
 * reach I (a negative eigenvalue), or a NaN or infinite entry makes the
 * whole matrix NaN.  The kernel_linalg.c batch driver calls it on each
 * matrix of a batch, in column-major f64. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "trace/linalg.h"

/* Enough for quadratic convergence from any scaled start; far more than
 * a convergent iteration takes (6 to 12 steps). */
#define MAX_STEPS 64

size_t weft__sqrtm_scratch(int n)
{
    return 6 * (size_t)n * n;
}

/* ||m - I||_1. */
static double distance_to_identity(int n, const double *m, double *t)
{
    size_t nn = (size_t)n * n;
    memcpy(t, m, sizeof *t * nn);
    for (int i = 0; i < n; i++)
        t[i + (size_t)i * n] -= 1;
    return weft__linalg_one_norm(n, t);
}

static void fill_nan(size_t nn, double *a)
{
    for (size_t e = 0; e < nn; e++)
        a[e] = NAN;
}

int weft__sqrtm_one(weft_runtime *rt, int n, double *a, double *work, int *ipiv)
{
    size_t nn = (size_t)n * n;
    if (!isfinite(weft__linalg_one_norm(n, a))) {
        fill_nan(nn, a);
        return 0;
    }
    double *m = work, *y = m + nn, *inv = y + nn, *lu = inv + nn, *t = lu + nn, *s = t + nn;
    memcpy(m, a, sizeof *m * nn);
    memcpy(y, a, sizeof *y * nn);
    bool scaled = true;
    for (int step = 0; step < MAX_STEPS; step++) {
        double gap = distance_to_identity(n, m, t);
        if (gap <= 4 * n * DBL_EPSILON) {
            memcpy(a, y, sizeof *a * nn);
            return 0;
        }
        scaled = scaled && gap > 1e-2;
        memcpy(lu, m, sizeof *lu * nn);
        int rc = weft__linalg_lu_factor(rt, n, lu, ipiv);
        if (rc < 0)
            return rc;
        if (rc > 0)
            break;
        rc = weft__linalg_lu_inverse(rt, n, lu, ipiv, inv, t);
        if (rc < 0)
            return rc;
        /* mu^2 = |det M|^(-1/n), from the pivots' logarithms (the
         * determinant itself over- or underflows for large n). */
        double mu2 = 1;
        if (scaled) {
            double log_det = 0;
            for (int i = 0; i < n; i++)
                log_det += log(fabs(lu[i + (size_t)i * n]));
            mu2 = exp(-log_det / n);
        }
        /* t = (I + M^-1 / mu^2) / 2, then Y <- sqrt(mu2) Y t. */
        for (size_t e = 0; e < nn; e++)
            t[e] = inv[e] / mu2 / 2;
        for (int i = 0; i < n; i++)
            t[i + (size_t)i * n] += 0.5;
        rc = weft__linalg_mat_mul(rt, n, y, t, s);
        if (rc < 0)
            return rc;
        double mu = sqrt(mu2);
        for (size_t e = 0; e < nn; e++) {
            y[e] = mu * s[e];
            m[e] = (mu2 * m[e] + inv[e] / mu2) / 4;
        }
        for (int i = 0; i < n; i++)
            m[i + (size_t)i * n] += 0.5;
    }
    fill_nan(nn, a);
    return 0;
}
