/* The hooks for libraries built on the public API: weft_errorf sets the
 * thread's message and returns the code; weft_profile_span checks its
 * arguments and lands in the profile file as a "user" span with its name,
 * detail and duration, and records nothing when the runtime is not
 * profiling. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

TestSuite(client, .timeout = 30);

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

Test(client, errorf_sets_the_message_and_returns_the_code)
{
    cr_assert_eq(weft_errorf(WEFT_ESHAPE, "mylib_op: %d rows, wanted %s", 3, "4"), WEFT_ESHAPE);
    cr_assert_str_eq(weft_errmsg(), "mylib_op: 3 rows, wanted 4");
    cr_assert_eq(weft_errorf(WEFT_EINVAL, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "fmt is NULL") != NULL, "%s", weft_errmsg());
}

Test(client, span_arguments)
{
    weft_runtime *rt = test_runtime(1);
    cr_assert_eq(weft_profile_span(NULL, "x", NULL, 1, 2), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "rt is NULL") != NULL, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_span(rt, NULL, NULL, 1, 2), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "name is NULL") != NULL, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_span(rt, "x", NULL, 2, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "ends") != NULL, "%s", weft_errmsg());
    /* Not profiling: accepted, nothing to record into. */
    cr_assert_eq(weft_profile_span(rt, "x", NULL, 1, 2), 0);
    weft_runtime_destroy(&rt);
}

Test(client, span_lands_in_the_profile)
{
    weft_runtime *rt = test_runtime(1);
    char path[256];
    snprintf(path, sizeof path, "/tmp/weft_test_client_%d.json", (int)getpid());
    cr_assert_eq(weft_profile_span(rt, "before", NULL, 1, 2), 0);
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    uint64_t t0 = now_ns();
    cr_assert_eq(weft_profile_span(rt, "scatter", "rank 1 of 2", t0, t0 + 2500000), 0);
    cr_assert_eq(weft_profile_span(rt, "instantly", NULL, t0, t0), 0);
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_span(rt, "after", NULL, 1, 2), 0);

    char *json = test_read_file(path);
    unlink(path);
    cr_assert_eq(count(json, "\"cat\":\"user\""), 2, "%s", json);
    cr_assert(strstr(json, "{\"name\":\"scatter\",\"cat\":\"user\",\"ph\":\"X\"") != NULL, "%s", json);
    cr_assert(strstr(json, ",\"dur\":2500.000,") != NULL, "%s", json);
    cr_assert(strstr(json, "\"args\":{\"detail\":\"rank 1 of 2\"}") != NULL, "%s", json);
    cr_assert(strstr(json, "\"instantly\"") != NULL, "%s", json);
    cr_assert(strstr(json, "\"before\"") == NULL && strstr(json, "\"after\"") == NULL, "%s", json);
    free(json);
    weft_runtime_destroy(&rt);
}
