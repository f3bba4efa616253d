/* tf.signal's discrete cosine transforms (dct, idct) and the MFCCs built
 * on them, as one product with an N x N cosine matrix made while tracing:
 * y[..., k] = sum_n x[..., n] M[n, k], with SciPy's (and TensorFlow's)
 * definitions of types 1 to 4.  O(N^2) a transform where TensorFlow's FFT
 * is O(N log N): the lengths these are used at (mel bins, short frames)
 * make the product, on the BLAS, the simpler and the faster. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* cos(pi num / den) with num reduced modulo 2 den first, so that the angle
 * stays below 2 pi and loses no digits for large N. */
static double cos_pi_ratio(int64_t num, int64_t den)
{
    return cos(M_PI * (double)(num % (2 * den)) / (double)den);
}

/* Element [n, k] of the matrix of a type-`type` DCT of length N. */
static double dct_coefficient(int type, bool ortho, int64_t N, int64_t n, int64_t k)
{
    switch (type) {
    case 1:
        if (n == 0)
            return 1.0;
        if (n == N - 1)
            return k % 2 ? -1.0 : 1.0;
        return 2.0 * cos_pi_ratio(k * n, N - 1);
    case 2: {
        double c = 2.0 * cos_pi_ratio(k * (2 * n + 1), 2 * N);
        return ortho ? c * sqrt(1.0 / ((k == 0 ? 4.0 : 2.0) * (double)N)) : c;
    }
    case 3:
        if (n == 0)
            return ortho ? 1.0 / sqrt((double)N) : 1.0;
        return (ortho ? sqrt(2.0 / (double)N) : 2.0) * cos_pi_ratio(n * (2 * k + 1), 2 * N);
    default: {
        double c = 2.0 * cos_pi_ratio((2 * n + 1) * (2 * k + 1), 4 * N);
        return ortho ? c * sqrt(1.0 / (2.0 * (double)N)) : c;
    }
    }
}

/* The matrix as a constant of dtype dt. */
static weft_value *dct_matrix(weft_ctx *cx, const char *fn, int type, bool ortho, int64_t N,
                              weft_dtype dt)
{
    int64_t dims[2] = { N, N }, count;
    if (!weft__numel_checked(2, dims, sizeof(double), &count))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: a length of %lld is too large", fn,
                              (long long)N);
    double *m = weft__malloc(sizeof *m * (size_t)count);
    if (!m)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory for a %lld x %lld matrix", fn,
                              (long long)N, (long long)N);
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < N; k++)
            m[n * N + k] = dct_coefficient(type, ortho, N, n, k);
    weft_value *v = weft__ops_constant(cx, fn, WEFT_F64, 2, dims, m, dt);
    weft__free(m);
    return v;
}

static weft_value *dct_of(weft_ctx *cx, const char *fn, weft_value *input, int type, int64_t n,
                          bool ortho)
{
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    if (type < 1 || type > 4)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: type %d is not 1, 2, 3 or 4", fn, type);
    if (type == 1 && ortho)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: type 1 has no orthonormal form", fn);
    if (n < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: n %lld is negative (0: the input's length)",
                              fn, (long long)n);
    const weft_spec *s = weft__value_spec(input);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_float_rank(cx, fn, s, 0, false))
        return NULL;
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || s->dims[s->rank - 1] < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the last dim of %s is not known while "
                              "tracing (the transform's matrix depends on it)", fn,
                              weft__spec_str(s, ss, sizeof ss));
    int64_t N = n ? n : s->dims[s->rank - 1];
    if (N < (type == 1 ? 2 : 1))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: a transform of length %lld (type 1 takes "
                              "2 or more, the others 1 or more)", fn, (long long)N);
    weft_value *m = dct_matrix(cx, fn, type, ortho, N, s->dtype);
    if (!m)
        return NULL;
    int r = s->rank;
    return weft_matmul(cx, weft__ops_fit_axis(cx, input, r, r - 1, s->dims[r - 1], N), m);
}

weft_value *weft_dct(weft_ctx *cx, weft_value *input, int type, int64_t n, bool ortho)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(dct_of(cx, "weft_dct", input, type, n, ortho));
}

/* TensorFlow's idct: the DCT of the inverse type (2 and 3 swap, 1 and 4
 * are their own), unscaled as SciPy's: idct(dct(x)) is 2N x for type 2
 * without ortho. */
weft_value *weft_idct(weft_ctx *cx, weft_value *input, int type, int64_t n, bool ortho)
{
    WEFT__SCOPE(cx);
    static const int inverse[5] = { 0, 1, 3, 2, 4 };
    return WEFT__KEEP(dct_of(cx, "weft_idct", input, type >= 1 && type <= 4 ? inverse[type] : type,
                             n, ortho));
}

/* tf.signal.mfccs_from_log_mel_spectrograms: the type-2 DCT over the mel
 * bins scaled by 1 / sqrt(2 bins). */
weft_value *weft_mfccs_from_log_mel_spectrograms(weft_ctx *cx, weft_value *log_mel_spectrograms)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_mfccs_from_log_mel_spectrograms";
    if (!weft__op_enter(cx, fn, &log_mel_spectrograms, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(log_mel_spectrograms);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || s->dims[s->rank - 1] < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has no mel bins known while tracing",
                              fn, weft__spec_str(s, ss, sizeof ss));
    weft_value *d = dct_of(cx, fn, log_mel_spectrograms, 2, 0, false);
    double bins = (double)s->dims[s->rank - 1];
    weft_value *scale = weft_const_f64(cx, 1.0 / sqrt(2.0 * bins));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, d, scale));
}
