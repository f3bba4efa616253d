/* Dead-code elimination: keeps what the outputs and the side effects (host
 * calls, maps that make them) need, through inputs and the ordering edges
 * between side effects.
 * ARG nodes stay, since the executor finds arguments by them. */
#include "runtime/iface.h"
#include "trace/program.h"

int weft__pass_dce(weft__graph *g)
{
    if (g->n_nodes == 0)
        return 0;
    bool *live = weft__calloc(g->n_nodes, sizeof *live);
    if (!live)
        return weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
    for (uint32_t k = 0; k < g->n_outs; k++)
        live[g->outs[k]] = true;
    /* Inputs have smaller ids, so one backward sweep reaches every
     * producer of a live node. */
    bool any_dead = false;
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        const weft__node *n = &g->nodes[i];
        if ((n->flags & WEFT__NODE_SIDE_EFFECT) || n->op == WEFT__OP_ARG)
            live[i] = true;
        if (!live[i]) {
            any_dead = true;
            continue;
        }
        for (uint32_t k = 0; k < n->n_in; k++)
            live[n->in[k]] = true;
        if (n->after != WEFT__NO_NODE)
            live[n->after] = true;
    }
    int rc = any_dead ? weft__graph_rebuild(g, live, NULL, NULL) : 0;
    weft__free(live);
    return rc;
}
