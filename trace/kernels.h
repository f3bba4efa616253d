/* The kernel layer of trace/: shape inference and computation of single
 * nodes, shared by eager mode (ops.c), constant folding (the compiler) and
 * the executor.  trace/ internal; cache/ never includes it.
 *
 * Invariant established by ops.c when it records or runs a node: the
 * inputs of BINARY and UNARY nodes and the two value inputs of WHERE have
 * the same dtype (promotion inserted CAST nodes); WHERE's condition is bool;
 * that dtype is one the op's class takes (trace/ew_rules.h: the float
 * functions and mean get floats, ints having been cast to f64). */
#ifndef WEFT_TRACE_KERNELS_H
#define WEFT_TRACE_KERNELS_H

#include "trace/ir.h"
#include "trace/tensor_impl.h"

/* Work (elements, or multiply-adds) above which weft__kernel_eval may cut a
 * node into several chunks when given a runtime.  Float sums and means
 * combine per-chunk partials, so their rounding depends on the chunk
 * count: computed without a runtime (serially) they can differ in the last
 * bits from the same node computed on a runtime with several intra-op
 * threads. */
#define WEFT__KERNEL_SPLIT_MIN 32768

/* Infers the output spec of n (n->op and n->attr; n->spec is ignored) from
 * its input specs in[0..n->n_in).  Unknown dims stay unknown; a conflict
 * between known dims returns WEFT_ESHAPE / WEFT_EDTYPE with weft_errmsg()
 * naming the op and the two shapes ("weft_mul: f32[3] and f32[4] do not
 * broadcast").  Valid for every op except MAP, HOST and FUSED. */
int weft__infer_spec(const weft__node *n, const weft_spec *in, weft_spec *out);

/* Computes n on concrete inputs in[0..n->n_in) into a new tensor *out,
 * splitting large elementwise and reduction work into at most
 * weft__intra_op_threads(rt) chunks with weft_parallel_for (rt NULL:
 * serially).  Shapes are re-inferred from the concrete inputs, so specs
 * with unknown dims are fine.  Valid for LEAF ops other than ARG, and every
 * op except MAP, HOST and FUSED. */
int weft__kernel_eval(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor **out);

/* Computes n into out, a tensor the caller holds exclusively whose dtype,
 * rank, dims, numel and nbytes already hold n's output spec for these
 * inputs (the caller inferred or validated it; nothing is re-checked) and
 * whose data holds at least nbytes.  out may share its buffer with an
 * input only when both have the same dtype and shape (elementwise ops,
 * cumsum, fill_like) or for the SHAPE ops.  Valid for FILL, RANGE,
 * elementwise, reduction, SHAPE, ARRAY and MATMUL nodes; splits large work
 * like weft__kernel_eval. */
int weft__kernel_eval_into(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor *out);

/* Elementwise over contiguous blocks, for fused loops:
 *   out[i] = op(in[0][i * step[0]], in[1][i * step[1]], ...)  for i < len,
 * where step[k] is 1 (a block) or 0 (a broadcast scalar).  in_dt is the
 * dtype of the value inputs (WHERE: of inputs 1 and 2; input 0 is bool);
 * out_dt is the node's output dtype (CAST: the target).  op is UNARY,
 * BINARY, TERNARY or CAST. */
void weft__ew_block(weft__op op, weft_dtype in_dt, weft_dtype out_dt,
                    const void *const *in, const unsigned char *step,
                    void *out, size_t len);

/* Work splitting shared by the kernels (kernel_chunks.c).  chunk_count:
 * how many chunks `work` units are cut into on rt (1 when rt is NULL or
 * the work is small); chunk_begin: the first item of chunk c of n over
 * total items; run_chunks: fn over chunk indices [0, n), in parallel when
 * n > 1. */
size_t   weft__chunk_count(weft_runtime *rt, uint64_t work);
uint64_t weft__chunk_begin(uint64_t total, size_t n, size_t c);
int      weft__run_chunks(weft_runtime *rt, size_t n, weft_range_fn fn, void *ctx);

/* The kernels behind weft__kernel_eval_into, by kind (same contract). */
int weft__eval_elementwise(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor *out);
int weft__eval_reduce(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      weft_tensor *out);
int weft__eval_matmul(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      const weft_tensor *b, weft_tensor *out);

#endif
