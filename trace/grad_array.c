/* The gradient rules of the ops that move, copy or index elements
 * (weft_gradients; the helpers are trace/grad_rules.c's).  Most need the
 * input's dims known while tracing: an op whose gradient needs one that
 * is not fails naming it. */
#include <float.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k
#define unsupported weft__grad_unsupported
#define unbroadcast weft__grad_unbroadcast
#define wants weft__grad_wants
#define give weft__grad_give

/* ---- Permutations and copies ------------------------------------------ */

static int transpose_rule(const rule_in *r)
{
    int rank = r->n->attr.transpose.rank;
    if (rank < 0)
        return give(r, 0, weft_transpose(r->cx, r->g, NULL));
    int inv[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int p = r->n->attr.transpose.perm[d];
        inv[p < 0 ? p + rank : p] = d;
    }
    return give(r, 0, weft_transpose(r->cx, r->g, inv));
}

/* a's dims, or false (after recording the error) when one is unknown. */
static bool known_dims(const rule_in *r, const weft_spec **as)
{
    *as = weft__value_spec(r->a);
    bool known = (*as)->rank >= 0;
    for (int d = 0; known && d < (*as)->rank; d++)
        known = (*as)->dims[d] != WEFT_DIM_ANY;
    if (!known)
        unsupported(r, "of an input with a dim unknown while tracing");
    return known;
}

/* A constant i64 vector of v[0..n). */
static weft_value *index_vector(const rule_in *r, const int64_t *v, int64_t n)
{
    weft_tensor *t = NULL;
    int rc = weft_tensor_create(WEFT_I64, 1, &n, v, &t);
    if (rc < 0)
        return weft__ctx_fail_errmsg(r->cx, rc);
    weft_value *c = weft_const_tensor(r->cx, t);
    weft_tensor_release(t);
    return c;
}

/* g (count elements along axis) put back at positions first + i step of a
 * dim of dim elements, zeros elsewhere: a zero appended after the last
 * element, then a gather that picks each position's element or that
 * zero. */
static weft_value *unstride(const rule_in *r, weft_value *g, int axis, int64_t dim,
                            int64_t first, int64_t count, int64_t step)
{
    int64_t pads[WEFT_MAX_RANK][2] = { { 0 } };
    pads[axis][1] = 1;
    int64_t *map = weft__calloc(dim ? (size_t)dim : 1, sizeof *map);
    if (!map)
        return weft__ctx_fail(r->cx, WEFT_ENOMEM, "weft_gradients: out of memory");
    for (int64_t j = 0; j < dim; j++)
        map[j] = count;
    for (int64_t i = 0; i < count; i++)
        map[first + i * step] = i;
    weft_value *at = index_vector(r, map, dim);
    weft__free(map);
    weft_value *padded = weft_pad(r->cx, g, (const int64_t (*)[2])pads, 0.0);
    return weft_gather(r->cx, padded, at, axis);
}

/* Zeros around g: steps of 1 pad, other steps unstride (a's dims known). */
static int slice_rule(const rule_in *r)
{
    const weft_spec *as;
    if (!known_dims(r, &as))
        return weft_ctx_status(r->cx);
    int64_t pads[WEFT_MAX_RANK][2], first[WEFT_MAX_RANK], count[WEFT_MAX_RANK];
    int64_t step[WEFT_MAX_RANK];
    bool strided = false;
    for (int d = 0; d < as->rank; d++) {
        bool sliced = d < r->n->attr.slice.rank;
        step[d] = sliced ? r->n->attr.slice.step[d] : 1;
        if (sliced)
            weft__slice_resolve(as->dims[d], r->n->attr.slice.begin[d], r->n->attr.slice.end[d],
                                step[d], &first[d], &count[d]);
        else
            first[d] = 0, count[d] = as->dims[d];
        bool unit = step[d] == 1;
        strided |= !unit;
        pads[d][0] = unit ? first[d] : 0;
        pads[d][1] = unit ? as->dims[d] - first[d] - count[d] : 0;
    }
    weft_value *v = weft_pad(r->cx, r->g, (const int64_t (*)[2])pads, 0.0);
    for (int d = 0; strided && d < as->rank && v; d++)
        if (step[d] != 1)
            v = unstride(r, v, d, as->dims[d], first[d], count[d], step[d]);
    return give(r, 0, v);
}

/* Part of a split: zeros before and after it along the axis. */
static int split_rule(const rule_in *r)
{
    const weft_spec *as;
    if (!known_dims(r, &as))
        return weft_ctx_status(r->cx);
    int axis = r->n->attr.split.axis < 0 ? r->n->attr.split.axis + as->rank
                                         : r->n->attr.split.axis;
    int64_t first, count, pads[WEFT_MAX_RANK][2] = { { 0 } };
    if (!weft__split_resolve(r->n, as, as->dims[axis], &first, &count)) {
        weft__ctx_fail_errmsg(r->cx, WEFT_EINVAL);
        return WEFT_EINVAL;
    }
    pads[axis][0] = first;
    pads[axis][1] = as->dims[axis] - first - count;
    return give(r, 0, weft_pad(r->cx, r->g, (const int64_t (*)[2])pads, 0.0));
}

/* The parts of g, one an input, through unstack or split (sizes: room
 * for n_in sizes). */
static int concat_parts(const rule_in *r, int rank, weft_value **parts, int64_t *sizes)
{
    weft_ctx *cx = r->cx;
    uint32_t n_in = r->n->n_in;
    int axis = r->n->attr.axis.axis, ax = axis < 0 ? axis + rank : axis;
    if (r->n->op == WEFT__OP_STACK)
        return weft_unstack(cx, r->g, axis, n_in, parts) < 0 ? weft_ctx_status(cx) : 0;
    for (uint32_t i = 0; i < n_in; i++)
        if ((sizes[i] = weft__value_spec(r->t->val[r->n->in[i]])->dims[ax]) == WEFT_DIM_ANY)
            return unsupported(r, "along a dim unknown while tracing");
    return weft_split(cx, r->g, n_in, sizes, axis, parts) < 0 ? weft_ctx_status(cx) : 0;
}

static int concat_rule(const rule_in *r)
{
    uint32_t n_in = r->n->n_in;
    int rank = weft__grad_rank(r->g);
    if (rank < 0)
        return unsupported(r, "of a rank unknown while tracing");
    weft_value *small_parts[64], **parts = small_parts;
    int64_t small_sizes[64], *sizes = small_sizes;
    if (n_in > 64) {
        parts = weft__calloc(n_in, sizeof *parts);
        sizes = weft__calloc(n_in, sizeof *sizes);
    }
    int rc = !parts || !sizes
                 ? weft__ctx_failf(r->cx, WEFT_ENOMEM, "weft_gradients: out of memory")
                 : concat_parts(r, rank, parts, sizes);
    for (uint32_t i = 0; rc == 0 && i < n_in; i++)
        rc = give(r, i, parts[i]);
    if (parts != small_parts) {
        weft__free(parts);
        weft__free(sizes);
    }
    return rc;
}

/* g summed over the copies of a (a's dims known; rank up to 4). */
static int tile_rule(const rule_in *r)
{
    const weft_spec *as;
    if (!known_dims(r, &as))
        return weft_ctx_status(r->cx);
    if (as->rank > WEFT_MAX_RANK / 2)
        return unsupported(r, "of a rank above 4");
    int64_t dims[WEFT_MAX_RANK];
    int axes[WEFT_MAX_RANK];
    for (int d = 0; d < as->rank; d++) {
        dims[2 * d] = r->n->attr.shape.dims[d];
        dims[2 * d + 1] = as->dims[d];
        axes[d] = 2 * d;
    }
    weft_value *split = weft_reshape(r->cx, r->g, 2 * as->rank, dims);
    return give(r, 0, weft_reduce(r->cx, WEFT_R_SUM, split, axes, (size_t)as->rank, false));
}

/* g summed over each element's repeats (a's dims known but one). */
static int repeat_rule(const rule_in *r)
{
    const weft_spec *as = weft__value_spec(r->a);
    int axis = r->n->attr.index.axis;
    if (as->rank < 0 || as->rank >= WEFT_MAX_RANK)
        return unsupported(r, "of a rank unknown while tracing or of 8");
    axis = axis < 0 ? axis + as->rank : axis;
    int64_t dims[WEFT_MAX_RANK];
    int unknown = 0, at = 0;
    for (int d = 0; d < as->rank; d++) {
        unknown += as->dims[d] == WEFT_DIM_ANY;
        dims[at++] = as->dims[d];
        if (d == axis)
            dims[at++] = r->n->attr.index.count;
    }
    if (unknown > 1)
        return unsupported(r, "of an input with more than one dim unknown while tracing");
    weft_value *split = weft_reshape(r->cx, r->g, as->rank + 1, dims);
    return give(r, 0, weft_sum(r->cx, split, axis + 1));
}

/* The roll back: the opposite shift, fftshift's half undone by
 * ifftshift's. */
static int roll_rule(const rule_in *r)
{
    weft__node back = { .op = WEFT__OP_ROLL, .attr.index = r->n->attr.index };
    back.attr.index.count = -r->n->attr.index.count;
    back.attr.index.kind = r->n->attr.index.kind == 1 ? 2 : r->n->attr.index.kind == 2 ? 1 : 0;
    weft_value *g = r->g;
    return give(r, 0, weft__ops_finish(r->cx, &back, &g, 1));
}

/* ---- Scans ------------------------------------------------------------- */

/* cumulative_logsumexp: x_j gets exp(x_j) times the sum of g_i exp(-y_i)
 * over the y_i that summed it, a scan the other way.  TensorFlow's rule:
 * that scan in logs, the positive and negative parts of g apart (the
 * dtype's lowest number standing for the log of 0). */
static int logsumexp_scan_rule(const rule_in *r, int axis, unsigned back)
{
    weft_ctx *cx = r->cx;
    weft_value *lowest = k(r, weft__value_spec(r->g)->dtype == WEFT_F32 ? -FLT_MAX : -DBL_MAX);
    weft_value *part[2];
    for (int p = 0; p < 2; p++) {
        weft_value *mag = p == 0 ? r->g : weft_neg(cx, r->g);
        weft_value *log_g = weft_where(cx, weft_gt(cx, mag, k(r, 0.0)), weft_log(cx, mag), lowest);
        weft_value *sums = weft_cumulative_logsumexp(cx, weft_sub(cx, log_g, r->y), axis, back);
        part[p] = weft_exp(cx, weft_add(cx, sums, r->a));
    }
    return give(r, 0, weft_sub(cx, part[0], part[1]));
}

static int scan_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int axis = r->n->attr.axis.axis;
    unsigned back = r->n->attr.axis.scan ^ WEFT_SCAN_REVERSE;
    if (r->n->op == WEFT__OP_CUMSUM)
        return give(r, 0, weft_cumsum_ex(cx, r->g, axis, back));
    if (r->n->op == WEFT__OP_CUMLOGSUMEXP)
        return logsumexp_scan_rule(r, axis, back);
    /* cumprod: TensorFlow's rule, the reverse cumsum of y g over a (an
     * element of a that is 0 gives NaN or an infinity, as there). */
    return give(r, 0, weft_div(cx, weft_cumsum_ex(cx, weft_mul(cx, r->y, r->g), axis, back), r->a));
}

/* ---- Indexing ---------------------------------------------------------- */

/* d moved to the front of a rank-n permutation (into perm), and back (inv). */
static void to_front(int n, int from, int count, int *perm)
{
    int at = 0;
    for (int i = 0; i < count; i++)
        perm[at++] = from + i;
    for (int d = 0; d < n; d++)
        if (d < from || d >= from + count)
            perm[at++] = d;
}

/* g's rows added into zeros shaped like a at the indices `at` (one row of
 * at per row of g): a's dims [axis, axis + a_dims) are the ones indexed,
 * g's dims [axis, axis + g_dims) the rows.  At axis 0 one scatter_nd_add;
 * elsewhere the same after moving those dims to the front. */
static weft_value *scatter_back(const rule_in *r, weft_value *at, int axis, int a_dims,
                                int g_dims)
{
    weft_ctx *cx = r->cx;
    int ra = weft__grad_rank(r->a);
    if (axis == 0)
        return weft_scatter_nd_add(cx, weft_zeros_like(cx, r->a), at, r->g);
    int pa[WEFT_MAX_RANK], pg[WEFT_MAX_RANK], back[WEFT_MAX_RANK];
    to_front(ra, axis, a_dims, pa);
    to_front(ra - a_dims + g_dims, axis, g_dims, pg);
    for (int d = 0; d < ra; d++)
        back[pa[d]] = d;
    weft_value *a_t = weft_transpose(cx, r->a, pa), *g_t = weft_transpose(cx, r->g, pg);
    weft_value *sum = weft_scatter_nd_add(cx, weft_zeros_like(cx, a_t), at, g_t);
    return weft_transpose(cx, sum, back);
}

/* With batch dims b gathered along axis b (TensorFlow's default axis):
 * each row back to its batch's matrix, the tuples' batch coordinates
 * joined in front as weft_gather_nd_ex does.  Along a later axis the
 * gather is the same one of a with that axis moved to b, whose result
 * has the index dims before the dims they passed: a and g are moved so,
 * and the sum moved back. */
static int batch_gather_rule(const rule_in *r, int ra, int axis)
{
    weft_ctx *cx = r->cx;
    int b = r->n->attr.axis.batch;
    b = b < 0 ? b + weft__grad_rank(r->b) : b;
    const weft_spec *as = weft__value_spec(r->a);
    int64_t batch[WEFT_MAX_RANK];
    for (int d = 0; d < b && d < ra; d++)
        if ((batch[d] = as->dims[d]) == WEFT_DIM_ANY)
            return unsupported(r, "with a batch dim unknown while tracing");
    weft_value *a = r->a, *g = r->g;
    int pa[WEFT_MAX_RANK], pg[WEFT_MAX_RANK], back[WEFT_MAX_RANK];
    if (axis != b) {
        int n_idx = weft__grad_rank(r->b) - b, rg = ra - 1 + n_idx, at = 0;
        for (int d = 0; d < ra; d++)
            pa[d] = d < b ? d : d == b ? axis : d <= axis ? d - 1 : d;
        for (int d = 0; d < b; d++)
            pg[at++] = d;
        for (int i = 0; i < n_idx; i++)
            pg[at++] = axis + i;
        for (int d = b; d < rg; d++)
            if (d < axis || d >= axis + n_idx)
                pg[at++] = d;
        for (int d = 0; d < ra; d++)
            back[pa[d]] = d;
        a = weft_transpose(cx, a, pa);
        g = weft_transpose(cx, g, pg);
    }
    weft_value *tuples = weft__ops_batch_tuples(cx, weft_expand_dims(cx, r->b, -1), batch, b);
    weft_value *sum = weft_scatter_nd_add(cx, weft_zeros_like(cx, a), tuples, g);
    return give(r, 0, axis != b ? weft_transpose(cx, sum, back) : sum);
}

/* The gathered rows added back where they came from. */
static int gather_rule(const rule_in *r)
{
    int ra = weft__grad_rank(r->a), ri = weft__grad_rank(r->b), axis = r->n->attr.axis.axis;
    if (ra < 0 || ri < 0)
        return unsupported(r, "of a rank unknown while tracing");
    axis = axis < 0 ? axis + ra : axis;
    if (r->n->attr.axis.batch != 0)
        return batch_gather_rule(r, ra, axis);
    return give(r, 0, scatter_back(r, weft_expand_dims(r->cx, r->b, -1), axis, 1, ri));
}

/* The kept elements back to where the mask found them (argwhere's order
 * is the op's); the others get zeros. */
static int boolean_mask_rule(const rule_in *r)
{
    int ra = weft__grad_rank(r->a), rm = weft__grad_rank(r->b), axis = r->n->attr.index.axis;
    if (ra < 0 || rm < 0)
        return unsupported(r, "of a rank unknown while tracing");
    axis = axis < 0 ? axis + ra : axis;
    return give(r, 0, scatter_back(r, weft_argwhere(r->cx, r->b), axis, rm, 1));
}

/* ---- Sorting ----------------------------------------------------------- */

/* Each sorted element's gradient back to where it came from: the sort's
 * permutation (argsort, ties as the sort's own), inverted, picks g's
 * element of every input position (along the last axis, the others
 * moved there first). */
static int sort_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int rank = weft__grad_rank(r->a), axis = r->n->attr.sort.axis;
    if (rank < 1)
        return unsupported(r, "of a rank unknown while tracing");
    axis = axis < 0 ? axis + rank : axis;
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        perm[d] = d == axis ? rank - 1 : d == rank - 1 ? axis : d;
    weft_value *a = weft_transpose(cx, r->a, perm), *g = weft_transpose(cx, r->g, perm);
    weft_value *order = weft_argsort(cx, a, -1, r->n->attr.sort.descending);
    weft_value *place = weft_argsort(cx, order, -1, false);
    return give(r, 0, weft_transpose(cx, weft_gather_ex(cx, g, place, -1, rank - 1), perm));
}

/* top_k's values are a's elements at the indices along the last axis:
 * each g to its index, through a one-hot of the indices. */
static int top_k_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *as = weft__value_spec(r->a);
    int64_t n = as->rank >= 1 ? as->dims[as->rank - 1] : WEFT_DIM_ANY;
    if (n == WEFT_DIM_ANY)
        return unsupported(r, "of a last dim unknown while tracing");
    weft_value *hot = weft_one_hot(cx, r->b, n, as->dtype);          /* [..., k, n] */
    weft_value *spread = weft_mul(cx, hot, weft_expand_dims(cx, r->g, -1));
    return give(r, 0, weft_sum(cx, spread, -2));
}

/* A Gamma(alpha) draw's gradient in alpha (input 1, in f64): the
 * implicit derivative of the sample (TensorFlow's RandomGammaGrad); the
 * seed has none. */
static int random_gamma_rule(const rule_in *r)
{
    if (!wants(r, 1))
        return 0;
    weft_ctx *cx = r->cx;
    weft_value *d = weft_random_gamma_grad(cx, r->b, weft_cast(cx, r->y, WEFT_F64));
    return give(r, 1, weft_mul(cx, weft_cast(cx, r->g, WEFT_F64), d));
}

int weft__grad_array(const rule_in *r)
{
    switch (r->n->op) {
    case WEFT__OP_TRANSPOSE:
        return transpose_rule(r);
    case WEFT__OP_BROADCAST_TO:
        return give(r, 0, unbroadcast(r, r->g, r->a));
    case WEFT__OP_SLICE:
        return slice_rule(r);
    case WEFT__OP_SPLIT:
        return split_rule(r);
    case WEFT__OP_CONCAT: case WEFT__OP_STACK:
        return concat_rule(r);
    case WEFT__OP_TILE:
        return tile_rule(r);
    case WEFT__OP_REPEAT:
        return repeat_rule(r);
    case WEFT__OP_ROLL:
        return roll_rule(r);
    case WEFT__OP_CUMSUM: case WEFT__OP_CUMPROD: case WEFT__OP_CUMLOGSUMEXP:
        return scan_rule(r);
    case WEFT__OP_GATHER:
        return gather_rule(r);
    case WEFT__OP_GATHER_ND:
        return give(r, 0, weft_scatter_nd_add(r->cx, weft_zeros_like(r->cx, r->a), r->b, r->g));
    case WEFT__OP_BOOLEAN_MASK:
        return boolean_mask_rule(r);
    case WEFT__OP_ISOTONIC:
        return weft__grad_isotonic(r);
    case WEFT__OP_CROP_AND_RESIZE:
        return weft__grad_crop_and_resize(r);
    case WEFT__OP_SCATTER_ND_UPDATE: case WEFT__OP_SCATTER_ND_ADD: case WEFT__OP_SCATTER_ND_SUB:
    case WEFT__OP_SCATTER_ND_MAX: case WEFT__OP_SCATTER_ND_MIN:
        return weft__grad_scatter(r);
    case WEFT__OP_UNSORTED_SEGMENT: case WEFT__OP_SEGMENT:
        return weft__grad_segment(r);
    case WEFT__OP_CHECK_NUMERICS: case WEFT__OP_ASSERT:
        return give(r, 0, r->g);
    case WEFT__OP_FILL_LIKE: case WEFT__OP_SHAPE_OF:
        return 0;   /* they read only the input's shape */
    case WEFT__OP_SORT:
        return sort_rule(r);
    case WEFT__OP_TOP_K_VALUES:
        return top_k_rule(r);
    case WEFT__OP_CONV2D: case WEFT__OP_DEPTHWISE_CONV2D: case WEFT__OP_MAX_POOL2D:
    case WEFT__OP_AVG_POOL2D: case WEFT__OP_RESIZE: case WEFT__OP_CTC_LOSS:
    case WEFT__OP_FRACTIONAL_POOL: case WEFT__OP_IMAGE_TRANSFORM:
        return weft__grad_nn(r);
    case WEFT__OP_MATRIX_INVERSE: case WEFT__OP_MATRIX_SOLVE: case WEFT__OP_TRIANGULAR_SOLVE:
    case WEFT__OP_MATRIX_DETERMINANT: case WEFT__OP_CHOLESKY: case WEFT__OP_SLOGDET:
    case WEFT__OP_MATRIX_EXPONENTIAL: case WEFT__OP_TRIDIAGONAL_SOLVE: case WEFT__OP_MATRIX_SQRT:
    case WEFT__OP_MATRIX_LOG: case WEFT__OP_BANDED_SOLVE:
        return weft__grad_linalg(r);
    case WEFT__OP_FFT:
        return weft__grad_fft(r);
    case WEFT__OP_RANDOM_GAMMA:
        return random_gamma_rule(r);
    case WEFT__OP_EIGH: case WEFT__OP_QR: case WEFT__OP_SVD: case WEFT__OP_LU:
        return weft__grad_decomp(r);
    default:
        return unsupported(r, NULL);
    }
}
