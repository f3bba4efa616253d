/* Elementwise ops with NumPy broadcasting on whole tensors
 * (weft__eval_elementwise), over weft__ew_tile. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* ---- Elementwise with broadcasting ---------------------------------- */

/* After coalescing, the output is [dims[0], ..., dims[rank-1]]; the last
 * dim is the tile's columns (each input steps 1 or 0 along it), the one
 * before it the tile's rows (each input at its own stride), so a
 * broadcast row or column is one tile call, never a call per run.  Work
 * is cut into ranges of rows (of columns when rank is 1). */
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
    uint64_t total;                    /* rows (all dims but the last), or columns */
    size_t chunks;
} ew_job;

/* Columns [pos, end) of a 1-D job as one single-row tile. */
static void ew_run_cols(const ew_job *j, uint64_t pos, uint64_t end)
{
    const void *ptr[3];
    int64_t rs[3] = {0, 0, 0};
    unsigned char step[3];
    for (uint32_t i = 0; i < j->k; i++) {
        step[i] = j->strides[i][0] != 0;
        ptr[i] = j->base[i] + (step[i] ? pos : 0) * j->esize[i];
    }
    weft__ew_tile(j->op, j->in_dt, j->out_dt, ptr, rs, step, j->out + pos * j->out_esize, 1,
                  (size_t)(end - pos));
}

/* Rows [pos, end) of the flattened leading dims, a tile per stretch of
 * rows that share their outer indices. */
static void ew_run_rows(const ew_job *j, uint64_t pos, uint64_t end)
{
    int rd = j->rank - 2, cd = j->rank - 1;   /* the row and column dims */
    int64_t idx[WEFT_MAX_RANK];
    uint64_t rem = pos;
    for (int d = rd; d >= 0; d--) {
        idx[d] = (int64_t)(rem % (uint64_t)j->dims[d]);
        rem /= (uint64_t)j->dims[d];
    }
    unsigned char step[3];
    int64_t rs[3];
    for (uint32_t i = 0; i < j->k; i++) {
        step[i] = j->strides[i][cd] != 0;
        rs[i] = j->strides[i][rd];
    }
    size_t cols = (size_t)j->dims[cd];
    while (pos < end) {
        const void *ptr[3];
        for (uint32_t i = 0; i < j->k; i++) {
            int64_t off = 0;
            for (int d = 0; d <= rd; d++)
                off += idx[d] * j->strides[i][d];
            ptr[i] = j->base[i] + (size_t)off * j->esize[i];
        }
        uint64_t run = (uint64_t)(j->dims[rd] - idx[rd]);
        if (run > end - pos)
            run = end - pos;
        weft__ew_tile(j->op, j->in_dt, j->out_dt, ptr, rs, step,
                      j->out + pos * cols * j->out_esize, (size_t)run, cols);
        pos += run;
        idx[rd] += (int64_t)run;
        for (int d = rd; d > 0 && idx[d] == j->dims[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static int ew_chunk(size_t cb, size_t ce, void *ctx)
{
    const ew_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t pos = weft__chunk_begin(j->total, j->chunks, c);
        uint64_t end = weft__chunk_begin(j->total, j->chunks, c + 1);
        if (j->rank == 1)
            ew_run_cols(j, pos, end);
        else
            ew_run_rows(j, pos, end);
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
    if (out->numel == 0)
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
    j.total = (uint64_t)(r == 1 ? j.dims[0] : out->numel / j.dims[r - 1]);
    /* An elementwise result does not depend on where the work is cut. */
    size_t threads = weft__chunk_count(rt, (uint64_t)out->numel);
    j.chunks = weft__task_count(threads, j.total);
    return weft__run_chunks(rt, j.chunks, ew_chunk, &j);
}

