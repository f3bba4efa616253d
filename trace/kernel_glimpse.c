/* extract_glimpse (tf.image.extract_glimpse, TensorFlow 2's ExtractGlimpseV2):
 * a [glimpse_h, glimpse_w] window of each image at its offset, the part
 * of the window outside the image taken from the noise (a scalar, or a
 * tensor of the result's shape that the composition in ops_glimpse.c
 * drew).  The window's first row and column follow TensorFlow's float
 * arithmetic and its conversion toward zero; an offset that is NaN,
 * infinite or past 2^40 pixels leaves the window wholly outside, as
 * TensorFlow's conversion of it does.  The work is cut by output rows. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

/* A first row or column that puts the window wholly outside any image. */
#define GLIMPSE_OUTSIDE (-(INT64_C(1) << 62))

typedef struct glimpse_job {
    const weft__node *n;
    const weft_tensor *images, *offsets, *noise;
    char *out;
    int64_t batch, h, w, c, gh, gw;
    size_t esz, chunks;
} glimpse_job;

/* The window's first pixel along a dim of size dim from the offset v, as
 * TensorFlow 2 computes it: only normalized and centered offsets name
 * the window's centre; the others name its first pixel. */
static int64_t glimpse_start(float v, int64_t dim, int64_t size, int flags)
{
    if (flags & WEFT__GLIMPSE_NORMALIZED) {
        v *= (float)dim;
        if (flags & WEFT__GLIMPSE_CENTERED) {
            v /= 2.0f;
            v += (float)dim / 2.0f;
            v -= (float)size / 2.0f;
        }
    } else if (flags & WEFT__GLIMPSE_CENTERED) {
        v += (float)dim / 2.0f;
    }
    if (!(v > -0x1p40f && v < 0x1p40f))
        return GLIMPSE_OUTSIDE;
    return (int64_t)v;
}

static float offset_at(const weft_tensor *offsets, int64_t i)
{
    if (offsets->dtype == WEFT_F32)
        return ((const float *)weft_tensor_data(offsets))[i];
    return (float)((const double *)weft_tensor_data(offsets))[i];
}

/* Elements [begin, end) of output row `row` from the noise. */
static void fill_noise(const glimpse_job *j, int64_t row, int64_t begin, int64_t end)
{
    size_t at = ((size_t)row * (size_t)j->gw * (size_t)j->c + (size_t)begin) * j->esz;
    size_t bytes = (size_t)(end - begin) * j->esz;
    if (j->noise->rank != 0) {
        memcpy(j->out + at, (const char *)weft_tensor_data(j->noise) + at, bytes);
        return;
    }
    for (size_t q = 0; q < bytes; q += j->esz)
        memcpy(j->out + at + q, weft_tensor_data(j->noise), j->esz);
}

static void glimpse_row(const glimpse_job *j, int64_t row)
{
    int64_t b = row / j->gh, i = row % j->gh, flags = j->n->attr.resize.method;
    int64_t y = glimpse_start(offset_at(j->offsets, 2 * b), j->h, j->gh, (int)flags);
    int64_t x = glimpse_start(offset_at(j->offsets, 2 * b + 1), j->w, j->gw, (int)flags);
    int64_t r = y + i, width = j->gw * j->c;
    if (r < 0 || r >= j->h || x >= j->w || x + j->gw <= 0) {
        fill_noise(j, row, 0, width);
        return;
    }
    int64_t first = x < 0 ? -x : 0, last = j->w - x < j->gw ? j->w - x : j->gw;
    fill_noise(j, row, 0, first * j->c);
    const char *src = (const char *)weft_tensor_data(j->images) +
                      (size_t)(((b * j->h + r) * j->w + x + first) * j->c) * j->esz;
    memcpy(j->out + ((size_t)(row * width + first * j->c)) * j->esz, src,
           (size_t)((last - first) * j->c) * j->esz);
    fill_noise(j, row, last * j->c, width);
}

static int glimpse_chunk(size_t cb, size_t ce, void *ctx)
{
    const glimpse_job *j = ctx;
    uint64_t rows = (uint64_t)(j->batch * j->gh);
    for (size_t c = cb; c < ce; c++) {
        uint64_t r0 = weft__chunk_begin(rows, j->chunks, c),
                 r1 = weft__chunk_begin(rows, j->chunks, c + 1);
        for (uint64_t r = r0; r < r1; r++)
            glimpse_row(j, (int64_t)r);
    }
    return 0;
}

int weft__eval_glimpse(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                       weft_tensor *out)
{
    glimpse_job j = { .n = n, .images = in[0], .offsets = in[1], .noise = in[2] };
    j.out = weft__tensor_mut(out);
    j.batch = in[0]->dims[0];
    j.h = in[0]->dims[1];
    j.w = in[0]->dims[2];
    j.c = in[0]->dims[3];
    j.gh = n->attr.resize.size[0];
    j.gw = n->attr.resize.size[1];
    j.esz = weft_dtype_size(in[0]->dtype);
    uint64_t rows = (uint64_t)(j.batch * j.gh);
    if (rows == 0 || j.gw == 0 || j.c == 0)
        return 0;
    j.chunks = weft__chunk_count_of(rt, rows * (uint64_t)(j.gw * j.c), rows);
    return weft__run_chunks(rt, j.chunks, glimpse_chunk, &j);
}

int weft__infer_glimpse(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_extract_glimpse";
    const weft_spec *im = &in[0], *off = &in[1], *noise = &in[2];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if ((im->dtype != WEFT_F32 && im->dtype != WEFT_F64) ||
        (off->dtype != WEFT_F32 && off->dtype != WEFT_F64))
        return weft__errorf(WEFT_EDTYPE, "%s: the input %s or the offsets %s are not f32 or f64",
                            fn, weft__spec_str(im, s1, sizeof s1),
                            weft__spec_str(off, s2, sizeof s2));
    bool batch_known = im->rank == 4 && im->dims[0] >= 0 && off->rank == 2 && off->dims[0] >= 0;
    if (im->rank != 4 || im->dims[1] == 0 || im->dims[2] == 0 || off->rank != 2 ||
        (off->dims[1] != 2 && off->dims[1] >= 0) ||
        (batch_known && im->dims[0] != off->dims[0]))
        return weft__errorf(WEFT_ESHAPE, "%s: the input %s is not [batch, height, width, "
                            "channels] with a height and width of 1 or more, or the offsets %s "
                            "not [batch, 2]", fn,
                            weft__spec_str(im, s1, sizeof s1), weft__spec_str(off, s2, sizeof s2));
    *out = *im;
    out->dims[0] = im->dims[0] >= 0 ? im->dims[0] : off->dims[0];
    out->dims[1] = n->attr.resize.size[0];
    out->dims[2] = n->attr.resize.size[1];
    /* The composition draws the noise of the result's shape, or makes it a
     * scalar: what the kernel reads. */
    if (noise->dtype != im->dtype || (noise->rank != 0 && noise->rank != 4))
        return weft__errorf(WEFT_EDTYPE, "%s: the noise %s is not a scalar or a window of the "
                            "input's dtype", fn, weft__spec_str(noise, s1, sizeof s1));
    return 0;
}
