/* Constant folding: a node whose inputs are all constants is computed once,
 * at compile time, into a CONST node.  Small FILL and RANGE leaves count as
 * constants too; map and host calls never fold (they run every call). */
#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/program.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* Leaves bigger than this stay leaves: folding them would only move their
 * cost from every run into the program's memory. */
#define FOLD_LEAF_MAX 4096

/* n's element count, when its shape is known and the count fits. */
static bool result_numel(const weft__node *n, int64_t *numel)
{
    return weft__spec_is_concrete(&n->spec) &&
           weft__numel_checked(n->spec.rank, n->spec.dims, 1, numel);
}

static bool all_inputs_const(const weft__graph *g, const weft__node *n)
{
    for (uint32_t k = 0; k < n->n_in; k++)
        if (g->nodes[n->in[k]].op != WEFT__OP_CONST)
            return false;
    return true;
}

/* A node of unknown dims whose inputs have all become constants (after an
 * argwhere or unique folded, say) gets the spec those constants give, so
 * that it may fold in turn. */
static void refine_spec(const weft__graph *g, weft__node *n)
{
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_LEAF: case WEFT__KIND_MAP: case WEFT__KIND_HOST: case WEFT__KIND_FUSED:
    case WEFT__KIND_CONTROL: case WEFT__KIND_RESULT:
        return;
    default:
        break;
    }
    if (weft__spec_is_concrete(&n->spec) || n->n_in == 0 || n->n_in > 3 ||
        !all_inputs_const(g, n))
        return;
    weft_spec in[3], out;
    for (uint32_t k = 0; k < n->n_in; k++)
        weft__tensor_spec(g->nodes[n->in[k]].attr.constant.value, &in[k]);
    if (weft__infer_spec(n, in, &out) == 0)
        n->spec = out;
}

static bool foldable(const weft__graph *g, const weft__node *n)
{
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_MAP: case WEFT__KIND_HOST: case WEFT__KIND_FUSED:
    case WEFT__KIND_CONTROL: case WEFT__KIND_RESULT:
        return false;
    case WEFT__KIND_LEAF: {
        if (n->op != WEFT__OP_FILL && n->op != WEFT__OP_RANGE)
            return false;
        int64_t numel;
        return result_numel(n, &numel) && numel <= FOLD_LEAF_MAX;
    }
    default:
        break;
    }
    if (n->flags & WEFT__NODE_SIDE_EFFECT)
        return false;
    if (!all_inputs_const(g, n))
        return false;
    /* Their results hold no more elements than their inputs (argwhere's,
     * rank times more), and their sizes are known only once computed. */
    if (weft__op_shape_from_values(n->op))
        return true;
    int64_t largest_in = FOLD_LEAF_MAX;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const weft__node *in = &g->nodes[n->in[k]];
        if (in->attr.constant.value && in->attr.constant.value->numel > largest_in)
            largest_in = in->attr.constant.value->numel;
    }
    /* A result that outgrows its inputs (a broadcast, an outer product)
     * would sit in the program's memory for as long as it is cached, for
     * the sake of work the run does anyway: it is left to the run, as big
     * leaves are. */
    int64_t numel;
    if (!result_numel(n, &numel) || numel > largest_in)
        return false;
    return true;
}

/* Computes n from its constant inputs into *t (any count: concat and
 * stack take many). */
static int fold_inputs(const weft__graph *g, const weft__node *n, weft_tensor **t)
{
    weft_tensor *in_s[3], **in = in_s;
    if (n->n_in > 3 && !(in = weft__malloc(sizeof *in * n->n_in)))
        return weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
    for (uint32_t k = 0; k < n->n_in; k++)
        in[k] = g->nodes[n->in[k]].attr.constant.value;
    int rc = weft__kernel_eval(NULL, n, in, t);
    if (in != in_s)
        weft__free(in);
    return rc;
}

int weft__pass_fold(weft__graph *g)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        weft__node *n = &g->nodes[i];
        weft_tensor *t = NULL;
        /* The shape of a tensor of known shape is known whatever its
         * values. */
        int rc = weft__shape_fold_spec(g, n, &t);
        if (rc < 0)
            return rc;
        if (!t)
            refine_spec(g, n);
        if (!t && foldable(g, n))
            rc = fold_inputs(g, n, &t);
        if (rc == WEFT_ENOMEM)
            return rc;
        /* Any other failure (an integer division by zero, say) is left to
         * the run, which reports it in context. */
        if (rc < 0 || !t)
            continue;
        n->op = WEFT__OP_CONST;
        n->flags &= ~WEFT__NODE_STATIC;
        if (n->n_in > 3)
            weft__free(n->in);   /* a long input list is the node's own */
        n->n_in = 0;
        n->in = n->inline_in;
        weft__tensor_spec(t, &n->spec);
        n->attr.constant.value = t;
    }
    return 0;
}
