// Warp and block reductions shared by the app's kernels. Every reduction runs a fixed
// butterfly over the 32 lanes, so its result depends on the warp's values and not on how many
// warps a block holds.
#pragma once

// One butterfly step per line: v = op(v, v of the lane `o_` away), o_ = 16, 8, 4, 2, 1.
#define SPLITK_WARP_REDUCE(v, op)                                                            \
    for (int o_ = 16; o_ > 0; o_ >>= 1)                                                    \
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o_))

__device__ __forceinline__ float add_f32(float a, float b) { return a + b; }

__device__ __forceinline__ float warp_sum(float v) {
    SPLITK_WARP_REDUCE(v, add_f32);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    SPLITK_WARP_REDUCE(v, fmaxf);
    return v;
}

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }
