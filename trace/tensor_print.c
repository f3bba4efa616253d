/* weft_tensor_print and weft_tensor_spec.  The printer writes a tensor the
 * way NumPy's repr does: nested brackets, one row a line, the elements of
 * a tensor right-aligned to one width, and past WEFT__PRINT_THRESHOLD
 * elements only the first and last WEFT__PRINT_EDGE items of every dim
 * with "..." between.  Floats use their shortest round-trip form. */
#include <inttypes.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/iface.h"
#include "trace/tensor_impl.h"

#define WEFT__PRINT_THRESHOLD 1000
#define WEFT__PRINT_EDGE 3

typedef struct printer {
    const weft_tensor *t;
    FILE *out;
    bool elide;          /* more than the threshold: print edges only */
    int width;           /* of the widest element printed */
    int indent;          /* columns before the outermost '[' */
    bool measuring;      /* first pass: find the width, write nothing */
} printer;

static void format_elem(const weft_tensor *t, int64_t k, char *buf, size_t size)
{
    switch (t->dtype) {
    case WEFT_BOOL: snprintf(buf, size, "%s", ((const unsigned char *)t->data)[k] ? "true" : "false"); break;
    case WEFT_I32:  snprintf(buf, size, "%" PRId32, ((const int32_t *)t->data)[k]); break;
    case WEFT_I64:  snprintf(buf, size, "%" PRId64, ((const int64_t *)t->data)[k]); break;
    case WEFT_F32:  weft__fmt_f32(((const float *)t->data)[k], buf, size); break;
    case WEFT_F64:  weft__fmt_f64(((const double *)t->data)[k], buf, size); break;
    }
}

static void put_elem(printer *p, int64_t k)
{
    char buf[WEFT__FMT_MAX];
    format_elem(p->t, k, buf, sizeof buf);
    int len = (int)strlen(buf);
    if (p->measuring) {
        if (len > p->width)
            p->width = len;
        return;
    }
    fprintf(p->out, "%*s", p->width, buf);
}

static void put(printer *p, const char *s)
{
    if (!p->measuring)
        fputs(s, p->out);
}

/* The separator after an item of dim d: ", " in the last dim; else a
 * comma, a line break (one blank line per dim further out, as NumPy),
 * and the indentation of dim d + 1's bracket. */
static void separator(printer *p, int d)
{
    int rank = p->t->rank;
    if (d == rank - 1) {
        put(p, ", ");
        return;
    }
    put(p, ",\n");
    for (int b = d; b < rank - 2; b++)
        put(p, "\n");
    if (!p->measuring)
        fprintf(p->out, "%*s", p->indent + d + 1, "");
}

/* Dim d of the block starting at element offset, whose items are
 * stride elements apart. */
static void print_dim(printer *p, int d, int64_t offset)
{
    const weft_tensor *t = p->t;
    int64_t n = t->dims[d], stride = 1;
    for (int e = d + 1; e < t->rank; e++)
        stride *= t->dims[e];
    bool cut = p->elide && n > 2 * WEFT__PRINT_EDGE;
    put(p, "[");
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == WEFT__PRINT_EDGE) {
            put(p, "...");
            separator(p, d);
            i = n - WEFT__PRINT_EDGE;
        }
        if (d + 1 == t->rank)
            put_elem(p, offset + i * stride);
        else
            print_dim(p, d + 1, offset + i * stride);
        if (i + 1 < n)
            separator(p, d);
    }
    put(p, "]");
}

int weft_tensor_print(const weft_tensor *t, FILE *out)
{
    if (!t || !out)
        return weft__errorf(WEFT_EINVAL, "weft_tensor_print: NULL %s", t ? "out" : "tensor");
    weft_spec s;
    char sb[WEFT__SPEC_STR_MAX];
    weft__tensor_spec(t, &s);
    int head = fprintf(out, "<tensor %s = ", weft__spec_str(&s, sb, sizeof sb));
    printer p = { .t = t, .out = out, .elide = t->numel > WEFT__PRINT_THRESHOLD,
                  .indent = head > 0 ? head : 0 };
    if (t->rank == 0) {
        put_elem(&p, 0);
    } else {
        p.measuring = true;
        print_dim(&p, 0, 0);
        p.measuring = false;
        print_dim(&p, 0, 0);
    }
    fputs(">\n", out);
    return ferror(out) ? weft__errorf(WEFT_EIO, "weft_tensor_print: write failed") : 0;
}

int weft_tensor_spec(const weft_tensor *t, weft_spec *out)
{
    if (!t || !out)
        return weft__errorf(WEFT_EINVAL, "weft_tensor_spec: NULL %s", t ? "out" : "tensor");
    weft__tensor_spec(t, out);
    return 0;
}
