// RMS normalization over the last axis: y[r, i] = x[r, i] / sqrt(mean_i(x[r, :]^2) + eps) * w[i]
// for rows x n, fp32 or bf16 in and out, fp32 accumulation. One block per row (grid-stride
// over rows). Thread t accumulates columns t, t + RMS_BLOCK, ... in order, then the block
// reduces the partial sums with a fixed tree: the result depends on RMS_BLOCK and nothing else.
#include "common.cuh"

#ifndef RMS_BLOCK
#define RMS_BLOCK 256 // threads per block; the reduction width, part of the numerics
#endif

template <class T>
__device__ __forceinline__ void rms_norm_row(const T* __restrict__ x, const T* __restrict__ w,
                                             T* __restrict__ y, int rows, int n, float eps) {
    __shared__ float scratch[RMS_BLOCK / 32];
    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* xr = x + static_cast<long long>(row) * n;
        T* yr = y + static_cast<long long>(row) * n;
        float sum = 0.0f;
        for (int i = threadIdx.x; i < n; i += RMS_BLOCK) {
            const float v = to_float(xr[i]);
            sum = __fmaf_rn(v, v, sum);
        }
        sum = block_sum<RMS_BLOCK>(sum, scratch);
        // Exact division and square root: the scale is computed once per row.
        const float inv = 1.0f / sqrtf(sum / static_cast<float>(n) + eps);
        for (int i = threadIdx.x; i < n; i += RMS_BLOCK)
            yr[i] = from_float<T>(__fmul_rn(__fmul_rn(to_float(xr[i]), inv), to_float(w[i])));
    }
}

extern "C" __global__ void __launch_bounds__(RMS_BLOCK)
    rms_norm_f32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                 int rows, int n, float eps) {
    rms_norm_row(x, w, y, rows, n, eps);
}

extern "C" __global__ void __launch_bounds__(RMS_BLOCK)
    rms_norm_bf16(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                  int rows, int n, float eps) {
    rms_norm_row(x, w, y, rows, n, eps);
}
