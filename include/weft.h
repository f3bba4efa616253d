/* weft: a work-stealing task runtime, a tracing compiler for op lists and a
 * trace cache, for C.  This umbrella header is the whole public API:
 *
 *     #include <weft.h>      (pkg-config --cflags --libs weft)
 *
 * docs/GUIDE.md explains it; each header documents its calls.  Fallible
 * calls return 0 or a negative WEFT_E* code, and weft_errmsg() says what
 * went wrong. */
#ifndef WEFT_H
#define WEFT_H

#include "weft/common.h"
#include "weft/version.h"
#include "weft/runtime.h"
#include "weft/task.h"
#include "weft/tensor.h"
#include "weft/ops.h"
#include "weft/function.h"

#endif
