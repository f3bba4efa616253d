/* The gradient rule of crop_and_resize (weft_gradients): TensorFlow's
 * CropAndResizeGradImage and CropAndResizeGradBoxes kernels, written with
 * the public ops.  The samples' positions are recomputed as the kernel
 * computes them (trace/kernel_crop.c); a sample outside the image passes
 * nothing back.
 * - images: bilinear spreads each g over the four pixels around its sample
 *   with the sample's weights (one scatter-add of all four corners);
 *   nearest gives it to the pixel it read.
 * - boxes (bilinear): a sample row moves with y1 by (h - 1) (1 - y /
 *   (crop_h - 1)) and with y2 by (h - 1) y / (crop_h - 1) (half (h - 1)
 *   each for one row), and the output moves with the row by the
 *   difference of the bottom and top pixels, weighed along x; columns
 *   alike.  Nearest's output is a step function of the boxes: zeros
 *   (TensorFlow applies the bilinear formula there too). */
#include "trace/grad.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k
#define give weft__grad_give
#define wants weft__grad_wants

/* The samples of every box along rows (axis 0: the box's y1, y2) or
 * columns (axis 1: x1, x2), each [boxes, count]. */
typedef struct samples {
    weft_value *lerp;       /* the sample's distance from lo */
    weft_value *valid;      /* bool: inside [0, size - 1] */
    weft_value *lo, *hi;    /* i64: the pixels before and after (0 when not valid) */
    weft_value *nearest;    /* i64: the pixel nearest (round half away from zero) */
    weft_value *d_first;    /* the sample's derivative by the first coordinate */
    weft_value *d_second;   /* and by the second ([1, count]) */
} samples;

static weft_value *column(weft_ctx *cx, weft_value *boxes, int64_t c)
{
    return weft_slice(cx, boxes, (const int64_t[]){ 0, c }, (const int64_t[]){ WEFT_END, c + 1 },
                      NULL);
}

static weft_value *as_index(const rule_in *r, weft_value *valid, weft_value *v)
{
    return weft_cast(r->cx, weft_where(r->cx, valid, v, k(r, 0.0)), WEFT_I64);
}

static samples along(const rule_in *r, int axis, int64_t size, int64_t count)
{
    weft_ctx *cx = r->cx;
    weft_dtype dt = weft__value_spec(r->b)->dtype;
    weft_value *v1 = column(cx, r->b, axis), *v2 = column(cx, r->b, axis + 2);   /* [n, 1] */
    weft_value *last = k(r, (double)(size - 1)), *at;
    samples s;
    if (count > 1) {
        weft_value *grid = weft_cast(cx, weft_range(cx, WEFT_I64, 0, count, 1), dt);
        grid = weft_reshape(cx, grid, 2, (const int64_t[]){ 1, count });
        weft_value *scale = weft_div(cx, weft_mul(cx, weft_sub(cx, v2, v1), last),
                                     k(r, (double)(count - 1)));
        at = weft_add(cx, weft_mul(cx, v1, last), weft_mul(cx, grid, scale));
        s.d_second = weft_mul(cx, grid, k(r, (double)(size - 1) / (double)(count - 1)));
        s.d_first = weft_sub(cx, last, s.d_second);
    } else {
        at = weft_mul(cx, weft_mul(cx, weft_add(cx, v1, v2), k(r, 0.5)), last);
        s.d_first = s.d_second = weft_fill(cx, dt, 2, (const int64_t[]){ 1, 1 },
                                           0.5 * (double)(size - 1));
    }
    s.valid = weft_logical_and(cx, weft_ge(cx, at, k(r, 0.0)), weft_le(cx, at, last));
    weft_value *lo = weft_floor(cx, at);
    s.lerp = weft_sub(cx, at, lo);
    s.lo = as_index(r, s.valid, lo);
    s.hi = as_index(r, s.valid, weft_ceil(cx, at));
    s.nearest = weft_add(cx, s.lo, weft_cast(cx, weft_ge(cx, s.lerp, k(r, 0.5)), WEFT_I64));
    return s;
}

/* [n, ch, cw, 3] index tuples (image, row, column) of one corner, from
 * image [n, 1, 1], rows [n, ch] and cols [n, cw]. */
static weft_value *corner(weft_ctx *cx, weft_value *image, weft_value *rows, weft_value *cols,
                          weft_value *zeros)
{
    weft_value *parts[3] = { weft_add(cx, image, zeros),
                             weft_add(cx, weft_expand_dims(cx, rows, -1), zeros),
                             weft_add(cx, weft_expand_dims(cx, cols, -2), zeros) };
    return weft_stack(cx, parts, 3, -1);
}

/* a [n, p] times b [n, q] as [n, p, q]. */
static weft_value *outer(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_mul(cx, weft_expand_dims(cx, a, -1), weft_expand_dims(cx, b, -2));
}

/* A weight [n, ch, cw] where both samples are valid, else 0. */
static weft_value *masked(const rule_in *r, weft_value *w, weft_value *both)
{
    return weft_where(r->cx, both, w, k(r, 0.0));
}

static int images_rule(const rule_in *r, const samples *y, const samples *x, weft_value *both,
                       weft_value *image, weft_value *zeros)
{
    weft_ctx *cx = r->cx;
    if (r->n->attr.resize.method == WEFT_RESIZE_NEAREST) {
        weft_value *at = corner(cx, image, y->nearest, x->nearest, zeros);
        weft_value *g = weft_mul(cx, r->g, weft_expand_dims(cx, masked(r, k(r, 1.0), both), -1));
        return give(r, 0, weft_scatter_nd_add(cx, weft_zeros_like(cx, r->a), at, g));
    }
    weft_value *one = k(r, 1.0);
    weft_value *wy[2] = { weft_sub(cx, one, y->lerp), y->lerp };
    weft_value *wx[2] = { weft_sub(cx, one, x->lerp), x->lerp };
    weft_value *ys[2] = { y->lo, y->hi }, *xs[2] = { x->lo, x->hi }, *at[4], *g[4];
    for (int c = 0; c < 4; c++) {
        weft_value *w = masked(r, outer(cx, wy[c / 2], wx[c % 2]), both);
        at[c] = corner(cx, image, ys[c / 2], xs[c % 2], zeros);
        g[c] = weft_mul(cx, r->g, weft_expand_dims(cx, w, -1));
    }
    weft_value *all_at = weft_concat(cx, at, 4, 0), *all_g = weft_concat(cx, g, 4, 0);
    return give(r, 0, weft_scatter_nd_add(cx, weft_zeros_like(cx, r->a), all_at, all_g));
}

/* The boxes' [n, 4] gradient (bilinear). */
static int boxes_rule(const rule_in *r, const samples *y, const samples *x, weft_value *both,
                      weft_value *image, weft_value *zeros)
{
    weft_ctx *cx = r->cx;
    weft_value *px[4];   /* top left, top right, bottom left, bottom right */
    weft_value *ys[2] = { y->lo, y->hi }, *xs[2] = { x->lo, x->hi };
    for (int c = 0; c < 4; c++)
        px[c] = weft_gather_nd(cx, r->a, corner(cx, image, ys[c / 2], xs[c % 2], zeros));
    weft_value *one = k(r, 1.0);
    weft_value *xl = weft_expand_dims(cx, weft_expand_dims(cx, x->lerp, -2), -1);  /* [n,1,cw,1] */
    weft_value *yl = weft_expand_dims(cx, weft_expand_dims(cx, y->lerp, -1), -1);  /* [n,ch,1,1] */
    weft_value *by_y = weft_add(cx, weft_mul(cx, weft_sub(cx, one, xl), weft_sub(cx, px[2], px[0])),
                                weft_mul(cx, xl, weft_sub(cx, px[3], px[1])));
    weft_value *by_x = weft_add(cx, weft_mul(cx, weft_sub(cx, one, yl), weft_sub(cx, px[1], px[0])),
                                weft_mul(cx, yl, weft_sub(cx, px[3], px[2])));
    /* Per sample, summed over the channels: [n, ch, cw]. */
    by_y = masked(r, weft_sum(cx, weft_mul(cx, by_y, r->g), -1), both);
    by_x = masked(r, weft_sum(cx, weft_mul(cx, by_x, r->g), -1), both);
    /* By row [n, ch] and by column [n, cw]. */
    weft_value *rows = weft_sum(cx, by_y, -1), *cols = weft_sum(cx, by_x, -2);
    weft_value *d[4] = { weft_sum(cx, weft_mul(cx, rows, y->d_first), -1),
                         weft_sum(cx, weft_mul(cx, cols, x->d_first), -1),
                         weft_sum(cx, weft_mul(cx, rows, y->d_second), -1),
                         weft_sum(cx, weft_mul(cx, cols, x->d_second), -1) };
    return give(r, 1, weft_stack(cx, d, 4, 1));
}

int weft__grad_crop_and_resize(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *is = weft__value_spec(r->a), *ys = weft__value_spec(r->y);
    if (is->rank != 4 || is->dims[1] == WEFT_DIM_ANY || is->dims[2] == WEFT_DIM_ANY)
        return weft__grad_unsupported(r, "of images whose height or width is unknown while "
                                         "tracing");
    bool nearest = r->n->attr.resize.method == WEFT_RESIZE_NEAREST;
    samples y = along(r, 0, is->dims[1], ys->dims[1]), x = along(r, 1, is->dims[2], ys->dims[2]);
    weft_value *both = weft_logical_and(cx, weft_expand_dims(cx, y.valid, -1),
                                        weft_expand_dims(cx, x.valid, -2));
    weft_value *image = weft_cast(cx, r->t->val[r->n->in[2]], WEFT_I64);
    image = weft_expand_dims(cx, weft_expand_dims(cx, image, -1), -1);   /* [n, 1, 1] */
    /* i64 zeros [n, ch, cw], to broadcast the index parts to. */
    weft_value *zeros = weft_cast(cx, weft_zeros_like(cx, both), WEFT_I64);
    int rc = wants(r, 0) ? images_rule(r, &y, &x, both, image, zeros) : 0;
    if (rc < 0 || !wants(r, 1))
        return rc;
    if (nearest)
        return give(r, 1, weft_zeros_like(cx, r->b));
    return boxes_rule(r, &y, &x, both, image, zeros);
}
