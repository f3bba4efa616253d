/* weft_dist_call's cases (run by test_dist.c on every rank, in this
 * order): outputs concatenated, summed and averaged equal a serial call on
 * the whole tensor, for even and uneven shards and ranks with no rows; the
 * root's static scalars; one trace per signature per rank; a signature
 * mismatch, a failing body and bad arguments on one rank are every rank's
 * error; outputs that cannot be combined; the per-rank timeline files. */
#include <stdlib.h>
#include <unistd.h>

#include "dist_util.h"

/* ---- functions ---- */

/* y = x * 2 + s, per-column sums of x, and the sum of all of x. */
static int affine_sums(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, weft_mul(cx, args[0], weft_const_f64(cx, 2.0)), args[1]);
    outs[1] = weft_sum(cx, args[0], 0);
    outs[2] = weft_sum(cx, args[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int col_sums(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, args[0], 0);
    return weft_ctx_status(cx);
}

static int identity(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, args[0], weft_const_f64(cx, 0.0));
    return weft_ctx_status(cx);
}

/* Fails on a shard with no rows. */
static int no_empty_shards(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_spec s;
    weft_value_spec(args[0], &s);
    if (s.dims[0] == 0)
        return weft_errorf(WEFT_EBODY, "no_empty_shards: a shard with no rows");
    outs[0] = weft_sum(cx, args[0], 0);
    return weft_ctx_status(cx);
}

/* As x's dtype: the sum of all of x (a scalar), x > 0 (bool), x as i64. */
static int odd_outputs(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, args[0], WEFT_ALL_AXES);
    outs[1] = weft_gt(cx, args[0], weft_const_f64(cx, 0.0));
    outs[2] = weft_cast(cx, args[0], WEFT_I64);
    return weft_ctx_status(cx);
}

static weft_function *function(weft_body_fn body, size_t n_args, size_t n_outs, const char *sig)
{
    weft_spec spec;
    if (sig)
        cr_assert_eq(weft_spec_parse(sig, &spec), 0);
    weft_function_desc desc = { .name = "dist_test", .body = body, .n_args = n_args,
                                .n_outs = n_outs, .input_signature = sig ? &spec : NULL };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
    return f;
}

/* x = f64[rows, 3] of small integers (sums stay exact), on every rank. */
static weft_tensor *matrix(int64_t rows, weft_dtype dt)
{
    int64_t dims[2] = { rows, 3 };
    double *v = malloc((size_t)(rows * 3 + 1) * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < rows * 3; i++)
        v[i] = (double)((i * 7) % 11) - 3.0;
    weft_tensor *x = NULL, *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, dims, v, &x), 0);
    free(v);
    if (dt == WEFT_F64)
        return x;
    /* Other dtypes through an eager cast. */
    weft_ctx *cx;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    t = weft_tensor_retain(weft_value_tensor(weft_cast(cx, weft_eager_value(cx, x), dt)));
    cr_assert_not_null(t, "%s", weft_errmsg());
    weft_eager_end(&cx);
    weft_tensor_release(x);
    return t;
}

static void assert_equal_tensors(const weft_tensor *got, const weft_tensor *want, const char *what)
{
    cr_assert_not_null(got, "%s: no output", what);
    cr_assert_eq(weft_tensor_dtype(got), weft_tensor_dtype(want), "%s: dtype", what);
    cr_assert_eq(weft_tensor_rank(got), weft_tensor_rank(want), "%s: rank", what);
    for (int r = 0; r < weft_tensor_rank(want); r++)
        cr_assert_eq(weft_tensor_dims(got)[r], weft_tensor_dims(want)[r], "%s: dim %d", what, r);
    size_t bytes = (size_t)weft_tensor_numel(want) * weft_dtype_size(weft_tensor_dtype(want));
    cr_assert(memcmp(weft_tensor_data(got), weft_tensor_data(want), bytes) == 0,
              "%s: the values differ from the serial call's", what);
}

static void release_all(weft_tensor **ts, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        weft_tensor_release(ts[j]);
        ts[j] = NULL;
    }
}

/* ---- results equal a serial call's ---- */

static void concat_sum_mean(int64_t rows)
{
    weft_function *f = function(affine_sums, 2, 3, NULL);
    weft_function *serial = function(affine_sums, 2, 3, NULL);
    weft_tensor *x = matrix(rows, WEFT_F64);
    /* Off the root the scalar is ignored: the root's 1.5 counts. */
    weft_arg args[2] = { weft_arg_tensor(world_rank == 0 ? x : NULL),
                         weft_arg_f64(world_rank == 0 ? 1.5 : 99.0) };
    const weft_dist_combine how[3] = { WEFT_DIST_CONCAT, WEFT_DIST_SUM, WEFT_DIST_MEAN };
    weft_tensor *outs[3], *want[3];
    int rc = weft_dist_call(d, f, args, 2, how, outs, 3);
    assert_same_everywhere(rc, "affine_sums");
    cr_assert_eq(rc, 0, "rows=%lld: %s", (long long)rows, weft_errmsg());

    weft_arg whole[2] = { weft_arg_tensor(x), weft_arg_f64(1.5) };
    cr_assert_eq(weft_function_call(serial, whole, 2, want, 3), 0, "%s", weft_errmsg());
    assert_equal_tensors(outs[0], want[0], "concat");
    assert_equal_tensors(outs[1], want[1], "sum");
    /* The mean over the ranks of their shards' sums: the whole sum / size. */
    double mean = *(const double *)weft_tensor_data(want[2]) / world_size;
    cr_assert_eq(weft_tensor_rank(outs[2]), 0);
    cr_assert_float_eq(*(const double *)weft_tensor_data(outs[2]), mean, 1e-12);
    release_all(outs, 3);
    release_all(want, 3);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&serial);
}

static void even_uneven_and_empty_shards(void)
{
    int64_t rows[] = { 7, 1, 0, world_size, world_size + 1, 3 * world_size, 1000 };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
        concat_sum_mean(rows[k]);
}

static void other_dtypes(void)
{
    static const weft_dtype dts[] = { WEFT_F32, WEFT_I64, WEFT_I32 };
    for (size_t k = 0; k < 3; k++) {
        weft_function *f = function(col_sums, 1, 1, NULL);
        weft_function *g = function(identity, 1, 1, NULL);
        weft_tensor *x = matrix(2 * world_size + 1, dts[k]);
        weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL), whole = weft_arg_tensor(x);
        weft_tensor *got, *want;
        const weft_dist_combine sum = WEFT_DIST_SUM;
        int rc = weft_dist_call(d, f, &a, 1, &sum, &got, 1);
        cr_assert_eq(rc, 0, "%s", weft_errmsg());
        cr_assert_eq(weft_function_call(f, &whole, 1, &want, 1), 0);
        assert_equal_tensors(got, want, weft_dtype_name(dts[k]));
        weft_tensor_release(got);
        weft_tensor_release(want);
        /* combine NULL: everything concatenated; args NULL off the root. */
        rc = weft_dist_call(d, g, world_rank == 0 ? &a : NULL, 1, NULL, &got, 1);
        cr_assert_eq(rc, 0, "%s", weft_errmsg());
        cr_assert_eq(weft_function_call(g, &whole, 1, &want, 1), 0);
        assert_equal_tensors(got, want, "identity, concatenated");
        weft_tensor_release(got);
        weft_tensor_release(want);
        weft_tensor_release(x);
        weft_function_destroy(&f);
        weft_function_destroy(&g);
    }
}

/* ---- traces: one per signature per rank ---- */

static void one_trace_per_signature_per_rank(void)
{
    weft_function *f = function(col_sums, 1, 1, NULL);
    weft_function *g = function(col_sums, 1, 1, "f64[?,3]");
    const weft_dist_combine sum = WEFT_DIST_SUM;
    for (int k = 0; k < 3; k++) {
        /* Rank 0 gets 3 rows, the others 2: a shape per rank. */
        weft_tensor *x = matrix(2 * world_size + 1, WEFT_F64), *y = matrix(5 + k, WEFT_F64);
        weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL);
        weft_arg b = weft_arg_tensor(world_rank == 0 ? y : NULL);
        weft_tensor *out;
        cr_assert_eq(weft_dist_call(d, f, &a, 1, &sum, &out, 1), 0, "%s", weft_errmsg());
        weft_tensor_release(out);
        cr_assert_eq(weft_dist_call(d, g, &b, 1, &sum, &out, 1), 0, "%s", weft_errmsg());
        weft_tensor_release(out);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1, "rank %d", world_rank);
    /* f64[?,3] covers every row count: one trace however the rows fall. */
    cr_assert_eq(weft_function_tracing_count(g), 1, "rank %d", world_rank);
    weft_function_destroy(&f);
    weft_function_destroy(&g);
}

/* ---- errors on one rank are every rank's ---- */

static void expect_everywhere(int rc, int want, const char *msg_part)
{
    assert_same_everywhere(rc, msg_part);
    cr_assert_eq(rc, want, "want %s, got %s: %s", weft_err_name(want), weft_err_name(rc),
                 weft_errmsg());
    expect_errmsg(msg_part);
}

static void signature_mismatch_on_one_rank(void)
{
    weft_function *f = function(col_sums, 1, 1, "f64[2,3]");
    const weft_dist_combine sum = WEFT_DIST_SUM;
    weft_tensor *x = matrix(2 * world_size + 1, WEFT_F64), *out = (weft_tensor *)1;
    weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    /* Rank 0's shard has 3 rows, the others' 2. */
    int rc = weft_dist_call(d, f, &a, 1, &sum, &out, 1);
    expect_everywhere(rc, WEFT_ESIGNATURE, "weft_dist_call: on rank 0 of ");
    cr_assert_null(out);
    weft_tensor_release(x);
    /* No rank is left behind: the next call works. */
    x = matrix(2 * world_size, WEFT_F64);
    a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    cr_assert_eq(weft_dist_call(d, f, &a, 1, &sum, &out, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(out);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

static void body_fails_on_one_rank(void)
{
    weft_function *f = function(no_empty_shards, 1, 1, NULL);
    /* size - 1 rows: the last rank gets none. */
    weft_tensor *x = matrix(world_size - 1, WEFT_F64), *out;
    weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    char where[96];
    snprintf(where, sizeof where, "weft_dist_call: on rank %d of %d: ", world_size - 1,
             world_size);
    expect_everywhere(weft_dist_call(d, f, &a, 1, NULL, &out, 1), WEFT_EBODY, where);
    expect_errmsg("no_empty_shards: a shard with no rows");
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

static void outputs_that_do_not_combine(void)
{
    weft_function *f = function(identity, 1, 1, NULL);
    weft_function *g = function(odd_outputs, 1, 3, NULL);
    weft_tensor *x = matrix(world_size + 1, WEFT_F64), *outs[3];
    weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    /* Summing shards of 2 and 1 rows. */
    const weft_dist_combine sum = WEFT_DIST_SUM;
    int rc = weft_dist_call(d, f, &a, 1, &sum, outs, 1);
    if (world_size > 1)
        expect_everywhere(rc, WEFT_ESHAPE, "output 0 is f64[2,3] on rank 0 but f64[1,3] on rank 1");
    else
        weft_tensor_release(outs[0]);
    /* Even shards from here: only the dtypes stand in the way. */
    weft_tensor_release(x);
    x = matrix(2 * world_size, WEFT_F64);
    a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    const weft_dist_combine scalar_concat[3] = { WEFT_DIST_CONCAT, WEFT_DIST_CONCAT,
                                                 WEFT_DIST_CONCAT };
    expect_everywhere(weft_dist_call(d, g, &a, 1, scalar_concat, outs, 3), WEFT_ESHAPE,
                      "output 0 is a scalar (f64[])");
    const weft_dist_combine bool_sum[3] = { WEFT_DIST_SUM, WEFT_DIST_SUM, WEFT_DIST_CONCAT };
    expect_everywhere(weft_dist_call(d, g, &a, 1, bool_sum, outs, 3), WEFT_EDTYPE,
                      "output 1 is bool[");
    const weft_dist_combine int_mean[3] = { WEFT_DIST_SUM, WEFT_DIST_CONCAT, WEFT_DIST_MEAN };
    expect_everywhere(weft_dist_call(d, g, &a, 1, int_mean, outs, 3), WEFT_EDTYPE,
                      "WEFT_DIST_MEAN needs f32 or f64");
    cr_assert(!outs[0] && !outs[1] && !outs[2]);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&g);
}

static void bad_arguments_on_one_rank(void)
{
    int last = world_size - 1;
    weft_function *f = function(col_sums, 1, 1, NULL);
    weft_tensor *x = matrix(4, WEFT_F64), *scalar = NULL, *out;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, NULL, &scalar), 0);
    weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    char where[96];

    snprintf(where, sizeof where, "on rank %d of %d: f is NULL", last, world_size);
    expect_everywhere(weft_dist_call(d, world_rank == last ? NULL : f, &a, 1, NULL, &out, 1),
                      WEFT_EINVAL, where);
    weft_arg null_tensor = weft_arg_tensor(NULL);
    expect_everywhere(weft_dist_call(d, f, &null_tensor, 1, NULL, &out, 1), WEFT_EINVAL,
                      "on rank 0 of ");
    expect_errmsg("arg 0 is a NULL tensor on the root");
    weft_arg s = weft_arg_tensor(world_rank == 0 ? scalar : NULL);
    expect_everywhere(weft_dist_call(d, f, &s, 1, NULL, &out, 1), WEFT_EINVAL,
                      "arg 0 is a scalar tensor");
    const weft_dist_combine bogus = (weft_dist_combine)7;
    snprintf(where, sizeof where, "on rank %d of %d: combine[0] is 7", last, world_size);
    expect_everywhere(weft_dist_call(d, f, &a, 1, world_rank == last ? &bogus : NULL, &out, 1),
                      WEFT_EINVAL, where);
    if (world_size > 1) {
        weft_arg two[2] = { a, a };
        expect_everywhere(weft_dist_call(d, f, two, world_rank == last ? 2 : 1, NULL, &out, 1),
                          WEFT_EINVAL, "2 args and 1 outs on rank");
        weft_arg everywhere = weft_arg_tensor(x);
        expect_everywhere(weft_dist_call(d, f, &everywhere, 1, NULL, &out, 1), WEFT_EINVAL,
                          "only the root (rank 0) passes tensors");
        const weft_dist_combine sum = WEFT_DIST_SUM;
        expect_everywhere(weft_dist_call(d, f, &a, 1, world_rank == last ? &sum : NULL, &out, 1),
                          WEFT_EINVAL, "on the root");
    }
    expect_everywhere(weft_dist_call(d, f, &a, 1, NULL, NULL, 1), WEFT_EINVAL, "outs is NULL");
    cr_assert_eq(weft_dist_call(NULL, f, &a, 1, NULL, &out, 1), WEFT_EINVAL);
    expect_errmsg("weft_dist_call: d is NULL");
    weft_tensor_release(scalar);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

/* ---- timelines, one file per rank ---- */

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static int nothing(size_t i, void *ctx)
{
    (void)i, (void)ctx;
    sleep_us(100);
    return 0;
}

static void timelines(void)
{
    char prefix[128], path[160];
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(prefix, sizeof prefix, "/tmp/weft_test_dist_%ld", pid);
    snprintf(path, sizeof path, "%s.rank%d.json", prefix, world_rank);

    expect_everywhere(weft_dist_profile_end(d), WEFT_EINVAL, "no profile is recording");
    expect_everywhere(weft_dist_profile_begin(d, world_rank == 0 ? "" : prefix), WEFT_EINVAL,
                      "on rank 0 of ");
    cr_assert_eq(access(path, F_OK), -1, "a failed begin left %s", path);
    cr_assert_eq(weft_dist_profile_begin(d, prefix), 0, "%s", weft_errmsg());
    expect_everywhere(weft_dist_profile_begin(d, prefix), WEFT_EINVAL, "already recording");

    weft_function *f = function(col_sums, 1, 1, NULL);
    weft_tensor *x = matrix(8, WEFT_F64), *out;
    weft_arg a = weft_arg_tensor(world_rank == 0 ? x : NULL);
    const weft_dist_combine sum = WEFT_DIST_SUM;
    cr_assert_eq(weft_dist_call(d, f, &a, 1, &sum, &out, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_dist_parallel_map(d, 64 * (size_t)world_size, 0, nothing, NULL), 0);
    cr_assert_eq(weft_dist_profile_end(d), 0, "%s", weft_errmsg());

    char *json = test_read_file(path);
    unlink(path);
    char pid_field[32], process[64];
    snprintf(pid_field, sizeof pid_field, "\"pid\":%d,", world_rank + 1);
    snprintf(process, sizeof process, "{\"name\":\"weft rank %d\"}", world_rank);
    cr_assert(strstr(json, process) != NULL, "rank %d: no process name in\n%s", world_rank, json);
    cr_assert_eq(count_of(json, "\"pid\":"), count_of(json, pid_field), "rank %d:\n%s",
                 world_rank, json);
    for (const char *phase = "scatter"; phase; phase = !strcmp(phase, "scatter") ? "compute"
                                                      : !strcmp(phase, "compute") ? "gather" : NULL) {
        char span[64];
        snprintf(span, sizeof span, "{\"name\":\"%s\",\"cat\":\"user\",\"ph\":\"X\"", phase);
        cr_assert_eq(count_of(json, span), 1, "rank %d: %s spans in\n%s", world_rank, phase, json);
    }
    /* Some rank ran chunks, each recorded as a span. */
    cr_assert_gt(sum_over_ranks(count_of(json, "{\"name\":\"chunk\",\"cat\":\"user\"")), 0);
    free(json);
    weft_tensor_release(out);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

static void stats(void)
{
    weft_dist_stats st;
    weft_dist_get_stats(d, &st);
    cr_assert_gt(st.calls, 20);
}

void dist_call_cases(void)
{
    even_uneven_and_empty_shards();
    other_dtypes();
    one_trace_per_signature_per_rank();
    signature_mismatch_on_one_rank();
    body_fails_on_one_rank();
    outputs_that_do_not_combine();
    bad_arguments_on_one_rank();
    timelines();
    stats();
}
