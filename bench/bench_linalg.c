/* Linear algebra: weft_matrix_solve, weft_cholesky and the
 * decompositions as traced functions against the C a programmer would
 * write with LAPACK (OpenBLAS's), in one process, f64:
 *
 *  (a) solve_batch  256 systems [32,32] x [32,4] (the batch spread over
 *                   weft's workers);
 *  (b) chol_batch   64 Cholesky factors of SPD [128,128];
 *  (c) solve_big    one system [1024,1024] x [1024,16];
 *  (d) eigh_batch   eigenvalues and vectors of 1024 symmetric [12,12]
 *                   (weft's Jacobi loops against dsyevd);
 *  (e) svd_batch    s, u and v of 1024 [16,8] (one-sided Jacobi against
 *                   dgesdd);
 *  (f) qr_batch     q and r of 1024 [16,16] (Householder loops against
 *                   dgeqrf + dorgqr);
 *  (g) eigh_big     eigenvalues and vectors of one symmetric [512,512]
 *                   (dsyevd on both sides);
 *  (h) chol_big     the Cholesky factor of one SPD [1024,1024];
 *  (i) inv_big      the inverse of one [1024,1024] (dgetrf + dgetri);
 *  (j) qr_big       q and r of one [1024,1024] (dgeqrf + dorgqr);
 *  (k) expm_big     the exponential of one [1024,1024] of 1-norm about 2
 *                   (Higham's scaling and squaring: degree 9, no
 *                   squaring; the peer's products by dgemm, its solve by
 *                   dgetrf + dgetrs).
 *
 * The C peer copies each matrix into column-major order (Cholesky's and
 * solve's as they are, see peer()), calls LAPACK
 * (dgetrf and dgetrs, dpotrf, dsyevd, dgesdd, dgeqrf and dorgqr), and
 * copies every result back row-major: the same work as weft's, on 1
 * OpenBLAS thread, and for a lone matrix also on as many threads as weft
 * has workers.  Each repetition times the peers and then weft (after a
 * pause of 300 ms past a threaded peer: OpenBLAS's threads spin about
 * 130 ms after a threaded call, on the CPUs weft's workers need); the table
 * gives medians and the median of the per-repetition ratios weft / the
 * best peer (below 1: weft faster).  Before timing, weft's first output
 * is compared with the 1-thread peer's (within 1e-9 relative; for the
 * decompositions the eigen- or singular values and r, whose signs do not
 * depend on the algorithm's choices).
 *
 * Usage: bench_linalg [workers...] ($BENCH_REPS, default 7;
 * BENCH_LINALG_ONLY="solve_big" runs a subset). */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

extern void openblas_set_num_threads(int n);
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info,
                    size_t trans_len);
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
                    size_t uplo_len);
extern void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work,
                    const int *lwork, int *info);
extern void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
                    double *work, const int *lwork, int *info);
extern void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
                    const double *tau, double *work, const int *lwork, int *info);
extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                    double *w, double *work, const int *lwork, int *iwork, const int *liwork,
                    int *info, size_t jobz_len, size_t uplo_len);
extern void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda,
                    double *s, double *u, const int *ldu, double *vt, const int *ldvt,
                    double *work, const int *lwork, int *iwork, int *info, size_t jobz_len);

typedef enum la_op { SOLVE, CHOL, EIGH, SVD, QR, INV, EXPM } la_op;

typedef struct workload {
    const char *name, *title;
    la_op op;
    int64_t batch;
    int n, k;               /* rows, and the right-hand sides' (or svd's) columns */
    double *a, *b;          /* row-major inputs */
    weft_tensor *ta, *tb;
} workload;

static workload workloads[] = {
    { "solve_batch", "(a) solve of 256 x f64[32,32] by f64[32,4]", SOLVE, 256, 32, 4,
      NULL, NULL, NULL, NULL },
    { "chol_batch", "(b) cholesky of 64 x SPD f64[128,128]", CHOL, 64, 128, 0,
      NULL, NULL, NULL, NULL },
    { "solve_big", "(c) solve of f64[1024,1024] by f64[1024,16]", SOLVE, 1, 1024, 16,
      NULL, NULL, NULL, NULL },
    { "eigh_batch", "(d) eigh of 1024 x symmetric f64[12,12]", EIGH, 1024, 12, 0,
      NULL, NULL, NULL, NULL },
    { "svd_batch", "(e) svd of 1024 x f64[16,8]", SVD, 1024, 16, 8, NULL, NULL, NULL, NULL },
    { "qr_batch", "(f) qr of 1024 x f64[16,16]", QR, 1024, 16, 16, NULL, NULL, NULL, NULL },
    { "eigh_big", "(g) eigh of symmetric f64[512,512]", EIGH, 1, 512, 0,
      NULL, NULL, NULL, NULL },
    { "chol_big", "(h) cholesky of SPD f64[1024,1024]", CHOL, 1, 1024, 0,
      NULL, NULL, NULL, NULL },
    { "inv_big", "(i) inverse of f64[1024,1024]", INV, 1, 1024, 0, NULL, NULL, NULL, NULL },
    { "qr_big", "(j) qr of f64[1024,1024]", QR, 1, 1024, 1024, NULL, NULL, NULL, NULL },
    { "expm_big", "(k) expm of f64[1024,1024], 1-norm about 2", EXPM, 1, 1024, 0,
      NULL, NULL, NULL, NULL },
};
#define N_WORK (sizeof workloads / sizeof workloads[0])

enum { PEER_1, PEER_N, N_PEERS };

static weft_runtime *rt;
static uint64_t rng = 0x9e3779b97f4a7c15u;

static double uniform(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng >> 11) * 0x1p-53 * 2 - 1;
}

/* The columns of w's matrices. */
static int cols_of(const workload *w)
{
    return w->op == SVD || w->op == QR ? w->k : w->n;
}

static size_t n_outs_of(const workload *w)
{
    return w->op == SVD ? 3 : w->op == EIGH || w->op == QR ? 2 : 1;
}

/* The output compared with the peer's: r for qr, else the first. */
static size_t checked_out(const workload *w)
{
    return w->op == QR ? 1 : 0;
}

static void setup(workload *w)
{
    int n = w->n, cols = cols_of(w);
    size_t nn = (size_t)n * cols, nk = w->op == SOLVE ? (size_t)n * w->k : 0;
    w->a = malloc(sizeof *w->a * nn * (size_t)w->batch);
    w->b = malloc(sizeof *w->b * (nk ? nk : 1) * (size_t)w->batch);
    double *m = malloc(sizeof *m * nn);
    for (int64_t q = 0; q < w->batch; q++) {
        double *a = w->a + q * nn;
        for (size_t i = 0; i < nn; i++)
            m[i] = uniform();
        for (int i = 0; i < n; i++)
            for (int j = 0; j < cols; j++) {
                double s = m[i * cols + j];
                if ((w->op == SOLVE || w->op == INV) && i == j)
                    s += n;
                if (w->op == EIGH)
                    s = j <= i ? m[i * n + j] : m[j * n + i];
                if (w->op == EXPM)   /* columns of n entries of magnitude 2 / n */
                    s *= 4.0 / n;
                if (w->op == CHOL) {   /* m m^T + n I */
                    s = i == j ? n : 0;
                    for (int c = 0; c < n; c++)
                        s += m[i * n + c] * m[j * n + c];
                }
                a[i * cols + j] = s;
            }
        for (size_t i = 0; i < nk; i++)
            w->b[q * nk + i] = uniform();
    }
    free(m);
    int64_t da[3] = { w->batch, n, cols }, db[3] = { w->batch, n, w->k };
    int err = weft_tensor_create(WEFT_F64, 3, da, w->a, &w->ta);
    if (!err && w->op == SOLVE)
        err = weft_tensor_create(WEFT_F64, 3, db, w->b, &w->tb);
    if (err)
        bench_die("weft_tensor_create", err);
}

static void teardown(workload *w)
{
    weft_tensor_release(w->ta);
    weft_tensor_release(w->tb);
    free(w->a);
    free(w->b);
}

/* The peer's buffers: column-major copies and LAPACK's workspace, sized
 * once per workload (by LAPACK's own queries). */
typedef struct peer_ws {
    double *ca, *cb, *cc, *w, *work;
    int *ipiv, *iwork, lwork, liwork;
} peer_ws;

static void ws_init(const workload *w, peer_ws *ws)
{
    int n = w->n, k = w->k, cols = cols_of(w), info = 0, q = -1, iq = 0;
    double dq = 0, dq2 = 0;
    ws->lwork = 1;
    ws->liwork = 1;
    if (w->op == EIGH) {
        dsyevd_("V", "L", &n, NULL, &n, NULL, &dq, &q, &iq, &q, &info, 1, 1);
        ws->lwork = (int)dq + 1;
        ws->liwork = iq + 1;
    } else if (w->op == SVD) {
        dgesdd_("S", &n, &k, NULL, &n, NULL, NULL, &n, NULL, &k, &dq, &q, NULL, &info, 1);
        ws->lwork = (int)dq + 1;
        ws->liwork = 8 * k;
    } else if (w->op == INV) {
        dgetri_(&n, NULL, &n, NULL, &dq, &q, &info);
        ws->lwork = (int)dq + 1;
    } else if (w->op == EXPM) {
        ws->lwork = 7 * n * n;   /* a^2, a^4, a^6, a^8, u, v, t */
    } else if (w->op == QR) {
        dgeqrf_(&n, &k, NULL, &n, NULL, &dq, &q, &info);
        dorgqr_(&n, &k, &k, NULL, &n, NULL, &dq2, &q, &info);
        ws->lwork = (int)(dq > dq2 ? dq : dq2) + 1;
    }
    size_t big = (size_t)n * (cols > w->k ? cols : w->k) + 1;
    ws->ca = malloc(sizeof(double) * big);
    ws->cb = malloc(sizeof(double) * big);
    ws->cc = malloc(sizeof(double) * big);
    ws->w = malloc(sizeof(double) * ((size_t)n + 1));
    ws->work = malloc(sizeof(double) * (size_t)ws->lwork);
    ws->ipiv = malloc(sizeof(int) * ((size_t)n + 1));
    ws->iwork = malloc(sizeof(int) * (size_t)ws->liwork);
}

static void ws_free(peer_ws *ws)
{
    free(ws->ca);
    free(ws->cb);
    free(ws->cc);
    free(ws->w);
    free(ws->work);
    free(ws->ipiv);
    free(ws->iwork);
}

/* Row-major [rows, cols] at src into column-major at dst, and back. */
static void to_cols(const double *src, int rows, int cols, double *dst)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            dst[i + (size_t)j * rows] = src[(size_t)i * cols + j];
}

static void to_rows(const double *src, int ld, int rows, int cols, double *dst)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            dst[(size_t)i * cols + j] = src[i + (size_t)j * ld];
}

/* ---- The exponential as a C programmer ports it (Higham 2005) ---------- */

static const double theta[5] = { 1.495585217958292e-2, 2.539398330063230e-1,
                                 9.504178996162932e-1, 2.097847961257068e+0,
                                 5.371920351148152e+0 };
static const double pade_b[5][14] = {
    { 120, 60, 12, 1 },
    { 30240, 15120, 3360, 420, 30, 1 },
    { 17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1 },
    { 17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0,
      3960.0, 90.0, 1.0 },
    { 64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
      129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
      40840800.0, 960960.0, 16380.0, 182.0, 1.0 },
};

static void gemm(int n, const double *x, const double *y, double *z)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x, n, y, n, 0.0, z, n);
}

/* dst = c0 I + sum of c[i] pw[i]. */
static void comb(int n, double c0, const double *c, double *const *pw, int count, double *dst)
{
    for (size_t e = 0; e < (size_t)n * n; e++) {
        double s = 0;
        for (int i = 0; i < count; i++)
            s += c[i] * pw[i][e];
        dst[e] = s;
    }
    for (int i = 0; i < n; i++)
        dst[i + (size_t)i * n] += c0;
}

/* expm of the column-major a in place; work holds 7 n^2 doubles. */
static void peer_expm(int n, double *a, double *work, int *ipiv)
{
    size_t nn = (size_t)n * n;
    double norm = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += fabs(a[i + (size_t)j * n]);
        norm = s > norm ? s : norm;
    }
    int d = 0;
    while (d < 4 && norm > theta[d])
        d++;
    int m = 2 * d + 3 + (d == 4 ? 2 : 0), sq = 0;
    if (d == 4 && norm > theta[4]) {
        sq = (int)ceil(log2(norm / theta[4]));
        for (size_t e = 0; e < nn; e++)
            a[e] = ldexp(a[e], -sq);
    }
    const double *b = pade_b[d];
    double *p[4] = { work, work + nn, work + 2 * nn, work + 3 * nn };
    double *u = work + 4 * nn, *v = work + 5 * nn, *t = work + 6 * nn;
    gemm(n, a, a, p[0]);
    if (m >= 5)
        gemm(n, p[0], p[0], p[1]);
    if (m >= 7)
        gemm(n, p[0], p[1], p[2]);
    if (m == 9)
        gemm(n, p[1], p[1], p[3]);
    if (m == 13) {
        comb(n, 0, (const double[]){ b[9], b[11], b[13] }, p, 3, t);
        gemm(n, p[2], t, u);
        comb(n, b[1], (const double[]){ b[3], b[5], b[7] }, p, 3, t);
        for (size_t e = 0; e < nn; e++)
            t[e] += u[e];
        gemm(n, a, t, u);
        comb(n, 0, (const double[]){ b[8], b[10], b[12] }, p, 3, t);
        gemm(n, p[2], t, v);
        comb(n, b[0], (const double[]){ b[2], b[4], b[6] }, p, 3, t);
        for (size_t e = 0; e < nn; e++)
            v[e] += t[e];
    } else {
        int count = (m - 1) / 2;
        double odd[4], even[4];
        for (int i = 0; i < count; i++) {
            odd[i] = b[2 * i + 3];
            even[i] = b[2 * i + 2];
        }
        comb(n, b[1], odd, p, count, t);
        gemm(n, a, t, u);
        comb(n, b[0], even, p, count, v);
    }
    for (size_t e = 0; e < nn; e++) {
        double s = v[e] + u[e];
        v[e] -= u[e];
        u[e] = s;
    }
    int info = 0;
    dgetrf_(&n, &n, v, &n, ipiv, &info);
    dgetrs_("N", &n, &n, v, &n, ipiv, u, &n, &info, 1);
    for (int s = 0; s < sq; s++) {
        gemm(n, u, u, t);
        double *x = u;
        u = t;
        t = x;
    }
    memcpy(a, u, sizeof *a * nn);
}

/* The peer: per matrix, column-major copies, LAPACK, every result copied
 * back row-major: the checked one into out, the others into rest.
 * Cholesky, solve and inverse need no transposition of the matrix, as
 * weft does without one: a row-major lower triangle is LAPACK's column-major upper
 * one (dpotrf "U"), and a row-major matrix read column-major is its
 * transpose t, so a x = b is t^T x = b (dgetrf of t, dgetrs "T"), and t^-1 read
 * row-major is a^-1 (dgetri). */
static void peer(const workload *w, peer_ws *ws, double *out, double *rest)
{
    int n = w->n, k = w->k, cols = cols_of(w), info = 0;
    size_t nn = (size_t)n * n, nk = (size_t)n * k, mat = (size_t)n * cols;
    for (int64_t q = 0; q < w->batch; q++) {
        if (w->op == CHOL || w->op == SOLVE || w->op == INV || w->op == EXPM)
            memcpy(ws->ca, w->a + q * mat, sizeof *ws->ca * nn);
        else
            to_cols(w->a + q * mat, n, cols, ws->ca);
        switch (w->op) {
        case CHOL:
            dpotrf_("U", &n, ws->ca, &n, &info, 1);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    out[q * nn + (size_t)i * n + j] = j <= i ? ws->ca[(size_t)i * n + j] : 0;
            break;
        case SOLVE:
            to_cols(w->b + q * nk, n, k, ws->cb);
            dgetrf_(&n, &n, ws->ca, &n, ws->ipiv, &info);
            dgetrs_("T", &n, &k, ws->ca, &n, ws->ipiv, ws->cb, &n, &info, 1);
            to_rows(ws->cb, n, n, k, out + q * nk);
            break;
        case EXPM:   /* expm(t) read row-major is expm(a) */
            peer_expm(n, ws->ca, ws->work, ws->ipiv);
            memcpy(out + q * nn, ws->ca, sizeof *out * nn);
            break;
        case INV:   /* t^-1 read row-major is a^-1 */
            dgetrf_(&n, &n, ws->ca, &n, ws->ipiv, &info);
            dgetri_(&n, ws->ca, &n, ws->ipiv, ws->work, &ws->lwork, &info);
            memcpy(out + q * nn, ws->ca, sizeof *out * nn);
            break;
        case EIGH:
            dsyevd_("V", "L", &n, ws->ca, &n, out + q * n, ws->work, &ws->lwork, ws->iwork,
                    &ws->liwork, &info, 1, 1);
            to_rows(ws->ca, n, n, n, rest + q * nn);
            break;
        case SVD: {
            double *s = out + q * k, *u = rest + q * ((size_t)n * k + (size_t)k * k);
            dgesdd_("S", &n, &k, ws->ca, &n, s, ws->cb, &n, ws->cc, &k, ws->work, &ws->lwork,
                    ws->iwork, &info, 1);
            to_rows(ws->cb, n, n, k, u);
            for (int i = 0; i < k; i++)   /* v = vt^T */
                for (int j = 0; j < k; j++)
                    u[nk + (size_t)i * k + j] = ws->cc[j + (size_t)i * k];
            break;
        }
        case QR:
            dgeqrf_(&n, &k, ws->ca, &n, ws->w, ws->work, &ws->lwork, &info);
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++)
                    out[q * (size_t)k * k + (size_t)i * k + j] = j >= i ? ws->ca[i + (size_t)j * n]
                                                                        : 0;
            dorgqr_(&n, &k, &k, ws->ca, &n, ws->w, ws->work, &ws->lwork, &info);
            to_rows(ws->ca, n, n, k, rest + q * nk);
            break;
        }
    }
}

static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const workload *w = user;
    switch (w->op) {
    case SOLVE: outs[0] = weft_matrix_solve(cx, args[0], args[1], false); break;
    case CHOL: outs[0] = weft_cholesky(cx, args[0]); break;
    case INV: outs[0] = weft_matrix_inverse(cx, args[0]); break;
    case EXPM: outs[0] = weft_matrix_exponential(cx, args[0]); break;
    case EIGH: return weft_eigh(cx, args[0], outs);
    case SVD: return weft_svd(cx, args[0], false, true, outs);
    case QR: return weft_qr(cx, args[0], false, outs);
    }
    return weft_ctx_status(cx);
}

static weft_function *make_fn(workload *w)
{
    char sa[64], sb[64];
    snprintf(sa, sizeof sa, "f64[%lld,%d,%d]", (long long)w->batch, w->n, cols_of(w));
    snprintf(sb, sizeof sb, "f64[%lld,%d,%d]", (long long)w->batch, w->n, w->k);
    weft_spec sig[2];
    if (weft_spec_parse(sa, &sig[0]) || weft_spec_parse(sb, &sig[1]))
        bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = w->name;
    d.body = body;
    d.user = w;
    d.n_args = w->op == SOLVE ? 2 : 1;
    d.n_outs = (uint32_t)n_outs_of(w);
    d.input_signature = sig;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

/* One call; its outputs into outs (released by the caller). */
static void w_call(const workload *w, weft_function *f, weft_tensor **outs)
{
    weft_arg a[2] = { weft_arg_tensor(w->ta), weft_arg_tensor(w->tb) };
    int err = weft_function_call(f, a, w->op == SOLVE ? 2 : 1, outs, n_outs_of(w));
    if (err)
        bench_die("weft_function_call", err);
}

static void w_call_release(const workload *w, weft_function *f)
{
    weft_tensor *outs[3] = { NULL, NULL, NULL };
    w_call(w, f, outs);
    for (size_t o = 0; o < 3; o++)
        weft_tensor_release(outs[o]);
}

typedef struct result {
    double peer[N_PEERS], weft, vs_best;
} result;

static void measure(workload *w, int reps, unsigned workers, result *res)
{
    size_t all = (size_t)w->n * (size_t)(w->n + w->k + 2) * (size_t)w->batch;
    double *out = malloc(sizeof *out * all), *rest = malloc(sizeof *rest * all);
    peer_ws ws;
    ws_init(w, &ws);
    weft_function *f = make_fn(w);
    /* Check against the 1-thread peer. */
    openblas_set_num_threads(1);
    peer(w, &ws, out, rest);
    weft_tensor *outs[3] = { NULL, NULL, NULL };
    w_call(w, f, outs);
    const weft_tensor *got = outs[checked_out(w)];
    const double *g = weft_tensor_data(got);
    uint64_t bad = 0;
    for (size_t i = 0; i < (size_t)weft_tensor_numel(got); i++)
        bad += !(fabs(g[i] - out[i]) <= 1e-9 * (1 + fabs(out[i])));
    for (size_t o = 0; o < 3; o++)
        weft_tensor_release(outs[o]);
    char what[128];
    snprintf(what, sizeof what, "%s on %u workers: elements differing from LAPACK", w->name,
             workers);
    if (bad)
        bench_fail(what, bad, 0);
    bool many = w->batch == 1;   /* a lone matrix: LAPACK's own threads too */
    double t_warm = bench_now();
    do {
        peer(w, &ws, out, rest);
        w_call_release(w, f);
    } while (bench_now() - t_warm < BENCH_WARMUP_NS * 1e-9);
    double tp[N_PEERS][BENCH_MAX_REPS], tw[BENCH_MAX_REPS], rr[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double best = INFINITY;
        for (int p = 0; p < (many ? N_PEERS : 1); p++) {
            openblas_set_num_threads(p == PEER_1 ? 1 : (int)workers);
            double t0 = bench_now();
            peer(w, &ws, out, rest);
            tp[p][r] = bench_now() - t0;
            best = tp[p][r] < best ? tp[p][r] : best;
            if (p == PEER_N && workers > 1)
                bench_settle(300);
        }
        openblas_set_num_threads(1);
        double t0 = bench_now();
        w_call_release(w, f);
        tw[r] = bench_now() - t0;
        rr[r] = tw[r] / best;
    }
    for (int p = 0; p < N_PEERS; p++)
        res->peer[p] = p == PEER_1 || many ? bench_median(tp[p], reps) : 0;
    res->weft = bench_median(tw, reps);
    res->vs_best = bench_median(rr, reps);
    weft_function_destroy(&f);
    ws_free(&ws);
    free(out);
    free(rest);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(7);
    static result res[N_WORK][BENCH_MAX_WORKERS];
    bool ran[N_WORK] = { false };

    printf("linear algebra: weft call against LAPACK (OpenBLAS) per matrix, medians over %d "
           "repetitions (weft/best: median of per-repetition ratios, below 1 is weft "
           "faster)\n", reps);
    for (size_t i = 0; i < N_WORK; i++) {
        workload *w = &workloads[i];
        if (!bench_selected("BENCH_LINALG_ONLY", w->name))
            continue;
        ran[i] = true;
        setup(w);
        for (int k = 0; k < nw; k++) {
            rt = bench_runtime(workers[k]);
            measure(w, reps, workers[k], &res[i][k]);
            weft_runtime_destroy(&rt);
            bench_settle(50);
        }
        teardown(w);
        printf("\n%s\n  %-8s %16s %16s %10s %10s\n", w->title, "workers", "LAPACK 1t",
               "LAPACK Nt", "weft ms", "weft/best");
        for (int k = 0; k < nw; k++) {
            printf("  %-8u %13.2f ms", workers[k], res[i][k].peer[PEER_1] * 1e3);
            if (res[i][k].peer[PEER_N] > 0)
                printf(" %13.2f ms", res[i][k].peer[PEER_N] * 1e3);
            else
                printf(" %16s", "-");
            printf(" %10.2f %9.2fx\n", res[i][k].weft * 1e3, res[i][k].vs_best);
        }
        fflush(stdout);
    }
    printf("\n");
    for (int k = 0; k < nw; k++) {
        printf("summary: %u workers: weft/best", workers[k]);
        for (size_t i = 0; i < N_WORK; i++)
            if (ran[i])
                printf(" %s %.2fx", workloads[i].name, res[i][k].vs_best);
        printf("\n");
    }
    return bench_exit_status();
}
