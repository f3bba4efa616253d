/* Running one op's body as a function, for the op suites that check
 * results across worker counts and modes and the messages of bad calls:
 * op_call runs it once, op_results_everywhere on every runtime of
 * worker_runtimes.h eagerly and traced (the same bits each time),
 * op_expect_errors a table of refused calls in both modes; op_uniform
 * draws their inputs. */
#ifndef WEFT_OP_CALLS_H
#define WEFT_OP_CALLS_H

#include <string.h>

#include "worker_runtimes.h"

#define OP_CALLS_MAX_ARGS 6
#define OP_CALLS_MAX_OUTS 6

/* body(args[0..n_args)) on r, eagerly or traced, into outs[0..n_outs).
 * Returns the call's code. */
static inline int op_call(weft_runtime *r, weft_body_fn body, void *user,
                          weft_tensor *const *args, size_t n_args, weft_tensor **outs,
                          size_t n_outs, bool eager)
{
    weft_function_desc d = { .name = "op", .body = body, .user = user,
                             .n_args = (uint32_t)n_args, .n_outs = (uint32_t)n_outs,
                             .flags = eager ? WEFT_RUN_EAGERLY : 0 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(r, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a[OP_CALLS_MAX_ARGS];
    cr_assert(n_args <= OP_CALLS_MAX_ARGS && n_outs <= OP_CALLS_MAX_OUTS);
    for (size_t i = 0; i < n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    for (size_t k = 0; k < n_outs; k++)
        outs[k] = NULL;
    int rc = weft_function_call(f, a, n_args, outs, n_outs);
    weft_function_destroy(&f);
    return rc;
}

static inline bool op_same_bits(const weft_tensor *x, const weft_tensor *y)
{
    size_t bytes = (size_t)weft_tensor_numel(x) * weft_dtype_size(weft_tensor_dtype(x));
    return weft_tensor_numel(x) == weft_tensor_numel(y) &&
           weft_tensor_dtype(x) == weft_tensor_dtype(y) &&
           memcmp(weft_tensor_data(x), weft_tensor_data(y), bytes) == 0;
}

/* The results into outs, the same bits eagerly and traced on every
 * runtime of rts[]; `what` names the case in a failure. */
static inline void op_results_everywhere(weft_body_fn body, void *user, weft_tensor *const *args,
                                         size_t n_args, weft_tensor **outs, size_t n_outs,
                                         const char *what)
{
    bool first = true;
    for (int k = 0; k < N_RT; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y[OP_CALLS_MAX_OUTS];
            cr_assert_eq(op_call(rts[k], body, user, args, n_args, first ? outs : y, n_outs,
                                 eager), 0, "%s: %s", what, weft_errmsg());
            if (first) {
                first = false;
                continue;
            }
            for (size_t o = 0; o < n_outs; o++) {
                cr_assert(op_same_bits(y[o], outs[o]), "%s: output %zu differs on %u workers (%s)",
                          what, o, rt_workers[k], eager ? "eager" : "traced");
                weft_tensor_release(y[o]);
            }
        }
}

/* r is of dtype dt and holds want[0..n) (rounded to f32 first for an
 * f32 r; NaN where want is NaN), with bits true bit for bit (so that
 * -0.0 and 0.0 differ); `what` names the case. */
static inline void op_expect_numbers(const weft_tensor *r, weft_dtype dt, const double *want,
                                     int64_t n, bool bits, const char *what)
{
    cr_assert_eq(weft_tensor_dtype(r), dt, "%s: dtype %s", what,
                 weft_dtype_name(weft_tensor_dtype(r)));
    cr_assert_eq(weft_tensor_numel(r), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(r));
    for (int64_t i = 0; i < n; i++) {
        double got = test_element(r, i), w = dt == WEFT_F32 ? (double)(float)want[i] : want[i];
        bool same = bits ? memcmp(&got, &w, sizeof got) == 0 : got == w;
        cr_assert(w != w ? got != got : same, "%s[%lld] is %.17g (%a), not %.17g (%a)", what,
                  (long long)i, got, got, w, w);
    }
}

/* op_expect_numbers by value (-0.0 == 0.0). */
static inline void op_expect_values(const weft_tensor *r, weft_dtype dt, const double *want,
                                    int64_t n, const char *what)
{
    op_expect_numbers(r, dt, want, n, false, what);
}

/* A function of body on r (one output) whose n_args arguments have the
 * specs sig[]: dims unknown there are traced once for every size. */
static inline weft_function *op_signature_function(weft_runtime *r, weft_body_fn body,
                                                   void *user, const weft_spec *sig,
                                                   size_t n_args)
{
    weft_function_desc d = { .name = "op", .body = body, .user = user,
                             .n_args = (uint32_t)n_args, .n_outs = 1, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(r, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

/* *f was traced exactly once (whatever sizes its calls had); destroys it. */
static inline void op_destroy_traced_once(weft_function **f)
{
    weft_function_stats st;
    weft_function_get_stats(*f, &st);
    cr_assert_eq(st.traces, 1, "traced %llu times", (unsigned long long)st.traces);
    weft_function_destroy(f);
}

/* A refused call: body's user is &which; the call fails with rc and a
 * message containing says. */
typedef struct op_error_case {
    int which;
    int rc;
    const char *says;
} op_error_case;

static inline void op_expect_errors(weft_runtime *r, weft_body_fn body,
                                    const op_error_case *cases, size_t n_cases,
                                    weft_tensor *const *args, size_t n_args)
{
    for (size_t s = 0; s < n_cases; s++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *out = NULL;
            int rc = op_call(r, body, (void *)&cases[s].which, args, n_args, &out, 1, eager);
            cr_assert_eq(rc, cases[s].rc, "case %d: %s", cases[s].which, weft_err_name(rc));
            cr_assert(strstr(weft_errmsg(), cases[s].says), "case %d: %s", cases[s].which,
                      weft_errmsg());
            cr_assert_null(out, "case %d", cases[s].which);
        }
}

/* A call refused only while tracing (a dim it needs is unknown there):
 * traced it fails with c->rc and a message containing c->says; eagerly it
 * succeeds, its first result released. */
static inline void op_expect_traced_error(weft_runtime *r, weft_body_fn body,
                                          const op_error_case *c, weft_tensor *const *args,
                                          size_t n_args)
{
    weft_tensor *out = NULL;
    cr_assert_eq(op_call(r, body, (void *)&c->which, args, n_args, &out, 1, false), c->rc,
                 "case %d traced: %s", c->which, weft_errmsg());
    cr_assert(strstr(weft_errmsg(), c->says), "case %d: %s", c->which, weft_errmsg());
    cr_assert_eq(op_call(r, body, (void *)&c->which, args, n_args, &out, 1, true), 0,
                 "case %d eager: %s", c->which, weft_errmsg());
    weft_tensor_release(out);
}

/* An elementwise op of one operand, for op_unary_values. */
typedef weft_value *(*op_unary_fn)(weft_ctx *cx, weft_value *a);

static inline int op_unary_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                void *user)
{
    outs[0] = (*(const op_unary_fn *)user)(cx, a[0]);
    return weft_ctx_status(cx);
}

/* f of the vector x[0..n) of dtype dt, into y[0..n): the same bits eagerly
 * and traced on every runtime of rts[]. */
static inline void op_unary_values(op_unary_fn f, weft_dtype dt, const double *x, int64_t n,
                                   double *y)
{
    weft_tensor *t = test_tensor(dt, 1, &n, x), *out;
    op_results_everywhere(op_unary_body, &f, &t, 1, &out, 1, "unary op");
    for (int64_t i = 0; i < n; i++)
        y[i] = test_element(out, i);
    weft_tensor_release(out);
    weft_tensor_release(t);
}

/* An elementwise op of two operands, for op_binary_values. */
typedef weft_value *(*op_binary_fn)(weft_ctx *cx, weft_value *a, weft_value *b);

static inline int op_binary_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                 void *user)
{
    outs[0] = (*(const op_binary_fn *)user)(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* f(a, b) of the vectors a[0..na) and b[0..n) of dtype dt, into y[0..n)
 * (na 1: a is a scalar, broadcast; otherwise na is n): the same bits
 * eagerly and traced on every runtime of rts[]. */
static inline void op_binary_values(op_binary_fn f, weft_dtype dt, const double *a, int64_t na,
                                    const double *b, int64_t n, double *y)
{
    weft_tensor *t[2] = { test_tensor(dt, na == 1 ? 0 : 1, &na, a), test_tensor(dt, 1, &n, b) };
    weft_tensor *out;
    op_results_everywhere(op_binary_body, &f, t, 2, &out, 1, "binary op");
    for (int64_t i = 0; i < n; i++)
        y[i] = test_element(out, i);
    weft_tensor_release(out);
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
}

/* f of f32 inputs is f of the same inputs in f64, rounded once: checked
 * at x[0..n) (each rounded to f32 first; n at most 64). */
static inline void op_expect_f32_from_f64(op_unary_fn f, const double *x, int64_t n,
                                          const char *what)
{
    double g[64], y32[64], y64[64];
    cr_assert(n <= 64);
    for (int64_t i = 0; i < n; i++)
        g[i] = (float)x[i];
    op_unary_values(f, WEFT_F32, g, n, y32);
    op_unary_values(f, WEFT_F64, g, n, y64);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(y32[i], (double)(float)y64[i], "%s at %g", what, g[i]);
}

/* A uniform draw in [-1, 1) from the xorshift state *s (not 0). */
static inline double op_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) * 0x1p-53 * 2 - 1;
}

#endif
