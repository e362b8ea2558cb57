// Split-K GEMV, y = W x for a row-major fp32 W of rows x cols, in two launches:
//   splitk_partial  grid (ceil(rows / (GEMV_BLOCK / 32)), SPLIT_K): a warp per row and split
//                   sums the split's cols / SPLIT_K columns with float4 loads, lanes strided,
//                   then a fixed butterfly: partial[split * rows + row].
//   splitk_reduce   grid ceil(rows / GEMV_BLOCK): a thread per row adds its SPLIT_K partials
//                   in split order.
// Bits depend on SPLIT_K (what each sum covers), not on GEMV_BLOCK (rows per block): a block
// sweep is bit-identical. The host guarantees cols % (SPLIT_K * 4) == 0 (16-byte rows).
#include "reduce.cuh"

#ifndef SPLIT_K
#define SPLIT_K 4
#endif
#ifndef GEMV_BLOCK
#define GEMV_BLOCK 256
#endif
#define GEMV_ROWS_PER_BLOCK (GEMV_BLOCK / 32)

static_assert(GEMV_BLOCK % 32 == 0 && GEMV_BLOCK <= 1024, "GEMV_BLOCK: whole warps, at most 1024");
static_assert(SPLIT_K >= 1, "SPLIT_K must be at least 1");

extern "C" __global__ void __launch_bounds__(GEMV_BLOCK)
splitk_partial(float* __restrict__ partial, const float* __restrict__ w,
               const float* __restrict__ x, int rows, int cols) {
    const int row = blockIdx.x * GEMV_ROWS_PER_BLOCK + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const int chunk4 = cols / SPLIT_K / 4;
    const size_t begin = static_cast<size_t>(blockIdx.y) * chunk4 * 4;
    const float4* wr = reinterpret_cast<const float4*>(w + static_cast<size_t>(row) * cols + begin);
    const float4* xr = reinterpret_cast<const float4*>(x + begin);
    float sum = 0.0f;
    for (int i = lane; i < chunk4; i += 32) {
        const float4 a = __ldg(wr + i);
        const float4 b = __ldg(xr + i);
        sum = fmaf(a.x, b.x, sum);
        sum = fmaf(a.y, b.y, sum);
        sum = fmaf(a.z, b.z, sum);
        sum = fmaf(a.w, b.w, sum);
    }
    sum = warp_sum(sum);
    if (lane == 0)
        partial[static_cast<size_t>(blockIdx.y) * rows + row] = sum;
}

extern "C" __global__ void __launch_bounds__(GEMV_BLOCK)
splitk_reduce(float* __restrict__ y, const float* __restrict__ partial, int rows) {
    const int row = blockIdx.x * GEMV_BLOCK + threadIdx.x;
    if (row >= rows)
        return;
    float sum = 0.0f;
#pragma unroll
    for (int s = 0; s < SPLIT_K; ++s)
        sum += partial[static_cast<size_t>(s) * rows + row];
    y[row] = sum;
}
