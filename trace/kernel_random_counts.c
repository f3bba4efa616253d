/* random_gamma, random_poisson and random_binomial:
 * tf.random.stateless_gamma's, stateless_poisson's and
 * stateless_binomial's draws, each element by rejection from its own
 * parameters (in[1] and binomial's in[2], f64, of the result's shape).
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
 * the count.  Binomial(n, p): TensorFlow's kernel's steps, by the
 * waiting times of a geometric inversion below n p = 10 and Hormann's
 * BTRS ("The generation of binomial random variates", 1993) from there,
 * drawing Binomial(n, 1 - p) and returning n minus it for p > 1/2; 0 for
 * n <= 0 or p <= 0, n for p >= 1, NaN for a NaN n or p. */
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
    const double *param;          /* alpha, lam or n, one per element */
    const double *prob;           /* binomial: p, one per element */
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

/* Stirling's approximation's error at k: a table to 9, then its series. */
static double stirling_tail(double k)
{
    static const double tail[10] = {
        0.0810614667953272,  0.0413406959554092,  0.0276779256849983, 0.02079067210376509,
        0.0166446911898211,  0.0138761288230707,  0.0118967099458917, 0.0104112652619720,
        0.00925546218271273, 0.00833056343336287,
    };
    if (k <= 9)
        return tail[(int)k];
    double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

/* Successes as the number of geometric waiting times that fit in n. */
static double binomial_inversion(element_stream *s, double n, double p)
{
    double log_q = log1p(-p), sum = 0, k = 0;
    for (;;) {
        double u[2];
        sub_draw(s, u);
        for (int t = 0; t < 2; t++) {
            sum += ceil(log(u[t]) / log_q);
            if (sum > n)
                return k;
            k++;
        }
    }
}

/* BTRS for n p >= 10 and p <= 1/2. */
static double binomial_btrs(element_stream *s, double n, double p)
{
    double sd = sqrt(n * p * (1 - p)), b = 1.15 + 2.53 * sd;
    double a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5, v_r = 0.92 - 4.2 / b;
    double r = p / (1 - p), alpha = (2.83 + 5.1 / b) * sd, m = floor((n + 1) * p);
    for (;;) {
        double uv[2];
        sub_draw(s, uv);
        double u = uv[0] - 0.5, v = uv[1], us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + c);
        if (us >= 0.07 && v <= v_r)
            return k;
        if (k < 0 || k > n)
            continue;
        v = log(v * alpha / (a / (us * us) + b));
        double bound = (m + 0.5) * log((m + 1) / (r * (n - m + 1))) +
                       (n + 1) * log((n - m + 1) / (n - k + 1)) +
                       (k + 0.5) * log(r * (n - k + 1) / (k + 1)) + stirling_tail(m) +
                       stirling_tail(n - m) - stirling_tail(k) - stirling_tail(n - k);
        if (v <= bound)
            return k;
    }
}

static double binomial_draw(element_stream *s, double n, double p)
{
    if (isnan(n) || isnan(p))
        return NAN;
    if (n <= 0 || p <= 0)
        return 0;
    if (p >= 1)
        return n;
    if (p > 0.5)
        return n - binomial_draw(s, n, 1 - p);
    return n * p < 10 ? binomial_inversion(s, n, p) : binomial_btrs(s, n, p);
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
    weft__op op = j->n->op;
    uint64_t b = weft__chunk_begin((uint64_t)j->numel, j->chunks, cb);
    uint64_t e = weft__chunk_begin((uint64_t)j->numel, j->chunks, ce);
    for (uint64_t i = b; i < e; i++) {
        element_stream s = { j, i, 0 };
        double p = j->param[i];
        store(j, (int64_t)i, op == WEFT__OP_RANDOM_GAMMA     ? gamma_draw(&s, p)
                             : op == WEFT__OP_RANDOM_POISSON ? poisson_draw(&s, p)
                                                             : binomial_draw(&s, p, j->prob[i]));
    }
    return 0;
}

int weft__eval_random_counts(weft_runtime *rt, const weft__node *n, const weft_tensor *seed,
                             const weft_tensor *param, const weft_tensor *param2,
                             weft_tensor *out)
{
    counts_job j;
    memset(&j, 0, sizeof j);
    int rc = weft__random_key(n, seed, j.key, j.stream);
    if (rc)
        return rc;
    j.n = n;
    j.param = weft_tensor_data(param);
    j.prob = param2 ? weft_tensor_data(param2) : NULL;
    j.out = weft__tensor_mut(out);
    j.numel = out->numel;
    if (j.numel == 0)
        return 0;
    /* A draw costs a few Philox blocks and logarithms. */
    j.chunks = weft__chunk_count(rt, (uint64_t)j.numel * 64);
    return weft__run_chunks(rt, j.chunks, counts_chunk, &j);
}
