/* ctc_unique_labels (tf.nn.ctc_unique_labels): each row's distinct labels
 * in order of first occurrence and each label's place among them, as
 * TensorFlow's map of tf.unique over the rows.  A row's (label, column)
 * pairs are sorted, so equal labels sit together with their first column
 * leading; a pass in column order then numbers the first occurrences.
 * O(n log n) a row, one task per chunk of rows.  The node's result is i64
 * [batch, 2, max_length]: the padded labels, then the indices. */
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct label_at {
    int64_t label, column;
} label_at;

typedef struct unique_job {
    const weft_tensor *labels;
    int64_t *out;
    int64_t rows, width;
    size_t chunks;
} unique_job;

static int by_label_then_column(const void *a, const void *b)
{
    const label_at *x = a, *y = b;
    if (x->label != y->label)
        return x->label < y->label ? -1 : 1;
    return (x->column > y->column) - (x->column < y->column);
}

/* Row r into out[0..width) (the distinct labels, zeros after them) and
 * out[width..2 width) (each column's index among them); pairs and first
 * are scratch of width entries. */
static void unique_row(const unique_job *j, int64_t r, label_at *pairs, int64_t *first)
{
    int64_t w = j->width, *labels = j->out + 2 * r * w, *index = labels + w;
    for (int64_t c = 0; c < w; c++)
        pairs[c] = (label_at){ weft__index_at(j->labels, r * w + c), c };
    qsort(pairs, (size_t)w, sizeof *pairs, by_label_then_column);
    for (int64_t k = 0; k < w; k++) {   /* each column's first occurrence */
        bool repeat = k > 0 && pairs[k].label == pairs[k - 1].label;
        first[pairs[k].column] = repeat ? first[pairs[k - 1].column] : pairs[k].column;
    }
    int64_t distinct = 0;
    for (int64_t c = 0; c < w; c++) {
        if (first[c] == c) {
            labels[distinct] = weft__index_at(j->labels, r * w + c);
            index[c] = distinct++;
        } else {
            index[c] = index[first[c]];
        }
    }
    memset(labels + distinct, 0, (size_t)(w - distinct) * sizeof *labels);
}

static int unique_chunk(size_t cb, size_t ce, void *ctx)
{
    unique_job *j = ctx;
    label_at *pairs = weft__malloc((size_t)j->width * sizeof *pairs);
    int64_t *first = weft__malloc((size_t)j->width * sizeof *first);
    int rc = pairs && first ? 0
                            : weft__errorf(WEFT_ENOMEM, "weft_ctc_unique_labels: out of memory");
    for (size_t c = cb; rc == 0 && c < ce; c++) {
        uint64_t r0 = weft__chunk_begin((uint64_t)j->rows, j->chunks, c),
                 r1 = weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1);
        for (uint64_t r = r0; r < r1; r++)
            unique_row(j, (int64_t)r, pairs, first);
    }
    weft__free(pairs);
    weft__free(first);
    return rc;
}

int weft__eval_ctc_unique(weft_runtime *rt, const weft_tensor *labels, weft_tensor *out)
{
    unique_job j = { .labels = labels, .out = weft__tensor_mut(out) };
    j.rows = labels->dims[0];
    j.width = labels->dims[1];
    if (j.rows == 0 || j.width == 0)
        return 0;
    uint64_t work = weft__sat_mul((uint64_t)j.rows, weft__sat_mul((uint64_t)j.width, 16));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.rows);
    return weft__run_chunks(rt, j.chunks, unique_chunk, &j);
}

int weft__infer_ctc_unique(const weft_spec *in, weft_spec *out)
{
    char s[WEFT__SPEC_STR_MAX];
    if (in->dtype != WEFT_I32 && in->dtype != WEFT_I64)
        return weft__errorf(WEFT_EDTYPE, "weft_ctc_unique_labels: the labels %s are not i32 or "
                            "i64", weft__spec_str(in, s, sizeof s));
    if (in->rank != 2)
        return weft__errorf(WEFT_ESHAPE, "weft_ctc_unique_labels: the labels %s are not [batch, "
                            "max_length]", weft__spec_str(in, s, sizeof s));
    memset(out, 0, sizeof *out);
    out->dtype = WEFT_I64;
    out->rank = 3;
    out->dims[0] = in->dims[0];
    out->dims[1] = 2;
    out->dims[2] = in->dims[1];
    return 0;
}
