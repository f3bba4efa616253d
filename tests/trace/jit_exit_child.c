/* A program that exits while its function's native code may be compiling,
 * without destroying anything: for test_jit's exit_mid_compile.  It
 * calls the chain of docs/BENCHMARKS.md once on f32[64, 64] (every group
 * compiled: the size threshold is one element), sleeps argv[1]
 * microseconds, prints how many compiles were queued or running then, and
 * returns from main.  With argv[1] "wait" it waits for the compile
 * instead and prints its time in nanoseconds.  Everything it makes stays
 * reachable from statics, so that LeakSanitizer has nothing to say. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft.h>

#include "trace/jit.h"

static weft_runtime *rt;
static weft_function *fn;
static weft_tensor *x, *y;
static float data[64 * 64];

static int chain_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *v = args[0];
    weft_value *a = weft_sqrt(cx, weft_abs(cx, weft_sub(cx, weft_mul(cx, weft_const_f64(cx, 1.5), v),
                                                          weft_const_f64(cx, 2.0))));
    outs[0] = weft_add(cx, weft_mul(cx, a, v), weft_exp(cx, weft_neg(cx, weft_mul(cx, v, v))));
    return weft_ctx_status(cx);
}

static int fail(const char *what)
{
    fprintf(stderr, "jit_exit_child: %s: %s\n", what, weft_errmsg());
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    bool wait = strcmp(argv[1], "wait") == 0;
    long us = wait ? 0 : atol(argv[1]);
    weft__jit_set_min_elems(1);
    weft_config cfg = { 0 };
    if (weft_runtime_create(&cfg, &rt))
        return fail("runtime");
    weft_function_desc d = { .name = "chain", .body = chain_body, .n_args = 1, .n_outs = 1 };
    if (weft_function_create(rt, &d, &fn))
        return fail("function");
    int64_t dims[2] = { 64, 64 };
    for (int i = 0; i < 64 * 64; i++)
        data[i] = (float)i / 1024.0f - 2.0f;
    if (weft_tensor_create(WEFT_F32, 2, dims, data, &x))
        return fail("tensor");
    weft_arg a = weft_arg_tensor(x);
    if (weft_function_call(fn, &a, 1, &y, 1))
        return fail("call");
    struct timespec step = { 0, wait ? 1000000 : us * 1000 };
    weft_function_stats st;
    for (int i = 0; i < 120000; i++) {
        nanosleep(&step, NULL);
        weft_function_get_stats(fn, &st);
        if (!wait || st.native_groups + st.native_failed > 0)
            break;
    }
    if (wait)
        printf("%llu\n", (unsigned long long)st.native_compile_ns);
    else
        printf("%llu\n", (unsigned long long)weft__jit_pending());
    return 0;
}
