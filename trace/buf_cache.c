/* Tensor buffers and the process-wide cache of freed ones.
 *
 * Why a cache: a buffer of more than a few pages that goes back to the C
 * library is often handed back to the kernel (glibc trims the top of its
 * heap once 128 KiB there are free, and serves large blocks from mmap), so
 * the next tensor of that size pays a page fault per 4 KiB on first touch.
 * Four eager elementwise ops on f32[100000] spent 99% of their time in
 * those faults on a virtual machine (3.4 ms against 40 us with the buffers
 * kept, bench_eager).  Small buffers are kept because glibc's aligned
 * allocation skips its per-thread cache and, for 1 KiB or more, first
 * merges every small free chunk: an eager softmax of f32[32,10] spent a
 * fifth of its time in malloc and free.
 *
 * Buffers of up to BUF_MAX bytes are rounded up to a size class, four per
 * doubling from BUF_MIN (at most 25% more), so that a freed buffer fits the next
 * request of its class exactly.  Each class keeps up to BUF_DEPTH freed
 * buffers, newest on top (still in cache); all of them together hold at
 * most BUF_BYTES, and the oldest buffer of all goes first when a new one
 * needs room.  One mutex guards the classes: it is taken once per buffer,
 * never per element, and holds no call into the C
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
    BUF_MIN_LOG2 = 6,                                    /* 64 bytes */
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

/* The smallest class whose size holds n bytes, n <= BUF_MAX. */
static unsigned class_of(size_t n)
{
    if (n < BUF_MIN)
        return 0;
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)n);
    size_t base = (size_t)1 << k, step = base / BUF_STEPS;
    size_t j = (n - base + step - 1) / step;             /* 0 .. BUF_STEPS */
    return (k - BUF_MIN_LOG2) * BUF_STEPS + (unsigned)j;
}

static bool cacheable(size_t n)
{
    return n <= BUF_MAX;
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

/* ---- The thread's own small buffers -----------------------------------
 *
 * Each thread keeps up to MAG_DEPTH freed buffers of each class up to
 * MAG_MAX bytes in a magazine of its own, in front of the shared classes:
 * an eager op on a small tensor frees one buffer and takes another, and
 * the shared mutex (two atomic read-modify-writes per buffer) was a fifth
 * of an eager f32[4] add.  A thread's magazine goes to the shared classes
 * when the thread exits (a thread-specific key's destructor) and when that
 * thread drains the cache.  Armed magazines are listed (under the mutex)
 * only so that weft__tensor_buf_cache_bytes can count what they hold; a
 * magazine's bytes are written by its thread alone. */
enum {
    MAG_MAX_LOG2 = 12,                                   /* 4 KiB */
    MAG_CLASSES = (MAG_MAX_LOG2 - BUF_MIN_LOG2) * BUF_STEPS + 1,
    MAG_DEPTH = 8,
};

typedef struct magazine {
    struct magazine *next, *prev;    /* the list of armed magazines */
    bool armed;                      /* listed, and the exit destructor set */
    size_t bytes;                    /* held here; other threads read it */
    unsigned char n[MAG_CLASSES];
    void *p[MAG_CLASSES][MAG_DEPTH];
} magazine;

static _Thread_local magazine mag;
static magazine *mag_list;           /* under cache.mu */
static pthread_key_t mag_key;
static pthread_once_t mag_once = PTHREAD_ONCE_INIT;
static bool mag_key_ok;

static void shared_free(void *data, unsigned c);

static void mag_set_bytes(size_t bytes)
{
    __atomic_store_n(&mag.bytes, bytes, __ATOMIC_RELAXED);
}

/* Hands every buffer of the calling thread's magazine to the shared
 * classes and takes the magazine off the list (the key's destructor at
 * the thread's exit; its argument is the magazine). */
static void mag_flush(void *unused)
{
    (void)unused;
    if (mag.armed) {
        pthread_mutex_lock(&cache.mu);
        if (mag.prev)
            mag.prev->next = mag.next;
        else
            mag_list = mag.next;
        if (mag.next)
            mag.next->prev = mag.prev;
        pthread_mutex_unlock(&cache.mu);
        /* Re-armed by the next buffer this thread keeps, even from another
         * key's destructor at its exit (POSIX runs destructors again then). */
        mag.armed = false;
    }
    for (unsigned c = 0; c < MAG_CLASSES; c++)
        while (mag.n[c])
            shared_free(mag.p[c][--mag.n[c]], c);
    mag_set_bytes(0);
}

static void mag_key_create(void)
{
    mag_key_ok = pthread_key_create(&mag_key, mag_flush) == 0;
}

/* Whether the calling thread may keep a buffer: its magazine's buffers
 * must reach the shared classes when it exits, so the destructor is set
 * and the magazine listed first (a thread that cannot set the destructor
 * keeps nothing). */
static bool mag_arm(void)
{
    if (mag.armed)
        return true;
    pthread_once(&mag_once, mag_key_create);
    if (!mag_key_ok || pthread_setspecific(mag_key, &mag) != 0)
        return false;
    pthread_mutex_lock(&cache.mu);
    mag.prev = NULL;
    mag.next = mag_list;
    if (mag_list)
        mag_list->prev = &mag;
    mag_list = &mag;
    pthread_mutex_unlock(&cache.mu);
    mag.armed = true;
    return true;
}

static void *mag_take(unsigned c)
{
    if (c >= MAG_CLASSES || !mag.n[c])
        return NULL;
    mag_set_bytes(mag.bytes - class_size(c));
    return mag.p[c][--mag.n[c]];
}

static bool mag_keep(void *data, unsigned c)
{
    if (c >= MAG_CLASSES || mag.n[c] == MAG_DEPTH || !mag_arm())
        return false;
    mag.p[c][mag.n[c]++] = data;
    mag_set_bytes(mag.bytes + class_size(c));
    return true;
}

/* ---- Entry points ------------------------------------------------------ */

void *weft__tensor_buf_alloc(size_t nbytes, size_t *cap)
{
    if (!cacheable(nbytes)) {
        /* Never NULL, even when empty, so that memcpy and friends stay defined. */
        *cap = nbytes ? nbytes : 1;
        return weft__aligned_alloc(*cap);
    }
    unsigned c = class_of(nbytes);
    *cap = class_size(c);
    void *data = mag_take(c);
    if (!data) {
        pthread_mutex_lock(&cache.mu);
        buf_class *k = &cache.cls[c];
        if (k->n) {
            data = k->e[--k->n].data;
            cache.bytes -= class_size(c);
        }
        pthread_mutex_unlock(&cache.mu);
    }
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
    POISON(data, cap);
    if (!mag_keep(data, c))
        shared_free(data, c);
}

/* Puts a (poisoned) buffer of class c into the shared classes, making room
 * by letting the oldest buffers go. */
static void shared_free(void *data, unsigned c)
{
    size_t cap = class_size(c);
    void *evicted = NULL;
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
    mag_flush(NULL);
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
    for (const magazine *m = mag_list; m; m = m->next)
        bytes += __atomic_load_n(&m->bytes, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&cache.mu);
    return bytes;
}
