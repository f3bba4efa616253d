/* Bulk copies of row segments between tensors.
 *
 * weft's large buffers all start at the same offset within a page, so a
 * row copied between two of them often has a destination that lies a
 * small multiple of 64 bytes past its source modulo 4096.  glibc's vector
 * memcpy loop, which it uses from 512 bytes up to its `rep movsb`
 * threshold (2112 bytes by default), then stalls on 4K aliasing: each
 * load waits on an older store with the same page offset.  Measured on
 * this project's AMD EPYC (FSRM): 2 KiB segments at such distances copy
 * 2.5-3x slower than with `rep movsb`, which does not stall.  So segments
 * in that band, at such a distance, go through `rep movsb` where the CPU
 * makes it fast (ERMS); everything else is memcpy.  trace/ internal. */
#ifndef WEFT_TRACE_COPY_H
#define WEFT_TRACE_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/sanitizer.h"

/* Sanitizer builds always take memcpy, whose accesses they check. */
#if defined(__x86_64__) && !defined(WEFT__ASAN) && !defined(WEFT__TSAN)
#define WEFT__COPY_REP_MOVSB 1
/* True when the CPU has fast `rep movsb` (ERMS); set once at load time. */
extern bool weft__copy_rep_movsb;
#endif

/* Copies n bytes from src to dst (they do not overlap). */
static inline void weft__copy_bytes(void *restrict dst, const void *restrict src, size_t n)
{
#ifdef WEFT__COPY_REP_MOVSB
    /* The band where glibc's loop runs, and destinations 0-1023 bytes
     * past the source modulo 4096 in whole cache lines (other distances
     * make `rep movsb` no faster, or slower). */
    uintptr_t dist = ((uintptr_t)dst - (uintptr_t)src) & 4095u;
    if (n > 512 && n < 4096 && dist < 1024 && (dist & 63u) == 0 && weft__copy_rep_movsb) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
#endif
    memcpy(dst, src, n);
}

#endif
