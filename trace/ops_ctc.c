/* tf.nn.ctc_loss on dense labels: one CTC_LOSS node (checked and computed
 * by trace/kernel_ctc.c); the greedy decoder and collapse_repeated,
 * compositions; the beam search decoder, ctc_unique_labels and
 * edit_distance (the decoders' score against a truth), a node each
 * (trace/kernel_ctc_beam.c, kernel_ctc_unique.c, kernel_edit_distance.c). */
#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

weft_value *weft_ctc_loss(weft_ctx *cx, weft_value *labels, weft_value *logits,
                          weft_value *label_length, weft_value *logit_length,
                          bool logits_time_major, int blank_index)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ctc_loss";
    weft_value *in[4] = { labels, logits, label_length, logit_length };
    if (!weft__op_enter(cx, fn, in, 4))
        return NULL;
    weft__node n = { .op = WEFT__OP_CTC_LOSS };
    n.attr.index.axis = blank_index;
    n.attr.index.kind = logits_time_major ? 1 : 0;
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 4));
}

/* Each row of values [batch, width] with its kept elements (keep, bool)
 * moved to the front, fill after them: a running count of the kept ones
 * gives each its column, the others go to a spare column that is cut off.
 * The greedy decoder's and collapse_repeated's last step. */
static weft_value *kept_to_front(weft_ctx *cx, weft_value *values, weft_value *keep,
                                 int64_t width, double fill)
{
    weft_value *count = weft_cumsum(cx, weft_cast(cx, keep, WEFT_I64), 1);
    weft_value *column = weft_where(cx, keep, weft_sub(cx, count, weft_const_i64(cx, 1)),
                                    weft__value_strong(cx, weft_const_i64(cx, width)));
    weft_value *rows = weft_broadcast_to(
        cx, weft_expand_dims(cx, weft__ops_axis0_range(cx, values), 1), 2,
        (const int64_t[]){ -1, width });
    weft_value *pair[2] = { rows, column };
    const int64_t spare[2][2] = { { 0, 0 }, { 0, 1 } };
    weft_value *base = weft_pad(cx, weft_fill_like(cx, values, fill), spare, fill);
    weft_value *moved = weft_scatter_nd_update(cx, base, weft_stack(cx, pair, 2, -1), values);
    return weft__ops_axis_slice(cx, moved, 1, 0, width);
}

/* tf.nn.ctc_greedy_decoder, dense: each frame's best class; with
 * merge_repeated a class equal to the frame before it is dropped; blanks
 * are dropped; what is left of each element moves to the front of its
 * row, -1 after it. */
int weft_ctc_greedy_decoder(weft_ctx *cx, weft_value *inputs, weft_value *sequence_length,
                            bool merge_repeated, int blank_index, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_ctc_greedy_decoder";
    weft_value *in[2] = { inputs, sequence_length };
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, in, 2, outs, &rc))
        return rc;
    const weft_spec *s = weft__value_spec(inputs), *l = weft__value_spec(sequence_length);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if ((s->dtype != WEFT_F32 && s->dtype != WEFT_F64) ||
        (l->dtype != WEFT_I32 && l->dtype != WEFT_I64)) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the inputs %s are not f32 or f64, or the lengths %s "
                       "not i32 or i64", fn, weft__spec_str(s, s1, sizeof s1),
                       weft__spec_str(l, s2, sizeof s2));
        return weft_ctx_status(cx);
    }
    if (s->rank != 3 || s->dims[0] < 0 || s->dims[2] < 1 || l->rank != 1) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the inputs %s are not [frames, batch, classes] with "
                       "frames and classes known while tracing, or the lengths %s not [batch]", fn,
                       weft__spec_str(s, s1, sizeof s1), weft__spec_str(l, s2, sizeof s2));
        return weft_ctx_status(cx);
    }
    int64_t frames = s->dims[0], classes = s->dims[2];
    int64_t blank = weft__ctc_blank(blank_index, classes);
    if (blank < 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: blank_index %d is not a class of %lld", fn,
                       blank_index, (long long)classes);
        return weft_ctx_status(cx);
    }
    weft_value *x = weft_transpose(cx, inputs, (const int[]){ 1, 0, 2 });   /* [batch, frames, classes] */
    weft_value *best = weft_argmax(cx, x, -1);
    weft_value *valid = weft_sequence_mask(cx, sequence_length, frames, WEFT_BOOL);
    /* The negative sum of each frame's largest logit, over the valid ones. */
    weft_value *top = weft_where(cx, valid, weft_reduce_max(cx, x, -1), weft_const_f64(cx, 0));
    int last = 1;
    outs[1] = weft_neg(cx, weft_reduce(cx, WEFT_R_SUM, top, &last, 1, true));
    weft_value *keep = weft_logical_and(
        cx, valid, weft_ne(cx, best, weft__value_strong(cx, weft_const_i64(cx, blank))));
    if (merge_repeated) {
        const int64_t front[2][2] = { { 0, 0 }, { 1, 0 } };
        weft_value *before = weft_pad(cx, weft__ops_axis_slice(cx, best, 1, 0, -1), front, -1);
        keep = weft_logical_and(cx, keep, weft_ne(cx, best, before));
    }
    outs[0] = kept_to_front(cx, best, keep, frames, -1);
    return weft_ctx_status(cx);
}

/* tf.nn.ctc_beam_search_decoder, dense: one node of f64 rows (score,
 * labels), cut into the labels and the scores. */
int weft_ctc_beam_search_decoder(weft_ctx *cx, weft_value *inputs, weft_value *sequence_length,
                                 int beam_width, int top_paths, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_ctc_beam_search_decoder";
    weft_value *in[2] = { inputs, sequence_length };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 2);
    if (rc != 0)
        return rc;
    if (beam_width < 1 || top_paths < 1 || top_paths > beam_width) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: beam_width %d and top_paths %d are not 1 <= "
                       "top_paths <= beam_width", fn, beam_width, top_paths);
        return weft_ctx_status(cx);
    }
    weft__node n = { .op = WEFT__OP_CTC_BEAM };
    n.attr.index.count = beam_width;
    n.attr.index.axis = top_paths;
    weft_value *rows = weft__ops_finish(cx, &n, in, 2);
    if (!rows)
        return weft_ctx_status(cx);
    weft_value *labels = weft_cast(cx, weft__ops_axis_slice(cx, rows, 2, 1, WEFT_END), WEFT_I64);
    weft_value *scores = weft_cast(cx, weft_squeeze(cx, weft__ops_axis_slice(cx, rows, 2, 0, 1), 2),
                                   weft__value_spec(inputs)->dtype);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = labels;
        outs[1] = scores;
    }
    return weft_ctx_status(cx);
}

/* tf.nn.collapse_repeated, TensorFlow's own composition: a label equal to
 * the one before it, or past its row's length, is dropped; the kept ones
 * move to the front of their row (kept_to_front), zeros after them; the
 * columns past the longest new length are cut off. */
int weft_collapse_repeated(weft_ctx *cx, weft_value *labels, weft_value *seq_length,
                           weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_collapse_repeated";
    weft_value *in[2] = { labels, seq_length };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 2);
    if (rc != 0)
        return rc;
    const weft_spec *s = weft__value_spec(labels), *l = weft__value_spec(seq_length);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (s->dtype == WEFT_BOOL || (l->dtype != WEFT_I32 && l->dtype != WEFT_I64)) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the labels %s are bool, or the lengths %s not i32 "
                       "or i64", fn, weft__spec_str(s, s1, sizeof s1),
                       weft__spec_str(l, s2, sizeof s2));
        return weft_ctx_status(cx);
    }
    if (s->rank != 2 || s->dims[1] < 0 || l->rank != 1) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the labels %s are not [batch, max_length] with "
                       "max_length known while tracing, or the lengths %s not [batch]", fn,
                       weft__spec_str(s, s1, sizeof s1), weft__spec_str(l, s2, sizeof s2));
        return weft_ctx_status(cx);
    }
    int64_t width = s->dims[1];
    weft_value *changed[2] = {
        weft_cast(cx, weft_ones_like(cx, weft__ops_axis_slice(cx, labels, 1, 0, 1)), WEFT_BOOL),
        weft_ne(cx, weft__ops_axis_slice(cx, labels, 1, 1, WEFT_END),
                weft__ops_axis_slice(cx, labels, 1, 0, -1)),
    };
    weft_value *keep = weft_logical_and(cx, weft_concat(cx, changed, 2, 1),
                                        weft_sequence_mask(cx, seq_length, width, WEFT_BOOL));
    weft_value *collapsed = kept_to_front(cx, labels, keep, width, 0);
    weft_value *lengths = weft_sum(cx, weft_cast(cx, keep, WEFT_I64), 1);
    weft_value *kept = weft_lt(cx, weft_range(cx, WEFT_I64, 0, width, 1),
                               weft_reduce_max(cx, lengths, 0));
    weft_value *cut = weft_boolean_mask(cx, collapsed, kept, 1);
    weft_value *new_length = weft_cast(cx, lengths, l->dtype);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = cut;
        outs[1] = new_length;
    }
    return weft_ctx_status(cx);
}

/* tf.nn.ctc_unique_labels: one CTC_UNIQUE node (trace/kernel_ctc_unique.c)
 * of i64 [batch, 2, max_length], cut into the labels and the indices. */
int weft_ctc_unique_labels(weft_ctx *cx, weft_value *labels, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_ctc_unique_labels";
    int rc = weft__ctx_enter_int(cx, fn, &labels, 1, outs, 2);
    if (rc != 0)
        return rc;
    weft__node n = { .op = WEFT__OP_CTC_UNIQUE };
    weft_value *both = weft__ops_finish(cx, &n, &labels, 1);
    if (!both)
        return weft_ctx_status(cx);
    weft_value *unique = weft_squeeze(cx, weft__ops_axis_slice(cx, both, 1, 0, 1), 1);
    weft_value *index = weft_cast(cx, weft_squeeze(cx, weft__ops_axis_slice(cx, both, 1, 1, 2), 1),
                                  WEFT_I32);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = unique;
        outs[1] = index;
    }
    return weft_ctx_status(cx);
}

/* tf.edit_distance on dense sequences: one EDIT_DISTANCE node
 * (trace/kernel_edit_distance.c); a sequence stands in for lengths not
 * given, which the node's flags say it does not read. */
weft_value *weft_edit_distance(weft_ctx *cx, weft_value *hypothesis, weft_value *hypothesis_length,
                               weft_value *truth, weft_value *truth_length, bool normalize)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_edit_distance";
    weft_value *seqs[2] = { hypothesis, truth };
    if (!weft__op_enter(cx, fn, seqs, 2))
        return NULL;
    weft_value *lens[2] = { hypothesis_length, truth_length };
    for (int k = 0; k < 2; k++)
        if (lens[k] && !weft__op_enter(cx, fn, &lens[k], 1))
            return NULL;
    weft__node n = { .op = WEFT__OP_EDIT_DISTANCE };
    n.attr.index.kind = (hypothesis_length ? 1 : 0) | (truth_length ? 2 : 0);
    n.attr.index.count = normalize;
    weft_value *in[4] = { hypothesis, hypothesis_length ? hypothesis_length : hypothesis, truth,
                          truth_length ? truth_length : truth };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 4));
}
