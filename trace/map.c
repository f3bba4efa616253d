/* weft_map (map_fn): one function applied to every slice of a tensor along
 * dim 0, the results stacked along a new dim 0.  The function is resolved
 * (traced at most once) for the slice spec when the op is recorded or run
 * eagerly; weft__map_run runs the iterations through weft_parallel_map, so
 * at most parallel_iterations are in flight and the workers steal them. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/sidefx.h"
#include "trace/tensor_impl.h"

#define MAP_MSG_MAX 400

/* The state one weft__map_run shares among its iterations. */
typedef struct map_run {
    weft_runtime *rt;
    const weft__callee_ops *ops;
    void *concrete;
    const weft_spec *pattern;      /* the node's spec: [n] + the fn's out spec */
    const weft_tensor *elems;
    int64_t n;
    weft_spec slice;               /* elems' spec minus dim 0 */
    size_t slice_bytes;
    bool profiling;

    pthread_mutex_t lock;          /* allocating out, recording the error */
    _Atomic(weft_tensor *) out;    /* allocated once the iteration spec is known */
    weft_spec item;                /* one result's spec (set before out is published) */
    char *out_data;
    size_t item_bytes;

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
        int k = snprintf(m->msg, sizeof m->msg, "weft_map: iteration %zu: ", i);
        size_t at = k > 0 && (size_t)k < sizeof m->msg ? (size_t)k : 0;
        size_t len = strnlen(inner, sizeof m->msg - 1 - at);
        memcpy(m->msg + at, inner, len);
        m->msg[at + len] = '\0';
    }
    pthread_mutex_unlock(&m->lock);
    return code;
}

/* Allocates the stacked output for results of spec item.  Called with
 * m->lock held or before the loop starts. */
static int alloc_out(map_run *m, const weft_spec *item)
{
    int64_t dims[WEFT_MAX_RANK];
    int64_t numel;
    if (item->rank < 0 || item->rank + 1 > WEFT_MAX_RANK)
        return weft__errorf(WEFT_ESHAPE, "weft_map: a result of rank %d cannot be stacked "
                            "(rank %d at most)", item->rank, WEFT_MAX_RANK - 1);
    dims[0] = m->n;
    memcpy(dims + 1, item->dims, (size_t)item->rank * sizeof dims[0]);
    if (!weft__numel_checked(item->rank, item->dims, weft_dtype_size(item->dtype), &numel))
        return weft__errorf(WEFT_ESHAPE, "weft_map: result too large");
    weft_tensor *out = NULL;
    int rc = weft__tensor_new(item->dtype, item->rank + 1, dims, &out);
    if (rc)
        return rc;
    m->item = *item;
    m->item_bytes = (size_t)numel * weft_dtype_size(item->dtype);
    m->out_data = weft__tensor_mut(out);
    atomic_store_explicit(&m->out, out, memory_order_release);
    return 0;
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

/* A resolve error as the tail of a "weft_map: " message (the callee's own
 * messages may already start so). */
static const char *resolve_msg(const char *msg)
{
    static const char prefix[] = "weft_map: ";
    return strncmp(msg, prefix, sizeof prefix - 1) == 0 ? msg + sizeof prefix - 1 : msg;
}

/* The spec of one result of a map over zero rows whose pattern leaves
 * dims unknown: fn's output spec for m->slice, with dims still unknown (a
 * host call's) as 0. */
static int empty_item(const map_run *m, weft_function *fn, weft_spec *item)
{
    char msg[MAP_MSG_MAX];
    void *concrete = NULL;
    weft_spec spec;
    int rc = m->ops->resolve(fn, &m->slice, &concrete, &spec);
    if (rc) {
        snprintf(msg, sizeof msg, "%s", resolve_msg(weft_errmsg()));
        return weft__errorf(rc, "weft_map: %s", msg);
    }
    m->ops->release(concrete);
    item->dtype = spec.dtype;
    item->rank = spec.rank < 0 ? 0 : spec.rank;
    memset(item->dims, 0, sizeof item->dims);
    for (int d = 0; d < item->rank; d++)
        item->dims[d] = spec.dims[d] < 0 ? 0 : spec.dims[d];
    return 0;
}

/* Checks result r of iteration i and, for the first one, allocates out. */
static int place_result(map_run *m, size_t i, const weft_tensor *r)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX], inner[MAP_MSG_MAX];
    weft_spec rs;
    weft__tensor_spec(r, &rs);
    if (!atomic_load_explicit(&m->out, memory_order_acquire)) {
        pthread_mutex_lock(&m->lock);
        int rc = 0;
        if (!atomic_load_explicit(&m->out, memory_order_relaxed)) {
            weft_spec want;
            want.dtype = m->pattern->dtype;
            want.rank = m->pattern->rank < 0 ? WEFT_RANK_ANY : m->pattern->rank - 1;
            memset(want.dims, 0, sizeof want.dims);
            for (int d = 1; d < m->pattern->rank; d++)
                want.dims[d - 1] = m->pattern->dims[d];
            if (!weft__spec_matches(&want, &rs))
                rc = weft__errorf(rs.dtype != want.dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                                  "result %s does not match the function's output spec %s",
                                  weft__spec_str(&rs, a, sizeof a),
                                  weft__spec_str(&want, b, sizeof b));
            else
                rc = alloc_out(m, &rs);
            if (rc) {
                snprintf(inner, sizeof inner, "%s", weft_errmsg());
                pthread_mutex_unlock(&m->lock);
                return iter_fail(m, i, rc, inner);
            }
        }
        pthread_mutex_unlock(&m->lock);
    }
    if (!weft__spec_equal(&rs, &m->item)) {
        snprintf(inner, sizeof inner, "result %s does not match %s of the other iterations",
                 weft__spec_str(&rs, a, sizeof a), weft__spec_str(&m->item, b, sizeof b));
        return iter_fail(m, i, rs.dtype != m->item.dtype ? WEFT_EDTYPE : WEFT_ESHAPE, inner);
    }
    if (m->item_bytes)
        memcpy(m->out_data + i * m->item_bytes, weft_tensor_data(r), m->item_bytes);
    return 0;
}

static int map_iteration(size_t i, void *ctx)
{
    map_run *m = ctx;
    uint64_t t0 = m->profiling ? weft__now_ns() : 0;
    weft_tensor *slice = NULL, *r = NULL;
    char inner[MAP_MSG_MAX];
    int rc = weft__tensor_new(m->slice.dtype, m->slice.rank, m->slice.dims, &slice);
    if (rc)
        goto error;
    if (m->slice_bytes)
        memcpy(weft__tensor_mut(slice),
               (const char *)weft_tensor_data(m->elems) + i * m->slice_bytes, m->slice_bytes);
    rc = m->ops->invoke(m->concrete, slice, &r);
    if (rc)
        goto error;
    if (!r) {
        rc = weft__errorf(WEFT_EBODY, "the function returned no tensor");
        goto error;
    }
    weft_tensor_release(slice);
    rc = place_result(m, i, r);   /* records its own error */
    weft_tensor_release(r);
    if (m->profiling) {
        char detail[32];
        snprintf(detail, sizeof detail, "iteration %zu", i);
        weft__profile_span(m->rt, "map", "map", t0, weft__now_ns(), detail);
    }
    return rc;
error:
    snprintf(inner, sizeof inner, "%s", weft_errmsg());
    weft_tensor_release(slice);
    weft_tensor_release(r);
    return iter_fail(m, i, rc, inner);
}

int weft__map_run(weft_runtime *rt, const weft__node *n, weft_tensor *elems, weft_tensor **out)
{
    map_run m;
    weft_spec item;
    int rc;
    if (!rt || !n || !elems || !out || !n->attr.map.fn)
        return weft__errorf(WEFT_EINVAL, "weft_map: missing runtime, node, input or output");
    *out = NULL;
    if (elems->rank < 1)
        return weft__errorf(WEFT_ESHAPE, "weft_map: elems must have rank >= 1, got a scalar");
    memset(&m, 0, sizeof m);
    m.rt = rt;
    m.ops = weft__callee_of(n->attr.map.fn)->ops;
    m.concrete = n->attr.map.concrete;
    m.pattern = &n->spec;
    m.elems = elems;
    m.n = elems->dims[0];
    m.slice.dtype = elems->dtype;
    m.slice.rank = elems->rank - 1;
    memcpy(m.slice.dims, elems->dims + 1, (size_t)m.slice.rank * sizeof m.slice.dims[0]);
    m.slice_bytes = m.n ? elems->nbytes / (size_t)m.n : 0;
    m.profiling = weft__profiling(rt);
    pthread_mutex_init(&m.lock, NULL);
    atomic_init(&m.out, NULL);

    /* Allocate up front when the result spec is known.  With no
     * iterations and unknown dims, no result can tell them: resolve fn for
     * the actual slice spec, as eager mode does, and take its output spec
     * (dims still unknown then become 0). */
    if (pattern_item(&n->spec, &item)) {
        rc = alloc_out(&m, &item);
    } else if (m.n == 0) {
        rc = empty_item(&m, n->attr.map.fn, &item);
        if (!rc)
            rc = alloc_out(&m, &item);
    } else {
        rc = 0;
    }
    if (rc)
        goto error;
    if (m.n > 0) {
        rc = weft_parallel_map(rt, (size_t)m.n, n->attr.map.parallel_iterations, map_iteration, &m);
        if (m.failed) {
            rc = weft__errorf(m.err, "%s", m.msg);
            goto error;
        }
        if (rc)
            goto error;   /* the loop itself failed (canceled): its message stands */
    }
    *out = atomic_load_explicit(&m.out, memory_order_acquire);
    pthread_mutex_destroy(&m.lock);
    return 0;
error:
    weft_tensor_release(atomic_load_explicit(&m.out, memory_order_acquire));
    pthread_mutex_destroy(&m.lock);
    return rc;
}

/* Resolves fn for the slice spec of elems and either runs the map (eager)
 * or records a MAP node (tracing). */
weft_value *weft_map(weft_ctx *cx, weft_function *fn, weft_value *elems,
                     unsigned parallel_iterations)
{
    char a[WEFT__SPEC_STR_MAX], msg[MAP_MSG_MAX];
    weft_spec slice, out_spec;
    void *concrete = NULL;
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_map: NULL context");
        return NULL;
    }
    if (!weft__ctx_check_inputs(cx, "weft_map", &elems, 1))
        return NULL;
    if (!fn)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_map: fn is NULL");
    const weft_spec *es = weft__value_spec(elems);
    if (es->rank == WEFT_RANK_ANY)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "weft_map: elems has an unknown rank (%s); "
                              "dim 0 must exist", weft__spec_str(es, a, sizeof a));
    if (es->rank < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "weft_map: elems must have rank >= 1, got %s",
                              weft__spec_str(es, a, sizeof a));
    slice.dtype = es->dtype;
    slice.rank = es->rank - 1;
    memset(slice.dims, 0, sizeof slice.dims);
    memcpy(slice.dims, es->dims + 1, (size_t)slice.rank * sizeof slice.dims[0]);

    const weft__callee_ops *ops = weft__callee_of(fn)->ops;
    int rc = ops->resolve(fn, &slice, &concrete, &out_spec);
    if (rc) {
        snprintf(msg, sizeof msg, "%s", resolve_msg(weft_errmsg()));
        return weft__ctx_fail(cx, rc, "weft_map: %s", msg);
    }
    if (out_spec.rank != WEFT_RANK_ANY && out_spec.rank + 1 > WEFT_MAX_RANK) {
        ops->release(concrete);
        return weft__ctx_fail(cx, WEFT_ESHAPE, "weft_map: fn returns %s; stacking it would "
                              "exceed rank %d", weft__spec_str(&out_spec, a, sizeof a),
                              WEFT_MAX_RANK);
    }

    weft__node node;
    memset(&node, 0, sizeof node);
    node.op = WEFT__OP_MAP;
    /* A map of a function that makes host calls is a side effect itself:
     * DCE keeps it and it is ordered among the host calls. */
    if (ops->side_effects && ops->side_effects(concrete))
        node.flags = WEFT__NODE_SIDE_EFFECT;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = out_spec.dtype;
    if (out_spec.rank == WEFT_RANK_ANY) {
        node.spec.rank = WEFT_RANK_ANY;
    } else {
        node.spec.rank = out_spec.rank + 1;
        node.spec.dims[0] = es->dims[0];
        memcpy(node.spec.dims + 1, out_spec.dims, (size_t)out_spec.rank * sizeof out_spec.dims[0]);
    }
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
