/* Eager composites in one pass (trace/eager_fused.c): softmax, log_softmax
 * the activations, ndtr and erfcinv run eagerly as their fused group, with the bits of
 * the ops one by one and of the traced op; where the fast path does not
 * apply the composite runs, with the same results. */
#include <pthread.h>
#include <string.h>

#include "test_util.h"
#include "trace/eager_fused.h"

typedef weft_value *(*unary_op)(weft_ctx *cx, weft_value *a);

static weft_value *softmax_last(weft_ctx *cx, weft_value *a)
{
    return weft_softmax(cx, a, -1);
}

static weft_value *log_softmax_last(weft_ctx *cx, weft_value *a)
{
    return weft_log_softmax(cx, a, -1);
}

static weft_value *softmax_first(weft_ctx *cx, weft_value *a)
{
    return weft_softmax(cx, a, 0);
}

static weft_value *log_softmax_first(weft_ctx *cx, weft_value *a)
{
    return weft_log_softmax(cx, a, 0);
}

typedef struct op_case {
    const char *name;
    unary_op op;
    bool over_rows;
} op_case;

static const op_case OPS[] = {
    { "softmax", softmax_last, true },   { "log_softmax", log_softmax_last, true },
    { "elu", weft_elu, false },          { "gelu", weft_gelu, false },
    { "gelu_exact", weft_gelu_exact, false }, { "softplus", weft_softplus, false },
    { "log_sigmoid", weft_log_sigmoid, false }, { "silu", weft_silu, false },
    { "selu", weft_selu, false },        { "softsign", weft_softsign, false },
    { "mish", weft_mish, false },        { "ndtr", weft_ndtr, false },
    { "erfcinv", weft_erfcinv, false },  { "relu6", weft_relu6, false },
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

/* Values over [-40, 40] with the special ones among them: zeros of both
 * signs, infinities, NaN, numbers exp overflows at in f32. */
static weft_tensor *input(weft_dtype dt, int rank, const int64_t *dims)
{
    static const double special[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, 89.5, -104.0, 1e-30 };
    int64_t n = test_numel(rank, dims);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = i % 37 == 5 ? special[(i / 37) % 8] : ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 80;
    }
    weft_tensor *t = test_tensor(dt, rank, dims, v);
    free(v);
    return t;
}

/* op on t in a fresh eager context, with the fast path on or off; *runs
 * gets the fused runs it made. */
static weft_tensor *eager(weft_runtime *rt, unary_op op, weft_tensor *t, bool fast, uint64_t *runs)
{
    weft__eager_fused_enable(fast);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    uint64_t before = weft__eager_fused_runs();
    weft_value *y = op(cx, weft_eager_value(cx, t));
    *runs = weft__eager_fused_runs() - before;
    cr_assert_not_null(y, "%s", weft_errmsg());
    weft_tensor *out = weft_tensor_retain(weft_value_tensor(y));
    weft_eager_end(&cx);
    weft__eager_fused_enable(true);
    return out;
}

static void assert_same_bits(const weft_tensor *a, const weft_tensor *b, const char *what)
{
    cr_assert_eq(weft_tensor_dtype(a), weft_tensor_dtype(b), "%s: dtype", what);
    cr_assert_eq(weft_tensor_rank(a), weft_tensor_rank(b), "%s: rank", what);
    for (int d = 0; d < weft_tensor_rank(a); d++)
        cr_assert_eq(weft_tensor_dims(a)[d], weft_tensor_dims(b)[d], "%s: dim %d", what, d);
    size_t es = weft_dtype_size(weft_tensor_dtype(a));
    size_t n = (size_t)weft_tensor_numel(a);
    const unsigned char *pa = weft_tensor_data(a), *pb = weft_tensor_data(b);
    for (size_t i = 0; i < n; i++)
        cr_assert(memcmp(pa + i * es, pb + i * es, es) == 0, "%s: element %zu differs: %g vs %g",
                  what, i, test_element(a, (int64_t)i), test_element(b, (int64_t)i));
}

/* op on t: fused when expected (one run), op by op otherwise (none), and
 * the same bits as op by op either way. */
static void check(weft_runtime *rt, const op_case *c, weft_dtype dt, int rank, const int64_t *dims,
                  bool fused)
{
    char what[128];
    snprintf(what, sizeof what, "%s of %s rank %d [%lld, ...]", c->name, weft_dtype_name(dt),
             rank, rank ? (long long)dims[0] : 0LL);
    weft_tensor *t = input(dt, rank, dims);
    uint64_t runs_fast, runs_off;
    weft_tensor *fast = eager(rt, c->op, t, true, &runs_fast);
    weft_tensor *ref = eager(rt, c->op, t, false, &runs_off);
    cr_assert_eq(runs_fast, fused ? 1u : 0u, "%s: %llu fused runs", what,
                 (unsigned long long)runs_fast);
    cr_assert_eq(runs_off, 0u, "%s: fused with the fast path off", what);
    assert_same_bits(fast, ref, what);
    weft_tensor_release(fast);
    weft_tensor_release(ref);
    weft_tensor_release(t);
}

Test(eager_fused, every_op_every_shape_same_bits, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    static const struct {
        int rank;
        int64_t dims[3];
    } shapes[] = {
        { 2, { 32, 10 } },  { 3, { 3, 7, 5 } }, { 1, { 9 } },       { 2, { 3, 1024 } },
        { 2, { 2, 1500 } }, { 2, { 0, 4 } },    { 2, { 4, 0 } },    { 0, { 0 } },
        { 2, { 4096, 3 } }, { 1, { 100003 } },
    };
    for (size_t o = 0; o < N_OPS; o++)
        for (int d = 0; d < 2; d++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                int rank = shapes[s].rank;
                const int64_t *dims = shapes[s].dims;
                if (OPS[o].over_rows && rank == 0)
                    continue;   /* no axis to reduce */
                bool fits = rank == 0 || dims[rank - 1] <= 1024;
                check(rt, &OPS[o], d ? WEFT_F64 : WEFT_F32, rank, dims,
                      !OPS[o].over_rows || fits);
            }
    weft_runtime_destroy(&rt);
}

Test(eager_fused, other_axes_and_integers_op_by_op, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    int64_t dims[2] = { 6, 5 }, col[2] = { 6, 1 };
    const op_case first[] = { { "softmax axis 0", softmax_first, true },
                              { "log_softmax axis 0", log_softmax_first, true } };
    for (int i = 0; i < 2; i++) {
        check(rt, &first[i], WEFT_F32, 2, dims, false);
        /* Over axis 0 of [6, 1] the op is not over the last axis either. */
        check(rt, &first[i], WEFT_F64, 2, col, false);
    }
    /* relu6 takes integers; they stay integers, op by op. */
    check(rt, &OPS[N_OPS - 1], WEFT_I32, 2, dims, false);
    check(rt, &OPS[N_OPS - 1], WEFT_I64, 2, dims, false);
    weft_runtime_destroy(&rt);
}

/* The traced op (compiled, on the interpreter) gives the eager bits. */
static int traced_body(weft_ctx *cx, weft_value *const *argv, weft_value **outv, void *user)
{
    const op_case *c = user;
    outv[0] = c->op(cx, argv[0]);
    return 0;
}

Test(eager_fused, traced_gives_the_same_bits, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    int64_t dims[2] = { 40, 33 };
    for (size_t o = 0; o < N_OPS; o++) {
        weft_tensor *t = input(WEFT_F32, 2, dims);
        uint64_t runs;
        weft_tensor *fast = eager(rt, OPS[o].op, t, true, &runs);
        cr_assert_eq(runs, 1u, "%s", OPS[o].name);
        weft_function *f = test_function(rt, OPS[o].name, traced_body, (void *)&OPS[o], 1, 1,
                                         NULL, WEFT_FUNCTION_NO_JIT);
        weft_arg arg = weft_arg_tensor(t);
        weft_tensor *traced = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &traced, 1), 0, "%s", weft_errmsg());
        assert_same_bits(fast, traced, OPS[o].name);
        weft_tensor_release(traced);
        weft_function_destroy(&f);
        weft_tensor_release(fast);
        weft_tensor_release(t);
    }
    weft_runtime_destroy(&rt);
}

Test(eager_fused, a_weak_scalar_stays_weak, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    uint64_t before = weft__eager_fused_runs();
    weft_value *g = weft_gelu(cx, weft_const_f64(cx, 1.5));
    cr_assert_not_null(g, "%s", weft_errmsg());
    cr_assert_eq(weft__eager_fused_runs(), before, "a weak scalar went the fused way");
    /* Still weak: it takes an f32 operand's dtype. */
    int64_t n = 3;
    double v[3] = { 1, 2, 3 };
    weft_tensor *t = test_tensor(WEFT_F32, 1, &n, v);
    weft_value *y = weft_mul(cx, weft_eager_value(cx, t), g);
    cr_assert_not_null(y, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_dtype(weft_value_tensor(y)), WEFT_F32);
    double g15 = 0.5 * 1.5 * (1 + tanh(0.7978845608028654 * (1.5 + 0.044715 * 1.5 * 1.5 * 1.5)));
    cr_assert_float_eq(test_element(weft_value_tensor(y), 2), 3 * g15, 1e-5);
    weft_tensor_release(t);
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

/* Threads whose first calls race to derive the same groups: each gets the
 * op-by-op bits, and the fused path from its first call on. */
typedef struct racer {
    weft_runtime *rt;
    weft_tensor *t, *ref[N_OPS];
    int mismatches, unfused;
} racer;

static void *race(void *p)
{
    racer *r = p;
    weft_ctx *cx = NULL;
    if (weft_eager_begin(r->rt, &cx) != 0)
        return NULL;
    for (int rep = 0; rep < 20; rep++)
        for (size_t o = 0; o < N_OPS; o++) {
            uint64_t before = weft__eager_fused_runs();
            weft_value *y = OPS[o].op(cx, weft_eager_value(cx, r->t));
            r->unfused += weft__eager_fused_runs() != before + 1;
            const weft_tensor *out = y ? weft_value_tensor(y) : NULL;
            /* f64, 8 bytes an element. */
            r->mismatches += !out || memcmp(weft_tensor_data(out), weft_tensor_data(r->ref[o]),
                                            (size_t)weft_tensor_numel(out) * 8) != 0;
            weft_value_release(cx, y);
        }
    weft_eager_end(&cx);
    return NULL;
}

Test(eager_fused, threads_race_to_derive, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    int64_t dims[2] = { 16, 24 };
    weft_tensor *t = input(WEFT_F64, 2, dims);
    racer rs[4];
    memset(rs, 0, sizeof rs);
    for (int i = 0; i < 4; i++) {
        rs[i].rt = rt;
        rs[i].t = t;
    }
    /* The references op by op: the fast path is off, so nothing is
     * derived before the threads start. */
    for (size_t o = 0; o < N_OPS; o++) {
        uint64_t runs;
        weft_tensor *ref = eager(rt, OPS[o].op, t, false, &runs);
        for (int i = 0; i < 4; i++)
            rs[i].ref[o] = ref;
    }
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, race, &rs[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_expect_eq(rs[i].mismatches, 0, "thread %d: %d results differ", i, rs[i].mismatches);
        cr_expect_eq(rs[i].unfused, 0, "thread %d: %d calls not fused", i, rs[i].unfused);
    }
    for (size_t o = 0; o < N_OPS; o++)
        weft_tensor_release(rs[0].ref[o]);
    weft_tensor_release(t);
    weft_runtime_destroy(&rt);
}
