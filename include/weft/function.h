/* weft functions: tracing, the trace cache, concrete functions and the
 * debug API.  Include <weft.h> rather than this file. */
#ifndef WEFT_FUNCTION_H
#define WEFT_FUNCTION_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A function body: reads args[0..n_args), stores n_outs values in outs.
 * Returns 0, or a negative code to fail the call (a body that returns 0
 * but leaves an output NULL fails with WEFT_EBODY).  The body runs at trace
 * time only (or on every call with WEFT_RUN_EAGERLY). */
typedef int (*weft_body_fn)(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user);

/* tf.GradientTape.gradient / jax.value_and_grad: reverse-mode derivatives.
 * f (a body, as in weft_function_desc) is called with xs[0..n_xs) as its
 * arguments and returns one float value y; grads[j] (j < n_wrt) gets the
 * gradient of the sum of y's elements with respect to xs[j], of xs[j]'s
 * shape and dtype, and *y (when y is not NULL) y itself.  The first n_wrt
 * arguments are differentiated (floats only, WEFT_EDTYPE otherwise) and
 * the rest enter as constants: put the parameters first and the data
 * after.  An argument y does not depend on gets zeros (TensorFlow's
 * unconnected_gradients=ZERO).  Eagerly the results are computed at once;
 * while tracing they are recorded into cx's op list, so a traced training
 * step is one function.  f is traced once per call for the specs of xs
 * (its own ops then run on cx, forward and backward): it must use only its
 * arguments (a value of another context is WEFT_EINVAL), and a weak scalar
 * among xs enters as an ordinary f64 / i64 tensor.
 *
 * The ops with a rule: the elementwise arithmetic and float functions
 * (the special functions with TensorFlow's rules, for the last argument
 * of polygamma, igamma, igammac, zeta and betainc), casts, where, the
 * sum / mean / max / min / prod reductions, the shape ops (reshape,
 * expand_dims, squeeze, transpose, broadcast_to, tile, repeat, roll,
 * concat, stack, split, slice with any steps), matmul, cumsum, cumprod,
 * cumulative_logsumexp, gather (batch dims along the axis right after
 * them), gather_nd, boolean_mask, the segment reductions (sum, mean, max,
 * min; sorted and unsorted), scatter_nd_add / _sub / _update, sort and
 * top_k's values, conv2d, depthwise_conv2d, max_pool2d, avg_pool2d, the
 * fractional pools, resize (every method), the image transform
 * (TensorFlow's rule: g transformed by the inverse transform),
 * random_gamma in alpha (each sample's implicit derivative, TensorFlow's
 * RandomGammaGrad), the Fourier transforms (fft, ifft, rfft, irfft, stft
 * and the N-D ones), ctc_loss for its logits, matrix_inverse,
 * matrix_solve, triangular_solve, banded_triangular_solve,
 * tridiagonal_solve, matrix_determinant, slogdet, cholesky,
 * matrix_exponential, matrix_logarithm, matrix_sqrt, lu, eigh /
 * eigvalsh, qr and svd (TensorFlow's limits: no rule for a tall qr's
 * full_matrices or a non-square svd's), and every op made of those
 * (softmax, logsumexp, the losses, moments, pad, unstack, einsum,
 * cholesky_solve ...); floor, ceil, round, sign and the integer divisions
 * give zero.  Control flow: weft_cond and weft_switch_case differentiate
 * through the chosen branch eagerly, and while tracing through every
 * branch, selected when the function runs (so every branch's ops, checks
 * and host calls run).  weft_scan, weft_foldl, weft_foldr, weft_map and
 * weft_map_ex unroll into one weft_call per row when their row count is
 * known while tracing (always eagerly); over rows unknown while tracing
 * the backward pass is one node (scan_gradient, map_gradient) that walks
 * the rows when the function runs.  weft_while_loop differentiates
 * eagerly by walking its kept iterations back, and while tracing through
 * one while_loop_gradient node that runs the loop again when the function
 * runs, keeping every iteration's variables, so one trace serves every
 * trip count.  Anything else on the path from xs to y (host calls, eig,
 * an op of a loop's body without a rule) fails with WEFT_EINVAL naming
 * it; so does a rule that needs a rank or dims unknown while tracing (a
 * slice's, a split's, a pool's height, width and channels).  An input
 * broadcast along a dim unknown while tracing is checked when the
 * function runs (the call fails instead of summing wrongly).  f may
 * itself call weft_gradients (a second derivative) where the first
 * gradient's ops have rules.  Returns 0 or a negative code (also recorded
 * in cx); every result is a value of cx, released by the caller like an
 * op's, and each is a handle of its own. */
WEFT_API int weft_gradients(weft_ctx *cx, weft_body_fn f, void *user, weft_value *const *xs,
                            size_t n_xs, size_t n_wrt, weft_value **y, weft_value **grads);

/* Flags of weft_function_desc.flags, which holds an OR of them (an
 * unsigned, since an OR of enum constants is an int). */
typedef enum weft_function_flags {
    WEFT_REDUCE_RETRACING = 1u,  /* relax differing dims to WEFT_DIM_ANY */
    WEFT_RUN_EAGERLY      = 2u,  /* never trace: run the body on every call;
                                    also set for every function created
                                    while $WEFT_RUN_EAGERLY is 1, true, yes
                                    or on (any case); 0, false, no, off or
                                    empty leave it off, and any other value
                                    fails weft_function_create with
                                    WEFT_EINVAL */
    WEFT_FUNCTION_NO_JIT  = 4u   /* never compile this function's fused
                                    groups to native code: they run on
                                    the interpreter only; also set for
                                    every function created while $WEFT_JIT
                                    is 0, false, no or off (any case; 1,
                                    true, yes, on or empty leave the tier
                                    on, and any other value fails
                                    weft_function_create with WEFT_EINVAL) */
} weft_function_flags;

/* What weft_function_create needs.  Zero-initialise it (designated
 * initializers do) and set the fields wanted.  The struct keeps its size
 * across releases: new settings take their place in reserved[], so a
 * program built against an older header passes zeros for them, meaning "the
 * default".  weft_function_create refuses a desc whose reserved[] is not all
 * zero (WEFT_EINVAL), so that no value is mistaken for a later setting.
 * Read only during weft_function_create; the caller keeps ownership. */
typedef struct weft_function_desc {
    const char       *name;            /* copied; NULL: "fn" */
    weft_body_fn      body;
    void             *user;            /* passed to body; borrowed */
    size_t            n_args, n_outs;
    const weft_spec  *input_signature; /* NULL, or n_args specs (copied) */
    unsigned          flags;           /* an OR of weft_function_flags */
    size_t            max_cached;      /* 0: default (64); LRU eviction beyond it.
                                          Concrete functions from
                                          weft_function_get_concrete count in
                                          stats.cached and toward this bound
                                          but are never evicted: the others
                                          are, least recently used first,
                                          while cached is above the bound
                                          (never the one just traced), so
                                          cached exceeds max_cached only when
                                          the pinned ones alone fill it. */
    uint64_t          reserved[8];     /* must be zero */
} weft_function_desc;

/* Creates a function running on rt (which must outlive it).  *out is owned
 * by the caller.  Any thread. */
WEFT_API int  weft_function_create(weft_runtime *rt, const weft_function_desc *d, weft_function **out);
/* Frees the function and its concrete functions; *f becomes NULL.  NULL is
 * fine.  No call of f may be in flight. */
WEFT_API void weft_function_destroy(weft_function **f);

/* Calls f.  On success outs[0..n_outs) hold new references the caller
 * releases.  Many threads may call one function at once: each distinct
 * signature is traced exactly once, hits take no lock. */
WEFT_API int weft_function_call(weft_function *f, const weft_arg *args, size_t n_args,
                                weft_tensor **outs, size_t n_outs);

/* Traces (without running) f for specs[0..n) and returns the concrete
 * function, owned by f: valid until f is destroyed (eviction never frees a
 * concrete function returned here).  Any thread. */
WEFT_API int weft_function_get_concrete(weft_function *f, const weft_spec *specs, size_t n,
                                        weft_concrete **out);
/* Runs a concrete function without hashing; the args must match its specs
 * (WEFT_ESIGNATURE otherwise).  outs as in weft_function_call.  Many
 * threads may call one concrete function at once (no lock). */
WEFT_API int weft_concrete_call(weft_concrete *c, weft_tensor *const *args, size_t n_args,
                                weft_tensor **outs, size_t n_outs);

/* Debug API.  All of these may be called from any thread at any time.
 * Statistics: calls counts weft_function_call calls with valid arguments;
 * hits, those that found their concrete function compiled; misses, those
 * that traced it (or waited for another caller's trace) and then ran.  A
 * call run eagerly, rejected by the input signature, or whose trace
 * failed is neither, so hits + misses <= calls.  traces counts traces of
 * any cause (calls, get_concrete, map), evictions the entries the
 * max_cached bound dropped, cached the entries cached now.  trace_ns and
 * compile_ns are the time spent tracing bodies and in weft's compiler
 * passes.
 *
 * The native tier (a build with LLVM, see WEFT_FUNCTION_NO_JIT): after a
 * concrete function's first call, its large fused groups are compiled to
 * machine code on a background thread while calls keep running on the
 * interpreter; no call waits for a compile, and results are the same
 * bits either way.  (The first call in a process that queues a compile
 * loads LLVM's shared library and sets LLVM up on its own thread first,
 * once per process; a process that never compiles never loads LLVM.)  A
 * process may exit (return from main, call exit) without destroying its
 * functions or runtime while a compile runs: the exit waits for that
 * compile to end, and drops the queued ones.  native_groups counts the
 * groups of cached concrete functions running native code now
 * (weft_function_print_ops marks them "native"); native_failed the groups
 * whose compile failed (they stay on the interpreter, and a line goes to
 * the weft_set_log sink; where LLVM's library cannot be loaded, every
 * group fails and one line says so for the whole process);
 * native_compile_ns the compile thread's time on this function's concrete
 * functions, evicted ones included.  native_start_ns is the process's, not
 * the function's: the one-time start of the compiler on the thread of the
 * first call that queued a compile (in no function's native_compile_ns),
 * 0 until then.
 *
 * New counters take their place in reserved[], which weft_function_get_stats
 * fills with zeros until then, so the struct keeps its size across
 * releases. */
typedef struct weft_function_stats {
    uint64_t calls, hits, misses, traces, evictions, cached;
    uint64_t trace_ns, compile_ns;
    uint64_t native_groups, native_failed, native_compile_ns;
    uint64_t native_start_ns;
    uint64_t reserved[7];   /* zero, written by weft */
} weft_function_stats;
WEFT_API void     weft_function_get_stats(const weft_function *f, weft_function_stats *out);
WEFT_API uint64_t weft_function_tracing_count(const weft_function *f);
/* A line per cached concrete function: index, signature, "pinned" for one
 * returned by weft_function_get_concrete, calls, op count before and after
 * compilation.  Every concrete function weft_function_get_concrete returned
 * is listed until f is destroyed.  One that the max_cached bound evicted
 * while a traced map still runs it is not: it is no longer cached (nor
 * counted in stats.cached), and the next call of its signature traces
 * again.  Returns 0 or a negative code. */
WEFT_API int weft_function_print_signatures(const weft_function *f, FILE *out);
/* The compiled op list of the concrete function at index (as numbered by
 * weft_function_print_signatures), one op a line with its specs. */
WEFT_API int weft_function_print_ops(const weft_function *f, size_t index, FILE *out);

/* Why the last miss traced: which argument, which dim, what was expected. */
typedef struct weft_retrace {
    int  arg;               /* -1: first trace or no single argument */
    int  dim;               /* -1: not a dim difference */
    char reason[256];       /* "arg 0: shape f32[4] does not match cached f32[3] (dim 0: 4 vs 3)" */
} weft_retrace;
WEFT_API int weft_function_last_retrace(const weft_function *f, weft_retrace *out);

/* Log levels passed to a weft_log_fn (as an int, so that sinks written
 * for an int level keep their type). */
typedef enum weft_log_level {
    WEFT_LOG_DEBUG = 0,
    WEFT_LOG_INFO  = 1,
    WEFT_LOG_WARN  = 2
} weft_log_level;
typedef void (*weft_log_fn)(int level, const char *msg, void *user);
/* Where frequent-retracing warnings (and, with WEFT_LOG=retrace in the
 * environment when the function was created, a line per retrace) go.
 * WEFT_LOG is a comma-separated list of topics (retrace) or 1/true/yes/on
 * (all topics) and 0/false/no/off (none), any case; weft_function_create
 * refuses other values with WEFT_EINVAL.  NULL: stderr.  Process-wide.  The
 * sink runs on the thread that traced and may call weft, this function
 * included.  Called from outside a sink, it returns once no thread runs
 * the old sink any more; called from inside one, it does not wait. */
WEFT_API void weft_set_log(weft_log_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif
