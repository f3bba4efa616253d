/* Signatures: the canonical byte encoding of a call's argument keys, its
 * XXH3 hash, text forms, and spec matching. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
/* Inlined: short keys hash in a few nanoseconds, without a call into the
 * library's generic entry point (same algorithm, same values). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/internal.h"

/* 0: off.  Tests force every hash equal to exercise the encoding compare. */
static uint64_t forced_hash;  /* (atomic) */

void weft__cache_force_hash(uint64_t h)
{
    __atomic_store_n(&forced_hash, h, __ATOMIC_RELAXED);
}

uint64_t weft__cache_hash(const uint8_t *key, size_t len)
{
    uint64_t forced = __atomic_load_n(&forced_hash, __ATOMIC_RELAXED);
    if (forced)
        return forced;
    return XXH3_64bits(key, len);
}

static const char *dtype_str(weft_dtype dt)
{
    switch (dt) {
    case WEFT_BOOL: return "bool";
    case WEFT_I32: return "i32";
    case WEFT_I64: return "i64";
    case WEFT_F32: return "f32";
    case WEFT_F64: return "f64";
    }
    return "?dtype";
}

int weft__cache_spec_str(const weft_spec *s, char *buf, size_t size)
{
    size_t n = 0;
    int w = snprintf(buf, size, "%s[", dtype_str(s->dtype));
    if (w < 0)
        return w;
    n = (size_t)w;
    if (s->rank == WEFT_RANK_ANY) {
        w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "*");
        n += (size_t)(w > 0 ? w : 0);
    }
    for (int d = 0; d < s->rank && d < WEFT_MAX_RANK; d++) {
        if (s->dims[d] == WEFT_DIM_ANY)
            w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "%s?", d ? "," : "");
        else
            w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "%s%" PRId64,
                         d ? "," : "", s->dims[d]);
        n += (size_t)(w > 0 ? w : 0);
    }
    w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "]");
    n += (size_t)(w > 0 ? w : 0);
    return (int)n;
}

int weft__cache_targ_str(const weft__targ *a, char *buf, size_t size)
{
    switch (a->kind) {
    case WEFT_ARG_TENSOR: return weft__cache_spec_str(&a->spec, buf, size);
    case WEFT_ARG_I64: return snprintf(buf, size, "i64=%" PRId64, a->i64);
    case WEFT_ARG_F64: {
        char v[WEFT__FMT_MAX];
        weft__fmt_f64(a->f64, v, sizeof v);
        return snprintf(buf, size, "f64=%s", v);
    }
    }
    return snprintf(buf, size, "?");
}

/* One word in host byte order: keys live in this process only. */
static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
    return p + sizeof v;
}

/* An argument's header word: kind, then for tensors dtype and rank + 1
 * (WEFT_RANK_ANY encodes as 0). */
static uint64_t head(weft_arg_kind kind, unsigned dtype, int rank)
{
    return (uint64_t)(uint8_t)kind | (uint64_t)(uint8_t)dtype << 8 | (uint64_t)(uint8_t)(rank + 1) << 16;
}

size_t weft__cache_key_bound(size_t n)
{
    return WEFT__KEY_BOUND(n);
}

size_t weft__cache_encode(const weft__targ *targs, size_t n, uint8_t *buf)
{
    uint8_t *p = put_u64(buf, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        const weft__targ *a = &targs[i];
        if (a->kind == WEFT_ARG_TENSOR) {
            p = put_u64(p, head(a->kind, (unsigned)a->spec.dtype, a->spec.rank));
            for (int d = 0; d < a->spec.rank; d++)
                p = put_u64(p, (uint64_t)a->spec.dims[d]);
        } else if (a->kind == WEFT_ARG_I64) {
            p = put_u64(p, head(a->kind, 0, -1));
            p = put_u64(p, (uint64_t)a->i64);
        } else {
            /* Keyed by bit pattern (so -0.0 and 0.0 differ, as they may
             * trace differently), every NaN the same. */
            p = put_u64(p, head(a->kind, 0, -1));
            double v = isnan(a->f64) ? NAN : a->f64;
            uint64_t bits;
            memcpy(&bits, &v, sizeof bits);
            p = put_u64(p, bits);
        }
    }
    return (size_t)(p - buf);
}

size_t weft__cache_encode_args(const weft_arg *args, size_t n, uint8_t *buf)
{
    uint8_t *p = put_u64(buf, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        const weft_arg *a = &args[i];
        if (a->kind == WEFT_ARG_TENSOR) {
            const weft_tensor *t = a->u.tensor;
            int rank = weft_tensor_rank(t);
            const int64_t *dims = weft_tensor_dims(t);
            p = put_u64(p, head(a->kind, (unsigned)weft_tensor_dtype(t), rank));
            for (int d = 0; d < rank && d < WEFT_MAX_RANK; d++)
                p = put_u64(p, (uint64_t)dims[d]);
        } else if (a->kind == WEFT_ARG_I64) {
            p = put_u64(p, head(a->kind, 0, -1));
            p = put_u64(p, (uint64_t)a->u.i64);
        } else {
            p = put_u64(p, head(a->kind, 0, -1));
            double v = isnan(a->u.f64) ? NAN : a->u.f64;  /* as weft__cache_encode */
            uint64_t bits;
            memcpy(&bits, &v, sizeof bits);
            p = put_u64(p, bits);
        }
    }
    return (size_t)(p - buf);
}

bool weft__cache_spec_fits(const weft_spec *want, const weft_spec *got)
{
    if (want->dtype != got->dtype)
        return false;
    if (want->rank == WEFT_RANK_ANY)
        return true;
    if (want->rank != got->rank)
        return false;
    for (int d = 0; d < want->rank; d++)
        if (want->dims[d] != WEFT_DIM_ANY && want->dims[d] != got->dims[d])
            return false;
    return true;
}

bool weft__cache_targ_fits(const weft__targ *cached, const weft__targ *a)
{
    if (cached->kind != a->kind)
        return false;
    switch (a->kind) {
    case WEFT_ARG_TENSOR: return weft__cache_spec_fits(&cached->spec, &a->spec);
    case WEFT_ARG_I64: return cached->i64 == a->i64;
    case WEFT_ARG_F64: {
        uint64_t x, y;
        double cv = isnan(cached->f64) ? NAN : cached->f64, av = isnan(a->f64) ? NAN : a->f64;
        memcpy(&x, &cv, sizeof x);
        memcpy(&y, &av, sizeof y);
        return x == y;
    }
    }
    return false;
}

int weft__cache_check_spec(const char *fn, size_t i, const weft_spec *s)
{
    if ((unsigned)s->dtype > WEFT_F64)
        return weft__errorf(WEFT_EINVAL, "%s: spec %zu: unknown dtype %d", fn, i, (int)s->dtype);
    if (s->rank < WEFT_RANK_ANY || s->rank > WEFT_MAX_RANK)
        return weft__errorf(WEFT_EINVAL, "%s: spec %zu: rank %d is not in -1..%d", fn, i, s->rank,
                            WEFT_MAX_RANK);
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < WEFT_DIM_ANY)
            return weft__errorf(WEFT_EINVAL, "%s: spec %zu: dim %d is negative (%" PRId64 ")", fn,
                                i, d, s->dims[d]);
    return 0;
}
