/* The loader of LLVM's C API (trace/llvm/api.h): one dlopen of libLLVM,
 * one dlsym per function of the table. */
#define WEFT__LLVM_LOADER
#include "trace/llvm/api.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/base.h"
#include "trace/jit.h"

#ifndef WEFT_LLVM_LIBRARY
#error "meson.build names the library to open in WEFT_LLVM_LIBRARY"
#endif

struct weft__llvm_api weft__llvm;

/* The file to open: libLLVM's soname, or a test's name for a missing
 * one (set before the first load; the load may run on another thread). */
static const char *library = WEFT_LLVM_LIBRARY;
/* 1 until the first load, then its result; its reason in load_err. */
static int load_rc = 1;
static char load_err[256];

const char *weft__jit_llvm_library(void)
{
    return __atomic_load_n(&library, __ATOMIC_ACQUIRE);
}

void weft__jit_set_llvm_library(const char *file)
{
    __atomic_store_n(&library, file, __ATOMIC_RELEASE);
}

#define NAME_OF(x) #x
#define STRING_OF(x) NAME_OF(x)

static int open_table(char *err, size_t n)
{
#if !defined(LLVM_NATIVE_TARGET) || !defined(LLVM_NATIVE_ASMPRINTER)
    snprintf(err, n, "this LLVM has no native target");
    return WEFT_EINVAL;
#else
    /* RTLD_LOCAL: LLVM's symbols stay out of the process's namespace, so
     * a program linking another LLVM keeps its own. */
    const char *file = weft__jit_llvm_library();
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(err, n, "cannot load %s: %s", file, why ? why : "unknown error");
        return WEFT_EINVAL;
    }
    const char *missing = NULL;
#define FIND_FIELD(name) \
    if (!missing && !weft__dl_function(lib, #name, &weft__llvm.name)) \
        missing = #name;
    WEFT__LLVM_FUNCTIONS(FIND_FIELD)
#undef FIND_FIELD
    const struct {
        const char *name;
        void (**slot)(void);
    } native[] = {
        { STRING_OF(LLVM_NATIVE_TARGETINFO), &weft__llvm.init_target_info },
        { STRING_OF(LLVM_NATIVE_TARGET), &weft__llvm.init_target },
        { STRING_OF(LLVM_NATIVE_TARGETMC), &weft__llvm.init_target_mc },
        { STRING_OF(LLVM_NATIVE_ASMPRINTER), &weft__llvm.init_asm_printer },
    };
    for (size_t i = 0; i < sizeof native / sizeof *native && !missing; i++)
        if (!weft__dl_function(lib, native[i].name, native[i].slot))
            missing = native[i].name;
    if (missing) {
        /* The library stays open: LLVM's static objects may not be
         * unloaded safely, and a failed load is not retried. */
        snprintf(err, n, "%s has no %s", file, missing);
        return WEFT_EINVAL;
    }
    return 0;
#endif
}

int weft__llvm_load(char *err, size_t n)
{
    if (load_rc == 1)
        load_rc = open_table(load_err, sizeof load_err);
    if (load_rc < 0)
        snprintf(err, n, "%s", load_err);
    return load_rc;
}
