/* weft tensors, specs and call arguments.  Include <weft.h> rather than
 * this file. */
#ifndef WEFT_TENSOR_H
#define WEFT_TENSOR_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_dtype { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 } weft_dtype;
#define WEFT_MAX_RANK 8
#define WEFT_DIM_ANY  (-1)   /* unknown dim, like None in a TensorSpec */
#define WEFT_RANK_ANY (-1)   /* unknown rank, like TensorSpec(shape=None) */

/* Creates a tensor of dtype dt and shape dims[0..rank) (rank 0: a scalar;
 * dims may be NULL then).  data is copied (NULL: zeros); its layout is
 * row-major, one element of dt each (bool: one byte, 0 or 1).  Data is
 * 64-byte aligned.  *out holds one reference.  Any thread. */
WEFT_API int weft_tensor_create(weft_dtype dt, int rank, const int64_t *dims,
                                const void *data, weft_tensor **out);
/* Adds a reference and returns t (NULL stays NULL).  Atomic: any thread. */
WEFT_API weft_tensor *weft_tensor_retain(weft_tensor *t);
/* Drops a reference; the last one frees the tensor.  NULL is fine.
 * Atomic: any thread, on a reference that thread owns. */
WEFT_API void weft_tensor_release(weft_tensor *t);
/* Accessors; a tensor is immutable once shared, so any thread may read.
 * They return WEFT_BOOL / -1 / NULL / -1 for a NULL tensor. */
WEFT_API weft_dtype     weft_tensor_dtype(const weft_tensor *t);
WEFT_API int            weft_tensor_rank(const weft_tensor *t);
WEFT_API const int64_t *weft_tensor_dims(const weft_tensor *t);   /* borrowed */
WEFT_API int64_t        weft_tensor_numel(const weft_tensor *t);
WEFT_API const void    *weft_tensor_data(const weft_tensor *t);   /* borrowed */

/* A tensor's type: dtype and shape, where a dim may be WEFT_DIM_ANY and the
 * rank may be WEFT_RANK_ANY (dims unused then).  A plain value. */
typedef struct weft_spec {
    weft_dtype dtype;
    int rank;
    int64_t dims[WEFT_MAX_RANK];
} weft_spec;
/* Parses "f32[?,3]" ('?' an unknown dim), "i32[]" (a scalar), "f64[*]" (any
 * rank).  dtypes: bool i32 i64 f32 f64, lower case; no spaces anywhere.
 * WEFT_EINVAL on malformed text.  Any thread. */
WEFT_API int weft_spec_parse(const char *text, weft_spec *out);
/* Writes the text form into buf (always NUL-terminated when size > 0).
 * Returns the length it needs, like snprintf, or a negative code.  Any
 * thread. */
WEFT_API int weft_spec_format(const weft_spec *s, char *buf, size_t size);
/* The name of a dtype ("f32", a static string), or NULL for an unknown
 * value.  Any thread (as is weft_dtype_size). */
WEFT_API const char *weft_dtype_name(weft_dtype dt);
/* The size of one element in bytes, or 0 for an unknown value. */
WEFT_API size_t weft_dtype_size(weft_dtype dt);

/* The spec of t (every dim known).  WEFT_EINVAL for a NULL t or out.  Any
 * thread. */
WEFT_API int weft_tensor_spec(const weft_tensor *t, weft_spec *out);
/* Writes t as one line per row, NumPy style, followed by a newline:
 *   <tensor f32[2,3] = [[1, 2.5, 3],
 *                       [4,   5, 6]]>
 * Elements right-aligned to one width; floats in their shortest round-trip
 * form (0.1, 1e+20, -0, nan, -inf); bools true/false.  Past 1000 elements
 * each dim shows its first and last 3 items with "..." between.  0, or
 * WEFT_EINVAL (NULL t or out), WEFT_EIO (the stream failed).  Any thread;
 * concurrent prints to one stream may interleave. */
WEFT_API int weft_tensor_print(const weft_tensor *t, FILE *out);

/* An argument of a function call: a tensor (keyed by dtype and shape), or a
 * static scalar (keyed by its value; in the body a weak scalar, like a
 * Python number: see "Weak scalars" in ops.h).  A plain value; a tensor
 * argument is borrowed for the duration of the call. */
typedef enum weft_arg_kind { WEFT_ARG_TENSOR, WEFT_ARG_I64, WEFT_ARG_F64 } weft_arg_kind;
typedef struct weft_arg {
    weft_arg_kind kind;
    union { weft_tensor *tensor; int64_t i64; double f64; } u;
} weft_arg;
WEFT_API weft_arg weft_arg_tensor(weft_tensor *t);
WEFT_API weft_arg weft_arg_i64(int64_t v);
WEFT_API weft_arg weft_arg_f64(double v);

#ifdef __cplusplus
}
#endif
#endif
