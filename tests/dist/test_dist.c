/* weft-dist under mpirun on 1, 2 and 4 ranks (tests/dist/mpirun.sh), with
 * $WEFT_NUM_THREADS workers per rank.  MPI may be initialized once per
 * process and criterion runs each Test in a process of its own, so this is
 * one Test that runs every case in turn, on every rank in the same order;
 * a failed assertion ends its rank, and mpirun then ends the others. */
#include "dist_util.h"

weft_runtime *rt;
weft_dist *d;
int world_rank, world_size;

Test(dist, on_every_rank, .timeout = 240)
{
    rt = test_runtime(2);
    dist_map_cases_before_init();
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    cr_assert_eq(provided, MPI_THREAD_MULTIPLE, "MPI grants thread level %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    cr_assert_eq(weft_dist_create(rt, MPI_COMM_WORLD, &d), 0, "%s", weft_errmsg());

    dist_map_cases();
    dist_call_cases();
    dist_guide_cases();

    weft_dist_destroy(&d);
    cr_assert_null(d);
    weft_dist_destroy(&d);   /* NULL is fine */
    weft_runtime_destroy(&rt);
    MPI_Finalize();
}
