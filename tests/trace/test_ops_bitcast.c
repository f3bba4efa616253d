/* bitcast (tf.bitcast): the bytes of f32, i32, i64 and f64 tensors read as
 * each other (NaN payloads and -0.0 kept), the dim of 2 gained from an
 * 8-byte dtype and lost to one, round trips, a weak scalar, a last dim
 * unknown while tracing (checked when the function runs), the same bits
 * eagerly and traced on 1, 2 and 4 workers, and the refused calls. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_bitcast, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

/* user: the dtype to read the argument as; the second, when set, reads the
 * result back as the argument's dtype. */
typedef struct cast_case {
    weft_dtype to, back;
    bool round_trip;
} cast_case;

static int bitcast_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cast_case *c = user;
    weft_value *y = weft_bitcast(cx, a[0], c->to);
    outs[0] = c->round_trip ? weft_bitcast(cx, y, c->back) : y;
    return weft_ctx_status(cx);
}

static weft_tensor *raw_tensor(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_tensor *bitcast_of(weft_tensor *t, weft_dtype to, int rank, const int64_t *dims)
{
    cast_case c = { .to = to };
    weft_tensor *out;
    op_results_everywhere(bitcast_body, &c, &t, 1, &out, 1, "bitcast");
    cr_assert_eq(weft_tensor_dtype(out), to);
    cr_assert_eq(weft_tensor_rank(out), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(out)[d], dims[d], "dim %d", d);
    return out;
}

Test(ops_bitcast, equal_sizes_keep_the_shape_and_the_bits)
{
    const float f[4] = { 1.0f, -0.0f, NAN, -3.5f };
    uint32_t bits[4];
    memcpy(bits, f, sizeof bits);
    bits[2] |= 0x1234;   /* a NaN with a payload */
    weft_tensor *t = raw_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 2 }, bits);
    weft_tensor *i = bitcast_of(t, WEFT_I32, 2, (const int64_t[]){ 2, 2 });
    const int32_t *iv = weft_tensor_data(i);
    cr_assert_eq(iv[0], 0x3f800000);
    cr_assert_eq(iv[1], INT32_MIN);
    cr_assert_eq(memcmp(iv, bits, sizeof bits), 0, "the bits differ");
    weft_tensor *back = bitcast_of(i, WEFT_F32, 2, (const int64_t[]){ 2, 2 });
    cr_assert_eq(memcmp(weft_tensor_data(back), bits, sizeof bits), 0, "the round trip differs");
    const int64_t l[2] = { INT64_MIN, 0x3ff0000000000000 };
    weft_tensor *tl = raw_tensor(WEFT_I64, 1, (const int64_t[]){ 2 }, l);
    weft_tensor *d = bitcast_of(tl, WEFT_F64, 1, (const int64_t[]){ 2 });
    const double *dv = weft_tensor_data(d);
    cr_assert(dv[0] == 0 && signbit(dv[0]), "INT64_MIN is -0.0, got %g", dv[0]);
    cr_assert_eq(dv[1], 1.0);
    weft_tensor *same = bitcast_of(tl, WEFT_I64, 1, (const int64_t[]){ 2 });
    cr_assert_eq(memcmp(weft_tensor_data(same), l, sizeof l), 0);
    weft_tensor *all[] = { t, i, back, tl, d, same };
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        weft_tensor_release(all[k]);
}

Test(ops_bitcast, eight_bytes_split_into_two_and_join_back)
{
    const double v[3] = { 1.0, -2.0, 0x1.123456789abcdp-3 };
    weft_tensor *t = raw_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v);
    weft_tensor *w = bitcast_of(t, WEFT_I32, 2, (const int64_t[]){ 3, 2 });
    const int32_t *wv = weft_tensor_data(w);
    /* The lower-addressed word first: the low word on x86-64. */
    cr_assert_eq(wv[0], 0);
    cr_assert_eq(wv[1], 0x3ff00000);
    cr_assert_eq(wv[3], (int32_t)0xc0000000);
    cr_assert_eq(memcmp(wv, v, sizeof v), 0, "the bits differ");
    weft_tensor *joined = bitcast_of(w, WEFT_I64, 1, (const int64_t[]){ 3 });
    cr_assert_eq(memcmp(weft_tensor_data(joined), v, sizeof v), 0, "the join differs");
    weft_tensor *f = bitcast_of(t, WEFT_F32, 2, (const int64_t[]){ 3, 2 });
    cr_assert_eq(memcmp(weft_tensor_data(f), v, sizeof v), 0, "the f32 view differs");
    cast_case c = { .to = WEFT_F32, .back = WEFT_F64, .round_trip = true };
    weft_tensor *back;
    op_results_everywhere(bitcast_body, &c, &t, 1, &back, 1, "f64 -> f32 -> f64");
    cr_assert_eq(weft_tensor_rank(back), 1);
    cr_assert_eq(memcmp(weft_tensor_data(back), v, sizeof v), 0, "the round trip differs");
    weft_tensor *all[] = { t, w, joined, f, back };
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        weft_tensor_release(all[k]);
}

static int weak_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    (void)user;
    outs[0] = weft_bitcast(cx, weft_const_f64(cx, 1.0), WEFT_I64);
    return weft_ctx_status(cx);
}

Test(ops_bitcast, a_weak_scalar_is_its_f64)
{
    weft_tensor *out;
    weft_tensor *dummy = raw_tensor(WEFT_F32, 0, NULL, (const float[]){ 0 });
    op_results_everywhere(weak_body, NULL, &dummy, 1, &out, 1, "weak scalar");
    cr_assert_eq(weft_tensor_dtype(out), WEFT_I64);
    cr_assert_eq(weft_tensor_rank(out), 0);
    cr_assert_eq(*(const int64_t *)weft_tensor_data(out), 0x3ff0000000000000);
    weft_tensor_release(out);
    weft_tensor_release(dummy);
}

Test(ops_bitcast, a_last_dim_unknown_while_tracing_is_checked_when_it_runs)
{
    cast_case c = { .to = WEFT_F64 };
    const weft_spec sig = { .dtype = WEFT_I32, .rank = 2, .dims = { 2, WEFT_DIM_ANY } };
    weft_function *f = op_signature_function(rts[1], bitcast_body, &c, &sig, 1);
    const int32_t good[4] = { 0, 0x3ff00000, 0, 0x40000000 };
    weft_tensor *t = raw_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 2 }, good), *out = NULL;
    weft_arg a = weft_arg_tensor(t);
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_rank(out), 1);
    cr_assert_eq(((const double *)weft_tensor_data(out))[1], 2.0);
    weft_tensor_release(out);
    weft_tensor_release(t);
    const int32_t bad[6] = { 0 };
    t = raw_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 3 }, bad);
    a = weft_arg_tensor(t);
    out = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_bitcast: i32[2,3] to f64 needs a last dim of 2"), "%s",
              weft_errmsg());
    cr_assert_null(out);
    weft_tensor_release(t);
    op_destroy_traced_once(&f);
}

typedef enum bad_call { FROM_BOOL, TO_BOOL, LAST_DIM, SCALAR, UNKNOWN_DTYPE } bad_call;

/* args: bool [2], i32 [3], i32 scalar. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch ((bad_call) * (const int *)user) {
    case FROM_BOOL: outs[0] = weft_bitcast(cx, a[0], WEFT_I32); break;
    case TO_BOOL: outs[0] = weft_bitcast(cx, a[1], WEFT_BOOL); break;
    case LAST_DIM: outs[0] = weft_bitcast(cx, a[1], WEFT_I64); break;
    case SCALAR: outs[0] = weft_bitcast(cx, a[2], WEFT_F64); break;
    case UNKNOWN_DTYPE: outs[0] = weft_bitcast(cx, a[1], (weft_dtype)42); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_bitcast, refused_calls_name_the_op)
{
    weft_tensor *args[3] = { raw_tensor(WEFT_BOOL, 1, (const int64_t[]){ 2 }, NULL),
                             raw_tensor(WEFT_I32, 1, (const int64_t[]){ 3 }, NULL),
                             raw_tensor(WEFT_I32, 0, NULL, NULL) };
    const op_error_case cases[] = {
        { FROM_BOOL, WEFT_EDTYPE, "weft_bitcast: bool[2] to i32: bool has no bit pattern" },
        { TO_BOOL, WEFT_EDTYPE, "weft_bitcast: i32[3] to bool: bool has no bit pattern" },
        { LAST_DIM, WEFT_ESHAPE, "weft_bitcast: i32[3] to i64 needs a last dim of 2" },
        { SCALAR, WEFT_ESHAPE, "weft_bitcast: i32[] to f64 needs a last dim of 2" },
        { UNKNOWN_DTYPE, WEFT_EINVAL, "weft_bitcast: unknown dtype 42" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
