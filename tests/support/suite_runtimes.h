/* For the suites that use a runtime of the test's default worker count,
 * rt, beside the runtimes of 1, 2 and 4 workers of worker_runtimes.h: all
 * made before each test and destroyed after it.
 *
 *     TestSuite(name, .init = suite_runtimes_create,
 *               .fini = suite_runtimes_destroy, .timeout = 120); */
#ifndef WEFT_SUITE_RUNTIMES_H
#define WEFT_SUITE_RUNTIMES_H

#include "worker_runtimes.h"

static weft_runtime *rt;

static inline void suite_runtimes_create(void)
{
    rt = test_runtime(2);
    worker_runtimes_create();
}

static inline void suite_runtimes_destroy(void)
{
    weft_runtime_destroy(&rt);
    worker_runtimes_destroy();
}

#endif
