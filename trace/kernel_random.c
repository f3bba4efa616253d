/* The stateless random ops: random_uniform and random_normal.
 *
 * Element i of a result is a function of the seed and i alone: the
 * Philox4x32-10 block of the counter (i, seed[1]) under the key seed[0]
 * (a scalar seed s is the pair (s, 0)).  So a result is the same bits on
 * any worker count, eagerly and traced, and chunks need no state. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

static inline uint32_t mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

void weft__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo32(0xD2511F53u, c0, &hi0);
        uint32_t lo1 = mulhilo32(0xCD9E8D57u, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

typedef struct random_job {
    const weft__node *n;
    uint32_t key[2], stream[2];   /* from the seed */
    void *out;
    int64_t numel;
    size_t chunks;
} random_job;

/* The 64-bit words of element i's block. */
static inline void element_bits(const random_job *j, uint64_t i, uint64_t *x, uint64_t *y)
{
    uint32_t ctr[4] = { (uint32_t)i, (uint32_t)(i >> 32), j->stream[0], j->stream[1] };
    uint32_t r[4];
    weft__philox4x32_10(ctr, j->key, r);
    *x = (uint64_t)r[0] << 32 | r[1];
    *y = (uint64_t)r[2] << 32 | r[3];
}

/* [0, 1) with 53 random bits; (0, 1] for a logarithm's argument. */
static inline double unit53(uint64_t x)
{
    return (double)(x >> 11) * 0x1p-53;
}

static inline double unit53_open0(uint64_t x)
{
    return (double)((x >> 11) + 1) * 0x1p-53;
}

/* a + (b - a) u rounded to the dtype, kept below b: the rounding of a
 * wide range can reach it. */
static void uniform_float(const random_job *j, uint64_t b, uint64_t e)
{
    double lo = j->n->attr.random.a, hi = j->n->attr.random.b, span = hi - lo;
    if (j->n->attr.random.dtype == WEFT_F32) {
        float *out = j->out, lof = (float)lo, hif = (float)hi;
        float below = lof < hif ? nextafterf(hif, lof) : lof;
        for (uint64_t i = b; i < e; i++) {
            uint64_t x, y;
            element_bits(j, i, &x, &y);
            float v = (float)(lo + span * unit53(x));
            out[i] = v >= hif ? below : v;
        }
        return;
    }
    double *out = j->out, below = nextafter(hi, lo);
    for (uint64_t i = b; i < e; i++) {
        uint64_t x, y;
        element_bits(j, i, &x, &y);
        double v = lo + span * unit53(x);
        out[i] = v >= hi ? below : v;
    }
}

/* The high 64 bits of the 128-bit product a b (ISO C has no 128-bit
 * type). */
static inline uint64_t mul_high64(uint64_t a, uint64_t b)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* lo + floor(x span / 2^64): every value of [lo, hi) within 2^-64 of
 * uniform. */
static void uniform_int(const random_job *j, uint64_t b, uint64_t e)
{
    int64_t lo = (int64_t)j->n->attr.random.a, hi = (int64_t)j->n->attr.random.b;
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    for (uint64_t i = b; i < e; i++) {
        uint64_t x, y;
        element_bits(j, i, &x, &y);
        uint64_t off = mul_high64(x, span);
        int64_t v = (int64_t)((uint64_t)lo + off);
        if (j->n->attr.random.dtype == WEFT_I32)
            ((int32_t *)j->out)[i] = (int32_t)v;
        else
            ((int64_t *)j->out)[i] = v;
    }
}

/* Box-Muller on the block's two words (one normal per element, so that
 * element i depends on i alone). */
static void normal(const random_job *j, uint64_t b, uint64_t e)
{
    double mean = j->n->attr.random.a, stddev = j->n->attr.random.b;
    bool f32 = j->n->attr.random.dtype == WEFT_F32;
    for (uint64_t i = b; i < e; i++) {
        uint64_t x, y;
        element_bits(j, i, &x, &y);
        double z = sqrt(-2.0 * log(unit53_open0(x))) * cos(6.283185307179586 * unit53(y));
        double v = mean + stddev * z;
        if (f32)
            ((float *)j->out)[i] = (float)v;
        else
            ((double *)j->out)[i] = v;
    }
}

static int random_chunk(size_t cb, size_t ce, void *ctx)
{
    const random_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin((uint64_t)j->numel, j->chunks, c);
        uint64_t e = weft__chunk_begin((uint64_t)j->numel, j->chunks, c + 1);
        if (j->n->op == WEFT__OP_RANDOM_NORMAL)
            normal(j, b, e);
        else if (j->n->attr.random.dtype == WEFT_F32 || j->n->attr.random.dtype == WEFT_F64)
            uniform_float(j, b, e);
        else
            uniform_int(j, b, e);
    }
    return 0;
}

/* The seed's one or two values, as signed 64-bit integers. */
static int read_seed(const weft__node *n, const weft_tensor *seed, int64_t s[2])
{
    if (!((seed->rank == 0) || (seed->rank == 1 && seed->dims[0] == 2)) ||
        (seed->dtype != WEFT_I32 && seed->dtype != WEFT_I64)) {
        char ss[WEFT__SPEC_STR_MAX];
        weft_spec sp;
        weft_tensor_spec(seed, &sp);
        weft__spec_str(&sp, ss, sizeof ss);
        return weft__errorf(WEFT_EINVAL, "weft_%s: the seed %s is not an i32 or i64 scalar or "
                            "vector of two", weft__op_name(n->op), ss);
    }
    const void *p = weft_tensor_data(seed);
    for (int64_t k = 0; k < 2; k++) {
        if (k >= seed->numel)
            s[k] = 0;
        else if (seed->dtype == WEFT_I32)
            s[k] = ((const int32_t *)p)[k];
        else
            s[k] = ((const int64_t *)p)[k];
    }
    return 0;
}

int weft__eval_random(weft_runtime *rt, const weft__node *n, const weft_tensor *seed,
                      weft_tensor *out)
{
    random_job j;
    memset(&j, 0, sizeof j);
    int64_t s[2];
    int rc = read_seed(n, seed, s);
    if (rc)
        return rc;
    j.n = n;
    j.key[0] = (uint32_t)s[0];
    j.key[1] = (uint32_t)((uint64_t)s[0] >> 32);
    j.stream[0] = (uint32_t)s[1];
    j.stream[1] = (uint32_t)((uint64_t)s[1] >> 32);
    j.out = weft__tensor_mut(out);
    j.numel = out->numel;
    if (j.numel == 0)
        return 0;
    /* A block costs about as much as a few elementwise ops. */
    j.chunks = weft__chunk_count(rt, (uint64_t)j.numel * 8);
    return weft__run_chunks(rt, j.chunks, random_chunk, &j);
}
