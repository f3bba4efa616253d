/* The allocator every part of weft uses, with optional fault injection so
 * that tests can fail the Nth allocation and check the WEFT_ENOMEM paths. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#ifdef WEFT_FAULT_INJECTION
/* Counts down to the failing allocation; 0 means off.  Process-wide and
 * atomic because allocations happen on every worker. */
static long fault_countdown;
static int fault_hit;

static bool should_fail(void)
{
    long left = __atomic_load_n(&fault_countdown, __ATOMIC_RELAXED);
    while (left > 0) {
        if (__atomic_compare_exchange_n(&fault_countdown, &left, left - 1, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            if (left == 1) {
                __atomic_store_n(&fault_hit, 1, __ATOMIC_RELAXED);
                return true;
            }
            return false;
        }
    }
    return false;
}

bool weft__fault_fail_after(long n)
{
    __atomic_store_n(&fault_hit, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_countdown, n > 0 ? n : 0, __ATOMIC_RELAXED);
    return true;
}

bool weft__fault_hit(void)
{
    return __atomic_load_n(&fault_hit, __ATOMIC_RELAXED) != 0;
}
#else
static inline bool should_fail(void) { return false; }
bool weft__fault_fail_after(long n) { (void)n; return false; }
bool weft__fault_hit(void) { return false; }
#endif

void *weft__malloc(size_t n)
{
    return should_fail() ? NULL : malloc(n ? n : 1);
}

void *weft__calloc(size_t count, size_t size)
{
    return should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *weft__realloc(void *p, size_t n)
{
    return should_fail() ? NULL : realloc(p, n ? n : 1);
}

void *weft__aligned_alloc(size_t n)
{
    if (should_fail())
        return NULL;
    /* aligned_alloc wants a multiple of the alignment. */
    size_t rounded = (n + WEFT__CACHE_LINE - 1) & ~(size_t)(WEFT__CACHE_LINE - 1);
    if (rounded < n)
        return NULL;
    return aligned_alloc(WEFT__CACHE_LINE, rounded ? rounded : WEFT__CACHE_LINE);
}

char *weft__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = weft__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void weft__free(void *p)
{
    free(p);
}
