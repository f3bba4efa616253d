/* The principal logarithm of one matrix, for weft_matrix_logarithm
 * (tf.linalg.logm), by inverse scaling and squaring (Higham, "Functions
 * of Matrices", SIAM 2008, sections 11.4 and 11.5):
 *
 *     s square roots bring R = A^(1/2^s) within THETA of I (1-norm);
 *     log(I + X) of X = R - I by the [m/m] Pade approximant in partial
 *     fractions, the m-point Gauss-Legendre rule on
 *     log(I + X) = int_0^1 X (I + t X)^-1 dt;  log A = 2^s log(I + X).
 *
 * With m = 8 and THETA = 0.3 the rule is within 1e-16 of log(1 + x) for
 * every real |x| <= 0.3, and each square root halves the logarithm, so
 * a matrix whose logarithm has norm L takes about log2(L / 0.3) roots.
 * The roots are weft__sqrtm_one's, so the domain is sqrtm's: invertible,
 * no real negative eigenvalue (the logarithm is then real).  Outside it,
 * or with a NaN or infinite entry, or when the roots do not reach I
 * within MAX_ROOTS, the whole matrix is NaN.  The kernel_linalg.c batch
 * driver calls it on each matrix of a batch, in column-major f64. */
#include <math.h>
#include <string.h>

#include "trace/linalg.h"

#define THETA     0.3
#define MAX_ROOTS 64
#define NODES     8

/* The 8-point Gauss-Legendre rule on [0, 1]: its nodes and weights. */
static const double node[NODES] = {
    0.98014492824876816, 0.89833323870681349, 0.76276620495816452, 0.59171732124782495,
    0.40828267875217510, 0.23723379504183550, 0.10166676129318658, 0.019855071751231856,
};
static const double weight[NODES] = {
    0.050614268145188090, 0.11119051722668723, 0.15685332293894370, 0.18134189168918100,
    0.18134189168918100,  0.15685332293894370, 0.11119051722668723, 0.050614268145188090,
};

size_t weft__logm_scratch(int n)
{
    size_t roots = weft__sqrtm_scratch(n), pade = 4 * (size_t)n * n;
    return roots > pade ? roots : pade;
}

static void fill_nan(size_t nn, double *a)
{
    for (size_t e = 0; e < nn; e++)
        a[e] = NAN;
}

/* a = I + x in place, then the sum over the rule's nodes of
 * w x (I + t x)^-1 into a.  Returns 0, a positive number on a zero pivot,
 * or a negative weft error. */
static int pade_log(weft_runtime *rt, int n, double *a, double *work, int *ipiv)
{
    size_t nn = (size_t)n * n;
    double *x = work, *lu = x + nn, *z = lu + nn, *t = z + nn;
    memcpy(x, a, sizeof *x * nn);
    for (int i = 0; i < n; i++)
        x[i + (size_t)i * n] -= 1;
    memset(a, 0, sizeof *a * nn);
    for (int k = 0; k < NODES; k++) {
        for (size_t e = 0; e < nn; e++)
            lu[e] = node[k] * x[e];
        for (int i = 0; i < n; i++)
            lu[i + (size_t)i * n] += 1;
        int rc = weft__linalg_lu_factor(rt, n, lu, ipiv);
        if (rc != 0)
            return rc;
        /* (I + t x)^-1 x = x (I + t x)^-1: they commute. */
        memcpy(z, x, sizeof *z * nn);
        rc = weft__linalg_lu_solve(rt, n, n, lu, ipiv, false, z, t);
        if (rc < 0)
            return rc;
        for (size_t e = 0; e < nn; e++)
            a[e] += weight[k] * z[e];
    }
    return 0;
}

/* ||a - I||_1 without a copy. */
static double distance_to_identity(int n, const double *a)
{
    double most = 0;
    for (int j = 0; j < n; j++) {
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += fabs(a[i + (size_t)j * n] - (i == j));
        if (isnan(sum))
            return sum;
        if (sum > most)
            most = sum;
    }
    return most;
}

int weft__logm_one(weft_runtime *rt, int n, double *a, double *work, int *ipiv)
{
    size_t nn = (size_t)n * n;
    int roots = 0;
    for (;;) {
        double gap = distance_to_identity(n, a);
        if (!isfinite(gap) || roots > MAX_ROOTS) {
            fill_nan(nn, a);
            return 0;
        }
        if (gap <= THETA)
            break;
        int rc = weft__sqrtm_one(rt, n, a, work, ipiv);   /* NaN on failure: caught above */
        if (rc < 0)
            return rc;
        roots++;
    }
    int rc = pade_log(rt, n, a, work, ipiv);
    if (rc < 0)
        return rc;
    if (rc > 0) {
        fill_nan(nn, a);
        return 0;
    }
    double scale = ldexp(1.0, roots);
    for (size_t e = 0; e < nn; e++)
        a[e] *= scale;
    return 0;
}
