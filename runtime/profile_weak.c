/* Weak stand-ins for the profiler hooks, so that the runtime links before
 * (or without) runtime/profile.c, whose strong definitions replace these. */
#include "runtime/iface.h"

__attribute__((weak)) bool weft__profiling(const weft_runtime *rt)
{
    (void)rt;
    return false;
}

__attribute__((weak)) void weft__profile_span(weft_runtime *rt, const char *cat,
                                              const char *name, uint64_t t0_ns,
                                              uint64_t t1_ns, const char *detail)
{
    (void)rt, (void)cat, (void)name, (void)t0_ns, (void)t1_ns, (void)detail;
}

__attribute__((weak)) void weft__profile_instant(weft_runtime *rt, const char *cat,
                                                 const char *name)
{
    (void)rt, (void)cat, (void)name;
}

__attribute__((weak)) void weft__profile_runtime_gone(weft_runtime *rt)
{
    (void)rt;
}
