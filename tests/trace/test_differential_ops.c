/* The differential test of the second wave of ops: random graphs of the
 * math ops (tanh ... expm1, erf ... cosh, asinh ... lgamma, digamma,
 * erfinv, ndtri, atan2, is_nan, is_inf, is_finite, clip, logical ops,
 * truediv, floordiv), the neural-network ops (softmax, log_softmax,
 * logsumexp and the activations), the shape ops (transpose, slice,
 * gather, concat, stack, split, expand_dims,
 * squeeze, tile, broadcast_to, cumsum, argmax/argmin, sort, argsort, top_k,
 * unsorted_segment, gather_nd, scatter_nd_update/add, roll, repeat),
 * weft_reduce over several axes with keepdims, weft_matmul_ex with its
 * flags, weft_map_ex with a capture and weft_host_call_ex, run eagerly and
 * traced on runtimes of 1, 2 and 4 workers (tests/support/diff_util.h).
 * Every result must equal the eager one-worker result bit for bit, NaN as
 * NaN.
 *
 * Values of any shape share a pool; an op draws its operands and
 * attributes from the seed and from the operands' specs, which are known
 * and the same eagerly and traced, so every run of one seed builds the
 * same graph.  Ops are drawn so that they are valid (a bool operand of
 * arithmetic is cast first, a gather's indices are taken modulo the dim),
 * and results stay below CAP elements.  DIFF_VERBOSE=1 prints each seed,
 * DIFF_OPS=1 the compiled op lists. */
#include "diff_util.h"
#include "test_sanitized.h"
#include "worker_runtimes.h"

TestSuite(differential_ops, .init = worker_runtimes_create, .fini = worker_runtimes_destroy, .timeout = 120);

#define POOL 16
#define N_OPS 12
/* The most elements a result may have: above WEFT__KERNEL_SPLIT_MIN
 * (32768), so that kernels split work over the workers. */
#define CAP (TEST_SANITIZED ? 60000 : 150000)
#define MAX_RANK 5
#define MATMUL_FLOPS 4000000 /* the most multiply-adds of one matmul */
#define MAP_ROWS 6           /* the most iterations of one map */

typedef struct prog {
    uint64_t seed;
    weft_function *mapped;   /* the mapped function, on this runtime */
} prog;

static int64_t numel_of(const weft_spec *sp)
{
    int64_t n = 1;
    for (int d = 0; d < sp->rank; d++)
        n *= sp->dims[d];
    return n;
}

/* Whether a and b broadcast (into *numel elements). */
static bool broadcasts(const weft_spec *a, const weft_spec *b, int64_t *numel)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t n = 1;
    for (int i = 0; i < r; i++) {
        int64_t da = i < a->rank ? a->dims[a->rank - 1 - i] : 1;
        int64_t db = i < b->rank ? b->dims[b->rank - 1 - i] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        n *= da == 1 ? db : da;
    }
    *numel = n;
    return true;
}

static weft_spec spec_of(weft_value *v)
{
    weft_spec sp;
    cr_assert_eq(weft_value_spec(v, &sp), 0, "%s", weft_errmsg());
    /* Every dim is known in both modes (no input signature), so the
     * graph's choices are the same eagerly and traced. */
    cr_assert_neq(sp.rank, WEFT_RANK_ANY);
    for (int d = 0; d < sp.rank; d++)
        cr_assert_geq(sp.dims[d], 0, "dim %d unknown", d);
    return sp;
}

/* A pool value that broadcasts against a within CAP elements, starting
 * the search at a random place; pool[3], the scalar argument, always
 * does. */
static weft_value *partner(weft_value *const *pool, int n, const weft_spec *sa, uint64_t *s)
{
    int start = (int)(diff_next(s) % (uint64_t)n);
    for (int i = 0; i < n; i++) {
        weft_value *b = pool[(start + i) % n];
        weft_spec sb = spec_of(b);
        int64_t ne;
        if (broadcasts(sa, &sb, &ne) && ne <= CAP)
            return b;
    }
    return pool[3];
}

/* A pool value of exactly a's shape but dim `axis` (any size there when
 * axis >= 0), or NULL. */
static weft_value *same_shape(weft_value *const *pool, int n, const weft_spec *sa, int axis,
                              uint64_t *s)
{
    int start = (int)(diff_next(s) % (uint64_t)n);
    for (int i = 0; i < n; i++) {
        weft_value *b = pool[(start + i) % n];
        weft_spec sb = spec_of(b);
        bool ok = sb.rank == sa->rank;
        for (int d = 0; ok && d < sa->rank; d++)
            ok = d == axis || sb.dims[d] == sa->dims[d];
        if (ok)
            return b;
    }
    return NULL;
}

static weft_value *numeric(weft_ctx *cx, weft_value *a, const weft_spec *sa)
{
    return sa->dtype == WEFT_BOOL ? weft_cast(cx, a, WEFT_I32) : a;
}

static weft_value *unary(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    typedef weft_value *(*unop)(weft_ctx *, weft_value *);
    /* The first eleven refuse bool (the tests is_nan, is_inf, is_finite
     * give bool, the others keep the dtype). */
    static const unop ops[] = { weft_relu, weft_floor, weft_ceil, weft_round, weft_square,
                                weft_sign, weft_neg, weft_abs, weft_is_nan, weft_is_inf,
                                weft_is_finite, weft_tanh, weft_sigmoid,
                                weft_sin, weft_cos, weft_rsqrt, weft_log1p, weft_expm1,
                                weft_sqrt, weft_exp, weft_log, weft_erf, weft_erfc, weft_tan,
                                weft_asin, weft_acos, weft_atan, weft_sinh, weft_cosh,
                                weft_asinh, weft_acosh, weft_atanh, weft_lgamma, weft_digamma,
                                weft_erfinv, weft_ndtri, weft_bessel_i0, weft_bessel_i0e,
                                weft_bessel_i1, weft_bessel_i1e, weft_bessel_j0, weft_bessel_j1,
                                weft_bessel_y0, weft_bessel_y1, weft_bessel_k0, weft_bessel_k0e,
                                weft_bessel_k1, weft_bessel_k1e, weft_expint, weft_dawsn,
                                weft_spence, weft_fresnel_cos, weft_fresnel_sin, weft_log2,
                                weft_log10, weft_exp2, weft_cbrt };
    size_t k = diff_next(s) % (sizeof ops / sizeof ops[0]);
    return ops[k](cx, k < 11 ? numeric(cx, a, sa) : a);
}

/* ldexp with b's integer part (saturated) as the power. */
static weft_value *ldexp_by(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_ldexp(cx, a, weft_cast(cx, b, WEFT_I32));
}

static weft_value *binary(weft_ctx *cx, weft_value *a, weft_value *b, const weft_spec *sa,
                          uint64_t *s)
{
    typedef weft_value *(*binop)(weft_ctx *, weft_value *, weft_value *);
    /* The first ten refuse two bools. */
    static const binop ops[] = { weft_add, weft_sub, weft_mul, weft_div, weft_mod, weft_pow,
                                 weft_truediv, weft_floordiv, weft_truncatediv, weft_truncatemod,
                                 weft_minimum, weft_maximum,
                                 weft_lt, weft_ge, weft_eq, weft_ne, weft_atan2, weft_igamma,
                                 weft_igammac, weft_zeta, weft_polygamma, weft_nextafter,
                                 weft_hypot, weft_copysign, weft_igamma_grad_a,
                                 weft_random_gamma_grad, ldexp_by };
    size_t k = diff_next(s) % (sizeof ops / sizeof ops[0]);
    return ops[k](cx, k < 10 ? numeric(cx, a, sa) : a, b);
}

static weft_value *as_bool(weft_ctx *cx, weft_value *a, const weft_spec *sa)
{
    return sa->dtype == WEFT_BOOL ? a : weft_cast(cx, a, WEFT_BOOL);
}

static weft_value *logical(weft_ctx *cx, weft_value *a, weft_value *b, const weft_spec *sa,
                           uint64_t *s)
{
    weft_spec sb = spec_of(b);
    switch (diff_next(s) % 3) {
    case 0: return weft_logical_and(cx, as_bool(cx, a, sa), as_bool(cx, b, &sb));
    case 1: return weft_logical_or(cx, as_bool(cx, a, sa), as_bool(cx, b, &sb));
    default: return weft_logical_not(cx, as_bool(cx, a, sa));
    }
}

static weft_value *clip(weft_ctx *cx, weft_value *a, weft_value *b, uint64_t *s)
{
    weft_value *lo = diff_next(s) % 2 ? b : weft_const_f64(cx, -1.5);
    weft_value *hi = diff_next(s) % 2 ? weft_const_f64(cx, 1.25) : weft_const_i64(cx, 2);
    return diff_next(s) % 4 ? weft_clip(cx, a, lo, hi) : weft_clip(cx, a, hi, lo);
}

static weft_value *transpose(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    if (diff_next(s) % 3 == 0)
        return weft_transpose(cx, a, NULL);
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < sa->rank; d++)
        perm[d] = d;
    for (int d = sa->rank - 1; d > 0; d--) {
        int j = (int)(diff_next(s) % (uint64_t)(d + 1));
        int t = perm[d];
        perm[d] = perm[j];
        perm[j] = t;
    }
    /* Negative axes count from the end. */
    for (int d = 0; d < sa->rank; d++)
        if (diff_next(s) % 2)
            perm[d] -= sa->rank;
    return weft_transpose(cx, a, perm);
}

static weft_value *slice(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    int64_t begin[WEFT_MAX_RANK], end[WEFT_MAX_RANK], step[WEFT_MAX_RANK];
    for (int d = 0; d < sa->rank; d++) {
        int64_t n = sa->dims[d] + 2;
        step[d] = (int64_t)(diff_next(s) % 5) - 2;
        if (step[d] == 0)
            step[d] = 1;
        /* From past one end to past the other, negative ones included. */
        begin[d] = (int64_t)(diff_next(s) % (uint64_t)(2 * n)) - n;
        end[d] = diff_next(s) % 4 == 0 ? WEFT_END : (int64_t)(diff_next(s) % (uint64_t)(2 * n)) - n;
    }
    bool plain = diff_next(s) % 5 == 0;
    return weft_slice(cx, a, plain ? NULL : begin, plain ? NULL : end, plain ? NULL : step);
}

/* A neural-network op of ops_nn.c on a (cast to a float first for those
 * that take floats only). */
static weft_value *nn(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    bool flt = sa->dtype == WEFT_F32 || sa->dtype == WEFT_F64;
    weft_value *x = flt ? a : weft_cast(cx, a, diff_next(s) % 2 ? WEFT_F32 : WEFT_F64);
    int axis = sa->rank ? (int)(diff_next(s) % (uint64_t)(2 * sa->rank)) - sa->rank : 0;
    switch (diff_next(s) % 11) {
    case 0: return sa->rank ? weft_softmax(cx, x, axis) : weft_elu(cx, x);
    case 1: return sa->rank ? weft_log_softmax(cx, x, axis) : weft_gelu(cx, x);
    case 2: return weft_logsumexp(cx, x, sa->rank && diff_next(s) % 3 ? axis : WEFT_ALL_AXES,
                                  diff_next(s) % 2);
    case 3: return weft_leaky_relu(cx, x, diff_next(s) % 2 ? 0.2 : -1.5);
    case 4: return weft_elu(cx, x);
    case 5: return weft_gelu(cx, x);
    case 6: return weft_softplus(cx, x);
    case 7: return weft_silu(cx, x);
    case 8: return weft_log_sigmoid(cx, x);
    case 9: return weft_gelu_exact(cx, x);
    default: return weft_relu6(cx, numeric(cx, a, sa));
    }
}

/* Indices from the data: b cast to i64, modulo the dim (and minus it, for
 * negative indices, half the time). */
static weft_value *gather(weft_ctx *cx, weft_value *a, const weft_spec *sa, weft_value *const *pool,
                          int n, uint64_t *s)
{
    int axis = (int)(diff_next(s) % (uint64_t)sa->rank);
    int64_t dim = sa->dims[axis];
    weft_value *b = pool[diff_next(s) % (uint64_t)n];
    weft_spec sb = spec_of(b);
    if (dim == 0 || numel_of(sa) / dim * numel_of(&sb) > CAP || sa->rank + sb.rank > MAX_RANK + 1)
        return NULL;
    weft_value *idx = weft_mod(cx, weft_cast(cx, b, diff_next(s) % 2 ? WEFT_I64 : WEFT_I32),
                               weft_const_i64(cx, dim));
    if (diff_next(s) % 2)
        idx = weft_sub(cx, idx, weft_const_i64(cx, dim));
    return weft_gather(cx, a, idx, diff_next(s) % 2 ? axis : axis - sa->rank);
}

static weft_value *concat(weft_ctx *cx, weft_value *a, const weft_spec *sa, weft_value *const *pool,
                          int n, uint64_t *s)
{
    int axis = (int)(diff_next(s) % (uint64_t)sa->rank);
    weft_value *vs[3] = { a, same_shape(pool, n, sa, axis, s), NULL };
    if (!vs[1])
        vs[1] = weft_neg(cx, numeric(cx, a, sa));
    vs[2] = diff_next(s) % 2 ? a : vs[1];
    weft_spec s1 = spec_of(vs[1]);
    if (2 * numel_of(sa) + numel_of(&s1) > CAP)
        return NULL;
    return weft_concat(cx, vs, 3, axis);
}

static weft_value *stack(weft_ctx *cx, weft_value *a, const weft_spec *sa, weft_value *const *pool,
                         int n, uint64_t *s)
{
    if (3 * numel_of(sa) > CAP || sa->rank >= MAX_RANK)
        return NULL;
    weft_value *b = same_shape(pool, n, sa, -1, s);
    weft_value *vs[3] = { a, b ? b : a, weft_abs(cx, numeric(cx, a, sa)) };
    int axis = (int)(diff_next(s) % (uint64_t)(sa->rank + 1));
    return weft_stack(cx, vs, 2 + diff_next(s) % 2, axis);
}

/* One part of a split (the others join the pool through *extra). */
static weft_value *split(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s,
                         weft_value **extra)
{
    int axis = (int)(diff_next(s) % (uint64_t)sa->rank);
    int64_t dim = sa->dims[axis];
    weft_value *outs[3];
    size_t parts = 2 + diff_next(s) % 2;
    int64_t sizes[3] = { dim / 3, -1, dim / 3 };
    bool equal = dim % (int64_t)parts == 0 && diff_next(s) % 2;
    if (weft_split(cx, a, parts, equal ? NULL : sizes, diff_next(s) % 2 ? axis : axis - sa->rank,
                   outs) != 0)
        return NULL;
    *extra = outs[parts - 1];
    return outs[0];
}

static weft_value *reshape_dims(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    if (diff_next(s) % 2 && sa->rank < MAX_RANK)
        return weft_expand_dims(cx, a, (int)(diff_next(s) % (uint64_t)(2 * sa->rank + 2)) - sa->rank - 1);
    int start = (int)(diff_next(s) % (uint64_t)(sa->rank ? sa->rank : 1));
    for (int i = 0; i < sa->rank; i++) {
        int d = (start + i) % sa->rank;
        if (sa->dims[d] == 1)
            return weft_squeeze(cx, a, diff_next(s) % 2 ? d : d - sa->rank);
    }
    return weft_squeeze(cx, a, WEFT_ALL_AXES);
}

static weft_value *tile(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    int64_t mult[WEFT_MAX_RANK], n = numel_of(sa);
    for (int d = 0; d < sa->rank; d++) {
        /* Now and then 0: an empty result. */
        mult[d] = diff_next(s) % 16 == 0 ? 0 : 1 + (int64_t)(diff_next(s) % 3);
        n *= mult[d];
    }
    return n > CAP ? NULL : weft_tile(cx, a, mult);
}

static weft_value *broadcast_to(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    int64_t dims[WEFT_MAX_RANK];
    int lead = sa->rank < MAX_RANK ? (int)(diff_next(s) % 2) : 0;
    int64_t n = 1;
    for (int d = 0; d < lead; d++)
        n *= dims[d] = 1 + (int64_t)(diff_next(s) % 3);
    for (int d = 0; d < sa->rank; d++) {
        int64_t ad = sa->dims[d];
        int64_t want = ad == 1 ? 1 + (int64_t)(diff_next(s) % 4) : ad;
        /* -1 keeps a's dim. */
        dims[lead + d] = diff_next(s) % 4 == 0 ? -1 : want;
        n *= want == -1 ? ad : want;
    }
    return n > CAP ? NULL : weft_broadcast_to(cx, a, lead + sa->rank, dims);
}

static weft_value *arg_extreme(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    int axis = sa->rank && diff_next(s) % 3 ? (int)(diff_next(s) % (uint64_t)sa->rank) : WEFT_ALL_AXES;
    if (numel_of(sa) == 0 || (axis == WEFT_ALL_AXES && sa->rank == 0))
        return NULL;
    return diff_next(s) % 2 ? weft_argmax(cx, a, axis) : weft_argmin(cx, a, axis);
}

/* sort or argsort along any axis, or top_k (both results: the indices as
 * the extra value) with k up to the last dim. */
static weft_value *sort_op(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s,
                           weft_value **extra)
{
    if (sa->rank == 0)
        return NULL;
    int axis = (int)(diff_next(s) % (uint64_t)(2 * sa->rank)) - sa->rank;
    bool desc = diff_next(s) % 2;
    switch (diff_next(s) % 3) {
    case 0: return weft_sort(cx, a, axis, desc);
    case 1: return weft_argsort(cx, a, axis, desc);
    default: {
        weft_value *tk[2];
        int64_t k = (int64_t)(diff_next(s) % (uint64_t)(sa->dims[sa->rank - 1] + 1));
        if (weft_top_k(cx, a, k, true, tk) != 0)
            return NULL;
        *extra = tk[1];
        return tk[0];
    }
    }
}

static weft_value *reduce(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    int axes[WEFT_MAX_RANK], n_axes = 0;
    for (int d = 0; d < sa->rank; d++)
        if (diff_next(s) % 2)
            axes[n_axes++] = diff_next(s) % 2 ? d : d - sa->rank;
    /* Given in any order. */
    if (n_axes > 1 && diff_next(s) % 2) {
        int t = axes[0];
        axes[0] = axes[n_axes - 1];
        axes[n_axes - 1] = t;
    }
    weft_reduction r = (weft_reduction)(diff_next(s) % 9);
    return weft_reduce(cx, r, a, axes, (size_t)n_axes, diff_next(s) % 2);
}

/* The shape a matmul of a and b gives with flags, or false when they do
 * not fit (mirrors ops.h: vectors, batch broadcasting, transposes). */
static bool matmul_fits(const weft_spec *a, const weft_spec *b, unsigned flags, int64_t *numel,
                        int64_t *flops)
{
    if (a->rank == 0 || b->rank == 0)
        return false;
    if ((a->rank == 1 && (flags & WEFT_TRANSPOSE_A)) || (b->rank == 1 && (flags & WEFT_TRANSPOSE_B)))
        return false;
    bool ta = flags & WEFT_TRANSPOSE_A, tb = flags & WEFT_TRANSPOSE_B;
    int64_t m = a->rank == 1 ? 1 : a->dims[a->rank - (ta ? 1 : 2)];
    int64_t ka = a->dims[a->rank - (a->rank > 1 && ta ? 2 : 1)];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - (tb ? 1 : 2)];
    int64_t nn = b->rank == 1 ? 1 : b->dims[b->rank - (tb ? 2 : 1)];
    if (ka != kb)
        return false;
    weft_spec ba = { .rank = a->rank > 2 ? a->rank - 2 : 0 };
    weft_spec bb = { .rank = b->rank > 2 ? b->rank - 2 : 0 };
    memcpy(ba.dims, a->dims, sizeof ba.dims[0] * (size_t)ba.rank);
    memcpy(bb.dims, b->dims, sizeof bb.dims[0] * (size_t)bb.rank);
    int64_t batch;
    if (!broadcasts(&ba, &bb, &batch) || (ba.rank > bb.rank ? ba.rank : bb.rank) + 2 > MAX_RANK)
        return false;
    *numel = batch * m * nn;
    *flops = *numel * ka;
    return true;
}

/* a times a pool value (a itself included) under the first flags that
 * fit, from a random start. */
static weft_value *matmul(weft_ctx *cx, weft_value *a, const weft_spec *sa, weft_value *const *pool,
                          int n, uint64_t *s)
{
    int start = (int)(diff_next(s) % (uint64_t)n);
    unsigned f0 = (unsigned)(diff_next(s) % 4);
    for (int i = 0; i <= n; i++) {
        weft_value *b = i == n ? a : pool[(start + i) % n];
        weft_spec sb = spec_of(b);
        for (unsigned j = 0; j < 4; j++) {
            unsigned flags = (f0 + j) % 4;
            int64_t ne, flops;
            if (matmul_fits(sa, &sb, flags, &ne, &flops) && ne <= CAP && flops <= MATMUL_FLOPS)
                return weft_matmul_ex(cx, a, b, flags);
        }
    }
    return NULL;
}

/* The mapped function: slice x and capture c give x * sum(c) + sigmoid(x)
 * and argmax of x along its last axis. */
static int mapped_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *total = weft_reduce(cx, WEFT_R_SUM, args[1], NULL, 0, false);
    outs[0] = weft_add(cx, weft_mul(cx, x, total), weft_sigmoid(cx, x));
    outs[1] = weft_argmax(cx, x, -1);
    return weft_ctx_status(cx);
}

static weft_value *map(weft_ctx *cx, const prog *p, weft_value *a, const weft_spec *sa,
                       weft_value *const *pool, int n, uint64_t *s, weft_value **extra)
{
    /* Slices of rank 1 at least, with a last axis that is not empty. */
    if (sa->rank < 2 || sa->dims[sa->rank - 1] == 0)
        return NULL;
    if (sa->dims[0] > MAP_ROWS) {
        int64_t end[WEFT_MAX_RANK];
        for (int d = 0; d < sa->rank; d++)
            end[d] = d == 0 ? MAP_ROWS : WEFT_END;
        a = weft_slice(cx, a, NULL, end, NULL);
    }
    weft_value *cap = pool[diff_next(s) % (uint64_t)n];
    weft_value *outs[2];
    if (weft_map_ex(cx, p->mapped, &a, 1, &cap, 1, outs, 2, (unsigned)(diff_next(s) % 3)) != 0)
        return NULL;
    *extra = outs[1];
    return outs[0];
}

/* The host function: in[0] reversed (flat), and the sum of in[1]'s
 * elements as an f64[] added in index order. */
static int host_fn(weft_tensor *const *in, size_t n_in, weft_tensor **out, size_t n_out, void *user)
{
    (void)user;
    if (n_in != 2 || n_out != 2)
        return -1;
    weft_dtype dt = weft_tensor_dtype(in[0]);
    size_t es = weft_dtype_size(dt);
    int64_t n = weft_tensor_numel(in[0]);
    const unsigned char *src = weft_tensor_data(in[0]);
    unsigned char *rev = malloc((size_t)(n ? n : 1) * es);
    if (!rev)
        return -1;
    for (int64_t i = 0; i < n; i++)
        memcpy(rev + (size_t)i * es, src + (size_t)(n - 1 - i) * es, es);
    int rc = weft_tensor_create(dt, weft_tensor_rank(in[0]), weft_tensor_dims(in[0]), rev, &out[0]);
    free(rev);
    double sum = 0;
    const void *p = weft_tensor_data(in[1]);
    for (int64_t i = 0; i < weft_tensor_numel(in[1]); i++) {
        switch (weft_tensor_dtype(in[1])) {
        case WEFT_BOOL: sum += ((const unsigned char *)p)[i]; break;
        case WEFT_I32:  sum += ((const int32_t *)p)[i]; break;
        case WEFT_I64:  sum += (double)((const int64_t *)p)[i]; break;
        case WEFT_F32:  sum += ((const float *)p)[i]; break;
        case WEFT_F64:  sum += ((const double *)p)[i]; break;
        }
    }
    if (rc == 0)
        rc = weft_tensor_create(WEFT_F64, 0, NULL, &sum, &out[1]);
    return rc;
}

static weft_value *host(weft_ctx *cx, weft_value *a, const weft_spec *sa, weft_value *const *pool,
                        int n, uint64_t *s, weft_value **extra)
{
    weft_value *in[2] = { a, pool[diff_next(s) % (uint64_t)n] };
    weft_spec specs[2] = { *sa, { .dtype = WEFT_F64, .rank = 0 } };
    weft_value *outs[2];
    unsigned flags = diff_next(s) % 2 ? WEFT_HOST_SERIAL : 0;
    if (weft_host_call_ex(cx, host_fn, NULL, in, 2, specs, 2, outs, flags) != 0)
        return NULL;
    *extra = outs[1];
    return outs[0];
}

/* Ids in [-1, segs) from a's own values: a cast to i64 (over its first
 * dim only, through reduce_max, or over every dim), modulo segs + 1,
 * minus 1; -1 drops a row. */
static weft_value *segment(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    static const int64_t seg_counts[] = { 0, 1, 3, 17, 200 };
    static const weft_reduction rs[] = { WEFT_R_SUM, WEFT_R_MEAN, WEFT_R_MAX, WEFT_R_MIN,
                                         WEFT_R_PROD };
    int64_t segs = seg_counts[diff_next(s) % 5];
    bool whole = sa->rank == 1 || diff_next(s) % 2;
    int64_t inner = whole ? 1 : numel_of(sa) / (sa->dims[0] ? sa->dims[0] : 1);
    if (sa->dims[0] == 0 || segs * inner > CAP)
        return NULL;
    weft_value *key = a;
    if (!whole) {
        int axes[MAX_RANK];
        for (int d = 1; d < sa->rank; d++)
            axes[d - 1] = d;
        key = weft_reduce(cx, WEFT_R_MAX, a, axes, (size_t)sa->rank - 1, false);
    }
    weft_value *ids = weft_mod(cx, weft_cast(cx, key, diff_next(s) % 2 ? WEFT_I64 : WEFT_I32),
                               weft_const_i64(cx, segs + 1));
    ids = weft_sub(cx, ids, weft_const_i64(cx, 1));
    return weft_unsorted_segment(cx, rs[diff_next(s) % 5], numeric(cx, a, sa), ids, segs);
}

/* Index tuples into a's first k (1 or 2) dims from a pool value b (cast,
 * modulo each dim, and now and then minus it: negative indices); NULL
 * when the result or the updates would be too large.  *rows receives the
 * number of elements one tuple picks. */
static weft_value *tuples(weft_ctx *cx, const weft_spec *sa, weft_value *b, uint64_t *s,
                          int64_t *rows)
{
    weft_spec sb = spec_of(b);
    int k = sa->rank >= 2 && diff_next(s) % 2 ? 2 : 1;
    int64_t pick = numel_of(sa);
    for (int d = 0; d < k; d++) {
        if (sa->dims[d] == 0)
            return NULL;
        pick /= sa->dims[d];
    }
    if (numel_of(&sb) * pick > CAP || sb.rank + 1 + sa->rank - k > MAX_RANK + 1)
        return NULL;
    weft_value *bi = weft_cast(cx, b, diff_next(s) % 2 ? WEFT_I64 : WEFT_I32), *cols[2];
    for (int d = 0; d < k; d++) {
        cols[d] = weft_mod(cx, d ? weft_add(cx, bi, weft_const_i64(cx, 1)) : bi,
                           weft_const_i64(cx, sa->dims[d]));
        if (diff_next(s) % 3 == 0)
            cols[d] = weft_sub(cx, cols[d], weft_const_i64(cx, sa->dims[d]));
    }
    *rows = pick;
    return weft_stack(cx, cols, (size_t)k, sb.rank);
}

static weft_value *gather_nd(weft_ctx *cx, weft_value *a, const weft_spec *sa,
                             weft_value *const *pool, int n, uint64_t *s)
{
    int64_t rows;
    weft_value *idx = tuples(cx, sa, pool[diff_next(s) % (uint64_t)n], s, &rows);
    return idx ? weft_gather_nd(cx, a, idx) : NULL;
}

/* Updates gathered from a itself by other tuples, so they have a's dtype
 * and the shape the tuples want; duplicates are likely. */
static weft_value *scatter_nd(weft_ctx *cx, weft_value *a, const weft_spec *sa,
                              weft_value *const *pool, int n, uint64_t *s)
{
    bool add = diff_next(s) % 2;
    if (add)
        a = numeric(cx, a, sa);
    weft_value *b = pool[diff_next(s) % (uint64_t)n];
    int64_t rows;
    weft_value *idx = tuples(cx, sa, b, s, &rows);
    if (!idx)
        return NULL;
    weft_value *upd = weft_gather_nd(cx, weft_neg(cx, numeric(cx, a, sa)), idx);
    if (sa->dtype == WEFT_BOOL && !add)
        upd = weft_logical_not(cx, weft_gather_nd(cx, a, idx));
    return add ? weft_scatter_nd_add(cx, a, idx, upd) : weft_scatter_nd_update(cx, a, idx, upd);
}

static weft_value *roll_repeat(weft_ctx *cx, weft_value *a, const weft_spec *sa, uint64_t *s)
{
    int axis = (int)(diff_next(s) % (uint64_t)sa->rank);
    if (diff_next(s) % 2) {
        int64_t m = sa->dims[axis], shift = (int64_t)(diff_next(s) % (uint64_t)(4 * m + 1)) - 2 * m;
        return weft_roll(cx, a, shift, axis - (diff_next(s) % 2 ? sa->rank : 0));
    }
    int64_t reps = (int64_t)(diff_next(s) % 4);
    return numel_of(sa) * reps > CAP ? NULL : weft_repeat(cx, a, reps, axis);
}

/* One op on a (and pool values); NULL when the drawn op does not fit a,
 * or on an error (the caller tells them apart by the context's status). */
static weft_value *random_op(weft_ctx *cx, const prog *p, weft_value *a, weft_value *const *pool,
                             int n, uint64_t *s, weft_value **extra)
{
    weft_spec sa = spec_of(a);
    bool r1 = sa.rank >= 1;
    switch (diff_next(s) % 25) {
    case 0: case 1: return unary(cx, a, &sa, s);
    case 2: case 3: return binary(cx, a, partner(pool, n, &sa, s), &sa, s);
    case 4: return logical(cx, a, partner(pool, n, &sa, s), &sa, s);
    case 5: return clip(cx, a, partner(pool, n, &sa, s), s);
    case 6: return transpose(cx, a, &sa, s);
    case 7: return r1 ? slice(cx, a, &sa, s) : NULL;
    case 8: return r1 ? gather(cx, a, &sa, pool, n, s) : NULL;
    case 9: return r1 ? concat(cx, a, &sa, pool, n, s) : NULL;
    case 10: return stack(cx, a, &sa, pool, n, s);
    case 11: return r1 ? split(cx, a, &sa, s, extra) : NULL;
    case 12: return reshape_dims(cx, a, &sa, s);
    case 13: return tile(cx, a, &sa, s);
    case 14: return broadcast_to(cx, a, &sa, s);
    case 15: return weft_cumsum(cx, a, r1 && diff_next(s) % 3 ? (int)(diff_next(s) % (uint64_t)sa.rank)
                                                              : WEFT_ALL_AXES);
    case 16: return arg_extreme(cx, a, &sa, s);
    case 17: return reduce(cx, a, &sa, s);
    case 18: return matmul(cx, a, &sa, pool, n, s);
    case 19: return sort_op(cx, a, &sa, s, extra);
    case 20: return nn(cx, a, &sa, s);
    case 21: return r1 ? segment(cx, a, &sa, s) : NULL;
    case 22: return r1 ? (diff_next(s) % 2 ? gather_nd(cx, a, &sa, pool, n, s)
                                           : scatter_nd(cx, a, &sa, pool, n, s)) : NULL;
    case 23: return r1 ? roll_repeat(cx, a, &sa, s) : NULL;
    default:
        return diff_next(s) % 2 ? map(cx, p, a, &sa, pool, n, s, extra)
                                : host(cx, a, &sa, pool, n, s, extra);
    }
}

static int random_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const prog *p = user;
    uint64_t s = p->seed;
    weft_value *pool[POOL];
    int n = 4;
    for (int k = 0; k < 4; k++)
        pool[k] = args[k];
    for (int op = 0; op < N_OPS; op++) {
        weft_value *a = pool[diff_next(&s) % (uint64_t)n], *extra = NULL;
        weft_value *r = random_op(cx, p, a, pool, n, &s, &extra);
        if (weft_ctx_status(cx))
            return weft_ctx_status(cx);
        /* An op that does not fit a: an elementwise one instead. */
        if (!r) {
            weft_spec sa = spec_of(a);
            r = unary(cx, a, &sa, &s);
        }
        if (!r)
            return weft_ctx_status(cx);
        diff_pool_add(pool, &n, POOL, r, &s);
        if (extra)
            diff_pool_add(pool, &n, POOL, extra, &s);
    }
    outs[0] = pool[n - 1];
    outs[1] = pool[n - 2];
    outs[2] = pool[4 + diff_next(&s) % (uint64_t)(n - 4)];
    return weft_ctx_status(cx);
}

static void check_seed(uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    static const int64_t sizes[] = { 1, 2, 3, 5, 17, 64, 130, 300, 1000 };
    int64_t A, B;
    do {
        A = sizes[diff_next(&s) % 9];
        B = sizes[diff_next(&s) % 9];
        /* A third of the seeds start above WEFT__KERNEL_SPLIT_MIN. */
    } while (A * B > CAP || (seed % 3 == 0 && A * B <= 32768));
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    weft_dtype dt = diff_next(&s) % 3 ? dts[3 + diff_next(&s) % 2] : dts[diff_next(&s) % 5];
    weft_dtype dt2 = diff_next(&s) % 4 ? dt : dts[diff_next(&s) % 5];
    int64_t full[2] = { A, B }, row[2] = { A, 1 }, col[1] = { B };
    /* Every fourth seed's inputs hold NaN, infinities, -0, denormals and
     * the integer limits too. */
    bool edges = seed % 4 == 1;
    weft_tensor *in[4] = {
        diff_random_tensor_ex(dt, 2, full, &s, edges), diff_random_tensor_ex(dt2, 2, row, &s, edges),
        diff_random_tensor_ex(dt, 1, col, &s, edges), diff_random_tensor_ex(dt2, 0, NULL, &s, edges),
    };
    weft_arg args[4];
    for (int k = 0; k < 4; k++)
        args[k] = weft_arg_tensor(in[k]);

    uint64_t body_seed = diff_next(&s);
    prog progs[N_RT];
    void *users[N_RT];
    for (int k = 0; k < N_RT; k++) {
        weft_function_desc md = { .name = "mapped", .body = mapped_body, .n_args = 2, .n_outs = 2 };
        progs[k].seed = body_seed;
        progs[k].mapped = NULL;
        cr_assert_eq(weft_function_create(rts[k], &md, &progs[k].mapped), 0, "%s", weft_errmsg());
        users[k] = &progs[k];
    }
    weft_function_desc d = { .name = "random_ops", .body = random_body, .n_args = 4, .n_outs = 3 };
    char label[120];
    snprintf(label, sizeof label, "seed %llu, [%lld,%lld] %s/%s%s", (unsigned long long)seed,
             (long long)A, (long long)B, weft_dtype_name(dt), weft_dtype_name(dt2),
             edges ? ", edge values" : "");
    diff_check(rts, rt_workers, N_RT, &d, users, args, label);
    for (int k = 0; k < N_RT; k++)
        weft_function_destroy(&progs[k].mapped);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(in[k]);
}

/* Seeds are split over a few tests so that a failure names a range; the
 * sanitized builds run a fifth of them. */
#define SEEDS_PER_TEST (TEST_SANITIZED ? 16 : 80)

Test(differential_ops, random_graphs_0)
{
    for (uint64_t seed = 0; seed < SEEDS_PER_TEST; seed++)
        check_seed(seed);
}

Test(differential_ops, random_graphs_1)
{
    for (uint64_t seed = 1000; seed < 1000 + SEEDS_PER_TEST; seed++)
        check_seed(seed);
}

Test(differential_ops, random_graphs_2)
{
    for (uint64_t seed = 2000; seed < 2000 + SEEDS_PER_TEST; seed++)
        check_seed(seed);
}
