/* Tracing a body: the nodes ops record, promotion casts, inferred specs
 * with unknown dims, sticky errors, static arguments, foreign values. */
#include <string.h>

#include "runtime/iface.h"
#include "test_util.h"
#include "trace/ctx.h"
#include "trace/tensor_impl.h"

static weft__targ tensor_arg(const char *spec)
{
    weft__targ a = { .kind = WEFT_ARG_TENSOR };
    cr_assert_eq(weft_spec_parse(spec, &a.spec), 0, "%s", spec);
    return a;
}

static void assert_spec(const weft_spec *s, const char *want)
{
    char buf[WEFT__SPEC_STR_MAX];
    cr_assert_str_eq(weft__spec_str(s, buf, sizeof buf), want);
}

static const weft__node *node(const weft__graph *g, uint32_t id)
{
    cr_assert_lt(id, g->n_nodes);
    return &g->nodes[id];
}

/* Runs body over specs; returns the trace's code, the graph in *g. */
static int trace(weft_body_fn body, void *user, const weft__targ *args, size_t n_args,
                 size_t n_outs, weft__graph *g)
{
    return weft__trace_body(NULL, "test_fn", body, user, args, n_args, n_outs, g);
}

static int body_add(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], args[1]);
    return 0;
}

Test(ops_record, binary_keeps_unknown_dims, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("f32[?,3]"), tensor_arg("f32[3]") };
    weft__graph g;
    cr_assert_eq(trace(body_add, NULL, args, 2, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_args, 2);
    cr_assert_eq(g.n_nodes, 3);
    cr_assert_eq(node(&g, 0)->op, WEFT__OP_ARG);
    cr_assert_eq(node(&g, 0)->attr.arg.index, 0);
    assert_spec(&node(&g, 0)->spec, "f32[?,3]");
    cr_assert_eq(node(&g, 1)->op, WEFT__OP_ARG);
    cr_assert_eq(node(&g, 1)->attr.arg.index, 1);
    const weft__node *add = node(&g, 2);
    cr_assert_eq(add->op, WEFT__OP_ADD);
    cr_assert_eq(add->n_in, 2);
    cr_assert_eq(add->in[0], 0);
    cr_assert_eq(add->in[1], 1);
    cr_assert_eq(add->after, WEFT__NO_NODE);
    assert_spec(&add->spec, "f32[?,3]");
    cr_assert_eq(g.n_outs, 1);
    cr_assert_eq(g.outs[0], 2);
    cr_assert_eq(g.last_side_effect, WEFT__NO_NODE);
    weft__graph_free(&g);
}

Test(ops_record, promotion_inserts_casts, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("i32[4]"), tensor_arg("f32[4]") };
    weft__graph g;
    cr_assert_eq(trace(body_add, NULL, args, 2, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_nodes, 4);
    const weft__node *cast = node(&g, 2);
    cr_assert_eq(cast->op, WEFT__OP_CAST);
    cr_assert_eq(cast->attr.cast.to, WEFT_F32);
    cr_assert_eq(cast->in[0], 0);
    assert_spec(&cast->spec, "f32[4]");
    const weft__node *add = node(&g, 3);
    cr_assert_eq(add->op, WEFT__OP_ADD);
    cr_assert_eq(add->in[0], 2);
    cr_assert_eq(add->in[1], 1);
    assert_spec(&add->spec, "f32[4]");
    cr_assert_eq(g.outs[0], 3);
    weft__graph_free(&g);

    /* The wider dtype wins whichever side it is on; bool is the narrowest. */
    weft__targ args2[2] = { tensor_arg("f64[2]"), tensor_arg("bool[2]") };
    cr_assert_eq(trace(body_add, NULL, args2, 2, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_nodes, 4);
    cr_assert_eq(node(&g, 2)->op, WEFT__OP_CAST);
    cr_assert_eq(node(&g, 2)->in[0], 1);
    cr_assert_eq(node(&g, 2)->attr.cast.to, WEFT_F64);
    cr_assert_eq(node(&g, 3)->in[0], 0);
    cr_assert_eq(node(&g, 3)->in[1], 2);
    assert_spec(&node(&g, 3)->spec, "f64[2]");
    weft__graph_free(&g);
}

static int body_compare(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_lt(cx, args[0], args[1]);
    return 0;
}

Test(ops_record, comparisons_promote_and_give_bool, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("i64[?]"), tensor_arg("i32[]") };
    weft__graph g;
    cr_assert_eq(trace(body_compare, NULL, args, 2, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_nodes, 4);
    cr_assert_eq(node(&g, 2)->op, WEFT__OP_CAST);
    cr_assert_eq(node(&g, 2)->attr.cast.to, WEFT_I64);
    assert_spec(&node(&g, 2)->spec, "i64[]");
    cr_assert_eq(node(&g, 3)->op, WEFT__OP_LT);
    assert_spec(&node(&g, 3)->spec, "bool[?]");
    weft__graph_free(&g);
}

static int body_float_ops(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sqrt(cx, args[0]);
    outs[1] = weft_mean(cx, args[0], 1);
    outs[2] = weft_sum(cx, args[0], WEFT_ALL_AXES);
    outs[3] = weft_exp(cx, args[1]);
    return 0;
}

Test(ops_record, float_only_ops_compute_ints_in_f64, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("i32[?,3]"), tensor_arg("f32[2]") };
    weft__graph g;
    cr_assert_eq(trace(body_float_ops, NULL, args, 2, 4, &g), 0, "%s", weft_errmsg());
    /* arg, arg, cast, sqrt, cast, mean, sum, exp */
    cr_assert_eq(g.n_nodes, 8);
    cr_assert_eq(node(&g, 2)->op, WEFT__OP_CAST);
    cr_assert_eq(node(&g, 2)->attr.cast.to, WEFT_F64);
    cr_assert_eq(node(&g, 3)->op, WEFT__OP_SQRT);
    assert_spec(&node(&g, 3)->spec, "f64[?,3]");
    cr_assert_eq(node(&g, 4)->op, WEFT__OP_CAST);
    cr_assert_eq(node(&g, 5)->op, WEFT__OP_MEAN);
    cr_assert_eq(node(&g, 5)->attr.reduce.n_axes, 1);
    cr_assert_eq(node(&g, 5)->attr.reduce.axes[0], 1);
    assert_spec(&node(&g, 5)->spec, "f64[?]");
    cr_assert_eq(node(&g, 6)->op, WEFT__OP_SUM);
    cr_assert_eq(node(&g, 6)->in[0], 0, "sum keeps integers");
    assert_spec(&node(&g, 6)->spec, "i32[]");
    cr_assert_eq(node(&g, 7)->op, WEFT__OP_EXP);
    cr_assert_eq(node(&g, 7)->in[0], 1, "a float input needs no cast");
    assert_spec(&node(&g, 7)->spec, "f32[2]");
    cr_assert_eq(g.outs[0], 3);
    cr_assert_eq(g.outs[1], 5);
    cr_assert_eq(g.outs[2], 6);
    cr_assert_eq(g.outs[3], 7);
    weft__graph_free(&g);
}

static int body_where(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_where(cx, args[0], args[1], args[2]);
    return 0;
}

Test(ops_record, where_needs_bool_and_promotes_values, .timeout = 10)
{
    weft__targ args[3] = { tensor_arg("bool[?]"), tensor_arg("i32[3]"), tensor_arg("f64[]") };
    weft__graph g;
    cr_assert_eq(trace(body_where, NULL, args, 3, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_nodes, 5);
    cr_assert_eq(node(&g, 3)->op, WEFT__OP_CAST);
    cr_assert_eq(node(&g, 3)->in[0], 1);
    const weft__node *w = node(&g, 4);
    cr_assert_eq(w->op, WEFT__OP_WHERE);
    cr_assert_eq(w->in[0], 0);
    cr_assert_eq(w->in[1], 3);
    cr_assert_eq(w->in[2], 2);
    assert_spec(&w->spec, "f64[3]");
    weft__graph_free(&g);

    weft__targ bad[3] = { tensor_arg("i32[3]"), tensor_arg("f32[3]"), tensor_arg("f32[3]") };
    cr_assert_eq(trace(body_where, NULL, bad, 3, 1, &g), WEFT_EDTYPE);
    cr_assert_str_eq(weft_errmsg(), "test_fn: %3 = weft_where: the condition is i32[3], not bool");
    weft__graph_free(&g);
}

struct sticky_seen {
    weft_value *mul, *after_null, *after_valid;
    int status;
    uint32_t nodes_after_error;
    weft__graph *g;
};

static int body_sticky(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    struct sticky_seen *s = user;
    s->mul = weft_mul(cx, args[0], args[1]);
    s->status = weft_ctx_status(cx);
    s->nodes_after_error = s->g->n_nodes;
    s->after_null = weft_neg(cx, s->mul);
    s->after_valid = weft_add(cx, args[0], args[0]);  /* sticky: no new node either */
    outs[0] = s->after_null;
    return 0;
}

Test(ops_record, sticky_error_names_op_and_shapes, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("f32[3]"), tensor_arg("f32[4]") };
    weft__graph g;
    struct sticky_seen s = { .g = &g };
    int rc = trace(body_sticky, &s, args, 2, 1, &g);
    cr_assert_eq(rc, WEFT_ESHAPE, "rc %d", rc);
    cr_assert_str_eq(weft_errmsg(), "test_fn: %2 = weft_mul: f32[3] and f32[4] do not broadcast");
    cr_assert_null(s.mul);
    cr_assert_eq(s.status, WEFT_ESHAPE);
    cr_assert_null(s.after_null);
    cr_assert_null(s.after_valid);
    cr_assert_eq(g.n_nodes, 2, "a failed op records nothing");
    cr_assert_eq(s.nodes_after_error, 2);
    weft__graph_free(&g);
}

Test(ops_record, unknown_dims_defer_shape_errors, .timeout = 10)
{
    /* ? against 4 may broadcast, so tracing accepts it. */
    weft__targ args[2] = { tensor_arg("f32[?]"), tensor_arg("f32[4]") };
    weft__graph g;
    cr_assert_eq(trace(body_add, NULL, args, 2, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(node(&g, 2)->op, WEFT__OP_ADD);
    cr_assert_eq(node(&g, 2)->spec.rank, 1);
    weft__graph_free(&g);
}

struct statics_seen {
    int rc_i, rc_f, rc_i_of_f, rc_i_of_tensor, rc_const_i, rc_const_f, rc_sum, rc_product;
    int64_t i, ci, sum;
    double f, cf;
};

static int body_statics(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    struct statics_seen *s = user;
    int64_t dummy;
    s->rc_i = weft_value_static_i64(args[0], &s->i);
    s->rc_f = weft_value_static_f64(args[1], &s->f);
    s->rc_i_of_f = weft_value_static_i64(args[1], &dummy);
    s->rc_i_of_tensor = weft_value_static_i64(args[2], &dummy);
    weft_value *c = weft_const_i64(cx, -42);
    s->rc_const_i = weft_value_static_i64(c, &s->ci);
    s->rc_const_f = weft_value_static_f64(weft_const_f64(cx, 0.25), &s->cf);
    /* Weak scalars: their arithmetic is computed at once, a constant. */
    weft_value *sum = weft_add(cx, c, args[0]);
    s->rc_sum = weft_value_static_i64(sum, &s->sum);
    outs[0] = weft_mul(cx, args[2], args[1]);
    s->rc_product = weft_value_static_i64(outs[0], &dummy);
    return 0;
}

Test(ops_record, static_args_are_readable_constants, .timeout = 10)
{
    weft__targ args[3] = { { .kind = WEFT_ARG_I64, .i64 = 7 }, { .kind = WEFT_ARG_F64, .f64 = 2.5 },
                           tensor_arg("f32[2]") };
    weft__graph g;
    struct statics_seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(trace(body_statics, &s, args, 3, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(s.rc_i, 0);
    cr_assert_eq(s.i, 7);
    cr_assert_eq(s.rc_f, 0);
    cr_assert_eq(s.f, 2.5);
    cr_assert_eq(s.rc_i_of_f, WEFT_EINVAL);
    cr_assert_eq(s.rc_i_of_tensor, WEFT_EINVAL);
    cr_assert_eq(s.rc_const_i, 0);
    cr_assert_eq(s.ci, -42);
    cr_assert_eq(s.rc_const_f, 0);
    cr_assert_eq(s.cf, 0.25);
    cr_assert_eq(s.rc_sum, 0, "arithmetic on weak scalars is a constant");
    cr_assert_eq(s.sum, -35);
    cr_assert_eq(s.rc_product, WEFT_EINVAL, "an op on a tensor is not a constant");

    const weft__node *a0 = node(&g, 0), *a1 = node(&g, 1);
    cr_assert_eq(a0->op, WEFT__OP_CONST);
    cr_assert(a0->flags & WEFT__NODE_STATIC);
    assert_spec(&a0->spec, "i64[]");
    cr_assert_eq(*(const int64_t *)weft_tensor_data(a0->attr.constant.value), 7);
    cr_assert_eq(a1->op, WEFT__OP_CONST);
    cr_assert(a1->flags & WEFT__NODE_STATIC);
    assert_spec(&a1->spec, "f64[]");
    cr_assert_eq(node(&g, 2)->op, WEFT__OP_ARG);
    cr_assert_eq(node(&g, 2)->attr.arg.index, 2);
    const weft__node *c = node(&g, 3);
    cr_assert_eq(c->op, WEFT__OP_CONST);
    cr_assert_not(c->flags & WEFT__NODE_STATIC, "a body's constant is no argument");
    /* The output: a static f64 scalar is weak, so f32 * it stays f32[2]. */
    assert_spec(&node(&g, g.outs[0])->spec, "f32[2]");
    weft__graph_free(&g);
}

struct foreign {
    weft_ctx *other;
    weft_value *other_value;
    weft_value *result;
    int status;
    bool output_foreign;
};

static int body_foreign(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    struct foreign *f = user;
    if (f->output_foreign) {
        outs[0] = f->other_value;
        return 0;
    }
    f->result = weft_add(cx, args[0], f->other_value);
    f->status = weft_ctx_status(cx);
    outs[0] = args[0];
    return 0;
}

Test(ops_record, values_of_another_context_fail, .timeout = 10)
{
    weft__graph og;
    weft__graph_init(&og, 0);
    struct foreign f = { 0 };
    cr_assert_eq(weft__ctx_new(NULL, &og, "other", &f.other), 0);
    f.other_value = weft_const_f64(f.other, 1.0);
    cr_assert_not_null(f.other_value);

    weft__targ args[1] = { tensor_arg("f64[]") };
    weft__graph g;
    cr_assert_eq(trace(body_foreign, &f, args, 1, 1, &g), WEFT_EINVAL);
    cr_assert_null(f.result);
    cr_assert_eq(f.status, WEFT_EINVAL);
    cr_assert_str_eq(weft_errmsg(), "test_fn: %1 = weft_add: input 1 belongs to another context");
    weft__graph_free(&g);

    f.output_foreign = true;
    cr_assert_eq(trace(body_foreign, &f, args, 1, 1, &g), WEFT_EBODY);
    cr_assert_str_eq(weft_errmsg(), "test_fn: output 0 belongs to another context");
    weft__graph_free(&g);

    weft__ctx_free(f.other);
    weft__graph_free(&og);
}

static int body_null_out(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)cx;
    (void)user;
    outs[0] = args[0];
    return 0;  /* outs[1] left NULL */
}

static int body_fails(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)cx;
    (void)args;
    (void)outs;
    (void)user;
    return WEFT_EIO;
}

static int body_null_input(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], NULL);
    return 0;
}

Test(ops_record, body_failures, .timeout = 10)
{
    weft__targ args[1] = { tensor_arg("f32[2]") };
    weft__graph g;
    cr_assert_eq(trace(body_null_out, NULL, args, 1, 2, &g), WEFT_EBODY);
    cr_assert_str_eq(weft_errmsg(), "test_fn: output 1 is NULL");
    weft__graph_free(&g);
    cr_assert_eq(trace(body_fails, NULL, args, 1, 1, &g), WEFT_EIO);
    cr_assert_not_null(strstr(weft_errmsg(), "test_fn"), "%s", weft_errmsg());
    weft__graph_free(&g);
    cr_assert_eq(trace(body_null_input, NULL, args, 1, 1, &g), WEFT_EINVAL);
    cr_assert_str_eq(weft_errmsg(), "test_fn: %1 = weft_add: input 1 is NULL");
    weft__graph_free(&g);
    /* Bad requests are refused before the body runs, the graph still freeable. */
    weft__targ bad = { .kind = WEFT_ARG_TENSOR, .spec = { .dtype = (weft_dtype)11, .rank = 1 } };
    cr_assert_eq(trace(body_null_out, NULL, &bad, 1, 1, &g), WEFT_EINVAL);
    weft__graph_free(&g);
}

static int body_leaves(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    (void)user;
    int64_t dims[2] = { 2, 5 };
    outs[0] = weft_fill(cx, WEFT_I32, 2, dims, 3.0);
    outs[1] = weft_range(cx, WEFT_F32, 0, 10, 3);
    outs[2] = weft_range(cx, WEFT_I64, 10, 0, -3);
    outs[3] = weft_range(cx, WEFT_I64, 5, 5, 1);
    int64_t shape[1] = { -1 };
    outs[4] = weft_reshape(cx, args[0], 1, shape);
    outs[5] = weft_matmul(cx, args[0], args[1]);
    return 0;
}

Test(ops_record, leaves_reshape_matmul, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("f32[?,3]"), tensor_arg("f32[3,5]") };
    weft__graph g;
    cr_assert_eq(trace(body_leaves, NULL, args, 2, 6, &g), 0, "%s", weft_errmsg());
    const weft__node *fill = node(&g, g.outs[0]);
    cr_assert_eq(fill->op, WEFT__OP_FILL);
    cr_assert_eq(fill->attr.fill.value, 3.0);
    assert_spec(&fill->spec, "i32[2,5]");
    const weft__node *r = node(&g, g.outs[1]);
    cr_assert_eq(r->op, WEFT__OP_RANGE);
    cr_assert_eq(r->attr.range.delta, 3);
    assert_spec(&r->spec, "f32[4]");
    assert_spec(&node(&g, g.outs[2])->spec, "i64[4]");
    assert_spec(&node(&g, g.outs[3])->spec, "i64[0]");
    const weft__node *rs = node(&g, g.outs[4]);
    cr_assert_eq(rs->op, WEFT__OP_RESHAPE);
    cr_assert_eq(rs->attr.reshape.rank, 1);
    cr_assert_eq(rs->attr.reshape.dims[0], -1);
    assert_spec(&rs->spec, "f32[?]");
    const weft__node *mm = node(&g, g.outs[5]);
    cr_assert_eq(mm->op, WEFT__OP_MATMUL);
    assert_spec(&mm->spec, "f32[?,5]");
    weft__graph_free(&g);
}

static int body_matmul(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matmul(cx, args[0], args[1]);
    return 0;
}

/* The same check while tracing, so that a signature whose result cannot
 * exist is refused when it is traced, not each time it runs (an unknown
 * inner dim does not hide it). */
Test(ops_record, matmul_result_too_big, .timeout = 10)
{
    weft__targ args[2] = { tensor_arg("f32[1099511627776,0]"), tensor_arg("f32[?,1099511627776]") };
    weft__graph g;
    cr_assert_eq(trace(body_matmul, NULL, args, 2, 1, &g), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_matmul: the result f32[1099511627776,1099511627776] "
                                    "overflows the address space"), "%s", weft_errmsg());
    weft__graph_free(&g);
    weft__targ fine[2] = { tensor_arg("f32[1099511627776,0]"), tensor_arg("f32[?,4]") };
    cr_assert_eq(trace(body_matmul, NULL, fine, 2, 1, &g), 0, "%s", weft_errmsg());
    weft__graph_free(&g);
}

struct bad_call {
    int which;
};

static int body_bad_args(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const struct bad_call *b = user;
    int64_t two_any[2] = { -1, -1 }, neg[1] = { -2 };
    switch (b->which) {
    case 0: outs[0] = weft_reshape(cx, args[0], 2, two_any); break;
    case 1: outs[0] = weft_reshape(cx, args[0], 1, neg); break;
    case 2: outs[0] = weft_range(cx, WEFT_I32, 0, 5, 0); break;
    case 3: outs[0] = weft_cast(cx, args[0], (weft_dtype)17); break;
    case 4: outs[0] = weft_fill(cx, WEFT_F32, 9, neg, 0); break;
    case 5: outs[0] = weft_fill(cx, WEFT_F32, 1, neg, 0); break;
    case 6: outs[0] = weft_sum(cx, args[0], 99); break;
    case 7: outs[0] = weft_const_tensor(cx, NULL); break;
    case 8: outs[0] = weft_range(cx, WEFT_BOOL, 0, 2, 1); break;
    }
    return 0;
}

Test(ops_record, invalid_op_arguments_are_einval, .timeout = 10)
{
    static const char *const msgs[] = {
        "weft_reshape: more than one dim is -1",
        "weft_reshape: dim 0 is negative (-2)",
        "weft_range: delta is 0",
        "weft_cast: unknown dtype 17",
        "weft_fill: rank 9 is outside 0..8",
        "weft_fill: dim 0 is negative (-2)",
        "weft_sum: axis 99 is out of range",
        "weft_const_tensor: NULL tensor",
        "weft_range: dtype bool is not numeric",
    };
    weft__targ args[1] = { tensor_arg("f32[6]") };
    for (int i = 0; i < (int)(sizeof msgs / sizeof *msgs); i++) {
        weft__graph g;
        struct bad_call b = { i };
        cr_assert_eq(trace(body_bad_args, &b, args, 1, 1, &g), WEFT_EINVAL, "case %d", i);
        /* The function and the node the op would have been come first. */
        char want[128];
        snprintf(want, sizeof want, "test_fn: %%1 = %s", msgs[i]);
        cr_assert_str_eq(weft_errmsg(), want);
        cr_assert_eq(g.n_nodes, 1, "case %d recorded a node", i);
        weft__graph_free(&g);
    }
    cr_assert_null(weft_add(NULL, NULL, NULL));
    cr_assert_str_eq(weft_errmsg(), "weft_add: NULL context");
    cr_assert_eq(weft_ctx_status(NULL), WEFT_EINVAL);
}

static int body_chain(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *v = args[0];
    for (int i = 0; i < 100; i++)
        v = weft_add(cx, v, args[0]);
    outs[0] = v;
    return 0;
}

Test(ops_record, long_graphs_keep_their_inputs, .timeout = 10)
{
    weft__targ args[1] = { tensor_arg("f32[?]") };
    weft__graph g;
    cr_assert_eq(trace(body_chain, NULL, args, 1, 1, &g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_nodes, 101);
    for (uint32_t i = 1; i < g.n_nodes; i++) {
        const weft__node *n = node(&g, i);
        cr_assert_eq(n->in, n->inline_in, "node %u points outside itself", i);
        cr_assert_eq(n->in[0], i - 1);
        cr_assert_eq(n->in[1], 0);
    }
    cr_assert_eq(g.outs[0], 100);
    weft__graph_free(&g);
}

Test(ops_record, graph_add_copies_large_input_lists, .timeout = 10)
{
    weft__graph g;
    weft__graph_init(&g, 0);
    weft__node leaf = { .op = WEFT__OP_FILL, .after = WEFT__NO_NODE };
    for (int i = 0; i < 5; i++)
        cr_assert_eq(weft__graph_add(&g, &leaf, NULL, 0), (uint32_t)i);
    uint32_t ins[5] = { 4, 3, 2, 1, 0 };
    weft__node host = { .op = WEFT__OP_HOST, .after = WEFT__NO_NODE };
    uint32_t id = weft__graph_add(&g, &host, ins, 5);
    cr_assert_eq(id, 5);
    ins[0] = 77;  /* the graph holds a copy */
    cr_assert_eq(g.nodes[id].n_in, 5);
    cr_assert_neq(g.nodes[id].in, g.nodes[id].inline_in);
    cr_assert_eq(g.nodes[id].in[0], 4);
    cr_assert_eq(g.nodes[id].in[4], 0);
    cr_assert_str_eq(weft__op_name(WEFT__OP_REDUCE_MAX), "reduce_max");
    cr_assert_eq(weft__op_kind_of(WEFT__OP_WHERE), WEFT__KIND_TERNARY);
    cr_assert(weft__op_is_elementwise(WEFT__OP_CAST));
    cr_assert_not(weft__op_is_elementwise(WEFT__OP_SUM));
    weft__graph_free(&g);
    cr_assert_eq(g.n_nodes, 0);
    weft__graph_free(&g);  /* freeing twice is harmless */
}

Test(ops_record, out_of_memory_anywhere_fails_cleanly, .timeout = 10)
{
    if (!weft__fault_fail_after(0))
        cr_skip_test("built without fault injection");
    weft__targ args[3] = { { .kind = WEFT_ARG_I64, .i64 = 7 }, { .kind = WEFT_ARG_F64, .f64 = 2.5 },
                           tensor_arg("f32[2]") };
    struct statics_seen s;
    bool succeeded = false;
    long bad_k = 0;
    int bad_rc = 0;
    /* Fail allocation k = 1, 2, ... until the trace gets through: every
     * failure must surface as WEFT_ENOMEM, never a crash or a leak. */
    for (long k = 1; k < 200 && !succeeded && !bad_k; k++) {
        weft__graph g;
        weft__fault_fail_after(k);
        int rc = trace(body_statics, &s, args, 3, 1, &g);
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        if (hit && rc != WEFT_ENOMEM) {
            bad_k = k;
            bad_rc = rc;
        } else if (!hit) {
            succeeded = rc == 0;
        }
        weft__graph_free(&g);
    }
    cr_assert_eq(bad_k, 0, "allocation %ld failed but rc is %d (%s)", bad_k, bad_rc, weft_errmsg());
    cr_assert(succeeded, "the trace never succeeded");
}
