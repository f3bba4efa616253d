/* Helpers shared by the criterion tests. */
#ifndef WEFT_TEST_UTIL_H
#define WEFT_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <weft.h>

/* A runtime with $WEFT_NUM_THREADS workers (the CI loops over 1, 2, 4), or
 * `fallback` when that variable is unset. */
static inline weft_runtime *test_runtime(unsigned fallback)
{
    weft_config cfg;
    weft_config_default(&cfg);
    if (!getenv("WEFT_NUM_THREADS"))
        cfg.workers = fallback;
    weft_runtime *rt = NULL;
    int rc = weft_runtime_create(&cfg, &rt);
    cr_assert_eq(rc, 0, "weft_runtime_create: %s", weft_errmsg());
    return rt;
}

/* A runtime of exactly `workers` workers, whatever $WEFT_NUM_THREADS says:
 * for tests whose subject is the worker count. */
static inline weft_runtime *test_runtime_of(unsigned workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    weft_runtime *rt = NULL;
    int rc = weft_runtime_create(&cfg, &rt);
    cr_assert_eq(rc, 0, "weft_runtime_create(%u workers): %s", workers, weft_errmsg());
    return rt;
}

#endif
