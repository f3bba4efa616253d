/* The interface trace/ declares for cache/: trace a body into a compiled
 * program, run programs, run bodies eagerly; and the callee interface
 * through which a map op reaches the function it applies (cache provides
 * it, trace calls it).  cache/ includes this file, never trace's other
 * headers.  Nothing here is exported from the shared library. */
#ifndef WEFT_TRACE_IFACE_H
#define WEFT_TRACE_IFACE_H

#include <stdbool.h>
#include <weft.h>

/* A compiled op list.  Immutable once made: many threads may run one
 * program at once.  Freed with weft__program_free by whoever made it. */
typedef struct weft__program weft__program;

/* One argument as a body sees it while tracing. */
typedef struct weft__targ {
    weft_arg_kind kind;  /* WEFT_ARG_TENSOR: spec applies; else a static scalar */
    weft_spec spec;      /* tensor arguments: dtype and shape, dims may be WEFT_DIM_ANY */
    int64_t i64;         /* WEFT_ARG_I64 */
    double f64;          /* WEFT_ARG_F64 */
} weft__targ;

typedef struct weft__trace_info {
    size_t   ops_traced;    /* nodes recorded by the body */
    size_t   ops_compiled;  /* ops in the compiled program */
    uint64_t trace_ns, compile_ns;
} weft__trace_info;

/* Runs body once in tracing mode with args[0..n_args) and compiles the op
 * list it records.  name labels messages and the timeline.  On success *out
 * owns the program and info (may be NULL) is filled.  The body's error, or
 * an op's sticky error, is returned with weft_errmsg() set. */
int weft__trace_compile(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                        const weft__targ *args, size_t n_args, size_t n_outs,
                        weft__program **out, weft__trace_info *info);

/* Runs p.  args has one entry per argument of the traced call; entries of
 * static arguments are ignored (may be NULL).  Tensor arguments must match
 * the traced specs (the caller checked dtype and known dims; unknown dims
 * are resolved here).  outs receive new references. */
int weft__program_run(const weft__program *p, weft_tensor *const *args, size_t n_args,
                      weft_tensor **outs, size_t n_outs);
/* The spec of output i (dims may be WEFT_DIM_ANY). */
int weft__program_out_spec(const weft__program *p, size_t i, weft_spec *out);
/* Whether running p has side effects (host calls, also inside its maps),
 * so that a map applying p must never be removed as dead code. */
bool weft__program_has_side_effects(const weft__program *p);
/* Writes the compiled op list, one op a line with its specs. */
int weft__program_print(const weft__program *p, FILE *out);
void weft__program_free(weft__program *p);

/* The native tier of p (trace/jit.h): on unless turned off here, which
 * the owner does before p is shared.  Stats: its groups running native
 * code now, those whose compile failed, and the time the compile thread
 * spent on p.  The log sink gets a line per failed compile (on the compile
 * thread); NULL: stderr. */
typedef struct weft__jit_stats {
    uint64_t native_groups, failed_groups, compile_ns;
} weft__jit_stats;
void weft__program_set_jit(weft__program *p, bool on);
void weft__program_jit_stats(const weft__program *p, weft__jit_stats *out);
void weft__jit_set_log(void (*fn)(const char *msg));
/* The time the compile thread spent starting the native tier's engine
 * (once per process, before its first compile; no unit's compile_ns
 * counts it), 0 until then.  Any thread. */
uint64_t weft__jit_start_ns(void);

/* Whether a and b may describe the same tensor: the same dtype, and every
 * rank and dim equal where both are known.  trace/multi.c. */
bool weft__spec_compatible(const weft_spec *a, const weft_spec *b);

/* v in its shortest round-trip form ("0.09", "1e+300", "-inf", "nan")
 * into buf (always terminated; 32 bytes hold any); the f32 one reads back
 * as the same float.  Return 0.  trace/fmt.c. */
#define WEFT__FMT_MAX 32
int weft__fmt_f64(double v, char *buf, size_t size);
int weft__fmt_f32(float v, char *buf, size_t size);

/* Runs body eagerly (ops compute at once) with args; outs receive new
 * references. */
int weft__eager_call(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                     const weft_arg *args, size_t n_args, weft_tensor **outs, size_t n_outs);

/* The callee interface.  cache/'s struct weft_function begins with a
 * weft__callee, so that a map op holding a weft_function * can reach it
 * without knowing cache's internals.
 *   resolve: find or trace the concrete function of fn for one argument of
 *            spec arg (fn must take one argument and return one output);
 *            *concrete stays valid until release; *out_spec is its output.
 *   invoke:  run a resolved concrete function on one tensor; *out is a new
 *            reference.  Thread-safe: iterations call it concurrently.
 *   release: drop what resolve handed out.
 *   side_effects: whether invoking a resolved concrete function has side
 *            effects (weft__program_has_side_effects of its program), so
 *            that a map of it is kept and ordered; NULL means never.
 *   describe: what weft_call needs to trace fn's body into its caller (no
 *            cache involved).
 *   resolve_n / invoke_n: resolve and invoke for any numbers of arguments
 *            and outputs (cond, while, map_ex): resolve checks the counts
 *            (messages start with who) and fills out_specs[0..n_outs);
 *            invoke_n checks the tensors against the traced specs
 *            (WEFT_ESIGNATURE) and stores n_outs new references. */
typedef struct weft__callee_info {
    const char      *name;              /* borrowed: lives as long as fn */
    weft_body_fn     body;
    void            *user;
    size_t           n_args, n_outs;
    const weft_spec *input_signature;   /* NULL or n_args specs; borrowed */
} weft__callee_info;

typedef struct weft__callee_ops {
    int  (*resolve)(weft_function *fn, const weft_spec *arg, void **concrete, weft_spec *out_spec);
    int  (*invoke)(void *concrete, weft_tensor *arg, weft_tensor **out);
    void (*release)(void *concrete);
    bool (*side_effects)(const void *concrete);
    void (*describe)(const weft_function *fn, weft__callee_info *out);
    int  (*resolve_n)(weft_function *fn, const char *who, const weft_spec *args, size_t n_args,
                      size_t n_outs, void **concrete, weft_spec *out_specs);
    int  (*invoke_n)(void *concrete, weft_tensor *const *args, size_t n_args,
                     weft_tensor **outs, size_t n_outs);
} weft__callee_ops;

typedef struct weft__callee {
    const weft__callee_ops *ops;
} weft__callee;

static inline const weft__callee *weft__callee_of(const weft_function *fn)
{
    return (const weft__callee *)(const void *)fn;
}

#endif
