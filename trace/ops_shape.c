/* The shape ops of include/weft/ops.h: transpose, slice, split, gather,
 * concat, stack, expand_dims, squeeze, tile, broadcast_to, the fill-likes,
 * shape, bitcast, argmax, argmin, cumsum, sort, argsort and top_k.  Each
 * validates what only the call can check (NULL arrays, counts), puts its
 * arguments in the node's attributes and leaves the rest to inference
 * (trace/infer_shape.c), which checks the node again on concrete shapes at
 * run time. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* Ops whose arguments hold one entry per dim need a's rank now. */
static bool known_rank(weft_ctx *cx, const char *fn, const weft_value *a, const char *what)
{
    if (spec_of(a)->rank != WEFT_RANK_ANY)
        return true;
    char sa[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: the rank of %s is unknown while tracing; %s an entry "
                   "per dim", fn, weft__spec_str(spec_of(a), sa, sizeof sa), what);
    return false;
}

/* ---- Moving elements --------------------------------------------------- */

weft_value *weft_transpose(weft_ctx *cx, weft_value *a, const int *perm)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_transpose", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_TRANSPOSE, .attr.transpose.rank = -1 };
    if (perm) {
        if (!known_rank(cx, "weft_transpose", a, "perm holds"))
            return NULL;
        int rank = spec_of(a)->rank;
        for (int d = 0; d < rank; d++) {
            if (perm[d] < -rank || perm[d] >= rank)
                return weft__ctx_fail(cx, WEFT_EINVAL, "weft_transpose: perm entry %d (%d) is "
                                      "out of range for rank %d", d, perm[d], rank);
            n.attr.transpose.perm[d] = (int8_t)(perm[d] < 0 ? perm[d] + rank : perm[d]);
        }
        n.attr.transpose.rank = rank;
    }
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

weft_value *weft_slice(weft_ctx *cx, weft_value *a, const int64_t *begin, const int64_t *end,
                       const int64_t *step)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_slice", &a, 1) ||
        !known_rank(cx, "weft_slice", a, "begin, end and step hold"))
        return NULL;
    int rank = spec_of(a)->rank;
    weft__node n = { .op = WEFT__OP_SLICE, .attr.slice.rank = rank };
    for (int d = 0; d < rank; d++) {
        int64_t s = step ? step[d] : 1;
        if (s == 0)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_slice: step %d is 0", d);
        /* NULL begin or end: the whole dim in the step's direction. */
        n.attr.slice.begin[d] = begin ? begin[d] : s > 0 ? 0 : WEFT_END;
        n.attr.slice.end[d] = end ? end[d] : WEFT_END;
        n.attr.slice.step[d] = s;
    }
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

/* The split attributes of part k of the sizes (checked: their sum fits). */
static void split_part(weft__node *n, const int64_t *sizes, size_t count, size_t k)
{
    int64_t lead = 0, trail = 0;
    for (size_t i = 0; i < count; i++) {
        if (i == k)
            continue;
        if (sizes[i] < 0)
            n->attr.split.rest = i < k ? -1 : 1;
        else if (i < k)
            lead += sizes[i];
        else
            trail += sizes[i];
    }
    n->attr.split.lead = lead;
    n->attr.split.size = sizes[k];
    n->attr.split.trail = trail;
}

/* What only the call can check: outs, the part count, the sizes.  Records
 * the failure in cx and returns false. */
static bool split_args_ok(weft_ctx *cx, size_t n, const int64_t *sizes, weft_value **outs)
{
    if (!outs) {
        weft__ctx_fail(cx, WEFT_EINVAL, "weft_split: outs is NULL");
        return false;
    }
    if (n == 0 || n > INT32_MAX) {
        weft__ctx_fail(cx, WEFT_EINVAL, "weft_split: %zu parts (1..%d)", n, INT32_MAX);
        return false;
    }
    size_t rests = 0;
    int64_t sum = 0;
    for (size_t k = 0; sizes && k < n; k++) {
        const char *why = sizes[k] < -1                                 ? "is negative"
                          : sizes[k] == -1 && rests++                   ? "is a second -1"
                          : sizes[k] > 0 && sum > INT64_MAX - sizes[k]  ? "overflows the sum"
                                                                        : NULL;
        if (why) {
            weft__ctx_fail(cx, WEFT_EINVAL, "weft_split: size %zu (%lld) %s", k,
                           (long long)sizes[k], why);
            return false;
        }
        if (sizes[k] > 0)
            sum += sizes[k];
    }
    return true;
}

int weft_split(weft_ctx *cx, weft_value *a, size_t n, const int64_t *sizes, int axis,
               weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, n);
    if (outs)
        for (size_t k = 0; k < n; k++)
            outs[k] = NULL;
    if (!weft__op_enter(cx, "weft_split", &a, 1))
        return cx ? weft_ctx_status(cx) : WEFT_EINVAL;
    if (!split_args_ok(cx, n, sizes, outs))
        return weft_ctx_status(cx);
    /* Every part checks the whole split, so only the first can fail on
     * shapes; a later one only for lack of memory. */
    for (size_t k = 0; k < n; k++) {
        weft__node node = { .op = WEFT__OP_SPLIT };
        node.attr.split.axis = axis;
        node.attr.split.index = (int)k;
        node.attr.split.parts = sizes ? 0 : (int)n;
        if (sizes)
            split_part(&node, sizes, n, k);
        outs[k] = weft__ops_finish(cx, &node, &a, 1);
        if (!outs[k]) {
            for (size_t i = 0; i < k; i++)
                outs[i] = NULL;
            return weft_ctx_status(cx);
        }
    }
    return 0;
}

weft_value *weft_tile(weft_ctx *cx, weft_value *a, const int64_t *multiples)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_tile", &a, 1) ||
        !known_rank(cx, "weft_tile", a, "multiples holds"))
        return NULL;
    int rank = spec_of(a)->rank;
    if (rank > 0 && !multiples)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_tile: NULL multiples for rank %d", rank);
    weft__node n = { .op = WEFT__OP_TILE, .attr.shape.rank = rank };
    for (int d = 0; d < rank; d++)
        n.attr.shape.dims[d] = multiples[d];
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

weft_value *weft_broadcast_to(weft_ctx *cx, weft_value *a, int rank, const int64_t *dims)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_broadcast_to", &a, 1))
        return NULL;
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_broadcast_to: rank %d is outside 0..%d",
                              rank, WEFT_MAX_RANK);
    if (rank > 0 && !dims)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_broadcast_to: NULL dims for rank %d", rank);
    weft__node n = { .op = WEFT__OP_BROADCAST_TO, .attr.shape.rank = rank };
    for (int d = 0; d < rank; d++)
        n.attr.shape.dims[d] = dims[d];
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

/* ---- Several inputs ---------------------------------------------------- */

weft_value *weft_gather(weft_ctx *cx, weft_value *a, weft_value *indices, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft_gather_ex(cx, a, indices, axis, 0));
}

weft_value *weft_gather_ex(weft_ctx *cx, weft_value *a, weft_value *indices, int axis,
                           int batch_dims)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { a, indices };
    if (!weft__op_enter(cx, "weft_gather", in, 2))
        return NULL;
    if (batch_dims < 0) {   /* counted from the end of the indices' dims */
        int idx_rank = weft__value_spec(indices)->rank;
        if (idx_rank == WEFT_RANK_ANY)
            return weft__ctx_fail(cx, WEFT_EINVAL, "weft_gather: a negative batch_dims (%d) needs "
                                  "the indices' rank while tracing", batch_dims);
        batch_dims += idx_rank;
    }
    weft__node n = { .op = WEFT__OP_GATHER, .attr.axis.axis = axis,
                     .attr.axis.batch = batch_dims };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 2));
}

/* concat and stack: the inputs promoted to their widest dtype, like the
 * operands of an arithmetic op. */
static weft_value *join(weft_ctx *cx, weft__op op, const char *fn, weft_value *const *vs,
                        size_t count, int axis)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return NULL;
    }
    if (weft_ctx_status(cx) != 0)
        return NULL;
    if (!vs)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: vs is NULL", fn);
    if (count == 0 || count > UINT32_MAX / 2)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu inputs (1..%u)", fn, count,
                              UINT32_MAX / 2);
    if (!weft__ctx_check_inputs(cx, fn, vs, count))
        return NULL;
    uint32_t k = (uint32_t)count;
    weft_value **in = weft__malloc(sizeof *in * k);
    weft_spec *specs = weft__malloc(sizeof *specs * k);
    weft_value *r = NULL;
    if (!in || !specs) {
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
        goto done;
    }
    weft_dtype dt = spec_of(vs[0])->dtype;
    for (uint32_t i = 1; i < k; i++)
        if (spec_of(vs[i])->dtype > dt)   /* declared in promotion order */
            dt = spec_of(vs[i])->dtype;
    /* Inferred before any cast is recorded, so that a failing join leaves
     * no stray casts behind. */
    for (uint32_t i = 0; i < k; i++) {
        specs[i] = *spec_of(vs[i]);
        specs[i].dtype = dt;
    }
    weft__node n = { .op = op, .n_in = k, .attr.axis.axis = axis };
    n.in = n.inline_in;
    int rc = weft__infer_spec(&n, specs, &n.spec);
    if (rc < 0) {
        weft__ctx_fail_errmsg(cx, rc);
        goto done;
    }
    for (uint32_t i = 0; i < k; i++)
        if (!(in[i] = weft_cast(cx, vs[i], dt)))
            goto done;
    r = weft__ops_emit(cx, &n, in, k);
done:
    weft__free(in);
    weft__free(specs);
    return r;
}

weft_value *weft_concat(weft_ctx *cx, weft_value *const *vs, size_t n, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(join(cx, WEFT__OP_CONCAT, "weft_concat", vs, n, axis));
}

weft_value *weft_stack(weft_ctx *cx, weft_value *const *vs, size_t n, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(join(cx, WEFT__OP_STACK, "weft_stack", vs, n, axis));
}

/* ---- Relabelling dims -------------------------------------------------- */

weft_value *weft_expand_dims(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_expand_dims", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_EXPAND_DIMS, .attr.axis.axis = axis };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

weft_value *weft_squeeze(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_squeeze", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_SQUEEZE, .attr.axis.axis = axis };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

/* ---- Shapes, indices, scans -------------------------------------------- */

static weft_value *fill_like(weft_ctx *cx, const char *fn, weft_value *a, double value)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    const weft_spec *s = spec_of(a);
    bool known = s->rank != WEFT_RANK_ANY;
    for (int d = 0; known && d < s->rank; d++)
        known = s->dims[d] != WEFT_DIM_ANY;
    /* A known shape needs no input: a plain fill, which folding may turn
     * into a constant.  An unknown one reads a's shape when it runs. */
    if (known)
        return weft_fill(cx, s->dtype, s->rank, s->dims, value);
    weft__node n = { .op = WEFT__OP_FILL_LIKE, .attr.fill.value = value };
    return weft__ops_finish(cx, &n, &a, 1);
}

weft_value *weft_zeros_like(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(fill_like(cx, "weft_zeros_like", a, 0.0));
}

weft_value *weft_ones_like(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(fill_like(cx, "weft_ones_like", a, 1.0));
}

weft_value *weft_fill_like(weft_ctx *cx, weft_value *a, double value)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(fill_like(cx, "weft_fill_like", a, value));
}

weft_value *weft_shape(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_shape", &a, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_SHAPE_OF };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

weft_value *weft_bitcast(weft_ctx *cx, weft_value *a, weft_dtype to)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, "weft_bitcast", &a, 1))
        return NULL;
    if (weft_dtype_size(to) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_bitcast: unknown dtype %d", (int)to);
    /* A weak scalar has no dtype of its own until it is made strong. */
    a = weft__value_strong(cx, a);
    weft__node n = { .op = WEFT__OP_BITCAST, .attr.cast.to = to };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &a, 1));
}

static weft_value *arg_extreme(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, int axis)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    weft__node n = { .op = op, .attr.axis.axis = axis };
    return weft__ops_finish(cx, &n, &a, 1);
}

weft_value *weft_argmax(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(arg_extreme(cx, WEFT__OP_ARGMAX, "weft_argmax", a, axis));
}

weft_value *weft_argmin(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(arg_extreme(cx, WEFT__OP_ARGMIN, "weft_argmin", a, axis));
}

static weft_value *scan(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, int axis,
                        unsigned flags)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (flags & ~(unsigned)(WEFT_SCAN_EXCLUSIVE | WEFT_SCAN_REVERSE))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: unknown flag bits 0x%x", fn, flags);
    if (axis == WEFT_ALL_AXES) {   /* over the flattened tensor, like NumPy */
        int64_t flat = -1;
        if (!(a = weft_reshape(cx, a, 1, &flat)))
            return NULL;
        axis = 0;
    }
    weft__node n = { .op = op, .attr.axis.axis = axis, .attr.axis.scan = flags };
    return weft__ops_finish(cx, &n, &a, 1);
}

weft_value *weft_cumsum(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scan(cx, WEFT__OP_CUMSUM, "weft_cumsum", a, axis, 0));
}

weft_value *weft_cumsum_ex(weft_ctx *cx, weft_value *a, int axis, unsigned flags)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scan(cx, WEFT__OP_CUMSUM, "weft_cumsum_ex", a, axis, flags));
}

weft_value *weft_cumprod(weft_ctx *cx, weft_value *a, int axis, unsigned flags)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scan(cx, WEFT__OP_CUMPROD, "weft_cumprod", a, axis, flags));
}

weft_value *weft_cumulative_logsumexp(weft_ctx *cx, weft_value *a, int axis, unsigned flags)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scan(cx, WEFT__OP_CUMLOGSUMEXP, "weft_cumulative_logsumexp", a, axis, flags));
}

/* ---- Sorting ----------------------------------------------------------- */

static weft_value *sort_op(weft_ctx *cx, weft__op op, const char *fn, weft_value *a, int axis,
                           bool descending)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    weft__node n = { .op = op, .attr.sort.axis = axis, .attr.sort.descending = descending };
    return weft__ops_finish(cx, &n, &a, 1);
}

weft_value *weft_sort(weft_ctx *cx, weft_value *a, int axis, bool descending)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(sort_op(cx, WEFT__OP_SORT, "weft_sort", a, axis, descending));
}

weft_value *weft_argsort(weft_ctx *cx, weft_value *a, int axis, bool descending)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(sort_op(cx, WEFT__OP_ARGSORT, "weft_argsort", a, axis, descending));
}

int weft__ops_top_k(weft_ctx *cx, weft_value *a, int64_t k, bool largest, weft_value **outs)
{
    weft__node n = { .op = WEFT__OP_TOP_K, .attr.sort.k = k, .attr.sort.descending = largest };
    weft_value *idx = weft__ops_finish(cx, &n, &a, 1);
    if (!idx)
        return weft_ctx_status(cx);
    weft_value *in[2] = { a, idx };
    weft__node v = { .op = WEFT__OP_TOP_K_VALUES };
    weft_value *vals = weft__ops_finish(cx, &v, in, 2);
    if (!vals)
        return weft_ctx_status(cx);
    outs[0] = vals;
    outs[1] = idx;
    return 0;
}

int weft_top_k(weft_ctx *cx, weft_value *a, int64_t k, bool sorted, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    (void)sorted;   /* the result is always sorted, which sorted=false allows too */
    int rc;
    if (!weft__ops_enter_two_outs(cx, "weft_top_k", &a, 1, outs, &rc))
        return rc;
    return weft__ops_top_k(cx, a, k, true, outs);
}
