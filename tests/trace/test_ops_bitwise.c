/* The bitwise ops against C on i32 and i64 (negative values, shift
 * amounts below 0 and past the width, which clamp), broadcasting a weak
 * scalar, promotion of i32 with i64, the same bits eagerly and traced on
 * 1, 2 and 4 workers, and bool and floats refused. */
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_bitwise, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef enum bw_op { AND, OR, XOR, LSHIFT, RSHIFT, INVERT, SHIFT_BY_3 } bw_op;

static int bw_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const bw_op *)user) {
    case AND: outs[0] = weft_bitwise_and(cx, a[0], a[1]); break;
    case OR: outs[0] = weft_bitwise_or(cx, a[0], a[1]); break;
    case XOR: outs[0] = weft_bitwise_xor(cx, a[0], a[1]); break;
    case LSHIFT: outs[0] = weft_left_shift(cx, a[0], a[1]); break;
    case RSHIFT: outs[0] = weft_right_shift(cx, a[0], a[1]); break;
    case INVERT: outs[0] = weft_invert(cx, a[0]); break;
    case SHIFT_BY_3: outs[0] = weft_left_shift(cx, a[0], weft_const_i64(cx, 3)); break;
    }
    return weft_ctx_status(cx);
}

/* The amount TensorFlow's kernels use: clamped to [0, bits - 1]. */
static int clamp(int64_t s, int bits)
{
    return s < 0 ? 0 : s > bits - 1 ? bits - 1 : (int)s;
}

static int64_t reference(bw_op op, int64_t a, int64_t b, int bits)
{
    switch (op) {
    case AND: return a & b;
    case OR: return a | b;
    case XOR: return a ^ b;
    case INVERT: return ~a;
    case LSHIFT:
        return bits == 32 ? (int64_t)(int32_t)((uint32_t)a << clamp(b, 32))
                          : (int64_t)((uint64_t)a << clamp(b, 64));
    default: {   /* floor(a / 2^s) */
        int s = clamp(b, bits);
        int64_t q = a;
        for (int k = 0; k < s; k++)
            q = q >= 0 ? q / 2 : -((-(q + 1)) / 2) - 1;
        return q;
    }
    }
}

enum { N = 12 };
static const int64_t xs[N] = { 0, 1, -1, 5, -6, 123456, -98765, INT32_MAX, INT32_MIN, 7, -8, 3 };
static const int64_t ys[N] = { 3, 0, 1, 31, 32, -1, 100, 1, 2, 63, 64, -7 };

static weft_tensor *ints(weft_dtype dt, const int64_t *v)
{
    int32_t v32[N];
    for (int i = 0; i < N; i++)
        v32[i] = (int32_t)v[i];
    int64_t n = N;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, 1, &n, dt == WEFT_I32 ? (const void *)v32 : v, &t), 0);
    return t;
}

static int64_t at(const weft_tensor *t, int64_t i)
{
    return weft_tensor_dtype(t) == WEFT_I32 ? ((const int32_t *)weft_tensor_data(t))[i]
                                            : ((const int64_t *)weft_tensor_data(t))[i];
}

Test(ops_bitwise, against_c_on_both_integer_dtypes)
{
    const weft_dtype dts[2] = { WEFT_I32, WEFT_I64 };
    for (int d = 0; d < 2; d++) {
        int bits = dts[d] == WEFT_I32 ? 32 : 64;
        weft_tensor *args[2] = { ints(dts[d], xs), ints(dts[d], ys) };
        for (bw_op op = AND; op <= INVERT; op++) {
            weft_tensor *out;
            op_results_everywhere(bw_body, &op, args, op == INVERT ? 1 : 2, &out, 1, "bitwise");
            cr_assert_eq(weft_tensor_dtype(out), dts[d]);
            for (int i = 0; i < N; i++) {
                int64_t x = bits == 32 ? (int32_t)xs[i] : xs[i];
                int64_t y = bits == 32 ? (int32_t)ys[i] : ys[i];
                int64_t want = reference(op, x, y, bits);
                if (bits == 32)
                    want = (int32_t)want;
                cr_assert_eq(at(out, i), want, "%s op %d: %lld, %lld gives %lld, expected %lld",
                             weft_dtype_name(dts[d]), op, (long long)x, (long long)y,
                             (long long)at(out, i), (long long)want);
            }
            weft_tensor_release(out);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

Test(ops_bitwise, weak_scalars_and_promotion)
{
    weft_tensor *x = ints(WEFT_I32, xs);
    bw_op op = SHIFT_BY_3;
    weft_tensor *out;
    op_results_everywhere(bw_body, &op, &x, 1, &out, 1, "shift by a weak 3");
    cr_assert_eq(weft_tensor_dtype(out), WEFT_I32);
    for (int i = 0; i < N; i++)
        cr_assert_eq(at(out, i), (int32_t)((uint32_t)(int32_t)xs[i] << 3));
    weft_tensor_release(out);
    /* i32 with i64 computes in i64. */
    weft_tensor *args[2] = { x, ints(WEFT_I64, ys) };
    op = XOR;
    op_results_everywhere(bw_body, &op, args, 2, &out, 1, "i32 ^ i64");
    cr_assert_eq(weft_tensor_dtype(out), WEFT_I64);
    for (int i = 0; i < N; i++)
        cr_assert_eq(at(out, i), (int64_t)(int32_t)xs[i] ^ ys[i]);
    weft_tensor_release(out);
    weft_tensor_release(args[1]);
    weft_tensor_release(x);
}

Test(ops_bitwise, bool_and_floats_are_refused)
{
    int64_t n = 2;
    weft_tensor *f = NULL, *b = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, (const float[]){ 1, 2 }, &f), 0);
    cr_assert_eq(weft_tensor_create(WEFT_BOOL, 1, &n, (const uint8_t[]){ 1, 0 }, &b), 0);
    weft_tensor *args[2] = { f, f };
    bw_op op = AND;
    weft_tensor *out = NULL;
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(op_call(rts[0], bw_body, &op, args, 2, &out, 1, eager), WEFT_EDTYPE);
        cr_assert(strstr(weft_errmsg(), "weft_bitwise_and: f32[2] and f32[2] are not integer"),
                  "%s", weft_errmsg());
    }
    op = INVERT;
    cr_assert_eq(op_call(rts[0], bw_body, &op, &b, 1, &out, 1, true), WEFT_EDTYPE);
    cr_assert(strstr(weft_errmsg(), "weft_invert: bool[2] is not an integer tensor"), "%s",
              weft_errmsg());
    weft_tensor_release(f);
    weft_tensor_release(b);
}
