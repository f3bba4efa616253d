/* Helpers for the compiler and executor tests: build op lists by hand,
 * make programs from them, compare tensors.  Used by test_compile.c and
 * test_exec.c only. */
#ifndef WEFT_TEST_GRAPH_BUILD_H
#define WEFT_TEST_GRAPH_BUILD_H

#include <math.h>
#include <string.h>

#include "test_util.h"
#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/program.h"
#include "trace/tensor_impl.h"

static inline weft_spec gb_spec(const char *text)
{
    weft_spec s;
    cr_assert_eq(weft_spec_parse(text, &s), 0, "bad spec %s", text);
    return s;
}

static inline weft__node gb_node(weft__op op)
{
    weft__node n;
    memset(&n, 0, sizeof n);
    n.op = op;
    n.after = WEFT__NO_NODE;
    return n;
}

static inline uint32_t gb_push(weft__graph *g, weft__node *n, const uint32_t *in, uint32_t n_in)
{
    uint32_t id = weft__graph_add(g, n, in, n_in);
    cr_assert_neq(id, WEFT__NO_NODE, "graph_add failed");
    return id;
}

static inline uint32_t gb_arg(weft__graph *g, uint32_t index, const char *spec)
{
    weft__node n = gb_node(WEFT__OP_ARG);
    n.attr.arg.index = index;
    n.spec = gb_spec(spec);
    return gb_push(g, &n, NULL, 0);
}

static inline uint32_t gb_const_f32(weft__graph *g, float v)
{
    weft__node n = gb_node(WEFT__OP_CONST);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 0, NULL, &v, &n.attr.constant.value), 0);
    n.spec = gb_spec("f32[]");
    return gb_push(g, &n, NULL, 0);
}

/* An op node whose spec is inferred from its inputs, as ops.c would. */
static inline uint32_t gb_op(weft__graph *g, weft__op op, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t in[3] = { a, b, c };
    uint32_t n_in = c != WEFT__NO_NODE ? 3 : b != WEFT__NO_NODE ? 2 : 1;
    weft__node n = gb_node(op);
    weft_spec is[3];
    for (uint32_t k = 0; k < n_in; k++)
        is[k] = g->nodes[in[k]].spec;
    n.n_in = n_in;
    int rc = weft__infer_spec(&n, is, &n.spec);
    cr_assert_eq(rc, 0, "infer %s: %s", weft__op_name(op), weft_errmsg());
    return gb_push(g, &n, in, n_in);
}
#define GB_NONE WEFT__NO_NODE
#define gb_un(g, op, a)      gb_op(g, op, a, GB_NONE, GB_NONE)
#define gb_bin(g, op, a, b)  gb_op(g, op, a, b, GB_NONE)

static inline void gb_outs(weft__graph *g, const uint32_t *outs, uint32_t n)
{
    g->outs = weft__malloc((n ? n : 1) * sizeof *g->outs);
    cr_assert(g->outs);
    memcpy(g->outs, outs, n * sizeof *outs);
    g->n_outs = n;
}

static inline uint32_t gb_count(const weft__graph *g, weft__op op)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        c += g->nodes[i].op == op;
    return c;
}

static inline weft__program *gb_program(weft_runtime *rt, weft__graph *g)
{
    weft__program *p = NULL;
    int rc = weft__program_from_graph(rt, "test", g, &p);
    cr_assert_eq(rc, 0, "program_from_graph: %s", weft_errmsg());
    return p;
}

static inline weft_tensor *gb_tensor_f32(int rank, const int64_t *dims, float seed)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
    float *data = malloc((size_t)(numel ? numel : 1) * sizeof *data);
    for (int64_t i = 0; i < numel; i++)
        data[i] = seed + (float)(i % 97) * 0.01f - 0.3f;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, rank, dims, data, &t), 0);
    free(data);
    return t;
}

/* Same dtype, shape and (within a relative 1e-5) values. */
static inline void gb_assert_close(const weft_tensor *a, const weft_tensor *b)
{
    cr_assert(a && b);
    cr_assert_eq(weft_tensor_dtype(a), weft_tensor_dtype(b));
    cr_assert_eq(weft_tensor_rank(a), weft_tensor_rank(b));
    for (int d = 0; d < weft_tensor_rank(a); d++)
        cr_assert_eq(weft_tensor_dims(a)[d], weft_tensor_dims(b)[d]);
    int64_t n = weft_tensor_numel(a);
    if (weft_tensor_dtype(a) == WEFT_F32) {
        const float *x = weft_tensor_data(a), *y = weft_tensor_data(b);
        for (int64_t i = 0; i < n; i++)
            cr_assert(fabsf(x[i] - y[i]) <= 1e-5f * (1.0f + fabsf(y[i])),
                      "element %lld: %g vs %g", (long long)i, (double)x[i], (double)y[i]);
    } else {
        cr_assert_eq(memcmp(weft_tensor_data(a), weft_tensor_data(b),
                            (size_t)n * weft_dtype_size(weft_tensor_dtype(a))), 0);
    }
}

#endif
