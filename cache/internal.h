/* cache/ internals: signature keys, cache entries (concrete functions) and
 * the function object.  Only the cache module and its tests include this file.
 *
 * Concurrency scheme:
 *  - The table is a ck_hs in SPMC mode keyed by the XXH3 hash of a
 *    signature's canonical encoding; the compare callback compares the
 *    encodings, so a hash collision never returns the wrong entry.  Writers
 *    (insert, evict) hold f->mu; readers take no lock and run inside a ck_epoch
 *    section only long enough to find an entry and take a reference on it.
 *  - An entry lives while its reference count is above zero.  The table holds
 *    one reference; each running call, each map callee holds one.  Whoever
 *    drops the last one waits for an epoch grace period (no reader can still
 *    be comparing its key) and frees it.
 *  - An entry is PENDING while one thread traces it; other threads that find
 *    it wait on f->cv.  Tracing is serialised per function by f->trace_mu. */
#ifndef WEFT_CACHE_INTERNAL_H
#define WEFT_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <ck_hs.h>

#include "runtime/iface.h"
#include "trace/iface.h"

#define WEFT__CACHE_LINE 64
#define WEFT__DEFAULT_MAX_CACHED 64
#define WEFT__RETRACE_WINDOW 10   /* calls looked back at for the warning */
#define WEFT__RETRACE_LIMIT 5     /* traces among them that warn */

enum { ENTRY_PENDING = 0, ENTRY_READY = 1, ENTRY_FAILED = 2 };

/* A cache entry: one signature and, once traced, its compiled program.
 * Public name weft_concrete: get_concrete hands entries out pinned. */
/* What the table stores and looks up: entries begin with one, lookups
 * pass one on the stack.  published is release-stored before insertion so
 * that readers (who find entries through uninstrumented ck_hs code) see the
 * key bytes. */
typedef struct weft__key {
    atomic_bool published;
    uint64_t hash;
    size_t len;
    const uint8_t *bytes;
} weft__key;

struct weft_concrete {
    weft__key k;                  /* must come first: the table's object */
    /* Written by hits: one line. */
    _Alignas(WEFT__CACHE_LINE) atomic_uint refs;
    atomic_int state;             /* ENTRY_*; READY publishes prog and info */
    atomic_uint_fast64_t last_used;  /* the call tick of the last hit (LRU) */
    atomic_uint_fast64_t calls;
    /* Immutable once published (the key), or written before state. */
    _Alignas(WEFT__CACHE_LINE) weft_function *fn;
    size_t n_args;
    weft__targ *targs;
    bool has_any;                 /* some dim or rank is unknown */
    weft__program *prog;
    weft__trace_info info;
    int err;                      /* FAILED: the trace's error and message */
    char errmsg[512];
    /* Owned by fn->mu. */
    atomic_bool pinned;           /* handed out by get_concrete: never evicted */
    bool in_table;
    struct weft_concrete *prev, *next;
};
typedef struct weft_concrete weft__entry;

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
    bool log_retrace;
    size_t max_cached;

    /* Hot statistics, written by every call. */
    _Alignas(WEFT__CACHE_LINE) atomic_uint_fast64_t calls;
    atomic_uint_fast64_t hits;
    _Alignas(WEFT__CACHE_LINE) atomic_uint_fast64_t misses, traces, evictions, cached;
    atomic_uint_fast64_t trace_ns, compile_ns;
    atomic_uint n_any;            /* entries with unknown dims in the table */

    _Alignas(WEFT__CACHE_LINE) ck_hs_t hs;
    pthread_mutex_t mu;           /* writers of hs, the list, retrace state */
    pthread_cond_t cv;            /* PENDING entries settle */
    pthread_mutex_t trace_mu;     /* one trace of this function at a time */
    weft__entry *head, *tail;     /* every entry in the table, oldest first */
    weft__entry *orphans;         /* pinned entries evicted before the pin */
    weft_retrace last_retrace;
    bool have_retrace;
    uint64_t trace_ticks[WEFT__RETRACE_LIMIT];  /* call ticks of recent traces */
    char trace_reasons[WEFT__RETRACE_LIMIT][128];
    uint64_t n_trace_ticks;
    bool warned;
};

/* key.c: signatures. */
int  weft__cache_spec_str(const weft_spec *s, char *buf, size_t size);
int  weft__cache_targ_str(const weft__targ *a, char *buf, size_t size);
/* The canonical encoding of targs into buf, which holds at least
 * weft__cache_key_bound(n) bytes; returns its length. */
size_t weft__cache_key_bound(size_t n);
size_t weft__cache_encode(const weft__targ *targs, size_t n, uint8_t *buf);
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
int  weft__cache_epoch_enter(weft__epoch_rec **rec);
void weft__cache_epoch_exit(weft__epoch_rec *rec);
void weft__cache_epoch_synchronize(void);

/* table.c: lookup, tracing, eviction. */
int  weft__cache_table_init(weft_function *f);
void weft__cache_table_destroy(weft_function *f);
/* Finds or traces the entry of targs (whose encoding is key/len/hash) and
 * returns it with a reference held. */
int  weft__cache_acquire(weft_function *f, const weft__targ *targs, const weft__key *key,
                         uint64_t tick, weft__entry **out, bool *hit);
/* Marks e pinned (never evicted, alive until f is destroyed) and drops the
 * caller's reference. */
void weft__cache_pin(weft__entry *e);
bool weft__cache_ref(weft__entry *e);
void weft__cache_unref(weft__entry *e);
void weft__cache_entry_free(weft__entry *e);

/* log.c */
void weft__cache_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* debug.c */
int  weft__cache_sig_str(const weft__targ *targs, size_t n, char *buf, size_t size);

#endif
