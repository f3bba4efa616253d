/* Shape and dtype inference for single nodes (weft__infer_spec).
 *
 * Broadcasting follows NumPy, extended to unknown dims: an unknown dim
 * against 1 stays unknown, against a known n != 1 becomes n (if the unknown
 * dim turns out to be something else, the concrete re-inference in
 * weft__kernel_eval reports it).  Dtype rules beyond kernels.h's invariant:
 * comparisons and the tests (is_nan, is_inf, is_finite) give bool; the
 * elementwise ops take the dtypes of their class (ew_rules.h: arithmetic
 * refuses bool, the float functions take floats only, the logical ops
 * bool only); sum and prod of bool give i64 (a
 * count), of any other dtype keep it (integers wrap); mean accepts floats
 * only (ops.c casts integers to f64 first); max and min keep the dtype.  Leaves: ARG
 * returns n->spec, FILL its shape and dtype from n->spec, RANGE its dtype
 * from n->spec.dtype (the node has no other place for them). */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ew_rules.h"
#include "trace/kernels.h"
#include "trace/shape.h"

static bool dtype_ok(weft_dtype dt) { return (unsigned)dt <= (unsigned)WEFT_F64; }

/* Checks a spec given as an input: known dtype, rank in range, dims >= -1. */
static int check_in(const weft__node *n, const weft_spec *s, uint32_t i)
{
    if (!dtype_ok(s->dtype))
        return weft__errorf(WEFT_EDTYPE, "weft_%s: input %u has an invalid dtype %d",
                            weft__op_name(n->op), (unsigned)i, (int)s->dtype);
    if (s->rank == WEFT_RANK_ANY)
        return 0;
    if (s->rank < 0 || s->rank > WEFT_MAX_RANK)
        return weft__errorf(WEFT_EINVAL, "weft_%s: input %u has an invalid rank %d",
                            weft__op_name(n->op), (unsigned)i, s->rank);
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < WEFT_DIM_ANY)
            return weft__errorf(WEFT_EINVAL, "weft_%s: input %u has a negative dim %lld",
                                weft__op_name(n->op), (unsigned)i, (long long)s->dims[d]);
    return 0;
}

static int err_pair(int code, const weft__node *n, const weft_spec *a, const weft_spec *b,
                    const char *what)
{
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    return weft__errorf(code, "weft_%s: %s and %s %s", weft__op_name(n->op),
                        weft__spec_str(a, sa, sizeof sa), weft__spec_str(b, sb, sizeof sb), what);
}

/* NumPy broadcasting of k specs into out's rank and dims (dtype untouched). */
static int broadcast(const weft__node *n, const weft_spec *in, uint32_t k, weft_spec *out)
{
    int rank = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (in[i].rank == WEFT_RANK_ANY) {
            out->rank = WEFT_RANK_ANY;
            return 0;
        }
        if (in[i].rank > rank)
            rank = in[i].rank;
    }
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        int64_t dim = 1;          /* the result so far: 1, unknown or known n */
        int from = -1;            /* the input that set a known dim != 1 */
        for (uint32_t i = 0; i < k; i++) {
            int j = d - (rank - in[i].rank);
            if (j < 0)
                continue;
            int64_t v = in[i].dims[j];
            if (v == 1)
                continue;
            if (v == WEFT_DIM_ANY) {
                if (dim == 1)
                    dim = WEFT_DIM_ANY;
                continue;
            }
            if (dim == 1 || dim == WEFT_DIM_ANY) {
                dim = v;
                from = (int)i;
            } else if (dim != v) {
                return err_pair(WEFT_ESHAPE, n, &in[from], &in[i], "do not broadcast");
            }
        }
        out->dims[d] = dim;
    }
    return 0;
}

/* An elementwise op of three operands of one dtype (betainc). */
static int infer_ternary(const weft__node *n, const weft_spec *in, weft_spec *r)
{
    for (int k = 1; k < 3; k++)
        if (in[k].dtype != in[0].dtype)
            return err_pair(WEFT_EDTYPE, n, &in[0], &in[k], "have different dtypes");
    int rc = weft__ew_check(n, in);
    if (rc < 0)
        return rc;
    rc = broadcast(n, in, 3, r);
    r->dtype = in[0].dtype;
    return rc;
}

static int infer_range(const weft__node *n, weft_spec *out)
{
    int64_t start = n->attr.range.start, limit = n->attr.range.limit, delta = n->attr.range.delta;
    if (delta == 0)
        return weft__errorf(WEFT_EINVAL, "weft_range: delta is 0");
    if (n->spec.dtype == WEFT_BOOL || !dtype_ok(n->spec.dtype))
        return weft__errorf(WEFT_EDTYPE, "weft_range: dtype must be i32, i64, f32 or f64");
    /* ceil((limit - start) / delta) without overflow: the distance fits
     * in uint64_t whenever it is positive. */
    uint64_t dist = 0, step = 1;
    if (delta > 0 && limit > start) {
        dist = (uint64_t)limit - (uint64_t)start;
        step = (uint64_t)delta;
    } else if (delta < 0 && limit < start) {
        dist = (uint64_t)start - (uint64_t)limit;
        step = 0u - (uint64_t)delta;
    }
    uint64_t len = dist / step + (dist % step != 0);
    if (len > (uint64_t)INT64_MAX)
        return weft__errorf(WEFT_ESHAPE, "weft_range: too many elements");
    out->dtype = n->spec.dtype;
    out->rank = 1;
    out->dims[0] = (int64_t)len;
    return 0;
}

static int infer_leaf(const weft__node *n, weft_spec *out)
{
    switch (n->op) {
    case WEFT__OP_ARG:
        *out = n->spec;   /* an argument's spec is given, not inferred */
        return 0;
    case WEFT__OP_CONST:
        if (!n->attr.constant.value)
            return weft__errorf(WEFT_EINVAL, "weft_const: no value");
        weft__tensor_spec(n->attr.constant.value, out);
        return 0;
    case WEFT__OP_FILL: {
        int rc = check_in(n, &n->spec, 0);
        if (rc < 0)
            return rc;
        if (n->spec.rank == WEFT_RANK_ANY)
            return weft__errorf(WEFT_EINVAL, "weft_fill: the shape must have a known rank");
        *out = n->spec;
        return 0;
    }
    case WEFT__OP_RANGE:
        return infer_range(n, out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: not a leaf op", weft__op_name(n->op));
    }
}

static int infer_reduce(const weft__node *n, const weft_spec *a, weft_spec *out)
{
    const char *name = weft__op_name(n->op);
    if (n->op == WEFT__OP_MEAN && !weft__dtype_is_float(a->dtype)) {
        char sa[WEFT__SPEC_STR_MAX];
        return weft__errorf(WEFT_EDTYPE, "weft_%s: %s is not a float tensor", name,
                            weft__spec_str(a, sa, sizeof sa));
    }
    /* Sums and products of bool count in i64, as NumPy does. */
    bool widen = (n->op == WEFT__OP_SUM || n->op == WEFT__OP_PROD) && a->dtype == WEFT_BOOL;
    out->dtype = widen ? WEFT_I64 : a->dtype;
    const struct weft__reduce_axes *r = &n->attr.reduce;
    if (a->rank == WEFT_RANK_ANY) {
        /* Every axis without keepdims is a scalar whatever the rank. */
        out->rank = r->n_axes == 0 && !r->keepdims ? 0 : WEFT_RANK_ANY;
        return 0;
    }
    unsigned mask;
    int rc = weft__reduce_mask(n, NULL, a, &mask);
    if (rc < 0)
        return rc;
    out->rank = 0;
    for (int d = 0; d < a->rank; d++) {
        if (!(mask & (1u << d)))
            out->dims[out->rank++] = a->dims[d];
        else if (r->keepdims)
            out->dims[out->rank++] = 1;
    }
    return 0;
}

static void format_dims(int rank, const int64_t *dims, char *buf, size_t size)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
}

static int reshape_fail(const weft_spec *a, int rank, const int64_t *dims, const char *why)
{
    char sa[WEFT__SPEC_STR_MAX], sd[WEFT__SPEC_STR_MAX];
    format_dims(rank, dims, sd, sizeof sd);
    return weft__errorf(WEFT_ESHAPE, "weft_reshape: cannot reshape %s into %s: %s",
                        weft__spec_str(a, sa, sizeof sa), sd, why);
}

static int infer_reshape(const weft_spec *a, const weft__node *n, weft_spec *out)
{
    int rank = n->attr.reshape.rank;
    const int64_t *dims = n->attr.reshape.dims;
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__errorf(WEFT_EINVAL, "weft_reshape: invalid rank %d", rank);
    int wild = -1;
    int64_t known = 1;    /* the product of the given dims, saturated */
    bool overflow = false;
    for (int d = 0; d < rank; d++) {
        if (dims[d] == -1) {
            if (wild >= 0)
                return weft__errorf(WEFT_EINVAL, "weft_reshape: more than one -1 dim");
            wild = d;
        } else if (dims[d] < 0) {
            return weft__errorf(WEFT_EINVAL, "weft_reshape: negative dim %lld",
                                (long long)dims[d]);
        } else if (dims[d] != 0 && known > INT64_MAX / dims[d]) {
            overflow = true;
        } else {
            known *= dims[d];
        }
    }
    out->dtype = a->dtype;
    out->rank = rank;
    memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
    bool numel_known = a->rank != WEFT_RANK_ANY;
    for (int d = 0; numel_known && d < a->rank; d++)
        if (a->dims[d] == WEFT_DIM_ANY)
            numel_known = false;
    if (!numel_known)
        return 0;   /* a -1 dim stays unknown (WEFT_DIM_ANY is -1) */
    int64_t numel = 0;
    if (!weft__numel_checked(a->rank, a->dims, 1, &numel))
        return reshape_fail(a, rank, dims, "too many elements");
    if (overflow)
        return reshape_fail(a, rank, dims, "too many elements");
    if (wild >= 0) {
        if (known == 0)
            return reshape_fail(a, rank, dims, "the -1 dim is ambiguous");
        if (numel % known != 0)
            return reshape_fail(a, rank, dims, "the element counts differ");
        out->dims[wild] = numel / known;
    } else if (known != numel) {
        return reshape_fail(a, rank, dims, "the element counts differ");
    }
    return 0;
}

/* NumPy's matmul: a 1-D a is a row [1,k] and a 1-D b a column [k,1] (the
 * added dim is dropped from the result), the dims before the last two are
 * batch dims that broadcast, and a transpose flag swaps a matrix's last two
 * dims first.  Unknown dims stay unknown; an unknown rank gives one. */
static int infer_matmul(const weft__node *n, const weft_spec *a, const weft_spec *b, weft_spec *out)
{
    unsigned flags = n->attr.matmul.flags;
    if (flags & ~(WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B))
        return weft__errorf(WEFT_EINVAL, "weft_matmul: unknown flags 0x%x", flags);
    if (a->dtype != b->dtype)
        return err_pair(WEFT_EDTYPE, n, a, b, "have different dtypes");
    if (a->rank == 0 || b->rank == 0)
        return err_pair(WEFT_ESHAPE, n, a, b, "include a scalar (matmul needs 1-D or more)");
    const weft_spec *vec = (flags & WEFT_TRANSPOSE_A) && a->rank == 1 ? a
                         : (flags & WEFT_TRANSPOSE_B) && b->rank == 1 ? b : NULL;
    if (vec) {
        char sv[WEFT__SPEC_STR_MAX];
        return weft__errorf(WEFT_ESHAPE, "weft_matmul: %s transposes a matrix, not the vector %s",
                            vec == a ? "WEFT_TRANSPOSE_A" : "WEFT_TRANSPOSE_B",
                            weft__spec_str(vec, sv, sizeof sv));
    }
    out->dtype = a->dtype;
    if (a->rank == WEFT_RANK_ANY || b->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        return 0;
    }
    bool ta = flags & WEFT_TRANSPOSE_A, tb = flags & WEFT_TRANSPOSE_B;
    int ra = a->rank, rb = b->rank;
    int64_t ak = ra == 1 ? a->dims[0] : a->dims[ta ? ra - 2 : ra - 1];
    int64_t bk = rb == 1 ? b->dims[0] : b->dims[tb ? rb - 1 : rb - 2];
    if (ak != WEFT_DIM_ANY && bk != WEFT_DIM_ANY && ak != bk)
        return err_pair(WEFT_ESHAPE, n, a, b,
                        ta && tb ? "have different inner dims (with both transposed)"
                        : ta     ? "have different inner dims (with a transposed)"
                        : tb     ? "have different inner dims (with b transposed)"
                                 : "have different inner dims");
    weft_spec batch[2] = { { .rank = ra > 2 ? ra - 2 : 0 }, { .rank = rb > 2 ? rb - 2 : 0 } };
    memcpy(batch[0].dims, a->dims, sizeof(int64_t) * (size_t)batch[0].rank);
    memcpy(batch[1].dims, b->dims, sizeof(int64_t) * (size_t)batch[1].rank);
    if (broadcast(n, batch, 2, out) < 0)
        return err_pair(WEFT_ESHAPE, n, a, b, "have batch dims that do not broadcast");
    if (ra > 1)
        out->dims[out->rank++] = a->dims[ta ? ra - 1 : ra - 2];
    if (rb > 1)
        out->dims[out->rank++] = b->dims[tb ? rb - 2 : rb - 1];
    return 0;
}

static bool is_comparison(weft__op op)
{
    return op == WEFT__OP_EQ || op == WEFT__OP_NE || op == WEFT__OP_LT || op == WEFT__OP_LE ||
           op == WEFT__OP_GT || op == WEFT__OP_GE;
}

/* A result whose known dims already hold more bytes than an address space
 * (matmul [n,0] x [0,m] with huge n and m) is refused here, naming the op,
 * rather than when its buffer is allocated. */
static int check_result_size(const weft__node *n, const weft_spec *r)
{
    if (r->rank == WEFT_RANK_ANY)
        return 0;
    int64_t known[WEFT_MAX_RANK];
    for (int d = 0; d < r->rank; d++)
        known[d] = r->dims[d] == WEFT_DIM_ANY ? 1 : r->dims[d];
    int64_t numel;
    if (weft__numel_checked(r->rank, known, weft_dtype_size(r->dtype), &numel))
        return 0;
    char sr[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_EINVAL, "weft_%s: the result %s overflows the address space",
                        weft__op_name(n->op), weft__spec_str(r, sr, sizeof sr));
}

int weft__infer_spec(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    if (!n || !out || (n->n_in > 0 && !in))
        return weft__errorf(WEFT_EINVAL, "weft__infer_spec: NULL argument");
    if ((unsigned)n->op >= (unsigned)WEFT__OP_COUNT)
        return weft__errorf(WEFT_EINVAL, "weft__infer_spec: invalid op %d", (int)n->op);
    weft__op_kind kind = weft__op_kind_of(n->op);
    static const uint32_t arity[] = {
        [WEFT__KIND_LEAF] = 0, [WEFT__KIND_UNARY] = 1, [WEFT__KIND_BINARY] = 2,
        [WEFT__KIND_TERNARY] = 3, [WEFT__KIND_CAST] = 1, [WEFT__KIND_REDUCE] = 1,
        [WEFT__KIND_SHAPE] = 1, [WEFT__KIND_MATMUL] = 2,
    };
    if (kind == WEFT__KIND_MAP || kind == WEFT__KIND_HOST || kind == WEFT__KIND_FUSED ||
        kind == WEFT__KIND_CONTROL || kind == WEFT__KIND_RESULT)
        return weft__errorf(WEFT_EINVAL, "weft_%s: no inference for this op",
                            weft__op_name(n->op));
    if (kind != WEFT__KIND_ARRAY && n->n_in != arity[kind])   /* ARRAY: checked by its op */
        return weft__errorf(WEFT_EINVAL, "weft_%s: %u inputs, expected %u", weft__op_name(n->op),
                            (unsigned)n->n_in, (unsigned)arity[kind]);
    for (uint32_t i = 0; i < n->n_in; i++) {
        int rc = check_in(n, &in[i], i);
        if (rc < 0)
            return rc;
    }
    weft_spec r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    switch (kind) {
    case WEFT__KIND_LEAF:
        rc = infer_leaf(n, &r);
        break;
    case WEFT__KIND_UNARY:
        if ((rc = weft__ew_check(n, in)) < 0)
            break;
        r = in[0];
        if (weft__ew_class_of(n->op) == WEFT__EW_TEST)
            r.dtype = WEFT_BOOL;
        break;
    case WEFT__KIND_CAST:
        if (!dtype_ok(n->attr.cast.to)) {
            rc = weft__errorf(WEFT_EDTYPE, "weft_cast: invalid target dtype %d",
                              (int)n->attr.cast.to);
            break;
        }
        r = in[0];
        r.dtype = n->attr.cast.to;
        break;
    case WEFT__KIND_BINARY:
        if (in[0].dtype != in[1].dtype) {
            rc = err_pair(WEFT_EDTYPE, n, &in[0], &in[1], "have different dtypes");
            break;
        }
        if ((rc = weft__ew_check(n, in)) < 0)
            break;
        rc = broadcast(n, in, 2, &r);
        r.dtype = is_comparison(n->op) ? WEFT_BOOL : in[0].dtype;
        break;
    case WEFT__KIND_TERNARY:
        if (n->op != WEFT__OP_WHERE) {
            rc = infer_ternary(n, in, &r);
            break;
        }
        if (in[0].dtype != WEFT_BOOL) {
            char sa[WEFT__SPEC_STR_MAX];
            rc = weft__errorf(WEFT_EDTYPE, "weft_where: the condition %s is not bool",
                              weft__spec_str(&in[0], sa, sizeof sa));
            break;
        }
        if (in[1].dtype != in[2].dtype) {
            rc = err_pair(WEFT_EDTYPE, n, &in[1], &in[2], "have different dtypes");
            break;
        }
        rc = broadcast(n, in, 3, &r);
        r.dtype = in[1].dtype;
        break;
    case WEFT__KIND_REDUCE:
        rc = infer_reduce(n, &in[0], &r);
        break;
    case WEFT__KIND_SHAPE:
        rc = n->op == WEFT__OP_RESHAPE ? infer_reshape(&in[0], n, &r)
                                       : weft__infer_shape_op(n, in, &r);
        break;
    case WEFT__KIND_ARRAY:
        rc = weft__infer_shape_op(n, in, &r);
        break;
    case WEFT__KIND_MATMUL:
        rc = infer_matmul(n, &in[0], &in[1], &r);
        break;
    default:
        rc = weft__errorf(WEFT_EINVAL, "weft_%s: no inference for this op", weft__op_name(n->op));
        break;
    }
    if (rc < 0)
        return rc;
    if ((rc = check_result_size(n, &r)) < 0)
        return rc;
    *out = r;
    return 0;
}
