/* tf.tensordot as the einsum it is: a's axes and b's are given labels,
 * the contracted pairs sharing theirs, and weft_einsum turns the equation
 * into one matrix product (the free dims grouped on each side).  The
 * checks come first, so that a bad call names weft_tensordot. */
#include <stdio.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const char fn[] = "weft_tensordot";

/* The axis ax of a rank-r operand (negative counts from the end), or -1
 * after failing the context. */
static int axis_of(weft_ctx *cx, int ax, int rank, const char *side, size_t k)
{
    int a = ax < 0 ? ax + rank : ax;
    if (a < 0 || a >= rank) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s axis %zu is %d, not in %d..%d", fn, side, k, ax,
                       -rank, rank - 1);
        return -1;
    }
    return a;
}

weft_value *weft_tensordot_ex(weft_ctx *cx, weft_value *a, weft_value *b, const int *a_axes,
                              const int *b_axes, size_t n)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *sa = weft__value_spec(a), *sb = weft__value_spec(b);
    if (sa->rank < 0 || sb->rank < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the operands' ranks must be known while tracing",
                              fn);
    if (n > (size_t)sa->rank || n > (size_t)sb->rank || (n && (!a_axes || !b_axes)))
        return weft__ctx_fail(cx, WEFT_EINVAL,
                              "%s: %zu axis pairs for operands of rank %d and %d%s", fn, n,
                              sa->rank, sb->rank, n && (!a_axes || !b_axes) ? " (NULL axes)" : "");
    /* Labels: a's dims take 'a'.., b's the next ones, except that b's
     * contracted dims take the label of their partner in a. */
    char la[WEFT_MAX_RANK], lb[WEFT_MAX_RANK];
    bool a_used[WEFT_MAX_RANK] = { false }, b_used[WEFT_MAX_RANK] = { false };
    for (int d = 0; d < sa->rank; d++)
        la[d] = (char)('a' + d);
    for (int d = 0; d < sb->rank; d++)
        lb[d] = (char)('a' + sa->rank + d);
    for (size_t k = 0; k < n; k++) {
        int x = axis_of(cx, a_axes[k], sa->rank, "a", k);
        int y = x < 0 ? -1 : axis_of(cx, b_axes[k], sb->rank, "b", k);
        if (y < 0)
            return NULL;
        if (a_used[x] || b_used[y])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s axis %d is contracted twice", fn,
                                  a_used[x] ? "a" : "b", a_used[x] ? a_axes[k] : b_axes[k]);
        int64_t dx = sa->dims[x], dy = sb->dims[y];
        if (dx >= 0 && dy >= 0 && dx != dy)
            return weft__ctx_fail(cx, WEFT_ESHAPE,
                                  "%s: a's dim %d (%lld) and b's dim %d (%lld) are contracted but "
                                  "differ", fn, x, (long long)dx, y, (long long)dy);
        a_used[x] = b_used[y] = true;
        lb[y] = la[x];
    }
    /* "<a's labels>,<b's labels>-><a's free><b's free>" */
    char eq[3 * WEFT_MAX_RANK + 8];
    int len = 0;
    for (int d = 0; d < sa->rank; d++)
        eq[len++] = la[d];
    eq[len++] = ',';
    for (int d = 0; d < sb->rank; d++)
        eq[len++] = lb[d];
    eq[len++] = '-';
    eq[len++] = '>';
    for (int d = 0; d < sa->rank; d++)
        if (!a_used[d])
            eq[len++] = la[d];
    for (int d = 0; d < sb->rank; d++)
        if (!b_used[d])
            eq[len++] = lb[d];
    eq[len] = '\0';
    return WEFT__KEEP(weft_einsum(cx, eq, in, 2));
}

weft_value *weft_tensordot(weft_ctx *cx, weft_value *a, weft_value *b, int axes)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    int ra = weft__value_spec(a)->rank, rb = weft__value_spec(b)->rank;
    if (ra < 0 || rb < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the operands' ranks must be known while tracing",
                              fn);
    if (axes < 0 || axes > ra || axes > rb)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axes is %d, not in 0..%d", fn, axes,
                              ra < rb ? ra : rb);
    /* a's last `axes` dims against b's first, in order. */
    int a_axes[WEFT_MAX_RANK], b_axes[WEFT_MAX_RANK];
    for (int k = 0; k < axes; k++) {
        a_axes[k] = ra - axes + k;
        b_axes[k] = k;
    }
    return WEFT__KEEP(weft_tensordot_ex(cx, a, b, a_axes, b_axes, (size_t)axes));
}
