/* log_uniform_candidate_sampler, uniform_candidate_sampler and
 * fixed_unigram_candidate_sampler (tf.random.*): TensorFlow's
 * LogUniformSampler, UniformSampler and FixedUnigramSampler drawn from
 * weft's random stream.  Draw i takes element i of
 * weft_random_uniform's f64 stream u under the seed; log-uniform gives
 * floor(exp(u log(range + 1))) - 1 modulo range, so class k comes with
 * probability log((k + 2) / (k + 1)) / log(range + 1) (Zipf's law over
 * the classes by frequency rank); uniform gives floor(u range); the
 * unigram law (UNIGRAM_CANDIDATES, in[1] the cumulative weights) the
 * first class whose cumulative weight passes u times the total.  Unique
 * sampling draws until num_sampled distinct classes came, counting the
 * draws.  The node's result is i64 [num_sampled + 1]: the classes in the
 * order drawn, then the number of draws, from which the composition
 * computes the expected counts (trace/ops_sampled.c).  One task: the draws are sequential. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* An open-addressing set of classes (-1: empty), twice the room needed. */
typedef struct class_set {
    int64_t *slot;
    uint64_t mask;
} class_set;

static bool set_insert(class_set *s, int64_t v)
{
    uint64_t h = (uint64_t)v * 0x9E3779B97F4A7C15u;
    for (uint64_t i = h >> 32;; i++) {
        int64_t *at = &s->slot[i & s->mask];
        if (*at == v)
            return false;
        if (*at < 0) {
            *at = v;
            return true;
        }
    }
}

/* The public op a node stands for, for messages. */
static const char *sampler_fn(const weft__node *n)
{
    if (n->op == WEFT__OP_UNIGRAM_CANDIDATES)
        return "weft_fixed_unigram_candidate_sampler";
    return n->attr.sampler.uniform ? "weft_uniform_candidate_sampler"
                                   : "weft_log_uniform_candidate_sampler";
}

/* The class of cumulative weights cum[0..range) that draw x in [0, 1)
 * falls in: the first whose sum passes x times the total (a class of no
 * weight is never drawn). */
static int64_t table_class(const double *cum, int64_t range, double x)
{
    double at = x * cum[range - 1];
    int64_t lo = 0, hi = range - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > at)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The class of draw x by the node's law. */
static int64_t class_of(const weft__node *n, const double *cum, double x, double log_range)
{
    int64_t range = n->attr.sampler.range_max;
    if (cum)
        return table_class(cum, range, x);
    if (n->attr.sampler.uniform)
        return (int64_t)(x * (double)range);
    return ((int64_t)exp(x * log_range) - 1) % range;
}

int weft__eval_candidates(const weft__node *n, const weft_tensor *seed, const weft_tensor *cum,
                          weft_tensor *out)
{
    uint32_t key[2], stream[2];
    int rc = weft__random_key(n, seed, key, stream);
    if (rc)
        return rc;
    int64_t *o = weft__tensor_mut(out), want = n->attr.sampler.num_sampled;
    int64_t range = n->attr.sampler.range_max;
    double log_range = log1p((double)range);
    class_set set = { NULL, 0 };
    if (n->attr.sampler.unique) {
        uint64_t room = 4;
        while (room < 2 * (uint64_t)want)
            room *= 2;
        set.slot = weft__malloc(room * sizeof *set.slot);
        if (!set.slot)
            return weft__errorf(WEFT_ENOMEM, "%s: out of memory", sampler_fn(n));
        memset(set.slot, 0xff, room * sizeof *set.slot);
        set.mask = room - 1;
    }
    int64_t picked = 0, tries = 0;
    double u[2];
    const double *table = cum ? weft_tensor_data(cum) : NULL;
    while (picked < want) {
        if (tries == INT32_MAX) {   /* TensorFlow's bound too */
            weft__free(set.slot);
            return weft__errorf(WEFT_EINVAL, "%s: %lld unique classes of %lld not drawn in "
                                "%d tries", sampler_fn(n), (long long)want,
                                (long long)range, INT32_MAX);
        }
        if (tries % 2 == 0)
            weft__random_f64_block(key, stream, (uint64_t)tries / 2, u);
        double x = u[tries % 2];
        int64_t v = class_of(n, table, x, log_range);
        tries++;
        if (!set.slot || set_insert(&set, v))
            o[picked++] = v;
    }
    o[want] = tries;
    weft__free(set.slot);
    return 0;
}

int weft__infer_candidates(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int rc = weft__check_seed(sampler_fn(n), &in[0]);
    if (rc)
        return rc;
    if (n->op == WEFT__OP_UNIGRAM_CANDIDATES &&
        (in[1].dtype != WEFT_F64 || in[1].rank != 1 || in[1].dims[0] != n->attr.sampler.range_max))
        return weft__errorf(WEFT_EINVAL, "%s: the cumulative weights are not f64 [range_max]",
                            sampler_fn(n));
    memset(out, 0, sizeof *out);
    out->dtype = WEFT_I64;
    out->rank = 1;
    out->dims[0] = n->attr.sampler.num_sampled + 1;
    return 0;
}
