/* tf.space_to_batch_nd and tf.batch_to_space_nd: TensorFlow's own
 * definitions, a pad, a reshape that splits each spatial dim into
 * (dim / block, block), a transpose that brings the block offsets before
 * the batch, and a reshape that joins them into it (and back, then a
 * crop).  Errors name the public op. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* The checks both ops share: m spatial dims after the batch, each block
 * >= 1, each pad or crop >= 0, and the dims after the batch known while
 * tracing (the batch too when batch_known). */
static bool blocks_ok(weft_ctx *cx, const char *fn, const weft_spec *s, int m,
                      const int64_t *block, const int64_t (*pads)[2], const char *pads_name,
                      bool batch_known)
{
    char ss[WEFT__SPEC_STR_MAX];
    if (!block || !pads) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: block_shape or %s is NULL", fn, pads_name);
        return false;
    }
    bool ranked = s->rank != WEFT_RANK_ANY && m >= 1 && 1 + m <= s->rank &&
                  s->rank + m <= WEFT_MAX_RANK;
    for (int d = batch_known ? 0 : 1; ranked && d < s->rank; d++)
        ranked = s->dims[d] >= 0;
    if (!ranked) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s does not have a batch and %d spatial dims (m "
                       ">= 1, rank + m <= %d) with every dim %sknown while tracing", fn,
                       weft__spec_str(s, ss, sizeof ss), m, WEFT_MAX_RANK,
                       batch_known ? "" : "but the batch ");
        return false;
    }
    for (int i = 0; i < m; i++) {
        if (block[i] < 1 || block[i] > INT32_MAX) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: block_shape[%d] = %lld is not in 1..INT32_MAX",
                           fn, i, (long long)block[i]);
            return false;
        }
        if (pads[i][0] < 0 || pads[i][1] < 0 || pads[i][0] > INT32_MAX ||
            pads[i][1] > INT32_MAX) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s[%d] = {%lld, %lld} is not in 0..INT32_MAX",
                           fn, pads_name, i, (long long)pads[i][0], (long long)pads[i][1]);
            return false;
        }
    }
    return true;
}

weft_value *weft_space_to_batch_nd(weft_ctx *cx, weft_value *input, int m,
                                   const int64_t *block_shape, const int64_t (*paddings)[2])
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_space_to_batch_nd";
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(input);
    if (!blocks_ok(cx, fn, s, m, block_shape, paddings, "paddings", false))
        return NULL;
    int r = s->rank;
    int64_t padded[WEFT_MAX_RANK];
    for (int i = 0; i < m; i++) {
        padded[i] = s->dims[1 + i] + paddings[i][0] + paddings[i][1];
        if (padded[i] % block_shape[i]) {
            char ss[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dim %d of %s padded by {%lld, %lld} is "
                                  "%lld, not a multiple of block_shape[%d] = %lld", fn, 1 + i,
                                  weft__spec_str(s, ss, sizeof ss), (long long)paddings[i][0],
                                  (long long)paddings[i][1], (long long)padded[i], i,
                                  (long long)block_shape[i]);
        }
    }
    int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } };
    for (int i = 0; i < m; i++) {
        pads[1 + i][0] = paddings[i][0];
        pads[1 + i][1] = paddings[i][1];
    }
    weft_value *x = weft_pad(cx, input, (const int64_t(*)[2])pads, 0.0);
    /* [b, p0 / s0, s0, ..., rest...] with the offsets s_i moved first:
     * [s0, ..., b, p0 / s0, ..., rest...]. */
    int64_t split[WEFT_MAX_RANK], joined[WEFT_MAX_RANK];
    int perm[WEFT_MAX_RANK], n = 0;
    split[0] = -1;
    for (int i = 0; i < m; i++) {
        split[1 + 2 * i] = padded[i] / block_shape[i];
        split[2 + 2 * i] = block_shape[i];
        perm[n++] = 2 + 2 * i;
    }
    perm[n++] = 0;
    joined[0] = -1;
    for (int i = 0; i < m; i++) {
        perm[n++] = 1 + 2 * i;
        joined[1 + i] = padded[i] / block_shape[i];
    }
    for (int d = 1 + m; d < r; d++) {
        split[d + m] = s->dims[d];
        perm[n++] = d + m;
        joined[d] = s->dims[d];
    }
    x = weft_transpose(cx, weft_reshape(cx, x, r + m, split), perm);
    return WEFT__KEEP(weft_reshape(cx, x, r, joined));
}

weft_value *weft_batch_to_space_nd(weft_ctx *cx, weft_value *input, int m,
                                   const int64_t *block_shape, const int64_t (*crops)[2])
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_batch_to_space_nd";
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(input);
    if (!blocks_ok(cx, fn, s, m, block_shape, crops, "crops", true))
        return NULL;
    int r = s->rank;
    int64_t blocks = 1;
    for (int i = 0; i < m; i++)
        blocks *= block_shape[i];
    char ss[WEFT__SPEC_STR_MAX];
    if (s->dims[0] % blocks)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the batch of %s is not a multiple of the "
                              "block's %lld elements", fn, weft__spec_str(s, ss, sizeof ss),
                              (long long)blocks);
    for (int i = 0; i < m; i++)
        if (crops[i][0] + crops[i][1] > s->dims[1 + i] * block_shape[i])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: crops[%d] = {%lld, %lld} remove more "
                                  "than the %lld elements of dim %d", fn, i,
                                  (long long)crops[i][0], (long long)crops[i][1],
                                  (long long)(s->dims[1 + i] * block_shape[i]), 1 + i);
    /* [s0, ..., b / blocks, d0, ..., rest...] to [b / blocks, d0, s0, ...,
     * rest...], then joined. */
    int64_t split[WEFT_MAX_RANK], joined[WEFT_MAX_RANK];
    int perm[WEFT_MAX_RANK], n = 0;
    for (int i = 0; i < m; i++)
        split[i] = block_shape[i];
    split[m] = s->dims[0] / blocks;
    perm[n++] = m;
    joined[0] = s->dims[0] / blocks;
    for (int i = 0; i < m; i++) {
        split[m + 1 + i] = s->dims[1 + i];
        perm[n++] = m + 1 + i;
        perm[n++] = i;
        joined[1 + i] = s->dims[1 + i] * block_shape[i];
    }
    for (int d = 1 + m; d < r; d++) {
        split[d + m] = s->dims[d];
        perm[n++] = d + m;
        joined[d] = s->dims[d];
    }
    weft_value *x = weft_transpose(cx, weft_reshape(cx, input, r + m, split), perm);
    x = weft_reshape(cx, x, r, joined);
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
    bool cropped = false;
    for (int d = 0; d < r; d++)
        end[d] = WEFT_END;
    for (int i = 0; i < m; i++) {
        begin[1 + i] = crops[i][0];
        end[1 + i] = joined[1 + i] - crops[i][1];
        cropped = cropped || crops[i][0] || crops[i][1];
    }
    return WEFT__KEEP(cropped ? weft_slice(cx, x, begin, end, NULL) : x);
}
