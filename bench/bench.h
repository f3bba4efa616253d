/* Shared helpers of the benchmark programs: timing, medians, the worker list,
 * a sink the compiler cannot see through, and the result table.  Every
 * program measures weft and its contenders in the same process and prints
 * one table per benchmark (see bench_table_print). */
#ifndef WEFT_BENCH_H
#define WEFT_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>

#define BENCH_MAX_WORKERS 32
#define BENCH_MAX_IMPLS   12
#define BENCH_MAX_REPS    101
/* A warm-up repeats the measured call for at least this long. */
#define BENCH_WARMUP_NS   20000000

/* Monotonic wall time in seconds. */
double bench_now(void);
/* CPU time of the whole process (all threads) in seconds. */
double bench_process_cpu(void);
/* The median of v[0..n) (sorts v). */
double bench_median(double *v, int n);
/* Sleeps ms milliseconds so that the thread pools of the previous
 * contender spin down before the next one is timed. */
void bench_settle(int ms);

/* The worker counts to measure: argv[1..] if given, else $BENCH_WORKERS
 * ("1 2 4"), else "1 2".  Returns how many (at most BENCH_MAX_WORKERS). */
int bench_workers(int argc, char **argv, unsigned *out);
/* The repetition count: $BENCH_REPS if set, else dflt (capped at
 * BENCH_MAX_REPS). */
int bench_reps(int dflt);
/* Whether workload `name` is to run: true when the environment variable
 * `var` is unset or empty, or lists name as a word (separated by spaces
 * or commas). */
bool bench_selected(const char *var, const char *name);

/* Prints "what: ERR_NAME (weft_errmsg())" and exits with status 2. */
void bench_die(const char *what, int err);
/* A runtime of `workers` workers (weft_config.workers), or bench_die. */
struct weft_runtime *bench_runtime(unsigned workers);
struct weft_ctx;
struct weft_value;
/* An f32[] constant v in a body (weft_const_f64 would be f64). */
struct weft_value *bench_f32_scalar(struct weft_ctx *cx, float v);
struct weft_function;
struct weft_tensor;
/* weft_function_call of f on the tensors in[0..n_in) into out[0..n_out),
 * or bench_die. */
void bench_call(struct weft_function *f, struct weft_tensor *const *in, size_t n_in,
                struct weft_tensor **out, size_t n_out);
/* Calls f (its results released) until its fused groups run native code
 * (at most 5 s) and for at least the warm-up time: the steady state a
 * table times. */
void bench_warm_native(struct weft_function *f, struct weft_tensor *const *in, size_t n_in,
                       size_t n_out);

/* Results reach this so that no computation can be removed as dead. */
extern volatile uint64_t bench_sink;
/* Records a correctness failure (printed at once, reflected in the exit
 * status returned by bench_exit_status). */
void bench_fail(const char *what, uint64_t got, uint64_t want);
int bench_exit_status(void);

/* One benchmark's results: implementations by threads.  A median of 0
 * means "not measured".  contender marks the non-weft implementations
 * (serial, OpenMP, TBB) that "best" is taken over. */
typedef struct bench_table {
    const char *title;
    const char *unit;        /* "ms", "ns/task" ... */
    double scale;            /* seconds -> unit */
    int n_impl, n_workers;
    unsigned workers[BENCH_MAX_WORKERS];
    const char *impl[BENCH_MAX_IMPLS];
    int contender[BENCH_MAX_IMPLS];
    int reps[BENCH_MAX_IMPLS];
    double med[BENCH_MAX_IMPLS][BENCH_MAX_WORKERS];   /* seconds */
    int serial;              /* index of the serial implementation, or -1 */
} bench_table;

void bench_table_init(bench_table *t, const char *title, const char *unit,
                      double scale, int n_workers, const unsigned *workers);
/* Adds an implementation and returns its index. */
int bench_table_impl(bench_table *t, const char *name, int contender, int reps);
/* Prints a row per implementation and thread count: the median, the ratio
 * to serial (1 thread), the ratio to the fastest contender at the same
 * thread count, and the speedup over the same implementation's first
 * thread count. */
void bench_table_print(const bench_table *t);

/* Times fn(ctx) reps times, after one untimed warm-up if warmup; returns
 * the median in seconds. */
double bench_time(int reps, int warmup, void (*fn)(void *ctx), void *ctx);

/* The unit of work of the map benchmarks: n dependent 64-bit multiply-adds
 * starting from x.  Not inlined, so that every contender calls it once per
 * element and none gets to vectorize across elements. */
uint64_t bench_madd_chain(uint64_t x, unsigned n);

/* One element of a map: 100 multiply-adds, or cost[i] units of 10 when a
 * cost table is given (the unbalanced maps). */
static inline uint64_t bench_item(size_t i, const uint8_t *cost)
{
    return bench_madd_chain(i, cost ? cost[i] * 10u : 100u);
}

#ifdef __cplusplus
}
#endif
#endif
