/* The shared path of the elementwise ops (ops.c), for the files that add
 * ops beside it (ops_math.c).  trace/ internal. */
#ifndef WEFT_TRACE_OPS_IMPL_H
#define WEFT_TRACE_OPS_IMPL_H

#include "trace/ir.h"

/* A UNARY or BINARY op as the public calls do it: checks the inputs
 * (messages name fn, "weft_tanh"), promotes their dtypes (weak scalars
 * included) to what the op's class takes (trace/ew_rules.h), then records
 * the node or computes it. */
weft_value *weft__op_unary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a);
weft_value *weft__op_binary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a,
                            weft_value *b);
/* An elementwise op of three operands of one dtype (betainc; where has
 * its own entry, for its bool condition). */
weft_value *weft__op_ternary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a,
                             weft_value *b, weft_value *c);

/* The float dtype in[0..n) compute in when promoted together (weak
 * scalars included), as the float functions take them: integers and bool
 * as f64 (ops.c; the compositions of ops_numpy.c). */
weft_dtype weft__ops_float_dtype(weft_value *const *in, uint32_t n);
/* The dtype in[0..n) promote to together, weak scalars as the binary ops
 * take them (ops.c). */
weft_dtype weft__ops_promoted_dtype(weft_value *const *in, uint32_t n);
/* v as dtype dt: v itself when it already is (a weak scalar stays weak),
 * else weft_cast's (ops.c). */
weft_value *weft__ops_as_dtype(weft_ctx *cx, weft_value *v, weft_dtype dt);

/* Whether in[0..n_in) are f32 or f64, all of one dtype (weak scalars
 * and NULL, absent optional inputs aside); otherwise the context fails
 * with WEFT_EDTYPE naming fn and names[i] (the losses, ops_loss.c and
 * ops_keras_loss.c). */
bool weft__ops_floats_alike(weft_ctx *cx, const char *fn, weft_value *const *in,
                            const char *const *names, size_t n_in);

/* The start of an op with two outputs: clears outs[0..2) (outs may be
 * NULL), enters fn with in[0..n_in), then checks outs.  False when the
 * call cannot go on; *rc is then the code it returns (ops.c). */
bool weft__ops_enter_two_outs(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n_in,
                              weft_value **outs, int *rc);
/* weft_check(cx, x, condition, message) with the message formatted
 * (printf's fmt, cut to what a check keeps): the run-time checks that
 * name their op (ops.c). */
weft_value *weft__ops_checkf(weft_ctx *cx, weft_value *x, weft_value *condition,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Whether v (named name in the message) is a stack of square matrices
 * [..., n, n]: rank known while tracing and at least 2, the last two dims
 * equal where both are known; the context fails with WEFT_ESHAPE naming
 * fn otherwise (ops.c). */
bool weft__ops_square_matrices(weft_ctx *cx, const char *fn, const char *name,
                               const weft_value *v);

/* Whether v (named name in the message) is a number, not bool; the
 * context fails with WEFT_EDTYPE naming fn otherwise (ops.c). */
bool weft__ops_number(weft_ctx *cx, const char *fn, const char *name, const weft_value *v);
/* v's rank, known while tracing; else -1, the context failing naming fn
 * and the operand's name (the ops with one entry per dim or an axis to
 * check need it now). */
int weft__ops_known_rank(weft_ctx *cx, const char *fn, const char *name, const weft_value *v);
/* *axis checked against the rank of v (named name) known while tracing
 * and made non-negative, so that the ops called next cannot refuse it;
 * false with the context failing naming fn otherwise (ops.c). */
bool weft__ops_axis_in(weft_ctx *cx, const char *fn, const char *name, const weft_value *v,
                       int *axis);

/* Whether seed is a seed of the random ops (weft__check_seed), the
 * context failing otherwise with a message naming fn (ops_random.c). */
bool weft__ops_seed_ok(weft_ctx *cx, const char *fn, weft_value *seed);

/* Whether a dtype argument (a window's, a matrix's to be made) is f32 or
 * f64; otherwise the context fails with WEFT_EINVAL naming fn (ops.c). */
bool weft__ops_float_dtype_arg(weft_ctx *cx, const char *fn, weft_dtype dtype);

/* Whether the value of spec s is f32 or f64 (else WEFT_EDTYPE) and, for
 * min_rank > 0, of a rank known while tracing and at least min_rank whose
 * last dim is known too when last_known (else WEFT_ESHAPE); failures name
 * fn (ops.c). */
bool weft__ops_float_rank(weft_ctx *cx, const char *fn, const weft_spec *s, int min_rank,
                          bool last_known);

/* Whether images are f32 or f64; otherwise the context fails with
 * WEFT_EDTYPE naming fn (the image and colour ops, ops_image.c). */
bool weft__ops_float_images(weft_ctx *cx, const char *fn, const weft_value *images);

/* The FFT node of `kind` (trace/shape.h) with transform length len (0: the
 * input's), its errors naming fn (trace/ops_fft.c). */
weft_value *weft__ops_fft(weft_ctx *cx, const char *fn, weft_value *input, int kind,
                          int64_t len);

/* Index tuples with batch coordinates in front: for indices (integers,
 * rank r known, tuples along the last dim) whose first batch_dims dims are
 * batch[0..batch_dims) long (known), an i64 [..., batch_dims + k] holding
 * each element's batch indices, then its tuple (trace/ops_index.c;
 * weft_gather_nd_ex's, and gather's gradient with batch dims).  indices
 * NULL (an earlier step failed) gives NULL. */
weft_value *weft__ops_batch_tuples(weft_ctx *cx, weft_value *indices, const int64_t *batch,
                                   int batch_dims);

/* Axis `axis` of x (rank `rank`, that axis `have` long, known) cut to its
 * first len elements or zero-padded at its end to len; x itself when
 * len is have (trace/ops_fft_nd.c; dct's, inverse_stft's and the N-D
 * transforms' fft_length). */
weft_value *weft__ops_fit_axis(weft_ctx *cx, weft_value *x, int rank, int axis, int64_t have,
                               int64_t len);

/* tf.image.adjust_contrast's steps (ops_image.c) with the factor a value
 * (a scalar of the images' dtype, or a weak constant): (x - mean) factor +
 * mean, the mean over each image's height and width.
 * weft__ops_contrast_images checks its images (f32 or f64, rank 3 or more
 * known while tracing), naming fn. */
weft_value *weft__ops_contrast(weft_ctx *cx, const char *fn, weft_value *images,
                               weft_value *factor);
bool weft__ops_contrast_images(weft_ctx *cx, const char *fn, weft_value *images);
/* The three channels of RGB images, [..., 1] each, into ch[]; false (the
 * context failed, naming fn) unless the images are f32 or f64 with a last
 * dim of 3 known while tracing (ops_color.c).  tf.image.adjust_saturation's
 * and adjust_hue's steps on such channels with the factor or delta a value
 * (a scalar of the images' dtype, or a weak constant), through HSV. */
bool weft__ops_rgb_channels(weft_ctx *cx, const char *fn, weft_value *images, weft_value **ch);
weft_value *weft__ops_saturation(weft_ctx *cx, const char *fn, weft_value *const *rgb,
                                 weft_value *factor);
weft_value *weft__ops_hue(weft_ctx *cx, const char *fn, weft_value *const *rgb, weft_value *delta);

/* tf.signal's pad_end (ops_signal.c): *frames = ceil(n / frame_step),
 * and signal, whose axis ax has n elements, padded with value to the end
 * of the last frame (signal itself when nothing is missing). */
weft_value *weft__ops_pad_frames_end(weft_ctx *cx, weft_value *signal, int ax, int64_t n,
                                     int64_t frame_length, int64_t frame_step, double value,
                                     int64_t *frames);
/* Whether window is a vector of frame_length elements (or an unknown
 * count) of dtype, the window of a framed transform; otherwise the
 * context fails naming fn (trace/ops_fft.c, ops_mdct.c). */
bool weft__ops_window_fits(weft_ctx *cx, const char *fn, weft_value *window,
                           int64_t frame_length, weft_dtype dtype);

/* Shorthands for a composition that records many elementwise steps
 * under one public op's name (ops_color.c, ops_keras_loss.c). */
typedef struct weft__steps {
    weft_ctx *cx;
    const char *fn;
} weft__steps;

static inline weft_value *weft__step1(const weft__steps *s, weft__op op, weft_value *a)
{
    return weft__op_unary(s->cx, op, s->fn, a);
}

static inline weft_value *weft__step2(const weft__steps *s, weft__op op, weft_value *a,
                                      weft_value *b)
{
    return weft__op_binary(s->cx, op, s->fn, a, b);
}

/* Whether in[0..n_in) are all bool; otherwise the context fails with
 * WEFT_EDTYPE naming fn and the first input that is not (the check of the
 * logical ops). */
bool weft__ops_all_bool(weft_ctx *cx, const char *fn, weft_value *const *in, uint32_t n_in);

/* A constant of dtype dt and shape dims[0..rank) holding a copy of data
 * (laid out as weft_tensor_create takes it), cast to cast_to; NULL with
 * the context failed (naming fn) when it cannot be made.  The tables and
 * filters that compositions build while tracing. */
weft_value *weft__ops_constant(weft_ctx *cx, const char *fn, weft_dtype dt, int rank,
                               const int64_t *dims, const void *data, weft_dtype cast_to);

/* v itself, or for a weak scalar an ordinary (strong) constant of the same
 * dtype and value: what a function traced for v's spec would see. */
weft_value *weft__value_strong(weft_ctx *cx, weft_value *v);

/* v[0..n) (NULL: all 1) into out, each within 1..INT32_MAX; otherwise the
 * context fails with WEFT_EINVAL naming fn and what[d] (the strides,
 * dilations and windows of the convolutions and pools, ops_conv.c). */
bool weft__ops_take_sizes(weft_ctx *cx, const char *fn, const char *what, const int64_t *v,
                          int n, int64_t *out);
/* The k largest elements along a's last axis in descending order (largest
 * true) or the k smallest in ascending order into outs[0], their i64
 * indices into outs[1]: the TOP_K and TOP_K_VALUES nodes, for weft_top_k
 * and approx_max_k / approx_min_k (ops_shape.c).  Returns 0 or the
 * context's error code, outs untouched then. */
int weft__ops_top_k(weft_ctx *cx, weft_value *a, int64_t k, bool largest, weft_value **outs);
/* t[begin:end] along axis (Python's slice: end may count from the back,
 * WEFT_END is the end), every other dim whole; NULL for t NULL (ops_nn.c). */
weft_value *weft__ops_axis_slice(weft_ctx *cx, weft_value *t, int axis, int64_t begin,
                                 int64_t end);
/* Column d of the matrix m [N, D] as a vector [N]; NULL for m NULL
 * (ops_nn.c). */
weft_value *weft__ops_column(weft_ctx *cx, weft_value *m, int64_t d);
/* x's dim axis (first dim n) as an i64 scalar, and the i64 vector 0, 1,
 * ..., n - 1, all known only when the function runs (a constant after
 * compilation where the dim is known then) (ops_nn.c). */
weft_value *weft__ops_dim(weft_ctx *cx, weft_value *x, int axis);
weft_value *weft__ops_dim0(weft_ctx *cx, weft_value *x);
/* sums [S, ...] (of rank `rank`) over the square roots of counts [S], a
 * count of 0 read as 1: the sqrt_n segment reductions (ops_index.c). */
weft_value *weft__ops_over_sqrt_counts(weft_ctx *cx, weft_value *sums, weft_value *counts,
                                       int rank);
weft_value *weft__ops_axis0_range(weft_ctx *cx, weft_value *x);
/* The vector v laid along axis of a rank-`rank` operand ([1, .., len,
 * .., 1]), so that it broadcasts against it (ops_numpy_reduce.c). */
weft_value *weft__ops_along_axis(weft_ctx *cx, weft_value *v, int rank, int axis);
/* Whether each element of x (any rank but 0) is among the vector y's
 * (one dtype, not bool): y sorted, then a binary search per element; NaN
 * is never found and -0.0 finds 0.0 (ops_perm.c). */
weft_value *weft__ops_found_in(weft_ctx *cx, weft_value *x, weft_value *y);
/* *v (a scalar or a vector) made a vector (NumPy's atleast_1d); false
 * with the context failing naming fn and what otherwise
 * (ops_numpy_convolve.c). */
bool weft__ops_as_vector(weft_ctx *cx, const char *fn, const char *what, weft_value **v);
/* Whether padding is WEFT_PADDING_VALID or WEFT_PADDING_SAME; otherwise
 * the context fails with WEFT_EINVAL naming fn (ops_conv.c). */
bool weft__ops_padding_ok(weft_ctx *cx, const char *fn, weft_padding padding);

/* Defines the public weft_NAME as the op OP of the table. */
#define WEFT__DEFINE_UNARY(name, OP)                                         \
    weft_value *weft_##name(weft_ctx *cx, weft_value *a)                     \
    {                                                                        \
        return weft__op_unary(cx, WEFT__OP_##OP, "weft_" #name, a);         \
    }
#define WEFT__DEFINE_BINARY(name, OP)                                        \
    weft_value *weft_##name(weft_ctx *cx, weft_value *a, weft_value *b)      \
    {                                                                        \
        return weft__op_binary(cx, WEFT__OP_##OP, "weft_" #name, a, b);     \
    }

#endif
