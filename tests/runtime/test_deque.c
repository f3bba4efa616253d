/* The split work-stealing deque on its own: sequences, sharing on request,
 * growth, and exactly-once delivery under concurrent thieves. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static void nop(void *arg) { (void)arg; }

typedef struct fixture {
    ck_epoch_t epoch;
    ck_epoch_record_t owner_rec;
    ck_epoch_record_t thief;   /* for the sequential tests' own steals */
    weft__deque dq;
} fixture;

static void fixture_init(fixture *f, unsigned log2_cap)
{
    ck_epoch_init(&f->epoch);
    ck_epoch_register(&f->epoch, &f->owner_rec, NULL);
    ck_epoch_register(&f->epoch, &f->thief, NULL);
    cr_assert_eq(weft__deque_init(&f->dq, &f->owner_rec, NULL, log2_cap), 0);
}

static void fixture_fini(fixture *f)
{
    ck_epoch_reclaim(&f->owner_rec);
    weft__deque_fini(&f->dq);
}

static void push(weft__deque *d, uintptr_t v)
{
    cr_assert(weft__deque_push_owner(d, nop, (void *)v, NULL));
}

Test(deque, push_pop_steal_sequences, .timeout = 120)
{
    fixture f;
    fixture_init(&f, 4);
    weft__task t;

    cr_assert_not(weft__deque_pop_owner(&f.dq, &t), "empty pop");
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    /* The failed steal asked the owner to share. */
    cr_assert_eq(__atomic_load_n(&f.dq.hungry, __ATOMIC_RELAXED), 1);

    for (uintptr_t i = 1; i <= 5; i++)
        push(&f.dq, i);
    cr_assert_eq(weft__deque_count_owner(&f.dq), 5);
    /* The first push found the shared part empty: it shared the oldest
     * task (and cleared the request); the rest stays private. */
    cr_assert_eq(weft__deque_size(&f.dq), 1);
    cr_assert_eq(__atomic_load_n(&f.dq.hungry, __ATOMIC_RELAXED), 0);
    cr_assert_eq(weft__deque_share_owner(&f.dq, INT64_MAX), 4);
    cr_assert_eq(weft__deque_size(&f.dq), 5);
    /* The owner pops LIFO, thieves take FIFO. */
    cr_assert(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq((uintptr_t)t.arg, 5);
    cr_assert_eq(t.fn, nop);
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
    cr_assert_eq((uintptr_t)t.arg, 1);
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
    cr_assert_eq((uintptr_t)t.arg, 2);
    push(&f.dq, 6);
    cr_assert(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq((uintptr_t)t.arg, 6);
    cr_assert(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq((uintptr_t)t.arg, 4);
    /* The last element: pop wins it, then both ends see empty. */
    cr_assert(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq((uintptr_t)t.arg, 3);
    cr_assert_not(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    cr_assert_eq(weft__deque_size(&f.dq), 0);
    cr_assert_eq(weft__deque_count_owner(&f.dq), 0);
    fixture_fini(&f);
}

/* Private tasks are out of thieves' reach until a failed steal asks; the
 * owner then shares half of them at its next push or pop. */
Test(deque, hunger_moves_the_split, .timeout = 120)
{
    fixture f;
    fixture_init(&f, 4);
    weft__task t;
    for (uintptr_t i = 1; i <= 9; i++)
        push(&f.dq, i);
    cr_assert_eq(weft__deque_size(&f.dq), 1);
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
    cr_assert_eq((uintptr_t)t.arg, 1);
    /* Tasks 2..9 are private. */
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    cr_assert_eq(__atomic_load_n(&f.dq.hungry, __ATOMIC_RELAXED), 1);
    /* A pop serves the request: 9 is taken, half of 2..8 (rounded up,
     * the oldest) becomes stealable. */
    cr_assert(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq((uintptr_t)t.arg, 9);
    cr_assert_eq(__atomic_load_n(&f.dq.hungry, __ATOMIC_RELAXED), 0);
    cr_assert_eq(weft__deque_size(&f.dq), 4);
    for (uintptr_t i = 2; i <= 5; i++) {
        cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
        cr_assert_eq((uintptr_t)t.arg, i);
    }
    /* A push serves the next request: shared part empty again. */
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    push(&f.dq, 10);
    /* 6, 7, 8, 10 were private; the shared part was empty, so the push
     * shared the oldest one. */
    cr_assert_eq(weft__deque_size(&f.dq), 1);
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
    cr_assert_eq((uintptr_t)t.arg, 6);
    /* With shared tasks left, a request shares half of the private ones. */
    push(&f.dq, 11);
    cr_assert_eq(weft__deque_size(&f.dq), 1);   /* 7 */
    weft__deque_request(&f.dq);
    push(&f.dq, 12);   /* private 8, 10, 11, 12: shares 8, 10 */
    cr_assert_eq(weft__deque_size(&f.dq), 3);
    /* The owner pops its private tasks, then takes shared ones back
     * newest first (half of the shared part at a time). */
    uintptr_t want[] = { 12, 11, 10, 8, 7 };
    for (unsigned i = 0; i < 5; i++) {
        cr_assert(weft__deque_pop_owner(&f.dq, &t));
        cr_assert_eq((uintptr_t)t.arg, want[i]);
    }
    cr_assert_not(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    cr_assert_eq(weft__deque_count_owner(&f.dq), 0);
    fixture_fini(&f);
}

/* A pop with no private task left takes the newer half of the shared part
 * back with one fence; thieves keep the older half. */
Test(deque, pop_takes_half_of_the_shared_part_back, .timeout = 120)
{
    fixture f;
    fixture_init(&f, 4);
    weft__task t;
    for (uintptr_t i = 1; i <= 8; i++)
        push(&f.dq, i);
    weft__deque_share_owner(&f.dq, INT64_MAX);
    cr_assert_eq(weft__deque_size(&f.dq), 8);
    cr_assert(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq((uintptr_t)t.arg, 8);
    /* 5, 6, 7 are private again; 1..4 stay shared. */
    cr_assert_eq(weft__deque_size(&f.dq), 4);
    cr_assert_eq(weft__deque_count_owner(&f.dq), 7);
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
    cr_assert_eq((uintptr_t)t.arg, 1);
    uintptr_t want[] = { 7, 6, 5, 4, 3, 2 };
    for (unsigned i = 0; i < 6; i++) {
        cr_assert(weft__deque_pop_owner(&f.dq, &t));
        cr_assert_eq((uintptr_t)t.arg, want[i]);
    }
    cr_assert_not(weft__deque_pop_owner(&f.dq, &t));
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    fixture_fini(&f);
}

/* A deque without thieves (one worker) never shares, and still works. */
Test(deque, solo_never_shares, .timeout = 120)
{
    fixture f;
    fixture_init(&f, 2);
    f.dq.solo = true;
    weft__task t;
    for (uintptr_t i = 0; i < 100; i++)
        push(&f.dq, i);
    cr_assert_eq(weft__deque_size(&f.dq), 0);
    cr_assert_eq(weft__deque_count_owner(&f.dq), 100);
    for (uintptr_t i = 100; i-- > 0;) {
        cr_assert(weft__deque_pop_owner(&f.dq, &t));
        cr_assert_eq((uintptr_t)t.arg, i);
    }
    cr_assert_not(weft__deque_pop_owner(&f.dq, &t));
    fixture_fini(&f);
}

Test(deque, growth_keeps_order, .timeout = 120)
{
    fixture f;
    fixture_init(&f, 2); /* 4 slots: forces several growths */
    weft__task t;
    for (uintptr_t i = 0; i < 1000; i++)
        push(&f.dq, i);
    cr_assert_eq(weft__deque_count_owner(&f.dq), 1000);
    cr_assert_eq(weft__deque_share_owner(&f.dq, 9), 9);
    cr_assert_eq(weft__deque_size(&f.dq), 10);
    for (uintptr_t i = 0; i < 10; i++) {
        cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_OK);
        cr_assert_eq((uintptr_t)t.arg, i);
    }
    cr_assert_eq(weft__deque_steal(&f.dq, &t, &f.thief), WEFT__STEAL_EMPTY);
    for (uintptr_t i = 999; i >= 10; i--) {
        cr_assert(weft__deque_pop_owner(&f.dq, &t));
        cr_assert_eq((uintptr_t)t.arg, i);
    }
    cr_assert_not(weft__deque_pop_owner(&f.dq, &t));
    fixture_fini(&f);
}

/* Exactly-once delivery: the owner pushes n tasks (popping some back) while
 * thieves steal; every value must be taken exactly once. */
typedef struct race {
    fixture f;
    size_t n;
    unsigned char *seen;   /* atomic counters, one per task */
    int done;              /* atomic: the owner finished pushing and popping */
    uint64_t taken;        /* atomic */
    int bad;               /* atomic: a value out of range was taken */
    unsigned next_rec;     /* atomic */
    ck_epoch_record_t recs[16];
} race;

static void take(race *r, const weft__task *t)
{
    uintptr_t v = (uintptr_t)t->arg;
    if (v >= r->n) {
        __atomic_store_n(&r->bad, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&r->seen[v], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&r->taken, 1, __ATOMIC_RELAXED);
}

static void *thief_main(void *arg)
{
    race *r = arg;
    ck_epoch_record_t *rec = &r->recs[__atomic_fetch_add(&r->next_rec, 1, __ATOMIC_RELAXED)];
    ck_epoch_register(&r->f.epoch, rec, NULL);
    weft__task t;
    for (;;) {
        int s = weft__deque_steal(&r->f.dq, &t, rec);
        if (s == WEFT__STEAL_OK)
            take(r, &t);
        else if (s == WEFT__STEAL_EMPTY && __atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
            break;
    }
    return NULL;
}

/* share_every > 0: after that many pushes the owner shares every private
 * task and pops back two thirds of them, so that its pops take shared
 * tasks back (half at a time) while thieves steal the same ones. */
static void run_race(size_t n, unsigned thieves, unsigned log2_cap, size_t share_every)
{
    /* The deque has cache-line aligned fields. */
    race *r = weft__aligned_alloc(sizeof *r);
    cr_assert_not_null(r);
    memset(r, 0, sizeof *r);
    r->n = n;
    r->seen = weft__calloc(n, 1);
    cr_assert_not_null(r->seen);
    fixture_init(&r->f, log2_cap);
    pthread_t th[16];
    for (unsigned i = 0; i < thieves; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, thief_main, r), 0);
    weft__task t;
    for (size_t i = 0; i < n; i++) {
        push(&r->f.dq, i);
        /* Pop back now and then, so that pops race steals for the last
         * element too. */
        if (i % 3 == 0 && weft__deque_pop_owner(&r->f.dq, &t))
            take(r, &t);
        if (share_every && i % share_every == share_every - 1) {
            weft__deque_share_owner(&r->f.dq, INT64_MAX);
            for (size_t k = 0; k < share_every * 2 / 3; k++)
                if (weft__deque_pop_owner(&r->f.dq, &t))
                    take(r, &t);
        }
    }
    while (weft__deque_pop_owner(&r->f.dq, &t))
        take(r, &t);
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < thieves; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(r->bad, 0, "a stolen task had a value never pushed");
    cr_assert_eq(__atomic_load_n(&r->taken, __ATOMIC_RELAXED), n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(r->seen[i], 1, "task %zu taken %d times", i, r->seen[i]);
    fixture_fini(&r->f);
    weft__free(r->seen);
    weft__free(r);
}

Test(deque, growth_under_concurrent_thieves, .timeout = 120)
{
    /* A 2-slot first array: the owner grows while thieves read. */
    run_race(SANITIZED ? 20000 : 200000, 4, 1, 0);
}

Test(deque, exactly_once_many_tasks_8_thieves, .timeout = 120)
{
    run_race(SANITIZED ? 50000 : 1000000, 8, 8, 0);
}

Test(deque, exactly_once_when_the_owner_takes_shared_tasks_back, .timeout = 120)
{
    run_race(SANITIZED ? 50000 : 1000000, 8, 8, 64);
}
