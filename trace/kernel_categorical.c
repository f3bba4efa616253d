/* random_categorical: tf.random.stateless_categorical's draws.
 *
 * Each row of logits is a distribution over its classes, p_k proportional
 * to exp(logit_k).  The row's running sums of exp(logit_k - max) make a
 * CDF in f64; sample s of row r takes u, the f64 uniform draw of element
 * r * num_samples + s (weft_random_uniform's stream for that seed), and
 * picks the first class whose running sum exceeds u times the total, as
 * TensorFlow's CPU kernel does (a binary search).  A class of probability
 * 0 (logit -inf) is never picked.  If some logits are +inf, the row is
 * uniform over them (the limit of the distribution).  A row with a NaN
 * logit, or with every logit -inf, has no distribution: the call fails
 * with WEFT_EINVAL naming the row. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

typedef struct categorical_job {
    uint32_t key[2], stream[2];   /* from the seed */
    const void *logits;
    bool f32, i64;                /* the logits' and the result's dtypes */
    int64_t rows, classes, samples;
    double *cdf;                  /* classes per chunk */
    void *out;
    size_t chunks;
    int64_t *failed;              /* per chunk: the first row without a distribution, or -1 */
} categorical_job;

static inline double logit_at(const categorical_job *j, int64_t i)
{
    return j->f32 ? (double)((const float *)j->logits)[i] : ((const double *)j->logits)[i];
}

/* Row r's running sums into cdf; returns the index of the last class of
 * positive weight, or -1 when the row has no distribution. */
static int64_t row_cdf(const categorical_job *j, int64_t r, double *cdf)
{
    int64_t base = r * j->classes;
    double max = -INFINITY;
    for (int64_t k = 0; k < j->classes; k++) {
        double l = logit_at(j, base + k);
        if (isnan(l))
            return -1;
        max = l > max ? l : max;
    }
    if (max == -INFINITY)
        return -1;
    double total = 0;
    int64_t last = -1;
    for (int64_t k = 0; k < j->classes; k++) {
        double l = logit_at(j, base + k);
        double w = max == INFINITY ? (double)(l == INFINITY) : exp(l - max);
        total += w;
        cdf[k] = total;
        if (w > 0)
            last = k;
    }
    return last;
}

/* The first k with cdf[k] > x (n if none). */
static int64_t upper_bound(const double *cdf, int64_t n, double x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int categorical_chunk(size_t cb, size_t ce, void *ctx)
{
    const categorical_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        double *cdf = j->cdf + c * (size_t)j->classes;
        j->failed[c] = -1;
        int64_t r0 = (int64_t)weft__chunk_begin((uint64_t)j->rows, j->chunks, c);
        int64_t r1 = (int64_t)weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1);
        for (int64_t r = r0; r < r1; r++) {
            int64_t last = row_cdf(j, r, cdf);
            if (last < 0) {
                j->failed[c] = r;
                break;
            }
            double total = cdf[j->classes - 1];
            /* A Philox block holds the draws of two elements. */
            double u[2];
            uint64_t have = UINT64_MAX;
            for (int64_t s = 0; s < j->samples; s++) {
                uint64_t i = (uint64_t)(r * j->samples + s);
                if (i / 2 != have) {
                    have = i / 2;
                    weft__random_f64_block(j->key, j->stream, have, u);
                }
                /* u * total may round up to total itself: the last class
                 * of positive weight then. */
                int64_t k = upper_bound(cdf, j->classes, u[i % 2] * total);
                if (k > last)
                    k = last;
                if (j->i64)
                    ((int64_t *)j->out)[i] = k;
                else
                    ((int32_t *)j->out)[i] = (int32_t)k;
            }
        }
    }
    return 0;
}

int weft__eval_random_categorical(weft_runtime *rt, const weft__node *n,
                                  const weft_tensor *seed, const weft_tensor *logits,
                                  weft_tensor *out)
{
    categorical_job j = {
        .logits = weft_tensor_data(logits), .f32 = logits->dtype == WEFT_F32,
        .i64 = out->dtype == WEFT_I64, .rows = logits->dims[0], .classes = logits->dims[1],
        .samples = out->dims[1], .out = weft__tensor_mut(out),
    };
    int rc = weft__random_key(n, seed, j.key, j.stream);
    if (rc)
        return rc;
    if (out->numel == 0)
        return 0;
    if (j.classes == 0)
        return weft__errorf(WEFT_EINVAL, "weft_%s: the logits have no classes (%lld rows of 0)",
                            weft__op_name(n->op), (long long)j.rows);
    /* A row costs an exp per class and a search per sample. */
    uint64_t work = weft__sat_mul((uint64_t)j.rows,
                                  weft__sat_mul((uint64_t)j.classes, 8) +
                                      weft__sat_mul((uint64_t)j.samples, 64));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.rows);
    j.cdf = weft__malloc(j.chunks * (size_t)j.classes * sizeof *j.cdf);
    j.failed = weft__malloc(j.chunks * sizeof *j.failed);
    if (!j.cdf || !j.failed) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
        goto done;
    }
    rc = weft__run_chunks(rt, j.chunks, categorical_chunk, &j);
    for (size_t c = 0; c < j.chunks && rc == 0; c++)
        if (j.failed[c] >= 0)
            rc = weft__errorf(WEFT_EINVAL, "weft_%s: row %lld of the logits has a NaN or "
                              "every logit -inf (no distribution to draw from)",
                              weft__op_name(n->op), (long long)j.failed[c]);
done:
    weft__free(j.cdf);
    weft__free(j.failed);
    return rc;
}
