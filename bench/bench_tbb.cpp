// The oneTBB contenders (see contenders.h).
#include "contenders.h"
#include "bench.h"

#include <memory>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <unistd.h>

namespace {
std::unique_ptr<tbb::global_control> limit;
std::unique_ptr<tbb::task_arena> arena;

int64_t fib_rec(int n)
{
    if (n < 2)
        return n;
    int64_t x, y;
    tbb::task_group g;
    g.run([&] { x = fib_rec(n - 1); });
    y = fib_rec(n - 2);
    g.wait();
    return x + y;
}

uint64_t tree_rec(int depth)
{
    if (depth == 0)
        return 1;
    uint64_t a, b;
    tbb::task_group g;
    g.run([&] { a = tree_rec(depth - 1); });
    b = tree_rec(depth - 1);
    g.wait();
    return a + b;
}
} // namespace

extern "C" {

void tbb_begin(unsigned threads)
{
    arena.reset();
    limit.reset();
    limit = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, threads);
    arena = std::make_unique<tbb::task_arena>((int)threads);
    arena->initialize();
}

void tbb_end(void)
{
    arena.reset();
    limit.reset();
}

void tbb_in_arena(void (*fn)(void *), void *ctx)
{
    arena->execute([&] { fn(ctx); });
}

int64_t tbb_fib(int n)
{
    int64_t r = 0;
    arena->execute([&] { r = fib_rec(n); });
    return r;
}

void tbb_empty_flat(size_t n)
{
    arena->execute([&] {
        tbb::task_group g;
        for (size_t i = 0; i < n; i++)
            g.run([&n] { __asm__ volatile("" : : "r"(&n) : "memory"); });
        g.wait();
    });
}

uint64_t tbb_tree(int depth)
{
    uint64_t r = 0;
    arena->execute([&] { r = tree_rec(depth); });
    return r;
}

void tbb_map(uint64_t *out, size_t n, const uint8_t *cost)
{
    arena->execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
            [=](const tbb::blocked_range<size_t> &r) {
                for (size_t i = r.begin(); i != r.end(); i++)
                    out[i] = bench_item(i, cost);
            },
            tbb::auto_partitioner());
    });
}

void tbb_fused4(float *out, const float *x, size_t n)
{
    arena->execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
            [=](const tbb::blocked_range<size_t> &r) {
                // Vectorized like the OpenMP and -O3 C versions.
#pragma omp simd
                for (size_t i = r.begin(); i < r.end(); i++)
                    out[i] = bench_fused4_elem(x[i]);
            },
            tbb::auto_partitioner());
    });
}

void tbb_sleep_each(size_t n, unsigned us)
{
    arena->execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1),
            [=](const tbb::blocked_range<size_t> &r) {
                for (size_t i = r.begin(); i != r.end(); i++)
                    usleep(us);
            },
            tbb::simple_partitioner());
    });
}

} // extern "C"
