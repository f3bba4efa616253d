/* tensordot: values against a direct sum of products over the contracted
 * dims for the integer form (axes 0, 1, 2) and for explicit pairs in any
 * order (negative axes too), the result's dims, the same bits eagerly and
 * traced on 1, 2 and 4 workers, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_tensordot, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct td_case {
    int ra, rb;
    int64_t da[4], db[4];
    int axes;              /* the integer form when n < 0 */
    int n;
    int a_axes[4], b_axes[4];
} td_case;

static int td_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const td_case *c = user;
    outs[0] = c->n < 0 ? weft_tensordot(cx, a[0], a[1], c->axes)
                       : weft_tensordot_ex(cx, a[0], a[1], c->a_axes, c->b_axes, (size_t)c->n);
    return weft_ctx_status(cx);
}

static weft_tensor *random_f64(int rank, const int64_t *dims, unsigned seed)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    srand(seed);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(rand() % 2001 - 1000) / 250.0;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, rank, dims, v, &t), 0, "%s", weft_errmsg());
    free(v);
    return t;
}

/* Row-major offset of index idx in dims. */
static int64_t offset(int rank, const int64_t *dims, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < rank; d++)
        o = o * dims[d] + idx[d];
    return o;
}

/* Advances idx over dims (the dims listed in which[0..n)); false after
 * the last. */
static bool next_index(int64_t *idx, const int64_t *dims, const int *which, int n)
{
    for (int k = n - 1; k >= 0; k--) {
        if (++idx[which[k]] < dims[which[k]])
            return true;
        idx[which[k]] = 0;
    }
    return false;
}

/* The dims of a rank-r operand not among pairs[0..n), in order, into
 * out; returns their count. */
static int free_dims(int rank, const int *pairs, int n, int *out)
{
    int m = 0;
    for (int d = 0; d < rank; d++) {
        bool used = false;
        for (int k = 0; k < n; k++)
            used |= pairs[k] == d;
        if (!used)
            out[m++] = d;
    }
    return m;
}

/* c's pairs, and the free dims of each side, from either form. */
static void pairs_of(const td_case *c, int *pa, int *pb, int *n, int *fa, int *nfa, int *fb,
                     int *nfb)
{
    *n = c->n < 0 ? c->axes : c->n;
    for (int k = 0; k < *n; k++) {
        pa[k] = c->n < 0 ? c->ra - c->axes + k : (c->a_axes[k] + c->ra) % c->ra;
        pb[k] = c->n < 0 ? k : (c->b_axes[k] + c->rb) % c->rb;
    }
    *nfa = free_dims(c->ra, pa, *n, fa);
    *nfb = free_dims(c->rb, pb, *n, fb);
}

static void check_case(const td_case *c, unsigned seed)
{
    weft_tensor *args[2] = { random_f64(c->ra, c->da, seed), random_f64(c->rb, c->db, seed + 1) };
    weft_tensor *out;
    op_results_everywhere(td_body, (void *)c, args, 2, &out, 1, "tensordot");
    int pa[4], pb[4], n, fa[4], fb[4], nfa, nfb;
    pairs_of(c, pa, pb, &n, fa, &nfa, fb, &nfb);
    cr_assert_eq(weft_tensor_rank(out), nfa + nfb, "seed %u: rank", seed);
    for (int k = 0; k < nfa; k++)
        cr_assert_eq(weft_tensor_dims(out)[k], c->da[fa[k]], "seed %u: dim %d", seed, k);
    for (int k = 0; k < nfb; k++)
        cr_assert_eq(weft_tensor_dims(out)[nfa + k], c->db[fb[k]], "seed %u: dim %d", seed,
                     nfa + k);
    const double *a = weft_tensor_data(args[0]), *b = weft_tensor_data(args[1]);
    const double *got = weft_tensor_data(out);
    /* Every output element: its free indices, then the sum over the
     * contracted ones. */
    int64_t ia[4] = { 0 }, ib[4] = { 0 };
    int64_t at = 0;
    int free_all[8];
    int64_t dims_all[8];
    for (int k = 0; k < nfa; k++) {
        free_all[k] = k;
        dims_all[k] = c->da[fa[k]];
    }
    for (int k = 0; k < nfb; k++) {
        free_all[nfa + k] = nfa + k;
        dims_all[nfa + k] = c->db[fb[k]];
    }
    int64_t out_idx[8] = { 0 };
    do {
        for (int k = 0; k < nfa; k++)
            ia[fa[k]] = out_idx[k];
        for (int k = 0; k < nfb; k++)
            ib[fb[k]] = out_idx[nfa + k];
        int64_t ci[4] = { 0 }, cdims[4];
        int cwhich[4];
        for (int k = 0; k < n; k++) {
            cdims[k] = c->da[pa[k]];
            cwhich[k] = k;
        }
        double want = 0, scale = 0;
        do {
            for (int k = 0; k < n; k++) {
                ia[pa[k]] = ci[k];
                ib[pb[k]] = ci[k];
            }
            double t = a[offset(c->ra, c->da, ia)] * b[offset(c->rb, c->db, ib)];
            want += t;
            scale += fabs(t);
        } while (n > 0 && next_index(ci, cdims, cwhich, n));
        cr_assert(fabs(got[at] - want) <= 1e-13 * scale, "seed %u: element %lld is %.17g, "
                  "expected %.17g", seed, (long long)at, got[at], want);
        at++;
    } while (nfa + nfb > 0 && next_index(out_idx, dims_all, free_all, nfa + nfb));
    cr_assert_eq(at, weft_tensor_numel(out), "seed %u", seed);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_tensordot, integer_axes)
{
    const td_case cases[] = {
        { 3, 2, { 2, 3, 4 }, { 4, 5 }, 1, -1, { 0 }, { 0 } },       /* [2,3,5] */
        { 3, 3, { 2, 3, 4 }, { 3, 4, 5 }, 2, -1, { 0 }, { 0 } },    /* [2,5] */
        { 2, 1, { 2, 3 }, { 4 }, 0, -1, { 0 }, { 0 } },             /* outer: [2,3,4] */
        { 2, 2, { 3, 4 }, { 3, 4 }, 2, -1, { 0 }, { 0 } },          /* full: a scalar */
        { 0, 2, { 0 }, { 2, 3 }, 0, -1, { 0 }, { 0 } },             /* scalar times matrix */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], 10 + (unsigned)i);
}

Test(ops_tensordot, explicit_pairs_in_any_order)
{
    const td_case cases[] = {
        /* a's dims 0 and 2 against b's 2 and 0: [2,5] */
        { 3, 3, { 3, 2, 4 }, { 4, 5, 3 }, 0, 2, { 0, 2 }, { 2, 0 } },
        /* negative axes: a's last against b's middle: [2,3,4,6] */
        { 3, 3, { 2, 3, 5 }, { 4, 5, 6 }, 0, 1, { -1 }, { -2 } },
        /* a middle dim against b's first: [4,6,7] */
        { 3, 2, { 4, 5, 6 }, { 5, 7 }, 0, 1, { 1 }, { 0 } },
        /* no pairs: the outer product */
        { 1, 2, { 3 }, { 2, 2 }, 0, 0, { 0 }, { 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], 20 + (unsigned)i);
}

enum { BAD_AXES_HIGH, BAD_AXES_NEG, BAD_PAIR_DIMS, BAD_PAIR_TWICE, BAD_PAIR_RANGE };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case BAD_AXES_HIGH: outs[0] = weft_tensordot(cx, a[0], a[1], 3); break;
    case BAD_AXES_NEG: outs[0] = weft_tensordot(cx, a[0], a[1], -1); break;
    case BAD_PAIR_DIMS:
        outs[0] = weft_tensordot_ex(cx, a[0], a[1], (const int[]){ 0 }, (const int[]){ 0 }, 1);
        break;
    case BAD_PAIR_TWICE:
        outs[0] = weft_tensordot_ex(cx, a[0], a[1], (const int[]){ 1, 1 },
                                    (const int[]){ 0, 1 }, 2);
        break;
    case BAD_PAIR_RANGE:
        outs[0] = weft_tensordot_ex(cx, a[0], a[1], (const int[]){ 2 }, (const int[]){ 0 }, 1);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_tensordot, refused_calls_name_the_op)
{
    weft_tensor *args[2] = { random_f64(2, (const int64_t[]){ 2, 3 }, 1),
                             random_f64(2, (const int64_t[]){ 3, 3 }, 2) };
    const op_error_case cases[] = {
        { BAD_AXES_HIGH, WEFT_EINVAL, "weft_tensordot: axes is 3, not in 0..2" },
        { BAD_AXES_NEG, WEFT_EINVAL, "weft_tensordot: axes is -1" },
        { BAD_PAIR_DIMS, WEFT_ESHAPE, "weft_tensordot: a's dim 0 (2) and b's dim 0 (3)" },
        { BAD_PAIR_TWICE, WEFT_EINVAL, "weft_tensordot: a axis 1 is contracted twice" },
        { BAD_PAIR_RANGE, WEFT_EINVAL, "weft_tensordot: a axis 0 is 2, not in -2..1" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
