/* weft_dist_create refuses MPI without MPI_THREAD_MULTIPLE, naming the
 * level MPI granted, and refuses MPI once it is finalized.  Its own MPI
 * process (run on one rank): MPI starts once per process, here at
 * MPI_THREAD_FUNNELED. */
#include <string.h>
#include <weft/dist.h>

#include "test_util.h"

Test(dist, thread_level_and_finalized, .timeout = 120)
{
    weft_runtime *rt = test_runtime(2);
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    weft_dist *d = (weft_dist *)1;
    int rc = weft_dist_create(rt, MPI_COMM_WORLD, &d);
    if (provided < MPI_THREAD_MULTIPLE) {
        cr_assert_eq(rc, WEFT_EINVAL);
        cr_assert_null(d);
        cr_assert(strstr(weft_errmsg(), "weft-dist needs MPI_THREAD_MULTIPLE") != NULL, "%s",
                  weft_errmsg());
        cr_assert(strstr(weft_errmsg(), provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE"
                                        : "MPI_THREAD_FUNNELED") != NULL, "%s", weft_errmsg());
    } else {
        /* An MPI that grants more than asked for is allowed to. */
        cr_assert_eq(rc, 0, "%s", weft_errmsg());
        weft_dist_destroy(&d);
    }
    MPI_Finalize();
    rc = weft_dist_create(rt, MPI_COMM_WORLD, &d);
    cr_assert_eq(rc, WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "MPI is already finalized") != NULL, "%s", weft_errmsg());
    weft_runtime_destroy(&rt);
}
