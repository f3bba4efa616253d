/* Error codes and the thread-local error message (libuv's X-macro table). */
#include <stdio.h>
#include <string.h>
#include <weft.h>

#include "base/base.h"

static _Thread_local char errmsg_buf[WEFT__ERRMSG_SIZE];

const char *weft_strerror(int err)
{
    switch (err) {
    case 0: return "success";
#define WEFT__ERR_STR(name, value, msg) case WEFT_##name: return msg;
    WEFT_ERRNO_MAP(WEFT__ERR_STR)
#undef WEFT__ERR_STR
    default: return "unknown error";
    }
}

const char *weft_err_name(int err)
{
    switch (err) {
    case 0: return "WEFT_OK";
#define WEFT__ERR_NAME(name, value, msg) case WEFT_##name: return "WEFT_" #name;
    WEFT_ERRNO_MAP(WEFT__ERR_NAME)
#undef WEFT__ERR_NAME
    default: return "WEFT_UNKNOWN";
    }
}

const char *weft_errmsg(void)
{
    return errmsg_buf;
}

void weft__errclear(void)
{
    errmsg_buf[0] = '\0';
}

int weft__verrorf(int code, const char *fmt, va_list ap)
{
    vsnprintf(errmsg_buf, sizeof errmsg_buf, fmt, ap);
    return code;
}

int weft__errorf(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    weft__verrorf(code, fmt, ap);
    va_end(ap);
    return code;
}
