/* weft_scan, weft_foldl and weft_foldr (tf.scan, tf.foldl, tf.foldr): one
 * function applied row after row of its inputs, each step's results the
 * next step's accumulators.  The function is resolved (traced at most
 * once) for the specs of the accumulators, one row and the captures when
 * the op is recorded or run eagerly; one SCAN node then runs the steps in
 * order on the thread that runs the node, the ops inside each step on the
 * workers.  Without init the accumulators start as the first row. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

#define SCAN_MSG_MAX 400

static const char *scan_name(unsigned mode)
{
    if (!(mode & WEFT__SCAN_FOLD))
        return "weft_scan";
    return mode & WEFT__SCAN_REVERSE ? "weft_foldr" : "weft_foldl";
}

/* ---- Running a SCAN node ---------------------------------------------- */

/* One run: the node's inputs by role, and the tensors it holds. */
typedef struct scan_run {
    const char *who;
    const struct weft__multi *m;
    weft_tensor *const *init;      /* NULL: the accumulators start as a row */
    weft_tensor *const *elems;
    weft_tensor *const *caps;
    size_t n_acc, n_elems, n_caps;
    int64_t rows;
    weft_tensor **acc;             /* n_acc: the current accumulators */
    weft_tensor **stacked;         /* n_acc: scan's results */
    weft_tensor **args;            /* the step's arguments: acc, rows, caps */
    weft_tensor **res;             /* n_acc: the step's results */
} scan_run;

/* The rows every input has (they must agree). */
static int count_rows(scan_run *s)
{
    for (size_t e = 0; e < s->n_elems; e++) {
        const weft_tensor *t = s->elems[e];
        if (t->rank < 1)
            return weft__errorf(WEFT_ESHAPE, "%s: elems %zu is a scalar", s->who, e);
        if (e == 0)
            s->rows = t->dims[0];
        else if (t->dims[0] != s->rows)
            return weft__errorf(WEFT_ESHAPE, "%s: elems %zu has %lld rows, elems 0 has %lld",
                                s->who, e, (long long)t->dims[0], (long long)s->rows);
    }
    return 0;
}

static bool same_shape(const weft_tensor *a, const weft_tensor *b)
{
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0;
}

/* A step's result k must keep accumulator k's dtype and shape. */
static int check_result(const scan_run *s, size_t k, int64_t r)
{
    const weft_tensor *got = s->res[k], *acc = s->acc[k];
    if (!got)
        return weft__errorf(WEFT_EBODY, "%s: row %lld: fn returned no tensor for accumulator %zu",
                            s->who, (long long)r, k);
    if (same_shape(got, acc))
        return 0;
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
    weft_spec sa, sb;
    weft__tensor_spec(acc, &sa);
    weft__tensor_spec(got, &sb);
    return weft__errorf(acc->dtype != got->dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                        "%s: row %lld: fn '%s' changes accumulator %zu from %s to %s", s->who,
                        (long long)r, weft__fn_name(s->m->fn[0]), k,
                        weft__spec_str(&sa, a, sizeof a), weft__spec_str(&sb, b, sizeof b));
}

/* The first accumulators: init, or row `first` of elems. */
static int start_acc(scan_run *s, int64_t first)
{
    for (size_t k = 0; k < s->n_acc; k++) {
        if (s->init)
            s->acc[k] = weft_tensor_retain(s->init[k]);
        else {
            int rc = weft__tensor_row(s->elems[k], first, &s->acc[k]);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* scan's results, [rows, ...] of each accumulator's spec. */
static int alloc_stacked(scan_run *s)
{
    for (size_t k = 0; k < s->n_acc; k++) {
        const weft_tensor *a = s->acc[k];
        if (a->rank + 1 > WEFT_MAX_RANK)
            return weft__errorf(WEFT_ESHAPE, "%s: accumulator %zu has rank %d; stacking it "
                                "would exceed rank %d", s->who, k, a->rank, WEFT_MAX_RANK);
        int64_t dims[WEFT_MAX_RANK];
        dims[0] = s->rows;
        memcpy(dims + 1, a->dims, (size_t)a->rank * sizeof dims[0]);
        int rc = weft__tensor_new(a->dtype, a->rank + 1, dims, &s->stacked[k]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Copies the accumulators into row r of scan's results. */
static void place(scan_run *s, int64_t r)
{
    for (size_t k = 0; k < s->n_acc; k++) {
        size_t bytes = s->acc[k]->nbytes;
        if (bytes)
            memcpy((char *)weft__tensor_mut(s->stacked[k]) + (size_t)r * bytes,
                   s->acc[k]->data, bytes);
    }
}

/* One step on row r: the accumulators become fn(acc, rows, captures). */
static int step(scan_run *s, int64_t r)
{
    const weft__callee_ops *ops = weft__callee_of(s->m->fn[0])->ops;
    size_t n_args = s->n_acc + s->n_elems + s->n_caps;
    int rc = 0;
    memcpy(s->args, s->acc, s->n_acc * sizeof *s->args);
    for (size_t e = 0; e < s->n_elems && rc == 0; e++)
        rc = weft__tensor_row(s->elems[e], r, &s->args[s->n_acc + e]);
    memcpy(s->args + s->n_acc + s->n_elems, s->caps, s->n_caps * sizeof *s->args);
    if (rc == 0 && (rc = ops->invoke_n(s->m->concrete[0], s->args, n_args, s->res, s->n_acc))) {
        char inner[SCAN_MSG_MAX];
        snprintf(inner, sizeof inner, "%s", weft_errmsg());
        rc = weft__errorf(rc, "%s: row %lld: %s", s->who, (long long)r, inner);
    }
    weft__release_tensors(s->args + s->n_acc, s->n_elems);
    for (size_t k = 0; k < s->n_acc && rc == 0; k++)
        rc = check_result(s, k, r);
    if (rc < 0) {
        weft__release_tensors(s->res, s->n_acc);
        return rc;
    }
    weft__release_tensors(s->acc, s->n_acc);
    memcpy(s->acc, s->res, s->n_acc * sizeof *s->acc);
    memset(s->res, 0, s->n_acc * sizeof *s->res);
    return 0;
}

static int scan_steps(scan_run *s, weft_tensor **outs)
{
    unsigned mode = s->m->scan_mode;
    bool reverse = mode & WEFT__SCAN_REVERSE, fold = mode & WEFT__SCAN_FOLD;
    int rc = count_rows(s);
    if (rc < 0)
        return rc;
    if (!s->init && s->rows == 0)
        return weft__errorf(WEFT_EINVAL, "%s: elems have no rows and there is no init to "
                            "start from", s->who);
    int64_t first = s->init ? 0 : 1;   /* without init, the first row is the first acc */
    if ((rc = start_acc(s, reverse ? s->rows - 1 : 0)) < 0)
        return rc;
    if (!fold && (rc = alloc_stacked(s)) < 0)
        return rc;
    if (!fold && first)
        place(s, reverse ? s->rows - 1 : 0);
    for (int64_t i = first; i < s->rows; i++) {
        int64_t r = reverse ? s->rows - 1 - i : i;
        if ((rc = step(s, r)) < 0)
            return rc;
        if (!fold)
            place(s, r);
    }
    weft_tensor **kept = fold ? s->acc : s->stacked;
    memcpy(outs, kept, s->n_acc * sizeof *outs);
    memset(kept, 0, s->n_acc * sizeof *kept);
    return 0;
}

int weft__scan_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor **outs)
{
    (void)rt;
    const struct weft__multi *m = n->attr.multi.m;
    scan_run s;
    memset(&s, 0, sizeof s);
    s.who = scan_name(m->scan_mode);
    s.m = m;
    s.n_acc = m->n_outs;
    s.n_elems = m->n_mapped;
    size_t n_init = m->scan_mode & WEFT__SCAN_NO_INIT ? 0 : s.n_acc;
    s.init = n_init ? in : NULL;
    s.elems = in + n_init;
    s.caps = in + n_init + s.n_elems;
    s.n_caps = n->n_in - n_init - s.n_elems;
    size_t n_args = s.n_acc + s.n_elems + s.n_caps;
    weft_tensor **held = weft__calloc(3 * s.n_acc + n_args, sizeof *held);
    if (!held)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory", s.who);
    s.acc = held;
    s.stacked = held + s.n_acc;
    s.res = held + 2 * s.n_acc;
    s.args = held + 3 * s.n_acc;
    int rc = scan_steps(&s, outs);
    weft__release_tensors(s.acc, s.n_acc);
    weft__release_tensors(s.stacked, s.n_acc);
    weft__free(held);
    return rc;
}

/* ---- Recording or running one ----------------------------------------- */

static int changed_acc(weft_ctx *cx, const char *who, weft_function *fn, size_t k,
                       const weft_spec *acc, const weft_spec *got)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
    return weft__ctx_failf(cx, acc->dtype != got->dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                           "%s: fn '%s' changes accumulator %zu from %s to %s", who,
                           weft__fn_name(fn), k, weft__spec_str(acc, a, sizeof a),
                           weft__spec_str(got, b, sizeof b));
}

/* The entry checks that need no spec; 0 to go on. */
static int check_call(weft_ctx *cx, const char *who, weft_function *fn, weft_value *const *init,
                      size_t n_acc, weft_value *const *elems, size_t n_elems,
                      weft_value *const *captures, size_t n_captures, weft_value **outs)
{
    int rc = weft__ctx_enter_int(cx, who, elems, n_elems, outs, n_acc);
    if (rc < 0)
        return rc;
    if (init && !weft__ctx_check_inputs(cx, who, init, n_acc))
        return weft_ctx_status(cx);
    if ((rc = weft__check_fn_captures(cx, who, fn, captures, n_captures)) < 0)
        return rc;
    if (n_elems == 0)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: nothing to scan (n_elems is 0)", who);
    if (n_acc == 0)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: no accumulator (n_acc is 0)", who);
    if (!init && n_acc != n_elems)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: without init the accumulators start as "
                               "the rows of elems, so n_acc (%zu) must equal n_elems (%zu)",
                               who, n_acc, n_elems);
    return 0;
}

/* The node's inputs (init, elems, captures) and the specs fn is resolved
 * for (accumulators, rows, captures) into new arrays. */
static int gather_inputs(weft_ctx *cx, const char *who, weft_value *const *init, size_t n_acc,
                         weft_value *const *elems, size_t n_elems, weft_value *const *captures,
                         size_t n_captures, weft_value **in, weft_spec *args)
{
    size_t n_init = init ? n_acc : 0;
    for (size_t e = 0; e < n_elems; e++) {
        char what[32];
        snprintf(what, sizeof what, "elems %zu", e);
        if (!weft__slice_spec(cx, who, what, weft__value_spec(elems[e]), &args[n_acc + e]))
            return weft_ctx_status(cx);
        in[n_init + e] = elems[e];
    }
    for (size_t k = 0; k < n_acc; k++) {
        if (init)
            in[k] = init[k];
        args[k] = init ? *weft__value_spec(init[k]) : args[n_acc + k];
    }
    for (size_t c = 0; c < n_captures; c++) {
        in[n_init + n_elems + c] = captures[c];
        args[n_acc + n_elems + c] = *weft__value_spec(captures[c]);
    }
    return 0;
}

int weft__scan_emit(weft_ctx *cx, unsigned mode, weft_function *fn, weft_value *const *init,
                    size_t n_acc, weft_value *const *elems, size_t n_elems,
                    weft_value *const *captures, size_t n_captures, weft_value **outs)
{
    const char *who = scan_name(mode);
    int rc = check_call(cx, who, fn, init, n_acc, elems, n_elems, captures, n_captures, outs);
    if (rc < 0)
        return rc;
    size_t n_args = n_acc + n_elems + n_captures, n_in = (init ? n_acc : 0) + n_elems + n_captures;
    weft_spec *specs = weft__malloc((n_args + n_acc) * sizeof *specs);
    weft_value **in = weft__malloc(n_in * sizeof *in);
    struct weft__multi *m = weft__multi_new((uint32_t)n_acc);
    weft__node node;
    memset(&node, 0, sizeof node);
    int64_t rows;
    if (!specs || !in || !m) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    if ((rc = gather_inputs(cx, who, init, n_acc, elems, n_elems, captures, n_captures, in,
                            specs)) < 0)
        goto done;
    if (!weft__shared_rows(cx, who, elems, n_elems, &rows)) {
        rc = weft_ctx_status(cx);
        goto done;
    }
    if (weft__grad_taping(cx) && rows > 0) {
        rc = weft__unroll_rows(cx, fn, mode, init, n_acc, elems, n_elems, captures, n_captures,
                               rows, outs, n_acc);
        goto done;
    }
    m->fn[0] = fn;
    const weft__callee_ops *ops = weft__callee_of(fn)->ops;
    weft_spec *got = specs + n_args;
    if ((rc = ops->resolve_n(fn, who, specs, n_args, n_acc, &m->concrete[0], got)) < 0) {
        char msg[SCAN_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", weft_errmsg());
        rc = weft__ctx_failf(cx, rc, "%s: %s", who, msg);
        goto done;
    }
    for (size_t k = 0; k < n_acc; k++) {
        /* A result may keep an accumulator's spec when no known dim says
         * otherwise: fn may have been traced before for dims unknown then,
         * and each step's results are checked as they come. */
        if (!weft__spec_compatible(&specs[k], &got[k])) {
            rc = changed_acc(cx, who, fn, k, &specs[k], &got[k]);
            goto done;
        }
        if (mode & WEFT__SCAN_FOLD)
            m->outs[k] = specs[k];
        else if (!weft__stacked_spec(cx, who, &specs[k], rows, &m->outs[k])) {
            rc = weft_ctx_status(cx);
            goto done;
        }
    }
    node.op = WEFT__OP_SCAN;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    node.flags = ops->side_effects && ops->side_effects(m->concrete[0]) ? WEFT__NODE_SIDE_EFFECT
                                                                        : 0;
    m->n_mapped = (uint32_t)n_elems;
    m->scan_mode = mode | (init ? 0u : WEFT__SCAN_NO_INIT);
    node.attr.multi.m = m;
    m = NULL;   /* emit takes it over */
    rc = weft__multi_emit(cx, &node, in, (uint32_t)n_in, outs);
done:
    weft__multi_free(m);
    weft__free(specs);
    weft__free(in);
    return rc;
}

int weft_scan(weft_ctx *cx, weft_function *fn, weft_value *const *init, size_t n_acc,
              weft_value *const *elems, size_t n_elems, weft_value *const *captures,
              size_t n_captures, weft_value **outs, unsigned flags)
{
    if (cx && flags & ~(unsigned)WEFT_SCAN_REVERSE) {
        int rc = weft__ctx_enter_int(cx, "weft_scan", NULL, 0, outs, n_acc);
        return rc < 0 ? rc : weft__ctx_failf(cx, WEFT_EINVAL, "weft_scan: flags 0x%x: only "
                                             "WEFT_SCAN_REVERSE applies", flags);
    }
    unsigned mode = flags & WEFT_SCAN_REVERSE ? WEFT__SCAN_REVERSE : 0u;
    return weft__scan_emit(cx, mode, fn, init, n_acc, elems, n_elems, captures, n_captures,
                           outs);
}

int weft_foldl(weft_ctx *cx, weft_function *fn, weft_value *const *init, size_t n_acc,
               weft_value *const *elems, size_t n_elems, weft_value *const *captures,
               size_t n_captures, weft_value **outs)
{
    return weft__scan_emit(cx, WEFT__SCAN_FOLD, fn, init, n_acc, elems, n_elems, captures,
                           n_captures, outs);
}

int weft_foldr(weft_ctx *cx, weft_function *fn, weft_value *const *init, size_t n_acc,
               weft_value *const *elems, size_t n_elems, weft_value *const *captures,
               size_t n_captures, weft_value **outs)
{
    return weft__scan_emit(cx, WEFT__SCAN_FOLD | WEFT__SCAN_REVERSE, fn, init, n_acc, elems,
                           n_elems, captures, n_captures, outs);
}
