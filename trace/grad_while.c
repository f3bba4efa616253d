/* weft_gradients through weft_while_loop while tracing.  The trip count is
 * a value, so the backward pass cannot be unrolled into the op list; it is
 * one node instead, while_loop_gradient, recorded by the rule:
 *   inputs:  the loop's initial variables, then the adjoints of its float
 *            results (zeros where the result is not used);
 *   outputs: the adjoints of the float initial variables.
 * When it runs it runs the loop again from the initial variables, keeping
 * every iteration's variables, then walks the iterations back, each
 * through a program traced once when the rule is recorded: the gradient of
 * the body's outputs dotted with their adjoints (weft__grad_vjp_body), for
 * the variables' specs.  So the forward loop runs twice (once for the
 * results, once in the node) and the node holds every iteration's
 * variables until it ends, as TensorFlow's stacks do.  An op without a
 * rule in the body fails the rule, when the body is traced for it. */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

static const char *const who = "weft_gradients";

int weft__grad_replay_while_traced(weft__grad_tape *t, uint32_t id)
{
    const weft__node *node = &t->g->nodes[id];
    const struct weft__multi *m = node->attr.multi.m;
    size_t n = node->n_in;
    weft_value *small[16], **buf = small;
    if (2 * n > 16 && !(buf = weft__calloc(2 * n, sizeof *buf)))
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **vars = buf, **outs = buf + n;
    for (size_t k = 0; k < n; k++)
        vars[k] = t->val[node->in[k]];
    int rc = weft_while_loop(t->cx, m->fn[0], m->fn[1], vars, n, outs);
    if (rc == 0)
        weft__grad_set_results(t, id, outs);
    t->val[id] = rc == 0 ? vars[0] : NULL;   /* marks the node as replayed */
    if (buf != small)
        weft__free(buf);
    return rc;
}

/* The vector-Jacobian product's program (trace/grad.h). */
typedef struct vjp_step {
    weft__grad_vjp v;
    size_t         n_float, n_adj;
} vjp_step;

static int vjp_step_body(weft_ctx *cx, weft_value *const *xs, weft_value **outs, void *user)
{
    const vjp_step *s = user;
    return weft_gradients(cx, weft__grad_vjp_body, (void *)&s->v, xs, s->v.n_args + s->n_adj,
                          s->n_float, NULL, outs);
}

size_t weft__grad_float_first(const weft_spec *specs, size_t n, uint32_t *arg_of)
{
    size_t at = 0, n_float = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n; k++)
            if (weft__dtype_is_float(specs[k].dtype) == (pass == 0)) {
                arg_of[at++] = (uint32_t)k;
                n_float += pass == 0;
            }
    return n_float;
}

size_t weft__grad_order_tensors(weft_tensor *const *ts, size_t n, weft_tensor **order)
{
    size_t at = 0, n_float = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n; k++)
            if (ts[k] && weft__dtype_is_float(ts[k]->dtype) == (pass == 0)) {
                order[at++] = ts[k];
                n_float += pass == 0;
            }
    return n_float;
}

int weft__grad_trace_vjp(weft_ctx *cx, const char *role, weft_function *fn,
                         const weft_spec *args, size_t n_args, const weft_spec *outs,
                         size_t n_outs, weft__program **out)
{
    uint32_t *arg_of = weft__calloc(n_args + 1, sizeof *arg_of);
    bool *has_adj = weft__calloc(n_outs + 1, sizeof *has_adj);
    weft__targ *targs = weft__calloc(n_args + n_outs + 1, sizeof *targs);
    int rc = 0;
    if (!arg_of || !has_adj || !targs) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    size_t n_float = weft__grad_float_first(args, n_args, arg_of), n_adj = 0;
    for (size_t i = 0; i < n_args; i++)
        targs[i] = (weft__targ){ .kind = WEFT_ARG_TENSOR, .spec = args[arg_of[i]] };
    for (size_t k = 0; k < n_outs; k++)
        if ((has_adj[k] = weft__dtype_is_float(outs[k].dtype)))
            targs[n_args + n_adj++] = (weft__targ){ .kind = WEFT_ARG_TENSOR, .spec = outs[k] };
    vjp_step s = { .v = { .fn = fn, .n_args = (uint32_t)n_args, .n_outs = (uint32_t)n_outs,
                          .arg_of = arg_of, .has_adj = has_adj },
                   .n_float = n_float, .n_adj = n_adj };
    rc = weft__trace_compile(weft__ctx_runtime(cx), "vector_jacobian_product", vjp_step_body, &s,
                             targs, n_args + n_adj, n_float, out, NULL);
    if (rc < 0)
        rc = weft__ctx_failf(cx, rc, "%s: the gradient of %s '%s': %s", who, role,
                             weft__fn_name(fn), weft_errmsg());
    else
        weft__program_set_jit(*out, false);
done:
    weft__free(arg_of);
    weft__free(has_adj);
    weft__free(targs);
    return rc;
}

struct weft__multi *weft__grad_vjp_multi(weft_ctx *cx, weft_value *const *in, size_t n_in)
{
    uint32_t n_float = 0;
    for (size_t k = 0; k < n_in; k++)
        n_float += weft__dtype_is_float(weft__value_spec(in[k])->dtype);
    struct weft__multi *m = weft__multi_new(n_float);
    if (!m) {
        weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        return NULL;
    }
    for (size_t k = 0, j = 0; k < n_in; k++)
        if (weft__dtype_is_float(weft__value_spec(in[k])->dtype))
            m->outs[j++] = *weft__value_spec(in[k]);
    return m;
}

int weft__grad_emit_vjp(weft__grad_tape *t, uint32_t id, weft__op op, struct weft__multi *m,
                        weft_value *const *in, size_t n_in)
{
    weft_ctx *cx = t->cx;
    const weft__node *of = &t->g->nodes[id];
    weft_value **outs = weft__calloc(m->n_outs + 1, sizeof *outs);
    if (!outs) {
        weft__multi_free(m);
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
    }
    weft__node node;
    memset(&node, 0, sizeof node);
    node.op = op;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    node.flags = weft__multi_side_effects(m) ? WEFT__NODE_SIDE_EFFECT : 0;
    node.attr.multi.m = m;   /* emit takes it over */
    int rc = weft__multi_emit(cx, &node, in, (uint32_t)n_in, outs);
    weft__grad_rule r = { .t = t, .cx = cx, .n = of };
    for (uint32_t k = 0, j = 0; rc == 0 && k < of->n_in; k++)
        if (weft__dtype_is_float(weft__value_spec(in[k])->dtype))
            rc = weft__grad_give(&r, k, outs[j++]);
    weft__free(outs);
    return rc;
}

/* The while_loop_gradient node of loop node id, given the adjoints adj[k]
 * of its results (NULL: none), into the float variables' adjoints. */
static int record_vjp(weft__grad_tape *t, uint32_t id, weft_value **adj)
{
    weft_ctx *cx = t->cx;
    const weft__node *loop = &t->g->nodes[id];
    const struct weft__multi *lm = loop->attr.multi.m;
    size_t n = loop->n_in, n_float = 0;
    weft_value **in = weft__calloc(2 * n, sizeof *in);
    weft_spec *specs = weft__calloc(n, sizeof *specs);
    weft_spec cond_out, *body_out = weft__calloc(n, sizeof *body_out);
    struct weft__multi *m = NULL;
    int rc = 0;
    if (!in || !specs || !body_out) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        in[k] = t->val[loop->in[k]];
        specs[k] = *weft__value_spec(in[k]);
        if (weft__dtype_is_float(specs[k].dtype))
            in[n + n_float++] = adj[k] ? adj[k] : weft_zeros_like(cx, in[k]);
    }
    if (!(m = weft__grad_vjp_multi(cx, in, n))) {
        rc = weft_ctx_status(cx);
        goto done;
    }
    if ((rc = weft__multi_resolve(cx, who, "cond_fn", lm->fn[0], specs, n, 1, m, 0,
                                  &cond_out)) < 0 ||
        (rc = weft__multi_resolve(cx, who, "body_fn", lm->fn[1], specs, n, n, m, 1,
                                  body_out)) < 0 ||
        (rc = weft__grad_trace_vjp(cx, "a while_loop's body_fn", lm->fn[1], specs, n, specs,
                                   n, &m->vjp)) < 0)
        goto done;
    rc = weft__grad_emit_vjp(t, id, WEFT__OP_WHILE_VJP, m, in, n + n_float);
    m = NULL;   /* taken over */
done:
    weft__multi_free(m);
    weft__free(in);
    weft__free(specs);
    weft__free(body_out);
    return rc;
}

int weft__grad_while_traced(weft__grad_tape *t, uint32_t id)
{
    size_t n = t->g->nodes[id].n_in;
    weft_value *small[16], **adj = n > 16 ? weft__calloc(n, sizeof *adj) : small;
    if (!adj)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    int rc = weft__grad_result_adjoints(t, id, (uint32_t)n, adj);
    bool any = false;
    for (size_t k = 0; rc == 0 && k < n; k++)
        any |= adj[k] != NULL;
    if (rc == 0 && any)
        rc = record_vjp(t, id, adj);
    if (adj != small)
        weft__free(adj);
    return rc;
}

/* ---- Running the node ------------------------------------------------ */

/* vars grown to hold at least need tensors (doubling). */
static int reserve(weft_tensor ***vars, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t grown = *cap ? *cap : 16;
    while (grown < need)
        grown *= 2;
    weft_tensor **more = weft__realloc(*vars, grown * sizeof **vars);
    if (!more)
        return weft__errorf(WEFT_ENOMEM, "weft_while_loop's gradient: out of memory");
    memset(more + *cap, 0, (grown - *cap) * sizeof *more);
    *vars = more;
    *cap = grown;
    return 0;
}

/* The loop from vars[0..n): every iteration's variables appended, n at a
 * time; *n_iter the iterations. */
static int forward(const struct weft__multi *m, size_t n, weft_tensor ***vars, size_t *cap,
                   size_t *n_iter)
{
    const weft__callee_ops *cops = weft__callee_of(m->fn[0])->ops;
    const weft__callee_ops *bops = weft__callee_of(m->fn[1])->ops;
    for (*n_iter = 0;; ++*n_iter) {
        weft_tensor **cur = *vars + *n_iter * n, *p = NULL;
        int rc = cops->invoke_n(m->concrete[0], cur, n, &p, 1);
        if (rc < 0)
            return rc;
        rc = weft__control_truth("weft_while_loop", "cond_fn's result", p);
        weft_tensor_release(p);
        if (rc <= 0)
            return rc;
        if ((rc = reserve(vars, cap, (*n_iter + 2) * n)) < 0)
            return rc;
        cur = *vars + *n_iter * n;
        if ((rc = bops->invoke_n(m->concrete[1], cur, n, cur + n, n)) < 0)
            return rc;
    }
}

int weft__while_vjp_run(weft_runtime *rt, const weft__node *node, weft_tensor *const *in,
                        weft_tensor **outs)
{
    (void)rt;
    const struct weft__multi *m = node->attr.multi.m;
    size_t n_float = m->n_outs, n = node->n_in - n_float, cap = 0, n_iter = 0;
    weft_tensor **vars = NULL, **args = weft__calloc(n + 2 * n_float, sizeof *args);
    int rc = args ? reserve(&vars, &cap, n)
                  : weft__errorf(WEFT_ENOMEM, "weft_while_loop's gradient: out of memory");
    for (size_t k = 0; rc == 0 && k < n; k++)
        vars[k] = weft_tensor_retain(in[k]);
    if (rc == 0)
        rc = forward(m, n, &vars, &cap, &n_iter);
    /* adj: the adjoints of iteration it's results, then of its variables. */
    weft_tensor **adj = args ? args + n : NULL, **next = args ? adj + n_float : NULL;
    for (size_t j = 0; rc == 0 && j < n_float; j++)
        adj[j] = weft_tensor_retain(in[n + j]);
    for (size_t it = n_iter; rc == 0 && it-- > 0;) {
        weft__grad_order_tensors(vars + it * n, n, args);
        rc = weft__program_run(m->vjp, args, n + n_float, next, n_float);
        if (rc == 0) {
            weft__release_tensors(adj, n_float);
            memcpy(adj, next, n_float * sizeof *adj);
            memset(next, 0, n_float * sizeof *next);
        }
    }
    if (rc == 0)
        memcpy(outs, adj, n_float * sizeof *outs);
    else if (adj)
        weft__release_tensors(adj, n_float);
    if (vars)
        weft__release_tensors(vars, cap);
    weft__free(vars);
    weft__free(args);
    return rc;
}
