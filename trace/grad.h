/* weft_gradients (trace/grad.c, trace/grad_rules.c): reverse-mode
 * differentiation of a body.  The body is traced once into a private op
 * list (the tape) for the specs of its arguments; the tape is then
 * replayed on the caller's context (computing eagerly, or recording into
 * the caller's op list) and walked backwards from the result, each node's
 * rule adding its inputs' adjoints with ordinary ops.  trace/ internal. */
#ifndef WEFT_TRACE_GRAD_H
#define WEFT_TRACE_GRAD_H

#include "trace/ctx.h"

typedef struct weft__grad_tape {
    weft_ctx          *cx;         /* the caller's context: every value below is its */
    const weft__graph *g;          /* the tape */
    weft_value       **val;        /* by node id: the replayed forward value, or NULL */
    weft_value       **adj;        /* by node id: the adjoint so far, NULL for zero */
    const bool        *depends;    /* by node id: depends on a differentiated argument */
    struct weft__grad_loop *loops; /* the while loops replayed, with their iterations */
    size_t             n_loops;
} weft__grad_tape;

/* What a rule reads: the node, its adjoint g, its forward value y and
 * first two inputs a and b (NULL when it has fewer). */
typedef struct weft__grad_rule {
    weft__grad_tape  *t;
    weft_ctx         *cx;
    const weft__node *n;
    weft_value       *g, *y, *a, *b;
} weft__grad_rule;

/* Adds the adjoints node id's rule gives its inputs (t->adj[id] is set and
 * a float).  Returns 0, or a negative code recorded in t->cx: an op with
 * no rule is WEFT_EINVAL naming it. */
int weft__grad_node(weft__grad_tape *t, uint32_t id);

/* Adds v to the adjoint of node id when id depends on a differentiated
 * argument and is a float (else v is dropped); v NULL is the context's
 * error. */
int weft__grad_accumulate(weft__grad_tape *t, uint32_t id, weft_value *v);

/* Shared by the rule files (trace/grad_rules.c, grad_array.c, grad_nn.c). */

/* v's rank (WEFT_RANK_ANY for NULL or a rank unknown while tracing). */
static inline int weft__grad_rank(const weft_value *v)
{
    return v ? weft__value_spec(v)->rank : WEFT_RANK_ANY;
}
/* v with n dims of 1 appended (NULL stays NULL). */
static inline weft_value *weft__grad_trailing_ones(weft_ctx *cx, weft_value *v, int n)
{
    for (int d = 0; d < n && v; d++)
        v = weft_expand_dims(cx, v, -1);
    return v;
}
/* A weak scalar v (it takes the other operand's dtype). */
weft_value *weft__grad_k(const weft__grad_rule *r, double v);
/* WEFT_EINVAL "no gradient for <op>[ why]"; returns the code. */
int         weft__grad_unsupported(const weft__grad_rule *r, const char *why);
/* Whether input k takes an adjoint (a float depending on a differentiated
 * argument): a rule computes only those. */
bool        weft__grad_wants(const weft__grad_rule *r, uint32_t k);
/* Adds v to input k's adjoint when it wants one. */
int         weft__grad_give(const weft__grad_rule *r, uint32_t k, weft_value *v);
/* g summed down to x's shape (a broadcast's gradient). */
weft_value *weft__grad_unbroadcast(const weft__grad_rule *r, weft_value *g, weft_value *x);
/* The rules of the ops that move or index elements (trace/grad_array.c),
 * of the convolutions and pools (trace/grad_nn.c) and of the linear
 * algebra (trace/grad_linalg.c). */
int         weft__grad_array(const weft__grad_rule *r);
/* The segment reductions, sorted or not, and isotonic_regression's fit
 * (its pools' means; trace/grad_segment.c). */
int         weft__grad_segment(const weft__grad_rule *r);
int         weft__grad_isotonic(const weft__grad_rule *r);
/* The tensor scatters: update, add, sub, max, min (trace/grad_scatter.c). */
int         weft__grad_scatter(const weft__grad_rule *r);
int         weft__grad_nn(const weft__grad_rule *r);
/* crop_and_resize, for its images and boxes (trace/grad_crop.c). */
int         weft__grad_crop_and_resize(const weft__grad_rule *r);
int         weft__grad_linalg(const weft__grad_rule *r);
/* The Fourier transforms, stft's included (trace/grad_fft.c). */
int         weft__grad_fft(const weft__grad_rule *r);
/* eigh, qr, svd and lu (trace/grad_decomp.c). */
int         weft__grad_decomp(const weft__grad_rule *r);
/* The special functions (trace/grad_special.c): a unary one's derivative
 * (NULL when it has none), and the rule of a binary or ternary one. */
weft_value *weft__grad_special_derivative(const weft__grad_rule *r);
int         weft__grad_special_args(const weft__grad_rule *r);

/* weft_cond and weft_switch_case (trace/grad_control.c): whether op is
 * one; the node's replay (it sets the values of its RESULT nodes); its
 * rule (from the adjoints of its RESULT nodes). */
bool        weft__grad_is_branch(weft__op op);
int         weft__grad_replay_branch(weft__grad_tape *t, uint32_t id);
int         weft__grad_branch(weft__grad_tape *t, uint32_t id);
/* weft_while_loop, eagerly (trace/grad_loop.c): the replay runs the
 * loop on cx keeping every iteration's variables; the rule walks them
 * back, one body gradient an iteration.  free_loops drops the records. */
int         weft__grad_replay_while(weft__grad_tape *t, uint32_t id);
int         weft__grad_while(weft__grad_tape *t, uint32_t id);
void        weft__grad_free_loops(weft__grad_tape *t);
/* The same while tracing (trace/grad_while.c): the replay records the
 * loop; the rule records a while_loop_gradient node. */
int         weft__grad_replay_while_traced(weft__grad_tape *t, uint32_t id);
int         weft__grad_while_traced(weft__grad_tape *t, uint32_t id);
/* weft_scan and the folds over rows unknown while the tape was traced
 * (trace/grad_scan.c): the replay runs or records the scan; the rule
 * records a scan_gradient node. */
int         weft__grad_replay_scan(weft__grad_tape *t, uint32_t id);
int         weft__grad_scan(weft__grad_tape *t, uint32_t id);
/* The same for weft_map and weft_map_ex (MAP, MAP_EX): the replay returns
 * the map's value (MAP) or a marker, setting its results (MAP_EX); the
 * rule records a map_gradient node. */
weft_value *weft__grad_replay_map(weft__grad_tape *t, uint32_t id);
int         weft__grad_map(weft__grad_tape *t, uint32_t id);
/* The vector-Jacobian product of fn (trace/grad_while.c) as a program:
 * its arguments are fn's float arguments, its others (specs args[0..n_args)
 * in that order, weft__grad_float_first's), then an adjoint for each of
 * fn's n_outs outputs (specs outs[]) that is a float; its results are the
 * float arguments' adjoints.  Traced now, on the interpreter; role names
 * fn in the message of a failure ("a while_loop's body_fn"). */
int         weft__grad_trace_vjp(weft_ctx *cx, const char *role, weft_function *fn,
                                 const weft_spec *args, size_t n_args, const weft_spec *outs,
                                 size_t n_outs, weft__program **out);
/* The attribute of such a node on in[0..n_in): its outputs the specs of
 * the float ones among them (their adjoints); NULL after failing cx. */
struct weft__multi *weft__grad_vjp_multi(weft_ctx *cx, weft_value *const *in, size_t n_in);
/* Emits CONTROL node op with attribute m (taken over in every case) on
 * in[0..n_in), the first of them node id's inputs' replayed values, its
 * outputs the adjoints of those that are floats, in order; gives them. */
int         weft__grad_emit_vjp(weft__grad_tape *t, uint32_t id, weft__op op,
                                struct weft__multi *m, weft_value *const *in, size_t n_in);
/* The order of that program's arguments: arg_of[i] is the place among
 * specs[0..n) of its i-th; returns the number of floats (they come first).
 * weft__grad_order_tensors puts tensors ts[0..n) in that order into order
 * (NULL ones left out), for the nodes that run the program. */
size_t      weft__grad_float_first(const weft_spec *specs, size_t n, uint32_t *arg_of);
size_t      weft__grad_order_tensors(weft_tensor *const *ts, size_t n, weft_tensor **order);
/* The values of control node id's outputs (its RESULT nodes): set from
 * outs[] after a replay, or read into res[] (each by its index). */
void        weft__grad_set_results(weft__grad_tape *t, uint32_t id, weft_value *const *outs);
void        weft__grad_result_values(const weft__grad_tape *t, uint32_t id, weft_value **res);
/* The adjoints of control node id's outputs (summed over its RESULT
 * nodes; NULL where none) into adj[0..n_outs); 0 or the context's code. */
int         weft__grad_result_adjoints(weft__grad_tape *t, uint32_t id, uint32_t n_outs,
                                       weft_value **adj);
/* A body computing the dot of fn's outputs with their adjoints: its
 * arguments are fn's (the wanted first, arg_of giving each one's place),
 * then the adjoints of the outputs with has_adj. */
typedef struct weft__grad_vjp {
    weft_function  *fn;
    uint32_t        n_args, n_outs;
    const uint32_t *arg_of;
    const bool     *has_adj;
} weft__grad_vjp;
int         weft__grad_vjp_body(weft_ctx *cx, weft_value *const *xs, weft_value **outs,
                                void *user);

/* Whether cx records a gradient's tape: its scans, folds and maps with a
 * row count known then unroll (trace/unroll.c) instead of recording a
 * node that has no rule. */
bool weft__grad_taping(const weft_ctx *cx);
/* fn on the rows of elems[0..n_elems) (dim 0, rows of them) one
 * weft_call after another on cx, the captures after each row: a scan or
 * fold (mode: weft__scan_mode's REVERSE and FOLD) carrying n_acc
 * accumulators from init (NULL: from the first row), or with n_acc 0 a
 * map of n_outs results.  outs as the node would give them. */
int  weft__unroll_rows(weft_ctx *cx, weft_function *fn, unsigned mode, weft_value *const *init,
                       size_t n_acc, weft_value *const *elems, size_t n_elems,
                       weft_value *const *caps, size_t n_caps, int64_t rows, weft_value **outs,
                       size_t n_outs);

#endif
