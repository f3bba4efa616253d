/* Gradients through a map over rows unknown while tracing (one
 * map_gradient node, its rows spread over the workers) against the same
 * per-row derivative written by hand in C, on one thread.
 *
 * x f32[512,64], W f32[64,64]: each row gives y_r = tanh(x_r W) (W
 * captured by the map), and the loss is the sum of every y.
 *   weft  one weft_function, x's batch dim unknown in its signature,
 *         whose body calls weft_gradients of the loss for x and W: the
 *         map's function's vector-Jacobian product runs once a row;
 *   C     per row, z = x_r W, d = 1 - tanh(z)^2, dW += x_r^T d, dx_r = W d
 *         (plain loops at -O2, no BLAS: each row is a 64 x 64 product).
 *
 * Before timing, weft's two gradients are compared with C's (1e-4
 * relative), and the function is called until its fused groups run
 * native code.  Cells: medians per call over the repetitions, and the
 * median of per-repetition ratios weft / C.  The calling thread runs
 * work while it waits, so "1 worker" already computes on two threads.
 *
 * Usage: bench_grad_map [workers...] ($BENCH_REPS, default 21). */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

enum { B = 512, D = 64 };

/* ---- weft --------------------------------------------------------------- */

static int row_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_tanh(cx, weft_matmul(cx, a[0], a[1]));
    return weft_ctx_status(cx);
}

static int loss_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *y = NULL;
    if (weft_map_ex(cx, user, &a[0], 1, &a[1], 1, &y, 1, 0) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_sum(cx, y, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int grad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    return weft_gradients(cx, loss_body, user, a, 2, 2, NULL, outs);
}

static weft_function *function_of(weft_runtime *rt, const char *name, weft_body_fn body,
                                  void *user, size_t n_outs, const char *const *sigs)
{
    weft_spec sig[2];
    for (int i = 0; i < 2; i++)
        if (weft_spec_parse(sigs[i], &sig[i]) < 0)
            bench_die("weft_spec_parse", WEFT_EINVAL);
    weft_function_desc d = { .name = name, .body = body, .user = user, .n_args = 2,
                             .n_outs = n_outs, .input_signature = sig };
    weft_function *f = NULL;
    int err = weft_function_create(rt, &d, &f);
    if (err < 0)
        bench_die("weft_function_create", err);
    return f;
}

static void weft_grads(weft_function *f, weft_tensor *const *in, weft_tensor **out)
{
    bench_call(f, in, 2, out, 2);
}

/* ---- C by hand ---------------------------------------------------------- */

static void c_grads(const float *x, const float *w, float *dx, float *dw)
{
    memset(dw, 0, (size_t)D * D * sizeof *dw);
    for (int r = 0; r < B; r++) {
        const float *xr = x + (size_t)r * D;
        float z[D], d[D];
        for (int j = 0; j < D; j++)
            z[j] = 0;
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                z[j] += xr[i] * w[i * D + j];
        for (int j = 0; j < D; j++) {
            float t = tanhf(z[j]);
            d[j] = 1 - t * t;
        }
        for (int i = 0; i < D; i++) {
            float s = 0;
            for (int j = 0; j < D; j++) {
                dw[i * D + j] += xr[i] * d[j];
                s += w[i * D + j] * d[j];
            }
            dx[(size_t)r * D + i] = s;
        }
    }
}

static float *filled(size_t count, unsigned seed, float scale)
{
    float *v = malloc(count * sizeof *v);
    if (!v)
        bench_die("malloc", WEFT_ENOMEM);
    for (size_t i = 0; i < count; i++)
        v[i] = scale * sinf(0.37f * (float)i + (float)seed);
    return v;
}

static void check(const float *want, const weft_tensor *got, size_t n, const char *what)
{
    const float *g = weft_tensor_data(got);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += fabsf(g[i] - want[i]) > 1e-4f * (1 + fabsf(want[i]));
    if (bad)
        bench_fail(what, bad, 0);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(21);
    float *x = filled((size_t)B * D, 1, 1.0f), *w = filled((size_t)D * D, 2, 0.2f);
    float *dx = malloc((size_t)B * D * sizeof *dx), *dw = malloc((size_t)D * D * sizeof *dw);
    if (!dx || !dw)
        bench_die("malloc", WEFT_ENOMEM);
    weft_tensor *in[2] = { NULL, NULL };
    int64_t xd[2] = { B, D }, wd[2] = { D, D };
    if (weft_tensor_create(WEFT_F32, 2, xd, x, &in[0]) < 0 ||
        weft_tensor_create(WEFT_F32, 2, wd, w, &in[1]) < 0)
        bench_die("weft_tensor_create", WEFT_ENOMEM);
    c_grads(x, w, dx, dw);
    static const char *const row_sigs[2] = { "f32[64]", "f32[64,64]" };
    static const char *const sigs[2] = { "f32[?,64]", "f32[64,64]" };
    printf("gradients through a map of tanh(x_r W) over %d rows unknown while tracing "
           "(x f32[%d,%d], W captured), medians over %d repetitions (weft/C: median of "
           "per-repetition ratios)\n", B, B, D, reps);
    printf("%-8s %10s %10s %10s\n", "workers", "C ms", "weft ms", "weft/C");
    for (int k = 0; k < nw; k++) {
        weft_runtime *rt = bench_runtime(workers[k]);
        weft_function *row = function_of(rt, "row", row_body, NULL, 1, row_sigs);
        weft_function *f = function_of(rt, "map_grads", grad_body, row, 2, sigs);
        weft_tensor *out[2];
        weft_grads(f, in, out);
        check(dx, out[0], (size_t)B * D, "dx against C");
        check(dw, out[1], (size_t)D * D, "dW against C");
        weft_tensor_release(out[0]);
        weft_tensor_release(out[1]);
        bench_warm_native(f, in, 2, 2);
        double tc[BENCH_MAX_REPS], tw[BENCH_MAX_REPS], ratio[BENCH_MAX_REPS];
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now();
            c_grads(x, w, dx, dw);
            tc[r] = bench_now() - t0;
            bench_sink += (uint64_t)dw[r % (D * D)];
            t0 = bench_now();
            weft_grads(f, in, out);
            tw[r] = bench_now() - t0;
            weft_tensor_release(out[0]);
            weft_tensor_release(out[1]);
            ratio[r] = tw[r] / tc[r];
        }
        printf("%-8u %10.3f %10.3f %9.2fx\n", workers[k], 1e3 * bench_median(tc, reps),
               1e3 * bench_median(tw, reps), bench_median(ratio, reps));
        weft_function_destroy(&f);
        weft_function_destroy(&row);
        weft_runtime_destroy(&rt);
    }
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    free(x), free(w), free(dx), free(dw);
    return bench_exit_status();
}
