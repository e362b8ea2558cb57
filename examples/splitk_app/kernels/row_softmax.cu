// Row softmax, y[r, :] = softmax(x[r, :]), one block per row of up to MAX_COLS columns. Each
// thread keeps its MAX_COLS / SOFTMAX_BLOCK columns in registers: x is read once and y written
// once. MAX_COLS is a production cap: the host refuses a row longer than it was compiled for.
#include "reduce.cuh"

#ifndef SOFTMAX_BLOCK
#define SOFTMAX_BLOCK 512
#endif
#ifndef MAX_COLS
#define MAX_COLS 4096
#endif
#define SOFTMAX_PER_THREAD ((MAX_COLS + SOFTMAX_BLOCK - 1) / SOFTMAX_BLOCK)
#define SOFTMAX_WARPS (SOFTMAX_BLOCK / 32)

static_assert(SOFTMAX_BLOCK % 32 == 0 && SOFTMAX_BLOCK <= 1024,
              "SOFTMAX_BLOCK: whole warps, at most 1024");

// The block's maximum (kMax) or sum of v, in every thread. `part` holds one value per warp.
template <bool kMax> __device__ float block_reduce(float v, float* part) {
    v = kMax ? warp_max(v) : warp_sum(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    v = lane < SOFTMAX_WARPS ? part[lane] : (kMax ? negative_infinity() : 0.0f);
    v = kMax ? warp_max(v) : warp_sum(v);
    __syncthreads(); // `part` is written again by the next reduction
    return v;
}

extern "C" __global__ void __launch_bounds__(SOFTMAX_BLOCK)
row_softmax(float* __restrict__ y, const float* __restrict__ x, int cols) {
    __shared__ float part[SOFTMAX_WARPS];
    const float* xr = x + static_cast<size_t>(blockIdx.x) * cols;
    float* yr = y + static_cast<size_t>(blockIdx.x) * cols;
    float v[SOFTMAX_PER_THREAD];
    float m = negative_infinity();
#pragma unroll
    for (int i = 0; i < SOFTMAX_PER_THREAD; ++i) {
        const int c = threadIdx.x + i * SOFTMAX_BLOCK;
        v[i] = c < cols ? xr[c] : negative_infinity();
        m = fmaxf(m, v[i]);
    }
    m = block_reduce<true>(m, part);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < SOFTMAX_PER_THREAD; ++i) {
        const int c = threadIdx.x + i * SOFTMAX_BLOCK;
        v[i] = c < cols ? __expf(v[i] - m) : 0.0f;
        s += v[i];
    }
    const float inv = 1.0f / block_reduce<false>(s, part);
#pragma unroll
    for (int i = 0; i < SOFTMAX_PER_THREAD; ++i) {
        const int c = threadIdx.x + i * SOFTMAX_BLOCK;
        if (c < cols)
            yr[c] = v[i] * inv;
    }
}
