/* Convolution and pooling: weft_conv2d, weft_max_pool2d, weft_avg_pool2d
 * and weft_depthwise_conv2d as traced functions against what a C
 * programmer would write instead, in one process, f32 NHWC (layers of a
 * ResNet-50 and a MobileNet):
 *
 *  (a) conv3x3   [4,56,56,64] * [3,3,64,64], stride 1, SAME;
 *  (b) stem      [8,112,112,3] * [7,7,3,64], stride 2, SAME;
 *  (c) conv1x1   [4,56,56,256] * [1,1,256,64], stride 1 (no patches);
 *  (d) max_pool  [8,112,112,64], 3x3, stride 2, SAME;
 *  (e) avg_pool  [8,56,56,64], 2x2, stride 2, VALID;
 *  (f) depthwise [8,112,112,32] * [3,3,32,1], stride 1, SAME (MobileNet);
 *  (g) conv3d    [2,8,28,28,16] * [3,3,3,16,32], stride 1, SAME (a C3D
 *      layer; weft_conv3d is one conv2d per depth tap);
 *  (h) frac_pool [8,112,112,64], fractional max pool, ratio 1.44 x 1.44
 *      (random regions, not overlapping; the C loop pools over the
 *      regions weft drew, weft's call draws them too).
 *
 * Contenders (bench/conv_cloop.c, -O3): the direct loop ("C loop", the
 * inner loop over output channels); for the convolutions also im2col and
 * one cblas_sgemm on 1 OpenBLAS thread and on as many as weft has
 * workers.  The C side writes into buffers allocated once (no page
 * faults); weft's results are released each repetition.  Each repetition
 * times every contender and then weft; the table gives the medians and the
 * medians of the per-repetition ratios weft / C loop and weft / the best
 * contender of that repetition (below 1: weft is faster).  Before timing,
 * weft's result is compared with the C loop's (within 1e-3 relative for
 * the convolutions, whose sums run in another order).
 *
 * Usage: bench_conv [workers...] ($BENCH_REPS, default 7;
 * BENCH_CONV_ONLY="conv3x3 max_pool" runs a subset). */
#include "bench.h"
#include "conv_cloop.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

enum kind { CONV, DEPTHWISE, MAX_POOL, AVG_POOL, CONV3D, FRAC_POOL };
#define FRAC_RATIO 1.44
enum { C_LOOP, BLAS_1, BLAS_N, N_PEERS };
static const char *const peer_names[N_PEERS] = { "C loop", "im2col+sgemm 1t",
                                                 "im2col+sgemm Nt" };

typedef struct workload {
    const char *name, *title;
    enum kind kind;
    conv_shape s;
    bool same;
    float *x, *f, *y, *patches;
    int64_t *rows, *cols;   /* FRAC_POOL: the regions of weft's first call */
    weft_tensor *tx, *tf;
} workload;

/* A convolution's or a pool's shape: input [n, h, w, c], window kh x kw
 * (a convolution's filters [kh, kw, c, o]), strides sh, sw. */
#define SHAPE(N, H, W, C, KH, KW, O, S) \
    { .n = N, .h = H, .w = W, .c = C, .kh = KH, .kw = KW, .o = O, .sh = S, .sw = S }

static workload workloads[] = {
    { .name = "conv3x3", .title = "(a) conv2d [4,56,56,64] * [3,3,64,64], stride 1, SAME",
      .kind = CONV, .same = true, .s = SHAPE(4, 56, 56, 64, 3, 3, 64, 1) },
    { .name = "stem", .title = "(b) conv2d [8,112,112,3] * [7,7,3,64], stride 2, SAME",
      .kind = CONV, .same = true, .s = SHAPE(8, 112, 112, 3, 7, 7, 64, 2) },
    { .name = "conv1x1", .title = "(c) conv2d [4,56,56,256] * [1,1,256,64], stride 1",
      .kind = CONV, .same = false, .s = SHAPE(4, 56, 56, 256, 1, 1, 64, 1) },
    { .name = "max_pool", .title = "(d) max_pool2d [8,112,112,64], 3x3, stride 2, SAME",
      .kind = MAX_POOL, .same = true, .s = SHAPE(8, 112, 112, 64, 3, 3, 0, 2) },
    { .name = "avg_pool", .title = "(e) avg_pool2d [8,56,56,64], 2x2, stride 2, VALID",
      .kind = AVG_POOL, .same = false, .s = SHAPE(8, 56, 56, 64, 2, 2, 0, 2) },
    { .name = "depthwise", .title = "(f) depthwise_conv2d [8,112,112,32] * [3,3,32,1], SAME",
      .kind = DEPTHWISE, .same = true, .s = SHAPE(8, 112, 112, 32, 3, 3, 1, 1) },
    { .name = "conv3d", .title = "(g) conv3d [2,8,28,28,16] * [3,3,3,16,32], SAME",
      .kind = CONV3D, .same = true,
      .s = { .n = 2, .d = 8, .h = 28, .w = 28, .c = 16, .kd = 3, .kh = 3, .kw = 3, .o = 32,
             .sd = 1, .sh = 1, .sw = 1 } },
    { .name = "frac_pool", .title = "(h) fractional_max_pool [8,112,112,64], ratio 1.44 x 1.44",
      .kind = FRAC_POOL, .same = false, .s = SHAPE(8, 112, 112, 64, 0, 0, 0, 1) },
};
#define N_WORK (sizeof workloads / sizeof workloads[0])

static weft_runtime *rt;

/* TensorFlow's placement along one dim: the output size and the padding
 * before the first window. */
static int64_t place(bool same, int64_t in, int64_t k, int64_t stride, int64_t *before)
{
    int64_t out = same ? (in + stride - 1) / stride : (in - k) / stride + 1;
    int64_t total = (out - 1) * stride + k - in;
    *before = same && total > 0 ? total / 2 : 0;
    return out;
}

static float *uniform(int64_t n, uint64_t seed)
{
    float *v = malloc(sizeof(float) * (size_t)n);
    if (!v)
        bench_die("malloc", WEFT_ENOMEM);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (float)((double)(seed >> 40) / (double)(1ull << 24) * 2 - 1);
    }
    return v;
}

static bool has_filters(const workload *w)
{
    return w->kind == CONV || w->kind == DEPTHWISE || w->kind == CONV3D;
}

/* A 2-D workload's depth is 1 (d 0 in its shape). */
static int64_t depth(const conv_shape *s)
{
    return s->d ? s->d : 1;
}

static void setup(workload *w)
{
    conv_shape *s = &w->s;
    s->oh = place(w->same, s->h, s->kh, s->sh, &s->pt);
    s->ow = place(w->same, s->w, s->kw, s->sw, &s->pl);
    if (w->kind == FRAC_POOL) {
        s->oh = (int64_t)floor((double)s->h / FRAC_RATIO);
        s->ow = (int64_t)floor((double)s->w / FRAC_RATIO);
    }
    bool d3 = w->kind == CONV3D;
    if (d3)
        s->od = place(w->same, s->d, s->kd, s->sd, &s->pd);
    int64_t out_c = w->kind == CONV || d3 ? s->o : s->c, out_d = d3 ? s->od : 1;
    w->x = uniform(s->n * depth(s) * s->h * s->w * s->c, 1);
    w->y = malloc(sizeof(float) * (size_t)(s->n * out_d * s->oh * s->ow * out_c));
    const int64_t xd3[5] = { s->n, s->d, s->h, s->w, s->c }, xd2[4] = { s->n, s->h, s->w, s->c };
    if (weft_tensor_create(WEFT_F32, d3 ? 5 : 4, d3 ? xd3 : xd2, w->x, &w->tx))
        bench_die("weft_tensor_create", WEFT_ENOMEM);
    if (has_filters(w)) {
        int64_t kd = d3 ? s->kd : 1;
        w->f = uniform(kd * s->kh * s->kw * s->c * s->o, 2);
        if (w->kind == CONV)
            w->patches = malloc(sizeof(float) *
                                (size_t)(s->n * s->oh * s->ow * s->kh * s->kw * s->c));
        const int64_t fd3[5] = { s->kd, s->kh, s->kw, s->c, s->o },
                      fd2[4] = { s->kh, s->kw, s->c, s->o };
        if (weft_tensor_create(WEFT_F32, d3 ? 5 : 4, d3 ? fd3 : fd2, w->f, &w->tf))
            bench_die("weft_tensor_create", WEFT_ENOMEM);
    }
    if (!w->y || (w->kind == CONV && !w->patches))
        bench_die("malloc", WEFT_ENOMEM);
}

static void teardown(workload *w)
{
    weft_tensor_release(w->tx);
    weft_tensor_release(w->tf);
    free(w->x);
    free(w->f);
    free(w->y);
    free(w->patches);
    free(w->rows);
    free(w->cols);
}

static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const workload *w = user;
    const int64_t window[2] = { w->s.kh, w->s.kw }, strides[2] = { w->s.sh, w->s.sw };
    weft_padding p = w->same ? WEFT_PADDING_SAME : WEFT_PADDING_VALID;
    switch (w->kind) {
    case CONV: outs[0] = weft_conv2d(cx, args[0], args[1], strides, p, NULL); break;
    case DEPTHWISE:
        outs[0] = weft_depthwise_conv2d(cx, args[0], args[1], strides, p, NULL);
        break;
    case MAX_POOL: outs[0] = weft_max_pool2d(cx, args[0], window, strides, p); break;
    case AVG_POOL: outs[0] = weft_avg_pool2d(cx, args[0], window, strides, p); break;
    case CONV3D: {
        const int64_t st3[3] = { w->s.sd, w->s.sh, w->s.sw };
        outs[0] = weft_conv3d(cx, args[0], args[1], st3, p, NULL);
        break;
    }
    case FRAC_POOL: {
        const double ratio[4] = { 1, FRAC_RATIO, FRAC_RATIO, 1 };
        return weft_fractional_max_pool(cx, args[0], ratio, false, false,
                                        weft_const(cx, WEFT_I64, 7), outs);
    }
    }
    return weft_ctx_status(cx);
}

static weft_function *make_fn(workload *w)
{
    char sig_text[2][64];
    weft_spec sig[2];
    if (w->kind == CONV3D) {
        snprintf(sig_text[0], sizeof sig_text[0], "f32[%lld,%lld,%lld,%lld,%lld]",
                 (long long)w->s.n, (long long)w->s.d, (long long)w->s.h, (long long)w->s.w,
                 (long long)w->s.c);
        snprintf(sig_text[1], sizeof sig_text[1], "f32[%lld,%lld,%lld,%lld,%lld]",
                 (long long)w->s.kd, (long long)w->s.kh, (long long)w->s.kw, (long long)w->s.c,
                 (long long)w->s.o);
    } else {
        snprintf(sig_text[0], sizeof sig_text[0], "f32[%lld,%lld,%lld,%lld]", (long long)w->s.n,
                 (long long)w->s.h, (long long)w->s.w, (long long)w->s.c);
        snprintf(sig_text[1], sizeof sig_text[1], "f32[%lld,%lld,%lld,%lld]", (long long)w->s.kh,
                 (long long)w->s.kw, (long long)w->s.c, (long long)w->s.o);
    }
    size_t n_args = has_filters(w) ? 2 : 1;
    for (size_t k = 0; k < n_args; k++)
        if (weft_spec_parse(sig_text[k], &sig[k]) != 0)
            bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = w->name;
    d.body = body;
    d.user = w;
    d.n_args = n_args;
    d.n_outs = w->kind == FRAC_POOL ? 3 : 1;
    d.input_signature = sig;
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err)
        bench_die("weft_function_create", err);
    return f;
}

/* A copy of a pooling sequence's n entries. */
static int64_t *sequence_copy(const weft_tensor *t, int64_t n)
{
    int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
    if (!v || weft_tensor_numel(t) != n)
        bench_die("sequence_copy", WEFT_ENOMEM);
    memcpy(v, weft_tensor_data(t), sizeof(int64_t) * (size_t)n);
    return v;
}

/* weft's result; a fractional pool's first call keeps its regions. */
static weft_tensor *w_call(workload *w, weft_function *f)
{
    weft_arg a[2] = { weft_arg_tensor(w->tx), weft_arg_tensor(w->tf) };
    weft_tensor *out[3] = { NULL, NULL, NULL };
    int err = weft_function_call(f, a, has_filters(w) ? 2 : 1, out,
                                 w->kind == FRAC_POOL ? 3 : 1);
    if (err)
        bench_die("weft_function_call", err);
    if (w->kind == FRAC_POOL && !w->rows) {
        w->rows = sequence_copy(out[1], w->s.oh + 1);
        w->cols = sequence_copy(out[2], w->s.ow + 1);
    }
    weft_tensor_release(out[1]);
    weft_tensor_release(out[2]);
    return out[0];
}

static void c_run(workload *w, int peer, unsigned threads)
{
    if (peer == C_LOOP) {
        if (w->kind == CONV)
            cloop_conv_f32(&w->s, w->x, w->f, w->y);
        else if (w->kind == CONV3D)
            cloop_conv3d_f32(&w->s, w->x, w->f, w->y);
        else if (w->kind == DEPTHWISE)
            cloop_depthwise_f32(&w->s, w->x, w->f, w->y);
        else if (w->kind == FRAC_POOL)
            cloop_fractional_max_pool_f32(&w->s, w->rows, w->cols, w->x, w->y);
        else
            cloop_pool_f32(&w->s, w->kind == AVG_POOL, w->x, w->y);
    } else {
        openblas_set_num_threads(peer == BLAS_1 ? 1 : (int)threads);
        cloop_conv_im2col_f32(&w->s, w->x, w->f, w->y, w->patches);
    }
    bench_sink += (uint64_t)(w->y[0] > 0);
}

/* weft's result against the C loop's. */
static void check(workload *w, weft_function *f, unsigned workers)
{
    weft_tensor *out = w_call(w, f);
    c_run(w, C_LOOP, 1);
    const float *got = weft_tensor_data(out);
    int64_t n = weft_tensor_numel(out), bad = 0;
    double tol = w->kind == MAX_POOL || w->kind == FRAC_POOL ? 0 : 1e-3;
    for (int64_t i = 0; i < n; i++)
        bad += !(fabs((double)got[i] - w->y[i]) <= tol * (1 + fabs(w->y[i])));
    char what[128];
    snprintf(what, sizeof what, "%s on %u workers: elements differing from the C loop", w->name,
             workers);
    if (bad)
        bench_fail(what, (uint64_t)bad, 0);
    weft_tensor_release(out);
}

typedef struct result {
    double peer[N_PEERS], weft, vs_loop, vs_best;   /* medians */
} result;

static void measure(workload *w, int reps, unsigned workers, result *res)
{
    weft_function *f = make_fn(w);
    check(w, f, workers);
    int n_peers = w->kind == CONV ? (workers > 1 ? N_PEERS : BLAS_N) : 1;
    for (int p = 0; p < n_peers; p++)   /* warm-up */
        c_run(w, p, workers);
    weft_tensor_release(w_call(w, f));
    double tp[N_PEERS][BENCH_MAX_REPS], tw[BENCH_MAX_REPS], rl[BENCH_MAX_REPS],
        rb[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double best = INFINITY;
        for (int p = 0; p < n_peers; p++) {
            double t0 = bench_now();
            c_run(w, p, workers);
            tp[p][r] = bench_now() - t0;
            best = tp[p][r] < best ? tp[p][r] : best;
        }
        double t0 = bench_now();
        weft_tensor_release(w_call(w, f));
        tw[r] = bench_now() - t0;
        rl[r] = tw[r] / tp[C_LOOP][r];
        rb[r] = tw[r] / best;
    }
    for (int p = 0; p < N_PEERS; p++)
        res->peer[p] = p < n_peers ? bench_median(tp[p], reps) : 0;
    res->weft = bench_median(tw, reps);
    res->vs_loop = bench_median(rl, reps);
    res->vs_best = bench_median(rb, reps);
    openblas_set_num_threads(1);
    weft_function_destroy(&f);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(7);
    static result res[N_WORK][BENCH_MAX_WORKERS];
    bool ran[N_WORK] = { false };

    printf("convolution and pooling: weft call against C, medians over %d repetitions "
           "(ratios: medians of per-repetition ratios of times, below 1 is weft faster)\n", reps);
    for (size_t i = 0; i < N_WORK; i++) {
        workload *w = &workloads[i];
        if (!bench_selected("BENCH_CONV_ONLY", w->name))
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
        printf("\n%s\n  %-8s", w->title, "workers");
        for (int p = 0; p < (w->kind == CONV ? N_PEERS : 1); p++)
            printf(" %16s", peer_names[p]);
        printf(" %10s %12s %12s\n", "weft ms", "weft/C loop", "weft/best");
        for (int k = 0; k < nw; k++) {
            printf("  %-8u", workers[k]);
            for (int p = 0; p < (w->kind == CONV ? N_PEERS : 1); p++) {
                if (res[i][k].peer[p] > 0)
                    printf(" %13.2f ms", res[i][k].peer[p] * 1e3);
                else
                    printf(" %16s", "-");
            }
            printf(" %10.2f %11.2fx %11.2fx\n", res[i][k].weft * 1e3, res[i][k].vs_loop,
                   res[i][k].vs_best);
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
