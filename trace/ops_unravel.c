/* tf.unravel_index: each flat index's coordinates in an array of dims, a
 * composition: a range check (weft_check, so an index out of range fails
 * the call as TensorFlow's kernel does), then (index // stride) % dim for
 * each dim, stacked in front. */
#include <stdio.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* "[2,3,4]" into buf (cut with "..." when long). */
static const char *dims_text(const int64_t *dims, size_t n, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (at + 2 > size)
        snprintf(buf + size - 5, 5, "...]");
    else
        snprintf(buf + at, size - at, "]");
    return buf;
}

/* The product of dims[0..n), or -1 above INT64_MAX; fails on a dim < 1. */
static bool dims_ok(weft_ctx *cx, const char *fn, const int64_t *dims, size_t n, int64_t *total)
{
    if (n == 0 || !dims) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn, n == 0 ? "no dims (n is 0)" : "dims is NULL");
        return false;
    }
    *total = 1;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 1) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: dims[%zu] is %lld, not positive", fn, i,
                           (long long)dims[i]);
            return false;
        }
        if (*total >= 0 && __builtin_mul_overflow(*total, dims[i], total))
            *total = -1;
    }
    return true;
}

weft_value *weft_unravel_index(weft_ctx *cx, weft_value *indices, const int64_t *dims, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_unravel_index";
    if (!weft__op_enter(cx, fn, &indices, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(indices);
    if (s->dtype != WEFT_I32 && s->dtype != WEFT_I64) {
        char str[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices %s are not i32 or i64", fn,
                              weft__spec_str(s, str, sizeof str));
    }
    int64_t total;
    if (!dims_ok(cx, fn, dims, n, &total))
        return NULL;
    if (n > 64)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu dims, more than 64", fn, n);
    /* An index of the dtype cannot reach a bound past its range. */
    int64_t limit = s->dtype == WEFT_I32 ? INT32_MAX : INT64_MAX;
    weft_value *in_range = weft_ge(cx, indices, weft_const_i64(cx, 0));
    if (total >= 0 && total <= limit)
        in_range = weft_logical_and(cx, in_range, weft_lt(cx, indices, weft_const_i64(cx, total)));
    char text[48], message[WEFT__CHECK_MESSAGE_MAX];
    snprintf(message, sizeof message, "%s: an index is out of range for dims %s", fn,
             dims_text(dims, n, text, sizeof text));
    weft_value *checked = weft_check(cx, indices, in_range, message);
    weft_value *coords[64];
    int64_t stride = 1;
    bool past = false;   /* stride beyond any index of the dtype */
    for (size_t k = n; k-- > 0;) {
        if (past) {
            coords[k] = weft_zeros_like(cx, checked);
        } else {
            coords[k] = weft_floordiv(cx, checked, weft_const_i64(cx, stride));
            /* A dim past the dtype's range bounds nothing. */
            if (dims[k] <= limit)
                coords[k] = weft_mod(cx, coords[k], weft_const_i64(cx, dims[k]));
        }
        past = past || __builtin_mul_overflow(stride, dims[k], &stride) || stride > limit;
    }
    return WEFT__KEEP(weft_stack(cx, coords, n, 0));
}
