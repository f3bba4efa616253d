/* A fused group as one LLVM function (weft__native_fn): one loop nest
 * with every instruction inside, values in registers.
 *
 *   for r in [r0, r1):                      (rows)
 *     the ROW inputs of row r
 *     for each inner reduction, in order:   a loop over the row's columns
 *       computing what it reads, accumulating in column order
 *     for c in [0, W):                      the last instruction
 *       out[r*W + c] = ...  or  acc[c] = step(acc[c], ...)
 *
 * A group without ROW or COL values or reductions is one flat loop over
 * [r0*W, r1*W).  SCALAR values are computed once, ROW values once a row;
 * a FULL value read by two loops is computed again in each (the same
 * operations on the same inputs: the same bits).
 *
 * Each op mirrors its scalar function in trace/kernel_ew.c (op_dtype) and
 * each reduction step its macro in trace/kernel_reduce.c, so results are
 * the interpreter's bit for bit: no fast-math flags (no reassociation, no
 * contraction into FMA), integer arithmetic wrapping, the same selects for
 * NaN, and the math functions are called at the addresses of the libm
 * functions the interpreter calls (not by name, so LLVM cannot swap them
 * for its own versions).  Inner reductions accumulate each row in column
 * order from the identity, exactly as the interpreter's row loops; an
 * outer reduction accumulates rows in order into the chunk's partials,
 * which the interpreter combines.
 *
 * A flat group whose output is large (trace/jit.h,
 * weft__jit_set_nt_min_bytes) writes its whole 64-byte lines with
 * non-temporal vector stores and ends with a fence (flat_nt_loop): only
 * the stores change, not the values. */
#include <math.h>
#include <string.h>

#include "trace/jit.h"
#include "trace/kernels.h"
#include "trace/llvm/api.h"
#include "trace/llvm/codegen.h"

/* A block is BLOCK_ROWS rows; rows up to BLOCK_MAX_COLS long (a power of
 * two) are computed in blocks. */
#define BLOCK_ROWS 8
#define BLOCK_MAX_COLS 16

typedef struct cg {
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMValueRef fn;
    const struct weft__fused *f;
    LLVMTypeRef i1, i8, i32, i64, f32, f64, ptr;
    LLVMValueRef out, W, r0, r1;
    LLVMValueRef ext[WEFT__FUSED_MAX_EXT];        /* base pointers */
    LLVMValueRef ext_val[WEFT__FUSED_MAX_EXT];    /* SCALAR and ROW inputs, loaded */
    LLVMValueRef ext_elem[WEFT__FUSED_MAX_EXT];   /* FULL and COL inputs, this loop body */
    LLVMValueRef val[WEFT__FUSED_MAX_INSTR];      /* SCALAR and ROW instructions */
    LLVMValueRef elem[WEFT__FUSED_MAX_INSTR];     /* FULL and COL instructions, this loop body */
    LLVMValueRef r, col, idx;                     /* the row, column, element index */
    bool nested;
    bool nt;                                      /* flat, output written non-temporally */
    /* Blocks of rows (build_blocks): the lanes of the values being built
     * (0: scalars), whether a lane is a row (at column c) or a column (of
     * row k), the constant row length and the block's first row. */
    unsigned vl;
    bool lane_rows;
    unsigned bc, bk;
    int64_t wc;
    LLVMValueRef blk;
    LLVMValueRef colv[WEFT__FUSED_MAX_EXT][BLOCK_MAX_COLS];   /* FULL inputs, a vector per column */
    bool plain_loops;                             /* loops closed now are not vectorized nor unrolled */
} cg;

static LLVMTypeRef ty(const cg *g, weft_dtype dt)
{
    switch (dt) {
    case WEFT_BOOL: return g->i8;
    case WEFT_I32:  return g->i32;
    case WEFT_I64:  return g->i64;
    case WEFT_F32:  return g->f32;
    default:        return g->f64;
    }
}

static bool is_flt(weft_dtype dt)
{
    return dt == WEFT_F32 || dt == WEFT_F64;
}

/* ---- What is supported --------------------------------------------------- */

/* Every elementwise op the interpreter has a loop for. */
static bool ew_supported(weft__op op, weft_dtype in_dt, weft_dtype out_dt)
{
    return weft__ew_lookup(op, in_dt, out_dt) != NULL;
}

static void (*call_of(weft__op op, weft_dtype dt))(void);

bool weft__jit_codegen_supports(const struct weft__fused *f)
{
    if (!f || f->n_instr == 0 || f->n_instr > WEFT__FUSED_MAX_INSTR)
        return false;
    bool inner = false, full_libm = false;
    for (uint32_t j = 0; j < f->n_instr; j++) {
        const weft__finstr *in = &f->ins[j];
        if (in->red == WEFT__FRED_NONE) {
            if (!ew_supported(in->op, in->in_dt, in->out_dt))
                return false;
            full_libm = full_libm || (in->kind == WEFT__FK_FULL && call_of(in->op, in->in_dt));
            continue;
        }
        inner = inner || in->red == WEFT__FRED_INNER;
        weft__reducer r;
        if (!weft__reducer_of(in->op, in->in_dt, &r))
            return false;
        if (in->red == WEFT__FRED_OUTER && j + 1 != f->n_instr)
            return false;
    }
    /* A FULL value is computed again in each column loop that reads it:
     * cheap for arithmetic, but a softmax's exp would run twice per
     * element, slower than the interpreter, which keeps it in a tile.  Such
     * groups stay on the interpreter. */
    if (inner && full_libm)
        return false;
    const weft__finstr *last = &f->ins[f->n_instr - 1];
    return last->red != WEFT__FRED_NONE || last->kind == WEFT__FK_FULL;
}

/* ---- Small builders ------------------------------------------------------ */

static LLVMValueRef ci(LLVMTypeRef t, long long v)
{
    return LLVMConstInt(t, (unsigned long long)v, 1);
}

/* The type of values of scalar type t being built now: t, or a vector of
 * g->vl of them in a block. */
static LLVMTypeRef vt(const cg *g, LLVMTypeRef t)
{
    return g->vl ? LLVMVectorType(t, g->vl) : t;
}

static LLVMTypeRef elem_ty(LLVMTypeRef t)
{
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t;
}

/* The scalar s in every lane of the values being built now. */
static LLVMValueRef splat(cg *g, LLVMValueRef s)
{
    if (!g->vl)
        return s;
    if (LLVMIsConstant(s)) {
        LLVMValueRef v[BLOCK_MAX_COLS];
        for (unsigned q = 0; q < g->vl; q++)
            v[q] = s;
        return LLVMConstVector(v, g->vl);
    }
    LLVMTypeRef V = LLVMVectorType(LLVMTypeOf(s), g->vl);
    LLVMValueRef one = LLVMBuildInsertElement(g->b, LLVMGetPoison(V), s, ci(g->i32, 0), "");
    return LLVMBuildShuffleVector(g->b, one, LLVMGetPoison(V),
                                  LLVMConstNull(LLVMVectorType(g->i32, g->vl)), "");
}

/* Constants of scalar type t, splat in a block. */
static LLVMValueRef kint(cg *g, LLVMTypeRef t, long long v)
{
    return splat(g, ci(t, v));
}

static LLVMValueRef kflt(cg *g, LLVMTypeRef t, double v)
{
    return splat(g, LLVMConstReal(t, v));
}

static LLVMValueRef zext8(cg *g, LLVMValueRef bit)
{
    return LLVMBuildZExt(g->b, bit, vt(g, g->i8), "");
}

/* A call of the function at fp (one to three arguments of type t, the
 * first n of args), marked as touching no memory so that it may be hoisted
 * like an op. */
static LLVMValueRef call_pure(cg *g, void (*fp)(void), LLVMTypeRef t, LLVMValueRef *args,
                              unsigned n)
{
    LLVMTypeRef params[3] = { t, t, t };
    LLVMTypeRef fty = LLVMFunctionType(t, params, n, 0);
    LLVMValueRef callee = LLVMConstIntToPtr(LLVMConstInt(g->i64, (uint64_t)(uintptr_t)fp, 0),
                                            g->ptr);
    LLVMValueRef call = LLVMBuildCall2(g->b, fty, callee, args, n, "");
    static const char *const attrs[] = { "readnone", "nounwind", "willreturn" };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
        unsigned kind = LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k]));
        LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                                 LLVMCreateEnumAttribute(g->c, kind, 0));
    }
    return call;
}

/* A call of the libm function at fp, of a alone or of a and b. */
static LLVMValueRef call_libm(cg *g, void (*fp)(void), LLVMTypeRef t, LLVMValueRef a,
                              LLVMValueRef b)
{
    LLVMValueRef args[2] = { a, b };
    return call_pure(g, fp, t, args, b ? 2 : 1);
}

/* The libm function of op for float type dt (the interpreter's). */
static void (*libm_of(weft__op op, weft_dtype dt))(void)
{
    bool s = dt == WEFT_F32;
#define PICK(F) (s ? (void (*)(void))F##f : (void (*)(void))F)
    switch (op) {
    case WEFT__OP_EXP: case WEFT__OP_SIGMOID: return PICK(exp);
    case WEFT__OP_LOG:   return PICK(log);
    case WEFT__OP_TANH:  return PICK(tanh);
    case WEFT__OP_SIN:   return PICK(sin);
    case WEFT__OP_COS:   return PICK(cos);
    case WEFT__OP_LOG1P: return PICK(log1p);
    case WEFT__OP_EXPM1: return PICK(expm1);
    case WEFT__OP_POW:   return PICK(pow);
    case WEFT__OP_MOD: case WEFT__OP_TRUNCATEMOD: return PICK(fmod);
    case WEFT__OP_ERF:   return PICK(erf);
    case WEFT__OP_ERFC:  return PICK(erfc);
    case WEFT__OP_TAN:   return PICK(tan);
    case WEFT__OP_ASIN:  return PICK(asin);
    case WEFT__OP_ACOS:  return PICK(acos);
    case WEFT__OP_ATAN:  return PICK(atan);
    case WEFT__OP_SINH:  return PICK(sinh);
    case WEFT__OP_COSH:  return PICK(cosh);
    case WEFT__OP_ATAN2: return PICK(atan2);
    case WEFT__OP_IGAMMA: return PICK(weft__igamma);
    case WEFT__OP_IGAMMAC: return PICK(weft__igammac);
    case WEFT__OP_ZETA: return PICK(weft__zeta);
    case WEFT__OP_POLYGAMMA: return PICK(weft__polygamma);
    case WEFT__OP_NEXTAFTER: return PICK(nextafter);
    case WEFT__OP_ASINH: return PICK(asinh);
    case WEFT__OP_ACOSH: return PICK(acosh);
    case WEFT__OP_ATANH: return PICK(atanh);
    case WEFT__OP_LGAMMA: return PICK(weft__lgamma);
    case WEFT__OP_DIGAMMA: return PICK(weft__digamma);
    case WEFT__OP_ERFINV: return PICK(weft__erfinv);
    case WEFT__OP_NDTRI: return PICK(weft__ndtri);
    case WEFT__OP_BESSEL_I0: return PICK(weft__bessel_i0);
    case WEFT__OP_BESSEL_I0E: return PICK(weft__bessel_i0e);
    case WEFT__OP_BESSEL_I1: return PICK(weft__bessel_i1);
    case WEFT__OP_BESSEL_I1E: return PICK(weft__bessel_i1e);
    case WEFT__OP_BESSEL_J0: return PICK(weft__bessel_j0);
    case WEFT__OP_BESSEL_J1: return PICK(weft__bessel_j1);
    case WEFT__OP_BESSEL_Y0: return PICK(weft__bessel_y0);
    case WEFT__OP_BESSEL_Y1: return PICK(weft__bessel_y1);
    case WEFT__OP_BESSEL_K0: return PICK(weft__bessel_k0);
    case WEFT__OP_BESSEL_K0E: return PICK(weft__bessel_k0e);
    case WEFT__OP_BESSEL_K1: return PICK(weft__bessel_k1);
    case WEFT__OP_BESSEL_K1E: return PICK(weft__bessel_k1e);
    case WEFT__OP_EXPINT: return PICK(weft__expint);
    case WEFT__OP_DAWSN: return PICK(weft__dawsn);
    case WEFT__OP_SPENCE: return PICK(weft__spence);
    case WEFT__OP_FRESNEL_COS: return PICK(weft__fresnel_cos);
    case WEFT__OP_FRESNEL_SIN: return PICK(weft__fresnel_sin);
    case WEFT__OP_BETAINC: return PICK(weft__betainc);
    case WEFT__OP_LOG2:  return PICK(log2);
    case WEFT__OP_LOG10: return PICK(log10);
    case WEFT__OP_EXP2:  return PICK(exp2);
    case WEFT__OP_CBRT:  return PICK(cbrt);
    case WEFT__OP_HYPOT: return PICK(hypot);
    case WEFT__OP_COPYSIGN: return PICK(copysign);
    case WEFT__OP_LDEXP: return PICK(weft__ldexp);
    case WEFT__OP_IGAMMA_GRAD_A: return PICK(weft__igamma_grad_a);
    case WEFT__OP_RANDOM_GAMMA_GRAD: return PICK(weft__random_gamma_grad);
    default:             return NULL;
    }
#undef PICK
}

/* The function an element of op on dt calls (one or two arguments of dt's
 * type, pure): libm's, or for Python's float // and integer pow, whose
 * bodies are branchy, the interpreter's own (trace/kernels.h); NULL for an
 * op computed inline. */
static void (*call_of(weft__op op, weft_dtype dt))(void)
{
    bool i32 = dt == WEFT_I32;
    if (op == WEFT__OP_POW && (i32 || dt == WEFT_I64))
        return i32 ? (void (*)(void))weft__pow_i32 : (void (*)(void))weft__pow_i64;
    if (op == WEFT__OP_GCD)
        return i32 ? (void (*)(void))weft__gcd_i32 : (void (*)(void))weft__gcd_i64;
    if (op == WEFT__OP_LCM)
        return i32 ? (void (*)(void))weft__lcm_i32 : (void (*)(void))weft__lcm_i64;
    if (!is_flt(dt))
        return NULL;
    if (op == WEFT__OP_FLOORDIV)
        return dt == WEFT_F32 ? (void (*)(void))weft__floordiv_f32
                              : (void (*)(void))weft__floordiv_f64;
    return libm_of(op, dt);
}

static LLVMValueRef intrinsic1(cg *g, const char *name, LLVMValueRef a)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->m, id, &t, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(g->c, id, &t, 1);
    return LLVMBuildCall2(g->b, fty, fn, &a, 1, "");
}

/* ---- Elementwise ops (trace/kernel_ew.c's op_dtype functions) ----------- */

/* Float to integer: truncate, saturate, NaN to 0 (sat_i32, sat_i64). */
static LLVMValueRef flt_to_int(cg *g, LLVMValueRef x, weft_dtype from, weft_dtype to)
{
    LLVMBuilderRef b = g->b;
    LLVMValueRef d = from == WEFT_F32 ? LLVMBuildFPExt(b, x, vt(g, g->f64), "") : x;
    LLVMTypeRef T = ty(g, to);
    bool w = to == WEFT_I64;
    double hi = w ? 9223372036854775808.0 : 2147483648.0;
    LLVMValueRef v = LLVMBuildFPToSI(b, d, vt(g, T), "");
    LLVMValueRef mx = w ? kint(g, T, INT64_MAX) : kint(g, T, INT32_MAX);
    LLVMValueRef mn = w ? kint(g, T, INT64_MIN) : kint(g, T, INT32_MIN);
    v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, d, kflt(g, g->f64, -hi), ""), mn, v, "");
    v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGE, d, kflt(g, g->f64, hi), ""), mx, v, "");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, d, d, ""), kint(g, T, 0), v, "");
}

static LLVMValueRef emit_cast(cg *g, weft_dtype from, weft_dtype to, LLVMValueRef x)
{
    LLVMBuilderRef b = g->b;
    if (from == to)
        return x;
    LLVMTypeRef T = vt(g, ty(g, to));
    if (to == WEFT_BOOL)
        return zext8(g, is_flt(from) ? LLVMBuildFCmp(b, LLVMRealUNE, x, kflt(g, ty(g, from), 0), "")
                                     : LLVMBuildICmp(b, LLVMIntNE, x, kint(g, ty(g, from), 0), ""));
    if (from == WEFT_BOOL)
        return is_flt(to) ? LLVMBuildUIToFP(b, x, T, "") : LLVMBuildZExt(b, x, T, "");
    if (!is_flt(from))
        return is_flt(to) ? LLVMBuildSIToFP(b, x, T, "")
               : to == WEFT_I64 ? LLVMBuildSExt(b, x, T, "") : LLVMBuildTrunc(b, x, T, "");
    if (is_flt(to))
        return to == WEFT_F64 ? LLVMBuildFPExt(b, x, T, "") : LLVMBuildFPTrunc(b, x, T, "");
    return flt_to_int(g, x, from, to);
}

/* The divisor's two cases that C's / and % cannot take (0 traps, and -1
 * traps for MIN), and the divisor with both replaced by 1. */
typedef struct divisor {
    LLVMValueRef zero, is_zero, is_minus1, odd, safe;
} divisor;

static divisor divisor_of(cg *g, LLVMValueRef y)
{
    LLVMBuilderRef b = g->b;
    LLVMTypeRef T = elem_ty(LLVMTypeOf(y));
    divisor d;
    d.zero = kint(g, T, 0);
    d.is_zero = LLVMBuildICmp(b, LLVMIntEQ, y, d.zero, "");
    d.is_minus1 = LLVMBuildICmp(b, LLVMIntEQ, y, kint(g, T, -1), "");
    d.odd = LLVMBuildOr(b, d.is_zero, d.is_minus1, "");
    d.safe = LLVMBuildSelect(b, d.odd, kint(g, T, 1), y, "");
    return d;
}

/* Floor division and modulo of integers, 0 for a zero divisor (div_S,
 * mod_S). */
static LLVMValueRef int_divmod(cg *g, bool mod, LLVMValueRef a, LLVMValueRef y)
{
    LLVMBuilderRef b = g->b;
    LLVMTypeRef T = elem_ty(LLVMTypeOf(a));
    divisor dv = divisor_of(g, y);
    LLVMValueRef zero = dv.zero, isz = dv.is_zero, ism1 = dv.is_minus1, odd = dv.odd;
    LLVMValueRef safe = dv.safe;
    LLVMValueRef rm = LLVMBuildSRem(b, a, safe, "");
    LLVMValueRef yneg = LLVMBuildICmp(b, LLVMIntSLT, y, zero, "");
    LLVMValueRef rnz = LLVMBuildICmp(b, LLVMIntNE, rm, zero, "");
    if (mod) {
        LLVMValueRef rneg = LLVMBuildICmp(b, LLVMIntSLT, rm, zero, "");
        LLVMValueRef adj = LLVMBuildAnd(b, rnz, LLVMBuildXor(b, rneg, yneg, ""), "");
        LLVMValueRef r2 = LLVMBuildSelect(b, adj, LLVMBuildAdd(b, rm, y, ""), rm, "");
        return LLVMBuildSelect(b, odd, zero, r2, "");
    }
    LLVMValueRef q = LLVMBuildSDiv(b, a, safe, "");
    LLVMValueRef aneg = LLVMBuildICmp(b, LLVMIntSLT, a, zero, "");
    LLVMValueRef adj = LLVMBuildAnd(b, rnz, LLVMBuildXor(b, aneg, yneg, ""), "");
    LLVMValueRef q2 = LLVMBuildSub(b, q, LLVMBuildZExt(b, adj, vt(g, T), ""), "");
    LLVMValueRef neg = LLVMBuildSub(b, zero, a, "");
    return LLVMBuildSelect(b, isz, zero, LLVMBuildSelect(b, ism1, neg, q2, ""), "");
}

/* C's integer / and % (truncatediv_S, truncatemod_S): a zero divisor
 * gives 0, a divisor of -1 the negation and 0 (MIN / -1 would trap). */
static LLVMValueRef int_trunc_divmod(cg *g, bool mod, LLVMValueRef a, LLVMValueRef y)
{
    LLVMBuilderRef b = g->b;
    divisor dv = divisor_of(g, y);
    if (mod)
        return LLVMBuildSelect(b, dv.odd, dv.zero, LLVMBuildSRem(b, a, dv.safe, ""), "");
    LLVMValueRef q = LLVMBuildSDiv(b, a, dv.safe, "");
    LLVMValueRef neg = LLVMBuildSub(b, dv.zero, a, "");
    return LLVMBuildSelect(b, dv.is_zero, dv.zero, LLVMBuildSelect(b, dv.is_minus1, neg, q, ""), "");
}

/* Python's float % (mod_S). */
static LLVMValueRef flt_mod(cg *g, weft_dtype dt, LLVMValueRef a, LLVMValueRef y)
{
    LLVMBuilderRef b = g->b;
    LLVMTypeRef T = ty(g, dt);
    LLVMValueRef zero = LLVMConstReal(T, 0.0);
    LLVMValueRef r = call_libm(g, libm_of(WEFT__OP_MOD, dt), T, a, y);
    LLVMValueRef yneg = LLVMBuildFCmp(b, LLVMRealOLT, y, zero, "");
    LLVMValueRef adj = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealUNE, r, zero, ""),
                                    LLVMBuildXor(b, LLVMBuildFCmp(b, LLVMRealOLT, r, zero, ""), yneg, ""), "");
    LLVMValueRef r2 = LLVMBuildSelect(b, adj, LLVMBuildFAdd(b, r, y, ""), r, "");
    LLVMValueRef z = LLVMBuildSelect(b, yneg, LLVMConstReal(T, -0.0), zero, "");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, r2, zero, ""), z, r2, "");
}

/* is_nan, is_inf, is_finite (is_nan_S ...): integers are never NaN nor
 * inf. */
static LLVMValueRef emit_test(cg *g, weft__op op, bool fl, LLVMValueRef a)
{
    LLVMBuilderRef b = g->b;
    if (!fl)
        return kint(g, g->i8, op == WEFT__OP_IS_FINITE);
    if (op == WEFT__OP_IS_NAN)
        return zext8(g, LLVMBuildFCmp(b, LLVMRealUNO, a, a, ""));
    LLVMValueRef inf = kflt(g, elem_ty(LLVMTypeOf(a)), INFINITY);
    LLVMValueRef m = intrinsic1(g, "llvm.fabs", a);
    return zext8(g, LLVMBuildFCmp(b, op == WEFT__OP_IS_INF ? LLVMRealOEQ : LLVMRealOLT, m, inf, ""));
}

static LLVMValueRef emit_ew(cg *g, const weft__finstr *in, LLVMValueRef *v)
{
    LLVMBuilderRef b = g->b;
    weft_dtype dt = in->in_dt;
    LLVMTypeRef T = ty(g, dt);
    bool fl = is_flt(dt);
    LLVMValueRef a = v[0], y = v[1];
    LLVMValueRef zero = fl ? kflt(g, T, 0.0) : kint(g, T, 0);
    LLVMValueRef one = fl ? kflt(g, T, 1.0) : kint(g, T, 1);
    static const LLVMIntPredicate ip[6] = { LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE,
                                            LLVMIntSGT, LLVMIntSGE };
    static const LLVMIntPredicate up[6] = { LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE,
                                            LLVMIntUGT, LLVMIntUGE };
    static const LLVMRealPredicate fp[6] = { LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE,
                                             LLVMRealOGT, LLVMRealOGE };
    switch (in->op) {
    case WEFT__OP_ADD: return fl ? LLVMBuildFAdd(b, a, y, "") : LLVMBuildAdd(b, a, y, "");
    case WEFT__OP_SUB: return fl ? LLVMBuildFSub(b, a, y, "") : LLVMBuildSub(b, a, y, "");
    case WEFT__OP_MUL: return fl ? LLVMBuildFMul(b, a, y, "") : LLVMBuildMul(b, a, y, "");
    case WEFT__OP_TRUEDIV: return LLVMBuildFDiv(b, a, y, "");
    case WEFT__OP_DIV: return fl ? LLVMBuildFDiv(b, a, y, "") : int_divmod(g, false, a, y);
    case WEFT__OP_FLOORDIV:
        return fl ? call_libm(g, call_of(in->op, dt), T, a, y) : int_divmod(g, false, a, y);
    case WEFT__OP_MOD: return fl ? flt_mod(g, dt, a, y) : int_divmod(g, true, a, y);
    case WEFT__OP_TRUNCATEDIV:
        return fl ? intrinsic1(g, "llvm.trunc", LLVMBuildFDiv(b, a, y, ""))
                  : int_trunc_divmod(g, false, a, y);
    case WEFT__OP_TRUNCATEMOD:
        return fl ? call_libm(g, libm_of(in->op, dt), T, a, y) : int_trunc_divmod(g, true, a, y);
    case WEFT__OP_POW: case WEFT__OP_ATAN2: case WEFT__OP_IGAMMA: case WEFT__OP_IGAMMAC:
    case WEFT__OP_ZETA: case WEFT__OP_POLYGAMMA: case WEFT__OP_NEXTAFTER: case WEFT__OP_HYPOT:
    case WEFT__OP_COPYSIGN: case WEFT__OP_GCD: case WEFT__OP_LCM: case WEFT__OP_IGAMMA_GRAD_A:
    case WEFT__OP_RANDOM_GAMMA_GRAD: case WEFT__OP_LDEXP:
        return call_libm(g, call_of(in->op, dt), T, a, y);
    case WEFT__OP_MINIMUM: case WEFT__OP_MAXIMUM: {
        bool mx = in->op == WEFT__OP_MAXIMUM;
        if (dt == WEFT_BOOL) {
            LLVMValueRef p = LLVMBuildICmp(b, LLVMIntNE, a, zero, "");
            LLVMValueRef q = LLVMBuildICmp(b, LLVMIntNE, y, zero, "");
            return zext8(g, mx ? LLVMBuildOr(b, p, q, "") : LLVMBuildAnd(b, p, q, ""));
        }
        if (!fl)
            return LLVMBuildSelect(b, LLVMBuildICmp(b, mx ? LLVMIntSGT : LLVMIntSLT, a, y, ""), a, y, "");
        LLVMValueRef take = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealUNO, a, a, ""),
                                        LLVMBuildFCmp(b, mx ? LLVMRealOGT : LLVMRealOLT, a, y, ""), "");
        return LLVMBuildSelect(b, take, a, y, "");
    }
    case WEFT__OP_EQ: case WEFT__OP_NE: case WEFT__OP_LT: case WEFT__OP_LE: case WEFT__OP_GT:
    case WEFT__OP_GE: {
        int k = (int)in->op - (int)WEFT__OP_EQ;
        if (fl)
            return zext8(g, LLVMBuildFCmp(b, fp[k], a, y, ""));
        return zext8(g, LLVMBuildICmp(b, dt == WEFT_BOOL ? up[k] : ip[k], a, y, ""));
    }
    case WEFT__OP_LOGICAL_AND: case WEFT__OP_LOGICAL_OR: {
        LLVMValueRef p = LLVMBuildICmp(b, LLVMIntNE, a, zero, "");
        LLVMValueRef q = LLVMBuildICmp(b, LLVMIntNE, y, zero, "");
        return zext8(g, in->op == WEFT__OP_LOGICAL_OR ? LLVMBuildOr(b, p, q, "") : LLVMBuildAnd(b, p, q, ""));
    }
    case WEFT__OP_LOGICAL_NOT: return zext8(g, LLVMBuildICmp(b, LLVMIntEQ, a, zero, ""));
    case WEFT__OP_NEG: return fl ? LLVMBuildFNeg(b, a, "") : LLVMBuildSub(b, zero, a, "");
    case WEFT__OP_ABS:
        if (fl)
            return intrinsic1(g, "llvm.fabs", a);
        return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a, zero, ""), LLVMBuildSub(b, zero, a, ""), a, "");
    case WEFT__OP_SQRT: return intrinsic1(g, "llvm.sqrt", a);
    case WEFT__OP_RSQRT: return LLVMBuildFDiv(b, one, intrinsic1(g, "llvm.sqrt", a), "");
    case WEFT__OP_EXP: case WEFT__OP_LOG: case WEFT__OP_TANH: case WEFT__OP_SIN: case WEFT__OP_COS:
    case WEFT__OP_LOG1P: case WEFT__OP_EXPM1: case WEFT__OP_ERF: case WEFT__OP_ERFC:
    case WEFT__OP_TAN: case WEFT__OP_ASIN: case WEFT__OP_ACOS: case WEFT__OP_ATAN:
    case WEFT__OP_SINH: case WEFT__OP_COSH: case WEFT__OP_ASINH: case WEFT__OP_ACOSH:
    case WEFT__OP_ATANH: case WEFT__OP_LGAMMA: case WEFT__OP_DIGAMMA: case WEFT__OP_ERFINV:
    case WEFT__OP_NDTRI: case WEFT__OP_BESSEL_I0: case WEFT__OP_BESSEL_I0E:
    case WEFT__OP_BESSEL_I1: case WEFT__OP_BESSEL_I1E: case WEFT__OP_BESSEL_J0:
    case WEFT__OP_BESSEL_J1: case WEFT__OP_BESSEL_Y0: case WEFT__OP_BESSEL_Y1:
    case WEFT__OP_BESSEL_K0: case WEFT__OP_BESSEL_K0E: case WEFT__OP_BESSEL_K1:
    case WEFT__OP_BESSEL_K1E: case WEFT__OP_EXPINT: case WEFT__OP_DAWSN: case WEFT__OP_SPENCE:
    case WEFT__OP_FRESNEL_COS: case WEFT__OP_FRESNEL_SIN: case WEFT__OP_LOG2:
    case WEFT__OP_LOG10: case WEFT__OP_EXP2: case WEFT__OP_CBRT:
        return call_libm(g, libm_of(in->op, dt), T, a, NULL);
    case WEFT__OP_IS_NAN: case WEFT__OP_IS_INF: case WEFT__OP_IS_FINITE:
        return emit_test(g, in->op, fl, a);
    case WEFT__OP_SIGMOID: {
        LLVMValueRef e = call_libm(g, libm_of(in->op, dt), T, LLVMBuildFNeg(b, a, ""), NULL);
        return LLVMBuildFDiv(b, one, LLVMBuildFAdd(b, one, e, ""), "");
    }
    case WEFT__OP_RELU:
        if (fl)
            return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUGT, a, zero, ""), a, zero, "");
        return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, a, zero, ""), a, zero, "");
    case WEFT__OP_FLOOR: return fl ? intrinsic1(g, "llvm.floor", a) : a;
    case WEFT__OP_CEIL:  return fl ? intrinsic1(g, "llvm.ceil", a) : a;
    case WEFT__OP_ROUND: return fl ? intrinsic1(g, "llvm.roundeven", a) : a;
    case WEFT__OP_SQUARE: return fl ? LLVMBuildFMul(b, a, a, "") : LLVMBuildMul(b, a, a, "");
    case WEFT__OP_SIGN: {
        if (!fl) {
            LLVMValueRef p = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSGT, a, zero, ""), vt(g, T), "");
            LLVMValueRef q = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSLT, a, zero, ""), vt(g, T), "");
            return LLVMBuildSub(b, p, q, "");
        }
        LLVMValueRef s = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, a, zero, ""), zero, a, "");
        s = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, a, zero, ""), kflt(g, T, -1.0), s, "");
        return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, a, zero, ""), one, s, "");
    }
    case WEFT__OP_WHERE:
        return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntNE, v[0], kint(g, g->i8, 0), ""), v[1], v[2], "");
    case WEFT__OP_BETAINC: return call_pure(g, libm_of(in->op, dt), T, v, 3);
    case WEFT__OP_BITWISE_AND: return LLVMBuildAnd(b, a, y, "");
    case WEFT__OP_BITWISE_OR: return LLVMBuildOr(b, a, y, "");
    case WEFT__OP_BITWISE_XOR: return LLVMBuildXor(b, a, y, "");
    case WEFT__OP_INVERT: return LLVMBuildNot(b, a, "");
    case WEFT__OP_LEFT_SHIFT: case WEFT__OP_RIGHT_SHIFT: {
        /* The amount clamped to [0, bits - 1] (LLVM's shifts are poison
         * past the width), as the interpreter's. */
        LLVMValueRef top = kint(g, T, dt == WEFT_I32 ? 31 : 63);
        LLVMValueRef s = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, y, zero, ""), zero, y, "");
        s = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, s, top, ""), top, s, "");
        return in->op == WEFT__OP_LEFT_SHIFT ? LLVMBuildShl(b, a, s, "")
                                             : LLVMBuildAShr(b, a, s, "");
    }
    case WEFT__OP_CAST: return emit_cast(g, dt, in->out_dt, a);
    default: return NULL;
    }
}

/* ---- Reductions (trace/kernel_reduce.c's steps) ------------------------- */

static LLVMTypeRef acc_ty(const cg *g, weft_dtype dt)
{
    return is_flt(dt) ? g->f64 : g->i64;
}

/* The identity (weft__reducer_of's init). */
static LLVMValueRef red_init(cg *g, weft__op op, weft_dtype dt)
{
    weft__reducer r;
    weft__reducer_of(op, dt, &r);
    return is_flt(dt) ? kflt(g, g->f64, r.init.d) : kint(g, g->i64, r.init.i);
}

/* acc (op) x, x converted to the accumulator's type first. */
static LLVMValueRef red_step(cg *g, weft__op op, weft_dtype dt, LLVMValueRef acc, LLVMValueRef x)
{
    LLVMBuilderRef b = g->b;
    if (dt == WEFT_F32)
        x = LLVMBuildFPExt(b, x, vt(g, g->f64), "");
    else if (dt == WEFT_I32)
        x = LLVMBuildSExt(b, x, vt(g, g->i64), "");
    else if (dt == WEFT_BOOL)
        x = LLVMBuildZExt(b, x, vt(g, g->i64), "");
    bool fl = is_flt(dt);
    switch (op) {
    case WEFT__OP_SUM: case WEFT__OP_MEAN:
        return fl ? LLVMBuildFAdd(b, acc, x, "") : LLVMBuildAdd(b, acc, x, "");
    case WEFT__OP_PROD:
        return fl ? LLVMBuildFMul(b, acc, x, "") : LLVMBuildMul(b, acc, x, "");
    default: {
        bool mx = op == WEFT__OP_REDUCE_MAX;
        LLVMValueRef take;
        if (fl)
            take = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""),
                               LLVMBuildFCmp(b, mx ? LLVMRealOGT : LLVMRealOLT, x, acc, ""), "");
        else
            take = LLVMBuildICmp(b, mx ? LLVMIntSGT : LLVMIntSLT, x, acc, "");
        return LLVMBuildSelect(b, take, x, acc, "");
    }
    }
}

/* The result of an accumulator in the output dtype (the fin functions). */
static LLVMValueRef red_fin(cg *g, const weft__finstr *in, LLVMValueRef acc)
{
    LLVMBuilderRef b = g->b;
    if (is_flt(in->in_dt)) {
        if (in->op == WEFT__OP_MEAN)
            acc = LLVMBuildFDiv(b, acc, splat(g, LLVMBuildSIToFP(b, g->W, g->f64, "")), "");
        return in->out_dt == WEFT_F32 ? LLVMBuildFPTrunc(b, acc, vt(g, g->f32), "") : acc;
    }
    return in->out_dt == WEFT_I64 ? acc : LLVMBuildTrunc(b, acc, vt(g, ty(g, in->out_dt)), "");
}

/* ---- Loops ---------------------------------------------------------------- */

typedef struct loop {
    LLVMBasicBlockRef head, exit;
    LLVMValueRef iv, acc;
} loop;

/* Opens `for (iv = start; iv < end; iv++)`, with an accumulator phi when
 * acc_init is given; the builder is left in the body. */
static void loop_open(cg *g, loop *l, LLVMValueRef start, LLVMValueRef end, LLVMValueRef acc_init)
{
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    l->head = LLVMAppendBasicBlockInContext(g->c, g->fn, "head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->c, g->fn, "body");
    l->exit = LLVMAppendBasicBlockInContext(g->c, g->fn, "exit");
    LLVMBuildBr(g->b, l->head);
    LLVMPositionBuilderAtEnd(g->b, l->head);
    l->iv = LLVMBuildPhi(g->b, g->i64, "");
    LLVMAddIncoming(l->iv, &start, &pre, 1);
    l->acc = NULL;
    if (acc_init) {
        l->acc = LLVMBuildPhi(g->b, LLVMTypeOf(acc_init), "");
        LLVMAddIncoming(l->acc, &acc_init, &pre, 1);
    }
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, l->iv, end, ""), body, l->exit);
    LLVMPositionBuilderAtEnd(g->b, body);
}

/* Marks the loop whose latch branch is br as one for neither the loop
 * vectorizer nor the unroller (a loop ID is a distinct node naming
 * itself first). */
static void mark_plain(cg *g, LLVMValueRef br)
{
    static const char vec[] = "llvm.loop.vectorize.enable", unr[] = "llvm.loop.unroll.disable";
    LLVMMetadataRef off[2] = { LLVMMDStringInContext2(g->c, vec, sizeof vec - 1),
                               LLVMValueAsMetadata(LLVMConstInt(g->i1, 0, 0)) };
    LLVMMetadataRef no_unroll = LLVMMDStringInContext2(g->c, unr, sizeof unr - 1);
    LLVMMetadataRef self = LLVMTemporaryMDNode(g->c, NULL, 0);
    LLVMMetadataRef ops[3] = { self, LLVMMDNodeInContext2(g->c, off, 2),
                               LLVMMDNodeInContext2(g->c, &no_unroll, 1) };
    LLVMMetadataRef id = LLVMMDNodeInContext2(g->c, ops, 3);
    LLVMMetadataReplaceAllUsesWith(self, id);
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(g->c, "llvm.loop", 9), LLVMMetadataAsValue(g->c, id));
}

/* Closes l (acc_next: the accumulator after this iteration); the builder
 * is left after the loop. */
static void loop_close(cg *g, loop *l, LLVMValueRef acc_next)
{
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
    LLVMValueRef next = LLVMBuildNSWAdd(g->b, l->iv, ci(g->i64, 1), "");
    LLVMValueRef br = LLVMBuildBr(g->b, l->head);
    if (g->plain_loops)
        mark_plain(g, br);
    LLVMAddIncoming(l->iv, &next, &latch, 1);
    if (l->acc)
        LLVMAddIncoming(l->acc, &acc_next, &latch, 1);
    LLVMPositionBuilderAtEnd(g->b, l->exit);
}

/* ---- Values --------------------------------------------------------------- */

static LLVMValueRef load_at(cg *g, weft_dtype dt, LLVMValueRef base, LLVMValueRef idx)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, ty(g, dt), base, &idx, 1, "");
    return LLVMBuildLoad2(g->b, ty(g, dt), p, "");
}

static LLVMValueRef value_of(cg *g, uint16_t s);
static LLVMValueRef emit_instr(cg *g, uint32_t j);

/* ---- Blocks of rows ------------------------------------------------------- */

/* A vector of n elements of dtype dt from base[idx] on (aligned as one
 * element), and its store. */
static LLVMValueRef load_vec(cg *g, weft_dtype dt, unsigned n, LLVMValueRef base, LLVMValueRef idx)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, ty(g, dt), base, &idx, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(g->b, LLVMVectorType(ty(g, dt), n), p, "");
    LLVMSetAlignment(v, (unsigned)weft_dtype_size(dt));
    return v;
}

static void store_vec(cg *g, weft_dtype dt, LLVMValueRef v, LLVMValueRef base, LLVMValueRef idx)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, ty(g, dt), base, &idx, 1, "");
    LLVMSetAlignment(LLVMBuildStore(g->b, v, p), (unsigned)weft_dtype_size(dt));
}

/* Lane k of the vector v in every lane of the values being built. */
static LLVMValueRef lane_splat(cg *g, LLVMValueRef v, unsigned k)
{
    LLVMValueRef m[BLOCK_MAX_COLS];
    for (unsigned q = 0; q < g->vl; q++)
        m[q] = ci(g->i32, k);
    return LLVMBuildShuffleVector(g->b, v, LLVMGetPoison(LLVMTypeOf(v)), LLVMConstVector(m, g->vl), "");
}

/* The block's rows of FULL input e as one vector per column
 * (g->colv[e]): the block's elements, loaded as vectors of BLOCK_ROWS,
 * are split into the even and odd elements of each stream, log2(row
 * length) times, with shuffles of two vectors.  Each round's vectors are
 * frozen (a no-op on values that are not poison, as loads of the caller's
 * tensors are not): code generation would otherwise fold the rounds
 * together and spend more time than the rest of the function takes. */
static void split_columns(cg *g, uint32_t e)
{
    weft_dtype dt = g->f->ext_dt[e];
    unsigned W = (unsigned)g->wc, V = BLOCK_ROWS;
    LLVMValueRef cur[BLOCK_MAX_COLS], nxt[BLOCK_MAX_COLS], even[BLOCK_ROWS], odd[BLOCK_ROWS];
    unsigned off[BLOCK_MAX_COLS] = { 0 }, noff[BLOCK_MAX_COLS];
    LLVMValueRef first = LLVMBuildNSWMul(g->b, g->blk, g->W, "");
    for (unsigned q = 0; q < W; q++)
        cur[q] = load_vec(g, dt, V, g->ext[e], LLVMBuildNSWAdd(g->b, first, ci(g->i64, q * V), ""));
    for (unsigned q = 0; q < V; q++) {
        even[q] = ci(g->i32, 2 * q);
        odd[q] = ci(g->i32, 2 * q + 1);
    }
    LLVMValueRef em = LLVMConstVector(even, V), om = LLVMConstVector(odd, V);
    /* ns streams of n vectors each; stream i holds the elements off[i],
     * off[i] + st, ... of the block, in order. */
    for (unsigned ns = 1, n = W, st = 1; n > 1; ns *= 2, n /= 2, st *= 2) {
        for (unsigned i = 0; i < ns; i++) {
            for (unsigned p = 0; p < n / 2; p++) {
                LLVMValueRef a = cur[i * n + 2 * p], b = cur[i * n + 2 * p + 1];
                nxt[2 * i * (n / 2) + p] = LLVMBuildFreeze(g->b, LLVMBuildShuffleVector(g->b, a, b, em, ""), "");
                nxt[(2 * i + 1) * (n / 2) + p] = LLVMBuildFreeze(g->b, LLVMBuildShuffleVector(g->b, a, b, om, ""), "");
            }
            noff[2 * i] = off[i];
            noff[2 * i + 1] = off[i] + st;
        }
        memcpy(cur, nxt, sizeof cur);
        memcpy(off, noff, sizeof off);
    }
    for (unsigned q = 0; q < W; q++)
        g->colv[e][off[q]] = cur[q];
}

/* FULL or COL input e in a block: column c of the block's rows (a lane a
 * row), or row k's columns. */
static LLVMValueRef block_input(cg *g, uint32_t e)
{
    const struct weft__fused *f = g->f;
    weft_dtype dt = f->ext_dt[e];
    if (f->ext_kind[e] == WEFT__FK_COL)
        return g->lane_rows ? splat(g, load_at(g, dt, g->ext[e], ci(g->i64, g->bc)))
                            : load_vec(g, dt, g->vl, g->ext[e], ci(g->i64, 0));
    if (!g->lane_rows) {
        LLVMValueRef row = LLVMBuildNSWAdd(g->b, g->blk, ci(g->i64, g->bk), "");
        return load_vec(g, dt, g->vl, g->ext[e], LLVMBuildNSWMul(g->b, row, g->W, ""));
    }
    if (!g->colv[e][0])
        split_columns(g, e);
    return g->colv[e][g->bc];
}

/* Operand s in a block (value_of's counterpart): SCALAR values in every
 * lane, ROW values as computed (a lane a row) or row k's in every lane. */
static LLVMValueRef block_value_of(cg *g, uint16_t s)
{
    const struct weft__fused *f = g->f;
    if (!(s & WEFT__FSRC_INSTR)) {
        uint8_t k = f->ext_kind[s];
        if (k == WEFT__FK_SCALAR)
            return splat(g, g->ext_val[s]);
        if (k == WEFT__FK_ROW)
            return g->lane_rows ? g->ext_val[s] : lane_splat(g, g->ext_val[s], g->bk);
        if (!g->ext_elem[s])
            g->ext_elem[s] = block_input(g, s);
        return g->ext_elem[s];
    }
    uint32_t j = s & ~WEFT__FSRC_INSTR;
    const weft__finstr *in = &f->ins[j];
    if (in->red == WEFT__FRED_NONE && in->kind == WEFT__FK_SCALAR)
        return splat(g, g->val[j]);
    if (in->red != WEFT__FRED_NONE || in->kind == WEFT__FK_ROW)
        return g->lane_rows ? g->val[j] : lane_splat(g, g->val[j], g->bk);
    if (!g->elem[j])
        g->elem[j] = emit_instr(g, j);
    return g->elem[j];
}

/* Instruction j (elementwise) from its operands' values. */
static LLVMValueRef emit_instr(cg *g, uint32_t j)
{
    const weft__finstr *in = &g->f->ins[j];
    LLVMValueRef v[3] = { NULL, NULL, NULL };
    for (uint32_t k = 0; k < in->n_src; k++)
        v[k] = value_of(g, in->src[k]);
    return emit_ew(g, in, v);
}

/* Operand s at the current element: SCALAR and ROW values are computed
 * already; FULL and COL ones once per loop body. */
static LLVMValueRef value_of(cg *g, uint16_t s)
{
    if (g->vl)
        return block_value_of(g, s);
    const struct weft__fused *f = g->f;
    if (!(s & WEFT__FSRC_INSTR)) {
        uint8_t k = f->ext_kind[s];
        if (k == WEFT__FK_SCALAR || k == WEFT__FK_ROW)
            return g->ext_val[s];
        if (!g->ext_elem[s])
            g->ext_elem[s] = load_at(g, f->ext_dt[s], g->ext[s], k == WEFT__FK_FULL ? g->idx : g->col);
        return g->ext_elem[s];
    }
    uint32_t j = s & ~WEFT__FSRC_INSTR;
    const weft__finstr *in = &f->ins[j];
    if (in->red != WEFT__FRED_NONE || in->kind == WEFT__FK_SCALAR || in->kind == WEFT__FK_ROW)
        return g->val[j];
    if (!g->elem[j])
        g->elem[j] = emit_instr(g, j);
    return g->elem[j];
}

/* Starts a loop body over the columns of row r: per-element values are
 * new there. */
static void body_reset(cg *g)
{
    memset(g->elem, 0, sizeof g->elem);
    memset(g->ext_elem, 0, sizeof g->ext_elem);
}

/* Computes the ROW instructions before `upto` not computed yet (their
 * operands are ROW and SCALAR values, done by now). */
static void row_values(cg *g, uint32_t upto, bool *done)
{
    for (uint32_t j = 0; j < upto; j++) {
        const weft__finstr *in = &g->f->ins[j];
        if (done[j] || in->red != WEFT__FRED_NONE || in->kind != WEFT__FK_ROW)
            continue;
        g->val[j] = emit_instr(g, j);
        done[j] = true;
    }
}

/* The column loop of the current row for instruction j: an inner
 * reduction into g->val[j], the value of the last one stored, or an outer
 * reduction's step. */
static void flat_nt_loop(cg *g, uint32_t j);

static void column_loop(cg *g, uint32_t j)
{
    const struct weft__fused *f = g->f;
    const weft__finstr *in = &f->ins[j];
    if (g->nt && in->red == WEFT__FRED_NONE) {
        flat_nt_loop(g, j);
        return;
    }
    LLVMValueRef init = in->red == WEFT__FRED_INNER ? red_init(g, in->op, in->in_dt) : NULL;
    loop l;
    LLVMValueRef start = g->nested ? ci(g->i64, 0) : LLVMBuildNSWMul(g->b, g->r0, g->W, "");
    LLVMValueRef end = g->nested ? g->W : LLVMBuildNSWMul(g->b, g->r1, g->W, "");
    LLVMValueRef rowbase = g->nested ? LLVMBuildNSWMul(g->b, g->r, g->W, "") : NULL;
    loop_open(g, &l, start, end, init);
    body_reset(g);
    g->col = l.iv;
    g->idx = g->nested ? LLVMBuildNSWAdd(g->b, rowbase, l.iv, "") : l.iv;
    LLVMValueRef next = NULL;
    if (in->red == WEFT__FRED_INNER) {
        next = red_step(g, in->op, in->in_dt, l.acc, value_of(g, in->src[0]));
    } else if (in->red == WEFT__FRED_OUTER) {
        LLVMTypeRef A = acc_ty(g, in->in_dt);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, A, g->out, &g->col, 1, "");
        LLVMValueRef a = LLVMBuildLoad2(g->b, A, p, "");
        LLVMBuildStore(g->b, red_step(g, in->op, in->in_dt, a, value_of(g, in->src[0])), p);
    } else {
        LLVMValueRef v = emit_instr(g, j);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, ty(g, in->out_dt), g->out, &g->idx, 1, "");
        LLVMBuildStore(g->b, v, p);
    }
    loop_close(g, &l, next);
    if (in->red == WEFT__FRED_INNER)
        g->val[j] = red_fin(g, in, l.acc);
}

/* ---- A large flat output, written with non-temporal stores ------------- */

/* Whether f's value is FULL and, by the dims known at compile time, at
 * least weft__jit_nt_min_bytes() (trace/jit.h says why). */
static bool large_output(const struct weft__fused *f)
{
    const weft__finstr *last = &f->ins[f->n_instr - 1];
    if (last->red != WEFT__FRED_NONE || last->kind != WEFT__FK_FULL)
        return false;
    int64_t bytes = (int64_t)weft_dtype_size(last->out_dt);
    for (int q = 0; q < f->rank; q++) {
        if (f->dims[q] < 0)
            return false;
        if (f->dims[q] > 0 && bytes > INT64_MAX / f->dims[q])
            return true;
        bytes *= f->dims[q];
    }
    return bytes >= weft__jit_nt_min_bytes();
}

static void set_nontemporal(cg *g, LLVMValueRef store)
{
    LLVMMetadataRef one = LLVMValueAsMetadata(ci(g->i32, 1));
    unsigned kind = LLVMGetMDKindIDInContext(g->c, "nontemporal", 11);
    LLVMSetMetadata(store, kind, LLVMMetadataAsValue(g->c, LLVMMDNodeInContext2(g->c, &one, 1)));
}

/* The whole 64-byte lines of the output from element a on, n_lines of
 * them (a's address is a multiple of 64): each line's values computed one
 * by one into a line buffer, which the optimizer keeps in registers and
 * vectorizes, then written with one aligned non-temporal vector store.
 * (The loop vectorizer refuses a loop whose element store is
 * non-temporal, so the vector store is made here.) */
static void nt_lines(cg *g, uint32_t j, LLVMValueRef a, LLVMValueRef n_lines)
{
    const weft__finstr *in = &g->f->ins[j];
    LLVMTypeRef T = ty(g, in->out_dt);
    unsigned vl = 64 / (unsigned)weft_dtype_size(in->out_dt);
    LLVMTypeRef V = LLVMVectorType(T, vl);
    /* In the entry block, where SROA turns it into registers. */
    LLVMBuilderRef eb = LLVMCreateBuilderInContext(g->c);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(g->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(eb, first);
    else
        LLVMPositionBuilderAtEnd(eb, entry);
    LLVMValueRef buf = LLVMBuildAlloca(eb, V, "line");
    LLVMSetAlignment(buf, 64);
    LLVMDisposeBuilder(eb);
    loop lines, k;
    loop_open(g, &lines, ci(g->i64, 0), n_lines, NULL);
    LLVMValueRef base = LLVMBuildNSWAdd(g->b, a, LLVMBuildNSWMul(g->b, lines.iv, ci(g->i64, vl), ""), "");
    loop_open(g, &k, ci(g->i64, 0), ci(g->i64, vl), NULL);
    body_reset(g);
    g->idx = g->col = LLVMBuildNSWAdd(g->b, base, k.iv, "");
    LLVMValueRef v = emit_instr(g, j);
    LLVMBuildStore(g->b, v, LLVMBuildInBoundsGEP2(g->b, T, buf, &k.iv, 1, ""));
    loop_close(g, &k, NULL);
    LLVMValueRef line = LLVMBuildLoad2(g->b, V, buf, "");
    LLVMSetAlignment(line, 64);
    LLVMValueRef st = LLVMBuildStore(g->b, line, LLVMBuildInBoundsGEP2(g->b, T, g->out, &base, 1, ""));
    LLVMSetAlignment(st, 64);
    set_nontemporal(g, st);
    loop_close(g, &lines, NULL);
}

/* The flat loop over [r0*W, r1*W) of the group's value j: the elements
 * before the first 64-byte boundary of the output and after the last
 * whole line with plain stores (one scalar loop), the lines between with
 * non-temporal ones (nt_lines), then a fence: non-temporal stores are
 * weakly ordered, and the worker's join must publish them to the caller.
 * An output not even aligned to its element size (never one of weft's
 * buffers) is all edge. */
static void flat_nt_loop(cg *g, uint32_t j)
{
    LLVMBuilderRef b = g->b;
    const weft__finstr *in = &g->f->ins[j];
    LLVMTypeRef T = ty(g, in->out_dt);
    long long es = (long long)weft_dtype_size(in->out_dt);
    long long vl = 64 / es, es_log = 0, vl_log = 0;
    while ((1ll << es_log) < es)
        es_log++;
    while ((1ll << vl_log) < vl)
        vl_log++;
    LLVMValueRef start = LLVMBuildNSWMul(b, g->r0, g->W, "");
    LLVMValueRef end = LLVMBuildNSWMul(b, g->r1, g->W, "");
    LLVMValueRef n = LLVMBuildNSWSub(b, end, start, "");
    LLVMValueRef addr = LLVMBuildPtrToInt(b, LLVMBuildInBoundsGEP2(b, T, g->out, &start, 1, ""),
                                          g->i64, "");
    LLVMValueRef lead = LLVMBuildLShr(b, LLVMBuildAnd(b, LLVMBuildNeg(b, addr, ""), ci(g->i64, 63), ""),
                                      ci(g->i64, es_log), "");
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, addr, ci(g->i64, es - 1), ""),
                                     ci(g->i64, 0), "");
    lead = LLVMBuildSelect(b, odd, n, lead, "");
    lead = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, lead, n, ""), lead, n, "");
    LLVMValueRef mid = LLVMBuildNSWAdd(b, start, lead, "");
    LLVMValueRef n_lines = LLVMBuildLShr(b, LLVMBuildNSWSub(b, end, mid, ""), ci(g->i64, vl_log), "");
    LLVMValueRef lend = LLVMBuildNSWAdd(b, mid, LLVMBuildNSWMul(b, n_lines, ci(g->i64, vl), ""), "");
    /* The edges: k < lead is element start + k, the rest lend + k - lead. */
    LLVMValueRef n_edge = LLVMBuildNSWAdd(b, lead, LLVMBuildNSWSub(b, end, lend, ""), "");
    loop l;
    loop_open(g, &l, ci(g->i64, 0), n_edge, NULL);
    body_reset(g);
    LLVMValueRef in_lead = LLVMBuildICmp(g->b, LLVMIntSLT, l.iv, lead, "");
    LLVMValueRef tail = LLVMBuildNSWAdd(g->b, lend, LLVMBuildNSWSub(g->b, l.iv, lead, ""), "");
    g->idx = g->col = LLVMBuildSelect(g->b, in_lead, LLVMBuildNSWAdd(g->b, start, l.iv, ""), tail, "");
    LLVMValueRef v = emit_instr(g, j);
    LLVMBuildStore(g->b, v, LLVMBuildInBoundsGEP2(g->b, T, g->out, &g->idx, 1, ""));
    loop_close(g, &l, NULL);
    nt_lines(g, j, mid, n_lines);
    LLVMBuildFence(g->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
}

/* Inner reduction j of a block's rows, a lane a row: each lane
 * accumulates its row in column order from the identity, as the loop over
 * the row's columns does. */
static void block_reduce(cg *g, uint32_t j)
{
    const weft__finstr *in = &g->f->ins[j];
    LLVMValueRef acc = red_init(g, in->op, in->in_dt);
    for (g->bc = 0; g->bc < (unsigned)g->wc; g->bc++) {
        body_reset(g);
        acc = red_step(g, in->op, in->in_dt, acc, value_of(g, in->src[0]));
    }
    g->val[j] = red_fin(g, in, acc);
}

/* The rows [r0, r0 + 8 * floor((r1 - r0) / 8)) in blocks of BLOCK_ROWS
 * (block_eligible): ROW values and inner reductions a lane a row, the
 * columns of FULL inputs split out of the block's vectors
 * (split_columns); a FULL value stored row by row, each row one vector.
 * The loop vectorizer would make the same loop from the row loop, with
 * shuffles of whole blocks that cost several times more to compile.
 * Returns the first row left. */
static LLVMValueRef build_blocks(cg *g, const bool *done)
{
    const struct weft__fused *f = g->f;
    LLVMValueRef n_blocks = LLVMBuildSDiv(g->b, LLVMBuildNSWSub(g->b, g->r1, g->r0, ""),
                                          ci(g->i64, BLOCK_ROWS), "");
    loop blocks;
    loop_open(g, &blocks, ci(g->i64, 0), n_blocks, NULL);
    g->blk = LLVMBuildNSWAdd(g->b, g->r0, LLVMBuildNSWMul(g->b, blocks.iv, ci(g->i64, BLOCK_ROWS), ""), "");
    g->vl = BLOCK_ROWS;
    g->lane_rows = true;
    memset(g->colv, 0, sizeof g->colv);
    for (uint32_t e = 0; e < f->n_ext; e++)
        if (f->ext_kind[e] == WEFT__FK_ROW)
            g->ext_val[e] = load_vec(g, f->ext_dt[e], BLOCK_ROWS, g->ext[e], g->blk);
    bool row_done[WEFT__FUSED_MAX_INSTR];
    memcpy(row_done, done, sizeof row_done);
    uint32_t last = f->n_instr - 1;
    for (uint32_t j = 0; j < last; j++) {
        if (f->ins[j].red != WEFT__FRED_INNER)
            continue;
        row_values(g, j, row_done);
        block_reduce(g, j);
        row_done[j] = true;
    }
    row_values(g, last, row_done);
    const weft__finstr *in = &f->ins[last];
    if (in->red == WEFT__FRED_INNER) {
        block_reduce(g, last);
        store_vec(g, in->out_dt, g->val[last], g->out, g->blk);
    } else {
        g->lane_rows = false;
        g->vl = (unsigned)g->wc;
        for (g->bk = 0; g->bk < BLOCK_ROWS; g->bk++) {
            body_reset(g);
            LLVMValueRef row = LLVMBuildNSWAdd(g->b, g->blk, ci(g->i64, g->bk), "");
            store_vec(g, in->out_dt, emit_instr(g, last), g->out, LLVMBuildNSWMul(g->b, row, g->W, ""));
        }
    }
    g->vl = 0;
    loop_close(g, &blocks, NULL);
    weft__jit_count_block_group();
    return LLVMBuildNSWAdd(g->b, g->r0, LLVMBuildNSWMul(g->b, n_blocks, ci(g->i64, BLOCK_ROWS), ""), "");
}

/* Whether f's rows go in blocks (build_blocks): rows of a power of two
 * columns up to BLOCK_MAX_COLS, known at compile time, no outer reduction
 * and no libm call (which has no vector form). */
static bool block_eligible(const struct weft__fused *f, int64_t cols)
{
    if (cols < 2 || cols > BLOCK_MAX_COLS || (cols & (cols - 1)) != 0)
        return false;
    for (uint32_t j = 0; j < f->n_instr; j++) {
        const weft__finstr *in = &f->ins[j];
        if (in->red == WEFT__FRED_OUTER)
            return false;
        if (in->red == WEFT__FRED_NONE && call_of(in->op, in->in_dt))
            return false;
    }
    return true;
}

static void build_body(cg *g)
{
    const struct weft__fused *f = g->f;
    bool done[WEFT__FUSED_MAX_INSTR] = { false };
    /* SCALAR inputs and instructions, once. */
    for (uint32_t e = 0; e < f->n_ext; e++)
        if (f->ext_kind[e] == WEFT__FK_SCALAR)
            g->ext_val[e] = load_at(g, f->ext_dt[e], g->ext[e], ci(g->i64, 0));
    for (uint32_t j = 0; j < f->n_instr; j++) {
        if (f->ins[j].red == WEFT__FRED_NONE && f->ins[j].kind == WEFT__FK_SCALAR) {
            g->val[j] = emit_instr(g, j);
            done[j] = true;
        }
    }
    uint32_t last = f->n_instr - 1;
    if (!g->nested) {
        column_loop(g, last);
        return;
    }
    LLVMValueRef first = g->r0;
    if (g->wc > 0) {
        /* What blocks leave, fewer than BLOCK_ROWS rows, as plain loops:
         * vectorizing them would cost the compile time blocks save. */
        first = build_blocks(g, done);
        g->plain_loops = true;
    }
    loop rows;
    loop_open(g, &rows, first, g->r1, NULL);
    g->r = rows.iv;
    for (uint32_t e = 0; e < f->n_ext; e++)
        if (f->ext_kind[e] == WEFT__FK_ROW)
            g->ext_val[e] = load_at(g, f->ext_dt[e], g->ext[e], g->r);
    bool row_done[WEFT__FUSED_MAX_INSTR];
    memcpy(row_done, done, sizeof row_done);
    for (uint32_t j = 0; j < last; j++) {
        if (f->ins[j].red != WEFT__FRED_INNER)
            continue;
        row_values(g, j, row_done);
        column_loop(g, j);
        row_done[j] = true;
    }
    row_values(g, last, row_done);
    const weft__finstr *in = &f->ins[last];
    if (in->red == WEFT__FRED_INNER) {
        /* The group's value is one per row. */
        column_loop(g, last);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, ty(g, in->out_dt), g->out, &g->r, 1, "");
        LLVMBuildStore(g->b, g->val[last], p);
    } else {
        column_loop(g, last);
    }
    loop_close(g, &rows, NULL);
}

bool weft__codegen_group(LLVMModuleRef m, const struct weft__fused *f, const char *name)
{
    if (!weft__jit_codegen_supports(f))
        return false;
    cg g;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.c = LLVMGetModuleContext(m);
    g.f = f;
    g.i1 = LLVMInt1TypeInContext(g.c);
    g.i8 = LLVMInt8TypeInContext(g.c);
    g.i32 = LLVMInt32TypeInContext(g.c);
    g.i64 = LLVMInt64TypeInContext(g.c);
    g.f32 = LLVMFloatTypeInContext(g.c);
    g.f64 = LLVMDoubleTypeInContext(g.c);
    g.ptr = LLVMPointerTypeInContext(g.c, 0);
    LLVMTypeRef params[5] = { g.ptr, g.ptr, g.i64, g.i64, g.i64 };
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g.c), params, 5, 0);
    g.fn = LLVMAddFunction(m, name, fty);
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(g.fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g.c, nounwind, 0));
    const weft__finstr *last = &f->ins[f->n_instr - 1];
    if (last->red == WEFT__FRED_OUTER) {
        /* The partials are the caller's own buffer, never an input. */
        unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
        LLVMAddAttributeAtIndex(g.fn, 2, LLVMCreateEnumAttribute(g.c, noalias, 0));
    }
    LLVMValueRef ext_arr = LLVMGetParam(g.fn, 0);
    g.out = LLVMGetParam(g.fn, 1);
    g.r0 = LLVMGetParam(g.fn, 2);
    g.r1 = LLVMGetParam(g.fn, 3);
    g.W = LLVMGetParam(g.fn, 4);
    /* Columns known at trace time are a constant: short rows unroll, a
     * single column's loop disappears.  (A launch of this group always has
     * them: the executor checks its inputs against the known dims.) */
    int64_t cols = 1;
    for (int q = f->split; q < f->rank && cols > 0; q++)
        cols = f->dims[q] >= 0 ? cols * f->dims[q] : -1;
    if (cols > 0)
        g.W = ci(g.i64, cols);
    g.wc = cols > 0 && block_eligible(f, cols) ? cols : 0;
    g.b = LLVMCreateBuilderInContext(g.c);
    LLVMPositionBuilderAtEnd(g.b, LLVMAppendBasicBlockInContext(g.c, g.fn, "entry"));
    for (uint32_t e = 0; e < f->n_ext; e++) {
        LLVMValueRef idx = ci(g.i64, e);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g.b, g.ptr, ext_arr, &idx, 1, "");
        g.ext[e] = LLVMBuildLoad2(g.b, g.ptr, p, "");
    }
    /* Flat when nothing varies by row or column alone. */
    g.nested = false;
    for (uint32_t e = 0; e < f->n_ext; e++)
        g.nested = g.nested || f->ext_kind[e] == WEFT__FK_ROW || f->ext_kind[e] == WEFT__FK_COL;
    for (uint32_t j = 0; j < f->n_instr; j++)
        g.nested = g.nested || f->ins[j].red != WEFT__FRED_NONE ||
                   f->ins[j].kind == WEFT__FK_ROW || f->ins[j].kind == WEFT__FK_COL;
    g.nt = !g.nested && large_output(f);
    if (g.nt)
        weft__jit_count_nt_group();
    build_body(&g);
    LLVMBuildRetVoid(g.b);
    LLVMDisposeBuilder(g.b);
    return true;
}
