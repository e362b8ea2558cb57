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
#define CONV_TILE 8 // time steps per thread: a multiple of 8 (16 bytes of bf16, 32 of fp32)
#endif
#ifndef CONV_BLOCK
#define CONV_BLOCK 256 // threads per block
#endif
#ifndef CONV_SILU
#define CONV_SILU 1 // 1: y = silu(conv), as Mamba's conv1d does; 0: no activation
#endif

static_assert(CONV_TILE % 8 == 0, "CONV_TILE must be a multiple of 8");

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
    // 16-byte vectors of the input: whole tiles only, every row aligned.
    constexpr int kVec = 16 / sizeof(T);
    const bool vec = steps % CONV_TILE == 0 && (reinterpret_cast<size_t>(x) & 15) == 0 &&
                     (reinterpret_cast<size_t>(y) & 15) == 0;
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
        if (vec) {
            T in[CONV_TILE], out[CONV_TILE];
#pragma unroll
            for (int v = 0; v < CONV_TILE / kVec; ++v)
                reinterpret_cast<uint4*>(in)[v] = reinterpret_cast<const uint4*>(xr + t0)[v];
#pragma unroll
            for (int i = 0; i < CONV_TILE; ++i) {
                const float xt = to_float(in[i]);
                out[i] = from_float<T>(conv_step<T>(b, p[0], p[1], p[2], xt, wc));
                p[0] = p[1];
                p[1] = p[2];
                p[2] = xt;
            }
#pragma unroll
            for (int v = 0; v < CONV_TILE / kVec; ++v)
                reinterpret_cast<uint4*>(yr + t0)[v] = reinterpret_cast<const uint4*>(out)[v];
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
