/* Linear algebra: weft_matrix_solve and weft_cholesky as traced functions
 * against the C a programmer would write with LAPACK (OpenBLAS's), in one
 * process, f64:
 *
 *  (a) solve_batch  256 systems [32,32] x [32,4] (the batch spread over
 *                   weft's workers);
 *  (b) chol_batch   64 Cholesky factors of SPD [128,128];
 *  (c) solve_big    one system [1024,1024] x [1024,16].
 *
 * The C peer copies each matrix into column-major order, calls dgetrf and
 * dgetrs (or dpotrf and zeroes the upper triangle), and copies the result
 * back: the same work as weft's, on 1 OpenBLAS thread, and for the big
 * system also on as many threads as weft has workers.  Each repetition
 * times the peers and then weft; the table gives medians and the median of
 * the per-repetition ratios weft / the best peer (below 1: weft faster).
 * Before timing, weft's result is compared with the 1-thread peer's
 * (within 1e-9 relative).
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

typedef struct workload {
    const char *name, *title;
    bool chol;
    int64_t batch;
    int n, k;
    double *a, *b;          /* row-major inputs */
    weft_tensor *ta, *tb;
} workload;

static workload workloads[] = {
    { "solve_batch", "(a) solve of 256 x f64[32,32] by f64[32,4]", false, 256, 32, 4,
      NULL, NULL, NULL, NULL },
    { "chol_batch", "(b) cholesky of 64 x SPD f64[128,128]", true, 64, 128, 0,
      NULL, NULL, NULL, NULL },
    { "solve_big", "(c) solve of f64[1024,1024] by f64[1024,16]", false, 1, 1024, 16,
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

static void setup(workload *w)
{
    size_t nn = (size_t)w->n * w->n, nk = (size_t)w->n * w->k;
    w->a = malloc(sizeof *w->a * nn * (size_t)w->batch);
    w->b = malloc(sizeof *w->b * (nk ? nk : 1) * (size_t)w->batch);
    double *m = malloc(sizeof *m * nn);
    for (int64_t q = 0; q < w->batch; q++) {
        double *a = w->a + q * nn;
        for (size_t i = 0; i < nn; i++)
            m[i] = uniform();
        for (int i = 0; i < w->n; i++)
            for (int j = 0; j < w->n; j++) {
                if (!w->chol) {
                    a[i * w->n + j] = m[i * w->n + j] + (i == j ? w->n : 0);
                    continue;
                }
                double s = i == j ? w->n : 0;   /* m m^T + n I */
                for (int c = 0; c < w->n; c++)
                    s += m[i * w->n + c] * m[j * w->n + c];
                a[i * w->n + j] = s;
            }
        for (size_t i = 0; i < nk; i++)
            w->b[q * nk + i] = uniform();
    }
    free(m);
    int64_t da[3] = { w->batch, w->n, w->n }, db[3] = { w->batch, w->n, w->k };
    int err = weft_tensor_create(WEFT_F64, 3, da, w->a, &w->ta);
    if (!err && !w->chol)
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

/* The peer: per matrix, column-major copies, LAPACK, the result copied
 * back row-major into out. */
static void peer(const workload *w, double *out, double *ca, double *cb, int *ipiv)
{
    int n = w->n, k = w->k, info = 0;
    size_t nn = (size_t)n * n, nk = (size_t)n * k;
    for (int64_t q = 0; q < w->batch; q++) {
        const double *a = w->a + q * nn;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                ca[i + (size_t)j * n] = a[(size_t)i * n + j];
        if (w->chol) {
            dpotrf_("L", &n, ca, &n, &info, 1);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    out[q * nn + (size_t)i * n + j] = j <= i ? ca[i + (size_t)j * n] : 0;
            continue;
        }
        const double *b = w->b + q * nk;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < k; j++)
                cb[i + (size_t)j * n] = b[(size_t)i * k + j];
        dgetrf_(&n, &n, ca, &n, ipiv, &info);
        dgetrs_("N", &n, &k, ca, &n, ipiv, cb, &n, &info, 1);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < k; j++)
                out[q * nk + (size_t)i * k + j] = cb[i + (size_t)j * n];
    }
}

static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const workload *w = user;
    outs[0] = w->chol ? weft_cholesky(cx, args[0]) : weft_matrix_solve(cx, args[0], args[1], false);
    return weft_ctx_status(cx);
}

static weft_function *make_fn(workload *w)
{
    char sa[64], sb[64];
    snprintf(sa, sizeof sa, "f64[%lld,%d,%d]", (long long)w->batch, w->n, w->n);
    snprintf(sb, sizeof sb, "f64[%lld,%d,%d]", (long long)w->batch, w->n, w->k);
    weft_spec sig[2];
    if (weft_spec_parse(sa, &sig[0]) || weft_spec_parse(sb, &sig[1]))
        bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = w->name;
    d.body = body;
    d.user = w;
    d.n_args = w->chol ? 1 : 2;
    d.n_outs = 1;
    d.input_signature = sig;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

static weft_tensor *w_call(const workload *w, weft_function *f)
{
    weft_arg a[2] = { weft_arg_tensor(w->ta), weft_arg_tensor(w->tb) };
    weft_tensor *out = NULL;
    int err = weft_function_call(f, a, w->chol ? 1 : 2, &out, 1);
    if (err)
        bench_die("weft_function_call", err);
    return out;
}

typedef struct result {
    double peer[N_PEERS], weft, vs_best;
} result;

static void measure(workload *w, int reps, unsigned workers, result *res)
{
    size_t nn = (size_t)w->n * w->n, out_n = (w->chol ? nn : (size_t)w->n * w->k) * w->batch;
    double *out = malloc(sizeof *out * out_n), *ca = malloc(sizeof *ca * nn);
    double *cb = malloc(sizeof *cb * ((size_t)w->n * w->k + 1));
    int *ipiv = malloc(sizeof *ipiv * (size_t)w->n);
    weft_function *f = make_fn(w);
    /* Check against the 1-thread peer. */
    openblas_set_num_threads(1);
    peer(w, out, ca, cb, ipiv);
    weft_tensor *got = w_call(w, f);
    const double *g = weft_tensor_data(got);
    uint64_t bad = 0;
    for (size_t i = 0; i < out_n; i++)
        bad += !(fabs(g[i] - out[i]) <= 1e-9 * (1 + fabs(out[i])));
    weft_tensor_release(got);
    char what[128];
    snprintf(what, sizeof what, "%s on %u workers: elements differing from LAPACK", w->name,
             workers);
    if (bad)
        bench_fail(what, bad, 0);
    bool many = w->batch == 1;   /* the big system: LAPACK's own threads too */
    double t_warm = bench_now();
    do {
        peer(w, out, ca, cb, ipiv);
        weft_tensor_release(w_call(w, f));
    } while (bench_now() - t_warm < BENCH_WARMUP_NS * 1e-9);
    double tp[N_PEERS][BENCH_MAX_REPS], tw[BENCH_MAX_REPS], rr[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double best = INFINITY;
        for (int p = 0; p < (many ? N_PEERS : 1); p++) {
            openblas_set_num_threads(p == PEER_1 ? 1 : (int)workers);
            double t0 = bench_now();
            peer(w, out, ca, cb, ipiv);
            tp[p][r] = bench_now() - t0;
            best = tp[p][r] < best ? tp[p][r] : best;
        }
        openblas_set_num_threads(1);
        double t0 = bench_now();
        weft_tensor_release(w_call(w, f));
        tw[r] = bench_now() - t0;
        rr[r] = tw[r] / best;
    }
    for (int p = 0; p < N_PEERS; p++)
        res->peer[p] = p == PEER_1 || many ? bench_median(tp[p], reps) : 0;
    res->weft = bench_median(tw, reps);
    res->vs_best = bench_median(rr, reps);
    weft_function_destroy(&f);
    free(out);
    free(ca);
    free(cb);
    free(ipiv);
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
