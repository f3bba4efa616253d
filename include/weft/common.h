/* weft: shared declarations of the public API: export macro, opaque handles,
 * error codes.  Include <weft.h> rather than this file. */
#ifndef WEFT_COMMON_H
#define WEFT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WEFT_BUILDING) && defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* Opaque handles.  Each header that creates one says who owns it. */
typedef struct weft_runtime  weft_runtime;
typedef struct weft_tensor   weft_tensor;
typedef struct weft_ctx      weft_ctx;
typedef struct weft_value    weft_value;
typedef struct weft_function weft_function;
typedef struct weft_concrete weft_concrete;

/* The error table: name, value, message.  Codes are negative; 0 is success.
 * The POSIX-like ones use the negated errno value of Linux so that they read
 * familiarly in a debugger; the weft-specific ones live above 1000. */
#define WEFT_ERRNO_MAP(XX)                                                     \
    XX(EINVAL,     -22,   "invalid argument")                                   \
    XX(ENOMEM,     -12,   "out of memory")                                      \
    XX(EAGAIN,     -11,   "resource temporarily unavailable")                   \
    XX(EIO,        -5,    "input/output error")                                 \
    XX(ECANCELED,  -125,  "operation canceled")                                 \
    XX(ESIGNATURE, -1001, "arguments do not match the input signature")         \
    XX(ESHAPE,     -1002, "incompatible shapes")                                \
    XX(EDTYPE,     -1003, "incompatible dtypes")                                \
    XX(EHOST,      -1004, "a host callback failed")                             \
    XX(EBODY,      -1005, "the function body failed")

/* The helper's name has no double underscore: C++ reserves every such
 * identifier, and this header is C++'s too. */
typedef enum weft_errno {
#define WEFT_ERR_ENUM_(name, value, msg) WEFT_##name = (value),
    WEFT_ERRNO_MAP(WEFT_ERR_ENUM_)
#undef WEFT_ERR_ENUM_
    WEFT_OK = 0
} weft_errno;

/* A static string describing err ("invalid argument"); "unknown error" for a
 * code not in the table.  Any thread. */
WEFT_API const char *weft_strerror(int err);
/* The code's name ("WEFT_EINVAL"); "WEFT_UNKNOWN" for a code not in the
 * table.  Any thread. */
WEFT_API const char *weft_err_name(int err);
/* A sentence about the last failure on the calling thread, naming the
 * culprit ("weft_mul: f32[3] and f32[4] do not broadcast").  Thread-local,
 * owned by weft, valid until the next failing call on this thread; "" when
 * nothing failed yet.  Successful calls leave it alone. */
WEFT_API const char *weft_errmsg(void);
/* Sets the calling thread's weft_errmsg() to the printf-style sentence and
 * returns code: for libraries built on weft's public API, whose failures
 * then read like weft's own (`return weft_errorf(WEFT_EINVAL, "...")`).
 * Any thread. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
WEFT_API int weft_errorf(int code, const char *fmt, ...);

#ifdef __cplusplus
}
#endif
#endif
