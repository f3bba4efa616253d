/* Helpers shared by the criterion tests. */
#ifndef WEFT_TEST_UTIL_H
#define WEFT_TEST_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

/* A runtime with $WEFT_NUM_THREADS workers (the CI loops over 1, 2, 4), or
 * `fallback` when that variable is unset. */
static inline weft_runtime *test_runtime(unsigned fallback)
{
    weft_config cfg;
    weft_config_default(&cfg);
    if (!getenv("WEFT_NUM_THREADS"))
        cfg.workers = fallback;
    weft_runtime *rt = NULL;
    int rc = weft_runtime_create(&cfg, &rt);
    cr_assert_eq(rc, 0, "weft_runtime_create: %s", weft_errmsg());
    return rt;
}

/* A runtime of exactly `workers` workers, whatever $WEFT_NUM_THREADS says:
 * for tests whose subject is the worker count. */
static inline weft_runtime *test_runtime_of(unsigned workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    weft_runtime *rt = NULL;
    int rc = weft_runtime_create(&cfg, &rt);
    cr_assert_eq(rc, 0, "weft_runtime_create(%u workers): %s", workers, weft_errmsg());
    return rt;
}

/* The whole file at path, NUL-terminated (caller frees); the test fails
 * when it cannot be read. */
static inline char *test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    cr_assert_geq(len, 0);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* The elements of a shape: the product of dims[0..rank). */
static inline int64_t test_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    return n;
}

/* A tensor of dtype dt and shape dims holding v converted like a C cast
 * (bool: v[i] != 0); the test fails when it cannot be made. */
static inline weft_tensor *test_tensor(weft_dtype dt, int rank, const int64_t *dims,
                                       const double *v)
{
    int64_t n = test_numel(rank, dims);
    unsigned char *buf = calloc((size_t)(n ? n : 1), 8);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case WEFT_BOOL: buf[i] = v[i] != 0; break;
        case WEFT_I32: ((int32_t *)(void *)buf)[i] = (int32_t)v[i]; break;
        case WEFT_I64: ((int64_t *)(void *)buf)[i] = (int64_t)v[i]; break;
        case WEFT_F32: ((float *)(void *)buf)[i] = (float)v[i]; break;
        case WEFT_F64: ((double *)(void *)buf)[i] = v[i]; break;
        }
    }
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, buf, &t), 0, "%s", weft_errmsg());
    free(buf);
    return t;
}

/* t has dtype dt and shape dims[0..rank); `what` names the case. */
static inline void test_assert_shape(const weft_tensor *t, weft_dtype dt, int rank,
                                     const int64_t *dims, const char *what)
{
    cr_assert_eq(weft_tensor_dtype(t), dt, "%s: dtype %s", what,
                 weft_dtype_name(weft_tensor_dtype(t)));
    cr_assert_eq(weft_tensor_rank(t), rank, "%s: rank %d", what, weft_tensor_rank(t));
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "%s: dim %d is %lld", what, d,
                     (long long)weft_tensor_dims(t)[d]);
}

/* Element i of t as a double, whatever t's dtype (NaN for an unknown one). */
static inline double test_element(const weft_tensor *t, int64_t i)
{
    const void *p = weft_tensor_data(t);
    switch (weft_tensor_dtype(t)) {
    case WEFT_BOOL: return ((const uint8_t *)p)[i];
    case WEFT_I32:  return ((const int32_t *)p)[i];
    case WEFT_I64:  return (double)((const int64_t *)p)[i];
    case WEFT_F32:  return ((const float *)p)[i];
    case WEFT_F64:  return ((const double *)p)[i];
    }
    return NAN;
}

/* A function of body on r (name, user, counts, input signature or NULL,
 * weft_function_flags); the test fails when it cannot be made. */
static inline weft_function *test_function(weft_runtime *r, const char *name,
                                           weft_body_fn body, void *user, size_t n_args,
                                           size_t n_outs, const weft_spec *sig, unsigned flags)
{
    weft_function_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.body = body;
    d.user = user;
    d.n_args = n_args;
    d.n_outs = n_outs;
    d.input_signature = sig;
    d.flags = flags;
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(r, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

/* f's compiled op list as weft_function_print_ops writes it (caller
 * frees); the test fails when it cannot be written. */
static inline char *test_ops_text(weft_function *f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert_not_null(mem);
    cr_assert_eq(weft_function_print_ops(f, 0, mem), 0, "%s", weft_errmsg());
    fclose(mem);
    return text;
}

/* How many times `what` stands in text (overlapping places counted). */
static inline int test_count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

#endif
