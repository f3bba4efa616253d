/* np.partition and np.argpartition: NumPy's contract (the kth element
 * where the sorted axis has it, no greater before, no less after, NaN
 * last) checked for every kth of every row, along either axis and
 * flattened, negative kth; argpartition's indices take a to partition's
 * values; eager and traced on 1, 2 and 4 workers with the same bits; a
 * kth out of bounds failing the call where the dim is unknown while
 * tracing; the refusals. */
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_partition, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef struct part_case {
    const int64_t *kth;
    size_t n_kth;
    int axis;
} part_case;

static int part_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const part_case *c = user;
    outs[0] = weft_partition(cx, a[0], c->kth, c->n_kth, c->axis);
    outs[1] = weft_argpartition(cx, a[0], c->kth, c->n_kth, c->axis);
    return weft_ctx_status(cx);
}

/* NumPy's order: NaN after every number. */
static bool before(double x, double y)
{
    return isnan(y) ? !isnan(x) : x < y;
}

/* Line v[0..n) (stride s) is partitioned at k: nothing after it comes
 * before it, nothing before it after it. */
static void expect_partitioned(const weft_tensor *t, int64_t start, int64_t n, int64_t s,
                               int64_t k, const char *what)
{
    double at = test_element(t, start + k * s);
    for (int64_t i = 0; i < n; i++) {
        double v = test_element(t, start + i * s);
        cr_assert(i < k ? !before(at, v) : i > k ? !before(v, at) : true,
                  "%s: kth %lld (%g) and element %lld (%g)", what, (long long)k, at,
                  (long long)i, v);
    }
}

static const double v21[21] = { 3, NAN, -1, 4, 1, 5, -9, 2, 6, 5, 3, 5, 8, 9, 7, NAN, 3, 2, 3,
                                8, 4 };

Test(ops_numpy_partition, partitions_as_numpy_promises)
{
    static const int64_t kth[3] = { 1, -2, 4 };
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 7), v21);
    for (int axis = 0; axis < 3; axis++) {
        part_case c = { kth, axis == 0 ? 2 : 3, axis == 2 ? WEFT_ALL_AXES : axis == 0 ? 0 : -1 };
        weft_tensor *y[2];
        op_results_everywhere(part_body, &c, &a, 1, y, 2, "partition");
        int64_t lines = axis == 0 ? 7 : axis == 1 ? 3 : 1, n = axis == 0 ? 3 : axis == 1 ? 7 : 21;
        for (int64_t l = 0; l < lines; l++)
            for (size_t j = 0; j < c.n_kth; j++) {
                int64_t k = kth[j] < 0 ? kth[j] + n : kth[j];
                int64_t start = axis == 0 ? l : l * n, stride = axis == 0 ? 7 : 1;
                expect_partitioned(y[0], start, n, stride, k, "partition");
            }
        /* argpartition's indices take each line to partition's values. */
        for (int64_t i = 0; i < 21; i++) {
            int64_t idx = (int64_t)test_element(y[1], i), src;
            if (axis == 0)
                src = idx * 7 + i % 7;
            else if (axis == 1)
                src = i / 7 * 7 + idx;
            else
                src = idx;
            double got = test_element(y[0], i), want = v21[src];
            cr_assert(isnan(want) ? isnan(got) : got == want, "axis %d element %lld", axis,
                      (long long)i);
        }
        cr_assert_eq(weft_tensor_dtype(y[1]), WEFT_I64);
        for (int k = 0; k < 2; k++)
            weft_tensor_release(y[k]);
    }
    weft_tensor_release(a);
}

/* A vector of unknown length: one trace; a kth past it, from either end,
 * fails the call. */
Test(ops_numpy_partition, unknown_length)
{
    static const int64_t kths[2][2] = { { 5, -2 }, { 1, -6 } };
    static const double ints[9] = { 3, 0, -1, 4, 1, 5, -9, 2, 6 };
    const weft_spec sig = { WEFT_I32, 1, { -1 } };
    for (int set = 0; set < 2; set++) {
        part_case c = { kths[set], 2, 0 };
        weft_function_desc d = { .name = "op", .body = part_body, .user = &c, .n_args = 1,
                                 .n_outs = 2, .input_signature = &sig };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        for (int n = 5; n <= 9; n += 4) {
            weft_tensor *x = test_tensor(WEFT_I32, 1, DIMS(n), ints), *y[2] = { NULL, NULL };
            weft_arg arg = weft_arg_tensor(x);
            int rc = weft_function_call(f, &arg, 1, y, 2);
            if (n == 5) {   /* kth 5 and -6 are past 5 elements */
                cr_assert_eq(rc, WEFT_EINVAL, "set %d", set);
                cr_assert(strstr(weft_errmsg(), "weft_partition: a kth is out of bounds for the "
                                                "axis"), "%s", weft_errmsg());
            } else {
                cr_assert_eq(rc, 0, "%s", weft_errmsg());
                for (int j = 0; j < 2; j++)
                    expect_partitioned(y[0], 0, n, 1, kths[set][j] < 0 ? kths[set][j] + n
                                                                       : kths[set][j], "traced");
                for (int k = 0; k < 2; k++)
                    weft_tensor_release(y[k]);
            }
            weft_tensor_release(x);
        }
        weft_function_stats st;
        weft_function_get_stats(f, &st);
        cr_assert_eq(st.traces, 1);
        weft_function_destroy(&f);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t far[1] = { -4 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_partition(cx, a[0], far, 1, 1); break;
    case 1: outs[0] = weft_argpartition(cx, a[0], NULL, 1, 0); break;
    default: outs[0] = weft_partition(cx, a[0], far, 0, 2); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_partition, refusals)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(2, 3), v21);
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_partition: kth[0] -4 is out of bounds for an axis of 3" },
        { 1, WEFT_EINVAL, "weft_argpartition: kth is NULL for n_kth 1" },
        { 2, WEFT_EINVAL, "weft_partition: axis 2 is not in [-2, 2)" },
    };
    op_expect_errors(rt, refused_body, cases, 3, &a, 1);
    weft_tensor_release(a);
}
