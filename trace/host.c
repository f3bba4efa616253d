/* weft_host_call (py_function): a C callback run on every execution.  In
 * tracing mode it records a HOST node flagged as a side effect (so DCE keeps
 * it) whose ordering edge to the previous host call keeps program order.
 * weft__host_run calls the callback and checks what it returns. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/sidefx.h"
#include "trace/tensor_impl.h"

/* WEFT_HOST_SERIAL callbacks each get their own mutex, found in a small
 * process-wide open-addressing table keyed by the exact fn pointer.
 * Entries are added under table_lock and never removed, so lookups need no
 * lock (the key is published with release after its mutex is ready).
 * `owner` catches a serial callback re-entered on the thread that runs it
 * (it would wait for itself). */
#define SERIAL_SLOTS 512

typedef struct serial_entry {
    _Atomic(uintptr_t) key;
    pthread_mutex_t mu;
    _Atomic(uintptr_t) owner;
} serial_entry;

static serial_entry serial_table[SERIAL_SLOTS];
static pthread_mutex_t serial_table_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t serial_hash(uintptr_t k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) % SERIAL_SLOTS;
}

static serial_entry *serial_find(uintptr_t key)
{
    size_t start = serial_hash(key);
    for (size_t probe = 0; probe < SERIAL_SLOTS; probe++) {
        serial_entry *e = &serial_table[(start + probe) % SERIAL_SLOTS];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == key)
            return e;
        if (k == 0)
            break;
    }
    pthread_mutex_lock(&serial_table_lock);
    serial_entry *found = NULL;
    for (size_t probe = 0; probe < SERIAL_SLOTS && !found; probe++) {
        serial_entry *e = &serial_table[(start + probe) % SERIAL_SLOTS];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
        if (k == key) {
            found = e;
        } else if (k == 0) {
            pthread_mutex_init(&e->mu, NULL);
            atomic_store_explicit(&e->owner, 0, memory_order_relaxed);
            atomic_store_explicit(&e->key, key, memory_order_release);
            found = e;
        }
    }
    pthread_mutex_unlock(&serial_table_lock);
    return found;
}

static uintptr_t self_id(void)
{
    /* The address of a thread-local is unique among live threads. */
    static _Thread_local char marker;
    return (uintptr_t)&marker;
}

static int spec_valid(const weft_spec *s)
{
    if (weft_dtype_size(s->dtype) == 0)
        return 0;
    if (s->rank == WEFT_RANK_ANY)
        return 1;
    if (s->rank < 0 || s->rank > WEFT_MAX_RANK)
        return 0;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0 && s->dims[d] != WEFT_DIM_ANY)
            return 0;
    return 1;
}

int weft__host_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in, weft_tensor **out)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
    serial_entry *serial = NULL;
    weft_tensor *res = NULL;
    int rc;
    if (!n || !out || !n->attr.host.fn || (n->n_in > 0 && !in))
        return weft__errorf(WEFT_EINVAL, "weft_host_call: missing node, callback, inputs or output");
    *out = NULL;
    if (n->attr.host.flags & WEFT_HOST_SERIAL) {
        serial = serial_find((uintptr_t)n->attr.host.fn);
        if (!serial)
            return weft__errorf(WEFT_EAGAIN, "weft_host_call: more than %d distinct "
                                "WEFT_HOST_SERIAL callbacks", SERIAL_SLOTS);
        if (atomic_load_explicit(&serial->owner, memory_order_relaxed) == self_id())
            return weft__errorf(WEFT_EHOST, "weft_host_call: a WEFT_HOST_SERIAL callback "
                                "was re-entered on the thread running it");
        pthread_mutex_lock(&serial->mu);
        atomic_store_explicit(&serial->owner, self_id(), memory_order_relaxed);
    }
    bool profiling = weft__profiling(rt);
    uint64_t t0 = profiling ? weft__now_ns() : 0;
    /* Holding the lock, this thread must not wait for stolen work (it would
     * run other tasks meanwhile, which may need the lock): what the
     * callback starts through weft runs inline. */
    if (serial)
        weft__inline_enter();
    int cb = n->attr.host.fn(in, n->n_in, &res, n->attr.host.user);
    if (serial)
        weft__inline_leave();
    uint64_t t1 = profiling ? weft__now_ns() : 0;
    if (serial) {
        atomic_store_explicit(&serial->owner, 0, memory_order_relaxed);
        pthread_mutex_unlock(&serial->mu);
    }
    if (profiling)
        weft__profile_span(rt, "host", "host call", t0, t1,
                           serial ? "serial" : NULL);
    if (cb != 0) {
        rc = weft__errorf(WEFT_EHOST, "weft_host_call: callback returned %d", cb);
        goto error;
    }
    if (!res) {
        rc = weft__errorf(WEFT_EHOST, "weft_host_call: callback returned 0 but stored no "
                          "output (expected %s)", weft__spec_str(&n->spec, a, sizeof a));
        goto error;
    }
    weft_spec got;
    weft__tensor_spec(res, &got);
    if (!weft__spec_matches(&n->spec, &got)) {
        rc = weft__errorf(got.dtype != n->spec.dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                          "weft_host_call: callback returned %s, expected %s",
                          weft__spec_str(&got, a, sizeof a), weft__spec_str(&n->spec, b, sizeof b));
        goto error;
    }
    *out = res;
    return 0;
error:
    weft_tensor_release(res);
    return rc;
}

weft_value *weft_host_call(weft_ctx *cx, weft_host_fn fn, void *user,
                           weft_value *const *in, size_t n_in,
                           const weft_spec *out_spec, unsigned flags)
{
    char msg[512];
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_host_call: NULL context");
        return NULL;
    }
    /* A failed context runs nothing more, with inputs or without. */
    if (weft_ctx_status(cx) != 0)
        return NULL;
    if (!fn)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_host_call: fn is NULL");
    if (!out_spec)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_host_call: out_spec is NULL");
    if (!spec_valid(out_spec))
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_host_call: out_spec is invalid "
                              "(dtype %d, rank %d)", (int)out_spec->dtype, out_spec->rank);
    if (n_in > 0 && !in)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_host_call: in is NULL but n_in is %zu", n_in);
    if (n_in > UINT32_MAX / 2)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_host_call: n_in %zu is too large", n_in);
    if (flags & ~WEFT_HOST_SERIAL)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_host_call: unknown flags 0x%x", flags);
    if (n_in > 0 && !weft__ctx_check_inputs(cx, "weft_host_call", in, n_in))
        return NULL;

    weft__node node;
    memset(&node, 0, sizeof node);
    node.op = WEFT__OP_HOST;
    node.flags = WEFT__NODE_SIDE_EFFECT;
    node.after = WEFT__NO_NODE;
    node.n_in = (uint32_t)n_in;
    node.spec = *out_spec;
    if (node.spec.rank == WEFT_RANK_ANY)
        memset(node.spec.dims, 0, sizeof node.spec.dims);
    node.attr.host.fn = fn;
    node.attr.host.user = user;
    node.attr.host.flags = flags;

    if (!weft__ctx_is_eager(cx))
        return weft__ctx_record(cx, &node, in, (uint32_t)n_in);

    weft_tensor *stack_in[8];
    weft_tensor **tin = stack_in;
    if (n_in > 8) {
        tin = weft__malloc(n_in * sizeof *tin);
        if (!tin)
            return weft__ctx_fail(cx, WEFT_ENOMEM, "weft_host_call: out of memory");
    }
    for (size_t i = 0; i < n_in; i++)
        tin[i] = weft__value_tensor(in[i]);
    weft_tensor *res = NULL;
    int rc = weft__host_run(weft__ctx_runtime(cx), &node, tin, &res);
    if (tin != stack_in)
        weft__free(tin);
    if (rc) {
        snprintf(msg, sizeof msg, "%s", weft_errmsg());
        return weft__ctx_fail(cx, rc, "%s", msg);
    }
    return weft__ctx_wrap(cx, res);
}
