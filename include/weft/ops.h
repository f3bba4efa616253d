/* weft ops: the operations a function body calls, eager contexts, map and
 * host calls.  Include <weft.h> rather than this file.
 *
 * A body is ordinary C over weft_value handles.  The same body runs eagerly
 * (each op computes at once on the runtime's workers) or in tracing mode
 * (each op records a node and computes nothing).  Values belong to their
 * context and live until it ends; never free one.
 *
 * Errors are sticky per context: an op on bad inputs records the first
 * error (weft_ctx_status, weft_errmsg names the op and the shapes) and
 * returns NULL; every op given a NULL input returns NULL.  A context is used
 * by one thread at a time.
 *
 * Dtype promotion: the inputs of an arithmetic or comparison op are first
 * converted to the wider of the two dtypes in the order
 * bool < i32 < i64 < f32 < f64.  Comparisons return bool.  Integer div and
 * mod are floor division and floor modulo (Python's // and %), and dividing
 * an integer by zero gives 0; integer arithmetic wraps around; integer pow
 * with a negative exponent truncates toward zero (0, except for a base of 1
 * or -1; NumPy raises instead).  sqrt, exp
 * and log of an integer or bool compute in f64; mean of an integer computes
 * in f64.  Elementwise ops broadcast like NumPy. */
#ifndef WEFT_OPS_H
#define WEFT_OPS_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_ALL_AXES (-1000)  /* reduce over every axis */

/* The first error raised in this context (0 if none); sticky. */
WEFT_API int weft_ctx_status(const weft_ctx *cx);

/* Eager contexts: ops run at once, on rt's workers.  *out is owned by the
 * caller and ended with weft_eager_end; the runtime must outlive it.  Any
 * thread may begin one; it is then used by one thread at a time. */
WEFT_API int          weft_eager_begin(weft_runtime *rt, weft_ctx **out);
/* Wraps t (the context takes a reference) as a value of cx. */
WEFT_API weft_value  *weft_eager_value(weft_ctx *cx, weft_tensor *t);
/* The tensor of an eager value; borrowed (valid until the context ends;
 * retain it to keep it).  NULL for traced values. */
WEFT_API weft_tensor *weft_value_tensor(weft_value *v);
/* Frees the context and its values; *cx becomes NULL.  NULL is fine.  A
 * context weft gave to a body is not freed (weft_errmsg says so). */
WEFT_API void         weft_eager_end(weft_ctx **cx);

/* The spec of a value: known dims in eager mode, possibly WEFT_DIM_ANY
 * while tracing. */
WEFT_API int weft_value_spec(const weft_value *v, weft_spec *out);
/* A static argument's value (weft_arg_i64 / weft_arg_f64 arguments, and
 * constants).  WEFT_EINVAL if v is not a static scalar. */
WEFT_API int weft_value_static_i64(const weft_value *v, int64_t *out);
WEFT_API int weft_value_static_f64(const weft_value *v, double *out);

/* Binary elementwise ops (broadcasting, promotion as above). */
WEFT_API weft_value *weft_add(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_sub(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_mul(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_div(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_mod(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_pow(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_minimum(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_maximum(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_eq(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_ne(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_lt(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_le(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_gt(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_ge(weft_ctx *cx, weft_value *a, weft_value *b);

/* Unary elementwise ops. */
WEFT_API weft_value *weft_neg(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_abs(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_sqrt(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_exp(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_log(weft_ctx *cx, weft_value *a);

/* Conversion (float to integer truncates toward zero; out-of-range values
 * saturate; anything non-zero becomes true). */
WEFT_API weft_value *weft_cast(weft_ctx *cx, weft_value *a, weft_dtype to);
/* cond ? a : b elementwise; cond is bool; all three broadcast. */
WEFT_API weft_value *weft_where(weft_ctx *cx, weft_value *cond, weft_value *a, weft_value *b);

/* Reductions over one axis (negative counts from the end) or WEFT_ALL_AXES;
 * the axis is removed from the shape.  sum of bool counts the true elements
 * as i64.  Over an empty axis: sum is 0, mean NaN, and reduce_max the
 * dtype's lowest value (-inf, INT32_MIN, INT64_MIN, false). */
WEFT_API weft_value *weft_sum(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_mean(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_reduce_max(weft_ctx *cx, weft_value *a, int axis);

/* Shapes: one dim of dims may be -1 (inferred, like NumPy). */
WEFT_API weft_value *weft_reshape(weft_ctx *cx, weft_value *a, int rank, const int64_t *dims);
/* 2-D matrix product [m,k] x [k,n] -> [m,n] (promotion as above). */
WEFT_API weft_value *weft_matmul(weft_ctx *cx, weft_value *a, weft_value *b);

/* Constants. */
WEFT_API weft_value *weft_const_i64(weft_ctx *cx, int64_t v);   /* an i64[] scalar */
WEFT_API weft_value *weft_const_f64(weft_ctx *cx, double v);    /* a f64[] scalar */
/* A constant tensor (the context takes a reference). */
WEFT_API weft_value *weft_const_tensor(weft_ctx *cx, weft_tensor *t);
/* A tensor of dtype dt and shape dims filled with value. */
WEFT_API weft_value *weft_fill(weft_ctx *cx, weft_dtype dt, int rank, const int64_t *dims, double value);
/* [start, start+delta, ...) up to limit (exclusive), of dtype dt; delta != 0. */
WEFT_API weft_value *weft_range(weft_ctx *cx, weft_dtype dt, int64_t start, int64_t limit, int64_t delta);

/* Shapes, indexing and scans.  Axes may be negative (counted from the
 * end).  Results are new tensors, never views of an input; any dtype
 * unless said otherwise.  While tracing, a result dim that depends on a
 * dim unknown then stays unknown, and the checks that need it (a squeeze
 * of a dim that must be 1, split sizes that must add up, gather indices)
 * run on every call, failing the call with the message they would have
 * given eagerly.  Array arguments (perm, begin, sizes, ...) are borrowed
 * for the call only.  Elements move in chunks over the intra-op threads
 * like elementwise ops; the results never depend on the thread count. */

/* A slice end meaning "through the last element in the step's direction"
 * (Python's None: a[2:] and a[::-1]). */
#define WEFT_END INT64_MAX

/* Permutes the dims: result dim d is a's dim perm[d].  perm holds rank(a)
 * distinct axes (negative ones count from the end); NULL reverses the dims
 * (for a matrix, its transpose), also for a rank unknown while tracing. */
WEFT_API weft_value *weft_transpose(weft_ctx *cx, weft_value *a, const int *perm);
/* a[begin[d]:end[d]:step[d]] on every dim d, by Python's rules: negative
 * indices count from the end, indices past either end are clamped, a step
 * may be negative (not 0), and an empty range gives a dim of 0.  Each
 * array holds rank(a) entries; begin NULL starts every dim at its first
 * element in the step's direction, end NULL runs to WEFT_END, step NULL
 * is all 1.  a's rank must be known. */
WEFT_API weft_value *weft_slice(weft_ctx *cx, weft_value *a, const int64_t *begin,
                                const int64_t *end, const int64_t *step);
/* Cuts a along axis into n parts outs[0..n) (like tf.split): n equal parts
 * when sizes is NULL (the dim must be a multiple of n), else parts of
 * sizes[0..n) elements, one of which may be -1 for the rest; the sizes
 * must add up to the dim.  Returns 0, or the context's error code with
 * every outs[k] NULL.  Each part is a copy (a node of its own while
 * tracing). */
WEFT_API int weft_split(weft_ctx *cx, weft_value *a, size_t n, const int64_t *sizes, int axis,
                        weft_value **outs);
/* Elements of a picked along axis by indices (i32 or i64, any shape;
 * negative ones count from the end): the result's shape is a's dims
 * before axis, then indices' dims, then a's dims after axis (tf.gather).
 * An index out of range fails with WEFT_EINVAL naming it (when the
 * function runs, for traced indices). */
WEFT_API weft_value *weft_gather(weft_ctx *cx, weft_value *a, weft_value *indices, int axis);
/* Joins vs[0..n) (n >= 1) along an existing axis (concat) or a new one
 * (stack, where axis may be rank(vs[0])).  The inputs are promoted to the
 * widest dtype among them, like the operands of weft_add; concat's inputs
 * agree on every dim but axis, stack's on every dim. */
WEFT_API weft_value *weft_concat(weft_ctx *cx, weft_value *const *vs, size_t n, int axis);
WEFT_API weft_value *weft_stack(weft_ctx *cx, weft_value *const *vs, size_t n, int axis);
/* A dim of 1 inserted at axis (in -rank-1..rank), or removed: squeeze's
 * axis must be 1 (WEFT_ALL_AXES: every dim of 1; while tracing, a dim
 * unknown then makes the result's rank unknown, as in TensorFlow).  As
 * cheap as weft_reshape: a traced one writes in place when it can. */
WEFT_API weft_value *weft_expand_dims(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_squeeze(weft_ctx *cx, weft_value *a, int axis);
/* a repeated multiples[d] times along every dim d (rank(a) entries, each
 * >= 0; a's rank must be known). */
WEFT_API weft_value *weft_tile(weft_ctx *cx, weft_value *a, const int64_t *multiples);
/* a broadcast to dims[0..rank) by NumPy's rules (a's dims, aligned from
 * the right, are 1 or equal).  A dim of -1 keeps a's dim there, so a
 * shape with a dim unknown while tracing can be a target. */
WEFT_API weft_value *weft_broadcast_to(weft_ctx *cx, weft_value *a, int rank,
                                       const int64_t *dims);
/* A tensor of a's dtype and shape filled with 0, 1 or value (converted
 * like weft_cast).  Unlike weft_fill they take dims unknown while
 * tracing: the shape is read from a when the function runs. */
WEFT_API weft_value *weft_zeros_like(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_ones_like(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_fill_like(weft_ctx *cx, weft_value *a, double value);
/* a's dims as an i64[rank(a)] tensor: known when the function runs even
 * where they are unknown while tracing (then a constant after
 * compilation, when they are known). */
WEFT_API weft_value *weft_shape(weft_ctx *cx, weft_value *a);
/* The i64 index of the largest (argmax) or smallest (argmin) element
 * along axis, which is removed from the shape; WEFT_ALL_AXES: the index
 * into the flattened tensor, an i64[].  Ties give the first index; a NaN
 * counts as the extreme (the first NaN wins, as in NumPy).  An empty axis
 * is WEFT_EINVAL. */
WEFT_API weft_value *weft_argmax(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_argmin(weft_ctx *cx, weft_value *a, int axis);
/* Running sums along axis, of a's shape (WEFT_ALL_AXES: of the flattened
 * tensor, 1-D).  Dtypes as weft_sum: bool counts as i64, integers wrap,
 * f32 adds in f64 and rounds each sum.  Each sum adds in index order, so
 * a single long axis is not split over threads. */
WEFT_API weft_value *weft_cumsum(weft_ctx *cx, weft_value *a, int axis);

/* map_fn: fn (one argument, one output) applied to every slice elems[i]
 * along dim 0, results stacked along a new dim 0.  fn is traced once for
 * the slice spec.  At most parallel_iterations iterations are in flight
 * (0: no bound); iterations are spread over the workers by work stealing, in
 * eager and in traced mode alike.  fn must outlive every function whose
 * body maps it.  An iteration's error cancels the rest and is returned with
 * the iteration index in weft_errmsg(). */
WEFT_API weft_value *weft_map(weft_ctx *cx, weft_function *fn, weft_value *elems,
                              unsigned parallel_iterations);

/* py_function: fn runs on every execution, never at trace time only.  It
 * receives the input tensors (borrowed) and must store one new tensor
 * matching out_spec in *out (weft takes that reference).  A non-zero return
 * fails the call with WEFT_EHOST; a wrong output with WEFT_ESHAPE or
 * WEFT_EDTYPE.  Host calls are side effects: never removed as dead code, and
 * run in program order with the other host calls of the same body.  When
 * an op fails during a traced call, the host calls that do not depend on
 * it (through inputs or an earlier host call) may still run, even those
 * the body makes after it: eager mode stops at the failing op.
 * WEFT_HOST_SERIAL: calls of this fn never overlap, and the weft work such
 * a call starts (loops, spawns, function calls) runs on its own thread, one
 * piece at a time.  fn may run on any worker thread. */
#define WEFT_HOST_SERIAL 1u
typedef int (*weft_host_fn)(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user);
WEFT_API weft_value *weft_host_call(weft_ctx *cx, weft_host_fn fn, void *user,
                                    weft_value *const *in, size_t n_in,
                                    const weft_spec *out_spec, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
