/* libFuzzer target: random op lists built through the public ops on integer
 * and bool tensors.  The same body runs compiled (traced once, then the
 * cached program: called twice) and eagerly (a WEFT_RUN_EAGERLY twin); the
 * two must agree bit for bit: the same code, and on success the same
 * dtypes, shapes and bytes of every output.
 *
 * Input layout: byte 0 and 1 pick the two arguments' dtypes and shapes, then
 * their elements are read from the input (missing bytes are zero); the rest
 * is the program, a byte per op (plus an operand byte for some) on a stack
 * of at most 8 values.  Reductions (weft_reduce of every kind over random
 * axes) compare bit for bit too: their order is fixed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

static weft_runtime *rt;
/* With FUZZ_COMPILER_STATS set, how many programs ran (not just failed
 * alike) is printed at exit: the comparison only means something then. */
static unsigned long n_inputs, n_ok;

static void print_stats(void)
{
    fprintf(stderr, "fuzz_compiler: %lu of %lu programs ran in both modes\n", n_ok, n_inputs);
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
};
static const unop unops[] = { weft_neg, weft_abs };

#define N_BIN (sizeof binops / sizeof *binops)
#define N_UN (sizeof unops / sizeof *unops)

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
        switch (op % 12) {
        case 0: case 1: case 2:
            r = binops[arg % N_BIN](cx, a, b);
            pc++;
            break;
        case 3:
            r = unops[arg % N_UN](cx, a);
            pc++;
            break;
        case 4: {
            static const weft_dtype to[] = { WEFT_BOOL, WEFT_I32, WEFT_I64 };
            r = weft_cast(cx, a, to[arg % 3]);
            pc++;
            break;
        }
        case 5:
            r = weft_const_i64(cx, (int64_t)(int8_t)arg);
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
            r = weft_matmul(cx, weft_cast(cx, a, WEFT_I64), weft_cast(cx, b, WEFT_I64));
            break;
        case 10: {
            int64_t n = arg % 6;
            r = weft_range(cx, (arg & 0x40) ? WEFT_I64 : WEFT_I32, 0, n, 1);
            pc++;
            break;
        }
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
        CHECK(memcmp(weft_tensor_data(a[i]), weft_tensor_data(b[i]), bytes) == 0,
              "%s out %d: the bytes differ", what, i);
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
