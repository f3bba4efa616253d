/* The ops of one draw per slice.  weft_random_shuffle: every slice once
 * and intact, the same bits eagerly and traced on 1, 2 and 4 workers, an
 * order that is the seed's (the same seed, the same order; another seed,
 * another), each of the 6 orders of 3 slices about equally often over 600
 * seeds, a first dim unknown while tracing.  The random flips: each image
 * kept or mirrored exactly, both in one batch, about half of single
 * images flipped over 200 seeds, a batch unknown while tracing.  Random
 * brightness, contrast, saturation and hue: the adjustment of the same
 * name by the seed's one draw, in range.  The random crop: a block of the
 * value at offsets that cover every place about equally over 250 seeds,
 * dims unknown while tracing.  The refused calls. */
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_shuffle, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static int shuffle_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_random_shuffle(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static weft_tensor *seed_of(int64_t s)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &s, &t), 0);
    return t;
}

/* rows x 3 i32, row r holding r, 1000 + r, 2000 + r. */
static weft_tensor *rows_of(int64_t rows)
{
    int32_t *v = malloc((size_t)rows * 3 * sizeof *v);
    for (int64_t r = 0; r < rows; r++)
        for (int c = 0; c < 3; c++)
            v[r * 3 + c] = (int32_t)(1000 * c + r);
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 2, (const int64_t[]){ rows, 3 }, v, &t), 0);
    free(v);
    return t;
}

/* out holds every row of rows_of(rows) once, intact; its order into
 * order[] (may be NULL). */
static void expect_permutation(const weft_tensor *out, int64_t rows, int32_t *order)
{
    cr_assert_eq(weft_tensor_rank(out), 2);
    cr_assert_eq(weft_tensor_dims(out)[0], rows);
    cr_assert_eq(weft_tensor_dims(out)[1], 3);
    const int32_t *g = weft_tensor_data(out);
    bool *seen = calloc((size_t)rows, 1);
    for (int64_t r = 0; r < rows; r++) {
        int32_t src = g[r * 3];
        cr_assert(src >= 0 && src < rows && !seen[src], "row %lld is row %d again or none",
                  (long long)r, src);
        seen[src] = true;
        cr_assert(g[r * 3 + 1] == 1000 + src && g[r * 3 + 2] == 2000 + src,
                  "row %lld is not row %d intact", (long long)r, src);
        if (order)
            order[r] = src;
    }
    free(seen);
}

Test(ops_shuffle, every_row_once_and_the_seeds_order)
{
    enum { ROWS = 50 };
    weft_tensor *x = rows_of(ROWS);
    int32_t order[3][ROWS];
    const int64_t seeds[3] = { 7, 7, 8 };
    for (int k = 0; k < 3; k++) {
        weft_tensor *args[2] = { x, seed_of(seeds[k]) }, *out;
        op_results_everywhere(shuffle_body, NULL, args, 2, &out, 1, "shuffle");
        expect_permutation(out, ROWS, order[k]);
        weft_tensor_release(out);
        weft_tensor_release(args[1]);
    }
    cr_assert(memcmp(order[0], order[1], sizeof order[0]) == 0, "seed 7 gave two orders");
    cr_assert(memcmp(order[0], order[2], sizeof order[0]) != 0, "seeds 7 and 8 gave one order");
    bool moved = false;
    for (int r = 0; r < ROWS; r++)
        moved |= order[0][r] != r;
    cr_assert(moved, "seed 7 left every row in place");
    weft_tensor_release(x);
}

/* 600 seeds over 3 rows: each of the 6 orders 100 times on average; the
 * bounds are more than 4 standard deviations (9.1) away, and the seeds
 * are fixed, so the counts are too. */
Test(ops_shuffle, every_order_about_equally_often)
{
    weft_tensor *x = rows_of(3);
    int counts[6] = { 0 };
    weft_ctx *cx = NULL;
    for (int64_t s = 0; s < 600; s++) {
        cr_assert_eq(weft_eager_begin(rts[1], &cx), 0, "%s", weft_errmsg());
        weft_tensor *seed = seed_of(s);
        weft_value *v = weft_random_shuffle(cx, weft_eager_value(cx, x), weft_eager_value(cx, seed));
        cr_assert_not_null(v, "%s", weft_errmsg());
        int32_t order[3];
        expect_permutation(weft_value_tensor(v), 3, order);
        /* The order's index among the 6: the first row (3 ways), then
         * whether the other two are swapped. */
        counts[order[0] * 2 + (order[1] > order[2])]++;
        weft_eager_end(&cx);
        weft_tensor_release(seed);
    }
    for (int k = 0; k < 6; k++)
        cr_assert(counts[k] >= 60 && counts[k] <= 140, "order %d came %d times of 600", k,
                  counts[k]);
    weft_tensor_release(x);
}

/* Traced once for i32[?, 3], called with 5 and 9 rows. */
Test(ops_shuffle, a_first_dim_unknown_while_tracing)
{
    weft_spec sig[2] = { { .dtype = WEFT_I32, .rank = 2, .dims = { -1, 3 } },
                         { .dtype = WEFT_I64, .rank = 0 } };
    weft_function_desc d = { .name = "shuffle", .body = shuffle_body, .n_args = 2, .n_outs = 1,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    for (int64_t rows = 5; rows <= 9; rows += 4) {
        weft_tensor *x = rows_of(rows), *seed = seed_of(rows), *y = NULL;
        weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(seed) };
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        expect_permutation(y, rows, NULL);
        weft_tensor_release(x);
        weft_tensor_release(seed);
        weft_tensor_release(y);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
}

/* ---- Random flips ---------------------------------------------------------- */

static int flip_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    bool left_right = *(const bool *)user;
    outs[0] = left_right ? weft_random_flip_left_right(cx, a[0], a[1])
                         : weft_random_flip_up_down(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* b images of h x w x 2 i32, every element distinct (its position). */
static weft_tensor *images_of(int rank, int64_t b, int64_t h, int64_t w)
{
    int64_t n = b * h * w * 2;
    int32_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (int32_t)i;
    weft_tensor *t = NULL;
    const int64_t dims4[4] = { b, h, w, 2 };
    cr_assert_eq(weft_tensor_create(WEFT_I32, rank, rank == 4 ? dims4 : dims4 + 1, v, &t), 0);
    free(v);
    return t;
}

/* Whether image k of out is image k of x mirrored (1), kept (0), or
 * neither (-1). */
static int flip_state(const weft_tensor *out, const weft_tensor *x, int64_t k, int64_t h,
                      int64_t w, bool left_right)
{
    const int32_t *g = weft_tensor_data(out), *v = weft_tensor_data(x);
    bool kept = true, mirrored = true;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++)
            for (int64_t c = 0; c < 2; c++) {
                int64_t at = ((k * h + i) * w + j) * 2 + c;
                int64_t mi = left_right ? i : h - 1 - i, mj = left_right ? w - 1 - j : j;
                kept &= g[at] == v[at];
                mirrored &= g[at] == v[((k * h + mi) * w + mj) * 2 + c];
            }
    return mirrored ? 1 : kept ? 0 : -1;
}

Test(ops_shuffle, random_flips_keep_or_mirror_each_image)
{
    enum { B = 32, H = 3, W = 4 };
    weft_tensor *x = images_of(4, B, H, W);
    for (int lr = 0; lr < 2; lr++) {
        bool left_right = lr;
        weft_tensor *args[2] = { x, seed_of(11) }, *out;
        op_results_everywhere(flip_body, &left_right, args, 2, &out, 1, "random flip");
        int flipped = 0;
        for (int64_t k = 0; k < B; k++) {
            int st = flip_state(out, x, k, H, W, left_right);
            cr_assert_geq(st, 0, "image %lld is neither kept nor mirrored", (long long)k);
            flipped += st;
        }
        cr_assert(flipped > 0 && flipped < B, "%s: %d of %d images flipped",
                  left_right ? "left_right" : "up_down", flipped, B);
        weft_tensor_release(out);
        weft_tensor_release(args[1]);
    }
    weft_tensor_release(x);
}

/* One image, 200 seeds: flipped about half the time (100 on average; the
 * bounds are more than 5 standard deviations, 7.1, away). */
Test(ops_shuffle, a_single_image_flips_half_the_time)
{
    weft_tensor *x = images_of(3, 1, 2, 3);
    int flipped = 0;
    weft_ctx *cx = NULL;
    for (int64_t s = 0; s < 200; s++) {
        cr_assert_eq(weft_eager_begin(rts[1], &cx), 0, "%s", weft_errmsg());
        weft_tensor *seed = seed_of(s);
        weft_value *v = weft_random_flip_left_right(cx, weft_eager_value(cx, x),
                                                    weft_eager_value(cx, seed));
        cr_assert_not_null(v, "%s", weft_errmsg());
        int st = flip_state(weft_value_tensor(v), x, 0, 2, 3, true);
        cr_assert_geq(st, 0, "seed %lld: neither kept nor mirrored", (long long)s);
        flipped += st;
        weft_eager_end(&cx);
        weft_tensor_release(seed);
    }
    cr_assert(flipped >= 60 && flipped <= 140, "%d of 200 flipped", flipped);
    weft_tensor_release(x);
}

/* Traced once for i32[?, 2, 3, 2], called with batches of 5 and 9. */
Test(ops_shuffle, random_flips_of_a_batch_unknown_while_tracing)
{
    bool up_down = false;
    weft_spec sig[2] = { { .dtype = WEFT_I32, .rank = 4, .dims = { -1, 2, 3, 2 } },
                         { .dtype = WEFT_I64, .rank = 0 } };
    weft_function_desc d = { .name = "flip", .body = flip_body, .user = &up_down, .n_args = 2,
                             .n_outs = 1, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    for (int64_t b = 5; b <= 9; b += 4) {
        weft_tensor *x = images_of(4, b, 2, 3), *seed = seed_of(b), *y = NULL;
        weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(seed) };
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_dims(y)[0], b);
        for (int64_t k = 0; k < b; k++)
            cr_assert_geq(flip_state(y, x, k, 2, 3, false), 0, "batch %lld, image %lld",
                          (long long)b, (long long)k);
        weft_tensor_release(x);
        weft_tensor_release(seed);
        weft_tensor_release(y);
    }
    cr_assert_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
}

/* ---- Random brightness, contrast, saturation and hue ------------------------ */

enum { BRIGHTNESS, CONTRAST, SATURATION, HUE };

typedef struct adjust_case {
    int kind;
    double lo, hi;   /* the factor's [lower, upper), or the delta's [-max_delta, max_delta) */
} adjust_case;

/* outs[0]: the random op; outs[1]: the seed's draw for it. */
static int adjust_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const adjust_case *c = user;
    weft_spec sp;
    weft_value_spec(a[0], &sp);
    weft_dtype dt = sp.dtype;
    switch (c->kind) {
    case BRIGHTNESS: outs[0] = weft_random_brightness(cx, a[0], c->hi, a[1]); break;
    case CONTRAST: outs[0] = weft_random_contrast(cx, a[0], c->lo, c->hi, a[1]); break;
    case SATURATION: outs[0] = weft_random_saturation(cx, a[0], c->lo, c->hi, a[1]); break;
    default: outs[0] = weft_random_hue(cx, a[0], c->hi, a[1]); break;
    }
    outs[1] = c->lo < c->hi ? weft_random_uniform(cx, a[1], dt, 0, NULL, c->lo, c->hi)
                            : weft_fill(cx, dt, 0, NULL, 0.0);
    return weft_ctx_status(cx);
}

/* The public adjustment of c's kind by d. */
static weft_value *adjusted(weft_ctx *cx, const adjust_case *c, weft_value *x, double d)
{
    switch (c->kind) {
    case BRIGHTNESS: return weft_adjust_brightness(cx, x, d);
    case CONTRAST: return weft_adjust_contrast(cx, x, d);
    case SATURATION: return weft_adjust_saturation(cx, x, d);
    default: return weft_adjust_hue(cx, x, d);
    }
}

/* f32 images [2, 3, 4, channels]: 2 channels in [-1, 2.2), or 3 in [0, 1)
 * (RGB, whose saturation a factor changes without clipping it all). */
static weft_tensor *f32_images_of(int64_t channels)
{
    float v[2 * 3 * 4 * 3];
    for (int i = 0; i < 24 * channels; i++)
        v[i] = channels == 3 ? (float)((i * 37) % 23) / 23.0f
                             : (float)((i * 37) % 23) / 7.0f - 1.0f;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 4, (const int64_t[]){ 2, 3, 4, channels }, v, &t),
                 0);
    return t;
}

static weft_tensor *f32_images(void)
{
    return f32_images_of(2);
}

Test(ops_shuffle, random_adjustments_are_the_adjustments_by_one_draw)
{
    weft_tensor *x = f32_images_of(3);
    const adjust_case cases[] = {
        { BRIGHTNESS, -0.5, 0.5 }, { BRIGHTNESS, 0, 0 }, { CONTRAST, 0.2, 1.8 },
        { SATURATION, 0.3, 1.5 }, { HUE, -0.4, 0.4 }, { HUE, 0, 0 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        weft_tensor *args[2] = { x, seed_of(21 + (int64_t)k) }, *out[2];
        op_results_everywhere(adjust_body, (void *)&cases[k], args, 2, out, 2, "adjust");
        float d = *(const float *)weft_tensor_data(out[1]);
        cr_assert(cases[k].lo == cases[k].hi || (d >= cases[k].lo && d < cases[k].hi),
                  "case %zu: draw %g", k, d);
        /* The same adjustment by the drawn value, through the public op. */
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
        weft_value *xv = weft_eager_value(cx, x);
        weft_value *want = adjusted(cx, &cases[k], xv, d);
        cr_assert_not_null(want, "%s", weft_errmsg());
        cr_assert(op_same_bits(out[0], weft_value_tensor(want)), "case %zu differs from the "
                  "adjustment by %g", k, d);
        weft_eager_end(&cx);
        weft_tensor_release(out[0]);
        weft_tensor_release(out[1]);
        weft_tensor_release(args[1]);
    }
    weft_tensor_release(x);
}

/* ---- Random crop -------------------------------------------------------------- */

static int crop_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_random_crop(cx, a[0], user, a[1]);
    return weft_ctx_status(cx);
}

/* A 6 x 5 i32 value holding 100 r + c: a crop's first element names its
 * offsets. */
static weft_tensor *grid(void)
{
    int32_t v[30];
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 5; c++)
            v[r * 5 + c] = 100 * r + c;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 2, (const int64_t[]){ 6, 5 }, v, &t), 0);
    return t;
}

Test(ops_shuffle, random_crop_takes_a_block_at_uniform_offsets)
{
    static const int64_t size[2] = { 2, 3 };
    weft_tensor *x = grid();
    int hits[5][3] = { { 0 } };
    for (int64_t s = 0; s < 250; s++) {
        weft_tensor *args[2] = { x, seed_of(1000 + s) }, *out;
        if (s < 3)
            op_results_everywhere(crop_body, (void *)size, args, 2, &out, 1, "crop");
        else
            cr_assert_eq(op_call(rts[0], crop_body, (void *)size, args, 2, &out, 1, false), 0,
                         "%s", weft_errmsg());
        test_assert_shape(out, WEFT_I32, 2, size, "crop");
        int first = (int)test_element(out, 0), r0 = first / 100, c0 = first % 100;
        cr_assert(r0 <= 4 && c0 <= 2, "offset (%d, %d) leaves the value", r0, c0);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++)
                cr_assert_eq(test_element(out, r * 3 + c), 100 * (r0 + r) + c0 + c);
        hits[r0][c0]++;
        weft_tensor_release(out);
        weft_tensor_release(args[1]);
    }
    /* 15 places, about 17 each: every one between 5 and 35. */
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 3; c++)
            cr_assert(hits[r][c] >= 5 && hits[r][c] <= 35, "offset (%d, %d) drawn %d times", r, c,
                      hits[r][c]);
    /* Rows unknown while tracing; a dim taken whole is not cut. */
    static const int64_t rows_only[2] = { 4, 5 };
    weft_spec sig[2] = { { WEFT_I32, 2, { -1, 5 } }, { WEFT_I64, 0, { 0 } } };
    weft_function *fn = op_signature_function(rts[1], crop_body, (void *)rows_only, sig, 2);
    weft_tensor *seed = seed_of(3), *out = NULL;
    weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(seed) };
    cr_assert_eq(weft_function_call(fn, a, 2, &out, 1), 0, "%s", weft_errmsg());
    test_assert_shape(out, WEFT_I32, 2, rows_only, "crop of unknown rows");
    int r0 = (int)test_element(out, 0) / 100;
    for (int i = 0; i < 20; i++)
        cr_assert_eq(test_element(out, i), 100 * (r0 + i / 5) + i % 5);
    weft_tensor_release(out);
    op_destroy_traced_once(&fn);
    weft_tensor_release(seed);
    weft_tensor_release(x);
}

enum {
    BAD_SCALAR, BAD_SEED, BAD_FLIP_RANK, BAD_FLIP_SEED, BAD_BRIGHT_DELTA, BAD_CONTRAST_RANGE,
    BAD_CONTRAST_INT, BAD_SATURATION_RANGE, BAD_SATURATION_CHANNELS, BAD_HUE_DELTA, BAD_HUE_SEED,
    BAD_CROP_SIZE, BAD_CROP_RANK
};

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: f32 images [2, 3, 4, 2], a seed, an f32 scalar, i32 images [1, 2, 2],
     * f32 RGB images [2, 3, 4, 3]. */
    switch (*(const int *)user) {
    case BAD_SCALAR: outs[0] = weft_random_shuffle(cx, a[2], a[1]); break;
    case BAD_SEED: outs[0] = weft_random_shuffle(cx, a[3], a[2]); break;
    case BAD_FLIP_RANK: outs[0] = weft_random_flip_left_right(cx, a[2], a[1]); break;
    case BAD_FLIP_SEED: outs[0] = weft_random_flip_up_down(cx, a[3], a[2]); break;
    case BAD_BRIGHT_DELTA: outs[0] = weft_random_brightness(cx, a[0], -1, a[1]); break;
    case BAD_CONTRAST_RANGE: outs[0] = weft_random_contrast(cx, a[0], 1, 1, a[1]); break;
    case BAD_CONTRAST_INT: outs[0] = weft_random_contrast(cx, a[3], 0, 1, a[1]); break;
    case BAD_SATURATION_RANGE: outs[0] = weft_random_saturation(cx, a[4], -0.5, 1, a[1]); break;
    case BAD_SATURATION_CHANNELS: outs[0] = weft_random_saturation(cx, a[0], 0, 1, a[1]); break;
    case BAD_HUE_DELTA: outs[0] = weft_random_hue(cx, a[4], 0.75, a[1]); break;
    case BAD_HUE_SEED: outs[0] = weft_random_hue(cx, a[4], 0.25, a[2]); break;
    case BAD_CROP_SIZE:
        outs[0] = weft_random_crop(cx, a[3], (const int64_t[]){ 1, 3, 2 }, a[1]);
        break;
    case BAD_CROP_RANK: outs[0] = weft_random_crop(cx, a[2], (const int64_t[]){ 1 }, a[1]); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_shuffle, refused_calls_name_the_op)
{
    weft_tensor *f = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 0, NULL, (const float[]){ 1.5f }, &f), 0);
    weft_tensor *args[5] = { f32_images(), seed_of(1), f, images_of(3, 1, 2, 2),
                             f32_images_of(3) };
    const op_error_case cases[] = {
        { BAD_SCALAR, WEFT_ESHAPE, "weft_random_shuffle: x f32[] needs a rank of 1 or more" },
        { BAD_SEED, WEFT_EINVAL, "weft_random_shuffle: the seed f32[] is not i32 or i64" },
        { BAD_FLIP_RANK, WEFT_ESHAPE, "weft_random_flip_left_right: images f32[] are not" },
        { BAD_FLIP_SEED, WEFT_EINVAL, "weft_random_flip_up_down: the seed f32[] is not" },
        { BAD_BRIGHT_DELTA, WEFT_EINVAL, "weft_random_brightness: max_delta -1 is not" },
        { BAD_CONTRAST_RANGE, WEFT_EINVAL, "weft_random_contrast: [1, 1) is not a finite range" },
        { BAD_CONTRAST_INT, WEFT_EDTYPE, "weft_random_contrast: " },
        { BAD_SATURATION_RANGE, WEFT_EINVAL, "weft_random_saturation: [-0.5, 1) is not a finite" },
        { BAD_SATURATION_CHANNELS, WEFT_ESHAPE, "weft_random_saturation: f32[2,3,4,2] does not "
                                                "have 3 channels" },
        { BAD_HUE_DELTA, WEFT_EINVAL, "weft_random_hue: max_delta 0.75 is not in [0, 0.5]" },
        { BAD_HUE_SEED, WEFT_EINVAL, "weft_random_hue: the seed f32[] is not" },
        { BAD_CROP_SIZE, WEFT_EINVAL, "weft_random_crop: size[1] 3 is not within 0..2 of value "
                                      "i32[2,2,2]" },
        { BAD_CROP_RANK, WEFT_ESHAPE, "weft_random_crop: value f32[] needs a rank of 1 or more" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 5);
    for (int k = 0; k < 5; k++)
        weft_tensor_release(args[k]);
}
