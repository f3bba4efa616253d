/* weft_map (map_fn): results against a reference, one trace for many
 * iterations, the parallel_iterations bound, errors naming the iteration,
 * maps inside maps, in eager and traced mode. */
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "runtime/iface.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static weft_spec spec_of(const char *text)
{
    weft_spec s;
    cr_assert_eq(weft_spec_parse(text, &s), 0, "%s", text);
    return s;
}

/* rows x cols f64 with element (i, j) = i * 10 + j. */
static weft_tensor *grid(int64_t rows, int64_t cols)
{
    int64_t dims[2] = {rows, cols};
    double *d = malloc((size_t)(rows * cols + 1) * sizeof *d);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            d[i * cols + j] = (double)(i * 10 + j);
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, dims, d, &t), 0, "%s", weft_errmsg());
    free(d);
    return t;
}

static weft_function *make_fn(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                              const weft_spec *sig)
{
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.body = body;
    d.user = user;
    d.n_args = 1;
    d.n_outs = 1;
    d.input_signature = sig;
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

/* ---- Bodies. ---- */

/* row -> sum(row * row) + 1, a scalar. */
static int body_sumsq(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *sq = weft_mul(cx, args[0], args[0]);
    outs[0] = weft_add(cx, weft_sum(cx, sq, WEFT_ALL_AXES), weft_const_f64(cx, 1.0));
    return 0;
}

static double sumsq_ref(int64_t i, int64_t cols)
{
    double s = 1;
    for (int64_t j = 0; j < cols; j++)
        s += (double)(i * 10 + j) * (double)(i * 10 + j);
    return s;
}

/* The outer function of a traced map: maps user (a weft_function) over x. */
typedef struct outer { weft_function *inner; unsigned pi; } outer;

static int body_outer(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    outer *o = user;
    outs[0] = weft_map(cx, o->inner, args[0], o->pi);
    return 0;
}

static int call1(weft_function *f, weft_tensor *x, weft_tensor **out)
{
    weft_arg a = weft_arg_tensor(x);
    return weft_function_call(f, &a, 1, out, 1);
}

static void check_sumsq(weft_tensor *r, int64_t rows, int64_t cols)
{
    cr_assert_eq(weft_tensor_rank(r), 1);
    cr_assert_eq(weft_tensor_dims(r)[0], rows);
    cr_assert_eq(weft_tensor_dtype(r), WEFT_F64);
    const double *d = weft_tensor_data(r);
    for (int64_t i = 0; i < rows; i++)
        cr_assert_eq(d[i], sumsq_ref(i, cols), "row %lld: %g", (long long)i, d[i]);
}

Test(map, eager_matches_reference, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    weft_function *fn = make_fn(rt, "sumsq", body_sumsq, NULL, NULL);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_tensor *x = grid(37, 5);
    weft_value *v = weft_map(cx, fn, weft_eager_value(cx, x), 4);
    cr_assert_not_null(v, "%s", weft_errmsg());
    check_sumsq(weft_value_tensor(v), 37, 5);
    cr_assert_eq(weft_function_tracing_count(fn), 1, "fn traced once for 37 slices");
    weft_eager_end(&cx);
    weft_tensor_release(x);
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
}

Test(map, traced_matches_reference, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    weft_function *inner = make_fn(rt, "sumsq", body_sumsq, NULL, NULL);
    outer o = {inner, 3};
    weft_spec sig = spec_of("f64[?,6]");
    weft_function *f = make_fn(rt, "outer", body_outer, &o, &sig);
    int64_t sizes[] = {100, 7, 1, 0, 33};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        weft_tensor *x = grid(sizes[k], 6), *r = NULL;
        cr_assert_eq(call1(f, x, &r), 0, "rows %lld: %s", (long long)sizes[k], weft_errmsg());
        check_sumsq(r, sizes[k], 6);
        weft_tensor_release(r);
        weft_tensor_release(x);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1, "one trace of the outer function");
    cr_assert_eq(weft_function_tracing_count(inner), 1, "fn traced once for every slice");
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

/* Unknown slice dims: fn is traced once for f64[?] and runs on rows of any
 * length. */
Test(map, traced_unknown_slice_dims, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    weft_function *inner = make_fn(rt, "sumsq", body_sumsq, NULL, NULL);
    outer o = {inner, 0};
    weft_spec sig = spec_of("f64[?,?]");
    weft_function *f = make_fn(rt, "outer", body_outer, &o, &sig);
    int64_t shapes[][2] = {{5, 3}, {12, 1}, {2, 9}};
    for (size_t k = 0; k < 3; k++) {
        weft_tensor *x = grid(shapes[k][0], shapes[k][1]), *r = NULL;
        cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
        check_sumsq(r, shapes[k][0], shapes[k][1]);
        weft_tensor_release(r);
        weft_tensor_release(x);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1);
    cr_assert_eq(weft_function_tracing_count(inner), 1, "one trace for f64[?]");
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

Test(map, validation, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function *fn = make_fn(rt, "sumsq", body_sumsq, NULL, NULL);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_tensor *x = grid(3, 2);
    cr_assert_null(weft_map(cx, NULL, weft_eager_value(cx, x), 2));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "weft_map") != NULL, "%s", weft_errmsg());
    weft_eager_end(&cx);

    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_map(cx, fn, weft_const_f64(cx, 2.0), 2));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE, "a scalar has no dim 0: %s", weft_errmsg());
    weft_eager_end(&cx);

    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_map(cx, fn, NULL, 2));
    cr_assert_neq(weft_ctx_status(cx), 0);
    weft_eager_end(&cx);
    cr_assert_null(weft_map(NULL, fn, NULL, 2));
    weft_tensor_release(x);
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
}

/* ---- The parallel_iterations bound, seen from host calls. ---- */

typedef struct flight {
    int in_flight, peak, calls;  /* (atomic) */
    long sleep_us;
    int fail_at;          /* the slice value that fails, or -1 */
} flight;

static int flight_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    flight *f = user;
    double v = *(const double *)weft_tensor_data(in[0]);
    int now = __atomic_fetch_add(&f->in_flight, 1, __ATOMIC_SEQ_CST) + 1;
    int peak = __atomic_load_n(&f->peak, __ATOMIC_SEQ_CST);
    while (now > peak && !__atomic_compare_exchange_n(&f->peak, &peak, now, true, __ATOMIC_SEQ_CST,
                                                      __ATOMIC_SEQ_CST))
        ;
    sleep_us(f->sleep_us);
    __atomic_fetch_sub(&f->in_flight, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&f->calls, 1, __ATOMIC_SEQ_CST);
    if (f->fail_at >= 0 && v == (double)f->fail_at)
        return -3;
    *out = weft_tensor_retain(in[0]);
    return 0;
}

/* slice (f64[]) -> host(slice) * 2. */
static int body_flight(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_spec s = spec_of("f64[]");
    weft_value *h = weft_host_call(cx, flight_cb, user, &args[0], 1, &s, 0);
    outs[0] = weft_mul(cx, h, weft_const_f64(cx, 2.0));
    return 0;
}

static weft_tensor *iota(int64_t n)
{
    double *d = malloc((size_t)(n + 1) * sizeof *d);
    for (int64_t i = 0; i < n; i++)
        d[i] = (double)i;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, d, &t), 0);
    free(d);
    return t;
}

static void check_doubled(weft_tensor *r, int64_t n)
{
    cr_assert_eq(weft_tensor_dims(r)[0], n);
    const double *d = weft_tensor_data(r);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(d[i], 2.0 * (double)i);
}

Test(map, parallel_iterations_bound_eager, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(8);
    flight fl = {.sleep_us = 5000, .fail_at = -1};
    weft_function *fn = make_fn(rt, "flight", body_flight, &fl, NULL);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_tensor *x = iota(24);
    weft_value *v = weft_map(cx, fn, weft_eager_value(cx, x), 3);
    cr_assert_not_null(v, "%s", weft_errmsg());
    check_doubled(weft_value_tensor(v), 24);
    cr_assert_eq(__atomic_load_n(&fl.calls, __ATOMIC_SEQ_CST), 24);
    cr_assert_eq(__atomic_load_n(&fl.peak, __ATOMIC_SEQ_CST), 3,
                 "peak %d, want exactly parallel_iterations",
                 __atomic_load_n(&fl.peak, __ATOMIC_SEQ_CST));
    weft_eager_end(&cx);
    weft_tensor_release(x);
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
}

Test(map, parallel_iterations_bound_traced, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(8);
    flight fl = {.sleep_us = 5000, .fail_at = -1};
    weft_function *inner = make_fn(rt, "flight", body_flight, &fl, NULL);
    outer o = {inner, 3};
    weft_function *f = make_fn(rt, "outer", body_outer, &o, NULL);
    weft_tensor *x = iota(24), *r = NULL;
    for (int rep = 0; rep < 2; rep++) {
        cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
        check_doubled(r, 24);
        weft_tensor_release(r);
    }
    cr_assert_eq(__atomic_load_n(&fl.calls, __ATOMIC_SEQ_CST), 48,
                 "host calls run on every execution");
    cr_assert_eq(__atomic_load_n(&fl.peak, __ATOMIC_SEQ_CST), 3,
                 "peak %d, want exactly parallel_iterations",
                 __atomic_load_n(&fl.peak, __ATOMIC_SEQ_CST));
    cr_assert_eq(weft_function_tracing_count(inner), 1);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

Test(map, error_names_iteration, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    flight fl = {.sleep_us = 0, .fail_at = 7};
    weft_function *inner = make_fn(rt, "flight", body_flight, &fl, NULL);
    weft_tensor *x = iota(20), *r = NULL;

    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_map(cx, inner, weft_eager_value(cx, x), 2));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EHOST, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "weft_map: iteration 7: ") != NULL, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "callback returned -3") != NULL, "%s", weft_errmsg());
    weft_eager_end(&cx);

    outer o = {inner, 2};
    weft_function *f = make_fn(rt, "outer", body_outer, &o, NULL);
    int rc = call1(f, x, &r);
    cr_assert_eq(rc, WEFT_EHOST, "rc %d: %s", rc, weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "iteration 7: ") != NULL, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "callback returned -3") != NULL, "%s", weft_errmsg());
    /* The failure is not sticky: a good input runs after it. */
    fl.fail_at = -1;
    cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
    check_doubled(r, 20);
    weft_tensor_release(r);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

/* ---- A map inside a map: scalar doubling mapped over rows, rows mapped
 * over a grid. ---- */

static int body_double(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], args[0]);
    return 0;
}

Test(map, map_inside_map, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    weft_function *dbl = make_fn(rt, "double", body_double, NULL, NULL);
    outer mid_state = {dbl, 2};
    weft_function *mid = make_fn(rt, "row", body_outer, &mid_state, NULL);
    outer top_state = {mid, 3};
    weft_function *top = make_fn(rt, "grid", body_outer, &top_state, NULL);
    weft_tensor *x = grid(9, 4), *r = NULL;

    cr_assert_eq(call1(top, x, &r), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_rank(r), 2);
    cr_assert_eq(weft_tensor_dims(r)[0], 9);
    cr_assert_eq(weft_tensor_dims(r)[1], 4);
    const double *d = weft_tensor_data(r);
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 4; j++)
            cr_assert_eq(d[i * 4 + j], 2.0 * (i * 10 + j));
    weft_tensor_release(r);

    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_map(cx, mid, weft_eager_value(cx, x), 0);
    cr_assert_not_null(v, "%s", weft_errmsg());
    weft_tensor *e = weft_value_tensor(v);
    const double *ed = weft_tensor_data(e);
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 4; j++)
            cr_assert_eq(ed[i * 4 + j], 2.0 * (i * 10 + j));
    weft_eager_end(&cx);
    cr_assert_eq(weft_function_tracing_count(dbl), 1);
    cr_assert_eq(weft_function_tracing_count(mid), 1);
    weft_tensor_release(x);
    weft_function_destroy(&top);
    weft_function_destroy(&mid);
    weft_function_destroy(&dbl);
    weft_runtime_destroy(&rt);
}

/* ---- Iterations whose results disagree on shape. ---- */

static int shape_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    (void)user;
    double v = *(const double *)weft_tensor_data(in[0]);
    int64_t n = v == 5.0 ? 3 : 2;   /* iteration 5 returns a longer vector */
    return weft_tensor_create(WEFT_F64, 1, &n, NULL, out);
}

static int body_ragged(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_spec s = spec_of("f64[?]");
    outs[0] = weft_host_call(cx, shape_cb, NULL, &args[0], 1, &s, 0);
    return 0;
}

Test(map, ragged_results_fail, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function *fn = make_fn(rt, "ragged", body_ragged, NULL, NULL);
    weft_tensor *x = iota(5);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_map(cx, fn, weft_eager_value(cx, x), 0);
    cr_assert_not_null(v, "equal unknown dims stack: %s", weft_errmsg());
    cr_assert_eq(weft_tensor_dims(weft_value_tensor(v))[0], 5);
    cr_assert_eq(weft_tensor_dims(weft_value_tensor(v))[1], 2);
    weft_eager_end(&cx);
    weft_tensor_release(x);

    x = iota(8);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_map(cx, fn, weft_eager_value(cx, x), 0));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "weft_map: iteration ") != NULL, "%s", weft_errmsg());
    weft_eager_end(&cx);
    weft_tensor_release(x);
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
}

/* Out of memory anywhere in an eager map or a host call fails cleanly:
 * ENOMEM (or the right result when the failed allocation was retried or
 * not on the path), never a crash or a leak (ASan). */
Test(map, allocation_failures, .timeout = 60)
{
    /* Without fault injection every round simply succeeds. */
    weft_runtime *rt = test_runtime(2);
    weft_function *fn = make_fn(rt, "sumsq", body_sumsq, NULL, NULL);
    weft_tensor *x = grid(6, 3);
    /* Trace fn first, so the loop exercises the map itself. */
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_not_null(weft_map(cx, fn, weft_eager_value(cx, x), 2), "%s", weft_errmsg());
    weft_eager_end(&cx);
    int failures = 0;
    for (long k = 1; k <= 80; k++) {
        cr_assert_eq(weft_eager_begin(rt, &cx), 0);
        weft_value *ex = weft_eager_value(cx, x);
        weft__fault_fail_after(k);
        weft_value *v = ex ? weft_map(cx, fn, ex, 2) : NULL;
        bool hit = weft__fault_hit();
        weft__fault_fail_after(-1);
        if (v) {
            check_sumsq(weft_value_tensor(v), 6, 3);
        } else {
            cr_assert(hit, "k=%ld: failed without an injected fault: %s", k, weft_errmsg());
            cr_assert_neq(weft_ctx_status(cx), 0, "k=%ld", k);
            failures++;
        }
        weft_eager_end(&cx);
    }
    weft_tensor_release(x);
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
    if (weft__fault_fail_after(0))
        cr_assert_gt(failures, 0, "some injected faults reached the map");
}

/* ---- Maps whose function makes host calls. ---- */

/* Host calls append their tag here in the order they run; the slot comes
 * from an atomic counter, so concurrent iterations never share one. */
typedef struct tag_log {
    int next;  /* (atomic) */
    char tags[256];
} tag_log;

typedef struct tagger { tag_log *log; char tag; long sleep_us; } tagger;

static int tag_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    tagger *t = user;
    sleep_us(t->sleep_us);
    int at = __atomic_fetch_add(&t->log->next, 1, __ATOMIC_SEQ_CST);
    if (at < (int)sizeof t->log->tags)
        t->log->tags[at] = t->tag;
    if (n_in)
        *out = weft_tensor_retain(in[0]);
    else
        cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, &(double){0}, out), 0);
    return 0;
}

/* slice -> host(slice): the mapped function's only op is a host call. */
static int body_tagged(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_spec s;
    weft_value_spec(args[0], &s);
    outs[0] = weft_host_call(cx, tag_cb, user, &args[0], 1, &s, 0);
    return 0;
}

/* host a; map(inner, x); host c; every result unused but -x. */
typedef struct unused_map { weft_function *inner; tagger a, c; } unused_map;

static int body_unused_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    unused_map *u = user;
    weft_spec s = spec_of("f64[]");
    weft_host_call(cx, tag_cb, &u->a, NULL, 0, &s, 0);
    weft_map(cx, u->inner, args[0], 0);
    weft_host_call(cx, tag_cb, &u->c, NULL, 0, &s, 0);
    outs[0] = weft_neg(cx, args[0]);
    return 0;
}

/* Host calls inside a mapped function run on every execution, as in eager
 * mode, even when the map's result is unused; also when the host call sits
 * in a map inside the mapped function. */
Test(map, host_calls_inside_never_dead_code, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    tag_log log = {0};
    tagger m = {&log, 'm', 0};
    weft_function *inner = make_fn(rt, "tagged", body_tagged, &m, NULL);
    outer mid_state = {inner, 0};
    weft_function *mid = make_fn(rt, "row", body_outer, &mid_state, NULL);
    unused_map u = {inner, {&log, 'a', 0}, {&log, 'c', 0}};
    weft_function *f = make_fn(rt, "unused", body_unused_map, &u, NULL);
    unused_map u2 = {mid, {&log, 'a', 0}, {&log, 'c', 0}};
    weft_function *f2 = make_fn(rt, "unused_nested", body_unused_map, &u2, NULL);

    weft_tensor *x = iota(4), *r = NULL;
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *ev = weft_eager_value(cx, x), *eo = NULL;
    cr_assert_eq(body_unused_map(cx, &ev, &eo, &u), 0);
    cr_assert_eq(weft_ctx_status(cx), 0, "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(__atomic_load_n(&log.next, __ATOMIC_SEQ_CST), 6,
                 "eager: 2 host calls and 4 in the map");

    __atomic_store_n(&log.next, 0, __ATOMIC_SEQ_CST);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
        weft_tensor_release(r);
    }
    cr_assert_eq(__atomic_load_n(&log.next, __ATOMIC_SEQ_CST), 18,
                 "traced: %d host calls in 3 calls, want 18",
                 __atomic_load_n(&log.next, __ATOMIC_SEQ_CST));
    weft_tensor_release(x);

    x = grid(3, 4);
    __atomic_store_n(&log.next, 0, __ATOMIC_SEQ_CST);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(call1(f2, x, &r), 0, "%s", weft_errmsg());
        weft_tensor_release(r);
    }
    cr_assert_eq(__atomic_load_n(&log.next, __ATOMIC_SEQ_CST), 42,
                 "nested: %d host calls in 3 calls, want 42",
                 __atomic_load_n(&log.next, __ATOMIC_SEQ_CST));
    weft_tensor_release(x);
    weft_function_destroy(&f2);
    weft_function_destroy(&f);
    weft_function_destroy(&mid);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

/* A map whose function makes host calls runs in program order with the
 * body's other host calls: after a slow one before it, before the next. */
Test(map, host_calls_inside_keep_program_order, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    tag_log log = {0};
    tagger m = {&log, 'm', 0};
    weft_function *inner = make_fn(rt, "tagged", body_tagged, &m, NULL);
    unused_map u = {inner, {&log, 'a', 20000}, {&log, 'c', 0}};
    weft_function *f = make_fn(rt, "ordered", body_unused_map, &u, NULL);
    weft_tensor *x = iota(4), *r = NULL;
    const int calls = 5;
    for (int k = 0; k < calls; k++) {
        cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
        weft_tensor_release(r);
    }
    cr_assert_eq(__atomic_load_n(&log.next, __ATOMIC_SEQ_CST), 6 * calls);
    for (int i = 0; i < 6 * calls; i++) {
        char want = i % 6 == 0 ? 'a' : i % 6 == 5 ? 'c' : 'm';
        cr_assert_eq(log.tags[i], want, "tags %.*s: host calls ran out of program order",
                     6 * calls, log.tags);
    }
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

/* A map over zero rows gives the shape eager mode gives: the result's
 * unknown dims come from fn resolved for the actual slice spec. */
Test(map, empty_elems_match_eager, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function *inner = make_fn(rt, "double", body_double, NULL, NULL);
    outer o = {inner, 0};
    weft_spec sig = spec_of("f64[?,?]");
    weft_function *f = make_fn(rt, "outer", body_outer, &o, &sig);
    weft_tensor *x = grid(0, 3), *r = NULL;

    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    weft_value *v = weft_map(cx, inner, weft_eager_value(cx, x), 0);
    cr_assert_not_null(v, "%s", weft_errmsg());
    weft_tensor *e = weft_value_tensor(v);
    cr_assert_eq(weft_tensor_rank(e), 2);
    cr_assert_eq(weft_tensor_dims(e)[0], 0);
    cr_assert_eq(weft_tensor_dims(e)[1], 3, "eager: dims [0,%lld]", (long long)weft_tensor_dims(e)[1]);
    weft_eager_end(&cx);

    cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_rank(r), 2);
    cr_assert_eq(weft_tensor_dims(r)[0], 0);
    cr_assert_eq(weft_tensor_dims(r)[1], 3, "compiled: dims [0,%lld], eager [0,3]",
                 (long long)weft_tensor_dims(r)[1]);
    weft_tensor_release(r);
    weft_tensor_release(x);

    /* Rows after the empty call still work. */
    x = grid(2, 5);
    cr_assert_eq(call1(f, x, &r), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_dims(r)[1], 5);
    cr_assert_eq(((const double *)weft_tensor_data(r))[6], 2.0 * 11);
    weft_tensor_release(r);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}

/* weft_map(NULL, ...) reports a NULL context like every other op. */
Test(map, null_context_sets_errmsg, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function *fn = make_fn(rt, "sumsq", body_sumsq, NULL, NULL);
    weft_spec s;
    cr_assert_neq(weft_spec_parse(NULL, &s), 0);   /* leaves another message */
    cr_assert_null(weft_map(NULL, fn, NULL, 2));
    cr_assert(strstr(weft_errmsg(), "weft_map: NULL context") != NULL, "%s", weft_errmsg());
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
}

/* A function map cannot apply is named once in the message, which starts
 * "weft_map: " once (the resolve step's own message said it too). */
Test(map, wrong_arity_message, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = "two";
    d.body = body_double;
    d.n_args = 2;
    d.n_outs = 1;
    weft_function *fn = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &fn), 0, "%s", weft_errmsg());
    weft_tensor *x = iota(4);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_map(cx, fn, weft_eager_value(cx, x), 0));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    weft_eager_end(&cx);
    cr_assert_str_eq(weft_errmsg(), "weft_map: function 'two' takes 2 args and returns 1 outputs; "
                                    "map needs 1 and 1");
    weft_tensor_release(x);
    weft_function_destroy(&fn);
    weft_runtime_destroy(&rt);
}
