/* The kernels of the ops whose result size the input values decide:
 * argwhere and boolean_mask (the true elements of a mask), unique's parts
 * (the distinct values of a vector), the sorted segment ops (one row per
 * id up to the last), bincount (one bin per value up to the largest),
 * confusion_matrix (a bin per pair of classes) and range_to (0..n-1).
 * They allocate their results (weft__eval_from_values), except unique's
 * indices, which have the input's shape (weft__eval_unique_idx).
 *
 * argwhere and boolean_mask take two passes over fixed chunks, both
 * spread over the intra-op threads: a count per chunk, then each chunk
 * writes its part from the prefix of the counts, so the result is in
 * row-major order on any thread count.  unique's indices take one pass
 * on one thread through a hash table of the values seen (a map from a
 * value's bits to its index among the distinct ones, which ck_hs, a set
 * of non-NULL pointers with context-free callbacks, does not give),
 * sized by the distinct values; the first positions and the counts are
 * then read off the indices in one more pass, without hashing again. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

/* ---- Counting and writing in chunks ------------------------------------ */

/* Whether element i of data (of dt) is nonzero: true for bool, not 0 for
 * numbers; NaN is nonzero, -0.0 is not.  Inlined into loops specialized
 * on dt, so that no loop switches per element. */
static inline __attribute__((always_inline)) bool nonzero_at(const void *data, weft_dtype dt,
                                                              int64_t i)
{
    switch (dt) {
    case WEFT_BOOL: return ((const uint8_t *)data)[i] != 0;
    case WEFT_I32:  return ((const int32_t *)data)[i] != 0;
    case WEFT_I64:  return ((const int64_t *)data)[i] != 0;
    case WEFT_F32:  return ((const float *)data)[i] != 0.0f;
    default:        return ((const double *)data)[i] != 0.0;
    }
}

/* A selection over the n elements of a condition or mask, cut into fixed
 * chunks: a first pass counts each chunk's true elements, a second writes
 * each chunk's part of the result from the prefix of the counts. */
typedef struct select_job {
    const void *cond;
    weft_dtype dtype;
    int64_t n;
    size_t chunks;
    int64_t *first;      /* per chunk: its count, then its first result row */
    int64_t total;       /* true elements */
    /* argwhere: the condition's dims; the result, [total, rank]. */
    int rank;
    const int64_t *dims;
    int64_t *coords;
    /* boolean_mask: tensor [outer, n, row bytes] into [outer, total, row]. */
    const char *src;
    char *dst;
    int64_t outer;
    size_t row;
} select_job;

static inline int64_t chunk_lo(const select_job *j, size_t c)
{
    return (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c);
}

static inline __attribute__((always_inline)) int64_t count_true(const void *cond, weft_dtype dt,
                                                                int64_t lo, int64_t hi)
{
    int64_t cnt = 0;
    for (int64_t i = lo; i < hi; i++)
        cnt += nonzero_at(cond, dt, i);
    return cnt;
}

static int count_chunks(size_t begin, size_t end, void *ctx)
{
    select_job *j = ctx;
    for (size_t c = begin; c < end; c++) {
        int64_t lo = chunk_lo(j, c), hi = chunk_lo(j, c + 1);
        switch (j->dtype) {
        case WEFT_BOOL: j->first[c] = count_true(j->cond, WEFT_BOOL, lo, hi); break;
        case WEFT_I32:  j->first[c] = count_true(j->cond, WEFT_I32, lo, hi); break;
        case WEFT_I64:  j->first[c] = count_true(j->cond, WEFT_I64, lo, hi); break;
        case WEFT_F32:  j->first[c] = count_true(j->cond, WEFT_F32, lo, hi); break;
        default:        j->first[c] = count_true(j->cond, WEFT_F64, lo, hi); break;
        }
    }
    return 0;
}

/* The first pass: j->first[c] becomes chunk c's first result row and
 * j->total the count.  chunks as the caller chose (the second pass cuts
 * the same way). */
static int select_count(weft_runtime *rt, select_job *j, const char *fn)
{
    j->first = weft__malloc((j->chunks + 1) * sizeof *j->first);
    if (!j->first)
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", fn);
    int rc = weft__run_chunks(rt, j->chunks, count_chunks, j);
    if (rc < 0)
        return rc;
    int64_t total = 0;
    for (size_t c = 0; c < j->chunks; c++) {
        int64_t k = j->first[c];
        j->first[c] = total;
        total += k;
    }
    j->first[j->chunks] = total;
    j->total = total;
    return 0;
}

/* ---- argwhere -------------------------------------------------------- */

/* Chunk [lo, hi) of argwhere: each element's coordinates are stored and
 * kept when it is nonzero (no branch on the data); the chunk stops at its
 * last row, so that it never stores into the next chunk's first one. */
static inline __attribute__((always_inline)) void argwhere_chunk(const select_job *j,
                                                                 weft_dtype dt, size_t c)
{
    int64_t lo = chunk_lo(j, c), hi = chunk_lo(j, c + 1);
    int rank = j->rank;
    int64_t *dst = j->coords + j->first[c] * rank, *end = j->coords + j->first[c + 1] * rank;
    if (rank == 1) {
        for (int64_t i = lo; i < hi && dst < end; i++) {
            *dst = i;
            dst += nonzero_at(j->cond, dt, i);
        }
        return;
    }
    if (rank == 2) {
        /* The common case, its two coordinates in registers. */
        int64_t cols = j->dims[1], r = lo / cols, col = lo % cols;
        for (int64_t i = lo; i < hi && dst < end; i++) {
            dst[0] = r;
            dst[1] = col;
            dst += nonzero_at(j->cond, dt, i) ? 2 : 0;
            if (++col == cols) {
                col = 0;
                r++;
            }
        }
        return;
    }
    /* The coordinates of lo, then counted up element by element. */
    int64_t at[WEFT_MAX_RANK], rest = lo;
    for (int d = rank; d-- > 0;) {
        at[d] = rest % j->dims[d];
        rest /= j->dims[d];
    }
    int64_t last = j->dims[rank - 1];
    for (int64_t i = lo; i < hi && dst < end; i++) {
        for (int d = 0; d < rank; d++)
            dst[d] = at[d];
        dst += nonzero_at(j->cond, dt, i) ? rank : 0;
        if (++at[rank - 1] < last)
            continue;
        for (int d = rank - 1; d > 0 && at[d] == j->dims[d]; d--) {
            at[d] = 0;
            at[d - 1]++;
        }
    }
}

static int argwhere_chunks(size_t begin, size_t end, void *ctx)
{
    select_job *j = ctx;
    for (size_t c = begin; c < end; c++) {
        switch (j->dtype) {
        case WEFT_BOOL: argwhere_chunk(j, WEFT_BOOL, c); break;
        case WEFT_I32:  argwhere_chunk(j, WEFT_I32, c); break;
        case WEFT_I64:  argwhere_chunk(j, WEFT_I64, c); break;
        case WEFT_F32:  argwhere_chunk(j, WEFT_F32, c); break;
        default:        argwhere_chunk(j, WEFT_F64, c); break;
        }
    }
    return 0;
}

static int eval_argwhere(weft_runtime *rt, const weft_tensor *a, weft_tensor **out)
{
    select_job j = { .cond = weft_tensor_data(a), .dtype = a->dtype, .n = a->numel,
                     .rank = a->rank, .dims = a->dims };
    j.chunks = weft__chunk_count_of(rt, weft__sat_mul((uint64_t)a->numel,
                                                      (uint64_t)(a->rank ? a->rank : 1)),
                                    (uint64_t)a->numel);
    weft_tensor *t = NULL;
    int rc = select_count(rt, &j, "argwhere");
    if (rc == 0)
        rc = weft__tensor_new(WEFT_I64, 2, (int64_t[]){ j.total, a->rank }, &t);
    if (rc == 0 && j.total > 0 && a->rank > 0) {
        j.coords = weft__tensor_mut(t);
        rc = weft__run_chunks(rt, j.chunks, argwhere_chunks, &j);
    }
    weft__free(j.first);
    if (rc < 0) {
        weft_tensor_release(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* ---- boolean_mask ---------------------------------------------------- */

/* The kept rows of src[lo, hi) (row bytes each) to dst, one after the
 * other.  Inlined with a constant row for each common size, so that the
 * copy is a few vector moves and the loop has no per-row dispatch (a
 * switch on the size per kept row cost 1.2x of a C loop's time). */
static inline __attribute__((always_inline)) void mask_rows(char *dst, const char *src,
                                                            const uint8_t *m, int64_t lo,
                                                            int64_t hi, size_t row)
{
    src += (size_t)lo * row;
    for (int64_t i = lo; i < hi; i++, src += row)
        if (m[i]) {
            memcpy(dst, src, row);
            dst += row;
        }
}

/* Chunk c of the mask, for every outer index: its kept rows go to the
 * chunk's place in that outer index's block of total rows. */
static int mask_chunks(size_t begin, size_t end, void *ctx)
{
    const select_job *j = ctx;
    const uint8_t *m = j->cond;
    for (size_t c = begin; c < end; c++) {
        int64_t lo = chunk_lo(j, c), hi = chunk_lo(j, c + 1);
        for (int64_t o = 0; o < j->outer; o++) {
            const char *src = j->src + (size_t)(o * j->n) * j->row;
            char *dst = j->dst + (size_t)(o * j->total + j->first[c]) * j->row;
            switch (j->row) {
            case 1:  mask_rows(dst, src, m, lo, hi, 1); break;
            case 2:  mask_rows(dst, src, m, lo, hi, 2); break;
            case 4:  mask_rows(dst, src, m, lo, hi, 4); break;
            case 8:  mask_rows(dst, src, m, lo, hi, 8); break;
            case 16: mask_rows(dst, src, m, lo, hi, 16); break;
            case 32: mask_rows(dst, src, m, lo, hi, 32); break;
            case 64: mask_rows(dst, src, m, lo, hi, 64); break;
            default: mask_rows(dst, src, m, lo, hi, j->row); break;
            }
        }
    }
    return 0;
}

/* out has t's dims with the mask's k dims at axis replaced by the count
 * of true elements (the shapes were checked by inference). */
static int eval_boolean_mask(weft_runtime *rt, const weft__node *n, const weft_tensor *t,
                             const weft_tensor *mask, weft_tensor **out)
{
    int axis = n->attr.index.axis < 0 ? n->attr.index.axis + t->rank : n->attr.index.axis;
    int64_t dims[WEFT_MAX_RANK], outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= dims[d] = t->dims[d];
    for (int d = axis + mask->rank; d < t->rank; d++)
        inner *= dims[d - mask->rank + 1] = t->dims[d];
    select_job j = { .cond = weft_tensor_data(mask), .dtype = WEFT_BOOL, .n = mask->numel,
                     .src = weft_tensor_data(t), .outer = outer,
                     .row = (size_t)inner * weft_dtype_size(t->dtype) };
    j.chunks = weft__chunk_count_of(rt, (uint64_t)t->nbytes, (uint64_t)mask->numel);
    weft_tensor *r = NULL;
    int rc = select_count(rt, &j, "boolean_mask");
    if (rc == 0) {
        dims[axis] = j.total;
        rc = weft__tensor_new(t->dtype, t->rank - mask->rank + 1, dims, &r);
    }
    if (rc == 0 && r->nbytes > 0) {
        j.dst = weft__tensor_mut(r);
        rc = weft__run_chunks(rt, j.chunks, mask_chunks, &j);
    }
    weft__free(j.first);
    if (rc < 0) {
        weft_tensor_release(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* ---- unique ----------------------------------------------------------- */

/* Element i's bits as a key: -0.0 as 0.0, so the two are one value.
 * Inlined into loops specialized on dt. */
static inline __attribute__((always_inline)) uint64_t key_at(const void *data, weft_dtype dt,
                                                             int64_t i)
{
    switch (dt) {
    case WEFT_BOOL: return ((const uint8_t *)data)[i];
    case WEFT_I32:  return (uint32_t)((const int32_t *)data)[i];
    case WEFT_I64:  return (uint64_t)((const int64_t *)data)[i];
    case WEFT_F32: {
        float v = ((const float *)data)[i] + 0.0f;   /* -0.0 + 0.0 is 0.0 */
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        return b;
    }
    default: {
        double v = ((const double *)data)[i] + 0.0;
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        return b;
    }
    }
}

static inline __attribute__((always_inline)) bool is_nan_at(const void *data, weft_dtype dt,
                                                            int64_t i)
{
    if (dt == WEFT_F32)
        return ((const float *)data)[i] != ((const float *)data)[i];
    if (dt == WEFT_F64)
        return ((const double *)data)[i] != ((const double *)data)[i];
    return false;
}

/* The hash table of unique: slots hold a distinct value's index + 1 (0:
 * empty), keys[] the distinct values' keys in order, densely, so that a
 * probe compares against a small array rather than the input.  Slots are
 * picked by Fibonacci hashing (the top bits of key * 2^64 / phi, which
 * every key bit reaches).  The table starts small and doubles when half
 * full, so that it is sized by the distinct values rather than the
 * elements and its probes stay in cache (1e5 values among 1e6 elements:
 * 256 Ki slots, not 2 Mi). */
typedef struct unique_table {
    int64_t *slot;
    uint64_t *keys;
    unsigned shift;       /* 64 - log2(slots) */
    size_t mask;          /* slots - 1 */
} unique_table;

#define UNIQUE_FIRST_BITS 10

static inline size_t unique_slot_of(const unique_table *h, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> h->shift);
}

/* Doubles the slots and puts the u distinct keys back (a NaN's too: no
 * lookup can match its bits, so it only takes a slot).  Returns false
 * when out of memory (the table is then unchanged). */
static bool unique_grow(unique_table *h, int64_t u)
{
    size_t slots = (h->mask + 1) * 2;
    int64_t *slot = weft__calloc(slots, sizeof *slot);
    if (!slot)
        return false;
    weft__free(h->slot);
    h->slot = slot;
    h->mask = slots - 1;
    h->shift--;
    for (int64_t k = 0; k < u; k++) {
        size_t s = unique_slot_of(h, h->keys[k]);
        while (h->slot[s] != 0)
            s = (s + 1) & h->mask;
        h->slot[s] = k + 1;
    }
    return true;
}

/* Returns false when out of memory. */
static inline __attribute__((always_inline)) bool unique_loop(unique_table *h, const void *data,
                                                              weft_dtype dt, int64_t n,
                                                              int64_t *ids)
{
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t key = key_at(data, dt, i);
        if (is_nan_at(data, dt, i)) {
            /* Never in the slots: a NaN equals nothing. */
            h->keys[u] = key;
            ids[i] = u++;
            continue;
        }
        size_t s = unique_slot_of(h, key);
        for (;;) {
            int64_t e = h->slot[s];
            if (e == 0) {
                h->slot[s] = u + 1;
                h->keys[u] = key;
                ids[i] = u++;
                if ((size_t)u * 2 > h->mask && !unique_grow(h, u))
                    return false;
                break;
            }
            if (h->keys[e - 1] == key) {
                ids[i] = e - 1;
                break;
            }
            s = (s + 1) & h->mask;
        }
    }
    return true;
}

/* unique's indices: ids[i] is element i's index among x's distinct values
 * in order of first occurrence.  A NaN equals nothing, itself included,
 * so each one is a value of its own (as in TensorFlow, whose hash map
 * compares with ==). */
int weft__eval_unique_idx(const weft_tensor *x, weft_tensor *out)
{
    int64_t n = x->numel, *ids = weft__tensor_mut(out);
    const void *data = weft_tensor_data(x);
    unique_table h = { .shift = 64 - UNIQUE_FIRST_BITS,
                       .mask = ((size_t)1 << UNIQUE_FIRST_BITS) - 1 };
    h.slot = weft__calloc(h.mask + 1, sizeof *h.slot);
    h.keys = weft__malloc(((size_t)n + 1) * sizeof *h.keys);
    bool ok = h.slot && h.keys;
    if (ok) {
        switch (x->dtype) {
        case WEFT_BOOL: ok = unique_loop(&h, data, WEFT_BOOL, n, ids); break;
        case WEFT_I32:  ok = unique_loop(&h, data, WEFT_I32, n, ids); break;
        case WEFT_I64:  ok = unique_loop(&h, data, WEFT_I64, n, ids); break;
        case WEFT_F32:  ok = unique_loop(&h, data, WEFT_F32, n, ids); break;
        default:        ok = unique_loop(&h, data, WEFT_F64, n, ids); break;
        }
    }
    weft__free(h.slot);
    weft__free(h.keys);
    if (!ok)
        return weft__errorf(WEFT_ENOMEM, "weft_unique: out of memory for %lld elements",
                            (long long)n);
    return 0;
}

/* buf (*cap elements) grown to hold at least need, the new part zeroed.
 * Returns false when out of memory (buf is then unchanged). */
static bool grow_counts(int64_t **buf, size_t *cap, size_t need)
{
    size_t c = *cap;
    while (c < need)
        c *= 2;
    int64_t *b = weft__realloc(*buf, c * sizeof *b);
    if (!b)
        return false;
    memset(b + *cap, 0, (c - *cap) * sizeof *b);
    *buf = b;
    *cap = c;
    return true;
}

/* From unique's indices, whose new values count up from 0 in order:
 * UNIQUE_FIRST, the positions where each distinct value first occurs (an
 * index seen for the first time); UNIQUE_COUNTS, how many elements each
 * has.  One pass, into a buffer that doubles as the distinct values come
 * (a pass for their number first cost 5% of unique's time). */
static int eval_unique_part(const weft__node *n, const weft_tensor *idx, weft_tensor **out)
{
    const int64_t *ids = weft_tensor_data(idx);
    size_t cap = 1024, u = 0;
    int64_t *buf = weft__calloc(cap, sizeof *buf);
    bool ok = buf != NULL;
    if (ok && n->op == WEFT__OP_UNIQUE_FIRST) {
        for (int64_t i = 0; i < idx->numel && ok; i++)
            if (ids[i] == (int64_t)u) {
                if (u == cap && !(ok = grow_counts(&buf, &cap, u + 1)))
                    break;
                buf[u++] = i;
            }
    } else if (ok) {
        for (int64_t i = 0; i < idx->numel; i++) {
            int64_t id = ids[i];
            if (id < 0)
                continue;
            if ((size_t)id >= cap && !(ok = grow_counts(&buf, &cap, (size_t)id + 1)))
                break;
            buf[id]++;
            u = (size_t)id >= u ? (size_t)id + 1 : u;
        }
    }
    weft_tensor *t = NULL;
    int64_t dim = (int64_t)u;
    int rc = ok ? weft__tensor_new(WEFT_I64, 1, &dim, &t)
                : weft__errorf(WEFT_ENOMEM, "weft_unique: out of memory for %zu values", cap);
    if (rc == 0 && u)
        memcpy(weft__tensor_mut(t), buf, u * sizeof *buf);
    weft__free(buf);
    if (rc < 0)
        return rc;
    *out = t;
    return 0;
}

/* ---- Sorted segments ------------------------------------------------- */

/* tf.math.segment_*: the ids checked (non-negative, sorted), then the
 * unsorted op's kernel with one segment per id up to the last.  An empty
 * segment (an id skipped) is 0 for every reduction but PROD (1), as in
 * TensorFlow, where the unsorted MAX and MIN give the dtype's extremes. */
static int eval_segment(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor **out)
{
    const weft_tensor *data = in[0], *ids = in[1];
    int64_t prev = 0;
    for (int64_t i = 0; i < ids->numel; i++) {
        int64_t id = weft__index_at(ids, i);
        if (id < 0)
            return weft__errorf(WEFT_EINVAL, "weft_segment: segment id %lld (at %lld) is "
                                "negative", (long long)id, (long long)i);
        if (id < prev)
            return weft__errorf(WEFT_EINVAL, "weft_segment: segment id %lld (at %lld) is below "
                                "the one before it (%lld): the ids are not sorted",
                                (long long)id, (long long)i, (long long)prev);
        prev = id;
    }
    weft__node u = *n;
    u.op = WEFT__OP_UNSORTED_SEGMENT;
    u.attr.index.count = ids->numel ? prev + 1 : 0;
    weft_spec is[2], os;
    weft__tensor_spec(data, &is[0]);
    weft__tensor_spec(ids, &is[1]);
    weft_tensor *t = NULL;
    int rc = weft__infer_spec(&u, is, &os);
    if (rc == 0)
        rc = weft__tensor_new_spec(&os, &t);
    if (rc == 0)
        rc = weft__eval_index_op(rt, &u, in, t);
    int kind = n->attr.index.kind;
    if (rc == 0 && (kind == WEFT_R_MAX || kind == WEFT_R_MIN) && t->nbytes > 0) {
        size_t row = t->nbytes / (size_t)u.attr.index.count;
        char *dst = weft__tensor_mut(t);
        for (int64_t i = 0, next = 0; i < ids->numel; i++) {
            int64_t id = weft__index_at(ids, i);
            if (id > next)
                memset(dst + (size_t)next * row, 0, (size_t)(id - next) * row);
            next = id + 1;
        }
    }
    if (rc < 0) {
        weft_tensor_release(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* ---- bincount and confusion_matrix ------------------------------------- */

/* A bin's sum: integers in uint64 (wrapping as the dtype does once
 * truncated), floats in f64, rounded once when stored. */
typedef union bin_sum {
    double f;
    uint64_t u;
} bin_sum;

/* Adds 1, or weight i of w (NULL: none), to *bin; dt is the result's. */
static void bin_add(bin_sum *bin, const weft_tensor *w, int64_t i, weft_dtype dt)
{
    if (!w) {
        if (dt == WEFT_F32 || dt == WEFT_F64)
            bin->f += 1;
        else
            bin->u++;
        return;
    }
    const void *wd = weft_tensor_data(w);
    switch (dt) {
    case WEFT_I32: bin->u += (uint64_t)(int64_t)((const int32_t *)wd)[i]; break;
    case WEFT_I64: bin->u += (uint64_t)((const int64_t *)wd)[i]; break;
    case WEFT_F32: bin->f += ((const float *)wd)[i]; break;
    default:       bin->f += ((const double *)wd)[i]; break;
    }
}

/* A tensor of dtype dt and dims[0..rank) with zeroed sums for its
 * elements, or an error naming fn. */
static int bins_new(const char *fn, weft_dtype dt, int rank, const int64_t *dims,
                    weft_tensor **t, bin_sum **sums)
{
    int rc = weft__tensor_new(dt, rank, dims, t);
    if (rc < 0)
        return rc;
    size_t count = (size_t)(*t)->numel;
    *sums = weft__calloc(count ? count : 1, sizeof **sums);
    if (!*sums) {
        weft_tensor_release(*t);
        *t = NULL;
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory for %zu bins", fn, count);
    }
    return 0;
}

/* The sums into t's elements in its dtype; frees them. */
static void bins_store(bin_sum *sums, weft_tensor *t)
{
    void *dst = weft__tensor_mut(t);
    for (int64_t b = 0; b < t->numel; b++) {
        switch (t->dtype) {
        case WEFT_BOOL: ((uint8_t *)dst)[b] = sums[b].u != 0; break;
        case WEFT_I32:  ((int32_t *)dst)[b] = (int32_t)(uint32_t)sums[b].u; break;
        case WEFT_I64:  ((int64_t *)dst)[b] = (int64_t)sums[b].u; break;
        case WEFT_F32:  ((float *)dst)[b] = (float)sums[b].f; break;
        default:        ((double *)dst)[b] = sums[b].f; break;
        }
    }
    weft__free(sums);
}

/* tf.math.bincount: counts (or summed weights) of each value below the
 * result's length, in index order. */
static int eval_bincount(const weft__node *n, weft_tensor *const *in, weft_tensor **out)
{
    const weft_tensor *a = in[0], *w = n->n_in == 2 ? in[1] : NULL;
    int64_t top = -1;
    for (int64_t i = 0; i < a->numel; i++) {
        int64_t v = weft__index_at(a, i);
        if (v < 0)
            return weft__errorf(WEFT_EINVAL, "weft_bincount: value %lld (at %lld) is negative",
                                (long long)v, (long long)i);
        top = v > top ? v : top;
    }
    int64_t len = top + 1;
    if (len < n->attr.bincount.minlength)
        len = n->attr.bincount.minlength;
    if (n->attr.bincount.maxlength >= 0 && len > n->attr.bincount.maxlength)
        len = n->attr.bincount.maxlength;
    weft_dtype dt = w ? w->dtype : n->attr.bincount.dtype;
    weft_tensor *t = NULL;
    bin_sum *sums = NULL;
    int rc = bins_new("weft_bincount", dt, 1, &len, &t, &sums);
    if (rc < 0)
        return rc;
    for (int64_t i = 0; i < a->numel; i++) {
        int64_t v = weft__index_at(a, i);
        if (v < len)
            bin_add(&sums[v], w, i, dt);
    }
    bins_store(sums, t);
    *out = t;
    return 0;
}

/* tf.math.confusion_matrix: element (label, prediction) counts (or sums
 * the weights of) the positions with that pair, in index order.  Every
 * label and prediction is checked before any is counted. */
static int eval_confusion_matrix(const weft__node *n, weft_tensor *const *in, weft_tensor **out)
{
    const weft_tensor *w = n->n_in == 3 ? in[2] : NULL;
    int64_t classes = n->attr.confusion.num_classes, top = -1;
    for (int k = 0; k < 2; k++)
        for (int64_t i = 0; i < in[k]->numel; i++) {
            int64_t v = weft__index_at(in[k], i);
            if (v < 0 || (classes >= 0 && v >= classes))
                return weft__errorf(WEFT_EINVAL, "weft_confusion_matrix: %s %lld (at %lld) is "
                                    "%s%lld", k ? "prediction" : "label", (long long)v,
                                    (long long)i, v < 0 ? "negative" : "not below num_classes ",
                                    v < 0 ? 0LL : (long long)classes);
            top = v > top ? v : top;
        }
    if (classes < 0)
        classes = top + 1;
    weft_tensor *t = NULL;
    bin_sum *sums = NULL;
    int rc = bins_new("weft_confusion_matrix", n->attr.confusion.dtype, 2,
                      (const int64_t[]){ classes, classes }, &t, &sums);
    if (rc < 0)
        return rc;
    for (int64_t i = 0; i < in[0]->numel; i++)
        bin_add(&sums[weft__index_at(in[0], i) * classes + weft__index_at(in[1], i)], w, i,
                t->dtype);
    bins_store(sums, t);
    *out = t;
    return 0;
}

/* ---- range_to ------------------------------------------------------------ */

/* 0, 1, ..., limit - 1 (nothing for a limit <= 0). */
static int eval_range_to(const weft_tensor *limit, weft_tensor **out)
{
    int64_t n = weft__index_at(limit, 0);
    n = n < 0 ? 0 : n;
    weft_tensor *t = NULL;
    int rc = weft__tensor_new(WEFT_I64, 1, &n, &t);
    if (rc < 0)
        return rc;
    int64_t *dst = weft__tensor_mut(t);
    for (int64_t i = 0; i < n; i++)
        dst[i] = i;
    *out = t;
    return 0;
}

/* ---- Entry ------------------------------------------------------------- */

int weft__eval_from_values(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor **out)
{
    *out = NULL;
    switch (n->op) {
    case WEFT__OP_ARGWHERE:
        return eval_argwhere(rt, in[0], out);
    case WEFT__OP_BOOLEAN_MASK:
        return eval_boolean_mask(rt, n, in[0], in[1], out);
    case WEFT__OP_UNIQUE_FIRST:
    case WEFT__OP_UNIQUE_COUNTS:
        return eval_unique_part(n, in[0], out);
    case WEFT__OP_SEGMENT:
        return eval_segment(rt, n, in, out);
    case WEFT__OP_BINCOUNT:
        return eval_bincount(n, in, out);
    case WEFT__OP_CONFUSION_MATRIX:
        return eval_confusion_matrix(n, in, out);
    case WEFT__OP_RANGE_TO:
        return eval_range_to(in[0], out);
    case WEFT__OP_NON_MAX_SUPPRESSION:
    case WEFT__OP_NMS_OVERLAPS:
        return weft__eval_nms(n, in[0], in[1], out);
    case WEFT__OP_NMS_SCORED:
        return weft__eval_nms_scored(n, in[0], in[1], out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: its result's size is not decided by its "
                            "values", weft__op_name(n->op));
    }
}
