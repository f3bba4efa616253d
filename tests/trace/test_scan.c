/* weft_scan, weft_foldl and weft_foldr: TensorFlow's worked examples of
 * tf.scan and the folds, traced and eager (a traced function, its
 * WEFT_RUN_EAGERLY twin and a bare eager context), with several
 * accumulators, inputs and captures, rows unknown while tracing, no rows,
 * and their errors. */
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;

static void setup(void)
{
    rt = test_runtime(2);
}

static void teardown(void)
{
    weft_runtime_destroy(&rt);
}

TestSuite(scan, .init = setup, .fini = teardown, .timeout = 60);

static weft_function *fn_new(const char *name, weft_body_fn body, void *user, size_t n_args,
                             size_t n_outs, const weft_spec *sig, unsigned flags)
{
    return test_function(rt, name, body, user, n_args, n_outs, sig, flags);
}

static weft_tensor *i64s(int64_t n, const double *v)
{
    return test_tensor(WEFT_I64, 1, &n, v);
}

static weft_tensor *i64_scalar(double v)
{
    return test_tensor(WEFT_I64, 0, NULL, &v);
}

static void expect_values(const weft_tensor *t, int64_t n, const double *want, const char *what)
{
    cr_assert_not_null(t, "%s", what);
    cr_assert_eq(weft_tensor_numel(t), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(t));
    for (int64_t i = 0; i < n; i++)
        cr_expect_float_eq(test_element(t, i), want[i], 1e-5, "%s: element %lld is %g, want %g",
                           what, (long long)i, test_element(t, i), want[i]);
}

/* ---- Step functions ---- */

/* a + x */
static int body_add(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], a[1]);
    return 0;
}

/* a * 10 + x: tells the order of the rows apart */
static int body_digits(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, weft_mul(cx, a[0], weft_const_i64(cx, 10)), a[1]);
    return 0;
}

/* (a0, a1), x -> (a1, a0 + a1): TensorFlow's Fibonacci example */
static int body_fib(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = a[1];
    o[1] = weft_add(cx, a[0], a[1]);
    return 0;
}

/* a, x, s -> a + x * s: TensorFlow's alternating sums, two inputs */
static int body_alternate(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_add(cx, a[0], weft_mul(cx, a[1], a[2]));
    return 0;
}

/* h, x, w -> tanh(h * w + x): a recurrent step with a captured weight */
static int body_rnn(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_tanh(cx, weft_add(cx, weft_mul(cx, a[0], a[2]), a[1]));
    return 0;
}

/* ---- The op under test inside a function ---- */

typedef enum { SCAN, FOLDL, FOLDR } which_op;

typedef struct scan_case {
    which_op op;
    weft_function *fn;
    size_t n_acc, n_elems, n_caps;
    bool has_init;
    unsigned flags;
} scan_case;

static int run_op(weft_ctx *cx, const scan_case *c, weft_value *const *a, weft_value **o)
{
    weft_value *const *init = c->has_init ? a : NULL;
    weft_value *const *elems = a + (c->has_init ? c->n_acc : 0);
    weft_value *const *caps = elems + c->n_elems;
    switch (c->op) {
    case SCAN:
        return weft_scan(cx, c->fn, init, c->n_acc, elems, c->n_elems, caps, c->n_caps, o,
                         c->flags);
    case FOLDL:
        return weft_foldl(cx, c->fn, init, c->n_acc, elems, c->n_elems, caps, c->n_caps, o);
    default:
        return weft_foldr(cx, c->fn, init, c->n_acc, elems, c->n_elems, caps, c->n_caps, o);
    }
}

static int body_case(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    return run_op(cx, u, a, o);
}

static size_t n_inputs(const scan_case *c)
{
    return (c->has_init ? c->n_acc : 0) + c->n_elems + c->n_caps;
}

/* Calls c on ins three ways (traced, WEFT_RUN_EAGERLY, an eager context)
 * and checks every result against want[k] (n_want[k] values); returns the
 * traced function's code when it fails (the others must agree). */
static int run_case(scan_case *c, const weft_spec *sig, weft_tensor *const *ins,
                    const double *const *want, const int64_t *n_want, const char *what)
{
    size_t n_in = n_inputs(c);
    int codes[3];
    for (int way = 0; way < 3; way++) {
        weft_tensor *outs[4] = { NULL, NULL, NULL, NULL };
        if (way < 2) {
            weft_function *f = fn_new("outer", body_case, c, n_in, c->n_acc, sig,
                                      way ? WEFT_RUN_EAGERLY : 0);
            weft_arg args[8];
            for (size_t i = 0; i < n_in; i++)
                args[i] = weft_arg_tensor(ins[i]);
            codes[way] = weft_function_call(f, args, n_in, outs, c->n_acc);
            weft_function_destroy(&f);
        } else {
            weft_ctx *cx = NULL;
            cr_assert_eq(weft_eager_begin(rt, &cx), 0);
            weft_value *v[8], *o[4] = { NULL, NULL, NULL, NULL };
            for (size_t i = 0; i < n_in; i++)
                v[i] = weft_eager_value(cx, ins[i]);
            codes[way] = run_op(cx, c, v, o);
            for (size_t k = 0; codes[way] == 0 && k < c->n_acc; k++)
                outs[k] = weft_tensor_retain(weft_value_tensor(o[k]));
            weft_eager_end(&cx);
        }
        for (size_t k = 0; k < c->n_acc; k++) {
            if (codes[way] == 0 && want) {
                char at[96];
                snprintf(at, sizeof at, "%s, way %d, result %zu", what, way, k);
                expect_values(outs[k], n_want[k], want[k], at);
            }
            weft_tensor_release(outs[k]);
        }
        if (way)
            cr_expect_eq(codes[way], codes[0], "%s: way %d gave %d, traced %d", what, way,
                         codes[way], codes[0]);
    }
    return codes[0];
}

/* ---- Values ---- */

Test(scan, tensorflow_examples_of_scan)
{
    const double ones_to_six[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *elems = i64s(6, ones_to_six), *ten = i64_scalar(10);
    scan_case c = { .op = SCAN, .fn = fn_new("add", body_add, NULL, 2, 1, NULL, 0), .n_acc = 1,
                    .n_elems = 1 };
    /* tf.scan(lambda a, x: a + x, elems): the running sums. */
    const double *want[1] = { (const double[]){ 1, 3, 6, 10, 15, 21 } };
    cr_expect_eq(run_case(&c, NULL, &elems, want, (const int64_t[]){ 6 }, "sums"), 0, "%s",
                 weft_errmsg());
    /* reverse=True: the sums from the end, each in its row. */
    c.flags = WEFT_SCAN_REVERSE;
    want[0] = (const double[]){ 21, 20, 18, 15, 11, 6 };
    cr_expect_eq(run_case(&c, NULL, &elems, want, (const int64_t[]){ 6 }, "reverse"), 0, "%s",
                 weft_errmsg());
    /* initializer=10: every row is 10 more. */
    c.flags = 0;
    c.has_init = true;
    weft_tensor *ins[2] = { ten, elems };
    want[0] = (const double[]){ 11, 13, 16, 20, 25, 31 };
    cr_expect_eq(run_case(&c, NULL, ins, want, (const int64_t[]){ 6 }, "init"), 0, "%s",
                 weft_errmsg());
    weft_function_destroy(&c.fn);
    weft_tensor_release(elems);
    weft_tensor_release(ten);
}

Test(scan, several_accumulators_and_inputs)
{
    /* Fibonacci: initializer (0, 1), fn(a, _) = (a[1], a[0] + a[1]). */
    weft_tensor *zero = i64_scalar(0), *one = i64_scalar(1);
    weft_tensor *elems = i64s(6, (const double[]){ 1, 2, 3, 4, 5, 6 });
    scan_case c = { .op = SCAN, .fn = fn_new("fib", body_fib, NULL, 3, 2, NULL, 0), .n_acc = 2,
                    .n_elems = 1, .has_init = true };
    weft_tensor *ins[3] = { zero, one, elems };
    const double *want[2] = { (const double[]){ 1, 1, 2, 3, 5, 8 },
                              (const double[]){ 1, 2, 3, 5, 8, 13 } };
    cr_expect_eq(run_case(&c, NULL, ins, want, (const int64_t[]){ 6, 6 }, "fib"), 0, "%s",
                 weft_errmsg());
    weft_function_destroy(&c.fn);

    /* Alternating sums: elems (1..6, -1 1 -1 1 -1 1), initializer 0. */
    weft_tensor *signs = i64s(6, (const double[]){ -1, 1, -1, 1, -1, 1 });
    scan_case alt = { .op = SCAN, .fn = fn_new("alt", body_alternate, NULL, 3, 1, NULL, 0),
                      .n_acc = 1, .n_elems = 2, .has_init = true };
    weft_tensor *ins2[3] = { zero, elems, signs };
    const double *want2[1] = { (const double[]){ -1, 1, -2, 2, -3, 3 } };
    cr_expect_eq(run_case(&alt, NULL, ins2, want2, (const int64_t[]){ 6 }, "alternating"), 0,
                 "%s", weft_errmsg());
    weft_function_destroy(&alt.fn);
    weft_tensor_release(zero);
    weft_tensor_release(one);
    weft_tensor_release(elems);
    weft_tensor_release(signs);
}

Test(scan, folds_run_from_either_end)
{
    weft_tensor *elems = i64s(3, (const double[]){ 1, 2, 3 }), *zero = i64_scalar(0);
    weft_tensor *ins[2] = { zero, elems };
    scan_case c = { .op = FOLDL, .fn = fn_new("digits", body_digits, NULL, 2, 1, NULL, 0),
                    .n_acc = 1, .n_elems = 1, .has_init = true };
    const int64_t one[1] = { 1 };
    const double *want[1] = { (const double[]){ 123 } };
    cr_expect_eq(run_case(&c, NULL, ins, want, one, "foldl"), 0, "%s", weft_errmsg());
    c.op = FOLDR;
    want[0] = (const double[]){ 321 };
    cr_expect_eq(run_case(&c, NULL, ins, want, one, "foldr"), 0, "%s", weft_errmsg());
    /* Without init the first row (from the fold's end) is the start. */
    c.has_init = false;
    c.op = FOLDL;
    want[0] = (const double[]){ 123 };
    cr_expect_eq(run_case(&c, NULL, &elems, want, one, "foldl, no init"), 0, "%s",
                 weft_errmsg());
    c.op = FOLDR;
    want[0] = (const double[]){ 321 };
    cr_expect_eq(run_case(&c, NULL, &elems, want, one, "foldr, no init"), 0, "%s",
                 weft_errmsg());
    /* And scan keeps every step: 1, 12, 123. */
    c.op = SCAN;
    want[0] = (const double[]){ 1, 12, 123 };
    cr_expect_eq(run_case(&c, NULL, &elems, want, (const int64_t[]){ 3 }, "scan digits"), 0,
                 "%s", weft_errmsg());
    weft_function_destroy(&c.fn);
    weft_tensor_release(elems);
    weft_tensor_release(zero);
}

/* A recurrent cell over f32[T, 2] rows with a captured weight, against the
 * same loop in C; rows unknown while tracing, so one trace serves both
 * lengths, and the step function is traced once for its specs. */
Test(scan, recurrent_step_with_captures_and_unknown_rows)
{
    const double w[2] = { 0.5, -1.5 }, h0[2] = { 0.1, 0.2 };
    weft_tensor *wt = test_tensor(WEFT_F32, 1, (const int64_t[]){ 2 }, w);
    weft_tensor *ht = test_tensor(WEFT_F32, 1, (const int64_t[]){ 2 }, h0);
    weft_function *step = fn_new("rnn", body_rnn, NULL, 3, 1, NULL, 0);
    scan_case c = { .op = SCAN, .fn = step, .n_acc = 1, .n_elems = 1, .n_caps = 1,
                    .has_init = true };
    weft_spec sig[3];
    cr_assert_eq(weft_spec_parse("f32[2]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f32[?,2]", &sig[1]), 0);
    cr_assert_eq(weft_spec_parse("f32[2]", &sig[2]), 0);
    for (int64_t t = 3; t <= 5; t += 2) {
        double xs[10], want[10];
        float h[2] = { (float)h0[0], (float)h0[1] };
        for (int64_t i = 0; i < t; i++)
            for (int j = 0; j < 2; j++) {
                xs[2 * i + j] = 0.3 * (double)(i + 1) - 0.7 * j;
                h[j] = tanhf(h[j] * (float)w[j] + (float)xs[2 * i + j]);
                want[2 * i + j] = h[j];
            }
        weft_tensor *x = test_tensor(WEFT_F32, 2, (const int64_t[]){ t, 2 }, xs);
        weft_tensor *ins[3] = { ht, x, wt };
        const double *wants[1] = { want };
        int64_t n = 2 * t;
        cr_expect_eq(run_case(&c, sig, ins, wants, &n, "rnn"), 0, "%s", weft_errmsg());
        weft_tensor_release(x);
    }
    /* One trace of the step for f32[2], f32[2], f32[2]: each way resolves
     * it through the step's own cache. */
    cr_expect_eq(weft_function_tracing_count(step), 1);
    weft_function_destroy(&step);
    weft_tensor_release(wt);
    weft_tensor_release(ht);
}

Test(scan, no_rows)
{
    weft_tensor *none = test_tensor(WEFT_I64, 1, (const int64_t[]){ 0 }, NULL);
    weft_tensor *seven = i64_scalar(7);
    weft_tensor *ins[2] = { seven, none };
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("i64[]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("i64[?]", &sig[1]), 0);
    scan_case c = { .op = FOLDL, .fn = fn_new("add", body_add, NULL, 2, 1, NULL, 0), .n_acc = 1,
                    .n_elems = 1, .has_init = true };
    /* A fold over no rows is its init; a scan is empty. */
    const double *want[1] = { (const double[]){ 7 } };
    cr_expect_eq(run_case(&c, sig, ins, want, (const int64_t[]){ 1 }, "foldl"), 0, "%s",
                 weft_errmsg());
    c.op = SCAN;
    want[0] = NULL;
    cr_expect_eq(run_case(&c, sig, ins, want, (const int64_t[]){ 0 }, "scan"), 0, "%s",
                 weft_errmsg());
    /* Without init there is nothing to start from. */
    c.has_init = false;
    cr_expect_eq(run_case(&c, sig + 1, &none, NULL, NULL, "no init"), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "no rows") != NULL, "%s", weft_errmsg());
    weft_function_destroy(&c.fn);
    weft_tensor_release(none);
    weft_tensor_release(seven);
}

/* ---- Errors ---- */

/* a, x -> a + x as f64: changes an f32 accumulator's dtype */
static int body_widens(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_cast(cx, weft_add(cx, a[0], a[1]), WEFT_F64);
    return 0;
}

/* a, x -> concat(a, x): the accumulator grows every row */
static int body_grows(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    weft_value *parts[2] = { a[0], weft_expand_dims(cx, a[1], 0) };
    o[0] = weft_concat(cx, parts, 2, 0);
    return 0;
}

/* a, x -> a + x while a < 6, else a failed check */
static int body_checked(weft_ctx *cx, weft_value *const *a, weft_value **o, void *u)
{
    (void)u;
    o[0] = weft_check(cx, weft_add(cx, a[0], a[1]), weft_lt(cx, a[0], weft_const_i64(cx, 6)),
                      "a < 6");
    return 0;
}

Test(scan, accumulator_must_keep_its_spec)
{
    weft_tensor *x = test_tensor(WEFT_F32, 1, (const int64_t[]){ 3 }, (const double[]){ 1, 2, 3 });
    weft_tensor *a0 = test_tensor(WEFT_F32, 0, NULL, (const double[]){ 0 });
    weft_tensor *ins[2] = { a0, x };
    scan_case c = { .op = SCAN, .fn = fn_new("widens", body_widens, NULL, 2, 1, NULL, 0),
                    .n_acc = 1, .n_elems = 1, .has_init = true };
    cr_expect_eq(run_case(&c, NULL, ins, NULL, NULL, "widens"), WEFT_EDTYPE);
    cr_expect(strstr(weft_errmsg(), "fn 'widens' changes accumulator 0 from f32[] to f64[]"),
              "%s", weft_errmsg());
    weft_function_destroy(&c.fn);

    /* A dim unknown while tracing that a step changes: found at that row. */
    weft_tensor *v = test_tensor(WEFT_F32, 1, (const int64_t[]){ 1 }, (const double[]){ 0 });
    weft_tensor *ins2[2] = { v, x };
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("f32[?]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f32[3]", &sig[1]), 0);
    scan_case g = { .op = FOLDL, .fn = fn_new("grows", body_grows, NULL, 2, 1, NULL, 0),
                    .n_acc = 1, .n_elems = 1, .has_init = true };
    cr_expect_eq(run_case(&g, sig, ins2, NULL, NULL, "grows"), WEFT_ESHAPE);
    cr_expect(strstr(weft_errmsg(), "weft_foldl: row 0: fn 'grows' changes accumulator 0 from "
                     "f32[1] to f32[2]"), "%s", weft_errmsg());
    weft_function_destroy(&g.fn);
    weft_tensor_release(x);
    weft_tensor_release(a0);
    weft_tensor_release(v);
}

Test(scan, a_failing_step_names_its_row)
{
    weft_tensor *x = i64s(5, (const double[]){ 1, 2, 3, 4, 5 }), *zero = i64_scalar(0);
    weft_tensor *ins[2] = { zero, x };
    /* Sums 1, 3, 6: the step on row 3 sees a = 6 and fails. */
    scan_case c = { .op = SCAN, .fn = fn_new("checked", body_checked, NULL, 2, 1, NULL, 0),
                    .n_acc = 1, .n_elems = 1, .has_init = true };
    cr_expect_eq(run_case(&c, NULL, ins, NULL, NULL, "checked"), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "weft_scan: row 3:") && strstr(weft_errmsg(), "a < 6"), "%s",
              weft_errmsg());
    /* From the end: 5, 9, then row 2 sees a = 9. */
    c.flags = WEFT_SCAN_REVERSE;
    cr_expect_eq(run_case(&c, NULL, ins, NULL, NULL, "checked, reverse"), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "weft_scan: row 2:"), "%s", weft_errmsg());
    weft_function_destroy(&c.fn);
    weft_tensor_release(x);
    weft_tensor_release(zero);
}

Test(scan, bad_calls)
{
    weft_function *add = fn_new("add", body_add, NULL, 2, 1, NULL, 0);
    weft_tensor *xt = i64s(3, (const double[]){ 1, 2, 3 });
    weft_tensor *yt = i64s(4, (const double[]){ 1, 2, 3, 4 });
    struct { int code; const char *says; } want[] = {
        { WEFT_EINVAL, "only WEFT_SCAN_REVERSE applies" },
        { WEFT_EINVAL, "fn is NULL" },
        { WEFT_EINVAL, "n_elems is 0" },
        { WEFT_EINVAL, "n_acc is 0" },
        { WEFT_EINVAL, "n_acc (1) must equal n_elems (2)" },
        { WEFT_ESHAPE, "elems 1 has 4 rows, elems 0 has 3" },
    };
    for (int k = 0; k < 6; k++) {
        /* A fresh context each time: an error is sticky. */
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rt, &cx), 0);
        weft_value *x = weft_eager_value(cx, xt), *y = weft_eager_value(cx, yt), *out = NULL;
        weft_value *init = weft_const(cx, WEFT_I64, 0), *two[2] = { x, y };
        int rc;
        switch (k) {
        case 0: rc = weft_scan(cx, add, &init, 1, &x, 1, NULL, 0, &out, WEFT_SCAN_EXCLUSIVE); break;
        case 1: rc = weft_foldl(cx, NULL, &init, 1, &x, 1, NULL, 0, &out); break;
        case 2: rc = weft_foldl(cx, add, &init, 1, &x, 0, NULL, 0, &out); break;
        case 3: rc = weft_foldl(cx, add, NULL, 0, &x, 1, NULL, 0, NULL); break;
        case 4: rc = weft_foldr(cx, add, NULL, 1, two, 2, NULL, 0, &out); break;
        default: rc = weft_scan(cx, add, &init, 1, two, 2, NULL, 0, &out, 0); break;
        }
        cr_expect_eq(rc, want[k].code, "case %d: %d", k, rc);
        cr_expect(strstr(weft_errmsg(), want[k].says), "case %d: %s", k, weft_errmsg());
        cr_expect_null(out);
        cr_expect_eq(weft_ctx_status(cx), want[k].code, "case %d: the context holds it", k);
        weft_eager_end(&cx);
    }
    weft_value *out = NULL;
    cr_expect_eq(weft_scan(NULL, add, NULL, 1, NULL, 1, NULL, 0, &out, 0), WEFT_EINVAL);
    weft_function_destroy(&add);
    weft_tensor_release(xt);
    weft_tensor_release(yt);
}

/* The traced program holds one SCAN node, with the step's name. */
Test(scan, one_node_in_the_op_listing)
{
    weft_tensor *elems = i64s(6, (const double[]){ 1, 2, 3, 4, 5, 6 });
    scan_case c = { .op = SCAN, .fn = fn_new("add", body_add, NULL, 2, 1, NULL, 0), .n_acc = 1,
                    .n_elems = 1, .flags = WEFT_SCAN_REVERSE };
    weft_function *f = fn_new("outer", body_case, &c, 1, 1, NULL, 0);
    weft_arg arg = weft_arg_tensor(elems);
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), 0, "%s", weft_errmsg());
    weft_tensor_release(out);
    char *text = test_ops_text(f);
    cr_expect_eq(test_count(text, "scan<add,elems=1,reverse,from_rows>"), 1, "%s", text);
    free(text);
    weft_function_destroy(&f);
    weft_function_destroy(&c.fn);
    weft_tensor_release(elems);
}
