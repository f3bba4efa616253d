/* NumPy's linear-algebra compositions: np.linalg.matrix_power, multi_dot,
 * tensorinv and tensorsolve, made of matmul, matrix_inverse, matrix_solve
 * and reshapes (so their gradients come from those ops' rules).  Each
 * multiplies in NumPy's order, so the roundings are NumPy's where the
 * BLAS is the same. */
#include <math.h>
#include <stdint.h>

#include "base/base.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#define MULTI_DOT_MAX 256

weft_value *weft_matrix_power(weft_ctx *cx, weft_value *a, int64_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_matrix_power";
    if (!weft__op_enter(cx, fn, &a, 1) || !weft__ops_square_matrices(cx, fn, "a", a))
        return NULL;
    if (n == 0) {   /* the identity of a's dtype and dims (unknown ones too): row == column */
        weft_value *ones = weft_ones_like(cx, weft_cast(cx, a, WEFT_I32));
        weft_value *diagonal = weft_eq(cx, weft_cumsum(cx, ones, -2), weft_cumsum(cx, ones, -1));
        return WEFT__KEEP(weft_cast(cx, diagonal, weft__value_spec(a)->dtype));
    }
    uint64_t m = (uint64_t)n;
    if (n < 0) {   /* NumPy inverts integers in f64 */
        a = weft_matrix_inverse(cx, weft__ops_as_dtype(cx, a, weft__ops_float_dtype(&a, 1)));
        m = 0 - m;
    }
    if (m <= 3) {   /* NumPy's short cuts: a, a a, (a a) a */
        weft_value *r = a;
        for (uint64_t k = 1; k < m; k++)
            r = weft_matmul(cx, r, a);
        return WEFT__KEEP(r);
    }
    /* The bits of m from the lowest: z runs through a^(2^k), and the
     * result takes the z of each set bit, as NumPy multiplies them. */
    weft_value *z = NULL, *r = NULL;
    for (; m > 0; m >>= 1) {
        z = z ? weft_matmul(cx, z, z) : a;
        if (m & 1)
            r = r ? weft_matmul(cx, r, z) : z;
    }
    return WEFT__KEEP(r);
}

/* ---- multi_dot ------------------------------------------------------------ */

/* The product of mats[i..j] split where NumPy's chain order says. */
static weft_value *chain_product(weft_ctx *cx, weft_value *const *mats, const size_t *split,
                                 size_t n, size_t i, size_t j)
{
    if (i == j)
        return mats[i];
    size_t k = split[i * n + j];
    return weft_matmul(cx, chain_product(cx, mats, split, n, i, k),
                       chain_product(cx, mats, split, n, k + 1, j));
}

/* NumPy's _multi_dot_matrix_chain_order (Cormen's dynamic program, costs
 * in double, the first best split kept) into split[i * n + j], for the
 * n matrices of dims p[0] x p[1], p[1] x p[2], ...; three matrices as
 * its _multi_dot_three, which takes A(BC) on a tie. */
static int chain_order(weft_ctx *cx, const double *p, size_t n, size_t *split)
{
    if (n == 3) {
        double ab_c = p[0] * p[2] * (p[1] + p[3]), a_bc = p[1] * p[3] * (p[0] + p[2]);
        split[0 * n + 2] = ab_c < a_bc ? 1 : 0;
        split[0 * n + 1] = 0;
        split[1 * n + 2] = 1;
        return 0;
    }
    double *cost = weft__calloc(n * n, sizeof *cost);
    if (!cost) {
        weft__ctx_fail(cx, WEFT_ENOMEM, "weft_multi_dot: out of memory");
        return WEFT_ENOMEM;
    }
    for (size_t l = 1; l < n; l++)
        for (size_t i = 0; i + l < n; i++) {
            size_t j = i + l;
            cost[i * n + j] = INFINITY;
            for (size_t k = i; k < j; k++) {
                double q = cost[i * n + k] + cost[(k + 1) * n + j] + p[i] * p[k + 1] * p[j + 1];
                if (q < cost[i * n + j]) {
                    cost[i * n + j] = q;
                    split[i * n + j] = k;
                }
            }
        }
    weft__free(cost);
    return 0;
}

/* The operands as matrices (a first vector a row, a last one a column)
 * into mats, their dims into p when all are known; false with the context
 * failing otherwise. */
static bool as_matrices(weft_ctx *cx, const char *fn, weft_value *const *arrays, size_t n,
                        weft_value **mats, double *p, bool *known)
{
    *known = true;
    for (size_t i = 0; i < n; i++) {
        const weft_spec *s = weft__value_spec(arrays[i]);
        bool end = i == 0 || i == n - 1;
        if (s->rank != 2 && !(end && s->rank == 1)) {
            char ss[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arrays[%zu] %s is not a matrix (only "
                                  "the first and the last may be vectors; ranks known while "
                                  "tracing)", fn, i, weft__spec_str(s, ss, sizeof ss)), false;
        }
        mats[i] = s->rank == 2 ? arrays[i] : weft_expand_dims(cx, arrays[i], i == 0 ? 0 : 1);
        const weft_spec *m = weft__value_spec(mats[i]);
        *known = *known && m->dims[0] != WEFT_DIM_ANY && m->dims[1] != WEFT_DIM_ANY;
        p[i] = (double)m->dims[0];
        p[i + 1] = (double)m->dims[1];
    }
    return weft_ctx_status(cx) == 0;
}

weft_value *weft_multi_dot(weft_ctx *cx, weft_value *const *arrays, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_multi_dot";
    if (!arrays || n < 2 || n > MULTI_DOT_MAX)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu arrays (2 to %d)", fn, arrays ? n : 0,
                              MULTI_DOT_MAX);
    if (!weft__op_enter(cx, fn, arrays, n))
        return NULL;
    weft_value **mats = weft__calloc(n, sizeof *mats);
    double *p = weft__calloc(n + 1, sizeof *p);
    size_t *split = weft__calloc(n * n, sizeof *split);
    weft_value *r = NULL;
    bool known;
    if (!mats || !p || !split)
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    else if (!as_matrices(cx, fn, arrays, n, mats, p, &known))
        ;
    else if (n > 2 && !known)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a dim of the %zu arrays is unknown while tracing, "
                       "and NumPy's order of the products depends on every one", fn, n);
    else if (n == 2 || chain_order(cx, p, n, split) == 0)
        r = chain_product(cx, mats, split, n, 0, n - 1);
    /* NumPy's result drops the dims its vectors gained. */
    if (r && weft__value_spec(arrays[n - 1])->rank == 1)
        r = weft_squeeze(cx, r, 1);
    if (r && weft__value_spec(arrays[0])->rank == 1)
        r = weft_squeeze(cx, r, 0);
    weft__free(mats);
    weft__free(p);
    weft__free(split);
    return weft_ctx_status(cx) == 0 ? WEFT__KEEP(r) : NULL;
}

/* ---- tensorinv and tensorsolve -------------------------------------------- */

/* The product of dims[from..to), all known while tracing; false with the
 * context failing (naming fn and v) when one is unknown or it overflows. */
static bool known_product(weft_ctx *cx, const char *fn, const char *name, const weft_value *v,
                          int from, int to, int64_t *out)
{
    const weft_spec *s = weft__value_spec(v);
    char ss[WEFT__SPEC_STR_MAX];
    int64_t prod = 1;
    for (int d = from; d < to; d++) {
        if (s->dims[d] == WEFT_DIM_ANY)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s has a dim unknown while tracing",
                                  fn, name, weft__spec_str(s, ss, sizeof ss)), false;
        if (__builtin_mul_overflow(prod, s->dims[d], &prod))
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s has too many elements", fn, name,
                                  weft__spec_str(s, ss, sizeof ss)), false;
    }
    *out = prod;
    return true;
}

weft_value *weft_tensorinv(weft_ctx *cx, weft_value *a, int ind)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_tensorinv";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    int rank = weft__ops_known_rank(cx, fn, "a", a);
    if (rank < 0)
        return NULL;
    if (ind <= 0 || ind > rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: ind %d is not in [1, %d], a's rank", fn, ind,
                              rank);
    int64_t before, after;
    if (!known_product(cx, fn, "a", a, 0, ind, &before) ||
        !known_product(cx, fn, "a", a, ind, rank, &after))
        return NULL;
    const weft_spec *s = weft__value_spec(a);
    if (before != after) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s splits at ind %d into %lld and %lld "
                              "elements, not a square matrix", fn, weft__spec_str(s, ss, sizeof ss),
                              ind, (long long)before, (long long)after);
    }
    /* NumPy: inv(a.reshape(after, -1)), the same matrix as before x
     * after since both are equal, shaped as a's dims from ind on, then
     * those before it. */
    int64_t square[2] = { after, before }, dims[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        dims[d] = s->dims[(d + ind) % rank];
    a = weft__ops_as_dtype(cx, a, weft__ops_float_dtype(&a, 1));
    weft_value *inv = weft_matrix_inverse(cx, weft_reshape(cx, a, 2, square));
    return WEFT__KEEP(weft_reshape(cx, inv, rank, dims));
}

/* a's dims reordered as NumPy's tensorsolve moves axes to the end, into
 * perm; false with the context failing on an axis out of range or given
 * twice (so at most rank of them). */
static bool axes_to_end(weft_ctx *cx, const char *fn, int rank, const int *axes, size_t n_axes,
                        int *perm)
{
    bool moved[WEFT_MAX_RANK] = { false };
    for (size_t k = 0; k < n_axes; k++) {
        int axis = axes[k] < 0 ? axes[k] + rank : axes[k];
        if (axis < 0 || axis >= rank || moved[axis])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axes[%zu] = %d is out of range for rank "
                                  "%d or given twice", fn, k, axes[k], rank), false;
        moved[axis] = true;
    }
    int at = 0;
    for (int d = 0; d < rank; d++)
        if (!moved[d])
            perm[at++] = d;
    for (size_t k = 0; k < n_axes; k++)
        perm[at++] = axes[k] < 0 ? axes[k] + rank : axes[k];
    return true;
}

weft_value *weft_tensorsolve(weft_ctx *cx, weft_value *a, weft_value *b, const int *axes,
                             size_t n_axes)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_tensorsolve";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    int an = weft__ops_known_rank(cx, fn, "a", a), bn = weft__ops_known_rank(cx, fn, "b", b);
    if (an < 0 || bn < 0)
        return NULL;
    if (an <= bn)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a's rank %d is not above b's %d", fn, an, bn);
    if (n_axes > 0 && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axes is NULL with n_axes %zu", fn, n_axes);
    int perm[WEFT_MAX_RANK];
    if (!axes_to_end(cx, fn, an, axes, n_axes, perm))
        return NULL;
    if (n_axes > 0)
        a = weft_transpose(cx, a, perm);
    int64_t rows, cols, size_b;
    if (!known_product(cx, fn, "a", a, 0, bn, &rows) ||
        !known_product(cx, fn, "a", a, bn, an, &cols) ||
        !known_product(cx, fn, "b", b, 0, bn, &size_b))
        return NULL;
    if (rows != cols || size_b != cols) {
        char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: a %s (its axes moved) and b %s need "
                              "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim]) == b.size", fn,
                              weft__spec_str(weft__value_spec(a), sa, sizeof sa),
                              weft__spec_str(weft__value_spec(b), sb, sizeof sb));
    }
    /* NumPy's common type: f32 only when both are. */
    weft_dtype dt = weft__value_spec(in[0])->dtype == WEFT_F32 &&
                    weft__value_spec(b)->dtype == WEFT_F32 ? WEFT_F32 : WEFT_F64;
    int64_t square[2] = { rows, cols }, column[2] = { cols, 1 };
    weft_value *matrix = weft_reshape(cx, weft__ops_as_dtype(cx, a, dt), 2, square);
    weft_value *rhs = weft_reshape(cx, weft__ops_as_dtype(cx, b, dt), 2, column);
    weft_value *x = weft_matrix_solve(cx, matrix, rhs, false);
    return WEFT__KEEP(weft_reshape(cx, x, an - bn, weft__value_spec(a)->dims + bn));
}
