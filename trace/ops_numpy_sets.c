/* NumPy's set routines (isin, unique with its index, inverse and counts,
 * intersect1d, union1d, setxor1d) composed of a stable sort, gathers,
 * binary search and boolean_mask, in NumPy 1.24's steps: the distinct
 * values are the starts of the runs of equal values in the sorted input
 * (every NaN one run, as its equal_nan), so eager mode, tracing and
 * lengths unknown while tracing come with the parts. */
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* The dtype a and b are compared in: their promoted one, integers for two
 * bools (sort and search take numbers). */
static weft_dtype compare_dtype(weft_value *a, weft_value *b)
{
    weft_value *in[2] = { a, b };
    weft_dtype dt = weft__ops_promoted_dtype(in, 2);
    return dt == WEFT_BOOL ? WEFT_I32 : dt;
}

/* v flattened, as dtype dt. */
static weft_value *flat_as(weft_ctx *cx, weft_value *v, weft_dtype dt)
{
    return weft__ops_as_dtype(cx, weft_ravel(cx, v), dt);
}

/* Whether the sorted vector's neighbours a and b are distinct: not equal,
 * and not both NaN (NumPy 1.24's equal_nan makes the NaNs one value). */
static weft_value *distinct(weft_ctx *cx, weft_value *a, weft_value *b)
{
    weft_value *ne = weft_ne(cx, a, b);
    if (!ne || !weft__dtype_is_float(weft__value_spec(a)->dtype))
        return ne;
    weft_value *both_nan = weft_logical_and(cx, weft_is_nan(cx, a), weft_is_nan(cx, b));
    return weft_logical_and(cx, ne, weft_logical_not(cx, both_nan));
}

/* For the sorted vector s, whether each element starts a run of equal
 * values: the first, and each distinct from the one before. */
static weft_value *run_starts(weft_ctx *cx, weft_value *s)
{
    weft_value *i = weft__ops_axis0_range(cx, s);
    weft_value *zero = weft_const_i64(cx, 0);
    weft_value *before = weft_gather(cx, s, weft_maximum(cx, weft_sub(cx, i, weft_const_i64(cx, 1)),
                                                         zero), 0);
    return weft_logical_or(cx, weft_eq(cx, i, zero), distinct(cx, s, before));
}

/* The distinct values of the vector v, ascending. */
static weft_value *distinct_values(weft_ctx *cx, weft_value *v)
{
    weft_value *s = weft_sort(cx, v, 0, false);
    return weft_boolean_mask(cx, s, run_starts(cx, s), 0);
}

/* v as the dtype ar1 and ar2 promote to (bools compared as integers
 * become bool again). */
static weft_value *as_inputs_dtype(weft_ctx *cx, weft_value *v, weft_value *ar1,
                                   weft_value *ar2)
{
    weft_value *in[2] = { ar1, ar2 };
    return weft__ops_as_dtype(cx, v, weft__ops_promoted_dtype(in, 2));
}

/* Whether two values can meet in fn: not NULL (the context fails on
 * NULL through weft__op_enter). */
static bool enter_pair(weft_ctx *cx, const char *fn, weft_value *a, weft_value *b)
{
    weft_value *in[2] = { a, b };
    return weft__op_enter(cx, fn, in, 2);
}

weft_value *weft_isin(weft_ctx *cx, weft_value *element, weft_value *test_elements, bool invert)
{
    WEFT__SCOPE(cx);
    if (!enter_pair(cx, "weft_isin", element, test_elements))
        return NULL;
    weft_dtype dt = compare_dtype(element, test_elements);
    weft_value *x = weft__ops_as_dtype(cx, element, dt);
    if (!x)
        return NULL;
    weft_value *found = weft__ops_found_in(cx, x, flat_as(cx, test_elements, dt));
    return WEFT__KEEP(invert ? weft_logical_not(cx, found) : found);
}

int weft_unique_all(weft_ctx *cx, weft_value *ar, weft_value **outs)
{
    int rc = weft__ctx_enter_int(cx, "weft_unique_all", &ar, 1, outs, 4);
    if (rc < 0)
        return rc;
    WEFT__SCOPE_OUTS(cx, outs, 4);
    weft_dtype dt = weft__value_spec(ar)->dtype;
    weft_dtype sort_dt = dt == WEFT_BOOL ? WEFT_I32 : dt;
    weft_value *flat = flat_as(cx, ar, sort_dt);
    /* Stable: each run's first index in order is its first occurrence. */
    weft_value *order = weft_argsort(cx, flat, 0, false);
    weft_value *s = weft_gather(cx, flat, order, 0);
    weft_value *starts = run_starts(cx, s);
    weft_value *values = weft_boolean_mask(cx, s, starts, 0);
    outs[0] = weft__ops_as_dtype(cx, values, dt);
    outs[1] = weft_boolean_mask(cx, order, starts, 0);
    outs[2] = weft_searchsorted(cx, values, weft__ops_as_dtype(cx, ar, sort_dt), false);
    outs[3] = weft_bincount(cx, outs[2], NULL, 0, -1, WEFT_I64);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        outs[0] = outs[1] = outs[2] = outs[3] = NULL;
    return rc;
}

/* ar1 and ar2 flattened, as one dtype, each made distinct unless
 * assume_unique, joined and sorted. */
static weft_value *sorted_pair(weft_ctx *cx, weft_value *ar1, weft_value *ar2, weft_dtype dt,
                               bool assume_unique)
{
    weft_value *v[2] = { flat_as(cx, ar1, dt), flat_as(cx, ar2, dt) };
    if (!assume_unique) {
        v[0] = distinct_values(cx, v[0]);
        v[1] = distinct_values(cx, v[1]);
    }
    return weft_sort(cx, weft_concat(cx, v, 2, 0), 0, false);
}

weft_value *weft_intersect1d(weft_ctx *cx, weft_value *ar1, weft_value *ar2, bool assume_unique)
{
    WEFT__SCOPE(cx);
    if (!enter_pair(cx, "weft_intersect1d", ar1, ar2))
        return NULL;
    weft_dtype dt = compare_dtype(ar1, ar2);
    weft_value *s = sorted_pair(cx, ar1, ar2, dt, assume_unique);
    /* A value in both appears twice in a row (NaN equals nothing). */
    weft_value *head = weft__ops_axis_slice(cx, s, 0, 0, -1);
    weft_value *twice = weft_eq(cx, head, weft__ops_axis_slice(cx, s, 0, 1, WEFT_END));
    weft_value *both = weft_boolean_mask(cx, head, twice, 0);
    return WEFT__KEEP(as_inputs_dtype(cx, both, ar1, ar2));
}

weft_value *weft_union1d(weft_ctx *cx, weft_value *ar1, weft_value *ar2)
{
    WEFT__SCOPE(cx);
    if (!enter_pair(cx, "weft_union1d", ar1, ar2))
        return NULL;
    weft_dtype dt = compare_dtype(ar1, ar2);
    weft_value *v[2] = { flat_as(cx, ar1, dt), flat_as(cx, ar2, dt) };
    weft_value *either = distinct_values(cx, weft_concat(cx, v, 2, 0));
    return WEFT__KEEP(as_inputs_dtype(cx, either, ar1, ar2));
}

weft_value *weft_setxor1d(weft_ctx *cx, weft_value *ar1, weft_value *ar2, bool assume_unique)
{
    WEFT__SCOPE(cx);
    if (!enter_pair(cx, "weft_setxor1d", ar1, ar2))
        return NULL;
    weft_dtype dt = compare_dtype(ar1, ar2);
    weft_value *s = sorted_pair(cx, ar1, ar2, dt, assume_unique);
    /* Kept: each element unequal to both neighbours (NumPy compares with
     * !=, so two NaNs in a row both stay). */
    weft_value *i = weft__ops_axis0_range(cx, s);
    weft_value *last = weft_sub(cx, weft__ops_dim0(cx, s), weft_const_i64(cx, 1));
    weft_value *zero = weft_const_i64(cx, 0);
    weft_value *before = weft_gather(
        cx, s, weft_maximum(cx, weft_sub(cx, i, weft_const_i64(cx, 1)), zero), 0);
    weft_value *after = weft_gather(
        cx, s, weft_minimum(cx, weft_add(cx, i, weft_const_i64(cx, 1)), last), 0);
    weft_value *first_of_run = weft_logical_or(cx, weft_eq(cx, i, zero), weft_ne(cx, s, before));
    weft_value *last_of_run = weft_logical_or(cx, weft_eq(cx, i, last), weft_ne(cx, s, after));
    weft_value *once = weft_boolean_mask(cx, s, weft_logical_and(cx, first_of_run, last_of_run), 0);
    return WEFT__KEEP(as_inputs_dtype(cx, once, ar1, ar2));
}
