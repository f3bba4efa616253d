/* log_uniform_candidate_sampler and uniform_candidate_sampler
 * (tf.random.*): TensorFlow's LogUniformSampler and UniformSampler drawn
 * from weft's random stream.  Draw i takes element i of
 * weft_random_uniform's f64 stream u under the seed; log-uniform gives
 * floor(exp(u log(range + 1))) - 1 modulo range, so class k comes with
 * probability log((k + 2) / (k + 1)) / log(range + 1) (Zipf's law over
 * the classes by frequency rank); uniform gives floor(u range).  Unique
 * sampling draws until num_sampled distinct classes came, counting the
 * draws.  The node's
 * result is i64 [num_sampled + 1]: the classes in the order drawn, then
 * the number of draws, from which the composition computes the expected
 * counts (trace/ops_sampled.c).  One task: the draws are sequential. */
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
    return n->attr.sampler.uniform ? "weft_uniform_candidate_sampler"
                                   : "weft_log_uniform_candidate_sampler";
}

int weft__eval_candidates(const weft__node *n, const weft_tensor *seed, weft_tensor *out)
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
        int64_t v = n->attr.sampler.uniform ? (int64_t)(x * (double)range)
                                            : ((int64_t)exp(x * log_range) - 1) % range;
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
    memset(out, 0, sizeof *out);
    out->dtype = WEFT_I64;
    out->rank = 1;
    out->dims[0] = n->attr.sampler.num_sampled + 1;
    return 0;
}
