/* Composition and control flow inside trace/: weft_call, weft_cond,
 * weft_switch_case, weft_while_loop, weft_map_ex, weft_host_call_ex and
 * weft_scan (with the folds).  trace/ internal.
 *
 * cond, switch_case, while, map_ex, host_call_ex and scan record one
 * CONTROL node with any
 * number of results, followed by one RESULT node per result (a value of
 * the body reads a RESULT node, never the CONTROL node).  The functions a
 * CONTROL node runs are resolved (traced, through their caches) when it is
 * recorded, and held by the node until the program is freed.  weft_call
 * records nothing of its own: the callee's body records into the caller's
 * op list. */
#ifndef WEFT_TRACE_CONTROL_H
#define WEFT_TRACE_CONTROL_H

#include <stdio.h>

#include "trace/ctx.h"

/* A CONTROL node's attribute, owned by the node (weft__multi_free). */
struct weft__multi {
    uint32_t       n_outs;
    weft_spec     *outs;               /* n_outs result specs */
    weft_function *fn[2];              /* cond: then, else; while: cond, body; map_ex, scan: fn */
    void          *concrete[2];        /* fn[k] resolved through its callee interface */
    uint32_t       n_mapped;           /* map_ex, scan: inputs sliced along dim 0 (then
                                          captures) */
    unsigned       scan_mode;          /* scan: an OR of weft__scan_mode */
    unsigned       parallel_iterations; /* map_ex */
    weft_function **branch_fn;         /* switch_case: n_branches functions, */
    void          **branch_concrete;   /* each resolved (weft__multi_branches) */
    uint32_t       n_branches;
    weft_host_fn_ex host_fn;           /* host_call_ex */
    void          *host_user;
    unsigned       host_flags;
    weft__program *vjp;                /* while_loop_gradient, scan_gradient: one step's
                                          vector-Jacobian product (trace/grad_while.c,
                                          grad_scan.c), owned */
    uint32_t       n_acc;              /* scan_gradient: the scan's accumulators;
                                          map_gradient: the outputs' adjoints it takes */
};

/* How a SCAN node runs: from the last row (foldr, scan's reverse flag);
 * keeping only the last accumulator (foldl, foldr); with the accumulators
 * starting from the first row of elems instead of given values (a NULL
 * init). */
typedef enum weft__scan_mode {
    WEFT__SCAN_REVERSE = 1u,
    WEFT__SCAN_FOLD = 2u,
    WEFT__SCAN_NO_INIT = 4u,
} weft__scan_mode;

/* Resolves fn for args[0..n_args) (specs) into m->fn[k] / m->concrete[k]
 * and out[0..n_outs); 0, or the context's code (messages start with who,
 * then role, "body_fn"). */
int weft__multi_resolve(weft_ctx *cx, const char *who, const char *role, weft_function *fn,
                        const weft_spec *args, size_t n_args, size_t n_outs,
                        struct weft__multi *m, int k, weft_spec *out);
/* A predicate tensor's truth (0 or 1), or a negative code when it is not
 * one bool (the message says who and what). */
int weft__control_truth(const char *who, const char *what, const weft_tensor *t);
/* Whether running m's functions fn[0] and fn[1] has side effects. */
bool weft__multi_side_effects(const struct weft__multi *m);

/* A new attribute with room for n_outs specs (zeroed), or NULL. */
struct weft__multi *weft__multi_new(uint32_t n_outs);

/* Room for n switch_case branches in m (zeroed); 0 or WEFT_ENOMEM. */
int weft__multi_branches(struct weft__multi *m, uint32_t n);

/* Records (tracing) or runs (eager) the CONTROL node n, whose
 * attr.multi.m is taken over in every case, on inputs in[0..n_in) (checked
 * by weft__ctx_check_inputs), and stores a value per result in outs.
 * Returns 0, or the context's sticky code (set here on failure). */
int weft__multi_emit(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in,
                     weft_value **outs);

/* Runs CONTROL node n on in[0..n->n_in), storing n_outs new references in
 * outs (all NULL on failure).  Shared by eager mode and the executor. */
int weft__multi_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                    weft_tensor **outs);
int weft__cond_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor **outs);
int weft__while_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                    weft_tensor **outs);
int weft__map_ex_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                     weft_tensor **outs);
int weft__host_ex_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor **outs);
int weft__scan_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor **outs);
int weft__case_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor **outs);
int weft__while_vjp_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor **outs);
int weft__scan_vjp_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                       weft_tensor **outs);
int weft__map_vjp_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor **outs);
/* Tensor steps those kernels share (trace/scan_vjp.c), on f32 or f64:
 * *acc += v (v released; *acc NULL takes v), a zero tensor of t's spec,
 * t copied into row r of dst. */
int  weft__vjp_add_into(weft_tensor **acc, weft_tensor *v);
int  weft__vjp_zeros_like(const weft_tensor *t, weft_tensor **out);
void weft__vjp_put_row(weft_tensor *dst, int64_t r, const weft_tensor *t);

/* weft_scan, weft_foldl and weft_foldr by mode (weft__scan_mode's
 * REVERSE and FOLD; init NULL for none): records or runs a SCAN node
 * (trace/scan.c). */
int weft__scan_emit(weft_ctx *cx, unsigned mode, weft_function *fn, weft_value *const *init,
                    size_t n_acc, weft_value *const *elems, size_t n_elems,
                    weft_value *const *captures, size_t n_captures, weft_value **outs);

/* The attributes of a CONTROL or RESULT node for an op listing
 * ("<then,else>"), and the specs of a CONTROL node's results
 * ("(f32[3], i64[])"). */
void weft__multi_print_attrs(const weft__node *n, FILE *f);
void weft__multi_print_specs(const weft__node *n, FILE *f);

/* Records the first error of cx with a message and returns the context's
 * sticky code, for the ops that return an int. */
int weft__ctx_failf(weft_ctx *cx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The common entry of the ops that return an int: outs[0..n_outs) set to
 * NULL; 0 to go on, else the code to return (a NULL context, a sticky
 * error, NULL arrays for non-zero counts). */
int weft__ctx_enter_int(weft_ctx *cx, const char *who, weft_value *const *in, size_t n_in,
                        weft_value **outs, size_t n_outs);

/* Runs fn's body on cx with args, storing its n_outs outputs (values of
 * cx) in outs: the callee's ops record into cx's op list when tracing, and
 * compute at once when eager.  Checks the counts and the input signature;
 * on failure cx holds the error.  who names the public entry point. */
int weft__call_inline(weft_ctx *cx, const char *who, weft_function *fn,
                      weft_value *const *args, size_t n_args, weft_value **outs, size_t n_outs);

/* The specs map_ex and scan share (trace/map.c), each false with cx's
 * error set.  weft__slice_spec: one row of elems (spec es), dim 0 removed;
 * of unknown rank when es has an unknown rank (fn is then traced for any
 * rank, and the run decides it, as eager mode does).  weft__stacked_spec:
 * fn's results (spec out) stacked over rows rows.  weft__shared_rows: the
 * rows the mapped inputs share, the first known dim 0 (any other known one
 * must equal it), else unknown.  who starts the messages; what names the
 * input. */
bool weft__slice_spec(weft_ctx *cx, const char *who, const char *what, const weft_spec *es,
                      weft_spec *slice);
bool weft__stacked_spec(weft_ctx *cx, const char *who, const weft_spec *out, int64_t rows,
                        weft_spec *res);
bool weft__shared_rows(weft_ctx *cx, const char *who, weft_value *const *elems, size_t n,
                       int64_t *rows);

/* The checks map_ex and scan share: captures[0..n_captures) valid (NULL
 * only with no captures) and fn not NULL.  0, or cx's sticky code. */
int weft__check_fn_captures(weft_ctx *cx, const char *who, const weft_function *fn,
                            weft_value *const *captures, size_t n_captures);
/* Releases ts[0..n) and sets them to NULL. */
void weft__release_tensors(weft_tensor **ts, size_t n);

/* The name of fn (borrowed; lives as long as fn). */
const char *weft__fn_name(const weft_function *fn);

#endif
