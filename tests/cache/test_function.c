/* The trace cache, one thread at a time: the tracing transcript (what
 * traces and what hits), input signatures, relaxed retracing, concrete
 * functions, eager mode, the log sink, the debug API and input validation. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "cache/internal.h"

static weft_runtime *rt;

static void setup(void)
{
    rt = test_runtime(2);
}

static void teardown(void)
{
    weft_runtime_destroy(&rt);
}

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 30);

/* ---- bodies ---- */

typedef struct counter {
    int traces;         /* bumped by the body: at trace time only (atomic) */
    int fail_next;      /* the body fails while this is positive */
} counter;

/* out = 10 * n for a static n. */
static int body_static(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    counter *c = user;
    __atomic_fetch_add(&c->traces, 1, __ATOMIC_SEQ_CST);
    int64_t n;
    int rc = weft_value_static_i64(args[0], &n);
    if (rc)
        return rc;
    outs[0] = weft_mul(cx, weft_const_i64(cx, n), weft_const_i64(cx, 10));
    return 0;
}

/* out = x * x + 1 (an f64 constant: the result is f64). */
static int body_square(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    counter *c = user;
    __atomic_fetch_add(&c->traces, 1, __ATOMIC_SEQ_CST);
    if (c->fail_next > 0) {
        c->fail_next--;
        return WEFT_EBODY;
    }
    weft_value *x = args[0];
    outs[0] = weft_add(cx, weft_mul(cx, x, x), weft_const_f64(cx, 1.0));
    return 0;
}

/* out = x + x. */
static int body_double(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    counter *c = user;
    __atomic_fetch_add(&c->traces, 1, __ATOMIC_SEQ_CST);
    outs[0] = weft_add(cx, args[0], args[0]);
    return 0;
}

static weft_function *make(weft_body_fn body, counter *c, size_t n_args, const weft_spec *sig,
                           unsigned flags, size_t max_cached)
{
    weft_function_desc d = { .name = "f", .body = body, .user = c, .n_args = n_args,
                             .n_outs = 1, .input_signature = sig, .flags = flags,
                             .max_cached = max_cached };
    weft_function *f = NULL;
    int rc = weft_function_create(rt, &d, &f);
    cr_assert_eq(rc, 0, "weft_function_create: %s", weft_errmsg());
    return f;
}

static weft_tensor *vec_f32(int64_t n, float base)
{
    float *data = calloc((size_t)n + 1, sizeof *data);
    for (int64_t i = 0; i < n; i++)
        data[i] = base + (float)i;
    weft_tensor *t = NULL;
    int rc = weft_tensor_create(WEFT_F32, 1, &n, data, &t);
    free(data);
    cr_assert_eq(rc, 0, "weft_tensor_create: %s", weft_errmsg());
    return t;
}

static double elem(const weft_tensor *t, int64_t i)
{
    const void *p = weft_tensor_data(t);
    switch (weft_tensor_dtype(t)) {
    case WEFT_I32: return ((const int32_t *)p)[i];
    case WEFT_I64: return (double)((const int64_t *)p)[i];
    case WEFT_F32: return ((const float *)p)[i];
    case WEFT_F64: return ((const double *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static double call_static(weft_function *f, int64_t n)
{
    weft_arg a = weft_arg_i64(n);
    weft_tensor *out = NULL;
    int rc = weft_function_call(f, &a, 1, &out, 1);
    cr_assert_eq(rc, 0, "call(%lld): %s", (long long)n, weft_errmsg());
    double v = elem(out, 0);
    weft_tensor_release(out);
    return v;
}

/* Calls body_square on a length-n vector and checks every element. */
static void call_square(weft_function *f, int64_t n)
{
    weft_tensor *x = vec_f32(n, 1.0f), *out = NULL;
    weft_arg a = weft_arg_tensor(x);
    int rc = weft_function_call(f, &a, 1, &out, 1);
    cr_assert_eq(rc, 0, "call(f32[%lld]): %s", (long long)n, weft_errmsg());
    cr_assert_eq(weft_tensor_rank(out), 1);
    cr_assert_eq(weft_tensor_dims(out)[0], n);
    for (int64_t i = 0; i < n; i++) {
        double xi = 1.0 + (double)i;
        cr_assert_float_eq(elem(out, i), xi * xi + 1.0, 1e-6, "elem %lld", (long long)i);
    }
    weft_tensor_release(out);
    weft_tensor_release(x);
}

/* ---- the transcript ---- */

Test(cache, static_scalars_trace_per_value)
{
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    cr_assert_eq(call_static(f, 1), 10);
    cr_assert_eq(call_static(f, 2), 20);
    cr_assert_eq(call_static(f, 3), 30);
    cr_assert_eq(call_static(f, 3), 30);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3);
    cr_assert_eq(weft_function_tracing_count(f), 3);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.calls, 4);
    cr_assert_eq(st.hits, 1);
    cr_assert_eq(st.misses, 3);
    cr_assert_eq(st.cached, 3);
    cr_assert_eq(st.evictions, 0);
    weft_retrace r;
    cr_assert_eq(weft_function_last_retrace(f, &r), 0);
    cr_assert_eq(r.arg, 0);
    cr_assert_eq(r.dim, -1);
    cr_assert(strstr(r.reason, "i64=3") && strstr(r.reason, "i64=2"), "%s", r.reason);
    weft_function_destroy(&f);
    cr_assert_null(f);
}

Test(cache, input_signature_converts_static_scalars)
{
    counter c = { 0 };
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("i32[]", &sig), 0);
    weft_function *f = make(body_double, &c, 1, &sig, 0, 0);
    for (int64_t n = 1; n <= 4; n++) {
        weft_arg a = weft_arg_i64(n);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dtype(out), WEFT_I32);
        cr_assert_eq(weft_tensor_rank(out), 0);
        cr_assert_eq(elem(out, 0), 2.0 * (double)n);
        weft_tensor_release(out);
    }
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1);
    cr_assert_eq(weft_function_tracing_count(f), 1);
    /* 2^40 is no i32. */
    weft_arg big = weft_arg_i64((int64_t)1 << 40);
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, &big, 1, &out, 1), WEFT_ESIGNATURE);
    cr_assert_null(out);
    weft_function_destroy(&f);
}

Test(cache, side_effects_at_trace_time_only)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 0);
    for (int i = 0; i < 5; i++)
        call_square(f, 3);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1, "the body ran %d times",
                 __atomic_load_n(&c.traces, __ATOMIC_SEQ_CST));
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.calls, 5);
    cr_assert_eq(st.hits, 4);
    weft_function_destroy(&f);
}

Test(cache, shapes_retrace_and_explain)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 0);
    weft_retrace r;
    cr_assert_eq(weft_function_last_retrace(f, &r), 0);
    cr_assert_eq(r.arg, -1);
    call_square(f, 3);
    cr_assert_eq(weft_function_last_retrace(f, &r), 0);
    cr_assert_eq(r.arg, -1);
    cr_assert_eq(r.dim, -1);
    cr_assert(strstr(r.reason, "first"), "%s", r.reason);
    call_square(f, 3);
    call_square(f, 4);
    call_square(f, 4);
    call_square(f, 3);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);
    cr_assert_eq(weft_function_tracing_count(f), 2);
    cr_assert_eq(weft_function_last_retrace(f, &r), 0);
    cr_assert_eq(r.arg, 0);
    cr_assert_eq(r.dim, 0);
    cr_assert_str_eq(r.reason, "arg 0: shape f32[4] does not match cached f32[3] (dim 0: 4 vs 3)");
    weft_function_destroy(&f);
}

Test(cache, reduce_retracing_relaxes_dims)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, WEFT_REDUCE_RETRACING, 0);
    call_square(f, 3);
    call_square(f, 4);
    call_square(f, 5);
    call_square(f, 9);
    call_square(f, 3);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);
    cr_assert_eq(weft_function_tracing_count(f), 2);
    weft_retrace r;
    weft_function_last_retrace(f, &r);
    cr_assert_eq(r.arg, 0);
    cr_assert_eq(r.dim, 0);
    cr_assert(strstr(r.reason, "f32[?]"), "%s", r.reason);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.hits, 3);
    weft_function_destroy(&f);
}

Test(cache, signature_mismatch_names_the_argument)
{
    counter c = { 0 };
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[?,3]", &sig), 0);
    weft_function *f = make(body_double, &c, 1, &sig, 0, 0);
    int64_t dims[2] = { 4, 2 };
    weft_tensor *x = NULL, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, NULL, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_ESIGNATURE);
    cr_assert_str_eq(weft_errmsg(), "weft_function_call(f): arg 0: expected f32[?,3], got f32[4,2]");
    weft_tensor_release(x);
    /* A dtype mismatch, and a static scalar against a matrix spec. */
    dims[1] = 3;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, dims, NULL, &x), 0);
    a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_ESIGNATURE);
    cr_assert(strstr(weft_errmsg(), "got f64[4,3]"), "%s", weft_errmsg());
    weft_tensor_release(x);
    a = weft_arg_f64(2.5);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_ESIGNATURE);
    cr_assert(strstr(weft_errmsg(), "arg 0: expected f32[?,3], got static f64 2.5"), "%s",
              weft_errmsg());
    /* Matching calls of any length share one trace. */
    for (int64_t n = 1; n <= 3; n++) {
        dims[0] = n;
        cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, NULL, &x), 0);
        a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dims(out)[0], n);
        weft_tensor_release(out);
        weft_tensor_release(x);
    }
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1);
    weft_function_destroy(&f);
}

Test(cache, forced_hash_collision_keeps_signatures_apart)
{
    weft__cache_force_hash(42);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    for (int round = 0; round < 3; round++)
        for (int64_t n = 1; n <= 5; n++)
            cr_assert_eq(call_static(f, n), 10.0 * (double)n, "round %d n %lld", round, (long long)n);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 5);
    /* Tensors collide with the scalars too. */
    counter c2 = { 0 };
    weft_function *g = make(body_square, &c2, 1, NULL, 0, 0);
    for (int round = 0; round < 2; round++)
        for (int64_t n = 1; n <= 4; n++)
            call_square(g, n);
    cr_assert_eq(__atomic_load_n(&c2.traces, __ATOMIC_SEQ_CST), 4);
    weft_function_destroy(&g);
    weft_function_destroy(&f);
    weft__cache_force_hash(0);
}

Test(cache, get_concrete_then_concrete_call)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 1);
    weft_spec spec;
    cr_assert_eq(weft_spec_parse("f32[?]", &spec), 0);
    weft_concrete *k = NULL;
    cr_assert_eq(weft_function_get_concrete(f, &spec, 1, &k), 0, "%s", weft_errmsg());
    cr_assert_not_null(k);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1);
    for (int64_t n = 1; n <= 4; n++) {
        weft_tensor *x = vec_f32(n, 2.0f), *out = NULL;
        cr_assert_eq(weft_concrete_call(k, &x, 1, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dims(out)[0], n);
        cr_assert_float_eq(elem(out, n - 1), (1.0 + (double)n) * (1.0 + (double)n) + 1.0, 1e-6);
        weft_tensor_release(out);
        weft_tensor_release(x);
    }
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1);
    /* The same specs again: the same concrete function, no trace. */
    weft_concrete *k2 = NULL;
    cr_assert_eq(weft_function_get_concrete(f, &spec, 1, &k2), 0);
    cr_assert_eq(k2, k);
    /* Calls of the function find the relaxed entry; with max_cached 1 a new
     * signature would evict, but the pinned entry stays. */
    call_square(f, 6);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1);
    weft_spec other;
    cr_assert_eq(weft_spec_parse("f64[2]", &other), 0);
    weft_concrete *k3 = NULL;
    cr_assert_eq(weft_function_get_concrete(f, &other, 1, &k3), 0, "%s", weft_errmsg());
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);
    weft_tensor *x = vec_f32(3, 0.0f), *out = NULL;
    cr_assert_eq(weft_concrete_call(k, &x, 1, &out, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(out);
    out = NULL;
    cr_assert_eq(weft_concrete_call(k3, &x, 1, &out, 1), WEFT_ESIGNATURE);
    cr_assert_str_eq(weft_errmsg(), "weft_concrete_call(f): arg 0: expected f64[2], got f32[3]");
    cr_assert_null(out);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

Test(cache, run_eagerly_runs_the_body_every_call)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, WEFT_RUN_EAGERLY, 0);
    for (int i = 0; i < 4; i++)
        call_square(f, 3);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 4);
    cr_assert_eq(weft_function_tracing_count(f), 0);
    weft_function_destroy(&f);
}

Test(cache, run_eagerly_from_the_environment)
{
    setenv("WEFT_RUN_EAGERLY", "1", 1);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    unsetenv("WEFT_RUN_EAGERLY");
    cr_assert_eq(call_static(f, 2), 20);
    cr_assert_eq(call_static(f, 2), 20);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);
    cr_assert_eq(weft_function_tracing_count(f), 0);
    weft_function_destroy(&f);
}

typedef struct log_seen {
    int warns, infos;
    char last[4096];
} log_seen;

static void log_cb(int level, const char *msg, void *user)
{
    log_seen *s = user;
    if (level == WEFT_LOG_WARN) {
        s->warns++;
        snprintf(s->last, sizeof s->last, "%s", msg);
    } else if (level == WEFT_LOG_INFO) {
        s->infos++;
    }
}

Test(cache, frequent_retracing_warns_once)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    for (int64_t n = 1; n <= 4; n++)
        call_static(f, n);
    cr_assert_eq(seen.warns, 0);
    call_static(f, 5);
    cr_assert_eq(seen.warns, 1);
    cr_assert(strstr(seen.last, "'f'") && strstr(seen.last, "static value i64=5"), "%s", seen.last);
    for (int64_t n = 6; n <= 12; n++)
        call_static(f, n);
    cr_assert_eq(seen.warns, 1);
    cr_assert_eq(seen.infos, 0);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

/* The warning counts the calls its five traces actually spanned (as
 * TensorFlow's "5 out of the last 5 calls"): traces at calls 1, 3, 5, 7
 * and 9 are five in the last 9 calls. */
Test(cache, frequent_retracing_warning_counts_the_calls)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    for (int64_t n = 1; n <= 5; n++) {
        call_static(f, n);
        if (n < 5)
            call_static(f, n);
    }
    cr_assert_eq(seen.warns, 1);
    cr_assert(strstr(seen.last, "traced 5 times in its last 9 calls"), "%s", seen.last);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

/* Traces without calls (get_concrete) are not "5 traces in the last 10
 * calls": no warning, however many signatures it traces. */
Test(cache, get_concrete_traces_do_not_warn)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 0);
    for (int64_t n = 1; n <= 8; n++) {
        weft_spec s = { .dtype = WEFT_F64, .rank = 1, .dims = { n } };
        weft_concrete *k = NULL;
        cr_assert_eq(weft_function_get_concrete(f, &s, 1, &k), 0, "%s", weft_errmsg());
    }
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 8);
    cr_assert_eq(seen.warns, 0, "warned after 0 calls: %s", seen.last);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

/* A sink may call weft, weft_set_log included: this one removes itself
 * at its first warning (it once deadlocked on the sink's lock). */
static log_seen *once_seen;

static void once_cb(int level, const char *msg, void *user)
{
    log_cb(level, msg, user);
    weft_set_log(NULL, NULL);
    once_seen = user;
}

Test(cache, a_sink_may_remove_itself)
{
    log_seen seen = { 0 };
    weft_set_log(once_cb, &seen);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    for (int64_t n = 1; n <= 5; n++)
        call_static(f, n);
    cr_assert_eq(seen.warns, 1);
    cr_assert_eq(once_seen, &seen);
    weft_function *g = make(body_static, &c, 1, NULL, 0, 0);
    weft_set_log(log_cb, &seen);
    for (int64_t n = 1; n <= 5; n++)
        call_static(g, n);
    cr_assert_eq(seen.warns, 2, "the sink installed after the removal is called");
    weft_function_destroy(&g);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

/* weft_set_log returns only once no thread runs the old sink: its data
 * may then be freed.  The sink here blocks in its first call until
 * released; a replacement made meanwhile must wait for it. */
typedef struct blocking_sink {
    int entered, release, replaced;  /* (atomic) */
    weft_function *f;
} blocking_sink;

static void blocking_cb(int level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    blocking_sink *b = user;
    if (__atomic_fetch_add(&b->entered, 1, __ATOMIC_SEQ_CST) == 0)
        while (!__atomic_load_n(&b->release, __ATOMIC_SEQ_CST))
            usleep(1000);
}

static void *retrace_five(void *p)
{
    blocking_sink *b = p;
    for (int64_t n = 1; n <= 5; n++)
        call_static(b->f, n);
    return NULL;
}

static void *replace_sink(void *p)
{
    blocking_sink *b = p;
    weft_set_log(NULL, NULL);
    __atomic_store_n(&b->replaced, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

Test(cache, set_log_waits_for_the_running_sink)
{
    blocking_sink b = { 0 };
    counter c = { 0 };
    b.f = make(body_static, &c, 1, NULL, 0, 0);
    weft_set_log(blocking_cb, &b);
    pthread_t caller, replacer;
    cr_assert_eq(pthread_create(&caller, NULL, retrace_five, &b), 0);
    while (!__atomic_load_n(&b.entered, __ATOMIC_SEQ_CST))
        usleep(1000);
    cr_assert_eq(pthread_create(&replacer, NULL, replace_sink, &b), 0);
    usleep(50000);
    cr_assert_eq(__atomic_load_n(&b.replaced, __ATOMIC_SEQ_CST), 0,
                 "weft_set_log returned while the old sink ran");
    __atomic_store_n(&b.release, 1, __ATOMIC_SEQ_CST);
    pthread_join(replacer, NULL);
    pthread_join(caller, NULL);
    cr_assert_eq(__atomic_load_n(&b.replaced, __ATOMIC_SEQ_CST), 1);
    cr_assert_eq(__atomic_load_n(&b.entered, __ATOMIC_SEQ_CST), 1);
    weft_function_destroy(&b.f);
}

Test(cache, retracing_spread_out_does_not_warn)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    /* A new value every third call: 4 traces in any 10 calls. */
    for (int64_t n = 1; n <= 8; n++)
        for (int k = 0; k < 3; k++)
            call_static(f, n);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 8);
    cr_assert_eq(seen.warns, 0);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

Test(cache, weft_log_retrace_logs_every_trace)
{
    setenv("WEFT_LOG", "retrace", 1);
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    counter c = { 0 };
    weft_function *f = make(body_static, &c, 1, NULL, 0, 0);
    unsetenv("WEFT_LOG");
    call_static(f, 1);
    call_static(f, 1);
    call_static(f, 2);
    cr_assert_eq(seen.infos, 2);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

Test(cache, a_failed_trace_is_not_cached)
{
    counter c = { .fail_next = 1 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 0);
    weft_tensor *x = vec_f32(3, 1.0f), *out = NULL;
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_EBODY);
    cr_assert_null(out);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 0);
    call_square(f, 3);
    call_square(f, 3);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

Test(cache, print_signatures_and_ops)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 0);
    call_square(f, 3);
    call_square(f, 3);
    call_square(f, 5);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_eq(weft_function_print_signatures(f, m), 0);
    fclose(m);
    cr_assert(strstr(buf, "0: (a0: f32[3]) calls=2 ops="), "%s", buf);
    cr_assert(strstr(buf, "1: (a0: f32[5]) calls=1 ops="), "%s", buf);
    free(buf);
    buf = NULL;
    m = open_memstream(&buf, &len);
    cr_assert_eq(weft_function_print_ops(f, 1, m), 0, "%s", weft_errmsg());
    fclose(m);
    cr_assert_gt(len, 0);
    free(buf);
    cr_assert_eq(weft_function_print_ops(f, 2, stdout), WEFT_EINVAL);
    cr_assert_eq(weft_function_print_signatures(NULL, stdout), WEFT_EINVAL);
    cr_assert_eq(weft_function_print_signatures(f, NULL), WEFT_EINVAL);
    weft_function_destroy(&f);
}

Test(cache, lru_eviction)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 2);
    call_square(f, 1);
    call_square(f, 2);
    call_square(f, 1);   /* 2 is now the least recently used */
    call_square(f, 3);   /* evicts 2 */
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.evictions, 1);
    cr_assert_eq(st.cached, 2);
    call_square(f, 1);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3);
    call_square(f, 2);   /* traces again */
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 4);
    weft_function_destroy(&f);
}

Test(cache, invalid_input)
{
    counter c = { 0 };
    weft_function *f = NULL;
    weft_function_desc d = { .body = body_square, .user = &c, .n_args = 1, .n_outs = 1 };
    cr_assert_eq(weft_function_create(NULL, &d, &f), WEFT_EINVAL);
    cr_assert_eq(weft_function_create(rt, NULL, &f), WEFT_EINVAL);
    cr_assert_eq(weft_function_create(rt, &d, NULL), WEFT_EINVAL);
    d.body = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "body"), "%s", weft_errmsg());
    d.body = body_square;
    weft_spec bad = { .dtype = WEFT_F32, .rank = 9 };
    d.input_signature = &bad;
    cr_assert_eq(weft_function_create(rt, &d, &f), WEFT_EINVAL);
    cr_assert_null(f);
    d.input_signature = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);

    weft_tensor *x = vec_f32(2, 0.0f), *out = NULL;
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(NULL, &a, 1, &out, 1), WEFT_EINVAL);
    cr_assert_eq(weft_function_call(f, NULL, 1, &out, 1), WEFT_EINVAL);
    cr_assert_eq(weft_function_call(f, &a, 2, &out, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "2 args, expected 1"), "%s", weft_errmsg());
    cr_assert_eq(weft_function_call(f, &a, 1, NULL, 1), WEFT_EINVAL);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 2), WEFT_EINVAL);
    weft_arg bad_kind = { .kind = (weft_arg_kind)7 };
    cr_assert_eq(weft_function_call(f, &bad_kind, 1, &out, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "unknown kind"), "%s", weft_errmsg());
    weft_arg null_t = weft_arg_tensor(NULL);
    cr_assert_eq(weft_function_call(f, &null_t, 1, &out, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "arg 0: tensor is NULL"), "%s", weft_errmsg());

    weft_concrete *k = NULL;
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { -5 } };
    cr_assert_eq(weft_function_get_concrete(NULL, &s, 1, &k), WEFT_EINVAL);
    cr_assert_eq(weft_function_get_concrete(f, NULL, 1, &k), WEFT_EINVAL);
    cr_assert_eq(weft_function_get_concrete(f, &s, 1, NULL), WEFT_EINVAL);
    cr_assert_eq(weft_function_get_concrete(f, &s, 1, &k), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "negative"), "%s", weft_errmsg());
    cr_assert_eq(weft_concrete_call(NULL, &x, 1, &out, 1), WEFT_EINVAL);
    s.dims[0] = 2;
    cr_assert_eq(weft_function_get_concrete(f, &s, 1, &k), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_concrete_call(k, NULL, 1, &out, 1), WEFT_EINVAL);
    cr_assert_eq(weft_concrete_call(k, &x, 1, NULL, 1), WEFT_EINVAL);
    weft_tensor *nul = NULL;
    cr_assert_eq(weft_concrete_call(k, &nul, 1, &out, 1), WEFT_EINVAL);
    cr_assert_null(out);
    cr_assert_eq(weft_function_last_retrace(NULL, &(weft_retrace){ 0 }), WEFT_EINVAL);
    cr_assert_eq(weft_function_tracing_count(NULL), 0);
    weft_function_stats st;
    weft_function_get_stats(NULL, &st);
    cr_assert_eq(st.calls, 0);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&f);
    weft_function_destroy(NULL);
}

/* ---- the callee interface ---- */

Test(cache, callee_resolve_invoke_release)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 1);
    const weft__callee *cal = weft__callee_of(f);
    weft_spec spec, out_spec;
    cr_assert_eq(weft_spec_parse("f32[4]", &spec), 0);
    void *k = NULL;
    cr_assert_eq(cal->ops->resolve(f, &spec, &k, &out_spec), 0, "%s", weft_errmsg());
    cr_assert_eq(out_spec.dtype, WEFT_F32);  /* f32 * f32 + a weak f64 constant stays f32 */
    cr_assert_eq(out_spec.rank, 1);
    /* Evicting the resolved entry (max_cached 1) must keep it usable. */
    call_square(f, 7);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.evictions, 1);
    weft_tensor *x = vec_f32(4, 1.0f), *out = NULL;
    cr_assert_eq(cal->ops->invoke(k, x, &out), 0, "%s", weft_errmsg());
    cr_assert_float_eq(elem(out, 3), 17.0, 1e-6);
    weft_tensor_release(out);
    weft_tensor_release(x);
    cal->ops->release(k);

    counter c2 = { 0 };
    weft_function *g = make(body_static, &c2, 2, NULL, 0, 0);
    cr_assert_eq(weft__callee_of(g)->ops->resolve(g, &spec, &k, &out_spec), WEFT_EINVAL);
    weft_function_destroy(&g);
    weft_function_destroy(&f);
}

/* What weft_function_print_signatures prints (the caller frees it). */
static char *signatures(weft_function *f)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_eq(weft_function_print_signatures(f, m), 0, "%s", weft_errmsg());
    fclose(m);
    return buf;
}

/* get_concrete looks an entry up (holding a reference, as resolve does)
 * and then pins it; another thread's trace may evict it in between.  The
 * pinned concrete function must still be listed and counted like any other
 * (back in the table, or after it when its signature was traced again). */
Test(cache, a_concrete_function_evicted_before_its_pin_stays_listed)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 1);
    const weft__callee_ops *ops = weft__callee_of(f)->ops;
    weft_spec spec, out_spec;
    void *k = NULL, *k2 = NULL;
    cr_assert_eq(weft_spec_parse("f32[4]", &spec), 0);
    cr_assert_eq(ops->resolve(f, &spec, &k, &out_spec), 0, "%s", weft_errmsg());
    call_square(f, 7);   /* evicts f32[4] before its pin */
    weft__cache_pin(k);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 2);
    cr_assert_eq(st.evictions, 0, "a pinned entry counts as evicted");
    char *buf = signatures(f);
    cr_assert(strstr(buf, ": (a0: f32[4]) pinned calls=0"), "%s", buf);
    free(buf);
    call_square(f, 4);   /* found again: no trace */
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);

    /* Evicted, then traced again by a call, then pinned: two concrete
     * functions of one signature, both listed. */
    cr_assert_eq(weft_spec_parse("f32[5]", &spec), 0);
    cr_assert_eq(ops->resolve(f, &spec, &k2, &out_spec), 0, "%s", weft_errmsg());
    call_square(f, 8);   /* evicts f32[5] */
    call_square(f, 5);   /* traces it again, evicts f32[8] */
    weft__cache_pin(k2);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 5);
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 3);
    cr_assert_eq(st.evictions, 2);
    cr_assert_eq(st.traces, st.cached + st.evictions);
    buf = signatures(f);
    cr_assert(strstr(buf, "1: (a0: f32[5]) calls=1"), "%s", buf);
    cr_assert(strstr(buf, "2: (a0: f32[5]) pinned calls=0"), "%s", buf);
    free(buf);
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_eq(weft_function_print_ops(f, 2, m), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_function_print_ops(f, 3, m), WEFT_EINVAL);
    fclose(m);
    cr_assert(strstr(buf, "arg 0 : f32[5]"), "%s", buf);
    free(buf);
    weft_tensor *x = vec_f32(5, 1.0f), *out = NULL;
    cr_assert_eq(weft_concrete_call(k2, &x, 1, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_float_eq(elem(out, 4), 26.0, 1e-6);
    weft_tensor_release(out);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

/* Pinned concrete functions count toward max_cached: the unpinned ones
 * share what room is left, and the one just traced always stays. */
Test(cache, pinned_concrete_functions_count_toward_max_cached)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 2);
    weft_spec spec;
    weft_concrete *k = NULL;
    cr_assert_eq(weft_spec_parse("f32[1]", &spec), 0);
    cr_assert_eq(weft_function_get_concrete(f, &spec, 1, &k), 0, "%s", weft_errmsg());
    for (int64_t n = 2; n <= 4; n++)
        call_square(f, n);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 2, "pinned f32[1] and the newest, f32[4]");
    cr_assert_eq(st.evictions, 2);
    char *buf = signatures(f);
    cr_assert(strstr(buf, "(a0: f32[1]) pinned"), "%s", buf);
    cr_assert(strstr(buf, "(a0: f32[4])"), "%s", buf);
    free(buf);

    /* The pinned ones alone fill the bound: only they and the newest. */
    const char *more[] = { "f32[5]", "f32[6]" };
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(weft_spec_parse(more[i], &spec), 0);
        cr_assert_eq(weft_function_get_concrete(f, &spec, 1, &k), 0, "%s", weft_errmsg());
    }
    call_square(f, 7);
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 4, "3 pinned and f32[7]");
    cr_assert_eq(st.evictions, 3);
    cr_assert_eq(st.traces, 7);
    weft_function_destroy(&f);
}

/* A pin that undoes an eviction (see above) brings its entry back into
 * the bound: the pin makes room as a trace does, and an entry on
 * f->orphans counts toward later traces' bound like a pinned one in the
 * table.  With one pinned entry, cached never exceeds max_cached. */
Test(cache, a_pin_that_undoes_an_eviction_keeps_max_cached, .timeout = 30)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 2);
    const weft__callee_ops *ops = weft__callee_of(f)->ops;
    weft_spec spec, out_spec;
    void *k = NULL;
    cr_assert_eq(weft_spec_parse("f32[4]", &spec), 0);
    cr_assert_eq(ops->resolve(f, &spec, &k, &out_spec), 0, "%s", weft_errmsg());
    call_square(f, 5);
    call_square(f, 6);   /* evicts f32[4] before its pin */
    weft__cache_pin(k);  /* back into the table: f32[5] makes room */
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 2, "one pinned, max_cached 2: %llu cached",
                 (unsigned long long)st.cached);
    cr_assert_eq(st.evictions, 1);
    char *buf = signatures(f);
    cr_assert(strstr(buf, "(a0: f32[4]) pinned"), "%s", buf);
    cr_assert(strstr(buf, "(a0: f32[6]) calls=1"), "%s", buf);
    cr_assert(!strstr(buf, "f32[5]"), "%s", buf);
    free(buf);
    call_square(f, 6);   /* still cached */
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3);
    weft_function_destroy(&f);

    /* The same through f->orphans: the signature is traced again before
     * the pin. */
    counter c2 = { 0 };
    f = make(body_square, &c2, 1, NULL, 0, 3);
    ops = weft__callee_of(f)->ops;
    cr_assert_eq(weft_spec_parse("f32[1]", &spec), 0);
    cr_assert_eq(ops->resolve(f, &spec, &k, &out_spec), 0, "%s", weft_errmsg());
    for (int64_t n = 2; n <= 4; n++)
        call_square(f, n);   /* f32[4] evicts f32[1] */
    call_square(f, 1);       /* traces it again, evicts f32[2] */
    weft__cache_pin(k);      /* onto f->orphans: f32[3] makes room */
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 3, "one pinned, max_cached 3: %llu cached",
                 (unsigned long long)st.cached);
    cr_assert_eq(st.evictions, 2);
    call_square(f, 5);       /* evicts f32[4]: the orphan counts */
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.cached, 3, "one pinned, max_cached 3: %llu cached",
                 (unsigned long long)st.cached);
    cr_assert_eq(st.evictions, 3);
    cr_assert_eq(st.traces, st.cached + st.evictions);
    buf = signatures(f);
    cr_assert(strstr(buf, "0: (a0: f32[1]) calls=1"), "%s", buf);
    cr_assert(strstr(buf, "1: (a0: f32[5]) calls=1"), "%s", buf);
    cr_assert(strstr(buf, "2: (a0: f32[1]) pinned calls=0"), "%s", buf);
    cr_assert(!strstr(buf, "f32[4]"), "%s", buf);
    free(buf);
    weft_function_destroy(&f);
}

/* ---- map reaches a function through the callee interface ---- */

typedef struct outer {
    weft_function *inner;
    int traces;  /* (atomic) */
} outer;

static int body_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    outer *o = user;
    __atomic_fetch_add(&o->traces, 1, __ATOMIC_SEQ_CST);
    outs[0] = weft_map(cx, o->inner, args[0], 0);
    return 0;
}

/* A function whose body maps o->inner over its argument's first axis. */
static weft_function *make_outer(outer *o)
{
    weft_function_desc d = { .name = "outer", .body = body_map, .user = o, .n_args = 1,
                             .n_outs = 1 };
    weft_function *g = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &g), 0, "%s", weft_errmsg());
    return g;
}

Test(cache, map_calls_a_cached_function)
{
    counter c = { 0 };
    weft_function *inner = make(body_square, &c, 1, NULL, 0, 0);
    outer o = { .inner = inner };
    weft_function *g = make_outer(&o);
    int64_t dims[2] = { 4, 3 };
    float data[12];
    for (int i = 0; i < 12; i++)
        data[i] = (float)i;
    weft_tensor *x = NULL, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, data, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    for (int round = 0; round < 3; round++) {
        cr_assert_eq(weft_function_call(g, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_rank(out), 2);
        for (int i = 0; i < 12; i++)
            cr_assert_float_eq(elem(out, i), (double)i * i + 1.0, 1e-6, "elem %d", i);
        weft_tensor_release(out);
        out = NULL;
    }
    cr_assert_eq(__atomic_load_n(&o.traces, __ATOMIC_SEQ_CST), 1);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 1,
                 "the mapped function traced %d times",
                 __atomic_load_n(&c.traces, __ATOMIC_SEQ_CST));
    weft_tensor_release(x);
    weft_function_destroy(&g);
    weft_function_destroy(&inner);
}

/* Map iterations use their callee's concrete function as calls do: with
 * max_cached 2, the signature a traced map runs on every call outlives one
 * called once, instead of being evicted as the least recently used. */
Test(cache, map_iterations_keep_their_callee_recently_used)
{
    counter c = { 0 };
    weft_function *inner = make(body_square, &c, 1, NULL, 0, 2);
    outer o = { .inner = inner };
    weft_function *g = make_outer(&o);
    weft_tensor *x = NULL, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, (int64_t[]){ 4, 3 }, NULL, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(g, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(out);
    call_square(inner, 5);
    for (int round = 0; round < 3; round++) {  /* f32[3] runs 12 times */
        cr_assert_eq(weft_function_call(g, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        weft_tensor_release(out);
    }
    call_square(inner, 7);   /* evicts f32[5], the least recently used */
    weft_function_stats st;
    weft_function_get_stats(inner, &st);
    cr_assert_eq(st.evictions, 1);
    cr_assert_eq(st.cached, 2);
    call_square(inner, 3);   /* the map's signature: still cached */
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3, "f32[3] was evicted: %d traces",
                 __atomic_load_n(&c.traces, __ATOMIC_SEQ_CST));
    call_square(inner, 5);   /* traces again */
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 4);
    weft_retrace why;
    cr_assert_eq(weft_function_last_retrace(inner, &why), 0);
    cr_assert(strstr(why.reason, "shape f32[5]"), "%s", why.reason);
    weft_tensor_release(x);
    weft_function_destroy(&g);
    weft_function_destroy(&inner);
}

/* ---- every allocation failure is reported, never a crash or a leak ---- */

Test(cache, allocation_failures)
{
    bool done = false;
    for (long n = 1; n < 400 && !done; n++) {
        counter c = { 0 };
        weft_function_desc d = { .name = "f", .body = body_double, .user = &c, .n_args = 1,
                                 .n_outs = 1, .max_cached = 1 };
        weft_tensor *x = vec_f32(3, 1.0f), *y = vec_f32(4, 1.0f), *out = NULL;
        weft_function *f = NULL;
        weft__fault_fail_after(n);
        int rc = weft_function_create(rt, &d, &f);
        for (int i = 0; i < 3 && rc == 0; i++) {
            weft_arg a = weft_arg_tensor(i == 1 ? y : x);
            rc = weft_function_call(f, &a, 1, &out, 1);
            weft_tensor_release(out);
            out = NULL;
        }
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        if (!hit) {
            cr_assert_eq(rc, 0, "n=%ld: %s", n, weft_errmsg());
            done = true;
        } else if (rc) {
            cr_assert_neq(weft_errmsg()[0], '\0');
        }
        /* Whatever failed, the function still works afterwards. */
        if (f) {
            weft_arg a = weft_arg_tensor(x);
            cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "n=%ld: %s", n, weft_errmsg());
            weft_tensor_release(out);
        }
        weft_function_destroy(&f);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    cr_assert(done, "still failing after 400 allocations");
}

/* More arguments than the call path keeps on its stack. */
Test(cache, many_arguments)
{
    enum { N = 20 };
    counter c = { 0 };
    weft_function *f = make(body_static, &c, N, NULL, 0, 0);
    weft_arg args[N];
    for (int i = 0; i < N; i++)
        args[i] = weft_arg_i64(i == 0 ? 4 : i);
    for (int round = 0; round < 3; round++) {
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, args, N, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(elem(out, 0), 40.0);
        weft_tensor_release(out);
    }
    args[N - 1] = weft_arg_i64(99);
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, args, N, &out, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(out);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 2);
    weft_retrace r;
    weft_function_last_retrace(f, &r);
    cr_assert_eq(r.arg, N - 1);
    weft_function_destroy(&f);
}

/* ---- the hit path ---- */

/* Call arguments encode to the same key bytes as the trace arguments a
 * miss builds from them (so a hit finds what a miss inserted). */
Test(cache, encode_args_matches_encode)
{
    int64_t d2[2] = { 3, 0 };
    weft_tensor *t0 = NULL, *t2 = NULL;
    double one = 1.0;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, &one, &t0), 0);
    cr_assert_eq(weft_tensor_create(WEFT_I32, 2, d2, NULL, &t2), 0);
    weft_arg args[7] = { weft_arg_tensor(t0), weft_arg_tensor(t2), weft_arg_i64(-5),
                         weft_arg_f64(-0.0), weft_arg_f64(0.0), weft_arg_f64(NAN),
                         weft_arg_f64(-NAN) };
    weft__targ targs[7];
    memset(targs, 0, sizeof targs);
    for (int i = 0; i < 7; i++) {
        targs[i].kind = args[i].kind;
        if (args[i].kind == WEFT_ARG_TENSOR) {
            const weft_tensor *t = args[i].u.tensor;
            targs[i].spec.dtype = weft_tensor_dtype(t);
            targs[i].spec.rank = weft_tensor_rank(t);
            for (int d = 0; d < targs[i].spec.rank; d++)
                targs[i].spec.dims[d] = weft_tensor_dims(t)[d];
        } else if (args[i].kind == WEFT_ARG_I64) {
            targs[i].i64 = args[i].u.i64;
        } else {
            targs[i].f64 = args[i].u.f64;
        }
    }
    uint8_t a[1024], b[1024];
    cr_assert_leq(weft__cache_key_bound(7), sizeof a);
    size_t la = weft__cache_encode_args(args, 7, a), lb = weft__cache_encode(targs, 7, b);
    cr_assert_eq(la, lb);
    cr_assert_eq(memcmp(a, b, la), 0);
    /* -0.0 and 0.0 key apart; every NaN keys the same. */
    uint8_t c[64], e[64];
    size_t lc = weft__cache_encode_args(&args[3], 1, c), le = weft__cache_encode_args(&args[4], 1, e);
    cr_assert(lc == le && memcmp(c, e, lc) != 0);
    lc = weft__cache_encode_args(&args[5], 1, c);
    le = weft__cache_encode_args(&args[6], 1, e);
    cr_assert(lc == le && memcmp(c, e, lc) == 0);
    weft_tensor_release(t0);
    weft_tensor_release(t2);
}

/* Repeated hits on the most recently used entry write nothing, yet the
 * order stays exact. */
Test(cache, lru_order_with_repeated_hits)
{
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 2);
    call_square(f, 1);
    call_square(f, 2);
    call_square(f, 2);
    call_square(f, 2);
    call_square(f, 1);   /* 2 is now the least recently used */
    call_square(f, 1);
    call_square(f, 3);   /* evicts 2 */
    call_square(f, 1);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3);
    call_square(f, 3);
    call_square(f, 3);
    call_square(f, 2);   /* traces again, evicts 1 */
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 4);
    call_square(f, 3);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 4);
    call_square(f, 1);
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 5);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.calls, 13);
    cr_assert_eq(st.misses, 5);
    cr_assert_eq(st.hits, 8);
    cr_assert_eq(st.evictions, 3);
    weft_function_destroy(&f);
}

/* A host callback that calls its own function with a new shape: the miss
 * evicts (max_cached 1) the entry whose program is running the callback,
 * which must stay alive until that run ends. */
typedef struct self_call {
    weft_function *f;
    int runs, inner_rc;  /* (atomic) */
} self_call;

static int host_self(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    self_call *s = user;
    (void)n_in;
    if (__atomic_fetch_add(&s->runs, 1, __ATOMIC_SEQ_CST) == 1) {  /* in the second run: a hit */
        int64_t n = 5;
        weft_tensor *x = NULL, *y = NULL;
        int rc = weft_tensor_create(WEFT_F64, 1, &n, NULL, &x);
        weft_arg a = weft_arg_tensor(x);
        if (rc == 0)
            rc = weft_function_call(s->f, &a, 1, &y, 1);
        __atomic_store_n(&s->inner_rc, rc, __ATOMIC_SEQ_CST);
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    const weft_tensor *x = in[0];
    return weft_tensor_create(WEFT_F64, weft_tensor_rank(x), weft_tensor_dims(x),
                              weft_tensor_data(x), out);
}

static int body_self(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_spec sp;
    weft_value_spec(args[0], &sp);
    weft_value *h = weft_host_call(cx, host_self, user, &args[0], 1, &sp, 0);
    outs[0] = weft_add(cx, h, weft_const_f64(cx, 1.0));
    return 0;
}

Test(cache, eviction_of_the_running_entry_from_inside_its_run)
{
    self_call s = { 0 };
    weft_function_desc d = { .name = "self", .body = body_self, .user = &s, .n_args = 1,
                             .n_outs = 1, .max_cached = 1 };
    cr_assert_eq(weft_function_create(rt, &d, &s.f), 0, "%s", weft_errmsg());
    int64_t n = 3;
    double data[3] = { 1, 2, 3 };
    weft_tensor *x = NULL, *out = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, data, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    /* The first call traces, then a hit runs the entry: the callback's own
     * call evicts it from inside. */
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(weft_function_call(s.f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
        for (int i = 0; i < 3; i++)
            cr_assert_float_eq(elem(out, i), data[i] + 1.0, 1e-12);
        weft_tensor_release(out);
        out = NULL;
    }
    cr_assert_eq(__atomic_load_n(&s.inner_rc, __ATOMIC_SEQ_CST), 0);
    weft_function_stats st;
    weft_function_get_stats(s.f, &st);
    cr_assert_eq(st.evictions, 1, "f64[3] evicted by f64[5] while running");
    cr_assert_eq(st.hits, 1);
    cr_assert_eq(st.cached, 1);
    weft_tensor_release(x);
    weft_function_destroy(&s.f);
}

/* A successful call leaves weft_errmsg() as the last failure set it,
 * whether it traces, hits the cache or runs eagerly (tracing once emptied
 * it, so that a body failing silently would not inherit it). */
Test(cache, successful_calls_keep_the_last_error_message)
{
    int64_t dims[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    weft_tensor *bad = NULL;
    cr_assert_neq(weft_tensor_create(WEFT_F64, 9, dims, NULL, &bad), 0);
    char want[512];
    snprintf(want, sizeof want, "%s", weft_errmsg());
    cr_assert_neq(want[0], '\0');
    counter c = { 0 };
    weft_function *f = make(body_square, &c, 1, NULL, 0, 0);
    weft_function *g = make(body_square, &c, 1, NULL, WEFT_RUN_EAGERLY, 0);
    call_square(f, 3);
    cr_assert_str_eq(weft_errmsg(), want, "after a traced call");
    call_square(f, 3);
    cr_assert_str_eq(weft_errmsg(), want, "after a cache hit");
    call_square(g, 3);
    cr_assert_str_eq(weft_errmsg(), want, "after an eager call");
    weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 4 } };
    weft_concrete *k = NULL;
    cr_assert_eq(weft_function_get_concrete(f, &s, 1, &k), 0);
    cr_assert_str_eq(weft_errmsg(), want, "after get_concrete");
    cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3);
    weft_function_destroy(&g);
    weft_function_destroy(&f);
}

/* A function of no outputs (only side effects) is called with outs NULL,
 * traced as eagerly (the traced program once required outs). */
static int count_host(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    __atomic_fetch_add(&((counter *)user)->traces, 1, __ATOMIC_SEQ_CST);
    return weft_tensor_create(WEFT_F64, 0, NULL, &(double){ 0 }, out);
}

static int body_effect_only(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    (void)outs;
    weft_spec s = { .dtype = WEFT_F64, .rank = 0 };
    weft_host_call(cx, count_host, user, NULL, 0, &s, 0);
    return 0;
}

Test(cache, functions_without_outputs)
{
    for (int eager = 0; eager < 2; eager++) {
        counter c = { 0 };
        weft_function_desc d = { .name = "effect", .body = body_effect_only, .user = &c,
                                 .n_args = 1, .n_outs = 0,
                                 .flags = eager ? WEFT_RUN_EAGERLY : 0u };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *x = vec_f32(2, 0.0f);
        weft_arg a = weft_arg_tensor(x);
        for (int k = 0; k < 3; k++)
            cr_assert_eq(weft_function_call(f, &a, 1, NULL, 0), 0, "eager %d: %s", eager,
                         weft_errmsg());
        cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 3,
                     "eager %d: the host call ran %d times", eager,
                     __atomic_load_n(&c.traces, __ATOMIC_SEQ_CST));
        weft_spec s = { .dtype = WEFT_F32, .rank = 1, .dims = { 2 } };
        weft_concrete *k = NULL;
        cr_assert_eq(weft_function_get_concrete(f, &s, 1, &k), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_concrete_call(k, &x, 1, NULL, 0), 0, "eager %d: %s", eager,
                     weft_errmsg());
        cr_assert_eq(__atomic_load_n(&c.traces, __ATOMIC_SEQ_CST), 4);
        weft_tensor_release(x);
        weft_function_destroy(&f);
    }
}

/* The warning quotes each reason whole, as weft_retrace.reason holds it
 * (up to 255 characters; reasons were cut at 127). */
static int body_sum8(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *s = args[0];
    for (int k = 1; k < 8; k++)
        s = weft_add(cx, s, args[k]);
    outs[0] = s;
    return weft_ctx_status(cx);
}

Test(cache, the_warning_quotes_long_reasons_whole)
{
    log_seen seen = { 0 };
    weft_set_log(log_cb, &seen);
    weft_function_desc d = { .name = "sum8", .body = body_sum8, .n_args = 8, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_retrace why;
    for (int64_t n = 1; n <= 5; n++) {
        weft_tensor *t[8] = { 0 }, *y = NULL;
        weft_arg a[8];
        for (int k = 0; k < 8; k++) {
            int64_t dims[2] = { n, n + 10 };
            cr_assert_eq(weft_tensor_create(WEFT_F64, 2, dims, NULL, &t[k]), 0);
            a[k] = weft_arg_tensor(t[k]);
        }
        cr_assert_eq(weft_function_call(f, a, 8, &y, 1), 0, "%s", weft_errmsg());
        weft_tensor_release(y);
        for (int k = 0; k < 8; k++)
            weft_tensor_release(t[k]);
        cr_assert_eq(weft_function_last_retrace(f, &why), 0);
    }
    cr_assert_eq(seen.warns, 1);
    cr_assert_gt(strlen(why.reason), 128, "a long reason: %s", why.reason);
    size_t lm = strlen(seen.last), lr = strlen(why.reason);
    cr_assert(lm >= lr && strcmp(seen.last + lm - lr, why.reason) == 0,
              "the warning ends with the last reason whole:\n%s\n%s", seen.last, why.reason);
    weft_function_destroy(&f);
    weft_set_log(NULL, NULL);
}

/* outs[0] = args[0], as a computed value (max(x, x), which every dtype
 * takes). */
static int body_same(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_maximum(cx, args[0], args[0]);
    return weft_ctx_status(cx);
}

Test(cache, static_i64_to_f32_signature_rounds_once, .timeout = 30)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[]", &sig), 0);
    weft_function_desc d = { .name = "f32sig", .body = body_same, .n_args = 1, .n_outs = 1,
                             .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    /* Halfway-plus-one between two floats once, but exactly halfway after
     * a first rounding to double. */
    const int64_t vals[] = { (INT64_C(1) << 60) + (INT64_C(1) << 36) + 1, INT64_MAX, INT64_MIN,
                             16777217, -16777217 };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        weft_arg a = weft_arg_i64(vals[i]);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dtype(y), WEFT_F32);
        float got = *(const float *)weft_tensor_data(y), want = (float)vals[i];
        cr_assert(got == want, "i64 %lld became %.9g, expected %.9g", (long long)vals[i],
                  (double)got, (double)want);
        weft_tensor_release(y);
    }
    weft_function_destroy(&f);
}

/* A static scalar that the declared spec cannot hold is refused, not
 * changed (GUIDE, "Input signatures"). */
Test(cache, static_scalars_the_spec_cannot_hold_are_refused, .timeout = 30)
{
    static const struct { const char *spec; int is_int; int64_t i; double v; int ok; } cases[] = {
        { "bool[]", 1, 0, 0, 1 },    { "bool[]", 1, 1, 0, 1 },      { "bool[]", 1, 2, 0, 0 },
        { "bool[]", 1, -1, 0, 0 },   { "bool[]", 0, 0, 1.0, 1 },    { "bool[]", 0, 0, 0.5, 0 },
        { "bool[]", 0, 0, NAN, 0 },  { "f32[]", 0, 0, 1e300, 0 },   { "f32[]", 0, 0, -1e39, 0 },
        { "f32[]", 0, 0, INFINITY, 1 }, { "f32[]", 0, 0, NAN, 1 },  { "f32[]", 0, 0, 3.4028235e38, 1 },
        { "i32[]", 1, INT64_C(1) << 40, 0, 0 }, { "i32[]", 0, 0, 1.5, 0 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_spec sig;
        cr_assert_eq(weft_spec_parse(cases[k].spec, &sig), 0);
        weft_function_desc d = { .name = "holds", .body = body_same, .n_args = 1, .n_outs = 1,
                                 .input_signature = &sig };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_arg a = cases[k].is_int ? weft_arg_i64(cases[k].i) : weft_arg_f64(cases[k].v);
        weft_tensor *y = NULL;
        int rc = weft_function_call(f, &a, 1, &y, 1);
        if (cases[k].ok) {
            cr_assert_eq(rc, 0, "case %zu: %s", k, weft_errmsg());
        } else {
            cr_assert_eq(rc, WEFT_ESIGNATURE, "case %zu (%s): %s", k, cases[k].spec,
                         weft_err_name(rc));
            cr_assert(strstr(weft_errmsg(), "(not a"), "case %zu: %s", k, weft_errmsg());
            cr_assert_null(y);
        }
        weft_tensor_release(y);
        weft_function_destroy(&f);
    }
}

/* f64 static keys: bit patterns, except that every NaN is one key. */
Test(cache, static_f64_keys_zero_signs_and_nans, .timeout = 30)
{
    weft_function_desc d = { .name = "keys", .body = body_same, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    const double vals[] = { 0.0, -0.0, NAN, -NAN, 0.0, -0.0, NAN };
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        weft_arg a = weft_arg_f64(vals[k]);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        weft_tensor_release(y);
    }
    cr_assert_eq(weft_function_tracing_count(f), 3, "0.0, -0.0 and one NaN key: %llu traces",
                 (unsigned long long)weft_function_tracing_count(f));
    weft_function_destroy(&f);
}
