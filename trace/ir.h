/* The op-list IR of trace/: what a traced body records, what the compiler
 * rewrites and what the executor runs.  Shared by the files of trace/ only
 * (ops.c, kernels.c, compile*.c, exec.c); other modules see trace/iface.h.
 *
 * A graph is an append-only array of nodes in program order, so a node's
 * inputs always have smaller ids.  Node ids are uint32_t indices. */
#ifndef WEFT_TRACE_IR_H
#define WEFT_TRACE_IR_H

#include <stdbool.h>
#include <weft.h>

/* The op table: name, kind, number of inputs (-1: variable).
 * Kinds: LEAF (no inputs), UNARY, BINARY, TERNARY (where, betainc), CAST, REDUCE,
 * SHAPE (reshape and the ops that only relabel dims: expand_dims, squeeze),
 * ARRAY (ops that move or index elements: trace/infer_shape.c and
 * trace/kernel_shape.c), MATMUL, MAP, HOST, CONTROL (several results:
 * cond, while, map_ex, host_call_ex; see trace/control.h), RESULT (one
 * result of a CONTROL node), FUSED (made by the compiler).  Ops added
 * later go after FUSED, whatever their kind.  TOP_K gives weft_top_k's
 * indices; TOP_K_VALUES(a, indices) picks a's elements at them along the
 * last axis (its values).  ARGWHERE, BOOLEAN_MASK, UNIQUE_FIRST,
 * UNIQUE_COUNTS, SEGMENT (sorted segment ids), BINCOUNT, RANGE_TO (0..n-1
 * for a scalar n known when it runs), NON_MAX_SUPPRESSION, NMS_SCORED and
 * NMS_OVERLAPS (the boxes kept) and CONFUSION_MATRIX (its class count,
 * when not given) have a dim that only their input values decide (see
 * weft__op_shape_from_values); UNIQUE_IDX is weft_unique's indices, of its
 * input's shape, and UNIQUE_FIRST and UNIQUE_COUNTS read those indices. */
#define WEFT__OP_TABLE(XX)                 \
    XX(ARG,        LEAF,    0)             \
    XX(CONST,      LEAF,    0)             \
    XX(FILL,       LEAF,    0)             \
    XX(RANGE,      LEAF,    0)             \
    XX(ADD,        BINARY,  2)             \
    XX(SUB,        BINARY,  2)             \
    XX(MUL,        BINARY,  2)             \
    XX(DIV,        BINARY,  2)             \
    XX(MOD,        BINARY,  2)             \
    XX(POW,        BINARY,  2)             \
    XX(MINIMUM,    BINARY,  2)             \
    XX(MAXIMUM,    BINARY,  2)             \
    XX(EQ,         BINARY,  2)             \
    XX(NE,         BINARY,  2)             \
    XX(LT,         BINARY,  2)             \
    XX(LE,         BINARY,  2)             \
    XX(GT,         BINARY,  2)             \
    XX(GE,         BINARY,  2)             \
    XX(FLOORDIV,   BINARY,  2)             \
    XX(TRUEDIV,    BINARY,  2)             \
    XX(LOGICAL_AND, BINARY, 2)             \
    XX(LOGICAL_OR, BINARY,  2)             \
    XX(NEG,        UNARY,   1)             \
    XX(ABS,        UNARY,   1)             \
    XX(SQRT,       UNARY,   1)             \
    XX(EXP,        UNARY,   1)             \
    XX(LOG,        UNARY,   1)             \
    XX(TANH,       UNARY,   1)             \
    XX(SIGMOID,    UNARY,   1)             \
    XX(RELU,       UNARY,   1)             \
    XX(SIN,        UNARY,   1)             \
    XX(COS,        UNARY,   1)             \
    XX(FLOOR,      UNARY,   1)             \
    XX(CEIL,       UNARY,   1)             \
    XX(ROUND,      UNARY,   1)             \
    XX(RSQRT,      UNARY,   1)             \
    XX(SQUARE,     UNARY,   1)             \
    XX(SIGN,       UNARY,   1)             \
    XX(LOG1P,      UNARY,   1)             \
    XX(EXPM1,      UNARY,   1)             \
    XX(LOGICAL_NOT, UNARY,  1)             \
    XX(CAST,       CAST,    1)             \
    XX(WHERE,      TERNARY, 3)             \
    XX(SUM,        REDUCE,  1)             \
    XX(MEAN,       REDUCE,  1)             \
    XX(REDUCE_MAX, REDUCE,  1)             \
    XX(REDUCE_MIN, REDUCE,  1)             \
    XX(PROD,       REDUCE,  1)             \
    XX(RESHAPE,    SHAPE,   1)             \
    XX(EXPAND_DIMS, SHAPE,  1)             \
    XX(SQUEEZE,    SHAPE,   1)             \
    XX(TRANSPOSE,  ARRAY,   1)             \
    XX(SLICE,      ARRAY,   1)             \
    XX(SPLIT,      ARRAY,   1)             \
    XX(GATHER,     ARRAY,   2)             \
    XX(CONCAT,     ARRAY,  -1)             \
    XX(STACK,      ARRAY,  -1)             \
    XX(TILE,       ARRAY,   1)             \
    XX(BROADCAST_TO, ARRAY, 1)             \
    XX(FILL_LIKE,  ARRAY,   1)             \
    XX(SHAPE_OF,   ARRAY,   1)             \
    XX(ARGMAX,     ARRAY,   1)             \
    XX(ARGMIN,     ARRAY,   1)             \
    XX(CUMSUM,     ARRAY,   1)             \
    XX(MATMUL,     MATMUL,  2)             \
    XX(MAP,        MAP,     1)             \
    XX(HOST,       HOST,   -1)             \
    XX(COND,       CONTROL, -1)            \
    XX(WHILE,      CONTROL, -1)            \
    XX(MAP_EX,     CONTROL, -1)            \
    XX(HOST_EX,    CONTROL, -1)            \
    XX(SCAN,       CONTROL, -1)            \
    XX(CASE,       CONTROL, -1)            \
    XX(RESULT,     RESULT,  1)             \
    XX(FUSED,      FUSED,  -1)             \
    XX(SORT,       ARRAY,   1)             \
    XX(ARGSORT,    ARRAY,   1)             \
    XX(TOP_K,      ARRAY,   1)             \
    XX(TOP_K_VALUES, ARRAY, 2)           \
    XX(ERF,        UNARY,   1)             \
    XX(ERFC,       UNARY,   1)             \
    XX(TAN,        UNARY,   1)             \
    XX(ASIN,       UNARY,   1)             \
    XX(ACOS,       UNARY,   1)             \
    XX(ATAN,       UNARY,   1)             \
    XX(SINH,       UNARY,   1)             \
    XX(COSH,       UNARY,   1)             \
    XX(ATAN2,      BINARY,  2)             \
    XX(IS_NAN,     UNARY,   1)             \
    XX(IS_INF,     UNARY,   1)             \
    XX(IS_FINITE,  UNARY,   1) \
    XX(UNSORTED_SEGMENT, ARRAY, 2)         \
    XX(GATHER_ND,  ARRAY,   2)             \
    XX(SCATTER_ND_UPDATE, ARRAY, 3)        \
    XX(SCATTER_ND_ADD, ARRAY, 3)           \
    XX(SCATTER_ND_SUB, ARRAY, 3)           \
    XX(SCATTER_ND_MAX, ARRAY, 3)           \
    XX(SCATTER_ND_MIN, ARRAY, 3)           \
    XX(ROLL,       ARRAY,   1)             \
    XX(REPEAT,     ARRAY,   1)             \
    XX(RANDOM_UNIFORM, ARRAY, -1)          \
    XX(RANDOM_NORMAL, ARRAY, -1)           \
    XX(RANDOM_TRUNCATED_NORMAL, ARRAY, -1) \
    XX(CONV2D,     ARRAY,   2)             \
    XX(MAX_POOL2D, ARRAY,   1)             \
    XX(AVG_POOL2D, ARRAY,   1)             \
    XX(CUMPROD,    ARRAY,   1)             \
    XX(DEPTHWISE_CONV2D, ARRAY, 2)         \
    XX(RESIZE,     ARRAY,   1)             \
    XX(ARGWHERE,   ARRAY,   1)             \
    XX(BOOLEAN_MASK, ARRAY, 2)             \
    XX(UNIQUE_FIRST, ARRAY, 1)             \
    XX(UNIQUE_IDX, ARRAY,   1)             \
    XX(UNIQUE_COUNTS, ARRAY, 1)            \
    XX(SEGMENT,    ARRAY,   2)             \
    XX(BINCOUNT,   ARRAY,  -1)             \
    XX(CHOLESKY,   ARRAY,   1)             \
    XX(MATRIX_SOLVE, ARRAY, 2)             \
    XX(TRIANGULAR_SOLVE, ARRAY, 2)         \
    XX(MATRIX_INVERSE, ARRAY, 1)           \
    XX(MATRIX_DETERMINANT, ARRAY, 1)       \
    XX(SEARCHSORTED, ARRAY, 2)             \
    XX(RANGE_TO,   ARRAY,   1)             \
    XX(QR,         ARRAY,   1)             \
    XX(EIGH,       ARRAY,   1)             \
    XX(SVD,        ARRAY,   1)             \
    XX(SLOGDET,    ARRAY,   1)             \
    XX(ASINH,      UNARY,   1)             \
    XX(ACOSH,      UNARY,   1)             \
    XX(ATANH,      UNARY,   1)             \
    XX(LGAMMA,     UNARY,   1)             \
    XX(LU,         ARRAY,   1)             \
    XX(CUMLOGSUMEXP, ARRAY, 1)             \
    XX(RANDOM_CATEGORICAL, ARRAY, 2)       \
    XX(DIGAMMA,    UNARY,   1)             \
    XX(ERFINV,     UNARY,   1)             \
    XX(NDTRI,      UNARY,   1)             \
    XX(BITWISE_AND, BINARY, 2)             \
    XX(BITWISE_OR, BINARY,  2)             \
    XX(BITWISE_XOR, BINARY, 2)             \
    XX(LEFT_SHIFT, BINARY,  2)             \
    XX(RIGHT_SHIFT, BINARY, 2)             \
    XX(INVERT,     UNARY,   1)             \
    XX(NON_MAX_SUPPRESSION, ARRAY, 2)      \
    XX(CROP_AND_RESIZE, ARRAY, 3)          \
    XX(MATRIX_EXPONENTIAL, ARRAY, 1)       \
    XX(CONFUSION_MATRIX, ARRAY, -1)        \
    XX(TRIDIAGONAL_SOLVE, ARRAY, 2)        \
    XX(BESSEL_I0,  UNARY,   1)             \
    XX(BESSEL_I0E, UNARY,   1)             \
    XX(BESSEL_I1,  UNARY,   1)             \
    XX(BESSEL_I1E, UNARY,   1)             \
    XX(BESSEL_J0,  UNARY,   1)             \
    XX(BESSEL_J1,  UNARY,   1)             \
    XX(BESSEL_Y0,  UNARY,   1)             \
    XX(BESSEL_Y1,  UNARY,   1)             \
    XX(BESSEL_K0,  UNARY,   1)             \
    XX(BESSEL_K0E, UNARY,   1)             \
    XX(BESSEL_K1,  UNARY,   1)             \
    XX(BESSEL_K1E, UNARY,   1)             \
    XX(IGAMMA,     BINARY,  2)             \
    XX(IGAMMAC,    BINARY,  2)             \
    XX(TRUNCATEDIV, BINARY, 2)             \
    XX(TRUNCATEMOD, BINARY, 2)             \
    XX(ZETA,       BINARY,  2)             \
    XX(POLYGAMMA,  BINARY,  2)             \
    XX(NEXTAFTER,  BINARY,  2)             \
    XX(EXPINT,     UNARY,   1)             \
    XX(DAWSN,      UNARY,   1)             \
    XX(SPENCE,     UNARY,   1)             \
    XX(FRESNEL_COS, UNARY,  1)             \
    XX(FRESNEL_SIN, UNARY,  1)             \
    XX(FFT,        ARRAY,   1)             \
    XX(BETAINC,    TERNARY, 3)             \
    XX(RANDOM_GAMMA, ARRAY, 2)             \
    XX(RANDOM_POISSON, ARRAY, 2)           \
    XX(MATRIX_SQRT, ARRAY, 1)              \
    XX(MATRIX_LOG, ARRAY, 1)               \
    XX(BITCAST,    ARRAY,   1)             \
    XX(CTC_BEAM,   ARRAY,   2)             \
    XX(BANDED_SOLVE, ARRAY, 2)             \
    XX(NMS_PADDED, ARRAY,   2)             \
    XX(CTC_UNIQUE, ARRAY,   1)             \
    XX(GLIMPSE,    ARRAY,   3)             \
    XX(BOX_PROPOSALS, ARRAY, 4)            \
    XX(EDIT_DISTANCE, ARRAY, 4)            \
    XX(CANDIDATES, ARRAY,   1)             \
    XX(FRACTIONAL_POOL, ARRAY, 3)          \
    XX(UNIGRAM_CANDIDATES, ARRAY, 2)       \
    XX(LOG2,       UNARY,   1)             \
    XX(LOG10,      UNARY,   1)             \
    XX(EXP2,       UNARY,   1)             \
    XX(CBRT,       UNARY,   1)             \
    XX(HYPOT,      BINARY,  2)             \
    XX(COPYSIGN,   BINARY,  2)             \
    XX(LDEXP,      BINARY,  2)             \
    XX(IGAMMA_GRAD_A, BINARY, 2)           \
    XX(RANDOM_GAMMA_GRAD, BINARY, 2)       \
    XX(INDEX_SHUFFLE, ARRAY, 3)            \
    XX(GCD,        BINARY,  2)             \
    XX(LCM,        BINARY,  2)             \
    XX(CTC_LOSS,   ARRAY,   4)             \
    XX(CHECK_NUMERICS, ARRAY, 1)           \
    XX(ASSERT,     ARRAY,   2)             \
    XX(IMAGE_TRANSFORM, ARRAY, 2)          \
    XX(DRAW_BOXES, ARRAY, 3)               \
    XX(COMBINED_NMS, ARRAY, 2)             \
    XX(NMS_SCORED, ARRAY, 2)               \
    XX(EIG,        ARRAY,   1)             \
    XX(ISOTONIC,   ARRAY,   1)             \
    XX(NMS_OVERLAPS, ARRAY, 2)             \
    XX(SAMPLE_BOX, ARRAY,   3)             \
    XX(RANDOM_BINOMIAL, ARRAY, 3)        \
    XX(WHILE_VJP,  CONTROL, -1)            \
    XX(SCAN_VJP,   CONTROL, -1)            \
    XX(CTC_LOSS_GRAD, ARRAY, 4)          \
    XX(MAP_VJP,    CONTROL, -1)

typedef enum weft__op {
#define WEFT__OP_ENUM(name, kind, arity) WEFT__OP_##name,
    WEFT__OP_TABLE(WEFT__OP_ENUM)
#undef WEFT__OP_ENUM
    WEFT__OP_COUNT
} weft__op;

typedef enum weft__op_kind {
    WEFT__KIND_LEAF, WEFT__KIND_UNARY, WEFT__KIND_BINARY, WEFT__KIND_TERNARY,
    WEFT__KIND_CAST, WEFT__KIND_REDUCE, WEFT__KIND_SHAPE, WEFT__KIND_MATMUL,
    WEFT__KIND_MAP, WEFT__KIND_HOST, WEFT__KIND_FUSED,
    WEFT__KIND_CONTROL, WEFT__KIND_RESULT, WEFT__KIND_ARRAY
} weft__op_kind;

/* Whether dt is a float dtype (f32 or f64). */
static inline bool weft__dtype_is_float(weft_dtype dt)
{
    return dt == WEFT_F32 || dt == WEFT_F64;
}

/* Table lookups (ir.c). */
const char   *weft__op_name(weft__op op);      /* "add" */
weft__op_kind weft__op_kind_of(weft__op op);
bool          weft__op_is_elementwise(weft__op op); /* UNARY, BINARY, TERNARY, CAST */
/* Whether op's result has a dim that only its input values decide (the
 * number of true elements, of distinct values): such a node's spec keeps
 * that dim unknown, the executor does not plan its buffer, and its kernel
 * (weft__eval_from_values, kernel_select.c) sizes the result itself. */
bool          weft__op_shape_from_values(weft__op op);

#define WEFT__NO_NODE UINT32_MAX
/* The longest check message kept, with its terminating NUL. */
#define WEFT__CHECK_MESSAGE_MAX 112

/* Node flags. */
#define WEFT__NODE_SIDE_EFFECT 1u  /* never removed by DCE (host calls, maps that make them) */
#define WEFT__NODE_STATIC      2u  /* a static scalar argument (value in attr.constant) */

struct weft__fused;  /* the compiler's fused elementwise program */
struct weft__multi;  /* a CONTROL node's functions and result specs (trace/control.h) */

/* The axes a reduction node removes: n_axes == 0 means every axis; else
 * axes[0..n_axes) as the op was given them (negative ones count from the
 * end), made non-negative and sorted when the input's rank is known.
 * keepdims keeps the reduced axes as 1s. */
struct weft__reduce_axes {
    uint8_t n_axes;
    int8_t  axes[WEFT_MAX_RANK];
    bool    keepdims;
};

typedef struct weft__node {
    weft__op  op;
    unsigned  flags;
    uint32_t  n_in;
    uint32_t *in;              /* input ids: inline_in, or an allocation when n_in > 3 */
    uint32_t  inline_in[3];
    uint32_t  after;           /* an extra ordering edge (the previous side effect), or WEFT__NO_NODE */
    weft_spec spec;            /* output spec; dims may be WEFT_DIM_ANY while tracing */
    union {
        struct { uint32_t index; } arg;                  /* ARG: position in the call */
        struct { weft_tensor *value; } constant;         /* CONST (and static args): owned ref */
        struct { double value; } fill;                   /* FILL: shape in spec */
        struct { int64_t start, limit, delta; } range;   /* RANGE */
        struct { weft_dtype to; } cast;                  /* CAST */
        struct weft__reduce_axes reduce;                 /* REDUCE kind */
        struct { int rank; int64_t dims[WEFT_MAX_RANK]; } reshape; /* may hold one -1 */
        struct { unsigned flags; } matmul;               /* MATMUL: WEFT_TRANSPOSE_A, _B */
        struct { weft_function *fn; void *concrete; unsigned parallel_iterations; } map;
        struct { weft_host_fn fn; void *user; unsigned flags; } host;
        struct { struct weft__fused *prog; } fused;      /* owned by the node */
        struct { struct weft__multi *m; } multi;         /* CONTROL: owned by the node */
        struct { uint32_t index; } result;               /* RESULT: which result of in[0] */
        /* The shape ops (trace/ops_shape.c).  FILL_LIKE uses fill. */
        struct { int axis; unsigned scan; int batch; } axis;  /* EXPAND_DIMS, SQUEEZE
                                       (or WEFT_ALL_AXES), GATHER, CONCAT, STACK, ARGMAX,
                                       ARGMIN (or WEFT_ALL_AXES), CUMSUM, CUMPROD,
                                       CUMLOGSUMEXP; may be
                                       negative.  scan: CUMSUM's and CUMPROD's
                                       weft_scan_flags; batch: GATHER's batch_dims
                                       (0 for the others) */
        struct { int rank; int8_t perm[WEFT_MAX_RANK]; } transpose;  /* rank -1: reverse */
        struct { int rank; int64_t begin[WEFT_MAX_RANK], end[WEFT_MAX_RANK],
                 step[WEFT_MAX_RANK]; } slice;    /* Python rules, resolved per run */
        /* Part `index` of a split along axis: of `parts` equal parts, or
         * (parts 0) `size` elements (-1: the rest of the dim), with `lead`
         * elements of sized parts before it and `trail` after it, and the
         * rest part before it (rest -1), after it (1) or nowhere (0). */
        struct { int axis, parts, index, rest; int64_t lead, size, trail; } split;
        struct { int rank; int64_t dims[WEFT_MAX_RANK]; } shape;  /* TILE multiples,
                                       BROADCAST_TO dims (-1: the input's dim) */
        /* SORT, ARGSORT: axis (may be negative) and direction; TOP_K: k
         * along the last axis (axis unused), the largest when descending,
         * else the smallest in ascending order. */
        struct { int axis; bool descending; int64_t k; } sort;
        /* The indexing ops (trace/ops_index.c): UNSORTED_SEGMENT's
         * weft_reduction in kind and num_segments in count; ROLL's shift
         * and REPEAT's repeats in count, along axis (may be negative);
         * ROLL's kind 1 adds floor(m / 2) of the axis's dim m to the shift
         * and kind 2 subtracts it (fftshift, ifftshift). */
        struct { int axis, kind; int64_t count; } index;
        /* RANDOM_UNIFORM (a = minval, b = maxval), RANDOM_NORMAL and
         * RANDOM_TRUNCATED_NORMAL (a = mean, b = stddev): the result's
         * dtype and dims; in[0] is the
         * seed; with rank -1 the dims are those of in[1] (the _like forms;
         * trace/kernel_random.c).  RANDOM_CATEGORICAL: the result's dtype,
         * rank 1 and dims[0] = num_samples (in[1] the logits).
         * RANDOM_GAMMA and RANDOM_POISSON: the result's dtype, rank -1
         * (in[1], f64, holds each element's alpha or lam); RANDOM_BINOMIAL
         * the same with in[1] the counts and in[2] the probabilities. */
        struct { weft_dtype dtype; int rank; int64_t dims[WEFT_MAX_RANK]; double a, b; } random;
        /* CONV2D, DEPTHWISE_CONV2D (in[1] the filters; window unused),
         * MAX_POOL2D and
         * AVG_POOL2D: a weft_padding, and the window, strides and
         * dilations for height and width (trace/kernel_conv.c). */
        struct { int padding; int64_t window[2], stride[2], dilation[2]; } conv;
        /* RESIZE: a weft_resize_method and the output's height and width
         * (trace/kernel_resize.c); CROP_AND_RESIZE (in[0] the images,
         * in[1] the boxes, in[2] their image indices) also the value of
         * a sample outside its image (trace/kernel_crop.c).
         * FRACTIONAL_POOL (in[1], in[2] the row and column sequences):
         * its mode in method (trace/shape.h), overlapping in antialias,
         * and for the average's gradient the input's height and width in
         * size. */
        struct { int method; int64_t size[2]; double extrapolation; bool antialias; } resize;
        /* BINCOUNT: the result's dtype without weights (with weights, theirs),
         * the least length and the most (-1: none). */
        struct { weft_dtype dtype; int64_t minlength, maxlength; } bincount;
        /* CONFUSION_MATRIX (in[0] labels, in[1] predictions, in[2] the
         * weights, already of the result's dtype, when given): the
         * result's dtype and the class count (-1: the largest label or
         * prediction + 1). */
        struct { weft_dtype dtype; int64_t num_classes; } confusion;
        /* NON_MAX_SUPPRESSION, NMS_SCORED and NMS_OVERLAPS (in[0] boxes, or
         * NMS_OVERLAPS' overlaps [n, n], in[1] scores):
         * the most boxes kept, the IoU and score thresholds and, for
         * NMS_SCORED, soft-NMS's sigma (0: hard). */
        struct { int64_t max_output; double iou, score, sigma; } nms;
        /* COMBINED_NMS (in[0] boxes [batch, n, q, 4], in[1] scores [batch,
         * n, classes]; trace/kernel_nms.c): the most boxes kept per class,
         * the detections per image (the result's dim 1) and the
         * thresholds. */
        struct { int64_t max_per_class, per_batch; double iou, score; } cnms;
        /* BOX_PROPOSALS (trace/kernel_proposals.c): the best anchors decoded
         * per image, the most proposals kept (the result's dim 1), the
         * NMS threshold and the least side, before the image's scale. */
        struct { int64_t pre_nms, post_nms; double iou, min_size; } proposals;
        /* CANDIDATES (in[0] the seed; trace/kernel_candidates.c): how many
         * classes are drawn, of how many, whether distinct, and whether
         * uniformly (else log-uniformly); UNIGRAM_CANDIDATES the same
         * (uniform unused) with in[1] the cumulative weights. */
        struct { int64_t num_sampled, range_max; bool unique, uniform; } sampler;
        /* FFT (trace/kernel_fft.c): which transform (WEFT__FFT_* of
         * trace/shape.h), its length (0: the input's), and for FRAMES
         * (in[0] the signals, in[1] the window) the frames' length and
         * step. */
        struct { int kind; int64_t length, frame_length, frame_step; } fft;
        /* CHECK_NUMERICS (in[0] floats) and ASSERT (in[0] any, in[1] the
         * bool condition; trace/kernel_check.c): the message a failure
         * reports, cut to fit.  Both pass in[0] through and are side
         * effects. */
        struct { char message[WEFT__CHECK_MESSAGE_MAX]; } check;
        /* SAMPLE_BOX (in[0] image_size, in[1] boxes, in[2] the seed;
         * trace/kernel_sample_box.c): min_object_covered, the aspect ratio
         * and area ranges, the attempts, and whether the whole image stands
         * in for no boxes. */
        struct {
            double covered, aspect[2], area[2];
            int64_t attempts;
            bool use_image;
        } sample_box;
        /* IMAGE_TRANSFORM (in[0] images, in[1] the f32 transforms [1 or
         * batch, 8]; trace/kernel_transform.c): weft_resize_method
         * (BILINEAR, NEAREST), weft_fill_mode, the output's h and w and
         * the fill value. */
        struct { int interpolation, fill_mode; int64_t size[2]; double fill_value; } transform;
    } attr;
} weft__node;

typedef struct weft__graph {
    weft__node *nodes;
    uint32_t    n_nodes, cap;
    uint32_t    n_args;        /* the call's argument count (ARG nodes carry their index) */
    uint32_t   *outs;          /* n_outs output node ids */
    uint32_t    n_outs;
    uint32_t    last_side_effect;  /* the latest side-effect node, or WEFT__NO_NODE */
} weft__graph;

/* Graph building (ir.c).  weft__graph_add copies *n (and its inputs) and
 * returns the new id, or WEFT__NO_NODE when out of memory.  Free releases
 * constants, map concretes (through the callee interface) and fused
 * programs. */
int      weft__graph_init(weft__graph *g, uint32_t n_args);
uint32_t weft__graph_add(weft__graph *g, const weft__node *n, const uint32_t *in, uint32_t n_in);
void     weft__graph_free(weft__graph *g);

/* Ownership: on success weft__graph_add takes over the references the node
 * owns (attr.constant.value, attr.map.concrete, attr.fused.prog); on failure
 * they stay with the caller.  A node's `in` points into its own inline_in
 * when n_in <= 3, so whoever copies or moves nodes must re-point it
 * (weft__graph_add does so when it grows the array); larger input arrays
 * are weft__malloc'd and owned by the node. */

/* Drops what n owns in attr (the CONST tensor, the map concrete through the
 * callee interface, the fused program) and clears those fields; the input
 * array is left alone. */
void weft__node_drop_attrs(weft__node *n);

/* Frees a CONTROL node's attribute (trace/multi.c). */
void weft__multi_free(struct weft__multi *m);
/* Sets a reduction node's axes to the single axis `axis` (or every axis
 * for WEFT_ALL_AXES), without keepdims: the form of weft_sum & co. */
void weft__reduce_set_axis(weft__node *n, int axis);
/* The reduced axes of reduction node n on an input of spec a (known rank)
 * as a bit mask (bit d: axis d), or WEFT_EINVAL with weft_errmsg() naming
 * fn (NULL: "weft_<op>"), the axis that is out of range or given twice,
 * and a. */
int  weft__reduce_mask(const weft__node *n, const char *fn, const weft_spec *a, unsigned *mask);

/* Frees a fused program (defined by the compiler, trace/pass_fuse.c). */
void weft__fused_free(struct weft__fused *f);

#endif
