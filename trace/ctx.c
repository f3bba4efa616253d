/* Contexts and values.  A context is eager (values hold tensors) or
 * tracing (values name nodes of a graph).  Values live in chunks owned by
 * the context so that their addresses stay put until it ends; a released
 * value's slot is used again once RELEASED_KEPT others were released after
 * it.  Errors are sticky: the first one is kept with its message, later
 * ops return NULL. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/tensor_impl.h"

struct weft_value {
    weft_ctx          *cx;
    uint32_t           id;     /* tracing: node id; eager: WEFT__NO_NODE */
    weft_tensor       *t;      /* eager: an owned reference */
    const weft_tensor *konst;  /* constants: their tensor (tracing: the graph's) */
    weft_spec          spec;
    bool               weak;      /* a weak scalar constant (takes the other operand's dtype) */
    bool               released;  /* weft_value_release was called: unusable */
    weft_value        *next_released;  /* the context's queue of released values */
};

#define CHUNK_VALUES 64
/* Released values wait in a queue this long before their slots are used
 * again: a long eager loop that releases what it drops then holds a
 * bounded number of slots, and a handle used soon after its release is
 * still caught ("was released"). */
#define RELEASED_KEPT 1024

struct value_chunk {
    struct value_chunk *next;
    unsigned            used;
    weft_value          v[CHUNK_VALUES];
};

#define CTX_MSG_SIZE 512

struct weft_ctx {
    weft_runtime       *rt;
    weft__graph        *g;      /* NULL: eager */
    const char         *name;
    bool                caller_owned;  /* from weft_eager_begin: weft_eager_end frees it */
    int                 status;
    char                msg[CTX_MSG_SIZE];
    struct value_chunk *chunks;
    weft_value         *released_head, *released_tail;  /* oldest first */
    size_t              n_released;
    /* Eager op scopes: the values made inside the open scopes, in order. */
    weft_value        **scope_log;
    size_t              scope_len, scope_cap;
    unsigned            scope_depth;
    size_t              held_bytes, peak_bytes;  /* eager: tensor bytes the values hold */
};

int weft__ctx_new(weft_runtime *rt, weft__graph *g, const char *name, weft_ctx **out)
{
    weft_ctx *cx = weft__calloc(1, sizeof *cx);
    if (!cx)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory for a context", name ? name : "weft");
    cx->rt = rt;
    cx->g = g;
    cx->name = name;
    *out = cx;
    return 0;
}

void weft__ctx_free(weft_ctx *cx)
{
    if (!cx)
        return;
    struct value_chunk *c = cx->chunks;
    while (c) {
        struct value_chunk *next = c->next;
        for (unsigned i = 0; i < c->used; i++)
            weft_tensor_release(c->v[i].t);
        weft__free(c);
        c = next;
    }
    weft__free(cx->scope_log);
    weft__free(cx);
}

size_t weft__ctx_value_slots(const weft_ctx *cx)
{
    size_t slots = 0;
    for (const struct value_chunk *c = cx->chunks; c; c = c->next)
        slots += c->used;
    return slots;
}

const weft__graph *weft__ctx_graph(const weft_ctx *cx)
{
    return cx->g;
}

bool weft__ctx_is_eager(const weft_ctx *cx)
{
    return cx->g == NULL;
}

weft_runtime *weft__ctx_runtime(const weft_ctx *cx)
{
    return cx->rt;
}

const char *weft__ctx_name(const weft_ctx *cx)
{
    return cx->name;
}

void weft__ctx_set_name(weft_ctx *cx, const char *name)
{
    cx->name = name;
}

const char *weft__ctx_errmsg(const weft_ctx *cx)
{
    return cx->msg;
}

static weft_value *ctx_vfail(weft_ctx *cx, int code, const char *fmt, va_list ap)
{
    if (cx->status == 0) {
        vsnprintf(cx->msg, sizeof cx->msg, fmt, ap);
        cx->status = code;
        /* While tracing, an op's error names the function and the node it
         * would have been ("f: %2 = weft_add: ..."), unless it already
         * starts with the function's name (a callee's own failure). */
        size_t nl = cx->name ? strlen(cx->name) : 0;
        if (cx->g && cx->name && strncmp(cx->msg, cx->name, nl) != 0) {
            char op[CTX_MSG_SIZE];
            memcpy(op, cx->msg, sizeof op);
            int k = snprintf(cx->msg, sizeof cx->msg, "%s: %%%u = ", cx->name,
                             (unsigned)cx->g->n_nodes);
            if (k > 0 && (size_t)k < sizeof cx->msg)
                snprintf(cx->msg + k, sizeof cx->msg - (size_t)k, "%.*s",
                         (int)(sizeof cx->msg - (size_t)k - 1), op);
        }
    }
    /* The thread's message always shows the sticky error. */
    weft__errorf(cx->status, "%s", cx->msg);
    return NULL;
}

weft_value *weft__ctx_fail(weft_ctx *cx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctx_vfail(cx, code, fmt, ap);
    va_end(ap);
    return NULL;
}

weft_value *weft__ctx_fail_errmsg(weft_ctx *cx, int code)
{
    /* Copied first: weft__errorf writes the buffer weft_errmsg() returns. */
    char msg[CTX_MSG_SIZE];
    snprintf(msg, sizeof msg, "%s", weft_errmsg());
    return weft__ctx_fail(cx, code, "%s", msg);
}

/* Whether in[i] is a live value of cx; records WEFT_EINVAL naming op
 * otherwise. */
static bool input_ok(weft_ctx *cx, const char *op, weft_value *const *in, size_t i)
{
    if (!in[i]) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: input %zu is NULL", op, i);
        return false;
    }
    if (in[i]->cx != cx) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: input %zu belongs to another context", op, i);
        return false;
    }
    if (in[i]->released) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: input %zu was released (weft_value_release)", op, i);
        return false;
    }
    return true;
}

bool weft__op_enter(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n_in)
{
    return weft__op_enter_optional(cx, fn, in, n_in, n_in);
}

bool weft__op_enter_optional(weft_ctx *cx, const char *fn, weft_value *const *in,
                             size_t n_required, size_t n_in)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return false;
    }
    if (cx->status != 0)
        return false;
    for (size_t i = 0; i < n_in; i++)
        if ((in[i] || i < n_required) && !input_ok(cx, fn, in, i))
            return false;
    return true;
}

bool weft__ctx_check_inputs(weft_ctx *cx, const char *op, weft_value *const *in, size_t n_in)
{
    if (cx->status != 0)
        return false;
    for (size_t i = 0; i < n_in; i++)
        if (!input_ok(cx, op, in, i))
            return false;
    return true;
}

static bool scope_log(weft_ctx *cx, weft_value *v);

/* The oldest released value's slot, once more than RELEASED_KEPT wait. */
static weft_value *reuse_released(weft_ctx *cx)
{
    if (cx->n_released <= RELEASED_KEPT)
        return NULL;
    weft_value *v = cx->released_head;
    cx->released_head = v->next_released;
    if (!cx->released_head)
        cx->released_tail = NULL;
    cx->n_released--;
    return v;
}

static weft_value *value_new(weft_ctx *cx)
{
    weft_value *v = reuse_released(cx);
    struct value_chunk *c = cx->chunks;
    if (!v && (!c || c->used == CHUNK_VALUES)) {
        c = weft__malloc(sizeof *c);
        if (!c)
            return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory for a value",
                                  cx->name ? cx->name : "weft");
        c->used = 0;
        c->next = cx->chunks;
        cx->chunks = c;
    }
    if (!v)
        v = &c->v[c->used++];
    memset(v, 0, sizeof *v);
    v->cx = cx;
    v->id = WEFT__NO_NODE;
    if (cx->scope_depth > 0 && !scope_log(cx, v)) {
        weft_value_release(cx, v);
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory for a value",
                              cx->name ? cx->name : "weft");
    }
    return v;
}

/* ---- Eager op scopes ----------------------------------------------------
 * An op made of other ops opens a scope; the values made inside it are
 * logged, and when the op returns, all but its results are released, so an
 * eager loop of composite ops holds only what its caller keeps.  A result
 * kept by an inner scope joins the log of the scope around it. */

static bool scope_log(weft_ctx *cx, weft_value *v)
{
    if (cx->scope_len == cx->scope_cap) {
        size_t cap = cx->scope_cap ? 2 * cx->scope_cap : 64;
        weft_value **log = weft__realloc(cx->scope_log, cap * sizeof *log);
        if (!log)
            return false;
        cx->scope_log = log;
        cx->scope_cap = cap;
    }
    cx->scope_log[cx->scope_len++] = v;
    return true;
}

size_t weft__scope_begin(weft_ctx *cx)
{
    if (!cx || cx->g)
        return SIZE_MAX;   /* tracing: the compiler frees the buffers */
    cx->scope_depth++;
    return cx->scope_len;
}

static bool kept(const weft_value *v, weft_value *const *keep, size_t n_keep)
{
    for (size_t k = 0; k < n_keep; k++)
        if (keep[k] == v)
            return true;
    return false;
}

void weft__scope_end_outs(weft_ctx *cx, size_t mark, weft_value *const *keep, size_t n_keep)
{
    if (!cx || mark == SIZE_MAX)
        return;
    size_t end = cx->scope_len;
    size_t n_kept = 0;
    if (!keep)
        n_keep = 0;
    for (size_t i = mark; i < end; i++) {
        weft_value *v = cx->scope_log[i];
        if (!kept(v, keep, n_keep))
            weft_value_release(cx, v);
        else if (!v->released)
            cx->scope_log[mark + n_kept++] = v;   /* for the scope around */
    }
    cx->scope_depth--;
    cx->scope_len = cx->scope_depth > 0 ? mark + n_kept : 0;
}

weft_value *weft__ctx_record(weft_ctx *cx, const weft__node *n, weft_value *const *in, uint32_t n_in)
{
    uint32_t small[8];
    uint32_t *ids = small;
    weft__node node = *n;
    weft_value *v = NULL;
    if (!cx->g) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: recording in an eager context", weft__op_name(n->op));
        goto error;
    }
    if (n_in > 8) {
        ids = weft__malloc((size_t)n_in * sizeof *ids);
        if (!ids) {
            weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory recording an op", weft__op_name(n->op));
            goto error;
        }
    }
    for (uint32_t i = 0; i < n_in; i++)
        ids[i] = in[i]->id;
    /* Side effects (host calls, maps that make them) run in program order. */
    if (node.flags & WEFT__NODE_SIDE_EFFECT)
        node.after = cx->g->last_side_effect;
    uint32_t id = weft__graph_add(cx->g, &node, ids, n_in);
    if (id == WEFT__NO_NODE) {
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory recording an op", weft__op_name(n->op));
        goto error;
    }
    if (node.flags & WEFT__NODE_SIDE_EFFECT)
        cx->g->last_side_effect = id;
    /* The graph owns the node's references now. */
    v = value_new(cx);
    if (v) {
        v->id = id;
        v->spec = cx->g->nodes[id].spec;
        if (node.op == WEFT__OP_CONST)
            v->konst = cx->g->nodes[id].attr.constant.value;
    }
    if (ids != small)
        weft__free(ids);
    return v;
error:
    if (ids != small)
        weft__free(ids);
    weft__node_drop_attrs(&node);
    return NULL;
}

static weft_value *wrap(weft_ctx *cx, weft_tensor *t, bool konst)
{
    if (!t)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft: wrapping a NULL tensor");
    if (cx->g) {
        weft_tensor_release(t);
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft: a tracing context holds no tensors");
    }
    weft_value *v = value_new(cx);
    if (!v) {
        weft_tensor_release(t);
        return NULL;
    }
    v->t = t;
    v->konst = konst ? t : NULL;
    weft__tensor_spec(t, &v->spec);
    cx->held_bytes += t->nbytes;
    if (cx->held_bytes > cx->peak_bytes)
        cx->peak_bytes = cx->held_bytes;
    return v;
}

weft_value *weft__ctx_wrap(weft_ctx *cx, weft_tensor *t)
{
    return wrap(cx, t, false);
}

weft_value *weft__ctx_wrap_const(weft_ctx *cx, weft_tensor *t)
{
    return wrap(cx, t, true);
}

weft_tensor *weft__value_tensor(const weft_value *v)
{
    return v->t;
}

const weft_spec *weft__value_spec(const weft_value *v)
{
    return &v->spec;
}

bool weft__value_is_weak(const weft_value *v)
{
    return v->weak;
}

void weft__value_set_weak(weft_value *v)
{
    v->weak = v->konst && v->konst->rank == 0;
}

const weft_tensor *weft__value_konst(const weft_value *v)
{
    return v->konst;
}

size_t weft__ctx_held_bytes(const weft_ctx *cx, size_t *peak)
{
    if (peak)
        *peak = cx->peak_bytes;
    return cx->held_bytes;
}

weft_ctx *weft__value_ctx(const weft_value *v)
{
    return v->cx;
}

uint32_t weft__value_node(const weft_value *v)
{
    return v->id;
}

/* Public API. */

int weft_ctx_status(const weft_ctx *cx)
{
    if (!cx)
        return weft__errorf(WEFT_EINVAL, "weft_ctx_status: NULL context");
    return cx->status;
}

int weft_eager_begin(weft_runtime *rt, weft_ctx **out)
{
    if (!out)
        return weft__errorf(WEFT_EINVAL, "weft_eager_begin: NULL out");
    *out = NULL;
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "weft_eager_begin: NULL runtime");
    int rc = weft__ctx_new(rt, NULL, "weft_eager", out);
    if (rc == 0)
        (*out)->caller_owned = true;
    return rc;
}

weft_value *weft_eager_value(weft_ctx *cx, weft_tensor *t)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_eager_value: NULL context");
        return NULL;
    }
    if (cx->status != 0)
        return NULL;
    if (!t)
        return weft__ctx_fail(cx, WEFT_EINVAL, "weft_eager_value: NULL tensor");
    if (!weft__ctx_is_eager(cx))
        return weft__ctx_fail(cx, WEFT_EINVAL,
                              "weft_eager_value: a tracing context takes no tensors");
    return weft__ctx_wrap(cx, weft_tensor_retain(t));
}

weft_tensor *weft_value_tensor(weft_value *v)
{
    return v ? v->t : NULL;
}

void weft_value_release(weft_ctx *cx, weft_value *v)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_value_release: NULL context");
        return;
    }
    if (!v || v->released)
        return;
    if (v->cx != cx) {
        weft__ctx_fail(cx, WEFT_EINVAL, "weft_value_release: the value belongs to another context");
        return;
    }
    /* Tracing: the node stays in the graph (later ops may read it through
     * other values); only this handle ends, as it does eagerly, so that a
     * body behaves the same in both modes. */
    v->released = true;
    v->konst = NULL;
    v->weak = false;
    if (v->t) {
        cx->held_bytes -= v->t->nbytes;
        weft_tensor_release(v->t);
        v->t = NULL;
    }
    v->next_released = NULL;
    if (cx->released_tail)
        cx->released_tail->next_released = v;
    else
        cx->released_head = v;
    cx->released_tail = v;
    cx->n_released++;
}

void weft_eager_end(weft_ctx **cx)
{
    if (!cx || !*cx)
        return;
    if (!(*cx)->caller_owned) {
        /* A body's context: weft frees it when the body returns. */
        weft__errorf(WEFT_EINVAL, "weft_eager_end: the context was given to a body, not made by "
                                  "weft_eager_begin; weft ends it");
        return;
    }
    weft__ctx_free(*cx);
    *cx = NULL;
}

int weft_value_spec(const weft_value *v, weft_spec *out)
{
    if (!v || !out)
        return weft__errorf(WEFT_EINVAL, "weft_value_spec: NULL %s", v ? "out" : "value");
    *out = v->spec;
    return 0;
}

/* The scalar constant behind v, or NULL with an error naming fn. */
static const weft_tensor *static_scalar(const weft_value *v, const void *out, const char *fn)
{
    if (!v || !out) {
        weft__errorf(WEFT_EINVAL, "%s: NULL %s", fn, v ? "out" : "value");
        return NULL;
    }
    if (!v->konst || v->konst->rank != 0) {
        char s[WEFT__SPEC_STR_MAX];
        weft__errorf(WEFT_EINVAL, "%s: a %s value is not a static scalar", fn,
                     weft__spec_str(&v->spec, s, sizeof s));
        return NULL;
    }
    return v->konst;
}

int weft_value_static_i64(const weft_value *v, int64_t *out)
{
    const weft_tensor *t = static_scalar(v, out, "weft_value_static_i64");
    if (!t)
        return WEFT_EINVAL;
    switch (t->dtype) {
    case WEFT_BOOL: *out = *(const unsigned char *)t->data; return 0;
    case WEFT_I32:  *out = *(const int32_t *)t->data; return 0;
    case WEFT_I64:  *out = *(const int64_t *)t->data; return 0;
    default:
        return weft__errorf(WEFT_EINVAL, "weft_value_static_i64: the static value is %s, not an integer",
                            weft_dtype_name(t->dtype));
    }
}

int weft_value_static_f64(const weft_value *v, double *out)
{
    const weft_tensor *t = static_scalar(v, out, "weft_value_static_f64");
    if (!t)
        return WEFT_EINVAL;
    switch (t->dtype) {
    case WEFT_BOOL: *out = *(const unsigned char *)t->data; return 0;
    case WEFT_I32:  *out = *(const int32_t *)t->data; return 0;
    case WEFT_I64:  *out = (double)*(const int64_t *)t->data; return 0;
    case WEFT_F32:  *out = *(const float *)t->data; return 0;
    case WEFT_F64:  *out = *(const double *)t->data; return 0;
    }
    return weft__errorf(WEFT_EINVAL, "weft_value_static_f64: unknown dtype");
}

int weft__ctx_call_body(weft_ctx *cx, const char *name, weft_body_fn body, void *user,
                        weft_value *const *argv, weft_value **outv, size_t n_outs)
{
    /* A body that fails silently must not inherit an old message, and a
     * call that succeeds leaves the caller's last message as it was.
     * Copied without formatting: eager loops and weft_call run this for
     * every body call. */
    char saved[WEFT__ERRMSG_SIZE];
    size_t saved_len = strnlen(weft_errmsg(), sizeof saved - 1);
    memcpy(saved, weft_errmsg(), saved_len);
    saved[saved_len] = '\0';
    weft__errclear();
    int rc = body(cx, argv, outv, user);
    if (rc < 0) {
        if (weft_ctx_status(cx) != 0)
            return weft__errorf(rc, "%s", weft__ctx_errmsg(cx));
        char msg[256];
        snprintf(msg, sizeof msg, "%s", weft_errmsg());
        return weft__errorf(rc, "%s: the body failed with %s%s%s", name, weft_err_name(rc),
                            msg[0] ? ": " : "", msg);
    }
    rc = weft_ctx_status(cx);
    if (rc != 0)
        return weft__errorf(rc, "%s", weft__ctx_errmsg(cx));
    for (size_t i = 0; i < n_outs; i++) {
        if (!outv[i])
            return weft__errorf(WEFT_EBODY, "%s: output %zu is NULL", name, i);
        if (weft__value_ctx(outv[i]) != cx)
            return weft__errorf(WEFT_EBODY, "%s: output %zu belongs to another context", name, i);
        if (outv[i]->released)
            return weft__errorf(WEFT_EBODY, "%s: output %zu was released (weft_value_release)",
                                name, i);
    }
    /* Restores it (a body may have set one by a call that failed and
     * returned). */
    if (saved_len)
        return weft__errorf(0, "%s", saved);
    weft__errclear();
    return 0;
}
