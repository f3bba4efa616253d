/* weft_gradients through the Fourier transforms: fft, ifft, rfft and irfft
 * of even and odd lengths, with fft_length cutting or padding the input,
 * stft with its window differentiated too, and the N-D transforms built on
 * them, each against central differences of a weighted sum of its result,
 * eagerly and traced on 1, 2 and 4 workers. */
#include "grad_check.h"

TestSuite(grad_fft, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

/* v's elements in a row, each times a weight of its own (a sine of its
 * index), so that a gradient sent to the wrong bin or part is seen. */
static weft_value *spread(weft_ctx *cx, weft_value *v)
{
    weft_value *flat = weft_reshape(cx, v, 1, (const int64_t[]){ -1 });
    weft_value *at = weft_cumsum(cx, weft_ones_like(cx, flat), 0);
    weft_value *w = weft_sin(cx, weft_add(cx, weft_mul(cx, at, weft_const_f64(cx, 0.37)),
                                          weft_const_f64(cx, 0.5)));
    return weft_mul(cx, flat, w);
}

static weft_value *transform(weft_ctx *cx, int which, weft_value *const *a)
{
    weft_value *x = a[0];
    switch (which) {
    case 0: return weft_fft(cx, x);                    /* [2, 6, 2] */
    case 1: return weft_ifft(cx, x);                   /* [2, 5, 2] */
    case 2: return weft_rfft(cx, x, 0);                /* [2, 8] */
    case 3: return weft_rfft(cx, x, 7);                /* [2, 7]: odd */
    case 4: return weft_rfft(cx, x, 8);                /* [2, 6]: padded */
    case 5: return weft_rfft(cx, x, 6);                /* [2, 9]: cut */
    case 6: return weft_irfft(cx, x, 8);               /* [2, 5, 2] */
    case 7: return weft_irfft(cx, x, 7);               /* [2, 4, 2]: odd */
    case 8: return weft_irfft(cx, x, 8);               /* [2, 3, 2]: bins missing */
    case 9: return weft_irfft(cx, x, 6);               /* [2, 6, 2]: bins cut */
    case 10: return weft_stft(cx, x, 6, 3, 8, a[1], false);     /* [2, 20], window [6] */
    case 11: return weft_stft(cx, x, 5, 4, 4, a[1], false);     /* [15]: frames cut, tail */
    case 12: return weft_stft(cx, x, 6, 4, 0, a[1], true);      /* [2, 17]: padded end */
    case 13: return weft_fft2d(cx, x);                 /* [3, 4, 2] */
    case 14: return weft_rfft2d(cx, x, NULL);          /* [3, 4] */
    case 15: return weft_irfft2d(cx, x, (const int64_t[]){ 3, 4 });   /* [3, 3, 2] */
    default: return NULL;
    }
}

static int transform_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = spread(cx, transform(cx, *(const int *)user, a));
    return weft_ctx_status(cx);
}

/* n values of a smooth, sign-changing sequence seeded by s. */
static void fill(double *v, int64_t n, double s)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = 0.8 * sin(1.3 * (double)i + s) + 0.1 * cos(0.4 * (double)i * s);
}

Test(grad_fft, transforms_match_differences)
{
    static const struct {
        const char *name;
        grad_arg x;
        int64_t window;   /* stft: the window's length, differentiated too */
    } cases[] = {
        { "fft", { 3, { 2, 6, 2 }, NULL }, 0 },
        { "ifft of an odd length", { 3, { 2, 5, 2 }, NULL }, 0 },
        { "rfft", { 2, { 2, 8 }, NULL }, 0 },
        { "rfft of an odd length", { 2, { 2, 7 }, NULL }, 0 },
        { "rfft padding its input", { 2, { 2, 6 }, NULL }, 0 },
        { "rfft cutting its input", { 2, { 2, 9 }, NULL }, 0 },
        { "irfft", { 3, { 2, 5, 2 }, NULL }, 0 },
        { "irfft of an odd length", { 3, { 2, 4, 2 }, NULL }, 0 },
        { "irfft with bins missing", { 3, { 2, 3, 2 }, NULL }, 0 },
        { "irfft with bins cut", { 3, { 2, 6, 2 }, NULL }, 0 },
        { "stft", { 2, { 2, 20 }, NULL }, 6 },
        { "stft with frames longer than fft_length", { 1, { 15 }, NULL }, 5 },
        { "stft with pad_end", { 2, { 2, 17 }, NULL }, 6 },
        { "fft2d", { 3, { 3, 4, 2 }, NULL }, 0 },
        { "rfft2d", { 2, { 3, 4 }, NULL }, 0 },
        { "irfft2d", { 3, { 3, 3, 2 }, NULL }, 0 },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        double xv[GRAD_CHECK_MAX_ELEMENTS], wv[16];
        grad_arg args[2] = { cases[i].x, { 1, { cases[i].window }, wv } };
        fill(xv, test_numel(args[0].rank, args[0].dims), 0.3 + i);
        fill(wv, cases[i].window, 1.1);
        args[0].v = xv;
        size_t n = cases[i].window ? 2 : 1;
        grad_case c = { transform_body, &i, n, n };
        expect_gradients(&c, args, cases[i].name);
    }
}

/* irfft reads only the real parts of bin 0 and, for an even length, of
 * bin length / 2: their imaginary parts get exactly 0. */
Test(grad_fft, irfft_passes_nothing_to_the_parts_it_drops)
{
    for (int which = 6; which <= 7; which++) {
        int64_t bins = which == 6 ? 5 : 4;
        double xv[10];
        fill(xv, 2 * bins, 0.7);
        weft_tensor *x = test_tensor(WEFT_F64, 2, (const int64_t[]){ bins, 2 }, xv), *outs[2];
        grad_case c = { transform_body, &which, 1, 1 };
        op_results_everywhere(grad_body, &c, &x, 1, outs, 2, "irfft");
        cr_expect_eq(test_element(outs[1], 1), 0.0, "bin 0's imaginary part");
        if (which == 6)
            cr_expect_eq(test_element(outs[1], 9), 0.0, "bin 4's imaginary part");
        cr_expect_neq(test_element(outs[1], 3), 0.0, "bin 1's imaginary part");
        weft_tensor_release(x);
        weft_tensor_release(outs[0]);
        weft_tensor_release(outs[1]);
    }
}
