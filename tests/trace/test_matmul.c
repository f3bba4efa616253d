/* weft_matmul and weft_matmul_ex: worked examples, NumPy's rules for
 * vectors, batches and transposes, every dtype against a naive reference,
 * traced against eager, constant folding, the buffer plan, results that do
 * not depend on the worker count, bad inputs eagerly and traced, and the
 * hold on OpenBLAS's threads. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "trace/blas.h"
#include "trace/kernels.h"

#if WEFT_HAVE_BLAS
#include <cblas.h>
#endif

static weft_runtime *rt;
static weft_ctx *cx;

static void setup(void)
{
    rt = test_runtime(2);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0, "%s", weft_errmsg());
}

static void teardown(void)
{
    weft_eager_end(&cx);
    weft_runtime_destroy(&rt);
}

TestSuite(matmul, .init = setup, .fini = teardown, .timeout = 60);

/* ---- Helpers --------------------------------------------------------- */

static weft_tensor *mk(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

/* A tensor of dt whose elements are the doubles v (converted). */
static weft_tensor *mk_from(weft_dtype dt, int rank, const int64_t *dims, const double *v)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
    size_t es = weft_dtype_size(dt);
    char *buf = malloc((size_t)(numel ? numel : 1) * es);
    for (int64_t i = 0; i < numel; i++) {
        switch (dt) {
        case WEFT_BOOL: ((uint8_t *)buf)[i] = v[i] != 0; break;
        case WEFT_I32:  ((int32_t *)buf)[i] = (int32_t)v[i]; break;
        case WEFT_I64:  ((int64_t *)buf)[i] = (int64_t)v[i]; break;
        case WEFT_F32:  ((float *)buf)[i] = (float)v[i]; break;
        case WEFT_F64:  ((double *)buf)[i] = v[i]; break;
        }
    }
    weft_tensor *t = mk(dt, rank, dims, buf);
    free(buf);
    return t;
}

static weft_value *ev(weft_tensor *t)
{
    weft_value *v = weft_eager_value(cx, t);
    cr_assert_not_null(v, "%s", weft_errmsg());
    return v;
}

/* Wraps a tensor the test made for one value only and drops the test's
 * reference: the context holds it from here on and frees it at
 * weft_eager_end. */
static weft_value *ev_owned(weft_tensor *t)
{
    weft_value *v = ev(t);
    weft_tensor_release(t);
    return v;
}

static void check_shape(const weft_tensor *t, weft_dtype dt, int rank, const int64_t *dims)
{
    cr_assert_not_null(t, "op failed: %s", weft_errmsg());
    cr_assert_eq(weft_tensor_dtype(t), dt, "dtype %d, want %d", weft_tensor_dtype(t), dt);
    cr_assert_eq(weft_tensor_rank(t), rank, "rank %d, want %d", weft_tensor_rank(t), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "dim %d: %lld, want %lld", d,
                     (long long)weft_tensor_dims(t)[d], (long long)dims[d]);
}

/* Checks v's tensor: dtype, shape and the values want (exactly). */
static void check_values(weft_value *v, weft_dtype dt, int rank, const int64_t *dims,
                         const double *want)
{
    cr_assert_not_null(v, "op failed: %s", weft_errmsg());
    weft_tensor *t = weft_value_tensor(v);
    check_shape(t, dt, rank, dims);
    for (int64_t i = 0; i < weft_tensor_numel(t); i++)
        cr_assert_eq(test_element(t, i), want[i], "element %lld: %g, want %g", (long long)i,
                     test_element(t, i), want[i]);
}

/* ---- Worked examples ------------------------------------------------- */

/* [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]], in
 * every number dtype, with each operand stored as given or transposed. */
Test(matmul, worked_example_all_number_dtypes)
{
    const double a[6] = {1, 2, 3, 4, 5, 6}, at[6] = {1, 4, 2, 5, 3, 6};
    const double b[6] = {7, 8, 9, 10, 11, 12}, bt[6] = {7, 9, 11, 8, 10, 12};
    const double want[4] = {58, 64, 139, 154};
    const weft_dtype dts[] = {WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64};
    for (size_t d = 0; d < 4; d++) {
        weft_dtype dt = dts[d];
        weft_value *va = ev_owned(mk_from(dt, 2, (int64_t[]){2, 3}, a));
        weft_value *vat = ev_owned(mk_from(dt, 2, (int64_t[]){3, 2}, at));
        weft_value *vb = ev_owned(mk_from(dt, 2, (int64_t[]){3, 2}, b));
        weft_value *vbt = ev_owned(mk_from(dt, 2, (int64_t[]){2, 3}, bt));
        const int64_t out[2] = {2, 2};
        check_values(weft_matmul(cx, va, vb), dt, 2, out, want);
        check_values(weft_matmul_ex(cx, va, vb, 0), dt, 2, out, want);
        check_values(weft_matmul_ex(cx, vat, vb, WEFT_TRANSPOSE_A), dt, 2, out, want);
        check_values(weft_matmul_ex(cx, va, vbt, WEFT_TRANSPOSE_B), dt, 2, out, want);
        check_values(weft_matmul_ex(cx, vat, vbt, WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B), dt, 2,
                     out, want);
    }
    cr_assert_eq(weft_ctx_status(cx), 0, "%s", weft_errmsg());
}

/* A 1-D operand is a vector, as in NumPy: the added dim is dropped. */
Test(matmul, vectors)
{
    const double a[6] = {1, 2, 3, 4, 5, 6}, x3[3] = {1, 0, -1}, x2[2] = {1, -1}, y3[3] = {4, 5, 6};
    weft_value *va = ev_owned(mk_from(WEFT_F32, 2, (int64_t[]){2, 3}, a));
    weft_value *v3 = ev_owned(mk_from(WEFT_F32, 1, (int64_t[]){3}, x3));
    weft_value *v2 = ev_owned(mk_from(WEFT_F32, 1, (int64_t[]){2}, x2));
    weft_value *w3 = ev_owned(mk_from(WEFT_F32, 1, (int64_t[]){3}, y3));
    /* [2,3] x [3] -> [2]; [2] x [2,3] -> [3]; [3] x [3] -> [] (a dot). */
    check_values(weft_matmul(cx, va, v3), WEFT_F32, 1, (int64_t[]){2}, (double[]){-2, -2});
    check_values(weft_matmul(cx, v2, va), WEFT_F32, 1, (int64_t[]){3}, (double[]){-3, -3, -3});
    check_values(weft_matmul(cx, v3, w3), WEFT_F32, 0, NULL, (double[]){-2});
    /* Transposed matrices with vectors: [3,2]^T x [3] and [2] x [3,2]^T. */
    const double at[6] = {1, 4, 2, 5, 3, 6};
    weft_value *vat = ev_owned(mk_from(WEFT_F32, 2, (int64_t[]){3, 2}, at));
    check_values(weft_matmul_ex(cx, vat, v3, WEFT_TRANSPOSE_A), WEFT_F32, 1, (int64_t[]){2},
                 (double[]){-2, -2});
    check_values(weft_matmul_ex(cx, v2, vat, WEFT_TRANSPOSE_B), WEFT_F32, 1, (int64_t[]){3},
                 (double[]){-3, -3, -3});
    /* i64 vector x i32 matrix promotes to i64. */
    weft_value *i3 = ev_owned(mk_from(WEFT_I64, 1, (int64_t[]){3}, x3));
    weft_value *ia = ev_owned(mk_from(WEFT_I32, 2, (int64_t[]){2, 3}, a));
    check_values(weft_matmul(cx, ia, i3), WEFT_I64, 1, (int64_t[]){2}, (double[]){-2, -2});
}

/* Batch dims broadcast: [2,1,2,2] x [3,2,2] -> [2,3,2,2], where batch (i,j)
 * is A[i] x B[j]; a vector against a batch: [2] x [3,2,2] -> [3,2]. */
Test(matmul, batches_broadcast)
{
    double a[8], b[12];
    for (int i = 0; i < 8; i++)
        a[i] = i + 1;
    for (int i = 0; i < 12; i++)
        b[i] = (i % 5) - 2;
    weft_value *va = ev_owned(mk_from(WEFT_F64, 4, (int64_t[]){2, 1, 2, 2}, a));
    weft_value *vb = ev_owned(mk_from(WEFT_I32, 3, (int64_t[]){3, 2, 2}, b));
    double want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 2; c++)
                    want[((i * 3 + j) * 2 + r) * 2 + c] =
                        a[i * 4 + r * 2] * b[j * 4 + c] + a[i * 4 + r * 2 + 1] * b[j * 4 + 2 + c];
    check_values(weft_matmul(cx, va, vb), WEFT_F64, 4, (int64_t[]){2, 3, 2, 2}, want);
    weft_value *x = ev_owned(mk_from(WEFT_I32, 1, (int64_t[]){2}, (double[]){1, -1}));
    double want_v[6];
    for (int j = 0; j < 3; j++)
        for (int c = 0; c < 2; c++)
            want_v[j * 2 + c] = b[j * 4 + c] - b[j * 4 + 2 + c];
    check_values(weft_matmul(cx, x, vb), WEFT_I32, 2, (int64_t[]){3, 2}, want_v);
    /* Zero-size batch and inner dims: [0,2,3] x [3,2] is [0,2,2]; an empty
     * sum ([2,0] x [0,3]) is zeros. */
    weft_value *e = ev_owned(mk(WEFT_F32, 3, (int64_t[]){0, 2, 3}, NULL));
    weft_value *m32 = ev_owned(mk(WEFT_F32, 2, (int64_t[]){3, 2}, NULL));
    check_values(weft_matmul(cx, e, m32), WEFT_F32, 3, (int64_t[]){0, 2, 2}, NULL);
    weft_value *k0a = ev_owned(mk(WEFT_I64, 2, (int64_t[]){2, 0}, NULL));
    weft_value *k0b = ev_owned(mk(WEFT_I64, 2, (int64_t[]){0, 3}, NULL));
    check_values(weft_matmul(cx, k0a, k0b), WEFT_I64, 2, (int64_t[]){2, 3},
                 (double[]){0, 0, 0, 0, 0, 0});
}

/* bool x bool is bool, NumPy's rule: any over k of (a and b).  With a
 * number, bool promotes like any other op's operand. */
Test(matmul, bool_is_or_of_ands)
{
    const double a[4] = {1, 0, 0, 0}, b[4] = {0, 1, 1, 1}, c[6] = {1, 1, 0, 0, 0, 1};
    weft_value *va = ev_owned(mk_from(WEFT_BOOL, 2, (int64_t[]){2, 2}, a));
    weft_value *vb = ev_owned(mk_from(WEFT_BOOL, 2, (int64_t[]){2, 2}, b));
    check_values(weft_matmul(cx, va, vb), WEFT_BOOL, 2, (int64_t[]){2, 2}, (double[]){0, 1, 0, 0});
    check_values(weft_matmul_ex(cx, va, vb, WEFT_TRANSPOSE_B), WEFT_BOOL, 2, (int64_t[]){2, 2},
                 (double[]){0, 1, 0, 0});
    check_values(weft_matmul_ex(cx, vb, va, WEFT_TRANSPOSE_A), WEFT_BOOL, 2, (int64_t[]){2, 2},
                 (double[]){0, 0, 1, 0});
    /* [2,3] bools times itself transposed: rows that share a true column. */
    weft_value *vc = ev_owned(mk_from(WEFT_BOOL, 2, (int64_t[]){2, 3}, c));
    check_values(weft_matmul_ex(cx, vc, vc, WEFT_TRANSPOSE_B), WEFT_BOOL, 2, (int64_t[]){2, 2},
                 (double[]){1, 0, 0, 1});
    /* bool x i32 computes in i32: counts instead of any. */
    weft_value *ones = ev_owned(mk_from(WEFT_I32, 2, (int64_t[]){3, 1}, (double[]){1, 1, 1}));
    check_values(weft_matmul(cx, vc, ones), WEFT_I32, 2, (int64_t[]){2, 1}, (double[]){2, 1});
}

/* ---- Against a naive reference --------------------------------------- */

/* The product computed naively from a's and b's elements, in the output
 * dtype: integers wrap (computed in uint64 and truncated), bool is or-and,
 * floats in double.  Batch dims broadcast from the right. */
typedef struct ref_case {
    weft_dtype dt;
    int ra, rb;
    int64_t adims[WEFT_MAX_RANK], bdims[WEFT_MAX_RANK];
    unsigned flags;
} ref_case;

static uint64_t u64_of(const weft_tensor *t, int64_t i)
{
    const void *p = weft_tensor_data(t);
    switch (weft_tensor_dtype(t)) {
    case WEFT_BOOL: return ((const uint8_t *)p)[i];
    case WEFT_I32:  return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case WEFT_I64:  return (uint64_t)((const int64_t *)p)[i];
    default:        return 0;
    }
}

/* Compares weft's result with the reference, element by element.  Float
 * results may differ by rounding: at most k ulps-worth of the sum of
 * absolute products. */
static void compare_reference(const ref_case *rc, const weft_tensor *a, const weft_tensor *b,
                              const weft_tensor *got)
{
    bool ta = rc->flags & WEFT_TRANSPOSE_A, tb = rc->flags & WEFT_TRANSPOSE_B;
    int ra = rc->ra, rb = rc->rb;
    int64_t m = ra == 1 ? 1 : rc->adims[ta ? ra - 1 : ra - 2];
    int64_t k = ra == 1 ? rc->adims[0] : rc->adims[ta ? ra - 2 : ra - 1];
    int64_t n = rb == 1 ? 1 : rc->bdims[tb ? rb - 2 : rb - 1];
    int anb = ra > 2 ? ra - 2 : 0, bnb = rb > 2 ? rb - 2 : 0, nb = anb > bnb ? anb : bnb;
    int64_t bd[WEFT_MAX_RANK], batches = 1;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - anb), db = d - (nb - bnb);
        int64_t x = da >= 0 ? rc->adims[da] : 1, y = db >= 0 ? rc->bdims[db] : 1;
        bd[d] = x == 1 ? y : x;
        batches *= bd[d];
    }
    int want_rank = nb + (ra > 1) + (rb > 1);
    cr_assert_eq(weft_tensor_rank(got), want_rank);
    for (int d = 0; d < nb; d++)
        cr_assert_eq(weft_tensor_dims(got)[d], bd[d], "batch dim %d", d);
    int64_t a_mat = ra == 1 ? k : rc->adims[ra - 2] * rc->adims[ra - 1];
    int64_t b_mat = rb == 1 ? k : rc->bdims[rb - 2] * rc->bdims[rb - 1];
    int64_t lda = rc->adims[ra - 1], ldb = rb == 1 ? 1 : rc->bdims[rb - 1];
    bool is_float = rc->dt == WEFT_F32 || rc->dt == WEFT_F64;
    double eps = rc->dt == WEFT_F32 ? 0x1p-23 : 0x1p-52;
    /* The elements once as doubles and as wrapped integers. */
    int64_t na = weft_tensor_numel(a), nbe = weft_tensor_numel(b);
    double *fa = malloc(sizeof(double) * (size_t)(na + 1));
    double *fb = malloc(sizeof(double) * (size_t)(nbe + 1));
    uint64_t *ia = malloc(sizeof(uint64_t) * (size_t)(na + 1));
    uint64_t *ib = malloc(sizeof(uint64_t) * (size_t)(nbe + 1));
    for (int64_t i = 0; i < na; i++)
        is_float ? (void)(fa[i] = test_element(a, i)) : (void)(ia[i] = u64_of(a, i));
    for (int64_t i = 0; i < nbe; i++)
        is_float ? (void)(fb[i] = test_element(b, i)) : (void)(ib[i] = u64_of(b, i));
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t aoff = 0, boff = 0, rest = bi, astride = a_mat, bstride = b_mat;
        for (int d = nb - 1; d >= 0; d--) {
            int64_t i = rest % bd[d];
            rest /= bd[d];
            int da = d - (nb - anb), db = d - (nb - bnb);
            if (da >= 0) {
                aoff += (rc->adims[da] == 1 ? 0 : i) * astride;
                astride *= rc->adims[da];
            }
            if (db >= 0) {
                boff += (rc->bdims[db] == 1 ? 0 : i) * bstride;
                bstride *= rc->bdims[db];
            }
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double fsum = 0, fabs_sum = 0;
                uint64_t isum = 0;
                const int64_t a0 = aoff + (ta ? i : i * lda), as = ta ? lda : 1;
                const int64_t b0 = boff + (tb ? j * ldb : j), bs = tb ? 1 : ldb;
                if (is_float) {
                    for (int64_t p = 0; p < k; p++) {
                        double x = fa[a0 + p * as] * fb[b0 + p * bs];
                        fsum += x;
                        fabs_sum += fabs(x);
                    }
                } else if (rc->dt == WEFT_BOOL) {
                    for (int64_t p = 0; p < k; p++)
                        isum |= ia[a0 + p * as] & ib[b0 + p * bs];
                } else {
                    for (int64_t p = 0; p < k; p++)
                        isum += ia[a0 + p * as] * ib[b0 + p * bs];
                }
                int64_t o = (bi * m + i) * n + j;
                double g = test_element(got, o);
                if (is_float) {
                    double tol = 2.0 * (double)(k + 2) * eps * fabs_sum;
                    cr_assert(fabs(g - fsum) <= tol, "batch %lld [%lld,%lld]: %.17g, want %.17g",
                              (long long)bi, (long long)i, (long long)j, g, fsum);
                } else {
                    uint64_t want = rc->dt == WEFT_I32 ? (uint64_t)(int64_t)(int32_t)(uint32_t)isum
                                                       : isum;
                    cr_assert_eq(u64_of(got, o), want, "batch %lld [%lld,%lld]", (long long)bi,
                                 (long long)i, (long long)j);
                }
            }
    }
    free(fa), free(fb), free(ia), free(ib);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

/* Random values: small integers (exact sums), reals for floats, and
 * large integers, so that i32 products wrap. */
static weft_tensor *random_tensor(weft_dtype dt, int rank, const int64_t *dims)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
    void *buf = malloc((size_t)(numel ? numel : 1) * weft_dtype_size(dt));
    bool big = rnd(4) == 0;
    for (int64_t i = 0; i < numel; i++) {
        int64_t small = (int64_t)rnd(9) - 4;
        switch (dt) {
        case WEFT_BOOL: ((uint8_t *)buf)[i] = small > 0; break;
        case WEFT_I32:
            ((int32_t *)buf)[i] = big ? (int32_t)rnd(1u << 30) - (1 << 29) : (int32_t)small;
            break;
        case WEFT_I64: ((int64_t *)buf)[i] = small; break;
        case WEFT_F32:
            ((float *)buf)[i] = big ? (float)rnd(2000001) / 1e6f - 1.0f : (float)small;
            break;
        case WEFT_F64:
            ((double *)buf)[i] = big ? (double)rnd(2000001) / 1e6 - 1.0 : (double)small;
            break;
        }
    }
    weft_tensor *t = mk(dt, rank, dims, buf);
    free(buf);
    return t;
}

static void run_reference(const ref_case *rc)
{
    weft_tensor *a = random_tensor(rc->dt, rc->ra, rc->adims);
    weft_tensor *b = random_tensor(rc->dt, rc->rb, rc->bdims);
    weft_value *r = weft_matmul_ex(cx, ev(a), ev(b), rc->flags);
    cr_assert_not_null(r, "%s", weft_errmsg());
    compare_reference(rc, a, b, weft_value_tensor(r));
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* A random case: ranks 1-4, batch dims that broadcast (some 1s), m and n
 * in lo..lo+span-1, k in klo..klo+span, transposes where the operand is a
 * matrix. */
static ref_case random_case(weft_dtype dt, int64_t lo, int64_t klo, uint64_t span)
{
    ref_case rc = {.dt = dt};
    rc.ra = 1 + (int)rnd(4);
    rc.rb = 1 + (int)rnd(3);
    int64_t m = lo + (int64_t)rnd(span), k = klo + (int64_t)rnd(span + 1);
    int64_t n = lo + (int64_t)rnd(span);
    int anb = rc.ra > 2 ? rc.ra - 2 : 0, bnb = rc.rb > 2 ? rc.rb - 2 : 0;
    int nb = anb > bnb ? anb : bnb;
    int64_t bd[WEFT_MAX_RANK];
    for (int d = 0; d < nb; d++)
        bd[d] = 1 + (int64_t)rnd(3);
    for (int d = 0; d < anb; d++)
        rc.adims[d] = rnd(3) == 0 ? 1 : bd[d + nb - anb];
    for (int d = 0; d < bnb; d++)
        rc.bdims[d] = rnd(3) == 0 ? 1 : bd[d + nb - bnb];
    bool ta = rc.ra > 1 && rnd(2), tb = rc.rb > 1 && rnd(2);
    rc.flags = (ta ? WEFT_TRANSPOSE_A : 0) | (tb ? WEFT_TRANSPOSE_B : 0);
    if (rc.ra == 1) {
        rc.adims[0] = k;
    } else {
        rc.adims[rc.ra - 2] = ta ? k : m;
        rc.adims[rc.ra - 1] = ta ? m : k;
    }
    if (rc.rb == 1) {
        rc.bdims[0] = k;
    } else {
        rc.bdims[rc.rb - 2] = tb ? n : k;
        rc.bdims[rc.rb - 1] = tb ? k : n;
    }
    return rc;
}

/* Small products (the loops, for every dtype), including empty sums. */
Test(matmul, random_small_against_naive_all_dtypes)
{
    const weft_dtype dts[] = {WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64};
    for (size_t d = 0; d < 5; d++)
        for (int i = 0; i < 60; i++) {
            ref_case rc = random_case(dts[d], 1, 0, 8);
            run_reference(&rc);
        }
}

/* Products of 4096 multiply-adds or more: f32 and f64 on the BLAS (one
 * tile each; vectors by gemv), integers on the loops. */
Test(matmul, random_medium_against_naive)
{
    const weft_dtype dts[] = {WEFT_F32, WEFT_F64, WEFT_I64};
    for (size_t d = 0; d < 3; d++)
        for (int i = 0; i < 30; i++) {
            ref_case rc = random_case(dts[d], 16, 16, 24);
            if (rc.ra == 1 || rc.rb == 1)   /* a vector product: k * n or m * k >= 4096 */
                rc = random_case(dts[d], 64, 64, 16);
            run_reference(&rc);
        }
}

/* Sizes just past the tiling (the smallest that cut into several tiles,
 * to stay fast under the sanitizers): gemm in 2 x 2 tiles, each
 * transposed or not, matrix-vector and vector-matrix products in row or
 * column blocks, a batch of BLAS products.  i32 takes the loops, split by
 * rows. */
Test(matmul, large_against_naive)
{
    const weft_dtype dts[] = {WEFT_F32, WEFT_F64, WEFT_I32};
    for (size_t d = 0; d < 3; d++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            bool ta = flags & WEFT_TRANSPOSE_A, tb = flags & WEFT_TRANSPOSE_B;
            ref_case gemm = {.dt = dts[d], .ra = 2, .rb = 2, .flags = flags};
            int64_t m = 129, k = 16, n = 513;
            gemm.adims[0] = ta ? k : m, gemm.adims[1] = ta ? m : k;
            gemm.bdims[0] = tb ? n : k, gemm.bdims[1] = tb ? k : n;
            run_reference(&gemm);
        }
        ref_case batch = {.dt = dts[d], .ra = 4, .rb = 3, .adims = {3, 1, 20, 25},
                          .bdims = {2, 15, 25}, .flags = WEFT_TRANSPOSE_B};
        run_reference(&batch);
    }
    /* The vector products hold 2^20 elements to be cut: f32 only (f64 runs
     * the same code, one macro). */
    ref_case mv = {.dt = WEFT_F32, .ra = 2, .rb = 1, .adims = {300, 3500}, .bdims = {3500}};
    run_reference(&mv);
    mv.flags = WEFT_TRANSPOSE_A;
    mv.adims[0] = 3500, mv.adims[1] = 300;
    run_reference(&mv);
    ref_case vm = {.dt = WEFT_F32, .ra = 1, .rb = 2, .adims = {960}, .bdims = {960, 1100}};
    run_reference(&vm);
    vm.flags = WEFT_TRANSPOSE_B;
    vm.bdims[0] = 1100, vm.bdims[1] = 960;
    run_reference(&vm);
}

/* ---- Same bits everywhere -------------------------------------------- */

static weft_tensor *product_on(unsigned workers, weft_tensor *a, weft_tensor *b, unsigned flags)
{
    weft_runtime *r = test_runtime_of(workers);
    weft_ctx *c = NULL;
    cr_assert_eq(weft_eager_begin(r, &c), 0);
    weft_value *v = weft_matmul_ex(c, weft_eager_value(c, a), weft_eager_value(c, b), flags);
    cr_assert_not_null(v, "%s", weft_errmsg());
    weft_tensor *t = weft_tensor_retain(weft_value_tensor(v));
    weft_eager_end(&c);
    weft_runtime_destroy(&r);
    return t;
}

static int body_const_product(weft_ctx *c, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    weft_tensor *const *ab = user;
    outs[0] = weft_matmul_ex(c, weft_const_tensor(c, ab[0]), weft_const_tensor(c, ab[1]),
                             WEFT_TRANSPOSE_B);
    return weft_ctx_status(c);
}

/* Tiles follow the shape, not the worker count: 1, 2 and 4 workers and
 * constant folding (serial, at compile time) give the same bits. */
Test(matmul, same_bits_on_any_worker_count_and_folded)
{
    int64_t m = 130, k = 300, n = 600;
    weft_tensor *a = random_tensor(WEFT_F32, 2, (int64_t[]){m, k});
    weft_tensor *b = random_tensor(WEFT_F32, 2, (int64_t[]){n, k});
    weft_tensor *one = product_on(1, a, b, WEFT_TRANSPOSE_B);
    size_t bytes = (size_t)(m * n) * sizeof(float);
    const unsigned counts[] = {2, 4};
    for (size_t i = 0; i < 2; i++) {
        weft_tensor *t = product_on(counts[i], a, b, WEFT_TRANSPOSE_B);
        cr_assert(memcmp(weft_tensor_data(t), weft_tensor_data(one), bytes) == 0,
                  "%u workers differ from 1", counts[i]);
        weft_tensor_release(t);
    }
    /* Folded: the body's product of two constants is computed by the
     * compiler; the program holds a constant, no matmul. */
    weft_tensor *ab[2] = {a, b};
    weft_function_desc d = {.name = "folded", .body = body_const_product, .user = ab, .n_outs = 1};
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, NULL, 0, &out, 1), 0, "%s", weft_errmsg());
    cr_assert(memcmp(weft_tensor_data(out), weft_tensor_data(one), bytes) == 0,
              "the folded product differs");
    char *text = test_ops_text(f);
    cr_assert_null(strstr(text, "matmul"), "not folded:\n%s", text);
    free(text);
    weft_tensor_release(out);
    weft_function_destroy(&f);
    weft_tensor_release(one);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* ---- Traced ---------------------------------------------------------- */

typedef struct traced_case {
    unsigned flags;
    weft_spec seen;     /* the result's spec while tracing */
} traced_case;

static int body_product(weft_ctx *c, weft_value *const *args, weft_value **outs, void *user)
{
    traced_case *tc = user;
    outs[0] = weft_matmul_ex(c, args[0], args[1], tc->flags);
    if (outs[0])
        weft_value_spec(outs[0], &tc->seen);
    return weft_ctx_status(c);
}

/* A function of body_product (tc says the flags) under the input
 * signature sig_a, sig_b. */
static weft_function *product_fn(const char *sig_a, const char *sig_b, traced_case *tc)
{
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse(sig_a, &sig[0]), 0);
    cr_assert_eq(weft_spec_parse(sig_b, &sig[1]), 0);
    weft_function_desc d = {.name = "product", .body = body_product, .user = tc, .n_args = 2,
                            .n_outs = 1, .input_signature = sig};
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

/* Calls body_product with flags under the signature sig_a, sig_b on a and
 * b, checks the spec it saw while tracing, then compares with eager bit
 * for bit. */
static void traced_vs_eager(const char *sig_a, const char *sig_b, unsigned flags,
                            const char *traced_spec, weft_tensor *a, weft_tensor *b)
{
    traced_case tc = {.flags = flags};
    weft_function *f = product_fn(sig_a, sig_b, &tc);
    weft_arg args[2] = {weft_arg_tensor(a), weft_arg_tensor(b)};
    weft_tensor *got = NULL;
    cr_assert_eq(weft_function_call(f, args, 2, &got, 1), 0, "%s", weft_errmsg());
    char s[64];
    weft_spec_format(&tc.seen, s, sizeof s);
    cr_assert_str_eq(s, traced_spec);
    weft_value *e = weft_matmul_ex(cx, ev(a), ev(b), flags);
    cr_assert_not_null(e, "%s", weft_errmsg());
    weft_tensor *want = weft_value_tensor(e);
    check_shape(got, weft_tensor_dtype(want), weft_tensor_rank(want), weft_tensor_dims(want));
    size_t bytes = (size_t)weft_tensor_numel(want) * weft_dtype_size(weft_tensor_dtype(want));
    cr_assert(memcmp(weft_tensor_data(got), weft_tensor_data(want), bytes) == 0,
              "traced and eager differ (%s x %s)", sig_a, sig_b);
    weft_tensor_release(got);
    weft_function_destroy(&f);
}

/* Unknown dims and ranks while tracing; the run computes what eager does. */
Test(matmul, traced_unknown_dims_match_eager)
{
    weft_tensor *a = random_tensor(WEFT_F32, 3, (int64_t[]){2, 40, 30});
    weft_tensor *b = random_tensor(WEFT_F32, 2, (int64_t[]){30, 50});
    weft_tensor *bt = random_tensor(WEFT_F32, 2, (int64_t[]){50, 30});
    weft_tensor *v = random_tensor(WEFT_F32, 1, (int64_t[]){30});
    weft_tensor *bb = random_tensor(WEFT_I64, 4, (int64_t[]){3, 1, 30, 5});
    weft_tensor *ai = random_tensor(WEFT_I64, 3, (int64_t[]){2, 40, 30});
    traced_vs_eager("f32[?,?,30]", "f32[30,?]", 0, "f32[?,?,?]", a, b);
    traced_vs_eager("f32[?,40,?]", "f32[?,?]", WEFT_TRANSPOSE_B, "f32[?,40,?]", a, bt);
    traced_vs_eager("f32[*]", "f32[30,50]", 0, "f32[*]", a, b);
    traced_vs_eager("f32[2,40,30]", "f32[?]", 0, "f32[2,40]", a, v);
    traced_vs_eager("f32[?]", "f32[?,?,?]", WEFT_TRANSPOSE_B, "f32[?,?]", v, a);
    traced_vs_eager("i64[?,?,30]", "i64[?,1,30,?]", 0, "i64[?,?,?,?]", ai, bb);
    traced_vs_eager("f32[2,40,30]", "i64[3,1,30,5]", 0, "f32[3,2,40,5]", a, bb);
    weft_tensor *all[] = {a, b, bt, v, bb, ai};
    for (size_t i = 0; i < 6; i++)
        weft_tensor_release(all[i]);
}

static int body_two_products(weft_ctx *c, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    /* x is dead after the products and has their dtype and shape: a
     * planner that let a matmul write in place would corrupt its input. */
    weft_value *x = weft_add(c, args[0], args[0]);
    outs[0] = weft_matmul_ex(c, x, x, WEFT_TRANSPOSE_A);
    outs[1] = weft_matmul_ex(c, x, x, 0);
    return weft_ctx_status(c);
}

/* CSE keeps two products that differ only in their flags, and the buffer
 * plan never lets a product write into its input. */
Test(matmul, traced_flags_kept_apart_and_never_in_place)
{
    weft_function_desc d = {.name = "two", .body = body_two_products, .n_args = 1, .n_outs = 2};
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    double v[2 * 9];
    for (int i = 0; i < 18; i++)
        v[i] = i - 5;
    weft_tensor *a = mk_from(WEFT_F64, 3, (int64_t[]){2, 3, 3}, v);
    weft_arg arg = weft_arg_tensor(a);
    weft_tensor *out[2] = {NULL, NULL};
    for (int call = 0; call < 2; call++) {
        cr_assert_eq(weft_function_call(f, &arg, 1, out, 2), 0, "%s", weft_errmsg());
        for (int bi = 0; bi < 2; bi++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    double t = 0, p = 0;
                    for (int q = 0; q < 3; q++) {
                        t += 4 * v[bi * 9 + q * 3 + i] * v[bi * 9 + q * 3 + j];
                        p += 4 * v[bi * 9 + i * 3 + q] * v[bi * 9 + q * 3 + j];
                    }
                    cr_assert_eq(test_element(out[0], bi * 9 + i * 3 + j), t);
                    cr_assert_eq(test_element(out[1], bi * 9 + i * 3 + j), p);
                }
        weft_tensor_release(out[0]);
        weft_tensor_release(out[1]);
    }
    char *text = test_ops_text(f);
    cr_assert(strstr(text, "matmul<transpose_a>("), "got:\n%s", text);
    cr_assert(strstr(text, "matmul("), "got:\n%s", text);
    /* No product line reuses a buffer (the only dead one is their input). */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, "matmul"))
            cr_assert_null(strstr(line, "reuses"), "%s", line);
    free(text);
    weft_tensor_release(a);
    weft_function_destroy(&f);
}

/* ---- Bad inputs ------------------------------------------------------ */

static void eager_fails(weft_value *r, int code, const char *msg)
{
    cr_assert_null(r);
    cr_assert_eq(weft_ctx_status(cx), code, "%s", weft_errmsg());
    cr_assert_str_eq(weft_errmsg(), msg);
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
}

Test(matmul, bad_inputs_eager)
{
    weft_tensor *m23 = mk(WEFT_F32, 2, (int64_t[]){2, 3}, NULL);
    weft_tensor *v3 = mk(WEFT_F32, 1, (int64_t[]){3}, NULL);
    weft_tensor *b223 = mk(WEFT_F32, 3, (int64_t[]){2, 2, 3}, NULL);
    weft_tensor *b332 = mk(WEFT_F32, 3, (int64_t[]){3, 3, 2}, NULL);
    eager_fails(weft_matmul(cx, ev(m23), ev(m23)), WEFT_ESHAPE,
                "weft_matmul: f32[2,3] and f32[2,3] have different inner dims");
    eager_fails(weft_matmul_ex(cx, ev(m23), ev(m23), WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B),
                WEFT_ESHAPE,
                "weft_matmul: f32[2,3] and f32[2,3] have different inner dims "
                "(with both transposed)");
    eager_fails(weft_matmul(cx, weft_const_f64(cx, 1), ev(v3)), WEFT_ESHAPE,
                "weft_matmul: f32[] and f32[3] include a scalar (matmul needs 1-D or more)");
    eager_fails(weft_matmul_ex(cx, ev(v3), ev(m23), WEFT_TRANSPOSE_A), WEFT_ESHAPE,
                "weft_matmul: WEFT_TRANSPOSE_A transposes a matrix, not the vector f32[3]");
    eager_fails(weft_matmul_ex(cx, ev(m23), ev(v3), WEFT_TRANSPOSE_B), WEFT_ESHAPE,
                "weft_matmul: WEFT_TRANSPOSE_B transposes a matrix, not the vector f32[3]");
    eager_fails(weft_matmul_ex(cx, ev(b223), ev(b332), 0), WEFT_ESHAPE,
                "weft_matmul: f32[2,2,3] and f32[3,3,2] have batch dims that do not broadcast");
    eager_fails(weft_matmul_ex(cx, ev(m23), ev(m23), 8u), WEFT_EINVAL,
                "weft_matmul_ex: unknown flags 0x8");
    eager_fails(weft_matmul_ex(cx, NULL, ev(m23), 0), WEFT_EINVAL,
                "weft_matmul_ex: input 0 is NULL");
    eager_fails(weft_matmul(cx, ev(m23), NULL), WEFT_EINVAL, "weft_matmul: input 1 is NULL");
    weft_tensor *all[] = {m23, v3, b223, b332};
    for (size_t i = 0; i < 4; i++)
        weft_tensor_release(all[i]);
}

/* Traced: known dims fail at trace time, unknown ones when the call
 * brings them (the run checks its shapes again), with eager's code. */
static void traced_fails(const char *sig_a, const char *sig_b, unsigned flags, weft_tensor *a,
                         weft_tensor *b, int code, const char *needle)
{
    traced_case tc = {.flags = flags};
    weft_function *f = product_fn(sig_a, sig_b, &tc);
    weft_arg args[2] = {weft_arg_tensor(a), weft_arg_tensor(b)};
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, args, 2, &out, 1), code, "%s", weft_errmsg());
    cr_assert_null(out);
    cr_assert(strstr(weft_errmsg(), needle), "errmsg \"%s\" lacks \"%s\"", weft_errmsg(), needle);
    weft_function_destroy(&f);
}

Test(matmul, bad_inputs_traced)
{
    weft_tensor *m23 = mk(WEFT_F32, 2, (int64_t[]){2, 3}, NULL);
    weft_tensor *m45 = mk(WEFT_F32, 2, (int64_t[]){4, 5}, NULL);
    weft_tensor *v3 = mk(WEFT_F32, 1, (int64_t[]){3}, NULL);
    weft_tensor *b223 = mk(WEFT_F32, 3, (int64_t[]){2, 2, 3}, NULL);
    weft_tensor *b332 = mk(WEFT_F32, 3, (int64_t[]){3, 3, 2}, NULL);
    /* At trace time. */
    traced_fails("f32[?,3]", "f32[4,?]", 0, m23, m45, WEFT_ESHAPE, "have different inner dims");
    traced_fails("f32[3]", "f32[?,?]", WEFT_TRANSPOSE_A, v3, m23, WEFT_ESHAPE,
                 "WEFT_TRANSPOSE_A transposes a matrix, not the vector f32[3]");
    traced_fails("f32[2,?,3]", "f32[3,?,2]", 0, b223, b332, WEFT_ESHAPE,
                 "have batch dims that do not broadcast");
    /* At run time, from unknown dims. */
    traced_fails("f32[?,?]", "f32[?,?]", 0, m23, m45, WEFT_ESHAPE,
                 "f32[2,3] and f32[4,5] have different inner dims");
    traced_fails("f32[?,2,3]", "f32[?,3,2]", 0, b223, b332, WEFT_ESHAPE,
                 "have batch dims that do not broadcast");
    traced_fails("f32[*]", "f32[*]", WEFT_TRANSPOSE_B, m23, v3, WEFT_ESHAPE,
                 "WEFT_TRANSPOSE_B transposes a matrix, not the vector f32[3]");
    weft_tensor *all[] = {m23, m45, v3, b223, b332};
    for (size_t i = 0; i < 5; i++)
        weft_tensor_release(all[i]);
}

/* ---- Kernel details -------------------------------------------------- */

/* The executor may hand a product a reused buffer: whatever bits it held
 * (NaN here) never reach the result, on the gemm and the gemv paths. */
Test(matmul, reused_buffer_garbage_ignored)
{
    const int64_t shapes[][3] = {{64, 64, 64}, {200, 100, 1}, {1, 100, 200}, {1, 1, 1}};
    for (size_t s = 0; s < 4; s++) {
        int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        weft_tensor *a = random_tensor(WEFT_F64, 2, (int64_t[]){m, k});
        weft_tensor *b = random_tensor(WEFT_F64, 2, (int64_t[]){k, n});
        weft__node node = {.op = WEFT__OP_MATMUL, .n_in = 2};
        node.in = node.inline_in;
        weft_tensor *in[2] = {a, b}, *want = NULL;
        cr_assert_eq(weft__kernel_eval(rt, &node, in, &want), 0, "%s", weft_errmsg());
        weft_tensor *out = random_tensor(WEFT_F64, 2, (int64_t[]){m, n});
        double *o = weft__tensor_mut(out);
        for (int64_t i = 0; i < m * n; i++)
            o[i] = NAN;
        cr_assert_eq(weft__kernel_eval_into(rt, &node, in, out), 0, "%s", weft_errmsg());
        cr_assert(memcmp(o, weft_tensor_data(want), (size_t)(m * n) * sizeof(double)) == 0,
                  "[%lld,%lld]x[%lld,%lld]", (long long)m, (long long)k, (long long)k,
                  (long long)n);
        weft_tensor *all[] = {a, b, want, out};
        for (size_t i = 0; i < 4; i++)
            weft_tensor_release(all[i]);
    }
}

/* While a product is in OpenBLAS, a threaded build computes on the calling
 * thread alone; afterwards the program's count is back, unless the
 * program changed it meanwhile. */
Test(matmul, blas_threads_held_and_restored)
{
#if WEFT_HAVE_BLAS
    if (openblas_get_parallel() != 1)
        cr_skip_test("OpenBLAS is not its pthreads build here");
    openblas_set_num_threads(2);
    weft__blas_hold();
    cr_assert_eq(openblas_get_num_threads(), 1);
    weft__blas_hold();
    weft__blas_release();
    cr_assert_eq(openblas_get_num_threads(), 1, "nested holds keep it");
    weft__blas_release();
    cr_assert_eq(openblas_get_num_threads(), 2, "restored");
    /* A count the program sets during a hold is left alone. */
    weft__blas_hold();
    openblas_set_num_threads(3);
    weft__blas_release();
    cr_assert_eq(openblas_get_num_threads(), 3);
    /* And a real product. */
    openblas_set_num_threads(2);
    weft_tensor *a = random_tensor(WEFT_F32, 2, (int64_t[]){200, 200});
    cr_assert_not_null(weft_matmul(cx, ev(a), ev(a)), "%s", weft_errmsg());
    cr_assert_eq(openblas_get_num_threads(), 2);
    weft_tensor_release(a);
#else
    cr_assert(!weft__blas_available());
    cr_skip_test("built without a BLAS");
#endif
}
