/* The stateless random ops of include/weft/ops.h: weft_random_uniform,
 * weft_random_normal, weft_random_truncated_normal, the _like forms,
 * weft_dropout, weft_random_shuffle, the random flips, image adjustments
 * and crop (made of the uniform draw), and weft_random_gamma,
 * weft_random_poisson and weft_random_binomial.  The entry points check
 * the dtype, the dims, the bounds and the seed (weft__check_seed, naming
 * the op); kernel_random.c and kernel_random_counts.c draw. */
#include <float.h>
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* The result's dims as weft_fill takes them: known while tracing, not
 * negative, within the address space. */
static bool check_dims(weft_ctx *cx, const char *fn, weft_dtype dt, int rank,
                       const int64_t *dims)
{
    if (rank < 0 || rank > WEFT_MAX_RANK) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: rank %d is outside 0..%d", fn, rank, WEFT_MAX_RANK);
        return false;
    }
    if (rank > 0 && !dims) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL dims for rank %d", fn, rank);
        return false;
    }
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: dim %d is %s (%lld)", fn, i,
                           dims[i] == WEFT_DIM_ANY ? "unknown" : "negative", (long long)dims[i]);
            return false;
        }
    int64_t numel;
    if (!weft__numel_checked(rank, dims, weft_dtype_size(dt), &numel)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: the shape overflows the address space", fn);
        return false;
    }
    return true;
}

/* Whether x is an integer that dtype dt holds. */
static bool int_of(double x, weft_dtype dt)
{
    double lo = dt == WEFT_I32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = dt == WEFT_I32 ? 2147483648.0 : 9223372036854775808.0;
    return x >= lo && x < hi && x == floor(x);
}

/* The bounds of a draw of dtype dt: WEFT_EINVAL naming fn when they do
 * not fit. */
static bool check_draw(weft_ctx *cx, weft__op op, const char *fn, weft_dtype dt, double a,
                       double b)
{
    bool is_float = dt == WEFT_F32 || dt == WEFT_F64;
    bool is_int = dt == WEFT_I32 || dt == WEFT_I64;
    if (!is_float && !(is_int && op == WEFT__OP_RANDOM_UNIFORM)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not %s", fn,
                       weft_dtype_name(dt) ? weft_dtype_name(dt) : "?",
                       op == WEFT__OP_RANDOM_UNIFORM ? "f32, f64, i32 or i64" : "f32 or f64");
        return false;
    }
    if (op == WEFT__OP_RANDOM_UNIFORM) {
        if (!isfinite(a) || !isfinite(b) || !(a < b)) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: minval %g and maxval %g are not finite with "
                           "minval < maxval", fn, a, b);
            return false;
        }
        if (is_int && (!int_of(a, dt) || !int_of(b, dt))) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: minval %g and maxval %g are not %s integers", fn,
                           a, b, weft_dtype_name(dt));
            return false;
        }
    } else if (!isfinite(a) || !isfinite(b) || b < 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: mean %g and stddev %g are not finite with "
                       "stddev >= 0", fn, a, b);
        return false;
    }
    return true;
}

/* Whether seed is one (weft__check_seed), the context failing otherwise
 * with a message naming fn: the ops that draw check it before their other
 * arguments, and the draw's own inference would name the draw. */
bool weft__ops_seed_ok(weft_ctx *cx, const char *fn, weft_value *seed)
{
    int rc = weft__check_seed(fn, weft__value_spec(seed));
    if (rc < 0)
        weft__ctx_fail_errmsg(cx, rc);
    return rc == 0;
}

/* The node of a draw whose arguments were checked: of dims[0..rank) or
 * (in[1] not NULL) of in[1]'s shape. */
static weft_value *draw_node(weft_ctx *cx, weft__op op, weft_value **in, weft_dtype dt,
                             int rank, const int64_t *dims, double a, double b)
{
    weft_value *like = in[1];
    uint32_t n_in = like ? 2 : 1;
    weft__node n = { .op = op };
    n.attr.random.dtype = dt;
    n.attr.random.rank = like ? -1 : rank;
    for (int i = 0; !like && i < rank; i++)
        n.attr.random.dims[i] = dims[i];
    n.attr.random.a = a;
    n.attr.random.b = b;
    n.n_in = n_in;
    n.in = n.inline_in;
    weft_spec specs[2];
    for (uint32_t i = 0; i < n_in; i++)
        specs[i] = *weft__value_spec(in[i]);
    int rc = weft__infer_spec(&n, specs, &n.spec);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    return weft__ops_emit(cx, &n, in, n_in);
}

/* A draw of dtype dt, of dims[0..rank) or (like not NULL) of like's
 * shape. */
static weft_value *random_op(weft_ctx *cx, weft__op op, const char *fn, weft_value *seed,
                             weft_value *like, weft_dtype dt, int rank, const int64_t *dims,
                             double a, double b)
{
    weft_value *in[2] = { seed, like };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2) || !weft__ops_seed_ok(cx, fn, seed) ||
        !check_draw(cx, op, fn, dt, a, b))
        return NULL;
    if (!like && !check_dims(cx, fn, dt, rank, dims))
        return NULL;
    return draw_node(cx, op, in, dt, rank, dims, a, b);
}

weft_value *weft_random_uniform(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                                const int64_t *dims, double minval, double maxval)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_op(cx, WEFT__OP_RANDOM_UNIFORM, "weft_random_uniform", seed, NULL,
                                dtype, rank, dims, minval, maxval));
}

weft_value *weft_random_normal(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                               const int64_t *dims, double mean, double stddev)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_op(cx, WEFT__OP_RANDOM_NORMAL, "weft_random_normal", seed, NULL, dtype,
                                rank, dims, mean, stddev));
}

weft_value *weft_random_truncated_normal(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                         int rank, const int64_t *dims, double mean,
                                         double stddev)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_op(cx, WEFT__OP_RANDOM_TRUNCATED_NORMAL,
                                "weft_random_truncated_normal", seed, NULL, dtype, rank, dims,
                                mean, stddev));
}

/* Every integer of the dtype: the uniform draw over [-2^31, 2^31) or
 * [-2^63, 2^63), bounds no caller of weft_random_uniform can name (maxval
 * must be of the dtype); the kernel takes such a span word for word. */
weft_value *weft_random_uniform_full_int(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                         int rank, const int64_t *dims)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_uniform_full_int";
    weft_value *in[2] = { seed, NULL };
    if (!weft__op_enter(cx, fn, in, 1) || !weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    if (dtype != WEFT_I32 && dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not i32 or i64", fn,
                              weft_dtype_name(dtype) ? weft_dtype_name(dtype) : "?");
    if (!check_dims(cx, fn, dtype, rank, dims))
        return NULL;
    double half = dtype == WEFT_I32 ? 0x1p31 : 0x1p63;
    return WEFT__KEEP(draw_node(cx, WEFT__OP_RANDOM_UNIFORM, in, dtype, rank, dims, -half, half));
}

/* The _like forms: like is required (random_op takes NULL for the forms
 * with dims). */
static weft_value *random_like(weft_ctx *cx, weft__op op, const char *fn, weft_value *seed,
                               weft_value *like, weft_dtype dt, double a, double b)
{
    if (cx && !like)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: like is NULL", fn);
    return random_op(cx, op, fn, seed, like, dt, 0, NULL, a, b);
}

weft_value *weft_random_uniform_like(weft_ctx *cx, weft_value *seed, weft_value *like,
                                     weft_dtype dtype, double minval, double maxval)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_like(cx, WEFT__OP_RANDOM_UNIFORM, "weft_random_uniform_like", seed,
                                  like, dtype, minval, maxval));
}

weft_value *weft_random_normal_like(weft_ctx *cx, weft_value *seed, weft_value *like,
                                    weft_dtype dtype, double mean, double stddev)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_like(cx, WEFT__OP_RANDOM_NORMAL, "weft_random_normal_like", seed, like,
                                  dtype, mean, stddev));
}

weft_value *weft_random_categorical(weft_ctx *cx, weft_value *logits, int64_t num_samples,
                                    weft_value *seed, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_categorical";
    weft_value *in[2] = { seed, logits };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (dtype != WEFT_I32 && dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not i32 or i64", fn,
                              weft_dtype_name(dtype) ? weft_dtype_name(dtype) : "?");
    if (num_samples < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: num_samples %lld is negative", fn,
                              (long long)num_samples);
    weft__node n = { .op = WEFT__OP_RANDOM_CATEGORICAL };
    n.attr.random.dtype = dtype;
    n.attr.random.rank = 1;
    n.attr.random.dims[0] = num_samples;
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 2));
}

/* TensorFlow's stateless dropout: kept where a uniform draw in [0, 1) is
 * >= rate, scaled by 1 / (1 - rate). */
weft_value *weft_dropout(weft_ctx *cx, weft_value *x, double rate, weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_dropout";
    weft_value *in[2] = { x, seed };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->dtype != WEFT_F32 && s->dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: x is %s, not f32 or f64 (weft_cast it first)",
                              fn, weft__spec_str(s, ss, sizeof ss));
    if (!(rate >= 0 && rate < 1))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: rate %g is not in [0, 1)", fn, rate);
    weft_value *u = random_op(cx, WEFT__OP_RANDOM_UNIFORM, fn, seed, x, s->dtype, 0, NULL, 0, 1);
    weft_value *keep = weft_ge(cx, u, weft_const_f64(cx, rate));
    weft_value *kept = weft_mul(cx, x, weft_const_f64(cx, 1.0 / (1.0 - rate)));
    return WEFT__KEEP(weft_where(cx, keep, kept, weft_zeros_like(cx, x)));
}

/* One uniform draw in [a, b) of dtype dt per slice of x along axis 0: a
 * vector, whose length may be known only when the function runs. */
static weft_value *draw_per_slice(weft_ctx *cx, const char *fn, weft_value *x, weft_value *seed,
                                  weft_dtype dt, double a, double b)
{
    const weft_spec *s = weft__value_spec(x);
    if (s->dims[0] >= 0)
        return random_op(cx, WEFT__OP_RANDOM_UNIFORM, fn, seed, NULL, dt, 1, s->dims, a, b);
    return random_op(cx, WEFT__OP_RANDOM_UNIFORM, fn, seed, weft__ops_axis0_range(cx, x), dt, 0,
                     NULL, a, b);
}

/* Keys of 62 random bits: distinct with probability above 1 - n^2 / 2^63,
 * and argsort is stable, so ties (were there any) keep their order. */
#define SHUFFLE_KEY_LIMIT 4611686018427387904.0   /* 2^62 */

/* tf.random.experimental.stateless_shuffle: x's slices along axis 0 in the
 * order that sorts a uniform key drawn for each. */
weft_value *weft_random_shuffle(weft_ctx *cx, weft_value *x, weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_shuffle";
    weft_value *in[2] = { x, seed };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    if (s->rank < 1) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s needs a rank of 1 or more known while "
                              "tracing", fn, weft__spec_str(s, ss, sizeof ss));
    }
    if (!weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    weft_value *keys = draw_per_slice(cx, fn, x, seed, WEFT_I64, 0, SHUFFLE_KEY_LIMIT);
    return WEFT__KEEP(weft_gather(cx, x, weft_argsort(cx, keys, 0, false), 0));
}

/* tf.image.stateless_random_flip_left_right / _up_down: each image
 * mirrored where its uniform draw is below 1/2. */
static weft_value *random_flip(weft_ctx *cx, const char *fn, weft_value *images,
                               weft_value *seed, bool left_right)
{
    weft_value *in[2] = { images, seed };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *s = weft__value_spec(images);
    if (s->rank != 3 && s->rank != 4) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: images %s are not [h, w, c] or [b, h, w, c]",
                              fn, weft__spec_str(s, ss, sizeof ss));
    }
    if (!weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    weft_value *u = s->rank == 3
                        ? random_op(cx, WEFT__OP_RANDOM_UNIFORM, fn, seed, NULL, WEFT_F64, 0, NULL,
                                    0, 1)
                        : weft_reshape(cx, draw_per_slice(cx, fn, images, seed, WEFT_F64, 0, 1), 4,
                                       (const int64_t[]){ -1, 1, 1, 1 });
    weft_value *flipped = left_right ? weft_flip_left_right(cx, images)
                                     : weft_flip_up_down(cx, images);
    return weft_where(cx, weft_lt(cx, u, weft_const_f64(cx, 0.5)), flipped, images);
}

weft_value *weft_random_flip_left_right(weft_ctx *cx, weft_value *images, weft_value *seed)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_flip(cx, "weft_random_flip_left_right", images, seed, true));
}

weft_value *weft_random_flip_up_down(weft_ctx *cx, weft_value *images, weft_value *seed)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(random_flip(cx, "weft_random_flip_up_down", images, seed, false));
}

/* A scalar uniform draw in [a, b) of dtype dt (a constant 0 for a = b = 0,
 * which the draw itself refuses). */
static weft_value *scalar_draw(weft_ctx *cx, const char *fn, weft_value *seed, weft_dtype dt,
                               double a, double b)
{
    if (a == b)
        return weft_cast(cx, weft__value_strong(cx, weft_const_f64(cx, a)), dt);
    return random_op(cx, WEFT__OP_RANDOM_UNIFORM, fn, seed, NULL, dt, 0, NULL, a, b);
}

/* tf.image.stateless_random_brightness: adjust_brightness by one delta
 * drawn for the whole input. */
weft_value *weft_random_brightness(weft_ctx *cx, weft_value *images, double max_delta,
                                   weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_brightness";
    weft_value *in[2] = { images, seed };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_float_images(cx, fn, images) ||
        !weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    if (!(max_delta >= 0) || !isfinite(max_delta))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_delta %g is not a finite number >= 0", fn,
                              max_delta);
    weft_dtype dt = weft__value_spec(images)->dtype;
    weft_value *delta = scalar_draw(cx, fn, seed, dt, -max_delta, max_delta);
    return WEFT__KEEP(weft_add(cx, images, delta));
}

/* Whether [lower, upper) is a factor's range of the random adjustments
 * (TensorFlow's 0 <= lower < upper, finite); else the context fails. */
static bool factor_range_ok(weft_ctx *cx, const char *fn, double lower, double upper)
{
    if (lower >= 0 && lower < upper && isfinite(upper))
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: [%g, %g) is not a finite range with 0 <= lower < upper",
                   fn, lower, upper);
    return false;
}

/* tf.image.stateless_random_contrast: adjust_contrast by one factor drawn
 * for the whole input. */
weft_value *weft_random_contrast(weft_ctx *cx, weft_value *images, double lower, double upper,
                                 weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_contrast";
    weft_value *in[2] = { images, seed };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_contrast_images(cx, fn, images) ||
        !weft__ops_seed_ok(cx, fn, seed) || !factor_range_ok(cx, fn, lower, upper))
        return NULL;
    weft_dtype dt = weft__value_spec(images)->dtype;
    return WEFT__KEEP(weft__ops_contrast(cx, fn, images,
                                         scalar_draw(cx, fn, seed, dt, lower, upper)));
}

/* tf.image.stateless_random_saturation: adjust_saturation by one factor
 * drawn for the whole input. */
weft_value *weft_random_saturation(weft_ctx *cx, weft_value *images, double lower,
                                   double upper, weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_saturation";
    weft_value *in[2] = { images, seed }, *rgb[3];
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_rgb_channels(cx, fn, images, rgb) ||
        !weft__ops_seed_ok(cx, fn, seed) || !factor_range_ok(cx, fn, lower, upper))
        return NULL;
    weft_dtype dt = weft__value_spec(images)->dtype;
    return WEFT__KEEP(weft__ops_saturation(cx, fn, rgb,
                                           scalar_draw(cx, fn, seed, dt, lower, upper)));
}

/* tf.image.stateless_random_hue: adjust_hue by one delta drawn for the
 * whole input. */
weft_value *weft_random_hue(weft_ctx *cx, weft_value *images, double max_delta, weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_hue";
    weft_value *in[2] = { images, seed }, *rgb[3];
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_rgb_channels(cx, fn, images, rgb) ||
        !weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    if (!(max_delta >= 0 && max_delta <= 0.5))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_delta %g is not in [0, 0.5]", fn,
                              max_delta);
    weft_dtype dt = weft__value_spec(images)->dtype;
    return WEFT__KEEP(weft__ops_hue(cx, fn, rgb,
                                    scalar_draw(cx, fn, seed, dt, -max_delta, max_delta)));
}

/* ---- Gamma and Poisson draws ------------------------------------------- */

/* Whether p (a parameter named what) is a number tensor that broadcasts to
 * dims[0..rank) (a dim unknown while tracing is checked when the function
 * runs); otherwise the context fails naming fn. */
static bool param_fits(weft_ctx *cx, const char *fn, const char *what, weft_value *p, int rank,
                       const int64_t *dims)
{
    const weft_spec *s = weft__value_spec(p);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->dtype == WEFT_BOOL) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s is bool, not a number", fn, what,
                       weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    bool fits = s->rank != WEFT_RANK_ANY && s->rank <= rank;
    for (int d = 0; fits && d < s->rank; d++) {
        int64_t have = s->dims[s->rank - 1 - d], want = dims[rank - 1 - d];
        fits = have == WEFT_DIM_ANY || have == 1 || have == want;
    }
    if (!fits)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s does not broadcast to the shape of the draw "
                       "(rank %d known while tracing, dims aligned from the right)", fn, what,
                       weft__spec_str(s, ss, sizeof ss), rank);
    return fits;
}

/* A RANDOM_GAMMA, RANDOM_POISSON or RANDOM_BINOMIAL node of dtype dt over
 * the parameters p[0..n_p), each rounded to round_to first (TensorFlow
 * casts alpha to the draw's dtype), in f64 and broadcast to the draw's
 * dims. */
static weft_value *count_draw(weft_ctx *cx, weft__op op, weft_value *seed, weft_dtype dt,
                              int rank, const int64_t *dims, weft_value *const *p, size_t n_p,
                              weft_dtype round_to)
{
    weft_value *in[3] = { seed, NULL, NULL };
    for (size_t k = 0; k < n_p; k++) {
        weft_value *p64 = weft_cast(cx, weft_cast(cx, p[k], round_to), WEFT_F64);
        if (!(in[1 + k] = weft_broadcast_to(cx, p64, rank, dims)))
            return NULL;
    }
    weft__node n = { .op = op };
    n.attr.random.dtype = dt;
    n.attr.random.rank = -1;
    return weft__ops_finish(cx, &n, in, (uint32_t)n_p + 1);
}

/* The dtypes a count draws into (Poisson, binomial). */
static bool count_dtype(weft_ctx *cx, const char *fn, weft_dtype dtype)
{
    if (dtype != WEFT_BOOL && weft_dtype_name(dtype))
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not i32, i64, f32 or f64", fn,
                   weft_dtype_name(dtype) ? weft_dtype_name(dtype) : "?");
    return false;
}

/* tf.random.stateless_gamma: Gamma(alpha) draws divided by beta, at least
 * the dtype's smallest normal number (TensorFlow's). */
weft_value *weft_random_gamma(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                              const int64_t *dims, weft_value *alpha, weft_value *beta)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_gamma";
    weft_value *in[3] = { seed, alpha, beta };
    if (!weft__op_enter_optional(cx, fn, in, 2, 3))
        return NULL;
    if (dtype != WEFT_F32 && dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not f32 or f64", fn,
                              weft_dtype_name(dtype) ? weft_dtype_name(dtype) : "?");
    if (!check_dims(cx, fn, dtype, rank, dims) || !weft__ops_seed_ok(cx, fn, seed) ||
        !param_fits(cx, fn, "alpha", alpha, rank, dims) ||
        (beta && !param_fits(cx, fn, "beta", beta, rank, dims)))
        return NULL;
    weft_value *g = count_draw(cx, WEFT__OP_RANDOM_GAMMA, seed, dtype, rank, dims, &alpha, 1,
                               dtype);
    if (beta)
        g = weft_div(cx, g, weft_cast(cx, beta, dtype));
    double tiny = dtype == WEFT_F32 ? (double)FLT_MIN : DBL_MIN;
    return WEFT__KEEP(weft_maximum(cx, g, weft_const_f64(cx, tiny)));
}

/* tf.random.stateless_poisson: Poisson(lam) counts in dtype. */
weft_value *weft_random_poisson(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                                const int64_t *dims, weft_value *lam)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_poisson";
    weft_value *in[2] = { seed, lam };
    if (!weft__op_enter(cx, fn, in, 2) || !count_dtype(cx, fn, dtype) ||
        !check_dims(cx, fn, dtype, rank, dims) || !weft__ops_seed_ok(cx, fn, seed) ||
        !param_fits(cx, fn, "lam", lam, rank, dims))
        return NULL;
    return WEFT__KEEP(count_draw(cx, WEFT__OP_RANDOM_POISSON, seed, dtype, rank, dims, &lam, 1,
                                 WEFT_F64));
}

/* tf.random.stateless_binomial: Binomial(counts, probs) successes in
 * dtype, counts and probs in f64 broadcast to the draw's dims. */
weft_value *weft_random_binomial(weft_ctx *cx, weft_value *seed, weft_dtype dtype, int rank,
                                 const int64_t *dims, weft_value *counts, weft_value *probs)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_binomial";
    weft_value *in[3] = { seed, counts, probs };
    if (!weft__op_enter(cx, fn, in, 3) || !count_dtype(cx, fn, dtype) ||
        !check_dims(cx, fn, dtype, rank, dims) || !weft__ops_seed_ok(cx, fn, seed) ||
        !param_fits(cx, fn, "counts", counts, rank, dims) ||
        !param_fits(cx, fn, "probs", probs, rank, dims))
        return NULL;
    weft_value *params[2] = { counts, probs };
    return WEFT__KEEP(count_draw(cx, WEFT__OP_RANDOM_BINOMIAL, seed, dtype, rank, dims, params, 2,
                                 WEFT_F64));
}

/* ---- Random crop ----------------------------------------------------------- */

/* Whether size[0..rank) fits the value's known dims (each dim unknown
 * while tracing is checked when the function runs, by the gather). */
static bool crop_size_ok(weft_ctx *cx, const char *fn, const weft_spec *s, const int64_t *size)
{
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 1) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: value %s needs a rank of 1 or more known while "
                       "tracing", fn, weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    if (!size) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: size is NULL", fn);
        return false;
    }
    for (int d = 0; d < s->rank; d++)
        if (size[d] < 0 || (s->dims[d] != WEFT_DIM_ANY && size[d] > s->dims[d])) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: size[%d] %lld is not within 0..%s%lld of value %s",
                           fn, d, (long long)size[d], s->dims[d] == WEFT_DIM_ANY ? "its dim " : "",
                           (long long)s->dims[d], weft__spec_str(s, ss, sizeof ss));
            return false;
        }
    return true;
}

/* tf.image.stateless_random_crop: value[offset : offset + size] with each
 * offset a uniform draw modulo dim - size + 1 (TensorFlow's), taken along
 * each cut dim by a gather of size indices. */
weft_value *weft_random_crop(weft_ctx *cx, weft_value *value, const int64_t *size,
                             weft_value *seed)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_crop";
    weft_value *in[2] = { value, seed };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *s = weft__value_spec(value);
    if (!crop_size_ok(cx, fn, s, size) || !weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    int rank = s->rank;
    int64_t r = rank;
    double sz[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        sz[d] = (double)size[d];
    weft_value *sizes = weft__ops_constant(cx, fn, WEFT_F64, 1, &r, sz, WEFT_I64);
    weft_value *limit = weft_add(cx, weft_sub(cx, weft_shape(cx, value), sizes),
                                 weft_const_i64(cx, 1));
    /* 62 random bits: the modulo's bias is below dim / 2^62. */
    weft_value *draw = random_op(cx, WEFT__OP_RANDOM_UNIFORM, fn, seed, NULL, WEFT_I64, 1, &r, 0,
                                 SHUFFLE_KEY_LIMIT);
    weft_value *offsets = weft_mod(cx, draw, limit);
    weft_value *out = value;
    for (int d = 0; d < rank && out; d++) {
        if (s->dims[d] == size[d])
            continue;   /* the whole dim: its offset is 0 */
        weft_value *at = weft_gather(cx, offsets, weft__value_strong(cx, weft_const_i64(cx, d)), 0);
        weft_value *idx = weft_add(cx, weft_range(cx, WEFT_I64, 0, size[d], 1), at);
        out = weft_gather(cx, out, idx, d);
    }
    return WEFT__KEEP(out);
}
