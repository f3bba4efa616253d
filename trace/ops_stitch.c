/* tf.dynamic_stitch(indices, data): the inverse of dynamic_partition, a
 * composition: every index list and data slice flattened and joined, a
 * check that no index is negative, zero rows up to the largest index
 * (its size known only when the function runs), then one scatter_nd_update,
 * whose later tuples win as TensorFlow's later slices do. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* Whether part m's indices are integers of a known rank and its data's
 * rank and inner dims (past the indices' rank) are known and equal to
 * the first part's (inner[], *inner_rank from part 0). */
static bool part_ok(weft_ctx *cx, const char *fn, size_t m, const weft_spec *si,
                    const weft_spec *sd, int64_t *inner, int *inner_rank, weft_dtype *dt)
{
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (si->dtype != WEFT_I32 && si->dtype != WEFT_I64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices[%zu] %s are not i32 or i64", fn, m,
                       weft__spec_str(si, s1, sizeof s1));
        return false;
    }
    if (m > 0 && sd->dtype != *dt) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: data[%zu] %s is not of data[0]'s dtype %s", fn, m,
                       weft__spec_str(sd, s1, sizeof s1), weft_dtype_name(*dt));
        return false;
    }
    bool ok = si->rank != WEFT_RANK_ANY && sd->rank != WEFT_RANK_ANY && sd->rank >= si->rank &&
              (m == 0 || sd->rank - si->rank == *inner_rank);
    for (int d = si->rank; ok && d < sd->rank; d++)
        ok = sd->dims[d] != WEFT_DIM_ANY && (m == 0 || sd->dims[d] == inner[d - si->rank]);
    if (!ok) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: data[%zu] %s is not indices[%zu]'s shape %s then "
                       "the inner dims of data[0] (ranks and inner dims known while tracing)",
                       fn, m, weft__spec_str(sd, s1, sizeof s1), m,
                       weft__spec_str(si, s2, sizeof s2));
        return false;
    }
    if (m == 0) {
        *dt = sd->dtype;
        *inner_rank = sd->rank - si->rank;
        for (int d = si->rank; d < sd->rank; d++)
            inner[d - si->rank] = sd->dims[d];
    }
    return true;
}

weft_value *weft_dynamic_stitch(weft_ctx *cx, weft_value *const *indices,
                                weft_value *const *data, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_dynamic_stitch";
    if (!weft__op_enter(cx, fn, NULL, 0))
        return NULL;
    if (n == 0 || !indices || !data)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn,
                              n == 0 ? "no parts (n is 0)" : "indices or data is NULL");
    for (size_t m = 0; m < n; m++) {
        if (!indices[m] || !data[m])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: indices[%zu] or data[%zu] is NULL", fn, m,
                                  m);
        if (!weft__op_enter(cx, fn, &indices[m], 1) || !weft__op_enter(cx, fn, &data[m], 1))
            return NULL;
    }
    int64_t inner[WEFT_MAX_RANK];
    int inner_rank = 0;
    weft_dtype dt = WEFT_F32;
    for (size_t m = 0; m < n; m++)
        if (!part_ok(cx, fn, m, spec_of(indices[m]), spec_of(data[m]), inner, &inner_rank, &dt))
            return NULL;
    if (inner_rank + 1 > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: data's inner dims and a row dim pass rank %d",
                              fn, WEFT_MAX_RANK);
    weft_value **flat_idx = weft__malloc(2 * n * sizeof *flat_idx), **flat_data = flat_idx + n;
    if (!flat_idx)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    int64_t rows[WEFT_MAX_RANK];
    rows[0] = -1;
    for (int d = 0; d < inner_rank; d++)
        rows[1 + d] = inner[d];
    for (size_t m = 0; m < n; m++) {
        flat_idx[m] = weft_reshape(cx, weft_cast(cx, indices[m], WEFT_I64), 1, (int64_t[]){ -1 });
        flat_data[m] = weft_reshape(cx, data[m], 1 + inner_rank, rows);
    }
    weft_value *idx = n == 1 ? flat_idx[0] : weft_concat(cx, flat_idx, n, 0);
    weft_value *values = n == 1 ? flat_data[0] : weft_concat(cx, flat_data, n, 0);
    weft__free(flat_idx);
    idx = weft_check(cx, idx, weft_ge(cx, idx, weft_const_i64(cx, 0)),
                     "weft_dynamic_stitch: an index is negative");
    /* Rows 0..max: the largest index + 1 (INT64_MIN + 1 when there are
     * none, which weft_range_to takes as 0). */
    weft_value *size = weft_add(cx, weft_reduce_max(cx, idx, WEFT_ALL_AXES),
                                weft_const_i64(cx, 1));
    weft_value *zero_rows = weft_mul(cx, weft_range_to(cx, size), weft_const_i64(cx, 0));
    int64_t one_row[WEFT_MAX_RANK];
    one_row[0] = 1;
    for (int d = 0; d < inner_rank; d++)
        one_row[1 + d] = inner[d];
    weft_value *zeros = weft_gather(cx, weft_fill(cx, dt, 1 + inner_rank, one_row, 0), zero_rows,
                                    0);
    return WEFT__KEEP(weft_scatter_nd_update(cx, zeros, weft_expand_dims(cx, idx, -1), values));
}
