/* Reader sections over one process-wide ck_epoch, and the per-thread
 * counter slots (see internal.h).  A thread registers a
 * record the first time it looks up a cache, and hands it back for reuse
 * when it exits.  ck_epoch's grace-period code lives in libck (not
 * instrumented), so under ThreadSanitizer the section ends and the grace
 * periods are annotated as release and acquire on one address. */
#include <ck_epoch.h>

#include "base/sanitizer.h"
#include "cache/internal.h"

#if defined(WEFT__TSAN)
#include <sanitizer/tsan_interface.h>
#define TSAN_RELEASE(p) __tsan_release(p)
#define TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define TSAN_RELEASE(p) ((void)(p))
#define TSAN_ACQUIRE(p) ((void)(p))
#endif

static ck_epoch_t epoch;
static char grace_sync;  /* the address the annotations synchronise on */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t rec_key;
_Thread_local weft__cache_tls weft__cache_tl;

static void rec_gone(void *p)
{
    ck_epoch_record_t *rec = p;
    /* A cache call from a later thread-exit destructor registers anew
     * (and sets the key again, so this runs again for it). */
    weft__cache_tl.rec = NULL;
    /* The next thread that recycles it acquires what this one did. */
    TSAN_RELEASE(rec);
    ck_epoch_unregister(rec);
}

static void init_once(void)
{
    ck_epoch_init(&epoch);
    (void)pthread_key_create(&rec_key, rec_gone);
}

int weft__cache_epoch_enter(weft__epoch_rec **out)
{
    return weft__cache_epoch_enter_tl(&weft__cache_tl, out);
}

int weft__cache_epoch_enter_tl(weft__cache_tls *tl, weft__epoch_rec **out)
{
    ck_epoch_record_t *rec = tl->rec;
    if (!rec) {
        pthread_once(&once, init_once);
        rec = ck_epoch_recycle(&epoch, NULL);
        if (rec) {
            TSAN_ACQUIRE(rec);
        } else {
            /* Records are never freed: the epoch links them for good. */
            rec = weft__aligned_alloc(sizeof *rec);
            if (!rec)
                return weft__errorf(WEFT_ENOMEM, "out of memory for an epoch record");
            ck_epoch_register(&epoch, rec, NULL);
        }
        tl->rec = rec;
        (void)pthread_setspecific(rec_key, rec);
    }
    ck_epoch_begin(rec, NULL);
    *out = rec;
    return 0;
}

void weft__cache_epoch_exit(weft__epoch_rec *rec)
{
    TSAN_RELEASE(&grace_sync);
    ck_epoch_end(rec, NULL);
}

void weft__cache_epoch_synchronize(void)
{
    pthread_once(&once, init_once);
    ck_epoch_synchronize_wait(&epoch, NULL, NULL);
    TSAN_ACQUIRE(&grace_sync);
}

/* ---- slots ---- */

static unsigned slots_taken;  /* bit s: slot s has an owner (atomic) */
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key;

static void slot_gone(void *p)
{
    unsigned s = (unsigned)((uintptr_t)p - 1);
    weft__cache_tl.slot = 0;
    /* Release: the next owner's plain read-modify-writes of the slot's
     * counters come after this thread's. */
    __atomic_fetch_and(&slots_taken, ~(1u << s), __ATOMIC_RELEASE);
}

static void slot_init_once(void)
{
    (void)pthread_key_create(&slot_key, slot_gone);
}

unsigned weft__cache_slot_slow(void)
{
    unsigned taken = __atomic_load_n(&slots_taken, __ATOMIC_RELAXED);
    const unsigned all = (1u << WEFT__SLOTS) - 1;
    pthread_once(&slot_once, slot_init_once);
    while (taken != all) {
        unsigned s = (unsigned)__builtin_ctz(~taken);
        if (__atomic_compare_exchange_n(&slots_taken, &taken, taken | (1u << s), true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            if (pthread_setspecific(slot_key, (void *)(uintptr_t)(s + 1)) != 0) {
                /* Without the destructor the slot would leak: give it back. */
                __atomic_fetch_and(&slots_taken, ~(1u << s), __ATOMIC_RELEASE);
                return WEFT__SLOTS;
            }
            weft__cache_tl.slot = s + 1;
            return s;
        }
    }
    return WEFT__SLOTS;
}
