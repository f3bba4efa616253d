/* The gradient rules of weft_gradients: for one node of the tape, the
 * adjoints of its inputs from its own adjoint g, written with the public
 * ops on the replayed forward values (TensorFlow's rules; where TF picks a
 * subgradient, the same one).  An op without a rule here fails the call,
 * naming it; the composite ops (softmax, the losses, logsumexp ...) are
 * made of the ops here and need no rule of their own. */
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

typedef weft__grad_rule rule_in;

weft_value *weft__grad_k(const rule_in *r, double v)
{
    return weft_const_f64(r->cx, v);
}

#define k weft__grad_k
#define unsupported weft__grad_unsupported
#define unbroadcast weft__grad_unbroadcast
#define wants weft__grad_wants
#define give weft__grad_give

int weft__grad_unsupported(const rule_in *r, const char *why)
{
    return weft__ctx_failf(r->cx, WEFT_EINVAL, "weft_gradients: no gradient for %s%s%s",
                           weft__op_name(r->n->op), why ? " " : "", why ? why : "");
}

/* g summed down to a's shape (TensorFlow's reduction of a broadcast
 * gradient).  A dim unknown while tracing that may have been broadcast is
 * checked when the function runs: the call then fails rather than give a
 * wrong sum. */
weft_value *weft__grad_unbroadcast(const rule_in *r, weft_value *g, weft_value *a)
{
    if (!g)
        return NULL;
    const weft_spec *as = weft__value_spec(a), *gs = weft__value_spec(g);
    if (as->rank < 0 || gs->rank < as->rank)
        return weft__ctx_fail(r->cx, WEFT_EINVAL, "weft_gradients: no gradient for %s of an "
                              "input whose rank is unknown while tracing",
                              weft__op_name(r->n->op));
    int axes[WEFT_MAX_RANK], n_axes = 0, lead = gs->rank - as->rank;
    int64_t gdims[WEFT_MAX_RANK];
    for (int d = 0; d < as->rank; d++)
        gdims[d] = gs->dims[lead + d];
    for (int d = 0; d < lead; d++)
        axes[n_axes++] = d;
    if (n_axes && !(g = weft_reduce(r->cx, WEFT_R_SUM, g, axes, (size_t)n_axes, false)))
        return NULL;
    bool unsure = false;
    n_axes = 0;
    for (int d = 0; d < as->rank; d++) {
        if (as->dims[d] == 1 && gdims[d] != 1)
            axes[n_axes++] = d;
        unsure |= as->dims[d] == WEFT_DIM_ANY && gdims[d] != 1;
    }
    if (n_axes && !(g = weft_reduce(r->cx, WEFT_R_SUM, g, axes, (size_t)n_axes, true)))
        return NULL;
    if (!unsure)
        return g;
    /* The check passes the comparison through, not g: a check copies its
     * input, and a side effect runs whether its result is used or not. */
    weft_value *same = weft_eq(r->cx, weft_shape(r->cx, g), weft_shape(r->cx, a));
    weft_value *checked = weft_check(r->cx, same, same, "weft_gradients: an input was broadcast "
                                     "along a dim unknown while tracing (give it in the input "
                                     "signature)");
    if (!checked)
        return NULL;
    weft_value_release(r->cx, checked);
    return g;
}

/* Whether input k_in takes an adjoint: a float that depends on a
 * differentiated argument.  A rule computes only those (eagerly, the rest
 * would be passes over the data for nothing). */
bool weft__grad_wants(const rule_in *r, uint32_t k_in)
{
    uint32_t id = r->n->in[k_in];
    return r->t->depends[id] && weft__dtype_is_float(r->t->g->nodes[id].spec.dtype);
}

int weft__grad_give(const rule_in *r, uint32_t k_in, weft_value *v)
{
    return wants(r, k_in) ? weft__grad_accumulate(r->t, r->n->in[k_in], v) : 0;
}

static int give_unbroadcast(const rule_in *r, uint32_t k_in, weft_value *v, weft_value *x)
{
    return give(r, k_in, unbroadcast(r, v, x));
}

/* ---- Elementwise ------------------------------------------------------- */

/* d y / d a for y = op(a); NULL when the op has no rule, or when its
 * gradient is zero (then *zero is set). */
static weft_value *unary_derivative(const rule_in *r, bool *zero)
{
    weft_ctx *cx = r->cx;
    weft_value *a = r->a, *y = r->y;
    switch (r->n->op) {
    case WEFT__OP_NEG:     return k(r, -1.0);
    case WEFT__OP_ABS:     return weft_sign(cx, a);
    case WEFT__OP_SQRT:    return weft_div(cx, k(r, 0.5), y);
    case WEFT__OP_EXP:     return y;
    case WEFT__OP_LOG:     return weft_reciprocal(cx, a);
    case WEFT__OP_TANH:    return weft_sub(cx, k(r, 1.0), weft_square(cx, y));
    case WEFT__OP_SIGMOID: return weft_mul(cx, y, weft_sub(cx, k(r, 1.0), y));
    case WEFT__OP_SIN:     return weft_cos(cx, a);
    case WEFT__OP_COS:     return weft_neg(cx, weft_sin(cx, a));
    case WEFT__OP_RSQRT:   return weft_mul(cx, k(r, -0.5), weft_mul(cx, y, weft_square(cx, y)));
    case WEFT__OP_SQUARE:  return weft_mul(cx, k(r, 2.0), a);
    case WEFT__OP_LOG1P:   return weft_reciprocal(cx, weft_add(cx, k(r, 1.0), a));
    case WEFT__OP_EXPM1:   return weft_exp(cx, a);
    case WEFT__OP_TAN:     return weft_add(cx, k(r, 1.0), weft_square(cx, y));
    case WEFT__OP_ASIN:    return weft_rsqrt(cx, weft_sub(cx, k(r, 1.0), weft_square(cx, a)));
    case WEFT__OP_ACOS:
        return weft_neg(cx, weft_rsqrt(cx, weft_sub(cx, k(r, 1.0), weft_square(cx, a))));
    case WEFT__OP_ATAN:    return weft_reciprocal(cx, weft_add(cx, k(r, 1.0), weft_square(cx, a)));
    case WEFT__OP_SINH:    return weft_cosh(cx, a);
    case WEFT__OP_COSH:    return weft_sinh(cx, a);
    case WEFT__OP_ASINH:   return weft_rsqrt(cx, weft_add(cx, weft_square(cx, a), k(r, 1.0)));
    case WEFT__OP_ACOSH:   return weft_rsqrt(cx, weft_sub(cx, weft_square(cx, a), k(r, 1.0)));
    case WEFT__OP_ATANH:   return weft_reciprocal(cx, weft_sub(cx, k(r, 1.0), weft_square(cx, a)));
    case WEFT__OP_LGAMMA:  return weft_digamma(cx, a);
    case WEFT__OP_LOG2:    return weft_reciprocal(cx, weft_mul(cx, a, k(r, 0.69314718055994531)));
    case WEFT__OP_LOG10:   return weft_reciprocal(cx, weft_mul(cx, a, k(r, 2.3025850929940457)));
    case WEFT__OP_EXP2:    return weft_mul(cx, y, k(r, 0.69314718055994531));
    case WEFT__OP_CBRT:    return weft_reciprocal(cx, weft_mul(cx, k(r, 3.0), weft_square(cx, y)));
    case WEFT__OP_ERF:
    case WEFT__OP_ERFC: {
        /* 2 / sqrt(pi) exp(-a^2), negated for erfc. */
        double c = (r->n->op == WEFT__OP_ERF ? 1.0 : -1.0) * 1.1283791670955126;
        return weft_mul(cx, k(r, c), weft_exp(cx, weft_neg(cx, weft_square(cx, a))));
    }
    case WEFT__OP_ERFINV:  /* sqrt(pi) / 2 exp(y^2) */
        return weft_mul(cx, k(r, 0.88622692545275801), weft_exp(cx, weft_square(cx, y)));
    case WEFT__OP_NDTRI:   /* sqrt(2 pi) exp(y^2 / 2) */
        return weft_mul(cx, k(r, 2.5066282746310002),
                        weft_exp(cx, weft_mul(cx, k(r, 0.5), weft_square(cx, y))));
    case WEFT__OP_BESSEL_I0:  return weft_bessel_i1(cx, a);
    case WEFT__OP_BESSEL_I0E:
        return weft_sub(cx, weft_bessel_i1e(cx, a), weft_mul(cx, weft_sign(cx, a), y));
    case WEFT__OP_BESSEL_J0:  return weft_neg(cx, weft_bessel_j1(cx, a));
    case WEFT__OP_BESSEL_K0:  return weft_neg(cx, weft_bessel_k1(cx, a));
    case WEFT__OP_BESSEL_K0E: return weft_sub(cx, y, weft_bessel_k1e(cx, a));
    case WEFT__OP_FLOOR: case WEFT__OP_CEIL: case WEFT__OP_ROUND: case WEFT__OP_SIGN:
        *zero = true;   /* TensorFlow: no gradient, read as zero */
        return NULL;
    default:
        return weft__grad_special_derivative(r);
    }
}

static int unary(const rule_in *r)
{
    bool zero = false;
    weft_value *d = unary_derivative(r, &zero);
    if (zero)
        return 0;
    if (!d)
        return weft_ctx_status(r->cx) < 0 ? weft_ctx_status(r->cx) : unsupported(r, NULL);
    return give(r, 0, weft_mul(r->cx, r->g, d));
}

static weft_value *where0(const rule_in *r, weft_value *cond, bool g_where_true)
{
    weft_value *z = k(r, 0.0);
    return g_where_true ? weft_where(r->cx, cond, r->g, z) : weft_where(r->cx, cond, z, r->g);
}

/* The adjoints of a binary op's operands, each only when wanted. */
#define FOR_A(expr) (wa ? (expr) : NULL)
#define FOR_B(expr) (wb ? (expr) : NULL)

static int binary(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    weft_value *a = r->a, *b = r->b, *g = r->g, *y = r->y, *ga = NULL, *gb = NULL;
    bool wa = wants(r, 0), wb = wants(r, 1);
    switch (r->n->op) {
    case WEFT__OP_ADD: ga = g; gb = g; break;
    case WEFT__OP_SUB: ga = g; gb = FOR_B(weft_neg(cx, g)); break;
    case WEFT__OP_MUL: ga = FOR_A(weft_mul(cx, g, b)); gb = FOR_B(weft_mul(cx, g, a)); break;
    case WEFT__OP_DIV: case WEFT__OP_TRUEDIV:
        ga = FOR_A(weft_div(cx, g, b));
        gb = FOR_B(weft_neg(cx, weft_div(cx, weft_mul(cx, g, y), b)));
        break;
    case WEFT__OP_POW:
        ga = FOR_A(weft_mul(cx, weft_mul(cx, g, b), weft_pow(cx, a, weft_sub(cx, b, k(r, 1.0)))));
        gb = FOR_B(weft_mul(cx, weft_mul(cx, g, y), weft_where(cx, weft_gt(cx, a, k(r, 0.0)),
                                                               weft_log(cx, a), k(r, 0.0))));
        break;
    case WEFT__OP_MAXIMUM: case WEFT__OP_MINIMUM: {
        weft_value *pick_a = r->n->op == WEFT__OP_MAXIMUM ? weft_ge(cx, a, b) : weft_le(cx, a, b);
        ga = FOR_A(where0(r, pick_a, true));
        gb = FOR_B(where0(r, pick_a, false));
        break;
    }
    case WEFT__OP_MOD:
        ga = g;
        gb = FOR_B(weft_neg(cx, weft_mul(cx, g, weft_floor(cx, weft_div(cx, a, b)))));
        break;
    case WEFT__OP_ATAN2: {
        weft_value *den = weft_add(cx, weft_square(cx, a), weft_square(cx, b));
        ga = FOR_A(weft_div(cx, weft_mul(cx, g, b), den));
        gb = FOR_B(weft_neg(cx, weft_div(cx, weft_mul(cx, g, a), den)));
        break;
    }
    case WEFT__OP_HYPOT:   /* a / h and b / h, h the result */
        ga = FOR_A(weft_div(cx, weft_mul(cx, g, a), y));
        gb = FOR_B(weft_div(cx, weft_mul(cx, g, b), y));
        break;
    case WEFT__OP_COPYSIGN: {   /* |a| with b's sign: g times both signs; b's is 0 */
        weft_value *one = k(r, 1.0);
        ga = FOR_A(weft_mul(cx, g, weft_mul(cx, weft_copysign(cx, one, a),
                                            weft_copysign(cx, one, b))));
        wb = false;
        break;
    }
    case WEFT__OP_LDEXP:   /* x 2^e: g 2^e; the integer power's is 0 */
        ga = FOR_A(weft__op_binary(cx, WEFT__OP_LDEXP, "weft_ldexp", g, b));
        wb = false;
        break;
    case WEFT__OP_FLOORDIV: case WEFT__OP_TRUNCATEDIV:
        return 0;  /* TensorFlow: no gradient, read as zero */
    default:
        return weft__grad_special_args(r);
    }
    int rc = wa ? give_unbroadcast(r, 0, ga, a) : 0;
    return rc < 0 || !wb ? rc : give_unbroadcast(r, 1, gb, b);
}

static int where_rule(const rule_in *r)
{
    weft_value *c = r->t->val[r->n->in[0]], *a = r->t->val[r->n->in[1]];
    weft_value *b = r->t->val[r->n->in[2]];
    int rc = wants(r, 1) ? give_unbroadcast(r, 1, where0(r, c, true), a) : 0;
    return rc < 0 || !wants(r, 2) ? rc : give_unbroadcast(r, 2, where0(r, c, false), b);
}

/* ---- Reductions ------------------------------------------------------- */

/* The axes a reduction removed from a (rank known), ascending. */
static int reduced_axes(const rule_in *r, int rank, int *axes)
{
    unsigned mask = 0;
    const weft_spec *as = weft__value_spec(r->a);
    if (weft__reduce_mask(r->n, "weft_gradients", as, &mask) < 0) {
        weft__ctx_fail_errmsg(r->cx, WEFT_EINVAL);
        return WEFT_EINVAL;
    }
    int n = 0;
    for (int d = 0; d < rank; d++)
        if (mask & (1u << d))
            axes[n++] = d;
    return n;
}

/* v (of the reduction's result shape) with the reduced axes put back as 1s. */
static weft_value *keep_dims(const rule_in *r, weft_value *v, const int *axes, int n_axes)
{
    if (r->n->attr.reduce.keepdims)
        return v;
    for (int i = 0; i < n_axes && v; i++)
        v = weft_expand_dims(r->cx, v, axes[i]);
    return v;
}

/* v broadcast to a's shape. */
static weft_value *spread(const rule_in *r, weft_value *v)
{
    const weft_spec *as = weft__value_spec(r->a);
    for (int d = 0; d < as->rank; d++)
        if (as->dims[d] == WEFT_DIM_ANY)
            return weft_add(r->cx, weft_zeros_like(r->cx, r->a), v);
    return weft_broadcast_to(r->cx, v, as->rank, as->dims);
}

/* The product of every other element along the last axis of v: the
 * exclusive products from the left times those from the right, with no
 * division (so a zero among them is right, as TensorFlow's rule). */
static weft_value *others_product(weft_ctx *cx, weft_value *v, int axis)
{
    weft_value *left = weft_cumprod(cx, v, axis, WEFT_SCAN_EXCLUSIVE);
    weft_value *right = weft_cumprod(cx, v, axis, WEFT_SCAN_EXCLUSIVE | WEFT_SCAN_REVERSE);
    return weft_mul(cx, left, right);
}

/* A product's gradient: g times the product of the other reduced
 * elements.  Several axes are moved to the end and joined into one (a's
 * dims known). */
static weft_value *prod_gradient(const rule_in *r, weft_value *g, const int *axes, int n_axes)
{
    weft_ctx *cx = r->cx;
    const weft_spec *as = weft__value_spec(r->a);
    if (n_axes == 1)
        return weft_mul(cx, g, others_product(cx, r->a, axes[0]));
    int perm[WEFT_MAX_RANK], back[WEFT_MAX_RANK], at = 0, kept = 0;
    int64_t dims[WEFT_MAX_RANK], moved[WEFT_MAX_RANK];
    for (int pass = 0; pass < 2; pass++)
        for (int d = 0; d < as->rank; d++) {
            bool reduced = false;
            for (int i = 0; i < n_axes; i++)
                reduced |= axes[i] == d;
            if (reduced == (pass == 1))
                perm[at++] = d;
        }
    for (int d = 0; d < as->rank; d++) {
        if (as->dims[perm[d]] == WEFT_DIM_ANY) {
            weft__grad_unsupported(r, "over several axes of an input with a dim unknown while "
                                      "tracing");
            return NULL;
        }
        back[perm[d]] = d;
        moved[d] = as->dims[perm[d]];
        if (d < as->rank - n_axes)
            dims[kept++] = moved[d];
    }
    dims[kept] = -1;
    weft_value *joined = weft_reshape(cx, weft_transpose(cx, r->a, perm), kept + 1, dims);
    weft_value *others = weft_reshape(cx, others_product(cx, joined, kept), as->rank, moved);
    return weft_mul(cx, g, weft_transpose(cx, others, back));
}

static int reduce_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int rank = weft__grad_rank(r->a), axes[WEFT_MAX_RANK];
    if (rank < 0)
        return unsupported(r, "of an input whose rank is unknown while tracing");
    int n_axes = reduced_axes(r, rank, axes);
    if (n_axes < 0)
        return n_axes;
    weft_value *g = keep_dims(r, r->g, axes, n_axes);
    switch (r->n->op) {
    case WEFT__OP_SUM:
        return give(r, 0, spread(r, g));
    case WEFT__OP_MEAN: {
        const weft_spec *as = weft__value_spec(r->a);
        double count = 1.0;
        for (int i = 0; i < n_axes && count > 0; i++)
            count = as->dims[axes[i]] == WEFT_DIM_ANY ? -1.0 : count * (double)as->dims[axes[i]];
        weft_value *c = count >= 0 ? k(r, count)
                                   : weft_reduce(cx, WEFT_R_SUM, weft_ones_like(cx, r->a), axes,
                                                 (size_t)n_axes, true);
        return give(r, 0, spread(r, weft_div(cx, g, c)));
    }
    case WEFT__OP_PROD:
        return give(r, 0, prod_gradient(r, g, axes, n_axes));
    case WEFT__OP_REDUCE_MAX: case WEFT__OP_REDUCE_MIN: {
        /* Shared equally among the elements equal to the extreme. */
        weft_value *hit = weft_cast(cx, weft_eq(cx, r->a, keep_dims(r, r->y, axes, n_axes)),
                                    weft__value_spec(r->a)->dtype);
        weft_value *ties = weft_reduce(cx, WEFT_R_SUM, hit, axes, (size_t)n_axes, true);
        return give(r, 0, weft_mul(cx, weft_div(cx, g, ties), hit));
    }
    default:
        return unsupported(r, NULL);
    }
}

/* ---- Shapes and products ---------------------------------------------- */

/* g given a's shape back (reshape, expand_dims, squeeze). */
static int reshape_rule(const rule_in *r)
{
    const weft__node *n = r->n;
    if (n->op == WEFT__OP_EXPAND_DIMS)
        return give(r, 0, weft_squeeze(r->cx, r->g, n->attr.axis.axis));
    const weft_spec *as = weft__value_spec(r->a);
    int64_t dims[WEFT_MAX_RANK];
    int unknown = 0;
    for (int d = 0; d < as->rank; d++)
        unknown += (dims[d] = as->dims[d]) == WEFT_DIM_ANY;
    if (as->rank >= 0 && unknown <= 1)
        return give(r, 0, weft_reshape(r->cx, r->g, as->rank, dims));
    if (n->op == WEFT__OP_SQUEEZE && n->attr.axis.axis != WEFT_ALL_AXES && as->rank >= 0) {
        int axis = n->attr.axis.axis < 0 ? n->attr.axis.axis + as->rank : n->attr.axis.axis;
        return give(r, 0, weft_expand_dims(r->cx, r->g, axis));
    }
    return unsupported(r, "of an input with more than one dim unknown while tracing");
}

/* A 1-D operand of a product is a matrix of one row (a) or column (b);
 * the gradients are computed on those matrices and squeezed back. */
static int matmul_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    unsigned f = r->n->attr.matmul.flags;
    bool a_vec = weft__grad_rank(r->a) == 1, b_vec = weft__grad_rank(r->b) == 1;
    weft_value *a = a_vec ? weft_expand_dims(cx, r->a, 0) : r->a;
    weft_value *b = b_vec ? weft_expand_dims(cx, r->b, -1) : r->b;
    weft_value *g = r->g;
    if (a_vec)
        g = weft_expand_dims(cx, g, weft__grad_rank(g) - (b_vec ? 0 : 1));
    if (b_vec)
        g = weft_expand_dims(cx, g, -1);
    weft_value *ga = NULL, *gb = NULL;
    bool wa = wants(r, 0), wb = wants(r, 1);
    switch (f & (WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B)) {
    case 0:
        ga = FOR_A(weft_matmul_ex(cx, g, b, WEFT_TRANSPOSE_B));
        gb = FOR_B(weft_matmul_ex(cx, a, g, WEFT_TRANSPOSE_A));
        break;
    case WEFT_TRANSPOSE_A:
        ga = FOR_A(weft_matmul_ex(cx, b, g, WEFT_TRANSPOSE_B));
        gb = FOR_B(weft_matmul(cx, a, g));
        break;
    case WEFT_TRANSPOSE_B:
        ga = FOR_A(weft_matmul(cx, g, b));
        gb = FOR_B(weft_matmul_ex(cx, g, a, WEFT_TRANSPOSE_A));
        break;
    default:
        ga = FOR_A(weft_matmul_ex(cx, b, g, WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B));
        gb = FOR_B(weft_matmul_ex(cx, g, a, WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B));
        break;
    }
    int rc = 0;
    if (wa && (ga = unbroadcast(r, ga, a)) && a_vec)
        ga = weft_squeeze(cx, ga, 0);
    if (wa)
        rc = give(r, 0, ga);
    if (rc < 0 || !wb)
        return rc;
    if ((gb = unbroadcast(r, gb, b)) && b_vec)
        gb = weft_squeeze(cx, gb, -1);
    return give(r, 1, gb);
}

#undef FOR_A
#undef FOR_B

int weft__grad_node(weft__grad_tape *t, uint32_t id)
{
    const weft__node *n = &t->g->nodes[id];
    rule_in r = { .t = t, .cx = t->cx, .n = n, .g = t->adj[id], .y = t->val[id],
                  .a = n->n_in > 0 ? t->val[n->in[0]] : NULL,
                  .b = n->n_in > 1 ? t->val[n->in[1]] : NULL };
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_UNARY:
        if (n->op == WEFT__OP_RELU)
            return give(&r, 0, where0(&r, weft_gt(t->cx, r.y, k(&r, 0.0)), true));
        return unary(&r);
    case WEFT__KIND_BINARY:
        return binary(&r);
    case WEFT__KIND_TERNARY:
        return n->op == WEFT__OP_WHERE ? where_rule(&r) : weft__grad_special_args(&r);
    case WEFT__KIND_CAST:
        return wants(&r, 0) ? give(&r, 0, weft_cast(t->cx, r.g, weft__value_spec(r.a)->dtype)) : 0;
    case WEFT__KIND_REDUCE:
        return reduce_rule(&r);
    case WEFT__KIND_SHAPE:
        return reshape_rule(&r);
    case WEFT__KIND_MATMUL:
        return matmul_rule(&r);
    case WEFT__KIND_ARRAY:
        return weft__grad_array(&r);
    default:
        return unsupported(&r, NULL);
    }
}
