/* weft_gradients through weft_while_loop, eagerly.  A loop's trip count
 * is a value, so a traced tape cannot unroll it; an eager replay can run
 * it: the loop runs on the caller's context with weft_call, keeping every
 * iteration's variables, and the rule walks the iterations back, each a
 * weft_gradients of the body's outputs dotted with their adjoints (the
 * float variables differentiated, the others constants).  While tracing,
 * trace/grad_while.c records one node that does the same when it runs. */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

static const char *const who = "weft_gradients";

/* One loop's iterations: vars[i * n + k] is variable k before iteration
 * i; the last n are the loop's results. */
struct weft__grad_loop {
    uint32_t     id;
    size_t       n_iter;
    weft_value **vars;
};

void weft__grad_free_loops(weft__grad_tape *t)
{
    for (size_t i = 0; i < t->n_loops; i++)
        weft__free(t->loops[i].vars);
    weft__free(t->loops);
    t->loops = NULL;
    t->n_loops = 0;
}

/* Whether cond_fn holds for vars (its bool[] read), into *go. */
static int holds(weft_ctx *cx, weft_function *cond_fn, weft_value *const *vars, size_t n,
                 bool *go)
{
    weft_value *p = NULL;
    int rc = weft_call(cx, cond_fn, vars, n, &p, 1);
    if (rc < 0)
        return rc;
    const weft_spec *ps = weft__value_spec(p);
    if (ps->dtype != WEFT_BOOL || ps->rank != 0) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_failf(cx, WEFT_EDTYPE, "%s: while_loop's cond_fn returns %s, not a "
                               "bool[]", who, weft__spec_str(ps, s, sizeof s));
    }
    *go = *(const unsigned char *)weft_tensor_data(weft__value_tensor(p)) != 0;
    weft_value_release(cx, p);
    return 0;
}

/* vars grown to hold at least need values (doubling). */
static int reserve(weft_ctx *cx, weft_value ***vars, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t grown = *cap ? *cap : 16;
    while (grown < need)
        grown *= 2;
    weft_value **more = weft__realloc(*vars, grown * sizeof **vars);
    if (!more)
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
    *vars = more;
    *cap = grown;
    return 0;
}

int weft__grad_replay_while(weft__grad_tape *t, uint32_t id)
{
    weft_ctx *cx = t->cx;
    const weft__node *node = &t->g->nodes[id];
    const struct weft__multi *m = node->attr.multi.m;
    size_t n = node->n_in, cap = 0, n_iter = 0;
    if (!weft__ctx_is_eager(cx))
        return weft__grad_replay_while_traced(t, id);
    struct weft__grad_loop *loops = weft__realloc(t->loops, (t->n_loops + 1) * sizeof *loops);
    if (!loops)
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
    t->loops = loops;
    weft_value **vars = NULL;
    int rc = reserve(cx, &vars, &cap, n);
    for (size_t k = 0; rc == 0 && k < n; k++)
        vars[k] = t->val[node->in[k]];
    for (bool go = true; rc == 0;) {
        if ((rc = holds(cx, m->fn[0], vars + n_iter * n, n, &go)) < 0 || !go)
            break;
        if ((rc = reserve(cx, &vars, &cap, (n_iter + 2) * n)) < 0)
            break;
        rc = weft_call(cx, m->fn[1], vars + n_iter * n, n, vars + (n_iter + 1) * n, n);
        n_iter += rc == 0;
    }
    t->loops[t->n_loops++] = (struct weft__grad_loop){ id, n_iter, vars };
    if (rc == 0)
        weft__grad_set_results(t, id, vars + n_iter * n);
    t->val[id] = vars ? vars[0] : NULL;   /* marks the node as replayed */
    return rc;
}

/* The adjoints adj[0..n) of iteration `it`'s results made those of its
 * variables: one weft_gradients of the body's outputs dotted with adj. */
static int step_back(weft__grad_tape *t, weft_function *body, weft_value *const *vars, size_t n,
                     weft_value **adj, weft_value **xs, uint32_t *arg_of, bool *has_adj)
{
    size_t n_xs = 0, n_float = 0, n_adj = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n; k++)
            if (weft__dtype_is_float(weft__value_spec(vars[k])->dtype) == (pass == 0)) {
                arg_of[n_xs] = (uint32_t)k;
                xs[n_xs++] = vars[k];
                n_float += pass == 0;
            }
    for (size_t k = 0; k < n; k++)
        if ((has_adj[k] = adj[k] != NULL))
            xs[n_xs++] = adj[k], n_adj++;
    if (n_adj == 0 || n_float == 0) {
        memset(adj, 0, n * sizeof *adj);
        return 0;
    }
    weft__grad_vjp v = { .fn = body, .n_args = (uint32_t)n, .n_outs = (uint32_t)n,
                         .arg_of = arg_of, .has_adj = has_adj };
    weft_value **grads = xs + n_xs;
    int rc = weft_gradients(t->cx, weft__grad_vjp_body, &v, xs, n_xs, n_float, NULL, grads);
    if (rc < 0)
        return rc;
    memset(adj, 0, n * sizeof *adj);
    for (size_t i = 0; i < n_float; i++)
        adj[arg_of[i]] = grads[i];
    return 0;
}

int weft__grad_while(weft__grad_tape *t, uint32_t id)
{
    const weft__node *node = &t->g->nodes[id];
    const struct weft__multi *m = node->attr.multi.m;
    size_t n = node->n_in;
    if (!weft__ctx_is_eager(t->cx))
        return t->val[id] ? weft__grad_while_traced(t, id) : 0;
    const struct weft__grad_loop *loop = NULL;
    for (size_t i = 0; i < t->n_loops && !loop; i++)
        if (t->loops[i].id == id)
            loop = &t->loops[i];
    if (!loop)
        return 0;   /* not replayed: nothing needed it */
    /* adj n, xs 2n, grads n, arg_of n, has_adj n */
    void *mem = weft__calloc(4 * n + 1, sizeof(weft_value *) + sizeof(uint32_t) + sizeof(bool));
    if (!mem)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **adj = mem, **xs = adj + n;
    uint32_t *arg_of = (uint32_t *)(void *)((weft_value **)mem + 4 * n + 1);
    bool *has_adj = (bool *)(arg_of + 4 * n + 1);
    int rc = weft__grad_result_adjoints(t, id, (uint32_t)n, adj);
    for (size_t it = loop->n_iter; rc == 0 && it-- > 0;)
        rc = step_back(t, m->fn[1], loop->vars + it * n, n, adj, xs, arg_of, has_adj);
    weft__grad_rule r = { .t = t, .cx = t->cx, .n = node };
    for (size_t k = 0; rc == 0 && k < n; k++)
        if (adj[k])
            rc = weft__grad_give(&r, (uint32_t)k, adj[k]);
    weft__free(mem);
    return rc;
}
