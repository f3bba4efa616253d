/* Elementwise fusion: a connected group of elementwise nodes (unary,
 * binary, where, cast) whose operands all have the group's shape or hold
 * one element becomes one FUSED node, computed in one loop over blocks with
 * no intermediate tensors.  A value read outside its group stays a node of
 * its own (materialised); so do outputs. */
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/program.h"
#include "trace/tensor_impl.h"

void weft__fused_free(struct weft__fused *f)
{
    weft__free(f);
}

static bool compatible(const weft_spec *a, const weft_spec *b)
{
    if (a->rank < 0 || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d])
            return false;
    return true;
}

static bool one_element(const weft_spec *s)
{
    if (s->rank < 0)
        return false;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] != 1)
            return false;
    return true;
}

typedef struct fuse_state {
    weft__graph *g;
    uint32_t    *cons_off, *cons;   /* readers of each node */
    int32_t     *grp;               /* group of each node; -1 none */
    bool        *is_out;
} fuse_state;

/* Can node i join a group of shape s: elementwise, of that shape, and its
 * operands of that shape or single elements. */
static bool fits(const fuse_state *st, uint32_t i, const weft_spec *s)
{
    const weft__node *n = &st->g->nodes[i];
    if (!weft__op_is_elementwise(n->op) || (n->flags & WEFT__NODE_SIDE_EFFECT) || n->n_in > 3 ||
        !compatible(&n->spec, s))
        return false;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const weft_spec *is = &st->g->nodes[n->in[k]].spec;
        if (!compatible(is, s) && !one_element(is))
            return false;
    }
    return true;
}

static bool readers_in_group(const fuse_state *st, uint32_t p, int32_t gid)
{
    for (uint32_t c = st->cons_off[p]; c < st->cons_off[p + 1]; c++)
        if (st->grp[st->cons[c]] != gid)
            return false;
    return true;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Builds the fused program of members[0..n) (ascending ids; the last is the
 * root) into *f, and its external inputs into ext. */
static void build_program(const fuse_state *st, const uint32_t *members, uint32_t n,
                          struct weft__fused *f, uint32_t *ext)
{
    memset(f, 0, sizeof *f);
    f->n_instr = n;
    uint32_t last_use[WEFT__FUSED_MAX_INSTR];
    for (uint32_t j = 0; j < n; j++) {
        const weft__node *nd = &st->g->nodes[members[j]];
        weft__finstr *in = &f->ins[j];
        in->op = nd->op;
        in->out_dt = nd->spec.dtype;
        in->n_src = (uint8_t)nd->n_in;
        uint32_t vsrc = nd->op == WEFT__OP_WHERE ? 1 : 0;
        in->in_dt = st->g->nodes[nd->in[vsrc]].spec.dtype;
        last_use[j] = j;
        for (uint32_t k = 0; k < nd->n_in; k++) {
            uint32_t p = nd->in[k], m = 0;
            while (m < j && members[m] != p)
                m++;
            if (m < j) {
                in->src[k] = (uint16_t)(WEFT__FSRC_INSTR | m);
                last_use[m] = j;
                continue;
            }
            uint32_t e = 0;
            while (e < f->n_ext && ext[e] != p)
                e++;
            if (e == f->n_ext)
                ext[f->n_ext++] = p;
            in->src[k] = (uint16_t)e;
        }
    }
    /* Scratch blocks: a result's block is free again after its last
     * reader, and never shared with an operand of the same instruction
     * (a cast may change the element size). */
    uint32_t reg_free_at[WEFT__FUSED_MAX_INSTR];
    for (uint32_t j = 0; j + 1 < n; j++) {
        uint32_t r = 0;
        while (r < f->n_regs && reg_free_at[r] >= j)
            r++;
        if (r == f->n_regs)
            f->n_regs++;
        reg_free_at[r] = last_use[j];
        f->ins[j].reg = (uint8_t)r;
    }
}

int weft__pass_fuse(weft__graph *g)
{
    int rc = 0;
    uint32_t n = g->n_nodes;
    fuse_state st = { .g = g };
    bool *keep = NULL;
    weft__node **subst = NULL;
    weft__node *fnodes = NULL;
    uint32_t *fext = NULL;
    uint32_t n_groups = 0;
    st.cons_off = weft__calloc((size_t)n + 2, sizeof *st.cons_off);
    st.grp = weft__malloc(((size_t)n + 1) * sizeof *st.grp);
    st.is_out = weft__calloc((size_t)n + 1, sizeof *st.is_out);
    keep = weft__malloc(((size_t)n + 1) * sizeof *keep);
    subst = weft__calloc((size_t)n + 1, sizeof *subst);
    if (!st.cons_off || !st.grp || !st.is_out || !keep || !subst)
        goto nomem;
    size_t n_edges = 0;
    for (uint32_t i = 0; i < n; i++) {
        n_edges += g->nodes[i].n_in;
        for (uint32_t k = 0; k < g->nodes[i].n_in; k++)
            st.cons_off[g->nodes[i].in[k] + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
        st.cons_off[i + 1] += st.cons_off[i];
    st.cons = weft__malloc((n_edges + 1) * sizeof *st.cons);
    uint32_t *fill = weft__malloc(((size_t)n + 1) * sizeof *fill);
    if (!st.cons || !fill) {
        weft__free(fill);
        goto nomem;
    }
    memcpy(fill, st.cons_off, (size_t)n * sizeof *fill);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < g->nodes[i].n_in; k++)
            st.cons[fill[g->nodes[i].in[k]]++] = i;
    weft__free(fill);
    for (uint32_t k = 0; k < g->n_outs; k++)
        st.is_out[g->outs[k]] = true;
    for (uint32_t i = 0; i < n; i++) {
        st.grp[i] = -1;
        keep[i] = true;
    }

    uint32_t members[WEFT__FUSED_MAX_INSTR];
    for (uint32_t root = n; root-- > 0;) {
        if (st.grp[root] != -1 || !fits(&st, root, &g->nodes[root].spec))
            continue;
        const weft_spec *shape = &g->nodes[root].spec;
        int32_t gid = (int32_t)root;
        uint32_t count = 1;
        members[0] = root;
        st.grp[root] = gid;
        for (bool grew = true; grew && count < WEFT__FUSED_MAX_INSTR;) {
            grew = false;
            for (uint32_t m = 0; m < count && count < WEFT__FUSED_MAX_INSTR; m++) {
                const weft__node *mn = &g->nodes[members[m]];
                for (uint32_t k = 0; k < mn->n_in && count < WEFT__FUSED_MAX_INSTR; k++) {
                    uint32_t p = mn->in[k];
                    if (st.grp[p] != -1 || st.is_out[p] || !fits(&st, p, shape) ||
                        !readers_in_group(&st, p, gid))
                        continue;
                    st.grp[p] = gid;
                    members[count++] = p;
                    grew = true;
                }
            }
        }
        if (count < 2)
            continue;
        if (!fnodes) {
            fnodes = weft__calloc((size_t)n, sizeof *fnodes);
            fext = weft__malloc((size_t)n * 3 * sizeof *fext);
            if (!fnodes || !fext)
                goto nomem;
        }
        qsort(members, count, sizeof members[0], cmp_u32);
        struct weft__fused *f = weft__malloc(sizeof *f);
        if (!f)
            goto nomem;
        uint32_t *ext = &fext[(size_t)n_groups * 3];
        weft__node *fn = &fnodes[n_groups++];
        /* Up to three external inputs live in fext; more get their own
         * array, as graph nodes do. */
        uint32_t tmp_ext[3 * WEFT__FUSED_MAX_INSTR];
        build_program(&st, members, count, f, tmp_ext);
        uint32_t *ins = ext;
        if (f->n_ext > 3) {
            ins = weft__malloc(f->n_ext * sizeof *ins);
            if (!ins) {
                weft__fused_free(f);
                n_groups--;
                goto nomem;
            }
        }
        memcpy(ins, tmp_ext, f->n_ext * sizeof *ins);
        fn->op = WEFT__OP_FUSED;
        fn->flags = 0;
        fn->n_in = f->n_ext;
        fn->in = ins;
        fn->after = WEFT__NO_NODE;
        fn->spec = *shape;
        fn->attr.fused.prog = f;
        subst[members[count - 1]] = fn;
        for (uint32_t m = 0; m + 1 < count; m++)
            keep[members[m]] = false;
    }
    if (n_groups)
        rc = weft__graph_rebuild(g, keep, NULL, subst);
    goto done;
nomem:
    rc = weft__errorf(WEFT_ENOMEM, "weft compile: out of memory");
done:
    /* What the rebuild did not take over (on failure) is freed here. */
    for (uint32_t k = 0; k < n_groups; k++) {
        weft__fused_free(fnodes[k].attr.fused.prog);
        if (fnodes[k].n_in > 3)
            weft__free(fnodes[k].in);
    }
    weft__free(fnodes);
    weft__free(fext);
    weft__free(st.cons_off);
    weft__free(st.cons);
    weft__free(st.grp);
    weft__free(st.is_out);
    weft__free(keep);
    weft__free(subst);
    return rc;
}
