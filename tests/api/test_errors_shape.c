/* The shape ops' table of docs/ERRORS.md ("Shape ops"), walked in the same
 * order, like tests/api/test_errors.c walks the main table: each case
 * feeds one op one kind of bad input and returns the code it got; the
 * walker checks the code, that weft_errmsg() names the op, and that good
 * calls still work afterwards.
 *
 * With WEFT_ERRORS_DOC_SHAPE=<path> in the environment, the walker writes
 * the rows with the messages it observed, which is how the table was
 * made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static weft_tensor *m23;    /* f32[2,3] */
static weft_tensor *m31;    /* f32[3,1] */
static weft_tensor *v10;    /* f32[10] */
static weft_tensor *e03;    /* f32[0,3] */
static weft_tensor *r8;     /* f32[1,1,1,1,1,1,1,1] */
static weft_tensor *fidx;   /* f32[1] */
static weft_tensor *iidx;   /* i64[1] = {3} */

static weft_tensor *make(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

static void setup(void)
{
    rt = test_runtime(2);
    m23 = make(WEFT_F32, 2, (int64_t[]){ 2, 3 }, NULL);
    m31 = make(WEFT_F32, 2, (int64_t[]){ 3, 1 }, NULL);
    v10 = make(WEFT_F32, 1, (int64_t[]){ 10 }, NULL);
    e03 = make(WEFT_F32, 2, (int64_t[]){ 0, 3 }, NULL);
    r8 = make(WEFT_F32, 8, (int64_t[]){ 1, 1, 1, 1, 1, 1, 1, 1 }, NULL);
    fidx = make(WEFT_F32, 1, (int64_t[]){ 1 }, NULL);
    iidx = make(WEFT_I64, 1, (int64_t[]){ 1 }, (int64_t[]){ 3 });
}

static void teardown(void)
{
    weft_tensor *ts[] = { m23, m31, v10, e03, r8, fidx, iidx };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        weft_tensor_release(ts[i]);
    weft_runtime_destroy(&rt);
}

/* ---- Running a case. ---------------------------------------------------- */

typedef weft_value *(*op_fn)(weft_ctx *cx);

/* op on a fresh eager context: its status (1 if it failed but returned a
 * value). */
static int eager_op(op_fn op)
{
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(rt, &cx);
    if (rc != 0)
        return rc;
    weft_value *v = op(cx);
    rc = weft_ctx_status(cx);
    if (rc != 0 && v != NULL)
        rc = 1;
    weft_eager_end(&cx);
    return rc;
}

static weft_value *ev(weft_ctx *cx, weft_tensor *t)
{
    return weft_eager_value(cx, t);
}

/* A body applying a one-argument op to its argument, traced for sig. */
typedef weft_value *(*traced_fn)(weft_ctx *cx, weft_value *x);

typedef struct traced_case { traced_fn fn; } traced_case;

static int traced_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const traced_case *c = user;
    outs[0] = c->fn(cx, args[0]);
    return weft_ctx_status(cx);
}

static int traced_op(traced_fn fn, const char *sig_text, weft_tensor *x)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse(sig_text, &sig), 0);
    traced_case c = { fn };
    weft_function_desc d = { .name = "shape_errors", .body = traced_body, .user = &c,
                             .n_args = 1, .n_outs = 1, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a = weft_arg_tensor(x);
    weft_tensor *out = NULL;
    int rc = weft_function_call(f, &a, 1, &out, 1);
    weft_tensor_release(out);
    weft_function_destroy(&f);
    return rc;
}

/* ---- The cases, in the order of the table. ------------------------------ */

static int c_transpose_null_cx(void)
{
    return weft_transpose(NULL, NULL, NULL) ? 1 : WEFT_EINVAL;
}

static weft_value *op_transpose_twice(weft_ctx *cx)
{
    return weft_transpose(cx, ev(cx, m23), (const int[]){ 0, 0 });
}
static int c_transpose_twice(void) { return eager_op(op_transpose_twice); }

static weft_value *op_transpose_far(weft_ctx *cx)
{
    return weft_transpose(cx, ev(cx, m23), (const int[]){ 0, 2 });
}
static int c_transpose_far(void) { return eager_op(op_transpose_far); }

static weft_value *tr_transpose_perm(weft_ctx *cx, weft_value *x)
{
    return weft_transpose(cx, x, (const int[]){ 1, 0 });
}
static int c_transpose_unknown_rank(void) { return traced_op(tr_transpose_perm, "f32[*]", m23); }

static weft_value *op_slice_step0(weft_ctx *cx)
{
    return weft_slice(cx, ev(cx, m23), NULL, NULL, (const int64_t[]){ 1, 0 });
}
static int c_slice_step0(void) { return eager_op(op_slice_step0); }

static weft_value *tr_slice(weft_ctx *cx, weft_value *x)
{
    return weft_slice(cx, x, NULL, NULL, NULL);
}
static int c_slice_unknown_rank(void) { return traced_op(tr_slice, "f32[*]", m23); }

static int split_case(size_t n, const int64_t *sizes, bool null_outs)
{
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(rt, &cx);
    if (rc != 0)
        return rc;
    weft_value *outs[3] = { NULL, NULL, NULL };
    rc = weft_split(cx, ev(cx, v10), n, sizes, 0, null_outs ? NULL : outs);
    if (rc != weft_ctx_status(cx) || outs[0] || outs[1] || outs[2])
        rc = 1;
    weft_eager_end(&cx);
    return rc;
}
static int c_split_null_outs(void) { return split_case(2, NULL, true); }
static int c_split_zero(void) { return split_case(0, NULL, false); }
static int c_split_equal(void) { return split_case(3, NULL, false); }
static int c_split_sum(void) { return split_case(2, (const int64_t[]){ 3, 4 }, false); }
static int c_split_two_rests(void) { return split_case(2, (const int64_t[]){ -1, -1 }, false); }
static int c_split_negative(void) { return split_case(2, (const int64_t[]){ 2, -3 }, false); }

static weft_value *tr_split_runtime(weft_ctx *cx, weft_value *x)
{
    weft_value *outs[3];
    weft_split(cx, x, 3, NULL, 0, outs);
    return outs[0];
}
static int c_split_runtime(void) { return traced_op(tr_split_runtime, "f32[?]", v10); }

static weft_value *op_gather_float(weft_ctx *cx)
{
    return weft_gather(cx, ev(cx, m31), ev(cx, fidx), 0);
}
static int c_gather_float(void) { return eager_op(op_gather_float); }

static weft_value *op_gather_range(weft_ctx *cx)
{
    return weft_gather(cx, ev(cx, m31), ev(cx, iidx), 0);
}
static int c_gather_range(void) { return eager_op(op_gather_range); }

static weft_value *op_gather_axis(weft_ctx *cx)
{
    return weft_gather(cx, ev(cx, m31), ev(cx, iidx), 2);
}
static int c_gather_axis(void) { return eager_op(op_gather_axis); }

/* The indices are the argument; the table is constant. */
static weft_value *tr_gather_runtime(weft_ctx *cx, weft_value *idx)
{
    return weft_gather(cx, weft_const_tensor(cx, m31), idx, 0);
}
static int c_gather_runtime(void) { return traced_op(tr_gather_runtime, "i64[?]", iidx); }

static weft_value *op_concat_null(weft_ctx *cx) { return weft_concat(cx, NULL, 2, 0); }
static int c_concat_null(void) { return eager_op(op_concat_null); }

static weft_value *op_concat_zero(weft_ctx *cx)
{
    weft_value *v = ev(cx, m23);
    return weft_concat(cx, &v, 0, 0);
}
static int c_concat_zero(void) { return eager_op(op_concat_zero); }

static weft_value *op_concat_dims(weft_ctx *cx)
{
    weft_value *vs[2] = { ev(cx, m23), ev(cx, m31) };
    return weft_concat(cx, vs, 2, 0);
}
static int c_concat_dims(void) { return eager_op(op_concat_dims); }

static weft_value *op_concat_ranks(weft_ctx *cx)
{
    weft_value *vs[2] = { ev(cx, m23), ev(cx, v10) };
    return weft_concat(cx, vs, 2, 0);
}
static int c_concat_ranks(void) { return eager_op(op_concat_ranks); }

static weft_value *op_stack_dims(weft_ctx *cx)
{
    weft_value *vs[2] = { ev(cx, m23), ev(cx, m31) };
    return weft_stack(cx, vs, 2, 0);
}
static int c_stack_dims(void) { return eager_op(op_stack_dims); }

static weft_value *op_stack_axis(weft_ctx *cx)
{
    weft_value *vs[2] = { ev(cx, v10), ev(cx, v10) };
    return weft_stack(cx, vs, 2, 3);
}
static int c_stack_axis(void) { return eager_op(op_stack_axis); }

static weft_value *op_expand_axis(weft_ctx *cx) { return weft_expand_dims(cx, ev(cx, m23), 4); }
static int c_expand_axis(void) { return eager_op(op_expand_axis); }

static weft_value *op_expand_rank(weft_ctx *cx) { return weft_expand_dims(cx, ev(cx, r8), 0); }
static int c_expand_rank(void) { return eager_op(op_expand_rank); }

static weft_value *op_squeeze_not1(weft_ctx *cx) { return weft_squeeze(cx, ev(cx, m23), 1); }
static int c_squeeze_not1(void) { return eager_op(op_squeeze_not1); }

static weft_value *tr_squeeze(weft_ctx *cx, weft_value *x) { return weft_squeeze(cx, x, 1); }
static int c_squeeze_runtime(void) { return traced_op(tr_squeeze, "f32[?,?]", m23); }

static weft_value *op_tile_null(weft_ctx *cx) { return weft_tile(cx, ev(cx, v10), NULL); }
static int c_tile_null(void) { return eager_op(op_tile_null); }

static weft_value *op_tile_negative(weft_ctx *cx)
{
    return weft_tile(cx, ev(cx, m23), (const int64_t[]){ 1, -1 });
}
static int c_tile_negative(void) { return eager_op(op_tile_negative); }

static weft_value *op_bcast_rank(weft_ctx *cx)
{
    return weft_broadcast_to(cx, ev(cx, m31), 9, (const int64_t[]){ 1 });
}
static int c_bcast_rank(void) { return eager_op(op_bcast_rank); }

static weft_value *op_bcast_dims(weft_ctx *cx)
{
    return weft_broadcast_to(cx, ev(cx, m31), 2, (const int64_t[]){ 2, 4 });
}
static int c_bcast_dims(void) { return eager_op(op_bcast_dims); }

static weft_value *op_bcast_keep(weft_ctx *cx)
{
    return weft_broadcast_to(cx, ev(cx, m31), 3, (const int64_t[]){ -1, 3, 1 });
}
static int c_bcast_keep(void) { return eager_op(op_bcast_keep); }

static weft_value *op_zeros_null(weft_ctx *cx) { return weft_zeros_like(cx, NULL); }
static int c_zeros_null(void) { return eager_op(op_zeros_null); }

static int c_shape_foreign(void)
{
    weft_ctx *cx = NULL, *other = NULL;
    int rc = weft_eager_begin(rt, &cx);
    if (rc == 0 && (rc = weft_eager_begin(rt, &other)) == 0) {
        weft_value *v = weft_shape(cx, ev(other, m23));
        rc = weft_ctx_status(cx);
        if (v)
            rc = 1;
    }
    weft_eager_end(&cx);
    weft_eager_end(&other);
    return rc;
}

static weft_value *op_argmax_empty(weft_ctx *cx) { return weft_argmax(cx, ev(cx, e03), 0); }
static int c_argmax_empty(void) { return eager_op(op_argmax_empty); }

static weft_value *op_argmin_axis(weft_ctx *cx) { return weft_argmin(cx, ev(cx, m23), 2); }
static int c_argmin_axis(void) { return eager_op(op_argmin_axis); }

static weft_value *op_cumsum_axis(weft_ctx *cx) { return weft_cumsum(cx, ev(cx, v10), 1); }
static int c_cumsum_axis(void) { return eager_op(op_cumsum_axis); }

static weft_value *tr_fill_unknown(weft_ctx *cx, weft_value *x)
{
    weft_spec s;
    weft_value_spec(x, &s);
    return weft_fill(cx, s.dtype, s.rank, s.dims, 0.0);
}
static int c_fill_unknown(void) { return traced_op(tr_fill_unknown, "f32[?,3]", m23); }

static weft_value *op_sort_axis(weft_ctx *cx) { return weft_sort(cx, ev(cx, m23), 2, false); }
static int c_sort_axis(void) { return eager_op(op_sort_axis); }

static weft_value *op_argsort_axis(weft_ctx *cx) { return weft_argsort(cx, ev(cx, m23), -3, true); }
static int c_argsort_axis(void) { return eager_op(op_argsort_axis); }

/* weft_top_k on a (NULL: f32[2,3]) with k; the code, 1 when it returned
 * another code than the context's or left an output set. */
static int top_k_case(weft_value *(*a)(weft_ctx *), int64_t k, bool null_outs)
{
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(rt, &cx);
    if (rc != 0)
        return rc;
    weft_value *outs[2] = { NULL, NULL };
    rc = weft_top_k(cx, a ? a(cx) : ev(cx, m23), k, true, null_outs ? NULL : outs);
    if (rc != weft_ctx_status(cx) || outs[0] || outs[1])
        rc = 1;
    weft_eager_end(&cx);
    return rc;
}
static weft_value *scalar_f32(weft_ctx *cx) { return weft_const(cx, WEFT_F32, 1.0); }
static int c_top_k_null_outs(void) { return top_k_case(NULL, 1, true); }
static int c_top_k_negative(void) { return top_k_case(NULL, -1, false); }
static int c_top_k_large(void) { return top_k_case(NULL, 4, false); }
static int c_top_k_scalar(void) { return top_k_case(scalar_f32, 1, false); }

static weft_value *tr_top_k(weft_ctx *cx, weft_value *x)
{
    weft_value *outs[2] = { NULL, NULL };
    weft_top_k(cx, x, 4, true, outs);
    return outs[0];
}
static int c_top_k_runtime(void) { return traced_op(tr_top_k, "f32[2,?]", m23); }
/* ---- The indexing ops. -------------------------------------------------- */

static weft_value *op_segment_range(weft_ctx *cx)
{
    return weft_unsorted_segment(cx, WEFT_R_SUM, ev(cx, fidx), ev(cx, iidx), 2);
}
static int c_segment_range(void) { return eager_op(op_segment_range); }

static weft_value *op_segment_float(weft_ctx *cx)
{
    return weft_unsorted_segment(cx, WEFT_R_SUM, ev(cx, fidx), ev(cx, fidx), 2);
}
static int c_segment_float(void) { return eager_op(op_segment_float); }

static weft_value *op_segment_prefix(weft_ctx *cx)
{
    return weft_unsorted_segment(cx, WEFT_R_MAX, ev(cx, v10), ev(cx, iidx), 2);
}
static int c_segment_prefix(void) { return eager_op(op_segment_prefix); }

static weft_value *op_segment_kind(weft_ctx *cx)
{
    return weft_unsorted_segment(cx, WEFT_R_ANY, ev(cx, fidx), ev(cx, iidx), 4);
}
static int c_segment_kind(void) { return eager_op(op_segment_kind); }

static weft_value *op_segment_count(weft_ctx *cx)
{
    return weft_unsorted_segment(cx, WEFT_R_SUM, ev(cx, fidx), ev(cx, iidx), -1);
}
static int c_segment_count(void) { return eager_op(op_segment_count); }

/* The ids are the argument, the data their cast. */
static weft_value *tr_segment_runtime(weft_ctx *cx, weft_value *ids)
{
    return weft_unsorted_segment(cx, WEFT_R_SUM, weft_cast(cx, ids, WEFT_F32), ids, 2);
}
static int c_segment_runtime(void) { return traced_op(tr_segment_runtime, "i64[?]", iidx); }

static weft_value *op_gather_nd_float(weft_ctx *cx)
{
    return weft_gather_nd(cx, ev(cx, m31), ev(cx, fidx));
}
static int c_gather_nd_float(void) { return eager_op(op_gather_nd_float); }

static weft_value *op_gather_nd_range(weft_ctx *cx)
{
    return weft_gather_nd(cx, ev(cx, m31), ev(cx, iidx));
}
static int c_gather_nd_range(void) { return eager_op(op_gather_nd_range); }

static weft_value *op_gather_nd_long(weft_ctx *cx)
{
    weft_value *idx = weft_fill(cx, WEFT_I64, 1, (int64_t[]){ 3 }, 0.0);
    return weft_gather_nd(cx, ev(cx, m23), idx);
}
static int c_gather_nd_long(void) { return eager_op(op_gather_nd_long); }

static weft_value *tr_gather_nd_runtime(weft_ctx *cx, weft_value *idx)
{
    return weft_gather_nd(cx, weft_const_tensor(cx, m31), idx);
}
static int c_gather_nd_runtime(void) { return traced_op(tr_gather_nd_runtime, "i64[?]", iidx); }

static weft_value *op_scatter_dtype(weft_ctx *cx)
{
    weft_value *u = weft_fill(cx, WEFT_F64, 1, (int64_t[]){ 1 }, 1.0);
    return weft_scatter_nd_update(cx, ev(cx, m31), ev(cx, iidx), u);
}
static int c_scatter_dtype(void) { return eager_op(op_scatter_dtype); }

static weft_value *op_scatter_bool(weft_ctx *cx)
{
    weft_value *t = weft_fill(cx, WEFT_BOOL, 2, (int64_t[]){ 3, 1 }, 1.0);
    weft_value *u = weft_fill(cx, WEFT_BOOL, 1, (int64_t[]){ 1 }, 1.0);
    return weft_scatter_nd_add(cx, t, ev(cx, iidx), u);
}
static int c_scatter_bool(void) { return eager_op(op_scatter_bool); }

static weft_value *op_scatter_shape(weft_ctx *cx)
{
    return weft_scatter_nd_add(cx, ev(cx, m31), ev(cx, iidx), ev(cx, v10));
}
static int c_scatter_shape(void) { return eager_op(op_scatter_shape); }

static weft_value *op_scatter_range(weft_ctx *cx)
{
    return weft_scatter_nd_update(cx, ev(cx, m31), ev(cx, iidx), ev(cx, fidx));
}
static int c_scatter_range(void) { return eager_op(op_scatter_range); }

static weft_value *op_roll_axis(weft_ctx *cx) { return weft_roll(cx, ev(cx, m23), 1, 2); }
static int c_roll_axis(void) { return eager_op(op_roll_axis); }

static weft_value *op_roll_axes_entry(weft_ctx *cx)
{
    return weft_roll_axes(cx, ev(cx, m23), (int64_t[]){ 1, 1 }, (int[]){ 0, 2 }, 2);
}
static int c_roll_axes_entry(void) { return eager_op(op_roll_axes_entry); }

static weft_value *op_repeat_counts_n(weft_ctx *cx)
{
    return weft_repeat_counts(cx, ev(cx, m23), (int64_t[]){ 1, 2 }, 2, 1);
}
static int c_repeat_counts_n(void) { return eager_op(op_repeat_counts_n); }

static weft_value *op_random_bounds(weft_ctx *cx)
{
    return weft_random_uniform(cx, ev(cx, m23), WEFT_F32, 1, (int64_t[]){ 4 }, 1, 1);
}
static int c_random_bounds(void) { return eager_op(op_random_bounds); }

static weft_value *op_random_seed(weft_ctx *cx)
{
    return weft_random_normal(cx, ev(cx, m23), WEFT_F32, 1, (int64_t[]){ 4 }, 0, 1);
}
static int c_random_seed(void) { return eager_op(op_random_seed); }

static weft_value *op_dropout_rate(weft_ctx *cx)
{
    return weft_dropout(cx, ev(cx, m23), 1.0, weft_const_i64(cx, 7));
}
static int c_dropout_rate(void) { return eager_op(op_dropout_rate); }
static weft_value *op_conv_channels(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, ev(cx, m23), 4, (int64_t[]){ 1, 1, 2, 3 });
    weft_value *f = weft_reshape(cx, ev(cx, m23), 4, (int64_t[]){ 1, 1, 2, 3 });
    return weft_conv2d(cx, x, f, NULL, WEFT_PADDING_SAME, NULL);
}
static int c_conv_channels(void) { return eager_op(op_conv_channels); }
static weft_value *op_conv_rank(weft_ctx *cx)
{
    return weft_conv2d(cx, ev(cx, m23), ev(cx, m23), NULL, WEFT_PADDING_SAME, NULL);
}
static int c_conv_rank(void) { return eager_op(op_conv_rank); }
static weft_value *op_conv_valid(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, ev(cx, m23), 4, (int64_t[]){ 1, 2, 3, 1 });
    weft_value *f = weft_reshape(cx, ev(cx, v10), 4, (int64_t[]){ 5, 2, 1, 1 });
    return weft_conv2d(cx, x, f, NULL, WEFT_PADDING_VALID, NULL);
}
static int c_conv_valid(void) { return eager_op(op_conv_valid); }
static weft_value *op_conv_strides(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, ev(cx, m23), 4, (int64_t[]){ 1, 2, 3, 1 });
    return weft_conv2d(cx, x, x, (int64_t[]){ 1, 0 }, WEFT_PADDING_SAME, NULL);
}
static int c_conv_strides(void) { return eager_op(op_conv_strides); }
static weft_value *op_pool_dtype(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, ev(cx, m23), 4, (int64_t[]){ 1, 2, 3, 1 });
    return weft_avg_pool2d(cx, weft_cast(cx, x, WEFT_I32), (int64_t[]){ 2, 2 }, NULL,
                           WEFT_PADDING_SAME);
}
static int c_pool_dtype(void) { return eager_op(op_pool_dtype); }
static weft_value *op_mask_dtype(weft_ctx *cx)
{
    return weft_boolean_mask(cx, ev(cx, m23), ev(cx, m23), 0);
}
static int c_mask_dtype(void) { return eager_op(op_mask_dtype); }
static weft_value *op_mask_dims(weft_ctx *cx)
{
    weft_value *m = weft_gt(cx, ev(cx, m23), weft_const_f64(cx, 0));
    return weft_boolean_mask(cx, ev(cx, m23), weft_transpose(cx, m, NULL), 0);
}
static int c_mask_dims(void) { return eager_op(op_mask_dims); }
static weft_value *op_unique_rank(weft_ctx *cx)
{
    weft_value *outs[2];
    weft_unique(cx, ev(cx, m23), outs);
    return outs[0];
}
static int c_unique_rank(void) { return eager_op(op_unique_rank); }
static weft_value *op_segment_unsorted(weft_ctx *cx)
{
    /* ids { 3, 0, 0 } for the three rows of m31. */
    weft_value *ids = weft_pad(cx, ev(cx, iidx), (const int64_t[][2]){ { 0, 2 } }, 0);
    return weft_segment(cx, WEFT_R_SUM, ev(cx, m31), ids);
}
static int c_segment_unsorted(void) { return eager_op(op_segment_unsorted); }
static weft_value *op_bincount_negative(weft_ctx *cx)
{
    return weft_bincount(cx, weft_neg(cx, ev(cx, iidx)), NULL, 0, -1, WEFT_I32);
}
static int c_bincount_negative(void) { return eager_op(op_bincount_negative); }
static weft_value *op_eigh_square(weft_ctx *cx)
{
    weft_value *outs[2];
    weft_eigh(cx, ev(cx, m23), outs);
    return outs[0];
}
static int c_eigh_square(void) { return eager_op(op_eigh_square); }
static weft_value *op_qr_vector(weft_ctx *cx)
{
    weft_value *outs[2];
    weft_qr(cx, ev(cx, v10), false, outs);
    return outs[0];
}
static int c_qr_vector(void) { return eager_op(op_qr_vector); }
static weft_value *op_svd_dtype(weft_ctx *cx)
{
    weft_value *outs[1];
    weft_svd(cx, weft_cast(cx, ev(cx, m23), WEFT_I32), false, false, outs);
    return outs[0];
}
static int c_svd_dtype(void) { return eager_op(op_svd_dtype); }
static weft_value *op_lstsq_l2(weft_ctx *cx)
{
    return weft_lstsq(cx, ev(cx, m23), ev(cx, m23), 0.5, false);
}
static int c_lstsq_l2(void) { return eager_op(op_lstsq_l2); }
static weft_value *op_cross_dims(weft_ctx *cx)
{
    return weft_cross(cx, ev(cx, m23), ev(cx, m31));
}
static int c_cross_dims(void) { return eager_op(op_cross_dims); }
static weft_value *op_in_top_k_k(weft_ctx *cx)
{
    return weft_in_top_k(cx, weft_range(cx, WEFT_I32, 0, 2, 1), ev(cx, m23), -1);
}
static int c_in_top_k_k(void) { return eager_op(op_in_top_k_k); }
static weft_value *op_histogram_range(weft_ctx *cx)
{
    return weft_histogram_fixed_width(cx, ev(cx, v10), 1, 0, 4, WEFT_I32);
}
static int c_histogram_range(void) { return eager_op(op_histogram_range); }
static weft_value *op_gather_nd_batch(weft_ctx *cx)
{
    return weft_gather_nd_ex(cx, ev(cx, m23), weft_reshape(cx, ev(cx, iidx), 2,
                                                          (const int64_t[]){ 1, 1 }), 1);
}
static int c_gather_nd_batch(void) { return eager_op(op_gather_nd_batch); }
static weft_value *op_einsum_diag(weft_ctx *cx)
{
    weft_value *a = ev(cx, m23);
    return weft_einsum(cx, "ii->i", &a, 1);
}
static int c_einsum_diag(void) { return eager_op(op_einsum_diag); }
static weft_value *op_cumlse_int(weft_ctx *cx)
{
    return weft_cumulative_logsumexp(cx, weft_range(cx, WEFT_I32, 0, 2, 1), 0, 0);
}
static int c_cumlse_int(void) { return eager_op(op_cumlse_int); }
static weft_value *op_categorical_rank(weft_ctx *cx)
{
    return weft_random_categorical(cx, weft_range(cx, WEFT_F32, 0, 4, 1), 2,
                                   weft_const_i64(cx, 7), WEFT_I64);
}
static int c_categorical_rank(void) { return eager_op(op_categorical_rank); }
static weft_value *op_space_to_depth_odd(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, weft_range(cx, WEFT_F32, 0, 18, 1), 4,
                                 (const int64_t[]){ 1, 3, 3, 2 });
    return weft_space_to_depth(cx, x, 2);
}
static int c_space_to_depth_odd(void) { return eager_op(op_space_to_depth_odd); }
static weft_value *op_nms_boxes(weft_ctx *cx)
{
    return weft_non_max_suppression(cx, ev(cx, m23), weft_range(cx, WEFT_F32, 0, 2, 1), 4, 0.5,
                                    0);
}
static int c_nms_boxes(void) { return eager_op(op_nms_boxes); }
static weft_value *op_expm_rect(weft_ctx *cx) { return weft_matrix_exponential(cx, ev(cx, m23)); }
static int c_expm_rect(void) { return eager_op(op_expm_rect); }
static weft_value *op_logm_rect(weft_ctx *cx) { return weft_matrix_logarithm(cx, ev(cx, m23)); }
static int c_logm_rect(void) { return eager_op(op_logm_rect); }
static weft_value *op_confusion_label(weft_ctx *cx)
{
    weft_value *labels = weft_range(cx, WEFT_I32, 0, 4, 1);
    return weft_confusion_matrix(cx, labels, labels, 3, NULL, WEFT_I32);
}
static int c_confusion_label(void) { return eager_op(op_confusion_label); }
static weft_value *op_hsv_channels(weft_ctx *cx)
{
    return weft_rgb_to_hsv(cx, weft_transpose(cx, ev(cx, m23), NULL));
}
static int c_hsv_channels(void) { return eager_op(op_hsv_channels); }
static weft_value *op_ssim_small(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, weft_range(cx, WEFT_F32, 0, 6, 1), 3,
                                 (const int64_t[]){ 2, 3, 1 });
    return weft_ssim(cx, x, x, 1, 11, 1.5, 0.01, 0.03);
}
static int c_ssim_small(void) { return eager_op(op_ssim_small); }
static weft_value *op_sparse_cce_rank(weft_ctx *cx)
{
    return weft_sparse_categorical_crossentropy(cx, weft_range(cx, WEFT_I32, 0, 3, 1),
                                                ev(cx, m23), false);
}
static int c_sparse_cce_rank(void) { return eager_op(op_sparse_cce_rank); }

static weft_value *op_rot90_matrix(weft_ctx *cx) { return weft_rot90(cx, ev(cx, m23), 1); }
static int c_rot90_matrix(void) { return eager_op(op_rot90_matrix); }
static weft_value *op_unstack_num(weft_ctx *cx)
{
    weft_value *parts[3];
    return weft_unstack(cx, ev(cx, m23), 0, 3, parts) == 0 ? parts[0] : NULL;
}
static int c_unstack_num(void) { return eager_op(op_unstack_num); }
static weft_value *op_separable_pointwise(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, weft_range(cx, WEFT_F32, 0, 8, 1), 4,
                                 (const int64_t[]){ 1, 2, 2, 2 });
    weft_value *dw = weft_reshape(cx, weft_range(cx, WEFT_F32, 0, 4, 1), 4,
                                  (const int64_t[]){ 1, 1, 2, 2 });
    return weft_separable_conv2d(cx, x, dw, dw, NULL, WEFT_PADDING_SAME, NULL);
}
static int c_separable_pointwise(void) { return eager_op(op_separable_pointwise); }

static weft_value *op_dilation_filters(weft_ctx *cx)
{
    weft_value *x = weft_reshape(cx, weft_range(cx, WEFT_F32, 0, 8, 1), 4,
                                 (const int64_t[]){ 1, 2, 2, 2 });
    weft_value *f = weft_reshape(cx, weft_range(cx, WEFT_F32, 0, 4, 1), 3,
                                 (const int64_t[]){ 2, 2, 1 });
    return weft_dilation2d(cx, x, f, NULL, WEFT_PADDING_SAME, NULL);
}
static int c_dilation_filters(void) { return eager_op(op_dilation_filters); }
static weft_value *op_scatter_max_bool(weft_ctx *cx)
{
    weft_value *t = weft_cast(cx, weft_range(cx, WEFT_I32, 0, 2, 1), WEFT_BOOL);
    weft_value *idx = weft_reshape(cx, weft_range(cx, WEFT_I32, 0, 1, 1), 2,
                                   (const int64_t[]){ 1, 1 });
    return weft_scatter_nd_max(cx, t, idx, weft_slice(cx, t, NULL, (const int64_t[]){ 1 }, NULL));
}
static int c_scatter_max_bool(void) { return eager_op(op_scatter_max_bool); }
static weft_value *op_dct_int(weft_ctx *cx)
{
    return weft_dct(cx, weft_range(cx, WEFT_I32, 0, 3, 1), 2, 0, false);
}
static int c_dct_int(void) { return eager_op(op_dct_int); }
static weft_value *op_truncatediv_bool(weft_ctx *cx)
{
    weft_value *b = weft_cast(cx, weft_range(cx, WEFT_I32, 0, 2, 1), WEFT_BOOL);
    return weft_truncatediv(cx, b, b);
}
static int c_truncatediv_bool(void) { return eager_op(op_truncatediv_bool); }
static weft_value *op_fft_not_pairs(weft_ctx *cx)
{
    return weft_fft(cx, weft_fill(cx, WEFT_F32, 2, (int64_t[]){ 4, 3 }, 1.0));
}
static int c_fft_not_pairs(void) { return eager_op(op_fft_not_pairs); }

static weft_value *op_stft_window(weft_ctx *cx)
{
    weft_value *signal = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 64 }, 1.0);
    return weft_stft(cx, signal, 16, 8, 0, weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 15 }, 1.0),
                     false);
}
static int c_stft_window(void) { return eager_op(op_stft_window); }

static weft_value *op_tensordot_dims(weft_ctx *cx)
{
    return weft_tensordot(cx, ev(cx, m23), ev(cx, m23), 1);
}
static int c_tensordot_dims(void) { return eager_op(op_tensordot_dims); }

static weft_value *op_repeat_negative(weft_ctx *cx) { return weft_repeat(cx, ev(cx, m23), -1, 0); }
static int c_repeat_negative(void) { return eager_op(op_repeat_negative); }

/* ---- The table. --------------------------------------------------------- */

typedef struct err_case {
    const char *entry;
    const char *bad;
    int code;
    int (*run)(void);
    const char *mention;   /* what weft_errmsg() must contain; NULL: entry */
} err_case;

#define C(entry, bad, code, fn) { entry, bad, code, fn, NULL }
#define CM(entry, bad, code, fn, m) { entry, bad, code, fn, m }

static const err_case cases[] = {
    C("weft_transpose", "cx is NULL", WEFT_EINVAL, c_transpose_null_cx),
    C("weft_transpose", "perm {0, 0} of f32[2,3]", WEFT_EINVAL, c_transpose_twice),
    C("weft_transpose", "perm {0, 2} of f32[2,3]", WEFT_EINVAL, c_transpose_far),
    CM("weft_transpose", "a perm for a rank unknown while tracing (f32[*])", WEFT_EINVAL,
       c_transpose_unknown_rank, "weft_transpose"),
    C("weft_slice", "step {1, 0}", WEFT_EINVAL, c_slice_step0),
    C("weft_slice", "a rank unknown while tracing (f32[*])", WEFT_EINVAL, c_slice_unknown_rank),
    C("weft_split", "outs is NULL", WEFT_EINVAL, c_split_null_outs),
    C("weft_split", "n = 0", WEFT_EINVAL, c_split_zero),
    C("weft_split", "f32[10] into 3 equal parts", WEFT_ESHAPE, c_split_equal),
    C("weft_split", "sizes {3, 4} of f32[10]", WEFT_ESHAPE, c_split_sum),
    C("weft_split", "sizes {-1, -1}", WEFT_EINVAL, c_split_two_rests),
    C("weft_split", "sizes {2, -3}", WEFT_EINVAL, c_split_negative),
    C("weft_split", "f32[?] into 3 equal parts, called with f32[10] (fails when it runs)",
      WEFT_ESHAPE, c_split_runtime),
    C("weft_gather", "f32 indices", WEFT_EDTYPE, c_gather_float),
    C("weft_gather", "index 3 on axis 0 of f32[3,1]", WEFT_EINVAL, c_gather_range),
    C("weft_gather", "axis 2 of f32[3,1]", WEFT_EINVAL, c_gather_axis),
    C("weft_gather", "traced indices i64[?] holding 3 for f32[3,1] (fails when it runs)",
      WEFT_EINVAL, c_gather_runtime),
    C("weft_concat", "vs is NULL", WEFT_EINVAL, c_concat_null),
    C("weft_concat", "n = 0", WEFT_EINVAL, c_concat_zero),
    C("weft_concat", "f32[2,3] and f32[3,1] on axis 0", WEFT_ESHAPE, c_concat_dims),
    C("weft_concat", "f32[2,3] and f32[10]", WEFT_ESHAPE, c_concat_ranks),
    C("weft_stack", "f32[2,3] and f32[3,1]", WEFT_ESHAPE, c_stack_dims),
    C("weft_stack", "axis 3 for f32[10] inputs", WEFT_EINVAL, c_stack_axis),
    C("weft_expand_dims", "axis 4 of f32[2,3]", WEFT_EINVAL, c_expand_axis),
    C("weft_expand_dims", "an input of rank 8", WEFT_EINVAL, c_expand_rank),
    C("weft_squeeze", "axis 1 of f32[2,3]", WEFT_ESHAPE, c_squeeze_not1),
    C("weft_squeeze", "axis 1 of f32[?,?], called with f32[2,3] (fails when it runs)",
      WEFT_ESHAPE, c_squeeze_runtime),
    C("weft_tile", "multiples NULL for rank 1", WEFT_EINVAL, c_tile_null),
    C("weft_tile", "multiples {1, -1}", WEFT_EINVAL, c_tile_negative),
    C("weft_broadcast_to", "rank 9", WEFT_EINVAL, c_bcast_rank),
    C("weft_broadcast_to", "f32[3,1] to {2, 4}", WEFT_ESHAPE, c_bcast_dims),
    C("weft_broadcast_to", "f32[3,1] to {-1, 3, 1} (-1 where a has no dim)", WEFT_EINVAL,
      c_bcast_keep),
    C("weft_zeros_like", "a is NULL", WEFT_EINVAL, c_zeros_null),
    C("weft_shape", "a of another context", WEFT_EINVAL, c_shape_foreign),
    C("weft_argmax", "axis 0 of f32[0,3] (empty)", WEFT_EINVAL, c_argmax_empty),
    C("weft_argmin", "axis 2 of f32[2,3]", WEFT_EINVAL, c_argmin_axis),
    C("weft_cumsum", "axis 1 of f32[10]", WEFT_EINVAL, c_cumsum_axis),
    C("weft_fill", "a dim WEFT_DIM_ANY read from a spec while tracing", WEFT_EINVAL,
      c_fill_unknown),
    C("weft_sort", "axis 2 of f32[2,3]", WEFT_EINVAL, c_sort_axis),
    C("weft_argsort", "axis -3 of f32[2,3]", WEFT_EINVAL, c_argsort_axis),
    C("weft_top_k", "outs is NULL", WEFT_EINVAL, c_top_k_null_outs),
    C("weft_top_k", "k = -1", WEFT_EINVAL, c_top_k_negative),
    C("weft_top_k", "k = 4 for f32[2,3]", WEFT_EINVAL, c_top_k_large),
    C("weft_top_k", "a scalar (f32[])", WEFT_EINVAL, c_top_k_scalar),
    C("weft_top_k", "k = 4 for f32[2,?], called with f32[2,3] (fails when it runs)", WEFT_EINVAL,
      c_top_k_runtime),
    C("weft_unsorted_segment", "id 3 with num_segments 2", WEFT_EINVAL, c_segment_range),
    C("weft_unsorted_segment", "f32 segment ids", WEFT_EDTYPE, c_segment_float),
    C("weft_unsorted_segment", "ids i64[1] for data f32[10]", WEFT_ESHAPE, c_segment_prefix),
    C("weft_unsorted_segment", "reduction WEFT_R_ANY", WEFT_EINVAL, c_segment_kind),
    C("weft_unsorted_segment", "num_segments -1", WEFT_EINVAL, c_segment_count),
    C("weft_unsorted_segment", "traced ids i64[?] holding 3, num_segments 2 (fails when it runs)",
      WEFT_EINVAL, c_segment_runtime),
    C("weft_gather_nd", "f32 indices", WEFT_EDTYPE, c_gather_nd_float),
    C("weft_gather_nd", "index tuple {3} for f32[3,1]", WEFT_EINVAL, c_gather_nd_range),
    C("weft_gather_nd", "index tuples of 3 entries for f32[2,3]", WEFT_ESHAPE, c_gather_nd_long),
    C("weft_gather_nd", "traced indices i64[?] holding {3} for f32[3,1] (fails when it runs)",
      WEFT_EINVAL, c_gather_nd_runtime),
    C("weft_scatter_nd_update", "f64 updates for f32[3,1]", WEFT_EDTYPE, c_scatter_dtype),
    C("weft_scatter_nd_add", "a bool tensor", WEFT_EDTYPE, c_scatter_bool),
    C("weft_scatter_nd_add", "updates f32[10] where f32[1] is wanted", WEFT_ESHAPE,
      c_scatter_shape),
    C("weft_scatter_nd_update", "index tuple {3} for f32[3,1]", WEFT_EINVAL, c_scatter_range),
    C("weft_roll", "axis 2 of f32[2,3]", WEFT_EINVAL, c_roll_axis),
    C("weft_repeat", "repeats -1", WEFT_EINVAL, c_repeat_negative),
    C("weft_roll_axes", "axes {0, 2} of f32[2,3]", WEFT_EINVAL, c_roll_axes_entry),
    C("weft_repeat_counts", "2 counts for axis 1 of f32[2,3]", WEFT_EINVAL, c_repeat_counts_n),
    C("weft_random_uniform", "minval 1, maxval 1", WEFT_EINVAL, c_random_bounds),
    C("weft_random_normal", "a seed f32[2,3]", WEFT_EINVAL, c_random_seed),
    C("weft_dropout", "rate 1", WEFT_EINVAL, c_dropout_rate),
    C("weft_conv2d", "3 channels, filters taking 2", WEFT_ESHAPE, c_conv_channels),
    C("weft_conv2d", "an input f32[2,3]", WEFT_ESHAPE, c_conv_rank),
    C("weft_conv2d", "a 5x2 window on 2x3, VALID", WEFT_ESHAPE, c_conv_valid),
    C("weft_conv2d", "strides { 1, 0 }", WEFT_EINVAL, c_conv_strides),
    C("weft_avg_pool2d", "an i32 input", WEFT_EDTYPE, c_pool_dtype),
    C("weft_boolean_mask", "an f32 mask", WEFT_EDTYPE, c_mask_dtype),
    C("weft_boolean_mask", "a mask [3,2] on [2,3]", WEFT_ESHAPE, c_mask_dims),
    C("weft_unique", "a matrix f32[2,3]", WEFT_ESHAPE, c_unique_rank),
    C("weft_segment", "ids { 3, 0, 0 } (not sorted)", WEFT_EINVAL, c_segment_unsorted),
    C("weft_bincount", "a value -3", WEFT_EINVAL, c_bincount_negative),
    C("weft_eigh", "a matrix f32[2,3]", WEFT_ESHAPE, c_eigh_square),
    C("weft_qr", "a vector f32[10]", WEFT_ESHAPE, c_qr_vector),
    C("weft_svd", "an i32 matrix", WEFT_EDTYPE, c_svd_dtype),
    C("weft_lstsq", "l2_regularizer 0.5 without fast", WEFT_EINVAL, c_lstsq_l2),
    C("weft_cross", "f32[2,3] x f32[3,1]", WEFT_ESHAPE, c_cross_dims),
    C("weft_in_top_k", "k -1", WEFT_EINVAL, c_in_top_k_k),
    C("weft_histogram_fixed_width", "the range [1, 0]", WEFT_EINVAL, c_histogram_range),
    C("weft_gather_nd_ex", "batch 2 against batch 1", WEFT_ESHAPE, c_gather_nd_batch),
    C("weft_einsum", "ii->i of f32[2,3]", WEFT_ESHAPE, c_einsum_diag),
    C("weft_cumulative_logsumexp", "i32[2]", WEFT_EDTYPE, c_cumlse_int),
    C("weft_random_categorical", "logits f32[4]", WEFT_ESHAPE, c_categorical_rank),
    C("weft_space_to_depth", "f32[1,3,3,2] with block_size 2", WEFT_ESHAPE, c_space_to_depth_odd),
    C("weft_non_max_suppression", "boxes f32[2,3]", WEFT_ESHAPE, c_nms_boxes),
    C("weft_matrix_exponential", "f32[2,3]", WEFT_ESHAPE, c_expm_rect),
    C("weft_matrix_logarithm", "f32[2,3]", WEFT_ESHAPE, c_logm_rect),
    C("weft_confusion_matrix", "labels 0..3 with num_classes 3", WEFT_EINVAL, c_confusion_label),
    C("weft_rgb_to_hsv", "f32[3,2]", WEFT_ESHAPE, c_hsv_channels),
    C("weft_ssim", "f32[2,3,1] with filter_size 11", WEFT_ESHAPE, c_ssim_small),
    C("weft_sparse_categorical_crossentropy", "labels i32[3], probabilities f32[2,3]",
      WEFT_ESHAPE, c_sparse_cce_rank),
    C("weft_rot90", "f32[2,3]", WEFT_ESHAPE, c_rot90_matrix),
    C("weft_unstack", "f32[2,3] on axis 0 with num 3", WEFT_ESHAPE, c_unstack_num),
    C("weft_separable_conv2d", "pointwise filter f32[1,1,2,2] after a multiplier of 2",
      WEFT_ESHAPE, c_separable_pointwise),
    C("weft_dilation2d", "filters f32[2,2,1] for 2 channels", WEFT_ESHAPE, c_dilation_filters),
    C("weft_scatter_nd_max", "a bool tensor", WEFT_EDTYPE, c_scatter_max_bool),
    C("weft_dct", "i32[3]", WEFT_EDTYPE, c_dct_int),
    C("weft_truncatediv", "two bool tensors", WEFT_EDTYPE, c_truncatediv_bool),
    C("weft_fft", "f32[4,3]", WEFT_ESHAPE, c_fft_not_pairs),
    C("weft_stft", "a window of 15 for frames of 16", WEFT_ESHAPE, c_stft_window),
    C("weft_tensordot", "f32[2,3] with f32[2,3], axes 1", WEFT_ESHAPE, c_tensordot_dims),
};

#define N_CASES (sizeof cases / sizeof *cases)

/* An eager op and a traced call still work. */
static const char *good_calls(void)
{
    weft_ctx *cx = NULL;
    if (weft_eager_begin(rt, &cx) != 0)
        return "weft_eager_begin failed";
    weft_value *t = weft_transpose(cx, ev(cx, m23), NULL);
    bool ok = t && weft_tensor_dims(weft_value_tensor(t))[0] == 3;
    weft_eager_end(&cx);
    if (!ok)
        return "an eager transpose failed";
    if (traced_op(tr_slice, "f32[?,?]", m23) != 0)
        return "a traced slice failed";
    return "";
}

static void md_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s != '\n')
            fputc(*s, f);
    }
}

TestSuite(errors_shape, .init = setup, .fini = teardown, .timeout = 60);

Test(errors_shape, table)
{
    const char *doc_path = getenv("WEFT_ERRORS_DOC_SHAPE");
    FILE *doc = doc_path ? fopen(doc_path, "w") : NULL;
    int failed = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const err_case *c = &cases[i];
        weft_spec junk;
        weft_spec_parse("(errors walker sentinel)", &junk);
        int rc = c->run();
        char msg[512];
        snprintf(msg, sizeof msg, "%s", weft_errmsg());
        const char *want = c->mention ? c->mention : c->entry;
        const char *after = good_calls();
        if (rc != c->code || !strstr(msg, want) || strstr(msg, "sentinel") || after[0]) {
            failed++;
            cr_log_error("case %zu %s / %s: code %s, want %s; errmsg \"%s\"%s%s", i + 1, c->entry,
                         c->bad, weft_err_name(rc), weft_err_name(c->code), msg,
                         after[0] ? "; afterwards " : "", after);
        }
        if (doc) {
            fprintf(doc, "| S%zu | `%s` | ", i + 1, c->entry);
            md_escape(doc, c->bad);
            fprintf(doc, " | `%s` | \"", weft_err_name(c->code));
            md_escape(doc, msg);
            fputs("\" |\n", doc);
        }
    }
    if (doc)
        fclose(doc);
    cr_assert_eq(failed, 0, "%d of %zu shape error cases failed (see the log above)", failed,
                 N_CASES);
}
