/* The trace cache under concurrent calls: each signature traces exactly
 * once when many threads see it first together, and eviction never frees a
 * concrete function another thread is running. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "base/sanitizer.h"
#include "cache/internal.h"

static weft_runtime *rt;

static void setup(void)
{
    rt = test_runtime(2);
}

static void teardown(void)
{
    weft_runtime_destroy(&rt);
}

TestSuite(cache_mt, .init = setup, .fini = teardown, .timeout = 60);

#if defined(WEFT__TSAN)
#define ROUNDS 20
#else
#define ROUNDS 100
#endif

#define THREADS 8

typedef struct shared {
    weft_function *f;
    pthread_barrier_t start;
    int traces;              /* bumped by the body (atomic) */
    int body_inside;         /* bodies running right now (atomic) */
    int overlap;             /* set if two bodies of f ever ran at once (atomic) */
    int n_sigs;
    long sleep_ms;           /* per trace */
    int rounds;
    int failures;            /* (atomic) */
} shared;

/* out = x * 2 + n (n = numel), slow enough at trace time that the other
 * threads arrive while the first one traces. */
static int body_slow(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    shared *s = user;
    if (__atomic_fetch_add(&s->body_inside, 1, __ATOMIC_SEQ_CST) != 0)
        __atomic_store_n(&s->overlap, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&s->traces, 1, __ATOMIC_SEQ_CST);
    struct timespec ts = { 0, s->sleep_ms * 1000 * 1000 };
    if (s->sleep_ms)
        nanosleep(&ts, NULL);
    weft_spec sp;
    weft_value_spec(args[0], &sp);
    outs[0] = weft_add(cx, weft_mul(cx, args[0], weft_const_f64(cx, 2.0)),
                       weft_const_f64(cx, (double)sp.dims[0]));
    __atomic_fetch_sub(&s->body_inside, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int check_call(shared *s, int64_t n)
{
    double data[8];
    for (int64_t i = 0; i < n; i++)
        data[i] = (double)i;
    weft_tensor *x = NULL, *out = NULL;
    if (weft_tensor_create(WEFT_F64, 1, &n, data, &x))
        return -1;
    weft_arg a = weft_arg_tensor(x);
    int rc = weft_function_call(s->f, &a, 1, &out, 1);
    if (rc == 0) {
        const double *o = weft_tensor_data(out);
        if (weft_tensor_dims(out)[0] != n)
            rc = -2;
        for (int64_t i = 0; i < n && rc == 0; i++)
            if (o[i] != 2.0 * (double)i + (double)n)
                rc = -3;
    }
    weft_tensor_release(out);
    weft_tensor_release(x);
    return rc;
}

static void *worker(void *arg)
{
    shared *s = arg;
    static int next_id;  /* (atomic) */
    int id = __atomic_fetch_add(&next_id, 1, __ATOMIC_SEQ_CST);
    pthread_barrier_wait(&s->start);
    for (int r = 0; r < s->rounds; r++) {
        int64_t n = 1 + (id + r) % s->n_sigs;
        if (check_call(s, n))
            __atomic_fetch_add(&s->failures, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void run_threads(shared *s)
{
    pthread_t th[THREADS];
    pthread_barrier_init(&s->start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, worker, s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&s->start);
}

static weft_function *make(shared *s, size_t max_cached)
{
    weft_function_desc d = { .name = "slow", .body = body_slow, .user = s, .n_args = 1,
                             .n_outs = 1, .max_cached = max_cached };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

Test(cache_mt, eight_threads_four_signatures_trace_four_times)
{
    shared *s = calloc(1, sizeof *s);
    s->n_sigs = 4;
    s->sleep_ms = 20;
    s->rounds = ROUNDS;
    s->f = make(s, 0);
    run_threads(s);
    cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0);
    cr_assert_eq(__atomic_load_n(&s->traces, __ATOMIC_SEQ_CST), 4);
    cr_assert_eq(weft_function_tracing_count(s->f), 4);
    cr_assert_eq(__atomic_load_n(&s->overlap, __ATOMIC_SEQ_CST), 0,
                 "two traces of one function overlapped");
    weft_function_stats st;
    weft_function_get_stats(s->f, &st);
    cr_assert_eq(st.calls, (uint64_t)THREADS * ROUNDS);
    cr_assert_eq(st.hits + st.misses, st.calls);
    cr_assert_geq(st.misses, 4);
    cr_assert_eq(st.cached, 4);
    weft_function_destroy(&s->f);
    free(s);
}

Test(cache_mt, eviction_under_concurrent_calls)
{
    shared *s = calloc(1, sizeof *s);
    s->n_sigs = 5;
    s->rounds = ROUNDS;
    s->f = make(s, 2);
    run_threads(s);
    cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0);
    weft_function_stats st;
    weft_function_get_stats(s->f, &st);
    cr_assert_leq(st.cached, 2);
    cr_assert_gt(st.evictions, 0);
    cr_assert_eq(st.traces, (uint64_t)__atomic_load_n(&s->traces, __ATOMIC_SEQ_CST));
    cr_assert_eq(st.traces, st.cached + st.evictions);
    cr_assert_eq(__atomic_load_n(&s->overlap, __ATOMIC_SEQ_CST), 0);
    weft_function_destroy(&s->f);
    free(s);
}

/* With every hash equal, each lookup compares the keys of every entry,
 * including ones other threads are evicting and freeing. */
Test(cache_mt, eviction_with_colliding_hashes)
{
    weft__cache_force_hash(7);
    shared *s = calloc(1, sizeof *s);
    s->n_sigs = 5;
    s->rounds = ROUNDS;
    s->f = make(s, 3);
    run_threads(s);
    cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0);
    weft_function_stats st;
    weft_function_get_stats(s->f, &st);
    cr_assert_leq(st.cached, 3);
    cr_assert_gt(st.evictions, 0);
    cr_assert_eq(st.traces, st.cached + st.evictions);
    weft_function_destroy(&s->f);
    free(s);
    weft__cache_force_hash(0);
}

/* A body that always fails, slowly. */
static int body_fail(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)cx;
    (void)args;
    (void)outs;
    shared *s = user;
    if (__atomic_fetch_add(&s->body_inside, 1, __ATOMIC_SEQ_CST) != 0)
        __atomic_store_n(&s->overlap, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&s->traces, 1, __ATOMIC_SEQ_CST);
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    __atomic_fetch_sub(&s->body_inside, 1, __ATOMIC_SEQ_CST);
    return WEFT_EHOST;
}

static void *fail_worker(void *arg)
{
    shared *s = arg;
    pthread_barrier_wait(&s->start);
    for (int r = 0; r < 3; r++) {
        int64_t n = 2;
        weft_tensor *x = NULL, *out = NULL;
        if (weft_tensor_create(WEFT_F64, 1, &n, NULL, &x))
            return NULL;
        weft_arg a = weft_arg_tensor(x);
        int rc = weft_function_call(s->f, &a, 1, &out, 1);
        /* Waiters get the tracer's error and message. */
        if (rc != WEFT_EHOST || out || weft_errmsg()[0] == '\0')
            __atomic_fetch_add(&s->failures, 1, __ATOMIC_SEQ_CST);
        weft_tensor_release(x);
    }
    return NULL;
}

Test(cache_mt, failed_traces_reach_every_waiter_and_are_not_cached)
{
    shared *s = calloc(1, sizeof *s);
    weft_function_desc d = { .name = "failing", .body = body_fail, .user = s, .n_args = 1,
                             .n_outs = 1 };
    cr_assert_eq(weft_function_create(rt, &d, &s->f), 0, "%s", weft_errmsg());
    pthread_t th[THREADS];
    pthread_barrier_init(&s->start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, fail_worker, s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&s->start);
    cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0);
    cr_assert_eq(__atomic_load_n(&s->overlap, __ATOMIC_SEQ_CST), 0);
    weft_function_stats st;
    weft_function_get_stats(s->f, &st);
    cr_assert_eq(st.cached, 0);
    cr_assert_eq(st.traces, (uint64_t)__atomic_load_n(&s->traces, __ATOMIC_SEQ_CST));
    cr_assert_geq(st.traces, 3, "each round after a failure traces again");
    weft_function_destroy(&s->f);
    free(s);
}

/* More threads than counter slots: the threads without one take the shared
 * counters and references; every call is still counted once.  Run twice, so
 * that the second group takes the slots the first gave back. */
#define MANY (WEFT__SLOTS + 8)

static void run_many(shared *s)
{
    pthread_t th[MANY];
    pthread_barrier_init(&s->start, NULL, MANY);
    for (int i = 0; i < MANY; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, worker, s), 0);
    for (int i = 0; i < MANY; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&s->start);
}

static uint64_t printed_calls(weft_function *f)
{
    char buf[4096] = { 0 };
    FILE *mem = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert(mem);
    cr_assert_eq(weft_function_print_signatures(f, mem), 0);
    fclose(mem);
    uint64_t sum = 0;
    for (const char *p = buf; (p = strstr(p, "calls=")); p += 6)
        sum += strtoull(p + 6, NULL, 10);
    return sum;
}

Test(cache_mt, more_threads_than_slots_count_every_call)
{
    shared *s = calloc(1, sizeof *s);
    s->n_sigs = 4;
    s->rounds = ROUNDS / 4;
    s->f = make(s, 0);
    for (int group = 1; group <= 2; group++) {
        run_many(s);
        cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0);
        weft_function_stats st;
        weft_function_get_stats(s->f, &st);
        uint64_t calls = (uint64_t)group * MANY * (uint64_t)s->rounds;
        cr_assert_eq(st.calls, calls);
        cr_assert_eq(st.hits + st.misses, calls);
        cr_assert_eq(st.traces, 4);
        cr_assert_eq(printed_calls(s->f), calls);
    }
    weft_function_destroy(&s->f);
    free(s);
}

Test(cache_mt, more_threads_than_slots_with_eviction)
{
    shared *s = calloc(1, sizeof *s);
    s->n_sigs = 5;
    s->rounds = ROUNDS / 4;
    s->f = make(s, 2);
    run_many(s);
    cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0);
    weft_function_stats st;
    weft_function_get_stats(s->f, &st);
    cr_assert_eq(st.calls, (uint64_t)MANY * (uint64_t)s->rounds);
    cr_assert_eq(st.hits + st.misses, st.calls);
    cr_assert_gt(st.evictions, 0);
    cr_assert_eq(st.traces, st.cached + st.evictions);
    weft_function_destroy(&s->f);
    free(s);
}

/* A hit writes nothing another thread writes: two threads hitting one
 * entry at once change only their own slots' lines; the entry's shared
 * reference count, LRU stamp, the function's clock and every other shared
 * counter stay as they were. */
typedef struct hitter {
    shared *s;
    int calls;
    unsigned slot;
    int *failures;  /* (atomic) */
} hitter;

static void *hit_worker(void *arg)
{
    hitter *h = arg;
    pthread_barrier_wait(&h->s->start);
    for (int k = 0; k < h->calls; k++)
        if (check_call(h->s, 3))
            __atomic_fetch_add(h->failures, 1, __ATOMIC_SEQ_CST);
    h->slot = weft__cache_slot();
    /* Both alive until both are done: neither takes a slot the other gave
     * back. */
    pthread_barrier_wait(&h->s->start);
    return NULL;
}

typedef struct shared_state {
    uint64_t refs, last_used, clock, misses, traces, cached, remaining;
} shared_state;

static shared_state snapshot(const weft_function *f, weft__entry *e)
{
    shared_state st = {  /* all uint64_t: no padding for memcmp */
        __atomic_load_n(&e->refs, __ATOMIC_SEQ_CST),
        __atomic_load_n(&e->last_used, __ATOMIC_SEQ_CST),
        __atomic_load_n(&f->clock, __ATOMIC_SEQ_CST),
        __atomic_load_n(&f->misses, __ATOMIC_SEQ_CST),
        __atomic_load_n(&f->traces, __ATOMIC_SEQ_CST),
        __atomic_load_n(&f->cached, __ATOMIC_SEQ_CST),
        __atomic_load_n(&e->remaining, __ATOMIC_SEQ_CST) };
    return st;
}

Test(cache_mt, hits_write_only_their_own_slots)
{
    shared *s = calloc(1, sizeof *s);
    s->f = make(s, 0);
    cr_assert_eq(check_call(s, 3), 0);  /* traces */
    cr_assert_eq(check_call(s, 3), 0);  /* a hit: now the most recently used */
    weft_spec spec;
    cr_assert_eq(weft_spec_parse("f64[3]", &spec), 0);
    weft_concrete *c = NULL;
    cr_assert_eq(weft_function_get_concrete(s->f, &spec, 1, &c), 0, "%s", weft_errmsg());
    weft__entry *e = c;
    cr_assert_eq(weft_function_tracing_count(s->f), 1, "get_concrete found the called entry");

    shared_state before = snapshot(s->f, e);
    uint64_t f_lines[WEFT__SLOTS + 1][2], e_lines[WEFT__SLOTS + 1][2];
    for (unsigned k = 0; k <= WEFT__SLOTS; k++) {
        f_lines[k][0] = __atomic_load_n(&s->f->st[k].calls, __ATOMIC_SEQ_CST);
        f_lines[k][1] = __atomic_load_n(&s->f->st[k].hits, __ATOMIC_SEQ_CST);
        e_lines[k][0] = __atomic_load_n(&e->sl[k].hot, __ATOMIC_SEQ_CST);
        e_lines[k][1] = __atomic_load_n(&e->sl[k].calls, __ATOMIC_SEQ_CST);
    }
    enum { CALLS = 200 };
    int failures = 0;  /* (atomic) */
    hitter h[2] = { { s, CALLS, 0, &failures }, { s, CALLS, 0, &failures } };
    pthread_t th[2];
    pthread_barrier_init(&s->start, NULL, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, hit_worker, &h[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&s->start);
    cr_assert_eq(__atomic_load_n(&failures, __ATOMIC_SEQ_CST), 0);
    cr_assert(h[0].slot < WEFT__SLOTS && h[1].slot < WEFT__SLOTS && h[0].slot != h[1].slot,
              "slots %u and %u", h[0].slot, h[1].slot);

    shared_state after = snapshot(s->f, e);
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0,
                 "a hit wrote shared state: refs %llu->%llu last_used %llu->%llu clock %llu->%llu",
                 (unsigned long long)before.refs, (unsigned long long)after.refs,
                 (unsigned long long)before.last_used,
                 (unsigned long long)after.last_used, (unsigned long long)before.clock,
                 (unsigned long long)after.clock);
    for (unsigned k = 0; k <= WEFT__SLOTS; k++) {
        uint64_t add = (k == h[0].slot || k == h[1].slot) ? CALLS : 0;
        cr_assert_eq(__atomic_load_n(&s->f->st[k].calls, __ATOMIC_SEQ_CST), f_lines[k][0] + add,
                     "calls of slot %u", k);
        cr_assert_eq(__atomic_load_n(&s->f->st[k].hits, __ATOMIC_SEQ_CST), f_lines[k][1] + add,
                     "hits of slot %u", k);
        cr_assert_eq(__atomic_load_n(&e->sl[k].hot, __ATOMIC_SEQ_CST), e_lines[k][0],
                     "hot count of slot %u", k);
        cr_assert_eq(__atomic_load_n(&e->sl[k].calls, __ATOMIC_SEQ_CST), e_lines[k][1] + add,
                     "entry calls of slot %u", k);
    }
    weft_function_destroy(&s->f);
    free(s);
}

/* get_concrete from several threads at once on a function that caches one
 * entry: each trace evicts another thread's entry, sometimes before that
 * thread has pinned it (the pin then puts it back).  Every
 * concrete function handed out stays alive and correct until the function
 * is destroyed.  (The evictor's chain of victims once shared its link with
 * the orphan list: a pin in between made the evictor drop an orphan's
 * last reference, a use after free and a double free.) */
#define PINNERS 4
#if defined(WEFT__TSAN)
#define PINS 300
#else
#define PINS 1500
#endif

typedef struct pinner {
    shared *s;
    int id;
    weft_concrete *c[PINS];
    int64_t n[PINS];
} pinner;

static void *pin_worker(void *arg)
{
    pinner *p = arg;
    pthread_barrier_wait(&p->s->start);
    for (int k = 0; k < PINS; k++) {
        weft_spec spec = { .dtype = WEFT_F64, .rank = 1 };
        spec.dims[0] = p->n[k] = 1 + p->id + PINNERS * k;   /* distinct everywhere */
        if (weft_function_get_concrete(p->s->f, &spec, 1, &p->c[k]) != 0)
            __atomic_fetch_add(&p->s->failures, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

/* Runs c on 0, 1, .., n-1 and checks body_slow's 2 x + n. */
static int check_concrete(weft_concrete *c, int64_t n)
{
    double *data = malloc((size_t)n * sizeof *data);
    if (!data)
        return -1;
    for (int64_t i = 0; i < n; i++)
        data[i] = (double)i;
    weft_tensor *x = NULL, *out = NULL;
    int rc = weft_tensor_create(WEFT_F64, 1, &n, data, &x);
    if (rc == 0)
        rc = weft_concrete_call(c, &x, 1, &out, 1);
    if (rc == 0) {
        const double *o = weft_tensor_data(out);
        for (int64_t i = 0; i < n && rc == 0; i++)
            if (o[i] != 2.0 * (double)i + (double)n)
                rc = -3;
    }
    weft_tensor_release(out);
    weft_tensor_release(x);
    free(data);
    return rc;
}

Test(cache_mt, concrete_functions_survive_concurrent_eviction)
{
    shared *s = calloc(1, sizeof *s);
    s->f = make(s, 1);
    pinner *p = calloc(PINNERS, sizeof *p);
    pthread_t th[PINNERS];
    pthread_barrier_init(&s->start, NULL, PINNERS);
    for (int i = 0; i < PINNERS; i++) {
        p[i] = (pinner){ .s = s, .id = i };
        cr_assert_eq(pthread_create(&th[i], NULL, pin_worker, &p[i]), 0);
    }
    for (int i = 0; i < PINNERS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&s->start);
    cr_assert_eq(__atomic_load_n(&s->failures, __ATOMIC_SEQ_CST), 0, "get_concrete failed");
    weft_function_stats st;
    weft_function_get_stats(s->f, &st);
    cr_assert_eq(st.traces, (uint64_t)PINNERS * PINS, "each signature traced once");
    /* A pin undoes an eviction that came before it. */
    cr_assert_eq(st.cached, (uint64_t)PINNERS * PINS, "pinned but not counted");
    cr_assert_eq(st.evictions, 0);
    for (int i = 0; i < PINNERS; i++)
        for (int k = 0; k < PINS; k++)
            cr_assert_eq(check_concrete(p[i].c[k], p[i].n[k]), 0,
                         "concrete function %d of thread %d (n = %lld): %s", k, i,
                         (long long)p[i].n[k], weft_errmsg());
    weft_function_destroy(&s->f);
    free(p);
    free(s);
}

/* Two functions whose bodies call each other with a new signature:
 * f(f64[3]) calls g(f64[5]) and g(f64[3]) calls f(f64[7]), each after
 * sleeping its own delay (so that both traces are under way).  The other
 * signatures call nothing. */
typedef struct cross_fn {
    weft_function *fn;
    struct cross_fn *other;
    int64_t calls_n;   /* the signature it calls the other with */
    long sleep_ms;
} cross_fn;

static int cross_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    cross_fn *me = user;
    weft_spec s;
    weft_value_spec(args[0], &s);
    if (s.dims[0] == 3) {
        struct timespec ts = { 0, me->sleep_ms * 1000 * 1000 };
        nanosleep(&ts, NULL);
        weft_tensor *x = NULL, *y = NULL;
        int rc = weft_tensor_create(WEFT_F64, 1, &me->calls_n, NULL, &x);
        weft_arg a = weft_arg_tensor(x);
        if (rc == 0)
            rc = weft_function_call(me->other->fn, &a, 1, &y, 1);
        weft_tensor_release(y);
        weft_tensor_release(x);
        if (rc)
            return rc;
    }
    outs[0] = weft_neg(cx, args[0]);
    return 0;
}

/* f and g, calling each other after f_ms and g_ms. */
static void cross_make(cross_fn *f, cross_fn *g, long f_ms, long g_ms)
{
    *f = (cross_fn){ NULL, g, 5, f_ms };
    *g = (cross_fn){ NULL, f, 7, g_ms };
    weft_function_desc df = { .name = "f", .body = cross_body, .user = f, .n_args = 1,
                              .n_outs = 1 };
    weft_function_desc dg = { .name = "g", .body = cross_body, .user = g, .n_args = 1,
                              .n_outs = 1 };
    cr_assert_eq(weft_function_create(rt, &df, &f->fn), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_function_create(rt, &dg, &g->fn), 0, "%s", weft_errmsg());
}

static int call_n3(weft_function *f)
{
    int64_t n = 3;
    weft_tensor *x = NULL, *y = NULL;
    int rc = weft_tensor_create(WEFT_F64, 1, &n, (double[]){ 1, 2, 3 }, &x);
    weft_arg a = weft_arg_tensor(x);
    if (rc == 0)
        rc = weft_function_call(f, &a, 1, &y, 1);
    if (rc == 0 && ((const double *)weft_tensor_data(y))[2] != -3.0)
        rc = -1;
    weft_tensor_release(y);
    weft_tensor_release(x);
    return rc;
}

/* One thread's call of fn(f64[3]), delay_ms after the start, and the
 * waits it refused meanwhile. */
typedef struct cross_run {
    weft_function *fn;
    long delay_ms;
    pthread_barrier_t *start;
    int rc;
    unsigned long refused;
    char msg[512];
} cross_run;

static void *cross_thread(void *p)
{
    cross_run *c = p;
    pthread_barrier_wait(c->start);
    struct timespec ts = { 0, c->delay_ms * 1000 * 1000 };
    nanosleep(&ts, NULL);
    unsigned long before = weft__cache_refusals();
    c->rc = call_n3(c->fn);
    c->refused = weft__cache_refusals() - before;
    snprintf(c->msg, sizeof c->msg, "%s", c->rc ? weft_errmsg() : "");
    return NULL;
}

static void cross_run_all(cross_run *c, int n)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    pthread_t th[4];
    for (int i = 0; i < n; i++) {
        c[i].start = &start;
        cr_assert_eq(pthread_create(&th[i], NULL, cross_thread, &c[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
}

/* Two threads trace f and g at once.  Each trace holds its function's
 * trace lock while its body waits for the other's: they once waited for
 * each other for ever.  Now the thread that would close the cycle fails
 * that call (WEFT_EINVAL) and the other goes on; called again alone, the
 * failed one works. */
Test(cache_mt, mutually_calling_traces_on_two_threads_do_not_hang)
{
    cross_fn f, g;
    cross_make(&f, &g, 100, 100);
    cross_run m[2] = { { .fn = f.fn }, { .fn = g.fn } };
    cross_run_all(m, 2);
    cr_log_info("f: %d %s; g: %d %s", m[0].rc, m[0].msg, m[1].rc, m[1].msg);
    cr_assert(m[0].rc == 0 || m[1].rc == 0, "both failed: %s / %s", m[0].msg, m[1].msg);
    for (int i = 0; i < 2; i++) {
        if (m[i].rc == 0)
            continue;
        cr_assert_eq(m[i].rc, WEFT_EINVAL, "%s", m[i].msg);
        cr_assert(strstr(m[i].msg, "cannot be traced on two threads at once"), "%s", m[i].msg);
        cr_assert_eq(call_n3(m[i].fn), 0, "alone, it traces: %s", weft_errmsg());
    }
    weft_function_destroy(&g.fn);
    weft_function_destroy(&f.fn);
}

/* Only the thread that closes a cycle fails.  f calls g after 40 ms, g
 * calls f after 20 ms, and a third thread merely calls f(f64[3]) at 30 ms
 * and waits for the trace in flight.  The refused trace is abandoned and
 * the waiter looks again (it used to get the refusal as its own error).
 * Whatever the timing, a thread whose call failed must have refused a
 * wait itself. */
Test(cache_mt, only_the_thread_closing_a_cycle_fails)
{
    for (int round = 0; round < 3; round++) {
        cross_fn f, g;
        cross_make(&f, &g, 40, 20);
        cross_run c[3] = { { .fn = f.fn }, { .fn = g.fn }, { .fn = f.fn, .delay_ms = 30 } };
        cross_run_all(c, 3);
        cr_log_info("round %d: f %d (%lu refused), g %d (%lu), waiter %d (%lu)", round, c[0].rc,
                    c[0].refused, c[1].rc, c[1].refused, c[2].rc, c[2].refused);
        for (int i = 0; i < 3; i++)
            cr_assert(c[i].rc == 0 || c[i].refused > 0,
                      "round %d thread %d failed without refusing a wait: %s", round, i,
                      c[i].msg);
        weft_function_destroy(&g.fn);
        weft_function_destroy(&f.fn);
    }
}

/* ---- the max_cached bound and traces in flight ---- */

static weft_function *pend_f;

static void pend_wait(int what, uint64_t at_least)
{
    struct timespec ts = { 0, 200 * 1000 };
    for (;;) {
        weft_function_stats s;
        weft_function_get_stats(pend_f, &s);
        if ((what ? s.evictions : s.cached) >= at_least)
            return;
        nanosleep(&ts, NULL);
    }
}

/* Static n: 100 traces once 4 entries are in the table (so 200 is pending
 * meanwhile); 200 fails once 100's eviction pass has run. */
static int body_pend(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    int *traces = user;  /* (atomic) */
    __atomic_fetch_add(traces, 1, __ATOMIC_SEQ_CST);
    int64_t n = 0;
    int rc = weft_value_static_i64(args[0], &n);
    if (rc)
        return rc;
    if (n == 100)
        pend_wait(0, 4);
    if (n == 200) {
        pend_wait(1, 1);
        return WEFT_EBODY;
    }
    outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}

static int pend_call(int64_t n)
{
    weft_arg a = weft_arg_i64(n);
    weft_tensor *y = NULL;
    int rc = weft_function_call(pend_f, &a, 1, &y, 1);
    weft_tensor_release(y);
    return rc;
}

static void *pend_thread(void *p)
{
    return (void *)(intptr_t)pend_call((int64_t)(intptr_t)p);
}

Test(cache_mt, a_pending_trace_does_not_evict_for_itself_early, .timeout = 60)
{
    int traces = 0;  /* (atomic) */
    weft_function_desc d = { .name = "pend", .body = body_pend, .user = &traces, .n_args = 1,
                             .n_outs = 1, .max_cached = 2 };
    cr_assert_eq(weft_function_create(rt, &d, &pend_f), 0, "%s", weft_errmsg());
    cr_assert_eq(pend_call(1), 0, "%s", weft_errmsg());
    cr_assert_eq(pend_call(2), 0, "%s", weft_errmsg());   /* 1 is the LRU one */
    pthread_t x, y;
    void *rx, *ry;
    cr_assert_eq(pthread_create(&x, NULL, pend_thread, (void *)(intptr_t)100), 0);
    pend_wait(0, 3);  /* 100 is pending: 200 queues behind its trace */
    cr_assert_eq(pthread_create(&y, NULL, pend_thread, (void *)(intptr_t)200), 0);
    pthread_join(x, &rx);
    pthread_join(y, &ry);
    cr_assert_eq((intptr_t)rx, 0);
    cr_assert_eq((intptr_t)ry, WEFT_EBODY);
    weft_function_stats s;
    weft_function_get_stats(pend_f, &s);
    cr_assert_eq(s.evictions, 1, "only 1 made room for 100 (evictions %llu)",
                 (unsigned long long)s.evictions);
    cr_assert_eq(s.cached, 2, "2 and 100 stay cached (cached %llu)", (unsigned long long)s.cached);
    int before = __atomic_load_n(&traces, __ATOMIC_SEQ_CST);
    cr_assert_eq(pend_call(2), 0, "%s", weft_errmsg());
    cr_assert_eq(__atomic_load_n(&traces, __ATOMIC_SEQ_CST), before, "2 was kept: no trace");
    weft_function_destroy(&pend_f);
}
