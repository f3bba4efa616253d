/* The indexing ops of include/weft/ops.h: unsorted_segment, gather_nd
 * (gather_nd_ex with batch_dims, a composition around it),
 * scatter_nd_update, scatter_nd_add, _sub, _max, _min, roll (with fftshift
 * and ifftshift, its half-rolls) and repeat.  Each is a node of
 * its own (kernel_index.c); the entry points check what only the call can
 * check and leave shapes and dtypes to inference (infer_shape.c), which
 * checks the node again on concrete inputs when dims were unknown. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* Infers n on the specs of in[0..n_in), input `cast_at` (or none: -1)
 * taken as dtype `to`; then casts that input and records or computes n.
 * Inferring first leaves no stray cast behind a refused call. */
static weft_value *finish(weft_ctx *cx, weft__node *n, weft_value **in, uint32_t n_in,
                          int cast_at, weft_dtype to)
{
    weft_spec specs[3];
    for (uint32_t i = 0; i < n_in; i++)
        specs[i] = *weft__value_spec(in[i]);
    if (cast_at >= 0)
        specs[cast_at].dtype = to;
    n->n_in = n_in;
    n->in = n->inline_in;
    int rc = weft__infer_spec(n, specs, &n->spec);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    if (cast_at >= 0 && !(in[cast_at] = weft_cast(cx, in[cast_at], to)))
        return NULL;
    return weft__ops_emit(cx, n, in, n_in);
}

static bool is_int(weft_dtype dt)
{
    return dt == WEFT_I32 || dt == WEFT_I64;
}

weft_value *weft_unsorted_segment(weft_ctx *cx, weft_reduction r, weft_value *data,
                                  weft_value *segment_ids, int64_t num_segments)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { data, segment_ids };
    if (!weft__op_enter(cx, "weft_unsorted_segment", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_UNSORTED_SEGMENT, .attr.index.kind = (int)r,
                     .attr.index.count = num_segments };
    /* An integer mean computes in f64, as weft_reduce's does. */
    bool widen = r == WEFT_R_MEAN && is_int(weft__value_spec(data)->dtype);
    return WEFT__KEEP(finish(cx, &n, in, 2, widen ? 0 : -1, WEFT_F64));
}

weft_value *weft_unsorted_segment_sqrt_n(weft_ctx *cx, weft_value *data, weft_value *segment_ids,
                                         int64_t num_segments)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_unsorted_segment_sqrt_n";
    weft_value *in[2] = { data, segment_ids };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *sd = weft__value_spec(data), *si = weft__value_spec(segment_ids);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (sd->dtype != WEFT_F32 && sd->dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: data %s is not f32 or f64", fn,
                              weft__spec_str(sd, s1, sizeof s1));
    if (sd->rank == WEFT_RANK_ANY || si->rank == WEFT_RANK_ANY || si->rank > sd->rank)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: segment_ids %s do not lead data %s (ranks "
                              "known while tracing)", fn, weft__spec_str(si, s1, sizeof s1),
                              weft__spec_str(sd, s2, sizeof s2));
    /* The sums over the square root of each segment's row count (a
     * segment without rows: 0 / 1). */
    weft_value *sums = weft_unsorted_segment(cx, WEFT_R_SUM, data, segment_ids, num_segments);
    weft_value *ones = weft_cast(cx, weft_fill_like(cx, segment_ids, 1.0), sd->dtype);
    weft_value *counts = weft_unsorted_segment(cx, WEFT_R_SUM, ones, segment_ids, num_segments);
    return WEFT__KEEP(weft__ops_over_sqrt_counts(cx, sums, counts, 1 + sd->rank - si->rank));
}

weft_value *weft__ops_over_sqrt_counts(weft_ctx *cx, weft_value *sums, weft_value *counts,
                                       int rank)
{
    int64_t dims[WEFT_MAX_RANK] = { -1 };
    for (int d = 1; d < rank; d++)
        dims[d] = 1;
    counts = weft_reshape(cx, weft_maximum(cx, counts, weft_const_f64(cx, 1.0)), rank, dims);
    return weft_truediv(cx, sums, weft_sqrt(cx, counts));
}

weft_value *weft_segment(weft_ctx *cx, weft_reduction r, weft_value *data,
                         weft_value *segment_ids)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { data, segment_ids };
    if (!weft__op_enter(cx, "weft_segment", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_SEGMENT, .attr.index.kind = (int)r };
    bool widen = r == WEFT_R_MEAN && is_int(weft__value_spec(data)->dtype);
    return WEFT__KEEP(finish(cx, &n, in, 2, widen ? 0 : -1, WEFT_F64));
}

weft_value *weft_gather_nd(weft_ctx *cx, weft_value *params, weft_value *indices)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { params, indices };
    if (!weft__op_enter(cx, "weft_gather_nd", in, 2))
        return NULL;
    weft__node n = { .op = WEFT__OP_GATHER_ND };
    return WEFT__KEEP(finish(cx, &n, in, 2, -1, WEFT_F64));
}

/* tf.gather_nd with batch_dims b: the batch coordinates (an index along
 * each of the first b dims, broadcast over indices' other dims) joined in
 * front of each index tuple, then gather_nd with batch_dims 0. */
weft_value *weft_gather_nd_ex(weft_ctx *cx, weft_value *params, weft_value *indices,
                              int batch_dims)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_gather_nd_ex";
    weft_value *in[2] = { params, indices };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (batch_dims == 0)
        return WEFT__KEEP(weft_gather_nd(cx, params, indices));
    const weft_spec *ps = weft__value_spec(params), *is = weft__value_spec(indices);
    char sp[WEFT__SPEC_STR_MAX], si[WEFT__SPEC_STR_MAX];
    weft__spec_str(ps, sp, sizeof sp);
    weft__spec_str(is, si, sizeof si);
    if (!is_int(is->dtype))
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices %s are not i32 or i64", fn, si);
    if (ps->rank == WEFT_RANK_ANY || is->rank == WEFT_RANK_ANY)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: batch_dims %d needs the ranks of params "
                              "%s and indices %s known while tracing", fn, batch_dims, sp, si);
    if (batch_dims < 0 || batch_dims >= is->rank || batch_dims > ps->rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: batch_dims %d is not within 0..%d for "
                              "params %s and indices %s", fn, batch_dims,
                              (is->rank - 1 < ps->rank ? is->rank - 1 : ps->rank), sp, si);
    int64_t batch[WEFT_MAX_RANK];
    for (int d = 0; d < batch_dims; d++) {
        int64_t a = ps->dims[d], b = is->dims[d];
        if (a != WEFT_DIM_ANY && b != WEFT_DIM_ANY && a != b)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: params %s and indices %s differ in "
                                  "batch dim %d", fn, sp, si, d);
        batch[d] = a != WEFT_DIM_ANY ? a : b;
        if (batch[d] == WEFT_DIM_ANY)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: batch dim %d of params %s and "
                                  "indices %s is unknown while tracing", fn, d, sp, si);
    }
    weft_value *tuples = weft__ops_batch_tuples(cx, indices, batch, batch_dims);
    return WEFT__KEEP(tuples ? weft_gather_nd(cx, params, tuples) : NULL);
}

weft_value *weft__ops_batch_tuples(weft_ctx *cx, weft_value *indices, const int64_t *batch,
                                   int batch_dims)
{
    if (!indices)
        return NULL;   /* an earlier step failed: the context holds why */
    int rank = weft__value_spec(indices)->rank;
    weft_value *idx = weft_cast(cx, indices, WEFT_I64);
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        end[d] = WEFT_END;
    end[rank - 1] = 1;
    /* zeros [B..., N..., 1]: the shape each batch coordinate takes. */
    weft_value *zeros = weft_zeros_like(cx, weft_slice(cx, idx, begin, end, NULL));
    weft_value *parts[WEFT_MAX_RANK + 1];
    for (int j = 0; j < batch_dims; j++) {
        int64_t dims[WEFT_MAX_RANK];
        for (int d = 0; d < rank; d++)
            dims[d] = d == j ? batch[j] : 1;
        weft_value *r = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, batch[j], 1), rank, dims);
        parts[j] = weft_add(cx, zeros, r);
    }
    parts[batch_dims] = idx;
    if (weft_ctx_status(cx) != 0)
        return NULL;
    return weft_concat(cx, parts, (size_t)batch_dims + 1, -1);
}

static weft_value *scatter_nd(weft_ctx *cx, weft__op op, const char *fn, weft_value *tensor,
                              weft_value *indices, weft_value *updates)
{
    weft_value *in[3] = { tensor, indices, updates };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    weft__node n = { .op = op };
    /* Weak scalar updates take the tensor's dtype, as in arithmetic. */
    weft_dtype dt = weft__value_spec(tensor)->dtype;
    bool cast = weft__value_is_weak(updates) && weft__value_spec(updates)->dtype != dt;
    return finish(cx, &n, in, 3, cast ? 2 : -1, dt);
}

weft_value *weft_scatter_nd_update(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                   weft_value *updates)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scatter_nd(cx, WEFT__OP_SCATTER_ND_UPDATE, "weft_scatter_nd_update", tensor,
                                 indices, updates));
}

weft_value *weft_scatter_nd_add(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                weft_value *updates)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scatter_nd(cx, WEFT__OP_SCATTER_ND_ADD, "weft_scatter_nd_add", tensor,
                                 indices, updates));
}

weft_value *weft_scatter_nd(weft_ctx *cx, weft_value *indices, weft_value *updates, int rank,
                            const int64_t *dims)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_scatter_nd";
    weft_value *in[2] = { indices, updates };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (rank < 0 || rank > WEFT_MAX_RANK || (rank && !dims))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: rank %d with dims %s", fn, rank,
                              dims ? "given" : "NULL");
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dims[%d] is %lld", fn, d,
                                  (long long)dims[d]);
    weft_dtype dt = weft__value_spec(updates)->dtype;
    if (dt == WEFT_BOOL)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the updates are bool, which it sums", fn);
    /* Zeros of the updates' dtype and the given shape, the updates added
     * in (duplicates summed, as TensorFlow's scatter_nd). */
    weft_value *zeros = weft_fill(cx, dt, rank, dims, 0.0);
    return WEFT__KEEP(scatter_nd(cx, WEFT__OP_SCATTER_ND_ADD, fn, zeros, indices, updates));
}

weft_value *weft_scatter_nd_sub(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                weft_value *updates)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scatter_nd(cx, WEFT__OP_SCATTER_ND_SUB, "weft_scatter_nd_sub", tensor,
                                 indices, updates));
}

weft_value *weft_scatter_nd_max(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                weft_value *updates)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scatter_nd(cx, WEFT__OP_SCATTER_ND_MAX, "weft_scatter_nd_max", tensor,
                                 indices, updates));
}

weft_value *weft_scatter_nd_min(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                weft_value *updates)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scatter_nd(cx, WEFT__OP_SCATTER_ND_MIN, "weft_scatter_nd_min", tensor,
                                 indices, updates));
}

weft_value *weft_roll(weft_ctx *cx, weft_value *a, int64_t shift, int axis)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_roll", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_ROLL, .attr.index.axis = axis, .attr.index.count = shift };
    return WEFT__KEEP(finish(cx, &n, &a, 1, -1, WEFT_F64));
}

weft_value *weft_roll_axes(weft_ctx *cx, weft_value *a, const int64_t *shifts, const int *axes,
                           size_t n)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_roll_axes";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (n == 0 || !shifts || !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn,
                              n == 0 ? "no axis to roll (n is 0)" : "shifts or axes is NULL");
    const weft_spec *s = weft__value_spec(a);
    for (size_t i = 0; s->rank != WEFT_RANK_ANY && i < n; i++) {
        if (axes[i] < -s->rank || axes[i] >= s->rank) {
            char str[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d (entry %zu) is out of range for %s",
                                  fn, axes[i], i, weft__spec_str(s, str, sizeof str));
        }
    }
    for (size_t i = 0; a && i < n; i++)
        a = weft_roll(cx, a, shifts[i], axes[i]);
    return WEFT__KEEP(a);
}

/* fftshift (kind 1) and ifftshift (kind 2): one half-roll per axis
 * named, or per axis of a (n 0). */
static weft_value *half_rolls(weft_ctx *cx, const char *fn, int kind, weft_value *a,
                              const int *axes, size_t n)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(a);
    char str[WEFT__SPEC_STR_MAX];
    if (n > 0 && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axes is NULL with n %zu", fn, n);
    if (n == 0 && s->rank == WEFT_RANK_ANY)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: every axis of %s (n 0) needs the rank "
                              "known while tracing", fn, weft__spec_str(s, str, sizeof str));
    size_t count = n ? n : (size_t)s->rank;
    for (size_t i = 0; n && s->rank != WEFT_RANK_ANY && i < n; i++)
        if (axes[i] < -s->rank || axes[i] >= s->rank)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d (entry %zu) is out of range "
                                  "for %s", fn, axes[i], i, weft__spec_str(s, str, sizeof str));
    for (size_t i = 0; a && i < count; i++) {
        weft__node node = { .op = WEFT__OP_ROLL, .attr.index.axis = n ? axes[i] : (int)i,
                            .attr.index.kind = kind };
        a = finish(cx, &node, &a, 1, -1, WEFT_F64);
    }
    return a;
}

weft_value *weft_fftshift(weft_ctx *cx, weft_value *a, const int *axes, size_t n)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(half_rolls(cx, "weft_fftshift", 1, a, axes, n));
}

weft_value *weft_ifftshift(weft_ctx *cx, weft_value *a, const int *axes, size_t n)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(half_rolls(cx, "weft_ifftshift", 2, a, axes, n));
}

weft_value *weft_repeat(weft_ctx *cx, weft_value *a, int64_t repeats, int axis)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_repeat", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_REPEAT, .attr.index.axis = axis, .attr.index.count = repeats };
    return WEFT__KEEP(finish(cx, &n, &a, 1, -1, WEFT_F64));
}

/* The i64 index of each output element along the axis: i, counts[i]
 * times, for i < n. */
static weft_tensor *repeat_index(weft_ctx *cx, const char *fn, const int64_t *counts, size_t n)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (counts[i] < 0) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: counts[%zu] is %lld, negative", fn, i,
                           (long long)counts[i]);
            return NULL;
        }
        if (__builtin_add_overflow(sum, counts[i], &sum) || sum > INT64_MAX / 8) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: the counts add up to more than %lld", fn,
                           (long long)(INT64_MAX / 8));
            return NULL;
        }
    }
    int64_t *idx = weft__malloc(sizeof *idx * (size_t)(sum ? sum : 1));
    if (!idx) {
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
        return NULL;
    }
    int64_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (int64_t c = 0; c < counts[i]; c++)
            idx[k++] = (int64_t)i;
    weft_tensor *t = NULL;
    int rc = weft_tensor_create(WEFT_I64, 1, &sum, idx, &t);
    if (rc != 0)
        weft__ctx_fail_errmsg(cx, rc);
    weft__free(idx);
    return t;
}

weft_value *weft_repeat_counts(weft_ctx *cx, weft_value *a, const int64_t *counts, size_t n,
                               int axis)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_repeat_counts";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (n == 0 || !counts)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn,
                              n == 0 ? "no counts (n is 0)" : "counts is NULL");
    if (n == 1) {
        if (counts[0] < 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: counts[0] is %lld, negative", fn,
                                  (long long)counts[0]);
        return WEFT__KEEP(weft_repeat(cx, a, counts[0], axis));
    }
    const weft_spec *s = weft__value_spec(a);
    char str[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the rank of %s is unknown while tracing; "
                              "counts holds an entry per element of the axis", fn,
                              weft__spec_str(s, str, sizeof str));
    if (axis < -s->rank || axis >= s->rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range for %s", fn, axis,
                              weft__spec_str(s, str, sizeof str));
    int ax = axis < 0 ? axis + s->rank : axis;
    if (s->dims[ax] == WEFT_DIM_ANY)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d of %s is unknown while tracing; "
                              "counts holds an entry per element of it", fn, axis,
                              weft__spec_str(s, str, sizeof str));
    if (s->dims[ax] != (int64_t)n)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu counts for axis %d of %s (%lld elements)",
                              fn, n, axis, weft__spec_str(s, str, sizeof str),
                              (long long)s->dims[ax]);
    weft_tensor *t = repeat_index(cx, fn, counts, n);
    if (!t)
        return NULL;
    weft_value *idx = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    return WEFT__KEEP(idx ? weft_gather(cx, a, idx, ax) : NULL);
}
