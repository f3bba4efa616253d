/* The shape ops as the rest of trace/ sees them: expand_dims and squeeze
 * (SHAPE kind, computed like reshape), and the ARRAY kind (transpose,
 * slice, split, gather, concat, stack, tile, broadcast_to, fill_like,
 * shape, argmax, argmin, cumsum, sort, argsort, top_k, and the indexing ops
 * unsorted_segment, gather_nd, scatter_nd_update, scatter_nd_add, roll,
 * repeat; argwhere, boolean_mask and unique's parts).  Inference lives in infer_shape.c, the
 * kernels in kernel_shape.c and kernel_scan.c, what the compiler needs
 * (attribute hashing, equality, printing, folding) in shape_attr.c.
 * trace/ internal. */
#ifndef WEFT_TRACE_SHAPE_H
#define WEFT_TRACE_SHAPE_H

#include <stdio.h>

#include "trace/ir.h"
#include "trace/tensor_impl.h"

/* Whether op is one of the ops above (their attributes are handled here). */
bool weft__is_shape_op(weft__op op);

/* weft__infer_spec for the ops above (any input count: concat and stack
 * take one or more).  The inputs were checked by the caller (dtype, rank,
 * dims); unknown dims stay unknown where the result depends on them. */
int weft__infer_shape_op(const weft__node *n, const weft_spec *in, weft_spec *out);
/* A random op's seed: an i32 or i64 scalar, or a vector of two (a rank or
 * length unknown while tracing is checked when the function runs);
 * otherwise WEFT_EINVAL with a message naming fn (infer_shape.c). */
int weft__check_seed(const char *fn, const weft_spec *seed);
/* a * b for dims, either of which may be unknown (the product of a known
 * 0 and anything is 0); false on overflow. */
bool weft__dim_mul(int64_t a, int64_t b, int64_t *out);
/* Whether dims a and b, which must agree, are both known and differ. */
static inline bool weft__dims_clash(int64_t a, int64_t b)
{
    return a != WEFT_DIM_ANY && b != WEFT_DIM_ANY && a != b;
}

/* weft__kernel_eval_into for the ARRAY ops (same contract: out has the
 * inferred shape; data-dependent failures, a gather index out of range,
 * are reported here). */
int weft__eval_shape_op(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out);
/* The argmax/argmin and cumsum kernels (kernel_scan.c). */
int weft__eval_arg_extreme(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                           weft_tensor *out);
int weft__eval_cumsum(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      weft_tensor *out);
/* The sort, argsort and top_k kernels (kernel_sort.c).  top_k_values
 * picks a's elements at the indices top_k gave, row by row. */
int weft__eval_sort(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                    weft_tensor *out);
int weft__eval_top_k(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                     weft_tensor *out);
int weft__eval_top_k_values(weft_runtime *rt, const weft_tensor *a, const weft_tensor *idx,
                            weft_tensor *out);
/* searchsorted: i64 insertion points of val's rows in seq's sorted rows
 * (attr.index.kind: 0 left, 1 right). */
int weft__eval_searchsorted(weft_runtime *rt, const weft__node *n, const weft_tensor *seq,
                            const weft_tensor *val, weft_tensor *out);

/* The indexing ops: unsorted_segment, gather_nd, scatter_nd_update,
 * scatter_nd_add, roll and repeat (kernel_index.c). */
int weft__eval_index_op(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out);

/* The stateless random ops, random_uniform and random_normal
 * (kernel_random.c): in[0] is the seed. */
int weft__eval_random(weft_runtime *rt, const weft__node *n, const weft_tensor *seed,
                      weft_tensor *out);
/* Convolution, pooling and resizing on NHWC data (conv2d,
 * depthwise_conv2d, max_pool2d, avg_pool2d, resize): inference
 * (infer_conv.c) and the kernels (kernel_conv.c, kernel_depthwise.c,
 * kernel_pool.c, kernel_resize.c). */
int weft__infer_conv_op(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_conv2d(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                      const weft_tensor *filters, weft_tensor *out);
int weft__eval_depthwise_conv2d(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                                const weft_tensor *filters, weft_tensor *out);
int weft__eval_resize(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                      weft_tensor *out);
/* Whether boxes is [n, 4] and per_box [n] (a known rank each; the dims
 * as far as known): the boxes of non_max_suppression and crop_and_resize
 * and their scores or image indices (infer_select.c). */
bool weft__spec_boxes(const weft_spec *boxes, const weft_spec *per_box);
/* non_max_suppression (kernel_nms.c): the i32 indices of the boxes kept,
 * sized here. */
int weft__eval_nms(const weft__node *n, const weft_tensor *boxes, const weft_tensor *scores,
                   weft_tensor **out);
/* non_max_suppression_padded (kernel_nms.c): i32 [..., max_output + 1],
 * each batch element's count kept, then the indices, zeros after them. */
int weft__eval_nms_padded(weft_runtime *rt, const weft__node *n, const weft_tensor *boxes,
                          const weft_tensor *scores, weft_tensor *out);
/* non_max_suppression_with_scores (kernel_nms.c): f64 [count, 2], the
 * index and the score of each box kept. */
int weft__eval_nms_scored(const weft__node *n, const weft_tensor *boxes,
                          const weft_tensor *scores, weft_tensor **out);
/* combined_non_max_suppression (kernel_nms.c): i32 [batch, per_batch, 2],
 * each image's detections as (box, class), -1 past its last. */
int weft__eval_combined_nms(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                            weft_tensor *out);
/* crop_and_resize (kernel_crop.c): in[0] the images, in[1] the boxes,
 * in[2] their image indices. */
int weft__eval_crop_and_resize(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                               weft_tensor *out);
/* resize's bicubic method (kernel_bicubic.c): x NHWC. */
int weft__eval_resize_bicubic(weft_runtime *rt, const weft_tensor *x, weft_tensor *out);
int weft__eval_pool2d(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                      weft_tensor *out);
/* The placement of a window along one dim, as TensorFlow pads: the
 * output size and the padding before the first window (0 for VALID); -1
 * when a VALID window does not fit in the input.  in must be known. */
int64_t weft__conv_out_dim(int padding, int64_t in, int64_t window, int64_t stride,
                           int64_t dilation, int64_t *pad_before);
/* The ops whose result size the input values decide (argwhere,
 * boolean_mask, unique's parts; see weft__op_shape_from_values):
 * inference (infer_select.c) and the kernels, which allocate the result
 * (kernel_select.c). */
int weft__infer_select_op(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_from_values(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor **out);
/* unique's indices (UNIQUE_IDX), of x's shape. */
int weft__eval_unique_idx(const weft_tensor *x, weft_tensor *out);
/* The linear-algebra ops (cholesky, matrix_solve, triangular_solve,
 * matrix_inverse, matrix_exponential, matrix_determinant, slogdet, and the
 * decompositions qr, eigh and svd): inference (infer_linalg.c) and the
 * kernels (kernel_linalg.c, kernel_decomp.c, kernel_expm.c).  matrix_solve's and triangular_solve's
 * attr.index.kind holds WEFT__LINALG_LOWER and WEFT__LINALG_ADJOINT. */
#define WEFT__LINALG_LOWER   1u
#define WEFT__LINALG_ADJOINT 2u
/* qr's and svd's full_matrices; eigh's and svd's vectors (eigh without
 * them is eigvalsh, svd without them compute_uv false). */
#define WEFT__LINALG_FULL    4u
#define WEFT__LINALG_VECTORS 8u
int weft__infer_linalg_op(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_linalg(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor *out);
/* tridiagonal_solve (kernel_tridiag.c): in[0] the compact diagonals
 * [..., 3, m], in[1] the right-hand sides [..., m, k] or [..., m]. */
int weft__eval_tridiagonal_solve(weft_runtime *rt, const weft__node *n,
                                 const weft_tensor *diagonals, const weft_tensor *rhs,
                                 weft_tensor *out);
/* FFT (kernel_fft.c, infer_fft.c): attr.fft.  Complex tensors are
 * [..., n, 2], real and imaginary parts. */
enum {
    WEFT__FFT_FORWARD,        /* complex to complex */
    WEFT__FFT_INVERSE,        /* complex to complex, over n */
    WEFT__FFT_REAL,           /* [..., len] real to [..., n / 2 + 1, 2] */
    WEFT__FFT_REAL_INVERSE,   /* [..., bins, 2] Hermitian to [..., n] real, over n */
    WEFT__FFT_FRAMES          /* stft: the real transform of each windowed frame of
                                 [..., len], to [..., frames, n / 2 + 1, 2] */
};
/* The public op of a kind, for messages ("weft_rfft"; kernel_fft.c). */
const char *weft__fft_name(int kind);
int weft__infer_fft(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_fft(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor *out);
/* Philox4x32-10 (Salmon et al., SC 2011): the block of the counter ctr
 * under key into out. */
void weft__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* The Philox key (seed[0]) and stream (seed[1]; 0 for a scalar seed) of
 * a seed tensor, each as two 32-bit words; WEFT_EINVAL naming n's op when
 * it is not an i32 or i64 scalar or vector of two (kernel_random.c). */
int weft__random_key(const weft__node *n, const weft_tensor *seed, uint32_t key[2],
                     uint32_t stream[2]);
/* The four 32-bit words of Philox block blk of the stream (a seed's key
 * and stream, from weft__random_key), as the random ops number blocks. */
void weft__random_block(const uint32_t key[2], const uint32_t stream[2], uint64_t blk,
                        uint32_t r[4]);
/* The two f64 uniform draws in [0, 1) of Philox block blk: elements 2 blk
 * and 2 blk + 1 of weft_random_uniform's f64 stream for that key and
 * stream. */
void weft__random_f64_block(const uint32_t key[2], const uint32_t stream[2], uint64_t blk,
                            double u[2]);
/* random_categorical (kernel_categorical.c): in[0] the seed, in[1] the
 * logits [batch, classes]. */
int weft__eval_random_categorical(weft_runtime *rt, const weft__node *n,
                                  const weft_tensor *seed, const weft_tensor *logits,
                                  weft_tensor *out);
/* random_gamma, random_poisson and random_binomial
 * (kernel_random_counts.c): in[0] the seed, in[1] each element's
 * parameter (f64, of the result's shape), and binomial's probabilities in
 * param2 (NULL for the others). */
int weft__eval_random_counts(weft_runtime *rt, const weft__node *n, const weft_tensor *seed,
                             const weft_tensor *param, const weft_tensor *param2,
                             weft_tensor *out);
/* ctc_loss (kernel_ctc.c): in[0] the labels [batch, max_label_length],
 * in[1] the logits, in[2] and in[3] the label and logit lengths; attr.index
 * axis the blank index (negative: from the classes' end), kind non-zero
 * for time-major logits. */
int weft__infer_ctc_loss(const weft__node *n, const weft_spec *in, weft_spec *out);
/* The class of blank_index among classes (negative counts from the end),
 * or -1 when there is none; ctc_loss and ctc_greedy_decoder's rule. */
int64_t weft__ctc_blank(int blank_index, int64_t classes);
int weft__eval_ctc_loss(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out);
/* ctc_beam_search_decoder (kernel_ctc_beam.c): in[0] the inputs [frames,
 * batch, classes], in[1] the sequence lengths [batch]; attr.index count
 * the beam width, axis the paths kept.  f64 [batch, paths, frames + 1]:
 * each path's score, then its labels, -1 after them. */
int weft__infer_ctc_beam(const weft__node *n, const weft_spec *in, weft_spec *out);
/* banded_triangular_solve (kernel_banded.c): in[0] the bands [..., K, M],
 * in[1] the right-hand sides [..., M, N]; attr.index.kind holds
 * WEFT__LINALG_LOWER and WEFT__LINALG_ADJOINT. */
int weft__infer_banded_solve(const weft_spec *in, weft_spec *out);
int weft__eval_banded_solve(weft_runtime *rt, const weft__node *n, const weft_tensor *bands,
                            const weft_tensor *rhs, weft_tensor *out);
int weft__eval_ctc_beam(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out);
/* ctc_unique_labels (kernel_ctc_unique.c): labels (i32, i64) [batch, n]
 * to i64 [batch, 2, n], each row's distinct labels in order of first
 * occurrence padded with zeros, then each label's index among them. */
int weft__infer_ctc_unique(const weft_spec *in, weft_spec *out);
int weft__eval_ctc_unique(weft_runtime *rt, const weft_tensor *labels, weft_tensor *out);
/* extract_glimpse (kernel_glimpse.c): in[0] the images [b, h, w, c], in[1]
 * the offsets [b, 2] (y, x), in[2] the noise (a scalar, or of the
 * result's shape); attr.resize.size the window, attr.resize.method the
 * flags below. */
enum { WEFT__GLIMPSE_CENTERED = 1, WEFT__GLIMPSE_NORMALIZED = 2 };
/* FRACTIONAL_POOL's modes (attr.resize.method; antialias is
 * overlapping): the pools, the maximum's argmax (i64 flat indices within
 * the image) and the average's gradient (in[0] g, the result the input's
 * shape, attr.resize.size its height and width). */
enum { WEFT__FRACTIONAL_MAX, WEFT__FRACTIONAL_AVG, WEFT__FRACTIONAL_ARGMAX,
       WEFT__FRACTIONAL_AVG_GRAD };
const char *weft__fractional_pool_fn(const weft__node *n);
int weft__infer_fractional_pool(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_fractional_pool(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                               weft_tensor *out);
int weft__infer_glimpse(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_glimpse(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                       weft_tensor *out);
/* generate_bounding_box_proposals (kernel_proposals.c): in[] the scores,
 * deltas, image_info and anchors; attr.proposals.  [batch, post_nms, 5]
 * rows of y1, x1, y2, x2 and the score, zeros after the kept ones. */
int weft__infer_box_proposals(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_box_proposals(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                             weft_tensor *out);
/* edit_distance (kernel_edit_distance.c): in[] the hypothesis, its
 * lengths, the truth, its lengths; attr.index.kind bit 0 (1) when the
 * hypothesis lengths are given, bit 1 (2) the truth's (else in[1], in[3]
 * are unread stand-ins); count non-zero to normalize.  f32 of the batch
 * dims. */
int weft__infer_edit_distance(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_edit_distance(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                             weft_tensor *out);
/* The candidate samplers (kernel_candidates.c): in[0] the seed, and for
 * UNIGRAM_CANDIDATES in[1] the classes' cumulative weights (f64
 * [range_max]; cum NULL for the other laws); attr.sampler.  i64
 * [num_sampled + 1]: the classes drawn, then the number of draws. */
int weft__infer_candidates(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_candidates(const weft__node *n, const weft_tensor *seed, const weft_tensor *cum,
                          weft_tensor *out);
/* check_numerics and assert (kernel_check.c): in[0] passed through when
 * it holds no NaN or inf (check_numerics) or when every element of the
 * bool in[1] is true (assert); otherwise WEFT_EINVAL with the node's
 * message. */
int weft__infer_check(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_check(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                     weft_tensor *out);
/* sample_distorted_bounding_box (kernel_sample_box.c): image_size (i32,
 * i64 [3]), f32 boxes [batch, n, 4] and a seed to i64 [4], the crop's
 * row, column, height and width. */
int weft__infer_sample_box(const weft_spec *in, weft_spec *out);
/* random_index_shuffle (kernel_index_shuffle.c): in[0] the seed, in[1]
 * the indices, in[2] max_index (a scalar of the indices' dtype). */
int weft__infer_index_shuffle(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_index_shuffle(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                             weft_tensor *out);
int weft__eval_sample_box(const weft__node *n, weft_tensor *const *in, weft_tensor *out);
/* resize by a sampling kernel (kernel_resize_filter.c): whether node n
 * (RESIZE) takes that path, and the kernel. */
bool weft__resize_filtered(const weft__node *n);
int weft__eval_resize_filter(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                             weft_tensor *out);
/* isotonic_regression (kernel_isotonic.c): x (f32, f64) along axis
 * attr.index.axis, the decreasing fit (kind 0) or each element's pool
 * index (kind 1, i32), of x's shape. */
/* bitcast (kernel_bitcast.c): the bytes of in[0] as attr.cast.to. */
int weft__infer_bitcast(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_bitcast(const weft_tensor *a, weft_tensor *out);
int weft__infer_isotonic(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_isotonic(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                        weft_tensor *out);
/* image_projective_transform (kernel_transform.c): images [b, h, w, c]
 * (f32, f64) and f32 transforms [1 or b, 8] to [b, out_h, out_w, c]. */
int weft__infer_image_transform(const weft__node *n, const weft_spec *in, weft_spec *out);
int weft__eval_image_transform(weft_runtime *rt, const weft__node *n, const weft_tensor *images,
                               const weft_tensor *transforms, weft_tensor *out);
/* draw_bounding_boxes (kernel_boxes.c): in[0] images [b, h, w, 1, 3 or
 * 4] (f32, f64), in[1] f32 boxes [b, n, 4], in[2] f32 colours [k, >= c]. */
int weft__infer_draw_boxes(const weft_spec *in, weft_spec *out);
int weft__eval_draw_boxes(weft_runtime *rt, weft_tensor *const *in, weft_tensor *out);

/* Python's slice rule on a dim of n elements: the first index and the
 * element count of [begin:end:step] (step != 0; end WEFT_END: through the
 * last element in the step's direction). */
void weft__slice_resolve(int64_t n, int64_t begin, int64_t end, int64_t step, int64_t *first,
                         int64_t *count);
/* The first index and length of split part n->attr.split on a dim of d
 * elements; false (with weft_errmsg() naming a's spec) when the parts do
 * not fit d. */
bool weft__split_resolve(const weft__node *n, const weft_spec *a, int64_t d, int64_t *first,
                         int64_t *count);

/* For the compiler: a digest of n's attributes for CSE's hash, attribute
 * equality, and the "<...>" the op listing prints after the op name. */
uint64_t weft__shape_attr_digest(const weft__node *n);
bool     weft__shape_attr_eq(const weft__node *a, const weft__node *b);
void     weft__shape_attr_print(const weft__node *n, FILE *f);
/* Whether n may write its result into the buffer of its input (fill_like
 * reads only the input's shape). */
bool     weft__shape_in_place_ok(const weft__node *n);
/* Folding a node whose value follows from its inputs' specs alone (shape
 * of a tensor of known shape): *out receives the constant, or NULL when
 * n is not such a node.  Fails only for lack of memory. */
int      weft__shape_fold_spec(const weft__graph *g, const weft__node *n, weft_tensor **out);

#endif
