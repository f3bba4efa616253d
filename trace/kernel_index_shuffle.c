/* random_index_shuffle (tf.random.experimental.index_shuffle): the place
 * of each index in a permutation of [0, max_index] that is a function of
 * the seed and max_index alone.
 *
 * The permutation is weft's own: a balanced Feistel network of twelve
 * rounds over the w-bit numbers (w the even number of bits that holds
 * max_index, at least 2), each round function a word of the Philox block
 * of the counter (right half, round and w) under the seed's key and
 * stream, restricted to [0, max_index] by cycle walking (applied again
 * while the result is past max_index).  A Feistel network is a bijection
 * whatever its round function, and cycle walking keeps one on the subset;
 * since 2^w < 4 (max_index + 1), an index takes at most four passes on
 * average.  Nothing is stored, so any max_index up to the dtype's
 * largest costs the same, and each element is independent of the others
 * (the same bits on any worker count, eagerly and traced). */
#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct shuffle_job {
    uint32_t key[2], stream[2];   /* from the seed */
    int half;                     /* bits in each half of the network */
    uint64_t max;
    const weft_tensor *index;
    weft_tensor *out;
    size_t chunks;
} shuffle_job;

/* Twelve rounds: with four, an index of 0..4 landed on one place 1.5
 * times as often as on another over 20000 seeds (halves of 2 bits mix
 * slowly); with eight the excess was 4 standard deviations at 60000
 * seeds, with twelve within the noise. */
enum { FEISTEL_ROUNDS = 12 };

/* One pass through the network: a bijection on [0, 2^(2 half)). */
static uint64_t feistel(const shuffle_job *j, uint64_t x)
{
    uint64_t mask = (UINT64_C(1) << j->half) - 1;
    uint64_t left = x >> j->half, right = x & mask;
    for (uint32_t round = 0; round < FEISTEL_ROUNDS; round++) {
        uint32_t ctr[4] = { (uint32_t)right, round | (uint32_t)j->half << 8, j->stream[0],
                            j->stream[1] };
        uint32_t f[4];
        weft__philox4x32_10(ctr, j->key, f);
        uint64_t next = left ^ (f[0] & mask);
        left = right;
        right = next;
    }
    return left << j->half | right;
}

/* x's place in the permutation of [0, max]: the first value of x's cycle
 * under the network, after x, that is not past max. */
static uint64_t shuffled(const shuffle_job *j, uint64_t x)
{
    do
        x = feistel(j, x);
    while (x > j->max);
    return x;
}

static int shuffle_chunk(size_t cb, size_t ce, void *ctx)
{
    const shuffle_job *j = ctx;
    int64_t n = j->index->numel;
    bool i32 = j->out->dtype == WEFT_I32;
    void *out = weft__tensor_mut(j->out);
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin((uint64_t)n, j->chunks, c),
                 e = weft__chunk_begin((uint64_t)n, j->chunks, c + 1);
        for (uint64_t i = b; i < e; i++) {
            uint64_t v = shuffled(j, (uint64_t)weft__tensor_int_at(j->index, (int64_t)i));
            if (i32)
                ((int32_t *)out)[i] = (int32_t)v;
            else
                ((int64_t *)out)[i] = (int64_t)v;
        }
    }
    return 0;
}

/* The bits of the smallest even width that holds max, at least 2. */
static int half_width(uint64_t max)
{
    int bits = 0;
    while (bits < 64 && max >> bits)
        bits++;
    return bits < 2 ? 1 : (bits + 1) / 2;
}

int weft__eval_index_shuffle(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                             weft_tensor *out)
{
    static const char fn[] = "weft_random_index_shuffle";
    shuffle_job j = { .index = in[1], .out = out };
    int rc = weft__random_key(n, in[0], j.key, j.stream);
    if (rc)
        return rc;
    if (in[2]->numel != 1)
        return weft__errorf(WEFT_ESHAPE, "%s: max_index has %lld elements, not 1", fn,
                            (long long)in[2]->numel);
    int64_t max = weft__tensor_int_at(in[2], 0);
    if (max < 0)
        return weft__errorf(WEFT_EINVAL, "%s: max_index %lld is negative", fn, (long long)max);
    for (int64_t i = 0; i < j.index->numel; i++) {
        int64_t x = weft__tensor_int_at(j.index, i);
        if (x < 0 || x > max)
            return weft__errorf(WEFT_EINVAL, "%s: index %lld (element %lld) is outside 0..%lld",
                                fn, (long long)x, (long long)i, (long long)max);
    }
    j.max = (uint64_t)max;
    j.half = half_width(j.max);
    if (j.index->numel == 0)
        return 0;
    /* Twelve Philox blocks a pass, at most four passes on average. */
    j.chunks = weft__chunk_count(rt, weft__sat_mul((uint64_t)j.index->numel, 256));
    return weft__run_chunks(rt, j.chunks, shuffle_chunk, &j);
}

int weft__infer_index_shuffle(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_random_index_shuffle";
    int rc = weft__check_seed(fn, &in[0]);
    if (rc)
        return rc;
    (void)n;
    char s[WEFT__SPEC_STR_MAX], m[WEFT__SPEC_STR_MAX];
    if ((in[1].dtype != WEFT_I32 && in[1].dtype != WEFT_I64) || in[2].dtype != in[1].dtype)
        return weft__errorf(WEFT_EDTYPE, "%s: the index %s and max_index %s are not both i32 or "
                            "both i64", fn, weft__spec_str(&in[1], s, sizeof s),
                            weft__spec_str(&in[2], m, sizeof m));
    if (in[2].rank != 0 && in[2].rank != WEFT_RANK_ANY)
        return weft__errorf(WEFT_ESHAPE, "%s: max_index %s is not a scalar", fn,
                            weft__spec_str(&in[2], m, sizeof m));
    *out = in[1];
    return 0;
}
