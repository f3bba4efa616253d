/* Kernels of the linear-algebra ops: cholesky, matrix_solve,
 * triangular_solve, matrix_inverse, matrix_determinant, slogdet and
 * matrix_exponential (its steps in trace/kernel_expm.c), over
 * a batch of matrices in the last two dims; the batch driver here also
 * runs the decompositions of trace/kernel_decomp.c.
 *
 * Each matrix is copied into an f64 scratch (f32 inputs compute in f64
 * and round once), factored, and the result written back in the output's
 * dtype.  Matrices above WEFT__LINALG_LOOP_MAX rows go to LAPACK
 * (OpenBLAS bundles it: dgetrf, dgetrs, dpotrf) and triangular solves to
 * the BLAS (dtrsm), which read the rows as they lie wherever the op
 * allows (reads_as_is, cholesky_rows); smaller ones, and every matrix in
 * a build without a BLAS, are copied in column-major order for the loops
 * below, which a call costs less than LAPACK's setup for.  The batch is
 * cut into chunks over the intra-op threads, each chunk's matrices one
 * after the other; from WEFT__LINALG_TILED_MIN rows a matrix's LU,
 * Cholesky, QR and solves are cut into tiles over the workers
 * (trace/kernel_linalg_tiled.c), tiles fixed by the matrix alone, so
 * results do not depend on the worker count. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/kernels.h"
#include "trace/linalg.h"
#include "trace/shape.h"

#if WEFT_HAVE_BLAS
#include "trace/blas_api.h"
#endif

#define LOWER   WEFT__LINALG_LOWER
#define ADJOINT WEFT__LINALG_ADJOINT

/* ---- The loops, on column-major f64 (element (i, j) at i + j * n) ------- */

/* LU with partial pivoting in place: a = P L U, L unit lower.  ipiv[j]
 * is the row swapped with row j.  Returns 0, or 1 + the first column
 * whose pivot is 0 (the factorization still completes, as LAPACK's). */
static int lu_loop(int n, double *a, int *ipiv)
{
    int info = 0;
    for (int j = 0; j < n; j++) {
        int p = j;
        for (int i = j + 1; i < n; i++)
            if (fabs(a[i + j * n]) > fabs(a[p + j * n]))
                p = i;
        ipiv[j] = p;
        if (p != j)
            for (int c = 0; c < n; c++) {
                double t = a[j + c * n];
                a[j + c * n] = a[p + c * n];
                a[p + c * n] = t;
            }
        double d = a[j + j * n];
        if (d == 0) {
            if (!info)
                info = j + 1;
            continue;
        }
        for (int i = j + 1; i < n; i++)
            a[i + j * n] /= d;
        for (int c = j + 1; c < n; c++) {
            double f = a[j + c * n];
            for (int i = j + 1; i < n; i++)
                a[i + c * n] -= a[i + j * n] * f;
        }
    }
    return info;
}

/* x of t x = b for the triangle of a (lower or upper, unit diagonal or
 * not), each of k columns of b in place. */
static void tri_loop(int n, int k, const double *a, bool lower, bool unit, double *b)
{
    for (int c = 0; c < k; c++) {
        double *x = b + (size_t)c * n;
        if (lower) {
            for (int i = 0; i < n; i++) {
                double s = x[i];
                for (int j = 0; j < i; j++)
                    s -= a[i + j * n] * x[j];
                x[i] = unit ? s : s / a[i + i * n];
            }
        } else {
            for (int i = n; i-- > 0;) {
                double s = x[i];
                for (int j = i + 1; j < n; j++)
                    s -= a[i + j * n] * x[j];
                x[i] = unit ? s : s / a[i + i * n];
            }
        }
    }
}

/* The transpose of a into t (both n x n, column-major). */
static void transpose_into(int n, const double *a, double *t)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            t[j + i * n] = a[i + j * n];
}

/* Solves with the LU factors of lu_loop: a x = b, or a^T x = b. */
static void lu_solve_loop(int n, int k, double *lu, const int *ipiv, bool trans, double *b,
                          double *scratch)
{
    if (!trans) {
        for (int j = 0; j < n; j++)
            if (ipiv[j] != j)
                for (int c = 0; c < k; c++) {
                    double t = b[j + c * n];
                    b[j + c * n] = b[ipiv[j] + c * n];
                    b[ipiv[j] + c * n] = t;
                }
        tri_loop(n, k, lu, true, true, b);
        tri_loop(n, k, lu, false, false, b);
        return;
    }
    /* a^T = U^T L^T P^T: U^T (lower) then L^T (unit upper), then the
     * swaps in reverse. */
    transpose_into(n, lu, scratch);
    tri_loop(n, k, scratch, true, false, b);
    tri_loop(n, k, scratch, false, true, b);
    for (int j = n; j-- > 0;)
        if (ipiv[j] != j)
            for (int c = 0; c < k; c++) {
                double t = b[j + c * n];
                b[j + c * n] = b[ipiv[j] + c * n];
                b[ipiv[j] + c * n] = t;
            }
}

/* The lower Cholesky factor in place (the upper part is left as it was).
 * Returns 0, or 1 + the column whose pivot is not positive. */
static int cholesky_loop(int n, double *a)
{
    for (int j = 0; j < n; j++) {
        double d = a[j + j * n];
        for (int k = 0; k < j; k++)
            d -= a[j + k * n] * a[j + k * n];
        if (!(d > 0))
            return j + 1;
        d = sqrt(d);
        a[j + j * n] = d;
        for (int i = j + 1; i < n; i++) {
            double s = a[i + j * n];
            for (int k = 0; k < j; k++)
                s -= a[i + k * n] * a[j + k * n];
            a[i + j * n] = s / d;
        }
    }
    return 0;
}

/* ---- One matrix: the loops or LAPACK ------------------------------------- */

bool weft__linalg_lapack(int n)
{
    return weft__blas_available() && n > WEFT__LINALG_LOOP_MAX;
}

int weft__linalg_lu_factor(weft_runtime *rt, int n, double *a, int *ipiv)
{
#if WEFT_HAVE_BLAS
    if (weft__linalg_tiled(n))
        return weft__linalg_lu_tiled(rt, n, a, ipiv);
    if (weft__linalg_lapack(n)) {
        int info = 0;
        dgetrf_(&n, &n, a, &n, ipiv, &info);
        for (int j = 0; j < n; j++)
            ipiv[j]--;   /* LAPACK counts rows from 1 */
        return info;
    }
#endif
    (void)rt;
    return lu_loop(n, a, ipiv);
}

int weft__linalg_lu_solve(weft_runtime *rt, int n, int k, double *lu, int *ipiv, bool trans,
                          double *b, double *scratch)
{
#if WEFT_HAVE_BLAS
    if (weft__linalg_tiled(n))
        return weft__linalg_lu_solve_tiled(rt, n, k, lu, ipiv, trans, b);
    if (weft__linalg_lapack(n)) {
        int info = 0;
        for (int j = 0; j < n; j++)
            ipiv[j]++;
        dgetrs_(trans ? "T" : "N", &n, &k, lu, &n, ipiv, b, &n, &info, 1);
        for (int j = 0; j < n; j++)
            ipiv[j]--;
        return 0;
    }
#endif
    (void)rt;
    lu_solve_loop(n, k, lu, ipiv, trans, b, scratch);
    return 0;
}

/* x of op(t) x = b for the triangle of a; op is the transpose when
 * adjoint.  Returns 0 or a negative weft error (the tiled path's loop). */
static int tri_solve(weft_runtime *rt, int n, int k, const double *a, unsigned flags,
                     double *b, double *scratch)
{
    bool lower = flags & LOWER;
#if WEFT_HAVE_BLAS
    if (weft__linalg_tiled(n))
        return weft__linalg_tri_solve_tiled(rt, n, k, a, flags, b);
    if (weft__linalg_lapack(n)) {
        cblas_dtrsm(CblasColMajor, CblasLeft, lower ? CblasLower : CblasUpper,
                    flags & ADJOINT ? CblasTrans : CblasNoTrans, CblasNonUnit, n, k, 1.0, a, n,
                    b, n);
        return 0;
    }
#endif
    (void)rt;
    if (flags & ADJOINT) {
        /* The transpose of a lower triangle is an upper one. */
        transpose_into(n, a, scratch);
        tri_loop(n, k, scratch, !lower, false, b);
    } else {
        tri_loop(n, k, a, lower, false, b);
    }
    return 0;
}

int weft__linalg_lu_inverse(weft_runtime *rt, int n, double *lu, int *ipiv, double *b,
                            double *scratch)
{
#if WEFT_HAVE_BLAS
    if (weft__linalg_tiled(n))
        return weft__linalg_lu_inverse_tiled(rt, n, lu, ipiv, b);
#endif
    for (size_t i = 0; i < (size_t)n * n; i++)
        b[i] = 0;
    for (int i = 0; i < n; i++)
        b[i + (size_t)i * n] = 1;
    return weft__linalg_lu_solve(rt, n, n, lu, ipiv, false, b, scratch);
}

/* ---- Batches --------------------------------------------------------------- */

typedef struct linalg_job {
    weft_runtime *rt;      /* a large matrix's tiles run on its workers */
    const weft__node *n;
    const char *a, *b;     /* inputs: batch x [m, cols], batch x [cols, k] */
    char *out;
    weft_dtype dt;
    int64_t batch;
    int m, cols, k;        /* the matrices' rows and columns, the right-hand sides' columns */
    size_t out_count;      /* elements of the result per matrix */
    size_t chunks;
    int64_t *failed;       /* per chunk: the first matrix that failed, or -1 */
} linalg_job;

void weft__linalg_store_at(char *p, weft_dtype dt, size_t i, double v)
{
    if (dt == WEFT_F32)
        ((float *)(void *)p)[i] = (float)v;
    else
        ((double *)(void *)p)[i] = v;
}

/* Transposing copies go in square blocks of this many rows and columns:
 * a plain double loop strides one side a whole row or column apart per
 * element (8 KiB at 1024 columns), a cache miss each, where a block's
 * 32 lines of each side stay in the first-level cache.  A loop per dtype,
 * so that neither switches per element. */
enum { COPY_BLOCK = 32 };

#define TRANSPOSE_BLOCKS(rows, cols, body)                                        \
    for (int i0 = 0; i0 < (rows); i0 += COPY_BLOCK)                               \
        for (int j0 = 0; j0 < (cols); j0 += COPY_BLOCK) {                         \
            int i1 = (rows) - i0 < COPY_BLOCK ? (rows) : i0 + COPY_BLOCK;         \
            int j1 = (cols) - j0 < COPY_BLOCK ? (cols) : j0 + COPY_BLOCK;         \
            for (int j = j0; j < j1; j++)                                         \
                for (int i = i0; i < i1; i++)                                     \
                    body;                                                         \
        }

void weft__linalg_load(const char *src, weft_dtype dt, int rows, int cols, double *dst)
{
    if (dt == WEFT_F64) {
        const double *s = (const double *)(const void *)src;
        TRANSPOSE_BLOCKS(rows, cols, dst[i + (size_t)j * rows] = s[(size_t)i * cols + j]);
        return;
    }
    const float *s = (const float *)(const void *)src;
    TRANSPOSE_BLOCKS(rows, cols, dst[i + (size_t)j * rows] = s[(size_t)i * cols + j]);
}

void weft__linalg_store(const double *src, int ld, int rows, int cols, char *dst,
                        size_t dst_row, weft_dtype dt)
{
    if (dt == WEFT_F64) {
        double *d = (double *)(void *)dst;
        TRANSPOSE_BLOCKS(rows, cols, d[(size_t)i * dst_row + j] = src[i + (size_t)j * ld]);
        return;
    }
    float *d = (float *)(void *)dst;
    TRANSPOSE_BLOCKS(rows, cols, d[(size_t)i * dst_row + j] = (float)src[i + (size_t)j * ld]);
}

static void store_matrix(const double *src, int rows, int cols, char *dst, weft_dtype dt)
{
    weft__linalg_store(src, rows, rows, cols, dst, (size_t)cols, dt);
}

/* count elements of dtype dt at src into f64 at dst as they lie, and
 * back: for matrices that LAPACK reads without a transposition. */
static void load_as_is(const char *src, weft_dtype dt, size_t count, double *dst)
{
    if (dt == WEFT_F64) {
        memcpy(dst, src, count * sizeof *dst);
        return;
    }
    const float *s = (const float *)(const void *)src;
    for (size_t i = 0; i < count; i++)
        dst[i] = s[i];
}

static void store_as_is(const double *src, size_t count, char *dst, weft_dtype dt)
{
    if (dt == WEFT_F64) {
        memcpy(dst, src, count * sizeof *src);
        return;
    }
    float *d = (float *)(void *)dst;
    for (size_t i = 0; i < count; i++)
        d[i] = (float)src[i];
}

/* Whether op reads a matrix of n rows as it lies: above the loops' sizes,
 * a row-major matrix read column-major is its transpose t, and det(a) =
 * det(t), a x = b is t^T x = b, a^-1 read row-major is t^-1 read
 * column-major, and a triangle of a is the other triangle of t: LAPACK
 * and the BLAS take the transposition as a flag, where copying a large
 * matrix into column-major order costs a cache miss per element.  lu's
 * factors are a's own, so it transposes. */
static bool reads_as_is(weft__op op, int n)
{
    return weft__linalg_lapack(n) &&
           (op == WEFT__OP_MATRIX_DETERMINANT || op == WEFT__OP_SLOGDET ||
            op == WEFT__OP_MATRIX_SOLVE || op == WEFT__OP_MATRIX_INVERSE ||
            op == WEFT__OP_TRIANGULAR_SOLVE);
}

/* The sign and log |det| of the LU factors of weft__linalg_lu_factor
 * (info its result): the diagonal's, negated once per row swap; 0 and
 * -inf for a singular matrix, as TensorFlow's slogdet. */
static void lu_slogdet(int n, const double *lu, const int *ipiv, int info, double *sign,
                       double *logabs)
{
    *sign = info == 0 ? 1 : 0;
    *logabs = info == 0 ? 0 : -INFINITY;
    for (int i = 0; i < n && info == 0; i++) {
        double d = lu[i + (size_t)i * n];
        *sign *= (ipiv[i] != i) != (d < 0) ? -1 : 1;
        *logabs += log(fabs(d));
    }
}

#if WEFT_HAVE_BLAS
/* Matrix m's lower Cholesky factor into out, factored where its rows lie
 * (a row-major lower triangle is LAPACK's column-major upper one): no
 * transposition in or out, which at 1024 rows cost about as much as the
 * factorization itself.  An f64 matrix is factored in the output's own
 * buffer; f32 in scratch, a (n x n doubles). */
static int cholesky_rows(const linalg_job *j, int64_t m, double *a)
{
    int n = j->cols, info = 0;
    size_t nn = (size_t)n * n, es = weft_dtype_size(j->dt);
    char *dst = j->out + (size_t)m * nn * es;
    double *f = j->dt == WEFT_F64 ? (double *)(void *)dst : a;
    load_as_is(j->a + (size_t)m * nn * es, j->dt, nn, f);
    if (weft__linalg_tiled(n))
        info = weft__linalg_cholesky_tiled(j->rt, n, f);
    else
        dpotrf_("U", &n, f, &n, &info, 1);
    if (info != 0)
        return info;
    for (int i = 0; i + 1 < n; i++)   /* the upper triangle is 0 */
        memset(f + (size_t)i * n + i + 1, 0, sizeof *f * (size_t)(n - i - 1));
    if (j->dt == WEFT_F32)
        store_as_is(f, nn, dst, j->dt);
    return 0;
}
#endif

/* Matrix m of the batch: its result into out.  Returns 0, a positive
 * number when it is singular (solve, inverse), not positive definite
 * (cholesky), or LAPACK's iteration did not converge (eigh, svd), or a
 * negative weft error when the runtime failed a tiled matrix's loop. */
static int one_matrix(const linalg_job *j, int64_t m, double *a, double *b, double *scratch,
                      int *ipiv)
{
    int n = j->cols, k = j->k;
    size_t es = weft_dtype_size(j->dt), nn = (size_t)n * n, nk = (size_t)n * k;
#if WEFT_HAVE_BLAS
    if (j->n->op == WEFT__OP_CHOLESKY && weft__linalg_lapack(n))
        return cholesky_rows(j, m, a);
#endif
    if (weft__linalg_is_decomp(j->n->op))
        return weft__decomp_one(j->rt, j->n, j->m, n, j->a + (size_t)m * j->m * n * es, j->dt,
                                j->out + (size_t)m * j->out_count * es, j->out_count, a);
    bool as_is = reads_as_is(j->n->op, n);
    if (as_is)
        load_as_is(j->a + (size_t)m * nn * es, j->dt, nn, a);
    else
        weft__linalg_load(j->a + (size_t)m * nn * es, j->dt, n, n, a);
    switch (j->n->op) {
    case WEFT__OP_CHOLESKY: {   /* the loops' sizes: cholesky_rows takes the others */
        if (cholesky_loop(n, a) != 0)
            return 1;
        for (int c = 1; c < n; c++)   /* the upper triangle is 0 */
            for (int i = 0; i < c; i++)
                a[i + (size_t)c * n] = 0;
        store_matrix(a, n, n, j->out + (size_t)m * nn * es, j->dt);
        return 0;
    }
    case WEFT__OP_MATRIX_DETERMINANT: {
        double det = 1;
        int rc = weft__linalg_lu_factor(j->rt, n, a, ipiv);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            for (int i = 0; i < n; i++)
                det *= ipiv[i] != i ? -a[i + (size_t)i * n] : a[i + (size_t)i * n];
        } else {
            det = 0;
        }
        weft__linalg_store_at(j->out, j->dt, (size_t)m, det);
        return 0;
    }
    case WEFT__OP_LU: {
        /* Singular matrices factor too (TensorFlow's lu does not fail);
         * the swaps become the permutation p with p A = l u. */
        int rc = weft__linalg_lu_factor(j->rt, n, a, ipiv);
        if (rc < 0)
            return rc;
        char *dst = j->out + (size_t)m * j->out_count * es;
        weft__linalg_store(a, n, n, n, dst, (size_t)n, j->dt);
        for (int i = 0; i < n; i++)
            scratch[i] = i;
        for (int i = 0; i < n; i++) {
            double t = scratch[i];
            scratch[i] = scratch[ipiv[i]];
            scratch[ipiv[i]] = t;
        }
        weft__linalg_store(scratch, 1, 1, n, dst + nn * es, (size_t)n, j->dt);
        return 0;
    }
    case WEFT__OP_SLOGDET: {
        double sign, logabs;
        int info = weft__linalg_lu_factor(j->rt, n, a, ipiv);
        if (info < 0)
            return info;
        lu_slogdet(n, a, ipiv, info, &sign, &logabs);
        weft__linalg_store_at(j->out, j->dt, 2 * (size_t)m, sign);
        weft__linalg_store_at(j->out, j->dt, 2 * (size_t)m + 1, logabs);
        return 0;
    }
    case WEFT__OP_MATRIX_EXPONENTIAL:
    case WEFT__OP_MATRIX_SQRT:
    case WEFT__OP_MATRIX_LOG: {
        weft__op op = j->n->op;
        int rc = op == WEFT__OP_MATRIX_EXPONENTIAL ? weft__expm_one(j->rt, n, a, b, ipiv)
                 : op == WEFT__OP_MATRIX_SQRT      ? weft__sqrtm_one(j->rt, n, a, b, ipiv)
                                                   : weft__logm_one(j->rt, n, a, b, ipiv);
        if (rc == 0)
            store_matrix(a, n, n, j->out + (size_t)m * nn * es, j->dt);
        return rc;
    }
    case WEFT__OP_MATRIX_INVERSE: {
        int rc = weft__linalg_lu_factor(j->rt, n, a, ipiv);
        if (rc == 0)
            rc = weft__linalg_lu_inverse(j->rt, n, a, ipiv, b, scratch);
        if (rc != 0)
            return rc;
        if (as_is)
            store_as_is(b, nn, j->out + (size_t)m * nn * es, j->dt);
        else
            store_matrix(b, n, n, j->out + (size_t)m * nn * es, j->dt);
        return 0;
    }
    case WEFT__OP_MATRIX_SOLVE: {
        weft__linalg_load(j->b + (size_t)m * nk * es, j->dt, n, k, b);
        bool trans = ((j->n->attr.index.kind & ADJOINT) != 0) != as_is;
        int rc = weft__linalg_lu_factor(j->rt, n, a, ipiv);
        if (rc == 0)
            rc = weft__linalg_lu_solve(j->rt, n, k, a, ipiv, trans, b, scratch);
        if (rc != 0)
            return rc;
        store_matrix(b, n, k, j->out + (size_t)m * nk * es, j->dt);
        return 0;
    }
    default: {   /* TRIANGULAR_SOLVE: a zero on the diagonal gives inf or NaN */
        weft__linalg_load(j->b + (size_t)m * nk * es, j->dt, n, k, b);
        unsigned flags = (unsigned)j->n->attr.index.kind;
        int rc = tri_solve(j->rt, n, k, a, as_is ? flags ^ (LOWER | ADJOINT) : flags, b,
                           scratch);
        if (rc != 0)
            return rc;
        store_matrix(b, n, k, j->out + (size_t)m * nk * es, j->dt);
        return 0;
    }
    }
}

/* Whether the matrices of j go to LAPACK. */
static bool job_lapack(const linalg_job *j)
{
    if (weft__linalg_is_decomp(j->n->op))
        return weft__decomp_lapack(j->n, j->m, j->cols);
    return weft__linalg_lapack(j->cols);
}

static int linalg_chunks(size_t begin, size_t end, void *ctx)
{
    linalg_job *j = ctx;
    size_t n = (size_t)j->cols, k = (size_t)j->k, cols = k > n ? k : n;
    /* a, b (or the inverse's identity, or the exponential's powers) and a
     * transpose, then the pivots; a decomposition's own scratch in their
     * place. */
    size_t b_doubles = j->n->op == WEFT__OP_MATRIX_EXPONENTIAL ? weft__expm_scratch(j->cols)
                       : j->n->op == WEFT__OP_MATRIX_SQRT  ? weft__sqrtm_scratch(j->cols)
                       : j->n->op == WEFT__OP_MATRIX_LOG   ? weft__logm_scratch(j->cols)
                                                           : n * cols;
    size_t doubles = 2 * n * n + b_doubles + (sizeof(int) * n + 1) / sizeof(double) + 1;
    if (weft__linalg_is_decomp(j->n->op))
        doubles = weft__decomp_scratch(j->n, j->m, j->cols);
    /* From the tensor buffers' cache: a large matrix's fresh scratch would
     * pay a page fault per 4 KiB on every call. */
    size_t cap;
    double *buf = weft__tensor_buf_alloc(sizeof(double) * doubles, &cap);
    if (!buf)
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory for a %d x %zu matrix",
                            weft__op_name(j->n->op), j->m, n);
    double *a = buf, *scratch = a + n * n, *b = scratch + n * n;
    int *ipiv = (int *)(void *)(b + b_doubles);
    if (job_lapack(j))
        weft__blas_thread_enter();
    for (size_t c = begin; c < end; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        j->failed[c] = -1;
        for (int64_t m = lo; m < hi; m++) {
            int rc = one_matrix(j, m, a, b, scratch, ipiv);
            if (rc < 0) {
                weft__tensor_buf_free(buf, cap);
                return rc;
            }
            if (rc > 0) {
                j->failed[c] = m;
                break;
            }
        }
    }
    weft__tensor_buf_free(buf, cap);
    return 0;
}

int weft__linalg_batch_failure(const weft__node *n, const int64_t *failed, size_t chunks,
                               const char *item, const weft_tensor *t, const char *why)
{
    for (size_t c = 0; c < chunks; c++) {
        if (failed[c] < 0)
            continue;
        char st[WEFT__SPEC_STR_MAX];
        weft_spec s;
        weft__tensor_spec(t, &s);
        return weft__errorf(WEFT_EINVAL, "weft_%s: %s %lld of %s %s", weft__op_name(n->op), item,
                            (long long)failed[c], weft__spec_str(&s, st, sizeof st), why);
    }
    return 0;
}

int weft__eval_linalg(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor *out)
{
    const weft_tensor *a = in[0], *b = n->n_in > 1 ? in[1] : NULL;
    int64_t rows = a->dims[a->rank - 2], cols = a->dims[a->rank - 1];
    /* 46340^2 fits an int, as LAPACK's sizes must. */
    if (rows > 46340 || cols > 46340)
        return weft__errorf(WEFT_EINVAL, "weft_%s: a %lld x %lld matrix is too large",
                            weft__op_name(n->op), (long long)rows, (long long)cols);
    linalg_job j = { .rt = rt, .n = n, .a = weft_tensor_data(a),
                     .b = b ? weft_tensor_data(b) : NULL, .out = weft__tensor_mut(out),
                     .dt = a->dtype, .m = (int)rows, .cols = (int)cols,
                     .k = b ? (int)b->dims[b->rank - 1] : 0 };
    j.batch = 1;
    for (int d = 0; d < a->rank - 2; d++)
        j.batch *= a->dims[d];
    if (j.batch == 0 || out->numel == 0)
        return 0;
    j.out_count = (size_t)(out->numel / j.batch);
    uint64_t big = (uint64_t)(rows > cols ? rows : cols);
    uint64_t cube = weft__sat_mul(weft__sat_mul(big, (uint64_t)cols),
                                  (uint64_t)(rows + j.k));
    j.chunks = weft__chunk_count_of(rt, weft__sat_mul(cube, (uint64_t)j.batch),
                                    (uint64_t)j.batch);
    j.failed = weft__malloc(j.chunks * sizeof *j.failed);
    if (!j.failed)
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
    int rc = weft__run_chunks_blas(rt, j.chunks, linalg_chunks, &j, job_lapack(&j));
    if (rc == 0)
        rc = weft__linalg_batch_failure(n, j.failed, j.chunks, "matrix", a,
                                        n->op == WEFT__OP_CHOLESKY ? "is not positive definite"
                                        : weft__linalg_is_decomp(n->op)
                                            ? "did not converge in LAPACK"
                                            : "is singular");
    weft__free(j.failed);
    return rc;
}
