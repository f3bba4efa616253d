/* The timeline profiler: per-thread lanes of spans and instants, written as
 * Chrome trace-event JSON by weft_profile_end.
 *
 * Recording takes no lock.  Active profiles live in a small static table of
 * slots (never freed, so a recorder can always touch a slot).  A recorder
 * announces itself on one of the slot's striped `users` counters before it
 * loads the slot's profile pointer; weft_profile_end clears that pointer and
 * then waits until every stripe is zero, after which no recorder can still
 * hold the profile and its lanes may be read and freed.  Both sides use
 * sequentially consistent operations, so either the recorder sees the
 * cleared pointer or the ender sees the recorder's count (Dekker). */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"

#define MAX_PROFILES   64          /* runtimes profiled at once */
#define USER_STRIPES   8           /* striped in-flight recorder counters */
#define CHUNK_EVENTS   4096        /* events per lazily allocated chunk */
#define MAX_CHUNKS     16          /* so a lane holds at most 1 << 16 events */
#define NAME_MAX_LEN   48
#define DETAIL_MAX_LEN 80
#define TLS_CACHE      4           /* lanes remembered per thread */

typedef struct event {
    uint64_t t0, t1;               /* t1 == UINT64_MAX: an instant */
    const char *cat;               /* static string */
    char name[NAME_MAX_LEN];
    char detail[DETAIL_MAX_LEN];
} event;

/* One thread's events in one profile.  Written only by its thread; read by
 * weft_profile_end after every recorder has left. */
typedef struct lane {
    struct lane *next;
    uint64_t owner;                /* the writing thread's tls_thread_id */
    int tid;
    char label[32];
    size_t n;                      /* events stored */
    uint64_t dropped;              /* events past the bound or without a chunk */
    event *chunks[MAX_CHUNKS];
} lane;

typedef struct profile {
    uint64_t id;                   /* unique over the process, keys the TLS cache */
    const weft_runtime *rt;
    FILE *file;
    char *path;
    uint64_t t_begin;
    pthread_mutex_t lanes_lock;    /* guards lanes and n_outside while adding one */
    lane *lanes;
    int n_outside;
    /* Events of threads whose lane could not be allocated; any thread adds. */
    uint64_t dropped_no_lane;      /* (atomic) */
} profile;

typedef struct stripe {
    long users;                    /* (atomic) */
    char pad[WEFT__CACHE_LINE - sizeof(long)];
} stripe;

typedef struct slot {
    const weft_runtime *rt;        /* the profiled runtime, or NULL (atomic) */
    profile *prof;                 /* (atomic) */
    char pad[WEFT__CACHE_LINE - 2 * sizeof(void *)];
    stripe users[USER_STRIPES];
} slot;

static _Alignas(WEFT__CACHE_LINE) slot slots[MAX_PROFILES];
/* Checked first by weft__profiling, so that not profiling costs one load. */
static _Alignas(WEFT__CACHE_LINE) int active_profiles;   /* (atomic) */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
/* Counters handing out ids and stripes (atomic). */
static uint64_t next_id = 1;
static uint64_t next_thread_id = 1;
static unsigned next_stripe;

typedef struct tls_entry { uint64_t id; lane *lane; } tls_entry;
static _Thread_local tls_entry tls_lanes[TLS_CACHE];
static _Thread_local unsigned tls_next_entry;
static _Thread_local int tls_stripe = -1;
/* Names the calling thread's lanes; unique over the process (0: unset). */
static _Thread_local uint64_t tls_thread_id;

static slot *find_slot(const weft_runtime *rt)
{
    for (size_t i = 0; i < MAX_PROFILES; i++)
        if (__atomic_load_n(&slots[i].rt, __ATOMIC_RELAXED) == rt)
            return &slots[i];
    return NULL;
}

bool weft__profiling(const weft_runtime *rt)
{
    if (__atomic_load_n(&active_profiles, __ATOMIC_RELAXED) == 0)
        return false;
    return rt && find_slot(rt) != NULL;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    if (!src) {
        dst[0] = '\0';
        return;
    }
    size_t len = strnlen(src, size - 1);
    /* A cut inside a UTF-8 sequence would make the JSON file invalid:
     * drop the partial character (continuation bytes are 10xxxxxx). */
    if (src[len] != '\0')
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* A new lane for the calling thread, added to p's list.  Called with p's
 * lock held.  NULL when out of memory. */
static lane *add_lane_locked(profile *p, weft_runtime *rt)
{
    lane *l = weft__calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->owner = tls_thread_id;
    int w = weft__worker_index(rt);
    if (w >= 0) {
        l->tid = w;
        snprintf(l->label, sizeof l->label, "worker %d", w);
    } else {
        /* Outside threads sort after the workers. */
        l->tid = (int)weft_runtime_workers(rt) + p->n_outside;
        snprintf(l->label, sizeof l->label, "outside thread %d", p->n_outside);
        p->n_outside++;
    }
    l->next = p->lanes;
    p->lanes = l;
    return l;
}

/* The calling thread's lane in p, created on first use (under p's lock,
 * the only lock a recorder ever takes).  NULL when out of memory. */
static lane *my_lane(profile *p, weft_runtime *rt)
{
    for (unsigned i = 0; i < TLS_CACHE; i++)
        if (tls_lanes[i].id == p->id)
            return tls_lanes[i].lane;
    if (tls_thread_id == 0)
        tls_thread_id = __atomic_fetch_add(&next_thread_id, 1, __ATOMIC_RELAXED);
    /* A thread that records into more than TLS_CACHE profiles has its
     * lane pushed out of the cache: look it up rather than add another. */
    pthread_mutex_lock(&p->lanes_lock);
    lane *l = p->lanes;
    while (l && l->owner != tls_thread_id)
        l = l->next;
    if (!l)
        l = add_lane_locked(p, rt);
    pthread_mutex_unlock(&p->lanes_lock);
    if (!l)
        return NULL;
    tls_entry *e = &tls_lanes[tls_next_entry++ % TLS_CACHE];
    e->id = p->id;
    e->lane = l;
    return l;
}

static void record(weft_runtime *rt, const char *cat, const char *name,
                   uint64_t t0, uint64_t t1, const char *detail)
{
    if (__atomic_load_n(&active_profiles, __ATOMIC_RELAXED) == 0 || !rt)
        return;
    slot *s = find_slot(rt);
    if (!s)
        return;
    if (tls_stripe < 0)
        tls_stripe = (int)(__atomic_fetch_add(&next_stripe, 1, __ATOMIC_RELAXED)
                           % USER_STRIPES);
    long *users = &s->users[tls_stripe].users;
    __atomic_fetch_add(users, 1, __ATOMIC_SEQ_CST);   /* seq_cst: see the top */
    profile *p = __atomic_load_n(&s->prof, __ATOMIC_SEQ_CST);
    if (p && p->rt == rt) {
        lane *l = my_lane(p, rt);
        if (!l) {
            __atomic_fetch_add(&p->dropped_no_lane, 1, __ATOMIC_RELAXED);
        } else {
            size_t c = l->n / CHUNK_EVENTS;
            if (c < MAX_CHUNKS && !l->chunks[c])
                l->chunks[c] = weft__malloc(CHUNK_EVENTS * sizeof(event));
            if (c >= MAX_CHUNKS || !l->chunks[c]) {
                l->dropped++;
            } else {
                event *e = &l->chunks[c][l->n % CHUNK_EVENTS];
                e->t0 = t0;
                e->t1 = t1;
                e->cat = cat ? cat : "op";
                copy_str(e->name, sizeof e->name, name ? name : "");
                copy_str(e->detail, sizeof e->detail, detail);
                l->n++;
            }
        }
    }
    __atomic_fetch_sub(users, 1, __ATOMIC_RELEASE);
}

void weft__profile_span(weft_runtime *rt, const char *cat, const char *name,
                        uint64_t t0_ns, uint64_t t1_ns, const char *detail)
{
    if (t1_ns < t0_ns)
        t1_ns = t0_ns;
    if (t1_ns == UINT64_MAX)
        t1_ns--;
    record(rt, cat, name, t0_ns, t1_ns, detail);
}

void weft__profile_instant(weft_runtime *rt, const char *cat, const char *name)
{
    uint64_t t = weft__now_ns();
    record(rt, cat, name, t, UINT64_MAX, NULL);
}

static void profile_free(profile *p)
{
    if (!p)
        return;
    lane *l = p->lanes;
    while (l) {
        lane *next = l->next;
        for (size_t c = 0; c < MAX_CHUNKS; c++)
            weft__free(l->chunks[c]);
        weft__free(l);
        l = next;
    }
    if (p->file)
        fclose(p->file);
    pthread_mutex_destroy(&p->lanes_lock);
    weft__free(p->path);
    weft__free(p);
}

int weft_profile_begin(weft_runtime *rt, const char *path)
{
    profile *p = NULL;
    int rc;
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "weft_profile_begin: runtime is NULL");
    if (!path || !path[0])
        return weft__errorf(WEFT_EINVAL, "weft_profile_begin: path is NULL or empty");
    pthread_mutex_lock(&table_lock);
    if (find_slot(rt)) {
        rc = weft__errorf(WEFT_EINVAL, "weft_profile_begin: a profile of this runtime is "
                          "already recording (call weft_profile_end first)");
        goto error;
    }
    slot *free_slot = find_slot(NULL);
    if (!free_slot) {
        rc = weft__errorf(WEFT_EAGAIN, "weft_profile_begin: %d runtimes are already profiled",
                          MAX_PROFILES);
        goto error;
    }
    p = weft__calloc(1, sizeof *p);
    if (!p) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_profile_begin: out of memory");
        goto error;
    }
    pthread_mutex_init(&p->lanes_lock, NULL);
    p->path = weft__strdup(path);
    if (!p->path) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_profile_begin: out of memory");
        goto error;
    }
    /* Opened now so that an unwritable path fails here, not after the run. */
    p->file = fopen(path, "w");
    if (!p->file) {
        rc = weft__errorf(WEFT_EIO, "weft_profile_begin: cannot open '%s' for writing", path);
        goto error;
    }
    p->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    p->rt = rt;
    p->t_begin = weft__now_ns();
    __atomic_store_n(&free_slot->prof, p, __ATOMIC_SEQ_CST);
    __atomic_store_n(&free_slot->rt, rt, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&active_profiles, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&table_lock);
    return 0;
error:
    pthread_mutex_unlock(&table_lock);
    profile_free(p);
    return rc;
}

/* Takes rt's profile out of the table and waits until no recorder holds it.
 * Called with table_lock held.  NULL when rt has no profile. */
static profile *detach_locked(const weft_runtime *rt)
{
    slot *s = find_slot(rt);
    if (!s)
        return NULL;
    profile *p = __atomic_exchange_n(&s->prof, NULL, __ATOMIC_SEQ_CST);   /* seq_cst: see the top */
    for (size_t i = 0; i < USER_STRIPES; i++)
        while (__atomic_load_n(&s->users[i].users, __ATOMIC_SEQ_CST) != 0)
            sched_yield();
    __atomic_store_n(&s->rt, NULL, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&active_profiles, 1, __ATOMIC_SEQ_CST);
    return p;
}

/* The length of the well-formed multi-byte UTF-8 character at c (2 to 4),
 * or 0 when c starts no such character: a stray continuation byte, a byte never in
 * UTF-8, a cut sequence, an overlong form, a surrogate, or past U+10FFFF. */
static size_t utf8_len(const unsigned char *c)
{
    size_t len = c[0] >= 0xC2 && c[0] <= 0xDF ? 2 : c[0] >= 0xE0 && c[0] <= 0xEF ? 3
               : c[0] >= 0xF0 && c[0] <= 0xF4 ? 4 : 0;
    /* The bounds of the second byte exclude the overlong forms, the
     * surrogates and what lies past U+10FFFF. */
    unsigned char lo = c[0] == 0xE0 ? 0xA0 : c[0] == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c[0] == 0xED ? 0x9F : c[0] == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k < len; k++)
        if (c[k] < (k == 1 ? lo : 0x80) || c[k] > (k == 1 ? hi : 0xBF))
            return 0;                  /* a NUL ends the loop here too */
    return len;
}

/* Names and details are the callers' bytes (a function's name), which need
 * not be UTF-8; JSON must be, so a byte that starts no well-formed
 * character is written as U+FFFD. */
static void write_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            fprintf(f, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(f, "\\u%04x", *c);
        } else if (*c < 0x80) {
            fputc(*c, f);
        } else {
            size_t len = utf8_len(c);
            if (len == 0) {
                fputs("\\ufffd", f);
            } else {
                fwrite(c, 1, len, f);
                c += len - 1;
            }
        }
    }
    fputc('"', f);
}

/* Microseconds since the profile began, with nanosecond digits. */
static void write_us(FILE *f, uint64_t ns)
{
    fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static int write_profile(profile *p)
{
    FILE *f = p->file;
    uint64_t dropped = __atomic_load_n(&p->dropped_no_lane, __ATOMIC_RELAXED);
    bool first = true;
    fputs("{\"traceEvents\":[\n", f);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
          "\"args\":{\"name\":\"weft\"}}", f);
    first = false;
    for (lane *l = p->lanes; l; l = l->next) {
        dropped += l->dropped;
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":", l->tid);
        write_json_str(f, l->label);
        fprintf(f, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}", l->tid, l->tid);
        for (size_t i = 0; i < l->n; i++) {
            const event *e = &l->chunks[i / CHUNK_EVENTS][i % CHUNK_EVENTS];
            uint64_t t0 = e->t0 > p->t_begin ? e->t0 - p->t_begin : 0;
            fputs(first ? "" : ",\n", f);
            fputs("{\"name\":", f);
            write_json_str(f, e->name);
            fputs(",\"cat\":", f);
            write_json_str(f, e->cat);
            if (e->t1 == UINT64_MAX) {
                fputs(",\"ph\":\"i\",\"s\":\"t\",\"ts\":", f);
                write_us(f, t0);
            } else {
                uint64_t t1 = e->t1 > p->t_begin ? e->t1 - p->t_begin : 0;
                fputs(",\"ph\":\"X\",\"ts\":", f);
                write_us(f, t0);
                fputs(",\"dur\":", f);
                write_us(f, t1 - t0);
            }
            fprintf(f, ",\"pid\":1,\"tid\":%d", l->tid);
            if (e->detail[0]) {
                fputs(",\"args\":{\"detail\":", f);
                write_json_str(f, e->detail);
                fputc('}', f);
            }
            fputc('}', f);
        }
    }
    fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"dropped_events\":%llu}}\n",
            (unsigned long long)dropped);
    int bad = ferror(f);
    int closed = fclose(f);
    p->file = NULL;
    if (bad || closed != 0)
        return weft__errorf(WEFT_EIO, "weft_profile_end: writing '%s' failed", p->path);
    return 0;
}

int weft_profile_end(weft_runtime *rt)
{
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "weft_profile_end: runtime is NULL");
    pthread_mutex_lock(&table_lock);
    profile *p = detach_locked(rt);
    pthread_mutex_unlock(&table_lock);
    if (!p)
        return weft__errorf(WEFT_EINVAL, "weft_profile_end: no profile of this runtime is recording");
    int rc = write_profile(p);
    profile_free(p);
    return rc;
}

/* The runtime is being destroyed while its profile records: the file at
 * path was created (empty) by weft_profile_begin, so write what was recorded
 * rather than leave an empty file that no viewer opens.  A write error only
 * sets weft_errmsg (weft_runtime_destroy returns nothing). */
void weft__profile_runtime_gone(weft_runtime *rt)
{
    if (!rt || __atomic_load_n(&active_profiles, __ATOMIC_RELAXED) == 0)
        return;
    pthread_mutex_lock(&table_lock);
    profile *p = detach_locked(rt);
    pthread_mutex_unlock(&table_lock);
    if (p)
        (void)write_profile(p);
    profile_free(p);
}
