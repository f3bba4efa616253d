/* The interpreter of fused groups (weft__fused_run): tiles of whole rows,
 * each instruction over its kind's part of the tile in turn, results in
 * scratch registers on the stack (trace/program.h describes the program
 * and the order of its reductions). */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/program.h"

/* An operand of an instruction, resolved for one launch. */
typedef struct fsrc {
    const char *base;        /* an external input's data, or NULL: register reg */
    int64_t es;              /* its element size */
    uint8_t kind, reg;
} fsrc;

/* An instruction resolved for one launch: its loop, operands, and their
 * row strides and column steps in a tile of its result's kind. */
typedef struct fstep {
    weft__ew_fn fn;          /* elementwise: its loop (NULL: zeros) */
    fsrc src[3];
    int64_t rs[3];
    unsigned char step[3];
} fstep;

typedef struct frun {
    const struct weft__fused *f;
    const weft__fused_launch *L;
    int64_t R, W;
    int64_t T;               /* rows per tile (1 when a row is cut into blocks) */
    int64_t CB;              /* columns per tile */
    size_t out_es;
    weft__reducer red[WEFT__FUSED_MAX_INSTR];
    fstep steps[WEFT__FUSED_MAX_INSTR];
    bool outer;              /* the last instruction is an outer reduction */
    weft__native_fn native;  /* the group's native loop (trace/jit.h), or NULL */
    /* Without an outer reduction: tasks over row tiles.  (With one, the
     * chunks of WEFT__REDUCE_CHUNK rows are the tasks.) */
    uint64_t units;
    size_t tasks;
} frun;

typedef unsigned char fused_reg[WEFT__FUSED_TILE * 8];

/* Resolves every instruction's loop and operands once per launch. */
static void plan_steps(frun *x)
{
    const struct weft__fused *f = x->f;
    for (uint32_t j = 0; j < f->n_instr; j++) {
        const weft__finstr *in = &f->ins[j];
        fstep *st = &x->steps[j];
        st->fn = in->red == WEFT__FRED_NONE ? weft__ew_lookup(in->op, in->in_dt, in->out_dt) : NULL;
        for (uint32_t k = 0; k < in->n_src; k++) {
            uint16_t s = in->src[k];
            fsrc *o = &st->src[k];
            if (s & WEFT__FSRC_INSTR) {
                const weft__finstr *p = &f->ins[s & ~WEFT__FSRC_INSTR];
                o->base = NULL;
                o->reg = p->reg;
                o->kind = p->kind;
                o->es = 0;
            } else {
                o->base = x->L->ext[s];
                o->kind = f->ext_kind[s];
                o->es = (int64_t)weft_dtype_size(f->ext_dt[s]);
            }
            if (in->kind == WEFT__FK_FULL) {
                /* A block, a value per row, a row repeated, a scalar.  A
                 * tile of several rows spans whole rows (CB == W). */
                st->rs[k] = o->kind == WEFT__FK_FULL ? x->CB : o->kind == WEFT__FK_ROW ? 1 : 0;
                st->step[k] = (o->kind & WEFT__FK_COL) != 0;
            } else {
                /* A ROW, COL or SCALAR result is one run; its operands are
                 * of its kind or scalars. */
                st->rs[k] = 0;
                st->step[k] = o->kind == in->kind && in->kind != WEFT__FK_SCALAR;
            }
        }
    }
}

/* Offset, in elements, of a value of kind k at tile (r0, c0). */
static int64_t kind_offset(uint8_t k, int64_t r0, int64_t c0, int64_t W)
{
    switch (k) {
    case WEFT__FK_FULL: return r0 * W + c0;
    case WEFT__FK_ROW:  return r0;
    case WEFT__FK_COL:  return c0;
    default:            return 0;
    }
}

/* Runs every instruction over the tile rows [r0, r0 + nt) x columns
 * [c0, c0 + nc); an outer reduction accumulates into col_acc[c0..]. */
static void run_tile(const frun *x, fused_reg *regs, int64_t r0, int64_t nt, int64_t c0,
                     int64_t nc, weft__acc *col_acc)
{
    const struct weft__fused *f = x->f;
    _Alignas(64) weft__acc acc[WEFT__FUSED_TILE];
    for (uint32_t j = 0; j < f->n_instr; j++) {
        const weft__finstr *in = &f->ins[j];
        const fstep *st = &x->steps[j];
        const void *src[3];
        for (uint32_t k = 0; k < in->n_src; k++) {
            const fsrc *o = &st->src[k];
            src[k] = o->base ? o->base + kind_offset(o->kind, r0, c0, x->W) * o->es
                             : (const void *)regs[o->reg];
        }
        void *dst = regs[in->reg];
        if (j + 1 == f->n_instr)
            dst = (char *)x->L->out + kind_offset(in->kind, r0, c0, x->W) * (int64_t)x->out_es;
        switch (in->red) {
        case WEFT__FRED_INNER: {
            /* A FULL tile of whole rows (nc == W) into a value per row. */
            const weft__reducer *rd = &x->red[j];
            for (int64_t t = 0; t < nt; t++)
                acc[t] = rd->init;
            rd->rows(src[0], nt, nc, acc);
            rd->fin(acc, nt, x->W, dst);
            continue;
        }
        case WEFT__FRED_OUTER:
            x->red[j].cols(src[0], nt, nc, nc, col_acc + c0);
            continue;
        default:
            break;
        }
        size_t rows = 1, cols = 1;
        if (in->kind == WEFT__FK_FULL) {
            rows = (size_t)nt;
            cols = (size_t)nc;
        } else if (in->kind == WEFT__FK_ROW) {
            cols = (size_t)nt;
        } else if (in->kind == WEFT__FK_COL) {
            cols = (size_t)nc;
        }
        if (st->fn)
            st->fn(src, st->rs, st->step, dst, rows, cols);
        else
            memset(dst, 0, rows * cols * weft_dtype_size(in->out_dt));
    }
}

/* Every tile of rows [ra, rb). */
static void run_rows(const frun *x, fused_reg *regs, int64_t ra, int64_t rb, weft__acc *col_acc)
{
    for (int64_t r0 = ra; r0 < rb; r0 += x->T) {
        int64_t nt = rb - r0 < x->T ? rb - r0 : x->T;
        for (int64_t c0 = 0; c0 < x->W; c0 += x->CB) {
            int64_t nc = x->W - c0 < x->CB ? x->W - c0 : x->CB;
            run_tile(x, regs, r0, nt, c0, nc, col_acc);
        }
    }
}

static int run_units(size_t tb, size_t te, void *ctx)
{
    const frun *x = ctx;
    uint32_t n_regs = x->f->n_regs ? x->f->n_regs : 1;
    _Alignas(64) fused_reg regs[n_regs];
    for (size_t task = tb; task < te; task++) {
        uint64_t b = weft__chunk_begin(x->units, x->tasks, task);
        uint64_t e = weft__chunk_begin(x->units, x->tasks, task + 1);
        int64_t rb = (int64_t)e * x->T;
        if (x->native)
            x->native(x->L->ext, x->L->out, (int64_t)b * x->T, rb < x->R ? rb : x->R, x->W);
        else
            run_rows(x, regs, (int64_t)b * x->T, rb < x->R ? rb : x->R, NULL);
    }
    return 0;
}

/* Chunk c of an outer reduction (WEFT__REDUCE_CHUNK rows) into part. */
static void fused_chunk_partial(void *ctx, int64_t c, weft__acc *part)
{
    const frun *x = ctx;
    const weft__reducer *rd = &x->red[x->f->n_instr - 1];
    uint32_t n_regs = x->f->n_regs ? x->f->n_regs : 1;
    _Alignas(64) fused_reg regs[n_regs];
    for (int64_t i = 0; i < x->W; i++)
        part[i] = rd->init;
    int64_t ra = c * WEFT__REDUCE_CHUNK;
    int64_t rb = ra + WEFT__REDUCE_CHUNK < x->R ? ra + WEFT__REDUCE_CHUNK : x->R;
    if (x->native)
        x->native(x->L->ext, part, ra, rb, x->W);
    else
        run_rows(x, regs, ra, rb, part);
}

int weft__fused_run(weft_runtime *rt, const struct weft__fused *f, const weft__fused_launch *L)
{
    return weft__fused_run_native(rt, f, L, NULL);
}

int weft__fused_run_native(weft_runtime *rt, const struct weft__fused *f,
                           const weft__fused_launch *L, weft__native_fn native)
{
    frun x;
    memset(&x, 0, sizeof x);
    x.f = f;
    x.native = native;
    x.L = L;
    x.R = L->rows;
    x.W = L->cols;
    if (x.R <= 0 || x.W <= 0)
        return 0;
    const weft__finstr *last = &f->ins[f->n_instr - 1];
    x.out_es = weft_dtype_size(last->out_dt);
    x.outer = last->red == WEFT__FRED_OUTER;
    for (uint32_t j = 0; j < f->n_instr; j++)
        if (f->ins[j].red != WEFT__FRED_NONE &&
            !weft__reducer_of(f->ins[j].op, f->ins[j].in_dt, &x.red[j]))
            return weft__errorf(WEFT_EDTYPE, "weft fused op: no %s of %s",
                                weft__op_name(f->ins[j].op), weft_dtype_name(f->ins[j].in_dt));
    if (x.W <= WEFT__FUSED_TILE) {
        /* The largest power of two of rows that fits, so that tiles line
         * up with the chunks of an outer reduction. */
        x.T = 1;
        while (x.T * 2 * x.W <= WEFT__FUSED_TILE)
            x.T *= 2;
        x.CB = x.W;
    } else {
        x.T = 1;
        x.CB = WEFT__FUSED_TILE;
    }
    plan_steps(&x);
    size_t threads = weft__chunk_count(rt, (uint64_t)x.R * (uint64_t)x.W);
    if (x.outer) {
        int64_t n_chunks = (x.R + WEFT__REDUCE_CHUNK - 1) / WEFT__REDUCE_CHUNK;
        return weft__reduce_chunks(rt, threads, &x.red[f->n_instr - 1], n_chunks, x.W, x.R,
                                   fused_chunk_partial, &x, L->out);
    }
    x.units = (uint64_t)((x.R + x.T - 1) / x.T);
    x.tasks = weft__task_count(threads, x.units);
    return weft__run_chunks(rt, x.tasks, run_units, &x);
}
