/* docs/GUIDE.md, compiled and run.  Every ```c block of the guide is
 * preceded there by <!-- snippet: NAME --> and appears here verbatim right
 * after a line "/" "* snippet: NAME *" "/" (guide.snippets_are_verbatim checks it),
 * so the guide cannot show code that does not build.  Each snippet then
 * runs in a test that asserts what the guide says it does; what a snippet
 * prints is captured and checked.
 *
 * Statement snippets sit at column 0 inside their test so that the text is
 * the guide's, indentation included. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "test_util.h"

static weft_runtime *rt;

static void setup(void)
{
    rt = test_runtime(2);
}

static void teardown(void)
{
    weft_set_log(NULL, NULL);
    weft_runtime_destroy(&rt);
}

TestSuite(guide, .init = setup, .fini = teardown, .timeout = 30);

#define assert_has(hay, needle) \
    cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in:\n%s", (needle), (hay))

/* ---- the guide itself: every C block appears verbatim in this file ---- */

/* The source root, found from __FILE__ (meson compiles with a path relative
 * to the build directory): tried relative to the working directory, then to
 * the build directory above the test executable.  $WEFT_SRC_ROOT wins. */
static char *read_source_file(const char *rel)
{
    static const char self[] = "tests/api/test_guide.c";
    const char *file = __FILE__;
    size_t flen = strlen(file), slen = strlen(self);
    cr_assert(flen >= slen && strcmp(file + flen - slen, self) == 0, "__FILE__ is %s", file);
    char root[4096], path[8192];
    snprintf(root, sizeof root, "%.*s", (int)(flen - slen), file);

    char candidates[3][8192];
    int n = 0;
    const char *env = getenv("WEFT_SRC_ROOT");
    if (env)
        snprintf(candidates[n++], sizeof candidates[0], "%s/", env);
    snprintf(candidates[n++], sizeof candidates[0], "%s", root);
    if (root[0] != '/') {
        char exe[4096];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = '\0';
            /* <build>/tests/test_api_guide -> <build>/ */
            for (int up = 0; up < 2; up++) {
                char *slash = strrchr(exe, '/');
                if (slash)
                    *slash = '\0';
            }
            snprintf(candidates[n++], sizeof candidates[0], "%s/%s", exe, root);
        }
    }
    for (int i = 0; i < n; i++) {
        int plen = snprintf(path, sizeof path, "%s%s", candidates[i], rel);
        if (plen < 0 || (size_t)plen >= sizeof path)
            continue;   /* too long to be a real path */
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        cr_assert_not_null(m);
        char chunk[4096];
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
            fwrite(chunk, 1, got, m);
        fclose(f);
        fclose(m);
        return buf;
    }
    cr_assert_fail("cannot find %s from __FILE__ %s (set WEFT_SRC_ROOT)", rel, file);
    return NULL;
}

/* The output block of the guide marked <!-- output: NAME -->: what the
 * guide shows a snippet printing (caller frees). */
static char *guide_output(const char *name)
{
    char *guide = read_source_file("docs/GUIDE.md");
    char marker[128];
    snprintf(marker, sizeof marker, "<!-- output: %s -->\n```\n", name);
    const char *start = strstr(guide, marker);
    cr_assert_not_null(start, "docs/GUIDE.md has no output block %s", name);
    start += strlen(marker);
    const char *end = strstr(start, "```\n");
    cr_assert_not_null(end, "output block %s is not closed", name);
    char *out = strndup(start, (size_t)(end - start));
    cr_assert_not_null(out);
    free(guide);
    return out;
}

Test(guide, snippets_are_verbatim)
{
    char *guide = read_source_file("docs/GUIDE.md");
    char *self = read_source_file("tests/api/test_guide.c");
    /* The MPI section's snippets run under mpirun, with weft-dist's tests. */
    char *dist = read_source_file("tests/dist/guide_cases.c");
    int snippets = 0, c_blocks = 0;
    char names[64][64];
    const char *p = guide;
    for (const char *fence = p; (fence = strstr(fence, "```c\n")) != NULL; fence += 5)
        if (fence == guide || fence[-1] == '\n')
            c_blocks++;
    static const char marker[] = "<!-- snippet: ";
    for (const char *m = strstr(p, marker); m; m = strstr(m + 1, marker)) {
        const char *name = m + strlen(marker);
        const char *end = strstr(name, " -->\n");
        cr_assert_not_null(end, "unterminated snippet marker");
        cr_assert_lt(end - name, 63, "snippet name too long");
        cr_assert_lt(snippets, 64);
        snprintf(names[snippets], sizeof names[0], "%.*s", (int)(end - name), name);
        for (int i = 0; i < snippets; i++)
            cr_assert_str_neq(names[i], names[snippets], "snippet %s named twice", names[i]);
        const char *code = end + strlen(" -->\n");
        cr_assert(strncmp(code, "```c\n", 5) == 0,
                  "snippet %s: the marker must be followed by a ```c line", names[snippets]);
        code += 5;
        const char *close = strstr(code, "\n```\n");
        cr_assert_not_null(close, "snippet %s: no closing fence", names[snippets]);
        /* "/" "* snippet: NAME *" "/" then the block's lines, newline included. */
        char *want = NULL;
        size_t want_len = 0;
        FILE *w = open_memstream(&want, &want_len);
        cr_assert_not_null(w);
        fprintf(w, "/* snippet: %s */\n%.*s\n", names[snippets], (int)(close - code), code);
        fclose(w);
        cr_assert(strstr(self, want) != NULL || strstr(dist, want) != NULL,
                  "snippet %s of docs/GUIDE.md does not appear verbatim in test_guide.c "
                  "(or tests/dist/guide_cases.c):\n%s", names[snippets], want);
        free(want);
        snippets++;
    }
    cr_assert_eq(snippets, c_blocks, "%d ```c blocks but %d snippet markers", c_blocks, snippets);
    cr_assert_geq(snippets, 15, "only %d snippets found", snippets);
    free(dist);
    free(self);
    free(guide);
}

/* ---- Eager and traced ---- */

Test(guide, runtime)
{
    weft_runtime_destroy(&rt);  /* the snippet makes its own */
/* snippet: runtime */
weft_runtime *rt;
int rc = weft_runtime_create(NULL, &rt);     /* $WEFT_NUM_THREADS workers, or one per CPU */
if (rc) {
    fprintf(stderr, "weft_runtime_create: %s: %s\n", weft_err_name(rc), weft_errmsg());
    exit(1);
}
/* ... */
weft_runtime_destroy(&rt);                   /* joins the workers; rt becomes NULL */
/* end snippet */
    cr_assert_null(rt);
}

/* snippet: body */
/* y = 2x + 1.  `user` counts the times the body runs: a C side effect,
 * like print("Tracing") in a tf.function. */
static int affine(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    ++*(int *)user;
    weft_value *y = weft_mul(cx, args[0], weft_const_f64(cx, 2.0));
    outs[0] = weft_add(cx, y, weft_const_f64(cx, 1.0));
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, eager)
{
    capture_begin();
/* snippet: eager */
weft_ctx *cx;
weft_eager_begin(rt, &cx);
weft_tensor *t;
weft_tensor_create(WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 1, 2, 3 }, &t);
weft_value *x = weft_eager_value(cx, t);   /* the context takes a reference */
weft_tensor_release(t);
weft_value *sq = weft_mul(cx, x, x);       /* computed now: 1 4 9 */
weft_value *y;
int runs = 0;
affine(cx, &sq, &y, &runs);                /* a body is plain C: run it eagerly */
const double *v = weft_tensor_data(weft_value_tensor(y));
printf("%g %g %g\n", v[0], v[1], v[2]);    /* 3 9 19 */
weft_eager_end(&cx);                       /* frees x, sq and y too */
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "3 9 19\n");
    cr_assert_eq(runs, 1);
    cr_assert_null(cx);
    free(out);
}

Test(guide, traced)
{
    capture_begin();
/* snippet: traced */
int runs = 0;
weft_function_desc d = { .name = "affine", .body = affine, .user = &runs,
                         .n_args = 1, .n_outs = 1 };
weft_function *f;
weft_function_create(rt, &d, &f);

weft_tensor *x, *y;
weft_tensor_create(WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 1, 2, 3 }, &x);
weft_arg a = weft_arg_tensor(x);
for (int i = 0; i < 3; i++) {
    weft_function_call(f, &a, 1, &y, 1);    /* the first call traces */
    const double *v = weft_tensor_data(y);
    printf("%g %g %g (body ran %d time)\n", v[0], v[1], v[2], runs);
    weft_tensor_release(y);
}
weft_tensor_release(x);
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "3 5 7 (body ran 1 time)\n"
                          "3 5 7 (body ran 1 time)\n"
                          "3 5 7 (body ran 1 time)\n");
    free(out);
}

/* ---- Signatures and retracing ---- */

/* snippet: static-body */
/* op_tf(x) = 2 * x, for a static scalar x. */
static int op_tf(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    printf("Tracing\n");
    int64_t x;
    if (weft_value_static_i64(args[0], &x) == 0 && x < 0)
        return WEFT_EINVAL;             /* C control flow on a static value: trace time */
    outs[0] = weft_mul(cx, args[0], weft_const_i64(cx, 2));
    return weft_ctx_status(cx);
}
/* end snippet */

static weft_function *make_op_tf(void)
{
    weft_function_desc d = { .name = "op_tf", .body = op_tf, .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

Test(guide, static_args)
{
    weft_function *f = make_op_tf();
    capture_begin();
/* snippet: static-args */
int64_t xs[] = { 1, 2, 3, 3 };
for (int i = 0; i < 4; i++) {
    weft_arg a = weft_arg_i64(xs[i]);
    weft_tensor *y;
    weft_function_call(f, &a, 1, &y, 1);
    printf("op_tf(%lld) = %lld\n", (long long)xs[i], (long long)*(const int64_t *)weft_tensor_data(y));
    weft_tensor_release(y);
}
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "Tracing\nop_tf(1) = 2\n"
                          "Tracing\nop_tf(2) = 4\n"
                          "Tracing\nop_tf(3) = 6\n"
                          "op_tf(3) = 6\n"
                          "traced 3 times\n");
    char *shown = guide_output("static-args");
    cr_assert_str_eq(out, shown, "docs/GUIDE.md shows another output");
    free(shown);
    free(out);
    weft_function_destroy(&f);
}

/* snippet: dropout-body */
/* Dropout with a seed per step: args[1] is an i64[] tensor. */
static int dropout_step(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_dropout(cx, args[0], 0.5, args[1]);
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, dropout_seed_per_step)
{
    weft_function_desc d = { .name = "dropout_step", .body = dropout_step, .n_args = 2,
                             .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    capture_begin();
/* snippet: dropout-steps */
float ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
weft_tensor *x;
weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 8 }, ones, &x);
for (int64_t step = 0; step < 3; step++) {
    weft_tensor *seed;
    weft_tensor_create(WEFT_I64, 0, NULL, &step, &seed);
    weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(seed) };
    weft_tensor *y;
    weft_function_call(f, a, 2, &y, 1);
    const float *v = weft_tensor_data(y);
    printf("step %lld:", (long long)step);
    for (int i = 0; i < 8; i++)
        printf(" %g", v[i]);
    printf("\n");
    weft_tensor_release(y);
    weft_tensor_release(seed);
}
weft_tensor_release(x);
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));
/* end snippet */
    char *out = capture_end();
    assert_has(out, "traced 1 times\n");
    /* Every value is 0 or 2, and the three masks differ. */
    char lines[3][128];
    cr_assert_eq(sscanf(out, "%127[^\n]\n%127[^\n]\n%127[^\n]", lines[0], lines[1], lines[2]), 3,
                 "%s", out);
    for (int k = 0; k < 3; k++)
        for (const char *p = strchr(lines[k], ':') + 1; *p; p += 2)
            cr_assert(p[0] == ' ' && (p[1] == '0' || p[1] == '2'), "line %d: %s", k, lines[k]);
    cr_assert(strcmp(lines[0], lines[1]) != 0 && strcmp(lines[1], lines[2]) != 0, "%s", out);
    char *shown = guide_output("dropout-steps");
    cr_assert_str_eq(out, shown, "docs/GUIDE.md shows another output");
    free(shown);
    free(out);
    weft_function_destroy(&f);
}

/* snippet: cnn-body */
/* A small CNN's loss: images [batch, 8, 8, 1], i32 labels [batch], and
 * the weights as arguments too (a training loop passes new ones each
 * step without a retrace). */
static int cnn_loss(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = args[0], *labels = args[1], *filters = args[2], *bias = args[3];
    const int64_t two[2] = { 2, 2 };
    weft_value *h = weft_conv2d(cx, x, filters, NULL, WEFT_PADDING_SAME, NULL);
    h = weft_relu(cx, weft_bias_add(cx, h, bias));              /* [batch, 8, 8, 4] */
    h = weft_max_pool2d(cx, h, two, two, WEFT_PADDING_VALID);    /* [batch, 4, 4, 4] */
    h = weft_reshape(cx, h, 2, (const int64_t[]){ -1, 64 });
    weft_value *logits = weft_matmul(cx, h, args[4]);           /* [batch, 3] */
    weft_value *loss = weft_sparse_softmax_cross_entropy_with_logits(cx, labels, logits);
    outs[0] = weft_mean(cx, loss, 0);
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, cnn_loss_over_batches)
{
    capture_begin();
/* snippet: cnn-calls */
weft_spec sig[5];
const char *sig_text[5] = { "f32[?,8,8,1]", "i32[?]", "f32[3,3,1,4]", "f32[4]", "f32[64,3]" };
for (int i = 0; i < 5; i++)
    weft_spec_parse(sig_text[i], &sig[i]);
weft_function_desc d = { .name = "cnn_loss", .body = cnn_loss, .n_args = 5, .n_outs = 1,
                         .input_signature = sig };
weft_function *f;
weft_function_create(rt, &d, &f);
/* Weights: filters of 1/8, no bias, dense columns of 0, 1/64 and -1/64. */
float filters[36], bias[4] = { 0 }, dense[192];
for (int i = 0; i < 36; i++)
    filters[i] = 0.125f;
for (int i = 0; i < 192; i++)
    dense[i] = (float)(i % 3 - (i % 3 == 2) * 3) / 64;
weft_tensor *w[3];
weft_tensor_create(WEFT_F32, 4, (int64_t[]){ 3, 3, 1, 4 }, filters, &w[0]);
weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 4 }, bias, &w[1]);
weft_tensor_create(WEFT_F32, 2, (int64_t[]){ 64, 3 }, dense, &w[2]);
for (int64_t batch = 2; batch <= 5; batch += 3) {
    float images[5 * 64];
    int32_t labels[5];
    for (int i = 0; i < batch * 64; i++)
        images[i] = (float)(i % 64 / 8) / 4;   /* brighter rows lower down */
    for (int i = 0; i < batch; i++)
        labels[i] = i % 3;
    weft_tensor *x, *l, *loss;
    weft_tensor_create(WEFT_F32, 4, (int64_t[]){ batch, 8, 8, 1 }, images, &x);
    weft_tensor_create(WEFT_I32, 1, &batch, labels, &l);
    weft_arg a[5] = { weft_arg_tensor(x), weft_arg_tensor(l), weft_arg_tensor(w[0]),
                      weft_arg_tensor(w[1]), weft_arg_tensor(w[2]) };
    weft_function_call(f, a, 5, &loss, 1);
    printf("batch %lld: loss %.3f\n", (long long)batch, *(const float *)weft_tensor_data(loss));
    weft_tensor_release(loss);
    weft_tensor_release(l);
    weft_tensor_release(x);
}
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));
for (int i = 0; i < 3; i++)
    weft_tensor_release(w[i]);
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    /* The definition, in double precision: 0.91234 and 1.22875 (batch 5:
     * the labels 0, 1, 2, 0, 1 of logits 0, 1.0546875, -1.0546875). */
    cr_assert_str_eq(out, "batch 2: loss 0.912\nbatch 5: loss 1.229\ntraced 1 times\n");
    char *shown = guide_output("cnn-calls");
    cr_assert_str_eq(out, shown, "docs/GUIDE.md shows another output");
    free(shown);
    free(out);
}

/* snippet: positives-body */
/* The mean of the positive scores, and the distinct labels of those rows:
 * how many there are depends on the values. */
static int positives(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *scores = args[0], *labels = args[1];
    weft_value *keep = weft_gt(cx, scores, weft_const_f64(cx, 0));
    weft_value *u[2];
    weft_unique(cx, weft_boolean_mask(cx, labels, keep, 0), u);
    outs[0] = weft_mean(cx, weft_boolean_mask(cx, scores, keep, 0), 0);
    outs[1] = u[0];
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, positives_traced_once)
{
    capture_begin();
/* snippet: positives-calls */
weft_spec sig[2];
weft_spec_parse("f32[?]", &sig[0]);
weft_spec_parse("i32[?]", &sig[1]);
weft_function_desc d = { .name = "positives", .body = positives, .n_args = 2, .n_outs = 2,
                         .input_signature = sig };
weft_function *f;
weft_function_create(rt, &d, &f);
const float scores[2][6] = { { 1, -2, 3, 0, 2, -1 }, { -1, 0.5f, -3, 0.5f } };
const int32_t labels[2][6] = { { 3, 9, 1, 9, 3, 4 }, { 2, 7, 2, 7 } };
const int64_t n[2] = { 6, 4 };
for (int k = 0; k < 2; k++) {
    weft_tensor *s, *l, *out[2];
    weft_tensor_create(WEFT_F32, 1, &n[k], scores[k], &s);
    weft_tensor_create(WEFT_I32, 1, &n[k], labels[k], &l);
    weft_arg a[2] = { weft_arg_tensor(s), weft_arg_tensor(l) };
    weft_function_call(f, a, 2, out, 2);
    printf("n %lld: mean %.3f, labels", (long long)n[k], *(const float *)weft_tensor_data(out[0]));
    for (int64_t i = 0; i < weft_tensor_numel(out[1]); i++)
        printf(" %d", ((const int32_t *)weft_tensor_data(out[1]))[i]);
    printf("\n");
    for (int i = 0; i < 2; i++)
        weft_tensor_release(out[i]);
    weft_tensor_release(l);
    weft_tensor_release(s);
}
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    /* Positive scores 1, 3, 2 (labels 3, 1, 3), then 0.5, 0.5 (7, 7). */
    cr_assert_str_eq(out, "n 6: mean 2.000, labels 3 1\nn 4: mean 0.500, labels 7\n"
                          "traced 1 times\n");
    char *shown = guide_output("positives-calls");
    cr_assert_str_eq(out, shown, "docs/GUIDE.md shows another output");
    free(shown);
    free(out);
}

/* snippet: lstsq-body */
/* The least-squares line through points (x, y): the design matrix
 * [x, 1] solved by weft_lstsq, and that matrix's singular values. */
static int fit_line(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = weft_expand_dims(cx, args[0], 1), *y = weft_expand_dims(cx, args[1], 1);
    weft_value *cols[2] = { x, weft_ones_like(cx, x) };
    weft_value *a = weft_concat(cx, cols, 2, 1);                     /* [n, 2] */
    weft_value *s[1];
    weft_svd(cx, a, false, false, s);                                /* s only */
    outs[0] = weft_squeeze(cx, weft_lstsq(cx, a, y, 0.0, false), 1); /* slope, intercept */
    outs[1] = s[0];
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, least_squares_line)
{
    capture_begin();
/* snippet: lstsq-calls */
weft_spec sig[2];
weft_spec_parse("f64[5]", &sig[0]);
weft_spec_parse("f64[5]", &sig[1]);
weft_function_desc d = { .name = "fit_line", .body = fit_line, .n_args = 2, .n_outs = 2,
                         .input_signature = sig };
weft_function *f;
weft_function_create(rt, &d, &f);
const double xs[5] = { 0, 1, 2, 3, 4 };
const double ys[2][5] = { { 1.1, 2.9, 5, 7.1, 8.9 }, { 3, 2, 1, 0, -1 } };
const int64_t n = 5;
for (int k = 0; k < 2; k++) {
    weft_tensor *x, *y, *out[2];
    weft_tensor_create(WEFT_F64, 1, &n, xs, &x);
    weft_tensor_create(WEFT_F64, 1, &n, ys[k], &y);
    weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
    weft_function_call(f, a, 2, out, 2);
    const double *line = weft_tensor_data(out[0]), *s = weft_tensor_data(out[1]);
    printf("slope %.3f, intercept %.3f (singular values %.3f, %.3f)\n", line[0], line[1],
           s[0], s[1]);
    for (int i = 0; i < 2; i++)
        weft_tensor_release(out[i]);
    weft_tensor_release(y);
    weft_tensor_release(x);
}
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    /* y = 2x + 1 with noise 0.1, -0.1, 0, 0.1, -0.1: slope 2 - 0.02, intercept
     * 5 - 1.98 * 2; then y = 3 - x exactly.  [x, 1]^T [x, 1] = [[30, 10], [10, 5]],
     * whose eigenvalues are (35 +- sqrt(1025)) / 2. */
    cr_assert_str_eq(out, "slope 1.980, intercept 1.040 (singular values 5.789, 1.222)\n"
                          "slope -1.000, intercept 3.000 (singular values 5.789, 1.222)\n"
                          "traced 1 times\n");
    char *shown = guide_output("lstsq-calls");
    cr_assert_str_eq(out, shown, "docs/GUIDE.md shows another output");
    free(shown);
    free(out);
}

Test(guide, last_retrace)
{
    weft_function *f = make_op_tf();
    weft_arg one = weft_arg_i64(1), two = weft_arg_i64(2);
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, &one, 1, &y, 1), 0);
    weft_tensor_release(y);
    cr_assert_eq(weft_function_call(f, &two, 1, &y, 1), 0);
    weft_tensor_release(y);
    capture_begin();
/* snippet: last-retrace */
weft_retrace why;
weft_function_last_retrace(f, &why);
printf("arg %d, dim %d: %s\n", why.arg, why.dim, why.reason);
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "arg 0, dim -1: arg 0: static value i64=2 does not match cached i64=1\n");
    free(out);
    weft_function_destroy(&f);
}

Test(guide, last_retrace_shape)
{
    int runs = 0;
    weft_function_desc d = { .name = "affine", .body = affine, .user = &runs,
                             .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    for (int64_t n = 3; n <= 4; n++) {
        weft_tensor *x = NULL, *y = NULL;
        cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, NULL, &x), 0);
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    weft_retrace why;
    cr_assert_eq(weft_function_last_retrace(f, &why), 0);
    cr_assert_eq(why.arg, 0);
    cr_assert_eq(why.dim, 0);
    cr_assert_str_eq(why.reason,
                     "arg 0: shape f64[4] does not match cached f64[3] (dim 0: 4 vs 3)");
    weft_function_destroy(&f);
}

/* snippet: log-sink */
static void my_log(int level, const char *msg, void *user)
{
    (void)user;
    printf("%s %s\n", level >= WEFT_LOG_WARN ? "WARN" : "info", msg);
}
/* end snippet */

Test(guide, retrace_log)
{
    setenv("WEFT_LOG", "retrace", 1);  /* read when a function is created */
    weft_function *f = make_op_tf();
    unsetenv("WEFT_LOG");
    capture_begin();
/* snippet: log */
weft_set_log(my_log, NULL);             /* NULL: back to stderr */
for (int64_t i = 1; i <= 6; i++) {      /* six new static values in six calls */
    weft_arg a = weft_arg_i64(i);
    weft_tensor *y;
    weft_function_call(f, &a, 1, &y, 1);
    weft_tensor_release(y);
}
weft_set_log(NULL, NULL);
/* end snippet */
    char *out = capture_end();
    /* WEFT_LOG=retrace: a line per trace, with its reason. */
    assert_has(out, "info weft: tracing 'op_tf' for (a0: i64=1): first trace\n");
    assert_has(out, "info weft: tracing 'op_tf' for (a0: i64=6): arg 0: static value i64=6 "
                    "does not match cached i64=5\n");
    /* The warning comes once, at the fifth trace within ten calls. */
    assert_has(out, "WARN weft: function 'op_tf' traced 5 times in its last 5 calls");
    const char *w = strstr(out, "WARN");
    cr_assert_null(strstr(w + 1, "WARN"), "warned twice:\n%s", out);
    cr_assert_not_null(strstr(w, "(a0: i64=6)"), "the warning should precede the sixth trace");
    free(out);
    weft_function_destroy(&f);
}

Test(guide, no_retrace_log_without_env)
{
    unsetenv("WEFT_LOG");
    weft_function *f = make_op_tf();
    capture_begin();
    weft_set_log(my_log, NULL);
    for (int64_t i = 1; i <= 3; i++) {
        weft_arg a = weft_arg_i64(i);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0);
        weft_tensor_release(y);
    }
    weft_set_log(NULL, NULL);
    char *out = capture_end();
    cr_assert_str_eq(out, "Tracing\nTracing\nTracing\n");
    free(out);
    weft_function_destroy(&f);
}

/* ---- Input signatures, relaxed retracing, concrete functions ---- */

Test(guide, input_signature)
{
    int runs = 0;
    capture_begin();
/* snippet: input-signature */
weft_spec sig[1];
weft_spec_parse("f64[?]", &sig[0]);          /* like TensorSpec(shape=[None], dtype=float64) */
weft_function_desc d = { .name = "affine", .body = affine, .user = &runs,
                         .n_args = 1, .n_outs = 1, .input_signature = sig };
weft_function *f;
weft_function_create(rt, &d, &f);
for (int64_t n = 1; n <= 5; n++) {           /* five lengths, one trace */
    weft_tensor *x, *y;
    weft_tensor_create(WEFT_F64, 1, &n, NULL, &x);
    weft_arg a = weft_arg_tensor(x);
    weft_function_call(f, &a, 1, &y, 1);
    weft_tensor_release(x);
    weft_tensor_release(y);
}
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));

weft_tensor *bad, *y = NULL;
weft_tensor_create(WEFT_I32, 1, (int64_t[]){ 2 }, NULL, &bad);
weft_arg a = weft_arg_tensor(bad);
int rc = weft_function_call(f, &a, 1, &y, 1);
printf("%s: %s\n", weft_err_name(rc), weft_errmsg());
weft_tensor_release(bad);
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "traced 1 times\n"
                          "WEFT_ESIGNATURE: weft_function_call(affine): arg 0: "
                          "expected f64[?], got i32[2]\n");
    cr_assert_eq(rc, WEFT_ESIGNATURE);
    cr_assert_null(y);
    cr_assert_eq(runs, 1);
    free(out);
}

Test(guide, input_signature_converts_static_scalars)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("i64[]", &sig), 0);
    weft_function_desc d = { .name = "op_tf", .body = op_tf, .n_args = 1, .n_outs = 1,
                             .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    capture_begin();
    for (int64_t v = 1; v <= 3; v++) {
        weft_arg a = weft_arg_i64(v);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(*(const int64_t *)weft_tensor_data(y), 2 * v);
        weft_tensor_release(y);
    }
    char *out = capture_end();
    cr_assert_str_eq(out, "Tracing\n");  /* the static 1, 2, 3 became i64[] tensors */
    free(out);
    weft_function_destroy(&f);
}

Test(guide, reduce_retracing)
{
    int runs = 0;
    capture_begin();
/* snippet: reduce-retracing */
weft_function_desc d = { .name = "affine", .body = affine, .user = &runs,
                         .n_args = 1, .n_outs = 1, .flags = WEFT_REDUCE_RETRACING };
weft_function *f;
weft_function_create(rt, &d, &f);
for (int64_t n = 1; n <= 5; n++) {
    weft_tensor *x, *y;
    weft_tensor_create(WEFT_F64, 1, &n, NULL, &x);
    weft_arg a = weft_arg_tensor(x);
    weft_function_call(f, &a, 1, &y, 1);
    weft_tensor_release(x);
    weft_tensor_release(y);
}
weft_function_print_signatures(f, stdout);
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    cr_assert_eq(runs, 2, "traced %d times, expected f64[1] then f64[?]", runs);
    assert_has(out, "0: (a0: f64[1]) calls=1 ops=");
    assert_has(out, "1: (a0: f64[?]) calls=4 ops=");
    free(out);
}

Test(guide, reduce_retracing_reason)
{
    int runs = 0;
    weft_function_desc d = { .name = "affine", .body = affine, .user = &runs,
                             .n_args = 1, .n_outs = 1, .flags = WEFT_REDUCE_RETRACING };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    for (int64_t n = 1; n <= 2; n++) {
        weft_tensor *x = NULL, *y = NULL;
        cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, NULL, &x), 0);
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    weft_retrace why;
    cr_assert_eq(weft_function_last_retrace(f, &why), 0);
    size_t len = strlen(why.reason);
    static const char tail[] = "; traced relaxed as (a0: f64[?])";
    cr_assert(len > strlen(tail) && strcmp(why.reason + len - strlen(tail), tail) == 0,
              "reason: %s", why.reason);
    weft_function_destroy(&f);
}

Test(guide, concrete)
{
    weft_spec sig[1];
    cr_assert_eq(weft_spec_parse("i64[]", &sig[0]), 0);
    weft_function_desc d = { .name = "op_tf", .body = op_tf, .n_args = 1, .n_outs = 1,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    capture_begin();
/* snippet: concrete */
weft_concrete *c;
weft_function_get_concrete(f, sig, 1, &c);   /* traces now: prints Tracing */
for (int64_t v = 1; v <= 2; v++) {
    weft_tensor *x, *y;
    weft_tensor_create(WEFT_I64, 0, NULL, &v, &x);
    weft_concrete_call(c, &x, 1, &y, 1);      /* no hashing, no tracing */
    printf("op_tf(%lld) = %lld\n", (long long)v, (long long)*(const int64_t *)weft_tensor_data(y));
    weft_tensor_release(x);
    weft_tensor_release(y);
}
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "Tracing\nop_tf(1) = 2\nop_tf(2) = 4\n");
    cr_assert_eq(weft_function_tracing_count(f), 1);
    free(out);
    weft_function_destroy(&f);
}

Test(guide, run_eagerly)
{
    capture_begin();
/* snippet: run-eagerly */
weft_function_desc d = { .name = "op_tf", .body = op_tf, .n_args = 1, .n_outs = 1,
                         .flags = WEFT_RUN_EAGERLY };      /* or WEFT_RUN_EAGERLY=1 */
weft_function *f;
weft_function_create(rt, &d, &f);
for (int i = 0; i < 2; i++) {
    weft_arg a = weft_arg_i64(1);
    weft_tensor *y;
    weft_function_call(f, &a, 1, &y, 1);   /* prints Tracing every time */
    weft_tensor_release(y);
}
printf("traced %llu times\n", (unsigned long long)weft_function_tracing_count(f));
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "Tracing\nTracing\ntraced 0 times\n");
    free(out);
}

/* ---- Host calls ---- */

/* snippet: host-body */
/* op(x) = 2 * x, run by the host: like tf.py_function, on every call. */
static int op(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    atomic_fetch_add((atomic_int *)user, 1);
    int32_t y = 2 * *(const int32_t *)weft_tensor_data(in[0]);
    return weft_tensor_create(WEFT_I32, 0, NULL, &y, out);   /* weft takes *out */
}

static int op_host(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    printf("Tracing\n");
    weft_spec i32;
    weft_spec_parse("i32[]", &i32);
    outs[0] = weft_host_call(cx, op, user, args, 1, &i32, 0);
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, host_call)
{
    capture_begin();
/* snippet: host-call */
atomic_int calls = 0;
weft_spec sig;
weft_spec_parse("i32[]", &sig);
weft_function_desc d = { .name = "op_tf", .body = op_host, .user = &calls,
                         .n_args = 1, .n_outs = 1, .input_signature = &sig };
weft_function *f;
weft_function_create(rt, &d, &f);
for (int64_t v = 1; v <= 3; v++) {
    weft_arg a = weft_arg_i64(v);           /* converted to an i32[] tensor */
    weft_tensor *y;
    weft_function_call(f, &a, 1, &y, 1);
    printf("op_tf(%lld) = %d\n", (long long)v, *(const int32_t *)weft_tensor_data(y));
    weft_tensor_release(y);
}
printf("op ran %d times\n", atomic_load(&calls));
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "Tracing\nop_tf(1) = 2\nop_tf(2) = 4\nop_tf(3) = 6\nop ran 3 times\n");
    free(out);
}

/* snippet: host-order */
/* Appends its tag to a log: the order of the calls is visible. */
static int tag(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    char *log = user;
    size_t n = strlen(log);
    log[n] = (char)('0' + *(const int32_t *)weft_tensor_data(in[0]));
    log[n + 1] = '\0';
    return weft_tensor_create(WEFT_I32, 0, NULL, weft_tensor_data(in[0]), out);
}

static int three_tags(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_spec i32;
    weft_spec_parse("i32[]", &i32);
    weft_value *one = weft_cast(cx, weft_const_i64(cx, 1), WEFT_I32);
    weft_value *two = weft_cast(cx, weft_const_i64(cx, 2), WEFT_I32);
    weft_host_call(cx, tag, user, &one, 1, &i32, 0);   /* result unused: still runs */
    weft_host_call(cx, tag, user, &two, 1, &i32, 0);   /* after the first */
    outs[0] = weft_host_call(cx, tag, user, args, 1, &i32, 0);
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, host_order)
{
    char log[64] = "";
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("i32[]", &sig), 0);
    weft_function_desc d = { .name = "three_tags", .body = three_tags, .user = log,
                             .n_args = 1, .n_outs = 1, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    for (int i = 0; i < 5; i++) {
        weft_arg a = weft_arg_i64(3);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(*(const int32_t *)weft_tensor_data(y), 3);
        weft_tensor_release(y);
    }
    cr_assert_str_eq(log, "123123123123123");
    weft_function_destroy(&f);
}

/* snippet: host-error */
static int refuse(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)in, (void)n_in, (void)out, (void)user;
    return -1;                                   /* any non-zero return fails the call */
}

static int calls_refuse(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_spec s;
    weft_value_spec(args[0], &s);
    outs[0] = weft_host_call(cx, refuse, NULL, args, 1, &s, 0);
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, host_error)
{
    capture_begin();
/* snippet: host-error-call */
weft_function_desc d = { .name = "refuses", .body = calls_refuse, .n_args = 1, .n_outs = 1 };
weft_function *f;
weft_function_create(rt, &d, &f);
weft_tensor *x, *y = NULL;
weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 4 }, NULL, &x);
weft_arg a = weft_arg_tensor(x);
int rc = weft_function_call(f, &a, 1, &y, 1);    /* y stays NULL */
printf("%s: %s\n", weft_err_name(rc), weft_errmsg());
weft_tensor_release(x);
weft_function_destroy(&f);
/* end snippet */
    char *out = capture_end();
    cr_assert_eq(rc, WEFT_EHOST);
    cr_assert_null(y);
    cr_assert_str_eq(out, "WEFT_EHOST: refuses: %1 = weft_host_call: callback returned -1\n");
    free(out);
}

/* snippet: host-serial */
/* Not thread-safe: WEFT_HOST_SERIAL keeps its calls from overlapping. */
static int unsafe_count(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    int *count = user;
    int seen = *count;
    struct timespec ts = { 0, 100 * 1000 };
    nanosleep(&ts, NULL);                      /* widens the race it would have */
    *count = seen + 1;
    return weft_tensor_create(WEFT_I32, 0, NULL, weft_tensor_data(in[0]), out);
}

static int count_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_spec i32;
    weft_spec_parse("i32[]", &i32);
    outs[0] = weft_host_call(cx, unsafe_count, user, args, 1, &i32, WEFT_HOST_SERIAL);
    return weft_ctx_status(cx);
}
/* end snippet */

/* ---- map and parallel_iterations ---- */

/* snippet: map */
typedef struct mapped { weft_function *fn; unsigned parallel_iterations; } mapped;

/* my_map(x) = map_fn(fn, x, parallel_iterations) */
static int my_map(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const mapped *m = user;
    outs[0] = weft_map(cx, m->fn, args[0], m->parallel_iterations);
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, map)
{
    int count = 0;
    capture_begin();
/* snippet: map-call */
weft_spec i32;
weft_spec_parse("i32[]", &i32);
weft_function_desc dc = { .name = "count", .body = count_body, .user = &count,
                          .n_args = 1, .n_outs = 1, .input_signature = &i32 };
weft_function *fn;
weft_function_create(rt, &dc, &fn);

mapped m = { fn, 8 };                      /* at most 8 iterations in flight */
weft_function_desc dm = { .name = "my_map", .body = my_map, .user = &m,
                          .n_args = 1, .n_outs = 1 };
weft_function *f;
weft_function_create(rt, &dm, &f);

int32_t data[100];
for (int i = 0; i < 100; i++)
    data[i] = i;
weft_tensor *x, *y;
weft_tensor_create(WEFT_I32, 1, (int64_t[]){ 100 }, data, &x);
weft_arg a = weft_arg_tensor(x);
weft_function_call(f, &a, 1, &y, 1);
printf("y[99] = %d, %d host calls\n", ((const int32_t *)weft_tensor_data(y))[99], count);
weft_tensor_release(x);
weft_tensor_release(y);
weft_function_destroy(&f);
weft_function_destroy(&fn);                /* after every function that maps it */
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "y[99] = 99, 100 host calls\n");
    cr_assert_eq(count, 100);
    free(out);
}

Test(guide, map_eager)
{
    int count = 0;
    weft_spec i32;
    cr_assert_eq(weft_spec_parse("i32[]", &i32), 0);
    weft_function_desc dc = { .name = "count", .body = count_body, .user = &count,
                              .n_args = 1, .n_outs = 1, .input_signature = &i32 };
    weft_function *fn = NULL;
    cr_assert_eq(weft_function_create(rt, &dc, &fn), 0);
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, (int64_t[]){ 10 },
                                    (int32_t[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, &t), 0);
/* snippet: map-eager */
weft_ctx *cx;
weft_eager_begin(rt, &cx);
weft_value *y = weft_map(cx, fn, weft_eager_value(cx, t), 10);   /* runs now */
/* end snippet */
    cr_assert_eq(weft_ctx_status(cx), 0, "%s", weft_errmsg());
    const int32_t *v = weft_tensor_data(weft_value_tensor(y));
    for (int i = 0; i < 10; i++)
        cr_assert_eq(v[i], i);
    cr_assert_eq(count, 10);
    weft_eager_end(&cx);
    weft_tensor_release(t);
    weft_function_destroy(&fn);
}

Test(guide, map_error_names_the_iteration)
{
    weft_function_desc dr = { .name = "refuses", .body = calls_refuse, .n_args = 1, .n_outs = 1 };
    weft_function *fn = NULL;
    cr_assert_eq(weft_function_create(rt, &dr, &fn), 0);
    mapped m = { fn, 4 };
    weft_function_desc dm = { .name = "my_map", .body = my_map, .user = &m,
                              .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &dm, &f), 0);
    weft_tensor *x = NULL, *y = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 16 }, NULL, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), WEFT_EHOST);
    cr_assert_null(y);
    assert_has(weft_errmsg(), "iteration");
    assert_has(weft_errmsg(), "callback returned -1");
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&fn);
}

/* Returns 0 without an output until *user is set. */
static int maybe_output(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    if (*(int *)user)
        outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}

Test(guide, missing_output_is_ebody_and_not_cached)
{
    int ready = 0;
    weft_function_desc d = { .name = "maybe", .body = maybe_output, .user = &ready,
                             .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    weft_arg a = weft_arg_f64(2.0);
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), WEFT_EBODY);
    cr_assert_null(y);
    ready = 1;  /* the failed trace was not cached: this call traces again */
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(*(const double *)weft_tensor_data(y), -2.0);
    weft_tensor_release(y);
    weft_function_destroy(&f);
}

/* ---- The runtime ---- */

/* snippet: parallel-for */
static int add_range(size_t begin, size_t end, void *ctx)
{
    long local = 0;
    for (size_t i = begin; i < end; i++)
        local += (long)i;
    atomic_fetch_add((atomic_long *)ctx, local);
    return 0;                                  /* non-zero: cancel and return it */
}
/* end snippet */

/* snippet: parallel-map */
typedef struct bounded { atomic_int in_flight, peak; } bounded;

static int one_item(size_t i, void *ctx)
{
    (void)i;
    bounded *b = ctx;
    int now = atomic_fetch_add(&b->in_flight, 1) + 1;
    for (int p = atomic_load(&b->peak); now > p && !atomic_compare_exchange_weak(&b->peak, &p, now);)
        ;
    struct timespec ts = { 0, 1000 * 1000 };   /* a blocking 1 ms call */
    nanosleep(&ts, NULL);
    atomic_fetch_sub(&b->in_flight, 1);
    return 0;
}
/* end snippet */

Test(guide, loops)
{
    capture_begin();
/* snippet: loops */
atomic_long total = 0;
weft_parallel_for(rt, 1000000, 0, add_range, &total);   /* grain 0: split on demand */
printf("sum = %ld\n", atomic_load(&total));

bounded b = { 0, 0 };
weft_parallel_map(rt, 64, 3, one_item, &b);            /* never more than 3 at once */
printf("peak in flight = %d\n", atomic_load(&b.peak));
/* end snippet */
    char *out = capture_end();
    char want[64];
    snprintf(want, sizeof want, "sum = %ld\n", 1000000L * 999999L / 2);
    assert_has(out, want);
    cr_assert_leq(atomic_load(&b.peak), 3);
    cr_assert_geq(atomic_load(&b.peak), 1);
    free(out);
}

static int cancel_at_500(size_t begin, size_t end, void *ctx)
{
    (void)ctx;
    return begin <= 500 && 500 < end ? 42 : 0;
}

Test(guide, loop_error_is_returned)
{
    cr_assert_eq(weft_parallel_for(rt, 1000, 10, cancel_at_500, NULL), 42);
}

/* snippet: group */
typedef struct fib_arg { weft_runtime *rt; int n; long result; } fib_arg;

static void fib(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->result = a->n;
        return;
    }
    fib_arg x = { a->rt, a->n - 1, 0 }, y = { a->rt, a->n - 2, 0 };
    weft_group g;                              /* lives on this stack frame */
    weft_group_init(&g, a->rt);
    weft_spawn(&g, fib, &x);                   /* may be stolen by another worker */
    fib(&y);                                   /* meanwhile, do the other half */
    weft_group_wait(&g);                       /* helps run work until x is done */
    a->result = x.result + y.result;
}
/* end snippet */

Test(guide, group)
{
    capture_begin();
/* snippet: group-call */
fib_arg root = { rt, 20, 0 };
weft_group g;
weft_group_init(&g, rt);
weft_spawn(&g, fib, &root);                    /* the root runs on a worker */
int rc = weft_group_wait(&g);
printf("fib(20) = %ld (rc %d)\n", root.result, rc);
/* end snippet */
    char *out = capture_end();
    cr_assert_str_eq(out, "fib(20) = 6765 (rc 0)\n");
    free(out);
}

/* ---- The debug API and the timeline ---- */

Test(guide, debug)
{
    int runs = 0;
    weft_function_desc d = { .name = "affine", .body = affine, .user = &runs,
                             .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0);
    weft_tensor *x = NULL, *y = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, (int64_t[]){ 3 }, NULL, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0);
        weft_tensor_release(y);
    }
    weft_tensor_release(x);
    capture_begin();
/* snippet: debug */
weft_function_stats st;
weft_function_get_stats(f, &st);
printf("calls %llu, hits %llu, traces %llu, cached %llu\n",
       (unsigned long long)st.calls, (unsigned long long)st.hits,
       (unsigned long long)st.traces, (unsigned long long)st.cached);
weft_function_print_signatures(f, stdout);   /* index: signature calls ops traced->compiled */
weft_function_print_ops(f, 0, stdout);       /* the compiled op list of concrete function 0 */

weft_runtime_stats rs;
weft_runtime_get_stats(rt, &rs);             /* tasks, steals, steal_attempts, sleeps */
/* end snippet */
    char *out = capture_end();
    assert_has(out, "calls 2, hits 1, traces 1, cached 1\n");
    assert_has(out, "0: (a0: f64[3]) calls=2 ops=");
    assert_has(out, "= arg 0 : f64[3]\n");
    assert_has(out, "return %");
    /* The guide shows this output whole: the op list is the compiler's, so
     * a compiler change that alters it must update docs/GUIDE.md too. */
    char *shown = guide_output("debug");
    cr_assert_str_eq(out, shown, "docs/GUIDE.md section 9 shows another output");
    free(shown);
    (void)rs;
    free(out);
    weft_function_destroy(&f);
}

Test(guide, profile)
{
    char path[] = "/tmp/weft-guide-XXXXXX.json";
    int fd = mkstemps(path, 5);
    cr_assert_geq(fd, 0);
    close(fd);
    int count = 0;
    weft_spec i32;
    cr_assert_eq(weft_spec_parse("i32[]", &i32), 0);
    weft_function_desc dc = { .name = "count", .body = count_body, .user = &count,
                              .n_args = 1, .n_outs = 1, .input_signature = &i32 };
    weft_function *fn = NULL;
    cr_assert_eq(weft_function_create(rt, &dc, &fn), 0);
    mapped m = { fn, 4 };
    weft_function_desc dm = { .name = "my_map", .body = my_map, .user = &m,
                              .n_args = 1, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &dm, &f), 0);
    weft_tensor *x = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, (int64_t[]){ 8 }, NULL, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    weft_tensor *y = NULL;
/* snippet: profile */
weft_profile_begin(rt, path);                /* e.g. "out.json" */
weft_function_call(f, &a, 1, &y, 1);         /* traces, maps, runs host calls */
weft_profile_end(rt);                        /* writes the file */
/* end snippet */
    cr_assert_not_null(y);
    weft_tensor_release(y);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_function_destroy(&fn);
    FILE *j = fopen(path, "r");
    cr_assert_not_null(j);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, j);
    buf[n] = '\0';
    fclose(j);
    unlink(path);
    assert_has(buf, "\"traceEvents\"");
    assert_has(buf, "\"cat\":\"trace\"");
    assert_has(buf, "\"cat\":\"map\"");
    assert_has(buf, "\"cat\":\"host\"");
}

Test(guide, errors)
{
    capture_begin();
/* snippet: errors */
weft_ctx *cx;
weft_eager_begin(rt, &cx);
weft_value *a = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 3 }, 1.0);
weft_value *b = weft_fill(cx, WEFT_F32, 1, (int64_t[]){ 4 }, 1.0);
weft_value *c = weft_add(cx, a, b);            /* NULL: the shapes do not broadcast */
weft_value *d = weft_neg(cx, c);               /* NULL in, NULL out: no need to check each op */
int rc = weft_ctx_status(cx);                  /* the first error, sticky */
printf("%s (%s): %s\n", weft_err_name(rc), weft_strerror(rc), weft_errmsg());
printf("c %s, d %s\n", c ? "set" : "NULL", d ? "set" : "NULL");
weft_eager_end(&cx);
/* end snippet */
    char *out = capture_end();
    cr_assert_null(c);
    cr_assert_null(d);
    cr_assert_eq(rc, WEFT_ESHAPE, "rc %d: %s", rc, out);
    assert_has(out, "c NULL, d NULL");
    assert_has(out, "WEFT_ESHAPE (incompatible shapes): ");
    assert_has(out, "f32[3]");
    assert_has(out, "f32[4]");
    free(out);
}

/* ---- Composition and control flow ---- */

/* snippet: compose-call */
/* g(x, y) = x * y + y */
static int g_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, weft_mul(cx, args[0], args[1]), args[1]);
    return weft_ctx_status(cx);
}

/* f(x) = g(x, x) - 1: g's body is traced into f's op list */
static int f_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_function *g = user;
    weft_value *in[2] = { args[0], args[0] }, *r;
    int rc = weft_call(cx, g, in, 2, &r, 1);
    outs[0] = weft_sub(cx, r, weft_const_f64(cx, 1));
    return rc;
}
/* end snippet */

Test(guide, compose_call)
{
    capture_begin();
/* snippet: compose-call-run */
weft_function_desc gd = { .name = "g", .body = g_body, .n_args = 2, .n_outs = 1 };
weft_function *g, *f;
weft_function_create(rt, &gd, &g);
weft_function_desc fd = { .name = "f", .body = f_body, .user = g, .n_args = 1, .n_outs = 1 };
weft_function_create(rt, &fd, &f);               /* g must outlive f */
weft_tensor *x, *y;
weft_tensor_create(WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 1, 2, 3 }, &x);
weft_arg a = weft_arg_tensor(x);
weft_function_call(f, &a, 1, &y, 1);
weft_tensor_print(y, stdout);
weft_function_print_ops(f, 0, stdout);
printf("f traced %llu, g traced %llu\n", (unsigned long long)weft_function_tracing_count(f),
       (unsigned long long)weft_function_tracing_count(g));
weft_tensor_release(x);
weft_tensor_release(y);
weft_function_destroy(&f);
weft_function_destroy(&g);
/* end snippet */
    char *out = capture_end();
    char *want = guide_output("compose-call-run");
    cr_assert_str_eq(out, want);
    free(want);
    free(out);
}

/* snippet: compose-collatz */
/* cond_fn(n, steps) = n > 1 */
static int above_one(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_gt(cx, args[0], weft_const_i64(cx, 1));
    return weft_ctx_status(cx);
}

/* The branches: n / 2 and 3n + 1 */
static int halve(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_div(cx, args[0], weft_const_i64(cx, 2));
    return weft_ctx_status(cx);
}

static int triple(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, weft_mul(cx, args[0], weft_const_i64(cx, 3)), weft_const_i64(cx, 1));
    return weft_ctx_status(cx);
}

typedef struct collatz_fns { weft_function *above_one, *step, *halve, *triple; } collatz_fns;

/* body_fn(n, steps) = (n even ? n / 2 : 3n + 1, steps + 1) */
static int step(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    collatz_fns *c = user;
    weft_value *even = weft_eq(cx, weft_mod(cx, args[0], weft_const_i64(cx, 2)),
                               weft_const_i64(cx, 0));
    outs[1] = weft_add(cx, args[1], weft_const_i64(cx, 1));
    return weft_cond(cx, even, c->halve, c->triple, args, 1, outs, 1);
}

/* collatz(n) = the steps from n down to 1 */
static int collatz(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    collatz_fns *c = user;
    weft_value *vars[2] = { args[0], weft_const_i64(cx, 0) }, *res[2];
    int rc = weft_while_loop(cx, c->above_one, c->step, vars, 2, res);
    outs[0] = res[1];
    return rc;
}
/* end snippet */

static weft_function *guide_fn(const char *name, weft_body_fn body, void *user, size_t n_args,
                               size_t n_outs, const weft_spec *sig)
{
    weft_function_desc d = { .name = name, .body = body, .user = user, .n_args = n_args,
                             .n_outs = n_outs, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

Test(guide, compose_collatz)
{
    collatz_fns c;
    c.above_one = guide_fn("above_one", above_one, NULL, 2, 1, NULL);
    c.step = guide_fn("step", step, &c, 2, 2, NULL);
    c.halve = guide_fn("halve", halve, NULL, 1, 1, NULL);
    c.triple = guide_fn("triple", triple, NULL, 1, 1, NULL);
    weft_spec sig;
    weft_spec_parse("i64[]", &sig);
    weft_function *f = guide_fn("collatz", collatz, &c, 1, 1, &sig);
    capture_begin();
/* snippet: compose-collatz-run */
for (int64_t n = 25; n <= 27; n++) {
    weft_arg a = weft_arg_i64(n);            /* the signature makes it an i64[] tensor */
    weft_tensor *steps;
    weft_function_call(f, &a, 1, &steps, 1);
    printf("%lld: %lld steps\n", (long long)n, (long long)*(const int64_t *)weft_tensor_data(steps));
    weft_tensor_release(steps);
}
printf("traced: collatz %llu, step %llu, halve %llu\n",
       (unsigned long long)weft_function_tracing_count(f),
       (unsigned long long)weft_function_tracing_count(c.step),
       (unsigned long long)weft_function_tracing_count(c.halve));
/* end snippet */
    char *out = capture_end();
    char *want = guide_output("compose-collatz-run");
    cr_assert_str_eq(out, want);
    free(want);
    free(out);
    /* Callers first: step's program holds halve and triple. */
    weft_function_destroy(&f);
    weft_function_destroy(&c.step);
    weft_function_destroy(&c.above_one);
    weft_function_destroy(&c.triple);
    weft_function_destroy(&c.halve);
}

/* snippet: compose-map-ex */
/* Per row: (row - mean) / std, and that row's sum */
static int normalize_row(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_div(cx, weft_sub(cx, args[0], args[1]), args[2]);
    outs[1] = weft_sum(cx, outs[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

/* x f32[?,3]: the mean and std of each column are captured by every row */
static int normalize(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_function *row_fn = user;
    weft_value *mean = weft_mean(cx, args[0], 0);
    weft_value *dev = weft_sub(cx, args[0], mean);
    weft_value *std = weft_sqrt(cx, weft_mean(cx, weft_mul(cx, dev, dev), 0));
    weft_value *caps[2] = { mean, std };
    return weft_map_ex(cx, row_fn, args, 1, caps, 2, outs, 2, 4);
}
/* end snippet */

Test(guide, compose_map_ex)
{
    weft_function *row_fn = guide_fn("normalize_row", normalize_row, NULL, 3, 2, NULL);
    weft_spec sig;
    weft_spec_parse("f32[?,3]", &sig);
    weft_function *f = guide_fn("normalize", normalize, row_fn, 1, 2, &sig);
    capture_begin();
/* snippet: compose-map-ex-run */
weft_tensor *x, *outs[2];
weft_tensor_create(WEFT_F32, 2, (int64_t[]){ 4, 3 },
                   (float[]){ 3, 10, 0, 9, 10, 4, 11, 20, 0, 17, 20, 4 }, &x);
weft_arg a = weft_arg_tensor(x);
weft_function_call(f, &a, 1, outs, 2);
weft_tensor_print(outs[0], stdout);
weft_tensor_print(outs[1], stdout);
/* end snippet */
    char *out = capture_end();
    char *want = guide_output("compose-map-ex-run");
    cr_assert_str_eq(out, want);
    free(want);
    free(out);
    weft_tensor_release(x);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_function_destroy(&f);
    weft_function_destroy(&row_fn);
}

/* snippet: compose-scan */
/* One step of a moving average: keep * avg + (1 - keep) * row */
static int average_step(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *keep = args[2];
    weft_value *fresh = weft_sub(cx, weft_const_f64(cx, 1.0), keep);
    outs[0] = weft_add(cx, weft_mul(cx, keep, args[0]), weft_mul(cx, fresh, args[1]));
    return weft_ctx_status(cx);
}

/* x f32[?,2]: the moving average of each column, from the first row on */
static int moving_average(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_function *step = user;
    weft_value *keep = weft_const(cx, WEFT_F32, 0.5);
    return weft_scan(cx, step, NULL, 1, args, 1, &keep, 1, outs, 0);
}
/* end snippet */

Test(guide, compose_scan)
{
    weft_function *step = guide_fn("average_step", average_step, NULL, 3, 1, NULL);
    weft_spec sig;
    weft_spec_parse("f32[?,2]", &sig);
    weft_function *f = guide_fn("moving_average", moving_average, step, 1, 1, &sig);
    capture_begin();
/* snippet: compose-scan-run */
weft_tensor *x, *avg;
weft_tensor_create(WEFT_F32, 2, (int64_t[]){ 4, 2 }, (float[]){ 2, 4, 4, 0, 0, 8, 6, 2 }, &x);
weft_arg a = weft_arg_tensor(x);
weft_function_call(f, &a, 1, &avg, 1);
weft_tensor_print(avg, stdout);
/* end snippet */
    char *out = capture_end();
    char *want = guide_output("compose-scan-run");
    cr_assert_str_eq(out, want);
    free(want);
    free(out);
    weft_tensor_release(x);
    weft_tensor_release(avg);
    weft_function_destroy(&f);
    weft_function_destroy(&step);
}

/* snippet: grad-step */
/* loss(w, b; x, t) = mean((w * x + b - t)^2) */
static int loss_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *pred = weft_add(cx, weft_mul(cx, args[0], args[2]), args[1]);
    outs[0] = weft_mean(cx, weft_square(cx, weft_sub(cx, pred, args[3])), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

/* One step of gradient descent: w, b, x f32[?], t f32[?] -> w', b', loss */
static int train_step(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_value *loss, *grads[2];
    if (weft_gradients(cx, loss_body, NULL, args, 4, 2, &loss, grads) < 0)
        return weft_ctx_status(cx);
    weft_value *rate = weft_const_f64(cx, 0.1);
    outs[0] = weft_sub(cx, args[0], weft_mul(cx, rate, grads[0]));
    outs[1] = weft_sub(cx, args[1], weft_mul(cx, rate, grads[1]));
    outs[2] = loss;
    return weft_ctx_status(cx);
}
/* end snippet */

Test(guide, grad_step)
{
    weft_spec sig[4];
    weft_spec_parse("f32[]", &sig[0]);
    weft_spec_parse("f32[]", &sig[1]);
    weft_spec_parse("f32[?]", &sig[2]);
    weft_spec_parse("f32[?]", &sig[3]);
    weft_function_desc d = { .name = "train_step", .body = train_step, .n_args = 4, .n_outs = 3,
                             .input_signature = sig };
    weft_function *train = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &train), 0, "%s", weft_errmsg());
    capture_begin();
/* snippet: grad-step-run */
/* t = 2 x - 1, from w = b = 0 */
weft_tensor *w, *b, *x, *t, *loss = NULL;
weft_tensor_create(WEFT_F32, 0, NULL, (float[]){ 0 }, &w);
weft_tensor_create(WEFT_F32, 0, NULL, (float[]){ 0 }, &b);
weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 4 }, (float[]){ 0, 1, 2, 3 }, &x);
weft_tensor_create(WEFT_F32, 1, (int64_t[]){ 4 }, (float[]){ -1, 1, 3, 5 }, &t);
for (int step = 0; step < 500; step++) {
    weft_arg a[4] = { weft_arg_tensor(w), weft_arg_tensor(b), weft_arg_tensor(x),
                      weft_arg_tensor(t) };
    weft_tensor *next[3];
    weft_function_call(train, a, 4, next, 3);
    weft_tensor_release(w);
    weft_tensor_release(b);
    weft_tensor_release(loss);
    w = next[0], b = next[1], loss = next[2];
}
weft_function_stats st;
weft_function_get_stats(train, &st);
printf("w %.3f, b %.3f, loss %.4f; traced %llu times\n", *(float *)weft_tensor_data(w),
       *(float *)weft_tensor_data(b), *(float *)weft_tensor_data(loss),
       (unsigned long long)st.traces);
/* end snippet */
    char *out = capture_end();
    char *want = guide_output("grad-step-run");
    cr_assert_str_eq(out, want);
    free(want);
    free(out);
    weft_tensor *all[5] = { w, b, x, t, loss };
    for (int i = 0; i < 5; i++)
        weft_tensor_release(all[i]);
    weft_function_destroy(&train);
}
