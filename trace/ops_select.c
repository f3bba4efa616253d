/* The selection ops of include/weft/ops.h: argwhere, boolean_mask, unique,
 * unique_with_counts, bincount, confusion_matrix and the non-max
 * suppressions (plain, with overlaps, with scores), whose results the
 * input values size, count_nonzero (a sum of a comparison) and
 * combined_non_max_suppression (one COMBINED_NMS node picking boxes and
 * classes, then gathers) and generate_bounding_box_proposals (one
 * BOX_PROPOSALS node, trace/kernel_proposals.c).  Each records nodes of its own (ARGWHERE,
 * BOOLEAN_MASK, UNIQUE_*, ...), checked by trace/infer_select.c and computed by
 * trace/kernel_select.c.  unique hashes x once, into the indices; the
 * first occurrences and the counts are read off the indices, and the
 * values are x gathered at the first occurrences. */
#include <math.h>
#include <stdint.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

weft_value *weft_argwhere(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_argwhere", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_ARGWHERE };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

weft_value *weft_boolean_mask(weft_ctx *cx, weft_value *tensor, weft_value *mask, int axis)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { tensor, mask };
    if (!weft__op_enter(cx, "weft_boolean_mask", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_BOOLEAN_MASK, .attr.index.axis = axis };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 2));
}

/* unique's parts: outs[0] the values, outs[1] the indices and, when
 * counts, outs[2] the counts. */
static int unique_parts(weft_ctx *cx, const char *fn, weft_value *x, weft_value **outs,
                        bool counts)
{
    size_t n_outs = counts ? 3 : 2;
    for (size_t k = 0; outs && k < n_outs; k++)
        outs[k] = NULL;
    if (!weft__op_enter(cx, fn, &x, 1))
        return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: outs is NULL", fn);
        return weft_ctx_status(cx);
    }
    const weft_spec *xs = weft__value_spec(x);
    if (xs->rank != 1 && xs->rank != WEFT_RANK_ANY) {
        char sx[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not a vector (rank 1)", fn,
                       weft__spec_str(xs, sx, sizeof sx));
        return weft_ctx_status(cx);
    }
    weft__node first_n = { .op = WEFT__OP_UNIQUE_FIRST };
    weft__node idx_n = { .op = WEFT__OP_UNIQUE_IDX };
    weft__node counts_n = { .op = WEFT__OP_UNIQUE_COUNTS };
    weft_value *idx = weft__ops_finish(cx, &idx_n, &x, 1);
    weft_value *first = idx ? weft__ops_finish(cx, &first_n, &idx, 1) : NULL;
    weft_value *values = first ? weft_gather(cx, x, first, 0) : NULL;
    weft_value *count = values && counts ? weft__ops_finish(cx, &counts_n, &idx, 1) : NULL;
    if (!values || (counts && !count))
        return weft_ctx_status(cx);
    outs[0] = values;
    outs[1] = idx;
    if (counts)
        outs[2] = count;
    return 0;
}

int weft_unique(weft_ctx *cx, weft_value *x, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    return unique_parts(cx, "weft_unique", x, outs, false);
}

int weft_unique_with_counts(weft_ctx *cx, weft_value *x, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    return unique_parts(cx, "weft_unique_with_counts", x, outs, true);
}

weft_value *weft_bincount(weft_ctx *cx, weft_value *values, weft_value *weights,
                          int64_t minlength, int64_t maxlength, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { values, weights };
    uint32_t n_in = weights ? 2 : 1;
    if (!weft__op_enter(cx, "weft_bincount", in, n_in))
        return NULL;
    if (minlength < 0 || maxlength < -1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_bincount: %s %lld is negative",
                              minlength < 0 ? "minlength" : "maxlength",
                              (long long)(minlength < 0 ? minlength : maxlength));
    if (!weights && dtype != WEFT_I32 && dtype != WEFT_I64 && dtype != WEFT_F32 &&
        dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "weft_bincount: dtype %d is not i32, i64, f32 "
                              "or f64", (int)dtype);
    weft__node n = { .op = WEFT__OP_BINCOUNT, .attr.bincount.dtype = dtype,
                     .attr.bincount.minlength = minlength,
                     .attr.bincount.maxlength = maxlength };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, n_in));
}

weft_value *weft_confusion_matrix(weft_ctx *cx, weft_value *labels, weft_value *predictions,
                                  int64_t num_classes, weft_value *weights, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    weft_value *in[3] = { labels, predictions, weights };
    uint32_t n_in = weights ? 3 : 2;
    if (!weft__op_enter(cx, "weft_confusion_matrix", in, n_in))
        return NULL;
    if (num_classes < -1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_confusion_matrix: num_classes %lld is "
                              "negative (-1 takes it from the values)", (long long)num_classes);
    if (dtype != WEFT_I32 && dtype != WEFT_I64 && dtype != WEFT_F32 && dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "weft_confusion_matrix: dtype %d is not i32, "
                              "i64, f32 or f64", (int)dtype);
    if (weights && !(in[2] = weft_cast(cx, weights, dtype)))
        return NULL;
    weft__node n = { .op = WEFT__OP_CONFUSION_MATRIX, .attr.confusion.dtype = dtype,
                     .attr.confusion.num_classes = num_classes };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, n_in));
}

weft_value *weft_count_nonzero(weft_ctx *cx, weft_value *a, const int *axes, size_t n,
                               bool keepdims)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_count_nonzero", &a, 1))
        return NULL;
    weft_value *nz = a;
    if (weft__value_spec(a)->dtype != WEFT_BOOL)
        nz = weft_ne(cx, a, weft_const_i64(cx, 0));
    return WEFT__KEEP(weft_reduce(cx, WEFT_R_SUM, weft_cast(cx, nz, WEFT_I64), axes, n, keepdims));
}

weft_value *weft_searchsorted(weft_ctx *cx, weft_value *sorted_sequence, weft_value *values,
                              bool right)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { sorted_sequence, values };
    if (!weft__op_enter(cx, "weft_searchsorted", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_SEARCHSORTED, .attr.index.kind = right };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 2));
}

weft_value *weft_range_to(weft_ctx *cx, weft_value *limit)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_range_to", &limit, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_RANGE_TO };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &limit, 1));
}

weft_value *weft_sequence_mask(weft_ctx *cx, weft_value *lengths, int64_t maxlen,
                               weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_sequence_mask", &lengths, 1))
        return NULL;
    weft_dtype lt = weft__value_spec(lengths)->dtype;
    if (lt != WEFT_I32 && lt != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "weft_sequence_mask: the lengths are %s, not "
                              "i32 or i64", weft_dtype_name(lt));
    if (maxlen < -1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_sequence_mask: maxlen %lld is below -1",
                              (long long)maxlen);
    /* Positions 0..maxlen-1 against each length, on a new last axis. */
    weft_value *pos = maxlen >= 0
                          ? weft_range(cx, WEFT_I64, 0, maxlen, 1)
                          : weft_range_to(cx, weft_reduce(cx, WEFT_R_MAX, lengths, NULL, 0, false));
    weft_value *mask = weft_lt(cx, pos, weft_expand_dims(cx, lengths, -1));
    return WEFT__KEEP(dtype == WEFT_BOOL ? mask : weft_cast(cx, mask, dtype));
}

int weft_dynamic_partition(weft_ctx *cx, weft_value *data, weft_value *partitions,
                           int num_partitions, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, num_partitions > 0 ? (size_t)num_partitions : 0);
    weft_value *in[2] = { data, partitions };
    for (int k = 0; outs && k < num_partitions; k++)
        outs[k] = NULL;
    if (!weft__op_enter(cx, "weft_dynamic_partition", in, 2))
        return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
    if (!outs || num_partitions < 1) {
        weft__ctx_fail(cx, WEFT_EINVAL, "weft_dynamic_partition: %s",
                       !outs ? "outs is NULL" : "num_partitions is below 1");
        return weft_ctx_status(cx);
    }
    weft_dtype pt = weft__value_spec(partitions)->dtype;
    if (pt != WEFT_I32 && pt != WEFT_I64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "weft_dynamic_partition: the partitions are %s, not "
                       "i32 or i64", weft_dtype_name(pt));
        return weft_ctx_status(cx);
    }
    /* An entry outside the parts fails the call, as in TensorFlow. */
    weft_value *in_range = weft_logical_and(cx, weft_ge(cx, partitions, weft_const_i64(cx, 0)),
                                            weft_lt(cx, partitions,
                                                    weft_const_i64(cx, num_partitions)));
    partitions = weft__ops_checkf(cx, partitions, in_range,
                                  "weft_dynamic_partition: a partition is outside 0..%d",
                                  num_partitions - 1);
    /* Part k: the rows of data whose partition is k, in order. */
    for (int k = 0; k < num_partitions; k++) {
        weft_value *is_k = weft_eq(cx, partitions, weft_const_i64(cx, k));
        weft_value *part = weft_boolean_mask(cx, data, is_k, 0);
        if (!part) {
            for (int j = 0; j < k; j++)
                outs[j] = NULL;
            return weft_ctx_status(cx);
        }
        outs[k] = part;
    }
    return 0;
}

/* The NON_MAX_SUPPRESSION, NMS_SCORED or NMS_OVERLAPS node of fn's call
 * (boxes: NMS_OVERLAPS' overlaps; iou_threshold: its overlap threshold),
 * its arguments checked first. */
static weft_value *nms_node(weft_ctx *cx, const char *fn, weft__op op, weft_value *boxes,
                            weft_value *scores, int64_t max_output_size, double iou_threshold,
                            double score_threshold, double soft_nms_sigma)
{
    weft_value *in[2] = { boxes, scores };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (max_output_size < 0 || max_output_size > INT32_MAX)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_output_size %lld is not within 0..%d",
                              fn, (long long)max_output_size, INT32_MAX);
    /* Overlaps need not be IoUs: any threshold but NaN, as TensorFlow's. */
    if (op == WEFT__OP_NMS_OVERLAPS && isnan(iou_threshold))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: overlap_threshold is NaN", fn);
    if (op != WEFT__OP_NMS_OVERLAPS && !(iou_threshold >= 0 && iou_threshold <= 1))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: iou_threshold %g is not within [0, 1]", fn,
                              iou_threshold);
    if (isnan(score_threshold))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: score_threshold is NaN", fn);
    if (!(soft_nms_sigma >= 0) || isinf(soft_nms_sigma))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: soft_nms_sigma %g is not finite and >= 0",
                              fn, soft_nms_sigma);
    weft__node n = { .op = op };
    n.attr.nms.max_output = max_output_size;
    n.attr.nms.iou = iou_threshold;
    n.attr.nms.score = score_threshold;
    n.attr.nms.sigma = soft_nms_sigma;
    return weft__ops_finish(cx, &n, in, 2);
}

weft_value *weft_non_max_suppression(weft_ctx *cx, weft_value *boxes, weft_value *scores,
                                     int64_t max_output_size, double iou_threshold,
                                     double score_threshold)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nms_node(cx, "weft_non_max_suppression", WEFT__OP_NON_MAX_SUPPRESSION,
                               boxes, scores, max_output_size, iou_threshold, score_threshold,
                               0));
}

weft_value *weft_non_max_suppression_overlaps(weft_ctx *cx, weft_value *overlaps,
                                              weft_value *scores, int64_t max_output_size,
                                              double overlap_threshold, double score_threshold)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nms_node(cx, "weft_non_max_suppression_overlaps", WEFT__OP_NMS_OVERLAPS,
                               overlaps, scores, max_output_size, overlap_threshold,
                               score_threshold, 0));
}

/* Padded: one node of i32 rows (count, indices...), cut in two.  Not
 * padded: weft_non_max_suppression's result and its length. */
int weft_non_max_suppression_padded(weft_ctx *cx, weft_value *boxes, weft_value *scores,
                                    int64_t max_output_size, double iou_threshold,
                                    double score_threshold, bool pad_to_max_output_size,
                                    weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_non_max_suppression_padded";
    weft_value *in[2] = { boxes, scores };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 2);
    if (rc != 0)
        return rc;
    const weft_spec *bs = weft__value_spec(boxes);
    if (!pad_to_max_output_size && bs->rank != 2) {
        char s[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the boxes %s are not [n, 4]: a batch needs "
                       "pad_to_max_output_size", fn, weft__spec_str(bs, s, sizeof s));
        return weft_ctx_status(cx);
    }
    weft_value *r0, *r1;
    if (pad_to_max_output_size) {
        weft_value *rows = nms_node(cx, fn, WEFT__OP_NMS_PADDED, boxes, scores, max_output_size,
                                    iou_threshold, score_threshold, 0);
        if (!rows)
            return weft_ctx_status(cx);
        int last = bs->rank - 2;
        r0 = weft__ops_axis_slice(cx, rows, last, 1, WEFT_END);
        r1 = weft_squeeze(cx, weft__ops_axis_slice(cx, rows, last, 0, 1), last);
    } else {
        r0 = nms_node(cx, fn, WEFT__OP_NON_MAX_SUPPRESSION, boxes, scores, max_output_size,
                      iou_threshold, score_threshold, 0);
        if (!r0)
            return weft_ctx_status(cx);
        r1 = weft_cast(cx, weft_squeeze(cx, weft_shape(cx, r0), 0), WEFT_I32);
    }
    if (weft_ctx_status(cx) == 0) {
        outs[0] = r0;
        outs[1] = r1;
    }
    return weft_ctx_status(cx);
}

int weft_non_max_suppression_with_scores(weft_ctx *cx, weft_value *boxes, weft_value *scores,
                                         int64_t max_output_size, double iou_threshold,
                                         double score_threshold, double soft_nms_sigma,
                                         weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_non_max_suppression_with_scores";
    weft_value *in[2] = { boxes, scores };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 2);
    if (rc != 0)
        return rc;
    /* One node: f64 rows of (index, score), exact for both. */
    weft_value *kept = nms_node(cx, fn, WEFT__OP_NMS_SCORED, boxes, scores, max_output_size,
                                iou_threshold, score_threshold, soft_nms_sigma);
    if (!kept)
        return weft_ctx_status(cx);
    weft_value *index = weft_squeeze(cx, weft__ops_axis_slice(cx, kept, 1, 0, 1), 1);
    weft_value *score = weft_squeeze(cx, weft__ops_axis_slice(cx, kept, 1, 1, 2), 1);
    weft_value *r0 = weft_cast(cx, index, WEFT_I32);
    weft_value *r1 = weft_cast(cx, score, weft__value_spec(scores)->dtype);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = r0;
        outs[1] = r1;
    }
    return weft_ctx_status(cx);
}

/* weft_combined_non_max_suppression's picks of a [batch, n, ...] per
 * detection: a at each row's box, then (classes_axis) at its class. */
static weft_value *cnms_pick(weft_ctx *cx, weft_value *a, weft_value *box, weft_value *cls,
                             bool by_class)
{
    weft_value *rows = weft_gather_ex(cx, a, box, 1, 1);          /* [batch, p, ...] */
    if (!by_class)
        return rows;
    return weft_squeeze(cx, weft_gather_ex(cx, rows, cls, 2, 2), 2);
}

int weft_combined_non_max_suppression(weft_ctx *cx, weft_value *boxes, weft_value *scores,
                                      int64_t max_output_size_per_class, int64_t max_total_size,
                                      double iou_threshold, double score_threshold,
                                      bool pad_per_class, bool clip_boxes, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 4);
    static const char fn[] = "weft_combined_non_max_suppression";
    weft_value *in[2] = { boxes, scores };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 4);
    if (rc != 0)
        return rc;
    if (max_output_size_per_class < 0 || max_output_size_per_class > INT32_MAX)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: max_output_size_per_class %lld is not "
                               "within 0..%d", fn, (long long)max_output_size_per_class,
                               INT32_MAX);
    if (max_total_size < 1 || max_total_size > INT32_MAX)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: max_total_size %lld is not within 1..%d",
                               fn, (long long)max_total_size, INT32_MAX);
    if (!(iou_threshold >= 0 && iou_threshold <= 1))
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: iou_threshold %g is not within [0, 1]", fn,
                               iou_threshold);
    if (isnan(score_threshold))
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: score_threshold is NaN", fn);
    const weft_spec *bs = weft__value_spec(boxes), *ss = weft__value_spec(scores);
    int64_t classes = ss->rank == 3 ? ss->dims[2] : WEFT_DIM_ANY;
    int64_t q = bs->rank == 4 ? bs->dims[2] : WEFT_DIM_ANY;
    /* Other ranks are the node's to refuse. */
    if (bs->rank == 4 && ss->rank == 3 && (classes == WEFT_DIM_ANY || q == WEFT_DIM_ANY)) {
        char sb[WEFT__SPEC_STR_MAX], sc[WEFT__SPEC_STR_MAX];
        return weft__ctx_failf(cx, WEFT_ESHAPE, "%s: the boxes %s and scores %s need q and the "
                               "classes known while tracing", fn,
                               weft__spec_str(bs, sb, sizeof sb),
                               weft__spec_str(ss, sc, sizeof sc));
    }
    /* TensorFlow's detections per image: max_total_size, or with
     * pad_per_class no more than every class's most. */
    int64_t per_batch = max_total_size, most;
    if (pad_per_class && classes >= 0 &&
        !__builtin_mul_overflow(max_output_size_per_class, classes, &most) && most < per_batch)
        per_batch = most;
    weft__node n = { .op = WEFT__OP_COMBINED_NMS };
    n.attr.cnms.max_per_class = max_output_size_per_class;
    n.attr.cnms.per_batch = per_batch;
    n.attr.cnms.iou = iou_threshold;
    n.attr.cnms.score = score_threshold;
    weft_value *sel = weft__ops_finish(cx, &n, in, 2);           /* [batch, p, 2] */
    if (!sel)
        return weft_ctx_status(cx);
    /* Rows past an image's detections hold -1: picked at 0, then zeroed. */
    weft_value *safe = weft_maximum(cx, sel, weft_const_i64(cx, 0));
    /* The box of each row [batch, p], and its class kept as [batch, p, 1]. */
    weft_value *box = weft_squeeze(cx, weft__ops_axis_slice(cx, safe, 2, 0, 1), 2);
    weft_value *cls = weft__ops_axis_slice(cx, safe, 2, 1, 2);
    weft_value *valid = weft_ge(cx, weft_squeeze(cx, weft__ops_axis_slice(cx, sel, 2, 0, 1), 2),
                                weft_const_i64(cx, 0));
    weft_value *zero = weft_const_f64(cx, 0.0);
    weft_value *picked = cnms_pick(cx, boxes, box, cls, q > 1);
    if (q == 1)
        picked = weft_squeeze(cx, picked, 2);   /* [batch, p, 4] */
    if (clip_boxes)
        picked = weft_clip(cx, picked, zero, weft_const_f64(cx, 1.0));
    weft_value *r[4];
    r[0] = weft_where(cx, weft_expand_dims(cx, valid, 2), picked, zero);
    r[1] = weft_where(cx, valid, cnms_pick(cx, scores, box, cls, true), zero);
    r[2] = weft_where(cx, valid, weft_cast(cx, weft_squeeze(cx, cls, 2), bs->dtype), zero);
    r[3] = weft_cast(cx, weft_sum(cx, valid, 1), WEFT_I32);
    if (weft_ctx_status(cx) == 0)
        for (int k = 0; k < 4; k++)
            outs[k] = r[k];
    return weft_ctx_status(cx);
}

/* tf.image.generate_bounding_box_proposals: one BOX_PROPOSALS node
 * (trace/kernel_proposals.c) of [batch, post_nms_topn, 5] rows, cut into
 * the boxes and their scores. */
int weft_generate_bounding_box_proposals(weft_ctx *cx, weft_value *scores,
                                         weft_value *bbox_deltas, weft_value *image_info,
                                         weft_value *anchors, double nms_threshold,
                                         int64_t pre_nms_topn, double min_size,
                                         int64_t post_nms_topn, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_generate_bounding_box_proposals";
    weft_value *in[4] = { scores, bbox_deltas, image_info, anchors };
    int rc = weft__ctx_enter_int(cx, fn, in, 4, outs, 2);
    if (rc != 0)
        return rc;
    if (!(nms_threshold >= 0 && nms_threshold <= 1) || pre_nms_topn < 1 || post_nms_topn < 1 ||
        post_nms_topn > INT32_MAX || !isfinite(min_size)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: nms_threshold %g is not within 0..1, pre_nms_topn "
                       "%lld or post_nms_topn %lld not 1 or more, or min_size %g not finite", fn,
                       nms_threshold, (long long)pre_nms_topn, (long long)post_nms_topn,
                       min_size);
        return weft_ctx_status(cx);
    }
    weft__node n = { .op = WEFT__OP_BOX_PROPOSALS };
    n.attr.proposals.pre_nms = pre_nms_topn;
    n.attr.proposals.post_nms = post_nms_topn;
    n.attr.proposals.iou = nms_threshold;
    n.attr.proposals.min_size = min_size;
    weft_value *rows = weft__ops_finish(cx, &n, in, 4);
    if (!rows)
        return weft_ctx_status(cx);
    weft_value *boxes = weft__ops_axis_slice(cx, rows, 2, 0, 4);
    weft_value *probs = weft_squeeze(cx, weft__ops_axis_slice(cx, rows, 2, 4, 5), 2);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = boxes;
        outs[1] = probs;
    }
    return weft_ctx_status(cx);
}
