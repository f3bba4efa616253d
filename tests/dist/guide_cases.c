/* The "Scale-out over MPI" section of docs/GUIDE.md, compiled and run on
 * every rank (by test_dist.c).  As in tests/api/test_guide.c, every
 * ```c block of the section appears here verbatim after a line
 * "/" "* snippet: NAME *" "/" (test_guide.c's guide.snippets_are_verbatim
 * checks this file too), and each snippet runs in a case that asserts
 * what the guide says it prints.  Statement snippets sit at column 0. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture.h"
#include "dist_util.h"

static void expect_printed(char *got, const char *want)
{
    cr_assert_str_eq(got, want, "rank %d printed \"%s\", the guide says \"%s\"", world_rank, got,
                     want);
    free(got);
}

/* ---- the snippets ---- */

static void create(void)
{
    capture_begin();
/* snippet: dist-create */
weft_dist *d;                                 /* after MPI_Init_thread(MPI_THREAD_MULTIPLE) */
int rc = weft_dist_create(rt, MPI_COMM_WORLD, &d);   /* collective: every rank calls it */
if (rc) {
    fprintf(stderr, "%s: %s\n", weft_err_name(rc), weft_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}
printf("rank %d of %d\n", weft_dist_rank(d), weft_dist_size(d));
/* ... */
weft_dist_destroy(&d);                        /* collective too, before MPI_Finalize */
/* end snippet */
    char want[64];
    snprintf(want, sizeof want, "rank %d of %d\n", world_rank, world_size);
    expect_printed(capture_end(), want);
    cr_assert_null(d);
}

/* snippet: dist-map-fn */
/* Index i costs about i units: the last indices are the dearest. */
static int costly(size_t i, void *ctx)
{
    double x = 0;
    for (size_t k = 0; k < i * 1000; k++)
        x += 1.0 / (double)(k + 1);
    ((double *)ctx)[i] = x;                   /* on whichever rank ran i */
    return 0;                                 /* non-zero: every rank stops and returns it */
}
/* end snippet */

static void map(void)
{
    capture_begin();
/* snippet: dist-map */
double *out = calloc(1000, sizeof *out);
int rc = weft_dist_parallel_map(d, 1000, 0, costly, out);     /* on every rank */
/* Each index ran on one rank; the others' out[i] stayed 0. */
MPI_Allreduce(MPI_IN_PLACE, out, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
printf("rc %d, out[999] = %.4f\n", rc, out[999]);
free(out);
/* end snippet */
    expect_printed(capture_end(), "rc 0, out[999] = 14.3917\n");
}

/* snippet: dist-body */
static int squares(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, args[0], args[0]);
    outs[1] = weft_sum(cx, outs[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}
/* end snippet */

static void call_and_profile(void)
{
    capture_begin();
/* snippet: dist-call */
weft_spec sig;
weft_spec_parse("f64[?]", &sig);              /* one trace per rank, whatever its rows */
weft_function_desc desc = { .name = "squares", .body = squares, .n_args = 1, .n_outs = 2,
                            .input_signature = &sig };
weft_function *f;
weft_function_create(rt, &desc, &f);          /* every rank: its own trace cache */

weft_tensor *x = NULL;                        /* the whole input, on the root only */
if (weft_dist_rank(d) == 0)
    weft_tensor_create(WEFT_F64, 1, (int64_t[]){ 5 }, (double[]){ 1, 2, 3, 4, 5 }, &x);
weft_arg a = weft_arg_tensor(x);
const weft_dist_combine how[2] = { WEFT_DIST_CONCAT, WEFT_DIST_SUM };
weft_tensor *outs[2];
if (weft_dist_call(d, f, &a, 1, how, outs, 2) == 0) {
    const double *sq = weft_tensor_data(outs[0]), *total = weft_tensor_data(outs[1]);
    printf("%g %g %g %g %g, sum %g\n", sq[0], sq[1], sq[2], sq[3], sq[4], total[0]);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}
/* end snippet */
    expect_printed(capture_end(), "1 4 9 16 25, sum 55\n");
    cr_assert_eq(weft_function_tracing_count(f), 1);

    char prefix[128], path[160];
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(prefix, sizeof prefix, "/tmp/weft_test_dist_guide_%ld", pid);
    snprintf(path, sizeof path, "%s.rank%d.json", prefix, world_rank);
/* snippet: dist-profile */
weft_dist_profile_begin(d, prefix);           /* e.g. "timeline": rank k writes timeline.rank<k>.json */
if (weft_dist_call(d, f, &a, 1, how, outs, 2) == 0) {    /* scatter, compute, gather */
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}
weft_dist_profile_end(d);                     /* writes every rank's file */
/* end snippet */
    cr_assert_eq(access(path, R_OK), 0, "rank %d wrote no %s", world_rank, path);
    unlink(path);
    weft_tensor_release(x);
    weft_function_destroy(&f);
}

void dist_guide_cases(void)
{
    create();
    map();
    call_and_profile();
}
