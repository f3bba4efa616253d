/* libFuzzer target: random call sequences of random signatures against a
 * function with a small max_cached.  The body encodes the signature it was
 * traced for (kind, dtype, rank, dims, static value of every argument) into
 * its first output, and computes the total element count of its tensor
 * arguments at run time into the second; every call checks that the
 * concrete function that ran matches its arguments (a relaxed dim may be
 * WEFT_DIM_ANY only with WEFT_REDUCE_RETRACING), and that the cache never
 * holds more than max_cached entries.
 *
 * Input layout: byte 0 picks n_args (1..3), the flags and max_cached (1..4);
 * then each call takes one byte per argument (kind, dtype, rank) plus a byte
 * per dim or a byte of static value, and one byte choosing between
 * weft_function_call and weft_function_get_concrete + weft_concrete_call. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#define MAX_ARGS 3
#define ENC 12   /* int64 slots per argument in the first output */

static weft_runtime *rt;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    weft_config cfg = { .workers = 2 };
    if (weft_runtime_create(&cfg, &rt) != 0) {
        fprintf(stderr, "weft_runtime_create: %s\n", weft_errmsg());
        abort();
    }
    return 0;
}

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_cache: check failed: %s: ", #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            abort();                                                                     \
        }                                                                                \
    } while (0)

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static int next(reader *r)
{
    if (r->n == 0)
        return -1;
    r->n--;
    return *r->p++;
}

/* Encodes what the body sees at trace time. */
static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    size_t n_args = *(const size_t *)user;
    int64_t enc[MAX_ARGS * ENC];
    memset(enc, 0, sizeof enc);
    weft_value *numel = weft_const_i64(cx, 0);
    for (size_t i = 0; i < n_args; i++) {
        int64_t *e = enc + i * ENC;
        weft_spec s;
        int rc = weft_value_spec(args[i], &s);
        if (rc)
            return rc;
        int64_t iv;
        double dv;
        if (weft_value_static_i64(args[i], &iv) == 0) {
            e[0] = WEFT_ARG_I64;
            e[11] = iv;
        } else if (weft_value_static_f64(args[i], &dv) == 0) {
            e[0] = WEFT_ARG_F64;
            memcpy(&e[11], &dv, sizeof dv);
        } else {
            e[0] = WEFT_ARG_TENSOR;
            /* Its element count, computed by the program at run time. */
            weft_value *ones = weft_add(cx, weft_mul(cx, weft_cast(cx, args[i], WEFT_I64),
                                                     weft_const_i64(cx, 0)),
                                        weft_const_i64(cx, 1));
            numel = weft_add(cx, numel, weft_sum(cx, ones, WEFT_ALL_AXES));
        }
        e[1] = s.dtype;
        e[2] = s.rank;
        for (int d = 0; d < s.rank && d < 8; d++)
            e[3 + d] = s.dims[d];
    }
    int64_t dims[2] = { (int64_t)n_args, ENC };
    weft_tensor *t = NULL;
    int rc = weft_tensor_create(WEFT_I64, 2, dims, enc, &t);
    if (rc)
        return rc;
    outs[0] = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    outs[1] = numel;
    return weft_ctx_status(cx);
}

typedef struct call_args {
    weft_arg a[MAX_ARGS];
    weft_tensor *t[MAX_ARGS];
    weft_spec s[MAX_ARGS];
    bool all_tensors;
    int64_t numel;
} call_args;

static bool read_args(reader *r, size_t n_args, call_args *c)
{
    memset(c, 0, sizeof *c);
    c->all_tensors = true;
    for (size_t i = 0; i < n_args; i++) {
        int b = next(r);
        if (b < 0)
            return false;
        int kind = b % 4;          /* 0, 1: tensor; 2: i64; 3: f64 */
        if (kind >= 2) {
            c->all_tensors = false;
            int v = next(r);
            if (v < 0)
                return false;
            if (kind == 2)
                c->a[i] = weft_arg_i64((int64_t)(v % 5) - 2);
            else
                c->a[i] = weft_arg_f64(v == 255 ? NAN : v == 254 ? -0.0 : (double)(v % 3) * 0.5);
            continue;
        }
        weft_dtype dt = (weft_dtype)((b >> 2) % 5);
        int rank = (b >> 5) % 4;   /* 0..3 */
        int64_t dims[4];
        int64_t numel = 1;
        for (int d = 0; d < rank; d++) {
            int v = next(r);
            if (v < 0)
                return false;
            dims[d] = v % 4;       /* 0..3, zero-size tensors included */
            numel *= dims[d];
        }
        weft_tensor *t = NULL;
        if (weft_tensor_create(dt, rank, dims, NULL, &t) != 0) {
            fprintf(stderr, "weft_tensor_create: %s\n", weft_errmsg());
            abort();
        }
        c->t[i] = t;
        c->a[i] = weft_arg_tensor(t);
        c->s[i].dtype = dt;
        c->s[i].rank = rank;
        for (int d = 0; d < rank; d++)
            c->s[i].dims[d] = dims[d];
        c->numel += numel;
    }
    return true;
}

static void free_args(call_args *c)
{
    for (int i = 0; i < MAX_ARGS; i++)
        weft_tensor_release(c->t[i]);
}

static void check_outs(weft_tensor **outs, const call_args *c, size_t n_args, bool relaxed)
{
    CHECK(weft_tensor_dtype(outs[0]) == WEFT_I64 && weft_tensor_rank(outs[0]) == 2, "out 0 type");
    CHECK(weft_tensor_dims(outs[0])[0] == (int64_t)n_args && weft_tensor_dims(outs[0])[1] == ENC,
          "out 0 shape");
    const int64_t *enc = weft_tensor_data(outs[0]);
    for (size_t i = 0; i < n_args; i++) {
        const int64_t *e = enc + i * ENC;
        const weft_arg *a = &c->a[i];
        CHECK(e[0] == (int64_t)a->kind, "arg %zu: traced for kind %lld, called with %d", i,
              (long long)e[0], (int)a->kind);
        if (a->kind == WEFT_ARG_I64) {
            CHECK(e[11] == a->u.i64, "arg %zu: traced for static %lld, called with %lld", i,
                  (long long)e[11], (long long)a->u.i64);
        } else if (a->kind == WEFT_ARG_F64) {
            double dv;
            memcpy(&dv, &e[11], sizeof dv);
            CHECK((isnan(dv) && isnan(a->u.f64)) || memcmp(&dv, &a->u.f64, sizeof dv) == 0,
                  "arg %zu: traced for static %g, called with %g", i, dv, a->u.f64);
        } else {
            const weft_spec *s = &c->s[i];
            CHECK(e[1] == s->dtype, "arg %zu: traced for dtype %lld, called with %d", i,
                  (long long)e[1], (int)s->dtype);
            CHECK(e[2] == s->rank || (relaxed && e[2] == WEFT_RANK_ANY),
                  "arg %zu: traced for rank %lld, called with %d", i, (long long)e[2], s->rank);
            for (int d = 0; d < s->rank && e[2] != WEFT_RANK_ANY; d++)
                CHECK(e[3 + d] == s->dims[d] || (relaxed && e[3 + d] == WEFT_DIM_ANY),
                      "arg %zu dim %d: traced for %lld, called with %lld", i, d,
                      (long long)e[3 + d], (long long)s->dims[d]);
        }
    }
    CHECK(weft_tensor_dtype(outs[1]) == WEFT_I64 && weft_tensor_rank(outs[1]) == 0, "out 1 type");
    CHECK(*(const int64_t *)weft_tensor_data(outs[1]) == c->numel, "numel %lld, want %lld",
          (long long)*(const int64_t *)weft_tensor_data(outs[1]), (long long)c->numel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = { data, size };
    int b = next(&r);
    if (b < 0)
        return 0;
    size_t n_args = 1 + (size_t)(b % MAX_ARGS);
    bool relaxed = (b >> 2) & 1;
    size_t max_cached = 1 + (size_t)((b >> 3) % 4);
    weft_function_desc d = {
        .name = "fz", .body = body, .user = &n_args, .n_args = n_args, .n_outs = 2,
        .flags = relaxed ? WEFT_REDUCE_RETRACING : 0, .max_cached = max_cached,
    };
    weft_function *f = NULL;
    CHECK(weft_function_create(rt, &d, &f) == 0, "%s", weft_errmsg());
    uint64_t calls = 0;
    /* Concrete functions returned earlier stay valid through evictions. */
    weft_concrete *saved[4] = { NULL };
    weft_spec saved_specs[4][MAX_ARGS];
    int n_saved = 0;
    /* Pinned (handed out) concrete functions are never evicted, so they may
     * hold the cache above max_cached. */
    weft_concrete *pinned[64];
    size_t n_pinned = 0;
    for (int k = 0; k < 64; k++) {
        call_args c;
        if (!read_args(&r, n_args, &c)) {
            free_args(&c);
            break;
        }
        int how = next(&r);
        weft_tensor *outs[2] = { NULL, NULL };
        int rc;
        if (how >= 0 && (how & 1) && c.all_tensors) {
            weft_concrete *cf = NULL;
            rc = weft_function_get_concrete(f, c.s, n_args, &cf);
            CHECK(rc == 0, "get_concrete: %s", weft_errmsg());
            rc = weft_concrete_call(cf, c.t, n_args, outs, 2);
            bool known = false;
            for (size_t j = 0; j < n_pinned; j++)
                known |= pinned[j] == cf;
            if (!known)
                pinned[n_pinned++] = cf;
            saved[n_saved % 4] = cf;
            memcpy(saved_specs[n_saved % 4], c.s, sizeof c.s);
            n_saved++;
        } else if (how >= 0 && (how & 2) && n_saved > 0) {
            /* Replace this call by one of an older concrete function. */
            int j = (how >> 2) % (n_saved < 4 ? n_saved : 4);
            free_args(&c);
            memset(&c, 0, sizeof c);
            for (size_t i = 0; i < n_args; i++) {
                const weft_spec *s = &saved_specs[j][i];
                CHECK(weft_tensor_create(s->dtype, s->rank, s->dims, NULL, &c.t[i]) == 0, "%s",
                      weft_errmsg());
                c.a[i] = weft_arg_tensor(c.t[i]);
                c.s[i] = *s;
                c.numel += weft_tensor_numel(c.t[i]);
            }
            rc = weft_concrete_call(saved[j], c.t, n_args, outs, 2);
        } else {
            rc = weft_function_call(f, c.a, n_args, outs, 2);
            calls++;
        }
        CHECK(rc == 0, "call %d: %s (%s)", k, weft_err_name(rc), weft_errmsg());
        check_outs(outs, &c, n_args, relaxed);
        weft_tensor_release(outs[0]);
        weft_tensor_release(outs[1]);
        free_args(&c);
        weft_function_stats st;
        weft_function_get_stats(f, &st);
        CHECK(st.cached <= max_cached + n_pinned, "%llu cached, max %zu, %zu pinned",
              (unsigned long long)st.cached, max_cached, n_pinned);
        CHECK(st.calls >= calls && st.traces <= st.misses + 64, "stats calls %llu traces %llu",
              (unsigned long long)st.calls, (unsigned long long)st.traces);
        CHECK(st.hits + st.misses == st.calls, "hits %llu + misses %llu != calls %llu",
              (unsigned long long)st.hits, (unsigned long long)st.misses,
              (unsigned long long)st.calls);
    }
    weft_function_destroy(&f);
    return 0;
}
