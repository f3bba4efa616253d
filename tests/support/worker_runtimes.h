/* Runtimes of 1, 2 and 4 workers, made before each test of a suite and
 * destroyed after it, for the tests that compare results across worker
 * counts (rts[k] has rt_workers[k] workers). */
#ifndef WEFT_WORKER_RUNTIMES_H
#define WEFT_WORKER_RUNTIMES_H

#include "test_util.h"

#define N_RT 3
static const unsigned rt_workers[N_RT] = { 1, 2, 4 };
static weft_runtime *rts[N_RT];

static inline void worker_runtimes_create(void)
{
    for (int k = 0; k < N_RT; k++)
        rts[k] = test_runtime_of(rt_workers[k]);
}

static inline void worker_runtimes_destroy(void)
{
    for (int k = 0; k < N_RT; k++)
        weft_runtime_destroy(&rts[k]);
}

#endif
