/* The process-wide log sink of weft_set_log: frequent-retracing warnings
 * and, with WEFT_LOG=retrace, a line per trace. */
#include <stdarg.h>

#include "cache/internal.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static weft_log_fn log_fn;
static void *log_user;

void weft_set_log(weft_log_fn fn, void *user)
{
    pthread_mutex_lock(&log_mu);
    log_fn = fn;
    log_user = user;
    pthread_mutex_unlock(&log_mu);
}

void weft__cache_log(int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Held while the sink runs, so that a sink replaced by weft_set_log is
     * never called afterwards. */
    pthread_mutex_lock(&log_mu);
    if (log_fn)
        log_fn(level, msg, log_user);
    else
        fprintf(stderr, "%s%s\n", level >= WEFT_LOG_WARN ? "warning: " : "", msg);
    pthread_mutex_unlock(&log_mu);
}
