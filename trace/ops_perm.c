/* tf.math.invert_permutation and tf.compat.v1.setdiff1d (ListDiff), as
 * compositions of sort, argsort, searchsorted, gather and boolean_mask:
 * eager mode, tracing and unknown lengths come with them.  Both take
 * vectors; the checks come first, so that an error names the public op. */
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* what (a value of fn) is a vector: rank 1, known while tracing. */
static bool need_vector(weft_ctx *cx, const char *fn, const char *what, const weft_value *v)
{
    if (spec_of(v)->rank == 1)
        return true;
    char s[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, spec_of(v)->rank == WEFT_RANK_ANY ? WEFT_EINVAL : WEFT_ESHAPE,
                   "%s: %s is %s, not a vector (rank 1, known while tracing)", fn, what,
                   weft__spec_str(spec_of(v), s, sizeof s));
    return false;
}

weft_value *weft_invert_permutation(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_invert_permutation";
    if (!weft__op_enter(cx, fn, &x, 1) || !need_vector(cx, fn, "x", x))
        return NULL;
    weft_dtype dt = spec_of(x)->dtype;
    if (dt != WEFT_I32 && dt != WEFT_I64) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: x is %s, not i32 or i64", fn,
                              weft__spec_str(spec_of(x), s, sizeof s));
    }
    /* y[x[i]] = i is the order that sorts x, which is a permutation of
     * 0..n-1 exactly when x sorted is 0..n-1. */
    weft_value *order = weft_argsort(cx, x, 0, false);
    weft_value *sorted = weft_cast(cx, weft_gather(cx, x, order, 0), WEFT_I64);
    weft_value *ok = weft_eq(cx, sorted, weft__ops_axis0_range(cx, x));
    weft_value *y = weft_check(cx, weft_cast(cx, order, dt), ok,
                               "weft_invert_permutation: x is not a permutation of 0 .. n-1");
    return WEFT__KEEP(y);
}

weft_value *weft__ops_found_in(weft_ctx *cx, weft_value *x, weft_value *y)
{
    weft_value *sorted = weft_sort(cx, y, 0, false);
    weft_value *at = weft_searchsorted(cx, sorted, x, false);
    /* One element more, so that an x past every y still reads one. */
    weft_value *padded = weft_pad(cx, sorted, (const int64_t[][2]){ { 0, 1 } }, 0.0);
    weft_value *inside = weft_lt(cx, at, weft__ops_dim0(cx, y));
    weft_value *equal = weft_eq(cx, weft_gather(cx, padded, at, 0), x);
    return weft_logical_and(cx, inside, equal);
}

int weft_setdiff1d(weft_ctx *cx, weft_value *x, weft_value *y, weft_dtype index_dtype,
                   weft_value **outs)
{
    static const char fn[] = "weft_setdiff1d";
    weft_value *in[2] = { x, y };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 2);
    if (rc < 0)
        return rc;
    WEFT__SCOPE_OUTS(cx, outs, 2);
    char sx[WEFT__SPEC_STR_MAX], sy[WEFT__SPEC_STR_MAX];
    if (!need_vector(cx, fn, "x", x) || !need_vector(cx, fn, "y", y))
        return weft_ctx_status(cx);
    if (spec_of(x)->dtype != spec_of(y)->dtype || spec_of(x)->dtype == WEFT_BOOL)
        return weft__ctx_failf(cx, WEFT_EDTYPE, "%s: x is %s and y %s: one dtype, not bool", fn,
                               weft__spec_str(spec_of(x), sx, sizeof sx),
                               weft__spec_str(spec_of(y), sy, sizeof sy));
    if (index_dtype != WEFT_I32 && index_dtype != WEFT_I64)
        return weft__ctx_failf(cx, WEFT_EDTYPE, "%s: index_dtype %s, not i32 or i64", fn,
                               weft_dtype_name(index_dtype));
    weft_value *keep = weft_logical_not(cx, weft__ops_found_in(cx, x, y));
    outs[0] = weft_boolean_mask(cx, x, keep, 0);
    weft_value *positions = weft__ops_axis0_range(cx, x);
    outs[1] = weft_cast(cx, weft_boolean_mask(cx, positions, keep, 0), index_dtype);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        outs[0] = outs[1] = NULL;
    return rc;
}
