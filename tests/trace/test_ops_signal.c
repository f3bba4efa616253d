/* The signal ops: frame against the frames picked out by hand (any axis,
 * pad_end with its pad value, too short a signal), hann_window and
 * hamming_window against TensorFlow's formula computed here in the
 * dtype's arithmetic and its known values (its periodic flag leaves odd
 * lengths symmetric), the same bits eagerly and traced on 1, 2 and 4
 * workers, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_signal, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct sg_case {
    int op;   /* 0 frame, 1 hann, 2 hamming, 3 overlap_and_add (step) */
    int64_t length, step;
    bool pad_end, periodic;
    double pad_value;
    int axis;
    weft_dtype dtype;
} sg_case;

static int sg_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const sg_case *c = user;
    switch (c->op) {
    case 0:
        outs[0] = weft_frame(cx, a[0], c->length, c->step, c->pad_end, c->pad_value, c->axis);
        break;
    case 1: outs[0] = weft_hann_window(cx, c->length, c->periodic, c->dtype); break;
    case 2: outs[0] = weft_hamming_window(cx, c->length, c->periodic, c->dtype); break;
    default: outs[0] = weft_overlap_and_add(cx, a[0], c->step); break;
    }
    return weft_ctx_status(cx);
}

/* Frames of long signals, f32 and f64: a gather of one element per output
 * row whose work is cut into chunks that start inside one signal's frames
 * and run into the next signal's, on every runtime. */
Test(ops_signal, frames_of_long_signals)
{
    int64_t len = 40001, L = 37, step = 13, frames = 1 + (len - L) / step;
    double *v = malloc(sizeof *v * 3 * (size_t)len);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < 3 * len; i++)
        v[i] = (double)(i % 9973) - 0.25 * (double)(i / len);
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F32 : WEFT_F64;
        weft_tensor *x = test_tensor(dt, 2, (int64_t[]){ 3, len }, v), *y;
        sg_case c = { .op = 0, .length = L, .step = step, .axis = -1 };
        op_results_everywhere(sg_body, &c, &x, 1, &y, 1, "long frames");
        test_assert_shape(y, dt, 3, (int64_t[]){ 3, frames, L }, "long frames");
        for (int64_t b = 0; b < 3; b++)
            for (int64_t fr = 0; fr < frames; fr++)
                for (int64_t k = 0; k < L; k++) {
                    double got = test_element(y, (b * frames + fr) * L + k);
                    double want = v[b * len + fr * step + k];
                    if (got != want)
                        cr_assert_fail("%s signal %lld frame %lld sample %lld: %g, want %g",
                                       weft_dtype_name(dt), (long long)b, (long long)fr,
                                       (long long)k, got, want);
                }
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    free(v);
}

/* A [2, 7] signal, element (r, i) = 10 r + i. */
static weft_tensor *signal_2x7(void)
{
    double v[14];
    for (int i = 0; i < 14; i++)
        v[i] = 10 * (i / 7) + i % 7;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ 2, 7 }, v, &t), 0);
    return t;
}

static void expect_frames(const sg_case *c, int64_t frames, const int64_t *dims, int rank)
{
    weft_tensor *x = signal_2x7();
    weft_tensor *out;
    op_results_everywhere(sg_body, (void *)c, &x, 1, &out, 1, "frame");
    cr_assert_eq(weft_tensor_rank(out), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(out)[d], dims[d], "dim %d: %lld, expected %lld", d,
                     (long long)weft_tensor_dims(out)[d], (long long)dims[d]);
    const double *y = weft_tensor_data(out);
    if (c->axis == -1 || c->axis == 1) {
        /* [2, frames, length]: y[r, f, k] = x[r, f step + k] or the pad. */
        for (int r = 0; r < 2; r++)
            for (int64_t f = 0; f < frames; f++)
                for (int64_t k = 0; k < c->length; k++) {
                    int64_t i = f * c->step + k;
                    double want = i < 7 ? 10.0 * r + (double)i : c->pad_value;
                    cr_assert_eq(y[(r * frames + f) * c->length + k], want,
                                 "row %d frame %lld element %lld", r, (long long)f, (long long)k);
                }
    } else {
        /* axis 0 of [2, 7]: [frames, length, 7]. */
        for (int64_t f = 0; f < frames; f++)
            for (int64_t k = 0; k < c->length; k++)
                for (int j = 0; j < 7; j++) {
                    int64_t r = f * c->step + k;
                    double want = r < 2 ? 10.0 * (double)r + j : c->pad_value;
                    cr_assert_eq(y[(f * c->length + k) * 7 + j], want);
                }
    }
    weft_tensor_release(out);
    weft_tensor_release(x);
}

Test(ops_signal, frame_picks_the_frames)
{
    sg_case c = { 0, 3, 2, false, false, 0, -1, WEFT_F64 };
    expect_frames(&c, 3, (const int64_t[]){ 2, 3, 3 }, 3);   /* 1 + (7 - 3) / 2 */
    c.pad_end = true;
    c.pad_value = -9;
    expect_frames(&c, 4, (const int64_t[]){ 2, 4, 3 }, 3);   /* ceil(7 / 2) */
    c = (sg_case){ 0, 4, 4, true, false, 0.5, 1, WEFT_F64 };
    expect_frames(&c, 2, (const int64_t[]){ 2, 2, 4 }, 3);
    c = (sg_case){ 0, 8, 1, false, false, 0, -1, WEFT_F64 };
    expect_frames(&c, 0, (const int64_t[]){ 2, 0, 8 }, 3);   /* shorter than a frame */
    c = (sg_case){ 0, 1, 1, true, false, 3, 0, WEFT_F64 };
    expect_frames(&c, 2, (const int64_t[]){ 2, 1, 7 }, 3);   /* along axis 0 */
    c = (sg_case){ 0, 2, 1, true, false, 3, 0, WEFT_F64 };
    expect_frames(&c, 2, (const int64_t[]){ 2, 2, 7 }, 3);   /* the last frame padded */
}

/* overlap_and_add of i32 frames [lead, frames, length] against the sum
 * written out: out[b, f step + k] += x[b, f, k]. */
static void check_overlap(int64_t lead, int64_t frames, int64_t length, int64_t step)
{
    int64_t n = lead * frames * length, total = (frames - 1) * step + length;
    int32_t *x = malloc(sizeof *x * (size_t)n);
    int64_t *want = calloc((size_t)(lead * total), sizeof *want);
    cr_assert(x && want);
    for (int64_t i = 0; i < n; i++)
        x[i] = (int32_t)((i * 37) % 19 - 9);
    for (int64_t b = 0; b < lead; b++)
        for (int64_t f = 0; f < frames; f++)
            for (int64_t k = 0; k < length; k++)
                want[b * total + f * step + k] += x[(b * frames + f) * length + k];
    weft_tensor *t = NULL;
    const int64_t d3[3] = { lead, frames, length };
    cr_assert_eq(weft_tensor_create(WEFT_I32, lead > 1 ? 3 : 2, lead > 1 ? d3 : d3 + 1, x, &t), 0);
    sg_case c = { 3, 0, step, false, false, 0, 0, WEFT_I32 };
    weft_tensor *out;
    op_results_everywhere(sg_body, &c, &t, 1, &out, 1, "overlap_and_add");
    cr_assert_eq(weft_tensor_numel(out), lead * total);
    cr_assert_eq(weft_tensor_dims(out)[weft_tensor_rank(out) - 1], total);
    for (int64_t i = 0; i < lead * total; i++)
        cr_assert_eq(((const int32_t *)weft_tensor_data(out))[i], want[i],
                     "frames %lld, length %lld, step %lld: element %lld", (long long)frames,
                     (long long)length, (long long)step, (long long)i);
    weft_tensor_release(out);
    weft_tensor_release(t);
    free(x);
    free(want);
}

Test(ops_signal, overlap_and_add_sums_the_frames)
{
    check_overlap(1, 5, 4, 2);   /* length a multiple of the step */
    check_overlap(2, 3, 5, 2);   /* not a multiple: padded segments */
    check_overlap(3, 4, 2, 3);   /* gaps between the frames */
    check_overlap(2, 1, 6, 4);   /* one frame */
    check_overlap(1, 6, 7, 1);
}

/* TensorFlow's formula in the dtype's arithmetic. */
static double window_ref(int op, int64_t length, bool periodic, bool f32, int64_t i)
{
    double a = op == 1 ? 0.5 : 0.54, b = op == 1 ? 0.5 : 0.46;
    if (length == 1)
        return 1;
    int64_t n = length + (periodic && length % 2 == 0) - 1;
    if (f32) {
        volatile float arg = (float)(2 * M_PI) * (float)i / (float)n;
        return (double)((float)a - (float)b * cosf(arg));
    }
    return a - b * cos(2 * M_PI * (double)i / (double)n);
}

Test(ops_signal, windows_follow_tensorflow)
{
    const int64_t lengths[] = { 1, 2, 4, 5, 16, 17 };
    for (int op = 1; op <= 2; op++)
        for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
            for (int periodic = 0; periodic < 2; periodic++)
                for (int f32 = 0; f32 < 2; f32++) {
                    sg_case c = { op, lengths[li], 0, false, periodic, 0, 0,
                                  f32 ? WEFT_F32 : WEFT_F64 };
                    weft_tensor *out;
                    op_results_everywhere(sg_body, &c, NULL, 0, &out, 1, "window");
                    cr_assert_eq(weft_tensor_numel(out), lengths[li]);
                    cr_assert_eq(weft_tensor_dtype(out), c.dtype);
                    for (int64_t i = 0; i < lengths[li]; i++) {
                        double got = f32 ? ((const float *)weft_tensor_data(out))[i]
                                         : ((const double *)weft_tensor_data(out))[i];
                        double want = window_ref(op, lengths[li], periodic, f32, i);
                        cr_assert_eq(got, want, "op %d length %lld periodic %d f32 %d: element "
                                     "%lld is %.17g, expected %.17g", op, (long long)lengths[li],
                                     periodic, f32, (long long)i, got, want);
                    }
                    weft_tensor_release(out);
                }
    /* Known values: a periodic Hann window of 4 is [0, .5, 1, .5]; one of
     * 5 is symmetric in TensorFlow, [0, .5, 1, .5, 0]. */
    sg_case c = { 1, 4, 0, false, true, 0, 0, WEFT_F64 };
    weft_tensor *out;
    op_results_everywhere(sg_body, &c, NULL, 0, &out, 1, "hann 4");
    const double want4[4] = { 0, 0.5, 1, 0.5 }, want5[5] = { 0, 0.5, 1, 0.5, 0 };
    for (int i = 0; i < 4; i++)
        cr_assert(fabs(((const double *)weft_tensor_data(out))[i] - want4[i]) < 1e-15);
    weft_tensor_release(out);
    c.length = 5;
    op_results_everywhere(sg_body, &c, NULL, 0, &out, 1, "hann 5");
    for (int i = 0; i < 5; i++)
        cr_assert(fabs(((const double *)weft_tensor_data(out))[i] - want5[i]) < 1e-15);
    weft_tensor_release(out);
}

typedef enum bad_call { FRAME_LENGTH, FRAME_AXIS, WINDOW_LENGTH, WINDOW_DTYPE, OVERLAP_RANK,
                        OVERLAP_STEP } bad_call;

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch ((bad_call) * (const int *)user) {
    case FRAME_LENGTH: outs[0] = weft_frame(cx, a[0], 0, 1, false, 0, -1); break;
    case FRAME_AXIS: outs[0] = weft_frame(cx, a[0], 2, 1, false, 0, 2); break;
    case WINDOW_LENGTH: outs[0] = weft_hann_window(cx, -1, true, WEFT_F32); break;
    case WINDOW_DTYPE: outs[0] = weft_hamming_window(cx, 4, true, WEFT_I32); break;
    case OVERLAP_RANK:
        outs[0] = weft_overlap_and_add(cx, weft_reshape(cx, a[0], 1, (const int64_t[]){ 14 }), 2);
        break;
    case OVERLAP_STEP: outs[0] = weft_overlap_and_add(cx, a[0], 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_signal, refused_calls_name_the_op)
{
    weft_tensor *x = signal_2x7();
    const op_error_case cases[] = {
        { FRAME_LENGTH, WEFT_EINVAL, "weft_frame: frame_length 0 and frame_step 1 are not both" },
        { FRAME_AXIS, WEFT_EINVAL, "weft_frame: axis 2 is out of range for f64[2,7]" },
        { WINDOW_LENGTH, WEFT_EINVAL, "weft_hann_window: window_length -1 is negative" },
        { WINDOW_DTYPE, WEFT_EINVAL, "weft_hamming_window: dtype i32 is not f32 or f64" },
        { OVERLAP_RANK, WEFT_ESHAPE, "weft_overlap_and_add: f64[14] is not [..., frames, "
                                     "frame_length]" },
        { OVERLAP_STEP, WEFT_EINVAL, "weft_overlap_and_add: frame_step 0 is below 1" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, &x, 1);
    weft_tensor_release(x);
}
