/* Scans, folds and maps unrolled into one weft_call per row, for a
 * gradient's tape (trace/grad.c): the tape then holds only the ops of the
 * function, each with its gradient rule, where a SCAN or MAP node has
 * none.  Used only while the calling thread traces a tape and only when
 * the row count is known then; the results are those of the node (each
 * row's ops are the function's own), not always to the last bit. */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

/* Row r of v (dim 0 removed). */
static weft_value *row_of(weft_ctx *cx, weft_value *v, int64_t r)
{
    int rank = weft__value_spec(v)->rank;
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        end[d] = WEFT_END;
    begin[0] = r;
    end[0] = r + 1;
    return weft_squeeze(cx, weft_slice(cx, v, begin, end, NULL), 0);
}

/* fn on row r of every elems (after n_lead leading arguments already in
 * args), the captures after them; results into res[0..n_res). */
static int call_row(weft_ctx *cx, weft_function *fn, weft_value **args, size_t n_lead,
                    weft_value *const *elems, size_t n_elems, weft_value *const *caps,
                    size_t n_caps, int64_t r, weft_value **res, size_t n_res)
{
    for (size_t e = 0; e < n_elems; e++)
        if (!(args[n_lead + e] = row_of(cx, elems[e], r)))
            return weft_ctx_status(cx);
    for (size_t c = 0; c < n_caps; c++)
        args[n_lead + n_elems + c] = caps[c];
    return weft_call(cx, fn, args, n_lead + n_elems + n_caps, res, n_res);
}

int weft__unroll_rows(weft_ctx *cx, weft_function *fn, unsigned mode, weft_value *const *init,
                      size_t n_acc, weft_value *const *elems, size_t n_elems,
                      weft_value *const *caps, size_t n_caps, int64_t rows, weft_value **outs,
                      size_t n_outs)
{
    /* A map is a scan without accumulators: n_outs results a row. */
    bool map = n_acc == 0, fold = mode & WEFT__SCAN_FOLD, reverse = mode & WEFT__SCAN_REVERSE;
    size_t n_lead = n_acc, n_res = map ? n_outs : n_acc;
    size_t n_args = n_lead + n_elems + n_caps;
    weft_value **args = weft__calloc(n_args + n_res + 1, sizeof *args);
    weft_value **rowwise = weft__calloc((size_t)rows * n_res + 1, sizeof *rowwise);
    int rc = 0;
    if (!args || !rowwise) {
        rc = weft__ctx_failf(cx, WEFT_ENOMEM, "weft_gradients: out of memory");
        goto done;
    }
    weft_value **res = args + n_args;
    int64_t start = 0;
    for (size_t k = 0; k < n_acc; k++)
        args[k] = init ? init[k] : row_of(cx, elems[k], reverse ? rows - 1 : 0);
    if (!map && !init) {
        /* Without init the first row is its own result. */
        start = 1;
        for (size_t k = 0; k < n_acc; k++)
            rowwise[(size_t)(reverse ? rows - 1 : 0) * n_res + k] = args[k];
    }
    for (int64_t i = start; i < rows && rc == 0; i++) {
        int64_t r = reverse ? rows - 1 - i : i;
        rc = call_row(cx, fn, args, n_lead, elems, n_elems, caps, n_caps, r, res, n_res);
        for (size_t k = 0; rc == 0 && k < n_res; k++) {
            rowwise[(size_t)r * n_res + k] = res[k];
            if (!map)
                args[k] = res[k];
        }
    }
    for (size_t k = 0; rc == 0 && k < n_res; k++) {
        if (fold) {
            outs[k] = args[k];
            continue;
        }
        weft_value **column = weft__calloc((size_t)rows + 1, sizeof *column);
        if (!column) {
            rc = weft__ctx_failf(cx, WEFT_ENOMEM, "weft_gradients: out of memory");
            break;
        }
        for (int64_t r = 0; r < rows; r++)
            column[r] = rowwise[(size_t)r * n_res + k];
        outs[k] = weft_stack(cx, column, (size_t)rows, 0);
        weft__free(column);
        rc = outs[k] ? 0 : weft_ctx_status(cx);
    }
done:
    weft__free(args);
    weft__free(rowwise);
    return rc;
}
