/* OpenBLAS's C interface and LAPACK's entry points through a table of
 * pointers.  libopenblas is not linked: weft opens it with dlopen at the
 * first question whether it may call a BLAS (weft__blas_available, from
 * the kernels that choose between the BLAS and weft's own loops), so a
 * program that never multiplies matrices of floats never loads it.  Its
 * pthreads build starts a thread per core when it loads, and those threads
 * spin for about 130 ms before they sleep: every weft program paid that on
 * every core at start, and every criterion test's process with it.
 *
 * The kernels include this header and call the BLAS by its usual names:
 * each name below is a macro for its pointer in the table.  A function
 * called without a line here does not link (libweft links no BLAS); one
 * listed but declared neither by cblas.h nor by trace/lapack.h does not
 * compile.  Only in a build with a BLAS (WEFT_HAVE_BLAS).
 *
 * The table is written once, under pthread_once, by the first
 * weft__blas_available(); a kernel calls through it only after that call
 * returned true on some thread (which made the writes visible). */
#ifndef WEFT_TRACE_BLAS_API_H
#define WEFT_TRACE_BLAS_API_H

#include <cblas.h>

#include "trace/blas.h"
#include "trace/lapack.h"

/* Every function of the BLAS library weft calls. */
#define WEFT__BLAS_FUNCTIONS(X) \
    X(cblas_dgemm)              \
    X(cblas_dgemv)              \
    X(cblas_dswap)              \
    X(cblas_dsyrk)              \
    X(cblas_dtrsm)              \
    X(cblas_sgemm)              \
    X(cblas_sgemv)              \
    X(dgeev_)                   \
    X(dgeqrf_)                  \
    X(dgesdd_)                  \
    X(dgetrf_)                  \
    X(dgetrs_)                  \
    X(dlarfb_)                  \
    X(dlarft_)                  \
    X(dlaswp_)                  \
    X(dorgqr_)                  \
    X(dpotrf_)                  \
    X(dsyevd_)                  \
    X(openblas_get_num_threads) \
    X(openblas_get_parallel)    \
    X(openblas_set_num_threads)

struct weft__blas_api {
#define WEFT__BLAS_FIELD(name) __typeof__(name) *name;
    WEFT__BLAS_FUNCTIONS(WEFT__BLAS_FIELD)
#undef WEFT__BLAS_FIELD
    /* The library's handle (dlsym finds its dependencies' symbols through
     * it, libgomp's in an OpenMP build). */
    void *lib;
};

extern struct weft__blas_api weft__blas;

#ifndef WEFT__BLAS_LOADER
#define cblas_dgemm (weft__blas.cblas_dgemm)
#define cblas_dgemv (weft__blas.cblas_dgemv)
#define cblas_dswap (weft__blas.cblas_dswap)
#define cblas_dsyrk (weft__blas.cblas_dsyrk)
#define cblas_dtrsm (weft__blas.cblas_dtrsm)
#define cblas_sgemm (weft__blas.cblas_sgemm)
#define cblas_sgemv (weft__blas.cblas_sgemv)
#define dgeev_ (weft__blas.dgeev_)
#define dgeqrf_ (weft__blas.dgeqrf_)
#define dgesdd_ (weft__blas.dgesdd_)
#define dgetrf_ (weft__blas.dgetrf_)
#define dgetrs_ (weft__blas.dgetrs_)
#define dlarfb_ (weft__blas.dlarfb_)
#define dlarft_ (weft__blas.dlarft_)
#define dlaswp_ (weft__blas.dlaswp_)
#define dorgqr_ (weft__blas.dorgqr_)
#define dpotrf_ (weft__blas.dpotrf_)
#define dsyevd_ (weft__blas.dsyevd_)
#define openblas_get_num_threads (weft__blas.openblas_get_num_threads)
#define openblas_get_parallel (weft__blas.openblas_get_parallel)
#define openblas_set_num_threads (weft__blas.openblas_set_num_threads)
#endif

#endif
