/* tf.nn.compute_accidental_hits: against TensorFlow's kernel written here
 * (a map from each sampled class to its last position, each row's true
 * classes looked up in order), eagerly and traced on 1, 2 and 4 workers;
 * hits known only when the function runs, one trace for every batch; the
 * refusals. */
#include <float.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_accidental_hits, .init = suite_runtimes_create,
          .fini = suite_runtimes_destroy, .timeout = 60);

static int hits_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int64_t num_true = user ? *(const int64_t *)user : 2;
    return weft_compute_accidental_hits(cx, a[0], a[1], num_true, outs);
}

/* TensorFlow's ComputeAccidentalHits: returns the number of hits. */
static int64_t hits_ref(const double *t, int64_t batch, int64_t num_true, const double *s,
                        int64_t ns, int64_t *rows, int64_t *ids)
{
    int64_t n = 0;
    for (int64_t i = 0; i < batch; i++)
        for (int64_t j = 0; j < num_true; j++) {
            int64_t last = -1;
            for (int64_t p = 0; p < ns; p++)
                if (s[p] == t[i * num_true + j])
                    last = p;
            if (last >= 0) {
                rows[n] = i;
                ids[n++] = last;
            }
        }
    return n;
}

static void expect_hits(weft_dtype dt, const double *t, int64_t batch, int64_t num_true,
                        const double *s, int64_t ns)
{
    int64_t td[2] = { batch, num_true };
    weft_tensor *args[2] = { test_tensor(dt, 2, td, t), test_tensor(dt, 1, &ns, s) };
    weft_tensor *outs[3];
    op_results_everywhere(hits_body, &num_true, args, 2, outs, 3, "accidental hits");
    int64_t rows[64], ids[64];
    int64_t n = hits_ref(t, batch, num_true, s, ns, rows, ids);
    test_assert_shape(outs[0], WEFT_I32, 1, &n, "indices");
    test_assert_shape(outs[1], WEFT_I64, 1, &n, "ids");
    test_assert_shape(outs[2], WEFT_F32, 1, &n, "weights");
    for (int64_t k = 0; k < n; k++) {
        cr_assert_eq(test_element(outs[0], k), (double)rows[k], "hit %lld's row", (long long)k);
        cr_assert_eq(test_element(outs[1], k), (double)ids[k], "hit %lld's position",
                     (long long)k);
        cr_assert_eq(test_element(outs[2], k), -FLT_MAX, "hit %lld's weight", (long long)k);
    }
    for (int o = 0; o < 3; o++)
        weft_tensor_release(outs[o]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* TensorFlow's docstring example (with the candidates it implies), then
 * repeats on both sides: a class sampled twice hits at its last position,
 * a class twice in a row hits twice. */
Test(ops_accidental_hits, against_tensorflows_kernel)
{
    const double t1[] = { 1, 3, 5, 7, 2, 9 }, s1[] = { 3, 9, 4, 7, 0 };
    expect_hits(WEFT_I64, t1, 3, 2, s1, 5);
    const double t2[] = { 4, 4, 1, 2, 6, 0 }, s2[] = { 4, 2, 4, 8, 2, 6 };
    expect_hits(WEFT_I32, t2, 3, 2, s2, 6);
    const double t3[] = { 10, 11, 12 }, s3[] = { 1, 2 };
    expect_hits(WEFT_I64, t3, 3, 1, s3, 2);   /* no hit: empty results */
    int64_t rows[8], ids[8];
    cr_assert_eq(hits_ref(t2, 3, 2, s2, 6, rows, ids), 4, "the reference sees the repeats");
    cr_assert(rows[0] == 0 && ids[0] == 2 && rows[1] == 0 && ids[1] == 2);
}

Test(ops_accidental_hits, random_draws)
{
    uint64_t st = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 20; round++) {
        double t[24], s[12];
        for (int i = 0; i < 24; i++)
            t[i] = (double)(int)((op_uniform(&st) + 1) * 8);
        for (int i = 0; i < 12; i++)
            s[i] = (double)(int)((op_uniform(&st) + 1) * 8);
        expect_hits(round % 2 ? WEFT_I32 : WEFT_I64, t, 8, 3, s, 12);
    }
}

/* The hits' count is known when the function runs: one trace serves every
 * batch and candidate count. */
static int hits_first(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *h[3];
    int rc = weft_compute_accidental_hits(cx, a[0], a[1], 1, h);
    outs[0] = rc == 0 ? h[1] : NULL;
    return rc;
}

Test(ops_accidental_hits, one_trace_for_every_batch)
{
    const weft_spec sig[2] = { { WEFT_I64, 2, { -1, 1 } }, { WEFT_I64, 1, { -1 } } };
    weft_function *f = op_signature_function(rt, hits_first, NULL, sig, 2);
    const double t[] = { 1, 2, 3, 4 }, s[] = { 4, 2, 7 };
    for (int64_t b = 1; b <= 4; b++) {
        int64_t td[2] = { b, 1 }, ns = 3;
        weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, td, t),
                                 test_tensor(WEFT_I64, 1, &ns, s) };
        weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        int64_t want = b >= 4 ? 2 : b >= 2 ? 1 : 0;
        test_assert_shape(y, WEFT_I64, 1, &want, "positions");
        weft_tensor_release(y);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    op_destroy_traced_once(&f);
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *h[3], *t = a[0], *s = a[1];
    int64_t num_true = 2;
    if (which == 0)
        num_true = 0;
    else if (which == 1)
        num_true = 3;
    else if (which == 2)
        t = weft_cast(cx, t, WEFT_F32);
    else if (which == 3)
        s = weft_cast(cx, s, WEFT_F64);
    else if (which == 4)
        s = weft_expand_dims(cx, s, 0);
    int rc = weft_compute_accidental_hits(cx, t, s, num_true, h);
    outs[0] = rc == 0 ? h[0] : NULL;
    return rc;
}

Test(ops_accidental_hits, refusals)
{
    const double t[] = { 1, 2, 3, 4 }, s[] = { 1, 5 };
    int64_t td[2] = { 2, 2 }, ns = 2;
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, td, t), test_tensor(WEFT_I32, 1, &ns, s) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_compute_accidental_hits: num_true 0" },
        { 1, WEFT_ESHAPE, "the true classes i64[2,2] are not [batch, 3]" },
        { 2, WEFT_EDTYPE, "the true classes f32[2,2] are not i32 or i64" },
        { 3, WEFT_EDTYPE, "the sampled candidates f64[2] are not an i32 or i64 vector" },
        { 4, WEFT_ESHAPE, "the sampled candidates i32[1,2] are not an i32 or i64 vector" },
    };
    op_expect_errors(rt, refused_body, cases, 5, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
