/* The clock of weft's statistics and timelines. */
#include <time.h>

#include "base/base.h"

uint64_t weft__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
