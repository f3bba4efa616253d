/* The environment knobs of functions, read when a function is created:
 * WEFT_RUN_EAGERLY (a switch) and WEFT_LOG (a comma-separated list of log
 * topics).  Both take the same spellings of on and off, in any case, and
 * refuse any other value, as WEFT_NUM_THREADS does, so that a typo is an
 * error rather than a knob silently left off. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cache/internal.h"

static const char *const on_words[] = { "1", "true", "yes", "on" };
static const char *const off_words[] = { "0", "false", "no", "off" };
#define SPELLINGS "1, true, yes, on, 0, false, no, off"

/* 1 for an "on" word, 0 for an "off" word, -1 for neither; the first len
 * bytes of s. */
static int switch_word(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof on_words / sizeof *on_words; i++) {
        if (strlen(on_words[i]) == len && strncasecmp(s, on_words[i], len) == 0)
            return 1;
        if (strlen(off_words[i]) == len && strncasecmp(s, off_words[i], len) == 0)
            return 0;
    }
    return -1;
}

/* A value quoted for a message, cut at 32 bytes. */
#define QUOTE_FMT "\"%.32s%s\""
#define QUOTE_ARGS(v) (v), strlen(v) > 32 ? "..." : ""

int weft__env_switch(const char *who, const char *name, bool *out)
{
    const char *v = getenv(name);
    *out = false;
    if (!v || !*v)
        return 0;
    int w = switch_word(v, strlen(v));
    if (w < 0)
        return weft__errorf(WEFT_EINVAL, "%s: %s=" QUOTE_FMT " is not one of " SPELLINGS, who,
                            name, QUOTE_ARGS(v));
    *out = w == 1;
    return 0;
}

int weft__env_log(const char *who, unsigned *topics)
{
    static const char *const names[] = { "retrace" };
    const char *v = getenv("WEFT_LOG");
    *topics = 0;
    for (const char *p = v; p && *p;) {
        size_t len = strcspn(p, ",");
        int w = len ? switch_word(p, len) : 0;
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (strlen(names[i]) == len && strncasecmp(p, names[i], len) == 0)
                bit = 1u << i;
        if (bit)
            *topics |= bit;
        else if (w == 1)
            *topics = WEFT__LOG_ALL;
        else if (w < 0)
            return weft__errorf(WEFT_EINVAL, "%s: WEFT_LOG=" QUOTE_FMT ": \"%.*s\" is not one of "
                                "retrace, " SPELLINGS, who, QUOTE_ARGS(v), (int)(len < 32 ? len : 32),
                                p);
        p += len + (p[len] == ',');
    }
    return 0;
}
