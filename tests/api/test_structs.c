/* The public structs that keep their size across releases: a desc whose
 * reserved space is not zero is refused (a value there would otherwise be
 * read as a later setting), and every stats struct comes back with its
 * reserved space zeroed, whatever the caller's memory held. */
#include <stdint.h>
#include <string.h>

#include "test_util.h"

static int body_double(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], args[0]);
    return 0;
}

static void assert_all_zero(const uint64_t *r, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(r[i], 0, "%s.reserved[%zu] is %llu", what, i, (unsigned long long)r[i]);
}

Test(structs, function_desc_reserved_must_be_zero, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function_desc d = { .name = "double", .body = body_double, .n_args = 1, .n_outs = 1 };
    d.reserved[5] = 1;
    weft_function *f = (weft_function *)&d;
    cr_assert_eq(weft_function_create(rt, &d, &f), WEFT_EINVAL);
    cr_assert_null(f);
    cr_assert(strstr(weft_errmsg(), "weft_function_create"), "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "reserved[5]"), "%s", weft_errmsg());

    /* With the reserved space zero again, the same desc makes a working
     * function. */
    d.reserved[5] = 0;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *x = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, (double[]){21}, &x), 0, "%s",
                 weft_errmsg());
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, (weft_arg[]){ weft_arg_tensor(x) }, 1, &y, 1), 0, "%s",
                 weft_errmsg());
    cr_assert_eq(weft_tensor_dtype(y), WEFT_F64);
    cr_assert_eq(*(const double *)weft_tensor_data(y), 42.0);
    weft_tensor_release(y);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
}

Test(structs, stats_reserved_comes_back_zero, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    weft_function *f = NULL;
    weft_function_desc d = { .name = "double", .body = body_double, .n_args = 1, .n_outs = 1 };
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());

    weft_function_stats fs;
    memset(&fs, 0xab, sizeof fs);
    weft_function_get_stats(f, &fs);
    cr_assert_eq(fs.calls, 0);
    assert_all_zero(fs.reserved, sizeof fs.reserved / sizeof fs.reserved[0], "function_stats");

    weft_runtime_stats rs;
    memset(&rs, 0xab, sizeof rs);
    weft_runtime_get_stats(rt, &rs);
    assert_all_zero(rs.reserved, sizeof rs.reserved / sizeof rs.reserved[0], "runtime_stats");

    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
}
