/* random_gamma and random_poisson: tf.random.stateless_gamma's and
 * stateless_poisson's draws, each element by rejection from its own
 * parameter (in[1], f64, of the result's shape).
 *
 * Element i's uniforms are a function of the seed and i alone, as the
 * other draws': its sub-draw j is the Philox4x32-10 block of the counter
 * (i, seed[1]) under the key seed[0] moved by j times two odd constants,
 * two f64 uniforms of 53 bits each.  An element takes as many sub-draws
 * as its rejections need, so the result does not depend on the chunks.
 *
 * Gamma(alpha) (rate 1): Marsaglia and Tsang's method ("A simple method
 * for generating gamma variables", ACM TOMS 26(3), 2000), a normal from
 * one sub-draw (Box-Muller) and the acceptance uniform from the next;
 * below alpha = 1, Gamma(alpha + 1) times u^(1 / alpha).  NaN for alpha
 * not in (0, inf).  Poisson(lam): Knuth's product of uniforms below lam =
 * 10, Hormann's transformed rejection (PTRS, "The transformed rejection
 * method for generating Poisson random variables", 1993) from there, as
 * TensorFlow's CPU kernel; NaN (-1 in an integer dtype) for lam < 0 or
 * NaN, the dtype's largest value for an integer dtype that cannot hold
 * the count. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

typedef struct counts_job {
    const weft__node *n;
    uint32_t key[2], stream[2];   /* from the seed */
    const double *param;          /* alpha or lam, one per element */
    void *out;
    int64_t numel;
    size_t chunks;
} counts_job;

/* The uniforms of element i, one sub-draw at a time. */
typedef struct element_stream {
    const counts_job *j;
    uint64_t i;
    uint32_t next;   /* the next sub-draw */
} element_stream;

/* Two uniforms in (0, 1] (a logarithm's argument is never 0). */
static void sub_draw(element_stream *s, double u[2])
{
    const counts_job *j = s->j;
    uint32_t ctr[4] = { (uint32_t)s->i, (uint32_t)(s->i >> 32), j->stream[0], j->stream[1] };
    uint32_t key[2] = { j->key[0] + s->next * 0x9E3779B9u, j->key[1] + s->next * 0x7F4A7C15u };
    uint32_t r[4];
    weft__philox4x32_10(ctr, key, r);
    s->next++;
    for (int t = 0; t < 2; t++) {
        uint64_t w = (uint64_t)r[2 * t] << 32 | r[2 * t + 1];
        u[t] = (double)((w >> 11) + 1) * 0x1p-53;
    }
}

static double gamma_draw(element_stream *s, double alpha)
{
    if (!(alpha > 0) || isinf(alpha))
        return NAN;
    /* Below 1, Gamma(alpha + 1) u^(1 / alpha); the boost's uniform comes
     * from the first sub-draw's spare. */
    double boost = 1;
    if (alpha < 1) {
        double u[2];
        sub_draw(s, u);
        boost = pow(u[0], 1 / alpha);
        alpha += 1;
    }
    double d = alpha - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double a[2], b[2];
        sub_draw(s, a);
        sub_draw(s, b);
        double z = sqrt(-2 * log(a[0])) * cos(6.283185307179586 * a[1]);
        double v = 1 + c * z;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = b[0], z2 = z * z;
        if (u < 1 - 0.0331 * z2 * z2 || log(u) < 0.5 * z2 + d * (1 - v + log(v)))
            return d * v * boost;
    }
}

/* Knuth: the number of uniforms whose running product stays above
 * e^-lam. */
static double poisson_small(element_stream *s, double lam)
{
    double limit = exp(-lam), prod = 1, k = 0;
    for (;;) {
        double u[2];
        sub_draw(s, u);
        for (int t = 0; t < 2; t++) {
            prod *= u[t];
            if (prod <= limit)
                return k;
            k++;
        }
    }
}

/* PTRS, Hormann's constants for lam >= 10. */
static double poisson_ptrs(element_stream *s, double lam)
{
    double slam = sqrt(lam), loglam = log(lam);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u[2];
        sub_draw(s, u);
        double x = u[0] - 0.5, v = u[1];
        double us = 0.5 - fabs(x);
        double k = floor((2 * a / us + b) * x + lam + 0.43);
        if (us >= 0.07 && v <= vr)
            return k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        int sign;
        if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <=
            -lam + k * loglam - lgamma_r(k + 1, &sign))
            return k;
    }
}

static double poisson_draw(element_stream *s, double lam)
{
    if (!(lam >= 0))
        return NAN;
    if (isinf(lam))
        return INFINITY;
    if (lam == 0)
        return 0;
    return lam < 10 ? poisson_small(s, lam) : poisson_ptrs(s, lam);
}

static void store(const counts_job *j, int64_t i, double v)
{
    switch (j->n->attr.random.dtype) {
    case WEFT_F32: ((float *)j->out)[i] = (float)v; break;
    case WEFT_F64: ((double *)j->out)[i] = v; break;
    case WEFT_I32:
        ((int32_t *)j->out)[i] = isnan(v) ? -1 : v >= INT32_MAX ? INT32_MAX : (int32_t)v;
        break;
    default:
        ((int64_t *)j->out)[i] = isnan(v)                  ? -1
                                 : v >= 0x1p63             ? INT64_MAX
                                                           : (int64_t)v;
        break;
    }
}

static int counts_chunk(size_t cb, size_t ce, void *ctx)
{
    const counts_job *j = ctx;
    bool gamma = j->n->op == WEFT__OP_RANDOM_GAMMA;
    uint64_t b = weft__chunk_begin((uint64_t)j->numel, j->chunks, cb);
    uint64_t e = weft__chunk_begin((uint64_t)j->numel, j->chunks, ce);
    for (uint64_t i = b; i < e; i++) {
        element_stream s = { j, i, 0 };
        double p = j->param[i];
        store(j, (int64_t)i, gamma ? gamma_draw(&s, p) : poisson_draw(&s, p));
    }
    return 0;
}

int weft__eval_random_counts(weft_runtime *rt, const weft__node *n, const weft_tensor *seed,
                             const weft_tensor *param, weft_tensor *out)
{
    counts_job j;
    memset(&j, 0, sizeof j);
    int rc = weft__random_key(n, seed, j.key, j.stream);
    if (rc)
        return rc;
    j.n = n;
    j.param = weft_tensor_data(param);
    j.out = weft__tensor_mut(out);
    j.numel = out->numel;
    if (j.numel == 0)
        return 0;
    /* A draw costs a few Philox blocks and logarithms. */
    j.chunks = weft__chunk_count(rt, (uint64_t)j.numel * 64);
    return weft__run_chunks(rt, j.chunks, counts_chunk, &j);
}
