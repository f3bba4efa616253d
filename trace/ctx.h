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
/* The op list cx records into (NULL for an eager context). */
const weft__graph *weft__ctx_graph(const weft_ctx *cx);
weft_runtime *weft__ctx_runtime(const weft_ctx *cx);
/* Records the first error of cx (sticky) with a message; returns NULL so
 * that ops can `return weft__ctx_fail(...)`. */
weft_value   *weft__ctx_fail(weft_ctx *cx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Checks that every in[i] is non-NULL and belongs to cx (recording
 * WEFT_EINVAL naming `op` otherwise); false when the op must return NULL. */
bool          weft__ctx_check_inputs(weft_ctx *cx, const char *op, weft_value *const *in, size_t n_in);
/* An op's entry check: a context (else WEFT_EINVAL naming fn, with no
 * context to record it in), no sticky error, and in[0..n_in) as
 * weft__ctx_check_inputs wants them. */
bool          weft__op_enter(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n_in);
/* weft__op_enter for an op with optional inputs: in[0..n_required) must
 * be given, in[n_required..n_in) may be NULL (absent) and are checked
 * where given, keeping their index in the error messages. */
bool          weft__op_enter_optional(weft_ctx *cx, const char *fn, weft_value *const *in,
                                      size_t n_required, size_t n_in);
/* Tracing mode: appends node n (its spec already inferred) with inputs in,
 * and returns its value.  Side-effect nodes (host calls, maps that make
 * them) get their ordering edge (`after`) to the previous one here.  The
 * graph takes over what n owns in attr (CONST tensor, map concrete), also
 * on failure (then released here), so a caller never releases those after
 * calling this.  n->in and n->n_in are ignored: the inputs are `in`,
 * which must have passed weft__ctx_check_inputs. */
weft_value   *weft__ctx_record(weft_ctx *cx, const weft__node *n, weft_value *const *in, uint32_t n_in);
/* Eager mode: wraps t as a value of cx, taking over the caller's reference
 * (released here on failure). */
weft_value   *weft__ctx_wrap(weft_ctx *cx, weft_tensor *t);
/* The eager tensor of v (borrowed), or NULL for a traced value. */
weft_tensor  *weft__value_tensor(const weft_value *v);
/* The spec of v (never NULL for a valid value). */
const weft_spec *weft__value_spec(const weft_value *v);

/* Added by ops/ctx (front half of trace/). */

/* Creates a context: tracing into g when g is non-NULL (g initialised by the
 * caller, borrowed), else eager.  name labels messages (borrowed, may be
 * NULL).  weft__ctx_free frees the values (eager: drops their tensors), never
 * the graph. */
int  weft__ctx_new(weft_runtime *rt, weft__graph *g, const char *name, weft_ctx **out);
void weft__ctx_free(weft_ctx *cx);
/* Calls body(cx, argv, outv, user) and checks what it left: returns 0 when
 * it succeeded and set n_outs outputs of cx; else the body's code, the
 * context's sticky error, or WEFT_EBODY (an output NULL or of another
 * context), with weft_errmsg() naming `name`.  Shared by tracing and eager
 * calls. */
int weft__ctx_call_body(weft_ctx *cx, const char *name, weft_body_fn body, void *user,
                        weft_value *const *argv, weft_value **outv, size_t n_outs);
/* Like weft__ctx_fail, with the calling thread's current weft_errmsg() as
 * the message (for failures of callees that already set it). */
weft_value   *weft__ctx_fail_errmsg(weft_ctx *cx, int code);
/* The sticky message of cx ("" when none). */
const char   *weft__ctx_errmsg(const weft_ctx *cx);
/* Eager mode: like weft__ctx_wrap, but the value is a constant, so a scalar
 * one is readable with weft_value_static_i64/f64. */
weft_value   *weft__ctx_wrap_const(weft_ctx *cx, weft_tensor *t);
/* Weak scalar constants (weft_const_f64/i64, static scalar arguments, and
 * elementwise results of weak inputs only) take the other operand's dtype
 * in an op (ops.c).  set_weak marks a rank-0 constant value weak (anything
 * else stays strong). */
bool          weft__value_is_weak(const weft_value *v);
void          weft__value_set_weak(weft_value *v);
/* The constant tensor behind v (borrowed), or NULL when v is no constant. */
const weft_tensor *weft__value_konst(const weft_value *v);
/* Eager: bytes of the tensors cx's values hold now (released values no
 * longer count), and the most they ever held in *peak (may be NULL). */
size_t        weft__ctx_held_bytes(const weft_ctx *cx, size_t *peak);
/* Eager op scopes, for the ops made of other ops.  WEFT__SCOPE(cx) at the
 * top of such an op opens one; the values made inside it are logged, and
 * when the function returns (a cleanup attribute, so no return path is
 * missed) every one of them is released but the op's results: the value
 * given to WEFT__KEEP (return WEFT__KEEP(result)), or with
 * WEFT__SCOPE_OUTS the values in outs[0..n) at that moment.  An error
 * return keeps nothing.  Tracing, scopes do nothing (the compiler frees
 * buffers by itself). */
size_t        weft__scope_begin(weft_ctx *cx);
void          weft__scope_end_outs(weft_ctx *cx, size_t mark, weft_value *const *keep,
                                   size_t n_keep);

typedef struct weft__scope {
    weft_ctx          *cx;
    size_t             mark;     /* SIZE_MAX: no scope (tracing, no context) */
    weft_value        *keep;
    weft_value *const *outs;     /* or NULL */
    size_t             n_outs;
} weft__scope;

static inline void weft__scope_close(weft__scope *s)
{
    if (s->outs)
        weft__scope_end_outs(s->cx, s->mark, s->outs, s->n_outs);
    else
        weft__scope_end_outs(s->cx, s->mark, &s->keep, 1);
}

#define WEFT__SCOPE(cx)                                                                \
    __attribute__((cleanup(weft__scope_close), unused)) weft__scope weft__scope_here = \
        { (cx), weft__scope_begin(cx), NULL, NULL, 0 }
#define WEFT__SCOPE_OUTS(cx, outs, n)                                                  \
    __attribute__((cleanup(weft__scope_close), unused)) weft__scope weft__scope_here = \
        { (cx), weft__scope_begin(cx), NULL, (outs), (n) }
#define WEFT__KEEP(v) (weft__scope_here.keep = (v))

/* How many value handles cx has ever laid out (released ones are used
 * again after a while, so this stays bounded in a loop that releases). */
size_t        weft__ctx_value_slots(const weft_ctx *cx);
/* The name that labels cx's messages (borrowed; may be NULL), and a
 * replacement for it (weft_call names the callee while its body runs). */
const char   *weft__ctx_name(const weft_ctx *cx);
void          weft__ctx_set_name(weft_ctx *cx, const char *name);
/* ops.c's last step, for the ops of other files: records n (its spec
 * inferred, its inputs already converted) on inputs in, or computes it
 * when eager.  Any input count. */
weft_value   *weft__ops_emit(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in);
/* Infers n (op and attributes set) on the specs of in[0..n_in), then
 * records or computes it: the last step of most ops. */
weft_value   *weft__ops_finish(weft_ctx *cx, weft__node *n, weft_value *const *in,
                               uint32_t n_in);
/* The context of v, and its node id (tracing) or WEFT__NO_NODE (eager). */
weft_ctx     *weft__value_ctx(const weft_value *v);
uint32_t      weft__value_node(const weft_value *v);

#endif
