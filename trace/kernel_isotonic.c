/* isotonic_regression: TensorFlow's IsotonicRegression CPU kernel, the
 * pool-adjacent-violators algorithm for the decreasing problem
 * min ||x - y||^2 subject to y_1 >= y_2 >= ... along an axis.
 *
 * Each element starts a pool of its own; while the newest pool's mean is
 * above the one before it (strictly), the two merge (their sums added in
 * the dtype, the mean the sum over the count, as TensorFlow's float
 * arithmetic).  Every element then takes its pool's mean (kind 0) or its
 * pool's index from 0 (kind 1, i32).  The problems (each line along the
 * axis) are cut among the workers. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct iso_job {
    const weft_tensor *x;
    weft_tensor *out;
    int64_t outer, n, inner;
    bool segments;
    size_t chunks;
} iso_job;

/* One problem of dtype T at stride `inner` from base: its pools in
 * start/sum/mean (n entries each, scratch), then the result. */
#define PAVA_FN(NAME, T)                                                                     \
    static void NAME(const iso_job *j, int64_t base, int64_t *start, T *sum, T *mean)       \
    {                                                                                        \
        const T *x = (const T *)weft_tensor_data(j->x) + base;                               \
        int64_t pools = 0, inner = j->inner, n = j->n;                                       \
        for (int64_t k = 0; k < n; k++) {                                                    \
            start[pools] = k;                                                                \
            sum[pools] = mean[pools] = x[k * inner];                                         \
            pools++;                                                                         \
            while (pools > 1 && mean[pools - 1] > mean[pools - 2]) {                         \
                sum[pools - 2] += sum[pools - 1];                                            \
                mean[pools - 2] = sum[pools - 2] / (T)(k + 1 - start[pools - 2]);            \
                pools--;                                                                     \
            }                                                                                \
        }                                                                                    \
        for (int64_t p = 0; p < pools; p++) {                                                \
            int64_t end = p + 1 < pools ? start[p + 1] : n;                                  \
            for (int64_t k = start[p]; k < end; k++) {                                       \
                if (j->segments)                                                             \
                    ((int32_t *)weft__tensor_mut(j->out))[base + k * inner] = (int32_t)p;   \
                else                                                                         \
                    ((T *)weft__tensor_mut(j->out))[base + k * inner] = mean[p];            \
            }                                                                                \
        }                                                                                    \
    }

PAVA_FN(pava_f32, float)
PAVA_FN(pava_f64, double)

static int iso_chunk(size_t cb, size_t ce, void *ctx)
{
    const iso_job *j = ctx;
    size_t n = (size_t)(j->n ? j->n : 1);
    int64_t *start = weft__malloc(sizeof *start * n);
    double *scratch = weft__malloc(sizeof *scratch * 2 * n);
    int rc = 0;
    if (!start || !scratch) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_isotonic_regression: out of memory for a line of "
                          "%lld", (long long)j->n);
        goto done;
    }
    uint64_t problems = (uint64_t)(j->outer * j->inner);
    for (size_t c = cb; c < ce; c++) {
        uint64_t p0 = weft__chunk_begin(problems, j->chunks, c);
        uint64_t p1 = weft__chunk_begin(problems, j->chunks, c + 1);
        for (uint64_t p = p0; p < p1; p++) {
            int64_t o = (int64_t)p / j->inner, i = (int64_t)p % j->inner;
            int64_t base = o * j->n * j->inner + i;
            if (j->x->dtype == WEFT_F32)
                pava_f32(j, base, start, (float *)scratch, (float *)scratch + n);
            else
                pava_f64(j, base, start, scratch, scratch + n);
        }
    }
done:
    weft__free(start);
    weft__free(scratch);
    return rc;
}

int weft__eval_isotonic(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                        weft_tensor *out)
{
    int axis = n->attr.index.axis;
    iso_job j = { .x = x, .out = out, .outer = 1, .n = x->dims[axis], .inner = 1,
                  .segments = n->attr.index.kind == 1 };
    for (int d = 0; d < axis; d++)
        j.outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        j.inner *= x->dims[d];
    if (out->numel == 0)
        return 0;
    uint64_t problems = (uint64_t)(j.outer * j.inner);
    j.chunks = weft__chunk_count_of(rt, (uint64_t)out->numel * 4, problems);
    return weft__run_chunks(rt, j.chunks, iso_chunk, &j);
}

int weft__infer_isotonic(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    char s[WEFT__SPEC_STR_MAX];
    if (in->dtype != WEFT_F32 && in->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "weft_isotonic_regression: %s is not f32 or f64",
                            weft__spec_str(in, s, sizeof s));
    if (in->rank == WEFT_RANK_ANY || n->attr.index.axis < 0 || n->attr.index.axis >= in->rank)
        return weft__errorf(WEFT_ESHAPE, "weft_isotonic_regression: %s has no axis %d (its "
                            "rank known while tracing)", weft__spec_str(in, s, sizeof s),
                            n->attr.index.axis);
    *out = *in;
    if (n->attr.index.kind == 1)
        out->dtype = WEFT_I32;
    return 0;
}
