/* What every module of weft uses and none owns: errors, allocation (with
 * fault injection), the clock, symbols of opened libraries and the
 * cache-line size.  runtime/, trace/ and cache/ include it
 * (runtime/iface.h does too); base/ depends on nothing but libc and the
 * public headers.  Nothing here is exported from the shared library. */
#ifndef WEFT_BASE_H
#define WEFT_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of a cache line: hot shared fields are aligned to it so that
 * two threads' writes never share a line. */
#define WEFT__CACHE_LINE 64

/* Errors.  Records a thread-local message (see weft_errmsg) and returns
 * code, so that callers can write `return weft__errorf(WEFT_EINVAL, ...)`. */
int weft__errorf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The size of the message buffer (a copy of weft_errmsg() fits in it). */
#define WEFT__ERRMSG_SIZE 512
int weft__verrorf(int code, const char *fmt, va_list ap);
/* Empties the calling thread's message, so that a callee that fails without
 * saying why is not blamed with an older, unrelated sentence. */
void weft__errclear(void);

/* Allocation.  Every allocation of weft goes through these, so that a
 * -Dfault_injection build can fail the Nth one.  weft__aligned_alloc
 * returns memory aligned to a cache line, freed with weft__free. */
void *weft__malloc(size_t n);
void *weft__calloc(size_t count, size_t size);
void *weft__realloc(void *p, size_t n);
void *weft__aligned_alloc(size_t n);
char *weft__strdup(const char *s);
void  weft__free(void *p);
/* Fault injection (a no-op returning false unless built with it): the
 * allocation counted n from now fails (n = 1: the next one); n <= 0 turns
 * failing off.  weft__fault_hit says whether an allocation was failed since
 * the last weft__fault_fail_after. */
bool weft__fault_fail_after(long n);
bool weft__fault_hit(void);

/* Monotonic time in nanoseconds. */
uint64_t weft__now_ns(void);

/* dlsym(lib, name) stored into the function pointer at slot (ISO C has no
 * cast between object and function pointers; POSIX makes them the same
 * size); false, and the slot untouched, when lib has no such symbol.  For
 * the tables of the libraries weft opens itself (LLVM, the BLAS). */
bool weft__dl_function(void *lib, const char *name, void *slot);

#endif
