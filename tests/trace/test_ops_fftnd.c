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

typedef struct norm_case {
    weft_fftnd_kind kind;
    weft_fft_norm norm;
} norm_case;

static int norm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const norm_case *c = user;
    static const int64_t lengths[2][2] = { { 2, 5 }, { 2, 4 } };
    const int64_t *len = c->kind == WEFT_RFFTND ? lengths[0]
                         : c->kind == WEFT_IRFFTND ? lengths[1] : NULL;
    outs[0] = weft_fftnd_norm(cx, c->kind, a[0], len, NULL, 2, c->norm);
    return weft_ctx_status(cx);
}

static int rfftn_ortho_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_fftnd_norm(cx, WEFT_RFFTND, a[0], NULL, NULL, 0, WEFT_FFT_NORM_ORTHO);
    return weft_ctx_status(cx);
}

/* NumPy's fftn, ifftn, rfftn (s = (2, 5)) and irfftn (s = (2, 4)) of a
 * [2, 3] complex x and a [2, 4] real r with norm "ortho" and "forward",
 * as it prints them; eager and traced with the same bits, and fftn and
 * ifftn once more with their dims unknown while tracing. */
Test(ops_fftnd, norms_are_numpys)
{
    static const double x[12] = { 1, 2, -0.5, 0, 3, -1, 0.25, 0.5, 2, -2, -1, 0.75 };
    static const double r[8] = { 1, 2, 0.5, -3, 4, -1, 0.25, 2 };
    static const double want[2][4][12] = {
        { { 1.9391793797033492, 0.10206207261596574, -0.82284257877016065, 1.6566767482281404,
            0.41459428830629758, 1.3031233576348666, 0.91855865354369171, 0.71443450831176036,
            1.3258252147247764, 2.8594384382440907, -1.3258252147247767, -1.7367556394684678 },
          { 1.9391793797033492, 0.10206207261596574, 0.41459428830629758, 1.3031233576348666,
            -0.82284257877016065, 1.6566767482281404, 0.91855865354369171, 0.71443450831176036,
            -1.3258252147247767, -1.7367556394684678, 1.3258252147247764, 2.8594384382440907 },
          { 1.8183096545968178, 0, 1.7428169930768282, -0.62603000765643424, 1.3008752548352362,
            0.34043931840151015, -1.5020818885799798, 0, 0.55968573813078859,
            -1.8780900229693025, -2.1803530389670831, 1.0213179552045306 },
          { 2.2097086912079611, 1.1490485194281397, 0.088388347648318488, -1.6793786053180502,
            -0.088388347648318488, -2.5632620818012346, 3.4471455582844186,
            0.26516504294495524 } },
        { { 0.79166666666666652, 0.041666666666666657, -0.3359240761037946, 0.67633545031536979,
            0.16925740943712794, 0.53199788301796347, 0.37499999999999994, 0.29166666666666663,
            0.5412658773652741, 1.1673608540998084, -0.5412658773652741, -0.70902752076647513 },
          { 4.75, 0.25, 1.0155444566227676, 3.1919872981077808, -2.0155444566227674,
            4.0580127018922187, 2.25, 1.75, -3.247595264191645, -4.2541651245988508,
            3.247595264191645, 7.0041651245988508 },
          { 0.57500000000000007, 0, 0.5511271242968685, -0.19796807078069817,
            0.41137287570313152, 0.10765636512240456, -0.47500000000000003, 0,
            0.17698817064058428, -0.59390421234209456, -0.68948817064058432,
            0.32296909536721369 },
          { 6.25, 3.25, 0.25, -4.75, -0.25, -7.25, 9.75, 0.75 } },
    };
    weft_tensor *xs = test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 3, 2 }, x);
    weft_tensor *rs = test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 4 }, r);
    for (int norm = 0; norm < 2; norm++)
        for (int kind = 0; kind < 4; kind++) {
            norm_case c = { (weft_fftnd_kind)kind,
                            norm ? WEFT_FFT_NORM_FORWARD : WEFT_FFT_NORM_ORTHO };
            weft_tensor *in = kind == WEFT_RFFTND ? rs : xs, *y;
            int64_t n = kind == WEFT_IRFFTND ? 8 : 12;
            op_results_everywhere(norm_body, &c, &in, 1, &y, 1, "norm");
            cr_assert_eq(weft_tensor_numel(y), n);
            for (int64_t i = 0; i < n; i++)
                cr_assert(fabs(test_element(y, i) - want[norm][kind][i]) < 1e-14,
                          "norm %d kind %d [%lld]: %.17g, not %.17g", norm, kind, (long long)i,
                          test_element(y, i), want[norm][kind][i]);
            weft_tensor_release(y);
            if (kind == WEFT_RFFTND || kind == WEFT_IRFFTND)
                continue;   /* their fft_length needs the dims known */
            /* The count when the call runs: dims unknown while tracing. */
            const weft_spec sig = { WEFT_F64, 3, { -1, -1, 2 } };
            weft_function *f = op_signature_function(rt, norm_body, &c, &sig, 1);
            weft_arg a = weft_arg_tensor(in);
            cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
            for (int64_t i = 0; i < n; i++)
                cr_assert(fabs(test_element(y, i) - want[norm][kind][i]) < 1e-14,
                          "traced norm %d kind %d [%lld]", norm, kind, (long long)i);
            weft_tensor_release(y);
            op_destroy_traced_once(&f);
        }
    /* rfftn(r, norm="ortho") without s: N is the real length 4 per row,
     * not the 3 bins. */
    static const double plain[12] = { 2.0329319959113241, 0, 1.5026019100214134,
                                      -0.70710678118654746, 2.0329319959113241, 0,
                                      -1.6793786053180502, 0, -1.1490485194281397,
                                      -2.8284271247461898, -0.2651650429449553, 0 };
    weft_tensor *y;
    op_results_everywhere(rfftn_ortho_body, NULL, &rs, 1, &y, 1, "rfftn ortho");
    for (int64_t i = 0; i < 12; i++)
        cr_assert(fabs(test_element(y, i) - plain[i]) < 1e-14, "rfftn [%lld]: %.17g",
                  (long long)i, test_element(y, i));
    weft_tensor_release(y);
    weft_tensor_release(xs);
    weft_tensor_release(rs);
}

static int norm_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    outs[0] = weft_fftnd_norm(cx, which ? (weft_fftnd_kind)9 : WEFT_FFTND, a[0], NULL, NULL, 0,
                              which ? WEFT_FFT_NORM_ORTHO : (weft_fft_norm)3);
    return weft_ctx_status(cx);
}

Test(ops_fftnd, norm_refusals)
{
    weft_tensor *x = test_tensor(WEFT_F64, 2, (const int64_t[]){ 1, 2 }, (const double[]){ 1, 0 });
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_fftnd_norm: norm 3 is not a weft_fft_norm" },
        { 1, WEFT_EINVAL, "weft_fftnd_norm: kind 9 is not a weft_fftnd_kind" },
    };
    op_expect_errors(rt, norm_refused_body, cases, 2, &x, 1);
    weft_tensor_release(x);
}
