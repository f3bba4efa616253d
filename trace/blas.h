/* weft's use of the BLAS (OpenBLAS) for matrix products: keeping the
 * BLAS's own threads out of the way while weft's workers call it.
 * trace/ internal.  In a build without a BLAS (WEFT_HAVE_BLAS undefined
 * or 0) the BLAS is never available and the rest is a no-op. */
#ifndef WEFT_TRACE_BLAS_H
#define WEFT_TRACE_BLAS_H

#include <stdbool.h>

/* Whether f32 and f64 products may call a BLAS: this build has one and
 * its library loaded (trace/blas_api.h).  The first call opens it; later
 * ones read the answer.  Without it, weft's own loops compute every
 * product and factorization (eig, which only LAPACK computes, is refused
 * while tracing). */
bool weft__blas_available(void);

/* The file the first weft__blas_available() opens: OpenBLAS's soname,
 * or "" in a build without a BLAS.  A test may name another (one that
 * does not exist) before the first call of its process. */
const char *weft__blas_library(void);
void weft__blas_set_library(const char *file);

/* Brackets one matmul's BLAS calls (on any threads): between hold and
 * release, the BLAS computes each call on its calling thread.  Holds nest
 * and may overlap across threads; every hold needs one release. */
void weft__blas_hold(void);
void weft__blas_release(void);

/* Called on the thread about to make a BLAS call, inside a hold or for a
 * call too small for the BLAS to thread: settles what the BLAS keeps per
 * thread (an OpenMP build's thread count). */
void weft__blas_thread_enter(void);

#endif
