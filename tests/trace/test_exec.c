/* The executor: concurrent runs of one program, parallel scheduling of
 * independent ops, large fused ops split over workers, host-call order
 * under parallel scheduling, and releasing everything on failure. */
#include <pthread.h>

#include "graph_build.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(4); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(exec, .init = setup, .fini = teardown, .timeout = 60);

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RUNS_PER_THREAD 20
#else
#define RUNS_PER_THREAD 200
#endif

/* A wide program: four independent branches over x and y, joined.  Two
 * fused groups, a matmul and a reduction run side by side. */
static void build_wide(weft__graph *g, const char *spec)
{
    uint32_t x = gb_arg(g, 0, spec), y = gb_arg(g, 1, spec);
    uint32_t a = gb_un(g, WEFT__OP_EXP, gb_bin(g, WEFT__OP_MUL, x, y));
    uint32_t b = gb_un(g, WEFT__OP_NEG, gb_bin(g, WEFT__OP_SUB, x, y));
    uint32_t m = gb_bin(g, WEFT__OP_MATMUL, x, y);
    weft__node s = gb_node(WEFT__OP_SUM);
    weft__reduce_set_axis(&s, 1);
    s.n_in = 1;
    cr_assert_eq(weft__infer_spec(&s, &g->nodes[a].spec, &s.spec), 0);
    uint32_t r = gb_push(g, &s, &a, 1);
    uint32_t ab = gb_bin(g, WEFT__OP_ADD, a, b);
    uint32_t abm = gb_bin(g, WEFT__OP_ADD, ab, m);
    uint32_t outs[2] = { abm, r };
    gb_outs(g, outs, 2);
}

static weft__program *compile_wide(const char *spec, bool passes)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    build_wide(&g, spec);
    if (passes)
        cr_assert_eq(weft__compile_graph(&g), 0, "%s", weft_errmsg());
    return gb_program(rt, &g);
}

typedef struct conc {
    weft__program *p;
    weft_tensor *args[2];
    weft_tensor *expect[2];
    int failures;
} conc;

static void *conc_thread(void *arg)
{
    conc *c = arg;
    for (int i = 0; i < RUNS_PER_THREAD; i++) {
        weft_tensor *out[2] = { NULL, NULL };
        if (weft__program_run(c->p, c->args, 2, out, 2) != 0) {
            c->failures++;
            continue;
        }
        for (int k = 0; k < 2; k++) {
            size_t nb = (size_t)weft_tensor_numel(out[k]) * weft_dtype_size(weft_tensor_dtype(out[k]));
            if (weft_tensor_numel(out[k]) != weft_tensor_numel(c->expect[k]) ||
                memcmp(weft_tensor_data(out[k]), weft_tensor_data(c->expect[k]), nb) != 0)
                c->failures++;
            weft_tensor_release(out[k]);
        }
    }
    return NULL;
}

static void concurrent_runs(int64_t n)
{
    weft__program *ref = compile_wide("f32[?,?]", false);
    weft__program *p = compile_wide("f32[?,?]", true);
    cr_assert_gt(p->n_exec, 0);
    cr_assert_lt(p->ops_compiled, ref->ops_compiled);
    int64_t dims[2] = { n, n };
    conc c[4];
    weft_tensor *x = gb_tensor_f32(2, dims, 0.01f), *y = gb_tensor_f32(2, dims, 0.02f);
    weft_tensor *args[2] = { x, y }, *expect[2] = { NULL, NULL };
    cr_assert_eq(weft__program_run(ref, args, 2, expect, 2), 0, "%s", weft_errmsg());
    /* The compiled program agrees with the op-by-op one. */
    weft_tensor *got[2] = { NULL, NULL };
    cr_assert_eq(weft__program_run(p, args, 2, got, 2), 0, "%s", weft_errmsg());
    for (int k = 0; k < 2; k++) {
        gb_assert_close(got[k], expect[k]);
        weft_tensor_release(expect[k]);
        expect[k] = got[k];
    }
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        c[t] = (conc){ .p = p, .args = { x, y }, .expect = { expect[0], expect[1] } };
        cr_assert_eq(pthread_create(&th[t], NULL, conc_thread, &c[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        cr_assert_eq(c[t].failures, 0, "thread %d saw %d wrong runs", t, c[t].failures);
    }
    weft_tensor_release(expect[0]);
    weft_tensor_release(expect[1]);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft__program_free(p);
    weft__program_free(ref);
}

/* Tiny tensors: the serial path. */
Test(exec, concurrent_runs_tiny) { concurrent_runs(3); }
/* Bigger tensors: ops scheduled in parallel, fused loops split. */
Test(exec, concurrent_runs_parallel) { concurrent_runs(96); }

Test(exec, wide_program_is_not_a_chain)
{
    weft__program *p = compile_wide("f32[4,4]", true);
    cr_assert_not(p->chain);
    cr_assert_geq(p->n_roots, 2, "independent branches start together");
    weft__program_free(p);

    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[4,4]");
    uint32_t m = gb_bin(&g, WEFT__OP_MATMUL, x, x);
    uint32_t m2 = gb_bin(&g, WEFT__OP_MATMUL, m, m);
    gb_outs(&g, &m2, 1);
    p = gb_program(rt, &g);
    cr_assert(p->chain);
    weft__program_free(p);
}

/* A long elementwise program on a large tensor; same results fused and
 * not, run from a worker-less outside thread. */
static void build_long(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[?]");
    uint32_t v = x;
    for (int i = 0; i < 40; i++) {
        v = gb_bin(g, i % 3 == 0 ? WEFT__OP_ADD : i % 3 == 1 ? WEFT__OP_MUL : WEFT__OP_MAXIMUM, v, x);
        if (i % 5 == 4)
            v = gb_un(g, WEFT__OP_ABS, v);
    }
    v = gb_un(g, WEFT__OP_SQRT, v);
    gb_outs(g, &v, 1);
}

Test(exec, long_fused_program_splits_groups)
{
    weft__graph a, b;
    weft__graph_init(&a, 1);
    weft__graph_init(&b, 1);
    build_long(&a);
    build_long(&b);
    cr_assert_eq(weft__compile_graph(&b), 0);
    uint32_t n_fused = gb_count(&b, WEFT__OP_FUSED);
    cr_assert_geq(n_fused, 3, "groups are capped at %d instructions", WEFT__FUSED_MAX_INSTR);
    for (uint32_t i = 0; i < b.n_nodes; i++)
        if (b.nodes[i].op == WEFT__OP_FUSED)
            cr_assert_leq(b.nodes[i].attr.fused.prog->n_instr, WEFT__FUSED_MAX_INSTR);
    weft__program *pa = gb_program(rt, &a), *pb = gb_program(rt, &b);
    int64_t n = 50000;
    weft_tensor *x = gb_tensor_f32(1, &n, 0.001f), *oa = NULL, *ob = NULL;
    /* Each group writes in place into the previous op's dead result. */
    uint32_t reusing = 0;
    for (uint32_t i = 0; i < pb->g.n_nodes; i++) {
        if (pb->donor[i] == WEFT__NO_NODE)
            continue;
        reusing++;
        cr_assert_neq(pb->g.nodes[pb->donor[i]].op, WEFT__OP_ARG);
        cr_assert_eq(pb->g.nodes[i].in[0], pb->donor[i]);
    }
    cr_assert_geq(reusing, n_fused - 1);
    cr_assert_eq(weft__program_run(pa, &x, 1, &oa, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft__program_run(pb, &x, 1, &ob, 1), 0, "%s", weft_errmsg());
    gb_assert_close(ob, oa);
    weft_tensor_release(oa);
    weft_tensor_release(ob);
    weft_tensor_release(x);
    weft__program_free(pa);
    weft__program_free(pb);
}

/* A host callback failing in the middle of a parallel run: the error comes
 * back with its message, and nothing leaks (ASan checks). */
static int fail_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    (void)out;
    (void)user;
    return -1;
}

Test(exec, failure_in_parallel_run_reports_and_cleans_up)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    build_wide(&g, "f32[64,64]");
    uint32_t x = 0;
    weft__node h = gb_node(WEFT__OP_HOST);
    h.flags = WEFT__NODE_SIDE_EFFECT;
    h.attr.host.fn = fail_cb;
    h.spec = g.nodes[x].spec;
    gb_push(&g, &h, &x, 1);
    cr_assert_eq(weft__compile_graph(&g), 0);
    weft__program *p = gb_program(rt, &g);
    int64_t dims[2] = { 64, 64 };
    weft_tensor *args[2] = { gb_tensor_f32(2, dims, 1), gb_tensor_f32(2, dims, 2) };
    weft_tensor *out[2] = { NULL, NULL };
    for (int rep = 0; rep < 3; rep++) {
        cr_assert_eq(weft__program_run(p, args, 2, out, 2), WEFT_EHOST);
        cr_assert_null(out[0]);
        cr_assert_null(out[1]);
        cr_assert_neq(weft_errmsg()[0], '\0');
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    weft__program_free(p);
}

/* The run state is per run: a program runs the same from workers of its
 * own runtime (here through weft_parallel_map). */
typedef struct from_workers {
    weft__program *p;
    weft_tensor *args[2];
    weft_tensor *expect[2];
    int bad;   /* atomic */
} from_workers;

static int worker_run(size_t i, void *ctx)
{
    (void)i;
    from_workers *f = ctx;
    weft_tensor *out[2] = { NULL, NULL };
    if (weft__program_run(f->p, f->args, 2, out, 2) != 0) {
        __atomic_add_fetch(&f->bad, 1, __ATOMIC_RELAXED);
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        size_t nb = (size_t)weft_tensor_numel(out[k]) * weft_dtype_size(weft_tensor_dtype(out[k]));
        if (memcmp(weft_tensor_data(out[k]), weft_tensor_data(f->expect[k]), nb) != 0)
            __atomic_add_fetch(&f->bad, 1, __ATOMIC_RELAXED);
        weft_tensor_release(out[k]);
    }
    return 0;
}

Test(exec, runs_from_workers)
{
    weft__program *p = compile_wide("f32[?,?]", true);
    int64_t dims[2] = { 70, 70 };
    from_workers f = { .p = p, .args = { gb_tensor_f32(2, dims, 1), gb_tensor_f32(2, dims, 2) } };
    cr_assert_eq(weft__program_run(p, f.args, 2, f.expect, 2), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_parallel_map(rt, 16, 0, worker_run, &f), 0, "%s", weft_errmsg());
    cr_assert_eq(f.bad, 0);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(f.args[k]);
        weft_tensor_release(f.expect[k]);
    }
    weft__program_free(p);
}

/* A map node inside a compiled program, with a stand-in callee that
 * doubles each slice; the program runs concurrently from several threads. */
typedef struct fake_fn {
    weft__callee callee;
    int releases;   /* atomic */
} fake_fn;

static int fake_resolve(weft_function *fn, const weft_spec *arg, void **concrete, weft_spec *out)
{
    *concrete = fn;
    *out = *arg;
    return 0;
}

static int fake_invoke(void *concrete, weft_tensor *arg, weft_tensor **out)
{
    (void)concrete;
    int64_t n = weft_tensor_numel(arg);
    float buf[64];
    const float *in = weft_tensor_data(arg);
    for (int64_t i = 0; i < n && i < 64; i++)
        buf[i] = 2 * in[i];
    return weft_tensor_create(WEFT_F32, weft_tensor_rank(arg), weft_tensor_dims(arg), buf, out);
}

static void fake_release(void *concrete)
{
    fake_fn *f = concrete;
    __atomic_add_fetch(&f->releases, 1, __ATOMIC_RELAXED);
}

/* The map runner calls invoke_n (one argument, one output here). */
static int fake_invoke_n(void *concrete, weft_tensor *const *args, size_t n_args,
                         weft_tensor **outs, size_t n_outs)
{
    cr_assert_eq(n_args, 1);
    cr_assert_eq(n_outs, 1);
    return fake_invoke(concrete, args[0], outs);
}

/* No side_effects query: the stand-in makes no host calls. */
static const weft__callee_ops fake_ops = { fake_resolve, fake_invoke, fake_release, NULL,
                                           NULL, NULL, fake_invoke_n };

static void *map_thread(void *arg)
{
    conc *c = arg;
    for (int i = 0; i < RUNS_PER_THREAD / 4; i++) {
        weft_tensor *out = NULL;
        if (weft__program_run(c->p, c->args, 1, &out, 1) != 0) {
            c->failures++;
            continue;
        }
        const float *o = weft_tensor_data(out), *x = weft_tensor_data(c->args[0]);
        for (int64_t k = 0; k < weft_tensor_numel(out); k++)
            if (fabsf(o[k] - (2 * x[k] + x[k])) > 1e-5f)
                c->failures++;
        weft_tensor_release(out);
    }
    return NULL;
}

Test(exec, map_node_in_program)
{
    fake_fn fn = { .callee = { &fake_ops } };
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[?,4]");
    weft__node m = gb_node(WEFT__OP_MAP);
    m.attr.map.fn = (weft_function *)(void *)&fn;
    m.attr.map.concrete = &fn;
    m.attr.map.parallel_iterations = 2;
    m.spec = gb_spec("f32[?,4]");
    uint32_t mid = gb_push(&g, &m, &x, 1);
    uint32_t y = gb_bin(&g, WEFT__OP_ADD, mid, x);
    gb_outs(&g, &y, 1);
    cr_assert_eq(weft__compile_graph(&g), 0);
    cr_assert_eq(gb_count(&g, WEFT__OP_MAP), 1, "map is never folded or merged");
    weft__program *p = gb_program(rt, &g);
    int64_t dims[2] = { 6, 4 };
    conc c[3];
    pthread_t th[3];
    for (int t = 0; t < 3; t++) {
        c[t] = (conc){ .p = p, .args = { gb_tensor_f32(2, dims, (float)t) } };
        cr_assert_eq(pthread_create(&th[t], NULL, map_thread, &c[t]), 0);
    }
    for (int t = 0; t < 3; t++) {
        pthread_join(th[t], NULL);
        cr_assert_eq(c[t].failures, 0);
        weft_tensor_release(c[t].args[0]);
    }
    weft__program_free(p);
    cr_assert_eq(fn.releases, 1, "the program released the map's concrete once");
}

/* ---- The buffer plan at run time. ---- */

static uint32_t px_reduce(weft__graph *g, weft__op op, uint32_t a, int axis)
{
    weft__node n = gb_node(op);
    weft__reduce_set_axis(&n, axis);
    n.n_in = 1;
    cr_assert_eq(weft__infer_spec(&n, &g->nodes[a].spec, &n.spec), 0, "%s", weft_errmsg());
    return gb_push(g, &n, &a, 1);
}

static uint32_t px_reshape(weft__graph *g, uint32_t a, int rank, const int64_t *dims)
{
    weft__node n = gb_node(WEFT__OP_RESHAPE);
    n.attr.reshape.rank = rank;
    memcpy(n.attr.reshape.dims, dims, (size_t)rank * sizeof *dims);
    n.n_in = 1;
    cr_assert_eq(weft__infer_spec(&n, &g->nodes[a].spec, &n.spec), 0, "%s", weft_errmsg());
    return gb_push(g, &n, &a, 1);
}

static uint32_t px_cast(weft__graph *g, uint32_t a, weft_dtype to)
{
    weft__node n = gb_node(WEFT__OP_CAST);
    n.attr.cast.to = to;
    n.n_in = 1;
    cr_assert_eq(weft__infer_spec(&n, &g->nodes[a].spec, &n.spec), 0, "%s", weft_errmsg());
    return gb_push(g, &n, &a, 1);
}

static uint32_t px_fill(weft__graph *g, const char *spec, double v)
{
    weft__node n = gb_node(WEFT__OP_FILL);
    n.attr.fill.value = v;
    n.spec = gb_spec(spec);
    return gb_push(g, &n, NULL, 0);
}

/* The outputs of g computed node by node with weft__kernel_eval, without
 * the executor: the reference for planned runs.  g has no fused nodes. */
static void reference_run(const weft__graph *g, weft_tensor *const *args, weft_tensor **outs)
{
    weft_tensor **v = calloc(g->n_nodes, sizeof *v);
    cr_assert(v);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const weft__node *n = &g->nodes[i];
        if (n->op == WEFT__OP_ARG) {
            v[i] = weft_tensor_retain(args[n->attr.arg.index]);
            continue;
        }
        weft_tensor *in[3];
        for (uint32_t k = 0; k < n->n_in; k++)
            in[k] = v[n->in[k]];
        cr_assert_eq(weft__kernel_eval(NULL, n, in, &v[i]), 0, "%s", weft_errmsg());
    }
    for (uint32_t k = 0; k < g->n_outs; k++)
        outs[k] = weft_tensor_retain(v[g->outs[k]]);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        weft_tensor_release(v[i]);
    free(v);
}

/* How many allocations one run of p makes, found by failing the k-th one
 * for k = 1, 2, ... until a run needs no failure; every failed run must
 * report WEFT_ENOMEM and hand back nothing (ASan checks for leaks). */
static long allocs_per_run(const weft__program *p, weft_tensor *const *args, size_t n_args)
{
    size_t n_outs = p->g.n_outs;
    for (long k = 1; k < 4096; k++) {
        weft_tensor *o[4] = { NULL, NULL, NULL, NULL };
        /* Every buffer fresh, as in a new process: a cached one would not
         * be counted. */
        weft__tensor_buf_cache_drain();
        weft__fault_fail_after(k);
        int rc = weft__program_run(p, args, n_args, o, n_outs);
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        for (size_t j = 0; j < n_outs; j++) {
            if (rc < 0)
                cr_assert_null(o[j]);
            weft_tensor_release(o[j]);
        }
        if (!hit) {
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            return k - 1;
        }
        cr_assert_eq(rc, WEFT_ENOMEM, "k=%ld: %s", k, weft_errmsg());
    }
    cr_assert_fail("a run never finished");
    return -1;
}

/* 100 unfusable ops: add, reshape, mul, reshape, ... over 4 elements. */
static void build_unfusable_chain(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[4]"), y = gb_arg(g, 1, "f32[2,2]"), v = x;
    const int64_t d22[2] = { 2, 2 }, d4[1] = { 4 };
    for (int i = 0; i < 25; i++) {
        v = gb_bin(g, WEFT__OP_ADD, v, x);
        v = px_reshape(g, v, 2, d22);
        v = gb_bin(g, WEFT__OP_MUL, v, y);
        v = px_reshape(g, v, 1, d4);
    }
    gb_outs(g, &v, 1);
}

Test(exec, plan_runs_long_chain_in_one_buffer)
{
    weft__graph g, ref;
    weft__graph_init(&g, 2);
    weft__graph_init(&ref, 2);
    build_unfusable_chain(&g);
    build_unfusable_chain(&ref);
    cr_assert_eq(weft__compile_graph(&g), 0, "%s", weft_errmsg());
    cr_assert_eq(gb_count(&g, WEFT__OP_FUSED), 0, "nothing to fuse");
    weft__program *p = gb_program(rt, &g);
    cr_assert_eq(p->n_exec, 100);
    /* Every op after the first writes in place into its dead input. */
    cr_assert_eq(p->n_slots, 1);
    cr_assert_eq(p->n_reuses, 99);
    int64_t d4 = 4, d22[2] = { 2, 2 };
    weft_tensor *args[2] = { gb_tensor_f32(1, &d4, 0.5f), gb_tensor_f32(2, d22, 0.25f) };
    weft_tensor *expect = NULL, *o1 = NULL, *o2 = NULL;
    reference_run(&ref, args, &expect);
    cr_assert_eq(weft__program_run(p, args, 2, &o1, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft__program_run(p, args, 2, &o2, 1), 0, "%s", weft_errmsg());
    gb_assert_close(o1, expect);
    gb_assert_close(o2, expect);
    cr_assert_neq(weft_tensor_data(o1), weft_tensor_data(o2), "outputs are never shared");
    /* The run state (over 32 nodes, on the heap) and one tensor: 3
     * allocations for 100 ops, where a fresh result per op takes 201. */
    if (weft__fault_fail_after(0)) {
        long n = allocs_per_run(p, args, 2);
        cr_assert_eq(n, 3, "%ld allocations per run", n);
    }
    weft_tensor_release(o1);
    weft_tensor_release(o2);
    weft_tensor_release(expect);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    weft__program_free(p);
    weft__graph_free(&ref);
}

/* Every kind of planned op, with slots whose nodes differ in size and
 * dtype, broadcasting (never in place) and a reduction and a matmul (never
 * in place on their inputs). */
static void build_kinds(weft__graph *g)
{
    uint32_t x = gb_arg(g, 0, "f32[4,4]"), s = gb_arg(g, 1, "f32[]");
    uint32_t a = gb_un(g, WEFT__OP_EXP, gb_bin(g, WEFT__OP_MUL, x, s));   /* [4,4] */
    uint32_t m = gb_bin(g, WEFT__OP_MATMUL, a, a);
    uint32_t r = px_reduce(g, WEFT__OP_SUM, m, 1);                        /* [4] */
    uint32_t c = px_cast(g, r, WEFT_F64);
    uint32_t q = gb_un(g, WEFT__OP_SQRT, c);
    uint32_t back = px_cast(g, q, WEFT_F32);
    uint32_t f = px_fill(g, "f32[8,4]", 0.5);
    uint32_t b = gb_bin(g, WEFT__OP_ADD, f, back);                         /* [8,4] */
    uint32_t cond = gb_bin(g, WEFT__OP_GT, b, s);
    uint32_t w = gb_op(g, WEFT__OP_WHERE, cond, b, s);
    uint32_t mx = px_reduce(g, WEFT__OP_REDUCE_MAX, w, 0);                /* [4] */
    weft__node rg = gb_node(WEFT__OP_RANGE);
    rg.attr.range.start = 0;
    rg.attr.range.limit = 4;
    rg.attr.range.delta = 1;
    rg.spec.dtype = WEFT_I64;
    cr_assert_eq(weft__infer_spec(&rg, NULL, &rg.spec), 0, "%s", weft_errmsg());
    uint32_t rr = px_cast(g, gb_push(g, &rg, NULL, 0), WEFT_F32);
    uint32_t out = gb_bin(g, WEFT__OP_SUB, gb_bin(g, WEFT__OP_MUL, mx, rr), mx);
    uint32_t mean = px_reduce(g, WEFT__OP_MEAN, out, WEFT_ALL_AXES);
    uint32_t outs[2] = { out, mean };
    gb_outs(g, outs, 2);
}

static bool node_reads(const weft__node *n, uint32_t x)
{
    for (uint32_t k = 0; k < n->n_in; k++)
        if (n->in[k] == x)
            return true;
    return false;
}

static void check_kinds(bool fuse)
{
    weft__graph g, ref;
    weft__graph_init(&g, 2);
    weft__graph_init(&ref, 2);
    build_kinds(&g);
    build_kinds(&ref);
    if (fuse)
        cr_assert_eq(weft__compile_graph(&g), 0, "%s", weft_errmsg());
    weft__program *p = gb_program(rt, &g);
    cr_assert_geq(p->n_reuses, 4, "reuses: %u", p->n_reuses);
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        const weft__node *n = &p->g.nodes[i];
        uint32_t d = p->donor[i];
        if (d == WEFT__NO_NODE)
            continue;
        cr_assert(p->pflags[i] & WEFT__PN_PLANNED);
        cr_assert(!(p->pflags[d] & (WEFT__PN_OUTPUT | WEFT__PN_BORROWED)));
        cr_assert_geq(p->slot_bytes[d], p->slot_bytes[i], "a slot starts at its largest");
        if (!node_reads(n, d))
            continue;
        weft__op_kind k = weft__op_kind_of(n->op);
        cr_assert(k != WEFT__KIND_REDUCE && k != WEFT__KIND_MATMUL, "%s in place",
                  weft__op_name(n->op));
        cr_assert(weft__spec_equal(&n->spec, &p->g.nodes[d].spec) || k == WEFT__KIND_SHAPE);
    }
    int64_t d44[2] = { 4, 4 };
    float sv = 0.3f;
    weft_tensor *args[2] = { gb_tensor_f32(2, d44, 0.1f), NULL };
    cr_assert_eq(weft_tensor_create(WEFT_F32, 0, NULL, &sv, &args[1]), 0);
    weft_tensor *expect[2] = { NULL, NULL };
    reference_run(&ref, args, expect);
    for (int rep = 0; rep < 3; rep++) {
        weft_tensor *o[2] = { NULL, NULL };
        cr_assert_eq(weft__program_run(p, args, 2, o, 2), 0, "%s", weft_errmsg());
        gb_assert_close(o[0], expect[0]);
        gb_assert_close(o[1], expect[1]);
        weft_tensor_release(o[0]);
        weft_tensor_release(o[1]);
    }
    if (weft__fault_fail_after(0)) {
        /* Each slot is one tensor (two allocations); nothing else. */
        long n = allocs_per_run(p, args, 2);
        cr_assert_eq(n, 2 * (long)p->n_slots, "%ld allocations, %u slots", n, p->n_slots);
    }
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(expect[k]);
        weft_tensor_release(args[k]);
    }
    weft__program_free(p);
    weft__graph_free(&ref);
}

Test(exec, plan_covers_every_kind_unfused) { check_kinds(false); }
Test(exec, plan_covers_every_kind_fused) { check_kinds(true); }

/* A host callback that keeps a reference to its input: the buffer has
 * escaped, and the op the plan handed it to must write elsewhere. */
typedef struct stash { weft_tensor *kept; float copy[4]; } stash;

static int stash_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    stash *st = user;
    cr_assert_eq(n_in, 1);
    weft_tensor_release(st->kept);
    st->kept = weft_tensor_retain(in[0]);
    memcpy(st->copy, weft_tensor_data(in[0]), sizeof st->copy);
    return weft_tensor_create(WEFT_F32, 1, weft_tensor_dims(in[0]), st->copy, out);
}

Test(exec, plan_never_overwrites_an_escaped_buffer)
{
    stash st = { NULL, { 0 } };
    weft__graph g;
    weft__graph_init(&g, 1);
    uint32_t x = gb_arg(&g, 0, "f32[4]");
    uint32_t a = gb_bin(&g, WEFT__OP_MUL, x, x);
    weft__node h = gb_node(WEFT__OP_HOST);
    h.flags = WEFT__NODE_SIDE_EFFECT;
    h.attr.host.fn = stash_cb;
    h.attr.host.user = &st;
    h.spec = g.nodes[a].spec;
    uint32_t hn = gb_push(&g, &h, &a, 1);
    uint32_t b = gb_bin(&g, WEFT__OP_ADD, a, hn);
    gb_outs(&g, &b, 1);
    weft__program *p = gb_program(rt, &g);
    cr_assert_eq(p->donor[b], a, "the add is planned in place on the product");
    int64_t d4 = 4;
    weft_tensor *arg = gb_tensor_f32(1, &d4, 1.0f), *o = NULL;
    cr_assert_eq(weft__program_run(p, &arg, 1, &o, 1), 0, "%s", weft_errmsg());
    const float *xv = weft_tensor_data(arg), *ov = weft_tensor_data(o);
    const float *kv = weft_tensor_data(st.kept);
    cr_assert_neq(kv, ov);
    for (int i = 0; i < 4; i++) {
        cr_assert_float_eq(kv[i], xv[i] * xv[i], 1e-6, "the kept tensor was overwritten");
        cr_assert_float_eq(ov[i], 2 * xv[i] * xv[i], 1e-6);
    }
    weft_tensor_release(st.kept);
    weft_tensor_release(o);
    weft_tensor_release(arg);
    weft__program_free(p);
}

/* Unknown dims: slots are sized at run time; a donor too small for a
 * later, larger run's result is not used. */
Test(exec, plan_with_unknown_dims_grows_per_run)
{
    weft__graph g;
    weft__graph_init(&g, 2);
    uint32_t x = gb_arg(&g, 0, "f32[?]"), y = gb_arg(&g, 1, "f32[?,?]");
    uint32_t a = gb_un(&g, WEFT__OP_EXP, x);
    uint32_t s = px_reduce(&g, WEFT__OP_SUM, a, WEFT_ALL_AXES);
    uint32_t b = gb_bin(&g, WEFT__OP_ADD, s, y);    /* may reuse a's buffer */
    uint32_t c = gb_un(&g, WEFT__OP_NEG, b);
    gb_outs(&g, &c, 1);
    weft__program *p = gb_program(rt, &g);
    cr_assert_eq(p->donor[b], a);
    int64_t shapes[3][3] = { { 16, 2, 2 }, { 2, 8, 8 }, { 3, 1, 3 } };
    for (int t = 0; t < 3; t++) {
        int64_t nx = shapes[t][0];
        weft_tensor *args[2] = { gb_tensor_f32(1, &nx, 0.1f), gb_tensor_f32(2, &shapes[t][1], 1) };
        weft_tensor *o = NULL;
        cr_assert_eq(weft__program_run(p, args, 2, &o, 1), 0, "%s", weft_errmsg());
        const float *xv = weft_tensor_data(args[0]), *yv = weft_tensor_data(args[1]);
        double sum = 0;
        for (int64_t i = 0; i < nx; i++)
            sum += exp((double)xv[i]);
        cr_assert_eq(weft_tensor_numel(o), shapes[t][1] * shapes[t][2]);
        const float *ov = weft_tensor_data(o);
        for (int64_t i = 0; i < weft_tensor_numel(o); i++)
            cr_assert_float_eq(ov[i], -(float)(sum + yv[i]), 1e-4);
        weft_tensor_release(o);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    weft__program_free(p);
}
