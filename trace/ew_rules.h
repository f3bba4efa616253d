/* Which dtypes each elementwise op takes.  ops.c reads the class to decide
 * what to convert an input to before it records a node; infer.c checks
 * every UNARY and BINARY node against it, so a node that slips past ops.c
 * (a hand-built graph, constant folding) is refused the same way.
 * trace/ internal. */
#ifndef WEFT_TRACE_EW_RULES_H
#define WEFT_TRACE_EW_RULES_H

#include "trace/ir.h"

typedef enum weft__ew_class {
    WEFT__EW_ANY,      /* every dtype: comparisons, minimum, maximum */
    WEFT__EW_NUMERIC,  /* i32 i64 f32 f64, dtype kept: arithmetic; bool is refused */
    WEFT__EW_FLOAT,    /* f32 f64: ops.c computes integers and bool in f64 */
    WEFT__EW_LOGICAL,  /* bool only */
    WEFT__EW_TEST,     /* i32 i64 f32 f64 in, bool out: is_nan, is_inf, is_finite */
    WEFT__EW_INTEGER,  /* i32 i64, dtype kept: the bitwise ops */
} weft__ew_class;

/* The class of a UNARY or BINARY op (WEFT__EW_ANY for other ops). */
weft__ew_class weft__ew_class_of(weft__op op);

/* Checks the input specs in[0..n->n_in) of a UNARY or BINARY node (of one
 * dtype already) against the op's class: 0, or WEFT_EDTYPE with a
 * weft_errmsg() naming the op and the specs. */
int weft__ew_check(const weft__node *n, const weft_spec *in);

#endif
