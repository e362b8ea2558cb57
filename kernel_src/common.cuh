// Device helpers shared by kjit's kernels. NVRTC 13 bundles no cuda_bf16.h, and reaching the
// toolkit's copy ties a kernel to a -I path and costs compile time, so bf16 is spelled here
// as its bits with round-to-nearest-even conversion (the same rule the host reference uses).
#pragma once

/// A bfloat16 value as its 16 bits.
struct bf16 {
    unsigned short bits;
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(bf16 v) { return __uint_as_float(unsigned(v.bits) << 16); }

template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ bf16 from_float<bf16>(float v) {
    unsigned u = __float_as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet, keep the sign
        return bf16{static_cast<unsigned short>((u >> 16) | 0x40u)};
    u += 0x7fffu + ((u >> 16) & 1u);
    return bf16{static_cast<unsigned short>(u >> 16)};
}

/// The sum over each aligned group of kLanes lanes (a power of two), as a fixed butterfly (the
/// same association on every call): every lane of a group gets the same bits. lane_sum<k> is
/// the last log2(k) levels of warp_sum's butterfly.
template <int kLanes> __device__ __forceinline__ float lane_sum(float v) {
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

/// Sum over the 32 lanes of a warp.
__device__ __forceinline__ float warp_sum(float v) { return lane_sum<32>(v); }

/// Sum over a block of BLOCK threads (a multiple of 32); every thread gets the result.
/// `scratch` holds BLOCK / 32 floats. The association depends on BLOCK only.
template <int BLOCK> __device__ __forceinline__ float block_sum(float v, float* scratch) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, <= 1024");
    constexpr int kWarps = BLOCK / 32;
    v = warp_sum(v);
    if (kWarps == 1)
        return v;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); // scratch may still be read by a previous call
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    v = lane < kWarps ? scratch[lane] : 0.0f;
    return warp_sum(v);
}
