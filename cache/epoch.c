/* Reader sections over one process-wide ck_epoch: a thread registers a
 * record the first time it looks up a cache, and hands it back for reuse
 * when it exits.  ck_epoch's grace-period code lives in libck (not
 * instrumented), so under ThreadSanitizer the section ends and the grace
 * periods are annotated as release and acquire on one address. */
#include <ck_epoch.h>

#include "cache/internal.h"

#if defined(__SANITIZE_THREAD__)
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
static _Thread_local ck_epoch_record_t *my_rec;

static void rec_gone(void *p)
{
    ck_epoch_record_t *rec = p;
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
    ck_epoch_record_t *rec = my_rec;
    if (!rec) {
        pthread_once(&once, init_once);
        rec = ck_epoch_recycle(&epoch, NULL);
        if (rec) {
            TSAN_ACQUIRE(rec);
        } else {
            /* Records are never freed: the epoch links them for good. */
            rec = weft__aligned_alloc(sizeof *rec);
            if (!rec)
                return weft__errorf(WEFT_ENOMEM, "weft_function_call: out of memory for an epoch record");
            ck_epoch_register(&epoch, rec, NULL);
        }
        my_rec = rec;
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
