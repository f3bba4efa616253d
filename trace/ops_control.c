/* weft_cond, weft_switch_case and weft_while_loop.  Eagerly they are C
 * control flow over weft_call-style calls of the functions' bodies.  While
 * tracing, the functions are resolved through their caches for the specs
 * of the values passed, and one COND, CASE or WHILE node runs their
 * concrete functions: the chosen branch, or the loop, inside the caller's
 * program. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#define STACK_VALUES 16

/* The specs of vs[0..n) into a new array (n may be 0), or NULL. */
static weft_spec *specs_of(weft_value *const *vs, size_t n)
{
    weft_spec *s = weft__malloc((n ? n : 1) * sizeof *s);
    for (size_t i = 0; s && i < n; i++)
        s[i] = *weft__value_spec(vs[i]);
    return s;
}

int weft__multi_resolve(weft_ctx *cx, const char *who, const char *role, weft_function *fn,
                        const weft_spec *args, size_t n_args, size_t n_outs,
                        struct weft__multi *m, int k, weft_spec *out)
{
    const weft__callee_ops *ops = weft__callee_of(fn)->ops;
    m->fn[k] = fn;
    int rc = ops->resolve_n(fn, who, args, n_args, n_outs, &m->concrete[k], out);
    if (rc < 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", weft_errmsg());
        return weft__ctx_failf(cx, rc, "%s: %s: %s", who, role, msg);
    }
    return 0;
}

bool weft__multi_side_effects(const struct weft__multi *m)
{
    bool any = false;
    for (int k = 0; k < 2; k++) {
        const weft__callee_ops *ops = m->fn[k] ? weft__callee_of(m->fn[k])->ops : NULL;
        any |= ops && ops->side_effects && ops->side_effects(m->concrete[k]);
    }
    return any;
}

/* Whether s is a bool[] (or a bool of a rank unknown while tracing). */
static bool is_bool_scalar(const weft_spec *s)
{
    return s->dtype == WEFT_BOOL && (s->rank == 0 || s->rank == WEFT_RANK_ANY);
}

int weft__control_truth(const char *who, const char *what, const weft_tensor *t)
{
    if (!t || t->dtype != WEFT_BOOL || t->numel != 1) {
        char s[WEFT__SPEC_STR_MAX];
        weft_spec sp = { .dtype = WEFT_BOOL };
        if (t)
            weft__tensor_spec(t, &sp);
        return weft__errorf(t && t->dtype != WEFT_BOOL ? WEFT_EDTYPE : WEFT_ESHAPE,
                            "%s: %s is %s, not bool[]", who, what,
                            t ? weft__spec_str(&sp, s, sizeof s) : "missing");
    }
    return *(const unsigned char *)t->data != 0;
}

/* ---- cond ---- */

/* One branch in a message: its role ("then_fn", "branch_fns[2]") and fn. */
typedef struct branch_name {
    const char *role;
    const weft_function *fn;
} branch_name;

/* The spec both branches' output k fits: unknown where either is. */
static int merge_branch_specs(weft_ctx *cx, const char *who, size_t k, branch_name na,
                              const weft_spec *a, branch_name nb, const weft_spec *b,
                              weft_spec *out)
{
    if (!weft__spec_compatible(a, b)) {
        char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
        return weft__ctx_failf(cx, a->dtype != b->dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                               "%s: output %zu: %s '%s' returns %s, %s '%s' returns %s", who, k,
                               na.role, weft__fn_name(na.fn), weft__spec_str(a, sa, sizeof sa),
                               nb.role, weft__fn_name(nb.fn), weft__spec_str(b, sb, sizeof sb));
    }
    *out = *a;
    if (a->rank == WEFT_RANK_ANY || b->rank == WEFT_RANK_ANY) {
        out->rank = WEFT_RANK_ANY;
        memset(out->dims, 0, sizeof out->dims);
        return 0;
    }
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            out->dims[d] = WEFT_DIM_ANY;
    return 0;
}

static int record_cond(weft_ctx *cx, weft_value *pred, weft_function *then_fn,
                       weft_function *else_fn, weft_value *const *args, size_t n_args,
                       weft_value **outs, size_t n_outs)
{
    static const char *who = "weft_cond";
    weft_spec *specs = specs_of(args, n_args);
    weft_spec *a = weft__calloc(n_outs ? n_outs : 1, sizeof *a);
    weft_spec *b = weft__calloc(n_outs ? n_outs : 1, sizeof *b);
    weft_value **in = weft__malloc((n_args + 1) * sizeof *in);
    weft__node node;
    memset(&node, 0, sizeof node);
    node.attr.multi.m = weft__multi_new((uint32_t)n_outs);
    struct weft__multi *m = node.attr.multi.m;
    int rc;
    if (!specs || !a || !b || !in || !m) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    if ((rc = weft__multi_resolve(cx, who, "then_fn", then_fn, specs, n_args, n_outs, m, 0,
                                  a)) < 0 ||
        (rc = weft__multi_resolve(cx, who, "else_fn", else_fn, specs, n_args, n_outs, m, 1,
                                  b)) < 0)
        goto done;
    for (size_t k = 0; k < n_outs; k++)
        if ((rc = merge_branch_specs(cx, who, k, (branch_name){ "then_fn", then_fn }, &a[k],
                                     (branch_name){ "else_fn", else_fn }, &b[k],
                                     &m->outs[k])) < 0)
            goto done;
    node.op = WEFT__OP_COND;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    /* A branch's host calls make the cond a side effect: kept, and ordered
     * among the other host calls. */
    node.flags = weft__multi_side_effects(m) ? WEFT__NODE_SIDE_EFFECT : 0;
    in[0] = pred;
    if (n_args)
        memcpy(in + 1, args, n_args * sizeof *in);
    m = NULL;   /* emit takes it over */
    rc = weft__multi_emit(cx, &node, in, (uint32_t)(n_args + 1), outs);
done:
    weft__multi_free(m);
    weft__free(specs);
    weft__free(a);
    weft__free(b);
    weft__free(in);
    return rc;
}

/* The chosen branch of an eager cond whose predicate is a computed tensor.
 * Traced, such a cond runs branches traced for the specs of args, which
 * carry no weakness; so here too a weak scalar argument enters as an
 * ordinary one, and both modes give the same dtypes. */
static int eager_branch(weft_ctx *cx, const char *who, weft_function *fn,
                        weft_value *const *args, size_t n_args, weft_value **outs, size_t n_outs)
{
    weft_value *stack_v[STACK_VALUES];
    weft_value **strong = n_args > STACK_VALUES ? weft__malloc(n_args * sizeof *strong) : stack_v;
    if (!strong)
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
    int rc = 0;
    for (size_t i = 0; i < n_args && rc == 0; i++)
        if (!(strong[i] = weft__value_strong(cx, args[i])))
            rc = weft_ctx_status(cx);
    if (rc == 0)
        rc = weft__call_inline(cx, who, fn, strong, n_args, outs, n_outs);
    if (strong != stack_v)
        weft__free(strong);
    return rc;
}

/* The branch a known predicate or index chose: a constant (or static) one
 * is traced into the caller like weft_call; an eager one gets strong
 * arguments (eager_branch). */
static int run_chosen(weft_ctx *cx, const char *who, weft_function *chosen, bool konst,
                      weft_value *const *args, size_t n_args, weft_value **outs, size_t n_outs)
{
    if (konst)
        return weft__call_inline(cx, who, chosen, args, n_args, outs, n_outs);
    return eager_branch(cx, who, chosen, args, n_args, outs, n_outs);
}

int weft_cond(weft_ctx *cx, weft_value *pred, weft_function *then_fn, weft_function *else_fn,
              weft_value *const *args, size_t n_args, weft_value **outs, size_t n_outs)
{
    static const char *who = "weft_cond";
    int rc = weft__ctx_enter_int(cx, who, args, n_args, outs, n_outs);
    if (rc < 0)
        return rc;
    if (!pred)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: pred is NULL", who);
    if (!weft__ctx_check_inputs(cx, who, &pred, 1))
        return weft_ctx_status(cx);
    if (!then_fn || !else_fn)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %s is NULL", who,
                               then_fn ? "else_fn" : "then_fn");
    /* A static integer scalar (weft_arg_i64) is a predicate too, as a
     * Python bool is in TF: non-zero is true. */
    const weft_spec *ps = weft__value_spec(pred);
    const weft_tensor *konst = weft__value_konst(pred);
    bool static_int = konst && ps->rank == 0 && (ps->dtype == WEFT_I32 || ps->dtype == WEFT_I64);
    if (!is_bool_scalar(ps) && !static_int) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_failf(cx, ps->dtype != WEFT_BOOL ? WEFT_EDTYPE : WEFT_ESHAPE,
                               "%s: pred is %s, not bool[]", who, weft__spec_str(ps, s, sizeof s));
    }
    /* Eagerly, or with a constant predicate, only the chosen branch runs. */
    const weft_tensor *known = konst ? konst : weft__value_tensor(pred);
    if (!known)
        return record_cond(cx, pred, then_fn, else_fn, args, n_args, outs, n_outs);
    int t = static_int ? weft__tensor_int_at(known, 0) != 0
                       : weft__control_truth(who, "pred", known);
    if (t < 0) {
        weft__ctx_fail_errmsg(cx, t);
        return weft_ctx_status(cx);
    }
    return run_chosen(cx, who, t ? then_fn : else_fn, konst != NULL, args, n_args, outs,
                      n_outs);
}

int weft__cond_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor **outs)
{
    (void)rt;
    const struct weft__multi *m = n->attr.multi.m;
    int t = weft__control_truth("weft_cond", "pred", in[0]);
    if (t < 0)
        return t;
    int k = t ? 0 : 1;
    return weft__callee_of(m->fn[k])->ops->invoke_n(m->concrete[k], in + 1, n->n_in - 1, outs,
                                                     m->n_outs);
}

/* ---- switch_case ---- */

/* The branch an index picks: out of range, the last one (TensorFlow's
 * default branch when none is given). */
static size_t pick_branch(int64_t index, size_t n_branches)
{
    return index >= 0 && (uint64_t)index < n_branches ? (size_t)index : n_branches - 1;
}

/* An index tensor's value into *index: 0, or a negative code (with the
 * error set) when it is not an integer scalar. */
static int index_of(const char *who, const weft_tensor *t, int64_t *index)
{
    if (!t || (t->dtype != WEFT_I32 && t->dtype != WEFT_I64) || t->numel != 1 || t->rank != 0) {
        char s[WEFT__SPEC_STR_MAX];
        weft_spec sp = { .dtype = WEFT_I32 };
        if (t)
            weft__tensor_spec(t, &sp);
        return weft__errorf(t && t->dtype != WEFT_I32 && t->dtype != WEFT_I64 ? WEFT_EDTYPE
                                                                               : WEFT_ESHAPE,
                            "%s: branch_index is %s, not an i32[] or i64[]", who,
                            t ? weft__spec_str(&sp, s, sizeof s) : "missing");
    }
    *index = weft__tensor_int_at(t, 0);
    return 0;
}

static int record_case(weft_ctx *cx, weft_value *index, weft_function *const *fns,
                       size_t n_fns, weft_value *const *args, size_t n_args, weft_value **outs,
                       size_t n_outs)
{
    static const char *who = "weft_switch_case";
    weft_spec *specs = specs_of(args, n_args);
    /* first: branch 0's outputs, which every other branch must fit; got:
     * the branch at hand's. */
    weft_spec *first = weft__calloc(2 * (n_outs ? n_outs : 1), sizeof *first);
    weft_spec *got = first ? first + (n_outs ? n_outs : 1) : NULL;
    weft_value **in = weft__malloc((n_args + 1) * sizeof *in);
    weft__node node;
    memset(&node, 0, sizeof node);
    struct weft__multi *m = weft__multi_new((uint32_t)n_outs);
    int rc;
    if (!specs || !first || !in || !m || weft__multi_branches(m, (uint32_t)n_fns) < 0) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    for (size_t b = 0; b < n_fns; b++) {
        char role[40];
        snprintf(role, sizeof role, "branch_fns[%zu]", b);
        const weft__callee_ops *ops = weft__callee_of(fns[b])->ops;
        m->branch_fn[b] = fns[b];
        rc = ops->resolve_n(fns[b], who, specs, n_args, n_outs, &m->branch_concrete[b],
                            b ? got : first);
        if (rc < 0) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", weft_errmsg());
            rc = weft__ctx_failf(cx, rc, "%s: %s: %s", who, role, msg);
            goto done;
        }
        if (ops->side_effects && ops->side_effects(m->branch_concrete[b]))
            node.flags = WEFT__NODE_SIDE_EFFECT;
        if (b == 0) {
            memcpy(m->outs, first, n_outs * sizeof *first);
            continue;
        }
        /* Checked against branch 0 (so the message shows what it returns),
         * then merged into the specs every branch fits. */
        weft_spec fits;
        for (size_t k = 0; k < n_outs; k++) {
            if ((rc = merge_branch_specs(cx, who, k, (branch_name){ "branch_fns[0]", fns[0] },
                                         &first[k], (branch_name){ role, fns[b] }, &got[k],
                                         &fits)) < 0 ||
                (rc = merge_branch_specs(cx, who, k, (branch_name){ "the branches", fns[0] },
                                         &m->outs[k], (branch_name){ role, fns[b] }, &got[k],
                                         &m->outs[k])) < 0)
                goto done;
        }
    }
    node.op = WEFT__OP_CASE;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    in[0] = index;
    if (n_args)
        memcpy(in + 1, args, n_args * sizeof *in);
    node.attr.multi.m = m;
    m = NULL;   /* emit takes it over */
    rc = weft__multi_emit(cx, &node, in, (uint32_t)(n_args + 1), outs);
done:
    weft__multi_free(m);
    weft__free(specs);
    weft__free(first);
    weft__free(in);
    return rc;
}

int weft_switch_case(weft_ctx *cx, weft_value *branch_index, weft_function *const *branch_fns,
                     size_t n_branches, weft_value *const *args, size_t n_args,
                     weft_value **outs, size_t n_outs)
{
    static const char *who = "weft_switch_case";
    int rc = weft__ctx_enter_int(cx, who, args, n_args, outs, n_outs);
    if (rc < 0)
        return rc;
    if (!branch_index)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: branch_index is NULL", who);
    if (!weft__ctx_check_inputs(cx, who, &branch_index, 1))
        return weft_ctx_status(cx);
    if (!branch_fns || n_branches == 0 || n_branches > UINT32_MAX / 4)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %s", who,
                               branch_fns ? "no branches (n_branches is 0)" : "branch_fns is NULL");
    for (size_t b = 0; b < n_branches; b++)
        if (!branch_fns[b])
            return weft__ctx_failf(cx, WEFT_EINVAL, "%s: branch_fns[%zu] is NULL", who, b);
    const weft_spec *is = weft__value_spec(branch_index);
    if ((is->dtype != WEFT_I32 && is->dtype != WEFT_I64) || is->rank != 0) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_failf(cx, is->dtype != WEFT_I32 && is->dtype != WEFT_I64 ? WEFT_EDTYPE
                                                                                 : WEFT_ESHAPE,
                               "%s: branch_index is %s, not an i32[] or i64[]", who,
                               weft__spec_str(is, s, sizeof s));
    }
    /* Eagerly, or with a constant index, only the chosen branch runs. */
    const weft_tensor *konst = weft__value_konst(branch_index);
    const weft_tensor *known = konst ? konst : weft__value_tensor(branch_index);
    if (!known)
        return record_case(cx, branch_index, branch_fns, n_branches, args, n_args, outs, n_outs);
    int64_t index = 0;
    if ((rc = index_of(who, known, &index)) < 0) {
        weft__ctx_fail_errmsg(cx, rc);
        return weft_ctx_status(cx);
    }
    return run_chosen(cx, who, branch_fns[pick_branch(index, n_branches)], konst != NULL, args,
                      n_args, outs, n_outs);
}

int weft__case_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor **outs)
{
    (void)rt;
    const struct weft__multi *m = n->attr.multi.m;
    int64_t index = 0;
    int rc = index_of("weft_switch_case", in[0], &index);
    if (rc < 0)
        return rc;
    size_t b = pick_branch(index, m->n_branches);
    return weft__callee_of(m->branch_fn[b])->ops->invoke_n(m->branch_concrete[b], in + 1,
                                                            n->n_in - 1, outs, m->n_outs);
}

/* ---- while_loop ---- */

static int changed_var(weft_ctx *cx, weft_function *body_fn, size_t i, const weft_spec *var,
                       const weft_spec *got, const char *when)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
    return weft__ctx_failf(cx, var->dtype != got->dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                           "weft_while_loop: body_fn '%s' changes loop variable %zu from %s to "
                           "%s%s", weft__fn_name(body_fn), i, weft__spec_str(var, a, sizeof a),
                           weft__spec_str(got, b, sizeof b), when);
}

static int bad_cond_out(weft_ctx *cx, weft_function *cond_fn, const weft_spec *got)
{
    char s[WEFT__SPEC_STR_MAX];
    return weft__ctx_failf(cx, got->dtype != WEFT_BOOL ? WEFT_EDTYPE : WEFT_ESHAPE,
                           "weft_while_loop: cond_fn '%s' returns %s, not bool[]",
                           weft__fn_name(cond_fn), weft__spec_str(got, s, sizeof s));
}

static int record_while(weft_ctx *cx, weft_function *cond_fn, weft_function *body_fn,
                        weft_value *const *vars, size_t n_vars, weft_value **outs)
{
    static const char *who = "weft_while_loop";
    weft_spec *specs = specs_of(vars, n_vars);
    weft_spec *body_out = weft__calloc(n_vars, sizeof *body_out);
    weft_spec cond_out;
    weft__node node;
    memset(&node, 0, sizeof node);
    node.attr.multi.m = weft__multi_new((uint32_t)n_vars);
    struct weft__multi *m = node.attr.multi.m;
    int rc;
    if (!specs || !body_out || !m) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    if ((rc = weft__multi_resolve(cx, who, "cond_fn", cond_fn, specs, n_vars, 1, m, 0,
                                  &cond_out)) < 0)
        goto done;
    if (!is_bool_scalar(&cond_out)) {
        rc = bad_cond_out(cx, cond_fn, &cond_out);
        goto done;
    }
    if ((rc = weft__multi_resolve(cx, who, "body_fn", body_fn, specs, n_vars, n_vars, m, 1,
                                  body_out)) < 0)
        goto done;
    /* A body output keeps a variable's spec when it has its dtype and
     * rank and every dim the variable knows. */
    for (size_t i = 0; i < n_vars; i++)
        if (!weft__spec_matches(&specs[i], &body_out[i])) {
            rc = changed_var(cx, body_fn, i, &specs[i], &body_out[i], "");
            goto done;
        }
    memcpy(m->outs, specs, n_vars * sizeof *specs);
    node.op = WEFT__OP_WHILE;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    node.flags = weft__multi_side_effects(m) ? WEFT__NODE_SIDE_EFFECT : 0;
    m = NULL;   /* emit takes it over */
    rc = weft__multi_emit(cx, &node, vars, (uint32_t)n_vars, outs);
done:
    weft__multi_free(m);
    weft__free(specs);
    weft__free(body_out);
    return rc;
}

/* One eager iteration in its own context (so that its temporaries go when
 * it ends): *go receives cond_fn(cur); when true, next receives
 * body_fn(cur). */
static int eager_step(weft_ctx *cx, weft_function *cond_fn, weft_function *body_fn,
                      weft_tensor *const *cur, const weft_spec *specs, size_t n, size_t iter,
                      bool *go, weft_tensor **next)
{
    static const char *who = "weft_while_loop";
    weft_ctx *step = NULL;
    weft_value *stack_v[2 * STACK_VALUES];
    weft_value **v = n > STACK_VALUES ? weft__calloc(2 * n, sizeof *v) : stack_v;
    int rc = v ? weft__ctx_new(weft__ctx_runtime(cx), NULL, weft__ctx_name(cx), &step)
               : weft__errorf(WEFT_ENOMEM, "%s: out of memory", who);
    if (rc < 0) {
        weft__ctx_fail_errmsg(cx, rc);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = weft_eager_value(step, cur[i])))
            goto step_failed;
    weft_value *p = NULL;
    if (weft__call_inline(step, who, cond_fn, v, n, &p, 1) < 0)
        goto step_failed;
    if (!is_bool_scalar(weft__value_spec(p))) {
        bad_cond_out(cx, cond_fn, weft__value_spec(p));
        goto done;
    }
    *go = *(const unsigned char *)weft_tensor_data(weft__value_tensor(p)) != 0;
    if (!*go)
        goto done;
    if (weft__call_inline(step, who, body_fn, v, n, v + n, n) < 0)
        goto step_failed;
    for (size_t i = 0; i < n; i++) {
        const weft_spec *got = weft__value_spec(v[n + i]);
        if (!weft__spec_equal(&specs[i], got)) {
            char when[48];
            snprintf(when, sizeof when, " (iteration %zu)", iter);
            changed_var(cx, body_fn, i, &specs[i], got, when);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++)
        next[i] = weft_tensor_retain(weft__value_tensor(v[n + i]));
    goto done;
step_failed:
    weft__ctx_failf(cx, weft_ctx_status(step), "%s", weft__ctx_errmsg(step));
done:
    weft__ctx_free(step);
    if (v != stack_v)
        weft__free(v);
    return weft_ctx_status(cx);
}

static int eager_while(weft_ctx *cx, weft_function *cond_fn, weft_function *body_fn,
                       weft_value *const *vars, size_t n, weft_value **outs)
{
    weft_spec *specs = specs_of(vars, n);
    weft_tensor **cur = weft__calloc(2 * n, sizeof *cur);
    int rc;
    if (!specs || !cur) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "weft_while_loop: out of memory");
        goto done;
    }
    weft_tensor **next = cur + n;
    for (size_t i = 0; i < n; i++)
        cur[i] = weft_tensor_retain(weft__value_tensor(vars[i]));
    for (size_t iter = 0;; iter++) {
        bool go = false;
        if ((rc = eager_step(cx, cond_fn, body_fn, cur, specs, n, iter, &go, next)) < 0)
            goto done;
        if (!go)
            break;
        weft__release_tensors(cur, n);
        memcpy(cur, next, n * sizeof *cur);
        memset(next, 0, n * sizeof *next);
    }
    for (size_t i = 0; i < n; i++) {
        outs[i] = weft__ctx_wrap(cx, cur[i]);   /* takes the reference, also on failure */
        cur[i] = NULL;
        if (!outs[i]) {
            rc = weft_ctx_status(cx);
            goto done;
        }
    }
    rc = 0;
done:
    if (cur)
        weft__release_tensors(cur, 2 * n);
    if (rc < 0)
        for (size_t i = 0; i < n; i++)
            outs[i] = NULL;
    weft__free(specs);
    weft__free(cur);
    return rc;
}

int weft_while_loop(weft_ctx *cx, weft_function *cond_fn, weft_function *body_fn,
                    weft_value *const *vars, size_t n_vars, weft_value **outs)
{
    static const char *who = "weft_while_loop";
    int rc = weft__ctx_enter_int(cx, who, vars, n_vars, outs, n_vars);
    if (rc < 0)
        return rc;
    if (!cond_fn || !body_fn)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: %s is NULL", who,
                               cond_fn ? "body_fn" : "cond_fn");
    if (n_vars == 0)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: no loop variables", who);
    if (weft__ctx_is_eager(cx))
        return eager_while(cx, cond_fn, body_fn, vars, n_vars, outs);
    return record_while(cx, cond_fn, body_fn, vars, n_vars, outs);
}

int weft__while_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                    weft_tensor **outs)
{
    (void)rt;
    const struct weft__multi *m = n->attr.multi.m;
    const weft__callee_ops *cops = weft__callee_of(m->fn[0])->ops;
    const weft__callee_ops *bops = weft__callee_of(m->fn[1])->ops;
    size_t nv = m->n_outs;
    weft_tensor *stack_t[2 * STACK_VALUES];
    weft_tensor **cur = nv > STACK_VALUES ? weft__calloc(2 * nv, sizeof *cur) : stack_t;
    if (!cur)
        return weft__errorf(WEFT_ENOMEM, "weft_while_loop: out of memory");
    weft_tensor **next = cur + nv;
    for (size_t i = 0; i < nv; i++) {
        cur[i] = weft_tensor_retain(in[i]);
        next[i] = NULL;
    }
    int rc;
    for (;;) {
        weft_tensor *p = NULL;
        if ((rc = cops->invoke_n(m->concrete[0], cur, nv, &p, 1)) < 0)
            break;
        rc = weft__control_truth("weft_while_loop", "cond_fn's result", p);
        weft_tensor_release(p);
        if (rc <= 0)
            break;
        if ((rc = bops->invoke_n(m->concrete[1], cur, nv, next, nv)) < 0)
            break;
        weft__release_tensors(cur, nv);
        memcpy(cur, next, nv * sizeof *cur);
        memset(next, 0, nv * sizeof *next);
    }
    if (rc == 0)
        memcpy(outs, cur, nv * sizeof *outs);
    else
        weft__release_tensors(cur, nv);
    weft__release_tensors(next, nv);
    if (cur != stack_t)
        weft__free(cur);
    return rc;
}
