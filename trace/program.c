/* weft__trace_compile: trace a body, compile its op list, and package the
 * result with what the executor needs (dependency counts, successor lists,
 * the buffer plan); plus printing and freeing programs. */
#include <inttypes.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/jit.h"
#include "trace/program.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

static bool is_borrowed(const weft__node *n)
{
    return n->op == WEFT__OP_ARG || n->op == WEFT__OP_CONST;
}

/* Distinct dependencies of node i that must finish before it (executable
 * inputs and the ordering edge); dep[] receives at most n_in + 1 ids. */
static uint32_t deps_of(const weft__graph *g, uint32_t i, uint32_t *dep)
{
    const weft__node *n = &g->nodes[i];
    uint32_t nd = 0;
    for (uint32_t k = 0; k <= n->n_in; k++) {
        uint32_t p = k < n->n_in ? n->in[k] : n->after;
        if (p == WEFT__NO_NODE || is_borrowed(&g->nodes[p]))
            continue;
        bool seen = false;
        for (uint32_t j = 0; j < nd && !seen; j++)
            seen = dep[j] == p;
        if (!seen)
            dep[nd++] = p;
    }
    return nd;
}

static size_t count_ops(const weft__graph *g)
{
    size_t c = 0;
    /* Arguments, static ones included, are not ops the body recorded. */
    for (uint32_t i = 0; i < g->n_nodes; i++)
        c += g->nodes[i].op != WEFT__OP_ARG && !(g->nodes[i].flags & WEFT__NODE_STATIC);
    return c;
}

/* Numbers the results of CONTROL nodes: a run keeps them in one array.
 * A program without any has no index (multi_off stays NULL). */
static int index_results(weft__program *p)
{
    bool any = false;
    for (uint32_t i = 0; i < p->g.n_nodes && !any; i++)
        any = weft__op_kind_of(p->g.nodes[i].op) == WEFT__KIND_CONTROL;
    if (!any)
        return 0;
    p->multi_off = weft__malloc(((size_t)p->g.n_nodes + 1) * sizeof *p->multi_off);
    if (!p->multi_off)
        return WEFT_ENOMEM;
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        const weft__node *nd = &p->g.nodes[i];
        p->multi_off[i] = WEFT__NO_NODE;
        if (weft__op_kind_of(nd->op) == WEFT__KIND_CONTROL) {
            p->multi_off[i] = p->n_multi;
            p->n_multi += nd->attr.multi.m->n_outs;
        }
    }
    return 0;
}

/* The edges of the schedule: each node's dependency count, the successor
 * lists, the roots, how many distinct nodes read each value, and the flags
 * that follow from the graph alone (output, borrowed, dynamic). */
static int program_edges(weft__program *p)
{
    int rc = WEFT_ENOMEM;
    uint32_t n = p->g.n_nodes;
    size_t max_in = 1;
    for (uint32_t i = 0; i < n; i++)
        if (p->g.nodes[i].n_in + 1 > max_in)
            max_in = p->g.nodes[i].n_in + 1;
    uint32_t *dep = weft__malloc(max_in * sizeof *dep);
    uint32_t *level = weft__calloc((size_t)n + 1, sizeof *level);
    uint32_t *per_level = weft__calloc((size_t)n + 2, sizeof *per_level);
    uint32_t *cursor = NULL;   /* where each node's next successor goes */
    if (!dep || !level || !per_level)
        goto out;

    for (uint32_t k = 0; k < p->g.n_outs; k++)
        p->pflags[p->g.outs[k]] |= WEFT__PN_OUTPUT;
    size_t edges = 0;
    p->chain = true;
    for (uint32_t i = 0; i < n; i++) {
        const weft__node *nd = &p->g.nodes[i];
        if (is_borrowed(nd)) {
            p->pflags[i] |= WEFT__PN_BORROWED;
            continue;
        }
        p->n_exec++;
        /* Maps of functions that make host calls may block like them. */
        p->has_host |= nd->op == WEFT__OP_HOST || (nd->flags & WEFT__NODE_SIDE_EFFECT);
        bool dyn = !weft__spec_is_concrete(&nd->spec);
        for (uint32_t k = 0; k < nd->n_in; k++)
            dyn |= !weft__spec_is_concrete(&p->g.nodes[nd->in[k]].spec);
        if (dyn)
            p->pflags[i] |= WEFT__PN_DYNAMIC;
        uint32_t nd_n = deps_of(&p->g, i, dep);
        p->n_deps[i] = nd_n;
        uint32_t lv = 0;
        for (uint32_t j = 0; j < nd_n; j++) {
            p->succ_off[dep[j] + 1]++;
            if (level[dep[j]] + 1 > lv)
                lv = level[dep[j]] + 1;
        }
        level[i] = lv;
        if (++per_level[lv] > 1)
            p->chain = false;
        edges += nd_n;
        if (nd_n == 0)
            p->roots[p->n_roots++] = i;
        /* Readers release values: count each reading node once. */
        for (uint32_t k = 0; k < nd->n_in; k++) {
            bool seen = false;
            for (uint32_t j = 0; j < k && !seen; j++)
                seen = nd->in[j] == nd->in[k];
            if (!seen)
                p->n_uses[nd->in[k]]++;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        p->succ_off[i + 1] += p->succ_off[i];
    p->succ = weft__malloc((edges + 1) * sizeof *p->succ);
    cursor = weft__malloc(((size_t)n + 1) * sizeof *cursor);
    if (!p->succ || !cursor)
        goto out;
    memcpy(cursor, p->succ_off, (size_t)n * sizeof *cursor);
    for (uint32_t i = 0; i < n; i++) {
        if (is_borrowed(&p->g.nodes[i]))
            continue;
        uint32_t nd_n = deps_of(&p->g, i, dep);
        for (uint32_t j = 0; j < nd_n; j++)
            p->succ[cursor[dep[j]]++] = i;
    }
    rc = 0;
out:
    weft__free(dep);
    weft__free(level);
    weft__free(per_level);
    weft__free(cursor);
    return rc;
}

/* The buffer plan: the node whose buffer each node takes over (its donor),
 * and the flags that follow from it. */
static int program_plan(weft__program *p)
{
    int rc = weft__plan_buffers(&p->g, p->pflags, p->donor);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        if (p->donor[i] != WEFT__NO_NODE)
            p->pflags[p->donor[i]] |= WEFT__PN_DONOR;
        if (weft__plan_is_planned(p->g.nodes[i].op))
            p->pflags[i] |= WEFT__PN_PLANNED;
    }
    return 0;
}

/* The slots of the plan: each node's element count (-1 when unknown until
 * it runs) and the bytes its slot needs.  A slot's first node allocates the
 * most that any node along the slot needs. */
static int program_slots(weft__program *p)
{
    uint32_t n = p->g.n_nodes;
    uint32_t *receiver = weft__malloc(((size_t)n + 1) * sizeof *receiver); /* a donor's taker */
    p->slot_bytes = weft__calloc((size_t)n + 1, sizeof *p->slot_bytes);
    p->numel = weft__malloc(((size_t)n + 1) * sizeof *p->numel);
    if (!receiver || !p->slot_bytes || !p->numel) {
        weft__free(receiver);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        receiver[i] = WEFT__NO_NODE;
    for (uint32_t i = 0; i < n; i++)
        if (p->donor[i] != WEFT__NO_NODE)
            receiver[p->donor[i]] = i;
    for (uint32_t i = n; i-- > 0;) {
        const weft_spec *s = &p->g.nodes[i].spec;
        int64_t own = 0;
        if (!weft__spec_is_concrete(s) ||
            !weft__numel_checked(s->rank, s->dims, weft_dtype_size(s->dtype), &own))
            own = -1;
        p->numel[i] = own;
        if (!(p->pflags[i] & WEFT__PN_PLANNED))
            continue;
        if (own < 0)
            own = 0;
        uint64_t sb = (uint64_t)own * weft_dtype_size(s->dtype);
        if (receiver[i] != WEFT__NO_NODE && p->slot_bytes[receiver[i]] > sb)
            sb = p->slot_bytes[receiver[i]];
        p->slot_bytes[i] = sb;
        if (p->donor[i] == WEFT__NO_NODE)
            p->n_slots++;
        else
            p->n_reuses++;
    }
    weft__free(receiver);
    return 0;
}

int weft__program_from_graph(weft_runtime *rt, const char *name, weft__graph *g,
                             weft__program **out)
{
    int rc = WEFT_ENOMEM;
    weft__program *p = weft__calloc(1, sizeof *p);
    if (!p) {
        weft__graph_free(g);
        return weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
    }
    p->rt = rt;
    p->g = *g;
    weft__graph_init(g, p->g.n_args);
    p->name = weft__strdup(name ? name : "fn");
    uint32_t n = p->g.n_nodes;
    p->pflags = weft__calloc((size_t)n + 1, 1);
    p->donor = weft__malloc(((size_t)n + 1) * sizeof *p->donor);
    p->n_deps = weft__calloc((size_t)n + 1, sizeof *p->n_deps);
    p->n_uses = weft__calloc((size_t)n + 1, sizeof *p->n_uses);
    p->succ_off = weft__calloc((size_t)n + 2, sizeof *p->succ_off);
    p->roots = weft__malloc(((size_t)n + 1) * sizeof *p->roots);
    if (!p->name || !p->pflags || !p->donor || !p->n_deps || !p->n_uses || !p->succ_off ||
        !p->roots)
        goto error;
    if ((rc = program_edges(p)) < 0 || (rc = program_plan(p)) < 0 ||
        (rc = program_slots(p)) < 0 || (rc = index_results(p)) < 0)
        goto error;
    p->ops_compiled = count_ops(&p->g);
    *out = p;
    return 0;
error:
    if (rc == WEFT_ENOMEM)
        weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
    weft__program_free(p);
    return rc;
}

int weft__trace_compile(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                        const weft__targ *args, size_t n_args, size_t n_outs,
                        weft__program **out, weft__trace_info *info)
{
    if (!rt || !body || !out || (n_args && !args))
        return weft__errorf(WEFT_EINVAL, "weft__trace_compile: NULL %s",
                            !rt ? "runtime" : !body ? "body" : !out ? "out" : "args");
    *out = NULL;
    weft__graph g;
    /* Freeable even if the tracer fails before initialising it. */
    weft__graph_init(&g, (uint32_t)n_args);
    bool prof = weft__profiling(rt);
    uint64_t t0 = weft__now_ns();
    int rc = weft__trace_body(rt, name, body, user, args, n_args, n_outs, &g);
    uint64_t t1 = weft__now_ns();
    size_t traced = count_ops(&g);
    if (prof)
        weft__profile_span(rt, "trace", name ? name : "fn", t0, t1, NULL);
    if (rc < 0)
        goto error;
    if ((rc = weft__compile_graph(&g)) < 0)
        goto error;
    weft__program *p = NULL;
    rc = weft__program_from_graph(rt, name, &g, &p);
    uint64_t t2 = weft__now_ns();
    if (prof)
        weft__profile_span(rt, "compile", name ? name : "fn", t1, t2, NULL);
    if (rc < 0)
        return rc;
    p->ops_traced = traced;
    if (info) {
        info->ops_traced = traced;
        info->ops_compiled = p->ops_compiled;
        info->trace_ns = t1 - t0;
        info->compile_ns = t2 - t1;
    }
    *out = p;
    return 0;
error:
    weft__graph_free(&g);
    return rc;
}

int weft__program_out_spec(const weft__program *p, size_t i, weft_spec *out)
{
    if (!p || !out)
        return weft__errorf(WEFT_EINVAL, "weft__program_out_spec: NULL %s", !p ? "program" : "out");
    if (i >= p->g.n_outs)
        return weft__errorf(WEFT_EINVAL, "weft__program_out_spec: output %zu of %u", i,
                            p->g.n_outs);
    *out = p->g.nodes[p->g.outs[i]].spec;
    return 0;
}

bool weft__program_has_side_effects(const weft__program *p)
{
    /* Host calls carry the flag, and so do maps of functions that make
     * them, so one level of nodes answers for every level of maps. */
    for (uint32_t i = 0; p && i < p->g.n_nodes; i++)
        if (p->g.nodes[i].flags & WEFT__NODE_SIDE_EFFECT)
            return true;
    return false;
}

/* "<axis=1>", "<axes=0,2,keepdims>"; nothing for every axis. */
static void print_reduce_axes(const struct weft__reduce_axes *r, FILE *f)
{
    if (r->n_axes == 0 && !r->keepdims)
        return;
    fputs(r->n_axes == 1 ? "<axis=" : r->n_axes ? "<axes=" : "<", f);
    for (unsigned k = 0; k < r->n_axes && k < WEFT_MAX_RANK; k++)
        fprintf(f, "%s%d", k ? "," : "", r->axes[k]);
    fputs(r->keepdims ? (r->n_axes ? ",keepdims>" : "keepdims>") : ">", f);
}

/* native: the node is a fused group running native code. */
static void print_attrs(const weft__node *n, bool native, FILE *f)
{
    char v[WEFT__FMT_MAX];
    switch (n->op) {
    case WEFT__OP_ARG:
        fprintf(f, " %" PRIu32, n->attr.arg.index);
        break;
    case WEFT__OP_CONST: {
        const weft_tensor *t = n->attr.constant.value;
        if (!t || t->numel != 1)
            break;
        switch (t->dtype) {
        case WEFT_BOOL: fprintf(f, " %d", *(const unsigned char *)t->data); break;
        case WEFT_I32:  fprintf(f, " %" PRId32, *(const int32_t *)t->data); break;
        case WEFT_I64:  fprintf(f, " %" PRId64, *(const int64_t *)t->data); break;
        case WEFT_F32:
            weft__fmt_f32(*(const float *)t->data, v, sizeof v);
            fprintf(f, " %s", v);
            break;
        case WEFT_F64:
            weft__fmt_f64(*(const double *)t->data, v, sizeof v);
            fprintf(f, " %s", v);
            break;
        }
        break;
    }
    case WEFT__OP_FILL:
        weft__fmt_f64(n->attr.fill.value, v, sizeof v);
        fprintf(f, " %s", v);
        break;
    case WEFT__OP_RANGE:
        fprintf(f, "<%" PRId64 ",%" PRId64 ",%" PRId64 ">", n->attr.range.start,
                n->attr.range.limit, n->attr.range.delta);
        break;
    case WEFT__OP_CAST: {
        const char *dn = weft_dtype_name(n->attr.cast.to);
        fprintf(f, "<%s>", dn ? dn : "?");
        break;
    }
    case WEFT__OP_MATMUL:
        if (n->attr.matmul.flags)
            fprintf(f, "<%s%s%s>", n->attr.matmul.flags & WEFT_TRANSPOSE_A ? "transpose_a" : "",
                    n->attr.matmul.flags == (WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B) ? "," : "",
                    n->attr.matmul.flags & WEFT_TRANSPOSE_B ? "transpose_b" : "");
        break;
    case WEFT__OP_RESHAPE:
        fputc('<', f);
        for (int d = 0; d < n->attr.reshape.rank && d < WEFT_MAX_RANK; d++)
            fprintf(f, "%s%" PRId64, d ? "," : "", n->attr.reshape.dims[d]);
        fputc('>', f);
        break;
    case WEFT__OP_FUSED: {
        const struct weft__fused *fu = n->attr.fused.prog;
        fputc('[', f);
        for (uint32_t j = 0; fu && j < fu->n_instr; j++)
            fprintf(f, "%s%s", j ? "," : "", weft__op_name(fu->ins[j].op));
        fputc(']', f);
        if (native)
            fputs(" native", f);
        break;
    }
    case WEFT__OP_COND: case WEFT__OP_WHILE: case WEFT__OP_MAP_EX: case WEFT__OP_HOST_EX:
    case WEFT__OP_SCAN: case WEFT__OP_CASE: case WEFT__OP_WHILE_VJP: case WEFT__OP_SCAN_VJP:
    case WEFT__OP_MAP_VJP: case WEFT__OP_RESULT:
        weft__multi_print_attrs(n, f);
        break;
    default:
        if (weft__is_shape_op(n->op))
            weft__shape_attr_print(n, f);
        if (weft__op_kind_of(n->op) == WEFT__KIND_REDUCE)
            print_reduce_axes(&n->attr.reduce, f);
        break;
    }
}

int weft__program_print(const weft__program *p, FILE *f)
{
    if (!p || !f)
        return weft__errorf(WEFT_EINVAL, "weft__program_print: NULL %s", !p ? "program" : "stream");
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        const weft__node *n = &p->g.nodes[i];
        char sb[WEFT__SPEC_STR_MAX];
        fprintf(f, "%%%" PRIu32 " = %s", i, weft__op_name(n->op));
        print_attrs(n, weft__jit_native(p, i) != NULL, f);
        if (n->n_in) {
            fputc('(', f);
            for (uint32_t k = 0; k < n->n_in; k++)
                fprintf(f, "%s%%%" PRIu32, k ? ", " : "", n->in[k]);
            fputc(')', f);
        }
        if (weft__op_kind_of(n->op) == WEFT__KIND_CONTROL) {
            fputs(" : ", f);
            weft__multi_print_specs(n, f);
        } else {
            fprintf(f, " : %s", weft__spec_str(&n->spec, sb, sizeof sb));
        }
        if (n->after != WEFT__NO_NODE)
            fprintf(f, " after %%%" PRIu32, n->after);
        if (p->donor[i] != WEFT__NO_NODE)
            fprintf(f, " reuses %%%" PRIu32, p->donor[i]);
        fputc('\n', f);
    }
    fputs("return", f);
    for (uint32_t k = 0; k < p->g.n_outs; k++)
        fprintf(f, "%s %%%" PRIu32, k ? "," : "", p->g.outs[k]);
    fputc('\n', f);
    return ferror(f) ? weft__errorf(WEFT_EIO, "weft__program_print: write failed") : 0;
}

void weft__program_free(weft__program *p)
{
    if (!p)
        return;
    weft__jit_unit_release(p->jit);
    weft__graph_free(&p->g);
    weft__free(p->name);
    weft__free(p->pflags);
    weft__free(p->donor);
    weft__free(p->slot_bytes);
    weft__free(p->numel);
    weft__free(p->n_deps);
    weft__free(p->n_uses);
    weft__free(p->succ_off);
    weft__free(p->succ);
    weft__free(p->roots);
    weft__free(p->multi_off);
    weft__free(p);
}
