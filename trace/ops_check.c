/* tf.debugging.check_numerics and an assert that passes its tensor on:
 * one node each (kernel_check.c), recorded as side effects, so that a
 * check runs even when its result goes unused and the host calls after it
 * wait for it (TensorFlow's automatic control dependencies do the same
 * for its asserts inside a tf.function). */
#include <string.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* message (NULL: "") cut to the node's space, the rest zeros. */
static void keep_message(weft__node *n, const char *message)
{
    size_t len = message ? strnlen(message, WEFT__CHECK_MESSAGE_MAX - 1) : 0;
    memset(n->attr.check.message, 0, sizeof n->attr.check.message);
    if (len)
        memcpy(n->attr.check.message, message, len);
}

static weft_value *check_node(weft_ctx *cx, weft__op op, weft_value *const *in, uint32_t n_in,
                              const char *message)
{
    weft__node n = { .op = op, .flags = WEFT__NODE_SIDE_EFFECT };
    keep_message(&n, message);
    return weft__ops_finish(cx, &n, in, n_in);
}

weft_value *weft_check_numerics(weft_ctx *cx, weft_value *x, const char *message)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_check_numerics", &x, 1))
        return NULL;
    return WEFT__KEEP(check_node(cx, WEFT__OP_CHECK_NUMERICS, &x, 1, message));
}

weft_value *weft_check(weft_ctx *cx, weft_value *x, weft_value *condition, const char *message)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { x, condition };
    if (!weft__op_enter(cx, "weft_check", in, 2))
        return NULL;
    return WEFT__KEEP(check_node(cx, WEFT__OP_ASSERT, in, 2, message));
}
