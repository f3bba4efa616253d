/* Why a call traced, and the frequent-retracing warning: the retrace
 * reason against the closest cached signature (weft_function_last_retrace,
 * WEFT_LOG=retrace lines) and the warning logged when a function keeps
 * tracing.  Called by table.c under f->mu, except the warning itself. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cache/internal.h"

/* How many arguments of targs the cached c does not cover; *which is the
 * first of them. */
static size_t count_diffs(const weft__entry *c, const weft__targ *targs, size_t n, size_t *which)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!weft__cache_targ_fits(&c->targs[i], &targs[i])) {
            if (k++ == 0)
                *which = i;
        }
    return k;
}

/* Long reasons are cut to fit (vsnprintf, not a truncation warning). */
static void __attribute__((format(printf, 2, 3))) set_reason(weft_retrace *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

/* Fills f->last_retrace: why targs missed, against the closest cached
 * signature. */
void weft__cache_explain_miss(weft_function *f, const weft__targ *targs, size_t n, weft_retrace *r)
{
    r->arg = -1;
    r->dim = -1;
    const weft__entry *best = NULL;
    size_t best_k = SIZE_MAX, best_i = 0;
    for (const weft__entry *c = f->head; c; c = c->next) {
        size_t i = 0, k = count_diffs(c, targs, n, &i);
        if (k <= best_k) {  /* ties: the most recent */
            best = c;
            best_k = k;
            best_i = i;
        }
    }
    if (!best) {
        set_reason(r, "first trace");
        return;
    }
    char got[160], want[160];
    if (best_k != 1) {
        weft__cache_sig_str(best->targs, n, want, sizeof want);
        set_reason(r, "%zu args differ from the closest cached %s", best_k,
                 want);
        return;
    }
    size_t i = best_i;
    const weft__targ *a = &targs[i], *c = &best->targs[i];
    weft__cache_targ_str(a, got, sizeof got);
    weft__cache_targ_str(c, want, sizeof want);
    r->arg = (int)i;
    if (a->kind != c->kind) {
        set_reason(r, "arg %zu: %s %s does not match cached %s %s", i,
                 a->kind == WEFT_ARG_TENSOR ? "tensor" : "static", got,
                 c->kind == WEFT_ARG_TENSOR ? "tensor" : "static", want);
    } else if (a->kind != WEFT_ARG_TENSOR) {
        set_reason(r, "arg %zu: static value %s does not match cached %s",
                 i, got, want);
    } else if (a->spec.dtype != c->spec.dtype) {
        set_reason(r, "arg %zu: dtype %s does not match cached %s", i, got,
                 want);
    } else if (a->spec.rank != c->spec.rank) {
        set_reason(r, "arg %zu: rank %s does not match cached %s", i, got,
                 want);
    } else {
        int first = -1, ndims = 0;
        for (int d = 0; d < a->spec.rank; d++)
            if (c->spec.dims[d] != WEFT_DIM_ANY && c->spec.dims[d] != a->spec.dims[d]) {
                if (ndims++ == 0)
                    first = d;
            }
        if (ndims == 1) {
            r->dim = first;
            set_reason(r,
                     "arg %zu: shape %s does not match cached %s (dim %d: %" PRId64 " vs %" PRId64 ")",
                     i, got, want, first, a->spec.dims[first], c->spec.dims[first]);
        } else {
            set_reason(r,
                     "arg %zu: shape %s does not match cached %s (%d dims differ)", i, got, want,
                     ndims);
        }
    }
}

/* Records a trace for the frequent-retracing warning; returns the number
 * of calls its last WEFT__RETRACE_LIMIT traces spanned if it is time to
 * warn (once per function), else 0. */
uint64_t weft__cache_note_trace(weft_function *f, uint64_t tick, const char *reason)
{
    uint64_t k = f->n_trace_ticks++;
    f->trace_ticks[k % WEFT__RETRACE_LIMIT] = tick;
    snprintf(f->trace_reasons[k % WEFT__RETRACE_LIMIT], sizeof f->trace_reasons[0], "%s", reason);
    if (f->warned || f->n_trace_ticks < WEFT__RETRACE_LIMIT)
        return 0;
    uint64_t oldest = f->trace_ticks[(k + 1) % WEFT__RETRACE_LIMIT];
    if (tick - oldest >= WEFT__RETRACE_WINDOW)
        return 0;
    f->warned = true;
    return tick - oldest + 1;
}

void weft__cache_warn_retracing(weft_function *f, uint64_t calls, char reasons[][WEFT__REASON_MAX])
{
    char msg[WEFT__LOG_MAX];
    int n = snprintf(msg, sizeof msg,
                     "weft: function '%s' traced %d times in its last %llu calls, which is costly; "
                     "pass an input_signature or WEFT_REDUCE_RETRACING, or keep static arguments "
                     "fixed.  Reasons:",
                     f->name, WEFT__RETRACE_LIMIT, (unsigned long long)calls);
    for (int i = 0; i < WEFT__RETRACE_LIMIT && n > 0 && (size_t)n < sizeof msg; i++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s %s", i ? ";" : "", reasons[i]);
    weft__cache_log(WEFT_LOG_WARN, "%s", msg);
}
