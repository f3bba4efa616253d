/* tf.linalg.experimental.conjugate_gradient on dense matrices, composed of
 * matvecs and elementwise ops in TensorFlow's steps.  TensorFlow runs a
 * while_loop; here the loop is unrolled max_iter times and an iteration
 * past the stop changes nothing (its state is selected away), so the
 * results are TensorFlow's.  Eagerly the unrolling stops where the loop
 * would; traced, every iteration's matvec is paid. */
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/iface.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#include <math.h>

/* The unrolled loop's bound: a larger one would trace a very large
 * program (about 25 ops an iteration). */
#define CG_MAX_ITER 1000

typedef struct cg_state {
    weft_value *i, *x, *r, *p, *gamma;
} cg_state;

/* TensorFlow's dot of the last axes, x^T y per batch element. */
static weft_value *dot(weft_ctx *cx, weft_value *x, weft_value *y)
{
    return weft_sum(cx, weft_mul(cx, x, y), -1);
}

/* v with a last axis of 1, to scale the vectors of the batch. */
static weft_value *per_vector(weft_ctx *cx, weft_value *v)
{
    return weft_expand_dims(cx, v, -1);
}

/* A square matrix [..., n, n] whose batch dims rhs [..., n] carries
 * (matvec broadcasts them): false with the context failing naming fn. */
static bool operator_ok(weft_ctx *cx, const char *fn, const char *name, weft_value *a,
                        weft_value *rhs)
{
    if (!weft__ops_square_matrices(cx, fn, name, a))
        return false;
    const weft_spec *sa = weft__value_spec(a), *sr = weft__value_spec(rhs);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (sr->rank < sa->rank - 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: rhs %s has fewer batch dims than %s %s",
                              fn, weft__spec_str(sr, s1, sizeof s1), name,
                              weft__spec_str(sa, s2, sizeof s2)), false;
    return true;
}

/* conjugate_gradient's operands in[0..n_in) (operator, rhs, then the
 * preconditioner and x, either NULL) and settings as the header states
 * them; false with the context failing naming fn. */
static bool operands_ok(weft_ctx *cx, const char *fn, weft_value *const *in, uint32_t n_in,
                        double tol, int max_iter)
{
    static const char *names[4] = { "operator", "rhs", "preconditioner", "x" };
    if (!weft__op_enter_optional(cx, fn, in, 2, n_in) ||
        !weft__ops_floats_alike(cx, fn, in, names, n_in))
        return false;
    if (!(tol >= 0) || isinf(tol))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: tol %g is not finite and >= 0", fn, tol),
               false;
    if (max_iter < 0 || max_iter > CG_MAX_ITER)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_iter %d is not in [0, %d] (the loop "
                              "is unrolled)", fn, max_iter, CG_MAX_ITER), false;
    const weft_spec *sr = weft__value_spec(in[1]);
    char s[WEFT__SPEC_STR_MAX];
    if (sr->rank < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: rhs %s is not [..., n] (rank known while "
                              "tracing)", fn, weft__spec_str(sr, s, sizeof s)), false;
    if (in[3] && !weft__spec_compatible(weft__value_spec(in[3]), sr)) {
        char s2[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s is not of rhs's shape %s", fn,
                              weft__spec_str(weft__value_spec(in[3]), s2, sizeof s2),
                              weft__spec_str(sr, s, sizeof s)), false;
    }
    return operator_ok(cx, fn, "operator", in[0], in[1]) &&
           (!in[2] || operator_ok(cx, fn, "preconditioner", in[2], in[1]));
}

/* One step of TensorFlow's cg_step, its divisors replaced by 1 where the
 * loop has stopped (so a converged state's 0 / 0 makes no NaN, for the
 * values or the gradients, in the iterations selected away). */
static cg_state cg_step(weft_ctx *cx, weft_value *a, weft_value *m, const cg_state *s,
                        weft_value *running)
{
    weft_value *one = weft_const_f64(cx, 1);
    weft_value *z = weft_matvec(cx, a, s->p, false);
    weft_value *alpha = weft_truediv(cx, s->gamma, weft_where(cx, running, dot(cx, s->p, z),
                                                              one));
    cg_state n;
    n.x = weft_add(cx, s->x, weft_mul(cx, per_vector(cx, alpha), s->p));
    n.r = weft_sub(cx, s->r, weft_mul(cx, per_vector(cx, alpha), z));
    weft_value *q = m ? weft_matvec(cx, m, n.r, false) : n.r;
    n.gamma = dot(cx, n.r, q);
    weft_value *beta = weft_truediv(cx, n.gamma, weft_where(cx, running, s->gamma, one));
    n.p = weft_add(cx, q, weft_mul(cx, per_vector(cx, beta), s->p));
    n.i = weft_add(cx, s->i, weft_const(cx, WEFT_I32, 1));
    return n;
}

/* The stopped state where running is false, the new one where it is
 * true (a scalar: TensorFlow's loop stops for the whole batch). */
static void select_state(weft_ctx *cx, weft_value *running, cg_state *s, const cg_state *n)
{
    s->i = weft_where(cx, running, n->i, s->i);
    s->x = weft_where(cx, running, n->x, s->x);
    s->r = weft_where(cx, running, n->r, s->r);
    s->p = weft_where(cx, running, n->p, s->p);
    s->gamma = weft_where(cx, running, n->gamma, s->gamma);
}

/* Whether the flag, eager or a constant, says the loop has stopped. */
static bool known_stopped(const weft_value *running)
{
    if (!running)
        return false;
    const weft_tensor *k = weft__value_tensor(running);
    if (!k)
        k = weft__value_konst(running);
    return k && !*(const bool *)weft_tensor_data(k);
}

int weft_conjugate_gradient(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                            weft_value *preconditioner, weft_value *x, double tol, int max_iter,
                            weft_value **outs)
{
    static const char fn[] = "weft_conjugate_gradient";
    weft_value *in[4] = { matrix, rhs, preconditioner, x };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 5);
    if (rc < 0)
        return rc;
    WEFT__SCOPE_OUTS(cx, outs, 5);
    if (!operands_ok(cx, fn, in, 4, tol, max_iter))
        return weft_ctx_status(cx);
    static const int last = -1;
    /* TensorFlow: tol scaled by |rhs| before x0 enters. */
    weft_value *tol_v = weft_mul(cx, weft_norm(cx, rhs, &last, 1, false), weft_const_f64(cx, tol));
    cg_state s;
    s.x = x ? x : weft_zeros_like(cx, rhs);
    s.r = x ? weft_sub(cx, rhs, weft_matvec(cx, matrix, x, false)) : rhs;
    s.p = preconditioner ? weft_matvec(cx, preconditioner, s.r, false) : s.r;
    s.gamma = dot(cx, s.r, s.p);
    s.i = weft_const(cx, WEFT_I32, 0);
    for (int k = 0; k < max_iter && weft_ctx_status(cx) == 0; k++) {
        weft_value *running = weft_reduce(cx, WEFT_R_ANY,
                                          weft_gt(cx, weft_norm(cx, s.r, &last, 1, false),
                                                  tol_v), NULL, 0, false);
        if (known_stopped(running))
            break;
        cg_state n = cg_step(cx, matrix, preconditioner, &s, running);
        select_state(cx, running, &s, &n);
    }
    outs[0] = s.i;
    outs[1] = s.x;
    outs[2] = s.r;
    outs[3] = s.p;
    outs[4] = s.gamma;
    rc = weft_ctx_status(cx);
    if (rc < 0)
        for (int k = 0; k < 5; k++)
            outs[k] = NULL;
    return rc;
}
