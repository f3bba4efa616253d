/* LAPACK's Fortran entry points for LU, Cholesky and QR in OpenBLAS (no
 * header ships with it), for trace/kernel_linalg.c,
 * trace/kernel_linalg_tiled.c and trace/kernel_decomp.c; trailing
 * lengths of character arguments, as gfortran passes them.  Only in a
 * build with a BLAS. */
#ifndef WEFT_TRACE_LAPACK_H
#define WEFT_TRACE_LAPACK_H

#include <stddef.h>

extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info,
                    size_t trans_len);
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
                    size_t uplo_len);
extern void dlaswp_(const int *n, double *a, const int *lda, const int *k1, const int *k2,
                    const int *ipiv, const int *incx);

extern void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
                    double *work, const int *lwork, int *info);
extern void dlarft_(const char *direct, const char *storev, const int *n, const int *k,
                    const double *v, const int *ldv, const double *tau, double *t,
                    const int *ldt, size_t direct_len, size_t storev_len);
extern void dlarfb_(const char *side, const char *trans, const char *direct, const char *storev,
                    const int *m, const int *n, const int *k, const double *v, const int *ldv,
                    const double *t, const int *ldt, double *c, const int *ldc, double *work,
                    const int *ldwork, size_t side_len, size_t trans_len, size_t direct_len,
                    size_t storev_len);

#endif
