/* The compiler passes, each on hand-made op lists: what it removes, folds,
 * merges or fuses, and that the op list computes the same before and after.
 * Also the buffer plan, host-call ordering, run-time dims and printing. */
#include <pthread.h>
#include <unistd.h>

#include "graph_build.h"
#include "trace/ctx.h"
#include "trace/sidefx.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(compile, .init = setup, .fini = teardown, .timeout = 30);

typedef void (*build_fn)(weft__graph *g);

/* Runs the graph built by build as is and after pass (NULL: the whole
 * compiler) on args, and checks that both give the same outputs. */
static void same_results(build_fn build, int (*pass)(weft__graph *), weft_tensor *const *args,
                         size_t n_args)
{
    weft__graph a, b;
    weft__graph_init(&a, (uint32_t)n_args);
    weft__graph_init(&b, (uint32_t)n_args);
    build(&a);
    build(&b);
    int rc = pass ? pass(&b) : weft__compile_graph(&b);
    cr_assert_eq(rc, 0, "pass: %s", weft_errmsg());
    uint32_t n_outs = a.n_outs;
    weft__program *pa = gb_program(rt, &a), *pb = gb_program(rt, &b);
    weft_tensor *oa[4] = { NULL }, *ob[4] = { NULL };
    cr_assert_eq(weft__program_run(pa, args, n_args, oa, n_outs), 0, "%s", weft_errmsg());
    cr_assert_eq(weft__program_run(pb, args, n_args, ob, n_outs), 0, "%s", weft_errmsg());
    for (uint32_t k = 0; k < n_outs; k++) {
        gb_assert_close(oa[k], ob[k]);
        weft_tensor_release(oa[k]);
        weft_tensor_release(ob[k]);
    }
    weft__program_free(pa);
    weft__program_free(pb);
}

/* ---- Dead-code elimination. ---- */

static void build_dead_squares(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[4]");
    for (int i = 0; i < 100; i++)
        gb_bin(g, WEFT__OP_MUL, x, x);
    gb_outs(g, &x, 1);
}

Test(compile, dce_removes_100_dead_squares)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    build_dead_squares(&g);
    cr_assert_eq(g.n_nodes, 101);
    cr_assert_eq(weft__pass_dce(&g), 0);
    cr_assert_eq(g.n_nodes, 1, "only the argument is left");
    cr_assert_eq(g.nodes[0].op, WEFT__OP_ARG);
    cr_assert_eq(g.outs[0], 0);
    weft__program *p = gb_program(rt, &g);
    cr_assert_eq(p->ops_compiled, 0);
    int64_t d = 4;
    weft_tensor *x = gb_tensor_f32(1, &d, 1), *out = NULL;
    cr_assert_eq(weft__program_run(p, &x, 1, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(out, x, "an output that is an argument is the argument");
    weft_tensor_release(out);
    weft_tensor_release(x);
    weft__program_free(p);
}

Test(compile, dce_keeps_live_chain)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[4]");
    uint32_t dead = gb_un(&g, WEFT__OP_NEG, x);
    uint32_t y = gb_un(&g, WEFT__OP_EXP, x);
    gb_bin(&g, WEFT__OP_ADD, dead, y);   /* dead too: its reader is dead */
    uint32_t z = gb_bin(&g, WEFT__OP_MUL, y, x);
    gb_outs(&g, &z, 1);
    cr_assert_eq(weft__pass_dce(&g), 0);
    cr_assert_eq(g.n_nodes, 3);
    cr_assert_eq(g.nodes[1].op, WEFT__OP_EXP);
    cr_assert_eq(g.nodes[2].op, WEFT__OP_MUL);
    cr_assert_eq(g.nodes[2].in[0], 1);
    cr_assert_eq(g.nodes[2].in[1], 0);
    cr_assert_eq(g.outs[0], 2);
    weft__graph_free(&g);
}

/* ---- Constant folding. ---- */

static void build_2x3_plus_x(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[3]");
    uint32_t two = gb_const_f32(g, 2), three = gb_const_f32(g, 3);
    uint32_t six = gb_bin(g, WEFT__OP_MUL, two, three);
    uint32_t y = gb_bin(g, WEFT__OP_ADD, six, x);
    gb_outs(g, &y, 1);
}

Test(compile, fold_2x3_plus_x)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    build_2x3_plus_x(&g);
    cr_assert_eq(weft__pass_fold(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.nodes[3].op, WEFT__OP_CONST, "2*3 became a constant");
    const weft_tensor *c = g.nodes[3].attr.constant.value;
    cr_assert_eq(weft_tensor_numel(c), 1);
    cr_assert_float_eq(*(const float *)weft_tensor_data(c), 6.0f, 1e-6);
    cr_assert_eq(g.nodes[4].op, WEFT__OP_ADD, "x is not constant");
    cr_assert_eq(weft__pass_dce(&g), 0);
    cr_assert_eq(g.n_nodes, 3, "2 and 3 are dead once folded");
    cr_assert_eq(gb_count(&g, WEFT__OP_MUL), 0);
    weft__graph_free(&g);

    int64_t d = 3;
    weft_tensor *x = gb_tensor_f32(1, &d, 1);
    same_results(build_2x3_plus_x, weft__pass_fold, &x, 1);
    same_results(build_2x3_plus_x, NULL, &x, 1);
    weft_tensor_release(x);
}

/* ---- Common-subexpression elimination. ---- */

static void build_dup_add(weft__graph *g)
{
    uint32_t a = gb_arg(g, 0, "f32[5]"), b = gb_arg(g, 1, "f32[5]");
    uint32_t s1 = gb_bin(g, WEFT__OP_ADD, a, b);
    uint32_t s2 = gb_bin(g, WEFT__OP_ADD, a, b);
    uint32_t e1 = gb_un(g, WEFT__OP_EXP, s1);
    uint32_t e2 = gb_un(g, WEFT__OP_EXP, s2);
    uint32_t d = gb_bin(g, WEFT__OP_SUB, a, b);   /* differs by op: kept */
    uint32_t m = gb_bin(g, WEFT__OP_MUL, e1, e2);
    uint32_t y = gb_bin(g, WEFT__OP_ADD, m, d);
    gb_outs(g, &y, 1);
}

Test(compile, cse_merges_duplicated_add)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    build_dup_add(&g);
    cr_assert_eq(gb_count(&g, WEFT__OP_ADD), 3);
    cr_assert_eq(weft__pass_cse(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(gb_count(&g, WEFT__OP_ADD), 2, "a+b once, plus the final add");
    cr_assert_eq(gb_count(&g, WEFT__OP_EXP), 1, "exp(a+b) merges in the same sweep");
    cr_assert_eq(gb_count(&g, WEFT__OP_SUB), 1);
    uint32_t mul = WEFT__NO_NODE;
    for (uint32_t i = 0; i < g.n_nodes; i++)
        if (g.nodes[i].op == WEFT__OP_MUL)
            mul = i;
    cr_assert_neq(mul, WEFT__NO_NODE);
    cr_assert_eq(g.nodes[mul].in[0], g.nodes[mul].in[1], "both factors are one node");
    weft__graph_free(&g);

    int64_t d = 5;
    weft_tensor *args[2] = { gb_tensor_f32(1, &d, 1), gb_tensor_f32(1, &d, 2) };
    same_results(build_dup_add, weft__pass_cse, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(compile, cse_merges_equal_constants_by_value)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[2]");
    uint32_t c1 = gb_const_f32(&g, 1), c2 = gb_const_f32(&g, 2), c1b = gb_const_f32(&g, 1);
    uint32_t y1 = gb_bin(&g, WEFT__OP_ADD, x, c1);
    uint32_t y2 = gb_bin(&g, WEFT__OP_ADD, x, c2);
    uint32_t y3 = gb_bin(&g, WEFT__OP_ADD, x, c1b);
    uint32_t outs[3] = { y1, y2, y3 };
    gb_outs(&g, outs, 3);
    cr_assert_eq(weft__pass_cse(&g), 0);
    cr_assert_eq(gb_count(&g, WEFT__OP_CONST), 2, "equal constants merge by value");
    cr_assert_eq(gb_count(&g, WEFT__OP_ADD), 2);
    cr_assert_eq(g.outs[0], g.outs[2]);
    cr_assert_neq(g.outs[0], g.outs[1]);
    weft__graph_free(&g);
}

/* ---- Elementwise fusion. ---- */

static void build_chain4(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[?,3]"), y = gb_arg(g, 1, "f32[?,3]");
    uint32_t t1 = gb_bin(g, WEFT__OP_MUL, x, y);
    uint32_t t2 = gb_bin(g, WEFT__OP_ADD, t1, x);
    uint32_t t3 = gb_un(g, WEFT__OP_EXP, t2);
    uint32_t t4 = gb_un(g, WEFT__OP_NEG, t3);
    gb_outs(g, &t4, 1);
}

Test(compile, fuse_four_op_chain)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    build_chain4(&g);
    cr_assert_eq(weft__pass_fuse(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(g.n_nodes, 3, "two arguments and one fused op");
    const weft__node *f = &g.nodes[2];
    cr_assert_eq(f->op, WEFT__OP_FUSED);
    cr_assert_eq(f->n_in, 2);
    cr_assert_eq(f->attr.fused.prog->n_instr, 4);
    cr_assert_eq(f->attr.fused.prog->ins[0].op, WEFT__OP_MUL);
    cr_assert_eq(f->attr.fused.prog->ins[3].op, WEFT__OP_NEG);
    cr_assert_leq(f->attr.fused.prog->n_regs, 2, "scratch blocks are reused");
    weft__program *p = gb_program(rt, &g);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert_eq(weft__program_print(p, mem), 0);
    fclose(mem);
    cr_assert(strstr(text, "%2 = fused[mul,add,exp,neg](%0, %1) : f32[?,3]"), "got:\n%s", text);
    cr_assert(strstr(text, "%0 = arg 0 : f32[?,3]"), "got:\n%s", text);
    free(text);
    weft__program_free(p);

    /* Few rows (one block) and many (several blocks, split over workers). */
    int64_t rows[2] = { 5, 3000 };
    for (int r = 0; r < 2; r++) {
        int64_t dims[2] = { rows[r], 3 };
        weft_tensor *args[2] = { gb_tensor_f32(2, dims, 0.5f), gb_tensor_f32(2, dims, -0.25f) };
        same_results(build_chain4, weft__pass_fuse, args, 2);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

static void build_shared_intermediate(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[8]"), c = gb_const_f32(g, 2);
    uint32_t t1 = gb_bin(g, WEFT__OP_MUL, x, c);       /* read by the group and a sum */
    uint32_t t2 = gb_un(g, WEFT__OP_EXP, t1);
    uint32_t t3 = gb_bin(g, WEFT__OP_SUB, t2, x);
    weft__node s = gb_node(WEFT__OP_SUM);
    weft__reduce_set_axis(&s, WEFT_ALL_AXES);
    s.n_in = 1;
    cr_assert_eq(weft__infer_spec(&s, &g->nodes[t1].spec, &s.spec), 0);
    uint32_t sum = gb_push(g, &s, &t1, 1);
    uint32_t outs[2] = { t3, sum };
    gb_outs(g, outs, 2);
}

Test(compile, fuse_keeps_intermediate_read_outside)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    build_shared_intermediate(&g);
    cr_assert_eq(weft__pass_fuse(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(gb_count(&g, WEFT__OP_MUL), 1, "x*2 is read by the sum: materialised");
    cr_assert_eq(gb_count(&g, WEFT__OP_FUSED), 1);
    for (uint32_t i = 0; i < g.n_nodes; i++)
        if (g.nodes[i].op == WEFT__OP_FUSED)
            cr_assert_eq(g.nodes[i].attr.fused.prog->n_instr, 2, "exp and sub");
    weft__graph_free(&g);

    int64_t d = 8;
    weft_tensor *x = gb_tensor_f32(1, &d, 1);
    same_results(build_shared_intermediate, weft__pass_fuse, &x, 1);
    same_results(build_shared_intermediate, NULL, &x, 1);
    weft_tensor_release(x);
}

static void build_broadcast(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[4,3]"), r = gb_arg(g, 1, "f32[3]");
    uint32_t t1 = gb_bin(g, WEFT__OP_ADD, x, r);   /* r is a row repeated down x */
    uint32_t t2 = gb_un(g, WEFT__OP_ABS, t1);
    weft__node cn = gb_node(WEFT__OP_CAST);
    cn.attr.cast.to = WEFT_F64;
    cn.n_in = 1;
    cr_assert_eq(weft__infer_spec(&cn, &g->nodes[t2].spec, &cn.spec), 0);
    uint32_t t3 = gb_push(g, &cn, &t2, 1);
    uint32_t t4 = gb_un(g, WEFT__OP_SQRT, t3);
    gb_outs(g, &t4, 1);
}

Test(compile, fuse_spans_broadcast_and_fuses_cast)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    build_broadcast(&g);
    cr_assert_eq(weft__pass_fuse(&g), 0);
    cr_assert_eq(gb_count(&g, WEFT__OP_ADD), 0);
    cr_assert_eq(gb_count(&g, WEFT__OP_FUSED), 1);
    const weft__node *f = &g.nodes[g.outs[0]];
    cr_assert_eq(f->op, WEFT__OP_FUSED);
    const struct weft__fused *fu = f->attr.fused.prog;
    cr_assert_eq(fu->n_instr, 4, "add, abs, cast, sqrt");
    /* Rows of 3 columns; r is a column row (COL), x the full domain. */
    cr_assert_eq(fu->split, 1);
    cr_assert_eq(fu->n_ext, 2);
    cr_assert_eq(fu->ext_kind[0], WEFT__FK_FULL);
    cr_assert_eq(fu->ext_kind[1], WEFT__FK_COL);
    cr_assert_eq(f->spec.dtype, WEFT_F64);
    weft__graph_free(&g);
    int64_t dx[2] = { 4, 3 }, dr = 3;
    weft_tensor *args[2] = { gb_tensor_f32(2, dx, 1), gb_tensor_f32(1, &dr, -1) };
    same_results(build_broadcast, weft__pass_fuse, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- Buffer planning. ---- */

static void build_two_groups(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[16,16]");
    uint32_t a = gb_bin(g, WEFT__OP_MUL, x, x);
    uint32_t b = gb_bin(g, WEFT__OP_ADD, a, x);          /* fused group 1 */
    uint32_t m = gb_bin(g, WEFT__OP_MATMUL, b, x);
    uint32_t c = gb_un(g, WEFT__OP_NEG, m);
    uint32_t d = gb_bin(g, WEFT__OP_MUL, c, m);          /* fused group 2 */
    gb_outs(g, &d, 1);
}

Test(compile, plan_reuses_dead_buffer)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    build_two_groups(&g);
    cr_assert_eq(weft__compile_graph(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(gb_count(&g, WEFT__OP_FUSED), 2);
    weft__program *p = gb_program(rt, &g);
    uint32_t last = p->g.outs[0];
    cr_assert_eq(p->g.nodes[last].op, WEFT__OP_FUSED);
    uint32_t donor = p->donor[last];
    cr_assert_neq(donor, WEFT__NO_NODE, "the second group reuses a buffer");
    cr_assert_eq(p->g.nodes[donor].op, WEFT__OP_MATMUL, "in place on its own dead input");
    cr_assert(p->pflags[donor] & WEFT__PN_DONOR);
    /* The first group's inputs are arguments, never reused. */
    for (uint32_t i = 0; i < p->g.n_nodes; i++)
        if (p->donor[i] != WEFT__NO_NODE)
            cr_assert_neq(p->g.nodes[p->donor[i]].op, WEFT__OP_ARG);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    weft__program_print(p, mem);
    fclose(mem);
    cr_assert(strstr(text, "reuses %"), "got:\n%s", text);
    free(text);
    weft__program_free(p);

    int64_t dims[2] = { 16, 16 };
    weft_tensor *x = gb_tensor_f32(2, dims, 0.1f);
    same_results(build_two_groups, NULL, &x, 1);
    weft_tensor_release(x);
}

Test(compile, plan_never_reuses_outputs)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[8,8]");
    uint32_t m = gb_bin(&g, WEFT__OP_MATMUL, x, x);
    uint32_t a = gb_un(&g, WEFT__OP_EXP, m);
    uint32_t b = gb_bin(&g, WEFT__OP_ADD, a, m);
    uint32_t outs[2] = { b, m };
    gb_outs(&g, outs, 2);
    cr_assert_eq(weft__compile_graph(&g), 0);
    weft__program *p = gb_program(rt, &g);
    for (uint32_t i = 0; i < p->g.n_nodes; i++)
        cr_assert_eq(p->donor[i], WEFT__NO_NODE, "the matmul is an output");
    weft__program_free(p);
}

/* ---- Host calls. ---- */

typedef struct host_log {
    pthread_mutex_t lock;
    int order[8];
    int n;
} host_log;

typedef struct host_user { host_log *log; int id; } host_user;

static int log_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    host_user *u = user;
    cr_assert_eq(n_in, 1);
    pthread_mutex_lock(&u->log->lock);
    u->log->order[u->log->n++] = u->id;
    pthread_mutex_unlock(&u->log->lock);
    *out = weft_tensor_retain(in[0]);
    return 0;
}

static uint32_t gb_host(weft__graph *g, host_user *u, uint32_t x, uint32_t after)
{
    weft__node n = gb_node(WEFT__OP_HOST);
    n.flags = WEFT__NODE_SIDE_EFFECT;
    n.attr.host.fn = log_cb;
    n.attr.host.user = u;
    n.after = after;
    n.spec = g->nodes[x].spec;
    return gb_push(g, &n, &x, 1);
}

Test(compile, host_calls_survive_dce_in_order)
{
    host_log log = { .n = 0 };
    pthread_mutex_init(&log.lock, NULL);
    host_user u[3] = { { &log, 1 }, { &log, 2 }, { &log, 3 } };
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[4]");
    uint32_t e = gb_un(&g, WEFT__OP_EXP, x);
    uint32_t h1 = gb_host(&g, &u[0], e, WEFT__NO_NODE);
    gb_un(&g, WEFT__OP_NEG, x);                         /* dead */
    uint32_t h2 = gb_host(&g, &u[1], x, h1);
    gb_host(&g, &u[2], x, h2);
    gb_outs(&g, &x, 1);                                  /* no host result is read */
    cr_assert_eq(weft__compile_graph(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(gb_count(&g, WEFT__OP_HOST), 3);
    cr_assert_eq(gb_count(&g, WEFT__OP_EXP), 1, "a host call's input is kept");
    cr_assert_eq(gb_count(&g, WEFT__OP_NEG), 0);
    uint32_t hosts[3], nh = 0;
    for (uint32_t i = 0; i < g.n_nodes; i++)
        if (g.nodes[i].op == WEFT__OP_HOST)
            hosts[nh++] = i;
    cr_assert_eq(g.nodes[hosts[0]].after, WEFT__NO_NODE);
    cr_assert_eq(g.nodes[hosts[1]].after, hosts[0]);
    cr_assert_eq(g.nodes[hosts[2]].after, hosts[1]);
    weft__program *p = gb_program(rt, &g);
    int64_t d = 4;
    weft_tensor *xt = gb_tensor_f32(1, &d, 1), *out = NULL;
    for (int rep = 0; rep < 2; rep++) {
        log.n = 0;
        cr_assert_eq(weft__program_run(p, &xt, 1, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(out, xt);
        weft_tensor_release(out);
        cr_assert_eq(log.n, 3, "every host call runs on every run");
        cr_assert_eq(log.order[0], 1);
        cr_assert_eq(log.order[1], 2);
        cr_assert_eq(log.order[2], 3);
    }
    weft_tensor_release(xt);
    weft__program_free(p);
    pthread_mutex_destroy(&log.lock);
}

/* ---- Unknown dims at run time. ---- */

static void build_dyn(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[?]"), y = gb_arg(g, 1, "f32[?]");
    uint32_t s = gb_bin(g, WEFT__OP_ADD, x, y);
    uint32_t e = gb_un(g, WEFT__OP_EXP, s);
    gb_outs(g, &e, 1);
}

static void check_dyn(bool compile)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    build_dyn(&g);
    if (compile)
        cr_assert_eq(weft__compile_graph(&g), 0);
    cr_assert_eq(gb_count(&g, WEFT__OP_FUSED), compile ? 1 : 0);
    weft__program *p = gb_program(rt, &g);
    weft_spec os;
    cr_assert_eq(weft__program_out_spec(p, 0, &os), 0);
    cr_assert_eq(os.dims[0], WEFT_DIM_ANY);

    int64_t d5 = 5, d4 = 4, d1 = 1, d700 = 700;
    weft_tensor *a = gb_tensor_f32(1, &d5, 1), *b = gb_tensor_f32(1, &d5, 2);
    weft_tensor *c = gb_tensor_f32(1, &d4, 3), *one = gb_tensor_f32(1, &d1, 4);
    weft_tensor *big = gb_tensor_f32(1, &d700, 5), *out = NULL;
    weft_tensor *args[2] = { a, b };
    cr_assert_eq(weft__program_run(p, args, 2, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_dims(out)[0], 5, "the dim comes from the arguments");
    const float *o = weft_tensor_data(out), *ad = weft_tensor_data(a), *bd = weft_tensor_data(b);
    for (int i = 0; i < 5; i++)
        cr_assert_float_eq(o[i], expf(ad[i] + bd[i]), 1e-5);
    weft_tensor_release(out);

    /* [700] + [1] broadcasts at run time (the fused op falls back). */
    args[0] = big;
    args[1] = one;
    cr_assert_eq(weft__program_run(p, args, 2, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_dims(out)[0], 700);
    o = weft_tensor_data(out);
    cr_assert_float_eq(o[699], expf(((const float *)weft_tensor_data(big))[699] +
                                    *(const float *)weft_tensor_data(one)), 1e-4);
    weft_tensor_release(out);

    /* [5] + [4]: the same message as tracing with those shapes. */
    weft__node add = gb_node(WEFT__OP_ADD);
    add.n_in = 2;
    weft_spec is[2], tmp;
    weft__tensor_spec(a, &is[0]);
    weft__tensor_spec(c, &is[1]);
    int trc = weft__infer_spec(&add, is, &tmp);
    cr_assert_lt(trc, 0);
    char expected[512];
    snprintf(expected, sizeof expected, "%s", weft_errmsg());
    args[0] = a;
    args[1] = c;
    out = (weft_tensor *)&out;
    int rc = weft__program_run(p, args, 2, &out, 1);
    cr_assert_eq(rc, trc);
    cr_assert_null(out);
    /* Prefixed with the function and the node at run time. */
    cr_assert(strstr(weft_errmsg(), expected) && strncmp(weft_errmsg(), "test: %", 7) == 0,
              "%s", weft_errmsg());
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(c);
    weft_tensor_release(one);
    weft_tensor_release(big);
    weft__program_free(p);
}

Test(compile, unknown_dims_resolved_at_run_time_plain) { check_dyn(false); }
Test(compile, unknown_dims_resolved_at_run_time_fused) { check_dyn(true); }

/* ---- Bad calls. ---- */

Test(compile, run_rejects_bad_calls)
{
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[2]");
    uint32_t y = gb_un(&g, WEFT__OP_NEG, x);
    gb_outs(&g, &y, 1);
    weft__program *p = gb_program(rt, &g);
    weft_tensor *out = NULL, *none = NULL;
    cr_assert_eq(weft__program_run(NULL, NULL, 0, &out, 1), WEFT_EINVAL);
    cr_assert_eq(weft__program_run(p, &none, 1, &out, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "argument 0"), "%s", weft_errmsg());
    cr_assert_eq(weft__program_run(p, &none, 1, &out, 2), WEFT_EINVAL);
    weft_spec s;
    cr_assert_eq(weft__program_out_spec(p, 1, &s), WEFT_EINVAL);
    cr_assert_eq(weft__program_print(NULL, stdout), WEFT_EINVAL);
    weft__program_free(p);
    weft__program_free(NULL);
}

/* ---- Through the tracer. ---- */

static int dead_squares_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    for (int i = 0; i < 100; i++)
        weft_mul(cx, args[0], args[0]);
    outs[0] = args[0];
    return 0;
}

static int poly_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *six = weft_mul(cx, weft_const_f64(cx, 2), weft_const_f64(cx, 3));
    weft_value *t = weft_add(cx, weft_mul(cx, x, x), six);
    outs[0] = weft_neg(cx, weft_exp(cx, weft_mul(cx, t, weft_const_f64(cx, 0.01))));
    return 0;
}

Test(compile, trace_compile_seed_function)
{
    weft__targ a = { .kind = WEFT_ARG_TENSOR, .spec = gb_spec("f32[3]") };
    weft__program *p = NULL;
    weft__trace_info info;
    cr_assert_eq(weft__trace_compile(rt, "seed", dead_squares_body, NULL, &a, 1, 1, &p, &info), 0,
                 "%s", weft_errmsg());
    cr_assert_eq(info.ops_traced, 100);
    cr_assert_eq(info.ops_compiled, 0, "nothing beyond the argument");
    weft__program_free(p);

    a.spec = gb_spec("f64[?]");
    cr_assert_eq(weft__trace_compile(rt, "poly", poly_body, NULL, &a, 1, 1, &p, &info), 0,
                 "%s", weft_errmsg());
    cr_assert_lt(info.ops_compiled, info.ops_traced);
    cr_assert_eq(p->g.nodes[p->g.outs[0]].op, WEFT__OP_FUSED);
    double xs[3] = { 0.5, -1, 2 };
    int64_t d = 3;
    weft_tensor *x = NULL, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &d, xs, &x), 0);
    cr_assert_eq(weft__program_run(p, &x, 1, &out, 1), 0, "%s", weft_errmsg());
    const double *o = weft_tensor_data(out);
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(o[i], -exp((xs[i] * xs[i] + 6) * 0.01), 1e-12);
    weft_tensor_release(out);
    weft_tensor_release(x);
    weft__program_free(p);
}

/* ---- Out of memory anywhere in compiling or running. ---- */

static void build_mixed(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[?,4]"), y = gb_arg(g, 1, "f32[4,4]");
    uint32_t two = gb_const_f32(g, 2), three = gb_const_f32(g, 3);
    uint32_t six = gb_bin(g, WEFT__OP_MUL, two, three);
    uint32_t a = gb_bin(g, WEFT__OP_MUL, x, six);
    uint32_t a2 = gb_bin(g, WEFT__OP_MUL, x, six);
    uint32_t b = gb_un(g, WEFT__OP_EXP, gb_bin(g, WEFT__OP_ADD, a, a2));
    uint32_t m = gb_bin(g, WEFT__OP_MATMUL, b, y);
    uint32_t c = gb_bin(g, WEFT__OP_SUB, gb_un(g, WEFT__OP_NEG, m), m);
    gb_un(g, WEFT__OP_ABS, c);   /* dead */
    gb_outs(g, &c, 1);
}

Test(compile, out_of_memory_is_reported_and_clean)
{
    int64_t dx[2] = { 3, 4 }, dy[2] = { 4, 4 };
    weft_tensor *args[2] = { gb_tensor_f32(2, dx, 0.1f), gb_tensor_f32(2, dy, 0.2f) };
    weft_tensor *expect = NULL;
    {
        weft__graph g;
        weft__graph_init(&g, 2);
        build_mixed(&g);
        cr_assert_eq(weft__compile_graph(&g), 0);
        weft__program *p = gb_program(rt, &g);
        cr_assert_eq(weft__program_run(p, args, 2, &expect, 1), 0, "%s", weft_errmsg());
        weft__program_free(p);
    }
    if (!weft__fault_fail_after(0))
        cr_skip_test("built without fault injection");
    int completed = 0;
    for (long n = 1; n < 400 && !completed; n++) {
        weft__graph g;
        weft__graph_init(&g, 2);
        build_mixed(&g);
        weft__program *p = NULL;
        weft_tensor *out = NULL;
        weft__fault_fail_after(n);
        int rc = weft__compile_graph(&g);
        if (rc == 0) {
            rc = weft__program_from_graph(rt, "oom", &g, &p);
            if (rc == 0)
                rc = weft__program_run(p, args, 2, &out, 1);
        } else {
            weft__graph_free(&g);
        }
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        if (rc == 0) {
            gb_assert_close(out, expect);
            completed = !hit;
        } else {
            cr_assert_eq(rc, WEFT_ENOMEM, "n=%ld: %s", n, weft_errmsg());
            cr_assert_null(out);
        }
        weft_tensor_release(out);
        weft__program_free(p);
    }
    cr_assert(completed, "some budget lets everything through");
    weft_tensor_release(expect);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- Timeline spans. ---- */

Test(compile, profile_records_trace_compile_and_ops)
{
    char path[] = "/tmp/weft_tc_profileXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    weft__targ a = { .kind = WEFT_ARG_TENSOR, .spec = gb_spec("f64[3]") };
    weft__program *p = NULL;
    cr_assert_eq(weft__trace_compile(rt, "profiled_fn", poly_body, NULL, &a, 1, 1, &p, NULL), 0,
                 "%s", weft_errmsg());
    double xs[3] = { 1, 2, 3 };
    int64_t d = 3;
    weft_tensor *x = NULL, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &d, xs, &x), 0);
    cr_assert_eq(weft__program_run(p, &x, 1, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    cr_assert(strstr(buf, "\"trace\""), "no trace span");
    cr_assert(strstr(buf, "\"compile\""), "no compile span");
    cr_assert(strstr(buf, "profiled_fn"), "spans name the function");
    cr_assert(strstr(buf, "\"fused\""), "the fused op has a span");
    weft_tensor_release(out);
    weft_tensor_release(x);
    weft__program_free(p);
}
