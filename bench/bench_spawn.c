/* Empty-task spawn + sync: the cost per task of (a) spawning n empty tasks
 * into one group from a worker and waiting, and (b) a binary tree of empty
 * tasks (each inner node spawns one child and runs the other inline), in ns
 * per spawned task, against TBB task_group and OpenMP tasks; each with
 * weft's typed tasks (WEFT_SPAWN then WEFT_SYNC) and with weft_spawn into a
 * group. */
#include "bench.h"
#include "contenders.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft.h>

static weft_runtime *rt;
static int weft_errors;
static _Thread_local int is_main;
static int on_main;

static void empty_task(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* The typed versions: an empty task, spawned n times then synced n times;
 * and the tree. */
WEFT_VOID_TASK_1(empty_typed, int, unused)
{
    __asm__ volatile("" : : "r"(unused) : "memory");
}

WEFT_VOID_TASK_1(flat_typed, size_t, n)
{
    for (size_t i = 0; i < n; i++)
        WEFT_SPAWN(empty_typed, 0);
    for (size_t i = 0; i < n; i++)
        WEFT_SYNC(empty_typed);
}

/* The same n tasks, 1000 queued at a time: the slots stay in the cache
 * (1e6 queued at once fill 64 MB of task stack, and the rows above then
 * measure memory traffic as much as spawns). */
WEFT_VOID_TASK_1(flat_typed_batched, size_t, n)
{
    for (size_t b = 0; b < n; b += 1000) {
        size_t k = n - b < 1000 ? n - b : 1000;
        for (size_t i = 0; i < k; i++)
            WEFT_SPAWN(empty_typed, 0);
        for (size_t i = 0; i < k; i++)
            WEFT_SYNC(empty_typed);
    }
}

WEFT_TASK_1(uint64_t, tree_typed, int, depth)
{
    if (depth == 0)
        return 1;
    WEFT_SPAWN(tree_typed, depth - 1);
    uint64_t b = WEFT_CALL(tree_typed, depth - 1);
    return WEFT_SYNC(tree_typed) + b;
}

static void flat_root(void *p)
{
    size_t n = *(size_t *)p;
    weft_group g;
    weft_group_init(&g, rt);
    for (size_t i = 0; i < n; i++)
        weft_spawn(&g, empty_task, p);
    if (weft_group_wait(&g) != 0)
        __atomic_fetch_add(&weft_errors, 1, __ATOMIC_RELAXED);
}

typedef struct tree_arg {
    int depth;
    uint64_t leaves;
} tree_arg;

static void tree_weft(void *p)
{
    tree_arg *a = p;
    if (a->depth == 0) {
        a->leaves = 1;
        if (is_main)
            __atomic_fetch_add(&on_main, 1, __ATOMIC_RELAXED);
        return;
    }
    tree_arg x = { a->depth - 1, 0 }, y = { a->depth - 1, 0 };
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, tree_weft, &x);
    tree_weft(&y);
    if (weft_group_wait(&g) != 0)
        __atomic_fetch_add(&weft_errors, 1, __ATOMIC_RELAXED);
    a->leaves = x.leaves + y.leaves;
}

typedef struct run {
    size_t n;
    int depth;
    uint64_t leaves;
} run;

static void run_root(weft_task_fn fn, void *arg)
{
    weft_group g;
    weft_group_init(&g, rt);
    weft_spawn(&g, fn, arg);
    if (weft_group_wait(&g) != 0)
        weft_errors++;
}

static void weft_flat(void *p)
{
    run_root(flat_root, &((run *)p)->n);
}

static void weft_tree(void *p)
{
    run *c = p;
    tree_arg a = { c->depth, 0 };
    run_root(tree_weft, &a);
    c->leaves = a.leaves;
}

static void typed_flat(void *p)
{
    WEFT_RUN(rt, flat_typed, ((run *)p)->n);
}

static void typed_flat_batched(void *p)
{
    WEFT_RUN(rt, flat_typed_batched, ((run *)p)->n);
}

static void typed_tree(void *p)
{
    run *c = p;
    c->leaves = WEFT_RUN(rt, tree_typed, c->depth);
}

static void omp_flat(void *p)
{
    omp_empty_flat(((run *)p)->n);
}

static void omp_treer(void *p)
{
    run *c = p;
    c->leaves = omp_tree(c->depth);
}

static void tbb_flat(void *p)
{
    tbb_empty_flat(((run *)p)->n);
}

static void tbb_treer(void *p)
{
    run *c = p;
    c->leaves = tbb_tree(c->depth);
}

static void check_leaves(const char *what, const run *c)
{
    uint64_t want = (uint64_t)1 << c->depth;
    bench_sink += c->leaves;
    if (c->leaves != want)
        bench_fail(what, c->leaves, want);
}

int main(int argc, char **argv)
{
    unsigned workers[BENCH_MAX_WORKERS];
    int nw = bench_workers(argc, argv, workers);
    int reps = bench_reps(11);
    run c = { 1000000, 20, 0 };
    double per_flat = 1.0 / (double)c.n;
    double per_tree = 1.0 / (double)(((uint64_t)1 << c.depth) - 1);

    bench_table flat, tree;
    bench_table_init(&flat, "empty tasks: 1e6 spawned into one group from a worker, then wait",
                     "ns/task", 1e9 * per_flat, nw, workers);
    bench_table_init(&tree, "empty tasks: binary tree of depth 20 (2^20-1 spawns, spawn one + run one inline)",
                     "ns/task", 1e9 * per_tree, nw, workers);
    int f_typed = bench_table_impl(&flat, "weft typed tasks", 0, reps);
    int f_batch = bench_table_impl(&flat, "weft typed, 1e3 at a time", 0, reps);
    int f_weft = bench_table_impl(&flat, "weft_spawn + group", 0, reps);
    int f_omp = bench_table_impl(&flat, "openmp task", 1, reps);
    int f_tbb = bench_table_impl(&flat, "tbb task_group", 1, reps);
    int t_typed = bench_table_impl(&tree, "weft typed tasks", 0, reps);
    int t_weft = bench_table_impl(&tree, "weft_spawn + group", 0, reps);
    int t_omp = bench_table_impl(&tree, "openmp task", 1, reps);
    int t_tbb = bench_table_impl(&tree, "tbb task_group", 1, reps);

    is_main = 1;
    for (int w = 0; w < nw; w++) {
        rt = bench_runtime(workers[w]);
        flat.med[f_typed][w] = bench_time(reps, 1, typed_flat, &c);
        flat.med[f_batch][w] = bench_time(reps, 1, typed_flat_batched, &c);
        tree.med[t_typed][w] = bench_time(reps, 1, typed_tree, &c);
        check_leaves("weft typed tree leaves", &c);
        flat.med[f_weft][w] = bench_time(reps, 1, weft_flat, &c);
        tree.med[t_weft][w] = bench_time(reps, 1, weft_tree, &c);
        check_leaves("weft tree leaves", &c);
        /* Does the waiting outside thread run tasks itself?  Then "n
         * workers" means n + 1 threads at work. */
        __atomic_store_n(&on_main, 0, __ATOMIC_RELAXED);
        weft_tree(&c);
        printf("weft %u workers: %d of %" PRIu64 " tree leaves ran on the waiting main thread\n",
               workers[w], __atomic_load_n(&on_main, __ATOMIC_RELAXED), c.leaves);
        weft_runtime_stats st;
        weft_runtime_get_stats(rt, &st);
        printf("weft %u workers: stats tasks=%" PRIu64 " steals=%" PRIu64
               " steal_attempts=%" PRIu64 " sleeps=%" PRIu64 "\n",
               workers[w], st.tasks, st.steals, st.steal_attempts, st.sleeps);
        weft_runtime_destroy(&rt);
        bench_settle(50);

        omp_begin(workers[w]);
        flat.med[f_omp][w] = bench_time(reps, 1, omp_flat, &c);
        tree.med[t_omp][w] = bench_time(reps, 1, omp_treer, &c);
        check_leaves("openmp tree leaves", &c);
        bench_settle(50);

        tbb_begin(workers[w]);
        flat.med[f_tbb][w] = bench_time(reps, 1, tbb_flat, &c);
        tree.med[t_tbb][w] = bench_time(reps, 1, tbb_treer, &c);
        check_leaves("tbb tree leaves", &c);
        tbb_end();
        bench_settle(50);
    }
    bench_table_print(&flat);
    bench_table_print(&tree);
    printf("summary empty typed tasks %u worker(s): flat %.2f ns/task (1e3 at a time %.2f), "
           "tree %.2f ns/task (target <= 2 ns)\n", workers[0], flat.med[f_typed][0] * 1e9 * per_flat,
           flat.med[f_batch][0] * 1e9 * per_flat, tree.med[t_typed][0] * 1e9 * per_tree);
    if (weft_errors)
        bench_fail("weft_group_wait errors", (uint64_t)weft_errors, 0);
    printf("checksum %" PRIu64 "\n", (uint64_t)bench_sink);
    return bench_exit_status();
}
