/* weft_dist_parallel_map across the ranks of an MPI program: n iterations
 * whose cost rises with the index, handed out in chunks across the ranks
 * and, inside each rank, over its workers.  Each rank reports how many
 * iterations it ran; the results, summed over the ranks, match a serial
 * loop.
 *
 *     mpirun -np 2 --bind-to none examples/dist_map [n]
 *
 * (--bind-to none: Open MPI would otherwise pin each rank, workers and
 * all, to one core.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/dist.h>

typedef struct work {
    size_t n;
    double *out;          /* out[i], filled on whichever rank ran i */
    long ran;             /* iterations this rank ran (atomic) */
} work;

/* Iteration i costs i units: the last ones are the dearest. */
static double cost(size_t i)
{
    double x = 0;
    for (size_t k = 0; k < i * 100; k++)
        x += 1.0 / (double)(k + 1);
    return x;
}

static int iteration(size_t i, void *ctx)
{
    work *w = ctx;
    w->out[i] = cost(i);
    __atomic_fetch_add(&w->ran, 1, __ATOMIC_RELAXED);
    return 0;
}

static int fail(const char *what, int err)
{
    fprintf(stderr, "%s: %s (%s)\n", what, weft_err_name(err), weft_errmsg());
    return 1;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    work w = { argc > 1 ? strtoul(argv[1], NULL, 10) : 2000, NULL, 0 };
    w.out = calloc(w.n ? w.n : 1, sizeof *w.out);

    weft_runtime *rt = NULL;
    weft_dist *d = NULL;
    int err = weft_runtime_create(NULL, &rt);       /* $WEFT_NUM_THREADS workers per rank */
    if (err == 0)
        err = weft_dist_create(rt, MPI_COMM_WORLD, &d);
    if (err != 0 || !w.out) {
        int rc = fail("setup", err ? err : WEFT_ENOMEM);
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    int rank = weft_dist_rank(d), size = weft_dist_size(d);

    err = weft_dist_parallel_map(d, w.n, 0, iteration, &w);
    if (err != 0)
        return fail("weft_dist_parallel_map", err);
    printf("rank %d of %d ran %ld of %zu iterations\n", rank, size, w.ran, w.n);

    /* Each index ran on exactly one rank: the others left it 0. */
    MPI_Allreduce(MPI_IN_PLACE, w.out, (int)w.n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        for (size_t i = 0; i < w.n; i++)
            bad += w.out[i] != cost(i);
        printf("%s: every result matches the serial loop's\n", bad ? "FAILED" : "ok");
    }

    weft_dist_destroy(&d);
    weft_runtime_destroy(&rt);
    free(w.out);
    MPI_Finalize();
    return bad != 0;
}
