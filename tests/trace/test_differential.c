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

/* ---- The random program ---------------------------------------------
 * Values live in a pool whose shapes all broadcast against [A, B]:
 * [A, B], [A, 1], [1, B], [B], [] and [1, 1].  The body draws its ops from
 * the seed, so every run of one seed builds the same graph. */

#define POOL 12
#define N_OPS 10

typedef struct prog {
    uint64_t seed;
} prog;

static int random_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const prog *p = user;
    uint64_t s = p->seed;
    weft_value *pool[POOL];
    int n = 4;
    for (int k = 0; k < 4; k++)
        pool[k] = args[k];
    typedef weft_value *(*binop)(weft_ctx *, weft_value *, weft_value *);
    static const binop bins[] = { weft_add, weft_sub, weft_mul, weft_div, weft_minimum,
                                  weft_maximum, weft_lt, weft_eq, weft_mod, weft_pow };
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    for (int op = 0; op < N_OPS; op++) {
        weft_value *a = pool[diff_next(&s) % (uint64_t)n], *b = pool[diff_next(&s) % (uint64_t)n];
        weft_value *r = NULL;
        weft_spec sa;
        weft_value_spec(a, &sa);
        switch (diff_next(&s) % 8) {
        case 0: case 1:
            r = bins[diff_next(&s) % (sizeof bins / sizeof bins[0])](cx, a, b);
            break;
        case 2: {
            unsigned u = (unsigned)diff_next(&s) % 5;
            /* sqrt, exp and log of ints compute in f64; keep them on floats
             * to stay in the same dtypes. */
            if (u >= 2 && !diff_is_float(sa.dtype))
                u = 0;
            r = u == 0 ? weft_neg(cx, a) : u == 1 ? weft_abs(cx, a)
              : u == 2 ? weft_sqrt(cx, a) : u == 3 ? weft_exp(cx, a) : weft_log(cx, a);
            break;
        }
        case 3:
            r = weft_cast(cx, a, dts[diff_next(&s) % 5]);
            break;
        case 4: case 5:
            r = diff_random_reduce(cx, a, &s);
            break;
        case 6:
            r = weft_where(cx, weft_lt(cx, a, b), a, b);
            break;
        default: {
            /* A row-local pattern, as in normalize and softmax: a reduction
             * with keepdims read back by the elementwise ops of its rows. */
            int last = -1;
            if (sa.rank == 0) {
                r = weft_mul(cx, weft_add(cx, a, b), a);
                break;
            }
            weft_value *m = weft_reduce(cx, (weft_reduction)(diff_next(&s) % 9), a, &last, 1, true);
            weft_value *d = weft_sub(cx, a, m);
            r = weft_mul(cx, d, weft_reduce(cx, WEFT_R_SUM, d, &last, 1, true));
            break;
        }
        }
        if (!r)
            return weft_ctx_status(cx);
        if (n < POOL)
            pool[n++] = r;
        else
            pool[4 + diff_next(&s) % (POOL - 4)] = r;
    }
    outs[0] = pool[n - 1];
    outs[1] = pool[n - 2];
    return weft_ctx_status(cx);
}

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
    prog p = { .seed = diff_next(&s) };
    weft_function_desc d = { .name = "random", .body = random_body, .n_args = 4, .n_outs = 2 };
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
