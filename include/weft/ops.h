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

#include <stdbool.h>

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
 * dtype's lowest value (-inf, INT32_MIN, INT64_MIN, false).  The same as
 * weft_reduce with one axis (or none) and keepdims false. */
WEFT_API weft_value *weft_sum(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_mean(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_reduce_max(weft_ctx *cx, weft_value *a, int axis);

/* Reductions over a set of axes.  axes[0..n_axes) may be negative (counted
 * from the end); NULL or n_axes 0 reduces every axis; an axis out of range
 * or given twice is WEFT_EINVAL.  keepdims keeps the reduced axes as 1s
 * (so the result broadcasts against a), else they are removed.
 *
 *   reduction   result dtype                    over no elements
 *   SUM         bool: i64; else a's (ints wrap)  0
 *   PROD        bool: i64; else a's (ints wrap)  1
 *   MEAN        float: a's; int, bool: f64       NaN
 *   MAX, MIN    a's                              MAX: -inf, INT_MIN, false;
 *                                                MIN: +inf, INT_MAX, true
 *   ANY, ALL    bool (non-zero is true)          ANY: false; ALL: true
 *   VAR, STD    float: a's; int, bool: f64       NaN
 *
 * MAX and MIN propagate NaN.  VAR is the mean of the squared deviations
 * from the mean (NumPy's ddof = 0), computed in two passes; STD is its
 * square root; both appear as those ops in weft_function_print_ops.
 *
 * Order of float reductions (SUM, PROD, MEAN, VAR, STD): each result
 * element combines its reduced elements in row-major order of the reduced
 * axes, in fixed chunks of 1024 consecutive elements; a chunk accumulates
 * one element after the other, the chunks' partial results are combined in
 * chunk order.  f32 inputs accumulate in f64 and round once at the end.
 * The chunks do not depend on the worker count, so the result is the same
 * bit for bit on any number of workers, eagerly, traced (fused or not) and
 * when the compiler folds it into a constant.  It may differ in the last
 * bits from a plain left-to-right loop (for over 1024 elements) and from
 * NumPy's pairwise summation. */
typedef enum weft_reduction {
    WEFT_R_SUM, WEFT_R_MEAN, WEFT_R_MAX, WEFT_R_MIN, WEFT_R_PROD,
    WEFT_R_ANY, WEFT_R_ALL, WEFT_R_VAR, WEFT_R_STD
} weft_reduction;
WEFT_API weft_value *weft_reduce(weft_ctx *cx, weft_reduction r, weft_value *a,
                                 const int *axes, size_t n_axes, bool keepdims);

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
