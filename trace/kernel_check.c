/* check_numerics and assert: in[0] copied through in chunks over the
 * workers, each chunk noting what it saw (a NaN, an inf, a false
 * condition), the failure reported once by the node's thread, in the
 * chunks' order. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

enum { SAW_NAN = 1, SAW_INF = 2, SAW_FALSE = 4 };

typedef struct check_job {
    const weft_tensor *x, *cond;
    weft_tensor *out;
    size_t chunks;
    unsigned char *saw;       /* per chunk: SAW_* bits */
} check_job;

static unsigned scan_floats(const weft_tensor *x, int64_t b, int64_t e)
{
    unsigned saw = 0;
    if (x->dtype == WEFT_F32) {
        const float *v = weft_tensor_data(x);
        for (int64_t i = b; i < e; i++)
            if (!isfinite(v[i]))
                saw |= isnan(v[i]) ? SAW_NAN : SAW_INF;
    } else {
        const double *v = weft_tensor_data(x);
        for (int64_t i = b; i < e; i++)
            if (!isfinite(v[i]))
                saw |= isnan(v[i]) ? SAW_NAN : SAW_INF;
    }
    return saw;
}

static unsigned scan_condition(const weft_tensor *cond, int64_t b, int64_t e)
{
    const unsigned char *v = weft_tensor_data(cond);
    for (int64_t i = b; i < e; i++)
        if (!v[i])
            return SAW_FALSE;
    return 0;
}

static int check_chunk(size_t cb, size_t ce, void *ctx)
{
    check_job *j = ctx;
    size_t elem = weft_dtype_size(j->x->dtype);
    for (size_t c = cb; c < ce; c++) {
        int64_t b = (int64_t)weft__chunk_begin((uint64_t)j->x->numel, j->chunks, c);
        int64_t e = (int64_t)weft__chunk_begin((uint64_t)j->x->numel, j->chunks, c + 1);
        if (e > b)
            memcpy((char *)weft__tensor_mut(j->out) + (size_t)b * elem,
                   (const char *)weft_tensor_data(j->x) + (size_t)b * elem,
                   (size_t)(e - b) * elem);
        if (!j->cond) {
            j->saw[c] = (unsigned char)scan_floats(j->x, b, e);
        } else {
            /* The condition has its own size: chunk c reads its share. */
            int64_t cbeg = (int64_t)weft__chunk_begin((uint64_t)j->cond->numel, j->chunks, c);
            int64_t cend = (int64_t)weft__chunk_begin((uint64_t)j->cond->numel, j->chunks, c + 1);
            j->saw[c] = (unsigned char)scan_condition(j->cond, cbeg, cend);
        }
    }
    return 0;
}

static int report(const weft__node *n, unsigned saw)
{
    const char *message = n->attr.check.message;
    if (n->op == WEFT__OP_ASSERT)
        return weft__errorf(WEFT_EINVAL, "weft_check: %s", message);
    const char *what = (saw & SAW_NAN) && (saw & SAW_INF) ? "Inf and NaN"
                       : saw & SAW_NAN ? "NaN" : "Inf";
    return weft__errorf(WEFT_EINVAL, "weft_check_numerics: %s : Tensor had %s values", message,
                        what);
}

int weft__eval_check(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                     weft_tensor *out)
{
    check_job j = { .x = in[0], .cond = n->op == WEFT__OP_ASSERT ? in[1] : NULL, .out = out };
    int64_t work = j.x->numel + (j.cond ? j.cond->numel : 0);
    j.chunks = weft__chunk_count(rt, (uint64_t)work);
    unsigned char one;
    j.saw = j.chunks == 1 ? &one : weft__malloc(j.chunks);
    if (!j.saw)
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
    int rc = weft__run_chunks(rt, j.chunks, check_chunk, &j);
    unsigned saw = 0;
    for (size_t c = 0; c < j.chunks; c++)
        saw |= j.saw[c];
    if (j.saw != &one)
        weft__free(j.saw);
    if (rc == 0 && saw)
        rc = report(n, saw);
    return rc;
}

int weft__infer_check(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    char s[WEFT__SPEC_STR_MAX];
    if (n->op == WEFT__OP_CHECK_NUMERICS && in[0].dtype != WEFT_F32 && in[0].dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "weft_check_numerics: x %s is not f32 or f64",
                            weft__spec_str(&in[0], s, sizeof s));
    if (n->op == WEFT__OP_ASSERT && in[1].dtype != WEFT_BOOL)
        return weft__errorf(WEFT_EDTYPE, "weft_check: the condition %s is not bool",
                            weft__spec_str(&in[1], s, sizeof s));
    *out = in[0];
    return 0;
}
