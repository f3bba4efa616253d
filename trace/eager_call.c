/* Running a body eagerly: every op computes at once, the outputs are kept. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"

/* The value of argument i: the tensor itself, or a static scalar as a weak
 * constant (readable with weft_value_static_i64/f64). */
static weft_value *arg_value(weft_ctx *cx, const weft_arg *a)
{
    if (a->kind == WEFT_ARG_TENSOR)
        return weft_eager_value(cx, a->u.tensor);
    weft_tensor *t;
    int rc = a->kind == WEFT_ARG_I64 ? weft_tensor_create(WEFT_I64, 0, NULL, &a->u.i64, &t)
                                     : weft_tensor_create(WEFT_F64, 0, NULL, &a->u.f64, &t);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    weft_value *v = weft__ctx_wrap_const(cx, t);
    if (v)
        weft__value_set_weak(v);   /* as when traced (trace_body.c) */
    return v;
}

int weft__eager_call(weft_runtime *rt, const char *name, weft_body_fn body, void *user,
                     const weft_arg *args, size_t n_args, weft_tensor **outs, size_t n_outs)
{
    weft_ctx *cx = NULL;
    weft_value **argv = NULL, **outv = NULL;
    int rc;
    if (!name)
        name = "fn";
    if (!body || (n_args && !args) || (n_outs && !outs))
        return weft__errorf(WEFT_EINVAL, "%s: invalid eager call", name);
    for (size_t i = 0; i < n_outs; i++)
        outs[i] = NULL;
    for (size_t i = 0; i < n_args; i++) {
        const weft_arg *a = &args[i];
        if (a->kind != WEFT_ARG_TENSOR && a->kind != WEFT_ARG_I64 && a->kind != WEFT_ARG_F64)
            return weft__errorf(WEFT_EINVAL, "%s: argument %zu has an unknown kind %d", name, i,
                                (int)a->kind);
        if (a->kind == WEFT_ARG_TENSOR && !a->u.tensor)
            return weft__errorf(WEFT_EINVAL, "%s: argument %zu is a NULL tensor", name, i);
    }
    rc = weft__ctx_new(rt, NULL, name, &cx);
    if (rc < 0)
        return rc;
    argv = weft__calloc(n_args ? n_args : 1, sizeof *argv);
    outv = weft__calloc(n_outs ? n_outs : 1, sizeof *outv);
    if (!argv || !outv) {
        rc = weft__errorf(WEFT_ENOMEM, "%s: out of memory starting an eager call", name);
        goto error;
    }
    for (size_t i = 0; i < n_args; i++) {
        argv[i] = arg_value(cx, &args[i]);
        if (!argv[i])
            goto sticky;
    }
    rc = weft__ctx_call_body(cx, name, body, user, argv, outv, n_outs);
    if (rc < 0)
        goto error;
    for (size_t i = 0; i < n_outs; i++)
        outs[i] = weft_tensor_retain(weft_value_tensor(outv[i]));
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
