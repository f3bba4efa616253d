/* Eager composites in one pass (trace/eager_fused.h): a site's group is
 * derived once per float dtype by tracing and compiling the op, then run
 * by the fused interpreter on each eager tensor. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/eager_fused.h"
#include "trace/program.h"
#include "trace/tensor_impl.h"

/* A derived group and the constants it reads (one reference each, kept
 * for the process's life with the group). */
typedef struct fused_group {
    struct weft__fused prog;
    weft_tensor *konst[WEFT__FUSED_MAX_EXT];   /* NULL: the external input is the argument */
} fused_group;

/* The group pointer of a site whose op does not compile to one group. */
static const char no_group_mark;
#define NO_GROUP ((void *)&no_group_mark)

static bool fast_path_on = true;                 /* __atomic; tests turn it off */
static _Thread_local uint64_t fused_runs;        /* this thread's runs, for tests */

void weft__eager_fused_enable(bool on)
{
    __atomic_store_n(&fast_path_on, on, __ATOMIC_RELAXED);
}

uint64_t weft__eager_fused_runs(void)
{
    return fused_runs;
}

/* ---- Deriving a site's group ------------------------------------------- */

static int site_body(weft_ctx *cx, weft_value *const *argv, weft_value **outv, void *user)
{
    const weft__fused_site *site = user;
    outv[0] = site->body(cx, argv[0]);
    return 0;
}

static void group_free(fused_group *fg)
{
    for (uint32_t k = 0; k < WEFT__FUSED_MAX_EXT; k++)
        weft_tensor_release(fg->konst[k]);
    weft__free(fg);
}

/* The group of a compiled graph that is one fused node over the argument
 * (and scalar constants), shaped like the argument; NO_GROUP for any other
 * graph, NULL when out of memory. */
static void *group_of(const weft__graph *g, const weft_spec *arg)
{
    if (g->n_outs != 1)
        return NO_GROUP;
    const weft__node *n = &g->nodes[g->outs[0]];
    if (n->op != WEFT__OP_FUSED || !weft__spec_equal(&n->spec, arg))
        return NO_GROUP;
    const struct weft__fused *prog = n->attr.fused.prog;
    if (prog->n_ext != n->n_in || prog->ins[prog->n_instr - 1].kind != WEFT__FK_FULL)
        return NO_GROUP;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const weft__node *in = &g->nodes[n->in[k]];
        bool is_arg = in->op == WEFT__OP_ARG && prog->ext_kind[k] == WEFT__FK_FULL;
        bool is_scalar = in->op == WEFT__OP_CONST && in->spec.rank == 0 &&
                         prog->ext_kind[k] == WEFT__FK_SCALAR;
        if (!is_arg && !is_scalar)
            return NO_GROUP;
    }
    fused_group *fg = weft__calloc(1, sizeof *fg);
    if (!fg)
        return NULL;
    fg->prog = *prog;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const weft__node *in = &g->nodes[n->in[k]];
        if (in->op == WEFT__OP_CONST)
            fg->konst[k] = weft_tensor_retain(in->attr.constant.value);
    }
    return fg;
}

/* Traces and compiles site's op for a rank-2 dt of unknown dims: the group
 * (or NO_GROUP), or NULL when this failed for memory (tried again next
 * time). */
static void *derive(weft_runtime *rt, const weft__fused_site *site, weft_dtype dt)
{
    weft__targ arg = { .kind = WEFT_ARG_TENSOR };
    arg.spec.dtype = dt;
    arg.spec.rank = 2;
    arg.spec.dims[0] = arg.spec.dims[1] = WEFT_DIM_ANY;
    weft__graph g;
    int rc = weft__trace_body(rt, site->name, site_body, (void *)site, &arg, 1, 1, &g);
    if (rc == 0)
        rc = weft__compile_graph(&g);
    void *group = rc == 0 ? group_of(&g, &arg.spec) : rc == WEFT_ENOMEM ? NULL : NO_GROUP;
    weft__graph_free(&g);
    return group;
}

/* The site's group for dt, derived and published on first use; NULL when
 * there is none now. */
static const fused_group *site_group(weft_runtime *rt, weft__fused_site *site, weft_dtype dt)
{
    void **slot = &site->group[dt == WEFT_F64];
    void *group = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!group) {
        if (!(group = derive(rt, site, dt)))
            return NULL;
        void *seen = NULL;
        if (!__atomic_compare_exchange_n(slot, &seen, group, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            /* Another thread published first: use its group. */
            if (group != NO_GROUP)
                group_free(group);
            group = seen;
        }
    }
    return group == NO_GROUP ? NULL : group;
}

/* ---- Running it --------------------------------------------------------- */

/* Runs fg over rows x cols elements from element `at` of a into y. */
static int launch(weft_runtime *rt, const fused_group *fg, const weft_tensor *a, weft_tensor *y,
                  int64_t at, int64_t rows, int64_t cols)
{
    size_t off = (size_t)at * weft_dtype_size(a->dtype);
    weft__fused_launch L = { .rows = rows, .cols = cols, .out = (char *)y->data + off };
    for (uint32_t k = 0; k < fg->prog.n_ext; k++)
        L.ext[k] = fg->konst[k] ? fg->konst[k]->data : (const char *)a->data + off;
    return weft__fused_run(rt, &fg->prog, &L);
}

/* A group over rows runs on a's rows as they are; an elementwise one on
 * rows of a tile's length, which spread over the workers, then the rest. */
static int run_group(weft_runtime *rt, const weft__fused_site *site, const fused_group *fg,
                     const weft_tensor *a, weft_tensor *y)
{
    if (a->numel == 0)
        return 0;
    if (site->over_rows) {
        int64_t w = a->dims[a->rank - 1];
        return launch(rt, fg, a, y, 0, a->numel / w, w);
    }
    int64_t rows = a->numel / WEFT__FUSED_TILE, rest = a->numel % WEFT__FUSED_TILE;
    int rc = rows ? launch(rt, fg, a, y, 0, rows, WEFT__FUSED_TILE) : 0;
    if (rc == 0 && rest)
        rc = launch(rt, fg, a, y, rows * WEFT__FUSED_TILE, 1, rest);
    return rc;
}

static bool applies(weft_ctx *cx, const weft__fused_site *site, const weft_value *a)
{
    if (!weft__ctx_is_eager(cx) || !weft__ctx_runtime(cx) || weft__value_is_weak(a) ||
        !__atomic_load_n(&fast_path_on, __ATOMIC_RELAXED))
        return false;
    const weft_tensor *t = weft__value_tensor(a);
    if (!t || !weft__dtype_is_float(t->dtype))
        return false;
    return !site->over_rows || (t->rank >= 1 && t->dims[t->rank - 1] <= WEFT__FUSED_TILE);
}

bool weft__eager_fused(weft_ctx *cx, weft__fused_site *site, weft_value *a, weft_value **out)
{
    if (!applies(cx, site, a))
        return false;
    weft_runtime *rt = weft__ctx_runtime(cx);
    const weft_tensor *t = weft__value_tensor(a);
    const fused_group *fg = site_group(rt, site, t->dtype);
    if (!fg)
        return false;
    bool prof = weft__profiling(rt);
    uint64_t t0 = prof ? weft__now_ns() : 0;
    weft_tensor *y = NULL;
    int rc = weft__tensor_new(t->dtype, t->rank, t->dims, &y);
    if (rc == 0)
        rc = run_group(rt, site, fg, t, y);
    if (rc < 0) {
        weft_tensor_release(y);
        *out = weft__ctx_fail_errmsg(cx, rc);
        return true;
    }
    if (prof)
        weft__profile_span(rt, "op", site->name, t0, weft__now_ns(), NULL);
    fused_runs++;
    *out = weft__ctx_wrap(cx, y);
    return true;
}
