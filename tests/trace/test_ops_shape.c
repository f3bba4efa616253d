/* The shape ops (transpose, slice, split, gather, concat, stack,
 * expand_dims, squeeze, tile, broadcast_to, the fill-likes, shape,
 * argmax, argmin, cumsum), each against a worked example in three modes:
 * eager (WEFT_RUN_EAGERLY), traced with the arguments' shapes, and traced
 * for an input_signature whose dims are all unknown, so that inference
 * with unknown dims and the run-time checks are exercised too.  Then their
 * bad inputs, in the same three modes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(ops_shape, .init = setup, .fini = teardown, .timeout = 30);

/* ---- Tensors from and to doubles. -------------------------------------- */

/* 0, 1, 2, ... of the given shape. */
static weft_tensor *iota(weft_dtype dt, int rank, const int64_t *dims)
{
    int64_t n = test_numel(rank, dims);
    double *v = calloc((size_t)(n ? n : 1), sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i;
    weft_tensor *t = test_tensor(dt, rank, dims, v);
    free(v);
    return t;
}

static void expect_tensor(const weft_tensor *t, weft_dtype dt, int rank, const int64_t *dims,
                          const double *want, const char *what)
{
    cr_assert_not_null(t, "%s: no result", what);
    cr_assert_eq(weft_tensor_dtype(t), dt, "%s: dtype %d, expected %d", what,
                 weft_tensor_dtype(t), dt);
    cr_assert_eq(weft_tensor_rank(t), rank, "%s: rank %d, expected %d", what,
                 weft_tensor_rank(t), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "%s: dim %d is %lld, expected %lld", what,
                     d, (long long)weft_tensor_dims(t)[d], (long long)dims[d]);
    for (int64_t i = 0; i < test_numel(rank, dims); i++) {
        double g = test_element(t, i);
        cr_assert(g == want[i] || (isnan(g) && isnan(want[i])),
                  "%s: element %lld is %g, expected %g", what, (long long)i, g, want[i]);
    }
}

/* ---- Running a case in every mode. ------------------------------------- */

typedef weft_value *(*op_fn)(weft_ctx *cx, weft_value *const *args, const void *p);
typedef struct op_case {
    op_fn fn;
    const void *p;       /* the op's parameters */
    size_t n_outs;       /* 0: 1 */
} op_case;

static int case_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const op_case *c = user;
    if (c->n_outs > 1) {
        /* A split: the parameters hold its call. */
        typedef int (*multi_fn)(weft_ctx *, weft_value *const *, weft_value **, const void *);
        return ((multi_fn)(void (*)(void))c->fn)(cx, args, outs, c->p);
    }
    outs[0] = c->fn(cx, args, c->p);
    return weft_ctx_status(cx);
}

enum { EAGER, TRACED, UNKNOWN_DIMS, N_MODES };
static const char *const mode_names[N_MODES] = { "eager", "traced", "unknown dims" };

#define MAX_ARGS 6
#define MAX_OUTS 4

/* Calls the case once in mode m (traced modes: twice, the second from the
 * cache; both must agree); returns the code, outs the results. */
static int call_mode(const op_case *c, int m, weft_tensor *const *args, size_t n_args,
                     weft_tensor **outs)
{
    size_t n_outs = c->n_outs ? c->n_outs : 1;
    weft_spec sig[MAX_ARGS];
    for (size_t i = 0; i < n_args; i++) {
        sig[i].dtype = weft_tensor_dtype(args[i]);
        sig[i].rank = weft_tensor_rank(args[i]);
        for (int d = 0; d < sig[i].rank; d++)
            sig[i].dims[d] = WEFT_DIM_ANY;
    }
    weft_function_desc d = {
        .name = "shape_case", .body = case_body, .user = (void *)c, .n_args = n_args,
        .n_outs = n_outs, .input_signature = m == UNKNOWN_DIMS ? sig : NULL,
        .flags = m == EAGER ? WEFT_RUN_EAGERLY : 0,
    };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a[MAX_ARGS];
    for (size_t i = 0; i < n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    int rc = weft_function_call(f, a, n_args, outs, n_outs);
    if (rc == 0 && m != EAGER) {
        weft_tensor *again[MAX_OUTS] = { NULL };
        cr_assert_eq(weft_function_call(f, a, n_args, again, n_outs), 0, "%s", weft_errmsg());
        for (size_t k = 0; k < n_outs; k++) {
            size_t nb = (size_t)weft_tensor_numel(outs[k]) *
                        weft_dtype_size(weft_tensor_dtype(outs[k]));
            cr_assert_eq(weft_tensor_numel(again[k]), weft_tensor_numel(outs[k]));
            cr_assert(memcmp(weft_tensor_data(again[k]), weft_tensor_data(outs[k]), nb) == 0,
                      "%s: the cached call differs", mode_names[m]);
            weft_tensor_release(again[k]);
        }
    }
    weft_function_destroy(&f);
    return rc;
}

typedef struct expected {
    weft_dtype dt;
    int rank;
    int64_t dims[WEFT_MAX_RANK];
    const double *v;
} expected;

/* Every mode gives want[k] for output k. */
static void expect_outs(const op_case *c, weft_tensor *const *args, size_t n_args,
                        const expected *want)
{
    size_t n_outs = c->n_outs ? c->n_outs : 1;
    for (int m = 0; m < N_MODES; m++) {
        weft_tensor *outs[MAX_OUTS] = { NULL };
        int rc = call_mode(c, m, args, n_args, outs);
        cr_assert_eq(rc, 0, "%s: %s", mode_names[m], weft_errmsg());
        for (size_t k = 0; k < n_outs; k++) {
            char what[64];
            snprintf(what, sizeof what, "%s, output %zu", mode_names[m], k);
            expect_tensor(outs[k], want[k].dt, want[k].rank, want[k].dims, want[k].v, what);
            weft_tensor_release(outs[k]);
        }
    }
}

static void expect1(const op_case *c, weft_tensor *const *args, size_t n_args, weft_dtype dt,
                    int rank, const int64_t *dims, const double *v)
{
    expected e = { .dt = dt, .rank = rank, .v = v };
    for (int d = 0; d < rank; d++)
        e.dims[d] = dims[d];
    expect_outs(c, args, n_args, &e);
}

/* Every mode fails with code and a message containing `says`. */
static void expect_fail(const op_case *c, weft_tensor *const *args, size_t n_args, int code,
                        const char *says)
{
    for (int m = 0; m < N_MODES; m++) {
        weft_tensor *outs[MAX_OUTS] = { NULL };
        int rc = call_mode(c, m, args, n_args, outs);
        cr_assert_eq(rc, code, "%s: %s (%s), expected %s", mode_names[m], weft_err_name(rc),
                     weft_errmsg(), weft_err_name(code));
        cr_assert(strstr(weft_errmsg(), says), "%s: \"%s\" does not say \"%s\"", mode_names[m],
                  weft_errmsg(), says);
    }
}

static void release_all(weft_tensor **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        weft_tensor_release(ts[i]);
}

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define VALS(...) ((const double[]){ __VA_ARGS__ })

/* ---- transpose --------------------------------------------------------- */

static weft_value *op_transpose(weft_ctx *cx, weft_value *const *args, const void *p)
{
    return weft_transpose(cx, args[0], p);
}

Test(ops_shape, transpose_reverses_or_permutes)
{
    weft_tensor *x = test_tensor(WEFT_F32, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
    op_case rev = { op_transpose, NULL, 0 };
    expect1(&rev, &x, 1, WEFT_F32, 2, DIMS(3, 2), VALS(1, 4, 2, 5, 3, 6));
    weft_tensor_release(x);

    /* [2,3,4] by perm {2,0,1} (given as {-1,0,1}): result [4,2,3] with
     * r[k][i][j] = x[i][j][k]. */
    x = iota(WEFT_I64, 3, DIMS(2, 3, 4));
    double want[24];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                want[(k * 2 + i) * 3 + j] = (i * 3 + j) * 4 + k;
    static const int perm[3] = { -1, 0, 1 };
    op_case c = { op_transpose, perm, 0 };
    expect1(&c, &x, 1, WEFT_I64, 3, DIMS(4, 2, 3), want);
    weft_tensor_release(x);
}

Test(ops_shape, transpose_bad_perm)
{
    weft_tensor *x = iota(WEFT_F32, 2, DIMS(2, 3));
    static const int twice[2] = { 0, 0 }, far[2] = { 0, 2 };
    op_case c = { op_transpose, twice, 0 };
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_transpose: perm entry 1 (0) is not a permutation");
    c.p = far;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_transpose: perm entry 1 (2) is out of range");
    weft_tensor_release(x);
}

/* ---- slice ------------------------------------------------------------- */

typedef struct slice_p {
    const int64_t *begin, *end, *step;
} slice_p;

static weft_value *op_slice(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const slice_p *s = p;
    return weft_slice(cx, args[0], s->begin, s->end, s->step);
}

static void expect_slice1(int64_t b, int64_t e, int64_t s, int64_t n, const double *want)
{
    weft_tensor *x = iota(WEFT_I32, 1, DIMS(10));
    slice_p p = { &b, &e, &s };
    op_case c = { op_slice, &p, 0 };
    expect1(&c, &x, 1, WEFT_I32, 1, &n, want);
    weft_tensor_release(x);
}

Test(ops_shape, slice_follows_python)
{
    expect_slice1(2, 8, 2, 3, VALS(2, 4, 6));                        /* x[2:8:2] */
    expect_slice1(-3, WEFT_END, 1, 3, VALS(7, 8, 9));                /* x[-3:] */
    expect_slice1(WEFT_END, WEFT_END, -1, 10, VALS(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)); /* x[::-1] */
    expect_slice1(8, 2, -3, 2, VALS(8, 5));                          /* x[8:2:-3] */
    expect_slice1(-100, 100, 1, 10, VALS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)); /* clamped */
    expect_slice1(5, 5, 1, 0, VALS(0));                              /* empty */
    expect_slice1(-1, -4, -1, 3, VALS(9, 8, 7));                     /* x[-1:-4:-1] */
    expect_slice1(INT64_MIN, INT64_MAX - 1, 4, 3, VALS(0, 4, 8));    /* extremes */
}

Test(ops_shape, slice_2d_with_defaults)
{
    /* x[1:, ::-2] of a 3x4 matrix (begin -1: the last column). */
    weft_tensor *x = iota(WEFT_F64, 2, DIMS(3, 4));
    slice_p p = { DIMS(1, -1), NULL, DIMS(1, -2) };
    op_case c = { op_slice, &p, 0 };
    expect1(&c, &x, 1, WEFT_F64, 2, DIMS(2, 2), VALS(7, 5, 11, 9));
    /* NULL begin: from the first element in the step's direction. */
    p.begin = NULL;
    p.end = DIMS(-1, WEFT_END);
    expect1(&c, &x, 1, WEFT_F64, 2, DIMS(2, 2), VALS(3, 1, 7, 5));
    weft_tensor_release(x);
}

Test(ops_shape, slice_step_zero)
{
    weft_tensor *x = iota(WEFT_F64, 2, DIMS(3, 4));
    slice_p p = { NULL, NULL, DIMS(1, 0) };
    op_case c = { op_slice, &p, 0 };
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_slice: step 1 is 0");
    weft_tensor_release(x);
}

/* ---- split ------------------------------------------------------------- */

typedef struct split_p {
    size_t n;
    const int64_t *sizes;
    int axis;
} split_p;

static int op_split(weft_ctx *cx, weft_value *const *args, weft_value **outs, const void *p)
{
    const split_p *s = p;
    int rc = weft_split(cx, args[0], s->n, s->sizes, s->axis, outs);
    if (rc != 0) {
        for (size_t k = 0; k < s->n; k++)
            cr_assert_null(outs[k], "a failed split left output %zu set", k);
    }
    return rc;
}

#define MULTI(fn) ((op_fn)(void (*)(void))(fn))

Test(ops_shape, split_by_sizes_and_equal_parts)
{
    weft_tensor *x = iota(WEFT_I64, 1, DIMS(10));
    split_p p = { 3, DIMS(3, -1, 2), 0 };
    op_case c = { MULTI(op_split), &p, 3 };
    expected want[3] = {
        { WEFT_I64, 1, { 3 }, VALS(0, 1, 2) },
        { WEFT_I64, 1, { 5 }, VALS(3, 4, 5, 6, 7) },
        { WEFT_I64, 1, { 2 }, VALS(8, 9) },
    };
    expect_outs(&c, &x, 1, want);
    weft_tensor_release(x);

    x = iota(WEFT_F32, 2, DIMS(2, 6));
    split_p q = { 3, NULL, -1 };
    op_case e = { MULTI(op_split), &q, 3 };
    expected parts[3] = {
        { WEFT_F32, 2, { 2, 2 }, VALS(0, 1, 6, 7) },
        { WEFT_F32, 2, { 2, 2 }, VALS(2, 3, 8, 9) },
        { WEFT_F32, 2, { 2, 2 }, VALS(4, 5, 10, 11) },
    };
    expect_outs(&e, &x, 1, parts);
    weft_tensor_release(x);
}

Test(ops_shape, split_bad_sizes)
{
    weft_tensor *x = iota(WEFT_I64, 1, DIMS(10));
    split_p p = { 3, NULL, 0 };
    op_case c = { MULTI(op_split), &p, 3 };
    expect_fail(&c, &x, 1, WEFT_ESHAPE, "does not split into 3 equal parts");
    split_p q = { 2, DIMS(3, 4), 0 };
    c.p = &q;
    c.n_outs = 2;
    expect_fail(&c, &x, 1, WEFT_ESHAPE, "the sizes add up to 7, but axis 0 of");
    split_p r = { 2, DIMS(8, -1), 0 };
    r.sizes = DIMS(11, -1);
    c.p = &r;
    expect_fail(&c, &x, 1, WEFT_ESHAPE, "the sizes add up to 11 and the rest");
    split_p s = { 2, DIMS(-1, -1), 0 };
    c.p = &s;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_split: size 1 (-1) is a second -1");
    weft_tensor_release(x);
}

/* ---- gather ------------------------------------------------------------ */

static weft_value *op_gather(weft_ctx *cx, weft_value *const *args, const void *p)
{
    return weft_gather(cx, args[0], args[1], *(const int *)p);
}

Test(ops_shape, gather_rows_and_columns)
{
    weft_tensor *in[2] = {
        test_tensor(WEFT_F32, 2, DIMS(3, 2), VALS(1, 2, 3, 4, 5, 6)),
        test_tensor(WEFT_I32, 1, DIMS(3), VALS(2, 0, -1)),
    };
    static const int axis0 = 0, axis1 = 1;
    op_case c = { op_gather, &axis0, 0 };
    expect1(&c, in, 2, WEFT_F32, 2, DIMS(3, 2), VALS(5, 6, 1, 2, 5, 6));
    weft_tensor_release(in[1]);
    /* 2-D indices along axis 1: shape [3] + [1,2] + []. */
    in[1] = test_tensor(WEFT_I64, 2, DIMS(1, 2), VALS(1, 0));
    c.p = &axis1;
    expect1(&c, in, 2, WEFT_F32, 3, DIMS(3, 1, 2), VALS(2, 1, 4, 3, 6, 5));
    weft_tensor_release(in[1]);
    /* A scalar index removes the axis. */
    in[1] = test_tensor(WEFT_I64, 0, NULL, VALS(1));
    c.p = &axis0;
    expect1(&c, in, 2, WEFT_F32, 1, DIMS(2), VALS(3, 4));
    release_all(in, 2);
}

Test(ops_shape, gather_bad_indices)
{
    weft_tensor *in[2] = {
        test_tensor(WEFT_F32, 2, DIMS(3, 2), VALS(1, 2, 3, 4, 5, 6)),
        test_tensor(WEFT_I32, 1, DIMS(3), VALS(0, 3, 1)),
    };
    static const int axis0 = 0, axis2 = 2;
    op_case c = { op_gather, &axis0, 0 };
    expect_fail(&c, in, 2, WEFT_EINVAL,
                "weft_gather: index 3 (at 1) is out of range for axis 0 of f32[3,2]");
    c.p = &axis2;
    expect_fail(&c, in, 2, WEFT_EINVAL, "weft_gather: axis 2 is out of range");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_F32, 1, DIMS(1), VALS(0));
    c.p = &axis0;
    expect_fail(&c, in, 2, WEFT_EDTYPE, "weft_gather: the indices are f32");
    release_all(in, 2);
}

/* gather with batch_dims: an axis and a batch_dims. */
typedef struct gather_p {
    int axis, batch;
} gather_p;

static weft_value *op_gather_ex(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const gather_p *g = p;
    return weft_gather_ex(cx, args[0], args[1], g->axis, g->batch);
}

/* params [2, 3, 4] (0..23): each batch element's indices pick within it,
 * along axis 1 (rows) and axis 2 (columns); batch_dims -1 is 1 for
 * indices of rank 2. */
Test(ops_shape, gather_with_batch_dims)
{
    weft_tensor *in[2] = { iota(WEFT_F32, 3, DIMS(2, 3, 4)),
                           test_tensor(WEFT_I64, 2, DIMS(2, 2), VALS(2, 0, -1, 1)) };
    /* out[b, m, :] = params[b, idx[b, m], :] */
    gather_p rows = { 1, 1 };
    op_case c = { op_gather_ex, &rows, 0 };
    expect1(&c, in, 2, WEFT_F32, 3, DIMS(2, 2, 4),
            VALS(8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 16, 17, 18, 19));
    gather_p neg = { 1, -1 };
    c.p = &neg;
    expect1(&c, in, 2, WEFT_F32, 3, DIMS(2, 2, 4),
            VALS(8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 16, 17, 18, 19));
    /* out[b, p, m] = params[b, p, idx[b, m]] */
    gather_p cols = { 2, 1 };
    c.p = &cols;
    expect1(&c, in, 2, WEFT_F32, 3, DIMS(2, 3, 2),
            VALS(2, 0, 6, 4, 10, 8, 15, 13, 19, 17, 23, 21));
    /* Errors: batch_dims above the axis; batch dims that differ; an
     * index out of its batch element's range. */
    gather_p too_many = { 0, 1 };
    c.p = &too_many;
    expect_fail(&c, in, 2, WEFT_EINVAL, "weft_gather: batch_dims 1 is not within 0..0");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_I64, 2, DIMS(3, 1), VALS(0, 0, 0));
    c.p = &rows;
    expect_fail(&c, in, 2, WEFT_ESHAPE, "differ in batch dim 0");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_I64, 2, DIMS(2, 1), VALS(0, 3));
    expect_fail(&c, in, 2, WEFT_EINVAL, "weft_gather: index 3 (at 1) is out of range");
    release_all(in, 2);
}

/* ---- concat and stack -------------------------------------------------- */

/* concat or stack of the first n arguments. */
typedef struct join_n {
    size_t n;
    int axis;
    bool stack;
} join_n;

static weft_value *op_join_n(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const join_n *j = p;
    return j->stack ? weft_stack(cx, args, j->n, j->axis) : weft_concat(cx, args, j->n, j->axis);
}

Test(ops_shape, concat_promotes_and_joins)
{
    weft_tensor *in[2] = {
        test_tensor(WEFT_I32, 2, DIMS(2, 2), VALS(1, 2, 3, 4)),
        test_tensor(WEFT_F32, 2, DIMS(1, 2), VALS(0.5, 6)),
    };
    join_n p = { 2, 0, false };
    op_case c = { op_join_n, &p, 0 };
    expect1(&c, in, 2, WEFT_F32, 2, DIMS(3, 2), VALS(1, 2, 3, 4, 0.5, 6));
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_I32, 2, DIMS(2, 1), VALS(7, 8));
    p.axis = -1;
    expect1(&c, in, 2, WEFT_I32, 2, DIMS(2, 3), VALS(1, 2, 7, 3, 4, 8));
    release_all(in, 2);
}

Test(ops_shape, concat_of_many_inputs)
{
    /* Five inputs: more than a node holds inline. */
    weft_tensor *in[5];
    for (int i = 0; i < 5; i++)
        in[i] = test_tensor(WEFT_I64, 2, DIMS(2, 1), VALS(i, 10 + i));
    join_n p = { 5, 1, false };
    op_case c = { op_join_n, &p, 0 };
    expect1(&c, in, 5, WEFT_I64, 2, DIMS(2, 5), VALS(0, 1, 2, 3, 4, 10, 11, 12, 13, 14));
    p.stack = true;
    p.axis = 0;
    expect1(&c, in, 5, WEFT_I64, 3, DIMS(5, 2, 1), VALS(0, 10, 1, 11, 2, 12, 3, 13, 4, 14));
    release_all(in, 5);
}

Test(ops_shape, stack_on_any_axis)
{
    weft_tensor *in[3] = {
        test_tensor(WEFT_F64, 1, DIMS(2), VALS(1, 2)),
        test_tensor(WEFT_F64, 1, DIMS(2), VALS(3, 4)),
        test_tensor(WEFT_BOOL, 1, DIMS(2), VALS(1, 0)),
    };
    join_n p = { 3, 0, true };
    op_case c = { op_join_n, &p, 0 };
    expect1(&c, in, 3, WEFT_F64, 2, DIMS(3, 2), VALS(1, 2, 3, 4, 1, 0));
    p.axis = -1;
    expect1(&c, in, 3, WEFT_F64, 2, DIMS(2, 3), VALS(1, 3, 1, 2, 4, 0));
    release_all(in, 3);
}

Test(ops_shape, concat_and_stack_bad_shapes)
{
    weft_tensor *in[2] = {
        test_tensor(WEFT_I32, 2, DIMS(2, 2), VALS(1, 2, 3, 4)),
        test_tensor(WEFT_I32, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6)),
    };
    join_n p = { 2, 0, false };
    op_case c = { op_join_n, &p, 0 };
    expect_fail(&c, in, 2, WEFT_ESHAPE,
                "weft_concat: input 0 is i32[2,2] and input 1 is i32[2,3]: dim 1 differs");
    p.stack = true;
    expect_fail(&c, in, 2, WEFT_ESHAPE, "weft_stack: input 0 is i32[2,2] and input 1 is i32[2,3]");
    weft_tensor_release(in[1]);
    in[1] = test_tensor(WEFT_I32, 1, DIMS(2), VALS(1, 2));
    p.stack = false;
    expect_fail(&c, in, 2, WEFT_ESHAPE, "the ranks differ");
    p.axis = 3;
    p.n = 1;
    expect_fail(&c, in, 1, WEFT_EINVAL, "weft_concat: axis 3 is out of range for i32[");
    release_all(in, 2);
}

/* ---- expand_dims, squeeze ---------------------------------------------- */

static weft_value *op_expand(weft_ctx *cx, weft_value *const *args, const void *p)
{
    return weft_expand_dims(cx, args[0], *(const int *)p);
}

static weft_value *op_squeeze(weft_ctx *cx, weft_value *const *args, const void *p)
{
    return weft_squeeze(cx, args[0], *(const int *)p);
}

Test(ops_shape, expand_dims_and_squeeze)
{
    weft_tensor *x = test_tensor(WEFT_I32, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
    static const int ax[] = { 0, 1, 2, -1, -3 };
    const int64_t shapes[][3] = { { 1, 2, 3 }, { 2, 1, 3 }, { 2, 3, 1 }, { 2, 3, 1 }, { 1, 2, 3 } };
    for (int i = 0; i < 5; i++) {
        op_case c = { op_expand, &ax[i], 0 };
        expect1(&c, &x, 1, WEFT_I32, 3, shapes[i], VALS(1, 2, 3, 4, 5, 6));
    }
    weft_tensor_release(x);
    x = test_tensor(WEFT_F32, 4, DIMS(1, 3, 1, 1), VALS(7, 8, 9));
    static const int all = WEFT_ALL_AXES, two = 2, first = -4;
    op_case c = { op_squeeze, &all, 0 };
    expect1(&c, &x, 1, WEFT_F32, 1, DIMS(3), VALS(7, 8, 9));
    c.p = &two;
    expect1(&c, &x, 1, WEFT_F32, 3, DIMS(1, 3, 1), VALS(7, 8, 9));
    c.p = &first;
    expect1(&c, &x, 1, WEFT_F32, 3, DIMS(3, 1, 1), VALS(7, 8, 9));
    weft_tensor_release(x);
}

Test(ops_shape, squeeze_and_expand_dims_bad_axes)
{
    weft_tensor *x = iota(WEFT_F32, 2, DIMS(2, 3));
    static const int one = 1, four = 4;
    op_case c = { op_squeeze, &one, 0 };
    /* With unknown dims the check runs when the function does. */
    expect_fail(&c, &x, 1, WEFT_ESHAPE, "weft_squeeze: axis 1 of f32[2,3] is 3, not 1");
    c.fn = op_expand;
    c.p = &four;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_expand_dims: axis 4 is out of range for");
    weft_tensor_release(x);
    x = iota(WEFT_F32, 8, DIMS(1, 1, 1, 1, 1, 1, 1, 2));
    c.p = &one;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_expand_dims: the result would have rank 9");
    weft_tensor_release(x);
}

/* ---- tile, broadcast_to ------------------------------------------------ */

static weft_value *op_tile(weft_ctx *cx, weft_value *const *args, const void *p)
{
    return weft_tile(cx, args[0], p);
}

typedef struct bcast_p {
    int rank;
    const int64_t *dims;
} bcast_p;

static weft_value *op_bcast(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const bcast_p *b = p;
    return weft_broadcast_to(cx, args[0], b->rank, b->dims);
}

Test(ops_shape, tile_repeats_every_dim)
{
    weft_tensor *x = test_tensor(WEFT_I64, 2, DIMS(2, 2), VALS(1, 2, 3, 4));
    op_case c = { op_tile, DIMS(2, 3), 0 };
    expect1(&c, &x, 1, WEFT_I64, 2, DIMS(4, 6),
            VALS(1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4));
    c.p = DIMS(0, 1);
    expect1(&c, &x, 1, WEFT_I64, 2, DIMS(0, 2), VALS(0));
    c.p = DIMS(1, -1);
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_tile: multiple 1 is negative (-1)");
    weft_tensor_release(x);
}

Test(ops_shape, broadcast_to_follows_numpy)
{
    weft_tensor *x = test_tensor(WEFT_F32, 2, DIMS(3, 1), VALS(1, 2, 3));
    bcast_p p = { 3, DIMS(2, 3, 2) };
    op_case c = { op_bcast, &p, 0 };
    expect1(&c, &x, 1, WEFT_F32, 3, DIMS(2, 3, 2), VALS(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
    /* -1 keeps x's dim (unknown while tracing in the third mode). */
    bcast_p q = { 2, DIMS(-1, 4) };
    c.p = &q;
    expect1(&c, &x, 1, WEFT_F32, 2, DIMS(3, 4), VALS(1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
    bcast_p bad = { 2, DIMS(2, 4) };
    c.p = &bad;
    expect_fail(&c, &x, 1, WEFT_ESHAPE, "weft_broadcast_to: f32[3,1] does not broadcast to dim 0");
    bcast_p keep = { 3, DIMS(-1, 3, 1) };
    c.p = &keep;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "dim 0 is -1 (keep) but f32[");
    bcast_p shorter = { 1, DIMS(3) };
    c.p = &shorter;
    expect_fail(&c, &x, 1, WEFT_ESHAPE, "has more dims than rank 1");
    weft_tensor_release(x);
}

/* ---- fill-likes and shape ---------------------------------------------- */

static weft_value *op_fills(weft_ctx *cx, weft_value *const *args, const void *p)
{
    (void)p;
    /* zeros + 2 * ones + fill(0.5): 2.5 everywhere, of x's dtype. */
    weft_value *z = weft_zeros_like(cx, args[0]);
    weft_value *o = weft_ones_like(cx, args[0]);
    weft_value *h = weft_fill_like(cx, args[0], 0.5);
    return weft_add(cx, weft_add(cx, z, weft_add(cx, o, o)), h);
}

static weft_value *op_shape(weft_ctx *cx, weft_value *const *args, const void *p)
{
    (void)p;
    return weft_shape(cx, args[0]);
}

Test(ops_shape, fill_likes_take_the_shape_at_run_time)
{
    weft_tensor *x = iota(WEFT_F64, 2, DIMS(2, 3));
    op_case c = { op_fills, NULL, 0 };
    expect1(&c, &x, 1, WEFT_F64, 2, DIMS(2, 3), VALS(2.5, 2.5, 2.5, 2.5, 2.5, 2.5));
    weft_tensor_release(x);
    /* i32: 0.5 converts to 0, like weft_cast. */
    x = iota(WEFT_I32, 1, DIMS(4));
    expect1(&c, &x, 1, WEFT_I32, 1, DIMS(4), VALS(2, 2, 2, 2));
    weft_tensor_release(x);
}

Test(ops_shape, shape_is_known_at_run_time)
{
    weft_tensor *x = iota(WEFT_BOOL, 3, DIMS(2, 0, 5));
    op_case c = { op_shape, NULL, 0 };
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(3), VALS(2, 0, 5));
    weft_tensor_release(x);
    x = test_tensor(WEFT_F32, 0, NULL, VALS(1));
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(0), VALS(0));
    weft_tensor_release(x);
}

/* The message the fill-likes exist for. */
static int body_fill_unknown(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_spec s;
    cr_assert_eq(weft_value_spec(args[0], &s), 0);
    outs[0] = weft_fill(cx, s.dtype, s.rank, s.dims, 0.0);
    return weft_ctx_status(cx);
}

Test(ops_shape, fill_of_an_unknown_dim_says_so)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[?,3]", &sig), 0);
    weft_function_desc d = { .name = "fill_unknown", .body = body_fill_unknown, .n_args = 1,
                             .n_outs = 1, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *x = iota(WEFT_F32, 2, DIMS(2, 3)), *y = NULL;
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_fill: dim 0 is unknown while tracing"), "%s",
              weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "weft_zeros_like"), "%s", weft_errmsg());
    weft_function_destroy(&f);
    weft_tensor_release(x);
}

/* ---- argmax, argmin ---------------------------------------------------- */

typedef struct arg_p {
    int axis;
    bool min;
} arg_p;

static weft_value *op_arg(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const arg_p *a = p;
    return a->min ? weft_argmin(cx, args[0], a->axis) : weft_argmax(cx, args[0], a->axis);
}

Test(ops_shape, argmax_argmin_first_index)
{
    weft_tensor *x = test_tensor(WEFT_I32, 2, DIMS(2, 3), VALS(1, 5, 5, 7, -1, 7));
    arg_p p = { 1, false };
    op_case c = { op_arg, &p, 0 };
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(2), VALS(1, 0));
    p.min = true;
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(2), VALS(0, 1));
    p.axis = 0;
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(3), VALS(0, 1, 0));
    p.min = false;
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(3), VALS(1, 0, 1));
    p.axis = WEFT_ALL_AXES;
    expect1(&c, &x, 1, WEFT_I64, 0, NULL, VALS(3));
    weft_tensor_release(x);
    /* NaN counts as the extreme, the first one wins. */
    x = test_tensor(WEFT_F64, 1, DIMS(5), VALS(1, NAN, 9, NAN, -3));
    p.axis = 0;
    expect1(&c, &x, 1, WEFT_I64, 0, NULL, VALS(1));
    p.min = true;
    expect1(&c, &x, 1, WEFT_I64, 0, NULL, VALS(1));
    weft_tensor_release(x);
    x = test_tensor(WEFT_BOOL, 1, DIMS(4), VALS(0, 0, 1, 1));
    p.min = false;
    expect1(&c, &x, 1, WEFT_I64, 0, NULL, VALS(2));
    weft_tensor_release(x);
}

Test(ops_shape, argmax_of_empty_or_bad_axis)
{
    weft_tensor *x = iota(WEFT_F32, 2, DIMS(0, 3));
    arg_p p = { 0, false };
    op_case c = { op_arg, &p, 0 };
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_argmax: axis 0 of f32[0,3] is empty");
    p.axis = 2;
    p.min = true;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_argmin: axis 2 is out of range for");
    weft_tensor_release(x);
}

/* ---- cumsum ------------------------------------------------------------ */

static weft_value *op_cumsum(weft_ctx *cx, weft_value *const *args, const void *p)
{
    return weft_cumsum(cx, args[0], *(const int *)p);
}

Test(ops_shape, cumsum_along_each_axis)
{
    weft_tensor *x = test_tensor(WEFT_F32, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
    static const int ax0 = 0, ax1 = -1, all = WEFT_ALL_AXES, bad = 2;
    op_case c = { op_cumsum, &ax0, 0 };
    expect1(&c, &x, 1, WEFT_F32, 2, DIMS(2, 3), VALS(1, 2, 3, 5, 7, 9));
    c.p = &ax1;
    expect1(&c, &x, 1, WEFT_F32, 2, DIMS(2, 3), VALS(1, 3, 6, 4, 9, 15));
    c.p = &all;
    expect1(&c, &x, 1, WEFT_F32, 1, DIMS(6), VALS(1, 3, 6, 10, 15, 21));
    c.p = &bad;
    expect_fail(&c, &x, 1, WEFT_EINVAL, "weft_cumsum: axis 2 is out of range for f32[");
    weft_tensor_release(x);
    /* bool counts as i64; i32 wraps. */
    x = test_tensor(WEFT_BOOL, 1, DIMS(4), VALS(1, 0, 1, 1));
    c.p = &ax0;
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(4), VALS(1, 1, 2, 3));
    weft_tensor_release(x);
    x = test_tensor(WEFT_I32, 1, DIMS(2), VALS(2147483647, 1));
    expect1(&c, &x, 1, WEFT_I32, 1, DIMS(2), VALS(2147483647, -2147483648.0));
    weft_tensor_release(x);
}

/* cumsum_ex and cumprod: an axis, a product flag and weft_scan_flags. */
typedef struct scan_p {
    int axis;
    bool prod;
    unsigned flags;
} scan_p;

static weft_value *op_scan(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const scan_p *s = p;
    return s->prod ? weft_cumprod(cx, args[0], s->axis, s->flags)
                   : weft_cumsum_ex(cx, args[0], s->axis, s->flags);
}

/* The scan of x + x. */
static weft_value *op_scan_of_double(weft_ctx *cx, weft_value *const *args, const void *p)
{
    weft_value *twice = weft_add(cx, args[0], args[0]);
    return op_scan(cx, &twice, p);
}

/* The scan of x[2,3] (1..6) along axis (0, 1) into want, from the
 * definition: element i combines the elements before it (exclusive) or
 * through it, counted from the end (reverse). */
static void scan_reference(const double *x, const scan_p *s, double *want)
{
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) {
            int len = s->axis == 0 ? 2 : 3, at = s->axis == 0 ? r : c;
            double acc = s->prod ? 1 : 0;
            for (int k = 0; k < len; k++) {
                bool in = s->flags & WEFT_SCAN_REVERSE ? k > at : k < at;
                if (k == at && !(s->flags & WEFT_SCAN_EXCLUSIVE))
                    in = true;
                if (!in)
                    continue;
                double v = s->axis == 0 ? x[k * 3 + c] : x[r * 3 + k];
                acc = s->prod ? acc * v : acc + v;
            }
            want[r * 3 + c] = acc;
        }
}

Test(ops_shape, cumsum_ex_and_cumprod_with_each_flag)
{
    const double x[6] = { 1, 2, 3, 4, 5, 6 };
    const weft_dtype dts[] = { WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    for (size_t t = 0; t < 4; t++) {
        weft_tensor *xt = test_tensor(dts[t], 2, DIMS(2, 3), x);
        for (int prod = 0; prod < 2; prod++)
            for (unsigned flags = 0; flags < 4; flags++)
                for (int axis = 0; axis < 2; axis++) {
                    scan_p p = { axis ? -1 : 0, prod, flags };
                    scan_p ref = { axis, prod, flags };
                    double want[6];
                    scan_reference(x, &ref, want);
                    op_case c = { op_scan, &p, 0 };
                    expect1(&c, &xt, 1, dts[t], 2, DIMS(2, 3), want);
                }
        weft_tensor_release(xt);
    }
    /* A reverse exclusive product of the flattened tensor; bool gives i64. */
    weft_tensor *b = test_tensor(WEFT_BOOL, 2, DIMS(2, 2), VALS(1, 1, 0, 1));
    scan_p p = { WEFT_ALL_AXES, true, WEFT_SCAN_EXCLUSIVE | WEFT_SCAN_REVERSE };
    op_case c = { op_scan, &p, 0 };
    expect1(&c, &b, 1, WEFT_I64, 1, DIMS(4), VALS(0, 0, 1, 1));
    weft_tensor_release(b);
    /* i32 products wrap; f32 multiplies in f64 and rounds each result. */
    weft_tensor *w = test_tensor(WEFT_I32, 1, DIMS(3), VALS(65536, 65536, 3));
    p = (scan_p){ 0, true, 0 };
    expect1(&c, &w, 1, WEFT_I32, 1, DIMS(3), VALS(65536, 0, 0));
    weft_tensor_release(w);
    weft_tensor *f = test_tensor(WEFT_F32, 1, DIMS(3), VALS(0.1, 0.1, 0.1));
    expect1(&c, &f, 1, WEFT_F32, 1, DIMS(3),
            VALS((float)0.1, (float)((double)(float)0.1 * (float)0.1),
                 (float)((double)(float)0.1 * (float)0.1 * (float)0.1)));
    p.flags = 4;
    expect_fail(&c, &f, 1, WEFT_EINVAL, "weft_cumprod: unknown flag bits 0x4");
    weft_tensor_release(f);
}

/* ---- cumulative_logsumexp ---------------------------------------------- */

static weft_value *op_cumlse(weft_ctx *cx, weft_value *const *args, const void *p)
{
    const scan_p *s = p;
    return weft_cumulative_logsumexp(cx, args[0], s->axis, s->flags);
}

/* log(sum(exp(v))) over the elements of x[rows, cols] that the scan puts
 * into element (r, c), from the definition in long double: the largest
 * taken out first, -inf for none. */
static double lse_reference(const double *x, int64_t rows, int64_t cols, const scan_p *s,
                            int64_t r, int64_t c)
{
    int64_t len = s->axis == 0 ? rows : cols, at = s->axis == 0 ? r : c;
    long double m = -INFINITY, sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 0; k < len; k++) {
            bool in = s->flags & WEFT_SCAN_REVERSE ? k > at : k < at;
            if (k == at && !(s->flags & WEFT_SCAN_EXCLUSIVE))
                in = true;
            if (!in)
                continue;
            long double v = s->axis == 0 ? x[k * cols + c] : x[r * cols + k];
            if (pass == 0 && v > m)
                m = v;
            if (pass == 1)
                sum += expl(v - m);
        }
    return m == -INFINITY ? -INFINITY : (double)(m + logl(sum));
}

/* Every mode's result within tol (relative, and absolute near 0) of the
 * reference for each element; infinities exactly. */
static void expect_lse(weft_tensor *x, const double *xv, int64_t rows, int64_t cols,
                       const scan_p *s, double tol)
{
    op_case c = { op_cumlse, s, 0 };
    for (int m = 0; m < N_MODES; m++) {
        weft_tensor *out = NULL;
        cr_assert_eq(call_mode(&c, m, &x, 1, &out), 0, "%s: %s", mode_names[m], weft_errmsg());
        cr_assert_eq(weft_tensor_dtype(out), weft_tensor_dtype(x));
        cr_assert_eq(weft_tensor_numel(out), rows * cols);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t k = 0; k < cols; k++) {
                double want = lse_reference(xv, rows, cols, s, r, k);
                double got = test_element(out, r * cols + k);
                bool ok = isinf(want) ? got == want
                                      : fabs(got - want) <= tol * fmax(1.0, fabs(want));
                cr_assert(ok, "%s, axis %d, flags %u: element (%lld, %lld) is %.17g, expected "
                          "%.17g", mode_names[m], s->axis, s->flags, (long long)r,
                          (long long)k, got, want);
            }
        weft_tensor_release(out);
    }
}

Test(ops_shape, cumulative_logsumexp_against_the_definition)
{
    /* Terms far apart (exp(1000) overflows a double), near each other,
     * and below the largest by more than a double's exponent. */
    const double x[6] = { 1000, -2, 3.5, 999, 1e-3, -1000 };
    weft_tensor *x64 = test_tensor(WEFT_F64, 2, DIMS(2, 3), x);
    for (unsigned flags = 0; flags < 4; flags++)
        for (int axis = 0; axis < 2; axis++) {
            scan_p p = { axis, false, flags };
            expect_lse(x64, x, 2, 3, &p, 4e-16);
        }
    weft_tensor_release(x64);
    /* f32 computes in f64 and rounds each result once. */
    const double xf[6] = { 80, (float)-2.25, 3.5, 81, 0.5, -90 };
    weft_tensor *x32 = test_tensor(WEFT_F32, 2, DIMS(2, 3), xf);
    scan_p p = { 1, false, WEFT_SCAN_REVERSE };
    expect_lse(x32, xf, 2, 3, &p, 0x1p-24);
    weft_tensor_release(x32);
    /* Columns in blocks over chunks: [40, 70] along axis 0 (rounding
     * errors add up along the 40 steps). */
    double big[40 * 70];
    for (int i = 0; i < 40 * 70; i++)
        big[i] = (double)((i * 37) % 101) / 7.0 - 5.0;
    weft_tensor *b = test_tensor(WEFT_F64, 2, DIMS(40, 70), big);
    p = (scan_p){ 0, false, WEFT_SCAN_EXCLUSIVE };
    expect_lse(b, big, 40, 70, &p, 40 * 0x1p-52);
    weft_tensor_release(b);
}

Test(ops_shape, cumulative_logsumexp_edges)
{
    scan_p p = { 0, false, 0 };
    op_case c = { op_cumlse, &p, 0 };
    /* The empty sum is -inf until a finite term comes; two +infs are +inf
     * (not inf - inf); a NaN stays. */
    weft_tensor *t = test_tensor(WEFT_F64, 1, DIMS(5), VALS(-INFINITY, -INFINITY, 0, INFINITY, 1));
    expect1(&c, &t, 1, WEFT_F64, 1, DIMS(5), VALS(-INFINITY, -INFINITY, 0, INFINITY, INFINITY));
    weft_tensor_release(t);
    t = test_tensor(WEFT_F64, 1, DIMS(3), VALS(INFINITY, INFINITY, NAN));
    expect1(&c, &t, 1, WEFT_F64, 1, DIMS(3), VALS(INFINITY, INFINITY, NAN));
    weft_tensor_release(t);
    /* An exclusive scan starts at -inf; WEFT_ALL_AXES flattens. */
    t = test_tensor(WEFT_F32, 2, DIMS(1, 2), VALS(0, 0));
    p = (scan_p){ WEFT_ALL_AXES, false, WEFT_SCAN_EXCLUSIVE };
    expect1(&c, &t, 1, WEFT_F32, 1, DIMS(2), VALS(-INFINITY, 0));
    p.flags = 8;
    expect_fail(&c, &t, 1, WEFT_EINVAL, "weft_cumulative_logsumexp: unknown flag bits 0x8");
    p = (scan_p){ 2, false, 0 };
    expect_fail(&c, &t, 1, WEFT_EINVAL, "weft_cumulative_logsumexp: axis 2 is out of range");
    weft_tensor_release(t);
    weft_tensor *i = test_tensor(WEFT_I32, 1, DIMS(2), VALS(1, 2));
    p = (scan_p){ 0, false, 0 };
    expect_fail(&c, &i, 1, WEFT_EDTYPE, "weft_cumulative_logsumexp: input 0 is i32");
    expect_fail(&c, &i, 1, WEFT_EDTYPE, "not f32 or f64");
    weft_tensor_release(i);
}

/* Columns split over chunks: a reverse exclusive sum of [300, 600] along
 * axis 0 against a loop. */
Test(ops_shape, reverse_exclusive_cumsum_of_a_large_tensor)
{
    int64_t rows = 300, cols = 600;
    weft_tensor *x = iota(WEFT_F64, 2, DIMS(rows, cols));
    double *want = calloc((size_t)(rows * cols), sizeof *want);
    cr_assert_not_null(want);
    for (int64_t c = 0; c < cols; c++) {
        double acc = 0;
        for (int64_t r = rows - 1; r >= 0; r--) {
            want[r * cols + c] = acc;
            acc += (double)(r * cols + c);
        }
    }
    scan_p p = { 0, false, WEFT_SCAN_EXCLUSIVE | WEFT_SCAN_REVERSE };
    op_case c = { op_scan, &p, 0 };
    expect1(&c, &x, 1, WEFT_F64, 2, DIMS(rows, cols), want);
    /* On an intermediate, which the compiler may overwrite in place. */
    for (int64_t i = 0; i < rows * cols; i++)
        want[i] *= 2;
    c.fn = op_scan_of_double;
    expect1(&c, &x, 1, WEFT_F64, 2, DIMS(rows, cols), want);
    free(want);
    weft_tensor_release(x);
}

/* A zero dim before the axis: empty results, not a division by zero in
 * the kernels' layout. */
Test(ops_shape, cumsum_and_argmax_after_an_empty_dim)
{
    weft_tensor *x = iota(WEFT_F32, 3, DIMS(2, 0, 3));
    static const int ax2 = 2, ax0 = 0;
    op_case c = { op_cumsum, &ax2, 0 };
    expect1(&c, &x, 1, WEFT_F32, 3, DIMS(2, 0, 3), NULL);
    c.p = &ax0;
    expect1(&c, &x, 1, WEFT_F32, 3, DIMS(2, 0, 3), NULL);
    arg_p p = { 2, false };
    op_case a = { op_arg, &p, 0 };
    expect1(&a, &x, 1, WEFT_I64, 2, DIMS(2, 0), NULL);
    p.min = true;
    p.axis = -1;
    expect1(&a, &x, 1, WEFT_I64, 2, DIMS(2, 0), NULL);
    weft_tensor_release(x);
}

/* ---- Eager contexts, sticky errors and NULLs --------------------------- */

Test(ops_shape, null_and_foreign_inputs)
{
    weft_ctx *cx = NULL, *other = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_eq(weft_eager_begin(rt, &other), 0);
    weft_tensor *t = iota(WEFT_F32, 1, DIMS(4));
    weft_value *x = weft_eager_value(cx, t), *y = weft_eager_value(other, t);
    cr_assert_null(weft_transpose(NULL, x, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_transpose: NULL context"));
    weft_value *vs[2] = { x, y };
    cr_assert_null(weft_concat(cx, vs, 2, 0));
    cr_assert(strstr(weft_errmsg(), "weft_concat: input 1 belongs to another context"), "%s",
              weft_errmsg());
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    /* Sticky: later ops return NULL without a new message. */
    cr_assert_null(weft_shape(cx, x));
    weft_value *outs[2] = { x, x };
    cr_assert_eq(weft_split(cx, x, 2, NULL, 0, outs), WEFT_EINVAL);
    cr_assert_null(outs[0]);
    cr_assert_null(outs[1]);
    weft_eager_end(&cx);

    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_eager_value(cx, t);
    cr_assert_null(weft_concat(cx, NULL, 2, 0));
    cr_assert(strstr(weft_errmsg(), "weft_concat: vs is NULL"));
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_eager_value(cx, t);
    cr_assert_null(weft_stack(cx, &x, 0, 0));
    cr_assert(strstr(weft_errmsg(), "weft_stack: 0 inputs"));
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_eager_value(cx, t);
    cr_assert_eq(weft_split(cx, x, 2, NULL, 0, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_split: outs is NULL"));
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_eager_value(cx, t);
    cr_assert_null(weft_tile(cx, x, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_tile: NULL multiples for rank 1"));
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_eager_value(cx, t);
    cr_assert_null(weft_broadcast_to(cx, x, 9, DIMS(1)));
    cr_assert(strstr(weft_errmsg(), "weft_broadcast_to: rank 9 is outside 0..8"));
    weft_eager_end(&cx);
    weft_eager_end(&other);
    weft_tensor_release(t);
}

/* ---- Large tensors: the chunked kernels against loops written here. ---- */

/* The result of a case on x, in every mode, against want (numel doubles). */
static double *ref_alloc(int64_t n)
{
    double *v = calloc((size_t)(n ? n : 1), sizeof *v);
    cr_assert_not_null(v);
    return v;
}

Test(ops_shape, large_transpose_slice_tile_broadcast)
{
    /* f32[3,200,150] by perm {2,0,1}: 90000 elements, several chunks. */
    weft_tensor *x = iota(WEFT_F32, 3, DIMS(3, 200, 150));
    double *want = ref_alloc(90000);
    for (int k = 0; k < 150; k++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 200; j++)
                want[(k * 3 + i) * 200 + j] = (i * 200 + j) * 150 + k;
    static const int perm[3] = { 2, 0, 1 };
    op_case c = { op_transpose, perm, 0 };
    expect1(&c, &x, 1, WEFT_F32, 3, DIMS(150, 3, 200), want);
    weft_tensor_release(x);

    /* A batched transpose f64[3,70,45] by {0,2,1}: tiles over the last two
     * dims, with bands and tiles that do not divide them. */
    x = iota(WEFT_F64, 3, DIMS(3, 70, 45));
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 45; j++)
            for (int i = 0; i < 70; i++)
                want[(b * 45 + j) * 70 + i] = (b * 70 + i) * 45 + j;
    static const int batched[3] = { 0, 2, 1 };
    c.p = batched;
    expect1(&c, &x, 1, WEFT_F64, 3, DIMS(3, 45, 70), want);
    weft_tensor_release(x);

    /* x[::-3, 5:-5:2] of i64[400,300]: [134, 145]. */
    x = iota(WEFT_I64, 2, DIMS(400, 300));
    slice_p p = { DIMS(WEFT_END, 5), DIMS(WEFT_END, -5), DIMS(-3, 2) };
    int64_t k = 0;
    for (int i = 399; i >= 0; i -= 3)
        for (int j = 5; j < 295; j += 2)
            want[k++] = i * 300 + j;
    cr_assert_eq(k, 134 * 145);
    op_case s = { op_slice, &p, 0 };
    expect1(&s, &x, 1, WEFT_I64, 2, DIMS(134, 145), want);
    weft_tensor_release(x);

    /* tile f64[100,100] by {3, 2}. */
    x = iota(WEFT_F64, 2, DIMS(100, 100));
    for (int i = 0; i < 300; i++)
        for (int j = 0; j < 200; j++)
            want[i * 200 + j] = (i % 100) * 100 + (j % 100);
    op_case t = { op_tile, DIMS(3, 2), 0 };
    double *big = ref_alloc(60000);
    memcpy(big, want, sizeof(double) * 60000);
    expect1(&t, &x, 1, WEFT_F64, 2, DIMS(300, 200), big);
    free(big);
    weft_tensor_release(x);

    /* broadcast_to of i32[1,300] and i32[300,1] to [400,300]. */
    x = iota(WEFT_I32, 2, DIMS(1, 300));
    bcast_p b = { 2, DIMS(400, 300) };
    op_case bc = { op_bcast, &b, 0 };
    big = ref_alloc(120000);
    for (int i = 0; i < 400; i++)
        for (int j = 0; j < 300; j++)
            big[i * 300 + j] = j;
    expect1(&bc, &x, 1, WEFT_I32, 2, DIMS(400, 300), big);
    weft_tensor_release(x);
    free(big);
    free(want);
}

/* Short rows (a pixel's channels) take whole rows per chunk: segments of
 * 1, 0 and 2 elements over 40000 rows (several chunks), a stack of three
 * f64 vectors on the last axis, segments of every short size, and
 * bools. */
Test(ops_shape, concat_of_short_rows)
{
    enum { R = 40000 };
    weft_tensor *in[3] = { iota(WEFT_F32, 2, DIMS(R, 1)), iota(WEFT_F32, 2, DIMS(R, 0)),
                           iota(WEFT_F32, 2, DIMS(R, 2)) };
    double *want = ref_alloc(R * 4);
    for (int i = 0; i < R; i++) {
        want[i * 3] = i;
        want[i * 3 + 1] = i * 2;
        want[i * 3 + 2] = i * 2 + 1;
    }
    join_n p = { 3, 1, false };
    op_case c = { op_join_n, &p, 0 };
    expect1(&c, in, 3, WEFT_F32, 2, DIMS(R, 3), want);
    release_all(in, 3);
    for (int k = 0; k < 3; k++)
        in[k] = iota(WEFT_F64, 1, DIMS(R));
    for (int i = 0; i < R * 3; i++)
        want[i] = i / 3;
    join_n q = { 3, -1, true };
    c.p = &q;
    expect1(&c, in, 3, WEFT_F64, 2, DIMS(R, 3), want);
    release_all(in, 3);
    /* Segments of 12 and 4 bytes (f32), 16 and 8 (f64). */
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
        int64_t wide = f ? 2 : 3;
        in[0] = iota(dt, 2, DIMS(R, wide));
        in[1] = iota(dt, 2, DIMS(R, 1));
        for (int i = 0; i < R; i++) {
            for (int k = 0; k < wide; k++)
                want[i * (wide + 1) + k] = i * wide + k;
            want[i * (wide + 1) + wide] = i;
        }
        join_n w = { 2, 1, false };
        c.p = &w;
        expect1(&c, in, 2, dt, 2, DIMS(R, wide + 1), want);
        release_all(in, 2);
    }
    in[0] = test_tensor(WEFT_BOOL, 2, DIMS(2, 1), VALS(1, 0));
    in[1] = test_tensor(WEFT_BOOL, 2, DIMS(2, 2), VALS(0, 1, 1, 1));
    join_n b = { 2, 1, false };
    c.p = &b;
    expect1(&c, in, 2, WEFT_BOOL, 2, DIMS(2, 3), VALS(1, 0, 1, 0, 1, 1));
    release_all(in, 2);
    free(want);
}

/* One element per input and row: stacks of two and four vectors and a
 * concat of [R,1] columns (the interleaving loops, for 4- and 8-byte
 * elements), over 40000 rows in several chunks. */
Test(ops_shape, stack_interleaves_vectors)
{
    enum { R = 40000 };
    static const weft_dtype types[3] = { WEFT_F32, WEFT_I32, WEFT_I64 };
    double *want = ref_alloc(R * 4), *col = ref_alloc(R);
    for (int r = 0; r < R * 4; r++)
        want[r] = r;
    weft_tensor *in[4];
    /* Input i holds r * k + i at row r: the result counts up. */
    for (int t = 0; t < 3; t++)
        for (int k = 2; k <= 4; k += 2) {
            for (int i = 0; i < k; i++) {
                for (int r = 0; r < R; r++)
                    col[r] = r * k + i;
                in[i] = test_tensor(types[t], 1, DIMS(R), col);
            }
            join_n p = { (size_t)k, 1, true };
            op_case c = { op_join_n, &p, 0 };
            expect1(&c, in, (size_t)k, types[t], 2, DIMS(R, k), want);
            release_all(in, (size_t)k);
        }
    for (int i = 0; i < 3; i++) {
        for (int r = 0; r < R; r++)
            col[r] = r * 3 + i;
        in[i] = test_tensor(WEFT_F32, 2, DIMS(R, 1), col);
    }
    join_n q = { 3, 1, false };
    op_case c = { op_join_n, &q, 0 };
    expect1(&c, in, 3, WEFT_F32, 2, DIMS(R, 3), want);
    release_all(in, 3);
    free(col);
    free(want);
}

/* Row segments of 520 B to 4 KiB between buffers of a page or more, the
 * sizes whose copies may go through `rep movsb`: every byte lands, with
 * segment lengths that are not a multiple of a cache line too. */
Test(ops_shape, concat_of_kilobyte_segments)
{
    static const int64_t widths[][2] = { { 256, 256 }, { 130, 600 }, { 1023, 1 }, { 512, 200 } };
    enum { R = 300 };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        int64_t a = widths[w][0], b = widths[w][1];
        weft_tensor *in[2] = { iota(WEFT_F32, 2, DIMS(R, a)), iota(WEFT_F32, 2, DIMS(R, b)) };
        double *want = ref_alloc(R * (a + b));
        for (int64_t i = 0; i < R; i++)
            for (int64_t j = 0; j < a + b; j++)
                want[i * (a + b) + j] = j < a ? i * a + j : i * b + (j - a);
        join_n p = { 2, 1, false };
        op_case c = { op_join_n, &p, 0 };
        expect1(&c, in, 2, WEFT_F32, 2, DIMS(R, a + b), want);
        release_all(in, 2);
        free(want);
    }
}

Test(ops_shape, large_concat_gather_split)
{
    weft_tensor *in[3] = {
        iota(WEFT_F32, 2, DIMS(100, 300)),
        iota(WEFT_F32, 2, DIMS(50, 300)),
        iota(WEFT_F32, 2, DIMS(1, 300)),
    };
    double *want = ref_alloc(151 * 300);
    for (int i = 0; i < 151; i++)
        for (int j = 0; j < 300; j++)
            want[i * 300 + j] = (i < 100 ? i : i < 150 ? i - 100 : 0) * 300 + j;
    join_n p = { 3, 0, false };
    op_case c = { op_join_n, &p, 0 };
    expect1(&c, in, 3, WEFT_F32, 2, DIMS(151, 300), want);
    release_all(in, 3);
    free(want);

    /* Along axis 1: rows of 100 + 7 elements from two inputs. */
    in[0] = iota(WEFT_I64, 2, DIMS(400, 100));
    in[1] = iota(WEFT_I64, 2, DIMS(400, 7));
    want = ref_alloc(400 * 107);
    for (int i = 0; i < 400; i++)
        for (int j = 0; j < 107; j++)
            want[i * 107 + j] = j < 100 ? i * 100 + j : i * 7 + (j - 100);
    join_n q = { 2, 1, false };
    c.p = &q;
    expect1(&c, in, 2, WEFT_I64, 2, DIMS(400, 107), want);
    release_all(in, 2);
    free(want);

    /* Gather 700 rows of f64[1000,64], some negative. */
    in[0] = iota(WEFT_F64, 2, DIMS(1000, 64));
    double idx[700];
    for (int i = 0; i < 700; i++)
        idx[i] = (i * 37) % 1000 - (i % 3 == 0 ? 1000 : 0);
    in[1] = test_tensor(WEFT_I64, 1, DIMS(700), idx);
    want = ref_alloc(700 * 64);
    for (int i = 0; i < 700; i++)
        for (int j = 0; j < 64; j++)
            want[i * 64 + j] = ((i * 37) % 1000) * 64 + j;
    static const int axis0 = 0;
    op_case g = { op_gather, &axis0, 0 };
    expect1(&g, in, 2, WEFT_F64, 2, DIMS(700, 64), want);
    release_all(in, 2);
    free(want);

    /* Split i32[200,300] along axis 1 into 100, the rest (150), 50. */
    in[0] = iota(WEFT_I32, 2, DIMS(200, 300));
    double *parts[3] = { ref_alloc(20000), ref_alloc(30000), ref_alloc(10000) };
    const int starts[3] = { 0, 100, 250 }, widths[3] = { 100, 150, 50 };
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 200; i++)
            for (int j = 0; j < widths[k]; j++)
                parts[k][i * widths[k] + j] = i * 300 + starts[k] + j;
    split_p sp = { 3, DIMS(100, -1, 50), 1 };
    op_case s = { MULTI(op_split), &sp, 3 };
    expected e[3] = {
        { WEFT_I32, 2, { 200, 100 }, parts[0] },
        { WEFT_I32, 2, { 200, 150 }, parts[1] },
        { WEFT_I32, 2, { 200, 50 }, parts[2] },
    };
    expect_outs(&s, in, 1, e);
    weft_tensor_release(in[0]);
    for (int k = 0; k < 3; k++)
        free(parts[k]);
}

Test(ops_shape, large_argmax_and_cumsum)
{
    /* f64[50000,2]: two outputs over a long axis (cut into pieces whose
     * winners merge in order).  Column 0 peaks twice (first at 31111),
     * column 1 is a NaN at 40000 after a larger value. */
    int64_t rows = 50000;
    double *v = ref_alloc(rows * 2);
    for (int64_t i = 0; i < rows; i++) {
        v[2 * i] = (double)(i % 1000);
        v[2 * i + 1] = -(double)i;
    }
    v[2 * 31111] = 5000;
    v[2 * 45000] = 5000;
    v[2 * 40000 + 1] = NAN;
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(rows, 2), v);
    arg_p p = { 0, false };
    op_case c = { op_arg, &p, 0 };
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(2), VALS(31111, 40000));
    p.min = true;
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(2), VALS(0, 40000));
    p.axis = WEFT_ALL_AXES;
    expect1(&c, &x, 1, WEFT_I64, 0, NULL, VALS(2 * 40000 + 1));
    weft_tensor_release(x);
    free(v);

    /* f32[40,3000] along axis 0: 3000 lanes, more than one item keeps,
     * so items of 2048 and 952 (or narrower, for more chunks). */
    v = ref_alloc(40 * 3000);
    for (int r = 0; r < 40; r++)
        for (int col = 0; col < 3000; col++)
            v[r * 3000 + col] = (double)((r * 7 + col * 13) % 41);
    x = test_tensor(WEFT_F32, 2, DIMS(40, 3000), v);
    double *first = ref_alloc(3000), *sums = ref_alloc(40 * 3000);
    for (int col = 0; col < 3000; col++) {
        int best = 0;
        double acc = 0;
        for (int r = 0; r < 40; r++) {
            if (v[r * 3000 + col] > v[best * 3000 + col])
                best = r;
            sums[r * 3000 + col] = acc += v[r * 3000 + col];
        }
        first[col] = best;
    }
    p.axis = 0;
    p.min = false;
    expect1(&c, &x, 1, WEFT_I64, 1, DIMS(3000), first);
    static const int lanes0 = 0;
    op_case cl = { op_cumsum, &lanes0, 0 };
    expect1(&cl, &x, 1, WEFT_F32, 2, DIMS(40, 3000), sums);
    weft_tensor_release(x);
    free(v);
    free(first);
    free(sums);

    /* cumsum of i32[300,400] along both axes, against running sums. */
    x = iota(WEFT_I32, 2, DIMS(300, 400));
    double *want = ref_alloc(120000);
    static const int ax0 = 0, ax1 = 1;
    for (int j = 0; j < 400; j++) {
        double acc = 0;
        for (int i = 0; i < 300; i++)
            want[i * 400 + j] = acc += i * 400 + j;
    }
    op_case cs = { op_cumsum, &ax0, 0 };
    expect1(&cs, &x, 1, WEFT_I32, 2, DIMS(300, 400), want);
    for (int i = 0; i < 300; i++) {
        double acc = 0;
        for (int j = 0; j < 400; j++)
            want[i * 400 + j] = acc += i * 400 + j;
    }
    cs.p = &ax1;
    expect1(&cs, &x, 1, WEFT_I32, 2, DIMS(300, 400), want);
    weft_tensor_release(x);
    free(want);
}

/* ---- The compiler: folding, CSE, DCE and the buffer plan. -------------- */

/* The compiled op list of body for one argument x (called once). */
static char *ops_of(weft_body_fn body, weft_tensor *x, size_t n_outs, const weft_spec *sig)
{
    weft_function_desc d = { .name = "ops", .body = body, .n_args = 1, .n_outs = n_outs,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a = weft_arg_tensor(x);
    weft_tensor *outs[MAX_OUTS] = { NULL };
    cr_assert_eq(weft_function_call(f, &a, 1, outs, n_outs), 0, "%s", weft_errmsg());
    release_all(outs, n_outs);
    char *text = test_ops_text(f);
    weft_function_destroy(&f);
    return text;
}

static int body_cse(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    const int64_t b[1] = { 1 }, e[1] = { WEFT_END }, s1[1] = { 1 }, s2[1] = { 2 };
    static const int perm[2] = { 1, 0 };
    weft_value *y = weft_expand_dims(cx, x, 0);
    /* Two equal slices merge; a different step does not. */
    weft_value *a = weft_slice(cx, x, b, e, s1), *a2 = weft_slice(cx, x, b, e, s1);
    weft_value *c = weft_slice(cx, x, b, e, s2);
    /* Reversing and {1,0} are different attributes (no merge), the same
     * twice is one node. */
    weft_value *t = weft_add(cx, weft_transpose(cx, y, NULL), weft_transpose(cx, y, perm));
    t = weft_add(cx, t, weft_transpose(cx, y, perm));
    /* Dead: never reaches an output. */
    weft_gather(cx, x, weft_const_i64(cx, 0), 0);
    weft_value *sa = weft_add(cx, weft_sum(cx, a, WEFT_ALL_AXES), weft_sum(cx, a2, WEFT_ALL_AXES));
    outs[0] = weft_add(cx, sa, weft_sum(cx, c, WEFT_ALL_AXES));
    outs[1] = t;
    outs[2] = weft_shape(cx, x);
    return weft_ctx_status(cx);
}

Test(ops_shape, cse_dce_fold_and_listing)
{
    weft_tensor *x = iota(WEFT_F32, 1, DIMS(6));
    char *text = ops_of(body_cse, x, 3, NULL);
    cr_assert_eq(test_count(text, "= slice<1:>"), 1, "equal slices were not merged:\n%s", text);
    cr_assert_eq(test_count(text, "= slice<1::2>"), 1, "%s", text);
    cr_assert_eq(test_count(text, "= gather"), 0, "the dead gather stayed:\n%s", text);
    cr_assert_eq(test_count(text, "= expand_dims<axis=0>"), 1, "%s", text);
    cr_assert_eq(test_count(text, "= transpose("), 1, "%s", text);
    cr_assert_eq(test_count(text, "= transpose<perm=[1,0]>("), 1, "%s", text);
    /* The shape of a known shape is a constant; nothing computes it. */
    cr_assert_eq(test_count(text, "= shape"), 0, "%s", text);
    cr_assert(strstr(text, "= const 6 : i64[1]"), "%s", text);
    free(text);

    /* With the dim unknown the shape is computed when the function runs. */
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[?]", &sig), 0);
    text = ops_of(body_cse, x, 3, &sig);
    cr_assert_eq(test_count(text, "= shape(%0) : i64[1]"), 1, "%s", text);
    free(text);
    weft_tensor_release(x);
}

static int body_in_place(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    /* x + 1 is a fresh buffer; expand_dims, squeeze, cumsum and
     * fill_like may then all work in that one buffer. */
    weft_value *y = weft_add(cx, args[0], weft_const_f64(cx, 1));
    weft_value *z = weft_squeeze(cx, weft_expand_dims(cx, y, 1), 1);
    weft_value *c = weft_cumsum(cx, z, 0);
    outs[0] = weft_sum(cx, weft_fill_like(cx, c, 2.0), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

Test(ops_shape, reshape_like_ops_write_in_place)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[?]", &sig), 0);
    weft_tensor *x = iota(WEFT_F64, 1, DIMS(5));
    char *text = ops_of(body_in_place, x, 1, &sig);
    /* Each of them reuses its own input's buffer. */
    const char *ops[] = { "expand_dims", "squeeze", "cumsum", "fill_like" };
    for (int i = 0; i < 4; i++) {
        const char *line = strstr(text, ops[i]);
        cr_assert_not_null(line, "no %s:\n%s", ops[i], text);
        const char *eol = strchr(line, '\n');
        const char *re = strstr(line, "reuses");
        cr_assert(re && re < eol, "%s does not reuse a buffer:\n%s", ops[i], text);
    }
    free(text);
    weft_tensor_release(x);
}

static int body_fold_many(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *parts[5];
    for (int i = 0; i < 5; i++)
        parts[i] = weft_range(cx, WEFT_I64, i, i + 3, 1);
    /* Five constant inputs: folded like any op on constants. */
    weft_value *c = weft_concat(cx, parts, 5, 0);
    outs[0] = weft_add(cx, args[0], weft_sum(cx, c, WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

Test(ops_shape, folding_takes_any_input_count)
{
    weft_tensor *x = test_tensor(WEFT_I64, 0, NULL, VALS(1));
    char *text = ops_of(body_fold_many, x, 1, NULL);
    cr_assert_eq(test_count(text, "concat"), 0, "the concat of constants stayed:\n%s", text);
    cr_assert_eq(test_count(text, "range"), 0, "%s", text);
    free(text);
    weft_tensor_release(x);
}

static int body_listing(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];   /* f32[?,?] */
    weft_value *p[3], *q[2];
    weft_split(cx, x, 2, NULL, 1, p);
    weft_split(cx, x, 2, (int64_t[]){ 1, -1 }, 0, q);
    weft_value *idx = weft_argmax(cx, x, -1);
    weft_value *terms[] = {
        weft_concat(cx, q, 2, 0),
        weft_stack(cx, p, 2, 1),
        weft_gather(cx, x, idx, 0),
        weft_tile(cx, x, (int64_t[]){ 2, 1 }),
        weft_broadcast_to(cx, x, 3, (int64_t[]){ 2, -1, -1 }),
        weft_cumsum(cx, x, 1),
        weft_fill_like(cx, x, 2.5),
        weft_argmin(cx, x, WEFT_ALL_AXES),
        weft_shape(cx, x),
    };
    weft_value *sum = weft_const_f64(cx, 0);
    for (size_t i = 0; i < sizeof terms / sizeof *terms; i++)
        sum = weft_add(cx, sum, weft_sum(cx, terms[i], WEFT_ALL_AXES));
    outs[0] = sum;
    return weft_ctx_status(cx);
}

Test(ops_shape, op_listing_shows_attributes)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[?,?]", &sig), 0);
    weft_tensor *x = iota(WEFT_F32, 2, DIMS(4, 4));
    char *text = ops_of(body_listing, x, 1, &sig);
    const char *want[] = {
        "= split<axis=1,part=0/2>(%0) : f32[?,?]", "= split<axis=1,part=1/2>(%0)",
        "= split<axis=0,part=0,size=1>(%0) : f32[1,?]", "= split<axis=0,part=1,size=-1>(%0)",
        "= argmax<axis=-1>(%0) : i64[?]", "= concat<axis=0>(", "= stack<axis=1>(",
        "= gather<axis=0>(%0, ", "= tile<multiples=[2,1]>(%0) : f32[?,?]",
        "= broadcast_to<dims=[2,-1,-1]>(%0) : f32[2,?,?]", "= cumsum<axis=1>(%0) : f32[?,?]",
        "= fill_like<2.5>(%0) : f32[?,?]", "= argmin(%0) : i64[]", "= shape(%0) : i64[2]",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect(strstr(text, want[i]), "no \"%s\" in:\n%s", want[i], text);
    free(text);
    weft_tensor_release(x);
}

/* ---- Inside map bodies and relaxed retraces. --------------------------- */

static int body_row(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    /* A row reversed, then its running sums. */
    weft_value *r = weft_slice(cx, args[0], NULL, NULL, (int64_t[]){ -1 });
    outs[0] = weft_cumsum(cx, r, 0);
    return weft_ctx_status(cx);
}

static int body_map_rows(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    outs[0] = weft_map(cx, user, args[0], 2);
    return weft_ctx_status(cx);
}

Test(ops_shape, in_map_bodies_and_relaxed_retraces)
{
    weft_function_desc rd = { .name = "row", .body = body_row, .n_args = 1, .n_outs = 1 };
    weft_function *row = NULL, *f = NULL;
    cr_assert_eq(weft_function_create(rt, &rd, &row), 0, "%s", weft_errmsg());
    for (unsigned flags = 0; flags <= WEFT_RUN_EAGERLY; flags += WEFT_RUN_EAGERLY) {
        weft_function_desc d = { .name = "rows", .body = body_map_rows, .user = row,
                                 .n_args = 1, .n_outs = 1, .flags = flags };
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *x = iota(WEFT_I64, 2, DIMS(3, 4)), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        expect_tensor(y, WEFT_I64, 2, DIMS(3, 4), VALS(3, 5, 6, 6, 7, 13, 18, 22, 11, 21, 30, 38),
                      flags ? "map, eager" : "map, traced");
        weft_tensor_release(y);
        weft_tensor_release(x);
        weft_function_destroy(&f);
    }

    /* Three lengths: the second traces again with the dim relaxed, and
     * that trace serves the third. */
    weft_function_desc d = { .name = "row", .body = body_row, .n_args = 1, .n_outs = 1,
                             .flags = WEFT_REDUCE_RETRACING };
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    for (int64_t n = 3; n <= 5; n++) {
        weft_tensor *x = iota(WEFT_I32, 1, &n), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        double want[5], acc = 0;
        for (int64_t i = 0; i < n; i++)
            want[i] = acc += (double)(n - 1 - i);
        expect_tensor(y, WEFT_I32, 1, &n, want, "relaxed");
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    cr_assert_eq(weft_function_tracing_count(f), 2);
    weft_function_destroy(&f);
    weft_function_destroy(&row);
}
