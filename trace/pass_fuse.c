/* Fusion: a connected group of elementwise nodes (unary, binary, where,
 * cast, generic by kind) and reductions becomes one FUSED node, computed
 * in one pass over tiles of rows with no intermediate tensors (the program
 * is described in trace/program.h).  Groups grow backwards from a root (an
 * elementwise node, or a reduction over leading or trailing axes) through
 * producers all of whose readers are in the group: elementwise nodes whose
 * value and operands are FULL, ROW, COL or SCALAR in the group's domain,
 * and inner reductions with keepdims whose row fits a tile.  A value read
 * outside its group stays a node of its own (materialised); so do
 * outputs. */
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/program.h"
#include "trace/tensor_impl.h"

void weft__fused_free(struct weft__fused *f)
{
    weft__free(f);
}

typedef struct fuse_state {
    weft__graph *g;
    uint32_t    *cons_off, *cons;   /* readers of each node */
    int32_t     *grp;               /* group of each node; -1 none */
    bool        *is_out;
} fuse_state;

/* The group being grown: its domain, where rows end and columns start
 * (-1 until a ROW or COL value or a reduction decides it), and what its
 * root is. */
typedef struct group {
    weft_spec dom;
    int split;
    uint8_t root_red;     /* WEFT__FRED_* of the root */
} group;

/* A dim of a value against the domain's: equal (unknown dims are taken to
 * match, and checked at run time), or a broadcast 1. */
static bool dim_match(int64_t v, int64_t d)
{
    return v == d || (v != 1 && (v < 0 || d < 0));
}

/* The kind of a value of spec s in a group of domain dom (rows before
 * *split), or -1 when it is none of the four.  A ROW or COL value decides
 * an undecided split. */
static int kind_in(const weft_spec *dom, int *split, const weft_spec *s)
{
    int n = dom->rank;
    if (s->rank < 0 || s->rank > n)
        return -1;
    bool one[WEFT_MAX_RANK], match[WEFT_MAX_RANK], all_one = true, all_match = true;
    for (int q = 0; q < n; q++) {
        int sq = q - (n - s->rank);
        int64_t v = sq >= 0 ? s->dims[sq] : 1;
        one[q] = v == 1;
        match[q] = dim_match(v, dom->dims[q]);
        all_one = all_one && one[q];
        all_match = all_match && match[q];
    }
    /* Domain-shaped first, so that in a domain of 1s (a chain of scalar
     * ops) every value is FULL. */
    if (all_match)
        return WEFT__FK_FULL;
    if (all_one)
        return WEFT__FK_SCALAR;
    /* ROW: matching dims, then 1s; COL: 1s, then matching dims. */
    int row_s = n, col_s = 0;
    while (row_s > 0 && one[row_s - 1])
        row_s--;
    while (col_s < n && one[col_s])
        col_s++;
    int try_s[2] = { *split >= 0 ? *split : row_s, *split >= 0 ? *split : col_s };
    for (int k = 0; k < 2; k++) {
        int sp = try_s[k];
        bool ok = true;
        for (int q = 0; q < n && ok; q++)
            ok = (q < sp) == (k == 0) ? match[q] : one[q];
        if (ok) {
            *split = sp;
            return k == 0 ? WEFT__FK_ROW : WEFT__FK_COL;
        }
    }
    return -1;
}

/* Columns of the domain after split, or -1 when one is unknown. */
static int64_t domain_cols(const group *gr, int split)
{
    int64_t w = 1;
    for (int q = split; q < gr->dom.rank; q++) {
        if (gr->dom.dims[q] < 0)
            return -1;
        w *= gr->dom.dims[q];
    }
    return w;
}

/* Whether reduction node n takes part in fusion at all: an op the fused
 * loops have, on an input of the domain's rank. */
static bool reduce_fusable(const weft__graph *g, const weft__node *n, unsigned *mask)
{
    if (weft__op_kind_of(n->op) != WEFT__KIND_REDUCE || (n->flags & WEFT__NODE_SIDE_EFFECT))
        return false;
    const weft_spec *in = &g->nodes[n->in[0]].spec;
    weft__reducer r;
    if (in->rank < 0 || !weft__reducer_of(n->op, in->dtype, &r))
        return false;
    return weft__reduce_mask(n, NULL, in, mask) == 0;
}

/* The split s when mask is exactly the trailing axes [s, n) (an inner
 * reduction), else -1. */
static int suffix_split(unsigned mask, int n)
{
    int s = n - __builtin_popcount(mask);
    unsigned want = ((1u << n) - 1u) & ~((1u << s) - 1u);
    return mask == want && mask ? s : -1;
}

/* The split s when mask is exactly the leading axes [0, s) (an outer
 * reduction; every axis counts), else -1. */
static int prefix_split(unsigned mask)
{
    int s = __builtin_popcount(mask);
    return mask == (1u << s) - 1u ? s : -1;
}

/* The kind node i would have in the group, or -1 if it cannot join: an
 * elementwise node whose value and operands all have kinds, or an inner
 * reduction of a FULL value into a ROW value (keepdims) over a row that
 * fits a tile.  *split may be decided on success. */
static int join_kind(const fuse_state *st, const group *gr, uint32_t i, int *split)
{
    const weft__node *n = &st->g->nodes[i];
    if (n->flags & WEFT__NODE_SIDE_EFFECT)
        return -1;
    int sp = *split;
    if (weft__op_is_elementwise(n->op)) {
        if (n->n_in > 3)
            return -1;
        int k = kind_in(&gr->dom, &sp, &n->spec);
        for (uint32_t q = 0; q < n->n_in && k >= 0; q++) {
            int kq = kind_in(&gr->dom, &sp, &st->g->nodes[n->in[q]].spec);
            if (kq < 0 || (kq & ~k))
                k = -1;
        }
        if (k >= 0)
            *split = sp;
        return k;
    }
    unsigned mask;
    if (!reduce_fusable(st->g, n, &mask) || !n->attr.reduce.keepdims)
        return -1;
    const weft_spec *in = &st->g->nodes[n->in[0]].spec;
    if (in->rank != gr->dom.rank || kind_in(&gr->dom, &sp, in) != WEFT__FK_FULL)
        return -1;
    int s = suffix_split(mask, in->rank);
    if (s < 0 || (sp >= 0 && s != sp))
        return -1;
    int64_t w = domain_cols(gr, s);
    if (w > WEFT__FUSED_TILE || kind_in(&gr->dom, &s, &n->spec) != WEFT__FK_ROW)
        return -1;
    *split = s;
    return WEFT__FK_ROW;
}

/* Starts a group at root: an elementwise node (domain: its shape), or a
 * reduction (domain: its input's shape) over leading axes (outer; every
 * axis counts as leading) or trailing ones (inner).  False if root cannot
 * be one. */
static bool start_group(const fuse_state *st, uint32_t root, group *gr)
{
    const weft__node *n = &st->g->nodes[root];
    memset(gr, 0, sizeof *gr);
    gr->split = -1;
    if (n->flags & WEFT__NODE_SIDE_EFFECT)
        return false;
    if (weft__op_is_elementwise(n->op)) {
        gr->dom = n->spec;
        gr->root_red = WEFT__FRED_NONE;
        if (gr->dom.rank < 0)
            return false;
        int sp = -1;
        if (join_kind(st, gr, root, &sp) != WEFT__FK_FULL)
            return false;
        gr->split = sp;
        return true;
    }
    unsigned mask;
    if (!reduce_fusable(st->g, n, &mask))
        return false;
    gr->dom = st->g->nodes[n->in[0]].spec;
    int s = prefix_split(mask);
    if (s >= 0) {
        gr->split = s;
        gr->root_red = WEFT__FRED_OUTER;
        return true;
    }
    s = suffix_split(mask, gr->dom.rank);
    if (s < 0 || domain_cols(gr, s) > WEFT__FUSED_TILE)
        return false;
    gr->split = s;
    gr->root_red = WEFT__FRED_INNER;
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
static void build_program(const fuse_state *st, group *gr, const uint32_t *members, uint32_t n,
                          struct weft__fused *f, uint32_t *ext)
{
    memset(f, 0, sizeof *f);
    if (gr->split < 0)
        gr->split = gr->dom.rank;   /* elementwise over blocks of the flat domain */
    f->n_instr = n;
    f->rank = gr->dom.rank;
    f->split = gr->split;
    memcpy(f->dims, gr->dom.dims, sizeof f->dims);
    uint32_t last_use[WEFT__FUSED_MAX_INSTR];
    for (uint32_t j = 0; j < n; j++) {
        const weft__node *nd = &st->g->nodes[members[j]];
        weft__finstr *in = &f->ins[j];
        in->op = nd->op;
        in->out_dt = nd->spec.dtype;
        in->n_src = (uint8_t)nd->n_in;
        uint32_t vsrc = nd->op == WEFT__OP_WHERE ? 1 : 0;
        in->in_dt = st->g->nodes[nd->in[vsrc]].spec.dtype;
        if (weft__op_kind_of(nd->op) == WEFT__KIND_REDUCE) {
            in->red = j + 1 == n ? gr->root_red : WEFT__FRED_INNER;
            in->kind = in->red == WEFT__FRED_OUTER ? WEFT__FK_COL : WEFT__FK_ROW;
            in->axes = nd->attr.reduce;
        } else {
            in->kind = (uint8_t)kind_in(&gr->dom, &gr->split, &nd->spec);
        }
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
            if (e == f->n_ext) {
                const weft_spec *ps = &st->g->nodes[p].spec;
                ext[f->n_ext] = p;
                f->ext_kind[f->n_ext] = (uint8_t)kind_in(&gr->dom, &gr->split, ps);
                f->ext_dt[f->n_ext] = ps->dtype;
                f->n_ext++;
            }
            in->src[k] = (uint16_t)e;
        }
    }
    /* Scratch registers: a result's is free again after its last reader,
     * and never shared with an operand of the same instruction (a cast may
     * change the element size). */
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
        group gr;
        if (st.grp[root] != -1 || !start_group(&st, root, &gr))
            continue;
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
                    if (st.grp[p] != -1 || st.is_out[p] || !readers_in_group(&st, p, gid) ||
                        join_kind(&st, &gr, p, &gr.split) < 0)
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
        build_program(&st, &gr, members, count, f, tmp_ext);
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
        fn->spec = g->nodes[root].spec;
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
