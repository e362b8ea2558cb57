// Causal depthwise conv1d of width 4 (Mamba), fp32 or bf16 in and out, fp32 accumulation.
// x, y: [B, C, T] with time contiguous; w: [C, 4]; bias: [C]; state_in, state_out: [B, C, 3].
//   xx[t] = x[b, c, t] for t >= 0, state_in[b, c, 3 + t] for t in -3..-1
//   y[b, c, t] = act(bias[c] + w[c,0] xx[t-3] + w[c,1] xx[t-2] + w[c,2] xx[t-1] + w[c,3] xx[t])
//   state_out[b, c, k] = xx[T - 3 + k]
// Time is cut into tiles of CONV_TILE steps, one thread each, so that short sequences still
// give every SM work: the carry-in state seeds tile 0, the window slides in registers, and
// the last tile writes the carry-out. The sum is one fixed chain of fused multiply-adds, the
// same for every tile size and load path.
#include "common.cuh"

#ifndef CONV_TILE
#define CONV_TILE 8 // time steps per thread: a multiple of 4 (8 bytes of bf16)
#endif
#ifndef CONV_BLOCK
#define CONV_BLOCK 256 // threads per block
#endif
#ifndef CONV_SILU
#define CONV_SILU 1 // 1: y = silu(conv), as Mamba's conv1d does; 0: no activation
#endif

static_assert(CONV_TILE % 4 == 0, "CONV_TILE must be a multiple of 4");

/// Element i of 8 bytes of T (2 fp32 or 4 bf16), as float.
template <class T> __device__ __forceinline__ float lane_get(const uint2& v, int i);
template <> __device__ __forceinline__ float lane_get<float>(const uint2& v, int i) {
    return __uint_as_float(i == 0 ? v.x : v.y);
}
template <> __device__ __forceinline__ float lane_get<bf16>(const uint2& v, int i) {
    const unsigned w = i < 2 ? v.x : v.y;
    return __uint_as_float((i & 1) ? (w & 0xffff0000u) : (w << 16));
}

/// Stores `value`, rounded to T, as element i of 8 bytes of T.
template <class T> __device__ __forceinline__ void lane_set(uint2& v, int i, float value);
template <> __device__ __forceinline__ void lane_set<float>(uint2& v, int i, float value) {
    (i == 0 ? v.x : v.y) = __float_as_uint(value);
}
template <> __device__ __forceinline__ void lane_set<bf16>(uint2& v, int i, float value) {
    const unsigned h = from_float<bf16>(value).bits;
    unsigned& w = i < 2 ? v.x : v.y;
    w = (i & 1) ? ((w & 0x0000ffffu) | (h << 16)) : ((w & 0xffff0000u) | h);
}

template <class T>
__device__ __forceinline__ float conv_step(float acc, float p0, float p1, float p2, float xt,
                                           const float* wc) {
    acc = __fmaf_rn(wc[0], p0, acc);
    acc = __fmaf_rn(wc[1], p1, acc);
    acc = __fmaf_rn(wc[2], p2, acc);
    acc = __fmaf_rn(wc[3], xt, acc);
#if CONV_SILU
    acc = acc / (1.0f + expf(-acc));
#endif
    return acc;
}

template <class T>
__device__ __forceinline__ void conv1d_tiles(const T* __restrict__ x, const T* __restrict__ w,
                                             const T* __restrict__ bias,
                                             const T* __restrict__ state_in, T* __restrict__ y,
                                             T* __restrict__ state_out, int batch, int channels,
                                             int steps) {
    const int tiles = (steps + CONV_TILE - 1) / CONV_TILE;
    const long long total = static_cast<long long>(batch) * channels * tiles;
    // 8-byte vectors (2 fp32 or 4 bf16): a row of 1300 steps starts 8-byte aligned in both
    // types, where 16 bytes would need a multiple of 4 (fp32) or 8 (bf16) steps.
    constexpr int kVec = 8 / sizeof(T);
    for (long long id = blockIdx.x * static_cast<long long>(CONV_BLOCK) + threadIdx.x; id < total;
         id += static_cast<long long>(gridDim.x) * CONV_BLOCK) {
        const int tile = static_cast<int>(id % tiles);
        const long long row = id / tiles; // b * channels + c
        const int c = static_cast<int>(row % channels);
        const T* xr = x + row * steps;
        T* yr = y + row * steps;
        float wc[4];
#pragma unroll
        for (int k = 0; k < 4; ++k)
            wc[k] = to_float(w[c * 4 + k]);
        const float b = bias ? to_float(bias[c]) : 0.0f;
        const int t0 = tile * CONV_TILE;
        float p[3]; // xx[t0-3], xx[t0-2], xx[t0-1]
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int t = t0 - 3 + k;
            p[k] = t >= 0 ? to_float(xr[t]) : (state_in ? to_float(state_in[row * 3 + 3 + t]) : 0.0f);
        }
        const bool vec = t0 + CONV_TILE <= steps && (reinterpret_cast<size_t>(xr) & 7) == 0 &&
                         (reinterpret_cast<size_t>(yr) & 7) == 0;
        if (vec) {
            // Whole 8-byte vectors in and out, held in registers (indices are compile-time
            // constants once unrolled; an array whose address is taken would go to local memory).
            uint2 in[CONV_TILE / kVec], out[CONV_TILE / kVec] = {};
#pragma unroll
            for (int v = 0; v < CONV_TILE / kVec; ++v)
                in[v] = reinterpret_cast<const uint2*>(xr + t0)[v];
#pragma unroll
            for (int i = 0; i < CONV_TILE; ++i) {
                const float xt = lane_get<T>(in[i / kVec], i % kVec);
                lane_set<T>(out[i / kVec], i % kVec, conv_step<T>(b, p[0], p[1], p[2], xt, wc));
                p[0] = p[1];
                p[1] = p[2];
                p[2] = xt;
            }
#pragma unroll
            for (int v = 0; v < CONV_TILE / kVec; ++v)
                reinterpret_cast<uint2*>(yr + t0)[v] = out[v];
        } else {
            for (int t = t0; t < min(steps, t0 + CONV_TILE); ++t) {
                const float xt = to_float(xr[t]);
                yr[t] = from_float<T>(conv_step<T>(b, p[0], p[1], p[2], xt, wc));
                p[0] = p[1];
                p[1] = p[2];
                p[2] = xt;
            }
        }
        if (state_out && tile == tiles - 1) {
            // p holds xx[T-3..T-1] only when the tile ended at T; read them again instead.
#pragma unroll
            for (int k = 0; k < 3; ++k) {
                const int t = steps - 3 + k;
                state_out[row * 3 + k] =
                    t >= 0 ? xr[t] : (state_in ? state_in[row * 3 + 3 + t] : from_float<T>(0.0f));
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_f32(const float* x, const float* w, const float* bias, const float* state_in, float* y,
               float* state_out, int batch, int channels, int steps) {
    conv1d_tiles(x, w, bias, state_in, y, state_out, batch, channels, steps);
}

extern "C" __global__ void __launch_bounds__(CONV_BLOCK)
    conv1d_bf16(const bf16* x, const bf16* w, const bf16* bias, const bf16* state_in, bf16* y,
                bf16* state_out, int batch, int channels, int steps) {
    conv1d_tiles(x, w, bias, state_in, y, state_out, batch, channels, steps);
}
