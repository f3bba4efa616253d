/* weft-soak: a long mixed load that checks every result.
 *
 *   weft-soak [seconds]        (default 60)
 *
 * 8 outside threads call, at random, four functions with random signatures:
 * "poly" (a tensor of random length and a static integer: many signatures),
 * "map" (weft_map over the rows of a random matrix with a random
 * parallel_iterations, itself a static argument), "host" (a host callback
 * that sleeps briefly or fails on request) and "eager" (WEFT_RUN_EAGERLY).
 * Every function has a small max_cached, so the signatures keep evicting one
 * another.  At the end it checks, per function, that each distinct signature
 * was traced at least once and that every further trace is accounted for by
 * an eviction (distinct <= traces <= distinct + evictions, and traces ==
 * cached + evictions), and that the resident set stayed flat (at the end
 * within 10% of what it was after a warm-up).  Exit 0 and a summary line on
 * success; non-zero and a message otherwise.
 *
 * Build: executable('weft-soak', 'bench/soak.c', dependencies: [weft_dep]),
 * or by hand: cc -O2 -Iinclude bench/soak.c -Lbuild/x -lweft -lpthread. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#define THREADS 8
#define MAX_LEN 12        /* poly/host/eager lengths 1..MAX_LEN */
#define MAX_K 6           /* poly's static argument 0..MAX_K-1 */
#define MAX_ROWS 6
#define MAX_COLS 5
#define MAX_PAR 4         /* map parallel_iterations 0..MAX_PAR */
#define FAIL_MARK (-777)  /* host: an input starting with this fails */

static weft_runtime *rt;
static weft_function *f_poly, *f_map, *f_host, *f_eager, *f_row;
static bool stop;  /* (atomic) */
static int failed;  /* (atomic) */
static char fail_msg[512];
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

/* Signatures seen per function (a flag per signature index). */
static bool seen_poly[MAX_LEN + 1][MAX_K];  /* (atomic) */
static bool seen_map[MAX_ROWS + 1][MAX_COLS + 1][MAX_PAR + 1];  /* (atomic) */
static bool seen_host[MAX_LEN + 1];  /* (atomic) */
static unsigned long long n_calls, n_host_fail, n_maps;  /* (atomic) */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    pthread_mutex_lock(&fail_lock);
    if (!__atomic_load_n(&failed, __ATOMIC_SEQ_CST)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
        va_end(ap);
        __atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&fail_lock);
    __atomic_store_n(&stop, true, __ATOMIC_SEQ_CST);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Mostly a hot set of small signatures, sometimes any: hits and misses. */
static int64_t pick(uint64_t *rng, int64_t max)
{
    uint64_t r = rng_next(rng);
    return (r & 3) ? (int64_t)((r >> 2) % 3 < (uint64_t)max ? (r >> 2) % 3 : 0)
                   : (int64_t)((r >> 2) % (uint64_t)max);
}

static unsigned long long n_warnings;  /* (atomic) */

static void on_log(int level, const char *msg, void *u)
{
    (void)msg; (void)u;
    if (level >= WEFT_LOG_WARN)
        __atomic_fetch_add(&n_warnings, 1, __ATOMIC_SEQ_CST);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_pages(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res;
}

/* ---- Bodies. ----------------------------------------------------------- */

/* poly(x, k) = x * k + sum(x) */
static int body_poly(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    int64_t k;
    int rc = weft_value_static_i64(args[1], &k);
    if (rc)
        return rc;
    weft_value *x = args[0];
    outs[0] = weft_add(cx, weft_mul(cx, x, weft_const_i64(cx, k)), weft_sum(cx, x, WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

/* row(r) = sum(r * r) */
static int body_row(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_sum(cx, weft_mul(cx, args[0], args[0]), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

/* map(m, p) = map(row, m, parallel_iterations p) */
static int body_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    int64_t p;
    int rc = weft_value_static_i64(args[1], &p);
    if (rc)
        return rc;
    outs[0] = weft_map(cx, f_row, args[0], (unsigned)p);
    return weft_ctx_status(cx);
}

/* host: x + 1 computed by a callback that sleeps up to 200 us, and fails
 * when x[0] is FAIL_MARK. */
static int host_inc(weft_tensor *const *in, size_t n, weft_tensor **out, void *u)
{
    (void)n; (void)u;
    const int64_t *x = weft_tensor_data(in[0]);
    int64_t len = weft_tensor_numel(in[0]);
    if (len > 0 && x[0] == FAIL_MARK)
        return -1;
    usleep((useconds_t)(len * 17 % 200));
    int64_t buf[MAX_LEN];
    for (int64_t i = 0; i < len; i++)
        buf[i] = x[i] + 1;
    return weft_tensor_create(WEFT_I64, 1, &len, buf, out);
}

static int body_host(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    weft_spec s;
    int rc = weft_value_spec(args[0], &s);
    if (rc)
        return rc;
    weft_value *h = weft_host_call(cx, host_inc, NULL, &args[0], 1, &s, 0);
    outs[0] = weft_mul(cx, h, weft_const_i64(cx, 2));
    return weft_ctx_status(cx);
}

/* eager: -x + max(x) */
static int body_eager(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *u)
{
    (void)u;
    outs[0] = weft_add(cx, weft_neg(cx, args[0]), weft_reduce_max(cx, args[0], WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

/* ---- Calls. ------------------------------------------------------------ */

static weft_tensor *make_i64(int rank, const int64_t *dims, uint64_t *rng, int64_t *vals)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    for (int64_t i = 0; i < n; i++)
        vals[i] = (int64_t)(rng_next(rng) % 2001) - 1000;
    weft_tensor *t = NULL;
    int rc = weft_tensor_create(WEFT_I64, rank, dims, vals, &t);
    if (rc)
        fail("weft_tensor_create: %s", weft_errmsg());
    return t;
}

static void call_poly(uint64_t *rng)
{
    int64_t len = 1 + pick(rng, MAX_LEN);
    int64_t k = pick(rng, MAX_K);
    int64_t x[MAX_LEN];
    weft_tensor *t = make_i64(1, &len, rng, x);
    if (!t)
        return;
    weft_arg a[2] = { weft_arg_tensor(t), weft_arg_i64(k) };
    weft_tensor *out = NULL;
    int rc = weft_function_call(f_poly, a, 2, &out, 1);
    __atomic_store_n(&seen_poly[len][k], true, __ATOMIC_SEQ_CST);
    if (rc) {
        fail("poly(len %" PRId64 ", k %" PRId64 "): %s", len, k, weft_errmsg());
    } else {
        int64_t sum = 0;
        for (int64_t i = 0; i < len; i++)
            sum += x[i];
        const int64_t *o = weft_tensor_data(out);
        for (int64_t i = 0; i < len && weft_tensor_numel(out) == len; i++)
            if (o[i] != x[i] * k + sum) {
                fail("poly(len %" PRId64 ", k %" PRId64 ")[%" PRId64 "] = %" PRId64 ", want %" PRId64,
                     len, k, i, o[i], x[i] * k + sum);
                break;
            }
        if (weft_tensor_numel(out) != len)
            fail("poly: %" PRId64 " outputs for %" PRId64, weft_tensor_numel(out), len);
    }
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static void call_map(uint64_t *rng)
{
    int64_t dims[2] = { 1 + pick(rng, MAX_ROWS), 1 + pick(rng, MAX_COLS) };
    int64_t p = pick(rng, MAX_PAR + 1);
    int64_t x[MAX_ROWS * MAX_COLS];
    weft_tensor *t = make_i64(2, dims, rng, x);
    if (!t)
        return;
    weft_arg a[2] = { weft_arg_tensor(t), weft_arg_i64(p) };
    weft_tensor *out = NULL;
    int rc = weft_function_call(f_map, a, 2, &out, 1);
    __atomic_store_n(&seen_map[dims[0]][dims[1]][p], true, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&n_maps, 1, __ATOMIC_SEQ_CST);
    if (rc) {
        fail("map([%" PRId64 ",%" PRId64 "], p %" PRId64 "): %s", dims[0], dims[1], p, weft_errmsg());
    } else if (weft_tensor_numel(out) != dims[0]) {
        fail("map: %" PRId64 " results for %" PRId64 " rows", weft_tensor_numel(out), dims[0]);
    } else {
        const int64_t *o = weft_tensor_data(out);
        for (int64_t r = 0; r < dims[0]; r++) {
            int64_t s = 0;
            for (int64_t c = 0; c < dims[1]; c++)
                s += x[r * dims[1] + c] * x[r * dims[1] + c];
            if (o[r] != s) {
                fail("map row %" PRId64 ": %" PRId64 ", want %" PRId64, r, o[r], s);
                break;
            }
        }
    }
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static void call_host(uint64_t *rng)
{
    int64_t len = 1 + pick(rng, MAX_LEN);
    int64_t x[MAX_LEN];
    weft_tensor *t = NULL;
    bool want_fail = rng_next(rng) % 10 == 0;
    for (int64_t i = 0; i < len; i++)
        x[i] = (int64_t)(rng_next(rng) % 100);
    if (want_fail)
        x[0] = FAIL_MARK;
    if (weft_tensor_create(WEFT_I64, 1, &len, x, &t) != 0) {
        fail("weft_tensor_create: %s", weft_errmsg());
        return;
    }
    weft_arg a = weft_arg_tensor(t);
    weft_tensor *out = NULL;
    int rc = weft_function_call(f_host, &a, 1, &out, 1);
    __atomic_store_n(&seen_host[len], true, __ATOMIC_SEQ_CST);
    if (want_fail) {
        __atomic_fetch_add(&n_host_fail, 1, __ATOMIC_SEQ_CST);
        if (rc != WEFT_EHOST || out != NULL)
            fail("host: a failing callback gave %s, want WEFT_EHOST", weft_err_name(rc));
    } else if (rc) {
        fail("host(len %" PRId64 "): %s", len, weft_errmsg());
    } else {
        const int64_t *o = weft_tensor_data(out);
        for (int64_t i = 0; i < len; i++)
            if (weft_tensor_numel(out) != len || o[i] != 2 * (x[i] + 1)) {
                fail("host[%" PRId64 "] wrong", i);
                break;
            }
    }
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static void call_eager(uint64_t *rng)
{
    int64_t len = 1 + (int64_t)(rng_next(rng) % MAX_LEN);
    int64_t x[MAX_LEN];
    weft_tensor *t = make_i64(1, &len, rng, x);
    if (!t)
        return;
    weft_arg a = weft_arg_tensor(t);
    weft_tensor *out = NULL;
    int rc = weft_function_call(f_eager, &a, 1, &out, 1);
    if (rc) {
        fail("eager: %s", weft_errmsg());
    } else {
        int64_t mx = x[0];
        for (int64_t i = 1; i < len; i++)
            mx = x[i] > mx ? x[i] : mx;
        const int64_t *o = weft_tensor_data(out);
        for (int64_t i = 0; i < len; i++)
            if (weft_tensor_numel(out) != len || o[i] != mx - x[i]) {
                fail("eager[%" PRId64 "] wrong", i);
                break;
            }
    }
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static void *worker(void *arg)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        switch (rng_next(&rng) % 4) {
        case 0: call_poly(&rng); break;
        case 1: call_map(&rng); break;
        case 2: call_host(&rng); break;
        default: call_eager(&rng); break;
        }
        __atomic_fetch_add(&n_calls, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static weft_function *make(const char *name, weft_body_fn body, size_t n_args, unsigned flags,
                           size_t max_cached)
{
    weft_function_desc d = { .name = name, .body = body, .n_args = n_args, .n_outs = 1,
                             .flags = flags, .max_cached = max_cached };
    weft_function *f = NULL;
    if (weft_function_create(rt, &d, &f) != 0) {
        fprintf(stderr, "weft-soak: weft_function_create(%s): %s\n", name, weft_errmsg());
        exit(2);
    }
    return f;
}

static int count(const bool *flags, size_t n)
{
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += __atomic_load_n(&flags[i], __ATOMIC_SEQ_CST);
    return c;
}

/* distinct <= traces <= distinct + evictions, traces == cached + evictions. */
static bool check_traces(const char *name, const weft_function *f, int distinct)
{
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    bool ok = st.traces >= (uint64_t)distinct && st.traces <= (uint64_t)distinct + st.evictions &&
              st.traces == st.cached + st.evictions && st.hits + st.misses == st.calls;
    printf("weft-soak: %-5s calls %" PRIu64 " hits %" PRIu64 " misses %" PRIu64 " traces %" PRIu64
           " distinct %d evictions %" PRIu64 " cached %" PRIu64 "%s\n",
           name, st.calls, st.hits, st.misses, st.traces, distinct, st.evictions, st.cached,
           ok ? "" : "  <-- inconsistent");
    return ok;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 60.0;
    if (!(seconds > 0)) {
        fprintf(stderr, "usage: weft-soak [seconds]\n");
        return 2;
    }
    weft_set_log(on_log, NULL);
    int rc = weft_runtime_create(NULL, &rt);
    if (rc) {
        fprintf(stderr, "weft-soak: weft_runtime_create: %s\n", weft_errmsg());
        return 2;
    }
    f_row = make("row", body_row, 1, 0, 0);
    f_poly = make("poly", body_poly, 2, 0, 8);
    f_map = make("map", body_map, 2, 0, 6);
    f_host = make("host", body_host, 1, 0, 4);
    f_eager = make("eager", body_eager, 1, WEFT_RUN_EAGERLY, 2);

    pthread_t th[THREADS];
    double t0 = now_s();
    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
            fprintf(stderr, "weft-soak: pthread_create failed\n");
            return 2;
        }
    /* Warm-up: a sixth of the run, at most 10 s. */
    double warm = seconds / 6 < 10 ? seconds / 6 : 10;
    long rss_warm = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
        double t = now_s() - t0;
        if (rss_warm == 0 && t >= warm)
            rss_warm = rss_pages();
        if (t >= seconds)
            break;
        usleep(20000);
    }
    __atomic_store_n(&stop, true, __ATOMIC_SEQ_CST);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    long rss_end = rss_pages();
    double elapsed = now_s() - t0;

    int status = 0;
    if (__atomic_load_n(&failed, __ATOMIC_SEQ_CST)) {
        fprintf(stderr, "weft-soak: FAILED: %s\n", fail_msg);
        status = 1;
    }
    bool ok = true;
    ok &= check_traces("poly", f_poly, count(&seen_poly[0][0], sizeof seen_poly / sizeof(bool)));
    ok &= check_traces("map", f_map, count(&seen_map[0][0][0], sizeof seen_map / sizeof(bool)));
    ok &= check_traces("host", f_host, count(seen_host, MAX_LEN + 1));
    /* row is traced for one slice spec per column count seen. */
    int cols = 0;
    for (int c = 0; c <= MAX_COLS; c++) {
        bool any = false;
        for (int r = 0; r <= MAX_ROWS; r++)
            for (int q = 0; q <= MAX_PAR; q++)
                any |= __atomic_load_n(&seen_map[r][c][q], __ATOMIC_SEQ_CST);
        cols += any;
    }
    ok &= check_traces("row", f_row, cols);
    weft_function_stats st;
    weft_function_get_stats(f_eager, &st);
    if (st.traces != 0) {
        fprintf(stderr, "weft-soak: the WEFT_RUN_EAGERLY function traced %" PRIu64 " times\n",
                st.traces);
        ok = false;
    }
    if (!ok) {
        fprintf(stderr, "weft-soak: FAILED: trace counts do not add up (see above)\n");
        status = 1;
    }
    long page_kb = sysconf(_SC_PAGESIZE) / 1024;
    double growth = rss_warm > 0 ? (double)(rss_end - rss_warm) / (double)rss_warm : 0;
    if (rss_warm > 0 && (growth > 0.10 || growth < -0.10)) {
        fprintf(stderr, "weft-soak: FAILED: RSS went from %ld kB after warm-up to %ld kB (%+.1f%%)\n",
                rss_warm * page_kb, rss_end * page_kb, growth * 100);
        status = 1;
    }
    printf("weft-soak: %s: %.1f s, %d threads, %d workers, %llu calls (%llu maps, %llu failing host "
           "calls, %llu retracing warnings), RSS %ld kB after warm-up, %ld kB at the end (%+.1f%%)\n",
           status ? "FAILED" : "ok", elapsed, THREADS, (int)weft_runtime_workers(rt),
           (unsigned long long)__atomic_load_n(&n_calls, __ATOMIC_SEQ_CST),
           (unsigned long long)__atomic_load_n(&n_maps, __ATOMIC_SEQ_CST),
           (unsigned long long)__atomic_load_n(&n_host_fail, __ATOMIC_SEQ_CST),
           (unsigned long long)__atomic_load_n(&n_warnings, __ATOMIC_SEQ_CST), rss_warm * page_kb,
           rss_end * page_kb, growth * 100);
    weft_function_destroy(&f_poly);
    weft_function_destroy(&f_map);
    weft_function_destroy(&f_host);
    weft_function_destroy(&f_eager);
    weft_function_destroy(&f_row);
    weft_runtime_destroy(&rt);
    return status;
}
