/* fib(30) and fib(35) without a cutoff, two ways on weft: typed tasks
 * (WEFT_SPAWN / WEFT_CALL / WEFT_SYNC, <weft/task.h>), and a fork-join
 * group with one weft_spawn child per call, the other child run inline, the
 * argument struct on the stack.  Against serial C (-O2), OpenMP tasks and
 * TBB task_group; the "model" rows (one thread, not weft) are the floor of
 * a Lace-style typed spawn written out by hand, and "a copy per thread"
 * (serial fib on every thread at once, per copy) is the speedup this
 * machine allows at that moment. */
#include "bench.h"
#include "contenders.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft.h>

static weft_runtime *rt;
static int weft_errors;

typedef struct fib_arg {
    int n;
    int64_t r;
} fib_arg;

static void fib_weft(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return;
    }
    fib_arg x = { a->n - 1, 0 }, y = { a->n - 2, 0 };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, fib_weft, &x);
    fib_weft(&y);
    if (weft_group_wait(&g) != 0)
        __atomic_fetch_add(&weft_errors, 1, __ATOMIC_RELAXED);
    a->r = x.r + y.r;
}

WEFT_TASK_1(int64_t, fib_typed, int, n)
{
    if (n < 2)
        return n;
    WEFT_SPAWN(fib_typed, n - 1);
    int64_t b = WEFT_CALL(fib_typed, n - 2);
    int64_t a = WEFT_SYNC(fib_typed);
    return a + b;
}

static int64_t fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/* gcc -O2 turns fib_serial's second call into a loop (tail recursion with
 * an accumulator) and inlines the recursion into itself, so it makes a
 * fraction of the calls.  This one keeps both calls of every node, the
 * shape every parallel version has. */
__attribute__((noinline, optimize("no-optimize-sibling-calls")))
static int64_t fib_plain(int n)
{
    return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2);
}

/* Not weft: a one-thread model of the floor of a Lace-style typed spawn,
 * which weft's API does not offer.  SPAWN writes the child's function and
 * argument into the next slot of a task array (volatile stores, as a deque
 * that thieves read needs); SYNC checks that the slot is still private
 * (below the worker's split; nothing steals here, but the check stays) and
 * then calls fib directly.  No group, no call through a pointer.  Lace
 * passes the worker and the slot down every task as hidden arguments
 * ("head passed"); the other variant finds them through a thread-local
 * pointer, as weft_spawn finds its worker ("head in TLS"). */
typedef void (*model_fn)(void);
typedef struct model_slot {
    volatile model_fn fn;
    volatile int n;
} model_slot;

typedef struct model_worker {
    model_slot *split;   /* slots below it are shared (none here) */
    model_slot *head;    /* the next free slot (TLS variant) */
} model_worker;

/* A stolen child: a real runtime would run other work until it ends. */
__attribute__((noinline)) static int64_t model_wait_stolen(model_slot *s)
{
    return s->n < 0 ? 0 : -1;
}

static int64_t model_passed(model_worker *w, model_slot *head, int n)
{
    if (n < 2)
        return n;
    head->fn = (model_fn)model_passed;               /* SPAWN fib(n - 1) */
    head->n = n - 1;
    int64_t b = model_passed(w, head + 1, n - 2);    /* CALL fib(n - 2) */
    int64_t a = __builtin_expect(head >= w->split, 1) /* SYNC */
                    ? model_passed(w, head + 1, head->n)
                    : model_wait_stolen(head);
    return a + b;
}

static _Thread_local model_worker *model_self;

static int64_t model_tls(int n)
{
    if (n < 2)
        return n;
    model_worker *w = model_self;
    model_slot *h = w->head;
    h->fn = (model_fn)model_tls;
    h->n = n - 1;
    w->head = h + 1;
    int64_t b = model_tls(n - 2);
    w = model_self;
    w->head = h;
    int64_t a = __builtin_expect(h >= w->split, 1) ? model_tls(h->n) : model_wait_stolen(h);
    return a + b;
}

/* The same typed spawn on a growable deque (the kind weft's task stack
 * replaced, see docs/PERFORMANCE.md): the array may grow, so a slot is found
 * by index through the array's pointer and mask, a full array is checked
 * against the owner's last read of top, a slot holds what a thief needs
 * (function, argument, completion), and the owner keeps bottom in memory
 * (thieves' requests and shares read it) and checks for a thief's request
 * at each spawn.  The worker and bottom are passed down, as in "head
 * passed". */
typedef struct grow_slot {
    model_fn fn;
    void *arg, *done;
} grow_slot;

typedef struct grow_array {
    int64_t mask;
    grow_slot slots[64];
} grow_array;

typedef struct grow_deque {
    grow_array *array;
    int64_t bottom, osplit, top_seen;
    int hungry;
    bool solo;
} grow_deque;

/* A stolen child, as model_wait_stolen. */
__attribute__((noinline)) static int64_t model_grow_wait_stolen(grow_slot *s)
{
    return s->done ? 0 : -1;
}

/* A full array or a thief's request: a real runtime would grow or share. */
__attribute__((noinline)) static void model_grow_slow(grow_deque *d)
{
    d->top_seen = 0;
    __atomic_store_n(&d->hungry, 0, __ATOMIC_RELAXED);
}

static int64_t model_grow(grow_deque *d, int64_t b, int n)
{
    if (n < 2)
        return n;
    grow_array *a = d->array;                          /* SPAWN fib(n - 1) */
    if (__builtin_expect(b - d->top_seen > a->mask, 0))
        model_grow_slow(d);
    grow_slot *s = &a->slots[b & a->mask];
    __atomic_store_n(&s->fn, (model_fn)model_grow, __ATOMIC_RELAXED);
    __atomic_store_n(&s->arg, (void *)(intptr_t)(n - 1), __ATOMIC_RELAXED);
    __atomic_store_n(&s->done, NULL, __ATOMIC_RELAXED);
    d->bottom = b + 1;
    if (__builtin_expect(!d->solo && __atomic_load_n(&d->hungry, __ATOMIC_RELAXED), 0))
        model_grow_slow(d);
    int64_t y = model_grow(d, b + 1, n - 2);          /* CALL fib(n - 2) */
    if (__builtin_expect(b < d->osplit, 0))            /* SYNC */
        return y + model_grow_wait_stolen(s);
    d->bottom = b;
    return y + model_grow(d, b, (int)(intptr_t)__atomic_load_n(&s->arg, __ATOMIC_RELAXED));
}

static model_slot model_slots[64];
static model_worker model_w = { model_slots, model_slots };

typedef struct run {
    int n;
    int64_t r;
} run;

static void run_model_passed(void *p)
{
    run *c = p;
    c->r = model_passed(&model_w, model_slots, c->n);
}

static void run_model_grow(void *p)
{
    run *c = p;
    static grow_array a = { .mask = 63 };
    grow_deque d = { .array = &a };
    c->r = model_grow(&d, 0, c->n);
}

static void run_model_tls(void *p)
{
    run *c = p;
    model_w.head = model_slots;
    model_self = &model_w;
    c->r = model_tls(c->n);
}

static void run_serial(void *p)
{
    run *c = p;
    c->r = fib_serial(c->n);
}

/* The root runs on a worker (spawned from this outside thread), so every
 * spawn below it takes the worker's fast path. */
/* The machine's own ceiling for a speedup: `threads` copies of serial fib
 * at once, one per thread (no runtime, nothing shared).  Timed as the
 * whole divided by the copies, so that on CPUs that do not slow each
 * other down it equals one serial fib's time, and its speedup column is
 * the most any runtime could show here. */
typedef struct copies {
    int n;
    unsigned threads;
} copies;

static void *serial_copy(void *p)
{
    bench_sink += (uint64_t)fib_serial(*(const int *)p);
    return NULL;
}

static void run_copies(void *p)
{
    copies *c = p;
    pthread_t th[BENCH_MAX_WORKERS];
    unsigned started = 0;
    for (unsigned k = 1; k < c->threads; k++)
        started += pthread_create(&th[started], NULL, serial_copy, &c->n) == 0;
    serial_copy(&c->n);
    for (unsigned k = 0; k < started; k++)
        pthread_join(th[k], NULL);
}

static void run_plain(void *p)
{
    run *c = p;
    c->r = fib_plain(c->n);
}

static void run_weft(void *p)
{
    run *c = p;
    fib_arg a = { c->n, 0 };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, fib_weft, &a);
    if (weft_group_wait(&g) != 0)
        weft_errors++;
    c->r = a.r;
}

static void run_typed(void *p)
{
    run *c = p;
    c->r = WEFT_RUN(rt, fib_typed, c->n);
}

static void run_omp(void *p)
{
    run *c = p;
    c->r = omp_fib(c->n);
}

static void run_tbb(void *p)
{
    run *c = p;
    c->r = tbb_fib(c->n);
}

static void check(const char *what, int64_t got, int64_t want)
{
    bench_sink += (uint64_t)got;
    if (got != want)
        bench_fail(what, (uint64_t)got, (uint64_t)want);
}

static void bench_n(int n, int nw, const unsigned *workers, int reps, int capped_reps)
{
    char title[160];
    snprintf(title, sizeof title,
             "fib(%d), no cutoff: median wall time (OpenMP/TBB: %d reps%s)",
             n, capped_reps, capped_reps < reps ? ", capped, no warm-up" : "");
    bench_table t;
    bench_table_init(&t, title, "ms", 1e3, nw, workers);
    int warm = capped_reps == reps;
    int i_ser = bench_table_impl(&t, "serial", 1, reps);
    int i_plain = bench_table_impl(&t, "serial, 2 calls/node", 1, reps);
    int i_copies = bench_table_impl(&t, "serial, a copy per thread", 0, reps);
    int i_mp = bench_table_impl(&t, "model: head passed", 0, reps);
    int i_mt = bench_table_impl(&t, "model: head in TLS", 0, reps);
    int i_mg = bench_table_impl(&t, "model: growable deque", 0, reps);
    int i_typed = bench_table_impl(&t, "weft typed tasks", 0, reps);
    int i_weft = bench_table_impl(&t, "weft_spawn + group", 0, reps);
    int i_omp = bench_table_impl(&t, "openmp task", 1, capped_reps);
    int i_tbb = bench_table_impl(&t, "tbb task_group", 1, capped_reps);

    run c = { n, 0 };
    t.med[i_ser][0] = bench_time(reps, 1, run_serial, &c);
    int64_t want = c.r;
    bench_sink += (uint64_t)want;
    t.med[i_plain][0] = bench_time(reps, 1, run_plain, &c);
    check("plain serial fib", c.r, want);
    t.med[i_mp][0] = bench_time(reps, 1, run_model_passed, &c);
    check("typed-spawn model (head passed)", c.r, want);
    t.med[i_mt][0] = bench_time(reps, 1, run_model_tls, &c);
    check("typed-spawn model (head in TLS)", c.r, want);
    t.med[i_mg][0] = bench_time(reps, 1, run_model_grow, &c);
    check("typed-spawn model (growable deque)", c.r, want);

    for (int w = 0; w < nw; w++) {
        copies cp = { n, workers[w] };
        t.med[i_copies][w] = bench_time(reps, 1, run_copies, &cp) / workers[w];
        bench_settle(50);
        rt = bench_runtime(workers[w]);
        t.med[i_typed][w] = bench_time(reps, 1, run_typed, &c);
        check("weft typed fib", c.r, want);
        t.med[i_weft][w] = bench_time(reps, 1, run_weft, &c);
        check("weft fib", c.r, want);
        weft_runtime_destroy(&rt);
        bench_settle(50);

        if (getenv("BENCH_WEFT_ONLY"))   /* for perf record: weft alone */
            continue;
        omp_begin(workers[w]);
        t.med[i_omp][w] = bench_time(capped_reps, warm, run_omp, &c);
        check("openmp fib", c.r, want);
        bench_settle(50);

        tbb_begin(workers[w]);
        t.med[i_tbb][w] = bench_time(capped_reps, warm, run_tbb, &c);
        check("tbb fib", c.r, want);
        tbb_end();
        bench_settle(50);
    }
    bench_table_print(&t);
    printf("fib(%d) = %" PRId64 "\n", n, want);
    printf("summary fib(%d): weft typed %u worker(s) / serial -O2 = %.2fx (target <= 2.3x)\n",
           n, workers[0], t.med[i_typed][0] / t.med[i_ser][0]);
    printf("summary fib(%d): weft_spawn %u worker(s) / serial -O2 = %.2fx (target <= 5x); "
           "/ serial with 2 calls per node = %.2fx\n",
           n, workers[0], t.med[i_weft][0] / t.med[i_ser][0], t.med[i_weft][0] / t.med[i_plain][0]);
    printf("summary fib(%d): typed-spawn model (not weft) / serial -O2 = %.2fx head passed, "
           "%.2fx head in TLS, %.2fx on a growable deque\n",
           n, t.med[i_mp][0] / t.med[i_ser][0], t.med[i_mt][0] / t.med[i_ser][0],
           t.med[i_mg][0] / t.med[i_ser][0]);
    for (int w = 1; w < nw; w++) {
        printf("summary fib(%d): weft typed speedup %u vs %u workers = %.2fx (target >= 1.85x)\n",
               n, workers[w], workers[0], t.med[i_typed][0] / t.med[i_typed][w]);
        printf("summary fib(%d): weft_spawn speedup %u vs %u workers = %.2fx\n", n, workers[w],
               workers[0], t.med[i_weft][0] / t.med[i_weft][w]);
        printf("summary fib(%d): the machine's ceiling, serial copies on %u vs %u threads = "
               "%.2fx\n", n, workers[w], workers[0], t.med[i_copies][0] / t.med[i_copies][w]);
    }
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    /* $BENCH_FIB_N: the n to run ("30 35" by default). */
    const char *ns = getenv("BENCH_FIB_N") ? getenv("BENCH_FIB_N") : "30 35";
    for (char *end; *ns; ns = end) {
        long n = strtol(ns, &end, 10);
        if (end == ns)
            break;
        /* OpenMP tasks take seconds per fib(35) on two threads: 3 runs. */
        if (n >= 2 && n <= 45)
            bench_n((int)n, nw, workers, reps, n < 33 || reps < 3 ? reps : 3);
    }
    if (weft_errors)
        bench_fail("weft_group_wait errors", (uint64_t)weft_errors, 0);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
