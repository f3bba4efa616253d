/* libFuzzer target: random op lists built through the public ops on integer
 * and bool arguments (floats enter through casts, the float functions,
 * truediv and weak float constants).  The same body runs compiled (traced
 * once, then the cached program: called twice) and eagerly (a
 * WEFT_RUN_EAGERLY twin); the two must agree bit for bit: the same code,
 * and on success the same dtypes, shapes and bytes of every output (a NaN
 * matching any NaN).
 *
 * Input layout: byte 0 and 1 pick the two arguments' dtypes and shapes, then
 * their elements are read from the input (missing bytes are zero); the rest
 * is the program, a byte per op (plus an operand byte for some) on a stack
 * of at most 8 values.  Besides ops, a program may call another function
 * (weft_call), branch (weft_cond) and loop (weft_while_loop): traced, those
 * become part of the compiled program, eagerly they run as C.  Reductions
 * (weft_reduce of every kind over random axes) compare bit for bit too:
 * their order is fixed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

static weft_runtime *rt;
/* The functions programs compose: mix(x, y) = x * y + x; neg and abs as
 * branches; a loop doubling v three times (below3 / twice on (i, v)). */
static weft_function *f_mix, *f_neg, *f_abs, *f_below3, *f_twice;
/* With FUZZ_COMPILER_STATS set, how many programs ran (not just failed
 * alike) is printed at exit: the comparison only means something then. */
static unsigned long n_inputs, n_ok;

static void print_stats(void)
{
    fprintf(stderr, "fuzz_compiler: %lu of %lu programs ran in both modes\n", n_ok, n_inputs);
}

static int body_mix(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, weft_mul(cx, a[0], a[1]), a[0]);
    return weft_ctx_status(cx);
}

static int body_neg(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_neg(cx, a[0]);
    return weft_ctx_status(cx);
}

static int body_abs(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_abs(cx, a[0]);
    return weft_ctx_status(cx);
}

static int body_below3(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_lt(cx, a[0], weft_const_i64(cx, 3));
    return weft_ctx_status(cx);
}

static int body_twice(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], weft_const_i64(cx, 1));
    o[1] = weft_add(cx, a[1], a[1]);
    return weft_ctx_status(cx);
}

static weft_function *composed(const char *name, weft_body_fn body, size_t n_args, size_t n_outs)
{
    weft_function_desc d = { .name = name, .body = body, .n_args = n_args, .n_outs = n_outs };
    weft_function *f = NULL;
    if (weft_function_create(rt, &d, &f) != 0) {
        fprintf(stderr, "weft_function_create: %s\n", weft_errmsg());
        abort();
    }
    return f;
}

static void make_composed(void)
{
    f_mix = composed("mix", body_mix, 2, 1);
    f_neg = composed("neg", body_neg, 1, 1);
    f_abs = composed("abs", body_abs, 1, 1);
    f_below3 = composed("below3", body_below3, 2, 1);
    f_twice = composed("twice", body_twice, 2, 2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    weft_config cfg = { .workers = 2 };
    if (weft_runtime_create(&cfg, &rt) != 0) {
        fprintf(stderr, "weft_runtime_create: %s\n", weft_errmsg());
        abort();
    }
    if (getenv("FUZZ_COMPILER_STATS"))
        atexit(print_stats);
    make_composed();
    return 0;
}

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_compiler: check failed: %s: ", #cond);                 \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            abort();                                                                     \
        }                                                                                \
    } while (0)

#define STACK 8
#define MAX_OPS 48
#define N_OUTS 2

typedef struct program {
    const uint8_t *code;
    size_t len;
} program;

typedef weft_value *(*binop)(weft_ctx *, weft_value *, weft_value *);
typedef weft_value *(*unop)(weft_ctx *, weft_value *);

static const binop binops[] = {
    weft_add, weft_sub, weft_mul, weft_div, weft_mod, weft_minimum, weft_maximum,
    weft_eq, weft_ne, weft_lt, weft_le, weft_gt, weft_ge, weft_pow,
    weft_floordiv, weft_truediv, weft_logical_and, weft_logical_or, weft_atan2,
};
static const unop unops[] = {
    weft_neg, weft_abs, weft_sqrt, weft_exp, weft_log, weft_tanh, weft_sigmoid, weft_relu,
    weft_sin, weft_cos, weft_floor, weft_ceil, weft_round, weft_rsqrt, weft_square, weft_sign,
    weft_log1p, weft_expm1, weft_logical_not, weft_erf, weft_erfc, weft_tan, weft_asin,
    weft_acos, weft_atan, weft_sinh, weft_cosh, weft_is_nan, weft_is_inf, weft_is_finite,
    weft_softplus, weft_silu, weft_relu6, weft_log_sigmoid, weft_gelu_exact,
};

#define N_BIN (sizeof binops / sizeof *binops)
#define N_UN (sizeof unops / sizeof *unops)

/* Rank of v (0 when unknown: never, without an input_signature). */
static int rank_of(const weft_value *v)
{
    weft_spec s;
    return weft_value_spec(v, &s) == 0 && s.rank > 0 ? s.rank : 0;
}

/* The shape ops, their attributes drawn from the operand byte. */
static weft_value *shape_op(weft_ctx *cx, unsigned which, uint8_t arg, weft_value *a, weft_value *b)
{
    int rank = rank_of(a);
    int axis = rank ? (int)(arg >> 4) % rank - ((arg & 8) ? rank : 0) : 0;
    int64_t v[WEFT_MAX_RANK + 1], e[WEFT_MAX_RANK], s[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        uint8_t bits = (uint8_t)(arg >> (2 * d));
        v[d] = (int64_t)(bits & 3) - 1;             /* -1, 0, 1, 2 */
        e[d] = (bits & 1) ? WEFT_END : (int64_t)(bits >> 1 & 3) - 2;
        s[d] = (bits & 2) ? -1 - (int64_t)(arg & 1) : 1 + (int64_t)(arg >> 7);
    }
    weft_spec sa;
    if (weft_value_spec(a, &sa) != 0)
        return NULL;
    switch (which) {
    case 12:
        return weft_transpose(cx, a, NULL);
    case 13:
        return weft_slice(cx, a, v, e, s);
    case 14: {
        weft_value *vs[4] = { a, b, a, b };
        return weft_concat(cx, vs, 2 + (arg & 2), axis);
    }
    case 15: {
        weft_value *vs[2] = { a, b };
        return weft_stack(cx, vs, 2, (int)(arg >> 4) % (rank + 1));
    }
    case 16:
        return (arg & 1) ? weft_squeeze(cx, a, (arg & 2) ? WEFT_ALL_AXES : axis)
                         : weft_expand_dims(cx, a, (int)(arg >> 4) % (rank + 1));
    case 17: {
        /* Indices in range: an index error is found eagerly at the op but
         * only at run time when traced, after any later shape error, so
         * the two modes would fail with different codes (by design). */
        if (!rank || sa.dims[axis < 0 ? axis + rank : axis] == 0)
            return weft_transpose(cx, a, NULL);
        weft_value *dim = weft_const_i64(cx, sa.dims[axis < 0 ? axis + rank : axis]);
        weft_value *idx = weft_mod(cx, weft_cast(cx, b, WEFT_I64), dim);
        return weft_gather(cx, a, weft_cast(cx, idx, (arg & 1) ? WEFT_I64 : WEFT_I32), axis);
    }
    case 18:
        for (int d = 0; d < rank; d++)
            v[d] = d < 2 ? v[d] + 1 : 1;   /* 0..3 on two dims, so tiles grow slowly */
        return weft_tile(cx, a, v);
    case 19:
        for (int d = 0; d < rank; d++)
            v[d] = -1;
        v[rank] = 2;
        return weft_broadcast_to(cx, weft_expand_dims(cx, a, rank), rank + 1, v);
    case 20: {
        weft_value *like[4] = { weft_zeros_like(cx, a), weft_ones_like(cx, a),
                                weft_fill_like(cx, a, (double)(int8_t)arg), weft_shape(cx, a) };
        return like[arg & 3];
    }
    case 21:
        return (arg & 1) ? weft_argmin(cx, a, (arg & 2) ? WEFT_ALL_AXES : axis)
                         : weft_argmax(cx, a, (arg & 2) ? WEFT_ALL_AXES : axis);
    case 23: {
        /* k may pass the last dim: both modes refuse it at the op. */
        bool desc = (arg & 4) != 0;
        if ((arg & 3) < 2)
            return (arg & 1) ? weft_argsort(cx, a, axis, desc) : weft_sort(cx, a, axis, desc);
        weft_value *tk[2];
        if (weft_top_k(cx, a, (int64_t)(arg >> 4) % 5, desc, tk) != 0)
            return NULL;
        return tk[(arg >> 3) & 1];
    }
    default: {
        if (arg & 1)
            return weft_cumsum(cx, a, (arg & 2) ? WEFT_ALL_AXES : axis);
        weft_value *parts[3] = { NULL, NULL, NULL };
        int64_t sizes[2] = { 1, -1 };
        if (weft_split(cx, a, 2, (arg & 2) ? sizes : NULL, axis, parts) != 0)
            return NULL;
        return parts[(arg >> 2) & 1];
    }
    }
}

/* In-range index tuples of length 1 into a's dim 0 from b (cast, modulo
 * the dim, minus it when neg: negative indices); NULL for a of rank 0 or
 * an empty dim 0.  Kept in range for the reason weft_gather's are. */
static weft_value *tuples_of(weft_ctx *cx, weft_value *a, weft_value *b, bool neg)
{
    weft_spec sa;
    if (weft_value_spec(a, &sa) != 0 || sa.rank <= 0 || sa.dims[0] == 0)
        return NULL;
    weft_value *dim = weft_const_i64(cx, sa.dims[0]);
    weft_value *idx = weft_mod(cx, weft_cast(cx, b, WEFT_I64), dim);
    if (neg)
        idx = weft_sub(cx, idx, dim);
    return weft_expand_dims(cx, idx, -1);
}

/* The indexing ops, their attributes drawn from the operand byte: segment
 * ids from a's own values below num_segments (-1 drops), tuples from b,
 * scatter updates gathered from a itself. */
static weft_value *index_op(weft_ctx *cx, uint8_t arg, weft_value *a, weft_value *b)
{
    int rank = rank_of(a);
    int axis = rank ? (int)(arg >> 4) % rank - ((arg & 8) ? rank : 0) : 0;
    weft_spec sa;
    if (weft_value_spec(a, &sa) != 0)
        return NULL;
    if (sa.dtype == WEFT_BOOL && arg % 6 != 2)
        a = weft_cast(cx, a, WEFT_I32);
    if (rank == 0) {
        int64_t flat = -1;
        a = weft_reshape(cx, a, 1, &flat);
    }
    switch (arg % 6) {
    case 0: {
        static const weft_reduction rs[] = { WEFT_R_SUM, WEFT_R_MEAN, WEFT_R_MAX, WEFT_R_MIN,
                                             WEFT_R_PROD };
        int64_t segs = (arg >> 3) % 5;
        weft_value *ids = weft_mod(cx, weft_cast(cx, a, (arg & 4) ? WEFT_I64 : WEFT_I32),
                                   weft_const_i64(cx, segs + 1));
        ids = weft_sub(cx, ids, weft_const_i64(cx, 1));
        return weft_unsorted_segment(cx, rs[(arg >> 3) % 5], a, ids, segs);
    }
    case 1: {
        weft_value *idx = tuples_of(cx, a, b, arg & 0x40);
        return idx ? weft_gather_nd(cx, a, idx) : weft_transpose(cx, a, NULL);
    }
    case 2: case 3: {
        weft_value *idx = tuples_of(cx, a, b, arg & 0x40);
        if (!idx)
            return weft_transpose(cx, a, NULL);
        weft_value *upd = weft_gather_nd(cx, a, tuples_of(cx, a, weft_add(cx, b, b), false));
        return arg % 6 == 2 ? weft_scatter_nd_update(cx, a, idx, upd)
                            : weft_scatter_nd_add(cx, a, idx, upd);
    }
    case 4:
        return weft_roll(cx, a, (int8_t)arg, axis);
    default:
        return weft_repeat(cx, a, (arg >> 3) % 3, axis);
    }
}

/* Elements of v counting a dim of 0 as 1 (an empty tensor can grow its
 * other dims, then lose the 0 in a reduction); saturating.  Dims are known
 * here: no input_signature. */
static int64_t numel_of(const weft_value *v)
{
    weft_spec s;
    int64_t n = 1;
    if (weft_value_spec(v, &s) != 0 || s.rank < 0)
        return 1;
    for (int d = 0; d < s.rank; d++) {
        int64_t k = s.dims[d] > 1 ? s.dims[d] : 1;
        n = n > INT64_MAX / 8 / k ? INT64_MAX / 8 : n * k;
    }
    return n;
}

/* A matmul form from the operand byte: bits 0-1 the transpose flags, bits
 * 2-3 the dtype (i64, i32, bool), bit 6 / bit 7 turn a / b from [r,c]
 * into the batch [r,1,c] (so batches broadcast against matrices).  Vectors
 * come from the 1-D arguments and reshapes. */
static weft_value *fuzz_matmul(weft_ctx *cx, weft_value *a, weft_value *b, uint8_t arg)
{
    static const weft_dtype dts[] = { WEFT_I64, WEFT_I32, WEFT_BOOL, WEFT_I64 };
    weft_dtype dt = dts[(arg >> 2) & 3];
    weft_value *ab[2] = { weft_cast(cx, a, dt), weft_cast(cx, b, dt) };
    for (int i = 0; i < 2; i++) {
        weft_spec s;
        if ((arg & (0x40u << i)) && weft_value_spec(ab[i], &s) == 0 && s.rank == 2) {
            int64_t dims[3] = { s.dims[0], 1, s.dims[1] };
            ab[i] = weft_reshape(cx, ab[i], 3, dims);
        }
    }
    unsigned flags = (arg & 1 ? WEFT_TRANSPOSE_A : 0) | (arg & 2 ? WEFT_TRANSPOSE_B : 0);
    return weft_matmul_ex(cx, ab[0], ab[1], flags);
}

/* The interpreter: the same on every run for the same code. */
static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const program *p = user;
    weft_value *st[STACK];
    for (int i = 0; i < STACK; i++)
        st[i] = args[i % 2];
    int sp = 2;
    size_t ops = 0;
    for (size_t pc = 0; pc < p->len && ops < MAX_OPS; ops++) {
        uint8_t op = p->code[pc++];
        uint8_t arg = pc < p->len ? p->code[pc] : 0;
        weft_value *a = st[(sp - 1 + STACK) % STACK];
        weft_value *b = st[(sp - 2 + STACK) % STACK];
        weft_value *r = NULL;
        /* No op's result outgrows the product of its operands (where's
         * third, a tile's 9 times one), which must stay small: the shape
         * ops raise ranks, and broadcasts of high ranks multiply. */
        int64_t na = numel_of(a), nb = numel_of(b), nc = numel_of(st[(sp - 3 + STACK) % STACK]);
        if (na > 4096 || nb > 4096 || na * nb * (nc > 4096 ? 4096 : nc) > (1 << 22))
            op = 29;   /* a swap */
        switch (op % 30) {
        case 0: case 1: case 2:
            r = binops[arg % N_BIN](cx, a, b);
            pc++;
            break;
        case 3:
            r = unops[arg % N_UN](cx, a);
            pc++;
            break;
        case 4: {
            static const weft_dtype to[] = { WEFT_BOOL, WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
            r = weft_cast(cx, a, to[arg % 5]);
            pc++;
            break;
        }
        case 5:
            /* A weak integer, a weak float, or a typed (strong) scalar. */
            if (arg % 3 == 0)
                r = weft_const_i64(cx, (int64_t)(int8_t)arg);
            else if (arg % 3 == 1)
                r = weft_const_f64(cx, (int8_t)arg / 4.0);
            else
                r = weft_const(cx, (weft_dtype)((arg >> 2) % 5), (arg >> 4) % 2);
            pc++;
            break;
        case 6: {
            /* Axis from the operand: in range or WEFT_ALL_AXES. */
            weft_spec s;
            if (arg & 0x40) {
                /* weft_reduce: the kind and keepdims from the operand, a
                 * set of axes (maybe out of range or repeated) from the
                 * next byte. */
                uint8_t ax = pc + 1 < p->len ? p->code[pc + 1] : 0;
                int axes[2] = { (int)(ax & 7) - 4, (int)((ax >> 3) & 7) - 4 };
                size_t n_axes = (size_t)(ax >> 6) % 3;
                r = weft_reduce(cx, (weft_reduction)(arg % 9), a, n_axes ? axes : NULL, n_axes,
                                (arg & 0x20) != 0);
                pc += 2;
                break;
            }
            if (weft_value_spec(a, &s) != 0 || s.rank <= 0 || (arg & 0x80))
                r = (arg & 1) ? weft_reduce_max(cx, a, WEFT_ALL_AXES)
                              : weft_sum(cx, a, WEFT_ALL_AXES);
            else
                r = (arg & 1) ? weft_reduce_max(cx, a, (int)(arg >> 1) % s.rank)
                              : weft_sum(cx, a, (int)(arg >> 1) % s.rank);
            pc++;
            break;
        }
        case 7: {
            int64_t flat = -1;
            r = weft_reshape(cx, a, 1, &flat);
            break;
        }
        case 8: {
            weft_value *c = weft_ne(cx, st[(sp - 3 + STACK) % STACK], weft_const_i64(cx, 0));
            r = weft_where(cx, c, a, b);
            break;
        }
        case 9:
            r = fuzz_matmul(cx, a, b, arg);
            pc++;
            break;
        case 10: {
            int64_t n = arg % 6;
            r = weft_range(cx, (arg & 0x40) ? WEFT_I64 : WEFT_I32, 0, n, 1);
            pc++;
            break;
        }
        case 11: {
            weft_value *in[2] = { a, b };
            if (weft_call(cx, f_mix, in, 2, &r, 1) < 0)
                return weft_ctx_status(cx);
            break;
        }
        case 12: {
            weft_value *p = weft_gt(cx, weft_sum(cx, a, WEFT_ALL_AXES), weft_const_i64(cx, 0));
            if (weft_cond(cx, p, f_neg, f_abs, &a, 1, &r, 1) < 0)
                return weft_ctx_status(cx);
            break;
        }
        case 13: {
            weft_value *vars[2] = { weft_const_i64(cx, 0), a }, *res[2];
            if (weft_while_loop(cx, f_below3, f_twice, vars, 2, res) < 0)
                return weft_ctx_status(cx);
            r = res[1];
            break;
        }
        case 14:
            r = weft_clip(cx, a, b, st[(sp - 3 + STACK) % STACK]);
            break;
        case 15: case 16: case 17: case 18: case 19: case 20:
        case 21: case 22: case 23: case 24: case 25: case 26:
            r = shape_op(cx, op % 30 - 3, arg, a, b);
            pc++;
            break;
        case 27:
            r = index_op(cx, arg, a, b);
            pc++;
            break;
        default:
            /* Swap the top two. */
            st[(sp - 1 + STACK) % STACK] = b;
            st[(sp - 2 + STACK) % STACK] = a;
            continue;
        }
        if (!r)
            return weft_ctx_status(cx);
        st[sp % STACK] = r;
        sp++;
    }
    outs[0] = st[(sp - 1 + STACK) % STACK];
    outs[1] = st[(sp - 2 + STACK) % STACK];
    return weft_ctx_status(cx);
}

static int read_arg(const uint8_t **data, size_t *size, weft_tensor **out)
{
    uint8_t b = 0;
    if (*size) {
        b = **data;
        (*data)++;
        (*size)--;
    }
    static const weft_dtype dts[] = { WEFT_I32, WEFT_I64, WEFT_BOOL, WEFT_I32 };
    weft_dtype dt = dts[b % 4];
    int rank = (b >> 2) % 3;
    int64_t dims[2] = { 1 + (b >> 4) % 4, 1 + (b >> 6) % 4 };
    int64_t numel = rank == 0 ? 1 : rank == 1 ? dims[0] : dims[0] * dims[1];
    int64_t buf[16];
    int32_t buf32[16];
    uint8_t bufb[16];
    for (int64_t i = 0; i < numel; i++) {
        int64_t v = 0;
        if (*size) {
            v = (int8_t)**data;
            (*data)++;
            (*size)--;
        }
        /* Occasionally an extreme value, to reach overflow paths. */
        if (v == 127)
            v = INT64_MAX;
        else if (v == -128)
            v = INT64_MIN;
        buf[i] = v;
        buf32[i] = v == INT64_MAX ? INT32_MAX : v == INT64_MIN ? INT32_MIN : (int32_t)v;
        bufb[i] = v != 0;
    }
    const void *data_p = dt == WEFT_I64 ? (const void *)buf : dt == WEFT_I32 ? (const void *)buf32
                                                                          : (const void *)bufb;
    return weft_tensor_create(dt, rank, dims, data_p, out);
}

/* Bit for bit, except that any NaN equals any NaN: which operand's NaN an
 * add of two NaNs returns (its sign and payload) is the compiler's choice
 * of operand order, which may differ between two loops computing the same
 * op (IEEE 754 leaves it open). */
static bool same_bytes(const weft_tensor *a, const weft_tensor *b, size_t bytes)
{
    const unsigned char *pa = weft_tensor_data(a), *pb = weft_tensor_data(b);
    weft_dtype dt = weft_tensor_dtype(a);
    if (dt != WEFT_F32 && dt != WEFT_F64)
        return memcmp(pa, pb, bytes) == 0;
    size_t es = weft_dtype_size(dt);
    for (size_t k = 0; k < bytes; k += es) {
        if (memcmp(pa + k, pb + k, es) == 0)
            continue;
        bool nan_a, nan_b;
        if (dt == WEFT_F32) {
            float x, y;
            memcpy(&x, pa + k, es);
            memcpy(&y, pb + k, es);
            nan_a = x != x;
            nan_b = y != y;
        } else {
            double x, y;
            memcpy(&x, pa + k, es);
            memcpy(&y, pb + k, es);
            nan_a = x != x;
            nan_b = y != y;
        }
        if (!nan_a || !nan_b)
            return false;
    }
    return true;
}

static void compare(weft_tensor *const *a, weft_tensor *const *b, const char *what)
{
    for (int i = 0; i < N_OUTS; i++) {
        CHECK(weft_tensor_dtype(a[i]) == weft_tensor_dtype(b[i]), "%s out %d: dtype %d vs %d",
              what, i, weft_tensor_dtype(a[i]), weft_tensor_dtype(b[i]));
        CHECK(weft_tensor_rank(a[i]) == weft_tensor_rank(b[i]), "%s out %d: rank %d vs %d", what,
              i, weft_tensor_rank(a[i]), weft_tensor_rank(b[i]));
        for (int d = 0; d < weft_tensor_rank(a[i]); d++)
            CHECK(weft_tensor_dims(a[i])[d] == weft_tensor_dims(b[i])[d], "%s out %d dim %d", what,
                  i, d);
        size_t bytes = (size_t)weft_tensor_numel(a[i]) * weft_dtype_size(weft_tensor_dtype(a[i]));
        CHECK(same_bytes(a[i], b[i], bytes), "%s out %d: the bytes differ", what, i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_tensor *x = NULL, *y = NULL;
    if (read_arg(&data, &size, &x) != 0 || read_arg(&data, &size, &y) != 0) {
        fprintf(stderr, "weft_tensor_create: %s\n", weft_errmsg());
        abort();
    }
    program prog = { data, size };
    weft_function_desc d = { .name = "prog", .body = body, .user = &prog, .n_args = 2,
                             .n_outs = N_OUTS };
    weft_function *compiled = NULL, *eager = NULL;
    CHECK(weft_function_create(rt, &d, &compiled) == 0, "%s", weft_errmsg());
    d.flags = WEFT_RUN_EAGERLY;
    CHECK(weft_function_create(rt, &d, &eager) == 0, "%s", weft_errmsg());

    weft_arg args[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
    weft_tensor *e[N_OUTS] = { NULL }, *c1[N_OUTS] = { NULL }, *c2[N_OUTS] = { NULL };
    int rc_e = weft_function_call(eager, args, 2, e, N_OUTS);
    char msg_e[512];
    snprintf(msg_e, sizeof msg_e, "%s", weft_errmsg());
    int rc_1 = weft_function_call(compiled, args, 2, c1, N_OUTS);
    int rc_2 = weft_function_call(compiled, args, 2, c2, N_OUTS);
    CHECK(rc_e == rc_1 && rc_1 == rc_2, "codes: eager %s (%s), traced %s, cached %s (%s)",
          weft_err_name(rc_e), msg_e, weft_err_name(rc_1), weft_err_name(rc_2), weft_errmsg());
    n_inputs++;
    if (rc_e == 0) {
        n_ok++;
        compare(e, c1, "eager vs traced");
        compare(e, c2, "eager vs cached");
    } else {
        CHECK(rc_e == WEFT_ESHAPE || rc_e == WEFT_EDTYPE || rc_e == WEFT_EINVAL,
              "unexpected code %s: %s", weft_err_name(rc_e), msg_e);
    }
    for (int i = 0; i < N_OUTS; i++) {
        weft_tensor_release(e[i]);
        weft_tensor_release(c1[i]);
        weft_tensor_release(c2[i]);
    }
    weft_function_destroy(&compiled);
    weft_function_destroy(&eager);
    weft_tensor_release(x);
    weft_tensor_release(y);
    return 0;
}
