/* Eager composites in one pass.  An op built from other ops (softmax, the
 * activations) costs, eagerly, a pass over the data and a tensor for each
 * op inside it; traced, the compiler fuses the same ops into one group.  A
 * site derives that group once per process and float dtype, by tracing the
 * op on a rank-2 value of unknown dims and compiling it, and runs the
 * group's interpreter (trace/fused_run.c) on the eager tensor from then on:
 * the same loops over the same values in the same order, so the same bits
 * as the ops one by one, in one pass and with one tensor.  trace/ internal
 * (the composite ops of ops_nn.c and ops_ndtr.c). */
#ifndef WEFT_TRACE_EAGER_FUSED_H
#define WEFT_TRACE_EAGER_FUSED_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/ops.h"

/* The composite on a rank-2 value, over its last axis where it has one. */
typedef weft_value *(*weft__fusable_fn)(weft_ctx *cx, weft_value *a);

/* One composite op.  Static: the derived groups live as long as the
 * process (a few KiB for all of them). */
typedef struct weft__fused_site {
    const char       *name;      /* the public op, for the derivation and the timeline */
    weft__fusable_fn  body;
    bool              over_rows; /* it reduces the last axis, whose length must fit a tile */
    void             *group[2];  /* f32, f64: the derived group, or a mark that there is
                                    none (__atomic; NULL until derived) */
} weft__fused_site;

#define WEFT__FUSED_SITE(name, body, over_rows) { (name), (body), (over_rows), { NULL, NULL } }

/* Eager mode: computes site->body on a (checked by the caller: a float,
 * and for a site over rows a last axis that is the op's axis) in one pass
 * and sets *out (NULL after a failure, recorded in cx).  False when the
 * fast path does not apply (tracing, a weak scalar, a row longer than a
 * tile, an op that does not fuse into one group, or a derivation that
 * failed for memory): the caller then runs the composite. */
bool weft__eager_fused(weft_ctx *cx, weft__fused_site *site, weft_value *a, weft_value **out);

/* For tests: turns the fast path off and on (process-wide), and counts
 * the calling thread's fused runs. */
void     weft__eager_fused_enable(bool on);
uint64_t weft__eager_fused_runs(void);

#endif
