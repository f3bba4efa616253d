/* The op table lookups and the append-only node array. */
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/iface.h"
#include "trace/ir.h"
#include "trace/tensor_impl.h"

static const struct {
    const char   *name;
    weft__op_kind kind;
} op_table[WEFT__OP_COUNT] = {
#define WEFT__OP_ROW(nm, kd, arity) [WEFT__OP_##nm] = { #nm, WEFT__KIND_##kd },
    WEFT__OP_TABLE(WEFT__OP_ROW)
#undef WEFT__OP_ROW
};

/* Lower-case names ("add") for messages and op listings, built once from the
 * table so that the two can never disagree. */
static const char *const op_names[WEFT__OP_COUNT] = {
    [WEFT__OP_ARG] = "arg", [WEFT__OP_CONST] = "const", [WEFT__OP_FILL] = "fill",
    [WEFT__OP_RANGE] = "range", [WEFT__OP_ADD] = "add", [WEFT__OP_SUB] = "sub",
    [WEFT__OP_MUL] = "mul", [WEFT__OP_DIV] = "div", [WEFT__OP_MOD] = "mod",
    [WEFT__OP_POW] = "pow", [WEFT__OP_MINIMUM] = "minimum", [WEFT__OP_MAXIMUM] = "maximum",
    [WEFT__OP_EQ] = "eq", [WEFT__OP_NE] = "ne", [WEFT__OP_LT] = "lt", [WEFT__OP_LE] = "le",
    [WEFT__OP_GT] = "gt", [WEFT__OP_GE] = "ge", [WEFT__OP_NEG] = "neg", [WEFT__OP_ABS] = "abs",
    [WEFT__OP_SQRT] = "sqrt", [WEFT__OP_EXP] = "exp", [WEFT__OP_LOG] = "log",
    [WEFT__OP_TANH] = "tanh", [WEFT__OP_SIGMOID] = "sigmoid", [WEFT__OP_RELU] = "relu",
    [WEFT__OP_SIN] = "sin", [WEFT__OP_COS] = "cos", [WEFT__OP_FLOOR] = "floor",
    [WEFT__OP_CEIL] = "ceil", [WEFT__OP_ROUND] = "round", [WEFT__OP_RSQRT] = "rsqrt",
    [WEFT__OP_SQUARE] = "square", [WEFT__OP_SIGN] = "sign", [WEFT__OP_LOG1P] = "log1p",
    [WEFT__OP_EXPM1] = "expm1", [WEFT__OP_LOGICAL_NOT] = "logical_not",
    [WEFT__OP_FLOORDIV] = "floordiv", [WEFT__OP_TRUEDIV] = "truediv",
    [WEFT__OP_LOGICAL_AND] = "logical_and",
    [WEFT__OP_LOGICAL_OR] = "logical_or",
    [WEFT__OP_CAST] = "cast", [WEFT__OP_WHERE] = "where", [WEFT__OP_SUM] = "sum",
    [WEFT__OP_MEAN] = "mean", [WEFT__OP_REDUCE_MAX] = "reduce_max",
    [WEFT__OP_REDUCE_MIN] = "reduce_min", [WEFT__OP_PROD] = "prod",
    [WEFT__OP_RESHAPE] = "reshape", [WEFT__OP_MATMUL] = "matmul", [WEFT__OP_MAP] = "map",
    [WEFT__OP_EXPAND_DIMS] = "expand_dims", [WEFT__OP_SQUEEZE] = "squeeze",
    [WEFT__OP_TRANSPOSE] = "transpose", [WEFT__OP_SLICE] = "slice", [WEFT__OP_SPLIT] = "split",
    [WEFT__OP_GATHER] = "gather", [WEFT__OP_CONCAT] = "concat", [WEFT__OP_STACK] = "stack",
    [WEFT__OP_TILE] = "tile", [WEFT__OP_BROADCAST_TO] = "broadcast_to",
    [WEFT__OP_FILL_LIKE] = "fill_like", [WEFT__OP_SHAPE_OF] = "shape",
    [WEFT__OP_ARGMAX] = "argmax", [WEFT__OP_ARGMIN] = "argmin", [WEFT__OP_CUMSUM] = "cumsum",
    [WEFT__OP_HOST] = "host_call", [WEFT__OP_FUSED] = "fused",
    [WEFT__OP_COND] = "cond", [WEFT__OP_WHILE] = "while_loop", [WEFT__OP_MAP_EX] = "map_ex",
    [WEFT__OP_SCAN] = "scan", [WEFT__OP_CASE] = "switch_case",
    [WEFT__OP_HOST_EX] = "host_call_ex", [WEFT__OP_RESULT] = "result",
    [WEFT__OP_SORT] = "sort", [WEFT__OP_ARGSORT] = "argsort", [WEFT__OP_TOP_K] = "top_k",
    [WEFT__OP_TOP_K_VALUES] = "top_k_values",
    [WEFT__OP_ERF] = "erf", [WEFT__OP_ERFC] = "erfc", [WEFT__OP_TAN] = "tan",
    [WEFT__OP_ASIN] = "asin", [WEFT__OP_ACOS] = "acos", [WEFT__OP_ATAN] = "atan",
    [WEFT__OP_SINH] = "sinh", [WEFT__OP_COSH] = "cosh", [WEFT__OP_ATAN2] = "atan2",
    [WEFT__OP_IS_NAN] = "is_nan", [WEFT__OP_IS_INF] = "is_inf",
    [WEFT__OP_IS_FINITE] = "is_finite",
    [WEFT__OP_UNSORTED_SEGMENT] = "unsorted_segment", [WEFT__OP_GATHER_ND] = "gather_nd",
    [WEFT__OP_SCATTER_ND_UPDATE] = "scatter_nd_update",
    [WEFT__OP_SCATTER_ND_ADD] = "scatter_nd_add", [WEFT__OP_SCATTER_ND_SUB] = "scatter_nd_sub",
    [WEFT__OP_SCATTER_ND_MAX] = "scatter_nd_max", [WEFT__OP_SCATTER_ND_MIN] = "scatter_nd_min",
    [WEFT__OP_ROLL] = "roll",
    [WEFT__OP_REPEAT] = "repeat", [WEFT__OP_RANDOM_UNIFORM] = "random_uniform",
    [WEFT__OP_RANDOM_NORMAL] = "random_normal",
    [WEFT__OP_RANDOM_TRUNCATED_NORMAL] = "random_truncated_normal",
    [WEFT__OP_CONV2D] = "conv2d", [WEFT__OP_MAX_POOL2D] = "max_pool2d",
    [WEFT__OP_AVG_POOL2D] = "avg_pool2d", [WEFT__OP_CUMPROD] = "cumprod",
    [WEFT__OP_DEPTHWISE_CONV2D] = "depthwise_conv2d", [WEFT__OP_RESIZE] = "resize",
    [WEFT__OP_ARGWHERE] = "argwhere", [WEFT__OP_BOOLEAN_MASK] = "boolean_mask",
    [WEFT__OP_UNIQUE_FIRST] = "unique_first", [WEFT__OP_UNIQUE_IDX] = "unique_idx",
    [WEFT__OP_UNIQUE_COUNTS] = "unique_counts", [WEFT__OP_SEGMENT] = "segment",
    [WEFT__OP_BINCOUNT] = "bincount", [WEFT__OP_CHOLESKY] = "cholesky",
    [WEFT__OP_MATRIX_SOLVE] = "matrix_solve", [WEFT__OP_TRIANGULAR_SOLVE] = "triangular_solve",
    [WEFT__OP_MATRIX_INVERSE] = "matrix_inverse",
    [WEFT__OP_MATRIX_DETERMINANT] = "matrix_determinant",
    [WEFT__OP_SEARCHSORTED] = "searchsorted", [WEFT__OP_RANGE_TO] = "range_to",
    [WEFT__OP_QR] = "qr", [WEFT__OP_EIGH] = "eigh", [WEFT__OP_SVD] = "svd",
    [WEFT__OP_SLOGDET] = "slogdet", [WEFT__OP_ASINH] = "asinh", [WEFT__OP_ACOSH] = "acosh",
    [WEFT__OP_ATANH] = "atanh", [WEFT__OP_LGAMMA] = "lgamma", [WEFT__OP_LU] = "lu",
    [WEFT__OP_CUMLOGSUMEXP] = "cumulative_logsumexp",
    [WEFT__OP_RANDOM_CATEGORICAL] = "random_categorical",
    [WEFT__OP_DIGAMMA] = "digamma", [WEFT__OP_ERFINV] = "erfinv", [WEFT__OP_NDTRI] = "ndtri",
    [WEFT__OP_BITWISE_AND] = "bitwise_and", [WEFT__OP_BITWISE_OR] = "bitwise_or",
    [WEFT__OP_BITWISE_XOR] = "bitwise_xor", [WEFT__OP_LEFT_SHIFT] = "left_shift",
    [WEFT__OP_RIGHT_SHIFT] = "right_shift", [WEFT__OP_INVERT] = "invert",
    [WEFT__OP_NON_MAX_SUPPRESSION] = "non_max_suppression",
    [WEFT__OP_CROP_AND_RESIZE] = "crop_and_resize",
    [WEFT__OP_MATRIX_EXPONENTIAL] = "matrix_exponential",
    [WEFT__OP_CONFUSION_MATRIX] = "confusion_matrix",
    [WEFT__OP_TRIDIAGONAL_SOLVE] = "tridiagonal_solve",
    [WEFT__OP_BESSEL_I0] = "bessel_i0", [WEFT__OP_BESSEL_I0E] = "bessel_i0e",
    [WEFT__OP_BESSEL_I1] = "bessel_i1", [WEFT__OP_BESSEL_I1E] = "bessel_i1e",
    [WEFT__OP_BESSEL_J0] = "bessel_j0", [WEFT__OP_BESSEL_J1] = "bessel_j1",
    [WEFT__OP_BESSEL_Y0] = "bessel_y0", [WEFT__OP_BESSEL_Y1] = "bessel_y1",
    [WEFT__OP_BESSEL_K0] = "bessel_k0", [WEFT__OP_BESSEL_K0E] = "bessel_k0e",
    [WEFT__OP_BESSEL_K1] = "bessel_k1", [WEFT__OP_BESSEL_K1E] = "bessel_k1e",
    [WEFT__OP_IGAMMA] = "igamma", [WEFT__OP_IGAMMAC] = "igammac",
    [WEFT__OP_TRUNCATEDIV] = "truncatediv", [WEFT__OP_TRUNCATEMOD] = "truncatemod",
    [WEFT__OP_ZETA] = "zeta", [WEFT__OP_POLYGAMMA] = "polygamma",
    [WEFT__OP_NEXTAFTER] = "nextafter", [WEFT__OP_EXPINT] = "expint",
    [WEFT__OP_DAWSN] = "dawsn", [WEFT__OP_SPENCE] = "spence",
    [WEFT__OP_FRESNEL_COS] = "fresnel_cos", [WEFT__OP_FRESNEL_SIN] = "fresnel_sin",
    [WEFT__OP_BETAINC] = "betainc", [WEFT__OP_RANDOM_GAMMA] = "random_gamma",
    [WEFT__OP_RANDOM_POISSON] = "random_poisson", [WEFT__OP_MATRIX_SQRT] = "matrix_sqrt",
    [WEFT__OP_MATRIX_LOG] = "matrix_logarithm", [WEFT__OP_BITCAST] = "bitcast",
    [WEFT__OP_CTC_BEAM] = "ctc_beam_search_decoder",
    [WEFT__OP_BANDED_SOLVE] = "banded_triangular_solve",
    [WEFT__OP_NMS_PADDED] = "non_max_suppression_padded",
    [WEFT__OP_CTC_UNIQUE] = "ctc_unique_labels", [WEFT__OP_GLIMPSE] = "extract_glimpse",
    [WEFT__OP_FRACTIONAL_POOL] = "fractional_pool",
    [WEFT__OP_UNIGRAM_CANDIDATES] = "unigram_candidate_sampler",
    [WEFT__OP_LOG2] = "log2", [WEFT__OP_LOG10] = "log10", [WEFT__OP_EXP2] = "exp2",
    [WEFT__OP_CBRT] = "cbrt", [WEFT__OP_HYPOT] = "hypot", [WEFT__OP_COPYSIGN] = "copysign",
    [WEFT__OP_LDEXP] = "ldexp",
    [WEFT__OP_IGAMMA_GRAD_A] = "igamma_grad_a", [WEFT__OP_RANDOM_GAMMA_GRAD] = "random_gamma_grad",
    [WEFT__OP_INDEX_SHUFFLE] = "random_index_shuffle", [WEFT__OP_GCD] = "gcd",
    [WEFT__OP_LCM] = "lcm",
    [WEFT__OP_BOX_PROPOSALS] = "generate_bounding_box_proposals",
    [WEFT__OP_EDIT_DISTANCE] = "edit_distance",
    [WEFT__OP_CANDIDATES] = "candidate_sampler",
    [WEFT__OP_CTC_LOSS] = "ctc_loss",
    [WEFT__OP_CHECK_NUMERICS] = "check_numerics",
    [WEFT__OP_ASSERT] = "assert",
    [WEFT__OP_IMAGE_TRANSFORM] = "image_projective_transform",
    [WEFT__OP_DRAW_BOXES] = "draw_bounding_boxes",
    [WEFT__OP_COMBINED_NMS] = "combined_non_max_suppression",
    [WEFT__OP_NMS_SCORED] = "non_max_suppression_with_scores",
    [WEFT__OP_EIG] = "eig",
    [WEFT__OP_ISOTONIC] = "isotonic_regression",
    [WEFT__OP_NMS_OVERLAPS] = "non_max_suppression_overlaps",
    [WEFT__OP_SAMPLE_BOX] = "sample_distorted_bounding_box",
    [WEFT__OP_RANDOM_BINOMIAL] = "random_binomial",
    [WEFT__OP_WHILE_VJP] = "while_loop_gradient", [WEFT__OP_SCAN_VJP] = "scan_gradient",
    [WEFT__OP_CTC_LOSS_GRAD] = "ctc_loss_gradient", [WEFT__OP_MAP_VJP] = "map_gradient",
    [WEFT__OP_FFT] = "fft",
};

const char *weft__op_name(weft__op op)
{
    if ((unsigned)op >= WEFT__OP_COUNT)
        return "?";
    return op_names[op] ? op_names[op] : op_table[op].name;
}

weft__op_kind weft__op_kind_of(weft__op op)
{
    return (unsigned)op < WEFT__OP_COUNT ? op_table[op].kind : WEFT__KIND_LEAF;
}

bool weft__op_is_elementwise(weft__op op)
{
    switch (weft__op_kind_of(op)) {
    case WEFT__KIND_UNARY: case WEFT__KIND_BINARY: case WEFT__KIND_TERNARY:
    case WEFT__KIND_CAST:
        return true;
    default:
        return false;
    }
}

bool weft__op_shape_from_values(weft__op op)
{
    return op == WEFT__OP_ARGWHERE || op == WEFT__OP_BOOLEAN_MASK ||
           op == WEFT__OP_UNIQUE_FIRST || op == WEFT__OP_UNIQUE_COUNTS ||
           op == WEFT__OP_SEGMENT || op == WEFT__OP_BINCOUNT || op == WEFT__OP_RANGE_TO ||
           op == WEFT__OP_NON_MAX_SUPPRESSION || op == WEFT__OP_NMS_SCORED ||
           op == WEFT__OP_NMS_OVERLAPS ||
           op == WEFT__OP_CONFUSION_MATRIX;
}

void weft__reduce_set_axis(weft__node *n, int axis)
{
    memset(&n->attr.reduce, 0, sizeof n->attr.reduce);
    if (axis == WEFT_ALL_AXES)
        return;
    n->attr.reduce.n_axes = 1;
    n->attr.reduce.axes[0] = (int8_t)axis;
}

/* The name weft__reduce_mask's errors give: the caller's, or the node's
 * own, formatted only when there is an error to report (an eager reduction
 * calls weft__reduce_mask on every op). */
static const char *reduce_fn(const weft__node *n, const char *fn, char *own, size_t size)
{
    if (fn)
        return fn;
    snprintf(own, size, "weft_%s", weft__op_name(n->op));
    return own;
}

int weft__reduce_mask(const weft__node *n, const char *fn, const weft_spec *a, unsigned *mask)
{
    const struct weft__reduce_axes *r = &n->attr.reduce;
    int rank = a->rank;
    char sa[WEFT__SPEC_STR_MAX], own[32];
    *mask = 0;
    if (r->n_axes == 0) {
        *mask = rank > 0 ? (1u << rank) - 1u : 0u;
        return 0;
    }
    if (r->n_axes > WEFT_MAX_RANK)
        return weft__errorf(WEFT_EINVAL, "%s: %u axes, at most %d",
                            reduce_fn(n, fn, own, sizeof own), (unsigned)r->n_axes, WEFT_MAX_RANK);
    for (unsigned k = 0; k < r->n_axes; k++) {
        int d = r->axes[k];
        if (d < -rank || d >= rank)
            return weft__errorf(WEFT_EINVAL, "%s: axis %d is out of range for %s",
                                reduce_fn(n, fn, own, sizeof own), d,
                                weft__spec_str(a, sa, sizeof sa));
        if (d < 0)
            d += rank;
        if (*mask & (1u << d))
            return weft__errorf(WEFT_EINVAL, "%s: axis %d is given twice for %s",
                                reduce_fn(n, fn, own, sizeof own), r->axes[k],
                                weft__spec_str(a, sa, sizeof sa));
        *mask |= 1u << d;
    }
    return 0;
}

int weft__graph_init(weft__graph *g, uint32_t n_args)
{
    memset(g, 0, sizeof *g);
    g->n_args = n_args;
    g->last_side_effect = WEFT__NO_NODE;
    return 0;
}

uint32_t weft__graph_add(weft__graph *g, const weft__node *n, const uint32_t *in, uint32_t n_in)
{
    if (g->n_nodes == WEFT__NO_NODE - 1)
        return WEFT__NO_NODE;
    if (g->n_nodes == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 16;
        if (cap < g->cap || cap > WEFT__NO_NODE - 1)
            cap = WEFT__NO_NODE - 1;
        weft__node *nodes = weft__realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return WEFT__NO_NODE;
        /* Small input lists live inside the node, so they moved with it. */
        for (uint32_t i = 0; i < g->n_nodes; i++)
            if (nodes[i].n_in <= 3)
                nodes[i].in = nodes[i].inline_in;
        g->nodes = nodes;
        g->cap = cap;
    }
    uint32_t *ins = NULL;
    if (n_in > 3) {
        ins = weft__malloc((size_t)n_in * sizeof *ins);
        if (!ins)
            return WEFT__NO_NODE;
    }
    uint32_t id = g->n_nodes++;
    weft__node *dst = &g->nodes[id];
    *dst = *n;
    dst->n_in = n_in;
    dst->in = ins ? ins : dst->inline_in;
    if (n_in)
        memcpy(dst->in, in, (size_t)n_in * sizeof *in);
    return id;
}

void weft__node_drop_attrs(weft__node *n)
{
    switch (n->op) {
    case WEFT__OP_CONST:
        weft_tensor_release(n->attr.constant.value);
        n->attr.constant.value = NULL;
        break;
    case WEFT__OP_MAP:
        if (n->attr.map.concrete)
            weft__callee_of(n->attr.map.fn)->ops->release(n->attr.map.concrete);
        n->attr.map.concrete = NULL;
        break;
    case WEFT__OP_COND: case WEFT__OP_WHILE: case WEFT__OP_MAP_EX: case WEFT__OP_HOST_EX:
    case WEFT__OP_SCAN: case WEFT__OP_CASE: case WEFT__OP_WHILE_VJP: case WEFT__OP_SCAN_VJP:
    case WEFT__OP_MAP_VJP:
        weft__multi_free(n->attr.multi.m);
        n->attr.multi.m = NULL;
        break;
    case WEFT__OP_FUSED:
        if (n->attr.fused.prog)
            weft__fused_free(n->attr.fused.prog);
        n->attr.fused.prog = NULL;
        break;
    default:
        break;
    }
}

void weft__graph_free(weft__graph *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        weft__node *n = &g->nodes[i];
        weft__node_drop_attrs(n);
        if (n->n_in > 3)
            weft__free(n->in);
    }
    weft__free(g->nodes);
    weft__free(g->outs);
    memset(g, 0, sizeof *g);
    g->last_side_effect = WEFT__NO_NODE;
}
