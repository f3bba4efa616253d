/* CONTROL nodes (cond, switch_case, while, map_ex, host_call_ex, scan):
 * their attribute, recording one with its RESULT nodes or running it
 * eagerly, dispatching a run, and their op-listing text.  Plus the
 * helpers the ops that return an int share. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/tensor_impl.h"

struct weft__multi *weft__multi_new(uint32_t n_outs)
{
    struct weft__multi *m = weft__calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->outs = weft__calloc(n_outs ? n_outs : 1, sizeof *m->outs);
    if (!m->outs) {
        weft__free(m);
        return NULL;
    }
    m->n_outs = n_outs;
    return m;
}

int weft__multi_branches(struct weft__multi *m, uint32_t n)
{
    m->branch_fn = weft__calloc(n, sizeof *m->branch_fn);
    m->branch_concrete = weft__calloc(n, sizeof *m->branch_concrete);
    if (!m->branch_fn || !m->branch_concrete)
        return WEFT_ENOMEM;
    m->n_branches = n;
    return 0;
}

void weft__multi_free(struct weft__multi *m)
{
    if (!m)
        return;
    for (int k = 0; k < 2; k++)
        if (m->concrete[k])
            weft__callee_of(m->fn[k])->ops->release(m->concrete[k]);
    for (uint32_t b = 0; b < m->n_branches; b++)
        if (m->branch_concrete[b])
            weft__callee_of(m->branch_fn[b])->ops->release(m->branch_concrete[b]);
    weft__program_free(m->vjp);
    weft__free(m->branch_fn);
    weft__free(m->branch_concrete);
    weft__free(m->outs);
    weft__free(m);
}

const char *weft__fn_name(const weft_function *fn)
{
    weft__callee_info info;
    weft__callee_of(fn)->ops->describe(fn, &info);
    return info.name;
}

int weft__ctx_failf(weft_ctx *cx, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    weft__ctx_fail(cx, code, "%s", msg);
    return weft_ctx_status(cx);
}

int weft__ctx_enter_int(weft_ctx *cx, const char *who, weft_value *const *in, size_t n_in,
                        weft_value **outs, size_t n_outs)
{
    if (!cx)
        return weft__errorf(WEFT_EINVAL, "%s: NULL context", who);
    if (outs)
        for (size_t k = 0; k < n_outs; k++)
            outs[k] = NULL;
    int st = weft_ctx_status(cx);
    if (st != 0)
        return weft__errorf(st, "%s", weft__ctx_errmsg(cx));
    if (!outs && n_outs)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: outs is NULL but n_outs is %zu", who, n_outs);
    if (!in && n_in)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: the inputs are NULL but their count is %zu",
                               who, n_in);
    if (n_in > UINT32_MAX / 4 || n_outs > UINT32_MAX / 4)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %zu inputs and %zu outputs are too many",
                               who, n_in, n_outs);
    if (!weft__ctx_check_inputs(cx, who, in, n_in))
        return weft_ctx_status(cx);
    return 0;
}

int weft__check_fn_captures(weft_ctx *cx, const char *who, const weft_function *fn,
                            weft_value *const *captures, size_t n_captures)
{
    if (!captures && n_captures)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: captures is NULL but n_captures is %zu",
                               who, n_captures);
    if (n_captures > UINT32_MAX / 4 || !weft__ctx_check_inputs(cx, who, captures, n_captures))
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: bad captures", who);
    if (!fn)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: fn is NULL", who);
    return 0;
}

void weft__release_tensors(weft_tensor **ts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        weft_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

bool weft__spec_compatible(const weft_spec *a, const weft_spec *b)
{
    if (a->dtype != b->dtype)
        return false;
    if (a->rank == WEFT_RANK_ANY || b->rank == WEFT_RANK_ANY)
        return true;
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != WEFT_DIM_ANY && b->dims[d] != WEFT_DIM_ANY && a->dims[d] != b->dims[d])
            return false;
    return true;
}

/* Tracing: the CONTROL node, then a RESULT node per result. */
static int record(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in,
                  weft_value **outs)
{
    const struct weft__multi *m = n->attr.multi.m;
    uint32_t n_outs = m->n_outs;
    /* The graph owns m from here on, also on failure. */
    weft_value *v = weft__ctx_record(cx, n, in, n_in);
    if (!v)
        return weft_ctx_status(cx);
    for (uint32_t k = 0; k < n_outs; k++) {
        weft__node r;
        memset(&r, 0, sizeof r);
        r.op = WEFT__OP_RESULT;
        r.after = WEFT__NO_NODE;
        r.spec = m->outs[k];
        r.attr.result.index = k;
        outs[k] = weft__ctx_record(cx, &r, &v, 1);
        if (!outs[k])
            return weft_ctx_status(cx);
    }
    return 0;
}

/* Eager: runs the node at once and wraps its results. */
static int compute(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in,
                   weft_value **outs)
{
    struct weft__multi *m = n->attr.multi.m;
    weft_tensor *stack_in[8], *stack_out[8];
    weft_tensor **tin = n_in > 8 ? weft__malloc(n_in * sizeof *tin) : stack_in;
    weft_tensor **tout = m->n_outs > 8 ? weft__calloc(m->n_outs, sizeof *tout) : stack_out;
    int rc;
    if (!tin || !tout) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
        goto done;
    }
    for (uint32_t i = 0; i < n_in; i++)
        tin[i] = weft__value_tensor(in[i]);
    n->n_in = n_in;
    rc = weft__multi_run(weft__ctx_runtime(cx), n, tin, tout);
    if (rc < 0) {
        weft__ctx_fail_errmsg(cx, rc);
        rc = weft_ctx_status(cx);
        goto done;
    }
    /* Each wrap takes over its tensor, also when it fails. */
    for (uint32_t k = 0; k < m->n_outs; k++) {
        outs[k] = weft__ctx_wrap(cx, tout[k]);
        tout[k] = NULL;
        if (!outs[k]) {
            for (uint32_t j = k + 1; j < m->n_outs; j++)
                weft_tensor_release(tout[j]);
            rc = weft_ctx_status(cx);
            goto done;
        }
    }
    rc = 0;
done:
    if (tin != stack_in)
        weft__free(tin);
    if (tout != stack_out)
        weft__free(tout);
    weft__multi_free(m);
    n->attr.multi.m = NULL;
    return rc;
}

int weft__multi_emit(weft_ctx *cx, weft__node *n, weft_value *const *in, uint32_t n_in,
                     weft_value **outs)
{
    uint32_t n_outs = n->attr.multi.m->n_outs;   /* m may be gone after a failure */
    int rc = weft__ctx_is_eager(cx) ? compute(cx, n, in, n_in, outs)
                                     : record(cx, n, in, n_in, outs);
    if (rc < 0)
        for (uint32_t k = 0; k < n_outs; k++)
            outs[k] = NULL;
    return rc;
}

int weft__multi_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                    weft_tensor **outs)
{
    const struct weft__multi *m = n->attr.multi.m;
    for (uint32_t k = 0; k < m->n_outs; k++)
        outs[k] = NULL;
    switch (n->op) {
    case WEFT__OP_COND:    return weft__cond_run(rt, n, in, outs);
    case WEFT__OP_WHILE:   return weft__while_run(rt, n, in, outs);
    case WEFT__OP_MAP_EX:  return weft__map_ex_run(rt, n, in, outs);
    case WEFT__OP_HOST_EX: return weft__host_ex_run(rt, n, in, outs);
    case WEFT__OP_SCAN:    return weft__scan_run(rt, n, in, outs);
    case WEFT__OP_CASE:    return weft__case_run(rt, n, in, outs);
    case WEFT__OP_WHILE_VJP: return weft__while_vjp_run(rt, n, in, outs);
    case WEFT__OP_SCAN_VJP: return weft__scan_vjp_run(rt, n, in, outs);
    case WEFT__OP_MAP_VJP:  return weft__map_vjp_run(rt, n, in, outs);
    default:
        return weft__errorf(WEFT_EINVAL, "weft_%s: not a control op", weft__op_name(n->op));
    }
}

void weft__multi_print_attrs(const weft__node *n, FILE *f)
{
    if (n->op == WEFT__OP_RESULT) {
        fprintf(f, "<%" PRIu32 ">", n->attr.result.index);
        return;
    }
    const struct weft__multi *m = n->attr.multi.m;
    switch (n->op) {
    case WEFT__OP_COND: case WEFT__OP_WHILE: case WEFT__OP_WHILE_VJP:
        fprintf(f, "<%s,%s>", weft__fn_name(m->fn[0]), weft__fn_name(m->fn[1]));
        break;
    case WEFT__OP_MAP_VJP: case WEFT__OP_MAP_EX:
        fprintf(f, "<%s,mapped=%" PRIu32 ",pi=%u>", weft__fn_name(m->fn[0]), m->n_mapped,
                m->parallel_iterations);
        break;
    case WEFT__OP_CASE:
        for (uint32_t b = 0; b < m->n_branches; b++)
            fprintf(f, "%c%s", b ? ',' : '<', weft__fn_name(m->branch_fn[b]));
        fputc('>', f);
        break;
    case WEFT__OP_SCAN: case WEFT__OP_SCAN_VJP:
        fprintf(f, "<%s,elems=%" PRIu32 "%s%s%s>", weft__fn_name(m->fn[0]), m->n_mapped,
                m->scan_mode & WEFT__SCAN_FOLD ? ",fold" : "",
                m->scan_mode & WEFT__SCAN_REVERSE ? ",reverse" : "",
                m->scan_mode & WEFT__SCAN_NO_INIT ? ",from_rows" : "");
        break;
    default:
        break;
    }
}

void weft__multi_print_specs(const weft__node *n, FILE *f)
{
    const struct weft__multi *m = n->attr.multi.m;
    fputc('(', f);
    for (uint32_t k = 0; k < m->n_outs; k++) {
        char sb[WEFT__SPEC_STR_MAX];
        fprintf(f, "%s%s", k ? ", " : "", weft__spec_str(&m->outs[k], sb, sizeof sb));
    }
    fputc(')', f);
}
