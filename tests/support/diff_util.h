/* Helpers of the differential tests (tests/trace/test_differential*.c,
 * tests/trace/test_jit.c): a seeded generator, random input tensors, a
 * bit-for-bit comparison that takes any NaN for any NaN, the harness that
 * runs one random body eagerly and traced on runtimes of several worker
 * counts and compares every result with the eager one-worker result, and
 * a random body over op tables that the caller chooses. */
#ifndef WEFT_DIFF_UTIL_H
#define WEFT_DIFF_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define DIFF_MAX_OUTS 4

static inline uint64_t diff_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static inline bool diff_is_float(weft_dtype dt) { return dt == WEFT_F32 || dt == WEFT_F64; }

/* A value at the edge of dt's range (as a double for the floats, as an
 * int64_t for the integers): NaN, infinities, -0, a denormal, huge
 * magnitudes, the integer limits. */
static inline void diff_special(weft_dtype dt, uint64_t *s, double *fv, int64_t *iv)
{
    static const double fs[] = { NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 5e-324, -1e-310,
                                 1e30, -1e30, 1.5, -2.5, 16777217.0, 1e300 };
    static const int64_t is32[] = { INT32_MIN, INT32_MAX, INT32_MIN + 1, -1, 0, 1, 65536 };
    static const int64_t is64[] = { INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -1, 0, 1LL << 32 };
    *fv = fs[diff_next(s) % (sizeof fs / sizeof fs[0])];
    *iv = dt == WEFT_I32 ? is32[diff_next(s) % (sizeof is32 / sizeof is32[0])]
                         : is64[diff_next(s) % (sizeof is64 / sizeof is64[0])];
}

/* A tensor of small values: integers in [-4, 4], floats in [-2, 2] with
 * three decimals, bools from the integers' signs; with `edges`, about one
 * element in eight is a value of diff_special instead. */
static inline weft_tensor *diff_random_tensor_ex(weft_dtype dt, int rank, const int64_t *dims,
                                                 uint64_t *s, bool edges)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
    size_t es = weft_dtype_size(dt);
    unsigned char *buf = malloc((size_t)(numel ? numel : 1) * es);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < numel; i++) {
        int64_t iv = (int64_t)(diff_next(s) % 9) - 4;
        double fv = (double)(diff_next(s) % 4001) / 1000.0 - 2.0;
        if (edges && diff_next(s) % 8 == 0)
            diff_special(dt, s, &fv, &iv);
        switch (dt) {
        case WEFT_BOOL: buf[i] = (unsigned char)(iv > 0); break;
        case WEFT_I32:  ((int32_t *)(void *)buf)[i] = (int32_t)iv; break;
        case WEFT_I64:  ((int64_t *)(void *)buf)[i] = iv; break;
        case WEFT_F32:
            /* Past the f32 range is inf (a C conversion of it would be
             * undefined). */
            ((float *)(void *)buf)[i] = fabs(fv) > 3.4e38 ? (float)copysign(INFINITY, fv) : (float)fv;
            break;
        case WEFT_F64:  ((double *)(void *)buf)[i] = fv; break;
        }
    }
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, buf, &t), 0, "%s", weft_errmsg());
    free(buf);
    return t;
}

static inline weft_tensor *diff_random_tensor(weft_dtype dt, int rank, const int64_t *dims,
                                              uint64_t *s)
{
    return diff_random_tensor_ex(dt, rank, dims, s, false);
}

/* Whether a and b have one dtype, shape and bits (any NaN equals any
 * NaN: ops.h leaves a NaN's sign and payload unspecified); else why not. */
static inline bool diff_same_bits(const weft_tensor *a, const weft_tensor *b, char *why, size_t len)
{
    if (weft_tensor_dtype(a) != weft_tensor_dtype(b) || weft_tensor_rank(a) != weft_tensor_rank(b)) {
        snprintf(why, len, "dtype or rank differ (%s[%d] vs %s[%d])",
                 weft_dtype_name(weft_tensor_dtype(a)), weft_tensor_rank(a),
                 weft_dtype_name(weft_tensor_dtype(b)), weft_tensor_rank(b));
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
        if (memcmp(pa + (size_t)i * es, pb + (size_t)i * es, es) == 0)
            continue;
        double x = dt == WEFT_F32 ? ((const float *)(const void *)pa)[i]
                 : dt == WEFT_F64 ? ((const double *)(const void *)pa)[i] : 0;
        double y = dt == WEFT_F32 ? ((const float *)(const void *)pb)[i]
                 : dt == WEFT_F64 ? ((const double *)(const void *)pb)[i] : 0;
        if (diff_is_float(dt) && isnan(x) && isnan(y))
            continue;
        snprintf(why, len, "element %lld differs (%.17g vs %.17g)", (long long)i, x, y);
        return false;
    }
    return true;
}

typedef struct diff_outcome {
    int rc;
    weft_tensor *out[DIFF_MAX_OUTS];
} diff_outcome;

static inline void diff_release(diff_outcome *o)
{
    for (int k = 0; k < DIFF_MAX_OUTS; k++)
        weft_tensor_release(o->out[k]);
    memset(o->out, 0, sizeof o->out);
}

/* Creates a function of d on rt and calls it calls times (the last call's
 * outcome stays in o).  DIFF_OPS=1 prints a traced function's op list. */
static inline void diff_run(weft_runtime *rt, const weft_function_desc *d, const weft_arg *args,
                            int calls, diff_outcome *o)
{
    cr_assert_leq(d->n_outs, DIFF_MAX_OUTS);
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, d, &f), 0, "%s", weft_errmsg());
    for (int c = 0; c < calls; c++) {
        diff_release(o);
        o->rc = weft_function_call(f, args, d->n_args, o->out, d->n_outs);
    }
    if (getenv("DIFF_OPS") && !(d->flags & WEFT_RUN_EAGERLY) && calls == 1)
        weft_function_print_ops(f, 0, stderr);
    weft_function_destroy(&f);
}

/* Runs d (its user replaced by users[k] on rts[k]) eagerly, on a first
 * traced call and on a cached call, on every runtime; each return code
 * and output must equal the eager call's on rts[0].  label names the case
 * in a failure.  DIFF_VERBOSE=1 prints each case and its return code. */
static inline void diff_check(weft_runtime *const *rts, const unsigned *workers, size_t n_rt,
                              const weft_function_desc *d, void *const *users,
                              const weft_arg *args, const char *label)
{
    weft_function_desc dk = *d;
    dk.user = users[0];
    dk.flags = d->flags | WEFT_RUN_EAGERLY;
    diff_outcome ref = { 0 };
    diff_run(rts[0], &dk, args, 1, &ref);
    if (getenv("DIFF_VERBOSE"))
        fprintf(stderr, "%s: rc %d %s\n", label, ref.rc, ref.rc ? weft_errmsg() : "");
    for (size_t k = 0; k < n_rt; k++)
        for (int mode = 0; mode < 3; mode++) {
            if (k == 0 && mode == 0)
                continue;
            /* mode 0: eager; 1: the traced first call; 2: a cached call. */
            dk.user = users[k];
            dk.flags = mode == 0 ? (d->flags | WEFT_RUN_EAGERLY) : d->flags;
            diff_outcome o = { 0 };
            diff_run(rts[k], &dk, args, mode == 2 ? 2 : 1, &o);
            cr_assert_eq(o.rc, ref.rc, "%s, %u workers, mode %d: rc %d vs %d (%s)", label,
                         workers[k], mode, o.rc, ref.rc, weft_errmsg());
            for (size_t q = 0; q < d->n_outs && o.rc == 0; q++) {
                char why[200];
                cr_assert(diff_same_bits(o.out[q], ref.out[q], why, sizeof why),
                          "%s, %u workers, mode %d, output %zu: %s", label, workers[k], mode, q,
                          why);
            }
            diff_release(&o);
        }
    diff_release(&ref);
}

/* A reduction of v over random axes whose result stays in the shapes that
 * broadcast against [A, B] ([A, B], [A, 1], [1, B], [B], [], [1, 1]):
 * keepdims, or every axis, or axis 0 of a 2-D value. */
static inline weft_value *diff_random_reduce(weft_ctx *cx, weft_value *v, uint64_t *s)
{
    weft_spec sp;
    if (weft_value_spec(v, &sp) != 0)
        return NULL;
    weft_reduction r = (weft_reduction)(diff_next(s) % 9);
    int axes[2], n_axes = 0;
    bool keep = diff_next(s) % 2;
    unsigned pick = (unsigned)diff_next(s) % 4;
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

/* Adds v to a pool of random values that holds at most cap (the first
 * four, the arguments, stay): appended while there is room, else in place
 * of a random earlier result. */
static inline void diff_pool_add(weft_value **pool, int *n, int cap, weft_value *v, uint64_t *s)
{
    if (*n < cap)
        pool[(*n)++] = v;
    else
        pool[4 + diff_next(s) % (uint64_t)(cap - 4)] = v;
}

/* ---- The random program ---------------------------------------------
 * Values live in a pool whose shapes all broadcast against [A, B]:
 * [A, B], [A, 1], [1, B], [B], [] and [1, 1].  The body draws its ops from
 * the seed, so every run of one seed builds the same graph; the op tables
 * say which elementwise ops it draws from. */

#define DIFF_POOL 12
#define DIFF_N_OPS 10

#define DIFF_LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef weft_value *(*diff_binop)(weft_ctx *, weft_value *, weft_value *);
typedef weft_value *(*diff_unop)(weft_ctx *, weft_value *);

typedef struct diff_ops {
    const diff_binop *bin;          /* binary ops, any dtypes */
    size_t n_bin;
    const diff_unop *any_un;        /* unary ops of any dtype but bool */
    size_t n_any_un;
    /* Unary ops of floats only: the float functions of ints compute in
     * f64, and the graph is to stay in its dtypes. */
    const diff_unop *flt_un;
    size_t n_flt_un;
    diff_unop bool_un;              /* the unary op of bools; NULL: any_un */
} diff_ops;

/* The user pointer of diff_random_body. */
typedef struct diff_prog {
    uint64_t seed;
    const diff_ops *ops;
} diff_prog;

/* One unary op of a's dtype, drawn from ops. */
static inline weft_value *diff_random_unary(weft_ctx *cx, const diff_ops *ops, weft_value *a,
                                            const weft_spec *sa, uint64_t *s)
{
    if (sa->dtype == WEFT_BOOL && ops->bool_un)
        return ops->bool_un(cx, a);
    if (diff_is_float(sa->dtype) && diff_next(s) % 2)
        return ops->flt_un[diff_next(s) % ops->n_flt_un](cx, a);
    return ops->any_un[diff_next(s) % ops->n_any_un](cx, a);
}

/* A random graph of DIFF_N_OPS ops over 4 arguments ([A, B], [A, 1], [B],
 * []) with 2 outputs; user is a diff_prog. */
static inline int diff_random_body(weft_ctx *cx, weft_value *const *args, weft_value **outs,
                                   void *user)
{
    const diff_prog *p = user;
    uint64_t s = p->seed;
    weft_value *pool[DIFF_POOL];
    int n = 4;
    for (int k = 0; k < 4; k++)
        pool[k] = args[k];
    static const weft_dtype dts[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    for (int op = 0; op < DIFF_N_OPS; op++) {
        weft_value *a = pool[diff_next(&s) % (uint64_t)n], *b = pool[diff_next(&s) % (uint64_t)n];
        weft_value *r = NULL;
        weft_spec sa;
        weft_value_spec(a, &sa);
        switch (diff_next(&s) % 8) {
        case 0: case 1:
            r = p->ops->bin[diff_next(&s) % p->ops->n_bin](cx, a, b);
            break;
        case 2:
            r = diff_random_unary(cx, p->ops, a, &sa, &s);
            break;
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
        diff_pool_add(pool, &n, DIFF_POOL, r, &s);
    }
    outs[0] = pool[n - 1];
    outs[1] = pool[n - 2];
    return weft_ctx_status(cx);
}

#endif
