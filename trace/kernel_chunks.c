/* How kernels cut their work into chunks for weft_parallel_for.
 *
 * Work above WEFT__KERNEL_SPLIT_MIN elements is cut into at most
 * intra_op_threads fixed chunks (grain 1, one index per chunk), so chunk
 * boundaries depend only on the thread count. */
#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/kernels.h"

#define CHUNK_MIN 16384     /* the least work one chunk should get */
/* Tasks per thread: with a few, a thread that falls behind (a busy CPU, a
 * late wake-up) leaves the rest of its share to the others; with many,
 * the last claims of weft_parallel_for are small, so the threads end
 * close together and the caller rarely sleeps waiting for the last one. */
#define TASKS_PER_THREAD 16

size_t weft__chunk_count(weft_runtime *rt, uint64_t work)
{
    if (!rt || work <= WEFT__KERNEL_SPLIT_MIN)
        return 1;
    uint64_t by_work = work / CHUNK_MIN;
    uint64_t threads = weft__intra_op_threads(rt);
    uint64_t c = by_work < threads ? by_work : threads;
    return c < 1 ? 1 : (size_t)c;
}

size_t weft__chunk_count_of(weft_runtime *rt, uint64_t work, uint64_t items)
{
    size_t c = weft__chunk_count(rt, work);
    return items < c ? (size_t)(items ? items : 1) : c;
}

size_t weft__task_count(size_t threads, uint64_t items)
{
    if (threads <= 1 || items <= 1)
        return 1;
    uint64_t t = (uint64_t)threads * TASKS_PER_THREAD;
    return (size_t)(t < items ? t : items);
}

uint64_t weft__chunk_begin(uint64_t total, size_t n, size_t c)
{
    uint64_t q = total / n, r = total % n;
    return q * c + (c < r ? c : r);
}

int weft__run_chunks(weft_runtime *rt, size_t n, weft_range_fn fn, void *ctx)
{
    if (n <= 1)
        return fn(0, 1, ctx);
    return weft_parallel_for(rt, n, 1, fn, ctx);
}

int weft__run_chunks_blas(weft_runtime *rt, size_t n, weft_range_fn fn, void *ctx, bool blas)
{
    if (!blas)
        return weft__run_chunks(rt, n, fn, ctx);
    weft__blas_hold();
    int rc = weft__run_chunks(rt, n, fn, ctx);
    weft__blas_release();
    return rc;
}
