/* The interface runtime/ declares for the other modules (trace/, cache/).
 * They include this file and <weft.h>, never runtime/internal.h.
 * Nothing here is exported from the shared library.  It includes
 * base/base.h (errors, allocation, the clock), which every module uses. */
#ifndef WEFT_RUNTIME_IFACE_H
#define WEFT_RUNTIME_IFACE_H

#include <stdbool.h>
#include <weft.h>

#include "base/base.h"

/* The configured parallelism of rt (each at least 1). */
unsigned weft__inter_op_threads(const weft_runtime *rt);
unsigned weft__intra_op_threads(const weft_runtime *rt);
/* The index of the calling thread among rt's workers, or -1 for an outside
 * thread. */
int weft__worker_index(const weft_runtime *rt);

/* Inline mode, for a thread that holds a lock which other threads' tasks
 * may need (a WEFT_HOST_SERIAL callback holds its callback's lock, a trace
 * its function's trace lock while the body runs).  While
 * the calling thread's depth is above zero, the work it starts through any
 * runtime (weft_spawn, weft_parallel_for, weft_parallel_map) runs on it at
 * once, one piece after the other: it never waits for a stolen child, so
 * it never runs another task meanwhile, which could block on that lock or
 * find it held by its own thread.  (A group with children queued before
 * the depth rose is still waited for as usual.) */
void weft__inline_enter(void);
void weft__inline_leave(void);
/* Whether the calling thread is in inline mode. */
bool weft__inline_now(void);

/* Timeline recording (see weft_profile_begin).  weft__profiling is one
 * relaxed load, cheap enough for hot paths.  Spans are recorded on the
 * calling thread's lane; cat is a static string ("op", "map", "host",
 * "trace", "compile", "run"), name and detail are copied (detail may be
 * NULL).  Times come from weft__now_ns. */
bool weft__profiling(const weft_runtime *rt);
void weft__profile_span(weft_runtime *rt, const char *cat, const char *name,
                        uint64_t t0_ns, uint64_t t1_ns, const char *detail);
void weft__profile_instant(weft_runtime *rt, const char *cat, const char *name);
/* Called by weft_runtime_destroy: drops rt's profile, if any. */
void weft__profile_runtime_gone(weft_runtime *rt);

#endif
