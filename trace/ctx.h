/* Contexts and values as the rest of trace/ sees them (the compiler, the
 * executor, map and host calls).  Implemented by ctx.c/ops.c.  trace/
 * internal; cache/ uses trace/iface.h. */
#ifndef WEFT_TRACE_CTX_H
#define WEFT_TRACE_CTX_H

#include "trace/ir.h"
#include "trace/iface.h"

/* Runs body once in tracing mode and leaves the recorded op list in *out
 * (initialised here; the caller frees it with weft__graph_free, also on
 * failure).  ARG nodes come first, one per argument in order (static
 * scalars are CONST nodes flagged WEFT__NODE_STATIC).  Fails with the
 * body's code, the context's sticky error, or WEFT_EBODY when an output is
 * left NULL or belongs to another context. */
int weft__trace_body(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                     const weft__targ *args, size_t n_args, size_t n_outs, weft__graph *out);

bool          weft__ctx_is_eager(const weft_ctx *cx);
weft_runtime *weft__ctx_runtime(const weft_ctx *cx);
/* Records the first error of cx (sticky) with a message; returns NULL so
 * that ops can `return weft__ctx_fail(...)`. */
weft_value   *weft__ctx_fail(weft_ctx *cx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Checks that every in[i] is non-NULL and belongs to cx (recording
 * WEFT_EINVAL naming `op` otherwise); false when the op must return NULL. */
bool          weft__ctx_check_inputs(weft_ctx *cx, const char *op, weft_value *const *in, size_t n_in);
/* Tracing mode: appends node n (its spec already inferred) with inputs in,
 * and returns its value.  HOST nodes get their ordering edge (`after`) to
 * the previous host call here. */
weft_value   *weft__ctx_record(weft_ctx *cx, const weft__node *n, weft_value *const *in, uint32_t n_in);
/* Eager mode: wraps t as a value of cx, taking over the caller's reference. */
weft_value   *weft__ctx_wrap(weft_ctx *cx, weft_tensor *t);
/* The eager tensor of v (borrowed), or NULL for a traced value. */
weft_tensor  *weft__value_tensor(const weft_value *v);
/* The spec of v (never NULL for a valid value). */
const weft_spec *weft__value_spec(const weft_value *v);

#endif
