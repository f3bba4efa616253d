/* The compiler's internal structures: the fused program held by a FUSED
 * node, the passes, and the compiled program the executor runs.
 * trace/ internal (compile.c, pass_*.c, program.c, exec.c and their tests). */
#ifndef WEFT_TRACE_PROGRAM_H
#define WEFT_TRACE_PROGRAM_H

#include "trace/iface.h"
#include "trace/ir.h"

/* ---- Fused groups ----------------------------------------------------
 *
 * A FUSED node computes a connected group of elementwise ops and
 * reductions in one pass over its inputs, with no intermediate tensors.
 * struct weft__fused is a plain description (no pointers): the
 * interpreter (fused_run.c) walks it, and a native code generator can emit
 * one loop nest per group from exactly the same fields.
 *
 * Iteration space.  A group has a domain: the shape dims[0..rank) of its
 * largest values, split at `split` into rows (dims [0, split), R of them)
 * and columns (dims [split, rank), W per row; row-major, so row r is
 * elements [r*W, (r+1)*W) of a domain-shaped tensor).  Every value of the
 * group is one of four kinds, by what it varies along (the bits of
 * weft__fkind, so the kind of an elementwise result is the OR of its
 * operands' kinds):
 *   FULL    R x W   domain-shaped
 *   ROW     R x 1   dims [0, split) and 1s after (a row mean, keepdims)
 *   COL     1 x W   1s and dims [split, rank) (a bias row broadcast down)
 *   SCALAR  1 x 1
 * Shapes broadcast as NumPy's (right-aligned), so e.g. an [R] value is not
 * a ROW of [R, W]; such values do not join a group.
 *
 * Instructions, in order, each producing one value of kind `kind` from up
 * to three operands: an external input (src < WEFT__FSRC_INSTR: index into
 * the node's inputs, whose kinds and dtypes are ext_kind / ext_dt) or an
 * earlier instruction (src = WEFT__FSRC_INSTR | index).
 *   red == WEFT__FRED_NONE: an elementwise op (op of kind UNARY, BINARY,
 *     TERNARY or CAST), generic by kind: operands broadcast by their kinds
 *     (a ROW operand of a FULL op repeats along its row).
 *   red == WEFT__FRED_INNER: a reduction (op of kind REDUCE) of a FULL
 *     value over the columns into a ROW value, which later instructions
 *     may read (normalize: x - mean(x)).  Needs W <= WEFT__FUSED_TILE.
 *   red == WEFT__FRED_OUTER: a reduction of a FULL value over the rows
 *     into a COL value; only ever the last instruction.
 * in_dt is the dtype of the value operands (WHERE: inputs 1 and 2, its
 * condition is bool; CAST and reductions: the source), out_dt the
 * result's.  `axes` keeps a reduction's attributes, for the op-by-op path.
 * The last instruction is the node's value, laid out by its kind: FULL
 * [R, W], ROW [R], COL [W], SCALAR [1] (the node's spec says which dims).
 *
 * Execution.  Tiles of whole rows: rows [r0, r0 + T) x all W columns, T
 * the largest power of two with T * W <= WEFT__FUSED_TILE (so tiles never
 * straddle a chunk of WEFT__REDUCE_CHUNK rows); when W > WEFT__FUSED_TILE
 * (no ROW values then) a tile is one row's block of WEFT__FUSED_TILE
 * columns.  In a tile each instruction runs in order over its kind's part:
 * a FULL value is T*W contiguous elements, a ROW value T, a COL value W (or
 * the block), a SCALAR one; results live in scratch registers (`reg`, one
 * block of WEFT__FUSED_TILE 8-byte elements each, n_regs in all), the last
 * instruction writes the output.  Reductions follow kernel_reduce.c's
 * order bit for bit: an inner reduction accumulates each row sequentially
 * (W <= WEFT__REDUCE_CHUNK, one chunk); an outer reduction accumulates the
 * rows of each chunk of WEFT__REDUCE_CHUNK rows sequentially into partials
 * of W accumulators (weft__acc), combined in chunk order.  Tiles (and, for
 * an outer reduction, chunks) are spread over the workers. */

/* A fused group holds at most this many instructions. */
#define WEFT__FUSED_MAX_INSTR 16
/* At most this many external inputs (each instruction reads up to 3). */
#define WEFT__FUSED_MAX_EXT (3 * WEFT__FUSED_MAX_INSTR)
/* Elements per tile, and so per scratch register. */
#define WEFT__FUSED_TILE 1024
/* An operand of a fused instruction: an external input index, or (with
 * this bit) the index of an earlier instruction. */
#define WEFT__FSRC_INSTR 0x8000u

typedef enum weft__fkind {
    WEFT__FK_SCALAR = 0,
    WEFT__FK_ROW    = 1,   /* varies along the rows */
    WEFT__FK_COL    = 2,   /* varies along the columns */
    WEFT__FK_FULL   = 3    /* both */
} weft__fkind;

enum { WEFT__FRED_NONE = 0, WEFT__FRED_INNER = 1, WEFT__FRED_OUTER = 2 };

typedef struct weft__finstr {
    weft__op   op;
    weft_dtype in_dt;      /* dtype of the value operands (CAST, reductions: the source) */
    weft_dtype out_dt;     /* result dtype */
    uint8_t    n_src;
    uint8_t    kind;       /* weft__fkind of the result */
    uint8_t    red;        /* WEFT__FRED_* */
    uint8_t    reg;        /* scratch register of the result (unused by the last) */
    uint16_t   src[3];
    struct weft__reduce_axes axes;   /* reductions: the node's axes */
} weft__finstr;

/* The program of a FUSED node.  Immutable once built; owned by its node. */
struct weft__fused {
    uint32_t     n_instr, n_ext, n_regs;
    int          rank, split;                 /* the domain's rank and row/column split */
    int64_t      dims[WEFT_MAX_RANK];         /* the domain at compile time (may hold WEFT_DIM_ANY) */
    uint8_t      ext_kind[WEFT__FUSED_MAX_EXT];  /* weft__fkind of each external input */
    weft_dtype   ext_dt[WEFT__FUSED_MAX_EXT];
    weft__finstr ins[WEFT__FUSED_MAX_INSTR];
};

/* One run of a fused program on concrete data: R rows of W columns,
 * the external inputs' data in the kinds of f->ext_kind, the output's
 * buffer (laid out by the last instruction's kind). */
typedef struct weft__fused_launch {
    int64_t     rows, cols;
    const void *ext[WEFT__FUSED_MAX_EXT];
    void       *out;
} weft__fused_launch;

/* Interprets f over L (fused_run.c), spreading tiles over rt's intra-op
 * threads (rt NULL: serially).  0, or WEFT_ENOMEM for an outer reduction's
 * partials. */
int weft__fused_run(weft_runtime *rt, const struct weft__fused *f, const weft__fused_launch *L);
/* The same with the group's native function (trace/jit.h) in place of the
 * interpreter's tile loop; NULL: weft__fused_run. */
typedef void (*weft__native_fn)(const void *const *ext, void *out, int64_t r0, int64_t r1,
                                int64_t W);
int weft__fused_run_native(weft_runtime *rt, const struct weft__fused *f,
                           const weft__fused_launch *L, weft__native_fn native);

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
    /* The native tier (trace/jit.h).  jit_off is set before the program
     * is shared; jit_queued and jit, the only fields a run changes, are
     * atomic (jit: a release store, acquire loads). */
    bool          jit_off;
    int           jit_queued;
    struct weft__jit_unit *jit;
};

/* Builds a program from a compiled graph (taken over, also on failure). */
int weft__program_from_graph(weft_runtime *rt, const char *name, weft__graph *g,
                             weft__program **out);
/* Runs every pass on g (dce, fold, cse, dce, fuse). */
int weft__compile_graph(weft__graph *g);

#endif
