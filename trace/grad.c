/* weft_gradients: the tape, its replay on the caller's context and the
 * backward walk (the rules of each op are in trace/grad_rules.c).
 *
 * Tracing the body first, instead of recording eager ops as they run,
 * keeps the eager path of every op free of tape bookkeeping and gives both
 * modes one implementation: eagerly the replay computes the forward values
 * at once, while tracing it records them into the caller's op list, where
 * CSE merges them with the same ops the caller made itself. */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

static const char *const who = "weft_gradients";

/* The tape this thread is tracing, if any.  Only the tape's own context
 * unrolls (the functions a branch resolves through their caches are
 * traced into those caches, as for any other caller). */
static _Thread_local const weft__graph *tape;

bool weft__grad_taping(const weft_ctx *cx)
{
    return tape && weft__ctx_graph(cx) == tape;
}

int weft__grad_accumulate(weft__grad_tape *t, uint32_t id, weft_value *v)
{
    if (!v)
        return weft_ctx_status(t->cx) < 0 ? weft_ctx_status(t->cx) : WEFT_ENOMEM;
    if (!t->depends[id] || !weft__dtype_is_float(t->g->nodes[id].spec.dtype))
        return 0;
    t->adj[id] = t->adj[id] ? weft_add(t->cx, t->adj[id], v) : v;
    return t->adj[id] ? 0 : weft_ctx_status(t->cx);
}

/* The nodes y needs, and those that depend on xs[0..n_wrt). */
static void mark_nodes(const weft__graph *g, uint32_t y, size_t n_wrt, bool *needed,
                       bool *depends)
{
    needed[y] = true;
    for (uint32_t i = y + 1; i-- > 0;)
        if (needed[i])
            for (uint32_t k = 0; k < g->nodes[i].n_in; k++)
                needed[g->nodes[i].in[k]] = true;
    for (uint32_t i = 0; i <= y; i++) {
        const weft__node *n = &g->nodes[i];
        depends[i] = n->op == WEFT__OP_ARG && n->attr.arg.index < n_wrt;
        for (uint32_t k = 0; k < n->n_in && !depends[i]; k++)
            depends[i] = depends[n->in[k]];
    }
}

/* Node id of the tape as a value of the caller's context, its inputs
 * already replayed. */
static weft_value *replay_node(weft__grad_tape *t, uint32_t id, weft_value *const *xs)
{
    const weft__node *n = &t->g->nodes[id];
    if (weft__grad_is_branch(n->op))
        return weft__grad_replay_branch(t, id) < 0 ? NULL : t->val[id];
    if (n->op == WEFT__OP_WHILE)
        return weft__grad_replay_while(t, id) < 0 ? NULL : t->val[id];
    if (n->op == WEFT__OP_SCAN)
        return weft__grad_replay_scan(t, id) < 0 ? NULL : t->val[id];
    if (n->op == WEFT__OP_MAP || n->op == WEFT__OP_MAP_EX)
        return weft__grad_replay_map(t, id);
    if (n->op == WEFT__OP_RESULT && t->val[id])
        return t->val[id];   /* set by its branch node's replay */
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_CONTROL: case WEFT__KIND_RESULT: case WEFT__KIND_MAP:
    case WEFT__KIND_HOST: case WEFT__KIND_FUSED:
        return weft__ctx_fail(t->cx, WEFT_EINVAL, "%s: the body uses %s, which cannot be "
                              "differentiated (loops, maps and host calls)", who,
                              weft__op_name(n->op));
    default:
        break;
    }
    if (n->op == WEFT__OP_ARG)
        return xs[n->attr.arg.index];
    if (n->op == WEFT__OP_CONST)
        return weft_const_tensor(t->cx, n->attr.constant.value);
    weft_value *small[8], **in = small;
    if (n->n_in > 8 && !(in = weft__calloc(n->n_in, sizeof *in)))
        return weft__ctx_fail(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    for (uint32_t k = 0; k < n->n_in; k++)
        in[k] = t->val[n->in[k]];
    weft__node copy = *n;
    copy.flags &= ~WEFT__NODE_STATIC;
    weft_value *v = weft__ops_finish(t->cx, &copy, in, n->n_in);
    if (in != small)
        weft__free(in);
    return v;
}

/* The backward walk from y (adjoint ones) down to the arguments. */
static int backward(weft__grad_tape *t, uint32_t y)
{
    t->adj[y] = weft_ones_like(t->cx, t->val[y]);
    if (!t->adj[y])
        return weft_ctx_status(t->cx);
    for (uint32_t i = y + 1; i-- > 0;) {
        weft__op op = t->g->nodes[i].op;
        if (!t->depends[i] || op == WEFT__OP_ARG || op == WEFT__OP_RESULT)
            continue;
        bool control = weft__grad_is_branch(op) || op == WEFT__OP_WHILE || op == WEFT__OP_SCAN ||
                       op == WEFT__OP_MAP_EX;
        if (!t->adj[i] && !control)
            continue;
        int rc = op == WEFT__OP_WHILE       ? weft__grad_while(t, i)
                 : op == WEFT__OP_SCAN      ? weft__grad_scan(t, i)
                 : op == WEFT__OP_MAP || op == WEFT__OP_MAP_EX ? weft__grad_map(t, i)
                 : weft__grad_is_branch(op) ? weft__grad_branch(t, i)
                                            : weft__grad_node(t, i);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Traces f for the specs of xs into g, with one output, a float. */
static int trace_tape(weft_ctx *cx, weft_body_fn f, void *user, weft_value *const *xs,
                      size_t n_xs, weft__graph *g)
{
    weft__targ small[8], *targs = small;
    if (n_xs > 8 && !(targs = weft__calloc(n_xs, sizeof *targs)))
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
    for (size_t i = 0; i < n_xs; i++)
        targs[i] = (weft__targ){ .kind = WEFT_ARG_TENSOR, .spec = *weft__value_spec(xs[i]) };
    const weft__graph *outer = tape;
    tape = g;
    int rc = weft__trace_body(weft__ctx_runtime(cx), who, f, user, targs, n_xs, 1, g);
    tape = outer;
    if (targs != small)
        weft__free(targs);
    if (rc < 0)
        return weft__ctx_failf(cx, rc, "%s", weft_errmsg());
    const weft_spec *ys = &g->nodes[g->outs[0]].spec;
    if (!weft__dtype_is_float(ys->dtype)) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_failf(cx, WEFT_EDTYPE, "%s: the body returns %s; only a float result "
                               "can be differentiated", who, weft__spec_str(ys, s, sizeof s));
    }
    return 0;
}

/* A handle of its own for res[k] when it is one of xs or an earlier
 * result (y = x, or two arguments whose adjoint is one value), so that
 * the caller can release each result once: times one, exact for every
 * float. */
static int own_handle(weft_ctx *cx, weft_value **res, size_t k, weft_value *const *xs, size_t n_xs)
{
    bool shared = false;
    for (size_t i = 0; i < n_xs && !shared; i++)
        shared = res[k] == xs[i];
    for (size_t i = 0; i < k && !shared; i++)
        shared = res[k] == res[i];
    if (shared && !(res[k] = weft_mul(cx, res[k], weft_const_f64(cx, 1.0))))
        return weft_ctx_status(cx);
    return 0;
}

/* Replays the tape and walks it back; res[0] is y, res[1..1+n_wrt) the
 * gradients.  Eagerly every other value made here ends with the scope. */
static int differentiate(weft_ctx *cx, const weft__graph *g, weft_value *const *xs,
                         size_t n_xs, size_t n_wrt, weft_value **res, void *scratch)
{
    WEFT__SCOPE_OUTS(cx, res, n_wrt + 1);
    uint32_t y = g->outs[0], n = y + 1;
    weft__grad_tape t = { .cx = cx, .g = g, .val = scratch };
    t.adj = t.val + n;
    bool *needed = (bool *)(t.adj + n), *depends = needed + n;
    t.depends = depends;
    mark_nodes(g, y, n_wrt, needed, depends);
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        if (needed[i] && !(t.val[i] = replay_node(&t, i, xs)))
            rc = weft_ctx_status(cx);
    if (rc == 0)
        rc = backward(&t, y);
    weft__grad_free_loops(&t);
    if (rc < 0)
        return rc;
    res[0] = t.val[y];
    for (size_t j = 0; j < n_wrt; j++) {
        weft_value *gj = NULL;
        for (uint32_t i = 0; i < n && !gj; i++)
            if (g->nodes[i].op == WEFT__OP_ARG && g->nodes[i].attr.arg.index == j)
                gj = t.adj[i];
        res[1 + j] = gj ? gj : weft_zeros_like(cx, xs[j]);
        if (!res[1 + j])
            return weft_ctx_status(cx);
    }
    for (size_t k = 0; k <= n_wrt; k++)
        if ((rc = own_handle(cx, res, k, xs, n_xs)) < 0)
            return rc;
    return 0;
}

static int check_wrt(weft_ctx *cx, weft_value *const *xs, size_t n_xs, size_t n_wrt)
{
    if (n_wrt == 0 || n_wrt > n_xs)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: n_wrt is %zu; it must be 1..n_xs (%zu)",
                               who, n_wrt, n_xs);
    for (size_t j = 0; j < n_wrt; j++) {
        const weft_spec *s = weft__value_spec(xs[j]);
        if (!weft__dtype_is_float(s->dtype)) {
            char b[WEFT__SPEC_STR_MAX];
            return weft__ctx_failf(cx, WEFT_EDTYPE, "%s: xs[%zu] is %s; only floats can be "
                                   "differentiated", who, j, weft__spec_str(s, b, sizeof b));
        }
    }
    return 0;
}

int weft_gradients(weft_ctx *cx, weft_body_fn f, void *user, weft_value *const *xs,
                   size_t n_xs, size_t n_wrt, weft_value **y, weft_value **grads)
{
    int rc = weft__ctx_enter_int(cx, who, xs, n_xs, grads, n_wrt <= n_xs ? n_wrt : 0);
    if (rc < 0)
        return rc;
    if (y)
        *y = NULL;
    if (!f || !grads)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %s is NULL", who, f ? "grads" : "f");
    if ((rc = check_wrt(cx, xs, n_xs, n_wrt)) < 0)
        return rc;
    weft__graph g;
    weft__graph_init(&g, 0);   /* freed on every path below, a failed trace's too */
    void *scratch = NULL;
    weft_value **res = weft__calloc(n_wrt + 1, sizeof *res);
    if (!res) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done_res;
    }
    if ((rc = trace_tape(cx, f, user, xs, n_xs, &g)) < 0)
        goto done;
    size_t n = (size_t)g.outs[0] + 1;
    scratch = weft__calloc(n, 2 * sizeof(weft_value *) + 2 * sizeof(bool));
    if (!scratch) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    if ((rc = differentiate(cx, &g, xs, n_xs, n_wrt, res, scratch)) < 0)
        goto done;
    if (y)
        *y = res[0];
    else
        weft_value_release(cx, res[0]);
    memcpy(grads, res + 1, n_wrt * sizeof *grads);
done:
    weft__free(scratch);
    weft__graph_free(&g);
done_res:
    weft__free(res);
    return rc;
}
