/* Elementwise ops with NumPy broadcasting on whole tensors
 * (weft__eval_elementwise), over weft__ew_block. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* ---- Elementwise with broadcasting ---------------------------------- */

typedef struct ew_job {
    weft__op op;
    weft_dtype in_dt, out_dt;
    uint32_t k;                        /* inputs */
    int rank;                          /* coalesced output rank, >= 1 */
    int64_t dims[WEFT_MAX_RANK];
    int64_t strides[3][WEFT_MAX_RANK]; /* per input, in elements; 0 broadcasts */
    const char *base[3];
    size_t esize[3];
    char *out;
    size_t out_esize;
    uint64_t total;
    size_t chunks;
} ew_job;

static int ew_chunk(size_t cb, size_t ce, void *ctx)
{
    const ew_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t pos = weft__chunk_begin(j->total, j->chunks, c);
        uint64_t end = weft__chunk_begin(j->total, j->chunks, c + 1);
        int64_t idx[WEFT_MAX_RANK];
        uint64_t rem = pos;
        for (int d = j->rank - 1; d >= 0; d--) {
            idx[d] = (int64_t)(rem % (uint64_t)j->dims[d]);
            rem /= (uint64_t)j->dims[d];
        }
        int last = j->rank - 1;
        unsigned char step[3];
        for (uint32_t i = 0; i < j->k; i++)
            step[i] = j->strides[i][last] != 0;
        while (pos < end) {
            const void *ptr[3];
            for (uint32_t i = 0; i < j->k; i++) {
                int64_t off = 0;
                for (int d = 0; d <= last; d++)
                    off += idx[d] * j->strides[i][d];
                ptr[i] = j->base[i] + (size_t)off * j->esize[i];
            }
            uint64_t run = (uint64_t)(j->dims[last] - idx[last]);
            if (run > end - pos)
                run = end - pos;
            weft__ew_block(j->op, j->in_dt, j->out_dt, ptr, step,
                           j->out + pos * j->out_esize, (size_t)run);
            pos += run;
            idx[last] += (int64_t)run;
            for (int d = last; d > 0 && idx[d] == j->dims[d]; d--) {
                idx[d] = 0;
                idx[d - 1]++;
            }
        }
    }
    return 0;
}

int weft__eval_elementwise(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                            weft_tensor *out)
{
    /* Small work with every input either full-size or a scalar (the
     * common case) is one block call: no stride set-up, no split. */
    if ((uint64_t)out->numel <= WEFT__KERNEL_SPLIT_MIN) {
        const void *src[3];
        unsigned char step[3];
        bool simple = true;
        for (uint32_t i = 0; i < n->n_in && simple; i++) {
            src[i] = in[i]->data;
            step[i] = in[i]->numel == out->numel;
            simple = in[i]->numel == out->numel || in[i]->numel == 1;
        }
        if (simple) {
            if (out->numel)
                weft__ew_block(n->op, in[n->n_in - 1]->dtype, out->dtype, src, step, out->data,
                               (size_t)out->numel);
            return 0;
        }
    }
    ew_job j;
    memset(&j, 0, sizeof j);
    j.op = n->op;
    j.k = n->n_in;
    j.in_dt = in[j.k - 1]->dtype;  /* WHERE: the value inputs; else all equal */
    j.out_dt = out->dtype;
    j.out = weft__tensor_mut(out);
    j.out_esize = weft_dtype_size(out->dtype);
    j.total = (uint64_t)out->numel;
    if (j.total == 0)
        return 0;
    /* Strides of each input against the output shape, then drop the
     * output's unit dims and merge dims that are contiguous in every
     * input, so that the innermost run is as long as possible. */
    int64_t st[3][WEFT_MAX_RANK];
    for (uint32_t i = 0; i < j.k; i++) {
        j.base[i] = weft_tensor_data(in[i]);
        j.esize[i] = weft_dtype_size(in[i]->dtype);
        int64_t s = 1;
        for (int d = out->rank - 1; d >= 0; d--) {
            int id = d - (out->rank - in[i]->rank);
            int64_t dim = id >= 0 ? in[i]->dims[id] : 1;
            st[i][d] = dim == 1 ? 0 : s;
            s *= dim;
        }
    }
    int r = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1)
            continue;
        bool merge = r > 0;
        for (uint32_t i = 0; merge && i < j.k; i++)
            merge = j.strides[i][r - 1] == st[i][d] * out->dims[d];
        if (merge) {
            j.dims[r - 1] *= out->dims[d];
            for (uint32_t i = 0; i < j.k; i++)
                j.strides[i][r - 1] = st[i][d];
        } else {
            j.dims[r] = out->dims[d];
            for (uint32_t i = 0; i < j.k; i++)
                j.strides[i][r] = st[i][d];
            r++;
        }
    }
    if (r == 0) {
        j.dims[0] = 1;
        r = 1;
    }
    j.rank = r;
    j.chunks = weft__chunk_count(rt, j.total);
    return weft__run_chunks(rt, j.chunks, ew_chunk, &j);
}

