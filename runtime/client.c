/* Hooks for libraries built on weft's public API (weft-dist is one): they
 * report failures through weft_errmsg() and record spans in a runtime's
 * timeline the way weft's own modules do. */
#include <stdarg.h>

#include "runtime/iface.h"

int weft_errorf(int code, const char *fmt, ...)
{
    if (!fmt)
        return weft__errorf(code, "weft_errorf: fmt is NULL");
    va_list ap;
    va_start(ap, fmt);
    weft__verrorf(code, fmt, ap);
    va_end(ap);
    return code;
}

int weft_profile_span(weft_runtime *rt, const char *name, const char *detail,
                      uint64_t t0_ns, uint64_t t1_ns)
{
    if (!rt)
        return weft__errorf(WEFT_EINVAL, "weft_profile_span: rt is NULL");
    if (!name)
        return weft__errorf(WEFT_EINVAL, "weft_profile_span: name is NULL");
    if (t1_ns < t0_ns)
        return weft__errorf(WEFT_EINVAL, "weft_profile_span: the span ends (%llu ns) "
                            "before it begins (%llu ns)",
                            (unsigned long long)t1_ns, (unsigned long long)t0_ns);
    weft__profile_span(rt, "user", name, t0_ns, t1_ns, detail);
    return 0;
}
