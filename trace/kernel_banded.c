/* banded_triangular_solve (tf.linalg.banded_triangular_solve): x of
 * a x = rhs (or a^T x = rhs with adjoint) for a triangular a of K bands
 * in TensorFlow's compact format, bands [..., K, M]: lower, row k is the
 * k-th subdiagonal, a[i][i - k] = bands[k][i] (padded on the left);
 * upper, row K - 1 - d is the d-th superdiagonal, a[i][i + d] =
 * bands[K - 1 - d][i] (padded on the right); the diagonal is row 0 or
 * row K - 1.  Substitution row by row, the nearest band first as
 * TensorFlow's kernel, O(M K N) per system; a 0 on the diagonal gives inf
 * or NaN (no error, as triangular_solve).  f32 computes in f64 and rounds
 * once; the batch is cut into chunks of whole systems, so the result does
 * not depend on the worker count. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/linalg.h"
#include "trace/shape.h"

typedef struct band_job {
    const weft_tensor *bands, *rhs;
    char              *out;
    int64_t            batch, k, m, n;
    bool               lower, adjoint;
    size_t             chunks;
} band_job;

/* a[i][col] of one system, read from its bands (col within the band):
 * either layout keeps row i's element in column i of its band. */
static double entry(const band_job *j, const double *bands, int64_t i, int64_t col)
{
    int64_t band = j->lower ? i - col : j->k - 1 - (col - i);
    return bands[band * j->m + i];
}

/* Solves one system in place: x holds rhs [m, n] and receives x. */
static void substitute(const band_job *j, const double *bands, double *x)
{
    int64_t m = j->m, n = j->n, reach = j->k - 1;
    /* op(a) is lower, so solved by a forward sweep, unless exactly one of
     * lower and adjoint holds. */
    bool forward = j->lower != j->adjoint;
    for (int64_t step = 0; step < m; step++) {
        int64_t i = forward ? step : m - 1 - step;
        double *xi = x + i * n;
        for (int64_t d = 1; d <= reach; d++) {
            int64_t p = forward ? i - d : i + d;   /* the row already solved */
            if (p < 0 || p >= m)
                break;
            /* op(a)[i][p]: a[i][p], or a[p][i] under the adjoint. */
            double c = j->adjoint ? entry(j, bands, p, i) : entry(j, bands, i, p);
            const double *xp = x + p * n;
            for (int64_t q = 0; q < n; q++)
                xi[q] -= c * xp[q];
        }
        double diag = entry(j, bands, i, i);
        for (int64_t q = 0; q < n; q++)
            xi[q] /= diag;
    }
}

static int band_chunks(size_t cb, size_t ce, void *ctx)
{
    band_job *j = ctx;
    size_t kb = (size_t)(j->k * j->m), xb = (size_t)(j->m * j->n);
    double *bands = weft__malloc(sizeof *bands * (kb + xb));
    if (!bands)
        return weft__errorf(WEFT_ENOMEM, "weft_banded_triangular_solve: out of memory for %lld "
                            "equations", (long long)j->m);
    double *x = bands + kb;
    for (size_t c = cb; c < ce; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        for (int64_t s = lo; s < hi; s++) {
            for (size_t e = 0; e < kb; e++)
                bands[e] = weft__real_at(j->bands, s * (int64_t)kb + (int64_t)e);
            for (size_t e = 0; e < xb; e++)
                x[e] = weft__real_at(j->rhs, s * (int64_t)xb + (int64_t)e);
            substitute(j, bands, x);
            for (size_t e = 0; e < xb; e++)
                weft__linalg_store_at(j->out, j->rhs->dtype, (size_t)s * xb + e, x[e]);
        }
    }
    weft__free(bands);
    return 0;
}

int weft__eval_banded_solve(weft_runtime *rt, const weft__node *n, const weft_tensor *bands,
                            const weft_tensor *rhs, weft_tensor *out)
{
    unsigned flags = (unsigned)n->attr.index.kind;
    band_job j = { .bands = bands, .rhs = rhs, .out = weft__tensor_mut(out),
                   .k = bands->dims[bands->rank - 2], .m = bands->dims[bands->rank - 1],
                   .n = rhs->dims[rhs->rank - 1], .lower = flags & WEFT__LINALG_LOWER,
                   .adjoint = flags & WEFT__LINALG_ADJOINT, .batch = 1 };
    for (int d = 0; d < bands->rank - 2; d++)
        j.batch *= bands->dims[d];
    if (j.batch == 0 || j.m == 0 || j.n == 0)
        return 0;
    uint64_t work = weft__sat_mul(weft__sat_mul((uint64_t)j.batch, (uint64_t)j.m),
                                  weft__sat_mul((uint64_t)j.k, (uint64_t)j.n));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.batch);
    return weft__run_chunks(rt, j.chunks, band_chunks, &j);
}

/* bands [..., K, M] (K >= 1) and rhs [..., M, N], f32 or f64 of one
 * dtype, the same batch dims; the result has rhs's spec. */
int weft__infer_banded_solve(const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_banded_triangular_solve";
    const weft_spec *a = &in[0], *b = &in[1];
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    weft__spec_str(a, sa, sizeof sa);
    weft__spec_str(b, sb, sizeof sb);
    if ((a->dtype != WEFT_F32 && a->dtype != WEFT_F64) || b->dtype != a->dtype)
        return weft__errorf(WEFT_EDTYPE, "%s: the bands %s and right-hand sides %s are not f32 "
                            "or f64 of one dtype", fn, sa, sb);
    bool fits = a->rank != WEFT_RANK_ANY && a->rank >= 2 && b->rank == a->rank &&
                a->dims[a->rank - 2] != 0;
    for (int q = 0; fits && q < a->rank - 2; q++)
        fits = !weft__dims_clash(a->dims[q], b->dims[q]);
    if (fits)
        fits = !weft__dims_clash(a->dims[a->rank - 1], b->dims[a->rank - 2]);
    if (!fits)
        return weft__errorf(WEFT_ESHAPE, "%s: the bands %s and right-hand sides %s are not "
                            "[..., K, M] (K >= 1) and [..., M, N] (ranks known while tracing)",
                            fn, sa, sb);
    *out = *b;
    return 0;
}
