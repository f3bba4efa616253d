/* The debug API: statistics, cached signatures, compiled op lists and the
 * reason of the last retrace. */
#include <string.h>

#include "cache/internal.h"

int weft__cache_sig_str(const weft__targ *targs, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    int w = snprintf(buf, size, "(");
    used += (size_t)(w > 0 ? w : 0);
    for (size_t i = 0; i < n; i++) {
        char one[96];
        weft__cache_targ_str(&targs[i], one, sizeof one);
        w = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%sa%zu: %s",
                     i ? ", " : "", i, one);
        used += (size_t)(w > 0 ? w : 0);
    }
    w = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, ")");
    used += (size_t)(w > 0 ? w : 0);
    return (int)used;
}

void weft_function_get_stats(const weft_function *f, weft_function_stats *out)
{
    if (!out) {
        weft__errorf(WEFT_EINVAL, "weft_function_get_stats: out is NULL");
        return;
    }
    memset(out, 0, sizeof *out);
    if (!f) {
        weft__errorf(WEFT_EINVAL, "weft_function_get_stats: f is NULL");
        return;
    }
    out->calls = weft__fn_calls(f);
    out->hits = weft__fn_hits(f);
    out->misses = __atomic_load_n(&f->misses, __ATOMIC_RELAXED);
    out->traces = __atomic_load_n(&f->traces, __ATOMIC_RELAXED);
    out->evictions = __atomic_load_n(&f->evictions, __ATOMIC_RELAXED);
    out->cached = __atomic_load_n(&f->cached, __ATOMIC_RELAXED);
    out->trace_ns = __atomic_load_n(&f->trace_ns, __ATOMIC_RELAXED);
    out->compile_ns = __atomic_load_n(&f->compile_ns, __ATOMIC_RELAXED);
    out->native_compile_ns = __atomic_load_n(&f->native_ns_gone, __ATOMIC_RELAXED);
    out->native_start_ns = weft__jit_start_ns();
    /* The native tier's counts live with the programs; the lock keeps
     * entries from being freed while they are read. */
    weft_function *mf = (weft_function *)(uintptr_t)f;
    pthread_mutex_lock(&mf->mu);
    for (weft__entry *e = f->head ? f->head : f->orphans; e;
         e = e->in_table && !e->next ? f->orphans : e->next) {
        if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != ENTRY_READY)
            continue;
        weft__jit_stats js;
        weft__program_jit_stats(e->prog, &js);
        out->native_groups += js.native_groups;
        out->native_failed += js.failed_groups;
        out->native_compile_ns += js.compile_ns;
    }
    pthread_mutex_unlock(&mf->mu);
}

uint64_t weft_function_tracing_count(const weft_function *f)
{
    return f ? __atomic_load_n(&f->traces, __ATOMIC_RELAXED) : 0;
}

/* The concrete functions the debug API lists, in its order: the table's,
 * oldest first, then the pinned ones kept off it (f->orphans).  Under
 * f->mu. */
static weft__entry *listed_first(const weft_function *f)
{
    return f->head ? f->head : f->orphans;
}

static weft__entry *listed_next(const weft_function *f, const weft__entry *e)
{
    return e->in_table && !e->next ? f->orphans : e->next;
}

/* The debug entry points take the writer lock, which a const handle does
 * not change from the caller's point of view. */
static weft_function *unconst(const weft_function *f)
{
    return (weft_function *)(uintptr_t)f;
}

int weft_function_print_signatures(const weft_function *cf, FILE *out)
{
    if (!cf)
        return weft__errorf(WEFT_EINVAL, "weft_function_print_signatures: f is NULL");
    if (!out)
        return weft__errorf(WEFT_EINVAL, "weft_function_print_signatures: out is NULL");
    weft_function *f = unconst(cf);
    pthread_mutex_lock(&f->mu);
    size_t index = 0;
    for (weft__entry *e = listed_first(f); e; e = listed_next(f, e)) {
        if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != ENTRY_READY)
            continue;
        char sig[512];
        weft__cache_sig_str(e->targs, e->n_args, sig, sizeof sig);
        fprintf(out, "%zu: %s%s calls=%llu ops=%zu->%zu\n", index++, sig,
                __atomic_load_n(&e->pinned, __ATOMIC_RELAXED) ? " pinned" : "",
                (unsigned long long)weft__entry_calls(e),
                e->info.ops_traced, e->info.ops_compiled);
    }
    pthread_mutex_unlock(&f->mu);
    return 0;
}

int weft_function_print_ops(const weft_function *cf, size_t index, FILE *out)
{
    if (!cf)
        return weft__errorf(WEFT_EINVAL, "weft_function_print_ops: f is NULL");
    if (!out)
        return weft__errorf(WEFT_EINVAL, "weft_function_print_ops: out is NULL");
    weft_function *f = unconst(cf);
    pthread_mutex_lock(&f->mu);
    size_t i = 0;
    weft__entry *found = NULL;
    for (weft__entry *e = listed_first(f); e && !found; e = listed_next(f, e)) {
        if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != ENTRY_READY)
            continue;
        if (i++ == index)
            found = e;
    }
    /* Printing under the lock keeps the entry from being evicted meanwhile. */
    int rc = found ? weft__program_print(found->prog, out)
                   : weft__errorf(WEFT_EINVAL,
                                  "weft_function_print_ops(%s): no concrete function %zu (%zu cached)",
                                  f->name, index, i);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

int weft_function_last_retrace(const weft_function *cf, weft_retrace *out)
{
    if (!cf)
        return weft__errorf(WEFT_EINVAL, "weft_function_last_retrace: f is NULL");
    if (!out)
        return weft__errorf(WEFT_EINVAL, "weft_function_last_retrace: out is NULL");
    weft_function *f = unconst(cf);
    pthread_mutex_lock(&f->mu);
    if (f->have_retrace) {
        *out = f->last_retrace;
    } else {
        out->arg = -1;
        out->dim = -1;
        snprintf(out->reason, sizeof out->reason, "not traced yet");
    }
    pthread_mutex_unlock(&f->mu);
    return 0;
}
