/* Shape and dtype inference of the ops whose result size the input values
 * decide: argwhere, boolean_mask, unique's parts, bincount,
 * non_max_suppression and confusion_matrix (the sorted segment ops share
 * the unsorted ones' inference, in infer_shape.c).  The dim that counts
 * true elements or distinct values is unknown (WEFT_DIM_ANY) even on
 * concrete inputs; the kernels (kernel_select.c) size it.  As elsewhere,
 * the same code checks a node while tracing and again before the kernel
 * runs. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/shape.h"

#define ANY WEFT_DIM_ANY

/* argwhere: the i64 coordinates of the nonzero elements, [count, rank]. */
static int infer_argwhere(const weft_spec *a, weft_spec *out)
{
    out->dtype = WEFT_I64;
    out->rank = 2;
    out->dims[0] = ANY;
    out->dims[1] = a->rank == WEFT_RANK_ANY ? ANY : a->rank;
    return 0;
}

/* boolean_mask(tensor, mask) along axis: mask's rank k known and at least
 * 1, its dims those of tensor's dims axis..axis+k-1 where both are known;
 * the result replaces those k dims by one unknown count. */
static int infer_boolean_mask(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *t = &in[0], *m = &in[1];
    char st[WEFT__SPEC_STR_MAX], sm[WEFT__SPEC_STR_MAX];
    weft__spec_str(t, st, sizeof st);
    weft__spec_str(m, sm, sizeof sm);
    if (m->dtype != WEFT_BOOL)
        return weft__errorf(WEFT_EDTYPE, "weft_boolean_mask: the mask %s is not bool", sm);
    if (m->rank == WEFT_RANK_ANY || m->rank == 0)
        return weft__errorf(WEFT_ESHAPE, "weft_boolean_mask: the mask %s needs a known rank of "
                            "at least 1", sm);
    int axis = n->attr.index.axis;
    if (t->rank == WEFT_RANK_ANY) {
        if (axis < 0)
            return weft__errorf(WEFT_ESHAPE, "weft_boolean_mask: a negative axis (%d) needs the "
                                "tensor's rank, unknown in %s", axis, st);
        out->dtype = t->dtype;
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    if (axis < 0)
        axis += t->rank;
    if (axis < 0 || axis + m->rank > t->rank)
        return weft__errorf(WEFT_ESHAPE, "weft_boolean_mask: a mask %s at axis %d does not fit "
                            "in the tensor %s", sm, n->attr.index.axis, st);
    for (int d = 0; d < m->rank; d++) {
        int64_t have = t->dims[axis + d], want = m->dims[d];
        if (have != ANY && want != ANY && have != want)
            return weft__errorf(WEFT_ESHAPE, "weft_boolean_mask: the mask %s does not match the "
                                "tensor %s at axis %d", sm, st, axis + d);
    }
    out->dtype = t->dtype;
    out->rank = t->rank - m->rank + 1;
    for (int d = 0; d < axis; d++)
        out->dims[d] = t->dims[d];
    out->dims[axis] = ANY;
    for (int d = axis + m->rank; d < t->rank; d++)
        out->dims[d - m->rank + 1] = t->dims[d];
    return 0;
}

/* UNIQUE_IDX takes a vector x: each element's index among its distinct
 * values (i64, x's shape).  UNIQUE_FIRST and UNIQUE_COUNTS take those
 * indices: one i64 per distinct value. */
static int infer_unique(const weft__node *n, const weft_spec *x, weft_spec *out)
{
    char sx[WEFT__SPEC_STR_MAX];
    if (x->rank != 1 && x->rank != WEFT_RANK_ANY)
        return weft__errorf(WEFT_ESHAPE, "weft_unique: %s is not a vector (rank 1)",
                            weft__spec_str(x, sx, sizeof sx));
    if (n->op != WEFT__OP_UNIQUE_IDX && x->dtype != WEFT_I64)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: the indices %s are not i64",
                            weft__op_name(n->op), weft__spec_str(x, sx, sizeof sx));
    out->dtype = WEFT_I64;
    out->rank = 1;
    out->dims[0] = n->op == WEFT__OP_UNIQUE_IDX && x->rank == 1 ? x->dims[0] : ANY;
    return 0;
}

/* bincount: i32 or i64 values, optional weights of their shape (i32,
 * i64, f32 or f64); a vector of the weights' dtype or the attribute's. */
static int infer_bincount(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    char sa[WEFT__SPEC_STR_MAX], sw[WEFT__SPEC_STR_MAX];
    const weft_spec *a = &in[0];
    if (a->dtype != WEFT_I32 && a->dtype != WEFT_I64)
        return weft__errorf(WEFT_EDTYPE, "weft_bincount: the values %s are not i32 or i64",
                            weft__spec_str(a, sa, sizeof sa));
    out->dtype = n->attr.bincount.dtype;
    if (n->n_in == 2) {
        const weft_spec *w = &in[1];
        if (w->dtype == WEFT_BOOL)
            return weft__errorf(WEFT_EDTYPE, "weft_bincount: the weights %s are not numbers",
                                weft__spec_str(w, sw, sizeof sw));
        bool same = a->rank == WEFT_RANK_ANY || w->rank == WEFT_RANK_ANY || a->rank == w->rank;
        for (int d = 0; same && a->rank == w->rank && d < a->rank; d++)
            same = a->dims[d] == ANY || w->dims[d] == ANY || a->dims[d] == w->dims[d];
        if (!same)
            return weft__errorf(WEFT_ESHAPE, "weft_bincount: the weights %s do not have the "
                                "shape of the values %s", weft__spec_str(w, sw, sizeof sw),
                                weft__spec_str(a, sa, sizeof sa));
        out->dtype = w->dtype;
    }
    out->rank = 1;
    out->dims[0] = ANY;
    return 0;
}

/* confusion_matrix: labels and predictions, i32 or i64 vectors of one
 * length, and weights of that length (cast to the result's dtype by
 * weft_confusion_matrix); [num_classes, num_classes], or unknown dims
 * when the values decide them. */
static int infer_confusion(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    char sl[WEFT__SPEC_STR_MAX], sp[WEFT__SPEC_STR_MAX];
    const weft_spec *lab = &in[0], *pred = &in[1];
    weft__spec_str(lab, sl, sizeof sl);
    weft__spec_str(pred, sp, sizeof sp);
    for (int i = 0; i < 2; i++)
        if (in[i].dtype != WEFT_I32 && in[i].dtype != WEFT_I64)
            return weft__errorf(WEFT_EDTYPE, "weft_confusion_matrix: the %s %s are not i32 or "
                                "i64", i ? "predictions" : "labels", i ? sp : sl);
    for (uint32_t i = 1; i < n->n_in; i++) {
        bool clash = (lab->rank != WEFT_RANK_ANY && lab->rank != 1) ||
                     (in[i].rank != WEFT_RANK_ANY && in[i].rank != 1) ||
                     (lab->rank == 1 && in[i].rank == 1 && lab->dims[0] != ANY &&
                      in[i].dims[0] != ANY && lab->dims[0] != in[i].dims[0]);
        char sw[WEFT__SPEC_STR_MAX];
        if (clash)
            return weft__errorf(WEFT_ESHAPE, "weft_confusion_matrix: the labels %s and %s %s "
                                "are not vectors of one length", sl,
                                i == 1 ? "predictions" : "weights",
                                weft__spec_str(&in[i], sw, sizeof sw));
    }
    out->dtype = n->attr.confusion.dtype;
    out->rank = 2;
    out->dims[0] = out->dims[1] = n->attr.confusion.num_classes < 0 ? ANY
                                                                     : n->attr.confusion.num_classes;
    return 0;
}

/* searchsorted: sorted rows [..., n] and values [..., m] of one dtype
 * (not bool) and the same leading dims, or one sorted vector [n] for
 * values of any rank, a scalar included; i64 indices of values' shape. */
static int infer_searchsorted(const weft_spec *in, weft_spec *out)
{
    const weft_spec *seq = &in[0], *v = &in[1];
    char ss[WEFT__SPEC_STR_MAX], sv[WEFT__SPEC_STR_MAX];
    weft__spec_str(seq, ss, sizeof ss);
    weft__spec_str(v, sv, sizeof sv);
    if (seq->dtype == WEFT_BOOL || v->dtype != seq->dtype)
        return weft__errorf(WEFT_EDTYPE, "weft_searchsorted: the values %s and the sorted "
                            "sequence %s are not numbers of one dtype", sv, ss);
    if (seq->rank == 0)
        return weft__errorf(WEFT_ESHAPE, "weft_searchsorted: the sorted sequence %s is a "
                            "scalar; it needs a last axis", ss);
    if (v->rank == 0 && seq->rank != 1 && seq->rank != WEFT_RANK_ANY)
        return weft__errorf(WEFT_ESHAPE, "weft_searchsorted: the value %s is a scalar, which "
                            "only a vector sorted sequence serves, not %s", sv, ss);
    *out = *v;
    out->dtype = WEFT_I64;
    /* A vector sequence serves every row of the values. */
    if (seq->rank == 1 || seq->rank == WEFT_RANK_ANY || v->rank == WEFT_RANK_ANY)
        return 0;
    bool same = seq->rank == v->rank;
    for (int d = 0; same && d < seq->rank - 1; d++) {
        same = seq->dims[d] == ANY || v->dims[d] == ANY || seq->dims[d] == v->dims[d];
        if (out->dims[d] == ANY)
            out->dims[d] = seq->dims[d];
    }
    if (!same)
        return weft__errorf(WEFT_ESHAPE, "weft_searchsorted: the values %s do not have the "
                            "leading dims of the sorted sequence %s", sv, ss);
    return 0;
}

/* range_to: an i64 vector of unknown length from an i32 or i64 scalar. */
static int infer_range_to(const weft_spec *n, weft_spec *out)
{
    char sn[WEFT__SPEC_STR_MAX];
    if ((n->dtype != WEFT_I32 && n->dtype != WEFT_I64) ||
        (n->rank != 0 && n->rank != WEFT_RANK_ANY))
        return weft__errorf(WEFT_EINVAL, "weft_range_to: the limit %s is not an i32 or i64 "
                            "scalar", weft__spec_str(n, sn, sizeof sn));
    out->dtype = WEFT_I64;
    out->rank = 1;
    out->dims[0] = ANY;
    return 0;
}

bool weft__spec_boxes(const weft_spec *boxes, const weft_spec *per_box)
{
    return boxes->rank == 2 && per_box->rank == 1 &&
           (boxes->dims[1] == 4 || boxes->dims[1] == ANY) &&
           (boxes->dims[0] == ANY || per_box->dims[0] == ANY ||
            boxes->dims[0] == per_box->dims[0]);
}

/* The spec strings of boxes b and scores s into sb and ss; 0 when both
 * are f32 or both f64, else fn's WEFT_EDTYPE naming them (the boxes as
 * `what`). */
static int nms_dtypes(const char *fn, const char *what, const weft_spec *b, const weft_spec *s,
                      char *sb, char *ss)
{
    weft__spec_str(b, sb, WEFT__SPEC_STR_MAX);
    weft__spec_str(s, ss, WEFT__SPEC_STR_MAX);
    if ((b->dtype != WEFT_F32 && b->dtype != WEFT_F64) || s->dtype != b->dtype)
        return weft__errorf(WEFT_EDTYPE, "%s: the %s %s and scores %s are not both f32 or "
                            "both f64", fn, what, sb, ss);
    return 0;
}

/* non_max_suppression: boxes [n, 4] and scores [n], f32 or f64 alike; the
 * i32 indices of the boxes kept, [count]; with scores (NMS_SCORED), f64
 * [count, 2], each row an index and its score. */
static int infer_nms(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const char *fn = n->op == WEFT__OP_NMS_SCORED     ? "weft_non_max_suppression_with_scores"
                     : n->op == WEFT__OP_NMS_OVERLAPS ? "weft_non_max_suppression_overlaps"
                                                      : "weft_non_max_suppression";
    const weft_spec *b = &in[0], *s = &in[1];
    char sb[WEFT__SPEC_STR_MAX], ss[WEFT__SPEC_STR_MAX];
    int rc = nms_dtypes(fn, n->op == WEFT__OP_NMS_OVERLAPS ? "overlaps" : "boxes", b, s, sb, ss);
    if (rc < 0)
        return rc;
    if (n->op == WEFT__OP_NMS_OVERLAPS) {
        bool square = b->rank == 2 && s->rank == 1 && !weft__dims_clash(b->dims[0], b->dims[1]) &&
                      !weft__dims_clash(s->dims[0], b->dims[0]);
        if (!square)
            return weft__errorf(WEFT_ESHAPE, "%s: the overlaps %s and scores %s are not [n, n] "
                                "and [n]", fn, sb, ss);
    } else if (!weft__spec_boxes(b, s)) {
        return weft__errorf(WEFT_ESHAPE, "%s: the boxes %s and scores %s are not [n, 4] "
                            "and [n]", fn, sb, ss);
    }
    bool scored = n->op == WEFT__OP_NMS_SCORED;
    out->dtype = scored ? WEFT_F64 : WEFT_I32;
    out->rank = scored ? 2 : 1;
    out->dims[0] = ANY;
    out->dims[1] = scored ? 2 : 0;
    return 0;
}

/* non_max_suppression_padded: boxes [..., n, 4] and scores [..., n], f32
 * or f64 alike, the same batch dims; i32 [..., max_output + 1]. */
static int infer_nms_padded(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_non_max_suppression_padded";
    const weft_spec *b = &in[0], *s = &in[1];
    char sb[WEFT__SPEC_STR_MAX], ss[WEFT__SPEC_STR_MAX];
    int rc = nms_dtypes(fn, "boxes", b, s, sb, ss);
    if (rc < 0)
        return rc;
    bool fit = b->rank != WEFT_RANK_ANY && b->rank >= 2 && s->rank == b->rank - 1 &&
               !weft__dims_clash(b->dims[b->rank - 1], 4);
    for (int d = 0; fit && d < b->rank - 1; d++)
        fit = !weft__dims_clash(b->dims[d], s->dims[d]);
    if (!fit)
        return weft__errorf(WEFT_ESHAPE, "%s: the boxes %s and scores %s are not [..., n, 4] "
                            "and [..., n] (ranks known while tracing)", fn, sb, ss);
    out->dtype = WEFT_I32;
    out->rank = b->rank - 1;
    for (int d = 0; d < b->rank - 2; d++)
        out->dims[d] = b->dims[d] != ANY ? b->dims[d] : s->dims[d];
    out->dims[b->rank - 2] = n->attr.nms.max_output + 1;
    return 0;
}

/* combined_non_max_suppression: boxes [batch, n, q, 4] and scores [batch,
 * n, classes] (q 1 or classes), f32 or f64 alike; i32 [batch, detections,
 * 2], the detections fixed by the node. */
static int infer_combined_nms(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_combined_non_max_suppression";
    const weft_spec *b = &in[0], *s = &in[1];
    char sb[WEFT__SPEC_STR_MAX], ss[WEFT__SPEC_STR_MAX];
    int rc = nms_dtypes(fn, "boxes", b, s, sb, ss);
    if (rc < 0)
        return rc;
    bool fit = b->rank == 4 && s->rank == 3 && !weft__dims_clash(b->dims[3], 4) &&
               !weft__dims_clash(b->dims[0], s->dims[0]) &&
               !weft__dims_clash(b->dims[1], s->dims[1]) &&
               (b->dims[2] == 1 || !weft__dims_clash(b->dims[2], s->dims[2]));
    if (!fit)
        return weft__errorf(WEFT_ESHAPE, "%s: the boxes %s and scores %s are not [batch, n, q, "
                            "4] and [batch, n, classes] with q 1 or classes", fn, sb, ss);
    out->dtype = WEFT_I32;
    out->rank = 3;
    out->dims[0] = b->dims[0];
    out->dims[1] = n->attr.cnms.per_batch;
    out->dims[2] = 2;
    int64_t numel;
    if (out->dims[0] != ANY && !weft__numel_checked(3, out->dims, sizeof(int32_t), &numel))
        return weft__errorf(WEFT_EINVAL, "%s: %lld images of %lld detections overflow the "
                            "address space", fn, (long long)out->dims[0],
                            (long long)out->dims[1]);
    return 0;
}

int weft__infer_select_op(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    memset(out, 0, sizeof *out);
    switch (n->op) {
    case WEFT__OP_ARGWHERE:     return infer_argwhere(&in[0], out);
    case WEFT__OP_BOOLEAN_MASK: return infer_boolean_mask(n, in, out);
    case WEFT__OP_NMS_PADDED:   return infer_nms_padded(n, in, out);
    case WEFT__OP_UNIQUE_FIRST:
    case WEFT__OP_UNIQUE_IDX:
    case WEFT__OP_UNIQUE_COUNTS: return infer_unique(n, &in[0], out);
    case WEFT__OP_BINCOUNT:     return infer_bincount(n, in, out);
    case WEFT__OP_SEARCHSORTED: return infer_searchsorted(in, out);
    case WEFT__OP_RANGE_TO:     return infer_range_to(&in[0], out);
    case WEFT__OP_NON_MAX_SUPPRESSION:
    case WEFT__OP_NMS_SCORED:
    case WEFT__OP_NMS_OVERLAPS: return infer_nms(n, in, out);
    case WEFT__OP_COMBINED_NMS: return infer_combined_nms(n, in, out);
    case WEFT__OP_CONFUSION_MATRIX: return infer_confusion(n, in, out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: not a selection op", weft__op_name(n->op));
    }
}
