/* weft_map (map_fn): one function applied to every slice of a tensor along
 * dim 0, the results stacked along a new dim 0.  The function is resolved
 * (traced at most once) for the slice spec when the op is recorded or run
 * eagerly; the runner runs the iterations through weft_parallel_map, so
 * at most parallel_iterations are in flight and the workers steal them.
 * weft_map_ex is the same with several mapped inputs, captured inputs
 * (passed whole to every iteration) and several outputs; both share the
 * runner. */
#include <pthread.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/sidefx.h"
#include "trace/tensor_impl.h"

#define MAP_MSG_MAX 400
#define STACK_VALUES 16

/* What one run maps: fn (resolved as concrete) over the rows of elems, with
 * the captures passed whole, into outputs whose specs fit patterns ([n] +
 * fn's output spec; the rank may be unknown).  who starts the messages. */
typedef struct map_job {
    const char *who;
    weft_function *fn;
    void *concrete;
    unsigned parallel_iterations;
    weft_tensor *const *elems;
    size_t n_elems;
    weft_tensor *const *caps;
    size_t n_caps;
    const weft_spec *patterns;
    size_t n_outs;
} map_job;

/* One input sliced along dim 0, and one stacked output. */
typedef struct map_in {
    weft_spec slice;               /* the input's spec minus dim 0 */
} map_in;

typedef struct map_out {
    weft_tensor *t;
    weft_spec item;                /* one result's spec */
    char *data;
    size_t item_bytes;
} map_out;

/* The state one run shares among its iterations. */
typedef struct map_run {
    weft_runtime *rt;
    const map_job *job;
    const weft__callee_ops *ops;
    int64_t n;
    map_in *ins;
    map_out *outs;
    bool profiling;

    pthread_mutex_t lock;          /* allocating outs, recording the error */
    bool ready;                    /* outs allocated (atomic, published with release) */

    bool failed;                   /* under lock: the first error below */
    int err;
    char msg[MAP_MSG_MAX];
} map_run;

/* Records the first failure of an iteration (others lose the race quietly)
 * and returns code, so the loop cancels. */
static int iter_fail(map_run *m, size_t i, int code, const char *inner)
{
    pthread_mutex_lock(&m->lock);
    if (!m->failed) {
        m->failed = true;
        m->err = code;
        /* Two steps, so the compiler sees no truncated %s. */
        int k = snprintf(m->msg, sizeof m->msg, "%s: iteration %zu: ", m->job->who, i);
        size_t at = k > 0 && (size_t)k < sizeof m->msg ? (size_t)k : 0;
        size_t len = strnlen(inner, sizeof m->msg - 1 - at);
        memcpy(m->msg + at, inner, len);
        m->msg[at + len] = '\0';
    }
    pthread_mutex_unlock(&m->lock);
    return code;
}

/* Allocates stacked output k for results of spec item.  Called with
 * m->lock held or before the loop starts. */
static int alloc_out(map_run *m, size_t k, const weft_spec *item)
{
    int64_t dims[WEFT_MAX_RANK];
    int64_t numel;
    if (item->rank < 0 || item->rank + 1 > WEFT_MAX_RANK)
        return weft__errorf(WEFT_ESHAPE, "%s: a result of rank %d cannot be stacked "
                            "(rank %d at most)", m->job->who, item->rank, WEFT_MAX_RANK - 1);
    dims[0] = m->n;
    memcpy(dims + 1, item->dims, (size_t)item->rank * sizeof dims[0]);
    if (!weft__numel_checked(item->rank, item->dims, weft_dtype_size(item->dtype), &numel))
        return weft__errorf(WEFT_ESHAPE, "%s: result too large", m->job->who);
    map_out *o = &m->outs[k];
    int rc = weft__tensor_new(item->dtype, item->rank + 1, dims, &o->t);
    if (rc)
        return rc;
    o->item = *item;
    o->item_bytes = (size_t)numel * weft_dtype_size(item->dtype);
    o->data = weft__tensor_mut(o->t);
    return 0;
}

static void release_outs(map_run *m)
{
    for (size_t k = 0; k < m->job->n_outs; k++) {
        weft_tensor_release(m->outs[k].t);
        m->outs[k].t = NULL;
    }
}

/* The spec of one result, when the pattern knows it fully. */
static bool pattern_item(const weft_spec *pattern, weft_spec *item)
{
    if (pattern->rank < 1)
        return false;
    item->dtype = pattern->dtype;
    item->rank = pattern->rank - 1;
    memset(item->dims, 0, sizeof item->dims);
    for (int d = 1; d < pattern->rank; d++) {
        if (pattern->dims[d] < 0)
            return false;
        item->dims[d - 1] = pattern->dims[d];
    }
    return true;
}

/* A resolve error as the tail of a "who: " message (the callee's own
 * messages may already start so). */
static const char *resolve_msg(const char *who, const char *msg)
{
    size_t n = strlen(who);
    return strncmp(msg, who, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

/* The specs of one result each of a map over zero rows whose patterns
 * leave dims unknown: fn's output specs for the actual slice and capture
 * specs, with dims still unknown (a host call's) as 0. */
static int empty_items(const map_run *m, weft_spec *items)
{
    const map_job *j = m->job;
    char msg[MAP_MSG_MAX];
    void *concrete = NULL;
    size_t n_args = j->n_elems + j->n_caps;
    weft_spec *specs = weft__malloc((n_args + j->n_outs) * sizeof *specs);
    if (!specs)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory", j->who);
    for (size_t i = 0; i < j->n_elems; i++)
        specs[i] = m->ins[i].slice;
    for (size_t i = 0; i < j->n_caps; i++)
        weft__tensor_spec(j->caps[i], &specs[j->n_elems + i]);
    weft_spec *got = specs + n_args;
    int rc = m->ops->resolve_n(j->fn, j->who, specs, n_args, j->n_outs, &concrete, got);
    if (rc) {
        snprintf(msg, sizeof msg, "%s", resolve_msg(j->who, weft_errmsg()));
        weft__free(specs);
        return weft__errorf(rc, "%s: %s", j->who, msg);
    }
    m->ops->release(concrete);
    for (size_t k = 0; k < j->n_outs; k++) {
        items[k].dtype = got[k].dtype;
        items[k].rank = got[k].rank < 0 ? 0 : got[k].rank;
        memset(items[k].dims, 0, sizeof items[k].dims);
        for (int d = 0; d < items[k].rank; d++)
            items[k].dims[d] = got[k].dims[d] < 0 ? 0 : got[k].dims[d];
    }
    weft__free(specs);
    return 0;
}

/* Allocates every output for the first results, res[0..n_outs), checking
 * them against the patterns.  Under m->lock. */
static int alloc_from_results(map_run *m, weft_tensor *const *res, char *inner)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
    for (size_t k = 0; k < m->job->n_outs; k++) {
        const weft_spec *pattern = &m->job->patterns[k];
        weft_spec rs, want;
        weft__tensor_spec(res[k], &rs);
        want.dtype = pattern->dtype;
        want.rank = pattern->rank < 0 ? WEFT_RANK_ANY : pattern->rank - 1;
        memset(want.dims, 0, sizeof want.dims);
        for (int d = 1; d < pattern->rank; d++)
            want.dims[d - 1] = pattern->dims[d];
        int rc;
        if (!weft__spec_matches(&want, &rs))
            rc = weft__errorf(rs.dtype != want.dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                              "result %s does not match the function's output spec %s",
                              weft__spec_str(&rs, a, sizeof a), weft__spec_str(&want, b, sizeof b));
        else
            rc = alloc_out(m, k, &rs);
        if (rc) {
            snprintf(inner, MAP_MSG_MAX, "%s", weft_errmsg());
            release_outs(m);
            return rc;
        }
    }
    return 0;
}

/* Checks results res of iteration i and copies them into place; the
 * first iteration to finish allocates the outputs. */
static int place_results(map_run *m, size_t i, weft_tensor *const *res)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX], inner[MAP_MSG_MAX];
    if (!__atomic_load_n(&m->ready, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&m->lock);
        int rc = 0;
        if (!__atomic_load_n(&m->ready, __ATOMIC_RELAXED)) {
            rc = alloc_from_results(m, res, inner);
            if (rc == 0)
                __atomic_store_n(&m->ready, true, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&m->lock);
        if (rc)
            return iter_fail(m, i, rc, inner);
    }
    for (size_t k = 0; k < m->job->n_outs; k++) {
        const map_out *o = &m->outs[k];
        weft_spec rs;
        weft__tensor_spec(res[k], &rs);
        if (!weft__spec_equal(&rs, &o->item)) {
            char which[32] = "";
            if (m->job->n_outs > 1)
                snprintf(which, sizeof which, "output %zu: ", k);
            snprintf(inner, sizeof inner, "%sresult %s does not match %s of the other iterations",
                     which, weft__spec_str(&rs, a, sizeof a), weft__spec_str(&o->item, b, sizeof b));
            return iter_fail(m, i, rs.dtype != o->item.dtype ? WEFT_EDTYPE : WEFT_ESHAPE, inner);
        }
        if (o->item_bytes)
            memcpy(o->data + i * o->item_bytes, weft_tensor_data(res[k]), o->item_bytes);
    }
    return 0;
}

static int map_iteration(size_t i, void *ctx)
{
    map_run *m = ctx;
    const map_job *j = m->job;
    uint64_t t0 = m->profiling ? weft__now_ns() : 0;
    size_t n_args = j->n_elems + j->n_caps;
    weft_tensor *stack_a[STACK_VALUES], *stack_r[STACK_VALUES];
    weft_tensor **args = n_args > STACK_VALUES ? weft__calloc(n_args, sizeof *args) : stack_a;
    weft_tensor **res = j->n_outs > STACK_VALUES ? weft__calloc(j->n_outs, sizeof *res) : stack_r;
    char inner[MAP_MSG_MAX];
    int rc = 0;
    if (!args || !res) {
        rc = weft__errorf(WEFT_ENOMEM, "out of memory");
        goto error;
    }
    memset(args, 0, j->n_elems * sizeof *args);
    memset(res, 0, j->n_outs * sizeof *res);
    for (size_t e = 0; e < j->n_elems; e++)
        if ((rc = weft__tensor_row(j->elems[e], (int64_t)i, &args[e])))
            goto error;
    for (size_t c = 0; c < j->n_caps; c++)
        args[j->n_elems + c] = j->caps[c];
    if ((rc = m->ops->invoke_n(j->concrete, args, n_args, res, j->n_outs)))
        goto error;
    for (size_t k = 0; k < j->n_outs; k++)
        if (!res[k]) {
            rc = weft__errorf(WEFT_EBODY, "the function returned no tensor");
            goto error;
        }
    rc = place_results(m, i, res);   /* records its own error */
    if (m->profiling && rc == 0) {
        char detail[32];
        snprintf(detail, sizeof detail, "iteration %zu", i);
        weft__profile_span(m->rt, "map", "map", t0, weft__now_ns(), detail);
    }
    goto done;
error:
    snprintf(inner, sizeof inner, "%s", weft_errmsg());
    rc = iter_fail(m, i, rc, inner);
done:
    for (size_t e = 0; args && e < j->n_elems; e++)
        weft_tensor_release(args[e]);
    for (size_t k = 0; res && k < j->n_outs; k++)
        weft_tensor_release(res[k]);
    if (args != stack_a)
        weft__free(args);
    if (res != stack_r)
        weft__free(res);
    return rc;
}

/* The rows of every input (they must agree) and their slice specs. */
static int slice_inputs(map_run *m)
{
    const map_job *j = m->job;
    for (size_t e = 0; e < j->n_elems; e++) {
        const weft_tensor *t = j->elems[e];
        map_in *in = &m->ins[e];
        if (t->rank < 1)
            return j->n_elems == 1
                       ? weft__errorf(WEFT_ESHAPE, "%s: elems must have rank >= 1, got a scalar",
                                      j->who)
                       : weft__errorf(WEFT_ESHAPE, "%s: elems %zu is a scalar", j->who, e);
        if (e == 0)
            m->n = t->dims[0];
        else if (t->dims[0] != m->n)
            return weft__errorf(WEFT_ESHAPE, "%s: elems %zu has %lld rows, elems 0 has %lld",
                                j->who, e, (long long)t->dims[0], (long long)m->n);
        in->slice.dtype = t->dtype;
        in->slice.rank = t->rank - 1;
        memset(in->slice.dims, 0, sizeof in->slice.dims);
        memcpy(in->slice.dims, t->dims + 1, (size_t)in->slice.rank * sizeof in->slice.dims[0]);
    }
    return 0;
}

/* Allocates the outputs before the loop when the patterns know their
 * specs; with no iterations and unknown dims, no result can tell them:
 * fn is resolved for the actual specs, as eager mode does. */
static int alloc_upfront(map_run *m)
{
    const map_job *j = m->job;
    weft_spec stack_i[STACK_VALUES];
    weft_spec *items = j->n_outs > STACK_VALUES ? weft__calloc(j->n_outs, sizeof *items) : stack_i;
    if (!items)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory", j->who);
    bool known = true;
    for (size_t k = 0; k < j->n_outs && known; k++)
        known = pattern_item(&j->patterns[k], &items[k]);
    int rc = 0;
    if (!known && m->n == 0)
        rc = empty_items(m, items);
    if (rc == 0 && (known || m->n == 0)) {
        for (size_t k = 0; k < j->n_outs && rc == 0; k++)
            rc = alloc_out(m, k, &items[k]);
        if (rc == 0)
            __atomic_store_n(&m->ready, true, __ATOMIC_RELAXED);
    }
    if (items != stack_i)
        weft__free(items);
    return rc;
}

static int map_job_run(weft_runtime *rt, const map_job *j, weft_tensor **outs)
{
    map_run m;
    map_in stack_in[STACK_VALUES];
    map_out stack_out[STACK_VALUES];
    int rc;
    memset(&m, 0, sizeof m);
    m.rt = rt;
    m.job = j;
    m.ops = weft__callee_of(j->fn)->ops;
    m.profiling = weft__profiling(rt);
    m.ins = j->n_elems <= STACK_VALUES ? stack_in : weft__malloc(j->n_elems * sizeof *m.ins);
    m.outs = j->n_outs <= STACK_VALUES ? stack_out : weft__malloc(j->n_outs * sizeof *m.outs);
    if (m.outs)
        memset(m.outs, 0, (j->n_outs <= STACK_VALUES ? STACK_VALUES : j->n_outs) * sizeof *m.outs);
    pthread_mutex_init(&m.lock, NULL);
    m.ready = false;
    if (!m.ins || !m.outs) {
        rc = weft__errorf(WEFT_ENOMEM, "%s: out of memory", j->who);
        goto done;
    }
    if ((rc = slice_inputs(&m)) || (rc = alloc_upfront(&m)))
        goto done;
    if (m.n > 0) {
        rc = weft_parallel_map(rt, (size_t)m.n, j->parallel_iterations, map_iteration, &m);
        if (m.failed) {
            rc = weft__errorf(m.err, "%s", m.msg);
            goto done;
        }
        if (rc)
            goto done;   /* the loop itself failed (canceled): its message stands */
    }
    for (size_t k = 0; k < j->n_outs; k++) {
        outs[k] = m.outs[k].t;
        m.outs[k].t = NULL;
    }
done:
    if (m.outs)
        release_outs(&m);
    if (m.ins != stack_in)
        weft__free(m.ins);
    if (m.outs != stack_out)
        weft__free(m.outs);
    pthread_mutex_destroy(&m.lock);
    return rc;
}

int weft__map_run(weft_runtime *rt, const weft__node *n, weft_tensor *elems, weft_tensor **out)
{
    if (!rt || !n || !elems || !out || !n->attr.map.fn)
        return weft__errorf(WEFT_EINVAL, "weft_map: missing runtime, node, input or output");
    *out = NULL;
    map_job j = { .who = "weft_map", .fn = n->attr.map.fn, .concrete = n->attr.map.concrete,
                  .parallel_iterations = n->attr.map.parallel_iterations, .elems = &elems,
                  .n_elems = 1, .patterns = &n->spec, .n_outs = 1 };
    return map_job_run(rt, &j, out);
}

int weft__map_ex_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                     weft_tensor **outs)
{
    const struct weft__multi *mu = n->attr.multi.m;
    map_job j = { .who = "weft_map_ex", .fn = mu->fn[0], .concrete = mu->concrete[0],
                  .parallel_iterations = mu->parallel_iterations, .elems = in,
                  .n_elems = mu->n_mapped, .caps = in + mu->n_mapped,
                  .n_caps = n->n_in - mu->n_mapped, .patterns = mu->outs, .n_outs = mu->n_outs };
    return map_job_run(rt, &j, outs);
}

bool weft__slice_spec(weft_ctx *cx, const char *who, const char *what, const weft_spec *es,
                      weft_spec *slice)
{
    char a[WEFT__SPEC_STR_MAX];
    memset(slice, 0, sizeof *slice);
    slice->dtype = es->dtype;
    if (es->rank == WEFT_RANK_ANY) {
        slice->rank = WEFT_RANK_ANY;
        return true;
    }
    if (es->rank < 1) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s must have rank >= 1, got %s", who, what,
                       weft__spec_str(es, a, sizeof a));
        return false;
    }
    slice->rank = es->rank - 1;
    memcpy(slice->dims, es->dims + 1, (size_t)slice->rank * sizeof slice->dims[0]);
    return true;
}

bool weft__stacked_spec(weft_ctx *cx, const char *who, const weft_spec *out, int64_t rows,
                        weft_spec *res)
{
    char a[WEFT__SPEC_STR_MAX];
    memset(res, 0, sizeof *res);
    res->dtype = out->dtype;
    if (out->rank == WEFT_RANK_ANY) {
        res->rank = WEFT_RANK_ANY;
        return true;
    }
    if (out->rank + 1 > WEFT_MAX_RANK) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: fn returns %s; stacking it would exceed rank %d", who,
                       weft__spec_str(out, a, sizeof a), WEFT_MAX_RANK);
        return false;
    }
    res->rank = out->rank + 1;
    res->dims[0] = rows;
    memcpy(res->dims + 1, out->dims, (size_t)out->rank * sizeof out->dims[0]);
    return true;
}

static int64_t rows_of(const weft_spec *es)
{
    return es->rank >= 1 ? es->dims[0] : WEFT_DIM_ANY;
}

/* Resolves fn for the slice spec of elems and either runs the map (eager)
 * or records a MAP node (tracing). */
weft_value *weft_map(weft_ctx *cx, weft_function *fn, weft_value *elems,
                     unsigned parallel_iterations)
{
    static const char *who = "weft_map";
    char msg[MAP_MSG_MAX];
    weft_spec slice, out_spec;
    void *concrete = NULL;
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_map: NULL context");
        return NULL;
    }
    if (!weft__ctx_check_inputs(cx, who, &elems, 1))
        return NULL;
    if (!fn)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_map: fn is NULL");
    const weft_spec *es = weft__value_spec(elems);
    if (!weft__slice_spec(cx, who, "elems", es, &slice))
        return NULL;
    if (weft__grad_taping(cx) && rows_of(es) > 0) {
        weft_value *out = NULL;
        weft__unroll_rows(cx, fn, 0, NULL, 0, &elems, 1, NULL, 0, rows_of(es), &out, 1);
        return out;
    }

    const weft__callee_ops *ops = weft__callee_of(fn)->ops;
    int rc = ops->resolve(fn, &slice, &concrete, &out_spec);
    if (rc) {
        snprintf(msg, sizeof msg, "%s", resolve_msg(who, weft_errmsg()));
        return weft__ctx_fail(cx, rc, "weft_map: %s", msg);
    }
    weft__node node;
    memset(&node, 0, sizeof node);
    if (!weft__stacked_spec(cx, who, &out_spec, rows_of(es), &node.spec)) {
        ops->release(concrete);
        return NULL;
    }
    node.op = WEFT__OP_MAP;
    /* A map of a function that makes host calls is a side effect itself:
     * DCE keeps it and it is ordered among the host calls. */
    if (ops->side_effects && ops->side_effects(concrete))
        node.flags = WEFT__NODE_SIDE_EFFECT;
    node.after = WEFT__NO_NODE;
    node.attr.map.fn = fn;
    node.attr.map.concrete = concrete;
    node.attr.map.parallel_iterations = parallel_iterations;

    if (!weft__ctx_is_eager(cx))
        return weft__ctx_record(cx, &node, &elems, 1);  /* the graph owns concrete now */

    weft_tensor *res = NULL;
    rc = weft__map_run(weft__ctx_runtime(cx), &node, weft__value_tensor(elems), &res);
    ops->release(concrete);
    if (rc) {
        snprintf(msg, sizeof msg, "%s", weft_errmsg());
        return weft__ctx_fail(cx, rc, "%s", msg);
    }
    return weft__ctx_wrap(cx, res);
}

bool weft__shared_rows(weft_ctx *cx, const char *who, weft_value *const *elems, size_t n,
                       int64_t *rows)
{
    *rows = WEFT_DIM_ANY;
    size_t from = 0;
    for (size_t e = 0; e < n; e++) {
        int64_t r = rows_of(weft__value_spec(elems[e]));
        if (r == WEFT_DIM_ANY)
            continue;
        if (*rows != WEFT_DIM_ANY && r != *rows) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: elems %zu has %lld rows, elems %zu has %lld", who,
                           e, (long long)r, from, (long long)*rows);
            return false;
        }
        if (*rows == WEFT_DIM_ANY) {
            *rows = r;
            from = e;
        }
    }
    return true;
}

int weft_map_ex(weft_ctx *cx, weft_function *fn, weft_value *const *elems, size_t n_elems,
                weft_value *const *captures, size_t n_captures, weft_value **outs, size_t n_outs,
                unsigned parallel_iterations)
{
    static const char *who = "weft_map_ex";
    int rc = weft__ctx_enter_int(cx, who, elems, n_elems, outs, n_outs);
    if (rc < 0)
        return rc;
    if ((rc = weft__check_fn_captures(cx, who, fn, captures, n_captures)) < 0)
        return rc;
    if (n_elems == 0)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: nothing to map (n_elems is 0)", who);
    size_t n_in = n_elems + n_captures;
    weft_spec *specs = weft__malloc((n_in + n_outs) * sizeof *specs);
    weft_value **in = weft__malloc(n_in * sizeof *in);
    weft__node node;
    memset(&node, 0, sizeof node);
    struct weft__multi *m = weft__multi_new((uint32_t)n_outs);
    int64_t rows;
    if (!specs || !in || !m) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
        goto done;
    }
    for (size_t e = 0; e < n_elems; e++) {
        char what[32];
        snprintf(what, sizeof what, "elems %zu", e);
        if (!weft__slice_spec(cx, who, what, weft__value_spec(elems[e]), &specs[e]))
            goto sticky;
        in[e] = elems[e];
    }
    for (size_t c = 0; c < n_captures; c++) {
        specs[n_elems + c] = *weft__value_spec(captures[c]);
        in[n_elems + c] = captures[c];
    }
    if (!weft__shared_rows(cx, who, elems, n_elems, &rows))
        goto sticky;
    if (weft__grad_taping(cx) && rows > 0) {
        rc = weft__unroll_rows(cx, fn, 0, NULL, 0, elems, n_elems, captures, n_captures, rows,
                               outs, n_outs);
        goto done;
    }
    m->fn[0] = fn;
    weft_spec *got = specs + n_in;
    rc = weft__callee_of(fn)->ops->resolve_n(fn, who, specs, n_in, n_outs, &m->concrete[0], got);
    if (rc) {
        char msg[MAP_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", resolve_msg(who, weft_errmsg()));
        rc = weft__ctx_failf(cx, rc, "%s: %s", who, msg);
        goto done;
    }
    for (size_t k = 0; k < n_outs; k++)
        if (!weft__stacked_spec(cx, who, &got[k], rows, &m->outs[k]))
            goto sticky;
    const weft__callee_ops *ops = weft__callee_of(fn)->ops;
    node.op = WEFT__OP_MAP_EX;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    node.flags = ops->side_effects && ops->side_effects(m->concrete[0]) ? WEFT__NODE_SIDE_EFFECT : 0;
    m->n_mapped = (uint32_t)n_elems;
    m->parallel_iterations = parallel_iterations;
    node.attr.multi.m = m;
    m = NULL;   /* emit takes it over */
    rc = weft__multi_emit(cx, &node, in, (uint32_t)n_in, outs);
    goto done;
sticky:
    rc = weft_ctx_status(cx);
done:
    weft__multi_free(m);
    weft__free(specs);
    weft__free(in);
    return rc;
}
