/* The dtype classes of the elementwise ops (see ew_rules.h).  Bool takes
 * only logic: comparisons, minimum and maximum (and, or), where, cast and
 * the logical ops.  Arithmetic on bool is refused rather than given a
 * meaning, because Python (True + True is 2) and NumPy (True + True is
 * True) disagree on it and TensorFlow refuses it. */
#include "runtime/iface.h"
#include "trace/ew_rules.h"
#include "trace/tensor_impl.h"

weft__ew_class weft__ew_class_of(weft__op op)
{
    switch (op) {
    case WEFT__OP_ADD: case WEFT__OP_SUB: case WEFT__OP_MUL: case WEFT__OP_DIV:
    case WEFT__OP_MOD: case WEFT__OP_POW: case WEFT__OP_FLOORDIV:
    case WEFT__OP_TRUNCATEDIV: case WEFT__OP_TRUNCATEMOD:
    case WEFT__OP_NEG: case WEFT__OP_ABS: case WEFT__OP_RELU: case WEFT__OP_FLOOR:
    case WEFT__OP_CEIL: case WEFT__OP_ROUND: case WEFT__OP_SQUARE: case WEFT__OP_SIGN:
        return WEFT__EW_NUMERIC;
    case WEFT__OP_SQRT: case WEFT__OP_EXP: case WEFT__OP_LOG: case WEFT__OP_TANH:
    case WEFT__OP_SIGMOID: case WEFT__OP_SIN: case WEFT__OP_COS: case WEFT__OP_RSQRT:
    case WEFT__OP_LOG1P: case WEFT__OP_EXPM1: case WEFT__OP_TRUEDIV:
    case WEFT__OP_ERF: case WEFT__OP_ERFC: case WEFT__OP_TAN: case WEFT__OP_ASIN:
    case WEFT__OP_ACOS: case WEFT__OP_ATAN: case WEFT__OP_SINH: case WEFT__OP_COSH:
    case WEFT__OP_ATAN2: case WEFT__OP_ASINH: case WEFT__OP_ACOSH: case WEFT__OP_ATANH:
    case WEFT__OP_LGAMMA: case WEFT__OP_DIGAMMA: case WEFT__OP_ERFINV: case WEFT__OP_NDTRI:
    case WEFT__OP_BESSEL_I0: case WEFT__OP_BESSEL_I0E: case WEFT__OP_BESSEL_I1:
    case WEFT__OP_BESSEL_I1E: case WEFT__OP_BESSEL_J0: case WEFT__OP_BESSEL_J1:
    case WEFT__OP_BESSEL_Y0: case WEFT__OP_BESSEL_Y1: case WEFT__OP_BESSEL_K0:
    case WEFT__OP_BESSEL_K0E: case WEFT__OP_BESSEL_K1: case WEFT__OP_BESSEL_K1E:
    case WEFT__OP_IGAMMA: case WEFT__OP_IGAMMAC: case WEFT__OP_ZETA: case WEFT__OP_POLYGAMMA:
    case WEFT__OP_NEXTAFTER: case WEFT__OP_EXPINT: case WEFT__OP_DAWSN: case WEFT__OP_SPENCE:
    case WEFT__OP_FRESNEL_COS: case WEFT__OP_FRESNEL_SIN: case WEFT__OP_BETAINC:
    case WEFT__OP_LOG2: case WEFT__OP_LOG10: case WEFT__OP_EXP2: case WEFT__OP_CBRT:
    case WEFT__OP_HYPOT: case WEFT__OP_COPYSIGN: case WEFT__OP_LDEXP: case WEFT__OP_IGAMMA_GRAD_A:
    case WEFT__OP_RANDOM_GAMMA_GRAD:
        return WEFT__EW_FLOAT;
    case WEFT__OP_IS_NAN: case WEFT__OP_IS_INF: case WEFT__OP_IS_FINITE:
        return WEFT__EW_TEST;
    case WEFT__OP_LOGICAL_NOT: case WEFT__OP_LOGICAL_AND: case WEFT__OP_LOGICAL_OR:
        return WEFT__EW_LOGICAL;
    case WEFT__OP_BITWISE_AND: case WEFT__OP_BITWISE_OR: case WEFT__OP_BITWISE_XOR:
    case WEFT__OP_LEFT_SHIFT: case WEFT__OP_RIGHT_SHIFT: case WEFT__OP_INVERT:
    case WEFT__OP_GCD: case WEFT__OP_LCM:
        return WEFT__EW_INTEGER;
    default:
        return WEFT__EW_ANY;
    }
}

int weft__ew_check(const weft__node *n, const weft_spec *in)
{
    weft_dtype dt = in[0].dtype;
    const char *why = NULL;
    switch (weft__ew_class_of(n->op)) {
    case WEFT__EW_NUMERIC: case WEFT__EW_TEST:
        if (dt == WEFT_BOOL)
            why = n->n_in == 1 ? "is bool (cast it to a number type)"
                               : "are bool (cast them to a number type)";
        break;
    case WEFT__EW_FLOAT:
        if (dt != WEFT_F32 && dt != WEFT_F64)
            why = n->n_in == 1 ? "is not a float tensor" : "are not float tensors";
        break;
    case WEFT__EW_LOGICAL:
        if (dt != WEFT_BOOL)
            why = n->n_in == 1 ? "is not bool" : "are not bool";
        break;
    case WEFT__EW_INTEGER:
        if (dt != WEFT_I32 && dt != WEFT_I64)
            why = n->n_in == 1 ? "is not an integer tensor (i32 or i64)"
                               : "are not integer tensors (i32 or i64)";
        break;
    case WEFT__EW_ANY:
        break;
    }
    if (!why)
        return 0;
    char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    if (n->n_in == 1)
        return weft__errorf(WEFT_EDTYPE, "weft_%s: %s %s", weft__op_name(n->op),
                            weft__spec_str(&in[0], sa, sizeof sa), why);
    return weft__errorf(WEFT_EDTYPE, "weft_%s: %s and %s %s", weft__op_name(n->op),
                        weft__spec_str(&in[0], sa, sizeof sa),
                        weft__spec_str(&in[1], sb, sizeof sb), why);
}
