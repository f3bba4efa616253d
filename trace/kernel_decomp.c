/* Kernels of the decompositions qr, eigh and svd, one matrix at a time
 * (trace/kernel_linalg.c cuts the batch into chunks and calls
 * weft__decomp_one for each matrix).
 *
 * Small matrices (and every matrix in a build without a BLAS) take the
 * loops below: Householder QR (LAPACK's dgeqr2 and dorg2r), cyclic Jacobi
 * rotations for eigh and one-sided (Hestenes) Jacobi for svd, which are
 * accurate to the last bits on a small matrix and simple to get right.
 * Larger ones go to OpenBLAS's bundled LAPACK: dgeqrf + dorgqr, dsyevd and
 * dgesdd, their workspace sizes asked of LAPACK itself; a QR from
 * WEFT__LINALG_TILED_MIN in the smaller dim runs in column tiles over the
 * workers (trace/kernel_linalg_tiled.c).  Eigenvalues come
 * out ascending and singular values descending, as TensorFlow's; the
 * signs of eigen- and singular vectors are whatever the algorithm gives
 * (TensorFlow promises none either). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/linalg.h"
#include "trace/shape.h"

#if WEFT_HAVE_BLAS
#include "trace/blas_api.h"
#endif

/* Jacobi sweeps stop here at the latest; a symmetric matrix of 16 rows
 * takes 6-10. */
#define MAX_SWEEPS 64

/* The loops' limits in the smaller dim, where LAPACK starts to win
 * (bench_linalg, 1024 matrices on 1 thread, weft / LAPACK per matrix:
 * eigh 0.48x at 4 rows, 0.81x at 6, 1.08x at 8, 1.47x at 12; svd of a
 * square matrix 0.75x at 8, 1.05x at 12, 1.35x at 16; qr 0.60x at 16). */
#define QR_LOOP_MAX   WEFT__LINALG_LOOP_MAX
#define EIGH_LOOP_MAX 6
#define SVD_LOOP_MAX  8

bool weft__linalg_is_decomp(weft__op op)
{
    return op == WEFT__OP_QR || op == WEFT__OP_EIGH || op == WEFT__OP_SVD || op == WEFT__OP_EIG;
}

bool weft__decomp_lapack(const weft__node *node, int m, int n)
{
    int p = m < n ? m : n;
    if (node->op == WEFT__OP_EIG)
        return weft__blas_available();   /* LAPACK's dgeev alone */
    int loop_max = node->op == WEFT__OP_EIGH ? EIGH_LOOP_MAX
                   : node->op == WEFT__OP_SVD ? SVD_LOOP_MAX
                                              : QR_LOOP_MAX;
    return weft__blas_available() && p > loop_max;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static double dot(int n, const double *x, const double *y)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

/* Columns p and q of a (n rows each) replaced by c p - s q and s p + c q. */
static void rotate(int n, double *p, double *q, double c, double s)
{
    for (int i = 0; i < n; i++) {
        double x = p[i], y = q[i];
        p[i] = c * x - s * y;
        q[i] = s * x + c * y;
    }
}

/* t = tan of the rotation angle that zeroes an off-diagonal element,
 * the smaller root of t^2 + 2 zeta t - 1 = 0 (no overflow for a huge
 * zeta). */
static double rotation_tan(double zeta)
{
    if (fabs(zeta) > 1e150)
        return 0.5 / zeta;
    return copysign(1.0, zeta) / (fabs(zeta) + sqrt(zeta * zeta + 1));
}

/* ---- QR ------------------------------------------------------------------ */

/* Householder QR of the m x n a in place: r in the upper triangle, the
 * reflectors' vectors below it (their first element an implied 1), their
 * scales in tau[0..min(m, n)).  H = I - tau v v^T. */
static void qr_loop(int m, int n, double *a, double *tau)
{
    int k = min_int(m, n);
    for (int j = 0; j < k; j++) {
        double *x = a + j + (size_t)j * m;
        int len = m - j;
        double alpha = x[0], tail = dot(len - 1, x + 1, x + 1);
        tau[j] = 0;
        if (tail == 0)
            continue;   /* already upper triangular here: H = I */
        double beta = -copysign(sqrt(alpha * alpha + tail), alpha);
        tau[j] = (beta - alpha) / beta;
        double scale = 1 / (alpha - beta);
        for (int i = 1; i < len; i++)
            x[i] *= scale;
        x[0] = beta;
        for (int c = j + 1; c < n; c++) {
            double *y = a + j + (size_t)c * m;
            double w = tau[j] * (y[0] + dot(len - 1, x + 1, y + 1));
            y[0] -= w;
            for (int i = 1; i < len; i++)
                y[i] -= w * x[i];
        }
    }
}

/* The first qc columns of q = H_0 ... H_{k-1}, the reflectors of qr_loop
 * in a (m rows): the identity's columns, each reflector applied from the
 * last, as LAPACK's dorg2r. */
static void qr_form_q(int m, int qc, int k, const double *a, const double *tau, double *q)
{
    for (int c = 0; c < qc; c++)
        for (int i = 0; i < m; i++)
            q[i + (size_t)c * m] = i == c;
    for (int j = k; j-- > 0;) {
        if (tau[j] == 0)
            continue;
        const double *v = a + j + (size_t)j * m;
        int len = m - j;
        /* Columns before j are still e_c, zero from row j on. */
        for (int c = j; c < qc; c++) {
            double *y = q + j + (size_t)c * m;
            double w = tau[j] * (y[0] + dot(len - 1, v + 1, y + 1));
            y[0] -= w;
            for (int i = 1; i < len; i++)
                y[i] -= w * v[i];
        }
    }
}

typedef struct qr_shape {
    int m, n, k, qc;   /* k reflectors; q has qc columns */
} qr_shape;

static qr_shape qr_shape_of(const weft__node *node, int m, int n)
{
    int k = min_int(m, n);
    return (qr_shape){ m, n, k, node->attr.index.kind & WEFT__LINALG_FULL ? m : k };
}

#if WEFT_HAVE_BLAS
/* Whether a QR of [m, n] runs in tiles over the workers. */
static bool qr_tiled(int m, int n)
{
    return weft__linalg_tiled(min_int(m, n));
}

/* LAPACK's best workspace for dgeqrf and dorgqr of this shape. */
static int qr_lwork(qr_shape s)
{
    int info = 0, lwork = -1, m = s.m;
    double q1 = 0, q2 = 0;
    dgeqrf_(&s.m, &s.n, NULL, &m, NULL, &q1, &lwork, &info);
    dorgqr_(&s.m, &s.qc, &s.k, NULL, &m, NULL, &q2, &lwork, &info);
    return max_int(max_int((int)q1, (int)q2), max_int(s.n, s.qc)) + 1;
}
#endif

static int qr_one(weft_runtime *rt, const weft__node *node, int m, int n, const char *src,
                  weft_dtype dt, char *dst, double *scratch)
{
    qr_shape s = qr_shape_of(node, m, n);
    double *a = scratch, *tau = a + (size_t)m * n, *q = tau + s.k + 1;
    weft__linalg_load(src, dt, m, n, a);
#if WEFT_HAVE_BLAS
    if (qr_tiled(m, n)) {
        double *work = q + (size_t)m * s.qc;
        int rc = weft__linalg_qr_tiled(rt, m, n, a, tau, work);
        if (rc == 0)
            rc = weft__linalg_qr_q_tiled(rt, m, n, s.qc, a, work, q);
        if (rc != 0)
            return rc;
    } else if (weft__decomp_lapack(node, m, n)) {
        double *work = q + (size_t)m * s.qc;
        int info = 0, lwork = qr_lwork(s);
        dgeqrf_(&s.m, &s.n, a, &m, tau, work, &lwork, &info);
        memcpy(q, a, sizeof *q * (size_t)m * s.k);
        dorgqr_(&s.m, &s.qc, &s.k, q, &m, tau, work, &lwork, &info);
    } else
#endif
    {
        (void)rt;
        qr_loop(m, n, a, tau);
        qr_form_q(m, s.qc, s.k, a, tau, q);
    }
    /* r is a's upper triangle; the rows below it stay 0. */
    for (int c = 0; c < n; c++)
        for (int i = c + 1; i < m; i++)
            a[i + (size_t)c * m] = 0;
    size_t row = (size_t)s.qc + (size_t)n;
    weft__linalg_store(q, m, m, s.qc, dst, row, dt);
    weft__linalg_store(a, m, min_int(m, s.qc), n, dst + (size_t)s.qc * weft_dtype_size(dt),
                       row, dt);
    return 0;
}

/* ---- Symmetric eigendecomposition ------------------------------------------ */

/* Sorts w[0..n) ascending (descending when down), with the columns of
 * each of up to two matrices (rows_a and rows_b rows; NULL for none). */
static void sort_with_columns(int n, double *w, bool down, double *a, int rows_a, double *b,
                              int rows_b)
{
    for (int i = 1; i < n; i++)   /* insertion: n is small or the order nearly right */
        for (int j = i; j > 0 && (down ? w[j] > w[j - 1] : w[j] < w[j - 1]); j--) {
            double t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
            for (int x = 0; x < 2; x++) {
                double *m = x ? b : a;
                int rows = x ? rows_b : rows_a;
                for (int r = 0; m && r < rows; r++) {
                    double *p = m + r + (size_t)j * rows, *q = p - rows;
                    double u = *p;
                    *p = *q;
                    *q = u;
                }
            }
        }
}

/* Eigenvalues of the symmetric n x n a (its lower triangle read) into w,
 * ascending, and the eigenvectors into the columns of v (NULL: none), by
 * cyclic Jacobi rotations; a is destroyed. */
static void eigh_loop(int n, double *a, double *w, double *v)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++)
            a[i + (size_t)j * n] = a[j + (size_t)i * n];
    for (int j = 0; v && j < n; j++)
        for (int i = 0; i < n; i++)
            v[i + (size_t)j * n] = i == j;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        double off = 0, all = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double x = a[i + (size_t)j * n] * a[i + (size_t)j * n];
                all += x;
                off += i != j ? x : 0;
            }
        if (off <= DBL_EPSILON * DBL_EPSILON * all)
            break;
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p + (size_t)q * n];
                double app = a[p + (size_t)p * n], aqq = a[q + (size_t)q * n];
                /* An element below both diagonals' last bits is dropped
                 * without a rotation (Numerical Recipes' jacobi), which
                 * spares the last sweep most of its work. */
                if (fabs(app) + 100 * fabs(apq) == fabs(app) &&
                    fabs(aqq) + 100 * fabs(apq) == fabs(aqq)) {
                    a[p + (size_t)q * n] = a[q + (size_t)p * n] = 0;
                    continue;
                }
                double t = rotation_tan((aqq - app) / (2 * apq));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                /* a = J^T a J, kept symmetric: rows and columns p and q
                 * once each, the 2 x 2 block in closed form. */
                double *cp = a + (size_t)p * n, *cq = a + (size_t)q * n;
                for (int r = 0; r < n; r++) {
                    double x = cp[r], y = cq[r];
                    cp[r] = c * x - s * y;
                    cq[r] = s * x + c * y;
                    a[p + (size_t)r * n] = cp[r];
                    a[q + (size_t)r * n] = cq[r];
                }
                cp[p] = app - t * apq;
                cq[q] = aqq + t * apq;
                cp[q] = cq[p] = 0;
                if (v)
                    rotate(n, v + (size_t)p * n, v + (size_t)q * n, c, s);
            }
    }
    for (int i = 0; i < n; i++)
        w[i] = a[i + (size_t)i * n];
    sort_with_columns(n, w, false, v, n, NULL, 0);
}

#if WEFT_HAVE_BLAS
/* LAPACK's workspace for dsyevd: doubles, and ints in *liwork. */
static int eigh_lwork(int n, bool vectors, int *liwork)
{
    int info = 0, lwork = -1, li = -1, iq = 0;
    double q = 0;
    dsyevd_(vectors ? "V" : "N", "L", &n, NULL, &n, NULL, &q, &lwork, &iq, &li, &info, 1, 1);
    *liwork = iq + 1;
    return (int)q + 1;
}
#endif

static int eigh_one(const weft__node *node, int n, const char *src, weft_dtype dt, char *dst,
                    double *scratch)
{
    bool vectors = node->attr.index.kind & WEFT__LINALG_VECTORS;
    double *a = scratch, *w = a + (size_t)n * n, *v = w + n;
    weft__linalg_load(src, dt, n, n, a);
#if WEFT_HAVE_BLAS
    if (weft__decomp_lapack(node, n, n)) {
        int info = 0, liwork = 0, lwork = eigh_lwork(n, vectors, &liwork);
        int *iwork = (int *)(void *)(v + lwork);
        dsyevd_(vectors ? "V" : "N", "L", &n, a, &n, w, v, &lwork, iwork, &liwork, &info, 1, 1);
        if (info != 0)
            return 1;
        v = a;   /* dsyevd leaves the eigenvectors in a */
    } else
#endif
    {
        eigh_loop(n, a, w, vectors ? v : NULL);
    }
    weft__linalg_store(w, 1, 1, n, dst, (size_t)n, dt);
    if (vectors)
        weft__linalg_store(v, n, n, n, dst + (size_t)n * weft_dtype_size(dt), (size_t)n, dt);
    return 0;
}

/* ---- General eigendecomposition ------------------------------------------------ */

/* LAPACK's dgeev computes the eigenvalues (wr + i wi, a complex pair next
 * to each other, positive imaginary part first) and the right
 * eigenvectors (a pair's as the real and imaginary columns of the first),
 * each of unit norm with its largest component real.  The eigenvalues go
 * out by ascending modulus, as TensorFlow's (Eigen's ComplexEigenSolver
 * sorts them so); equal moduli by real, then imaginary part. */

#if WEFT_HAVE_BLAS
static int eig_lwork(int n, bool vectors)
{
    int info = 0, lwork = -1, one = 1;
    double q = 0, dummy = 0;
    dgeev_("N", vectors ? "V" : "N", &n, &dummy, &n, &dummy, &dummy, &dummy, &one, &dummy,
           vectors ? &n : &one, &q, &lwork, &info, 1, 1);
    return (int)q + 1;
}
#endif

/* Whether eigenvalue i goes before eigenvalue j. */
static bool eig_before(const double *wr, const double *wi, int i, int j)
{
    double mi = hypot(wr[i], wi[i]), mj = hypot(wr[j], wi[j]);
    if (mi != mj)
        return mi < mj;
    if (wr[i] != wr[j])
        return wr[i] < wr[j];
    return wi[i] < wi[j];
}

/* Component r of eigenvector j as a complex number (re, im). */
static void eig_component(int n, const double *vr, const double *wi, int j, int r, double *re,
                          double *im)
{
    if (wi[j] == 0) {
        *re = vr[r + (size_t)j * n];
        *im = 0;
    } else if (wi[j] > 0) {
        *re = vr[r + (size_t)j * n];
        *im = vr[r + (size_t)(j + 1) * n];
    } else {
        *re = vr[r + (size_t)(j - 1) * n];
        *im = -vr[r + (size_t)j * n];
    }
}

static int eig_one(const weft__node *node, int n, const char *src, weft_dtype dt, char *dst,
                   double *scratch)
{
    bool vectors = node->attr.index.kind & WEFT__LINALG_VECTORS;
    size_t nn = (size_t)n * n, cols = (size_t)n * 2, count = vectors ? (nn + n) * 2 : cols;
    double *a = scratch, *wr = a + nn, *wi = wr + n, *vr = wi + n, *order_d = vr + nn;
    int *order = (int *)(void *)order_d;
    weft__linalg_load(src, dt, n, n, a);
    bool finite = true;
    for (size_t i = 0; i < nn && finite; i++)
        finite = isfinite(a[i]);
    if (!finite) {   /* LAPACK's scaling would spread the NaN anyway */
        for (size_t i = 0; i < count; i++)
            weft__linalg_store_at(dst, dt, i, NAN);
        return 0;
    }
#if WEFT_HAVE_BLAS
    int info = 0, one = 1, lwork = eig_lwork(n, vectors);
    double *work = order_d + n, dummy = 0;
    dgeev_("N", vectors ? "V" : "N", &n, a, &n, wr, wi, &dummy, &one, vectors ? vr : &dummy,
           vectors ? &n : &one, work, &lwork, &info, 1, 1);
    if (info != 0)
        return 1;
#else
    (void)wi;
    return 1;   /* refused while tracing: no LAPACK */
#endif
    /* An insertion sort: n^2 steps against dgeev's n^3. */
    for (int i = 0; i < n; i++) {
        int k = i;
        while (k > 0 && eig_before(wr, wi, i, order[k - 1])) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    for (int k = 0; k < n; k++) {
        weft__linalg_store_at(dst, dt, 2 * (size_t)k, wr[order[k]]);
        weft__linalg_store_at(dst, dt, 2 * (size_t)k + 1, wi[order[k]]);
    }
    if (!vectors)
        return 0;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < n; k++) {
            double re, im;
            eig_component(n, vr, wi, order[k], r, &re, &im);
            size_t at = cols + ((size_t)r * n + k) * 2;
            weft__linalg_store_at(dst, dt, at, re);
            weft__linalg_store_at(dst, dt, at + 1, im);
        }
    return 0;
}

/* ---- Singular value decomposition --------------------------------------------- */

/* Columns [have, total) of the orthonormal columns q (rows each) filled
 * so that all total of them are orthonormal: each time the unit vector
 * with the most left outside the columns so far, orthogonalized twice
 * (Gram-Schmidt) and normalized. */
static void complete_basis(int rows, int have, int total, double *q)
{
    for (int j = have; j < total; j++) {
        double *x = q + (size_t)j * rows, best_left = -1;
        int best = 0;
        for (int i = 0; i < rows; i++) {
            double left = 1;
            for (int c = 0; c < j; c++)
                left -= q[i + (size_t)c * rows] * q[i + (size_t)c * rows];
            if (left > best_left) {
                best_left = left;
                best = i;
            }
        }
        for (int i = 0; i < rows; i++)
            x[i] = i == best;
        for (int pass = 0; pass < 2; pass++)
            for (int c = 0; c < j; c++) {
                const double *y = q + (size_t)c * rows;
                double d = dot(rows, x, y);
                for (int i = 0; i < rows; i++)
                    x[i] -= d * y[i];
            }
        double norm = sqrt(dot(rows, x, x));
        for (int i = 0; i < rows; i++)
            x[i] /= norm;
    }
}

/* One-sided Jacobi on the tall x short u (tall >= short): rotations of
 * u's columns, also applied to v (short x short, from the identity),
 * until every pair is orthogonal to working precision; then s holds the
 * column norms and u the normalized columns, sorted by s descending.
 * Returns the number of nonzero singular values (u's columns past it are
 * left to complete_basis). */
static int svd_loop(int tall, int shorter, double *u, double *v, double *s)
{
    for (int j = 0; j < shorter; j++)
        for (int i = 0; i < shorter; i++)
            v[i + (size_t)j * shorter] = i == j;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        bool rotated = false;
        for (int p = 0; p < shorter - 1; p++)
            for (int q = p + 1; q < shorter; q++) {
                double *up = u + (size_t)p * tall, *uq = u + (size_t)q * tall;
                double alpha = dot(tall, up, up), beta = dot(tall, uq, uq);
                double gamma = dot(tall, up, uq);
                if (fabs(gamma) <= DBL_EPSILON * sqrt(alpha * beta))
                    continue;
                rotated = true;
                double t = rotation_tan((beta - alpha) / (2 * gamma));
                double c = 1 / sqrt(t * t + 1), sn = t * c;
                rotate(tall, up, uq, c, sn);
                rotate(shorter, v + (size_t)p * shorter, v + (size_t)q * shorter, c, sn);
            }
        if (!rotated)
            break;
    }
    for (int j = 0; j < shorter; j++)
        s[j] = sqrt(dot(tall, u + (size_t)j * tall, u + (size_t)j * tall));
    sort_with_columns(shorter, s, true, u, tall, v, shorter);
    int rank = 0;
    while (rank < shorter && s[rank] > 0)
        rank++;
    for (int j = 0; j < rank; j++)
        for (int i = 0; i < tall; i++)
            u[i + (size_t)j * tall] /= s[j];
    return rank;
}

typedef struct svd_shape {
    int m, n, p, tall, cu, cv, width;   /* u [m, cu], v [n, cv]; packed rows width */
    bool vectors, full;
} svd_shape;

static svd_shape svd_shape_of(const weft__node *node, int m, int n)
{
    unsigned flags = (unsigned)node->attr.index.kind;
    svd_shape s = { .m = m, .n = n, .p = min_int(m, n), .tall = max_int(m, n),
                    .vectors = flags & WEFT__LINALG_VECTORS, .full = flags & WEFT__LINALG_FULL };
    s.cu = s.full ? m : s.p;
    s.cv = s.full ? n : s.p;
    s.width = s.full ? s.tall : s.p;
    return s;
}

/* svd of the tall x p matrix a (column-major, tall > p) through its QR
 * factors, as dgesdd does too: Jacobi then rotates the p x p r instead
 * of the tall columns (1.77x of dgesdd's time for [64,8] without, 0.93x
 * with).  a = q r, r = u_r diag(s) v^T, so u = q u_r.  The tall side's
 * vectors go to tall_u (p of them, or all tall with full_matrices), the
 * short side's to short_v; tau (p) and r (p x p) and z (tall x tall
 * with full_matrices, else tall x p) are scratch. */
static void svd_tall(svd_shape sh, double *a, double *tau, double *r, double *z,
                     double *tall_u, double *short_v, double *s)
{
    int t = sh.tall, p = sh.p;
    qr_loop(t, p, a, tau);
    for (int c = 0; c < p; c++)
        for (int i = 0; i < p; i++)
            r[i + (size_t)c * p] = i <= c ? a[i + (size_t)c * t] : 0;
    int rank = svd_loop(p, p, r, short_v, s);
    if (!sh.vectors)
        return;
    complete_basis(p, rank, p, r);
    int qc = sh.full ? t : p;
    qr_form_q(t, qc, p, a, tau, z);
    for (int j = 0; j < p; j++)
        for (int i = 0; i < t; i++) {
            double sum = 0;
            for (int q = 0; q < p; q++)
                sum += z[i + (size_t)q * t] * r[q + (size_t)j * p];
            tall_u[i + (size_t)j * t] = sum;
        }
    memcpy(tall_u + (size_t)p * t, z + (size_t)p * t, sizeof *z * (size_t)(qc - p) * t);
}

#if WEFT_HAVE_BLAS
static int svd_lwork(svd_shape s)
{
    int info = 0, lwork = -1, ldu = s.m, ldvt = s.full ? s.n : s.p;
    double q = 0;
    dgesdd_(!s.vectors ? "N" : s.full ? "A" : "S", &s.m, &s.n, NULL, &s.m, NULL, NULL, &ldu,
            NULL, &ldvt, &q, &lwork, NULL, &info, 1);
    return (int)q + 1;
}

/* dgesdd into s, u [m, cu] and vt [cv, n]; the transpose of vt into v. */
static int svd_lapack(svd_shape sh, double *a, double *s, double *u, double *v, double *vt,
                      double *work)
{
    int info = 0, lwork = svd_lwork(sh), ldvt = sh.full ? sh.n : sh.p, ldu = sh.m;
    int *iwork = (int *)(void *)(work + lwork);
    dgesdd_(!sh.vectors ? "N" : sh.full ? "A" : "S", &sh.m, &sh.n, a, &sh.m, s, u, &ldu, vt,
            &ldvt, work, &lwork, iwork, &info, 1);
    for (int j = 0; sh.vectors && j < sh.cv; j++)
        for (int i = 0; i < sh.n; i++)
            v[i + (size_t)j * sh.n] = vt[j + (size_t)i * ldvt];
    return info;
}
#endif

/* The room for u, v or vt: the tall side's vectors, all of them with
 * full_matrices, else as many as the short side. */
static size_t svd_block(svd_shape s)
{
    return (size_t)s.tall * (size_t)(s.vectors && s.full ? s.tall : s.p);
}

/* The scratch of svd_one, in doubles, before LAPACK's workspace: a, s,
 * u, v and vt (the loops' z), then the loops' tau and r. */
static size_t svd_base(svd_shape s)
{
    return (size_t)s.m * s.n + s.p + 3 * svd_block(s) + (size_t)s.p * (s.p + 1) + 1;
}

static int svd_one(const weft__node *node, int m, int n, const char *src, weft_dtype dt,
                   char *dst, double *scratch)
{
    svd_shape sh = svd_shape_of(node, m, n);
    size_t tt = svd_block(sh);
    double *a = scratch, *s = a + (size_t)m * n, *u = s + sh.p, *v = u + tt;
#if WEFT_HAVE_BLAS
    if (weft__decomp_lapack(node, m, n)) {
        double *vt = v + tt;
        weft__linalg_load(src, dt, m, n, a);
        if (svd_lapack(sh, a, s, u, v, vt, vt + tt) != 0)
            return 1;
    } else
#endif
    {
        /* A tall matrix as it is; a wide one as its transpose (the
         * row-major data read as column-major), whose u and v swap. */
        double *tall_u = m >= n ? u : v, *short_v = m >= n ? v : u;
        if (sh.tall == sh.p) {
            weft__linalg_load(src, dt, m, n, tall_u);
            int rank = svd_loop(sh.p, sh.p, tall_u, short_v, s);
            if (sh.vectors)
                complete_basis(sh.p, rank, sh.p, tall_u);
        } else {
            if (m >= n)
                weft__linalg_load(src, dt, m, n, a);
            else
                weft__linalg_load(src, dt, 1, m * n, a);
            double *z = v + tt, *tau = z + tt;
            svd_tall(sh, a, tau, tau + sh.p, z, tall_u, short_v, s);
        }
    }
    size_t es = weft_dtype_size(dt), row = (size_t)(sh.vectors ? sh.width : sh.p);
    weft__linalg_store(s, 1, 1, sh.p, dst, row, dt);
    if (sh.vectors) {
        weft__linalg_store(u, m, m, sh.cu, dst + row * es, row, dt);
        weft__linalg_store(v, n, n, sh.cv, dst + (1 + (size_t)m) * row * es, row, dt);
    }
    return 0;
}

/* ---- Entry points ------------------------------------------------------------ */

size_t weft__decomp_scratch(const weft__node *node, int m, int n)
{
    size_t mn = (size_t)m * n;
    switch (node->op) {
    case WEFT__OP_QR: {
        qr_shape s = qr_shape_of(node, m, n);
        size_t base = mn + (size_t)s.k + 1 + (size_t)m * s.qc;
#if WEFT_HAVE_BLAS
        if (qr_tiled(m, n))
            return base + weft__linalg_qr_tiled_scratch(m, n, s.qc);
        if (weft__decomp_lapack(node, m, n))
            return base + (size_t)qr_lwork(s);
#endif
        return base;
    }
    case WEFT__OP_EIG: {
        /* a, wr, wi, vr, the order (ints in doubles), LAPACK's work. */
        size_t base = 2 * mn + 3 * (size_t)n;
#if WEFT_HAVE_BLAS
        return base + (size_t)eig_lwork(n, node->attr.index.kind & WEFT__LINALG_VECTORS);
#endif
        return base;
    }
    case WEFT__OP_EIGH: {
        size_t base = mn + (size_t)n;
#if WEFT_HAVE_BLAS
        if (weft__decomp_lapack(node, n, n)) {
            int liwork = 0;
            size_t lwork = (size_t)eigh_lwork(n, true, &liwork);
            return base + lwork + (size_t)liwork;   /* ints take no more than doubles */
        }
#endif
        return base + mn;
    }
    default: {   /* SVD */
        svd_shape s = svd_shape_of(node, m, n);
#if WEFT_HAVE_BLAS
        if (weft__decomp_lapack(node, m, n))
            return svd_base(s) + (size_t)svd_lwork(s) + 8 * (size_t)s.p;
#endif
        return svd_base(s);
    }
    }
}

int weft__decomp_one(weft_runtime *rt, const weft__node *node, int m, int n, const char *src,
                     weft_dtype dt, char *dst, size_t out_count, double *scratch)
{
    /* The packed result's padding is 0. */
    memset(dst, 0, out_count * weft_dtype_size(dt));
    switch (node->op) {
    case WEFT__OP_QR:
        return qr_one(rt, node, m, n, src, dt, dst, scratch);
    case WEFT__OP_EIGH:
        return eigh_one(node, n, src, dt, dst, scratch);
    case WEFT__OP_EIG:
        return eig_one(node, n, src, dt, dst, scratch);
    default:
        return svd_one(node, m, n, src, dt, dst, scratch);
    }
}
