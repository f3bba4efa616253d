/* Complex numbers as pairs (trace/ops_fft.c's layout, [..., 2]: real part,
 * imaginary part): tf.complex, tf.math.real, imag, conj, angle, abs and
 * the product of two complex tensors, compositions of slices and
 * elementwise ops (they fuse).  Each checks its inputs first, so that an
 * error names the public op. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* Whether z is a complex tensor: f32 or f64, a last dim of 2 known while
 * tracing; otherwise the context fails naming fn. */
static bool is_complex(weft_ctx *cx, const char *fn, weft_value *z)
{
    const weft_spec *s = weft__value_spec(z);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_float_rank(cx, fn, s, 0, false))
        return false;
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || s->dims[s->rank - 1] != 2) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not [..., 2] (complex numbers as pairs of "
                       "real and imaginary parts, the 2 known while tracing)", fn,
                       weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    return true;
}

/* Part `part` (0 real, 1 imaginary) of the complex tensor z, without the
 * pairs' axis. */
static weft_value *part_of(weft_ctx *cx, weft_value *z, int part)
{
    int r = weft__value_spec(z)->rank;
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
    for (int d = 0; d < r; d++)
        end[d] = WEFT_END;
    begin[r - 1] = part;
    end[r - 1] = part + 1;
    return weft_squeeze(cx, weft_slice(cx, z, begin, end, NULL), r - 1);
}

static weft_value *complex_entry(weft_ctx *cx, const char *fn, weft_value *z)
{
    return weft__op_enter(cx, fn, &z, 1) && is_complex(cx, fn, z) ? z : NULL;
}

weft_value *weft_real(weft_ctx *cx, weft_value *z)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_entry(cx, "weft_real", z) ? part_of(cx, z, 0) : NULL);
}

weft_value *weft_imag(weft_ctx *cx, weft_value *z)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_entry(cx, "weft_imag", z) ? part_of(cx, z, 1) : NULL);
}

/* tf.complex(real, imag): the two stacked on a new last axis; one dtype
 * (f32 or f64), one shape. */
weft_value *weft_complex(weft_ctx *cx, weft_value *real, weft_value *imag)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_complex";
    weft_value *in[2] = { real, imag };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *a = weft__value_spec(real), *b = weft__value_spec(imag);
    if ((a->dtype != WEFT_F32 && a->dtype != WEFT_F64) || b->dtype != a->dtype) {
        char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the parts %s and %s are not f32 or f64 of "
                              "one dtype", fn, weft__spec_str(a, sa, sizeof sa),
                              weft__spec_str(b, sb, sizeof sb));
    }
    return WEFT__KEEP(weft_stack(cx, in, 2, -1));
}

/* tf.math.conj: the imaginary parts negated (a product with [1, -1]). */
weft_value *weft_conj(weft_ctx *cx, weft_value *z)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_conj";
    if (!complex_entry(cx, fn, z))
        return NULL;
    static const double signs[2] = { 1.0, -1.0 };
    weft_value *k = weft__ops_constant(cx, fn, WEFT_F64, 1, (const int64_t[]){ 2 }, signs,
                                       weft__value_spec(z)->dtype);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, z, k));
}

/* tf.math.angle: atan2(imaginary, real). */
weft_value *weft_angle(weft_ctx *cx, weft_value *z)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_angle";
    if (!complex_entry(cx, fn, z))
        return NULL;
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ATAN2, fn, part_of(cx, z, 1),
                                      part_of(cx, z, 0)));
}

/* tf.abs of a complex tensor: sqrt(re^2 + im^2), f32 computed in f64 (so
 * that no square of an f32 overflows) and rounded once. */
weft_value *weft_complex_abs(weft_ctx *cx, weft_value *z)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_complex_abs";
    if (!complex_entry(cx, fn, z))
        return NULL;
    weft_dtype dt = weft__value_spec(z)->dtype;
    weft_value *w = dt == WEFT_F64 ? z : weft_cast(cx, z, WEFT_F64);
    weft_value *re = part_of(cx, w, 0), *im = part_of(cx, w, 1);
    weft_value *sum = weft__op_binary(cx, WEFT__OP_ADD, fn,
                                      weft__op_binary(cx, WEFT__OP_MUL, fn, re, re),
                                      weft__op_binary(cx, WEFT__OP_MUL, fn, im, im));
    weft_value *m = weft__op_unary(cx, WEFT__OP_SQRT, fn, sum);
    return WEFT__KEEP(dt == WEFT_F64 ? m : weft_cast(cx, m, dt));
}

/* The product of complex a and b (broadcast as elementwise ops):
 * (ar br - ai bi, ar bi + ai br). */
weft_value *weft_complex_mul(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_complex_mul";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2) || !is_complex(cx, fn, a) || !is_complex(cx, fn, b))
        return NULL;
    weft_value *ar = part_of(cx, a, 0), *ai = part_of(cx, a, 1);
    weft_value *br = part_of(cx, b, 0), *bi = part_of(cx, b, 1);
    weft_value *parts[2] = {
        weft__op_binary(cx, WEFT__OP_SUB, fn, weft__op_binary(cx, WEFT__OP_MUL, fn, ar, br),
                        weft__op_binary(cx, WEFT__OP_MUL, fn, ai, bi)),
        weft__op_binary(cx, WEFT__OP_ADD, fn, weft__op_binary(cx, WEFT__OP_MUL, fn, ar, bi),
                        weft__op_binary(cx, WEFT__OP_MUL, fn, ai, br)),
    };
    return WEFT__KEEP(weft_stack(cx, parts, 2, -1));
}
