/* weft-dist's internals, shared by its files.  weft-dist is a client of
 * weft: it uses only the public API (<weft.h>), so its errors go through
 * weft_errorf and its timeline spans through weft_profile_span. */
#ifndef WEFT_DIST_INTERNAL_H
#define WEFT_DIST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <weft/dist.h>

/* The counter's window on rank 0: claims are fetch-and-adds on it. */
#define WEFT__DIST_COUNTER_DISP 0

struct weft_dist {
    weft_runtime *rt;
    MPI_Comm comm;             /* weft's own copy of the program's communicator */
    MPI_Win win;               /* one uint64 on rank 0, nothing elsewhere */
    uint64_t *counter;         /* the window's memory (rank 0 only) */
    int rank, size;
    char *profile_path;        /* this rank's file while a profile records */
    int64_t *map_gather;       /* 3 words per rank: what a map's start gathers */
    /* Statistics (atomic, relaxed: the runtime's workers update them). */
    uint64_t maps, chunks, claims, claim_ns, calls;
};

/* What each rank tells every other after running f: its code, then the
 * dtype, rank and dims of each output (all int64, so that one allgather
 * carries it and every rank judges the outputs alike). */
#define WEFT__DIST_SHAPE_WORDS (2 + WEFT_MAX_RANK)
static inline size_t weft__dist_record_words(size_t n_outs)
{
    return 1 + n_outs * WEFT__DIST_SHAPE_WORDS;
}

/* weft_dist_call's second half: gathers every rank's code (rc) and output
 * shapes into gather (size * weft__dist_record_words(n_outs) words),
 * checks them against combine (the root's weft_dist_combine values), then
 * combines local[j] of every rank into outs[j] on every rank.  local's
 * references are released (and set NULL); outs are all NULL on failure.
 * counts and displs hold size ints each (scratch).  Collective; every rank
 * returns the same code. */
int weft__dist_combine(weft_dist *d, int rc, const int32_t *combine, weft_tensor **local,
                       weft_tensor **outs, size_t n_outs, int64_t *gather, int *counts,
                       int *displs);

/* Monotonic time in nanoseconds: the clock of weft_profile_span. */
uint64_t weft__dist_now_ns(void);

/* Every rank passes its own code (0 or negative); every rank returns the
 * same one: 0 when all passed 0, else the code of the lowest rank that
 * failed, whose weft_errmsg() becomes every rank's, as
 * "<entry>: on rank K of N: <message>".  Collective. */
int weft__dist_agree(weft_dist *d, const char *entry, int rc);
/* The second half of weft__dist_agree, for callers that found the lowest
 * failing rank themselves: its code and message become every rank's.
 * rc is this rank's code (the one that counts on failed_rank).
 * Collective. */
int weft__dist_report(weft_dist *d, const char *entry, int failed_rank, int rc);

/* Records a span [t0_ns, now] named phase on d's runtime's timeline, with
 * "rank K of N" as its detail. */
void weft__dist_span(weft_dist *d, const char *phase, uint64_t t0_ns);

/* The chunks of a map: a deterministic function of n and the number of
 * runners on all ranks together, so that every rank cuts [0, n) alike and
 * a claim needs only the chunk's number.  Chunks come in batches of one
 * per runner, each batch's chunks ceil(remaining / (2 * runners)) long
 * (factoring): about half of what is left goes out per batch, so chunks
 * shrink to one index as the work runs out and the last ones balance the
 * ranks, while a map takes only about runners * log2(n) claims. */
typedef struct weft__dist_sched {
    uint64_t n, runners;
    uint64_t total;            /* number of chunks */
} weft__dist_sched;

/* A runner's position in the schedule; chunk numbers it asks for rise. */
typedef struct weft__dist_cursor {
    uint64_t first;            /* number of the batch's first chunk */
    uint64_t start;            /* index where the batch begins */
    uint64_t len;              /* chunk length in this batch */
} weft__dist_cursor;

void weft__dist_sched_init(weft__dist_sched *s, uint64_t n, uint64_t runners);
void weft__dist_cursor_init(weft__dist_cursor *c, const weft__dist_sched *s);
/* Chunk j (< s->total) is [*begin, *end); j must not be below the
 * cursor's last one. */
void weft__dist_sched_chunk(const weft__dist_sched *s, weft__dist_cursor *c, uint64_t j,
                            uint64_t *begin, uint64_t *end);

#endif
