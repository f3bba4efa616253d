/* Two helpers of a training step, as compositions:
 * tf.nn.embedding_lookup with its max_norm (a gather, then each looked-up
 * embedding clipped to that l2 norm) and tf.nn.compute_average_loss (the
 * weighted per-example losses summed and divided by the global batch
 * size).  Each checks its inputs first, so that an error names it. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

static weft_value *fail_spec(weft_ctx *cx, int code, const char *fn, const char *what,
                             const weft_value *v, const char *why)
{
    char s[WEFT__SPEC_STR_MAX];
    return weft__ctx_fail(cx, code, "%s: %s %s %s", fn, what,
                          weft__spec_str(spec_of(v), s, sizeof s), why);
}

weft_value *weft_embedding_lookup(weft_ctx *cx, weft_value *params, weft_value *ids,
                                  double max_norm)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_embedding_lookup";
    weft_value *in[2] = { params, ids };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (!(max_norm >= 0) || isinf(max_norm))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_norm %g is not finite and >= 0 (0: no "
                              "clipping)", fn, max_norm);
    int ids_rank = spec_of(ids)->rank, params_rank = spec_of(params)->rank;
    if (max_norm > 0 && !weft__dtype_is_float(spec_of(params)->dtype))
        return fail_spec(cx, WEFT_EDTYPE, fn, "params", params,
                         "are not f32 or f64, which max_norm needs");
    if (max_norm > 0 && (ids_rank == WEFT_RANK_ANY || params_rank == WEFT_RANK_ANY))
        return fail_spec(cx, WEFT_EINVAL, fn, "ids", ids,
                         "need a rank known while tracing with max_norm");
    weft_value *rows = weft_gather(cx, params, ids, 0);
    if (max_norm == 0 || !rows)
        return WEFT__KEEP(rows);
    /* Each embedding is the dims after the ids' own; a scalar one is
     * clipped as a vector of one, which is TensorFlow's norm over no axes
     * (sqrt(x * x)). */
    int rank = spec_of(rows)->rank;
    bool scalar = rank == ids_rank;
    if (scalar)
        rows = weft_expand_dims(cx, rows, -1);
    int axes[WEFT_MAX_RANK];
    size_t n_axes = 0;
    for (int d = ids_rank; d < (scalar ? rank + 1 : rank); d++)
        axes[n_axes++] = d;
    weft_value *clipped = weft_clip_by_norm(cx, rows, max_norm, axes, n_axes);
    return WEFT__KEEP(scalar ? weft_squeeze(cx, clipped, -1) : clipped);
}

/* The weights as TensorFlow's scale_losses_by_sample_weight takes them:
 * one rank below the losses gains a last dim of 1 (a weight per example
 * of a [batch, d] loss), then they broadcast. */
static weft_value *weighted(weft_ctx *cx, weft_value *losses, weft_value *weights)
{
    int lr = spec_of(losses)->rank, wr = spec_of(weights)->rank;
    if (wr != WEFT_RANK_ANY && wr == lr - 1 && wr > 0)
        weights = weft_expand_dims(cx, weights, -1);
    return weft_mul(cx, losses, weft_cast(cx, weights, spec_of(losses)->dtype));
}

weft_value *weft_compute_average_loss(weft_ctx *cx, weft_value *per_example_loss,
                                      weft_value *sample_weight, int64_t global_batch_size)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_compute_average_loss";
    weft_value *in[2] = { per_example_loss, sample_weight };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    const weft_spec *s = spec_of(per_example_loss);
    if (!weft__dtype_is_float(s->dtype))
        return fail_spec(cx, WEFT_EDTYPE, fn, "per_example_loss", per_example_loss,
                         "is not f32 or f64");
    if (s->rank == 0 || s->rank == WEFT_RANK_ANY)
        return fail_spec(cx, WEFT_ESHAPE, fn, "per_example_loss", per_example_loss,
                         "must have a batch dim (rank 1 or more, known while tracing)");
    if (sample_weight && spec_of(sample_weight)->dtype == WEFT_BOOL)
        return fail_spec(cx, WEFT_EDTYPE, fn, "sample_weight", sample_weight, "is bool");
    if (global_batch_size < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: global_batch_size %lld is negative (0: the "
                              "losses' dim 0)", fn, (long long)global_batch_size);
    weft_value *losses = sample_weight ? weighted(cx, per_example_loss, sample_weight)
                                       : per_example_loss;
    if (losses && !weft__spec_equal(spec_of(losses), s))
        return fail_spec(cx, WEFT_ESHAPE, fn, "sample_weight", sample_weight,
                         "does not broadcast to the losses' shape");
    weft_value *total = weft_sum(cx, losses, WEFT_ALL_AXES);
    /* Without a global batch size, dim 0 as the function runs: one
     * replica's batch. */
    weft_value *batch = global_batch_size > 0
                            ? weft_const(cx, s->dtype, (double)global_batch_size)
                            : weft_cast(cx, weft__ops_dim0(cx, per_example_loss), s->dtype);
    return WEFT__KEEP(weft_div(cx, total, batch));
}
