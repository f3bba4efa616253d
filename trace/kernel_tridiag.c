/* tridiagonal_solve (weft__eval_tridiagonal_solve): x of a x = rhs for a
 * batch of tridiagonal matrices given in TensorFlow's compact format,
 * diagonals [..., 3, m] (the superdiagonal, whose last element is not
 * read, the diagonal, and the subdiagonal, whose first is not read), and
 * right-hand sides [..., m, k] or [..., m].
 *
 * Gaussian elimination with partial pivoting between each row and the
 * next, LAPACK's dgtsv (TensorFlow's default, partial_pivoting): a row
 * swap fills a second superdiagonal, kept where the subdiagonal was.
 * Each system is copied into an f64 scratch (f32 computes in f64 and
 * rounds once); the batch is cut into chunks of whole systems, so the
 * result does not depend on the worker count. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/linalg.h"
#include "trace/shape.h"

typedef struct tri_job {
    const char *diag, *rhs;
    char *out;
    weft_dtype dt;
    int64_t batch, m, k;
    size_t chunks;
    int64_t *failed;   /* per chunk: the first singular system, or -1 */
} tri_job;

static double load_at(const char *p, weft_dtype dt, int64_t i)
{
    return dt == WEFT_F32 ? ((const float *)(const void *)p)[i]
                          : ((const double *)(const void *)p)[i];
}

/* Solves the system of sub (dl, m - 1), diagonal (d) and super (du,
 * m - 1) diagonals for the m x k right-hand sides b (row-major) in place;
 * dl, d and du are overwritten.  Returns false when a pivot is 0. */
static bool gtsv(int64_t m, int64_t k, double *dl, double *d, double *du, double *b)
{
    for (int64_t i = 0; i + 1 < m; i++) {
        double *bi = b + i * k, *bn = b + (i + 1) * k;
        if (fabs(d[i]) >= fabs(dl[i])) {
            if (d[i] == 0)
                return false;
            double f = dl[i] / d[i];
            d[i + 1] -= f * du[i];
            for (int64_t c = 0; c < k; c++)
                bn[c] -= f * bi[c];
            dl[i] = 0;   /* no fill in the second superdiagonal */
        } else {
            /* Rows i and i + 1 swap; row i gains a second superdiagonal
             * element (stored in dl[i]) unless it is the last but one. */
            double f = d[i] / dl[i];
            d[i] = dl[i];
            double t = d[i + 1];
            d[i + 1] = du[i] - f * t;
            if (i + 2 < m) {
                dl[i] = du[i + 1];
                du[i + 1] = -f * dl[i];
            }
            du[i] = t;
            for (int64_t c = 0; c < k; c++) {
                double s = bi[c];
                bi[c] = bn[c];
                bn[c] = s - f * bn[c];
            }
        }
    }
    if (d[m - 1] == 0)
        return false;
    for (int64_t c = 0; c < k; c++) {
        b[(m - 1) * k + c] /= d[m - 1];
        if (m > 1)
            b[(m - 2) * k + c] = (b[(m - 2) * k + c] - du[m - 2] * b[(m - 1) * k + c]) / d[m - 2];
        for (int64_t i = m - 3; i >= 0; i--)
            b[i * k + c] = (b[i * k + c] - du[i] * b[(i + 1) * k + c] -
                            dl[i] * b[(i + 2) * k + c]) / d[i];
    }
    return true;
}

static int tri_chunks(size_t cb, size_t ce, void *ctx)
{
    tri_job *j = ctx;
    int64_t m = j->m, k = j->k;
    double *buf = weft__malloc(sizeof *buf * (size_t)(3 * m + m * k));
    if (!buf)
        return weft__errorf(WEFT_ENOMEM, "weft_tridiagonal_solve: out of memory for %lld "
                            "equations", (long long)m);
    double *dl = buf, *d = dl + m, *du = d + m, *b = du + m;
    for (size_t c = cb; c < ce; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        j->failed[c] = -1;
        for (int64_t s = lo; s < hi; s++) {
            int64_t base = s * 3 * m;
            /* dl[i] = a[i + 1][i] is the subdiagonal's element i + 1;
             * du[i] = a[i][i + 1] the superdiagonal's element i. */
            for (int64_t i = 0; i < m; i++) {
                du[i] = load_at(j->diag, j->dt, base + i);
                d[i] = load_at(j->diag, j->dt, base + m + i);
                dl[i] = i + 1 < m ? load_at(j->diag, j->dt, base + 2 * m + i + 1) : 0;
            }
            for (int64_t e = 0; e < m * k; e++)
                b[e] = load_at(j->rhs, j->dt, s * m * k + e);
            if (!gtsv(m, k, dl, d, du, b)) {
                j->failed[c] = s;
                break;
            }
            for (int64_t e = 0; e < m * k; e++)
                weft__linalg_store_at(j->out, j->dt, (size_t)(s * m * k + e), b[e]);
        }
    }
    weft__free(buf);
    return 0;
}

int weft__eval_tridiagonal_solve(weft_runtime *rt, const weft__node *n,
                                 const weft_tensor *diagonals, const weft_tensor *rhs,
                                 weft_tensor *out)
{
    tri_job j = { .diag = weft_tensor_data(diagonals), .rhs = weft_tensor_data(rhs),
                  .out = weft__tensor_mut(out), .dt = diagonals->dtype,
                  .m = diagonals->dims[diagonals->rank - 1] };
    bool vector = rhs->rank == diagonals->rank - 1;
    j.k = vector ? 1 : rhs->dims[rhs->rank - 1];
    j.batch = 1;
    for (int d = 0; d < diagonals->rank - 2; d++)
        j.batch *= diagonals->dims[d];
    if (j.batch == 0 || j.m == 0 || j.k == 0)
        return 0;
    uint64_t work = weft__sat_mul(weft__sat_mul((uint64_t)j.batch, (uint64_t)j.m),
                                  (uint64_t)j.k + 3);
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.batch);
    j.failed = weft__malloc(j.chunks * sizeof *j.failed);
    if (!j.failed)
        return weft__errorf(WEFT_ENOMEM, "weft_tridiagonal_solve: out of memory");
    int rc = weft__run_chunks(rt, j.chunks, tri_chunks, &j);
    if (rc == 0)
        rc = weft__linalg_batch_failure(n, j.failed, j.chunks, "system", diagonals,
                                        "is singular");
    weft__free(j.failed);
    return rc;
}
