/* LAPACK's Fortran entry points in OpenBLAS (no header ships with it) for
 * LU, Cholesky, QR, eigen- and singular values; trailing lengths of
 * character arguments, as gfortran passes them.  Only in a build with a
 * BLAS, and only through trace/blas_api.h, which calls them through its
 * table. */
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

extern void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
                    const double *tau, double *work, const int *lwork, int *info);
extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                    double *w, double *work, const int *lwork, int *iwork, const int *liwork,
                    int *info, size_t jobz_len, size_t uplo_len);
extern void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda,
                    double *s, double *u, const int *ldu, double *vt, const int *ldvt,
                    double *work, const int *lwork, int *iwork, int *info, size_t jobz_len);
extern void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda,
                   double *wr, double *wi, double *vl, const int *ldvl, double *vr,
                   const int *ldvr, double *work, const int *lwork, int *info,
                   size_t jobvl_len, size_t jobvr_len);

#endif
