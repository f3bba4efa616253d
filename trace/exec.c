/* The executor.  A program is immutable; everything a run changes lives in
 * a per-run state (on the stack for small programs), so any number of
 * threads may run one program at once.
 *
 * Ops run as soon as their producers (and, for host calls, the previous
 * host call) are done: a worker that finishes an op runs one newly ready
 * successor itself and spawns the others, keeping at most
 * weft__inter_op_threads executors busy.  Programs where no two ops can
 * overlap, or whose arguments are tiny, run serially in program order with
 * no task overhead.  Values are released after their last reader, except
 * the ones the buffer plan hands to a later op.
 *
 * Buffers: every planned op (see weft__plan_buffers) gets its result
 * buffer from the executor: its donor's, when the plan gave one and the
 * donor's tensor is still the run's alone and large enough, else a new one
 * sized for the whole slot, so a run allocates once per slot.  When every
 * argument matches the specs the program was compiled for and a node has
 * no unknown dims, its result spec is the compiled one: nothing is
 * re-inferred. */
#include <inttypes.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/jit.h"
#include "trace/kernels.h"
#include "trace/program.h"
#include "trace/sidefx.h"
#include "trace/tensor_impl.h"

/* Below this many argument elements a program runs serially: spawning
 * would cost more than the ops. */
#define SERIAL_ELEMS 4096
/* Programs up to this size keep their run state on the stack. */
#define STACK_NODES 32
/* Ready ops a task keeps for itself before spawning regardless. */
#define LOCAL_READY 32
#define ERRMSG_MAX 512

typedef struct run_state run_state;
typedef struct task_arg { run_state *r; uint32_t node; } task_arg;

struct run_state {
    const weft__program *p;
    weft_runtime *rt;
    weft_tensor **vals;
    weft_tensor **multi;     /* the results of CONTROL nodes (p->multi_off) */
    uint32_t *deps, *uses;   /* atomic when parallel */
    task_arg *tasks;
    bool parallel, profiling;
    bool exact;              /* the arguments match the compiled specs */
    unsigned limit;
    unsigned in_flight;      /* atomic */
    int status;              /* atomic: the first error */
    char msg[ERRMSG_MAX];    /* its message, written by the thread that set status */
};

/* Keeps the first error; one raised by node (not WEFT__NO_NODE) names the
 * function and the node, as print_ops numbers it ("f: %2 = weft_add: ..."). */
static void record_error(run_state *r, int rc, uint32_t node)
{
    int zero = 0;
    if (!__atomic_compare_exchange_n(&r->status, &zero, rc, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    if (node == WEFT__NO_NODE)
        snprintf(r->msg, sizeof r->msg, "%s", weft_errmsg());
    else
        snprintf(r->msg, sizeof r->msg, "%s: %%%" PRIu32 " = %s", r->p->name, node, weft_errmsg());
}

static int failed(run_state *r)
{
    return __atomic_load_n(&r->status, __ATOMIC_ACQUIRE);
}

static bool same_shape(const weft_spec *s, const weft_tensor *t)
{
    if (s->rank != t->rank)
        return false;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] != t->dims[d])
            return false;
    return true;
}

/* Whether t fits the compiled spec s: dtype, rank and every known dim. */
static bool arg_matches(const weft_spec *s, const weft_tensor *t)
{
    if (s->dtype != t->dtype)
        return false;
    if (s->rank == WEFT_RANK_ANY)
        return true;
    if (s->rank != t->rank)
        return false;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] != WEFT_DIM_ANY && s->dims[d] != t->dims[d])
            return false;
    return true;
}

/* An instruction of a fused program as a node, for shape inference and
 * for the op-by-op fallback. */
static void instr_node(const weft__finstr *in, weft__node *nd)
{
    memset(nd, 0, sizeof *nd);
    nd->op = in->op;
    nd->n_in = in->n_src;
    nd->in = nd->inline_in;
    nd->after = WEFT__NO_NODE;
    nd->spec.dtype = in->out_dt;
    if (in->op == WEFT__OP_CAST)
        nd->attr.cast.to = in->out_dt;
    if (in->red != WEFT__FRED_NONE)
        nd->attr.reduce = in->axes;
}

/* The op-by-op fallback for runs whose shapes do not fit the group's
 * tiles (possible when dims were unknown at trace time: an operand that
 * needs general broadcasting, rows too wide for a reduction in a tile, an
 * empty domain). */
static int fused_fallback(run_state *r, const struct weft__fused *f, weft_tensor *const *ext,
                          weft_tensor **out)
{
    weft_tensor *res[WEFT__FUSED_MAX_INSTR] = { NULL };
    int rc = 0;
    for (uint32_t j = 0; j < f->n_instr; j++) {
        weft__node nd;
        weft_tensor *in[3];
        instr_node(&f->ins[j], &nd);
        for (uint32_t k = 0; k < nd.n_in; k++) {
            uint16_t s = f->ins[j].src[k];
            in[k] = (s & WEFT__FSRC_INSTR) ? res[s & ~WEFT__FSRC_INSTR] : ext[s];
        }
        if ((rc = weft__kernel_eval(r->rt, &nd, in, &res[j])) < 0)
            goto done;
    }
    *out = res[f->n_instr - 1];
    res[f->n_instr - 1] = NULL;
done:
    for (uint32_t j = 0; j < f->n_instr; j++)
        weft_tensor_release(res[j]);
    return rc;
}

/* A tensor of spec s (numel elements, known dims) whose buffer holds cap
 * >= its nbytes bytes, for a slot that later ops reuse. */
static int slot_tensor_new(const weft_spec *s, int64_t numel, size_t cap, weft_tensor **out)
{
    weft_tensor *t = weft__malloc(sizeof *t);
    if (!t)
        goto nomem;
    t->refs = 1;
    t->dtype = s->dtype;
    t->rank = s->rank;
    memcpy(t->dims, s->dims, sizeof t->dims);
    t->numel = numel;
    t->nbytes = (size_t)numel * weft_dtype_size(s->dtype);
    t->data = weft__tensor_buf_alloc(cap, &t->cap);
    if (!t->data)
        goto nomem;
    *out = t;
    return 0;
nomem:
    weft__free(t);
    return weft__errorf(WEFT_ENOMEM, "weft run: out of memory for a tensor of %lld elements",
                        (long long)numel);
}

static bool reads(const weft__node *n, uint32_t x)
{
    for (uint32_t k = 0; k < n->n_in; k++)
        if (n->in[k] == x)
            return true;
    return false;
}

/* The result tensor of planned node i, of spec s with numel elements: the
 * donor's tensor, when it is still the run's alone (a host callback may
 * have kept a reference: then it is not ours to overwrite), large enough
 * and, when the node reads it, of the same dtype and shape (reshape and
 * the other SHAPE ops: the same dtype); else a new one with room for the
 * rest of the slot. */
static int plan_buffer(run_state *r, uint32_t i, const weft_spec *s, int64_t numel,
                       weft_tensor **out)
{
    const weft__program *p = r->p;
    const weft__node *n = &p->g.nodes[i];
    size_t need = (size_t)numel * weft_dtype_size(s->dtype);
    uint32_t d = p->donor[i];
    if (d != WEFT__NO_NODE && r->vals[d]) {
        weft_tensor *t = r->vals[d];
        bool ok = t->cap >= need && __atomic_load_n(&t->refs, __ATOMIC_ACQUIRE) == 1;
        if (ok && reads(n, d))
            ok = t->dtype == s->dtype &&
                 (weft__op_kind_of(n->op) == WEFT__KIND_SHAPE || same_shape(s, t));
        if (ok) {
            r->vals[d] = NULL;
            t->dtype = s->dtype;
            if (!same_shape(s, t)) {
                t->rank = s->rank;
                memcpy(t->dims, s->dims, sizeof t->dims);
            }
            t->numel = numel;
            t->nbytes = need;
            *out = t;
            return 0;
        }
    }
    size_t cap = need;
    if (r->exact && p->slot_bytes[i] > cap)
        cap = (size_t)p->slot_bytes[i];
    return slot_tensor_new(s, numel, cap, out);
}

/* Whether external input t has the shape of kind k in domain d (rank
 * dims, rows before split). */
static bool ext_fits(uint8_t k, const weft_tensor *t, const int64_t *d, int rank, int split)
{
    if (t->rank > rank)
        return false;
    for (int q = 0; q < rank; q++) {
        int tq = q - (rank - t->rank);
        int64_t have = tq >= 0 ? t->dims[tq] : 1;
        bool varies = q < split ? (k & WEFT__FK_ROW) : (k & WEFT__FK_COL);
        if (have != (varies ? d[q] : 1))
            return false;
    }
    return true;
}

/* Runs fused node i over a launch: the one place a fused group's
 * computation is chosen: its native loop once the compile thread has
 * published one (trace/jit.h), else the interpreter. */
static int fused_dispatch(run_state *r, uint32_t i, const struct weft__fused *f,
                          const weft__fused_launch *L)
{
    weft__native_fn native = weft__jit_native(r->p, i);
    /* Native code takes the columns known at trace time as constants; a
     * launch of other columns (never expected) stays on the interpreter. */
    int64_t cols = 1;
    for (int q = f->split; q < f->rank && cols > 0; q++)
        cols = f->dims[q] >= 0 ? cols * f->dims[q] : -1;
    if (cols > 0 && cols != L->cols)
        native = NULL;
    return weft__fused_run_native(r->rt, f, L, native);
}

/* A fused node: its result spec and domain (re-inferred instruction by
 * instruction when shapes may differ from the compiled ones, so that a
 * shape error reads as it would have at trace time), a check that every
 * input has the shape its kind says, then the tiles; shapes that do not
 * fit take the op-by-op path. */
static int run_fused(run_state *r, uint32_t i, weft_tensor *const *ext, weft_tensor **out)
{
    const weft__program *p = r->p;
    const weft__node *n = &p->g.nodes[i];
    const struct weft__fused *f = n->attr.fused.prog;
    weft_spec spec = n->spec;
    int64_t dom[WEFT_MAX_RANK];
    memcpy(dom, f->dims, sizeof dom);
    bool tiled = true, known = true;
    for (int d = 0; d < f->rank; d++)
        known = known && dom[d] >= 0;
    if ((p->pflags[i] & WEFT__PN_DYNAMIC) || !r->exact || !known) {
        weft_spec is[WEFT__FUSED_MAX_INSTR], domain = { .rank = WEFT_RANK_ANY };
        bool have_domain = false;
        for (uint32_t j = 0; j < f->n_instr; j++) {
            const weft__finstr *fi = &f->ins[j];
            weft__node nd;
            weft_spec ins[3];
            instr_node(fi, &nd);
            for (uint32_t k = 0; k < nd.n_in; k++) {
                uint16_t s = fi->src[k];
                if (s & WEFT__FSRC_INSTR)
                    ins[k] = is[s & ~WEFT__FSRC_INSTR];
                else
                    weft__tensor_spec(ext[s], &ins[k]);
            }
            int rc = weft__infer_spec(&nd, ins, &is[j]);
            if (rc < 0)
                return rc;
            /* The domain is the shape of any FULL value: an elementwise
             * one, or a reduction's input. */
            if (!have_domain && (fi->red != WEFT__FRED_NONE || fi->kind == WEFT__FK_FULL)) {
                domain = fi->red != WEFT__FRED_NONE ? ins[0] : is[j];
                have_domain = true;
            }
        }
        spec = is[f->n_instr - 1];
        tiled = have_domain && domain.rank == f->rank;
        if (tiled)
            memcpy(dom, domain.dims, sizeof dom);
    }
    int64_t numel;
    if (spec.rank < 0 ||
        !weft__numel_checked(spec.rank, spec.dims, weft_dtype_size(spec.dtype), &numel))
        return weft__errorf(WEFT_ESHAPE, "weft fused op: bad result shape");
    weft__fused_launch L;
    L.rows = 1;
    L.cols = 1;
    /* An inner reduction needs whole rows in a tile. */
    bool full_rows = false;
    for (uint32_t j = 0; j < f->n_instr; j++)
        full_rows = full_rows || f->ins[j].red == WEFT__FRED_INNER;
    for (int d = 0; d < f->rank && tiled; d++) {
        if (d < f->split)
            L.rows *= dom[d];
        else
            L.cols *= dom[d];
    }
    tiled = tiled && L.rows > 0 && L.cols > 0 && (!full_rows || L.cols <= WEFT__FUSED_TILE);
    for (uint32_t e = 0; e < f->n_ext && tiled; e++) {
        tiled = ext_fits(f->ext_kind[e], ext[e], dom, f->rank, f->split);
        L.ext[e] = ext[e]->data;
    }
    if (!tiled)
        return fused_fallback(r, f, ext, out);
    weft_tensor *t = NULL;
    int rc = plan_buffer(r, i, &spec, numel, &t);
    if (rc < 0)
        return rc;
    L.out = t->data;
    if ((rc = fused_dispatch(r, i, f, &L)) < 0) {
        weft_tensor_release(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* A planned op other than FUSED: its result spec (re-inferred only when
 * shapes may differ from the compiled ones), its buffer from the plan,
 * then its kernel. */
static int run_planned(run_state *r, uint32_t i, weft_tensor *const *in, weft_tensor **out)
{
    const weft__program *p = r->p;
    const weft__node *n = &p->g.nodes[i];
    const weft_spec *sp = &n->spec;
    int64_t numel = p->numel[i];
    weft_spec os;
    if ((p->pflags[i] & WEFT__PN_DYNAMIC) || !r->exact || numel < 0) {
        /* concat and stack take any number of inputs. */
        weft_spec is_s[3], *is = is_s;
        if (n->n_in > 3 && !(is = weft__malloc(sizeof *is * n->n_in)))
            return weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory", weft__op_name(n->op));
        for (uint32_t k = 0; k < n->n_in; k++)
            weft__tensor_spec(in[k], &is[k]);
        int rc = weft__infer_spec(n, is, &os);
        if (is != is_s)
            weft__free(is);
        if (rc < 0)
            return rc;
        if (os.rank < 0 ||
            !weft__numel_checked(os.rank, os.dims, weft_dtype_size(os.dtype), &numel))
            return weft__errorf(WEFT_EINVAL, "weft_%s: the result shape is unknown or too large",
                                weft__op_name(n->op));
        sp = &os;
    }
    weft_tensor *t = NULL;
    int rc = plan_buffer(r, i, sp, numel, &t);
    if (rc < 0)
        return rc;
    if ((rc = weft__kernel_eval_into(r->rt, n, in, t)) < 0) {
        weft_tensor_release(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Drops node x's value: its tensor, or a CONTROL node's results. */
static void release_value(run_state *r, uint32_t x)
{
    weft_tensor_release(r->vals[x]);
    r->vals[x] = NULL;
    uint32_t off = r->p->multi_off ? r->p->multi_off[x] : WEFT__NO_NODE;
    if (off == WEFT__NO_NODE)
        return;
    const struct weft__multi *m = r->p->g.nodes[x].attr.multi.m;
    for (uint32_t k = 0; k < m->n_outs; k++) {
        weft_tensor_release(r->multi[off + k]);
        r->multi[off + k] = NULL;
    }
}

/* Runs node i and releases the inputs it was the last reader of. */
static int exec_node(run_state *r, uint32_t i)
{
    const weft__program *p = r->p;
    const weft__node *n = &p->g.nodes[i];
    weft_tensor *inb[8], **in = inb;
    weft_tensor *out = NULL;
    int rc = 0;
    uint64_t t0 = r->profiling ? weft__now_ns() : 0;
    if (n->n_in > 8) {
        in = weft__malloc((size_t)n->n_in * sizeof *in);
        if (!in)
            return weft__errorf(WEFT_ENOMEM, "weft run %s: out of memory", p->name);
    }
    for (uint32_t k = 0; k < n->n_in; k++)
        in[k] = r->vals[n->in[k]];
    switch (weft__op_kind_of(n->op)) {
    case WEFT__KIND_MAP:
        rc = weft__map_run(r->rt, n, in[0], &out);
        break;
    case WEFT__KIND_HOST:
        rc = weft__host_run(r->rt, n, in, &out);
        break;
    case WEFT__KIND_FUSED:
        rc = run_fused(r, i, in, &out);
        break;
    case WEFT__KIND_CONTROL:
        rc = weft__multi_run(r->rt, n, in, &r->multi[p->multi_off[i]]);
        break;
    case WEFT__KIND_RESULT:
        out = weft_tensor_retain(r->multi[p->multi_off[n->in[0]] + n->attr.result.index]);
        break;
    default:
        if (p->pflags[i] & WEFT__PN_PLANNED) {
            rc = run_planned(r, i, in, &out);
            break;
        }
        rc = weft__kernel_eval(r->rt, n, in, &out);
        break;
    }
    if (in != inb)
        weft__free(in);
    if (rc < 0)
        return rc;
    r->vals[i] = out;
    if (r->profiling)
        weft__profile_span(r->rt, "op", weft__op_name(n->op), t0, weft__now_ns(), p->name);
    for (uint32_t k = 0; k < n->n_in; k++) {
        uint32_t x = n->in[k];
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++)
            seen = n->in[j] == x;
        if (seen || (p->pflags[x] & (WEFT__PN_BORROWED | WEFT__PN_OUTPUT | WEFT__PN_DONOR)))
            continue;
        uint32_t left = r->parallel ? __atomic_sub_fetch(&r->uses[x], 1, __ATOMIC_ACQ_REL)
                                    : --r->uses[x];
        if (left == 0)
            release_value(r, x);
    }
    return 0;
}

static void run_task(void *arg);

static void start(run_state *r, weft_group *grp, bool *grp_init, uint32_t node)
{
    if (!*grp_init) {
        weft_group_init(grp, r->rt);
        *grp_init = true;
    }
    __atomic_add_fetch(&r->in_flight, 1, __ATOMIC_RELAXED);
    weft_spawn(grp, run_task, &r->tasks[node]);
}

/* Runs ready ops starting from first[0..n_first), following successors as
 * they become ready; waits for what it spawned. */
static void run_from(run_state *r, const uint32_t *first, uint32_t n_first)
{
    const weft__program *p = r->p;
    uint32_t local[LOCAL_READY], n_local = 0;
    weft_group grp;
    bool grp_init = false;
    uint32_t cur = WEFT__NO_NODE;
    for (uint32_t k = 0; k < n_first; k++) {
        if (cur == WEFT__NO_NODE)
            cur = first[k];
        else if (n_local < LOCAL_READY &&
                 __atomic_load_n(&r->in_flight, __ATOMIC_RELAXED) >= r->limit)
            local[n_local++] = first[k];
        else
            start(r, &grp, &grp_init, first[k]);
    }
    while (cur != WEFT__NO_NODE && !failed(r)) {
        int rc = exec_node(r, cur);
        if (rc < 0) {
            record_error(r, rc, cur);
            break;
        }
        uint32_t next = WEFT__NO_NODE;
        for (uint32_t s = p->succ_off[cur]; s < p->succ_off[cur + 1]; s++) {
            uint32_t c = p->succ[s];
            if (__atomic_sub_fetch(&r->deps[c], 1, __ATOMIC_ACQ_REL) != 0)
                continue;
            if (next == WEFT__NO_NODE)
                next = c;
            else if (n_local < LOCAL_READY &&
                     __atomic_load_n(&r->in_flight, __ATOMIC_RELAXED) >= r->limit)
                local[n_local++] = c;
            else
                start(r, &grp, &grp_init, c);
        }
        if (next == WEFT__NO_NODE && n_local)
            next = local[--n_local];
        cur = next;
    }
    if (grp_init) {
        int rc = weft_group_wait(&grp);
        if (rc < 0) {
            weft__errorf(rc, "weft run %s: ops were dropped", p->name);
            record_error(r, rc, WEFT__NO_NODE);
        }
    }
}

static void run_task(void *arg)
{
    task_arg *t = arg;
    run_state *r = t->r;
    run_from(r, &t->node, 1);
    __atomic_sub_fetch(&r->in_flight, 1, __ATOMIC_RELAXED);
}

static int run_serial(run_state *r)
{
    const weft__program *p = r->p;
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        if (p->pflags[i] & WEFT__PN_BORROWED)
            continue;
        int rc = exec_node(r, i);
        if (rc < 0) {
            record_error(r, rc, i);
            return rc;
        }
    }
    return 0;
}

int weft__program_run(const weft__program *p, weft_tensor *const *args, size_t n_args,
                      weft_tensor **outs, size_t n_outs)
{
    /* A function of no outputs (only host calls) passes no outs. */
    if (!p || (n_outs && !outs) || (n_args && !args))
        return weft__errorf(WEFT_EINVAL, "weft__program_run: NULL %s",
                            !p ? "program" : !args && n_args ? "args" : "outs");
    if (n_outs != p->g.n_outs)
        return weft__errorf(WEFT_EINVAL, "weft run %s: %zu outputs requested, the program has %u",
                            p->name, n_outs, p->g.n_outs);
    for (size_t k = 0; k < n_outs; k++)
        outs[k] = NULL;

    uint32_t n = p->g.n_nodes;
    weft_tensor *vals_s[STACK_NODES];
    uint32_t deps_s[STACK_NODES], uses_s[STACK_NODES];
    task_arg tasks_s[STACK_NODES];
    run_state r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.rt = p->rt;
    r.profiling = weft__profiling(p->rt);
    void *heap = NULL;
    weft_tensor *multi_s[STACK_NODES];
    r.multi = p->n_multi <= STACK_NODES ? multi_s : weft__malloc(p->n_multi * sizeof *r.multi);
    if (!r.multi)
        return weft__errorf(WEFT_ENOMEM, "weft run %s: out of memory", p->name);
    memset(r.multi, 0, p->n_multi * sizeof *r.multi);
    if (n <= STACK_NODES) {
        r.vals = vals_s;
        r.deps = deps_s;
        r.uses = uses_s;
        r.tasks = tasks_s;
    } else {
        size_t sz = (size_t)n * (sizeof *r.vals + sizeof *r.tasks +
                                 2 * sizeof *r.deps);
        heap = weft__malloc(sz);
        if (!heap) {
            if (r.multi != multi_s)
                weft__free(r.multi);
            return weft__errorf(WEFT_ENOMEM, "weft run %s: out of memory", p->name);
        }
        r.vals = heap;
        r.tasks = (task_arg *)(r.vals + n);
        r.deps = (uint32_t *)(r.tasks + n);
        r.uses = r.deps + n;
    }
    memcpy(r.uses, p->n_uses, (size_t)n * sizeof *r.uses);
    int64_t arg_elems = 0;
    int rc = 0;
    r.exact = true;
    memset(r.vals, 0, (size_t)n * sizeof *r.vals);
    for (uint32_t i = 0; i < n; i++) {
        const weft__node *nd = &p->g.nodes[i];
        if (nd->op == WEFT__OP_CONST) {
            r.vals[i] = nd->attr.constant.value;
        } else if (nd->op == WEFT__OP_ARG) {
            uint32_t a = nd->attr.arg.index;
            if (a >= n_args || !args[a]) {
                rc = weft__errorf(WEFT_EINVAL, "weft run %s: argument %u is %s", p->name, a,
                                  a >= n_args ? "missing" : "NULL");
                goto done;
            }
            r.vals[i] = args[a];
            arg_elems += args[a]->numel;
            if (r.exact && !arg_matches(&nd->spec, args[a]))
                r.exact = false;
        }
    }

    unsigned inter = weft__inter_op_threads(p->rt);
    /* In inline mode every spawn would run at once, recursing once per
     * ready successor: the serial path runs the same order without that. */
    r.parallel = !(inter <= 1 || p->chain || p->n_exec < 2 || weft__inline_now() ||
                   (arg_elems <= SERIAL_ELEMS && !p->has_host));
    if (!r.parallel) {
        rc = run_serial(&r);
    } else {
        r.limit = inter;
        r.in_flight = 1;   /* the calling thread runs ops too */
        memcpy(r.deps, p->n_deps, (size_t)n * sizeof *r.deps);
        for (uint32_t i = 0; i < n; i++) {
            r.tasks[i].r = &r;
            r.tasks[i].node = i;
        }
        run_from(&r, p->roots, p->n_roots);
        rc = failed(&r);
    }
    if (rc < 0) {
        weft__errorf(rc, "%s", r.msg);
        goto done;
    }
    for (size_t k = 0; k < n_outs; k++)
        outs[k] = weft_tensor_retain(r.vals[p->g.outs[k]]);
done:
    for (uint32_t i = 0; i < n; i++)
        if (!(p->pflags[i] & WEFT__PN_BORROWED))
            weft_tensor_release(r.vals[i]);
    for (uint32_t k = 0; k < p->n_multi; k++)
        weft_tensor_release(r.multi[k]);
    if (r.multi != multi_s)
        weft__free(r.multi);
    weft__free(heap);
    /* After the run, so that the first call's own time is not the
     * queueing's. */
    if (rc == 0)
        weft__jit_note_run(p);
    return rc;
}
