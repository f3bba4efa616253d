/* NumPy's lexsort: stable argsorts, the least significant key first,
 * each later key ordering the order found so far, so equal keys keep the
 * earlier keys' order (NaN last, weft_sort's order). */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

weft_value *weft_lexsort(weft_ctx *cx, weft_value *const *keys, size_t n, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_lexsort";
    if (!keys || n < 1) {
        if (cx)
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu keys (1 or more)", fn, n);
        return NULL;
    }
    if (!weft__op_enter(cx, fn, keys, n) || !weft__ops_axis_in(cx, fn, "keys[0]", keys[0], &axis))
        return NULL;
    for (size_t k = 1; k < n; k++) {
        if (weft__value_spec(keys[k])->rank != weft__value_spec(keys[0])->rank) {
            char s0[WEFT__SPEC_STR_MAX], sk[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: keys[%zu] %s and keys[0] %s differ in "
                                  "rank", fn, k,
                                  weft__spec_str(weft__value_spec(keys[k]), sk, sizeof sk),
                                  weft__spec_str(weft__value_spec(keys[0]), s0, sizeof s0));
        }
    }
    weft_value *order = weft_argsort(cx, keys[0], axis, false);
    for (size_t k = 1; k < n; k++) {
        weft_value *by = weft_take_along_axis(cx, keys[k], order, axis);
        order = weft_take_along_axis(cx, order, weft_argsort(cx, by, axis, false), axis);
    }
    return WEFT__KEEP(order);
}
