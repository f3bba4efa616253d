/* The LLVM side of the native tier: an ORC LLJIT for the host CPU, the new
 * pass manager at O3 with a target machine that knows the host's features
 * (LLVMGetHostCPUName may say "generic" for a CPU newer than LLVM; the
 * features string is what turns on AVX2 and AVX-512), and a resource
 * tracker per compiled program, whose removal frees its code.  One thread
 * at a time calls these: the thread that starts the JIT (trace/jit.c's
 * engine_start, under its queue's lock), then the compile thread. */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "runtime/iface.h"
#include "trace/jit.h"
#include "trace/llvm/codegen.h"

struct weft__jit_engine {
    LLVMOrcLLJITRef jit;
    LLVMTargetMachineRef tm;     /* for the passes */
    char *triple;
    uint64_t next_id;            /* numbers the functions: names are never reused */
};

/* Copies an LLVM error's message into err and consumes the error. */
static int take_error(LLVMErrorRef e, const char *what, char *err, size_t n)
{
    char *m = LLVMGetErrorMessage(e);
    snprintf(err, n, "%s: %s", what, m ? m : "unknown error");
    LLVMDisposeErrorMessage(m);
    return WEFT_EINVAL;
}

static void drop_error(void *ctx, LLVMErrorRef e)
{
    (void)ctx;
    LLVMConsumeError(e);
}

static LLVMTargetMachineRef host_machine(const char *triple, char *err, size_t n)
{
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
        snprintf(err, n, "no LLVM target for %s: %s", triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    char *cpu = LLVMGetHostCPUName();
    char *features = LLVMGetHostCPUFeatures();
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelAggressive,
                                LLVMRelocDefault, LLVMCodeModelJITDefault);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    if (!tm)
        snprintf(err, n, "LLVM made no target machine for %s", triple);
    return tm;
}

int weft__jit_engine_create(weft__jit_engine **out, char *err, size_t n)
{
    *out = NULL;
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
        snprintf(err, n, "LLVM has no native target");
        return WEFT_EINVAL;
    }
    weft__jit_engine *e = weft__calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, n, "out of memory");
        return WEFT_ENOMEM;
    }
    int rc = 0;
    e->triple = LLVMGetDefaultTargetTriple();
    e->tm = host_machine(e->triple, err, n);
    LLVMTargetMachineRef jit_tm = e->tm ? host_machine(e->triple, err, n) : NULL;
    if (!jit_tm) {
        rc = WEFT_EINVAL;
        goto fail;
    }
    LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
    /* The builder takes the machine builder, which takes jit_tm. */
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm));
    LLVMErrorRef le = LLVMOrcCreateLLJIT(&e->jit, b);
    if (le) {
        e->jit = NULL;
        rc = take_error(le, "LLJIT", err, n);
        goto fail;
    }
    /* Session errors come back through the calls that caused them; the
     * default reporter would also print them. */
    LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(e->jit),
                                            drop_error, NULL);
    /* The code may call what LLVM's passes introduce (memset, memcpy for
     * loops that fill or copy): the process's own definitions. */
    LLVMOrcDefinitionGeneratorRef gen;
    le = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(e->jit), NULL, NULL);
    if (le) {
        rc = take_error(le, "LLJIT process symbols", err, n);
        goto fail;
    }
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(e->jit), gen);
    *out = e;
    return 0;
fail:
    weft__jit_engine_destroy(e);
    return rc;
}

void weft__jit_engine_destroy(weft__jit_engine *e)
{
    if (!e)
        return;
    if (e->jit) {
        LLVMErrorRef le = LLVMOrcDisposeLLJIT(e->jit);
        if (le)
            LLVMConsumeError(le);
    }
    if (e->tm)
        LLVMDisposeTargetMachine(e->tm);
    LLVMDisposeMessage(e->triple);
    weft__free(e);
}

/* Runs O3 over m for the host machine, without the loop unroller: the
 * vectorizer already interleaves the loops that matter, and unrolling
 * its output again doubled to tripled the time to compile (normalize
 * 31-37 ms -> 16-19 ms, rgb_to_hsv 144-152 ms -> 50-56 ms) for no
 * measurable change in the loops' speed (bench_numeric, 1 worker,
 * three interleaved runs each way). */
static int optimize(weft__jit_engine *e, LLVMModuleRef m, char *err, size_t n)
{
    LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(o, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(o, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(o, 0);
    LLVMErrorRef le = LLVMRunPasses(m, "default<O3>", e->tm, o);
    LLVMDisposePassBuilderOptions(o);
    return le ? take_error(le, "LLVM passes", err, n) : 0;
}

int weft__jit_engine_compile(weft__jit_engine *e, const struct weft__fused *const *f, size_t n,
                             uint64_t *addr, void **code, char *err, size_t err_n)
{
    *code = NULL;
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("weft", ctx);
    LLVMSetTarget(m, e->triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(e->tm);
    LLVMSetModuleDataLayout(m, dl);
    LLVMDisposeTargetData(dl);
    char names[n ? n : 1][32];
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        snprintf(names[k], sizeof names[k], "weft_native_%llu", (unsigned long long)e->next_id++);
        if (!weft__codegen_group(m, f[k], names[k]))
            names[k][0] = '\0';
    }
    char *msg = NULL;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        snprintf(err, err_n, "LLVM refused the module: %.200s", msg ? msg : "");
        rc = WEFT_EINVAL;
    }
    LLVMDisposeMessage(msg);
    if (rc == 0)
        rc = optimize(e, m, err, err_n);
    if (rc < 0) {
        LLVMDisposeModule(m);
        LLVMOrcDisposeThreadSafeContext(tsc);
        return rc;
    }
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);   /* the module holds the context now */
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(e->jit);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    LLVMErrorRef le = LLVMOrcLLJITAddLLVMIRModuleWithRT(e->jit, rt, tsm);
    if (le) {
        /* The JIT took the module whatever happened to it. */
        rc = take_error(le, "LLJIT add", err, err_n);
        LLVMOrcReleaseResourceTracker(rt);
        return rc;
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        addr[k] = 0;
        if (!names[k][0])
            continue;
        LLVMOrcExecutorAddress a = 0;
        le = LLVMOrcLLJITLookup(e->jit, &a, names[k]);
        if (le)
            rc = take_error(le, "LLJIT lookup", err, err_n);
        else
            addr[k] = a;
    }
    if (rc < 0) {
        weft__jit_engine_free_code(e, rt);
        return rc;
    }
    *code = rt;
    return 0;
}

void weft__jit_engine_free_code(weft__jit_engine *e, void *code)
{
    (void)e;
    if (!code)
        return;
    LLVMOrcResourceTrackerRef rt = code;
    LLVMErrorRef le = LLVMOrcResourceTrackerRemove(rt);
    if (le)
        LLVMConsumeError(le);
    LLVMOrcReleaseResourceTracker(rt);
}
