/* NumPy's take and ravel_multi_index composed of weft_gather and integer
 * arithmetic, with NumPy's modes for an index out of range: fail the call
 * (RAISE, through the gather or weft_check), wrap it around (floor
 * modulo) or clip it into range. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* Whether mode is a weft_index_mode; the context fails naming fn if not. */
static bool mode_ok(weft_ctx *cx, const char *fn, weft_index_mode mode)
{
    if ((unsigned)mode <= WEFT_INDEX_CLIP)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: mode %d is not a weft_index_mode", fn, (int)mode);
    return false;
}

/* Whether v holds integer indices; the context fails naming fn if not. */
static bool integer_indices(weft_ctx *cx, const char *fn, weft_value *v)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->dtype == WEFT_I32 || s->dtype == WEFT_I64)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices %s are not i32 or i64", fn,
                   weft__spec_str(s, ss, sizeof ss));
    return false;
}

/* i64 indices i into a dim n (an i64 scalar) by mode: wrapped (floor
 * modulo) or clipped into [0, n); RAISE leaves them to the caller. */
static weft_value *in_range(weft_ctx *cx, weft_value *i, weft_value *n, weft_index_mode mode)
{
    switch (mode) {
    case WEFT_INDEX_WRAP: return weft_mod(cx, i, n);
    case WEFT_INDEX_CLIP:
        return weft_clip(cx, i, weft_const_i64(cx, 0), weft_sub(cx, n, weft_const_i64(cx, 1)));
    case WEFT_INDEX_RAISE: break;
    }
    return i;
}

weft_value *weft_take(weft_ctx *cx, weft_value *a, weft_value *indices, int axis,
                      weft_index_mode mode)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_take";
    weft_value *in[2] = { a, indices };
    if (!weft__op_enter(cx, fn, in, 2) || !mode_ok(cx, fn, mode) ||
        !integer_indices(cx, fn, indices))
        return NULL;
    if (axis == WEFT_ALL_AXES) {
        a = weft_ravel(cx, a);
        axis = 0;
    } else if (!weft__ops_axis_in(cx, fn, "a", a, &axis)) {
        return NULL;
    }
    weft_value *i = weft_cast(cx, indices, WEFT_I64);
    i = in_range(cx, i, weft__ops_dim(cx, a, axis), mode);
    return WEFT__KEEP(weft_gather(cx, a, i, axis));
}

weft_value *weft_ravel_multi_index(weft_ctx *cx, weft_value *const *multi_index, size_t n,
                                   const int64_t *dims, weft_index_mode mode)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ravel_multi_index";
    if (n < 1 || n > WEFT_MAX_RANK || !multi_index || !dims) {
        if (cx)
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu coordinates (1 to %d, with dims)", fn, n,
                           WEFT_MAX_RANK);
        return NULL;
    }
    if (!weft__op_enter(cx, fn, multi_index, n) || !mode_ok(cx, fn, mode))
        return NULL;
    int64_t size = 1;
    for (size_t k = 0; k < n; k++) {
        if (!integer_indices(cx, fn, multi_index[k]))
            return NULL;
        if (dims[k] < 1 || size > INT64_MAX / dims[k])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dims[%zu] %lld is not positive, or the "
                                  "dims' product overflows", fn, k, (long long)dims[k]);
        size *= dims[k];
    }
    /* Row-major: each coordinate times the product of the dims after it. */
    weft_value *flat = weft_const_i64(cx, 0), *ok = NULL;
    for (size_t k = 0, stride = (size_t)size; k < n; k++) {
        stride /= (size_t)dims[k];
        weft_value *d = weft_const_i64(cx, dims[k]);
        weft_value *c = in_range(cx, weft_cast(cx, multi_index[k], WEFT_I64), d, mode);
        if (mode == WEFT_INDEX_RAISE) {
            weft_value *inside = weft_logical_and(cx, weft_ge(cx, c, weft_const_i64(cx, 0)),
                                                  weft_lt(cx, c, d));
            ok = ok ? weft_logical_and(cx, ok, inside) : inside;
        }
        flat = weft_add(cx, flat, weft_mul(cx, c, weft_const_i64(cx, (int64_t)stride)));
    }
    if (ok)
        flat = weft_check(cx, flat, ok, "weft_ravel_multi_index: invalid entry in coordinates");
    return WEFT__KEEP(flat);
}
