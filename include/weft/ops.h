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
/* Matrix products, as NumPy's matmul (promotion as above):
 *   [m,k] x [k,n] -> [m,n];
 *   a 1-D operand is a vector: [k] x [k,n] -> [n], [m,k] x [k] -> [m], and
 *   [k] x [k] -> [] (a dot product);
 *   dims before the last two are batch dims, broadcast like an elementwise
 *   op's: [2,1,m,k] x [3,k,n] -> [2,3,m,n], and [k] x [4,k,n] -> [4,n].
 * WEFT_TRANSPOSE_A / WEFT_TRANSPOSE_B use the transpose of the last two
 * dims of a / b (a matrix, not a vector: for a 1-D operand the flag is
 * WEFT_ESHAPE) without moving its elements.  bool x bool is bool: the
 * logical or, over k, of the logical ands (NumPy's rule); a bool with a
 * number promotes as above.  Integers wrap around.  Errors: a scalar
 * operand or different inner dims (WEFT_ESHAPE), batch dims that do not
 * broadcast (WEFT_ESHAPE), unknown flag bits (WEFT_EINVAL).
 *
 * Floats are computed by OpenBLAS when weft was built with it, on weft's
 * workers only: while a weft product is in the BLAS, OpenBLAS's own thread
 * count is held at 1 (a pthreads build's count is process-wide, so a BLAS
 * call the program makes from another thread meanwhile runs on one thread;
 * docs/GUIDE.md says more).  The result is cut into tiles by its shape
 * alone, so it is the same bit for bit on any number of workers, eagerly,
 * traced and constant-folded; it may differ in the last bits from a naive
 * loop (the BLAS sums in its own order, with FMA).
 * weft_matmul(cx, a, b) is weft_matmul_ex(cx, a, b, 0). */
#define WEFT_TRANSPOSE_A 1u
#define WEFT_TRANSPOSE_B 2u
WEFT_API weft_value *weft_matmul_ex(weft_ctx *cx, weft_value *a, weft_value *b, unsigned flags);
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
