/* Composition and control flow inside trace/: weft_call, weft_cond,
 * weft_while_loop, weft_map_ex and weft_host_call_ex.  trace/ internal.
 *
 * cond, while, map_ex and host_call_ex record one CONTROL node with any
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
    weft_function *fn[2];              /* cond: then, else; while: cond, body; map_ex: fn */
    void          *concrete[2];        /* fn[k] resolved through its callee interface */
    uint32_t       n_mapped;           /* map_ex: inputs sliced along dim 0 (then captures) */
    unsigned       parallel_iterations; /* map_ex */
    weft_host_fn_ex host_fn;           /* host_call_ex */
    void          *host_user;
    unsigned       host_flags;
};

/* A new attribute with room for n_outs specs (zeroed), or NULL. */
struct weft__multi *weft__multi_new(uint32_t n_outs);

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

/* The name of fn (borrowed; lives as long as fn). */
const char *weft__fn_name(const weft_function *fn);

#endif
