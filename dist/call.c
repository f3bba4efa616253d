/* weft_dist_call's first half: the root describes the arguments, every
 * rank checks its own against that description, the root scatters each
 * tensor along dim 0, and every rank calls f on its shard.
 *
 * A rank that cannot take part in a collective (no memory for its buffer,
 * bad arguments) must not leave the others waiting in it: every buffer a
 * collective needs is allocated before the agreement that precedes it,
 * and its failure is part of that agreement. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dist/internal.h"

#define ENTRY "weft_dist_call"
/* weft_function_create's bound on args and outs, which also keeps the
 * descriptions' sizes in MPI's int counts. */
#define MAX_COUNT 4096

/* An argument as the root describes it to every rank. */
typedef struct arg_desc {
    int64_t kind, dtype, rank;
    int64_t dims[WEFT_MAX_RANK];
    int64_t i64;
    double f64;
} arg_desc;

/* What a call holds between its phases. */
typedef struct dcall {
    weft_dist *d;
    size_t n_args, n_outs;       /* the root's counts */
    arg_desc *desc;              /* n_args */
    int32_t *combine;            /* n_outs, the root's */
    weft_tensor **shards;        /* n_args: this rank's part (NULL for scalars) */
    weft_tensor **local;         /* n_outs: f's outputs on this rank */
    int64_t *gather;             /* size * weft__dist_record_words(n_outs) */
    int *counts, *displs;        /* size: one scatter's rows per rank */
} dcall;

static void dcall_free(dcall *c)
{
    for (size_t i = 0; c->shards && i < c->n_args; i++)
        weft_tensor_release(c->shards[i]);
    for (size_t j = 0; c->local && j < c->n_outs; j++)
        weft_tensor_release(c->local[j]);
    free(c->desc);
    free(c->combine);
    free(c->shards);
    free(c->local);
    free(c->gather);
    free(c->counts);
    free(c->displs);
}

/* The rows of a dim 0 of `rows` that rank k gets, and where they start. */
static int64_t shard_rows(int64_t rows, int size, int k)
{
    return rows / size + (k < rows % size);
}

static int64_t shard_start(int64_t rows, int size, int k)
{
    int64_t extra = rows % size;
    return (int64_t)k * (rows / size) + (k < extra ? k : extra);
}

static size_t row_bytes(const arg_desc *a)
{
    size_t b = weft_dtype_size((weft_dtype)a->dtype);
    for (int64_t r = 1; r < a->rank; r++)
        b *= (size_t)a->dims[r];
    return b;
}

/* The root's own checks of what it is about to scatter. */
static int check_root_args(const weft_arg *args, size_t n_args)
{
    if (n_args && !args)
        return weft_errorf(WEFT_EINVAL, ENTRY ": args is NULL on the root");
    for (size_t i = 0; i < n_args; i++) {
        const weft_arg *a = &args[i];
        if (a->kind == WEFT_ARG_I64 || a->kind == WEFT_ARG_F64)
            continue;
        if (a->kind != WEFT_ARG_TENSOR)
            return weft_errorf(WEFT_EINVAL, ENTRY ": arg %zu has kind %d, not a weft_arg_kind",
                               i, (int)a->kind);
        const weft_tensor *t = a->u.tensor;
        if (!t)
            return weft_errorf(WEFT_EINVAL, ENTRY ": arg %zu is a NULL tensor on the root", i);
        if (weft_tensor_rank(t) < 1)
            return weft_errorf(WEFT_EINVAL, ENTRY ": arg %zu is a scalar tensor, which has no "
                               "dim 0 to split across the ranks", i);
        const int64_t *dims = weft_tensor_dims(t);
        size_t row = weft_dtype_size(weft_tensor_dtype(t));
        for (int r = 1; r < weft_tensor_rank(t); r++)
            row *= (size_t)dims[r];
        if (dims[0] > INT_MAX || row > INT_MAX)
            return weft_errorf(WEFT_EINVAL, ENTRY ": arg %zu has %lld rows of %zu bytes; MPI "
                               "counts them in int", i, (long long)dims[0], row);
    }
    return 0;
}

/* Checks that need no other rank; sets outs to NULL. */
static int check_local(const weft_dist *d, const weft_function *f, const weft_arg *args,
                       size_t n_args, const weft_dist_combine *combine, weft_tensor **outs,
                       size_t n_outs)
{
    if (outs)
        for (size_t j = 0; j < n_outs; j++)
            outs[j] = NULL;
    if (!f)
        return weft_errorf(WEFT_EINVAL, ENTRY ": f is NULL");
    if (n_args > MAX_COUNT || n_outs > MAX_COUNT)
        return weft_errorf(WEFT_EINVAL, ENTRY ": %zu args and %zu outs; a function has at most "
                           "%d of each", n_args, n_outs, MAX_COUNT);
    if (n_outs && !outs)
        return weft_errorf(WEFT_EINVAL, ENTRY ": outs is NULL");
    for (size_t j = 0; combine && j < n_outs; j++)
        if (combine[j] != WEFT_DIST_CONCAT && combine[j] != WEFT_DIST_SUM &&
            combine[j] != WEFT_DIST_MEAN)
            return weft_errorf(WEFT_EINVAL, ENTRY ": combine[%zu] is %d, not a "
                               "weft_dist_combine", j, (int)combine[j]);
    if (d->rank == 0)
        return check_root_args(args, n_args);
    for (size_t i = 0; args && i < n_args; i++)
        if (args[i].kind == WEFT_ARG_TENSOR && args[i].u.tensor)
            return weft_errorf(WEFT_EINVAL, ENTRY ": arg %zu is a tensor on rank %d; only the "
                               "root (rank 0) passes tensors", i, d->rank);
    return 0;
}

/* Buffers sized by the root's counts, so that this rank can take part even
 * when its own counts differ (it fails afterwards). */
static int alloc_buffers(dcall *c)
{
    size_t size = (size_t)c->d->size;
    c->desc = calloc(c->n_args ? c->n_args : 1, sizeof *c->desc);
    c->combine = calloc(c->n_outs ? c->n_outs : 1, sizeof *c->combine);
    c->shards = calloc(c->n_args ? c->n_args : 1, sizeof *c->shards);
    c->local = calloc(c->n_outs ? c->n_outs : 1, sizeof *c->local);
    c->gather = calloc(size * weft__dist_record_words(c->n_outs), sizeof *c->gather);
    c->counts = calloc(size, sizeof *c->counts);
    c->displs = calloc(size, sizeof *c->displs);
    if (!c->desc || !c->combine || !c->shards || !c->local || !c->gather || !c->counts ||
        !c->displs)
        return weft_errorf(WEFT_ENOMEM, ENTRY ": out of memory");
    return 0;
}

/* The root fills desc and combine from its arguments. */
static void describe(dcall *c, const weft_arg *args, const weft_dist_combine *combine)
{
    for (size_t i = 0; i < c->n_args; i++) {
        arg_desc *a = &c->desc[i];
        a->kind = args[i].kind;
        if (args[i].kind == WEFT_ARG_I64) {
            a->i64 = args[i].u.i64;
        } else if (args[i].kind == WEFT_ARG_F64) {
            a->f64 = args[i].u.f64;
        } else {
            const weft_tensor *t = args[i].u.tensor;
            a->dtype = weft_tensor_dtype(t);
            a->rank = weft_tensor_rank(t);
            memcpy(a->dims, weft_tensor_dims(t), (size_t)a->rank * sizeof a->dims[0]);
        }
    }
    for (size_t j = 0; j < c->n_outs; j++)
        c->combine[j] = combine ? (int32_t)combine[j] : WEFT_DIST_CONCAT;
}

/* A rank's own arguments against the root's description; then its shard
 * tensors, created empty for the scatter to fill (the root's hold its
 * rows already). */
static int check_and_make_shards(dcall *c, const weft_arg *args, const weft_dist_combine *combine)
{
    weft_dist *d = c->d;
    if (d->rank != 0) {
        for (size_t i = 0; args && i < c->n_args; i++)
            if (args[i].kind != c->desc[i].kind)
                return weft_errorf(WEFT_EINVAL, ENTRY ": arg %zu has kind %d on rank %d but %d "
                                   "on the root", i, (int)args[i].kind, d->rank,
                                   (int)c->desc[i].kind);
        for (size_t j = 0; combine && j < c->n_outs; j++)
            if ((int32_t)combine[j] != c->combine[j])
                return weft_errorf(WEFT_EINVAL, ENTRY ": combine[%zu] is %d on rank %d but %d "
                                   "on the root", j, (int)combine[j], d->rank,
                                   (int)c->combine[j]);
    }
    for (size_t i = 0; i < c->n_args; i++) {
        const arg_desc *a = &c->desc[i];
        if (a->kind != WEFT_ARG_TENSOR)
            continue;
        if (d->size == 1) {
            c->shards[i] = weft_tensor_retain(args[i].u.tensor);
            continue;
        }
        int64_t dims[WEFT_MAX_RANK];
        memcpy(dims, a->dims, sizeof dims);
        dims[0] = shard_rows(a->dims[0], d->size, d->rank);
        const void *rows = NULL;
        if (d->rank == 0)
            rows = weft_tensor_data(args[i].u.tensor);   /* its first rows are the root's */
        int rc = weft_tensor_create((weft_dtype)a->dtype, (int)a->rank, dims, rows,
                                    &c->shards[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Sends each tensor's rows from the root to their ranks. */
static void scatter(dcall *c, const weft_arg *args)
{
    weft_dist *d = c->d;
    if (d->size == 1)
        return;
    for (size_t i = 0; i < c->n_args; i++) {
        const arg_desc *a = &c->desc[i];
        size_t row = row_bytes(a);
        if (a->kind != WEFT_ARG_TENSOR || row == 0 || a->dims[0] == 0)
            continue;
        for (int k = 0; k < d->size; k++) {
            c->counts[k] = (int)shard_rows(a->dims[0], d->size, k);
            c->displs[k] = (int)shard_start(a->dims[0], d->size, k);
        }
        MPI_Datatype row_type;
        MPI_Type_contiguous((int)row, MPI_BYTE, &row_type);
        MPI_Type_commit(&row_type);
        if (d->rank == 0) {
            MPI_Scatterv(weft_tensor_data(args[i].u.tensor), c->counts, c->displs, row_type,
                         MPI_IN_PLACE, 0, row_type, 0, d->comm);
        } else {
            /* The shard was created just now and nobody else holds it:
             * filling its buffer before it is shared is safe. */
            void *mine = (void *)weft_tensor_data(c->shards[i]);
            MPI_Scatterv(NULL, NULL, NULL, row_type, mine, c->counts[d->rank], row_type, 0,
                         d->comm);
        }
        MPI_Type_free(&row_type);
    }
}

/* f on this rank's shards, with the root's scalars. */
static int compute(dcall *c, weft_function *f)
{
    weft_arg stack_args[8];
    weft_arg *a = c->n_args <= 8 ? stack_args : calloc(c->n_args, sizeof *a);
    if (!a)
        return weft_errorf(WEFT_ENOMEM, ENTRY ": out of memory");
    for (size_t i = 0; i < c->n_args; i++) {
        const arg_desc *ad = &c->desc[i];
        a[i] = ad->kind == WEFT_ARG_I64 ? weft_arg_i64(ad->i64)
             : ad->kind == WEFT_ARG_F64 ? weft_arg_f64(ad->f64)
             : weft_arg_tensor(c->shards[i]);
    }
    int rc = weft_function_call(f, a, c->n_args, c->local, c->n_outs);
    if (a != stack_args)
        free(a);
    return rc;
}

int weft_dist_call(weft_dist *d, weft_function *f, const weft_arg *args, size_t n_args,
                   const weft_dist_combine *combine, weft_tensor **outs, size_t n_outs)
{
    if (!d)
        return weft_errorf(WEFT_EINVAL, ENTRY ": d is NULL");
    uint64_t t0 = weft__dist_now_ns();
    dcall c = { .d = d };
    int rc = check_local(d, f, args, n_args, combine, outs, n_outs);
    /* The root's counts size every rank's buffers. */
    int64_t counts[2] = { (int64_t)n_args, (int64_t)n_outs };
    MPI_Bcast(counts, 2, MPI_INT64_T, 0, d->comm);
    c.n_args = (size_t)counts[0];
    c.n_outs = (size_t)counts[1];
    if (!rc && (c.n_args != n_args || c.n_outs != n_outs))
        rc = weft_errorf(WEFT_EINVAL, ENTRY ": %zu args and %zu outs on rank %d, but %zu and %zu "
                         "on the root", n_args, n_outs, d->rank, c.n_args, c.n_outs);
    int alloc_rc = alloc_buffers(&c);
    rc = weft__dist_agree(d, ENTRY, rc ? rc : alloc_rc);
    if (rc)
        goto out;
    if (d->rank == 0)
        describe(&c, args, combine);
    MPI_Bcast(c.desc, (int)(c.n_args * sizeof *c.desc), MPI_BYTE, 0, d->comm);
    MPI_Bcast(c.combine, (int)c.n_outs, MPI_INT32_T, 0, d->comm);
    rc = weft__dist_agree(d, ENTRY, check_and_make_shards(&c, args, combine));
    if (rc)
        goto out;
    scatter(&c, args);
    weft__dist_span(d, "scatter", t0);

    uint64_t t1 = weft__dist_now_ns();
    rc = compute(&c, f);
    __atomic_fetch_add(&d->calls, 1, __ATOMIC_RELAXED);
    weft__dist_span(d, "compute", t1);

    uint64_t t2 = weft__dist_now_ns();
    rc = weft__dist_combine(d, rc, c.combine, c.local, outs, c.n_outs, c.gather, c.counts,
                            c.displs);
    weft__dist_span(d, "gather", t2);
out:
    dcall_free(&c);
    return rc;
}
