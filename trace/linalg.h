/* What the linear-algebra kernels share: trace/kernel_linalg.c (the
 * batch driver, LU and Cholesky) and trace/kernel_decomp.c (qr, eigh and
 * svd of one matrix).  Matrices are worked on as column-major f64
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
 * result at dst (out_count elements, all written).  Returns 0, or nonzero
 * when LAPACK's iteration did not converge. */
int weft__decomp_one(const weft__node *n, int m, int cols, const char *src, weft_dtype dt,
                     char *dst, size_t out_count, double *scratch);

#endif
