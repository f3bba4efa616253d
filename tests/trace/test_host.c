/* Host calls (weft_host_call, py_function): run on every execution, in
 * program order, never removed as dead code, outputs checked, failures
 * reported, WEFT_HOST_SERIAL honoured. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "trace/sidefx.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static weft_tensor *scalar_f64(double v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, &v, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_spec spec_of(const char *text)
{
    weft_spec s;
    cr_assert_eq(weft_spec_parse(text, &s), 0, "%s", text);
    return s;
}

/* ---- Callbacks. ---- */

typedef struct counter {
    int calls;  /* (atomic) */
    int in_flight, peak;  /* (atomic) */
    long sleep_us;
    pthread_mutex_t lock;
    int log[64];
    int n_log;
} counter;

static void counter_init(counter *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
}

/* Returns f64[] holding the number of calls so far (1, 2, ...). */
static int count_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    counter *c = user;
    int n = __atomic_fetch_add(&c->calls, 1, __ATOMIC_SEQ_CST) + 1;
    *out = scalar_f64(n);
    return 0;
}

/* Tracks how many calls run at once, sleeping to make overlaps likely. */
static int overlap_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    counter *c = user;
    int now = __atomic_fetch_add(&c->in_flight, 1, __ATOMIC_SEQ_CST) + 1;
    int peak = __atomic_load_n(&c->peak, __ATOMIC_SEQ_CST);
    while (now > peak && !__atomic_compare_exchange_n(&c->peak, &peak, now, true, __ATOMIC_SEQ_CST,
                                                      __ATOMIC_SEQ_CST))
        ;
    sleep_us(c->sleep_us);
    __atomic_fetch_sub(&c->in_flight, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&c->calls, 1, __ATOMIC_SEQ_CST);
    *out = n_in ? weft_tensor_retain(in[0]) : scalar_f64(0);
    return 0;
}

/* Appends its tag to the log after sleeping, so out-of-order runs show. */
typedef struct tagged { counter *c; int tag; long sleep_us; } tagged;

static int log_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    tagged *t = user;
    sleep_us(t->sleep_us);
    pthread_mutex_lock(&t->c->lock);
    if (t->c->n_log < 64)
        t->c->log[t->c->n_log++] = t->tag;
    pthread_mutex_unlock(&t->c->lock);
    *out = scalar_f64(t->tag);
    return 0;
}

static int fail_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    (void)out;
    (void)user;
    return -3;
}

static int null_out_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    (void)out;
    (void)user;
    return 0;
}

/* Returns a tensor of the spec text in user (zeros). */
static int shaped_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in;
    (void)n_in;
    weft_spec s;
    if (weft_spec_parse(user, &s))
        return -1;
    return weft_tensor_create(s.dtype, s.rank, s.dims, NULL, out);
}

/* Sums its inputs (all f64 scalars). */
static int sum_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)user;
    double s = 0;
    for (size_t i = 0; i < n_in; i++)
        s += *(const double *)weft_tensor_data(in[i]);
    *out = scalar_f64(s);
    return 0;
}

/* ---- Eager mode. ---- */

Test(host, eager_runs_at_once_with_inputs, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0, "%s", weft_errmsg());
    weft_value *in[10];
    for (int i = 0; i < 10; i++) {
        weft_tensor *t = scalar_f64(i + 1);
        in[i] = weft_eager_value(cx, t);
        weft_tensor_release(t);
    }
    weft_spec s = spec_of("f64[]");
    weft_value *v = weft_host_call(cx, sum_cb, NULL, in, 10, &s, 0);
    cr_assert_not_null(v, "%s", weft_errmsg());
    cr_assert_eq(*(const double *)weft_tensor_data(weft_value_tensor(v)), 55.0);

    counter c;
    counter_init(&c);
    for (int i = 1; i <= 3; i++) {
        v = weft_host_call(cx, count_cb, &c, NULL, 0, &s, 0);
        cr_assert_not_null(v);
        cr_assert_eq(__atomic_load_n(&c.calls, __ATOMIC_SEQ_CST), i,
                     "eager host calls run at once");
        cr_assert_eq(*(const double *)weft_tensor_data(weft_value_tensor(v)), (double)i);
    }
    cr_assert_eq(weft_ctx_status(cx), 0);
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

Test(host, validation, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    weft_spec good = spec_of("f64[]");
    weft_spec bad_rank = good, bad_dtype = good, bad_dim = spec_of("f64[3]");
    bad_rank.rank = WEFT_MAX_RANK + 1;
    bad_dtype.dtype = (weft_dtype)99;
    bad_dim.dims[0] = -5;
    struct { weft_host_fn fn; const weft_spec *spec; size_t n_in; bool null_in; unsigned flags; } cases[] = {
        {NULL, &good, 0, false, 0},
        {count_cb, NULL, 0, false, 0},
        {count_cb, &bad_rank, 0, false, 0},
        {count_cb, &bad_dtype, 0, false, 0},
        {count_cb, &bad_dim, 0, false, 0},
        {count_cb, &good, 2, true, 0},
        {count_cb, &good, 0, false, 0x80},
    };
    counter c;
    counter_init(&c);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rt, &cx), 0);
        weft_value *v = weft_host_call(cx, cases[k].fn, &c, NULL, cases[k].n_in,
                                       cases[k].spec, cases[k].flags);
        cr_assert_null(v, "case %zu", k);
        cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL, "case %zu: %s", k, weft_errmsg());
        cr_assert(strstr(weft_errmsg(), "weft_host_call") != NULL, "case %zu: %s", k, weft_errmsg());
        weft_eager_end(&cx);
    }
    cr_assert_eq(__atomic_load_n(&c.calls, __ATOMIC_SEQ_CST), 0, "a rejected host call never runs");
    weft_host_call(NULL, count_cb, &c, NULL, 0, &good, 0);   /* NULL context: no crash */
    weft_runtime_destroy(&rt);
}

Test(host, eager_output_checks, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    struct { weft_host_fn fn; const char *made; const char *want; int code; const char *says; } cases[] = {
        {shaped_cb, "f32[3]", "f32[4]", WEFT_ESHAPE, "f32[3]"},
        {shaped_cb, "f32[4,1]", "f32[4]", WEFT_ESHAPE, "f32[4,1]"},
        {shaped_cb, "i32[4]", "f32[4]", WEFT_EDTYPE, "i32[4]"},
        {shaped_cb, "f32[7,2]", "f32[?,2]", 0, NULL},
        {shaped_cb, "f32[7,3]", "f32[?,2]", WEFT_ESHAPE, "f32[7,3]"},
        {shaped_cb, "i64[2,2,2]", "i64[*]", 0, NULL},
        {fail_cb, NULL, "f32[4]", WEFT_EHOST, "callback returned -3"},
        {null_out_cb, NULL, "f32[4]", WEFT_EHOST, "no output"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rt, &cx), 0);
        weft_spec want = spec_of(cases[k].want);
        weft_value *v = weft_host_call(cx, cases[k].fn, (void *)cases[k].made, NULL, 0, &want, 0);
        cr_assert_eq(weft_ctx_status(cx), cases[k].code, "case %zu: %s", k, weft_errmsg());
        if (cases[k].code) {
            cr_assert_null(v);
            cr_assert(strstr(weft_errmsg(), cases[k].says) != NULL, "case %zu: %s", k, weft_errmsg());
            if (cases[k].fn == shaped_cb)
                cr_assert(strstr(weft_errmsg(), cases[k].want) != NULL,
                          "both specs named: %s", weft_errmsg());
        } else {
            cr_assert_not_null(v);
        }
        weft_eager_end(&cx);
    }
    weft_runtime_destroy(&rt);
}

/* ---- Traced mode. ---- */

typedef struct body_state {
    counter *c;
    tagged a, b;
    const char *made;      /* shaped_cb's output */
    const char *want;      /* the declared spec */
    weft_host_fn fn;
} body_state;

/* outs[0] = x + count(), so the host output is used. */
static int body_count(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    body_state *st = user;
    weft_spec s = spec_of("f64[]");
    weft_value *n = weft_host_call(cx, count_cb, st->c, NULL, 0, &s, 0);
    outs[0] = weft_add(cx, args[0], n);
    return 0;
}

/* The host output is unused: only its side effect keeps it alive. */
static int body_unused(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    body_state *st = user;
    weft_spec s = spec_of("f64[]");
    weft_host_call(cx, count_cb, st->c, NULL, 0, &s, 0);
    outs[0] = weft_mul(cx, args[0], args[0]);
    return 0;
}

/* Two independent host calls: a (slow) then b (fast); then a third that
 * depends on neither's data. */
static int body_order(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    body_state *st = user;
    weft_spec s = spec_of("f64[]");
    weft_value *x = weft_neg(cx, args[0]);
    weft_value *a = weft_host_call(cx, log_cb, &st->a, NULL, 0, &s, 0);
    weft_value *b = weft_host_call(cx, log_cb, &st->b, NULL, 0, &s, 0);
    outs[0] = weft_add(cx, weft_add(cx, a, b), x);
    return 0;
}

static int body_shaped(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    body_state *st = user;
    weft_spec want = spec_of(st->want);
    weft_value *v = weft_host_call(cx, st->fn, (void *)st->made, &args[0], 1, &want, 0);
    outs[0] = v;
    return 0;
}

static weft_function *make_fn(weft_runtime *rt, weft_body_fn body, void *user)
{
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = "host_test";
    d.body = body;
    d.user = user;
    d.n_args = 1;
    d.n_outs = 1;
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static int call1(weft_function *f, double x, double *res)
{
    weft_tensor *t = scalar_f64(x), *out = NULL;
    weft_arg a = weft_arg_tensor(t);
    int rc = weft_function_call(f, &a, 1, &out, 1);
    weft_tensor_release(t);
    if (rc == 0) {
        if (res)
            *res = *(const double *)weft_tensor_data(out);
        weft_tensor_release(out);
    }
    return rc;
}

Test(host, traced_runs_every_call, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    counter c;
    counter_init(&c);
    body_state st = {.c = &c};
    weft_function *f = make_fn(rt, body_count, &st);
    for (int i = 1; i <= 5; i++) {
        double r = 0;
        cr_assert_eq(call1(f, 100.0, &r), 0, "%s", weft_errmsg());
        cr_assert_eq(__atomic_load_n(&c.calls, __ATOMIC_SEQ_CST), i,
                     "the host call ran on call %d", i);
        cr_assert_eq(r, 100.0 + i, "the host output flows on: %g", r);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
}

Test(host, never_dead_code, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    counter c;
    counter_init(&c);
    body_state st = {.c = &c};
    weft_function *f = make_fn(rt, body_unused, &st);
    for (int i = 1; i <= 4; i++) {
        double r = 0;
        cr_assert_eq(call1(f, 3.0, &r), 0, "%s", weft_errmsg());
        cr_assert_eq(r, 9.0);
        cr_assert_eq(__atomic_load_n(&c.calls, __ATOMIC_SEQ_CST), i,
                     "an unused host call still runs");
    }
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
}

Test(host, program_order, .timeout = 30)
{
    weft_runtime *rt = test_runtime(4);
    counter c;
    counter_init(&c);
    body_state st = {.c = &c, .a = {&c, 1, 3000}, .b = {&c, 2, 0}};
    weft_function *f = make_fn(rt, body_order, &st);
    const int calls = 6;
    for (int i = 0; i < calls; i++) {
        double r = 0;
        cr_assert_eq(call1(f, 1.0, &r), 0, "%s", weft_errmsg());
        cr_assert_eq(r, 2.0);
    }
    cr_assert_eq(c.n_log, 2 * calls);
    for (int i = 0; i < c.n_log; i++)
        cr_assert_eq(c.log[i], i % 2 ? 2 : 1, "log[%d] = %d: host calls ran out of order", i, c.log[i]);
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
}

Test(host, traced_output_checks, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    struct { weft_host_fn fn; const char *made, *want; int code; const char *says; } cases[] = {
        {shaped_cb, "f64[3]", "f64[4]", WEFT_ESHAPE, "f64[3]"},
        {shaped_cb, "i32[4]", "f64[4]", WEFT_EDTYPE, "i32[4]"},
        {fail_cb, NULL, "f64[4]", WEFT_EHOST, "callback returned -3"},
        {shaped_cb, "f64[5]", "f64[?]", 0, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        body_state st = {.fn = cases[k].fn, .made = cases[k].made, .want = cases[k].want};
        weft_function *f = make_fn(rt, body_shaped, &st);
        for (int rep = 0; rep < 2; rep++) {
            int rc = call1(f, 1.0, NULL);
            cr_assert_eq(rc, cases[k].code, "case %zu: rc %d: %s", k, rc, weft_errmsg());
            if (rc) {
                cr_assert(strstr(weft_errmsg(), cases[k].says) != NULL, "case %zu: %s", k, weft_errmsg());
                if (cases[k].fn == shaped_cb)
                    cr_assert(strstr(weft_errmsg(), cases[k].want) != NULL, "%s", weft_errmsg());
            }
        }
        weft_function_destroy(&f);
    }
    weft_runtime_destroy(&rt);
}

/* ---- WEFT_HOST_SERIAL, through the node runner itself. ---- */

typedef struct serial_run {
    weft_runtime *rt;
    weft__node node;
    int errors;  /* (atomic) */
} serial_run;

static int serial_iter(size_t i, void *ctx)
{
    (void)i;
    serial_run *s = ctx;
    weft_tensor *in = scalar_f64(1), *out = NULL;
    int rc = weft__host_run(s->rt, &s->node, &in, &out);
    if (rc)
        __atomic_fetch_add(&s->errors, 1, __ATOMIC_SEQ_CST);
    weft_tensor_release(out);
    weft_tensor_release(in);
    return rc;
}

/* Runs the host call fn(user) of an f64[] input n times as a parallel map. */
static int run_host_map(weft_runtime *rt, weft_host_fn fn, void *user, unsigned flags, size_t n)
{
    serial_run s;
    memset(&s, 0, sizeof s);
    s.rt = rt;
    s.node.op = WEFT__OP_HOST;
    s.node.n_in = 1;
    s.node.spec = spec_of("f64[]");
    s.node.attr.host.fn = fn;
    s.node.attr.host.user = user;
    s.node.attr.host.flags = flags;
    int rc = weft_parallel_map(rt, n, 0, serial_iter, &s);
    cr_assert_eq(__atomic_load_n(&s.errors, __ATOMIC_SEQ_CST), 0, "%s", weft_errmsg());
    return rc;
}

static int run_overlap(weft_runtime *rt, unsigned flags, counter *c, size_t n)
{
    return run_host_map(rt, overlap_cb, c, flags, n);
}

Test(host, serial_never_overlaps, .timeout = 30)
{
    weft_runtime *rt = test_runtime_of(4);

    counter par;
    counter_init(&par);
    par.sleep_us = 2000;
    cr_assert_eq(run_overlap(rt, 0, &par, 24), 0, "%s", weft_errmsg());
    cr_assert_eq(__atomic_load_n(&par.calls, __ATOMIC_SEQ_CST), 24);
    cr_assert_gt(__atomic_load_n(&par.peak, __ATOMIC_SEQ_CST), 1,
                 "plain host calls overlap on 4 workers");

    counter ser;
    counter_init(&ser);
    ser.sleep_us = 500;
    cr_assert_eq(run_overlap(rt, WEFT_HOST_SERIAL, &ser, 24), 0, "%s", weft_errmsg());
    cr_assert_eq(__atomic_load_n(&ser.calls, __ATOMIC_SEQ_CST), 24);
    cr_assert_eq(__atomic_load_n(&ser.peak, __ATOMIC_SEQ_CST), 1,
                 "WEFT_HOST_SERIAL calls never overlap");
    weft_runtime_destroy(&rt);
}

/* Serial callbacks are told apart by their exact fn pointer: a serial fn
 * does not hold back a different serial fn. */
static int overlap_cb2(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    return overlap_cb(in, n_in, out, user);
}

typedef struct two_fns { weft_runtime *rt; weft__node a, b; } two_fns;

static int two_iter(size_t i, void *ctx)
{
    two_fns *s = ctx;
    weft_tensor *in = scalar_f64(1), *out = NULL;
    int rc = weft__host_run(s->rt, i % 2 ? &s->b : &s->a, &in, &out);
    weft_tensor_release(out);
    weft_tensor_release(in);
    return rc;
}

Test(host, serial_is_per_callback, .timeout = 30)
{
    weft_runtime *rt = test_runtime_of(4);
    counter shared;   /* both callbacks count into one place */
    counter_init(&shared);
    shared.sleep_us = 3000;
    two_fns s;
    memset(&s, 0, sizeof s);
    s.rt = rt;
    s.a.op = s.b.op = WEFT__OP_HOST;
    s.a.n_in = s.b.n_in = 1;
    s.a.spec = s.b.spec = spec_of("f64[]");
    s.a.attr.host.fn = overlap_cb;
    s.b.attr.host.fn = overlap_cb2;
    s.a.attr.host.user = s.b.attr.host.user = &shared;
    s.a.attr.host.flags = s.b.attr.host.flags = WEFT_HOST_SERIAL;
    cr_assert_eq(weft_parallel_map(rt, 16, 0, two_iter, &s), 0, "%s", weft_errmsg());
    cr_assert_eq(__atomic_load_n(&shared.calls, __ATOMIC_SEQ_CST), 16);
    cr_assert_leq(__atomic_load_n(&shared.peak, __ATOMIC_SEQ_CST), 2,
                  "one call of each serial fn at most");
    cr_assert_eq(__atomic_load_n(&shared.peak, __ATOMIC_SEQ_CST), 2,
                 "two different serial fns may overlap");
    weft_runtime_destroy(&rt);
}

/* After a context failed, a host call returns NULL and never runs its
 * callback, with inputs or without, like every other op. */
Test(host, sticky_error_without_inputs, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    counter c;
    counter_init(&c);
    weft_spec s = spec_of("f64[]");
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    int64_t d3[1] = {3}, d4[1] = {4};
    weft_value *a = weft_fill(cx, WEFT_F32, 1, d3, 1);
    weft_value *b = weft_fill(cx, WEFT_F32, 1, d4, 1);
    cr_assert_null(weft_add(cx, a, b));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE);
    cr_assert_null(weft_host_call(cx, count_cb, &c, NULL, 0, &s, 0), "no inputs");
    cr_assert_null(weft_host_call(cx, count_cb, &c, &a, 1, &s, 0), "one input");
    cr_assert_eq(__atomic_load_n(&c.calls, __ATOMIC_SEQ_CST), 0, "the callback ran %d times",
                 __atomic_load_n(&c.calls, __ATOMIC_SEQ_CST));
    cr_assert_eq(weft_ctx_status(cx), WEFT_ESHAPE, "the first error stays");
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

/* weft_host_call(NULL, ...) reports a NULL context like every other op. */
Test(host, null_context_sets_errmsg, .timeout = 30)
{
    counter c;
    counter_init(&c);
    weft_spec s = spec_of("f64[]");
    cr_assert_neq(weft_spec_parse(NULL, &s), 0);   /* leaves another message */
    cr_assert_null(weft_host_call(NULL, count_cb, &c, NULL, 0, &s, 0));
    cr_assert(strstr(weft_errmsg(), "weft_host_call: NULL context") != NULL, "%s", weft_errmsg());
    cr_assert_eq(__atomic_load_n(&c.calls, __ATOMIC_SEQ_CST), 0);
}

/* ---- Work a serial callback starts runs on its own thread. ---- */

/* The callback holds its serial lock.  If it waited for a stolen half of
 * its loop, its thread would run other tasks meanwhile: a map iteration
 * of the same callback then blocked on the lock (a deadlock, the thief
 * waiting below it for the half) or failed as a re-entry. */
typedef struct nested {
    weft_runtime *rt;
    int foreign;      /* loop pieces that ran on another thread (atomic) */
    long covered;     /* iterations the loops covered (atomic) */
    int child_late;   /* (atomic) */
    pthread_t self;
} nested;

typedef struct nested_call {
    nested *n;
    pthread_t self;
} nested_call;

static int nested_range(size_t b, size_t e, void *ctx)
{
    nested_call *c = ctx;
    if (!pthread_equal(pthread_self(), c->self))
        __atomic_fetch_add(&c->n->foreign, 1, __ATOMIC_SEQ_CST);
    volatile double s = 0;   /* some work per iteration, kept by volatile */
    for (size_t i = b; i < e; i++)
        s = s + (double)i * 0.5;
    (void)s;
    __atomic_fetch_add(&c->n->covered, (long)(e - b), __ATOMIC_SEQ_CST);
    return 0;
}

static int nested_index(size_t i, void *ctx)
{
    return nested_range(i, i + 1, ctx);
}

static void nested_child(void *p)
{
    *(int *)p = 1;
}

static int nested_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    nested *n = user;
    nested_call c = { n, pthread_self() };
    int rc = weft_parallel_for(n->rt, 20000, 0, nested_range, &c);
    if (rc == 0)
        rc = weft_parallel_map(n->rt, 64, 0, nested_index, &c);
    int ran = 0;
    weft_group g;
    weft_group_init(&g, n->rt);
    weft_spawn(&g, nested_child, &ran);
    if (!ran)
        __atomic_fetch_add(&n->child_late, 1, __ATOMIC_SEQ_CST);
    if (rc == 0)
        rc = weft_group_wait(&g);
    else
        weft_group_wait(&g);
    if (rc)
        return rc;
    *out = weft_tensor_retain(in[0]);
    return 0;
}

Test(host, serial_callback_work_runs_on_its_thread, .timeout = 30)
{
    weft_runtime *rt = test_runtime_of(4);
    nested n = { .rt = rt };
    for (int rep = 0; rep < 10; rep++)
        cr_assert_eq(run_host_map(rt, nested_cb, &n, WEFT_HOST_SERIAL, 32), 0, "rep %d: %s", rep,
                     weft_errmsg());
    cr_assert_eq(__atomic_load_n(&n.foreign, __ATOMIC_SEQ_CST), 0,
                 "%d loop pieces ran on another thread",
                 __atomic_load_n(&n.foreign, __ATOMIC_SEQ_CST));
    cr_assert_eq(__atomic_load_n(&n.covered, __ATOMIC_SEQ_CST), 10L * 32 * (20000 + 64));
    cr_assert_eq(__atomic_load_n(&n.child_late, __ATOMIC_SEQ_CST), 0, "a spawned child was queued");
    weft_runtime_destroy(&rt);
}
