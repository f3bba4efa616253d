/* weft_dist's life cycle, its accessors, and the agreement on a code that
 * every collective entry point ends its phases with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/internal.h"

/* The size of a message carried between ranks (weft_errmsg's buffer). */
#define MSG_SIZE 512

uint64_t weft__dist_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What MPI must provide before weft_dist_create may communicate: local
 * checks, alike on every rank of a program. */
static int check_mpi(MPI_Comm comm)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag)
        return weft_errorf(WEFT_EINVAL, "weft_dist_create: MPI is not initialized "
                           "(call MPI_Init_thread with MPI_THREAD_MULTIPLE first)");
    MPI_Finalized(&flag);
    if (flag)
        return weft_errorf(WEFT_EINVAL, "weft_dist_create: MPI is already finalized");
    if (comm == MPI_COMM_NULL)
        return weft_errorf(WEFT_EINVAL, "weft_dist_create: comm is MPI_COMM_NULL");
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        const char *name = provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE"
                         : provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED"
                         : "MPI_THREAD_SERIALIZED";
        return weft_errorf(WEFT_EINVAL, "weft_dist_create: MPI provides %s, but the runtime's "
                           "workers make MPI calls: weft-dist needs MPI_THREAD_MULTIPLE "
                           "(ask MPI_Init_thread for it)", name);
    }
    return 0;
}

int weft_dist_create(weft_runtime *rt, MPI_Comm comm, weft_dist **out)
{
    if (!out)
        return weft_errorf(WEFT_EINVAL, "weft_dist_create: out is NULL");
    *out = NULL;
    int rc = check_mpi(comm);
    if (rc)
        return rc;
    /* From here every rank takes part in the agreement, so that a rank
     * without rt or memory fails everywhere instead of leaving the others
     * in MPI_Comm_dup. */
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    weft_dist *d = calloc(1, sizeof *d);
    /* Allocated now, so that no map can fail to take part in its gather. */
    int64_t *map_gather = calloc((size_t)size * 3, sizeof *map_gather);
    if (!rt)
        rc = weft_errorf(WEFT_EINVAL, "weft_dist_create: rt is NULL");
    else if (!d || !map_gather)
        rc = weft_errorf(WEFT_ENOMEM, "weft_dist_create: out of memory");
    weft_dist probe = { .comm = comm, .rank = rank, .size = size };
    rc = weft__dist_agree(&probe, "weft_dist_create", rc);
    if (rc) {
        free(map_gather);
        free(d);
        return rc;
    }
    d->map_gather = map_gather;
    d->rt = rt;
    d->rank = rank;
    d->size = size;
    MPI_Comm_dup(comm, &d->comm);
    /* The counter lives on rank 0; the others only reach it.  One passive
     * epoch for the weft_dist's lifetime: claims need only a flush. */
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)sizeof(uint64_t) : 0;
    MPI_Win_allocate(bytes, (int)sizeof(uint64_t), MPI_INFO_NULL, d->comm, &d->counter, &d->win);
    if (rank == 0)
        *d->counter = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, d->win);
    *out = d;
    return 0;
}

void weft_dist_destroy(weft_dist **dp)
{
    if (!dp || !*dp)
        return;
    weft_dist *d = *dp;
    if (d->profile_path)
        (void)weft_dist_profile_end(d);
    MPI_Win_unlock_all(d->win);
    MPI_Win_free(&d->win);
    MPI_Comm_free(&d->comm);
    free(d->profile_path);
    free(d->map_gather);
    free(d);
    *dp = NULL;
}

int weft_dist_rank(const weft_dist *d)
{
    return d ? d->rank : -1;
}

int weft_dist_size(const weft_dist *d)
{
    return d ? d->size : 0;
}

void weft_dist_get_stats(const weft_dist *d, weft_dist_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!d)
        return;
    /* The counters are only read here: casting const away for the loads
     * changes nothing. */
    weft_dist *m = (weft_dist *)d;
    out->maps = __atomic_load_n(&m->maps, __ATOMIC_RELAXED);
    out->chunks = __atomic_load_n(&m->chunks, __ATOMIC_RELAXED);
    out->claims = __atomic_load_n(&m->claims, __ATOMIC_RELAXED);
    out->claim_ns = __atomic_load_n(&m->claim_ns, __ATOMIC_RELAXED);
    out->calls = __atomic_load_n(&m->calls, __ATOMIC_RELAXED);
}

int weft__dist_agree(weft_dist *d, const char *entry, int rc)
{
    /* The lowest failing rank: MINLOC over (0 if failed, 1 if not). */
    struct { int ok, rank; } mine = { rc == 0, d->rank }, first;
    MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, d->comm);
    return first.ok ? 0 : weft__dist_report(d, entry, first.rank, rc);
}

int weft__dist_report(weft_dist *d, const char *entry, int failed_rank, int rc)
{
    struct { int code; char msg[MSG_SIZE]; } what = { rc, "" };
    if (d->rank == failed_rank)
        snprintf(what.msg, sizeof what.msg, "%s", weft_errmsg());
    MPI_Bcast(&what, (int)sizeof what, MPI_BYTE, failed_rank, d->comm);
    /* "<entry>: x" from the failing rank reads "<entry>: on rank K of N: x". */
    const char *msg = what.msg;
    size_t len = strlen(entry);
    if (strncmp(msg, entry, len) == 0 && msg[len] == ':' && msg[len + 1] == ' ')
        msg += len + 2;
    return weft_errorf(what.code, "%s: on rank %d of %d: %s", entry, failed_rank, d->size,
                       msg[0] ? msg : weft_strerror(what.code));
}

void weft__dist_span(weft_dist *d, const char *phase, uint64_t t0_ns)
{
    char detail[32];
    snprintf(detail, sizeof detail, "rank %d of %d", d->rank, d->size);
    (void)weft_profile_span(d->rt, phase, detail, t0_ns, weft__dist_now_ns());
}
