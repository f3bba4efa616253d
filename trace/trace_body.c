/* Running a body once in tracing mode: one leaf node per argument, then
 * whatever the body records, then the outputs. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/tensor_impl.h"

static bool targ_valid(const weft__targ *a)
{
    if (a->kind == WEFT_ARG_I64 || a->kind == WEFT_ARG_F64)
        return true;
    if (a->kind != WEFT_ARG_TENSOR || weft_dtype_size(a->spec.dtype) == 0)
        return false;
    if (a->spec.rank == WEFT_RANK_ANY)
        return true;
    if (a->spec.rank < 0 || a->spec.rank > WEFT_MAX_RANK)
        return false;
    for (int i = 0; i < a->spec.rank; i++)
        if (a->spec.dims[i] < WEFT_DIM_ANY)
            return false;
    return true;
}

/* The leaf value of argument i: an ARG node, or a static scalar's (weak)
 * CONST. */
static weft_value *arg_value(weft_ctx *cx, const weft__targ *a, uint32_t i)
{
    weft__node n = { .op = WEFT__OP_ARG, .after = WEFT__NO_NODE };
    if (a->kind == WEFT_ARG_TENSOR) {
        n.spec = a->spec;
        n.attr.arg.index = i;
        return weft__ctx_record(cx, &n, NULL, 0);
    }
    weft_tensor *t;
    int rc = a->kind == WEFT_ARG_I64 ? weft_tensor_create(WEFT_I64, 0, NULL, &a->i64, &t)
                                     : weft_tensor_create(WEFT_F64, 0, NULL, &a->f64, &t);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    n.op = WEFT__OP_CONST;
    n.flags = WEFT__NODE_STATIC;
    n.attr.constant.value = t;
    weft__tensor_spec(t, &n.spec);
    /* A static scalar is weak, as a Python number passed to tf.function is. */
    weft_value *v = weft__ctx_record(cx, &n, NULL, 0);
    if (v)
        weft__value_set_weak(v);
    return v;
}

int weft__trace_body(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                     const weft__targ *args, size_t n_args, size_t n_outs, weft__graph *out)
{
    weft_ctx *cx = NULL;
    weft_value **argv = NULL, **outv = NULL;
    if (!name)
        name = "fn";
    int rc = weft__graph_init(out, (uint32_t)n_args);
    if (rc < 0)
        return rc;
    if (!body || (n_args && !args) || n_args >= UINT32_MAX || n_outs >= UINT32_MAX)
        return weft__errorf(WEFT_EINVAL, "%s: invalid trace request", name);
    for (size_t i = 0; i < n_args; i++)
        if (!targ_valid(&args[i]))
            return weft__errorf(WEFT_EINVAL, "%s: argument %zu has an invalid spec", name, i);
    rc = weft__ctx_new(rt, out, name, &cx);
    if (rc < 0)
        return rc;
    argv = weft__calloc(n_args ? n_args : 1, sizeof *argv);
    outv = weft__calloc(n_outs ? n_outs : 1, sizeof *outv);
    out->outs = weft__calloc(n_outs ? n_outs : 1, sizeof *out->outs);
    if (!argv || !outv || !out->outs) {
        rc = weft__errorf(WEFT_ENOMEM, "%s: out of memory starting a trace", name);
        goto error;
    }
    for (size_t i = 0; i < n_args; i++) {
        argv[i] = arg_value(cx, &args[i], (uint32_t)i);
        if (!argv[i])
            goto sticky;
    }
    rc = weft__ctx_call_body(cx, name, body, user, argv, outv, n_outs);
    if (rc < 0)
        goto error;
    for (size_t i = 0; i < n_outs; i++)
        out->outs[i] = weft__value_node(outv[i]);
    out->n_outs = (uint32_t)n_outs;
    rc = 0;
    goto done;
sticky:
    rc = weft_ctx_status(cx);
    weft__errorf(rc, "%s", weft__ctx_errmsg(cx));
error:
done:
    weft__free(argv);
    weft__free(outv);
    weft__ctx_free(cx);
    return rc;
}
