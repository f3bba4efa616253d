/* The timeline profiler: argument checks, one profile per runtime, the file
 * is valid trace-event JSON with named lanes, spans recorded from many
 * threads while another thread ends the profile, bounded lanes, and a map of
 * sleeping host calls whose spans never nest deeper than
 * parallel_iterations. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "runtime/iface.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static const char *tmp_path(const char *tag)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "/tmp/weft_test_profile_%d_%s.json", (int)getpid(), tag);
    return buf;
}

/* ---- A minimal JSON parser for the checks. ---- */

typedef struct ev {
    char name[64], cat[32], ph[4], label[64];
    double ts, dur;
    int tid;
} ev;

typedef struct jp {
    const char *p;
    ev *evs;
    size_t n, cap;
    bool in_event;
    ev cur;
    int depth;
} jp;

static void skip_ws(jp *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
        j->p++;
}

/* A string into buf (truncated); escapes are kept simple. */
static bool jstring(jp *j, char *buf, size_t size)
{
    size_t n = 0;
    if (*j->p != '"')
        return false;
    j->p++;
    while (*j->p && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            if (!*j->p)
                return false;
            c = *j->p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++)
                    if (!*j->p++)
                        return false;
                c = '?';
            }
        } else if ((unsigned char)c < 0x20) {
            return false;   /* raw control characters are not JSON */
        }
        if (buf && n + 1 < size)
            buf[n++] = c;
    }
    if (*j->p != '"')
        return false;
    j->p++;
    if (buf)
        buf[n] = '\0';
    return true;
}

static bool jvalue(jp *j, const char *key);

static void copy(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* An object.  Depth counts values: the root is 1, traceEvents 2, its
 * events 3, their fields 4, and the fields of their "args" 5 (thread
 * names). */
static bool jobject(jp *j)
{
    bool is_event = j->depth == 3;
    if (is_event)
        memset(&j->cur, 0, sizeof j->cur);
    j->p++;
    skip_ws(j);
    if (*j->p == '}') {
        j->p++;
        return true;
    }
    for (;;) {
        char key[64];
        skip_ws(j);
        if (!jstring(j, key, sizeof key))
            return false;
        skip_ws(j);
        if (*j->p++ != ':')
            return false;
        skip_ws(j);
        if (!jvalue(j, key))
            return false;
        skip_ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p++ != '}')
            return false;
        break;
    }
    if (is_event) {
        if (j->n == j->cap) {
            j->cap = j->cap ? j->cap * 2 : 256;
            j->evs = realloc(j->evs, j->cap * sizeof *j->evs);
        }
        j->evs[j->n++] = j->cur;
    }
    return true;
}

static bool jvalue(jp *j, const char *key)
{
    bool ok = true;
    j->depth++;
    if (*j->p == '{') {
        ok = jobject(j);
    } else if (*j->p == '[') {
        j->p++;
        skip_ws(j);
        if (*j->p == ']') {
            j->p++;
        } else {
            for (;;) {
                skip_ws(j);
                if (!jvalue(j, NULL)) {
                    ok = false;
                    break;
                }
                skip_ws(j);
                if (*j->p == ',') {
                    j->p++;
                    continue;
                }
                ok = *j->p++ == ']';
                break;
            }
        }
    } else if (*j->p == '"') {
        char buf[64];
        ok = jstring(j, buf, sizeof buf);
        if (ok && key && j->depth == 4) {
            if (!strcmp(key, "name"))
                copy(j->cur.name, sizeof j->cur.name, buf);
            else if (!strcmp(key, "cat"))
                copy(j->cur.cat, sizeof j->cur.cat, buf);
            else if (!strcmp(key, "ph"))
                copy(j->cur.ph, sizeof j->cur.ph, buf);
        } else if (ok && key && j->depth == 5 && !strcmp(key, "name")) {
            copy(j->cur.label, sizeof j->cur.label, buf);
        }
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
        j->p += 4;
    } else if (!strncmp(j->p, "false", 5)) {
        j->p += 5;
    } else {
        char *end;
        double v = strtod(j->p, &end);
        ok = end != j->p;
        j->p = end;
        if (ok && key && j->depth == 4) {
            if (!strcmp(key, "ts"))
                j->cur.ts = v;
            else if (!strcmp(key, "dur"))
                j->cur.dur = v;
            else if (!strcmp(key, "tid"))
                j->cur.tid = (int)v;
        }
    }
    j->depth--;
    return ok;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    cr_assert_eq(fread(s, 1, (size_t)len, f), (size_t)len);
    s[len] = '\0';
    fclose(f);
    return s;
}

/* Parses the whole file (it must be one JSON object with traceEvents and
 * nothing after it) and returns its events. */
static ev *parse_profile(const char *path, size_t *n)
{
    char *text = slurp(path);
    jp j;
    memset(&j, 0, sizeof j);
    j.p = text;
    skip_ws(&j);
    cr_assert_eq(*j.p, '{', "a profile is a JSON object");
    cr_assert(strstr(text, "\"traceEvents\"") != NULL);
    cr_assert(jvalue(&j, NULL), "invalid JSON near byte %ld", (long)(j.p - text));
    skip_ws(&j);
    cr_assert_eq(*j.p, '\0', "trailing bytes after the JSON object");
    free(text);
    *n = j.n;
    return j.evs;
}

/* The largest number of cat spans open at once, over all lanes. */
static int max_depth(const ev *e, size_t n, const char *cat)
{
    int best = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(e[i].ph, "X") || strcmp(e[i].cat, cat))
            continue;
        /* Spans open at the start of span i (ends are exclusive). */
        int open = 0;
        for (size_t k = 0; k < n; k++)
            if (!strcmp(e[k].ph, "X") && !strcmp(e[k].cat, cat) &&
                e[k].ts <= e[i].ts && e[i].ts < e[k].ts + e[k].dur)
                open++;
        if (open > best)
            best = open;
    }
    return best;
}

static size_t count(const ev *e, size_t n, const char *ph, const char *cat)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(e[i].ph, ph) && (!cat || !strcmp(e[i].cat, cat)))
            c++;
    return c;
}

/* ---- Tests. ---- */

Test(profile, arguments_and_double_begin, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    const char *path = tmp_path("double");
    cr_assert_eq(weft_profile_begin(NULL, path), WEFT_EINVAL);
    cr_assert_eq(weft_profile_begin(rt, NULL), WEFT_EINVAL);
    cr_assert_eq(weft_profile_end(NULL), WEFT_EINVAL);
    cr_assert_eq(weft_profile_end(rt), WEFT_EINVAL, "no profile recording");
    cr_assert(!weft__profiling(rt));

    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    cr_assert(weft__profiling(rt));
    cr_assert_eq(weft_profile_begin(rt, path), WEFT_EINVAL, "one profile per runtime");
    cr_assert(strstr(weft_errmsg(), "weft_profile_begin") != NULL, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    cr_assert(!weft__profiling(rt));
    cr_assert_eq(weft_profile_end(rt), WEFT_EINVAL);
    /* And again, after the first one ended. */
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    size_t n;
    ev *e = parse_profile(path, &n);
    free(e);
    unlink(path);
    weft_runtime_destroy(&rt);
}

Test(profile, unwritable_path, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    int rc = weft_profile_begin(rt, "/nonexistent-weft-dir/x/profile.json");
    cr_assert_eq(rc, WEFT_EIO, "rc %d: %s", rc, weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "/nonexistent-weft-dir/x/profile.json") != NULL, "%s", weft_errmsg());
    cr_assert(!weft__profiling(rt), "a failed begin leaves nothing recording");
    cr_assert_eq(weft_profile_end(rt), WEFT_EINVAL);
    weft_runtime_destroy(&rt);
}

Test(profile, per_runtime, .timeout = 60)
{
    weft_runtime *a = test_runtime(2), *b = test_runtime(2);
    const char *path = tmp_path("per_runtime");
    cr_assert_eq(weft_profile_begin(a, path), 0, "%s", weft_errmsg());
    cr_assert(weft__profiling(a));
    cr_assert(!weft__profiling(b), "profiling a does not profile b");
    weft__profile_span(b, "op", "not_recorded", weft__now_ns(), weft__now_ns(), NULL);
    weft__profile_span(a, "op", "recorded \"quoted\"\n", weft__now_ns(), weft__now_ns(), "d\\etail");
    cr_assert_eq(weft_profile_end(a), 0, "%s", weft_errmsg());
    size_t n;
    ev *e = parse_profile(path, &n);
    cr_assert_eq(count(e, n, "X", "op"), 1);
    for (size_t i = 0; i < n; i++)
        cr_assert(strcmp(e[i].name, "not_recorded") != 0);
    free(e);
    unlink(path);
    weft_runtime_destroy(&a);
    weft_runtime_destroy(&b);
}

/* Spans recorded inside a bounded parallel map, from workers and (maybe) the
 * calling thread. */
typedef struct rec { weft_runtime *rt; int in_flight, peak; /* (atomic) */ } rec;

static int rec_iter(size_t i, void *ctx)
{
    rec *r = ctx;
    uint64_t t0 = weft__now_ns();
    int now = __atomic_fetch_add(&r->in_flight, 1, __ATOMIC_SEQ_CST) + 1;
    int peak = __atomic_load_n(&r->peak, __ATOMIC_SEQ_CST);
    while (now > peak && !__atomic_compare_exchange_n(&r->peak, &peak, now, true, __ATOMIC_SEQ_CST,
                                                      __ATOMIC_SEQ_CST))
        ;
    sleep_us(300);
    __atomic_fetch_sub(&r->in_flight, 1, __ATOMIC_SEQ_CST);
    char detail[32];
    snprintf(detail, sizeof detail, "iteration %zu", i);
    weft__profile_span(r->rt, "map", "map", t0, weft__now_ns(), detail);
    if (i % 10 == 0)
        weft__profile_instant(r->rt, "run", "tick");
    return 0;
}

Test(profile, lanes_and_spans, .timeout = 60)
{
    weft_runtime *rt = test_runtime(4);
    const char *path = tmp_path("lanes");
    rec r = {.rt = rt};
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    weft__profile_instant(rt, "run", "start");   /* from an outside thread */
    cr_assert_eq(weft_parallel_map(rt, 120, 3, rec_iter, &r), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    size_t n;
    ev *e = parse_profile(path, &n);
    cr_assert_eq(count(e, n, "X", "map"), 120);
    cr_assert_eq(count(e, n, "i", NULL), 13);
    cr_assert_leq(max_depth(e, n, "map"), 3, "never more than parallel_iterations spans");
    /* Every event's lane is named by a thread_name record. */
    bool outside = false;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(e[i].ph, "M") && !strcmp(e[i].name, "thread_name")) {
            cr_assert(!strncmp(e[i].label, "worker ", 7) || !strncmp(e[i].label, "outside thread ", 15),
                      "lane label %s", e[i].label);
            outside |= !strncmp(e[i].label, "outside thread ", 15);
            continue;
        }
        if (strcmp(e[i].ph, "X") && strcmp(e[i].ph, "i"))
            continue;
        cr_assert_geq(e[i].ts, 0);
        bool named = false;
        for (size_t k = 0; k < n && !named; k++)
            named = !strcmp(e[k].ph, "M") && !strcmp(e[k].name, "thread_name") && e[k].tid == e[i].tid;
        cr_assert(named, "event %s on an unnamed lane %d", e[i].name, e[i].tid);
    }
    cr_assert(outside, "the instant from this thread has an outside-thread lane");
    free(e);
    unlink(path);
    weft_runtime_destroy(&rt);
}

/* Whether s is well-formed UTF-8 as JSON readers decode it: no stray or
 * missing continuation bytes, no overlong forms, surrogates or code points
 * past U+10FFFF. */
static bool utf8_ok(const unsigned char *s)
{
    while (*s) {
        unsigned char c = *s++;
        int more = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (more < 0)
            return false;
        unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        for (int k = 0; k < more; k++, s++) {
            if (*s < (k ? 0x80 : lo) || *s > (k ? 0xBF : hi))
                return false;
        }
    }
    return true;
}

/* Names are cut to fit a record; a cut inside a multi-byte character
 * drops the whole character, so that the file stays valid UTF-8. */
Test(profile, long_names_stay_utf8, .timeout = 60)
{
    weft_runtime *rt = test_runtime(1);
    const char *path = tmp_path("utf8");
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    /* 0, 1 or 2 ASCII bytes, then 2-byte "\xC3\xA9" (e acute) in the name
     * and 3-byte "\xE2\x82\xAC" (the euro sign) in the detail, past the
     * records' size: every cut position falls inside a character once. */
    for (int lead = 0; lead < 3; lead++) {
        char name[128], detail[256];
        memset(name, 'a', (size_t)lead);
        for (size_t k = (size_t)lead; k + 2 < sizeof name; k += 2)
            memcpy(name + k, "\xC3\xA9", 2);
        memset(detail, 'd', (size_t)lead);
        for (size_t k = (size_t)lead; k + 3 < sizeof detail; k += 3)
            memcpy(detail + k, "\xE2\x82\xAC", 3);
        name[sizeof name - 1 - (sizeof name - 1 - (size_t)lead) % 2] = '\0';
        detail[sizeof detail - 1 - (sizeof detail - 1 - (size_t)lead) % 3] = '\0';
        cr_assert(utf8_ok((const unsigned char *)name) && utf8_ok((const unsigned char *)detail));
        weft__profile_span(rt, "op", name, 1000, 2000, detail);
    }
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    char *text = slurp(path);
    cr_assert_not_null(text);
    cr_assert(utf8_ok((const unsigned char *)text), "the profile is not valid UTF-8");
    size_t n;
    ev *e = parse_profile(path, &n);
    cr_assert_eq(count(e, n, "X", NULL), 3);
    free(e);
    free(text);
    unlink(path);
    weft_runtime_destroy(&rt);
}

/* Names and details are the caller's bytes (a function's name, say), which
 * need not be UTF-8: such bytes are written as U+FFFD, so that the file
 * stays JSON that viewers and strict parsers accept. */
static int body_neg(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_neg(cx, args[0]);
    return 0;
}

Test(profile, bytes_that_are_not_utf8, .timeout = 60)
{
    weft_runtime *rt = test_runtime(1);
    const char *path = tmp_path("not_utf8");
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = "caf\xe9";           /* Latin-1, not UTF-8 */
    d.body = body_neg;
    d.n_args = d.n_outs = 1;
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    weft_tensor *x = NULL, *y = NULL;
    int64_t dims[1] = {2};
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, dims, NULL, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
    /* A lone lead byte at the end, stray continuation bytes, bytes never in
     * UTF-8, an overlong '/', a surrogate and a code point past U+10FFFF. */
    weft__profile_span(rt, "op", "lead \xc3", 1, 2, "\x80\xbf \xfe\xff \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80");
    /* Valid characters and JSON's own escapes pass as they are. */
    weft__profile_span(rt, "op", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82", 1, 2, "\"q\" \\ \t\x01\x7f");
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    char *text = slurp(path);
    cr_assert(utf8_ok((const unsigned char *)text), "the profile is not valid UTF-8");
    cr_assert(strstr(text, "\"caf\\ufffd\"") != NULL, "the Latin-1 byte is U+FFFD");
    cr_assert(strstr(text, "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82") != NULL, "valid UTF-8 is kept");
    size_t n;
    ev *e = parse_profile(path, &n);
    cr_assert_geq(count(e, n, "X", "trace"), 1);
    cr_assert_geq(count(e, n, "X", "op"), 2);
    free(e);
    free(text);
    unlink(path);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
}

Test(profile, bounded_lanes, .timeout = 60)
{
    weft_runtime *rt = test_runtime(1);
    const char *path = tmp_path("bounded");
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    const int total = (1 << 16) + 100;
    for (int i = 0; i < total; i++)
        weft__profile_span(rt, "op", "x", 1, 2, NULL);
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    char *text = slurp(path);
    cr_assert(strstr(text, "\"dropped_events\":100}") != NULL, "dropped count reported");
    free(text);
    unlink(path);
    weft_runtime_destroy(&rt);
}

/* A thread that records into more profiles at once than it remembers lanes
 * for still has one lane in each: not a new "outside thread" per event. */
Test(profile, one_lane_per_thread_across_many_profiles, .timeout = 60)
{
    enum { N_RT = 6, ROUNDS = 20 };
    weft_runtime *rts[N_RT];
    char paths[N_RT][256];
    for (int i = 0; i < N_RT; i++) {
        rts[i] = test_runtime(1);
        char tag[16];
        snprintf(tag, sizeof tag, "many%d", i);
        snprintf(paths[i], sizeof paths[i], "%s", tmp_path(tag));
        cr_assert_eq(weft_profile_begin(rts[i], paths[i]), 0, "%s", weft_errmsg());
    }
    for (int k = 0; k < ROUNDS; k++)
        for (int i = 0; i < N_RT; i++)
            weft__profile_span(rts[i], "op", "x", weft__now_ns(), weft__now_ns(), NULL);
    for (int i = 0; i < N_RT; i++) {
        cr_assert_eq(weft_profile_end(rts[i]), 0, "%s", weft_errmsg());
        size_t n;
        ev *e = parse_profile(paths[i], &n);
        size_t lanes = 0;
        int tid = -1;
        for (size_t j = 0; j < n; j++) {
            if (!strcmp(e[j].ph, "M") && !strcmp(e[j].name, "thread_name")) {
                lanes++;
                cr_assert_str_eq(e[j].label, "outside thread 0");
                tid = e[j].tid;
            }
        }
        cr_assert_eq(lanes, 1, "profile %d has %zu lanes for one thread", i, lanes);
        cr_assert_eq(count(e, n, "X", "op"), ROUNDS);
        for (size_t j = 0; j < n; j++)
            if (!strcmp(e[j].ph, "X"))
                cr_assert_eq(e[j].tid, tid);
        free(e);
        unlink(paths[i]);
        weft_runtime_destroy(&rts[i]);
    }
}

/* Out of memory, a recorder drops its event, and the file says how many
 * were dropped: a lane that cannot be allocated counts as well as a chunk. */
Test(profile, events_dropped_without_memory_are_counted, .timeout = 60)
{
    if (!weft__fault_fail_after(0))
        cr_skip_test("needs -Dfault_injection=true");
    weft_runtime *rt = test_runtime(1);
    const char *path = tmp_path("nomem");
    /* The first allocation of a recorder is its lane, the second its first
     * chunk of events. */
    for (long k = 1; k <= 2; k++) {
        cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
        weft__fault_fail_after(k);
        for (int i = 0; i < 3; i++)
            weft__profile_span(rt, "op", "x", 1, 2, NULL);
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        cr_assert(hit, "allocation %ld of the recorder failed", k);
        cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
        size_t n;
        ev *e = parse_profile(path, &n);
        cr_assert_eq(count(e, n, "X", "op"), 2);
        free(e);
        char *text = slurp(path);
        cr_assert(strstr(text, "\"dropped_events\":1}") != NULL,
                  "allocation %ld failed: one event dropped, %s", k, strstr(text, "\"dropped_events\""));
        free(text);
    }
    unlink(path);
    weft_runtime_destroy(&rt);
}

/* Recorders keep recording while the main thread begins and ends profiles:
 * end must not free a lane under a recorder (ASan/TSan watch this). */
typedef struct storm { weft_runtime *rt; int stop; long recorded; /* (atomic) */ } storm;

static int storm_range(size_t b, size_t e, void *ctx)
{
    storm *s = ctx;
    for (size_t i = b; i < e; i++) {
        while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
            weft__profile_span(s->rt, "op", "storm", weft__now_ns(), weft__now_ns(), "x");
            __atomic_fetch_add(&s->recorded, 1, __ATOMIC_RELAXED);
        }
    }
    return 0;
}

static void *storm_thread(void *arg)
{
    storm *s = arg;
    weft_parallel_for(s->rt, weft_runtime_workers(s->rt), 1, storm_range, s);
    return NULL;
}

Test(profile, end_while_recording, .timeout = 60)
{
    weft_runtime *rt = test_runtime(3);
    storm s = {.rt = rt};
    pthread_t th;
    pthread_create(&th, NULL, storm_thread, &s);
    const char *path = tmp_path("storm");
    for (int round = 0; round < 20; round++) {
        cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
        sleep_us(1000);
        cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());
    }
    __atomic_store_n(&s.stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(th, NULL);
    cr_assert_gt(__atomic_load_n(&s.recorded, __ATOMIC_SEQ_CST), 0);
    size_t n;
    ev *e = parse_profile(path, &n);
    free(e);
    unlink(path);
    weft_runtime_destroy(&rt);
}

/* weft_profile_begin has created the file already: a runtime destroyed
 * while recording writes what was recorded, never leaves it empty. */
Test(profile, runtime_destroy_writes_profile, .timeout = 60)
{
    weft_runtime *rt = test_runtime(2);
    const char *path = tmp_path("gone");
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    weft__profile_span(rt, "op", "x", weft__now_ns(), weft__now_ns(), NULL);
    weft_runtime *dead = rt;
    weft_runtime_destroy(&rt);   /* no leak (ASan), and the slot is freed */
    cr_assert(!weft__profiling(dead));
    size_t n;
    ev *e = parse_profile(path, &n);
    cr_assert_eq(count(e, n, "X", "op"), 1, "the span recorded before the destroy is in the file");
    free(e);
    unlink(path);
}

/* ---- A map of sleeping host calls, profiled end to end. ---- */

static int sleepy_cb(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user)
{
    (void)n_in;
    (void)user;
    sleep_us(2000);
    *out = weft_tensor_retain(in[0]);
    return 0;
}

static int body_sleepy(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    weft_spec s;
    weft_spec_parse("f64[]", &s);
    outs[0] = weft_host_call(cx, sleepy_cb, NULL, &args[0], 1, &s, 0);
    return 0;
}

typedef struct outer { weft_function *inner; } outer;

static int body_outer(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    outer *o = user;
    outs[0] = weft_map(cx, o->inner, args[0], 3);
    return 0;
}

Test(profile, map_of_host_calls, .timeout = 60)
{
    weft_runtime *rt = test_runtime_of(8);
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = "sleepy";
    d.body = body_sleepy;
    d.n_args = d.n_outs = 1;
    weft_function *inner = NULL, *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &inner), 0, "%s", weft_errmsg());
    outer o = {inner};
    d.name = "outer";
    d.body = body_outer;
    d.user = &o;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());

    const char *path = tmp_path("map_host");
    cr_assert_eq(weft_profile_begin(rt, path), 0, "%s", weft_errmsg());
    double data[16];
    for (int i = 0; i < 16; i++)
        data[i] = i;
    int64_t dims[1] = {16};
    weft_tensor *x = NULL, *r = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, dims, data, &x), 0);
    weft_arg a = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &a, 1, &r, 1), 0, "%s", weft_errmsg());
    cr_assert_eq(memcmp(weft_tensor_data(r), data, sizeof data), 0);
    cr_assert_eq(weft_profile_end(rt), 0, "%s", weft_errmsg());

    size_t n;
    ev *e = parse_profile(path, &n);
    cr_assert_eq(count(e, n, "X", "map"), 16);
    cr_assert_eq(count(e, n, "X", "host"), 16);
    int map_depth = max_depth(e, n, "map"), host_depth = max_depth(e, n, "host");
    cr_assert_leq(map_depth, 3, "map spans %d deep", map_depth);
    cr_assert_leq(host_depth, 3, "host spans %d deep", host_depth);
    cr_assert_geq(host_depth, 2, "sleeping host calls overlap on 8 workers");
    /* Each host call runs inside a map iteration, on the same lane. */
    for (size_t i = 0; i < n; i++) {
        if (strcmp(e[i].ph, "X") || strcmp(e[i].cat, "host"))
            continue;
        bool inside = false;
        for (size_t k = 0; k < n && !inside; k++)
            inside = !strcmp(e[k].ph, "X") && !strcmp(e[k].cat, "map") && e[k].tid == e[i].tid &&
                     e[k].ts <= e[i].ts && e[i].ts + e[i].dur <= e[k].ts + e[k].dur;
        cr_assert(inside, "host span at %.3f us is outside every map span", e[i].ts);
    }
    free(e);
    unlink(path);
    weft_tensor_release(x);
    weft_tensor_release(r);
    weft_function_destroy(&f);
    weft_function_destroy(&inner);
    weft_runtime_destroy(&rt);
}
