/* Shape and dtype inference of the shape ops (weft__infer_shape_op).
 *
 * The same code checks a node while tracing (dims may be WEFT_DIM_ANY) and
 * again on concrete inputs before a kernel runs, so every check that a
 * known dim may fail at trace time is also the run-time check of an
 * unknown one.  A result dim that depends on an unknown input dim stays
 * unknown; an input of unknown rank gives a result of unknown rank where
 * the op does not need the rank to know its attributes. */
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/shape.h"

#define ANY WEFT_DIM_ANY

static const char *sstr(const weft_spec *s, char *buf)
{
    return weft__spec_str(s, buf, WEFT__SPEC_STR_MAX);
}

/* axis in [-rank, rank) made non-negative; false when out of range. */
static bool norm_axis(int axis, int rank, int *out)
{
    if (axis < -rank || axis >= rank)
        return false;
    *out = axis < 0 ? axis + rank : axis;
    return true;
}

static int axis_fail(const weft__node *n, int axis, const weft_spec *a)
{
    char sa[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_EINVAL, "weft_%s: axis %d is out of range for %s",
                        weft__op_name(n->op), axis, sstr(a, sa));
}

static int rank_fail(const weft__node *n, int rank)
{
    return weft__errorf(WEFT_EINVAL, "weft_%s: the result would have rank %d, above %d",
                        weft__op_name(n->op), rank, WEFT_MAX_RANK);
}

bool weft__dim_mul(int64_t a, int64_t b, int64_t *out)
{
    if (a == 0 || b == 0) {
        *out = 0;
        return true;
    }
    if (a == ANY || b == ANY) {
        *out = ANY;
        return true;
    }
    if (a > INT64_MAX / b)
        return false;
    *out = a * b;
    return true;
}

/* Two dims that must be equal: their common value (unknown only when both
 * are), or false when they are known and differ. */
static bool dim_merge(int64_t a, int64_t b, int64_t *out)
{
    if (a != ANY && b != ANY && a != b)
        return false;
    *out = a != ANY ? a : b;
    return true;
}

/* ---- Relabelling dims: expand_dims, squeeze ---------------------------- */

static int infer_expand_dims(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    out->dtype = a->dtype;
    if (a->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    int axis;
    if (!norm_axis(n->attr.axis.axis, a->rank + 1, &axis))
        return axis_fail(n, n->attr.axis.axis, a);
    if (a->rank + 1 > WEFT_MAX_RANK)
        return rank_fail(n, a->rank + 1);
    out->rank = a->rank + 1;
    for (int d = 0, s = 0; d < out->rank; d++)
        out->dims[d] = d == axis ? 1 : a->dims[s++];
    return 0;
}

static int infer_squeeze(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    char sa[WEFT__SPEC_STR_MAX];
    out->dtype = a->dtype;
    if (a->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    if (n->attr.axis.axis == WEFT_ALL_AXES) {
        /* Which unknown dims are 1 is known only at run time, so the rank
         * is too (as in TensorFlow). */
        out->rank = 0;
        for (int d = 0; d < a->rank; d++) {
            if (a->dims[d] == ANY) {
                out->rank = WEFT_RANK_ANY;
                return 0;
            }
            if (a->dims[d] != 1)
                out->dims[out->rank++] = a->dims[d];
        }
        return 0;
    }
    int axis;
    if (!norm_axis(n->attr.axis.axis, a->rank, &axis))
        return axis_fail(n, n->attr.axis.axis, a);
    if (a->dims[axis] != 1 && a->dims[axis] != ANY)
        return weft__errorf(WEFT_ESHAPE, "weft_squeeze: axis %d of %s is %lld, not 1",
                            n->attr.axis.axis, sstr(a, sa), (long long)a->dims[axis]);
    out->rank = a->rank - 1;
    for (int d = 0, o = 0; d < a->rank; d++)
        if (d != axis)
            out->dims[o++] = a->dims[d];
    return 0;
}

/* ---- Moving elements: transpose, slice, split, tile, broadcast_to ------ */

/* Ops whose attributes hold one entry per input dim need that rank. */
static int need_rank(const weft__node *n, const weft_spec *a, int rank)
{
    char sa[WEFT__SPEC_STR_MAX];
    if (a->rank == WEFT_RANK_ANY)
        return weft__errorf(WEFT_EINVAL, "weft_%s: the rank of %s is unknown while tracing",
                            weft__op_name(n->op), sstr(a, sa));
    if (a->rank != rank)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: %d entries given for %s of rank %d",
                            weft__op_name(n->op), rank, sstr(a, sa), a->rank);
    return 0;
}

static int infer_transpose(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    out->dtype = a->dtype;
    int rank = n->attr.transpose.rank;
    if (rank == -1) {   /* reverse the dims */
        out->rank = a->rank;
        for (int d = 0; d < a->rank; d++)
            out->dims[d] = a->dims[a->rank - 1 - d];
        return 0;
    }
    int rc = need_rank(n, a, rank);
    if (rc < 0)
        return rc;
    unsigned seen = 0;
    for (int d = 0; d < rank; d++) {
        int p = n->attr.transpose.perm[d];
        if (p < 0 || p >= rank || (seen >> p & 1u))
            return weft__errorf(WEFT_EINVAL, "weft_transpose: perm entry %d (%d) is not a "
                                "permutation of 0..%d", d, p, rank - 1);
        seen |= 1u << p;
        out->dims[d] = a->dims[p];
    }
    out->rank = rank;
    return 0;
}

void weft__slice_resolve(int64_t n, int64_t begin, int64_t end, int64_t step, int64_t *first,
                         int64_t *count)
{
    /* Negative indices count from the end, then clamp into the range the
     * step can walk: [0, n] going up, [-1, n - 1] going down (-1 is
     * "before the first element").  n + INT64_MIN does not overflow. */
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    int64_t b = begin < 0 ? begin + n : begin;
    b = b < lo ? lo : b > hi ? hi : b;
    int64_t e;
    if (end == WEFT_END)
        e = step > 0 ? n : -1;
    else
        e = end < 0 ? end + n : end;
    e = e < lo ? lo : e > hi ? hi : e;
    uint64_t span = step > 0 ? (e > b ? (uint64_t)(e - b) : 0) : (b > e ? (uint64_t)(b - e) : 0);
    uint64_t mag = step > 0 ? (uint64_t)step : 0u - (uint64_t)step;
    *first = b;
    *count = (int64_t)(span / mag + (span % mag != 0));
}

static int infer_slice(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    int rc = need_rank(n, a, n->attr.slice.rank);
    if (rc < 0)
        return rc;
    out->dtype = a->dtype;
    out->rank = a->rank;
    for (int d = 0; d < a->rank; d++) {
        int64_t b = n->attr.slice.begin[d], e = n->attr.slice.end[d], s = n->attr.slice.step[d];
        if (s == 0)
            return weft__errorf(WEFT_EINVAL, "weft_slice: step %d is 0", d);
        int64_t first;
        out->dims[d] = ANY;
        if (a->dims[d] != ANY)
            weft__slice_resolve(a->dims[d], b, e, s, &first, &out->dims[d]);
    }
    return 0;
}

bool weft__split_resolve(const weft__node *n, const weft_spec *a, int64_t d, int64_t *first,
                         int64_t *count)
{
    char sa[WEFT__SPEC_STR_MAX];
    int parts = n->attr.split.parts, axis = n->attr.split.axis;
    if (parts > 0) {
        if (d % parts != 0) {
            weft__errorf(WEFT_ESHAPE, "weft_split: axis %d of %s (%lld) does not split into %d "
                         "equal parts", axis, sstr(a, sa), (long long)d, parts);
            return false;
        }
        *count = d / parts;
        *first = *count * n->attr.split.index;
        return true;
    }
    int64_t lead = n->attr.split.lead, size = n->attr.split.size, trail = n->attr.split.trail;
    /* The sum fits in int64: weft_split checked it. */
    int64_t fixed = lead + trail + (size >= 0 ? size : 0);
    bool has_rest = size < 0 || n->attr.split.rest != 0;
    if (has_rest ? fixed > d : fixed != d) {
        weft__errorf(WEFT_ESHAPE, "weft_split: the sizes add up to %lld%s, but axis %d of %s is "
                     "%lld", (long long)fixed, has_rest ? " and the rest" : "", axis, sstr(a, sa),
                     (long long)d);
        return false;
    }
    int64_t rest = d - fixed;
    *first = lead + (n->attr.split.rest < 0 ? rest : 0);
    *count = size >= 0 ? size : rest;
    return true;
}

static int infer_split(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    *out = *a;
    if (a->rank == WEFT_RANK_ANY)
        return 0;
    int axis;
    if (!norm_axis(n->attr.split.axis, a->rank, &axis))
        return axis_fail(n, n->attr.split.axis, a);
    int64_t d = a->dims[axis], first;
    if (d != ANY) {
        if (!weft__split_resolve(n, a, d, &first, &out->dims[axis]))
            return WEFT_ESHAPE;
    } else {
        out->dims[axis] = n->attr.split.parts == 0 && n->attr.split.size >= 0
                              ? n->attr.split.size : ANY;
    }
    return 0;
}

static int infer_tile(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    int rc = need_rank(n, a, n->attr.shape.rank);
    if (rc < 0)
        return rc;
    *out = *a;
    for (int d = 0; d < a->rank; d++) {
        int64_t m = n->attr.shape.dims[d];
        if (m < 0)
            return weft__errorf(WEFT_EINVAL, "weft_tile: multiple %d is negative (%lld)", d,
                                (long long)m);
        if (!weft__dim_mul(a->dims[d], m, &out->dims[d])) {
            char sa[WEFT__SPEC_STR_MAX];
            return weft__errorf(WEFT_EINVAL, "weft_tile: dim %d of %s times %lld overflows", d,
                                sstr(a, sa), (long long)m);
        }
    }
    return 0;
}

static int infer_broadcast_to(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    char sa[WEFT__SPEC_STR_MAX];
    int rank = n->attr.shape.rank;
    const int64_t *dims = n->attr.shape.dims;
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__errorf(WEFT_EINVAL, "weft_broadcast_to: rank %d is outside 0..%d", rank,
                            WEFT_MAX_RANK);
    if (a->rank == WEFT_RANK_ANY)
        return weft__errorf(WEFT_EINVAL, "weft_broadcast_to: the rank of %s is unknown while "
                            "tracing", sstr(a, sa));
    if (a->rank > rank)
        return weft__errorf(WEFT_ESHAPE, "weft_broadcast_to: %s has more dims than rank %d",
                            sstr(a, sa), rank);
    out->dtype = a->dtype;
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        int j = d - (rank - a->rank);   /* a's dim aligned with d, from the right */
        int64_t want = dims[d], have = j >= 0 ? a->dims[j] : 1;
        if (want < -1)
            return weft__errorf(WEFT_EINVAL, "weft_broadcast_to: dim %d is negative (%lld)", d,
                                (long long)want);
        if (want == -1) {
            if (j < 0)
                return weft__errorf(WEFT_EINVAL, "weft_broadcast_to: dim %d is -1 (keep) but "
                                    "%s has no dim there", d, sstr(a, sa));
            out->dims[d] = have;
            continue;
        }
        if (have != 1 && have != ANY && have != want)
            return weft__errorf(WEFT_ESHAPE, "weft_broadcast_to: %s does not broadcast to dim %d "
                                "= %lld", sstr(a, sa), d, (long long)want);
        out->dims[d] = want;
    }
    return 0;
}

/* ---- Several inputs: gather, concat, stack ----------------------------- */

static int infer_gather(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *a = &in[0], *idx = &in[1];
    char sa[WEFT__SPEC_STR_MAX];
    if (idx->dtype != WEFT_I32 && idx->dtype != WEFT_I64)
        return weft__errorf(WEFT_EDTYPE, "weft_gather: the indices are %s, not i32 or i64",
                            sstr(idx, sa));
    out->dtype = a->dtype;
    if (a->rank == WEFT_RANK_ANY || idx->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    int axis, batch = n->attr.axis.batch;
    if (!norm_axis(n->attr.axis.axis, a->rank, &axis))
        return axis_fail(n, n->attr.axis.axis, a);
    /* batch_dims: the first `batch` dims of a and of the indices are one
     * batch, each index picking within its own batch element. */
    char sb[WEFT__SPEC_STR_MAX];
    if (batch < 0 || batch > idx->rank || batch > axis)
        return weft__errorf(WEFT_EINVAL, "weft_gather: batch_dims %d is not within 0..%d (the "
                            "indices' rank and the axis, %d, of %s)", batch,
                            idx->rank < axis ? idx->rank : axis, axis, sstr(a, sa));
    for (int d = 0; d < batch; d++) {
        int64_t m;
        if (!dim_merge(a->dims[d], idx->dims[d], &m))
            return weft__errorf(WEFT_ESHAPE, "weft_gather: the indices %s and %s differ in batch "
                                "dim %d", sstr(idx, sb), sstr(a, sa), d);
    }
    int rank = a->rank - 1 + idx->rank - batch;
    if (rank > WEFT_MAX_RANK)
        return rank_fail(n, rank);
    out->rank = rank;
    int o = 0;
    for (int d = 0; d < axis; d++)
        out->dims[o++] = a->dims[d];
    for (int d = batch; d < idx->rank; d++)
        out->dims[o++] = idx->dims[d];
    for (int d = axis + 1; d < a->rank; d++)
        out->dims[o++] = a->dims[d];
    return 0;
}

/* The common rank of in[0..k), or WEFT_RANK_ANY when none is known; first
 * receives the first input of known rank. */
static int common_rank(const weft__node *n, const weft_spec *in, uint32_t k, uint32_t *first)
{
    int rank = WEFT_RANK_ANY;
    for (uint32_t i = 0; i < k; i++) {
        if (in[i].rank == WEFT_RANK_ANY)
            continue;
        if (rank == WEFT_RANK_ANY) {
            rank = in[i].rank;
            *first = i;
        } else if (in[i].rank != rank) {
            char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
            weft__errorf(WEFT_ESHAPE, "weft_%s: input %u is %s and input %u is %s: the ranks "
                         "differ", weft__op_name(n->op), (unsigned)*first, sstr(&in[*first], sa),
                         (unsigned)i, sstr(&in[i], sb));
            return -2;
        }
    }
    return rank;
}

static int shape_mismatch(const weft__node *n, const weft_spec *in, uint32_t i, uint32_t j, int d)
{
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_ESHAPE, "weft_%s: input %u is %s and input %u is %s: dim %d differs",
                        weft__op_name(n->op), (unsigned)i, sstr(&in[i], sa), (unsigned)j,
                        sstr(&in[j], sb), d);
}

static int infer_concat(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    uint32_t k = n->n_in, first = 0;
    bool stack = n->op == WEFT__OP_STACK;
    if (k == 0)
        return weft__errorf(WEFT_EINVAL, "weft_%s: no inputs", weft__op_name(n->op));
    for (uint32_t i = 1; i < k; i++)
        if (in[i].dtype != in[0].dtype) {
            char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
            return weft__errorf(WEFT_EDTYPE, "weft_%s: input 0 is %s and input %u is %s",
                                weft__op_name(n->op), sstr(&in[0], sa), (unsigned)i,
                                sstr(&in[i], sb));
        }
    int rank = common_rank(n, in, k, &first);
    if (rank == -2)
        return WEFT_ESHAPE;
    out->dtype = in[0].dtype;
    if (rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    int axis;
    if (!norm_axis(n->attr.axis.axis, stack ? rank + 1 : rank, &axis))
        return axis_fail(n, n->attr.axis.axis, &in[first]);
    if (stack && rank + 1 > WEFT_MAX_RANK)
        return rank_fail(n, rank + 1);
    /* The dims every input shares (all of them for stack). */
    int64_t dims[WEFT_MAX_RANK] = { 0 };
    for (int d = 0; d < rank; d++) {
        dims[d] = ANY;
        if (!stack && d == axis)
            continue;
        for (uint32_t i = 0; i < k; i++)
            if (in[i].rank != WEFT_RANK_ANY && !dim_merge(dims[d], in[i].dims[d], &dims[d]))
                return shape_mismatch(n, in, first, i, d);
    }
    if (stack) {
        out->rank = rank + 1;
        for (int d = 0, s = 0; d < out->rank; d++)
            out->dims[d] = d == axis ? (int64_t)k : dims[s++];
        return 0;
    }
    int64_t total = 0;
    for (uint32_t i = 0; i < k && total != ANY; i++) {
        int64_t v = in[i].rank == WEFT_RANK_ANY ? ANY : in[i].dims[axis];
        if (v == ANY)
            total = ANY;
        else if (total > INT64_MAX - v)
            return weft__errorf(WEFT_EINVAL, "weft_concat: the result overflows along axis %d",
                                n->attr.axis.axis);
        else
            total += v;
    }
    dims[axis] = total;
    out->rank = rank;
    memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
    return 0;
}

/* ---- Shapes and indices: fill_like, shape, argmax/argmin, cumsum ------- */

static int infer_arg_extreme(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    char sa[WEFT__SPEC_STR_MAX];
    out->dtype = WEFT_I64;
    int axis = n->attr.axis.axis;
    if (axis == WEFT_ALL_AXES) {
        out->rank = 0;
        for (int d = 0; a->rank != WEFT_RANK_ANY && d < a->rank; d++)
            if (a->dims[d] == 0)
                return weft__errorf(WEFT_EINVAL, "weft_%s: %s is empty", weft__op_name(n->op),
                                    sstr(a, sa));
        return 0;
    }
    if (a->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    if (!norm_axis(axis, a->rank, &axis))
        return axis_fail(n, n->attr.axis.axis, a);
    if (a->dims[axis] == 0)
        return weft__errorf(WEFT_EINVAL, "weft_%s: axis %d of %s is empty", weft__op_name(n->op),
                            n->attr.axis.axis, sstr(a, sa));
    out->rank = a->rank - 1;
    for (int d = 0, o = 0; d < a->rank; d++)
        if (d != axis)
            out->dims[o++] = a->dims[d];
    return 0;
}

static int infer_cumsum(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    *out = *a;
    out->dtype = a->dtype == WEFT_BOOL ? WEFT_I64 : a->dtype;
    if (n->op == WEFT__OP_CUMLOGSUMEXP && a->dtype != WEFT_F32 && a->dtype != WEFT_F64) {
        char sa[WEFT__SPEC_STR_MAX];
        return weft__errorf(WEFT_EDTYPE, "weft_%s: input 0 is %s, not f32 or f64",
                            weft__op_name(n->op), sstr(a, sa));
    }
    int axis;
    if (a->rank != WEFT_RANK_ANY && !norm_axis(n->attr.axis.axis, a->rank, &axis))
        return axis_fail(n, n->attr.axis.axis, a);
    return 0;
}

/* ---- Sorting: sort, argsort, top_k ------------------------------------ */

static int infer_sort(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    *out = *a;
    if (n->op == WEFT__OP_ARGSORT)
        out->dtype = WEFT_I64;
    int axis;
    if (a->rank != WEFT_RANK_ANY && !norm_axis(n->attr.sort.axis, a->rank, &axis))
        return axis_fail(n, n->attr.sort.axis, a);
    return 0;
}

/* top_k's indices: a's shape with the last dim k.  A last dim unknown
 * while tracing is checked against k when the function runs. */
static int infer_top_k(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    char sa[WEFT__SPEC_STR_MAX];
    int64_t k = n->attr.sort.k;
    *out = *a;
    out->dtype = WEFT_I64;
    if (k < 0)
        return weft__errorf(WEFT_EINVAL, "weft_top_k: k (%lld) is negative", (long long)k);
    if (a->rank == WEFT_RANK_ANY)
        return 0;
    if (a->rank == 0)
        return weft__errorf(WEFT_EINVAL, "weft_top_k: %s is a scalar; it needs a last axis",
                            sstr(a, sa));
    int64_t last = a->dims[a->rank - 1];
    if (last != ANY && k > last)
        return weft__errorf(WEFT_EINVAL, "weft_top_k: k (%lld) is larger than the last dim of %s",
                            (long long)k, sstr(a, sa));
    out->dims[a->rank - 1] = k;
    return 0;
}

/* top_k's values: of a's dtype, in the indices' shape. */
static int infer_top_k_values(const weft_spec *in, weft_spec *out)
{
    *out = in[1];
    out->dtype = in[0].dtype;
    return 0;
}

/* ---- Indexing: unsorted_segment, gather_nd, scatter_nd, roll, repeat --- */

static int index_dtype_ok(const weft__node *n, const char *what, const weft_spec *idx)
{
    if (idx->dtype == WEFT_I32 || idx->dtype == WEFT_I64)
        return 0;
    char sa[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_EDTYPE, "weft_%s: %s are %s, not i32 or i64", weft__op_name(n->op),
                        what, sstr(idx, sa));
}

static int infer_unsorted_segment(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *a = &in[0], *ids = &in[1];
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    int rc = index_dtype_ok(n, "the segment ids", ids);
    if (rc < 0)
        return rc;
    int kind = n->attr.index.kind;
    if (kind != WEFT_R_SUM && kind != WEFT_R_MEAN && kind != WEFT_R_MAX && kind != WEFT_R_MIN &&
        kind != WEFT_R_PROD)
        return weft__errorf(WEFT_EINVAL, "weft_%s: reduction %d is not SUM, MEAN, "
                            "MAX, MIN or PROD", weft__op_name(n->op), kind);
    bool is_f = a->dtype == WEFT_F32 || a->dtype == WEFT_F64;
    if (a->dtype == WEFT_BOOL || (kind == WEFT_R_MEAN && !is_f))
        return weft__errorf(WEFT_EDTYPE, "weft_%s: data %s is not %s", weft__op_name(n->op),
                            sstr(a, sa), kind == WEFT_R_MEAN ? "f32 or f64" : "a number");
    if (n->attr.index.count < 0)
        return weft__errorf(WEFT_EINVAL, "weft_%s: num_segments %lld is negative",
                            weft__op_name(n->op), (long long)n->attr.index.count);
    out->dtype = a->dtype;
    if (n->op == WEFT__OP_SEGMENT && ids->rank != 1 && ids->rank != WEFT_RANK_ANY)
        return weft__errorf(WEFT_ESHAPE, "weft_segment: the segment ids %s are not a vector",
                            sstr(ids, sa));
    if (ids->rank == 0)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: the segment ids %s are a scalar, "
                            "not one id per leading element of data", weft__op_name(n->op),
                            sstr(ids, sa));
    if (a->rank == WEFT_RANK_ANY || ids->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    if (ids->rank > a->rank)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: the segment ids %s have more dims "
                            "than data %s", weft__op_name(n->op), sstr(ids, sa), sstr(a, sb));
    for (int d = 0; d < ids->rank; d++) {
        int64_t m;
        if (!dim_merge(a->dims[d], ids->dims[d], &m))
            return weft__errorf(WEFT_ESHAPE, "weft_%s: the segment ids %s are not a "
                                "prefix of the shape of data %s (dim %d)", weft__op_name(n->op),
                                sstr(ids, sa), sstr(a, sb), d);
    }
    out->rank = 1 + a->rank - ids->rank;
    /* A sorted segment op has one row per id up to the last: known when
     * its kernel reads the ids. */
    out->dims[0] = n->op == WEFT__OP_SEGMENT ? WEFT_DIM_ANY : n->attr.index.count;
    for (int d = ids->rank; d < a->rank; d++)
        out->dims[1 + d - ids->rank] = a->dims[d];
    return 0;
}

/* The tuple length k of index tuples idx ([..., k]): -1 when unknown now;
 * an error for a scalar or a k above rank (when both are known). */
static int tuple_len(const weft__node *n, const weft_spec *a, const weft_spec *idx, int *k)
{
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    *k = -1;
    if (idx->rank == 0)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: the indices %s are a scalar, not index tuples "
                            "along a last dim", weft__op_name(n->op), sstr(idx, sa));
    if (idx->rank == WEFT_RANK_ANY || idx->dims[idx->rank - 1] == ANY)
        return 0;
    int64_t len = idx->dims[idx->rank - 1];
    if (a->rank != WEFT_RANK_ANY && len > a->rank)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: index tuples of %lld entries (indices %s) for "
                            "%s of rank %d", weft__op_name(n->op), (long long)len, sstr(idx, sa),
                            sstr(a, sb), a->rank);
    if (len > WEFT_MAX_RANK)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: index tuples of %lld entries (indices %s), "
                            "above rank %d", weft__op_name(n->op), (long long)len, sstr(idx, sa),
                            WEFT_MAX_RANK);
    *k = (int)len;
    return 0;
}

static int infer_gather_nd(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *a = &in[0], *idx = &in[1];
    int k, rc = index_dtype_ok(n, "the indices", idx);
    if (rc < 0 || (rc = tuple_len(n, a, idx, &k)) < 0)
        return rc;
    out->dtype = a->dtype;
    if (k < 0 || a->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    int rank = idx->rank - 1 + a->rank - k;
    if (rank > WEFT_MAX_RANK)
        return rank_fail(n, rank);
    out->rank = rank;
    int o = 0;
    for (int d = 0; d < idx->rank - 1; d++)
        out->dims[o++] = idx->dims[d];
    for (int d = k; d < a->rank; d++)
        out->dims[o++] = a->dims[d];
    return 0;
}

static int infer_scatter_nd(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *a = &in[0], *idx = &in[1], *u = &in[2];
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    int k, rc = index_dtype_ok(n, "the indices", idx);
    if (rc < 0 || (rc = tuple_len(n, a, idx, &k)) < 0)
        return rc;
    if (u->dtype != a->dtype)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: the updates %s are not of the dtype of the "
                            "tensor %s", weft__op_name(n->op), sstr(u, sa), sstr(a, sb));
    if (n->op != WEFT__OP_SCATTER_ND_UPDATE && a->dtype == WEFT_BOOL)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: the tensor %s is bool (cast it first)",
                            weft__op_name(n->op), sstr(a, sa));
    *out = *a;
    if (k < 0 || a->rank == WEFT_RANK_ANY || u->rank == WEFT_RANK_ANY)
        return 0;
    /* The updates are indices' dims but the last, then a's after k. */
    int want = idx->rank - 1 + a->rank - k;
    bool ok = u->rank == want;
    for (int d = 0; ok && d < want; d++) {
        int64_t m, e = d < idx->rank - 1 ? idx->dims[d] : a->dims[k + d - (idx->rank - 1)];
        ok = dim_merge(e, u->dims[d], &m);
    }
    if (!ok)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: the updates %s do not have the shape of the "
                            "indices' dims but the last, then those of the tensor %s after the "
                            "first %d", weft__op_name(n->op), sstr(u, sa), sstr(a, sb), k);
    return 0;
}

static int infer_roll_repeat(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    *out = *a;
    int64_t c = n->attr.index.count;
    if (n->op == WEFT__OP_REPEAT && c < 0)
        return weft__errorf(WEFT_EINVAL, "weft_repeat: repeats %lld is negative", (long long)c);
    if (a->rank == WEFT_RANK_ANY)
        return 0;
    int axis;
    if (!norm_axis(n->attr.index.axis, a->rank, &axis))
        return axis_fail(n, n->attr.index.axis, a);
    if (n->op == WEFT__OP_REPEAT && !weft__dim_mul(a->dims[axis], c, &out->dims[axis])) {
        char sa[WEFT__SPEC_STR_MAX];
        return weft__errorf(WEFT_EINVAL, "weft_repeat: axis %d of %s times %lld overflows",
                            n->attr.index.axis, sstr(a, sa), (long long)c);
    }
    return 0;
}

int weft__check_seed(const char *fn, const weft_spec *seed)
{
    char ss[WEFT__SPEC_STR_MAX];
    if (seed->dtype != WEFT_I32 && seed->dtype != WEFT_I64)
        return weft__errorf(WEFT_EINVAL, "%s: the seed %s is not i32 or i64", fn, sstr(seed, ss));
    if (seed->rank != WEFT_RANK_ANY && seed->rank != 0 &&
        !(seed->rank == 1 && (seed->dims[0] == 2 || seed->dims[0] == WEFT_DIM_ANY)))
        return weft__errorf(WEFT_EINVAL, "%s: the seed %s is not a scalar or a vector of two",
                            fn, sstr(seed, ss));
    return 0;
}

/* in[0], the seed (of a random node, whose messages name its op).  The
 * dims are the node's, or (rank -1) those of in[1]. */
static int check_seed(const weft__node *n, const weft_spec *seed)
{
    char fn[48];
    snprintf(fn, sizeof fn, "weft_%s", weft__op_name(n->op));
    return weft__check_seed(fn, seed);
}

static int infer_random(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int rc = check_seed(n, &in[0]);
    if (rc)
        return rc;
    if (n->attr.random.rank < 0) {
        *out = in[1];   /* the shape of the second input, known or not */
        out->dtype = n->attr.random.dtype;
        return 0;
    }
    memset(out, 0, sizeof *out);
    out->dtype = n->attr.random.dtype;
    out->rank = n->attr.random.rank;
    for (int d = 0; d < out->rank; d++)
        out->dims[d] = n->attr.random.dims[d];
    return 0;
}

/* in[0] the seed, in[1] each element's parameter (f64, made so by the
 * public ops); the result has in[1]'s shape and the node's dtype. */
static int infer_random_counts(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int rc = check_seed(n, &in[0]);
    if (rc)
        return rc;
    bool two = n->op == WEFT__OP_RANDOM_BINOMIAL;
    for (int k = 1; k <= (two ? 2 : 1); k++)
        if (in[k].dtype != WEFT_F64 || !weft__spec_equal(&in[k], &in[1])) {
            char sp[WEFT__SPEC_STR_MAX];
            return weft__errorf(WEFT_EDTYPE, "weft_%s: the parameters %s are not f64 of one "
                                "shape", weft__op_name(n->op), sstr(&in[k], sp));
        }
    *out = in[1];
    out->dtype = n->attr.random.dtype;
    return 0;
}

/* in[0] the seed, in[1] the logits [batch, classes] (f32 or f64); the
 * result [batch, num_samples] of the node's dtype, num_samples in
 * attr.random.dims[0]. */
static int infer_categorical(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int rc = check_seed(n, &in[0]);
    if (rc)
        return rc;
    const weft_spec *l = &in[1];
    char sl[WEFT__SPEC_STR_MAX];
    if (l->dtype != WEFT_F32 && l->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "weft_random_categorical: the logits %s are not f32 or "
                            "f64", sstr(l, sl));
    if (l->rank != WEFT_RANK_ANY && l->rank != 2)
        return weft__errorf(WEFT_ESHAPE, "weft_random_categorical: the logits %s are not of "
                            "rank 2 ([batch, classes])", sstr(l, sl));
    memset(out, 0, sizeof *out);
    out->dtype = n->attr.random.dtype;
    out->rank = 2;
    out->dims[0] = l->rank == 2 ? l->dims[0] : WEFT_DIM_ANY;
    out->dims[1] = n->attr.random.dims[0];
    int64_t numel;
    if (out->dims[0] != WEFT_DIM_ANY &&
        !weft__numel_checked(2, out->dims, weft_dtype_size(out->dtype), &numel))
        return weft__errorf(WEFT_EINVAL, "weft_random_categorical: %lld rows of %lld samples "
                            "overflow the address space", (long long)out->dims[0],
                            (long long)out->dims[1]);
    return 0;
}

static uint32_t shape_op_arity(weft__op op)
{
    switch (op) {
    case WEFT__OP_GATHER: case WEFT__OP_TOP_K_VALUES: case WEFT__OP_UNSORTED_SEGMENT:
    case WEFT__OP_SEGMENT: case WEFT__OP_GATHER_ND: case WEFT__OP_CONV2D:
    case WEFT__OP_DEPTHWISE_CONV2D: case WEFT__OP_BOOLEAN_MASK: case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE: case WEFT__OP_SEARCHSORTED:
    case WEFT__OP_RANDOM_CATEGORICAL: case WEFT__OP_NON_MAX_SUPPRESSION:
    case WEFT__OP_RANDOM_GAMMA: case WEFT__OP_RANDOM_POISSON:
    case WEFT__OP_CONFUSION_MATRIX: case WEFT__OP_TRIDIAGONAL_SOLVE: case WEFT__OP_ASSERT:
    case WEFT__OP_IMAGE_TRANSFORM: case WEFT__OP_COMBINED_NMS: case WEFT__OP_NMS_SCORED:
    case WEFT__OP_NMS_OVERLAPS: case WEFT__OP_CTC_BEAM: case WEFT__OP_BANDED_SOLVE:
    case WEFT__OP_NMS_PADDED: case WEFT__OP_UNIGRAM_CANDIDATES:
        return 2;
    case WEFT__OP_SCATTER_ND_UPDATE: case WEFT__OP_SCATTER_ND_ADD:
    case WEFT__OP_SCATTER_ND_SUB: case WEFT__OP_SCATTER_ND_MAX: case WEFT__OP_SCATTER_ND_MIN:
    case WEFT__OP_CROP_AND_RESIZE: case WEFT__OP_DRAW_BOXES: case WEFT__OP_SAMPLE_BOX:
    case WEFT__OP_RANDOM_BINOMIAL: case WEFT__OP_GLIMPSE: case WEFT__OP_FRACTIONAL_POOL:
    case WEFT__OP_INDEX_SHUFFLE:
        return 3;
    case WEFT__OP_CTC_LOSS: case WEFT__OP_CTC_LOSS_GRAD: case WEFT__OP_BOX_PROPOSALS:
    case WEFT__OP_EDIT_DISTANCE:
        return 4;
    default:
        return 1;
    }
}

int weft__infer_shape_op(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    uint32_t want = shape_op_arity(n->op);
    if ((n->op == WEFT__OP_RANDOM_UNIFORM || n->op == WEFT__OP_RANDOM_NORMAL ||
         n->op == WEFT__OP_RANDOM_TRUNCATED_NORMAL) && n->attr.random.rank < 0)
        want = 2;   /* the dims of in[1] */
    if (n->op == WEFT__OP_BINCOUNT && n->n_in == 2)
        want = 2;   /* with weights */
    if (n->op == WEFT__OP_CONFUSION_MATRIX && n->n_in == 3)
        want = 3;
    if (n->op == WEFT__OP_FFT && n->attr.fft.kind == WEFT__FFT_FRAMES)
        want = 2;   /* the signals and the window */
    bool variadic = n->op == WEFT__OP_CONCAT || n->op == WEFT__OP_STACK;
    if (variadic ? n->n_in == 0 : n->n_in != want)
        return weft__errorf(WEFT_EINVAL, "weft_%s: %u inputs, expected %s%u",
                            weft__op_name(n->op), (unsigned)n->n_in, variadic ? "at least " : "",
                            (unsigned)want);
    switch (n->op) {
    case WEFT__OP_EXPAND_DIMS:  return infer_expand_dims(n, &in[0], out);
    case WEFT__OP_SQUEEZE:      return infer_squeeze(n, &in[0], out);
    case WEFT__OP_TRANSPOSE:    return infer_transpose(n, &in[0], out);
    case WEFT__OP_SLICE:        return infer_slice(n, &in[0], out);
    case WEFT__OP_SPLIT:        return infer_split(n, &in[0], out);
    case WEFT__OP_TILE:         return infer_tile(n, &in[0], out);
    case WEFT__OP_BROADCAST_TO: return infer_broadcast_to(n, &in[0], out);
    case WEFT__OP_GATHER:       return infer_gather(n, in, out);
    case WEFT__OP_CONCAT:
    case WEFT__OP_STACK:        return infer_concat(n, in, out);
    case WEFT__OP_FILL_LIKE:
        *out = in[0];
        return 0;
    case WEFT__OP_SHAPE_OF:
        out->dtype = WEFT_I64;
        out->rank = 1;
        out->dims[0] = in[0].rank == WEFT_RANK_ANY ? ANY : in[0].rank;
        return 0;
    case WEFT__OP_ARGMAX:
    case WEFT__OP_ARGMIN:       return infer_arg_extreme(n, &in[0], out);
    case WEFT__OP_CUMSUM:
    case WEFT__OP_CUMPROD:
    case WEFT__OP_CUMLOGSUMEXP: return infer_cumsum(n, &in[0], out);
    case WEFT__OP_SORT:
    case WEFT__OP_ARGSORT:      return infer_sort(n, &in[0], out);
    case WEFT__OP_TOP_K:        return infer_top_k(n, &in[0], out);
    case WEFT__OP_TOP_K_VALUES: return infer_top_k_values(in, out);
    case WEFT__OP_UNSORTED_SEGMENT:
    case WEFT__OP_SEGMENT:      return infer_unsorted_segment(n, in, out);
    case WEFT__OP_GATHER_ND:    return infer_gather_nd(n, in, out);
    case WEFT__OP_SCATTER_ND_UPDATE:
    case WEFT__OP_SCATTER_ND_ADD:
    case WEFT__OP_SCATTER_ND_SUB:
    case WEFT__OP_SCATTER_ND_MAX:
    case WEFT__OP_SCATTER_ND_MIN: return infer_scatter_nd(n, in, out);
    case WEFT__OP_ROLL:
    case WEFT__OP_REPEAT:       return infer_roll_repeat(n, &in[0], out);
    case WEFT__OP_RANDOM_UNIFORM:
    case WEFT__OP_RANDOM_NORMAL:
    case WEFT__OP_RANDOM_TRUNCATED_NORMAL: return infer_random(n, in, out);
    case WEFT__OP_RANDOM_CATEGORICAL: return infer_categorical(n, in, out);
    case WEFT__OP_RANDOM_GAMMA:
    case WEFT__OP_RANDOM_POISSON:
    case WEFT__OP_RANDOM_BINOMIAL: return infer_random_counts(n, in, out);
    case WEFT__OP_CTC_LOSS: case WEFT__OP_CTC_LOSS_GRAD:
        return weft__infer_ctc_loss(n, in, out);
    case WEFT__OP_CHECK_NUMERICS:
    case WEFT__OP_ASSERT: return weft__infer_check(n, in, out);
    case WEFT__OP_IMAGE_TRANSFORM: return weft__infer_image_transform(n, in, out);
    case WEFT__OP_DRAW_BOXES: return weft__infer_draw_boxes(in, out);
    case WEFT__OP_ISOTONIC: return weft__infer_isotonic(n, in, out);
    case WEFT__OP_BITCAST: return weft__infer_bitcast(n, in, out);
    case WEFT__OP_CTC_BEAM: return weft__infer_ctc_beam(n, in, out);
    case WEFT__OP_CTC_UNIQUE: return weft__infer_ctc_unique(in, out);
    case WEFT__OP_GLIMPSE: return weft__infer_glimpse(n, in, out);
    case WEFT__OP_FRACTIONAL_POOL: return weft__infer_fractional_pool(n, in, out);
    case WEFT__OP_BOX_PROPOSALS: return weft__infer_box_proposals(n, in, out);
    case WEFT__OP_EDIT_DISTANCE: return weft__infer_edit_distance(n, in, out);
    case WEFT__OP_CANDIDATES:
    case WEFT__OP_UNIGRAM_CANDIDATES: return weft__infer_candidates(n, in, out);
    case WEFT__OP_BANDED_SOLVE: return weft__infer_banded_solve(in, out);
    case WEFT__OP_SAMPLE_BOX: return weft__infer_sample_box(in, out);
    case WEFT__OP_INDEX_SHUFFLE: return weft__infer_index_shuffle(n, in, out);
    case WEFT__OP_CONV2D:
    case WEFT__OP_DEPTHWISE_CONV2D:
    case WEFT__OP_MAX_POOL2D:
    case WEFT__OP_AVG_POOL2D:
    case WEFT__OP_RESIZE:
    case WEFT__OP_CROP_AND_RESIZE: return weft__infer_conv_op(n, in, out);
    case WEFT__OP_ARGWHERE:
    case WEFT__OP_BOOLEAN_MASK:
    case WEFT__OP_UNIQUE_FIRST:
    case WEFT__OP_UNIQUE_IDX:
    case WEFT__OP_UNIQUE_COUNTS:
    case WEFT__OP_BINCOUNT:
    case WEFT__OP_SEARCHSORTED:
    case WEFT__OP_RANGE_TO:
    case WEFT__OP_NON_MAX_SUPPRESSION:
    case WEFT__OP_COMBINED_NMS:
    case WEFT__OP_NMS_SCORED:
    case WEFT__OP_NMS_OVERLAPS:
    case WEFT__OP_NMS_PADDED:
    case WEFT__OP_CONFUSION_MATRIX: return weft__infer_select_op(n, in, out);
    case WEFT__OP_FFT:          return weft__infer_fft(n, in, out);
    case WEFT__OP_CHOLESKY:
    case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE:
    case WEFT__OP_MATRIX_INVERSE:
    case WEFT__OP_MATRIX_EXPONENTIAL:
    case WEFT__OP_MATRIX_SQRT:
    case WEFT__OP_MATRIX_LOG:
    case WEFT__OP_TRIDIAGONAL_SOLVE:
    case WEFT__OP_MATRIX_DETERMINANT:
    case WEFT__OP_SLOGDET:
    case WEFT__OP_LU:
    case WEFT__OP_QR:
    case WEFT__OP_EIGH:
    case WEFT__OP_EIG:
    case WEFT__OP_SVD:      return weft__infer_linalg_op(n, in, out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: not a shape op", weft__op_name(n->op));
    }
}
