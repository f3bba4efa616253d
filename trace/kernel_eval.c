/* Computing single nodes on concrete tensors (weft__kernel_eval): the
 * entry points and the leaf ops.  The kernels live beside this file:
 * elementwise with broadcasting (kernel_bcast.c), reductions
 * (kernel_reduce.c), matrix products (kernel_matmul.c), and the chunking
 * they share (kernel_chunks.c). */
#include <assert.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

/* ---- Leaves ---------------------------------------------------------- */

static void eval_fill(const weft__node *n, weft_tensor *out)
{
    double v = n->attr.fill.value;
    const void *src[1] = {&v};
    const unsigned char step[1] = {0};
    weft__ew_block(WEFT__OP_CAST, WEFT_F64, out->dtype, src, step, weft__tensor_mut(out),
                   (size_t)out->numel);
}

static void eval_range(const weft__node *n, weft_tensor *out)
{
    uint64_t start = (uint64_t)n->attr.range.start, delta = (uint64_t)n->attr.range.delta;
    char *dst = weft__tensor_mut(out);
    size_t esize = weft_dtype_size(out->dtype);
    int64_t buf[256];
    const void *src[1] = {buf};
    const unsigned char step[1] = {1};
    for (int64_t i0 = 0; i0 < out->numel; i0 += 256) {
        int64_t cnt = out->numel - i0 < 256 ? out->numel - i0 : 256;
        /* Every value lies between start and limit, so it fits in int64;
         * the unsigned arithmetic only avoids overflow in i * delta. */
        for (int64_t i = 0; i < cnt; i++)
            buf[i] = (int64_t)(start + (uint64_t)(i0 + i) * delta);
        weft__ew_block(WEFT__OP_CAST, WEFT_I64, out->dtype, src, step, dst + (size_t)i0 * esize,
                       (size_t)cnt);
    }
}

/* ---- Entry ----------------------------------------------------------- */

int weft__kernel_eval_into(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                           weft_tensor *out)
{
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_LEAF:
        if (n->op == WEFT__OP_FILL)
            eval_fill(n, out);
        else if (n->op == WEFT__OP_RANGE)
            eval_range(n, out);
        else
            return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op",
                                weft__op_name(n->op));
        return 0;
    case WEFT__KIND_UNARY:
    case WEFT__KIND_BINARY:
    case WEFT__KIND_TERNARY:
    case WEFT__KIND_CAST:
        return weft__eval_elementwise(rt, n, in, out);
    case WEFT__KIND_REDUCE:
        return weft__eval_reduce(rt, n, in[0], out);
    case WEFT__KIND_SHAPE:
        /* In place (the executor handed the input's own buffer): nothing
         * to move. */
        if (out->nbytes && out->data != in[0]->data)
            memcpy(weft__tensor_mut(out), weft_tensor_data(in[0]), out->nbytes);
        return 0;
    case WEFT__KIND_MATMUL:
        return weft__eval_matmul(rt, n, in[0], in[1], out);
    case WEFT__KIND_ARRAY:
        return weft__eval_shape_op(rt, n, in, out);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    }
}

/* The checks of both entries below, before any spec is looked at. */
static int check_node(const weft__node *n, weft_tensor *const *in, weft_tensor **out)
{
    if (!n || !out || (n->n_in > 0 && !in))
        return weft__errorf(WEFT_EINVAL, "weft__kernel_eval: NULL argument");
    *out = NULL;
    if ((unsigned)n->op >= (unsigned)WEFT__OP_COUNT)
        return weft__errorf(WEFT_EINVAL, "weft__kernel_eval: invalid op %d", (int)n->op);
    if (n->op == WEFT__OP_ARG)
        return weft__errorf(WEFT_EINVAL, "weft_arg: an argument has no kernel");
    for (uint32_t i = 0; i < n->n_in; i++)
        if (!in[i])
            return weft__errorf(WEFT_EINVAL, "weft_%s: input %u is NULL", weft__op_name(n->op),
                                (unsigned)i);
    return 0;
}

/* n's output spec inferred from its concrete inputs. */
static int infer_concrete(const weft__node *n, weft_tensor *const *in, weft_spec *os)
{
    /* concat and stack take any number of inputs. */
    weft_spec specs_s[3] = { { 0 } }, *specs = specs_s;
    if (n->n_in > 3 && !(specs = weft__malloc(sizeof *specs * n->n_in)))
        return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
    for (uint32_t i = 0; i < n->n_in; i++)
        weft__tensor_spec(in[i], &specs[i]);
    int rc = weft__infer_spec(n, specs, os);
    if (specs != specs_s)
        weft__free(specs);
    return rc;
}

/* Computes n, whose output spec for these inputs is *os, into a new tensor. */
static int eval_spec(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                     const weft_spec *os, weft_tensor **out)
{
    if (n->op == WEFT__OP_CONST) {
        *out = weft_tensor_retain(n->attr.constant.value);
        return 0;
    }
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_MAP:
    case WEFT__KIND_HOST:
    case WEFT__KIND_FUSED:
        return weft__errorf(WEFT_EINVAL, "weft_%s: no kernel for this op", weft__op_name(n->op));
    default:
        break;
    }
    if (weft__op_shape_from_values(n->op))
        return weft__eval_from_values(rt, n, in, out);
    weft_tensor *t = NULL;
    int rc = weft__tensor_new_spec(os, &t);
    if (rc < 0)
        return rc;
    rc = weft__kernel_eval_into(rt, n, in, t);
    if (rc < 0) {
        weft_tensor_release(t);
        return rc;
    }
    *out = t;
    return 0;
}

int weft__kernel_eval(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor **out)
{
    int rc = check_node(n, in, out);
    weft_spec os;
    if (rc == 0)
        rc = infer_concrete(n, in, &os);
    return rc < 0 ? rc : eval_spec(rt, n, in, &os, out);
}

int weft__kernel_eval_known(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                            weft_tensor **out)
{
    int rc = check_node(n, in, out);
    if (rc < 0)
        return rc;
    weft_spec os;
    if (!weft__spec_is_concrete(&n->spec)) {
        rc = infer_concrete(n, in, &os);
        return rc < 0 ? rc : eval_spec(rt, n, in, &os, out);
    }
#ifdef WEFT_SELF_CHECKS
    /* The caller's promise, checked in the builds the tests run. */
    rc = infer_concrete(n, in, &os);
    if (rc < 0)   /* out of memory for concat's specs: the check cannot run */
        return rc;
    assert(weft__spec_equal(&os, &n->spec));
#endif
    return eval_spec(rt, n, in, &n->spec, out);
}

