/* edit_distance (tf.edit_distance on dense sequences): the Levenshtein
 * distance between each hypothesis and its truth (insertions, deletions
 * and substitutions, each 1), by the usual dynamic programme over one row
 * of the truth's length, a task per chunk of sequences.  Normalized, the
 * distance is over the truth's length; an empty truth gives +inf against
 * a non-empty hypothesis and 0 against an empty one, as TensorFlow. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct edit_job {
    const weft__node *n;
    weft_tensor *const *in;   /* hypothesis, its lengths, truth, its lengths */
    float *out;
    int64_t count, hyp_width, truth_width;
    size_t chunks;
    int64_t *failed;   /* per chunk: a sequence whose length is out of range, or -1 */
} edit_job;

/* Sequence s's length: from the lengths tensor when the node has one
 * (bit), else the whole row; -1 when outside 0..width. */
static int64_t length_of(const edit_job *j, int which, int64_t s, int64_t width)
{
    if (!(j->n->attr.index.kind & (1 << which)))
        return width;
    int64_t len = weft__index_at(j->in[2 * which + 1], s);
    return len >= 0 && len <= width ? len : -1;
}

static float distance(const edit_job *j, int64_t s, int64_t hl, int64_t tl, int64_t *row)
{
    const weft_tensor *hyp = j->in[0], *truth = j->in[2];
    for (int64_t t = 0; t <= tl; t++)
        row[t] = t;
    for (int64_t h = 1; h <= hl; h++) {
        int64_t diagonal = row[0], label = weft__index_at(hyp, s * j->hyp_width + h - 1);
        row[0] = h;
        for (int64_t t = 1; t <= tl; t++) {
            int64_t up = row[t];
            int64_t best = diagonal + (label != weft__index_at(truth, s * j->truth_width + t - 1));
            best = up + 1 < best ? up + 1 : best;
            best = row[t - 1] + 1 < best ? row[t - 1] + 1 : best;
            row[t] = best;
            diagonal = up;
        }
    }
    float d = (float)row[tl];
    if (!j->n->attr.index.count)
        return d;
    if (tl == 0)
        return d == 0 ? 0.0f : INFINITY;
    return d / (float)tl;
}

static int edit_chunk(size_t cb, size_t ce, void *ctx)
{
    edit_job *j = ctx;
    int64_t *row = weft__malloc((size_t)(j->truth_width + 1) * sizeof *row);
    if (!row)
        return weft__errorf(WEFT_ENOMEM, "weft_edit_distance: out of memory");
    for (size_t c = cb; c < ce; c++) {
        j->failed[c] = -1;
        uint64_t s0 = weft__chunk_begin((uint64_t)j->count, j->chunks, c),
                 s1 = weft__chunk_begin((uint64_t)j->count, j->chunks, c + 1);
        for (uint64_t s = s0; s < s1; s++) {
            int64_t hl = length_of(j, 0, (int64_t)s, j->hyp_width);
            int64_t tl = length_of(j, 1, (int64_t)s, j->truth_width);
            if (hl < 0 || tl < 0) {
                j->failed[c] = (int64_t)s;
                break;
            }
            j->out[s] = distance(j, (int64_t)s, hl, tl, row);
        }
    }
    weft__free(row);
    return 0;
}

int weft__eval_edit_distance(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                             weft_tensor *out)
{
    edit_job j = { .n = n, .in = in, .out = weft__tensor_mut(out) };
    j.count = weft_tensor_numel(out);
    j.hyp_width = in[0]->dims[in[0]->rank - 1];
    j.truth_width = in[2]->dims[in[2]->rank - 1];
    if (j.count == 0)
        return 0;
    uint64_t work = weft__sat_mul((uint64_t)j.count,
                                  weft__sat_mul((uint64_t)j.hyp_width + 1,
                                                (uint64_t)j.truth_width + 1));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.count);
    j.failed = weft__malloc(j.chunks * sizeof *j.failed);
    if (!j.failed)
        return weft__errorf(WEFT_ENOMEM, "weft_edit_distance: out of memory");
    int rc = weft__run_chunks(rt, j.chunks, edit_chunk, &j);
    for (size_t c = 0; rc == 0 && c < j.chunks; c++)
        if (j.failed[c] >= 0)
            rc = weft__errorf(WEFT_EINVAL, "weft_edit_distance: sequence %lld has a length "
                              "outside 0..%lld (hypothesis) or 0..%lld (truth)",
                              (long long)j.failed[c], (long long)j.hyp_width,
                              (long long)j.truth_width);
    weft__free(j.failed);
    return rc;
}

int weft__infer_edit_distance(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_edit_distance";
    const weft_spec *hyp = &in[0], *truth = &in[2];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if ((hyp->dtype != WEFT_I32 && hyp->dtype != WEFT_I64) || truth->dtype != hyp->dtype)
        return weft__errorf(WEFT_EDTYPE, "%s: the hypothesis %s and truth %s are not both i32 "
                            "or both i64", fn, weft__spec_str(hyp, s1, sizeof s1),
                            weft__spec_str(truth, s2, sizeof s2));
    bool ok = hyp->rank >= 1 && truth->rank == hyp->rank;
    for (int d = 0; ok && d < hyp->rank - 1; d++)
        ok = hyp->dims[d] < 0 || truth->dims[d] < 0 || hyp->dims[d] == truth->dims[d];
    if (!ok)
        return weft__errorf(WEFT_ESHAPE, "%s: the hypothesis %s and truth %s are not sequences "
                            "[..., length] with the same batch dims", fn,
                            weft__spec_str(hyp, s1, sizeof s1),
                            weft__spec_str(truth, s2, sizeof s2));
    for (int which = 0; which < 2; which++) {
        const weft_spec *seq = &in[2 * which], *len = &in[2 * which + 1];
        if (!(n->attr.index.kind & (1 << which)))
            continue;
        bool fits = (len->dtype == WEFT_I32 || len->dtype == WEFT_I64) &&
                    len->rank == seq->rank - 1;
        for (int d = 0; fits && d < len->rank; d++)
            fits = len->dims[d] < 0 || seq->dims[d] < 0 || len->dims[d] == seq->dims[d];
        if (!fits)
            return weft__errorf(WEFT_ESHAPE, "%s: the %s lengths %s are not i32 or i64 of the "
                                "batch dims of %s", fn, which ? "truth" : "hypothesis",
                                weft__spec_str(len, s1, sizeof s1),
                                weft__spec_str(seq, s2, sizeof s2));
    }
    *out = *hyp;
    out->dtype = WEFT_F32;
    out->rank = hyp->rank - 1;
    for (int d = 0; d < out->rank; d++)
        if (out->dims[d] < 0)
            out->dims[d] = truth->dims[d];
    return 0;
}
