/* The gradient rules of the special functions (TensorFlow's, in
 * math_grad.py and special_math_ops.py): the Bessel functions of order 1
 * and Y0, digamma, polygamma, dawsn, expint, spence, the Fresnel
 * integrals, the incomplete gamma functions in both arguments (a by
 * weft_igamma_grad_a, TensorFlow's IgammaGradA), and the incomplete beta
 * function and zeta with respect to their last argument.  TensorFlow has
 * no gradient for the other arguments of polygamma (its order n), betainc
 * (a and b) and zeta (x): wanting one fails the call, naming it. */
#include "trace/grad.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k

/* f(x) / x with its limit `at0` at x = 0, computed without dividing by 0
 * (where evaluates both branches). */
static weft_value *over_x(const rule_in *r, weft_value *f, weft_value *x, double at0)
{
    weft_ctx *cx = r->cx;
    weft_value *zero = weft_eq(cx, x, k(r, 0.0));
    weft_value *safe = weft_where(cx, zero, k(r, 1.0), x);
    return weft_where(cx, zero, k(r, at0), weft_div(cx, f, safe));
}

weft_value *weft__grad_special_derivative(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    weft_value *a = r->a, *y = r->y;
    switch (r->n->op) {
    case WEFT__OP_DIGAMMA:
        return weft_polygamma(cx, k(r, 1.0), a);
    case WEFT__OP_BESSEL_I1:   /* I0 - I1 / x, 1/2 at 0 */
        return weft_sub(cx, weft_bessel_i0(cx, a), over_x(r, y, a, 0.5));
    case WEFT__OP_BESSEL_I1E:  /* I0e - I1e (sign(x) + 1 / x), 1/2 at 0 */
        return weft_sub(cx, weft_sub(cx, weft_bessel_i0e(cx, a), weft_mul(cx, y, weft_sign(cx, a))),
                        over_x(r, y, a, 0.5));
    case WEFT__OP_BESSEL_J1:   /* J0 - J1 / x, 1/2 at 0 */
        return weft_sub(cx, weft_bessel_j0(cx, a), over_x(r, y, a, 0.5));
    case WEFT__OP_BESSEL_Y0:
        return weft_neg(cx, weft_bessel_y1(cx, a));
    case WEFT__OP_BESSEL_Y1:
        return weft_sub(cx, weft_bessel_y0(cx, a), weft_div(cx, y, a));
    case WEFT__OP_BESSEL_K1:   /* -K0 - K1 / x */
        return weft_sub(cx, weft_neg(cx, weft_bessel_k0(cx, a)), weft_div(cx, y, a));
    case WEFT__OP_BESSEL_K1E:  /* K1e (1 - 1 / x) - K0e */
        return weft_sub(cx, weft_sub(cx, y, weft_div(cx, y, a)), weft_bessel_k0e(cx, a));
    case WEFT__OP_DAWSN:       /* 1 - 2 x D(x) */
        return weft_sub(cx, k(r, 1.0), weft_mul(cx, k(r, 2.0), weft_mul(cx, a, y)));
    case WEFT__OP_EXPINT:      /* e^x / x */
        return weft_div(cx, weft_exp(cx, a), a);
    case WEFT__OP_SPENCE: {    /* log(x) / (1 - x), -1 at 1 */
        weft_value *one = weft_eq(cx, a, k(r, 1.0));
        weft_value *den = weft_where(cx, one, k(r, 1.0), weft_sub(cx, k(r, 1.0), a));
        return weft_where(cx, one, k(r, -1.0), weft_div(cx, weft_log(cx, a), den));
    }
    case WEFT__OP_FRESNEL_COS: /* cos(pi x^2 / 2) */
        return weft_cos(cx, weft_mul(cx, k(r, 1.5707963267948966), weft_square(cx, a)));
    case WEFT__OP_FRESNEL_SIN:
        return weft_sin(cx, weft_mul(cx, k(r, 1.5707963267948966), weft_square(cx, a)));
    default:
        return NULL;
    }
}

/* A rule that differentiates only with respect to input `last`: another
 * input that wants an adjoint fails the call. */
static int only_last(const rule_in *r, uint32_t last, const char *names)
{
    for (uint32_t i = 0; i < last; i++)
        if (weft__grad_wants(r, i))
            return weft__grad_unsupported(r, names);
    return 0;
}

/* igamma's (igammac's) gradient in a: g times IgammaGradA (negated). */
static int igamma_a(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    weft_value *d = weft_igamma_grad_a(cx, r->a, r->b);
    if (r->n->op == WEFT__OP_IGAMMAC)
        d = weft_neg(cx, d);
    return weft__grad_give(r, 0, weft__grad_unbroadcast(r, weft_mul(cx, r->g, d), r->a));
}

/* log x^(a - 1) (1 - x)^(b - 1) / B(a, b): the log of betainc's density. */
static weft_value *log_beta_density(const rule_in *r, weft_value *a, weft_value *b, weft_value *x)
{
    weft_ctx *cx = r->cx;
    weft_value *one = k(r, 1.0);
    weft_value *lb = weft_sub(cx, weft_add(cx, weft_lgamma(cx, a), weft_lgamma(cx, b)),
                              weft_lgamma(cx, weft_add(cx, a, b)));
    weft_value *t = weft_add(cx, weft_mul(cx, weft_sub(cx, a, one), weft_log(cx, x)),
                             weft_mul(cx, weft_sub(cx, b, one), weft_log1p(cx, weft_neg(cx, x))));
    return weft_sub(cx, t, lb);
}

int weft__grad_special_args(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    weft_value *a = r->a, *b = r->b, *d = NULL;
    int rc = 0;
    uint32_t last = 1;
    switch (r->n->op) {
    case WEFT__OP_POLYGAMMA:   /* polygamma(n + 1, x) */
        rc = only_last(r, 1, "with respect to its order n");
        d = weft_polygamma(cx, weft_add(cx, a, k(r, 1.0)), b);
        break;
    case WEFT__OP_IGAMMA:      /* x^(a - 1) e^-x / Gamma(a); igammac's negated */
    case WEFT__OP_IGAMMAC:
        if (weft__grad_wants(r, 0))
            rc = igamma_a(r);
        d = weft_exp(cx, weft_sub(cx, weft_sub(cx, weft_mul(cx, weft_sub(cx, a, k(r, 1.0)),
                                                            weft_log(cx, b)), b),
                                  weft_lgamma(cx, a)));
        if (r->n->op == WEFT__OP_IGAMMAC)
            d = weft_neg(cx, d);
        break;
    case WEFT__OP_ZETA:        /* -x zeta(x + 1, q) */
        rc = only_last(r, 1, "with respect to x");
        d = weft_neg(cx, weft_mul(cx, a, weft_zeta(cx, weft_add(cx, a, k(r, 1.0)), b)));
        break;
    case WEFT__OP_BETAINC: {
        weft_value *x = r->t->val[r->n->in[2]];
        last = 2;
        rc = only_last(r, 2, "with respect to a or b");
        d = weft_exp(cx, log_beta_density(r, a, b, x));
        break;
    }
    default:
        return weft__grad_unsupported(r, NULL);
    }
    if (rc < 0 || !weft__grad_wants(r, last))
        return rc;
    weft_value *x = r->t->val[r->n->in[last]];
    return weft__grad_give(r, last, weft__grad_unbroadcast(r, weft_mul(cx, r->g, d), x));
}
