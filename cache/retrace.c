/* Why a call traced, how a retrace is relaxed, and the frequent-retracing
 * warning: the retrace reason against the closest cached signature
 * (weft_function_last_retrace, WEFT_LOG=retrace lines), naming how each
 * differing argument differs; the relaxed signature of
 * WEFT_REDUCE_RETRACING; and the warning logged when a function keeps
 * tracing, whose advice follows from those differences.  Called by table.c
 * under f->mu, except the warning itself. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cache/internal.h"

/* How many arguments of targs the cached c does not cover. */
static size_t count_diffs(const weft__entry *c, const weft__targ *targs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !weft__cache_targ_fits(&c->targs[i], &targs[i]);
    return k;
}

/* Appends to r->reason; long reasons are cut to fit (vsnprintf, not a
 * truncation warning). */
static void __attribute__((format(printf, 2, 3))) add_reason(weft_retrace *r, const char *fmt, ...)
{
    size_t len = strlen(r->reason);
    if (len + 1 >= sizeof r->reason)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason + len, sizeof r->reason - len, fmt, ap);
    va_end(ap);
}

static void mark(uint64_t *set, size_t i)
{
    if (i < 64)
        *set |= UINT64_C(1) << i;
}

/* Appends how argument i (a) differs from cached c, and notes it in why;
 * sets r->dim for a difference in one dim. */
static void explain_arg(size_t i, const weft__targ *a, const weft__targ *c, weft_retrace *r,
                        weft__why *why)
{
    char got[160], want[160];
    weft__cache_targ_str(a, got, sizeof got);
    weft__cache_targ_str(c, want, sizeof want);
    if (a->kind != c->kind) {
        mark(&why->kind, i);
        add_reason(r, "arg %zu: %s %s does not match cached %s %s", i,
                   a->kind == WEFT_ARG_TENSOR ? "tensor" : "static", got,
                   c->kind == WEFT_ARG_TENSOR ? "tensor" : "static", want);
    } else if (a->kind != WEFT_ARG_TENSOR) {
        mark(a->kind == WEFT_ARG_I64 ? &why->static_i64 : &why->static_f64, i);
        add_reason(r, "arg %zu: static value %s does not match cached %s", i, got, want);
    } else if (a->spec.dtype != c->spec.dtype) {
        mark(&why->dtype, i);
        add_reason(r, "arg %zu: dtype %s does not match cached %s", i, got, want);
    } else if (a->spec.rank != c->spec.rank) {
        mark(&why->rank, i);
        add_reason(r, "arg %zu: rank %s does not match cached %s", i, got, want);
    } else {
        mark(&why->dims, i);
        int first = -1, ndims = 0;
        for (int d = 0; d < a->spec.rank; d++)
            if (c->spec.dims[d] != WEFT_DIM_ANY && c->spec.dims[d] != a->spec.dims[d]) {
                if (ndims++ == 0)
                    first = d;
            }
        if (ndims == 1) {
            r->dim = first;
            add_reason(r, "arg %zu: shape %s does not match cached %s (dim %d: %" PRId64 " vs %" PRId64 ")",
                       i, got, want, first, a->spec.dims[first], c->spec.dims[first]);
        } else {
            add_reason(r, "arg %zu: shape %s does not match cached %s (%d dims differ)", i, got,
                       want, ndims);
        }
    }
}

/* Fills *r: why targs missed, against the closest cached signature (the
 * one with the fewest differing arguments; ties: the most recent), every
 * differing argument in turn. */
void weft__cache_explain_miss(weft_function *f, const weft__targ *targs, size_t n, weft_retrace *r,
                              weft__why *why)
{
    memset(why, 0, sizeof *why);
    r->arg = -1;
    r->dim = -1;
    r->reason[0] = '\0';
    const weft__entry *best = NULL;
    size_t best_k = SIZE_MAX;
    for (const weft__entry *c = f->head; c; c = c->next) {
        size_t k = count_diffs(c, targs, n);
        if (k <= best_k) {
            best = c;
            best_k = k;
        }
    }
    if (!best) {
        add_reason(r, "first trace");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (weft__cache_targ_fits(&best->targs[i], &targs[i]))
            continue;
        if (k++)
            add_reason(r, " and ");
        explain_arg(i, &targs[i], &best->targs[i], r, why);
        r->arg = (int)i;
    }
    if (k != 1) {
        /* Several arguments: no single one (nor one dim) to point at. */
        r->arg = -1;
        r->dim = -1;
    }
}

/* REDUCE_RETRACING: targs with the dims that differ from a cached
 * signature of the same structure relaxed to WEFT_DIM_ANY.  Returns whether
 * anything was relaxed. */
bool weft__cache_relax(const weft_function *f, weft__targ *t, size_t n)
{
    for (const weft__entry *c = f->tail; c; c = c->prev) {
        bool same = true, relaxed = false;
        for (size_t i = 0; i < n && same; i++) {
            const weft__targ *a = &t[i], *b = &c->targs[i];
            if (a->kind != b->kind)
                same = false;
            else if (a->kind != WEFT_ARG_TENSOR)
                same = weft__cache_targ_fits(b, a);
            else
                same = a->spec.dtype == b->spec.dtype && a->spec.rank == b->spec.rank &&
                       a->spec.rank != WEFT_RANK_ANY;
        }
        if (!same)
            continue;
        for (size_t i = 0; i < n; i++) {
            if (t[i].kind != WEFT_ARG_TENSOR)
                continue;
            for (int d = 0; d < t[i].spec.rank; d++)
                if (t[i].spec.dims[d] != c->targs[i].spec.dims[d]) {
                    t[i].spec.dims[d] = WEFT_DIM_ANY;
                    relaxed = true;
                }
        }
        if (relaxed)
            return true;
    }
    return false;
}

/* Records a trace for the frequent-retracing warning; returns the number
 * of calls its last WEFT__RETRACE_LIMIT traces spanned if it is time to
 * warn (once per function), else 0. */
uint64_t weft__cache_note_trace(weft_function *f, uint64_t tick, const char *reason,
                                const weft__why *why)
{
    uint64_t k = f->n_trace_ticks++;
    weft__trace_note *note = &f->trace_notes[k % WEFT__RETRACE_LIMIT];
    f->trace_ticks[k % WEFT__RETRACE_LIMIT] = tick;
    snprintf(note->reason, sizeof note->reason, "%s", reason);
    note->why = *why;
    if (f->warned || f->n_trace_ticks < WEFT__RETRACE_LIMIT)
        return 0;
    uint64_t oldest = f->trace_ticks[(k + 1) % WEFT__RETRACE_LIMIT];
    if (tick - oldest >= WEFT__RETRACE_WINDOW)
        return 0;
    f->warned = true;
    return tick - oldest + 1;
}

void weft__cache_recent_traces(const weft_function *f, weft__trace_note notes[WEFT__RETRACE_LIMIT])
{
    for (uint64_t j = 0; j < WEFT__RETRACE_LIMIT; j++)
        notes[j] = f->trace_notes[(f->n_trace_ticks + j) % WEFT__RETRACE_LIMIT];
}

/* Appends to msg (of size WEFT__LOG_MAX, length *n) without overflowing. */
static void __attribute__((format(printf, 3, 4))) append(char *msg, int *n, const char *fmt, ...)
{
    if (*n < 0 || (size_t)*n >= WEFT__LOG_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(msg + *n, WEFT__LOG_MAX - (size_t)*n, fmt, ap);
    va_end(ap);
    *n = w < 0 ? -1 : *n + w;
}

/* One piece of advice for the arguments in set ("arg 0", "args 1, 2"). */
static void advise(char *msg, int *n, bool *any, uint64_t set, const char *what, const char *fix)
{
    if (!set)
        return;
    append(msg, n, "%s", *any ? "; " : "");
    int count = 0;
    for (int i = 0; i < 64; i++)
        count += (int)(set >> i & 1);
    append(msg, n, "%s", count > 1 ? "args" : "arg");
    for (int i = 0, k = 0; i < 64; i++)
        if (set >> i & 1)
            append(msg, n, "%s %d", k++ ? "," : "", i);
    append(msg, n, " %s: %s", what, fix);
    *any = true;
}

/* The advice of the warning, from how the quoted traces differed; never a
 * flag the function already has. */
static void advice(const weft_function *f, const weft__trace_note *notes, char *msg, int *n)
{
    weft__why all = { 0 };
    for (int i = 0; i < WEFT__RETRACE_LIMIT; i++) {
        all.static_i64 |= notes[i].why.static_i64;
        all.static_f64 |= notes[i].why.static_f64;
        all.dims |= notes[i].why.dims;
        all.rank |= notes[i].why.rank;
        all.dtype |= notes[i].why.dtype;
        all.kind |= notes[i].why.kind;
    }
    bool any = false;
    bool relaxing = (f->flags & WEFT_REDUCE_RETRACING) != 0;
    advise(msg, n, &any, all.static_f64, "keeps changing as a static scalar",
           "pass it as a tensor, or declare it f64[] in the input_signature");
    advise(msg, n, &any, all.static_i64 & ~all.static_f64, "keeps changing as a static scalar",
           "pass it as a tensor, or declare it i64[] in the input_signature");
    advise(msg, n, &any, all.dims, "keeps changing shape",
           relaxing ? "declare the dims that change as ? in the input_signature"
                    : "pass WEFT_REDUCE_RETRACING, or declare the dims that change as ? in the "
                      "input_signature");
    advise(msg, n, &any, all.rank, "keeps changing rank",
           "declare it of any rank ([*]) in the input_signature");
    advise(msg, n, &any, all.dtype, "keeps changing dtype", "cast it to one dtype before the call");
    advise(msg, n, &any, all.kind, "is a tensor in some calls and a static scalar in others",
           "pass one kind");
    if (!any)
        append(msg, n, "keep the arguments' dtypes, shapes and static values fixed");
}

void weft__cache_warn_retracing(weft_function *f, uint64_t calls,
                                const weft__trace_note notes[WEFT__RETRACE_LIMIT])
{
    char msg[WEFT__LOG_MAX];
    int n = 0;
    append(msg, &n, "weft: function '%s' traced %d times in its last %llu calls, which is costly: ",
           f->name, WEFT__RETRACE_LIMIT, (unsigned long long)calls);
    advice(f, notes, msg, &n);
    append(msg, &n, ".  Reasons:");
    for (int i = 0; i < WEFT__RETRACE_LIMIT; i++)
        append(msg, &n, "%s %s", i ? ";" : "", notes[i].reason);
    weft__cache_log(WEFT_LOG_WARN, "%s", msg);
}
