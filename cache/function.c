/* weft functions: creation, calls, concrete functions, and the callee
 * interface through which map ops reach a function.
 *
 * WEFT_RUN_EAGERLY functions never trace on calls.  As map callees they
 * still trace once per slice spec in resolve (to learn the output spec),
 * but invoke runs the body eagerly; concrete functions of an eager function
 * also run the body eagerly. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/internal.h"

#define STACK_ARGS 16  /* calls with up to this many args allocate nothing to look up */

static int callee_resolve(weft_function *fn, const weft_spec *arg, void **concrete, weft_spec *out_spec);
static int callee_invoke(void *concrete, weft_tensor *arg, weft_tensor **out);
static void callee_release(void *concrete);
static bool callee_side_effects(const void *concrete);
static void callee_describe(const weft_function *fn, weft__callee_info *out);
static int callee_resolve_n(weft_function *fn, const char *who, const weft_spec *args,
                            size_t n_args, size_t n_outs, void **concrete, weft_spec *out_specs);
static int callee_invoke_n(void *concrete, weft_tensor *const *args, size_t n_args,
                           weft_tensor **outs, size_t n_outs);

static const weft__callee_ops callee_ops = { callee_resolve, callee_invoke, callee_release,
                                             callee_side_effects, callee_describe,
                                             callee_resolve_n, callee_invoke_n };

static void spec_of(const weft_tensor *t, weft_spec *s)
{
    memset(s, 0, sizeof *s);
    s->dtype = weft_tensor_dtype(t);
    s->rank = weft_tensor_rank(t);
    const int64_t *dims = weft_tensor_dims(t);
    for (int d = 0; d < s->rank && d < WEFT_MAX_RANK; d++)
        s->dims[d] = dims[d];
}

/* The native tier's failures go to the weft_set_log sink. */
static void jit_log(const char *msg)
{
    weft__cache_log(WEFT_LOG_WARN, "%s", msg);
}

int weft_function_create(weft_runtime *rt, const weft_function_desc *d, weft_function **out)
{
    static const char *who = "weft_function_create";
    weft_function *f = NULL;
    int rc;
    if (!out)
        return weft__errorf(WEFT_EINVAL, "%s: out is NULL", who);
    *out = NULL;
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "%s: rt is NULL", who);
    if (!d)
        return weft__errorf(WEFT_EINVAL, "%s: desc is NULL", who);
    if (!d->body)
        return weft__errorf(WEFT_EINVAL, "%s: desc->body is NULL", who);
    if (d->flags & ~(WEFT_REDUCE_RETRACING | WEFT_RUN_EAGERLY | WEFT_FUNCTION_NO_JIT))
        return weft__errorf(WEFT_EINVAL, "%s: unknown flags 0x%x", who, d->flags);
    for (size_t i = 0; i < sizeof d->reserved / sizeof d->reserved[0]; i++)
        if (d->reserved[i] != 0)
            return weft__errorf(WEFT_EINVAL, "%s: desc->reserved[%zu] is not zero", who, i);
    if (d->n_args > 4096 || d->n_outs > 4096)
        return weft__errorf(WEFT_EINVAL, "%s: %zu args and %zu outputs are too many", who,
                            d->n_args, d->n_outs);
    if (d->input_signature)
        for (size_t i = 0; i < d->n_args; i++)
            if ((rc = weft__cache_check_spec(who, i, &d->input_signature[i])))
                return rc;
    bool env_eager, env_jit;
    unsigned log_topics;
    if ((rc = weft__env_switch(who, "WEFT_RUN_EAGERLY", &env_eager)) ||
        (rc = weft__env_switch(who, "WEFT_JIT", &env_jit)) ||
        (rc = weft__env_log(who, &log_topics)))
        return rc;
    /* WEFT_JIT is on when unset or empty, unlike the other switches. */
    const char *jit_env = getenv("WEFT_JIT");
    bool jit_off = (d->flags & WEFT_FUNCTION_NO_JIT) || (jit_env && *jit_env && !env_jit);
    weft__jit_set_log(jit_log);

    f = weft__aligned_alloc(sizeof *f);
    if (!f)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory", who);
    memset(f, 0, sizeof *f);
    f->callee.ops = &callee_ops;
    f->rt = rt;
    f->body = d->body;
    f->user = d->user;
    f->n_args = d->n_args;
    f->n_outs = d->n_outs;
    f->flags = d->flags;
    f->eager = (d->flags & WEFT_RUN_EAGERLY) || env_eager;
    f->no_jit = jit_off;
    f->log_retrace = (log_topics & WEFT__LOG_RETRACE) != 0;
    f->max_cached = d->max_cached ? d->max_cached : WEFT__DEFAULT_MAX_CACHED;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    rc = weft__cache_table_init(f);
    if (rc) {
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->cv);
        weft__free(f);
        return rc;
    }
    f->name = weft__strdup(d->name ? d->name : "fn");
    if (!f->name)
        goto nomem;
    if (d->input_signature) {
        size_t n = d->n_args ? d->n_args : 1;
        f->input_signature = weft__malloc(n * sizeof *f->input_signature);
        f->sig_targs = weft__calloc(n, sizeof *f->sig_targs);
        f->sig_bytes = weft__malloc(weft__cache_key_bound(d->n_args));
        if (!f->input_signature || !f->sig_targs || !f->sig_bytes)
            goto nomem;
        for (size_t i = 0; i < d->n_args; i++) {
            f->input_signature[i] = d->input_signature[i];
            f->sig_targs[i].kind = WEFT_ARG_TENSOR;
            f->sig_targs[i].spec = d->input_signature[i];
        }
        f->sig_key.len = weft__cache_encode(f->sig_targs, d->n_args, f->sig_bytes);
        f->sig_key.bytes = f->sig_bytes;
        f->sig_key.hash = weft__cache_hash(f->sig_bytes, f->sig_key.len);
        f->sig_key.published = true;
    }
    *out = f;
    return 0;

nomem:
    weft_function_destroy(&f);
    return weft__errorf(WEFT_ENOMEM, "%s: out of memory", who);
}

void weft_function_destroy(weft_function **pf)
{
    if (!pf || !*pf)
        return;
    weft_function *f = *pf;
    *pf = NULL;
    weft__cache_table_destroy(f);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    weft__free(f->name);
    weft__free(f->input_signature);
    weft__free(f->sig_targs);
    weft__free(f->sig_bytes);
    weft__free(f);
}

/* A static scalar converted to a scalar tensor of spec want (rank 0 or
 * unknown rank). */
static int scalar_tensor(const weft_function *f, size_t i, const weft_arg *a, const weft_spec *want,
                         weft_tensor **out)
{
    char ws[96];
    weft__cache_spec_str(want, ws, sizeof ws);
    bool is_int = a->kind == WEFT_ARG_I64;
    double v = is_int ? (double)a->u.i64 : a->u.f64;
    char got[64];
    if (is_int)
        snprintf(got, sizeof got, "static i64 %" PRId64, a->u.i64);
    else {
        char v[WEFT__FMT_MAX];
        weft__fmt_f64(a->u.f64, v, sizeof v);
        snprintf(got, sizeof got, "static f64 %s", v);
    }
    if (want->rank != 0 && want->rank != WEFT_RANK_ANY)
        return weft__errorf(WEFT_ESIGNATURE, "weft_function_call(%s): arg %zu: expected %s, got %s",
                            f->name, i, ws, got);
    union { uint8_t b; int32_t i32; int64_t i64; float f32; double f64; } u;
    const char *not_a = NULL;   /* the dtype that cannot hold the value exactly */
    switch (want->dtype) {
    case WEFT_BOOL:
        /* 0 or 1 only, as for the integer specs: 2 or 0.5 is no bool. */
        if (!(v == 0 || v == 1))
            not_a = "a bool";
        u.b = v != 0;
        break;
    case WEFT_I32:
        if (is_int ? (a->u.i64 < INT32_MIN || a->u.i64 > INT32_MAX)
                   : !(v >= INT32_MIN && v <= INT32_MAX && v == trunc(v)))
            not_a = "an i32";
        else
            u.i32 = is_int ? (int32_t)a->u.i64 : (int32_t)v;
        break;
    case WEFT_I64:
        if (!is_int && !(v >= -9223372036854775808.0 && v < 9223372036854775808.0 && v == trunc(v)))
            not_a = "an i64";
        else
            u.i64 = is_int ? a->u.i64 : (int64_t)v;
        break;
    case WEFT_F32:
        /* A finite f64 that would round to infinity is refused (converting
         * it is undefined in ISO C); infinities and NaN convert. */
        if (!is_int && isfinite(v) && fabs(v) >= 0x1.ffffffp127)
            not_a = "an f32";
        else  /* an i64 straight to float: through double it would round
               * twice (2^60 + 2^36 + 1 would become 2^60, not 2^60 + 2^37) */
            u.f32 = is_int ? (float)a->u.i64 : (float)v;
        break;
    default:
        u.f64 = v;
        break;
    }
    if (not_a)
        return weft__errorf(WEFT_ESIGNATURE,
                            "weft_function_call(%s): arg %zu: expected %s, got %s (not %s)",
                            f->name, i, ws, got, not_a);
    return weft_tensor_create(want->dtype, 0, NULL, &u, out);
}

/* Whether tensor t fits spec want, without copying its spec. */
static bool tensor_fits(const weft_spec *want, const weft_tensor *t)
{
    if (weft_tensor_dtype(t) != want->dtype)
        return false;
    if (want->rank == WEFT_RANK_ANY)
        return true;
    if (weft_tensor_rank(t) != want->rank)
        return false;
    const int64_t *dims = weft_tensor_dims(t);
    for (int d = 0; d < want->rank; d++)
        if (want->dims[d] != WEFT_DIM_ANY && want->dims[d] != dims[d])
            return false;
    return true;
}

static int check_tensor(const char *who, const weft_function *f, size_t i, const weft_spec *want,
                        const weft_tensor *t)
{
    if (tensor_fits(want, t))
        return 0;
    weft_spec got;
    spec_of(t, &got);
    char ws[96], gs[96];
    weft__cache_spec_str(want, ws, sizeof ws);
    weft__cache_spec_str(&got, gs, sizeof gs);
    return weft__errorf(WEFT_ESIGNATURE, "%s(%s): arg %zu: expected %s, got %s", who, f->name, i,
                        ws, gs);
}

static int check_outs(const char *who, const weft_function *f, weft_tensor **outs, size_t n_outs)
{
    if (n_outs != f->n_outs)
        return weft__errorf(WEFT_EINVAL, "%s(%s): %zu outputs, expected %zu", who, f->name, n_outs,
                            f->n_outs);
    if (!outs && n_outs)
        return weft__errorf(WEFT_EINVAL, "%s(%s): outs is NULL", who, f->name);
    for (size_t i = 0; i < n_outs; i++)
        outs[i] = NULL;
    return 0;
}

/* Runs e for the calling thread, whose slot is s. */
static int run_entry(weft__entry *e, unsigned s, weft_tensor *const *tens, const weft_arg *args,
                     size_t n, weft_tensor **outs, size_t n_outs)
{
    weft_function *f = e->fn;
    weft__slot_add(&e->sl[s].calls, s, 1);
    if (f->eager)
        return weft__eager_call(f->rt, f->name, f->body, f->user, args, n, outs, n_outs);
    return weft__program_run(e->prog, tens, n, outs, n_outs);
}

/* Runs f's body eagerly on the tensors of a call converted under its input
 * signature (the body sees them as tensor arguments, as a trace would). */
static int eager_on_tensors(const char *who, weft_function *f, weft_tensor *const *tens,
                            size_t n_args, weft_tensor **outs, size_t n_outs)
{
    weft_arg stack_a[STACK_ARGS];
    weft_arg *a = n_args > STACK_ARGS ? weft__calloc(n_args, sizeof *a) : stack_a;
    if (!a)
        return weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, f->name);
    for (size_t i = 0; i < n_args; i++)
        a[i] = weft_arg_tensor(tens[i]);
    int rc = weft__eager_call(f->rt, f->name, f->body, f->user, a, n_args, outs, n_outs);
    if (a != stack_a)
        weft__free(a);
    return rc;
}

/* Runs e on tensor arguments for the calling thread (an eager function's
 * body sees them as tensor arguments). */
static int run_entry_tensors(const char *who, weft__entry *e, weft_tensor *const *args,
                             size_t n_args, weft_tensor **outs, size_t n_outs)
{
    unsigned slot = weft__cache_slot();
    if (!e->fn->eager)
        return run_entry(e, slot, args, NULL, n_args, outs, n_outs);
    weft_arg stack_a[STACK_ARGS];
    weft_arg *a = n_args > STACK_ARGS ? weft__calloc(n_args, sizeof *a) : stack_a;
    if (!a)
        return weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, e->fn->name);
    for (size_t i = 0; i < n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    int rc = run_entry(e, slot, args, a, n_args, outs, n_outs);
    if (a != stack_a)
        weft__free(a);
    return rc;
}

/* The state of one weft_function_call between its steps: the arguments as
 * tensors, the key they are looked up by, and what the call allocated for
 * them (released by call_frame_free). */
typedef struct call_frame {
    weft_tensor  *stack_tens[STACK_ARGS];
    uint8_t       stack_key[WEFT__KEY_BOUND(STACK_ARGS)];
    weft_tensor **tens;        /* each argument's tensor (NULL: a scalar, no signature) */
    size_t        n_converted; /* tens[i] created here, for i < n_converted with a static arg */
    uint8_t      *key_bytes;   /* the encoded arguments, when not keyed by the signature */
    weft__key     key;
    const weft__key *kp;       /* &key, or the function's signature key */
} call_frame;

/* Checks the arguments of a call, before anything is counted. */
static int call_validate(const char *who, weft_function *f, const weft_arg *args, size_t n_args,
                         weft_tensor **outs, size_t n_outs)
{
    if (!f)
        return weft__errorf(WEFT_EINVAL, "%s: f is NULL", who);
    if (!args && n_args)
        return weft__errorf(WEFT_EINVAL, "%s(%s): args is NULL", who, f->name);
    if (n_args != f->n_args)
        return weft__errorf(WEFT_EINVAL, "%s(%s): %zu args, expected %zu", who, f->name, n_args,
                            f->n_args);
    int rc = check_outs(who, f, outs, n_outs);
    if (rc)
        return rc;
    for (size_t i = 0; i < n_args; i++) {
        if (args[i].kind != WEFT_ARG_TENSOR && args[i].kind != WEFT_ARG_I64 &&
            args[i].kind != WEFT_ARG_F64)
            return weft__errorf(WEFT_EINVAL, "%s(%s): arg %zu: unknown kind %d", who, f->name, i,
                                (int)args[i].kind);
        if (args[i].kind == WEFT_ARG_TENSOR && !args[i].u.tensor)
            return weft__errorf(WEFT_EINVAL, "%s(%s): arg %zu: tensor is NULL", who, f->name, i);
    }
    return 0;
}

/* Prepares fr for n_args arguments. */
static int call_frame_init(const char *who, const weft_function *f, size_t n_args,
                           call_frame *fr)
{
    fr->tens = fr->stack_tens;
    fr->n_converted = 0;
    fr->key_bytes = fr->stack_key;
    fr->kp = &fr->key;
    if (n_args > STACK_ARGS && !(fr->tens = weft__calloc(n_args, sizeof *fr->tens))) {
        fr->tens = fr->stack_tens;
        return weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, f->name);
    }
    return 0;
}

/* Releases the tensors converted for the call and what fr allocated. */
static void call_frame_free(const weft_function *f, const weft_arg *args, call_frame *fr)
{
    if (f->input_signature)
        for (size_t i = 0; i < fr->n_converted; i++)
            if (args[i].kind != WEFT_ARG_TENSOR)
                weft_tensor_release(fr->tens[i]);
    if (fr->key_bytes != fr->stack_key)
        weft__free(fr->key_bytes);
    if (fr->tens != fr->stack_tens)
        weft__free(fr->tens);
}

/* Under an input signature: checks each tensor argument against it and
 * converts each scalar to a tensor of its spec. */
static int call_convert(const char *who, weft_function *f, const weft_arg *args, size_t n_args,
                        call_frame *fr)
{
    for (size_t i = 0; i < n_args; i++) {
        int rc;
        fr->tens[i] = NULL;
        if (args[i].kind == WEFT_ARG_TENSOR) {
            rc = check_tensor(who, f, i, &f->input_signature[i], args[i].u.tensor);
            fr->tens[i] = args[i].u.tensor;
        } else {
            rc = scalar_tensor(f, i, &args[i], &f->input_signature[i], &fr->tens[i]);
        }
        if (rc)
            return rc;
        fr->n_converted = i + 1;
    }
    fr->kp = &f->sig_key;  /* keyed by the declared specs */
    return 0;
}

/* Without an input signature: the key is the arguments' encoding (their
 * specs, and the values of scalars). */
static int call_encode_key(const char *who, const weft_function *f, const weft_arg *args,
                           size_t n_args, call_frame *fr)
{
    for (size_t i = 0; i < n_args; i++)
        fr->tens[i] = args[i].kind == WEFT_ARG_TENSOR ? args[i].u.tensor : NULL;
    size_t bound = weft__cache_key_bound(n_args);
    if (bound > sizeof fr->stack_key && !(fr->key_bytes = weft__malloc(bound))) {
        fr->key_bytes = fr->stack_key;
        return weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, f->name);
    }
    fr->key.len = weft__cache_encode_args(args, n_args, fr->key_bytes);
    fr->key.bytes = fr->key_bytes;
    fr->key.hash = weft__cache_hash(fr->key_bytes, fr->key.len);
    fr->key.published = true;
    fr->kp = &fr->key;
    return 0;
}

/* The hit path: finds the compiled entry without a lock and runs it,
 * writing only this thread's slot lines.  Returns false (having done
 * nothing) when the entry is absent, pending or covered, or the thread has
 * no slot. */
static bool call_hit(weft_function *f, const weft_arg *args, size_t n_args, weft_tensor **outs,
                     size_t n_outs, weft__cache_tls *tl, unsigned slot, const call_frame *fr,
                     int *rc)
{
    weft__entry *e;
    if (slot >= WEFT__SLOTS || !(e = weft__cache_hit(f, fr->kp, tl, slot)))
        return false;
    weft__slot_add(&f->st[slot].hits, slot, 1);
    *rc = run_entry(e, slot, fr->tens, args, n_args, outs, n_outs);
    weft__cache_hit_done(e, slot);
    return true;
}

/* The trace arguments of a miss: the declared signature, or the
 * arguments' specs and scalar values. */
static void call_trace_args(const weft_function *f, const weft_arg *args, size_t n_args,
                            weft__targ *targs)
{
    if (f->input_signature) {
        memcpy(targs, f->sig_targs, n_args * sizeof *targs);
        return;
    }
    for (size_t i = 0; i < n_args; i++) {
        memset(&targs[i], 0, sizeof targs[i]);
        targs[i].kind = args[i].kind;
        if (args[i].kind == WEFT_ARG_TENSOR)
            spec_of(args[i].u.tensor, &targs[i].spec);
        else if (args[i].kind == WEFT_ARG_I64)
            targs[i].i64 = args[i].u.i64;
        else
            targs[i].f64 = args[i].u.f64;
    }
}

/* The miss path (absent, pending, covered, or no slot): finds or traces
 * the entry under the cache's lock, then runs it. */
static int call_miss(const char *who, weft_function *f, const weft_arg *args, size_t n_args,
                     weft_tensor **outs, size_t n_outs, unsigned slot, const call_frame *fr)
{
    weft__targ stack_t[STACK_ARGS];
    weft__targ *targs = stack_t;
    if (n_args > STACK_ARGS && !(targs = weft__calloc(n_args, sizeof *targs)))
        return weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, f->name);
    call_trace_args(f, args, n_args, targs);
    weft__entry *e = NULL;
    bool hit = false;
    int rc = weft__cache_acquire(who, f, targs, fr->kp, true, &e, &hit);
    if (rc)
        goto out;
    if (hit)
        weft__slot_add(&f->st[slot].hits, slot, 1);
    else
        __atomic_fetch_add(&f->misses, 1, __ATOMIC_RELAXED);
    rc = run_entry(e, slot, fr->tens, args, n_args, outs, n_outs);
    weft__cache_unref(e);
out:
    if (targs != stack_t)
        weft__free(targs);
    return rc;
}

int weft_function_call(weft_function *f, const weft_arg *args, size_t n_args, weft_tensor **outs,
                       size_t n_outs)
{
    static const char *who = "weft_function_call";
    int rc = call_validate(who, f, args, n_args, outs, n_outs);
    if (rc)
        return rc;

    weft__cache_tls *tl = &weft__cache_tl;
    unsigned slot = weft__cache_slot_of(tl);
    weft__slot_add(&f->st[slot].calls, slot, 1);
    if (f->eager && !f->input_signature)
        return weft__eager_call(f->rt, f->name, f->body, f->user, args, n_args, outs, n_outs);

    call_frame fr;
    if ((rc = call_frame_init(who, f, n_args, &fr)))
        goto out;
    if (f->input_signature) {
        if ((rc = call_convert(who, f, args, n_args, &fr)))
            goto out;
        if (f->eager) {
            /* The body sees the converted tensors, as a trace would. */
            rc = eager_on_tensors(who, f, fr.tens, n_args, outs, n_outs);
            goto out;
        }
    } else if ((rc = call_encode_key(who, f, args, n_args, &fr))) {
        goto out;
    }
    if (!call_hit(f, args, n_args, outs, n_outs, tl, slot, &fr, &rc))
        rc = call_miss(who, f, args, n_args, outs, n_outs, slot, &fr);
out:
    call_frame_free(f, args, &fr);
    return rc;
}

/* Finds or traces the entry for tensor specs (the input signature's when
 * declared); the caller holds a reference on *out.  callee: for a map,
 * cond or loop, whose specs may know less than the signature (elems of
 * unknown rank): they need only be compatible with it, since every
 * invocation checks its tensors against the signature. */
static int acquire_specs(const char *who, weft_function *f, const weft_spec *specs, size_t n,
                         bool callee, weft__entry **out)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if ((rc = weft__cache_check_spec(who, i, &specs[i])))
            return rc;
    weft__targ stack_t[STACK_ARGS];
    uint8_t stack_key[WEFT__KEY_BOUND(STACK_ARGS)];
    weft__targ *targs = n > STACK_ARGS ? weft__calloc(n, sizeof *targs) : stack_t;
    size_t bound = weft__cache_key_bound(n);
    uint8_t *bytes = bound > sizeof stack_key ? weft__malloc(bound) : stack_key;
    if (!targs || !bytes) {
        rc = weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, f->name);
        goto out;
    }
    weft__key key;
    if (f->input_signature) {
        for (size_t i = 0; i < n; i++)
            if (!(callee ? weft__spec_compatible(&f->input_signature[i], &specs[i])
                         : weft__cache_spec_fits(&f->input_signature[i], &specs[i]))) {
                char ws[96], gs[96];
                weft__cache_spec_str(&f->input_signature[i], ws, sizeof ws);
                weft__cache_spec_str(&specs[i], gs, sizeof gs);
                rc = weft__errorf(WEFT_ESIGNATURE, "%s(%s): arg %zu: expected %s, got %s", who,
                                  f->name, i, ws, gs);
                goto out;
            }
        memcpy(targs, f->sig_targs, n * sizeof *targs);
        key = f->sig_key;
    } else {
        for (size_t i = 0; i < n; i++) {
            memset(&targs[i], 0, sizeof targs[i]);
            targs[i].kind = WEFT_ARG_TENSOR;
            targs[i].spec = specs[i];
            for (int d = specs[i].rank; d >= 0 && d < WEFT_MAX_RANK; d++)
                targs[i].spec.dims[d] = 0;  /* canonical: unused dims never differ */
        }
        key.len = weft__cache_encode(targs, n, bytes);
        key.bytes = bytes;
        key.hash = weft__cache_hash(bytes, key.len);
    }
    key.published = true;
    bool hit;
    rc = weft__cache_acquire(who, f, targs, &key, false, out, &hit);
out:
    if (targs != stack_t)
        weft__free(targs);
    if (bytes != stack_key)
        weft__free(bytes);
    return rc;
}

int weft_function_get_concrete(weft_function *f, const weft_spec *specs, size_t n,
                               weft_concrete **out)
{
    static const char *who = "weft_function_get_concrete";
    if (!out)
        return weft__errorf(WEFT_EINVAL, "%s: out is NULL", who);
    *out = NULL;
    if (!f)
        return weft__errorf(WEFT_EINVAL, "%s: f is NULL", who);
    if (!specs && n)
        return weft__errorf(WEFT_EINVAL, "%s(%s): specs is NULL", who, f->name);
    if (n != f->n_args)
        return weft__errorf(WEFT_EINVAL, "%s(%s): %zu specs, expected %zu", who, f->name, n,
                            f->n_args);
    weft__entry *e;
    int rc = acquire_specs(who, f, specs, n, false, &e);
    if (rc)
        return rc;
    weft__cache_pin(e);
    *out = e;
    return 0;
}

int weft_concrete_call(weft_concrete *c, weft_tensor *const *args, size_t n_args,
                       weft_tensor **outs, size_t n_outs)
{
    static const char *who = "weft_concrete_call";
    if (!c)
        return weft__errorf(WEFT_EINVAL, "%s: c is NULL", who);
    weft_function *f = c->fn;
    if (!args && n_args)
        return weft__errorf(WEFT_EINVAL, "%s(%s): args is NULL", who, f->name);
    if (n_args != c->n_args)
        return weft__errorf(WEFT_EINVAL, "%s(%s): %zu args, expected %zu", who, f->name, n_args,
                            c->n_args);
    int rc = check_outs(who, f, outs, n_outs);
    if (rc)
        return rc;
    for (size_t i = 0; i < n_args; i++) {
        if (!args[i])
            return weft__errorf(WEFT_EINVAL, "%s(%s): arg %zu: tensor is NULL", who, f->name, i);
        if ((rc = check_tensor(who, f, i, &c->targs[i].spec, args[i])))
            return rc;
    }
    /* c is pinned: alive until f is destroyed, no reference to take. */
    return run_entry_tensors(who, c, args, n_args, outs, n_outs);
}

/* ---- the callee interface for map ---- */

static int callee_resolve(weft_function *f, const weft_spec *arg, void **concrete, weft_spec *out_spec)
{
    static const char *who = "weft_map";
    if (!f || !arg || !concrete || !out_spec)
        return weft__errorf(WEFT_EINVAL, "%s: resolve: NULL argument", who);
    *concrete = NULL;
    if (f->n_args != 1 || f->n_outs != 1)
        return weft__errorf(WEFT_EINVAL,
                            "%s: function '%s' takes %zu args and returns %zu outputs; map needs 1 and 1",
                            who, f->name, f->n_args, f->n_outs);
    weft__entry *e;
    int rc = acquire_specs(who, f, arg, 1, true, &e);
    if (rc)
        return rc;
    rc = weft__program_out_spec(e->prog, 0, out_spec);
    if (rc) {
        weft__cache_unref(e);
        return rc;
    }
    *concrete = e;
    return 0;
}

static int callee_invoke(void *concrete, weft_tensor *arg, weft_tensor **out)
{
    if (!concrete || !arg || !out)
        return weft__errorf(WEFT_EINVAL, "weft_map: invoke: NULL argument");
    return callee_invoke_n(concrete, &arg, 1, out, 1);
}

static void callee_release(void *concrete)
{
    if (concrete)
        weft__cache_unref(concrete);
}

static bool callee_side_effects(const void *concrete)
{
    return concrete && weft__program_has_side_effects(((const weft__entry *)concrete)->prog);
}

/* ---- the callee interface for weft_call, cond, while and map_ex ---- */

static void callee_describe(const weft_function *f, weft__callee_info *out)
{
    out->name = f->name;
    out->body = f->body;
    out->user = f->user;
    out->n_args = f->n_args;
    out->n_outs = f->n_outs;
    out->input_signature = f->input_signature;
}

static int callee_resolve_n(weft_function *f, const char *who, const weft_spec *args,
                            size_t n_args, size_t n_outs, void **concrete, weft_spec *out_specs)
{
    if (!f || (!args && n_args) || !concrete || (!out_specs && n_outs))
        return weft__errorf(WEFT_EINVAL, "%s: resolve: NULL argument", who);
    *concrete = NULL;
    if (f->n_args != n_args || f->n_outs != n_outs)
        return weft__errorf(WEFT_EINVAL, "%s: function '%s' takes %zu args and returns %zu "
                            "outputs; it is given %zu and must return %zu", who, f->name,
                            f->n_args, f->n_outs, n_args, n_outs);
    weft__entry *e;
    int rc = acquire_specs(who, f, args, n_args, true, &e);
    if (rc)
        return rc;
    for (size_t k = 0; k < n_outs && rc == 0; k++)
        rc = weft__program_out_spec(e->prog, k, &out_specs[k]);
    if (rc) {
        weft__cache_unref(e);
        return rc;
    }
    *concrete = e;
    return 0;
}

static int callee_invoke_n(void *concrete, weft_tensor *const *args, size_t n_args,
                           weft_tensor **outs, size_t n_outs)
{
    static const char *who = "weft_function";
    weft__entry *e = concrete;
    if (!e || (!args && n_args) || (!outs && n_outs) || n_args != e->n_args)
        return weft__errorf(WEFT_EINVAL, "%s: invoke: bad arguments", who);
    weft_function *f = e->fn;
    for (size_t k = 0; k < n_outs; k++)
        outs[k] = NULL;
    for (size_t i = 0; i < n_args; i++) {
        if (!args[i])
            return weft__errorf(WEFT_EINVAL, "%s(%s): arg %zu: tensor is NULL", who, f->name, i);
        int rc = check_tensor(who, f, i, &e->targs[i].spec, args[i]);
        if (rc)
            return rc;
    }
    /* An iteration is a use of e, as a hit is: otherwise the LRU bound
     * would evict the entry a traced map runs on every call first. */
    weft__cache_touch(e);
    return run_entry_tensors(who, e, args, n_args, outs, n_outs);
}
