/* Running map and host-call nodes, shared by eager mode and the executor.
 * Implemented by map.c and host.c.  trace/ internal. */
#ifndef WEFT_TRACE_SIDEFX_H
#define WEFT_TRACE_SIDEFX_H

#include "trace/ir.h"

/* Runs a MAP node: the node's resolved concrete function (attr.map) on
 * every slice of elems along dim 0, at most attr.map.parallel_iterations in
 * flight, spread over rt's workers; stacks the results into *out. */
int weft__map_run(weft_runtime *rt, const weft__node *n, weft_tensor *elems, weft_tensor **out);

/* Runs a HOST node's callback on in[0..n->n_in) and checks its output
 * against n->spec (WEFT_EHOST, WEFT_ESHAPE, WEFT_EDTYPE); honours
 * WEFT_HOST_SERIAL. */
int weft__host_run(weft_runtime *rt, const weft__node *n, weft_tensor *const *in, weft_tensor **out);

#endif
