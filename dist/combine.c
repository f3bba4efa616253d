/* weft_dist_call's second half: every rank learns every rank's code and
 * output shapes from one allgather, so that all of them reach the same
 * verdict without further messages; then each output is joined along dim 0
 * (Allgatherv) or reduced (Allreduce) on every rank. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "dist/internal.h"

#define ENTRY "weft_dist_call"
/* Allreduce counts are int: bigger outputs go in pieces of this many. */
#define REDUCE_PIECE (1 << 30)

static const char *combine_name(int32_t c)
{
    return c == WEFT_DIST_SUM ? "WEFT_DIST_SUM" : c == WEFT_DIST_MEAN ? "WEFT_DIST_MEAN"
                                                                      : "WEFT_DIST_CONCAT";
}

/* Output j of rank k in the gathered records. */
static const int64_t *shape_of(const int64_t *gather, size_t n_outs, int k, size_t j)
{
    return gather + (size_t)k * weft__dist_record_words(n_outs) + 1 + j * WEFT__DIST_SHAPE_WORDS;
}

static void spec_text(const int64_t *shape, char *buf, size_t size)
{
    weft_spec s = { .dtype = (weft_dtype)shape[0], .rank = (int)shape[1] };
    memcpy(s.dims, shape + 2, sizeof s.dims);
    if (weft_spec_format(&s, buf, size) < 0)
        snprintf(buf, size, "?");
}

/* Whether two ranks' shapes of one output may be combined by c. */
static bool compatible(int32_t c, const int64_t *a, const int64_t *b)
{
    if (a[0] != b[0] || a[1] != b[1])
        return false;
    for (int64_t r = c == WEFT_DIST_CONCAT ? 1 : 0; r < a[1]; r++)
        if (a[2 + r] != b[2 + r])
            return false;
    return true;
}

/* The verdict on output j, from data every rank holds alike. */
static int judge_output(const weft_dist *d, const int32_t *combine, const int64_t *gather,
                        size_t n_outs, size_t j)
{
    const int64_t *first = shape_of(gather, n_outs, 0, j);
    char a[96], b[96];
    for (int k = 1; k < d->size; k++) {
        const int64_t *other = shape_of(gather, n_outs, k, j);
        if (compatible(combine[j], first, other))
            continue;
        spec_text(first, a, sizeof a);
        spec_text(other, b, sizeof b);
        return weft_errorf(first[0] != other[0] ? WEFT_EDTYPE : WEFT_ESHAPE,
                           ENTRY ": output %zu is %s on rank 0 but %s on rank %d (%s needs %s on "
                           "every rank)", j, a, b, k, combine_name(combine[j]),
                           combine[j] == WEFT_DIST_CONCAT ? "the same dtype and dims past dim 0"
                                                          : "the same dtype and shape");
    }
    weft_dtype dt = (weft_dtype)first[0];
    spec_text(first, a, sizeof a);
    if (combine[j] == WEFT_DIST_CONCAT) {
        if (first[1] < 1)
            return weft_errorf(WEFT_ESHAPE, ENTRY ": output %zu is a scalar (%s), which has no "
                               "dim 0 to join along (WEFT_DIST_SUM or WEFT_DIST_MEAN combine "
                               "scalars)", j, a);
        int64_t total = 0;
        size_t row = weft_dtype_size(dt);
        for (int64_t r = 1; r < first[1]; r++)
            row *= (size_t)first[2 + r];
        for (int k = 0; k < d->size; k++)
            total += shape_of(gather, n_outs, k, j)[2];
        if (total > INT_MAX || row > INT_MAX)
            return weft_errorf(WEFT_EINVAL, ENTRY ": output %zu joins %lld rows of %zu bytes; MPI "
                               "counts them in int", j, (long long)total, row);
    } else if (dt == WEFT_BOOL) {
        return weft_errorf(WEFT_EDTYPE, ENTRY ": output %zu is %s; %s needs a number dtype", j, a,
                           combine_name(combine[j]));
    } else if (combine[j] == WEFT_DIST_MEAN && dt != WEFT_F32 && dt != WEFT_F64) {
        return weft_errorf(WEFT_EDTYPE, ENTRY ": output %zu is %s; WEFT_DIST_MEAN needs f32 or "
                           "f64 (WEFT_DIST_SUM adds integers)", j, a);
    }
    return 0;
}

static MPI_Datatype mpi_type(weft_dtype dt)
{
    switch (dt) {
    case WEFT_I32: return MPI_INT32_T;
    case WEFT_I64: return MPI_INT64_T;
    case WEFT_F32: return MPI_FLOAT;
    case WEFT_F64: return MPI_DOUBLE;
    default:       return MPI_DATATYPE_NULL;   /* refused by judge_output */
    }
}

/* The result tensor of output j: dim 0 the sum of the ranks' for CONCAT. */
static int make_result(const weft_dist *d, const int32_t *combine, const int64_t *gather,
                       size_t n_outs, size_t j, weft_tensor **out)
{
    const int64_t *mine = shape_of(gather, n_outs, d->rank, j);
    int64_t dims[WEFT_MAX_RANK];
    memcpy(dims, mine + 2, sizeof dims);
    if (combine[j] == WEFT_DIST_CONCAT) {
        dims[0] = 0;
        for (int k = 0; k < d->size; k++)
            dims[0] += shape_of(gather, n_outs, k, j)[2];
    }
    return weft_tensor_create((weft_dtype)mine[0], (int)mine[1], dims, NULL, out);
}

static void join(weft_dist *d, const int64_t *gather, size_t n_outs, size_t j,
                 const weft_tensor *local, void *result, int *counts, int *displs)
{
    const int64_t *mine = shape_of(gather, n_outs, d->rank, j);
    size_t row = weft_dtype_size((weft_dtype)mine[0]);
    for (int64_t r = 1; r < mine[1]; r++)
        row *= (size_t)mine[2 + r];
    if (row == 0)
        return;
    /* The counts and displacements fit in int (judge_output checked). */
    int at = 0;
    for (int k = 0; k < d->size; k++) {
        counts[k] = (int)shape_of(gather, n_outs, k, j)[2];
        displs[k] = at;
        at += counts[k];
    }
    MPI_Datatype row_type;
    MPI_Type_contiguous((int)row, MPI_BYTE, &row_type);
    MPI_Type_commit(&row_type);
    MPI_Allgatherv(weft_tensor_data(local), counts[d->rank], row_type, result, counts, displs,
                   row_type, d->comm);
    MPI_Type_free(&row_type);
}

static void reduce(weft_dist *d, int32_t how, const weft_tensor *local, void *result)
{
    weft_dtype dt = weft_tensor_dtype(local);
    size_t elem = weft_dtype_size(dt);
    int64_t numel = weft_tensor_numel(local);
    const char *src = weft_tensor_data(local);
    char *dst = result;
    for (int64_t at = 0; at < numel; at += REDUCE_PIECE) {
        int count = (int)(numel - at < REDUCE_PIECE ? numel - at : REDUCE_PIECE);
        MPI_Allreduce(src + (size_t)at * elem, dst + (size_t)at * elem, count, mpi_type(dt),
                      MPI_SUM, d->comm);
    }
    if (how != WEFT_DIST_MEAN)
        return;
    for (int64_t i = 0; i < numel; i++) {
        if (dt == WEFT_F32)
            ((float *)result)[i] /= (float)d->size;
        else
            ((double *)result)[i] /= (double)d->size;
    }
}

static void release_all(weft_tensor **ts, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        weft_tensor_release(ts[j]);
        ts[j] = NULL;
    }
}

int weft__dist_combine(weft_dist *d, int rc, const int32_t *combine, weft_tensor **local,
                       weft_tensor **outs, size_t n_outs, int64_t *gather, int *counts,
                       int *displs)
{
    size_t words = weft__dist_record_words(n_outs);
    int64_t *mine = gather + (size_t)d->rank * words;
    memset(mine, 0, words * sizeof *mine);
    mine[0] = rc;
    for (size_t j = 0; !rc && j < n_outs; j++) {
        int64_t *s = mine + 1 + j * WEFT__DIST_SHAPE_WORDS;
        s[0] = weft_tensor_dtype(local[j]);
        s[1] = weft_tensor_rank(local[j]);
        memcpy(s + 2, weft_tensor_dims(local[j]), (size_t)s[1] * sizeof s[0]);
    }
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gather, (int)words, MPI_INT64_T, d->comm);
    for (int k = 0; k < d->size; k++) {
        if (gather[(size_t)k * words] != 0) {
            release_all(local, n_outs);
            return weft__dist_report(d, ENTRY, k, rc);
        }
    }
    for (size_t j = 0; j < n_outs; j++) {
        rc = judge_output(d, combine, gather, n_outs, j);
        if (rc) {
            release_all(local, n_outs);
            return rc;
        }
    }
    if (d->size == 1) {
        /* One rank: its outputs are the results (a mean over one rank is
         * the output itself). */
        for (size_t j = 0; j < n_outs; j++) {
            outs[j] = local[j];
            local[j] = NULL;
        }
        return 0;
    }
    for (size_t j = 0; !rc && j < n_outs; j++)
        rc = make_result(d, combine, gather, n_outs, j, &outs[j]);
    rc = weft__dist_agree(d, ENTRY, rc);
    if (rc) {
        release_all(outs, n_outs);
        release_all(local, n_outs);
        return rc;
    }
    for (size_t j = 0; j < n_outs; j++) {
        /* The result was created just now and nobody else holds it:
         * filling its buffer before it is shared is safe. */
        void *result = (void *)weft_tensor_data(outs[j]);
        if (combine[j] == WEFT_DIST_CONCAT)
            join(d, gather, n_outs, j, local[j], result, counts, displs);
        else
            reduce(d, combine[j], local[j], result);
    }
    release_all(local, n_outs);
    return 0;
}
