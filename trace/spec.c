/* Specs: dtype names, the text form "f32[?,3]" and matching. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/tensor_impl.h"

static const char *const dtype_names[] = { "bool", "i32", "i64", "f32", "f64" };
static const size_t dtype_sizes[] = { 1, 4, 8, 4, 8 };
#define N_DTYPES (sizeof dtype_names / sizeof *dtype_names)

const char *weft_dtype_name(weft_dtype dt)
{
    return (unsigned)dt < N_DTYPES ? dtype_names[dt] : NULL;
}

size_t weft_dtype_size(weft_dtype dt)
{
    return (unsigned)dt < N_DTYPES ? dtype_sizes[dt] : 0;
}

/* Grammar: dtype '[' ( '' | '*' | dim (',' dim)* ) ']' with dim '?' or a
 * decimal count; no spaces, nothing after ']'. */
static int parse_dim(const char **p, int64_t *out)
{
    const char *s = *p;
    if (*s == '?') {
        *out = WEFT_DIM_ANY;
        *p = s + 1;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -1;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
            return -1;
        s++;
    }
    *out = v;
    *p = s;
    return 0;
}

int weft_spec_parse(const char *text, weft_spec *out)
{
    if (!text || !out)
        return weft__errorf(WEFT_EINVAL, "weft_spec_parse: NULL %s", text ? "out" : "text");
    weft_spec s;
    memset(&s, 0, sizeof s);
    const char *br = strchr(text, '[');
    size_t nlen = br ? (size_t)(br - text) : 0;
    size_t d = 0;
    for (; d < N_DTYPES; d++)
        if (br && strlen(dtype_names[d]) == nlen && memcmp(text, dtype_names[d], nlen) == 0)
            break;
    if (d == N_DTYPES)
        goto error;
    s.dtype = (weft_dtype)d;
    const char *p = br + 1;
    if (p[0] == '*' && p[1] == ']') {
        s.rank = WEFT_RANK_ANY;
        p += 2;
    } else if (p[0] == ']') {
        s.rank = 0;
        p += 1;
    } else {
        for (;;) {
            if (s.rank == WEFT_MAX_RANK || parse_dim(&p, &s.dims[s.rank]) < 0)
                goto error;
            s.rank++;
            if (*p == ']') {
                p++;
                break;
            }
            if (*p != ',')
                goto error;
            p++;
        }
    }
    if (*p != '\0')
        goto error;
    *out = s;
    return 0;
error:
    return weft__errorf(WEFT_EINVAL, "weft_spec_parse: malformed spec \"%.64s\"", text);
}

static bool spec_valid(const weft_spec *s)
{
    if (weft_dtype_size(s->dtype) == 0)
        return false;
    if (s->rank == WEFT_RANK_ANY)
        return true;
    if (s->rank < 0 || s->rank > WEFT_MAX_RANK)
        return false;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < WEFT_DIM_ANY)
            return false;
    return true;
}

/* Formats a valid spec; returns the length it needs. */
static int format_valid(const weft_spec *s, char *buf, size_t size)
{
    /* Room for the longest spec: eight 19-digit dims. */
    char tmp[8 + WEFT_MAX_RANK * 21];
    size_t n = 0;
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s[", weft_dtype_name(s->dtype));
    if (s->rank == WEFT_RANK_ANY)
        tmp[n++] = '*';
    for (int i = 0; i < s->rank; i++) {
        if (i)
            tmp[n++] = ',';
        if (s->dims[i] == WEFT_DIM_ANY)
            tmp[n++] = '?';
        else
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%" PRId64, s->dims[i]);
    }
    tmp[n++] = ']';
    tmp[n] = '\0';
    if (size > 0) {
        size_t c = n < size - 1 ? n : size - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return (int)n;
}

int weft_spec_format(const weft_spec *s, char *buf, size_t size)
{
    if (!s)
        return weft__errorf(WEFT_EINVAL, "weft_spec_format: NULL spec");
    if (!buf && size > 0)
        return weft__errorf(WEFT_EINVAL, "weft_spec_format: NULL buf with size %zu", size);
    if (!spec_valid(s))
        return weft__errorf(WEFT_EINVAL, "weft_spec_format: invalid spec (dtype %d, rank %d)",
                            (int)s->dtype, s->rank);
    return format_valid(s, buf, size);
}

const char *weft__spec_str(const weft_spec *s, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    if (!s || !spec_valid(s))
        snprintf(buf, size, "<invalid spec>");
    else
        format_valid(s, buf, size);
    return buf;
}

bool weft__spec_matches(const weft_spec *pattern, const weft_spec *actual)
{
    if (pattern->dtype != actual->dtype)
        return false;
    if (pattern->rank == WEFT_RANK_ANY)
        return true;
    if (pattern->rank != actual->rank)
        return false;
    for (int i = 0; i < pattern->rank; i++)
        if (pattern->dims[i] != WEFT_DIM_ANY && pattern->dims[i] != actual->dims[i])
            return false;
    return true;
}

bool weft__spec_is_concrete(const weft_spec *s)
{
    if (s->rank < 0 || s->rank > WEFT_MAX_RANK)
        return false;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0)
            return false;
    return true;
}

bool weft__spec_equal(const weft_spec *a, const weft_spec *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}
