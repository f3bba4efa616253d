/* Elementwise loops (weft__ew_tile, weft__ew_block): one function per
 * (op, dtype) over a tile of rows x columns, each row with separate loops
 * for the common step patterns (all blocks, one broadcast scalar), written
 * so that gcc vectorizes them: restrict pointers, no calls per element
 * except libm's pow/exp/log.  A tile whose operands continue from row to
 * row runs as one row.
 *
 * Semantics (include/weft/ops.h): integer arithmetic wraps (computed in the
 * unsigned type); integer div and mod are floor division and floor modulo
 * and give 0 for a zero divisor; integer pow with a negative exponent is
 * 1/(a^-b) truncated (so 0 except for a = 1 or -1); float min/max propagate
 * NaN; float mod is floor modulo (Python's %).  Bool arithmetic computes on
 * 0/1 as i32 and stores (result != 0).  Float to integer casts truncate,
 * saturate, and map NaN to 0; anything non-zero casts to true.
 *
 * out may be one of the inputs exactly (same element for the same i), never
 * a partial overlap. */
#include <math.h>
#include <string.h>

#include "trace/kernels.h"

/* -O2 in gcc 12 uses the "very cheap" vectorizer cost model, which gives up
 * on loops whose trip count is unknown; these loops are the hot path of
 * eager ops and fused programs, so ask for the full vectorizer here. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

typedef uint8_t b8;

/* Integer scalar ops, wrapping through the unsigned type U. */
#define INT_OPS(S, T, U)                                                               \
    static inline T add_##S(T a, T b) { return (T)((U)a + (U)b); }                     \
    static inline T sub_##S(T a, T b) { return (T)((U)a - (U)b); }                     \
    static inline T mul_##S(T a, T b) { return (T)((U)a * (U)b); }                     \
    static inline T neg_##S(T a) { return (T)((U)0 - (U)a); }                          \
    static inline T abs_##S(T a) { return a < 0 ? (T)((U)0 - (U)a) : a; }              \
    static inline T div_##S(T a, T b)                                                  \
    {                                                                                  \
        if (b == 0)                                                                    \
            return 0;                                                                  \
        if (b == -1)                                                                   \
            return neg_##S(a); /* MIN / -1 would overflow */                          \
        T q = (T)(a / b);                                                              \
        if (a % b != 0 && ((a < 0) != (b < 0)))                                        \
            q--;                                                                       \
        return q;                                                                      \
    }                                                                                  \
    static inline T mod_##S(T a, T b)                                                  \
    {                                                                                  \
        if (b == 0 || b == -1)                                                         \
            return 0;                                                                  \
        T r = (T)(a % b);                                                              \
        if (r != 0 && ((r < 0) != (b < 0)))                                            \
            r = (T)(r + b);                                                            \
        return r;                                                                      \
    }                                                                                  \
    static inline T pow_##S(T a, T b)                                                  \
    {                                                                                  \
        if (b < 0)                                                                     \
            return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;                      \
        U r = 1, base = (U)a, e = (U)b;                                                \
        while (e) {                                                                    \
            if (e & 1u)                                                                \
                r = (U)(r * base);                                                     \
            base = (U)(base * base);                                                   \
            e >>= 1;                                                                   \
        }                                                                              \
        return (T)r;                                                                   \
    }                                                                                  \
    static inline T min_##S(T a, T b) { return a < b ? a : b; }                        \
    static inline T max_##S(T a, T b) { return a > b ? a : b; }

INT_OPS(i32, int32_t, uint32_t)
INT_OPS(i64, int64_t, uint64_t)

#define FLT_OPS(S, T, FMOD, POW, FABS, SQRT, EXP, LOG)                                 \
    static inline T add_##S(T a, T b) { return a + b; }                                \
    static inline T sub_##S(T a, T b) { return a - b; }                                \
    static inline T mul_##S(T a, T b) { return a * b; }                                \
    static inline T div_##S(T a, T b) { return a / b; }                                \
    static inline T neg_##S(T a) { return -a; }                                        \
    static inline T abs_##S(T a) { return FABS(a); }                                   \
    static inline T mod_##S(T a, T b)                                                  \
    {                                                                                  \
        T r = FMOD(a, b);                                                              \
        if (r != 0 && ((r < 0) != (b < 0)))                                            \
            r += b;                                                                    \
        if (r == 0) /* Python's sign: -7.0 % 3.5 is 0.0, -7.0 % -3.5 is -0.0 */        \
            r = b < 0 ? -(T)0 : (T)0;                                                  \
        return r;                                                                      \
    }                                                                                  \
    static inline T pow_##S(T a, T b) { return POW(a, b); }                            \
    static inline T min_##S(T a, T b) { return (a != a || a < b) ? a : b; }            \
    static inline T max_##S(T a, T b) { return (a != a || a > b) ? a : b; }            \
    static inline T sqrt_##S(T a) { return SQRT(a); }                                  \
    static inline T exp_##S(T a) { return EXP(a); }                                    \
    static inline T log_##S(T a) { return LOG(a); }

FLT_OPS(f32, float, fmodf, powf, fabsf, sqrtf, expf, logf)
FLT_OPS(f64, double, fmod, pow, fabs, sqrt, exp, log)

/* Bool arithmetic: on 0/1 as i32, then normalised. */
#define BOOL_BIN(NAME) \
    static inline b8 NAME##_b(b8 a, b8 b) { return (b8)(NAME##_i32(a, b) != 0); }
BOOL_BIN(add) BOOL_BIN(sub) BOOL_BIN(mul) BOOL_BIN(div) BOOL_BIN(mod) BOOL_BIN(pow)
BOOL_BIN(min) BOOL_BIN(max)
static inline b8 neg_b(b8 a) { return a; }
static inline b8 abs_b(b8 a) { return a; }

/* Conversions.  Float to integer saturates; NaN gives 0. */
static inline int32_t sat_i32(double x)
{
    return x != x ? 0 : x >= 2147483648.0 ? INT32_MAX : x < -2147483648.0 ? INT32_MIN : (int32_t)x;
}
static inline int64_t sat_i64(double x)
{
    return x != x ? 0
           : x >= 9223372036854775808.0 ? INT64_MAX
           : x < -9223372036854775808.0 ? INT64_MIN
                                        : (int64_t)x;
}
#define CV_INT_SRC(S, T)                                                               \
    static inline b8 cv_##S##_b(T x) { return (b8)(x != 0); }                          \
    static inline int32_t cv_##S##_i32(T x) { return (int32_t)(uint32_t)x; }           \
    static inline int64_t cv_##S##_i64(T x) { return (int64_t)x; }                     \
    static inline float cv_##S##_f32(T x) { return (float)x; }                         \
    static inline double cv_##S##_f64(T x) { return (double)x; }
#define CV_FLT_SRC(S, T)                                                               \
    static inline b8 cv_##S##_b(T x) { return (b8)(x != 0); }                          \
    static inline int32_t cv_##S##_i32(T x) { return sat_i32((double)x); }             \
    static inline int64_t cv_##S##_i64(T x) { return sat_i64((double)x); }             \
    static inline float cv_##S##_f32(T x) { return (float)x; }                         \
    static inline double cv_##S##_f64(T x) { return (double)x; }
CV_INT_SRC(b, b8)
CV_INT_SRC(i32, int32_t)
CV_INT_SRC(i64, int64_t)
CV_FLT_SRC(f32, float)
CV_FLT_SRC(f64, double)

/* The per-row helpers are inlined into their tile function even where it
 * is built for AVX2 (see WEFT__SIMD_CLONES), which a plain inline does not
 * promise. */
#define ROW_FN static inline __attribute__((always_inline))

typedef weft__ew_fn ew_fn;

/* Whether the tile is one contiguous run: every operand either a block
 * that continues from row to row or the same scalar on every row. */
static inline bool tile_flat(uint32_t k, const int64_t *rs, const unsigned char *step,
                             size_t rows, size_t cols)
{
    if (rows == 1)
        return true;
    for (uint32_t i = 0; i < k; i++)
        if (step[i] ? rs[i] != (int64_t)cols : rs[i] != 0)
            return false;
    return true;
}

/* Rows of a binary tile, W columns each, the step pattern hoisted out of
 * the row loop so that each pattern is one plain loop nest (gcc
 * vectorizes the inner loop; a constant W unrolls it). */
#define BIN_ROWS(TI, TO, EXPR, W)                                                     \
    do {                                                                               \
        const int64_t ra = rs[0], rb = rs[1];                                          \
        if (step[0] && step[1]) {                                                      \
            for (size_t r = 0; r < rows; r++) {                                        \
                const TI *restrict pa = a + (int64_t)r * ra;                           \
                const TI *restrict pb = b + (int64_t)r * rb;                           \
                TO *restrict po = o + r * (W);                                         \
                for (size_t i = 0; i < (W); i++) {                                     \
                    TI x = pa[i], y = pb[i];                                           \
                    po[i] = (TO)(EXPR);                                                \
                }                                                                      \
            }                                                                          \
        } else if (step[0]) {                                                          \
            for (size_t r = 0; r < rows; r++) {                                        \
                const TI *restrict pa = a + (int64_t)r * ra;                           \
                const TI y = b[(int64_t)r * rb];                                       \
                TO *restrict po = o + r * (W);                                         \
                for (size_t i = 0; i < (W); i++) {                                     \
                    TI x = pa[i];                                                      \
                    po[i] = (TO)(EXPR);                                                \
                }                                                                      \
            }                                                                          \
        } else if (step[1]) {                                                          \
            for (size_t r = 0; r < rows; r++) {                                        \
                const TI x = a[(int64_t)r * ra];                                       \
                const TI *restrict pb = b + (int64_t)r * rb;                           \
                TO *restrict po = o + r * (W);                                         \
                for (size_t i = 0; i < (W); i++) {                                     \
                    TI y = pb[i];                                                      \
                    po[i] = (TO)(EXPR);                                                \
                }                                                                      \
            }                                                                          \
        } else {                                                                       \
            for (size_t r = 0; r < rows; r++) {                                        \
                const TI x = a[(int64_t)r * ra], y = b[(int64_t)r * rb];               \
                const TO v = (TO)(EXPR);                                               \
                TO *restrict po = o + r * (W);                                         \
                for (size_t i = 0; i < (W); i++)                                       \
                    po[i] = v;                                                         \
            }                                                                          \
        }                                                                              \
    } while (0)

/* A binary loop: EXPR reads x and y.  NAME##_row is one row with each
 * operand a block (step 1) or a scalar (step 0); NAME runs it over the
 * tile, as one run when the tile is flat. */
#define BIN_FN(NAME, TI, TO, EXPR)                                                     \
    ROW_FN void NAME##_row(const TI *restrict a, const TI *restrict b,          \
                                  TO *restrict o, size_t len, unsigned sa, unsigned sb) \
    {                                                                                  \
        if (sa && sb) {                                                                \
            for (size_t i = 0; i < len; i++) {                                         \
                TI x = a[i], y = b[i];                                                 \
                o[i] = (TO)(EXPR);                                                     \
            }                                                                          \
        } else if (sa) {                                                               \
            const TI y = b[0];                                                         \
            for (size_t i = 0; i < len; i++) {                                         \
                TI x = a[i];                                                           \
                o[i] = (TO)(EXPR);                                                     \
            }                                                                          \
        } else if (sb) {                                                               \
            const TI x = a[0];                                                         \
            for (size_t i = 0; i < len; i++) {                                         \
                TI y = b[i];                                                           \
                o[i] = (TO)(EXPR);                                                     \
            }                                                                          \
        } else {                                                                       \
            const TI x = a[0], y = b[0];                                               \
            const TO v = (TO)(EXPR);                                                   \
            for (size_t i = 0; i < len; i++)                                           \
                o[i] = v;                                                              \
        }                                                                              \
    }                                                                                  \
    WEFT__SIMD_CLONES                                                                  \
    static void NAME(const void *const *in, const int64_t *rs, const unsigned char *step, \
                     void *out_, size_t rows, size_t cols)                             \
    {                                                                                  \
        const TI *a = in[0], *b = in[1];                                               \
        TO *o = out_;                                                                  \
        if (tile_flat(2, rs, step, rows, cols)) {                                      \
            NAME##_row(a, b, o, rows * cols, step[0], step[1]);                        \
            return;                                                                    \
        }                                                                              \
        /* Short rows (a value per row of a few columns) with the width a  \
         * constant, so that each row is a few vector operations. */      \
        switch (cols) {                                                                \
        case 4: BIN_ROWS(TI, TO, EXPR, 4); break;                                      \
        case 8: BIN_ROWS(TI, TO, EXPR, 8); break;                                      \
        case 16: BIN_ROWS(TI, TO, EXPR, 16); break;                                    \
        default: BIN_ROWS(TI, TO, EXPR, cols); break;                                  \
        }                                                                              \
    }

#define UN_FN(NAME, TI, TO, EXPR)                                                      \
    ROW_FN void NAME##_row(const TI *restrict a, TO *restrict o, size_t len,    \
                                  unsigned sa)                                         \
    {                                                                                  \
        if (sa) {                                                                      \
            for (size_t i = 0; i < len; i++) {                                         \
                TI x = a[i];                                                           \
                o[i] = (TO)(EXPR);                                                     \
            }                                                                          \
        } else {                                                                       \
            const TI x = a[0];                                                         \
            const TO v = (TO)(EXPR);                                                   \
            for (size_t i = 0; i < len; i++)                                           \
                o[i] = v;                                                              \
        }                                                                              \
    }                                                                                  \
    WEFT__SIMD_CLONES                                                                  \
    static void NAME(const void *const *in, const int64_t *rs, const unsigned char *step, \
                     void *out_, size_t rows, size_t cols)                             \
    {                                                                                  \
        const TI *a = in[0];                                                           \
        TO *o = out_;                                                                  \
        if (tile_flat(1, rs, step, rows, cols)) {                                      \
            NAME##_row(a, o, rows * cols, step[0]);                                    \
            return;                                                                    \
        }                                                                              \
        for (size_t r = 0; r < rows; r++)                                              \
            NAME##_row(a + (int64_t)r * rs[0], o + r * cols, cols, step[0]);           \
    }

/* The all-blocks case selects with a bit mask, which gcc vectorizes
 * (a conditional on a byte-wide condition it does not). */
#define WHERE_FN(NAME, T, UT)                                                          \
    ROW_FN void NAME##_row(const b8 *restrict c, const T *restrict a,           \
                                  const T *restrict b, T *restrict o, size_t len,      \
                                  const unsigned char *step)                           \
    {                                                                                  \
        if (step[0] && step[1] && step[2]) {                                           \
            for (size_t i = 0; i < len; i++) {                                         \
                UT m = (UT)-(UT)(c[i] != 0);                                           \
                union { T v; UT u; } x = {a[i]}, y = {b[i]}, r;                        \
                r.u = (UT)((x.u & m) | (y.u & (UT)~m));                                \
                o[i] = r.v;                                                            \
            }                                                                          \
        } else if (!step[0]) {                                                         \
            const T *restrict src = c[0] ? a : b;                                      \
            if (step[c[0] ? 1 : 2]) {                                                  \
                if (o != src) /* a reused buffer may be src: no memcpy onto itself */  \
                    memcpy(o, src, len * sizeof(T));                                   \
            } else                                                                     \
                for (size_t i = 0; i < len; i++)                                       \
                    o[i] = src[0];                                                     \
        } else {                                                                       \
            const size_t sa = step[1], sb = step[2];                                   \
            for (size_t i = 0; i < len; i++)                                           \
                o[i] = c[i] ? a[i * sa] : b[i * sb];                                   \
        }                                                                              \
    }                                                                                  \
    WEFT__SIMD_CLONES                                                                  \
    static void NAME(const void *const *in, const int64_t *rs, const unsigned char *step, \
                     void *out_, size_t rows, size_t cols)                             \
    {                                                                                  \
        const b8 *c = in[0];                                                           \
        const T *a = in[1], *b = in[2];                                                \
        T *o = out_;                                                                   \
        if (tile_flat(3, rs, step, rows, cols)) {                                      \
            NAME##_row(c, a, b, o, rows * cols, step);                                 \
            return;                                                                    \
        }                                                                              \
        for (size_t r = 0; r < rows; r++)                                              \
            NAME##_row(c + (int64_t)r * rs[0], a + (int64_t)r * rs[1],                 \
                       b + (int64_t)r * rs[2], o + r * cols, cols, step);              \
    }

/* The binary table row of one dtype (scalar-op suffix S, type T). */
#define BIN_ROW(S, T, UT)                                                              \
    BIN_FN(add_##S##_loop, T, T, add_##S(x, y))                                        \
    BIN_FN(sub_##S##_loop, T, T, sub_##S(x, y))                                        \
    BIN_FN(mul_##S##_loop, T, T, mul_##S(x, y))                                        \
    BIN_FN(div_##S##_loop, T, T, div_##S(x, y))                                        \
    BIN_FN(mod_##S##_loop, T, T, mod_##S(x, y))                                        \
    BIN_FN(pow_##S##_loop, T, T, pow_##S(x, y))                                        \
    BIN_FN(min_##S##_loop, T, T, min_##S(x, y))                                        \
    BIN_FN(max_##S##_loop, T, T, max_##S(x, y))                                        \
    BIN_FN(eq_##S##_loop, T, b8, x == y)                                               \
    BIN_FN(ne_##S##_loop, T, b8, x != y)                                               \
    BIN_FN(lt_##S##_loop, T, b8, x < y)                                                \
    BIN_FN(le_##S##_loop, T, b8, x <= y)                                               \
    BIN_FN(gt_##S##_loop, T, b8, x > y)                                                \
    BIN_FN(ge_##S##_loop, T, b8, x >= y)                                               \
    UN_FN(neg_##S##_loop, T, T, neg_##S(x))                                            \
    UN_FN(abs_##S##_loop, T, T, abs_##S(x))                                            \
    WHERE_FN(where_##S##_loop, T, UT)                                                  \
    UN_FN(cv_##S##_b_loop, T, b8, cv_##S##_b(x))                                       \
    UN_FN(cv_##S##_i32_loop, T, int32_t, cv_##S##_i32(x))                              \
    UN_FN(cv_##S##_i64_loop, T, int64_t, cv_##S##_i64(x))                              \
    UN_FN(cv_##S##_f32_loop, T, float, cv_##S##_f32(x))                                \
    UN_FN(cv_##S##_f64_loop, T, double, cv_##S##_f64(x))

BIN_ROW(b, b8, uint8_t)
BIN_ROW(i32, int32_t, uint32_t)
BIN_ROW(i64, int64_t, uint64_t)
BIN_ROW(f32, float, uint32_t)
BIN_ROW(f64, double, uint64_t)

UN_FN(sqrt_f32_loop, float, float, sqrt_f32(x))
UN_FN(exp_f32_loop, float, float, exp_f32(x))
UN_FN(log_f32_loop, float, float, log_f32(x))
UN_FN(sqrt_f64_loop, double, double, sqrt_f64(x))
UN_FN(exp_f64_loop, double, double, exp_f64(x))
UN_FN(log_f64_loop, double, double, log_f64(x))

/* Dispatch tables indexed by [op][dtype]; NULL: not defined for the dtype. */
#define ROW5(NAME) {NAME##_b_loop, NAME##_i32_loop, NAME##_i64_loop, NAME##_f32_loop, NAME##_f64_loop}
#define FROW(NAME) {NULL, NULL, NULL, NAME##_f32_loop, NAME##_f64_loop}

static const ew_fn ew_table[WEFT__OP_COUNT][5] = {
    [WEFT__OP_ADD] = ROW5(add),     [WEFT__OP_SUB] = ROW5(sub),
    [WEFT__OP_MUL] = ROW5(mul),     [WEFT__OP_DIV] = ROW5(div),
    [WEFT__OP_MOD] = ROW5(mod),     [WEFT__OP_POW] = ROW5(pow),
    [WEFT__OP_MINIMUM] = ROW5(min), [WEFT__OP_MAXIMUM] = ROW5(max),
    [WEFT__OP_EQ] = ROW5(eq),       [WEFT__OP_NE] = ROW5(ne),
    [WEFT__OP_LT] = ROW5(lt),       [WEFT__OP_LE] = ROW5(le),
    [WEFT__OP_GT] = ROW5(gt),       [WEFT__OP_GE] = ROW5(ge),
    [WEFT__OP_NEG] = ROW5(neg),     [WEFT__OP_ABS] = ROW5(abs),
    [WEFT__OP_SQRT] = FROW(sqrt),   [WEFT__OP_EXP] = FROW(exp),
    [WEFT__OP_LOG] = FROW(log),     [WEFT__OP_WHERE] = ROW5(where),
};

#define CAST_ROW(S) \
    {cv_##S##_b_loop, cv_##S##_i32_loop, cv_##S##_i64_loop, cv_##S##_f32_loop, cv_##S##_f64_loop}
static const ew_fn cast_table[5][5] = {CAST_ROW(b), CAST_ROW(i32), CAST_ROW(i64), CAST_ROW(f32),
                                       CAST_ROW(f64)};

weft__ew_fn weft__ew_lookup(weft__op op, weft_dtype in_dt, weft_dtype out_dt)
{
    if ((unsigned)in_dt > (unsigned)WEFT_F64 || (unsigned)out_dt > (unsigned)WEFT_F64)
        return NULL;
    if (op == WEFT__OP_CAST)
        return cast_table[in_dt][out_dt];
    if ((unsigned)op < (unsigned)WEFT__OP_COUNT)
        return ew_table[op][in_dt];
    return NULL;
}

void weft__ew_tile(weft__op op, weft_dtype in_dt, weft_dtype out_dt, const void *const *in,
                   const int64_t *row_stride, const unsigned char *col_step, void *out,
                   size_t rows, size_t cols)
{
    if (rows == 0 || cols == 0)
        return;
    ew_fn fn = weft__ew_lookup(op, in_dt, out_dt);
    if (fn) {
        fn(in, row_stride, col_step, out, rows, cols);
        return;
    }
    /* An op/dtype pair the contract rules out (weft__infer_spec rejects it
     * first): produce zeros rather than leave the tile uninitialised. */
    size_t size = weft_dtype_size(out_dt);
    if (size)
        memset(out, 0, rows * cols * size);
}

void weft__ew_block(weft__op op, weft_dtype in_dt, weft_dtype out_dt,
                    const void *const *in, const unsigned char *step,
                    void *out, size_t len)
{
    static const int64_t no_rows[3] = {0, 0, 0};
    weft__ew_tile(op, in_dt, out_dt, in, no_rows, step, out, 1, len);
}
