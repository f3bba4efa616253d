/* The check of the weft_gradients suites: a body's gradients, computed
 * eagerly and traced on every runtime of worker_runtimes.h (the same bits
 * each time), against central differences of the body in f64 on the
 * suite's runtime rt (suite_runtimes.h).
 *
 *     grad_case c = { body, user, n_args, n_wrt };
 *     grad_arg x = { 2, { 3, 4 }, values };
 *     expect_gradients(&c, &x, "what"); */
#ifndef WEFT_GRAD_CHECK_H
#define WEFT_GRAD_CHECK_H

#include <math.h>

#include "op_calls.h"
#include "suite_runtimes.h"

#define GRAD_CHECK_MAX_ELEMENTS 128

/* A body and what weft_gradients is asked of it. */
typedef struct grad_case {
    weft_body_fn f;
    const void  *user;
    size_t       n_xs, n_wrt;
} grad_case;

/* An f64 argument: its shape and its values. */
typedef struct grad_arg {
    int          rank;
    int64_t      dims[4];
    const double *v;
} grad_arg;

/* outs[0] = f(args), outs[1 + j] = its gradient for args[j]. */
static inline int grad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const grad_case *c = user;
    return weft_gradients(cx, c->f, (void *)c->user, a, c->n_xs, c->n_wrt, &outs[0], &outs[1]);
}

static inline weft_tensor *grad_arg_tensor(const grad_arg *a, int64_t bump_at, double bump)
{
    int64_t n = test_numel(a->rank, a->dims);
    double v[GRAD_CHECK_MAX_ELEMENTS];
    cr_assert(n <= GRAD_CHECK_MAX_ELEMENTS);
    for (int64_t i = 0; i < n; i++)
        v[i] = a->v[i] + (i == bump_at ? bump : 0.0);
    return test_tensor(WEFT_F64, a->rank, a->dims, v);
}

/* The sum of f's result's elements at args, args[j] element i moved by h. */
static inline double grad_f_sum(const grad_case *c, const grad_arg *args, size_t j, int64_t i,
                                double h)
{
    weft_tensor *ts[OP_CALLS_MAX_ARGS], *y = NULL;
    for (size_t k = 0; k < c->n_xs; k++)
        ts[k] = grad_arg_tensor(&args[k], k == j ? i : -1, h);
    cr_assert_eq(op_call(rt, c->f, (void *)c->user, ts, c->n_xs, &y, 1, true), 0, "%s",
                 weft_errmsg());
    double s = 0;
    for (int64_t e = 0; e < weft_tensor_numel(y); e++)
        s += test_element(y, e);
    for (size_t k = 0; k < c->n_xs; k++)
        weft_tensor_release(ts[k]);
    weft_tensor_release(y);
    return s;
}

/* weft's gradients of c at args against central differences. */
static inline void expect_gradients(const grad_case *c, const grad_arg *args, const char *what)
{
    weft_tensor *ts[OP_CALLS_MAX_ARGS], *outs[OP_CALLS_MAX_OUTS];
    cr_assert(c->n_xs <= OP_CALLS_MAX_ARGS && c->n_wrt + 1 <= OP_CALLS_MAX_OUTS);
    for (size_t k = 0; k < c->n_xs; k++)
        ts[k] = grad_arg_tensor(&args[k], -1, 0);
    op_results_everywhere(grad_body, (void *)c, ts, c->n_xs, outs, c->n_wrt + 1, what);
    double y = 0;
    for (int64_t e = 0; e < weft_tensor_numel(outs[0]); e++)
        y += test_element(outs[0], e);
    cr_expect_float_eq(y, grad_f_sum(c, args, 0, -1, 0), 1e-12 * (1 + fabs(y)), "%s: y", what);
    for (size_t j = 0; j < c->n_wrt; j++) {
        test_assert_shape(outs[1 + j], WEFT_F64, args[j].rank, args[j].dims, what);
        for (int64_t i = 0; i < test_numel(args[j].rank, args[j].dims); i++) {
            const double h = 1e-6;
            double want = (grad_f_sum(c, args, j, i, h) - grad_f_sum(c, args, j, i, -h)) / (2 * h);
            double got = test_element(outs[1 + j], i);
            cr_expect(fabs(got - want) <= 1e-5 * (1 + fabs(want)),
                      "%s: d/dx%zu[%lld] is %.9g, differences give %.9g", what, j, (long long)i,
                      got, want);
        }
    }
    for (size_t k = 0; k < c->n_xs; k++)
        weft_tensor_release(ts[k]);
    for (size_t k = 0; k <= c->n_wrt; k++)
        weft_tensor_release(outs[k]);
}

#endif
