/* weft_host_call (py_function): a C callback run on every execution.  In
 * tracing mode it records a HOST node flagged as a side effect (so DCE keeps
 * it) whose ordering edge to the previous host call keeps program order.
 * weft__host_run calls the callback and checks what it returns.
 * weft_host_call_ex is the same with any number of outputs: a CONTROL
 * node (trace/control.h) whose results are read by RESULT nodes. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
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
    uintptr_t key;                 /* (atomic) */
    pthread_mutex_t mu;
    uintptr_t owner;               /* (atomic) */
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
        uintptr_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (k == key)
            return e;
        if (k == 0)
            break;
    }
    pthread_mutex_lock(&serial_table_lock);
    serial_entry *found = NULL;
    for (size_t probe = 0; probe < SERIAL_SLOTS && !found; probe++) {
        serial_entry *e = &serial_table[(start + probe) % SERIAL_SLOTS];
        uintptr_t k = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
        if (k == key) {
            found = e;
        } else if (k == 0) {
            pthread_mutex_init(&e->mu, NULL);
            __atomic_store_n(&e->owner, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
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

/* Calls thunk(arg) (which calls a callback, whose return lands in *cb_rc)
 * under the WEFT_HOST_SERIAL lock of key when flags ask for it, with its
 * timeline span; a non-zero callback return is WEFT_EHOST. */
static int host_invoke(weft_runtime *rt, const char *who, uintptr_t key, unsigned flags,
                       int (*thunk)(void *arg), void *arg, int *cb_rc)
{
    serial_entry *serial = NULL;
    if (flags & WEFT_HOST_SERIAL) {
        serial = serial_find(key);
        if (!serial)
            return weft__errorf(WEFT_EAGAIN, "%s: more than %d distinct "
                                "WEFT_HOST_SERIAL callbacks", who, SERIAL_SLOTS);
        if (__atomic_load_n(&serial->owner, __ATOMIC_RELAXED) == self_id())
            return weft__errorf(WEFT_EHOST, "%s: a WEFT_HOST_SERIAL callback "
                                "was re-entered on the thread running it", who);
        pthread_mutex_lock(&serial->mu);
        __atomic_store_n(&serial->owner, self_id(), __ATOMIC_RELAXED);
    }
    bool profiling = weft__profiling(rt);
    uint64_t t0 = profiling ? weft__now_ns() : 0;
    /* Holding the lock, this thread must not wait for stolen work (it would
     * run other tasks meanwhile, which may need the lock): what the
     * callback starts through weft runs inline. */
    if (serial)
        weft__inline_enter();
    *cb_rc = thunk(arg);
    if (serial)
        weft__inline_leave();
    uint64_t t1 = profiling ? weft__now_ns() : 0;
    if (serial) {
        __atomic_store_n(&serial->owner, 0, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&serial->mu);
    }
    if (profiling)
        weft__profile_span(rt, "host", "host call", t0, t1,
                           serial ? "serial" : NULL);
    if (*cb_rc != 0)
        return weft__errorf(WEFT_EHOST, "%s: callback returned %d", who, *cb_rc);
    return 0;
}

/* Checks what a callback stored for an output of spec want; index -1
 * for the only output of weft_host_call. */
static int check_out(const char *who, long index, const weft_spec *want, const weft_tensor *res)
{
    char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX], which[32] = "";
    if (!res) {
        if (index >= 0)
            snprintf(which, sizeof which, " %ld", index);
        return weft__errorf(WEFT_EHOST, "%s: callback returned 0 but stored no output%s "
                            "(expected %s)", who, which, weft__spec_str(want, a, sizeof a));
    }
    weft_spec got;
    weft__tensor_spec(res, &got);
    if (!weft__spec_matches(want, &got)) {
        if (index >= 0)
            snprintf(which, sizeof which, " for output %ld", index);
        return weft__errorf(got.dtype != want->dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                            "%s: callback returned %s%s, expected %s", who,
                            weft__spec_str(&got, a, sizeof a), which,
                            weft__spec_str(want, b, sizeof b));
    }
    return 0;
}

/* What a thunk passes to a HOST or HOST_EX node's callback. */
typedef struct host_call_arg {
    const weft__node *n;
    weft_tensor *const *in;
    weft_tensor **out;
} host_call_arg;

static int host_thunk(void *arg)
{
    host_call_arg *h = arg;
    return h->n->attr.host.fn(h->in, h->n->n_in, h->out, h->n->attr.host.user);
}

int weft__host_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in, weft_tensor **out)
{
    weft_tensor *res = NULL;
    int cb;
    if (!n || !out || !n->attr.host.fn || (n->n_in > 0 && !in))
        return weft__errorf(WEFT_EINVAL, "weft_host_call: missing node, callback, inputs or output");
    *out = NULL;
    host_call_arg h = { n, in, &res };
    int rc = host_invoke(rt, "weft_host_call", (uintptr_t)n->attr.host.fn,
                               n->attr.host.flags, host_thunk, &h, &cb);
    if (rc == 0)
        rc = check_out("weft_host_call", -1, &n->spec, res);
    if (rc) {
        weft_tensor_release(res);
        return rc;
    }
    *out = res;
    return 0;
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

/* ---- weft_host_call_ex: several outputs ---- */

static int host_ex_thunk(void *arg)
{
    host_call_arg *h = arg;
    const struct weft__multi *m = h->n->attr.multi.m;
    return m->host_fn(h->in, h->n->n_in, h->out, m->n_outs, m->host_user);
}

int weft__host_ex_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                      weft_tensor **outs)
{
    static const char *who = "weft_host_call_ex";
    const struct weft__multi *m = n->attr.multi.m;
    int cb;
    host_call_arg h = { n, in, outs };
    int rc = host_invoke(rt, who, (uintptr_t)m->host_fn, m->host_flags, host_ex_thunk, &h, &cb);
    for (uint32_t k = 0; k < m->n_outs && rc == 0; k++)
        rc = check_out(who, (long)k, &m->outs[k], outs[k]);
    if (rc)
        for (uint32_t k = 0; k < m->n_outs; k++) {
            weft_tensor_release(outs[k]);
            outs[k] = NULL;
        }
    return rc;
}

int weft_host_call_ex(weft_ctx *cx, weft_host_fn_ex fn, void *user, weft_value *const *in,
                      size_t n_in, const weft_spec *out_specs, size_t n_out, weft_value **outs,
                      unsigned flags)
{
    static const char *who = "weft_host_call_ex";
    int rc = weft__ctx_enter_int(cx, who, in, n_in, outs, n_out);
    if (rc < 0)
        return rc;
    if (!fn)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: fn is NULL", who);
    if (!out_specs && n_out)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: out_specs is NULL but n_out is %zu", who,
                               n_out);
    for (size_t k = 0; k < n_out; k++)
        if (!spec_valid(&out_specs[k]))
            return weft__ctx_failf(cx, WEFT_EINVAL, "%s: out_specs[%zu] is invalid (dtype %d, "
                                   "rank %d)", who, k, (int)out_specs[k].dtype, out_specs[k].rank);
    if (flags & ~WEFT_HOST_SERIAL)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: unknown flags 0x%x", who, flags);
    weft__node node;
    memset(&node, 0, sizeof node);
    struct weft__multi *m = weft__multi_new((uint32_t)n_out);
    if (!m)
        return weft__ctx_failf(cx, WEFT_ENOMEM, "%s: out of memory", who);
    for (size_t k = 0; k < n_out; k++) {
        m->outs[k] = out_specs[k];
        if (m->outs[k].rank == WEFT_RANK_ANY)
            memset(m->outs[k].dims, 0, sizeof m->outs[k].dims);
    }
    m->host_fn = fn;
    m->host_user = user;
    m->host_flags = flags;
    node.op = WEFT__OP_HOST_EX;
    node.flags = WEFT__NODE_SIDE_EFFECT;
    node.after = WEFT__NO_NODE;
    node.spec.dtype = WEFT_BOOL;
    node.attr.multi.m = m;
    return weft__multi_emit(cx, &node, in, (uint32_t)n_in, outs);
}
