/* The differential test of the tensor layer: random op graphs
 * (elementwise chains with broadcasting, casts, reductions over random
 * axes, where, every dtype) run eagerly and traced, each on runtimes of 1,
 * 2 and 4 workers.  Every result must equal the eager one-worker result
 * bit for bit, float reductions included: their order does not depend on
 * the worker count or on fusion (include/weft/ops.h).  NaNs compare equal
 * whatever their payload.  DIFF_VERBOSE=1 prints each seed's shapes,
 * DIFF_OPS=1 the compiled op lists.  test_differential_ops.c does the
 * same for the math and shape ops, matmul, map and host calls. */
#include "diff_util.h"
#include "worker_runtimes.h"

TestSuite(differential, .init = worker_runtimes_create, .fini = worker_runtimes_destroy, .timeout = 120);

/* The random program (diff_random_body) draws from these ops. */
static const diff_binop bins[] = { weft_add, weft_sub, weft_mul, weft_div, weft_minimum,
                                   weft_maximum, weft_lt, weft_eq, weft_mod, weft_pow };
static const diff_unop any_un[] = { weft_neg, weft_abs };
static const diff_unop flt_un[] = { weft_sqrt, weft_exp, weft_log };
static const diff_ops ops = { .bin = bins, .n_bin = DIFF_LEN(bins),
                              .any_un = any_un, .n_any_un = DIFF_LEN(any_un),
                              .flt_un = flt_un, .n_flt_un = DIFF_LEN(flt_un) };

static void check_seed(uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    static const int64_t sizes[] = { 1, 3, 7, 64, 300, 1500 };
    int64_t A, B;
    do {
        A = sizes[diff_next(&s) % 6];
        B = sizes[diff_next(&s) % 6];
    } while (A * B > 70000);
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    /* Floats most of the time: they are where orders could show. */
    weft_dtype dt = diff_next(&s) % 3 ? dts[3 + diff_next(&s) % 2] : dts[diff_next(&s) % 5];
    weft_dtype dt2 = diff_next(&s) % 4 ? dt : dts[diff_next(&s) % 5];
    int64_t full[2] = { A, B }, row[2] = { A, 1 }, col[1] = { B };
    weft_tensor *in[4] = {
        diff_random_tensor(dt, 2, full, &s), diff_random_tensor(dt2, 2, row, &s),
        diff_random_tensor(dt, 1, col, &s), diff_random_tensor(dt2, 0, NULL, &s),
    };
    weft_arg args[4];
    for (int k = 0; k < 4; k++)
        args[k] = weft_arg_tensor(in[k]);
    diff_prog p = { .seed = diff_next(&s), .ops = &ops };
    weft_function_desc d = { .name = "random", .body = diff_random_body, .n_args = 4,
                             .n_outs = 2 };
    void *users[N_RT] = { &p, &p, &p };
    char label[120];
    snprintf(label, sizeof label, "seed %llu, [%lld,%lld] %s/%s", (unsigned long long)seed,
             (long long)A, (long long)B, weft_dtype_name(dt), weft_dtype_name(dt2));
    diff_check(rts, rt_workers, N_RT, &d, users, args, label);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(in[k]);
}

/* Seeds are split over a few tests so that a failure names a range. */
#define SEEDS_PER_TEST 25

Test(differential, random_graphs_0)
{
    for (uint64_t seed = 0; seed < SEEDS_PER_TEST; seed++)
        check_seed(seed);
}

Test(differential, random_graphs_1)
{
    for (uint64_t seed = SEEDS_PER_TEST; seed < 2 * SEEDS_PER_TEST; seed++)
        check_seed(seed);
}

Test(differential, random_graphs_2)
{
    for (uint64_t seed = 2 * SEEDS_PER_TEST; seed < 3 * SEEDS_PER_TEST; seed++)
        check_seed(seed);
}
