/* One timeline file per rank, laid side by side: started together after a
 * barrier, and rewritten at the end so that each file's events belong to
 * the process "weft rank k" (pid k + 1) instead of weft's single pid 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/internal.h"

/* weft_profile_end's file names its one process like this. */
static const char weft_pid[] = "\"pid\":1,";
static const char weft_process[] = "\"args\":{\"name\":\"weft\"}";

int weft_dist_profile_begin(weft_dist *d, const char *prefix)
{
    if (!d)
        return weft_errorf(WEFT_EINVAL, "weft_dist_profile_begin: d is NULL");
    int rc = 0;
    char *path = NULL;
    if (!prefix || !prefix[0]) {
        rc = weft_errorf(WEFT_EINVAL, "weft_dist_profile_begin: prefix is NULL or empty");
    } else if (d->profile_path) {
        rc = weft_errorf(WEFT_EINVAL, "weft_dist_profile_begin: a profile is already recording "
                         "(call weft_dist_profile_end first)");
    } else {
        size_t size = strlen(prefix) + 32;
        path = malloc(size);
        if (!path)
            rc = weft_errorf(WEFT_ENOMEM, "weft_dist_profile_begin: out of memory");
        else
            snprintf(path, size, "%s.rank%d.json", prefix, d->rank);
    }
    /* The agreement is the barrier: every rank begins right after it. */
    rc = weft__dist_agree(d, "weft_dist_profile_begin", rc);
    bool began = false;
    if (!rc) {
        rc = weft_profile_begin(d->rt, path);
        began = rc == 0;
    }
    rc = weft__dist_agree(d, "weft_dist_profile_begin", rc);
    if (rc) {
        /* A rank whose begin worked while another's failed stops again;
         * the agreed message stays. */
        if (began) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", weft_errmsg());
            (void)weft_profile_end(d->rt);
            remove(path);
            weft_errorf(rc, "%s", msg);
        }
        free(path);
        return rc;
    }
    d->profile_path = path;
    return 0;
}

/* The whole file at path, NUL-terminated, or NULL. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)size + 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[size] = '\0';
        *len = (size_t)size;
    }
    return buf;
}

/* Writes text to f with each `from` replaced by `to`.  The pattern starts
 * with a quote that in weft's JSON is never escaped, so it cannot match
 * inside a name or detail string, where every quote is. */
static void write_replaced(FILE *f, const char *text, const char *from, const char *to)
{
    size_t n = strlen(from);
    for (const char *p; (p = strstr(text, from)) != NULL; text = p + n) {
        fwrite(text, 1, (size_t)(p - text), f);
        fputs(to, f);
    }
    fputs(text, f);
}

/* Gives the file's process this rank's pid and name. */
static int relabel(const weft_dist *d, const char *path)
{
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text)
        return weft_errorf(WEFT_EIO, "weft_dist_profile_end: cannot read back '%s'", path);
    char pid[32], process[64];
    snprintf(pid, sizeof pid, "\"pid\":%d,", d->rank + 1);
    snprintf(process, sizeof process, "\"args\":{\"name\":\"weft rank %d\"}", d->rank);
    /* The process name first, then every pid, into a new copy. */
    char *named = NULL;
    size_t named_len = 0;
    FILE *m = open_memstream(&named, &named_len);
    int rc = 0;
    if (!m) {
        rc = weft_errorf(WEFT_ENOMEM, "weft_dist_profile_end: out of memory");
    } else {
        write_replaced(m, text, weft_process, process);
        if (fclose(m) != 0)
            rc = weft_errorf(WEFT_ENOMEM, "weft_dist_profile_end: out of memory");
    }
    FILE *f = rc ? NULL : fopen(path, "wb");
    if (!rc && !f)
        rc = weft_errorf(WEFT_EIO, "weft_dist_profile_end: cannot rewrite '%s'", path);
    if (f) {
        write_replaced(f, named, weft_pid, pid);
        if (ferror(f) | fclose(f))
            rc = weft_errorf(WEFT_EIO, "weft_dist_profile_end: rewriting '%s' failed", path);
    }
    free(named);
    free(text);
    return rc;
}

int weft_dist_profile_end(weft_dist *d)
{
    if (!d)
        return weft_errorf(WEFT_EINVAL, "weft_dist_profile_end: d is NULL");
    int rc = 0;
    if (!d->profile_path)
        rc = weft_errorf(WEFT_EINVAL, "weft_dist_profile_end: no profile is recording");
    else
        rc = weft_profile_end(d->rt);
    if (!rc)
        rc = relabel(d, d->profile_path);
    free(d->profile_path);
    d->profile_path = NULL;
    return weft__dist_agree(d, "weft_dist_profile_end", rc);
}
