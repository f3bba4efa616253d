/* The LLVM side of the native tier: an ORC LLJIT for the host CPU, the new
 * pass manager at O3 with a target machine that knows the host's features
 * (LLVMGetHostCPUName may say "generic" for a CPU newer than LLVM; the
 * features string is what turns on AVX2 and AVX-512), and a resource
 * tracker per compiled program, whose removal frees its code.  One thread
 * at a time calls the entry points: the thread that starts the JIT
 * (trace/jit.c's engine_start, under its queue's lock), then the compile
 * thread.  A compile of several groups fans out: the groups are shared
 * among as many modules as the process has CPUs (at most
 * COMPILE_THREADS_MAX), and each module is generated, optimized and
 * turned into an object file in an LLVM context of its own by a thread of
 * its own (the compile thread and short-lived helpers), each with its own
 * target machine, which LLVM allows to threads that share no context or
 * machine.  The compile thread alone then links the objects into the
 * JIT. */
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/iface.h"
#include "trace/jit.h"
#include "trace/llvm/api.h"
#include "trace/llvm/codegen.h"

/* The most threads one compile uses, the compile thread included. */
#define COMPILE_THREADS_MAX 8

struct weft__jit_engine {
    LLVMOrcLLJITRef jit;
    /* Target machines for the passes and the object files, one per thread
     * of a compile (tm[0] the compile thread's), made when first needed. */
    LLVMTargetMachineRef tm[COMPILE_THREADS_MAX];
    unsigned threads;            /* the CPUs this process may run on, at most the array's size */
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

/* The CPUs this process may run on (its affinity mask), between 1 and
 * COMPILE_THREADS_MAX. */
static unsigned usable_cpus(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                         : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > COMPILE_THREADS_MAX ? COMPILE_THREADS_MAX : (unsigned)n;
}

int weft__jit_engine_create(weft__jit_engine **out, char *err, size_t n)
{
    *out = NULL;
    int rc = weft__llvm_load(err, n);
    if (rc < 0)
        return rc;
    weft__llvm.init_target_info();
    weft__llvm.init_target();
    weft__llvm.init_target_mc();
    weft__llvm.init_asm_printer();
    weft__jit_engine *e = weft__calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, n, "out of memory");
        return WEFT_ENOMEM;
    }
    e->triple = LLVMGetDefaultTargetTriple();
    e->threads = usable_cpus();
    e->tm[0] = host_machine(e->triple, err, n);
    LLVMTargetMachineRef jit_tm = e->tm[0] ? host_machine(e->triple, err, n) : NULL;
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
    for (unsigned i = 0; i < COMPILE_THREADS_MAX; i++)
        if (e->tm[i])
            LLVMDisposeTargetMachine(e->tm[i]);
    LLVMDisposeMessage(e->triple);
    weft__free(e);
}

/* Runs O3 over m for the host machine, without the loop unroller: the
 * vectorizer already interleaves the loops that matter, and unrolling
 * its output again doubled to tripled the time to compile (normalize
 * 31-37 ms -> 16-19 ms, rgb_to_hsv 144-152 ms -> 50-56 ms) for no
 * measurable change in the loops' speed (bench_numeric, 1 worker,
 * three interleaved runs each way). */
static int optimize(LLVMTargetMachineRef tm, LLVMModuleRef m, char *err, size_t n)
{
    LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(o, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(o, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(o, 0);
    LLVMErrorRef le = LLVMRunPasses(m, "default<O3>", tm, o);
    LLVMDisposePassBuilderOptions(o);
    return le ? take_error(le, "LLVM passes", err, n) : 0;
}

/* A compile's groups, shared out among modules: module i holds the groups
 * k with part[k] == i, and one thread makes each module's object file
 * (module 0 the compile thread, module i > 0 helper i). */
typedef struct compile_batch {
    weft__jit_engine *e;
    const struct weft__fused *const *f;
    size_t n;                    /* groups */
    char (*name)[32];            /* [n]: each group's function */
    unsigned *part;              /* [n]: each group's module */
    bool *generated;             /* [n]: false where codegen refused the group */
    unsigned modules;
    LLVMMemoryBufferRef obj[COMPILE_THREADS_MAX];   /* until the JIT takes them */
    int rc[COMPILE_THREADS_MAX];
    char err[COMPILE_THREADS_MAX][WEFT__ERRMSG_SIZE];
} compile_batch;

typedef struct compile_helper {
    compile_batch *batch;
    unsigned module;
    LLVMTargetMachineRef tm;
} compile_helper;

/* Shares the groups out among b->modules modules, the costliest first
 * into the module with the least cost so far, so that the threads' shares
 * of the optimizer and code generator come out about even.  A group's
 * cost is mostly fixed (rgb_to_hsv's groups of 2, 3, 3 and 16
 * instructions took 8-13 ms each): its instructions plus GROUP_COST. */
#define GROUP_COST 16
static size_t group_cost(const struct weft__fused *f)
{
    return f->n_instr + GROUP_COST;
}

static void share_groups(compile_batch *b)
{
    size_t load[COMPILE_THREADS_MAX] = { 0 };
    bool placed[b->n ? b->n : 1];
    memset(placed, 0, sizeof placed);
    for (size_t round = 0; round < b->n; round++) {
        size_t big = SIZE_MAX;
        for (size_t k = 0; k < b->n; k++)
            if (!placed[k] && (big == SIZE_MAX || group_cost(b->f[k]) > group_cost(b->f[big])))
                big = k;
        unsigned least = 0;
        for (unsigned i = 1; i < b->modules; i++)
            if (load[i] < load[least])
                least = i;
        placed[big] = true;
        b->part[big] = least;
        load[least] += group_cost(b->f[big]);
    }
}

/* Generates, checks and optimizes module `mod`'s groups in an LLVM
 * context of its own and emits them as one object file for the host with
 * tm.  A module whose every group was refused leaves no object. */
static void emit_module(compile_batch *b, unsigned mod, LLVMTargetMachineRef tm)
{
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("weft", ctx);
    LLVMSetTarget(m, b->e->triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(m, dl);
    LLVMDisposeTargetData(dl);
    bool any = false;
    for (size_t k = 0; k < b->n; k++)
        if (b->part[k] == mod) {
            b->generated[k] = weft__codegen_group(m, b->f[k], b->name[k]);
            any |= b->generated[k];
        }
    char *msg = NULL;
    int *rc = &b->rc[mod];
    char *err = b->err[mod];
    if (!any) {
        /* Nothing to emit. */
    } else if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        snprintf(err, WEFT__ERRMSG_SIZE, "LLVM refused the module: %.200s", msg ? msg : "");
        *rc = WEFT_EINVAL;
    } else if ((*rc = optimize(tm, m, err, WEFT__ERRMSG_SIZE)) == 0 &&
               LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &msg, &b->obj[mod])) {
        snprintf(err, WEFT__ERRMSG_SIZE, "LLVM emitted no object: %.200s", msg ? msg : "");
        *rc = WEFT_EINVAL;
        b->obj[mod] = NULL;
    }
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
}

static void *helper_main(void *p)
{
    compile_helper *h = p;
    emit_module(h->batch, h->module, h->tm);
    if (h->batch->obj[h->module])
        weft__jit_count_helper_module();
    return NULL;
}

/* Emits module 0 of b on the calling thread and each other module on a
 * helper thread of its own; the calling thread emits those whose target
 * machine or thread could not be had. */
static void emit_all(compile_batch *b)
{
    weft__jit_engine *e = b->e;
    pthread_t th[COMPILE_THREADS_MAX];
    compile_helper h[COMPILE_THREADS_MAX];
    bool started[COMPILE_THREADS_MAX] = { false };
    char ignored[8];
    for (unsigned i = 1; i < b->modules; i++) {
        if (!e->tm[i] && !(e->tm[i] = host_machine(e->triple, ignored, sizeof ignored)))
            continue;
        h[i] = (compile_helper){ b, i, e->tm[i] };
        started[i] = pthread_create(&th[i], NULL, helper_main, &h[i]) == 0;
    }
    for (unsigned i = 0; i < b->modules; i++)
        if (!started[i])
            emit_module(b, i, e->tm[0]);
    for (unsigned i = 1; i < b->modules; i++)
        if (started[i])
            pthread_join(th[i], NULL);
}

/* Adds b's object files to the JIT under a new resource tracker and looks
 * the generated groups' functions up into addr; the tracker, or NULL with
 * *rc and err set. */
static LLVMOrcResourceTrackerRef link_objects(compile_batch *b, uint64_t *addr, int *rc,
                                              char *err, size_t err_n)
{
    weft__jit_engine *e = b->e;
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(e->jit);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    *rc = 0;
    for (unsigned i = 0; i < b->modules && *rc == 0; i++) {
        if (!b->obj[i])
            continue;
        /* The JIT owns the object from here, whatever happens to it. */
        LLVMMemoryBufferRef obj = b->obj[i];
        b->obj[i] = NULL;
        LLVMErrorRef le = LLVMOrcLLJITAddObjectFileWithRT(e->jit, rt, obj);
        if (le)
            *rc = take_error(le, "LLJIT add", err, err_n);
    }
    for (size_t k = 0; k < b->n; k++)
        addr[k] = 0;
    for (size_t k = 0; k < b->n && *rc == 0; k++) {
        if (!b->generated[k])
            continue;
        LLVMOrcExecutorAddress a = 0;
        LLVMErrorRef le = LLVMOrcLLJITLookup(e->jit, &a, b->name[k]);
        if (le)
            *rc = take_error(le, "LLJIT lookup", err, err_n);
        else
            addr[k] = a;
    }
    if (*rc < 0) {
        weft__jit_engine_free_code(e, rt);
        return NULL;
    }
    return rt;
}

int weft__jit_engine_compile(weft__jit_engine *e, const struct weft__fused *const *f, size_t n,
                             uint64_t *addr, void **code, char *err, size_t err_n)
{
    *code = NULL;
    compile_batch *b = weft__calloc(1, sizeof *b);
    size_t cap = n ? n : 1;
    char (*name)[32] = weft__calloc(cap, sizeof *name);
    unsigned *part = weft__calloc(cap, sizeof *part);
    bool *generated = weft__calloc(cap, sizeof *generated);
    int rc = 0;
    if (!b || !name || !part || !generated) {
        snprintf(err, err_n, "out of memory");
        rc = WEFT_ENOMEM;
        goto out;
    }
    *b = (compile_batch){ .e = e, .f = f, .n = n, .name = name, .part = part,
                          .generated = generated };
    unsigned threads = weft__jit_compile_threads();
    if (threads == 0 || threads > COMPILE_THREADS_MAX)
        threads = threads ? COMPILE_THREADS_MAX : e->threads;
    b->modules = n < threads ? (unsigned)n : threads;
    for (size_t k = 0; k < n; k++)
        snprintf(name[k], sizeof name[k], "weft_native_%llu", (unsigned long long)e->next_id++);
    share_groups(b);
    emit_all(b);
    for (unsigned i = 0; i < b->modules && rc == 0; i++)
        if (b->rc[i] < 0) {
            rc = b->rc[i];
            snprintf(err, err_n, "%s", b->err[i]);
        }
    if (rc == 0)
        *code = link_objects(b, addr, &rc, err, err_n);
    for (unsigned i = 0; i < b->modules; i++)
        if (b->obj[i])
            LLVMDisposeMemoryBuffer(b->obj[i]);
out:
    weft__free(generated);
    weft__free(part);
    weft__free(name);
    weft__free(b);
    return rc;
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
