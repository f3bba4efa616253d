/* Timing, medians, the worker list and the result table of the benchmark
 * programs (see bench.h). */
#include "bench.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft.h>

volatile uint64_t bench_sink;
static int failures;

void bench_die(const char *what, int err)
{
    fprintf(stderr, "%s: %s (%s)\n", what, weft_err_name(err), weft_errmsg());
    exit(2);
}

weft_runtime *bench_runtime(unsigned workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    weft_runtime *rt = NULL;
    int err = weft_runtime_create(&cfg, &rt);
    if (err)
        bench_die("weft_runtime_create", err);
    return rt;
}

void bench_call(weft_function *f, weft_tensor *const *in, size_t n_in, weft_tensor **out,
                size_t n_out)
{
    weft_arg a[16];
    if (n_in > 16)
        bench_die("bench_call: more than 16 arguments", WEFT_EINVAL);
    for (size_t i = 0; i < n_in; i++)
        a[i] = weft_arg_tensor(in[i]);
    int err = weft_function_call(f, a, n_in, out, n_out);
    if (err < 0)
        bench_die("weft_function_call", err);
}

void bench_warm_native(weft_function *f, weft_tensor *const *in, size_t n_in, size_t n_out)
{
    weft_function_stats st;
    weft_tensor *out[16];
    if (n_out > 16)
        bench_die("bench_warm_native: more than 16 results", WEFT_EINVAL);
    double t0 = bench_now();
    do {
        bench_call(f, in, n_in, out, n_out);
        for (size_t i = 0; i < n_out; i++)
            weft_tensor_release(out[i]);
        weft_function_get_stats(f, &st);
    } while ((st.native_compile_ns == 0 || bench_now() - t0 < BENCH_WARMUP_NS * 1e-9) &&
             bench_now() - t0 < 5.0);
}

weft_value *bench_f32_scalar(weft_ctx *cx, float v)
{
    weft_tensor *t = NULL;
    if (weft_tensor_create(WEFT_F32, 0, NULL, &v, &t) != 0)
        return NULL;
    weft_value *r = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    return r;
}

bool bench_selected(const char *var, const char *name)
{
    const char *only = getenv(var);
    if (!only || !*only)
        return true;
    size_t len = strlen(name);
    for (const char *p = strstr(only, name); p; p = strstr(p + 1, name))
        if ((p == only || p[-1] == ' ' || p[-1] == ',') &&
            (p[len] == 0 || p[len] == ' ' || p[len] == ','))
            return true;
    return false;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_settle(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int parse_list(const char *s, unsigned *out, int n)
{
    while (*s && n < BENCH_MAX_WORKERS) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s) {
            s++;
            continue;
        }
        if (v > 0 && v <= 1024)
            out[n++] = (unsigned)v;
        s = end;
    }
    return n;
}

int bench_workers(int argc, char **argv, unsigned *out)
{
    int n = 0;
    for (int i = 1; i < argc; i++)
        n = parse_list(argv[i], out, n);
    if (n == 0 && getenv("BENCH_WORKERS"))
        n = parse_list(getenv("BENCH_WORKERS"), out, 0);
    if (n == 0) {
        out[0] = 1;
        out[1] = 2;
        n = 2;
    }
    return n;
}

int bench_reps(int dflt)
{
    const char *e = getenv("BENCH_REPS");
    int r = e ? atoi(e) : dflt;
    if (r < 1)
        r = 1;
    return r > BENCH_MAX_REPS ? BENCH_MAX_REPS : r;
}

void bench_fail(const char *what, uint64_t got, uint64_t want)
{
    failures++;
    printf("CHECK FAILED: %s: got %" PRIu64 ", want %" PRIu64 "\n", what, got, want);
    fflush(stdout);
}

int bench_exit_status(void)
{
    return failures ? 1 : 0;
}

void bench_table_init(bench_table *t, const char *title, const char *unit,
                      double scale, int n_workers, const unsigned *workers)
{
    memset(t, 0, sizeof *t);
    t->title = title;
    t->unit = unit;
    t->scale = scale;
    t->n_workers = n_workers;
    memcpy(t->workers, workers, (size_t)n_workers * sizeof *workers);
    t->serial = -1;
}

int bench_table_impl(bench_table *t, const char *name, int contender, int reps)
{
    int i = t->n_impl++;
    t->impl[i] = name;
    t->contender[i] = contender;
    t->reps[i] = reps;
    if (strcmp(name, "serial") == 0)
        t->serial = i;
    return i;
}

void bench_table_print(const bench_table *t)
{
    printf("\n== %s ==\n", t->title);
    printf("%-26s %7s %5s %14s %10s %-24s %7s\n", "impl", "threads", "reps",
           t->unit, "/serial", "/best (best contender)", "speedup");
    double serial = 0;
    if (t->serial >= 0)
        for (int w = 0; w < t->n_workers && serial == 0; w++)
            serial = t->med[t->serial][w];
    for (int i = 0; i < t->n_impl; i++) {
        double first = 0;
        for (int w = 0; w < t->n_workers; w++) {
            double m = t->med[i][w];
            if (m <= 0)
                continue;
            if (first == 0)
                first = m;
            double best = 0;
            const char *best_name = "-";
            for (int j = 0; j < t->n_impl; j++) {
                double c = t->med[j][w];
                if (j == t->serial && c <= 0)
                    c = serial;      /* serial is measured once */
                if (t->contender[j] && c > 0 && (best == 0 || c < best)) {
                    best = c;
                    best_name = t->impl[j];
                }
            }
            char rs[16] = "-", rb[40] = "-";
            if (serial > 0)
                snprintf(rs, sizeof rs, "%.2fx", m / serial);
            if (best > 0)
                snprintf(rb, sizeof rb, "%.2fx (%s)", m / best, best_name);
            printf("%-26s %7u %5d %14.3f %10s %-24s %6.2fx\n", t->impl[i],
                   t->workers[w], t->reps[i], m * t->scale, rs, rb, first / m);
        }
    }
    fflush(stdout);
}

double bench_time(int reps, int warmup, void (*fn)(void *ctx), void *ctx)
{
    double v[BENCH_MAX_REPS];
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;
    /* Page faults, thread start, caches, and the kernel's placement of
     * new threads: at first a fresh pool's thread may share a CPU with
     * the caller while another CPU idles, which doubles a short loop's
     * time, so short calls are repeated for at least BENCH_WARMUP_NS. */
    if (warmup) {
        double t0 = bench_now();
        do
            fn(ctx);
        while (bench_now() - t0 < BENCH_WARMUP_NS * 1e-9);
    }
    /* BENCH_CLOCK=cpu: the process's CPU time instead of wall time.  On a
     * machine shared with other work the time a thread waits for a CPU
     * stays out; every thread's CPU counts in, spinning idle workers too,
     * so it means the cost of the work only where one thread computes (the
     * serial rows and one worker, whose caller sleeps in its wait). */
    const char *clock = getenv("BENCH_CLOCK");
    double (*now)(void) = clock && strcmp(clock, "cpu") == 0 ? bench_process_cpu : bench_now;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        fn(ctx);
        v[r] = now() - t0;
    }
    return bench_median(v, reps);
}

uint64_t bench_madd_chain(uint64_t x, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}
