/* The shape ops' attributes as the compiler sees them: which ops they are,
 * a digest and equality for CSE, the op listing, in-place writes and
 * folding from specs alone. */
#include <inttypes.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/shape.h"

bool weft__is_shape_op(weft__op op)
{
    return weft__op_kind_of(op) == WEFT__KIND_ARRAY || op == WEFT__OP_EXPAND_DIMS ||
           op == WEFT__OP_SQUEEZE;
}

/* The attribute words of n that decide its result, in a fixed order:
 * digest and equality both read them, so they can never disagree.
 * Returns how many were written (at most SHAPE_ATTR_WORDS). */
#define SHAPE_ATTR_WORDS (1 + 3 * WEFT_MAX_RANK)
_Static_assert(WEFT__CHECK_MESSAGE_MAX % 8 == 0 &&
               WEFT__CHECK_MESSAGE_MAX / 8 <= SHAPE_ATTR_WORDS, "a check's message fits the words");

static int attr_words(const weft__node *n, int64_t *w)
{
    int k = 0;
    switch (n->op) {
    case WEFT__OP_TRANSPOSE:
        w[k++] = n->attr.transpose.rank;
        for (int d = 0; d < n->attr.transpose.rank && d < WEFT_MAX_RANK; d++)
            w[k++] = n->attr.transpose.perm[d];
        break;
    case WEFT__OP_SLICE:
        w[k++] = n->attr.slice.rank;
        for (int d = 0; d < n->attr.slice.rank && d < WEFT_MAX_RANK; d++) {
            w[k++] = n->attr.slice.begin[d];
            w[k++] = n->attr.slice.end[d];
            w[k++] = n->attr.slice.step[d];
        }
        break;
    case WEFT__OP_SPLIT:
        w[k++] = n->attr.split.axis;
        w[k++] = n->attr.split.parts;
        w[k++] = n->attr.split.index;
        w[k++] = n->attr.split.rest;
        w[k++] = n->attr.split.lead;
        w[k++] = n->attr.split.size;
        w[k++] = n->attr.split.trail;
        break;
    case WEFT__OP_TILE:
    case WEFT__OP_BROADCAST_TO:
        w[k++] = n->attr.shape.rank;
        for (int d = 0; d < n->attr.shape.rank && d < WEFT_MAX_RANK; d++)
            w[k++] = n->attr.shape.dims[d];
        break;
    case WEFT__OP_FILL_LIKE:
        memcpy(&w[k++], &n->attr.fill.value, sizeof(double));   /* bit for bit: -0.0, NaN */
        break;
    case WEFT__OP_BITCAST:
        w[k++] = n->attr.cast.to;
        break;
    case WEFT__OP_CONFUSION_MATRIX:
        w[k++] = n->attr.confusion.dtype;
        w[k++] = n->attr.confusion.num_classes;
        break;
    case WEFT__OP_NON_MAX_SUPPRESSION: case WEFT__OP_NMS_SCORED: case WEFT__OP_NMS_OVERLAPS:
    case WEFT__OP_NMS_PADDED:
        w[k++] = n->attr.nms.max_output;
        memcpy(&w[k++], &n->attr.nms.iou, sizeof(double));
        memcpy(&w[k++], &n->attr.nms.score, sizeof(double));
        memcpy(&w[k++], &n->attr.nms.sigma, sizeof(double));
        break;
    case WEFT__OP_CANDIDATES: case WEFT__OP_UNIGRAM_CANDIDATES:
        w[k++] = n->attr.sampler.num_sampled;
        w[k++] = n->attr.sampler.range_max;
        w[k++] = n->attr.sampler.unique;
        w[k++] = n->attr.sampler.uniform;
        break;
    case WEFT__OP_BOX_PROPOSALS:
        w[k++] = n->attr.proposals.pre_nms;
        w[k++] = n->attr.proposals.post_nms;
        memcpy(&w[k++], &n->attr.proposals.iou, sizeof(double));
        memcpy(&w[k++], &n->attr.proposals.min_size, sizeof(double));
        break;
    case WEFT__OP_COMBINED_NMS:
        w[k++] = n->attr.cnms.max_per_class;
        w[k++] = n->attr.cnms.per_batch;
        memcpy(&w[k++], &n->attr.cnms.iou, sizeof(double));
        memcpy(&w[k++], &n->attr.cnms.score, sizeof(double));
        break;
    case WEFT__OP_SHAPE_OF:
    case WEFT__OP_TOP_K_VALUES:   /* k is the indices' shape */
    case WEFT__OP_ARGWHERE: case WEFT__OP_UNIQUE_FIRST: case WEFT__OP_UNIQUE_IDX:
    case WEFT__OP_UNIQUE_COUNTS: case WEFT__OP_CHOLESKY: case WEFT__OP_MATRIX_INVERSE:
    case WEFT__OP_MATRIX_DETERMINANT: case WEFT__OP_RANGE_TO: case WEFT__OP_SLOGDET:
    case WEFT__OP_LU: case WEFT__OP_MATRIX_EXPONENTIAL: case WEFT__OP_TRIDIAGONAL_SOLVE:
    case WEFT__OP_MATRIX_SQRT: case WEFT__OP_MATRIX_LOG:
        break;
    case WEFT__OP_SORT:
    case WEFT__OP_ARGSORT:
        w[k++] = n->attr.sort.axis;
        w[k++] = n->attr.sort.descending;
        break;
    case WEFT__OP_TOP_K:
        w[k++] = n->attr.sort.k;
        w[k++] = n->attr.sort.descending;
        break;
    case WEFT__OP_UNSORTED_SEGMENT: case WEFT__OP_GATHER_ND: case WEFT__OP_SCATTER_ND_UPDATE:
    case WEFT__OP_SCATTER_ND_ADD: case WEFT__OP_SCATTER_ND_SUB: case WEFT__OP_SCATTER_ND_MAX:
    case WEFT__OP_SCATTER_ND_MIN: case WEFT__OP_ROLL: case WEFT__OP_REPEAT:
    case WEFT__OP_BINCOUNT:
        w[k++] = n->attr.bincount.dtype;
        w[k++] = n->attr.bincount.minlength;
        w[k++] = n->attr.bincount.maxlength;
        break;
    case WEFT__OP_BOOLEAN_MASK: case WEFT__OP_SEGMENT: case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE: case WEFT__OP_SEARCHSORTED: case WEFT__OP_QR:
    case WEFT__OP_EIGH: case WEFT__OP_EIG: case WEFT__OP_SVD: case WEFT__OP_CTC_LOSS:
    case WEFT__OP_CTC_LOSS_GRAD: case WEFT__OP_ISOTONIC: case WEFT__OP_CTC_BEAM:
    case WEFT__OP_BANDED_SOLVE: case WEFT__OP_CTC_UNIQUE: case WEFT__OP_EDIT_DISTANCE:
    case WEFT__OP_INDEX_SHUFFLE:
        w[k++] = n->attr.index.axis;
        w[k++] = n->attr.index.kind;
        w[k++] = n->attr.index.count;
        break;
    case WEFT__OP_IMAGE_TRANSFORM: {
        int64_t bits;
        memcpy(&bits, &n->attr.transform.fill_value, sizeof bits);
        w[k++] = n->attr.transform.interpolation;
        w[k++] = n->attr.transform.fill_mode;
        w[k++] = n->attr.transform.size[0];
        w[k++] = n->attr.transform.size[1];
        w[k++] = bits;
        break;
    }
    case WEFT__OP_SAMPLE_BOX: {
        const double d[5] = { n->attr.sample_box.covered, n->attr.sample_box.aspect[0],
                              n->attr.sample_box.aspect[1], n->attr.sample_box.area[0],
                              n->attr.sample_box.area[1] };
        for (int i = 0; i < 5; i++)
            memcpy(&w[k++], &d[i], sizeof(double));
        w[k++] = n->attr.sample_box.attempts;
        w[k++] = n->attr.sample_box.use_image;
        break;
    }
    case WEFT__OP_CHECK_NUMERICS: case WEFT__OP_ASSERT:
        for (size_t at = 0; at < sizeof n->attr.check.message; at += sizeof *w) {
            int64_t word = 0;
            memcpy(&word, n->attr.check.message + at, sizeof word);
            w[k++] = word;
        }
        break;
    case WEFT__OP_RANDOM_UNIFORM: case WEFT__OP_RANDOM_NORMAL:
    case WEFT__OP_RANDOM_TRUNCATED_NORMAL: case WEFT__OP_RANDOM_CATEGORICAL:
    case WEFT__OP_RANDOM_GAMMA: case WEFT__OP_RANDOM_POISSON: case WEFT__OP_RANDOM_BINOMIAL:
        w[k++] = n->attr.random.dtype;
        w[k++] = n->attr.random.rank;
        for (int d = 0; d < n->attr.random.rank && d < WEFT_MAX_RANK; d++)
            w[k++] = n->attr.random.dims[d];
        memcpy(&w[k++], &n->attr.random.a, sizeof(double));
        memcpy(&w[k++], &n->attr.random.b, sizeof(double));
        break;
    case WEFT__OP_CONV2D: case WEFT__OP_MAX_POOL2D: case WEFT__OP_AVG_POOL2D:
    case WEFT__OP_DEPTHWISE_CONV2D:
        w[k++] = n->attr.conv.padding;
        for (int d = 0; d < 2; d++) {
            w[k++] = n->attr.conv.window[d];
            w[k++] = n->attr.conv.stride[d];
            w[k++] = n->attr.conv.dilation[d];
        }
        break;
    case WEFT__OP_FFT:
        w[k++] = n->attr.fft.kind;
        w[k++] = n->attr.fft.length;
        w[k++] = n->attr.fft.frame_length;
        w[k++] = n->attr.fft.frame_step;
        break;
    case WEFT__OP_RESIZE: case WEFT__OP_CROP_AND_RESIZE: case WEFT__OP_GLIMPSE:
    case WEFT__OP_FRACTIONAL_POOL:
        w[k++] = n->attr.resize.method;
        w[k++] = n->attr.resize.size[0];
        w[k++] = n->attr.resize.size[1];
        memcpy(&w[k++], &n->attr.resize.extrapolation, sizeof(double));
        w[k++] = n->attr.resize.antialias;
        break;
    default:   /* the ops with one axis */
        w[k++] = n->attr.axis.axis;
        w[k++] = n->attr.axis.scan;
        w[k++] = n->attr.axis.batch;
        break;
    }
    return k;
}

uint64_t weft__shape_attr_digest(const weft__node *n)
{
    int64_t w[SHAPE_ATTR_WORDS];
    int k = attr_words(n, w);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < k; i++)
        h = (h ^ (uint64_t)w[i]) * 0x100000001b3ull;
    return h;
}

bool weft__shape_attr_eq(const weft__node *a, const weft__node *b)
{
    int64_t wa[SHAPE_ATTR_WORDS], wb[SHAPE_ATTR_WORDS];
    int ka = attr_words(a, wa), kb = attr_words(b, wb);
    return a->op == b->op && ka == kb && memcmp(wa, wb, sizeof(int64_t) * (size_t)ka) == 0;
}

static void print_list(FILE *f, const char *name, const int64_t *v, int n)
{
    fprintf(f, "%s[", name);
    for (int d = 0; d < n; d++)
        fprintf(f, "%s%" PRId64, d ? "," : "", v[d]);
    fputc(']', f);
}

static void print_slice(const weft__node *n, FILE *f)
{
    fputc('<', f);
    for (int d = 0; d < n->attr.slice.rank && d < WEFT_MAX_RANK; d++) {
        int64_t e = n->attr.slice.end[d], s = n->attr.slice.step[d];
        fprintf(f, "%s%" PRId64 ":", d ? "," : "", n->attr.slice.begin[d]);
        if (e != WEFT_END)
            fprintf(f, "%" PRId64, e);
        if (s != 1)
            fprintf(f, ":%" PRId64, s);
    }
    fputc('>', f);
}

/* "<ksize=[2,2],strides=[2,2],SAME>"; a conv names its dilations. */
static void print_conv(const weft__node *n, FILE *f)
{
    fputc('<', f);
    bool conv = n->op == WEFT__OP_CONV2D || n->op == WEFT__OP_DEPTHWISE_CONV2D;
    if (!conv) {
        print_list(f, "ksize=", n->attr.conv.window, 2);
        fputc(',', f);
    }
    print_list(f, "strides=", n->attr.conv.stride, 2);
    if (conv) {
        fputc(',', f);
        print_list(f, "dilations=", n->attr.conv.dilation, 2);
    }
    fprintf(f, ",%s>", n->attr.conv.padding == WEFT_PADDING_SAME ? "SAME" : "VALID");
}

void weft__shape_attr_print(const weft__node *n, FILE *f)
{
    switch (n->op) {
    case WEFT__OP_TRANSPOSE: {
        if (n->attr.transpose.rank < 0)
            break;   /* reverse */
        int64_t perm[WEFT_MAX_RANK];
        for (int d = 0; d < n->attr.transpose.rank && d < WEFT_MAX_RANK; d++)
            perm[d] = n->attr.transpose.perm[d];
        fputc('<', f);
        print_list(f, "perm=", perm, n->attr.transpose.rank);
        fputc('>', f);
        break;
    }
    case WEFT__OP_SLICE:
        print_slice(n, f);
        break;
    case WEFT__OP_SPLIT:
        if (n->attr.split.parts > 0)
            fprintf(f, "<axis=%d,part=%d/%d>", n->attr.split.axis, n->attr.split.index,
                    n->attr.split.parts);
        else
            fprintf(f, "<axis=%d,part=%d,size=%" PRId64 ">", n->attr.split.axis,
                    n->attr.split.index, n->attr.split.size);
        break;
    case WEFT__OP_TILE:
    case WEFT__OP_BROADCAST_TO:
        fputc('<', f);
        print_list(f, n->op == WEFT__OP_TILE ? "multiples=" : "dims=", n->attr.shape.dims,
                   n->attr.shape.rank);
        fputc('>', f);
        break;
    case WEFT__OP_FILL_LIKE:
        fprintf(f, "<%g>", n->attr.fill.value);
        break;
    case WEFT__OP_BITCAST:
        fprintf(f, "<%s>", weft_dtype_name(n->attr.cast.to));
        break;
    case WEFT__OP_CTC_UNIQUE: case WEFT__OP_INDEX_SHUFFLE:
        break;   /* no attributes */
    case WEFT__OP_FRACTIONAL_POOL: {
        static const char *const modes[] = { "max", "avg", "argmax", "avg_grad" };
        int m = n->attr.resize.method;
        fprintf(f, "<%s%s>", m >= 0 && m < 4 ? modes[m] : "?",
                n->attr.resize.antialias ? ",overlapping" : "");
        break;
    }
    case WEFT__OP_EDIT_DISTANCE:
        fprintf(f, "<%s%s%s>", n->attr.index.count ? "normalize" : "raw",
                n->attr.index.kind & 1 ? ",hypothesis_length" : "",
                n->attr.index.kind & 2 ? ",truth_length" : "");
        break;
    case WEFT__OP_CONFUSION_MATRIX:
        fprintf(f, "<%s,num_classes=%" PRId64 ">", weft_dtype_name(n->attr.confusion.dtype),
                n->attr.confusion.num_classes);
        break;
    case WEFT__OP_NON_MAX_SUPPRESSION:
    case WEFT__OP_NMS_PADDED:
        fprintf(f, "<max_output_size=%" PRId64 ",iou_threshold=%g,score_threshold=%g>",
                n->attr.nms.max_output, n->attr.nms.iou, n->attr.nms.score);
        break;
    case WEFT__OP_NMS_OVERLAPS:
        fprintf(f, "<max_output_size=%" PRId64 ",overlap_threshold=%g,score_threshold=%g>",
                n->attr.nms.max_output, n->attr.nms.iou, n->attr.nms.score);
        break;
    case WEFT__OP_NMS_SCORED:
        fprintf(f, "<max_output_size=%" PRId64 ",iou_threshold=%g,score_threshold=%g,"
                "soft_nms_sigma=%g>", n->attr.nms.max_output, n->attr.nms.iou,
                n->attr.nms.score, n->attr.nms.sigma);
        break;
    case WEFT__OP_CANDIDATES: case WEFT__OP_UNIGRAM_CANDIDATES:
        fprintf(f, "<%s,num_sampled=%" PRId64 ",range_max=%" PRId64 "%s>",
                n->op == WEFT__OP_UNIGRAM_CANDIDATES ? "unigram"
                : n->attr.sampler.uniform            ? "uniform"
                                                     : "log_uniform", n->attr.sampler.num_sampled,
                n->attr.sampler.range_max, n->attr.sampler.unique ? ",unique" : "");
        break;
    case WEFT__OP_BOX_PROPOSALS:
        fprintf(f, "<nms_threshold=%g,pre_nms_topn=%" PRId64 ",min_size=%g,post_nms_topn=%" PRId64
                ">", n->attr.proposals.iou, n->attr.proposals.pre_nms,
                n->attr.proposals.min_size, n->attr.proposals.post_nms);
        break;
    case WEFT__OP_COMBINED_NMS:
        fprintf(f, "<max_output_size_per_class=%" PRId64 ",detections=%" PRId64
                ",iou_threshold=%g,score_threshold=%g>", n->attr.cnms.max_per_class,
                n->attr.cnms.per_batch, n->attr.cnms.iou, n->attr.cnms.score);
        break;
    case WEFT__OP_SHAPE_OF:
    case WEFT__OP_TOP_K_VALUES: case WEFT__OP_GATHER_ND: case WEFT__OP_SCATTER_ND_UPDATE:
    case WEFT__OP_SCATTER_ND_ADD: case WEFT__OP_SCATTER_ND_SUB: case WEFT__OP_SCATTER_ND_MAX:
    case WEFT__OP_SCATTER_ND_MIN: case WEFT__OP_ARGWHERE: case WEFT__OP_UNIQUE_FIRST:
    case WEFT__OP_UNIQUE_IDX: case WEFT__OP_UNIQUE_COUNTS: case WEFT__OP_CHOLESKY:
    case WEFT__OP_MATRIX_INVERSE: case WEFT__OP_MATRIX_DETERMINANT: case WEFT__OP_RANGE_TO:
    case WEFT__OP_SLOGDET: case WEFT__OP_LU: case WEFT__OP_MATRIX_EXPONENTIAL:
    case WEFT__OP_TRIDIAGONAL_SOLVE: case WEFT__OP_MATRIX_SQRT: case WEFT__OP_MATRIX_LOG:
        break;
    case WEFT__OP_QR:
    case WEFT__OP_EIGH:
    case WEFT__OP_EIG:
    case WEFT__OP_SVD: {
        unsigned flags = (unsigned)n->attr.index.kind;
        fprintf(f, "<%s%s>", flags & WEFT__LINALG_FULL ? "full" : "reduced",
                n->op == WEFT__OP_QR ? ""
                : flags & WEFT__LINALG_VECTORS ? ",vectors" : ",values");
        break;
    }
    case WEFT__OP_SEARCHSORTED:
        fprintf(f, "<%s>", n->attr.index.kind ? "right" : "left");
        break;
    case WEFT__OP_ISOTONIC:
        fprintf(f, "<axis=%d,%s>", n->attr.index.axis, n->attr.index.kind ? "segments" : "values");
        break;
    case WEFT__OP_MATRIX_SOLVE:
    case WEFT__OP_TRIANGULAR_SOLVE:
    case WEFT__OP_BANDED_SOLVE: {
        unsigned flags = (unsigned)n->attr.index.kind;
        if (flags)
            fprintf(f, "<%s%s%s>", flags & WEFT__LINALG_LOWER ? "lower" : "",
                    flags == (WEFT__LINALG_LOWER | WEFT__LINALG_ADJOINT) ? "," : "",
                    flags & WEFT__LINALG_ADJOINT ? "adjoint" : "");
        break;
    }
    case WEFT__OP_BOOLEAN_MASK:
        fprintf(f, "<axis=%d>", n->attr.index.axis);
        break;
    case WEFT__OP_BINCOUNT:
        fprintf(f, "<%s,minlength=%" PRId64 ",maxlength=%" PRId64 ">",
                weft_dtype_name(n->attr.bincount.dtype), n->attr.bincount.minlength,
                n->attr.bincount.maxlength);
        break;
    case WEFT__OP_SORT:
    case WEFT__OP_ARGSORT:
        fprintf(f, "<axis=%d%s>", n->attr.sort.axis, n->attr.sort.descending ? ",descending" : "");
        break;
    case WEFT__OP_TOP_K:
        fprintf(f, "<k=%" PRId64 "%s>", n->attr.sort.k,
                n->attr.sort.descending ? "" : ",smallest");
        break;
    case WEFT__OP_UNSORTED_SEGMENT:
    case WEFT__OP_SEGMENT: {
        static const char *const names[] = { "sum", "mean", "max", "min", "prod" };
        int kind = n->attr.index.kind;
        fprintf(f, "<%s", kind >= 0 && kind < 5 ? names[kind] : "?");
        if (n->op == WEFT__OP_UNSORTED_SEGMENT)
            fprintf(f, ",num_segments=%" PRId64, n->attr.index.count);
        fputc('>', f);
        break;
    }
    case WEFT__OP_RANDOM_UNIFORM:
        fprintf(f, "<minval=%g,maxval=%g>", n->attr.random.a, n->attr.random.b);
        break;
    case WEFT__OP_RANDOM_NORMAL: case WEFT__OP_RANDOM_TRUNCATED_NORMAL:
        fprintf(f, "<mean=%g,stddev=%g>", n->attr.random.a, n->attr.random.b);
        break;
    case WEFT__OP_RANDOM_CATEGORICAL:
        fprintf(f, "<num_samples=%" PRId64 ">", n->attr.random.dims[0]);
        break;
    case WEFT__OP_CONV2D: case WEFT__OP_MAX_POOL2D: case WEFT__OP_AVG_POOL2D:
    case WEFT__OP_DEPTHWISE_CONV2D:
        print_conv(n, f);
        break;
    case WEFT__OP_FFT: {
        static const char *const kinds[] = { "fft", "ifft", "rfft", "irfft", "stft" };
        int kind = n->attr.fft.kind;
        fprintf(f, "<%s", kind >= 0 && kind < 5 ? kinds[kind] : "?");
        if (kind == WEFT__FFT_FRAMES)
            fprintf(f, ",frame_length=%" PRId64 ",frame_step=%" PRId64, n->attr.fft.frame_length,
                    n->attr.fft.frame_step);
        if (n->attr.fft.length)
            fprintf(f, ",fft_length=%" PRId64, n->attr.fft.length);
        fputc('>', f);
        break;
    }
    case WEFT__OP_CTC_LOSS: case WEFT__OP_CTC_LOSS_GRAD:
        fprintf(f, "<blank_index=%d,%s>", n->attr.index.axis,
                n->attr.index.kind ? "time_major" : "batch_major");
        break;
    case WEFT__OP_CTC_BEAM:
        fprintf(f, "<beam_width=%" PRId64 ",top_paths=%d>", n->attr.index.count,
                n->attr.index.axis);
        break;
    case WEFT__OP_CHECK_NUMERICS: case WEFT__OP_ASSERT:
        fprintf(f, "<message=\"%s\">", n->attr.check.message);
        break;
    case WEFT__OP_SAMPLE_BOX:
        fprintf(f, "<min_object_covered=%g,aspect_ratio_range=[%g,%g],area_range=[%g,%g],"
                "max_attempts=%" PRId64 "%s>", n->attr.sample_box.covered,
                n->attr.sample_box.aspect[0], n->attr.sample_box.aspect[1],
                n->attr.sample_box.area[0], n->attr.sample_box.area[1],
                n->attr.sample_box.attempts,
                n->attr.sample_box.use_image ? ",use_image_if_no_bounding_boxes" : "");
        break;
    case WEFT__OP_IMAGE_TRANSFORM: {
        static const char *const modes[4] = { "reflect", "wrap", "constant", "nearest" };
        int mode = n->attr.transform.fill_mode;
        fprintf(f, "<%s,%s,size=[%" PRId64 ",%" PRId64 "],fill_value=%g>",
                n->attr.transform.interpolation == WEFT_RESIZE_NEAREST ? "nearest" : "bilinear",
                mode >= 0 && mode < 4 ? modes[mode] : "?", n->attr.transform.size[0],
                n->attr.transform.size[1], n->attr.transform.fill_value);
        break;
    }
    case WEFT__OP_ROLL: case WEFT__OP_REPEAT:
        fprintf(f, "<axis=%d,%s=%" PRId64 "%s>", n->attr.index.axis,
                n->op == WEFT__OP_ROLL ? "shift" : "repeats", n->attr.index.count,
                n->attr.index.kind == 1 ? "+half" : n->attr.index.kind == 2 ? "-half" : "");
        break;
    case WEFT__OP_RESIZE: {
        static const char *const names[] = { "bilinear", "nearest", "area", "bicubic",
                                             "lanczos3", "lanczos5", "gaussian",
                                             "mitchellcubic" };
        int m = n->attr.resize.method;
        fprintf(f, "<%s,size=[%" PRId64 ",%" PRId64 "]%s>",
                m >= 0 && m < (int)(sizeof names / sizeof *names) ? names[m] : "?",
                n->attr.resize.size[0], n->attr.resize.size[1],
                n->attr.resize.antialias ? ",antialias" : "");
        break;
    }
    case WEFT__OP_GLIMPSE:
        fprintf(f, "<size=[%" PRId64 ",%" PRId64 "]%s%s>", n->attr.resize.size[0],
                n->attr.resize.size[1],
                n->attr.resize.method & WEFT__GLIMPSE_CENTERED ? ",centered" : "",
                n->attr.resize.method & WEFT__GLIMPSE_NORMALIZED ? ",normalized" : "");
        break;
    case WEFT__OP_CROP_AND_RESIZE:
        fprintf(f, "<%s,size=[%" PRId64 ",%" PRId64 "],extrapolation=%g>",
                n->attr.resize.method == WEFT_RESIZE_NEAREST ? "nearest" : "bilinear",
                n->attr.resize.size[0], n->attr.resize.size[1], n->attr.resize.extrapolation);
        break;
    case WEFT__OP_CUMSUM: case WEFT__OP_CUMPROD: case WEFT__OP_CUMLOGSUMEXP:
        fprintf(f, "<axis=%d%s%s>", n->attr.axis.axis,
                n->attr.axis.scan & WEFT_SCAN_EXCLUSIVE ? ",exclusive" : "",
                n->attr.axis.scan & WEFT_SCAN_REVERSE ? ",reverse" : "");
        break;
    case WEFT__OP_GATHER:
        if (n->attr.axis.batch)
            fprintf(f, "<axis=%d,batch_dims=%d>", n->attr.axis.axis, n->attr.axis.batch);
        else
            fprintf(f, "<axis=%d>", n->attr.axis.axis);
        break;
    default:
        if (n->attr.axis.axis != WEFT_ALL_AXES)
            fprintf(f, "<axis=%d>", n->attr.axis.axis);
        break;
    }
}

bool weft__shape_in_place_ok(const weft__node *n)
{
    switch (n->op) {
    case WEFT__OP_FILL_LIKE:
        return true;   /* reads only the input's shape */
    case WEFT__OP_CUMSUM:
    case WEFT__OP_CUMPROD:
    case WEFT__OP_CUMLOGSUMEXP:
        return true;   /* reads each element before it writes that element */
    case WEFT__OP_SORT:
        return true;   /* reads a whole row before it writes that row */
    default:
        return false;
    }
}

int weft__shape_fold_spec(const weft__graph *g, const weft__node *n, weft_tensor **out)
{
    *out = NULL;
    if (n->op != WEFT__OP_SHAPE_OF || n->n_in != 1)
        return 0;
    const weft_spec *s = &g->nodes[n->in[0]].spec;
    if (s->rank < 0)
        return 0;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0)
            return 0;
    int64_t rank = s->rank;
    int rc = weft_tensor_create(WEFT_I64, 1, &rank, s->dims, out);
    return rc == WEFT_ENOMEM ? rc : 0;
}
