/* weft_einsum against a loop over every assignment of the labels (the
 * definition), eagerly and traced: products with and without transposes,
 * batch labels, sums, outer products, grouped labels, three operands, the
 * implicit output, ellipses with broadcasting, diagonals, unknown dims,
 * and the errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(ops_einsum, .init = setup, .fini = teardown, .timeout = 60);

#define MAX_IN 3

typedef struct operand {
    int rank;
    int64_t dims[4];
} operand;

typedef struct ein_case {
    const char *eq;        /* what weft gets */
    const char *ref;       /* the same with letters for ellipses and the output spelled out */
    int n;
    operand in[MAX_IN];
} ein_case;

static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const ein_case *c = user;
    outs[0] = weft_einsum(cx, c->eq, args, (size_t)c->n);
    return weft_ctx_status(cx);
}

/* The definition: out[o] = sum over the other labels of the product of
 * the inputs; an input dim of 1 under a larger label broadcasts. */
static double *reference(const ein_case *c, double *const *x, int64_t *out_numel)
{
    char labels[16];
    int64_t size[16];
    int nl = 0;
    const char *arrow = strstr(c->ref, "->");
    const char *side = c->ref;
    int in_label[MAX_IN][4];
    for (int k = 0; k < c->n; k++) {
        for (int d = 0; d < c->in[k].rank; d++) {
            char ch = side[d];
            int at = -1;
            for (int i = 0; i < nl; i++)
                if (labels[i] == ch)
                    at = i;
            if (at < 0) {
                at = nl++;
                labels[at] = ch;
                size[at] = 1;
            }
            if (c->in[k].dims[d] > size[at])
                size[at] = c->in[k].dims[d];
            in_label[k][d] = at;
        }
        side += c->in[k].rank + 1;
    }
    const char *out = arrow + 2;
    int no = (int)strlen(out), out_label[8];
    int64_t n_out = 1;
    for (int d = 0; d < no; d++) {
        for (int i = 0; i < nl; i++)
            if (labels[i] == out[d])
                out_label[d] = i;
        n_out *= size[out_label[d]];
    }
    double *y = calloc((size_t)(n_out ? n_out : 1), sizeof(double));
    cr_assert_not_null(y);
    int64_t idx[16] = { 0 };
    for (;;) {
        double prod = 1;
        for (int k = 0; k < c->n; k++) {
            int64_t off = 0;
            for (int d = 0; d < c->in[k].rank; d++) {
                int64_t i = c->in[k].dims[d] == 1 ? 0 : idx[in_label[k][d]];
                off = off * c->in[k].dims[d] + i;
            }
            prod *= x[k][off];
        }
        int64_t o = 0;
        for (int d = 0; d < no; d++)
            o = o * size[out_label[d]] + idx[out_label[d]];
        y[o] += prod;
        int i = 0;
        while (i < nl && ++idx[i] == size[i])
            idx[i++] = 0;
        if (i == nl)
            break;
    }
    *out_numel = n_out;
    return y;
}

static double *values(int64_t n, uint64_t seed)
{
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)((int64_t)(seed >> 40) % 17 - 8) / 4;
    }
    return v;
}

/* c eagerly and traced (with signature sig when given) against the
 * definition, exactly (the values are multiples of 1/4, so every sum is
 * exact). */
static void check(const ein_case *c, const weft_spec *sig)
{
    double *x[MAX_IN];
    weft_tensor *t[MAX_IN];
    weft_arg a[MAX_IN];
    for (int k = 0; k < c->n; k++) {
        x[k] = values(test_numel(c->in[k].rank, c->in[k].dims), (uint64_t)k + 1);
        t[k] = test_tensor(WEFT_F64, c->in[k].rank, c->in[k].dims, x[k]);
        a[k] = weft_arg_tensor(t[k]);
    }
    int64_t n;
    double *want = reference(c, x, &n);
    for (int eager = 0; eager < 2; eager++) {
        weft_function_desc d = { .name = "einsum", .body = body, .user = (void *)c,
                                 .n_args = (uint32_t)c->n, .n_outs = 1,
                                 .input_signature = eager ? NULL : sig,
                                 .flags = eager ? WEFT_RUN_EAGERLY : 0 };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, a, (size_t)c->n, &y, 1), 0, "%s: %s", c->eq,
                     weft_errmsg());
        cr_assert_eq(weft_tensor_numel(y), n, "%s: %lld elements, not %lld", c->eq,
                     (long long)weft_tensor_numel(y), (long long)n);
        for (int64_t i = 0; i < n; i++)
            cr_assert_eq(test_element(y, i), want[i], "%s (%s): element %lld is %g, not %g",
                         c->eq, eager ? "eager" : "traced", (long long)i, test_element(y, i),
                         want[i]);
        weft_tensor_release(y);
        weft_function_destroy(&f);
    }
    for (int k = 0; k < c->n; k++) {
        weft_tensor_release(t[k]);
        free(x[k]);
    }
    free(want);
}

#define OP1(r, ...) { r, { __VA_ARGS__ } }

Test(ops_einsum, matches_the_definition)
{
    const ein_case cases[] = {
        { "ij,jk->ik", "ij,jk->ik", 2, { OP1(2, 3, 4), OP1(2, 4, 5) } },
        { "ij,kj->ik", "ij,kj->ik", 2, { OP1(2, 3, 4), OP1(2, 5, 4) } },
        { "ji,jk->ik", "ji,jk->ik", 2, { OP1(2, 4, 3), OP1(2, 4, 5) } },
        { "ji,kj->ik", "ji,kj->ik", 2, { OP1(2, 4, 3), OP1(2, 5, 4) } },
        { "bij,bjk->bik", "bij,bjk->bik", 2, { OP1(3, 2, 3, 4), OP1(3, 2, 4, 5) } },
        { "bij,bkj->bki", "bij,bkj->bki", 2, { OP1(3, 2, 3, 4), OP1(3, 2, 5, 4) } },
        { "ij,jk->ki", "ij,jk->ki", 2, { OP1(2, 3, 4), OP1(2, 4, 5) } },   /* swapped */
        { "ij->ji", "ij->ji", 1, { OP1(2, 3, 4) } },
        { "ij->", "ij->", 1, { OP1(2, 3, 4) } },
        { "ij->j", "ij->j", 1, { OP1(2, 3, 4) } },
        { "i,i->", "i,i->", 2, { OP1(1, 7), OP1(1, 7) } },
        { "i,j->ij", "i,j->ij", 2, { OP1(1, 3), OP1(1, 4) } },
        { "ij,ij->ij", "ij,ij->ij", 2, { OP1(2, 3, 4), OP1(2, 3, 4) } },
        { "ij,ij->", "ij,ij->", 2, { OP1(2, 3, 4), OP1(2, 3, 4) } },
        { "ij,jk->", "ij,jk->", 2, { OP1(2, 3, 4), OP1(2, 4, 2) } },
        { "abc,cd->abd", "abc,cd->abd", 2, { OP1(3, 2, 3, 4), OP1(2, 4, 5) } },
        { "abcd,cdef->abef", "abcd,cdef->abef", 2, { OP1(4, 2, 2, 3, 2), OP1(4, 3, 2, 2, 3) } },
        { "bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", 2, { OP1(4, 2, 2, 3, 4), OP1(4, 2, 2, 5, 4) } },
        { "ij,jk,kl->il", "ij,jk,kl->il", 3, { OP1(2, 2, 3), OP1(2, 3, 4), OP1(2, 4, 2) } },
        { "ij,jk,kl->", "ij,jk,kl->", 3, { OP1(2, 2, 3), OP1(2, 3, 4), OP1(2, 4, 2) } },
        { "ij,jk", "ij,jk->ik", 2, { OP1(2, 3, 4), OP1(2, 4, 5) } },
        { "ba,ca", "ba,ca->bc", 2, { OP1(2, 3, 4), OP1(2, 5, 4) } },
        { "ijk,ik->j", "ijk,ik->j", 2, { OP1(3, 2, 3, 4), OP1(2, 2, 4) } },
        { "...ij,...jk->...ik", "xij,xjk->xik", 2, { OP1(3, 2, 3, 4), OP1(3, 2, 4, 5) } },
        { "...ij,jk->...ik", "xij,jk->xik", 2, { OP1(3, 2, 3, 4), OP1(2, 4, 5) } },
        { "...ij,...jk->...ik", "xyij,yjk->xyik", 2,
          { OP1(4, 2, 1, 3, 4), OP1(3, 3, 4, 2) } },
        { "...ij,...jk", "xij,xjk->xik", 2, { OP1(3, 2, 3, 4), OP1(3, 2, 4, 5) } },
        { "b i j , b j k -> b i k", "bij,bjk->bik", 2, { OP1(3, 2, 3, 4), OP1(3, 2, 4, 5) } },
        /* Diagonals: a label repeated within an operand. */
        { "ii->i", "ii->i", 1, { OP1(2, 4, 4) } },
        { "ii->", "ii->", 1, { OP1(2, 4, 4) } },
        { "ii", "ii->", 1, { OP1(2, 3, 3) } },
        { "bii->bi", "bii->bi", 1, { OP1(3, 2, 3, 3) } },
        { "iji->j", "iji->j", 1, { OP1(3, 3, 2, 3) } },
        { "iij,jk->ik", "iij,jk->ik", 2, { OP1(3, 2, 2, 3), OP1(2, 3, 4) } },
        { "iii->i", "iii->i", 1, { OP1(3, 3, 3, 3) } },
        { "ij,kk->ij", "ij,kk->ij", 2, { OP1(2, 2, 3), OP1(2, 4, 4) } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i], NULL);
}

/* Traced once for a batch unknown while tracing; the result is the
 * definition's. */
Test(ops_einsum, unknown_batch_dims)
{
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("f64[?,3,4]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f64[?,4,5]", &sig[1]), 0);
    const ein_case c = { "bij,bjk->bik", "bij,bjk->bik", 2, { OP1(3, 2, 3, 4), OP1(3, 2, 4, 5) } };
    check(&c, sig);
    const ein_case g = { "bij,jk->bik", "bij,jk->bik", 2, { OP1(3, 2, 3, 4), OP1(2, 4, 5) } };
    weft_spec sig2[2];
    cr_assert_eq(weft_spec_parse("f64[?,3,4]", &sig2[0]), 0);
    cr_assert_eq(weft_spec_parse("f64[4,5]", &sig2[1]), 0);
    check(&g, sig2);   /* b and i grouped into one dim of unknown size */
}

/* A diagonal needs its dim while tracing: refused with a dim unknown. */
Test(ops_einsum, diagonal_of_an_unknown_dim_is_refused)
{
    const ein_case c = { "ii->i", "ii->i", 1, { OP1(2, 3, 3) } };
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[?,?]", &sig), 0);
    weft_function_desc d = { .name = "diag", .body = body, .user = (void *)&c, .n_args = 1,
                             .n_outs = 1, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    double v[9] = { 0 };
    weft_tensor *t = test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, v), *y = NULL;
    weft_arg a = weft_arg_tensor(t);
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_einsum: a label repeated within an operand (a "
                                    "diagonal) needs its dim known while tracing"),
              "%s", weft_errmsg());
    cr_assert_null(y);
    weft_function_destroy(&f);
    weft_tensor_release(t);
}

typedef struct bad {
    const char *eq;
    int n;
    operand in[2];
    int rc;
    const char *says;
} bad;

Test(ops_einsum, errors)
{
    const bad cases[] = {
        { "ij,jk->il", 2, { OP1(2, 3, 4), OP1(2, 4, 5) }, WEFT_EINVAL,
          "an output label is in no input" },
        { "ij,jk->ik", 2, { OP1(2, 3, 4), OP1(2, 5, 5) }, WEFT_ESHAPE,
          "weft_einsum: label 'j' has dims 4 and 5" },
        { "ij->ik->i", 1, { OP1(2, 3, 4) }, WEFT_EINVAL, "at most one \"->\"" },
        { "ij,jk->ik", 1, { OP1(2, 3, 4) }, WEFT_EINVAL, "not one input side per operand" },
        { "ijk->i", 1, { OP1(2, 3, 4) }, WEFT_EINVAL, "not a label per dim" },
        { "i1->i", 1, { OP1(2, 3, 4) }, WEFT_EINVAL, "not a label per dim" },
        { "ij->ii", 1, { OP1(2, 3, 4) }, WEFT_EINVAL, "a label repeats in the output" },
    };
    double zeros[64] = { 0 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad *b = &cases[i];
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rt, &cx), 0);
        weft_tensor *t[2];
        weft_value *v[2];
        for (int k = 0; k < b->n; k++) {
            t[k] = test_tensor(WEFT_F64, b->in[k].rank, b->in[k].dims, zeros);
            v[k] = weft_eager_value(cx, t[k]);
        }
        cr_assert_null(weft_einsum(cx, b->eq, v, (size_t)b->n), "%s", b->eq);
        cr_assert_eq(weft_ctx_status(cx), b->rc, "%s: %s", b->eq, weft_errmsg());
        cr_assert(strstr(weft_errmsg(), b->says), "%s: \"%s\" does not say \"%s\"", b->eq,
                  weft_errmsg(), b->says);
        weft_eager_end(&cx);
        for (int k = 0; k < b->n; k++)
            weft_tensor_release(t[k]);
    }
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_null(weft_einsum(cx, NULL, NULL, 1));
    cr_assert(strstr(weft_errmsg(), "weft_einsum: NULL equation"), "%s", weft_errmsg());
    weft_eager_end(&cx);
}
