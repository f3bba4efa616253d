/* The OpenMP (bench_omp.c, gcc -fopenmp) and oneTBB (bench_tbb.cpp)
 * versions of every benchmark, written the idiomatic way for each: OpenMP
 * tasks and worksharing loops, TBB task_group and parallel_for with the
 * auto partitioner.  Each runs with the thread count last set by
 * omp_begin / tbb_begin. */
#ifndef WEFT_BENCH_CONTENDERS_H
#define WEFT_BENCH_CONTENDERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OpenMP: omp_set_num_threads(threads). */
void omp_begin(unsigned threads);
int64_t omp_fib(int n);                       /* tasks + taskwait, no cutoff */
void omp_empty_flat(size_t n);                /* n empty tasks from one thread */
uint64_t omp_tree(int depth);                 /* binary tree of tasks; leaves */
void omp_map_static(uint64_t *out, size_t n, const uint8_t *cost);
void omp_map_guided(uint64_t *out, size_t n, const uint8_t *cost);
void omp_map_dynamic(uint64_t *out, size_t n, const uint8_t *cost);
void omp_fused4(float *out, const float *x, size_t n);
void omp_sleep_each(size_t n, unsigned us);   /* n iterations that sleep us, dynamic,1 */

/* oneTBB: a task_arena of threads and a global_control limit, kept until
 * the next tbb_begin or tbb_end. */
void tbb_begin(unsigned threads);
void tbb_end(void);
int64_t tbb_fib(int n);                       /* task_group per call */
void tbb_empty_flat(size_t n);                /* n empty tasks into one task_group */
uint64_t tbb_tree(int depth);
void tbb_map(uint64_t *out, size_t n, const uint8_t *cost);   /* auto_partitioner */
void tbb_fused4(float *out, const float *x, size_t n);   /* omp simd inside */
void tbb_sleep_each(size_t n, unsigned us);   /* n iterations that sleep us, grain 1 */
void tbb_in_arena(void (*fn)(void *), void *ctx);   /* fn(ctx) in the arena */

/* The fused elementwise chain of the trace benchmarks, element by element:
 * ((x * 2 + 1) * x) - 3.  One definition so that every version computes the
 * same thing. */
static inline float bench_fused4_elem(float x)
{
    return ((x * 2.0f + 1.0f) * x) - 3.0f;
}

/* The same chain as one serial C loop, built at -O3 (bench_cloop.c). */
void cloop_fused4(float *out, const float *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
