/* weft_local_response_normalization against TensorFlow's definition
 * (a loop over each channel's window of squares), at radii inside and
 * past the channel count, eagerly and traced on 1, 2 and 4 workers (the
 * same bits everywhere); and its errors. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_lrn, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct lrn_case {
    int64_t radius;
    double bias, alpha, beta;
} lrn_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const lrn_case *c = user;
    outs[0] = weft_local_response_normalization(cx, a[0], c->radius, c->bias, c->alpha, c->beta);
    return weft_ctx_status(cx);
}

static uint64_t rng = 0xbb67ae8584caa73bULL;

Test(ops_lrn, matches_the_definition)
{
    enum { B = 2, H = 3, W = 4, C = 7, N = B * H * W * C };
    double x[N];
    for (int i = 0; i < N; i++)
        x[i] = 2 * op_uniform(&rng);
    const lrn_case cases[] = { { 5, 1, 1, 0.5 }, { 1, 2, 1e-4, 0.75 }, { 0, 1, 0.5, 1 },
                               { 20, 0.5, 0.1, 0.3 } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int f = 0; f < 2; f++) {
            const lrn_case *c = &cases[k];
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            weft_tensor *t = test_tensor(dt, 4, (int64_t[]){ B, H, W, C }, x);
            weft_tensor *y;
            op_results_everywhere(body, (void *)c, &t, 1, &y, 1, "lrn");
            test_assert_shape(y, dt, 4, (int64_t[]){ B, H, W, C }, "lrn");
            for (int p = 0; p < N / C; p++)
                for (int d = 0; d < C; d++) {
                    double sq = 0;
                    for (int e = d - (int)c->radius; e <= d + (int)c->radius; e++) {
                        if (e < 0 || e >= C)
                            continue;
                        double v = f ? x[p * C + e] : (float)x[p * C + e];
                        sq += v * v;
                    }
                    double v = f ? x[p * C + d] : (float)x[p * C + d];
                    double want = v / pow(c->bias + c->alpha * sq, c->beta);
                    double got = test_element(y, p * C + d);
                    cr_assert(fabs(got - want) <= (f ? 1e-13 : 1e-5) * fmax(1, fabs(want)),
                              "case %zu %s pixel %d channel %d: %.17g, want %.17g", k,
                              weft_dtype_name(dt), p, d, got, want);
                }
            weft_tensor_release(y);
            weft_tensor_release(t);
        }
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_local_response_normalization(cx, a[1], 2, 1, 1, 0.5); break;
    case 1: outs[0] = weft_local_response_normalization(cx, a[0], -1, 1, 1, 0.5); break;
    case 2:
        outs[0] = weft_local_response_normalization(cx, weft_cast(cx, a[0], WEFT_I32), 2, 1, 1,
                                                    0.5);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_lrn, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_local_response_normalization: x f64[2,3] is not NHWC data" },
        { 1, WEFT_EINVAL, "weft_local_response_normalization: depth_radius -1 is negative" },
        { 2, WEFT_EDTYPE, "weft_local_response_normalization: x i32[1,1,2,3] is not f32 or f64" },
    };
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 1, 2, 3 }, v),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
