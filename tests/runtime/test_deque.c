/* The task stack's deque on its own: sequences, sharing on request, the
 * owner taking shared tasks back, the head found from the slots' states,
 * and exactly-once delivery under concurrent thieves, with the owner at the
 * stack's end and stolen slots that keep their place until the owner has
 * read the thief's result.  The plain build runs the fenced protocol; under
 * ThreadSanitizer the deque uses seq_cst operations instead (deque.c). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"
#include "test_sanitized.h"

static void nop(void *arg) { (void)arg; }

/* The deque has cache-line aligned fields: allocate it aligned. */
static weft__deque *deque_new(size_t nslots)
{
    weft__deque *d = weft__aligned_alloc(sizeof *d);
    cr_assert_not_null(d);
    cr_assert_eq(weft__deque_init(d, nslots), 0);
    return d;
}

static void deque_free(weft__deque *d)
{
    weft__deque_fini(d);
    weft__free(d);
}

static uintptr_t slot_value(const weft_task_slot *s)
{
    return (uintptr_t)weft__slot_task(s).arg;
}

/* The owner's push, as weft_spawn does it: false when the stack is full. */
static bool push(weft__deque *d, uintptr_t v)
{
    weft_task_slot *h = d->tw.head_;
    if (h == d->tw.end_)
        return false;
    weft__task t = { nop, (void *)v, NULL };
    weft__slot_put_task(h, &t);
    d->tw.head_ = h + 1;
    if (weft__deque_hungry(d) && !d->solo)
        weft__deque_share_after_push_owner(d, d->tw.head_);
    return true;
}

enum { POP_EMPTY, POP_HERE, POP_STOLEN };

/* The owner's pop of its newest task, as a typed WEFT_SYNC does it: a
 * stolen one is waited for (its thief marks it done) and *v is then the
 * thief's result.  Returns POP_EMPTY, POP_HERE or POP_STOLEN. */
static int pop(weft__deque *d, uintptr_t *v)
{
    weft_task_slot *h = d->tw.head_;
    if (h == d->base)
        return POP_EMPTY;
    weft_task_slot *p = h - 1;
    if (p >= d->osplit || weft__deque_pop_shared_owner(d, p) == WEFT__POP_HERE) {
        *v = slot_value(p);
        d->tw.head_ = p;
        weft_task_take_(p);
        if (p > d->osplit && weft__deque_hungry(d))
            weft__deque_share_on_pop_owner(d, p);
        return POP_HERE;
    }
    while (__atomic_load_n(&p->state_, __ATOMIC_ACQUIRE) != WEFT_TASK_DONE_)
        ;
    weft__deque_reset_owner(d, p);
    memcpy(v, p->d_.bytes_ + sizeof(weft__task), sizeof *v);
    d->tw.head_ = p;
    weft__slot_release(p);
    return POP_STOLEN;
}

/* A thief's steal: the value, then the result written back (v + 1000000)
 * and the slot marked done. */
static int steal(weft__deque *d, uintptr_t *v)
{
    weft_task_slot *s;
    int r = weft__deque_steal(d, &s);
    if (r == WEFT__STEAL_OK) {
        *v = slot_value(s);
        uintptr_t res = *v + 1000000;
        memcpy(s->d_.bytes_ + sizeof(weft__task), &res, sizeof res);
        weft_task_done_(s);
    }
    return r;
}

static int64_t count(weft__deque *d)
{
    return weft__deque_count_owner(d, d->tw.head_);
}

Test(deque, push_pop_steal_sequences, .timeout = 120)
{
    weft__deque *d = deque_new(16);
    uintptr_t v;

    cr_assert_eq(pop(d, &v), POP_EMPTY);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_EMPTY);
    /* The failed steal asked the owner to share. */
    cr_assert(weft__deque_hungry(d));

    for (uintptr_t i = 1; i <= 5; i++)
        cr_assert(push(d, i));
    cr_assert_eq(count(d), 5);
    /* The first push served the request: it shared one task (half of
     * the private part, at least one) and cleared it. */
    cr_assert_eq(weft__deque_size(d), 1);
    cr_assert_not(weft__deque_hungry(d));
    cr_assert_eq(weft__deque_share_owner(d, d->tw.head_, INT64_MAX), 4);
    cr_assert_eq(weft__deque_size(d), 5);
    /* The owner pops LIFO, thieves take FIFO. */
    cr_assert_eq(pop(d, &v), POP_HERE);
    cr_assert_eq(v, 5);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_OK);
    cr_assert_eq(v, 1);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_OK);
    cr_assert_eq(v, 2);
    cr_assert(push(d, 6));
    cr_assert_eq(pop(d, &v), POP_HERE);
    cr_assert_eq(v, 6);
    cr_assert_eq(pop(d, &v), POP_HERE);
    cr_assert_eq(v, 4);
    /* The last shared element: the pop wins it with its CAS. */
    cr_assert_eq(pop(d, &v), POP_HERE);
    cr_assert_eq(v, 3);
    /* Below are the stolen 2 and 1: the owner gets their results, and the
     * stack is back at its base. */
    cr_assert_eq(pop(d, &v), POP_STOLEN);
    cr_assert_eq(v, 1000002);
    cr_assert_eq(pop(d, &v), POP_STOLEN);
    cr_assert_eq(v, 1000001);
    cr_assert_eq(pop(d, &v), POP_EMPTY);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_EMPTY);
    cr_assert_eq(weft__deque_size(d), 0);
    cr_assert_eq(count(d), 0);
    /* After the reset the positions are reused. */
    cr_assert(push(d, 7));
    cr_assert_eq(d->tw.head_, d->base + 1);
    cr_assert_eq(weft__deque_size(d), 1);   /* the pending request */
    cr_assert_eq(steal(d, &v), WEFT__STEAL_OK);
    cr_assert_eq(v, 7);
    cr_assert_eq(pop(d, &v), POP_STOLEN);
    cr_assert_eq(v, 1000007);
    deque_free(d);
}

/* Private tasks are out of thieves' reach until a failed steal asks; the
 * owner then shares half of them at its next push or pop. */
Test(deque, hunger_moves_the_split, .timeout = 120)
{
    weft__deque *d = deque_new(16);
    uintptr_t v;
    for (uintptr_t i = 1; i <= 9; i++)
        cr_assert(push(d, i));
    cr_assert_eq(weft__deque_size(d), 0);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_EMPTY);
    cr_assert(weft__deque_hungry(d));
    /* A pop serves the request: 9 is taken, half of 1..8 (the oldest)
     * becomes stealable. */
    cr_assert_eq(pop(d, &v), POP_HERE);
    cr_assert_eq(v, 9);
    cr_assert_not(weft__deque_hungry(d));
    cr_assert_eq(weft__deque_size(d), 4);
    for (uintptr_t i = 1; i <= 4; i++) {
        cr_assert_eq(steal(d, &v), WEFT__STEAL_OK);
        cr_assert_eq(v, i);
    }
    /* A push serves the next request: half of 5..8, 10. */
    cr_assert_eq(steal(d, &v), WEFT__STEAL_EMPTY);
    cr_assert(push(d, 10));
    cr_assert_eq(weft__deque_size(d), 3);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_OK);
    cr_assert_eq(v, 5);
    /* The owner pops its private tasks, then takes shared ones back
     * newest first (half of the shared part at a time), then waits for
     * the stolen ones. */
    uintptr_t want[] = { 10, 8, 7, 6, 1000005, 1000004, 1000003, 1000002, 1000001 };
    for (unsigned i = 0; i < 9; i++) {
        cr_assert_neq(pop(d, &v), POP_EMPTY);
        cr_assert_eq(v, want[i], "pop %u: %zu", i, (size_t)v);
    }
    cr_assert_eq(pop(d, &v), POP_EMPTY);
    cr_assert_eq(steal(d, &v), WEFT__STEAL_EMPTY);
    cr_assert_eq(count(d), 0);
    deque_free(d);
}

/* A deque without thieves (one worker) never shares, and still works up
 * to its last slot. */
Test(deque, solo_never_shares_and_fills_up, .timeout = 120)
{
    weft__deque *d = deque_new(100);
    d->solo = true;
    uintptr_t v;
    for (uintptr_t i = 0; i < 100; i++)
        cr_assert(push(d, i));
    cr_assert_not(push(d, 100), "the stack is full");
    cr_assert_eq(d->tw.head_, d->tw.end_);
    cr_assert_eq(weft__deque_size(d), 0);
    cr_assert_eq(count(d), 100);
    for (uintptr_t i = 100; i-- > 0;) {
        cr_assert_eq(pop(d, &v), POP_HERE);
        cr_assert_eq(v, i);
    }
    cr_assert_eq(pop(d, &v), POP_EMPTY);
    deque_free(d);
}

/* Generic calls find the head from the slots' run_ when typed tasks
 * moved it behind the cache's back. */
Test(deque, head_found_from_slot_states, .timeout = 120)
{
    weft__deque *d = deque_new(1000);
    for (uintptr_t i = 0; i < 300; i++)
        cr_assert(push(d, i));
    cr_assert_eq(weft__deque_head(d), d->base + 300);
    d->tw.busy_ = WEFT__BUSY_TYPED;   /* as while a typed task runs */
    /* As typed spawns would: 400 more slots used, cache untouched. */
    for (int i = 300; i < 700; i++)
        d->base[i].run_ = weft__generic_slot;
    cr_assert_eq(weft__deque_head(d), d->base + 700);
    /* As typed syncs would: down to 5. */
    for (int i = 5; i < 700; i++)
        weft_task_take_(&d->base[i]);
    cr_assert_eq(weft__deque_head(d), d->base + 5);
    for (int i = 0; i < 5; i++)
        weft_task_take_(&d->base[i]);
    cr_assert_eq(weft__deque_head(d), d->base);
    for (int i = 0; i < 1000; i++)
        d->base[i].run_ = weft__generic_slot;
    cr_assert_eq(weft__deque_head(d), d->tw.end_);
    deque_free(d);
}

/* Exactly-once delivery: the owner pushes n values (popping some back, and
 * running a value itself when its stack is full) while thieves steal;
 * every value must be taken exactly once, and every stolen one's result
 * must reach the owner. */
typedef struct race {
    weft__deque *d;
    size_t n;
    unsigned char *seen;   /* atomic counters, one per value */
    int done;              /* atomic: the owner finished */
    uint64_t taken;        /* atomic */
    int bad;               /* atomic: a value or result out of place */
    uint64_t overflows;
} race;

static void take(race *r, uintptr_t v)
{
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
    uintptr_t v;
    for (;;) {
        int s = steal(r->d, &v);
        if (s == WEFT__STEAL_OK)
            take(r, v);
        else if (s == WEFT__STEAL_EMPTY && __atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
            break;
    }
    return NULL;
}

/* The owner's pop: a value it ran itself is taken here; a stolen one was
 * taken by its thief, which handed back v + 1000000. */
static bool owner_pop(race *r)
{
    uintptr_t v;
    switch (pop(r->d, &v)) {
    case POP_HERE:
        take(r, v);
        return true;
    case POP_STOLEN:
        if (v < 1000000 || v - 1000000 >= r->n)
            __atomic_store_n(&r->bad, 1, __ATOMIC_RELAXED);
        return true;
    default:
        return false;
    }
}

/* share_every > 0: after that many pushes the owner shares every private
 * task and pops back two thirds of them, so that its pops take shared
 * tasks back (half at a time) while thieves steal the same ones. */
static void run_race(size_t n, unsigned thieves, size_t nslots, size_t share_every)
{
    race *r = weft__calloc(1, sizeof *r);
    cr_assert_not_null(r);
    r->d = deque_new(nslots);
    r->n = n;
    r->seen = weft__calloc(n, 1);
    cr_assert_not_null(r->seen);
    pthread_t th[16];
    for (unsigned i = 0; i < thieves; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, thief_main, r), 0);
    for (size_t i = 0; i < n; i++) {
        if (!push(r->d, i)) {
            /* The stack is full: run it now, as a spawn does. */
            take(r, i);
            r->overflows++;
        }
        /* Pop back now and then, so that pops race steals for the last
         * element too. */
        if (i % 3 == 0)
            owner_pop(r);
        if (share_every && i % share_every == share_every - 1) {
            weft__deque_share_owner(r->d, r->d->tw.head_, INT64_MAX);
            for (size_t k = 0; k < share_every * 2 / 3; k++)
                owner_pop(r);
        }
    }
    while (owner_pop(r))
        ;
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < thieves; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(r->bad, 0, "a value or result out of place");
    cr_assert_eq(__atomic_load_n(&r->taken, __ATOMIC_RELAXED), n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(r->seen[i], 1, "value %zu taken %d times", i, r->seen[i]);
    cr_assert_eq(r->d->tw.head_, r->d->base);
    if (nslots < 64)
        cr_assert_gt(r->overflows, 0, "the owner never reached the stack's end");
    deque_free(r->d);
    weft__free(r->seen);
    weft__free(r);
}

Test(deque, exactly_once_at_the_stacks_end, .timeout = 120)
{
    /* 8 slots: the owner fills the stack again and again while thieves
     * take its oldest slots and it waits for them at its pops. */
    run_race(TEST_SANITIZED ? 20000 : 200000, 4, 8, 0);
}

Test(deque, exactly_once_many_tasks_8_thieves, .timeout = 120)
{
    run_race(TEST_SANITIZED ? 50000 : 1000000, 8, 1u << 16, 0);
}

Test(deque, exactly_once_when_the_owner_takes_shared_tasks_back, .timeout = 120)
{
    run_race(TEST_SANITIZED ? 50000 : 1000000, 8, 1u << 16, 64);
}
