/* weft_gradients through weft_scan, weft_foldl, weft_foldr, weft_map and
 * weft_map_ex whose rows are unknown when the tape is traced (a known count
 * unrolls instead, trace/unroll.c).  Maps (at the end) take the same way
 * with map_gradient (MAP_VJP, run by trace/map_vjp.c over the workers):
 * each row's adjoints from its own outputs', no carry.  The replay runs
 * or records the scan again; the rule records one CONTROL node,
 * scan_gradient (SCAN_VJP):
 *   inputs:  the scan's inputs (init, elems, captures), then an adjoint
 *            for each float accumulator's result (a scan's stacked rows,
 *            a fold's last value), zeros where the result is unused;
 *   outputs: the adjoints of the scan's float inputs, in their order.
 * When it runs it reruns the steps keeping each step's accumulators, then
 * walks the steps back through fn's vector-Jacobian product
 * (weft__grad_trace_vjp, traced when the rule runs): a step's accumulator
 * adjoint is the next step's plus, for a scan, its own row of the stacked
 * adjoint; each row's adjoint lands in that row of its elems' adjoint; the
 * captures' adjoints add up over the steps. */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

static const char *const who = "weft_gradients";

/* A SCAN node's inputs by role. */
typedef struct scan_roles {
    unsigned mode;
    size_t   n_acc, n_init, n_elems, n_caps;
} scan_roles;

static scan_roles roles_of(const weft__node *node)
{
    const struct weft__multi *m = node->attr.multi.m;
    scan_roles s = { .mode = m->scan_mode, .n_acc = m->n_outs, .n_elems = m->n_mapped };
    s.n_init = s.mode & WEFT__SCAN_NO_INIT ? 0 : s.n_acc;
    s.n_caps = node->n_in - s.n_init - s.n_elems;
    return s;
}

int weft__grad_replay_scan(weft__grad_tape *t, uint32_t id)
{
    const weft__node *node = &t->g->nodes[id];
    const struct weft__multi *m = node->attr.multi.m;
    scan_roles s = roles_of(node);
    weft_value **vals = weft__calloc(node->n_in + s.n_acc, sizeof *vals);
    if (!vals)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **outs = vals + node->n_in;
    for (uint32_t k = 0; k < node->n_in; k++)
        vals[k] = t->val[node->in[k]];
    unsigned mode = s.mode & (WEFT__SCAN_FOLD | WEFT__SCAN_REVERSE);
    int rc = weft__scan_emit(t->cx, mode, m->fn[0], s.n_init ? vals : NULL, s.n_acc,
                             vals + s.n_init, s.n_elems, vals + s.n_init + s.n_elems, s.n_caps,
                             outs);
    if (rc == 0)
        weft__grad_set_results(t, id, outs);
    t->val[id] = rc == 0 ? vals[0] : NULL;   /* marks the node as replayed */
    weft__free(vals);
    return rc;
}

/* The specs fn takes (accumulators, a row of each elems, captures) from
 * the scan's replayed inputs in[], into specs; 0 or the context's code. */
static int fn_specs(weft_ctx *cx, const scan_roles *s, weft_value *const *in, weft_spec *specs)
{
    weft_value *const *elems = in + s->n_init;
    for (size_t e = 0; e < s->n_elems; e++)
        if (!weft__slice_spec(cx, who, "elems", weft__value_spec(elems[e]),
                              &specs[s->n_acc + e]))
            return weft_ctx_status(cx);
    for (size_t k = 0; k < s->n_acc; k++)
        specs[k] = s->n_init ? *weft__value_spec(in[k]) : specs[s->n_acc + k];
    for (size_t c = 0; c < s->n_caps; c++)
        specs[s->n_acc + s->n_elems + c] = *weft__value_spec(in[s->n_init + s->n_elems + c]);
    return 0;
}

/* The scan_gradient node of scan node id, given its results' adjoints
 * adj[] and values res[]; gives its float inputs their adjoints. */
static int record_vjp(weft__grad_tape *t, uint32_t id, weft_value **adj, weft_value **res)
{
    weft_ctx *cx = t->cx;
    const weft__node *scan = &t->g->nodes[id];
    const struct weft__multi *sm = scan->attr.multi.m;
    scan_roles s = roles_of(scan);
    size_t n_in = scan->n_in, n_args = s.n_acc + s.n_elems + s.n_caps;
    weft_value **in = weft__calloc(n_in + s.n_acc, sizeof *in);
    weft_spec *specs = weft__calloc(2 * n_args, sizeof *specs);
    struct weft__multi *m = NULL;
    size_t n_tail = 0;
    int rc = 0;
    if (!in || !specs) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    for (size_t k = 0; k < n_in; k++)
        in[k] = t->val[scan->in[k]];
    if ((rc = fn_specs(cx, &s, in, specs)) < 0)
        goto done;
    for (size_t k = 0; k < s.n_acc; k++)
        if (weft__dtype_is_float(specs[k].dtype))
            in[n_in + n_tail++] = adj[k] ? adj[k] : weft_zeros_like(cx, res[k]);
    if (!(m = weft__grad_vjp_multi(cx, in, n_in))) {
        rc = weft_ctx_status(cx);
        goto done;
    }
    m->n_mapped = (uint32_t)s.n_elems;
    m->scan_mode = s.mode;
    m->n_acc = (uint32_t)s.n_acc;
    if ((rc = weft__multi_resolve(cx, who, "fn", sm->fn[0], specs, n_args, s.n_acc, m, 0,
                                  specs + n_args)) < 0 ||
        (rc = weft__grad_trace_vjp(cx, "a scan's fn", sm->fn[0], specs, n_args, specs,
                                   s.n_acc, &m->vjp)) < 0)
        goto done;
    rc = weft__grad_emit_vjp(t, id, WEFT__OP_SCAN_VJP, m, in, n_in + n_tail);
    m = NULL;   /* taken over */
done:
    weft__multi_free(m);
    weft__free(in);
    weft__free(specs);
    return rc;
}

int weft__grad_scan(weft__grad_tape *t, uint32_t id)
{
    if (!t->val[id])
        return 0;   /* not replayed: nothing needed it */
    size_t n_acc = t->g->nodes[id].attr.multi.m->n_outs;
    weft_value **adj = weft__calloc(2 * n_acc, sizeof *adj);
    if (!adj)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **res = adj + n_acc;
    int rc = weft__grad_result_adjoints(t, id, (uint32_t)n_acc, adj);
    bool any = false;
    for (size_t k = 0; k < n_acc; k++)
        any |= adj[k] != NULL;
    weft__grad_result_values(t, id, res);
    if (rc == 0 && any)
        rc = record_vjp(t, id, adj, res);
    weft__free(adj);
    return rc;
}

/* ---- Maps ------------------------------------------------------------ */

/* A MAP or MAP_EX node: its function, elems and captures, parallelism. */
typedef struct map_roles {
    weft_function *fn;
    size_t n_elems, n_caps, n_out;
    unsigned parallel_iterations;
} map_roles;

static map_roles map_roles_of(const weft__node *node)
{
    if (node->op == WEFT__OP_MAP)
        return (map_roles){ node->attr.map.fn, 1, 0, 1, node->attr.map.parallel_iterations };
    const struct weft__multi *m = node->attr.multi.m;
    return (map_roles){ m->fn[0], m->n_mapped, node->n_in - m->n_mapped, m->n_outs,
                        m->parallel_iterations };
}

weft_value *weft__grad_replay_map(weft__grad_tape *t, uint32_t id)
{
    const weft__node *node = &t->g->nodes[id];
    map_roles s = map_roles_of(node);
    if (node->op == WEFT__OP_MAP)
        return weft_map(t->cx, s.fn, t->val[node->in[0]], s.parallel_iterations);
    weft_value **vals = weft__calloc(node->n_in + s.n_out, sizeof *vals);
    if (!vals)
        return weft__ctx_fail(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **outs = vals + node->n_in;
    for (uint32_t k = 0; k < node->n_in; k++)
        vals[k] = t->val[node->in[k]];
    int rc = weft_map_ex(t->cx, s.fn, vals, s.n_elems, vals + s.n_elems, s.n_caps, outs, s.n_out,
                         s.parallel_iterations);
    if (rc == 0)
        weft__grad_set_results(t, id, outs);
    weft_value *marker = rc == 0 ? vals[0] : NULL;
    weft__free(vals);
    return marker;
}

/* The map_gradient node of map node id from its outputs' adjoints adj[]
 * and values res[] (n_out each). */
static int record_map_vjp(weft__grad_tape *t, uint32_t id, weft_value **adj, weft_value **res)
{
    weft_ctx *cx = t->cx;
    const weft__node *map = &t->g->nodes[id];
    map_roles s = map_roles_of(map);
    size_t n_in = map->n_in, n_args = s.n_elems + s.n_caps, n_tail = 0;
    weft_value **in = weft__calloc(n_in + s.n_out, sizeof *in);
    weft_spec *specs = weft__calloc(2 * n_args + 2 * s.n_out, sizeof *specs);
    struct weft__multi *m = NULL;
    int rc = 0;
    if (!in || !specs) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    weft_spec *outs = specs + n_args, *got = outs + s.n_out;
    for (size_t k = 0; k < n_in; k++) {
        in[k] = t->val[map->in[k]];
        const weft_spec *ks = weft__value_spec(in[k]);
        specs[k] = *ks;
        if (k < s.n_elems && !weft__slice_spec(cx, who, "elems", ks, &specs[k])) {
            rc = weft_ctx_status(cx);
            goto done;
        }
    }
    for (size_t k = 0; k < s.n_out; k++) {
        if (!weft__slice_spec(cx, who, "a map's result", weft__value_spec(res[k]), &outs[k])) {
            rc = weft_ctx_status(cx);
            goto done;
        }
        if (weft__dtype_is_float(outs[k].dtype))
            in[n_in + n_tail++] = adj[k] ? adj[k] : weft_zeros_like(cx, res[k]);
    }
    if (!(m = weft__grad_vjp_multi(cx, in, n_in))) {
        rc = weft_ctx_status(cx);
        goto done;
    }
    m->n_mapped = (uint32_t)s.n_elems;
    m->n_acc = (uint32_t)n_tail;
    m->parallel_iterations = s.parallel_iterations;
    if ((rc = weft__multi_resolve(cx, who, "fn", s.fn, specs, n_args, s.n_out, m, 0, got)) < 0 ||
        (rc = weft__grad_trace_vjp(cx, "a map's fn", s.fn, specs, n_args, outs, s.n_out,
                                   &m->vjp)) < 0)
        goto done;
    rc = weft__grad_emit_vjp(t, id, WEFT__OP_MAP_VJP, m, in, n_in + n_tail);
    m = NULL;   /* taken over */
done:
    weft__multi_free(m);
    weft__free(in);
    weft__free(specs);
    return rc;
}

int weft__grad_map(weft__grad_tape *t, uint32_t id)
{
    if (!t->val[id])
        return 0;
    const weft__node *node = &t->g->nodes[id];
    map_roles s = map_roles_of(node);
    weft_value **adj = weft__calloc(2 * s.n_out, sizeof *adj);
    if (!adj)
        return weft__ctx_failf(t->cx, WEFT_ENOMEM, "%s: out of memory", who);
    weft_value **res = adj + s.n_out;
    int rc = 0;
    if (node->op == WEFT__OP_MAP) {
        adj[0] = t->adj[id];
        res[0] = t->val[id];
    } else {
        rc = weft__grad_result_adjoints(t, id, (uint32_t)s.n_out, adj);
        weft__grad_result_values(t, id, res);
    }
    bool any = false;
    for (size_t k = 0; k < s.n_out; k++)
        any |= adj[k] != NULL;
    if (rc == 0 && any)
        rc = record_map_vjp(t, id, adj, res);
    weft__free(adj);
    return rc;
}
