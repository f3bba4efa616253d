/* Tensor buffers and the process-wide cache of freed ones.
 *
 * Why a cache: a buffer of more than a few pages that goes back to the C
 * library is often handed back to the kernel (glibc trims the top of its
 * heap once 128 KiB there are free, and serves large blocks from mmap), so
 * the next tensor of that size pays a page fault per 4 KiB on first touch.
 * Four eager elementwise ops on f32[100000] spent 99% of their time in
 * those faults on a virtual machine (3.4 ms against 40 us with the buffers
 * kept, bench_eager).
 *
 * Buffers of BUF_MIN..BUF_MAX bytes are rounded up to a size class, four
 * per doubling (at most 25% more), so that a freed buffer fits the next
 * request of its class exactly.  Each class keeps up to BUF_DEPTH freed
 * buffers, newest on top (still in cache); all of them together hold at
 * most BUF_BYTES, and the oldest buffer of all goes first when a new one
 * needs room.  One mutex guards the classes: it is taken once per buffer
 * of 16 KiB or more, never per element, and holds no call into the C
 * library.  Under AddressSanitizer a cached buffer is poisoned, so that a
 * use after release is still reported. */
#include <pthread.h>
#include <stdint.h>

#include "base/base.h"
#include "base/sanitizer.h"
#include "trace/tensor_impl.h"

#ifdef WEFT__ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum {
    BUF_MIN_LOG2 = 14,                                   /* 16 KiB */
    BUF_MAX_LOG2 = 27,                                   /* 128 MiB */
    BUF_STEPS = 4,                                       /* classes per doubling */
    BUF_CLASSES = (BUF_MAX_LOG2 - BUF_MIN_LOG2) * BUF_STEPS + 1,
    BUF_DEPTH = 16,
};
#define BUF_MIN   ((size_t)1 << BUF_MIN_LOG2)
#define BUF_MAX   ((size_t)1 << BUF_MAX_LOG2)
#define BUF_BYTES ((size_t)128 << 20)

typedef struct buf_class {
    unsigned n;
    struct {
        void    *data;
        uint64_t seq;        /* when it was cached: the smallest goes first */
    } e[BUF_DEPTH];          /* e[0] oldest, e[n - 1] newest */
} buf_class;

static struct {
    pthread_mutex_t mu;
    size_t bytes;
    uint64_t seq;
    buf_class cls[BUF_CLASSES];
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t class_size(unsigned c)
{
    size_t base = (size_t)1 << (BUF_MIN_LOG2 + c / BUF_STEPS);
    return base / BUF_STEPS * (BUF_STEPS + c % BUF_STEPS);
}

/* The smallest class whose size holds n bytes, BUF_MIN <= n <= BUF_MAX. */
static unsigned class_of(size_t n)
{
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)n);
    size_t base = (size_t)1 << k, step = base / BUF_STEPS;
    size_t j = (n - base + step - 1) / step;             /* 0 .. BUF_STEPS */
    return (k - BUF_MIN_LOG2) * BUF_STEPS + (unsigned)j;
}

static bool cacheable(size_t n)
{
    return n >= BUF_MIN && n <= BUF_MAX;
}

/* Takes the oldest buffer of class c off it (under the mutex); the buffer
 * is chained through its first bytes onto *evicted, to be freed after the
 * mutex is let go. */
static void evict_oldest_of(unsigned c, void **evicted)
{
    buf_class *k = &cache.cls[c];
    void *data = k->e[0].data;
    k->n--;
    for (unsigned i = 0; i < k->n; i++)
        k->e[i] = k->e[i + 1];
    cache.bytes -= class_size(c);
    UNPOISON(data, sizeof(void *));
    *(void **)data = *evicted;
    *evicted = data;
}

/* The class whose oldest buffer is the oldest of all; BUF_CLASSES if the
 * cache is empty. */
static unsigned oldest_class(void)
{
    unsigned best = BUF_CLASSES;
    for (unsigned c = 0; c < BUF_CLASSES; c++) {
        if (!cache.cls[c].n)
            continue;
        if (best == BUF_CLASSES || cache.cls[c].e[0].seq < cache.cls[best].e[0].seq)
            best = c;
    }
    return best;
}

static void free_chain(void *evicted)
{
    while (evicted) {
        void *next = *(void **)evicted;
        weft__free(evicted);
        evicted = next;
    }
}

void *weft__tensor_buf_alloc(size_t nbytes, size_t *cap)
{
    if (!cacheable(nbytes)) {
        /* Never NULL, even when empty, so that memcpy and friends stay defined. */
        *cap = nbytes ? nbytes : 1;
        return weft__aligned_alloc(*cap);
    }
    unsigned c = class_of(nbytes);
    void *data = NULL;
    pthread_mutex_lock(&cache.mu);
    buf_class *k = &cache.cls[c];
    if (k->n) {
        data = k->e[--k->n].data;
        cache.bytes -= class_size(c);
    }
    pthread_mutex_unlock(&cache.mu);
    *cap = class_size(c);
    if (data) {
        UNPOISON(data, *cap);
        return data;
    }
    return weft__aligned_alloc(*cap);
}

void weft__tensor_buf_free(void *data, size_t cap)
{
    if (!data)
        return;
    /* Only buffers this file sized go into a class. */
    if (!cacheable(cap) || class_size(class_of(cap)) != cap) {
        weft__free(data);
        return;
    }
    unsigned c = class_of(cap);
    void *evicted = NULL;
    POISON(data, cap);
    pthread_mutex_lock(&cache.mu);
    if (cache.cls[c].n == BUF_DEPTH)
        evict_oldest_of(c, &evicted);
    while (cache.bytes + cap > BUF_BYTES)
        evict_oldest_of(oldest_class(), &evicted);
    buf_class *k = &cache.cls[c];
    k->e[k->n].data = data;
    k->e[k->n].seq = cache.seq++;
    k->n++;
    cache.bytes += cap;
    pthread_mutex_unlock(&cache.mu);
    free_chain(evicted);
}

void weft__tensor_buf_cache_drain(void)
{
    void *evicted = NULL;
    pthread_mutex_lock(&cache.mu);
    unsigned c;
    while ((c = oldest_class()) != BUF_CLASSES)
        evict_oldest_of(c, &evicted);
    pthread_mutex_unlock(&cache.mu);
    free_chain(evicted);
}

size_t weft__tensor_buf_cache_bytes(void)
{
    pthread_mutex_lock(&cache.mu);
    size_t bytes = cache.bytes;
    pthread_mutex_unlock(&cache.mu);
    return bytes;
}
