/* The tensor object and spec helpers, shared by the files of trace/.
 * trace/ internal; cache/ uses the public accessors. */
#ifndef WEFT_TRACE_TENSOR_IMPL_H
#define WEFT_TRACE_TENSOR_IMPL_H

#include <stdbool.h>
#include <weft.h>

struct weft_tensor {
    int        refs;                 /* atomic (__atomic builtins) */
    weft_dtype dtype;
    int        rank;
    int64_t    dims[WEFT_MAX_RANK];
    int64_t    numel;
    size_t     nbytes;
    size_t     cap;                  /* bytes the buffer holds (>= nbytes) */
    void      *data;                 /* 64-byte aligned, from weft__tensor_buf_alloc */
};

/* Tensor buffers (trace/buf_cache.c).  Freed buffers of 16 KiB to 128 MiB
 * are kept, process-wide and bounded (128 MiB in all), for the next tensor
 * of their size class, because a fresh buffer of that size often comes from
 * the kernel and pays a page fault per 4 KiB on first touch, which costs
 * more than an elementwise pass over it.  *cap receives the buffer's real
 * size (>= nbytes); weft__tensor_buf_free wants it back. */
void *weft__tensor_buf_alloc(size_t nbytes, size_t *cap);
void  weft__tensor_buf_free(void *data, size_t cap);
/* Frees every cached buffer of the shared classes and of the calling
 * thread's own (other threads' own small buffers stay theirs); the bytes
 * the cache holds now, every thread's own included. */
void  weft__tensor_buf_cache_drain(void);
size_t weft__tensor_buf_cache_bytes(void);

/* Element i of an i32 or i64 tensor (lengths, sizes, seeds), as int64_t. */
static inline int64_t weft__tensor_int_at(const weft_tensor *t, int64_t i)
{
    return t->dtype == WEFT_I32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

/* A tensor with uninitialised data (one reference), for kernels to fill.
 * Validates dt, rank and dims; numel overflow is caught before allocating. */
int   weft__tensor_new(weft_dtype dt, int rank, const int64_t *dims, weft_tensor **out);
/* Row r along dim 0 of t (rank >= 1, r < dims[0]) as a new tensor. */
int   weft__tensor_row(const weft_tensor *t, int64_t r, weft_tensor **out);
int   weft__tensor_new_spec(const weft_spec *s, weft_tensor **out);   /* all dims known */
/* Writable data: only while the caller holds the only reference. */
void *weft__tensor_mut(weft_tensor *t);
/* The spec of t. */
void  weft__tensor_spec(const weft_tensor *t, weft_spec *out);

/* numel of dims[0..rank) into *out; false on a negative dim or overflow
 * (past INT64_MAX elements or SIZE_MAX bytes of elem_size). */
bool  weft__numel_checked(int rank, const int64_t *dims, size_t elem_size, int64_t *out);
/* Formats s like weft_spec_format into buf (always terminated); returns buf,
 * for use inside messages. */
const char *weft__spec_str(const weft_spec *s, char *buf, size_t size);
#define WEFT__SPEC_STR_MAX 96
/* True when s's rank and every dim are known, as a tensor's are. */
bool  weft__spec_is_concrete(const weft_spec *s);
/* True when a and b have the same dtype, rank and dims (unknown ones
 * included: WEFT_DIM_ANY equals only WEFT_DIM_ANY). */
bool  weft__spec_equal(const weft_spec *a, const weft_spec *b);
/* True when every known dim and the dtype of pattern match actual (an
 * unknown rank or dim in pattern matches anything). */
bool  weft__spec_matches(const weft_spec *pattern, const weft_spec *actual);

#endif
