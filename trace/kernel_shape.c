/* Kernels of the ARRAY ops that move elements (weft__eval_shape_op):
 * strided views (transpose, slice, split, tile, broadcast_to), concat and
 * stack, gather, and the shape-only ops fill_like and shape.  argmax,
 * argmin and cumsum live in kernel_scan.c, the indexing ops (segments,
 * gather_nd, scatter_nd, roll, repeat) in kernel_index.c.
 *
 * Every kernel here writes each output element exactly once, in chunks
 * of the output cut by weft__chunk_count, so its result never depends on
 * the thread count. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/copy.h"
#include "trace/kernels.h"
#include "trace/shape.h"

/* ---- Strided views ----------------------------------------------------- */

/* A view of the source as the output walks it: the element at output index
 * (i0, i1, ...) is src[sum(ik * strides[k])].  Tile views each dim as two
 * (repeat, element), hence twice the rank. */
#define VIEW_RANK (2 * WEFT_MAX_RANK)

typedef struct view_job {
    int rank;
    int64_t dims[VIEW_RANK];
    int64_t strides[VIEW_RANK];   /* in elements; 0 repeats, negative walks back */
    const char *src;              /* the element at index (0, ..., 0) */
    char *dst;
    size_t esize;
    uint64_t total;
    size_t chunks;
    /* Transposing views: the dim that walks the source contiguously, or
     * -1; the output's own strides; and the work units (a band of TILE_I
     * indices of tile_dim for each index of the other dims but the last). */
    int tile_dim;
    int64_t out_strides[VIEW_RANK];
    uint64_t units;
} view_job;

/* Tiles of a transposing copy: TILE_J source lines (strided, so few
 * enough to share a cache set when the stride is a power of two), each
 * read for TILE_I consecutive elements.  64 x 16 was the fastest of the
 * shapes from 8 to 64 each way tried on large square matrices. */
#define TILE_I 64
#define TILE_J 16

/* Drops dims of 1 and merges neighbours that walk memory as one dim, so
 * the inner loop is as long as it can be. */
static void view_coalesce(view_job *v)
{
    int r = 0;
    for (int d = 0; d < v->rank; d++) {
        if (v->dims[d] == 1)
            continue;
        if (r > 0 && v->strides[r - 1] == v->strides[d] * v->dims[d]) {
            v->dims[r - 1] *= v->dims[d];
            v->strides[r - 1] = v->strides[d];
            continue;
        }
        v->dims[r] = v->dims[d];
        v->strides[r] = v->strides[d];
        r++;
    }
    if (r == 0) {
        v->dims[0] = 1;
        v->strides[0] = 1;
        r = 1;
    }
    v->rank = r;
}

/* len elements from src, stride apart, to consecutive dst. */
static void copy_run(char *restrict dst, const char *restrict src, int64_t stride, int64_t len,
                     size_t esize)
{
    if (stride == 1) {
        weft__copy_bytes(dst, src, (size_t)len * esize);
        return;
    }
    switch (esize) {
    case 1:
        for (int64_t i = 0; i < len; i++)
            dst[i] = src[i * stride];
        break;
    case 4: {
        uint32_t *restrict o = (uint32_t *)(void *)dst;
        const uint32_t *s = (const uint32_t *)(const void *)src;
        for (int64_t i = 0; i < len; i++)
            o[i] = s[i * stride];
        break;
    }
    default: {
        uint64_t *restrict o = (uint64_t *)(void *)dst;
        const uint64_t *s = (const uint64_t *)(const void *)src;
        for (int64_t i = 0; i < len; i++)
            o[i] = s[i * stride];
        break;
    }
    }
}

static int view_chunk(size_t cb, size_t ce, void *ctx)
{
    const view_job *v = ctx;
    int last = v->rank - 1;
    for (size_t c = cb; c < ce; c++) {
        uint64_t pos = weft__chunk_begin(v->total, v->chunks, c);
        uint64_t end = weft__chunk_begin(v->total, v->chunks, c + 1);
        int64_t idx[VIEW_RANK];
        uint64_t rem = pos;
        for (int d = last; d >= 0; d--) {
            idx[d] = (int64_t)(rem % (uint64_t)v->dims[d]);
            rem /= (uint64_t)v->dims[d];
        }
        while (pos < end) {
            int64_t off = 0;
            for (int d = 0; d <= last; d++)
                off += idx[d] * v->strides[d];
            uint64_t run = (uint64_t)(v->dims[last] - idx[last]);
            if (run > end - pos)
                run = end - pos;
            copy_run(v->dst + pos * v->esize, v->src + off * (int64_t)v->esize, v->strides[last],
                     (int64_t)run, v->esize);
            pos += run;
            idx[last] += (int64_t)run;
            for (int d = last; d > 0 && idx[d] == v->dims[d]; d--) {
                idx[d] = 0;
                idx[d - 1]++;
            }
        }
    }
    return 0;
}

/* A transposing view (the last dim jumps through the source, another dim
 * walks it contiguously) read element by element would touch a new cache
 * line, and soon a new page, per element; it is copied in TILE_I x TILE_J
 * tiles of (tile_dim, last) instead. */
static int view_chunk_tiled(size_t cb, size_t ce, void *ctx)
{
    const view_job *v = ctx;
    int last = v->rank - 1, p = v->tile_dim;
    int64_t bands = (v->dims[p] + TILE_I - 1) / TILE_I;
    for (size_t c = cb; c < ce; c++) {
        uint64_t u0 = weft__chunk_begin(v->units, v->chunks, c);
        uint64_t u1 = weft__chunk_begin(v->units, v->chunks, c + 1);
        for (uint64_t u = u0; u < u1; u++) {
            int64_t rest = (int64_t)(u / (uint64_t)bands), band = (int64_t)(u % (uint64_t)bands);
            int64_t so = 0, doff = 0;
            for (int d = last - 1; d >= 0; d--) {
                if (d == p)
                    continue;
                int64_t i = rest % v->dims[d];
                rest /= v->dims[d];
                so += i * v->strides[d];
                doff += i * v->out_strides[d];
            }
            int64_t i0 = band * TILE_I, i1 = i0 + TILE_I < v->dims[p] ? i0 + TILE_I : v->dims[p];
            for (int64_t j0 = 0; j0 < v->dims[last]; j0 += TILE_J) {
                int64_t len = v->dims[last] - j0 < TILE_J ? v->dims[last] - j0 : TILE_J;
                for (int64_t i = i0; i < i1; i++)
                    copy_run(v->dst + (size_t)(doff + i * v->out_strides[p] + j0) * v->esize,
                             v->src + (so + i + j0 * v->strides[last]) * (int64_t)v->esize,
                             v->strides[last], len, v->esize);
            }
        }
    }
    return 0;
}

/* Picks the tiled copy for transposing views worth it. */
static void view_plan_tiles(view_job *v)
{
    int last = v->rank - 1;
    v->tile_dim = -1;
    if (v->rank < 2 || (v->strides[last] >= -TILE_J && v->strides[last] <= TILE_J))
        return;
    for (int d = last - 1; d >= 0; d--)
        if (v->strides[d] == 1 && v->dims[d] >= TILE_I / 4) {
            v->tile_dim = d;
            break;
        }
    if (v->tile_dim < 0)
        return;
    int64_t s = 1;
    for (int d = last; d >= 0; d--) {
        v->out_strides[d] = s;
        s *= v->dims[d];
    }
    uint64_t bands = (uint64_t)(v->dims[v->tile_dim] + TILE_I - 1) / TILE_I;
    v->units = v->total / (uint64_t)v->dims[v->tile_dim] / (uint64_t)v->dims[last] * bands;
}

static void row_major_strides(const weft_tensor *a, int64_t *strides)
{
    int64_t s = 1;
    for (int d = a->rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= a->dims[d];
    }
}

/* The view of a that n's output walks (out holds the output's shape). */
static void view_of(const weft__node *n, const weft_tensor *a, const weft_tensor *out,
                    view_job *v)
{
    int64_t as[WEFT_MAX_RANK];
    row_major_strides(a, as);
    int64_t offset = 0;
    v->rank = out->rank;
    memcpy(v->dims, out->dims, sizeof(int64_t) * (size_t)out->rank);
    switch (n->op) {
    case WEFT__OP_TRANSPOSE:
        for (int d = 0; d < out->rank; d++) {
            int p = n->attr.transpose.rank < 0 ? a->rank - 1 - d : n->attr.transpose.perm[d];
            v->strides[d] = as[p];
        }
        break;
    case WEFT__OP_SLICE:
        for (int d = 0; d < a->rank; d++) {
            int64_t first, count;
            weft__slice_resolve(a->dims[d], n->attr.slice.begin[d], n->attr.slice.end[d],
                                n->attr.slice.step[d], &first, &count);
            offset += first * as[d];
            v->strides[d] = n->attr.slice.step[d] * as[d];
        }
        break;
    case WEFT__OP_SPLIT: {
        int axis = n->attr.split.axis < 0 ? n->attr.split.axis + a->rank : n->attr.split.axis;
        weft_spec s;
        int64_t first, count;
        weft__tensor_spec(a, &s);
        weft__split_resolve(n, &s, a->dims[axis], &first, &count);   /* checked by inference */
        offset = first * as[axis];
        memcpy(v->strides, as, sizeof as);
        break;
    }
    case WEFT__OP_BROADCAST_TO:
        for (int d = 0; d < out->rank; d++) {
            int j = d - (out->rank - a->rank);
            v->strides[d] = (j >= 0 && a->dims[j] == out->dims[d]) ? as[j] : 0;
        }
        break;
    default:   /* TILE: each dim d as (repeat, element) */
        v->rank = 2 * a->rank;
        for (int d = 0; d < a->rank; d++) {
            v->dims[2 * d] = n->attr.shape.dims[d];
            v->strides[2 * d] = 0;
            v->dims[2 * d + 1] = a->dims[d];
            v->strides[2 * d + 1] = as[d];
        }
        break;
    }
    v->src = (const char *)weft_tensor_data(a) + offset * (int64_t)weft_dtype_size(a->dtype);
}

static int eval_view(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                     weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    view_job v;
    view_of(n, a, out, &v);
    v.dst = weft__tensor_mut(out);
    v.esize = weft_dtype_size(out->dtype);
    v.total = (uint64_t)out->numel;
    view_coalesce(&v);
    view_plan_tiles(&v);
    v.chunks = weft__chunk_count(rt, v.total);
    if (v.tile_dim < 0)
        return weft__run_chunks(rt, v.chunks, view_chunk, &v);
    if (v.chunks > v.units)
        v.chunks = (size_t)v.units;
    return weft__run_chunks(rt, v.chunks, view_chunk_tiled, &v);
}

/* ---- concat and stack -------------------------------------------------- */

/* The output is `rows` rows, each the concatenation of one segment of
 * every input (seg[k] elements of input k, starting at off[k]); chunks cut
 * the output's elements evenly, wherever segments begin. */
typedef struct concat_job {
    uint32_t k;
    const char **src;
    int64_t *seg, *off;   /* off[k]: where input k's segment starts in a row; off[k] = row */
    int64_t row;
    char *dst;
    size_t esize;
    uint64_t total;
    size_t chunks;
} concat_job;

/* bytes (a multiple of the element size) as fixed-size moves when short
 * (a channel or a few of a pixel), which a memcpy call each would cost
 * many times over. */
static inline void copy_short(char *dst, const char *src, size_t bytes)
{
    switch (bytes) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 12: memcpy(dst, src, 12); break;
    case 16: memcpy(dst, src, 16); break;
    default: weft__copy_bytes(dst, src, bytes); break;
    }
}

static int concat_chunk(size_t cb, size_t ce, void *ctx)
{
    const concat_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t pos = weft__chunk_begin(j->total, j->chunks, c);
        uint64_t end = weft__chunk_begin(j->total, j->chunks, c + 1);
        if (pos >= end)
            continue;
        /* The row and place of the chunk's first element, then each
         * segment after the other (empty ones skipped). */
        int64_t r = (int64_t)(pos / (uint64_t)j->row), at = (int64_t)(pos % (uint64_t)j->row);
        uint32_t k = 0;
        while (j->off[k + 1] <= at)
            k++;
        while (pos < end) {
            int64_t in_seg = at - j->off[k];
            uint64_t run = (uint64_t)(j->seg[k] - in_seg);
            if (run > end - pos)
                run = end - pos;
            copy_short(j->dst + pos * j->esize,
                       j->src[k] + (size_t)(r * j->seg[k] + in_seg) * j->esize, run * j->esize);
            pos += run;
            at += (int64_t)run;
            while (k < j->k && j->off[k + 1] <= at)
                k++;
            if (k == j->k) {   /* the row is done */
                r++;
                at = 0;
                k = 0;
                while (k < j->k && j->off[k + 1] <= 0)
                    k++;
            }
        }
    }
    return 0;
}

/* Short rows (a pixel's channels) from a few inputs: chunks of whole
 * rows, each row one short copy per input, with no search for where a
 * segment starts.  The inputs' pointers and sizes are copied into locals
 * first: stores through the output's char pointer may alias anything, so
 * the compiler would otherwise reload them from the job at every copy. */
#define CONCAT_SHORT_ROW    64
#define CONCAT_SHORT_INPUTS 8

static int concat_rows_chunk(size_t cb, size_t ce, void *ctx)
{
    const concat_job *j = ctx;
    const uint32_t n_in = j->k;
    const char *src[CONCAT_SHORT_INPUTS];
    size_t bytes[CONCAT_SHORT_INPUTS];
    for (uint32_t k = 0; k < n_in; k++) {
        src[k] = j->src[k];
        bytes[k] = (size_t)j->seg[k] * j->esize;
    }
    const uint64_t rows = j->total / (uint64_t)j->row;
    const size_t row_bytes = (size_t)j->row * j->esize, chunks = j->chunks;
    char *const out = j->dst;
    for (size_t c = cb; c < ce; c++) {
        uint64_t r0 = weft__chunk_begin(rows, chunks, c), r1 = weft__chunk_begin(rows, chunks, c + 1);
        char *dst = out + r0 * row_bytes;
        for (uint64_t r = r0; r < r1; r++)
            for (uint32_t k = 0; k < n_in; k++) {
                copy_short(dst, src[k] + r * bytes[k], bytes[k]);
                dst += bytes[k];
            }
    }
    return 0;
}

/* One element from each of K inputs per row (a stack of vectors on a new
 * last axis, a pixel's channels joined): an interleave with K and the
 * element type fixed, which the compiler turns into vector shuffles
 * (the row-by-row copies cost 2x an interleaving loop's time). */
#define CONCAT_INTERLEAVE(K, T)                                                             \
    static int interleave_##K##_##T(size_t cb, size_t ce, void *ctx)                       \
    {                                                                                       \
        const concat_job *j = ctx;                                                          \
        const T *src[K];                                                                    \
        for (int k = 0; k < K; k++)                                                         \
            src[k] = (const T *)(const void *)j->src[k];                                    \
        T *restrict out = (T *)(void *)j->dst;                                              \
        const uint64_t rows = j->total / K;                                                 \
        for (size_t c = cb; c < ce; c++) {                                                  \
            uint64_t r0 = weft__chunk_begin(rows, j->chunks, c);                            \
            uint64_t r1 = weft__chunk_begin(rows, j->chunks, c + 1);                        \
            for (uint64_t r = r0; r < r1; r++)                                              \
                for (int k = 0; k < K; k++)                                                 \
                    out[r * K + (uint64_t)k] = src[k][r];                                   \
        }                                                                                   \
        return 0;                                                                           \
    }
CONCAT_INTERLEAVE(2, uint32_t)
CONCAT_INTERLEAVE(3, uint32_t)
CONCAT_INTERLEAVE(4, uint32_t)
CONCAT_INTERLEAVE(2, uint64_t)
CONCAT_INTERLEAVE(3, uint64_t)
CONCAT_INTERLEAVE(4, uint64_t)
#undef CONCAT_INTERLEAVE

/* The interleave for j when each of its 2-4 inputs gives one 4- or
 * 8-byte element per row, else NULL. */
static weft_range_fn concat_interleave(const concat_job *j)
{
    if (j->k < 2 || j->k > 4 || (j->esize != 4 && j->esize != 8))
        return NULL;
    for (uint32_t k = 0; k < j->k; k++)
        if (j->seg[k] != 1)
            return NULL;
    static const weft_range_fn by_k[2][3] = {
        { interleave_2_uint32_t, interleave_3_uint32_t, interleave_4_uint32_t },
        { interleave_2_uint64_t, interleave_3_uint64_t, interleave_4_uint64_t },
    };
    return by_k[j->esize == 8][j->k - 2];
}

static int eval_concat(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                       weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    int rank = out->rank;
    int axis = n->attr.axis.axis < 0 ? n->attr.axis.axis + rank : n->attr.axis.axis;
    int64_t inner = 1;   /* elements after the axis, per unit of it */
    for (int d = axis + 1; d < rank; d++)
        inner *= out->dims[d];
    concat_job j;
    memset(&j, 0, sizeof j);
    j.k = n->n_in;
    j.src = weft__malloc(sizeof *j.src * j.k);
    j.seg = weft__malloc(sizeof *j.seg * (2 * (size_t)j.k + 1));
    if (!j.src || !j.seg) {
        weft__free(j.src);
        weft__free(j.seg);
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
    }
    j.off = j.seg + j.k;
    j.off[0] = 0;
    for (uint32_t i = 0; i < j.k; i++) {
        /* stack: every input is one unit of the new axis. */
        int64_t units = n->op == WEFT__OP_STACK ? 1 : in[i]->dims[axis];
        j.src[i] = weft_tensor_data(in[i]);
        j.seg[i] = units * inner;
        j.off[i + 1] = j.off[i] + j.seg[i];
    }
    j.row = j.off[j.k];
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(out->dtype);
    j.total = (uint64_t)out->numel;
    j.chunks = weft__chunk_count(rt, j.total);
    bool short_rows = j.row <= CONCAT_SHORT_ROW && j.k <= CONCAT_SHORT_INPUTS;
    if (short_rows && j.chunks > j.total / (uint64_t)j.row)
        j.chunks = (size_t)(j.total / (uint64_t)j.row);
    weft_range_fn fn = short_rows ? concat_interleave(&j) : NULL;
    if (!fn)
        fn = short_rows ? concat_rows_chunk : concat_chunk;
    int rc = weft__run_chunks(rt, j.chunks, fn, &j);
    weft__free(j.src);
    weft__free(j.seg);
    return rc;
}

/* ---- gather ------------------------------------------------------------ */

typedef struct gather_job {
    const char *src;
    const void *idx;
    bool idx64;
    /* Rows of the output: outer * n_idx, inner elements each; n_idx
     * indices per batch element, which spans `pre` outer rows (all of
     * them without batch dims). */
    int64_t n_idx, dim, inner, pre;
    char *dst;
    size_t esize;
    uint64_t rows;
    size_t chunks;
} gather_job;

static int64_t index_at(const gather_job *j, int64_t i)
{
    int64_t v = j->idx64 ? ((const int64_t *)j->idx)[i] : ((const int32_t *)j->idx)[i];
    return v < 0 ? v + j->dim : v;
}

/* Output rows [r, stop) of outer row o, whose indices start at `first`:
 * a row of one 4- or 8-byte element is a load and a store (the gathers
 * of weft_frame, argmax-style picks), anything else a copy. */
static void gather_run(const gather_job *j, int64_t o, int64_t first, uint64_t r, uint64_t stop)
{
    size_t bytes = (size_t)j->inner * j->esize;
    const char *base = j->src + (size_t)(o * j->dim * j->inner) * j->esize;
    int64_t i = first;
    if (bytes == 4) {
        uint32_t *dst = (uint32_t *)(void *)j->dst;
        for (; r < stop; r++, i++)
            memcpy(&dst[r], base + 4 * (size_t)index_at(j, i), 4);
    } else if (bytes == 8) {
        uint64_t *dst = (uint64_t *)(void *)j->dst;
        for (; r < stop; r++, i++)
            memcpy(&dst[r], base + 8 * (size_t)index_at(j, i), 8);
    } else {
        for (; r < stop; r++, i++)
            weft__copy_bytes(j->dst + r * bytes, base + (size_t)index_at(j, i) * bytes, bytes);
    }
}

static int gather_chunk(size_t cb, size_t ce, void *ctx)
{
    const gather_job *j = ctx;
    uint64_t n_idx = (uint64_t)j->n_idx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t r = weft__chunk_begin(j->rows, j->chunks, c);
        uint64_t r1 = weft__chunk_begin(j->rows, j->chunks, c + 1);
        /* One division per chunk; then whole runs of an outer row. */
        int64_t o = (int64_t)(r / n_idx), i = (int64_t)(r % n_idx);
        while (r < r1) {
            uint64_t stop = (uint64_t)(o + 1) * n_idx < r1 ? (uint64_t)(o + 1) * n_idx : r1;
            /* The indices of o's batch element start at o / pre * n_idx. */
            gather_run(j, o, o / j->pre * j->n_idx + i, r, stop);
            r = stop;
            o++;
            i = 0;
        }
    }
    return 0;
}

static int eval_gather(weft_runtime *rt, const weft__node *n, const weft_tensor *a,
                       const weft_tensor *idx, weft_tensor *out)
{
    int axis = n->attr.axis.axis < 0 ? n->attr.axis.axis + a->rank : n->attr.axis.axis;
    gather_job j;
    memset(&j, 0, sizeof j);
    j.src = weft_tensor_data(a);
    j.idx = weft_tensor_data(idx);
    j.idx64 = idx->dtype == WEFT_I64;
    j.dim = a->dims[axis];
    j.inner = 1;
    for (int d = axis + 1; d < a->rank; d++)
        j.inner *= a->dims[d];
    j.pre = 1;
    for (int d = n->attr.axis.batch; d < axis; d++)
        j.pre *= a->dims[d];
    j.n_idx = 1;
    for (int d = n->attr.axis.batch; d < idx->rank; d++)
        j.n_idx *= idx->dims[d];
    /* Every index is checked before anything is copied, so the message
     * names the first bad one whatever the chunking. */
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t v = index_at(&j, i);
        if (v < 0 || v >= j.dim) {
            char sa[WEFT__SPEC_STR_MAX];
            weft_spec s;
            weft__tensor_spec(a, &s);
            int64_t raw = j.idx64 ? ((const int64_t *)j.idx)[i] : ((const int32_t *)j.idx)[i];
            return weft__errorf(WEFT_EINVAL, "weft_gather: index %lld (at %lld) is out of range "
                                "for axis %d of %s", (long long)raw, (long long)i,
                                n->attr.axis.axis, weft__spec_str(&s, sa, sizeof sa));
        }
    }
    if (out->numel == 0)
        return 0;
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(out->dtype);
    j.rows = (uint64_t)out->numel / (uint64_t)j.inner;
    j.chunks = weft__chunk_count_of(rt, (uint64_t)out->numel, j.rows);
    return weft__run_chunks(rt, j.chunks, gather_chunk, &j);
}

/* ---- fill_like and shape ----------------------------------------------- */

typedef struct fill_job {
    unsigned char value[8];
    char *dst;
    size_t esize;
    uint64_t total;
    size_t chunks;
} fill_job;

static int fill_chunk(size_t cb, size_t ce, void *ctx)
{
    const fill_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t b = weft__chunk_begin(j->total, j->chunks, c);
        uint64_t e = weft__chunk_begin(j->total, j->chunks, c + 1);
        if (j->esize == 1) {
            memset(j->dst + b, j->value[0], e - b);
        } else if (j->esize == 4) {
            uint32_t v, *o = (uint32_t *)(void *)j->dst;
            memcpy(&v, j->value, 4);
            for (uint64_t i = b; i < e; i++)
                o[i] = v;
        } else {
            uint64_t v, *o = (uint64_t *)(void *)j->dst;
            memcpy(&v, j->value, 8);
            for (uint64_t i = b; i < e; i++)
                o[i] = v;
        }
    }
    return 0;
}

static int eval_fill_like(weft_runtime *rt, const weft__node *n, weft_tensor *out)
{
    fill_job j;
    memset(&j, 0, sizeof j);
    /* The value converted once, by the cast every other op uses. */
    double v = n->attr.fill.value;
    const void *src[1] = { &v };
    const unsigned char step[1] = { 0 };
    weft__ew_block(WEFT__OP_CAST, WEFT_F64, out->dtype, src, step, j.value, 1);
    j.dst = weft__tensor_mut(out);
    j.esize = weft_dtype_size(out->dtype);
    j.total = (uint64_t)out->numel;
    j.chunks = weft__chunk_count(rt, j.total);
    return weft__run_chunks(rt, j.chunks, fill_chunk, &j);
}

static int eval_shape_of(const weft_tensor *a, weft_tensor *out)
{
    int64_t *o = weft__tensor_mut(out);
    for (int d = 0; d < a->rank; d++)
        o[d] = a->dims[d];
    return 0;
}

int weft__eval_shape_op(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out)
{
    switch (n->op) {
    case WEFT__OP_TRANSPOSE:
    case WEFT__OP_SLICE:
    case WEFT__OP_SPLIT:
    case WEFT__OP_TILE:
    case WEFT__OP_BROADCAST_TO:
        return eval_view(rt, n, in[0], out);
    case WEFT__OP_CONCAT:
    case WEFT__OP_STACK:
        return eval_concat(rt, n, in, out);
    case WEFT__OP_GATHER:
        return eval_gather(rt, n, in[0], in[1], out);
    case WEFT__OP_FILL_LIKE:
        return eval_fill_like(rt, n, out);
    case WEFT__OP_SHAPE_OF:
        return eval_shape_of(in[0], out);
    case WEFT__OP_ARGMAX:
    case WEFT__OP_ARGMIN:
        return weft__eval_arg_extreme(rt, n, in[0], out);
    case WEFT__OP_CUMSUM:
    case WEFT__OP_CUMPROD:
    case WEFT__OP_CUMLOGSUMEXP:
        return weft__eval_cumsum(rt, n, in[0], out);
    case WEFT__OP_SORT:
    case WEFT__OP_ARGSORT:
        return weft__eval_sort(rt, n, in[0], out);
    case WEFT__OP_TOP_K:
        return weft__eval_top_k(rt, n, in[0], out);
    case WEFT__OP_TOP_K_VALUES:
        return weft__eval_top_k_values(rt, in[0], in[1], out);
    case WEFT__OP_UNSORTED_SEGMENT:
    case WEFT__OP_GATHER_ND:
    case WEFT__OP_SCATTER_ND_UPDATE:
    case WEFT__OP_SCATTER_ND_ADD:
    case WEFT__OP_SCATTER_ND_SUB:
    case WEFT__OP_SCATTER_ND_MAX:
    case WEFT__OP_SCATTER_ND_MIN:
    case WEFT__OP_ROLL:
    case WEFT__OP_REPEAT:
        return weft__eval_index_op(rt, n, in, out);
    case WEFT__OP_RANDOM_UNIFORM:
    case WEFT__OP_RANDOM_NORMAL:
    case WEFT__OP_RANDOM_TRUNCATED_NORMAL:
        return weft__eval_random(rt, n, in[0], out);
    case WEFT__OP_RANDOM_CATEGORICAL:
        return weft__eval_random_categorical(rt, n, in[0], in[1], out);
    case WEFT__OP_RANDOM_GAMMA:
    case WEFT__OP_RANDOM_POISSON:
        return weft__eval_random_counts(rt, n, in[0], in[1], NULL, out);
    case WEFT__OP_RANDOM_BINOMIAL:
        return weft__eval_random_counts(rt, n, in[0], in[1], in[2], out);
    case WEFT__OP_CTC_LOSS: case WEFT__OP_CTC_LOSS_GRAD:
        return weft__eval_ctc_loss(rt, n, in, out);
    case WEFT__OP_CHECK_NUMERICS:
    case WEFT__OP_ASSERT:
        return weft__eval_check(rt, n, in, out);
    case WEFT__OP_IMAGE_TRANSFORM:
        return weft__eval_image_transform(rt, n, in[0], in[1], out);
    case WEFT__OP_DRAW_BOXES:
        return weft__eval_draw_boxes(rt, in, out);
    case WEFT__OP_COMBINED_NMS:
        return weft__eval_combined_nms(rt, n, in, out);
    case WEFT__OP_ISOTONIC:
        return weft__eval_isotonic(rt, n, in[0], out);
    case WEFT__OP_BITCAST:
        return weft__eval_bitcast(in[0], out);
    case WEFT__OP_CTC_BEAM:
        return weft__eval_ctc_beam(rt, n, in, out);
    case WEFT__OP_CTC_UNIQUE:
        return weft__eval_ctc_unique(rt, in[0], out);
    case WEFT__OP_GLIMPSE:
        return weft__eval_glimpse(rt, n, in, out);
    case WEFT__OP_FRACTIONAL_POOL:
        return weft__eval_fractional_pool(rt, n, in, out);
    case WEFT__OP_BOX_PROPOSALS:
        return weft__eval_box_proposals(rt, n, in, out);
    case WEFT__OP_EDIT_DISTANCE:
        return weft__eval_edit_distance(rt, n, in, out);
    case WEFT__OP_CANDIDATES:
        return weft__eval_candidates(n, in[0], NULL, out);
    case WEFT__OP_UNIGRAM_CANDIDATES:
        return weft__eval_candidates(n, in[0], in[1], out);
    case WEFT__OP_BANDED_SOLVE:
        return weft__eval_banded_solve(rt, n, in[0], in[1], out);
    case WEFT__OP_NMS_PADDED:
        return weft__eval_nms_padded(rt, n, in[0], in[1], out);
    case WEFT__OP_SAMPLE_BOX:
        return weft__eval_sample_box(n, in, out);
    case WEFT__OP_INDEX_SHUFFLE:
        return weft__eval_index_shuffle(rt, n, in, out);
    case WEFT__OP_CONV2D:
        return weft__eval_conv2d(rt, n, in[0], in[1], out);
    case WEFT__OP_DEPTHWISE_CONV2D:
        return weft__eval_depthwise_conv2d(rt, n, in[0], in[1], out);
    case WEFT__OP_MAX_POOL2D:
    case WEFT__OP_AVG_POOL2D:
        return weft__eval_pool2d(rt, n, in[0], out);
    case WEFT__OP_RESIZE:
        return weft__eval_resize(rt, n, in[0], out);
    case WEFT__OP_CROP_AND_RESIZE:
        return weft__eval_crop_and_resize(rt, n, in, out);
    case WEFT__OP_UNIQUE_IDX:
        return weft__eval_unique_idx(in[0], out);
    case WEFT__OP_SEARCHSORTED:
        return weft__eval_searchsorted(rt, n, in[0], in[1], out);
    case WEFT__OP_CHOLESKY:
    case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE:
    case WEFT__OP_MATRIX_INVERSE:
    case WEFT__OP_MATRIX_EXPONENTIAL:
    case WEFT__OP_MATRIX_SQRT:
    case WEFT__OP_MATRIX_LOG:
    case WEFT__OP_MATRIX_DETERMINANT:
    case WEFT__OP_SLOGDET:
    case WEFT__OP_LU:
    case WEFT__OP_QR:
    case WEFT__OP_EIGH:
    case WEFT__OP_EIG:
    case WEFT__OP_SVD:
        return weft__eval_linalg(rt, n, in, out);
    case WEFT__OP_TRIDIAGONAL_SOLVE:
        return weft__eval_tridiagonal_solve(rt, n, in[0], in[1], out);
    case WEFT__OP_FFT:
        return weft__eval_fft(rt, n, in, out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    }
}
