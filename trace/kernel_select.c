/* The kernels of the ops whose result size the input values decide:
 * argwhere and boolean_mask (the true elements of a mask), and unique's
 * parts (the distinct values of a vector).  They allocate their results
 * (weft__eval_from_values), except unique's indices, which have the
 * input's shape (weft__eval_unique_idx).
 *
 * The true positions are found in two passes over fixed chunks, both
 * spread over the intra-op threads: a count per chunk, then each chunk
 * writes its positions from the prefix of the counts, so the result is in
 * row-major order on any thread count.  unique's indices take one pass
 * on one thread through a hash table of the values seen (a map from a
 * value's bits to its first position, which ck_hs, a set of non-NULL
 * pointers with context-free callbacks, does not give); the first
 * positions and the counts are then read off the indices, without
 * hashing again. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

/* ---- True positions -------------------------------------------------- */

/* Whether element i of data (of dt) is nonzero: true for bool, not 0 for
 * numbers; NaN is nonzero, -0.0 is not. */
static inline bool nonzero_at(const void *data, weft_dtype dt, int64_t i)
{
    switch (dt) {
    case WEFT_BOOL: return ((const uint8_t *)data)[i] != 0;
    case WEFT_I32:  return ((const int32_t *)data)[i] != 0;
    case WEFT_I64:  return ((const int64_t *)data)[i] != 0;
    case WEFT_F32:  return ((const float *)data)[i] != 0.0f;
    default:        return ((const double *)data)[i] != 0.0;
    }
}

typedef struct positions_job {
    const void *data;
    weft_dtype dtype;
    int64_t n;          /* elements */
    size_t chunks;
    int64_t *count;     /* per chunk; then its first output index */
    int64_t total;      /* nonzero elements */
    int64_t *pos;       /* the result: flat indices of nonzero elements */
} positions_job;

static int count_chunks(size_t begin, size_t end, void *ctx)
{
    positions_job *j = ctx;
    for (size_t c = begin; c < end; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c + 1);
        int64_t cnt = 0;
        /* One loop per dtype, so that each vectorizes. */
        switch (j->dtype) {
        case WEFT_BOOL:
            for (int64_t i = lo; i < hi; i++)
                cnt += ((const uint8_t *)j->data)[i] != 0;
            break;
        case WEFT_I32:
            for (int64_t i = lo; i < hi; i++)
                cnt += ((const int32_t *)j->data)[i] != 0;
            break;
        case WEFT_I64:
            for (int64_t i = lo; i < hi; i++)
                cnt += ((const int64_t *)j->data)[i] != 0;
            break;
        case WEFT_F32:
            for (int64_t i = lo; i < hi; i++)
                cnt += ((const float *)j->data)[i] != 0.0f;
            break;
        default:
            for (int64_t i = lo; i < hi; i++)
                cnt += ((const double *)j->data)[i] != 0.0;
            break;
        }
        j->count[c] = cnt;
    }
    return 0;
}

static int write_chunks(size_t begin, size_t end, void *ctx)
{
    positions_job *j = ctx;
    for (size_t c = begin; c < end; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c + 1);
        int64_t *dst = j->pos + j->count[c];
        int64_t *end = j->pos + (c + 1 < j->chunks ? j->count[c + 1] : j->total);
        /* Branch-free: each position is stored, kept when nonzero; the
         * chunk stops at its last position, so that it never stores into
         * the next chunk's first slot. */
        for (int64_t i = lo; i < hi && dst < end; i++) {
            *dst = i;
            dst += nonzero_at(j->data, j->dtype, i);
        }
    }
    return 0;
}

/* The flat indices of t's nonzero elements, in order, into a new array
 * *pos (weft__free; NULL when there are none) of *count entries. */
static int true_positions(weft_runtime *rt, const weft_tensor *t, const char *fn, int64_t **pos,
                          int64_t *count)
{
    *pos = NULL;
    *count = 0;
    positions_job j = { .data = weft_tensor_data(t), .dtype = t->dtype, .n = t->numel };
    j.chunks = weft__chunk_count(rt, (uint64_t)t->numel);
    j.count = weft__malloc(j.chunks * sizeof *j.count);
    if (!j.count)
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", fn);
    int rc = weft__run_chunks(rt, j.chunks, count_chunks, &j);
    int64_t total = 0;
    for (size_t c = 0; c < j.chunks && rc == 0; c++) {
        int64_t k = j.count[c];
        j.count[c] = total;
        total += k;
    }
    j.total = total;
    if (rc == 0 && !(j.pos = weft__malloc(((size_t)total + 1) * sizeof *j.pos)))
        rc = weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory for %lld positions", fn,
                          (long long)total);
    if (rc == 0)
        rc = weft__run_chunks(rt, j.chunks, write_chunks, &j);
    weft__free(j.count);
    if (rc < 0) {
        weft__free(j.pos);
        return rc;
    }
    *pos = j.pos;
    *count = total;
    return 0;
}

/* ---- argwhere -------------------------------------------------------- */

typedef struct coords_job {
    const int64_t *pos;
    int64_t n;
    size_t chunks;
    int rank;
    const int64_t *dims;
    int64_t *out;       /* [n, rank] */
} coords_job;

static int coords_chunks(size_t begin, size_t end, void *ctx)
{
    coords_job *j = ctx;
    for (size_t c = begin; c < end; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->n, j->chunks, c + 1);
        for (int64_t i = lo; i < hi; i++) {
            int64_t rest = j->pos[i], *row = j->out + i * j->rank;
            for (int d = j->rank; d-- > 0;) {
                row[d] = rest % j->dims[d];
                rest /= j->dims[d];
            }
        }
    }
    return 0;
}

static int eval_argwhere(weft_runtime *rt, const weft_tensor *a, weft_tensor **out)
{
    int64_t *pos, n;
    int rc = true_positions(rt, a, "argwhere", &pos, &n);
    if (rc < 0)
        return rc;
    int64_t dims[2] = { n, a->rank };
    weft_tensor *t = NULL;
    if ((rc = weft__tensor_new(WEFT_I64, 2, dims, &t)) < 0)
        goto done;
    if (a->rank == 1) {
        if (n)
            memcpy(weft__tensor_mut(t), pos, (size_t)n * sizeof *pos);
    } else if (a->rank > 1) {
        coords_job j = { .pos = pos, .n = n, .rank = a->rank, .dims = a->dims,
                         .out = weft__tensor_mut(t) };
        j.chunks = weft__chunk_count_of(rt, weft__sat_mul((uint64_t)n, (uint64_t)a->rank),
                                        (uint64_t)n);
        rc = weft__run_chunks(rt, j.chunks, coords_chunks, &j);
    }
    if (rc < 0) {
        weft_tensor_release(t);
        goto done;
    }
    *out = t;
done:
    weft__free(pos);
    return rc;
}

/* ---- boolean_mask ---------------------------------------------------- */

typedef struct mask_job {
    const char *src;
    char *dst;
    const int64_t *pos;  /* the mask's true positions */
    int64_t n;           /* how many */
    int64_t masked;      /* elements of the masked dims */
    size_t row;          /* bytes below the masked dims */
    int64_t rows;        /* outer * n: the rows of the result */
    size_t chunks;
} mask_job;

/* Copies result rows [lo, hi): row q takes outer index q / n and mask
 * position pos[q % n]. */
static void copy_rows(const mask_job *j, int64_t lo, int64_t hi)
{
    int64_t o = lo / j->n, s = lo % j->n;
    for (int64_t q = lo; q < hi; q++) {
        const char *src = j->src + (size_t)(o * j->masked + j->pos[s]) * j->row;
        char *dst = j->dst + (size_t)q * j->row;
        switch (j->row) {
        case 1: *dst = *src; break;
        case 4: memcpy(dst, src, 4); break;
        case 8: memcpy(dst, src, 8); break;
        default: memcpy(dst, src, j->row); break;
        }
        if (++s == j->n) {
            s = 0;
            o++;
        }
    }
}

static int mask_chunks(size_t begin, size_t end, void *ctx)
{
    mask_job *j = ctx;
    for (size_t c = begin; c < end; c++)
        copy_rows(j, (int64_t)weft__chunk_begin((uint64_t)j->rows, j->chunks, c),
                  (int64_t)weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1));
    return 0;
}

/* out has tensor's dims with the mask's k dims at axis replaced by the
 * count of true elements (the shapes were checked by inference). */
static int eval_boolean_mask(weft_runtime *rt, const weft__node *n, const weft_tensor *t,
                             const weft_tensor *mask, weft_tensor **out)
{
    int axis = n->attr.index.axis < 0 ? n->attr.index.axis + t->rank : n->attr.index.axis;
    int64_t *pos, count;
    int rc = true_positions(rt, mask, "boolean_mask", &pos, &count);
    if (rc < 0)
        return rc;
    int64_t dims[WEFT_MAX_RANK], outer = 1, inner = 1;
    int rank = t->rank - mask->rank + 1;
    for (int d = 0; d < axis; d++)
        outer *= dims[d] = t->dims[d];
    dims[axis] = count;
    for (int d = axis + mask->rank; d < t->rank; d++)
        inner *= dims[d - mask->rank + 1] = t->dims[d];
    weft_tensor *r = NULL;
    if ((rc = weft__tensor_new(t->dtype, rank, dims, &r)) < 0)
        goto done;
    mask_job j = { .src = weft_tensor_data(t), .dst = weft__tensor_mut(r), .pos = pos,
                   .n = count, .masked = mask->numel,
                   .row = (size_t)inner * weft_dtype_size(t->dtype), .rows = outer * count };
    if (j.rows > 0 && j.row > 0) {
        j.chunks = weft__chunk_count_of(rt, (uint64_t)r->nbytes, (uint64_t)j.rows);
        rc = weft__run_chunks(rt, j.chunks, mask_chunks, &j);
    }
    if (rc < 0) {
        weft_tensor_release(r);
        goto done;
    }
    *out = r;
done:
    weft__free(pos);
    return rc;
}

/* ---- unique ----------------------------------------------------------- */

/* Element i's bits as a key: -0.0 as 0.0, so the two are one value. */
static uint64_t key_at(const void *data, weft_dtype dt, int64_t i)
{
    switch (dt) {
    case WEFT_BOOL: return ((const uint8_t *)data)[i];
    case WEFT_I32:  return (uint32_t)((const int32_t *)data)[i];
    case WEFT_I64:  return (uint64_t)((const int64_t *)data)[i];
    case WEFT_F32: {
        float v = ((const float *)data)[i];
        uint32_t b;
        if (v == 0.0f)
            v = 0.0f;
        memcpy(&b, &v, sizeof b);
        return b;
    }
    default: {
        double v = ((const double *)data)[i];
        uint64_t b;
        if (v == 0.0)
            v = 0.0;
        memcpy(&b, &v, sizeof b);
        return b;
    }
    }
}

static bool is_nan_at(const void *data, weft_dtype dt, int64_t i)
{
    if (dt == WEFT_F32)
        return ((const float *)data)[i] != ((const float *)data)[i];
    if (dt == WEFT_F64)
        return ((const double *)data)[i] != ((const double *)data)[i];
    return false;
}

/* MurmurHash3's 64-bit finalizer: every key bit reaches the low bits
 * that pick a slot. */
static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* unique's indices: ids[i] is element i's index among x's distinct values
 * in order of first occurrence.  A NaN equals nothing, itself included,
 * so each one is a value of its own (as in TensorFlow, whose hash map
 * compares with ==). */
int weft__eval_unique_idx(const weft_tensor *x, weft_tensor *out)
{
    int64_t n = x->numel, *ids = weft__tensor_mut(out);
    const void *data = weft_tensor_data(x);
    size_t slots = 16;
    while (slots < (size_t)n * 2)
        slots *= 2;
    /* Slot: the position of a value's first occurrence + 1; 0: empty. */
    int64_t *table = weft__calloc(slots, sizeof *table);
    if (!table)
        return weft__errorf(WEFT_ENOMEM, "weft_unique: out of memory for %lld elements",
                            (long long)n);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) {
        if (is_nan_at(data, x->dtype, i)) {
            ids[i] = u++;
            continue;
        }
        uint64_t key = key_at(data, x->dtype, i);
        size_t s = (size_t)mix(key) & (slots - 1);
        for (;;) {
            int64_t e = table[s];
            if (e == 0) {
                table[s] = i + 1;
                ids[i] = u++;
                break;
            }
            if (key_at(data, x->dtype, e - 1) == key) {
                ids[i] = ids[e - 1];
                break;
            }
            s = (s + 1) & (slots - 1);
        }
    }
    weft__free(table);
    return 0;
}

/* From unique's indices, whose new values count up from 0 in order:
 * UNIQUE_FIRST, the positions where each distinct value first occurs (an
 * index seen for the first time); UNIQUE_COUNTS, how many elements each
 * has. */
static int eval_unique_part(const weft__node *n, const weft_tensor *idx, weft_tensor **out)
{
    const int64_t *ids = weft_tensor_data(idx);
    int64_t u = 0;
    for (int64_t i = 0; i < idx->numel; i++)
        u += ids[i] == u;
    weft_tensor *t = NULL;
    int rc = weft__tensor_new(WEFT_I64, 1, &u, &t);
    if (rc < 0)
        return rc;
    int64_t *dst = weft__tensor_mut(t);
    if (n->op == WEFT__OP_UNIQUE_FIRST) {
        int64_t seen = 0;
        for (int64_t i = 0; i < idx->numel; i++)
            if (ids[i] == seen)
                dst[seen++] = i;
    } else {
        if (u)
            memset(dst, 0, (size_t)u * sizeof *dst);
        for (int64_t i = 0; i < idx->numel; i++)
            if (ids[i] >= 0 && ids[i] < u)
                dst[ids[i]]++;
    }
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
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: its result's size is not decided by its "
                            "values", weft__op_name(n->op));
    }
}
