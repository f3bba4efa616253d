/* Seeds made from seeds and a permutation of a seed
 * (tf.random.experimental.stateless_split, stateless_fold_in and
 * index_shuffle): split and fold_in are TensorFlow's compositions of the
 * full-range integer draw; index_shuffle is one RANDOM_INDEX_SHUFFLE node
 * (trace/kernel_index_shuffle.c). */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* TensorFlow's split: a [num, 2] full-range draw of the seed's dtype. */
weft_value *weft_random_split(weft_ctx *cx, weft_value *seed, int64_t num)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_split";
    if (!weft__op_enter(cx, fn, &seed, 1) || !weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    if (num < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: num %lld is negative", fn, (long long)num);
    const int64_t dims[2] = { num, 2 };
    return WEFT__KEEP(weft_random_uniform_full_int(cx, seed, weft__value_spec(seed)->dtype, 2,
                                                   dims));
}

/* TensorFlow's fold_in: [a full-range scalar draw of data's dtype, data]. */
weft_value *weft_random_fold_in(weft_ctx *cx, weft_value *seed, weft_value *data)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_fold_in";
    weft_value *in[2] = { seed, data };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_seed_ok(cx, fn, seed))
        return NULL;
    const weft_spec *d = weft__value_spec(data);
    char s[WEFT__SPEC_STR_MAX];
    if (d->dtype != WEFT_I32 && d->dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: data %s is not i32 or i64", fn,
                              weft__spec_str(d, s, sizeof s));
    if (d->rank != 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: data %s is not a scalar (known while "
                              "tracing)", fn, weft__spec_str(d, s, sizeof s));
    weft_value *pair[2] = { weft_random_uniform_full_int(cx, seed, d->dtype, 0, NULL), data };
    return WEFT__KEEP(weft_stack(cx, pair, 2, 0));
}

weft_value *weft_random_index_shuffle(weft_ctx *cx, weft_value *index, weft_value *seed,
                                      weft_value *max_index)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_random_index_shuffle";
    weft_value *in[3] = { seed, index, max_index };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    weft__node n = { .op = WEFT__OP_INDEX_SHUFFLE };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 3));
}
