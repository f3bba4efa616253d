/* Elementwise loops (weft__ew_tile, weft__ew_block): one function per
 * (op, dtype) over a tile of rows x columns, each row with separate loops
 * for the common step patterns (all blocks, one broadcast scalar), written
 * so that gcc vectorizes them: restrict pointers, no calls per element
 * except libm's.  A tile whose operands continue from row to row runs as
 * one row.  Each op's meaning on one element is the small static inline
 * function named op_dtype below (add_i32, tanh_f32, ...), so that another
 * back end can mirror it exactly.
 *
 * Semantics (include/weft/ops.h): integer arithmetic wraps (computed in the
 * unsigned type); integer div, floordiv and mod are floor division and
 * floor modulo and give 0 for a zero divisor; integer pow with a negative
 * exponent is 1/(a^-b) truncated (so 0 except for a = 1 or -1); float
 * min/max propagate NaN; float mod and floordiv are Python's % and //
 * (NumPy's divmod; a zero divisor gives a / b); relu and sign keep NaN;
 * round is half to even; is_nan, is_inf and is_finite give bool (on integers
 * false, false, true).  Bool takes only comparisons, min/max (and, or),
 * where, casts and the logical ops (which read any non-zero byte as true).
 * Float to integer casts truncate, saturate, and map NaN to 0; integer to
 * integer casts wrap; anything non-zero casts to true.
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

/* lgamma through lgamma_r: glibc's lgamma writes the sign to the global
 * signgam, a data race between workers. */
double weft__lgamma(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

float weft__lgammaf(float x)
{
    int sign;
    return lgammaf_r(x, &sign);
}

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
            return neg_##S(a); /* MIN / -1 would overflow */                           \
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
    static inline T max_##S(T a, T b) { return a > b ? a : b; }                        \
    static inline T floordiv_##S(T a, T b) { return div_##S(a, b); }                   \
    /* C's / and %, with div's zero divisor and MIN / -1. */                           \
    static inline T truncatediv_##S(T a, T b)                                          \
    {                                                                                  \
        return b == 0 ? 0 : b == -1 ? neg_##S(a) : (T)(a / b);                         \
    }                                                                                  \
    static inline T truncatemod_##S(T a, T b)                                          \
    {                                                                                  \
        return b == 0 || b == -1 ? 0 : (T)(a % b);                                     \
    }                                                                                  \
    static inline T relu_##S(T a) { return a > 0 ? a : 0; }                            \
    static inline T square_##S(T a) { return mul_##S(a, a); }                          \
    static inline T sign_##S(T a) { return (T)((a > 0) - (a < 0)); }                   \
    static inline T floor_##S(T a) { return a; }                                       \
    static inline T ceil_##S(T a) { return a; }                                        \
    static inline T round_##S(T a) { return a; }                                       \
    static inline b8 is_nan_##S(T a) { (void)a; return 0; }                            \
    static inline b8 is_inf_##S(T a) { (void)a; return 0; }                            \
    static inline b8 is_finite_##S(T a) { (void)a; return 1; }

INT_OPS(i32, int32_t, uint32_t)
INT_OPS(i64, int64_t, uint64_t)

/* The bitwise ops.  A shift amount is clamped to [0, bits - 1], as
 * TensorFlow's kernels do (C leaves larger and negative ones undefined);
 * a left shift goes through the unsigned type, a right shift keeps the
 * sign (arithmetic). */
#define BIT_OPS(S, T, U, BITS)                                                         \
    static inline T bitwise_and_##S(T a, T b) { return a & b; }                        \
    static inline T bitwise_or_##S(T a, T b) { return a | b; }                         \
    static inline T bitwise_xor_##S(T a, T b) { return a ^ b; }                        \
    static inline T invert_##S(T a) { return (T)~a; }                                  \
    static inline unsigned shift_of_##S(T b)                                           \
    {                                                                                  \
        return b < 0 ? 0u : b > (BITS) - 1 ? (BITS) - 1u : (unsigned)b;                \
    }                                                                                  \
    static inline T left_shift_##S(T a, T b) { return (T)((U)a << shift_of_##S(b)); }  \
    static inline T right_shift_##S(T a, T b)                                          \
    {                                                                                  \
        /* floor(a / 2^s) without relying on >> of a negative value. */                \
        unsigned s = shift_of_##S(b);                                                  \
        return a < 0 ? (T)~((U)~a >> s) : (T)((U)a >> s);                              \
    }

BIT_OPS(i32, int32_t, uint32_t, 32)
BIT_OPS(i64, int64_t, uint64_t, 64)

/* NumPy's gcd and lcm: of the magnitudes, in the unsigned type, so the
 * most negative value's magnitude wraps back to itself and an lcm past
 * the range wraps, as NumPy's do; gcd(0, 0) and lcm(0, x) are 0. */
#define GCD_OPS(S, T, U)                                                               \
    static inline U magnitude_##S(T a) { return a < 0 ? (U)0 - (U)a : (U)a; }          \
    static inline U gcd_u##S(U a, U b)                                                 \
    {                                                                                  \
        while (b) {                                                                    \
            U r = a % b;                                                               \
            a = b;                                                                     \
            b = r;                                                                     \
        }                                                                              \
        return a;                                                                      \
    }                                                                                  \
    static inline T gcd_##S(T a, T b)                                                  \
    {                                                                                  \
        return (T)gcd_u##S(magnitude_##S(a), magnitude_##S(b));                        \
    }                                                                                  \
    static inline T lcm_##S(T a, T b)                                                  \
    {                                                                                  \
        U x = magnitude_##S(a), y = magnitude_##S(b), g = gcd_u##S(x, y);              \
        return g == 0 ? 0 : (T)(x / g * y);                                            \
    }

GCD_OPS(i32, int32_t, uint32_t)
GCD_OPS(i64, int64_t, uint64_t)

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

/* The math functions.  relu(-0) is +0; sign(+-0) is +0 (NumPy's). */
/* LDEXP's power, an integer carried as a float: past +-4096 (beyond
 * every finite result of any dtype, subnormals included) as +-4096, so
 * the conversion to int is always defined. */
static inline int ldexp_power(double e)
{
    return e >= 4096 ? 4096 : e >= -4096 ? (int)e : -4096;
}

#define FLT_MATH(S, T, M)                                                              \
    static inline T tanh_##S(T a) { return tanh##M(a); }                               \
    static inline T sigmoid_##S(T a) { return (T)1 / ((T)1 + exp##M(-a)); }            \
    static inline T relu_##S(T a) { return (a > 0 || a != a) ? a : (T)0; }             \
    static inline T sin_##S(T a) { return sin##M(a); }                                 \
    static inline T cos_##S(T a) { return cos##M(a); }                                 \
    static inline T floor_##S(T a) { return floor##M(a); }                             \
    static inline T ceil_##S(T a) { return ceil##M(a); }                               \
    static inline T round_##S(T a) { return roundeven##M(a); }                         \
    static inline T rsqrt_##S(T a) { return (T)1 / sqrt##M(a); }                       \
    static inline T square_##S(T a) { return a * a; }                                  \
    static inline T sign_##S(T a)                                                      \
    {                                                                                  \
        return a > 0 ? (T)1 : a < 0 ? (T)-1 : a == 0 ? (T)0 : a;                       \
    }                                                                                  \
    static inline T log1p_##S(T a) { return log1p##M(a); }                             \
    static inline T expm1_##S(T a) { return expm1##M(a); }                             \
    static inline T erf_##S(T a) { return erf##M(a); }                                 \
    static inline T erfc_##S(T a) { return erfc##M(a); }                               \
    static inline T tan_##S(T a) { return tan##M(a); }                                 \
    static inline T asin_##S(T a) { return asin##M(a); }                               \
    static inline T acos_##S(T a) { return acos##M(a); }                               \
    static inline T atan_##S(T a) { return atan##M(a); }                               \
    static inline T sinh_##S(T a) { return sinh##M(a); }                               \
    static inline T cosh_##S(T a) { return cosh##M(a); }                               \
    static inline T asinh_##S(T a) { return asinh##M(a); }                             \
    static inline T acosh_##S(T a) { return acosh##M(a); }                             \
    static inline T atanh_##S(T a) { return atanh##M(a); }                             \
    static inline T lgamma_##S(T a) { return weft__lgamma##M(a); }                     \
    static inline T digamma_##S(T a) { return weft__digamma##M(a); }                   \
    static inline T erfinv_##S(T a) { return weft__erfinv##M(a); }                     \
    static inline T ndtri_##S(T a) { return weft__ndtri##M(a); }                       \
    static inline T bessel_i0_##S(T a) { return weft__bessel_i0##M(a); }               \
    static inline T bessel_i0e_##S(T a) { return weft__bessel_i0e##M(a); }             \
    static inline T bessel_i1_##S(T a) { return weft__bessel_i1##M(a); }               \
    static inline T bessel_i1e_##S(T a) { return weft__bessel_i1e##M(a); }             \
    static inline T bessel_j0_##S(T a) { return weft__bessel_j0##M(a); }               \
    static inline T bessel_j1_##S(T a) { return weft__bessel_j1##M(a); }               \
    static inline T bessel_y0_##S(T a) { return weft__bessel_y0##M(a); }               \
    static inline T bessel_y1_##S(T a) { return weft__bessel_y1##M(a); }               \
    static inline T bessel_k0_##S(T a) { return weft__bessel_k0##M(a); }               \
    static inline T bessel_k0e_##S(T a) { return weft__bessel_k0e##M(a); }             \
    static inline T bessel_k1_##S(T a) { return weft__bessel_k1##M(a); }               \
    static inline T bessel_k1e_##S(T a) { return weft__bessel_k1e##M(a); }             \
    static inline T expint_##S(T a) { return weft__expint##M(a); }                     \
    static inline T dawsn_##S(T a) { return weft__dawsn##M(a); }                       \
    static inline T spence_##S(T a) { return weft__spence##M(a); }                     \
    static inline T fresnel_cos_##S(T a) { return weft__fresnel_cos##M(a); }           \
    static inline T fresnel_sin_##S(T a) { return weft__fresnel_sin##M(a); }           \
    static inline T log2_##S(T a) { return log2##M(a); }                               \
    static inline T log10_##S(T a) { return log10##M(a); }                             \
    static inline T exp2_##S(T a) { return exp2##M(a); }                               \
    static inline T cbrt_##S(T a) { return cbrt##M(a); }                               \
    static inline T atan2_##S(T a, T b) { return atan2##M(a, b); }                     \
    static inline T hypot_##S(T a, T b) { return hypot##M(a, b); }                     \
    static inline T copysign_##S(T a, T b) { return copysign##M(a, b); }               \
    static inline T ldexp_##S(T a, T b) { return ldexp##M(a, ldexp_power(b)); }        \
    static inline T igamma_##S(T a, T b) { return weft__igamma##M(a, b); }             \
    static inline T igammac_##S(T a, T b) { return weft__igammac##M(a, b); }           \
    static inline T igamma_grad_a_##S(T a, T b) { return weft__igamma_grad_a##M(a, b); } \
    static inline T random_gamma_grad_##S(T a, T b)                                    \
    {                                                                                  \
        return weft__random_gamma_grad##M(a, b);                                       \
    }                                                                                  \
    static inline T truncatediv_##S(T a, T b) { return trunc##M(a / b); }              \
    static inline T zeta_##S(T a, T b) { return weft__zeta##M(a, b); }                 \
    static inline T nextafter_##S(T a, T b) { return nextafter##M(a, b); }             \
    static inline T polygamma_##S(T a, T b) { return weft__polygamma##M(a, b); }       \
    static inline T betainc_##S(T a, T b, T x) { return weft__betainc##M(a, b, x); }   \
    static inline T truncatemod_##S(T a, T b) { return fmod##M(a, b); }                \
    static inline b8 is_nan_##S(T a) { return a != a; }                                \
    static inline b8 is_inf_##S(T a) { return fabs##M(a) == (T)INFINITY; }             \
    static inline b8 is_finite_##S(T a) { return fabs##M(a) < (T)INFINITY; }           \
    /* Python's //: floor((a - a % b) / b), corrected where the division   */          \
    /* rounded across an integer (NumPy's npy_divmod). */                              \
    static inline T floordiv_##S(T a, T b)                                             \
    {                                                                                  \
        if (b == 0)                                                                    \
            return a / b;                                                              \
        T m = fmod##M(a, b);                                                           \
        T d = (a - m) / b;                                                             \
        if (m != 0 && ((b < 0) != (m < 0)))                                            \
            d -= 1;                                                                    \
        if (d == 0)                                                                    \
            return copysign##M((T)0, a / b);                                           \
        T f = floor##M(d);                                                             \
        if (d - f > (T)0.5)                                                            \
            f += 1;                                                                    \
        return f;                                                                      \
    }

FLT_MATH(f32, float, f)
FLT_MATH(f64, double, )

/* The element functions the native tier calls rather than inlines
 * (trace/kernels.h): the same bodies, so the same bits. */
float weft__floordiv_f32(float a, float b) { return floordiv_f32(a, b); }
double weft__floordiv_f64(double a, double b) { return floordiv_f64(a, b); }
double weft__ldexp(double x, double e) { return ldexp_f64(x, e); }
float weft__ldexpf(float x, float e) { return ldexp_f32(x, e); }
int32_t weft__pow_i32(int32_t a, int32_t b) { return pow_i32(a, b); }
int64_t weft__pow_i64(int64_t a, int64_t b) { return pow_i64(a, b); }
int32_t weft__gcd_i32(int32_t a, int32_t b) { return gcd_i32(a, b); }
int64_t weft__gcd_i64(int64_t a, int64_t b) { return gcd_i64(a, b); }
int32_t weft__lcm_i32(int32_t a, int32_t b) { return lcm_i32(a, b); }
int64_t weft__lcm_i64(int64_t a, int64_t b) { return lcm_i64(a, b); }

/* Bool: minimum is and, maximum is or; the logical ops read non-zero as
 * true. */
static inline b8 min_b(b8 a, b8 b) { return (b8)((a != 0) & (b != 0)); }
static inline b8 max_b(b8 a, b8 b) { return (b8)((a != 0) | (b != 0)); }
static inline b8 logical_not_b(b8 a) { return (b8)(a == 0); }
static inline b8 logical_and_b(b8 a, b8 b) { return (b8)((a != 0) & (b != 0)); }
static inline b8 logical_or_b(b8 a, b8 b) { return (b8)((a != 0) | (b != 0)); }

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
#define BIN_ROWS(TI, TO, EXPR, W)                                                      \
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
 * tile, as one run when the tile is flat, else row by row, with the row
 * width a constant for the widths WIDTHS lists. */
#define BIN_FN_WIDTHS(NAME, TI, TO, EXPR, WIDTHS)                                      \
    ROW_FN void NAME##_row(const TI *restrict a, const TI *restrict b,                 \
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
        switch (cols) {                                                                \
            WIDTHS(TI, TO, EXPR)                                                       \
        default: BIN_ROWS(TI, TO, EXPR, cols); break;                                  \
        }                                                                              \
    }

/* Short rows (a value per row of a few columns) as a few vector
 * operations per row: the widths that get a loop nest of their own.  Only
 * the float arithmetic has them (normalizing rows, a bias per row); each
 * width is another four vectorized loop nests in two builds, and with
 * every loop of every dtype they were four fifths of this file's compile
 * time. */
#define SHORT_WIDTHS(TI, TO, EXPR)                                                     \
    case 4: BIN_ROWS(TI, TO, EXPR, 4); break;                                          \
    case 8: BIN_ROWS(TI, TO, EXPR, 8); break;                                          \
    case 16: BIN_ROWS(TI, TO, EXPR, 16); break;
#define NO_WIDTHS(TI, TO, EXPR)
#define BIN_FN(NAME, TI, TO, EXPR) BIN_FN_WIDTHS(NAME, TI, TO, EXPR, NO_WIDTHS)
#define BIN_WIDE_FN(NAME, TI, TO, EXPR) BIN_FN_WIDTHS(NAME, TI, TO, EXPR, SHORT_WIDTHS)

#define UN_FN(NAME, TI, TO, EXPR)                                                      \
    ROW_FN void NAME##_row(const TI *restrict a, TO *restrict o, size_t len,           \
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

/* Loops whose element is a call (libm's functions, the special functions,
 * fmod): nothing in them vectorizes, so they are built once, without the
 * AVX2 clone and the constant-width rows, which only cost compile time
 * (the clones of these loops took more than half of this file's). */
#define BIN_CALL_FN(NAME, TI, TO, EXPR)                                                \
    static void NAME(const void *const *in, const int64_t *rs, const unsigned char *step, \
                     void *out_, size_t rows, size_t cols)                             \
    {                                                                                  \
        const TI *a = in[0], *b = in[1];                                               \
        TO *o = out_;                                                                  \
        const size_t sa = step[0], sb = step[1];                                       \
        if (tile_flat(2, rs, step, rows, cols)) {                                      \
            cols *= rows;                                                              \
            rows = 1;                                                                  \
        }                                                                              \
        for (size_t r = 0; r < rows; r++) {                                            \
            const TI *pa = a + (int64_t)r * rs[0], *pb = b + (int64_t)r * rs[1];       \
            TO *po = o + r * cols;                                                     \
            for (size_t i = 0; i < cols; i++) {                                        \
                TI x = pa[i * sa], y = pb[i * sb];                                     \
                po[i] = (TO)(EXPR);                                                    \
            }                                                                          \
        }                                                                              \
    }

#define TER_CALL_FN(NAME, T, EXPR)                                                     \
    static void NAME(const void *const *in, const int64_t *rs, const unsigned char *step, \
                     void *out_, size_t rows, size_t cols)                             \
    {                                                                                  \
        const T *a = in[0], *b = in[1], *c = in[2];                                    \
        T *o = out_;                                                                   \
        const size_t sa = step[0], sb = step[1], sc = step[2];                         \
        if (tile_flat(3, rs, step, rows, cols)) {                                      \
            cols *= rows;                                                              \
            rows = 1;                                                                  \
        }                                                                              \
        for (size_t r = 0; r < rows; r++) {                                            \
            const T *pa = a + (int64_t)r * rs[0], *pb = b + (int64_t)r * rs[1];        \
            const T *pc = c + (int64_t)r * rs[2];                                      \
            T *po = o + r * cols;                                                      \
            for (size_t i = 0; i < cols; i++) {                                        \
                T x = pa[i * sa], y = pb[i * sb], z = pc[i * sc];                      \
                po[i] = (EXPR);                                                        \
            }                                                                          \
        }                                                                              \
    }

#define UN_CALL_FN(NAME, TI, TO, EXPR)                                                 \
    static void NAME(const void *const *in, const int64_t *rs, const unsigned char *step, \
                     void *out_, size_t rows, size_t cols)                             \
    {                                                                                  \
        const TI *a = in[0];                                                           \
        TO *o = out_;                                                                  \
        const size_t sa = step[0];                                                     \
        if (tile_flat(1, rs, step, rows, cols)) {                                      \
            cols *= rows;                                                              \
            rows = 1;                                                                  \
        }                                                                              \
        for (size_t r = 0; r < rows; r++) {                                            \
            const TI *pa = a + (int64_t)r * rs[0];                                     \
            TO *po = o + r * cols;                                                     \
            for (size_t i = 0; i < cols; i++) {                                        \
                TI x = pa[i * sa];                                                     \
                po[i] = (TO)(EXPR);                                                    \
            }                                                                          \
        }                                                                              \
    }

/* The all-blocks case selects with a bit mask, which gcc vectorizes
 * (a conditional on a byte-wide condition it does not). */
#define WHERE_FN(NAME, T, UT)                                                          \
    ROW_FN void NAME##_row(const b8 *restrict c, const T *restrict a,                  \
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

/* The loops every dtype has: comparisons, min/max, where, casts. */
#define ANY_ROW(S, T, UT, ARITH)                                                       \
    ARITH(min_##S##_loop, T, T, min_##S(x, y))                                         \
    ARITH(max_##S##_loop, T, T, max_##S(x, y))                                         \
    BIN_FN(eq_##S##_loop, T, b8, x == y)                                               \
    BIN_FN(ne_##S##_loop, T, b8, x != y)                                               \
    BIN_FN(lt_##S##_loop, T, b8, x < y)                                                \
    BIN_FN(le_##S##_loop, T, b8, x <= y)                                               \
    BIN_FN(gt_##S##_loop, T, b8, x > y)                                                \
    BIN_FN(ge_##S##_loop, T, b8, x >= y)                                               \
    WHERE_FN(where_##S##_loop, T, UT)                                                  \
    UN_FN(cv_##S##_b_loop, T, b8, cv_##S##_b(x))                                       \
    UN_FN(cv_##S##_i32_loop, T, int32_t, cv_##S##_i32(x))                              \
    UN_FN(cv_##S##_i64_loop, T, int64_t, cv_##S##_i64(x))                              \
    UN_FN(cv_##S##_f32_loop, T, float, cv_##S##_f32(x))                                \
    UN_FN(cv_##S##_f64_loop, T, double, cv_##S##_f64(x))

/* The arithmetic loops of the number dtypes. */
#define NUM_ROW(S, T, ARITH)                                                           \
    ARITH(add_##S##_loop, T, T, add_##S(x, y))                                         \
    ARITH(sub_##S##_loop, T, T, sub_##S(x, y))                                         \
    ARITH(mul_##S##_loop, T, T, mul_##S(x, y))                                         \
    ARITH(div_##S##_loop, T, T, div_##S(x, y))                                         \
    BIN_CALL_FN(mod_##S##_loop, T, T, mod_##S(x, y))                                   \
    BIN_CALL_FN(pow_##S##_loop, T, T, pow_##S(x, y))                                   \
    BIN_CALL_FN(floordiv_##S##_loop, T, T, floordiv_##S(x, y))                         \
    BIN_FN(truncatediv_##S##_loop, T, T, truncatediv_##S(x, y))                        \
    BIN_CALL_FN(truncatemod_##S##_loop, T, T, truncatemod_##S(x, y))                   \
    UN_FN(neg_##S##_loop, T, T, neg_##S(x))                                            \
    UN_FN(abs_##S##_loop, T, T, abs_##S(x))                                            \
    UN_FN(relu_##S##_loop, T, T, relu_##S(x))                                          \
    UN_FN(floor_##S##_loop, T, T, floor_##S(x))                                        \
    UN_FN(ceil_##S##_loop, T, T, ceil_##S(x))                                          \
    UN_FN(round_##S##_loop, T, T, round_##S(x))                                        \
    UN_FN(square_##S##_loop, T, T, square_##S(x))                                      \
    UN_FN(sign_##S##_loop, T, T, sign_##S(x))

/* The bitwise loops of the integer dtypes. */
#define BIT_ROW(S, T)                                                                  \
    BIN_FN(bitwise_and_##S##_loop, T, T, bitwise_and_##S(x, y))                        \
    BIN_FN(bitwise_or_##S##_loop, T, T, bitwise_or_##S(x, y))                          \
    BIN_FN(bitwise_xor_##S##_loop, T, T, bitwise_xor_##S(x, y))                        \
    BIN_FN(left_shift_##S##_loop, T, T, left_shift_##S(x, y))                          \
    BIN_FN(right_shift_##S##_loop, T, T, right_shift_##S(x, y))                        \
    BIN_FN(gcd_##S##_loop, T, T, gcd_##S(x, y))                                        \
    BIN_FN(lcm_##S##_loop, T, T, lcm_##S(x, y))                                        \
    UN_FN(invert_##S##_loop, T, T, invert_##S(x))

/* The float functions. */
#define FLT_ROW(S, T)                                                                  \
    BIN_WIDE_FN(truediv_##S##_loop, T, T, div_##S(x, y))                               \
    UN_FN(sqrt_##S##_loop, T, T, sqrt_##S(x))                                          \
    UN_CALL_FN(exp_##S##_loop, T, T, exp_##S(x))                                       \
    UN_CALL_FN(log_##S##_loop, T, T, log_##S(x))                                       \
    UN_CALL_FN(tanh_##S##_loop, T, T, tanh_##S(x))                                     \
    UN_CALL_FN(sigmoid_##S##_loop, T, T, sigmoid_##S(x))                               \
    UN_CALL_FN(sin_##S##_loop, T, T, sin_##S(x))                                       \
    UN_CALL_FN(cos_##S##_loop, T, T, cos_##S(x))                                       \
    UN_FN(rsqrt_##S##_loop, T, T, rsqrt_##S(x))                                        \
    UN_CALL_FN(log1p_##S##_loop, T, T, log1p_##S(x))                                   \
    UN_CALL_FN(expm1_##S##_loop, T, T, expm1_##S(x))                                   \
    UN_CALL_FN(erf_##S##_loop, T, T, erf_##S(x))                                       \
    UN_CALL_FN(erfc_##S##_loop, T, T, erfc_##S(x))                                     \
    UN_CALL_FN(tan_##S##_loop, T, T, tan_##S(x))                                       \
    UN_CALL_FN(asin_##S##_loop, T, T, asin_##S(x))                                     \
    UN_CALL_FN(acos_##S##_loop, T, T, acos_##S(x))                                     \
    UN_CALL_FN(atan_##S##_loop, T, T, atan_##S(x))                                     \
    UN_CALL_FN(sinh_##S##_loop, T, T, sinh_##S(x))                                     \
    UN_CALL_FN(cosh_##S##_loop, T, T, cosh_##S(x))                                     \
    UN_CALL_FN(asinh_##S##_loop, T, T, asinh_##S(x))                                   \
    UN_CALL_FN(acosh_##S##_loop, T, T, acosh_##S(x))                                   \
    UN_CALL_FN(atanh_##S##_loop, T, T, atanh_##S(x))                                   \
    UN_CALL_FN(lgamma_##S##_loop, T, T, lgamma_##S(x))                                 \
    UN_CALL_FN(digamma_##S##_loop, T, T, digamma_##S(x))                               \
    UN_CALL_FN(erfinv_##S##_loop, T, T, erfinv_##S(x))                                 \
    UN_CALL_FN(ndtri_##S##_loop, T, T, ndtri_##S(x))                                   \
    UN_CALL_FN(bessel_i0_##S##_loop, T, T, bessel_i0_##S(x))                           \
    UN_CALL_FN(bessel_i0e_##S##_loop, T, T, bessel_i0e_##S(x))                         \
    UN_CALL_FN(bessel_i1_##S##_loop, T, T, bessel_i1_##S(x))                           \
    UN_CALL_FN(bessel_i1e_##S##_loop, T, T, bessel_i1e_##S(x))                         \
    UN_CALL_FN(bessel_j0_##S##_loop, T, T, bessel_j0_##S(x))                           \
    UN_CALL_FN(bessel_j1_##S##_loop, T, T, bessel_j1_##S(x))                           \
    UN_CALL_FN(bessel_y0_##S##_loop, T, T, bessel_y0_##S(x))                           \
    UN_CALL_FN(bessel_y1_##S##_loop, T, T, bessel_y1_##S(x))                           \
    UN_CALL_FN(bessel_k0_##S##_loop, T, T, bessel_k0_##S(x))                           \
    UN_CALL_FN(bessel_k0e_##S##_loop, T, T, bessel_k0e_##S(x))                         \
    UN_CALL_FN(bessel_k1_##S##_loop, T, T, bessel_k1_##S(x))                           \
    UN_CALL_FN(bessel_k1e_##S##_loop, T, T, bessel_k1e_##S(x))                         \
    UN_CALL_FN(expint_##S##_loop, T, T, expint_##S(x))                                 \
    UN_CALL_FN(dawsn_##S##_loop, T, T, dawsn_##S(x))                                   \
    UN_CALL_FN(spence_##S##_loop, T, T, spence_##S(x))                                 \
    UN_CALL_FN(fresnel_cos_##S##_loop, T, T, fresnel_cos_##S(x))                       \
    UN_CALL_FN(fresnel_sin_##S##_loop, T, T, fresnel_sin_##S(x))                       \
    UN_CALL_FN(log2_##S##_loop, T, T, log2_##S(x))                                     \
    UN_CALL_FN(log10_##S##_loop, T, T, log10_##S(x))                                   \
    UN_CALL_FN(exp2_##S##_loop, T, T, exp2_##S(x))                                     \
    UN_CALL_FN(cbrt_##S##_loop, T, T, cbrt_##S(x))                                     \
    BIN_CALL_FN(atan2_##S##_loop, T, T, atan2_##S(x, y))                               \
    BIN_CALL_FN(hypot_##S##_loop, T, T, hypot_##S(x, y))                               \
    BIN_CALL_FN(copysign_##S##_loop, T, T, copysign_##S(x, y))                         \
    BIN_CALL_FN(ldexp_##S##_loop, T, T, ldexp_##S(x, y))                               \
    BIN_CALL_FN(igamma_##S##_loop, T, T, igamma_##S(x, y))                             \
    BIN_CALL_FN(igammac_##S##_loop, T, T, igammac_##S(x, y))                           \
    BIN_CALL_FN(igamma_grad_a_##S##_loop, T, T, igamma_grad_a_##S(x, y))               \
    BIN_CALL_FN(random_gamma_grad_##S##_loop, T, T, random_gamma_grad_##S(x, y))       \
    BIN_CALL_FN(zeta_##S##_loop, T, T, zeta_##S(x, y))                                 \
    BIN_CALL_FN(polygamma_##S##_loop, T, T, polygamma_##S(x, y))                       \
    BIN_CALL_FN(nextafter_##S##_loop, T, T, nextafter_##S(x, y))                       \
    TER_CALL_FN(betainc_##S##_loop, T, betainc_##S(x, y, z))

/* The tests of a number (bool results; integers are never NaN nor inf). */
#define TEST_ROW(S, T)                                                                 \
    UN_FN(is_nan_##S##_loop, T, b8, is_nan_##S(x))                                     \
    UN_FN(is_inf_##S##_loop, T, b8, is_inf_##S(x))                                     \
    UN_FN(is_finite_##S##_loop, T, b8, is_finite_##S(x))

ANY_ROW(b, b8, uint8_t, BIN_FN)
ANY_ROW(i32, int32_t, uint32_t, BIN_FN)
ANY_ROW(i64, int64_t, uint64_t, BIN_FN)
ANY_ROW(f32, float, uint32_t, BIN_WIDE_FN)
ANY_ROW(f64, double, uint64_t, BIN_WIDE_FN)
NUM_ROW(i32, int32_t, BIN_FN)
NUM_ROW(i64, int64_t, BIN_FN)
BIT_ROW(i32, int32_t)
BIT_ROW(i64, int64_t)
NUM_ROW(f32, float, BIN_WIDE_FN)
NUM_ROW(f64, double, BIN_WIDE_FN)
FLT_ROW(f32, float)
FLT_ROW(f64, double)
TEST_ROW(i32, int32_t)
TEST_ROW(i64, int64_t)
TEST_ROW(f32, float)
TEST_ROW(f64, double)
UN_FN(logical_not_b_loop, b8, b8, logical_not_b(x))
BIN_FN(logical_and_b_loop, b8, b8, logical_and_b(x, y))
BIN_FN(logical_or_b_loop, b8, b8, logical_or_b(x, y))

/* Dispatch tables indexed by [op][dtype]; NULL: not defined for the dtype
 * (ew_rules.c refuses those before a kernel is reached). */
#define ROW5(NAME) {NAME##_b_loop, NAME##_i32_loop, NAME##_i64_loop, NAME##_f32_loop, NAME##_f64_loop}
#define NROW(NAME) {NULL, NAME##_i32_loop, NAME##_i64_loop, NAME##_f32_loop, NAME##_f64_loop}
#define FROW(NAME) {NULL, NULL, NULL, NAME##_f32_loop, NAME##_f64_loop}
#define BROW(NAME) {NAME##_b_loop, NULL, NULL, NULL, NULL}
#define IROW(NAME) {NULL, NAME##_i32_loop, NAME##_i64_loop, NULL, NULL}

static const ew_fn ew_table[WEFT__OP_COUNT][5] = {
    [WEFT__OP_ADD] = NROW(add),     [WEFT__OP_SUB] = NROW(sub),
    [WEFT__OP_MUL] = NROW(mul),     [WEFT__OP_DIV] = NROW(div),
    [WEFT__OP_MOD] = NROW(mod),     [WEFT__OP_POW] = NROW(pow),
    [WEFT__OP_MINIMUM] = ROW5(min), [WEFT__OP_MAXIMUM] = ROW5(max),
    [WEFT__OP_EQ] = ROW5(eq),       [WEFT__OP_NE] = ROW5(ne),
    [WEFT__OP_LT] = ROW5(lt),       [WEFT__OP_LE] = ROW5(le),
    [WEFT__OP_GT] = ROW5(gt),       [WEFT__OP_GE] = ROW5(ge),
    [WEFT__OP_FLOORDIV] = NROW(floordiv), [WEFT__OP_TRUEDIV] = FROW(truediv),
    [WEFT__OP_LOGICAL_AND] = BROW(logical_and), [WEFT__OP_LOGICAL_OR] = BROW(logical_or),
    [WEFT__OP_NEG] = NROW(neg),     [WEFT__OP_ABS] = NROW(abs),
    [WEFT__OP_SQRT] = FROW(sqrt),   [WEFT__OP_EXP] = FROW(exp),
    [WEFT__OP_LOG] = FROW(log),     [WEFT__OP_TANH] = FROW(tanh),
    [WEFT__OP_SIGMOID] = FROW(sigmoid), [WEFT__OP_RELU] = NROW(relu),
    [WEFT__OP_SIN] = FROW(sin),     [WEFT__OP_COS] = FROW(cos),
    [WEFT__OP_FLOOR] = NROW(floor), [WEFT__OP_CEIL] = NROW(ceil),
    [WEFT__OP_ROUND] = NROW(round), [WEFT__OP_RSQRT] = FROW(rsqrt),
    [WEFT__OP_SQUARE] = NROW(square), [WEFT__OP_SIGN] = NROW(sign),
    [WEFT__OP_LOG1P] = FROW(log1p), [WEFT__OP_EXPM1] = FROW(expm1),
    [WEFT__OP_LOGICAL_NOT] = BROW(logical_not),
    [WEFT__OP_WHERE] = ROW5(where),
    [WEFT__OP_ERF] = FROW(erf),     [WEFT__OP_ERFC] = FROW(erfc),
    [WEFT__OP_TAN] = FROW(tan),     [WEFT__OP_ASIN] = FROW(asin),
    [WEFT__OP_ACOS] = FROW(acos),   [WEFT__OP_ATAN] = FROW(atan),
    [WEFT__OP_SINH] = FROW(sinh),   [WEFT__OP_COSH] = FROW(cosh),
    [WEFT__OP_ATAN2] = FROW(atan2), [WEFT__OP_IGAMMA] = FROW(igamma),
    [WEFT__OP_IGAMMAC] = FROW(igammac),
    [WEFT__OP_TRUNCATEDIV] = NROW(truncatediv), [WEFT__OP_TRUNCATEMOD] = NROW(truncatemod),
    [WEFT__OP_ZETA] = FROW(zeta), [WEFT__OP_POLYGAMMA] = FROW(polygamma),
    [WEFT__OP_NEXTAFTER] = FROW(nextafter), [WEFT__OP_EXPINT] = FROW(expint),
    [WEFT__OP_DAWSN] = FROW(dawsn), [WEFT__OP_SPENCE] = FROW(spence),
    [WEFT__OP_FRESNEL_COS] = FROW(fresnel_cos), [WEFT__OP_FRESNEL_SIN] = FROW(fresnel_sin),
    [WEFT__OP_LOG2] = FROW(log2),   [WEFT__OP_LOG10] = FROW(log10),
    [WEFT__OP_EXP2] = FROW(exp2),   [WEFT__OP_CBRT] = FROW(cbrt),
    [WEFT__OP_HYPOT] = FROW(hypot), [WEFT__OP_COPYSIGN] = FROW(copysign),
    [WEFT__OP_LDEXP] = FROW(ldexp),
    [WEFT__OP_IGAMMA_GRAD_A] = FROW(igamma_grad_a),
    [WEFT__OP_RANDOM_GAMMA_GRAD] = FROW(random_gamma_grad),
    [WEFT__OP_ASINH] = FROW(asinh), [WEFT__OP_ACOSH] = FROW(acosh),
    [WEFT__OP_ATANH] = FROW(atanh), [WEFT__OP_LGAMMA] = FROW(lgamma),
    [WEFT__OP_DIGAMMA] = FROW(digamma), [WEFT__OP_ERFINV] = FROW(erfinv),
    [WEFT__OP_NDTRI] = FROW(ndtri),
    [WEFT__OP_BESSEL_I0] = FROW(bessel_i0), [WEFT__OP_BESSEL_I0E] = FROW(bessel_i0e),
    [WEFT__OP_BESSEL_I1] = FROW(bessel_i1), [WEFT__OP_BESSEL_I1E] = FROW(bessel_i1e),
    [WEFT__OP_BESSEL_J0] = FROW(bessel_j0), [WEFT__OP_BESSEL_J1] = FROW(bessel_j1),
    [WEFT__OP_BESSEL_Y0] = FROW(bessel_y0), [WEFT__OP_BESSEL_Y1] = FROW(bessel_y1),
    [WEFT__OP_BESSEL_K0] = FROW(bessel_k0), [WEFT__OP_BESSEL_K0E] = FROW(bessel_k0e),
    [WEFT__OP_BESSEL_K1] = FROW(bessel_k1), [WEFT__OP_BESSEL_K1E] = FROW(bessel_k1e),
    [WEFT__OP_BITWISE_AND] = IROW(bitwise_and), [WEFT__OP_BITWISE_OR] = IROW(bitwise_or),
    [WEFT__OP_BITWISE_XOR] = IROW(bitwise_xor), [WEFT__OP_LEFT_SHIFT] = IROW(left_shift),
    [WEFT__OP_RIGHT_SHIFT] = IROW(right_shift), [WEFT__OP_INVERT] = IROW(invert),
    [WEFT__OP_GCD] = IROW(gcd),     [WEFT__OP_LCM] = IROW(lcm),
    [WEFT__OP_IS_NAN] = NROW(is_nan), [WEFT__OP_IS_INF] = NROW(is_inf),
    [WEFT__OP_IS_FINITE] = NROW(is_finite),
    [WEFT__OP_BETAINC] = FROW(betainc),
};

#define CAST_ROW(S)                                                                    \
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
