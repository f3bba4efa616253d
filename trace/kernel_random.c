/* The stateless random ops: random_uniform, random_normal and
 * random_truncated_normal.
 *
 * Element i of a result is a function of the seed and i alone: its part
 * of the Philox4x32-10 block of the counter (i / lanes, seed[1]) under the
 * key seed[0] (a scalar seed s is the pair (s, 0); lanes is 4 for 4-byte
 * dtypes, 2 for 8-byte ones).  So a result is the same bits on any worker
 * count, eagerly and traced, and chunks need no state. */
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

/* A block gives 128 bits: four elements of a 4-byte dtype (a 32-bit word
 * each), two of an 8-byte one (a 64-bit word each); element i takes its
 * part of block i / lanes. */
static inline void philox_block(const uint32_t key[2], const uint32_t stream[2], uint64_t blk,
                                uint32_t r[4])
{
    uint32_t ctr[4] = { (uint32_t)blk, (uint32_t)(blk >> 32), stream[0], stream[1] };
    weft__philox4x32_10(ctr, key, r);
}

static inline void block_of(const random_job *j, uint64_t blk, uint32_t r[4])
{
    philox_block(j->key, j->stream, blk, r);
}

static inline uint64_t word64(const uint32_t r[4], int t)
{
    return (uint64_t)r[2 * t] << 32 | r[2 * t + 1];
}

/* [0, 1) from 24 or 53 random bits; (0, 1] for a logarithm's argument. */
static inline double unit24(uint32_t x)
{
    return (double)(x >> 8) * 0x1p-24;
}

static inline double unit53(uint64_t x)
{
    return (double)(x >> 11) * 0x1p-53;
}

static inline double unit24_open0(uint32_t x)
{
    return (double)((x >> 8) + 1) * 0x1p-24;
}

static inline double unit53_open0(uint64_t x)
{
    return (double)((x >> 11) + 1) * 0x1p-53;
}

void weft__random_block(const uint32_t key[2], const uint32_t stream[2], uint64_t blk,
                        uint32_t r[4])
{
    philox_block(key, stream, blk, r);
}

void weft__random_f64_block(const uint32_t key[2], const uint32_t stream[2], uint64_t blk,
                            double u[2])
{
    uint32_t r[4];
    philox_block(key, stream, blk, r);
    u[0] = unit53(word64(r, 0));
    u[1] = unit53(word64(r, 1));
}

/* The high half of a product: floor(x span / 2^bits), uniform over
 * [0, span) within span / 2^bits.  ISO C has no 128-bit type. */
static inline uint64_t mul_high64(uint64_t a, uint64_t b)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Truncated at two standard deviations, as TensorFlow's: the quantile of
 * a uniform draw between the normal's CDF at -2 and at 2. */
#define CDF_MINUS_2 0.022750131948179195
#define CDF_PLUS_2 0.9772498680518208

static double truncated_normal(double u)
{
    double z = weft__ndtri(CDF_MINUS_2 + (CDF_PLUS_2 - CDF_MINUS_2) * u);
    return z < -2 ? -2 : z > 2 ? 2 : z;
}

/* Element values of one block (lanes of them) into v[]. */
static void block_values(const random_job *j, uint64_t blk, double *dv, int64_t *iv)
{
    uint32_t r[4];
    block_of(j, blk, r);
    const weft__node *n = j->n;
    double a = n->attr.random.a, b = n->attr.random.b;
    if (n->op == WEFT__OP_RANDOM_TRUNCATED_NORMAL) {
        bool f32 = n->attr.random.dtype == WEFT_F32;
        for (int t = 0; t < (f32 ? 4 : 2); t++)
            dv[t] = a + b * truncated_normal(f32 ? unit24(r[t]) : unit53(word64(r, t)));
        return;
    }
    switch (n->attr.random.dtype) {
    case WEFT_F32:
        if (n->op == WEFT__OP_RANDOM_UNIFORM) {
            for (int t = 0; t < 4; t++)
                dv[t] = a + (b - a) * unit24(r[t]);
        } else {
            /* Box-Muller: two normals from each pair of words, in float
             * (the result's precision; the double functions took twice
             * as long). */
            for (int t = 0; t < 4; t += 2) {
                float rad = sqrtf(-2.0f * logf((float)unit24_open0(r[t])));
                float ang = 6.2831855f * (float)unit24(r[t + 1]);
                dv[t] = a + b * (double)(rad * cosf(ang));
                dv[t + 1] = a + b * (double)(rad * sinf(ang));
            }
        }
        break;
    case WEFT_F64:
        if (n->op == WEFT__OP_RANDOM_UNIFORM) {
            for (int t = 0; t < 2; t++)
                dv[t] = a + (b - a) * unit53(word64(r, t));
        } else {
            double rad = sqrt(-2.0 * log(unit53_open0(word64(r, 0))));
            double ang = 6.283185307179586 * unit53(word64(r, 1));
            dv[0] = a + b * rad * cos(ang);
            dv[1] = a + b * rad * sin(ang);
        }
        break;
    case WEFT_I32: {
        /* Full range (weft_random_uniform_full_int): a span of 2^32 takes
         * each word as it is. */
        uint64_t span = (uint64_t)((int64_t)b - (int64_t)a);
        for (int t = 0; t < 4; t++)
            iv[t] = (int64_t)a + (int64_t)(((uint64_t)r[t] * span) >> 32);
        break;
    }
    default: {   /* i64 */
        /* Full range: [-2^63, 2^63), a span of 2^64 that no uint64_t
         * holds (nor does int64_t hold b), taken word for word. */
        bool every = b >= 0x1p63;
        uint64_t lo = (uint64_t)(int64_t)a, span = every ? 0 : (uint64_t)(int64_t)b - lo;
        for (int t = 0; t < 2; t++)
            iv[t] = (int64_t)(lo + (every ? word64(r, t) : mul_high64(word64(r, t), span)));
        break;
    }
    }
}

/* Whole blocks [blk0, blk1) of a uniform f32 draw: the common case, in a
 * loop of its own (through block_values it took 1.3x the time of a plain
 * C loop drawing the same numbers). */
static void uniform_f32_blocks(const random_job *j, uint64_t blk0, uint64_t blk1)
{
    double lo = j->n->attr.random.a, span = j->n->attr.random.b - lo;
    float hif = (float)j->n->attr.random.b, lof = (float)lo;
    float below = lof < hif ? nextafterf(hif, lof) : lof;
    float *out = j->out;
    for (uint64_t blk = blk0; blk < blk1; blk++) {
        uint32_t r[4];
        block_of(j, blk, r);
        for (int t = 0; t < 4; t++) {
            float v = (float)(lo + span * unit24(r[t]));
            out[blk * 4 + t] = v >= hif ? below : v;
        }
    }
}

/* Elements [b, e): whole blocks, of which the first and last may be cut
 * by the chunk's ends.  Uniform floats are rounded to the dtype and kept
 * below maxval (the rounding of a wide range can reach it). */
static void draw_range(const random_job *j, uint64_t b, uint64_t e)
{
    weft_dtype dt = j->n->attr.random.dtype;
    if (dt == WEFT_F32 && j->n->op == WEFT__OP_RANDOM_UNIFORM && e - b >= 8) {
        /* The cut blocks at either end below, the whole ones here. */
        uint64_t blk0 = (b + 3) / 4, blk1 = e / 4;
        uniform_f32_blocks(j, blk0, blk1);
        if (b < blk0 * 4)
            draw_range(j, b, blk0 * 4);
        if (blk1 * 4 < e)
            draw_range(j, blk1 * 4, e);
        return;
    }
    uint64_t lanes = weft_dtype_size(dt) == 4 ? 4 : 2;
    bool uniform = j->n->op == WEFT__OP_RANDOM_UNIFORM;
    double a = j->n->attr.random.a, hi = j->n->attr.random.b;
    float hif = (float)hi, lof = (float)a;
    float below_f = lof < hif ? nextafterf(hif, lof) : lof;
    double below_d = nextafter(hi, a);
    for (uint64_t blk = b / lanes; blk * lanes < e; blk++) {
        double dv[4];
        int64_t iv[4];
        block_values(j, blk, dv, iv);
        uint64_t first = blk * lanes < b ? b - blk * lanes : 0;
        uint64_t last = (blk + 1) * lanes > e ? e - blk * lanes : lanes;
        for (uint64_t t = first; t < last; t++) {
            uint64_t i = blk * lanes + t;
            switch (dt) {
            case WEFT_F32: {
                float v = (float)dv[t];
                ((float *)j->out)[i] = uniform && v >= hif ? below_f : v;
                break;
            }
            case WEFT_F64:
                ((double *)j->out)[i] = uniform && dv[t] >= hi ? below_d : dv[t];
                break;
            case WEFT_I32:
                ((int32_t *)j->out)[i] = (int32_t)iv[t];
                break;
            default:
                ((int64_t *)j->out)[i] = iv[t];
                break;
            }
        }
    }
}

static int random_chunk(size_t cb, size_t ce, void *ctx)
{
    const random_job *j = ctx;
    for (size_t c = cb; c < ce; c++)
        draw_range(j, weft__chunk_begin((uint64_t)j->numel, j->chunks, c),
                   weft__chunk_begin((uint64_t)j->numel, j->chunks, c + 1));
    return 0;
}

int weft__random_key(const weft__node *n, const weft_tensor *seed, uint32_t key[2],
                     uint32_t stream[2])
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
    int64_t s[2] = { 0, 0 };
    for (int64_t k = 0; k < 2 && k < seed->numel; k++)
        s[k] = weft__tensor_int_at(seed, k);
    key[0] = (uint32_t)s[0];
    key[1] = (uint32_t)((uint64_t)s[0] >> 32);
    stream[0] = (uint32_t)s[1];
    stream[1] = (uint32_t)((uint64_t)s[1] >> 32);
    return 0;
}

int weft__eval_random(weft_runtime *rt, const weft__node *n, const weft_tensor *seed,
                      weft_tensor *out)
{
    random_job j;
    memset(&j, 0, sizeof j);
    int rc = weft__random_key(n, seed, j.key, j.stream);
    if (rc)
        return rc;
    j.n = n;
    j.out = weft__tensor_mut(out);
    j.numel = out->numel;
    if (j.numel == 0)
        return 0;
    /* A block costs about as much as a few elementwise ops. */
    j.chunks = weft__chunk_count(rt, (uint64_t)j.numel * 8);
    return weft__run_chunks(rt, j.chunks, random_chunk, &j);
}
