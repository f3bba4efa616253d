/* The ops whose result size the values decide (argwhere, boolean_mask,
 * unique, unique_with_counts, dynamic_partition, dynamic_stitch) against
 * references computed here: eagerly
 * and traced on 1, 2 and 4 workers (the same results everywhere), traced
 * once for every count, folded on constants, feeding later ops, and their
 * errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "suite_runtimes.h"

TestSuite(ops_select, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef enum sel_op {
    ARGWHERE, MASK, UNIQUE, UNIQUE_COUNTS, MASKED_MEAN, SEGMENT, BINCOUNT, BINCOUNT_W,
    COUNT_NONZERO, SEARCH, SEQ_MASK, PARTITION, STITCH
} sel_op;

typedef struct sel_case {
    sel_op op;
    int axis;                  /* MASK, COUNT_NONZERO (-99: every axis) */
    weft_reduction r;          /* SEGMENT */
    int64_t minlength, maxlength;  /* BINCOUNT; SEQ_MASK: maxlen in maxlength */
    weft_dtype dtype;          /* BINCOUNT, SEQ_MASK */
    bool right;                /* SEARCH */
} sel_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const sel_case *c = user;
    switch (c->op) {
    case ARGWHERE:
        outs[0] = weft_argwhere(cx, a[0]);
        break;
    case MASK:
        outs[0] = weft_boolean_mask(cx, a[0], a[1], c->axis);
        break;
    case UNIQUE:
        return weft_unique(cx, a[0], outs);
    case UNIQUE_COUNTS:
        return weft_unique_with_counts(cx, a[0], outs);
    case SEGMENT:
        outs[0] = weft_segment(cx, c->r, a[0], a[1]);
        break;
    case BINCOUNT:
    case BINCOUNT_W:
        outs[0] = weft_bincount(cx, a[0], c->op == BINCOUNT_W ? a[1] : NULL, c->minlength,
                                c->maxlength, c->dtype);
        break;
    case COUNT_NONZERO:
        outs[0] = weft_count_nonzero(cx, a[0], c->axis == -99 ? NULL : &c->axis,
                                     c->axis == -99 ? 0 : 1, false);
        break;
    case SEARCH:
        outs[0] = weft_searchsorted(cx, a[0], a[1], c->right);
        break;
    case SEQ_MASK:
        outs[0] = weft_sequence_mask(cx, a[0], c->maxlength, c->dtype);
        break;
    case PARTITION:
        return weft_dynamic_partition(cx, a[0], a[1], 3, outs);
    case STITCH: /* two parts: indices a[0], a[1]; data a[2], a[3] */
        outs[0] = weft_dynamic_stitch(cx, a, a + 2, 2);
        break;
    case MASKED_MEAN: {
        /* The mean of the positive elements, and how many there are: later
         * ops take the masked vector's unknown length. */
        weft_value *pos = weft_boolean_mask(cx, a[0], weft_gt(cx, a[0], weft_const_f64(cx, 0)), 0);
        outs[0] = weft_mean(cx, pos, 0);
        outs[1] = weft_shape(cx, pos);
        break;
    }
    }
    return weft_ctx_status(cx);
}

static uint32_t outs_of(sel_op op)
{
    return op == UNIQUE_COUNTS || op == PARTITION ? 3 : op == UNIQUE || op == MASKED_MEAN ? 2 : 1;
}

/* c on args[0..n_args) on runtime r, eagerly or traced (sig: the input
 * signature, may be NULL). */
static int call_on(weft_runtime *r, const sel_case *c, weft_tensor *const *args, size_t n_args,
                   const weft_spec *sig, bool eager, weft_tensor **outs)
{
    weft_function_desc d = { .name = "sel", .body = body, .user = (void *)c,
                             .n_args = (uint32_t)n_args, .n_outs = outs_of(c->op),
                             .input_signature = sig, .flags = eager ? WEFT_RUN_EAGERLY : 0 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(r, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a[4];
    cr_assert(n_args <= 4);
    for (size_t i = 0; i < n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    for (uint32_t k = 0; k < d.n_outs; k++)
        outs[k] = NULL;
    int rc = weft_function_call(f, a, n_args, outs, d.n_outs);
    weft_function_destroy(&f);
    return rc;
}

static void release_all(weft_tensor **t, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        weft_tensor_release(t[k]);
}

/* Runs c eagerly and traced on every runtime and checks that each result
 * equals want[k] (dtype, shape, bytes). */
static void check_everywhere(const sel_case *c, weft_tensor *const *args, size_t n_args,
                             weft_tensor *const *want, const char *what)
{
    uint32_t n_outs = outs_of(c->op);
    for (int k = 0; k < N_RT; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *got[3];
            cr_assert_eq(call_on(rts[k], c, args, n_args, NULL, eager, got), 0, "%s: %s", what,
                         weft_errmsg());
            for (uint32_t o = 0; o < n_outs; o++) {
                const weft_tensor *g = got[o], *w = want[o];
                cr_assert_eq(weft_tensor_dtype(g), weft_tensor_dtype(w), "%s: out %u dtype", what,
                             o);
                cr_assert_eq(weft_tensor_rank(g), weft_tensor_rank(w), "%s: out %u rank", what,
                             o);
                for (int d = 0; d < weft_tensor_rank(w); d++)
                    cr_assert_eq(weft_tensor_dims(g)[d], weft_tensor_dims(w)[d],
                                 "%s: out %u dim %d is %lld, not %lld (%u workers, %s)", what,
                                 o, d, (long long)weft_tensor_dims(g)[d],
                                 (long long)weft_tensor_dims(w)[d], rt_workers[k],
                                 eager ? "eager" : "traced");
                size_t bytes = (size_t)weft_tensor_numel(w) *
                               weft_dtype_size(weft_tensor_dtype(w));
                cr_assert(memcmp(weft_tensor_data(g), weft_tensor_data(w), bytes) == 0,
                          "%s: out %u differs (%u workers, %s)", what, o, rt_workers[k],
                          eager ? "eager" : "traced");
            }
            release_all(got, n_outs);
        }
}

static weft_tensor *tensor_of(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

/* A pseudo-random mask of n bytes, about `percent` of them true. */
static uint8_t *random_mask(int64_t n, unsigned percent, unsigned seed)
{
    uint8_t *m = malloc((size_t)n + 1);
    cr_assert_not_null(m);
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        m[i] = (s >> 33) % 100 < percent;
    }
    return m;
}

/* ---- argwhere ------------------------------------------------------------ */

/* The reference: coordinates of the nonzero elements of a mask of dims. */
static weft_tensor *argwhere_ref(const uint8_t *nz, int rank, const int64_t *dims)
{
    int64_t n = test_numel(rank, dims), count = 0;
    for (int64_t i = 0; i < n; i++)
        count += nz[i] != 0;
    int64_t *c = malloc(sizeof *c * (size_t)(count * rank + 1)), k = 0;
    cr_assert_not_null(c);
    for (int64_t i = 0; i < n; i++) {
        if (!nz[i])
            continue;
        int64_t rest = i;
        for (int d = rank; d-- > 0;) {
            c[k * rank + d] = rest % dims[d];
            rest /= dims[d];
        }
        k++;
    }
    weft_tensor *t = tensor_of(WEFT_I64, 2, DIMS(count, rank), c);
    free(c);
    return t;
}

Test(ops_select, argwhere_gives_coordinates_in_order)
{
    /* Ranks 0-3, sizes that split into chunks on 2 and 4 workers, densities
     * from none to all. */
    const struct { int rank; int64_t dims[3]; unsigned percent; } shapes[] = {
        { 0, { 0 }, 100 }, { 0, { 0 }, 0 }, { 1, { 7 }, 50 }, { 1, { 300000 }, 30 },
        { 2, { 600, 501 }, 50 }, { 3, { 40, 50, 70 }, 3 }, { 2, { 513, 400 }, 0 },
        { 2, { 257, 300 }, 100 }, { 2, { 0, 5 }, 50 },
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rank = shapes[s].rank;
        const int64_t *dims = shapes[s].dims;
        int64_t n = test_numel(rank, dims);
        uint8_t *m = random_mask(n, shapes[s].percent, (unsigned)s);
        weft_tensor *want = argwhere_ref(m, rank, dims);
        sel_case c = { .op = ARGWHERE };
        weft_tensor *b = tensor_of(WEFT_BOOL, rank, dims, m);
        check_everywhere(&c, &b, 1, &want, "argwhere of bool");
        weft_tensor_release(b);
        /* The same mask as f32 values: nonzero where the mask is true. */
        float *v = malloc(sizeof *v * (size_t)(n + 1));
        cr_assert_not_null(v);
        for (int64_t i = 0; i < n; i++)
            v[i] = m[i] ? (i % 3 ? -1.5f : NAN) : (i % 2 ? -0.0f : 0.0f);
        weft_tensor *f = tensor_of(WEFT_F32, rank, dims, v);
        check_everywhere(&c, &f, 1, &want, "argwhere of f32 (NaN nonzero, -0.0 zero)");
        weft_tensor_release(f);
        free(v);
        weft_tensor_release(want);
        free(m);
    }
}

Test(ops_select, argwhere_of_integers)
{
    int64_t v[6] = { 0, 5, 0, -1, INT64_MIN, 0 };
    weft_tensor *a = tensor_of(WEFT_I64, 2, DIMS(2, 3), v);
    weft_tensor *want = tensor_of(WEFT_I64, 2, DIMS(3, 2), (const int64_t[]){ 0, 1, 1, 0, 1, 1 });
    sel_case c = { .op = ARGWHERE };
    check_everywhere(&c, &a, 1, &want, "argwhere of i64");
    weft_tensor_release(a);
    weft_tensor_release(want);
}

/* ---- boolean_mask -------------------------------------------------------- */

/* The reference: tensor [outer, masked, inner] of i32 counting up, rows of
 * the masked dims kept where m is true. */
static weft_tensor *mask_ref(const int32_t *x, const uint8_t *m, int64_t outer, int64_t masked,
                             int64_t inner, int rank, const int64_t *out_dims, int axis)
{
    int64_t count = 0;
    for (int64_t j = 0; j < masked; j++)
        count += m[j];
    int32_t *r = malloc(sizeof *r * (size_t)(outer * count * inner + 1)), k = 0;
    cr_assert_not_null(r);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < masked; j++)
            if (m[j])
                for (int64_t i = 0; i < inner; i++)
                    r[k++] = x[(o * masked + j) * inner + i];
    int64_t dims[WEFT_MAX_RANK];
    memcpy(dims, out_dims, sizeof(int64_t) * (size_t)rank);
    dims[axis] = count;
    weft_tensor *t = tensor_of(WEFT_I32, rank, dims, r);
    free(r);
    return t;
}

Test(ops_select, boolean_mask_keeps_the_true_slices)
{
    /* tensor dims, mask rank and axis; the result dims with the count at
     * axis filled in by the reference. */
    const struct { int rank; int64_t dims[4]; int k, axis; unsigned percent; } cases[] = {
        { 1, { 10 }, 1, 0, 50 },
        { 1, { 200000 }, 1, 0, 40 },
        { 2, { 3000, 64 }, 1, 0, 50 },           /* rows of 64 elements */
        { 2, { 64, 3000 }, 1, 1, 50 },           /* along the last axis */
        { 3, { 4, 50, 60 }, 2, 1, 30 },          /* a 2-D mask in the middle */
        { 3, { 30, 40, 7 }, 2, 0, 60 },          /* a 2-D mask first, rows of 7 */
        { 3, { 2, 3, 4 }, 1, -1, 50 },           /* a negative axis */
        { 2, { 50, 40 }, 1, 0, 0 },              /* nothing true */
        { 2, { 50, 40 }, 2, 0, 100 },            /* everything */
        { 2, { 300, 2 }, 1, 0, 50 },             /* rows of 8, 16, 32 and 64 bytes */
        { 2, { 300, 4 }, 1, 0, 50 },
        { 2, { 300, 8 }, 1, 0, 50 },
        { 2, { 300, 16 }, 1, 0, 50 },
    };
    for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++) {
        int rank = cases[s].rank, k = cases[s].k;
        int axis = cases[s].axis < 0 ? cases[s].axis + rank : cases[s].axis;
        const int64_t *dims = cases[s].dims;
        int64_t outer = 1, masked = 1, inner = 1, n = test_numel(rank, dims);
        for (int d = 0; d < axis; d++)
            outer *= dims[d];
        for (int d = axis; d < axis + k; d++)
            masked *= dims[d];
        for (int d = axis + k; d < rank; d++)
            inner *= dims[d];
        int32_t *x = malloc(sizeof *x * (size_t)n);
        cr_assert_not_null(x);
        for (int64_t i = 0; i < n; i++)
            x[i] = (int32_t)i;
        uint8_t *m = random_mask(masked, cases[s].percent, (unsigned)s + 7);
        int64_t out_dims[WEFT_MAX_RANK];
        for (int d = 0; d < axis; d++)
            out_dims[d] = dims[d];
        for (int d = axis + k; d < rank; d++)
            out_dims[d - k + 1] = dims[d];
        weft_tensor *want = mask_ref(x, m, outer, masked, inner, rank - k + 1, out_dims, axis);
        weft_tensor *args[2] = { tensor_of(WEFT_I32, rank, dims, x),
                                 tensor_of(WEFT_BOOL, k, dims + axis, m) };
        sel_case c = { .op = MASK, .axis = cases[s].axis };
        check_everywhere(&c, args, 2, &want, "boolean_mask");
        release_all(args, 2);
        weft_tensor_release(want);
        free(m);
        free(x);
    }
}

/* One trace serves every count: the masked length is unknown while
 * tracing, and a mean and a shape read it when the function runs. */
Test(ops_select, traced_once_for_every_count)
{
    weft_spec sig = { .dtype = WEFT_F64, .rank = 1, .dims = { WEFT_DIM_ANY } };
    sel_case c = { .op = MASKED_MEAN };
    weft_function_desc d = { .name = "masked_mean", .body = body, .user = &c, .n_args = 1,
                             .n_outs = 2, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    for (int64_t n = 1; n <= 4000; n = n * 3 + 1) {
        double *x = malloc(sizeof *x * (size_t)n);
        cr_assert_not_null(x);
        double sum = 0;
        int64_t pos = 0;
        for (int64_t i = 0; i < n; i++) {
            x[i] = (double)((i * 7919) % 23) - 11;
            if (x[i] > 0) {
                sum += x[i];
                pos++;
            }
        }
        weft_tensor *t = tensor_of(WEFT_F64, 1, &n, x);
        weft_arg a = weft_arg_tensor(t);
        weft_tensor *outs[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, &a, 1, outs, 2), 0, "%s", weft_errmsg());
        double mean = test_element(outs[0], 0);
        if (pos == 0)
            cr_assert(isnan(mean), "n %lld: the mean of nothing is %g", (long long)n, mean);
        else
            cr_assert(fabs(mean - sum / (double)pos) <= 1e-12 * fabs(sum / (double)pos),
                      "n %lld: mean %.17g, want %.17g", (long long)n, mean, sum / (double)pos);
        cr_assert_eq((int64_t)test_element(outs[1], 0), pos, "n %lld: %g positive", (long long)n,
                     test_element(outs[1], 0));
        release_all(outs, 2);
        weft_tensor_release(t);
        free(x);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1);
    /* While tracing, the count is an unknown dim. */
    char *text = test_ops_text(f);
    cr_assert(strstr(text, "boolean_mask") && strstr(text, "f64[?]"), "%s", text);
    free(text);
    weft_function_destroy(&f);
}

/* ---- unique --------------------------------------------------------------- */

/* The reference, quadratic: first occurrences, indices, counts. */
static void unique_ref(const double *x, int64_t n, weft_dtype dt, weft_tensor **want)
{
    double *y = malloc(sizeof *y * (size_t)(n + 1));
    int64_t *idx = malloc(sizeof *idx * (size_t)(n + 1));
    int64_t *cnt = malloc(sizeof *cnt * (size_t)(n + 1)), u = 0;
    cr_assert(y && idx && cnt);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        while (j < u && !(y[j] == x[i]))   /* NaN equals nothing */
            j++;
        if (j == u) {
            y[u] = x[i];
            cnt[u++] = 0;
        }
        idx[i] = j;
        cnt[j]++;
    }
    want[0] = test_tensor(dt, 1, &u, y);
    want[1] = tensor_of(WEFT_I64, 1, &n, idx);
    want[2] = tensor_of(WEFT_I64, 1, &u, cnt);
    free(y);
    free(idx);
    free(cnt);
}

Test(ops_select, unique_in_order_of_first_occurrence)
{
    const double small[] = { 1, 1, 2, 4, 4, 4, 7, 8, 8 };   /* TensorFlow's example */
    const double signed_zero[] = { -0.0, 3, 0.0, NAN, 3, NAN, -0.0 };
    const struct { const double *v; int64_t n; weft_dtype dt; } cases[] = {
        { small, 9, WEFT_I32 }, { small, 9, WEFT_I64 }, { small, 9, WEFT_F32 },
        { signed_zero, 7, WEFT_F64 }, { signed_zero, 7, WEFT_F32 }, { small, 0, WEFT_F64 },
        { small, 9, WEFT_BOOL },
    };
    for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++) {
        weft_tensor *x = test_tensor(cases[s].dt, 1, &cases[s].n, cases[s].v);
        double *back = malloc(sizeof *back * (size_t)(cases[s].n + 1));
        cr_assert_not_null(back);
        for (int64_t i = 0; i < cases[s].n; i++)
            back[i] = test_element(x, i);
        weft_tensor *want[3];
        unique_ref(back, cases[s].n, cases[s].dt, want);
        sel_case u = { .op = UNIQUE }, uc = { .op = UNIQUE_COUNTS };
        check_everywhere(&u, &x, 1, want, "unique");
        check_everywhere(&uc, &x, 1, want, "unique_with_counts");
        release_all(want, 3);
        weft_tensor_release(x);
        free(back);
    }
}

Test(ops_select, unique_of_many_values)
{
    /* 100000 values drawn from 3000: the table grows past its first size
     * and every value repeats. */
    int64_t n = 100000;
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    uint64_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (double)((s >> 33) % 3000) - 1500;
    }
    weft_tensor *x = test_tensor(WEFT_I32, 1, &n, v);
    weft_tensor *want[3];
    unique_ref(v, n, WEFT_I32, want);
    cr_assert_eq(weft_tensor_dims(want[0])[0], 3000);
    sel_case uc = { .op = UNIQUE_COUNTS };
    check_everywhere(&uc, &x, 1, want, "unique_with_counts of 100000");
    release_all(want, 3);
    weft_tensor_release(x);
    /* f64 with every 50th element a NaN (each a value of its own): the
     * NaNs met before the table grows must stay out of the grown one. */
    for (int64_t i = 0; i < n; i += 50)
        v[i] = NAN;
    x = test_tensor(WEFT_F64, 1, &n, v);
    unique_ref(v, n, WEFT_F64, want);
    cr_assert_eq(weft_tensor_dims(want[0])[0], 3000 + n / 50, "%lld",
                 (long long)weft_tensor_dims(want[0])[0]);
    check_everywhere(&uc, &x, 1, want, "unique_with_counts of 100000 with NaNs");
    release_all(want, 3);
    weft_tensor_release(x);
    free(v);
}

/* On constants the compiler computes the ops while compiling: no node of
 * theirs is left to run, and the results are the same. */
static int const_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    (void)user;
    const double v[6] = { 3, 0, 3, 1, 0, 2 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, DIMS(6), v, &t), 0);
    weft_value *x = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    weft_value *u[2];
    if (weft_unique(cx, x, u) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_argwhere(cx, x);
    outs[1] = u[0];
    return weft_ctx_status(cx);
}

Test(ops_select, folded_on_constants)
{
    weft_function_desc d = { .name = "consts", .body = const_body, .n_outs = 2 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *outs[2] = { NULL, NULL };
    cr_assert_eq(weft_function_call(f, NULL, 0, outs, 2), 0, "%s", weft_errmsg());
    test_assert_shape(outs[0], WEFT_I64, 2, DIMS(4, 1), "argwhere");
    const double where[4] = { 0, 2, 3, 5 }, uniq[3] = { 3, 0, 1 };
    for (int i = 0; i < 4; i++)
        cr_assert_eq(test_element(outs[0], i), where[i]);
    test_assert_shape(outs[1], WEFT_F64, 1, DIMS(4), "unique");
    for (int i = 0; i < 4; i++)
        cr_assert_eq(test_element(outs[1], i), i < 3 ? uniq[i] : 2);
    char *text = test_ops_text(f);
    cr_assert_eq(test_count(text, "argwhere"), 0, "%s", text);
    cr_assert_eq(test_count(text, "unique"), 0, "%s", text);
    free(text);
    release_all(outs, 2);
    weft_function_destroy(&f);
}

/* ---- Sorted segments, bincount, count_nonzero ------------------------------- */

Test(ops_select, segment_reductions_over_sorted_ids)
{
    /* Rows of [7,2]; ids skip 1 and 3, so those segments are empty. */
    const double x[14] = { 1, -2, 3, 4, -5, 6, 7, 8, 2, -1, 0, 9, -3, 5 };
    const double ids[7] = { 0, 0, 2, 2, 2, 4, 4 };
    const double want[5][10] = {
        /* SUM */  { 4, 2, 0, 0, 4, 13, 0, 0, -3, 14 },
        /* MEAN */ { 2, 1, 0, 0, 4.0 / 3, 13.0 / 3, 0, 0, -1.5, 7 },
        /* MAX */  { 3, 4, 0, 0, 7, 8, 0, 0, 0, 9 },
        /* MIN */  { 1, -2, 0, 0, -5, -1, 0, 0, -3, 5 },
        /* PROD */ { 3, -8, 1, 1, -70, -48, 1, 1, 0, 45 },
    };
    for (int r = WEFT_R_SUM; r <= WEFT_R_PROD; r++) {
        weft_dtype dt = r == WEFT_R_MEAN ? WEFT_F64 : WEFT_I32;
        weft_tensor *args[2] = { test_tensor(dt, 2, DIMS(7, 2), x),
                                 test_tensor(WEFT_I64, 1, DIMS(7), ids) };
        weft_tensor *w = test_tensor(dt, 2, DIMS(5, 2), want[r]);
        sel_case c = { .op = SEGMENT, .r = (weft_reduction)r };
        check_everywhere(&c, args, 2, &w, "segment");
        weft_tensor_release(w);
        release_all(args, 2);
    }
    /* No ids: no rows. */
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, DIMS(0, 3), x),
                             test_tensor(WEFT_I32, 1, DIMS(0), ids) };
    weft_tensor *w = test_tensor(WEFT_F32, 2, DIMS(0, 3), x);
    sel_case c = { .op = SEGMENT, .r = WEFT_R_MAX };
    check_everywhere(&c, args, 2, &w, "segment of nothing");
    weft_tensor_release(w);
    release_all(args, 2);
}

Test(ops_select, segment_of_many_rows_traced_once)
{
    weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, 3 } },
                         { .dtype = WEFT_I32, .rank = 1, .dims = { WEFT_DIM_ANY } } };
    sel_case c = { .op = SEGMENT, .r = WEFT_R_SUM };
    weft_function_desc d = { .name = "seg", .body = body, .user = &c, .n_args = 2, .n_outs = 1,
                             .input_signature = sig };
    for (int k = 0; k < N_RT; k++) {
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rts[k], &d, &f), 0, "%s", weft_errmsg());
        for (int64_t rows = 10; rows <= 100000; rows *= 10) {
            double *x = malloc(sizeof *x * (size_t)rows * 3);
            double *ids = malloc(sizeof *ids * (size_t)rows);
            cr_assert(x && ids);
            for (int64_t i = 0; i < rows; i++) {
                ids[i] = (double)(i / 7);
                for (int j = 0; j < 3; j++)
                    x[i * 3 + j] = (double)((i * 3 + j) % 11);
            }
            int64_t segs = (rows - 1) / 7 + 1;
            double *want = calloc((size_t)segs * 3, sizeof *want);
            cr_assert_not_null(want);
            for (int64_t i = 0; i < rows; i++)
                for (int j = 0; j < 3; j++)
                    want[(i / 7) * 3 + j] += x[i * 3 + j];
            weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(rows, 3), x),
                                     test_tensor(WEFT_I32, 1, &rows, ids) };
            weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
            weft_tensor *out = NULL;
            cr_assert_eq(weft_function_call(f, a, 2, &out, 1), 0, "%s", weft_errmsg());
            test_assert_shape(out, WEFT_F64, 2, DIMS(segs, 3), "segment sum");
            cr_assert(memcmp(weft_tensor_data(out), want, sizeof *want * (size_t)segs * 3) == 0,
                      "%lld rows on %u workers", (long long)rows, rt_workers[k]);
            weft_tensor_release(out);
            release_all(args, 2);
            free(x);
            free(ids);
            free(want);
        }
        cr_assert_eq(weft_function_tracing_count(f), 1);
        weft_function_destroy(&f);
    }
}

Test(ops_select, bincount_counts_and_sums_weights)
{
    const double v[8] = { 1, 3, 1, 0, 5, 3, 1, 9 };
    const double wt[8] = { 0.5, 1, 0.25, 2, 4, -1, 1, 8 };
    weft_tensor *vals = test_tensor(WEFT_I32, 2, DIMS(2, 4), v);
    weft_tensor *wts = test_tensor(WEFT_F32, 2, DIMS(2, 4), wt);
    const struct { int64_t minlength, maxlength; weft_dtype dt; int64_t len; double want[12]; }
        cases[] = {
            { 0, -1, WEFT_I32, 10, { 1, 3, 0, 2, 0, 1, 0, 0, 0, 1 } },
            { 12, -1, WEFT_I64, 12, { 1, 3, 0, 2, 0, 1, 0, 0, 0, 1, 0, 0 } },
            { 0, 4, WEFT_F64, 4, { 1, 3, 0, 2 } },   /* 5 and 9 dropped */
            { 3, 3, WEFT_I32, 3, { 1, 3, 0 } },
        };
    for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++) {
        sel_case c = { .op = BINCOUNT, .minlength = cases[s].minlength,
                       .maxlength = cases[s].maxlength, .dtype = cases[s].dt };
        weft_tensor *w = test_tensor(cases[s].dt, 1, &cases[s].len, cases[s].want);
        check_everywhere(&c, &vals, 1, &w, "bincount");
        weft_tensor_release(w);
    }
    sel_case cw = { .op = BINCOUNT_W, .maxlength = -1 };
    weft_tensor *args[2] = { vals, wts };
    weft_tensor *w = test_tensor(WEFT_F32, 1, DIMS(10),
                                 (const double[]){ 2, 1.75, 0, 0, 0, 4, 0, 0, 0, 8 });
    check_everywhere(&cw, args, 2, &w, "bincount with weights");
    weft_tensor_release(w);
    /* No values: an empty vector, or minlength zeros. */
    weft_tensor *none = test_tensor(WEFT_I64, 1, DIMS(0), v);
    sel_case c0 = { .op = BINCOUNT, .minlength = 2, .maxlength = -1, .dtype = WEFT_I32 };
    w = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 0, 0 });
    check_everywhere(&c0, &none, 1, &w, "bincount of nothing");
    weft_tensor_release(w);
    weft_tensor_release(none);
    weft_tensor_release(vals);
    weft_tensor_release(wts);
}

Test(ops_select, count_nonzero_over_axes)
{
    const double v[6] = { 0, 1.5, NAN, -0.0, 0, 3 };
    weft_tensor *f = test_tensor(WEFT_F64, 2, DIMS(2, 3), v);
    sel_case all = { .op = COUNT_NONZERO, .axis = -99 }, rows = { .op = COUNT_NONZERO, .axis = 1 };
    weft_tensor *w = test_tensor(WEFT_I64, 0, NULL, (const double[]){ 3 });
    check_everywhere(&all, &f, 1, &w, "count_nonzero");
    weft_tensor_release(w);
    w = test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 2, 1 });
    check_everywhere(&rows, &f, 1, &w, "count_nonzero of rows");
    weft_tensor_release(w);
    weft_tensor_release(f);
    weft_tensor *b = test_tensor(WEFT_BOOL, 2, DIMS(2, 3), v);
    w = test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 2, 1 });
    check_everywhere(&rows, &b, 1, &w, "count_nonzero of bool");
    weft_tensor_release(w);
    weft_tensor_release(b);
}

Test(ops_select, searchsorted_left_and_right)
{
    /* Two sorted rows (NaN last) and three values each. */
    const double seq[10] = { 1, 2, 2, 4, NAN, -1, 0, 0, 0, 5 };
    const double val[6] = { 2, 0, NAN, 0, 6, -2 };
    const double left[6] = { 1, 0, 4, 1, 5, 0 }, right[6] = { 3, 0, 5, 4, 5, 0 };
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
        weft_tensor *args[2] = { test_tensor(dt, 2, DIMS(2, 5), seq),
                                 test_tensor(dt, 2, DIMS(2, 3), val) };
        for (int r = 0; r < 2; r++) {
            sel_case c = { .op = SEARCH, .right = r };
            weft_tensor *w = test_tensor(WEFT_I64, 2, DIMS(2, 3), r ? right : left);
            check_everywhere(&c, args, 2, &w, "searchsorted");
            weft_tensor_release(w);
        }
        release_all(args, 2);
        /* A scalar value in a vector: NumPy's searchsorted of a scalar. */
        for (int r = 0; r < 2; r++) {
            weft_tensor *one[2] = { test_tensor(dt, 1, DIMS(5), seq),
                                    test_tensor(dt, 0, NULL, (const double[]){ 2 }) };
            sel_case c = { .op = SEARCH, .right = r };
            weft_tensor *w = test_tensor(WEFT_I64, 0, NULL, (const double[]){ r ? 3 : 1 });
            check_everywhere(&c, one, 2, &w, "searchsorted of a scalar");
            weft_tensor_release(w);
            release_all(one, 2);
        }
    }
    /* Many values in one long row, against a linear count. */
    int64_t n = 5000, m = 40000;
    double *sv = malloc(sizeof *sv * (size_t)n), *vv = malloc(sizeof *vv * (size_t)m);
    double *wl = malloc(sizeof *wl * (size_t)m);
    cr_assert(sv && vv && wl);
    for (int64_t i = 0; i < n; i++)
        sv[i] = (double)(i / 3);
    for (int64_t i = 0; i < m; i++) {
        vv[i] = (double)((i * 7919) % 1800) - 20;
        int64_t k = 0;
        while (k < n && sv[k] < vv[i])
            k++;
        wl[i] = (double)k;
    }
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 1, &n, sv), test_tensor(WEFT_I32, 1, &m, vv) };
    weft_tensor *w = test_tensor(WEFT_I64, 1, &m, wl);
    sel_case c = { .op = SEARCH };
    check_everywhere(&c, args, 2, &w, "searchsorted of 40000 values");
    weft_tensor_release(w);
    release_all(args, 2);
    free(sv);
    free(vv);
    free(wl);
}

Test(ops_select, sequence_mask_with_and_without_maxlen)
{
    const double len[3] = { 1, 3, 0 };
    weft_tensor *l = test_tensor(WEFT_I32, 1, DIMS(3), len);
    const double m4[12] = { 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0 };
    sel_case c4 = { .op = SEQ_MASK, .maxlength = 4, .dtype = WEFT_BOOL };
    weft_tensor *w = test_tensor(WEFT_BOOL, 2, DIMS(3, 4), m4);
    check_everywhere(&c4, &l, 1, &w, "sequence_mask maxlen 4");
    weft_tensor_release(w);
    /* maxlen -1: the longest, 3. */
    const double m3[9] = { 1, 0, 0, 1, 1, 1, 0, 0, 0 };
    sel_case c3 = { .op = SEQ_MASK, .maxlength = -1, .dtype = WEFT_F32 };
    w = test_tensor(WEFT_F32, 2, DIMS(3, 3), m3);
    check_everywhere(&c3, &l, 1, &w, "sequence_mask of the longest");
    weft_tensor_release(w);
    weft_tensor_release(l);
}

Test(ops_select, dynamic_partition_into_three)
{
    const double data[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
    const double parts[6] = { 2, 0, 2, 2, 0, 0 };   /* none in part 1 */
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(6, 2), data),
                             test_tensor(WEFT_I32, 1, DIMS(6), parts) };
    weft_tensor *want[3] = {
        test_tensor(WEFT_F64, 2, DIMS(3, 2), (const double[]){ 2, 3, 8, 9, 10, 11 }),
        test_tensor(WEFT_F64, 2, DIMS(0, 2), data),
        test_tensor(WEFT_F64, 2, DIMS(3, 2), (const double[]){ 0, 1, 4, 5, 6, 7 }),
    };
    sel_case c = { .op = PARTITION };
    check_everywhere(&c, args, 2, want, "dynamic_partition");
    release_all(want, 3);
    /* An entry outside 0..2 fails the call when it runs, as in TF. */
    for (int bad = 0; bad < 2; bad++) {
        weft_tensor_release(args[1]);
        args[1] = test_tensor(WEFT_I32, 1, DIMS(6),
                              (const double[]){ 2, 0, 2, bad ? -1 : 3, 0, 0 });
        for (int k = 0; k < N_RT; k++)
            for (int eager = 0; eager < 2; eager++) {
                weft_tensor *got[3];
                cr_assert_eq(call_on(rts[k], &c, args, 2, NULL, eager, got), WEFT_EINVAL);
                cr_assert(strstr(weft_errmsg(), "weft_dynamic_partition: a partition is outside "
                                 "0..2"), "%s", weft_errmsg());
            }
    }
    release_all(args, 2);
}

/* TensorFlow's example in two parts (indices of ranks 2 and 1, i32 and
 * i64), duplicates (the later part, then the later index, wins), a row no
 * index names (zeros), bool data, no indices at all. */
Test(ops_select, dynamic_stitch_merges_in_order)
{
    weft_tensor *args[4] = {
        test_tensor(WEFT_I32, 2, DIMS(2, 2), (const double[]){ 5, 2, 0, 3 }),
        test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 4, 1, 6 }),
        test_tensor(WEFT_F32, 3, DIMS(2, 2, 2), (const double[]){ 50, 51, 20, 21, 0, 1, 30, 31 }),
        test_tensor(WEFT_F32, 2, DIMS(3, 2), (const double[]){ 40, 41, 10, 11, 60, 61 }),
    };
    weft_tensor *want = test_tensor(WEFT_F32, 2, DIMS(7, 2), (const double[]){
        0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61 });
    sel_case c = { .op = STITCH };
    check_everywhere(&c, args, 4, &want, "TensorFlow's example");
    release_all(args, 4);
    weft_tensor_release(want);

    weft_tensor *dup[4] = {
        test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 0, 1, 3, 1 }),
        test_tensor(WEFT_I32, 1, DIMS(1), (const double[]){ 3 }),
        test_tensor(WEFT_BOOL, 1, DIMS(4), (const double[]){ 1, 0, 0, 1 }),
        test_tensor(WEFT_BOOL, 1, DIMS(1), (const double[]){ 1 }),
    };
    want = test_tensor(WEFT_BOOL, 1, DIMS(4), (const double[]){ 1, 1, 0, 1 });
    check_everywhere(&c, dup, 4, &want, "duplicates and a hole");
    release_all(dup, 4);
    weft_tensor_release(want);

    weft_tensor *none[4] = {
        test_tensor(WEFT_I64, 1, DIMS(0), NULL), test_tensor(WEFT_I64, 2, DIMS(0, 3), NULL),
        test_tensor(WEFT_F64, 2, DIMS(0, 2), NULL), test_tensor(WEFT_F64, 3, DIMS(0, 3, 2), NULL),
    };
    want = test_tensor(WEFT_F64, 2, DIMS(0, 2), NULL);
    check_everywhere(&c, none, 4, &want, "no indices");
    release_all(none, 4);
    weft_tensor_release(want);
}

static int stitch_bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *idx[2] = { a[0], a[1] }, *data[2] = { a[2], a[3] };
    switch (*(const int *)user) {
    case 0: data[1] = weft_cast(cx, a[3], WEFT_F64); break;
    case 1: data[1] = weft_reshape(cx, a[3], 1, DIMS(-1)); break;
    case 2: idx[0] = a[2]; break;
    case 3: idx[0] = weft_neg(cx, a[0]); break;
    case 4: outs[0] = weft_dynamic_stitch(cx, idx, data, 0); return weft_ctx_status(cx);
    case 5: idx[1] = NULL; break;
    }
    outs[0] = weft_dynamic_stitch(cx, idx, data, 2);
    return weft_ctx_status(cx);
}

Test(ops_select, dynamic_stitch_refuses)
{
    weft_tensor *args[4] = {
        test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 0, 1 }),
        test_tensor(WEFT_I32, 1, DIMS(1), (const double[]){ 2 }),
        test_tensor(WEFT_F32, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_F32, 2, DIMS(1, 2), (const double[]){ 5, 6 }),
    };
    static const struct { int rc; const char *says; } cases[] = {
        { WEFT_EDTYPE, "weft_dynamic_stitch: data[1] f64[1,2] is not of data[0]'s dtype f32" },
        { WEFT_ESHAPE, "weft_dynamic_stitch: data[1] f32[2] is not indices[1]'s shape i32[1] "
                       "then the inner dims of data[0]" },
        { WEFT_EDTYPE, "weft_dynamic_stitch: indices[0] f32[2,2] are not i32 or i64" },
        { WEFT_EINVAL, "weft_check: weft_dynamic_stitch: an index is negative" },
        { WEFT_EINVAL, "weft_dynamic_stitch: no parts (n is 0)" },
        { WEFT_EINVAL, "weft_dynamic_stitch: indices[1] or data[1] is NULL" },
    };
    for (int which = 0; which < 6; which++)
        for (int eager = 0; eager < 2; eager++) {
            weft_function_desc d = { .name = "stitch", .body = stitch_bad_body, .user = &which,
                                     .n_args = 4, .n_outs = 1,
                                     .flags = eager ? WEFT_RUN_EAGERLY : 0 };
            weft_function *f = NULL;
            cr_assert_eq(weft_function_create(rts[0], &d, &f), 0);
            weft_arg a[4];
            for (int i = 0; i < 4; i++)
                a[i] = weft_arg_tensor(args[i]);
            weft_tensor *out = NULL;
            int rc = weft_function_call(f, a, 4, &out, 1);
            cr_assert_eq(rc, cases[which].rc, "case %d: %s", which, weft_errmsg());
            cr_assert(strstr(weft_errmsg(), cases[which].says), "case %d: %s", which,
                      weft_errmsg());
            cr_assert_null(out);
            weft_function_destroy(&f);
        }
    release_all(args, 4);
}

/* ---- Errors --------------------------------------------------------------- */

static weft_tensor *ids_3_1;   /* i64[2] { 3, 1 } */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *u[3];
    weft_value *one_f32 = weft_cast(cx, weft_const_f64(cx, 1), WEFT_F32);
    switch (which) {
    case 0: outs[0] = weft_boolean_mask(cx, a[0], a[0], 0); break;         /* f32 mask */
    case 1: outs[0] = weft_boolean_mask(cx, a[0], weft_gt(cx, a[0], weft_const_f64(cx, 0)),
                                        1); break;                            /* past the end */
    case 2: outs[0] = weft_boolean_mask(cx, a[0], weft_reshape(cx, weft_gt(cx, a[0],
                                        weft_const_f64(cx, 0)), 1, DIMS(-1)), 0); break;
    case 3: weft_unique(cx, a[0], u); break;                                  /* a matrix */
    case 4: weft_unique(cx, a[0], NULL); break;
    case 5: outs[0] = weft_boolean_mask(cx, a[0], weft_gt(cx, weft_const_f64(cx, 1),
                                        weft_const_f64(cx, 0)), 0); break;    /* a scalar mask */
    case 6: outs[0] = weft_segment(cx, WEFT_R_SUM, a[0], weft_cast(cx, weft_sum(cx, a[0], 1),
                                   WEFT_I32)); break;                        /* ids 2, -1 */
    case 7: outs[0] = weft_segment(cx, WEFT_R_SUM, a[0], weft_const_tensor(cx, ids_3_1));
            break;                                                          /* ids 3, 1 */
    case 8: outs[0] = weft_bincount(cx, weft_cast(cx, a[0], WEFT_I64), NULL, 0, -1, WEFT_I32);
            break;                                                          /* -1 at 1 */
    case 9: outs[0] = weft_bincount(cx, weft_cast(cx, a[0], WEFT_I64), a[0], 0, -2, WEFT_I32);
            break;
    case 10: outs[0] = weft_range_to(cx, a[0]); break;
    case 11: outs[0] = weft_searchsorted(cx, a[0], weft_cast(cx, a[0], WEFT_I32), false); break;
    case 12: outs[0] = weft_searchsorted(cx, a[0], one_f32, false); break;
    case 13: outs[0] = weft_searchsorted(cx, one_f32, a[0], false); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_select, errors_name_the_op)
{
    const struct { int which; int rc; const char *says; } cases[] = {
        { 0, WEFT_EDTYPE, "weft_boolean_mask: the mask f32[2,3] is not bool" },
        { 1, WEFT_ESHAPE, "weft_boolean_mask: a mask bool[2,3] at axis 1 does not fit in the "
                          "tensor f32[2,3]" },
        { 2, WEFT_ESHAPE, "weft_boolean_mask: the mask bool[6] does not match the tensor "
                          "f32[2,3] at axis 0" },
        { 3, WEFT_ESHAPE, "weft_unique: f32[2,3] is not a vector (rank 1)" },
        { 4, WEFT_EINVAL, "weft_unique: outs is NULL" },
        { 5, WEFT_ESHAPE, "weft_boolean_mask: the mask bool[] needs a known rank of at least 1" },
        { 6, WEFT_EINVAL, "weft_segment: segment id -1 (at 1) is negative" },
        { 7, WEFT_EINVAL, "weft_segment: segment id 1 (at 1) is below the one before it (3): "
                          "the ids are not sorted" },
        { 8, WEFT_EINVAL, "weft_bincount: value -1 (at 1) is negative" },
        { 9, WEFT_EINVAL, "weft_bincount: maxlength -2 is negative" },
        { 10, WEFT_EINVAL, "weft_range_to: the limit f32[2,3] is not an i32 or i64 scalar" },
        { 11, WEFT_EDTYPE, "weft_searchsorted: the values i32[2,3] and the sorted sequence "
                           "f32[2,3] are not numbers of one dtype" },
        { 12, WEFT_ESHAPE, "weft_searchsorted: the value f32[] is a scalar, which only a "
                           "vector sorted sequence serves, not f32[2,3]" },
        { 13, WEFT_ESHAPE, "weft_searchsorted: the sorted sequence f32[] is a scalar; it needs "
                           "a last axis" },
    };
    ids_3_1 = tensor_of(WEFT_I64, 1, DIMS(2), (const int64_t[]){ 3, 1 });
    weft_tensor *x = tensor_of(WEFT_F32, 2, DIMS(2, 3), (const float[]){ 1, -1, 2, 0, 3, -4 });
    for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++)
        for (int eager = 0; eager < 2; eager++) {
            weft_function_desc d = { .name = "bad", .body = bad_body,
                                     .user = (void *)&cases[s].which, .n_args = 1,
                                     .n_outs = cases[s].which >= 3 && cases[s].which <= 4 ? 0 : 1,
                                     .flags = eager ? WEFT_RUN_EAGERLY : 0 };
            weft_function *f = NULL;
            cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
            weft_arg a = weft_arg_tensor(x);
            weft_tensor *out = NULL;
            int rc = weft_function_call(f, &a, 1, &out, d.n_outs);
            cr_assert_eq(rc, cases[s].rc, "case %d: %s", cases[s].which, weft_err_name(rc));
            cr_assert(strstr(weft_errmsg(), cases[s].says), "case %d: %s", cases[s].which,
                      weft_errmsg());
            cr_assert_null(out);
            weft_function_destroy(&f);
        }
    weft_tensor_release(x);
    weft_tensor_release(ids_3_1);
}

/* Traced with an unknown rank, unique's vector check runs when the
 * function runs. */
Test(ops_select, unique_checks_an_unknown_rank_when_run)
{
    weft_spec sig = { .dtype = WEFT_I32, .rank = WEFT_RANK_ANY };
    sel_case c = { .op = UNIQUE };
    weft_function_desc d = { .name = "u", .body = body, .user = &c, .n_args = 1, .n_outs = 2,
                             .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *ok = tensor_of(WEFT_I32, 1, DIMS(3), (const int32_t[]){ 5, 5, 6 });
    weft_tensor *bad = tensor_of(WEFT_I32, 2, DIMS(1, 3), (const int32_t[]){ 5, 5, 6 });
    weft_tensor *outs[2];
    weft_arg a = weft_arg_tensor(ok);
    cr_assert_eq(weft_function_call(f, &a, 1, outs, 2), 0, "%s", weft_errmsg());
    test_assert_shape(outs[0], WEFT_I32, 1, DIMS(2), "unique");
    release_all(outs, 2);
    a = weft_arg_tensor(bad);
    int rc = weft_function_call(f, &a, 1, outs, 2);
    cr_assert_eq(rc, WEFT_ESHAPE, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "is not a vector"), "%s", weft_errmsg());
    weft_tensor_release(ok);
    weft_tensor_release(bad);
    weft_function_destroy(&f);
}
