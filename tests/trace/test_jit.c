/* The native tier (trace/jit.h): fused groups compiled with LLVM must
 * give the interpreter's and eager mode's bits.  A differential test of
 * random op graphs (the graphs of test_differential.c, with more unary
 * ops) runs each seed eagerly, on the interpreter (WEFT_FUNCTION_NO_JIT)
 * and on native code (every group compiled: the size threshold is set to
 * one element), on 1, 2 and 4 workers, once more with every flat
 * group's output written with non-temporal stores (the size threshold
 * of that path set to one byte).  Other tests: directed ops on special
 * values, a function's groups shared among compile threads, the
 * non-temporal path on every dtype and on sizes around its
 * 64-byte lines, rows computed in blocks of rows on every dtype and on
 * heights around a block (is_nan, is_inf and is_finite there too), a
 * failed compile falls back, eviction frees native
 * code, the off switches, and a process that exits in the middle of a
 * compile without destroying anything exits cleanly.  Tests wait for the compile thread by
 * polling with a bound, never by timing. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <weft.h>

#include "diff_util.h"
#include "test_sanitized.h"
#include "worker_runtimes.h"
#include "trace/jit.h"

static int64_t old_min;

static void setup(void)
{
    worker_runtimes_create();
    old_min = weft__jit_set_min_elems(1);
}

static void teardown(void)
{
    weft__jit_set_min_elems(old_min);
    worker_runtimes_destroy();
}

TestSuite(jit, .init = setup, .fini = teardown, .timeout = 600);

/* Waits until the compile thread has no compile queued or running: at
 * most two minutes (a loaded machine under valgrind), polling. */
static void wait_compiles(void)
{
    struct timespec ms = { 0, 1000000 };
    for (int i = 0; i < 120000 && weft__jit_pending() > 0; i++)
        nanosleep(&ms, NULL);
    cr_assert_eq(weft__jit_pending(), 0, "the compile thread did not finish in two minutes");
}

/* Waits until pred() holds (at most two minutes). */
static bool wait_for(bool (*pred)(void))
{
    struct timespec ms = { 0, 1000000 };
    for (int i = 0; i < 120000 && !pred(); i++)
        nanosleep(&ms, NULL);
    return pred();
}

/* The neural-network ops with an axis or a parameter, as unary ops: over
 * the last axis (a scalar takes exp instead: it has no axis). */
static bool has_axis(weft_value *a)
{
    weft_spec sp;
    return weft_value_spec(a, &sp) == 0 && sp.rank > 0;
}

static weft_value *softmax_last(weft_ctx *cx, weft_value *a)
{
    return has_axis(a) ? weft_softmax(cx, a, -1) : weft_exp(cx, a);
}

static weft_value *log_softmax_last(weft_ctx *cx, weft_value *a)
{
    return has_axis(a) ? weft_log_softmax(cx, a, -1) : weft_exp(cx, a);
}

static weft_value *logsumexp_last(weft_ctx *cx, weft_value *a)
{
    return has_axis(a) ? weft_logsumexp(cx, a, -1, true) : weft_exp(cx, a);
}

static weft_value *leaky_relu_02(weft_ctx *cx, weft_value *a)
{
    return weft_leaky_relu(cx, a, 0.2);
}

/* betainc as a binary op of the graphs: a and b, and sigmoid(b) as the
 * point in [0, 1], so that a group holds an op of three operands. */
static weft_value *betainc_ab(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_betainc(cx, a, b, weft_sigmoid(cx, b));
}

/* ldexp as a binary op of the graphs: b's integer part (saturated) as
 * the power. */
static weft_value *ldexp_by(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_ldexp(cx, a, weft_cast(cx, b, WEFT_I32));
}

/* The random program (diff_random_body) draws from these ops: those of
 * test_differential.c and more. */
static const diff_binop bins[] = { weft_add, weft_sub, weft_mul, weft_div, weft_minimum,
                                   weft_maximum, weft_lt, weft_eq, weft_mod, weft_pow,
                                   weft_floordiv, weft_ge, weft_ne, weft_truediv, weft_atan2,
                                   weft_igamma, weft_igammac, weft_truncatediv,
                                   weft_truncatemod, weft_zeta, weft_polygamma,
                                   weft_nextafter, betainc_ab, weft_logaddexp,
                                   weft_logaddexp2, weft_hypot, weft_copysign, weft_heaviside,
                                   weft_igamma_grad_a, weft_random_gamma_grad, ldexp_by };
static const diff_unop any_un[] = { weft_neg, weft_abs, weft_relu, weft_sign, weft_square,
                                    weft_floor, weft_is_nan, weft_is_inf, weft_is_finite,
                                    weft_relu6 };
static const diff_unop flt_un[] = { weft_sqrt, weft_exp, weft_log, weft_tanh, weft_sigmoid,
                                    weft_sin, weft_cos, weft_round, weft_ceil, weft_rsqrt,
                                    weft_log1p, weft_expm1, weft_erf, weft_erfc, weft_tan,
                                    weft_asin, weft_acos, weft_atan, weft_sinh, weft_cosh,
                                    weft_asinh, weft_acosh, weft_atanh, weft_lgamma,
                                    weft_digamma, weft_erfinv, weft_ndtri, weft_bessel_i0,
                                    weft_bessel_i0e, weft_bessel_i1, weft_bessel_i1e,
                                    weft_bessel_j0, weft_bessel_j1, weft_bessel_y0,
                                    weft_bessel_y1, weft_bessel_k0, weft_bessel_k0e,
                                    weft_bessel_k1, weft_bessel_k1e, weft_expint, weft_dawsn,
                                    weft_spence, weft_fresnel_cos, weft_fresnel_sin,
                                    weft_log2, weft_log10, weft_exp2, weft_cbrt, weft_sinc,
                                    weft_hard_sigmoid, weft_hard_swish,
                                    weft_selu, weft_softsign, weft_mish, weft_softplus, weft_silu, weft_log_sigmoid, weft_gelu_exact,
                                    weft_gelu, weft_elu, leaky_relu_02, softmax_last,
                                    log_softmax_last, logsumexp_last };
static const diff_ops ops = { .bin = bins, .n_bin = DIFF_LEN(bins),
                              .any_un = any_un, .n_any_un = DIFF_LEN(any_un),
                              .flt_un = flt_un, .n_flt_un = DIFF_LEN(flt_un),
                              .bool_un = weft_logical_not };

/* ---- Comparison ------------------------------------------------------ */

typedef struct outcome {
    int rc;
    weft_tensor *out[2];
    uint64_t native;
} outcome;

/* Tiers of run_one. */
enum { EAGER, TIER0, TIER1 };

/* Runs p on rt: eagerly, twice on the interpreter (the second call is a
 * cache hit), or once on the interpreter and, after its groups compiled,
 * again (native where the back end took the group). */
static void run_one(weft_runtime *rt, diff_prog *p, int tier, const weft_arg *args, outcome *o)
{
    unsigned flags = tier == EAGER ? WEFT_RUN_EAGERLY : tier == TIER0 ? WEFT_FUNCTION_NO_JIT : 0;
    weft_function_desc d = { .name = "random", .body = diff_random_body, .user = p, .n_args = 4,
                             .n_outs = 2, .flags = flags };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    for (int c = 0; c < (tier == EAGER ? 1 : 2); c++) {
        if (c == 1 && tier == TIER1)
            wait_compiles();
        for (int k = 0; k < 2; k++)
            weft_tensor_release(o->out[k]);
        memset(o->out, 0, sizeof o->out);
        o->rc = weft_function_call(f, args, 4, o->out, 2);
    }
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    o->native = st.native_groups;
    if (tier == TIER0)
        cr_assert_eq(st.native_groups, 0, "WEFT_FUNCTION_NO_JIT ran native code");
    cr_assert_eq(st.native_failed, 0, "a compile failed");
    if (getenv("DIFF_OPS") && tier == TIER1)
        weft_function_print_ops(f, 0, stderr);
    weft_function_destroy(&f);
}

/* Returns how many groups ran native code on the first runtime. */
static uint64_t check_seed(uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    static const int64_t sizes[] = { 1, 3, 7, 64, 300, 1500 };
    int64_t A, B;
    do {
        A = sizes[diff_next(&s) % 6];
        B = sizes[diff_next(&s) % 6];
    } while (A * B > 70000);
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    weft_dtype dt = diff_next(&s) % 3 ? dts[3 + diff_next(&s) % 2] : dts[diff_next(&s) % 5];
    weft_dtype dt2 = diff_next(&s) % 4 ? dt : dts[diff_next(&s) % 5];
    int64_t full[2] = { A, B }, row[2] = { A, 1 }, col[1] = { B };
    weft_tensor *in[4] = {
        diff_random_tensor_ex(dt, 2, full, &s, false), diff_random_tensor_ex(dt2, 2, row, &s, false),
        diff_random_tensor_ex(dt, 1, col, &s, false), diff_random_tensor_ex(dt2, 0, NULL, &s, false),
    };
    weft_arg args[4];
    for (int k = 0; k < 4; k++)
        args[k] = weft_arg_tensor(in[k]);
    diff_prog p = { .seed = diff_next(&s), .ops = &ops };

    outcome ref = { 0 };
    run_one(rts[0], &p, EAGER, args, &ref);
    uint64_t native = 0;
    for (int k = 0; k < N_RT; k++)
        for (int tier = TIER0; tier <= TIER1; tier++) {
            outcome o = { 0 };
            run_one(rts[k], &p, tier, args, &o);
            if (k == 0 && tier == TIER1)
                native = o.native;
            cr_assert_eq(o.rc, ref.rc, "seed %llu, [%lld,%lld], %u workers, tier %d: rc %d vs %d (%s)",
                         (unsigned long long)seed, (long long)A, (long long)B, rt_workers[k],
                         tier - 1, o.rc, ref.rc, weft_errmsg());
            for (int q = 0; q < 2 && o.rc == 0; q++) {
                char why[160];
                cr_assert(diff_same_bits(o.out[q], ref.out[q], why, sizeof why),
                          "seed %llu, [%lld,%lld] %s/%s, %u workers, tier %d, output %d: %s",
                          (unsigned long long)seed, (long long)A, (long long)B,
                          weft_dtype_name(dt), weft_dtype_name(dt2), rt_workers[k], tier - 1, q, why);
            }
            for (int q = 0; q < 2; q++)
                weft_tensor_release(o.out[q]);
        }
    for (int q = 0; q < 2; q++)
        weft_tensor_release(ref.out[q]);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(in[k]);
    return native;
}

/* The first runtime of rts[] the sanitized builds run the bigger cases
 * on: they watch threads meeting, and the plain runs cover 1 worker. */
#define FIRST_THREADED_RT (TEST_SANITIZED ? 1 : 0)

/* Fewer under the sanitizers, where each seed costs several times more. */
#define SEEDS_PER_TEST (TEST_SANITIZED ? 10 : 20)

/* Most seeds must have run native code, or the comparison tested
 * nothing. */
static void check_seeds(uint64_t from)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    uint64_t with_native = 0;
    for (uint64_t seed = from; seed < from + SEEDS_PER_TEST; seed++)
        with_native += check_seed(seed) > 0;
    cr_assert_geq(with_native, SEEDS_PER_TEST / 2, "only %llu of %d seeds ran native code",
                  (unsigned long long)with_native, SEEDS_PER_TEST);
}

Test(jit, random_graphs_0) { check_seeds(0); }
Test(jit, random_graphs_1) { check_seeds(SEEDS_PER_TEST); }

Test(jit, random_graphs_nontemporal)
{
    uint64_t made = weft__jit_nt_groups();
    int64_t old = weft__jit_set_nt_min_bytes(1);
    check_seeds(0);
    weft__jit_set_nt_min_bytes(old);
    cr_assert_gt(weft__jit_nt_groups(), made, "no group took the non-temporal path");
}

/* ---- Groups shared among compile threads --------------------------------- */

static int hsv_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_rgb_to_hsv(cx, args[0]);
    return weft_ctx_status(cx);
}

/* rgb_to_hsv traces to several fused groups: compiled in one module on the
 * compile thread and shared among three modules (two on helper threads),
 * every group runs native code with the interpreter's bits; so do the
 * random graphs, whose two outputs make two groups. */
Test(jit, groups_shared_among_threads_give_the_interpreters_bits)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    uint64_t s = 12345;
    int64_t dims[2] = { 515, 3 };
    weft_tensor *img = diff_random_tensor_ex(WEFT_F32, 2, dims, &s, false);
    weft_arg arg = weft_arg_tensor(img);
    weft_tensor *out[3] = { NULL, NULL, NULL };
    uint64_t native[3];
    static const unsigned threads[3] = { 0, 1, 3 };
    static const unsigned flags[3] = { WEFT_FUNCTION_NO_JIT, 0, 0 };
    unsigned old = weft__jit_compile_threads();
    uint64_t helped = weft__jit_helper_modules();
    for (int k = 0; k < 3; k++) {
        weft__jit_set_compile_threads(threads[k]);
        weft_function_desc d = { .name = "hsv", .body = hsv_body, .n_args = 1, .n_outs = 1,
                                 .flags = flags[k] };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rts[0], &d, &f), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_function_call(f, &arg, 1, &out[k], 1), 0, "%s", weft_errmsg());
        wait_compiles();
        weft_tensor_release(out[k]);
        out[k] = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &out[k], 1), 0, "%s", weft_errmsg());
        weft_function_stats st;
        weft_function_get_stats(f, &st);
        native[k] = st.native_groups;
        cr_assert_eq(st.native_failed, 0, "a compile failed");
        weft_function_destroy(&f);
    }
    cr_assert_geq(native[1], 3, "rgb_to_hsv ran %llu native groups", (unsigned long long)native[1]);
    cr_assert_eq(native[2], native[1], "shared: %llu native groups, one module: %llu",
                 (unsigned long long)native[2], (unsigned long long)native[1]);
    cr_assert_geq(weft__jit_helper_modules(), helped + 2, "the helper threads emitted no module");
    for (int k = 1; k < 3; k++) {
        char why[160];
        cr_assert(diff_same_bits(out[k], out[0], why, sizeof why), "%u compile threads: %s",
                  threads[k], why);
    }
    helped = weft__jit_helper_modules();
    weft__jit_set_compile_threads(3);
    check_seeds(2 * SEEDS_PER_TEST);
    weft__jit_set_compile_threads(old);
    cr_assert_gt(weft__jit_helper_modules(), helped, "no random graph was shared out");
    for (int k = 0; k < 3; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(img);
}

/* ---- Directed ops on special values -------------------------------------- */

typedef weft_value *(*binop_fn)(weft_ctx *, weft_value *, weft_value *);
typedef weft_value *(*unop_fn)(weft_ctx *, weft_value *);
static const binop_fn d_bins[] = { weft_add, weft_sub, weft_mul, weft_div, weft_mod, weft_pow,
                                   weft_minimum, weft_maximum, weft_eq, weft_ne, weft_lt,
                                   weft_le, weft_gt, weft_ge, weft_floordiv, weft_truediv,
                                   weft_logical_and, weft_logical_or, weft_atan2,
                                   weft_bitwise_and, weft_bitwise_or, weft_bitwise_xor,
                                   weft_left_shift, weft_right_shift, weft_igamma, weft_igammac,
                                   weft_truncatediv, weft_truncatemod, weft_zeta, weft_polygamma,
                                   weft_nextafter, betainc_ab, weft_logaddexp,
                                   weft_logaddexp2, weft_hypot, weft_copysign, weft_heaviside,
                                   weft_gcd, weft_lcm, weft_igamma_grad_a,
                                   weft_random_gamma_grad, ldexp_by };
static const unop_fn d_uns[] = { weft_neg, weft_abs, weft_sqrt, weft_exp, weft_log, weft_tanh,
                                 weft_sigmoid, weft_relu, weft_sin, weft_cos, weft_floor,
                                 weft_ceil, weft_round, weft_rsqrt, weft_square, weft_sign,
                                 weft_log1p, weft_expm1, weft_logical_not, weft_erf, weft_erfc,
                                 weft_tan, weft_asin, weft_acos, weft_atan, weft_sinh, weft_cosh,
                                 weft_asinh, weft_acosh, weft_atanh, weft_lgamma, weft_digamma,
                                 weft_erfinv, weft_ndtri, weft_bessel_i0, weft_bessel_i0e,
                                 weft_bessel_i1, weft_bessel_i1e, weft_bessel_j0, weft_bessel_j1,
                                 weft_bessel_y0, weft_bessel_y1, weft_bessel_k0, weft_bessel_k0e,
                                 weft_bessel_k1, weft_bessel_k1e, weft_expint, weft_dawsn,
                                 weft_spence, weft_fresnel_cos, weft_fresnel_sin, weft_invert,
                                 weft_log2, weft_log10, weft_exp2, weft_cbrt,
                                 weft_is_nan,
                                 weft_is_inf,
                                 weft_is_finite, weft_softplus,
                                 weft_silu, weft_log_sigmoid, weft_relu6, weft_gelu_exact,
                                 weft_gelu, weft_elu, leaky_relu_02, softmax_last,
                                 log_softmax_last, logsumexp_last };
#define N_BINS (sizeof d_bins / sizeof d_bins[0])
#define N_UNS (sizeof d_uns / sizeof d_uns[0])

typedef struct dcase {
    int kind;          /* 0: binary, 1: unary, 2: cast */
    unsigned idx;
    weft_dtype to;
} dcase;

/* op(x, y), then a where that keeps its bits, so that the group has
 * several instructions. */
static int directed_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const dcase *c = user;
    weft_value *x = args[0], *y = args[1];
    weft_value *r = c->kind == 0 ? d_bins[c->idx](cx, x, y)
                  : c->kind == 1 ? d_uns[c->idx](cx, x) : weft_cast(cx, x, c->to);
    outs[0] = weft_where(cx, weft_eq(cx, x, y), r, r);
    return weft_ctx_status(cx);
}

#define D_N 48

static weft_tensor *special_tensor(weft_dtype dt, bool flip)
{
    static const double fv[] = { 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 7.0, -7.0,
                                 1e30, -1e30, INFINITY, -INFINITY, NAN, 3e9, -3e9, 1e19, -1e19,
                                 2147483647.5, -2147483648.5, 0.1, -3.0, 1e-40, 100.0, -100.25 };
    static const int64_t iv[] = { 0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, INT32_MAX, INT32_MIN,
                                  INT64_MAX, INT64_MIN, 5, 31, -31, 64, 2 };
    unsigned char buf[D_N * 8];
    size_t nf = sizeof fv / sizeof fv[0], ni = sizeof iv / sizeof iv[0];
    for (int i = 0; i < D_N; i++) {
        int k = flip ? (i * 7 + 3) : i;
        switch (dt) {
        case WEFT_BOOL: buf[i] = (unsigned char)((k / 2) % 2); break;
        case WEFT_I32: ((int32_t *)(void *)buf)[i] = (int32_t)iv[(size_t)k % ni]; break;
        case WEFT_I64: ((int64_t *)(void *)buf)[i] = iv[(size_t)k % ni]; break;
        case WEFT_F32: ((float *)(void *)buf)[i] = (float)fv[(size_t)k % nf]; break;
        case WEFT_F64: ((double *)(void *)buf)[i] = fv[(size_t)k % nf]; break;
        }
    }
    int64_t dims[1] = { D_N };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, 1, dims, buf, &t), 0, "%s", weft_errmsg());
    return t;
}

/* Runs case c on x, y: eagerly (rc and result into *ref when ref_rc is
 * NULL... ) */
static int run_case(weft_runtime *rt, dcase *c, unsigned flags, weft_tensor *x, weft_tensor *y,
                    weft_tensor **out, uint64_t *native)
{
    weft_function_desc d = { .name = "directed", .body = directed_body, .user = c, .n_args = 2,
                             .n_outs = 1, .flags = flags };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg args[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
    int rc = weft_function_call(f, args, 2, out, 1);
    if (rc == 0 && !(flags & WEFT_RUN_EAGERLY)) {
        weft_tensor_release(*out);
        *out = NULL;
        wait_compiles();
        rc = weft_function_call(f, args, 2, out, 1);
    }
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    *native = st.native_groups;
    weft_function_destroy(&f);
    return rc;
}

Test(jit, directed_ops_on_special_values)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    /* 1 and 4 workers; only 4 under the sanitizers, where the plain runs'
     * single worker adds no thread to watch. */
    const int first_rt = TEST_SANITIZED ? 2 : 0;
    uint64_t native_cases = 0, cases = 0;
    for (int di = 0; di < 5; di++) {
        weft_dtype dt = dts[di];
        weft_tensor *x = special_tensor(dt, false), *y = special_tensor(dt, true);
        for (int kind = 0; kind < 3; kind++) {
            unsigned n = kind == 0 ? N_BINS : kind == 1 ? N_UNS : 5;
            for (unsigned idx = 0; idx < n; idx++) {
                dcase c = { kind, idx, dts[idx % 5] };
                weft_tensor *ref = NULL, *got = NULL;
                uint64_t nat = 0;
                int rc0 = run_case(rts[0], &c, WEFT_RUN_EAGERLY, x, y, &ref, &nat);
                if (rc0 != 0)
                    continue;   /* an op the dtype does not take */
                for (int k = first_rt; k < N_RT; k += 2) {
                    int rc1 = run_case(rts[k], &c, 0, x, y, &got, &nat);
                    cr_assert_eq(rc1, 0, "%s: kind %d op %u: %s", weft_dtype_name(dt), kind, idx,
                                 weft_errmsg());
                    char why[160];
                    cr_assert(diff_same_bits(got, ref, why, sizeof why), "%s: kind %d op %u, %u workers: %s",
                              weft_dtype_name(dt), kind, idx, rt_workers[k], why);
                    weft_tensor_release(got);
                    got = NULL;
                    native_cases += k == first_rt && nat > 0;
                }
                cases++;
                weft_tensor_release(ref);
            }
        }
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    /* Every case compiles (float floordiv and integer pow call the
     * interpreter's element functions). */
    cr_assert_eq(native_cases, cases, "%llu of %llu cases ran native code",
                 (unsigned long long)native_cases, (unsigned long long)cases);
}

/* ---- Fallback, eviction, off switches ------------------------------------- */

/* The chain of docs/BENCHMARKS.md: sqrt(abs(1.5x - 2)) * x + exp(-x*x). */
static int chain_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0];
    weft_value *a = weft_sqrt(cx, weft_abs(cx, weft_sub(cx, weft_mul(cx, weft_const_f64(cx, 1.5), x),
                                                          weft_const_f64(cx, 2.0))));
    outs[0] = weft_add(cx, weft_mul(cx, a, x), weft_exp(cx, weft_neg(cx, weft_mul(cx, x, x))));
    return weft_ctx_status(cx);
}

static weft_function *chain_fn(weft_runtime *rt, unsigned flags, size_t max_cached)
{
    weft_function_desc d = { .name = "chain", .body = chain_body, .n_args = 1, .n_outs = 1,
                             .flags = flags, .max_cached = max_cached };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static weft_tensor *ramp(int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i / (float)n * 4.0f - 2.0f;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, v, &t), 0, "%s", weft_errmsg());
    free(v);
    return t;
}

static weft_tensor *call1(weft_function *f, weft_tensor *x)
{
    weft_arg a = weft_arg_tensor(x);
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), 0, "%s", weft_errmsg());
    return out;
}

static bool ops_say_native(weft_function *f)
{
    char *buf = test_ops_text(f);
    bool yes = strstr(buf, " native") != NULL;
    free(buf);
    return yes;
}

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int n_logged;
static char logged[512];

static void sink(int level, const char *msg, void *user)
{
    (void)user;
    pthread_mutex_lock(&log_mu);
    if (level == WEFT_LOG_WARN && strstr(msg, "native code")) {
        n_logged++;
        snprintf(logged, sizeof logged, "%s", msg);
    }
    pthread_mutex_unlock(&log_mu);
}

Test(jit, failed_compile_falls_back)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    weft_set_log(sink, NULL);
    weft__jit_fail_next(1);
    weft_function *f = chain_fn(rts[1], 0, 0);
    weft_tensor *x = ramp(1000);
    weft_tensor *first = call1(f, x);
    wait_compiles();
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.native_groups, 0);
    cr_assert_geq(st.native_failed, 1);
    cr_assert_gt(st.native_compile_ns, 0);
    cr_assert(!ops_say_native(f));
    weft_tensor *again = call1(f, x);
    char why[160];
    cr_assert(diff_same_bits(again, first, why, sizeof why), "%s", why);
    pthread_mutex_lock(&log_mu);
    cr_assert_eq(n_logged, 1, "%d log lines", n_logged);
    cr_assert(strstr(logged, "chain") && strstr(logged, "injected"), "%s", logged);
    pthread_mutex_unlock(&log_mu);
    weft_set_log(NULL, NULL);
    weft_tensor_release(first);
    weft_tensor_release(again);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

/* ---- Loading LLVM ---------------------------------------------------------- */

/* Whether libLLVM is in the process (RTLD_NOLOAD opens nothing). */
static bool llvm_loaded(void)
{
    void *h = dlopen(weft__jit_llvm_library(), RTLD_LAZY | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

/* Criterion runs each test in a process of its own; run in one process
 * with others (--no-fork) a test may find the native tier started.  Only
 * a start skips: LLVM loaded without one is what the tests catch. */
static void skip_unless_fresh_process(void)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    if (weft__jit_start_ns() != 0)
        cr_skip_test("the native tier started earlier in this process");
}

/* libLLVM is opened when the first compile starts the native tier, not
 * when the program starts: until then a process that ran functions on
 * the interpreter has not loaded it. */
Test(jit, llvm_is_loaded_by_the_first_compile)
{
    skip_unless_fresh_process();
    weft_function *plain = chain_fn(rts[1], WEFT_FUNCTION_NO_JIT, 0);
    weft_tensor *x = ramp(1000);
    weft_tensor *a = call1(plain, x);
    cr_assert(!llvm_loaded(), "an interpreted call loaded %s", weft__jit_llvm_library());
    weft_function *f = chain_fn(rts[1], 0, 0);
    weft_tensor *b = call1(f, x);
    wait_compiles();
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.native_groups, 1);
    cr_assert(llvm_loaded(), "%s is not loaded after a compile", weft__jit_llvm_library());
    char why[160];
    cr_assert(diff_same_bits(b, a, why, sizeof why), "%s", why);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(x);
    weft_function_destroy(&plain);
    weft_function_destroy(&f);
}

/* Without libLLVM (a machine with weft but not LLVM's library) every
 * group runs on the interpreter: compiles fail and are counted, the
 * reason is logged once for the process (not once per function), and
 * the results are the interpreter's. */
Test(jit, a_missing_llvm_leaves_the_interpreter)
{
    skip_unless_fresh_process();
    weft__jit_set_llvm_library("libweft-test-no-such-llvm.so.1");
    weft_set_log(sink, NULL);
    weft_function *plain = chain_fn(rts[1], WEFT_FUNCTION_NO_JIT, 0);
    weft_function *f = chain_fn(rts[1], 0, 0);
    weft_tensor *x = ramp(1000);
    weft_tensor *want = call1(plain, x);
    weft_tensor *first = call1(f, x);
    wait_compiles();
    weft_tensor *again = call1(f, x);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.native_groups, 0);
    cr_assert_geq(st.native_failed, 1);
    cr_assert(!ops_say_native(f));
    char why[160];
    cr_assert(diff_same_bits(first, want, why, sizeof why), "%s", why);
    cr_assert(diff_same_bits(again, want, why, sizeof why), "%s", why);
    weft_function *g = chain_fn(rts[2], 0, 0);
    weft_tensor *other = call1(g, x);
    wait_compiles();
    weft_function_get_stats(g, &st);
    cr_assert_eq(st.native_groups, 0);
    cr_assert_geq(st.native_failed, 1);
    cr_assert(diff_same_bits(other, want, why, sizeof why), "%s", why);
    pthread_mutex_lock(&log_mu);
    cr_assert_eq(n_logged, 1, "%d log lines", n_logged);
    cr_assert(strstr(logged, "cannot load libweft-test-no-such-llvm.so.1"), "%s", logged);
    pthread_mutex_unlock(&log_mu);
    weft_set_log(NULL, NULL);
    weft_tensor_release(other);
    weft_function_destroy(&g);
    weft_tensor_release(want);
    weft_tensor_release(first);
    weft_tensor_release(again);
    weft_tensor_release(x);
    weft_function_destroy(&plain);
    weft_function_destroy(&f);
}

/* ---- The non-temporal path ------------------------------------------------ */

/* cast(((x * 2 + 1) * x) - 3, dt): one flat group writing dtype dt. */
static int nt_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const weft_dtype *dt = user;
    weft_value *x = args[0];
    weft_value *y = weft_add(cx, weft_mul(cx, x, weft_const_f64(cx, 2.0)), weft_const_f64(cx, 1.0));
    outs[0] = weft_cast(cx, weft_sub(cx, weft_mul(cx, y, x), weft_const_f64(cx, 3.0)), *dt);
    return weft_ctx_status(cx);
}

/* The output of every dtype (64-byte lines of 64 down to 8 elements), of
 * sizes under a line, around one, and of many with a partial last one,
 * split among 1 (plain runs only), 2 and 4 workers, written through the
 * non-temporal path: the interpreter's bits. */
Test(jit, nontemporal_stores_give_the_interpreters_bits)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    static const int64_t sizes[] = { 1, 15, 16, 17, 65, 4099, 100003 };
    /* The compiler's start compiles a flat group of its own: done first,
     * under the default threshold, so that it is not counted below. */
    weft_function *warm = chain_fn(rts[1], 0, 0);
    weft_tensor *w0 = ramp(1000);
    weft_tensor_release(call1(warm, w0));
    wait_compiles();
    weft_tensor_release(w0);
    weft_function_destroy(&warm);
    int64_t old = weft__jit_set_nt_min_bytes(1);
    uint64_t made = weft__jit_nt_groups();
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            weft_tensor *x = ramp(sizes[z]);
            for (int k = FIRST_THREADED_RT; k < N_RT; k++) {
                weft_tensor *got[2];
                for (int tier = 0; tier < 2; tier++) {
                    weft_function_desc fd = { .name = "nt", .body = nt_body, .user = (void *)&dts[d],
                                              .n_args = 1, .n_outs = 1,
                                              .flags = tier == 0 ? WEFT_FUNCTION_NO_JIT : 0 };
                    weft_function *f = NULL;
                    cr_assert_eq(weft_function_create(rts[k], &fd, &f), 0, "%s", weft_errmsg());
                    weft_tensor *first = call1(f, x);
                    weft_tensor_release(first);
                    wait_compiles();
                    got[tier] = call1(f, x);
                    weft_function_stats st;
                    weft_function_get_stats(f, &st);
                    cr_assert_eq(st.native_groups, tier == 0 ? 0 : 1, "%s[%lld]",
                                 weft_dtype_name(dts[d]), (long long)sizes[z]);
                    weft_function_destroy(&f);
                }
                char why[160];
                cr_assert(diff_same_bits(got[1], got[0], why, sizeof why), "%s[%lld], %u workers: %s",
                          weft_dtype_name(dts[d]), (long long)sizes[z], rt_workers[k], why);
                weft_tensor_release(got[0]);
                weft_tensor_release(got[1]);
            }
            weft_tensor_release(x);
        }
    weft__jit_set_nt_min_bytes(old);
    cr_assert_eq(weft__jit_nt_groups() - made, (uint64_t)(N_RT - FIRST_THREADED_RT) * 35,
                 "%llu groups took the non-temporal path",
                 (unsigned long long)(weft__jit_nt_groups() - made));
}

/* Rows normalized (two inner reductions, a FULL value) or reduced to a
 * value per row (the last instruction an inner reduction), in dtype
 * *user: rows of a power of two columns up to 16 take the code
 * generator's blocks of 8 rows. */
static int rows_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const weft_dtype *dt = user;
    static const int axis1[1] = { 1 };
    weft_value *x = weft_cast(cx, args[0], *dt);
    if (*dt == WEFT_F32 || *dt == WEFT_F64) {
        weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, x, axis1, 1, true);
        weft_value *d = weft_sub(cx, x, mean);
        weft_value *var = weft_reduce(cx, WEFT_R_MEAN, weft_mul(cx, d, d), axis1, 1, true);
        outs[0] = weft_div(cx, d, weft_sqrt(cx, weft_add(cx, var, weft_const_f64(cx, 1e-5))));
    } else {
        weft_value *m = weft_reduce(cx, WEFT_R_MAX, x, axis1, 1, true);
        outs[0] = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, weft_sub(cx, x, m), x), axis1, 1, false);
    }
    return weft_ctx_status(cx);
}

/* Rows computed in blocks, with and without rows left over, split among
 * 1 (plain runs only), 2 and 4 workers: the interpreter's bits, and the
 * blocks were taken. */
Test(jit, row_blocks_give_the_interpreters_bits)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    static const weft_dtype dts[] = { WEFT_F32, WEFT_F64, WEFT_I32, WEFT_I64 };
    static const int64_t widths[] = { 2, 8, 16 };
    static const int64_t heights[] = { 1, 7, 8, 9, 61, 1003 };
    uint64_t made = weft__jit_block_groups();
    unsigned runs = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            for (size_t h = 0; h < sizeof heights / sizeof heights[0]; h++) {
                int64_t dims[2] = { heights[h], widths[w] }, n = dims[0] * dims[1];
                float *v = malloc((size_t)n * sizeof *v);
                for (int64_t i = 0; i < n; i++)
                    v[i] = (float)((i * 37) % 23 - 11) * 0.37f + (float)(i % 5);
                weft_tensor *x = NULL;
                cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, v, &x), 0, "%s", weft_errmsg());
                free(v);
                for (int k = FIRST_THREADED_RT; k < N_RT; k++) {
                    weft_tensor *got[2];
                    for (int tier = 0; tier < 2; tier++) {
                        weft_function_desc fd = { .name = "rows", .body = rows_body, .user = (void *)&dts[d],
                                                  .n_args = 1, .n_outs = 1,
                                                  .flags = tier == 0 ? WEFT_FUNCTION_NO_JIT : 0 };
                        weft_function *f = NULL;
                        cr_assert_eq(weft_function_create(rts[k], &fd, &f), 0, "%s", weft_errmsg());
                        weft_tensor_release(call1(f, x));
                        wait_compiles();
                        got[tier] = call1(f, x);
                        weft_function_stats st;
                        weft_function_get_stats(f, &st);
                        cr_assert_eq(st.native_groups > 0, tier == 1, "%s[%lld,%lld]", weft_dtype_name(dts[d]),
                                     (long long)dims[0], (long long)dims[1]);
                        weft_function_destroy(&f);
                    }
                    char why[160];
                    cr_assert(diff_same_bits(got[1], got[0], why, sizeof why), "%s[%lld,%lld], %u workers: %s",
                              weft_dtype_name(dts[d]), (long long)dims[0], (long long)dims[1], rt_workers[k],
                              why);
                    weft_tensor_release(got[0]);
                    weft_tensor_release(got[1]);
                    runs++;
                }
                weft_tensor_release(x);
            }
    cr_assert_geq(weft__jit_block_groups() - made, runs, "%llu of %u compiles took the blocks",
                  (unsigned long long)(weft__jit_block_groups() - made), runs);
}

/* is_nan, is_inf and is_finite in blocks of rows (no libm call, so the
 * blocks take them): x's rows shifted by their maximum, the tests of the
 * difference and of x counted per row. */
static int tests_rows_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const weft_dtype *dt = user;
    static const int axis1[1] = { 1 };
    weft_value *x = weft_cast(cx, args[0], *dt);
    weft_value *d = weft_sub(cx, x, weft_reduce(cx, WEFT_R_MAX, x, axis1, 1, true));
    weft_value *n = weft_cast(cx, weft_is_nan(cx, d), WEFT_I32);
    weft_value *i = weft_mul(cx, weft_cast(cx, weft_is_inf(cx, x), WEFT_I32), weft_const_i64(cx, 8));
    weft_value *f = weft_mul(cx, weft_cast(cx, weft_is_finite(cx, d), WEFT_I32), weft_const_i64(cx, 64));
    outs[0] = weft_reduce(cx, WEFT_R_SUM, weft_add(cx, weft_add(cx, n, i), f), axis1, 1, false);
    return weft_ctx_status(cx);
}

Test(jit, tests_in_row_blocks_give_the_interpreters_bits)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    static const weft_dtype dts[] = { WEFT_F32, WEFT_F64, WEFT_I32, WEFT_I64 };
    static const int64_t widths[] = { 2, 8, 16 };
    static const int64_t heights[] = { 7, 9, 61 };
    uint64_t made = weft__jit_block_groups();
    unsigned runs = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            for (size_t h = 0; h < sizeof heights / sizeof heights[0]; h++) {
                int64_t dims[2] = { heights[h], widths[w] }, n = dims[0] * dims[1];
                float *v = malloc((size_t)n * sizeof *v);
                for (int64_t i = 0; i < n; i++)
                    v[i] = i % 7 == 3 ? NAN : i % 11 == 5 ? INFINITY : i % 13 == 6 ? -INFINITY
                           : (float)((i * 37) % 23 - 11) * 0.37f;
                weft_tensor *x = NULL;
                cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, v, &x), 0, "%s", weft_errmsg());
                free(v);
                weft_tensor *got[2];
                for (int tier = 0; tier < 2; tier++) {
                    weft_function_desc fd = { .name = "tests_rows", .body = tests_rows_body,
                                              .user = (void *)&dts[d], .n_args = 1, .n_outs = 1,
                                              .flags = tier == 0 ? WEFT_FUNCTION_NO_JIT : 0 };
                    weft_function *f = NULL;
                    cr_assert_eq(weft_function_create(rts[1], &fd, &f), 0, "%s", weft_errmsg());
                    weft_tensor_release(call1(f, x));
                    wait_compiles();
                    got[tier] = call1(f, x);
                    weft_function_stats st;
                    weft_function_get_stats(f, &st);
                    cr_assert_eq(st.native_groups > 0, tier == 1, "%s[%lld,%lld]", weft_dtype_name(dts[d]),
                                 (long long)dims[0], (long long)dims[1]);
                    weft_function_destroy(&f);
                }
                char why[160];
                cr_assert(diff_same_bits(got[1], got[0], why, sizeof why), "%s[%lld,%lld]: %s",
                          weft_dtype_name(dts[d]), (long long)dims[0], (long long)dims[1], why);
                weft_tensor_release(got[0]);
                weft_tensor_release(got[1]);
                weft_tensor_release(x);
                runs++;
            }
    cr_assert_geq(weft__jit_block_groups() - made, runs, "%llu of %u compiles took the blocks",
                  (unsigned long long)(weft__jit_block_groups() - made), runs);
}

/* The compiler's start belongs to the process, not to the function that
 * happened to be compiled first: every function reports the same start,
 * and a later compile leaves it as it was. */
Test(jit, start_is_counted_apart)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    weft_function *f = chain_fn(rts[1], 0, 0);
    weft_function *g = chain_fn(rts[1], 0, 0);
    weft_tensor *x = ramp(1000);
    weft_function_stats sf, sg;
    weft_tensor *a = call1(f, x);
    wait_compiles();
    weft_function_get_stats(f, &sf);
    cr_assert_eq(sf.native_groups, 1);
    cr_assert_gt(sf.native_start_ns, 0);
    cr_assert_eq(sf.native_start_ns, weft__jit_start_ns());
    cr_assert_gt(sf.native_compile_ns, 0);
    weft_tensor *b = call1(g, x);
    wait_compiles();
    weft_function_get_stats(g, &sg);
    cr_assert_eq(sg.native_groups, 1);
    cr_assert_eq(sg.native_start_ns, sf.native_start_ns);
    cr_assert_gt(sg.native_compile_ns, 0);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&g);
}

static bool no_live_code(void)
{
    return weft__jit_live_code() == 0;
}

Test(jit, eviction_frees_native_code)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    cr_assert_eq(weft__jit_live_code(), 0);
    weft_function *f = chain_fn(rts[1], 0, 1);
    weft_tensor *x = ramp(1000), *y = ramp(1001);
    weft_tensor *a = call1(f, x);
    wait_compiles();
    cr_assert_eq(weft__jit_live_code(), 1);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.native_groups, 1);
    cr_assert(ops_say_native(f));
    weft_tensor *a2 = call1(f, x);
    char why[160];
    cr_assert(diff_same_bits(a2, a, why, sizeof why), "%s", why);
    /* A second signature evicts the first (max_cached 1): its code goes
     * before the new one's compile, which is queued after it. */
    weft_tensor *b = call1(f, y);
    wait_compiles();
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.evictions, 1);
    cr_assert_eq(weft__jit_live_code(), 1);
    cr_assert_eq(st.native_groups, 1);
    weft_function_destroy(&f);
    cr_assert(wait_for(no_live_code), "%llu programs still hold native code",
              (unsigned long long)weft__jit_live_code());
    weft_tensor_release(a);
    weft_tensor_release(a2);
    weft_tensor_release(b);
    weft_tensor_release(x);
    weft_tensor_release(y);
}

Test(jit, off_switches_keep_the_interpreter)
{
    weft_tensor *x = ramp(1000);
    for (int way = 0; way < 2; way++) {
        if (way == 1)
            cr_assert_eq(setenv("WEFT_JIT", "0", 1), 0);
        weft_function *f = chain_fn(rts[0], way == 0 ? WEFT_FUNCTION_NO_JIT : 0, 0);
        weft_tensor *a = call1(f, x);
        wait_compiles();
        weft_tensor *b = call1(f, x);
        weft_function_stats st;
        weft_function_get_stats(f, &st);
        cr_assert_eq(st.native_groups, 0, "way %d", way);
        cr_assert_eq(st.native_compile_ns, 0, "way %d", way);
        cr_assert(!ops_say_native(f));
        weft_tensor_release(a);
        weft_tensor_release(b);
        weft_function_destroy(&f);
    }
    /* A value that is no switch word is refused, as WEFT_RUN_EAGERLY's. */
    cr_assert_eq(setenv("WEFT_JIT", "maybe", 1), 0);
    weft_function_desc d = { .name = "chain", .body = chain_body, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[0], &d, &f), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "WEFT_JIT"), "%s", weft_errmsg());
    cr_assert_eq(unsetenv("WEFT_JIT"), 0);
    weft_tensor_release(x);
}

/* Runs tests/trace/jit_exit_child.c with arg; returns the number it
 * printed and asserts that it exited with status 0. */
static unsigned long long run_exit_child(const char *arg)
{
    const char *path = getenv("WEFT_JIT_EXIT_CHILD");
    cr_assert_not_null(path, "WEFT_JIT_EXIT_CHILD is not set (run through meson test)");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s", path, arg);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    unsigned long long v = 0;
    int got = fscanf(p, "%llu", &v);
    int status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the child with %s ended with status 0x%x", arg, (unsigned)status);
    cr_assert_eq(got, 1, "the child with %s printed no number", arg);
    return v;
}

/* LLVM's exit functions (its static objects' destructors) must not run
 * while a compile uses them: exits spread over the time a compile takes,
 * each with the compile queued or running, all end with status 0. */
Test(jit, exit_mid_compile)
{
    if (!weft__jit_enabled())
        cr_skip_test("built without LLVM");
    unsigned long long compile_ns = run_exit_child("wait");
    cr_assert_gt(compile_ns, 0);
    enum { RUNS = 24 };
    unsigned mid = 0;
    for (int i = 0; i < RUNS; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "%llu", compile_ns * (unsigned long long)i / RUNS / 1000);
        mid += run_exit_child(arg) > 0;
    }
    cr_assert_geq(mid, 1, "no child exited with its compile queued or running");
}
