/* Tensors: creation with validated shapes, atomic reference counting and
 * the public accessors. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/tensor_impl.h"

bool weft__numel_checked(int rank, const int64_t *dims, size_t elem_size, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return false;
        if (__builtin_mul_overflow(n, dims[i], &n))
            return false;
    }
    size_t bytes;
    if (__builtin_mul_overflow((uint64_t)n, (uint64_t)elem_size, &bytes))
        return false;
    *out = n;
    return true;
}

/* Validates dt, rank and dims, naming `fn` in the message. */
static int check_shape(const char *fn, weft_dtype dt, int rank, const int64_t *dims,
                       int64_t *numel)
{
    if (weft_dtype_size(dt) == 0)
        return weft__errorf(WEFT_EINVAL, "%s: unknown dtype %d", fn, (int)dt);
    if (rank < 0 || rank > WEFT_MAX_RANK)
        return weft__errorf(WEFT_EINVAL, "%s: rank %d is outside 0..%d", fn, rank,
                            WEFT_MAX_RANK);
    if (rank > 0 && !dims)
        return weft__errorf(WEFT_EINVAL, "%s: NULL dims for rank %d", fn, rank);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return weft__errorf(WEFT_EINVAL, "%s: dim %d is negative (%lld)", fn, i,
                                (long long)dims[i]);
    if (!weft__numel_checked(rank, dims, weft_dtype_size(dt), numel))
        return weft__errorf(WEFT_EINVAL, "%s: the shape overflows the address space", fn);
    return 0;
}

static int tensor_alloc(const char *fn, weft_dtype dt, int rank, const int64_t *dims,
                        weft_tensor **out)
{
    int64_t numel = 0;
    int rc = check_shape(fn, dt, rank, dims, &numel);
    if (rc < 0)
        return rc;
    weft_tensor *t = weft__malloc(sizeof *t);
    if (!t)
        goto error;
    t->refs = 1;
    t->dtype = dt;
    t->rank = rank;
    memset(t->dims, 0, sizeof t->dims);
    if (rank > 0)
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    t->numel = numel;
    t->nbytes = (size_t)numel * weft_dtype_size(dt);
    t->data = weft__tensor_buf_alloc(t->nbytes, &t->cap);
    if (!t->data)
        goto error;
    *out = t;
    return 0;
error:
    weft__free(t);
    return weft__errorf(WEFT_ENOMEM, "%s: out of memory for a tensor of %lld elements", fn,
                        (long long)numel);
}

int weft__tensor_new(weft_dtype dt, int rank, const int64_t *dims, weft_tensor **out)
{
    return tensor_alloc("weft_tensor", dt, rank, dims, out);
}

int weft__tensor_row(const weft_tensor *t, int64_t r, weft_tensor **out)
{
    int rc = tensor_alloc("weft_tensor", t->dtype, t->rank - 1, t->dims + 1, out);
    size_t bytes = t->dims[0] ? t->nbytes / (size_t)t->dims[0] : 0;
    if (rc == 0 && bytes)
        memcpy((*out)->data, (const char *)t->data + (size_t)r * bytes, bytes);
    return rc;
}

int weft__tensor_new_spec(const weft_spec *s, weft_tensor **out)
{
    if (s->rank == WEFT_RANK_ANY)
        return weft__errorf(WEFT_EINVAL, "weft_tensor: a tensor needs a known rank");
    for (int i = 0; i < s->rank && i < WEFT_MAX_RANK; i++)
        if (s->dims[i] == WEFT_DIM_ANY)
            return weft__errorf(WEFT_EINVAL, "weft_tensor: dim %d of a tensor is unknown", i);
    return tensor_alloc("weft_tensor", s->dtype, s->rank, s->dims, out);
}

void *weft__tensor_mut(weft_tensor *t)
{
    return t->data;
}

void weft__tensor_spec(const weft_tensor *t, weft_spec *out)
{
    out->dtype = t->dtype;
    out->rank = t->rank;
    memcpy(out->dims, t->dims, sizeof out->dims);
}

int weft_tensor_create(weft_dtype dt, int rank, const int64_t *dims, const void *data,
                       weft_tensor **out)
{
    if (!out)
        return weft__errorf(WEFT_EINVAL, "weft_tensor_create: NULL out");
    *out = NULL;
    weft_tensor *t;
    int rc = tensor_alloc("weft_tensor_create", dt, rank, dims, &t);
    if (rc < 0)
        return rc;
    if (!data) {
        memset(t->data, 0, t->nbytes);
    } else if (dt == WEFT_BOOL) {
        /* Kernels read bools as 0 or 1; normalise anything else. */
        const unsigned char *src = data;
        unsigned char *dst = t->data;
        for (size_t i = 0; i < t->nbytes; i++)
            dst[i] = src[i] != 0;
    } else if (t->nbytes) {
        memcpy(t->data, data, t->nbytes);
    }
    *out = t;
    return 0;
}

weft_tensor *weft_tensor_retain(weft_tensor *t)
{
    if (t)
        __atomic_fetch_add(&t->refs, 1, __ATOMIC_RELAXED);
    return t;
}

void weft_tensor_release(weft_tensor *t)
{
    if (!t)
        return;
    /* acq_rel: the freeing thread must see every other holder's writes. */
    if (__atomic_fetch_sub(&t->refs, 1, __ATOMIC_ACQ_REL) != 1)
        return;
    weft__tensor_buf_free(t->data, t->cap);
    weft__free(t);
}

weft_dtype weft_tensor_dtype(const weft_tensor *t)
{
    return t ? t->dtype : WEFT_BOOL;
}

int weft_tensor_rank(const weft_tensor *t)
{
    return t ? t->rank : -1;
}

const int64_t *weft_tensor_dims(const weft_tensor *t)
{
    return t ? t->dims : NULL;
}

int64_t weft_tensor_numel(const weft_tensor *t)
{
    return t ? t->numel : -1;
}

const void *weft_tensor_data(const weft_tensor *t)
{
    return t ? t->data : NULL;
}
