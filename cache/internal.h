/* cache/ internals: signature keys, cache entries (concrete functions) and
 * the function object.  Only the cache module and its tests include this file.
 *
 * Concurrency scheme:
 *  - The table is a ck_hs in SPMC mode keyed by the XXH3 hash of a
 *    signature's canonical encoding; the compare callback compares the
 *    encodings, so a hash collision never returns the wrong entry.  Writers
 *    (insert, evict) hold f->mu; readers take no lock and run inside a ck_epoch
 *    section only long enough to find an entry and take a reference on it.
 *  - Threads own slots (at most WEFT__SLOTS at once; epoch.c hands them out
 *    and takes them back when a thread exits).  A slot's counters are written
 *    by its owner only, so a hit writes no line another thread writes:
 *    statistics (calls, hits) and per-entry call counts are summed over the
 *    slots on read, and a hit's reference on its entry is a count in the
 *    entry's line for that slot ("hot").  Threads without a slot use the
 *    shared counters and the shared reference count instead.
 *  - An entry lives while its shared reference count is above zero or any
 *    hot count is.  The table holds one shared reference; get_concrete pins,
 *    map callees, tracers and slotless calls hold one each.  Whoever drops
 *    the last shared one waits for an epoch grace period (after it no reader
 *    can still be comparing its key or be about to raise a hot count), then
 *    marks every hot count with an atomic or, collecting the holders still
 *    running it into e->remaining; the last of them (or the marker, when
 *    none are left) frees it.  Hot counts rise with plain stores (only
 *    before the grace period, by their owner) and fall with an atomic
 *    subtract on the owner's own line, which tells whether they were
 *    marked.  Epoch sections never span a run: a host callback or map
 *    iteration inside the run may call back into the cache and evict, and
 *    the grace-period wait would then wait for its own caller's section.
 *    Pinned entries (get_concrete) are never freed before f, so
 *    weft_concrete_call takes no reference at all.
 *  - LRU: a function-wide clock advances when an entry becomes the most
 *    recently used (a hit, or an iteration of a map that applies it); a
 *    use of the entry that already is reads and writes nothing shared.
 *  - An entry is PENDING while one thread traces it; other threads that find
 *    it wait on f->cv.  Tracing is serialised per function by its trace
 *    lock (waits.c), and a wait between tracing threads that would close a
 *    cycle fails instead of hanging. */
#ifndef WEFT_CACHE_INTERNAL_H
#define WEFT_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <ck_hs.h>

#include "base/base.h"
#include "runtime/iface.h"
#include "trace/iface.h"

#define WEFT__DEFAULT_MAX_CACHED 64
#define WEFT__RETRACE_WINDOW 10   /* calls looked back at for the warning */
#define WEFT__RETRACE_LIMIT 5     /* traces among them that warn */

#define WEFT__SLOTS 16             /* threads with their own counters at once */

/* A function's and an entry's per-slot counters, one cache line per slot,
 * written by the slot's owner only (the last line, index WEFT__SLOTS, is
 * shared by threads without a slot and updated with atomic
 * read-modify-writes). */
typedef struct weft__fn_line {
    _Alignas(WEFT__CACHE_LINE) uint64_t calls;  /* valid weft_function_call calls (atomic) */
    uint64_t hits;                              /* calls that found a compiled entry (atomic) */
} weft__fn_line;
typedef struct weft__entry_line {
    _Alignas(WEFT__CACHE_LINE) uint64_t hot;    /* hit references held, see table.c (atomic) */
    uint64_t calls;                             /* runs of the entry (atomic) */
} weft__entry_line;

enum { ENTRY_PENDING = 0, ENTRY_READY = 1, ENTRY_FAILED = 2 };

/* A cache entry: one signature and, once traced, its compiled program.
 * Public name weft_concrete: get_concrete hands entries out pinned. */
/* What the table stores and looks up: entries begin with one, lookups
 * pass one on the stack.  published is release-stored before insertion so
 * that readers (who find entries through uninstrumented ck_hs code) see the
 * key bytes. */
typedef struct weft__key {
    bool published;               /* (atomic) */
    uint64_t hash;
    size_t len;
    const uint8_t *bytes;
} weft__key;

struct weft_concrete {
    weft__key k;                  /* must come first: the table's object */
    uint64_t last_used;           /* f->clock when last made most recent, LRU (atomic) */
    /* Written by misses, pins and map callees, read by hits. */
    _Alignas(WEFT__CACHE_LINE) unsigned refs;   /* (atomic) */
    int state;                    /* ENTRY_*; READY publishes prog and info (atomic) */
    uint64_t remaining;           /* hot holders left after the last shared unref (atomic) */
    /* Immutable once published (the key), or written before state. */
    _Alignas(WEFT__CACHE_LINE) weft_function *fn;
    size_t n_args;
    weft__targ *targs;
    bool has_any;                 /* some dim or rank is unknown */
    weft__program *prog;
    weft__trace_info info;
    int err;                      /* FAILED: the trace's error and message */
    /* FAILED because the tracing thread refused a wait that would have
     * closed a cycle: the error is that thread's, and waiters retry. */
    bool abandoned;
    char errmsg[512];
    /* While PENDING: the thread tracing it (waits.c, under its mutex). */
    struct weft__tracer *tracer;
    /* Owned by fn->mu. */
    bool pinned;                  /* handed out by get_concrete: never evicted (atomic) */
    bool in_table;
    struct weft_concrete *prev, *next;   /* the table's list, or f->orphans */
    /* The chain of entries that one thread took out of the table and
     * unrefs after unlocking fn->mu: a link of its own, since a pin may
     * relink a victim (back into the list, or onto f->orphans through
     * next) before that walk. */
    struct weft_concrete *dropped_next;
    weft__entry_line sl[WEFT__SLOTS + 1];
};
typedef struct weft_concrete weft__entry;

/* A retrace reason as weft_retrace.reason holds it, and a log line, which
 * holds WEFT__RETRACE_LIMIT of them and the advice. */
#define WEFT__REASON_MAX 256
#define WEFT__LOG_MAX (WEFT__RETRACE_LIMIT * WEFT__REASON_MAX + 1024)

/* How the arguments of a miss differed from the closest cached signature,
 * one bit per argument (the first 64), for the warning's advice. */
typedef struct weft__why {
    uint64_t static_i64, static_f64;  /* a static scalar's value */
    uint64_t dims, rank, dtype, kind; /* a tensor's; tensor vs static */
} weft__why;

/* A trace the frequent-retracing warning may quote. */
typedef struct weft__trace_note {
    char reason[WEFT__REASON_MAX];
    weft__why why;
} weft__trace_note;

struct weft_function {
    weft__callee callee;          /* must come first: see trace/iface.h */
    weft_runtime *rt;
    char *name;
    weft_body_fn body;
    void *user;
    size_t n_args, n_outs;
    weft_spec *input_signature;   /* NULL or n_args specs */
    weft__targ *sig_targs;        /* the declared signature as trace args */
    weft__key sig_key;            /* the declared signature's key */
    uint8_t *sig_bytes;
    unsigned flags;
    bool eager;
    bool no_jit;                  /* WEFT_FUNCTION_NO_JIT or WEFT_JIT=0 */
    bool log_retrace;
    size_t max_cached;

    /* The LRU clock: read by every hit, advanced when the most recently
     * used entry changes. */
    _Alignas(WEFT__CACHE_LINE) uint64_t clock;                   /* (atomic) */
    /* Statistics (atomic). */
    _Alignas(WEFT__CACHE_LINE) uint64_t misses, traces, evictions, cached;
    uint64_t trace_ns, compile_ns;
    uint64_t native_ns_gone;      /* native compile time of freed entries */
    unsigned n_any;               /* entries with unknown dims in the table (atomic) */

    _Alignas(WEFT__CACHE_LINE) ck_hs_t hs;
    pthread_mutex_t mu;           /* writers of hs, the list, retrace state */
    pthread_cond_t cv;            /* PENDING entries settle */
    /* One trace of this function at a time: the thread tracing it (waits.c,
     * under its mutex), NULL when none. */
    struct weft__tracer *trace_owner;
    weft__entry *head, *tail;     /* every entry in the table, oldest first */
    /* Pinned entries evicted before the pin whose signature was traced
     * again meanwhile, so that they could not go back into the table. */
    weft__entry *orphans;
    weft_retrace last_retrace;
    bool have_retrace;
    uint64_t trace_ticks[WEFT__RETRACE_LIMIT];  /* call ticks of recent traces */
    weft__trace_note trace_notes[WEFT__RETRACE_LIMIT];
    uint64_t n_trace_ticks;
    bool warned;
    weft__fn_line st[WEFT__SLOTS + 1];
};

/* key.c: signatures. */
int  weft__cache_spec_str(const weft_spec *s, char *buf, size_t size);
int  weft__cache_targ_str(const weft__targ *a, char *buf, size_t size);
/* The canonical encoding of targs into buf, which holds at least
 * weft__cache_key_bound(n) bytes; returns its length. */
size_t weft__cache_key_bound(size_t n);
/* The same bound as a constant expression (stack buffers): a count word,
 * then per argument a header word (kind, dtype, rank) and up to
 * WEFT_MAX_RANK dims or one value word.  Whole words only, so that the
 * hash's 8-byte reads never straddle narrower stores. */
#define WEFT__KEY_BOUND(n) (8 + (n) * (8 + 8 * WEFT_MAX_RANK))
size_t weft__cache_encode(const weft__targ *targs, size_t n, uint8_t *buf);
/* The same encoding straight from call arguments (tensor args: their
 * specs); args are valid (checked kinds, non-NULL tensors). */
size_t weft__cache_encode_args(const weft_arg *args, size_t n, uint8_t *buf);
uint64_t weft__cache_hash(const uint8_t *key, size_t len);
/* Test hook: every hash becomes h (0: off). */
void weft__cache_force_hash(uint64_t h);
/* Whether a concrete value of spec `got` fits spec `want` (unknown dims and
 * ranks of want match anything). */
bool weft__cache_spec_fits(const weft_spec *want, const weft_spec *got);
/* Whether targ a fits cached b: same kinds and static values, tensor specs
 * fitting. */
bool weft__cache_targ_fits(const weft__targ *cached, const weft__targ *a);
int  weft__cache_check_spec(const char *fn, size_t i, const weft_spec *s);

/* epoch.c: reader sections and grace periods over one process-wide epoch. */
typedef struct ck_epoch_record weft__epoch_rec;
typedef struct weft__cache_tls weft__cache_tls;
int  weft__cache_epoch_enter(weft__epoch_rec **rec);
/* The same, given the calling thread's weft__cache_tl. */
int  weft__cache_epoch_enter_tl(weft__cache_tls *tl, weft__epoch_rec **rec);
void weft__cache_epoch_exit(weft__epoch_rec *rec);
void weft__cache_epoch_synchronize(void);

/* epoch.c: slots.  The calling thread's slot (0..WEFT__SLOTS-1), taken on
 * first use and given back when the thread exits; WEFT__SLOTS when all are
 * taken (the shared line). */
struct weft__cache_tls {
    unsigned slot;             /* slot + 1; 0: none yet */
    weft__epoch_rec *rec;      /* registered on first use, NULL before */
};
/* One thread-local block, so that a call looks it up once (a shared
 * library pays a call per thread-local lookup). */
extern _Thread_local weft__cache_tls weft__cache_tl;
unsigned weft__cache_slot_slow(void);
static inline unsigned weft__cache_slot_of(const weft__cache_tls *tl)
{
    return tl->slot ? tl->slot - 1 : weft__cache_slot_slow();
}
static inline unsigned weft__cache_slot(void)
{
    return weft__cache_slot_of(&weft__cache_tl);
}
/* Adds v to c, a counter of slot s's line: a plain store for an owned
 * slot, an atomic add on the shared line. */
static inline void weft__slot_add(uint64_t *c, unsigned s, uint64_t v)
{
    if (s < WEFT__SLOTS)
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}
/* A counter summed over every slot's line. */
static inline uint64_t weft__fn_calls(const weft_function *f)
{
    uint64_t n = 0;
    for (unsigned s = 0; s <= WEFT__SLOTS; s++)
        n += __atomic_load_n(&f->st[s].calls, __ATOMIC_RELAXED);
    return n;
}
static inline uint64_t weft__fn_hits(const weft_function *f)
{
    uint64_t n = 0;
    for (unsigned s = 0; s <= WEFT__SLOTS; s++)
        n += __atomic_load_n(&f->st[s].hits, __ATOMIC_RELAXED);
    return n;
}
static inline uint64_t weft__entry_calls(const weft__entry *e)
{
    uint64_t n = 0;
    for (unsigned s = 0; s <= WEFT__SLOTS; s++)
        n += __atomic_load_n(&e->sl[s].calls, __ATOMIC_RELAXED);
    return n;
}

/* table.c: lookup, tracing, eviction. */
int  weft__cache_table_init(weft_function *f);
void weft__cache_table_destroy(weft_function *f);
/* The hit path: the READY entry of key with a hot reference of slot s
 * (s < WEFT__SLOTS), or NULL (absent, pending, or only covered by an entry
 * with unknown dims: the caller then calls weft__cache_acquire).  Release it
 * with weft__cache_hit_done. */
weft__entry *weft__cache_hit(weft_function *f, const weft__key *key, weft__cache_tls *tl,
                             unsigned s);
void weft__cache_hit_done(weft__entry *e, unsigned s);
/* Finds or traces the entry of targs (whose encoding is key/len/hash) and
 * returns it with a shared reference held; who, the public entry point,
 * starts its error messages.  from_call: for a
 * weft_function_call, whose traces count towards the frequent-retracing
 * warning (traces of get_concrete and map are not calls). */
int  weft__cache_acquire(const char *who, weft_function *f, const weft__targ *targs,
                         const weft__key *key, bool from_call, weft__entry **out, bool *hit);
/* Makes e the most recently used entry of its function. */
void weft__cache_touch(weft__entry *e);
/* Marks e pinned (never evicted, alive until f is destroyed) and drops the
 * caller's reference; when e was evicted before the pin, that reference
 * keeps it instead, back in the table or on f->orphans, and the pin evicts
 * others for it as a trace would. */
void weft__cache_pin(weft__entry *e);
bool weft__cache_ref(weft__entry *e);
void weft__cache_unref(weft__entry *e);
void weft__cache_entry_free(weft__entry *e);

/* waits.c: the trace lock of f, and waits for PENDING entries, refused
 * (false) when they would wait for the calling thread itself, through
 * other tracing threads. */
typedef struct weft__tracer weft__tracer;
bool weft__cache_trace_lock(weft_function *f);
void weft__cache_trace_unlock(weft_function *f);
/* Records whether the calling thread traces the PENDING entry e (mine), or
 * that nobody does any more (settled). */
void weft__cache_entry_claim(weft__entry *e, bool mine);
/* Around a wait for e to settle.  *mine: e is the calling thread's own
 * (it claimed e and has not traced it yet: a call from its log sink). */
bool weft__cache_wait_begin(const weft__entry *e, bool *mine);
void weft__cache_wait_end(void);
/* How many waits the calling thread has refused so far: a trace whose
 * count rose failed because of a refusal, and its waiters retry. */
unsigned long weft__cache_refusals(void);

/* retrace.c, under f->mu: why targs missed, against the closest cached
 * signature (into *r, and how each argument differed into *why); a trace
 * for the frequent-retracing warning, returning the number of calls its
 * last WEFT__RETRACE_LIMIT traces spanned when it is time to warn (once
 * per function), else 0; and the notes of those traces, oldest first.
 * The warning itself is logged outside f->mu (the sink may call weft).
 * weft__cache_relax (WEFT_REDUCE_RETRACING) sets to WEFT_DIM_ANY the dims
 * of t that differ from a cached signature of the same structure, and
 * returns whether it changed any. */
bool     weft__cache_relax(const weft_function *f, weft__targ *t, size_t n);
void     weft__cache_explain_miss(weft_function *f, const weft__targ *targs, size_t n,
                                  weft_retrace *r, weft__why *why);
uint64_t weft__cache_note_trace(weft_function *f, uint64_t tick, const char *reason,
                                const weft__why *why);
void     weft__cache_recent_traces(const weft_function *f,
                                   weft__trace_note notes[WEFT__RETRACE_LIMIT]);
void     weft__cache_warn_retracing(weft_function *f, uint64_t calls,
                                    const weft__trace_note notes[WEFT__RETRACE_LIMIT]);

/* env.c: the knobs read when a function is created (who starts the
 * messages).  WEFT_RUN_EAGERLY, a switch: unset or empty is off; on is 1,
 * true, yes, on, off is 0, false, no, off (any case); anything else is
 * WEFT_EINVAL.  WEFT_LOG: comma-separated topics (retrace) or switch words
 * (on: every topic, off: none), any case; empty items are skipped; an
 * unknown one is WEFT_EINVAL. */
#define WEFT__LOG_RETRACE 1u
#define WEFT__LOG_ALL     1u
int weft__env_switch(const char *who, const char *name, bool *out);
int weft__env_log(const char *who, unsigned *topics);

/* log.c */
void weft__cache_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* debug.c */
int  weft__cache_sig_str(const weft__targ *targs, size_t n, char *buf, size_t size);

#endif
