/* Running a scan_gradient node (SCAN_VJP, recorded by trace/grad_scan.c):
 * the scan's steps again, keeping each step's accumulators, then the steps
 * back through the vector-Jacobian product of fn, a program run once a
 * step.  Adjoints are f32 or f64 (weft's float dtypes).  The sum and row
 * helpers serve trace/map_vjp.c's map_gradient too. */
#include <string.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

static const char *const who = "weft_gradients (a scan's)";

typedef struct vjp_run {
    const struct weft__multi *m;
    bool reverse, fold;
    size_t n_acc, n_init, n_elems, n_caps, n_facc, n_args;
    weft_tensor *const *init, *const *elems, *const *caps, *const *adj_in;
    int64_t rows, first, steps;
    weft_tensor **hist;      /* (steps + 1) x n_acc accumulators */
    weft_tensor **adj_acc;   /* n_facc: the adjoints of the current step's results */
    weft_tensor **adj_elems; /* n_elems: float ones, zeros first; NULL for the others */
    weft_tensor **adj_caps;  /* n_caps: float ones; NULL for the others */
    weft_tensor **args;      /* a step's arguments: fn's n_args, then n_facc adjoints */
    weft_tensor **order;     /* the same in the program's order */
    weft_tensor **res;       /* the program's results */
} vjp_run;

static bool is_float(const weft_tensor *t)
{
    return weft__dtype_is_float(t->dtype);
}

/* z = a + b elementwise (the same shape, f32 or f64); z may be a or b. */
static void add(const weft_tensor *a, const weft_tensor *b, weft_tensor *z)
{
    if (a->dtype == WEFT_F32) {
        const float *x = a->data, *y = b->data;
        float *o = weft__tensor_mut(z);
        for (int64_t i = 0; i < a->numel; i++)
            o[i] = x[i] + y[i];
    } else {
        const double *x = a->data, *y = b->data;
        double *o = weft__tensor_mut(z);
        for (int64_t i = 0; i < a->numel; i++)
            o[i] = x[i] + y[i];
    }
}

static bool sole_reference(const weft_tensor *t)
{
    return __atomic_load_n(&t->refs, __ATOMIC_ACQUIRE) == 1;
}

/* The sum goes into whichever operand no one else holds (a buffer is
 * never shared between tensors), else into a new tensor: summing a
 * capture's adjoint over many rows allocates nothing. */
int weft__vjp_add_into(weft_tensor **acc, weft_tensor *v)
{
    if (!*acc) {
        *acc = v;
        return 0;
    }
    weft_tensor *sum = sole_reference(*acc) ? *acc : sole_reference(v) ? v : NULL;
    int rc = sum ? 0 : weft__tensor_new((*acc)->dtype, (*acc)->rank, (*acc)->dims, &sum);
    if (rc == 0)
        add(*acc, v, sum);
    if (sum != v)
        weft_tensor_release(v);
    if (sum != *acc)
        weft_tensor_release(*acc);
    *acc = sum;
    return rc;
}

int weft__vjp_zeros_like(const weft_tensor *t, weft_tensor **out)
{
    return weft_tensor_create(t->dtype, t->rank, t->dims, NULL, out);
}

/* The row step i reads. */
static int64_t row_of_step(const vjp_run *v, int64_t i)
{
    int64_t r = v->first + i;
    return v->reverse ? v->rows - 1 - r : r;
}

/* fn's arguments for step i into v->args: its accumulators, row r of each
 * elems, the captures. */
static int step_args(vjp_run *v, int64_t i, int64_t r)
{
    if (v->n_acc)
        memcpy(v->args, v->hist + (size_t)i * v->n_acc, v->n_acc * sizeof *v->args);
    for (size_t e = 0; e < v->n_elems; e++) {
        int rc = weft__tensor_row(v->elems[e], r, &v->args[v->n_acc + e]);
        if (rc < 0)
            return rc;
    }
    if (v->n_caps)
        memcpy(v->args + v->n_acc + v->n_elems, v->caps, v->n_caps * sizeof *v->args);
    return 0;
}

static void drop_rows(vjp_run *v)
{
    weft__release_tensors(v->args + v->n_acc, v->n_elems);
}

static int forward(vjp_run *v)
{
    const weft__callee_ops *ops = weft__callee_of(v->m->fn[0])->ops;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < v->n_acc; k++)
        rc = v->init ? (v->hist[k] = weft_tensor_retain(v->init[k]), 0)
                     : weft__tensor_row(v->elems[k], v->reverse ? v->rows - 1 : 0, &v->hist[k]);
    for (int64_t i = 0; rc == 0 && i < v->steps; i++) {
        if ((rc = step_args(v, i, row_of_step(v, i))) == 0)
            rc = ops->invoke_n(v->m->concrete[0], v->args, v->n_args,
                               v->hist + (size_t)(i + 1) * v->n_acc, v->n_acc);
        drop_rows(v);
    }
    return rc;
}

/* Row r of each float accumulator's stacked adjoint added into out[]. */
static int add_stacked_row(vjp_run *v, int64_t r, weft_tensor **out)
{
    for (size_t j = 0; j < v->n_facc; j++) {
        weft_tensor *row = NULL;
        int rc = weft__tensor_row(v->adj_in[j], r, &row);
        if (rc < 0 || (rc = weft__vjp_add_into(&out[j], row)) < 0)
            return rc;
    }
    return 0;
}

/* Each elems' adjoint row is written once: by its step or, without init,
 * as the first accumulators' row. */
void weft__vjp_put_row(weft_tensor *dst, int64_t r, const weft_tensor *t)
{
    size_t bytes = t->nbytes;
    if (bytes)
        memcpy((char *)weft__tensor_mut(dst) + (size_t)r * bytes, t->data, bytes);
}

/* The product on fn's arguments in v->args and the output adjoints after
 * them (n_facc, released here), in the program's order, into v->res; the
 * rows in v->args are released too. */
static int run_product(vjp_run *v, int rc)
{
    weft_tensor **out_adj = v->args + v->n_args;
    size_t n_float = weft__grad_order_tensors(v->args, v->n_args, v->order);
    memcpy(v->order + v->n_args, out_adj, v->n_facc * sizeof *out_adj);
    if (rc == 0)
        rc = weft__program_run(v->m->vjp, v->order, v->n_args + v->n_facc, v->res, n_float);
    weft__release_tensors(out_adj, v->n_facc);
    drop_rows(v);
    return rc;
}

/* The product's results from place got on: each float row's adjoint into
 * row r of its elems' adjoint, each float capture's added to its sum. */
static int take_rows_and_caps(vjp_run *v, int64_t r, size_t got)
{
    int rc = 0;
    for (size_t e = 0; e < v->n_elems; e++)
        if (v->adj_elems[e]) {
            weft__vjp_put_row(v->adj_elems[e], r, v->res[got]);
            weft_tensor_release(v->res[got]);
            v->res[got++] = NULL;
        }
    for (size_t c = 0; rc == 0 && c < v->n_caps; c++)
        if (is_float(v->caps[c])) {
            rc = weft__vjp_add_into(&v->adj_caps[c], v->res[got]);
            v->res[got++] = NULL;
        }
    return rc;
}

/* Step i back: the adjoints of its accumulators, rows and captures. */
static int back_step(vjp_run *v, int64_t i)
{
    int64_t r = row_of_step(v, i);
    int rc = step_args(v, i, r);
    weft_tensor **out_adj = v->args + v->n_args;
    for (size_t j = 0; rc == 0 && j < v->n_facc; j++)
        out_adj[j] = weft_tensor_retain(v->adj_acc[j]);
    if (rc == 0 && !v->fold)
        rc = add_stacked_row(v, r, out_adj);
    if ((rc = run_product(v, rc)) < 0)
        return rc;
    /* The results come in fn's argument order, floats only. */
    size_t got = 0;
    for (size_t k = 0; k < v->n_acc; k++)
        if (is_float(v->hist[k])) {
            weft_tensor_release(v->adj_acc[got]);
            v->adj_acc[got] = v->res[got];
            v->res[got++] = NULL;
        }
    return take_rows_and_caps(v, r, got);
}

/* The adjoints start: the accumulators' (a fold's given, a scan's zero),
 * the float elems' and captures' zeros. */
static int start_adjoints(vjp_run *v)
{
    int rc = 0;
    for (size_t k = 0, j = 0; rc == 0 && k < v->n_acc; k++)
        if (is_float(v->hist[k])) {
            if (v->fold)
                v->adj_acc[j] = weft_tensor_retain(v->adj_in[j]);
            else
                rc = weft__vjp_zeros_like(v->hist[k], &v->adj_acc[j]);
            j++;
        }
    for (size_t e = 0; rc == 0 && e < v->n_elems; e++)
        if (is_float(v->elems[e]))
            rc = weft__vjp_zeros_like(v->elems[e], &v->adj_elems[e]);
    for (size_t c = 0; rc == 0 && c < v->n_caps; c++)
        if (is_float(v->caps[c]))
            rc = weft__vjp_zeros_like(v->caps[c], &v->adj_caps[c]);
    return rc;
}

/* Without init the accumulators started as a row of elems: that row gets
 * their adjoint (and, for a scan, its own stacked row's, the row being
 * the first result). */
static int first_row_back(vjp_run *v)
{
    int64_t r0 = v->reverse ? v->rows - 1 : 0;
    weft_tensor **tmp = v->res;
    for (size_t j = 0; j < v->n_facc; j++)
        tmp[j] = weft_tensor_retain(v->adj_acc[j]);
    int rc = v->fold ? 0 : add_stacked_row(v, r0, tmp);
    for (size_t k = 0, j = 0; rc == 0 && k < v->n_acc; k++)
        if (v->adj_elems[k])
            weft__vjp_put_row(v->adj_elems[k], r0, tmp[j++]);
    weft__release_tensors(tmp, v->n_facc);
    return rc;
}

/* The node's outputs: the float init's, elems' and captures' adjoints. */
static void hand_out(vjp_run *v, weft_tensor **outs)
{
    size_t o = 0;
    for (size_t j = 0; v->init && j < v->n_facc; j++, o++) {
        outs[o] = v->adj_acc[j];
        v->adj_acc[j] = NULL;
    }
    for (size_t e = 0; e < v->n_elems; e++)
        if (v->adj_elems[e]) {
            outs[o++] = v->adj_elems[e];
            v->adj_elems[e] = NULL;
        }
    for (size_t c = 0; c < v->n_caps; c++)
        if (v->adj_caps[c]) {
            outs[o++] = v->adj_caps[c];
            v->adj_caps[c] = NULL;
        }
}

static int run(vjp_run *v, weft_tensor **outs)
{
    int rc = forward(v);
    if (rc == 0)
        rc = start_adjoints(v);
    for (int64_t i = v->steps; rc == 0 && i-- > 0;)
        rc = back_step(v, i);
    if (rc == 0 && !v->init)
        rc = first_row_back(v);
    if (rc == 0)
        hand_out(v, outs);
    return rc;
}

int weft__scan_vjp_run(weft_runtime *rt, const weft__node *node, weft_tensor *const *in,
                       weft_tensor **outs)
{
    (void)rt;
    const struct weft__multi *m = node->attr.multi.m;
    vjp_run v = { .m = m, .reverse = m->scan_mode & WEFT__SCAN_REVERSE,
                  .fold = m->scan_mode & WEFT__SCAN_FOLD, .n_acc = m->n_acc,
                  .n_elems = m->n_mapped };
    v.n_init = m->scan_mode & WEFT__SCAN_NO_INIT ? 0 : v.n_acc;
    v.init = v.n_init ? in : NULL;
    v.elems = in + v.n_init;
    for (size_t k = 0; k < v.n_acc; k++)
        v.n_facc += is_float(v.init ? v.init[k] : v.elems[k]);
    v.n_caps = node->n_in - v.n_init - v.n_elems - v.n_facc;
    v.caps = v.elems + v.n_elems;
    v.adj_in = v.caps + v.n_caps;
    v.n_args = v.n_acc + v.n_elems + v.n_caps;
    v.rows = v.elems[0]->rank > 0 ? v.elems[0]->dims[0] : 0;
    v.first = v.init ? 0 : 1;
    v.steps = v.rows > v.first ? v.rows - v.first : 0;
    if (!v.init && v.rows == 0)
        return weft__errorf(WEFT_EINVAL, "%s: elems have no rows and there is no init",
                            who);
    size_t n_hist = (size_t)(v.steps + 1) * v.n_acc;
    size_t n_all = n_hist + v.n_facc + v.n_elems + v.n_caps +
                   3 * (v.n_args + v.n_facc) + 1;
    weft_tensor **all = weft__calloc(n_all, sizeof *all);
    if (!all)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory", who);
    v.hist = all;
    v.adj_acc = v.hist + n_hist;
    v.adj_elems = v.adj_acc + v.n_facc;
    v.adj_caps = v.adj_elems + v.n_elems;
    v.args = v.adj_caps + v.n_caps;
    v.order = v.args + v.n_args + v.n_facc;
    v.res = v.order + v.n_args + v.n_facc;
    int rc = run(&v, outs);
    weft__release_tensors(v.hist, n_hist);
    weft__release_tensors(v.adj_acc, v.n_facc);
    weft__release_tensors(v.adj_elems, v.n_elems);
    weft__release_tensors(v.adj_caps, v.n_caps);
    weft__release_tensors(v.res, v.n_args + v.n_facc);
    weft__free(all);
    return rc;
}
