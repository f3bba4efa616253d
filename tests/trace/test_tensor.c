/* Tensors: creation, validation before allocation, reference counting. */
#include <pthread.h>
#include <string.h>

#include "base/sanitizer.h"
#include "runtime/iface.h"
#include "test_util.h"
#include "trace/tensor_impl.h"

#ifdef WEFT__ASAN
#include <sanitizer/asan_interface.h>
#endif

Test(tensor, create_copies_data_and_reports_shape, .timeout = 60)
{
    float src[6] = { 1, 2, 3, 4, 5, 6 };
    int64_t dims[2] = { 2, 3 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, dims, src, &t), 0, "%s", weft_errmsg());
    src[0] = 99;  /* the tensor holds a copy */
    cr_assert_eq(weft_tensor_dtype(t), WEFT_F32);
    cr_assert_eq(weft_tensor_rank(t), 2);
    cr_assert_eq(weft_tensor_dims(t)[0], 2);
    cr_assert_eq(weft_tensor_dims(t)[1], 3);
    cr_assert_eq(weft_tensor_numel(t), 6);
    const float *d = weft_tensor_data(t);
    cr_assert_eq((uintptr_t)d % 64, 0, "data must be 64-byte aligned");
    cr_assert_eq(d[0], 1.0f);
    cr_assert_eq(d[5], 6.0f);
    weft_tensor_release(t);
}

Test(tensor, null_data_gives_zeros_and_scalars_need_no_dims, .timeout = 60)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, NULL, &t), 0, "%s", weft_errmsg());
    cr_assert_eq(weft_tensor_rank(t), 0);
    cr_assert_eq(weft_tensor_numel(t), 1);
    cr_assert_eq(*(const int64_t *)weft_tensor_data(t), 0);
    weft_tensor_release(t);

    int64_t dims[1] = { 1000 };
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, dims, NULL, &t), 0);
    const double *d = weft_tensor_data(t);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(d[i], 0.0);
    weft_tensor_release(t);
}

Test(tensor, empty_tensor_has_data_pointer, .timeout = 60)
{
    int64_t dims[2] = { 3, 0 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 2, dims, NULL, &t), 0);
    cr_assert_eq(weft_tensor_numel(t), 0);
    cr_assert_not_null(weft_tensor_data(t));
    weft_tensor_release(t);
}

Test(tensor, bool_data_is_normalised, .timeout = 60)
{
    unsigned char src[4] = { 0, 1, 7, 255 };
    int64_t dims[1] = { 4 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_BOOL, 1, dims, src, &t), 0);
    const unsigned char *d = weft_tensor_data(t);
    cr_assert_eq(d[0], 0);
    cr_assert_eq(d[1], 1);
    cr_assert_eq(d[2], 1);
    cr_assert_eq(d[3], 1);
    weft_tensor_release(t);
}

static void expect_einval(weft_dtype dt, int rank, const int64_t *dims)
{
    weft_tensor *t = (weft_tensor *)(uintptr_t)1;
    int rc = weft_tensor_create(dt, rank, dims, NULL, &t);
    cr_assert_eq(rc, WEFT_EINVAL, "dtype %d rank %d: got %d", (int)dt, rank, rc);
    cr_assert_null(t, "*out must be cleared on failure");
    cr_assert_not_null(strstr(weft_errmsg(), "weft_tensor_create"), "message: %s", weft_errmsg());
}

Test(tensor, invalid_inputs_are_einval, .timeout = 60)
{
    int64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    int64_t neg[2] = { 2, -1 };
    expect_einval(WEFT_F32, 9, nine);
    expect_einval(WEFT_F32, -1, nine);
    expect_einval(WEFT_F32, 2, neg);
    expect_einval((weft_dtype)7, 1, nine);
    expect_einval((weft_dtype)-1, 1, nine);
    expect_einval(WEFT_F32, 2, NULL);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 0, NULL, NULL, NULL), WEFT_EINVAL);
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, WEFT_MAX_RANK, nine, NULL, &t), 0);
    cr_assert_eq(weft_tensor_rank(t), WEFT_MAX_RANK);
    weft_tensor_release(t);
}

Test(tensor, numel_overflow_is_caught_before_allocating, .timeout = 60)
{
    int64_t elems[2] = { INT64_MAX, 2 };                  /* past INT64_MAX elements */
    int64_t bytes[2] = { (int64_t)1 << 61, 1 };           /* 2^64 bytes of f64 */
    int64_t big[2] = { (int64_t)1 << 40, (int64_t)1 << 30 };
    /* The first allocation would fail; none may be attempted. */
    weft__fault_fail_after(1);
    expect_einval(WEFT_I32, 2, elems);
    expect_einval(WEFT_F64, 2, bytes);
    bool hit = weft__fault_hit();
    weft__fault_fail_after(0);
    cr_assert_not(hit, "an allocation happened before the overflow check");
    int64_t n = -1;
    cr_assert_not(weft__numel_checked(2, bytes, 8, &n));
    cr_assert(weft__numel_checked(2, bytes, 1, &n));
    cr_assert_eq(n, (int64_t)1 << 61);
    cr_assert_not(weft__numel_checked(2, big, 1, &n));
    cr_assert(weft__numel_checked(0, NULL, 8, &n));
    cr_assert_eq(n, 1);
}

Test(tensor, out_of_memory_fails_cleanly, .timeout = 60)
{
    int64_t dims[1] = { 16 };
    for (long k = 1; k <= 2; k++) {
        weft_tensor *t = NULL;
        if (!weft__fault_fail_after(k))
            cr_skip_test("built without fault injection");
        int rc = weft_tensor_create(WEFT_F32, 1, dims, NULL, &t);
        bool hit = weft__fault_hit();
        weft__fault_fail_after(0);
        cr_assert(hit);
        cr_assert_eq(rc, WEFT_ENOMEM);
        cr_assert_null(t);
    }
}

Test(tensor, null_accessors, .timeout = 60)
{
    cr_assert_eq(weft_tensor_dtype(NULL), WEFT_BOOL);
    cr_assert_eq(weft_tensor_rank(NULL), -1);
    cr_assert_null(weft_tensor_dims(NULL));
    cr_assert_eq(weft_tensor_numel(NULL), -1);
    cr_assert_null(weft_tensor_data(NULL));
    cr_assert_null(weft_tensor_retain(NULL));
    weft_tensor_release(NULL);
}

Test(tensor, new_spec_needs_known_dims, .timeout = 60)
{
    weft_spec s;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_spec_parse("f32[?,3]", &s), 0);
    cr_assert_eq(weft__tensor_new_spec(&s, &t), WEFT_EINVAL);
    cr_assert_eq(weft_spec_parse("f32[*]", &s), 0);
    cr_assert_eq(weft__tensor_new_spec(&s, &t), WEFT_EINVAL);
    cr_assert_eq(weft_spec_parse("i64[2,3]", &s), 0);
    cr_assert_eq(weft__tensor_new_spec(&s, &t), 0);
    weft_spec back;
    weft__tensor_spec(t, &back);
    cr_assert(weft__spec_matches(&s, &back) && weft__spec_matches(&back, &s));
    cr_assert_eq(weft_tensor_numel(t), 6);
    ((int64_t *)weft__tensor_mut(t))[5] = 42;
    cr_assert_eq(((const int64_t *)weft_tensor_data(t))[5], 42);
    weft_tensor_release(t);
}

struct rc_job {
    weft_tensor *t;
    int rounds;
};

static void *retain_release(void *p)
{
    struct rc_job *j = p;
    for (int i = 0; i < j->rounds; i++) {
        weft_tensor *r = weft_tensor_retain(j->t);
        /* Reads of a shared tensor are fine from any thread. */
        if (*(const int32_t *)weft_tensor_data(r) != 7)
            abort();
        weft_tensor_release(r);
    }
    weft_tensor_release(j->t);  /* each thread drops one reference it was given */
    return NULL;
}

Test(tensor, refcount_is_atomic, .timeout = 60)
{
    int32_t seven = 7;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 0, NULL, &seven, &t), 0);
    enum { N = 4 };
    pthread_t th[N];
    struct rc_job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (struct rc_job){ weft_tensor_retain(t), 20000 };
        cr_assert_eq(pthread_create(&th[i], NULL, retain_release, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(__atomic_load_n(&t->refs, __ATOMIC_RELAXED), 1);
    weft_tensor_release(t);  /* the last reference: ASan reports a leak otherwise */
}

/* Large buffers are reused (no fresh mmap and page faults per call); a
 * small request never takes a much larger buffer. */
Test(tensor, large_buffers_are_reused, .timeout = 60)
{
    int64_t big = 1 << 20;  /* 4 MiB of f32 */
    weft_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &big, NULL, &a), 0);
    const void *pa = weft_tensor_data(a);
    weft_tensor_release(a);
    /* Were the buffer given back to the system, this block would most
     * likely land where it was, and b elsewhere. */
    void *hog = malloc((size_t)big * 4);
    cr_assert_not_null(hog);
    memset(hog, 1, (size_t)big * 4);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &big, NULL, &b), 0);
    free(hog);
    cr_expect_eq(weft_tensor_data(b), pa, "a freed 4 MiB buffer is handed to the next 4 MiB tensor");
    /* Zeros are still zeros in a reused buffer. */
    const float *fb = weft_tensor_data(b);
    cr_expect(fb[0] == 0.0f && fb[big - 1] == 0.0f);
    weft_tensor_release(b);

    int64_t quarter = big / 4;  /* 1 MiB: less than half of the cached buffer */
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &quarter, NULL, &c), 0);
    cr_expect_neq(weft_tensor_data(c), pa, "a 1 MiB tensor must not pin a 4 MiB buffer");
    weft_tensor_release(c);

    int64_t small = 1000;  /* 8000 bytes, rounded to the class of 8 KiB */
    weft_tensor *s1 = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &small, NULL, &s1), 0);
    cr_expect_eq(s1->cap, 8192, "a small buffer is rounded to its class");
    cr_expect_neq(weft_tensor_data(s1), pa);
    weft_tensor_release(s1);

    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &big, NULL, &d), 0);
    cr_expect_eq(weft_tensor_data(d), pa);
    cr_expect_geq(d->cap, d->nbytes);
    weft_tensor_release(d);
}

/* A full cache makes room for the newest buffer: many freed buffers of one
 * size never lock a buffer of another size out. */
Test(tensor, full_buffer_cache_keeps_the_newest, .timeout = 60)
{
    int64_t mib = 1 << 18;  /* 1 MiB of f32 */
    weft_tensor *many[12];
    for (int i = 0; i < 12; i++)
        cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &mib, NULL, &many[i]), 0);
    for (int i = 0; i < 12; i++)
        weft_tensor_release(many[i]);
    int64_t big = 3 << 20;  /* 12 MiB */
    weft_tensor *a = NULL, *b = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &big, NULL, &a), 0);
    const void *pa = weft_tensor_data(a);
    weft_tensor_release(a);
    void *hog = malloc((size_t)big * 4);
    cr_assert_not_null(hog);
    memset(hog, 1, (size_t)big * 4);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &big, NULL, &b), 0);
    free(hog);
    cr_expect_eq(weft_tensor_data(b), pa, "the 12 MiB buffer was not kept in a full cache");
    weft_tensor_release(b);
}

/* Mid-sized buffers (an eager op's f32[100000]) are kept too: handed back
 * to the C library, they would come back from the kernel with a page fault
 * per 4 KiB. */
Test(tensor, mid_sized_buffers_are_reused, .timeout = 60)
{
    int64_t n = 100000;  /* 400 kB of f32 */
    weft_tensor *a = NULL, *b = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, NULL, &a), 0);
    const void *pa = weft_tensor_data(a);
    weft_tensor_release(a);
    void *hog = malloc((size_t)n * 4);
    cr_assert_not_null(hog);
    memset(hog, 1, (size_t)n * 4);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, NULL, &b), 0);
    free(hog);
    cr_expect_eq(weft_tensor_data(b), pa, "a freed 400 kB buffer is handed to the next one");
    weft_tensor_release(b);
    weft__tensor_buf_cache_drain();
    cr_expect_eq(weft__tensor_buf_cache_bytes(), 0);
}

/* Small buffers are kept too: eager ops on small tensors allocate one
 * per op, and glibc's aligned allocation of them costs more than the op. */
Test(tensor, small_buffers_are_reused, .timeout = 60)
{
    int64_t n = 320;  /* 1280 bytes of f32 */
    weft_tensor *a = NULL, *b = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, NULL, &a), 0);
    const void *pa = weft_tensor_data(a);
    weft_tensor_release(a);
    void *hog[4];
    for (int i = 0; i < 4; i++) {
        hog[i] = malloc((size_t)n * 4);
        cr_assert_not_null(hog[i]);
    }
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, NULL, &b), 0);
    for (int i = 0; i < 4; i++)
        free(hog[i]);
    cr_expect_eq(weft_tensor_data(b), pa, "a freed 1280-byte buffer is handed to the next one");
    weft_tensor_release(b);
    weft__tensor_buf_cache_drain();
    cr_expect_eq(weft__tensor_buf_cache_bytes(), 0);
}

static void *release_small_tensor(void *unused)
{
    (void)unused;
    int64_t n = 4;
    weft_tensor *t = NULL;
    if (weft_tensor_create(WEFT_F32, 1, &n, NULL, &t) == 0)
        weft_tensor_release(t);
    return t;
}

/* A thread keeps its own freed small buffers and hands them to the shared
 * classes when it exits, so none is lost with it. */
Test(tensor, small_buffers_outlive_their_thread, .timeout = 60)
{
    weft__tensor_buf_cache_drain();
    pthread_t th;
    void *made = NULL;
    cr_assert_eq(pthread_create(&th, NULL, release_small_tensor, NULL), 0);
    cr_assert_eq(pthread_join(th, &made), 0);
    cr_assert_not_null(made, "the thread made its tensor");
    cr_expect_eq(weft__tensor_buf_cache_bytes(), 64, "the exited thread's 16 bytes, as 64");
    weft__tensor_buf_cache_drain();
    cr_expect_eq(weft__tensor_buf_cache_bytes(), 0);
}

/* Cached sizes are rounded up to one of four classes per doubling: at most
 * 25% more (64 bytes at least), and any request of a class takes a buffer
 * freed in it. */
Test(tensor, buffer_classes_round_up_by_a_quarter_at_most, .timeout = 60)
{
    for (size_t n = 0; n < ((size_t)200 << 20); n += n / 7 + 1) {
        size_t cap = 0;
        void *p = weft__tensor_buf_alloc(n, &cap);
        cr_assert_not_null(p);
        cr_assert_geq(cap, n);
        if (n > ((size_t)128 << 20))
            cr_expect_eq(cap, n, "%zu bytes: only up to 128 MiB are rounded", n);
        else if (n <= 64)
            cr_expect_eq(cap, 64, "%zu bytes take the least class", n);
        else
            cr_expect_leq(cap * 4, n * 5, "%zu bytes rounded to %zu", n, cap);
        weft__tensor_buf_free(p, cap);
    }
    weft__tensor_buf_cache_drain();
    size_t cap1 = 0, cap2 = 0;
    void *p1 = weft__tensor_buf_alloc(17000, &cap1);   /* class 20 KiB */
    weft__tensor_buf_free(p1, cap1);
    void *p2 = weft__tensor_buf_alloc(20480, &cap2);
    cr_expect_eq(cap1, 20480);
    cr_expect_eq(p2, p1, "20480 bytes take the buffer 17000 bytes freed (one class)");
    weft__tensor_buf_free(p2, cap2);
    weft__tensor_buf_cache_drain();
}

/* The cache holds 128 MiB at most and 16 buffers a class; the oldest
 * buffers go first.  The buffers here are never touched, so they cost
 * address space only. */
Test(tensor, buffer_cache_is_bounded, .timeout = 60)
{
    enum { N = 20 };
    size_t mib16 = (size_t)16 << 20, cap[N];
    void *p[N];
    for (int i = 0; i < N; i++)
        p[i] = weft__tensor_buf_alloc(mib16, &cap[i]);
    for (int i = 0; i < N; i++) {
        cr_assert_not_null(p[i]);
        weft__tensor_buf_free(p[i], cap[i]);
    }
    cr_expect_eq(weft__tensor_buf_cache_bytes(), (size_t)128 << 20, "eight 16 MiB buffers kept");
    /* The newest come back first; the first twelve freed were let go. */
    size_t c = 0;
    void *q = weft__tensor_buf_alloc(mib16, &c);
    cr_expect_eq(q, p[N - 1]);
    weft__tensor_buf_free(q, c);
    weft__tensor_buf_cache_drain();

    size_t small = (size_t)16 << 10;
    void *s[40];
    for (int i = 0; i < 40; i++)
        s[i] = weft__tensor_buf_alloc(small, &cap[0]);
    for (int i = 0; i < 40; i++)
        weft__tensor_buf_free(s[i], small);
    cr_expect_eq(weft__tensor_buf_cache_bytes(), 16 * small, "16 buffers of a class kept");
    weft__tensor_buf_cache_drain();
    cr_expect_eq(weft__tensor_buf_cache_bytes(), 0);
}

/* A cached buffer is poisoned under AddressSanitizer: a tensor's data read
 * after its release is still reported, cache or not. */
Test(tensor, cached_buffers_are_poisoned_under_asan, .timeout = 60)
{
#ifdef WEFT__ASAN
    int64_t n = 100000;
    weft_tensor *a = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, NULL, &a), 0);
    const char *pa = weft_tensor_data(a);
    cr_expect_not(__asan_address_is_poisoned(pa + 4 * n - 1));
    weft_tensor_release(a);
    cr_expect(__asan_address_is_poisoned(pa));
    cr_expect(__asan_address_is_poisoned(pa + 4 * n - 1));
    weft_tensor *b = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, NULL, &b), 0);
    cr_assert_eq((const char *)weft_tensor_data(b), pa);
    cr_expect_not(__asan_address_is_poisoned(pa + 4 * n - 1), "reused, it is usable again");
    weft_tensor_release(b);
#else
    cr_skip_test("checked in the AddressSanitizer build");
#endif
}
