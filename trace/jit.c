/* The native tier's queue and compile thread (trace/jit.h).
 *
 * One process-wide thread compiles, so that no worker spends tens of
 * milliseconds in LLVM while its tasks wait, and so that the back end
 * (whose JIT is not shared between threads here) is only ever touched by
 * one thread.  Jobs are the units of programs: a compile job, queued at a
 * program's first run, and a release job, queued when the program is
 * freed; the queue is FIFO, so a unit's release always comes after its
 * compile.  The thread starts with the first job and stops in an exit
 * handler, freeing every unit still queued; the JIT stays reachable from
 * a static pointer (not a leak) for the process to drop.
 *
 * Exit.  LLVM registers exit functions of its own (the destructors of
 * static objects) the first time a compile reaches them, and exit runs
 * exit functions in the reverse order of their registration: one that
 * LLVM registered after the thread's handler would run before it, while
 * a compile may still use its object.  So LLVM is first used (the JIT
 * made and one small group compiled, which makes every static object a
 * compile reaches) synchronously, on the thread that queues the first
 * compile, before the handler is registered; at exit the handler runs
 * before all of LLVM's and waits for the compile in flight, if any. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/iface.h"
#include "trace/jit.h"

#define DEFAULT_MIN_ELEMS 262144
#define DEFAULT_NT_MIN_BYTES (32 * 1024 * 1024)
#define NAME_MAX_LEN 64

typedef struct jit_job {
    struct jit_job *next;
    struct weft__jit_unit *unit;
    bool release;
} jit_job;

/* One group to compile: its node in the program, a copy of its program
 * (the node's may be freed while the compile is queued), and its native
 * function's address once published (0 before). */
typedef struct jit_group {
    uint64_t addr;
    uint32_t node;
    struct weft__fused f;
} jit_group;

struct weft__jit_unit {
    jit_job compile_job, release_job;  /* queued at most once each */
    int dead;                          /* the program is freed (atomic) */
    void *code;                        /* the compile thread's only */
    uint64_t compile_ns, native, failed;  /* atomic: written by the compile thread */
    char name[NAME_MAX_LEN];
    uint32_t n;
    jit_group g[];
};

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static jit_job *q_head, *q_tail;
static bool q_started, q_stop, q_dead;   /* under q_mu */
static pthread_t q_thread;
/* The unit being compiled now, NULL between compiles (under q_mu); q_idle
 * is signalled when a compile ends, for weft__jit_unit_release. */
static struct weft__jit_unit *q_compiling;
static pthread_cond_t q_idle = PTHREAD_COND_INITIALIZER;
static void (*q_log)(const char *msg);   /* under q_mu */

/* Knobs and counters, any thread. */
static uint64_t min_elems = DEFAULT_MIN_ELEMS;
static int64_t nt_min_bytes = DEFAULT_NT_MIN_BYTES;
static uint64_t nt_groups;
static uint64_t block_groups;
static unsigned compile_threads;   /* 0: one per CPU */
static uint64_t helper_modules;
static unsigned fail_next;
static uint64_t live_code;
static uint64_t pending;   /* compile jobs queued or running */
static uint64_t start_ns;  /* engine_start's time, written once (atomic) */

/* The JIT: made by engine_start (under q_mu, before the thread starts),
 * then the compile thread's alone.  engine_err says why there is none. */
static weft__jit_engine *engine;
static char engine_err[WEFT__ERRMSG_SIZE];
/* Whether that reason went to the log: once per process, not once per
 * function (a machine without libLLVM would log every function). */
static bool engine_err_logged;

static void unit_free(struct weft__jit_unit *u)
{
    weft__free(u);
}

__attribute__((format(printf, 1, 2))) static void log_line(const char *fmt, ...)
{
    char msg[WEFT__ERRMSG_SIZE + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&q_mu);
    void (*fn)(const char *) = q_log;
    pthread_mutex_unlock(&q_mu);
    if (fn)
        fn(msg);
    else
        fprintf(stderr, "warning: %s\n", msg);
}

void weft__jit_set_log(void (*fn)(const char *msg))
{
    pthread_mutex_lock(&q_mu);
    q_log = fn;
    pthread_mutex_unlock(&q_mu);
}

static bool take_failure(void)
{
    unsigned n = __atomic_load_n(&fail_next, __ATOMIC_RELAXED);
    while (n > 0) {
        if (__atomic_compare_exchange_n(&fail_next, &n, n - 1, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

/* Compiles u's groups and publishes their functions.  A failure leaves
 * the groups on the interpreter, counted and logged. */
static void compile_unit(struct weft__jit_unit *u)
{
    if (__atomic_load_n(&u->dead, __ATOMIC_RELAXED))
        return;
    char err[WEFT__ERRMSG_SIZE];
    err[0] = '\0';
    int rc = 0;
    if (!engine)
        rc = WEFT_EINVAL;   /* logged once, with engine_err, below */
    uint64_t t0 = weft__now_ns();
    const struct weft__fused **fs = NULL;
    uint64_t *addr = NULL;
    if (rc == 0) {
        fs = weft__malloc(u->n * sizeof *fs);
        addr = weft__calloc(u->n, sizeof *addr);
        if (!fs || !addr) {
            rc = WEFT_ENOMEM;
            snprintf(err, sizeof err, "out of memory");
        }
    }
    if (rc == 0 && take_failure()) {
        rc = WEFT_EINVAL;
        snprintf(err, sizeof err, "injected failure");
    }
    if (rc == 0) {
        for (uint32_t k = 0; k < u->n; k++)
            fs[k] = &u->g[k].f;
        rc = weft__jit_engine_compile(engine, fs, u->n, addr, &u->code, err, sizeof err);
    }
    /* The time before the counts, each count with release (and read with
     * acquire, weft__program_jit_stats): statistics that count a group
     * include its compile's time. */
    __atomic_add_fetch(&u->compile_ns, weft__now_ns() - t0, __ATOMIC_RELAXED);
    if (rc == 0) {
        __atomic_add_fetch(&live_code, 1, __ATOMIC_RELAXED);
        for (uint32_t k = 0; k < u->n; k++) {
            if (!addr[k])
                continue;
            /* Release: a run that sees the address sees the code. */
            __atomic_store_n(&u->g[k].addr, addr[k], __ATOMIC_RELEASE);
            __atomic_add_fetch(&u->native, 1, __ATOMIC_RELEASE);
        }
    }
    weft__free(fs);
    weft__free(addr);
    if (rc < 0) {
        __atomic_add_fetch(&u->failed, u->n, __ATOMIC_RELEASE);
        if (engine)
            log_line("weft: native code for %s failed (%s); its groups stay on the interpreter",
                     u->name, err);
        else if (!__atomic_exchange_n(&engine_err_logged, true, __ATOMIC_RELAXED))
            log_line("weft: no native code in this process (%s); every group runs on the "
                     "interpreter", engine_err);
    }
}

static void release_unit(struct weft__jit_unit *u, bool exiting)
{
    /* At exit LLVM's own static objects may be gone already: its code and
     * its JIT stay, reachable from `engine`, for the process to drop. */
    if (u->code && !exiting) {
        weft__jit_engine_free_code(engine, u->code);
        __atomic_sub_fetch(&live_code, 1, __ATOMIC_RELAXED);
    }
    unit_free(u);
}

static void jit_shutdown(void);

static void *compile_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&q_mu);
    for (;;) {
        while (!q_head && !q_stop)
            pthread_cond_wait(&q_cv, &q_mu);
        jit_job *j = q_head;
        if (!j)
            break;
        q_head = j->next;
        if (!q_head)
            q_tail = NULL;
        bool stopping = q_stop;
        if (!j->release && !stopping)
            q_compiling = j->unit;
        pthread_mutex_unlock(&q_mu);
        if (j->release) {
            release_unit(j->unit, stopping);
        } else {
            if (!stopping) {
                compile_unit(j->unit);
                pthread_mutex_lock(&q_mu);
                q_compiling = NULL;
                pthread_cond_broadcast(&q_idle);
                pthread_mutex_unlock(&q_mu);
            }
            __atomic_sub_fetch(&pending, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_lock(&q_mu);
    }
    pthread_mutex_unlock(&q_mu);
    return NULL;
}

/* Stops the thread at exit: queued releases free their units, queued
 * compiles are dropped.  The JIT itself is left to the process: by the
 * time an exit handler runs, LLVM may have destroyed the static objects
 * that tearing it down would use. */
static void jit_shutdown(void)
{
    pthread_mutex_lock(&q_mu);
    bool started = q_started && !q_stop;
    if (pthread_equal(pthread_self(), q_thread) && started) {
        /* exit() on the compile thread itself (a log sink's): no join. */
        q_stop = true;
        pthread_mutex_unlock(&q_mu);
        return;
    }
    q_stop = true;
    pthread_cond_signal(&q_cv);
    pthread_mutex_unlock(&q_mu);
    if (started)
        pthread_join(q_thread, NULL);
}

/* The group of engine_start's compile: the chain sqrt(|x * y - y|) * x +
 * exp(-(x * x)) over x f32[64, 64] and a scalar y, a loop that vectorizes
 * around a libm call with constants and values live across it, so that
 * the compile goes through every stage a group's does. */
static void warm_up_group(struct weft__fused *f)
{
    enum { X = 0, Y = 1, I = WEFT__FSRC_INSTR };
    static const struct { weft__op op; uint16_t a, b; } chain[] = {
        { WEFT__OP_MUL, X, Y },         { WEFT__OP_SUB, I | 0, Y }, { WEFT__OP_ABS, I | 1, 0 },
        { WEFT__OP_SQRT, I | 2, 0 },    { WEFT__OP_MUL, I | 3, X }, { WEFT__OP_MUL, X, X },
        { WEFT__OP_NEG, I | 5, 0 },     { WEFT__OP_EXP, I | 6, 0 }, { WEFT__OP_ADD, I | 4, I | 7 },
    };
    memset(f, 0, sizeof *f);
    f->n_ext = 2;
    f->rank = 2;
    f->split = 1;
    f->dims[0] = 64;
    f->dims[1] = 64;
    f->ext_kind[X] = WEFT__FK_FULL;
    f->ext_kind[Y] = WEFT__FK_SCALAR;
    f->ext_dt[X] = f->ext_dt[Y] = WEFT_F32;
    f->n_instr = sizeof chain / sizeof chain[0];
    for (uint32_t k = 0; k < f->n_instr; k++) {
        bool unary = chain[k].op == WEFT__OP_ABS || chain[k].op == WEFT__OP_SQRT ||
                     chain[k].op == WEFT__OP_NEG || chain[k].op == WEFT__OP_EXP;
        f->ins[k] = (weft__finstr){ .op = chain[k].op, .in_dt = WEFT_F32, .out_dt = WEFT_F32,
                                    .n_src = unary ? 1 : 2, .kind = WEFT__FK_FULL, .reg = (uint8_t)k,
                                    .src = { chain[k].a, chain[k].b } };
    }
    f->n_regs = f->n_instr;
}

/* LLVM's first use (see the top of this file): makes the JIT and compiles
 * a small group with it, on the calling thread, so that the exit
 * functions LLVM registers on a first use are registered before
 * jit_shutdown.  A failure leaves engine NULL and says why in engine_err
 * (every compile then fails with it, logged).  Under q_mu. */
static void engine_start(void)
{
    char err[WEFT__ERRMSG_SIZE] = "";
    static struct weft__fused warm;
    warm_up_group(&warm);
    const struct weft__fused *fs[1] = { &warm };
    uint64_t addr[1];
    void *code = NULL;
    /* The start is the process's, not the first unit's: counted apart, so
     * that a unit's time is its own compile. */
    uint64_t t0 = weft__now_ns();
    int rc = weft__jit_engine_create(&engine, err, sizeof err);
    if (rc == 0)
        rc = weft__jit_engine_compile(engine, fs, 1, addr, &code, err, sizeof err);
    weft__jit_engine_free_code(engine, code);
    __atomic_store_n(&start_ns, weft__now_ns() - t0, __ATOMIC_RELAXED);
    if (rc < 0) {
        weft__jit_engine_destroy(engine);
        engine = NULL;
        snprintf(engine_err, sizeof engine_err, "%s", err);
    }
}

/* Queues j, starting the thread on the first job.  False when there is no
 * thread (it could not start, or the process is exiting): the caller
 * handles j itself. */
static bool enqueue(jit_job *j)
{
    bool ok = true;
    pthread_mutex_lock(&q_mu);
    if (!q_started && !q_dead) {
        engine_start();
        q_started = pthread_create(&q_thread, NULL, compile_main, NULL) == 0;
        q_dead = !q_started;
        /* An exit handler rather than a destructor: handlers run in the
         * reverse order of their registration, and the library's
         * destructors after all of them, when LLVM's static objects are
         * gone.  Registered after engine_start, so before any of LLVM's. */
        if (q_started)
            atexit(jit_shutdown);
    }
    if (q_dead || q_stop) {
        ok = false;
    } else {
        j->next = NULL;
        if (q_tail)
            q_tail->next = j;
        else
            q_head = j;
        q_tail = j;
        pthread_cond_signal(&q_cv);
    }
    pthread_mutex_unlock(&q_mu);
    return ok;
}

void weft__jit_unit_release(struct weft__jit_unit *u)
{
    if (!u)
        return;
    __atomic_store_n(&u->dead, 1, __ATOMIC_RELAXED);
    /* A compile of u that has not started is skipped (u is dead); one that
     * runs now is waited for, so that once its program is freed no LLVM
     * work is done on its behalf, and a process that destroys its
     * functions before it exits never exits in the middle of a compile
     * (LLVM's static objects go with the exit handlers). */
    pthread_mutex_lock(&q_mu);
    while (q_compiling == u && !pthread_equal(pthread_self(), q_thread))
        pthread_cond_wait(&q_idle, &q_mu);
    pthread_mutex_unlock(&q_mu);
    u->release_job.unit = u;
    u->release_job.release = true;
    if (!enqueue(&u->release_job)) {
        /* No thread: nothing was compiled, or the JIT is gone with the
         * process's exit and the code with it. */
        unit_free(u);
    }
}

/* Whether fused node n is worth compiling. */
static bool worth(const struct weft__fused *f)
{
    uint64_t want = __atomic_load_n(&min_elems, __ATOMIC_RELAXED);
    uint64_t elems = 1;
    for (int d = 0; d < f->rank; d++) {
        /* An unknown dim counts as large only when tests ask for every
         * group (want 1). */
        if (f->dims[d] < 0)
            return want <= 1;
        elems *= (uint64_t)f->dims[d];
    }
    return elems >= want;
}

void weft__jit_note_run(const weft__program *cp)
{
    weft__program *p = (weft__program *)(uintptr_t)cp;
    int zero = 0;
    if (p->jit_off || !weft__jit_enabled() || __atomic_load_n(&p->jit_queued, __ATOMIC_RELAXED) ||
        !__atomic_compare_exchange_n(&p->jit_queued, &zero, 1, false, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        const weft__node *nd = &p->g.nodes[i];
        if (nd->op == WEFT__OP_FUSED && worth(nd->attr.fused.prog) &&
            weft__jit_codegen_supports(nd->attr.fused.prog))
            n++;
    }
    if (!n)
        return;
    struct weft__jit_unit *u = weft__calloc(1, sizeof *u + n * sizeof(jit_group));
    if (!u)
        return;   /* the program stays on the interpreter */
    snprintf(u->name, sizeof u->name, "%s", p->name ? p->name : "fn");
    for (uint32_t i = 0; i < p->g.n_nodes; i++) {
        const weft__node *nd = &p->g.nodes[i];
        if (nd->op == WEFT__OP_FUSED && worth(nd->attr.fused.prog) &&
            weft__jit_codegen_supports(nd->attr.fused.prog)) {
            u->g[u->n].node = i;
            u->g[u->n].f = *nd->attr.fused.prog;
            u->n++;
        }
    }
    u->compile_job.unit = u;
    __atomic_store_n(&p->jit, u, __ATOMIC_RELEASE);
    /* Without a thread the unit stays unqueued, freed with the program. */
    __atomic_add_fetch(&pending, 1, __ATOMIC_RELAXED);
    if (!enqueue(&u->compile_job))
        __atomic_sub_fetch(&pending, 1, __ATOMIC_RELAXED);
}

weft__native_fn weft__jit_native(const weft__program *p, uint32_t node)
{
    struct weft__jit_unit *u = __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE);
    if (!u)
        return NULL;
    for (uint32_t k = 0; k < u->n; k++) {
        if (u->g[k].node != node)
            continue;
        uint64_t a = __atomic_load_n(&u->g[k].addr, __ATOMIC_ACQUIRE);
        return a ? (weft__native_fn)(uintptr_t)a : NULL;
    }
    return NULL;
}

void weft__program_set_jit(weft__program *p, bool on)
{
    if (p)
        p->jit_off = !on;
}

void weft__program_jit_stats(const weft__program *p, weft__jit_stats *out)
{
    memset(out, 0, sizeof *out);
    struct weft__jit_unit *u = p ? __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE) : NULL;
    if (!u)
        return;
    out->native_groups = __atomic_load_n(&u->native, __ATOMIC_ACQUIRE);
    out->failed_groups = __atomic_load_n(&u->failed, __ATOMIC_ACQUIRE);
    out->compile_ns = __atomic_load_n(&u->compile_ns, __ATOMIC_RELAXED);
}

int64_t weft__jit_set_min_elems(int64_t n)
{
    return (int64_t)__atomic_exchange_n(&min_elems, n < 1 ? 1 : (uint64_t)n, __ATOMIC_RELAXED);
}

int64_t weft__jit_set_nt_min_bytes(int64_t n)
{
    return __atomic_exchange_n(&nt_min_bytes, n < 1 ? 1 : n, __ATOMIC_RELAXED);
}

int64_t weft__jit_nt_min_bytes(void)
{
    return __atomic_load_n(&nt_min_bytes, __ATOMIC_RELAXED);
}

uint64_t weft__jit_nt_groups(void)
{
    return __atomic_load_n(&nt_groups, __ATOMIC_RELAXED);
}

void weft__jit_count_nt_group(void)
{
    __atomic_fetch_add(&nt_groups, 1, __ATOMIC_RELAXED);
}

uint64_t weft__jit_block_groups(void)
{
    return __atomic_load_n(&block_groups, __ATOMIC_RELAXED);
}

void weft__jit_count_block_group(void)
{
    __atomic_fetch_add(&block_groups, 1, __ATOMIC_RELAXED);
}

unsigned weft__jit_set_compile_threads(unsigned n)
{
    return __atomic_exchange_n(&compile_threads, n, __ATOMIC_RELAXED);
}

unsigned weft__jit_compile_threads(void)
{
    return __atomic_load_n(&compile_threads, __ATOMIC_RELAXED);
}

uint64_t weft__jit_helper_modules(void)
{
    return __atomic_load_n(&helper_modules, __ATOMIC_RELAXED);
}

void weft__jit_count_helper_module(void)
{
    __atomic_fetch_add(&helper_modules, 1, __ATOMIC_RELAXED);
}

void weft__jit_fail_next(unsigned n)
{
    __atomic_store_n(&fail_next, n, __ATOMIC_RELAXED);
}

uint64_t weft__jit_pending(void)
{
    return __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
}

uint64_t weft__jit_start_ns(void)
{
    return __atomic_load_n(&start_ns, __ATOMIC_RELAXED);
}

uint64_t weft__jit_live_code(void)
{
    return __atomic_load_n(&live_code, __ATOMIC_RELAXED);
}

bool weft__jit_enabled(void)
{
#if defined(WEFT_HAVE_LLVM)
    return true;
#else
    return false;
#endif
}

#if !defined(WEFT_HAVE_LLVM)
/* Without LLVM no group is ever generated, so the back end is never
 * called; these keep the link whole. */
bool weft__jit_codegen_supports(const struct weft__fused *f)
{
    (void)f;
    return false;
}

int weft__jit_engine_create(weft__jit_engine **out, char *err, size_t n)
{
    *out = NULL;
    snprintf(err, n, "weft was built without LLVM");
    return WEFT_EINVAL;
}

void weft__jit_engine_destroy(weft__jit_engine *e)
{
    (void)e;
}

int weft__jit_engine_compile(weft__jit_engine *e, const struct weft__fused *const *f, size_t n,
                             uint64_t *addr, void **code, char *err, size_t err_n)
{
    (void)e;
    (void)f;
    (void)n;
    (void)addr;
    *code = NULL;
    snprintf(err, err_n, "weft was built without LLVM");
    return WEFT_EINVAL;
}

void weft__jit_engine_free_code(weft__jit_engine *e, void *code)
{
    (void)e;
    (void)code;
}

const char *weft__jit_llvm_library(void)
{
    return "";
}

void weft__jit_set_llvm_library(const char *file)
{
    (void)file;
}
#endif
