/* tf.sparse.segment_sum, segment_mean and segment_sqrt_n: the rows of
 * data that indices pick, reduced by sorted segment ids.  Compositions of
 * weft_gather and the segment reductions (ops_index.c), eager and traced
 * alike, with their gradients. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* Whether v is a vector of integers; otherwise the context fails naming
 * fn and name. */
static bool int_vector(weft_ctx *cx, const char *fn, const char *name, weft_value *v)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->rank == 1 && (s->dtype == WEFT_I32 || s->dtype == WEFT_I64))
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, s->rank == 1 ? WEFT_EDTYPE : WEFT_ESHAPE,
                   "%s: %s %s is not a vector of i32 or i64", fn, name,
                   weft__spec_str(s, ss, sizeof ss));
    return false;
}

/* The operands as TensorFlow's kernel wants them: data of rank 1 or more
 * (known while tracing), indices and segment_ids integer vectors of one
 * length (checked when the call runs where unknown).  Returns segment_ids,
 * checked, or NULL with the context failing naming fn. */
static weft_value *operands(weft_ctx *cx, const char *fn, weft_value *data, weft_value *indices,
                            weft_value *segment_ids, int64_t num_segments)
{
    weft_value *in[3] = { data, indices, segment_ids };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    const weft_spec *sd = weft__value_spec(data);
    char ss[WEFT__SPEC_STR_MAX];
    if (sd->rank == WEFT_RANK_ANY || sd->rank < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: data %s is not of rank 1 or more (known "
                              "while tracing)", fn, weft__spec_str(sd, ss, sizeof ss));
    if (!int_vector(cx, fn, "indices", indices) || !int_vector(cx, fn, "segment_ids", segment_ids))
        return NULL;
    if (num_segments < -1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: num_segments %lld is not -1 (none) or >= 0",
                              fn, (long long)num_segments);
    int64_t ni = weft__value_spec(indices)->dims[0], ns = weft__value_spec(segment_ids)->dims[0];
    static const char lengths[] = "segment_ids and indices are not of one length";
    if (ni >= 0 && ns >= 0 && ni != ns)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s (%lld and %lld)", fn, lengths,
                              (long long)ns, (long long)ni);
    weft_value *ids = segment_ids;
    if (ni < 0 || ns < 0)
        ids = weft__ops_checkf(cx, ids, weft_eq(cx, weft__ops_dim0(cx, ids),
                                                weft__ops_dim0(cx, indices)),
                               "%s: %s", fn, lengths);
    if (num_segments < 0)   /* weft_segment checks the order itself. */
        return ids;
    /* weft_unsorted_segment drops negative ids and takes any order. */
    ids = weft__ops_checkf(cx, ids, weft_ge(cx, ids, weft_const_i64(cx, 0)),
                           "%s: a segment id is negative", fn);
    return weft__ops_checkf(cx, ids, weft_is_non_decreasing(cx, ids),
                            "%s: segment_ids are not sorted", fn);
}

/* The segment reduction r of rows by ids: one row per id up to the last
 * (num_segments -1) or num_segments rows. */
static weft_value *reduce_rows(weft_ctx *cx, weft_reduction r, weft_value *rows, weft_value *ids,
                               int64_t num_segments)
{
    if (num_segments < 0)
        return weft_segment(cx, r, rows, ids);
    return weft_unsorted_segment(cx, r, rows, ids, num_segments);
}

weft_value *weft_sparse_segment(weft_ctx *cx, weft_reduction r, weft_value *data,
                                weft_value *indices, weft_value *segment_ids,
                                int64_t num_segments)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_sparse_segment";
    weft_value *ids = operands(cx, fn, data, indices, segment_ids, num_segments);
    if (!ids)
        return NULL;
    if (r != WEFT_R_SUM && r != WEFT_R_MEAN)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: reduction %d is not WEFT_R_SUM or "
                              "WEFT_R_MEAN", fn, (int)r);
    weft_value *rows = weft_gather(cx, data, indices, 0);
    return WEFT__KEEP(reduce_rows(cx, r, rows, ids, num_segments));
}

weft_value *weft_sparse_segment_sqrt_n(weft_ctx *cx, weft_value *data, weft_value *indices,
                                       weft_value *segment_ids, int64_t num_segments)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_sparse_segment_sqrt_n";
    weft_value *ids = operands(cx, fn, data, indices, segment_ids, num_segments);
    if (!ids)
        return NULL;
    const weft_spec *sd = weft__value_spec(data);
    if (sd->dtype != WEFT_F32 && sd->dtype != WEFT_F64) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: data %s is not f32 or f64", fn,
                              weft__spec_str(sd, ss, sizeof ss));
    }
    weft_value *rows = weft_gather(cx, data, indices, 0);
    weft_value *ones = weft_cast(cx, weft_fill_like(cx, ids, 1.0), sd->dtype);
    weft_value *sums = reduce_rows(cx, WEFT_R_SUM, rows, ids, num_segments);
    weft_value *counts = reduce_rows(cx, WEFT_R_SUM, ones, ids, num_segments);
    return WEFT__KEEP(weft__ops_over_sqrt_counts(cx, sums, counts, sd->rank));
}
