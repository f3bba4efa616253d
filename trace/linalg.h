/* What the linear-algebra kernels share: trace/kernel_linalg.c (the
 * batch driver, LU and Cholesky), trace/kernel_decomp.c (qr, eigh and
 * svd of one matrix), trace/kernel_expm.c (the matrix exponential) and
 * trace/kernel_tridiag.c.  Matrices are worked on as column-major f64
 * (element (i, j) at i + j * ld); tensors hold them row-major in their
 * own dtype (f32 or f64). */
#ifndef WEFT_TRACE_LINALG_H
#define WEFT_TRACE_LINALG_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/ir.h"

/* Up to this many rows, weft's own loops (a LAPACK call's checks and
 * blocking cost more than the arithmetic of a small matrix). */
#define WEFT__LINALG_LOOP_MAX 16

/* Whether a square matrix of n rows goes to LAPACK: only in a build with
 * a BLAS, and above WEFT__LINALG_LOOP_MAX. */
bool weft__linalg_lapack(int n);

/* LU with partial pivoting of the n x n matrix a in place (a = P L U,
 * ipiv[j] the row swapped with row j, counted from 0), by LAPACK or the
 * loops as weft__linalg_lapack says, in column tiles over rt's workers
 * where weft__linalg_tiled says (rt NULL: on the calling thread).
 * Returns 0, a positive number when a pivot is 0 (the factors are still
 * complete), or a negative weft error when the runtime failed a loop. */
int weft__linalg_lu_factor(weft_runtime *rt, int n, double *a, int *ipiv);
/* Solves a x = b (a^T x = b when trans) for k columns of b in place,
 * with the factors of weft__linalg_lu_factor (tiles of b's columns where
 * weft__linalg_tiled says); scratch holds n x n.  Returns 0 or a
 * negative weft error. */
int weft__linalg_lu_solve(weft_runtime *rt, int n, int k, double *lu, int *ipiv, bool trans,
                          double *b, double *scratch);
/* a^-1 into the n x n b from the factors of weft__linalg_lu_factor: in
 * tiles of b's columns where weft__linalg_tiled says (u^-1 l^-1, 4/3 n^3
 * flops), else by solving for the identity; scratch holds n x n.  Returns
 * 0 or a negative weft error. */
int weft__linalg_lu_inverse(weft_runtime *rt, int n, double *lu, int *ipiv, double *b,
                            double *scratch);

/* From this many rows, LU and Cholesky factor a matrix in column tiles
 * over the workers, and LU and triangular solves cut their right-hand
 * sides into tiles (trace/kernel_linalg_tiled.c): below it, LAPACK's own
 * call on one thread costs less than a step's hand-offs.  Tiles depend on
 * the matrix alone, so results do not depend on the worker count. */
#define WEFT__LINALG_TILED_MIN 512
/* The columns of one panel of the tiled factorizations (LAPACK's own
 * block size for dgetrf). */
#define WEFT__LINALG_PANEL 64

/* Whether a square matrix of n rows takes the tiled paths: only in a
 * build with a BLAS, from WEFT__LINALG_TILED_MIN rows. */
bool weft__linalg_tiled(int n);
/* weft__linalg_lu_factor's factors and pivots (the same contract), the
 * trailing updates over rt's workers (rt NULL: on the calling thread).
 * Returns 0, the first zero pivot's row counted from 1, or a negative
 * weft error when the runtime failed the loop. */
int weft__linalg_lu_tiled(weft_runtime *rt, int n, double *a, int *ipiv);
/* The lower Cholesky factor of a in place, a held row-major (unlike the
 * other functions here: LAPACK reads its lower triangle as the upper one
 * of a column-major matrix, so nothing is transposed), its upper triangle
 * left as it was.  Returns 0, nonzero when a is not positive definite, or
 * a negative weft error. */
int weft__linalg_cholesky_tiled(weft_runtime *rt, int n, double *a);
/* weft__linalg_lu_solve over tiles of b's k columns.  Returns 0 or a
 * negative weft error. */
int weft__linalg_lu_solve_tiled(weft_runtime *rt, int n, int k, const double *lu, int *ipiv,
                                bool trans, double *b);
/* The inverse of the matrix whose factors and pivots (counted from 0)
 * weft__linalg_lu_tiled made, into the n x n x, in tiles of its columns:
 * u^-1 l^-1 with the swaps undone on its columns, as LAPACK's dgetri
 * (4/3 n^3 flops where solving for the identity's columns takes 2 n^3).
 * Returns 0 or a negative weft error. */
int weft__linalg_lu_inverse_tiled(weft_runtime *rt, int n, const double *lu, const int *ipiv,
                                  double *x);
/* x of op(t) x = b for the triangle t of a (flags: WEFT__LINALG_LOWER,
 * WEFT__LINALG_ADJOINT), over tiles of b's k columns.  Returns 0 or a
 * negative weft error. */
int weft__linalg_tri_solve_tiled(weft_runtime *rt, int n, int k, const double *a,
                                 unsigned flags, double *b);

/* The f64 scratch of the two functions below beyond a, tau and q: each
 * panel's T factor and a workspace per tile. */
size_t weft__linalg_qr_tiled_scratch(int m, int n, int qc);
/* Householder QR of the m x n column-major a in place, as LAPACK's dgeqrf
 * leaves it (r on and above the diagonal, the reflectors below, their
 * factors in tau), the trailing updates over rt's workers; work
 * (weft__linalg_qr_tiled_scratch) keeps each panel's block factor T for
 * weft__linalg_qr_q_tiled.  Returns 0 or a negative weft error. */
int weft__linalg_qr_tiled(weft_runtime *rt, int m, int n, double *a, double *tau,
                          double *work);
/* q's qc columns (m x qc, apart from a) from weft__linalg_qr_tiled's a and
 * work: the block reflectors applied to the identity's columns, in tiles
 * of columns over rt's workers.  Returns 0 or a negative weft error. */
int weft__linalg_qr_q_tiled(weft_runtime *rt, int m, int n, int qc, const double *a,
                            double *work, double *q);

/* Row-major [rows, cols] of dtype dt at src into column-major f64 at dst
 * (leading dim rows). */
void weft__linalg_load(const char *src, weft_dtype dt, int rows, int cols, double *dst);
/* Column-major f64 [rows, cols] at src (leading dim ld) into row-major
 * dt at dst, whose rows are dst_row elements apart. */
void weft__linalg_store(const double *src, int ld, int rows, int cols, char *dst,
                        size_t dst_row, weft_dtype dt);
/* Element i of dst (dtype dt) set to v. */
void weft__linalg_store_at(char *dst, weft_dtype dt, size_t i, double v);

/* The decompositions (QR, EIGH, SVD), see packed_dims in
 * trace/infer_linalg.c for their results' layout. */
bool weft__linalg_is_decomp(weft__op op);
/* Whether a decomposition of [m, n] goes to LAPACK (each has its own
 * limit for the loops). */
bool weft__decomp_lapack(const weft__node *n, int m, int cols);
/* The f64 scratch one matrix [m, cols] needs (LAPACK's workspace
 * included, asked of LAPACK); 0 when LAPACK refuses the size. */
size_t weft__decomp_scratch(const weft__node *n, int m, int cols);
/* Decomposes the row-major matrix [m, cols] at src into the packed
 * result at dst (out_count elements, all written); a large QR runs in
 * tiles over rt's workers.  Returns 0, or nonzero
 * when LAPACK's iteration did not converge. */
int weft__decomp_one(weft_runtime *rt, const weft__node *n, int m, int cols, const char *src,
                     weft_dtype dt, char *dst, size_t out_count, double *scratch);

/* The first failed item of a batch cut into chunks (failed[c]: chunk c's
 * first failed item, or -1) as WEFT_EINVAL "weft_OP: <item> <index> of
 * <t's spec> <why>", or 0 when none failed. */
int weft__linalg_batch_failure(const weft__node *n, const int64_t *failed, size_t chunks,
                               const char *item, const weft_tensor *t, const char *why);

/* z = x y, all n x n column-major (z apart from x and y), by the BLAS
 * where weft__linalg_lapack(n) says so, in tiles of z's columns over rt's
 * workers where weft__linalg_tiled(n) does (trace/kernel_expm.c).
 * Returns 0 or a negative weft error. */
int weft__linalg_mat_mul(weft_runtime *rt, int n, const double *x, const double *y, double *z);
/* The 1-norm of the n x n column-major a: the largest column sum of
 * magnitudes (NaN if any is). */
double weft__linalg_one_norm(int n, const double *a);

/* The f64 scratch of weft__expm_one for an n x n matrix. */
size_t weft__expm_scratch(int n);
/* The exponential of the n x n matrix a in place (trace/kernel_expm.c),
 * its products and solve over rt's workers from WEFT__LINALG_TILED_MIN
 * rows; work holds weft__expm_scratch(n) doubles, ipiv n ints.  Returns
 * 0 or a negative weft error. */
int weft__expm_one(weft_runtime *rt, int n, double *a, double *work, int *ipiv);
/* The f64 scratch of weft__sqrtm_one for an n x n matrix. */
size_t weft__sqrtm_scratch(int n);
/* The principal square root of the n x n matrix a in place, or NaN in
 * every entry where it has none that is real and the iteration reaches
 * (trace/kernel_sqrtm.c), over rt's workers as weft__expm_one; work holds
 * weft__sqrtm_scratch(n) doubles, ipiv n ints.  Returns 0 or a negative
 * weft error. */
int weft__sqrtm_one(weft_runtime *rt, int n, double *a, double *work, int *ipiv);
/* The f64 scratch of weft__logm_one for an n x n matrix. */
size_t weft__logm_scratch(int n);
/* The principal logarithm of the n x n matrix a in place, or NaN in every
 * entry where it has none that is real and the square roots reach
 * (trace/kernel_logm.c), over rt's workers as weft__expm_one; work holds
 * weft__logm_scratch(n) doubles, ipiv n ints.  Returns 0 or a negative
 * weft error. */
int weft__logm_one(weft_runtime *rt, int n, double *a, double *work, int *ipiv);
/* weft__linalg_mat_mul's tiles (trace/kernel_linalg_tiled.c; a build with
 * a BLAS).  Returns 0 or a negative weft error. */
int weft__linalg_mat_mul_tiled(weft_runtime *rt, int n, const double *x, const double *y,
                               double *z);

#endif
