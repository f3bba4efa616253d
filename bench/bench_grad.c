/* A training step through weft_gradients against the C a programmer
 * writes by hand: a two-layer perceptron (x f32[512,64] -> 128 relu units
 * -> 10 classes), softmax cross entropy against one-hot labels, its mean,
 * and one step of gradient descent on the four parameters.
 *
 *   weft traced   one weft_function (input signature, batch dim unknown)
 *                 whose body calls weft_gradients and updates the
 *                 parameters: forward, backward and update compiled
 *                 together;
 *   weft eager    the same body run eagerly (WEFT_RUN_EAGERLY): the body
 *                 is traced into a tape and replayed on every call;
 *   C + sgemm     the derivative written out by hand: five cblas_sgemm
 *                 calls (two forward, three backward) and loops for the
 *                 biases, relu, softmax and update, into buffers allocated
 *                 once; on 1 OpenBLAS thread and on as many as weft has
 *                 workers.
 *
 * Before timing, weft's new parameters and loss are compared with C's
 * (within 1e-4 relative).  Each repetition times ten steps in a row of C
 * on 1 thread, of C on the workers' count, then of weft eager and traced,
 * each after one untimed step (which wakes the threads), OpenBLAS's
 * threads given 300 ms to sleep before weft's; the table
 * gives medians per step and the median of per-repetition ratios weft /
 * the faster C.
 *
 * Usage: bench_grad [workers...] ($BENCH_REPS, default 21). */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

extern void openblas_set_num_threads(int n);

enum { B = 512, D = 64, H = 128, K = 10 };
/* Steps timed back to back per repetition, as a training loop runs them. */
enum { STEPS = 10 };
static const float rate = 0.1f;

/* ---- weft --------------------------------------------------------------- */

/* params w1, b1, w2, b2, then x, labels -> mean cross entropy */
static int loss_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *h = weft_relu(cx, weft_add(cx, weft_matmul(cx, a[4], a[0]), a[1]));
    weft_value *logits = weft_add(cx, weft_matmul(cx, h, a[2]), a[3]);
    weft_value *ce = weft_softmax_cross_entropy_with_logits(cx, a[5], logits, -1);
    outs[0] = weft_mean(cx, ce, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int step_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *grads[4];
    if (weft_gradients(cx, loss_body, NULL, a, 6, 4, &outs[4], grads) < 0)
        return weft_ctx_status(cx);
    for (int i = 0; i < 4; i++)
        outs[i] = weft_sub(cx, a[i], weft_mul(cx, bench_f32_scalar(cx, rate), grads[i]));
    return weft_ctx_status(cx);
}

static weft_function *step_function(weft_runtime *rt, unsigned flags)
{
    static const char *const sigs[6] = { "f32[64,128]", "f32[128]", "f32[128,10]", "f32[10]",
                                         "f32[?,64]", "f32[?,10]" };
    weft_spec sig[6];
    for (int i = 0; i < 6; i++)
        if (weft_spec_parse(sigs[i], &sig[i]) < 0)
            bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d = { .name = "train_step", .body = step_body, .n_args = 6, .n_outs = 5,
                             .input_signature = sig, .flags = flags };
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err < 0)
        bench_die("weft_function_create", err);
    return f;
}

/* ---- C by hand ---------------------------------------------------------- */

typedef struct net {
    float *w1, *b1, *w2, *b2;     /* parameters */
    float *x, *labels;
    float *z1, *z2, *dz1, *dh;    /* scratch */
    float *out[4], loss;          /* new parameters */
} net;

static void c_step(net *n)
{
    /* Forward: z1 = x w1 + b1, h = relu(z1) kept in z1's place as dz1's mask. */
    for (int i = 0; i < B; i++)
        memcpy(n->z1 + (size_t)i * H, n->b1, H * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, D, 1.0f, n->x, D, n->w1, H,
                1.0f, n->z1, H);
    for (size_t i = 0; i < (size_t)B * H; i++)
        n->z1[i] = n->z1[i] > 0 ? n->z1[i] : 0;
    for (int i = 0; i < B; i++)
        memcpy(n->z2 + (size_t)i * K, n->b2, K * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, K, H, 1.0f, n->z1, H, n->w2, K,
                1.0f, n->z2, K);
    /* Softmax and cross entropy; z2 becomes dz2 = (p - labels) / B. */
    double loss = 0;
    for (int i = 0; i < B; i++) {
        float *z = n->z2 + (size_t)i * K;
        const float *l = n->labels + (size_t)i * K;
        float m = z[0], s = 0;
        for (int k = 1; k < K; k++)
            m = z[k] > m ? z[k] : m;
        for (int k = 0; k < K; k++)
            s += expf(z[k] - m);
        float lse = m + logf(s);
        for (int k = 0; k < K; k++) {
            loss -= l[k] * (z[k] - lse);
            z[k] = (expf(z[k] - lse) - l[k]) / B;
        }
    }
    n->loss = (float)(loss / B);
    /* Backward: dw2 = h^T dz2, db2 = sum dz2, dh = dz2 w2^T, dz1 = dh (h > 0),
     * dw1 = x^T dz1, db1 = sum dz1; each parameter minus rate times its
     * gradient (the products write the gradient's -rate multiple onto a
     * copy of the parameter). */
    memcpy(n->out[2], n->w2, H * K * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, K, B, -rate, n->z1, H, n->z2, K,
                1.0f, n->out[2], K);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, H, K, 1.0f, n->z2, K, n->w2, K,
                0.0f, n->dh, H);
    for (size_t i = 0; i < (size_t)B * H; i++)
        n->dz1[i] = n->z1[i] > 0 ? n->dh[i] : 0;
    memcpy(n->out[0], n->w1, D * H * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, H, B, -rate, n->x, D, n->dz1, H,
                1.0f, n->out[0], H);
    for (int j = 0; j < H; j++)
        n->out[1][j] = 0;
    for (int k = 0; k < K; k++)
        n->out[3][k] = 0;
    for (int i = 0; i < B; i++) {
        for (int j = 0; j < H; j++)
            n->out[1][j] += n->dz1[(size_t)i * H + j];
        for (int k = 0; k < K; k++)
            n->out[3][k] += n->z2[(size_t)i * K + k];
    }
    for (int j = 0; j < H; j++)
        n->out[1][j] = n->b1[j] - rate * n->out[1][j];
    for (int k = 0; k < K; k++)
        n->out[3][k] = n->b2[k] - rate * n->out[3][k];
}

/* ---- Setup, check and timing -------------------------------------------- */

static float *filled(size_t count, unsigned seed, float scale)
{
    float *p = malloc(count * sizeof *p);
    if (!p)
        bench_die("malloc", WEFT_ENOMEM);
    uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < count; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        p[i] = scale * ((float)(s >> 40) / (float)(1 << 24) - 0.5f);
    }
    return p;
}

static weft_tensor *tensor_of(const float *v, int rank, int64_t d0, int64_t d1)
{
    int64_t dims[2] = { d0, d1 };
    weft_tensor *t = NULL;
    int err = weft_tensor_create(WEFT_F32, rank, dims, v, &t);
    if (err < 0)
        bench_die("weft_tensor_create", err);
    return t;
}

static void release_all(weft_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        weft_tensor_release(t[i]);
}

static void weft_step(weft_function *f, weft_tensor *const *in, weft_tensor **out)
{
    bench_call(f, in, 6, out, 5);
}

static void check(const char *what, net *n, weft_tensor *const *out)
{
    static const size_t counts[4] = { D * H, H, H * K, K };
    uint64_t bad = 0;
    for (int p = 0; p < 4; p++) {
        const float *w = weft_tensor_data(out[p]);
        for (size_t i = 0; i < counts[p]; i++)
            bad += fabsf(w[i] - n->out[p][i]) > 1e-4f * (1 + fabsf(n->out[p][i]));
    }
    float loss = *(const float *)weft_tensor_data(out[4]);
    bad += fabsf(loss - n->loss) > 1e-4f * (1 + fabsf(n->loss));
    if (bad)
        bench_fail(what, bad, 0);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(21);
    net n = { 0 };
    n.w1 = filled(D * H, 1, 0.3f), n.b1 = filled(H, 2, 0.1f);
    n.w2 = filled(H * K, 3, 0.3f), n.b2 = filled(K, 4, 0.1f);
    n.x = filled((size_t)B * D, 5, 2.0f);
    n.labels = calloc((size_t)B * K, sizeof(float));
    n.z1 = malloc((size_t)B * H * sizeof(float)), n.z2 = malloc((size_t)B * K * sizeof(float));
    n.dz1 = malloc((size_t)B * H * sizeof(float)), n.dh = malloc((size_t)B * H * sizeof(float));
    static const size_t counts[4] = { D * H, H, H * K, K };
    for (int p = 0; p < 4; p++)
        n.out[p] = malloc(counts[p] * sizeof(float));
    if (!n.labels || !n.z1 || !n.z2 || !n.dz1 || !n.dh || !n.out[0] || !n.out[1] || !n.out[2] ||
        !n.out[3])
        bench_die("malloc", WEFT_ENOMEM);
    for (int i = 0; i < B; i++)
        n.labels[(size_t)i * K + (size_t)(i * 7 % K)] = 1;
    weft_tensor *in[6] = { tensor_of(n.w1, 2, D, H), tensor_of(n.b1, 1, H, 0),
                           tensor_of(n.w2, 2, H, K), tensor_of(n.b2, 1, K, 0),
                           tensor_of(n.x, 2, B, D), tensor_of(n.labels, 2, B, K) };
    printf("training step of a perceptron f32[%d,%d] -> %d relu -> %d, softmax cross entropy, "
           "medians over %d repetitions (weft/C: median of per-repetition ratios against the "
           "faster C, below 1 is weft faster)\n", B, D, H, K, reps);
    printf("%-8s %12s %12s %12s %12s %10s %10s %12s\n", "workers", "C 1 thr ms", "C n thr ms",
           "traced ms", "eager ms", "traced/C", "eager/C", "eager/traced");
    for (int k = 0; k < nw; k++) {
        weft_runtime *rt = bench_runtime(workers[k]);
        weft_function *traced = step_function(rt, 0), *eager = step_function(rt, WEFT_RUN_EAGERLY);
        weft_tensor *out[5];
        openblas_set_num_threads(1);
        c_step(&n);
        weft_step(traced, in, out);
        check("traced step against C", &n, out);
        release_all(out, 5);
        weft_step(eager, in, out);
        check("eager step against C", &n, out);
        release_all(out, 5);
        bench_warm_native(traced, in, 6, 5);
        weft_function_stats st;
        weft_function_get_stats(traced, &st);
        double t1[BENCH_MAX_REPS], tn[BENCH_MAX_REPS], tt[BENCH_MAX_REPS], te[BENCH_MAX_REPS];
        double rt_[BENCH_MAX_REPS], re[BENCH_MAX_REPS], ret[BENCH_MAX_REPS];
        for (int r = 0; r < reps; r++) {
            openblas_set_num_threads(1);
            c_step(&n);
            double t0 = bench_now();
            for (int i = 0; i < STEPS; i++)
                c_step(&n);
            t1[r] = (bench_now() - t0) / STEPS;
            openblas_set_num_threads((int)workers[k]);
            c_step(&n);
            t0 = bench_now();
            for (int i = 0; i < STEPS; i++)
                c_step(&n);
            tn[r] = (bench_now() - t0) / STEPS;
            openblas_set_num_threads(1);
            bench_settle(workers[k] > 1 ? 300 : 0);
            weft_step(eager, in, out);
            release_all(out, 5);
            t0 = bench_now();
            for (int i = 0; i < STEPS; i++) {
                weft_step(eager, in, out);
                release_all(out, 5);
            }
            te[r] = (bench_now() - t0) / STEPS;
            weft_step(traced, in, out);
            release_all(out, 5);
            t0 = bench_now();
            for (int i = 0; i < STEPS; i++) {
                weft_step(traced, in, out);
                release_all(out, 5);
            }
            tt[r] = (bench_now() - t0) / STEPS;
            double best = t1[r] < tn[r] ? t1[r] : tn[r];
            rt_[r] = tt[r] / best, re[r] = te[r] / best, ret[r] = te[r] / tt[r];
        }
        printf("(%u workers: traced step has %llu native groups)\n", workers[k],
               (unsigned long long)st.native_groups);
        printf("%-8u %12.3f %12.3f %12.3f %12.3f %9.2fx %9.2fx %11.2fx\n", workers[k],
               1e3 * bench_median(t1, reps), 1e3 * bench_median(tn, reps),
               1e3 * bench_median(tt, reps), 1e3 * bench_median(te, reps),
               bench_median(rt_, reps), bench_median(re, reps), bench_median(ret, reps));
        weft_function_destroy(&traced);
        weft_function_destroy(&eager);
        weft_runtime_destroy(&rt);
    }
    release_all(in, 6);
    float *all[] = { n.w1, n.b1, n.w2, n.b2, n.x, n.labels, n.z1, n.z2, n.dz1, n.dh,
                     n.out[0], n.out[1], n.out[2], n.out[3] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    return bench_exit_status();
}
