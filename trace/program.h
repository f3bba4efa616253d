/* The compiler's internal structures: the fused elementwise program held by
 * a FUSED node, the passes, and the compiled program the executor runs.
 * trace/ internal (compile.c, pass_*.c, program.c, exec.c and their tests). */
#ifndef WEFT_TRACE_PROGRAM_H
#define WEFT_TRACE_PROGRAM_H

#include "trace/iface.h"
#include "trace/ir.h"

/* A fused group holds at most this many instructions, so that its scratch
 * blocks fit on a worker's stack. */
#define WEFT__FUSED_MAX_INSTR 16
/* Elements per block of a fused loop. */
#define WEFT__FUSED_BLOCK 1024
/* An operand of a fused instruction: an external input index, or (with
 * this bit) the index of an earlier instruction. */
#define WEFT__FSRC_INSTR 0x8000u

typedef struct weft__finstr {
    weft__op   op;
    weft_dtype in_dt;      /* dtype of the value operands (CAST: the source) */
    weft_dtype out_dt;     /* result dtype (CAST: the target) */
    uint8_t    n_src;
    uint8_t    reg;        /* scratch block of the result (unused by the last) */
    uint16_t   src[3];
} weft__finstr;

/* The program of a FUSED node: instructions in order; the last one is the
 * node's value.  Immutable once built; owned by its node. */
struct weft__fused {
    uint32_t     n_instr, n_ext, n_regs;
    weft__finstr ins[WEFT__FUSED_MAX_INSTR];
};
void weft__fused_free(struct weft__fused *f);

/* Passes.  Each rewrites g in place (node ids change; g->outs follows) and
 * returns 0 or a negative code (WEFT_ENOMEM) with g still valid. */
int weft__pass_dce(weft__graph *g);
int weft__pass_fold(weft__graph *g);
int weft__pass_cse(weft__graph *g);
int weft__pass_fuse(weft__graph *g);

/* Rebuilds g from the nodes i with keep[i], reading every input x as
 * fwd[x] (fwd NULL: identity; fwd[x] must be kept and come before any
 * reader).  subst (may be NULL) gives nodes that replace kept ones; their
 * input lists hold old ids.  Owned attributes move to the new graph. */
int weft__graph_rebuild(weft__graph *g, const bool *keep, const uint32_t *fwd,
                        weft__node *const *subst);

/* Per-node facts the executor uses. */
#define WEFT__PN_OUTPUT   1u   /* the node is an output */
#define WEFT__PN_BORROWED 2u   /* ARG/CONST: the value is not owned by a run */
#define WEFT__PN_DONOR    4u   /* its buffer is handed to a later FUSED node */
#define WEFT__PN_DYNAMIC  8u   /* an input or the output has unknown dims */
#define WEFT__PN_PLANNED 16u   /* the executor hands its kernel a buffer (see below) */

/* True for the ops whose result buffer the executor provides: FUSED,
 * FILL, RANGE, elementwise, reductions, the SHAPE and ARRAY ops and
 * MATMUL. */
bool weft__plan_is_planned(weft__op op);

/* Buffer plan (pass_plan.c): for each planned node, the earlier node whose
 * dead buffer it writes into (donor[i], or WEFT__NO_NODE), chosen so that
 * every reader of the donor is an ancestor of the node, whatever order the
 * executor picks.  Inputs (ARG/CONST), map and host results and outputs are
 * never donors, and each donor has one receiver, so a chain of donors is
 * one buffer (a slot) for the whole run.  A node writes in place into one
 * of its own inputs only when that is safe for its kernel (elementwise and
 * fused ops, cumsum and fill_like on an input of the same dtype and shape,
 * the SHAPE ops); reductions, matmul and the other ARRAY ops never do.  Sizes need not match: the first node of a slot
 * allocates the largest size the slot needs (slot_bytes). */
int weft__plan_buffers(const weft__graph *g, const uint8_t *pflags, uint32_t *donor);

struct weft__program {
    weft_runtime *rt;
    char         *name;
    weft__graph   g;          /* the compiled op list */
    uint8_t      *pflags;     /* WEFT__PN_* per node */
    uint32_t     *donor;      /* buffer plan per node */
    uint64_t     *slot_bytes; /* bytes a slot's first node allocates (0: its own size) */
    int64_t      *numel;      /* result elements per node when its spec is known, else -1 */
    uint32_t      n_slots;    /* planned nodes that start a slot */
    uint32_t      n_reuses;   /* planned nodes that reuse a buffer */
    uint32_t     *n_deps;     /* distinct producers that must finish first */
    uint32_t     *n_uses;     /* distinct readers (by inputs) */
    uint32_t     *succ_off;   /* n_nodes + 1: successors in succ[] */
    uint32_t     *succ;
    uint32_t     *roots;      /* runnable nodes with no dependency */
    uint32_t      n_roots;
    uint32_t      n_exec;     /* nodes that run (not ARG/CONST) */
    uint32_t     *multi_off;  /* CONTROL nodes: where their results start in a run's
                                 result array (WEFT__NO_NODE for other nodes);
                                 NULL when the program has no CONTROL node */
    uint32_t      n_multi;    /* that array's length */
    bool          chain;      /* no two ops can ever run at once */
    bool          has_host;
    size_t        ops_traced, ops_compiled;
};

/* Builds a program from a compiled graph (taken over, also on failure). */
int weft__program_from_graph(weft_runtime *rt, const char *name, weft__graph *g,
                             weft__program **out);
/* Runs every pass on g (dce, fold, cse, dce, fuse). */
int weft__compile_graph(weft__graph *g);

#endif
