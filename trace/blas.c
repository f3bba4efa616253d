/* OpenBLAS's threads, kept out of the way of weft's workers.
 *
 * weft cuts a product into tiles by its shape and computes each tile on a
 * worker with one BLAS call, so every such call must compute on its calling
 * thread: a threaded call from a worker would wake the BLAS's own pool
 * (more threads than cores), and OpenBLAS serializes its threaded level-3
 * calls behind one lock.  Debian ships three OpenBLAS builds under the same
 * library name, libopenblas.so.0 (serial, pthreads, OpenMP), picked by the
 * alternatives system or by whichever copy the program loaded first.  weft
 * opens that name when it first asks whether it may call the BLAS (see
 * trace/blas_api.h: it is not linked) and, at its first product, asks the
 * copy it got which it is (openblas_get_parallel):
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
#define WEFT__BLAS_LOADER
#include "trace/blas.h"

#if WEFT_HAVE_BLAS

#include <dlfcn.h>
#include <pthread.h>

#include "base/base.h"
#include "trace/blas_api.h"

#ifndef WEFT_BLAS_LIBRARY
#error "meson.build names the library to open in WEFT_BLAS_LIBRARY"
#endif

struct weft__blas_api weft__blas;

/* The file to open: OpenBLAS's soname, or a test's name for a missing
 * one (set before the first load). */
static const char *library = WEFT_BLAS_LIBRARY;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;   /* written once, under load_once */

const char *weft__blas_library(void)
{
    return __atomic_load_n(&library, __ATOMIC_ACQUIRE);
}

void weft__blas_set_library(const char *file)
{
    __atomic_store_n(&library, file, __ATOMIC_RELEASE);
}

/* RTLD_LOCAL: the BLAS's symbols stay out of the process's namespace.  A
 * program that links OpenBLAS itself has it loaded already, and gets the
 * same copy, whose thread count weft then shares (above).
 * A library without every function stays open and unused: it is not
 * tried again. */
static void load(void)
{
    void *lib = dlopen(weft__blas_library(), RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    bool complete = true;
#define FIND_FIELD(name) complete = complete && weft__dl_function(lib, #name, &weft__blas.name);
    WEFT__BLAS_FUNCTIONS(FIND_FIELD)
#undef FIND_FIELD
    weft__blas.lib = lib;
    loaded = complete;
}

bool weft__blas_available(void)
{
    pthread_once(&load_once, load);
    return loaded;
}

/* openblas_get_parallel()'s answers. */
enum { BLAS_UNKNOWN = -1, BLAS_SERIAL = 0, BLAS_PTHREADS = 1, BLAS_OPENMP = 2 };

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_kind = BLAS_UNKNOWN;   /* set once, under hold_lock; read atomically */
static unsigned holders;               /* under hold_lock */
static int count_found;                /* the pthreads count before the first hold */

static _Thread_local bool thread_single;   /* OpenMP: this thread's count is 1 */

void weft__blas_hold(void)
{
    if (!weft__blas_available())
        return;
    pthread_mutex_lock(&hold_lock);
    if (blas_kind == BLAS_UNKNOWN)
        __atomic_store_n(&blas_kind, weft__blas.openblas_get_parallel(), __ATOMIC_RELEASE);
    if (blas_kind == BLAS_PTHREADS && holders++ == 0) {
        count_found = weft__blas.openblas_get_num_threads();
        if (count_found != 1)
            weft__blas.openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&hold_lock);
}

void weft__blas_release(void)
{
    if (!weft__blas_available())
        return;
    pthread_mutex_lock(&hold_lock);
    if (blas_kind == BLAS_PTHREADS && --holders == 0 && count_found != 1 &&
        weft__blas.openblas_get_num_threads() == 1)
        weft__blas.openblas_set_num_threads(count_found);
    pthread_mutex_unlock(&hold_lock);
}

void weft__blas_thread_enter(void)
{
    if (thread_single || __atomic_load_n(&blas_kind, __ATOMIC_ACQUIRE) != BLAS_OPENMP)
        return;
    /* openblas_set_num_threads would also set OpenBLAS's process-wide
     * count; OpenMP's own call changes this thread's alone.  libgomp is
     * the BLAS's dependency, found through its handle. */
    void (*set_threads)(int);
    if (weft__dl_function(weft__blas.lib, "omp_set_num_threads", &set_threads))
        set_threads(1);
    thread_single = true;
}

#else

bool weft__blas_available(void)
{
    return false;
}

const char *weft__blas_library(void)
{
    return "";
}

void weft__blas_set_library(const char *file)
{
    (void)file;
}

void weft__blas_hold(void) {}
void weft__blas_release(void) {}
void weft__blas_thread_enter(void) {}

#endif
