/* tf.nn.ctc_loss on dense labels: one CTC_LOSS node (checked and computed
 * by trace/kernel_ctc.c). */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/shape.h"

weft_value *weft_ctc_loss(weft_ctx *cx, weft_value *labels, weft_value *logits,
                          weft_value *label_length, weft_value *logit_length,
                          bool logits_time_major, int blank_index)
{
    static const char fn[] = "weft_ctc_loss";
    weft_value *in[4] = { labels, logits, label_length, logit_length };
    if (!weft__op_enter(cx, fn, in, 4))
        return NULL;
    weft__node n = { .op = WEFT__OP_CTC_LOSS };
    n.attr.index.axis = blank_index;
    n.attr.index.kind = logits_time_major ? 1 : 0;
    return weft__ops_finish(cx, &n, in, 4);
}
