/* OpenBLAS's threads, kept out of the way of weft's workers.
 *
 * weft cuts a product into tiles by its shape and computes each tile on a
 * worker with one BLAS call, so every such call must compute on its calling
 * thread: a threaded call from a worker would wake the BLAS's own pool
 * (more threads than cores), and OpenBLAS serializes its threaded level-3
 * calls behind one lock.  Debian ships three OpenBLAS builds under the same
 * library name, libopenblas.so.0 (serial, pthreads, OpenMP), picked by the
 * alternatives system or by whichever copy the program loaded first.  weft
 * links that name and, at its first product, asks the copy it got which it
 * is (openblas_get_parallel):
 *
 * - serial: nothing to do (it locks its buffer pool, so calls from several
 *   workers at once are safe).
 * - OpenMP: the count it uses is OpenMP's, kept per calling thread, so
 *   each worker sets its own to 1 before its first BLAS call
 *   (omp_set_num_threads, found at run time: weft does not link libgomp);
 *   the program's threads keep theirs.
 * - pthreads: the count is one number for the whole process.  While any
 *   weft product is in the BLAS, weft holds it at 1; when the last one ends,
 *   weft puts back the count it found, unless the program set another one
 *   meanwhile.  So a BLAS call that the program makes from its own thread
 *   during a weft product runs on one thread (same result, slower).
 *
 * Rejected: openblas_set_num_threads(1) once for good (it would serialize
 * the program's own BLAS calls for the life of the process, silently);
 * linking the serial build by its path (a program that links OpenBLAS
 * itself gets one copy of libopenblas.so.0, possibly a threaded one, so
 * weft must cope with every build anyway); a thread-local count
 * (openblas_set_num_threads_local), which OpenBLAS has only since 0.3.27
 * while Debian 12 ships 0.3.21. */
#include "trace/blas.h"

#if WEFT_HAVE_BLAS

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

/* openblas_get_parallel()'s answers. */
enum { BLAS_UNKNOWN = -1, BLAS_SERIAL = 0, BLAS_PTHREADS = 1, BLAS_OPENMP = 2 };

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_kind = BLAS_UNKNOWN;   /* set once, under hold_lock; read atomically */
static unsigned holders;               /* under hold_lock */
static int count_found;                /* the pthreads count before the first hold */

static _Thread_local bool thread_single;   /* OpenMP: this thread's count is 1 */

void weft__blas_hold(void)
{
    pthread_mutex_lock(&hold_lock);
    if (blas_kind == BLAS_UNKNOWN)
        __atomic_store_n(&blas_kind, openblas_get_parallel(), __ATOMIC_RELEASE);
    if (blas_kind == BLAS_PTHREADS && holders++ == 0) {
        count_found = openblas_get_num_threads();
        if (count_found != 1)
            openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&hold_lock);
}

void weft__blas_release(void)
{
    pthread_mutex_lock(&hold_lock);
    if (blas_kind == BLAS_PTHREADS && --holders == 0 && count_found != 1 &&
        openblas_get_num_threads() == 1)
        openblas_set_num_threads(count_found);
    pthread_mutex_unlock(&hold_lock);
}

void weft__blas_thread_enter(void)
{
    if (thread_single || __atomic_load_n(&blas_kind, __ATOMIC_ACQUIRE) != BLAS_OPENMP)
        return;
    /* openblas_set_num_threads would also set OpenBLAS's process-wide
     * count; OpenMP's own call changes this thread's alone. */
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    void (*set_threads)(int);
    if (sym) {
        memcpy(&set_threads, &sym, sizeof sym);   /* ISO C has no cast for it */
        set_threads(1);
    }
    thread_single = true;
}

#else

void weft__blas_hold(void) {}
void weft__blas_release(void) {}
void weft__blas_thread_enter(void) {}

#endif
