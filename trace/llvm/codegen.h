/* The code generator of the native tier: a fused group (trace/program.h)
 * as one LLVM function with the signature of weft__native_fn.  trace/llvm/
 * internal. */
#ifndef WEFT_TRACE_LLVM_CODEGEN_H
#define WEFT_TRACE_LLVM_CODEGEN_H

#include <stdbool.h>

#include <llvm-c/Core.h>

#include "trace/program.h"

/* Adds function `name` computing f to m; false (m unchanged) for a group
 * weft__jit_codegen_supports refuses. */
bool weft__codegen_group(LLVMModuleRef m, const struct weft__fused *f, const char *name);

#endif
