/* weft-timeline-svg: renders a weft profile (Chrome trace-event JSON as
 * written by weft_profile_end) into a self-contained SVG timeline: one lane
 * per worker or outside thread, spans coloured by category and stacked by
 * nesting depth, a millisecond axis and a legend.
 *
 *   weft-timeline-svg in.json out.svg
 *
 * Depends on nothing but libc: a small JSON parser reads the file. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A minimal JSON reader: enough for any trace-event file. ---- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype type;
    double num;
    char *str;                /* J_STR */
    struct jval *items;       /* J_ARR, J_OBJ values */
    char **keys;              /* J_OBJ */
    size_t n;
} jval;

typedef struct parser {
    const char *p, *end;
    int depth;
} parser;

static void ws(parser *ps)
{
    while (ps->p < ps->end && isspace((unsigned char)*ps->p))
        ps->p++;
}

static bool parse_value(parser *ps, jval *out);

static bool parse_string(parser *ps, char **out)
{
    if (ps->p >= ps->end || *ps->p != '"')
        return false;
    ps->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    if (!s)
        return false;
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if (c == '\\') {
            if (ps->p >= ps->end)
                goto fail;
            char e = *ps->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (ps->p >= ps->end || !isxdigit((unsigned char)*ps->p))
                        goto fail;
                    char h = *ps->p++;
                    v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0'
                                            : tolower((unsigned char)h) - 'a' + 10);
                }
                c = v < 0x80 ? (char)v : '?';   /* labels only: ASCII suffices */
                break;
            }
            default: c = e; break;
            }
        }
        if (n + 2 > cap) {
            cap *= 2;
            char *t = realloc(s, cap);
            if (!t)
                goto fail;
            s = t;
        }
        s[n++] = c;
    }
    if (ps->p >= ps->end)
        goto fail;
    ps->p++;
    s[n] = '\0';
    *out = s;
    return true;
fail:
    free(s);
    return false;
}

static bool push(jval *v, size_t *cap, const jval *item, char *key)
{
    if (v->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        jval *ni = realloc(v->items, nc * sizeof *ni);
        if (!ni)
            return false;
        v->items = ni;
        if (v->type == J_OBJ) {
            char **nk = realloc(v->keys, nc * sizeof *nk);
            if (!nk)
                return false;
            v->keys = nk;
        }
        *cap = nc;
    }
    v->items[v->n] = *item;
    if (v->type == J_OBJ)
        v->keys[v->n] = key;
    v->n++;
    return true;
}

static void jfree(jval *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static bool parse_container(parser *ps, jval *out, char open, char close)
{
    size_t cap = 0;
    out->type = open == '{' ? J_OBJ : J_ARR;
    ps->p++;
    ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        jval item;
        memset(&item, 0, sizeof item);
        ws(ps);
        if (out->type == J_OBJ) {
            if (!parse_string(ps, &key))
                return false;
            ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                return false;
            }
            ps->p++;
        }
        if (!parse_value(ps, &item) || !push(out, &cap, &item, key)) {
            free(key);
            jfree(&item);
            return false;
        }
        ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return true;
        }
        return false;
    }
}

static bool parse_value(parser *ps, jval *out)
{
    memset(out, 0, sizeof *out);
    ws(ps);
    if (ps->p >= ps->end || ++ps->depth > 64)
        return false;
    bool ok;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        ok = parse_container(ps, out, c, c == '{' ? '}' : ']');
    } else if (c == '"') {
        out->type = J_STR;
        ok = parse_string(ps, &out->str);
    } else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "null", 4)) {
        out->type = c == 't' ? J_BOOL : J_NULL;
        out->num = c == 't';
        ps->p += 4;
        ok = true;
    } else if (!strncmp(ps->p, "false", 5)) {
        out->type = J_BOOL;
        ps->p += 5;
        ok = true;
    } else {
        char *e;
        errno = 0;
        out->type = J_NUM;
        out->num = strtod(ps->p, &e);
        ok = e != ps->p && errno == 0;
        ps->p = e;
    }
    ps->depth--;
    return ok;
}

static const jval *jget(const jval *obj, const char *key)
{
    if (!obj || obj->type != J_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key))
            return &obj->items[i];
    return NULL;
}

static const char *jstr(const jval *obj, const char *key, const char *dflt)
{
    const jval *v = jget(obj, key);
    return v && v->type == J_STR ? v->str : dflt;
}

static double jnum(const jval *obj, const char *key, double dflt)
{
    const jval *v = jget(obj, key);
    return v && v->type == J_NUM ? v->num : dflt;
}

/* ---- The timeline. ---- */

typedef struct span {
    double ts, dur;            /* microseconds; dur < 0: an instant */
    const char *name, *cat, *detail;
    int depth;
} span;

typedef struct lane {
    int tid;
    const char *label;
    span *spans;
    size_t n, cap;
    int depths;
} lane;

static const struct { const char *cat, *color; } palette[] = {
    {"op", "#4e79a7"}, {"map", "#59a14f"}, {"host", "#e15759"},
    {"trace", "#f28e2b"}, {"compile", "#b07aa1"}, {"run", "#76b7b2"},
    {"steal", "#edc948"},
};
#define N_PALETTE (sizeof palette / sizeof palette[0])

static const char *color_of(const char *cat)
{
    for (size_t i = 0; i < N_PALETTE; i++)
        if (!strcmp(palette[i].cat, cat))
            return palette[i].color;
    return "#9c9c9c";
}

static lane *lane_of(lane **lanes, size_t *n, size_t *cap, int tid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*lanes)[i].tid == tid)
            return &(*lanes)[i];
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        lane *nl = realloc(*lanes, nc * sizeof *nl);
        if (!nl)
            return NULL;
        *lanes = nl;
        *cap = nc;
    }
    lane *l = &(*lanes)[(*n)++];
    memset(l, 0, sizeof *l);
    l->tid = tid;
    return l;
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur;   /* outer spans first */
}

static int cmp_lane(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Nesting depth of each span: how many earlier spans of the lane are still
 * open when it starts. */
static void assign_depths(lane *l)
{
    double open_end[32];
    int n_open = 0;
    qsort(l->spans, l->n, sizeof *l->spans, cmp_span);
    l->depths = 1;
    for (size_t i = 0; i < l->n; i++) {
        span *s = &l->spans[i];
        while (n_open > 0 && open_end[n_open - 1] <= s->ts)
            n_open--;
        s->depth = n_open;
        if (s->dur >= 0 && n_open < 32)
            open_end[n_open++] = s->ts + s->dur;
        if (s->depth + 1 > l->depths)
            l->depths = s->depth + 1;
    }
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
    }
}

/* A tick step of 1, 2 or 5 times a power of ten, giving about 10 ticks. */
static double tick_step(double span_ms)
{
    double raw = span_ms / 10.0;
    if (raw <= 0)
        return 1;
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s in.json out.svg\n", argv[0]);
        return 2;
    }
    size_t len = 0;
    char *text = read_file(argv[1], &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read %s: %s\n", argv[0], argv[1], strerror(errno));
        return 1;
    }
    parser ps = {text, text + len, 0};
    jval root;
    if (!parse_value(&ps, &root)) {
        fprintf(stderr, "%s: %s is not valid JSON (near byte %zu)\n", argv[0], argv[1],
                (size_t)(ps.p - text));
        jfree(&root);
        free(text);
        return 1;
    }
    const jval *events = root.type == J_ARR ? &root : jget(&root, "traceEvents");
    if (!events || events->type != J_ARR) {
        fprintf(stderr, "%s: %s has no traceEvents array\n", argv[0], argv[1]);
        jfree(&root);
        free(text);
        return 1;
    }

    lane *lanes = NULL;
    size_t n_lanes = 0, lanes_cap = 0;
    double t_min = INFINITY, t_max = -INFINITY;
    bool used[N_PALETTE + 1] = {false};
    for (size_t i = 0; i < events->n; i++) {
        const jval *e = &events->items[i];
        const char *ph = jstr(e, "ph", "");
        int tid = (int)jnum(e, "tid", 0);
        if (!strcmp(ph, "M")) {
            if (!strcmp(jstr(e, "name", ""), "thread_name")) {
                lane *l = lane_of(&lanes, &n_lanes, &lanes_cap, tid);
                if (l)
                    l->label = jstr(jget(e, "args"), "name", NULL);
            }
            continue;
        }
        if (strcmp(ph, "X") && strcmp(ph, "i") && strcmp(ph, "I"))
            continue;
        lane *l = lane_of(&lanes, &n_lanes, &lanes_cap, tid);
        if (!l)
            break;
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 64;
            span *ns = realloc(l->spans, nc * sizeof *ns);
            if (!ns)
                break;
            l->spans = ns;
            l->cap = nc;
        }
        span *s = &l->spans[l->n++];
        s->ts = jnum(e, "ts", 0);
        s->dur = ph[0] == 'X' ? jnum(e, "dur", 0) : -1;
        s->name = jstr(e, "name", "");
        s->cat = jstr(e, "cat", "");
        s->detail = jstr(jget(e, "args"), "detail", NULL);
        s->depth = 0;
        if (s->ts < t_min)
            t_min = s->ts;
        double end = s->ts + (s->dur > 0 ? s->dur : 0);
        if (end > t_max)
            t_max = end;
        size_t k = 0;
        while (k < N_PALETTE && strcmp(palette[k].cat, s->cat))
            k++;
        used[k] = true;
    }
    if (!(t_min <= t_max)) {
        t_min = 0;
        t_max = 1000;
    }
    /* weft profiles count from weft_profile_begin: start the axis there. */
    if (t_min > 0 && t_min <= t_max / 2)
        t_min = 0;
    if (t_max - t_min < 1)
        t_max = t_min + 1;
    qsort(lanes, n_lanes, sizeof *lanes, cmp_lane);
    for (size_t i = 0; i < n_lanes; i++)
        assign_depths(&lanes[i]);

    const double label_w = 150, plot_w = 1100, row_h = 14, lane_gap = 8, top = 40;
    double height = top;
    for (size_t i = 0; i < n_lanes; i++)
        height += lanes[i].depths * row_h + lane_gap;
    double legend_y = height + 20;
    double total_h = legend_y + 30;
    double total_w = label_w + plot_w + 40;   /* room for the last tick's label */
    double span_ms = (t_max - t_min) / 1000.0;
    double scale = plot_w / (t_max - t_min);   /* px per microsecond */

    FILE *f = fopen(argv[2], "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", argv[0], argv[2], strerror(errno));
        return 1;
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n", total_w, total_h);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    /* The lane bands come first: drawn after the grid they would hide it. */
    double y = top;
    for (size_t i = 0; i < n_lanes; i++) {
        double lane_h = lanes[i].depths * row_h;
        fprintf(f, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"%s\"/>\n",
                y - lane_gap / 2, total_w, lane_h + lane_gap, i % 2 ? "#f7f7f7" : "#ffffff");
        y += lane_h + lane_gap;
    }
    /* The time axis: a tick and a grid line per step, labelled in ms. */
    double step = tick_step(span_ms);
    for (double t = 0; t <= span_ms + 1e-9; t += step) {
        double x = label_w + t * 1000.0 * scale;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                x, top - 6, x, height);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g ms</text>\n",
                x, top - 10, t);
    }
    y = top;
    for (size_t i = 0; i < n_lanes; i++) {
        lane *l = &lanes[i];
        double lane_h = l->depths * row_h;
        fprintf(f, "<text x=\"4\" y=\"%.1f\">", y + row_h - 3);
        if (l->label)
            xml_text(f, l->label);
        else
            fprintf(f, "tid %d", l->tid);
        fputs("</text>\n", f);
        for (size_t k = 0; k < l->n; k++) {
            const span *s = &l->spans[k];
            double x = label_w + (s->ts - t_min) * scale;
            double sy = y + s->depth * row_h;
            if (s->dur < 0) {
                fprintf(f, "<path d=\"M%.2f %.1fl4 6l-4 6l-4 -6z\" fill=\"%s\">",
                        x, sy, color_of(s->cat));
            } else {
                /* One pixel short, so that back-to-back spans (the
                 * iterations of a serial map) stay visibly separate. */
                double w = s->dur * scale;
                if (w > 3)
                    w -= 1;
                fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                        "fill=\"%s\" stroke=\"#333\" stroke-width=\"0.3\">",
                        x, sy, w < 0.5 ? 0.5 : w, row_h - 2, color_of(s->cat));
            }
            fputs("<title>", f);
            xml_text(f, s->cat);
            fputs(": ", f);
            xml_text(f, s->name);
            if (s->detail) {
                fputs(" (", f);
                xml_text(f, s->detail);
                fputc(')', f);
            }
            if (s->dur >= 0)
                fprintf(f, ", %.3f ms", s->dur / 1000.0);
            fputs("</title>", f);
            fputs(s->dur < 0 ? "</path>\n" : "</rect>\n", f);
        }
        y += lane_h + lane_gap;
    }
    /* The legend: every category present, then "other" if any. */
    double lx = label_w;
    for (size_t k = 0; k <= N_PALETTE; k++) {
        if (!used[k])
            continue;
        const char *cat = k < N_PALETTE ? palette[k].cat : "other";
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                lx, legend_y, k < N_PALETTE ? palette[k].color : "#9c9c9c",
                lx + 16, legend_y + 10, cat);
        lx += 90;
    }
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "%s: writing %s failed\n", argv[0], argv[2]);
        return 1;
    }
    for (size_t i = 0; i < n_lanes; i++)
        free(lanes[i].spans);
    free(lanes);
    jfree(&root);
    free(text);
    return 0;
}
