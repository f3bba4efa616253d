/* weft_einsum: tf.einsum as a composition of reductions, transposes,
 * reshapes and matrix products, so that it traces, takes unknown dims
 * where no reshape needs them and ends in the BLAS for the contraction.
 *
 * A label repeated within an operand first takes that operand's
 * diagonal (take_diagonal).  The operands are then contracted pairwise
 * from the left.  For a pair, each
 * label is one of: summed (in one operand only and needed nowhere after:
 * reduced first), batch (in both and needed after), contracted (in both,
 * not needed after), left or right (in one operand, needed after).  The
 * operands are put in the order [batch, left, contracted] and [batch,
 * contracted, right] (a stored transpose of the last two becomes a matmul
 * flag instead of a copy), each group flattened to one dim, multiplied,
 * and the result unflattened to [batch, left, right].  The last product
 * takes its two operands in the order that leaves the output's order when
 * only that one does; otherwise a transpose to the output's order ends
 * it. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/tensor_impl.h"

#define MAX_OPERANDS 8
/* Labels: a-z, A-Z, and the dims an ellipsis stands for ('0' + i, the
 * rightmost ellipsis dim last). */
#define MAX_LABELS (2 * 26 + WEFT_MAX_RANK)

static const char fn[] = "weft_einsum";

/* An operand or a partial result: its value and one label per dim. */
typedef struct term {
    weft_value *v;
    int rank;
    char labels[WEFT_MAX_RANK];
} term;

typedef struct plan {
    int n;                       /* operands */
    term t[MAX_OPERANDS];
    int out_rank;
    char out[WEFT_MAX_RANK];
    int64_t size[128];           /* a label's dim as the specs know it (WEFT_DIM_ANY) */
} plan;

static bool has(const char *labels, int n, char c)
{
    return memchr(labels, c, (size_t)n) != NULL;
}

static bool fail(weft_ctx *cx, int code, const char *msg, const char *eq)
{
    weft__ctx_fail(cx, code, "%s: %s (equation \"%s\")", fn, msg, eq);
    return false;
}

/* ---- Parsing ------------------------------------------------------------ */

static bool is_ellipsis(char c)
{
    return c >= '0' && c < '0' + WEFT_MAX_RANK;
}

/* A label's dim so far (-2: not seen) merged with another operand's dim:
 * known dims must agree, except that an ellipsis dim of 1 broadcasts. */
static bool merge_size(int64_t *sz, int64_t dim, bool ellipsis)
{
    if (*sz == -2 || *sz == WEFT_DIM_ANY || (ellipsis && *sz == 1)) {
        if (*sz == -2 || dim != WEFT_DIM_ANY)
            *sz = dim;
        return true;
    }
    return dim == WEFT_DIM_ANY || dim == *sz || (ellipsis && dim == 1);
}

/* The labels of one side ("ab...c", spaces skipped) into out: an ellipsis
 * stands for the dims the letters leave of `rank` (rank < 0: for
 * `max_ell` dims), labelled '0', '1', ... (parse renumbers them so that
 * they align from the right, as broadcast dims do).  Returns the label
 * count, or -1. */
static int side_labels(const char *s, size_t len, int rank, int max_ell, char *out,
                       bool *saw_ellipsis)
{
    int n = 0, letters = 0;
    *saw_ellipsis = false;
    for (size_t i = 0; i < len; i++)
        letters += (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z');
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (*saw_ellipsis || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return -1;
            *saw_ellipsis = true;
            i += 2;
            int ell = rank < 0 ? max_ell : rank - letters;
            if (ell < 0 || n + ell > WEFT_MAX_RANK)
                return -1;
            for (int k = 0; k < ell; k++)
                out[n++] = (char)('0' + k);
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) || n == WEFT_MAX_RANK)
            return -1;
        out[n++] = c;
    }
    return n;
}

/* Splits eq into the operands' sides and the output's (NULL when the
 * equation has no "->"). */
static bool split_sides(const char *eq, int n, const char **side, size_t *len,
                        const char **out_side)
{
    const char *arrow = strstr(eq, "->");
    const char *end = arrow ? arrow : eq + strlen(eq);
    const char *p = eq;
    for (int k = 0; k < n; k++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if ((k < n - 1) != (comma != NULL))
            return false;
        side[k] = p;
        len[k] = (size_t)((comma ? comma : end) - p);
        p = comma ? comma + 1 : end;
    }
    *out_side = arrow ? arrow + 2 : NULL;
    return !arrow || !strstr(arrow + 2, "->");
}

/* The implicit output (no "->"): the labels that occur once, in order of
 * their character (ellipsis dims first), as NumPy and TensorFlow do. */
static void implicit_output(plan *p)
{
    int count[128] = { 0 };
    for (int k = 0; k < p->n; k++)
        for (int d = 0; d < p->t[k].rank; d++)
            count[(unsigned char)p->t[k].labels[d]]++;
    p->out_rank = 0;
    for (int c = 0; c < 128 && p->out_rank < WEFT_MAX_RANK; c++)
        if (count[c] == 1 || (is_ellipsis((char)c) && count[c] > 0))
            p->out[p->out_rank++] = (char)c;
}

/* Each operand's labels, their sizes, and the output's labels. */
static bool parse(weft_ctx *cx, const char *eq, weft_value *const *in, plan *p)
{
    const char *side[MAX_OPERANDS], *out_side;
    size_t len[MAX_OPERANDS];
    if (!split_sides(eq, p->n, side, len, &out_side))
        return fail(cx, WEFT_EINVAL, "not one input side per operand and at most one \"->\"", eq);
    int max_ell = 0;
    for (int k = 0; k < p->n; k++) {
        const weft_spec *s = weft__value_spec(in[k]);
        if (s->rank == WEFT_RANK_ANY)
            return fail(cx, WEFT_EINVAL, "an operand's rank is unknown while tracing", eq);
        bool ell;
        p->t[k].v = in[k];
        p->t[k].rank = side_labels(side[k], len[k], s->rank, 0, p->t[k].labels, &ell);
        if (p->t[k].rank != s->rank)
            return fail(cx, WEFT_EINVAL, "an input side is not a label per dim of its operand "
                        "(letters, at most one \"...\")", eq);
        for (int d = 0; d < s->rank; d++) {
            char c = p->t[k].labels[d];
            if (is_ellipsis(c) && c - '0' + 1 > max_ell)
                max_ell = c - '0' + 1;
        }
    }
    /* Ellipsis labels were numbered from 0 per operand; renumber them to
     * align from the right across operands. */
    for (int k = 0; k < p->n; k++) {
        int ell = 0;
        for (int d = 0; d < p->t[k].rank; d++)
            ell += is_ellipsis(p->t[k].labels[d]);
        for (int d = 0; d < p->t[k].rank; d++)
            if (is_ellipsis(p->t[k].labels[d]))
                p->t[k].labels[d] = (char)(p->t[k].labels[d] + (max_ell - ell));
    }
    for (int c = 0; c < 128; c++)
        p->size[c] = -2;   /* not seen */
    for (int k = 0; k < p->n; k++) {
        const weft_spec *s = weft__value_spec(in[k]);
        for (int d = 0; d < p->t[k].rank; d++) {
            char c = p->t[k].labels[d];
            if (!merge_size(&p->size[(unsigned char)c], s->dims[d], is_ellipsis(c))) {
                weft__ctx_fail(cx, WEFT_ESHAPE, "%s: label '%c' has dims %lld and %lld "
                               "(equation \"%s\")", fn, c, (long long)p->size[(unsigned char)c],
                               (long long)s->dims[d], eq);
                return false;
            }
        }
    }
    if (!out_side) {
        implicit_output(p);
        return true;
    }
    bool ell;
    p->out_rank = side_labels(out_side, strlen(out_side), -1, max_ell, p->out, &ell);
    if (p->out_rank < 0)
        return fail(cx, WEFT_EINVAL, "the output side is not labels (letters, at most one "
                    "\"...\")", eq);
    for (int d = 0; d < p->out_rank; d++) {
        char c = p->out[d];
        if (has(p->out, d, c))
            return fail(cx, WEFT_EINVAL, "a label repeats in the output", eq);
        if (p->size[(unsigned char)c] == -2)
            return fail(cx, WEFT_EINVAL, "an output label is in no input", eq);
    }
    return true;
}

/* ---- Steps on terms ----------------------------------------------------- */

static const weft_spec *spec_of(const term *t)
{
    return weft__value_spec(t->v);
}

/* t with the labels not in keep[0..n_keep) summed out. */
static bool sum_out(weft_ctx *cx, term *t, const char *keep, int n_keep)
{
    int axes[WEFT_MAX_RANK], n_axes = 0, rank = 0;
    char labels[WEFT_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        if (has(keep, n_keep, t->labels[d]))
            labels[rank++] = t->labels[d];
        else
            axes[n_axes++] = d;
    }
    if (n_axes == 0)
        return true;
    t->v = weft_reduce(cx, WEFT_R_SUM, t->v, axes, (size_t)n_axes, false);
    t->rank = rank;
    memcpy(t->labels, labels, (size_t)rank);
    return t->v != NULL;
}

/* t transposed so that its labels read order[0..rank) (no copy when they
 * already do). */
static bool permute(weft_ctx *cx, term *t, const char *order)
{
    int perm[WEFT_MAX_RANK];
    bool identity = true;
    for (int d = 0; d < t->rank; d++) {
        perm[d] = (int)((const char *)memchr(t->labels, order[d], (size_t)t->rank) - t->labels);
        identity = identity && perm[d] == d;
    }
    if (identity)
        return true;
    t->v = weft_transpose(cx, t->v, perm);
    memcpy(t->labels, order, (size_t)t->rank);
    return t->v != NULL;
}

/* The labels of `from` that are (want_in true) or are not in `in`, in
 * from's order, appended to out. */
static int select_labels(const char *from, int n_from, const char *in, int n_in, bool want_in,
                         char *out)
{
    int n = 0;
    for (int d = 0; d < n_from; d++)
        if (has(in, n_in, from[d]) == want_in)
            out[n++] = from[d];
    return n;
}

/* x[0..nx), y[0..ny) and z[0..nz) one after the other into out. */
static void concat3(char *out, const char *x, int nx, const char *y, int ny, const char *z,
                    int nz)
{
    memcpy(out, x, (size_t)nx);
    memcpy(out + nx, y, (size_t)ny);
    memcpy(out + nx + ny, z, (size_t)nz);
}

/* The reshape of v to dims[0..rank), where a dim may be the product of
 * unknown dims: at most one unknown becomes -1, more are an error. */
static weft_value *reshape_known(weft_ctx *cx, const char *eq, weft_value *v, int rank,
                                 int64_t *dims)
{
    int unknown = 0;
    for (int d = 0; d < rank; d++)
        if (dims[d] == WEFT_DIM_ANY) {
            dims[d] = -1;
            unknown++;
        }
    if (unknown > 1) {
        fail(cx, WEFT_EINVAL, "grouping dims for the product needs all but one of them known "
             "while tracing", eq);
        return NULL;
    }
    return weft_reshape(cx, v, rank, dims);
}

/* t's diagonal along its first label that repeats, if one does: the
 * second axis moved next to the first, the pair merged into one axis of
 * n * n elements and every (n + 1)-th of them kept (a strided slice, so
 * exact).  The label's dim must be known while tracing.  Returns false
 * when the context failed; *found tells whether a label repeated. */
static bool take_diagonal(weft_ctx *cx, const char *eq, const plan *p, term *t, bool *found)
{
    int d0 = -1, d1 = -1;
    for (int d = 1; d < t->rank && d0 < 0; d++) {
        const char *at = memchr(t->labels, t->labels[d], (size_t)d);
        if (at) {
            d0 = (int)(at - t->labels);
            d1 = d;
        }
    }
    *found = d0 >= 0;
    if (!*found)
        return true;
    char c = t->labels[d0];
    int64_t n = p->size[(unsigned char)c];
    if (n < 0)
        return fail(cx, WEFT_EINVAL, "a label repeated within an operand (a diagonal) needs "
                    "its dim known while tracing", eq);
    /* The axes in the order with d1 right after d0. */
    char order[WEFT_MAX_RANK];
    int perm[WEFT_MAX_RANK], r = 0;
    for (int d = 0; d < t->rank; d++) {
        if (d == d1)
            continue;
        order[r] = t->labels[d];
        perm[r++] = d;
        if (d == d0) {
            order[r] = c;
            perm[r++] = d1;
        }
    }
    weft_value *v = weft_transpose(cx, t->v, perm);
    const weft_spec *s = v ? weft__value_spec(v) : NULL;
    if (!s)
        return false;
    int64_t dims[WEFT_MAX_RANK], begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK],
            step[WEFT_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < t->rank; d++) {
        if (d == d0 + 1)
            continue;
        dims[rank] = d == d0 ? n * n : s->dims[d];
        end[rank] = WEFT_END;
        step[rank] = d == d0 ? n + 1 : 1;
        rank++;
    }
    v = reshape_known(cx, eq, v, rank, dims);
    t->v = v ? weft_slice(cx, v, begin, end, step) : NULL;
    memmove(order + d0 + 1, order + d0 + 2, (size_t)(t->rank - d0 - 2));
    t->rank--;
    memcpy(t->labels, order, (size_t)t->rank);
    return t->v != NULL;
}

/* The product of the dims of t's labels d0..d1 (WEFT_DIM_ANY if one is). */
static int64_t group_dim(const term *t, int d0, int d1)
{
    int64_t p = 1;
    for (int d = d0; d < d1; d++) {
        int64_t x = spec_of(t)->dims[d];
        if (x == WEFT_DIM_ANY)
            return WEFT_DIM_ANY;
        p *= x;
    }
    return p;
}

/* t, whose labels are nb batch labels then groups of g1 and g2 labels, as
 * [batch..., G1, G2]. */
static weft_value *as_matrix(weft_ctx *cx, const char *eq, const term *t, int nb, int g1, int g2)
{
    if (g1 == 1 && g2 == 1)
        return t->v;
    int64_t dims[WEFT_MAX_RANK];
    for (int d = 0; d < nb; d++)
        dims[d] = spec_of(t)->dims[d];
    dims[nb] = group_dim(t, nb, nb + g1);
    dims[nb + 1] = group_dim(t, nb + g1, nb + g1 + g2);
    return reshape_known(cx, eq, t->v, nb + 2, dims);
}

/* a and b contracted into *out, keeping the labels in keep[0..n_keep). */
static bool contract(weft_ctx *cx, const char *eq, term a, term b, const char *keep, int n_keep,
                     term *out)
{
    /* Each operand keeps what is kept and what the other has (as given). */
    char keep_a[WEFT_MAX_RANK + MAX_LABELS], keep_b[WEFT_MAX_RANK + MAX_LABELS];
    int n_keep_a = n_keep + b.rank, n_keep_b = n_keep + a.rank;
    memcpy(keep_a, keep, (size_t)n_keep);
    memcpy(keep_a + n_keep, b.labels, (size_t)b.rank);
    memcpy(keep_b, keep, (size_t)n_keep);
    memcpy(keep_b + n_keep, a.labels, (size_t)a.rank);
    if (!sum_out(cx, &a, keep_a, n_keep_a) || !sum_out(cx, &b, keep_b, n_keep_b))
        return false;
    char shared[WEFT_MAX_RANK], batch[WEFT_MAX_RANK], con[WEFT_MAX_RANK];
    char left[WEFT_MAX_RANK], right[WEFT_MAX_RANK];
    int ns = select_labels(a.labels, a.rank, b.labels, b.rank, true, shared);
    int nb = select_labels(shared, ns, keep, n_keep, true, batch);
    int nc = select_labels(shared, ns, keep, n_keep, false, con);
    int nl = select_labels(a.labels, a.rank, b.labels, b.rank, false, left);
    int nr = select_labels(b.labels, b.rank, a.labels, a.rank, false, right);
    /* a as [batch, left, con] or, when it is stored so, [batch, con, left]
     * with the matmul transposing it; b likewise. */
    char oa[WEFT_MAX_RANK], ob[WEFT_MAX_RANK];
    concat3(oa, batch, nb, con, nc, left, nl);
    bool ta = nl > 0 && nc > 0 && memcmp(oa, a.labels, (size_t)a.rank) == 0;
    if (!ta)
        concat3(oa, batch, nb, left, nl, con, nc);
    concat3(ob, batch, nb, right, nr, con, nc);
    bool tb = nr > 0 && nc > 0 && memcmp(ob, b.labels, (size_t)b.rank) == 0;
    if (!tb)
        concat3(ob, batch, nb, con, nc, right, nr);
    if (!permute(cx, &a, oa) || !permute(cx, &b, ob))
        return false;
    weft_value *ma = ta ? as_matrix(cx, eq, &a, nb, nc, nl) : as_matrix(cx, eq, &a, nb, nl, nc);
    weft_value *mb = tb ? as_matrix(cx, eq, &b, nb, nr, nc) : as_matrix(cx, eq, &b, nb, nc, nr);
    unsigned flags = (ta ? WEFT_TRANSPOSE_A : 0u) | (tb ? WEFT_TRANSPOSE_B : 0u);
    weft_value *c = ma && mb ? weft_matmul_ex(cx, ma, mb, flags) : NULL;
    if (!c)
        return false;
    /* [batch..., L, R] back to [batch..., left..., right...]. */
    out->rank = nb + nl + nr;
    concat3(out->labels, batch, nb, left, nl, right, nr);
    if (nl == 1 && nr == 1) {
        out->v = c;
        return true;
    }
    int64_t dims[WEFT_MAX_RANK];
    const weft_spec *cs = weft__value_spec(c);
    for (int d = 0; d < nb; d++)
        dims[d] = cs->dims[d];
    for (int d = 0; d < nl; d++)
        dims[nb + d] = spec_of(&a)->dims[ta ? nb + nc + d : nb + d];
    for (int d = 0; d < nr; d++)
        dims[nb + nl + d] = spec_of(&b)->dims[tb ? nb + d : nb + nc + d];
    out->v = reshape_known(cx, eq, c, out->rank, dims);
    return out->v != NULL;
}

/* ---- The op ------------------------------------------------------------- */

/* Whether contracting a with b last leaves the output's labels in its
 * order: batch labels (in a's order), then a's own, then b's own, each
 * kept only when the output has it. */
static bool result_in_order(const term *a, const term *b, const plan *p)
{
    char order[WEFT_MAX_RANK * 2];
    int n = 0;
    for (int pass = 0; pass < 3; pass++) {
        const term *from = pass == 2 ? b : a;
        for (int d = 0; d < from->rank; d++) {
            char c = from->labels[d];
            bool in_other = has((from == a ? b : a)->labels, (from == a ? b : a)->rank, c);
            bool wanted = pass == 0 ? in_other : !in_other;
            if (wanted && has(p->out, p->out_rank, c))
                order[n++] = c;
        }
    }
    return n == p->out_rank && memcmp(order, p->out, (size_t)n) == 0;
}

weft_value *weft_einsum(weft_ctx *cx, const char *equation, weft_value *const *inputs,
                        size_t n_inputs)
{
    WEFT__SCOPE(cx);
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return NULL;
    }
    if (!equation || !inputs || n_inputs == 0 || n_inputs > MAX_OPERANDS)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn,
                              !equation ? "NULL equation" : !inputs ? "NULL inputs"
                              : "not 1 to 8 inputs");
    if (!weft__ctx_check_inputs(cx, fn, inputs, n_inputs))
        return NULL;
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.n = (int)n_inputs;
    if (!parse(cx, equation, inputs, &pl))
        return NULL;
    /* A label repeated within an operand: its diagonal, before anything
     * else sees the operand. */
    for (int k = 0; k < pl.n; k++)
        for (bool found = true; found;)
            if (!take_diagonal(cx, equation, &pl, &pl.t[k], &found))
                return NULL;
    term acc = pl.t[0];
    for (int k = 1; k < pl.n; k++) {
        /* Keep what the output and the operands after k need. */
        char keep[MAX_LABELS];
        int n_keep = 0;
        for (int d = 0; d < pl.out_rank; d++)
            keep[n_keep++] = pl.out[d];
        for (int j = k + 1; j < pl.n; j++)
            for (int d = 0; d < pl.t[j].rank; d++)
                if (!has(keep, n_keep, pl.t[j].labels[d]))
                    keep[n_keep++] = pl.t[j].labels[d];
        term next, b = pl.t[k];
        /* The last product in the other order when that gives the
         * output's order and this one would not: no transpose after it. */
        bool swap = k == pl.n - 1 && !result_in_order(&acc, &b, &pl) &&
                    result_in_order(&b, &acc, &pl);
        if (!(swap ? contract(cx, equation, b, acc, keep, n_keep, &next)
                   : contract(cx, equation, acc, b, keep, n_keep, &next)))
            return NULL;
        acc = next;
    }
    if (!sum_out(cx, &acc, pl.out, pl.out_rank) || !permute(cx, &acc, pl.out))
        return NULL;
    return WEFT__KEEP(acc.v);
}
