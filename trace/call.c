/* weft_call: one weft function calling another.  The callee's body runs on
 * the caller's context, so while tracing its ops land in the caller's op
 * list (the compiler then works across the call, and a run of the caller
 * looks nothing up), and eagerly they compute at once.  The context's name
 * becomes "caller/callee" meanwhile, so that an error names both. */
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/tensor_impl.h"

/* Deeper nesting is taken for a recursion that never ends (the C stack
 * would run out first). */
#define MAX_CALL_DEPTH 64

static _Thread_local unsigned call_depth;

/* "outer/inner" into buf, cut to fit; without printf, which would cost
 * more than a small eager body (this runs for every call). */
static void join_names(char *buf, size_t size, const char *outer, const char *inner)
{
    size_t a = strnlen(outer, size - 1), b = strnlen(inner, size - 1);
    if (a + 1 + b >= size)
        b = a + 1 < size ? size - 2 - a : 0;
    memcpy(buf, outer, a);
    size_t at = a;
    if (at + 1 < size) {
        buf[at++] = '/';
        memcpy(buf + at, inner, b);
        at += b;
    }
    buf[at < size ? at : size - 1] = '\0';
}

/* Checks args against fn's counts and input signature. */
static int check_call(weft_ctx *cx, const char *who, const weft__callee_info *info,
                      weft_value *const *args, size_t n_args, size_t n_outs)
{
    if (n_args != info->n_args || n_outs != info->n_outs)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: '%s' takes %zu args and returns %zu outputs; "
                               "it is given %zu and must return %zu", who, info->name,
                               info->n_args, info->n_outs, n_args, n_outs);
    for (size_t i = 0; info->input_signature && i < n_args; i++) {
        const weft_spec *want = &info->input_signature[i], *got = weft__value_spec(args[i]);
        if (!weft__spec_compatible(want, got)) {
            char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
            return weft__ctx_failf(cx, WEFT_ESIGNATURE, "%s(%s): arg %zu: expected %s, got %s", who,
                                   info->name, i, weft__spec_str(want, a, sizeof a),
                                   weft__spec_str(got, b, sizeof b));
        }
    }
    if (call_depth >= MAX_CALL_DEPTH)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s(%s): calls nested more than %d deep (a "
                               "recursion that does not end?)", who, info->name, MAX_CALL_DEPTH);
    return 0;
}

int weft__call_inline(weft_ctx *cx, const char *who, weft_function *fn,
                      weft_value *const *args, size_t n_args, weft_value **outs, size_t n_outs)
{
    weft__callee_info info;
    weft__callee_of(fn)->ops->describe(fn, &info);
    int rc = check_call(cx, who, &info, args, n_args, n_outs);
    if (rc < 0)
        return rc;
    weft_value *stack_out[16];
    weft_value **tmp = n_outs > 16 ? weft__calloc(n_outs, sizeof *tmp) : stack_out;
    if (!tmp)
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s(%s): out of memory", who, info.name);
    const char *outer = weft__ctx_name(cx);
    char name[160];
    join_names(name, sizeof name, outer ? outer : "weft", info.name);
    weft__ctx_set_name(cx, name);
    call_depth++;
    rc = weft__ctx_call_body(cx, name, info.body, info.user, args, tmp, n_outs);
    call_depth--;
    /* A body that failed without an op's error leaves only the thread's
     * message: the context keeps it (under the callee's name). */
    if (rc < 0 && weft_ctx_status(cx) == 0)
        weft__ctx_fail_errmsg(cx, rc);
    weft__ctx_set_name(cx, outer);
    if (rc == 0 && n_outs)
        memcpy(outs, tmp, n_outs * sizeof *outs);
    else
        rc = weft_ctx_status(cx);
    if (tmp != stack_out)
        weft__free(tmp);
    return rc;
}

int weft_call(weft_ctx *cx, weft_function *g, weft_value *const *args, size_t n_args,
              weft_value **outs, size_t n_outs)
{
    int rc = weft__ctx_enter_int(cx, "weft_call", args, n_args, outs, n_outs);
    if (rc < 0)
        return rc;
    if (!g)
        return weft__ctx_failf(cx, WEFT_EINVAL, "weft_call: g is NULL");
    return weft__call_inline(cx, "weft_call", g, args, n_args, outs, n_outs);
}
