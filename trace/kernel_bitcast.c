/* bitcast (tf.bitcast): the input's bytes read as another dtype.  Equal
 * sizes keep the shape; an 8-byte dtype read as a 4-byte one gains a last
 * dim of 2 (the lower-addressed half first, so the low word on x86-64); a
 * 4-byte dtype read as an 8-byte one loses its last dim, which must be 2.
 * Tensors are contiguous, so the kernel is one copy. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

int weft__infer_bitcast(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_bitcast";
    char s[WEFT__SPEC_STR_MAX];
    weft_dtype to = n->attr.cast.to;
    if (in->dtype == WEFT_BOOL || to == WEFT_BOOL)
        return weft__errorf(WEFT_EDTYPE, "%s: %s to %s: bool has no bit pattern to share", fn,
                            weft__spec_str(in, s, sizeof s), weft_dtype_name(to));
    size_t from_size = weft_dtype_size(in->dtype), to_size = weft_dtype_size(to);
    *out = *in;
    out->dtype = to;
    if (in->rank == WEFT_RANK_ANY || from_size == to_size)
        return 0;
    if (from_size > to_size) {
        if (in->rank == WEFT_MAX_RANK)
            return weft__errorf(WEFT_ESHAPE, "%s: %s to %s would pass rank %d", fn,
                                weft__spec_str(in, s, sizeof s), weft_dtype_name(to),
                                WEFT_MAX_RANK);
        out->dims[out->rank++] = (int64_t)(from_size / to_size);
        return 0;
    }
    int64_t ratio = (int64_t)(to_size / from_size);
    if (in->rank == 0 || (in->dims[in->rank - 1] != ratio && in->dims[in->rank - 1] >= 0))
        return weft__errorf(WEFT_ESHAPE, "%s: %s to %s needs a last dim of %lld", fn,
                            weft__spec_str(in, s, sizeof s), weft_dtype_name(to),
                            (long long)ratio);
    out->rank--;
    return 0;
}

int weft__eval_bitcast(const weft_tensor *a, weft_tensor *out)
{
    if (a->nbytes)
        memcpy(weft__tensor_mut(out), a->data, a->nbytes);
    return 0;
}
