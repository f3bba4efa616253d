/* The trace cache of one function: lock-free lookup, tracing each
 * signature once, LRU eviction and entry lifetimes (see internal.h). */
#include <string.h>

#include "cache/internal.h"

/* ---- ck_hs callbacks and allocator ---- */

static unsigned long hs_hash(const void *obj, unsigned long seed)
{
    (void)seed;
    return (unsigned long)((const weft__key *)obj)->hash;
}

static bool hs_compare(const void *a, const void *b)
{
    const weft__key *x = a, *y = b;
    if (!__atomic_load_n(&x->published, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&y->published, __ATOMIC_ACQUIRE))
        return false;
    return x->len == y->len && memcmp(x->bytes, y->bytes, x->len) == 0;
}

static void *hs_malloc(size_t n)
{
    return weft__malloc(n);
}

static void hs_free(void *p, size_t n, bool defer)
{
    (void)n;
    /* A replaced map may still be probed by readers: wait them out. */
    if (defer)
        weft__cache_epoch_synchronize();
    weft__free(p);
}

static void *hs_realloc(void *p, size_t old, size_t n, bool defer)
{
    (void)old;
    (void)defer;
    return weft__realloc(p, n);
}

static struct ck_malloc hs_allocator = { hs_malloc, hs_realloc, hs_free };

int weft__cache_table_init(weft_function *f)
{
    if (!ck_hs_init(&f->hs, CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC, hs_hash, hs_compare,
                    &hs_allocator, 16, 0x5eed))
        return weft__errorf(WEFT_ENOMEM, "weft_function_create: out of memory for the cache table");
    return 0;
}

void weft__cache_entry_free(weft__entry *e)
{
    if (!e)
        return;
    if (e->prog) {
        /* Its native compile time stays in the function's stats. */
        weft__jit_stats js;
        weft__program_jit_stats(e->prog, &js);
        if (e->fn)
            __atomic_fetch_add(&e->fn->native_ns_gone, js.compile_ns, __ATOMIC_RELAXED);
        weft__program_free(e->prog);
    }
    weft__free((void *)e->k.bytes);
    weft__free(e->targs);
    weft__free(e);
}

void weft__cache_table_destroy(weft_function *f)
{
    /* No call is in flight: nothing can be reading entries any more. */
    weft__entry *e = f->head;
    while (e) {
        weft__entry *next = e->next;
        weft__cache_entry_free(e);
        e = next;
    }
    e = f->orphans;
    while (e) {
        weft__entry *next = e->next;
        weft__cache_entry_free(e);
        e = next;
    }
    f->head = f->tail = f->orphans = NULL;
    ck_hs_destroy(&f->hs);
}

/* ---- references ---- */

bool weft__cache_ref(weft__entry *e)
{
    unsigned r = __atomic_load_n(&e->refs, __ATOMIC_RELAXED);
    while (r != 0)
        if (__atomic_compare_exchange_n(&e->refs, &r, r + 1, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    return false;
}

#define HOT_ZOMBIE (UINT64_C(1) << 63)  /* in a hot count: the entry is out for good */

void weft__cache_unref(weft__entry *e)
{
    if (__atomic_fetch_sub(&e->refs, 1, __ATOMIC_ACQ_REL) != 1)
        return;
    /* Out of the table already; readers that found it before its removal
     * may still compare its key, or be about to raise a hot count, until
     * their sections end.  After the grace period hot counts only fall. */
    weft__cache_epoch_synchronize();
    /* Mark every slot's count and collect the holders still running it.
     * Each read-modify-write orders against the owner's decrement of the
     * same word: a decrement before it is not counted, one after sees the
     * mark and settles through e->remaining. */
    uint64_t held = 0;
    for (unsigned s = 0; s < WEFT__SLOTS; s++)
        held += __atomic_fetch_or(&e->sl[s].hot, HOT_ZOMBIE, __ATOMIC_ACQ_REL) & ~HOT_ZOMBIE;
    /* remaining wraps below zero when holders finish first; whoever brings
     * it to zero frees. */
    if (__atomic_fetch_add(&e->remaining, held, __ATOMIC_ACQ_REL) + held == 0)
        weft__cache_entry_free(e);
}

void weft__cache_hit_done(weft__entry *e, unsigned s)
{
    uint64_t old = __atomic_fetch_sub(&e->sl[s].hot, 1, __ATOMIC_ACQ_REL);
    if ((old & HOT_ZOMBIE) &&
        __atomic_fetch_sub(&e->remaining, 1, __ATOMIC_ACQ_REL) == 1)
        weft__cache_entry_free(e);
}

static void bump(weft__entry *e)
{
    __atomic_store_n(&e->last_used, __atomic_fetch_add(&e->fn->clock, 1, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
}

void weft__cache_touch(weft__entry *e)
{
    /* Read before write: the most recently used entry stays so without a
     * shared write. */
    if (__atomic_load_n(&e->last_used, __ATOMIC_RELAXED) !=
        __atomic_load_n(&e->fn->clock, __ATOMIC_RELAXED))
        bump(e);
}

weft__entry *weft__cache_hit(weft_function *f, const weft__key *key, weft__cache_tls *tl,
                             unsigned s)
{
    weft__epoch_rec *rec;
    if (weft__cache_epoch_enter_tl(tl, &rec))
        return NULL;  /* the slow path reports it */
    weft__entry *e = ck_hs_get(&f->hs, key->hash, key);
    if (e) {
        /* Inside the section, so an unref that removed e marks the hot
         * counts only after this increment; until then this thread is the
         * count's only writer, so a plain increment does. */
        uint64_t *hot = &e->sl[s].hot;
        __atomic_store_n(hot, __atomic_load_n(hot, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    }
    weft__cache_epoch_exit(rec);
    if (!e)
        return NULL;
    if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != ENTRY_READY) {
        weft__cache_hit_done(e, s);
        return NULL;
    }
    weft__cache_touch(e);
    return e;
}

/* ---- the writer side (under f->mu) ---- */

static void list_append(weft_function *f, weft__entry *e)
{
    e->prev = f->tail;
    e->next = NULL;
    if (f->tail)
        f->tail->next = e;
    else
        f->head = e;
    f->tail = e;
}

static void list_unlink(weft_function *f, weft__entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        f->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        f->tail = e->prev;
    e->prev = e->next = NULL;
}

/* Takes e out of the table; the caller drops the table's reference. */
/* Counts e, just put into f->hs, as cached and links it into the list:
 * the reverse of table_remove.  Under f->mu. */
static void table_add_linked(weft_function *f, weft__entry *e)
{
    e->in_table = true;
    list_append(f, e);
    __atomic_fetch_add(&f->cached, 1, __ATOMIC_RELAXED);
    if (e->has_any)
        __atomic_fetch_add(&f->n_any, 1, __ATOMIC_RELAXED);
}

static void table_remove(weft_function *f, weft__entry *e)
{
    (void)ck_hs_remove(&f->hs, e->k.hash, &e->k);
    list_unlink(f, e);
    e->in_table = false;
    __atomic_fetch_sub(&f->cached, 1, __ATOMIC_RELAXED);
    if (e->has_any)
        __atomic_fetch_sub(&f->n_any, 1, __ATOMIC_RELAXED);
}

static bool targs_have_any(const weft__targ *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i].kind != WEFT_ARG_TENSOR)
            continue;
        if (t[i].spec.rank == WEFT_RANK_ANY)
            return true;
        for (int d = 0; d < t[i].spec.rank; d++)
            if (t[i].spec.dims[d] == WEFT_DIM_ANY)
                return true;
    }
    return false;
}

static bool entry_fits(const weft__entry *e, const weft__targ *targs, size_t n)
{
    if (e->n_args != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!weft__cache_targ_fits(&e->targs[i], &targs[i]))
            return false;
    return true;
}

/* Lock-free: a cached entry with unknown dims that covers targs. */
static weft__entry *find_cover_spmc(weft_function *f, const weft__targ *targs, size_t n)
{
    ck_hs_iterator_t it = CK_HS_ITERATOR_INITIALIZER;
    void *obj;
    while (ck_hs_next_spmc(&f->hs, &it, &obj)) {
        weft__entry *e = obj;
        if (!__atomic_load_n(&e->k.published, __ATOMIC_ACQUIRE) || !e->has_any)
            continue;
        if (entry_fits(e, targs, n) && weft__cache_ref(e))
            return e;
    }
    return NULL;
}

static weft__entry *find_cover_locked(weft_function *f, const weft__targ *targs, size_t n)
{
    for (weft__entry *e = f->head; e; e = e->next)
        if (e->has_any && entry_fits(e, targs, n) && weft__cache_ref(e))
            return e;
    return NULL;
}

static weft__entry *entry_new(weft_function *f, const weft__targ *targs, size_t n)
{
    weft__entry *e = weft__aligned_alloc(sizeof *e);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->fn = f;
    e->n_args = n;
    e->targs = weft__malloc((n ? n : 1) * sizeof *e->targs);
    uint8_t *bytes = weft__malloc(weft__cache_key_bound(n));
    if (!e->targs || !bytes) {
        weft__free(bytes);
        weft__free(e->targs);
        weft__free(e);
        return NULL;
    }
    if (n)
        memcpy(e->targs, targs, n * sizeof *targs);
    e->k.len = weft__cache_encode(targs, n, bytes);
    e->k.bytes = bytes;
    e->k.hash = weft__cache_hash(bytes, e->k.len);
    e->has_any = targs_have_any(targs, n);
    e->refs = 2;  /* the table's and the tracer's */
    e->state = ENTRY_PENDING;
    e->pinned = false;
    e->remaining = 0;
    e->last_used = 0;
    for (unsigned s = 0; s <= WEFT__SLOTS; s++) {
        e->sl[s].hot = 0;
        e->sl[s].calls = 0;
    }
    __atomic_store_n(&e->k.published, true, __ATOMIC_RELEASE);
    return e;
}

/* Evicts least recently used entries beyond max_cached (never keep, pending
 * or pinned ones).  Returns them chained by dropped_next; the caller unrefs
 * them after unlocking.  The bound counts READY entries only: an entry still
 * PENDING makes room for itself when its own trace settles, and may yet fail
 * (evicting for it now would drop an entry that a bound of max_cached keeps). */
static weft__entry *evict_locked(weft_function *f, const weft__entry *keep)
{
    weft__entry *victims = NULL;
    size_t ready = 0;
    for (const weft__entry *e = f->head; e; e = e->next)
        if (__atomic_load_n(&e->state, __ATOMIC_RELAXED) == ENTRY_READY)
            ready++;
    /* Pinned entries kept off the table count toward the bound as well. */
    for (const weft__entry *e = f->orphans; e; e = e->next)
        ready++;
    for (; ready > f->max_cached; ready--) {
        weft__entry *v = NULL;
        uint64_t v_tick = 0;
        for (weft__entry *e = f->head; e; e = e->next) {
            if (e == keep || __atomic_load_n(&e->pinned, __ATOMIC_RELAXED) ||
                __atomic_load_n(&e->state, __ATOMIC_RELAXED) != ENTRY_READY)
                continue;
            uint64_t t = __atomic_load_n(&e->last_used, __ATOMIC_RELAXED);
            if (!v || t < v_tick) {
                v = e;
                v_tick = t;
            }
        }
        if (!v)
            break;
        table_remove(f, v);
        __atomic_fetch_add(&f->evictions, 1, __ATOMIC_RELAXED);
        v->dropped_next = victims;
        victims = v;
    }
    return victims;
}

static void unref_chain(weft__entry *e)
{
    while (e) {
        weft__entry *next = e->dropped_next;
        weft__cache_unref(e);
        e = next;
    }
}

/* The functions the calling thread is tracing right now, innermost first.
 * A body that calls its own function while it is being traced would wait
 * for itself (on the pending entry, or on the trace mutex), so such a call
 * fails instead of hanging. */
typedef struct tracing_frame {
    const weft_function *f;
    struct tracing_frame *up;
} tracing_frame;

static _Thread_local tracing_frame *tracing_top;

static bool tracing_here(const weft_function *f)
{
    for (const tracing_frame *fr = tracing_top; fr; fr = fr->up)
        if (fr->f == f)
            return true;
    return false;
}

/* Traces the PENDING entry e (the caller holds a reference), then settles
 * it: READY, or FAILED and out of the table. */
static int trace_entry(const char *who, weft_function *f, weft__entry *e)
{
    weft__program *prog = NULL;
    weft__trace_info info;
    memset(&info, 0, sizeof info);
    tracing_frame frame = { f, tracing_top };
    tracing_top = &frame;
    unsigned long refused = weft__cache_refusals();
    int rc;
    if (weft__cache_trace_lock(f)) {
        /* Holding the trace lock, this thread must not run other tasks
         * while the body waits for parallel work it started: one of them
         * may call f with a new signature (it would wait for the lock, or
         * find f being traced here and fail).  So that work runs inline,
         * and a call of f from it is the recursion tracing_here reports. */
        weft__inline_enter();
        rc = weft__trace_compile(f->rt, f->name, f->body, f->user, e->targs, e->n_args,
                                 f->n_outs, &prog, &info);
        weft__inline_leave();
        weft__cache_trace_unlock(f);
        __atomic_fetch_add(&f->traces, 1, __ATOMIC_RELAXED);
    } else {
        rc = weft__errorf(WEFT_EINVAL, "%s(%s): another thread is tracing '%s' "
                          "and waits for a trace by this thread; functions whose bodies call "
                          "each other cannot be traced on two threads at once", who, f->name, f->name);
    }
    tracing_top = frame.up;
    if (rc == 0 && !prog)
        rc = weft__errorf(WEFT_EBODY, "%s(%s): tracing produced no program", who, f->name);
    weft__entry *victims = NULL;
    pthread_mutex_lock(&f->mu);
    if (rc == 0) {
        weft__program_set_jit(prog, !f->no_jit);
        e->prog = prog;
        e->info = info;
        __atomic_fetch_add(&f->trace_ns, info.trace_ns, __ATOMIC_RELAXED);
        __atomic_fetch_add(&f->compile_ns, info.compile_ns, __ATOMIC_RELAXED);
        __atomic_store_n(&e->state, ENTRY_READY, __ATOMIC_RELEASE);
        victims = evict_locked(f, e);
    } else {
        e->err = rc;
        snprintf(e->errmsg, sizeof e->errmsg, "%s", weft_errmsg());
        e->abandoned = weft__cache_refusals() != refused;
        __atomic_store_n(&e->state, ENTRY_FAILED, __ATOMIC_RELEASE);
        table_remove(f, e);
        e->dropped_next = NULL;
        victims = e;  /* drop the table's reference */
    }
    weft__cache_entry_claim(e, false);
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    unref_chain(victims);
    return rc;
}

/* settle's answer for an entry whose tracer refused a wait: look again. */
#define SETTLE_RETRY 1

/* Waits until e is no longer PENDING; returns 0 if it is READY,
 * SETTLE_RETRY if its trace was abandoned, else its trace's error (with
 * the same message). */
static int settle(const char *who, weft_function *f, weft__entry *e)
{
    int st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
    if (st == ENTRY_PENDING) {
        bool mine;
        if (!weft__cache_wait_begin(e, &mine)) {
            if (mine)
                return weft__errorf(WEFT_EINVAL, "%s(%s): called again for "
                                    "the signature this thread is about to trace (from the "
                                    "log sink?)", who, f->name);
            return weft__errorf(WEFT_EINVAL, "%s(%s): the signature is being "
                                "traced by another thread, which waits for a trace by this "
                                "thread; functions whose bodies call each other cannot be "
                                "traced on two threads at once", who, f->name);
        }
        pthread_mutex_lock(&f->mu);
        while ((st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE)) == ENTRY_PENDING)
            pthread_cond_wait(&f->cv, &f->mu);
        pthread_mutex_unlock(&f->mu);
        weft__cache_wait_end();
    }
    if (st == ENTRY_READY)
        return 0;
    if (e->abandoned)
        return SETTLE_RETRY;
    return weft__errorf(e->err, "%s", e->errmsg);
}

/* The lock-free lookup: the entry for key, or one whose relaxed signature
 * covers targs, with a reference taken; *out is NULL when neither is there
 * (or the one found is being evicted right now, as good as absent). */
static int acquire_lookup(const char *who, weft_function *f, const weft__targ *targs,
                          const weft__key *key, weft__entry **out)
{
    weft__epoch_rec *rec;
    *out = NULL;
    int rc = weft__cache_epoch_enter(&rec);
    if (rc)
        return weft__errorf(rc, "%s(%s): out of memory for an epoch record", who, f->name);
    weft__entry *e = ck_hs_get(&f->hs, key->hash, key);
    if (e && !weft__cache_ref(e))
        e = NULL;
    if (!e && __atomic_load_n(&f->n_any, __ATOMIC_RELAXED))
        e = find_cover_spmc(f, targs, f->n_args);
    weft__cache_epoch_exit(rec);
    *out = e;
    return 0;
}

/* A miss: looks again under the writer lock and, if the signature is still
 * absent, inserts a PENDING entry that this thread traces (*traced_here)
 * and others wait on; the retrace is recorded, logged and warned about.
 * *out holds a reference to the entry found or inserted. */
static int acquire_insert_pending(const char *who, weft_function *f, const weft__targ *targs,
                                  const weft__key *key, bool from_call, weft__entry **out,
                                  bool *traced_here)
{
    size_t n = f->n_args;
    int rc = 0;
    *traced_here = false;
    weft__targ stack_t[8];
    weft__targ *t = n <= 8 ? stack_t : weft__malloc(n * sizeof *t);
    if (!t)
        return weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory", who, f->name);
    if (n)
        memcpy(t, targs, n * sizeof *t);
    uint64_t warn = 0;  /* calls spanned by the traces warned about */
    weft_retrace why;
    weft__why how;
    pthread_mutex_lock(&f->mu);
    weft__entry *e = ck_hs_get(&f->hs, key->hash, key);
    if (e && !weft__cache_ref(e))
        e = NULL;
    if (!e)
        e = find_cover_locked(f, targs, n);
    if (!e) {
        weft__cache_explain_miss(f, targs, n, &why, &how);
        bool relaxed = (f->flags & WEFT_REDUCE_RETRACING) && weft__cache_relax(f, t, n);
        if (relaxed) {
            char sig[128];
            weft__cache_sig_str(t, n, sig, sizeof sig);
            size_t len = strlen(why.reason);
            snprintf(why.reason + len, sizeof why.reason - len, "; traced relaxed as %s", sig);
        }
        e = entry_new(f, t, n);
        if (!e) {
            rc = weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory for a cache entry", who, f->name);
        } else if (!ck_hs_put(&f->hs, e->k.hash, &e->k)) {
            /* Only a relaxed key can already be present; the cover
             * search above would have found it, so this is memory. */
            weft__cache_entry_free(e);
            e = NULL;
            rc = weft__errorf(WEFT_ENOMEM, "%s(%s): out of memory growing the cache", who, f->name);
        } else {
            bump(e);
            table_add_linked(f, e);
            weft__cache_entry_claim(e, true);
            f->last_retrace = why;
            f->have_retrace = true;
            /* The call count as the retrace window's clock. */
            if (from_call)
                warn = weft__cache_note_trace(f, weft__fn_calls(f), why.reason, &how);
            *traced_here = true;
        }
    }
    weft__trace_note notes[WEFT__RETRACE_LIMIT];
    if (warn)
        weft__cache_recent_traces(f, notes);
    pthread_mutex_unlock(&f->mu);
    if (t != stack_t)
        weft__free(t);
    *out = e;
    if (!e)
        return rc;
    if (*traced_here && f->log_retrace) {
        char sig[160];
        weft__cache_sig_str(e->targs, n, sig, sizeof sig);
        weft__cache_log(WEFT_LOG_INFO, "weft: tracing '%s' for %s: %s", f->name, sig, why.reason);
    }
    if (warn)
        weft__cache_warn_retracing(f, warn, notes);
    return 0;
}

int weft__cache_acquire(const char *who, weft_function *f, const weft__targ *targs,
                        const weft__key *key, bool from_call, weft__entry **out, bool *hit)
{
    weft__entry *e;
    int rc;
again:
    if ((rc = acquire_lookup(who, f, targs, key, &e)))
        return rc;
    if (e && __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == ENTRY_READY) {
        weft__cache_touch(e);
        *hit = true;
        *out = e;
        return 0;
    }
    *hit = false;

    if (tracing_here(f)) {
        if (e)
            weft__cache_unref(e);
        return weft__errorf(WEFT_EINVAL,
                            "%s(%s): the body of '%s' calls '%s' with a signature "
                            "that is not traced yet while it is being traced; recursive tracing "
                            "is not supported", who, f->name, f->name, f->name);
    }

    bool traced_here = false;
    if (!e && (rc = acquire_insert_pending(who, f, targs, key, from_call, &e, &traced_here)))
        return rc;
    if (traced_here) {
        rc = trace_entry(who, f, e);
    } else {
        rc = settle(who, f, e);
        if (rc == 0)
            weft__cache_touch(e);
        if (rc == SETTLE_RETRY) {
            /* Its tracer broke a cycle; this thread was only waiting. */
            weft__cache_unref(e);
            goto again;
        }
    }
    if (rc) {
        weft__cache_unref(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* The newest READY entry that the bound may evict: a pin that makes room
 * keeps it, as a trace keeps the entry it has just traced. */
static const weft__entry *newest_unpinned(const weft_function *f)
{
    for (const weft__entry *e = f->tail; e; e = e->prev)
        if (!__atomic_load_n(&e->pinned, __ATOMIC_RELAXED) &&
            __atomic_load_n(&e->state, __ATOMIC_RELAXED) == ENTRY_READY)
            return e;
    return NULL;
}

void weft__cache_pin(weft__entry *e)
{
    weft_function *f = e->fn;
    pthread_mutex_lock(&f->mu);
    bool was = __atomic_exchange_n(&e->pinned, true, __ATOMIC_RELAXED);
    if (!e->in_table && !was) {
        /* Evicted between the lookup and now.  A pinned entry is never
         * evicted, so the eviction is undone: our reference becomes the
         * table's, or, when its signature has been traced again meanwhile,
         * the orphan list's (listed by the debug API after the table). */
        __atomic_fetch_sub(&f->evictions, 1, __ATOMIC_RELAXED);
        if (ck_hs_put(&f->hs, e->k.hash, &e->k)) {
            table_add_linked(f, e);
        } else {
            __atomic_fetch_add(&f->cached, 1, __ATOMIC_RELAXED);
            e->next = f->orphans;
            f->orphans = e;
        }
        /* e counts toward max_cached again, so room is made for it now
         * rather than at the next trace. */
        weft__entry *victims = evict_locked(f, newest_unpinned(f));
        pthread_mutex_unlock(&f->mu);
        unref_chain(victims);
        return;
    }
    pthread_mutex_unlock(&f->mu);
    weft__cache_unref(e);
}
