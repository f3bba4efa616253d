/* weft's use of the BLAS (OpenBLAS) for matrix products: keeping the
 * BLAS's own threads out of the way while weft's workers call it.
 * trace/ internal.  Everything here is a no-op in a build without a BLAS
 * (WEFT_HAVE_BLAS undefined or 0). */
#ifndef WEFT_TRACE_BLAS_H
#define WEFT_TRACE_BLAS_H

#include <stdbool.h>

/* Whether this build calls a BLAS for f32 and f64 products. */
static inline bool weft__blas_available(void)
{
#if WEFT_HAVE_BLAS
    return true;
#else
    return false;
#endif
}

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
