/* NumPy's routines that build or edit arrays by position: indices,
 * trim_zeros, delete, insert, fill_diagonal and put_along_axis, as
 * functional forms (a new array where NumPy writes in place).  Positions
 * known while tracing become constant index tables; trim_zeros's length
 * depends on the values, so it is a boolean mask. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

weft_value *weft_indices(weft_ctx *cx, int rank, const int64_t *dims, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_indices";
    if (rank < 0 || rank >= WEFT_MAX_RANK || (rank > 0 && !dims))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: rank %d (0 to %d, dims given)", fn, rank,
                              WEFT_MAX_RANK - 1);
    if (weft_dtype_size(dtype) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: unknown dtype %d", fn, (int)dtype);
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: dims[%d] is %lld", fn, d,
                                  (long long)dims[d]);
    if (rank == 0)   /* NumPy's shape (0,) */
        return WEFT__KEEP(weft_fill(cx, dtype, 1, (const int64_t[]){ 0 }, 0.0));
    weft_value *grids[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        /* 0..dims[d] along axis d, broadcast along the others. */
        int64_t along[WEFT_MAX_RANK];
        for (int e = 0; e < rank; e++)
            along[e] = e == d ? dims[d] : 1;
        weft_value *r = weft_cast(cx, weft_range(cx, WEFT_I64, 0, dims[d], 1), dtype);
        grids[d] = weft_broadcast_to(cx, weft_reshape(cx, r, rank, along), rank, dims);
    }
    return WEFT__KEEP(weft_stack(cx, grids, (size_t)rank, 0));
}

weft_value *weft_trim_zeros(weft_ctx *cx, weft_value *filt, const char *trim)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_trim_zeros";
    if (!weft__op_enter(cx, fn, &filt, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(filt);
    if (s->rank != 1) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: filt %s is not a vector (rank known while "
                              "tracing)", fn, weft__spec_str(s, ss, sizeof ss));
    }
    if (!trim)
        trim = "fb";
    bool front = strpbrk(trim, "fF") != NULL, back = strpbrk(trim, "bB") != NULL;
    /* NumPy's test is i != 0. (so -0.0 is a zero and NaN is not); a
     * running count of the others from each trimmed end keeps the rest. */
    weft_value *nonzero = weft_ne(cx, filt, weft_zeros_like(cx, filt));
    weft_value *zero = weft_const_i64(cx, 0);
    weft_value *keep = weft_ones_like(cx, nonzero);
    if (front)
        keep = weft_logical_and(cx, keep, weft_gt(cx, weft_cumsum(cx, nonzero, 0), zero));
    if (back)
        keep = weft_logical_and(cx, keep, weft_gt(cx, weft_cumsum_ex(cx, nonzero, 0,
                                                                     WEFT_SCAN_REVERSE), zero));
    return WEFT__KEEP(weft_boolean_mask(cx, filt, keep, 0));
}

/* The dim of v along axis (checked and made non-negative), known while
 * tracing; -1 with the context failing otherwise. */
static int64_t known_dim(weft_ctx *cx, const char *fn, const char *name, weft_value *v, int *axis)
{
    if (!weft__ops_axis_in(cx, fn, name, v, axis))
        return -1;
    const weft_spec *s = weft__value_spec(v);
    if (s->dims[*axis] == WEFT_DIM_ANY) {
        char ss[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s has axis %d unknown while tracing", fn, name,
                       weft__spec_str(s, ss, sizeof ss), *axis);
        return -1;
    }
    return s->dims[*axis];
}

/* delete's and insert's start: obj checked against n_obj, *arr
 * flattened for axis WEFT_ALL_AXES (NumPy's None), and the length along
 * *axis (made non-negative) returned, known while tracing; -1 with the
 * context failing otherwise. */
static int64_t obj_axis(weft_ctx *cx, const char *fn, weft_value **arr, const int64_t *obj,
                        size_t n_obj, int *axis)
{
    if (n_obj > 0 && !obj) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: obj is NULL with n_obj %zu", fn, n_obj);
        return -1;
    }
    if (*axis == WEFT_ALL_AXES) {
        *arr = weft_ravel(cx, *arr);
        *axis = 0;
    }
    return known_dim(cx, fn, "arr", *arr, axis);
}

weft_value *weft_delete(weft_ctx *cx, weft_value *arr, const int64_t *obj, size_t n_obj, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_delete";
    if (!weft__op_enter(cx, fn, &arr, 1))
        return NULL;
    int64_t n = obj_axis(cx, fn, &arr, obj, n_obj, &axis);
    if (n < 0)
        return NULL;
    bool *gone = weft__calloc((size_t)n + 1, sizeof *gone);
    int64_t *keep = weft__calloc((size_t)n + 1, sizeof *keep);
    weft_value *r = NULL;
    if (!gone || !keep) {
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
        goto done;
    }
    for (size_t k = 0; k < n_obj; k++) {
        if (obj[k] < -n || obj[k] >= n) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: index %lld is out of bounds for axis %d with "
                           "size %lld", fn, (long long)obj[k], axis, (long long)n);
            goto done;
        }
        gone[obj[k] < 0 ? obj[k] + n : obj[k]] = true;
    }
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++)
        if (!gone[i])
            keep[kept++] = i;
    weft_value *at = weft__ops_constant(cx, fn, WEFT_I64, 1, &kept, keep, WEFT_I64);
    r = weft_gather(cx, arr, at, axis);
done:
    weft__free(gone);
    weft__free(keep);
    return weft_ctx_status(cx) == 0 ? WEFT__KEEP(r) : NULL;
}

/* A new slice of np.insert with several indices: its index (made
 * non-negative) and its place j in obj. */
typedef struct insert_at {
    int64_t at;
    size_t j;
} insert_at;

/* NumPy's stable order: by index, equal ones in the order given. */
static int insert_at_cmp(const void *x, const void *y)
{
    const insert_at *a = x, *b = y;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* np.insert's positions: where each of the numnew new slices lands in the
 * result along the axis (n_obj 1: numnew slices in a row from obj[0];
 * otherwise the t-th of obj in NumPy's stable order lands t past its
 * index), and from them the source of every result slice in [arr, values]
 * joined along the axis.  False when an index is out of bounds or memory
 * runs out (the context failed). */
static bool insert_sources(weft_ctx *cx, const char *fn, const int64_t *obj, size_t n_obj,
                           int axis, int64_t n, int64_t numnew, int64_t *src)
{
    int64_t total = n + numnew;
    for (int64_t p = 0; p < total; p++)
        src[p] = -1;
    for (size_t k = 0; k < n_obj; k++)
        if (obj[k] < -n || obj[k] > n)
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: index %lld is out of bounds for axis "
                                  "%d with size %lld", fn, (long long)obj[k], axis,
                                  (long long)n), false;
    if (n_obj == 1) {
        int64_t at = obj[0] < 0 ? obj[0] + n : obj[0];
        for (int64_t j = 0; j < numnew; j++)
            src[at + j] = n + j;
    } else if (n_obj > 1) {
        insert_at *order = weft__calloc(n_obj, sizeof *order);
        if (!order)
            return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn), false;
        for (size_t j = 0; j < n_obj; j++)
            order[j] = (insert_at){ obj[j] < 0 ? obj[j] + n : obj[j], j };
        qsort(order, n_obj, sizeof *order, insert_at_cmp);
        for (size_t t = 0; t < n_obj; t++)
            src[order[t].at + (int64_t)t] = n + (int64_t)order[t].j;
        weft__free(order);
    }
    int64_t next = 0;
    for (int64_t p = 0; p < total; p++)
        if (src[p] < 0)
            src[p] = next++;
    return true;
}

weft_value *weft_insert(weft_ctx *cx, weft_value *arr, const int64_t *obj, size_t n_obj,
                        weft_value *values, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_insert";
    weft_value *in[2] = { arr, values };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    int64_t n = obj_axis(cx, fn, &arr, obj, n_obj, &axis);
    if (n < 0)
        return NULL;
    const weft_spec *as = weft__value_spec(arr), *vs = weft__value_spec(values);
    char ss[WEFT__SPEC_STR_MAX], ss2[WEFT__SPEC_STR_MAX];
    for (int d = 0; d < as->rank; d++)
        if (as->dims[d] == WEFT_DIM_ANY)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s has dims unknown while tracing",
                                  fn, weft__spec_str(as, ss, sizeof ss));
    if (vs->rank > as->rank)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: values %s has more dims than arr %s", fn,
                              weft__spec_str(vs, ss, sizeof ss),
                              weft__spec_str(as, ss2, sizeof ss2));
    /* One index: values as NumPy's array(values, ndmin=arr.ndim), as many
     * new slices as it has along the axis; several: one slice each. */
    int64_t numnew = (int64_t)n_obj;
    if (n_obj == 1) {
        int64_t along = axis < as->rank - vs->rank ? 1 : vs->dims[axis - (as->rank - vs->rank)];
        if (along == WEFT_DIM_ANY)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: values %s has its length along axis "
                                  "%d unknown while tracing", fn,
                                  weft__spec_str(vs, ss, sizeof ss), axis);
        numnew = along;
    }
    if (numnew > INT64_MAX - n)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s and values %s make too long an "
                              "axis", fn, weft__spec_str(as, ss, sizeof ss),
                              weft__spec_str(vs, ss2, sizeof ss2));
    int64_t dims[WEFT_MAX_RANK], total = n + numnew;
    memcpy(dims, as->dims, sizeof *dims * (size_t)as->rank);
    dims[axis] = numnew;
    int64_t *src = weft__calloc((size_t)total + 1, sizeof *src);
    if (!src)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    weft_value *r = NULL;
    if (insert_sources(cx, fn, obj, n_obj, axis, n, numnew, src)) {
        weft_value *fresh = weft_broadcast_to(cx, weft_cast(cx, values, as->dtype),
                                              as->rank, dims);
        weft_value *both = weft_concat(cx, (weft_value *[]){ arr, fresh }, 2, axis);
        weft_value *at = weft__ops_constant(cx, fn, WEFT_I64, 1, &total, src, WEFT_I64);
        r = weft_gather(cx, both, at, axis);
    }
    weft__free(src);
    return weft_ctx_status(cx) == 0 ? WEFT__KEEP(r) : NULL;
}

/* NumPy's flat step between diagonal elements and the flat end (a's
 * element count when wrapping); false with the context failing on a
 * shape NumPy refuses. */
static bool diagonal_walk(weft_ctx *cx, const char *fn, const weft_spec *s, bool wrap,
                          int64_t *step, int64_t *end)
{
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank < 2)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s is not at least 2-d (rank known while "
                              "tracing)", fn, weft__spec_str(s, ss, sizeof ss)), false;
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] == WEFT_DIM_ANY)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s has dims unknown while tracing",
                                  fn, weft__spec_str(s, ss, sizeof ss)), false;
        if (s->rank > 2 && s->dims[d] != s->dims[0])
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s has dims of different lengths", fn,
                                  weft__spec_str(s, ss, sizeof ss)), false;
    }
    int64_t n;
    if (!weft__numel_checked(s->rank, s->dims, 1, &n))
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s has too many elements", fn,
                              weft__spec_str(s, ss, sizeof ss)), false;
    int64_t cols = s->dims[s->rank - 1];
    if (s->rank == 2) {   /* without wrap, min(cols * cols, n), which may overflow */
        *step = cols + 1;
        *end = wrap || cols == 0 || cols > n / cols ? n : cols * cols;
        return true;
    }
    /* 1 + the sum of the cumulative products of the dims but the last. */
    int64_t prod = 1;
    *step = 1;
    for (int d = 0; d < s->rank - 1; d++) {
        prod *= s->dims[d];
        *step += prod;
    }
    *end = n;
    return true;
}

weft_value *weft_fill_diagonal(weft_ctx *cx, weft_value *a, weft_value *val, bool wrap)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_fill_diagonal";
    weft_value *in[2] = { a, val };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *s = weft__value_spec(a), *sv = weft__value_spec(val);
    int64_t step, end, n_val;
    if (!diagonal_walk(cx, fn, s, wrap, &step, &end))
        return NULL;
    if (sv->rank < 0 || !weft__numel_checked(sv->rank, sv->dims, 1, &n_val) || n_val == 0) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: val %s is empty or has dims unknown while "
                              "tracing", fn, weft__spec_str(sv, ss, sizeof ss));
    }
    /* The j-th diagonal element sits at j * step of the flat array and
     * takes val's element j % n_val (NumPy's flat assignment repeats
     * val). */
    int64_t count = end > 0 ? (end - 1) / step + 1 : 0;
    int64_t *at = weft__calloc((size_t)count + 1, sizeof *at);
    int64_t *from = weft__calloc((size_t)count + 1, sizeof *from);
    weft_value *r = NULL;
    if (!at || !from) {
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    } else {
        for (int64_t j = 0; j < count; j++) {
            at[j] = j * step;
            from[j] = j % n_val;
        }
        weft_value *flat = weft_ravel(cx, a);
        weft_value *values = weft_ravel(cx, weft_cast(cx, val, s->dtype));
        weft_value *pos = weft__ops_constant(cx, fn, WEFT_I64, 2, (const int64_t[]){ count, 1 },
                                             at, WEFT_I64);
        weft_value *pick = weft__ops_constant(cx, fn, WEFT_I64, 1, &count, from, WEFT_I64);
        weft_value *diagonal = weft_gather(cx, values, pick, 0);
        weft_value *filled = weft_scatter_nd_update(cx, flat, pos, diagonal);
        r = weft_reshape(cx, filled, s->rank, s->dims);
    }
    weft__free(at);
    weft__free(from);
    return weft_ctx_status(cx) == 0 ? WEFT__KEEP(r) : NULL;
}

/* indices's dims against arr's (rank r, all known while tracing): equal
 * or 1 off axis, where they broadcast to arr's; the scatter's index grid
 * into dims.  False with the context failing otherwise. */
static bool put_dims(weft_ctx *cx, const char *fn, const weft_spec *sa, const weft_spec *si,
                     int axis, int64_t *dims)
{
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    for (int d = 0; d < sa->rank; d++) {
        bool known = sa->dims[d] != WEFT_DIM_ANY && si->dims[d] != WEFT_DIM_ANY;
        if (!known || (d != axis && si->dims[d] != sa->dims[d] && si->dims[d] != 1))
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: indices %s do not broadcast to arr %s "
                                  "off axis %d (dims known while tracing)", fn,
                                  weft__spec_str(si, s1, sizeof s1),
                                  weft__spec_str(sa, s2, sizeof s2), axis), false;
        dims[d] = d == axis ? si->dims[d] : sa->dims[d];
    }
    return true;
}

weft_value *weft_put_along_axis(weft_ctx *cx, weft_value *arr, weft_value *indices,
                                weft_value *values, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_put_along_axis";
    weft_value *in[3] = { arr, indices, values };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    const weft_spec *sa = weft__value_spec(arr), *si = weft__value_spec(indices);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (si->dtype != WEFT_I32 && si->dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices %s are not i32 or i64", fn,
                              weft__spec_str(si, s1, sizeof s1));
    if (axis == WEFT_ALL_AXES) {   /* NumPy's None: into arr flattened, arr's shape kept */
        if (sa->rank < 0)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s has a rank unknown while tracing",
                                  fn, weft__spec_str(sa, s1, sizeof s1));
        weft_value *flat = weft_put_along_axis(cx, weft_ravel(cx, arr), indices, values, 0);
        return WEFT__KEEP(weft_reshape(cx, flat, sa->rank, sa->dims));
    }
    if (sa->rank < 1 || si->rank != sa->rank)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s and indices %s have not one rank of 1 "
                              "or more, known while tracing", fn, weft__spec_str(sa, s1, sizeof s1),
                              weft__spec_str(si, s2, sizeof s2));
    int64_t dims[WEFT_MAX_RANK];
    if (!weft__ops_axis_in(cx, fn, "arr", arr, &axis) || !put_dims(cx, fn, sa, si, axis, dims))
        return NULL;
    int r = sa->rank;
    /* Each element's index tuple: its own position off axis, its index
     * (from the end where negative, as NumPy's) along it. */
    weft_value *parts[WEFT_MAX_RANK];
    if (weft_unstack(cx, weft_indices(cx, r, dims, WEFT_I64), 0, (size_t)r, parts) != 0)
        return NULL;
    weft_value *at = weft_broadcast_to(cx, weft_cast(cx, indices, WEFT_I64), r, dims);
    weft_value *n = weft_const_i64(cx, sa->dims[axis]), *zero = weft_const_i64(cx, 0);
    at = weft_where(cx, weft_lt(cx, at, zero), weft_add(cx, at, n), at);
    weft_value *inside = weft_logical_and(cx, weft_ge(cx, at, zero), weft_lt(cx, at, n));
    parts[axis] = weft__ops_checkf(cx, at, inside, "%s: an index is out of range for axis %d of "
                                   "length %lld", fn, axis, (long long)sa->dims[axis]);
    weft_value *tuples = weft_stack(cx, parts, (size_t)r, -1);
    weft_value *v = weft_broadcast_to(cx, weft_cast(cx, values, sa->dtype), r, dims);
    return WEFT__KEEP(weft_scatter_nd_update(cx, arr, tuples, v));
}
