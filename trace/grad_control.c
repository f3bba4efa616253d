/* weft_gradients through weft_cond and weft_switch_case.  The tape holds
 * a COND or CASE node (both branches traced) and a RESULT node per output
 * used.  Replaying calls weft_cond / weft_switch_case again with the same
 * functions, so eagerly only the chosen branch runs.  Backward, a
 * branch's gradient is weft_gradients of a body that calls the branch
 * (weft_call) and sums its outputs times their adjoints: eagerly for the
 * chosen branch only; while tracing for every branch, selected by the
 * predicate or index (so every branch's forward and backward ops run,
 * and a branch's checks and host calls with them). */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

static const char *const who = "weft_gradients";

bool weft__grad_is_branch(weft__op op)
{
    return op == WEFT__OP_COND || op == WEFT__OP_CASE;
}

int weft__grad_replay_branch(weft__grad_tape *t, uint32_t id)
{
    const weft__node *n = &t->g->nodes[id];
    const struct weft__multi *m = n->attr.multi.m;
    uint32_t n_args = n->n_in - 1, n_outs = m->n_outs;
    weft_value **args = weft__calloc((size_t)n_args + n_outs + 1, sizeof *args);
    if (!args)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **outs = args + n_args;
    for (uint32_t i = 0; i < n_args; i++)
        args[i] = t->val[n->in[1 + i]];
    weft_value *sel = t->val[n->in[0]];
    int rc = n->op == WEFT__OP_COND
                 ? weft_cond(t->cx, sel, m->fn[0], m->fn[1], args, n_args, outs, n_outs)
                 : weft_switch_case(t->cx, sel, m->branch_fn, m->n_branches, args, n_args, outs,
                                    n_outs);
    if (rc == 0)
        weft__grad_set_results(t, id, outs);
    t->val[id] = sel;   /* no value of its own: marks the node as replayed */
    weft__free(args);
    return rc;
}

int weft__grad_vjp_body(weft_ctx *cx, weft_value *const *xs, weft_value **outs, void *user)
{
    const weft__grad_vjp *v = user;
    weft_value *small[16], **buf = small;
    size_t need = (size_t)v->n_args + v->n_outs;
    if (need > 16 && !(buf = weft__calloc(need, sizeof *buf)))
        return WEFT_ENOMEM;
    weft_value **args = buf, **ys = buf + v->n_args;
    for (uint32_t i = 0; i < v->n_args; i++)
        args[v->arg_of[i]] = xs[i];
    int rc = weft_call(cx, v->fn, args, v->n_args, ys, v->n_outs);
    weft_value *sum = NULL;
    for (uint32_t k = 0, at = v->n_args; rc == 0 && k < v->n_outs; k++) {
        if (!v->has_adj[k])
            continue;
        weft_value *term = weft_sum(cx, weft_mul(cx, ys[k], xs[at++]), WEFT_ALL_AXES);
        sum = sum ? weft_add(cx, sum, term) : term;
    }
    outs[0] = sum;
    if (buf != small)
        weft__free(buf);
    return rc < 0 ? rc : weft_ctx_status(cx);
}

void weft__grad_set_results(weft__grad_tape *t, uint32_t id, weft_value *const *outs)
{
    for (uint32_t j = id + 1; j < t->g->n_nodes; j++) {
        const weft__node *res = &t->g->nodes[j];
        if (res->op == WEFT__OP_RESULT && res->in[0] == id)
            t->val[j] = outs[res->attr.result.index];
    }
}

void weft__grad_result_values(const weft__grad_tape *t, uint32_t id, weft_value **res)
{
    for (uint32_t j = id + 1; j < t->g->n_nodes; j++) {
        const weft__node *n = &t->g->nodes[j];
        if (n->op == WEFT__OP_RESULT && n->in[0] == id)
            res[n->attr.result.index] = t->val[j];
    }
}

int weft__grad_result_adjoints(weft__grad_tape *t, uint32_t id, uint32_t n_outs,
                               weft_value **adj)
{
    for (uint32_t k = 0; k < n_outs; k++)
        adj[k] = NULL;
    for (uint32_t j = id + 1; j < t->g->n_nodes; j++) {
        const weft__node *res = &t->g->nodes[j];
        if (res->op != WEFT__OP_RESULT || res->in[0] != id || !t->adj[j])
            continue;
        uint32_t k = res->attr.result.index;
        adj[k] = adj[k] ? weft_add(t->cx, adj[k], t->adj[j]) : t->adj[j];
        if (!adj[k])
            return weft_ctx_status(t->cx);
    }
    return 0;
}

/* Which branch an eager selector picks (cond: 0 then, 1 else; case: the
 * index, out of range the last), or -1 while tracing. */
static int chosen_branch(const weft__node *n, weft_value *sel)
{
    const weft_tensor *t = weft__value_tensor(sel);
    if (!t)
        t = weft__value_konst(sel);
    if (!t)
        return -1;
    if (n->op == WEFT__OP_COND)
        return ((const uint8_t *)weft_tensor_data(t))[0] ? 0 : 1;
    int64_t i = weft__tensor_int_at(t, 0), last = n->attr.multi.m->n_branches - 1;
    return i < 0 || i > last ? (int)last : (int)i;
}

int weft__grad_branch(weft__grad_tape *t, uint32_t id)
{
    const weft__node *n = &t->g->nodes[id];
    const struct weft__multi *m = n->attr.multi.m;
    uint32_t n_args = n->n_in - 1, n_outs = m->n_outs, n_fns = n->op == WEFT__OP_COND ? 2
                                                                    : m->n_branches;
    weft__grad_rule r = { .t = t, .cx = t->cx, .n = n };
    size_t count = (size_t)2 * n_args + 2 * n_outs + (size_t)n_fns * n_args + 1;
    void *mem = weft__calloc(count, sizeof(weft_value *) + sizeof(uint32_t) + sizeof(bool));
    if (!mem)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **xs = mem, **adj = xs + n_args + n_outs, **grads = adj + n_outs;
    uint32_t *arg_of = (uint32_t *)(void *)((weft_value **)mem + count);
    bool *has_adj = (bool *)(arg_of + count);
    int rc = weft__grad_result_adjoints(t, id, n_outs, adj);
    size_t n_adj = 0;
    /* xs: the wanted arguments first, the others, then the adjoints. */
    size_t n_xs = 0, n_wanted = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < n_args; i++)
            if (weft__grad_wants(&r, 1 + i) == (pass == 0)) {
                arg_of[n_xs] = i;
                xs[n_xs++] = t->val[n->in[1 + i]];
                n_wanted += pass == 0;
            }
    for (uint32_t k = 0; k < n_outs; k++)
        if ((has_adj[k] = adj[k] != NULL))
            xs[n_xs++] = adj[k], n_adj++;
    if (rc < 0 || n_wanted == 0 || n_adj == 0)
        goto done;
    weft__grad_vjp v = { .n_args = n_args, .n_outs = n_outs, .arg_of = arg_of,
                         .has_adj = has_adj };
    weft_value *sel = t->val[n->in[0]];
    int pick = chosen_branch(n, sel);
    for (uint32_t b = 0; b < n_fns && rc == 0; b++) {
        if (pick >= 0 && (int)b != pick)
            continue;
        v.fn = n->op == WEFT__OP_COND ? m->fn[b] : m->branch_fn[b];
        rc = weft_gradients(t->cx, weft__grad_vjp_body, &v, xs, n_xs, n_wanted, NULL,
                            grads + (size_t)b * n_args);
    }
    /* Each wanted argument: the chosen branch's gradient, or (tracing) a
     * selection among the branches', the last branch the default. */
    for (size_t i = 0; rc == 0 && i < n_wanted; i++) {
        weft_value *g = grads[(size_t)(pick >= 0 ? pick : (int)n_fns - 1) * n_args + i];
        for (int b = (int)n_fns - 2; pick < 0 && b >= 0 && g; b--) {
            weft_value *here = n->op == WEFT__OP_COND
                                   ? sel
                                   : weft_eq(t->cx, sel, weft_const_i64(t->cx, b));
            g = weft_where(t->cx, here, grads[(size_t)b * n_args + i], g);
        }
        rc = weft__grad_give(&r, 1 + arg_of[i], g);
    }
done:
    weft__free(mem);
    return rc;
}
