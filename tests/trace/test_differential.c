/* The differential test of the tensor layer: random op graphs
 * (elementwise chains with broadcasting, casts, reductions over random
 * axes, where, every dtype) run eagerly and traced, each on runtimes of 1,
 * 2 and 4 workers.  Every result must equal the eager one-worker result
 * bit for bit, float reductions included: their order does not depend on
 * the worker count or on fusion (include/weft/ops.h).  NaNs compare equal
 * whatever their payload.  DIFF_VERBOSE=1 prints each seed's shapes,
 * DIFF_OPS=1 the compiled op lists. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#include "test_util.h"

#define N_RT 3
static const unsigned rt_workers[N_RT] = { 1, 2, 4 };
static weft_runtime *rts[N_RT];

static void setup(void)
{
    for (int k = 0; k < N_RT; k++)
        rts[k] = test_runtime_of(rt_workers[k]);
}

static void teardown(void)
{
    for (int k = 0; k < N_RT; k++)
        weft_runtime_destroy(&rts[k]);
}

TestSuite(differential, .init = setup, .fini = teardown, .timeout = 120);

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* ---- The random program ---------------------------------------------
 * Values live in a pool whose shapes all broadcast against [A, B]:
 * [A, B], [A, 1], [1, B], [B], [] and [1, 1].  The body draws its ops from
 * the seed, so every run of one seed builds the same graph. */

#define POOL 12
#define N_OPS 10

typedef struct prog {
    uint64_t seed;
} prog;

static bool is_float(weft_dtype dt) { return dt == WEFT_F32 || dt == WEFT_F64; }

/* A reduction of v over random axes whose result stays in the pool's
 * shapes: keepdims, or every axis, or axis 0 of a 2-D value. */
static weft_value *random_reduce(weft_ctx *cx, weft_value *v, uint64_t *s)
{
    weft_spec sp;
    if (weft_value_spec(v, &sp) != 0)
        return NULL;
    weft_reduction r = (weft_reduction)(next(s) % 9);
    int axes[2], n_axes = 0;
    bool keep = next(s) % 2;
    unsigned pick = (unsigned)next(s) % 4;
    if (sp.rank == 2) {
        if (pick == 0 || pick == 3)
            axes[n_axes++] = pick == 3 ? -2 : 0;
        if (pick == 1 || pick == 3)
            axes[n_axes++] = pick == 3 ? -1 : 1;
        /* [A] would not broadcast against [A, B]. */
        if (!keep && n_axes == 1 && axes[0] == 1)
            keep = true;
    } else if (sp.rank == 1 && pick == 1) {
        axes[n_axes++] = 0;
    }
    return weft_reduce(cx, r, v, pick == 2 ? NULL : axes, pick == 2 ? 0 : (size_t)n_axes, keep);
}

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
        weft_value *a = pool[next(&s) % (uint64_t)n], *b = pool[next(&s) % (uint64_t)n];
        weft_value *r = NULL;
        weft_spec sa;
        weft_value_spec(a, &sa);
        switch (next(&s) % 8) {
        case 0: case 1:
            r = bins[next(&s) % (sizeof bins / sizeof bins[0])](cx, a, b);
            break;
        case 2: {
            unsigned u = (unsigned)next(&s) % 5;
            /* sqrt, exp and log of ints compute in f64; keep them on floats
             * to stay in the same dtypes. */
            if (u >= 2 && !is_float(sa.dtype))
                u = 0;
            r = u == 0 ? weft_neg(cx, a) : u == 1 ? weft_abs(cx, a)
              : u == 2 ? weft_sqrt(cx, a) : u == 3 ? weft_exp(cx, a) : weft_log(cx, a);
            break;
        }
        case 3:
            r = weft_cast(cx, a, dts[next(&s) % 5]);
            break;
        case 4: case 5:
            r = random_reduce(cx, a, &s);
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
            weft_value *m = weft_reduce(cx, (weft_reduction)(next(&s) % 9), a, &last, 1, true);
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
            pool[4 + next(&s) % (POOL - 4)] = r;
    }
    outs[0] = pool[n - 1];
    outs[1] = pool[n - 2];
    return weft_ctx_status(cx);
}

/* ---- Inputs ---------------------------------------------------------- */

static weft_tensor *random_tensor(weft_dtype dt, int rank, const int64_t *dims, uint64_t *s)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
    size_t es = weft_dtype_size(dt);
    unsigned char *buf = malloc((size_t)(numel ? numel : 1) * es);
    for (int64_t i = 0; i < numel; i++) {
        int64_t iv = (int64_t)(next(s) % 9) - 4;
        double fv = (double)(next(s) % 4001) / 1000.0 - 2.0;
        switch (dt) {
        case WEFT_BOOL: buf[i] = (unsigned char)(iv > 0); break;
        case WEFT_I32:  ((int32_t *)buf)[i] = (int32_t)iv; break;
        case WEFT_I64:  ((int64_t *)buf)[i] = iv; break;
        case WEFT_F32:  ((float *)buf)[i] = (float)fv; break;
        case WEFT_F64:  ((double *)buf)[i] = fv; break;
        }
    }
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, buf, &t), 0, "%s", weft_errmsg());
    free(buf);
    return t;
}

/* ---- Comparison ------------------------------------------------------ */

static bool same_bits(const weft_tensor *a, const weft_tensor *b, char *why, size_t len)
{
    if (weft_tensor_dtype(a) != weft_tensor_dtype(b) || weft_tensor_rank(a) != weft_tensor_rank(b)) {
        snprintf(why, len, "dtype or rank differ");
        return false;
    }
    for (int d = 0; d < weft_tensor_rank(a); d++)
        if (weft_tensor_dims(a)[d] != weft_tensor_dims(b)[d]) {
            snprintf(why, len, "dim %d differs", d);
            return false;
        }
    weft_dtype dt = weft_tensor_dtype(a);
    size_t es = weft_dtype_size(dt);
    const unsigned char *pa = weft_tensor_data(a), *pb = weft_tensor_data(b);
    for (int64_t i = 0; i < weft_tensor_numel(a); i++) {
        if (memcmp(pa + i * es, pb + i * es, es) == 0)
            continue;
        double x = dt == WEFT_F32 ? ((const float *)pa)[i] : dt == WEFT_F64 ? ((const double *)pa)[i] : 0;
        double y = dt == WEFT_F32 ? ((const float *)pb)[i] : dt == WEFT_F64 ? ((const double *)pb)[i] : 0;
        if (is_float(dt) && isnan(x) && isnan(y))
            continue;
        snprintf(why, len, "element %lld differs (%.17g vs %.17g)", (long long)i, x, y);
        return false;
    }
    return true;
}

typedef struct outcome {
    int rc;
    weft_tensor *out[2];
} outcome;

static void run_one(weft_runtime *rt, prog *p, unsigned flags, const weft_arg *args, int call,
                    outcome *o)
{
    weft_function_desc d = { .name = "random", .body = random_body, .user = p, .n_args = 4,
                             .n_outs = 2, .flags = flags };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    for (int c = 0; c <= call; c++) {
        for (int k = 0; k < 2; k++)
            weft_tensor_release(o->out[k]);
        memset(o->out, 0, sizeof o->out);
        o->rc = weft_function_call(f, args, 4, o->out, 2);
    }
    if (getenv("DIFF_OPS") && !(flags & WEFT_RUN_EAGERLY) && call == 0)
        weft_function_print_ops(f, 0, stderr);
    weft_function_destroy(&f);
}

static void check_seed(uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    static const int64_t sizes[] = { 1, 3, 7, 64, 300, 1500 };
    int64_t A, B;
    do {
        A = sizes[next(&s) % 6];
        B = sizes[next(&s) % 6];
    } while (A * B > 70000);
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    /* Floats most of the time: they are where orders could show. */
    weft_dtype dt = next(&s) % 3 ? dts[3 + next(&s) % 2] : dts[next(&s) % 5];
    weft_dtype dt2 = next(&s) % 4 ? dt : dts[next(&s) % 5];
    int64_t full[2] = { A, B }, row[2] = { A, 1 }, col[1] = { B };
    weft_tensor *in[4] = {
        random_tensor(dt, 2, full, &s), random_tensor(dt2, 2, row, &s),
        random_tensor(dt, 1, col, &s), random_tensor(dt2, 0, NULL, &s),
    };
    weft_arg args[4];
    for (int k = 0; k < 4; k++)
        args[k] = weft_arg_tensor(in[k]);
    prog p = { .seed = next(&s) };

    outcome ref = { 0 };
    run_one(rts[0], &p, WEFT_RUN_EAGERLY, args, 0, &ref);
    if (getenv("DIFF_VERBOSE"))
        fprintf(stderr, "seed %llu: [%lld,%lld] %s/%s rc %d %s\n", (unsigned long long)seed,
                (long long)A, (long long)B, weft_dtype_name(dt), weft_dtype_name(dt2), ref.rc,
                ref.rc ? weft_errmsg() : "");
    for (int k = 0; k < N_RT; k++)
        for (int mode = 0; mode < 3; mode++) {
            if (k == 0 && mode == 0)
                continue;
            outcome o = { 0 };
            /* mode 0: eager; 1: the traced first call; 2: a cached call. */
            run_one(rts[k], &p, mode == 0 ? WEFT_RUN_EAGERLY : 0, args, mode == 2, &o);
            cr_assert_eq(o.rc, ref.rc, "seed %llu, [%lld,%lld], %u workers, mode %d: rc %d vs %d (%s)",
                         (unsigned long long)seed, (long long)A, (long long)B, rt_workers[k], mode,
                         o.rc, ref.rc, weft_errmsg());
            for (int q = 0; q < 2 && o.rc == 0; q++) {
                char why[160];
                cr_assert(same_bits(o.out[q], ref.out[q], why, sizeof why),
                          "seed %llu, [%lld,%lld], %u workers, mode %d, output %d: %s",
                          (unsigned long long)seed, (long long)A, (long long)B, rt_workers[k],
                          mode, q, why);
            }
            for (int q = 0; q < 2; q++)
                weft_tensor_release(o.out[q]);
        }
    for (int q = 0; q < 2; q++)
        weft_tensor_release(ref.out[q]);
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
