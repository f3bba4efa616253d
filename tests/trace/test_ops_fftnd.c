/* tf.signal.fftnd, ifftnd, rfftnd and irfftnd: against the definition
 * (a direct DFT along each chosen axis in turn, after cutting or padding
 * it, written here in long double), eagerly and traced on 1, 2 and 4
 * workers with the same bits; axes in any order and sign, the defaults,
 * round trips, gradients, and the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_fftnd, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define MAX_EL 4096

/* A complex array of rank r (numbers' dims d[]), re and im apart. */
typedef struct carr {
    int r;
    int64_t d[4];
    long double re[MAX_EL], im[MAX_EL];
} carr;

static int64_t numel(const carr *a)
{
    int64_t n = 1;
    for (int k = 0; k < a->r; k++)
        n *= a->d[k];
    return n;
}

/* Axis ax of a cut or zero-padded to len, then transformed (sign -1:
 * forward; +1: inverse, scaled by 1 / len); in place. */
static void dft_axis(carr *a, int ax, int64_t len, int sign)
{
    static carr t;
    t = *a;
    int64_t outer = 1, inner = 1, have = a->d[ax];
    for (int k = 0; k < ax; k++)
        outer *= a->d[k];
    for (int k = ax + 1; k < a->r; k++)
        inner *= a->d[k];
    cr_assert(outer * len * inner <= MAX_EL);
    const long double PI = 3.141592653589793238462643383279502884L;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            for (int64_t k = 0; k < len; k++) {
                long double sr = 0, si = 0;
                for (int64_t j = 0; j < len && j < have; j++) {
                    long double w = sign * 2 * PI * (long double)((j * k) % len) / len;
                    long double xr = t.re[(o * have + j) * inner + i];
                    long double xi = t.im[(o * have + j) * inner + i];
                    sr += xr * cosl(w) - xi * sinl(w);
                    si += xr * sinl(w) + xi * cosl(w);
                }
                if (sign > 0) {
                    sr /= len;
                    si /= len;
                }
                a->re[(o * len + k) * inner + i] = sr;
                a->im[(o * len + k) * inner + i] = si;
            }
    a->d[ax] = len;
}

static uint64_t seed_state = 0x2545f4914f6cdd1du;

static void fill_random(carr *a, bool real)
{
    for (int64_t i = 0; i < numel(a); i++) {
        a->re[i] = op_uniform(&seed_state);
        a->im[i] = real ? 0 : op_uniform(&seed_state);
    }
}

/* a as a weft tensor: complex [..., 2] or, for real, its real parts. */
static weft_tensor *tensor_of(const carr *a, bool real)
{
    static double v[2 * MAX_EL];
    int64_t n = numel(a), dims[5];
    memcpy(dims, a->d, sizeof a->d);
    for (int64_t i = 0; i < n; i++) {
        if (real) {
            v[i] = (double)a->re[i];
        } else {
            v[2 * i] = (double)a->re[i];
            v[2 * i + 1] = (double)a->im[i];
        }
    }
    dims[a->r] = 2;
    return test_tensor(WEFT_F64, a->r + !real, dims, v);
}

typedef struct nd_case {
    int which;   /* 0 fftnd, 1 ifftnd, 2 rfftnd, 3 irfftnd */
    int n;
    const int *axes;
    const int64_t *len;
} nd_case;

static int nd_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const nd_case *c = user;
    weft_value *(*const fns[])(weft_ctx *, weft_value *, const int64_t *, const int *, int) = {
        weft_fftnd, weft_ifftnd, weft_rfftnd, weft_irfftnd
    };
    outs[0] = fns[c->which](cx, a[0], c->len, c->axes, c->n);
    return weft_ctx_status(cx);
}

/* y (complex, or real for irfftnd) against the reference a. */
static void expect_close(const weft_tensor *y, const carr *a, bool real, const char *what)
{
    int64_t n = numel(a);
    cr_assert_eq(weft_tensor_rank(y), a->r + !real, "%s: rank", what);
    for (int k = 0; k < a->r; k++)
        cr_assert_eq(weft_tensor_dims(y)[k], a->d[k], "%s: dim %d", what, k);
    for (int64_t i = 0; i < n; i++) {
        double re = test_element(y, real ? i : 2 * i), im = real ? 0 : test_element(y, 2 * i + 1);
        cr_assert(fabsl(re - a->re[i]) < 1e-12L && fabsl(im - a->im[i]) < 1e-12L,
                  "%s: element %lld is %g%+gi, want %Lg%+Lgi", what, (long long)i, re, im,
                  a->re[i], a->im[i]);
    }
}

/* The normalized axes a case transforms, as the op reads them. */
static int axes_of(const nd_case *c, int nrank, int *ax)
{
    int n = c->n == 0 && !c->axes && !c->len ? nrank : c->n;
    for (int k = 0; k < n; k++) {
        int v = c->axes ? c->axes[k] : nrank - n + k;
        ax[k] = v < 0 ? v + nrank : v;
    }
    return n;
}

static void check_complex(const nd_case *c, int r, const int64_t *d)
{
    static carr a;
    a.r = r;
    memcpy(a.d, d, (size_t)r * sizeof *d);
    fill_random(&a, false);
    weft_tensor *x = tensor_of(&a, false), *y;
    op_results_everywhere(nd_body, (void *)c, &x, 1, &y, 1, "complex N-D");
    int ax[4], n = axes_of(c, r, ax);
    for (int k = 0; k < n; k++)
        dft_axis(&a, ax[k], c->len ? c->len[k] : a.d[ax[k]], c->which ? 1 : -1);
    expect_close(y, &a, false, c->which ? "ifftnd" : "fftnd");
    weft_tensor_release(y);
    weft_tensor_release(x);
}

Test(ops_fftnd, complex_transforms_match_the_definition)
{
    const int64_t d3[3] = { 3, 4, 5 };
    const int a02[2] = { 0, 2 }, a_neg[2] = { -1, -3 }, a1[1] = { 1 };
    const int64_t l43[2] = { 4, 3 }, l6[1] = { 6 }, l27[2] = { 2, 7 };
    const nd_case cases[] = {
        { 0, 0, NULL, NULL },    /* every axis */
        { 1, 0, NULL, NULL },
        { 0, 2, a02, l43 },      /* axis 0 padded, axis 2 cut */
        { 1, 2, a_neg, NULL },   /* negative axes, last first */
        { 0, 1, a1, l6 },
        { 0, 2, NULL, l27 },     /* the last two axes */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_complex(&cases[k], 3, d3);
}

static void check_real(const nd_case *c, int r, const int64_t *d)
{
    static carr a;
    a.r = r;
    memcpy(a.d, d, (size_t)r * sizeof *d);
    fill_random(&a, true);
    weft_tensor *x = tensor_of(&a, true), *y;
    op_results_everywhere(nd_body, (void *)c, &x, 1, &y, 1, "rfftnd");
    int ax[4], n = axes_of(c, r, ax);
    for (int k = n - 1; k >= 0; k--)
        dft_axis(&a, ax[k], c->len ? c->len[k] : a.d[ax[k]], -1);
    /* Keep the first len / 2 + 1 bins of the last axis listed. */
    static carr b;
    b = a;
    int last = ax[n - 1];
    b.d[last] = a.d[last] / 2 + 1;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < last; k++)
        outer *= a.d[k];
    for (int k = last + 1; k < r; k++)
        inner *= a.d[k];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < b.d[last]; j++)
            for (int64_t i = 0; i < inner; i++) {
                b.re[(o * b.d[last] + j) * inner + i] = a.re[(o * a.d[last] + j) * inner + i];
                b.im[(o * b.d[last] + j) * inner + i] = a.im[(o * a.d[last] + j) * inner + i];
            }
    expect_close(y, &b, false, "rfftnd");
    weft_tensor_release(y);
    weft_tensor_release(x);
}

Test(ops_fftnd, rfftnd_matches_the_definition)
{
    const int64_t d3[3] = { 4, 3, 6 };
    const int a10[2] = { 1, 0 }, a02[2] = { 0, 2 };
    const int64_t l57[2] = { 5, 7 }, l28[2] = { 2, 8 };
    const nd_case cases[] = {
        { 2, 0, NULL, NULL },   /* every axis, bins along the last */
        { 2, 2, a10, NULL },    /* bins along axis 0 */
        { 2, 2, a02, l57 },     /* padded, odd lengths */
        { 2, 2, a10, l28 },     /* cut */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_real(&cases[k], 3, d3);
}

typedef struct round_trip {
    nd_case fwd, inv;
} round_trip;

static int round_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const round_trip *t = user;
    weft_value *f;
    if (nd_body(cx, a, &f, (void *)&t->fwd) != 0)
        return weft_ctx_status(cx);
    return nd_body(cx, &f, outs, (void *)&t->inv);
}

/* irfftnd undoes rfftnd given the lengths (odd ones too, which the bins
 * alone cannot tell), and ifftnd undoes fftnd. */
Test(ops_fftnd, inverses_undo_the_transforms)
{
    static carr a;
    const int64_t d[3] = { 3, 5, 4 };
    const int a20[2] = { 2, 0 }, a01[2] = { 0, 1 };
    const int64_t l4_3[2] = { 4, 3 }, l35[2] = { 3, 5 };
    const round_trip trips[] = {
        { { 2, 2, a20, l4_3 }, { 3, 2, a20, l4_3 } },
        { { 2, 2, a01, l35 }, { 3, 2, a01, l35 } },
        { { 2, 0, NULL, NULL }, { 3, 3, NULL, (const int64_t[]){ 3, 5, 4 } } },
    };
    for (size_t k = 0; k < 3; k++) {
        a.r = 3;
        memcpy(a.d, d, sizeof d);
        fill_random(&a, true);
        weft_tensor *x = tensor_of(&a, true), *y;
        op_results_everywhere(round_body, (void *)&trips[k], &x, 1, &y, 1, "round trip");
        expect_close(y, &a, true, "irfftnd of rfftnd");
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    round_trip c = { { 0, 0, NULL, NULL }, { 1, 0, NULL, NULL } };
    fill_random(&a, false);
    weft_tensor *x = tensor_of(&a, false), *y;
    op_results_everywhere(round_body, &c, &x, 1, &y, 1, "complex round trip");
    expect_close(y, &a, false, "ifftnd of fftnd");
    weft_tensor_release(y);
    weft_tensor_release(x);
}

/* fftnd over the last two axes is fft2d up to rounding; rfftnd's default
 * irfftnd length is 2 (bins - 1). */
static int pair_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_fftnd(cx, a[0], NULL, NULL, 2);
    outs[1] = weft_fft2d(cx, a[0]);
    outs[2] = weft_irfftnd(cx, weft_rfftnd(cx, a[1], NULL, NULL, 0), NULL, NULL, 0);
    return weft_ctx_status(cx);
}

Test(ops_fftnd, agrees_with_fft2d_and_even_defaults)
{
    static carr a, b;
    a.r = 3;
    memcpy(a.d, (const int64_t[]){ 2, 3, 4 }, 3 * sizeof(int64_t));
    fill_random(&a, false);
    b.r = 2;
    memcpy(b.d, (const int64_t[]){ 3, 6 }, 2 * sizeof(int64_t));
    fill_random(&b, true);
    weft_tensor *x[2] = { tensor_of(&a, false), tensor_of(&b, true) }, *y[3];
    op_results_everywhere(pair_body, NULL, x, 2, y, 3, "fftnd and fft2d");
    for (int64_t i = 0; i < weft_tensor_numel(y[0]); i++)
        cr_assert(fabs(test_element(y[0], i) - test_element(y[1], i)) < 1e-13);
    expect_close(y[2], &b, true, "irfftnd's default length");
    for (int k = 0; k < 3; k++)
        weft_tensor_release(y[k]);
    weft_tensor_release(x[0]);
    weft_tensor_release(x[1]);
}

/* The squared magnitude of rfftnd over two axes: its gradient through the
 * 1-D nodes and their transposes. */
static int power_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    static const int axes[2] = { 1, 0 };
    static const int64_t len[2] = { 4, 5 };
    weft_value *f = weft_rfftnd(cx, a[0], len, axes, 2);
    weft_value *g = weft_fftnd(cx, a[1], NULL, (const int[]){ 0 }, 1);
    outs[0] = weft_add(cx, weft_sum(cx, weft_square(cx, f), WEFT_ALL_AXES),
                       weft_sum(cx, weft_mul(cx, g, g), WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

Test(ops_fftnd, gradients_match_differences)
{
    double v[24], w[24];
    for (int i = 0; i < 24; i++) {
        v[i] = op_uniform(&seed_state);
        w[i] = op_uniform(&seed_state);
    }
    const grad_arg args[2] = { { 2, { 4, 6 }, v }, { 3, { 3, 4, 2 }, w } };
    grad_case c = { power_body, NULL, 2, 2 };
    expect_gradients(&c, args, "rfftnd and fftnd");
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    static const int twice[2] = { 1, -1 }, far[1] = { 2 };
    static const int64_t zero[1] = { 0 }, five[1] = { 5 };
    weft_value *x = a[0];
    switch (which) {
    case 0: outs[0] = weft_fftnd(cx, x, NULL, twice, 2); break;
    case 1: outs[0] = weft_fftnd(cx, x, NULL, far, 1); break;
    case 2: outs[0] = weft_fftnd(cx, x, NULL, NULL, 3); break;
    case 3: outs[0] = weft_ifftnd(cx, x, zero, NULL, 1); break;
    case 4: outs[0] = weft_fftnd(cx, x, zero, NULL, 0); break;
    case 5: {
        weft_value *m = weft_boolean_mask(cx, x, weft_gt(cx, weft_sum(cx, x, -1),
                                                         weft_const_f64(cx, -9)), 0);
        outs[0] = weft_fftnd(cx, m, five, (const int[]){ 0 }, 1);
        break;
    }
    case 6: {
        weft_value *m = weft_boolean_mask(cx, x, weft_gt(cx, weft_sum(cx, x, -1),
                                                         weft_const_f64(cx, -9)), 0);
        outs[0] = weft_rfftnd(cx, weft_sum(cx, m, -1), NULL, NULL, 0);
        break;
    }
    default: outs[0] = weft_irfftnd(cx, weft_sum(cx, x, -1), NULL, NULL, 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_fftnd, refusals)
{
    static carr a;
    a.r = 2;
    a.d[0] = 3;
    a.d[1] = 2;
    fill_random(&a, false);
    weft_tensor *x = tensor_of(&a, false);
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_fftnd: axis 1 is given twice" },
        { 1, WEFT_EINVAL, "weft_fftnd: axes[0] 2 is not in [-2, 2)" },
        { 2, WEFT_EINVAL, "weft_fftnd: 3 axes to transform, of 2 axes of numbers" },
        { 3, WEFT_EINVAL, "weft_ifftnd: fft_length[0] 0 is not 1 to" },
        { 4, WEFT_EINVAL, "weft_fftnd: 0 axes to transform" },
    };
    op_expect_errors(rt, refused_body, cases, 5, &x, 1);
    /* Dims unknown while tracing: refused traced only. */
    const op_error_case traced[] = {
        { 5, WEFT_ESHAPE, "weft_fftnd: axis 0 is cut or padded to fft_length, so its dim" },
        { 6, WEFT_ESHAPE, "weft_rfftnd: the last axis given has a dim unknown while tracing" },
    };
    for (int k = 0; k < 2; k++)
        op_expect_traced_error(rt, refused_body, &traced[k], &x, 1);
    /* A real tensor of rank 1 has no pairs' axis for irfftnd. */
    weft_tensor *out = NULL;
    int which = 7;
    weft_tensor *v = tensor_of(&(carr){ .r = 1, .d = { 3 } }, true);
    cr_assert_eq(op_call(rt, refused_body, &which, &v, 1, &out, 1, true), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "no axis of numbers before its pairs' axis"), "%s",
              weft_errmsg());
    weft_tensor_release(v);
    weft_tensor_release(x);
}
