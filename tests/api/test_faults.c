/* Exhausted allocators and failing threads: for N = 1, 2, 3, ... the Nth
 * allocation of an operation fails (weft__fault_fail_after) until one run
 * completes without reaching the fault.  Every failure must return
 * WEFT_ENOMEM (or succeed, where the failed allocation had a fallback),
 * never crash, leave the runtime working and leak nothing (the ASan build
 * checks leaks at exit).  Also: pthread_create failing inside
 * weft_runtime_create, and how far a failed loop iteration lets the loop
 * run on (cancellation). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "base/sanitizer.h"
#include "runtime/iface.h"
#include "trace/tensor_impl.h"

#if defined(WEFT__ASAN) || defined(WEFT__TSAN)
#define UNDER_SANITIZER 1
#endif

/* LeakSanitizer cannot be relied on here: tests/support/lsan.supp
 * suppresses every leak whose stack passes through libcriterion (all of a
 * test's), and a leak report in a criterion child does not fail the test.
 * Under ASan the sweeps therefore compare the allocator's live bytes before
 * and after instead. */
#if defined(WEFT__ASAN)
/* From <sanitizer/allocator_interface.h>, which not every toolchain ships. */
size_t __sanitizer_get_current_allocated_bytes(void);
/* Freed tensor buffers kept for reuse are not leaks, and how many are
 * kept (a worker's own small ones among them) depends on where a sweep's
 * failures released them. */
static size_t live_bytes(void)
{
    return __sanitizer_get_current_allocated_bytes() - weft__tensor_buf_cache_bytes();
}
#define HAVE_LIVE_BYTES 1
#else
static size_t live_bytes(void)
{
    return 0;
}
#define HAVE_LIVE_BYTES 0
#endif

/* One worker: allocations then happen in a repeatable order. */
static weft_runtime *rt;

static void setup(void)
{
    rt = test_runtime_of(1);
}

static void teardown(void)
{
    weft__fault_fail_after(0);
    weft_runtime_destroy(&rt);
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 120);

static void need_fault_injection(void)
{
    if (!weft__fault_fail_after(0))
        cr_skip_test("built without -Dfault_injection=true");
}

/* One operation under test.  prepare and undo run without faults (set up
 * the arguments, release the results); run is the part swept; check
 * verifies a successful result (0: right). */
typedef struct op {
    const char *name;
    void (*prepare)(void *st);
    int (*run)(void *st);
    int (*check)(void *st);
    void (*undo)(void *st);
    void *st;
} op;

static int run_once(const op *o, long n, bool *hit)
{
    if (o->prepare)
        o->prepare(o->st);
    weft__fault_fail_after(n);
    int rc = o->run(o->st);
    *hit = weft__fault_hit();
    weft__fault_fail_after(0);
    return rc;
}

/* The sweep.  Returns the number of failure points found. */
static long sweep(const op *o)
{
    /* A clean run first, so that lazily made, long-lived state (per-thread
     * records, cached kernels) is in the baseline. */
    bool warm;
    int rc0 = run_once(o, 0, &warm);
    cr_assert_eq(rc0, 0, "%s: clean run: %s", o->name, weft_errmsg());
    if (o->undo)
        o->undo(o->st);
    size_t base = live_bytes();
    long n;
    for (n = 1; n < 20000; n++) {
        bool hit;
        int rc = run_once(o, n, &hit);
        /* A host callback that itself runs out of weft memory returns
         * WEFT_ENOMEM; documented: the call fails with WEFT_EHOST and the
         * message gives the callback's code. */
        if (rc == WEFT_EHOST && strstr(weft_errmsg(), "callback returned -12") != NULL)
            rc = WEFT_ENOMEM;
        if (rc != 0 && rc != WEFT_ENOMEM)
            cr_assert_fail("%s: allocation %ld failed: got %s (%d: %s), want WEFT_ENOMEM", o->name, n,
                     weft_err_name(rc), rc, weft_errmsg());
        if (rc == WEFT_ENOMEM && !hit)
            cr_assert_fail("%s: WEFT_ENOMEM with no fault injected (n = %ld): %s", o->name, n,
                     weft_errmsg());
        if (rc == WEFT_ENOMEM && strstr(weft_errmsg(), "memory") == NULL
            && strstr(weft_errmsg(), "returned -12") == NULL)
            cr_assert_fail("%s: allocation %ld: WEFT_ENOMEM with the message \"%s\"", o->name, n,
                     weft_errmsg());
        if (rc == 0 && o->check && o->check(o->st) != 0)
            cr_assert_fail("%s: allocation %ld failed, the call succeeded with a wrong result", o->name, n);
        if (o->undo)
            o->undo(o->st);
        /* The same operation without a fault works afterwards. */
        bool again;
        int rc2 = run_once(o, 0, &again);
        if (rc2 != 0)
            cr_assert_fail("%s: after failing allocation %ld, a clean run failed: %s (%s)", o->name, n,
                     weft_err_name(rc2), weft_errmsg());
        if (o->check && o->check(o->st) != 0)
            cr_assert_fail("%s: after failing allocation %ld, a clean run gave a wrong result", o->name, n);
        if (o->undo)
            o->undo(o->st);
        if (!hit)
            break;
    }
    /* Fewer live bytes is fine: other threads may free long-lived state
     * meanwhile (an epoch's deferred frees, a thread's records at exit).
     * More may be another thread's passing allocation (seen once under
     * AddressSanitizer on a loaded machine: 32 bytes): a leak stays, so
     * the count gets up to 200 ms to come back first. */
    size_t now = live_bytes();
    for (int wait = 0; now > base && wait < 200; wait++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
        now = live_bytes();
    }
    cr_expect_leq(now, base, "%s: %zd bytes more live after the sweep than before (a leak)", o->name,
                  (ssize_t)(now - base));
    cr_log_info("%s: %ld allocations failed one at a time%s", o->name, n - 1,
                HAVE_LIVE_BYTES ? ", live bytes unchanged" : "");
    return n - 1;
}

/* ---- Tensor creation. -------------------------------------------------- */

typedef struct tensor_st {
    weft_tensor *t;
} tensor_st;

static int tensor_run(void *p)
{
    tensor_st *s = p;
    int64_t d[2] = { 10, 10 };
    double data[100];
    for (int i = 0; i < 100; i++)
        data[i] = i;
    s->t = NULL;
    int rc = weft_tensor_create(WEFT_F64, 2, d, data, &s->t);
    return (rc != 0 && s->t != NULL) ? 1 : rc;
}

static int tensor_check(void *p)
{
    tensor_st *s = p;
    return weft_tensor_numel(s->t) == 100 && ((const double *)weft_tensor_data(s->t))[99] == 99.0
               ? 0 : 1;
}

static void tensor_undo(void *p)
{
    tensor_st *s = p;
    weft_tensor_release(s->t);
    s->t = NULL;
}

Test(faults, tensor_create)
{
    need_fault_injection();
    tensor_st s = { 0 };
    op o = { "weft_tensor_create", NULL, tensor_run, tensor_check, tensor_undo, &s };
    cr_expect_geq(sweep(&o), 1);
}

/* ---- Functions: trace + compile, cache, run. --------------------------- */

static int host_echo(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)n; (void)u;
    return weft_tensor_create(weft_tensor_dtype(in[0]), weft_tensor_rank(in[0]),
                              weft_tensor_dims(in[0]), weft_tensor_data(in[0]), out);
}

/* outs: sum((h + x) * x + 1) where h is a host echo of x, and -x. */
static int body_mix(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *x = args[0];
    weft_spec s;
    int rc = weft_value_spec(x, &s);
    if (rc)
        return rc;
    weft_value *h = weft_host_call(cx, host_echo, NULL, &x, 1, &s, 0);
    weft_value *y = weft_add(cx, weft_mul(cx, weft_add(cx, h, x), x), weft_const_i64(cx, 1));
    outs[0] = weft_sum(cx, y, WEFT_ALL_AXES);
    outs[1] = weft_neg(cx, x);
    return weft_ctx_status(cx);
}

static int64_t mix_expect(int64_t n)
{
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++)
        s += 2 * i * i + 1;
    return s;
}

static weft_function *mix_function(unsigned flags, size_t max_cached)
{
    weft_function_desc d = {
        .name = "mix", .body = body_mix, .n_args = 1, .n_outs = 2,
        .flags = flags, .max_cached = max_cached,
    };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static weft_tensor *iota_i64(int64_t n)
{
    int64_t buf[64];
    for (int64_t i = 0; i < n; i++)
        buf[i] = i;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 1, &n, buf, &t), 0);
    return t;
}

typedef struct fn_st {
    weft_function *f;
    unsigned flags;
    size_t max_cached;
    bool fresh;          /* a new function every run: the call traces */
    bool concrete;       /* weft_function_get_concrete instead of a call */
    int64_t warm_len;    /* if set, a clean call with this length first */
    int64_t lens[3];     /* argument lengths cycled through (cache churn) */
    int nlens, turn;
    int64_t len;
    weft_tensor *x;
    weft_tensor *outs[2];
    weft_concrete *c;
} fn_st;

static void fn_prepare(void *p)
{
    fn_st *s = p;
    if (s->fresh || !s->f) {
        weft_function_destroy(&s->f);
        s->f = mix_function(s->flags, s->max_cached);
    }
    if (s->warm_len) {
        weft_tensor *w = iota_i64(s->warm_len);
        weft_arg a = weft_arg_tensor(w);
        weft_tensor *o[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(s->f, &a, 1, o, 2), 0, "%s", weft_errmsg());
        weft_tensor_release(o[0]);
        weft_tensor_release(o[1]);
        weft_tensor_release(w);
    }
    s->len = s->lens[s->turn++ % s->nlens];
    s->x = iota_i64(s->len);
    s->outs[0] = s->outs[1] = NULL;
    s->c = NULL;
}

static int fn_run(void *p)
{
    fn_st *s = p;
    if (s->concrete) {
        weft_spec sp = { .dtype = WEFT_I64, .rank = 1, .dims = { s->len } };
        return weft_function_get_concrete(s->f, &sp, 1, &s->c);
    }
    weft_arg a = weft_arg_tensor(s->x);
    int rc = weft_function_call(s->f, &a, 1, s->outs, 2);
    if (rc != 0 && (s->outs[0] || s->outs[1]))
        return 1;  /* outputs must stay unset on failure */
    return rc;
}

static int fn_check(void *p)
{
    fn_st *s = p;
    if (s->concrete) {
        /* Run the concrete function (no fault) and check that. */
        int rc = weft_concrete_call(s->c, &s->x, 1, s->outs, 2);
        if (rc != 0)
            return rc;
    }
    const int64_t *sum = weft_tensor_data(s->outs[0]);
    const int64_t *neg = weft_tensor_data(s->outs[1]);
    if (!sum || !neg || weft_tensor_numel(s->outs[0]) != 1 || *sum != mix_expect(s->len)
        || weft_tensor_numel(s->outs[1]) != s->len || neg[s->len - 1] != -(s->len - 1))
        return 2;
    return 0;
}

static void fn_undo(void *p)
{
    fn_st *s = p;
    weft_tensor_release(s->outs[0]);
    weft_tensor_release(s->outs[1]);
    s->outs[0] = s->outs[1] = NULL;
    weft_tensor_release(s->x);
    s->x = NULL;
}

static void fn_sweep(const char *name, fn_st *s)
{
    if (s->nlens == 0) {
        s->lens[0] = 5;
        s->nlens = 1;
    }
    op o = { name, fn_prepare, fn_run, fn_check, fn_undo, s };
    cr_expect_geq(sweep(&o), 1, "%s: no allocation to fail", name);
    weft_function_destroy(&s->f);
}

/* The first call of a new function: trace, compile, cache, run. */
Test(faults, first_call_traces)
{
    need_fault_injection();
    fn_st s = { .fresh = true };
    fn_sweep("weft_function_call (trace)", &s);
}

/* weft_function_get_concrete: trace and compile without running. */
Test(faults, get_concrete)
{
    need_fault_injection();
    fn_st s = { .fresh = true, .concrete = true };
    fn_sweep("weft_function_get_concrete", &s);
}

/* A cached signature: only running the compiled program allocates. */
Test(faults, cached_call)
{
    need_fault_injection();
    fn_st s = { .warm_len = 5 };
    fn_sweep("weft_function_call (hit)", &s);
}

/* max_cached 1 and three signatures in turn: every call evicts and
 * inserts. */
Test(faults, evicting_calls)
{
    need_fault_injection();
    fn_st s = { .max_cached = 1, .lens = { 3, 4, 5 }, .nlens = 3 };
    fn_sweep("weft_function_call (evicting)", &s);
}

/* WEFT_REDUCE_RETRACING: a second signature relaxes the first. */
Test(faults, relaxed_retrace)
{
    need_fault_injection();
    /* Each run: a new function, called once with i64[3] (clean), then the
     * swept call with i64[6] traces again with the dim relaxed. */
    fn_st s = { .fresh = true, .flags = WEFT_REDUCE_RETRACING, .warm_len = 3, .lens = { 6 },
                .nlens = 1 };
    fn_sweep("weft_function_call (reduce retracing)", &s);
}

/* WEFT_RUN_EAGERLY: every call runs the body on eager values. */
Test(faults, eager_function)
{
    need_fault_injection();
    fn_st s = { .flags = WEFT_RUN_EAGERLY };
    fn_sweep("weft_function_call (WEFT_RUN_EAGERLY)", &s);
}

/* ---- Eager ops. -------------------------------------------------------- */

typedef struct eager_st {
    weft_tensor *x, *out;
} eager_st;

static void eager_prepare(void *p)
{
    eager_st *s = p;
    s->x = iota_i64(8);
    s->out = NULL;
}

static int eager_run(void *p)
{
    eager_st *s = p;
    weft_ctx *cx = NULL;
    int rc = weft_eager_begin(rt, &cx);
    if (rc != 0)
        return cx ? 1 : rc;
    weft_value *x = weft_eager_value(cx, s->x);
    weft_value *y = weft_add(cx, weft_mul(cx, x, x), weft_const_i64(cx, 1));
    int64_t d[2] = { 2, 4 };
    y = weft_reshape(cx, y, 2, d);
    y = weft_sum(cx, y, 1);
    y = weft_cast(cx, y, WEFT_F64);
    rc = weft_ctx_status(cx);
    if (rc == 0)
        s->out = weft_tensor_retain(weft_value_tensor(y));
    else if (y)
        rc = 1;
    weft_eager_end(&cx);
    return rc;
}

static int eager_check(void *p)
{
    eager_st *s = p;
    const double *v = weft_tensor_data(s->out);
    /* rows 0..3 and 4..7 of i*i + 1 summed: 18 and 130. */
    return v && weft_tensor_numel(s->out) == 2 && v[0] == 18.0 && v[1] == 130.0 ? 0 : 1;
}

static void eager_undo(void *p)
{
    eager_st *s = p;
    weft_tensor_release(s->out);
    weft_tensor_release(s->x);
    s->out = s->x = NULL;
}

Test(faults, eager_ops)
{
    need_fault_injection();
    eager_st s = { 0 };
    op o = { "eager ops", eager_prepare, eager_run, eager_check, eager_undo, &s };
    cr_expect_geq(sweep(&o), 3);
}

/* ---- map, traced and eager. ------------------------------------------- */

static int body_sq(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_mul(cx, args[0], args[0]);
    return weft_ctx_status(cx);
}

static weft_function *g_sq;

static int body_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_sum(cx, weft_map(cx, g_sq, args[0], 2), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

typedef struct map_st {
    bool eager;
    weft_function *f;
    weft_tensor *x, *out;
} map_st;

static void map_prepare(void *p)
{
    map_st *s = p;
    weft_function_destroy(&s->f);
    weft_function_destroy(&g_sq);
    weft_function_desc d = { .name = "sq", .body = body_sq, .n_args = 1, .n_outs = 1 };
    cr_assert_eq(weft_function_create(rt, &d, &g_sq), 0);
    weft_function_desc m = { .name = "map", .body = body_map, .n_args = 1, .n_outs = 1,
                             .flags = s->eager ? WEFT_RUN_EAGERLY : 0 };
    cr_assert_eq(weft_function_create(rt, &m, &s->f), 0);
    s->x = iota_i64(6);
    s->out = NULL;
}

static int map_run(void *p)
{
    map_st *s = p;
    weft_arg a = weft_arg_tensor(s->x);
    return weft_function_call(s->f, &a, 1, &s->out, 1);
}

static int map_check(void *p)
{
    map_st *s = p;
    const int64_t *v = weft_tensor_data(s->out);
    return v && *v == 0 + 1 + 4 + 9 + 16 + 25 ? 0 : 1;
}

static void map_undo(void *p)
{
    map_st *s = p;
    weft_tensor_release(s->out);
    weft_tensor_release(s->x);
    s->out = s->x = NULL;
}

static void map_sweep(bool eager)
{
    map_st s = { .eager = eager };
    op o = { eager ? "weft_map (eager)" : "weft_map (traced)", map_prepare, map_run, map_check,
             map_undo, &s };
    cr_expect_geq(sweep(&o), 3);
    weft_function_destroy(&s.f);
    weft_function_destroy(&g_sq);
}

Test(faults, map_traced)
{
    need_fault_injection();
    map_sweep(false);
}

Test(faults, map_eager)
{
    need_fault_injection();
    map_sweep(true);
}

/* ---- Composition and control flow, traced and eager. ------------------ */

/* f(x) = the sum of both outputs of a host call on
 *   map_ex(x2 -> x2 + sum(x) | x2 = while(i < 3) (i + 1, v + v) from
 *   (0, cond(sum(x) > 0, neg, sq, weft_call(sq, x)))) */
typedef struct ctl_fns { weft_function *sq, *neg, *below3, *twice, *addc; } ctl_fns;

static ctl_fns ctl;

static int body_neg(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}

static int body_below3(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_lt(cx, args[0], weft_const_i64(cx, 3));
    return weft_ctx_status(cx);
}

static int body_twice(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_add(cx, args[0], weft_const_i64(cx, 1));
    outs[1] = weft_add(cx, args[1], args[1]);
    return weft_ctx_status(cx);
}

static int body_addc(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_add(cx, args[0], args[1]);
    return weft_ctx_status(cx);
}

static int copy_twice(weft_tensor *const *in, size_t n_in, weft_tensor **out, size_t n_out,
                      void *user)
{
    (void)n_in;
    (void)user;
    for (size_t k = 0; k < n_out; k++)
        out[k] = weft_tensor_retain(in[0]);
    return 0;
}

static int body_ctl(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *sq = NULL, *c = NULL, *loop[2], *m = NULL, *h[2];
    weft_value *total = weft_sum(cx, args[0], WEFT_ALL_AXES);
    weft_value *p = weft_gt(cx, total, weft_const_i64(cx, 0));
    if (weft_call(cx, ctl.sq, args, 1, &sq, 1) < 0 ||
        weft_cond(cx, p, ctl.neg, ctl.sq, &sq, 1, &c, 1) < 0 ||
        weft_while_loop(cx, ctl.below3, ctl.twice, (weft_value *[]){ weft_const_i64(cx, 0), c },
                        2, loop) < 0 ||
        weft_map_ex(cx, ctl.addc, &loop[1], 1, &total, 1, &m, 1, 2) < 0)
        return weft_ctx_status(cx);
    weft_spec s;
    weft_value_spec(m, &s);
    if (weft_host_call_ex(cx, copy_twice, NULL, &m, 1, (weft_spec[]){ s, s }, 2, h, 0) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_add(cx, weft_sum(cx, h[0], WEFT_ALL_AXES), weft_sum(cx, h[1], WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

static weft_function *ctl_fn(const char *name, weft_body_fn body, size_t n_args, size_t n_outs,
                             unsigned flags)
{
    weft_function_desc d = { .name = name, .body = body, .n_args = n_args, .n_outs = n_outs,
                             .flags = flags };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static void ctl_destroy(map_st *s)
{
    weft_function_destroy(&s->f);
    weft_function_destroy(&ctl.sq);
    weft_function_destroy(&ctl.neg);
    weft_function_destroy(&ctl.below3);
    weft_function_destroy(&ctl.twice);
    weft_function_destroy(&ctl.addc);
}

static void ctl_prepare(void *p)
{
    map_st *s = p;
    ctl_destroy(s);
    ctl.sq = ctl_fn("sq", body_sq, 1, 1, 0);
    ctl.neg = ctl_fn("neg", body_neg, 1, 1, 0);
    ctl.below3 = ctl_fn("below3", body_below3, 2, 1, 0);
    ctl.twice = ctl_fn("twice", body_twice, 2, 2, 0);
    ctl.addc = ctl_fn("addc", body_addc, 2, 1, 0);
    s->f = ctl_fn("ctl", body_ctl, 1, 1, s->eager ? WEFT_RUN_EAGERLY : 0);
    s->x = iota_i64(6);
    s->out = NULL;
}

static int ctl_check(void *p)
{
    map_st *s = p;
    const int64_t *v = weft_tensor_data(s->out);
    /* -(x * x) * 8 + 15 for x = 0..5, summed (-350), twice. */
    return v && *v == -700 ? 0 : 1;
}

static void ctl_sweep(bool eager)
{
    map_st s = { .eager = eager };
    op o = { eager ? "control flow (eager)" : "control flow (traced)", ctl_prepare, map_run,
             ctl_check, map_undo, &s };
    cr_expect_geq(sweep(&o), 3);
    ctl_destroy(&s);
}

Test(faults, control_traced)
{
    need_fault_injection();
    ctl_sweep(false);
}

Test(faults, control_eager)
{
    need_fault_injection();
    ctl_sweep(true);
}

/* ---- weft_runtime_create. --------------------------------------------- */

typedef struct rt_st {
    weft_runtime *r;
} rt_st;

static int rt_run(void *p)
{
    rt_st *s = p;
    weft_config cfg = { .workers = 3 };
    s->r = (weft_runtime *)s;
    int rc = weft_runtime_create(&cfg, &s->r);
    if (rc != 0 && s->r != NULL)
        return 1;
    return rc;
}

static int rt_idx(size_t i, void *ctx)
{
    __atomic_fetch_add((long *)ctx, (long)i, __ATOMIC_SEQ_CST);
    return 0;
}

static int rt_check(void *p)
{
    rt_st *s = p;
    long sum = 0;  /* (atomic) */
    int rc = weft_parallel_map(s->r, 100, 0, rt_idx, &sum);
    return rc == 0 && __atomic_load_n(&sum, __ATOMIC_SEQ_CST) == 4950 &&
           weft_runtime_workers(s->r) == 3 ? 0 : 1;
}

static void rt_undo(void *p)
{
    rt_st *s = p;
    weft_runtime_destroy(&s->r);
}

Test(faults, runtime_create)
{
    need_fault_injection();
    rt_st s = { 0 };
    op o = { "weft_runtime_create", NULL, rt_run, rt_check, rt_undo, &s };
    cr_expect_geq(sweep(&o), 2);
}

/* ---- pthread_create failing in weft_runtime_create. --------------------
 * weft has no hook on thread creation, so the test interposes
 * pthread_create itself: the executable's definition wins over libc's for
 * the statically linked library.  Sanitizer runtimes intercept
 * pthread_create the same way, so this runs in plain builds only. */
#ifndef UNDER_SANITIZER
static long pthread_fail_countdown;  /* 0: off; n: the nth call fails */

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static pthread_create_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    long left = __atomic_load_n(&pthread_fail_countdown, __ATOMIC_SEQ_CST);
    if (left > 0 && __atomic_sub_fetch(&pthread_fail_countdown, 1, __ATOMIC_SEQ_CST) == 0)
        return EAGAIN;
    return real(t, attr, fn, arg);
}

Test(faults, pthread_create_fails)
{
    for (long k = 1; k <= 4; k++) {
        weft_config cfg = { .workers = 4 };
        weft_runtime *r = (weft_runtime *)&cfg;
        __atomic_store_n(&pthread_fail_countdown, k, __ATOMIC_SEQ_CST);
        int rc = weft_runtime_create(&cfg, &r);
        __atomic_store_n(&pthread_fail_countdown, 0, __ATOMIC_SEQ_CST);
        cr_assert_eq(rc, WEFT_EAGAIN, "thread %ld failing: %s (%s)", k, weft_err_name(rc),
                     weft_errmsg());
        cr_assert_null(r, "thread %ld failing: *out must be NULL", k);
        cr_assert(strstr(weft_errmsg(), "weft_runtime_create") != NULL, "%s", weft_errmsg());
        /* The runtime of the fixture and a new one still work. */
        rt_st s = { 0 };
        cr_assert_eq(rt_run(&s), 0, "%s", weft_errmsg());
        cr_assert_eq(rt_check(&s), 0);
        rt_undo(&s);
        long sum = 0;  /* (atomic) */
        cr_assert_eq(weft_parallel_map(rt, 10, 0, rt_idx, &sum), 0);
        cr_assert_eq(__atomic_load_n(&sum, __ATOMIC_SEQ_CST), 45);
    }
}
#endif

/* ---- Cancellation. -----------------------------------------------------
 * After one iteration of a 1e6-iteration loop fails, only the work already
 * running may finish: iterations that start after the failure are counted
 * and bounded.  A range handed to a callback counts as started when the
 * callback sees it, so a range the runtime began just before the failure
 * may be seen after it: the bound is 1% of n or the ranges that the
 * computing threads (workers + the caller) can hold at once, whichever is
 * larger.  The failure is marked just before the failing callback returns,
 * and the runtime learns of it only at the return: a failing thread
 * preempted in between (4 workers on 2 cores) let the others start empty
 * ranges by the dozen, each counted as started after the failure.  So a
 * callback that starts after the failure takes 1 ms, as real work would,
 * which gives the failing thread the CPU to return. */
#define CANCEL_N 1000000u
#define FAIL_AFTER 1000

typedef struct cancel_st {
    /* All atomic. */
    long started;
    int failed;
    long after;       /* iterations started once failed was set */
    long widest;      /* the largest range handed to the callback */
    int slow_calls;   /* callbacks slowed by started_after_failure */
} cancel_st;

/* Counts n iterations started after the failure, which then take 1 ms
 * (the first 64 calls: by then the failing thread has returned, and a loop
 * that does not stop fails on the count rather than on the timeout). */
static void started_after_failure(cancel_st *c, long n)
{
    __atomic_fetch_add(&c->after, n, __ATOMIC_SEQ_CST);
    if (__atomic_fetch_add(&c->slow_calls, 1, __ATOMIC_SEQ_CST) < 64)
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
}

static int cancel_index(size_t i, void *ctx)
{
    (void)i;
    cancel_st *c = ctx;
    if (__atomic_load_n(&c->failed, __ATOMIC_SEQ_CST))
        started_after_failure(c, 1);
    if (__atomic_fetch_add(&c->started, 1, __ATOMIC_SEQ_CST) == FAIL_AFTER) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_SEQ_CST);
        return WEFT_ECANCELED;
    }
    return 0;
}

static int cancel_range(size_t b, size_t e, void *ctx)
{
    cancel_st *c = ctx;
    long width = (long)(e - b);
    long w = __atomic_load_n(&c->widest, __ATOMIC_SEQ_CST);
    while (width > w && !__atomic_compare_exchange_n(&c->widest, &w, width, true, __ATOMIC_SEQ_CST,
                                                     __ATOMIC_SEQ_CST))
        ;
    if (__atomic_load_n(&c->failed, __ATOMIC_SEQ_CST))
        started_after_failure(c, (long)(e - b));
    long before = __atomic_fetch_add(&c->started, (long)(e - b), __ATOMIC_SEQ_CST);
    if (before <= FAIL_AFTER && FAIL_AFTER < before + (long)(e - b)) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_SEQ_CST);
        return WEFT_EHOST;
    }
    return 0;
}

static weft_runtime *cancel_runtime(void)
{
    return test_runtime(4);
}

Test(faults, cancel_parallel_map, .timeout = 120)
{
    weft_runtime *r = cancel_runtime();
    unsigned bounds[3] = { 0, 1, 64 };
    for (int k = 0; k < 3; k++) {
        cancel_st c = { 0 };
        int rc = weft_parallel_map(r, CANCEL_N, bounds[k], cancel_index, &c);
        cr_assert_eq(rc, WEFT_ECANCELED, "parallel_iterations %u: %s", bounds[k], weft_err_name(rc));
        cr_assert_lt(__atomic_load_n(&c.after, __ATOMIC_SEQ_CST), CANCEL_N / 100,
                     "parallel_iterations %u: %ld iterations started after the failure",
                     bounds[k], __atomic_load_n(&c.after, __ATOMIC_SEQ_CST));
        cr_assert_lt(__atomic_load_n(&c.started, __ATOMIC_SEQ_CST), CANCEL_N / 100 + FAIL_AFTER);
        cr_log_info("parallel_map bound %u: %ld started after the failure", bounds[k],
                    __atomic_load_n(&c.after, __ATOMIC_SEQ_CST));
    }
    weft_runtime_destroy(&r);
}

Test(faults, cancel_parallel_for, .timeout = 120)
{
    weft_runtime *r = cancel_runtime();
    size_t grains[3] = { 0, 1, 100 };
    for (int k = 0; k < 3; k++) {
        cancel_st c = { 0 };
        int rc = weft_parallel_for(r, CANCEL_N, grains[k], cancel_range, &c);
        cr_assert_eq(rc, WEFT_EHOST, "grain %zu: %s", grains[k], weft_err_name(rc));
        long in_flight = (long)(weft_runtime_workers(r) + 1) *
                         __atomic_load_n(&c.widest, __ATOMIC_SEQ_CST);
        long bound = in_flight > (long)CANCEL_N / 100 ? in_flight : (long)CANCEL_N / 100;
        cr_assert_lt(__atomic_load_n(&c.after, __ATOMIC_SEQ_CST), bound,
                     "grain %zu: %ld iterations started after the failure (bound %ld)", grains[k],
                     __atomic_load_n(&c.after, __ATOMIC_SEQ_CST), bound);
        cr_assert_lt(__atomic_load_n(&c.widest, __ATOMIC_SEQ_CST), (long)CANCEL_N / 4,
                     "grain %zu: ranges too coarse to cancel",
                     grains[k]);
        cr_log_info("parallel_for grain %zu: %ld started after the failure, %ld in all", grains[k],
                    __atomic_load_n(&c.after, __ATOMIC_SEQ_CST),
                    __atomic_load_n(&c.started, __ATOMIC_SEQ_CST));
    }
    weft_runtime_destroy(&r);
}

/* ---- Validation comes before allocation. ------------------------------
 * Bad input is rejected before anything is allocated: with the very next
 * allocation armed to fail, each call still returns its validation code and
 * the fault is never reached. */
static int bad_overflow(void)
{
    int64_t d[2] = { INT64_C(1) << 40, INT64_C(1) << 40 };
    weft_tensor *t = NULL;
    return weft_tensor_create(WEFT_F32, 2, d, NULL, &t);
}

static int bad_dtype(void)
{
    int64_t d = 4;
    weft_tensor *t = NULL;
    return weft_tensor_create((weft_dtype)99, 1, &d, NULL, &t);
}

static int bad_rank(void)
{
    int64_t d[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    weft_tensor *t = NULL;
    return weft_tensor_create(WEFT_I32, 9, d, NULL, &t);
}

static int bad_runtime(void)
{
    weft_config cfg = { .workers = 1u << 20 };
    weft_runtime *r = NULL;
    return weft_runtime_create(&cfg, &r);
}

static weft_function *g_v;
static weft_tensor *g_vx;

static int bad_n_args(void)
{
    weft_arg a[2] = { weft_arg_tensor(g_vx), weft_arg_tensor(g_vx) };
    weft_tensor *o[2];
    return weft_function_call(g_v, a, 2, o, 2);
}

static int bad_null_tensor(void)
{
    weft_arg a = weft_arg_tensor(NULL);
    weft_tensor *o[2];
    return weft_function_call(g_v, &a, 1, o, 2);
}

static int bad_fn_create(void)
{
    weft_spec s = { .dtype = WEFT_F32, .rank = 9 };
    weft_function_desc d = { .body = body_mix, .n_args = 1, .n_outs = 2, .input_signature = &s };
    weft_function *f = NULL;
    return weft_function_create(rt, &d, &f);
}

static int bad_concrete(void)
{
    weft_spec s = { .dtype = (weft_dtype)7, .rank = 1, .dims = { 2 } };
    weft_concrete *c = NULL;
    return weft_function_get_concrete(g_v, &s, 1, &c);
}

Test(faults, validation_before_allocation)
{
    need_fault_injection();
    g_v = mix_function(0, 0);
    g_vx = iota_i64(4);
    static const struct {
        const char *what;
        int (*fn)(void);
        int code;
    } cases[] = {
        { "weft_tensor_create numel overflow", bad_overflow, WEFT_EINVAL },
        { "weft_tensor_create dtype 99", bad_dtype, WEFT_EINVAL },
        { "weft_tensor_create rank 9", bad_rank, WEFT_EINVAL },
        { "weft_runtime_create 2^20 workers", bad_runtime, WEFT_EINVAL },
        { "weft_function_call n_args 2", bad_n_args, WEFT_EINVAL },
        { "weft_function_call NULL tensor", bad_null_tensor, WEFT_EINVAL },
        { "weft_function_create signature rank 9", bad_fn_create, WEFT_EINVAL },
        { "weft_function_get_concrete dtype 7", bad_concrete, WEFT_EINVAL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft__fault_fail_after(1);
        int rc = cases[i].fn();
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        cr_expect_eq(rc, cases[i].code, "%s: %s (%s)", cases[i].what, weft_err_name(rc),
                     weft_errmsg());
        cr_expect(!hit, "%s: allocated before rejecting the input", cases[i].what);
    }
    weft_tensor_release(g_vx);
    weft_function_destroy(&g_v);
}

/* ---- Shape ops, traced for unknown dims and eager. --------------------- */

static int body_shape_ops(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *x = args[0];   /* i64[8]: 0..7 */
    weft_value *p[2], *terms[7];
    weft_split(cx, x, 2, NULL, 0, p);
    weft_value *c = weft_concat(cx, (weft_value *[]){ p[1], p[0], p[1], p[0] }, 4, 0);
    weft_value *t = weft_transpose(cx, weft_stack(cx, p, 2, 0), NULL);
    terms[0] = c;
    terms[1] = weft_gather(cx, c, weft_shape(cx, t), 0);
    terms[2] = weft_cumsum(cx, t, 0);
    terms[3] = weft_fill_like(cx, x, 1);
    terms[4] = weft_tile(cx, weft_expand_dims(cx, x, 0), (int64_t[]){ 2, 1 });
    terms[5] = weft_broadcast_to(cx, x, 2, (int64_t[]){ 3, -1 });
    terms[6] = weft_argmax(cx, weft_transpose(cx, t, NULL), 1);
    weft_value *sum = weft_const_i64(cx, 0);
    for (int i = 0; i < 7; i++)
        sum = weft_add(cx, sum, weft_sum(cx, terms[i], WEFT_ALL_AXES));
    outs[0] = sum;
    return weft_ctx_status(cx);
}

/* A function of one i64[?] argument (0..7), traced or eager (flags). */
typedef struct shape_st {
    unsigned flags;
    weft_body_fn body;
    weft_function *f;
    weft_tensor *x, *out;
} shape_st;

static void shape_prepare(void *p)
{
    shape_st *s = p;
    weft_function_destroy(&s->f);
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("i64[?]", &sig), 0);
    weft_function_desc d = { .name = "shape_ops", .body = s->body, .n_args = 1,
                             .n_outs = 1, .input_signature = &sig, .flags = s->flags };
    cr_assert_eq(weft_function_create(rt, &d, &s->f), 0);
    s->x = iota_i64(8);
    s->out = NULL;
}

static int shape_run(void *p)
{
    shape_st *s = p;
    weft_arg a = weft_arg_tensor(s->x);
    return weft_function_call(s->f, &a, 1, &s->out, 1);
}

static int shape_check(void *p)
{
    shape_st *s = p;
    const int64_t *v = weft_tensor_data(s->out);
    /* 56 (concat) + 6 (gather) + 60 (cumsum) + 8 + 56 (tile) + 84
     * (broadcast) + 6 (argmax). */
    return v && *v == 276 ? 0 : 1;
}

static void shape_undo(void *p)
{
    shape_st *s = p;
    weft_tensor_release(s->out);
    weft_tensor_release(s->x);
    s->out = s->x = NULL;
}

/* Sweeps a function of body traced, then eagerly; what names both. */
static void sweep_both_modes(const char *what, weft_body_fn body, int (*check)(void *))
{
    need_fault_injection();
    for (unsigned flags = 0; flags <= WEFT_RUN_EAGERLY; flags += WEFT_RUN_EAGERLY) {
        char name[64];
        snprintf(name, sizeof name, "%s (%s)", what, flags ? "eager" : "traced");
        shape_st s = { .flags = flags, .body = body };
        op o = { name, shape_prepare, shape_run, check, shape_undo, &s };
        cr_expect_geq(sweep(&o), 3);
        weft_function_destroy(&s.f);
    }
}

Test(faults, shape_ops)
{
    sweep_both_modes("shape ops", body_shape_ops, shape_check);
}

/* ---- weft_gradients, traced for unknown dims and eager. ---------------- */

static int body_grad_f(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *m = weft_reshape(cx, args[0], 2, (int64_t[]){ 2, -1 });
    weft_value *sq = weft_mul(cx, weft_square(cx, m), weft_const_f64(cx, 1.5));
    outs[0] = weft_add(cx, weft_sum(cx, sq, 1), weft_sum(cx, m, 1));
    return weft_ctx_status(cx);
}

static int body_grad(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *x = weft_cast(cx, args[0], WEFT_F64), *g = NULL;
    if (weft_gradients(cx, body_grad_f, NULL, &x, 1, 1, NULL, &g) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_sum(cx, g, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int grad_check(void *p)
{
    shape_st *s = p;
    const double *v = weft_tensor_data(s->out);
    /* d/dx (1.5 x^2 + x) = 3x + 1 over 0..7: 3 * 28 + 8. */
    return v && *v == 92.0 ? 0 : 1;
}

Test(faults, gradients)
{
    sweep_both_modes("gradients", body_grad, grad_check);
}

/* A map over rows unknown while tracing, with a capture: traced, its
 * gradient is one map_gradient node whose rows run over the workers. */
static weft_function *g_row;

static int body_row(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_mul(cx, weft_square(cx, args[0]), args[1]);
    return weft_ctx_status(cx);
}

static int body_grad_map_f(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *y = NULL;
    if (weft_map_ex(cx, g_row, &args[0], 1, &args[1], 1, &y, 1, 2) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_sum(cx, y, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int body_grad_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_value *xw[2] = { weft_reshape(cx, weft_cast(cx, args[0], WEFT_F64), 2,
                                       (int64_t[]){ -1, 2 }),
                          weft_fill(cx, WEFT_F64, 1, (int64_t[]){ 2 }, 1.5) };
    weft_value *g[2] = { NULL, NULL };
    if (weft_gradients(cx, body_grad_map_f, NULL, xw, 2, 2, NULL, g) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_add(cx, weft_sum(cx, g[0], WEFT_ALL_AXES), weft_sum(cx, g[1], WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

static int grad_map_check(void *p)
{
    shape_st *s = p;
    const double *v = weft_tensor_data(s->out);
    /* Rows (0, 1) .. (6, 7), w = 1.5: d/dx 3x sums to 84; d/dw the sums
     * of the squares, 56 and 84. */
    return v && *v == 224.0 ? 0 : 1;
}

Test(faults, gradients_through_a_map)
{
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("f64[2]", &sig[0]), 0);
    sig[1] = sig[0];
    weft_function_desc d = { .name = "row", .body = body_row, .n_args = 2, .n_outs = 1,
                             .input_signature = sig };
    cr_assert_eq(weft_function_create(rt, &d, &g_row), 0);
    sweep_both_modes("gradients through a map", body_grad_map, grad_map_check);
    weft_function_destroy(&g_row);
}
