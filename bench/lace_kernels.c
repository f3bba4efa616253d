/* The serial kernels of the Lace workloads (bench/lace.h): cilksort's
 * sequential sort, merge and split search, its input, and the matmul base
 * case.  Written for these benchmarks from the algorithms' usual
 * definitions. */
#include "lace.h"

static cilksort_elm median3(cilksort_elm a, cilksort_elm b, cilksort_elm c)
{
    if (a < b)
        return b < c ? b : (a < c ? c : a);
    return a < c ? a : (b < c ? c : b);
}

static void insertion_sort(cilksort_elm *low, cilksort_elm *high)
{
    for (cilksort_elm *q = low + 1; q <= high; q++) {
        cilksort_elm v = *q;
        cilksort_elm *p = q - 1;
        while (p >= low && *p > v) {
            p[1] = *p;
            p--;
        }
        p[1] = v;
    }
}

/* Hoare partition of [low, high] around a median of three; returns the
 * last index of the lower part (low <= result < high). */
static cilksort_elm *partition(cilksort_elm *low, cilksort_elm *high)
{
    cilksort_elm pivot = median3(*low, low[(high - low) / 2], *high);
    cilksort_elm *i = low - 1, *j = high + 1;
    for (;;) {
        do
            i++;
        while (*i < pivot);
        do
            j--;
        while (*j > pivot);
        if (i >= j)
            return j;
        cilksort_elm t = *i;
        *i = *j;
        *j = t;
    }
}

void cilksort_seqquick(cilksort_elm *low, cilksort_elm *high)
{
    while (high - low >= CILKSORT_INSERTIONSIZE) {
        cilksort_elm *p = partition(low, high);
        /* Recurse into the smaller part, loop on the larger. */
        if (p - low < high - p) {
            cilksort_seqquick(low, p);
            low = p + 1;
        } else {
            cilksort_seqquick(p + 1, high);
            high = p;
        }
    }
    insertion_sort(low, high);
}

void cilksort_seqmerge(cilksort_elm *low1, cilksort_elm *high1, cilksort_elm *low2,
                       cilksort_elm *high2, cilksort_elm *lowdest)
{
    /* Inclusive ranges [low1, high1] and [low2, high2]. */
    while (low1 <= high1 && low2 <= high2)
        *lowdest++ = *low2 < *low1 ? *low2++ : *low1++;
    if (low1 <= high1)
        memcpy(lowdest, low1, sizeof *low1 * (size_t)(high1 - low1 + 1));
    if (low2 <= high2)
        memcpy(lowdest, low2, sizeof *low2 * (size_t)(high2 - low2 + 1));
}

cilksort_elm *cilksort_binsplit(cilksort_elm val, cilksort_elm *low, cilksort_elm *high)
{
    /* The last element of [low, high] that is <= val, or low - 1. */
    while (low <= high) {
        cilksort_elm *mid = low + (high - low) / 2;
        if (*mid <= val)
            low = mid + 1;
        else
            high = mid - 1;
    }
    return low - 1;
}

void cilksort_fill(cilksort_elm *a, long n)
{
    for (long i = 0; i < n; i++)
        a[i] = i;
    uint64_t x = 42;
    for (long i = n - 1; i > 0; i--) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        long j = (long)((x >> 33) % (uint64_t)(i + 1));
        cilksort_elm t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

void matmul_base(const float *a, const float *b, float *c, matmul_dims d, int ld)
{
    for (int i = 0; i < d.m; i++)
        for (int k = 0; k < d.p; k++) {
            float s = 0.0f;
            for (int j = 0; j < d.n; j++)
                s += a[i * ld + j] * b[j * ld + k];
            if (d.add)
                c[i * ld + k] += s;
            else
                c[i * ld + k] = s;
        }
}
