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

#include "base/sanitizer.h"
#include "trace/ir.h"
#include "trace/tensor_impl.h"

/* The hot loops (elementwise tiles, reduction rows and columns) are built
 * twice on x86-64, for AVX2 and for the baseline, and the loader picks
 * one for the CPU it runs on (an ifunc).  No FMA: results are the same
 * bits either way (every op rounds as IEEE says; reductions keep their
 * order).  Not under ThreadSanitizer, whose instrumented ifunc resolvers
 * would run before its runtime is set up. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__OPTIMIZE__) && \
    !defined(WEFT__TSAN) && !defined(WEFT_NO_SIMD_CLONES)
#define WEFT__SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define WEFT__SIMD_CLONES
#endif

/* log |gamma(x)| without glibc's global signgam (kernel_ew.c), for the
 * interpreter and the native tier alike. */
double weft__lgamma(double x);
float weft__lgammaf(float x);
/* Special functions libm lacks (special.c): digamma, the inverse error
 * function and the standard normal quantile, in double; the f32 forms
 * round the double result. */
double weft__digamma(double x);
float weft__digammaf(float x);
double weft__erfinv(double x);
float weft__erfinvf(float x);
double weft__ndtri(double p);
float weft__ndtrif(float p);
/* The modified Bessel functions of the first kind of orders 0 and 1,
 * plain and scaled by exp(-|x|) (special_bessel.c), as above. */
double weft__bessel_i0(double x);
float weft__bessel_i0f(float x);
double weft__bessel_i0e(double x);
float weft__bessel_i0ef(float x);
double weft__bessel_i1(double x);
float weft__bessel_i1f(float x);
double weft__bessel_i1e(double x);
float weft__bessel_i1ef(float x);
/* The Bessel functions of the first and second kind of orders 0 and 1
 * (special_bessel_jy.c), the f32 forms from the double ones. */
double weft__bessel_j0(double x);
float weft__bessel_j0f(float x);
double weft__bessel_j1(double x);
float weft__bessel_j1f(float x);
double weft__bessel_y0(double x);
float weft__bessel_y0f(float x);
double weft__bessel_y1(double x);
float weft__bessel_y1f(float x);
/* The modified Bessel functions of the second kind of orders 0 and 1,
 * plain and scaled by exp(x) (special_bessel_k.c), as above. */
double weft__bessel_k0(double x);
float weft__bessel_k0f(float x);
double weft__bessel_k0e(double x);
float weft__bessel_k0ef(float x);
double weft__bessel_k1(double x);
float weft__bessel_k1f(float x);
double weft__bessel_k1e(double x);
float weft__bessel_k1ef(float x);
/* The regularized incomplete gamma functions P(a, x) and Q(a, x)
 * (special_igamma.c), as above. */
double weft__igamma(double a, double x);
float weft__igammaf(float a, float x);
double weft__igammac(double a, double x);
float weft__igammacf(float a, float x);
/* d/da P(a, x) and the implicit derivative of a Gamma(a) sample in a
 * (TensorFlow's IgammaGradA and RandomGammaGrad; special_igamma.c). */
double weft__igamma_grad_a(double a, double x);
float weft__igamma_grad_af(float a, float x);
double weft__random_gamma_grad(double alpha, double sample);
float weft__random_gamma_gradf(float alpha, float sample);
/* The regularized incomplete beta function I_x(a, b)
 * (special_betainc.c), as above. */
double weft__betainc(double a, double b, double x);
float weft__betaincf(float a, float b, float x);
/* The Hurwitz zeta function zeta(x, q) and polygamma psi^(n)(x)
 * (special_zeta.c), as above. */
double weft__zeta(double x, double q);
float weft__zetaf(float x, float q);
double weft__polygamma(double n, double x);
float weft__polygammaf(float n, float x);
/* The exponential integral Ei, Dawson's integral, Spence's function and
 * the Fresnel integrals C and S (special_integrals.c), as above. */
double weft__expint(double x);
float weft__expintf(float x);
double weft__dawsn(double x);
float weft__dawsnf(float x);
double weft__spence(double x);
float weft__spencef(float x);
double weft__fresnel_cos(double x);
float weft__fresnel_cosf(float x);
double weft__fresnel_sin(double x);
float weft__fresnel_sinf(float x);

/* Work (elements, or multiply-adds) above which weft__kernel_eval may cut a
 * node into several chunks when given a runtime.  No result depends on the
 * cut: reductions combine fixed chunks of WEFT__REDUCE_CHUNK (below). */
#define WEFT__KERNEL_SPLIT_MIN 32768

/* Reductions (kernel_reduce.c).  Each output element combines its reduced
 * elements in row-major order of the reduced axes, in chunks of this many
 * consecutive elements: a chunk accumulates sequentially from the
 * identity, and partials combine in chunk order.  Fused groups follow the
 * same order, so every path gives the same bits on any worker count. */
#define WEFT__REDUCE_CHUNK 1024

/* An accumulator: u64 for integer sums and products (wrapping), i64 for
 * integer max and min, double for floats. */
typedef union weft__acc {
    uint64_t u;
    int64_t  i;
    double   d;
} weft__acc;

/* acc[t] = op(acc[t], each element of row t in order), for `rows` rows of
 * len contiguous elements. */
typedef void (*weft__red_rows_fn)(const void *src, int64_t rows, int64_t len, weft__acc *acc);
/* acc[c] = op(acc[c], src[r * stride + c]) for r < rows in order, c < cols. */
typedef void (*weft__red_cols_fn)(const void *src, int64_t rows, int64_t stride, int64_t cols,
                                  weft__acc *acc);
/* into[i] = op(into[i], from[i]) for i < n. */
typedef void (*weft__red_combine_fn)(weft__acc *into, const weft__acc *from, int64_t n);
/* out[i] = the result of acc[i] (mean: divided by len) in the output dtype. */
typedef void (*weft__red_fin_fn)(const weft__acc *acc, int64_t n, int64_t len, void *out);

typedef struct weft__reducer {
    weft__red_rows_fn    rows;
    weft__red_cols_fn    cols;
    weft__red_combine_fn combine;
    weft__red_fin_fn     fin;
    weft__acc            init;   /* the identity: each chunk starts from it */
} weft__reducer;

/* The loops of reduction op (SUM, MEAN, PROD, REDUCE_MAX, REDUCE_MIN) over
 * input dtype dt; false for a pair the op does not take. */
bool weft__reducer_of(weft__op op, weft_dtype dt, weft__reducer *r);

/* The chunks of a reduction of `width` outputs, combined in order:
 * chunk(ctx, c, part) computes chunk c's partials part[0..width) from the
 * identity; chunks run on rt's workers when threads > 1, in rounds whose
 * partials fit a bounded buffer, and combine in chunk order; the total
 * (over len elements) is finalized into out.  0 or WEFT_ENOMEM. */
typedef void (*weft__chunk_partial_fn)(void *ctx, int64_t c, weft__acc *part);
int weft__reduce_chunks(weft_runtime *rt, size_t threads, const weft__reducer *red,
                        int64_t n_chunks, int64_t width, int64_t len,
                        weft__chunk_partial_fn chunk, void *ctx, void *out);

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

/* weft__kernel_eval for a node whose n->spec the caller has already
 * inferred from specs equal to these inputs' (an eager op): the inference
 * is not repeated when n->spec is concrete (debug builds, with
 * WEFT_SELF_CHECKS, check that it agrees). */
int weft__kernel_eval_known(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
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

/* The same over a tile of rows x cols, written contiguously to out:
 *   out[r * cols + c] = op(in[k][r * row_stride[k] + c * col_step[k]] ...)
 * with col_step[k] 1 (a run) or 0 (one value per row), row_stride[k] in
 * elements (0: the same for every row).  So a [rows, cols] block, a
 * scalar, a repeated row (row_stride 0, col_step 1) and a value per row
 * (row_stride 1, col_step 0) are all one call. */
void weft__ew_tile(weft__op op, weft_dtype in_dt, weft_dtype out_dt, const void *const *in,
                   const int64_t *row_stride, const unsigned char *col_step, void *out,
                   size_t rows, size_t cols);

/* The loop weft__ew_tile runs for (op, in_dt, out_dt), for callers that
 * run it over many tiles (rows, cols >= 1); NULL for a pair the contract
 * rules out. */
typedef void (*weft__ew_fn)(const void *const *in, const int64_t *row_stride,
                            const unsigned char *col_step, void *out, size_t rows, size_t cols);
weft__ew_fn weft__ew_lookup(weft__op op, weft_dtype in_dt, weft_dtype out_dt);

/* Python's float // and integer pow on one element, as the loops compute
 * them: branchy bodies the native tier calls instead of generating. */
float   weft__floordiv_f32(float a, float b);
double  weft__floordiv_f64(double a, double b);
/* x times 2 to the power e, an integer carried in x's float dtype (the
 * LDEXP op's second operand), C's ldexp with its one rounding. */
double  weft__ldexp(double x, double e);
float   weft__ldexpf(float x, float e);
int32_t weft__pow_i32(int32_t a, int32_t b);
int64_t weft__pow_i64(int64_t a, int64_t b);
/* NumPy's gcd and lcm of integers (loops the native tier calls). */
int32_t weft__gcd_i32(int32_t a, int32_t b);
int64_t weft__gcd_i64(int64_t a, int64_t b);
int32_t weft__lcm_i32(int32_t a, int32_t b);
int64_t weft__lcm_i64(int64_t a, int64_t b);

/* Work splitting shared by the kernels (kernel_chunks.c).  chunk_count:
 * how many chunks `work` units are cut into on rt (1 when rt is NULL or
 * the work is small); task_count: how many tasks a kernel whose result
 * does not depend on the cut makes of `items` items for that many threads
 * (several per thread, at most one per item); chunk_begin: the first item
 * of chunk c of n over total items; run_chunks: fn over chunk indices
 * [0, n), in parallel when n > 1. */
size_t   weft__chunk_count(weft_runtime *rt, uint64_t work);
/* a * b, or UINT64_MAX when that overflows (work counts only compare). */
static inline uint64_t weft__sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
/* weft__chunk_count, at most `items` (the indivisible units of the work,
 * at least 1). */
size_t   weft__chunk_count_of(weft_runtime *rt, uint64_t work, uint64_t items);
size_t   weft__task_count(size_t threads, uint64_t items);
uint64_t weft__chunk_begin(uint64_t total, size_t n, size_t c);
int      weft__run_chunks(weft_runtime *rt, size_t n, weft_range_fn fn, void *ctx);
/* weft__run_chunks inside a BLAS hold (trace/blas.h) when blas is true:
 * for kernels whose chunks call the BLAS. */
int      weft__run_chunks_blas(weft_runtime *rt, size_t n, weft_range_fn fn, void *ctx,
                               bool blas);

/* Element i of an i32 or i64 index tensor (indices, segment ids, bins). */
static inline int64_t weft__index_at(const weft_tensor *idx, int64_t i)
{
    return idx->dtype == WEFT_I64 ? ((const int64_t *)weft_tensor_data(idx))[i]
                                  : ((const int32_t *)weft_tensor_data(idx))[i];
}

/* Element i of an f32 or f64 tensor, as a double (scores, boxes, logits). */
static inline double weft__real_at(const weft_tensor *t, int64_t i)
{
    return t->dtype == WEFT_F32 ? ((const float *)weft_tensor_data(t))[i]
                                : ((const double *)weft_tensor_data(t))[i];
}

/* The kernels behind weft__kernel_eval_into, by kind (same contract). */
int weft__eval_elementwise(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor *out);
int weft__eval_reduce(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      weft_tensor *out);
int weft__eval_matmul(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                      const weft_tensor *b, weft_tensor *out);

#endif
