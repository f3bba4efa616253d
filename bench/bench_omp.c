/* The OpenMP contenders (see contenders.h); built with -fopenmp. */
#include "contenders.h"
#include "bench.h"

#include <omp.h>
#include <unistd.h>

void omp_begin(unsigned threads)
{
    omp_set_num_threads((int)threads);
}

static int64_t fib_task(int n)
{
    if (n < 2)
        return n;
    int64_t x, y;
#pragma omp task shared(x)
    x = fib_task(n - 1);
    y = fib_task(n - 2);
#pragma omp taskwait
    return x + y;
}

int64_t omp_fib(int n)
{
    int64_t r = 0;
#pragma omp parallel
#pragma omp single
    r = fib_task(n);
    return r;
}

static void empty(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

void omp_empty_flat(size_t n)
{
#pragma omp parallel
#pragma omp single
    {
        for (size_t i = 0; i < n; i++) {
#pragma omp task
            empty(&n);
        }
#pragma omp taskwait
    }
}

static uint64_t tree_task(int depth)
{
    if (depth == 0)
        return 1;
    uint64_t a, b;
#pragma omp task shared(a)
    a = tree_task(depth - 1);
    b = tree_task(depth - 1);
#pragma omp taskwait
    return a + b;
}

uint64_t omp_tree(int depth)
{
    uint64_t r = 0;
#pragma omp parallel
#pragma omp single
    r = tree_task(depth);
    return r;
}

void omp_map_static(uint64_t *out, size_t n, const uint8_t *cost)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] = bench_item(i, cost);
}

void omp_map_guided(uint64_t *out, size_t n, const uint8_t *cost)
{
#pragma omp parallel for schedule(guided)
    for (size_t i = 0; i < n; i++)
        out[i] = bench_item(i, cost);
}

void omp_map_dynamic(uint64_t *out, size_t n, const uint8_t *cost)
{
#pragma omp parallel for schedule(dynamic, 64)
    for (size_t i = 0; i < n; i++)
        out[i] = bench_item(i, cost);
}

void omp_fused4(float *out, const float *x, size_t n)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] = bench_fused4_elem(x[i]);
}

void omp_sleep_each(size_t n, unsigned us)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < n; i++)
        usleep(us);
}
