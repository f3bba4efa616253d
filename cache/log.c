/* The process-wide log sink of weft_set_log: frequent-retracing warnings
 * and, with WEFT_LOG=retrace, a line per trace. */
#include <stdarg.h>

#include "cache/internal.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_idle = PTHREAD_COND_INITIALIZER;
static weft_log_fn log_fn;
static void *log_user;
/* Sink calls running now (log_mu), by the parity of the sink generation
 * they started under: a replacement waits only for calls of sinks before
 * it, so calls of the new sink cannot hold it up for ever.  log_depth:
 * this thread's calls running now. */
static unsigned log_gen;
static unsigned log_running[2];
static _Thread_local unsigned log_depth;

void weft_set_log(weft_log_fn fn, void *user)
{
    pthread_mutex_lock(&log_mu);
    log_fn = fn;
    log_user = user;
    unsigned old = log_gen++ & 1;
    /* Once this returns the old sink runs nowhere, so the caller may free
     * what it uses.  A sink that replaces the sink cannot wait for the
     * others (two of them would wait for each other), so it does not. */
    while (log_depth == 0 && log_running[old] > 0)
        pthread_cond_wait(&log_idle, &log_mu);
    pthread_mutex_unlock(&log_mu);
}

void weft__cache_log(int level, const char *fmt, ...)
{
    char msg[WEFT__LOG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_mu);
    weft_log_fn fn = log_fn;
    void *user = log_user;
    unsigned gen = log_gen & 1;
    if (fn)
        log_running[gen]++;
    pthread_mutex_unlock(&log_mu);
    if (!fn) {
        fprintf(stderr, "%s%s\n", level >= WEFT_LOG_WARN ? "warning: " : "", msg);
        return;
    }
    /* Not under log_mu: the sink may call weft, weft_set_log included. */
    log_depth++;
    fn(level, msg, user);
    log_depth--;
    pthread_mutex_lock(&log_mu);
    if (--log_running[gen] == 0)
        pthread_cond_broadcast(&log_idle);
    pthread_mutex_unlock(&log_mu);
}
