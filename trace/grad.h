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
} weft__grad_tape;

/* Adds the adjoints node id's rule gives its inputs (t->adj[id] is set and
 * a float).  Returns 0, or a negative code recorded in t->cx: an op with
 * no rule is WEFT_EINVAL naming it. */
int weft__grad_node(weft__grad_tape *t, uint32_t id);

/* Adds v to the adjoint of node id when id depends on a differentiated
 * argument and is a float (else v is dropped); v NULL is the context's
 * error. */
int weft__grad_accumulate(weft__grad_tape *t, uint32_t id, weft_value *v);

#endif
