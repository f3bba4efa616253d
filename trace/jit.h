/* The native tier: fused groups compiled to machine code in the
 * background (trace/jit.c), with a back end on LLVM (trace/llvm/, built
 * only with -Djit).  trace/ internal; no LLVM type appears here.
 *
 * A program's first run hands its large fused groups (weft__jit_note_run)
 * to one process-wide compile thread.  Runs keep interpreting a group
 * until its native function is published (a release store of its address,
 * read with an acquire load by weft__jit_native, in the __atomic dialect of
 * trace/exec.c, which ThreadSanitizer sees), so no run ever waits for
 * the compiler.  A program's native code is freed with the program
 * (weft__jit_unit_release), on the compile thread, after any compile of
 * it still queued or in flight. */
#ifndef WEFT_TRACE_JIT_H
#define WEFT_TRACE_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/program.h"

/* A native fused group, with the signature of the interpreter's tile loop:
 * rows [r0, r1) of a launch of W columns over the external inputs
 * ext[0..n_ext).  Without an outer reduction it writes the group's value
 * into out (laid out by the last instruction's kind, as the interpreter
 * writes it); with one, out is that reduction's W accumulators
 * (weft__acc), and the rows accumulate into them in order.  (The type,
 * weft__native_fn, is declared in trace/program.h.) */

/* The native state of one program: its groups to compile, and what the
 * compile thread published for them.  Made at the program's first run
 * when it has groups to compile; freed through weft__jit_unit_release. */
struct weft__jit_unit;

/* Called after each successful run of p: on the first, queues p's groups
 * that are worth compiling (none when the tier is off for p or for the
 * process).  Never waits for a compile; the process's first queued
 * compile makes the JIT on the calling thread first (trace/jit.c, Exit). */
void weft__jit_note_run(const weft__program *p);
/* The native function of node `node` of p, or NULL while it has none.
 * Any thread; an acquire load. */
weft__native_fn weft__jit_native(const weft__program *p, uint32_t node);
/* Frees unit's native code and the unit itself.  A compile of it that is
 * queued is dropped; one that is running is waited for (on the path that
 * frees a program: an eviction or a function's destroy), so that no LLVM
 * work is done for a freed program.  NULL is fine.  (A process that
 * exits without freeing its programs is safe too: see trace/jit.c.) */
void weft__jit_unit_release(struct weft__jit_unit *unit);

/* Whether the back end can generate group f at all (every op and dtype of
 * it, its reductions).  trace/llvm/codegen.c; false without LLVM. */
bool weft__jit_codegen_supports(const struct weft__fused *f);

/* ---- The back end (trace/llvm/engine.c), on the compile thread only ---- */

typedef struct weft__jit_engine weft__jit_engine;
/* 0, or a negative code with a message in err[0..n). */
int  weft__jit_engine_create(weft__jit_engine **out, char *err, size_t n);
void weft__jit_engine_destroy(weft__jit_engine *e);
/* Compiles groups f[0..n) into one module whose code *code owns, and sets
 * addr[k] to group k's function.  0, or a negative code with a message in
 * err (nothing is left behind then). */
int  weft__jit_engine_compile(weft__jit_engine *e, const struct weft__fused *const *f, size_t n,
                              uint64_t *addr, void **code, char *err, size_t err_n);
/* Frees what *code of weft__jit_engine_compile owns. */
void weft__jit_engine_free_code(weft__jit_engine *e, void *code);

/* ---- Knobs for tests ---------------------------------------------------- */

/* Groups of at least this many domain elements (or with an unknown dim)
 * are compiled; the default is 262144.  Tests set 1 to compile small
 * groups.  Returns the previous value. */
int64_t weft__jit_set_min_elems(int64_t n);
/* Flat groups whose whole output (known at compile time) is at least
 * this many bytes write it with non-temporal stores: an output that large
 * cannot still be in the cache when the call returns, so reading each
 * line in before overwriting it (what a plain store does) only costs
 * memory bandwidth.  The default is 32 MiB, the last-level cache a core's
 * stores land in on common servers (an EPYC CCD's L3, a Xeon socket's);
 * sysconf's figure cannot stand in for it, as it may sum every slice of
 * the host (a VM's L3 reads as hundreds of MiB).  Tests lower it.  The
 * value is read when a group is compiled; returns the previous value. */
int64_t weft__jit_set_nt_min_bytes(int64_t n);
int64_t weft__jit_nt_min_bytes(void);
/* Groups generated so far (process-wide) whose output the native code
 * writes with non-temporal stores, counted by the code generator on the
 * compile thread; any thread may read it. */
uint64_t weft__jit_nt_groups(void);
void weft__jit_count_nt_group(void);
/* Groups generated so far (process-wide) whose rows the native code
 * computes in blocks (trace/llvm/codegen.c, build_blocks), counted like
 * the above. */
uint64_t weft__jit_block_groups(void);
void weft__jit_count_block_group(void);
/* A compile shares its groups among at most this many modules, each
 * optimized and emitted by a thread of its own (trace/llvm/engine.c);
 * 0, the default, means one per CPU the process may run on.  Tests set it
 * to make the sharing happen on any machine.  Returns the previous value. */
unsigned weft__jit_set_compile_threads(unsigned n);
unsigned weft__jit_compile_threads(void);
/* Object files emitted so far (process-wide) by a compile's helper
 * threads rather than the compile thread itself. */
uint64_t weft__jit_helper_modules(void);
void weft__jit_count_helper_module(void);
/* The next n compiles fail as if LLVM had refused them. */
void weft__jit_fail_next(unsigned n);
/* Compiles queued or running now (tests wait for 0, bounded). */
uint64_t weft__jit_pending(void);
/* Programs whose native code is alive now (compiled and not yet freed). */
uint64_t weft__jit_live_code(void);
/* Whether this build and process compile native code at all (LLVM built
 * in, WEFT_JIT not 0). */
bool weft__jit_enabled(void);
/* The file the native tier opens when it starts (trace/llvm/api.h):
 * libLLVM's soname; "" without LLVM.  A test may name another (one that
 * does not exist) before the first compile of its process. */
const char *weft__jit_llvm_library(void);
void weft__jit_set_llvm_library(const char *file);

#endif
