/* The hand-written C loop of the fused-chain benchmark, compiled at -O3 like
 * libweft's kernels (bench/meson.build), so that it is vectorized; the
 * programs themselves are built at -O2. */
#include "contenders.h"

void cloop_fused4(float *restrict out, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = bench_fused4_elem(x[i]);
}
