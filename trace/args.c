/* Constructors of call arguments. */
#include <weft.h>

weft_arg weft_arg_tensor(weft_tensor *t)
{
    return (weft_arg){ .kind = WEFT_ARG_TENSOR, .u.tensor = t };
}

weft_arg weft_arg_i64(int64_t v)
{
    return (weft_arg){ .kind = WEFT_ARG_I64, .u.i64 = v };
}

weft_arg weft_arg_f64(double v)
{
    return (weft_arg){ .kind = WEFT_ARG_F64, .u.f64 = v };
}
