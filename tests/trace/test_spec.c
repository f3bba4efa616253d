/* Specs: parsing, formatting, dtype names, matching. */
#include <string.h>

#include "test_util.h"
#include "trace/tensor_impl.h"

static void roundtrip(const char *text, weft_dtype dt, int rank, const int64_t *dims)
{
    weft_spec s;
    memset(&s, 0xab, sizeof s);
    cr_assert_eq(weft_spec_parse(text, &s), 0, "%s: %s", text, weft_errmsg());
    cr_assert_eq(s.dtype, dt, "%s", text);
    cr_assert_eq(s.rank, rank, "%s", text);
    for (int i = 0; i < rank; i++)
        cr_assert_eq(s.dims[i], dims[i], "%s dim %d", text, i);
    char buf[256];
    int n = weft_spec_format(&s, buf, sizeof buf);
    cr_assert_eq(n, (int)strlen(text), "%s", text);
    cr_assert_str_eq(buf, text);
}

Test(spec, parse_format_roundtrip, .timeout = 10)
{
    roundtrip("f32[?,3]", WEFT_F32, 2, (int64_t[]){ WEFT_DIM_ANY, 3 });
    roundtrip("i32[]", WEFT_I32, 0, NULL);
    roundtrip("f64[*]", WEFT_F64, WEFT_RANK_ANY, NULL);
    roundtrip("bool[2,3]", WEFT_BOOL, 2, (int64_t[]){ 2, 3 });
    roundtrip("i64[0]", WEFT_I64, 1, (int64_t[]){ 0 });
    roundtrip("f32[1,2,3,4,5,6,7,8]", WEFT_F32, 8, (int64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 });
    roundtrip("i64[?,?,?,?,?,?,?,?]", WEFT_I64, 8,
              (int64_t[]){ -1, -1, -1, -1, -1, -1, -1, -1 });
    int64_t m = INT64_MAX;
    roundtrip("f64[9223372036854775807,9223372036854775807,9223372036854775807,"
              "9223372036854775807,9223372036854775807,9223372036854775807,"
              "9223372036854775807,9223372036854775807]",
              WEFT_F64, 8, (int64_t[]){ m, m, m, m, m, m, m, m });
}

Test(spec, malformed_text_is_einval, .timeout = 10)
{
    static const char *const bad[] = {
        "", "f32", "f32[", "f32]", "[3]", "f16[3]", "F32[3]", "float[3]", "f32 [3]",
        "f32[3,]", "f32[,3]", "f32[,]", "f32[-1]", "f32[+1]", "f32[3]x", "f32[3] ",
        "f32[ 3]", "f32[3 ]", "f32[**]", "f32[*,3]", "f32[3,*]", "f32[?3]", "f32[3?]",
        "f32[??]", "f32[1,2,3,4,5,6,7,8,9]", "f32[9223372036854775808]",
        "f32[99999999999999999999]", "f32[3][4]", "f32[3]]", "f32[[3]", "f32[0x10]",
        "i32[1.5]", "bool[true]", "f32[3;4]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        weft_spec s = { .dtype = WEFT_I64, .rank = 5 };
        int rc = weft_spec_parse(bad[i], &s);
        cr_assert_eq(rc, WEFT_EINVAL, "\"%s\" parsed (rc %d)", bad[i], rc);
        cr_assert_eq(s.rank, 5, "\"%s\" wrote *out on failure", bad[i]);
        cr_assert_not_null(strstr(weft_errmsg(), "weft_spec_parse"), "%s", weft_errmsg());
    }
    weft_spec s;
    cr_assert_eq(weft_spec_parse(NULL, &s), WEFT_EINVAL);
    cr_assert_eq(weft_spec_parse("f32[3]", NULL), WEFT_EINVAL);
}

Test(spec, format_truncates_like_snprintf, .timeout = 10)
{
    weft_spec s;
    cr_assert_eq(weft_spec_parse("f32[?,3]", &s), 0);
    char buf[4] = "xyz";
    cr_assert_eq(weft_spec_format(&s, buf, sizeof buf), 8);
    cr_assert_str_eq(buf, "f32");
    cr_assert_eq(weft_spec_format(&s, NULL, 0), 8);
    char one[1] = { 'x' };
    cr_assert_eq(weft_spec_format(&s, one, 1), 8);
    cr_assert_eq(one[0], '\0');
}

Test(spec, format_rejects_invalid_specs, .timeout = 10)
{
    char buf[64];
    weft_spec s = { .dtype = (weft_dtype)9, .rank = 1, .dims = { 3 } };
    cr_assert_eq(weft_spec_format(&s, buf, sizeof buf), WEFT_EINVAL);
    s.dtype = WEFT_F32;
    s.rank = 9;
    cr_assert_eq(weft_spec_format(&s, buf, sizeof buf), WEFT_EINVAL);
    s.rank = -2;
    cr_assert_eq(weft_spec_format(&s, buf, sizeof buf), WEFT_EINVAL);
    s.rank = 1;
    s.dims[0] = -2;
    cr_assert_eq(weft_spec_format(&s, buf, sizeof buf), WEFT_EINVAL);
    cr_assert_eq(weft_spec_format(NULL, buf, sizeof buf), WEFT_EINVAL);
    s.dims[0] = 3;
    cr_assert_eq(weft_spec_format(&s, NULL, 5), WEFT_EINVAL);
    cr_assert_str_eq(weft__spec_str(&(weft_spec){ .dtype = (weft_dtype)9 }, buf, sizeof buf),
                     "<invalid spec>");
    cr_assert_str_eq(weft__spec_str(&s, buf, sizeof buf), "f32[3]");
}

Test(spec, dtype_names_and_sizes, .timeout = 10)
{
    static const char *const names[] = { "bool", "i32", "i64", "f32", "f64" };
    static const size_t sizes[] = { 1, 4, 8, 4, 8 };
    for (int i = 0; i < 5; i++) {
        cr_assert_str_eq(weft_dtype_name((weft_dtype)i), names[i]);
        cr_assert_eq(weft_dtype_size((weft_dtype)i), sizes[i]);
    }
    cr_assert_null(weft_dtype_name((weft_dtype)5));
    cr_assert_null(weft_dtype_name((weft_dtype)-1));
    cr_assert_eq(weft_dtype_size((weft_dtype)5), 0);
    cr_assert_eq(weft_dtype_size((weft_dtype)-1), 0);
}

static bool matches(const char *pattern, const char *actual)
{
    weft_spec p, a;
    cr_assert_eq(weft_spec_parse(pattern, &p), 0);
    cr_assert_eq(weft_spec_parse(actual, &a), 0);
    return weft__spec_matches(&p, &a);
}

Test(spec, matching, .timeout = 10)
{
    cr_assert(matches("f32[?,3]", "f32[5,3]"));
    cr_assert(matches("f32[?,3]", "f32[?,3]"));
    cr_assert(matches("f32[*]", "f32[1,2,3]"));
    cr_assert(matches("f32[*]", "f32[]"));
    cr_assert(matches("i32[]", "i32[]"));
    cr_assert_not(matches("f32[?,3]", "f32[5,4]"));
    cr_assert_not(matches("f32[?,3]", "f64[5,3]"));
    cr_assert_not(matches("f32[?,3]", "f32[5]"));
    cr_assert_not(matches("f32[5,3]", "f32[?,3]"));
    cr_assert_not(matches("f32[3]", "f32[*]"));
    cr_assert_not(matches("f32[*]", "i32[*]"));
}

Test(spec, args, .timeout = 10)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 0, NULL, NULL, &t), 0);
    weft_arg a = weft_arg_tensor(t);
    cr_assert_eq(a.kind, WEFT_ARG_TENSOR);
    cr_assert_eq(a.u.tensor, t);
    a = weft_arg_i64(-5);
    cr_assert_eq(a.kind, WEFT_ARG_I64);
    cr_assert_eq(a.u.i64, -5);
    a = weft_arg_f64(2.5);
    cr_assert_eq(a.kind, WEFT_ARG_F64);
    cr_assert_eq(a.u.f64, 2.5);
    weft_tensor_release(t);
}
