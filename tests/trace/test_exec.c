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
    s.attr.reduce.axis = 1;
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

static const weft__callee_ops fake_ops = { fake_resolve, fake_invoke, fake_release };

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
