/* weft_tensor_print against NumPy-style worked examples (alignment,
 * shortest floats, elision past 1000 elements) and weft_tensor_spec. */
#include <math.h>
#include <string.h>

#include "test_util.h"

TestSuite(print, .timeout = 30);

/* The text weft_tensor_print writes for t (static buffer). */
static const char *printed(const weft_tensor *t)
{
    static char buf[8192];
    memset(buf, 0, sizeof buf);
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    cr_assert_eq(weft_tensor_print(t, f), 0, "%s", weft_errmsg());
    fclose(f);
    return buf;
}

static weft_tensor *make(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

Test(print, matrix_aligned_shortest_floats)
{
    const float v[6] = { 1, 2.5f, 3, 4, 5, 0.1f };
    weft_tensor *t = make(WEFT_F32, 2, (const int64_t[]){ 2, 3 }, v);
    cr_expect_str_eq(printed(t), "<tensor f32[2,3] = [[  1, 2.5,   3],\n"
                                 "                    [  4,   5, 0.1]]>\n");
    weft_tensor_release(t);
}

Test(print, scalars_and_special_values)
{
    double d = 0.09;
    weft_tensor *t = make(WEFT_F64, 0, NULL, &d);
    cr_expect_str_eq(printed(t), "<tensor f64[] = 0.09>\n");
    weft_tensor_release(t);
    const double s[5] = { NAN, INFINITY, -INFINITY, -0.0, 1e300 };
    t = make(WEFT_F64, 1, (const int64_t[]){ 5 }, s);
    cr_expect_str_eq(printed(t), "<tensor f64[5] = [   nan,    inf,   -inf,     -0, 1e+300]>\n");
    weft_tensor_release(t);
    const unsigned char b[2] = { 1, 0 };
    t = make(WEFT_BOOL, 1, (const int64_t[]){ 2 }, b);
    cr_expect_str_eq(printed(t), "<tensor bool[2] = [ true, false]>\n");
    weft_tensor_release(t);
    const int32_t i[3] = { -7, 10, 0 };
    t = make(WEFT_I32, 1, (const int64_t[]){ 3 }, i);
    cr_expect_str_eq(printed(t), "<tensor i32[3] = [-7, 10,  0]>\n");
    weft_tensor_release(t);
    t = make(WEFT_F32, 2, (const int64_t[]){ 0, 3 }, NULL);
    cr_expect_str_eq(printed(t), "<tensor f32[0,3] = []>\n");
    weft_tensor_release(t);
}

Test(print, elided_past_1000_elements)
{
    int64_t v[2000];
    for (int k = 0; k < 2000; k++)
        v[k] = k;
    weft_tensor *t = make(WEFT_I64, 1, (const int64_t[]){ 2000 }, v);
    cr_expect_str_eq(printed(t), "<tensor i64[2000] = [   0,    1,    2, ..., 1997, 1998, 1999]>\n");
    weft_tensor_release(t);
    /* 1000 elements exactly: all of them. */
    t = make(WEFT_I64, 2, (const int64_t[]){ 100, 10 }, v);
    const char *s = printed(t);
    cr_expect(strstr(s, "...") == NULL, "%.200s", s);
    cr_expect(strstr(s, "[990, 991, 992, 993, 994, 995, 996, 997, 998, 999]]>\n") != NULL, "%s", s);
    weft_tensor_release(t);
    t = make(WEFT_I64, 2, (const int64_t[]){ 200, 10 }, v);
    s = printed(t);
    /* Rows line up under the first one, 23 columns in. */
    cr_expect(strstr(s, " [  20,   21,   22, ...,   27,   28,   29],\n"
                        "                       ...,\n"
                        "                       [1970,") != NULL, "%s", s);
    weft_tensor_release(t);
}

Test(print, bad_input_and_spec)
{
    cr_expect_eq(weft_tensor_print(NULL, stdout), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_tensor_print: NULL tensor");
    weft_tensor *t = make(WEFT_I32, 2, (const int64_t[]){ 4, 0 }, NULL);
    cr_expect_eq(weft_tensor_print(t, NULL), WEFT_EINVAL);
    weft_spec s;
    cr_assert_eq(weft_tensor_spec(t, &s), 0);
    cr_expect_eq(s.dtype, WEFT_I32);
    cr_expect_eq(s.rank, 2);
    cr_expect_eq(s.dims[0], 4);
    cr_expect_eq(s.dims[1], 0);
    cr_expect_eq(weft_tensor_spec(t, NULL), WEFT_EINVAL);
    cr_expect_eq(weft_tensor_spec(NULL, &s), WEFT_EINVAL);
    cr_expect_str_eq(weft_errmsg(), "weft_tensor_spec: NULL tensor");
    weft_tensor_release(t);
}
