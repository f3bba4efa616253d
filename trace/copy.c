/* Whether the CPU's `rep movsb` is fast (see trace/copy.h). */
#include "trace/copy.h"

#ifdef WEFT__COPY_REP_MOVSB
#include <cpuid.h>

bool weft__copy_rep_movsb;

/* Read once when the library loads: CPUID leaf 7, EBX bit 9 (ERMS). */
__attribute__((constructor)) static void copy_detect(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        weft__copy_rep_movsb = (b >> 9) & 1u;
}
#else
/* Not x86-64, or a sanitizer build: memcpy only. */
typedef int weft__copy_memcpy_only;
#endif
