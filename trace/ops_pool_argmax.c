/* tf.nn.max_pool_with_argmax: max_pool2d's values, and where each came
 * from as TensorFlow numbers input elements.  A composition: the windows'
 * taps (extract_patches) compared with the pooled maximum, padding taps
 * masked out by a constant, the first tap that holds the maximum picked
 * by argmax, and its flat index computed from the tap and the window's
 * place. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* The call's geometry, checked. */
typedef struct argmax_pool {
    int64_t k[2], st[2];
    int64_t in[3];                /* h, w, c */
    int64_t out[2], before[2];    /* output h, w; padding before */
} argmax_pool;

static bool plan_pool(weft_ctx *cx, const char *fn, weft_value *input, const int64_t *ksize,
                      const int64_t *strides, weft_padding padding, bool with_batch,
                      argmax_pool *p)
{
    if (!ksize) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL ksize", fn);
        return false;
    }
    if (!weft__ops_take_sizes(cx, fn, "ksize", ksize, 2, p->k) ||
        !weft__ops_take_sizes(cx, fn, "strides", strides, 2, p->st))
        return false;
    if (padding != WEFT_PADDING_VALID && padding != WEFT_PADDING_SAME) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: padding %d is not WEFT_PADDING_VALID or "
                       "WEFT_PADDING_SAME", fn, (int)padding);
        return false;
    }
    const weft_spec *s = weft__value_spec(input);
    char ss[WEFT__SPEC_STR_MAX];
    bool ok = s->rank == 4;
    for (int d = with_batch ? 0 : 1; ok && d < 4; d++)
        ok = s->dims[d] >= 0;
    if (!ok) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not NHWC data (rank 4, h, w and c%s known "
                       "while tracing)", fn, weft__spec_str(s, ss, sizeof ss),
                       with_batch ? " and, for include_batch_in_index, the batch" : "");
        return false;
    }
    if (s->dtype != WEFT_I32 && s->dtype != WEFT_I64 && s->dtype != WEFT_F32 &&
        s->dtype != WEFT_F64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s is not i32, i64, f32 or f64", fn,
                       weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    for (int d = 0; d < 3; d++)
        p->in[d] = s->dims[1 + d];
    for (int d = 0; d < 2; d++) {
        p->out[d] = weft__conv_out_dim(padding, p->in[d], p->k[d], p->st[d], 1, &p->before[d]);
        if (p->out[d] < 0) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the %s of %s is smaller than the window "
                           "(VALID)", fn, d ? "width" : "height", weft__spec_str(s, ss, sizeof ss));
            return false;
        }
    }
    return true;
}

/* bool [1, oh, ow, taps, 1]: whether tap t of window (oy, ox) lies in the
 * input rather than in the padding. */
static weft_value *inside_mask(weft_ctx *cx, const char *fn, const argmax_pool *p)
{
    int64_t taps = p->k[0] * p->k[1], n = p->out[0] * p->out[1] * taps;
    uint8_t *m = weft__malloc((size_t)(n ? n : 1));
    if (!m)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    for (int64_t oy = 0, i = 0; oy < p->out[0]; oy++)
        for (int64_t ox = 0; ox < p->out[1]; ox++)
            for (int64_t t = 0; t < taps; t++, i++) {
                int64_t y = oy * p->st[0] + t / p->k[1] - p->before[0];
                int64_t x = ox * p->st[1] + t % p->k[1] - p->before[1];
                m[i] = y >= 0 && y < p->in[0] && x >= 0 && x < p->in[1];
            }
    const int64_t dims[5] = { 1, p->out[0], p->out[1], taps, 1 };
    weft_value *v = weft__ops_constant(cx, fn, WEFT_BOOL, 5, dims, m, WEFT_BOOL);
    weft__free(m);
    return v;
}

/* i64 [1, n, 1, 1] (axis 1) or [1, 1, n, 1] (axis 2) of o * stride - before. */
static weft_value *window_origins(weft_ctx *cx, const char *fn, const argmax_pool *p, int axis)
{
    int d = axis - 1;
    int64_t n = p->out[d];
    int64_t *v = weft__malloc(sizeof *v * (size_t)(n ? n : 1));
    if (!v)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    for (int64_t o = 0; o < n; o++)
        v[o] = o * p->st[d] - p->before[d];
    int64_t dims[4] = { 1, 1, 1, 1 };
    dims[axis] = n;
    weft_value *c = weft__ops_constant(cx, fn, WEFT_I64, 4, dims, v, WEFT_I64);
    weft__free(v);
    return c;
}

int weft_max_pool_with_argmax(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                              const int64_t *strides, weft_padding padding,
                              bool include_batch_in_index, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_max_pool_with_argmax";
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, &input, 1, outs, &rc))
        return rc;
    argmax_pool p;
    if (!plan_pool(cx, fn, input, ksize, strides, padding, include_batch_in_index, &p))
        return weft_ctx_status(cx);
    const weft__steps st = { cx, fn };
    int64_t taps = p.k[0] * p.k[1], c = p.in[2];
    weft_value *m = weft_max_pool2d(cx, input, p.k, p.st, padding);
    weft_value *patches = weft_extract_patches(cx, input, p.k, p.st, NULL, padding);
    const int64_t split[5] = { -1, p.out[0], p.out[1], taps, c };
    weft_value *tap_vals = weft_reshape(cx, patches, 5, split);
    weft_value *m5 = weft_expand_dims(cx, m, 3);
    /* The taps that hold the maximum (NaN holds a NaN maximum) and lie in
     * the input; the first of them, in TensorFlow's row-major window
     * order. */
    weft_value *same = weft__step2(&st, WEFT__OP_LOGICAL_OR, weft__step2(&st, WEFT__OP_EQ, tap_vals, m5),
                                   weft__step2(&st, WEFT__OP_LOGICAL_AND,
                                               weft__step1(&st, WEFT__OP_IS_NAN, tap_vals),
                                               weft__step1(&st, WEFT__OP_IS_NAN, m5)));
    weft_value *hit = weft__step2(&st, WEFT__OP_LOGICAL_AND, same, inside_mask(cx, fn, &p));
    weft_value *tap = weft_argmax(cx, weft_cast(cx, hit, WEFT_I32), 3);
    /* Its input row and column, then ((y w + x) c + channel), plus the
     * batch's offset b h w c when asked. */
    weft_value *kw = weft_const(cx, WEFT_I64, (double)p.k[1]);
    weft_value *y = weft__step2(&st, WEFT__OP_ADD, weft__step2(&st, WEFT__OP_FLOORDIV, tap, kw),
                                window_origins(cx, fn, &p, 1));
    weft_value *x = weft__step2(&st, WEFT__OP_ADD, weft__step2(&st, WEFT__OP_MOD, tap, kw),
                                window_origins(cx, fn, &p, 2));
    weft_value *pixel = weft__step2(&st, WEFT__OP_ADD,
                                    weft__step2(&st, WEFT__OP_MUL, y,
                                                weft_const(cx, WEFT_I64, (double)p.in[1])), x);
    weft_value *idx = weft__step2(&st, WEFT__OP_ADD,
                                  weft__step2(&st, WEFT__OP_MUL, pixel,
                                              weft_const(cx, WEFT_I64, (double)c)),
                                  weft_range(cx, WEFT_I64, 0, c, 1));
    if (include_batch_in_index) {
        int64_t batch = weft__value_spec(input)->dims[0];
        const int64_t col[4] = { batch, 1, 1, 1 };
        weft_value *b = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, batch, 1), 4, col);
        weft_value *image = weft_const(cx, WEFT_I64, (double)(p.in[0] * p.in[1] * c));
        idx = weft__step2(&st, WEFT__OP_ADD, idx, weft__step2(&st, WEFT__OP_MUL, b, image));
    }
    rc = weft_ctx_status(cx);
    if (rc != 0)
        return rc;
    outs[0] = m;
    outs[1] = idx;
    return 0;
}
