/* Criterion 2.4 under ThreadSanitizer: criterion's arena (BoxFort) picks a
 * random base address in 0x200000000000..0x600000000000 and gives up after a
 * few tries, but ThreadSanitizer reserves almost all of that range, so every
 * test binary aborts with "Could not initialize inheritable arena"
 * (Snaipe/Criterion issue #274).  BoxFort draws the base from rand_r; this
 * rand_r, linked into the TSan test binaries only and compiled without
 * instrumentation, keeps its draws inside the application window that
 * ThreadSanitizer leaves free (0x558000000000..0x560000000000).  weft itself
 * never calls rand_r. */
#include <stdlib.h>

int rand_r(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (int)(0x358000u + ((*seed >> 8) & 0x7fffu));
}
