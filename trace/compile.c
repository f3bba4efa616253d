/* The pass driver and the graph rebuild every pass uses to drop, replace
 * and renumber nodes. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/program.h"

/* Leaves a moved-out node owning nothing, so that freeing the old graph
 * does not release what the new one took over. */
static void disown(weft__node *n)
{
    switch (n->op) {
    case WEFT__OP_CONST: n->attr.constant.value = NULL; break;
    case WEFT__OP_MAP:   n->attr.map.concrete = NULL; break;
    case WEFT__OP_FUSED: n->attr.fused.prog = NULL; break;
    case WEFT__OP_COND: case WEFT__OP_WHILE: case WEFT__OP_MAP_EX: case WEFT__OP_HOST_EX:
    case WEFT__OP_SCAN: case WEFT__OP_CASE: case WEFT__OP_WHILE_VJP: case WEFT__OP_SCAN_VJP:
    case WEFT__OP_MAP_VJP:
        n->attr.multi.m = NULL;
        break;
    default: break;
    }
}

static uint32_t resolve(const uint32_t *fwd, uint32_t x)
{
    return fwd ? fwd[x] : x;
}

int weft__graph_rebuild(weft__graph *g, const bool *keep, const uint32_t *fwd,
                        weft__node *const *subst)
{
    int rc = WEFT_ENOMEM;
    weft__graph ng;
    uint32_t *newid = NULL, *tmp = NULL;
    weft__graph_init(&ng, g->n_args);
    newid = weft__malloc(((size_t)g->n_nodes + 1) * sizeof *newid);
    if (!newid)
        goto error;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        newid[i] = WEFT__NO_NODE;
    ng.outs = weft__malloc(((size_t)g->n_outs + 1) * sizeof *ng.outs);
    if (!ng.outs)
        goto error;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (!keep[i])
            continue;
        weft__node *src = subst && subst[i] ? subst[i] : &g->nodes[i];
        uint32_t inl[3], *in = inl;
        if (src->n_in > 3) {
            tmp = weft__malloc((size_t)src->n_in * sizeof *tmp);
            if (!tmp)
                goto error;
            in = tmp;
        }
        for (uint32_t k = 0; k < src->n_in; k++) {
            in[k] = newid[resolve(fwd, src->in[k])];
            if (in[k] == WEFT__NO_NODE) {
                rc = weft__errorf(WEFT_EINVAL, "weft compile: node %u reads a dropped node", i);
                goto error;
            }
        }
        weft__node copy = *src;
        if (copy.after != WEFT__NO_NODE)
            copy.after = newid[resolve(fwd, copy.after)];
        uint32_t id = weft__graph_add(&ng, &copy, in, src->n_in);
        weft__free(tmp);
        tmp = NULL;
        if (id == WEFT__NO_NODE)
            goto error;
        disown(src);
        newid[i] = id;
    }
    for (uint32_t k = 0; k < g->n_outs; k++) {
        ng.outs[k] = newid[resolve(fwd, g->outs[k])];
        if (ng.outs[k] == WEFT__NO_NODE) {
            rc = weft__errorf(WEFT_EINVAL, "weft compile: output %u was dropped", k);
            goto error;
        }
    }
    ng.n_outs = g->n_outs;
    ng.last_side_effect = g->last_side_effect == WEFT__NO_NODE ? WEFT__NO_NODE
                                                                : newid[g->last_side_effect];
    weft__free(newid);
    weft__graph_free(g);
    *g = ng;
    return 0;
error:
    /* Attributes already moved would be lost with ng; move them back. */
    for (uint32_t i = 0; newid && i < g->n_nodes; i++) {
        if (newid[i] == WEFT__NO_NODE)
            continue;
        weft__node *src = subst && subst[i] ? subst[i] : &g->nodes[i];
        src->attr = ng.nodes[newid[i]].attr;
        disown(&ng.nodes[newid[i]]);
    }
    if (rc == WEFT_ENOMEM)
        weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
    weft__free(tmp);
    weft__free(newid);
    weft__graph_free(&ng);
    return rc;
}

int weft__compile_graph(weft__graph *g)
{
    int rc;
    if ((rc = weft__pass_dce(g)) < 0)
        return rc;
    if ((rc = weft__pass_fold(g)) < 0)
        return rc;
    if ((rc = weft__pass_cse(g)) < 0)
        return rc;
    /* Folding and merging leave producers nobody reads. */
    if ((rc = weft__pass_dce(g)) < 0)
        return rc;
    return weft__pass_fuse(g);
}
