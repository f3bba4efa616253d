/* weft_parallel_map over blocking iterations (each sleeps 10 ms), with at
 * most 1 and then at most 8 iterations in flight.  Usage: pmap [n]. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, nanosleep under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <weft.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Stands for an iteration waiting on I/O: it holds no CPU. */
static int slow_square(size_t i, void *ctx)
{
    long *out = ctx;
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    out[i] = (long)(i * i);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 8;
    weft_runtime *rt = NULL;
    if (weft_runtime_create(&cfg, &rt)) {
        fprintf(stderr, "pmap: %s\n", weft_errmsg());
        return 1;
    }
    long *out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        weft_runtime_destroy(&rt);
        return 1;
    }
    unsigned bounds[] = { 1, 8 };
    int status = 0;
    for (int b = 0; b < 2; b++) {
        double t0 = now_ms();
        int rc = weft_parallel_map(rt, n, bounds[b], slow_square, out);
        double t1 = now_ms();
        long sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += out[i];
        printf("parallel_iterations %u: %zu iterations of 10 ms in %.1f ms (sum %ld)%s\n",
               bounds[b], n, t1 - t0, sum, rc ? " FAILED" : "");
        if (rc)
            status = 1;
    }
    free(out);
    weft_runtime_destroy(&rt);
    return status;
}
