/* Running a map_gradient node (MAP_VJP, recorded by trace/grad_scan.c):
 * the vector-Jacobian product of fn, a program, once a row with that row's
 * output adjoints.  Rows are independent, so they run as the forward map
 * does, through weft_parallel_map with the map's parallel_iterations, an
 * iteration (and a timeline span) a block of rows.  Each row's elems
 * adjoints go into their own rows; the captures' adjoints are summed
 * within fixed blocks of rows and the blocks' sums in block order, so the
 * bits do not depend on the worker count. */
#include <pthread.h>
#include <string.h>

#include "base/base.h"
#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

/* At most this many blocks: bounds the captures' partial sums kept. */
#define MAX_BLOCKS 64
#define STACK_SLOTS 48

static const char *const who = "weft_gradients (a map's)";

typedef struct map_back {
    weft_runtime *rt;
    bool profiling;
    const struct weft__multi *m;
    size_t n_elems, n_caps, n_fout, n_args;
    weft_tensor *const *elems, *const *caps, *const *adj_in;
    int64_t rows, block_rows;
    weft_tensor **adj_elems;  /* n_elems: the float ones' adjoints, NULL for others */
    weft_tensor **partials;   /* n_blocks x n_caps: a block's float captures' sums
                                 (no rows: n_caps, for the zeros) */

    pthread_mutex_t lock;     /* the first failure below */
    bool failed;
    int err;
    char msg[WEFT__ERRMSG_SIZE];
} map_back;

static bool is_float(const weft_tensor *t)
{
    return weft__dtype_is_float(t->dtype);
}

/* Keeps the first failure's code and message (a worker's thread-local
 * message would not reach the caller) and returns code. */
static int back_fail(map_back *b, int code)
{
    pthread_mutex_lock(&b->lock);
    if (!b->failed) {
        b->failed = true;
        b->err = code;
        snprintf(b->msg, sizeof b->msg, "%s", weft_errmsg());
    }
    pthread_mutex_unlock(&b->lock);
    return code;
}

/* Row r back, with scratch slots (3 x (n_args + n_fout)): fn's arguments
 * (row r of each elems, the captures) and the row's output adjoints, in
 * the program's order; its results are the float arguments' adjoints. */
static int row_back(map_back *b, int64_t r, weft_tensor **partial, weft_tensor **slots)
{
    size_t n_all = b->n_args + b->n_fout;
    weft_tensor **args = slots, **order = slots + n_all, **res = order + n_all;
    int rc = 0;
    for (size_t e = 0; rc == 0 && e < b->n_elems; e++)
        rc = weft__tensor_row(b->elems[e], r, &args[e]);
    memcpy(args + b->n_elems, b->caps, b->n_caps * sizeof *args);
    for (size_t j = 0; rc == 0 && j < b->n_fout; j++)
        rc = weft__tensor_row(b->adj_in[j], r, &args[b->n_args + j]);
    size_t n_float = weft__grad_order_tensors(args, b->n_args, order);
    memcpy(order + b->n_args, args + b->n_args, b->n_fout * sizeof *args);
    if (rc == 0)
        rc = weft__program_run(b->m->vjp, order, n_all, res, n_float);
    weft__release_tensors(args, b->n_elems);
    weft__release_tensors(args + b->n_args, b->n_fout);
    if (rc < 0)
        return rc;
    size_t got = 0;
    for (size_t e = 0; e < b->n_elems; e++)
        if (b->adj_elems[e]) {
            weft__vjp_put_row(b->adj_elems[e], r, res[got]);
            weft_tensor_release(res[got++]);
        }
    for (size_t c = 0; c < b->n_caps; c++)
        if (is_float(b->caps[c])) {
            int rc2 = weft__vjp_add_into(&partial[c], res[got++]);
            rc = rc < 0 ? rc : rc2;
        }
    return rc;
}

/* Block i's rows in order (one weft_parallel_map iteration). */
static int block_back(size_t i, void *ctx)
{
    map_back *b = ctx;
    size_t n_slots = 3 * (b->n_args + b->n_fout);
    weft_tensor *stack[STACK_SLOTS];
    weft_tensor **slots = n_slots <= STACK_SLOTS ? stack : weft__calloc(n_slots, sizeof *slots);
    if (!slots)
        return back_fail(b, weft__errorf(WEFT_ENOMEM, "%s: out of memory", who));
    memset(slots, 0, n_slots * sizeof *slots);
    uint64_t t0 = b->profiling ? weft__now_ns() : 0;
    int64_t first = (int64_t)i * b->block_rows, end = first + b->block_rows;
    if (end > b->rows)
        end = b->rows;
    int rc = 0;
    for (int64_t r = first; rc == 0 && r < end; r++)
        rc = row_back(b, r, b->partials + i * b->n_caps, slots);
    if (slots != stack)
        weft__free(slots);
    if (b->profiling && rc == 0) {
        char detail[48];
        snprintf(detail, sizeof detail, "rows %lld-%lld", (long long)first, (long long)end - 1);
        weft__profile_span(b->rt, "map", "map_gradient", t0, weft__now_ns(), detail);
    }
    return rc < 0 ? back_fail(b, rc) : 0;
}

/* Each float capture's adjoint into block 0's slot: the blocks' sums added
 * in block order, zeros when there are no rows. */
static int sum_blocks(map_back *b, size_t n_blocks)
{
    int rc = 0;
    for (size_t c = 0; rc == 0 && c < b->n_caps; c++) {
        if (!is_float(b->caps[c]))
            continue;
        weft_tensor **sum = &b->partials[c];
        for (size_t k = 1; rc == 0 && k < n_blocks; k++) {
            rc = weft__vjp_add_into(sum, b->partials[k * b->n_caps + c]);
            b->partials[k * b->n_caps + c] = NULL;
        }
        if (rc == 0 && !*sum)
            rc = weft__vjp_zeros_like(b->caps[c], sum);
    }
    return rc;
}

/* The node's outputs: the float elems' adjoints, then the captures'. */
static void hand_out(map_back *b, weft_tensor **outs)
{
    size_t o = 0;
    for (size_t e = 0; e < b->n_elems; e++)
        if (b->adj_elems[e]) {
            outs[o++] = b->adj_elems[e];
            b->adj_elems[e] = NULL;
        }
    for (size_t c = 0; c < b->n_caps; c++)
        if (is_float(b->caps[c])) {
            outs[o++] = b->partials[c];
            b->partials[c] = NULL;
        }
}

static int run(map_back *b, size_t n_blocks, weft_tensor **outs)
{
    int rc = 0;
    for (size_t e = 0; rc == 0 && e < b->n_elems; e++)
        if (is_float(b->elems[e]))
            rc = weft__vjp_zeros_like(b->elems[e], &b->adj_elems[e]);
    if (rc == 0 && n_blocks)
        rc = weft_parallel_map(b->rt, n_blocks, b->m->parallel_iterations, block_back, b);
    if (b->failed)
        return weft__errorf(b->err, "%s", b->msg);
    if (rc == 0 && (rc = sum_blocks(b, n_blocks)) == 0)
        hand_out(b, outs);
    return rc;
}

int weft__map_vjp_run(weft_runtime *rt, const weft__node *node, weft_tensor *const *in,
                      weft_tensor **outs)
{
    const struct weft__multi *m = node->attr.multi.m;
    map_back b = { .rt = rt, .profiling = weft__profiling(rt), .m = m,
                   .n_elems = m->n_mapped, .n_fout = m->n_acc, .elems = in };
    b.n_caps = node->n_in - b.n_elems - b.n_fout;
    b.caps = in + b.n_elems;
    b.adj_in = b.caps + b.n_caps;
    b.n_args = b.n_elems + b.n_caps;
    b.rows = b.elems[0]->rank > 0 ? b.elems[0]->dims[0] : 0;
    size_t n_blocks = b.rows < MAX_BLOCKS ? (size_t)b.rows : MAX_BLOCKS;
    b.block_rows = n_blocks ? (b.rows + (int64_t)n_blocks - 1) / (int64_t)n_blocks : 0;
    if (b.block_rows)
        n_blocks = (size_t)((b.rows + b.block_rows - 1) / b.block_rows);
    size_t n_partials = (n_blocks ? n_blocks : 1) * b.n_caps;
    weft_tensor **all = weft__calloc(b.n_elems + n_partials + 1, sizeof *all);
    if (!all)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory", who);
    b.adj_elems = all;
    b.partials = all + b.n_elems;
    pthread_mutex_init(&b.lock, NULL);
    int rc = run(&b, n_blocks, outs);
    pthread_mutex_destroy(&b.lock);
    weft__release_tensors(b.adj_elems, b.n_elems);
    weft__release_tensors(b.partials, n_partials);
    weft__free(all);
    return rc;
}
