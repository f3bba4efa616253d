/* The kernel layer (trace/kernels.h) on hand-built nodes: every op against
 * a scalar reference computed here, broadcasting, shape inference with
 * unknown dims, error messages, and parallel results against serial ones. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "test_util.h"
#include "trace/kernels.h"

static weft_tensor *mk(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft__node node(weft__op op, uint32_t n_in)
{
    weft__node n;
    memset(&n, 0, sizeof n);
    n.op = op;
    n.n_in = n_in;
    n.in = n.inline_in;
    n.after = WEFT__NO_NODE;
    return n;
}

static weft_tensor *eval(weft_runtime *rt, const weft__node *n, weft_tensor *const *in)
{
    weft_tensor *out = NULL;
    int rc = weft__kernel_eval(rt, n, in, &out);
    cr_assert_eq(rc, 0, "weft__kernel_eval(%s): %s", weft__op_name(n->op), weft_errmsg());
    cr_assert_not_null(out);
    return out;
}

static weft_tensor *eval2(weft_runtime *rt, weft__op op, weft_tensor *a, weft_tensor *b)
{
    weft__node n = node(op, 2);
    weft_tensor *in[2] = {a, b};
    return eval(rt, &n, in);
}

static weft_tensor *eval1(weft_runtime *rt, weft__op op, weft_tensor *a)
{
    weft__node n = node(op, 1);
    weft_tensor *in[1] = {a};
    return eval(rt, &n, in);
}

static void check_dims(const weft_tensor *t, int rank, const int64_t *dims)
{
    cr_assert_eq(weft_tensor_rank(t), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "dim %d", d);
}

/* ---- References ------------------------------------------------------ */

static int64_t ref_floordiv(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    return (int64_t)floor((double)a / (double)b);   /* exact for the small values used */
}

static int64_t ref_floormod(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    return a - b * ref_floordiv(a, b);
}

static int64_t ref_ipow(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    int64_t r = 1;
    for (int64_t i = 0; i < b; i++)
        r *= a;
    return r;
}

static int64_t ref_int(weft__op op, int64_t a, int64_t b)
{
    switch (op) {
    case WEFT__OP_ADD: return a + b;
    case WEFT__OP_SUB: return a - b;
    case WEFT__OP_MUL: return a * b;
    case WEFT__OP_DIV: return ref_floordiv(a, b);
    case WEFT__OP_MOD: return ref_floormod(a, b);
    case WEFT__OP_POW: return ref_ipow(a, b);
    case WEFT__OP_MINIMUM: return a < b ? a : b;
    case WEFT__OP_MAXIMUM: return a > b ? a : b;
    case WEFT__OP_EQ: return a == b;
    case WEFT__OP_NE: return a != b;
    case WEFT__OP_LT: return a < b;
    case WEFT__OP_LE: return a <= b;
    case WEFT__OP_GT: return a > b;
    case WEFT__OP_GE: return a >= b;
    default: cr_assert_fail("no reference"); return 0;
    }
}

static double ref_flt(weft__op op, double a, double b)
{
    switch (op) {
    case WEFT__OP_ADD: return a + b;
    case WEFT__OP_SUB: return a - b;
    case WEFT__OP_MUL: return a * b;
    case WEFT__OP_DIV: return a / b;
    case WEFT__OP_MOD: return a - b * floor(a / b);
    case WEFT__OP_POW: return pow(a, b);
    case WEFT__OP_MINIMUM: return a < b ? a : b;
    case WEFT__OP_MAXIMUM: return a > b ? a : b;
    case WEFT__OP_EQ: return a == b;
    case WEFT__OP_NE: return a != b;
    case WEFT__OP_LT: return a < b;
    case WEFT__OP_LE: return a <= b;
    case WEFT__OP_GT: return a > b;
    case WEFT__OP_GE: return a >= b;
    default: cr_assert_fail("no reference"); return 0;
    }
}

static bool is_cmp(weft__op op) { return op >= WEFT__OP_EQ && op <= WEFT__OP_GE; }

static const weft__op binops[] = {
    WEFT__OP_ADD, WEFT__OP_SUB, WEFT__OP_MUL, WEFT__OP_DIV, WEFT__OP_MOD,
    WEFT__OP_POW, WEFT__OP_MINIMUM, WEFT__OP_MAXIMUM, WEFT__OP_EQ, WEFT__OP_NE,
    WEFT__OP_LT, WEFT__OP_LE, WEFT__OP_GT, WEFT__OP_GE,
};
#define N_BINOPS (sizeof binops / sizeof binops[0])

/* ---- Elementwise ----------------------------------------------------- */

/* [3,1] op [4] -> [3,4] for integers, with negatives and zero divisors. */
Test(kernels, binary_int_broadcast, .timeout = 30)
{
    const int64_t da[2] = {3, 1}, db[1] = {4};
    const int32_t a32[3] = {-7, 0, 9};
    const int32_t b32[4] = {2, -3, 0, 4};
    const int64_t a64[3] = {-7, 0, 9};
    const int64_t b64[4] = {2, -3, 0, 4};
    weft_tensor *a[2] = {mk(WEFT_I32, 2, da, a32), mk(WEFT_I64, 2, da, a64)};
    weft_tensor *b[2] = {mk(WEFT_I32, 1, db, b32), mk(WEFT_I64, 1, db, b64)};
    const int64_t want_dims[2] = {3, 4};
    for (int t = 0; t < 2; t++) {
        for (size_t k = 0; k < N_BINOPS; k++) {
            weft__op op = binops[k];
            weft_tensor *o = eval2(NULL, op, a[t], b[t]);
            check_dims(o, 2, want_dims);
            cr_assert_eq(weft_tensor_dtype(o), is_cmp(op) ? WEFT_BOOL : (t ? WEFT_I64 : WEFT_I32));
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 4; j++) {
                    int64_t want = ref_int(op, a64[i], b64[j]);
                    int64_t got;
                    if (is_cmp(op))
                        got = ((const uint8_t *)weft_tensor_data(o))[i * 4 + j];
                    else if (t)
                        got = ((const int64_t *)weft_tensor_data(o))[i * 4 + j];
                    else
                        got = ((const int32_t *)weft_tensor_data(o))[i * 4 + j];
                    cr_assert_eq(got, want, "%s(%lld, %lld) dtype %d: %lld != %lld",
                                 weft__op_name(op), (long long)a64[i], (long long)b64[j], t,
                                 (long long)got, (long long)want);
                }
            weft_tensor_release(o);
        }
    }
    for (int t = 0; t < 2; t++) {
        weft_tensor_release(a[t]);
        weft_tensor_release(b[t]);
    }
}

Test(kernels, binary_float_broadcast, .timeout = 30)
{
    const int64_t da[2] = {3, 1}, db[1] = {4};
    const double a64[3] = {-7.5, 0.25, 9.0};
    const double b64[4] = {2.0, -3.0, 0.5, 4.0};
    float a32[3], b32[4];
    for (int i = 0; i < 3; i++)
        a32[i] = (float)a64[i];
    for (int i = 0; i < 4; i++)
        b32[i] = (float)b64[i];
    weft_tensor *a[2] = {mk(WEFT_F32, 2, da, a32), mk(WEFT_F64, 2, da, a64)};
    weft_tensor *b[2] = {mk(WEFT_F32, 1, db, b32), mk(WEFT_F64, 1, db, b64)};
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; k < N_BINOPS; k++) {
            weft__op op = binops[k];
            weft_tensor *o = eval2(NULL, op, a[t], b[t]);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 4; j++) {
                    double want = ref_flt(op, a64[i], b64[j]), got;
                    if (is_cmp(op))
                        got = ((const uint8_t *)weft_tensor_data(o))[i * 4 + j];
                    else if (t)
                        got = ((const double *)weft_tensor_data(o))[i * 4 + j];
                    else
                        got = ((const float *)weft_tensor_data(o))[i * 4 + j];
                    if (t == 0 && !is_cmp(op))
                        want = (float)want;
                    if (isnan(want)) {
                        cr_assert(isnan(got), "%s(%g, %g)", weft__op_name(op), a64[i], b64[j]);
                        continue;
                    }
                    cr_assert(fabs(got - want) <= 1e-6 * fabs(want), "%s(%g, %g): %g != %g",
                              weft__op_name(op), a64[i], b64[j], got, want);
                }
            weft_tensor_release(o);
        }
    for (int t = 0; t < 2; t++) {
        weft_tensor_release(a[t]);
        weft_tensor_release(b[t]);
    }
}

Test(kernels, int_edge_cases, .timeout = 30)
{
    const int64_t d[1] = {8};
    const int32_t a[8] = {-7, 7, -7, 7, INT32_MIN, INT32_MIN, INT32_MAX, 5};
    const int32_t b[8] = {2, -2, -2, 0, -1, -1, 1, 0};
    weft_tensor *ta = mk(WEFT_I32, 1, d, a), *tb = mk(WEFT_I32, 1, d, b);
    weft_tensor *q = eval2(NULL, WEFT__OP_DIV, ta, tb);
    weft_tensor *r = eval2(NULL, WEFT__OP_MOD, ta, tb);
    weft_tensor *s = eval2(NULL, WEFT__OP_ADD, ta, tb);
    const int32_t wq[8] = {-4, -4, 3, 0, INT32_MIN, INT32_MIN, INT32_MAX, 0};
    const int32_t wr[8] = {1, -1, -1, 0, 0, 0, 0, 0};
    const int32_t ws[8] = {-5, 5, -9, 7, INT32_MAX, INT32_MAX, INT32_MIN, 5};  /* wraps */
    cr_assert_arr_eq(weft_tensor_data(q), wq, sizeof wq);
    cr_assert_arr_eq(weft_tensor_data(r), wr, sizeof wr);
    cr_assert_arr_eq(weft_tensor_data(s), ws, sizeof ws);
    weft_tensor *m = eval2(NULL, WEFT__OP_MUL, ta, ta);
    cr_assert_eq(((const int32_t *)weft_tensor_data(m))[6], 1);   /* MAX*MAX wraps to 1 */
    weft_tensor *ng = eval1(NULL, WEFT__OP_NEG, ta), *ab = eval1(NULL, WEFT__OP_ABS, ta);
    cr_assert_eq(((const int32_t *)weft_tensor_data(ng))[4], INT32_MIN);
    cr_assert_eq(((const int32_t *)weft_tensor_data(ab))[4], INT32_MIN);
    cr_assert_eq(((const int32_t *)weft_tensor_data(ab))[0], 7);
    cr_assert_eq(((const int32_t *)weft_tensor_data(ng))[1], -7);
    /* pow: wrapping and negative exponents. */
    const int64_t pa[6] = {2, 3, -1, 1, 0, 2}, pb[6] = {10, -1, -3, -5, -1, 64};
    weft_tensor *tpa = mk(WEFT_I64, 1, (int64_t[]){6}, pa), *tpb = mk(WEFT_I64, 1, (int64_t[]){6}, pb);
    weft_tensor *p = eval2(NULL, WEFT__OP_POW, tpa, tpb);
    const int64_t wp[6] = {1024, 0, -1, 1, 0, 0};
    cr_assert_arr_eq(weft_tensor_data(p), wp, sizeof wp);
    weft_tensor *all[] = {ta, tb, q, r, s, m, ng, ab, tpa, tpb, p};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        weft_tensor_release(all[i]);
}

/* Bool takes logic (min is and, max is or, comparisons, the logical ops)
 * and refuses arithmetic. */
Test(kernels, bool_ops, .timeout = 30)
{
    const int64_t d[1] = {4};
    const uint8_t a[4] = {0, 0, 1, 1}, b[4] = {0, 1, 0, 1};
    weft_tensor *ta = mk(WEFT_BOOL, 1, d, a), *tb = mk(WEFT_BOOL, 1, d, b);
    struct { weft__op op; uint8_t want[4]; } cases[] = {
        {WEFT__OP_MINIMUM, {0, 0, 0, 1}}, {WEFT__OP_MAXIMUM, {0, 1, 1, 1}},
        {WEFT__OP_EQ, {1, 0, 0, 1}},      {WEFT__OP_LT, {0, 1, 0, 0}},
        {WEFT__OP_LOGICAL_AND, {0, 0, 0, 1}}, {WEFT__OP_LOGICAL_OR, {0, 1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_tensor *o = eval2(NULL, cases[i].op, ta, tb);
        cr_assert_eq(weft_tensor_dtype(o), WEFT_BOOL);
        cr_assert_arr_eq(weft_tensor_data(o), cases[i].want, 4, "%s", weft__op_name(cases[i].op));
        weft_tensor_release(o);
    }
    weft_tensor *nt = eval1(NULL, WEFT__OP_LOGICAL_NOT, ta);
    const uint8_t wnot[4] = {1, 1, 0, 0};
    cr_assert_arr_eq(weft_tensor_data(nt), wnot, 4);
    weft_tensor_release(nt);
    const weft__op refused[] = {WEFT__OP_ADD, WEFT__OP_SUB, WEFT__OP_MUL, WEFT__OP_DIV,
                                WEFT__OP_MOD, WEFT__OP_POW, WEFT__OP_FLOORDIV};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        weft__node n = node(refused[i], 2);
        weft_tensor *in[2] = {ta, tb}, *out = NULL;
        cr_assert_eq(weft__kernel_eval(NULL, &n, in, &out), WEFT_EDTYPE, "%s",
                     weft__op_name(refused[i]));
        cr_assert(strstr(weft_errmsg(), "are bool"), "%s", weft_errmsg());
        cr_assert_null(out);
    }
    weft__node neg = node(WEFT__OP_NEG, 1);
    weft_tensor *out = NULL;
    cr_assert_eq(weft__kernel_eval(NULL, &neg, &ta, &out), WEFT_EDTYPE);
    cr_assert_null(out);
    weft_tensor_release(ta);
    weft_tensor_release(tb);
}

Test(kernels, float_nan_min_max_and_mod, .timeout = 30)
{
    const int64_t d[1] = {4};
    const double a[4] = {NAN, 1.0, -1.0, 5.5}, b[4] = {1.0, NAN, INFINITY, -2.0};
    weft_tensor *ta = mk(WEFT_F64, 1, d, a), *tb = mk(WEFT_F64, 1, d, b);
    weft_tensor *mn = eval2(NULL, WEFT__OP_MINIMUM, ta, tb), *mx = eval2(NULL, WEFT__OP_MAXIMUM, ta, tb);
    weft_tensor *md = eval2(NULL, WEFT__OP_MOD, ta, tb), *eq = eval2(NULL, WEFT__OP_NE, ta, tb);
    const double *pn = weft_tensor_data(mn), *px = weft_tensor_data(mx), *pm = weft_tensor_data(md);
    cr_assert(isnan(pn[0]) && isnan(pn[1]) && isnan(px[0]) && isnan(px[1]));
    cr_assert_eq(pn[2], -1.0);
    cr_assert_eq(px[2], INFINITY);
    cr_assert_eq(pm[3], -0.5);          /* 5.5 = -2 * -3 + -0.5 */
    cr_assert_eq(pm[2], INFINITY);      /* -1 mod inf, like Python */
    const uint8_t wne[4] = {1, 1, 1, 1};
    cr_assert_arr_eq(weft_tensor_data(eq), wne, 4);
    weft_tensor *all[] = {ta, tb, mn, mx, md, eq};
    for (size_t i = 0; i < 6; i++)
        weft_tensor_release(all[i]);
}

/* A zero remainder takes the divisor's sign, as Python's % gives:
 * -7.0 % 3.5 == 0.0 and 7.0 % -3.5 == -0.0 (C's fmod keeps the
 * dividend's sign). */
Test(kernels, float_mod_zero_has_the_divisors_sign, .timeout = 30)
{
    const int64_t d[1] = {4};
    const double a[4] = {-7.0, 7.0, 7.0, -7.0}, b[4] = {3.5, -3.5, 3.5, -3.5};
    const float af[4] = {-7.0f, 7.0f, 7.0f, -7.0f}, bf[4] = {3.5f, -3.5f, 3.5f, -3.5f};
    const int neg[4] = {0, 1, 0, 1};
    weft_tensor *ta = mk(WEFT_F64, 1, d, a), *tb = mk(WEFT_F64, 1, d, b);
    weft_tensor *tfa = mk(WEFT_F32, 1, d, af), *tfb = mk(WEFT_F32, 1, d, bf);
    weft_tensor *md = eval2(NULL, WEFT__OP_MOD, ta, tb), *mf = eval2(NULL, WEFT__OP_MOD, tfa, tfb);
    const double *pm = weft_tensor_data(md);
    const float *pf = weft_tensor_data(mf);
    for (int i = 0; i < 4; i++) {
        cr_assert(pm[i] == 0.0 && !!signbit(pm[i]) == neg[i], "f64 %g %% %g = %g", a[i], b[i], pm[i]);
        cr_assert(pf[i] == 0.0f && !!signbit(pf[i]) == neg[i], "f32 %g %% %g = %g", a[i], b[i],
                  (double)pf[i]);
    }
    weft_tensor *all[] = {ta, tb, tfa, tfb, md, mf};
    for (size_t i = 0; i < 6; i++)
        weft_tensor_release(all[i]);
}

Test(kernels, unary_float, .timeout = 30)
{
    const int64_t d[1] = {5};
    const float a[5] = {4.0f, 0.25f, 1.0f, -2.0f, 0.0f};
    weft_tensor *ta = mk(WEFT_F32, 1, d, a);
    weft__op ops[5] = {WEFT__OP_NEG, WEFT__OP_ABS, WEFT__OP_SQRT, WEFT__OP_EXP, WEFT__OP_LOG};
    for (int k = 0; k < 5; k++) {
        weft_tensor *o = eval1(NULL, ops[k], ta);
        const float *p = weft_tensor_data(o);
        for (int i = 0; i < 5; i++) {
            float x = a[i], want = k == 0 ? -x : k == 1 ? fabsf(x) : k == 2 ? sqrtf(x)
                                        : k == 3 ? expf(x) : logf(x);
            if (isnan(want))
                cr_assert(isnan(p[i]), "%s(%g)", weft__op_name(ops[k]), x);
            else
                cr_assert_eq(p[i], want, "%s(%g): %g != %g", weft__op_name(ops[k]), x, p[i], want);
        }
        weft_tensor_release(o);
    }
    /* sqrt of an integer is a dtype error (ops.c casts to f64 first). */
    weft_tensor *ti = mk(WEFT_I32, 1, d, NULL), *out = NULL;
    weft__node n = node(WEFT__OP_SQRT, 1);
    cr_assert_eq(weft__kernel_eval(NULL, &n, &ti, &out), WEFT_EDTYPE);
    cr_assert_null(out);
    weft_tensor_release(ti);
    weft_tensor_release(ta);
}

static weft_tensor *cast(weft_tensor *a, weft_dtype to)
{
    weft__node n = node(WEFT__OP_CAST, 1);
    n.attr.cast.to = to;
    return eval(NULL, &n, &a);
}

Test(kernels, cast_edge_cases, .timeout = 30)
{
    const int64_t d[1] = {8};
    const double a[8] = {NAN, 1e10, -1e10, -2.7, 2.7, 0.5, -0.0, 1e19};
    weft_tensor *ta = mk(WEFT_F64, 1, d, a);
    weft_tensor *i32 = cast(ta, WEFT_I32), *i64 = cast(ta, WEFT_I64), *b = cast(ta, WEFT_BOOL);
    const int32_t w32[8] = {0, INT32_MAX, INT32_MIN, -2, 2, 0, 0, INT32_MAX};
    const int64_t w64[8] = {0, 10000000000LL, -10000000000LL, -2, 2, 0, 0, INT64_MAX};
    const uint8_t wb[8] = {1, 1, 1, 1, 1, 1, 0, 1};
    cr_assert_arr_eq(weft_tensor_data(i32), w32, sizeof w32);
    cr_assert_arr_eq(weft_tensor_data(i64), w64, sizeof w64);
    cr_assert_arr_eq(weft_tensor_data(b), wb, sizeof wb);
    /* f32 source, saturation at the i64 bottom, and int to int wrapping. */
    const float f[3] = {-1e30f, 3.9e9f, NAN};
    weft_tensor *tf = mk(WEFT_F32, 1, (int64_t[]){3}, f);
    weft_tensor *f64 = cast(tf, WEFT_I64), *f32 = cast(tf, WEFT_I32);
    cr_assert_eq(((const int64_t *)weft_tensor_data(f64))[0], INT64_MIN);
    cr_assert_eq(((const int64_t *)weft_tensor_data(f64))[1], 3900000000LL);
    cr_assert_eq(((const int64_t *)weft_tensor_data(f64))[2], 0);
    cr_assert_eq(((const int32_t *)weft_tensor_data(f32))[1], INT32_MAX);
    const int64_t big[2] = {(1LL << 32) + 5, -1};
    weft_tensor *tbig = mk(WEFT_I64, 1, (int64_t[]){2}, big);
    weft_tensor *w = cast(tbig, WEFT_I32), *wf = cast(tbig, WEFT_F32), *bb = cast(b, WEFT_F32);
    cr_assert_eq(((const int32_t *)weft_tensor_data(w))[0], 5);
    cr_assert_eq(((const int32_t *)weft_tensor_data(w))[1], -1);
    cr_assert_eq(((const float *)weft_tensor_data(wf))[1], -1.0f);
    cr_assert_eq(((const float *)weft_tensor_data(bb))[0], 1.0f);
    cr_assert_eq(((const float *)weft_tensor_data(bb))[6], 0.0f);
    weft_tensor *all[] = {ta, i32, i64, b, tf, f64, f32, tbig, w, wf, bb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        weft_tensor_release(all[i]);
}

Test(kernels, where_broadcast, .timeout = 30)
{
    const uint8_t c[3] = {1, 0, 1};
    const float a[4] = {1, 2, 3, 4}, b = -1.0f;
    weft_tensor *tc = mk(WEFT_BOOL, 2, (int64_t[]){3, 1}, c);
    weft_tensor *ta = mk(WEFT_F32, 1, (int64_t[]){4}, a);
    weft_tensor *tb = mk(WEFT_F32, 0, NULL, &b);
    weft__node n = node(WEFT__OP_WHERE, 3);
    weft_tensor *in[3] = {tc, ta, tb};
    weft_tensor *o = eval(NULL, &n, in);
    check_dims(o, 2, (int64_t[]){3, 4});
    const float *p = weft_tensor_data(o);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            cr_assert_eq(p[i * 4 + j], c[i] ? a[j] : b);
    /* Condition varying fastest, values broadcast (the generic path). */
    weft_tensor *tc2 = mk(WEFT_BOOL, 1, (int64_t[]){3}, c);
    weft_tensor *ta2 = mk(WEFT_F32, 2, (int64_t[]){4, 1}, a);
    weft_tensor *in2[3] = {tc2, ta2, tb};
    weft_tensor *o2 = eval(NULL, &n, in2);
    check_dims(o2, 2, (int64_t[]){4, 3});
    p = weft_tensor_data(o2);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            cr_assert_eq(p[i * 3 + j], c[j] ? a[i] : b);
    weft_tensor *all[] = {tc, ta, tb, o, tc2, ta2, o2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        weft_tensor_release(all[i]);
}

/* Every step pattern of weft__ew_block directly. */
Test(kernels, ew_block_steps, .timeout = 30)
{
    const double x[5] = {1, 2, 3, 4, 5}, y[5] = {10, 20, 30, 40, 50};
    double out[5];
    for (int pat = 0; pat < 4; pat++) {
        unsigned char step[2] = {(unsigned char)(pat & 1), (unsigned char)(pat >> 1)};
        const void *in[2] = {x, y};
        weft__ew_block(WEFT__OP_SUB, WEFT_F64, WEFT_F64, in, step, out, 5);
        for (int i = 0; i < 5; i++)
            cr_assert_eq(out[i], x[step[0] ? i : 0] - y[step[1] ? i : 0], "pattern %d", pat);
    }
    const uint8_t c[5] = {1, 0, 0, 1, 0};
    for (int pat = 0; pat < 8; pat++) {
        unsigned char step[3] = {(unsigned char)(pat & 1), (unsigned char)((pat >> 1) & 1),
                                 (unsigned char)(pat >> 2)};
        const void *in[3] = {c, x, y};
        weft__ew_block(WEFT__OP_WHERE, WEFT_F64, WEFT_F64, in, step, out, 5);
        for (int i = 0; i < 5; i++)
            cr_assert_eq(out[i], c[step[0] ? i : 0] ? x[step[1] ? i : 0] : y[step[2] ? i : 0],
                         "pattern %d", pat);
    }
}

/* ---- Reductions ------------------------------------------------------ */

static weft_tensor *reduce(weft_runtime *rt, weft__op op, weft_tensor *a, int axis)
{
    weft__node n = node(op, 1);
    weft__reduce_set_axis(&n, axis);
    return eval(rt, &n, &a);
}

/* Reference over [2,3,4] viewed as outer x len x inner. */
static double ref_reduce(weft__op op, const double *x, int64_t len, int64_t inner,
                         int64_t o, int64_t c)
{
    double acc = op == WEFT__OP_REDUCE_MAX ? -INFINITY : 0.0;
    for (int64_t r = 0; r < len; r++) {
        double v = x[(o * len + r) * inner + c];
        acc = op == WEFT__OP_REDUCE_MAX ? (v > acc ? v : acc) : acc + v;
    }
    return op == WEFT__OP_MEAN ? acc / (double)len : acc;
}

Test(kernels, reduce_each_axis, .timeout = 30)
{
    const int64_t d[3] = {2, 3, 4};
    double x[24];
    int32_t xi[24];
    for (int i = 0; i < 24; i++) {
        x[i] = (double)((i * 7) % 11) - 5.0;
        xi[i] = (int32_t)x[i];
    }
    weft_tensor *tf = mk(WEFT_F64, 3, d, x), *ti = mk(WEFT_I32, 3, d, xi);
    weft__op ops[3] = {WEFT__OP_SUM, WEFT__OP_MEAN, WEFT__OP_REDUCE_MAX};
    int axes[5] = {0, 1, 2, -1, WEFT_ALL_AXES};
    for (int k = 0; k < 3; k++)
        for (int ax = 0; ax < 5; ax++) {
            int axis = axes[ax];
            int real = axis == -1 ? 2 : axis;
            int64_t outer = 1, len = 24, inner = 1;
            if (axis != WEFT_ALL_AXES) {
                outer = 1;
                inner = 1;
                for (int q = 0; q < real; q++)
                    outer *= d[q];
                len = d[real];
                for (int q = real + 1; q < 3; q++)
                    inner *= d[q];
            }
            weft_tensor *o = reduce(NULL, ops[k], tf, axis);
            cr_assert_eq(weft_tensor_rank(o), axis == WEFT_ALL_AXES ? 0 : 2);
            cr_assert_eq(weft_tensor_numel(o), outer * inner);
            weft_tensor *oi = ops[k] == WEFT__OP_MEAN ? NULL : reduce(NULL, ops[k], ti, axis);
            for (int64_t q = 0; q < outer; q++)
                for (int64_t c = 0; c < inner; c++) {
                    double want = ref_reduce(ops[k], x, len, inner, q, c);
                    cr_assert_eq(((const double *)weft_tensor_data(o))[q * inner + c], want,
                                 "%s axis %d", weft__op_name(ops[k]), axis);
                    if (oi) {
                        cr_assert_eq(weft_tensor_dtype(oi), WEFT_I32);
                        cr_assert_eq(((const int32_t *)weft_tensor_data(oi))[q * inner + c],
                                     (int32_t)want);
                    }
                }
            weft_tensor_release(o);
            weft_tensor_release(oi);
        }
    weft_tensor_release(tf);
    weft_tensor_release(ti);
}

Test(kernels, reduce_dtypes_and_edges, .timeout = 30)
{
    const uint8_t bits[5] = {1, 0, 1, 1, 0};
    weft_tensor *tb = mk(WEFT_BOOL, 1, (int64_t[]){5}, bits);
    weft_tensor *s = reduce(NULL, WEFT__OP_SUM, tb, 0);
    cr_assert_eq(weft_tensor_dtype(s), WEFT_I64);
    cr_assert_eq(*(const int64_t *)weft_tensor_data(s), 3);
    weft_tensor *m = reduce(NULL, WEFT__OP_REDUCE_MAX, tb, WEFT_ALL_AXES);
    cr_assert_eq(weft_tensor_dtype(m), WEFT_BOOL);
    cr_assert_eq(*(const uint8_t *)weft_tensor_data(m), 1);
    /* i32 sums wrap. */
    const int32_t big[2] = {INT32_MAX, 2};
    weft_tensor *ti = mk(WEFT_I32, 1, (int64_t[]){2}, big);
    weft_tensor *si = reduce(NULL, WEFT__OP_SUM, ti, 0);
    cr_assert_eq(*(const int32_t *)weft_tensor_data(si), INT32_MIN + 1);
    /* NaN propagates through max; the max of nothing is -inf; mean of ints is rejected. */
    const float f[3] = {1.0f, NAN, 2.0f};
    weft_tensor *tf = mk(WEFT_F32, 1, (int64_t[]){3}, f);
    weft_tensor *mf = reduce(NULL, WEFT__OP_REDUCE_MAX, tf, 0);
    cr_assert(isnan(*(const float *)weft_tensor_data(mf)));
    weft_tensor *te = mk(WEFT_F32, 2, (int64_t[]){0, 3}, NULL);
    weft_tensor *me = reduce(NULL, WEFT__OP_REDUCE_MAX, te, 0);
    check_dims(me, 1, (int64_t[]){3});
    cr_assert_eq(((const float *)weft_tensor_data(me))[2], -INFINITY);
    weft_tensor *se = reduce(NULL, WEFT__OP_SUM, te, 1);
    check_dims(se, 1, (int64_t[]){0});
    weft__node n = node(WEFT__OP_MEAN, 1);
    weft__reduce_set_axis(&n, 0);
    weft_tensor *out = NULL;
    cr_assert_eq(weft__kernel_eval(NULL, &n, &ti, &out), WEFT_EDTYPE);
    n.op = WEFT__OP_SUM;
    weft__reduce_set_axis(&n, 1);
    cr_assert_eq(weft__kernel_eval(NULL, &n, &ti, &out), WEFT_EINVAL);
    cr_assert_str_eq(weft_errmsg(), "weft_sum: axis 1 is out of range for i32[2]");
    weft_tensor *all[] = {tb, s, m, ti, si, tf, mf, te, me, se};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        weft_tensor_release(all[i]);
}

/* ---- Shapes, matmul, leaves ------------------------------------------ */

Test(kernels, reshape, .timeout = 30)
{
    int32_t x[12];
    for (int i = 0; i < 12; i++)
        x[i] = i;
    weft_tensor *t = mk(WEFT_I32, 2, (int64_t[]){3, 4}, x);
    weft__node n = node(WEFT__OP_RESHAPE, 1);
    n.attr.reshape.rank = 3;
    n.attr.reshape.dims[0] = 2;
    n.attr.reshape.dims[1] = -1;
    n.attr.reshape.dims[2] = 3;
    weft_tensor *o = eval(NULL, &n, &t);
    check_dims(o, 3, (int64_t[]){2, 2, 3});
    cr_assert_arr_eq(weft_tensor_data(o), x, sizeof x);
    cr_assert_neq(weft_tensor_data(o), weft_tensor_data(t));
    n.attr.reshape.dims[2] = 5;
    weft_tensor *bad = NULL;
    cr_assert_eq(weft__kernel_eval(NULL, &n, &t, &bad), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(),
                     "weft_reshape: cannot reshape i32[3,4] into [2,-1,5]: the element counts differ");
    n.attr.reshape.dims[1] = -1;
    n.attr.reshape.dims[2] = -1;
    cr_assert_eq(weft__kernel_eval(NULL, &n, &t, &bad), WEFT_EINVAL);
    cr_assert_null(bad);
    weft_tensor_release(o);
    weft_tensor_release(t);
}

static void matmul_check(weft_runtime *rt, int64_t m, int64_t k, int64_t nn)
{
    double *a = malloc(sizeof(double) * (size_t)(m * k)), *b = malloc(sizeof(double) * (size_t)(k * nn));
    int64_t *ai = malloc(sizeof(int64_t) * (size_t)(m * k)), *bi = malloc(sizeof(int64_t) * (size_t)(k * nn));
    for (int64_t i = 0; i < m * k; i++)
        ai[i] = (i * 13) % 7 - 3, a[i] = (double)ai[i];
    for (int64_t i = 0; i < k * nn; i++)
        bi[i] = (i * 5) % 9 - 4, b[i] = (double)bi[i];
    weft_tensor *ta = mk(WEFT_F64, 2, (int64_t[]){m, k}, a), *tb = mk(WEFT_F64, 2, (int64_t[]){k, nn}, b);
    weft_tensor *tai = mk(WEFT_I64, 2, (int64_t[]){m, k}, ai), *tbi = mk(WEFT_I64, 2, (int64_t[]){k, nn}, bi);
    weft_tensor *c = eval2(rt, WEFT__OP_MATMUL, ta, tb), *ci = eval2(rt, WEFT__OP_MATMUL, tai, tbi);
    check_dims(c, 2, (int64_t[]){m, nn});
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nn; j++) {
            int64_t want = 0;
            for (int64_t p = 0; p < k; p++)
                want += ai[i * k + p] * bi[p * nn + j];
            cr_assert_eq(((const double *)weft_tensor_data(c))[i * nn + j], (double)want);
            cr_assert_eq(((const int64_t *)weft_tensor_data(ci))[i * nn + j], want);
        }
    weft_tensor *all[] = {ta, tb, tai, tbi, c, ci};
    for (size_t i = 0; i < 6; i++)
        weft_tensor_release(all[i]);
    free(a), free(b), free(ai), free(bi);
}

Test(kernels, matmul, .timeout = 30)
{
    matmul_check(NULL, 3, 4, 5);
    matmul_check(NULL, 1, 0, 2);
    weft_runtime *rt = test_runtime(2);
    matmul_check(rt, 67, 40, 53);   /* past the split threshold */
    weft_runtime_destroy(&rt);
    weft_tensor *a = mk(WEFT_F32, 2, (int64_t[]){2, 3}, NULL), *b = mk(WEFT_F32, 2, (int64_t[]){4, 5}, NULL);
    weft__node n = node(WEFT__OP_MATMUL, 2);
    weft_tensor *in[2] = {a, b}, *out = NULL;
    cr_assert_eq(weft__kernel_eval(NULL, &n, in, &out), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_matmul: f32[2,3] and f32[4,5] have different inner dims");
    weft_tensor_release(a);
    weft_tensor_release(b);
}

Test(kernels, fill_range_const, .timeout = 30)
{
    weft__node n = node(WEFT__OP_FILL, 0);
    n.attr.fill.value = -2.5;
    n.spec.dtype = WEFT_I32;
    n.spec.rank = 2;
    n.spec.dims[0] = 2;
    n.spec.dims[1] = 3;
    weft_tensor *f = eval(NULL, &n, NULL);
    check_dims(f, 2, (int64_t[]){2, 3});
    for (int i = 0; i < 6; i++)
        cr_assert_eq(((const int32_t *)weft_tensor_data(f))[i], -2);
    struct { int64_t start, limit, delta; weft_dtype dt; int64_t len; } cases[] = {
        {0, 5, 1, WEFT_I64, 5}, {0, 5, 2, WEFT_I32, 3}, {5, 0, -2, WEFT_F64, 3},
        {3, 3, 1, WEFT_F32, 0}, {0, 5, -1, WEFT_I64, 0}, {-3, 4, 3, WEFT_F32, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft__node r = node(WEFT__OP_RANGE, 0);
        r.attr.range.start = cases[c].start;
        r.attr.range.limit = cases[c].limit;
        r.attr.range.delta = cases[c].delta;
        r.spec.dtype = cases[c].dt;
        weft_tensor *t = eval(NULL, &r, NULL);
        check_dims(t, 1, &cases[c].len);
        cr_assert_eq(weft_tensor_dtype(t), cases[c].dt);
        for (int64_t i = 0; i < cases[c].len; i++) {
            double want = (double)(cases[c].start + i * cases[c].delta), got = 0;
            switch (cases[c].dt) {
            case WEFT_I32: got = ((const int32_t *)weft_tensor_data(t))[i]; break;
            case WEFT_I64: got = (double)((const int64_t *)weft_tensor_data(t))[i]; break;
            case WEFT_F32: got = ((const float *)weft_tensor_data(t))[i]; break;
            default: got = ((const double *)weft_tensor_data(t))[i]; break;
            }
            cr_assert_eq(got, want, "case %zu [%lld]", c, (long long)i);
        }
        weft_tensor_release(t);
    }
    weft__node r = node(WEFT__OP_RANGE, 0);
    r.spec.dtype = WEFT_I64;
    weft_tensor *bad = NULL;
    cr_assert_eq(weft__kernel_eval(NULL, &r, NULL, &bad), WEFT_EINVAL);  /* delta 0 */
    weft__node k = node(WEFT__OP_CONST, 0);
    k.attr.constant.value = f;
    weft_tensor *kc = eval(NULL, &k, NULL);
    cr_assert_eq(kc, f);   /* the constant itself, retained */
    weft_tensor_release(kc);
    weft_tensor_release(f);
}

/* ---- Inference and messages ------------------------------------------ */

static weft_spec spec(const char *s)
{
    weft_spec r;
    cr_assert_eq(weft_spec_parse(s, &r), 0, "%s", s);
    return r;
}

static void infer_ok(weft__op op, const char *a, const char *b, const char *want)
{
    weft__node n = node(op, b ? 2 : 1);
    weft_spec in[2] = {spec(a), b ? spec(b) : spec(a)}, out;
    cr_assert_eq(weft__infer_spec(&n, in, &out), 0, "%s", weft_errmsg());
    char buf[WEFT__SPEC_STR_MAX];
    cr_assert_str_eq(weft__spec_str(&out, buf, sizeof buf), want);
}

Test(kernels, infer_broadcast_unknown_dims, .timeout = 30)
{
    infer_ok(WEFT__OP_ADD, "f32[?,1]", "f32[4]", "f32[?,4]");
    infer_ok(WEFT__OP_ADD, "f32[?]", "f32[1]", "f32[?]");
    infer_ok(WEFT__OP_ADD, "f32[?]", "f32[5]", "f32[5]");
    infer_ok(WEFT__OP_MUL, "f32[?]", "f32[?]", "f32[?]");
    infer_ok(WEFT__OP_LT, "i32[3,1]", "i32[]", "bool[3,1]");
    infer_ok(WEFT__OP_ADD, "f64[*]", "f64[3]", "f64[*]");
    infer_ok(WEFT__OP_ADD, "f32[0]", "f32[1]", "f32[0]");
    infer_ok(WEFT__OP_MATMUL, "f32[?,3]", "f32[?,7]", "f32[?,7]");
    weft__node n = node(WEFT__OP_RESHAPE, 1);
    n.attr.reshape.rank = 2;
    n.attr.reshape.dims[0] = -1;
    n.attr.reshape.dims[1] = 2;
    weft_spec in = spec("f32[?,4]"), out;
    char buf[WEFT__SPEC_STR_MAX];
    cr_assert_eq(weft__infer_spec(&n, &in, &out), 0);
    cr_assert_str_eq(weft__spec_str(&out, buf, sizeof buf), "f32[?,2]");
    in = spec("f32[3,4]");
    cr_assert_eq(weft__infer_spec(&n, &in, &out), 0);
    cr_assert_str_eq(weft__spec_str(&out, buf, sizeof buf), "f32[6,2]");
    weft__node r = node(WEFT__OP_SUM, 1);
    weft__reduce_set_axis(&r, -2);
    in = spec("bool[?,5,2]");
    cr_assert_eq(weft__infer_spec(&r, &in, &out), 0);
    cr_assert_str_eq(weft__spec_str(&out, buf, sizeof buf), "i64[?,2]");
}

Test(kernels, infer_error_messages, .timeout = 30)
{
    weft__node n = node(WEFT__OP_MUL, 2);
    weft_spec in[3] = {spec("f32[3]"), spec("f32[4]")}, out;
    cr_assert_eq(weft__infer_spec(&n, in, &out), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_mul: f32[3] and f32[4] do not broadcast");
    in[0] = spec("f32[2,?,3]");
    in[1] = spec("f32[5,2]");
    cr_assert_eq(weft__infer_spec(&n, in, &out), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_mul: f32[2,?,3] and f32[5,2] do not broadcast");
    in[1] = spec("i32[2,1,3]");
    cr_assert_eq(weft__infer_spec(&n, in, &out), WEFT_EDTYPE);
    cr_assert_str_eq(weft_errmsg(), "weft_mul: f32[2,?,3] and i32[2,1,3] have different dtypes");
    weft__node w = node(WEFT__OP_WHERE, 3);
    in[0] = spec("bool[3,1]");
    in[1] = spec("f32[4]");
    in[2] = spec("f32[2,1,5]");
    cr_assert_eq(weft__infer_spec(&w, in, &out), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_where: f32[4] and f32[2,1,5] do not broadcast");
    in[0] = spec("i32[3,1]");
    in[2] = spec("f32[]");
    cr_assert_eq(weft__infer_spec(&w, in, &out), WEFT_EDTYPE);
    /* Concrete tensors whose unknown-at-trace dims conflict fail at eval. */
    weft_tensor *a = mk(WEFT_F32, 1, (int64_t[]){3}, NULL), *b = mk(WEFT_F32, 1, (int64_t[]){4}, NULL);
    weft_tensor *tin[2] = {a, b}, *o = NULL;
    cr_assert_eq(weft__kernel_eval(NULL, &n, tin, &o), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "weft_mul: f32[3] and f32[4] do not broadcast");
    cr_assert_null(o);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* ---- Parallel split --------------------------------------------------- */

/* [257,1,301] op [301] and reductions over 77 k elements: the runtime's
 * chunks give the same elements as the serial kernel. */
Test(kernels, big_matches_small, .timeout = 30)
{
    weft_runtime *rt = test_runtime(4);
    const int64_t da[3] = {257, 1, 301}, db[1] = {301};
    int64_t na = 257 * 301;
    double *a = malloc(sizeof(double) * (size_t)na), b[301];
    int32_t *ai = malloc(sizeof(int32_t) * (size_t)na);
    for (int64_t i = 0; i < na; i++) {
        a[i] = (double)((i * 2654435761u) % 1000) / 7.0 - 60.0;
        ai[i] = (int32_t)((i * 2654435761u) % 2001) - 1000;
    }
    for (int i = 0; i < 301; i++)
        b[i] = (double)(i % 17) - 8.0;
    weft_tensor *ta = mk(WEFT_F64, 3, da, a), *tb = mk(WEFT_F64, 1, db, b);
    weft_tensor *tai = mk(WEFT_I32, 3, da, ai);
    weft__op ops[4] = {WEFT__OP_ADD, WEFT__OP_MUL, WEFT__OP_MAXIMUM, WEFT__OP_GT};
    for (int k = 0; k < 4; k++) {
        weft_tensor *s = eval2(NULL, ops[k], ta, tb), *p = eval2(rt, ops[k], ta, tb);
        cr_assert_eq(weft_tensor_numel(p), na);
        cr_assert_arr_eq(weft_tensor_data(p), weft_tensor_data(s), weft_tensor_numel(s) *
                         (k == 3 ? 1 : 8), "%s", weft__op_name(ops[k]));
        for (int64_t i = 0; i < na; i += 997) {
            double want = ref_flt(ops[k], a[i], b[i % 301]);
            double got = k == 3 ? ((const uint8_t *)weft_tensor_data(p))[i]
                                : ((const double *)weft_tensor_data(p))[i];
            cr_assert_eq(got, want);
        }
        weft_tensor_release(s);
        weft_tensor_release(p);
    }
    int axes[4] = {0, 2, -1, WEFT_ALL_AXES};
    weft__op rops[3] = {WEFT__OP_SUM, WEFT__OP_MEAN, WEFT__OP_REDUCE_MAX};
    for (int k = 0; k < 3; k++)
        for (int x = 0; x < 4; x++) {
            weft_tensor *s = reduce(NULL, rops[k], ta, axes[x]), *p = reduce(rt, rops[k], ta, axes[x]);
            weft_tensor *p2 = reduce(rt, rops[k], ta, axes[x]);
            cr_assert_eq(weft_tensor_numel(p), weft_tensor_numel(s));
            /* Deterministic for a thread count: two runs agree bit for bit. */
            cr_assert_arr_eq(weft_tensor_data(p), weft_tensor_data(p2), weft_tensor_numel(p) * 8);
            for (int64_t i = 0; i < weft_tensor_numel(s); i++) {
                double ws = ((const double *)weft_tensor_data(s))[i];
                double wp = ((const double *)weft_tensor_data(p))[i];
                cr_assert(fabs(ws - wp) <= 1e-9 * (1.0 + fabs(ws)), "%s axis %d [%lld]: %g vs %g",
                          weft__op_name(rops[k]), axes[x], (long long)i, ws, wp);
            }
            weft_tensor_release(s);
            weft_tensor_release(p);
            weft_tensor_release(p2);
            if (rops[k] == WEFT__OP_MEAN)
                continue;
            s = reduce(NULL, rops[k], tai, axes[x]);
            p = reduce(rt, rops[k], tai, axes[x]);
            cr_assert_arr_eq(weft_tensor_data(p), weft_tensor_data(s), weft_tensor_numel(s) * 4);
            weft_tensor_release(s);
            weft_tensor_release(p);
        }
    /* The all-axes integer sum against a plain loop. */
    weft_tensor *si = reduce(rt, WEFT__OP_SUM, tai, WEFT_ALL_AXES);
    int64_t want = 0;
    for (int64_t i = 0; i < na; i++)
        want += ai[i];
    cr_assert_eq(*(const int32_t *)weft_tensor_data(si), (int32_t)want);
    weft_tensor_release(si);
    weft_tensor_release(ta);
    weft_tensor_release(tb);
    weft_tensor_release(tai);
    free(a);
    free(ai);
    weft_runtime_destroy(&rt);
}

/* Failing each allocation in turn: the kernel reports an error, leaves
 * *out NULL and leaks nothing (ASan checks the last part); the first run
 * that meets no failure gives the right result. */
Test(kernels, allocation_failures, .timeout = 30)
{
    weft_runtime *rt = test_runtime(2);
    const int64_t n = 70000;
    double *x = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)(i % 10);
    weft_tensor *t = mk(WEFT_F64, 1, &n, x);
    weft__op ops[2] = {WEFT__OP_SUM, WEFT__OP_NEG};
    for (int k = 0; k < 2; k++) {
        bool done = false;
        for (long fail = 1; fail < 50 && !done; fail++) {
            if (!weft__fault_fail_after(fail)) {
                cr_skip_test("built without fault injection");
                break;
            }
            weft__node nd = node(ops[k], 1);
            weft__reduce_set_axis(&nd, WEFT_ALL_AXES);
            weft_tensor *out = NULL;
            int rc = weft__kernel_eval(rt, &nd, &t, &out);
            bool hit = weft__fault_hit();
            weft__fault_fail_after(0);
            if (rc < 0) {
                cr_assert(hit, "%s failed without an injected fault: %s", weft__op_name(ops[k]),
                          weft_errmsg());
                cr_assert_null(out);
                continue;
            }
            cr_assert_not_null(out);
            if (k == 0)
                cr_assert_eq(*(const double *)weft_tensor_data(out), 4.5 * (double)n);
            else
                cr_assert_eq(((const double *)weft_tensor_data(out))[n - 1], -x[n - 1]);
            weft_tensor_release(out);
            done = !hit;
        }
        weft__fault_fail_after(0);
        cr_assert(done, "%s never ran without a fault", weft__op_name(ops[k]));
    }
    weft_tensor_release(t);
    free(x);
    weft_runtime_destroy(&rt);
}

/* weft__kernel_eval_into: the executor's entry, writing into a buffer it
 * provides: in place on an elementwise input, reshape in place, and small
 * elementwise work with scalar and full-size operands (one block call). */
Test(kernels, eval_into_in_place, .timeout = 30)
{
    int64_t d6 = 6, d23[2] = { 2, 3 }, d11[2] = { 1, 1 };
    float xs[6] = { 1, -2, 3, -4, 5, -6 }, one = 10;
    weft_tensor *x = mk(WEFT_F32, 1, &d6, xs), *s = mk(WEFT_F32, 2, d11, &one);
    /* x = x * s in place: the result has rank 2 ([1,6]) though x had 1. */
    weft__node mul = node(WEFT__OP_MUL, 2);
    weft_tensor *in[2] = { x, s };
    weft_spec is[2], os;
    weft__tensor_spec(x, &is[0]);
    weft__tensor_spec(s, &is[1]);
    cr_assert_eq(weft__infer_spec(&mul, is, &os), 0);
    cr_assert_eq(os.rank, 2);
    weft_tensor *y = mk(WEFT_F32, 1, &d6, xs);
    in[0] = y;
    cr_assert_eq(weft__kernel_eval_into(NULL, &mul, in, y), 0, "%s", weft_errmsg());
    const float *yv = weft_tensor_data(y);
    for (int i = 0; i < 6; i++)
        cr_assert_float_eq(yv[i], xs[i] * 10, 1e-6);
    /* Reshape into its own buffer moves nothing; into another copies. */
    weft__node rs = node(WEFT__OP_RESHAPE, 1);
    rs.attr.reshape.rank = 2;
    memcpy(rs.attr.reshape.dims, d23, sizeof d23);
    in[0] = y;
    cr_assert_eq(weft__kernel_eval_into(NULL, &rs, in, y), 0, "%s", weft_errmsg());
    for (int i = 0; i < 6; i++)
        cr_assert_float_eq(yv[i], xs[i] * 10, 1e-6);
    weft_tensor *z = mk(WEFT_F32, 2, d23, NULL);
    cr_assert_eq(weft__kernel_eval_into(NULL, &rs, in, z), 0, "%s", weft_errmsg());
    cr_assert_eq(memcmp(weft_tensor_data(z), yv, sizeof xs), 0);
    /* A broadcast that is not scalar takes the general path. */
    float cs[3] = { 1, 2, 3 };
    int64_t d13[2] = { 1, 3 };
    weft_tensor *c = mk(WEFT_F32, 2, d13, cs);
    weft__node add = node(WEFT__OP_ADD, 2);
    in[0] = z;
    in[1] = c;
    weft_tensor *w = eval(NULL, &add, in);
    const float *wv = weft_tensor_data(w);
    for (int i = 0; i < 6; i++)
        cr_assert_float_eq(wv[i], xs[i] * 10 + cs[i % 3], 1e-6);
    weft_tensor_release(w);
    weft_tensor_release(c);
    weft_tensor_release(z);
    weft_tensor_release(y);
    weft_tensor_release(s);
    weft_tensor_release(x);
}
