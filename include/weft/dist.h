/* weft-dist: weft across the ranks of an MPI program.  A separate library
 * (pkg-config weft-dist), built when MPI is found; <weft.h> does not include
 * this header, which needs <mpi.h>:
 *
 *     #include <weft/dist.h>   (mpicc prog.c $(pkg-config --cflags --libs weft-dist))
 *
 * The program owns MPI: it calls MPI_Init_thread with MPI_THREAD_MULTIPLE
 * (the runtime's workers make one-sided MPI calls) before weft_dist_create
 * and MPI_Finalize after weft_dist_destroy.  Every rank runs its own weft
 * runtime; weft-dist balances work between the ranks.
 *
 * Collective calls (marked so) are made by every rank of the communicator,
 * in the same order, by one thread of each rank at a time, like MPI
 * collectives; every rank then returns the same code, and a failure on one
 * rank is reported on all of them (weft_errmsg() names the rank), so that
 * no rank is left waiting.  Ranks are assumed to share one data
 * representation (a homogeneous cluster). */
#ifndef WEFT_DIST_H
#define WEFT_DIST_H

#include <mpi.h>

#include "../weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One runtime's place in a communicator.  Opaque; owned by the caller. */
typedef struct weft_dist weft_dist;

/* Collective over comm: duplicates comm (weft's messages never mix with
 * the program's) and sets up the shared chunk counter.  rt is this rank's
 * runtime (it must outlive the weft_dist).  Fails with WEFT_EINVAL when MPI
 * is not initialized, already finalized, or provides less than
 * MPI_THREAD_MULTIPLE (those are local checks: every rank of a program
 * fails them alike).  On success *out is owned by the caller. */
WEFT_API int  weft_dist_create(weft_runtime *rt, MPI_Comm comm, weft_dist **out);
/* Collective: frees the communicator's copy and the counter, then *d;
 * *d becomes NULL.  NULL and *d == NULL are fine (on every rank alike). */
WEFT_API void weft_dist_destroy(weft_dist **d);
/* This rank's number in the communicator, 0..size-1 (-1 for NULL).  Any
 * thread. */
WEFT_API int  weft_dist_rank(const weft_dist *d);
/* The number of ranks (0 for NULL).  Any thread. */
WEFT_API int  weft_dist_size(const weft_dist *d);

/* fn(i) once for every i in [0, n), on whichever rank: chunks are handed
 * out dynamically across ranks from one atomic counter (in chunks that
 * shrink as the work runs out), and inside a rank over its workers.  At
 * most parallel_iterations calls in flight on each rank (0: no bound), and
 * never more than the rank's worker count.  Collective; n must be the same
 * on every rank; every rank returns the same code: 0, or the first error
 * any rank's fn returned (the others stop taking chunks; weft_errmsg()
 * then names the rank and the index on every rank). */
WEFT_API int weft_dist_parallel_map(weft_dist *d, size_t n, unsigned parallel_iterations,
                                    weft_index_fn fn, void *ctx);

/* Data parallelism for a traced function: every argument tensor is split
 * along dim 0 across the ranks (the caller passes the whole tensor on the
 * root rank, 0, and NULL elsewhere), each rank calls f on its shard, and each
 * output is gathered on every rank along dim 0 (WEFT_DIST_CONCAT) or
 * summed (WEFT_DIST_SUM) / averaged (WEFT_DIST_MEAN) over the ranks.
 *
 * Shards: rank k gets dim0 / size rows, one more when k < dim0 % size (so
 * uneven sizes are fine, and a rank may get no rows).  Static scalar
 * arguments (weft_arg_i64/f64) are the root's, on every rank.  Off the
 * root, args may be NULL; when it is not, its kinds must be the root's and
 * its tensors NULL.  combine holds n_outs entries (NULL: all
 * WEFT_DIST_CONCAT); off the root it may be NULL, else it must match the
 * root's.  f is this rank's function, with its own trace cache: one trace
 * per signature per rank.  An error on any rank (a signature mismatch, a
 * failing body) is every rank's error.  CONCAT needs outputs of rank >= 1
 * with the same dims past dim 0 on every rank; SUM and MEAN need the same
 * shape on every rank, SUM a numeric dtype, MEAN f32 or f64 (the mean of the
 * ranks' outputs, each rank weighing the same).  On success outs[0..n_outs)
 * hold new references on every rank; on failure they are all NULL.
 * Collective. */
typedef enum weft_dist_combine { WEFT_DIST_CONCAT, WEFT_DIST_SUM, WEFT_DIST_MEAN } weft_dist_combine;
WEFT_API int weft_dist_call(weft_dist *d, weft_function *f, const weft_arg *args, size_t n_args,
                            const weft_dist_combine *combine, weft_tensor **outs, size_t n_outs);

/* Timelines, one file per rank.  weft_dist_profile_begin starts
 * weft_profile_begin on every rank after a barrier, so that the files
 * share a time origin (to within the barrier's skew): rank k writes
 * "<prefix>.rank<k>.json".  weft_dist_calls record their phases there
 * ("scatter", "compute", "gather", category "user"), and maps the chunks
 * each thread ran ("chunk").  weft_dist_profile_end writes the files; each
 * names its process "weft rank k" (pid k + 1), so that their events merged
 * into one file lie side by side.  Both collective; codes as
 * weft_profile_begin / weft_profile_end, plus WEFT_EINVAL for a NULL or
 * empty prefix. */
WEFT_API int weft_dist_profile_begin(weft_dist *d, const char *prefix);
WEFT_API int weft_dist_profile_end(weft_dist *d);

/* Counters of this rank, for tuning and the benchmarks.  Any thread. */
typedef struct weft_dist_stats {
    uint64_t maps;       /* weft_dist_parallel_map calls that ran */
    uint64_t chunks;     /* chunks this rank's threads took */
    uint64_t claims;     /* fetch-and-adds on the counter (chunks + the last, empty ones) */
    uint64_t claim_ns;   /* time spent in them */
    uint64_t calls;      /* weft_dist_call calls that ran f */
    uint64_t reserved[8];/* zero, written by weft: room for later counters,
                            so the struct keeps its size across releases */
} weft_dist_stats;
WEFT_API void weft_dist_get_stats(const weft_dist *d, weft_dist_stats *out);

#ifdef __cplusplus
}
#endif
#endif
